//! Which kernel of the baseline each kernel of the current run is: by hand, by the same name,
//! else by a name that differs only in precision or in numbers, where the launch counts agree.
//!
//! The rules, in order (each on what the earlier ones left):
//!
//! 1. **By hand** ([`ManualPair`]): what a person paired (or kept apart) wins.
//! 2. **Exact**: the same full name (one hash map of the baseline's names).
//! 3. Only for kernels ([`GroupBy::Kernel`]: operators and modules match by their key alone), and
//!    only where the launch counts agree (within [`LAUNCH_RATIO`]) and exactly one candidate on
//!    each side does:
//!    - **Precision**: the same name once precision words are set aside ([`normalise`]:
//!      `implicit_convolve_sgemm<float, …>` and `<__half, …>`; `_fp16` suffixes);
//!    - **Similar**: the same kernel family (the short name, precision aside) and the same
//!      identifiers in the template and parameter lists, numbers aside (other tile sizes:
//!      `implicit_convolve_sgemm<float, float, 128, 6, 7, …>` and `<__half, __half, 512, 6, 8,
//!      …>`), the evidence `roofline info` and the viewer show as "similar name".
//! 4. What the names suggest but the evidence does not support is left apart and reported as a
//!    [`Doubt`]: a launch count that disagrees (a 1-launch half-precision variant against the
//!    61-launch FP32 kernel), other identifiers (`vectorized_elementwise_kernel<copy>` against
//!    `<relu>`), or one of several candidates. A person can pair such kernels by hand.
//!
//! Cost: one hash of each name for rule 2; rules 3 and 4 normalise only the kernels left
//! unmatched and bucket them by hashed keys (no comparison of every pair), so that ten thousand
//! kernels against ten thousand stay within the viewer's compare budget.

use rustc_hash::FxHashMap;

use crate::analysis::Analysed;
use crate::analysis::group::GroupBy;
use crate::bundle::Kernel;

/// Launch counts agree when the larger is at most this many times the smaller: 61 against 60
/// agree, 1 against 61 (or 2 against 3) do not.
pub const LAUNCH_RATIO: f64 = 1.25;

/// How a current kernel was paired with its baseline kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Match {
    /// The same full name (for operators and modules, the same key).
    Exact,
    /// The same name but for precision words (`float` → `__half`, an `_fp16` suffix); launch
    /// counts agree.
    Precision,
    /// The same kernel family and identifiers, numbers aside (other tile sizes); launch counts
    /// agree.
    Similar,
    /// Paired by hand.
    Manual,
}

impl Match {
    /// The name used in tables and CSV: `exact`, `precision`, `similar`, `manual`.
    pub fn key(self) -> &'static str {
        match self {
            Match::Exact => "exact",
            Match::Precision => "precision",
            Match::Similar => "similar",
            Match::Manual => "manual",
        }
    }

    /// What the match rests on, for a person.
    pub fn describe(self) -> &'static str {
        match self {
            Match::Exact => "same name",
            Match::Precision => "same name but its precision, launch counts agree",
            Match::Similar => "similar name (other numbers in its template), launch counts agree",
            Match::Manual => "paired by hand",
        }
    }
}

/// A pairing by hand, by full names (operator or module names when grouped): `current` is
/// paired with `baseline`, or with nothing when `baseline` is `None` (kept apart from what the
/// rules would pair it with).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ManualPair {
    /// The current run's kernel.
    pub current: String,
    /// Its baseline kernel; `None`: none.
    pub baseline: Option<String>,
}

/// A pair the names suggest but the evidence does not support: left apart, and said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doubt {
    /// The current kernel (index into `current.kernels`).
    pub current: usize,
    /// The baseline kernel (index into `baseline.kernels`).
    pub baseline: usize,
    /// Why they were not paired (`1 launch here, 61 in the baseline`).
    pub reason: String,
}

/// The matching of two runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Pairing {
    /// For each kernel of the current run (`current.kernels`), its kernel in the baseline.
    pub pairs: Vec<Option<usize>>,
    /// For each paired current kernel, what the pair rests on.
    pub quality: Vec<Option<Match>>,
    /// The doubtful pairs, left apart.
    pub doubts: Vec<Doubt>,
}

/// Matches the kernels of `current` with those of `baseline` by the rules of this module,
/// `manual` first.
pub fn pairing_with(current: &Analysed, baseline: &Analysed, manual: &[ManualPair]) -> Pairing {
    let (cur, base) = (&current.kernels[..], &baseline.kernels[..]);
    let mut by_name: FxHashMap<&str, usize> =
        FxHashMap::with_capacity_and_hasher(base.len(), Default::default());
    for (i, k) in base.iter().enumerate() {
        by_name.entry(k.name.as_str()).or_insert(i);
    }
    let mut p = Pairing {
        pairs: vec![None; cur.len()],
        quality: vec![None; cur.len()],
        doubts: Vec::new(),
    };
    let mut taken = vec![false; base.len()];
    // Kernels a person decided about: no rule touches them.
    let mut decided = vec![false; cur.len()];
    if !manual.is_empty() {
        let mut cur_by_name: FxHashMap<&str, usize> = FxHashMap::default();
        for (i, k) in cur.iter().enumerate() {
            cur_by_name.entry(k.name.as_str()).or_insert(i);
        }
        for m in manual {
            let Some(&c) = cur_by_name.get(m.current.as_str()) else {
                continue;
            };
            if decided[c] {
                continue;
            }
            decided[c] = true;
            if let Some(&b) = m.baseline.as_deref().and_then(|n| by_name.get(n))
                && !taken[b]
            {
                taken[b] = true;
                p.pairs[c] = Some(b);
                p.quality[c] = Some(Match::Manual);
            }
        }
    }
    for (c, k) in cur.iter().enumerate() {
        if decided[c] {
            continue;
        }
        if let Some(&b) = by_name.get(k.name.as_str())
            && !taken[b]
        {
            taken[b] = true;
            p.pairs[c] = Some(b);
            p.quality[c] = Some(Match::Exact);
        }
    }
    if GroupBy::of(cur) != GroupBy::Kernel || GroupBy::of(base) != GroupBy::Kernel {
        return p;
    }
    let left_c: Vec<usize> = (0..cur.len())
        .filter(|&c| !decided[c] && p.pairs[c].is_none())
        .collect();
    let left_b: Vec<usize> = (0..base.len()).filter(|&b| !taken[b]).collect();
    if left_c.is_empty() || left_b.is_empty() {
        return p;
    }
    let keys_c: Vec<Keys> = left_c.iter().map(|&c| Keys::of(&cur[c])).collect();
    let keys_b: Vec<Keys> = left_b.iter().map(|&b| Keys::of(&base[b])).collect();
    let mut free_c = vec![true; left_c.len()];
    let mut free_b = vec![true; left_b.len()];
    let launches = |c: usize, b: usize| (cur[left_c[c]].launches, base[left_b[b]].launches);
    // Rule 3: pairs whose launch counts agree, by the closer key first.
    for (tier, quality) in [
        (Tier::Normalised, Match::Precision),
        (Tier::Similar, Match::Similar),
    ] {
        for (cs, bs) in buckets(&keys_c, &keys_b, &free_c, &free_b, tier) {
            for (c, b) in unique_agreeing(&cs, &bs, launches) {
                free_c[c] = false;
                free_b[b] = false;
                p.pairs[left_c[c]] = Some(left_b[b]);
                p.quality[left_c[c]] = Some(quality);
            }
        }
    }
    // Rule 4: what is left and still looks alike, said, not paired.
    for tier in [Tier::Normalised, Tier::Similar, Tier::Family] {
        for (cs, bs) in buckets(&keys_c, &keys_b, &free_c, &free_b, tier) {
            let other_identifiers = |c: usize, b: usize| keys_c[c].similar != keys_b[b].similar;
            for (c, b, reason) in doubts(&cs, &bs, launches, other_identifiers) {
                free_c[c] = false;
                free_b[b] = false;
                p.doubts.push(Doubt {
                    current: left_c[c],
                    baseline: left_b[b],
                    reason,
                });
            }
        }
    }
    p
}

/// The keys a kernel's name is matched by when its full name finds no partner.
struct Keys {
    /// The full name with precision words set aside ([`normalise`]).
    normalised: String,
    /// The family: the short name, precision tokens aside.
    family: String,
    /// The family and the identifiers of the name (numbers, precision words, keywords and
    /// namespaces aside), sorted.
    similar: String,
}

impl Keys {
    fn of(k: &Kernel) -> Self {
        let normalised = normalise(&k.name);
        let family = strip_precision_tokens(&crate::analysis::names::shorten(&k.name)).into_owned();
        let similar = format!("{family}|{}", identifiers(&normalised, &family).join(","));
        Keys {
            normalised,
            family,
            similar,
        }
    }

    fn get(&self, tier: Tier) -> &str {
        match tier {
            Tier::Normalised => &self.normalised,
            Tier::Similar => &self.similar,
            Tier::Family => &self.family,
        }
    }
}

/// How close two names are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tier {
    /// The same [`normalise`]d name.
    Normalised,
    /// The same family and identifiers.
    Similar,
    /// The same family.
    Family,
}

/// The free kernels grouped by their key of `tier` (indices into the left-over lists), groups
/// with kernels on both sides only, in the order of their first current kernel.
fn buckets(
    keys_c: &[Keys],
    keys_b: &[Keys],
    free_c: &[bool],
    free_b: &[bool],
    tier: Tier,
) -> Vec<(Vec<usize>, Vec<usize>)> {
    let mut at: FxHashMap<&str, usize> = FxHashMap::default();
    let mut groups: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
    for (c, k) in keys_c.iter().enumerate().filter(|(c, _)| free_c[*c]) {
        let g = *at.entry(k.get(tier)).or_insert_with(|| {
            groups.push((Vec::new(), Vec::new()));
            groups.len() - 1
        });
        groups[g].0.push(c);
    }
    for (b, k) in keys_b.iter().enumerate().filter(|(b, _)| free_b[*b]) {
        if let Some(&g) = at.get(k.get(tier)) {
            groups[g].1.push(b);
        }
    }
    groups.retain(|(c, b)| !c.is_empty() && !b.is_empty());
    groups
}

/// Whether two launch counts agree ([`LAUNCH_RATIO`]).
pub fn launches_agree(a: u64, b: u64) -> bool {
    let (lo, hi) = (a.min(b), a.max(b));
    // Launch counts are far below 2^53.
    #[allow(clippy::cast_precision_loss)]
    let agree = lo > 0 && hi as f64 <= lo as f64 * LAUNCH_RATIO;
    agree
}

/// Largest group whose every pair is weighed (larger groups pair nothing by launch counts: which
/// kernel is which, the names cannot say).
const MAX_GROUP: usize = 64;

/// The pairs of a group whose launch counts agree with exactly one kernel on the other side
/// each way.
fn unique_agreeing(
    cs: &[usize],
    bs: &[usize],
    launches: impl Fn(usize, usize) -> (u64, u64),
) -> Vec<(usize, usize)> {
    if cs.len() > MAX_GROUP || bs.len() > MAX_GROUP {
        return Vec::new();
    }
    let agree = |c: usize, b: usize| {
        let (x, y) = launches(c, b);
        launches_agree(x, y)
    };
    cs.iter()
        .filter_map(|&c| {
            let mut with = bs.iter().filter(|&&b| agree(c, b));
            let b = *with.next()?;
            (with.next().is_none() && cs.iter().filter(|&&o| agree(o, b)).count() == 1)
                .then_some((c, b))
        })
        .collect()
}

/// The doubtful pairs a group of a few kernels suggests: the two whose launch counts are
/// closest, then the next two of those left, and so on, each with why it is doubtful.
fn doubts(
    cs: &[usize],
    bs: &[usize],
    launches: impl Fn(usize, usize) -> (u64, u64),
    other_identifiers: impl Fn(usize, usize) -> bool,
) -> Vec<(usize, usize, String)> {
    const FEW: usize = 8;
    if cs.len() > FEW || bs.len() > FEW {
        return Vec::new();
    }
    let closeness = |c: usize, b: usize| {
        let (x, y) = launches(c, b);
        // Launch counts are far below 2^53.
        #[allow(clippy::cast_precision_loss)]
        let r = ((x.max(1) as f64) / (y.max(1) as f64)).ln().abs();
        r
    };
    let (mut used_c, mut used_b) = (Vec::new(), Vec::new());
    let mut out = Vec::new();
    // The closest pair of those left, each time (a few kernels a side: no sort needed).
    while let Some((c, b)) = cs
        .iter()
        .filter(|c| !used_c.contains(*c))
        .flat_map(|&c| {
            bs.iter()
                .filter(|b| !used_b.contains(*b))
                .map(move |&b| (c, b))
        })
        .min_by(|x, y| closeness(x.0, x.1).total_cmp(&closeness(y.0, y.1)))
    {
        used_c.push(c);
        used_b.push(b);
        let (lc, lb) = launches(c, b);
        let plural = |n: u64| if n == 1 { "launch" } else { "launches" };
        let mut why = Vec::new();
        if !launches_agree(lc, lb) {
            why.push(format!("{lc} {} here, {lb} in the baseline", plural(lc)));
        }
        if other_identifiers(c, b) {
            why.push("other identifiers in its name".to_string());
        }
        if cs.len() > 1 || bs.len() > 1 {
            why.push(format!(
                "one of {} kernels of this name here and {} in the baseline",
                cs.len(),
                bs.len()
            ));
        }
        if why.is_empty() {
            why.push("the names alone do not say".into());
        }
        out.push((c, b, why.join("; ")));
    }
    out
}

/// Words that name a precision: set aside when names are compared.
const PRECISION_WORDS: [&str; 22] = [
    "float",
    "double",
    "half",
    "__half",
    "__half2",
    "half2",
    "Half",
    "BFloat16",
    "bfloat16",
    "__nv_bfloat16",
    "__nv_bfloat162",
    "nv_bfloat16",
    "fp16",
    "fp32",
    "fp64",
    "bf16",
    "tf32",
    "f16",
    "f32",
    "f64",
    "float2",
    "float4",
];

/// Tokens of an identifier (between underscores) that name a precision: `_fp16` in
/// `bn_fw_tr_1C11_singleread_fp16`.
const PRECISION_TOKENS: [&str; 9] = [
    "fp16", "fp32", "fp64", "bf16", "tf32", "f16", "f32", "half", "fp8",
];

/// An identifier without its precision tokens (`bn_fw_tr_1C11_singleread_fp16` →
/// `bn_fw_tr_1C11_singleread`); unchanged when that would leave nothing.
fn strip_precision_tokens(word: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    let is_precision = |t: &str| PRECISION_TOKENS.iter().any(|p| p.eq_ignore_ascii_case(t));
    let lead = word.len() - word.trim_start_matches('_').len();
    if !word.contains('_') || !word[lead..].split('_').any(is_precision) {
        return Cow::Borrowed(word);
    }
    let kept: Vec<&str> = word[lead..]
        .split('_')
        .filter(|t| !is_precision(t))
        .collect();
    if kept.iter().all(|t| t.is_empty()) {
        return Cow::Borrowed(word);
    }
    Cow::Owned(format!("{}{}", &word[..lead], kept.join("_")))
}

/// A full name with its precision set aside: each precision word becomes `T`, each identifier
/// loses its precision tokens; everything else is kept as it is.
pub fn normalise(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while !rest.is_empty() {
        let start = rest
            .find(|c: char| c.is_ascii_alphanumeric() || c == '_')
            .unwrap_or(rest.len());
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if len == 0 {
            break;
        }
        let (w, after) = rest.split_at(len);
        if PRECISION_WORDS.contains(&w) {
            out.push('T');
        } else {
            out.push_str(&strip_precision_tokens(w));
        }
        rest = after;
    }
    out
}

/// Words that say nothing about what a kernel does.
const PLAIN_WORDS: [&str; 18] = [
    "void", "const", "unsigned", "signed", "int", "long", "short", "char", "bool", "true", "false",
    "size_t", "struct", "class", "typename", "operator", "lambda", "T",
];

/// The identifiers of a normalised name, sorted, each once: its words that start with a letter
/// or an underscore, are no namespace or class qualifier (followed by `::`), no plain C++ word
/// and not the family itself.
fn identifiers<'a>(normalised: &'a str, family: &str) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    let mut rest = normalised;
    while !rest.is_empty() {
        let start = rest
            .find(|c: char| c.is_ascii_alphanumeric() || c == '_')
            .unwrap_or(rest.len());
        rest = &rest[start..];
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if len == 0 {
            break;
        }
        let (w, after) = rest.split_at(len);
        rest = after;
        if w.starts_with(|c: char| c.is_ascii_digit())
            || after.starts_with("::")
            || PLAIN_WORDS.contains(&w)
            || w == family
        {
            continue;
        }
        out.push(w);
    }
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lose_their_precision_and_keep_everything_else() {
        assert_eq!(
            normalise("void k<float, 512, true>(float const*, __half*)"),
            "void k<T, 512, true>(T const*, T*)"
        );
        assert_eq!(
            normalise("void cudnn::detail::bn_fw_tr_1C11_singleread_fp16<512, 1, 2, 0>(int)"),
            "void cudnn::detail::bn_fw_tr_1C11_singleread<512, 1, 2, 0>(int)"
        );
        assert_eq!(
            strip_precision_tokens("volta_fp16_s884cudnn_fp16_256x128_ldg8"),
            "volta_s884cudnn_256x128_ldg8"
        );
        assert_eq!(strip_precision_tokens("__half"), "__half");
        assert_eq!(strip_precision_tokens("fp16"), "fp16");
        let n = normalise(
            "void at::native::vectorized_elementwise_kernel<4, at::native::relu<c10::Half>>(int)",
        );
        assert_eq!(
            identifiers(&n, "vectorized_elementwise_kernel"),
            ["relu"],
            "{n}"
        );
    }

    #[test]
    fn launch_counts_agree_within_a_quarter() {
        assert!(launches_agree(60, 61));
        assert!(launches_agree(3, 3));
        assert!(launches_agree(4, 5));
        assert!(!launches_agree(1, 61));
        assert!(!launches_agree(2, 3));
        assert!(!launches_agree(0, 1));
    }
}
