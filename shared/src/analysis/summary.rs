//! The machine summary: per memory level and datapath, our own measurement beside its same-run
//! reference and the theoretical figures, with their ratios.
//!
//! "Own" is the best empirical ceiling not marked `reference` (our microbenchmarks); "reference"
//! the best one marked `reference` (the driver's device-to-device copy, cuBLASLt GEMMs); "best"
//! follows [`crate::analysis::ceilings`]' rule, written once there (sustained figures first where any
//! exists, unless the machine says `chart_figure: burst`). Each figure
//! keeps its burst and sustained values and its "best reach" mark. "Theoretical" is the best
//! theoretical figure at the clock measured (or the device's maximum), "datasheet" the one at
//! NVIDIA's datasheet clock (see [`crate::analysis::theoretical`]). The ceiling charts use is the one
//! [`crate::analysis::ceilings::Ceilings`] resolves.

use crate::analysis::ceilings::{FigureKind, best_measured, usable};
use crate::bundle::{ChartFigure, ClockSource, Datapath, Machine, MemoryLevel, Method, Sustained};

/// What a summary row is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// A bandwidth ceiling.
    Level(MemoryLevel),
    /// A compute ceiling.
    Datapath(Datapath),
}

impl Subject {
    /// Display label.
    pub fn label(self) -> &'static str {
        match self {
            Subject::Level(l) => l.label(),
            Subject::Datapath(d) => d.label(),
        }
    }
}

/// One figure with what produced it.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Byte/s or FLOP/s: the burst figure of a measured ceiling.
    pub value: f64,
    /// The sustained figure, when measured.
    pub sustained: Option<f64>,
    /// The ceiling's `implementation`, if recorded.
    pub implementation: Option<String>,
    /// Why it is the best this toolkit reached rather than the hardware's, if it is.
    pub best_reach: Option<String>,
    /// An indicative reference (`--quick`, too few shapes).
    pub indicative: bool,
}

impl Figure {
    /// The figure charts use under `chart_figure`: the sustained one where measured (unless the
    /// machine asks for burst figures), else the burst one.
    pub fn chart_value(&self, chart_figure: ChartFigure) -> f64 {
        match chart_figure {
            ChartFigure::Sustained => self.sustained.unwrap_or(self.value),
            ChartFigure::Burst => self.value,
        }
    }
}

/// One row of the summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The level or datapath.
    pub subject: Subject,
    /// Our own best measurement.
    pub own: Option<Figure>,
    /// The best same-run reference measurement.
    pub reference: Option<Figure>,
    /// The best theoretical figure at the clock measured or the device's maximum.
    pub theoretical: Option<Figure>,
    /// The theoretical figure at the datasheet's clock, for the GPUs whose datasheet is known.
    pub datasheet: Option<Figure>,
    /// The machine's `chart_figure` (sustained when it says nothing), which `best` and
    /// `own_over_reference` follow.
    pub chart_figure: ChartFigure,
}

impl Row {
    /// `own / reference`, each at its chart figure (sustained where measured, unless the machine
    /// asks for burst figures).
    pub fn own_over_reference(&self) -> Option<f64> {
        let f = self.chart_figure;
        Some(self.own.as_ref()?.chart_value(f) / self.reference.as_ref()?.chart_value(f))
    }

    /// Own and reference, those present.
    fn measured(&self) -> Vec<&Figure> {
        [self.own.as_ref(), self.reference.as_ref()]
            .into_iter()
            .flatten()
            .collect()
    }

    /// The better of own and reference, by the charts' rule ([`crate::analysis::ceilings`]).
    pub fn best(&self) -> Option<&Figure> {
        pick(&self.measured(), self.chart_figure)
    }

    /// Which figure of [`Row::best`] the charts use: sustained or burst.
    pub fn best_figure(&self) -> Option<FigureKind> {
        let both = self.measured();
        best_measured(
            both.iter().map(|f| (f.value, f.sustained)),
            self.chart_figure,
        )
        .map(|(_, kind, _)| kind)
    }

    /// `best empirical burst figure / theoretical` (the theoretical figure is at the clock the
    /// burst ran at, where our kernel stamped one).
    pub fn empirical_over_theoretical(&self) -> Option<f64> {
        let e = [self.own.as_ref(), self.reference.as_ref()]
            .into_iter()
            .flatten()
            .map(|f| f.value)
            .reduce(f64::max)?;
        Some(e / self.theoretical.as_ref()?.value)
    }

    /// Whether the figure the charts use here is marked "best reach".
    pub fn best_reach(&self) -> Option<&str> {
        self.best()?.best_reach.as_deref()
    }
}

/// The charts' rule over figures ([`crate::analysis::ceilings`]' one rule, under the machine's
/// `chart_figure`).
fn pick<'a>(figures: &[&'a Figure], chart_figure: ChartFigure) -> Option<&'a Figure> {
    best_measured(figures.iter().map(|f| (f.value, f.sustained)), chart_figure)
        .map(|(i, _, _)| figures[i])
}

/// The figure of one ceiling.
fn figure(
    value: f64,
    sustained: Option<&Sustained>,
    implementation: &Option<String>,
    best_reach: Option<String>,
    indicative: bool,
) -> Option<Figure> {
    usable(value).then(|| Figure {
        value,
        sustained: sustained.map(|s| s.value).filter(|v| usable(*v)),
        implementation: implementation.clone(),
        best_reach,
        indicative,
    })
}

/// Sorts one ceiling's figure into its row's slots.
#[derive(Default)]
struct Slots {
    own: Vec<Figure>,
    reference: Vec<Figure>,
    theoretical: Vec<Figure>,
    datasheet: Vec<Figure>,
}

impl Slots {
    fn push(&mut self, method: Method, reference: bool, clock: Option<ClockSource>, f: Figure) {
        match (method, reference, clock) {
            (Method::Theoretical, _, Some(ClockSource::Datasheet)) => self.datasheet.push(f),
            (Method::Theoretical, _, _) => self.theoretical.push(f),
            (Method::Empirical, true, _) => self.reference.push(f),
            (Method::Empirical, false, _) => self.own.push(f),
        }
    }

    fn row(self, subject: Subject, chart_figure: ChartFigure) -> Option<Row> {
        let highest = |v: Vec<Figure>| {
            v.into_iter()
                .reduce(|a, b| if b.value > a.value { b } else { a })
        };
        let row = Row {
            subject,
            own: pick(&self.own.iter().collect::<Vec<_>>(), chart_figure).cloned(),
            reference: pick(&self.reference.iter().collect::<Vec<_>>(), chart_figure).cloned(),
            theoretical: highest(self.theoretical),
            datasheet: highest(self.datasheet),
            chart_figure,
        };
        (row.own.is_some()
            || row.reference.is_some()
            || row.theoretical.is_some()
            || row.datasheet.is_some())
        .then_some(row)
    }
}

/// The summary rows of a machine, levels (closest to the cores first) then datapaths, one row
/// per level or datapath that has any figure.
pub fn rows(m: &Machine) -> Vec<Row> {
    let chart_figure = m.chart_figure.unwrap_or_default();
    let mut out = Vec::new();
    for level in MemoryLevel::ALL {
        let mut slots = Slots::default();
        for b in m.bandwidth.iter().filter(|b| b.level == level) {
            if let Some(f) = figure(
                b.value,
                b.sustained.as_ref(),
                &b.implementation,
                None,
                false,
            ) {
                slots.push(b.method, b.reference, b.clock_source, f);
            }
        }
        out.extend(slots.row(Subject::Level(level), chart_figure));
    }
    for d in Datapath::ALL {
        let mut slots = Slots::default();
        for c in m.compute.iter().filter(|c| c.datapath == d) {
            let reach = c.limit.as_ref().map(|l| l.reason.clone());
            if let Some(f) = figure(
                c.value,
                c.sustained.as_ref(),
                &c.implementation,
                reach,
                c.indicative,
            ) {
                slots.push(c.method, c.reference, c.clock_source, f);
            }
        }
        out.extend(slots.row(Subject::Datapath(d), chart_figure));
    }
    out
}

/// One ceiling of the machine as its table lists it: every entry of the bundle, not only the
/// best, with the one the charts use marked.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The level or datapath.
    pub subject: Subject,
    /// Byte/s or FLOP/s: the burst figure (a theoretical ceiling's only figure).
    pub value: f64,
    /// The sustained figure, when measured.
    pub sustained: Option<f64>,
    /// Empirical or theoretical.
    pub method: Method,
    /// Where the figure comes from: measured, a datasheet's, derived, theoretical.
    pub source: crate::analysis::ceilings::CeilingSource,
    /// The cited source of a datasheet or derived figure.
    pub citation: Option<String>,
    /// The ceiling's `implementation`, if recorded.
    pub implementation: Option<String>,
    /// A same-run reference (the driver's copy, a cuBLASLt GEMM).
    pub reference: bool,
    /// Why it is the best this toolkit reached rather than the hardware's, if it is.
    pub best_reach: Option<String>,
    /// An empirical entry's `value` over the highest theoretical entry of its level or datapath.
    pub over_theoretical: Option<f64>,
    /// Where the charts use this entry ([`crate::analysis::ceilings::Ceilings::from_machine`]'s rule):
    /// which of its figures.
    pub in_use: Option<FigureKind>,
}

/// Every ceiling of the machine, levels (closest to the cores first) then datapaths, in the
/// bundle's order within each, with the one the charts use marked.
pub fn entries(m: &Machine) -> Vec<Entry> {
    use crate::analysis::ceilings::CeilingSource;
    let mut out = Vec::new();
    for level in MemoryLevel::ALL {
        let in_use = crate::analysis::ceilings::level_in_use(m, level);
        let list = m
            .bandwidth
            .iter()
            .enumerate()
            .filter(|(_, b)| b.level == level);
        push_entries(
            &mut out,
            list.map(|(i, b)| Entry {
                subject: Subject::Level(level),
                value: b.value,
                sustained: b.sustained_value(),
                method: b.method,
                source: CeilingSource::of(b.method, b.source.as_ref()),
                citation: b.source.as_ref().map(|s| s.citation.clone()),
                implementation: b.implementation.clone(),
                reference: b.reference,
                best_reach: None,
                over_theoretical: None,
                in_use: in_use.filter(|u| u.0 == i).map(|u| u.1),
            }),
        );
    }
    for d in Datapath::ALL {
        let in_use = crate::analysis::ceilings::datapath_in_use(m, d);
        let list = m
            .compute
            .iter()
            .enumerate()
            .filter(|(_, c)| c.datapath == d);
        push_entries(
            &mut out,
            list.map(|(i, c)| Entry {
                subject: Subject::Datapath(d),
                value: c.value,
                sustained: c.sustained_value(),
                method: c.method,
                source: CeilingSource::of(c.method, c.source.as_ref()),
                citation: c.source.as_ref().map(|s| s.citation.clone()),
                implementation: c.implementation.clone(),
                reference: c.reference,
                best_reach: c.limit.as_ref().map(|l| l.reason.clone()),
                over_theoretical: None,
                in_use: in_use.filter(|u| u.0 == i).map(|u| u.1),
            }),
        );
    }
    out
}

/// Appends one level's or datapath's entries, each empirical one with its ratio to the highest
/// theoretical entry among them.
fn push_entries(out: &mut Vec<Entry>, list: impl Iterator<Item = Entry>) {
    let mut list: Vec<Entry> = list.collect();
    let theoretical = list
        .iter()
        .filter(|e| e.method == Method::Theoretical && usable(e.value))
        .map(|e| e.value)
        .reduce(f64::max);
    for e in &mut list {
        if e.method == Method::Empirical && usable(e.value) {
            e.over_theoretical = theoretical.map(|t| e.value / t);
        }
    }
    out.extend(list);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{BandwidthCeiling, ComputeCeiling};

    #[test]
    fn rows_pair_own_reference_and_theoretical() {
        let mut m = Machine::default();
        m.bandwidth.push(BandwidthCeiling::new(
            MemoryLevel::Hbm,
            3.0e12,
            Method::Empirical,
        ));
        m.bandwidth.push(BandwidthCeiling::new(
            MemoryLevel::Hbm,
            2.9e12,
            Method::Empirical,
        ));
        let mut copy = BandwidthCeiling::new(MemoryLevel::Hbm, 2.95e12, Method::Empirical);
        copy.reference = true;
        m.bandwidth.push(copy);
        m.bandwidth.push(BandwidthCeiling::new(
            MemoryLevel::Hbm,
            3.35e12,
            Method::Theoretical,
        ));
        let mut gemm = ComputeCeiling::new(Datapath::TensorFp16, 700e12, Method::Empirical);
        gemm.reference = true;
        m.compute.push(gemm);
        m.compute.push(ComputeCeiling::new(
            Datapath::TensorFp16,
            600e12,
            Method::Empirical,
        ));
        m.compute.push(ComputeCeiling::new(
            Datapath::TensorFp16,
            f64::NAN,
            Method::Empirical,
        ));
        let r = rows(&m);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].subject, Subject::Level(MemoryLevel::Hbm));
        assert!((r[0].own_over_reference().unwrap() - 3.0 / 2.95).abs() < 1e-12);
        assert!((r[0].empirical_over_theoretical().unwrap() - 3.0 / 3.35).abs() < 1e-12);
        assert!((r[1].own_over_reference().unwrap() - 6.0 / 7.0).abs() < 1e-12);
        assert_eq!(r[1].empirical_over_theoretical(), None);
    }

    /// Made-up unit-test figures: sustained figures are kept beside the burst ones, the best
    /// follows the charts' rule, a "best reach" mark and the datasheet row have their own
    /// places.
    #[test]
    fn rows_keep_burst_sustained_best_reach_and_datasheet() {
        use crate::bundle::{Limit, LimitKind};
        let sustained = Sustained::settled_at;
        let mut m = Machine::default();
        let mut own = ComputeCeiling::new(Datapath::TensorInt8, 500e12, Method::Empirical);
        own.sustained = Some(sustained(480e12));
        own.limit = Some(Limit {
            kind: LimitKind::Instruction,
            reason: "mma.sync on sm_90".into(),
        });
        m.compute.push(own);
        let mut gemm = ComputeCeiling::new(Datapath::TensorInt8, 460e12, Method::Empirical);
        gemm.reference = true;
        gemm.indicative = true;
        m.compute.push(gemm);
        let mut at_clock = ComputeCeiling::new(Datapath::TensorInt8, 1900e12, Method::Theoretical);
        at_clock.clock_source = Some(ClockSource::Measured);
        m.compute.push(at_clock);
        let mut sheet = ComputeCeiling::new(Datapath::TensorInt8, 1979e12, Method::Theoretical);
        sheet.clock_source = Some(ClockSource::Datasheet);
        m.compute.push(sheet);
        let r = rows(&m);
        assert_eq!(r.len(), 1);
        let row = &r[0];
        let own = row.own.as_ref().unwrap();
        assert_eq!((own.value, own.sustained), (500e12, Some(480e12)));
        assert!(row.reference.as_ref().unwrap().indicative);
        assert_eq!(row.theoretical.as_ref().unwrap().value, 1900e12);
        assert_eq!(row.datasheet.as_ref().unwrap().value, 1979e12);
        // Our sustained figure is the best: the reference has none.
        assert_eq!(row.best().unwrap().value, 500e12);
        assert_eq!(row.best_reach(), Some("mma.sync on sm_90"));
        assert!((row.own_over_reference().unwrap() - 480.0 / 460.0).abs() < 1e-12);
        assert!((row.empirical_over_theoretical().unwrap() - 500.0 / 1900.0).abs() < 1e-12);
    }

    /// Made-up unit-test figures. A machine that says `chart_figure: burst` reads every figure
    /// at its burst value: the table's best, its "best reach" mark and `ours/ref` follow the
    /// charts ([`crate::analysis::ceilings::Ceilings`]), not the default sustained rule. Before the rule
    /// was shared, the table kept the sustained rule here and marked our kernel "best reach"
    /// while the chart drew the reference GEMM.
    #[test]
    fn a_burst_machine_is_summarised_as_the_charts_read_it() {
        use crate::analysis::ceilings::Ceilings;
        use crate::bundle::{Limit, LimitKind};
        let mut m = Machine::default();
        let mut own = ComputeCeiling::new(Datapath::TensorBf16, 500e12, Method::Empirical);
        own.sustained = Some(Sustained::settled_at(480e12));
        own.limit = Some(Limit {
            kind: LimitKind::Instruction,
            reason: "mma.sync on sm_90".into(),
        });
        m.compute.push(own);
        let mut gemm = ComputeCeiling::new(Datapath::TensorBf16, 520e12, Method::Empirical);
        gemm.reference = true;
        m.compute.push(gemm);

        // By default, the sustained figure competes alone: ours, marked "best reach".
        let row = rows(&m).remove(0);
        assert_eq!(row.chart_figure, ChartFigure::Sustained);
        assert_eq!(row.best().unwrap().value, 500e12);
        assert_eq!(row.best_figure(), Some(FigureKind::Sustained));
        assert_eq!(row.best_reach(), Some("mma.sync on sm_90"));
        assert!((row.own_over_reference().unwrap() - 480.0 / 520.0).abs() < 1e-12);
        let chart = Ceilings::from_machine(&m);
        assert_eq!(chart.peak(Datapath::TensorBf16), Some(480e12));

        // `chart_figure: burst`: every figure at its burst value; the reference GEMM is best.
        m.chart_figure = Some(ChartFigure::Burst);
        let row = rows(&m).remove(0);
        assert_eq!(row.best().unwrap().value, 520e12);
        assert_eq!(row.best_figure(), Some(FigureKind::Burst));
        assert_eq!(row.best_reach(), None);
        assert!((row.own_over_reference().unwrap() - 500.0 / 520.0).abs() < 1e-12);
        let chart = Ceilings::from_machine(&m);
        assert_eq!(chart.peak(Datapath::TensorBf16), Some(520e12));
        assert!(!chart.peak_pick(Datapath::TensorBf16).unwrap().best_reach());
    }

    /// Made-up unit-test figures: every entry listed in the bundle's order within its level or
    /// datapath, the one the charts use marked with its figure, ratios to the highest
    /// theoretical entry, and a theoretical entry in use where nothing was measured.
    #[test]
    fn entries_list_every_ceiling_and_mark_the_one_in_use() {
        use crate::bundle::{Limit, LimitKind};
        let mut m = Machine::default();
        m.bandwidth.push(BandwidthCeiling::new(
            MemoryLevel::Hbm,
            3.35e12,
            Method::Theoretical,
        ));
        let mut stream = BandwidthCeiling::new(MemoryLevel::Hbm, 3.0e12, Method::Empirical);
        stream.sustained = Some(Sustained::settled_at(2.9e12));
        m.bandwidth.push(stream);
        let mut copy = BandwidthCeiling::new(MemoryLevel::Hbm, 3.1e12, Method::Empirical);
        copy.reference = true;
        m.bandwidth.push(copy);
        let mut fp64 = ComputeCeiling::new(Datapath::Fp64, 67e12, Method::Theoretical);
        fp64.limit = Some(Limit {
            kind: LimitKind::Instruction,
            reason: "unused here".into(),
        });
        m.compute.push(fp64);

        let e = entries(&m);
        assert_eq!(e.len(), 4);
        assert_eq!(
            e.iter().map(|e| e.value).collect::<Vec<_>>(),
            vec![3.35e12, 3.0e12, 3.1e12, 67e12]
        );
        // The sustained figure competes alone by default: the stream kernel is in use.
        assert_eq!(e[1].in_use, Some(FigureKind::Sustained));
        assert_eq!(e[1].sustained, Some(2.9e12));
        assert_eq!((e[0].in_use, e[2].in_use), (None, None));
        assert!((e[1].over_theoretical.unwrap() - 3.0 / 3.35).abs() < 1e-12);
        assert!(e[2].reference);
        assert_eq!(e[0].over_theoretical, None);
        // Nothing measured on FP64: its theoretical entry is in use.
        assert_eq!(e[3].in_use, Some(FigureKind::Theoretical));
        assert_eq!(e[3].best_reach.as_deref(), Some("unused here"));

        // Burst figures throughout: the copy's 3.1 TB/s beats the kernel's 3.0.
        m.chart_figure = Some(ChartFigure::Burst);
        let e = entries(&m);
        assert_eq!((e[1].in_use, e[2].in_use), (None, Some(FigureKind::Burst)));
        assert_eq!(
            crate::analysis::ceilings::Ceilings::from_machine(&m).bandwidth(MemoryLevel::Hbm),
            Some(3.1e12)
        );
    }
}
