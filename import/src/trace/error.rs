//! Why a trace could not be read: not JSON, JSON of the wrong shape, or a reader that failed.

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
    /// A value (an event, or a top-level value read whole) beyond the limit on one value.
    #[error(
        "line {line}, byte offset {offset}: a value of more than {limit_mib} MiB (an event, or a top-level value read whole); no torch.profiler event is this large, so it is refused rather than held in memory"
    )]
    TooLarge {
        /// 1-based line of its start.
        line: usize,
        /// Byte offset of its start in the (decompressed) text.
        offset: u64,
        /// The limit, MiB.
        limit_mib: usize,
    },
    /// An event with a negative duration.
    #[error(
        "event {index} ({category} {name:?}) has a negative dur ({dur} µs); a duration cannot be"
    )]
    NegativeDuration {
        /// 0-based position in `traceEvents`.
        index: u64,
        /// Its category.
        category: String,
        /// Its name.
        name: String,
        /// The duration, µs.
        dur: f64,
    },
    /// An event whose duration takes its end past what the trace's clock holds.
    #[error(
        "event {index} ({category} {name:?}) starts at {ts_ns} ns and lasts {dur:e} µs: its end is beyond what a trace's clock holds (2^63 ns, about 292 years)"
    )]
    DurationTooLong {
        /// Its start, ns (as read: a start beyond the clock is held at its end).
        ts_ns: i64,
        /// 0-based position in `traceEvents`.
        index: u64,
        /// Its category.
        category: String,
        /// Its name.
        name: String,
        /// The duration, µs.
        dur: f64,
    },
    /// A profiler range's counter that is not a number.
    #[error(
        "event {index} (cuda_profiler_range {name:?}): counter {metric} = {value} is not a number"
    )]
    BadCounter {
        /// 0-based position in `traceEvents`.
        index: u64,
        /// The range's name.
        name: String,
        /// The metric.
        metric: String,
        /// The value, as JSON shows it (`"12"`), or what it is (`an array`).
        value: String,
    },
    /// A profiler range holding both names of one counter (`smsp__X.sum` and `sm__X.sum`)
    /// with different values.
    #[error(
        "event {index} (cuda_profiler_range {name:?}): {first} = {first_value} but {second} = {second_value}: both name the same counter, and which value holds cannot be told"
    )]
    CounterAliases {
        /// 0-based position in `traceEvents`.
        index: u64,
        /// The range's name.
        name: String,
        /// The first name read.
        first: String,
        /// Its value.
        first_value: f64,
        /// The other name.
        second: String,
        /// Its value.
        second_value: f64,
    },
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
