//! The viewer's view as data, and its one vocabulary in a URL query: what the viewer reads from
//! and writes to its address bar, and what `roofline plot --format html` writes into a saved page
//! so that the page opens on the view asked for.
//!
//! `?bundle=URL&trace=URL&machine=URL&arch=CC&convention=current|2020&allow_partial=1&allow_machine_mismatch=1&baseline=URL&device=ID&chart=hierarchical|time|machine&group=kernel|op|module&kernel=NAME&filter=TEXT&levels=l1,l2,hbm&top=N&labels=N&theme=dark&pair=CURRENT→BASELINE`
//!
//! `trace` names an input the viewer imports itself, as `roofline import` would: a
//! torch.profiler trace (`.json`, `.json.gz`) or an Nsight Compute CSV; it may come several
//! times for the one-metric CSV captures of one run. `machine` names the machine bundle the
//! import places its kernels against (`roofline import --machine`). `arch`, `convention`,
//! `allow_partial` and `allow_machine_mismatch` are `roofline import`'s flags of those names for
//! that import ([`ImportFlags`]; the importer reads and checks them as the CLI does).
//! `group` absent means the default grouping: per operator when a baseline is compared and both
//! bundles carry operators (torch.profiler imports), per kernel otherwise ([`ViewState::group_for`]).
//! `pair` may come several times, one kernel paired by hand each ([`ManualPair`]: the current
//! run's full name, [`PAIR_SEPARATOR`], the baseline's, or nothing to keep the kernel unpaired).
//!
//! Parsing and percent-encoding are left to the caller (the browser's `URLSearchParams`, or
//! [`crate::chart::standalone::query`], which encodes as it does): this module turns name–value pairs
//! into a [`ViewState`] and back, defaults left out.

use crate::analysis::compare::ManualPair;
use crate::analysis::group::GroupBy;
use crate::bundle::MemoryLevel;

/// What separates the two names of a `pair=` value: ` → ` (a character no C++ or operator name
/// holds).
pub const PAIR_SEPARATOR: &str = " → ";

/// `roofline import`'s options for an import the page makes, as the page's URL and "Import
/// options" form hold them: the words as given, so that the form shows what was typed and the
/// importer refuses a bad one with the CLI's message. The importer reads [`ImportFlags::flags`]
/// into the one options type ([`crate::bundle::options::ImportOptions`]), as the CLI reads its
/// flags.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportFlags {
    /// `--arch`: the GPU's compute capability, when the inputs do not say.
    pub arch: Option<String>,
    /// `--convention`: `current` or `2020`.
    pub convention: Option<String>,
    /// `--allow-partial`.
    pub allow_partial: bool,
    /// `--allow-machine-mismatch`.
    pub allow_machine_mismatch: bool,
    /// Where an import without a machine takes its ceilings: `datasheet:NAME` (`--ceilings`,
    /// a GPU of the catalogue) or `none` (`--no-datasheet`); unset, the datasheet of the GPU
    /// the input names.
    pub ceilings: Option<String>,
}

impl ImportFlags {
    /// The flags as `roofline import`'s words (`["--arch", "9.0", "--allow-partial"]`), blank
    /// values left out and the others trimmed.
    pub fn flags(&self) -> Vec<String> {
        let given = |v: &Option<String>| {
            v.as_deref()
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_string)
        };
        let mut out = Vec::new();
        if let Some(a) = given(&self.arch) {
            out.extend(["--arch".to_string(), a]);
        }
        if let Some(c) = given(&self.convention) {
            out.extend(["--convention".to_string(), c]);
        }
        if self.allow_partial {
            out.push("--allow-partial".into());
        }
        if self.allow_machine_mismatch {
            out.push("--allow-machine-mismatch".into());
        }
        match given(&self.ceilings).as_deref() {
            None => {}
            Some("none") => out.push("--no-datasheet".into()),
            Some(c) => out.extend(["--ceilings".to_string(), c.to_string()]),
        }
        out
    }
}

/// What the main area shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum View {
    /// Performance against intensity (the hierarchical roofline).
    #[default]
    Hierarchical,
    /// FLOPs against bytes (the time-based roofline).
    Time,
    /// The machine: its ceilings table and its ERT-style sweep.
    Machine,
    /// The collectives against their links (the communication chart) and the exposed
    /// communication per step.
    Comm,
}

impl View {
    /// Every view, in the order the viewer's switch lists them.
    pub const ALL: [View; 4] = [View::Hierarchical, View::Time, View::Machine, View::Comm];

    /// The URL name (`chart=time`).
    pub fn key(self) -> &'static str {
        match self {
            View::Hierarchical => "hierarchical",
            View::Time => "time",
            View::Machine => "machine",
            View::Comm => "comm",
        }
    }

    /// The view a URL name names.
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.key() == key)
    }
}

/// The view's state: what a copied link reproduces.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewState {
    /// A bundle to fetch.
    pub bundle: Option<String>,
    /// Inputs to fetch and import in the page (a trace, or the CSV captures of one run).
    pub trace: Vec<String>,
    /// The machine bundle an import is placed against.
    pub machine: Option<String>,
    /// The import's options.
    pub import: ImportFlags,
    /// A baseline bundle to fetch and compare with.
    pub baseline: Option<String>,
    /// The device shown, for bundles with more than one.
    pub device: Option<String>,
    /// The view.
    pub view: View,
    /// How kernels are grouped, when asked (`group=` in the URL): by kernel name, or by the
    /// PyTorch operator or module that launched them (torch.profiler imports). `None` when not
    /// asked: the viewer picks one ([`ViewState::group_for`]).
    pub group: Option<GroupBy>,
    /// The selected kernel (full name).
    pub kernel: Option<String>,
    /// The kernel filter.
    pub filter: String,
    /// The memory levels shown.
    pub levels: Vec<MemoryLevel>,
    /// How many kernels are drawn.
    pub top: Option<usize>,
    /// How many of the largest kernels are named on the chart.
    pub labels: Option<usize>,
    /// Dark theme.
    pub dark: bool,
    /// Kernels of a comparison paired (or kept apart) by hand.
    pub pairs: Vec<ManualPair>,
}

impl Default for ViewState {
    fn default() -> Self {
        ViewState {
            bundle: None,
            trace: Vec::new(),
            machine: None,
            import: ImportFlags::default(),
            baseline: None,
            device: None,
            view: View::Hierarchical,
            group: None,
            kernel: None,
            filter: String::new(),
            levels: MemoryLevel::KERNEL_LEVELS.to_vec(),
            top: None,
            labels: None,
            dark: false,
            pairs: Vec::new(),
        }
    }
}

impl ViewState {
    /// The grouping shown: the one asked for (`asked`, `None` when none was), else per
    /// operator when comparing two bundles that both carry operators (where the change
    /// happened: a convolution that moved from an FP32 kernel to a Tensor Core kernel is one
    /// operator), else per kernel.
    pub fn group_for(asked: Option<GroupBy>, comparing_operators: bool) -> GroupBy {
        asked.unwrap_or(if comparing_operators {
            GroupBy::Operator
        } else {
            GroupBy::Kernel
        })
    }

    /// A `pair=` value: `current → baseline`, or `current → ` for a kernel kept unpaired.
    pub fn pair_value(p: &ManualPair) -> String {
        format!(
            "{}{PAIR_SEPARATOR}{}",
            p.current,
            p.baseline.as_deref().unwrap_or_default()
        )
    }

    /// The pairing a `pair=` value names; `None` when it has no separator or no current name.
    pub fn parse_pair(v: &str) -> Option<ManualPair> {
        let (c, b) = v.split_once(PAIR_SEPARATOR.trim())?;
        let (c, b) = (c.trim_end(), b.trim_start());
        (!c.is_empty()).then(|| ManualPair {
            current: c.to_string(),
            baseline: (!b.is_empty()).then(|| b.to_string()),
        })
    }

    /// The state a query's decoded name–value pairs describe. Unknown names and values that do
    /// not parse are ignored (a link stays usable); the first value of a name counts, but for
    /// `pair` and `trace`, which may come several times.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut s = ViewState::default();
        let mut seen: Vec<&str> = Vec::new();
        let mut older_filter = None;
        let text = |v: &str| (!v.is_empty()).then(|| v.to_string());
        for (name, value) in pairs {
            if name == "pair" {
                if let Some(p) = Self::parse_pair(value)
                    && !s.pairs.iter().any(|q| q.current == p.current)
                {
                    s.pairs.push(p);
                }
                continue;
            }
            if name == "trace" {
                if !value.is_empty() {
                    s.trace.push(value.to_string());
                }
                continue;
            }
            if seen.contains(&name) {
                continue;
            }
            seen.push(name);
            match name {
                "bundle" => s.bundle = text(value),
                "machine" => s.machine = text(value),
                "arch" => s.import.arch = text(value),
                "convention" => s.import.convention = text(value),
                "allow_partial" => s.import.allow_partial = value == "1",
                "allow_machine_mismatch" => s.import.allow_machine_mismatch = value == "1",
                "ceilings" => s.import.ceilings = text(value),
                "baseline" => s.baseline = text(value),
                "device" => s.device = text(value),
                "chart" => s.view = View::from_key(value).unwrap_or_default(),
                "group" => {
                    if let Some(g) = GroupBy::from_key(value) {
                        s.group = Some(g);
                    }
                }
                "kernel" => s.kernel = text(value),
                "filter" => s.filter = value.to_string(),
                // The filter's older name, read when `filter` is absent.
                "kernels" => older_filter = Some(value),
                "levels" => {
                    s.levels = MemoryLevel::KERNEL_LEVELS
                        .into_iter()
                        .filter(|lv| value.split(',').any(|x| x == lv.key()))
                        .collect();
                }
                "top" => s.top = value.parse().ok().filter(|t| *t > 0),
                "labels" => s.labels = value.parse().ok(),
                "theme" => s.dark = value == "dark",
                _ => {}
            }
        }
        if let Some(f) = older_filter.filter(|_| !seen.contains(&"filter")) {
            s.filter = f.to_string();
        }
        s
    }

    /// Every name [`ViewState::from_pairs`] reads.
    pub const NAMES: [&'static str; 20] = [
        "bundle",
        "trace",
        "machine",
        "arch",
        "convention",
        "allow_partial",
        "allow_machine_mismatch",
        "ceilings",
        "baseline",
        "device",
        "chart",
        "group",
        "kernel",
        "filter",
        "kernels",
        "levels",
        "top",
        "labels",
        "theme",
        "pair",
    ];

    /// The name–value pairs of this state, in the viewer's order, defaults left out.
    pub fn to_pairs(&self) -> Vec<(&'static str, String)> {
        let mut p = Vec::new();
        let mut put = |name: &'static str, value: Option<String>| {
            if let Some(v) = value {
                p.push((name, v));
            }
        };
        put("bundle", self.bundle.clone());
        for t in &self.trace {
            put("trace", Some(t.clone()));
        }
        put("machine", self.machine.clone());
        let one = |b: bool| b.then(|| "1".to_string());
        put("arch", self.import.arch.clone());
        put("convention", self.import.convention.clone());
        put("allow_partial", one(self.import.allow_partial));
        put(
            "allow_machine_mismatch",
            one(self.import.allow_machine_mismatch),
        );
        put("ceilings", self.import.ceilings.clone());
        put("baseline", self.baseline.clone());
        put("device", self.device.clone());
        put(
            "chart",
            (self.view != View::Hierarchical).then(|| self.view.key().into()),
        );
        put("group", self.group.map(|g| g.key().into()));
        put("kernel", self.kernel.clone());
        put(
            "filter",
            (!self.filter.is_empty()).then(|| self.filter.clone()),
        );
        put(
            "levels",
            (self.levels != MemoryLevel::KERNEL_LEVELS).then(|| {
                self.levels
                    .iter()
                    .map(|l| l.key())
                    .collect::<Vec<_>>()
                    .join(",")
            }),
        );
        put("top", self.top.map(|t| t.to_string()));
        put("labels", self.labels.map(|n| n.to_string()));
        put("theme", self.dark.then(|| "dark".into()));
        for pair in &self.pairs {
            p.push(("pair", Self::pair_value(pair)));
        }
        p
    }

    /// The query string (without `?`), encoded as the browser's `URLSearchParams` encodes it.
    pub fn to_query(&self) -> String {
        let pairs = self.to_pairs();
        let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        crate::chart::standalone::query(&pairs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_reads_back_its_own_pairs() {
        let s = ViewState {
            bundle: Some("runs/a b.json".into()),
            trace: vec!["a.csv".into(), "b.csv".into()],
            machine: Some("m.json".into()),
            import: ImportFlags {
                arch: Some("7.0".into()),
                convention: Some("2020".into()),
                allow_partial: true,
                allow_machine_mismatch: true,
                ceilings: Some("datasheet:nvidia-v100-sxm2-16gb".into()),
            },
            baseline: None,
            device: Some("1".into()),
            view: View::Time,
            group: Some(GroupBy::Operator),
            kernel: Some("void k<1>(float*)".into()),
            filter: "gemm".into(),
            levels: vec![MemoryLevel::Hbm],
            top: Some(20),
            labels: Some(0),
            dark: true,
            pairs: vec![
                ManualPair {
                    current: "hgemm<1, 2>".into(),
                    baseline: Some("sgemm<1, 2>".into()),
                },
                ManualPair {
                    current: "copy".into(),
                    baseline: None,
                },
            ],
        };
        let pairs = s.to_pairs();
        let back = ViewState::from_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str())));
        assert_eq!(back, s);
        assert_eq!(ViewState::default().to_pairs(), Vec::new());
        assert_eq!(
            s.to_query(),
            "bundle=runs%2Fa+b.json&trace=a.csv&trace=b.csv&machine=m.json&arch=7.0&convention=2020&allow_partial=1&allow_machine_mismatch=1&ceilings=datasheet%3Anvidia-v100-sxm2-16gb&device=1&chart=time&group=op&kernel=void+k%3C1%3E%28float*%29&filter=gemm&levels=hbm&top=20&labels=0&theme=dark&pair=hgemm%3C1%2C+2%3E+%E2%86%92+sgemm%3C1%2C+2%3E&pair=copy+%E2%86%92+"
        );
    }

    #[test]
    fn the_default_grouping_is_per_operator_when_comparing_operators() {
        assert_eq!(ViewState::group_for(None, true), GroupBy::Operator);
        assert_eq!(ViewState::group_for(None, false), GroupBy::Kernel);
        assert_eq!(
            ViewState::group_for(Some(GroupBy::Kernel), true),
            GroupBy::Kernel
        );
        // Asked for per kernel: written, so that a link keeps it, and read back as asked.
        let s = ViewState {
            group: Some(GroupBy::Kernel),
            ..ViewState::default()
        };
        assert_eq!(s.to_query(), "group=kernel");
        let back = ViewState::from_pairs([("group", "kernel")]);
        assert_eq!((back.group, back), (Some(GroupBy::Kernel), s));
        assert_eq!(ViewState::default().group, None);
        // The CLI's saved pages set a grouping other than the default as asked.
        let op = ViewState {
            group: Some(GroupBy::Module),
            ..ViewState::default()
        };
        assert_eq!(op.to_query(), "group=module");
        // Pairs: several, the first of a current name counts, malformed ones are ignored.
        let s = ViewState::from_pairs([
            ("pair", "a → b"),
            ("pair", "a → c"),
            ("pair", "no separator"),
            ("pair", " → b"),
            ("pair", "d → "),
        ]);
        assert_eq!(
            s.pairs,
            [
                ManualPair {
                    current: "a".into(),
                    baseline: Some("b".into())
                },
                ManualPair {
                    current: "d".into(),
                    baseline: None
                }
            ]
        );
    }

    #[test]
    fn traces_to_import_come_in_order_with_their_machine() {
        let s = ViewState::from_pairs([
            ("trace", "runs/a.csv"),
            ("machine", "m.json"),
            ("trace", "runs/b.csv"),
            ("trace", ""),
            ("machine", "other.json"),
        ]);
        assert_eq!(s.trace, ["runs/a.csv", "runs/b.csv"]);
        assert_eq!(s.machine.as_deref(), Some("m.json"));
        assert_eq!(
            s.to_query(),
            "trace=runs%2Fa.csv&trace=runs%2Fb.csv&machine=m.json"
        );
        let pairs = s.to_pairs();
        let back = ViewState::from_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str())));
        assert_eq!(back, s);
    }

    #[test]
    fn unknown_values_fall_back_to_the_defaults() {
        let s = ViewState::from_pairs([
            ("chart", "pie"),
            ("group", "operator"),
            ("top", "0"),
            ("kernels", "old filter name"),
            ("levels", "l9"),
        ]);
        assert_eq!(s.view, View::Hierarchical);
        assert_eq!(s.group, None);
        assert_eq!(s.top, None);
        assert_eq!(s.filter, "old filter name");
        assert!(s.levels.is_empty());
        for v in View::ALL {
            assert_eq!(View::from_key(v.key()), Some(v));
        }
    }

    /// The page's words become `roofline import`'s flag words, which the one options type
    /// reads back.
    #[test]
    fn import_flags_are_the_clis_words() {
        let f = ImportFlags {
            arch: Some(" 9.0 ".into()),
            convention: Some(" ".into()),
            allow_partial: false,
            allow_machine_mismatch: true,
            ceilings: Some("datasheet:nvidia-h100-sxm5".into()),
        };
        assert_eq!(
            f.flags(),
            [
                "--arch",
                "9.0",
                "--allow-machine-mismatch",
                "--ceilings",
                "datasheet:nvidia-h100-sxm5"
            ]
        );
        let read = |f: &ImportFlags| {
            crate::bundle::options::ImportOptions::from_flags(f.flags().iter().map(String::as_str))
                .unwrap()
        };
        let o = read(&f);
        assert!(o.allow_machine_mismatch && o.arch.is_some() && o.convention.is_none());
        assert_eq!(
            o.datasheet,
            crate::bundle::options::Datasheet::Named("nvidia-h100-sxm5".into())
        );
        let none = ImportFlags {
            ceilings: Some("none".into()),
            ..ImportFlags::default()
        };
        assert_eq!(
            read(&none).datasheet,
            crate::bundle::options::Datasheet::Off
        );
        assert!(ImportFlags::default().flags().is_empty());
    }
}
