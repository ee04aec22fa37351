//! A scan of JSON text up to a byte offset, with object keys and array indices on a stack: the
//! JSON path of what is read there, and where the top-level version and a kernel's `bytes` start,
//! at far less than a parse costs.

/// The byte offset of a 1-based line and column (serde_json counts columns in bytes).
pub(super) fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let mut start = 0;
    if line > 1 {
        match text.match_indices('\n').nth(line - 2) {
            Some((i, _)) => start = i + 1,
            None => return text.len(),
        }
    }
    (start + column).min(text.len())
}

/// What a scan of the text up to a byte offset found.
pub(super) struct Scan {
    /// The JSON path of the value or key being read there (`$.kernels[3].time.total_s`).
    pub(super) path: String,
    /// Where the top-level `schema_version`'s value starts, if it came before the offset.
    pub(super) version_at: Option<usize>,
    /// Where the value of `$.kernels[i].bytes` starts, if the offset is inside it.
    pub(super) kernel_bytes_at: Option<usize>,
}

/// The JSON path of the value or key being read at byte `offset` (see [`Scan`]).
pub(super) fn path_at(text: &str, offset: usize) -> String {
    scan(text, offset).path
}

/// Scans the text up to `offset` with object keys and array indices on a stack: no allocation
/// per token, so that it costs far less than parsing.
pub(super) fn scan(text: &str, offset: usize) -> Scan {
    enum Frame {
        Object {
            /// The current key's byte range.
            key: Option<(usize, usize)>,
            expect_key: bool,
            /// Where the current key's value starts.
            value_at: usize,
        },
        Array {
            index: usize,
        },
    }
    let bytes = text.as_bytes();
    let end = offset.min(bytes.len());
    let mut stack: Vec<Frame> = Vec::new();
    let mut version_at = None;
    let mut i = 0;
    while i < end {
        match bytes[i] {
            b'{' => stack.push(Frame::Object {
                key: None,
                expect_key: true,
                value_at: 0,
            }),
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b':' => {
                let depth = stack.len();
                if let Some(Frame::Object {
                    key,
                    expect_key,
                    value_at,
                }) = stack.last_mut()
                {
                    *expect_key = false;
                    *value_at = i + 1;
                    if depth == 1 && key.is_some_and(|(a, b)| &text[a..b] == "schema_version") {
                        version_at = Some(i + 1);
                    }
                }
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object { expect_key, .. }) => *expect_key = true,
                Some(Frame::Array { index }) => *index += 1,
                None => {}
            },
            b'"' => {
                let from = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Object {
                    key,
                    expect_key: true,
                    ..
                }) = stack.last_mut()
                {
                    *key = Some((from, i.min(text.len())));
                }
            }
            _ => {}
        }
        i += 1;
    }
    let key_text = |k: Option<(usize, usize)>| k.and_then(|(a, b)| text.get(a..b));
    let kernel_bytes_at = match stack.as_slice() {
        [
            Frame::Object { key: k0, .. },
            Frame::Array { .. },
            Frame::Object {
                key: k2, value_at, ..
            },
            ..,
        ] if key_text(*k0) == Some("kernels") && key_text(*k2) == Some("bytes") => Some(*value_at),
        _ => None,
    };
    let mut path = String::from("$");
    for f in &stack {
        match f {
            Frame::Object { key, .. } => {
                if let Some(k) = key_text(*key) {
                    path.push('.');
                    path.push_str(k);
                }
            }
            Frame::Array { index } => path.push_str(&format!("[{index}]")),
        }
    }
    Scan {
        path,
        version_at,
        kernel_bytes_at,
    }
}

/// Reads the one JSON value that starts at `at` (whatever follows it).
pub(super) fn value_at<'a, T: serde::Deserialize<'a>>(text: &'a str, at: usize) -> Option<T> {
    let mut de = serde_json::Deserializer::from_str(text.get(at..)?);
    T::deserialize(&mut de).ok()
}
