//! Writing a bundle: pretty JSON, validated first so that the crate never writes what it cannot
//! read, and no `-0.0` (serde_json's pretty formatter but for that).

use super::ReadError;
use super::validate::validate;
use crate::bundle::Bundle;

/// Serializes a bundle to pretty JSON after validating it, so that a bundle this crate writes
/// is always one it reads back.
///
/// # Errors
/// [`ReadError::Invalid`] when the bundle holds impossible figures (NaN, negative, zero time).
pub fn to_json(bundle: &Bundle) -> Result<String, ReadError> {
    use serde::Serialize as _;
    validate(bundle)?;
    let shape = |message: String| ReadError::Shape {
        path: "$".into(),
        line: 0,
        column: 0,
        message,
    };
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, NoNegativeZero::at(0));
    bundle
        .serialize(&mut ser)
        .map_err(|e| shape(e.to_string()))?;
    let mut s = String::from_utf8(out).map_err(|e| shape(e.to_string()))?;
    s.push('\n');
    Ok(s)
}

/// Serializes `value` into `out` as `to_json` writes it `depth` levels deep (a kernel of the
/// top-level `kernels` array is 2 levels deep), without a final line break: the text is the one
/// `to_json`'s would be with every line after the first indented `depth` levels more.
pub(crate) fn pretty_at<T: serde::Serialize + ?Sized, W: std::io::Write>(
    value: &T,
    out: W,
    depth: usize,
) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(out, NoNegativeZero::at(depth));
    value.serialize(&mut ser)
}

/// The formatter [`to_json`] writes with.
pub(crate) fn formatter() -> impl serde_json::ser::Formatter {
    NoNegativeZero::at(0)
}

/// serde_json's pretty layout (two spaces per level, `": "` after a key, an empty array or
/// object on one line), except that `-0.0` is written `0.0` (no output of the toolkit holds a
/// negative zero: an imported `-0` is a zero like any other), starting `depth` levels deep.
struct NoNegativeZero {
    depth: usize,
    has_value: bool,
}

impl NoNegativeZero {
    fn at(depth: usize) -> Self {
        NoNegativeZero {
            depth,
            has_value: false,
        }
    }

    fn line<W: ?Sized + std::io::Write>(&self, w: &mut W, first: bool) -> std::io::Result<()> {
        const SPACES: &[u8; 64] =
            b"                                                                ";
        w.write_all(if first { &b"\n"[..] } else { &b",\n"[..] })?;
        let mut n = 2 * self.depth;
        while n > 0 {
            let k = n.min(SPACES.len());
            w.write_all(&SPACES[..k])?;
            n -= k;
        }
        Ok(())
    }

    fn close<W: ?Sized + std::io::Write>(&mut self, w: &mut W, end: &[u8]) -> std::io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            self.line(w, true)?;
        }
        w.write_all(end)
    }
}

impl serde_json::ser::Formatter for NoNegativeZero {
    fn write_f64<W: ?Sized + std::io::Write>(&mut self, w: &mut W, v: f64) -> std::io::Result<()> {
        // `+ 0.0` turns -0.0 into 0.0 and leaves every other value as it is.
        serde_json::ser::CompactFormatter.write_f64(w, v + 0.0)
    }
    fn write_f32<W: ?Sized + std::io::Write>(&mut self, w: &mut W, v: f32) -> std::io::Result<()> {
        serde_json::ser::CompactFormatter.write_f32(w, v + 0.0)
    }
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(b"[")
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"]")
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.line(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(b"{")
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"}")
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.line(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::read::fixtures::MINIMAL;
    use crate::bundle::read::parse_bundle;

    #[test]
    fn writing_refuses_non_finite_figures() {
        let mut b = parse_bundle(MINIMAL).unwrap();
        b.kernels[0].flops.fp32 = Some(f64::NAN);
        let e = to_json(&b).unwrap_err();
        assert!(
            e.to_string()
                .contains("`$.kernels[0].flops.fp32`: NaN is not a finite number"),
            "{e}"
        );
    }

    #[test]
    fn no_negative_zero_is_ever_written() {
        // An imported `-0` is a valid figure (zero), but the README promises no output holds
        // `-0.0`: the writer writes every zero as `0.0`.
        let mut b = parse_bundle(MINIMAL).unwrap();
        b.kernels[0].bytes.hbm = Some(-0.0);
        b.kernels[0].flops.fp16 = Some(-0.0);
        let json = to_json(&b).unwrap();
        assert!(!json.contains("-0"), "{json}");
        assert!(json.contains("\"hbm\": 0.0"), "{json}");
        // Pretty-printed as before: the same text as serde_json's own for a bundle without -0.
        let plain = parse_bundle(MINIMAL).unwrap();
        let mut expected = serde_json::to_string_pretty(&plain).unwrap();
        expected.push('\n');
        assert_eq!(to_json(&plain).unwrap(), expected);
    }
}
