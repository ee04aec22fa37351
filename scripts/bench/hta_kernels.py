"""HTA's reading of one torch.profiler trace, the peer of `roofline import` in the import
benchmark (collector/tests/bench_memory.rs, `cargo xtask bench-import`).

    python scripts/bench/hta_kernels.py TRACE

Holistic Trace Analysis (pip install HolisticTraceAnalysis) parses the trace into its event
table (TraceAnalysis over a folder holding only this trace, as rank 0) and sums each kernel's
time (get_gpu_kernel_breakdown): the same work as an import's kernel table, without the
roofline. Prints the kernels and launches it found and its own seconds per phase; the
benchmark times the whole process (wall, CPU, peak memory) under GNU time.
"""

import os
import sys
import tempfile
import time

from hta.trace_analysis import TraceAnalysis


def main():
    trace = os.path.abspath(sys.argv[1])
    name = "rank-0.json.gz" if trace.endswith(".gz") else "rank-0.json"
    with tempfile.TemporaryDirectory() as folder:
        os.symlink(trace, os.path.join(folder, name))
        began = time.perf_counter()
        analysis = TraceAnalysis(trace_dir=folder)
        parsed = time.perf_counter()
        types, kernels = analysis.get_gpu_kernel_breakdown(visualize=False)
        done = time.perf_counter()
        frame = analysis.t.get_trace(0)
        launches = int((frame["stream"] >= 0).sum()) if "stream" in frame else len(frame)
        print(f"hta: {len(frame)} events, {launches} on GPU streams, {len(types)} kernel types, "
              f"{len(kernels)} rows of kernels; "
              f"parse {parsed - began:.2f} s, breakdown {done - parsed:.2f} s")


if __name__ == "__main__":
    main()
