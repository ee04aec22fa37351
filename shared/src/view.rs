//! The viewer's view as data, and its one vocabulary in a URL query: what the viewer reads from
//! and writes to its address bar, and what `roofline plot --format html` writes into a saved page
//! so that the page opens on the view asked for.
//!
//! `?bundle=URL&baseline=URL&device=ID&chart=hierarchical|time|machine&group=kernel|op|module&kernel=NAME&filter=TEXT&levels=l1,l2,hbm&top=N&labels=N&theme=dark`
//!
//! Parsing and percent-encoding are left to the caller (the browser's `URLSearchParams`, or
//! [`crate::standalone::query`], which encodes as it does): this module turns name–value pairs
//! into a [`ViewState`] and back, defaults left out.

use crate::bundle::MemoryLevel;
use crate::group::GroupBy;

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
}

impl View {
    /// Every view, in the order the viewer's switch lists them.
    pub const ALL: [View; 3] = [View::Hierarchical, View::Time, View::Machine];

    /// The URL name (`chart=time`).
    pub fn key(self) -> &'static str {
        match self {
            View::Hierarchical => "hierarchical",
            View::Time => "time",
            View::Machine => "machine",
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
    /// A baseline bundle to fetch and compare with.
    pub baseline: Option<String>,
    /// The device shown, for bundles with more than one.
    pub device: Option<String>,
    /// The view.
    pub view: View,
    /// How kernels are grouped: by kernel name, or by the PyTorch operator or module that
    /// launched them (torch.profiler imports).
    pub group: GroupBy,
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
}

impl Default for ViewState {
    fn default() -> Self {
        ViewState {
            bundle: None,
            baseline: None,
            device: None,
            view: View::Hierarchical,
            group: GroupBy::Kernel,
            kernel: None,
            filter: String::new(),
            levels: MemoryLevel::KERNEL_LEVELS.to_vec(),
            top: None,
            labels: None,
            dark: false,
        }
    }
}

impl ViewState {
    /// The state a query's decoded name–value pairs describe. Unknown names and values that do
    /// not parse are ignored (a link stays usable); the first value of a name counts.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut s = ViewState::default();
        let mut seen: Vec<&str> = Vec::new();
        let mut older_filter = None;
        let text = |v: &str| (!v.is_empty()).then(|| v.to_string());
        for (name, value) in pairs {
            if seen.contains(&name) {
                continue;
            }
            seen.push(name);
            match name {
                "bundle" => s.bundle = text(value),
                "baseline" => s.baseline = text(value),
                "device" => s.device = text(value),
                "chart" => s.view = View::from_key(value).unwrap_or_default(),
                "group" => s.group = GroupBy::from_key(value).unwrap_or_default(),
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
    pub const NAMES: [&'static str; 12] = [
        "bundle", "baseline", "device", "chart", "group", "kernel", "filter", "kernels", "levels",
        "top", "labels", "theme",
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
        put("baseline", self.baseline.clone());
        put("device", self.device.clone());
        put(
            "chart",
            (self.view != View::Hierarchical).then(|| self.view.key().into()),
        );
        put(
            "group",
            (self.group != GroupBy::Kernel).then(|| self.group.key().into()),
        );
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
        p
    }

    /// The query string (without `?`), encoded as the browser's `URLSearchParams` encodes it.
    pub fn to_query(&self) -> String {
        let pairs = self.to_pairs();
        let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        crate::standalone::query(&pairs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_reads_back_its_own_pairs() {
        let s = ViewState {
            bundle: Some("runs/a b.json".into()),
            baseline: None,
            device: Some("1".into()),
            view: View::Time,
            group: GroupBy::Operator,
            kernel: Some("void k<1>(float*)".into()),
            filter: "gemm".into(),
            levels: vec![MemoryLevel::Hbm],
            top: Some(20),
            labels: Some(0),
            dark: true,
        };
        let pairs = s.to_pairs();
        let back = ViewState::from_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str())));
        assert_eq!(back, s);
        assert_eq!(ViewState::default().to_pairs(), Vec::new());
        assert_eq!(
            s.to_query(),
            "bundle=runs%2Fa+b.json&device=1&chart=time&group=op&kernel=void+k%3C1%3E%28float*%29&filter=gemm&levels=hbm&top=20&labels=0&theme=dark"
        );
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
        assert_eq!(s.group, GroupBy::Kernel);
        assert_eq!(s.top, None);
        assert_eq!(s.filter, "old filter name");
        assert!(s.levels.is_empty());
        for v in View::ALL {
            assert_eq!(View::from_key(v.key()), Some(v));
        }
    }
}
