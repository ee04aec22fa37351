//! SVG export: draws a [`Scene`] computed by `roofline_model::chart`, and computes nothing.
//!
//! The output is a standalone, static SVG (no script, no external font or stylesheet) that reads
//! well on paper and in a browser: axes with units, ceilings named with their values, kernels
//! numbered by share of time and listed beside the chart, a legend and notes.

use std::fmt::Write as _;

use roofline_model::chart::{Anchor, LineRole, MarkerKind, Scene, style};
use roofline_model::labels::rank_labels;
use roofline_model::names::truncate;

const FONT: &str = "DejaVu Sans, Helvetica, Arial, sans-serif";

/// Escapes text for SVG content and attribute values.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            // XML 1.0 has no place for control characters or the noncharacters U+FDD0..U+FDEF
            // and U+xFFFE, U+xFFFF.
            c if c.is_control()
                || ('\u{FDD0}'..='\u{FDEF}').contains(&c)
                || (u32::from(c) & 0xFFFE) == 0xFFFE => {}
            c => o.push(c),
        }
    }
    o
}

fn anchor(a: Anchor) -> &'static str {
    match a {
        Anchor::Start => "start",
        Anchor::Middle => "middle",
        Anchor::End => "end",
    }
}

fn points(pts: &[(f64, f64)]) -> String {
    pts.iter()
        .map(|(x, y)| format!("{x:.1},{y:.1}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Renders a scene as a standalone SVG document.
pub fn render(scene: &Scene) -> Vec<u8> {
    let mut s = String::new();
    let area = scene.viewport.area;
    let (w, h) = (scene.width, scene.height);
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" font-family="{FONT}" font-size="12">"#
    );
    let _ = writeln!(
        s,
        "<title>{}</title>",
        esc(&format!("{} — {}", scene.title, scene.subtitle))
    );
    let _ = writeln!(s, r##"<rect width="100%" height="100%" fill="#ffffff"/>"##);
    let _ = writeln!(
        s,
        r#"<defs><clipPath id="plot"><rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}"/></clipPath></defs>"#,
        area.x, area.y, area.width, area.height
    );
    let _ = writeln!(
        s,
        r##"<text x="{:.1}" y="24" font-size="17" font-weight="bold" fill="#111">{}</text>"##,
        area.x,
        esc(&scene.title)
    );
    let _ = writeln!(
        s,
        r##"<text x="{:.1}" y="42" fill="#555">{}</text>"##,
        area.x,
        esc(&scene.subtitle)
    );

    // Grid and axes.
    let _ = writeln!(s, r##"<g stroke="#e4e4e4" stroke-width="1">"##);
    for (px, major, _) in &scene.x_axis.ticks {
        if *major {
            let _ = writeln!(
                s,
                r#"<line x1="{px:.1}" y1="{:.1}" x2="{px:.1}" y2="{:.1}"/>"#,
                area.y,
                area.bottom()
            );
        }
    }
    for (py, major, _) in &scene.y_axis.ticks {
        if *major {
            let _ = writeln!(
                s,
                r#"<line x1="{:.1}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}"/>"#,
                area.x,
                area.right()
            );
        }
    }
    let _ = writeln!(s, "</g>");
    let _ = writeln!(
        s,
        r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="#333"/>"##,
        area.x, area.y, area.width, area.height
    );
    let _ = writeln!(s, r##"<g stroke="#333" fill="#333">"##);
    for (px, major, label) in &scene.x_axis.ticks {
        let len = if *major { 6.0 } else { 3.0 };
        let _ = writeln!(
            s,
            r#"<line x1="{px:.1}" y1="{:.1}" x2="{px:.1}" y2="{:.1}"/>"#,
            area.bottom(),
            area.bottom() + len
        );
        if let Some(l) = label {
            let _ = writeln!(
                s,
                r#"<text x="{px:.1}" y="{:.1}" text-anchor="middle" stroke="none">{}</text>"#,
                area.bottom() + 20.0,
                esc(l)
            );
        }
    }
    for (py, major, label) in &scene.y_axis.ticks {
        let len = if *major { 6.0 } else { 3.0 };
        let _ = writeln!(
            s,
            r#"<line x1="{:.1}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}"/>"#,
            area.x - len,
            area.x
        );
        if let Some(l) = label {
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end" stroke="none">{}</text>"#,
                area.x - 9.0,
                py + 4.0,
                esc(l)
            );
        }
    }
    let _ = writeln!(s, "</g>");
    let (cx, cy) = area.center();
    let _ = writeln!(
        s,
        r##"<text x="{cx:.1}" y="{:.1}" text-anchor="middle" font-size="13" fill="#111">{}</text>"##,
        area.bottom() + 40.0,
        esc(&scene.x_axis.title)
    );
    let _ = writeln!(
        s,
        r##"<text transform="translate({:.1},{cy:.1}) rotate(-90)" text-anchor="middle" font-size="13" fill="#111">{}</text>"##,
        area.x - 84.0,
        esc(&scene.y_axis.title)
    );

    // Ceilings, boxes and links, clipped to the plot.
    let _ = writeln!(s, r#"<g clip-path="url(#plot)" fill="none">"#);
    for line in &scene.lines {
        let (width, opacity) = match line.role {
            LineRole::KernelLink { .. } => (1.2, 0.7),
            LineRole::LaunchBox { .. } => (1.5, 1.0),
            _ => (2.2, 1.0),
        };
        let dash = if line.dashed {
            r#" stroke-dasharray="6 4""#
        } else {
            ""
        };
        let _ = writeln!(
            s,
            r#"<polyline points="{}" stroke="{}" stroke-width="{width}" stroke-opacity="{opacity}"{dash}/>"#,
            points(&line.points),
            style::line(line.role)
        );
    }
    let _ = writeln!(s, "</g>");

    // Ceiling labels.
    for l in &scene.labels {
        let _ = writeln!(
            s,
            r##"<text class="ceiling-label" x="{:.1}" y="{:.1}" transform="rotate({:.2} {:.1} {:.1})" text-anchor="{}" font-size="11" fill="{}" stroke="#fff" stroke-width="3" paint-order="stroke">{}</text>"##,
            l.at.0,
            l.at.1,
            l.angle_deg,
            l.at.0,
            l.at.1,
            anchor(l.anchor),
            style::line(l.role),
            esc(&l.text)
        );
    }

    // Markers, largest first.
    let _ = writeln!(s, r#"<g clip-path="url(#plot)">"#);
    for m in &scene.markers {
        let colour = style::marker(m.kind);
        let k = &scene.kernels[m.kernel];
        let tip = match m.kind {
            MarkerKind::Level(l) => {
                format!("{}. {} at {}: {}", k.rank, k.name, l.label(), k.summary)
            }
            MarkerKind::Complexity => format!("{}. {}: {}", k.rank, k.name, k.summary),
            MarkerKind::TimeVertex => format!("{}. {} time vertex", k.rank, k.name),
        };
        let (fill, stroke) = match m.kind {
            MarkerKind::TimeVertex => ("#ffffff", colour),
            _ => (colour, "#ffffff"),
        };
        let _ = writeln!(
            s,
            r#"<circle class="marker" cx="{:.1}" cy="{:.1}" r="{:.1}" fill="{fill}" fill-opacity="0.85" stroke="{stroke}" stroke-width="1.5"><title>{}</title></circle>"#,
            m.at.0,
            m.at.1,
            m.radius,
            esc(&tip)
        );
    }
    let _ = writeln!(s, "</g>");
    // Each kernel's rank beside one of its markers, where it covers no marker and no label
    // (placed by `roofline_model::labels`); the side panel lists the kernels by rank.
    for l in rank_labels(scene) {
        let _ = writeln!(
            s,
            r##"<text class="rank" x="{:.1}" y="{:.1}" text-anchor="{}" font-size="11" fill="#111" stroke="#fff" stroke-width="3" paint-order="stroke">{}</text>"##,
            l.at.0,
            l.at.1,
            anchor(l.anchor),
            esc(&l.text)
        );
    }

    // Side panel: kernels by time, then the legend.
    let mut y_notes = area.bottom() + 58.0;
    if let Some(p) = scene.side_panel {
        let mut y = p.y + 4.0;
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{y:.1}" font-weight="bold" fill="#111">Kernels by share of time</text>"##,
            p.x
        );
        y += 18.0;
        let chars = ((p.width / 6.3) as usize).max(12);
        if scene.kernels.is_empty() {
            let _ = writeln!(
                s,
                r##"<text x="{:.1}" y="{y:.1}" fill="#555">none with a point on this chart</text>"##,
                p.x
            );
            y += 16.0;
        }
        // Reserve the legend's height (heading, entries, footnote) at the panel's foot.
        #[allow(clippy::cast_precision_loss)]
        let legend_h = 40.0 + 16.0 * scene.legend.len() as f64;
        for k in &scene.kernels {
            if y > p.bottom() - legend_h - 31.0 {
                let _ = writeln!(
                    s,
                    r##"<text x="{:.1}" y="{y:.1}" fill="#555">…</text>"##,
                    p.x
                );
                y += 16.0;
                break;
            }
            let _ = writeln!(
                s,
                r##"<text x="{:.1}" y="{y:.1}" fill="#111"><title>{}</title>{}. {}</text>"##,
                p.x,
                esc(&k.full_name),
                k.rank,
                esc(&truncate(&k.name, chars.saturating_sub(4)))
            );
            let _ = writeln!(
                s,
                r##"<text x="{:.1}" y="{:.1}" font-size="10.5" fill="#555">{}</text>"##,
                p.x + 14.0,
                y + 13.0,
                esc(&truncate(&k.brief, chars))
            );
            y += 31.0;
        }
        // The legend sits in its reserved band at the foot of the panel.
        let _ = y;
        y = p.bottom() - legend_h + 16.0;
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{y:.1}" font-weight="bold" fill="#111">Legend</text>"##,
            p.x
        );
        y += 16.0;
        for e in &scene.legend {
            let _ = writeln!(
                s,
                r#"<rect x="{:.1}" y="{:.1}" width="12" height="12" rx="2" fill="{}"/>"#,
                p.x,
                y - 10.0,
                style::legend(e.role)
            );
            let _ = writeln!(
                s,
                r##"<text x="{:.1}" y="{y:.1}" font-size="10.5" fill="#333">{}</text>"##,
                p.x + 18.0,
                esc(&truncate(&e.text, chars.saturating_sub(3)))
            );
            y += 16.0;
        }
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" font-size="10.5" fill="#555">Marker area ∝ share of time; dashed = theoretical.</text>"##,
            p.x,
            y + 2.0
        );
    }
    for n in &scene.notes {
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{y_notes:.1}" font-size="10.5" fill="#555">{}</text>"##,
            area.x,
            esc(n)
        );
        y_notes += 14.0;
    }
    let _ = writeln!(s, "</svg>");
    s.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn escaping_and_truncation() {
        assert_eq!(esc("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
        assert_eq!(esc("x\u{FFFE}\u{FFFF}\u{FDD0}\u{1}y"), "xy");
    }
}
