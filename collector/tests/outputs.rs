//! What the `roofline` binary writes and says for awkward but valid bundles and for files that are
//! not bundles: no `inf` or `-0.0` in any output, CSV cells safe to open in a spreadsheet, a
//! terminal table free of control characters, and messages that say what the file is.

use std::path::{Path, PathBuf};
use std::process::Output;

use roofline_model::Bundle;
use roofline_model::bundle::{DataSource, Kernel};

mod common;
use common::roofline;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/bundles/v100-deepcam-example.json")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The stock sample with extra kernels, written to `dir`.
fn sample_with(dir: &Path, extra: Vec<Kernel>) -> PathBuf {
    let mut b: Bundle =
        roofline_model::parse_bundle(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    b.kernels.extend(extra);
    let p = dir.join("sample.json");
    std::fs::write(&p, roofline_model::to_json(&b).unwrap()).unwrap();
    p
}

#[test]
fn figures_that_overflow_never_reach_an_output_as_inf() {
    let dir = tempfile::tempdir().unwrap();
    let mut k = Kernel::new("void huge<1>(float*)", 1e-300, DataSource::Import);
    k.flops.fp32 = Some(1e308);
    k.bytes.l1 = Some(1.0);
    k.bytes.l2 = Some(1.0);
    k.bytes.hbm = Some(1.0);
    let b = sample_with(dir.path(), vec![k]);
    for chart in ["hierarchical", "time"] {
        let svg = dir.path().join(format!("{chart}.svg"));
        let o = roofline(&["plot", arg(&b), "--chart", chart, "-o", arg(&svg)]);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(
            !text.contains("inf") && !text.contains("NaN"),
            "{chart}: inf in the SVG"
        );
        assert!(
            text.contains("1 kernel out of range, kept off the charts"),
            "{chart}"
        );
    }
    for format in ["csv", "json", "table"] {
        let o = roofline(&["info", arg(&b), "--format", format]);
        assert!(o.status.success(), "{}", stderr(&o));
        let out = stdout(&o);
        assert!(
            !out.contains("inf") && !out.contains("NaN"),
            "{format}: {out}"
        );
    }
}

#[test]
fn no_negative_zero_in_the_stock_samples_outputs() {
    for format in ["csv", "json", "table"] {
        let o = roofline(&["info", arg(&fixture()), "--format", format]);
        assert!(o.status.success());
        assert!(!stdout(&o).contains("-0"), "{format}: {}", stdout(&o));
    }
}

#[test]
fn csv_cells_are_safe_to_open_and_the_table_is_safe_to_print() {
    let dir = tempfile::tempdir().unwrap();
    let k = |name: &str| {
        let mut k = Kernel::new(name, 1e-3, DataSource::Import);
        k.flops.fp32 = Some(1e9);
        k.bytes.hbm = Some(1e8);
        k
    };
    let b = sample_with(
        dir.path(),
        vec![
            k("=HYPERLINK(\"http://x\",\"y\")"),
            k("evil\u{1b}]0;title\u{7}\u{1b}[31mred"),
        ],
    );
    let o = roofline(&["info", arg(&b), "--format", "csv"]);
    let csv = stdout(&o);
    assert!(
        csv.contains("\n\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\","),
        "{csv}"
    );
    assert!(!csv.contains("\n=") && !csv.contains(",="), "{csv}");
    let o = roofline(&["info", arg(&b)]);
    let table = stdout(&o);
    assert!(
        !table.chars().any(|c| c.is_control() && c != '\n'),
        "{table:?}"
    );
}

#[test]
fn the_sweep_chart_without_a_sweep_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let o = roofline(&[
        "plot",
        arg(&fixture()),
        "--chart",
        "sweep",
        "-o",
        arg(&dir.path().join("s.svg")),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o)
            .contains("this bundle has a machine characterization for device 0 without a sweep"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn encodings_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture()).unwrap();
    let bom = dir.path().join("bom.json");
    std::fs::write(&bom, format!("\u{feff}{text}")).unwrap();
    let o = roofline(&["validate", arg(&bom)]);
    assert!(o.status.success(), "{}", stderr(&o));

    let utf16 = dir.path().join("utf16.json");
    let bytes: Vec<u8> = format!("\u{feff}{text}")
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    std::fs::write(&utf16, bytes).unwrap();
    let o = roofline(&["validate", arg(&utf16)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(
            "UTF-16 byte-order mark FF FE at byte offset 0; the file seems to be UTF-16 text"
        ),
        "{}",
        stderr(&o)
    );

    let latin1 = dir.path().join("latin1.json");
    let mut bytes = text.clone().into_bytes();
    let at = text.find("Tesla").unwrap();
    bytes[at] = 0xe9;
    std::fs::write(&latin1, bytes).unwrap();
    let o = roofline(&["validate", arg(&latin1)]);
    assert!(
        stderr(&o).contains(&format!(
            "byte 0xE9 at byte offset {at}; the file seems to be text in another encoding"
        )),
        "{}",
        stderr(&o)
    );

    let nan = dir.path().join("nan.json");
    std::fs::write(
        &nan,
        text.replacen("\"launches\": 3,", "\"launches\": nan,", 1),
    )
    .unwrap();
    let o = roofline(&["validate", arg(&nan)]);
    assert!(
        stderr(&o).contains("(nan at `$.kernels[")
            && stderr(&o).contains("].launches` is not a JSON number"),
        "{}",
        stderr(&o)
    );
}
