//! The machine view: every ceiling of the bundle with its method, the ones in use, the ratio of
//! empirical to theoretical, and what-if fields that edit the ceilings in use.

use leptos::prelude::*;

use roofline_model::bundle::{Datapath, MemoryLevel, Method};
use roofline_model::ceilings::{Ceiling, Ceilings};
use roofline_model::geometry::si::{format_plain_with_digits, format_si};

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

/// One ceilings-table row: label, value, method, implementation, empirical / theoretical.
type CeilingRow = (String, String, Method, String, Option<f64>);

/// The table's rows for one level or datapath: each entry `(value, method, implementation,
/// same-run reference)` in `unit`, an empirical one with its ratio to the highest theoretical
/// entry of the same level or datapath.
fn ceiling_rows<'a>(
    label: &str,
    unit: &str,
    entries: impl Iterator<Item = (f64, Method, Option<&'a str>, bool)>,
) -> Vec<CeilingRow> {
    let entries: Vec<_> = entries.collect();
    let theo = entries
        .iter()
        .filter(|e| e.1 == Method::Theoretical)
        .map(|e| e.0)
        .reduce(f64::max);
    entries
        .into_iter()
        .map(|(value, method, implementation, reference)| {
            (
                label.to_string(),
                format_si(value, unit),
                method,
                implementation_label(implementation, reference),
                theo.filter(|_| method == Method::Empirical)
                    .map(|t| value / t),
            )
        })
        .collect()
}

/// A ceiling's implementation as the machine table shows it, marking same-run references.
fn implementation_label(implementation: Option<&str>, reference: bool) -> String {
    let text = implementation.unwrap_or_default();
    if reference {
        format!("{text} (reference)")
    } else {
        text.to_owned()
    }
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
        let mut rows = Vec::new();
        for level in MemoryLevel::ALL {
            let entries = m
                .bandwidth
                .iter()
                .filter(|b| b.level == level)
                .map(|e| (e.value, e.method, e.implementation.as_deref(), e.reference));
            rows.extend(ceiling_rows(level.label(), "B/s", entries));
        }
        for d in Datapath::ALL {
            let entries = m
                .compute
                .iter()
                .filter(|c| c.datapath == d)
                .map(|e| (e.value, e.method, e.implementation.as_deref(), e.reference));
            rows.extend(ceiling_rows(d.label(), "FLOP/s", entries));
        }
        if let Some(lo) = &m.launch_overhead {
            rows.push((
                "Launch overhead".into(),
                format_si(lo.value_s, "s"),
                lo.method,
                lo.implementation.clone().unwrap_or_default(),
                None,
            ));
        }
        rows
    };
    view! {
        <section class="machine">
            <h2>"Ceilings in the bundle"</h2>
            <table id="ceilings">
                <thead>
                    <tr><th class="name">"Ceiling"</th><th>"Value"</th><th>"Method"</th><th class="name">"Implementation"</th><th>"Empirical / theoretical"</th></tr>
                </thead>
                <tbody>
                    {move || {
                        rows()
                            .into_iter()
                            .map(|(name, value, method, imp, ratio)| {
                                view! {
                                    <tr>
                                        <td class="name">{name}</td>
                                        <td>{value}</td>
                                        <td>{match method { Method::Empirical => "empirical", Method::Theoretical => "theoretical" }}</td>
                                        <td class="name">{imp}</td>
                                        <td>{ratio.map_or("–".into(), |r| format!("{r:.3}"))}</td>
                                    </tr>
                                }
                            })
                            .collect_view()
                    }}
                </tbody>
            </table>
            <h2>"What if: ceilings in use"</h2>
            <p class="hint">"Type a value (in the unit shown) to see both rooflines and the table recomputed against it."</p>
            <table id="what-if">
                <tbody>
                    {move || {
                        let c = ceilings.get().unwrap_or_default();
                        let bw = c.levels().map(|(l, v)| {
                            let set = move |x: f64| {
                                edits.update(|e| {
                                    e.bandwidth.retain(|(k, _)| *k != l);
                                    e.bandwidth.push((l, x));
                                });
                            };
                            view! { <WhatIfRow label=l.label().to_string() id=format!("edit-{}", l.key()) value=Some(v.value) scale=1e9 unit="GB/s" set=set /> }
                        });
                        let cp = c.datapaths().map(|(d, v)| {
                            let set = move |x: f64| {
                                edits.update(|e| {
                                    e.compute.retain(|(k, _)| *k != d);
                                    e.compute.push((d, x));
                                });
                            };
                            view! { <WhatIfRow label=d.label().to_string() id=format!("edit-{}", d.key()) value=Some(v.value) scale=1e12 unit="TFLOP/s" set=set /> }
                        });
                        let set_launch = move |x: f64| edits.update(|e| e.launch_s = Some(x));
                        let launch = view! { <WhatIfRow label="Launch overhead".to_string() id="edit-launch".to_string() value=c.launch_overhead_s scale=1e-6 unit="µs" set=set_launch /> };
                        (bw.collect_view(), cp.collect_view(), launch)
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
    set: impl Fn(f64) + 'static,
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
