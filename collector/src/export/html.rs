//! The standalone HTML page of `roofline plot --format html`: the viewer's template (embedded at
//! build time from `dist/standalone.html` with the `viewer-page` feature, see `build.rs`) filled by
//! `roofline_model::chart::standalone::fill`, the function the viewer's "Save as HTML" calls, so that
//! both write the same file for the same bundles and view. With `--embed` the template becomes
//! the chart-only page for iframes first (`roofline_model::chart::standalone::embed`).

use roofline_model::chart::standalone::{Entry, Manifest, embed, fill};

use crate::error::Error;

/// The template as built into this binary (the `viewer-page` feature).
#[cfg(feature = "viewer-page")]
const EMBEDDED: Option<&str> = Some(include_str!(concat!(env!("OUT_DIR"), "/standalone.html")));
/// Built without the `viewer-page` feature: no template.
#[cfg(not(feature = "viewer-page"))]
const EMBEDDED: Option<&str> = None;

/// The embedded template, `None` when this binary was built without the viewer's page (the
/// `viewer-page` feature).
pub fn embedded_template() -> Option<&'static str> {
    EMBEDDED
}

/// One bundle of the page: its name (a file name) and its bytes as read (already validated).
#[derive(Debug, Clone, Copy)]
pub struct PageBundle<'a> {
    /// The name the viewer shows.
    pub name: &'a str,
    /// The bundle's JSON.
    pub bytes: &'a [u8],
}

/// Which page: the whole viewer, or the chart-only page for iframes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chrome<'a> {
    /// The viewer as "Save as HTML" writes it.
    Full,
    /// The chart-only page (`--embed`), with a link to the full viewer when a URL is given.
    Embed {
        /// The link's URL (`--link`).
        link: Option<&'a str>,
    },
}

/// The page: `current` shown, compared with `baseline` when given, in the view `query` (the
/// viewer's URL query, without `bundle=` or `baseline=`).
///
/// # Errors
/// [`Error::NoViewerPage`] when `template` is `None`; [`Error::Standalone`] when the template or
/// a bundle cannot make a page.
pub fn render(
    template: Option<&str>,
    chrome: Chrome<'_>,
    current: PageBundle<'_>,
    baseline: Option<PageBundle<'_>>,
    query: &str,
) -> Result<Vec<u8>, Error> {
    let template = template.ok_or(Error::NoViewerPage)?;
    let chart_only;
    let template = match chrome {
        Chrome::Full => template,
        Chrome::Embed { link } => {
            chart_only = embed(template, link).map_err(Error::Standalone)?;
            chart_only.as_str()
        }
    };
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
        let e = render(None, Chrome::Full, b, None, "").unwrap_err();
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
        let e = render(Some("<html></html>"), Chrome::Full, b, None, "").unwrap_err();
        assert!(matches!(e, Error::Standalone(_)), "{e}");
    }

    #[test]
    fn the_chart_only_page_carries_the_link_asked_for() {
        let t = roofline_model::chart::standalone::template(
            "async function __wbg_init() {}\nexport { __wbg_init as default };",
            "AAAA",
            "",
        )
        .unwrap();
        let b = PageBundle {
            name: "a.json",
            bytes: b"{}",
        };
        let page = |chrome| {
            String::from_utf8(render(Some(&t), chrome, b, None, "chart=time").unwrap()).unwrap()
        };
        let full = page(Chrome::Full);
        assert!(full.contains("<body></body>"));
        let chart = page(Chrome::Embed {
            link: Some("full.html"),
        });
        assert!(chart.contains(r#"<body data-embed="true">"#));
        assert!(chart.contains(r#"href="full.html""#));
        let e = render(
            Some(&t),
            Chrome::Embed {
                link: Some("javascript:x"),
            },
            b,
            None,
            "",
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                Error::Standalone(roofline_model::chart::standalone::StandaloneError::Embed(_))
            ),
            "{e}"
        );
    }
}
