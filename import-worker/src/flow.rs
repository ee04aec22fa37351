//! What the worker adds to the import driver ([`roofline_import::driver`]): the page's option
//! words read as `roofline import`'s flags ([`options`]), the bundle written to the page as
//! `roofline_model::bundle::stream` writes bundles ([`PageSink`]), and the worker's own words for
//! writing it ([`SinkError`]). The sequence of an import is the driver's; the inputs are the
//! worker's `Blob`s (`lib.rs`).
//!
//! Pure: the bundle goes to any [`Write`]; the tests hand it a `Vec`.

use std::io::Write;

use roofline_import::driver::Sink;
use roofline_import::ncu::Arch;
use roofline_model::ReadError;
use roofline_model::bundle::options::ImportOptions;
use roofline_model::bundle::stream::{WriteError, Writer};
use roofline_model::bundle::{Bundle, Kernel};

pub use roofline_import::driver::chain;

/// What the bundle is called in messages about writing it.
const OUTPUT: &str = "the bundle";

/// Why the bundle could not be handed to the page.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// The bundle would hold impossible figures (a bug upstream; nothing is kept).
    #[error("refusing to write {OUTPUT}: the bundle holds impossible figures")]
    InvalidOutput(#[source] ReadError),
    /// The page could not take it.
    #[error("cannot write {OUTPUT}")]
    Write(#[source] std::io::Error),
}

impl From<WriteError> for SinkError {
    fn from(e: WriteError) -> Self {
        match e {
            WriteError::Invalid(source) => SinkError::InvalidOutput(source),
            WriteError::Io(source) => SinkError::Write(source),
            e @ WriteError::ShellChanged => SinkError::Write(std::io::Error::other(e.to_string())),
        }
    }
}

/// The page's option words (`roofline import`'s flags, each word as given) read into the one
/// options type, as the CLI reads its flags; the refusal in the CLI's words. A compute
/// capability outside the metric table is refused here (the CLI uses the nearest documented
/// one and says so on standard error, which the page does not have).
///
/// # Errors
/// `invalid arguments: …`, naming the option and the value.
pub fn options<'a>(words: impl IntoIterator<Item = &'a str>) -> Result<ImportOptions, String> {
    let invalid = |e: String| format!("invalid arguments: {e}");
    let options = ImportOptions::from_flags(words).map_err(invalid)?;
    if let Some(path) = &options.model_config {
        return Err(invalid(format!(
            "--model-config {path}: the page reads no file by its name; open the model's config.json together with the trace (drop both), or import the trace with `roofline import --model-config {path}`"
        )));
    }
    if let Some(cc) = options.arch
        && let (_, Some(note)) = Arch::of(cc)
    {
        return Err(invalid(format!(
            "--arch {cc}: {note}; the page takes only the documented ones (7.0, 7.2, 7.5, 8.0, 8.6, 8.7, 8.9, 9.0, 10.x, 12.x): use `roofline import --arch {cc}`, which says so and goes on"
        )));
    }
    Ok(options)
}

/// The bundle handed to the page as it is written: whole, or kernel by kernel.
pub struct PageSink<W: Write> {
    out: Option<W>,
    writer: Option<Writer<W>>,
}

impl<W: Write> PageSink<W> {
    /// A sink writing to `out`.
    pub fn new(out: W) -> Self {
        PageSink {
            out: Some(out),
            writer: None,
        }
    }

    fn taken(&mut self) -> Result<W, SinkError> {
        self.out.take().ok_or_else(|| {
            SinkError::Write(std::io::Error::other("the bundle was already written"))
        })
    }
}

impl<W: Write> Sink for PageSink<W> {
    type Error = SinkError;

    fn bundle(&mut self, b: &Bundle) -> Result<(), SinkError> {
        let out = self.taken()?;
        roofline_model::bundle::stream::write(b, || Ok(out), SinkError::from)?
            .flush()
            .map_err(SinkError::Write)
    }

    fn begin(&mut self, shell: &Bundle) -> Result<(), SinkError> {
        let out = self.taken()?;
        self.writer = Some(Writer::begin(out, shell)?);
        Ok(())
    }

    fn kernel(&mut self, k: &Kernel) -> Result<(), SinkError> {
        match self.writer.as_mut() {
            Some(w) => Ok(w.kernel(k)?),
            None => Err(SinkError::Write(std::io::Error::other(
                "a kernel before the bundle began",
            ))),
        }
    }

    fn finish(&mut self, shell: &Bundle) -> Result<(), SinkError> {
        match self.writer.take() {
            Some(w) => {
                w.finish(shell)?.flush().map_err(SinkError::Write)?;
                Ok(())
            }
            None => Err(SinkError::Write(std::io::Error::other(
                "the bundle ended before it began",
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_model::bundle::options::Convention;

    /// The page's words read as `roofline import` reads its flags; a bad one refused with the
    /// option named, in the CLI's words; a compute capability outside the metric table refused
    /// here, where the CLI would go on with a note.
    #[test]
    fn option_words_read_as_the_clis_flags() {
        let o = options(["--arch", " 9.0 ", "--convention", "2020", "--allow-partial"]).unwrap();
        assert_eq!(o.arch.map(|cc| Arch::of(cc).0), Some(Arch::Hopper));
        assert_eq!(o.convention, Some(Convention::Study2020));
        assert!(o.allow_partial);
        assert_eq!(
            o.flags(),
            ["--arch", "9.0", "--convention", "2020", "--allow-partial"]
        );
        assert_eq!(options([]).unwrap(), ImportOptions::default());
        assert_eq!(
            options(["--convention", "2021"]).unwrap_err(),
            "invalid arguments: --convention \"2021\": expected current or 2020"
        );
        assert!(
            options(["--arch", "nine"])
                .unwrap_err()
                .starts_with("invalid arguments: --arch \"nine\" is not a compute capability"),
        );
        assert!(
            options(["--arch", "6.1"])
                .unwrap_err()
                .contains("compute capability 6.1 is not in the metric table"),
        );
        // The parallelism reads as the CLI's; a model configuration is a file the page does
        // not read by its name (it is opened with the trace instead).
        assert_eq!(
            options(["--tensor-parallel", "8"]).unwrap().tensor_parallel,
            Some(8)
        );
        assert!(
            options(["--model-config", "config.json"])
                .unwrap_err()
                .contains("the page reads no file by its name"),
        );
    }

    /// A whole bundle and a streamed one reach the page as `to_json` writes them.
    #[test]
    fn the_page_gets_the_bundles_text() {
        let b = roofline_model::parse_bundle(include_str!(
            "../../tests/fixtures/bundles/v100-deepcam-example.json"
        ))
        .unwrap();
        let mut whole = Vec::new();
        PageSink::new(&mut whole).bundle(&b).unwrap();
        let mut streamed = Vec::new();
        let mut s = PageSink::new(&mut streamed);
        let mut shell = b.clone();
        shell.kernels.clear();
        s.begin(&shell).unwrap();
        for k in &b.kernels {
            s.kernel(k).unwrap();
        }
        s.finish(&shell).unwrap();
        assert!(s.kernel(&b.kernels[0]).is_err());
        let json = roofline_model::to_json(&b).unwrap();
        assert_eq!(String::from_utf8(whole).unwrap(), json);
        assert_eq!(String::from_utf8(streamed).unwrap(), json);
    }
}
