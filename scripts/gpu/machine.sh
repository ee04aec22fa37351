#!/usr/bin/env bash
# Runs `roofline machine` on a GPU host and leaves its outputs under $OUT.
# Usage: OUT=dir scripts/gpu/machine.sh [quick|full|both]
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
BIN=${BIN:-target/release/roofline}
mode=${1:-both}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv | tee "$OUT/nvidia-smi.csv"
if [ "$mode" != full ]; then
  /usr/bin/time -v "$BIN" machine --quick -o "$OUT/quick.json" > "$OUT/quick.txt" 2> "$OUT/quick.err"; echo "quick rc=$?"
  cat "$OUT/quick.txt"; grep -E "Elapsed|Maximum resident" "$OUT/quick.err"; grep -v "^\s" "$OUT/quick.err" | head -40
fi
if [ "$mode" != quick ]; then
  /usr/bin/time -v "$BIN" machine -o "$OUT/machine.json" > "$OUT/full.txt" 2> "$OUT/full.err"; echo "full rc=$?"
  cat "$OUT/full.txt"; grep -E "Elapsed|Maximum resident" "$OUT/full.err"; grep -v "^\s" "$OUT/full.err" | head -40
fi
