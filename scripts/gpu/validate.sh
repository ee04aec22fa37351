#!/usr/bin/env bash
# The whole GPU run of the toolkit (issue 16), in as few device calls as the 10-minute limit
# allows, every artefact kept and packed under $OUT. Parts, run in the order given:
#
#   env      versions, clocks, PyTorch's own copy and GEMM rates
#   machine  `roofline machine --quick`, then `roofline machine --diagnose-refused`
#            (-> machine.json)
#   known    scripts/gpu/known_work.py plain, then under `roofline profile` once per case
#            (GEMM FLOPs against 2*M*N*K, copy bytes at HBM against 2N), with ncu's passes
#   suite    `roofline suite all --machine machine.json` (scripts/gpu/suite.sh's checks)
#   torch    scripts/gpu/torch.sh bf16 fp32 with MACHINE (traces, imports, the ncu profile of
#            one training step), plus the same step timed without a profiler
#   shots    the viewer's screenshots of every bundle, in headless Chromium where there is one
#   check    scripts/gpu/check.py: every target of issues 16 and 33, met or not, with the figures
#
# A later part uses the machine bundle an earlier one wrote to $WORK, or $MACHINE, or measures it
# again (--quick) when neither exists (a new device call starts on a bare machine). Each step's
# time, exit status and output are logged ($WORK/steps.txt, $WORK/logs/NAME.{out,err}).
# At the end $WORK is packed into $OUT/validate-PARTS.tar.gz and, for Nsight Compute's reports
# and the traces, validate-PARTS-reports.tar.gz (each split into 15 MiB parts when larger; reports
# over 12 MiB left out and listed), and machine.json, steps.txt and check.txt are copied beside.
#
# Usage, from the repository root on the GPU host, with the release binary carried:
#   OUT=dir [WORK=/tmp/roofline-validate] [BIN=target/release/roofline] [PY=python3]
#   [MACHINE=machine.json] scripts/gpu/validate.sh [env] [machine] [known] [suite] [torch]
#   [shots] [check]            (no part: env machine known check)
# Device calls that fit 10 minutes each: `env machine known check`, `suite check`,
# `torch shots check` (carry target/release/roofline; pass the first call's machine.json on as
# MACHINE by copying it into the tree, e.g. gpu-run/machine.json, ignored by .git/info/exclude
# and named in carry).
set -u
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to the directory to write}"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1
BIN=$(realpath "${BIN:-target/release/roofline}")
PY=${PY:-python3}
WORK=${WORK:-/tmp/roofline-validate}
mkdir -p "$OUT" "$WORK/logs"
parts=("$@")
if [ ${#parts[@]} -eq 0 ]; then parts=(env machine known check); fi
# Every name is checked before anything runs (a typo must not cost a device call's results).
for part in "${parts[@]}"; do
  case $part in
    env | machine | known | suite | torch | shots | check) ;;
    *) echo "unknown part $part (env machine known suite torch shots check)" >&2; exit 2 ;;
  esac
done
# /usr/bin/time -v for peak memory, where the host has it.
TIME=()
if [ -x /usr/bin/time ]; then TIME=(/usr/bin/time -v); fi

LOGDIR="$WORK/logs"
STEPS="$WORK/steps.txt"
# shellcheck source=scripts/gpu/lib.sh
. scripts/gpu/lib.sh

# The machine bundle a part compares against: this run's, $MACHINE, or a quick one measured now.
machine_bundle() {
  if [ -f "$WORK/machine.json" ]; then
    echo "$WORK/machine.json"
  elif [ -n "${MACHINE:-}" ] && [ -f "$MACHINE" ]; then
    cp "$MACHINE" "$WORK/machine.json" && echo "$WORK/machine.json"
  else
    step machine-for-later "$BIN" machine --quick -o "$WORK/machine.json" >&2
    [ -f "$WORK/machine.json" ] && echo "$WORK/machine.json"
  fi
}

part_env() {
  {
    date -u +%FT%TZ
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,clocks.sm,power.limit,persistence_mode --format=csv
    cat /proc/driver/nvidia/version
    nvcc --version | tail -2
    ncu --version | tail -1
    ldd --version | head -1
    "$BIN" --version
    "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
    command -v chromium chromium-browser google-chrome 2>/dev/null || echo "no Chromium on this host"
  } > "$WORK/versions.txt" 2>&1
  cat "$WORK/versions.txt"
  nvidia-smi -q -d CLOCK > "$WORK/clocks.txt" 2>&1
  # PyTorch's own rates on this GPU, for scale beside our same-run references.
  step torch-rates "$PY" - <<'PY'
import torch
def t(f, n=20):
    f(); torch.cuda.synchronize()
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(n):
        s.record(); f(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e) / 1e3)
    return sorted(ts)[len(ts) // 2]
a = torch.empty(1 << 30, dtype=torch.uint8, device="cuda"); b = torch.empty_like(a)
print("d2d copy 1 GiB: %.3f TB/s (read + write)" % (2 * (1 << 30) / t(lambda: b.copy_(a)) / 1e12))
torch.backends.cuda.matmul.allow_tf32 = False
n = 8192
for dt in [torch.float64, torch.float32, torch.float16, torch.bfloat16]:
    x = torch.randn(n, n, device="cuda", dtype=dt); y = torch.randn(n, n, device="cuda", dtype=dt)
    print(dt, "GEMM %d^3: %.1f TFLOP/s" % (n, 2 * n**3 / t(lambda: x @ y, 10) / 1e12))
PY
}

part_machine() {
  # The first run says which NVRTC, cuBLASLt and cuDNN it loaded, from where.
  step machine-quick env ROOFLINE_DEBUG_LIBS=1 "${TIME[@]}" "$BIN" machine --quick \
    -o "$WORK/machine-quick.json"
  # --diagnose-refused: the kernels the SASS audit refuses here (mma_fp8 on sm_90) run too and
  # their rates land in the notes, so that the audit's verdicts can be checked on the device.
  step machine "$BIN" machine --diagnose-refused -o "$WORK/machine.json"
  step machine-validate "$BIN" validate "$WORK/machine.json" "$WORK/machine-quick.json"
  step machine-info "$BIN" info "$WORK/machine.json"
}

part_known() {
  local m case
  m=$(machine_bundle)
  "$PY" scripts/gpu/known_work.py --print-expected > "$WORK/known-expected.json"
  step known-plain "$PY" scripts/gpu/known_work.py
  for case in $("$PY" -c 'import json,sys; print(*json.load(open(sys.argv[1])))' "$WORK/known-expected.json"); do
    step "known-$case" "$BIN" profile ${m:+--machine "$m"} --nvtx "known_$case/" \
      --keep-report "$WORK/known-$case" -o "$WORK/known-$case.json" -- \
      "$PY" scripts/gpu/known_work.py --case "$case"
    "$BIN" info "$WORK/known-$case.json" --format csv -o "$WORK/known-$case.csv"
  done
}

part_suite() {
  local m
  m=$(machine_bundle)
  step suite "${TIME[@]}" "$BIN" suite all ${m:+--machine "$m"} -o "$WORK/suite.json"
  step suite-validate "$BIN" validate "$WORK/suite.json"
  "$BIN" info "$WORK/suite.json" --format csv -o "$WORK/suite.csv"
  step suite-plot "$BIN" plot "$WORK/suite.json" --chart time -o "$WORK/suite-time.svg"
}

part_torch() {
  local m dt
  m=$(machine_bundle)
  for dt in bf16 fp32; do
    # The profiled step's wall time against the same command without a profiler.
    step "torch-plain-$dt" "$PY" scripts/gpu/torch_step.py --dtype "$dt" nvtx
  done
  step torch env OUT="$WORK/torch" BIN="$BIN" PY="$PY" MACHINE="$m" scripts/gpu/torch.sh bf16 fp32
}

part_shots() {
  local chrome b chart
  chrome=$(command -v chromium chromium-browser google-chrome 2>/dev/null | head -1)
  mkdir -p "$WORK/shots"
  for b in "$WORK"/machine.json "$WORK"/suite.json "$WORK"/torch/*-{joined,profile}.json; do
    [ -f "$b" ] || continue
    local charts=(hierarchical time)
    if [ "$(basename "$b")" = machine.json ]; then charts=(sweep); fi
    for chart in "${charts[@]}"; do
      local name
      name=$(basename "$b" .json)-$chart
      "$BIN" plot "$b" --chart "$chart" -o "$WORK/shots/$name.svg" 2> /dev/null
      "$BIN" plot "$b" --chart "$chart" -o "$WORK/shots/$name.html" 2> /dev/null || continue
      if [ -n "$chrome" ]; then
        "$chrome" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
          --user-data-dir="$WORK/chrome-profile" --virtual-time-budget=10000 \
          --window-size=1400,900 --screenshot="$WORK/shots/$name.png" \
          "file://$WORK/shots/$name.html" > /dev/null 2>&1
      fi
    done
  done
  ls "$WORK/shots" | tee "$WORK/logs/shots.txt"
  [ -n "$chrome" ] || echo "no Chromium here: take the screenshots from the returned bundles"
}

part_check() {
  "$PY" scripts/gpu/check.py "$WORK" | tee "$WORK/check.txt"
}

for part in "${parts[@]}"; do
  echo "== $part"
  "part_$part"
done

# Pack. The device returns at most 8 files of 16 MiB: the logs, bundles, CSVs, charts and
# screenshots go in one archive; Nsight Compute's reports and the traces in another; each is split
# into 15 MiB parts when larger (`cat NAME.tar.gz.* | tar xz` joins them). Reports over 12 MiB
# are listed in left-out.txt, not packed; Chromium's profile is left out.
name=$(IFS=-; echo "${parts[*]}")
base=$(basename "$WORK")
parent=$(dirname "$WORK")
(cd "$parent" && find "$base" -name '*.ncu-rep' -size +12582912c) > "$WORK/left-out.txt"
(cd "$parent" && find "$base" \( -name '*.ncu-rep' -size -12582913c \) -o -name '*.json.gz') \
  > "$WORK/heavy.txt"
pack() { # pack ARCHIVE TAR-ARGS…: writes ARCHIVE under $OUT, split when over 15 MiB
  local archive=$1
  shift
  tar czf "$OUT/$archive" -C "$parent" "$@" 2>> "$OUT/tar.err"
  if [ "$(stat -c %s "$OUT/$archive")" -gt 15728640 ]; then
    split -b 15m -d "$OUT/$archive" "$OUT/$archive."
    rm -f "$OUT/$archive"
  fi
}
pack "validate-$name.tar.gz" --exclude="$base/chrome-profile" --exclude='*.ncu-rep' \
  --exclude='*.json.gz' "$base"
if [ -s "$WORK/heavy.txt" ]; then pack "validate-$name-reports.tar.gz" -T "$WORK/heavy.txt"; fi
for f in machine.json steps.txt check.txt; do [ -f "$WORK/$f" ] && cp "$WORK/$f" "$OUT/"; done
[ -s "$OUT/tar.err" ] || rm -f "$OUT/tar.err"
ls -la "$OUT"
