#!/usr/bin/env bash
# The documented PyTorch runs on a GPU host, each made into a bundle and checked against its
# trace, everything left under $OUT (docs/pytorch.md, and the PyTorch part of the GPU run). Per dtype (bf16 autocast and fp32 by default), one training step of
# scripts/gpu/torch_step.py:
#   1. path 1: a trace with kernel times and shapes      -> roofline import        -> DT-shapes.json
#   2. path 2: a CUPTI range-profiler trace with counters -> roofline import        -> DT-counters.json
#   3. both joined: times from 1, counters from 2          -> import --counters      -> DT-joined.json
#   4. the same step under Nsight Compute                  -> roofline profile --nvtx -> DT-profile.json
#   5. path 1 on the torch.compile'd network (Inductor's Triton kernels, with its own
#      kernel_flop and kernel_num_gb)                      -> roofline import        -> DT-compiled.json
# then for each bundle: validate, the per-operator table, the CSV, the time-based and
# hierarchical charts, and a check of launch count and summed kernel time against the trace.
# Each step's time, exit status, output and errors are logged (steps.txt, NAME.out, NAME.err).
#
# Usage: OUT=dir [BIN=target/release/roofline] [PY=python3] [MACHINE=machine.json]
#        [DEVICE=cuda|cpu] scripts/gpu/torch.sh [bf16] [fp32]
# DEVICE=cpu is a dry run of the scripts where there is no GPU (its traces have no kernels, and
# the imports refuse them, saying so).
set -u
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
BIN=${BIN:-target/release/roofline}
PY=${PY:-python3}
DEVICE=${DEVICE:-cuda}
: "${OUT:?set OUT to the directory to write}"
mkdir -p "$OUT"
machine=()
if [ -n "${MACHINE:-}" ]; then machine=(--machine "$MACHINE"); fi

LOGDIR="$OUT"
STEPS="$OUT/steps.txt"
# shellcheck source=scripts/gpu/lib.sh
. scripts/gpu/lib.sh

"$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
  "cudnn", torch.backends.cudnn.version(),
  torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU")' | tee "$OUT/versions.txt"
"$BIN" --version | tee -a "$OUT/versions.txt"

dtypes=("$@")
if [ ${#dtypes[@]} -eq 0 ]; then dtypes=(bf16 fp32); fi

for dt in "${dtypes[@]}"; do
  run=(scripts/gpu/torch_step.py --dtype "$dt" --device "$DEVICE")
  step "trace-shapes-$dt" "$PY" "${run[@]}" shapes -o "$OUT/trace-shapes-$dt.json.gz"
  step "trace-counters-$dt" "$PY" "${run[@]}" counters -o "$OUT/trace-counters-$dt.json.gz"
  step "import-shapes-$dt" "$BIN" import "$OUT/trace-shapes-$dt.json.gz" "${machine[@]}" \
    -o "$OUT/$dt-shapes.json"
  step "import-counters-$dt" "$BIN" import "$OUT/trace-counters-$dt.json.gz" "${machine[@]}" \
    -o "$OUT/$dt-counters.json"
  step "import-joined-$dt" "$BIN" import "$OUT/trace-shapes-$dt.json.gz" \
    --counters "$OUT/trace-counters-$dt.json.gz" "${machine[@]}" -o "$OUT/$dt-joined.json"
  step "trace-compiled-$dt" "$PY" "${run[@]}" --compile shapes -o "$OUT/trace-compiled-$dt.json.gz"
  step "import-compiled-$dt" "$BIN" import "$OUT/trace-compiled-$dt.json.gz" "${machine[@]}" \
    -o "$OUT/$dt-compiled.json"
  if [ "$DEVICE" = cuda ]; then
    step "profile-$dt" "$BIN" profile "${machine[@]}" --nvtx train_step/ \
      --keep-report "$OUT/$dt-profile.ncu-rep" -o "$OUT/$dt-profile.json" -- \
      "$PY" "${run[@]}" nvtx
  fi
  for kind in shapes counters joined profile compiled; do
    b="$OUT/$dt-$kind.json"
    [ -f "$b" ] || continue
    step "validate-$dt-$kind" "$BIN" validate "$b"
    step "ops-$dt-$kind" "$BIN" info "$b" --group-by op --top 25
    "$BIN" info "$b" --format csv -o "$OUT/$dt-$kind.csv"
    for chart in time hierarchical; do
      step "plot-$dt-$kind-$chart" "$BIN" plot "$b" --chart "$chart" -o "$OUT/$dt-$kind-$chart.svg"
    done
  done
  # The bundles against their traces: launch counts and summed kernel times (path 1's kernel
  # events; path 2's gpu__time_duration per range), and how many launches the join matched.
  "$PY" - "$OUT" "$dt" <<'PY' | tee "$OUT/check-$dt.txt"
import gzip, json, os, sys
out, dt = sys.argv[1], sys.argv[2]

def trace(name):
    path = os.path.join(out, f"trace-{name}-{dt}.json.gz")
    if not os.path.exists(path):
        return []
    with gzip.open(path, "rt") as f:
        return json.load(f).get("traceEvents", [])

def bundle(name):
    path = os.path.join(out, f"{dt}-{name}.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)

def summary(b):
    ks = b["kernels"]
    return sum(k["launches"] for k in ks), sum(k["time"]["total_s"] for k in ks)

kernels = [e for e in trace("shapes") if e.get("cat") == "kernel"]
compiled = [e for e in trace("compiled") if e.get("cat") == "kernel"]
t_compiled = sum(e["dur"] for e in compiled) * 1e-6
t_trace = sum(e["dur"] for e in kernels) * 1e-6
ranges = [e for e in trace("counters") if e.get("cat") == "cuda_profiler_range"]
t_ranges = sum(e.get("args", {}).get("gpu__time_duration.sum", 0) for e in ranges) * 1e-9
print(f"{dt}: path-1 trace {len(kernels)} kernel events, {t_trace:.6f} s; "
      f"path-2 trace {len(ranges)} ranges, gpu__time_duration {t_ranges:.6f} s")
for name, n, t in [("shapes", len(kernels), t_trace), ("counters", len(ranges), t_ranges),
                   ("joined", len(kernels), t_trace), ("compiled", len(compiled), t_compiled)]:
    b = bundle(name)
    if b is None:
        print(f"  {name}: no bundle")
        continue
    launches, total = summary(b)
    rel = abs(total - t) / t if t else float("nan")
    ok = launches == n and rel < 1e-6
    print(f"  {name}: {launches} launches, {total:.6f} s (trace {n}, {t:.6f} s; rel. diff {rel:.1e})"
          f" {'OK' if ok else 'DIFFERS'}")
    with_counters = sum(1 for k in b["kernels"] if k.get("bytes"))
    with_f = sum(1 for k in b["kernels"] if k.get("complexity"))
    print(f"    {with_counters} entries with bytes per level, {with_f} with analytical F and B")
PY
done
ls -la "$OUT" > "$OUT/files.txt"
