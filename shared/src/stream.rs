//! Bundles as streams: written kernel by kernel ([`Writer`]) and read kernel by kernel
//! ([`read`]), so that a bundle of a million launches is held neither whole as text nor whole as
//! kernels. Both keep the rules of [`crate::read`]: the writer validates what it writes (every
//! kernel with its JSON path, the rest as [`crate::to_json`] does) and writes the same text as
//! `to_json`; the reader accepts exactly what [`crate::parse_bundle`] accepts, and leaves the
//! diagnosis of anything else to it (on the whole text, which only a refused bundle costs).
//!
//! Pure: the caller hands a [`std::io::Write`] or a [`std::io::Read`].

use std::collections::HashSet;
use std::fmt;
use std::io::{self, Read, Write};
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::bundle::{Bundle, Kernel, SCHEMA_VERSION};
use crate::read::{Issue, Problem, ReadError, kernel_issues, pretty};

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
    /// One kernel's text, reused.
    scratch: Vec<u8>,
}

/// The shell's text: `to_json` of the bundle as if it had no kernels (never copying them), and
/// where the kernels go.
fn shell_text(shell: &Bundle) -> Result<(String, usize), WriteError> {
    use serde::Serialize as _;
    crate::read::validate_shell(shell)?;
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, crate::read::formatter());
    shell
        .serialize(WithoutKernels(&mut ser))
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
    pub fn begin(mut out: W, shell: &Bundle) -> Result<Self, WriteError> {
        let (text, at) = shell_text(shell)?;
        out.write_all(&text.as_bytes()[..at])?;
        Ok(Writer {
            out,
            prefix: text[..at].to_string(),
            index: 0,
            ids: shell.devices.iter().map(|d| d.id.clone()).collect(),
            launches: 0,
            scratch: Vec::new(),
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
        if !issues.is_empty() {
            return Err(ReadError::Invalid(issues).into());
        }
        self.scratch.clear();
        pretty(k, &mut self.scratch).map_err(io::Error::from)?;
        self.out.write_all(if self.index == 0 {
            b"\n    "
        } else {
            b",\n    "
        })?;
        // The kernel's own text, two levels deeper, as inside the whole bundle.
        for (i, line) in self.scratch.split(|&b| b == b'\n').enumerate() {
            if i > 0 {
                self.out.write_all(b"\n    ")?;
            }
            self.out.write_all(line)?;
        }
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
        let (text, at) = shell_text(shell)?;
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

/// A serializer that writes a bundle's `kernels` as an empty list (the top-level struct's field
/// of that name; everything else as it is).
struct WithoutKernels<S>(S);

/// Forwards a [`serde::Serializer`] method to the wrapped serializer.
macro_rules! forward_ser {
    ($($method:ident($($arg:ident: $ty:ty),*) -> $out:ty;)*) => {$(
        fn $method(self, $($arg: $ty),*) -> Result<$out, S::Error> {
            self.0.$method($($arg),*)
        }
    )*};
}

impl<S: serde::Serializer> serde::Serializer for WithoutKernels<S> {
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
        self.0.serialize_struct(name, len).map(EmptyKernels)
    }
}

/// The bundle's fields, `kernels` written as `[]`.
struct EmptyKernels<S>(S);

impl<S: serde::ser::SerializeStruct> serde::ser::SerializeStruct for EmptyKernels<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    fn serialize_field<T: serde::Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), S::Error> {
        if key == "kernels" {
            self.0.serialize_field(key, &[] as &[Kernel])
        } else {
            self.0.serialize_field(key, value)
        }
    }
    fn skip_field(&mut self, key: &'static str) -> Result<(), S::Error> {
        self.0.skip_field(key)
    }
    fn end(self) -> Result<S::Ok, S::Error> {
        self.0.end()
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
/// # Errors
/// [`NotStreamed`] for anything [`crate::parse_bundle`] would refuse (and, conservatively, for
/// nothing else); `each` may have seen some kernels by then.
pub fn read<R: Read>(reader: R, each: &mut dyn FnMut(Kernel)) -> Result<Streamed, NotStreamed> {
    let mut seen = Seen::default();
    let reader = SkipBom::new(reader);
    let mut de = serde_json::Deserializer::from_reader(reader);
    let mut sink = |mut k: Kernel| -> Result<(), String> {
        // Older bundles carry the operator link as tags (as `parse_bundle` reads them).
        k.adopt_operator_tags();
        if !kernel_issues(seen.entries, &k, &|_| true, 0).is_empty() {
            return Err("impossible figures".into());
        }
        seen.launches = seen
            .launches
            .checked_add(k.launches)
            .ok_or("launches overflow")?;
        match &k.device {
            Some(d) => {
                if !seen.devices.contains(d.as_str()) {
                    seen.devices.insert(d.clone());
                }
            }
            None => seen.undevised = true,
        }
        seen.entries += 1;
        each(k);
        Ok(())
    };
    let shell = Bundle::deserialize(Shell {
        de: &mut de,
        sink: &mut sink,
    })
    .map_err(|_| NotStreamed)?;
    de.end().map_err(|_| NotStreamed)?;
    if shell.schema_version != SCHEMA_VERSION || crate::validate(&shell).is_err() {
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
    devices: HashSet<String>,
    undevised: bool,
}

/// A reader without a leading UTF-8 byte-order mark.
struct SkipBom<R> {
    inner: R,
    head: Vec<u8>,
    checked: bool,
}

impl<R: Read> SkipBom<R> {
    fn new(inner: R) -> Self {
        SkipBom {
            inner,
            head: Vec::new(),
            checked: false,
        }
    }
}

impl<R: Read> Read for SkipBom<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !self.checked {
            self.checked = true;
            let mut first = [0u8; 3];
            let mut n = 0;
            while n < 3 {
                match self.inner.read(&mut first[n..])? {
                    0 => break,
                    m => n += m,
                }
            }
            if first[..n] != [0xEF, 0xBB, 0xBF] {
                self.head = first[..n].to_vec();
            }
        }
        if !self.head.is_empty() {
            let n = self.head.len().min(buf.len());
            buf[..n].copy_from_slice(&self.head[..n]);
            self.head.drain(..n);
            return Ok(n);
        }
        self.inner.read(buf)
    }
}

/// What receives each kernel; an `Err` stops the reading.
type Sink<'s> = dyn FnMut(Kernel) -> Result<(), String> + 's;

/// Forwards a [`Deserializer`]'s methods to `self.de`, visitor unchanged.
macro_rules! forward {
    ($($method:ident),*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
            self.de.$method(visitor)
        }
    )*};
}

/// The rest of the [`Deserializer`] methods, forwarded to `self.de`.
macro_rules! forward_rest {
    () => {
        forward!(
            deserialize_any,
            deserialize_bool,
            deserialize_i8,
            deserialize_i16,
            deserialize_i32,
            deserialize_i64,
            deserialize_i128,
            deserialize_u8,
            deserialize_u16,
            deserialize_u32,
            deserialize_u64,
            deserialize_u128,
            deserialize_f32,
            deserialize_f64,
            deserialize_char,
            deserialize_str,
            deserialize_string,
            deserialize_bytes,
            deserialize_byte_buf,
            deserialize_option,
            deserialize_unit,
            deserialize_map,
            deserialize_ignored_any
        );
        fn deserialize_unit_struct<V: Visitor<'de>>(
            self,
            name: &'static str,
            visitor: V,
        ) -> Result<V::Value, Self::Error> {
            self.de.deserialize_unit_struct(name, visitor)
        }
        fn deserialize_newtype_struct<V: Visitor<'de>>(
            self,
            name: &'static str,
            visitor: V,
        ) -> Result<V::Value, Self::Error> {
            self.de.deserialize_newtype_struct(name, visitor)
        }
        fn deserialize_tuple<V: Visitor<'de>>(
            self,
            len: usize,
            visitor: V,
        ) -> Result<V::Value, Self::Error> {
            self.de.deserialize_tuple(len, visitor)
        }
        fn deserialize_tuple_struct<V: Visitor<'de>>(
            self,
            name: &'static str,
            len: usize,
            visitor: V,
        ) -> Result<V::Value, Self::Error> {
            self.de.deserialize_tuple_struct(name, len, visitor)
        }
        fn deserialize_enum<V: Visitor<'de>>(
            self,
            name: &'static str,
            variants: &'static [&'static str],
            visitor: V,
        ) -> Result<V::Value, Self::Error> {
            self.de.deserialize_enum(name, variants, visitor)
        }
        fn is_human_readable(&self) -> bool {
            self.de.is_human_readable()
        }
    };
}

/// The bundle's deserializer: its top-level object's `kernels` go to the sink, one by one.
struct Shell<'s, 'k, D> {
    de: D,
    sink: &'s mut Sink<'k>,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Shell<'_, '_, D> {
    type Error = D::Error;
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.de.deserialize_struct(
            name,
            fields,
            ShellVisitor {
                inner: visitor,
                sink: self.sink,
            },
        )
    }
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.de.deserialize_seq(visitor)
    }
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.de.deserialize_identifier(visitor)
    }
    forward_rest!();
}

struct ShellVisitor<'s, 'k, V> {
    inner: V,
    sink: &'s mut Sink<'k>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for ShellVisitor<'_, '_, V> {
    type Value = V::Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(ShellMap {
            map,
            sink: self.sink,
            kernels_next: false,
        })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        // A bundle as an array: not one `parse_bundle` reads either.
        self.inner.visit_seq(seq)
    }
}

struct ShellMap<'s, 'k, A> {
    map: A,
    sink: &'s mut Sink<'k>,
    /// The key just read is `kernels`.
    kernels_next: bool,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for ShellMap<'_, '_, A> {
    type Error = A::Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.kernels_next = false;
        self.map.next_key_seed(KeySpy {
            seed,
            kernels: &mut self.kernels_next,
        })
    }
    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        if self.kernels_next {
            self.map.next_value_seed(KernelsSeed {
                seed,
                sink: &mut *self.sink,
            })
        } else {
            self.map.next_value_seed(seed)
        }
    }
    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// A key's seed that notes whether the key is `kernels`.
struct KeySpy<'f, K> {
    seed: K,
    kernels: &'f mut bool,
}

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySpy<'_, K> {
    type Value = K::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<K::Value, D::Error> {
        self.seed.deserialize(KeySpyDe {
            de: d,
            kernels: self.kernels,
        })
    }
}

struct KeySpyDe<'f, D> {
    de: D,
    kernels: &'f mut bool,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for KeySpyDe<'_, D> {
    type Error = D::Error;
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.de.deserialize_identifier(KeyVisitor {
            inner: visitor,
            kernels: self.kernels,
        })
    }
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.de.deserialize_seq(visitor)
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.de.deserialize_struct(name, fields, visitor)
    }
    forward_rest!();
}

struct KeyVisitor<'f, V> {
    inner: V,
    kernels: &'f mut bool,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for KeyVisitor<'_, V> {
    type Value = V::Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        *self.kernels = v == "kernels";
        self.inner.visit_str(v)
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        *self.kernels = v == "kernels";
        self.inner.visit_borrowed_str(v)
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        *self.kernels = v == "kernels";
        self.inner.visit_string(v)
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<V::Value, E> {
        *self.kernels = v == b"kernels";
        self.inner.visit_bytes(v)
    }
    fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<V::Value, E> {
        *self.kernels = v == b"kernels";
        self.inner.visit_borrowed_bytes(v)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<V::Value, E> {
        self.inner.visit_u64(v)
    }
}

/// The `kernels` value's seed: each element to the sink, an empty list to the bundle.
struct KernelsSeed<'s, 'k, S> {
    seed: S,
    sink: &'s mut Sink<'k>,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for KernelsSeed<'_, '_, S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(KernelsDe {
            de: d,
            sink: self.sink,
        })
    }
}

struct KernelsDe<'s, 'k, D> {
    de: D,
    sink: &'s mut Sink<'k>,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for KernelsDe<'_, '_, D> {
    type Error = D::Error;
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.de.deserialize_seq(KernelsVisitor {
            inner: visitor,
            sink: self.sink,
        })
    }
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.de.deserialize_identifier(visitor)
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.de.deserialize_struct(name, fields, visitor)
    }
    forward_rest!();
}

struct KernelsVisitor<'s, 'k, V> {
    inner: V,
    sink: &'s mut Sink<'k>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for KernelsVisitor<'_, '_, V> {
    type Value = V::Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<V::Value, A::Error> {
        while let Some(k) = seq.next_element::<Kernel>()? {
            (self.sink)(k).map_err(de::Error::custom)?;
        }
        self.inner.visit_seq(Empty(PhantomData))
    }
}

/// A sequence with nothing in it.
struct Empty<E>(PhantomData<E>);

impl<'de, E: de::Error> SeqAccess<'de> for Empty<E> {
    type Error = E;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, _: T) -> Result<Option<T::Value>, E> {
        Ok(None)
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

    #[test]
    fn the_reader_refuses_what_parse_bundle_refuses() {
        let bad = std::fs::read_dir(format!(
            "{}/../tests/fixtures/bad",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && !p
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("trace-")
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
