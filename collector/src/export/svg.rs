//! SVG export: the standalone SVG of a [`Scene`], written by the model's one renderer
//! (`roofline_model::chart::svg::document`, which the viewer's chart shares its body with); this module
//! computes and draws nothing itself.

use roofline_model::chart::Scene;

/// Renders a scene as a standalone SVG document: static (no script, no external font or
/// stylesheet), each marker with its kernel's figures as a tooltip, kernels numbered by share
/// of time and listed beside the chart, a legend and notes ([`roofline_model::chart::svg::plotted`]).
pub fn render(scene: &Scene) -> Vec<u8> {
    roofline_model::chart::svg::plotted(scene).into_bytes()
}
