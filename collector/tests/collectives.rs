//! `roofline import` of several ranks' traces through the binary, and what `info`, `plot` and
//! `info --baseline` show of their collectives. The fixtures are the real traces of
//! `tests/fixtures/traces/` (PARAM's 8-rank DLRM step, HTA's A100 DDP trace); the figures
//! themselves are checked against the traces in `tests/e2e/collectives.rs`.

use std::path::{Path, PathBuf};

mod common;
use common::roofline;

fn traces() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/traces")
}

fn dlrm() -> PathBuf {
    traces().join("param-dlrm-v100-8ranks")
}

fn ok(o: &std::process::Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A CSV line's cells (RFC 4180: quoted cells may hold commas and doubled quotes).
fn cells(line: &str) -> Vec<String> {
    let (mut out, mut cell, mut quoted, mut chars) =
        (Vec::new(), String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cell)),
            (c, _) => cell.push(c),
        }
    }
    out.push(cell);
    out
}

fn bundle(p: &Path) -> roofline_model::Bundle {
    roofline_model::parse_bundle(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// The PARAM DLRM ranks imported one bundle each (`-o DIR/`) under `dir/each/`, their paths
/// sorted.
fn import_each(dir: &Path) -> Vec<PathBuf> {
    let each = dir.join("each/");
    ok(&roofline(&[
        "import",
        dlrm().to_str().unwrap(),
        "-o",
        each.to_str().unwrap(),
    ]));
    let mut names: Vec<PathBuf> = std::fs::read_dir(&each)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    names
}

/// A directory of 8 ranks' traces becomes one bundle with a device per rank, every kernel on
/// its rank's device; `-o DIR/` writes one bundle per trace instead.
#[test]
fn ranks_become_one_run_or_one_bundle_each() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    let o = roofline(&[
        "import",
        dlrm().to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("wrote "), "{err}");
    let b = bundle(&out);
    let ids: Vec<&str> = b.devices.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "rank0", "rank1", "rank2", "rank3", "rank4", "rank5", "rank6", "rank7"
        ]
    );
    assert_eq!(b.machines.len(), 8);
    assert!(b.machines.iter().all(|m| !m.links.is_empty()));
    // 245 + 310 + 246 + 315 + 251 + 245 + 246 + 246 launches (PROVENANCE.md's table).
    assert_eq!(b.kernels.len(), 2104);
    for k in &b.kernels {
        let rank = &k.tags["rank"];
        assert_eq!(k.device.as_deref(), Some(format!("rank{rank}").as_str()));
    }
    assert_eq!(
        b.kernels.iter().filter(|k| k.collective.is_some()).count(),
        64
    );
    assert!(
        b.notes[0].starts_with("one run of 8 ranks"),
        "{:?}",
        b.notes
    );
    // No scratch left beside the output.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, [std::ffi::OsString::from("run.json")]);

    let names = import_each(dir.path());
    assert_eq!(names.len(), 8);
    let first = names[0].file_name().unwrap().to_str().unwrap();
    assert!(first.starts_with("worker0_step_12") && first.ends_with(".pt.trace.json"));
    let one = bundle(&names[3]);
    assert_eq!(one.devices.len(), 1);
    assert_eq!(one.kernels.len(), 315);
}

/// `info` lists the collectives against their link, the exposed communication per step and the
/// skew across ranks; the CSV's comm columns come after the stable ones; `plot --chart comm`
/// draws the NVLink roof.
#[test]
fn info_and_plot_show_the_collectives() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    ok(&roofline(&[
        "import",
        dlrm().to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]));
    let table = ok(&roofline(&["info", out.to_str().unwrap(), "--top", "3"]));
    assert!(table.contains("\ncollectives: 64 launches"), "{table}");
    assert!(table.contains("exposed communication per step"), "{table}");
    assert!(
        table.contains("collectives across ranks, matched by their place"),
        "{table}"
    );
    // The first all-to-all's skew: rank 7 started 7.62 ms after rank 1.
    assert!(
        table
            .lines()
            .any(|l| l.contains("all-to-all") && l.contains("7.62 ms") && l.contains(" 7 ")),
        "{table}"
    );
    let csv = ok(&roofline(&[
        "info",
        out.to_str().unwrap(),
        "--format",
        "csv",
    ]));
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let at = |c: &str| header.iter().position(|h| *h == c).unwrap();
    assert!(at("comm_collective") > at("bytes_per_call"));
    let row = csv
        .lines()
        .map(cells)
        .find(|c| c[0].starts_with("ncclKernel_AllReduce"))
        .unwrap();
    let cells = row;
    assert_eq!(cells.len(), header.len());
    assert_eq!(cells[at("comm_collective")], "all_reduce");
    assert_eq!(cells[at("comm_link")], "nvlink");
    assert_eq!(cells[at("binding_ceiling")], "nvlink");
    assert_eq!(cells[at("comm_group_size")], "8");
    assert_eq!(cells[at("comm_link_byte_per_s")], "150000000000.0");
    let json = ok(&roofline(&[
        "info",
        out.to_str().unwrap(),
        "--format",
        "json",
    ]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["communication"]["steps"].as_array().unwrap().len(), 8);
    assert_eq!(
        v["communication"]["synchronised"].as_array().unwrap().len(),
        8
    );
    let svg_path = dir.path().join("comm.svg");
    ok(&roofline(&[
        "plot",
        out.to_str().unwrap(),
        "--chart",
        "comm",
        "-o",
        svg_path.to_str().unwrap(),
    ]));
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    assert!(svg.contains(r#"data-role="Link(Nvlink)""#), "{svg}");
    assert!(svg.contains("NVLink 150 GB/s (derived)"), "{svg}");
    assert!(svg.contains(r#"data-kind="all_reduce""#), "{svg}");
}

/// `--system` names a DGX: its network bounds the collectives of a group spanning nodes, and its
/// GPUs per node place the ranks; a system the catalogue lacks is refused naming those it has.
#[test]
fn a_system_gives_the_network_and_the_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    let a = traces().join("sampled-rank-0-shapes.json.gz");
    let b = traces().join("sampled-rank-1-shapes.json.gz");
    ok(&roofline(&[
        "import",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--system",
        "dgx-a100",
        "-o",
        out.to_str().unwrap(),
    ]));
    let run = bundle(&out);
    let links = &run.machines[0].links;
    let network = links
        .iter()
        .find(|l| l.link == roofline_model::bundle::LinkKind::Network)
        .unwrap();
    // 200 Gb/s HDR InfiniBand per GPU, one direction: 25 GB/s.
    assert_eq!(network.value, 25e9);
    let table = ok(&roofline(&["info", out.to_str().unwrap()]));
    assert!(
        table
            .lines()
            .any(|l| l.contains("all-to-all") && l.contains("network")),
        "{table}"
    );
    assert!(table.contains("where the ranks part"), "{table}");
    let o = roofline(&[
        "import",
        a.to_str().unwrap(),
        "--system",
        "dgx-z9",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--system dgx-z9") && err.contains("nvidia-dgx-h100"),
        "{err}"
    );
}

/// Two traces of one rank are refused, as is `--counters` with several traces; a bad count is
/// refused by its option.
#[test]
fn several_traces_are_refused_when_they_cannot_be_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    let rank0 = traces().join("sampled-rank-0-shapes.json.gz");
    let copy = dir.path().join("again.json.gz");
    std::fs::copy(&rank0, &copy).unwrap();
    let o = roofline(&[
        "import",
        rank0.to_str().unwrap(),
        copy.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("are both rank 0"), "{err}");
    assert!(!out.exists());
    let o = roofline(&[
        "import",
        rank0.to_str().unwrap(),
        copy.to_str().unwrap(),
        "--counters",
        rank0.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let o = roofline(&[
        "import",
        rank0.to_str().unwrap(),
        "--group-size",
        "0",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--group-size \"0\": expected a whole number")
    );
}

/// `info --baseline` of two ranks compares their collectives' bus bandwidth and share of the
/// link; the CSV's comm group comes after the stable columns.
#[test]
fn compare_shows_the_collectives_before_and_after() {
    let dir = tempfile::tempdir().unwrap();
    let names = import_each(dir.path());
    let (r0, r7) = (names[0].to_str().unwrap(), names[7].to_str().unwrap());
    let table = ok(&roofline(&[
        "info",
        r0,
        "--baseline",
        r7,
        "--group-by",
        "kernel",
    ]));
    assert!(
        table.contains("collectives: bus bandwidth (nccl-tests)"),
        "{table}"
    );
    assert!(
        table
            .lines()
            .any(|l| l.contains("all-reduce") && l.contains("NVLink")),
        "{table}"
    );
    let csv = ok(&roofline(&[
        "info",
        r0,
        "--baseline",
        r7,
        "--group-by",
        "kernel",
        "--format",
        "csv",
    ]));
    let header = csv.lines().next().unwrap();
    assert!(
        header.ends_with(
            ",baseline_ceiling,ceiling,baseline_comm_busbw_byte_per_s,comm_busbw_byte_per_s,baseline_comm_link_share,comm_link_share,comm_link"
        ),
        "{header}"
    );
    assert!(
        csv.lines()
            .map(cells)
            .any(|c| c[0].starts_with("ncclKernel_AllReduce") && c.last().unwrap() == "nvlink"),
        "{csv}"
    );
}
