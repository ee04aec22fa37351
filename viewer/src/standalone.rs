//! The standalone page from the viewer's side: reading the bundles and view a saved page holds,
//! and "Save as HTML" (the template, filled by `roofline_model::chart::standalone::fill`, the function
//! `roofline plot --format html` calls, offered as a download).
//!
//! Served, the viewer fetches the template `standalone.html` beside it (written by
//! `cargo xtask web`); opened from a saved page, it rebuilds the template from the page's own
//! glue and wasm (`roofline_model::chart::standalone::template`), so a page saved again from a saved
//! page is the same file.

use roofline_model::chart::standalone::{self, Entry, Manifest};

use crate::loading::{Loaded, fetch_bytes};

/// The page's document.
fn document() -> Option<web_sys::Document> {
    web_sys::window()?.document()
}

/// The text of the element with `id`.
fn text_of(doc: &web_sys::Document, id: &str) -> Option<String> {
    doc.get_element_by_id(id)
        .map(|e| e.text_content().unwrap_or_default())
}

/// What a saved standalone page holds: its manifest and each bundle's JSON text, in the
/// manifest's order; or why they cannot be read.
pub type Inlined = Result<(Manifest, Vec<String>), String>;

/// What this page holds when it is a saved standalone page (`None` otherwise).
pub fn inlined() -> Option<Inlined> {
    let doc = document()?;
    let json = text_of(&doc, "roofline-manifest")?;
    Some((|| {
        let manifest = standalone::read_manifest(&json).map_err(|e| e.to_string())?;
        let list = doc
            .query_selector_all("script.roofline-bundle")
            .map_err(|_| "this page's bundles cannot be found".to_string())?;
        let texts: Vec<String> = (0..list.length())
            .filter_map(|i| list.item(i))
            .map(|n| n.text_content().unwrap_or_default())
            .collect();
        if texts.len() != manifest.bundles.len() {
            return Err(format!(
                "this page names {} bundles but holds {}: it was cut short or edited",
                manifest.bundles.len(),
                texts.len()
            ));
        }
        Ok((manifest, texts))
    })())
}

/// The standalone page's template: rebuilt from this page's scripts when it is a standalone
/// page, else fetched from beside the site.
async fn template() -> Result<String, String> {
    let doc = document().ok_or("no document")?;
    if let (Some(app), Some(wasm)) = (
        text_of(&doc, "roofline-app"),
        text_of(&doc, "roofline-wasm"),
    ) {
        let glue = standalone::glue_of(&app)
            .ok_or("this page's script is not the one a standalone page holds")?;
        let css = text_of(&doc, "roofline-css").unwrap_or_default();
        return standalone::template(glue, &wasm, &css).map_err(|e| e.to_string());
    }
    let bytes = fetch_bytes("standalone.html").await.map_err(|e| {
        format!(
            "{e} (the site needs standalone.html beside index.html: `cargo xtask web` writes it)"
        )
    })?;
    String::from_utf8(bytes).map_err(|_| "standalone.html is not UTF-8 text".to_string())
}

/// Saves `current` (compared with `baseline`, when given) in the view `query` as one HTML file,
/// offered as the download `file`.
///
/// # Errors
/// A message saying what failed: the template, or filling it.
pub async fn save(
    file: &str,
    query: String,
    current: &Loaded,
    baseline: Option<&Loaded>,
) -> Result<(), String> {
    for l in std::iter::once(current).chain(baseline) {
        if roofline_model::bundle::columns::is_columns(&l.raw) {
            return Err(format!(
                "{} was opened from its columns file; a saved page holds bundles as JSON: open the bundle's JSON alone to save it as a page",
                l.file_name()
            ));
        }
    }
    let template = template().await?;
    let mut entries = vec![Entry {
        name: current.file_name(),
        baseline: false,
    }];
    let mut texts: Vec<&[u8]> = vec![&current.raw];
    if let Some(b) = baseline {
        entries.push(Entry {
            name: b.file_name(),
            baseline: true,
        });
        texts.push(&b.raw);
    }
    let html = standalone::fill(&template, &Manifest::new(query, entries), &texts)
        .map_err(|e| e.to_string())?;
    crate::export::download_text(file, "text/html", &html);
    Ok(())
}
