#!/usr/bin/env bash
# Runs `roofline suite` on a GPU host (after `roofline machine`, whose bundle gives the ceilings
# and launch overhead), checks what it wrote, and leaves everything under $OUT.
# Usage: OUT=dir scripts/gpu/suite.sh [all|conv2d|lstm|gemm]
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
BIN=${BIN:-target/release/roofline}
studies=${1:-all}
mkdir -p "$OUT"
if [ ! -f "$OUT/machine.json" ]; then
  "$BIN" machine -o "$OUT/machine.json" > "$OUT/machine.txt" 2> "$OUT/machine.err"
  echo "machine rc=$?"; cat "$OUT/machine.txt"
fi
/usr/bin/time -v "$BIN" suite "$studies" --machine "$OUT/machine.json" -o "$OUT/suite.json" \
  > "$OUT/suite.txt" 2> "$OUT/suite.err"
echo "suite rc=$?"
cat "$OUT/suite.txt"; grep -E "Elapsed|Maximum resident" "$OUT/suite.err"; grep -v "^\s" "$OUT/suite.err" | head -40
"$BIN" validate "$OUT/suite.json"
"$BIN" info "$OUT/suite.json" --format csv > "$OUT/suite.csv"
"$BIN" plot "$OUT/suite.json" --chart time -o "$OUT/suite-time.svg"
# The skipped configurations and why, and any kernel faster than its time-based bound
# (gap < 1 means a ceiling or a formula is wrong).
python3 - "$OUT/suite.json" "$OUT/suite.csv" <<'PY'
import csv, json, sys
b = json.load(open(sys.argv[1]))
print(f"{len(b['kernels'])} kernels, {len(b['skipped'])} skipped, complete={b['complete']}")
for s in b["skipped"][:60]:
    print("skipped:", s["what"], "--", s["reason"])
rows = list(csv.DictReader(open(sys.argv[2])))
gap = next((k for k in (rows[0].keys() if rows else []) if "gap" in k), None)
if gap:
    fast = [r for r in rows if r[gap] and float(r[gap]) < 1.0]
    print(f"{len(fast)} kernels faster than their bound")
    for r in fast[:20]:
        print("  FASTER THAN BOUND:", r)
PY
