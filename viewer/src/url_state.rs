//! The view's state in the URL query, so that a copied link reproduces the view:
//! `?bundle=URL&baseline=URL&device=ID&chart=hierarchical|time|machine&group=kernel|op|module&kernel=NAME&filter=TEXT&levels=l1,l2,hbm&top=N&labels=N&theme=dark`.

use roofline_model::bundle::MemoryLevel;
use roofline_model::group::GroupBy;

/// What the main area shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// Performance against intensity.
    Hierarchical,
    /// FLOPs against bytes.
    Time,
    /// The ceilings table.
    Machine,
}

impl View {
    /// The URL name.
    pub fn key(self) -> &'static str {
        match self {
            View::Hierarchical => "hierarchical",
            View::Time => "time",
            View::Machine => "machine",
        }
    }

    /// From the URL name.
    pub fn from_key(s: &str) -> Option<Self> {
        match s {
            "hierarchical" => Some(View::Hierarchical),
            "time" => Some(View::Time),
            "machine" => Some(View::Machine),
            _ => None,
        }
    }
}

/// The URL name of a grouping (as `roofline info --group-by` names it).
pub fn group_key(g: GroupBy) -> &'static str {
    match g {
        GroupBy::Kernel => "kernel",
        GroupBy::Operator => "op",
        GroupBy::Module => "module",
    }
}

/// A grouping from its URL name.
pub fn group_from_key(s: &str) -> Option<GroupBy> {
    match s {
        "kernel" => Some(GroupBy::Kernel),
        "op" => Some(GroupBy::Operator),
        "module" => Some(GroupBy::Module),
        _ => None,
    }
}

/// What the URL says.
#[derive(Clone, Debug, PartialEq)]
pub struct UrlState {
    /// A bundle to fetch.
    pub bundle: Option<String>,
    /// A baseline bundle to fetch and compare with.
    pub baseline: Option<String>,
    /// The device shown, for bundles with more than one.
    pub device: Option<String>,
    /// The view.
    pub view: View,
    /// How kernels are grouped: by kernel name, or by the PyTorch operator or module that launched
    /// them (bundles imported from torch.profiler traces carry those tags).
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

impl Default for UrlState {
    fn default() -> Self {
        UrlState {
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

impl UrlState {
    /// Reads a query string (with or without its `?`).
    pub fn from_query(query: &str) -> Self {
        let mut s = UrlState::default();
        let Ok(params) = web_sys::UrlSearchParams::new_with_str(query) else {
            return s;
        };
        s.bundle = params.get("bundle").filter(|b| !b.is_empty());
        s.baseline = params.get("baseline").filter(|b| !b.is_empty());
        s.device = params.get("device").filter(|b| !b.is_empty());
        s.view = params
            .get("chart")
            .and_then(|c| View::from_key(&c))
            .unwrap_or(View::Hierarchical);
        s.group = params
            .get("group")
            .and_then(|g| group_from_key(&g))
            .unwrap_or_default();
        s.kernel = params.get("kernel").filter(|k| !k.is_empty());
        s.filter = params
            .get("filter")
            .or_else(|| params.get("kernels"))
            .unwrap_or_default();
        if let Some(l) = params.get("levels") {
            s.levels = MemoryLevel::KERNEL_LEVELS
                .into_iter()
                .filter(|lv| l.split(',').any(|x| x == lv.key()))
                .collect();
        }
        s.top = params
            .get("top")
            .and_then(|t| t.parse().ok())
            .filter(|t| *t > 0);
        s.labels = params.get("labels").and_then(|t| t.parse().ok());
        s.dark = params.get("theme").as_deref() == Some("dark");
        s
    }

    /// The state of the page's current URL.
    pub fn from_location() -> Self {
        let query = web_sys::window()
            .and_then(|w| w.location().search().ok())
            .unwrap_or_default();
        Self::from_query(&query)
    }

    /// The query string (without `?`) for this state; defaults are left out.
    pub fn to_query(&self) -> String {
        let Ok(p) = web_sys::UrlSearchParams::new() else {
            return String::new();
        };
        if let Some(b) = &self.bundle {
            p.append("bundle", b);
        }
        if let Some(b) = &self.baseline {
            p.append("baseline", b);
        }
        if let Some(d) = &self.device {
            p.append("device", d);
        }
        if self.view != View::Hierarchical {
            p.append("chart", self.view.key());
        }
        if self.group != GroupBy::Kernel {
            p.append("group", group_key(self.group));
        }
        if let Some(k) = &self.kernel {
            p.append("kernel", k);
        }
        if !self.filter.is_empty() {
            p.append("filter", &self.filter);
        }
        if self.levels != MemoryLevel::KERNEL_LEVELS.to_vec() {
            let keys: Vec<&str> = self.levels.iter().map(|l| l.key()).collect();
            p.append("levels", &keys.join(","));
        }
        if let Some(t) = self.top {
            p.append("top", &t.to_string());
        }
        if let Some(n) = self.labels {
            p.append("labels", &n.to_string());
        }
        if self.dark {
            p.append("theme", "dark");
        }
        p.to_string().into()
    }

    /// Replaces the page's URL (no new history entry).
    pub fn write_to_location(&self) {
        let Some(w) = web_sys::window() else { return };
        let Ok(path) = w.location().pathname() else {
            return;
        };
        let q = self.to_query();
        let url = if q.is_empty() {
            path
        } else {
            format!("{path}?{q}")
        };
        if let Ok(h) = w.history() {
            let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
        }
    }
}
