//! Two runs side by side: "did my change help, and why?"
//!
//! Kernels of a current run and a baseline run (each an [`Analysed`]: aggregated by name and
//! analysed against its own ceilings) are matched by hand, by their full name, else by a name
//! that differs only in precision or in numbers where the launch counts agree ([`matching`]:
//! each pair says what it rests on, a [`Match`]); what the names suggest but the evidence does
//! not support is left apart and flagged ([`Doubt`]), never silently paired. A kernel in both
//! gets its baseline and current time, the difference `Δ = T_current − T_baseline`, the speed-up
//! `T_baseline / T_current` and both binding ceilings; a kernel only in the current run is *new*,
//! one only in the baseline is *gone*. The [`Summary`] adds the times up, by binding ceiling and
//! by the datapath that did most of each kernel's FLOPs (Tensor Cores apart from CUDA cores),
//! each split adding up to the totals, so that a person sees where the time moved (for example
//! from FP32 on CUDA cores to FP16 on Tensor Cores).
//!
//! Entries grouped per PyTorch operator or module ([`crate::analysis::group`]: a torch.profiler import
//! read with `group=op|module`) are matched by their operator (or module) key, exactly: the
//! kernels behind an operator may change between runs (a new GEMM algorithm, a fused kernel)
//! while the operator stays ([`GroupBy`]); given the launches as imported
//! ([`CompareOptions::launches`]), each row lists the kernels its operator launched before and
//! after ([`Launched`]).
//!
//! `crate::chart::overlay::compare_scene` draws one chart (hierarchical or time-based) of the
//! current run with the baseline's points in the same pixel space.
//!
//! Cost: the matching hashes each name once and works on indices from then on; the kernels left
//! unmatched are normalised and bucketed by hashed keys. Ten thousand kernels against ten
//! thousand take a few milliseconds (`cargo bench -p roofline-model --bench compare`).

pub mod matching;

use rustc_hash::FxHashMap;

use crate::analysis::Analysed;
use crate::analysis::KernelAnalysis;
use crate::analysis::group::GroupBy;
use crate::analysis::hierarchical::Bound;
use crate::analysis::si::format_si;
use crate::bundle::{Datapath, Kernel};

pub use matching::{Doubt, LAUNCH_RATIO, ManualPair, Match, Pairing, launches_agree, pairing_with};

/// A speed-up, `before / after`: known when both times are positive and the quotient is finite
/// (1e300 s over 1e-300 s is beyond a double: unknown, never `inf`).
pub fn ratio(before: f64, after: f64) -> Option<f64> {
    (before > 0.0 && after > 0.0)
        .then(|| before / after)
        .filter(|x| x.is_finite() && *x > 0.0)
}

/// Whether a kernel ran in both runs or in one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// In both runs.
    Both,
    /// Only in the current run.
    New,
    /// Only in the baseline.
    Gone,
}

impl Presence {
    /// The name used in tables: `both`, `new`, `gone`.
    pub fn key(self) -> &'static str {
        match self {
            Presence::Both => "both",
            Presence::New => "new",
            Presence::Gone => "gone",
        }
    }
}

/// One kernel in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    /// Run time, seconds (all launches).
    pub time_s: f64,
    /// Launches.
    pub launches: u64,
    /// The binding ceiling of the hierarchical roofline, when known.
    pub bound: Option<Bound>,
    /// The compute roof of its precision mix ([`crate::analysis::hierarchical::HierarchicalBound::roof`]):
    /// what binds when the bound is compute.
    pub roof: Option<Datapath>,
    /// The datapath that did most of its FLOPs (`None` for a kernel without FLOPs).
    pub datapath: Option<Datapath>,
}

impl Side {
    fn of(k: &Kernel, a: &KernelAnalysis) -> Self {
        let h = a.hierarchical.as_ref();
        Side {
            time_s: a.time_s,
            launches: k.launches,
            bound: h.map(|h| h.bound),
            roof: h.and_then(|h| h.roof),
            datapath: main_datapath(k),
        }
    }

    /// The binding ceiling by name (`HBM`, `Tensor FP16`;
    /// [`Bound::ceiling_label`]), when known.
    pub fn ceiling(&self) -> Option<&'static str> {
        self.bound.map(|b| b.ceiling_label(self.roof))
    }

    /// [`Side::ceiling`] as a key (`hbm`, `tensor_fp16`).
    pub fn ceiling_key(&self) -> Option<&'static str> {
        self.bound.map(|b| b.ceiling_key(self.roof))
    }
}

/// The datapath with the most FLOPs of a kernel; without counted FLOPs, the datapath of its
/// analytical F (a torch.profiler import's operator rule); `None` when neither says.
pub fn main_datapath(k: &Kernel) -> Option<Datapath> {
    Datapath::ALL
        .into_iter()
        .filter_map(|d| k.flops.get(d).filter(|f| *f > 0.0).map(|f| (d, f)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(d, _)| d)
        .or_else(|| {
            k.complexity
                .filter(|c| c.flops > 0.0 && k.flops.is_unknown())
                .and_then(|c| c.datapath)
        })
}

/// What a reader of a comparison must know of runs marked incomplete (`Bundle::complete` false:
/// a run stopped early, or an import that kept launches it could not read whole): their totals,
/// and every speed-up against them, cover only what they hold. One line per such run, the
/// baseline first; none when both are complete. The CLI's compare and the viewer's summary say
/// the same words.
pub fn incomplete_words(
    current: &crate::bundle::Bundle,
    baseline: &crate::bundle::Bundle,
) -> Vec<String> {
    [(baseline, "the baseline"), (current, "this run")]
        .into_iter()
        .filter(|(b, _)| !b.complete)
        .map(|(_, which)| {
            format!(
                "{which} is INCOMPLETE (its bundle says so; its notes say what is missing): its totals, and every time and speed-up below, cover only what it holds"
            )
        })
        .collect()
}

/// A datapath as the comparison's summary names it: Tensor Core datapaths by their name
/// (`Tensor FP16`), CUDA-core ones with their cores (`FP16 on CUDA cores`), so that the two
/// kinds of FP16 work are never read as one.
pub fn datapath_label(d: Datapath) -> String {
    if d.is_tensor() {
        d.label().to_string()
    } else {
        format!("{} on CUDA cores", d.label())
    }
}

/// One kernel an operator (or module) launched, in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchedKernel {
    /// Its short name.
    pub name: String,
    /// Its full name.
    pub full_name: String,
    /// Launches.
    pub launches: u64,
    /// Run time, seconds (all launches).
    pub time_s: f64,
}

/// The kernels an operator (or module) launched before and after, largest time first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Launched {
    /// In the baseline.
    pub before: Vec<LaunchedKernel>,
    /// In the current run.
    pub after: Vec<LaunchedKernel>,
}

/// How many of an operator's kernels [`Launched::line`] names on each side.
const LAUNCHED_NAMED: usize = 3;

impl Launched {
    /// One line for a person: `before: a (61×, 4.2 ms), b (…); after: c (60×, 2.6 ms)`, the
    /// `LAUNCHED_NAMED` largest of each side by time, then how many more.
    pub fn line(&self) -> String {
        let list = |ks: &[LaunchedKernel]| {
            if ks.is_empty() {
                return "none".to_string();
            }
            let mut s = ks
                .iter()
                .take(LAUNCHED_NAMED)
                .map(|k| format!("{} ({}×, {})", k.name, k.launches, format_si(k.time_s, "s")))
                .collect::<Vec<_>>()
                .join(", ");
            if ks.len() > LAUNCHED_NAMED {
                s.push_str(&format!(" and {} more", ks.len() - LAUNCHED_NAMED));
            }
            s
        };
        format!(
            "before: {}; after: {}",
            list(&self.before),
            list(&self.after)
        )
    }
}

/// A doubtful counterpart of a row's kernel in the other run ([`Doubt`]), named.
#[derive(Debug, Clone, PartialEq)]
pub struct RowDoubt {
    /// The other kernel's full name.
    pub name: String,
    /// Its display name.
    pub display: String,
    /// Why the two were left apart.
    pub reason: String,
}

/// One kernel name of either run.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareRow {
    /// Full kernel name (the current run's, or the baseline's for a gone kernel).
    pub name: String,
    /// The baseline kernel's full name when it differs (paired by a similar name or by hand).
    pub baseline_name: Option<String>,
    /// The name to show, where the row has its own: a gone kernel's short name, a new or gone
    /// kernel's name told apart from another row's. Otherwise the current run's display name
    /// ([`Comparison::display_name`]: not copied into ten thousand rows).
    pub display_name: Option<String>,
    /// The kernel's index in the current run's kernels (`current.kernels`), for a kernel of the
    /// current run.
    pub index: Option<usize>,
    /// In both runs, or in one.
    pub presence: Presence,
    /// The baseline's figures (absent for a new kernel).
    pub baseline: Option<Side>,
    /// The current run's figures (absent for a gone kernel).
    pub current: Option<Side>,
    /// What the pair rests on (for a kernel in both runs).
    pub quality: Option<Match>,
    /// For a new or gone kernel, the kernel of the other run its name suggests, left apart.
    pub doubt: Option<Box<RowDoubt>>,
    /// For an operator or module, the kernels it launched before and after (when the
    /// comparison was given the launches: [`CompareOptions::launches`]).
    pub launched: Option<Box<Launched>>,
}

impl CompareRow {
    /// Short name for display: the row's display name, else the full name shortened (computed
    /// on demand: a table shows a few hundred rows of ten thousand). [`Comparison::display_name`]
    /// gives a current kernel its run's display name.
    pub fn short_name(&self) -> String {
        match &self.display_name {
            Some(d) if !d.is_empty() => d.clone(),
            _ => crate::analysis::names::shorten(&self.name),
        }
    }

    /// Baseline time, seconds (0 for a new kernel).
    pub fn baseline_s(&self) -> f64 {
        self.baseline.as_ref().map_or(0.0, |s| s.time_s)
    }

    /// Current time, seconds (0 for a gone kernel).
    pub fn current_s(&self) -> f64 {
        self.current.as_ref().map_or(0.0, |s| s.time_s)
    }

    /// `Δ = T_current − T_baseline`, seconds: negative when the kernel got faster.
    pub fn delta_s(&self) -> f64 {
        self.current_s() - self.baseline_s()
    }

    /// `T_baseline / T_current` for a kernel in both runs with positive times.
    pub fn speedup(&self) -> Option<f64> {
        let (b, c) = (self.baseline.as_ref()?, self.current.as_ref()?);
        ratio(b.time_s, c.time_s)
    }

    /// The binding ceiling before and after, by name, when it changed (`"HBM → Tensor FP16"`).
    pub fn bound_change(&self) -> Option<String> {
        let (b, c) = (self.baseline.as_ref()?, self.current.as_ref()?);
        let (bc, cc) = (b.ceiling(), c.ceiling());
        (bc != cc).then(|| format!("{} → {}", bc.unwrap_or("–"), cc.unwrap_or("–")))
    }

    /// What the comparison's "change" column says of the row: `new` or `gone` (with `?` when a
    /// doubtful counterpart was left apart), the change of binding ceiling, `≈` before it for a
    /// pair by a similar name, `✋` for one by hand; `–` for an unchanged exact pair.
    pub fn change(&self) -> String {
        match self.presence {
            Presence::New | Presence::Gone => {
                let mut s = self.presence.key().to_string();
                if self.doubt.is_some() {
                    s.push_str(" ?");
                }
                s
            }
            Presence::Both => {
                let mark = match self.quality {
                    Some(Match::Precision | Match::Similar) => "≈ ",
                    Some(Match::Manual) => "✋ ",
                    _ => "",
                };
                format!(
                    "{mark}{}",
                    self.bound_change().unwrap_or_else(|| "–".into())
                )
            }
        }
    }

    /// One line for a tooltip: baseline → current and the speed-up, what the pair rests on,
    /// the change of binding ceiling; for a new or gone kernel, what it is and its doubtful
    /// counterpart.
    pub fn transition(&self) -> String {
        match (&self.baseline, &self.current) {
            (Some(b), Some(c)) => {
                let mut s = format!(
                    "baseline {} → {}",
                    format_si(b.time_s, "s"),
                    format_si(c.time_s, "s")
                );
                if let Some(x) = self.speedup() {
                    s.push_str(&format!(" ({x:.2}× speed-up)"));
                }
                if let Some(ch) = self.bound_change() {
                    s.push_str(&format!("; bound {ch}"));
                }
                if let Some(q) = self.quality.filter(|q| *q != Match::Exact) {
                    s.push_str(&format!("; {}", q.describe()));
                    if let Some(n) = &self.baseline_name {
                        s.push_str(&format!(
                            " (baseline: {})",
                            crate::analysis::names::shorten(n)
                        ));
                    }
                }
                s
            }
            (None, Some(_)) => self.doubt.as_ref().map_or_else(
                || "new: not in the baseline".to_string(),
                |d| {
                    format!(
                        "new; doubtful counterpart left apart: {} ({})",
                        d.display, d.reason
                    )
                },
            ),
            _ => self.doubt.as_ref().map_or_else(
                || "gone since the baseline".to_string(),
                |d| {
                    format!(
                        "gone; doubtful counterpart left apart: {} ({})",
                        d.display, d.reason
                    )
                },
            ),
        }
    }
}

/// Time before and after for one group (a binding ceiling or a datapath).
#[derive(Debug, Clone, PartialEq)]
pub struct Moved {
    /// The group's key (`hbm`, `tensor_fp16`, `fp32`, `none`, …).
    pub key: String,
    /// The group's name for a person (`HBM`, `Tensor FP16`, `FP32 on CUDA cores`, `no bound`).
    pub label: String,
    /// Baseline time in the group, seconds.
    pub before_s: f64,
    /// Current time in the group, seconds.
    pub after_s: f64,
}

/// The totals of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Baseline total time, seconds.
    pub before_s: f64,
    /// Current total time, seconds.
    pub after_s: f64,
    /// Kernel names in both runs.
    pub matched: usize,
    /// Of those, paired by a name that differs in precision or numbers ([`Match::Precision`],
    /// [`Match::Similar`]).
    pub matched_similar: usize,
    /// Of those, paired by hand.
    pub matched_by_hand: usize,
    /// Doubtful pairs left apart (each counted once, its kernels among the new and the gone).
    pub doubtful: usize,
    /// Kernel names only in the current run.
    pub new: usize,
    /// Kernel names only in the baseline.
    pub gone: usize,
    /// Time by binding ceiling, by name (`no bound` when unknown), largest change first; the
    /// parts add up to the totals.
    pub by_bound: Vec<Moved>,
    /// Time by the datapath that did most of each kernel's FLOPs (Tensor Cores apart from CUDA
    /// cores; `no FLOPs` without), largest change first; the parts add up to the totals.
    pub by_datapath: Vec<Moved>,
    /// What was matched: kernels, operators or modules (the current run's grouping).
    pub unit: GroupBy,
    /// Why fewer entries than expected could be matched, when the two runs are not grouped
    /// alike (one per kernel, the other per operator, say).
    pub note: Option<String>,
}

impl Summary {
    /// `before / after`, when both are positive and the quotient is a double ([`ratio`]).
    pub fn speedup(&self) -> Option<f64> {
        ratio(self.before_s, self.after_s)
    }

    /// The counts: `20 kernels matched (3 by a similar name, 1 by hand), 2 doubtful pairs left
    /// apart, 25 new, 15 gone`.
    pub fn counts(&self) -> String {
        let mut s = format!("{} {} matched", self.matched, self.unit.plural());
        let mut how = Vec::new();
        if self.matched_similar > 0 {
            how.push(format!("{} by a similar name", self.matched_similar));
        }
        if self.matched_by_hand > 0 {
            how.push(format!("{} by hand", self.matched_by_hand));
        }
        if !how.is_empty() {
            s.push_str(&format!(" ({})", how.join(", ")));
        }
        if self.doubtful > 0 {
            s.push_str(&format!(
                ", {} doubtful pair{} left apart",
                self.doubtful,
                if self.doubtful == 1 { "" } else { "s" }
            ));
        }
        s.push_str(&format!(", {} new, {} gone", self.new, self.gone));
        s
    }

    /// One group split as a person reads it: every part with time in either run, largest change
    /// first (`HBM 50 ms → 40 ms, Tensor FP16 0 s → 35 ms`); the parts add up to the totals.
    pub fn split(groups: &[Moved]) -> String {
        groups
            .iter()
            .filter(|m| m.before_s > 0.0 || m.after_s > 0.0)
            .map(|m| {
                format!(
                    "{} {} → {}",
                    m.label,
                    format_si(m.before_s, "s"),
                    format_si(m.after_s, "s")
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The totals, the speed-up and the counts, with the note on groupings when there is one.
    pub fn headline(&self) -> String {
        let mut s = format!(
            "total {} → {}",
            format_si(self.before_s, "s"),
            format_si(self.after_s, "s")
        );
        if let Some(x) = self.speedup() {
            s.push_str(&format!(" ({x:.2}× speed-up)"));
        }
        s.push_str("; ");
        s.push_str(&self.counts());
        if let Some(n) = &self.note {
            s.push_str("; ");
            s.push_str(n);
        }
        s
    }

    /// One line for a person: the [`Summary::headline`], then where the time went by binding
    /// ceiling and by datapath (every part, so that each split adds up to the totals).
    pub fn line(&self) -> String {
        let mut s = self.headline();
        for (what, groups) in [("bound", &self.by_bound), ("datapath", &self.by_datapath)] {
            let parts = Self::split(groups);
            if !parts.is_empty() {
                s.push_str(&format!("; by {what}: {parts}"));
            }
        }
        s
    }
}

/// A comparison of two runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// One row per kernel name of either run: the current run's in its order (largest time
    /// first), then the gone ones (largest baseline time first).
    pub rows: Vec<CompareRow>,
    /// The totals.
    pub summary: Summary,
    /// For each kernel of the current run (`current.kernels`), its kernel in the baseline
    /// ([`Pairing::pairs`]).
    pub pairs: Vec<Option<usize>>,
    /// The current run's display names (shared with its analysis).
    current_names: std::sync::Arc<std::sync::OnceLock<Vec<String>>>,
    /// For each kernel of the current run (`current.kernels`), its row.
    row_of: Vec<usize>,
}

impl Comparison {
    /// The name a row is shown by: its own ([`CompareRow::display_name`]), else its kernel's
    /// display name in the current run (as the run's table and `roofline info` show it), else
    /// its name shortened.
    pub fn display_name(&self, r: &CompareRow) -> String {
        let names = self.current_names.get().map_or(&[][..], Vec::as_slice);
        let own = r.display_name.as_deref().filter(|d| !d.is_empty());
        shown(own, r.index, names)
            .map_or_else(|| crate::analysis::names::shorten(&r.name), str::to_string)
    }

    /// The row of the current run's kernel `index` (into `current.kernels`).
    pub fn current_row(&self, index: usize) -> Option<&CompareRow> {
        self.row_of.get(index).and_then(|&r| self.rows.get(r))
    }

    /// The row of a kernel name.
    pub fn row(&self, name: &str) -> Option<&CompareRow> {
        self.rows.iter().find(|r| r.name == name)
    }

    /// The current run's rows of `names` (one hash map of the rows' names: a chart's kernels
    /// among ten thousand rows), `None` for a name without one.
    pub fn current_rows<'a, 'n>(
        &'a self,
        names: impl IntoIterator<Item = &'n str>,
    ) -> Vec<Option<&'a CompareRow>> {
        let at: FxHashMap<&str, usize> = self
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.current.is_some())
            .map(|(i, r)| (r.name.as_str(), i))
            .collect();
        names
            .into_iter()
            .map(|n| at.get(n).map(|&i| &self.rows[i]))
            .collect()
    }
}

/// What a comparison takes besides the two analyses.
#[derive(Debug, Clone, Copy, Default)]
pub struct CompareOptions<'a> {
    /// Kernels paired (or kept apart) by hand.
    pub manual: &'a [ManualPair],
    /// The launches as imported (`current`, `baseline`), before grouping: when the runs are
    /// read per operator or module, each row lists the kernels it launched before and after.
    pub launches: Option<(&'a [Kernel], &'a [Kernel])>,
}

fn add(groups: &mut Vec<Moved>, key: &str, label: &dyn Fn() -> String, before: f64, after: f64) {
    if let Some(m) = groups.iter_mut().find(|m| m.key == key) {
        m.before_s += before;
        m.after_s += after;
    } else {
        groups.push(Moved {
            key: key.to_string(),
            label: label(),
            before_s: before,
            after_s: after,
        });
    }
}

/// Which baseline kernel each current kernel is matched with, by the rules of [`matching`]
/// (nothing by hand): entry `i` is the index into `baseline.kernels` of the kernel paired with
/// `current.kernels[i]`, if any.
pub fn pairing(current: &Analysed, baseline: &Analysed) -> Vec<Option<usize>> {
    pairing_with(current, baseline, &[]).pairs
}

/// Why entries cannot be matched when the two runs are not grouped alike.
fn grouping_note(current: GroupBy, baseline: GroupBy) -> Option<String> {
    (current != baseline).then(|| {
        format!(
            "the baseline is read per {} and this run per {}: only entries of the same name match (group both alike, from torch.profiler imports)",
            baseline.noun(),
            current.noun()
        )
    })
}

/// The kernels each operator (or module) of `launches` launched, aggregated by kernel name,
/// largest time first; found by the group's name as [`crate::analysis::group::group`] names it
/// ([`LaunchedByGroup::get`]).
struct LaunchedByGroup<'a> {
    /// The group each operator (or module) name's kernels are in.
    grouped: FxHashMap<&'a str, usize>,
    /// The group of each kernel without an operator (or module), by kernel name.
    alone: FxHashMap<&'a str, usize>,
    /// The groups' kernels.
    lists: Vec<Vec<LaunchedKernel>>,
    /// The prefix of the names of kernels without a group: `(no operator) `.
    prefix: String,
}

impl<'a> LaunchedByGroup<'a> {
    fn new(launches: &'a [Kernel], by: GroupBy) -> Self {
        // Two maps of the same type as the matching's (one instantiation in the viewer's wasm).
        let mut l = LaunchedByGroup {
            grouped: FxHashMap::default(),
            alone: FxHashMap::default(),
            lists: Vec::new(),
            prefix: format!("(no {}) ", by.noun()),
        };
        for k in launches {
            let (map, key) = match by.group_of(k) {
                Some(g) => (&mut l.grouped, g),
                None => (&mut l.alone, k.name.as_str()),
            };
            let next = l.lists.len();
            let g = *map.entry(key).or_insert(next);
            if g == next {
                l.lists.push(Vec::new());
            }
            let list = &mut l.lists[g];
            let at = match list.iter().position(|x| x.full_name == k.name) {
                Some(i) => {
                    list[i].launches += k.launches;
                    list[i].time_s += k.time.total_s;
                    i
                }
                None => {
                    list.push(LaunchedKernel {
                        name: k.short_name(),
                        full_name: k.name.clone(),
                        launches: k.launches,
                        time_s: k.time.total_s,
                    });
                    list.len() - 1
                }
            };
            // Largest time first: the kernel moves up past those it now outweighs (a few
            // kernels per operator: no sort needed).
            let mut i = at;
            while i > 0 && list[i - 1].time_s < list[i].time_s {
                list.swap(i - 1, i);
                i -= 1;
            }
        }
        l
    }

    /// The kernels of the group named `name`.
    fn get(&self, name: &str) -> Option<&Vec<LaunchedKernel>> {
        let g = match name.strip_prefix(self.prefix.as_str()) {
            Some(kernel) => self.alone.get(kernel),
            None => self.grouped.get(name),
        };
        g.map(|&g| &self.lists[g])
    }
}

/// Matches the kernels of `current` and `baseline` ([`matching`]) and adds up where the time
/// went. Row `i` is `current.top[i]` for every `i < current.top.len()`.
pub fn compare(current: &Analysed, baseline: &Analysed) -> Comparison {
    compare_with(current, baseline, &CompareOptions::default())
}

/// [`compare`] with kernels paired by hand and, for operators and modules, the launches behind
/// them ([`CompareOptions`]).
pub fn compare_with(current: &Analysed, baseline: &Analysed, o: &CompareOptions<'_>) -> Comparison {
    // Where each baseline kernel's analysis is in `baseline.top`.
    let mut base_at = vec![usize::MAX; baseline.kernels.len()];
    for (pos, a) in baseline.top.iter().enumerate() {
        if let Some(slot) = base_at.get_mut(a.index) {
            *slot = pos;
        }
    }
    let Pairing {
        pairs,
        quality,
        doubts,
    } = pairing_with(current, baseline, o.manual);
    // A run with no entries here (a device of the other run only) is read as the other is.
    let (unit, base_unit) = match (current.kernels.is_empty(), baseline.kernels.is_empty()) {
        (true, false) => (
            GroupBy::of(&baseline.kernels),
            GroupBy::of(&baseline.kernels),
        ),
        (false, true) => (GroupBy::of(&current.kernels), GroupBy::of(&current.kernels)),
        _ => (
            GroupBy::of(&current.kernels),
            GroupBy::of(&baseline.kernels),
        ),
    };
    let launched = o
        .launches
        .filter(|_| unit != GroupBy::Kernel && unit == base_unit)
        .map(|(c, b)| (LaunchedByGroup::new(c, unit), LaunchedByGroup::new(b, unit)));
    let launched_for = |cur: Option<&str>, base: Option<&str>| {
        launched.as_ref().map(|(c, b)| Launched {
            before: base.and_then(|n| b.get(n)).cloned().unwrap_or_default(),
            after: cur.and_then(|n| c.get(n)).cloned().unwrap_or_default(),
        })
    };
    // Display names: the current run's as its table shows them (computed once per analysis);
    // a gone kernel's short name; then told apart where a new and a gone kernel (or two gone
    // ones) would read alike ([`tell_apart`]).
    let cur_names = current.display_names();
    let mut doubt_of_current: Vec<Option<&Doubt>> = vec![None; current.kernels.len()];
    let mut doubt_of_baseline: Vec<Option<&Doubt>> = vec![None; baseline.kernels.len()];
    for d in &doubts {
        doubt_of_current[d.current] = Some(d);
        doubt_of_baseline[d.baseline] = Some(d);
    }
    let mut seen = vec![false; baseline.kernels.len()];
    let mut rows = Vec::with_capacity(current.top.len() + baseline.top.len() / 8);
    for a in &current.top {
        let k = &current.kernels[a.index];
        let paired = pairs.get(a.index).copied().flatten();
        if let Some(p) = paired {
            seen[p] = true;
        }
        let b = paired
            .and_then(|p| baseline.top.get(base_at[p]))
            .map(|b| Side::of(&baseline.kernels[b.index], b));
        let base_name = paired.map(|p| baseline.kernels[p].name.as_str());
        rows.push(CompareRow {
            name: k.name.clone(),
            baseline_name: base_name.filter(|n| *n != k.name).map(str::to_string),
            display_name: None,
            index: Some(a.index),
            presence: if b.is_some() {
                Presence::Both
            } else {
                Presence::New
            },
            baseline: b,
            current: Some(Side::of(k, a)),
            quality: quality.get(a.index).copied().flatten(),
            doubt: doubt_of_current[a.index].map(|d| {
                Box::new(RowDoubt {
                    name: baseline.kernels[d.baseline].name.clone(),
                    display: baseline.kernels[d.baseline].short_name(),
                    reason: d.reason.clone(),
                })
            }),
            launched: launched_for(Some(&k.name), base_name).map(Box::new),
        });
    }
    for b in &baseline.top {
        if !seen[b.index] {
            let k = &baseline.kernels[b.index];
            rows.push(CompareRow {
                name: k.name.clone(),
                display_name: Some(k.short_name()),
                index: None,
                baseline_name: None,
                presence: Presence::Gone,
                baseline: Some(Side::of(k, b)),
                current: None,
                quality: None,
                doubt: doubt_of_baseline[b.index].map(|d| {
                    Box::new(RowDoubt {
                        name: current.kernels[d.current].name.clone(),
                        display: cur_names[d.current].clone(),
                        reason: d.reason.clone(),
                    })
                }),
                launched: launched_for(None, Some(&k.name)).map(Box::new),
            });
        }
    }
    tell_apart(&mut rows, cur_names);
    let summary = summarise(&rows, unit, base_unit, doubts.len());
    let mut row_of = vec![usize::MAX; current.kernels.len()];
    for (r, a) in current.top.iter().enumerate() {
        if let Some(slot) = row_of.get_mut(a.index) {
            *slot = r;
        }
    }
    Comparison {
        rows,
        summary,
        pairs,
        current_names: std::sync::Arc::clone(&current.names),
        row_of,
    }
}

/// A row's name as shown: its own (`own`, its [`CompareRow::display_name`]), else its current
/// kernel's (`index`) display name.
fn shown<'a>(
    own: Option<&'a str>,
    index: Option<usize>,
    current_names: &'a [String],
) -> Option<&'a str> {
    own.or_else(|| index.and_then(|i| current_names.get(i)).map(String::as_str))
}

/// Tells apart the new and gone rows whose display names read like another row's while their
/// kernels differ (`implicit_convolve_sgemm` new and `implicit_convolve_sgemm` gone), as
/// `roofline info` tells one run's names apart ([`crate::analysis::names::disambiguate`]), and names each
/// doubtful counterpart as its own row is named. Only the unpaired rows are renamed, and only
/// the groups of alike names are told apart: a comparison of ten thousand kernels does not tell
/// twenty thousand names apart again.
fn tell_apart(rows: &mut [CompareRow], current_names: &[String]) {
    // The unpaired rows' names (a few), then every row whose name reads like one of them.
    let mut by_display: FxHashMap<&str, usize> = FxHashMap::default();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        if r.presence != Presence::Both
            && let Some(d) = shown(r.display_name.as_deref(), r.index, current_names)
        {
            let next = groups.len();
            let g = *by_display.entry(d).or_insert(next);
            if g == next {
                groups.push(Vec::new());
            }
            groups[g].push(i);
        }
    }
    if groups.is_empty() {
        return;
    }
    for (i, r) in rows.iter().enumerate() {
        if r.presence == Presence::Both
            && let Some(&g) = r
                .index
                .and_then(|x| current_names.get(x))
                .and_then(|d| by_display.get(d.as_str()))
        {
            groups[g].push(i);
        }
    }
    // Groups of a few: a family of hundreds of kernels gone at once (one template's
    // instances) keeps its short name, as it always read.
    const FEW: usize = 64;
    let mut renamed: Vec<(usize, String)> = Vec::new();
    for members in groups.iter().filter(|m| m.len() > 1 && m.len() <= FEW) {
        let entries: Vec<(String, &str)> = members
            .iter()
            .map(|&i| {
                (
                    crate::analysis::names::shorten(&rows[i].name),
                    rows[i].name.as_str(),
                )
            })
            .collect();
        renamed.extend(
            members
                .iter()
                .copied()
                .zip(crate::analysis::names::disambiguate(&entries))
                .filter(|(i, _)| rows[*i].presence != Presence::Both),
        );
    }
    for (i, name) in renamed {
        rows[i].display_name = Some(name);
    }
    // A doubtful counterpart is named as its row is.
    let mut row_of: FxHashMap<&str, usize> = FxHashMap::default();
    for (i, r) in rows.iter().enumerate() {
        if r.presence != Presence::Both {
            row_of.insert(r.name.as_str(), i);
        }
    }
    let names: Vec<(usize, String)> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let d = r.doubt.as_ref()?;
            let other = *row_of.get(d.name.as_str())?;
            let o = &rows[other];
            Some((
                i,
                shown(o.display_name.as_deref(), o.index, current_names)?.to_string(),
            ))
        })
        .collect();
    for (i, name) in names {
        if let Some(d) = rows[i].doubt.as_mut() {
            d.display = name;
        }
    }
}

/// The totals of `rows`: counts, and the time by binding ceiling and by datapath.
fn summarise(rows: &[CompareRow], unit: GroupBy, base_unit: GroupBy, doubtful: usize) -> Summary {
    let count = |p: Presence| rows.iter().filter(|r| r.presence == p).count();
    let quality = |q: &[Match]| {
        rows.iter()
            .filter(|r| r.quality.is_some_and(|x| q.contains(&x)))
            .count()
    };
    let (mut by_bound, mut by_datapath) = (Vec::new(), Vec::new());
    for r in rows {
        for (side, before) in [(&r.baseline, true), (&r.current, false)] {
            let Some(s) = side else { continue };
            let (b, a) = if before {
                (s.time_s, 0.0)
            } else {
                (0.0, s.time_s)
            };
            add(
                &mut by_bound,
                s.ceiling_key().unwrap_or("none"),
                &|| s.ceiling().unwrap_or("no bound").to_string(),
                b,
                a,
            );
            add(
                &mut by_datapath,
                s.datapath.map_or("none", Datapath::key),
                &|| s.datapath.map_or_else(|| "no FLOPs".into(), datapath_label),
                b,
                a,
            );
        }
    }
    for g in [&mut by_bound, &mut by_datapath] {
        crate::analysis::kernel::sort_slice_by(g, |x, y| {
            (y.after_s - y.before_s)
                .abs()
                .total_cmp(&(x.after_s - x.before_s).abs())
        });
    }
    Summary {
        before_s: rows.iter().map(CompareRow::baseline_s).sum(),
        after_s: rows.iter().map(CompareRow::current_s).sum(),
        matched: count(Presence::Both),
        matched_similar: quality(&[Match::Precision, Match::Similar]),
        matched_by_hand: quality(&[Match::Manual]),
        doubtful,
        new: count(Presence::New),
        gone: count(Presence::Gone),
        by_bound,
        by_datapath,
        unit,
        note: grouping_note(unit, base_unit),
    }
}

#[cfg(test)]
pub(crate) mod tests;
