//! The roofline viewer: a static, client-side web app that opens bundles and recomputes both
//! rooflines in the browser through `roofline-model`.
//!
//! `index.html` mounts the full app; `embed.html` (a page whose `<body>` has
//! `data-embed="true"`) mounts the compact chart-only chrome for iframes in documentation.

pub mod app;
pub mod chart_area;
pub mod chart_view;
pub mod export;
pub mod header;
pub mod import;
pub mod kernel_table;
pub mod loading;
pub mod machine_view;
pub mod pairing;
pub mod perf;
pub mod standalone;
pub mod state;
pub mod toolbar;
pub mod url_state;

use wasm_bindgen::prelude::wasm_bindgen;

/// Entry point called by the page's JavaScript glue: mounts the app on `<body>`.
#[wasm_bindgen(start)]
pub fn start() {
    let embed = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.body())
        .and_then(|b| b.get_attribute("data-embed"))
        .is_some_and(|v| v == "true");
    if !embed {
        // The page keeps its scroll bar's room from the start, so that the width measured for
        // the chart is the width it gets once the page grows taller than the window.
        if let Some(html) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.document_element())
        {
            let _ = html.set_attribute("style", "overflow-y: scroll");
        }
    }
    leptos::mount::mount_to_body(move || leptos::view! { <app::App embed=embed /> });
}
