#!/usr/bin/env python3
"""The fleet recipe of docs/fleet.md, end to end: many runs as Parquet, queried with DuckDB and
with Spark in local mode, the two engines' answers compared.

The runs: 1,000 by default, SYNTHETIC variants of two real bundles, each run's kernel times
scaled by a smooth per-run, per-kernel drift (and nothing else changed), so that the queries
have something to find:
  - half from the import of a real ROCm trace (an MI250 GCD training step, HolisticTraceAnalysis,
    MIT; `tests/fixtures/traces/mi250-rocm62-minitoy-train.json.gz`): PyTorch operators;
  - half from the V100 DeepCAM example bundle (the 2020 NERSC study's counters and ceilings):
    hierarchical headroom.
Every variant's description says SYNTHETIC. `roofline export` writes their tables; the queries
read them as any engine would.

Usage: recipe.py --roofline PATH [--runs N] [--out DIR] [--spark]
Prints each query's table; exits non-zero if an engine fails or the engines disagree.
"""

import argparse
import json
import math
import pathlib
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
TRACE = ROOT / "tests/fixtures/traces/mi250-rocm62-minitoy-train.json.gz"
V100 = ROOT / "tests/fixtures/bundles/v100-deepcam-example.json"

PER_OPERATOR = """
select name as operator, count(distinct run) as runs, sum(time_s) as total_s,
       avg(time_s) as mean_s, min(time_s) as min_s, max(time_s) as max_s
from operators
group by name
order by total_s desc, operator
"""

# Each run's time-weighted mean headroom (kernels with a bound), against the run before it in
# the family's sequence (run names end in their index).
HEADROOM_GREW = """
with per_run as (
    select run, cast(split_part(run, '-', 3) as bigint) as seq,
           sum(headroom * time_s) / sum(time_s) as headroom
    from kernels
    where headroom is not null
    group by run
),
paired as (
    select run, seq, headroom,
           lag(headroom) over (order by seq) as before
    from per_run
)
select run, before, headroom, headroom / before as ratio
from paired
where before is not null and headroom > before * 1.02
order by ratio desc, run
"""


def drift(run: int, name: str) -> float:
    """A smooth, deterministic time factor in [0.8, 1.2] for one kernel of one run."""
    phase = sum(name.encode()) % 97
    return 1.0 + 0.2 * math.sin(run * 0.7 + phase)


def variant(bundle: dict, run: int, origin: str) -> dict:
    """`bundle` with every kernel's times scaled by its drift; described as SYNTHETIC."""
    b = json.loads(json.dumps(bundle))
    for k in b["kernels"]:
        f = drift(run, k["name"])
        t = k["time"]
        t["total_s"] *= f
        stats = t.get("per_launch")
        if stats:
            for key in ("min_s", "median_s", "mean_s", "max_s", "stddev_s"):
                if stats.get(key) is not None:
                    stats[key] *= f
    b["description"] = f"SYNTHETIC fleet run {run}: {origin} with kernel times scaled (scripts/fleet/recipe.py)"
    return b


def make_runs(roofline: str, runs: int, work: pathlib.Path) -> list:
    bundles = work / "bundles"
    shutil.rmtree(bundles, ignore_errors=True)
    bundles.mkdir(parents=True)
    imported = work / "mi250-train.json"
    subprocess.run([roofline, "import", str(TRACE), "-o", str(imported)], check=True, capture_output=True)
    families = [
        ("train-mi250", json.loads(imported.read_text()), "the import of a real MI250 trace"),
        ("deepcam-v100", json.loads(V100.read_text()), "the V100 DeepCAM example"),
    ]
    files = []
    for i in range(runs):
        prefix, base, origin = families[i % 2]
        path = bundles / f"{prefix}-{i // 2:04d}.json"
        path.write_text(json.dumps(variant(base, i // 2, origin)))
        files.append(path)
    return files


def duckdb_answers(tables: pathlib.Path) -> dict:
    import duckdb

    con = duckdb.connect()
    for t in ("kernels", "operators"):
        con.execute(f"create view {t} as select * from read_parquet('{tables / t}/*.parquet')")
    return {q: con.execute(sql).fetchall() for q, sql in (("per_operator", PER_OPERATOR), ("headroom_grew", HEADROOM_GREW))}


def spark_answers(tables: pathlib.Path) -> dict:
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("roofline-fleet")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        for t in ("kernels", "operators"):
            spark.read.parquet(str(tables / t)).createOrReplaceTempView(t)
        out = {}
        for q, sql in (("per_operator", PER_OPERATOR), ("headroom_grew", HEADROOM_GREW)):
            # Spark has no split_part: the same, as element_at(split(...)).
            sql = sql.replace("split_part(run, '-', 3)", "element_at(split(run, '-'), 3)")
            out[q] = [tuple(r) for r in spark.sql(sql).collect()]
        return out
    finally:
        spark.stop()


def same(a: list, b: list) -> bool:
    """The same rows, keyed by their first column (two engines may order near-ties of summed
    floats differently), each figure equal to 1e-9 relative."""
    if len(a) != len(b):
        return False
    for ra, rb in zip(sorted(a, key=lambda r: str(r[0])), sorted(b, key=lambda r: str(r[0]))):
        for x, y in zip(ra, rb):
            if isinstance(x, float) or isinstance(y, float):
                if x is None or y is None or abs(x - y) > 1e-9 * max(abs(x), abs(y), 1e-300):
                    if not (x is None and y is None):
                        return False
            elif x != y:
                return False
    return True


def show(title: str, rows: list, limit: int = 8) -> None:
    print(f"\n{title} ({len(rows)} rows)")
    for r in rows[:limit]:
        print("  " + " | ".join(f"{v:.6g}" if isinstance(v, float) else str(v) for v in r))
    if len(rows) > limit:
        print(f"  … {len(rows) - limit} more")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--roofline", required=True)
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--out", default=str(ROOT / "target/fleet"))
    ap.add_argument("--spark", action="store_true", help="also query with Spark in local mode")
    a = ap.parse_args()
    work = pathlib.Path(a.out)
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    files = make_runs(a.roofline, a.runs, work)
    t1 = time.monotonic()
    tables = work / "tables"
    shutil.rmtree(tables, ignore_errors=True)
    subprocess.run([a.roofline, "export", *map(str, files), "-o", str(tables)], check=True)
    t2 = time.monotonic()
    duck = duckdb_answers(tables)
    t3 = time.monotonic()
    print(f"{a.runs} runs: made in {t1 - t0:.1f} s, exported in {t2 - t1:.1f} s, DuckDB in {t3 - t2:.2f} s")
    show("per-operator time across runs (DuckDB)", duck["per_operator"])
    show("runs whose headroom grew by more than 2% over the run before (DuckDB)", duck["headroom_grew"])
    if not duck["per_operator"] or not duck["headroom_grew"]:
        print("error: a query found nothing", file=sys.stderr)
        return 1
    runs_seen = duck["per_operator"][0][1]
    if runs_seen != a.runs // 2:
        print(f"error: the top operator is in {runs_seen} runs, expected {a.runs // 2}", file=sys.stderr)
        return 1
    if a.spark:
        spark = spark_answers(tables)
        t4 = time.monotonic()
        print(f"Spark (local mode) in {t4 - t3:.1f} s")
        for q in duck:
            if not same(duck[q], spark[q]):
                show(f"{q} (Spark)", spark[q])
                key = lambda r: str(r[0])
                for i, (x, y) in enumerate(zip(sorted(duck[q], key=key), sorted(spark[q], key=key))):
                    if not same([x], [y]):
                        print(f"  first difference, row {i}: DuckDB {x}, Spark {y}", file=sys.stderr)
                        break
                print(f"error: DuckDB and Spark disagree on {q}", file=sys.stderr)
                return 1
        print("DuckDB and Spark give the same answers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
