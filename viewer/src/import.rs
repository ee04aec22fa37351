//! Files opened in the page, and traces and Nsight Compute exports imported in it. What is
//! opened goes first to the page's script `open.js` (`rooflineOpen`, beside the wasm so that the
//! first paint does not grow): it gives back the bundles as they are and imports the rest with
//! the importer (`importer.js`, loaded only then), which runs `roofline-import` in a Web Worker
//! as `roofline import` runs it and shows its progress; each bundle made comes back as a file,
//! opened here as any bundle, or the CLI's message. Nothing is uploaded. A page without the
//! script (a saved standalone page) opens what is dropped as bundles, as before.

use js_sys::{Array, Promise, Reflect, Uint8Array};
use leptos::prelude::{GetUntracked, Set};
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::loading::{Loaded, read_file};
use crate::state::AppState;

#[wasm_bindgen]
extern "C" {
    /// `rooflineOpen(inputs, machine)` (`open.js`): a promise of the files to open as bundles
    /// (those opened, and each bundle made, whose `key` names its inputs) and the messages of
    /// imports that failed.
    #[wasm_bindgen(js_name = rooflineOpen, catch)]
    fn sort(inputs: &JsValue, machine: &JsValue) -> Result<Promise, JsValue>;
}

/// What an import was made from, to make it again against another machine.
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    /// `open.js`'s key of its inputs (files are kept there as handles, not bytes).
    key: f64,
    /// Their URLs, when they were fetched (`?trace=URL`): what the page's URL names.
    pub urls: Vec<String>,
    /// The machine bundle's URL, when it was fetched (`?machine=URL`).
    pub machine_url: Option<String>,
}

/// The machine bundle an import is placed against, as the importer takes it.
fn machine_of(m: &Loaded) -> JsValue {
    Array::of2(&m.file_name().into(), &Uint8Array::from(&m.raw[..])).into()
}

/// Opens `inputs` (the files dropped or picked, the URLs `urls` to import, or an earlier
/// import's key) with `open.js`, imports placed against `machine` (a machine bundle open here,
/// or the URL `machine_url`) as `roofline import --machine` places them: each bundle opened in
/// turn (the bundle at `replace` replaced: an import made again), each failure's message shown.
pub fn open(
    st: AppState,
    inputs: JsValue,
    urls: Vec<String>,
    machine: Option<&Loaded>,
    machine_url: Option<String>,
    replace: Option<usize>,
) {
    let m = match (machine, &machine_url) {
        (Some(m), _) => machine_of(m),
        (None, Some(url)) => url.into(),
        (None, None) => JsValue::NULL,
    };
    let machine_url = machine.map_or(machine_url, |m| m.url.clone());
    spawn_local(async move {
        // Without `open.js` (a saved page), every file is read as a bundle.
        let opened = match sort(&inputs, &m) {
            Ok(p) => JsFuture::from(p).await.unwrap_or_default(),
            Err(_) => inputs,
        };
        let opened = Array::from(&opened);
        let alone = opened.length() == 1;
        for v in opened.iter() {
            let f = match v.dyn_into::<web_sys::File>() {
                Ok(f) => f,
                // An import that failed (not one cancelled): its message.
                Err(e) => {
                    if let Some(e) = e.as_string().filter(|e| e != "cancelled") {
                        st.error.set(Some(e));
                    }
                    continue;
                }
            };
            let key = Reflect::get(&f, &"key".into())
                .ok()
                .and_then(|k| k.as_f64());
            match read_file(f).await {
                Ok(mut l) => {
                    l.import = key.map(|key| Source {
                        key,
                        urls: urls.clone(),
                        machine_url: machine_url.clone(),
                    });
                    st.put(l, replace, alone);
                }
                Err(e) => st.error.set(Some(e)),
            }
        }
    });
}

impl Source {
    /// Makes the import again against the open bundle `machine` (none: without one), in place
    /// of the bundle at `at`.
    pub fn again(&self, st: AppState, machine: Option<usize>, at: usize) {
        let m = machine.and_then(|i| st.bundles.get_untracked().get(i).cloned());
        open(
            st,
            self.key.into(),
            self.urls.clone(),
            m.as_ref(),
            None,
            Some(at),
        );
    }
}
