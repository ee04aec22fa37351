//! The page's main area: the chart of the view chosen (its [`Scene`] and compare [`Overlay`]
//! computed by the model from the state, once per change, in [`scene_memo`]), or the machine
//! view with its sweep; and the comparison's summary line above it.

use leptos::prelude::*;
use std::borrow::Cow;

use roofline_model::chart::{self, Analysed, ChartOptions, Scene, kernel_labels};
use roofline_model::compare::{Overlay, compare_scene, compare_scene_paired};
use roofline_model::view::View;

use crate::chart_view::ChartView;
use crate::machine_view::MachineView;
use crate::perf;
use crate::state::AppState;

/// What the chart area says before any bundle is open.
const NO_BUNDLE: &str = "open a bundle: a file, a sample, or ?bundle=URL";

/// A chart ready to draw, with its comparison when a baseline is chosen; or why there is none.
pub type Drawn = Result<(Scene, Option<Overlay>), String>;

/// The chart of the view chosen: the current run's kernels (filtered, or the selected one
/// isolated) against the ceilings in use, with arrows from the baseline's points when one is
/// chosen. Reads the analyses and the comparison, never recomputes them.
pub fn scene_memo(st: AppState) -> Memo<Drawn> {
    Memo::new(move |_| {
        // The analysis first (memos are lazy), so that the scene's measure is the scene's alone.
        st.analysed.with(|_| ());
        st.baseline_analysed.with(|_| ());
        st.comparison.with(|_| ());
        perf::span("roofline:scene", || -> Drawn {
            let needle = st.filter.get().to_lowercase();
            let isolated = st.isolate.get().then(|| st.selected.get()).flatten();
            let hidden = st.hidden_paths.get();
            let datapaths = st.ceilings.get().map(|c| {
                c.datapaths()
                    .map(|(d, _)| d)
                    .filter(|d| !hidden.contains(d))
                    .collect()
            });
            let options = ChartOptions {
                top_kernels: st.top.get(),
                levels: st.levels.get(),
                datapaths,
                domain: st.domain.get(),
                device: st.device.get(),
                ..ChartOptions::browser()
            };
            let draw = match st.view.get() {
                View::Hierarchical => chart::hierarchical_of,
                View::Time | View::Machine => chart::time_based_of,
            };
            st.analysed.with(|a| {
                let a = a.as_ref().ok_or(NO_BUNDLE)?;
                let shown = shown_kernels(a, isolated.as_deref(), &needle);
                st.baseline_analysed.with(|b| match b {
                    Some(b) => {
                        let base = shown_kernels(b, isolated.as_deref(), &needle);
                        // Both runs whole: the table's matching serves the chart too.
                        let whole = matches!((&shown, &base), (Cow::Borrowed(_), Cow::Borrowed(_)));
                        let paired = whole.then(|| {
                            st.comparison.with(|c| {
                                c.as_ref().map(|c| {
                                    compare_scene_paired(&shown, &base, &c.pairs, draw, &options)
                                })
                            })
                        });
                        let drawn = paired
                            .flatten()
                            .unwrap_or_else(|| compare_scene(&shown, &base, draw, &options));
                        drawn.map(|(s, o)| (s, Some(o))).map_err(|e| e.to_string())
                    }
                    None => draw(&shown, &options)
                        .map(|s| (s, None))
                        .map_err(|e| e.to_string()),
                })
            })
        })
    })
}

/// The kernels a chart shows: the isolated one, or those whose name contains `needle` (lower
/// case), or all.
fn shown_kernels<'a>(a: &'a Analysed, isolated: Option<&str>, needle: &str) -> Cow<'a, Analysed> {
    if let Some(sel) = isolated {
        Cow::Owned(a.retain(|k| k.name == sel))
    } else if !needle.is_empty() {
        Cow::Owned(a.retain(|k| k.name.to_lowercase().contains(needle)))
    } else {
        Cow::Borrowed(a)
    }
}

/// The chart of `scene` with its largest kernels named. With nothing open yet (or a bundle still
/// loading) it holds a hint, not an error: only a failure gets the `.error` alert.
#[component]
pub fn ChartArea(
    /// The chart to draw ([`scene_memo`]).
    scene: Memo<Drawn>,
) -> impl IntoView {
    let st = AppState::get();
    move || {
        if st.bundles.with(Vec::is_empty) {
            return (!st.loading.get())
                .then(|| view! { <p class="empty-state">{NO_BUNDLE}</p> })
                .into_any();
        }
        match scene.get() {
            Ok((s, o)) => {
                let labels = kernel_labels(&s, st.label_n.get());
                let (selected, domain) = (st.selected, st.domain);
                match o {
                    Some(o) => view! { <ChartView scene=s selected=selected domain=domain overlay=o labels=labels /> }.into_any(),
                    None => view! { <ChartView scene=s selected=selected domain=domain labels=labels /> }.into_any(),
                }
            }
            Err(e) => view! { <p class="error" role="alert">{e}</p> }.into_any(),
        }
    }
}

/// The machine view (its ceilings, the what-if edits and its sweep) or the chart, as the view
/// chosen says.
#[component]
pub fn MainArea(
    /// The chart of the hierarchical and time-based views ([`scene_memo`]).
    scene: Memo<Drawn>,
) -> impl IntoView {
    let st = AppState::get();
    move || {
        if st.view.get() != View::Machine {
            return view! { <ChartArea scene=scene /> }.into_any();
        }
        let sweep = st.bundles.with(|all| {
            all.get(st.current.get()).map(|l| {
                let o = ChartOptions {
                    domain: st.domain.get(),
                    ..ChartOptions::browser()
                };
                chart::sweep(&l.bundle, &o)
            })
        });
        view! {
            <MachineView ceilings=st.ceilings bundles=st.bundles current=st.current edits=st.edits device=st.device />
            {match sweep {
                Some(Ok(s)) => view! { <ChartView scene=s selected=st.selected domain=st.domain /> }.into_any(),
                _ => view! { <p class="hint" id="no-sweep">"No ERT-style sweep in this bundle: `roofline machine` records one."</p> }.into_any(),
            }}
        }
        .into_any()
    }
}

/// The comparison's summary line, when a baseline is chosen.
#[component]
pub fn CompareSummary() -> impl IntoView {
    let st = AppState::get();
    move || {
        st.comparison.with(|c| {
            c.as_ref().map(|c| {
                let base = st.bundles.with(|b| {
                    st.baseline
                        .get()
                        .and_then(|i| b.get(i))
                        .map(|l| l.name.clone())
                        .unwrap_or_default()
                });
                let hint = format!(
                    " Arrows run from each {}'s baseline point to its current one; dashed rings: gone; thick rings: new.",
                    c.summary.unit.noun()
                );
                view! {
                    <p class="compare-summary" id="compare-summary">
                        <b>{format!("Against {base}: ")}</b>
                        {c.summary.line()}
                        <span class="hint">{hint}</span>
                    </p>
                }
            })
        })
    }
}
