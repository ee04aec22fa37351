//! Resolving a machine characterization into the ceilings charts and analyses use.
//!
//! A bundle may hold several ceilings for one level or datapath (our own kernel, a library GEMM,
//! the theoretical figure), and a measured ceiling may hold two figures: its burst `value` and,
//! where measured, a `sustained` one (the rate held about 2 s after the clock settled). The one
//! rule, [`Ceilings::from_machine`]:
//!
//! 1. The candidates are the empirical ceilings with a finite, positive figure. Unless the
//!    machine says `chart_figure: burst`, when at least one candidate of the level or datapath
//!    has a sustained figure, only those compete, each at its sustained figure: like with like,
//!    a burst (taken at a cooler clock) never beats a sustained figure. Otherwise every candidate
//!    competes at its burst `value` (bundles written before sustained figures existed read as
//!    they always did).
//! 2. The highest wins, and its [`Pick`] says which figure it is and whether it is marked
//!    "best reach" (a [`crate::bundle::Limit`]).
//! 3. With no empirical candidate, a theoretical ceiling: the datasheet row where there is one
//!    (NVIDIA's quoted figure), else the highest.

use crate::bundle::{
    Bundle, ChartFigure, ClockSource, Datapath, FigureSource, LimitKind, Machine, MachineOrigin,
    MemoryLevel, Method, OriginKind, SourceKind,
};

/// One resolved ceiling: its value and how it was obtained.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ceiling {
    /// Byte/s for bandwidth, FLOP/s for compute.
    pub value: f64,
    /// Empirical, or theoretical when nothing was measured.
    pub method: Method,
}

/// Which figure of a ceiling was picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FigureKind {
    /// A measured ceiling's burst `value` (the only figure of bundles without sustained figures).
    Burst,
    /// A measured ceiling's sustained figure.
    Sustained,
    /// A theoretical figure.
    Theoretical,
}

/// How a resolved ceiling was picked, for labels and notes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pick {
    /// The figure used.
    pub figure: FigureKind,
    /// Why it is the best this toolkit reached rather than the hardware's, if it is.
    pub limit: Option<LimitKind>,
    /// For a theoretical figure, its clock, where the bundle says.
    pub clock_source: Option<ClockSource>,
    /// Where the figure comes from.
    pub source: CeilingSource,
}

/// Where a resolved ceiling's figure comes from: the `ceiling_source` of `roofline info` and
/// the charts' labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CeilingSource {
    /// Measured on the GPU (an empirical ceiling).
    Measured,
    /// A datasheet's figure (the GPU catalogue).
    Datasheet,
    /// Derived from datasheet figures by a stated formula.
    Derived,
    /// Computed from the device's attributes (units × operations per clock × clock).
    Theoretical,
    /// Estimated from the imported input itself.
    Estimated,
}

impl CeilingSource {
    /// The word: `measured`, `datasheet`, `derived`, `theoretical`, `estimated`.
    pub fn key(self) -> &'static str {
        match self {
            CeilingSource::Measured => "measured",
            CeilingSource::Datasheet => "datasheet",
            CeilingSource::Derived => "derived",
            CeilingSource::Theoretical => "theoretical",
            CeilingSource::Estimated => "estimated",
        }
    }

    /// The source of a figure with `method` and its cited `source`.
    pub fn of(method: Method, source: Option<&FigureSource>) -> Self {
        match (method, source.map(|s| s.kind)) {
            (_, Some(SourceKind::Estimated)) => CeilingSource::Estimated,
            (Method::Empirical, _) => CeilingSource::Measured,
            (Method::Theoretical, Some(SourceKind::Datasheet)) => CeilingSource::Datasheet,
            (Method::Theoretical, Some(SourceKind::Derived)) => CeilingSource::Derived,
            (Method::Theoretical, None) => CeilingSource::Theoretical,
        }
    }
}

impl Pick {
    /// Whether the chart marks it "best reach".
    pub fn best_reach(&self) -> bool {
        self.limit.is_some()
    }
}

/// The ceilings of one device, one per memory level and per datapath at most, plus `t_launch`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ceilings {
    bandwidth: [Option<Slot>; MemoryLevel::ALL.len()],
    compute: [Option<Slot>; Datapath::ALL.len()],
    /// Kernel launch overhead, seconds.
    pub launch_overhead_s: Option<f64>,
    /// Where the launch overhead comes from (measured, or estimated from a trace).
    pub launch_overhead_source: Option<CeilingSource>,
    /// Where the machine's ceilings come from, as the machine says ([`Machine::origin`]).
    pub origin: Option<MachineOrigin>,
}

/// One resolved ceiling and how it was picked (`None`: a what-if value, nobody's measurement).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Slot {
    ceiling: Ceiling,
    pick: Option<Pick>,
}

// The enums' declaration order is the order of their `ALL` arrays (checked by a test).
fn level_index(l: MemoryLevel) -> usize {
    l as usize
}

fn datapath_index(d: Datapath) -> usize {
    d as usize
}

/// One ceiling as the rule sees it.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    /// Its index in the machine's `bandwidth` or `compute` list.
    index: usize,
    method: Method,
    value: f64,
    sustained: Option<f64>,
    limit: Option<LimitKind>,
    clock_source: Option<ClockSource>,
    source: Option<SourceKind>,
}

/// Whether a ceiling's figure can be used: finite and positive (also the machine summary's test).
pub(crate) fn usable(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

/// Rules 1 and 2 of the module's documentation over measured figures `(burst, sustained)`: the
/// index of the winner, the figure it competes at and its value. Figures whose burst value is not
/// finite and positive are not candidates; a sustained figure that is not is ignored; of equal
/// figures the first wins. Also the machine summary's rule ([`crate::analysis::summary`]), so the table
/// and the charts pick alike (but for an exact tie between our figure and the reference, where
/// the table takes ours and the charts the first in the bundle).
pub(crate) fn best_measured(
    figures: impl IntoIterator<Item = (f64, Option<f64>)>,
    figure: ChartFigure,
) -> Option<(usize, FigureKind, f64)> {
    let usable_figures: Vec<(usize, f64, Option<f64>)> = figures
        .into_iter()
        .enumerate()
        .filter(|(_, (burst, _))| usable(*burst))
        .map(|(i, (burst, sustained))| (i, burst, sustained.filter(|v| usable(*v))))
        .collect();
    let any_sustained = usable_figures.iter().any(|f| f.2.is_some());
    let kind = if figure == ChartFigure::Sustained && any_sustained {
        FigureKind::Sustained
    } else {
        FigureKind::Burst
    };
    usable_figures
        .into_iter()
        .filter_map(|(i, burst, sustained)| match kind {
            FigureKind::Sustained => Some((i, sustained?)),
            _ => Some((i, burst)),
        })
        .reduce(|a, b| if b.1 > a.1 { b } else { a })
        .map(|(i, v)| (i, kind, v))
}

/// The rule of the module's documentation over one level's or datapath's candidates: the
/// winner's index in the machine's list, the ceiling and how it was picked.
fn resolve(candidates: &[Candidate], figure: ChartFigure) -> Option<(usize, Ceiling, Pick)> {
    let empirical: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| c.method == Method::Empirical)
        .collect();
    if let Some((i, kind, v)) =
        best_measured(empirical.iter().map(|c| (c.value, c.sustained)), figure)
    {
        return Some((
            empirical[i].index,
            Ceiling {
                value: v,
                method: Method::Empirical,
            },
            Pick {
                figure: kind,
                limit: empirical[i].limit,
                clock_source: None,
                source: CeilingSource::Measured,
            },
        ));
    }
    let rank = |c: &Candidate| (c.clock_source == Some(ClockSource::Datasheet), c.value);
    candidates
        .iter()
        .filter(|c| c.method == Method::Theoretical && usable(c.value))
        .reduce(|a, b| if rank(b) > rank(a) { b } else { a })
        .map(|c| {
            (
                c.index,
                Ceiling {
                    value: c.value,
                    method: Method::Theoretical,
                },
                Pick {
                    figure: FigureKind::Theoretical,
                    limit: c.limit,
                    clock_source: c.clock_source,
                    source: match c.source {
                        Some(SourceKind::Datasheet) => CeilingSource::Datasheet,
                        Some(SourceKind::Derived) => CeilingSource::Derived,
                        _ => CeilingSource::Theoretical,
                    },
                },
            )
        })
}

/// A level's bandwidth ceilings as candidates.
fn level_candidates(m: &Machine, level: MemoryLevel) -> Vec<Candidate> {
    m.bandwidth
        .iter()
        .enumerate()
        .filter(|(_, b)| b.level == level)
        .map(|(index, b)| Candidate {
            index,
            method: b.method,
            value: b.value,
            sustained: b.sustained_value(),
            limit: None,
            clock_source: b.clock_source,
            source: b.source.as_ref().map(|s| s.kind),
        })
        .collect()
}

/// A datapath's compute ceilings as candidates.
fn datapath_candidates(m: &Machine, d: Datapath) -> Vec<Candidate> {
    m.compute
        .iter()
        .enumerate()
        .filter(|(_, p)| p.datapath == d)
        .map(|(index, p)| Candidate {
            index,
            method: p.method,
            value: p.value,
            sustained: p.sustained_value(),
            limit: p.limit.as_ref().map(|l| l.kind),
            clock_source: p.clock_source,
            source: p.source.as_ref().map(|s| s.kind),
        })
        .collect()
}

/// Which of the machine's bandwidth ceilings of `level` the charts use (its index in
/// `m.bandwidth`) and at which figure, by [`Ceilings::from_machine`]'s rule.
pub fn level_in_use(m: &Machine, level: MemoryLevel) -> Option<(usize, FigureKind)> {
    resolve(
        &level_candidates(m, level),
        m.chart_figure.unwrap_or_default(),
    )
    .map(|(i, _, p)| (i, p.figure))
}

/// Which of the machine's compute ceilings of datapath `d` the charts use (its index in
/// `m.compute`) and at which figure, by [`Ceilings::from_machine`]'s rule.
pub fn datapath_in_use(m: &Machine, d: Datapath) -> Option<(usize, FigureKind)> {
    resolve(
        &datapath_candidates(m, d),
        m.chart_figure.unwrap_or_default(),
    )
    .map(|(i, _, p)| (i, p.figure))
}

impl Ceilings {
    /// The ceilings a device's kernels are read against ([`Bundle::machine_of`]'s rule: that
    /// device's own machine; `None` reads the bundle's first device), resolved.
    pub fn of_device(bundle: &Bundle, device: Option<&str>) -> Option<Self> {
        bundle.machine_of(device).map(Ceilings::from_machine)
    }

    /// Resolves a machine by the rule of the module's documentation: per level and datapath the
    /// highest empirical figure (the sustained ones where any exists, unless the machine says
    /// `chart_figure: burst`), else a theoretical one.
    pub fn from_machine(m: &Machine) -> Self {
        let figure = m.chart_figure.unwrap_or_default();
        let mut c = Ceilings::default();
        for level in MemoryLevel::ALL {
            c.bandwidth[level_index(level)] =
                resolve(&level_candidates(m, level), figure).map(|(_, ceiling, pick)| Slot {
                    ceiling,
                    pick: Some(pick),
                });
        }
        for d in Datapath::ALL {
            c.compute[datapath_index(d)] =
                resolve(&datapath_candidates(m, d), figure).map(|(_, ceiling, pick)| Slot {
                    ceiling,
                    pick: Some(pick),
                });
        }
        c.launch_overhead_s = m
            .launch_overhead
            .as_ref()
            .map(|l| l.value_s)
            .filter(|v| v.is_finite() && *v > 0.0);
        c.launch_overhead_source = m
            .launch_overhead
            .as_ref()
            .filter(|_| c.launch_overhead_s.is_some())
            .map(|l| CeilingSource::of(l.method, l.source.as_ref()));
        c.origin.clone_from(&m.origin);
        c
    }

    /// Where these ceilings come from, in words for a table's header or a chart's note: the
    /// product and its source (`NVIDIA H100 SXM5 80GB, datasheet, not measured`), or `None` when
    /// the machine does not say (a measured machine says `measured`).
    pub fn origin_words(&self) -> Option<String> {
        let o = self.origin.as_ref()?;
        let what = o.product.as_deref().unwrap_or("this GPU");
        Some(match o.kind {
            OriginKind::Datasheet => format!("{what}, datasheet, not measured"),
            OriginKind::Measured => format!("{what}, measured"),
        })
    }

    /// The bandwidth ceiling of a level, byte/s.
    pub fn bandwidth(&self, level: MemoryLevel) -> Option<f64> {
        self.bandwidth_ceiling(level).map(|c| c.value)
    }

    /// The bandwidth ceiling of a level with its method.
    pub fn bandwidth_ceiling(&self, level: MemoryLevel) -> Option<Ceiling> {
        self.bandwidth[level_index(level)].map(|s| s.ceiling)
    }

    /// How a level's ceiling was picked (`None` for a what-if value or no ceiling).
    pub fn bandwidth_pick(&self, level: MemoryLevel) -> Option<Pick> {
        self.bandwidth[level_index(level)].and_then(|s| s.pick)
    }

    /// The compute peak of a datapath, FLOP/s.
    pub fn peak(&self, d: Datapath) -> Option<f64> {
        self.peak_ceiling(d).map(|c| c.value)
    }

    /// The compute peak of a datapath with its method.
    pub fn peak_ceiling(&self, d: Datapath) -> Option<Ceiling> {
        self.compute[datapath_index(d)].map(|s| s.ceiling)
    }

    /// How a datapath's peak was picked (`None` for a what-if value or no peak).
    pub fn peak_pick(&self, d: Datapath) -> Option<Pick> {
        self.compute[datapath_index(d)].and_then(|s| s.pick)
    }

    /// Whether any resolved ceiling is a sustained figure (the charts then say so).
    pub fn uses_sustained(&self) -> bool {
        self.bandwidth
            .iter()
            .chain(self.compute.iter())
            .flatten()
            .any(|s| s.pick.is_some_and(|p| p.figure == FigureKind::Sustained))
    }

    /// Overrides a bandwidth ceiling (what-if edits in the viewer); `None` removes it. The
    /// override has no pick: it is nobody's measurement.
    pub fn set_bandwidth(&mut self, level: MemoryLevel, c: Option<Ceiling>) {
        self.bandwidth[level_index(level)] = c.map(|ceiling| Slot {
            ceiling,
            pick: None,
        });
    }

    /// Overrides a compute peak (what-if edits in the viewer); `None` removes it. The override
    /// has no pick.
    pub fn set_peak(&mut self, d: Datapath, c: Option<Ceiling>) {
        self.compute[datapath_index(d)] = c.map(|ceiling| Slot {
            ceiling,
            pick: None,
        });
    }

    /// Levels with a ceiling, closest to the cores first.
    pub fn levels(&self) -> impl Iterator<Item = (MemoryLevel, Ceiling)> + '_ {
        MemoryLevel::ALL
            .into_iter()
            .filter_map(|l| self.bandwidth_ceiling(l).map(|c| (l, c)))
    }

    /// Datapaths with a peak, CUDA cores first.
    pub fn datapaths(&self) -> impl Iterator<Item = (Datapath, Ceiling)> + '_ {
        Datapath::ALL
            .into_iter()
            .filter_map(|d| self.peak_ceiling(d).map(|c| (d, c)))
    }

    /// The highest compute peak of any datapath (the top roof), FLOP/s.
    pub fn top_peak(&self) -> Option<f64> {
        self.datapaths().map(|(_, c)| c.value).reduce(f64::max)
    }

    /// The highest bandwidth of any level, byte/s.
    pub fn top_bandwidth(&self) -> Option<f64> {
        self.levels().map(|(_, c)| c.value).reduce(f64::max)
    }

    /// True when there is nothing to plot against.
    pub fn is_empty(&self) -> bool {
        self.levels().next().is_none() && self.datapaths().next().is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{BandwidthCeiling, ComputeCeiling, Limit, Sustained};

    #[test]
    fn indices_follow_the_all_arrays() {
        for (i, l) in MemoryLevel::ALL.into_iter().enumerate() {
            assert_eq!(level_index(l), i);
        }
        for (i, d) in Datapath::ALL.into_iter().enumerate() {
            assert_eq!(datapath_index(d), i);
        }
    }

    #[test]
    fn empirical_beats_a_higher_theoretical_and_the_highest_empirical_wins() {
        let m = Machine {
            device: "0".into(),
            bandwidth: vec![
                BandwidthCeiling::new(MemoryLevel::Hbm, 3.35e12, Method::Theoretical),
                BandwidthCeiling::new(MemoryLevel::Hbm, 2.9e12, Method::Empirical),
                BandwidthCeiling::new(MemoryLevel::Hbm, 3.0e12, Method::Empirical),
                BandwidthCeiling::new(MemoryLevel::L2, 0.0, Method::Empirical),
            ],
            compute: vec![
                ComputeCeiling::new(Datapath::TensorFp16, 7.0e14, Method::Empirical),
                ComputeCeiling::new(Datapath::TensorFp16, 7.5e14, Method::Empirical),
                ComputeCeiling::new(Datapath::Fp32, 6.7e13, Method::Theoretical),
            ],
            ..Machine::default()
        };
        let c = Ceilings::from_machine(&m);
        assert_eq!(c.bandwidth(MemoryLevel::Hbm), Some(3.0e12));
        assert_eq!(
            c.bandwidth(MemoryLevel::L2),
            None,
            "a zero ceiling is ignored"
        );
        assert_eq!(c.peak(Datapath::TensorFp16), Some(7.5e14));
        assert_eq!(
            c.peak_ceiling(Datapath::Fp32).map(|c| c.method),
            Some(Method::Theoretical)
        );
        assert_eq!(c.top_peak(), Some(7.5e14));
        assert_eq!(c.top_bandwidth(), Some(3.0e12));
    }

    fn sustained(value: f64) -> Option<Sustained> {
        Some(Sustained::settled_at(value))
    }

    /// Made-up unit-test figures: where any candidate has a sustained figure only sustained
    /// figures compete (a higher burst-only figure does not win), the pick says so and carries
    /// the winner's limit; `chart_figure: burst` reads every ceiling at its burst value.
    #[test]
    fn sustained_figures_compete_among_themselves_by_default() {
        let mut own = ComputeCeiling::new(Datapath::TensorInt8, 5.0e14, Method::Empirical);
        own.sustained = sustained(4.8e14);
        own.limit = Some(Limit {
            kind: LimitKind::Instruction,
            reason: "mma.sync".into(),
        });
        let mut gemm = ComputeCeiling::new(Datapath::TensorInt8, 9.5e14, Method::Empirical);
        gemm.reference = true;
        gemm.sustained = sustained(9.0e14);
        let burst_only = ComputeCeiling::new(Datapath::TensorInt8, 9.9e14, Method::Empirical);
        let mut hbm = BandwidthCeiling::new(MemoryLevel::Hbm, 3.0e12, Method::Empirical);
        hbm.sustained = sustained(2.95e12);
        let plateau = BandwidthCeiling::new(MemoryLevel::Hbm, 3.1e12, Method::Empirical);
        let old = BandwidthCeiling::new(MemoryLevel::L2, 9.0e12, Method::Empirical);
        let mut m = Machine {
            device: "0".into(),
            bandwidth: vec![hbm, plateau, old],
            compute: vec![own.clone(), gemm, burst_only],
            ..Machine::default()
        };
        let c = Ceilings::from_machine(&m);
        assert_eq!(c.peak(Datapath::TensorInt8), Some(9.0e14));
        let pick = c.peak_pick(Datapath::TensorInt8).unwrap();
        assert_eq!(pick.figure, FigureKind::Sustained);
        assert!(!pick.best_reach());
        assert_eq!(c.bandwidth(MemoryLevel::Hbm), Some(2.95e12));
        // A level with no sustained figure reads at its burst value (the figure kind it has).
        assert_eq!(c.bandwidth(MemoryLevel::L2), Some(9.0e12));
        assert_eq!(
            c.bandwidth_pick(MemoryLevel::L2).unwrap().figure,
            FigureKind::Burst
        );
        assert!(c.uses_sustained());

        m.chart_figure = Some(ChartFigure::Burst);
        let b = Ceilings::from_machine(&m);
        assert_eq!(b.peak(Datapath::TensorInt8), Some(9.9e14));
        assert_eq!(b.bandwidth(MemoryLevel::Hbm), Some(3.1e12));
        assert!(!b.uses_sustained());

        // The winner's limit travels with the pick: the chart marks it "best reach".
        let only_own = Machine {
            device: "0".into(),
            compute: vec![own],
            ..Machine::default()
        };
        let o = Ceilings::from_machine(&only_own);
        assert!(o.peak_pick(Datapath::TensorInt8).unwrap().best_reach());
        // A what-if value is nobody's measurement: no pick.
        let mut edited = o;
        edited.set_peak(
            Datapath::TensorInt8,
            Some(Ceiling {
                value: 1.0e15,
                method: Method::Empirical,
            }),
        );
        assert_eq!(edited.peak_pick(Datapath::TensorInt8), None);
    }

    /// Where nothing was measured, the datasheet's theoretical row is used over a higher one at
    /// the device's maximum clock (made-up figures).
    #[test]
    fn a_datasheet_row_is_preferred_among_theoretical_ones() {
        let mut at_max = ComputeCeiling::new(Datapath::TensorFp8, 2.14e15, Method::Theoretical);
        at_max.clock_source = Some(ClockSource::DeviceMax);
        let mut sheet = ComputeCeiling::new(Datapath::TensorFp8, 1.979e15, Method::Theoretical);
        sheet.clock_source = Some(ClockSource::Datasheet);
        let m = Machine {
            device: "0".into(),
            compute: vec![at_max, sheet],
            ..Machine::default()
        };
        let c = Ceilings::from_machine(&m);
        assert_eq!(c.peak(Datapath::TensorFp8), Some(1.979e15));
        let pick = c.peak_pick(Datapath::TensorFp8).unwrap();
        assert_eq!(pick.figure, FigureKind::Theoretical);
        assert_eq!(pick.clock_source, Some(ClockSource::Datasheet));
    }
}
