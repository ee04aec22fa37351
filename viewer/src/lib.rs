//! The roofline viewer: a static, client-side web app that opens bundles and recomputes both
//! rooflines in the browser through `roofline-model`.
//!
//! The leptos application lands with the viewer issue; until then this crate only proves that
//! the model builds for `wasm32-unknown-unknown` and exposes what the page will call.

use roofline_model::chart::{self, ChartOptions, Scene};

/// Parses a bundle's JSON text and lays out its hierarchical roofline, as the page will.
///
/// # Errors
/// The reading or charting error, as text for display.
pub fn hierarchical_scene(json: &str, options: &ChartOptions) -> Result<Scene, String> {
    let bundle = roofline_model::parse_bundle(json).map_err(|e| e.to_string())?;
    chart::hierarchical(&bundle, options).map_err(|e| e.to_string())
}
