"""The GPU validation's targets, checked against what scripts/gpu/validate.sh left in its
output directory.

    python scripts/gpu/check.py OUT

OUT holds steps.txt, machine.json and check.txt, and work/ the rest (validate.sh packs it into
work.tar.gz at the end of a call: unpack it beside steps.txt to check a returned call again).
A part that the call did not run is reported as "not run", never as a failure.

Prints one line per target with the figures behind it and MET, SHORT (a figure misses its
target) or MISSING (the part that produces it did not run or failed), then the figures a target
does not judge (Tensor Core ceilings against cuBLASLt, the sweep's plateaus, profiling overhead).
Issue 33's points (docs/measurements/methodology.md), for each machine bundle: random operands on
every Tensor ceiling, sustained within 3% of burst or a throttle reason named, the GEMM shapes and
algorithms tried, NVML sampled, launches per interval, best-reach marks, datasheet rows.
Reads only files; needs no GPU. Exits 0 whatever it finds: the verdicts are for the
measurements page, written by a person, with their causes.
"""

import csv
import glob
import json
import os
import re
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "."


def find(name):
    """A file of the call: in OUT (steps.txt, machine.json) or in OUT/work (the rest)."""
    for base in [OUT, os.path.join(OUT, "work")]:
        path = os.path.join(base, name)
        if os.path.exists(path):
            return path
    return os.path.join(OUT, "work", name)


def load(name):
    path = find(name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def steps():
    """Each logged step's exit status and milliseconds, by name (the last run of a name wins)."""
    out = {}
    for path in [find("steps.txt"), find(os.path.join("torch", "steps.txt"))]:
        if not os.path.exists(path):
            continue
        for line in open(path):
            m = re.match(r"(\S+)\s+rc=(-?\d+)\s+(\d+) ms", line)
            if m:
                out[m.group(1)] = (int(m.group(2)), int(m.group(3)) / 1e3)
    return out


def replay_passes(log):
    """The replay passes per profiled kernel that ncu logged (`... 100% - 9 passes`) to `log`,
    or None when there is no such log."""
    if not os.path.exists(log):
        return None
    return [int(n) for n in re.findall(r"(\d+) pass(?:es)?", open(log).read())]


def verdict(ok):
    return "MET" if ok else "SHORT"


def line(target, status, detail):
    print(f"{status:8} {target:44} {detail}")


def machine_rows(b):
    """Per level and datapath: our own empirical figure, the same-run reference, the theoretical."""
    m = (b.get("machines") or [{}])[0]
    rows = {}
    for kind, key in [("bandwidth", "level"), ("compute", "datapath")]:
        for c in m.get(kind, []):
            r = rows.setdefault(c[key], {})
            # Theoretical rows at the datasheet's clock are kept apart: the targets
            # compare with the row at the clock the kernel ran at.
            if c["method"] == "theoretical":
                slot = "datasheet" if c.get("clock_source") == "datasheet" else "theoretical"
            else:
                slot = "reference" if c.get("reference") else "own"
            if c["value"] > r.get(slot, (0, None))[0]:
                r[slot] = (c["value"], c.get("implementation"))
    return rows, m


def check_machine(st):
    b = load("machine.json")
    if b is None:
        line("machine", "MISSING", "no machine.json")
        return
    rows, m = machine_rows(b)
    print("\nceiling        own            reference      theoretical    datasheet      own/ref  own/theo")
    for name, r in rows.items():
        own, ref, theo, sheet = (r.get(s, (None, None))[0]
                                 for s in ("own", "reference", "theoretical", "datasheet"))
        unit = 1e12
        f = lambda v: f"{v / unit:10.2f} T  " if v else "       -      "
        q = lambda a, c: f"{a / c:7.3f}" if a and c else "      -"
        print(f"{name:14} {f(own)} {f(ref)} {f(theo)} {f(sheet)} {q(own, ref)}  {q(own, theo)}")
    print()
    # Like for like: our copy kernel against the driver's device-to-device copy of the same
    # buffers (both count bytes read plus written); the best own HBM figure beside it.
    hbm = rows.get("hbm", {})
    copy = max((c["value"] for c in m.get("bandwidth", [])
                if c["level"] == "hbm" and not c.get("reference")
                and (c.get("implementation") or "").startswith("copy kernel")), default=None)
    if copy and "reference" in hbm:
        ratio = copy / hbm["reference"][0]
        best = hbm["own"][0] / hbm["reference"][0] if "own" in hbm else float("nan")
        line("HBM copy >= 0.97 of device-to-device copy", verdict(ratio >= 0.97),
             f"{ratio:.3f} (best own HBM kernel {best:.3f})")
    else:
        line("HBM copy >= 0.97 of device-to-device copy", "MISSING",
             "no copy kernel or reference HBM figure")
    for dp in ["fp64", "fp32", "fp16", "bf16"]:
        r = rows.get(dp, {})
        if "own" in r and "theoretical" in r:
            ratio = r["own"][0] / r["theoretical"][0]
            line(f"{dp} FMA >= 0.97 of theoretical at its clock", verdict(ratio >= 0.97),
                 f"{ratio:.3f}")
        else:
            line(f"{dp} FMA >= 0.97 of theoretical at its clock", "MISSING", "no figure")
    # The sweep's plateaus, as `roofline machine` attributed them (shared::plateau), and the
    # FP32 sweep's best bandwidth per working set they were read from.
    plateaus = {c["level"]: c["value"] for c in m.get("bandwidth", [])
                if (c.get("implementation") or "").startswith("ERT-style sweep plateau")}
    shown = ", ".join(f"{k} {plateaus[k] / 1e12:.2f} TB/s" if k in plateaus else f"{k} -"
                      for k in ["l1", "l2", "hbm"])
    if all(k in plateaus for k in ["l1", "l2", "hbm"]):
        ok = plateaus["l1"] > plateaus["l2"] > plateaus["hbm"]
        line("sweep: L1 > L2 > HBM plateaus", verdict(ok), shown)
    else:
        line("sweep: L1 > L2 > HBM plateaus", "MISSING", shown)
    best = {}
    for p in m.get("sweep", []):
        if p["datapath"] == "fp32" and p["time_s"] > 0:
            ws = p["working_set_bytes"]
            best[ws] = max(best.get(ws, 0.0), p["bytes"] / p["time_s"])
    if best:
        print("         FP32 sweep, best TB/s per working set: " + ", ".join(
            f"{ws / 2**20:g} MiB {v / 1e12:.2f}" for ws, v in sorted(best.items())))
    # The PCIe host link (page-locked copies each way, the slower one): against PCIe 5.0 x16's
    # 63 GB/s per direction (32 GT/s x 16 lanes, 128b/130b), which H100 and H200 boards have.
    pcie = [l for l in m.get("links", []) if l["link"] == "pcie" and l["method"] == "empirical"]
    if pcie:
        v = pcie[0]["value"]
        line("PCIe host link measured", verdict(v > 0),
             f"{v / 1e9:.1f} GB/s, {v / 63.0e9:.2f} of PCIe 5.0 x16; {pcie[0].get('implementation', '')}")
    else:
        line("PCIe host link measured", "MISSING", "no empirical PCIe link in machine.json")
    # NVLink to a peer GPU: measured only on a host with a second GPU joined by it; otherwise
    # the reason is under `skipped` (a one-GPU host is the expected case here).
    nvlink = [l for l in m.get("links", []) if l["link"] == "nvlink" and l["method"] == "empirical"]
    why = [s["reason"] for s in b.get("skipped", []) if s["what"] == "NVLink peer copies"]
    if nvlink:
        v = nvlink[0]["value"]
        line("NVLink peer copies", verdict(v > 0),
             f"{v / 1e9:.1f} GB/s; {nvlink[0].get('implementation', '')}")
    elif why:
        line("NVLink peer copies", "skipped", why[0])
    else:
        line("NVLink peer copies", "MISSING", "neither an NVLink ceiling nor the reason it was skipped")
    # `roofline machine --plan` sets the full plan's time; validate.sh gives it 300 s.
    for name, limit in [("machine", 300)]:
        if name in st:
            rc, s = st[name]
            line(f"{name} under {limit} s", verdict(rc == 0 and s < limit), f"{s:.1f} s, rc={rc}")
        else:
            line(f"{name} under {limit} s", "MISSING", "not run")
    lo = m.get("launch_overhead")
    if lo:
        print(f"         launch overhead {lo['value_s'] * 1e6:.2f} us")
    for s in b.get("skipped", []):
        print(f"         machine skipped: {s['what']} -- {s['reason']}")
    # The run's own notes: wall time, residency of its launches, theoretical gaps, and the
    # diagnostic runs of the kernels the SASS audit refuses (against the passing ones above).
    for n in b.get("notes", []):
        print(f"         machine note: {n}")
    diagnostics = [n for n in b.get("notes", []) if n.startswith("diagnostic, not a ceiling")]
    line("SASS audit: refused kernels timed for diagnosis", "MET" if diagnostics else "MISSING",
         f"{len(diagnostics)} (compare each with its datapath's reference above)")


THROTTLES = {"applications_clocks_setting", "sw_power_cap", "hw_slowdown", "sync_boost",
             "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "other"}


def check_issue33(name, quick):
    """Issue 33's points on one machine bundle (machine.json or machine-quick.json)."""
    b = load(name)
    if b is None:
        line(f"{name}: issue 33", "MISSING", f"no {name}")
        return
    m = (b.get("machines") or [{}])[0]
    tag = name.replace(".json", "")
    empirical = [("bandwidth", c) for c in m.get("bandwidth", []) if c["method"] == "empirical"]
    empirical += [("compute", c) for c in m.get("compute", []) if c["method"] == "empirical"]
    key = lambda kind, c: c["level"] if kind == "bandwidth" else c["datapath"]
    impl = lambda c: (c.get("implementation") or "")[:48]

    # Random operands on every Tensor ceiling (own mma.sync and cuBLASLt).
    tensor = [c for k, c in empirical if k == "compute" and c["datapath"].startswith("tensor_")]
    bad = [f"{c['datapath']} {impl(c)} ({c.get('operands', 'unrecorded')})" for c in tensor
           if c.get("operands") not in ("bounded_normal", "random_bits")]
    line(f"{tag}: random operands on Tensor ceilings",
         "MISSING" if not tensor else verdict(not bad),
         f"{len(tensor)} Tensor ceilings" + (f"; not random: {'; '.join(bad)}" if bad else ""))

    # Sustained within 3% of burst, or a throttle reason named over the window.
    timed = [(k, c) for k, c in empirical if c.get("timing")]
    no_sustained = [f"{key(k, c)} {impl(c)}" for k, c in timed if not c.get("sustained")]
    unexplained = []
    for k, c in timed:
        s = c.get("sustained")
        if not s:
            continue
        r = s["value"] / c["value"] if c["value"] else float("nan")
        reasons = [x for x in (s.get("telemetry") or {}).get("clock_event_reasons", [])
                   if x["reason"] in THROTTLES]
        shown = ", ".join(f"{x['reason']} {x['fraction']:.0%}" for x in reasons)
        print(f"         {key(k, c):12} burst {c['value'] / 1e12:9.2f} T  sustained "
              f"{s['value'] / 1e12:9.2f} T  {r:6.3f}  settled={s.get('settled')} "
              f"settle {s.get('settle_s', 0):.2f} s  {shown}")
        if r < 0.97 and not reasons:
            unexplained.append(f"{key(k, c)} {r:.3f}")
    line(f"{tag}: every timed ceiling has a sustained figure", verdict(timed and not no_sustained),
         f"{len(timed)} timed" + (f"; without: {'; '.join(no_sustained)}" if no_sustained else ""))
    line(f"{tag}: sustained >= 0.97 burst or throttle named", verdict(timed and not unexplained),
         "; ".join(unexplained) or "all")

    # Timing without launch latency: launches per interval and interval lengths.
    floor = 1e-3 if quick else 2e-3
    short = [f"{key(k, c)} {c['timing']['interval_s'] * 1e3:.2f} ms x{c['timing']['launches_per_interval']}"
             for k, c in timed if c["timing"]["interval_s"] < 0.95 * floor
             and c["timing"]["launches_per_interval"] < 64]
    ns = sorted({c["timing"]["launches_per_interval"] for _, c in timed})
    line(f"{tag}: intervals >= {floor * 1e3:.0f} ms of back-to-back launches",
         "MISSING" if not timed else verdict(not short),
         f"launches per interval {ns}" + (f"; short: {'; '.join(short)}" if short else ""))
    st = m.get("sweep_timing")
    if st:
        print(f"         sweep: {st['intervals_per_point']} intervals of >= "
              f"{st['interval_min_s'] * 1e3:.0f} ms per point, "
              f"{st['launches_per_interval_min']} to {st['launches_per_interval_max']} launches each")

    # NVML sampled.
    with_t = [c for _, c in timed if c.get("telemetry")]
    nvml_note = [n for n in b.get("notes", []) if n.startswith("NVML unavailable")]
    line(f"{tag}: NVML sampled during every measurement",
         verdict(timed and len(with_t) == len(timed)) if not nvml_note else "MISSING",
         f"{len(with_t)} of {len(timed)} with telemetry" + (f"; {nvml_note[0]}" if nvml_note else "")
         + (f"; power limit {b['devices'][0].get('power_limit_w')} W" if b.get("devices") else ""))

    # The library's best: shapes and algorithms tried.
    refs = [c for _, c in empirical if c.get("reference") and c.get("gemm")]
    few = []
    for c in refs:
        g = c["gemm"]
        a = g["algorithm"]
        print(f"         {c['datapath']:12} best {g['m']}x{g['n']}x{g['k']} algorithm rank "
              f"{a['heuristic_rank']} id {a.get('id')} tile {a.get('tile')} stages {a.get('stages')} "
              f"split-k {a.get('split_k')}: {c['value'] / 1e12:.1f} T of {g['shapes_tried']} shapes, "
              f"{g['algorithms_tried']} timed{' (indicative)' if c.get('indicative') else ''}")
        want_algos = 4 if quick else 8
        if not quick and (g["shapes_tried"] < 3 or g["algorithms_tried"] < want_algos):
            few.append(c["datapath"])
        if quick and not c.get("indicative"):
            few.append(c["datapath"] + " (quick, not marked indicative)")
    line(f"{tag}: references tried >= 3 shapes x several algorithms",
         "MISSING" if not refs else verdict(not few), ", ".join(few) or f"{len(refs)} references")

    # Best reach, theoretical rows at the datasheet clock.
    for c in m.get("compute", []):
        if c.get("limit"):
            print(f"         best reach: {c['datapath']} {impl(c)}: {c['limit']['kind']}: "
                  f"{c['limit']['reason']}")
    sheet = [c for c in m.get("compute", []) if c.get("clock_source") == "datasheet"]
    name_ = (b.get("devices") or [{}])[0].get("name", "")
    if "H100" in name_ or "H200" in name_:
        line(f"{tag}: theoretical rows at the datasheet clock", verdict(bool(sheet)),
             f"{len(sheet)} rows")
    for n in b.get("notes", []):
        if "sustained" in n and "under burst" in n:
            print(f"         note: {n}")


def check_suite(st):
    b = load("suite.json")
    if b is None:
        line("suite", "MISSING", "no suite.json")
        return
    path = find("suite.csv")
    rows = list(csv.DictReader(open(path))) if os.path.exists(path) else []
    gaps = [(float(r["gap"]), r["name"]) for r in rows if r.get("gap")]
    fast = [g for g in gaps if g[0] < 1.0]
    line("suite: no kernel faster than its bound", verdict(gaps and not fast),
         f"{len(gaps)} kernels with a bound, {len(fast)} faster"
         + (f"; fastest gap {min(fast)[0]:.3f} ({min(fast)[1][:60]})" if fast else ""))
    if "suite" in st:
        rc, s = st["suite"]
        line("suite all under 5 minutes", verdict(rc == 0 and s < 300), f"{s:.0f} s, rc={rc}")
    skipped = b.get("skipped", [])
    unexplained = [s for s in skipped if not s.get("reason", "").strip()]
    line("suite: every skip with its reason", verdict(not unexplained),
         f"{len(skipped)} skipped, {len(unexplained)} without a reason")
    reasons = {}
    for s in skipped:
        reasons[s["reason"]] = reasons.get(s["reason"], 0) + 1
    for r, n in sorted(reasons.items(), key=lambda x: -x[1])[:12]:
        print(f"         {n:4} x {r}")


def check_known(st):
    expected = load("known-expected.json")
    if expected is None:
        line("profile: known work", "MISSING", "no known-expected.json")
        return
    for case, want in expected.items():
        if f"known-{case}" not in st:
            continue
        b = load(f"known-{case}.json")
        if b is None:
            line(f"profile {case}", "MISSING", f"rc={st.get('known-' + case, ('-',))[0]}")
            continue
        ks = b.get("kernels", [])
        names = sorted({k["name"][:50] for k in ks})
        if "flops" in want:
            per = {}
            for k in ks:
                for dp, v in (k.get("flops") or {}).items():
                    per[dp] = per.get(dp, 0.0) + v
            got = sum(per.values())
            rel = got / want["flops"] - 1
            split = ", ".join(f"{dp} {v:.4g}" for dp, v in per.items() if v)
            line(f"profile {case}: F = 2MNK within 1%", verdict(abs(rel) <= 0.01),
                 f"{got:.6g} of {want['flops']:.6g} ({rel:+.2%}); {split}; {len(ks)} kernels")
        else:
            got = sum((k.get("bytes") or {}).get("hbm", 0.0) for k in ks)
            rel = got / want["hbm_bytes"] - 1
            line(f"profile {case}: HBM bytes ~ 2N", verdict(abs(rel) <= 0.05),
                 f"{got:.6g} of {want['hbm_bytes']:.6g} ({rel:+.2%}); {len(ks)} kernels")
        print(f"         kernels: {'; '.join(names)[:200]}")
        passes = replay_passes(find(os.path.join("logs", f"known-{case}.err")))
        if passes is not None:
            print("         ncu replay passes per kernel: "
                  f"{', '.join(map(str, passes)) or 'not logged'}")
    plain = st.get("known-plain")
    prof = [st[k][1] for k in st if k.startswith("known-") and k != "known-plain"]
    if plain and prof:
        print(f"         known_work.py: {plain[1]:.1f} s plain; under ncu, one case at a time: "
              + ", ".join(f"{s:.1f} s" for s in prof))


def check_torch(st):
    for dt in ["bf16", "fp32"]:
        plain, prof = st.get(f"torch-plain-{dt}"), st.get(f"profile-{dt}")
        if plain and prof:
            print(f"         training step {dt}: {plain[1]:.1f} s plain, {prof[1]:.1f} s under "
                  f"roofline profile ({prof[1] / plain[1]:.1f}x), rc={prof[0]}")
        passes = replay_passes(find(os.path.join("torch", f"profile-{dt}.err")))
        if passes:
            print(f"         {dt} step: {len(passes)} kernels profiled, replay passes "
                  f"{min(passes)} to {max(passes)}")
        path = find(os.path.join("torch", f"check-{dt}.txt"))
        if os.path.exists(path):
            print(open(path).read().rstrip())
        else:
            line(f"torch {dt}", "MISSING", "no check file")


def check_trace(st):
    """The torch.profiler trace of call2, imported against the call's machine: launches and
    summed kernel time against the trace's own kernel events, and which ceilings it was read
    against."""
    path = find("trace-shapes-bf16.json.gz")
    b = load("trace-bf16.json")
    if b is None:
        line("trace: imported against the machine", "MISSING",
             f"rc={st.get('trace-import', ('-',))[0]}")
        return
    import gzip
    with gzip.open(path, "rt") as f:
        events = json.load(f).get("traceEvents", [])
    kernels = [e for e in events if e.get("cat") == "kernel"]
    t = sum(e.get("dur", 0) for e in kernels) * 1e-6
    launches = sum(k["launches"] for k in b["kernels"])
    total = sum(k["time"]["total_s"] for k in b["kernels"])
    rel = abs(total - t) / t if t else float("nan")
    line("trace: every launch and second kept", verdict(launches == len(kernels) and rel < 1e-6),
         f"{launches} launches, {total:.6f} s (trace {len(kernels)}, {t:.6f} s; rel. diff {rel:.1e})")
    machines = b.get("machines", [])
    line("trace: read against the call's machine", verdict(bool(machines)),
         f"{len(machines)} machine(s); devices {[d.get('name') for d in b.get('devices', [])]}")
    with_f = sum(1 for k in b["kernels"] if k.get("complexity"))
    print(f"         {with_f} of {len(b['kernels'])} kernel entries with analytical F and B")


# Which parts a call ran, by the steps it logged.
PARTS = {
    "env": ["torch-rates"],
    "machine": ["machine"],
    "known": [],
    "trace": ["trace-shapes", "trace-import"],
    "suite": ["suite"],
    "torch": ["torch"],
}


def main():
    print(f"output directory {OUT}")
    versions = find("versions.txt")
    if os.path.exists(versions):
        print(open(versions).read().rstrip())
    dry = os.path.exists(find("steps.txt")) and "DRY RUN" in open(find("steps.txt")).read()
    if dry:
        print("DRY RUN: stand-ins ran in place of python3, ncu, nvcc and nvidia-smi; nothing below is a measurement")
    st = steps()
    failed = [f"{k} (rc={v[0]})" for k, v in st.items() if v[0] != 0]
    if failed:
        print("failed steps:", ", ".join(failed))
    ran = lambda part: any(s in st for s in PARTS[part]) or (
        part == "known" and any(k.startswith("known-") for k in st))
    sections = [
        ("machine", "# machine", lambda: (check_machine(st), print("\n# machine, plan points"),
                                          check_issue33("machine.json", quick=False))),
        ("known", "# profile, known work", lambda: check_known(st)),
        ("trace", "# torch.profiler trace", lambda: check_trace(st)),
        ("suite", "# suite", lambda: check_suite(st)),
        ("torch", "# PyTorch step", lambda: check_torch(st)),
    ]
    for part, title, run in sections:
        print("\n" + title)
        if ran(part):
            run()
        else:
            print("not run in this call")
    shots = glob.glob(os.path.join(find("shots"), "*.png"))
    if shots:
        print(f"\n{len(shots)} screenshots")


if __name__ == "__main__":
    main()
