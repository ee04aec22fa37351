//! A SYNTHETIC torch.profiler (Kineto) trace of any size, for the import benchmark.
//!
//! Nothing here is a measurement: the events have the shape of a Kineto trace of a training loop
//! (a `ProfilerStep#N` annotation per step; per layer a module frame, `aten::linear` around
//! `aten::addmm` with recorded shapes, an elementwise `aten::add_`, a two-kernel
//! `aten::native_layer_norm`; Python frames, runtime calls, kernels and flow events), with made-up
//! times, so that the reader and the linker see realistic proportions. It is written to a stream
//! (never held whole) and never under `tests/fixtures/`.

use std::io::{self, Write};

/// What was written.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Written {
    /// Bytes of JSON.
    pub bytes: u64,
    /// Events in `traceEvents`.
    pub events: u64,
    /// Kernel events.
    pub kernels: u64,
    /// Their summed `dur`, µs.
    pub kernel_us: f64,
}

/// A writer that counts the bytes written through it (also [`crate::repeat_trace`]'s).
pub(crate) struct Counting<W> {
    pub(crate) inner: W,
    pub(crate) bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// An operator of the synthetic layer: name, recorded inputs, start offset, kernels with their
/// durations (µs).
type SynthOp = (
    &'static str,
    &'static str,
    u64,
    &'static [(&'static str, f64)],
);

/// Writes a SYNTHETIC trace of at least `target_bytes` bytes.
///
/// # Errors
/// The writer's.
pub fn write_trace<W: Write>(w: W, target_bytes: u64) -> io::Result<Written> {
    let mut w = Counting { inner: w, bytes: 0 };
    let mut out = Written::default();
    write!(
        w,
        r#"{{"schemaVersion": 1, "deviceProperties": [{{"id": 0, "name": "SYNTHETIC GPU", "computeMajor": 9, "computeMinor": 0, "numSms": 132}}], "distributedInfo": {{"rank": 0}}, "traceEvents": ["#
    )?;
    let (pid, main, gpu) = (4242, 4242, 7);
    let mut t: u64 = 1_700_000_000_000_000;
    let mut corr: u64 = 1;
    let mut first = true;
    let mut sep = |w: &mut Counting<W>| -> io::Result<()> {
        if first {
            first = false;
            Ok(())
        } else {
            w.write_all(b",\n")
        }
    };
    let mut step = 0u64;
    while w.bytes < target_bytes {
        let step_start = t;
        let layers = 48;
        let step_len = layers * 400;
        sep(&mut w)?;
        write!(
            w,
            r#"{{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{step}", "pid": {pid}, "tid": {main}, "ts": {step_start}, "dur": {step_len}, "args": {{"External id": {corr}}}}}"#
        )?;
        out.events += 1;
        for layer in 0..layers {
            let base = step_start + layer * 400 + 1;
            sep(&mut w)?;
            write!(
                w,
                r#"{{"ph": "X", "cat": "python_function", "name": "nn.Module: Block_{layer}", "pid": {pid}, "tid": {main}, "ts": {base}, "dur": 390, "args": {{"Python id": {layer}, "Python parent id": 1}}}}"#
            )?;
            sep(&mut w)?;
            write!(
                w,
                r#"{{"ph": "X", "cat": "python_function", "name": "torch/nn/modules/linear.py(124): forward", "pid": {pid}, "tid": {main}, "ts": {}, "dur": 100, "args": {{"Python id": {}, "Python parent id": {layer}}}}}"#,
                base + 1,
                1000 + layer
            )?;
            out.events += 2;
            // (operator, outer span, kernels with their duration)
            let ops: [SynthOp; 3] = [
                (
                    "aten::addmm",
                    r#""Input Dims": [[4096], [8192, 4096], [4096, 4096], [], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"], "Concrete Inputs": ["", "", "", "1", "1"]"#,
                    2,
                    &[(
                        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
                        410.5,
                    )],
                ),
                (
                    "aten::add_",
                    r#""Input Dims": [[8192, 4096], [8192, 4096], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "Scalar"], "Concrete Inputs": ["", "", "1"]"#,
                    120,
                    &[(
                        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)",
                        95.25,
                    )],
                ),
                (
                    "aten::native_layer_norm",
                    r#""Input Dims": [[8192, 4096], [], [4096], [4096], []], "Input type": ["c10::BFloat16", "", "c10::BFloat16", "c10::BFloat16", "Scalar"], "Concrete Inputs": ["", "[4096]", "", "", "1e-05"]"#,
                    200,
                    &[
                        (
                            "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
                            60.0,
                        ),
                        (
                            "void at::native::(anonymous namespace)::layer_norm_stats(int)",
                            12.5,
                        ),
                    ],
                ),
            ];
            for (name, args, at, kernels) in ops {
                let ts = base + at;
                if name == "aten::addmm" {
                    sep(&mut w)?;
                    write!(
                        w,
                        r#"{{"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": {pid}, "tid": {main}, "ts": {}, "dur": 80, "args": {{"External id": {corr}, "Record function id": 0, "Input Dims": [[8192, 4096], [4096, 4096], [4096]], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"], "Concrete Inputs": ["", "", ""], "Fwd thread id": 0, "Sequence number": {corr}}}}}"#,
                        ts - 1
                    )?;
                    out.events += 1;
                }
                sep(&mut w)?;
                write!(
                    w,
                    r#"{{"ph": "X", "cat": "cpu_op", "name": "{name}", "pid": {pid}, "tid": {main}, "ts": {ts}, "dur": 70, "args": {{"External id": {corr}, "Record function id": 0, {args}, "Fwd thread id": 0, "Sequence number": {corr}}}}}"#
                )?;
                out.events += 1;
                for (i, (kname, dur)) in kernels.iter().enumerate() {
                    let rt = ts + 10 + 20 * i as u64;
                    sep(&mut w)?;
                    write!(
                        w,
                        r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": {pid}, "tid": {main}, "ts": {rt}, "dur": 8, "args": {{"External id": {corr}, "cbid": 211, "correlation": {corr}}}}}"#
                    )?;
                    sep(&mut w)?;
                    write!(
                        w,
                        r#"{{"ph": "s", "id": {corr}, "pid": {pid}, "tid": {main}, "ts": {rt}, "cat": "ac2g", "name": "ac2g"}}"#
                    )?;
                    let kt = rt + 15;
                    sep(&mut w)?;
                    write!(
                        w,
                        r#"{{"ph": "X", "cat": "kernel", "name": "{kname}", "pid": 0, "tid": {gpu}, "ts": {kt}, "dur": {dur}, "args": {{"External id": {corr}, "queued": 0, "device": 0, "context": 1, "stream": {gpu}, "correlation": {corr}, "registers per thread": 168, "shared memory": 0, "blocks per SM": 1.0, "warps per SM": 4.0, "grid": [132, 1, 1], "block": [384, 1, 1], "est. achieved occupancy %": 6}}}}"#
                    )?;
                    sep(&mut w)?;
                    write!(
                        w,
                        r#"{{"ph": "f", "id": {corr}, "pid": 0, "tid": {gpu}, "ts": {kt}, "cat": "ac2g", "name": "ac2g", "bp": "e"}}"#
                    )?;
                    out.events += 4;
                    out.kernels += 1;
                    out.kernel_us += dur;
                    corr += 1;
                }
            }
        }
        t = step_start + step_len + 100;
        step += 1;
    }
    write!(w, "\n]}}\n")?;
    w.flush()?;
    out.bytes = w.bytes;
    Ok(out)
}
