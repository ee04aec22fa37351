//! The standalone HTML page: the viewer, its bundles and its view in one file that opens from
//! disk (`file://`) or an e-mail attachment, with no server.
//!
//! One format, built here by pure functions, so that the viewer's "Save as HTML" button and
//! `roofline plot --format html` write the same bytes for the same inputs:
//!
//! - [`template`] makes the page without data from the viewer's wasm-bindgen glue (inlined as a
//!   module script: a `file://` page may not fetch or import other files) and its wasm, gzipped
//!   and base64-encoded (the page inflates it with the browser's `DecompressionStream`).
//!   `cargo xtask web` writes it as `dist/standalone.html`; the collector embeds that file; a
//!   standalone page rebuilds it from its own two scripts ([`glue_of`]).
//! - [`fill`] puts the bundles and the view (the query string the viewer understands) into a
//!   template, each in a `<script type="application/json">` element; [`read`] takes them back.
//!
//! Inside an HTML `<script>` element nothing is decoded and the first `</script` ends it, so the
//! JSON is made safe by writing every `<` as `\u003c`: valid JSON holds `<` only inside strings,
//! where the escape means the same character (RFC 8259 §7), and the element then holds no `<` at
//! all (no `</script>`, no `<!--`; HTML Living Standard, "Restrictions for contents of script
//! elements").

/// The version of the page's data ([`Manifest::format`]); a page of another version is refused.
pub const FORMAT: u32 = 1;

/// Where [`fill`] puts the data: once in a template, gone from a filled page.
pub const DATA_MARKER: &str = "<!--roofline:data-->";

/// The opening tag of the manifest's element.
const MANIFEST_OPEN: &str = r#"<script type="application/json" id="roofline-manifest">"#;
/// The opening tag of each bundle's element, in the manifest's order.
const BUNDLE_OPEN: &str = r#"<script type="application/json" class="roofline-bundle">"#;
const CLOSE: &str = "</script>";
/// The opening tag of the gzipped, base64-encoded wasm.
const WASM_OPEN: &str = r#"<script type="application/octet-stream" id="roofline-wasm">"#;
/// The opening tag of the module script: the glue, then [`BOOT`].
const APP_OPEN: &str = r#"<script type="module" id="roofline-app">"#;
/// The page's styles' element: the viewer's styles (`viewer/web/viewer.css`, which the served
/// pages link), inlined so that a standalone page needs nothing beside it.
const CSS_OPEN: &str = r#"<style id="roofline-css">"#;

/// What the page runs after the glue: inflate the wasm and start the viewer (wasm-bindgen's
/// `__wbg_init`, the glue's default export, given the module's bytes: nothing is fetched).
const BOOT: &str = r#"// roofline standalone page: start the viewer from the wasm above, with no server.
try {
  if (typeof DecompressionStream !== "function") {
    throw new Error("this browser cannot inflate the embedded viewer (no DecompressionStream); open the file in a current Chromium, Firefox or Safari");
  }
  const packed = document.getElementById("roofline-wasm").textContent;
  const gz = Uint8Array.from(atob(packed), (c) => c.charCodeAt(0));
  const wasm = await new Response(new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip"))).arrayBuffer();
  await __wbg_init({ module_or_path: wasm });
} catch (e) {
  document.body.textContent = "The viewer failed to start: " + e;
}
"#;

/// The page around the data and the viewer; `{DATA}`, `{WASM}` and `{APP}` are filled in.
const PAGE: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="roofline standalone page, format 1">
<title>roofline viewer</title>
<noscript>The roofline viewer needs JavaScript and WebAssembly.</noscript>
{CSS}
{DATA}
{WASM}
{APP}
</head>
<body></body>
</html>
"#;

/// The chart-only page's own script (`embed_page.js`): the chart switch, the "open in the full
/// viewer" link, and the page's height posted to the page around it
/// (`{type: "roofline:height", height}`; `dist/embed.js` sizes the iframe). Plain script, kept out
/// of the viewer's wasm; `embed.html` holds the same text (a test checks it).
pub const EMBED_SCRIPT: &str = include_str!("../../../viewer/web/embed_page.js");

/// The chart-only page's bar above the chart: the chart switch, then `{LINK}`.
const EMBED_BAR: &str = r#"<style>
#roofline-embed-bar { display: flex; flex-wrap: wrap; gap: 4px 10px; align-items: center; font: 12px system-ui, sans-serif; margin: 0 0 4px; }
#roofline-embed-bar button { font: inherit; padding: 1px 8px; border: 1px solid #aab; background: #f4f5f7; color: #111; border-radius: 3px; cursor: pointer; }
#roofline-embed-bar button[aria-pressed=true] { background: #1e2126; color: #fff; border-color: #1e2126; }
#roofline-full { margin-left: auto; color: #0b62a4; }
</style>
<nav id="roofline-embed-bar" aria-label="chart"><button type="button" data-chart="hierarchical">Hierarchical</button><button type="button" data-chart="time">Time-based</button>{LINK}</nav>
"#;

/// The text of the link to the full viewer.
pub const FULL_VIEWER_LINK: &str = "open in the full viewer";

/// What went wrong building or reading a standalone page.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StandaloneError {
    /// The glue given to [`template`] is not what the page can inline.
    #[error("the viewer's script cannot be inlined: {0}")]
    Glue(&'static str),
    /// The wasm given to [`template`] is not base64 text.
    #[error("the viewer's wasm is not base64 text (byte {0})")]
    Wasm(usize),
    /// The template given to [`fill`] lacks its data marker, or has it more than once.
    #[error(
        "not a standalone page template: it must hold `<!--roofline:data-->` exactly once, and holds it {0} times (a page already filled holds it no more)"
    )]
    NotATemplate(usize),
    /// The bundles do not match the manifest, or are not one current run and at most one
    /// baseline.
    #[error("{0}")]
    Bundles(String),
    /// A bundle's bytes are not UTF-8.
    #[error("bundle {name}: not UTF-8 text (byte {offset})")]
    NotUtf8 {
        /// The bundle's name.
        name: String,
        /// Where the first invalid byte is.
        offset: usize,
    },
    /// The template given to [`embed`] is not [`template`]'s, or the link cannot be one.
    #[error("the chart-only page: {0}")]
    Embed(String),
    /// The page holds no data, or its data is cut short.
    #[error("not a standalone roofline page: {0}")]
    NotAPage(&'static str),
    /// The manifest is not what [`fill`] writes.
    #[error("the page's manifest is not readable: {0}")]
    Manifest(String),
    /// The page was written in another format version.
    #[error("this page's data is format {found}; this viewer reads format {FORMAT}")]
    Format {
        /// The page's version.
        found: u32,
    },
}

/// One bundle of a page: its name (a file name) and whether it is the compared-with baseline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The name the viewer shows, and names the saved file after.
    pub name: String,
    /// The baseline of compare mode, rather than the run shown.
    pub baseline: bool,
}

/// The page's data besides the bundles: their names and roles, and the view.
///
/// As JSON (written and read by hand: serde's serializer would cost the viewer's wasm more
/// than this page's whole code): `{"format":1,"query":"…","bundles":[{"name":"…"},
/// {"name":"…","baseline":true}]}`; no other field is accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// [`FORMAT`].
    pub format: u32,
    /// The view as the viewer's URL query (without `?`, `bundle=` or `baseline=`), for example
    /// `chart=time&top=30&labels=5`.
    pub query: String,
    /// The bundles, in the order of their elements: the run shown first.
    pub bundles: Vec<Entry>,
}

impl Manifest {
    /// A manifest of the current format.
    pub fn new(query: impl Into<String>, bundles: Vec<Entry>) -> Self {
        Manifest {
            format: FORMAT,
            query: query.into(),
            bundles,
        }
    }

    /// The JSON [`fill`] writes, already safe inside a `<script>` element.
    fn to_json(&self) -> String {
        let mut out = format!("{{\"format\":{},\"query\":", self.format);
        json_string(&self.query, &mut out);
        out.push_str(",\"bundles\":[");
        for (i, e) in self.bundles.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"name\":");
            json_string(&e.name, &mut out);
            if e.baseline {
                out.push_str(",\"baseline\":true");
            }
            out.push('}');
        }
        out.push_str("]}");
        out
    }

    /// Checks the roles: at least one run shown, the first, and at most one baseline.
    fn check(&self) -> Result<(), StandaloneError> {
        if self.format != FORMAT {
            return Err(StandaloneError::Format { found: self.format });
        }
        match self.bundles.first() {
            None => Err(StandaloneError::Bundles("a page needs a bundle".into())),
            Some(e) if e.baseline => Err(StandaloneError::Bundles(
                "the first bundle of a page is the run shown, not a baseline".into(),
            )),
            _ if self.bundles.iter().filter(|e| e.baseline).count() > 1 => Err(
                StandaloneError::Bundles("a page compares with one baseline at most".into()),
            ),
            _ => Ok(()),
        }
    }
}

/// A page read back by [`read`]: the manifest, and each bundle's JSON text in its order (as
/// written: a `<` in the original reads `\u003c`, which a JSON reader decodes to `<`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    /// Names, roles and the view.
    pub manifest: Manifest,
    /// The bundles' JSON texts.
    pub bundles: Vec<String>,
}

/// `s` as a JSON string, every `<` written `\u003c` (RFC 8259 §7).
fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '<' => out.push_str("\\u003c"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// JSON text made safe inside a `<script>` element: every `<` written `\u003c`.
fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
}

/// The standalone page without data, from the viewer's wasm-bindgen glue (`--target web`
/// output) and its wasm, gzipped then base64-encoded (standard alphabet, with padding).
///
/// The glue's line ends are written as LF, as an HTML parser reads them, so that [`glue_of`] on
/// a page gives back the glue that rebuilds the same template.
///
/// # Errors
/// [`StandaloneError::Glue`] when the glue would end its element early or is not wasm-bindgen's
/// (`__wbg_init`); [`StandaloneError::Wasm`] when the wasm text is not base64.
pub fn template(glue: &str, wasm_gzip_base64: &str, css: &str) -> Result<String, StandaloneError> {
    let glue = glue.replace("\r\n", "\n").replace('\r', "\n");
    let lower = glue.to_ascii_lowercase();
    if lower.contains("</script") || lower.contains("<!--") || lower.contains("<script") {
        return Err(StandaloneError::Glue(
            "it holds `</script`, `<script` or `<!--`",
        ));
    }
    if !glue.contains("__wbg_init") {
        return Err(StandaloneError::Glue(
            "it is not wasm-bindgen's `--target web` output (no `__wbg_init`)",
        ));
    }
    if let Some(i) = wasm_gzip_base64
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'='))
    {
        return Err(StandaloneError::Wasm(i));
    }
    if css.to_ascii_lowercase().contains("</style") {
        return Err(StandaloneError::Glue("its styles hold `</style`"));
    }
    let wasm = format!("{WASM_OPEN}{wasm_gzip_base64}{CLOSE}");
    let app = format!("{APP_OPEN}{glue}\n{BOOT}{CLOSE}");
    Ok(PAGE
        .replacen("{CSS}", &format!("{CSS_OPEN}{css}</style>"), 1)
        .replacen("{DATA}", DATA_MARKER, 1)
        .replacen("{WASM}", &wasm, 1)
        .replacen("{APP}", &app, 1))
}

/// The chart-only page for iframes (`roofline plot --format html --embed`) from a [`template`]:
/// the same page, whose `<body data-embed="true">` makes the viewer mount its chart-only chrome
/// (hover, zoom, pan; no pickers, toolbar or table), with a bar above the chart holding the chart
/// switch and, when `link` is given, a link "open in the full viewer" to it (opened in a new
/// tab), and [`EMBED_SCRIPT`]. [`fill`] fills it as any template.
///
/// # Errors
/// [`StandaloneError::Embed`] when `template` is not [`template`]'s (or is already a chart-only
/// one), or `link` is neither a relative URL nor an `http`/`https` one.
pub fn embed(template: &str, link: Option<&str>) -> Result<String, StandaloneError> {
    const BODY: &str = "<body></body>";
    if template.matches(BODY).count() != 1 || !template.contains(DATA_MARKER) {
        return Err(StandaloneError::Embed(
            "the template is not one `template` made (no empty `<body></body>`, or no data marker)"
                .into(),
        ));
    }
    let link = match link {
        None => String::new(),
        Some(url) => {
            // A scheme is what comes before a `:` that precedes any `/`, `?` or `#`.
            let scheme = url
                .split(['/', '?', '#'])
                .next()
                .and_then(|head| head.split_once(':'))
                .map(|(s, _)| s.to_ascii_lowercase());
            if url.trim().is_empty() || url.chars().any(char::is_control) {
                return Err(StandaloneError::Embed(
                    "the link is empty or holds control characters".into(),
                ));
            }
            if scheme.is_some_and(|s| s != "http" && s != "https") {
                return Err(StandaloneError::Embed(format!(
                    "the link {url:?} is neither relative nor http(s)"
                )));
            }
            format!(
                r#"<a id="roofline-full" href="{}" target="_blank" rel="noopener">{FULL_VIEWER_LINK} ↗</a>"#,
                attribute(url)
            )
        }
    };
    let body = format!(
        "<body data-embed=\"true\">\n{}<script>\n{EMBED_SCRIPT}</script>\n</body>",
        EMBED_BAR.replacen("{LINK}", &link, 1)
    );
    Ok(template.replacen(BODY, &body, 1).replacen(
        "<title>roofline viewer</title>",
        "<title>roofline chart</title>",
        1,
    ))
}

/// `s` as an HTML attribute value (inside double quotes).
fn attribute(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The glue inside a page's module script (`#roofline-app`'s text), for [`template`]; `None`
/// when the script is not one [`template`] wrote.
pub fn glue_of(app_script: &str) -> Option<&str> {
    app_script.strip_suffix(BOOT)?.strip_suffix('\n')
}

/// The viewer's styles a page holds (`#roofline-css`'s text), for [`template`]; `None` when the
/// page holds none.
pub fn css_of(page: &str) -> Option<&str> {
    let from = page.find(CSS_OPEN)? + CSS_OPEN.len();
    let len = page[from..].find("</style>")?;
    Some(&page[from..from + len])
}

/// A template filled with bundles and a view: the page to save.
///
/// `bundles` holds each bundle's bytes in the manifest's order: JSON text, UTF-8 (a byte-order
/// mark is dropped), which the caller has read as a bundle.
///
/// # Errors
/// [`StandaloneError::NotATemplate`] for a template without exactly one data marker;
/// [`StandaloneError::Bundles`] when the bundles and the manifest's entries differ in number or
/// the roles are not one run shown (first) and at most one baseline; [`StandaloneError::NotUtf8`].
pub fn fill(
    template: &str,
    manifest: &Manifest,
    bundles: &[&[u8]],
) -> Result<String, StandaloneError> {
    let markers = template.matches(DATA_MARKER).count();
    if markers != 1 {
        return Err(StandaloneError::NotATemplate(markers));
    }
    manifest.check()?;
    if bundles.len() != manifest.bundles.len() {
        return Err(StandaloneError::Bundles(format!(
            "{} bundles for {} names",
            bundles.len(),
            manifest.bundles.len()
        )));
    }
    let manifest_json = manifest.to_json();
    let mut data = String::with_capacity(bundles.iter().map(|b| b.len() + 64).sum::<usize>() + 256);
    data.push_str(MANIFEST_OPEN);
    data.push_str(&manifest_json);
    data.push_str(CLOSE);
    for (bytes, entry) in bundles.iter().zip(&manifest.bundles) {
        let text = std::str::from_utf8(bytes).map_err(|e| StandaloneError::NotUtf8 {
            name: entry.name.clone(),
            offset: e.valid_up_to(),
        })?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        data.push('\n');
        data.push_str(BUNDLE_OPEN);
        data.push_str(&script_safe(text));
        data.push_str(CLOSE);
    }
    Ok(template.replacen(DATA_MARKER, &data, 1))
}

/// The text of the element that `open` starts, from `at`; with where it ends.
fn element<'a>(html: &'a str, open: &str, at: usize) -> Option<(&'a str, usize)> {
    let start = at + html.get(at..)?.find(open)? + open.len();
    let len = html[start..].find(CLOSE)?;
    Some((&html[start..start + len], start + len + CLOSE.len()))
}

/// The manifest from its element's text (what the viewer reads from its own page).
///
/// # Errors
/// [`StandaloneError::Manifest`] when it is not the JSON [`fill`] writes;
/// [`StandaloneError::Format`] for another version; [`StandaloneError::Bundles`] for impossible
/// roles.
pub fn read_manifest(json: &str) -> Result<Manifest, StandaloneError> {
    use serde_json::Value;
    let bad = |what: &str| StandaloneError::Manifest(what.to_string());
    // As text, as the viewer reads bundles and its sample list: one JSON reader in the wasm.
    let value: Value =
        serde_json::from_str(json).map_err(|e| StandaloneError::Manifest(e.to_string()))?;
    let obj = value.as_object().ok_or_else(|| bad("not a JSON object"))?;
    // The version first, so that a page of another format says so rather than naming a field.
    let format = obj
        .get("format")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad("no `format` number"))?;
    if format != u64::from(FORMAT) {
        return Err(StandaloneError::Format {
            found: u32::try_from(format).unwrap_or(u32::MAX),
        });
    }
    if let Some(k) = obj
        .keys()
        .find(|k| !["format", "query", "bundles"].contains(&k.as_str()))
    {
        return Err(StandaloneError::Manifest(format!("unknown field `{k}`")));
    }
    let query = obj
        .get("query")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("no `query` string"))?;
    let list = obj
        .get("bundles")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no `bundles` list"))?;
    let mut bundles = Vec::with_capacity(list.len());
    for (i, e) in list.iter().enumerate() {
        let e = e
            .as_object()
            .ok_or_else(|| StandaloneError::Manifest(format!("bundles[{i}] is not an object")))?;
        if let Some(k) = e
            .keys()
            .find(|k| !["name", "baseline"].contains(&k.as_str()))
        {
            return Err(StandaloneError::Manifest(format!(
                "bundles[{i}]: unknown field `{k}`"
            )));
        }
        let name = e.get("name").and_then(Value::as_str).ok_or_else(|| {
            StandaloneError::Manifest(format!("bundles[{i}] has no `name` string"))
        })?;
        let baseline = match e.get("baseline") {
            None => false,
            Some(b) => b.as_bool().ok_or_else(|| {
                StandaloneError::Manifest(format!("bundles[{i}].baseline is not true or false"))
            })?,
        };
        bundles.push(Entry {
            name: name.to_string(),
            baseline,
        });
    }
    let manifest = Manifest {
        format: FORMAT,
        query: query.to_string(),
        bundles,
    };
    manifest.check()?;
    Ok(manifest)
}

/// The data of a page [`fill`] wrote.
///
/// # Errors
/// [`StandaloneError::NotAPage`] when the page holds no manifest or fewer bundles than it names;
/// the errors of [`read_manifest`].
pub fn read(html: &str) -> Result<Saved, StandaloneError> {
    let (json, mut at) = element(html, MANIFEST_OPEN, 0)
        .ok_or(StandaloneError::NotAPage("it holds no roofline data"))?;
    let manifest = read_manifest(json)?;
    let mut bundles = Vec::with_capacity(manifest.bundles.len());
    for _ in &manifest.bundles {
        let (text, end) = element(html, BUNDLE_OPEN, at).ok_or(StandaloneError::NotAPage(
            "it holds fewer bundles than it names",
        ))?;
        bundles.push(text.to_string());
        at = end;
    }
    Ok(Saved { manifest, bundles })
}

/// A query string of `name=value` pairs in the order given, encoded as a browser's
/// `URLSearchParams` writes it (the `application/x-www-form-urlencoded` serializer of the URL
/// Standard: ASCII letters, digits and `*-._` as they are, space as `+`, every other byte of the
/// UTF-8 as `%XX`), so that the CLI writes the view as the viewer does.
pub fn query(pairs: &[(&str, &str)]) -> String {
    fn encode(s: &str, out: &mut String) {
        for b in s.bytes() {
            match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                    out.push(char::from(b));
                }
                b' ' => out.push('+'),
                _ => out.push_str(&format!("%{b:02X}")),
            }
        }
    }
    let mut out = String::new();
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        encode(k, &mut out);
        out.push('=');
        encode(v, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSS: &str = "body { margin: 0; }\n";

    const GLUE: &str = "let wasm;\r\nasync function __wbg_init(module_or_path) { return 1; }\nexport { __wbg_init as default };\n";
    const WASM: &str = "H4sIAAAAAAAA/wMAAAAAAAAAAAA=";

    fn bundle_text() -> String {
        let mut b: serde_json::Value = serde_json::from_str(include_str!(
            "../../../tests/fixtures/bundles/v100-deepcam-example.json"
        ))
        .unwrap();
        b["kernels"][0]["name"] = serde_json::json!("evil</script><script>alert(1)</script><!--");
        serde_json::to_string_pretty(&b).unwrap()
    }

    fn page(template: &str, text: &str) -> String {
        let m = Manifest::new(
            "chart=time&top=30",
            vec![
                Entry {
                    name: "run</script>.json".into(),
                    baseline: false,
                },
                Entry {
                    name: "base.json".into(),
                    baseline: true,
                },
            ],
        );
        fill(template, &m, &[text.as_bytes(), b"{\"a\": 1}"]).unwrap()
    }

    #[test]
    fn round_trip_keeps_bundles_names_roles_and_view() {
        let t = template(GLUE, WASM, CSS).unwrap();
        let text = bundle_text();
        let html = page(&t, &text);
        let saved = read(&html).unwrap();
        assert_eq!(saved.manifest.query, "chart=time&top=30");
        assert_eq!(saved.manifest.bundles[0].name, "run</script>.json");
        assert!(!saved.manifest.bundles[0].baseline);
        assert!(saved.manifest.bundles[1].baseline);
        assert_eq!(saved.bundles[1], "{\"a\": 1}");
        // The bundle reads back as the same bundle, its hostile kernel name intact.
        let back = crate::parse_bundle(&saved.bundles[0]).unwrap();
        let orig = crate::parse_bundle(&text).unwrap();
        assert_eq!(back, orig);
        assert_eq!(
            back.kernels[0].name,
            "evil</script><script>alert(1)</script><!--"
        );
        // Only the `<` changed.
        assert_eq!(saved.bundles[0].replace("\\u003c", "<"), text);
    }

    #[test]
    fn no_data_element_can_end_early() {
        let t = template(GLUE, WASM, CSS).unwrap();
        let html = page(&t, &bundle_text());
        // Exactly the elements the template and fill wrote end with `</script>`: manifest,
        // two bundles, wasm, app; and the data holds no `<` at all.
        assert_eq!(html.matches("</script").count(), 5);
        let (start, end) = (
            html.find(MANIFEST_OPEN).unwrap(),
            html.find(WASM_OPEN).unwrap(),
        );
        let data = &html[start..end];
        let inner: String = data
            .replace(MANIFEST_OPEN, "")
            .replace(BUNDLE_OPEN, "")
            .replace(CLOSE, "");
        assert!(!inner.contains('<'), "{inner}");
        assert!(!html.contains(DATA_MARKER));
    }

    #[test]
    fn fill_refuses_what_is_not_a_template() {
        let m = Manifest::new(
            "",
            vec![Entry {
                name: "a.json".into(),
                baseline: false,
            }],
        );
        let plain = "<!DOCTYPE html><html><head></head><body></body></html>";
        assert_eq!(
            fill(plain, &m, &[b"{}"]),
            Err(StandaloneError::NotATemplate(0))
        );
        // A filled page is no template any more.
        let t = template(GLUE, WASM, CSS).unwrap();
        let filled = fill(&t, &m, &[b"{}"]).unwrap();
        let e = fill(&filled, &m, &[b"{}"]).unwrap_err();
        assert_eq!(e, StandaloneError::NotATemplate(0));
        assert!(e.to_string().contains("<!--roofline:data-->"), "{e}");
        let twice = format!("{t}{DATA_MARKER}");
        assert_eq!(
            fill(&twice, &m, &[b"{}"]),
            Err(StandaloneError::NotATemplate(2))
        );
    }

    #[test]
    fn fill_checks_bundles_and_roles() {
        let t = template(GLUE, WASM, CSS).unwrap();
        let one = |baseline| Entry {
            name: "a.json".into(),
            baseline,
        };
        let m = Manifest::new("", vec![one(false)]);
        assert!(matches!(
            fill(&t, &m, &[]),
            Err(StandaloneError::Bundles(_))
        ));
        assert_eq!(
            fill(&t, &m, &[b"{\"x\": \"\xff\"}"]),
            Err(StandaloneError::NotUtf8 {
                name: "a.json".into(),
                offset: 7
            })
        );
        for bad in [
            vec![],
            vec![one(true)],
            vec![one(false), one(true), one(true)],
        ] {
            let n = bad.len();
            let m = Manifest::new("", bad);
            let texts = vec![&b"{}"[..]; n];
            assert!(
                matches!(fill(&t, &m, &texts), Err(StandaloneError::Bundles(_))),
                "{m:?}"
            );
        }
        // A byte-order mark is dropped.
        let html = fill(&t, &m, &["\u{feff}{}".as_bytes()]).unwrap();
        assert_eq!(read(&html).unwrap().bundles, vec!["{}".to_string()]);
    }

    #[test]
    fn template_refuses_glue_that_would_break_the_page() {
        assert!(template("x</SCRIPT>__wbg_init", WASM, CSS).is_err());
        assert!(template("x<!-- __wbg_init", WASM, CSS).is_err());
        assert!(template("export default init;", WASM, CSS).is_err());
        assert_eq!(
            template(GLUE, "abc<def", CSS),
            Err(StandaloneError::Wasm(3))
        );
    }

    #[test]
    fn the_template_is_rebuilt_from_its_own_scripts() {
        let t = template(GLUE, WASM, CSS).unwrap();
        let (app, _) = element(&t, APP_OPEN, 0).unwrap();
        let (wasm, _) = element(&t, WASM_OPEN, 0).unwrap();
        assert_eq!(wasm, WASM);
        let glue = glue_of(app).unwrap();
        assert!(!glue.contains('\r'));
        let css = css_of(&t).unwrap();
        assert_eq!(css, CSS);
        assert_eq!(template(glue, wasm, css).unwrap(), t);
        assert!(template(GLUE, WASM, "a</STYLE>").is_err());
        assert_eq!(glue_of("something else"), None);
    }

    #[test]
    fn read_refuses_other_pages_and_formats() {
        assert_eq!(
            read("<html></html>"),
            Err(StandaloneError::NotAPage("it holds no roofline data"))
        );
        let t = template(GLUE, WASM, CSS).unwrap();
        let html = page(&t, "{}");
        let cut = &html[..html.find(BUNDLE_OPEN).unwrap()];
        assert_eq!(
            read(cut),
            Err(StandaloneError::NotAPage(
                "it holds fewer bundles than it names"
            ))
        );
        let newer = html.replace("\"format\":1", "\"format\":2");
        assert_eq!(read(&newer), Err(StandaloneError::Format { found: 2 }));
        assert!(matches!(
            read_manifest(r#"{"format":1,"query":"","bundles":[{"name":"a","extra":1}]}"#),
            Err(StandaloneError::Manifest(_))
        ));
    }

    #[test]
    fn the_manifest_is_json_a_json_reader_reads() {
        let m = Manifest::new(
            "a=1&b=<\"\\\n",
            vec![
                Entry {
                    name: "x</script>\u{1}é.json".into(),
                    baseline: false,
                },
                Entry {
                    name: "y".into(),
                    baseline: true,
                },
            ],
        );
        let json = m.to_json();
        assert!(!json.contains('<'), "{json}");
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["query"], "a=1&b=<\"\\\n");
        assert_eq!(v["bundles"][0]["name"], "x</script>\u{1}é.json");
        assert_eq!(v["bundles"][1]["baseline"], true);
        assert_eq!(read_manifest(&json).unwrap(), m);
    }

    #[test]
    fn the_chart_only_page_is_the_same_page_with_its_chrome() {
        let t = template(GLUE, WASM, CSS).unwrap();
        let e = embed(&t, None).unwrap();
        assert!(e.contains("<body data-embed=\"true\">"));
        assert!(e.contains(EMBED_SCRIPT));
        assert!(e.contains("<title>roofline chart</title>"));
        assert!(
            !e.contains(r#"id="roofline-full""#),
            "no link without a URL"
        );
        // Filled and read back as any page; nothing in the chrome ends an element early.
        let html = page(&e, &bundle_text());
        assert_eq!(read(&html).unwrap().manifest.query, "chart=time&top=30");
        assert_eq!(html.matches("</script").count(), 6);
        // With a link, escaped as an attribute, opened in a new tab.
        let e = embed(
            &t,
            Some("https://example.org/v/?bundle=a.json&chart=time\"><x"),
        )
        .unwrap();
        assert!(e.contains(r#"<a id="roofline-full" href="https://example.org/v/?bundle=a.json&amp;chart=time&quot;&gt;&lt;x" target="_blank" rel="noopener">open in the full viewer"#), "{e}");
        assert!(embed(&t, Some("full.html")).is_ok());
        assert!(embed(&t, Some("../runs/full.html?x=a:b")).is_ok());
    }

    #[test]
    fn embed_refuses_what_it_cannot_make() {
        let t = template(GLUE, WASM, CSS).unwrap();
        let e = embed(&t, None).unwrap();
        assert!(
            matches!(embed(&e, None), Err(StandaloneError::Embed(_))),
            "twice"
        );
        assert!(matches!(
            embed("<html><body></body></html>", None),
            Err(StandaloneError::Embed(_))
        ));
        for bad in [
            "javascript:alert(1)",
            "JavaScript:x",
            "data:text/html,x",
            " ",
            "a\nb",
        ] {
            assert!(
                matches!(embed(&t, Some(bad)), Err(StandaloneError::Embed(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn the_hosted_embed_page_runs_the_same_script() {
        // embed.html loads the file itself (`cargo xtask web` copies it beside the page).
        let hosted = include_str!("../../../viewer/web/embed.html");
        assert!(
            hosted.contains("<script src=\"embed_page.js\"></script>"),
            "embed.html must load embed_page.js"
        );
        assert!(EMBED_SCRIPT.contains("roofline:height"));
        assert!(hosted.contains("<body data-embed=\"true\">"));
    }

    #[test]
    fn query_is_encoded_as_url_search_params_writes_it() {
        assert_eq!(
            query(&[("device", "GPU 0/a&b=ü"), ("chart", "time"), ("top", "30")]),
            "device=GPU+0%2Fa%26b%3D%C3%BC&chart=time&top=30"
        );
        assert_eq!(query(&[]), "");
    }
}
