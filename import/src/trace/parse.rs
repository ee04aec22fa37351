//! The streaming reader: Kineto's Chrome-trace JSON into a compact event model ([`super::model`]),
//! through a byte window (`window.rs`), one event at a time (`event.rs`).
//!
//! serde_json reads from any [`Read`]; a visitor walks the top-level object and hands each
//! element of `traceEvents` to the model as it is read, keeping only what the import needs
//! (names interned, times as integer nanoseconds, shapes as [`OpInputs`](crate::operators::OpInputs)), so that memory grows
//! with the events kept, not with the text. Keys may come in any order (`deviceProperties` after
//! `traceEvents` is fine). Chrome's array form (a bare list of events) is read too.
//!
//! Times: Kineto writes `ts` and `dur` in microseconds, as integers or with three decimals
//! (nanoseconds). Integers are kept exactly; decimals go through an `f64`, which at today's epoch
//! timestamps (~1.7·10¹⁵ µs) resolves 0.25 µs, so a start time may be off by up to 0.125 µs. That
//! only matters for matching a launch to its enclosing operator on the same thread, where events
//! are microseconds apart. Durations are small numbers and kept as written.

use std::io::Read;

use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde::de::{DeserializeSeed, IgnoredAny};

use super::error::TraceError;
use super::event::{
    Distributed, EventName, EventSeed, Id, MODULE_PREFIX, Micros, RawEvent, Word, category,
    op_inputs, process_groups,
};
use super::event::{EventSink, InputsText, Kind};
use super::model::{
    CpuOp, DeviceProps, GpuEvent, InductorEstimate, ProfilerRange, RecordedInputs, RuntimeCall,
    Span, Trace,
};
use super::window::Input;

#[derive(Default)]
pub(super) struct Builder {
    pub(super) trace: Trace,
    pub(super) name_ids: FxHashMap<String, u32>,
    pub(super) input_ids: FxHashMap<String, u32>,
    pub(super) thread_ids: FxHashMap<(Id, Id), u32>,
    pub(super) process_ids: FxHashMap<Id, u32>,
    pub(super) saw_events: bool,
    pub(super) error: Option<TraceError>,
    /// The current event's recorded inputs as compact JSON, reused from event to event.
    pub(super) inputs: InputsText,
    /// The key of [`Self::input_ids`] being looked up, reused.
    pub(super) key: String,
}

impl EventSink for Builder {
    fn intern(&mut self, s: &str) -> u32 {
        Builder::intern(self, s)
    }

    fn inputs(&mut self) -> &mut InputsText {
        &mut self.inputs
    }
}

impl Builder {
    pub(super) fn intern(&mut self, s: &str) -> u32 {
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
    pub(super) fn recorded_inputs(&mut self) -> Option<u32> {
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

    pub(super) fn thread(&mut self, pid: Option<Id>, tid: Option<Id>) -> u32 {
        let key = (pid.unwrap_or(Id::Num(0)), tid.unwrap_or(Id::Num(0)));
        if let Some(&id) = self.thread_ids.get(&key) {
            return id;
        }
        let id = self.trace.threads.len() as u32;
        self.trace.threads.push(format!("{}/{}", key.0, key.1));
        let process = self.process(&key.0);
        self.trace.thread_process.push(process);
        self.thread_ids.insert(key, id);
        id
    }

    /// The interned id of a process (a `pid`), for [`Trace::thread_process`].
    fn process(&mut self, pid: &Id) -> u32 {
        if let Some(&id) = self.process_ids.get(pid) {
            return id;
        }
        let id = self.trace.processes.len() as u32;
        self.trace.processes.push(pid.to_string());
        self.process_ids.insert(pid.clone(), id);
        id
    }

    pub(super) fn push(&mut self, ev: RawEvent) {
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
            "M" => return,
            // A kept category in another phase (an instant, begin and end): not read, counted.
            _ if category(cat).is_some() => {
                *self
                    .trace
                    .other_phases
                    .entry(format!("{cat} events of phase {ph:?}"))
                    .or_default() += 1;
                return;
            }
            "i" | "I" => return,
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
                let key = if other.trim().is_empty() {
                    "(no category)"
                } else {
                    other
                };
                *self.trace.unknown.entry(key.to_string()).or_default() += 1;
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
        // A kernel (or a range, which stands for one) is named: a bundle names every kernel.
        let unnamed = match ev.name {
            EventName::Id(id) => names[id as usize].is_empty(),
            _ => true,
        };
        if unnamed && matches!(kind, Kind::Kernel | Kind::Range) {
            self.error = Some(missing(
                "name (a kernel's name: a bundle names every kernel)",
                &ev,
            ));
            return;
        }
        let dur_us = match (ev.dur, kind) {
            (Some(d), _) if d.is_finite() && d >= 0.0 => d,
            (Some(d), k) if d < 0.0 && k != Kind::Range => {
                self.error = Some(TraceError::NegativeDuration {
                    index,
                    category: cat.to_string(),
                    name: match ev.name {
                        EventName::Id(id) => self.trace.names[id as usize].clone(),
                        _ => String::new(),
                    },
                    dur: d,
                });
                return;
            }
            (_, Kind::Range) => 0.0,
            _ => {
                self.error = Some(missing("dur (a non-negative number)", &ev));
                return;
            }
        };
        // The end in integer nanoseconds: a duration that takes it past the trace's clock
        // (2^63 ns, about 292 years) is refused, never wrapped or clamped.
        #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
        let end = {
            let dur_ns = (dur_us * 1000.0).round();
            if dur_ns >= i64::MAX as f64 {
                None
            } else {
                ts.checked_add(dur_ns as i64)
            }
        };
        let Some(end) = end else {
            self.error = Some(TraceError::DurationTooLong {
                ts_ns: ts,
                index,
                category: cat.to_string(),
                name: match ev.name {
                    EventName::Id(id) => self.trace.names[id as usize].clone(),
                    _ => String::new(),
                },
                dur: dur_us,
            });
            return;
        };
        let mut args = ev.args.unwrap_or_default();
        let comm = std::mem::take(&mut args.comm);
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
                    Kind::Kernel => {
                        if !comm.is_empty() {
                            self.trace
                                .kernel_comm
                                .push((self.trace.kernels.len(), comm));
                        }
                        self.trace.kernels.push(g);
                    }
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
                if !comm.is_empty() {
                    self.trace.op_comm.push((self.trace.ops.len(), comm));
                }
                self.trace.ops.push(CpuOp {
                    name,
                    thread,
                    ts,
                    end,
                    external_id: args.external_id,
                    sequence: args.sequence,
                    forward_thread: args.forward_thread,
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
                    // A collective's annotation records its message as its input.
                    if self.trace.name(name).starts_with("nccl:")
                        && let Some(i) = self.recorded_inputs()
                    {
                        self.trace
                            .annotation_inputs
                            .push((self.trace.annotations.len(), i));
                    }
                    self.trace.annotations.push(span);
                } else {
                    self.trace.modules.push(span);
                }
            }
            Kind::Range => {
                if let Some((metric, value)) = args.not_numbers.into_iter().next() {
                    self.error = Some(TraceError::BadCounter {
                        index,
                        name: self.trace.name(name).to_string(),
                        metric,
                        value,
                    });
                    return;
                }
                // `smsp__X.sum` and `sm__X.sum` count the same events: both with different
                // values cannot be read (which one holds is not known).
                let mut read: Vec<(String, &str, f64)> = Vec::new();
                for (k, v) in &args.metrics {
                    let alias = super::import::ncu_metric_name(k);
                    if let Some((_, first, w)) = read.iter().find(|(a, _, _)| *a == alias)
                        && *w != *v
                    {
                        self.error = Some(TraceError::CounterAliases {
                            index,
                            name: self.trace.name(name).to_string(),
                            first: (*first).to_string(),
                            first_value: *w,
                            second: k.clone(),
                            second_value: *v,
                        });
                        return;
                    }
                    read.push((alias, k.as_str(), *v));
                }
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
                    event: index,
                });
            }
        }
    }
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
pub(super) fn top_object<R: Read>(input: &mut Input<R>, b: &mut Builder) -> Result<(), TraceError> {
    let mut first = true;
    let mut seen: Vec<String> = Vec::new();
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
        // A key twice is refused, as the bundle reader refuses it (which would count?).
        if seen.contains(&key) {
            return Err(input.error(0, &format!("duplicate field `{key}`")));
        }
        input.pos += len;
        if input.peek()? != Some(b':') {
            return Err(input.error(0, "expected `:`"));
        }
        input.pos += 1;
        if input.peek()?.is_none() {
            return Err(input.error(0, "EOF while parsing a value"));
        }
        seen.push(key.clone());
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
                    let mut devices =
                        input.read_slice(len, |d| Vec::<DeviceProps>::deserialize(d))?;
                    if let Some(message) = one_gpu_per_id(&mut devices) {
                        return Err(input.error(0, &message));
                    }
                    b.trace.devices = devices;
                }
                "distributedInfo" => {
                    let d = input.read_slice(len, |d| Distributed::deserialize(d))?;
                    b.trace.group_sizes = d.group_sizes();
                    b.trace.rank = d.rank.map(|r| match r {
                        serde_json::Value::String(s) => s,
                        other => other.to_string(),
                    });
                    b.trace.world_size = d.world_size;
                    b.trace.pg_count = d.pg_count;
                    b.trace.process_groups = process_groups(d.pg_config.as_ref());
                    b.trace.distributed = true;
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

/// A device in words for a message: its name, compute capability and SM count.
fn describe_props(p: &DeviceProps) -> String {
    let mut facts = Vec::new();
    if let (Some(a), Some(b)) = (p.compute_major, p.compute_minor) {
        facts.push(format!("compute capability {a}.{b}"));
    }
    if let Some(n) = p.num_sms {
        facts.push(format!("{n} SMs"));
    }
    let name = if p.name.is_empty() {
        "an unnamed GPU".to_string()
    } else {
        format!("{:?}", p.name)
    };
    if facts.is_empty() {
        name
    } else {
        format!("{name} ({})", facts.join(", "))
    }
}

/// `deviceProperties` with an id listed twice: the same GPU twice is kept once; two different
/// GPUs under one id are refused (which one the kernels ran on cannot be told), in words.
fn one_gpu_per_id(devices: &mut Vec<DeviceProps>) -> Option<String> {
    let mut kept: Vec<DeviceProps> = Vec::with_capacity(devices.len());
    for d in devices.drain(..) {
        match kept.iter().find(|k| k.id == d.id) {
            Some(k) if *k == d => {}
            Some(k) => {
                return Some(format!(
                    "\"deviceProperties\" lists device {} twice, as {} and as {}: which GPU its kernels ran on cannot be told",
                    d.id,
                    describe_props(k),
                    describe_props(&d)
                ));
            }
            None => kept.push(d),
        }
    }
    *devices = kept;
    None
}

/// The events array, each element read from its own slice. `input` is at the `[`.
pub(super) fn events<R: Read>(input: &mut Input<R>, b: &mut Builder) -> Result<(), TraceError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::{Arg, Dtype};

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
      "distributedInfo": {"rank": 3, "world_size": 8, "pg_config": [{"pg_name": "0", "pg_size": 8}, {"pg_name": "5", "pg_size": 1}]}
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
        assert!(t.distributed);
        assert_eq!(t.group_sizes, [8, 1]);
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

    /// Issue 29: a second `traceEvents` imported both arrays, a second `dur` took the last.
    /// Duplicate keys are refused, as the bundle reader refuses them, with where they are.
    #[test]
    fn duplicate_keys_are_refused() {
        let two_arrays = r#"{"traceEvents": [], "deviceProperties": [], "traceEvents": []}"#;
        let e = parse(two_arrays.as_bytes()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 1, column 45: duplicate field `traceEvents`"
        );
        let two_durs = "{\"traceEvents\": [\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": 2, \"dur\": 9000}]}";
        let e = parse(two_durs.as_bytes()).unwrap_err();
        assert!(
            matches!(&e, TraceError::Json { line: 2, message, .. } if message == "duplicate field `dur`"),
            "{e:?}"
        );
        for args in [
            r#""correlation": 1, "correlation": 2"#,
            r#""External id": 1, "External id": 1"#,
            r#""smsp__x.sum": 1, "smsp__x.sum": 2"#,
            r#""Input Dims": [[1]], "Input Dims": [[2]]"#,
        ] {
            let text = format!(
                r#"{{"traceEvents": [{{"ph": "X", "cat": "cpu_op", "name": "k", "ts": 1, "dur": 2, "args": {{{args}}}}}]}}"#
            );
            let e = parse(text.as_bytes()).unwrap_err();
            assert!(e.to_string().contains("duplicate field `"), "{args}: {e}");
        }
        // Keys the import does not read may repeat (it never looks at them).
        let other = r#"{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "k", "ts": 1, "dur": 2, "x": 1, "x": 2}]}"#;
        assert!(parse(other.as_bytes()).is_ok());
    }

    /// Issue 29: counter values that are not numbers (`"12"`, `"lots"`) were dropped while the
    /// join reported a match. Refused naming the event, the range and the metric.
    #[test]
    fn a_counter_that_is_not_a_number_is_refused() {
        for (value, shown) in [
            (r#""12""#, r#""12""#),
            (r#""lots""#, r#""lots""#),
            ("null", "null"),
            ("[1]", "an array"),
        ] {
            let text = format!(
                r#"{{"traceEvents": [{{"ph": "X", "cat": "cuda_profiler_range", "name": "sgemm", "ts": 1, "dur": 2, "args": {{"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": {value}}}}}]}}"#
            );
            let e = parse(text.as_bytes()).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "event 0 (cuda_profiler_range \"sgemm\"): counter smsp__sass_thread_inst_executed_op_ffma_pred_on.sum = {shown} is not a number"
                )
            );
        }
    }

    /// Issue 29: a negative `dur` was reported as missing.
    #[test]
    fn a_negative_duration_is_named() {
        let text =
            r#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -5}]}"#;
        let e = parse(text.as_bytes()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "event 0 (kernel \"k\") has a negative dur (-5 µs); a duration cannot be"
        );
    }

    /// Issue 29: kernel events of another phase than `X` (instants `i`, begin and end `B`/`E`)
    /// were dropped without a word, and a trace of only such kernels was called CPU-only.
    #[test]
    fn kernels_of_other_phases_are_counted() {
        let text = r#"{"traceEvents": [
          {"ph": "i", "cat": "kernel", "name": "k", "ts": 1, "s": "t"},
          {"ph": "B", "cat": "kernel", "name": "k", "ts": 1},
          {"ph": "E", "cat": "kernel", "name": "k", "ts": 3},
          {"ph": "i", "cat": "cpu_instant_event", "name": "x", "ts": 1},
          {"ph": "B", "cat": "mystery", "name": "x", "ts": 1}
        ]}"#;
        let t = parse(text.as_bytes()).unwrap();
        assert!(t.kernels.is_empty());
        let phases: Vec<(&str, u64)> = t
            .other_phases
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect();
        assert_eq!(
            phases,
            [
                ("kernel events of phase \"B\"", 1),
                ("kernel events of phase \"E\"", 1),
                ("kernel events of phase \"i\"", 1)
            ]
        );
        // An event without a category is counted under a name, not an empty one.
        let text = r#"{"traceEvents": [{"ph": "X", "name": "x", "ts": 1, "dur": 1}, {"ph": "X", "cat": "", "name": "y", "ts": 1, "dur": 1}]}"#;
        let t = parse(text.as_bytes()).unwrap();
        assert_eq!(t.unknown.get("(no category)"), Some(&2));
    }

    /// Issue 29: one event with a 1 GiB name took 3 GB. An event (or any top-level value read
    /// whole) larger than [`super::super::window::MAX_VALUE_BYTES`] is refused with its byte
    /// offset, having held no more than that in memory.
    #[test]
    fn an_event_larger_than_the_limit_is_refused_with_its_offset() {
        let limit = super::super::window::MAX_VALUE_BYTES;
        let head = r#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1}, {"ph": "X", "cat": "kernel", "name": ""#;
        let offset = head.rfind('{').unwrap();
        let mut text = head.as_bytes().to_vec();
        text.resize(text.len() + limit + 10, b'a');
        text.extend_from_slice(br#"", "ts": 1, "dur": 1}]}"#);
        let e = parse(&text[..]).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "line 1, byte offset {offset}: a value of more than {} MiB (an event, or a top-level value read whole); no torch.profiler event is this large, so it is refused rather than held in memory",
                limit >> 20
            )
        );
        // Just under the limit: read.
        let mut text = head.as_bytes().to_vec();
        text.resize(text.len() + limit - 200, b'a');
        text.extend_from_slice(br#"", "ts": 1, "dur": 1}]}"#);
        assert_eq!(parse(&text[..]).unwrap().kernels.len(), 2);
    }
}
