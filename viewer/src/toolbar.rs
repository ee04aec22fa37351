//! The toolbar under the header: which memory levels and roofs are drawn, how many kernels are
//! drawn and named, the selected kernel alone, zoom reset, and the downloads (SVG, PNG, CSV,
//! "Save bundle", "Save as HTML").

use leptos::prelude::*;

use roofline_model::analysis::Analysed;
use roofline_model::bundle::MemoryLevel;

use crate::export;
use crate::state::AppState;

/// The toolbar.
#[component]
pub fn Toolbar() -> impl IntoView {
    let st = AppState::get();
    let file =
        move |ext: &str| format!("{}-{}.{ext}", st.file_stem(), st.view.get_untracked().key());
    let export_csv = move |_| {
        let all = st.bundles.get_untracked();
        let report = st
            .analysed
            .with_untracked(|a| a.as_deref().map(Analysed::report));
        if let (Some(l), Some(r)) = (all.get(st.current.get_untracked()), report) {
            export::download_text(
                &format!("{}-kernels.csv", st.file_stem()),
                "text/csv",
                &r.to_csv(&l.bundle),
            );
        }
    };
    view! {
        <div class="toolbar">
            <LevelToggles />
            <RoofToggles />
            <CountField
                id="top"
                label=" Kernels plotted "
                title="How many kernels the chart plots: the largest by time"
                min=1
                max=500
                value=st.top
            />
            <CountField
                id="labels"
                label=" Named on the chart "
                title="How many of the plotted kernels get their name beside their marker (fewer on a narrow chart); hover a marker for any kernel's name"
                min=0
                max=40
                value=st.label_n
            />
            <label>
                <input type="checkbox" id="isolate" prop:checked=move || st.isolate.get() on:change=move |_| st.isolate.update(|i| *i = !*i) />
                "Only the selected kernel"
            </label>
            <button id="reset-zoom" on:click=move |_| st.domain.set(None)>"Reset zoom"</button>
            <button id="export-svg" on:click=move |_| export::download_chart_svg(&file("svg"))>"SVG"</button>
            <button id="export-png" on:click=move |_| export::download_chart_png(&file("png"))>"PNG"</button>
            <button id="export-csv" on:click=export_csv>"CSV"</button>
            <button
                id="save-bundle"
                title="The bundle shown; for a trace or CSV, the bundle made here (as by roofline import)"
                on:click=move |_| st.save_bundle()
            >
                "Save bundle"
            </button>
            <button
                id="save-html"
                title="The viewer, this bundle (and its baseline) and this view in one file that opens with no server"
                on:click=move |_| st.save_html()
            >
                "Save as HTML"
            </button>
        </div>
    }
}

/// One checkbox per memory level a kernel point can be drawn at.
#[component]
fn LevelToggles() -> impl IntoView {
    let st = AppState::get();
    let boxes = MemoryLevel::KERNEL_LEVELS
        .into_iter()
        .map(|l| {
            view! {
                <label>
                    <input
                        type="checkbox"
                        id=format!("level-{}", l.key())
                        prop:checked=move || st.levels.get().contains(&l)
                        on:change=move |_| {
                            st.levels.update(|ls| {
                                if let Some(i) = ls.iter().position(|x| *x == l) {
                                    ls.remove(i);
                                } else {
                                    ls.push(l);
                                }
                            });
                        }
                    />
                    {l.label()}
                </label>
            }
        })
        .collect_view();
    view! {
        <span>"Levels: "</span>
        {boxes}
    }
}

/// One checkbox per datapath with a ceiling in use.
#[component]
fn RoofToggles() -> impl IntoView {
    let st = AppState::get();
    let boxes = move || {
        st.ceilings.get().map(|c| {
            c.datapaths()
                .map(|(d, _)| {
                    view! {
                        <label>
                            <input
                                type="checkbox"
                                id=format!("roof-{}", d.key())
                                prop:checked=move || !st.hidden_paths.get().contains(&d)
                                on:change=move |_| {
                                    st.hidden_paths.update(|h| {
                                        if let Some(i) = h.iter().position(|x| *x == d) {
                                            h.remove(i);
                                        } else {
                                            h.push(d);
                                        }
                                    });
                                }
                            />
                            {d.label()}
                        </label>
                    }
                })
                .collect_view()
        })
    };
    view! {
        <span>" Roofs: "</span>
        {boxes}
    }
}

/// A whole-number field: an entry is clamped to `min..=max`; one that is not a number is ignored.
#[component]
fn CountField(
    /// The input's id.
    id: &'static str,
    /// The text before it.
    label: &'static str,
    /// What it sets, in words (the label's tooltip).
    title: &'static str,
    /// The smallest value.
    min: usize,
    /// The largest value.
    max: usize,
    /// The value it shows and sets.
    value: RwSignal<usize>,
) -> impl IntoView {
    view! {
        <label title=title>
            {label}
            <input
                id=id
                type="number"
                min=min.to_string()
                max=max.to_string()
                prop:value=move || value.get().to_string()
                on:change=move |ev| {
                    if let Ok(n) = event_target_value(&ev).parse::<usize>() {
                        value.set(n.clamp(min, max));
                    }
                }
            />
        </label>
    }
}
