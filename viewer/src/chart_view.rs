//! Shows a chart [`Scene`]: its SVG markup comes from the model's one renderer
//! (`roofline_model::svg::body`, the body of the CLI's SVG export too); this component sets it
//! inside its `<svg>` and handles the pointer around it: a tooltip for the marker under the
//! pointer, click to select, wheel to zoom, drag to pan, double-click to fit, all by inverting
//! the scene's viewport. The selection is a small overlay of rings drawn here, so that selecting
//! a kernel does not rebuild the chart. Computes no figure.

use leptos::prelude::*;
use roofline_model::chart::{Domain, Label, MarkerKind, Scene, style};
use roofline_model::compare::Overlay;
use roofline_model::geometry::roofline::nearest_point;
use roofline_model::svg::{CLIP_ID, SvgOptions, body};

/// The chart, drawn from its scene; `selected` rings one kernel's markers.
// leptos hands component props over by value.
#[allow(clippy::needless_pass_by_value)]
#[component]
pub fn ChartView(
    /// The chart to draw.
    scene: Scene,
    /// The kernel selected in the table or on the chart (full name).
    selected: RwSignal<Option<String>>,
    /// The data ranges shown; wheel and drag set it (zoom and pan), `None` fits the data.
    domain: RwSignal<Option<Domain>>,
    /// A comparison with a baseline run: arrows, new and gone kernels.
    #[prop(optional)]
    overlay: Option<Overlay>,
    /// Kernel names placed on the chart (`roofline_model::chart::kernel_labels`).
    #[prop(optional)]
    labels: Vec<Label>,
) -> impl IntoView {
    let markup = body(
        &scene,
        &SvgOptions {
            overlay: overlay.as_ref(),
            kernel_labels: &labels,
            marker_titles: false,
        },
    );
    let (w, h) = (scene.width, scene.height);
    let viewport = scene.viewport;
    let hover = RwSignal::new(None::<(f64, f64, String)>);
    // Per marker, in the scene's order: its position, radius, kernel (full name) and tooltip.
    let marker_px: Vec<(f64, f64)> = scene.markers.iter().map(|m| m.at).collect();
    let names: Vec<String> = scene
        .markers
        .iter()
        .map(|m| scene.kernels[m.kernel].full_name.clone())
        .collect();
    let tips: Vec<String> = scene
        .markers
        .iter()
        .map(|m| {
            let k = &scene.kernels[m.kernel];
            match m.kind {
                MarkerKind::Level(l) => format!("{} at {}: {}", k.full_name, l.label(), k.summary),
                MarkerKind::Complexity => format!("{}: {}", k.full_name, k.summary),
                MarkerKind::TimeVertex => format!("{}: time vertex", k.full_name),
            }
        })
        .collect();
    let rings: Vec<(String, (f64, f64), f64)> = scene
        .markers
        .iter()
        .zip(&names)
        .map(|(m, n)| (n.clone(), m.at, m.radius))
        .collect();

    // Pointer position in the scene's pixel space (the SVG scales with its container), and in
    // the element's own pixels.
    let to_scene = move |ev: &web_sys::MouseEvent| -> Option<(f64, f64, f64, f64)> {
        use wasm_bindgen::JsCast;
        let el = ev.current_target()?.dyn_into::<web_sys::Element>().ok()?;
        let r = el.get_bounding_client_rect();
        if r.width() <= 0.0 || r.height() <= 0.0 {
            return None;
        }
        let (lx, ly) = (
            f64::from(ev.client_x()) - r.left(),
            f64::from(ev.client_y()) - r.top(),
        );
        Some((lx * w / r.width(), ly * h / r.height(), lx, ly))
    };
    // A drag in progress: where it started (scene px) and whether it moved.
    let drag = RwSignal::new(None::<(f64, f64)>);
    let dragged = RwSignal::new(false);

    let marker_px_move = marker_px.clone();
    let on_move = move |ev: web_sys::MouseEvent| {
        let Some((sx, sy, lx, ly)) = to_scene(&ev) else {
            return;
        };
        if let Some((x0, y0)) = drag.get_untracked()
            && ev.buttons() & 1 == 1
        {
            let (dx, dy) = (sx - x0, sy - y0);
            if dx.abs() + dy.abs() > 3.0 {
                dragged.set(true);
                let moved = viewport.pan((dx, dy));
                domain.set(Some((moved.x.domain(), moved.y.domain())));
                hover.set(None);
            }
            return;
        }
        hover.set(
            nearest_point((sx, sy), &marker_px_move, 12.0)
                .map(|i| (lx + 14.0, ly + 14.0, tips[i].clone())),
        );
    };
    let on_click = move |ev: web_sys::MouseEvent| {
        if dragged.get_untracked() {
            dragged.set(false);
            return;
        }
        let Some((sx, sy, _, _)) = to_scene(&ev) else {
            return;
        };
        if let Some(i) = nearest_point((sx, sy), &marker_px, 12.0) {
            selected.set(Some(names[i].clone()));
        }
    };
    let on_wheel = move |ev: web_sys::WheelEvent| {
        let Some((sx, sy, _, _)) = to_scene(&ev) else {
            return;
        };
        ev.prevent_default();
        let factor = if ev.delta_y() < 0.0 { 1.25 } else { 0.8 };
        let zoomed = viewport.zoom(factor, (sx, sy));
        domain.set(Some((zoomed.x.domain(), zoomed.y.domain())));
    };
    // The selected kernel's markers, ringed above the chart.
    let selection = move || {
        selected.with(|sel| {
            let Some(sel) = sel.as_deref() else {
                return Vec::new();
            };
            rings
                .iter()
                .filter(|(name, _, _)| name == sel)
                .map(|(name, at, r)| {
                    view! {
                        <circle class="selected" data-kernel=name.clone() cx=at.0 cy=at.1 r=*r fill="none" stroke="#111111" stroke-width="3" />
                    }
                })
                .collect::<Vec<_>>()
        })
    };

    view! {
        <div class="chart">
            <svg
                id="chart"
                xmlns="http://www.w3.org/2000/svg"
                viewBox=format!("0 0 {w} {h}")
                on:mousemove=on_move
                on:mousedown=move |ev: web_sys::MouseEvent| {
                    if let Some((sx, sy, _, _)) = to_scene(&ev) {
                        drag.set(Some((sx, sy)));
                        dragged.set(false);
                    }
                }
                on:mouseup=move |_| drag.set(None)
                on:mouseleave=move |_| {
                    hover.set(None);
                    drag.set(None);
                }
                on:click=on_click
                on:wheel=on_wheel
                on:dblclick=move |_| domain.set(None)
                font-size="12"
            >
                // The markup as a property with an empty text as the child, not as `inner_html`,
                // whose element gets leptos's placeholder comment after the markup on a first
                // build but not on a rebuild (which resets the markup): the DOM is the same both
                // ways.
                <g class="scene" prop:innerHTML=markup>
                    ""
                </g>
                <g class="selection" clip-path=format!("url(#{CLIP_ID})")>{selection}</g>
            </svg>
            {move || {
                hover
                    .get()
                    .map(|(x, y, t)| {
                        view! {
                            <div class="tooltip" role="tooltip" style=format!("left:{x:.0}px;top:{y:.0}px")>
                                {t}
                            </div>
                        }
                    })
            }}
            <ul class="legend">
                {scene
                    .legend
                    .iter()
                    .map(|e| {
                        view! {
                            <li>
                                <span class="swatch" style=format!("background:{}", style::legend(e.role))></span>
                                {e.text.clone()}
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
            <ul class="notes">{scene.notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view()}</ul>
        </div>
    }
}
