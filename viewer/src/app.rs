//! The application: creates the page's [`AppState`] (provided to every screen as context),
//! opens what the URL or the saved page asks for, keeps the URL in step with the view, and lays
//! out the screens: the header, the compare summary, the toolbar, the main area (chart or
//! machine view) and the kernel table; or, embedded, the chart alone.
//!
//! Every figure comes from `roofline_model`; edits only change the ceilings it is given.

use leptos::prelude::*;

use crate::chart_area::{ChartArea, CompareSummary, MainArea, scene_memo};
use crate::header::Header;
use crate::kernel_table::KernelTable;
use crate::pairing::PairBar;
use crate::state::{self, AppState};
use crate::toolbar::Toolbar;
use crate::url_state;

/// The whole page; `embed` gives the compact chrome for iframes.
#[component]
pub fn App(
    /// Compact chrome (chart only) for `embed.html`.
    embed: bool,
) -> impl IntoView {
    // A saved standalone page holds its bundles and view; a query in its URL wins over the view.
    let inline = crate::standalone::inlined();
    let initial = match &inline {
        Some(Ok((m, _))) => {
            let here = web_sys::window()
                .and_then(|w| w.location().search().ok())
                .unwrap_or_default();
            url_state::from_query(if here.len() > 1 { &here } else { &m.query })
        }
        _ => url_state::from_location(),
    };
    let st = AppState::new(&initial, embed);
    provide_context(st);
    st.load_initial(&initial, inline);
    state::follow_in_url(st);
    state::follow_the_width(st);
    state::open_on_the_chart_with_points(st);
    let scene = scene_memo(st);
    let dark_css = roofline_model::chart::style::dark_css(".app.dark .chart");

    let status = move || {
        view! {
            {move || st.error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
            {move || st.loading.get().then(|| view! { <p class="loading">"Loading…"</p> })}
        }
    };
    if embed {
        return view! {
            <div class="app embed" class:dark=move || st.dark.get()>
                <style>{STYLE}{dark_css}</style>
                {status()}
                <CompareSummary />
                <ChartArea scene=scene />
            </div>
        }
        .into_any();
    }
    view! {
        <div
            class="app"
            class:dark=move || st.dark.get()
            on:dragover=|ev: web_sys::DragEvent| ev.prevent_default()
            on:drop=move |ev: web_sys::DragEvent| {
                ev.prevent_default();
                st.open_files(ev.data_transfer().and_then(|d| d.files()));
            }
        >
            <style>{STYLE}{dark_css}</style>
            <Header />
            {status()}
            <CompareSummary />
            <Toolbar />
            <MainArea scene=scene />
            <PairBar />
            <KernelTable analysed=st.analysed selected=st.selected filter=st.filter comparison=st.comparison group=st.group_by />
            <footer>
                "Drop bundles, torch.profiler traces (.json, .json.gz) or Nsight Compute CSV exports anywhere on the page. Scroll on the chart to zoom, drag to pan. "
                "Nothing is uploaded: traces are imported and every figure is computed in your browser."
            </footer>
        </div>
    }
    .into_any()
}

/// The page's styles. The chart's colours are SVG presentation attributes (from
/// `roofline_model::chart::style`), which the rules here override for the dark theme.
// In STYLE, `#kernel-table td`: figure cells do not clip (a clip per cell cost a compositing
// step per cell on every redraw); their columns hold them (checked by the browser tests).
const STYLE: &str = r#"
body { margin: 0; }
.app { font-family: system-ui, sans-serif; color: #111; background: #fff; min-height: 100vh; padding: 8px 16px; box-sizing: border-box; }
.app.dark { color: #e8e8e8; background: #16181c; }
.app.embed { padding: 0; min-height: 0; }
header, .toolbar { display: flex; flex-wrap: wrap; gap: 6px 12px; align-items: center; margin-bottom: 6px; }
header h1 { font-size: 20px; margin: 0 12px 0 0; }
.toolbar { font-size: 13px; }
.toolbar input[type=number] { width: 4.5em; }
.tabs button.active { font-weight: bold; text-decoration: underline; }
.error { color: #b00020; background: #fdecea; padding: 8px; border-radius: 4px; }
.empty-state { color: #555; padding: 24px; text-align: center; }
.dark .empty-state, .dark .notes, .dark .more, .dark .hint { color: #aaa; }
.more { font-size: 12px; color: #555; }
.compare-summary { font-size: 13px; background: #eef4fb; padding: 6px 8px; border-radius: 4px; margin-bottom: 6px; }
.compare-summary p { margin: 2px 0; }
.compare-summary .split { margin: 2px 0; padding-left: 18px; }
.dark .compare-summary { background: #20303f; }
.compare-summary .hint { color: #555; }
.dark .compare-summary .hint { color: #aaa; }
.pair-bar { font-size: 13px; background: #f4f1e8; padding: 6px 8px; border-radius: 4px; margin-top: 8px; }
.dark .pair-bar { background: #2b2a24; }
.pair-bar select { max-width: 28em; }
.pair-bar .launched { margin: 4px 0 0; }
.pair-bar.off, .pair-bar:not(.can-pair) .can-pair, .pair-bar:not(.paired) .paired, .pair-bar:not(.by-hand) .by-hand, .pair-bar:not(.has-launched) .has-launched { display: none; }
td.faster { color: #0a7a32; }
td.slower { color: #b00020; }
.dark td.faster { color: #5fd08a; }
.dark td.slower { color: #ff7a8a; }
td.doubtful { font-weight: bold; color: #8a5a00; }
.dark td.doubtful { color: #f0b84a; }
tr.gone td { color: #666; font-style: italic; }
.dark tr.gone td { color: #9a9a9a; }
.chart { position: relative; }
.chart svg { width: 100%; height: auto; display: block; user-select: none; }
.tooltip { position: absolute; pointer-events: none; background: rgba(20,20,20,0.92); color: #fff; padding: 6px 8px; border-radius: 4px; font-size: 12px; max-width: 420px; overflow-wrap: anywhere; z-index: 2; }
.legend, .notes { list-style: none; padding: 0; margin: 4px 0; font-size: 12px; display: flex; flex-wrap: wrap; gap: 4px 14px; }
.notes { color: #555; }
.swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin-right: 5px; vertical-align: -1px; background: var(--ink); }
.swatch.arrow { width: 16px; height: 0; border-radius: 0; background: none; border-top: 2px solid var(--ink); vertical-align: 3px; }
.swatch.baseline { border-radius: 50%; opacity: 0.35; }
.swatch.new { border-radius: 50%; background: none; border: 2.5px solid var(--ink); width: 7px; height: 7px; }
.swatch.gone { border-radius: 50%; background: none; border: 1.5px dashed var(--ink); width: 8px; height: 8px; }
.dark .swatch { background: var(--ink-dark); border-color: var(--ink-dark); }
.dark .swatch.arrow, .dark .swatch.new, .dark .swatch.gone { background: none; }
table { border-collapse: collapse; font-size: 12px; margin-top: 8px; }
th, td { padding: 3px 8px; text-align: right; border-bottom: 1px solid #ddd; }
.dark th, .dark td { border-bottom-color: #3a3d44; }
th.name, td.name { text-align: left; max-width: 360px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.table-scroll { overflow-x: auto; margin-top: 8px; }
#kernel-table { display: block; width: 100%; min-width: calc(24em + 127ch); margin-top: 0; }
#kernel-table.comparing { min-width: calc(24em + 184ch); }
#kernel-table thead, #kernel-table tbody { display: block; }
#kernel-table tr { display: grid; grid-template-columns: minmax(24em, 1fr) 9ch 10ch 10ch 15ch 10ch 10ch 10ch 14ch 12ch 17ch 10ch; grid-auto-columns: 10ch 11ch 10ch 26ch; }
#kernel-table .baseline { grid-column: 13; }
#kernel-table .delta { grid-column: 14; }
#kernel-table .speedup { grid-column: 15; }
#kernel-table .bound-change { grid-column: 16; }
#kernel-table tbody tr { content-visibility: auto; contain-intrinsic-size: auto 21px; }
#kernel-table td { white-space: nowrap; max-width: none; }
#kernel-table th { white-space: normal; align-self: end; max-width: none; }
th.sortable { cursor: pointer; }
.kernels tbody tr { cursor: pointer; }
.kernels tr.selected { background: #ffe9a8; color: #111; }
.machine table { margin-top: 4px; }
#ceilings tr.in-use { font-weight: 600; }
#what-if td.name { min-width: 10em; }
#what-if td.value { text-align: right; }
#what-if td.unit { text-align: left; padding-left: 4px; }
#what-if input { width: 9em; text-align: right; font: inherit; }
footer { margin-top: 12px; font-size: 12px; color: #555; }

.dark footer { color: #aaa; }
@media (max-width: 700px) {
  header h1 { font-size: 17px; }
  header label, .toolbar label { white-space: nowrap; }
}
"#;
