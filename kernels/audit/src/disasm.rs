//! `nvdisasm -c` output, parsed: the functions of a cubin, their instructions and labels, and
//! the loops that backward branches close.
//!
//! The format is NVIDIA's SASS listing (CUDA Binary Utilities, "nvdisasm"): a function starts at
//! its `.text.NAME:` label; each instruction is `/*offset*/ [@predicate] OPCODE operands ;`, where
//! the opcode carries its modifiers after dots (`LDG.E.EF.128`); local labels are `.L_x_N:`, and
//! branches name them as `` `(.L_x_N) ``.

use std::collections::BTreeMap;

/// One SASS instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    /// Byte offset in the function.
    pub offset: u32,
    /// The guard predicate (`@!P1`), if any.
    pub predicate: Option<String>,
    /// The opcode with its modifiers (`HMMA.16816.F32.BF16`).
    pub opcode: String,
    /// The operands, as printed.
    pub operands: String,
    /// The label a branch goes to.
    pub target: Option<String>,
}

impl Instruction {
    /// The opcode without modifiers (`HMMA`).
    pub fn base(&self) -> &str {
        self.opcode.split('.').next().unwrap_or("")
    }

    /// The modifiers after the opcode (`16816`, `F32`, `BF16`).
    pub fn modifiers(&self) -> impl Iterator<Item = &str> {
        self.opcode.split('.').skip(1)
    }

    /// Whether `modifier` is one of its modifiers.
    pub fn has(&self, modifier: &str) -> bool {
        self.modifiers().any(|m| m == modifier)
    }

    /// Whether two consecutive modifiers read `first.second` (`STRONG.GPU`).
    pub fn has_pair(&self, first: &str, second: &str) -> bool {
        let m: Vec<&str> = self.modifiers().collect();
        m.windows(2).any(|w| w[0] == first && w[1] == second)
    }
}

/// One function (kernel) of the listing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Function {
    /// Its name (the entry point).
    pub name: String,
    /// Its instructions, in address order.
    pub instructions: Vec<Instruction>,
    /// Label → the offset of the instruction it names.
    pub labels: BTreeMap<String, u32>,
}

/// A loop: the instructions from a backward branch's target up to the branch, inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Loop {
    /// Offset of the first instruction (the branch target).
    pub start: u32,
    /// Offset of the backward branch.
    pub end: u32,
}

impl Loop {
    /// Whether `other` lies inside this loop and is not this loop.
    pub fn contains(self, other: Loop) -> bool {
        self != other && self.start <= other.start && other.end <= self.end
    }
}

impl Function {
    /// The loops, one per backward branch (a branch to its own address or before), sorted.
    pub fn loops(&self) -> Vec<Loop> {
        let mut loops: Vec<Loop> = self
            .instructions
            .iter()
            .filter(|i| i.base() == "BRA")
            .filter_map(|i| {
                let start = *self.labels.get(i.target.as_deref()?)?;
                (start <= i.offset).then_some(Loop {
                    start,
                    end: i.offset,
                })
            })
            .collect();
        loops.sort();
        loops.dedup();
        loops
    }

    /// The instructions of a loop.
    pub fn body(&self, l: Loop) -> impl Iterator<Item = &Instruction> {
        self.instructions
            .iter()
            .filter(move |i| l.start <= i.offset && i.offset <= l.end)
    }
}

/// A line of the listing that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("nvdisasm listing, line {line}: {message}: {text:?}")]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: &'static str,
    /// The line.
    pub text: String,
}

/// Parses an `nvdisasm -c` listing into its functions, in listing order.
///
/// # Errors
/// [`ParseError`] for an instruction line without an opcode or a bad offset, or an instruction
/// outside any function.
pub fn parse(text: &str) -> Result<Vec<Function>, ParseError> {
    let mut functions: Vec<Function> = Vec::new();
    let mut pending: Vec<String> = Vec::new();
    let err = |line: usize, message, text: &str| ParseError {
        line: line + 1,
        message,
        text: text.to_string(),
    };
    let close = |f: Option<&mut Function>, pending: &mut Vec<String>| {
        if let Some(f) = f {
            let end = f.instructions.last().map_or(0, |i| i.offset + 16);
            for l in pending.drain(..) {
                f.labels.insert(l, end);
            }
        }
        pending.clear();
    };
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if let Some(name) = line
            .strip_prefix(".text.")
            .and_then(|r| r.strip_suffix(':'))
        {
            close(functions.last_mut(), &mut pending);
            functions.push(Function {
                name: name.to_string(),
                ..Function::default()
            });
        } else if (line.starts_with(".L") || line.starts_with('$'))
            && line.ends_with(':')
            && !line.contains(' ')
        {
            // Local labels, and the subroutines the compiler appends to a kernel
            // (`$__internal_0_$__cuda_sm20_div_s64:`), whose code counts as the kernel's.
            pending.push(line.trim_end_matches(':').to_string());
        } else if let Some(rest) = line.strip_prefix("/*") {
            let (offset, rest) = rest
                .split_once("*/")
                .ok_or_else(|| err(n, "an offset without its closing */", raw))?;
            let offset = u32::from_str_radix(offset.trim(), 16)
                .map_err(|_| err(n, "an offset that is not hexadecimal", raw))?;
            // Strip the terminator and any trailing comment (the encoding, with -hex).
            let body = rest.split(';').next().unwrap_or("").trim();
            let mut words = body.splitn(2, char::is_whitespace);
            let mut first = words.next().unwrap_or("");
            let mut tail = words.next().unwrap_or("").trim();
            let predicate = if first.starts_with('@') {
                let p = first.to_string();
                let mut w = tail.splitn(2, char::is_whitespace);
                first = w.next().unwrap_or("");
                tail = w.next().unwrap_or("").trim();
                Some(p)
            } else {
                None
            };
            if first.is_empty() || !first.starts_with(|c: char| c.is_ascii_uppercase()) {
                return Err(err(n, "an instruction without an opcode", raw));
            }
            let target = tail
                .split_once("`(")
                .and_then(|(_, t)| t.split_once(')'))
                .map(|(t, _)| t.to_string());
            let f = functions
                .last_mut()
                .ok_or_else(|| err(n, "an instruction before any .text.NAME: label", raw))?;
            for l in pending.drain(..) {
                f.labels.insert(l, offset);
            }
            f.instructions.push(Instruction {
                offset,
                predicate,
                opcode: first.to_string(),
                operands: tail.to_string(),
                target,
            });
        }
    }
    close(functions.last_mut(), &mut pending);
    Ok(functions)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTING: &str = "\
//--------------------- .text.k             --------------------------
\t.section\t.text.k,\"ax\",@progbits
k:
.text.k:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/              @!P1 BRA `(.L_x_0) ;
.L_x_1:
        /*0020*/                   FFMA R2, R2, R3, R4 ;
        /*0030*/                   LDG.E.128.STRONG.GPU R8, desc[UR4][R8.64] ;
        /*0040*/              @!P1 BRA `(.L_x_1) ;
.L_x_0:
        /*0050*/                   EXIT ;
.L_x_2:
        /*0060*/                   BRA `(.L_x_2);
.L_x_9:
";

    #[test]
    fn parses_instructions_labels_and_loops() {
        let f = parse(LISTING).expect("parses");
        assert_eq!(f.len(), 1);
        let k = &f[0];
        assert_eq!(k.name, "k");
        assert_eq!(k.instructions.len(), 7);
        assert_eq!(k.instructions[1].predicate.as_deref(), Some("@!P1"));
        assert_eq!(k.instructions[1].target.as_deref(), Some(".L_x_0"));
        assert_eq!(k.instructions[3].base(), "LDG");
        assert!(k.instructions[3].has_pair("STRONG", "GPU"));
        assert!(k.instructions[3].has("128"));
        assert_eq!(k.labels[".L_x_9"], 0x70);
        assert_eq!(
            k.loops(),
            vec![
                Loop {
                    start: 0x20,
                    end: 0x40
                },
                Loop {
                    start: 0x60,
                    end: 0x60
                }
            ]
        );
        let body: Vec<_> = k.body(k.loops()[0]).map(|i| i.base()).collect();
        assert_eq!(body, ["FFMA", "LDG", "BRA"]);
    }

    #[test]
    fn a_line_without_an_opcode_is_an_error_naming_its_line() {
        let e = parse(".text.k:\n        /*0000*/     ;\n").expect_err("bad line");
        assert_eq!(e.line, 2);
        let e = parse("        /*0000*/  EXIT ;\n").expect_err("no function");
        assert!(e.to_string().contains("before any"));
        let e = parse(".text.k:\n        /*00zz*/  EXIT ;\n").expect_err("bad offset");
        assert!(e.to_string().contains("hexadecimal"));
    }
}
