//! Opening bundles: files chosen or dropped, URLs fetched, and the sample list served beside the
//! site (`samples/index.json`, written by `cargo xtask web`); each bundle is parsed and its
//! kernels aggregated once.

use std::sync::Arc;

use roofline_model::analysis::aggregate::{Aggregator, aggregate_by_name};
use roofline_model::analysis::group::GroupBy;
use roofline_model::bundle::Bundle;
use wasm_bindgen::JsCast;

use crate::perf;

/// A bundle opened in the viewer.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded {
    /// File name, sample name or URL.
    pub name: String,
    /// The bundle, its kernels aggregated by name once on opening (`roofline profile` writes one
    /// entry per launch; aggregating again, as the report and charts do, changes nothing). Shared,
    /// so that the page's signals clone a pointer, not 100,000 kernels.
    pub bundle: Arc<Bundle>,
    /// Where it was fetched from (a sample or `?bundle=URL`), so that the page's URL can name it;
    /// `None` for a local file.
    pub url: Option<String>,
    /// The launches as the bundle holds them, kept only when they carry the PyTorch operator tags
    /// of a torch.profiler import: grouping per operator or module needs each launch's `op` and
    /// `op_id`, which aggregating by kernel name drops where they differ.
    pub tagged: Option<Arc<Vec<roofline_model::bundle::Kernel>>>,
    /// The bundle's bytes as read, which "Save as HTML" inlines unchanged (as
    /// `roofline plot --format html` does), so that both write the same file, and "Save bundle"
    /// saves.
    pub raw: Arc<Vec<u8>>,
    /// For a bundle the page imported (a trace or CSV): what from, to import it again against
    /// another machine.
    pub import: Option<ImportSource>,
}

/// What a bundle the page imported was made from, to make it again against another machine.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportSource {
    /// `open.js`'s key of its inputs (files are kept there as handles, not bytes).
    pub key: f64,
    /// Their URLs, when they were fetched (`?trace=URL`): what the page's URL names.
    pub urls: Vec<String>,
    /// The machine bundle's URL, when it was fetched (`?machine=URL`).
    pub machine_url: Option<String>,
    /// The import's options (`roofline import`'s flags).
    pub flags: roofline_model::chart::view::ImportFlags,
}

impl Loaded {
    /// The name a saved page gives the bundle: its file name (a sample's, a URL's last part).
    pub fn file_name(&self) -> String {
        let name = self.name.strip_prefix("sample: ").unwrap_or(&self.name);
        let name = name.split(['?', '#']).next().unwrap_or(name);
        name.rsplit('/').next().unwrap_or(name).to_string()
    }
}

/// One entry of the sample list (`samples/index.json`).
#[derive(Clone, Debug, PartialEq)]
pub struct SampleEntry {
    /// File name under `samples/`.
    pub file: String,
    /// What the sample is, for the picker.
    pub title: String,
}

impl SampleEntry {
    /// The sample's URL, relative to the page.
    pub fn url(&self) -> String {
        format!("samples/{}", self.file)
    }
}

/// The sample list served beside the site; empty when there is none (a page opened without
/// `cargo xtask web`'s samples).
pub async fn fetch_samples() -> Vec<SampleEntry> {
    let Ok(bytes) = fetch_bytes("samples/index.json").await else {
        return Vec::new();
    };
    // Read as text, as bundles are (one JSON reader's code in the wasm, not two).
    let Ok(serde_json::Value::Array(entries)) = std::str::from_utf8(&bytes)
        .map_err(|_| ())
        .and_then(|t| serde_json::from_str(t).map_err(|_| ()))
    else {
        return Vec::new();
    };
    entries
        .iter()
        .filter_map(|e| {
            Some(SampleEntry {
                file: e.get("file")?.as_str()?.to_string(),
                title: e.get("title")?.as_str()?.to_string(),
            })
        })
        .collect()
}

/// Bytes read from a file or a response, as a bundle (read as bytes: a JavaScript string of a
/// large file costs a decoding and an encoding more). The model decodes them, so UTF-16 or binary
/// data is named with its byte offset and what it seems to be, as the CLI names it.
///
/// # Errors
/// A message naming the bundle and what is wrong with it.
pub fn parse_bytes(name: &str, bytes: Vec<u8>) -> Result<Loaded, String> {
    perf::mark("roofline:open:read");
    if roofline_model::bundle::columns::is_columns(&bytes) {
        return from_columns(name, bytes);
    }
    loaded(
        name,
        roofline_model::bundle::read::parse_json_bytes(&bytes),
        bytes,
    )
}

/// A columns file ([`roofline_model::bundle::columns`]): its shell and templates read, then its
/// records decoded, checked and aggregated in one pass, never all held as kernels (unless they
/// carry operators, which grouping per operator needs).
fn from_columns(name: &str, raw: Vec<u8>) -> Result<Loaded, String> {
    let refused = |e: roofline_model::ReadError| format!("{name} is not a readable bundle: {e}");
    let c = roofline_model::bundle::columns::Columns::open(&raw).map_err(refused)?;
    perf::mark("roofline:open:parsed");
    let keep = groups_by_operator(c.templates());
    let mut launches = Vec::new();
    let mut agg = Aggregator::default();
    let mut bundle = perf::span("roofline:aggregate", || {
        c.for_each(&mut |k| {
            agg.push(k);
            if keep {
                launches.push(k.clone());
            }
        })
    })
    .map_err(refused)?;
    bundle.kernels = agg.finish();
    Ok(Loaded {
        name: name.to_string(),
        bundle: Arc::new(bundle),
        url: None,
        tagged: keep.then(|| Arc::new(launches)),
        raw: Arc::new(raw),
        import: None,
    })
}

/// Whether `kernels` carry what grouping per operator or module needs (each launch's operator
/// call), which aggregating by kernel name drops: the launches are then kept.
fn groups_by_operator(kernels: &[roofline_model::bundle::Kernel]) -> bool {
    [GroupBy::Operator, GroupBy::Module]
        .into_iter()
        .any(|g| g.applies_to(kernels))
}

/// A parsed bundle, its kernels aggregated once, or the message the page shows.
fn loaded(
    name: &str,
    parsed: Result<Bundle, roofline_model::ReadError>,
    raw: Vec<u8>,
) -> Result<Loaded, String> {
    perf::mark("roofline:open:parsed");
    parsed
        .map(|mut bundle| {
            let launches = std::mem::take(&mut bundle.kernels);
            bundle.kernels = perf::span("roofline:aggregate", || aggregate_by_name(&launches));
            // Kept, not copied, when they carry operators.
            let tagged = groups_by_operator(&launches).then(|| Arc::new(launches));
            Loaded {
                name: name.to_string(),
                bundle: Arc::new(bundle),
                url: None,
                tagged,
                raw: Arc::new(raw),
                import: None,
            }
        })
        .map_err(|e| format!("{name} is not a readable bundle: {e}"))
}

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// `rooflineColumns(url)` (`open.js`): a promise of the bytes of the columns file the bundle
    /// at `url` names at its start, when the server has it and it carries the bundle's id;
    /// otherwise of `null`.
    #[wasm_bindgen(js_name = rooflineColumns, catch)]
    fn columns_js(url: &str) -> Result<js_sys::Promise, wasm_bindgen::JsValue>;
}

/// The bytes of the columns file the bundle at `url` names ([`columns_js`]), or `None` (none
/// named, not served, another id, or a page without `open.js`).
async fn columns_of(url: &str) -> Option<Vec<u8>> {
    let p = columns_js(url).ok()?;
    let v = wasm_bindgen_futures::JsFuture::from(p).await.ok()?;
    v.dyn_into::<js_sys::Uint8Array>().ok().map(|a| a.to_vec())
}

/// The body of `url`.
pub(crate) async fn fetch_bytes(url: &str) -> Result<Vec<u8>, String> {
    use wasm_bindgen_futures::JsFuture;
    let window = web_sys::window().ok_or("no window")?;
    let resp = JsFuture::from(window.fetch_with_str(url)).await.map_err(|_| {
        format!(
            "could not fetch {url}: the server did not answer, or it does not allow this page to read it (CORS: the server must send Access-Control-Allow-Origin)"
        )
    })?;
    let resp: web_sys::Response = resp.dyn_into().map_err(|_| "not a response".to_string())?;
    if !resp.ok() {
        return Err(format!(
            "could not fetch {url}: the server answered HTTP {} {}",
            resp.status(),
            resp.status_text()
        ));
    }
    let body = resp
        .blob()
        .map_err(|_| format!("could not read the body of {url}"))?;
    let body = JsFuture::from(body)
        .await
        .map_err(|_| format!("could not read the body of {url}"))?;
    read_in_pieces(&body.unchecked_into())
        .await
        .map_err(|()| format!("could not read the body of {url}"))
}

/// Fetches and parses a bundle; `name` is what the bundle picker shows (the URL when `None`).
///
/// # Errors
/// A message saying what failed: the fetch, the HTTP status, or the bundle.
pub async fn fetch_bundle(url: &str, name: Option<&str>) -> Result<Loaded, String> {
    perf::mark("roofline:open:start");
    // The columns file the bundle names, with its id, when the server has it (`open.js` reads
    // the bundle's first bytes for its name); else the bundle itself.
    let bytes = match columns_of(url).await {
        Some(bytes) => bytes,
        None => fetch_bytes(url).await?,
    };
    let mut l = parse_bytes(name.unwrap_or(url), bytes)?;
    l.url = Some(url.to_string());
    Ok(l)
}

/// Reads a local file as a bundle.
///
/// # Errors
/// A message naming the file and what failed.
pub async fn read_file(file: web_sys::File) -> Result<Loaded, String> {
    let name = file.name();
    perf::mark("roofline:open:start");
    let bytes = read_in_pieces(&file)
        .await
        .map_err(|()| format!("could not read {name}"))?;
    parse_bytes(&name, bytes)
}

/// A file's bytes, read 16 MiB at a time into one buffer of its size: the tab never holds the
/// whole file twice (as a JavaScript `ArrayBuffer` and its copy here), which for the bundle of
/// a 500 MB trace is a few hundred MB less at the peak.
async fn read_in_pieces(file: &web_sys::Blob) -> Result<Vec<u8>, ()> {
    const PIECE: f64 = (16 << 20) as f64;
    let size = file.size();
    // A File's size is an integer count of bytes; a wasm32 buffer holds at most 4 GiB.
    let mut bytes = Vec::with_capacity(usize::try_from(size as u64).map_err(|_| ())?);
    let mut at = 0.0;
    while at < size {
        let end = (at + PIECE).min(size);
        let piece = file.slice_with_f64_and_f64(at, end).map_err(|_| ())?;
        let buf = wasm_bindgen_futures::JsFuture::from(piece.array_buffer())
            .await
            .map_err(|_| ())?;
        let view = js_sys::Uint8Array::new(&buf);
        let start = bytes.len();
        bytes.resize(start + view.length() as usize, 0);
        view.copy_to(&mut bytes[start..]);
        at = end;
    }
    Ok(bytes)
}
