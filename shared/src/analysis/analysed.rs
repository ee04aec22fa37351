//! [`Analysed`]: one device's kernels aggregated and analysed against ceilings: what the
//! hierarchical and time-based charts draw, the tables list and a comparison pairs.

use crate::analysis::aggregate::aggregate_by_name;
use crate::analysis::ceilings::Ceilings;
use crate::analysis::kernel::{self as analysis, KernelAnalysis};
use crate::bundle::{Bundle, Kernel};
use std::sync::{Arc, OnceLock};

/// One device's kernels aggregated by name and analysed against its ceilings, largest time
/// first: what the hierarchical and time-based charts draw (`crate::chart::hierarchical` and
/// `crate::chart::time_based` build their own; build one with [`Analysed::new`] when a single
/// analysis feeds several views, the viewer's chart and kernel table, and draw it with
/// `crate::chart::hierarchical_of` and `crate::chart::time_based_of`).
#[derive(Debug, Clone, PartialEq)]
pub struct Analysed {
    /// The device's id (`None` when the bundle declares none).
    pub device: Option<String>,
    /// The device's name, or empty.
    pub device_name: String,
    /// Whether the bundle says it is complete.
    pub complete: bool,
    /// The ceilings the kernels were analysed against.
    pub ceilings: Ceilings,
    /// The device's kernels, aggregated by name; shared by the analyses of the same kernels
    /// against other ceilings ([`Analysed::against`]).
    pub kernels: Arc<Vec<Kernel>>,
    /// Their analyses, largest time first (a stable order: ties keep the bundle's order);
    /// `index` points into `kernels`. Each chart draws the first `top_kernels` it can.
    pub top: Vec<KernelAnalysis>,
    /// [`Analysed::display_names`], computed on first use (the table and every redraw of a
    /// chart read them; a comparison redraws without recomputing them). From `kernels`: an
    /// analysis whose kernels are replaced must be built anew.
    pub(crate) names: Arc<OnceLock<Vec<String>>>,
}

impl Analysed {
    /// Analyses the kernels of `device` (the bundle's first device when `None`) against
    /// `ceilings` (the device's own machine when `None`; none at all when it has no machine).
    pub fn new(bundle: &Bundle, device: Option<&str>, ceilings: Option<&Ceilings>) -> Self {
        let mut a = Self::without_kernels(bundle, device, ceilings);
        a.kernels = Arc::new(aggregate_by_name(bundle.kernels.iter().filter(|k| {
            a.device.is_none() || bundle.device_of(k) == a.device.as_deref()
        })));
        a.top = Self::analyse(&a.kernels, &a.ceilings);
        a
    }

    /// The same kernels analysed against `ceilings` (a machine swap, a what-if edit): equal to
    /// [`Analysed::new`] of the same bundle and device with `Some(ceilings)`, without aggregating
    /// the bundle's kernels or telling their names apart again (both are shared with `self`),
    /// nor sorting them again (their times, hence their order, do not depend on the ceilings).
    #[must_use]
    pub fn against(&self, ceilings: Ceilings) -> Self {
        let total = analysis::total_time_s(&self.kernels);
        let top = self
            .top
            .iter()
            .map(|a| {
                analysis::analyze_kernel(a.index, &self.kernels[a.index], Some(&ceilings), total)
            })
            .collect();
        Analysed {
            device: self.device.clone(),
            device_name: self.device_name.clone(),
            complete: self.complete,
            top,
            ceilings,
            kernels: Arc::clone(&self.kernels),
            names: Arc::clone(&self.names),
        }
    }

    /// Every kernel against `ceilings`, largest time first (a stable order).
    fn analyse(kernels: &[Kernel], ceilings: &Ceilings) -> Vec<KernelAnalysis> {
        analysis::analyze_largest_first(kernels, |_| Some(ceilings.clone()))
    }

    /// The device, its name and ceilings, and no kernels (what the sweep chart needs).
    pub(crate) fn without_kernels(
        bundle: &Bundle,
        device: Option<&str>,
        ceilings: Option<&Ceilings>,
    ) -> Self {
        let device = device
            .map(str::to_string)
            .or_else(|| bundle.devices.first().map(|d| d.id.clone()));
        let device_name = device
            .as_deref()
            .and_then(|id| bundle.devices.iter().find(|d| d.id == id))
            .map(|d| d.name.clone())
            .unwrap_or_default();
        let ceilings = ceilings
            .cloned()
            .unwrap_or_else(|| Ceilings::of_device(bundle, device.as_deref()).unwrap_or_default());
        Analysed {
            device,
            device_name,
            complete: bundle.complete,
            ceilings,
            kernels: Arc::default(),
            top: Vec::new(),
            names: Arc::default(),
        }
    }

    /// Whether this analysis is against what [`Analysed::new`] of `bundle` with no device and
    /// no ceilings uses: the bundle's first device, against that device's own machine. (Whether
    /// its kernels are the bundle's is the caller's to know.) The viewer reuses such an analysis
    /// when the bundle is chosen as a comparison's baseline.
    pub fn is_own_analysis_of(&self, bundle: &Bundle) -> bool {
        let own = Self::without_kernels(bundle, None, None);
        self.device == own.device && self.ceilings == own.ceilings
    }

    /// Only the kernels `keep` accepts (a filter, or one kernel isolated); their shares of time
    /// stay shares of the whole, so that a filtered chart keeps its marker sizes.
    pub fn retain(&self, keep: impl Fn(&Kernel) -> bool) -> Self {
        let mut kernels = Vec::new();
        let mut top = Vec::new();
        for a in &self.top {
            let k = &self.kernels[a.index];
            if keep(k) {
                top.push(KernelAnalysis {
                    index: kernels.len(),
                    ..a.clone()
                });
                kernels.push(k.clone());
            }
        }
        Analysed {
            device: self.device.clone(),
            device_name: self.device_name.clone(),
            complete: self.complete,
            ceilings: self.ceilings.clone(),
            kernels: Arc::new(kernels),
            top,
            names: Arc::default(),
        }
    }

    /// Display names of [`Analysed::kernels`] (by index), told apart where shortened names
    /// collide ([`crate::analysis::names::disambiguate`]).
    pub fn display_names(&self) -> &[String] {
        self.names
            .get_or_init(|| crate::analysis::names::display_names(&self.kernels))
    }

    /// Takes `earlier`'s display names when they are computed and its kernels are the same
    /// (names and display names, in the same order): the names depend on nothing else, so a new
    /// analysis of the same kernels against other ceilings (a machine swap, a what-if edit)
    /// need not tell 10,000 names apart again. Returns whether it took them.
    pub fn adopt_names(&self, earlier: &Analysed) -> bool {
        let Some(names) = earlier.names.get() else {
            return false;
        };
        let same = self.kernels.len() == earlier.kernels.len()
            && self
                .kernels
                .iter()
                .zip(earlier.kernels.iter())
                .all(|(a, b)| a.name == b.name && a.display_name == b.display_name);
        same && self.names.set(names.clone()).is_ok()
    }

    /// The same figures as a [`Report`](crate::analysis::report::Report) (for the CSV and JSON rows).
    pub fn report(&self) -> crate::analysis::report::Report {
        crate::analysis::report::Report {
            kernels: self.kernels.to_vec(),
            analyses: self.top.clone(),
        }
    }
}
