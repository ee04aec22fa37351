//! The byte window the reader streams a trace through: about a megabyte at a time, a byte scan
//! finding where each value ends so that serde_json reads one event's slice at a time, and line
//! and column of an error counted over the whole text.

use std::io::Read;

use super::error::TraceError;

/// The bytes that open or close a container or a string: what [`Input::value_len`] looks for.
pub(super) const STRUCTURAL: [bool; 256] = {
    let mut t = [false; 256];
    t[b'"' as usize] = true;
    t[b'{' as usize] = true;
    t[b'}' as usize] = true;
    t[b'[' as usize] = true;
    t[b']' as usize] = true;
    t
};

/// How much is read from the reader at a time.
pub(super) const CHUNK: usize = 1 << 20;

/// The largest value read whole (one event, or a top-level value such as `deviceProperties`):
/// 16 MiB. torch.profiler's largest events (an operator's recorded inputs over thousands of
/// tensors, a long call stack) are a few hundred kilobytes; a larger one is refused with its
/// byte offset, so that the window, and the memory of a trace's reading, stay bounded by about
/// this much whatever the input.
pub const MAX_VALUE_BYTES: usize = 16 << 20;

/// A window over the reader: `buf()[pos..]` is not yet consumed. Bytes before `pos` are dropped
/// when more are read, after counting their lines for error positions.
pub(super) struct Input<R> {
    pub(super) reader: R,
    /// The window's memory, zeroed once; `storage[buf]` holds what was read.
    pub(super) storage: Vec<u8>,
    pub(super) buf: std::ops::Range<usize>,
    pub(super) pos: usize,
    pub(super) eof: bool,
    /// 1-based line of `buf[0]`.
    pub(super) line: usize,
    /// Bytes before `buf[0]` on its line.
    pub(super) column: usize,
    /// Bytes before `buf[0]` in the whole text.
    pub(super) offset: u64,
}

impl<R: Read> Input<R> {
    pub(super) fn new(reader: R) -> Self {
        Input {
            reader,
            storage: vec![0; CHUNK],
            buf: 0..0,
            pos: 0,
            eof: false,
            line: 1,
            column: 0,
            offset: 0,
        }
    }

    /// What was read and not dropped.
    pub(super) fn data(&self) -> &[u8] {
        &self.storage[self.buf.clone()]
    }

    /// Reads more, keeping `buf[pos..]` (moved to the front). False at the end of the input.
    pub(super) fn fill(&mut self) -> Result<bool, TraceError> {
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
            self.offset += self.pos as u64;
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
    pub(super) fn peek(&mut self) -> Result<Option<u8>, TraceError> {
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
    /// much as it needs, up to [`MAX_VALUE_BYTES`]. Only its extent is found here; serde_json
    /// checks it when it reads it.
    ///
    /// # Errors
    /// [`TraceError::TooLarge`] for a value longer than [`MAX_VALUE_BYTES`]; a syntax error at
    /// the end of the input.
    pub(super) fn value_len(&mut self) -> Result<usize, TraceError> {
        let len = self.extent()?;
        self.within_limit(len)?;
        Ok(len)
    }

    /// [`Self::value_len`] without the last check: the window stops growing past the limit.
    fn extent(&mut self) -> Result<usize, TraceError> {
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
                self.within_limit(i)?;
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
            self.within_limit(i)?;
            if !self.fill()? {
                return Err(self.error(i, "EOF while parsing a value"));
            }
        }
    }

    /// Refuses a value at `pos` that already spans more than [`MAX_VALUE_BYTES`].
    fn within_limit(&self, len: usize) -> Result<(), TraceError> {
        if len <= MAX_VALUE_BYTES {
            return Ok(());
        }
        Err(TraceError::TooLarge {
            line: self.position(0).0,
            offset: self.offset + self.pos as u64,
            limit_mib: MAX_VALUE_BYTES >> 20,
        })
    }

    /// Deserializes `buf[pos..pos + len]` (borrowing its strings), errors placed in the text.
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

    /// 1-based line, and bytes before it on that line, of `buf[pos + i]`.
    pub(super) fn position(&self, i: usize) -> (usize, usize) {
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
    pub(super) fn error(&self, i: usize, message: &str) -> TraceError {
        let (line, column) = self.position(i);
        TraceError::Json {
            line,
            column: column + 1,
            message: message.to_string(),
        }
    }
}
