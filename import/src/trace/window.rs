//! The trace reader's byte window: the model's [`JsonWindow`] (about a megabyte at a time, a byte
//! scan finding where each value ends, line and column counted over the whole text), with its
//! errors as [`TraceError`]s and one value's slice read by serde_json, borrowing its strings.

use std::io::Read;
use std::ops::{Deref, DerefMut};

use roofline_model::bundle::window::{JsonWindow, WindowError};

use super::error::TraceError;

/// The largest value read whole (one event, or a top-level value such as `deviceProperties`):
/// 16 MiB. torch.profiler's largest events (an operator's recorded inputs over thousands of
/// tensors, a long call stack) are a few hundred kilobytes; a larger one is refused with its
/// byte offset, so that the window, and the memory of a trace's reading, stay bounded by about
/// this much whatever the input.
pub const MAX_VALUE_BYTES: usize = 16 << 20;

/// The window a trace is read through (`pos` and the rest of [`JsonWindow`] by `Deref`).
pub(super) struct Input<R>(JsonWindow<R>);

impl<R> Deref for Input<R> {
    type Target = JsonWindow<R>;
    fn deref(&self) -> &JsonWindow<R> {
        &self.0
    }
}

impl<R> DerefMut for Input<R> {
    fn deref_mut(&mut self) -> &mut JsonWindow<R> {
        &mut self.0
    }
}

impl<R: Read> Input<R> {
    pub(super) fn new(reader: R) -> Self {
        Input(JsonWindow::new(reader))
    }

    /// The next byte that is not JSON whitespace, left unconsumed.
    pub(super) fn peek(&mut self) -> Result<Option<u8>, TraceError> {
        self.0.peek().map_err(|e| TraceError::Read(e.to_string()))
    }

    /// The length of the JSON value at `pos`, up to [`MAX_VALUE_BYTES`].
    ///
    /// # Errors
    /// [`TraceError::TooLarge`] for a value longer than [`MAX_VALUE_BYTES`]; a syntax error where
    /// no value starts or the input ends inside one.
    pub(super) fn value_len(&mut self) -> Result<usize, TraceError> {
        self.0.value_len(MAX_VALUE_BYTES).map_err(|e| match e {
            WindowError::Read(e) => TraceError::Read(e.to_string()),
            WindowError::TooLarge { at } => TraceError::TooLarge {
                line: self.position(0).0,
                offset: at,
                limit_mib: MAX_VALUE_BYTES >> 20,
            },
            WindowError::NotAValue { i } => self.error(i, "expected a value"),
            WindowError::Eof { i } => self.error(i, "EOF while parsing a value"),
        })
    }

    /// Deserializes `data()[pos..pos + len]` (borrowing its strings), errors placed in the text.
    pub(super) fn read_slice<T>(
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

    /// A syntax error at `data()[pos + i]`.
    pub(super) fn error(&self, i: usize, message: &str) -> TraceError {
        let (line, column) = self.position(i);
        TraceError::Json {
            line,
            column: column + 1,
            message: message.to_string(),
        }
    }
}
