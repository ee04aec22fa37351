//! Draws a chart [`Scene`] as SVG, with a tooltip for the marker under the pointer. Computes no
//! figure: positions, labels and colours all come from `roofline_model::chart`.

use leptos::prelude::*;
use roofline_model::chart::{Anchor, Domain, Label, LineRole, MarkerKind, Scene, style};
use roofline_model::compare::Overlay;
use roofline_model::geometry::roofline::nearest_point;

fn points(pts: &[(f64, f64)]) -> String {
    pts.iter()
        .map(|(x, y)| format!("{x:.1},{y:.1}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn anchor(a: Anchor) -> &'static str {
    match a {
        Anchor::Start => "start",
        Anchor::Middle => "middle",
        Anchor::End => "end",
    }
}

/// The chart, drawn from its scene; `selected` highlights one kernel's markers.
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
    /// Kernel names placed on the chart (`roofline_model::labels`).
    #[prop(optional)]
    labels: Vec<Label>,
) -> impl IntoView {
    let overlay = overlay.unwrap_or_default();
    let is_new: Vec<bool> = {
        let mut v = vec![false; scene.markers.len()];
        for &i in &overlay.new_markers {
            if let Some(x) = v.get_mut(i) {
                *x = true;
            }
        }
        v
    };
    let area = scene.viewport.area;
    let (w, h) = (scene.width, scene.height);
    let hover = RwSignal::new(None::<(f64, f64, String)>);
    let marker_px: Vec<(f64, f64)> = scene.markers.iter().map(|m| m.at).collect();
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
    let names: Vec<String> = scene
        .markers
        .iter()
        .map(|m| scene.kernels[m.kernel].full_name.clone())
        .collect();

    let viewport = scene.viewport;
    // Pointer position in the scene's pixel space (the SVG scales with its container).
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
            nearest_point((sx, sy), &marker_px, 12.0)
                .map(|i| (lx + 14.0, ly + 14.0, tips[i].clone())),
        );
    };
    let names_click = names.clone();
    let marker_px_click: Vec<(f64, f64)> = scene.markers.iter().map(|m| m.at).collect();
    let on_click = move |ev: web_sys::MouseEvent| {
        if dragged.get_untracked() {
            dragged.set(false);
            return;
        }
        let Some((sx, sy, _, _)) = to_scene(&ev) else {
            return;
        };
        if let Some(i) = nearest_point((sx, sy), &marker_px_click, 12.0) {
            selected.set(Some(names_click[i].clone()));
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

    let grid_x: Vec<f64> = scene
        .x_axis
        .ticks
        .iter()
        .filter(|t| t.1)
        .map(|t| t.0)
        .collect();
    let grid_y: Vec<f64> = scene
        .y_axis
        .ticks
        .iter()
        .filter(|t| t.1)
        .map(|t| t.0)
        .collect();
    let (cx, cy) = area.center();

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
                <rect class="bg" width=w height=h fill="#ffffff" />
                <defs>
                    <clipPath id="plot-clip">
                        <rect x=area.x y=area.y width=area.width height=area.height />
                    </clipPath>
                    <marker id="arrowhead" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                        <path d="M 0 0 L 10 5 L 0 10 z" fill="#444" />
                    </marker>
                </defs>
                <text x=area.x y="22" font-size="17" font-weight="bold" fill="#111">{scene.title.clone()}</text>
                <text x=area.x y="40" fill="#555">{scene.subtitle.clone()}</text>
                <g stroke="#e4e4e4">
                    {grid_x.into_iter().map(|x| view! { <line x1=x y1=area.y x2=x y2=area.bottom() /> }).collect_view()}
                    {grid_y.into_iter().map(|y| view! { <line x1=area.x y1=y x2=area.right() y2=y /> }).collect_view()}
                </g>
                <rect x=area.x y=area.y width=area.width height=area.height fill="none" stroke="#333" />
                <g class="x-axis" fill="#333">
                    {scene
                        .x_axis
                        .ticks
                        .iter()
                        .map(|(x, major, label)| {
                            let len = if *major { 6.0 } else { 3.0 };
                            view! {
                                <line x1=*x y1=area.bottom() x2=*x y2=area.bottom() + len stroke="#333" />
                                {label.clone().map(|l| view! { <text x=*x y=area.bottom() + 20.0 text-anchor="middle">{l}</text> })}
                            }
                        })
                        .collect_view()}
                </g>
                <g class="y-axis" fill="#333">
                    {scene
                        .y_axis
                        .ticks
                        .iter()
                        .map(|(y, major, label)| {
                            let len = if *major { 6.0 } else { 3.0 };
                            view! {
                                <line x1=area.x - len y1=*y x2=area.x y2=*y stroke="#333" />
                                {label.clone().map(|l| view! { <text x=area.x - 9.0 y=*y + 4.0 text-anchor="end">{l}</text> })}
                            }
                        })
                        .collect_view()}
                </g>
                <text x=cx y=area.bottom() + 40.0 text-anchor="middle" font-size="13" fill="#111">{scene.x_axis.title.clone()}</text>
                <text transform=format!("translate({},{cy}) rotate(-90)", area.x - 84.0) text-anchor="middle" font-size="13" fill="#111">
                    {scene.y_axis.title.clone()}
                </text>
                <g clip-path="url(#plot-clip)" fill="none">
                    {scene
                        .lines
                        .iter()
                        .map(|l| {
                            let width = match l.role {
                                LineRole::KernelLink { .. } => 1.2,
                                LineRole::LaunchBox { .. } => 1.5,
                                _ => 2.2,
                            };
                            view! {
                                <polyline
                                    class="line"
                                    data-role=format!("{:?}", l.role)
                                    points=points(&l.points)
                                    stroke=style::line(l.role)
                                    stroke-width=width
                                    stroke-dasharray=if l.dashed { "6 4" } else { "none" }
                                />
                            }
                        })
                        .collect_view()}
                </g>
                {scene
                    .labels
                    .iter()
                    .map(|l| {
                        view! {
                            <text
                                class="ceiling-label"
                                x=l.at.0
                                y=l.at.1
                                transform=format!("rotate({:.2} {:.1} {:.1})", l.angle_deg, l.at.0, l.at.1)
                                text-anchor=anchor(l.anchor)
                                font-size="11"
                                fill=style::line(l.role)
                                stroke="#fff"
                                stroke-width="3"
                                paint-order="stroke"
                            >
                                {l.text.clone()}
                            </text>
                        }
                    })
                    .collect_view()}
                <g class="compare" clip-path="url(#plot-clip)">
                    {overlay
                        .gone
                        .iter()
                        .map(|g| {
                            view! {
                                <circle
                                    class="gone"
                                    data-kernel=g.kernel.clone()
                                    cx=g.at.0
                                    cy=g.at.1
                                    r=g.radius
                                    fill="none"
                                    stroke=style::marker(g.kind)
                                    stroke-width="1.5"
                                    stroke-dasharray="3 2"
                                />
                            }
                        })
                        .collect_view()}
                    {overlay
                        .arrows
                        .iter()
                        .filter(|a| (a.to.0 - a.from.0).hypot(a.to.1 - a.from.1) > 0.5)
                        .map(|a| {
                            view! {
                                <line
                                    class="arrow"
                                    data-kernel=a.kernel.clone()
                                    x1=a.from.0
                                    y1=a.from.1
                                    x2=a.to.0
                                    y2=a.to.1
                                    stroke="#444"
                                    stroke-opacity="0.7"
                                    stroke-width="1.2"
                                    marker-end="url(#arrowhead)"
                                />
                            }
                        })
                        .collect_view()}
                </g>
                <g clip-path="url(#plot-clip)">
                    {scene
                        .markers
                        .iter()
                        .enumerate()
                        .map(|(i, m)| {
                            let colour = style::marker(m.kind);
                            let (fill, stroke) = match m.kind {
                                MarkerKind::TimeVertex => ("#ffffff", colour),
                                _ => (colour, "#ffffff"),
                            };
                            let name = names[i].clone();
                            let new = is_new[i];
                            let is_sel = move || selected.get().as_deref() == Some(name.as_str());
                            view! {
                                <circle
                                    class="marker"
                                    class:new=new
                                    class:selected={
                                        let is_sel = is_sel.clone();
                                        move || is_sel()
                                    }
                                    data-kernel=scene.kernels[m.kernel].full_name.clone()
                                    data-kind=match m.kind {
                                        MarkerKind::Level(l) => l.key(),
                                        MarkerKind::Complexity => "complexity",
                                        MarkerKind::TimeVertex => "vertex",
                                    }
                                    data-x=m.data.0
                                    data-y=m.data.1
                                    cx=m.at.0
                                    cy=m.at.1
                                    r=m.radius
                                    fill=fill
                                    fill-opacity="0.85"
                                    stroke={
                                        let is_sel = is_sel.clone();
                                        move || if is_sel() { "#111111" } else { stroke }
                                    }
                                    stroke-width=move || if is_sel() { 3.0 } else if new { 2.5 } else { 1.5 }
                                />
                            }
                        })
                        .collect_view()}
                </g>
                <g class="kernel-labels">
                    {labels
                        .iter()
                        .map(|l| {
                            view! {
                                <text
                                    class="kernel-label"
                                    x=l.at.0
                                    y=l.at.1
                                    text-anchor=anchor(l.anchor)
                                    font-size="11"
                                    fill="#222"
                                    stroke="#fff"
                                    stroke-width="3"
                                    paint-order="stroke"
                                >
                                    {l.text.clone()}
                                </text>
                            }
                        })
                        .collect_view()}
                </g>
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
