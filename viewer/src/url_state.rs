//! The view's state in the page's URL, so that a copied link reproduces the view. The state and
//! its vocabulary are `roofline_model::chart::view` (which the CLI's saved pages write too); this module
//! reads and writes the browser's address bar.

use roofline_model::chart::view::ViewState;

/// Reads a query string (with or without its `?`).
pub fn from_query(query: &str) -> ViewState {
    let Ok(params) = web_sys::UrlSearchParams::new_with_str(query) else {
        return ViewState::default();
    };
    // Every value of each name: `pair` and `trace` may come several times.
    let mut pairs: Vec<(&str, String)> = Vec::new();
    for n in ViewState::NAMES {
        for v in params.get_all(n) {
            pairs.push((n, v.as_string().unwrap_or_default()));
        }
    }
    ViewState::from_pairs(pairs.iter().map(|(n, v)| (*n, v.as_str())))
}

/// The state of the page's current URL.
pub fn from_location() -> ViewState {
    let query = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    from_query(&query)
}

/// Replaces the page's URL with `state`'s (no new history entry).
pub fn write_to_location(state: &ViewState) {
    let Some(w) = web_sys::window() else { return };
    let Ok(path) = w.location().pathname() else {
        return;
    };
    let q = state.to_query();
    let url = if q.is_empty() {
        path
    } else {
        format!("{path}?{q}")
    };
    if let Ok(h) = w.history() {
        let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
    }
}
