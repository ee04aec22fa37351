//! `ptxas -v` output, parsed: registers, stack frame and spills per function.
//!
//! The lines read (CUDA Compiler Driver NVCC, "Printing code generation statistics"):
//! `Compiling entry function 'NAME' for 'sm_XY'`, then `N bytes stack frame, N bytes spill stores,
//! N bytes spill loads`, then `Used N registers, …`.

use std::collections::BTreeMap;

/// What `ptxas -v` says about one function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Resources {
    /// Registers per thread.
    pub registers: u32,
    /// Bytes of stack frame (local memory) per thread.
    pub stack_frame: u32,
    /// Bytes spilled to local memory per thread.
    pub spill_stores: u32,
    /// Bytes reloaded from spills per thread.
    pub spill_loads: u32,
}

impl Resources {
    /// Whether any register was spilled.
    pub fn spills(&self) -> bool {
        self.spill_stores > 0 || self.spill_loads > 0
    }
}

/// A `ptxas -v` report that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("ptxas -v output, line {line}: {message}: {text:?}")]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: &'static str,
    /// The line.
    pub text: String,
}

/// The number just before `label` in `line` (`"45 registers"` → 45).
fn number_before(line: &str, label: &str) -> Option<u32> {
    let i = line.find(label)?;
    line[..i].split_whitespace().last()?.parse().ok()
}

/// Parses `ptxas -v` output into each entry function's resources.
///
/// # Errors
/// [`ParseError`] when a function's statistics line carries no number where one is expected, or
/// statistics appear before any `Compiling entry function` line.
pub fn parse(text: &str) -> Result<BTreeMap<String, Resources>, ParseError> {
    let mut out = BTreeMap::new();
    let mut current: Option<String> = None;
    for (n, line) in text.lines().enumerate() {
        let err = |message| ParseError {
            line: n + 1,
            message,
            text: line.to_string(),
        };
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let name = rest
                .split('\'')
                .next()
                .ok_or_else(|| err("no function name"))?;
            current = Some(name.to_string());
            out.insert(name.to_string(), Resources::default());
            continue;
        }
        let stats = line.contains("bytes stack frame");
        let used = line.contains("Used ") && line.contains(" registers");
        if !stats && !used {
            continue;
        }
        let name = current
            .as_ref()
            .ok_or_else(|| err("statistics before any entry function"))?;
        let r = out.entry(name.clone()).or_default();
        if stats {
            r.stack_frame =
                number_before(line, "bytes stack frame").ok_or_else(|| err("no stack frame"))?;
            r.spill_stores =
                number_before(line, "bytes spill stores").ok_or_else(|| err("no spill stores"))?;
            r.spill_loads =
                number_before(line, "bytes spill loads").ok_or_else(|| err("no spill loads"))?;
        } else {
            r.registers =
                number_before(line, "registers").ok_or_else(|| err("no register count"))?;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_registers_and_spills_per_function() {
        let text = "ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'a' for 'sm_70'
ptxas info    : Function properties for a
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 384 bytes cmem[0]
ptxas info    : Compile time = 8.641 ms
ptxas info    : Compiling entry function 'b' for 'sm_90'
ptxas info    : Function properties for b
    24 bytes stack frame, 20 bytes spill stores, 16 bytes spill loads
ptxas info    : Used 255 registers, used 0 barriers
";
        let r = parse(text).expect("parses");
        assert_eq!(r["a"].registers, 32);
        assert!(!r["a"].spills());
        assert_eq!(
            r["b"],
            Resources {
                registers: 255,
                stack_frame: 24,
                spill_stores: 20,
                spill_loads: 16
            }
        );
        assert!(r["b"].spills());
    }

    #[test]
    fn statistics_without_a_function_are_an_error() {
        let e = parse("ptxas info    : Used 3 registers\n").expect_err("no function");
        assert_eq!(e.line, 1);
        let e = parse("ptxas info    : Compiling entry function 'a' for 'sm_90'\n    x bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n")
            .expect_err("bad number");
        assert!(e.to_string().contains("stack frame"));
    }
}
