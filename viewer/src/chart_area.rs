//! The page's main area: the chart of the view chosen (its [`Scene`] and compare [`Overlay`]
//! computed by the model from the state, once per change, in [`scene_memo`]), or the machine
//! view with its sweep; and the comparison's summary above it.

use leptos::prelude::*;
use std::borrow::Cow;

use roofline_model::analysis::Analysed;
use roofline_model::analysis::compare::{Comparison, Summary};
use roofline_model::chart::overlay::{Overlay, compare_scene_paired, compare_scene_with};
use roofline_model::chart::svg::esc;
use roofline_model::chart::view::View;
use roofline_model::chart::{
    self, ChartOptions, Scene, kernel_labels, kernel_labels_note, names_for_width,
};

use crate::chart_view::ChartView;
use crate::machine_view::MachineView;
use crate::perf;
use crate::state::AppState;

/// What the chart area says before any bundle is open.
const NO_BUNDLE: &str = "open a bundle, a torch.profiler trace or Nsight Compute CSV: drop it here, pick a file or a sample, or ?bundle=URL / ?trace=URL";

/// What an embedded chart says when its address names no bundle.
const EMBED_WITHOUT_BUNDLE: &str = "This embedded chart names no bundle: its address needs ?bundle=URL (a bundle served where this page may fetch it).";

/// A chart ready to draw, with its comparison when a baseline is chosen; or why there is none.
pub type Drawn = Result<(Scene, Option<Overlay>), String>;

/// The chart of the view chosen: the current run's kernels (filtered, or the selected one
/// isolated) against the ceilings in use, sized to the page, with arrows from the baseline's
/// points when one is chosen. Reads the analyses and the comparison, never recomputes them.
pub fn scene_memo(st: AppState) -> Memo<Drawn> {
    Memo::new(move |_| {
        // The analysis first (memos are lazy), so that the scene's measure is the scene's alone.
        st.analysed.with(|_| ());
        st.baseline_analysed.with(|_| ());
        st.comparison.with(|_| ());
        perf::span("roofline:scene", || -> Drawn {
            let needle = st.filter.get().to_ascii_lowercase();
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
                ..ChartOptions::browser_sized(width_px(st.width.get()))
            };
            let draw = match st.view.get() {
                View::Hierarchical => chart::hierarchical_of,
                View::Time | View::Machine | View::Comm => chart::time_based_of,
            };
            let manual = st.pairs.get();
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
                        let drawn = paired.flatten().unwrap_or_else(|| {
                            compare_scene_with(&shown, &base, &manual, draw, &options)
                        });
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

/// A whole number of pixels as the model's width.
fn width_px(w: usize) -> f64 {
    // Page widths are far below 2^53.
    #[allow(clippy::cast_precision_loss)]
    let w = w as f64;
    w
}

/// The kernels a chart shows: the isolated one, or those whose name contains `needle` (lower
/// case), or all.
fn shown_kernels<'a>(a: &'a Analysed, isolated: Option<&str>, needle: &str) -> Cow<'a, Analysed> {
    if let Some(sel) = isolated {
        Cow::Owned(a.retain(|k| k.name == sel))
    } else if !needle.is_empty() {
        Cow::Owned(a.retain(|k| k.name.to_ascii_lowercase().contains(needle)))
    } else {
        Cow::Borrowed(a)
    }
}

/// For each kernel of `scene` (by its index in `scene.kernels`), what the comparison says of it:
/// baseline → current with the speed-up, or new or gone, and for an operator the kernels it
/// launched before and after.
fn compared_lines(scene: &Scene, c: &Comparison) -> Vec<Option<String>> {
    // By the kernels' indices (the chart of the whole run); by name when the chart shows a
    // filtered few (their indices are the filtered list's).
    let by_index: Vec<Option<&roofline_model::analysis::compare::CompareRow>> = scene
        .kernels
        .iter()
        .map(|k| {
            c.current_row(k.analysis.index)
                .filter(|r| r.name == k.full_name)
        })
        .collect();
    let rows = if by_index.iter().all(Option::is_some) {
        by_index
    } else {
        c.current_rows(scene.kernels.iter().map(|k| k.full_name.as_str()))
    };
    rows.into_iter()
        .map(|r| {
            let r = r?;
            let mut line = r.transition();
            if let Some(l) = &r.launched {
                line.push_str(". ");
                line.push_str(&l.line());
            }
            Some(line)
        })
        .collect()
}

/// The chart of `scene` with its largest kernels named (fewer on a narrow chart). With nothing
/// open yet (or a bundle still loading) it holds a hint, not an error: only a failure gets the
/// `.error` alert, and then no hint (the alert says what went wrong).
#[component]
pub fn ChartArea(
    /// The chart to draw ([`scene_memo`]).
    scene: Memo<Drawn>,
) -> impl IntoView {
    let st = AppState::get();
    move || {
        if st.bundles.with(Vec::is_empty) {
            if st.loading.get() || st.error.with(Option::is_some) {
                return ().into_any();
            }
            let hint = if st.embed {
                EMBED_WITHOUT_BUNDLE
            } else {
                NO_BUNDLE
            };
            return view! { <p class="empty-state" id="empty-state">{hint}</p> }.into_any();
        }
        match scene.get() {
            Ok((s, o)) => {
                let labels = kernel_labels(&s, names_for_width(st.label_n.get(), s.width));
                let mut notes = s.notes.clone();
                notes.extend(kernel_labels_note(&labels));
                // The bundle's own notes (an import's: what was assumed, what has no rule).
                st.bundles.with(|b| {
                    if let Some(l) = b.get(st.current.get()) {
                        notes.extend_from_slice(&l.bundle.notes);
                    }
                });
                let compared = st
                    .comparison
                    .with(|c| c.as_ref().map(|c| compared_lines(&s, c)))
                    .unwrap_or_default();
                let (selected, domain) = (st.selected, st.domain);
                match o {
                    Some(o) => view! { <ChartView scene=s selected=selected domain=domain overlay=o labels=labels notes=notes compared=compared /> }.into_any(),
                    None => view! { <ChartView scene=s selected=selected domain=domain labels=labels notes=notes /> }.into_any(),
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
        if st.view.get() == View::Comm {
            return view! { <CommArea /> }.into_any();
        }
        if st.view.get() != View::Machine {
            return view! { <ChartArea scene=scene /> }.into_any();
        }
        // The sweep is drawn by the importer (`chart::sweep`), when the bundle has one.
        let raw = st.bundles.with(|all| {
            all.get(st.current.get())
                .filter(|l| l.bundle.machines.iter().any(|m| !m.sweep.is_empty()))
                .map(|l| l.raw.clone())
        });
        let sweep = raw.map(|raw| {
            crate::import::draw_by_importer(
                "sweep",
                raw,
                width_px(st.width.get()),
                None,
                "sweep-view",
            );
        });
        view! {
            <MachineView ceilings=st.ceilings bundles=st.bundles current=st.current edits=st.edits device=st.device />
            {match sweep {
                Some(()) => view! { <div id="sweep-view"><p class="hint">"Drawing the sweep…"</p></div> }.into_any(),
                None => view! { <p class="hint" id="no-sweep">"No ERT-style sweep in this bundle: `roofline machine` records one."</p> }.into_any(),
            }}
        }
        .into_any()
    }
}

/// The communication view: the collectives against their links and the line of exposed
/// communication per step, drawn by the importer ([`crate::import::draw_by_importer`], the
/// model's `chart::communication`) from the bundle's bytes; the skew across ranks is
/// `roofline info`'s.
#[component]
fn CommArea() -> impl IntoView {
    let st = AppState::get();
    move || {
        let raw = st
            .bundles
            .with(|all| all.get(st.current.get()).map(|l| l.raw.clone()));
        let Some(raw) = raw else {
            return view! { <p class="hint">{NO_BUNDLE}</p> }.into_any();
        };
        let (width, device) = (width_px(st.width.get()), st.device.get());
        crate::import::draw_by_importer("comm", raw, width, device, "comm-view");
        view! { <div id="comm-view"><p class="hint">"Drawing the collectives…"</p></div> }
            .into_any()
    }
}

/// The comparison's summary, when a baseline is chosen: the totals and counts, then where the
/// time went by binding ceiling and by datapath (every part: each split adds up to the totals).
#[component]
pub fn CompareSummary() -> impl IntoView {
    let st = AppState::get();
    move || {
        st.comparison.with(|c| {
            c.as_ref().map(|c| {
                let (base, incomplete) = st.bundles.with(|b| {
                    let (cur, old) = (
                        b.get(st.current.get()),
                        st.baseline.get().and_then(|i| b.get(i)),
                    );
                    let words = cur
                        .zip(old)
                        .map(|(c, o)| {
                            roofline_model::analysis::compare::incomplete_words(&c.bundle, &o.bundle)
                        })
                        .unwrap_or_default();
                    (old.map(|l| l.name.clone()).unwrap_or_default(), words)
                });
                let s = &c.summary;
                let mut parts: String = [("by bound", &s.by_bound), ("by datapath", &s.by_datapath)]
                    .into_iter()
                    .map(|(what, groups)| {
                        format!("<li><b>{what}: </b>{}</li>", esc(&Summary::split(groups)))
                    })
                    .collect();
                for w in &incomplete {
                    parts.push_str(&format!("<li class=\"incomplete\">{}</li>", esc(w)));
                }
                let hint = if s.doubtful > 0 {
                    " Doubtful pairs (a name alike, launch counts that disagree) are left apart, marked “?”: pair them by hand from the table."
                } else {
                    " Select a new kernel in the table to pair it by hand."
                };
                view! {
                    <div class="compare-summary" id="compare-summary">
                        <p>
                            <b>{format!("Against {base}: ")}</b>
                            {s.headline()}
                        </p>
                        <ul class="split" inner_html=parts></ul>
                        {(!st.embed).then(|| view! { <p class="hint">{hint}</p> })}
                    </div>
                }
            })
        })
    }
}
