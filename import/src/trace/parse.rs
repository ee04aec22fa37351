//! The streaming reader: Kineto's Chrome-trace JSON into a compact event model.
//!
//! serde_json reads from any [`Read`]; a visitor walks the top-level object and hands each
//! element of `traceEvents` to the model as it is read, keeping only what the import needs
//! (names interned, times as integer nanoseconds, shapes as [`OpInputs`]), so that memory grows
//! with the events kept, not with the text. Keys may come in any order (`deviceProperties` after
//! `traceEvents` is fine). Chrome's array form (a bare list of events) is read too.
//!
//! Times: Kineto writes `ts` and `dur` in microseconds, as integers or with three decimals
//! (nanoseconds). Integers are kept exactly; decimals go through an `f64`, which at today's epoch
//! timestamps (~1.7·10¹⁵ µs) resolves 0.25 µs, so a start time may be off by up to 0.125 µs. That
//! only matters for matching a launch to its enclosing operator on the same thread, where events
//! are microseconds apart. Durations are small numbers and kept as written.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;

use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::operators::{Arg, Dtype, OpInputs};

/// Why a trace could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TraceError {
    /// Not JSON, or JSON of the wrong shape.
    #[error("line {line}, column {column}: {message}")]
    Json {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What serde_json said.
        message: String,
    },
    /// The reader failed (for example, a truncated gzip stream).
    #[error("reading the trace failed: {0}")]
    Read(String),
    /// A JSON object with no `traceEvents` array.
    #[error(
        "no \"traceEvents\" array: not a torch.profiler (Kineto) or Chrome trace (write it with prof.export_chrome_trace or tensorboard_trace_handler)"
    )]
    NoEvents,
    /// An event the import needs lacks a field.
    #[error("event {index} ({category} {name:?}) has no {field}")]
    BadEvent {
        /// 0-based position in `traceEvents`.
        index: u64,
        /// Its category.
        category: String,
        /// Its name.
        name: String,
        /// The missing field.
        field: &'static str,
    },
}

impl From<serde_json::Error> for TraceError {
    fn from(e: serde_json::Error) -> Self {
        if e.is_io() {
            TraceError::Read(e.to_string())
        } else {
            TraceError::Json {
                line: e.line(),
                column: e.column(),
                message: e.to_string(),
            }
        }
    }
}

/// A time in nanoseconds (Kineto's microseconds × 1000).
pub type Ns = i64;

/// A device kernel, copy or set as the trace recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuEvent {
    /// Interned name ([`Trace::name`]).
    pub name: u32,
    /// Start, ns.
    pub ts: Ns,
    /// Duration as written, µs.
    pub dur_us: f64,
    /// `args.device`.
    pub device: Option<i64>,
    /// `args.stream`.
    pub stream: Option<i64>,
    /// `args.correlation`: the id of the runtime call that launched it.
    pub correlation: Option<i64>,
    /// `args.grid`.
    pub grid: Option<[u32; 3]>,
    /// `args.block`.
    pub block: Option<[u32; 3]>,
    /// `args.bytes` (copies and sets).
    pub bytes: Option<f64>,
}

/// A CUDA runtime or driver call on a CPU thread.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeCall {
    /// Interned name (`cudaLaunchKernel`).
    pub name: u32,
    /// Interned (pid, tid).
    pub thread: u32,
    /// Start, ns.
    pub ts: Ns,
    /// End, ns.
    pub end: Ns,
    /// `args.correlation`.
    pub correlation: Option<i64>,
    /// `args["External id"]`.
    pub external_id: Option<i64>,
}

/// A PyTorch operator on a CPU thread.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuOp {
    /// Interned name (`aten::mm`).
    pub name: u32,
    /// Interned (pid, tid).
    pub thread: u32,
    /// Start, ns.
    pub ts: Ns,
    /// End, ns.
    pub end: Ns,
    /// `args["External id"]`.
    pub external_id: Option<i64>,
    /// `Input Dims`, `Input type` and `Concrete Inputs`, when recorded: an index into
    /// [`Trace::inputs`] (a training loop repeats the same shapes step after step, so they are
    /// kept once).
    pub inputs: Option<u32>,
}

/// What Inductor (`torch.compile`) estimated for one of its Triton kernels and PyTorch 2.5+
/// records on the kernel's `cpu_op` when Inductor was asked to (`config.benchmark_kernel` or
/// `config.profile_bandwidth`, `TORCHINDUCTOR_BENCHMARK_KERNEL=1` or
/// `TORCHINDUCTOR_PROFILE_BANDWIDTH=1`): `kernel_flop` and `kernel_num_gb`
/// (`torch/_inductor/runtime/triton_heuristics.py`, `get_profiler_kwargs`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InductorEstimate {
    /// `kernel_flop`: the FLOPs of the operators a template computes (PyTorch's FLOP counter).
    pub flops: Option<f64>,
    /// `kernel_num_gb` in bytes: the buffers the kernel accesses, the sliced or broadcast part
    /// of each, an in-place buffer twice.
    pub bytes: Option<f64>,
}

/// One distinct set of recorded operator inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedInputs {
    /// As the operator rules read them.
    pub inputs: OpInputs,
    /// The recorded `Input Dims` as compact text (`[[2048,256],[256,6948]]`), for tags.
    pub dims_text: Box<str>,
}

/// A named time span on a CPU thread (`user_annotation`, a module's `python_function`).
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// Interned name.
    pub name: u32,
    /// Interned (pid, tid).
    pub thread: u32,
    /// Start, ns.
    pub ts: Ns,
    /// End, ns.
    pub end: Ns,
}

/// One `cuda_profiler_range` event: the counters of one kernel (per-kernel mode) or range.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfilerRange {
    /// Interned name: the demangled kernel name in per-kernel mode.
    pub name: u32,
    /// The device (Kineto writes it as the event's `pid`).
    pub device: Option<i64>,
    /// Start, ns: NOT a measurement (Kineto spreads the ranges evenly over the profiling window).
    pub ts: Ns,
    /// Counter values by interned metric name, as recorded.
    pub metrics: Vec<(u32, f64)>,
}

/// A device from `deviceProperties`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DeviceProps {
    /// CUDA ordinal.
    pub id: i64,
    /// Marketing name.
    pub name: String,
    /// Compute capability, major.
    pub compute_major: Option<u32>,
    /// Compute capability, minor.
    pub compute_minor: Option<u32>,
    /// SM count.
    pub num_sms: Option<u32>,
    /// Device memory, bytes.
    pub total_global_mem: Option<f64>,
    /// L2 size, bytes (newer Kineto).
    pub l2_cache_size: Option<f64>,
    /// Threads per warp: 32 on every NVIDIA GPU, 64 on AMD's CDNA GPUs (a wavefront).
    pub warp_size: Option<u32>,
}

impl DeviceProps {
    /// Whether this is an AMD GPU, traced through ROCm: Kineto then fills `computeMajor` and
    /// `computeMinor` with the gfx architecture (9 and 0 for an MI250's gfx90a), which is not a
    /// CUDA compute capability. Told by the 64-thread wavefront or the name AMD's runtime reports.
    pub fn is_amd(&self) -> bool {
        self.warp_size == Some(64) || self.name.starts_with("AMD")
    }
}

/// The events of one trace that the import uses, and counts of the rest.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    names: Vec<String>,
    /// Interned (pid, tid) pairs as text, by id.
    pub threads: Vec<String>,
    /// `deviceProperties`.
    pub devices: Vec<DeviceProps>,
    /// `distributedInfo.rank`.
    pub rank: Option<String>,
    /// `distributedInfo.world_size`.
    pub world_size: Option<u64>,
    /// `kernel` events, in file order.
    pub kernels: Vec<GpuEvent>,
    /// `gpu_memcpy` events.
    pub memcpys: Vec<GpuEvent>,
    /// `gpu_memset` events.
    pub memsets: Vec<GpuEvent>,
    /// `cuda_runtime` and `cuda_driver` events.
    pub runtimes: Vec<RuntimeCall>,
    /// `cpu_op` events.
    pub ops: Vec<CpuOp>,
    /// `user_annotation` events (`record_function`, `ProfilerStep#N`).
    pub annotations: Vec<Span>,
    /// `python_function` events of `nn.Module`s (`with_modules=True`).
    pub modules: Vec<Span>,
    /// `cuda_profiler_range` events.
    pub ranges: Vec<ProfilerRange>,
    /// The distinct operator inputs ([`CpuOp::inputs`]).
    pub inputs: Vec<RecordedInputs>,
    /// Inductor's own estimates for the `cpu_op`s of its Triton kernels that carry them, by
    /// index into [`Self::ops`].
    pub estimates: BTreeMap<usize, InductorEstimate>,
    /// Flow events (`ac2g` and others); the import links through `correlation` instead.
    pub flows: u64,
    /// Every event read.
    pub events: u64,
    /// Events of categories the import does not know, by category (or phase).
    pub unknown: BTreeMap<String, u64>,
}

impl Trace {
    /// An interned name.
    pub fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }
}

#[derive(Default)]
struct Builder {
    trace: Trace,
    name_ids: FxHashMap<String, u32>,
    input_ids: FxHashMap<String, u32>,
    thread_ids: FxHashMap<(Id, Id), u32>,
    saw_events: bool,
    error: Option<TraceError>,
    /// The current event's recorded inputs as compact JSON, reused from event to event.
    inputs: InputsText,
    /// The key of [`Self::input_ids`] being looked up, reused.
    key: String,
}

/// An operator's `Input Dims`, `Input type` and `Concrete Inputs` as compact JSON text (written
/// while reading, with no value tree); empty when absent.
#[derive(Default)]
struct InputsText {
    dims: String,
    types: String,
    concrete: String,
}

impl InputsText {
    fn clear(&mut self) {
        self.dims.clear();
        self.types.clear();
        self.concrete.clear();
    }
}

impl Builder {
    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.name_ids.get(s) {
            return id;
        }
        let id = self.trace.names.len() as u32;
        self.trace.names.push(s.to_string());
        self.name_ids.insert(s.to_string(), id);
        id
    }

    /// Interns the current event's recorded inputs ([`Self::inputs`]), keyed by their compact
    /// JSON: only a set not seen before is turned into [`OpInputs`].
    fn recorded_inputs(&mut self) -> Option<u32> {
        let t = &self.inputs;
        if t.dims.is_empty() {
            return None;
        }
        self.key.clear();
        for part in [&t.dims, &t.types, &t.concrete] {
            self.key.push_str(part);
            self.key.push('\u{1}');
        }
        if let Some(&id) = self.input_ids.get(self.key.as_str()) {
            return Some(id);
        }
        let inputs = op_inputs(t)?;
        let id = self.trace.inputs.len() as u32;
        self.trace.inputs.push(RecordedInputs {
            inputs,
            dims_text: t.dims.as_str().into(),
        });
        self.input_ids.insert(self.key.clone(), id);
        Some(id)
    }

    fn thread(&mut self, pid: Option<Id>, tid: Option<Id>) -> u32 {
        let key = (pid.unwrap_or(Id::Num(0)), tid.unwrap_or(Id::Num(0)));
        if let Some(&id) = self.thread_ids.get(&key) {
            return id;
        }
        let id = self.trace.threads.len() as u32;
        self.trace.threads.push(format!("{}/{}", key.0, key.1));
        self.thread_ids.insert(key, id);
        id
    }

    fn push(&mut self, ev: RawEvent) {
        let index = self.trace.events;
        self.trace.events += 1;
        if self.error.is_some() {
            return;
        }
        let ph = ev.ph.as_ref().map_or("", Word::as_str);
        let cat = ev.cat.as_ref().map_or("", Word::as_str);
        match ph {
            "X" => {}
            "s" | "f" | "t" => {
                self.trace.flows += 1;
                return;
            }
            "M" | "i" | "I" => return,
            _ => {
                *self
                    .trace
                    .unknown
                    .entry(format!("phase {ph:?}"))
                    .or_default() += 1;
                return;
            }
        }
        let kind = match cat {
            c if let Some(kind) = category(c) => kind,
            "python_function"
                if matches!(ev.name, EventName::Id(id)
                    if self.trace.names[id as usize].starts_with(MODULE_PREFIX)) =>
            {
                Kind::Module
            }
            // Known, and not needed: Python frames, GPU-side copies of annotations, the span.
            "python_function" | "gpu_user_annotation" | "Trace" | "overhead" | "cuda_sync" => {
                return;
            }
            other => {
                *self.trace.unknown.entry(other.to_string()).or_default() += 1;
                return;
            }
        };
        let names = &self.trace.names;
        let missing = |field: &'static str, ev: &RawEvent| TraceError::BadEvent {
            index,
            category: cat.to_string(),
            name: match ev.name {
                EventName::Id(id) => names[id as usize].clone(),
                _ => String::new(),
            },
            field,
        };
        let Some(Micros(ts)) = ev.ts else {
            self.error = Some(missing("ts", &ev));
            return;
        };
        let dur_us = match (ev.dur, kind) {
            (Some(d), _) if d.is_finite() && d >= 0.0 => d,
            (_, Kind::Range) => 0.0,
            _ => {
                self.error = Some(missing("dur (a non-negative number)", &ev));
                return;
            }
        };
        let end = ts + (dur_us * 1000.0).round() as i64;
        let args = ev.args.unwrap_or_default();
        let name = match ev.name {
            EventName::Id(id) => id,
            _ => self.intern(""),
        };
        match kind {
            Kind::Kernel | Kind::Memcpy | Kind::Memset => {
                let g = GpuEvent {
                    name,
                    ts,
                    dur_us,
                    device: args.device.or(ev.pid.as_ref().and_then(Id::num)),
                    stream: args.stream.or(ev.tid.as_ref().and_then(Id::num)),
                    correlation: args.correlation,
                    grid: args.grid,
                    block: args.block,
                    bytes: args.bytes,
                };
                match kind {
                    Kind::Kernel => self.trace.kernels.push(g),
                    Kind::Memcpy => self.trace.memcpys.push(g),
                    _ => self.trace.memsets.push(g),
                }
            }
            Kind::Runtime => {
                let thread = self.thread(ev.pid, ev.tid);
                self.trace.runtimes.push(RuntimeCall {
                    name,
                    thread,
                    ts,
                    end,
                    correlation: args.correlation,
                    external_id: args.external_id,
                });
            }
            Kind::Op => {
                let thread = self.thread(ev.pid, ev.tid);
                let inputs = self.recorded_inputs();
                // Non-finite or negative estimates are not estimates.
                let valid = |x: Option<f64>| x.filter(|x| x.is_finite() && *x >= 0.0);
                let (flops, gb) = (valid(args.kernel_flop), valid(args.kernel_num_gb));
                if flops.is_some() || gb.is_some() {
                    let bytes = gb.map(|gb| gb * 1e9);
                    let op = self.trace.ops.len();
                    self.trace
                        .estimates
                        .insert(op, InductorEstimate { flops, bytes });
                }
                self.trace.ops.push(CpuOp {
                    name,
                    thread,
                    ts,
                    end,
                    external_id: args.external_id,
                    inputs,
                });
            }
            Kind::Annotation | Kind::Module => {
                let thread = self.thread(ev.pid, ev.tid);
                let span = Span {
                    name,
                    thread,
                    ts,
                    end,
                };
                if kind == Kind::Annotation {
                    self.trace.annotations.push(span);
                } else {
                    self.trace.modules.push(span);
                }
            }
            Kind::Range => {
                let metrics = args
                    .metrics
                    .into_iter()
                    .map(|(k, v)| (self.intern(&k), v))
                    .collect();
                self.trace.ranges.push(ProfilerRange {
                    name,
                    device: args.device.or(ev.pid.as_ref().and_then(Id::num)),
                    ts,
                    metrics,
                });
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Kernel,
    Memcpy,
    Memset,
    Op,
    Runtime,
    Annotation,
    Module,
    Range,
}

/// Reads a trace from any reader, event by event.
///
/// The text goes through a window of about a megabyte: a byte scan finds where each event (and
/// each other top-level value) ends, and serde_json reads that slice, borrowing its strings,
/// while the next bytes wait in the reader. Line and column of an error are counted over the
/// whole text.
///
/// # Errors
/// [`TraceError`]: not JSON, no `traceEvents`, a kernel or operator without a time.
pub fn parse<R: Read>(reader: R) -> Result<Trace, TraceError> {
    let mut input = Input::new(reader);
    let mut b = Builder::default();
    match input.peek()? {
        Some(b'{') => {
            input.pos += 1;
            top_object(&mut input, &mut b)?;
        }
        Some(b'[') => {
            events(&mut input, &mut b)?;
            b.saw_events = true;
        }
        Some(_) => {
            return Err(input.error(
                0,
                "expected a Chrome trace: an object with \"traceEvents\", or an array of events",
            ));
        }
        None => return Err(input.error(0, "EOF while parsing a value")),
    }
    if input.peek()?.is_some() {
        return Err(input.error(0, "trailing characters"));
    }
    if let Some(e) = b.error {
        return Err(e);
    }
    if !b.saw_events {
        return Err(TraceError::NoEvents);
    }
    Ok(b.trace)
}

/// The top-level object: `traceEvents` streamed, `deviceProperties` and `distributedInfo` read,
/// the rest skipped. `input` is past the `{`.
fn top_object<R: Read>(input: &mut Input<R>, b: &mut Builder) -> Result<(), TraceError> {
    let mut first = true;
    loop {
        match input.peek()? {
            Some(b'}') if first => {
                input.pos += 1;
                return Ok(());
            }
            Some(b'"') => {}
            Some(_) => return Err(input.error(0, "expected a key (a string)")),
            None => return Err(input.error(0, "EOF while parsing an object")),
        }
        let len = input.value_len()?;
        let key: String = input.read_slice(len, |d| String::deserialize(d))?;
        input.pos += len;
        if input.peek()? != Some(b':') {
            return Err(input.error(0, "expected `:`"));
        }
        input.pos += 1;
        if input.peek()?.is_none() {
            return Err(input.error(0, "EOF while parsing a value"));
        }
        if key == "traceEvents" {
            if input.peek()? != Some(b'[') {
                return Err(input.error(0, "\"traceEvents\" is not an array of trace events"));
            }
            events(input, b)?;
            b.saw_events = true;
        } else {
            let len = input.value_len()?;
            match key.as_str() {
                "deviceProperties" => {
                    b.trace.devices =
                        input.read_slice(len, |d| Vec::<DeviceProps>::deserialize(d))?;
                }
                "distributedInfo" => {
                    let d = input.read_slice(len, |d| Distributed::deserialize(d))?;
                    b.trace.rank = d.rank.map(|r| match r {
                        serde_json::Value::String(s) => s,
                        other => other.to_string(),
                    });
                    b.trace.world_size = d.world_size;
                }
                _ => input.read_slice(len, |d| IgnoredAny::deserialize(d).map(|_| ()))?,
            }
            input.pos += len;
        }
        first = false;
        match input.peek()? {
            Some(b',') => input.pos += 1,
            Some(b'}') => {
                input.pos += 1;
                return Ok(());
            }
            Some(_) => return Err(input.error(0, "expected `,` or `}`")),
            None => return Err(input.error(0, "EOF while parsing an object")),
        }
    }
}

/// The events array, each element read from its own slice. `input` is at the `[`.
fn events<R: Read>(input: &mut Input<R>, b: &mut Builder) -> Result<(), TraceError> {
    input.pos += 1;
    if input.peek()? == Some(b']') {
        input.pos += 1;
        return Ok(());
    }
    loop {
        if input.peek()?.is_none() {
            return Err(input.error(0, "EOF while parsing a list"));
        }
        let len = input.value_len()?;
        let ev = input.read_slice(len, |d| EventSeed(&mut *b).deserialize(d))?;
        b.push(ev);
        input.pos += len;
        match input.peek()? {
            Some(b',') => input.pos += 1,
            Some(b']') => {
                input.pos += 1;
                return Ok(());
            }
            Some(_) => return Err(input.error(0, "expected `,` or `]`")),
            None => return Err(input.error(0, "EOF while parsing a list")),
        }
    }
}

/// The bytes that open or close a container or a string: what [`Input::value_len`] looks for.
const STRUCTURAL: [bool; 256] = {
    let mut t = [false; 256];
    t[b'"' as usize] = true;
    t[b'{' as usize] = true;
    t[b'}' as usize] = true;
    t[b'[' as usize] = true;
    t[b']' as usize] = true;
    t
};

/// How much is read from the reader at a time.
const CHUNK: usize = 1 << 20;

/// A window over the reader: `buf()[pos..]` is not yet consumed. Bytes before `pos` are dropped
/// when more are read, after counting their lines for error positions.
struct Input<R> {
    reader: R,
    /// The window's memory, zeroed once; `storage[buf]` holds what was read.
    storage: Vec<u8>,
    buf: std::ops::Range<usize>,
    pos: usize,
    eof: bool,
    /// 1-based line of `buf[0]`.
    line: usize,
    /// Bytes before `buf[0]` on its line.
    column: usize,
}

impl<R: Read> Input<R> {
    fn new(reader: R) -> Self {
        Input {
            reader,
            storage: vec![0; CHUNK],
            buf: 0..0,
            pos: 0,
            eof: false,
            line: 1,
            column: 0,
        }
    }

    /// What was read and not dropped.
    fn data(&self) -> &[u8] {
        &self.storage[self.buf.clone()]
    }

    /// Reads more, keeping `buf[pos..]` (moved to the front). False at the end of the input.
    fn fill(&mut self) -> Result<bool, TraceError> {
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 {
            let dropped = &self.storage[..self.pos];
            match memchr::memrchr(b'\n', dropped) {
                Some(last) => {
                    self.line += memchr::memchr_iter(b'\n', dropped).count();
                    self.column = dropped.len() - last - 1;
                }
                None => self.column += dropped.len(),
            }
            self.storage.copy_within(self.pos..self.buf.len(), 0);
            self.buf = 0..self.buf.len() - self.pos;
            self.pos = 0;
        }
        let len = self.buf.len();
        if self.storage.len() - len < CHUNK / 2 {
            // Only a value longer than the window grows it; the window is zeroed once.
            self.storage.resize(len + CHUNK, 0);
        }
        loop {
            match self.reader.read(&mut self.storage[len..]) {
                Ok(n) => {
                    self.buf = 0..len + n;
                    if n == 0 {
                        self.eof = true;
                    }
                    return Ok(n > 0);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TraceError::Read(e.to_string())),
            }
        }
    }

    /// The next byte that is not JSON whitespace, left unconsumed (`pos` moves past the blanks).
    fn peek(&mut self) -> Result<Option<u8>, TraceError> {
        loop {
            while let Some(&c) = self.data().get(self.pos) {
                if matches!(c, b' ' | b'\n' | b'\t' | b'\r') {
                    self.pos += 1;
                } else {
                    return Ok(Some(c));
                }
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    /// The length of the JSON value at `pos` (an object, array, string or scalar), reading as
    /// much as it needs. Only its extent is found here; serde_json checks it when it reads it.
    fn value_len(&mut self) -> Result<usize, TraceError> {
        let mut i = 0; // relative to pos: `fill` moves the window
        let (mut depth, mut in_string) = (0usize, false);
        match self.data()[self.pos] {
            b'{' | b'[' => {}
            b'"' => {
                in_string = true;
                i = 1;
            }
            b',' | b':' | b']' | b'}' => return Err(self.error(0, "expected a value")),
            _ => loop {
                // A number, true, false or null: up to a delimiter.
                while let Some(&c) = self.data().get(self.pos + i) {
                    if matches!(c, b',' | b']' | b'}' | b' ' | b'\n' | b'\t' | b'\r') {
                        return Ok(i);
                    }
                    i += 1;
                }
                if !self.fill()? {
                    return Ok(i);
                }
            },
        }
        loop {
            let rest = &self.storage[self.pos + i..self.buf.end];
            if in_string {
                match memchr::memchr2(b'"', b'\\', rest) {
                    Some(j) if rest[j] == b'\\' => {
                        if j + 1 < rest.len() {
                            i += j + 2;
                            continue;
                        }
                        i += j; // the escape's second byte is not read yet
                    }
                    Some(j) => {
                        i += j + 1;
                        in_string = false;
                        if depth == 0 {
                            return Ok(i);
                        }
                        continue;
                    }
                    None => i += rest.len(),
                }
            } else {
                let mut j = 0;
                while let Some(k) = rest[j..].iter().position(|&c| STRUCTURAL[c as usize]) {
                    j += k;
                    match rest[j] {
                        b'"' => {
                            in_string = true;
                            break;
                        }
                        b'{' | b'[' => depth += 1,
                        _ => {
                            depth = depth.saturating_sub(1);
                            if depth == 0 {
                                return Ok(i + j + 1);
                            }
                        }
                    }
                    j += 1;
                }
                if !in_string {
                    j = rest.len();
                }
                if in_string {
                    i += j + 1;
                    continue;
                }
                i += j;
            }
            if !self.fill()? {
                return Err(self.error(i, "EOF while parsing a value"));
            }
        }
    }

    /// Deserializes `buf[pos..pos + len]` (borrowing its strings), errors placed in the text.
    fn read_slice<T>(
        &self,
        len: usize,
        f: impl FnOnce(
            &mut serde_json::Deserializer<serde_json::de::SliceRead<'_>>,
        ) -> Result<T, serde_json::Error>,
    ) -> Result<T, TraceError> {
        let mut de = serde_json::Deserializer::from_slice(&self.data()[self.pos..self.pos + len]);
        f(&mut de).and_then(|v| de.end().map(|()| v)).map_err(|e| {
            let (line, column) = self.position(0);
            let message = e.to_string();
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            TraceError::Json {
                line: line + e.line().saturating_sub(1),
                column: if e.line() <= 1 {
                    column + e.column()
                } else {
                    e.column()
                },
                message: message
                    .strip_suffix(&suffix)
                    .unwrap_or(&message)
                    .to_string(),
            }
        })
    }

    /// 1-based line, and bytes before it on that line, of `buf[pos + i]`.
    fn position(&self, i: usize) -> (usize, usize) {
        let before = &self.data()[..(self.pos + i).min(self.buf.len())];
        match memchr::memrchr(b'\n', before) {
            Some(last) => (
                self.line + memchr::memchr_iter(b'\n', before).count(),
                before.len() - last - 1,
            ),
            None => (self.line, self.column + before.len()),
        }
    }

    /// A syntax error at `buf[pos + i]`.
    fn error(&self, i: usize, message: &str) -> TraceError {
        let (line, column) = self.position(i);
        TraceError::Json {
            line,
            column: column + 1,
            message: message.to_string(),
        }
    }
}

#[derive(Deserialize)]
struct Distributed {
    #[serde(default)]
    rank: Option<serde_json::Value>,
    #[serde(default)]
    world_size: Option<u64>,
}

/// The name prefix of an `nn.Module` frame (`with_modules=True`).
const MODULE_PREFIX: &str = "nn.Module: ";

/// One event as written; unknown fields are skipped.
#[derive(Default)]
struct RawEvent {
    ph: Option<Word>,
    cat: Option<Word>,
    name: EventName,
    pid: Option<Id>,
    tid: Option<Id>,
    ts: Option<Micros>,
    dur: Option<f64>,
    args: Option<RawArgs>,
}

/// An event's name: interned when the event may be kept, skipped (never copied) when its phase
/// or category, read before it, already say it is not.
#[derive(Default, Clone, Copy)]
enum EventName {
    #[default]
    Absent,
    Id(u32),
    Skipped,
}

/// Whether an event with this phase and category (as far as read) is one the import keeps:
/// `None` when it is not, `Some(true)` when only `nn.Module` frames of it are.
fn kept(ph: Option<&Word>, cat: Option<&Word>) -> Option<bool> {
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
fn category(cat: &str) -> Option<Kind> {
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
enum EventKey {
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
struct EventSeed<'a>(&'a mut Builder);

impl<'de> DeserializeSeed<'de> for EventSeed<'_> {
    type Value = RawEvent;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<RawEvent, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EventSeed<'_> {
    type Value = RawEvent;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a trace event (an object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<RawEvent, A::Error> {
        let b = self.0;
        let mut ev = RawEvent::default();
        b.inputs.clear();
        while let Some(k) = m.next_key::<EventKey>()? {
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
                        ev.args = m.next_value_seed(ArgsSeed(&mut b.inputs))?;
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
struct NameSeed<'a> {
    b: &'a mut Builder,
    modules_only: bool,
}

impl<'de> DeserializeSeed<'de> for NameSeed<'_> {
    type Value = EventName;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<EventName, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NameSeed<'_> {
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
enum Word {
    Inline([u8; 24], u8),
    Heap(String),
}

impl Word {
    fn as_str(&self) -> &str {
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
enum Id {
    Num(i64),
    Str(String),
}

impl Id {
    fn num(&self) -> Option<i64> {
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
struct Micros(Ns);

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
struct RawArgs {
    external_id: Option<i64>,
    correlation: Option<i64>,
    device: Option<i64>,
    stream: Option<i64>,
    grid: Option<[u32; 3]>,
    block: Option<[u32; 3]>,
    bytes: Option<f64>,
    kernel_flop: Option<f64>,
    kernel_num_gb: Option<f64>,
    metrics: Vec<(String, f64)>,
}

/// The recorded inputs as the operator rules read them, from their compact text (read again as
/// JSON values: done once per distinct set). `None` when `Input Dims` is not an array.
fn op_inputs(text: &InputsText) -> Option<OpInputs> {
    let list = |t: &str| -> Option<Vec<serde_json::Value>> {
        match serde_json::from_str(t).ok()? {
            serde_json::Value::Array(v) => Some(v),
            _ => None,
        }
    };
    let dims = list(&text.dims)?;
    let types = list(&text.types).unwrap_or_default();
    let concrete = list(&text.concrete);
    let args = dims
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let ty = types.get(i).and_then(|t| t.as_str()).unwrap_or("");
            match (Dtype::from_profiler(ty), shape(d)) {
                (Some(dt), Some(s)) => Arg::Tensor(dt, s),
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
    })
}

fn shape(v: &serde_json::Value) -> Option<Vec<u64>> {
    v.as_array()?.iter().map(|x| x.as_u64()).collect()
}

/// An `args` key: the known ones without allocating, metric names kept.
enum ArgKey {
    ExternalId,
    Correlation,
    Device,
    Stream,
    Grid,
    Block,
    Bytes,
    KernelFlop,
    KernelNumGb,
    Dims,
    Types,
    Concrete,
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
                    b"Input Dims" => ArgKey::Dims,
                    b"Input type" => ArgKey::Types,
                    b"Concrete Inputs" => ArgKey::Concrete,
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

/// A number, or nothing for any other value (skipped).
#[derive(Clone, Copy)]
struct MaybeNum(Option<f64>);

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

fn int(v: MaybeNum) -> Option<i64> {
    v.0.filter(|x| x.fract() == 0.0).map(|x| x as i64)
}

/// A launch's `grid` or `block`: three unsigned integers, or nothing for any other value. A
/// kernel event records `[x, y, z]`; the `cpu_op` of an Inductor-generated Triton kernel records
/// its grid as text (`"grid(100,)"`, PyTorch 2.5), which says nothing the kernel event does not.
struct MaybeDim3(Option<[u32; 3]>);

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
struct ArgsSeed<'a>(&'a mut InputsText);

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
                while let Some(k) = m.next_key::<ArgKey>()? {
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
                        ArgKey::Metric(name) => {
                            if let Some(v) = m.next_value::<MaybeNum>()?.0 {
                                a.metrics.push((name, v));
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
struct Compact<'a>(&'a mut String);

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

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"{
      "schemaVersion": 1,
      "traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 2, "ts": 100, "dur": 50,
         "args": {"External id": 7, "Input Dims": [[2, 3], [3, 4]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 110.5, "dur": 5,
         "args": {"External id": 7, "correlation": 42}},
        {"ph": "s", "id": 42, "pid": 1, "tid": 2, "ts": 110, "cat": "ac2g", "name": "ac2g"},
        {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 120, "dur": 3.25,
         "args": {"device": 0, "stream": 7, "correlation": 42, "grid": [1, 2, 3], "block": [128, 1, 1]}},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 7, "ts": 130, "dur": 1,
         "args": {"device": 0, "bytes": 64}},
        {"ph": "X", "cat": "mystery", "name": "?", "ts": 1, "dur": 1},
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}}
      ],
      "deviceProperties": [{"id": 0, "name": "GPU", "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
      "distributedInfo": {"rank": 3, "world_size": 8}
    }"#;

    #[test]
    fn reads_every_kind_in_any_key_order() {
        let t = parse(SMALL.as_bytes()).unwrap();
        assert_eq!(t.events, 7);
        assert_eq!(t.kernels.len(), 1);
        let k = &t.kernels[0];
        assert_eq!(t.name(k.name), "gemm");
        assert_eq!((k.ts, k.dur_us, k.correlation), (120_000, 3.25, Some(42)));
        assert_eq!((k.grid, k.block), (Some([1, 2, 3]), Some([128, 1, 1])));
        assert_eq!(t.runtimes[0].ts, 110_500);
        assert_eq!(t.memcpys[0].bytes, Some(64.0));
        assert_eq!(t.flows, 1);
        assert_eq!(t.unknown.get("mystery"), Some(&1));
        assert_eq!(t.devices[0].num_sms, Some(132));
        assert_eq!((t.rank.as_deref(), t.world_size), (Some("3"), Some(8)));
        let op = &t.ops[0];
        let rec = &t.inputs[op.inputs.unwrap() as usize];
        assert_eq!(rec.inputs.args[0], Arg::Tensor(Dtype::Bf16, vec![2, 3]));
        assert_eq!(&*rec.dims_text, "[[2,3],[3,4]]");
    }

    /// A reader that hands out one byte at a time: every value crosses a window boundary.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
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
    fn the_window_reads_the_same_however_the_text_arrives() {
        assert_eq!(
            parse(Trickle(SMALL.as_bytes())).unwrap(),
            parse(SMALL.as_bytes()).unwrap()
        );
        // Brackets, quotes and backslashes inside strings; an escaped name; nested unknown keys.
        let tricky = r#"{"other": {"a": ["]", "}", "\\", "\""]}, "traceEvents": [
          {"ph": "X", "cat": "cpu_op", "name": "aten::\u006dm{]\"", "ts": 1, "dur": 2,
           "args": {"Input Dims": [[2, 3]], "Input type": ["float"], "Concrete Inputs": ["[1, \"]"]}}
        ], "tail": [1, 2.5, null, true]}"#;
        for t in [
            parse(tricky.as_bytes()).unwrap(),
            parse(Trickle(tricky.as_bytes())).unwrap(),
        ] {
            assert_eq!(t.name(t.ops[0].name), "aten::mm{]\"");
            let rec = &t.inputs[t.ops[0].inputs.unwrap() as usize];
            assert_eq!(rec.inputs.concrete, Some(vec!["[1, \"]".to_string()]));
        }
        // Errors are placed in the whole text, as serde_json places them.
        for bad in [
            "{\"traceEvents\": [\n  {\"ph\": \"X\"},\n  {\"ph\": \"X\",, \"ts\": 1}\n]}",
            "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": [1}]}",
            "{\"traceEvents\": [\n{\"ph\": \"X\"}\n\n, {\"name\": tru}]}",
        ] {
            let whole = serde_json::from_str::<serde_json::Value>(bad).unwrap_err();
            for e in [
                parse(bad.as_bytes()).unwrap_err(),
                parse(Trickle(bad.as_bytes())).unwrap_err(),
            ] {
                let TraceError::Json { line, column, .. } = e else {
                    panic!("{e:?}");
                };
                assert_eq!(line, whole.line(), "{bad}");
                if !bad.contains("tru}") && !bad.contains("[1}") {
                    assert_eq!(column, whole.column(), "{bad}");
                }
            }
        }
        for (bad, message) in [
            ("{\"traceEvents\": [{}", "EOF while parsing a list"),
            (
                "{\"traceEvents\": [{\"name\": \"x",
                "EOF while parsing a value",
            ),
            ("{\"traceEvents\": []} x", "trailing characters"),
            (
                "{\"traceEvents\": 3}",
                "\"traceEvents\" is not an array of trace events",
            ),
            ("", "EOF while parsing a value"),
        ] {
            match parse(bad.as_bytes()) {
                Err(TraceError::Json { message: m, .. }) => assert_eq!(m, message, "{bad}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_grid_or_block_that_is_not_three_integers_is_left_unset() {
        // SYNTHETIC events shaped as PyTorch 2.5 records an Inductor-generated Triton kernel:
        // its `cpu_op` carries the launcher's grid as text, its kernel event the real one.
        let text = r#"{"traceEvents": [
          {"ph": "X", "cat": "cpu_op", "name": "triton_poi_fused_add_0", "pid": 1, "tid": 1, "ts": 1, "dur": 9,
           "args": {"grid": "grid(100,)", "stream": 0, "kernel_backend": "triton",
                    "Input Dims": [[10, 10], []], "Input type": ["float", "Scalar"]}},
          {"ph": "X", "cat": "kernel", "name": "triton_poi_fused_add_0", "pid": 0, "tid": 7, "ts": 5, "dur": 2,
           "args": {"correlation": 3, "grid": [1, 1, 1], "block": [128, 1, 1]}},
          {"ph": "X", "cat": "kernel", "name": "odd", "pid": 0, "tid": 7, "ts": 8, "dur": 2,
           "args": {"grid": [1, 2], "block": [1.5, 1, 1]}},
          {"ph": "X", "cat": "kernel", "name": "odder", "pid": 0, "tid": 7, "ts": 9, "dur": 2,
           "args": {"grid": {"x": 1}, "block": [-1, 1, 1]}}
        ]}"#;
        let t = parse(text.as_bytes()).unwrap();
        assert_eq!(t.ops.len(), 1);
        assert!(t.estimates.is_empty());
        let grids: Vec<_> = t.kernels.iter().map(|k| (k.grid, k.block)).collect();
        assert_eq!(
            grids,
            [
                (Some([1, 1, 1]), Some([128, 1, 1])),
                (None, None),
                (None, None)
            ]
        );
    }

    #[test]
    fn inductor_estimates_are_kept_per_operator() {
        let text = r#"{"traceEvents": [
          {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 9, "args": {}},
          {"ph": "X", "cat": "cpu_op", "name": "triton_tem_fused_mm_0", "ts": 2, "dur": 9,
           "args": {"kernel_flop": 4096, "kernel_num_gb": 1.5e-06}},
          {"ph": "X", "cat": "cpu_op", "name": "triton_poi_fused_0", "ts": 3, "dur": 9,
           "args": {"kernel_num_gb": -1, "kernel_flop": "n/a"}},
          {"ph": "X", "cat": "cpu_op", "name": "triton_poi_fused_1", "ts": 4, "dur": 9,
           "args": {"kernel_num_gb": 2e-06}}
        ]}"#;
        let t = parse(text.as_bytes()).unwrap();
        let e: Vec<_> = t
            .estimates
            .iter()
            .map(|(&i, e)| (i, e.flops, e.bytes))
            .collect();
        assert_eq!(
            e,
            [(1, Some(4096.0), Some(1500.0)), (3, None, Some(2000.0))]
        );
    }

    #[test]
    fn errors_name_the_problem() {
        assert_eq!(
            parse(&b"{\"schemaVersion\": 1}"[..]),
            Err(TraceError::NoEvents)
        );
        let e = parse(&b"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1}]}"[..])
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "event 0 (kernel \"k\") has no dur (a non-negative number)"
        );
        let e = parse(&b"{\"traceEvents\": [1, 2"[..]).unwrap_err();
        assert!(matches!(e, TraceError::Json { line: 1, .. }), "{e}");
        // Chrome's array form.
        let t = parse(
            &b"[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": 2}]"[..],
        )
        .unwrap();
        assert_eq!(t.kernels.len(), 1);
    }
}
