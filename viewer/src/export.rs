//! Downloads: the chart as SVG or PNG, the kernel rows as CSV (the columns of
//! `roofline info --format csv`, from `roofline_model::analysis::report`), the bundle's bytes.

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;

/// Offers `text` as a file download.
pub fn download_text(name: &str, mime: &str, text: &str) {
    download_bytes(name, mime, text.as_bytes());
}

/// Offers `bytes` as a file download (UTF-8 text: its bytes are the file's).
pub fn download_bytes(name: &str, mime: &str, bytes: &[u8]) {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    if let Ok(blob) = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &opts) {
        download_blob(name, &blob);
    }
}

fn download_blob(name: &str, blob: &web_sys::Blob) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(blob) else {
        return;
    };
    if let Ok(a) = doc.create_element("a")
        && let Ok(a) = a.dyn_into::<web_sys::HtmlAnchorElement>()
    {
        a.set_href(&url);
        a.set_download(name);
        a.click();
    }
    let _ = web_sys::Url::revoke_object_url(&url);
}

/// The chart's SVG markup, standalone.
fn chart_svg() -> Option<String> {
    let doc = web_sys::window()?.document()?;
    let svg = doc.get_element_by_id("chart")?;
    let mut s = svg.outer_html();
    if !s.contains("xmlns=") {
        s = s.replacen("<svg", "<svg xmlns=\"http://www.w3.org/2000/svg\"", 1);
    }
    Some(s)
}

/// Downloads the chart as SVG.
pub fn download_chart_svg(name: &str) {
    if let Some(s) = chart_svg() {
        download_text(name, "image/svg+xml", &s);
    }
}

/// Downloads the chart as PNG at twice its size: the SVG drawn on a canvas.
pub fn download_chart_png(name: &str) {
    let Some(svg) = chart_svg() else { return };
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(img) = web_sys::HtmlImageElement::new() else {
        return;
    };
    let data = format!(
        "data:image/svg+xml;charset=utf-8,{}",
        String::from(js_sys::encode_uri_component(&svg))
    );
    let name = name.to_string();
    let img2 = img.clone();
    let onload = Closure::once_into_js(move || {
        let (w, h) = (
            img2.natural_width().max(1) * 2,
            img2.natural_height().max(1) * 2,
        );
        let Ok(canvas) = doc.create_element("canvas") else {
            return;
        };
        let Ok(canvas) = canvas.dyn_into::<web_sys::HtmlCanvasElement>() else {
            return;
        };
        canvas.set_width(w);
        canvas.set_height(h);
        let Ok(Some(ctx)) = canvas.get_context("2d") else {
            return;
        };
        let Ok(ctx) = ctx.dyn_into::<web_sys::CanvasRenderingContext2d>() else {
            return;
        };
        let _ = ctx.draw_image_with_html_image_element_and_dw_and_dh(
            &img2,
            0.0,
            0.0,
            f64::from(w),
            f64::from(h),
        );
        let Ok(url) = canvas.to_data_url_with_type("image/png") else {
            return;
        };
        if let Ok(a) = doc.create_element("a")
            && let Ok(a) = a.dyn_into::<web_sys::HtmlAnchorElement>()
        {
            a.set_href(&url);
            a.set_download(&name);
            a.click();
        }
    });
    img.set_onload(Some(onload.unchecked_ref()));
    img.set_src(&data);
}
