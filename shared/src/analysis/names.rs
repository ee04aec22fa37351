//! Short display names for demangled CUDA kernel names.
//!
//! `void at::native::reduce_kernel<512, 1, ReduceOp<float>>(ReduceOp<float>)` becomes
//! `reduce_kernel`: the return type, namespaces, template arguments and parameter list go.
//!
//! Shortened names collide (PyTorch's `vectorized_elementwise_kernel` is one template behind
//! many operations): [`disambiguate`] adds to each colliding name the first word of its full
//! name that no other kernel of that short name has (`vectorized_elementwise_kernel
//! [mul_kernel_cuda]`), else a number in the order of the full names (`#2`).

use rustc_hash::FxHashMap;

use crate::bundle::Kernel;

impl Kernel {
    /// The name to show on charts: `display_name`, else a shortened `name` ([`shorten`]).
    pub fn short_name(&self) -> String {
        match &self.display_name {
            Some(d) if !d.is_empty() => d.clone(),
            _ => shorten(&self.name),
        }
    }
}

/// `s` cut to at most `n` characters, the last of them an ellipsis when anything was cut: what
/// chart labels, the CLI's SVG and error messages show of a name too long for them.
pub fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Shortens a demangled kernel name to its bare identifier; returns the input when it has no
/// recognisable structure.
pub fn shorten(full: &str) -> String {
    // Keep only depth-0 characters (drop everything inside <...> and (...)), remembering where
    // the first depth-0 parameter list starts so that the signature ends there. The text
    // "(anonymous namespace)" is a namespace, not a parameter list.
    let mut out = String::with_capacity(full.len());
    let mut depth = 0usize;
    let mut rest = full;
    while let Some(c) = rest.chars().next() {
        if depth == 0 && rest.starts_with("(anonymous namespace)") {
            rest = &rest["(anonymous namespace)".len()..];
            continue;
        }
        match c {
            '<' | '(' | '[' => {
                if depth == 0 && c == '(' && !out.trim().is_empty() {
                    break;
                }
                depth += 1;
            }
            '>' | ')' | ']' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
        rest = &rest[c.len_utf8()..];
    }
    let last_word = out.split_whitespace().last().unwrap_or("");
    let ident = last_word.rsplit("::").find(|s| !s.is_empty()).unwrap_or("");
    if ident.is_empty() {
        full.trim().to_string()
    } else {
        ident.to_string()
    }
}

/// The words (identifiers and numbers) of a name, each once, most telling first: identifiers
/// in order of appearance, then numbers, then namespace and class qualifiers (a word followed
/// by `::`) and C++ keywords.
fn words(full: &str) -> Vec<&str> {
    const PLAIN: [&str; 7] = [
        "void",
        "const",
        "operator",
        "lambda",
        "anonymous",
        "namespace",
        "unsigned",
    ];
    let mut tiers: [Vec<&str>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    let mut rest = full;
    while !rest.is_empty() {
        let start = rest
            .find(|c: char| c.is_alphanumeric() || c == '_')
            .unwrap_or(rest.len());
        rest = &rest[start..];
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if len == 0 {
            break;
        }
        let (w, after) = rest.split_at(len);
        rest = after;
        let tier = if after.starts_with("::") || PLAIN.contains(&w) {
            2
        } else if w.starts_with(|c: char| c.is_ascii_digit()) {
            1
        } else {
            0
        };
        tiers[tier].push(w);
    }
    let mut out: Vec<&str> = Vec::new();
    for w in tiers.into_iter().flatten() {
        if !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

/// The words that tell entry `i` apart from every other entry of its group: one word no other
/// has if there is one, else up to three words chosen greedily, each ruling out at least one
/// other entry. `None` when no such set exists. `entries_with[w]` is the number of entries of the
/// group whose words hold `w`: a word of entry `i` held by one entry only is held by no other,
/// which a lookup tells instead of a scan of the group (the scan made a group of n colliding
/// names cost n² set searches: seconds for the 2,500-name groups of a 10,000-kernel run).
fn telling_words<'a>(
    i: usize,
    word_sets: &[Vec<&'a str>],
    skip: &[&str],
    entries_with: &FxHashMap<&str, usize>,
) -> Option<Vec<&'a str>> {
    let own: Vec<&str> = word_sets[i]
        .iter()
        .copied()
        .filter(|w| !skip.contains(w))
        .collect();
    if let Some(w) = own.iter().find(|w| entries_with.get(*w) == Some(&1)) {
        return Some(vec![*w]);
    }
    let mut left: Vec<&Vec<&str>> = word_sets
        .iter()
        .enumerate()
        .filter(|(j, _)| *j != i)
        .map(|(_, o)| o)
        .collect();
    let mut chosen = Vec::new();
    for w in own {
        if left.is_empty() || chosen.len() == 3 {
            break;
        }
        let before = left.len();
        left.retain(|o| o.contains(&w));
        if left.len() < before {
            chosen.push(w);
        }
    }
    left.is_empty().then_some(chosen)
}

/// The display names of `kernels` (by index): each kernel's short name
/// ([`Kernel::short_name`](crate::bundle::Kernel::short_name)), told apart with
/// [`disambiguate`] where short names collide. What the table, the charts and `roofline info`
/// show.
pub fn display_names(kernels: &[Kernel]) -> Vec<String> {
    let entries: Vec<(String, &str)> = kernels
        .iter()
        .map(|k| (k.short_name(), k.name.as_str()))
        .collect();
    disambiguate(&entries)
}

/// Display names that never collide: `entries` are (display name, full name) pairs. Entries
/// whose display names are equal but full names differ get, in brackets, the first words of
/// their full name that tell them apart from the others of the group (`telling_words`:
/// identifiers before numbers before namespaces); entries without such words get `#n`,
/// numbered in the order of their full names. Entries with the same full name (one kernel on
/// several devices) keep the same display name. Stable: the result depends on the set of
/// names, not on their order.
pub fn disambiguate(entries: &[(String, &str)]) -> Vec<String> {
    // Hash maps of indices and sorted lists, not ordered maps of strings: with 10,000 kernels
    // behind four templates, ordered maps spent their time comparing long common prefixes.
    let mut out: Vec<String> = entries.iter().map(|(d, _)| d.clone()).collect();
    let mut groups: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    for (i, (d, _)) in entries.iter().enumerate() {
        groups.entry(d.as_str()).or_default().push(i);
    }
    for (short, members) in &groups {
        if members.len() < 2 {
            continue;
        }
        let mut fulls: Vec<&str> = members.iter().map(|&i| entries[i].1).collect();
        fulls.sort_unstable();
        fulls.dedup();
        if fulls.len() < 2 {
            continue;
        }
        let word_sets: Vec<Vec<&str>> = fulls.iter().map(|f| words(f)).collect();
        let short_words = words(short);
        // `words` lists each word of an entry once.
        let mut entries_with: FxHashMap<&str, usize> = FxHashMap::default();
        for w in word_sets.iter().flatten() {
            *entries_with.entry(w).or_default() += 1;
        }
        let mut n = 0;
        let renamed: FxHashMap<&str, String> = (0..fulls.len())
            .map(|i| {
                let name = match telling_words(i, &word_sets, &short_words, &entries_with) {
                    Some(ws) => format!("{short} [{}]", ws.join(", ")),
                    None => {
                        n += 1;
                        format!("{short} #{n}")
                    }
                };
                (fulls[i], name)
            })
            .collect();
        for &i in members {
            if let Some(r) = renamed.get(entries[i].1) {
                out[i].clone_from(r);
            }
        }
    }
    // A bracketed or numbered name may still equal another entry's name: number what is left.
    let mut fixes: Vec<(usize, usize)> = Vec::new();
    {
        let mut seen: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
        for (i, o) in out.iter().enumerate() {
            seen.entry(o.as_str()).or_default().push(i);
        }
        for members in seen.values().filter(|m| m.len() > 1) {
            let mut fulls: Vec<&str> = members.iter().map(|&i| entries[i].1).collect();
            fulls.sort_unstable();
            fulls.dedup();
            if fulls.len() > 1 {
                for &i in members {
                    let k = fulls.binary_search(&entries[i].1).unwrap_or(0);
                    fixes.push((i, k + 1));
                }
            }
        }
    }
    for (i, k) in fixes {
        out[i].push_str(&format!(" #{k}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{disambiguate, shorten, truncate};

    #[test]
    fn truncate_keeps_at_most_n_characters_with_an_ellipsis() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
        assert_eq!(truncate("abcd", 4), "abcd");
        assert_eq!(truncate("µµµµµ", 3), "µµ…");
    }

    #[test]
    fn colliding_short_names_are_told_apart() {
        let mul = "void at::native::modern::vectorized_elementwise_kernel<4, at::native::mul_kernel_cuda(at::TensorIterator&)::{lambda()#1}, at::detail::Array<char*, 3> >(int, at::native::mul_kernel_cuda(at::TensorIterator&)::{lambda()#1}, at::detail::Array<char*, 3>)";
        let add = "void at::native::modern::vectorized_elementwise_kernel<4, at::native::add_kernel_cuda(at::TensorIterator&, c10::Scalar)::{lambda()#1}, at::detail::Array<char*, 3> >(int, at::native::add_kernel_cuda(at::TensorIterator&, c10::Scalar)::{lambda()#1}, at::detail::Array<char*, 3>)";
        let twin_a = "void k<1>(int, double)";
        let twin_b = "void k<1>(int)";
        let twin_c = "void k<1>(int, float)";
        let twin_d = "void k<1>(char, float)";
        let entries: Vec<(String, &str)> =
            [mul, add, "volta_sgemm", twin_a, twin_b, twin_c, twin_d, mul]
                .iter()
                .map(|f| (shorten(f), *f))
                .collect();
        let names = disambiguate(&entries);
        assert_eq!(
            names,
            vec![
                "vectorized_elementwise_kernel [mul_kernel_cuda]",
                "vectorized_elementwise_kernel [add_kernel_cuda]",
                "volta_sgemm",
                "k [double]",
                // `k<1>(int)` has no word that the others lack.
                "k #1",
                // Neither `int` nor `float` alone, but both together.
                "k [int, float]",
                "k [char]",
                // The same full name again (another device): the same display name.
                "vectorized_elementwise_kernel [mul_kernel_cuda]",
            ]
        );
        // The order of the entries does not change anyone's name.
        let mut rev = entries.clone();
        rev.reverse();
        let mut again = disambiguate(&rev);
        again.reverse();
        assert_eq!(again, names);
    }

    #[test]
    fn strips_signature_templates_and_namespaces() {
        assert_eq!(
            shorten(
                "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>(at::native::ReduceOp<float>)"
            ),
            "reduce_kernel"
        );
        assert_eq!(
            shorten("cudnn::gemm::computeOffsetsKernel(cudnn::gemm::ComputeOffsetsParams)"),
            "computeOffsetsKernel"
        );
        assert_eq!(
            shorten(
                "void at::native::(anonymous namespace)::cunn_SpatialSoftMaxForward<float, float>(float*, float const*)"
            ),
            "cunn_SpatialSoftMaxForward"
        );
        assert_eq!(
            shorten("volta_fp16_sgemm_fp16_128x32_nt"),
            "volta_fp16_sgemm_fp16_128x32_nt"
        );
    }

    /// Thousands of names behind one template (PyTorch's element-wise kernels): each gets the
    /// word only it has. (Counting words per group keeps this linear; it was a search of the
    /// group per entry.)
    #[test]
    fn large_groups_are_told_apart_by_their_own_word() {
        let fulls: Vec<String> = (0..3000)
            .map(|i| format!("void ew<4, at::native::op_{i}<float>, Array<char*, 3> >(int)"))
            .chain(["void ew<1>(int)".to_string(), "void ew<2>(int)".to_string()])
            .collect();
        let entries: Vec<(String, &str)> = fulls.iter().map(|f| (shorten(f), f.as_str())).collect();
        let names = disambiguate(&entries);
        assert_eq!(names[0], "ew [op_0]");
        assert_eq!(names[2999], "ew [op_2999]");
        // `op_1` is one word, so the number `1` is `ew<1>`'s alone.
        assert_eq!(names[3000], "ew [1]");
        assert_eq!(names[3001], "ew [2]");
        let distinct: std::collections::BTreeSet<&String> = names.iter().collect();
        assert_eq!(distinct.len(), names.len());
    }

    #[test]
    fn degenerate_inputs_do_not_panic() {
        assert_eq!(shorten(""), "");
        assert_eq!(shorten("((("), "(((");
        assert_eq!(shorten(">>>"), ">>>");
        assert_eq!(shorten("::"), "::");
        assert_eq!(shorten("ü<ö>(ä)"), "ü");
    }
}
