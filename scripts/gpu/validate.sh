#!/usr/bin/env bash
# The GPU validation of the toolkit, in device calls that fit the device time a task is lent
# (15 minutes in all, the machine's start included; at most 10 minutes a command).
#
#   scripts/gpu/validate.sh --plan               every call's steps with their planned seconds
#   OUT=dir scripts/gpu/validate.sh CALL          run one call on the GPU host
#   OUT=dir scripts/gpu/validate.sh --dry-run CALL
#                                                the same walk on a machine without a GPU
#
# Calls (each fits one device command; the first two, after one start, fit 15 minutes):
#   call1  env machine check         versions and PyTorch's own rates; `roofline machine`, the
#                                    full plan (-> machine.json); check.py's verdicts
#   call2  probe known trace check   a 10 s ncu permission probe; one known-work case under
#                                    `roofline profile` (GEMM FLOPs against 2·M·N·K); one
#                                    torch.profiler trace imported against the call's machine
#   call3  suite check               `roofline suite all`
#   call4  torch shots check         scripts/gpu/torch.sh's profiles, then the screenshots
# A part's name may be given instead of a call (`validate.sh env machine`).
#
# Nothing is lost when a call is cut short: every step runs under `timeout` with its share of
# the call's budget (`roofline machine` gets SIGINT first, then writes what it measured, marked
# incomplete); each step's status and time are appended to $OUT/steps.txt and its output to
# $OUT/log.txt as it runs; machine.json lands in $OUT the moment `roofline machine` writes it
# (MACHINE=path gives a later call the first call's, as a carried file); the other artefacts
# are written under $OUT/work and packed into $OUT/work.tar.gz at the end (the device returns
# at most 8 files; $OUT holds at most 7).
#
# --dry-run walks every step of the call on a machine without a GPU, with stand-ins for
# python3 (torch scripts only: check.py and the expected-values table run on the real Python),
# ncu, nvcc and nvidia-smi from tests/gpu-dry-run/bin; the collector is the real one and
# refuses where it needs a GPU ("needs a CUDA GPU"). Every stand-in's output says DRY RUN. It
# exists so that a typo in a path, a file name or check.py's inputs costs no device time
# (collector/tests/gpu_validate.rs runs it in CI).
#
# Environment: OUT (required but for --plan), BIN (default target/release/roofline), PY
# (default python3), MACHINE (a machine bundle for call2 and later), PLAN_GPU (the GPU the
# plan is computed for, default "H100 SXM5": the slower memory of the two lent kinds).
set -u
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1
BIN=${BIN:-target/release/roofline}
PY=${PY:-python3}
PLAN_GPU=${PLAN_GPU:-H100 SXM5}

# The budget of each device call, seconds, and each step's share. Allowances are not
# measurements: they bound steps whose time the plan cannot compute (Python and torch start-up,
# ncu's replay, a profiled training step); `roofline machine`'s share is the plan's.
CALL_BUDGET=360
STARTUP_LOW=60
STARTUP_HIGH=180
declare -A SHARE=(
  [env]=40 [machine]=300 [check]=15
  [probe]=20 [known]=120 [trace]=150
  [suite]=330 [torch]=240 [shots]=90
)
declare -A WHAT=(
  [env]="nvidia-smi, versions, PyTorch's d2d copy and GEMM rates (allowance)"
  [machine]="roofline machine, the full plan (from roofline machine --plan)"
  [check]="scripts/gpu/check.py over the work directory (allowance)"
  [probe]="nvcc compiles a one-kernel program; ncu profiles it (ERR_NVGPUCTRPERM?)"
  [known]="known_work.py gemm_bf16 under roofline profile (allowance: torch start, ncu passes)"
  [trace]="torch_step.py shapes (one bf16 step, torch.profiler), imported against machine.json (allowance)"
  [suite]="roofline suite all (allowance)"
  [torch]="scripts/gpu/torch.sh bf16 (allowance)"
  [shots]="screenshots of every bundle in headless Chromium (allowance)"
)
calls() {
  case $1 in
    call1) echo env machine check ;;
    call2) echo probe known trace check ;;
    call3) echo suite check ;;
    call4) echo torch shots check ;;
    *) return 1 ;;
  esac
}

DRY=0
PLAN=0
args=()
for a in "$@"; do
  case $a in
    --plan) PLAN=1 ;;
    --dry-run) DRY=1 ;;
    *) args+=("$a") ;;
  esac
done

# The plan's seconds for `roofline machine` (the high end of its range).
machine_plan() {
  "$BIN" machine --plan --plan-gpu "$PLAN_GPU" > "${1:-/dev/null}" 2>&1 || return 1
  awk '/^total_seconds/ { print int($3 + 0.999) }' "${1:-/dev/null}"
}

if [ "$PLAN" = 1 ]; then
  tmp=$(mktemp)
  m=$(machine_plan "$tmp") || { echo "$BIN machine --plan failed:"; cat "$tmp"; rm -f "$tmp"; exit 1; }
  echo "Device time: start ${STARTUP_LOW}-${STARTUP_HIGH} s (the device's own figure, once per session while the machine stays warm), then each call."
  echo "roofline machine --plan on $PLAN_GPU: $(awk '/^total_seconds/ { print $2 " - " $3 }' "$tmp") s"
  total=$STARTUP_HIGH
  verdict=0
  for call in call1 call2 call3 call4; do
    echo
    echo "$call (budget ${CALL_BUDGET} s of one command):"
    sum=0
    for part in $(calls $call); do
      s=${SHARE[$part]}
      if [ "$part" = machine ]; then
        echo "  $(printf '%-8s %4s s  planned %s s, timeout %s s' "$part" "$s" "$m" "$s")  ${WHAT[$part]}"
        [ "$m" -le "$s" ] || { echo "  OVER: the plan ($m s) exceeds machine's share ($s s)"; verdict=1; }
      else
        echo "  $(printf '%-8s %4s s  timeout %s s' "$part" "$s" "$s")  ${WHAT[$part]}"
      fi
      sum=$((sum + s))
    done
    echo "  total    $sum s $([ "$sum" -le "$CALL_BUDGET" ] && echo "(within ${CALL_BUDGET} s)" || echo "(OVER ${CALL_BUDGET} s)")"
    [ "$sum" -le "$CALL_BUDGET" ] || verdict=1
    case $call in call1 | call2) total=$((total + sum)) ;; esac
  done
  echo
  echo "call1 + call2 with one start: at most $total s of the 900 s lent; call3 and call4 go to a later session."
  [ "$total" -le 900 ] || verdict=1
  rm -f "$tmp"
  exit $verdict
fi

: "${OUT:?set OUT to the directory to write (or use --plan)}"
parts=()
for a in "${args[@]}"; do
  if c=$(calls "$a"); then
    # shellcheck disable=SC2206
    parts+=($c)
  else
    parts+=("$a")
  fi
done
if [ ${#parts[@]} -eq 0 ]; then parts=(env machine check); fi
# Every name is checked before anything runs (a typo must not cost a device call's results).
for part in "${parts[@]}"; do
  [ -n "${SHARE[$part]:-}" ] || { echo "unknown part or call $part (call1..call4; ${!SHARE[*]})" >&2; exit 2; }
done
BIN=$(realpath "$BIN")
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
WORK="$OUT/work"
LOGDIR="$WORK/logs"
STEPS="$OUT/steps.txt"
LOG="$OUT/log.txt"
mkdir -p "$LOGDIR"
if [ "$DRY" = 1 ]; then
  export ROOFLINE_DRY_RUN_PYTHON
  ROOFLINE_DRY_RUN_PYTHON=$(command -v "$PY")
  export ROOFLINE_DRY_RUN_FIXTURES="$PWD/tests/fixtures"
  export PATH="$PWD/tests/gpu-dry-run/bin:$PATH"
  PY=python3
  echo "DRY RUN: stand-ins for python3 (torch scripts), ncu, nvcc and nvidia-smi; no figure below is a measurement" | tee -a "$LOG" "$STEPS"
fi
machine_plan "$OUT/plan.txt" > /dev/null || echo "no plan: $BIN machine --plan failed" >> "$LOG"

# `step NAME SECONDS CMD…`: CMD under `timeout` (SIGINT, then SIGKILL 20 s later), its output in
# $LOGDIR/NAME.{out,err} and appended to $LOG, its status and time appended to $STEPS.
step() {
  local name=$1 limit=$2 start end rc
  shift 2
  start=$(date +%s%N)
  timeout -s INT -k 20 "$limit" "$@" > "$LOGDIR/$name.out" 2> "$LOGDIR/$name.err"
  rc=$?
  end=$(date +%s%N)
  {
    echo "== $name (rc=$rc, limit $limit s): $*"
    cat "$LOGDIR/$name.out" "$LOGDIR/$name.err"
  } >> "$LOG"
  printf '%-28s rc=%-3d %9d ms   limit %4d s   %s\n' "$name" "$rc" $(((end - start) / 1000000)) \
    "$limit" "$*" | tee -a "$STEPS"
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] || [ "$rc" -eq 130 ]; then
    echo "   $name stopped at its limit of $limit s" | tee -a "$STEPS"
  fi
  tail -n 4 "$LOGDIR/$name.out"
  if [ "$rc" -ne 0 ]; then tail -n 8 "$LOGDIR/$name.err"; fi
  return "$rc"
}

# The machine bundle a later part places its kernels against: this run's, or $MACHINE.
machine_bundle() {
  if [ -f "$OUT/machine.json" ]; then
    echo "$OUT/machine.json"
  elif [ -n "${MACHINE:-}" ] && [ -f "$MACHINE" ]; then
    cp "$MACHINE" "$OUT/machine.json" && echo "$OUT/machine.json"
  fi
}

part_env() {
  {
    date -u +%FT%TZ
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,clocks.sm,power.limit,persistence_mode --format=csv
    nvcc --version | tail -2
    ncu --version | tail -1
    "$BIN" --version
    "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
  } > "$WORK/versions.txt" 2>&1
  cat "$WORK/versions.txt" >> "$LOG"
  nvidia-smi -q -d CLOCK > "$WORK/clocks.txt" 2>&1
  # PyTorch's own rates on this GPU, for scale beside our same-run references.
  step torch-rates "${SHARE[env]}" "$PY" scripts/gpu/torch_rates.py
}

part_machine() {
  # Straight into $OUT: the bundle is there the moment it is written (atomically).
  step machine "${SHARE[machine]}" env ROOFLINE_DEBUG_LIBS=1 "$BIN" machine \
    -o "$OUT/machine.json"
  if [ -f "$OUT/machine.json" ]; then
    "$BIN" validate "$OUT/machine.json" >> "$LOG" 2>&1
    "$BIN" info "$OUT/machine.json" > "$WORK/machine-info.txt" 2>&1
  fi
}

part_probe() {
  # A one-kernel program under ncu: without counter permission ncu says ERR_NVGPUCTRPERM.
  rm -f "$WORK/ncu-permission"
  step probe-build 10 nvcc -o "$WORK/probe" scripts/gpu/probe.cu || return
  step probe 10 ncu --metrics sm__cycles_elapsed.avg "$WORK/probe"
  if grep -q ERR_NVGPUCTRPERM "$LOGDIR/probe.out" "$LOGDIR/probe.err"; then
    echo "ncu has no permission to read this GPU's counters (ERR_NVGPUCTRPERM): every ncu step of this call is skipped" | tee -a "$STEPS"
  elif grep -q "sm__cycles_elapsed.avg" "$LOGDIR/probe.out"; then
    touch "$WORK/ncu-permission"
  else
    echo "the ncu probe read no counter: every ncu step of this call is skipped" | tee -a "$STEPS"
  fi
}

part_known() {
  local m case=gemm_bf16
  if [ ! -f "$WORK/ncu-permission" ]; then
    echo "known: skipped (no ncu counters: see the probe)" | tee -a "$STEPS"
    return
  fi
  m=$(machine_bundle)
  "$PY" scripts/gpu/known_work.py --print-expected > "$WORK/known-expected.json"
  step "known-$case" "${SHARE[known]}" "$BIN" profile ${m:+--machine "$m"} \
    --nvtx "known_$case/" --keep-report "$WORK/known-$case" -o "$WORK/known-$case.json" -- \
    "$PY" scripts/gpu/known_work.py --case "$case"
  [ -f "$WORK/known-$case.json" ] &&
    "$BIN" info "$WORK/known-$case.json" --format csv -o "$WORK/known-$case.csv"
}

part_trace() {
  local m
  m=$(machine_bundle)
  step trace-shapes "$((${SHARE[trace]} - 30))" "$PY" scripts/gpu/torch_step.py --dtype bf16 \
    shapes -o "$WORK/trace-shapes-bf16.json.gz"
  [ -f "$WORK/trace-shapes-bf16.json.gz" ] || return
  step trace-import 20 "$BIN" import "$WORK/trace-shapes-bf16.json.gz" ${m:+--machine "$m"} \
    -o "$WORK/trace-bf16.json"
  [ -f "$WORK/trace-bf16.json" ] || return
  "$BIN" info "$WORK/trace-bf16.json" --group-by op --top 25 > "$WORK/trace-bf16-ops.txt" 2>&1
  "$BIN" info "$WORK/trace-bf16.json" --format csv -o "$WORK/trace-bf16.csv" >> "$LOG" 2>&1
}

part_suite() {
  local m
  m=$(machine_bundle)
  step suite "${SHARE[suite]}" "$BIN" suite all ${m:+--machine "$m"} -o "$WORK/suite.json"
  [ -f "$WORK/suite.json" ] || return
  "$BIN" info "$WORK/suite.json" --format csv -o "$WORK/suite.csv" >> "$LOG" 2>&1
}

part_torch() {
  local m
  m=$(machine_bundle)
  step torch "${SHARE[torch]}" env OUT="$WORK/torch" BIN="$BIN" PY="$PY" MACHINE="$m" \
    scripts/gpu/torch.sh bf16
}

part_shots() {
  local chrome b chart name
  chrome=$(command -v chromium chromium-browser google-chrome 2>/dev/null | head -1)
  mkdir -p "$WORK/shots"
  for b in "$OUT"/machine.json "$WORK"/suite.json "$WORK"/trace-bf16.json "$WORK"/torch/*-profile.json; do
    [ -f "$b" ] || continue
    local charts=(hierarchical time)
    if [ "$(basename "$b")" = machine.json ]; then charts=(sweep); fi
    for chart in "${charts[@]}"; do
      name=$(basename "$b" .json)-$chart
      "$BIN" plot "$b" --chart "$chart" -o "$WORK/shots/$name.svg" 2>> "$LOG"
      "$BIN" plot "$b" --chart "$chart" -o "$WORK/shots/$name.html" 2>> "$LOG" || continue
      if [ -n "$chrome" ]; then
        timeout 30 "$chrome" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
          --no-first-run --user-data-dir="$WORK/chrome-profile" --virtual-time-budget=10000 \
          --window-size=1400,900 --screenshot="$WORK/shots/$name.png" \
          "file://$WORK/shots/$name.html" > /dev/null 2>&1
      fi
    done
  done
  rm -rf "$WORK/chrome-profile"
}

part_check() {
  step check "${SHARE[check]}" "$PY" scripts/gpu/check.py "$OUT"
  cp "$LOGDIR/check.out" "$OUT/check.txt"
}

for part in "${parts[@]}"; do
  echo "== $part" | tee -a "$LOG"
  "part_$part"
done

# Pack the work directory: one archive (split into 15 MiB parts when larger; `cat
# work.tar.gz.* | tar xz` joins them); Nsight Compute reports over 12 MiB are listed, not packed.
(cd "$OUT" && find work -name '*.ncu-rep' -size +12582912c) > "$OUT/work/left-out.txt"
tar czf "$OUT/work.tar.gz" -C "$OUT" -X "$OUT/work/left-out.txt" work 2>> "$LOG"
if [ "$(stat -c %s "$OUT/work.tar.gz")" -gt 15728640 ]; then
  split -b 15m -d "$OUT/work.tar.gz" "$OUT/work.tar.gz."
  rm -f "$OUT/work.tar.gz"
fi
rm -rf "$OUT/work"
ls -la "$OUT"
