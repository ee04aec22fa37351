//! The standalone HTML page of `roofline plot --format html`: the viewer's template (embedded at
//! build time from `dist/standalone.html`, see `build.rs`) filled by
//! `roofline_model::standalone::fill`, the function the viewer's "Save as HTML" calls, so that
//! both write the same file for the same bundles and view.

use roofline_model::standalone::{Entry, Manifest, fill};

use crate::error::Error;

/// The template as built into this binary; empty when it was built without it.
const EMBEDDED: &str = include_str!(concat!(env!("OUT_DIR"), "/standalone.html"));

/// The embedded template, `None` when this binary was built without the viewer.
pub fn embedded_template() -> Option<&'static str> {
    (!EMBEDDED.is_empty()).then_some(EMBEDDED)
}

/// One bundle of the page: its name (a file name) and its bytes as read (already validated).
#[derive(Debug, Clone, Copy)]
pub struct PageBundle<'a> {
    /// The name the viewer shows.
    pub name: &'a str,
    /// The bundle's JSON.
    pub bytes: &'a [u8],
}

/// The page: `current` shown, compared with `baseline` when given, in the view `query` (the
/// viewer's URL query, without `bundle=` or `baseline=`).
///
/// # Errors
/// [`Error::NoViewerPage`] when `template` is `None`; [`Error::Standalone`] when the template or
/// a bundle cannot make a page.
pub fn render(
    template: Option<&str>,
    current: PageBundle<'_>,
    baseline: Option<PageBundle<'_>>,
    query: &str,
) -> Result<Vec<u8>, Error> {
    let template = template.ok_or(Error::NoViewerPage)?;
    let mut entries = vec![Entry {
        name: current.name.to_string(),
        baseline: false,
    }];
    let mut texts = vec![current.bytes];
    if let Some(b) = baseline {
        entries.push(Entry {
            name: b.name.to_string(),
            baseline: true,
        });
        texts.push(b.bytes);
    }
    fill(template, &Manifest::new(query, entries), &texts)
        .map(String::into_bytes)
        .map_err(Error::Standalone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_the_template_it_says_how_to_get_it() {
        let b = PageBundle {
            name: "a.json",
            bytes: b"{}",
        };
        let e = render(None, b, None, "").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("cargo xtask web"), "{msg}");
        assert!(msg.contains("--format svg"), "{msg}");
    }

    #[test]
    fn a_page_that_is_no_template_is_refused() {
        let b = PageBundle {
            name: "a.json",
            bytes: b"{}",
        };
        let e = render(Some("<html></html>"), b, None, "").unwrap_err();
        assert!(matches!(e, Error::Standalone(_)), "{e}");
    }
}
