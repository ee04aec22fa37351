//! The columns file: a bundle's kernels in binary, beside its JSON, so that a reader opens a
//! million launches without parsing their text.
//!
//! The JSON bundle stays the contract. A bundle with a columns file names it at its start
//! ([`ColumnsRef`], a file name and an id that both carry), and the columns file holds the same
//! bundle exactly: [`decode`] gives what [`crate::parse_bundle`] gives for the JSON, figure for
//! figure (every value is stored as its IEEE 754 bits, so a wasm reader gets the same last bit as
//! a native one). What varies from launch to launch (launches, time, the complexity, the operator
//! call, FLOPs per datapath, bytes per level) is stored per kernel as 8-byte numbers; the rest of
//! each kernel (its name, device, grid, block, source, tags, operator, collective) is stored once
//! per distinct value as JSON, its *template*, and referenced. A million launches of a thousand
//! kernels are a thousand templates and a million records of about 70 bytes.
//!
//! Layout, little-endian:
//! - header: [`MAGIC`], the format (`u32`, [`FORMAT`]), the id's length (`u32`) and the id;
//! - one record per kernel: its template's index (`u32`), the mask of the slots it sets (`u32`),
//!   then one 8-byte value per set slot, in slot order (`launches` and `call` as `u64`, the
//!   rest as `f64`);
//! - the shell: the bundle without its kernels, as its JSON (`"kernels": []`);
//! - the templates: each its length (`u32`) and its JSON, a kernel whose slots hold zeros;
//! - the trailer: the kernels' count, the shell's offset, the shell's length and the templates'
//!   count (`u64` each), then [`MAGIC`] again.
//!
//! Pure: the writer takes a [`std::io::Write`], the reader a byte slice.

use std::io::{self, Write};

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::bundle::read::{Issue, Problem, ReadError, kernel_issues};
use crate::bundle::stream::WriteError;
use crate::bundle::{Bundle, Datapath, Kernel};

/// The first and last eight bytes of a columns file.
pub const MAGIC: &[u8; 8] = b"ROOFCOLS";

/// The layout version this build writes and reads.
pub const FORMAT: u32 = 1;

pub use super::ColumnsRef;

/// The columns file's name for a bundle file's name: `run.json` and `run.json.gz` give
/// `run.columns`.
pub fn file_name_for(bundle_file: &str) -> String {
    let stem = bundle_file
        .strip_suffix(".gz")
        .unwrap_or(bundle_file)
        .strip_suffix(".json")
        .unwrap_or(bundle_file.strip_suffix(".gz").unwrap_or(bundle_file));
    format!("{stem}.columns")
}

/// Whether `bytes` begin as a columns file does.
pub fn is_columns(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// serde_json's compact formatter, except that `-0.0` is written `0.0`, as the JSON's writer
/// writes it.
struct Compact;

impl serde_json::ser::Formatter for Compact {
    fn write_f64<W: ?Sized + Write>(&mut self, w: &mut W, v: f64) -> io::Result<()> {
        serde_json::ser::CompactFormatter.write_f64(w, v + 0.0)
    }
}

/// The slots, in record order.
const LAUNCHES: usize = 0;
const TIME: usize = 1;
const CX_FLOPS: usize = 2;
const CX_BYTES: usize = 3;
const CALL: usize = 4;
const OP_FLOPS: usize = 5;
const OP_BYTES: usize = 6;
/// `Datapath::ALL` in order.
const FLOPS: usize = 7;
/// L1, L2, HBM.
const BYTES: usize = FLOPS + Datapath::ALL.len();
const SLOTS: usize = BYTES + 3;

/// 0.0 for −0.0 (as the JSON writer writes it), else the value.
fn plain(v: f64) -> f64 {
    if v == 0.0 { 0.0 } else { v }
}

/// The kernel's slots: the mask of those it has and their values; `template` is left with a
/// zero in each.
fn take_slots(template: &mut Kernel) -> (u32, [u64; SLOTS]) {
    let mut mask = 0u32;
    let mut values = [0u64; SLOTS];
    let mut put = |slot: usize, v: u64| {
        mask |= 1 << slot;
        values[slot] = v;
    };
    put(LAUNCHES, std::mem::take(&mut template.launches));
    put(
        TIME,
        plain(std::mem::take(&mut template.time.total_s)).to_bits(),
    );
    if let Some(c) = &mut template.complexity {
        put(CX_FLOPS, plain(std::mem::take(&mut c.flops)).to_bits());
        put(CX_BYTES, plain(std::mem::take(&mut c.bytes)).to_bits());
    }
    if let Some(op) = &mut template.operator {
        put(CALL, std::mem::take(&mut op.call));
        if let Some(c) = &mut op.complexity {
            put(OP_FLOPS, plain(std::mem::take(&mut c.flops)).to_bits());
            put(OP_BYTES, plain(std::mem::take(&mut c.bytes)).to_bits());
        }
    }
    for (i, d) in Datapath::ALL.into_iter().enumerate() {
        if let Some(v) = template.flops.get(d) {
            put(FLOPS + i, plain(v).to_bits());
            template.flops.set(d, Some(0.0));
        }
    }
    for (i, b) in [
        &mut template.bytes.l1,
        &mut template.bytes.l2,
        &mut template.bytes.hbm,
    ]
    .into_iter()
    .enumerate()
    {
        if let Some(v) = b {
            put(BYTES + i, plain(*v).to_bits());
            *v = 0.0;
        }
    }
    (mask, values)
}

/// The slots a template has (those its records must set).
fn mask_of(template: &Kernel) -> u32 {
    take_slots(&mut template.clone()).0
}

/// Puts a record's values into the template's slots (the mask is the template's).
fn put_slots(k: &mut Kernel, values: &[u64; SLOTS]) {
    let f = |slot: usize| f64::from_bits(values[slot]);
    k.launches = values[LAUNCHES];
    k.time.total_s = f(TIME);
    if let Some(c) = &mut k.complexity {
        c.flops = f(CX_FLOPS);
        c.bytes = f(CX_BYTES);
    }
    if let Some(op) = &mut k.operator {
        op.call = values[CALL];
        if let Some(c) = &mut op.complexity {
            c.flops = f(OP_FLOPS);
            c.bytes = f(OP_BYTES);
        }
    }
    for (i, d) in Datapath::ALL.into_iter().enumerate() {
        if k.flops.get(d).is_some() {
            k.flops.set(d, Some(f(FLOPS + i)));
        }
    }
    for (i, b) in [&mut k.bytes.l1, &mut k.bytes.l2, &mut k.bytes.hbm]
        .into_iter()
        .enumerate()
    {
        if let Some(v) = b {
            *v = f(BYTES + i);
        }
    }
}

/// A columns file written kernel by kernel, beside a bundle's JSON written by
/// [`crate::bundle::stream::Writer`]: [`Writer::begin`] with what the bundle names,
/// [`Writer::kernel`] for each kernel (checked by the JSON's writer), [`Writer::finish`] with the
/// shell.
pub struct Writer<W: Write> {
    out: W,
    /// What the bundle names: the shell written here names it too.
    named: ColumnsRef,
    /// The templates (kernels whose slots hold zeros), in index order, written at the end.
    /// Equal kernels write the same JSON (their `f64`s are equal, so never NaN, and ±0 is
    /// written alike), so a kernel equal to none of them is a new template.
    templates: Vec<Kernel>,
    /// The templates' indices by [`quick_key`].
    known: FxHashMap<u64, Vec<u32>>,
    kernels: u64,
    /// Bytes written so far.
    at: u64,
    record: Vec<u8>,
}

impl<W: Write> Writer<W> {
    /// Writes the header with the id of `named`, the [`ColumnsRef`] the bundle's JSON holds.
    ///
    /// # Errors
    /// The writer's.
    pub fn begin(mut out: W, named: ColumnsRef) -> io::Result<Self> {
        let id = named.id.as_str();
        let len = u32::try_from(id.len()).map_err(io::Error::other)?;
        out.write_all(MAGIC)?;
        out.write_all(&FORMAT.to_le_bytes())?;
        out.write_all(&len.to_le_bytes())?;
        out.write_all(id.as_bytes())?;
        let at = 16 + id.len() as u64;
        Ok(Writer {
            out,
            named,
            templates: Vec::new(),
            known: FxHashMap::default(),
            kernels: 0,
            at,
            record: Vec::with_capacity(8 + 8 * SLOTS),
        })
    }

    /// Writes one kernel's record (and its template, the first time it is seen).
    ///
    /// # Errors
    /// The writer's.
    pub fn kernel(&mut self, k: &Kernel) -> io::Result<()> {
        let mut t = k.clone();
        let (mask, values) = take_slots(&mut t);
        let key = quick_key(&t);
        let templates = &self.templates;
        let known = self
            .known
            .get(&key)
            .and_then(|ts| ts.iter().copied().find(|&i| templates[i as usize] == t));
        let index = match known {
            Some(i) => i,
            None => {
                let i = u32::try_from(self.templates.len()).map_err(io::Error::other)?;
                self.templates.push(t);
                self.known.entry(key).or_default().push(i);
                i
            }
        };
        self.record.clear();
        self.record.extend_from_slice(&index.to_le_bytes());
        self.record.extend_from_slice(&mask.to_le_bytes());
        for (slot, v) in values.iter().enumerate() {
            if mask & (1 << slot) != 0 {
                self.record.extend_from_slice(&v.to_le_bytes());
            }
        }
        self.out.write_all(&self.record)?;
        self.at += self.record.len() as u64;
        self.kernels += 1;
        Ok(())
    }

    /// Writes the shell (the bundle but its kernels, as the JSON's writer wrote it), the
    /// templates and the trailer, and returns the writer.
    ///
    /// # Errors
    /// [`WriteError::Invalid`] for a shell with impossible figures; [`WriteError::Io`].
    pub fn finish(mut self, shell: &Bundle) -> Result<W, WriteError> {
        let (text, _) = crate::bundle::stream::shell_text(shell, Some(&self.named))?;
        let shell_at = self.at;
        self.out.write_all(text.as_bytes())?;
        let mut json = Vec::new();
        for t in &self.templates {
            json.clear();
            t.serialize(&mut serde_json::Serializer::with_formatter(
                &mut json, Compact,
            ))
            .map_err(io::Error::from)?;
            let len = u32::try_from(json.len()).map_err(io::Error::other)?;
            self.out.write_all(&len.to_le_bytes())?;
            self.out.write_all(&json)?;
        }
        for v in [
            self.kernels,
            shell_at,
            text.len() as u64,
            self.templates.len() as u64,
        ] {
            self.out.write_all(&v.to_le_bytes())?;
        }
        self.out.write_all(MAGIC)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// A hash of some of a template's fields: equal templates hash alike (the fields left out only
/// make more of them share a key, and [`Writer::kernel`] compares them whole).
fn quick_key(t: &Kernel) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    t.name.hash(&mut h);
    t.device.hash(&mut h);
    t.grid.hash(&mut h);
    t.block.hash(&mut h);
    t.nvtx_range.hash(&mut h);
    for (k, v) in &t.tags {
        k.hash(&mut h);
        v.hash(&mut h);
    }
    if let Some(op) = &t.operator {
        op.name.hash(&mut h);
        op.shapes.hash(&mut h);
        op.kernels.hash(&mut h);
    }
    h.finish()
}

/// A whole bundle as the columns file its JSON names as `named` (validated first, as the JSON's
/// writer does).
///
/// # Errors
/// [`WriteError::Invalid`] for impossible figures.
pub fn encode(bundle: &Bundle, named: ColumnsRef) -> Result<Vec<u8>, WriteError> {
    crate::validate(bundle)?;
    let mut w = Writer::begin(Vec::new(), named)?;
    for k in &bundle.kernels {
        w.kernel(k)?;
    }
    w.finish(bundle)
}

/// A columns file opened: its header, shell and templates read, its records not yet.
#[derive(Debug)]
pub struct Columns<'a> {
    id: String,
    shell: Bundle,
    templates: Vec<Kernel>,
    masks: Vec<u32>,
    records: &'a [u8],
    /// Where the records start in the file, for messages.
    records_at: usize,
    kernels: u64,
}

/// The error for a columns file that is not one, at `offset`.
fn broken(offset: usize, message: &'static str) -> ReadError {
    ReadError::Columns {
        offset: offset as u64,
        message,
    }
}

/// What a file cut short is told.
const CUT: &str = "the file ends inside a part of it: is it cut short?";
/// What a trailer that points outside the file is told.
const PAST: &str = "its trailer points past its end";

/// `n` bytes at `at`, or the error `what`.
fn take<'b>(
    bytes: &'b [u8],
    at: usize,
    n: usize,
    what: &'static str,
) -> Result<&'b [u8], ReadError> {
    at.checked_add(n)
        .and_then(|end| bytes.get(at..end))
        .ok_or_else(|| broken(at, what))
}

fn u32_at(bytes: &[u8], at: usize, what: &'static str) -> Result<u32, ReadError> {
    let b = take(bytes, at, 4, what)?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn u64_at(bytes: &[u8], at: usize, what: &'static str) -> Result<u64, ReadError> {
    let b = take(bytes, at, 8, what)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    Ok(u64::from_le_bytes(a))
}

/// A file offset read from the trailer as an index into `bytes`.
fn index(v: u64, len: usize, at: usize, what: &'static str) -> Result<usize, ReadError> {
    usize::try_from(v)
        .ok()
        .filter(|&i| i <= len)
        .ok_or_else(|| broken(at, what))
}

impl<'a> Columns<'a> {
    /// Reads the header, the trailer, the shell (checked as [`crate::parse_bundle`] checks a
    /// bundle) and the templates.
    ///
    /// # Errors
    /// [`ReadError::Columns`] naming the byte offset of what is wrong; the shell's errors as
    /// [`crate::parse_bundle`] gives them.
    pub fn open(bytes: &'a [u8]) -> Result<Self, ReadError> {
        if !is_columns(bytes) {
            return Err(broken(0, "it does not begin as a columns file (ROOFCOLS)"));
        }
        let format = u32_at(bytes, 8, CUT)?;
        if format != FORMAT {
            return Err(broken(
                8,
                "its layout is not the one this build reads: open the bundle's JSON instead",
            ));
        }
        let id_len = u32_at(bytes, 12, CUT)? as usize;
        let id = std::str::from_utf8(take(bytes, 16, id_len, CUT)?)
            .map_err(|_| broken(16, "its id is not UTF-8"))?
            .to_string();
        let records_at = 16 + id_len;
        let end = bytes
            .len()
            .checked_sub(40)
            .filter(|&e| e >= records_at && bytes[bytes.len() - 8..] == MAGIC[..])
            .ok_or_else(|| {
                broken(
                    bytes.len(),
                    "its trailer is missing: it was cut short or is still being written",
                )
            })?;
        let kernels = u64_at(bytes, end, CUT)?;
        let shell_at = index(u64_at(bytes, end + 8, CUT)?, end, end + 8, PAST)?;
        let shell_len = index(u64_at(bytes, end + 16, CUT)?, end, end + 16, PAST)?;
        let count = u64_at(bytes, end + 24, CUT)?;
        if shell_at < records_at {
            return Err(broken(end + 8, "the shell's offset lies inside the header"));
        }
        let text = std::str::from_utf8(take(bytes, shell_at, shell_len, CUT)?)
            .map_err(|e| broken(shell_at + e.valid_up_to(), "the shell is not UTF-8"))?;
        let shell = crate::parse_bundle(text)?;
        if !shell.kernels.is_empty() {
            return Err(broken(shell_at, "the shell holds kernels"));
        }
        let mut at = shell_at + shell_len;
        let mut templates = Vec::new();
        let mut masks = Vec::new();
        for _ in 0..count {
            let len = u32_at(bytes, at, CUT)? as usize;
            let json = take(bytes, at + 4, len, CUT)?;
            // Read as text, as `parse_bundle` reads (one reader's code, not two).
            let mut t: Kernel = std::str::from_utf8(json)
                .map_err(|e| e.to_string())
                .and_then(|text| serde_json::from_str(text).map_err(|e| e.to_string()))
                .map_err(|_| broken(at + 4, "a template is not a kernel's JSON"))?;
            t.adopt_operator_tags();
            masks.push(mask_of(&t));
            templates.push(t);
            at += 4 + len;
        }
        if at != end {
            return Err(broken(
                at,
                "the templates do not end where the trailer begins",
            ));
        }
        Ok(Columns {
            id,
            shell,
            templates,
            masks,
            records: &bytes[records_at..shell_at],
            records_at,
            kernels,
        })
    }

    /// The id the header holds (the bundle's [`ColumnsRef::id`] when they were written together).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// How many kernel entries the file holds.
    pub fn kernels(&self) -> u64 {
        self.kernels
    }

    /// The distinct kernels but their per-launch figures: what the records hold otherwise.
    pub fn templates(&self) -> &[Kernel] {
        &self.templates
    }

    /// Hands each kernel to `each`, in order, checked as [`crate::parse_bundle`] checks it, and
    /// returns the shell (the bundle without its kernels).
    ///
    /// # Errors
    /// [`ReadError::Columns`] for a record that is not one; [`ReadError::Invalid`] listing every
    /// impossible figure with its JSON path, after every kernel was read.
    pub fn for_each(mut self, each: &mut dyn FnMut(&Kernel)) -> Result<Bundle, ReadError> {
        let ids: Vec<&str> = self.shell.devices.iter().map(|d| d.id.as_str()).collect();
        let known = |d: &str| ids.contains(&d);
        let mut issues = Vec::new();
        let (mut launches, mut time) = (0u64, 0.0f64);
        let mut values = [0u64; SLOTS];
        let mut at = 0usize;
        let r = self.records;
        let mut n = 0u64;
        while at < r.len() {
            let offset = self.records_at + at;
            let head = take(r, at, 8, CUT)?;
            let t = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
            let mask = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
            if self.masks.get(t) != Some(&mask) {
                return Err(broken(
                    offset,
                    "a record names a template it does not match",
                ));
            }
            at += 8;
            for (slot, v) in values.iter_mut().enumerate() {
                if mask & (1 << slot) != 0 {
                    let b = r.get(at..at + 8).ok_or_else(|| broken(offset, CUT))?;
                    let mut a = [0u8; 8];
                    a.copy_from_slice(b);
                    *v = u64::from_le_bytes(a);
                    at += 8;
                }
            }
            let k = &mut self.templates[t];
            put_slots(k, &values);
            let index = usize::try_from(n).unwrap_or(usize::MAX);
            issues.extend(kernel_issues(index, k, &known, ids.len()));
            match launches.checked_add(k.launches) {
                Some(s) => launches = s,
                None => issues.push(Issue {
                    path: format!("$.kernels[{index}].launches"),
                    problem: Problem::LaunchesOverflow,
                }),
            }
            time += k.time.total_s;
            if time.is_infinite() {
                issues.push(Issue {
                    path: format!("$.kernels[{index}].time.total_s"),
                    problem: Problem::TimeOverflow,
                });
            }
            each(k);
            n += 1;
        }
        if n != self.kernels {
            return Err(broken(
                self.records_at + r.len(),
                "its records are not as many as its trailer counts",
            ));
        }
        if issues.is_empty() {
            Ok(self.shell)
        } else {
            Err(ReadError::Invalid(issues))
        }
    }
}

/// The whole bundle a columns file holds (what [`crate::parse_bundle`] gives for its JSON).
///
/// # Errors
/// As [`Columns::open`] and [`Columns::for_each`].
pub fn decode(bytes: &[u8]) -> Result<Bundle, ReadError> {
    let c = Columns::open(bytes)?;
    // No more than the records can hold (24 bytes at the least), whatever the trailer says.
    let fit = c.records.len() / 24;
    let mut kernels = Vec::with_capacity(usize::try_from(c.kernels()).unwrap_or(0).min(fit));
    let mut b = c.for_each(&mut |k| kernels.push(k.clone()))?;
    b.kernels = kernels;
    Ok(b)
}

/// The [`ColumnsRef`] a bundle's JSON names at its start, read from the first bytes of the file
/// (a few hundred are enough: the writer puts it after `schema_version` and `complete`); `None`
/// when those bytes do not name one.
pub fn named_in(prefix: &[u8]) -> Option<ColumnsRef> {
    let text = std::str::from_utf8(prefix)
        .or_else(|e| std::str::from_utf8(&prefix[..e.valid_up_to()]))
        .ok()?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let at = text.find("\"columns\"")?;
    // Only the top level's own fields come before it.
    let before = &text[..at];
    if before.contains("\"provenance\"") || before.contains("\"kernels\"") {
        return None;
    }
    let rest = text[at + "\"columns\"".len()..]
        .trim_start()
        .strip_prefix(':')?;
    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<ColumnsRef>();
    values.next()?.ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::read::fixtures::MINIMAL;

    fn named() -> ColumnsRef {
        ColumnsRef {
            file: "run.columns".into(),
            id: "abc".into(),
        }
    }

    fn example() -> Bundle {
        let mut b = crate::parse_bundle(MINIMAL).unwrap();
        let k = b.kernels[0].clone();
        for i in 0..50 {
            let mut k = k.clone();
            k.time.total_s = 1e-6 * f64::from(i + 1);
            k.flops.fp32 = Some(f64::from(i) * 3.0);
            k.bytes.l2 = (i % 2 == 0).then_some(-0.0);
            if i % 3 == 0 {
                k.name = format!("other {}", i % 2);
            }
            b.kernels.push(k);
        }
        b
    }

    #[test]
    fn a_bundle_reads_back_as_its_json_reads() {
        let mut b = example();
        b.columns = Some(named());
        let json = crate::to_json(&b).unwrap();
        b.columns = None;
        let bytes = encode(&b, named()).unwrap();
        let c = Columns::open(&bytes).unwrap();
        assert_eq!((c.id(), c.kernels()), ("abc", 51));
        // One template per distinct name and set of slots: not one per kernel.
        assert!(c.templates().len() <= 6, "{}", c.templates().len());
        assert_eq!(decode(&bytes).unwrap(), crate::parse_bundle(&json).unwrap());
    }

    #[test]
    fn a_file_cut_short_or_changed_is_refused_with_its_offset() {
        let bytes = encode(&example(), named()).unwrap();
        let cut = &bytes[..bytes.len() - 3];
        let e = decode(cut).unwrap_err().to_string();
        assert!(e.contains("cut short"), "{e}");
        let mut other = bytes.clone();
        other[8] = 2;
        let e = decode(&other).unwrap_err().to_string();
        assert!(e.contains("byte 8") && e.contains("layout"), "{e}");
        // A record's template index out of range.
        let mut other = bytes.clone();
        let at = 16 + 3;
        other[at..at + 4].copy_from_slice(&999u32.to_le_bytes());
        let e = decode(&other).unwrap_err().to_string();
        assert!(
            e.contains(&format!("byte {at},")) && e.contains("template"),
            "{e}"
        );
        // A trailer that counts more kernels than there are: refused, nothing huge allocated.
        let mut other = bytes.clone();
        let end = other.len() - 40;
        other[end..end + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        let e = decode(&other).unwrap_err().to_string();
        assert!(e.contains("as many as its trailer counts"), "{e}");
        // An impossible figure in a record is named by its JSON path.
        let mut other = bytes;
        let time = at + 8 + 8;
        other[time..time + 8].copy_from_slice(&f64::NAN.to_bits().to_le_bytes());
        let e = decode(&other).unwrap_err().to_string();
        assert!(e.contains("$.kernels[0].time.total_s"), "{e}");
    }

    proptest::proptest! {
        /// Any byte changed, or the file cut anywhere: read or refused, never a panic, and what
        /// is read is a valid bundle.
        #[test]
        fn a_damaged_file_is_refused_or_read_never_a_panic(at in 0usize..4096, byte in 0u8..=255, cut in 0usize..4096) {
            let bytes = encode(&example(), named()).unwrap();
            let mut changed = bytes.clone();
            let at = at % changed.len();
            changed[at] = byte;
            if let Ok(b) = decode(&changed) {
                proptest::prop_assert!(crate::validate(&b).is_ok());
            }
            let _ = decode(&bytes[..cut % bytes.len()]);
        }
    }

    #[test]
    fn the_json_names_its_columns_file_in_its_first_bytes() {
        let mut b = example();
        b.columns = Some(ColumnsRef {
            file: file_name_for("run.json.gz"),
            id: "0123".into(),
        });
        let json = crate::to_json(&b).unwrap();
        let named = named_in(&json.as_bytes()[..120]).unwrap();
        assert_eq!(
            (named.file.as_str(), named.id.as_str()),
            ("run.columns", "0123")
        );
        b.columns = None;
        assert_eq!(named_in(crate::to_json(&b).unwrap().as_bytes()), None);
        assert_eq!(file_name_for("a.b"), "a.b.columns");
    }
}
