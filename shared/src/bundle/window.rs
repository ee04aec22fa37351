//! The one byte window through which large JSON documents are streamed: about a megabyte read at
//! a time, a byte scan finding where each value ends, so that serde_json reads one value's slice
//! at a time and the text is never held whole. Line and column of any byte are counted over the
//! whole text, for error messages.
//!
//! Two readers use it: the streamed bundle reader ([`crate::bundle::stream`]) and the torch.profiler
//! trace parser (`roofline_import::trace`).
//!
//! Pure: the caller hands any [`std::io::Read`].

use std::io::Read;

/// The bytes that open or close a container or a string: what [`JsonWindow::value_len`] looks
/// for.
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
pub const CHUNK: usize = 1 << 20;

/// Why [`JsonWindow::value_len`] found no value.
#[derive(Debug)]
pub enum WindowError {
    /// The reader failed.
    Read(std::io::Error),
    /// A value would be longer than the limit asked for; `at` is its first byte's offset in the
    /// whole text.
    TooLarge {
        /// Byte offset of the value in the whole text.
        at: u64,
    },
    /// Not a value where one was expected (`i` bytes after the window's position).
    NotAValue {
        /// Bytes after the position.
        i: usize,
    },
    /// The text ended inside a value (`i` bytes after the window's position).
    Eof {
        /// Bytes after the position.
        i: usize,
    },
}

impl From<std::io::Error> for WindowError {
    fn from(e: std::io::Error) -> Self {
        WindowError::Read(e)
    }
}

/// A window over a reader: `data()[pos..]` is read and not consumed. Bytes before `pos` are
/// dropped when more are read, after counting their lines.
pub struct JsonWindow<R> {
    reader: R,
    /// The window's memory, zeroed once; `storage[..end]` holds what was read.
    storage: Vec<u8>,
    end: usize,
    /// The first byte not consumed.
    pub pos: usize,
    eof: bool,
    /// 1-based line of `storage[0]`.
    line: usize,
    /// Bytes before `storage[0]` on its line.
    column: usize,
    /// Bytes before `storage[0]` in the whole text.
    offset: u64,
}

impl<R: Read> JsonWindow<R> {
    /// A window over `reader`, nothing read yet.
    pub fn new(reader: R) -> Self {
        JsonWindow {
            reader,
            storage: vec![0; CHUNK],
            end: 0,
            pos: 0,
            eof: false,
            line: 1,
            column: 0,
            offset: 0,
        }
    }

    /// What was read and not dropped (`data()[pos..]` is not consumed yet).
    pub fn data(&self) -> &[u8] {
        &self.storage[..self.end]
    }

    /// `len` bytes from `pos`, which [`Self::value_len`] made sure are read.
    pub fn slice(&self, len: usize) -> &[u8] {
        &self.storage[self.pos..self.pos + len]
    }

    /// Reads more, keeping `data()[pos..]` (moved to the front). False at the end of the input.
    ///
    /// # Errors
    /// The reader's.
    pub fn fill(&mut self) -> std::io::Result<bool> {
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
            self.storage.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.storage.len() - self.end < CHUNK / 2 {
            // Only a value longer than the window grows it; the window is zeroed once.
            self.storage.resize(self.end + CHUNK, 0);
        }
        loop {
            match self.reader.read(&mut self.storage[self.end..]) {
                Ok(n) => {
                    self.end += n;
                    if n == 0 {
                        self.eof = true;
                    }
                    return Ok(n > 0);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Skips a UTF-8 byte-order mark at the start.
    ///
    /// # Errors
    /// The reader's.
    pub fn skip_bom(&mut self) -> std::io::Result<()> {
        while self.end - self.pos < 3 && self.fill()? {}
        if self.storage[self.pos..self.end].starts_with(&[0xEF, 0xBB, 0xBF]) {
            self.pos += 3;
        }
        Ok(())
    }

    /// The next byte that is not JSON whitespace, left unconsumed (`pos` moves past the blanks).
    ///
    /// # Errors
    /// The reader's.
    pub fn peek(&mut self) -> std::io::Result<Option<u8>> {
        loop {
            while let Some(&c) = self.storage[..self.end].get(self.pos) {
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
    /// much as it needs, up to `max` bytes. Only its extent is found here; serde_json checks the
    /// value when it reads it.
    ///
    /// # Errors
    /// [`WindowError`]: the reader's error, a value longer than `max`, no value at `pos`, or the
    /// end of the text inside the value.
    pub fn value_len(&mut self, max: usize) -> Result<usize, WindowError> {
        let within = |w: &Self, len: usize| {
            if len <= max {
                Ok(())
            } else {
                Err(WindowError::TooLarge {
                    at: w.offset + w.pos as u64,
                })
            }
        };
        let mut i = 0; // relative to pos: `fill` moves the window
        let (mut depth, mut in_string) = (0usize, false);
        match self.data().get(self.pos) {
            Some(b'{' | b'[') => {}
            Some(b'"') => {
                in_string = true;
                i = 1;
            }
            Some(b',' | b':' | b']' | b'}') | None => return Err(WindowError::NotAValue { i: 0 }),
            Some(_) => loop {
                // A number, true, false or null: up to a delimiter.
                while let Some(&c) = self.data().get(self.pos + i) {
                    if matches!(c, b',' | b']' | b'}' | b' ' | b'\n' | b'\t' | b'\r') {
                        return Ok(i);
                    }
                    i += 1;
                }
                within(self, i)?;
                if !self.fill()? {
                    return Ok(i);
                }
            },
        }
        loop {
            let rest = &self.storage[self.pos + i..self.end];
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
                            return within(self, i).map(|()| i);
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
                                return within(self, i + j + 1).map(|()| i + j + 1);
                            }
                        }
                    }
                    j += 1;
                }
                if in_string {
                    i += j + 1;
                    continue;
                }
                i += rest.len();
            }
            within(self, i)?;
            if !self.fill()? {
                return Err(WindowError::Eof { i });
            }
        }
    }

    /// 1-based line, and bytes before it on that line, of `data()[pos + i]`.
    pub fn position(&self, i: usize) -> (usize, usize) {
        let before = &self.storage[..(self.pos + i).min(self.end)];
        match memchr::memrchr(b'\n', before) {
            Some(last) => (
                self.line + memchr::memchr_iter(b'\n', before).count(),
                before.len() - last - 1,
            ),
            None => (self.line, self.column + before.len()),
        }
    }

    /// The offset in the whole text of `data()[pos]`.
    pub fn offset(&self) -> u64 {
        self.offset + self.pos as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out one byte at a time: every value crosses the window's edge.
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

    /// Every value's extent, however the text arrives: strings with escaped quotes and
    /// brackets, nested containers, scalars before a delimiter or the end.
    #[test]
    fn values_are_found_whole_however_the_text_arrives() {
        let text = "{\"a\": \"x\\\"}]\", \"b\": [1, {\"c\": [true]}], \"d\": -1.5e3}\n 42";
        let values = |r: &mut JsonWindow<&mut dyn Read>| {
            let mut out = Vec::new();
            while r.peek().unwrap().is_some() {
                let len = r.value_len(usize::MAX).unwrap();
                out.push(String::from_utf8(r.slice(len).to_vec()).unwrap());
                r.pos += len;
            }
            out
        };
        let mut whole: &[u8] = text.as_bytes();
        let mut a = JsonWindow::new(&mut whole as &mut dyn Read);
        let mut trickle = Trickle(text.as_bytes());
        let mut b = JsonWindow::new(&mut trickle as &mut dyn Read);
        let (va, vb) = (values(&mut a), values(&mut b));
        assert_eq!(
            va,
            [
                "{\"a\": \"x\\\"}]\", \"b\": [1, {\"c\": [true]}], \"d\": -1.5e3}",
                "42"
            ]
        );
        assert_eq!(va, vb);
        // Line and column of the last value, and its offset.
        let mut w = JsonWindow::new(text.as_bytes());
        assert_eq!(w.peek().unwrap(), Some(b'{'));
        w.pos += w.value_len(usize::MAX).unwrap();
        w.peek().unwrap();
        assert_eq!(w.position(0), (2, 1));
        assert_eq!(w.offset(), text.len() as u64 - 2);
    }

    #[test]
    fn a_value_over_the_limit_or_cut_short_is_refused() {
        let mut w = JsonWindow::new("  [1, 2, 3]".as_bytes());
        w.peek().unwrap();
        assert!(matches!(
            w.value_len(4),
            Err(WindowError::TooLarge { at: 2 })
        ));
        let mut w = JsonWindow::new("[1, [2".as_bytes());
        w.peek().unwrap();
        assert!(matches!(w.value_len(100), Err(WindowError::Eof { .. })));
        let mut w = JsonWindow::new(", 1".as_bytes());
        w.peek().unwrap();
        assert!(matches!(
            w.value_len(100),
            Err(WindowError::NotAValue { i: 0 })
        ));
    }
}
