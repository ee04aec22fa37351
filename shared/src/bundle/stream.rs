//! Bundles as streams: written kernel by kernel ([`Writer`]) and read kernel by kernel
//! ([`read`]), so that a bundle of a million launches is held neither whole as text nor whole as
//! kernels. Both keep the rules of [`crate::bundle::read`]: the writer validates what it writes (every
//! kernel with its JSON path, the rest as [`crate::to_json`] does) and writes the same text as
//! `to_json`; the reader accepts exactly what [`crate::parse_bundle`] accepts, and leaves the
//! diagnosis of anything else to it (on the whole text, which only a refused bundle costs).
//!
//! Pure: the caller hands a [`std::io::Write`] or a [`std::io::Read`].

use std::collections::HashSet;
use std::io::{self, Read, Write};

use crate::bundle::window::{JsonWindow, WindowError};

use crate::bundle::read::{Issue, Problem, ReadError, kernel_issues, pretty_at};
use crate::bundle::{Bundle, ColumnsRef, Kernel, SCHEMA_VERSION};

/// Why a stream could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The bundle holds impossible figures (nothing more is written).
    #[error(transparent)]
    Invalid(#[from] ReadError),
    /// The writer failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// What comes before the kernels changed between [`Writer::begin`] and [`Writer::finish`].
    #[error("the bundle's devices, machines or provenance changed while its kernels were written")]
    ShellChanged,
}

/// The key the kernels' array is written under, with the indentation of a top-level field.
const KERNELS: &str = "\n  \"kernels\": [";

/// A bundle written kernel by kernel: [`Writer::begin`] with everything but the kernels (the
/// shell), [`Writer::kernel`] for each kernel, [`Writer::finish`] with the shell again (its
/// notes may have grown). The text is the one [`crate::to_json`] writes for the whole bundle.
pub struct Writer<W: Write> {
    out: W,
    /// The shell's text up to and including the kernels' opening bracket.
    prefix: String,
    /// Kernels written.
    index: usize,
    /// The shell's device ids.
    ids: HashSet<String>,
    /// Launches so far (their sum must fit a `u64`).
    launches: u64,
    /// Seconds so far (their sum must be finite).
    time: f64,
    /// The columns file the text names.
    columns: Option<ColumnsRef>,
}

/// The shell's text: `to_json` of the bundle as if it had no kernels (never copying them) and
/// named `columns` as its columns file, and where the kernels go.
pub(crate) fn shell_text(
    shell: &Bundle,
    columns: Option<&ColumnsRef>,
) -> Result<(String, usize), WriteError> {
    use serde::Serialize as _;
    crate::bundle::read::validate_shell(shell)?;
    let mut out = Vec::new();
    let mut ser =
        serde_json::Serializer::with_formatter(&mut out, crate::bundle::read::formatter());
    shell
        .serialize(WithoutKernels(&mut ser, columns))
        .map_err(io::Error::from)?;
    out.push(b'\n');
    let text = String::from_utf8(out).map_err(io::Error::other)?;
    let at = text
        .find(&format!("{KERNELS}]"))
        .map(|i| i + KERNELS.len())
        .ok_or(WriteError::ShellChanged)?;
    Ok((text, at))
}

impl<W: Write> Writer<W> {
    /// Checks the shell (`shell.kernels` is ignored) and writes everything before the kernels.
    ///
    /// # Errors
    /// [`WriteError::Invalid`] for impossible figures; [`WriteError::Io`].
    pub fn begin(out: W, shell: &Bundle) -> Result<Self, WriteError> {
        Self::begin_naming(out, shell, shell.columns.clone())
    }

    /// [`Writer::begin`], the text naming `columns` as its columns file whatever
    /// `shell.columns` holds (a bundle read elsewhere and written here names the file written
    /// with it, or none).
    ///
    /// # Errors
    /// As [`Writer::begin`].
    pub fn begin_naming(
        mut out: W,
        shell: &Bundle,
        columns: Option<ColumnsRef>,
    ) -> Result<Self, WriteError> {
        let (text, at) = shell_text(shell, columns.as_ref())?;
        out.write_all(&text.as_bytes()[..at])?;
        Ok(Writer {
            out,
            prefix: text[..at].to_string(),
            index: 0,
            ids: shell.devices.iter().map(|d| d.id.clone()).collect(),
            launches: 0,
            time: 0.0,
            columns,
        })
    }

    /// Checks and writes one kernel.
    ///
    /// # Errors
    /// [`WriteError::Invalid`] naming the kernel's JSON path; [`WriteError::Io`].
    pub fn kernel(&mut self, k: &Kernel) -> Result<(), WriteError> {
        let ids = &self.ids;
        let mut issues = kernel_issues(self.index, k, &|d| ids.contains(d), ids.len());
        match self.launches.checked_add(k.launches) {
            Some(n) => self.launches = n,
            None => issues.push(Issue {
                path: format!("$.kernels[{}].launches", self.index),
                problem: Problem::LaunchesOverflow,
            }),
        }
        let time = self.time + k.time.total_s;
        if time.is_infinite() {
            issues.push(Issue {
                path: format!("$.kernels[{}].time.total_s", self.index),
                problem: Problem::TimeOverflow,
            });
        }
        if !issues.is_empty() {
            return Err(ReadError::Invalid(issues).into());
        }
        self.time = time;
        self.out.write_all(if self.index == 0 {
            b"\n    "
        } else {
            b",\n    "
        })?;
        // The kernel's own text, two levels deeper, as inside the whole bundle.
        pretty_at(k, &mut self.out, 2).map_err(io::Error::from)?;
        self.index += 1;
        Ok(())
    }

    /// Writes what follows the kernels (the shell's skipped measurements and notes, as they are
    /// now) and returns the writer.
    ///
    /// # Errors
    /// [`WriteError::ShellChanged`] when what was written before the kernels would now be
    /// written otherwise; [`WriteError::Invalid`]; [`WriteError::Io`].
    pub fn finish(mut self, shell: &Bundle) -> Result<W, WriteError> {
        let (text, at) = shell_text(shell, self.columns.as_ref())?;
        if text[..at] != self.prefix {
            return Err(WriteError::ShellChanged);
        }
        if self.index > 0 {
            self.out.write_all(b"\n  ")?;
        }
        self.out.write_all(&text.as_bytes()[at..])?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Writes a whole bundle as a stream: validates it first (every problem at once, and nothing
/// written, the output not even opened, when there is one), then asks `open` for the output and
/// writes it kernel by kernel ([`Writer::begin`], [`Writer::kernel`], [`Writer::finish`]), the
/// text [`crate::to_json`] writes. Every [`WriteError`] goes through `error`, so that the caller
/// names the output as it does for `open`'s own failures.
///
/// # Errors
/// `error` of [`WriteError::Invalid`] for impossible figures, of [`WriteError::Io`] when the
/// output fails; `open`'s.
pub fn write<W: Write, E>(
    bundle: &Bundle,
    open: impl FnOnce() -> Result<W, E>,
    error: impl Fn(WriteError) -> E,
) -> Result<W, E> {
    crate::validate(bundle).map_err(|e| error(WriteError::Invalid(e)))?;
    let mut w = Writer::begin(open()?, bundle).map_err(&error)?;
    for k in &bundle.kernels {
        w.kernel(k).map_err(&error)?;
    }
    w.finish(bundle).map_err(error)
}

/// A serializer that writes a bundle's `kernels` as an empty list and its `columns` as the
/// given value (the top-level struct's fields of those names; everything else as it is).
struct WithoutKernels<'c, S>(S, Option<&'c ColumnsRef>);

/// Forwards a [`serde::Serializer`] method to the wrapped serializer.
macro_rules! forward_ser {
    ($($method:ident($($arg:ident: $ty:ty),*) -> $out:ty;)*) => {$(
        fn $method(self, $($arg: $ty),*) -> Result<$out, S::Error> {
            self.0.$method($($arg),*)
        }
    )*};
}

impl<S: serde::Serializer> serde::Serializer for WithoutKernels<'_, S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = S::SerializeSeq;
    type SerializeTuple = S::SerializeTuple;
    type SerializeTupleStruct = S::SerializeTupleStruct;
    type SerializeTupleVariant = S::SerializeTupleVariant;
    type SerializeMap = S::SerializeMap;
    type SerializeStruct = EmptyKernels<S::SerializeStruct>;
    type SerializeStructVariant = S::SerializeStructVariant;
    forward_ser! {
        serialize_bool(v: bool) -> S::Ok;
        serialize_i8(v: i8) -> S::Ok;
        serialize_i16(v: i16) -> S::Ok;
        serialize_i32(v: i32) -> S::Ok;
        serialize_i64(v: i64) -> S::Ok;
        serialize_u8(v: u8) -> S::Ok;
        serialize_u16(v: u16) -> S::Ok;
        serialize_u32(v: u32) -> S::Ok;
        serialize_u64(v: u64) -> S::Ok;
        serialize_f32(v: f32) -> S::Ok;
        serialize_f64(v: f64) -> S::Ok;
        serialize_char(v: char) -> S::Ok;
        serialize_str(v: &str) -> S::Ok;
        serialize_bytes(v: &[u8]) -> S::Ok;
        serialize_none() -> S::Ok;
        serialize_unit() -> S::Ok;
        serialize_unit_struct(name: &'static str) -> S::Ok;
        serialize_unit_variant(name: &'static str, index: u32, variant: &'static str) -> S::Ok;
        serialize_seq(len: Option<usize>) -> S::SerializeSeq;
        serialize_tuple(len: usize) -> S::SerializeTuple;
        serialize_tuple_struct(name: &'static str, len: usize) -> S::SerializeTupleStruct;
        serialize_tuple_variant(name: &'static str, index: u32, variant: &'static str, len: usize) -> S::SerializeTupleVariant;
        serialize_map(len: Option<usize>) -> S::SerializeMap;
        serialize_struct_variant(name: &'static str, index: u32, variant: &'static str, len: usize) -> S::SerializeStructVariant;
    }
    fn serialize_some<T: serde::Serialize + ?Sized>(self, v: &T) -> Result<S::Ok, S::Error> {
        self.0.serialize_some(v)
    }
    fn serialize_newtype_struct<T: serde::Serialize + ?Sized>(
        self,
        name: &'static str,
        v: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0.serialize_newtype_struct(name, v)
    }
    fn serialize_newtype_variant<T: serde::Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0.serialize_newtype_variant(name, index, variant, v)
    }
    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        let columns = self.1.cloned();
        self.0
            .serialize_struct(name, len)
            .map(|s| EmptyKernels(s, columns))
    }
}

/// The bundle's fields, `kernels` written as `[]`, `columns` as given.
struct EmptyKernels<S>(S, Option<ColumnsRef>);

impl<S: serde::ser::SerializeStruct> serde::ser::SerializeStruct for EmptyKernels<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    fn serialize_field<T: serde::Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), S::Error> {
        match key {
            "kernels" => self.0.serialize_field(key, &[] as &[Kernel]),
            "columns" => self.columns(),
            _ => self.0.serialize_field(key, value),
        }
    }
    fn skip_field(&mut self, key: &'static str) -> Result<(), S::Error> {
        if key == "columns" {
            self.columns()
        } else {
            self.0.skip_field(key)
        }
    }
    fn end(self) -> Result<S::Ok, S::Error> {
        self.0.end()
    }
}

impl<S: serde::ser::SerializeStruct> EmptyKernels<S> {
    /// The `columns` field as given: written, or skipped when there is none.
    fn columns(&mut self) -> Result<(), S::Error> {
        match &self.1 {
            Some(c) => self.0.serialize_field("columns", c),
            None => self.0.skip_field("columns"),
        }
    }
}

/// What [`read`] could not read as a valid bundle: [`crate::parse_bundle`] of the whole text
/// says why, naming the line, column or JSON path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not a valid bundle as read in one pass; read it whole for the diagnosis")]
pub struct NotStreamed;

/// A bundle read by [`read`]: everything but its kernels, and how many kernels it held.
#[derive(Debug, Clone, PartialEq)]
pub struct Streamed {
    /// The bundle without its kernels (`kernels` is empty).
    pub shell: Bundle,
    /// Its kernel entries.
    pub entries: usize,
}

/// Reads a bundle from `reader` in one pass, handing each kernel to `each` as it is read
/// (brought up to date and checked as [`crate::parse_bundle`] does) and keeping the rest. A
/// UTF-8 byte-order mark is skipped.
///
/// The text goes through a window: a byte scan finds where each value of the top-level object
/// ends; each element of `kernels` is read from its own slice (serde_json's fast path), the other
/// values are kept as text and read as one bundle without kernels at the end.
///
/// # Errors
/// [`NotStreamed`] for anything [`crate::parse_bundle`] would refuse (and, conservatively, for
/// nothing else); `each` may have seen some kernels by then.
pub fn read<R: Read>(reader: R, each: &mut dyn FnMut(Kernel)) -> Result<Streamed, NotStreamed> {
    let mut seen = Seen::default();
    let mut w = JsonWindow::new(reader);
    w.skip_bom()?;
    if w.peek()? != Some(b'{') {
        return Err(NotStreamed);
    }
    w.pos += 1;
    // The other top-level values, as an object's text.
    let mut shell_text: Vec<u8> = vec![b'{'];
    let mut kernels_read = false;
    let mut first = true;
    loop {
        match w.peek()? {
            Some(b'}') if first => {
                w.pos += 1;
                break;
            }
            Some(b'"') => {}
            _ => return Err(NotStreamed),
        }
        let len = w.value_len(usize::MAX)?;
        let key = w.slice(len).to_vec();
        w.pos += len;
        if w.peek()? != Some(b':') {
            return Err(NotStreamed);
        }
        w.pos += 1;
        if key == b"\"kernels\"" {
            if kernels_read || w.peek()? != Some(b'[') {
                return Err(NotStreamed);
            }
            kernels_read = true;
            w.pos += 1;
            if w.peek()? == Some(b']') {
                w.pos += 1;
            } else {
                loop {
                    if w.peek()?.is_none() {
                        return Err(NotStreamed);
                    }
                    let len = w.value_len(usize::MAX)?;
                    let k: Kernel =
                        serde_json::from_slice(w.slice(len)).map_err(|_| NotStreamed)?;
                    w.pos += len;
                    seen.kernel(k, each)?;
                    match w.peek()? {
                        Some(b',') => w.pos += 1,
                        Some(b']') => {
                            w.pos += 1;
                            break;
                        }
                        _ => return Err(NotStreamed),
                    }
                }
            }
        } else {
            if w.peek()?.is_none() {
                return Err(NotStreamed);
            }
            let len = w.value_len(usize::MAX)?;
            if shell_text.len() > 1 {
                shell_text.push(b',');
            }
            shell_text.extend_from_slice(&key);
            shell_text.push(b':');
            shell_text.extend_from_slice(w.slice(len));
            w.pos += len;
        }
        first = false;
        match w.peek()? {
            Some(b',') => w.pos += 1,
            Some(b'}') => {
                w.pos += 1;
                break;
            }
            _ => return Err(NotStreamed),
        }
    }
    if w.peek()?.is_some() {
        return Err(NotStreamed);
    }
    shell_text.push(b'}');
    let shell: Bundle = serde_json::from_slice(&shell_text).map_err(|_| NotStreamed)?;
    // A `kernels` key written with escapes was read with the rest: not a stream's reading.
    if !shell.kernels.is_empty()
        || shell.schema_version != SCHEMA_VERSION
        || crate::validate(&shell).is_err()
    {
        return Err(NotStreamed);
    }
    // The devices may come after the kernels in the text: their references are checked now.
    let declared = |d: &str| shell.devices.iter().any(|x| x.id == d);
    if seen.devices.iter().any(|d| !declared(d)) || (seen.undevised && shell.devices.len() > 1) {
        return Err(NotStreamed);
    }
    Ok(Streamed {
        shell,
        entries: seen.entries,
    })
}

/// What the kernels read so far say.
#[derive(Default)]
struct Seen {
    entries: usize,
    launches: u64,
    time: f64,
    devices: HashSet<String>,
    undevised: bool,
}

impl Seen {
    /// Brings a kernel up to date, checks it as `parse_bundle` would (its device once the
    /// devices are known) and hands it on.
    fn kernel(&mut self, mut k: Kernel, each: &mut dyn FnMut(Kernel)) -> Result<(), NotStreamed> {
        // Older bundles carry the operator link as tags (as `parse_bundle` reads them).
        k.adopt_operator_tags();
        if !kernel_issues(self.entries, &k, &|_| true, 0).is_empty() {
            return Err(NotStreamed);
        }
        self.launches = self.launches.checked_add(k.launches).ok_or(NotStreamed)?;
        self.time += k.time.total_s;
        if self.time.is_infinite() {
            return Err(NotStreamed);
        }
        match &k.device {
            Some(d) => {
                if !self.devices.contains(d.as_str()) {
                    self.devices.insert(d.clone());
                }
            }
            None => self.undevised = true,
        }
        self.entries += 1;
        each(k);
        Ok(())
    }
}

// Every failure of the byte window ([`crate::bundle::window`]) is a [`NotStreamed`]: the bundle is then
// read whole, for its diagnosis.
impl From<io::Error> for NotStreamed {
    fn from(_: io::Error) -> Self {
        NotStreamed
    }
}

impl From<WindowError> for NotStreamed {
    fn from(_: WindowError) -> Self {
        NotStreamed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!(
            "{}/../tests/fixtures/bundles/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    fn written(b: &Bundle) -> String {
        let mut w = Writer::begin(Vec::new(), b).unwrap();
        for k in &b.kernels {
            w.kernel(k).unwrap();
        }
        String::from_utf8(w.finish(b).unwrap()).unwrap()
    }

    #[test]
    fn the_writer_writes_what_to_json_writes() {
        for f in ["v100-deepcam-example.json", "deepcam-v100-amp-fw.json"] {
            let b = crate::parse_bundle(&fixture(f)).unwrap();
            assert_eq!(written(&b), crate::to_json(&b).unwrap(), "{f}");
            let mut empty = b.clone();
            empty.kernels.clear();
            assert_eq!(written(&empty), crate::to_json(&empty).unwrap(), "{f}");
        }
    }

    #[test]
    fn the_writer_refuses_an_impossible_kernel_with_its_path() {
        let b = crate::parse_bundle(&fixture("v100-deepcam-example.json")).unwrap();
        let mut w = Writer::begin(Vec::new(), &b).unwrap();
        w.kernel(&b.kernels[0]).unwrap();
        let mut bad = b.kernels[1].clone();
        bad.time.total_s = -1.0;
        let e = w.kernel(&bad).unwrap_err().to_string();
        assert!(
            e.contains("`$.kernels[1].time.total_s`: -1 is negative"),
            "{e}"
        );
        let mut other = b.kernels[2].clone();
        other.device = Some("9".into());
        let e = w.kernel(&other).unwrap_err().to_string();
        assert!(e.contains("refers to device \"9\""), "{e}");
        // Devices changed between the start and the end: refused, not written inconsistent.
        let mut w = Writer::begin(Vec::new(), &b).unwrap();
        let mut changed = b.clone();
        changed.devices[0].name = "another".into();
        assert!(matches!(w.kernel(&b.kernels[0]), Ok(())));
        assert!(matches!(w.finish(&changed), Err(WriteError::ShellChanged)));
    }

    #[test]
    fn the_reader_reads_what_parse_bundle_reads() {
        for f in ["v100-deepcam-example.json", "deepcam-v100-amp-fw.json"] {
            let text = fixture(f);
            let whole = crate::parse_bundle(&text).unwrap();
            let mut kernels = Vec::new();
            let s = read(text.as_bytes(), &mut |k| kernels.push(k)).unwrap();
            assert_eq!(s.entries, whole.kernels.len());
            let mut again = s.shell;
            again.kernels = kernels;
            assert_eq!(again, whole, "{f}");
            // With a byte-order mark, and with the kernels before the devices.
            let bom = format!("\u{feff}{text}");
            assert!(read(bom.as_bytes(), &mut |_| {}).is_ok());
        }
        let v = crate::parse_bundle(&fixture("v100-deepcam-example.json")).unwrap();
        let json = serde_json::to_value(&v).unwrap();
        let serde_json::Value::Object(map) = json else {
            panic!()
        };
        let mut reordered = serde_json::Map::new();
        reordered.insert("kernels".into(), map["kernels"].clone());
        for (k, v) in &map {
            reordered.entry(k.clone()).or_insert_with(|| v.clone());
        }
        let text = serde_json::to_string(&reordered).unwrap();
        let mut n = 0;
        assert!(read(text.as_bytes(), &mut |_| n += 1).is_ok());
        assert_eq!(n, v.kernels.len());
    }

    /// A reader that hands out one byte at a time: every value crosses the window's edge.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match (self.0.split_first(), buf.first_mut()) {
                (Some((&c, rest)), Some(slot)) => {
                    *slot = c;
                    self.0 = rest;
                    Ok(1)
                }
                _ => Ok(0),
            }
        }
    }

    #[test]
    fn the_reader_reads_the_same_however_the_text_arrives() {
        let text = fixture("v100-deepcam-example.json");
        // Escapes, brackets and quotes inside strings, across the window's edge.
        let text = text.replacen(
            "\"tool\": ",
            "\"host\": \"a \\\" ] } [ { \\\\ b\", \"tool\": ",
            1,
        );
        let whole = crate::parse_bundle(&text).unwrap();
        let mut kernels = Vec::new();
        let s = read(Trickle(text.as_bytes()), &mut |k| kernels.push(k)).unwrap();
        let mut again = s.shell;
        again.kernels = kernels;
        assert_eq!(again, whole);
        assert_eq!(whole.provenance.host.as_deref(), Some("a \" ] } [ { \\ b"));
    }

    #[test]
    fn the_reader_refuses_what_parse_bundle_refuses() {
        let bad = std::fs::read_dir(format!(
            "{}/../tests/fixtures/bad",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            // Bundles read alone (`validate`): not traces, nor cases with a command line of
            // their own (a merge of two readable bundles, a trace joined with another).
            p.extension().is_some_and(|e| e == "json")
                && !p
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("trace-")
                && !std::path::Path::new(&format!("{}.args", p.display())).exists()
        });
        let mut checked = 0;
        for p in bad {
            let bytes = std::fs::read(&p).unwrap();
            assert!(
                crate::parse_bundle_bytes(&bytes).is_err(),
                "{}",
                p.display()
            );
            assert_eq!(
                read(&bytes[..], &mut |_| {}).map(|_| ()),
                Err(NotStreamed),
                "{}",
                p.display()
            );
            checked += 1;
        }
        assert!(checked >= 14, "{checked}");
    }
}
