//! Files opened in the page, and traces and Nsight Compute exports imported in it. What is
//! opened goes first to the page's script `open.js` (`rooflineOpen`, beside the wasm so that the
//! first paint does not grow): it gives back the bundles as they are and imports the rest with
//! the importer (`importer.js`, loaded only then), which runs `roofline-import` in a Web Worker
//! as `roofline import` runs it and shows its progress; each bundle made comes back as a file,
//! read here as any bundle, or the CLI's message. Nothing is uploaded. A page without the
//! script (a saved standalone page) opens what is dropped as bundles, as before.
//!
//! This module only turns what was opened into bundles; `AppState::open_inputs` shows them.

use js_sys::{Array, Promise, Reflect, Uint8Array};
use roofline_model::chart::view::ImportFlags;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::loading::{ImportSource, Loaded, read_file};

#[wasm_bindgen]
extern "C" {
    /// `rooflineOpen(inputs, machine, options)` (`open.js`): a promise of the files to open as
    /// bundles (those opened, and each bundle made, whose `key` names its inputs) and the
    /// messages of imports that failed.
    #[wasm_bindgen(js_name = rooflineOpen, catch)]
    fn sort(inputs: &JsValue, machine: &JsValue, options: &JsValue) -> Result<Promise, JsValue>;

    /// `rooflineCatalogueFill(chosen)` (`open.js`): fills the "Ceilings from" list's GPU
    /// catalogue group (`#catalogue`) from the importer, `chosen` (`datasheet:ID` or `none`)
    /// selected.
    #[wasm_bindgen(js_name = rooflineCatalogueFill, catch)]
    pub fn catalogue_fill(chosen: &str) -> Result<(), JsValue>;

    /// `rooflineDraw(chart, bytes, width, device, into)` (`open.js`): draws `chart` (`comm`,
    /// `sweep`) of the bundle whose bytes are `bytes` into the element `into`, by the importer
    /// (its `draw`), `width` pixels wide, for `device` (or the bundle's first).
    #[wasm_bindgen(js_name = rooflineDraw, catch)]
    fn draw_js(
        chart: &str,
        bytes: &[u8],
        width: f64,
        device: Option<String>,
        into: &str,
    ) -> Result<(), JsValue>;
}

/// Draws `chart` (`comm` or `sweep`) of the bundle `raw` into the element `into` once it is
/// placed, by the importer (`open.js`'s `rooflineDraw`), so that the first paint does not carry
/// these charts; a page without the importer (a saved standalone page) says so there.
pub fn draw_by_importer(
    chart: &'static str,
    raw: std::sync::Arc<Vec<u8>>,
    width: f64,
    device: Option<String>,
    into: &'static str,
) {
    leptos::prelude::request_animation_frame(move || {
        if draw_js(chart, &raw, width, device, into).is_err()
            && let Some(el) = leptos::prelude::document().get_element_by_id(into)
        {
            el.set_inner_html(NEEDS_IMPORTER);
        }
    });
}

/// What a chart drawn by the importer says on a page without it (a saved standalone page).
const NEEDS_IMPORTER: &str = r#"<p class="hint">The importer draws this chart; a saved page does not carry it: open the bundle in the served viewer, or use <code>roofline plot</code>.</p>"#;

/// What was opened at once: each bundle read (an import's carrying its [`ImportSource`]) or the
/// message of what failed, in order.
pub struct Opened {
    /// The bundles and failures.
    pub results: Vec<Result<Loaded, String>>,
    /// Whether one thing alone was opened (a machine bundle dropped alone may bound the import
    /// shown).
    pub alone: bool,
}

/// The machine bundle an import is placed against, as the importer takes it.
fn machine_of(m: &Loaded) -> JsValue {
    Array::of2(&m.file_name().into(), &Uint8Array::from(&m.raw[..])).into()
}

/// `roofline import`'s options as `open.js` takes them: the flag words.
fn options_of(f: &ImportFlags) -> JsValue {
    f.flags()
        .into_iter()
        .map(JsValue::from)
        .collect::<Array>()
        .into()
}

/// Opens `inputs` (the files dropped or picked, the URLs `urls` to import, or an earlier
/// import's key) with `open.js`; imports are placed against `machine` (a machine bundle open
/// here, or the URL `machine_url`; with `same_machine`, the one an earlier import was placed
/// against) as `roofline import --machine` places them, with `flags` as its options. An import
/// that was cancelled gives nothing.
pub async fn open(
    inputs: JsValue,
    urls: Vec<String>,
    machine: Option<Loaded>,
    machine_url: Option<String>,
    flags: ImportFlags,
    same_machine: bool,
) -> Opened {
    let m = match (&machine, &machine_url) {
        _ if same_machine => JsValue::UNDEFINED,
        (Some(m), _) => machine_of(m),
        (None, Some(url)) => url.into(),
        (None, None) => JsValue::NULL,
    };
    let machine_url = machine.map_or(machine_url, |m| m.url);
    // Without `open.js` (a saved page), every file is read as a bundle.
    let opened = match sort(&inputs, &m, &options_of(&flags)) {
        Ok(p) => JsFuture::from(p).await.unwrap_or_default(),
        Err(_) => inputs,
    };
    let opened = Array::from(&opened);
    let alone = opened.length() == 1;
    let mut results = Vec::new();
    for v in opened.iter() {
        let f = match v.dyn_into::<web_sys::File>() {
            Ok(f) => f,
            // An import that failed (not one cancelled): its message.
            Err(e) => {
                if let Some(e) = e.as_string().filter(|e| e != "cancelled") {
                    results.push(Err(e));
                }
                continue;
            }
        };
        let key = Reflect::get(&f, &"key".into())
            .ok()
            .and_then(|k| k.as_f64());
        results.push(read_file(f).await.map(|mut l| {
            l.import = key.map(|key| ImportSource {
                key,
                urls: urls.clone(),
                machine_url: machine_url.clone(),
                flags: flags.clone(),
            });
            l
        }));
    }
    Opened { results, alone }
}
