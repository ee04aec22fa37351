//! The operand fills of `kernels/init.cu`: bounded random data written on the GPU, once per
//! buffer and run, before anything is timed. They are never timed and report no work.
//!
//! [`Filler`] is what `roofline machine` and `roofline suite` share: one per-run seed
//! ([`run_seed`]), advanced per buffer, and a fill launched and waited for per buffer.

use std::cell::Cell;
use std::mem::size_of;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig};
use roofline_kernels::{Fill as FillKind, Kernel, LaunchWork, NORMAL_SCALE};

use super::{Args, Launcher, check_len};
use crate::compiled::Compiled;
use crate::session::{DeviceError, Session};

/// One fill of `values` values into a buffer (of any element type: the fill writes values of
/// its kind's width), from `seed`.
pub struct Fill<'b, T = u8> {
    kind: FillKind,
    f: CudaFunction,
    cfg: LaunchConfig,
    buf: &'b CudaSlice<T>,
    values: u64,
    seed: u64,
    scale: f32,
}

/// The checks of [`Fill::new`], on the buffer's length in bytes.
fn fill_checks(kind: FillKind, values: u64, buf: usize) -> Result<(), DeviceError> {
    check_len(
        kind.kernel(),
        "the buffer",
        buf,
        values * kind.value_bytes(),
    )
}

impl<'b, T> Fill<'b, T> {
    /// A fill of the first `values` values of `buf` (of the kind's width) from `seed`, grid-stride
    /// over `cfg`'s grid; bounded normal values scaled by [`NORMAL_SCALE`].
    ///
    /// # Errors
    /// [`DeviceError::Arguments`] for a buffer too small; the entry point missing.
    pub fn new(
        compiled: &Compiled,
        kind: FillKind,
        cfg: LaunchConfig,
        buf: &'b CudaSlice<T>,
        values: u64,
        seed: u64,
    ) -> Result<Self, DeviceError> {
        fill_checks(kind, values, buf.len() * size_of::<T>())?;
        Ok(Fill {
            kind,
            f: compiled.function(kind.kernel().entry())?,
            cfg,
            buf,
            values,
            seed,
            scale: NORMAL_SCALE,
        })
    }

    /// The same fill with bounded normal values scaled by `scale` instead of [`NORMAL_SCALE`]
    /// (the `fill_words` kind takes no scale and ignores it).
    #[must_use]
    pub fn scaled(self, scale: f32) -> Self {
        Fill { scale, ..self }
    }
}

impl<T> Launcher for Fill<'_, T> {
    fn kernel(&self) -> Kernel {
        self.kind.kernel()
    }

    fn function(&self) -> &CudaFunction {
        &self.f
    }

    fn config(&self) -> LaunchConfig {
        self.cfg
    }

    /// None: a fill is not a measurement.
    fn work(&self) -> LaunchWork {
        LaunchWork::default()
    }

    fn push<'a>(&'a self, _: &'a Session, a: &mut Args<'a, '_>) {
        a.arg(self.buf).arg(&self.values).arg(&self.seed);
        match &self.kind {
            // fill_words(p, n, seed, keep, set)
            FillKind::Words { keep, set } => a.arg(keep).arg(set),
            // fill_*(p, n, seed, scale)
            _ => a.arg(&self.scale),
        };
    }
}

/// A fresh per-run seed: the clock's nanoseconds (recorded in the bundle's notes, so that a
/// run's operands can be made again).
pub fn run_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0x5EED, |d| d.as_nanos() as u64)
}

/// How far the seed moves between two buffers (2⁶⁴/φ, odd: every buffer of a run gets its own).
pub const SEED_STEP: u64 = 0x9E37_79B9_7F4A_7C15;

/// Fills operand buffers on the GPU with `init.cu`, each from the next value of one per-run
/// seed, and waits for each fill: what `roofline machine` (its `Rig`) and `roofline suite`
/// share. It borrows the session, the compiled `init.cu` and the seed from its owner.
pub struct Filler<'r> {
    session: &'r Session,
    init: &'r Compiled,
    seed: &'r Cell<u64>,
}

impl<'r> Filler<'r> {
    /// A filler launching `init` (`kernels/init.cu`, compiled) on `session`, whose seed moves
    /// by [`SEED_STEP`] per buffer.
    pub fn new(session: &'r Session, init: &'r Compiled, seed: &'r Cell<u64>) -> Self {
        Filler {
            session,
            init,
            seed,
        }
    }

    /// The next buffer's seed.
    fn next_seed(&self) -> u64 {
        let s = self.seed.get();
        self.seed.set(s.wrapping_add(SEED_STEP));
        s
    }

    /// Fills the first `values` values of `buf` by `kind`, bounded normal values scaled by
    /// `scale`, and waits for it.
    ///
    /// # Errors
    /// [`DeviceError::Arguments`] for a buffer too small; the driver's error.
    pub fn fill_scaled<T>(
        &self,
        buf: &CudaSlice<T>,
        kind: FillKind,
        values: u64,
        scale: f32,
    ) -> Result<(), DeviceError> {
        let cfg = self.session.grid(8, 256, 0);
        let l = Fill::new(self.init, kind, cfg, buf, values, self.next_seed())?.scaled(scale);
        l.launch(self.session)?;
        self.session.synchronize("filling operands")
    }

    /// Fills the first `values` values of `buf` by `kind` ([`NORMAL_SCALE`]) and waits for it.
    ///
    /// # Errors
    /// As [`Filler::fill_scaled`].
    pub fn fill<T>(
        &self,
        buf: &CudaSlice<T>,
        kind: FillKind,
        values: u64,
    ) -> Result<(), DeviceError> {
        self.fill_scaled(buf, kind, values, NORMAL_SCALE)
    }

    /// Fills as many whole values of `kind` as `buf` holds, bounded normal values scaled by
    /// `scale`, and waits for it.
    ///
    /// # Errors
    /// As [`Filler::fill_scaled`].
    pub fn fill_whole<T>(
        &self,
        buf: &CudaSlice<T>,
        kind: FillKind,
        scale: f32,
    ) -> Result<(), DeviceError> {
        let values = whole_values(kind, buf.len() * size_of::<T>());
        self.fill_scaled(buf, kind, values, scale)
    }

    /// A buffer of `bytes` filled by `kind` (as many whole values as fit, [`NORMAL_SCALE`]).
    ///
    /// # Errors
    /// The driver's error (out of memory among them).
    pub fn alloc_filled(
        &self,
        bytes: usize,
        kind: FillKind,
        what: &str,
    ) -> Result<CudaSlice<u8>, DeviceError> {
        let buf = self.session.alloc_zeros::<u8>(bytes, what)?;
        self.fill(&buf, kind, whole_values(kind, bytes))?;
        Ok(buf)
    }
}

/// The whole values of `kind` that `bytes` hold.
fn whole_values(kind: FillKind, bytes: usize) -> u64 {
    bytes as u64 / kind.value_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_kernels::{RANDOM_WORDS, UNIT_FLOAT_WORDS};

    /// A buffer holds the values asked for, at the fill's width.
    #[test]
    fn fills_check_their_buffer() {
        assert!(fill_checks(FillKind::F16, 1000, 2000).is_ok());
        let e = fill_checks(FillKind::F16, 1000, 1999).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot launch fill_f16: the buffer holds 1999 bytes, the launch needs 2000"
        );
        assert!(fill_checks(FillKind::F64, 10, 80).is_ok());
        assert!(fill_checks(FillKind::E4m3, 10, 10).is_ok());
        assert!(fill_checks(RANDOM_WORDS, 10, 39).is_err());
        assert!(fill_checks(UNIT_FLOAT_WORDS, 10, 40).is_ok());
        // Whole values only: a buffer of 7 bytes holds 3 FP16 values, 1 FP32 value, no FP64.
        assert_eq!(whole_values(FillKind::F16, 7), 3);
        assert_eq!(whole_values(FillKind::F32, 7), 1);
        assert_eq!(whole_values(FillKind::F64, 7), 0);
        assert_eq!(whole_values(RANDOM_WORDS, 4096), 1024);
    }
}
