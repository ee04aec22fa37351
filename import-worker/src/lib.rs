//! The viewer's import worker: what the page imports (a torch.profiler trace, Nsight Compute
//! CSV captures) read in a Web Worker, off the page's thread, and turned into a bundle by
//! the import driver (`roofline_import::driver`) as `roofline import` turns it; [`flow`] holds
//! the worker's sink and its reading of the page's option words.
//!
//! `cargo xtask web` builds this crate for wasm32 into `dist/importer.js`, which the viewer loads
//! only when a trace or CSV is opened (`viewer/open.js` decides when,
//! `import-worker/js/importer.js` and `worker.js` run it). The worker's script hands
//! [`import_files`] each input as `Blob`s: the file as stored and, for gzip, its text inflated by
//! the browser's `DecompressionStream`. They are read synchronously a few MiB at a time with
//! `FileReaderSync` (`BlobText`), so the parser streams them as the CLI streams a file: the
//! text is never whole in memory, neither here nor as a JavaScript string. The bundle goes back
//! to the page in chunks as it is written, with progress in bytes read and kernels made.

pub mod flow;

use std::io::{self, BufRead, Read, Write};

use js_sys::{Function, Reflect, Uint8Array};
use roofline_import::assemble::Machine;
use roofline_import::input::HEAD;
use roofline_model::bundle::Provenance;
use wasm_bindgen::prelude::*;
use web_sys::{Blob, FileReaderSync};

use flow::{PageSink, SinkError};
use roofline_import::driver::{self, Input, Request};

/// How much of a blob is read at a time.
const CHUNK: f64 = (4 << 20) as f64;

/// How much of the bundle is handed to the page at a time.
const OUT_CHUNK: usize = 8 << 20;

/// A JavaScript error in words.
fn js_text(e: &JsValue) -> String {
    e.as_string()
        .or_else(|| {
            Reflect::get(e, &"message".into())
                .ok()
                .and_then(|m| m.as_string())
        })
        .unwrap_or_else(|| "unknown error".into())
}

fn js_io(e: &JsValue) -> io::Error {
    io::Error::other(js_text(e))
}

/// Reports progress to the worker's script: what is being done, how far, out of how much.
struct Progress<'a>(&'a Function);

impl Progress<'_> {
    fn tell(&self, what: &str, done: f64, total: f64) {
        let _ = self.0.call3(
            &JsValue::NULL,
            &JsValue::from_str(what),
            &JsValue::from_f64(done),
            &JsValue::from_f64(total),
        );
    }
}

/// A blob read synchronously from its start, [`CHUNK`] bytes at a time, with an error at its
/// end when the text was cut short (a gzip stream the browser could not inflate to its end).
struct BlobText<'a> {
    blob: Blob,
    reader: &'a FileReaderSync,
    /// Where the next chunk starts.
    pos: f64,
    /// The blob's size.
    len: f64,
    buf: Vec<u8>,
    /// Bytes of `buf` consumed.
    at: usize,
    /// Why the text ends early, said once it is read to its end.
    end_error: Option<String>,
    /// Told of each chunk read, with the blob's size.
    progress: Option<&'a Progress<'a>>,
}

impl<'a> BlobText<'a> {
    fn new(blob: Blob, reader: &'a FileReaderSync) -> Self {
        let len = blob.size();
        BlobText {
            blob,
            reader,
            pos: 0.0,
            len,
            buf: Vec::new(),
            at: 0,
            end_error: None,
            progress: None,
        }
    }

    /// Up to `n` bytes from the blob's start.
    fn head(blob: &Blob, reader: &FileReaderSync, n: usize) -> io::Result<Vec<u8>> {
        Ok(read_range(blob, reader, 0.0, n as f64)?.to_vec())
    }
}

/// The bytes of `blob` from `start` to `end`, read synchronously.
fn read_range(
    blob: &Blob,
    reader: &FileReaderSync,
    start: f64,
    end: f64,
) -> io::Result<Uint8Array> {
    let part = blob
        .slice_with_f64_and_f64(start, end)
        .map_err(|e| js_io(&e))?;
    let ab = reader.read_as_array_buffer(&part).map_err(|e| js_io(&e))?;
    Ok(Uint8Array::new(&ab))
}

impl Read for BlobText<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for BlobText<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.at >= self.buf.len() {
            if self.pos >= self.len {
                if let Some(e) = self.end_error.take() {
                    return Err(io::Error::new(io::ErrorKind::UnexpectedEof, e));
                }
                return Ok(&[]);
            }
            let end = (self.pos + CHUNK).min(self.len);
            let bytes = read_range(&self.blob, self.reader, self.pos, end)?;
            self.buf.resize(bytes.length() as usize, 0);
            bytes.copy_to(&mut self.buf);
            self.at = 0;
            self.pos = end;
            if let Some(p) = self.progress {
                p.tell("reading", self.pos, self.len);
            }
        }
        Ok(&self.buf[self.at..])
    }

    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.buf.len());
    }
}

/// One input as the worker's script hands it: `{name, raw, plain?, error?}`.
struct BlobInput<'a> {
    name: String,
    /// The file as stored.
    raw: Blob,
    /// For gzip: the text the browser inflated (as far as it could).
    plain: Option<Blob>,
    /// For gzip: why the browser could not inflate it to its end.
    error: Option<String>,
    reader: &'a FileReaderSync,
    progress: &'a Progress<'a>,
}

impl<'a> BlobInput<'a> {
    fn from_js(
        v: &JsValue,
        reader: &'a FileReaderSync,
        progress: &'a Progress<'a>,
    ) -> Result<Self, JsValue> {
        let get = |k: &str| Reflect::get(v, &JsValue::from_str(k));
        let blob = |x: JsValue| x.dyn_into::<Blob>().ok();
        Ok(BlobInput {
            name: get("name")?.as_string().unwrap_or_default(),
            raw: blob(get("raw")?).ok_or("an input without its bytes")?,
            plain: blob(get("plain")?),
            error: get("error")?.as_string(),
            reader,
            progress,
        })
    }
}

impl Input for BlobInput<'_> {
    type Error = SinkError;

    fn name(&self) -> &str {
        &self.name
    }

    /// The page has no Nsight Compute: a report is refused by the driver, saying what to do.
    fn report_csv(&mut self) -> Option<Result<String, SinkError>> {
        None
    }

    fn raw_head(&mut self) -> io::Result<Vec<u8>> {
        BlobText::head(&self.raw, self.reader, HEAD)
    }

    fn decompressed_head(&mut self) -> Result<Vec<u8>, String> {
        let Some(plain) = &self.plain else {
            return Err(self.error.clone().unwrap_or_else(|| "not inflated".into()));
        };
        match &self.error {
            // Cut short before its first bytes: as flate2 fails on the head.
            Some(e) if plain.size() < HEAD as f64 => Err(e.clone()),
            _ => BlobText::head(plain, self.reader, HEAD).map_err(|e| e.to_string()),
        }
    }

    fn text(&mut self) -> io::Result<Box<dyn BufRead + '_>> {
        let mut t = BlobText::new(
            self.plain.clone().unwrap_or_else(|| self.raw.clone()),
            self.reader,
        );
        t.end_error = self.error.clone();
        t.progress = Some(self.progress);
        Ok(Box::new(t))
    }

    /// Read [`CHUNK`] bytes at a time into one buffer of the file's size: never whole twice
    /// in the worker (as an `ArrayBuffer` and its copy).
    fn bytes(&mut self) -> io::Result<Vec<u8>> {
        let mut all = Vec::with_capacity(self.raw.size() as usize);
        BlobText::new(self.raw.clone(), self.reader).read_to_end(&mut all)?;
        Ok(all)
    }
}

/// The bundle's text handed to the page in [`OUT_CHUNK`] pieces as it is written.
struct ToPage<'a> {
    buf: Vec<u8>,
    chunk: &'a Function,
}

impl ToPage<'_> {
    fn hand_over(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let piece = Uint8Array::from(&self.buf[..]);
        self.buf.clear();
        self.chunk
            .call1(&JsValue::NULL, &piece)
            .map(|_| ())
            .map_err(|e| js_io(&e))
    }
}

impl Write for ToPage<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= OUT_CHUNK {
            self.hand_over()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.hand_over()
    }
}

/// The page's option words: an array of strings, `roofline import`'s flags as given (null or
/// undefined for none).
fn option_words(options: &JsValue) -> Vec<String> {
    if options.is_null() || options.is_undefined() {
        return Vec::new();
    }
    js_sys::Array::from(options)
        .iter()
        .map(|w| w.as_string().unwrap_or_default())
        .collect()
}

/// The imports `inputs` make (each `{name, raw, plain?, error?}`, as for [`import_files`]), as
/// the driver groups them: each torch.profiler trace alone, the other inputs (Nsight Compute
/// CSV captures) together; an input that cannot be read alone, so that its import says why.
/// Returns an array of arrays of the inputs' indices.
///
/// # Errors
/// A JavaScript error reading the inputs.
#[wasm_bindgen]
pub fn group_inputs(inputs: &js_sys::Array) -> Result<JsValue, JsValue> {
    let reader = FileReaderSync::new()?;
    let progress = Progress(&Function::new_no_args(""));
    let mut inputs = inputs
        .iter()
        .map(|v| BlobInput::from_js(&v, &reader, &progress))
        .collect::<Result<Vec<_>, _>>()?;
    let groups = driver::groups(&mut inputs);
    let out = js_sys::Array::new();
    for g in groups {
        out.push(
            &g.iter()
                .map(|&i| JsValue::from_f64(i as f64))
                .collect::<js_sys::Array>(),
        );
    }
    Ok(out.into())
}

/// The GPU catalogue's entries that give ceilings, each `[id, product]`, for the page's
/// "Ceilings from".
#[wasm_bindgen]
pub fn catalogue_entries() -> js_sys::Array {
    roofline_import::datasheet::entries()
        .into_iter()
        .map(|(id, product)| js_sys::Array::of2(&id.into(), &product.into()))
        .collect()
}

/// A chart the page draws here, in the importer, so that the viewer's first paint does not
/// carry its code: `chart` of the bundle whose bytes the page opened, as the standalone SVG
/// `roofline plot --chart CHART` writes, `width` pixels wide, with a line of figures above it.
/// Returns `[svg, words]` (`words` `null` when there are none):
/// - `comm`: the collectives against their links ([`roofline_model::chart::communication`],
///   every launch of every device, the roofs of `device` or else of the first device with link
///   ceilings), with the exposed communication per step
///   ([`roofline_model::analysis::comm::exposure_words`]);
/// - `sweep`: the machine's ERT-style sweep ([`roofline_model::chart::sweep`]).
///
/// # Errors
/// Why there is nothing to draw (the bundle unreadable, no collective with a size and a bus
/// bandwidth, no sweep), in the CLI's words; the figures' line, when there is one, is kept in
/// front of it, before a newline.
#[wasm_bindgen]
pub fn draw(
    bundle: &[u8],
    chart: &str,
    width: f64,
    device: Option<String>,
) -> Result<js_sys::Array, String> {
    use roofline_model::analysis::comm;
    use roofline_model::chart::{self, ChartOptions, svg};
    let bundle = roofline_model::parse_bundle_bytes(bundle).map_err(|e| e.to_string())?;
    let options = ChartOptions {
        device,
        ..ChartOptions::browser_sized(width)
    };
    let (scene, words) = match chart {
        "comm" => {
            let acc = comm::CommAcc::of_kernels(&bundle, &bundle.kernels);
            let words = comm::exposure_words(&comm::per_step(&acc.records), 8);
            (
                chart::communication(&bundle, &bundle.kernels, &options),
                words,
            )
        }
        "sweep" => (chart::sweep(&bundle, &options), None),
        other => return Err(format!("no chart `{other}` is drawn here")),
    };
    match scene {
        Ok(scene) => {
            let svg = svg::plotted(&scene);
            Ok(js_sys::Array::of2(
                &svg.into(),
                &words.map_or(JsValue::NULL, JsValue::from),
            ))
        }
        Err(e) => Err(match words {
            Some(w) => format!("{w}\n{e}"),
            None => e.to_string(),
        }),
    }
}

/// Imports `inputs` (each `{name, raw, plain?, error?}`: one trace, or the CSV captures of one
/// run) against `machine` (`{name, bytes}` of a machine bundle, or null) with `options`
/// (`roofline import`'s flags as an array of words, `["--arch", "9.0"]`, read by the one options
/// type; null for none), through the import driver, the bundle's text handed to `chunk` piece by
/// piece and progress to `progress(what, done, total)` (`what`: `reading`, in bytes, or
/// `importing kernels`, in kernels). `created` is the provenance's time, RFC 3339. `config`,
/// when not null, is a model's Hugging Face `config.json` opened with the trace (an input as
/// `inputs`' are), read as `--model-config`.
///
/// Returns `{launches, entries}`.
///
/// # Errors
/// The CLI's message for the same input, as a string.
#[wasm_bindgen]
pub fn import_files(
    inputs: &js_sys::Array,
    machine: &JsValue,
    options: &JsValue,
    created: String,
    progress: &Function,
    chunk: &Function,
    config: &JsValue,
) -> Result<JsValue, JsValue> {
    let words = option_words(options);
    let options =
        flow::options(words.iter().map(String::as_str)).map_err(|e| JsValue::from_str(&e))?;
    let reader = FileReaderSync::new()?;
    let progress = Progress(progress);
    let inputs = inputs
        .iter()
        .map(|v| BlobInput::from_js(&v, &reader, &progress))
        .collect::<Result<Vec<_>, _>>()?;
    let machine = if machine.is_null() || machine.is_undefined() {
        None
    } else {
        let name = Reflect::get(machine, &"name".into())?
            .as_string()
            .unwrap_or_default();
        let bytes = Uint8Array::new(&Reflect::get(machine, &"bytes".into())?).to_vec();
        let bundle = roofline_model::parse_bundle_bytes(&bytes)
            .map_err(|e| format!("{name} is not a readable bundle: {e}"))?;
        Some(
            Machine::new(name, bundle, options.allow_machine_mismatch)
                .map_err(|e| driver::chain(&driver::Failure::<SinkError>::from(e)))?,
        )
    };
    // A model's `config.json` opened with the trace: `--model-config` by its file.
    let model_config = if config.is_null() || config.is_undefined() {
        None
    } else {
        Some(BlobInput::from_js(config, &reader, &progress)?)
    };
    let mut command_line = vec!["roofline-viewer".to_string(), "import".to_string()];
    command_line.extend(inputs.iter().map(|i| i.name.clone()));
    if let Some(m) = &machine {
        command_line.extend(["--machine".to_string(), m.name.clone()]);
    }
    if let Some(c) = &model_config {
        command_line.extend(["--model-config".to_string(), c.name.clone()]);
    }
    command_line.extend(options.flags());
    let provenance = Provenance {
        tool: "roofline".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        command_line,
        created: Some(created),
        ..Provenance::default()
    };
    let req = Request {
        inputs,
        counters: None,
        model_config,
        machine,
        provenance,
        options,
        counters_option: false,
    };
    let mut sink = PageSink::new(ToPage {
        buf: Vec::with_capacity(OUT_CHUNK + (1 << 16)),
        chunk,
    });
    let outcome = driver::run(req, &mut sink, &mut |done, total| {
        progress.tell("importing kernels", done as f64, total as f64);
    })
    .map_err(|e| JsValue::from_str(&driver::chain(&e)))?;
    let summary = js_sys::Object::new();
    Reflect::set(
        &summary,
        &"launches".into(),
        &JsValue::from_f64(outcome.launches as f64),
    )?;
    Reflect::set(
        &summary,
        &"entries".into(),
        &JsValue::from_f64(outcome.entries as f64),
    )?;
    Ok(summary.into())
}
