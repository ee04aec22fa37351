//! Shows a chart [`Scene`]: its SVG markup comes from the model's one renderer
//! (`roofline_model::chart::svg::body`, the body of the CLI's SVG export too); this component sets it
//! inside its `<svg>` and handles the pointer around it: a tooltip for the marker under the
//! pointer, click to select, wheel to zoom, drag to pan, double-click to fit, all by inverting
//! the scene's viewport. The selection is a small overlay of rings drawn here, so that selecting
//! a kernel does not rebuild the chart; so is the hovered kernel's path to its binding ceiling
//! (`SceneKernel::bound_path`, computed by the model). The chart is drawn at its scene's pixel
//! size (the model sizes the scene to the page), so that its text keeps its size. Computes no
//! figure.

use leptos::prelude::*;
use roofline_model::chart::geometry::roofline::nearest_point;
use roofline_model::chart::overlay::Overlay;
use roofline_model::chart::svg::{CLIP_ID, SvgOptions, body, esc};
use roofline_model::chart::{Domain, Label, LegendRole, MarkerKind, Scene, style};

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
    /// The notes under the chart (the scene's, and what its names need said).
    #[prop(optional)]
    notes: Option<Vec<String>>,
    /// For each kernel of the scene, what a comparison says of it (baseline → current).
    #[prop(optional)]
    compared: Vec<Option<String>>,
) -> impl IntoView {
    let notes = notes.unwrap_or_else(|| scene.notes.clone());
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
    // The marker under the pointer: the tooltip's place and text, and the marker's index.
    let hover = RwSignal::new(None::<(f64, f64, String, usize)>);
    // Per marker, in the scene's order: its position, radius, kernel (full name) and tooltip.
    let marker_px: Vec<(f64, f64)> = scene.markers.iter().map(|m| m.at).collect();
    let names: Vec<String> = scene
        .markers
        .iter()
        .map(|m| scene.kernels[m.kernel].full_name.clone())
        .collect();
    let tips = tooltips(&scene, &compared);
    // Per marker, its kernel's path to its binding ceiling.
    let paths: Vec<Option<roofline_model::chart::BoundPath>> = scene
        .markers
        .iter()
        .map(|m| scene.kernels[m.kernel].bound_path.clone())
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
            nearest_point((sx, sy), &marker_px_move, 12.0).map(|i| (lx, ly, tips[i].clone(), i)),
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
                        <circle class="selected" data-kernel=name.clone() cx=at.0 cy=at.1 r=*r fill="none" stroke=style::TEXT stroke-width="3" />
                    }
                })
                .collect::<Vec<_>>()
        })
    };

    // The hovered kernel's path to its binding ceiling.
    let path = move || {
        let (_, _, _, i) = hover.get()?;
        Some(bound_path(paths.get(i)?.clone()?, w))
    };

    let notes_html: String = notes
        .iter()
        .map(|n| format!("<li>{}</li>", esc(n)))
        .collect();
    view! {
        // Drawn at the scene's size (the model sized it to the page): its text keeps its size.
        <div class="chart" style=format!("max-width:{w}px")>
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
                {path}
            </svg>
            {move || {
                hover
                    .get()
                    .map(|(x, y, t, _)| {
                        // Beside the pointer, on the side of the chart with more room.
                        let place = if x > w / 2.0 {
                            format!("right:calc(100% - {:.0}px);top:{:.0}px", x - 14.0, y + 14.0)
                        } else {
                            format!("left:{:.0}px;top:{:.0}px", x + 14.0, y + 14.0)
                        };
                        view! {
                            <div class="tooltip" role="tooltip" style=place>
                                {t}
                            </div>
                        }
                    })
            }}
            {legend(&scene)}
            <ul class="notes" inner_html=notes_html></ul>
        </div>
    }
}

/// Per marker, in the scene's order, its tooltip: the kernel, the point's level and the
/// kernel's figures, and what a comparison says of it.
fn tooltips(scene: &Scene, compared: &[Option<String>]) -> Vec<String> {
    scene
        .markers
        .iter()
        .map(|m| {
            let k = &scene.kernels[m.kernel];
            let mut tip = match m.kind {
                MarkerKind::Level(l) => format!("{} at {}: {}", k.full_name, l.label(), k.summary),
                MarkerKind::Complexity | MarkerKind::Collective(_) => {
                    format!("{}: {}", k.full_name, k.summary)
                }
                MarkerKind::TimeVertex => format!("{}: time vertex", k.full_name),
            };
            if let Some(Some(c)) = compared.get(m.kernel) {
                tip.push_str(". ");
                tip.push_str(c);
            }
            tip
        })
        .collect()
}

/// A kernel's path to its binding ceiling (the model's `SceneKernel::bound_path`): a dashed line
/// from its point to where it meets the ceiling, a dot there, and what binds it, written on the
/// side of the chart (`width` wide) with more room.
fn bound_path(p: roofline_model::chart::BoundPath, width: f64) -> impl IntoView {
    let (tx, anchor) = if p.to.0 < width * 0.7 {
        (p.to.0 + 8.0, "start")
    } else {
        (p.to.0 - 8.0, "end")
    };
    view! {
        <g class="bound-path" pointer-events="none">
            <line x1=p.from.0 y1=p.from.1 x2=p.to.0 y2=p.to.1 stroke=style::ARROW stroke-width="1.5" stroke-dasharray="4 3" />
            <circle cx=p.to.0 cy=p.to.1 r="3.5" fill=style::ARROW />
            <text x=tx y=p.to.1 - 6.0 text-anchor=anchor font-size="11" fill=style::LABEL stroke=style::BACKGROUND stroke-width="3" paint-order="stroke">{p.text}</text>
        </g>
    }
}

/// The scene's legend as a list, each entry with its swatch (its colour in both themes): one
/// piece of HTML.
fn legend(scene: &Scene) -> impl IntoView + use<> {
    let entries: String = scene
        .legend
        .iter()
        .map(|e| {
            let colour = style::legend(e.role);
            let kind = match e.role {
                LegendRole::Arrow => "swatch arrow",
                LegendRole::Baseline => "swatch baseline",
                LegendRole::New => "swatch new",
                LegendRole::Gone => "swatch gone",
                _ => "swatch",
            };
            format!(
                r#"<li><span class="{kind}" style="--ink:{colour};--ink-dark:{}"></span>{}</li>"#,
                style::dark(colour),
                esc(&e.text)
            )
        })
        .collect();
    view! { <ul class="legend" inner_html=entries></ul> }
}
