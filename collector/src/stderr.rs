//! Standard error: the one place the collector writes its lines there ([`message`]), a leaf that
//! the CLI's modules use, and the GPU library's messages through [`crate::progress::Terminal`]
//! (`print!` and `eprint!` are denied by lint in the crate; standard output and files are
//! [`crate::io`]'s).

use std::io::Write;

/// Writes one line to standard error, best effort: a closed or full standard error is ignored
/// (there is nowhere left to report its failure), and it never panics.
pub fn message(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err
        .write_all(line.as_bytes())
        .and_then(|()| err.write_all(b"\n"))
        .and_then(|()| err.flush());
}
