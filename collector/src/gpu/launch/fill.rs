//! The operand fills of `kernels/init.cu`: bounded random data written on the GPU, once per
//! buffer and run, before anything is timed (issue 33). They are never timed and report no work.

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig};

use super::{Args, Launcher, check_len};
use crate::gpu::kernels::{Compiled, Fill as FillKind, Kernel, LaunchWork, NORMAL_SCALE};
use crate::gpu::session::{DeviceError, Session};

/// One fill of `values` values into a buffer, from `seed`.
pub struct Fill<'b> {
    kind: FillKind,
    f: CudaFunction,
    cfg: LaunchConfig,
    buf: &'b CudaSlice<u8>,
    values: u64,
    seed: u64,
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

impl<'b> Fill<'b> {
    /// A fill of the first `values` values of `buf` (of the kind's width) from `seed`, grid-stride
    /// over `cfg`'s grid.
    ///
    /// # Errors
    /// [`DeviceError::Arguments`] for a buffer too small; the entry point missing.
    pub fn new(
        compiled: &Compiled,
        kind: FillKind,
        cfg: LaunchConfig,
        buf: &'b CudaSlice<u8>,
        values: u64,
        seed: u64,
    ) -> Result<Self, DeviceError> {
        fill_checks(kind, values, buf.len())?;
        Ok(Fill {
            kind,
            f: compiled.function(kind.kernel().entry())?,
            cfg,
            buf,
            values,
            seed,
        })
    }
}

impl Launcher for Fill<'_> {
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
            _ => a.arg(&NORMAL_SCALE),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::kernels::{RANDOM_WORDS, UNIT_FLOAT_WORDS};

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
    }
}
