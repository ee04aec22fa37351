//! The one renderer of a chart [`Scene`]: SVG markup, for the CLI's export and the viewer alike,
//! so that both draw the same elements at the same places by construction.
//!
//! - [`body`] writes the chart itself: background, title, grid, axes, ceilings and their labels,
//!   a comparison's arrows and gone kernels, the markers and the kernels' names. The viewer sets
//!   it as the content of its `<svg>` element and keeps its own event handling around it (hover,
//!   selection, zoom and pan invert the scene's viewport).
//! - [`document`] composes a standalone SVG around the same body, as `roofline plot` writes it:
//!   the root element with its size and font, a title, the kernels' rank numbers, the list of
//!   kernels beside the plot, the legend and the notes.
//!
//! Colours are presentation attributes from [`crate::chart::style`], which a page's CSS can
//! override (the viewer's dark theme). Classes and data attributes name what each element is
//! (`marker` with `data-kernel`, `data-kind`, `data-x`, `data-y`; `line` with `data-role`;
//! `ceiling-label`, `kernel-label`, `rank`, `arrow`, `gone`, `x-axis`, `y-axis`), for the
//! viewer's styles and the browser tests. Pixel positions are written to a tenth of a pixel;
//! a marker's data position in full (`data-x`, `data-y`). Text is escaped by XML 1.0's rules.

use std::fmt::Write as _;

use crate::analysis::names::truncate;
use crate::chart::overlay::Overlay;
use crate::chart::{Anchor, Label, LineRole, MarkerKind, Scene, rank_labels, style};

/// What [`body`] and [`document`] draw besides the scene.
#[derive(Debug, Clone, Copy, Default)]
pub struct SvgOptions<'a> {
    /// A comparison with a baseline run, in the scene's pixel space: arrows from the baseline's
    /// points, gone kernels as dashed rings, new kernels' markers with a thicker ring.
    pub overlay: Option<&'a Overlay>,
    /// Kernel names placed beside their markers ([`crate::chart::kernel_labels`]).
    pub kernel_labels: &'a [Label],
    /// Each marker carries a `<title>` with its kernel's figures: the tooltip of a standalone
    /// SVG (the viewer draws its own).
    pub marker_titles: bool,
}

/// The font of a standalone SVG (the one the label extents are estimated for comes first).
const FONT: &str = "DejaVu Sans, Helvetica, Arial, sans-serif";

/// The id of the plot area's clip path, which [`body`] defines: what a page drawing over the
/// chart clips to.
pub const CLIP_ID: &str = "plot-clip";

/// Escapes text for SVG content and attribute values (XML 1.0: the five markup characters as
/// entities; control characters and the noncharacters U+FDD0..U+FDEF, U+xFFFE and U+xFFFF,
/// which XML 1.0 has no place for, dropped).
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
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
    let mut s = String::with_capacity(pts.len() * 12);
    for (i, (x, y)) in pts.iter().enumerate() {
        let sep = if i == 0 { "" } else { " " };
        let _ = write!(s, "{sep}{x:.1},{y:.1}");
    }
    s
}

/// The name a marker's kind goes by in `data-kind`: a memory level's key, `complexity` or
/// `vertex`.
fn marker_kind_key(k: MarkerKind) -> &'static str {
    match k {
        MarkerKind::Level(l) => l.key(),
        MarkerKind::Complexity => "complexity",
        MarkerKind::TimeVertex => "vertex",
        MarkerKind::Collective(c) => c.key(),
    }
}

/// The chart's elements, to go inside an `<svg>` element whose view box is the scene's size
/// (`0 0 width height`), one per line: what the viewer shows and the body of [`document`].
pub fn body(scene: &Scene, o: &SvgOptions<'_>) -> String {
    let mut s = String::with_capacity(
        4096 + 400 * scene.markers.len() + 200 * (scene.lines.len() + scene.labels.len()),
    );
    frame(&mut s, scene, o.overlay.is_some());
    axes(&mut s, scene);
    lines(&mut s, scene);
    for l in &scene.labels {
        let _ = writeln!(
            s,
            r#"<text class="ceiling-label" data-role="{}" x="{:.1}" y="{:.1}" transform="rotate({:.2} {:.1} {:.1})" text-anchor="{}" font-size="11" fill="{}" stroke="{}" stroke-width="3" paint-order="stroke">{}</text>"#,
            esc(&format!("{:?}", l.role)),
            l.at.0,
            l.at.1,
            l.angle_deg(),
            l.at.0,
            l.at.1,
            anchor(l.anchor),
            style::line(l.role),
            style::BACKGROUND,
            esc(&l.text)
        );
    }
    if let Some(overlay) = o.overlay {
        compare(&mut s, overlay);
    }
    markers(&mut s, scene, o);
    if !o.kernel_labels.is_empty() {
        let _ = writeln!(s, r#"<g class="kernel-labels">"#);
        text_labels(&mut s, o.kernel_labels, "kernel-label", style::LABEL);
        let _ = writeln!(s, "</g>");
    }
    s
}

/// Background, clip path (and the arrowhead of a comparison), title and subtitle.
fn frame(s: &mut String, scene: &Scene, arrows: bool) {
    let area = scene.viewport.area;
    let _ = writeln!(
        s,
        r#"<rect class="bg" width="100%" height="100%" fill="{}"/>"#,
        style::BACKGROUND
    );
    let arrowhead = if arrows {
        format!(
            r#"<marker id="arrowhead" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" markerUnits="userSpaceOnUse" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="{}"/></marker>"#,
            style::ARROW
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        r#"<defs><clipPath id="{CLIP_ID}"><rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}"/></clipPath>{arrowhead}</defs>"#,
        area.x, area.y, area.width, area.height
    );
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="24" font-size="17" font-weight="bold" fill="{}">{}</text>"#,
        area.x,
        style::TEXT,
        esc(&scene.title)
    );
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="42" fill="{}">{}</text>"#,
        area.x,
        style::MUTED,
        esc(&scene.subtitle)
    );
}

/// The grid, the plot's frame, both axes' ticks and labels, and their titles.
fn axes(s: &mut String, scene: &Scene) {
    let area = scene.viewport.area;
    let _ = writeln!(
        s,
        r#"<g class="grid" stroke="{}" stroke-width="1">"#,
        style::GRID
    );
    for (px, _, _) in scene.x_axis.ticks.iter().filter(|t| t.1) {
        let _ = writeln!(
            s,
            r#"<line x1="{px:.1}" y1="{:.1}" x2="{px:.1}" y2="{:.1}"/>"#,
            area.y,
            area.bottom()
        );
    }
    for (py, _, _) in scene.y_axis.ticks.iter().filter(|t| t.1) {
        let _ = writeln!(
            s,
            r#"<line x1="{:.1}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}"/>"#,
            area.x,
            area.right()
        );
    }
    let _ = writeln!(s, "</g>");
    let _ = writeln!(
        s,
        r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="{}"/>"#,
        area.x,
        area.y,
        area.width,
        area.height,
        style::AXIS
    );
    let _ = writeln!(
        s,
        r#"<g class="x-axis" stroke="{0}" fill="{0}">"#,
        style::AXIS
    );
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
    let _ = writeln!(s, "</g>");
    let _ = writeln!(
        s,
        r#"<g class="y-axis" stroke="{0}" fill="{0}">"#,
        style::AXIS
    );
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
        r#"<text x="{cx:.1}" y="{:.1}" text-anchor="middle" font-size="13" fill="{}">{}</text>"#,
        area.bottom() + 40.0,
        style::TEXT,
        esc(&scene.x_axis.title)
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate({:.1},{cy:.1}) rotate(-90)" text-anchor="middle" font-size="13" fill="{}">{}</text>"#,
        area.x - 84.0,
        style::TEXT,
        esc(&scene.y_axis.title)
    );
}

/// Ceilings, boxes and kernel links, clipped to the plot.
fn lines(s: &mut String, scene: &Scene) {
    let _ = writeln!(s, r#"<g clip-path="url(#{CLIP_ID})" fill="none">"#);
    for line in &scene.lines {
        let (width, opacity) = match line.role {
            LineRole::KernelLink { .. } => (1.2, 0.7),
            LineRole::LaunchBox { .. } => (1.5, 1.0),
            LineRole::ZeroBand => (1.0, 0.8),
            _ => (2.2, 1.0),
        };
        let dash = if line.dashed {
            r#" stroke-dasharray="6 4""#
        } else {
            ""
        };
        let _ = writeln!(
            s,
            r#"<polyline class="line" data-role="{}" points="{}" stroke="{}" stroke-width="{width}" stroke-opacity="{opacity}"{dash}/>"#,
            esc(&format!("{:?}", line.role)),
            points(&line.points),
            style::line(line.role)
        );
    }
    let _ = writeln!(s, "</g>");
}

/// A comparison's gone kernels (dashed rings where they were), the matched kernels' baseline
/// points (faint markers) and arrows (from each baseline point to just outside its current
/// marker, [`crate::chart::overlay::Arrow::tip`], so that the head shows; those whose current marker
/// covers them are left out), clipped to the plot and under the markers.
fn compare(s: &mut String, overlay: &Overlay) {
    let _ = writeln!(s, r#"<g class="compare" clip-path="url(#{CLIP_ID})">"#);
    for g in &overlay.gone {
        let _ = writeln!(
            s,
            r#"<circle class="gone" data-kernel="{}" cx="{:.1}" cy="{:.1}" r="{:.1}" fill="none" stroke="{}" stroke-width="1.5" stroke-dasharray="3 2"/>"#,
            esc(&g.kernel),
            g.at.0,
            g.at.1,
            g.radius,
            style::marker(g.kind)
        );
    }
    for a in &overlay.arrows {
        let _ = writeln!(
            s,
            r#"<circle class="baseline" data-kernel="{}" cx="{:.1}" cy="{:.1}" r="{:.1}" fill="{}" fill-opacity="0.25" stroke="{}" stroke-opacity="0.5" stroke-width="1"/>"#,
            esc(&a.kernel),
            a.from.0,
            a.from.1,
            a.from_radius,
            style::marker(a.kind),
            style::marker(a.kind)
        );
    }
    for (a, tip) in overlay
        .arrows
        .iter()
        .filter_map(|a| a.tip().map(|t| (a, t)))
    {
        let _ = writeln!(
            s,
            r#"<line class="arrow" data-kernel="{}" data-kind="{}" x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" data-to-x="{:.1}" data-to-y="{:.1}" stroke="{}" stroke-opacity="0.85" stroke-width="1.4" marker-end="url(#arrowhead)"/>"#,
            esc(&a.kernel),
            marker_kind_key(a.kind),
            a.from.0,
            a.from.1,
            tip.0,
            tip.1,
            a.to.0,
            a.to.1,
            style::ARROW
        );
    }
    let _ = writeln!(s, "</g>");
}

/// The markers, in the scene's order (largest first), clipped to the plot.
fn markers(s: &mut String, scene: &Scene, o: &SvgOptions<'_>) {
    let mut new = vec![false; scene.markers.len()];
    for &i in o.overlay.map_or(&[][..], |ov| &ov.new_markers) {
        if let Some(x) = new.get_mut(i) {
            *x = true;
        }
    }
    let _ = writeln!(s, r#"<g clip-path="url(#{CLIP_ID})">"#);
    for (m, new) in scene.markers.iter().zip(new) {
        let colour = style::marker(m.kind);
        let k = &scene.kernels[m.kernel];
        let (fill, stroke) = match m.kind {
            MarkerKind::TimeVertex => (style::BACKGROUND, colour),
            _ => (colour, style::BACKGROUND),
        };
        let (class, width, stroke) = if new {
            ("marker new", 2.5, style::ARROW)
        } else {
            ("marker", 1.5, stroke)
        };
        let _ = write!(
            s,
            r#"<circle class="{class}" data-kernel="{}" data-kind="{}" data-x="{}" data-y="{}" cx="{:.1}" cy="{:.1}" r="{:.1}" fill="{fill}" fill-opacity="0.85" stroke="{stroke}" stroke-width="{width}""#,
            esc(&k.full_name),
            marker_kind_key(m.kind),
            m.data.0,
            m.data.1,
            m.at.0,
            m.at.1,
            m.radius,
        );
        if o.marker_titles {
            let tip = match m.kind {
                MarkerKind::Level(l) => {
                    format!("{}. {} at {}: {}", k.rank, k.name, l.label(), k.summary)
                }
                MarkerKind::Complexity | MarkerKind::Collective(_) => {
                    format!("{}. {}: {}", k.rank, k.name, k.summary)
                }
                MarkerKind::TimeVertex => format!("{}. {} time vertex", k.rank, k.name),
            };
            let _ = writeln!(s, "><title>{}</title></circle>", esc(&tip));
        } else {
            let _ = writeln!(s, "/>");
        }
    }
    let _ = writeln!(s, "</g>");
}

/// Horizontal text labels with a halo of the background's colour (kernel names, ranks).
fn text_labels(s: &mut String, labels: &[Label], class: &str, fill: &str) {
    for l in labels {
        let _ = writeln!(
            s,
            r#"<text class="{class}" x="{:.1}" y="{:.1}" text-anchor="{}" font-size="11" fill="{fill}" stroke="{}" stroke-width="3" paint-order="stroke">{}</text>"#,
            l.at.0,
            l.at.1,
            anchor(l.anchor),
            style::BACKGROUND,
            esc(&l.text)
        );
    }
}

/// The SVG `roofline plot` writes, and the page's importer draws for the charts it draws:
/// [`document`] with each marker's figures as its tooltip (`<title>`).
pub fn plotted(scene: &Scene) -> String {
    document(
        scene,
        &SvgOptions {
            marker_titles: true,
            ..SvgOptions::default()
        },
    )
}

/// A standalone SVG document of the scene, as `roofline plot` writes it: static (no script, no
/// external font or stylesheet), readable on paper and in a browser. Around [`body`]: the root
/// element with the scene's size and a font, a `<title>`, each kernel's rank beside one of its
/// markers ([`rank_labels`]), the list of kernels by share of time and the legend in the scene's
/// side panel (when it has one), and the notes under the plot.
pub fn document(scene: &Scene, o: &SvgOptions<'_>) -> String {
    let (w, h) = (scene.width, scene.height);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" font-family="{FONT}" font-size="12">"#
    );
    let _ = writeln!(
        s,
        "<title>{}</title>",
        esc(&format!("{} — {}", scene.title, scene.subtitle))
    );
    s.push_str(&body(scene, o));
    // Each kernel's rank beside one of its markers, where it covers no marker and no label; the
    // side panel lists the kernels by rank.
    text_labels(&mut s, &rank_labels(scene), "rank", style::TEXT);
    side_panel(&mut s, scene);
    let area = scene.viewport.area;
    let mut y = area.bottom() + 58.0;
    for n in &scene.notes {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{y:.1}" font-size="10.5" fill="{}">{}</text>"#,
            area.x,
            style::MUTED,
            esc(n)
        );
        y += 14.0;
    }
    let _ = writeln!(s, "</svg>");
    s
}

/// The side panel, when the scene has one: the kernels by share of time, then the legend in a
/// band reserved at the panel's foot.
fn side_panel(s: &mut String, scene: &Scene) {
    let Some(p) = scene.side_panel else { return };
    let mut y = p.y + 4.0;
    let _ = writeln!(
        s,
        r##"<text x="{:.1}" y="{y:.1}" font-weight="bold" fill="{fill}">Kernels by share of time</text>"##,
        p.x,
        fill = style::TEXT
    );
    y += 18.0;
    let chars = ((p.width / 6.3) as usize).max(12);
    if scene.kernels.is_empty() {
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{y:.1}" fill="{fill}">none with a point on this chart</text>"##,
            p.x,
            fill = style::MUTED
        );
    }
    // The legend's height (heading, entries, footnote).
    let legend_h = 40.0 + 16.0 * scene.legend.len() as f64;
    for k in &scene.kernels {
        if y > p.bottom() - legend_h - 31.0 {
            let _ = writeln!(
                s,
                r##"<text x="{:.1}" y="{y:.1}" fill="{fill}">…</text>"##,
                p.x,
                fill = style::MUTED
            );
            break;
        }
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{y:.1}" fill="{fill}"><title>{}</title>{}. {}</text>"##,
            p.x,
            esc(&k.full_name),
            k.rank,
            esc(&truncate(&k.name, chars.saturating_sub(4))),
            fill = style::TEXT
        );
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" font-size="10.5" fill="{fill}">{}</text>"##,
            p.x + 14.0,
            y + 13.0,
            esc(&truncate(&k.brief, chars)),
            fill = style::MUTED
        );
        y += 31.0;
    }
    let mut y = p.bottom() - legend_h + 16.0;
    let _ = writeln!(
        s,
        r##"<text x="{:.1}" y="{y:.1}" font-weight="bold" fill="{fill}">Legend</text>"##,
        p.x,
        fill = style::TEXT
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
            r##"<text x="{:.1}" y="{y:.1}" font-size="10.5" fill="{fill}">{}</text>"##,
            p.x + 18.0,
            esc(&truncate(&e.text, chars.saturating_sub(3))),
            fill = style::AXIS
        );
        y += 16.0;
    }
    let _ = writeln!(
        s,
        r##"<text x="{:.1}" y="{:.1}" font-size="10.5" fill="{fill}">Marker area ∝ share of time; dashed = not measured.</text>"##,
        p.x,
        y + 2.0,
        fill = style::MUTED
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::overlay::{Arrow, GoneMarker};
    use crate::chart::{ChartOptions, hierarchical, kernel_labels, time_based};

    fn example() -> crate::Bundle {
        crate::parse_bundle(include_str!(
            "../../../tests/fixtures/bundles/v100-deepcam-example.json"
        ))
        .unwrap()
    }

    /// Checks that `s` is well-formed markup as far as this renderer writes it: every tag closed
    /// in order, attribute values quoted, no `<`, `>` or bare `&` in text or values.
    fn assert_well_formed(s: &str) {
        let mut open: Vec<&str> = Vec::new();
        let mut rest = s;
        while let Some(i) = rest.find('<') {
            let text = &rest[..i];
            assert!(!text.contains('>'), "stray > in {text:?}");
            for (j, _) in text.match_indices('&') {
                let e = &text[j..];
                assert!(
                    ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"]
                        .iter()
                        .any(|x| e.starts_with(x)),
                    "bare & in {text:?}"
                );
            }
            let end = rest[i..].find('>').expect("an unclosed tag") + i;
            let tag = &rest[i + 1..end];
            assert!(!tag.contains('<'), "< inside tag {tag:?}");
            assert_eq!(
                tag.matches('"').count() % 2,
                0,
                "unbalanced quotes in {tag:?}"
            );
            if let Some(name) = tag.strip_prefix('/') {
                assert_eq!(open.pop(), Some(name), "closing {name}");
            } else if !tag.ends_with('/') {
                open.push(tag.split_whitespace().next().unwrap());
            }
            rest = &rest[end + 1..];
        }
        assert!(open.is_empty(), "left open: {open:?}");
    }

    #[test]
    fn escaping_follows_xml_1_0() {
        assert_eq!(esc("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
        assert_eq!(esc("x\u{FFFE}\u{FFFF}\u{FDD0}\u{1}y"), "xy");
        assert_eq!(esc("1 launch × 4.5 µs"), "1 launch × 4.5 µs");
    }

    #[test]
    fn every_marker_line_and_label_of_a_scene_is_drawn_with_its_attributes() {
        let b = example();
        for o in [ChartOptions::browser(), ChartOptions::default()] {
            for scene in [hierarchical(&b, &o).unwrap(), time_based(&b, &o).unwrap()] {
                let svg = body(&scene, &SvgOptions::default());
                assert_well_formed(&svg);
                assert_eq!(svg.matches("<circle ").count(), scene.markers.len());
                for m in &scene.markers {
                    let k = &scene.kernels[m.kernel];
                    let want = format!(
                        r#"<circle class="marker" data-kernel="{}" data-kind="{}" data-x="{}" data-y="{}" cx="{:.1}" cy="{:.1}" r="{:.1}""#,
                        esc(&k.full_name),
                        marker_kind_key(m.kind),
                        m.data.0,
                        m.data.1,
                        m.at.0,
                        m.at.1,
                        m.radius
                    );
                    assert!(svg.contains(&want), "{want}");
                    // The data position reads back exactly.
                    assert_eq!(format!("{}", m.data.0).parse::<f64>().unwrap(), m.data.0);
                }
                assert_eq!(svg.matches("<polyline ").count(), scene.lines.len());
                for l in &scene.lines {
                    let want = format!(
                        r#"<polyline class="line" data-role="{}" points="{}" stroke="{}""#,
                        esc(&format!("{:?}", l.role)),
                        points(&l.points),
                        style::line(l.role)
                    );
                    assert!(svg.contains(&want), "{want}");
                }
                assert_eq!(
                    svg.matches(r#"class="ceiling-label""#).count(),
                    scene.labels.len()
                );
                for l in &scene.labels {
                    assert!(
                        svg.contains(&format!(">{}</text>", esc(&l.text))),
                        "{}",
                        l.text
                    );
                }
                for (_, _, label) in scene.x_axis.ticks.iter().chain(&scene.y_axis.ticks) {
                    if let Some(t) = label {
                        assert!(svg.contains(&format!(r#"stroke="none">{}</text>"#, esc(t))));
                    }
                }
                assert!(
                    svg.contains(r#"<g class="x-axis""#) && svg.contains(r#"<g class="y-axis""#)
                );
                assert!(svg.contains(&format!(
                    r##"y="24" font-size="17" font-weight="bold" fill="#111111">{}<"##,
                    esc(&scene.title)
                )));
                assert!(svg.contains(&format!(
                    r##"y="42" fill="#555555">{}<"##,
                    esc(&scene.subtitle)
                )));
                // Only what was asked for: no names, ranks, titles, comparison or side panel.
                for absent in [
                    "kernel-label",
                    r#"class="rank""#,
                    "<title>",
                    "arrowhead",
                    "class=\"compare\"",
                    "Kernels by share",
                    "<svg",
                ] {
                    assert!(!svg.contains(absent), "{absent}");
                }
            }
        }
    }

    #[test]
    fn kernel_names_are_drawn_when_given() {
        let scene = hierarchical(&example(), &ChartOptions::browser()).unwrap();
        let names = kernel_labels(&scene, 8);
        assert!(names.len() >= 3);
        let svg = body(
            &scene,
            &SvgOptions {
                kernel_labels: &names,
                ..SvgOptions::default()
            },
        );
        assert_well_formed(&svg);
        assert_eq!(svg.matches(r#"class="kernel-label""#).count(), names.len());
        for l in &names {
            assert!(svg.contains(&format!(
                r#"<text class="kernel-label" x="{:.1}" y="{:.1}" text-anchor="{}""#,
                l.at.0,
                l.at.1,
                anchor(l.anchor)
            )));
        }
    }

    #[test]
    fn the_overlay_draws_arrows_gone_kernels_and_new_markers() {
        let scene = time_based(&example(), &ChartOptions::browser()).unwrap();
        let name = |i: usize| scene.kernels[scene.markers[i].kernel].full_name.clone();
        let overlay = Overlay {
            arrows: vec![
                Arrow {
                    kernel: name(0),
                    kind: scene.markers[0].kind,
                    from: (150.0, 300.0),
                    to: scene.markers[0].at,
                    from_radius: 4.0,
                    to_radius: scene.markers[0].radius,
                },
                // Under its current marker: its faint baseline marker only.
                Arrow {
                    kernel: name(1),
                    kind: scene.markers[1].kind,
                    from: (scene.markers[1].at.0 + 0.3, scene.markers[1].at.1),
                    to: scene.markers[1].at,
                    from_radius: 4.0,
                    to_radius: scene.markers[1].radius,
                },
            ],
            new_markers: vec![2, 3],
            gone: vec![GoneMarker {
                kernel: "old<kernel> & \"friends\"".into(),
                kind: MarkerKind::Complexity,
                at: (200.0, 200.0),
                radius: 5.0,
            }],
        };
        let svg = body(
            &scene,
            &SvgOptions {
                overlay: Some(&overlay),
                ..SvgOptions::default()
            },
        );
        assert_well_formed(&svg);
        assert!(svg.contains(r#"<marker id="arrowhead""#));
        assert_eq!(svg.matches(r#"<line class="arrow""#).count(), 1);
        let a = &overlay.arrows[0];
        let tip = a.tip().unwrap();
        assert!(svg.contains(&format!(
            r#"<line class="arrow" data-kernel="{}" data-kind="{}" x1="150.0" y1="300.0" x2="{:.1}" y2="{:.1}" data-to-x="{:.1}" data-to-y="{:.1}""#,
            esc(&a.kernel),
            marker_kind_key(a.kind),
            tip.0,
            tip.1,
            a.to.0,
            a.to.1
        )));
        // The head ends just outside the current marker, on the line to its centre.
        let gap = (a.to.0 - tip.0).hypot(a.to.1 - tip.1);
        assert!((gap - a.to_radius - 1.5).abs() < 1e-9, "{gap}");
        // A faint marker at each baseline point.
        assert_eq!(svg.matches(r#"<circle class="baseline""#).count(), 2);
        assert!(svg.contains(r#"<circle class="baseline" data-kernel=""#));
        assert!(svg.contains(
            r#"<circle class="gone" data-kernel="old&lt;kernel&gt; &amp; &quot;friends&quot;" cx="200.0" cy="200.0" r="5.0""#
        ));
        assert_eq!(svg.matches(r#"class="marker new""#).count(), 2);
        assert_eq!(svg.matches(r#"stroke-width="2.5""#).count(), 2);
        // The comparison lies under the markers.
        assert!(svg.find("class=\"compare\"") < svg.find("class=\"marker"));
    }

    #[test]
    fn a_document_composes_around_the_same_body() {
        let mut b = example();
        b.kernels[0].name = "k</title><script>alert('x')</script>".into();
        let scene = hierarchical(&b, &ChartOptions::default()).unwrap();
        let o = SvgOptions {
            marker_titles: true,
            ..SvgOptions::default()
        };
        let doc = document(&scene, &o);
        assert_well_formed(&doc);
        assert!(doc.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg" width="960" height="640" viewBox="0 0 960 640""#));
        assert!(doc.contains(&body(&scene, &o)));
        assert!(!doc.contains("<script"));
        assert_eq!(
            doc.matches(r#"<text class="rank""#).count(),
            rank_labels(&scene).len()
        );
        assert!(doc.contains("Kernels by share of time") && doc.contains(">Legend<"));
        for n in &scene.notes {
            assert!(doc.contains(&format!(">{}</text>", esc(n))));
        }
        for e in &scene.legend {
            assert!(doc.contains(&format!(r#"fill="{}"/>"#, style::legend(e.role))));
        }
        // Every marker has its tooltip.
        assert_eq!(
            doc.matches("</title></circle>").count(),
            scene.markers.len()
        );
        // Without a side panel: no list, no legend.
        let plain = document(&scene_without_panel(&b), &SvgOptions::default());
        assert_well_formed(&plain);
        assert!(!plain.contains("Kernels by share of time"));
    }

    fn scene_without_panel(b: &crate::Bundle) -> Scene {
        let o = ChartOptions {
            side_panel: 0.0,
            ..ChartOptions::default()
        };
        hierarchical(b, &o).unwrap()
    }
}
