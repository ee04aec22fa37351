//! The SASS audit's table (`kernels/sass-audit.tsv`): its format, read and written, and the
//! refusals it gives. The audit (the `roofline-sass-audit` crate) writes it; this crate embeds it
//! and reads it ([`crate::audit_refusal`]), so that the collector never times a kernel the audit
//! failed on the device's architecture. A leaf: it names kernels by their entry points and knows
//! neither the catalogue nor the audit.
//!
//! Format: lines starting with `#` are comments; `@toolkit NAME DESCRIPTION` names a toolkit and
//! its tool versions; `@unsupported TOOLKIT ARCH WHY` records an architecture the toolkit cannot
//! compile for; every other line is a [`Row`] with the nine fields of [`HEADER`], tab-separated.

use std::fmt::Write as _;
use std::sync::OnceLock;

/// The audit's verdict on one kernel for one architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verdict {
    /// The compiled kernel executes what its formula counts.
    Pass,
    /// It does not: the reason says how. The collector does not time it on that architecture.
    Fail,
    /// The architecture lacks the kernel's hardware: the entry point is an empty stub, never timed.
    Absent,
}

impl Verdict {
    /// `pass`, `FAIL` or `absent`, as the tables write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "FAIL",
            Verdict::Absent => "absent",
        }
    }

    /// Reads [`Verdict::as_str`] back.
    pub fn parse(s: &str) -> Option<Verdict> {
        match s {
            "pass" => Some(Verdict::Pass),
            "FAIL" => Some(Verdict::Fail),
            "absent" => Some(Verdict::Absent),
            _ => None,
        }
    }
}

/// The column names of a row.
pub const HEADER: [&str; 9] = [
    "toolkit",
    "arch",
    "kernel",
    "verdict",
    "registers",
    "spill_stores",
    "spill_loads",
    "census",
    "reason",
];

/// One kernel audited with one toolkit for one architecture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The toolkit's name (`cuda-12.9`).
    pub toolkit: String,
    /// `sm_XY`.
    pub arch: String,
    /// The entry point.
    pub kernel: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Registers per thread.
    pub registers: u32,
    /// Spill stores, bytes per thread.
    pub spill_stores: u32,
    /// Spill loads, bytes per thread.
    pub spill_loads: u32,
    /// Key instructions per iteration of the timed loop.
    pub census: String,
    /// Why it failed or is absent.
    pub reason: String,
}

/// Every row and toolkit line of a table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Table {
    /// `(name, description)` of each toolkit, in order.
    pub toolkits: Vec<(String, String)>,
    /// `(toolkit, arch, why)` for each architecture a toolkit cannot compile for.
    pub unsupported: Vec<(String, String, String)>,
    /// The rows.
    pub rows: Vec<Row>,
}

/// A table line that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("SASS audit table, line {line}: {message}")]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Tabs and newlines inside a field would break the format: replaced by spaces.
fn clean(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

impl Table {
    /// Parses a table.
    ///
    /// # Errors
    /// [`ParseError`] naming the line: a wrong number of fields, an unknown verdict or a count
    /// that is not a number.
    pub fn parse(text: &str) -> Result<Table, ParseError> {
        let mut t = Table::default();
        for (n, line) in text.lines().enumerate() {
            let err = |message: String| ParseError {
                line: n + 1,
                message,
            };
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let f: Vec<&str> = line.split('\t').collect();
            match f[0] {
                "@toolkit" if f.len() == 3 => t.toolkits.push((f[1].into(), f[2].into())),
                "@unsupported" if f.len() == 4 => {
                    t.unsupported.push((f[1].into(), f[2].into(), f[3].into()));
                }
                _ if f.len() == HEADER.len() => {
                    let num = |i: usize| {
                        f[i].parse::<u32>()
                            .map_err(|_| err(format!("{} {:?} is not a number", HEADER[i], f[i])))
                    };
                    t.rows.push(Row {
                        toolkit: f[0].into(),
                        arch: f[1].into(),
                        kernel: f[2].into(),
                        verdict: Verdict::parse(f[3])
                            .ok_or_else(|| err(format!("unknown verdict {:?}", f[3])))?,
                        registers: num(4)?,
                        spill_stores: num(5)?,
                        spill_loads: num(6)?,
                        census: f[7].into(),
                        reason: f[8].into(),
                    });
                }
                _ => {
                    return Err(err(format!(
                        "{} tab-separated fields; a row has {}",
                        f.len(),
                        HEADER.len()
                    )));
                }
            }
        }
        Ok(t)
    }

    /// Appends another table's toolkits and rows.
    pub fn extend(&mut self, other: Table) {
        self.toolkits.extend(other.toolkits);
        self.unsupported.extend(other.unsupported);
        self.rows.extend(other.rows);
    }

    /// The table as text (what [`Table::parse`] reads).
    pub fn to_tsv(&self) -> String {
        let mut s = String::from(
            "# SASS audit of kernels/*.cu, written by `cargo xtask sass` (do not edit by hand);\n\
             # read by roofline_kernels::audit_refusal. Format: kernels/src/audit_table.rs.\n",
        );
        let _ = writeln!(s, "# {}", HEADER.join("\t"));
        for (name, desc) in &self.toolkits {
            let _ = writeln!(s, "@toolkit\t{}\t{}", clean(name), clean(desc));
        }
        for (tk, arch, why) in &self.unsupported {
            let _ = writeln!(
                s,
                "@unsupported\t{}\t{}\t{}",
                clean(tk),
                clean(arch),
                clean(why)
            );
        }
        for r in &self.rows {
            let _ = writeln!(
                s,
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                clean(&r.toolkit),
                clean(&r.arch),
                clean(&r.kernel),
                r.verdict.as_str(),
                r.registers,
                r.spill_stores,
                r.spill_loads,
                clean(&r.census),
                clean(&r.reason)
            );
        }
        s
    }

    /// Why the collector must not time the entry point `kernel` on `arch`: the first row for
    /// them, over every toolkit, that failed or is absent. `None` when every toolkit passed it,
    /// or none audited that architecture.
    pub fn refusal(&self, kernel: &str, arch: &str) -> Option<String> {
        let rows = || {
            self.rows
                .iter()
                .filter(|r| r.arch == arch && r.kernel == kernel)
        };
        if let Some(r) = rows().find(|r| r.verdict == Verdict::Fail) {
            return Some(format!(
                "the SASS audit failed {} on {arch} ({}): {}",
                r.kernel, r.toolkit, r.reason
            ));
        }
        rows()
            .find(|r| r.verdict == Verdict::Absent)
            .map(|r| format!("{} is not built for {arch}: {}", r.kernel, r.reason))
    }
}

/// The table the audit last wrote, embedded in the binary (`cargo xtask sass` writes it).
pub const EMBEDDED: &str = include_str!("../sass-audit.tsv");

/// [`EMBEDDED`], parsed once.
///
/// # Errors
/// The parse error, as text (unreachable while the unit tests parse the embedded table).
pub fn embedded() -> Result<&'static Table, &'static str> {
    static TABLE: OnceLock<Result<Table, String>> = OnceLock::new();
    TABLE
        .get_or_init(|| Table::parse(EMBEDDED).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lines_are_errors_naming_the_line() {
        let e = Table::parse("# c\na\tb\n").expect_err("two fields");
        assert_eq!(e.line, 2);
        let e = Table::parse("t\ta\tk\tmaybe\t1\t0\t0\tc\tr\n").expect_err("verdict");
        assert!(e.message.contains("maybe"));
        let e = Table::parse("t\ta\tk\tpass\tx\t0\t0\tc\tr\n").expect_err("number");
        assert!(e.message.contains("registers"));
    }
}
