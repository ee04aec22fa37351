//! The roofline viewer: a static, client-side web app that opens bundles and recomputes both
//! rooflines in the browser through `roofline-model`.

pub mod app;
pub mod chart_view;

use wasm_bindgen::prelude::wasm_bindgen;

/// Entry point called by the page's JavaScript glue: mounts the app on `<body>`.
#[wasm_bindgen(start)]
pub fn start() {
    leptos::mount::mount_to_body(app::App);
}
