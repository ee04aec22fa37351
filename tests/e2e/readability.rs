//! The charts of every sample bundle keep their labels apart, at the viewer's size and at the
//! CLI's, so that a person can read them: ceiling labels, the viewer's kernel names and the CLI's
//! rank numbers cover no marker and no other label (the browser tests measure the same with the
//! browser's own text boxes, and keep screenshots to look at).

use roofline_model::chart::{self, ChartOptions, Scene};

fn samples() -> Vec<(String, roofline_model::bundle::Bundle)> {
    let dir = roofline_tests::fixtures().join("bundles");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&path).unwrap();
            out.push((
                path.display().to_string(),
                roofline_model::parse_bundle(&text).unwrap(),
            ));
        }
    }
    assert!(!out.is_empty(), "no sample bundles in {}", dir.display());
    out
}

fn overlapping(scene: &Scene) -> Vec<(String, String)> {
    let mut bad = Vec::new();
    for (i, a) in scene.labels.iter().enumerate() {
        for b in &scene.labels[i + 1..] {
            if a.overlaps(b) {
                bad.push((a.text.clone(), b.text.clone()));
            }
        }
    }
    bad
}

#[test]
fn sample_charts_keep_their_labels_apart() {
    for (name, bundle) in samples() {
        for options in [ChartOptions::default(), ChartOptions::browser()] {
            let scenes = [
                ("hierarchical", chart::hierarchical(&bundle, &options)),
                ("time-based", chart::time_based(&bundle, &options)),
            ];
            for (kind, scene) in scenes {
                let scene = scene.unwrap();
                assert!(!scene.labels.is_empty(), "{name} {kind}: no labels");
                let bad = overlapping(&scene);
                assert!(
                    bad.is_empty(),
                    "{name} {kind} ({}x{}): {bad:?}",
                    options.width,
                    options.height
                );
            }
        }
    }
}

/// The viewer's default number of kernel names, and a larger one.
const NAMES: [usize; 2] = [8, 20];

#[test]
fn no_label_covers_a_marker_or_another_label() {
    use roofline_model::chart::{kernel_labels, marker_box, rank_labels};
    let mut placed = 0;
    for (name, bundle) in samples() {
        for options in [ChartOptions::default(), ChartOptions::browser()] {
            for (kind, scene) in [
                ("hierarchical", chart::hierarchical(&bundle, &options)),
                ("time-based", chart::time_based(&bundle, &options)),
            ] {
                let scene = scene.unwrap();
                let size = format!("{}x{}", options.width, options.height);
                let area = scene.viewport.area;
                // Ceiling labels: inside the plot, clear of every marker.
                for c in &scene.labels {
                    assert!(
                        c.corners().iter().all(|p| area.contains(p.0, p.1)),
                        "{name} {kind} {size}: ceiling label {} leaves the plot",
                        c.text
                    );
                    for m in &scene.markers {
                        assert!(
                            !c.overlaps_box(marker_box(m.at, m.radius)),
                            "{name} {kind} {size}: ceiling label {} on a marker of {}",
                            c.text,
                            scene.kernels[m.kernel].name
                        );
                    }
                }
                // The viewer's names (its default number and more), and the CLI's ranks.
                let sets = NAMES
                    .map(|n| (format!("top {n}"), kernel_labels(&scene, n)))
                    .into_iter()
                    .chain([("ranks".to_string(), rank_labels(&scene))]);
                for (n, labels) in sets {
                    assert!(!labels.is_empty(), "{name} {kind} {size}: no kernel labels");
                    placed += labels.len();
                    for (i, l) in labels.iter().enumerate() {
                        for m in &scene.markers {
                            assert!(
                                !l.overlaps_box(marker_box(m.at, m.radius)),
                                "{name} {kind} {size} {n}: {} covers a marker",
                                l.text
                            );
                        }
                        for o in scene.labels.iter().chain(&labels[i + 1..]) {
                            assert!(
                                !l.overlaps(o),
                                "{name} {kind} {size} {n}: {} on {}",
                                l.text,
                                o.text
                            );
                        }
                    }
                }
            }
        }
    }
    assert!(placed > 100, "{placed} kernel names placed");
}
