//! SYNTHETIC torch.profiler (Kineto) traces made by repeating a real trace's events, for the
//! in-browser import benchmark (`tests/bench/import.rs`).
//!
//! The copies are real events, but the trace they make was never recorded: it is SYNTHETIC, and
//! is written to a stream (never held whole), into a temporary folder, never under
//! `tests/fixtures/`. The top-level fields (`deviceProperties`, `distributedInfo`, …) and the
//! metadata events (`"ph": "M"`: process and thread names) are written once; every other event
//! is written once per copy, copy `c` with
//!
//! - its time stamp `ts` moved by `c × (span + 1 ms)`, where the span runs from the trace's first
//!   time stamp to its last event's end, so that the copies follow one another and never overlap;
//! - each identifier that links events moved by `c × stride`, where `stride` is one more than the
//!   largest such identifier in the trace: `args.correlation` and `args["External id"]` (how
//!   the import links a kernel to its launch call and the call to its operator), the flow
//!   events' `id`, `args["Sequence number"]` (an operator to its autograd node), `args["Ev
//!   Idx"]`, `args["Python id"]` and `args["Python parent id"]`. One stride for all keeps every
//!   equality between them (older Kineto writes the correlation id as `External id`); negative
//!   values (none) are left as they are. Thread and process ids are kept: the copies run on the
//!   same threads, one after another.
//!
//! So a trace of `k` copies imports into exactly `k` times the kernels of the trace, with `k`
//! times its summed kernel time (the unit test below checks it on the real shapes trace).

use std::io::{self, Read, Write};

use serde_json::{Map, Value};

use crate::synthetic_trace::Counting;

/// The `args` keys that hold identifiers linking events.
const ARG_IDS: [&str; 6] = [
    "External id",
    "correlation",
    "Sequence number",
    "Ev Idx",
    "Python id",
    "Python parent id",
];

/// Time between two copies, in the trace's unit of time (Kineto: µs): 1 ms.
const GAP: f64 = 1_000.0;

/// A trace read once, ready to be written `k` times over.
#[derive(Debug, Clone)]
pub struct Repeater {
    /// The top-level fields other than `traceEvents`, in the order read.
    top: Vec<(String, Value)>,
    /// The metadata events (`"ph": "M"`), written once.
    meta: Vec<Value>,
    /// The other events, written once per copy.
    events: Vec<Value>,
    /// How far each copy's time stamps move from the one before.
    pub shift: f64,
    /// How far each copy's identifiers move from the one before.
    pub stride: i64,
}

/// What [`Repeater::write`] wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Written {
    /// Copies of the trace's events.
    pub copies: u64,
    /// Bytes of JSON.
    pub bytes: u64,
    /// Events in `traceEvents`.
    pub events: u64,
}

/// An integer's value, when it is one (serde_json keeps integers apart from floats).
fn integer(v: &Value) -> Option<i64> {
    v.as_i64()
}

impl Repeater {
    /// Reads a trace (JSON text, or gzip of it) whose top level is an object with
    /// `traceEvents`.
    ///
    /// # Errors
    /// What is wrong with it, as text.
    pub fn read(mut r: impl Read) -> Result<Self, String> {
        let mut raw = Vec::new();
        r.read_to_end(&mut raw).map_err(|e| e.to_string())?;
        if raw.starts_with(&[0x1f, 0x8b]) {
            let mut text = Vec::new();
            flate2::read::MultiGzDecoder::new(&raw[..])
                .read_to_end(&mut text)
                .map_err(|e| format!("gzip: {e}"))?;
            raw = text;
        }
        let doc: Map<String, Value> =
            serde_json::from_slice(&raw).map_err(|e| format!("not a trace object: {e}"))?;
        let mut top = Vec::new();
        let mut all = None;
        for (k, v) in doc {
            if k == "traceEvents" {
                all = Some(v);
            } else {
                top.push((k, v));
            }
        }
        let Some(Value::Array(all)) = all else {
            return Err("no traceEvents array".into());
        };
        let (meta, events): (Vec<Value>, Vec<Value>) =
            all.into_iter().partition(|e| e["ph"] == "M");
        let (mut first, mut last) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut largest: i64 = 0;
        for e in &events {
            if let Some(ts) = e["ts"].as_f64() {
                first = first.min(ts);
                last = last.max(ts + e["dur"].as_f64().unwrap_or(0.0));
            }
            let ids = ARG_IDS
                .iter()
                .filter_map(|k| e["args"].get(*k))
                .chain(e.get("id"));
            for id in ids {
                if let Some(i) = integer(id) {
                    largest = largest.max(i);
                }
            }
        }
        if !first.is_finite() {
            return Err("no event has a time stamp".into());
        }
        Ok(Repeater {
            top,
            meta,
            events,
            shift: (last - first).ceil() + GAP,
            stride: largest + 1,
        })
    }

    /// Events in one copy (the metadata events aside).
    pub fn events_per_copy(&self) -> usize {
        self.events.len()
    }

    /// Event `e` of copy `c`.
    fn copy_of(&self, e: &Value, c: u64) -> Value {
        let mut e = e.clone();
        if c == 0 {
            return e;
        }
        #[allow(clippy::cast_possible_wrap)]
        let c = c as i64;
        #[allow(clippy::cast_precision_loss)]
        let dt = self.shift * c as f64;
        let moved = |v: &mut Value, by: i64| {
            if let Some(i) = integer(v).filter(|i| *i >= 0) {
                *v = Value::from(i + by);
            }
        };
        if let Some(ts) = e.get_mut("ts") {
            if let Some(i) = integer(ts) {
                #[allow(clippy::cast_possible_truncation)]
                let dt = dt as i64; // `shift` is a whole number
                *ts = Value::from(i + dt);
            } else if let Some(f) = ts.as_f64() {
                *ts = Value::from(f + dt);
            }
        }
        if let Some(id) = e.get_mut("id") {
            moved(id, c * self.stride);
        }
        if let Some(args) = e.get_mut("args").and_then(Value::as_object_mut) {
            for k in ARG_IDS {
                if let Some(v) = args.get_mut(k) {
                    moved(v, c * self.stride);
                }
            }
        }
        e
    }

    /// The bytes copy `c` of the events takes as [`Repeater::write`] writes it (later copies
    /// take more: their identifiers and time stamps have more digits).
    pub fn bytes_of_copy(&self, c: u64) -> u64 {
        let mut w = Counting {
            inner: io::sink(),
            bytes: 0,
        };
        for e in &self.events {
            // Writing into a sink cannot fail; the separator is two bytes.
            let _ = serde_json::to_writer(&mut w, &self.copy_of(e, c));
            w.bytes += 2;
        }
        w.bytes
    }

    /// How many copies make a trace of about `target` bytes (at least one): sized by the copy
    /// halfway through a first guess.
    pub fn copies_for(&self, target: u64) -> u64 {
        let guess = target / self.bytes_of_copy(0).max(1);
        let per = self.bytes_of_copy(guess / 2).max(1);
        ((target + per / 2) / per).max(1)
    }

    /// Writes the trace with `copies` copies of its events into `w`, streamed.
    ///
    /// # Errors
    /// The writer's.
    pub fn write<W: Write>(&self, copies: u64, w: W) -> io::Result<Written> {
        let mut w = Counting { inner: w, bytes: 0 };
        w.write_all(b"{")?;
        for (k, v) in &self.top {
            serde_json::to_writer(&mut w, k)?;
            w.write_all(b": ")?;
            serde_json::to_writer(&mut w, v)?;
            w.write_all(b", ")?;
        }
        w.write_all(b"\"traceEvents\": [\n")?;
        let mut events = 0u64;
        let mut first = true;
        let mut one = |w: &mut Counting<W>, e: &Value| -> io::Result<()> {
            if !first {
                w.write_all(b",\n")?;
            }
            first = false;
            events += 1;
            serde_json::to_writer(w, e).map_err(io::Error::from)
        };
        for e in &self.meta {
            one(&mut w, e)?;
        }
        for c in 0..copies {
            for e in &self.events {
                one(&mut w, &self.copy_of(e, c))?;
            }
        }
        w.write_all(b"\n]}\n")?;
        w.flush()?;
        Ok(Written {
            copies,
            bytes: w.bytes,
            events,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_import::trace::{self, ImportOptions};

    /// Kernels and their summed time, seconds, of a trace's import.
    fn imported(text: &[u8]) -> (usize, f64, usize) {
        let t = trace::parse(text).unwrap();
        let imp = trace::import(&t, &ImportOptions::default()).unwrap();
        (imp.kernels.len(), imp.stats.time_s, imp.stats.linked)
    }

    #[test]
    fn copies_of_the_real_shapes_trace_import_into_as_many_times_its_kernels() {
        let gz =
            std::fs::read(crate::fixtures().join("traces/sampled-rank-0-shapes.json.gz")).unwrap();
        let r = Repeater::read(&gz[..]).unwrap();
        let mut one = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut one)
            .unwrap();
        let (kernels, time, linked) = imported(&one);
        assert_eq!(kernels, 1154);
        let mut three = Vec::new();
        let w = r.write(3, &mut three).unwrap();
        assert_eq!(w.bytes, three.len() as u64);
        assert_eq!(w.copies, 3);
        let (k3, t3, l3) = imported(&three);
        assert_eq!(k3, 3 * kernels);
        assert_eq!(l3, 3 * linked);
        assert!((t3 - 3.0 * time).abs() <= 1e-9 * t3, "{t3} vs 3 × {time}");
        // The size asked for: about that many copies.
        assert_eq!(r.copies_for(3 * r.bytes_of_copy(1)), 3);
    }

    #[test]
    fn times_and_ids_move_per_copy_and_the_rest_is_kept() {
        let text = br#"{"schemaVersion": 1, "deviceProperties": [{"id": 0}], "traceEvents": [
            {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "ts": 5, "args": {"name": "p"}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 10, "dur": 4, "args": {"External id": 7, "correlation": 7}},
            {"ph": "s", "id": 7, "pid": 1, "tid": 2, "ts": 10, "cat": "ac2g", "name": "ac2g"},
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 20.5, "dur": 30, "args": {"correlation": 7, "Sequence number": -1}}
        ]}"#;
        let r = Repeater::read(&text[..]).unwrap();
        // From 10 to 50.5: a span of 41 µs (rounded up), and the gap.
        assert_eq!(r.shift, 41.0 + GAP);
        assert_eq!(r.stride, 8);
        let mut out = Vec::new();
        let w = r.write(2, &mut out).unwrap();
        assert_eq!(w.events, 1 + 2 * 3);
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["schemaVersion"], 1);
        assert_eq!(v["deviceProperties"][0]["id"], 0);
        let ev = v["traceEvents"].as_array().unwrap();
        assert_eq!(ev[0]["ts"], 5);
        assert_eq!(ev[1], ev_of(text, 1));
        assert_eq!(ev[4]["ts"], 10 + 1041);
        assert_eq!(ev[4]["args"]["External id"], 15);
        assert_eq!(ev[4]["args"]["correlation"], 15);
        assert_eq!(ev[5]["id"], 15);
        assert_eq!(ev[5]["tid"], 2);
        assert_eq!(ev[6]["ts"], 20.5 + 1041.0);
        assert_eq!(ev[6]["args"]["correlation"], 15);
        assert_eq!(ev[6]["args"]["Sequence number"], -1);
        assert_eq!(ev[6]["dur"], 30);
    }

    fn ev_of(text: &[u8], i: usize) -> Value {
        let v: Value = serde_json::from_slice(text).unwrap();
        v["traceEvents"][i].clone()
    }
}
