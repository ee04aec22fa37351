//! One trace event as serde reads it: the seeds and visitors that take an event's fields in any
//! order, skip what the import does not keep without copying it, and hand the rest to the
//! parser's `Builder`.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::model::Ns;
use crate::operators::{Arg, Derived, Dtype, OpInputs};

#[derive(Deserialize)]
pub(super) struct Distributed {
    #[serde(default)]
    pub(super) rank: Option<serde_json::Value>,
    #[serde(default)]
    pub(super) world_size: Option<u64>,
    #[serde(default)]
    pub(super) pg_count: Option<u64>,
    /// The process groups this rank is in (`torch.distributed`'s `_get_all_pg_configs`), each
    /// with its `pg_size`; read loosely, as its layout is not fixed.
    #[serde(default)]
    pub(super) pg_config: Option<serde_json::Value>,
}

impl Distributed {
    /// The sizes of the process groups `pg_config` lists.
    pub(super) fn group_sizes(&self) -> Vec<u64> {
        match &self.pg_config {
            Some(serde_json::Value::Array(groups)) => groups
                .iter()
                .filter_map(|g| g.get("pg_size").and_then(serde_json::Value::as_u64))
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// The process groups of `distributedInfo.pg_config` (a list of `{pg_name, pg_size, ranks}`);
/// anything else gives none.
pub(super) fn process_groups(v: Option<&serde_json::Value>) -> Vec<super::model::ProcessGroup> {
    let Some(serde_json::Value::Array(list)) = v else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|g| {
            let name = match g.get("pg_name")? {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            Some(super::model::ProcessGroup {
                name,
                size: g
                    .get("pg_size")
                    .and_then(serde_json::Value::as_u64)
                    .and_then(|n| u32::try_from(n).ok()),
                ranks: g
                    .get("ranks")
                    .and_then(serde_json::Value::as_array)
                    .map(|r| r.iter().filter_map(serde_json::Value::as_u64).collect())
                    .unwrap_or_default(),
            })
        })
        .collect()
}

/// The ranks of a `Process Group Ranks` text (`"[0, 1]"`) or list: its numbers; `None` when it
/// holds something else.
pub(super) fn ranks_of(text: &str) -> Option<Vec<u64>> {
    let inner = text.trim().trim_matches('"').trim();
    let inner = inner.strip_prefix('[')?.strip_suffix(']')?;
    inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_matches('"').parse().ok())
        .collect()
}

/// The name prefix of an `nn.Module` frame (`with_modules=True`).
pub(super) const MODULE_PREFIX: &str = "nn.Module: ";

/// One event as written; unknown fields are skipped.
#[derive(Default)]
pub(super) struct RawEvent {
    pub(super) ph: Option<Word>,
    pub(super) cat: Option<Word>,
    pub(super) name: EventName,
    pub(super) pid: Option<Id>,
    pub(super) tid: Option<Id>,
    pub(super) ts: Option<Micros>,
    pub(super) dur: Option<f64>,
    pub(super) args: Option<RawArgs>,
}

/// An event's name: interned when the event may be kept, skipped (never copied) when its phase
/// or category, read before it, already say it is not.
#[derive(Default, Clone, Copy)]
pub(super) enum EventName {
    #[default]
    Absent,
    Id(u32),
    Skipped,
}

/// Whether an event with this phase and category (as far as read) is one the import keeps:
/// `None` when it is not, `Some(true)` when only `nn.Module` frames of it are.
pub(super) fn kept(ph: Option<&Word>, cat: Option<&Word>) -> Option<bool> {
    if ph.is_some_and(|p| p.as_str() != "X") {
        return None;
    }
    match cat.map(Word::as_str) {
        None => Some(false),
        Some("python_function") => Some(true),
        Some(c) => category(c).map(|_| false),
    }
}

/// The kind of a kept category (`python_function` aside).
pub(super) fn category(cat: &str) -> Option<Kind> {
    Some(match cat {
        "kernel" | "Kernel" => Kind::Kernel,
        "gpu_memcpy" | "Memcpy" => Kind::Memcpy,
        "gpu_memset" | "Memset" => Kind::Memset,
        "cpu_op" | "Operator" | "operator" => Kind::Op,
        "cuda_runtime" | "cuda_driver" | "Runtime" | "Driver" => Kind::Runtime,
        "user_annotation" => Kind::Annotation,
        "cuda_profiler_range" => Kind::Range,
        _ => return None,
    })
}

/// An event's key: the known ones without allocating.
pub(super) enum EventKey {
    Ph,
    Cat,
    Name,
    Pid,
    Tid,
    Ts,
    Dur,
    Args,
    Other,
}

impl EventKey {
    /// A bit of its own and its name, for the keys the import reads.
    fn bit(&self) -> Option<(u16, &'static str)> {
        Some(match self {
            EventKey::Ph => (1, "ph"),
            EventKey::Cat => (1 << 1, "cat"),
            EventKey::Name => (1 << 2, "name"),
            EventKey::Pid => (1 << 3, "pid"),
            EventKey::Tid => (1 << 4, "tid"),
            EventKey::Ts => (1 << 5, "ts"),
            EventKey::Dur => (1 << 6, "dur"),
            EventKey::Args => (1 << 7, "args"),
            EventKey::Other => return None,
        })
    }
}

impl<'de> Deserialize<'de> for EventKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = EventKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an event field name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<EventKey, E> {
                self.visit_bytes(v.as_bytes())
            }
            // Keys as bytes: serde_json then skips their UTF-8 check.
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<EventKey, E> {
                Ok(match v {
                    b"ph" => EventKey::Ph,
                    b"cat" => EventKey::Cat,
                    b"name" => EventKey::Name,
                    b"pid" => EventKey::Pid,
                    b"tid" => EventKey::Tid,
                    b"ts" => EventKey::Ts,
                    b"dur" => EventKey::Dur,
                    b"args" => EventKey::Args,
                    _ => EventKey::Other,
                })
            }
        }
        d.deserialize_bytes(V)
    }
}

/// Reads one event, interning its name in place (no `String` per event) and skipping what a
/// dropped event would not use.
/// What reading one event needs from the reader: names interned as they are read, and the
/// operator's recorded inputs written into text reused from event to event.
pub(super) trait EventSink {
    /// The interned id of a name.
    fn intern(&mut self, s: &str) -> u32;
    /// The current event's recorded inputs.
    fn inputs(&mut self) -> &mut InputsText;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Kernel,
    Memcpy,
    Memset,
    Op,
    Runtime,
    Annotation,
    Module,
    Range,
}

/// An operator's `Input Dims`, `Input type` and `Concrete Inputs` as compact JSON text (written
/// while reading, with no value tree); empty when absent.
#[derive(Default)]
pub(super) struct InputsText {
    pub(super) dims: String,
    pub(super) types: String,
    pub(super) concrete: String,
}

impl InputsText {
    pub(super) fn clear(&mut self) {
        self.dims.clear();
        self.types.clear();
        self.concrete.clear();
    }
}

/// Reads one event into a [`RawEvent`], interning its name and writing its recorded inputs
/// through the sink.
pub(super) struct EventSeed<'a, S>(pub(super) &'a mut S);

impl<'de, S: EventSink> DeserializeSeed<'de> for EventSeed<'_, S> {
    type Value = RawEvent;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<RawEvent, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, S: EventSink> Visitor<'de> for EventSeed<'_, S> {
    type Value = RawEvent;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a trace event (an object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<RawEvent, A::Error> {
        let b = self.0;
        let mut ev = RawEvent::default();
        b.inputs().clear();
        // The keys read so far, one bit each: a key twice is refused (which would count?).
        let mut seen = 0u16;
        while let Some(k) = m.next_key::<EventKey>()? {
            if let Some((bit, name)) = k.bit() {
                if seen & bit != 0 {
                    return Err(de::Error::duplicate_field(name));
                }
                seen |= bit;
            }
            match k {
                EventKey::Ph => ev.ph = m.next_value()?,
                EventKey::Cat => ev.cat = m.next_value()?,
                EventKey::Name => {
                    ev.name = match kept(ev.ph.as_ref(), ev.cat.as_ref()) {
                        None => {
                            m.next_value::<IgnoredAny>()?;
                            EventName::Skipped
                        }
                        Some(modules_only) => m.next_value_seed(NameSeed {
                            b: &mut *b,
                            modules_only,
                        })?,
                    };
                }
                EventKey::Pid => ev.pid = m.next_value()?,
                EventKey::Tid => ev.tid = m.next_value()?,
                EventKey::Ts => ev.ts = m.next_value()?,
                EventKey::Dur => ev.dur = m.next_value()?,
                EventKey::Args => {
                    let dropped = kept(ev.ph.as_ref(), ev.cat.as_ref()).is_none()
                        || matches!(ev.name, EventName::Skipped);
                    if dropped {
                        m.next_value::<IgnoredAny>()?;
                    } else {
                        ev.args = m.next_value_seed(ArgsSeed(b.inputs()))?;
                    }
                }
                EventKey::Other => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(ev)
    }
}

/// An event's name, interned from the reader's buffer; with `modules_only`, only
/// `nn.Module: …` names (the other Python frames are dropped).
pub(super) struct NameSeed<'a, S> {
    pub(super) b: &'a mut S,
    pub(super) modules_only: bool,
}

impl<'de, S: EventSink> DeserializeSeed<'de> for NameSeed<'_, S> {
    type Value = EventName;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<EventName, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, S: EventSink> Visitor<'de> for NameSeed<'_, S> {
    type Value = EventName;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<EventName, E> {
        Ok(if self.modules_only && !v.starts_with(MODULE_PREFIX) {
            EventName::Skipped
        } else {
            EventName::Id(self.b.intern(v))
        })
    }
    fn visit_unit<E: de::Error>(self) -> Result<EventName, E> {
        Ok(EventName::Absent)
    }
}

/// A short string kept inline (event phases and categories: two per event, never allocated
/// when 24 bytes or shorter).
pub(super) enum Word {
    Inline([u8; 24], u8),
    Heap(String),
}

impl Word {
    pub(super) fn as_str(&self) -> &str {
        match self {
            // Only whole UTF-8 strings are copied in, so the prefix is valid UTF-8.
            Word::Inline(b, n) => std::str::from_utf8(&b[..*n as usize]).unwrap_or(""),
            Word::Heap(s) => s,
        }
    }
}

impl<'de> Deserialize<'de> for Word {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Word;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Word, E> {
                Ok(if v.len() <= 24 {
                    let mut b = [0u8; 24];
                    b[..v.len()].copy_from_slice(v.as_bytes());
                    Word::Inline(b, v.len() as u8)
                } else {
                    Word::Heap(v.to_string())
                })
            }
        }
        d.deserialize_str(V)
    }
}

/// A process or thread id: Kineto writes numbers, and strings for its own rows.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Id {
    Num(i64),
    Str(String),
}

impl Id {
    pub(super) fn num(&self) -> Option<i64> {
        match self {
            Id::Num(n) => Some(*n),
            Id::Str(_) => None,
        }
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Num(n) => write!(f, "{n}"),
            Id::Str(s) => f.write_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number or a string")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Id, E> {
                Ok(Id::Num(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Id, E> {
                Ok(Id::Num(v as i64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Id, E> {
                Ok(Id::Num(v as i64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Id, E> {
                Ok(Id::Str(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A timestamp in µs, kept as integer ns.
pub(super) struct Micros(pub(super) Ns);

impl<'de> Deserialize<'de> for Micros {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Micros;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a time in microseconds")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Micros, E> {
                Ok(Micros(v.saturating_mul(1000)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Micros, E> {
                Ok(Micros((v as i64).saturating_mul(1000)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Micros, E> {
                Ok(Micros((v * 1000.0).round() as i64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Micros, E> {
                v.trim()
                    .parse::<f64>()
                    .map(|x| Micros((x * 1000.0).round() as i64))
                    .map_err(|_| E::custom(format!("{v:?} is not a time")))
            }
        }
        d.deserialize_any(V)
    }
}

/// The `args` of an event: the fields the import reads, and numeric counter values (names with
/// `__`, as Perfworks metrics are named).
#[derive(Default)]
pub(super) struct RawArgs {
    pub(super) external_id: Option<i64>,
    pub(super) correlation: Option<i64>,
    pub(super) device: Option<i64>,
    pub(super) stream: Option<i64>,
    pub(super) grid: Option<[u32; 3]>,
    pub(super) block: Option<[u32; 3]>,
    pub(super) bytes: Option<f64>,
    pub(super) kernel_flop: Option<f64>,
    pub(super) kernel_num_gb: Option<f64>,
    pub(super) sequence: Option<i64>,
    pub(super) forward_thread: Option<i64>,
    pub(super) metrics: Vec<(String, f64)>,
    /// What the event records of a collective.
    pub(super) comm: super::model::CommArgs,
    /// Counter-like values (names with `__`) that are not numbers, with what they are
    /// (`"12"`, `an array`): a profiler range refuses them.
    pub(super) not_numbers: Vec<(String, String)>,
}

/// The recorded inputs as the operator rules read them, from their compact text (read again as
/// JSON values: done once per distinct set). `None` when `Input Dims` is not an array.
pub(super) fn op_inputs(text: &InputsText) -> Option<OpInputs> {
    let list = |t: &str| -> Option<Vec<serde_json::Value>> {
        match serde_json::from_str(t).ok()? {
            serde_json::Value::Array(v) => Some(v),
            _ => None,
        }
    };
    let dims = list(&text.dims)?;
    let types = list(&text.types).unwrap_or_default();
    let concrete = list(&text.concrete);
    // PyTorch 1.8 records no element type at all (`Input type` is an empty list): a shape is
    // then a tensor of an unrecorded type (`[]` stays a scalar: a 0-d tensor and a scalar are
    // both recorded so), kept for the import to type from the kernels it launched.
    let types_unrecorded = types.is_empty();
    let mut untyped = Vec::new();
    let args = dims
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let ty = types.get(i).and_then(|t| t.as_str()).unwrap_or("");
            match (Dtype::from_profiler(ty), shape(d)) {
                (Some(dt), Some(s)) => Arg::Tensor(dt, s),
                (None, Some(s)) if !s.is_empty() && types_unrecorded => {
                    untyped.push((i, "".into(), s));
                    Arg::Other
                }
                // A shape with a type the rules do not know: a tensor all the same (scalars,
                // lists and `None` record no dimensions), kept to say so.
                (None, Some(s)) if !s.is_empty() && !ty.is_empty() => {
                    untyped.push((i, ty.into(), s));
                    Arg::Other
                }
                (None, _) => match d {
                    serde_json::Value::Array(list)
                        if !list.is_empty() && list.iter().all(|x| x.is_array()) =>
                    {
                        Arg::Tensors(list.iter().filter_map(shape).collect())
                    }
                    _ => Arg::Other,
                },
                _ => Arg::Other,
            }
        })
        .collect();
    let concrete = concrete.as_ref().map(|c| {
        c.iter()
            .map(|v| match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect()
    });
    Some(OpInputs {
        args,
        concrete,
        list_elem: None,
        derived: Derived::default(),
        untyped,
        no_types: types_unrecorded && !dims.is_empty(),
    })
}

pub(super) fn shape(v: &serde_json::Value) -> Option<Vec<u64>> {
    v.as_array()?.iter().map(|x| x.as_u64()).collect()
}

/// An `args` key: the known ones without allocating, metric names kept.
pub(super) enum ArgKey {
    ExternalId,
    Correlation,
    Device,
    Stream,
    Grid,
    Block,
    Bytes,
    KernelFlop,
    KernelNumGb,
    Sequence,
    ForwardThread,
    Dims,
    Types,
    Concrete,
    CollectiveName,
    InNelems,
    OutNelems,
    GroupSize,
    CommDtype,
    GroupName,
    GroupRanks,
    Metric(String),
    Other,
}

impl<'de> Deserialize<'de> for ArgKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ArgKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an argument name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ArgKey, E> {
                self.visit_bytes(v.as_bytes())
            }
            // Keys as bytes: serde_json then skips their UTF-8 check.
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<ArgKey, E> {
                Ok(match v {
                    b"External id" => ArgKey::ExternalId,
                    b"correlation" => ArgKey::Correlation,
                    b"device" => ArgKey::Device,
                    b"stream" => ArgKey::Stream,
                    b"grid" => ArgKey::Grid,
                    b"block" => ArgKey::Block,
                    b"bytes" => ArgKey::Bytes,
                    b"kernel_flop" => ArgKey::KernelFlop,
                    b"kernel_num_gb" => ArgKey::KernelNumGb,
                    b"Sequence number" => ArgKey::Sequence,
                    b"Fwd thread id" => ArgKey::ForwardThread,
                    // PyTorch 1.8 writes `Input dims`; later versions `Input Dims`.
                    b"Input Dims" | b"Input dims" => ArgKey::Dims,
                    b"Input type" => ArgKey::Types,
                    b"Concrete Inputs" => ArgKey::Concrete,
                    b"Collective name" => ArgKey::CollectiveName,
                    b"In msg nelems" => ArgKey::InNelems,
                    b"Out msg nelems" => ArgKey::OutNelems,
                    b"Group size" => ArgKey::GroupSize,
                    b"dtype" => ArgKey::CommDtype,
                    b"Process Group Name" => ArgKey::GroupName,
                    b"Process Group Ranks" => ArgKey::GroupRanks,
                    m => match std::str::from_utf8(m) {
                        Ok(m) if m.contains("__") => ArgKey::Metric(m.to_string()),
                        _ => ArgKey::Other,
                    },
                })
            }
        }
        d.deserialize_bytes(V)
    }
}

impl ArgKey {
    /// A bit of its own and its name, for the keys read once (metrics aside).
    fn bit(&self) -> Option<(u32, &'static str)> {
        Some(match self {
            ArgKey::ExternalId => (1, "External id"),
            ArgKey::Correlation => (1 << 1, "correlation"),
            ArgKey::Device => (1 << 2, "device"),
            ArgKey::Stream => (1 << 3, "stream"),
            ArgKey::Grid => (1 << 4, "grid"),
            ArgKey::Block => (1 << 5, "block"),
            ArgKey::Bytes => (1 << 6, "bytes"),
            ArgKey::KernelFlop => (1 << 7, "kernel_flop"),
            ArgKey::KernelNumGb => (1 << 8, "kernel_num_gb"),
            ArgKey::Sequence => (1 << 9, "Sequence number"),
            ArgKey::ForwardThread => (1 << 10, "Fwd thread id"),
            ArgKey::Dims => (1 << 11, "Input Dims"),
            ArgKey::Types => (1 << 12, "Input type"),
            ArgKey::Concrete => (1 << 13, "Concrete Inputs"),
            ArgKey::CollectiveName => (1 << 14, "Collective name"),
            ArgKey::InNelems => (1 << 15, "In msg nelems"),
            ArgKey::OutNelems => (1 << 16, "Out msg nelems"),
            ArgKey::GroupSize => (1 << 17, "Group size"),
            ArgKey::CommDtype => (1 << 18, "dtype"),
            ArgKey::GroupName => (1 << 19, "Process Group Name"),
            ArgKey::GroupRanks => (1 << 20, "Process Group Ranks"),
            ArgKey::Metric(_) | ArgKey::Other => return None,
        })
    }
}

/// A counter's value: a number, or what else it is, for the message that refuses it.
enum NumOrWhat {
    Num(f64),
    What(String),
}

impl<'de> Deserialize<'de> for NumOrWhat {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = NumOrWhat;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<NumOrWhat, E> {
                Ok(NumOrWhat::Num(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<NumOrWhat, E> {
                Ok(NumOrWhat::Num(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<NumOrWhat, E> {
                Ok(NumOrWhat::Num(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<NumOrWhat, E> {
                let shown: String = v.chars().take(40).collect();
                let more = if shown.len() < v.len() { "…" } else { "" };
                Ok(NumOrWhat::What(format!("\"{shown}{more}\"")))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<NumOrWhat, E> {
                Ok(NumOrWhat::What(v.to_string()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<NumOrWhat, E> {
                Ok(NumOrWhat::What("null".into()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<NumOrWhat, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(NumOrWhat::What("an array".into()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<NumOrWhat, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(NumOrWhat::What("an object".into()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A number, or nothing for any other value (skipped).
#[derive(Clone, Copy)]
pub(super) struct MaybeNum(Option<f64>);

impl<'de> Deserialize<'de> for MaybeNum {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MaybeNum;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<MaybeNum, E> {
                Ok(MaybeNum(Some(v as f64)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<MaybeNum, E> {
                Ok(MaybeNum(Some(v as f64)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<MaybeNum, E> {
                Ok(MaybeNum(Some(v)))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<MaybeNum, E> {
                Ok(MaybeNum(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<MaybeNum, E> {
                Ok(MaybeNum(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<MaybeNum, E> {
                Ok(MaybeNum(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<MaybeNum, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(MaybeNum(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<MaybeNum, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(MaybeNum(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// A string, or a number's text; nothing for any other value (skipped).
pub(super) struct MaybeText(Option<String>);

impl<'de> Deserialize<'de> for MaybeText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MaybeText;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<MaybeText, E> {
                Ok(MaybeText(Some(v.to_string())))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<MaybeText, E> {
                Ok(MaybeText(Some(v.to_string())))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<MaybeText, E> {
                Ok(MaybeText(Some(v.to_string())))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<MaybeText, E> {
                Ok(MaybeText(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<MaybeText, E> {
                Ok(MaybeText(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<MaybeText, E> {
                Ok(MaybeText(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<MaybeText, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(MaybeText(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<MaybeText, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(MaybeText(None))
            }
        }
        d.deserialize_any(V)
    }
}

pub(super) fn int(v: MaybeNum) -> Option<i64> {
    v.0.filter(|x| x.fract() == 0.0).map(|x| x as i64)
}

/// A launch's `grid` or `block`: three unsigned integers, or nothing for any other value. A
/// kernel event records `[x, y, z]`; the `cpu_op` of an Inductor-generated Triton kernel records
/// its grid as text (`"grid(100,)"`, PyTorch 2.5), which says nothing the kernel event does not.
pub(super) struct MaybeDim3(Option<[u32; 3]>);

impl<'de> Deserialize<'de> for MaybeDim3 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MaybeDim3;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<MaybeDim3, A::Error> {
                // No allocation: a kernel event has two of these.
                let (mut v, mut n) = ([None; 3], 0);
                while let Some(x) = s.next_element::<MaybeNum>()? {
                    if let Some(slot) = v.get_mut(n) {
                        *slot = x.0;
                    }
                    n += 1;
                }
                let dim = |x: Option<f64>| {
                    x.filter(|x| x.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(x))
                        .map(|x| x as u32)
                };
                let [x, y, z] = v;
                Ok(MaybeDim3(if n == 3 {
                    dim(x).zip(dim(y)).zip(dim(z)).map(|((x, y), z)| [x, y, z])
                } else {
                    None
                }))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<MaybeDim3, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(MaybeDim3(None))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<MaybeDim3, E> {
                Ok(MaybeDim3(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<MaybeDim3, E> {
                Ok(MaybeDim3(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<MaybeDim3, E> {
                Ok(MaybeDim3(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<MaybeDim3, E> {
                Ok(MaybeDim3(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<MaybeDim3, E> {
                Ok(MaybeDim3(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<MaybeDim3, E> {
                Ok(MaybeDim3(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// Reads an event's `args`, writing the operator inputs into the builder's reused text.
pub(super) struct ArgsSeed<'a>(pub(super) &'a mut InputsText);

impl<'de> DeserializeSeed<'de> for ArgsSeed<'_> {
    type Value = Option<RawArgs>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<RawArgs>, D::Error> {
        struct V<'a>(&'a mut InputsText);
        impl<'de> Visitor<'de> for V<'_> {
            type Value = Option<RawArgs>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of event arguments")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Option<RawArgs>, A::Error> {
                let text = self.0;
                let mut a = RawArgs::default();
                let mut seen = 0u32;
                while let Some(k) = m.next_key::<ArgKey>()? {
                    if let Some((bit, name)) = k.bit() {
                        if seen & bit != 0 {
                            return Err(de::Error::duplicate_field(name));
                        }
                        seen |= bit;
                    }
                    match k {
                        ArgKey::ExternalId => a.external_id = int(m.next_value()?),
                        ArgKey::Correlation => a.correlation = int(m.next_value()?),
                        ArgKey::Device => a.device = int(m.next_value()?),
                        ArgKey::Stream => a.stream = int(m.next_value()?),
                        ArgKey::Grid => a.grid = m.next_value::<MaybeDim3>()?.0,
                        ArgKey::Block => a.block = m.next_value::<MaybeDim3>()?.0,
                        ArgKey::Bytes => a.bytes = m.next_value::<MaybeNum>()?.0,
                        ArgKey::KernelFlop => a.kernel_flop = m.next_value::<MaybeNum>()?.0,
                        ArgKey::KernelNumGb => a.kernel_num_gb = m.next_value::<MaybeNum>()?.0,
                        ArgKey::Sequence => a.sequence = int(m.next_value()?),
                        ArgKey::ForwardThread => a.forward_thread = int(m.next_value()?),
                        ArgKey::Dims => {
                            text.dims.clear();
                            m.next_value_seed(Compact(&mut text.dims))?;
                        }
                        ArgKey::Types => {
                            text.types.clear();
                            m.next_value_seed(Compact(&mut text.types))?;
                        }
                        ArgKey::Concrete => {
                            text.concrete.clear();
                            m.next_value_seed(Compact(&mut text.concrete))?;
                        }
                        ArgKey::CollectiveName => {
                            a.comm.collective = m.next_value::<MaybeText>()?.0;
                        }
                        ArgKey::InNelems => a.comm.in_nelems = m.next_value::<MaybeNum>()?.0,
                        ArgKey::OutNelems => a.comm.out_nelems = m.next_value::<MaybeNum>()?.0,
                        ArgKey::GroupSize => {
                            a.comm.group_size =
                                int(m.next_value()?).and_then(|n| u32::try_from(n).ok());
                        }
                        ArgKey::CommDtype => a.comm.dtype = m.next_value::<MaybeText>()?.0,
                        ArgKey::GroupName => {
                            a.comm.process_group = m.next_value::<MaybeText>()?.0;
                        }
                        ArgKey::GroupRanks => {
                            let mut t = String::new();
                            m.next_value_seed(Compact(&mut t))?;
                            // A list of numbers, or its text (`"[0, 1]"`, as PyTorch writes it).
                            let text = serde_json::from_str::<String>(&t).unwrap_or(t);
                            a.comm.ranks = ranks_of(&text);
                        }
                        ArgKey::Metric(name) => {
                            if a.metrics.iter().any(|(n, _)| *n == name)
                                || a.not_numbers.iter().any(|(n, _)| *n == name)
                            {
                                return Err(de::Error::custom(format!("duplicate field `{name}`")));
                            }
                            match m.next_value::<NumOrWhat>()? {
                                NumOrWhat::Num(v) => a.metrics.push((name, v)),
                                NumOrWhat::What(w) => a.not_numbers.push((name, w)),
                            }
                        }
                        ArgKey::Other => {
                            m.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Some(a))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Option<RawArgs>, E> {
                Ok(None)
            }
        }
        d.deserialize_any(V(self.0))
    }
}

/// Writes any JSON value as compact text (as `serde_json::to_string` of its value, object keys
/// in file order), with no value tree: how recorded inputs are compared and kept.
pub(super) struct Compact<'a>(pub(super) &'a mut String);

impl<'de> DeserializeSeed<'de> for Compact<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Compact<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.0.push_str(if v { "true" } else { "false" });
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        use std::fmt::Write;
        let _ = write!(self.0, "{v}");
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        use std::fmt::Write;
        let _ = write!(self.0, "{v}");
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        match serde_json::Number::from_f64(v) {
            Some(n) => self.0.push_str(&n.to_string()),
            None => self.0.push_str("null"),
        }
        Ok(())
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        if v.bytes().any(|c| c == b'"' || c == b'\\' || c < 0x20) {
            self.0
                .push_str(&serde_json::to_string(v).map_err(E::custom)?);
        } else {
            self.0.push('"');
            self.0.push_str(v);
            self.0.push('"');
        }
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.0.push_str("null");
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<(), A::Error> {
        self.0.push('[');
        let mut first = true;
        loop {
            let at = self.0.len();
            if !first {
                self.0.push(',');
            }
            if s.next_element_seed(Compact(&mut *self.0))?.is_none() {
                self.0.truncate(at);
                break;
            }
            first = false;
        }
        self.0.push(']');
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
        self.0.push('{');
        let mut first = true;
        loop {
            let at = self.0.len();
            if !first {
                self.0.push(',');
            }
            if m.next_key_seed(Compact(&mut *self.0))?.is_none() {
                self.0.truncate(at);
                break;
            }
            self.0.push(':');
            m.next_value_seed(Compact(&mut *self.0))?;
            first = false;
        }
        self.0.push('}');
        Ok(())
    }
}
