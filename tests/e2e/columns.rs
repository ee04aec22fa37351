//! The columns file holds its bundle exactly: for every fixture bundle, and for the bundles of
//! real traces (operators, complexities, collectives, tags), what `columns::decode` reads is what
//! `parse_bundle` reads from the JSON written with it.

use std::io::Read;

use flate2::read::GzDecoder;
use roofline_import::trace::{self, ImportOptions};
use roofline_model::Bundle;
use roofline_model::bundle::columns::{self, ColumnsRef};
use roofline_model::bundle::{Provenance, stream};
use roofline_tests::fixtures;
use roofline_tests::repeat_trace::Repeater;

/// Encodes `b` naming a columns file, and checks it reads back as its JSON does; its kernels
/// and the columns file's templates.
fn round_trip(what: &str, mut b: Bundle) -> (usize, usize) {
    let named = ColumnsRef {
        file: "x.columns".into(),
        id: "0f1e2d3c".into(),
    };
    let bytes = columns::encode(&b, named.clone()).unwrap();
    b.columns = Some(named);
    let json = roofline_model::to_json(&b).unwrap();
    let from_json = roofline_model::parse_bundle(&json).unwrap();
    let from_columns = roofline_model::parse_bundle_bytes(&bytes).unwrap();
    assert_eq!(from_columns, from_json, "{what}");
    // The JSON written kernel by kernel names the same file.
    let mut w = stream::Writer::begin(Vec::new(), &b).unwrap();
    for k in &b.kernels {
        w.kernel(k).unwrap();
    }
    assert_eq!(
        String::from_utf8(w.finish(&b).unwrap()).unwrap(),
        json,
        "{what}"
    );
    (
        b.kernels.len(),
        columns::Columns::open(&bytes).unwrap().templates().len(),
    )
}

#[test]
fn fixture_bundles_read_back_from_their_columns() {
    let dir = fixtures().join("bundles");
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let b = roofline_model::parse_bundle(&std::fs::read_to_string(&p).unwrap()).unwrap();
            round_trip(&p.display().to_string(), b);
            seen += 1;
        }
    }
    assert!(seen >= 5, "{seen} fixture bundles");
}

#[test]
fn imported_traces_read_back_from_their_columns() {
    for name in [
        "sampled-rank-0-shapes.json.gz",
        "b200-vllm-gpt-oss-tp8-eager.json.gz",
        "a100-ddp-nccl-msgsize.json.gz",
        "mi300x-sglang-qwen3-8b-prefilldecode.json.gz",
    ] {
        let mut text = Vec::new();
        GzDecoder::new(std::fs::File::open(fixtures().join("traces").join(name)).unwrap())
            .read_to_end(&mut text)
            .unwrap();
        let (launches, templates) = round_trip(name, imported(&text));
        assert!(templates <= launches, "{name}");
    }
    // A trace whose steps repeat: its templates do not grow with the launches (what varies
    // from launch to launch is in the records).
    let mut text = Vec::new();
    GzDecoder::new(
        std::fs::File::open(fixtures().join("traces/sampled-rank-0-shapes.json.gz")).unwrap(),
    )
    .read_to_end(&mut text)
    .unwrap();
    let r = Repeater::read(&text[..]).unwrap();
    let mut thrice = Vec::new();
    r.write(3, &mut thrice).unwrap();
    let (one, t1) = round_trip("shapes", imported(&text));
    let (three, t3) = round_trip("shapes ×3", imported(&thrice));
    assert_eq!(three, 3 * one);
    assert!(
        t1 <= t3 && t3 * 10 < t1 * 11,
        "{t1} templates for one copy, {t3} for three"
    );
}

/// The bundle `roofline import` makes of a trace's text (its kernels, devices and notes).
fn imported(text: &[u8]) -> Bundle {
    {
        let t = trace::parse(text).unwrap();
        let i = trace::import::import(&t, &ImportOptions::default()).unwrap();
        let mut b = Bundle::new(Provenance {
            tool: "roofline".into(),
            tool_version: "test".into(),
            ..Provenance::default()
        });
        b.devices = i.devices;
        b.notes = i.notes;
        assert!(
            i.kernels.iter().any(|k| k.operator.is_some()),
            "no operators to carry"
        );
        b.kernels = i.kernels;
        b
    }
}
