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
                <style>{dark_css}</style>
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
            <style>{dark_css}</style>
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
