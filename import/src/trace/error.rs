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
