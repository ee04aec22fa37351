//! The machine view: every ceiling of the bundle ([`summary::entries`]) with its burst and
//! sustained figures, its source (measured, datasheet, derived, theoretical, estimated) and
//! citation, the ratio of empirical to theoretical, which one the charts use
//! and at which figure, and what-if fields that edit the ceilings in use.

use leptos::prelude::*;

use roofline_model::analysis::ceilings::{Ceiling, CeilingSource, Ceilings, FigureKind};
use roofline_model::analysis::si::{format_plain_with_digits, format_si};
use roofline_model::analysis::summary::{self, Entry, Subject};
use roofline_model::bundle::{Datapath, MemoryLevel, Method};
use roofline_model::chart::svg::esc;

use crate::loading::Loaded;

/// Hand edits of ceilings, applied over the chosen machine.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Edits {
    /// Bandwidth overrides, byte/s.
    pub bandwidth: Vec<(MemoryLevel, f64)>,
    /// Compute overrides, FLOP/s.
    pub compute: Vec<(Datapath, f64)>,
    /// Launch overhead override, seconds.
    pub launch_s: Option<f64>,
}

impl Edits {
    /// The ceilings `c` with these edits applied.
    pub fn apply(&self, mut c: Ceilings) -> Ceilings {
        for (l, v) in &self.bandwidth {
            c.set_bandwidth(
                *l,
                Some(Ceiling {
                    value: *v,
                    method: Method::Empirical,
                }),
            );
        }
        for (d, v) in &self.compute {
            c.set_peak(
                *d,
                Some(Ceiling {
                    value: *v,
                    method: Method::Empirical,
                }),
            );
        }
        if let Some(t) = self.launch_s {
            c.launch_overhead_s = Some(t);
        }
        c
    }

    /// Whether nothing is edited.
    pub fn is_empty(&self) -> bool {
        self.bandwidth.is_empty() && self.compute.is_empty() && self.launch_s.is_none()
    }
}

/// One ceilings-table row: label, value, sustained value, method, implementation (with a "best
/// reach" reason and a same-run reference marked), empirical / theoretical, and which figure the
/// charts use, if they use this entry.
type CeilingRow = (
    String,
    String,
    String,
    &'static str,
    String,
    Option<f64>,
    &'static str,
);

/// One what-if field: label, element id, the value in use, the unit's scale and name, and what
/// sets a value typed there.
type WhatIf = (
    String,
    String,
    Option<f64>,
    f64,
    &'static str,
    Box<dyn Fn(f64)>,
);

/// A table row of one entry of [`summary::entries`].
///
/// An entry is marked in use only while the ceilings the charts use (`in_use`: after "Ceilings
/// from" another bundle and hand edits) still hold its figure.
fn ceiling_row(e: Entry, in_use: &Ceilings) -> CeilingRow {
    let (unit, used) = match e.subject {
        Subject::Level(l) => ("B/s", in_use.bandwidth(l)),
        Subject::Datapath(d) => ("FLOP/s", in_use.peak(d)),
    };
    let figure = match e.in_use {
        Some(FigureKind::Sustained) => e.sustained,
        _ => Some(e.value),
    };
    let mark = if used.is_some() && used == figure {
        e.in_use
    } else {
        None
    };
    let mut imp = e.implementation.or(e.citation).unwrap_or_default();
    if e.reference {
        imp.push_str(" (reference)");
    }
    if let Some(r) = e.best_reach {
        imp = format!("{imp} (best reach: {r})");
    }
    (
        e.subject.label().to_string(),
        format_si(e.value, unit),
        e.sustained.map_or("–".into(), |v| format_si(v, unit)),
        e.source.key(),
        imp,
        e.over_theoretical,
        match mark {
            Some(FigureKind::Sustained) => "sustained",
            Some(FigureKind::Burst) => "burst",
            Some(FigureKind::Theoretical) => "theoretical",
            None => "",
        },
    )
}

/// The machine's ceilings: every entry of the bundle with its method, the one in use, the ratio
/// of empirical to theoretical, and a what-if field.
#[component]
pub fn MachineView(
    /// The ceilings in use.
    ceilings: Memo<Option<Ceilings>>,
    /// The open bundles.
    bundles: RwSignal<Vec<Loaded>>,
    /// The current bundle's index.
    current: RwSignal<usize>,
    /// Hand edits of the ceilings.
    edits: RwSignal<Edits>,
    /// The device shown (`None`: the bundle's first).
    device: RwSignal<Option<String>>,
) -> impl IntoView {
    let rows = move || {
        let all = bundles.get();
        let Some(l) = all.get(current.get()) else {
            return Vec::new();
        };
        let dev = device.get();
        let Some(m) = l.bundle.machine_of(dev.as_deref()) else {
            return Vec::new();
        };
        let c = ceilings.get().unwrap_or_default();
        let mut rows: Vec<CeilingRow> = summary::entries(m)
            .into_iter()
            .map(|e| ceiling_row(e, &c))
            .collect();
        if let Some(lo) = &m.launch_overhead {
            rows.push((
                "Launch overhead".into(),
                format_si(lo.value_s, "s"),
                "–".into(),
                CeilingSource::of(lo.method, lo.source.as_ref()).key(),
                lo.implementation
                    .clone()
                    .or_else(|| lo.source.as_ref().map(|s| s.citation.clone()))
                    .unwrap_or_default(),
                None,
                if c.launch_overhead_s == Some(lo.value_s) {
                    "yes"
                } else {
                    ""
                },
            ));
        }
        rows
    };
    view! {
        <section class="machine">
            <h2>"Ceilings in the bundle"</h2>
            <p id="ceilings-origin" class="hint">{move || ceilings.get().and_then(|c| c.origin_words()).map(|w| format!("Ceilings: {w}."))}</p>
            <table id="ceilings">
                <thead>
                    <tr><th class="name">"Ceiling"</th><th>"Value"</th><th>"Sustained"</th><th>"Source"</th><th class="name">"Implementation or citation"</th><th>"Empirical / theoretical"</th><th>"Charts use"</th></tr>
                </thead>
                <tbody inner_html=move || {
                    // One piece of HTML: the first paint's budget has no room for a view per cell.
                    let mut html = String::new();
                    for (name, value, sustained, source, imp, ratio, used) in rows() {
                        html.push_str(&format!(
                            r#"<tr{}><td class="name">{}</td><td>{value}</td><td>{sustained}</td><td>{source}</td><td class="name">{}</td><td>{}</td><td>{used}</td></tr>"#,
                            if used.is_empty() { "" } else { r#" class="in-use""# },
                            esc(&name),
                            esc(&imp),
                            ratio.map_or("–".into(), |r| format!("{r:.3}")),
                        ));
                    }
                    html
                }></tbody>
            </table>
            <h2>"What if: ceilings in use"</h2>
            <p class="hint">"Type a value (in the unit shown) to see both rooflines and the table recomputed against it."</p>
            <table id="what-if">
                <tbody>
                    {move || {
                        let c = ceilings.get().unwrap_or_default();
                        // One kind of row for every field: levels, datapaths, launch overhead.
                        let mut rows: Vec<WhatIf> = Vec::new();
                        for (l, v) in c.levels() {
                            let set = move |x: f64| {
                                edits.update(|e| {
                                    e.bandwidth.retain(|(k, _)| *k != l);
                                    e.bandwidth.push((l, x));
                                });
                            };
                            rows.push((l.label().to_string(), format!("edit-{}", l.key()), Some(v.value), 1e9, "GB/s", Box::new(set)));
                        }
                        for (d, v) in c.datapaths() {
                            let set = move |x: f64| {
                                edits.update(|e| {
                                    e.compute.retain(|(k, _)| *k != d);
                                    e.compute.push((d, x));
                                });
                            };
                            rows.push((d.label().to_string(), format!("edit-{}", d.key()), Some(v.value), 1e12, "TFLOP/s", Box::new(set)));
                        }
                        let set_launch = move |x: f64| edits.update(|e| e.launch_s = Some(x));
                        rows.push(("Launch overhead".into(), "edit-launch".into(), c.launch_overhead_s, 1e-6, "µs", Box::new(set_launch)));
                        rows.into_iter()
                            .map(|(label, id, value, scale, unit, set)| view! { <WhatIfRow label id value scale unit set /> })
                            .collect_view()
                    }}
                </tbody>
            </table>
            <button id="reset-edits" on:click=move |_| edits.set(Edits::default())>"Undo edits"</button>
        </section>
    }
}

/// One what-if field: the ceiling in use shown in `unit` (its SI value over `scale`); a positive
/// number typed there is passed to `set` in SI units.
#[component]
fn WhatIfRow(
    label: String,
    id: String,
    value: Option<f64>,
    scale: f64,
    unit: &'static str,
    set: Box<dyn Fn(f64)>,
) -> impl IntoView {
    view! {
        <tr>
            <td class="name"><label for=id.clone()>{label}</label></td>
            <td class="value">
                <input
                    id=id
                    type="number"
                    step="any"
                    value=value.map(|v| format_plain_with_digits(v / scale, 6)).unwrap_or_default()
                    on:change=move |ev| {
                        if let Ok(x) = event_target_value(&ev).parse::<f64>() && x > 0.0 {
                            set(x * scale);
                        }
                    }
                />
            </td>
            <td class="unit">{unit}</td>
        </tr>
    }
}
