//! Snapshots of what users read: `roofline info` in its three formats and both SVG charts, for
//! the V100 example bundle (fixed input, so the snapshots are stable).
//!
//! After an intended change, review and accept with `INSTA_UPDATE=always cargo test -p
//! roofline-tests` (or `cargo insta review`), then commit the `.snap` files.

use roofline_collector::cli::ChartKind;
use roofline_collector::commands::plot;
use roofline_collector::export::info;
use roofline_model::Bundle;

fn v100() -> Bundle {
    roofline_model::parse_bundle(&roofline_tests::fixture_text(
        "bundles/v100-deepcam-example.json",
    ))
    .unwrap()
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap()
}

#[test]
fn info_table() {
    insta::assert_snapshot!("v100_info_table", text(info::to_table(&v100(), None)));
}

#[test]
fn info_csv() {
    let csv = text(info::to_csv(&v100()));
    // The documented core columns come first, in this order; users' scripts depend on it.
    let header = csv.lines().next().unwrap();
    assert!(header.starts_with(
        "name,launches,time_s,flops,flops_tensor,bytes_l1,bytes_l2,bytes_hbm,ai_l1,ai_l2,ai_hbm,flop_per_s,bound,headroom,t_bound_s,region,"
    ));
    assert_eq!(csv.lines().count(), 1 + v100().kernels.len());
    insta::assert_snapshot!("v100_info_csv", csv);
}

#[test]
fn info_json() {
    let json = text(info::to_json(&v100()));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["kernels"].as_array().unwrap().len(), v100().kernels.len());
    insta::assert_snapshot!("v100_info_json", json);
}

#[test]
fn hierarchical_svg() {
    let svg = text(plot(&v100(), ChartKind::Hierarchical, 12, (960.0, 640.0), None).unwrap());
    assert!(svg.contains("HBM 829 GB/s") && svg.contains("Tensor FP16 106 TFLOP/s"));
    assert!(svg.contains("Arithmetic intensity (FLOP/byte)"));
    insta::assert_snapshot!("v100_hierarchical_svg", svg);
}

#[test]
fn time_based_svg() {
    let svg = text(plot(&v100(), ChartKind::Time, 12, (960.0, 640.0), None).unwrap());
    assert!(svg.contains("Bandwidth complexity B (bytes)"));
    // The FP32 balance line is named on the chart (in its short form where the whole text
    // finds no free place).
    assert!(svg.contains(">FP32 18.3 FLOP/B<") || svg.contains(">FP32 balance 18.3 FLOP/B<"));
    insta::assert_snapshot!("v100_time_svg", svg);
}
