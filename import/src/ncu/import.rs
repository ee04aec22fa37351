//! From Nsight Compute CSV text to bundle kernels.
//!
//! Reads both CSV forms: the raw page (`--page raw`: one row per launch, one column per metric,
//! an optional row of units under the header) and the details page (the default: one row per
//! launch per metric, with `Metric Name`, `Metric Unit` and `Metric Value` columns), in any units.
//! Several captures of one run, each holding other metrics (the 2020 study collected one metric
//! per run), are joined launch by launch on their `ID`.

use std::collections::{BTreeMap, BTreeSet};

use crate::ncu::csv::{Table, find_table};
use crate::ncu::metrics::{self, Alternatives, Arch, Convention, time};
use crate::ncu::units::{self, Dimension};
use roofline_model::aggregate::aggregate_by_name;
use roofline_model::bundle::{
    Bytes, DataSource, Datapath, Device, Flops, Kernel, KernelTime, MemoryLevel,
};

/// Why Nsight Compute output could not be imported.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NcuError {
    /// No table in the text.
    #[error(
        "{source_name}: no Nsight Compute table found (a CSV header line starting with \"ID\" and naming \"Kernel Name\"); was it written with `ncu --csv`?"
    )]
    NoTable {
        /// The file.
        source_name: String,
    },
    /// A column every form has is missing.
    #[error("{source_name}: the table has no {column:?} column")]
    MissingColumn {
        /// The file.
        source_name: String,
        /// The column.
        column: &'static str,
    },
    /// A launch ID that is not a number.
    #[error("{source_name}, line {line}: launch ID {value:?} is not a whole number")]
    BadId {
        /// The file.
        source_name: String,
        /// The line.
        line: usize,
        /// The text.
        value: String,
    },
    /// A launch whose kernel name is empty (a bundle names every kernel).
    #[error("{source_name}, line {line}: launch {id} has no kernel name")]
    NoKernelName {
        /// The file.
        source_name: String,
        /// The line.
        line: usize,
        /// The launch ID.
        id: u64,
    },
    /// A metric value that is not a number.
    #[error("{source_name}, line {line}: {metric} = {value:?} is not a number")]
    BadValue {
        /// The file.
        source_name: String,
        /// The line.
        line: usize,
        /// The metric.
        metric: String,
        /// The text.
        value: String,
    },
    /// A unit we cannot convert.
    #[error("{source_name}, line {line}: unknown unit {unit:?} for {metric}")]
    BadUnit {
        /// The file.
        source_name: String,
        /// The line.
        line: usize,
        /// The metric.
        metric: String,
        /// The unit.
        unit: String,
    },
    /// A value with commas that are not thousands separators.
    #[error(
        "{source_name}, line {line}: {metric} = {value:?}: a comma here is not a thousands separator (groups of three digits); a decimal comma or a merged column cannot be read safely"
    )]
    BadSeparator {
        /// The file.
        source_name: String,
        /// The line.
        line: usize,
        /// The metric.
        metric: String,
        /// The text.
        value: String,
    },
    /// A unit that does not measure what the metric counts.
    #[error(
        "{source_name}, line {line}: unit {unit:?} does not fit {metric}, which counts {expected}"
    )]
    UnitMismatch {
        /// The file.
        source_name: String,
        /// The line.
        line: usize,
        /// The metric.
        metric: String,
        /// The unit.
        unit: String,
        /// What the metric counts.
        expected: &'static str,
    },
    /// A launch ID (or a launch's metric) given twice in one file.
    #[error(
        "{source_name}, line {line}: launch {id}{metric} appears a second time (first at line {first_line}); a file must hold one run: were two captures concatenated?"
    )]
    DuplicateLaunch {
        /// The file.
        source_name: String,
        /// The line of the second occurrence.
        line: usize,
        /// The line of the first.
        first_line: usize,
        /// The launch ID.
        id: u64,
        /// `" (metric m)"` on the details page, else empty.
        metric: String,
    },
    /// A second table header inside the table.
    #[error(
        "{source_name}, line {line}: a second table header: the file holds two runs concatenated; keep one run per file"
    )]
    SecondHeader {
        /// The file.
        source_name: String,
        /// The line.
        line: usize,
    },
    /// A file that ends inside a table row.
    #[error(
        "{source_name}, line {line}: the file ends inside a table row: it was cut short; capture it again, or pass --allow-partial to import the complete rows, marked incomplete"
    )]
    CutShort {
        /// The file.
        source_name: String,
        /// The line of the partial row.
        line: usize,
    },
    /// A capture of a set that lacks launches the others hold.
    #[error(
        "{source_name} holds {holds} of the {total} launches of this capture set; the first missing is launch {id} ({name}): the file was cut short or captured with a launch limit; capture it again, or pass --allow-partial to import what is there, marked incomplete"
    )]
    MissingLaunches {
        /// The file.
        source_name: String,
        /// Launches it holds.
        holds: usize,
        /// Launches in the set.
        total: usize,
        /// The first launch ID missing.
        id: u64,
        /// Its kernel name (from another file).
        name: String,
    },
    /// Captures that cannot be joined.
    #[error(
        "{first} and {second} both hold {metric}: they look like separate runs, not one run split by metric; import each on its own and join the bundles with `roofline merge`"
    )]
    OverlappingCaptures {
        /// One file.
        first: String,
        /// The other.
        second: String,
        /// A metric both hold.
        metric: String,
    },
    /// Launch IDs that disagree between captures of one run.
    #[error(
        "launch {id} is {first_name:?} in {first} but {second_name:?} in {second}: the files are not captures of the same run"
    )]
    MismatchedLaunch {
        /// The launch ID.
        id: u64,
        /// One file.
        first: String,
        /// Its kernel name.
        first_name: String,
        /// The other file.
        second: String,
        /// Its kernel name.
        second_name: String,
    },
    /// A capture without any metric the roofline uses.
    #[error(
        "{source_name}: none of the metrics the roofline needs is in this file (it has {found}); collect them with `roofline profile`, or with ncu --metrics and the names in docs/ncu-metrics.md"
    )]
    NoRooflineMetrics {
        /// The file.
        source_name: String,
        /// What it has instead, abbreviated.
        found: String,
    },
    /// A launch without any time metric.
    #[error(
        "launch {id} ({name}) has no time: collect gpu__time_duration.sum, or sm__cycles_elapsed.avg with sm__cycles_elapsed.avg.per_second"
    )]
    NoTime {
        /// The launch ID.
        id: u64,
        /// Its kernel name.
        name: String,
    },
}

/// One kernel launch as Nsight Compute reported it; metrics in SI base units.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    /// The profiler's launch ID.
    pub id: u64,
    /// Demangled kernel name.
    pub name: String,
    /// The `Device` column (an index or a name), if present.
    pub device: Option<String>,
    /// The `CC` column (compute capability), if present.
    pub compute_capability: Option<String>,
    /// Grid dimensions.
    pub grid: Option<[u32; 3]>,
    /// Block dimensions.
    pub block: Option<[u32; 3]>,
    /// Metric values, SI base units (seconds, bytes, per second): for a launch that stands for
    /// several ([`Launch::launches`] > 1), counters summed and rates (`.per_second`) averaged.
    pub metrics: BTreeMap<String, f64>,
    /// How many launches this entry stands for: 1, or more when captures were joined per
    /// kernel name.
    pub launches: u64,
}

/// The content of one Nsight Compute CSV file.
#[derive(Debug, Clone, PartialEq)]
pub struct Capture {
    /// Launches in file order.
    pub launches: Vec<Launch>,
    /// Every metric the file holds.
    pub metric_names: BTreeSet<String>,
    /// Columns that are neither known identity columns nor metrics (a newer ncu), ignored.
    pub ignored_columns: Vec<String>,
    /// Lines inside the table that were not rows (profiler messages), skipped.
    pub skipped_lines: Vec<usize>,
    /// Metrics in the file that the roofline does not use (left unread).
    pub other_metrics: BTreeSet<String>,
    /// The line of a last row the file ends inside (cut short), left out.
    pub cut_short: Option<usize>,
}

/// Identity columns Nsight Compute writes, old and new; anything else without `__` is ignored.
const IDENTITY: [&str; 23] = [
    "ID",
    "API Stream",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Kernel Time",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
    "Section Name",
    "Metric Name",
    "Metric Unit",
    "Metric Value",
    "Rule Name",
    "Rule Type",
    "Rule Description",
    "Estimated Speedup Type",
    "Estimated Speedup",
    "Function Name",
];

fn parse_dims(s: &str) -> Option<[u32; 3]> {
    let inner = s.trim().trim_start_matches('(').trim_end_matches(')');
    let mut it = inner.split(',').map(|p| p.trim().parse::<u32>().ok());
    let dims = [
        it.next()??,
        it.next().flatten().unwrap_or(1),
        it.next().flatten().unwrap_or(1),
    ];
    Some(dims)
}

struct Columns {
    id: usize,
    name: usize,
    device: Option<usize>,
    cc: Option<usize>,
    grid: Option<usize>,
    block: Option<usize>,
}

fn columns(t: &Table, source_name: &str) -> Result<Columns, NcuError> {
    let find = |c: &str| t.header.iter().position(|h| h == c);
    let need = |c: &'static str| {
        find(c).ok_or_else(|| NcuError::MissingColumn {
            source_name: source_name.to_string(),
            column: c,
        })
    };
    Ok(Columns {
        id: need("ID")?,
        name: need("Kernel Name")?,
        device: find("Device"),
        cc: find("CC"),
        grid: find("Grid Size"),
        block: find("Block Size"),
    })
}

fn launch_of(
    row: &[String],
    c: &Columns,
    line: usize,
    source_name: &str,
) -> Result<Launch, NcuError> {
    let id_text = row[c.id].trim();
    if id_text == "ID" && row[c.name].trim() == "Kernel Name" {
        return Err(NcuError::SecondHeader {
            source_name: source_name.to_string(),
            line,
        });
    }
    let id = units::strip_thousands(id_text)
        .unwrap_or_default()
        .parse::<u64>()
        .map_err(|_| NcuError::BadId {
            source_name: source_name.to_string(),
            line,
            value: id_text.to_string(),
        })?;
    if row[c.name].trim().is_empty() {
        return Err(NcuError::NoKernelName {
            source_name: source_name.to_string(),
            line,
            id,
        });
    }
    let text = |i: Option<usize>| {
        i.map(|i| row[i].trim().to_string())
            .filter(|s| !s.is_empty())
    };
    Ok(Launch {
        id,
        name: row[c.name].clone(),
        device: text(c.device),
        compute_capability: text(c.cc),
        grid: c.grid.and_then(|i| parse_dims(&row[i])),
        block: c.block.and_then(|i| parse_dims(&row[i])),
        metrics: BTreeMap::new(),
        launches: 1,
    })
}

/// What a metric counts, from its name: the dimensions its unit may have.
fn expected_dimension(metric: &str) -> (&'static str, &'static [Dimension]) {
    use Dimension as D;
    if metric.ends_with(".per_second") {
        ("a rate (per second)", &[D::None, D::Rate])
    } else if metric.starts_with("gpu__time_duration") {
        ("time", &[D::None, D::Time])
    } else if metric.starts_with("sm__cycles_elapsed") {
        ("cycles", &[D::None, D::Cycles])
    } else if metric.contains("bytes") {
        ("bytes", &[D::None, D::Bytes])
    } else {
        (
            "events (instructions, operations, cycles)",
            &[D::None, D::Count, D::Cycles],
        )
    }
}

fn convert(
    value: &str,
    unit: &str,
    metric: &str,
    line: usize,
    source_name: &str,
) -> Result<Option<f64>, NcuError> {
    let t = value.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("n/a") || t.eq_ignore_ascii_case("no data") {
        return Ok(None);
    }
    let v = units::parse_value(t).ok_or_else(|| {
        let bad_commas = t.contains(',') && units::strip_thousands(t).is_none();
        let (source_name, metric, value) =
            (source_name.to_string(), metric.to_string(), t.to_string());
        if bad_commas {
            NcuError::BadSeparator {
                source_name,
                line,
                metric,
                value,
            }
        } else {
            NcuError::BadValue {
                source_name,
                line,
                metric,
                value,
            }
        }
    })?;
    let base = units::to_base(v, unit).ok_or_else(|| NcuError::BadUnit {
        source_name: source_name.to_string(),
        line,
        metric: metric.to_string(),
        unit: unit.to_string(),
    })?;
    let (expected, fits) = expected_dimension(metric);
    if !fits.contains(&units::dimension(unit)) {
        return Err(NcuError::UnitMismatch {
            source_name: source_name.to_string(),
            line,
            metric: metric.to_string(),
            unit: unit.trim().to_string(),
            expected,
        });
    }
    Ok(Some(base))
}

/// Parses one Nsight Compute CSV output (raw or details page, anything printed around it).
///
/// # Errors
/// [`NcuError`] naming the file and line.
pub fn parse_capture(text: &str, source_name: &str) -> Result<Capture, NcuError> {
    let t = find_table(text).ok_or_else(|| NcuError::NoTable {
        source_name: source_name.to_string(),
    })?;
    let c = columns(&t, source_name)?;
    let details = ["Metric Name", "Metric Unit", "Metric Value"]
        .map(|h| t.header.iter().position(|x| x == h));
    let used = metrics::used_metrics();
    let mut capture = Capture {
        launches: Vec::new(),
        metric_names: BTreeSet::new(),
        ignored_columns: Vec::new(),
        skipped_lines: t.skipped_lines.clone(),
        other_metrics: BTreeSet::new(),
        cut_short: t.cut_short,
    };
    let duplicate = |line: usize, first_line: usize, id: u64, metric: &str| {
        Err(NcuError::DuplicateLaunch {
            source_name: source_name.to_string(),
            line,
            first_line,
            id,
            metric: if metric.is_empty() {
                String::new()
            } else {
                format!(" ({metric})")
            },
        })
    };
    let section_col = t.header.iter().position(|x| x == "Section Name");
    if let [Some(mn), Some(mu), Some(mv)] = details {
        // Details page: one row per launch per metric; rows of a launch are consecutive, so an
        // ID that comes back after another, or a metric twice for one launch, is a second run.
        let mut index: BTreeMap<u64, (usize, usize)> = BTreeMap::new();
        let mut seen: BTreeMap<(u64, String), usize> = BTreeMap::new();
        for (line, row) in &t.rows {
            let l = launch_of(row, &c, *line, source_name)?;
            let id = l.id;
            let i = match index.get(&id) {
                Some(&(i, first_line)) => {
                    if i + 1 != capture.launches.len() {
                        return duplicate(*line, first_line, id, "");
                    }
                    i
                }
                None => {
                    capture.launches.push(l);
                    index.insert(id, (capture.launches.len() - 1, *line));
                    capture.launches.len() - 1
                }
            };
            let shown = row[mn].trim();
            // Keyed by section too: a display name may appear in two sections.
            let section = section_col.map_or("", |s| row[s].trim());
            if !shown.is_empty()
                && let Some(first_line) = seen.insert((id, format!("{section}\u{0}{shown}")), *line)
            {
                return duplicate(*line, first_line, id, shown);
            }
            let metric = if used.contains(shown) {
                shown
            } else if let Some(m) = metrics::metric_for_display_name(shown) {
                m
            } else {
                // Rule rows have no metric name; other metrics are not ours to read.
                if !shown.is_empty() {
                    capture.other_metrics.insert(shown.to_string());
                }
                continue;
            };
            if let Some(v) = convert(&row[mv], &row[mu], metric, *line, source_name)? {
                capture.launches[i].metrics.insert(metric.to_string(), v);
            }
            capture.metric_names.insert(metric.to_string());
        }
        return finish_capture(capture, source_name);
    }
    // Raw page: metric columns contain "__"; an optional units row has an empty ID.
    let mut metric_cols = Vec::new();
    for (i, h) in t.header.iter().enumerate() {
        if used.contains(h.as_str()) {
            metric_cols.push((i, h.clone()));
            capture.metric_names.insert(h.clone());
        } else if h.contains("__") {
            capture.other_metrics.insert(h.clone());
        } else if !IDENTITY.contains(&h.as_str()) {
            capture.ignored_columns.push(h.clone());
        }
    }
    let mut unit_row: Option<&Vec<String>> = None;
    let mut first_line_of: BTreeMap<u64, usize> = BTreeMap::new();
    for (line, row) in &t.rows {
        if row[c.id].trim().is_empty() {
            unit_row = Some(row);
            continue;
        }
        let mut l = launch_of(row, &c, *line, source_name)?;
        if let Some(first_line) = first_line_of.insert(l.id, *line) {
            return duplicate(*line, first_line, l.id, "");
        }
        for (i, name) in &metric_cols {
            let unit = unit_row.map_or("", |u| u[*i].as_str());
            if let Some(v) = convert(&row[*i], unit, name, *line, source_name)? {
                l.metrics.insert(name.clone(), v);
            }
        }
        capture.launches.push(l);
    }
    finish_capture(capture, source_name)
}

/// A capture with launches but none of our metrics is refused with what it holds instead.
fn finish_capture(capture: Capture, source_name: &str) -> Result<Capture, NcuError> {
    if capture.metric_names.is_empty() && !capture.launches.is_empty() {
        let mut found: Vec<&str> = capture
            .other_metrics
            .iter()
            .map(String::as_str)
            .take(5)
            .collect();
        if capture.other_metrics.len() > 5 {
            found.push("…");
        }
        return Err(NcuError::NoRooflineMetrics {
            source_name: source_name.to_string(),
            found: if found.is_empty() {
                "no metric".into()
            } else {
                found.join(", ")
            },
        });
    }
    Ok(capture)
}

/// How to join captures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JoinOptions {
    /// Import an incomplete capture set (files cut short, or holding fewer launches than the
    /// others) instead of refusing it; the result is marked incomplete.
    pub allow_partial: bool,
}

/// Launches joined from captures, with what the join did.
#[derive(Debug, Clone, PartialEq)]
pub struct Joined {
    /// The launches, by ID (one per kernel name when joined per name).
    pub launches: Vec<Launch>,
    /// What was done: per-name joining, per-metric counts of an incomplete set.
    pub notes: Vec<String>,
    /// False when the set was incomplete and imported with [`JoinOptions::allow_partial`].
    pub complete: bool,
}

/// Joins captures of one run that hold different metrics, launch by launch on the `ID`;
/// refuses an incomplete set. See [`join_with`].
///
/// # Errors
/// As [`join_with`].
pub fn join(captures: Vec<(String, Capture)>) -> Result<Vec<Launch>, NcuError> {
    join_with(captures, JoinOptions::default()).map(|j| j.launches)
}

/// Joins captures that hold different metrics (the 2020 study collected one metric per run).
///
/// Launch by launch on the `ID` when the captures agree on the kernel of every ID. When they
/// disagree but every capture holds the same kernel names the same number of times (separate
/// runs of a program whose launch order changes, as with graph executors), per kernel name:
/// counters summed and rates averaged over the name's launches, as the 2020 study aggregated
/// them, with a note.
///
/// Every capture must hold every launch of the set, and no file may end inside a row;
/// otherwise the join fails naming the file and the first launch missing, unless
/// [`JoinOptions::allow_partial`], which imports what is there, marked incomplete, with
/// per-metric counts in the notes.
///
/// # Errors
/// [`NcuError::OverlappingCaptures`] when two captures hold the same metric (separate runs),
/// [`NcuError::CutShort`] and [`NcuError::MissingLaunches`] for an incomplete set, and
/// [`NcuError::MismatchedLaunch`] when an ID names different kernels and the captures do not
/// hold the same kernel names.
pub fn join_with(captures: Vec<(String, Capture)>, opts: JoinOptions) -> Result<Joined, NcuError> {
    let mut owner: BTreeMap<&str, &str> = BTreeMap::new();
    for (name, cap) in &captures {
        for m in &cap.metric_names {
            if let Some(o) = owner.insert(m, name) {
                return Err(NcuError::OverlappingCaptures {
                    first: o.to_string(),
                    second: name.clone(),
                    metric: m.clone(),
                });
            }
        }
    }
    let mut notes = Vec::new();
    let mut complete = true;
    for (name, cap) in &captures {
        if let Some(line) = cap.cut_short {
            if !opts.allow_partial {
                return Err(NcuError::CutShort {
                    source_name: name.clone(),
                    line,
                });
            }
            complete = false;
            notes.push(format!(
                "{name} ends inside a table row (line {line}), cut short: that row is left out"
            ));
        }
    }
    // Every launch of the set, with a name to show for it.
    let mut all: BTreeMap<u64, &str> = BTreeMap::new();
    for (_, cap) in &captures {
        for l in &cap.launches {
            all.entry(l.id).or_insert(&l.name);
        }
    }
    let ids: Vec<BTreeSet<u64>> = captures
        .iter()
        .map(|(_, c)| c.launches.iter().map(|l| l.id).collect())
        .collect();
    for ((name, _), held) in captures.iter().zip(&ids) {
        if let Some((&id, &kernel)) = all.iter().find(|(id, _)| !held.contains(id)) {
            if !opts.allow_partial {
                return Err(NcuError::MissingLaunches {
                    source_name: name.clone(),
                    holds: held.len(),
                    total: all.len(),
                    id,
                    name: kernel.to_string(),
                });
            }
            complete = false;
        }
    }
    if !complete {
        let mut counts: Vec<String> = Vec::new();
        for ((_, cap), held) in captures.iter().zip(&ids) {
            for m in &cap.metric_names {
                counts.push(format!("{m} {} of {}", held.len(), all.len()));
            }
        }
        notes.push(format!(
            "INCOMPLETE capture set imported with --allow-partial; launches per metric: {}",
            counts.join(", ")
        ));
    }

    let agree = captures.iter().all(|(_, cap)| {
        cap.launches
            .iter()
            .all(|l| all.get(&l.id).is_none_or(|n| *n == l.name))
    });
    if !agree {
        fn names(c: &Capture) -> Vec<&str> {
            let mut v: Vec<&str> = c.launches.iter().map(|l| l.name.as_str()).collect();
            v.sort_unstable();
            v
        }
        let first = captures.first().map(|(_, c)| names(c));
        let same_multiset = complete && captures.iter().all(|(_, c)| Some(names(c)) == first);
        if !same_multiset {
            return Err(mismatch(&captures));
        }
        let total = all.len();
        let launches = join_per_name(captures);
        notes.push(format!(
            "the captures list the same kernels in different launch orders (separate runs): joined per kernel name ({} launches of {} names), counters summed over each name's launches and rates averaged, as the 2020 study aggregated them; per-launch figures are not available",
            total,
            launches.len()
        ));
        return Ok(Joined {
            launches,
            notes,
            complete,
        });
    }

    let mut launches: Vec<Launch> = Vec::with_capacity(all.len());
    let mut at: BTreeMap<u64, usize> = BTreeMap::new();
    for (_, cap) in captures {
        for l in cap.launches {
            match at.get(&l.id) {
                Some(&i) => merge_launch(&mut launches[i], l),
                None => {
                    at.insert(l.id, launches.len());
                    launches.push(l);
                }
            }
        }
    }
    launches.sort_by_key(|l| l.id);
    Ok(Joined {
        launches,
        notes,
        complete,
    })
}

/// The first launch ID whose kernel differs between two captures, as an error.
fn mismatch(captures: &[(String, Capture)]) -> NcuError {
    let mut first: BTreeMap<u64, (&str, &str)> = BTreeMap::new();
    let mut found: Option<NcuError> = None;
    for (file, cap) in captures {
        for l in &cap.launches {
            match first.get(&l.id) {
                Some((f, n)) if *n != l.name => {
                    let e = NcuError::MismatchedLaunch {
                        id: l.id,
                        first: (*f).to_string(),
                        first_name: (*n).to_string(),
                        second: file.clone(),
                        second_name: l.name.clone(),
                    };
                    if found.as_ref().is_none_or(
                        |f| matches!(f, NcuError::MismatchedLaunch { id, .. } if *id > l.id),
                    ) {
                        found = Some(e);
                    }
                }
                Some(_) => {}
                None => {
                    first.insert(l.id, (file, &l.name));
                }
            }
        }
    }
    found.unwrap_or(NcuError::NoTable {
        source_name: "the captures".into(),
    })
}

/// Adds another capture's metrics of the same launch.
fn merge_launch(ours: &mut Launch, l: Launch) {
    ours.metrics.extend(l.metrics);
    ours.device = ours.device.take().or(l.device);
    ours.compute_capability = ours.compute_capability.take().or(l.compute_capability);
    ours.grid = ours.grid.or(l.grid);
    ours.block = ours.block.or(l.block);
}

/// Joins captures per (device, kernel name): in each, counters summed and rates averaged over
/// the name's launches; then the captures' metrics put together. The entry takes the lowest ID
/// of its name in the first capture; grid and block are kept only where all launches agree.
fn join_per_name(captures: Vec<(String, Capture)>) -> Vec<Launch> {
    type Key = (Option<String>, String);
    let mut out: BTreeMap<Key, Launch> = BTreeMap::new();
    for (ci, (_, cap)) in captures.into_iter().enumerate() {
        let mut per: BTreeMap<Key, Launch> = BTreeMap::new();
        for l in cap.launches {
            let key = (l.device.clone(), l.name.clone());
            match per.get_mut(&key) {
                None => {
                    per.insert(key, l);
                }
                Some(agg) => {
                    agg.launches += l.launches;
                    agg.id = agg.id.min(l.id);
                    if agg.grid != l.grid {
                        agg.grid = None;
                    }
                    if agg.block != l.block {
                        agg.block = None;
                    }
                    for (m, v) in l.metrics {
                        *agg.metrics.entry(m).or_insert(0.0) += v;
                    }
                }
            }
        }
        for (key, mut agg) in per {
            // Launch counts are far below 2^53.
            #[allow(clippy::cast_precision_loss)]
            let n = agg.launches as f64;
            for (m, v) in &mut agg.metrics {
                if m.ends_with(".per_second") {
                    *v /= n;
                }
            }
            match out.get_mut(&key) {
                Some(ours) if ci > 0 => {
                    let (id, grid, block) = (ours.id, ours.grid, ours.block);
                    merge_launch(ours, agg);
                    ours.id = id;
                    ours.grid = grid;
                    ours.block = block;
                }
                _ => {
                    out.insert(key, agg);
                }
            }
        }
    }
    let mut launches: Vec<Launch> = out.into_values().collect();
    launches.sort_by_key(|l| l.id);
    launches
}

/// How to turn launches into kernels.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportOptions {
    /// FLOP weights and time rule.
    pub convention: Convention,
    /// The architecture, when the CSV has no `CC` column (or to override it).
    pub arch: Option<Arch>,
    /// What the kernels' `source` says.
    pub source: DataSource,
}

/// Bundle pieces made from launches.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// One kernel per launch ([`Convention::Current`]) or per name ([`Convention::Study2020`]).
    pub kernels: Vec<Kernel>,
    /// Devices named by the CSV's `Device` and `CC` columns.
    pub devices: Vec<Device>,
    /// What was used for what, and what was missing.
    pub notes: Vec<String>,
}

/// Sums the first alternative group with any metric present; the group used is reported.
fn pick(l: &Launch, alts: &Alternatives) -> Option<(f64, usize)> {
    for (gi, (group, factor)) in alts.groups.iter().enumerate() {
        let vals: Vec<f64> = group
            .iter()
            .filter_map(|m| l.metrics.get(*m).copied())
            .collect();
        if !vals.is_empty() {
            return Some((vals.iter().sum::<f64>() * factor, gi));
        }
    }
    None
}

fn describe(alts: &Alternatives, gi: usize) -> String {
    let (group, factor) = alts.groups[gi];
    let names = group.join(" + ");
    if factor == 1.0 {
        names
    } else {
        format!("({names}) × {factor}")
    }
}

/// Turns launches into bundle kernels with the metric table of their architecture.
///
/// # Errors
/// [`NcuError::NoTime`] for a launch without a time metric.
pub fn to_kernels(launches: &[Launch], opts: &ImportOptions) -> Result<Imported, NcuError> {
    let mut notes = BTreeSet::new();
    let mut devices: Vec<Device> = Vec::new();
    let mut kernels = Vec::with_capacity(launches.len());
    let study = opts.convention == Convention::Study2020;
    let mut untimed: Vec<&Launch> = Vec::new();
    for l in launches {
        let arch = match (opts.arch, &l.compute_capability) {
            (Some(a), _) => Some(a),
            (None, Some(cc)) => match Arch::from_compute_capability(cc) {
                Ok((a, note)) => {
                    notes.extend(note);
                    Some(a)
                }
                Err(e) => {
                    notes.insert(e);
                    None
                }
            },
            (None, None) => None,
        };
        if let Some(d) = &l.device
            && !devices.iter().any(|x| x.id == *d)
        {
            let mut dev = Device::new(
                d.clone(),
                if d.parse::<u32>().is_ok() {
                    format!("GPU {d}")
                } else {
                    d.clone()
                },
            );
            dev.compute_capability.clone_from(&l.compute_capability);
            devices.push(dev);
        }

        let time_s = match (
            l.metrics.get(time::DURATION),
            l.metrics.get(time::CYCLES),
            l.metrics.get(time::CYCLES_PER_SECOND),
        ) {
            (Some(d), _, _) if !study && *d > 0.0 => *d,
            (_, Some(c), Some(r)) if *r > 0.0 && *c > 0.0 => {
                if !study && l.metrics.contains_key(time::DURATION) {
                    notes.insert(format!(
                        "{} was zero for some launches: time from SM cycles over the SM clock",
                        time::DURATION
                    ));
                }
                c / r
            }
            (Some(d), _, _) if *d > 0.0 => *d,
            _ => {
                untimed.push(l);
                continue;
            }
        };

        let mut flops = Flops::default();
        for c in &metrics::CUDA_CORE_FLOPS {
            if let Some(v) = l.metrics.get(c.metric) {
                let w = if study { c.weight_2020 } else { c.weight };
                let cur = flops.get(c.datapath).unwrap_or(0.0);
                flops.set(c.datapath, Some(cur + w * v));
            }
        }
        match (arch, l.metrics.get(metrics::VOLTA_TENSOR_INST)) {
            (Some(Arch::Volta), Some(v)) => {
                flops.tensor_fp16 = Some(metrics::VOLTA_FLOPS_PER_TENSOR_INST * v);
                notes.insert(format!(
                    "tensor FLOPs as {} × {} (Volta HMMA.884, counted as FP16 tensor work)",
                    metrics::VOLTA_FLOPS_PER_TENSOR_INST,
                    metrics::VOLTA_TENSOR_INST
                ));
            }
            (_, Some(_)) => {
                notes.insert(format!(
                    "{} was collected but counts instructions whose FLOPs depend on the GPU; it is used on Volta only (pass the architecture if this is a V100)",
                    metrics::VOLTA_TENSOR_INST
                ));
            }
            _ => {}
        }
        for d in Datapath::ALL {
            if let Some(alts) = metrics::tensor_counters(d, arch)
                && let Some((v, gi)) = pick(l, &alts)
            {
                flops.set(d, Some(v));
                notes.insert(format!("{} FLOPs from {}", d.label(), describe(&alts, gi)));
            }
        }

        let mut bytes = Bytes::default();
        for level in MemoryLevel::KERNEL_LEVELS {
            let Some(alts) = metrics::byte_counters(level, arch) else {
                continue;
            };
            if let Some((v, gi)) = pick(l, &alts) {
                match level {
                    MemoryLevel::L1 => bytes.l1 = Some(v),
                    MemoryLevel::L2 => bytes.l2 = Some(v),
                    _ => bytes.hbm = Some(v),
                }
                if gi > 0 {
                    notes.insert(format!(
                        "{} bytes from {} ({} not collected)",
                        level.label(),
                        describe(&alts, gi),
                        describe(&alts, 0)
                    ));
                }
            }
        }

        let mut k = Kernel::new(l.name.clone(), time_s, opts.source);
        k.launches = l.launches;
        k.device.clone_from(&l.device);
        k.grid = l.grid;
        k.block = l.block;
        k.flops = flops;
        k.bytes = bytes;
        kernels.push(k);
    }

    if let Some(first) = untimed.first() {
        if kernels.is_empty() {
            return Err(NcuError::NoTime {
                id: first.id,
                name: first.name.clone(),
            });
        }
        notes.insert(format!(
            "{} launch{} without a time metric left out (the first: ID {}, {})",
            untimed.len(),
            if untimed.len() == 1 { "" } else { "es" },
            first.id,
            first.name
        ));
    }
    for (level, have) in
        MemoryLevel::KERNEL_LEVELS.map(|lv| (lv, kernels.iter().any(|k| k.bytes.get(lv).is_some())))
    {
        if !have && !kernels.is_empty() {
            notes.insert(format!(
                "no {} byte counter in the data: those points are left out",
                level.label()
            ));
        }
    }

    if study {
        kernels = study_2020_aggregate(launches, &kernels);
        notes.insert(
            "2020-study convention: hadd and hmul count 1 FLOP, hfma 2; a kernel's time is Σ cycles / (Σ clock rate / launches)".into(),
        );
    }
    Ok(Imported {
        kernels,
        devices,
        notes: notes.into_iter().collect(),
    })
}

/// The 2020 study's aggregation: counters summed by name, and the time of a name taken as
/// `Σ sm__cycles_elapsed.avg / (Σ sm__cycles_elapsed.avg.per_second / launches)`, the launches'
/// cycles over their mean clock rate.
fn study_2020_aggregate(launches: &[Launch], per_launch: &[Kernel]) -> Vec<Kernel> {
    let mut cycles: BTreeMap<(Option<&str>, &str), (f64, f64)> = BTreeMap::new();
    for l in launches {
        let e = cycles
            .entry((l.device.as_deref(), l.name.as_str()))
            .or_default();
        e.0 += l.metrics.get(time::CYCLES).copied().unwrap_or(f64::NAN);
        // A per-name entry carries its launches' mean rate: Σ rate = mean × launches.
        #[allow(clippy::cast_precision_loss)]
        let n = l.launches as f64;
        e.1 += n * l
            .metrics
            .get(time::CYCLES_PER_SECOND)
            .copied()
            .unwrap_or(f64::NAN);
    }
    let mut agg = aggregate_by_name(per_launch);
    for k in &mut agg {
        if let Some((c, r)) = cycles.get(&(k.device.as_deref(), k.name.as_str())) {
            // Launch counts are far below 2^53.
            #[allow(clippy::cast_precision_loss)]
            let n = k.launches as f64;
            let t = c / (r / n);
            if t.is_finite() && t > 0.0 {
                k.time = KernelTime {
                    total_s: t,
                    per_launch: None,
                };
            }
        }
    }
    agg
}

#[cfg(test)]
mod tests {
    use super::*;

    const RAW: &str = "==PROF== Connected to process 42\nhello from the program\n\
\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Some New Column\",\"dram__bytes.sum\",\"gpu__time_duration.sum\",\"sm__sass_thread_inst_executed_op_ffma_pred_on.sum\",\"sm__sass_thread_inst_executed_op_hfma_pred_on.sum\",\"lts__t_bytes.sum\",\"l1tex__lsu_writeback_active_mem_lgds.sum\",\"sm__ops_path_tensor_src_bf16_dst_fp32.sum\",\"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum\"\n\
\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"Mbyte\",\"usecond\",\"inst\",\"inst\",\"byte\",\"\",\"\",\"\"\n\
\"0\",\"42\",\"python\",\"host\",\"void gemm<float>(float*)\",\"1\",\"7\",\"(256, 1, 1)\",\"(1024, 2, 1)\",\"0\",\"9.0\",\"x\",\"1.5\",\"10\",\"1,000\",\"10\",\"4000000\",\"100\",\"2048\",\"2048\"\n\
\"1\",\"42\",\"python\",\"host\",\"copy\",\"1\",\"7\",\"(128, 1, 1)\",\"(64, 1, 1)\",\"0\",\"9.0\",\"x\",\"2\",\"5\",\"0\",\"0\",\"n/a\",\"10\",\"0\",\"0\"\n\
==PROF== Disconnected from process 42\n";

    #[test]
    fn raw_page_with_units_row() {
        let c = parse_capture(RAW, "raw.csv").unwrap();
        assert_eq!(c.launches.len(), 2);
        assert_eq!(c.ignored_columns, vec!["Some New Column".to_string()]);
        let l = &c.launches[0];
        assert_eq!(l.metrics["dram__bytes.sum"], 1.5e6);
        assert_eq!(l.metrics["gpu__time_duration.sum"], 1e-5);
        assert_eq!(
            l.metrics["sm__sass_thread_inst_executed_op_ffma_pred_on.sum"],
            1000.0
        );
        assert_eq!(l.grid, Some([1024, 2, 1]));
        assert_eq!(l.block, Some([256, 1, 1]));
        assert_eq!(l.compute_capability.as_deref(), Some("9.0"));
        assert!(
            !c.launches[1].metrics.contains_key("lts__t_bytes.sum"),
            "n/a is missing"
        );
    }

    #[test]
    fn raw_page_to_kernels_on_hopper() {
        let c = parse_capture(RAW, "raw.csv").unwrap();
        let opts = ImportOptions {
            convention: Convention::Current,
            arch: None,
            source: DataSource::Import,
        };
        let imp = to_kernels(&join(vec![("raw.csv".into(), c)]).unwrap(), &opts).unwrap();
        let k = &imp.kernels[0];
        assert_eq!(k.flops.fp32, Some(2000.0));
        assert_eq!(
            k.flops.fp16,
            Some(40.0),
            "hfma counts 4 FLOPs by the current convention"
        );
        // The aggregate wins over its per-instruction part: no double counting.
        assert_eq!(k.flops.tensor_bf16, Some(2048.0));
        assert_eq!(k.bytes.l1, Some(12800.0));
        assert_eq!(k.bytes.hbm, Some(1.5e6));
        assert!((k.time.total_s - 10e-6).abs() < 1e-18);
        assert_eq!(k.device.as_deref(), Some("0"));
        assert_eq!(imp.devices[0].compute_capability.as_deref(), Some("9.0"));
        assert!(
            imp.notes
                .iter()
                .any(|n| n
                    .starts_with("L1 bytes from (l1tex__lsu_writeback_active_mem_lgds.sum) × 128")),
            "{:?}",
            imp.notes
        );
    }

    const DETAILS: &str = "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Kernel Time\",\"Context\",\"Stream\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\
\"0\",\"1\",\"p\",\"h\",\"k\",\"t\",\"1\",\"7\",\"s\",\"sm__cycles_elapsed.avg\",\"cycle\",\"1,000\"\n\
\"0\",\"1\",\"p\",\"h\",\"k\",\"t\",\"1\",\"7\",\"s\",\"sm__cycles_elapsed.avg.per_second\",\"cycle/usecond\",\"1,000\"\n\
\"1\",\"1\",\"p\",\"h\",\"k\",\"t\",\"1\",\"7\",\"s\",\"sm__cycles_elapsed.avg\",\"cycle\",\"3,000\"\n\
\"1\",\"1\",\"p\",\"h\",\"k\",\"t\",\"1\",\"7\",\"s\",\"sm__cycles_elapsed.avg.per_second\",\"cycle/nsecond\",\"1.5\"\n";

    #[test]
    fn details_page_and_the_study_time_rule() {
        let c = parse_capture(DETAILS, "d.csv").unwrap();
        assert_eq!(c.launches.len(), 2);
        assert_eq!(
            c.launches[0].metrics["sm__cycles_elapsed.avg.per_second"],
            1e9
        );
        let launches = join(vec![("d.csv".into(), c)]).unwrap();
        let current = to_kernels(
            &launches,
            &ImportOptions {
                convention: Convention::Current,
                arch: None,
                source: DataSource::Import,
            },
        )
        .unwrap();
        // Per launch: 1000 / 1e9 = 1 µs and 3000 / 1.5e9 = 2 µs.
        assert_eq!(current.kernels.len(), 2);
        assert!((current.kernels[1].time.total_s - 2e-6).abs() < 1e-18);
        let study = to_kernels(
            &launches,
            &ImportOptions {
                convention: Convention::Study2020,
                arch: None,
                source: DataSource::Import,
            },
        )
        .unwrap();
        // One name: 4000 cycles / (2.5e9 / 2) = 3.2 µs, not 1 + 2 = 3 µs.
        assert_eq!(study.kernels.len(), 1);
        assert_eq!(study.kernels[0].launches, 2);
        assert!((study.kernels[0].time.total_s - 3.2e-6).abs() < 1e-18);
    }

    #[test]
    fn joining_captures() {
        let a = parse_capture(DETAILS, "a.csv").unwrap();
        let b = parse_capture(DETAILS, "b.csv").unwrap();
        let e = join(vec![("a.csv".into(), a.clone()), ("b.csv".into(), b)]).unwrap_err();
        assert!(matches!(e, NcuError::OverlappingCaptures { .. }), "{e}");
        let other = DETAILS
            .replace("sm__cycles_elapsed.avg.per_second", "X")
            .replace("sm__cycles_elapsed.avg", "dram__bytes.sum")
            .replace("\"X\"", "\"lts__t_bytes.sum\"")
            .replace("\"cycle\"", "\"byte\"")
            .replace("cycle/usecond", "Kbyte")
            .replace("cycle/nsecond", "Kbyte")
            .replace(
                "\"1\",\"1\",\"p\",\"h\",\"k\"",
                "\"1\",\"1\",\"p\",\"h\",\"other\"",
            );
        let c = parse_capture(&other, "c.csv").unwrap();
        let e = join(vec![("a.csv".into(), a), ("c.csv".into(), c)]).unwrap_err();
        assert!(
            e.to_string()
                .contains("launch 1 is \"k\" in a.csv but \"other\" in c.csv"),
            "{e}"
        );
    }

    #[test]
    fn text_valued_and_unknown_metrics_are_left_alone() {
        let raw = "\"ID\",\"Kernel Name\",\"launch__func_cache_config\",\"gpu__time_duration.sum\",\"launch__cluster_scheduling_policy\"\n\
\"\",\"\",\"\",\"ns\",\"SM\"\n\
\"0\",\"k\",\"CachePreferNone\",\"1500\",\"PolicySpread\"\n";
        let c = parse_capture(raw, "r.csv").unwrap();
        assert_eq!(c.launches[0].metrics["gpu__time_duration.sum"], 1.5e-6);
        assert_eq!(c.other_metrics.len(), 2);
        let only_other = "\"ID\",\"Kernel Name\",\"launch__grid_size\"\n\"0\",\"k\",\"64\"\n";
        let e = parse_capture(only_other, "o.csv").unwrap_err();
        assert!(
            e.to_string().contains(
                "none of the metrics the roofline needs is in this file (it has launch__grid_size)"
            ),
            "{e}"
        );
        // Details page with display names and rule rows.
        let details = "\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\",\"Rule Name\"\n\
\"0\",\"k\",\"GPU Speed Of Light Throughput\",\"Duration\",\"usecond\",\"2.50\",\"\"\n\
\"0\",\"k\",\"Launch Statistics\",\"Cluster Scheduling Policy\",\"\",\"PolicySpread\",\"\"\n\
\"0\",\"k\",\"SOL\",\"\",\"\",\"\",\"SOLBottleneck\"\n";
        let c = parse_capture(details, "d.csv").unwrap();
        assert_eq!(c.launches[0].metrics["gpu__time_duration.sum"], 2.5e-6);
        assert!(!c.metric_names.contains(""));
    }

    #[test]
    fn launches_without_time_are_left_out_with_a_note() {
        let a = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"dram__bytes.sum\"\n\"0\",\"k\",\"1000\",\"64\"\n\"1\",\"k\",\"n/a\",\"64\"\n";
        let c = parse_capture(a, "a.csv").unwrap();
        let opts = ImportOptions {
            convention: Convention::Current,
            arch: None,
            source: DataSource::Import,
        };
        let imp = to_kernels(&join(vec![("a.csv".into(), c)]).unwrap(), &opts).unwrap();
        assert_eq!(imp.kernels.len(), 1);
        assert!(
            imp.notes
                .iter()
                .any(|n| n.starts_with("1 launch without a time metric left out")),
            "{:?}",
            imp.notes
        );
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = parse_capture("nothing here", "x.csv").unwrap_err();
        assert!(
            e.to_string()
                .contains("x.csv: no Nsight Compute table found")
        );
        let bad = DETAILS.replace("\"1,000\"\n\"0\"", "\"lots\"\n\"0\"");
        let e = parse_capture(&bad, "d.csv").unwrap_err();
        assert_eq!(
            e.to_string(),
            "d.csv, line 2: sm__cycles_elapsed.avg = \"lots\" is not a number"
        );
        let bad = DETAILS.replace("cycle/usecond", "cycle/fortnight");
        let e = parse_capture(&bad, "d.csv").unwrap_err();
        assert!(
            e.to_string().contains("unknown unit \"cycle/fortnight\""),
            "{e}"
        );
    }

    /// A one-metric raw capture of launches `(id, name, value)`, with a units row.
    fn one_metric(metric: &str, unit: &str, rows: &[(u64, &str, &str)]) -> String {
        let mut t = format!("\"ID\",\"Kernel Name\",\"{metric}\"\n\"\",\"\",\"{unit}\"\n");
        for (id, name, v) in rows {
            t.push_str(&format!("\"{id}\",\"{name}\",\"{v}\"\n"));
        }
        t
    }

    #[test]
    fn misplaced_commas_are_refused_with_the_line() {
        let good = one_metric(
            "dram__bytes.sum",
            "byte",
            &[(0, "k", "1,024"), (1, "k", "10,240,000")],
        );
        let c = parse_capture(&good, "g.csv").unwrap();
        assert_eq!(c.launches[1].metrics["dram__bytes.sum"], 10_240_000.0);
        for bad in ["1,5", "5715,88"] {
            let text = one_metric(
                "sm__cycles_elapsed.avg",
                "cycle",
                &[(0, "k", "7"), (1, "k", bad)],
            );
            let e = parse_capture(&text, "c.csv").unwrap_err();
            assert!(matches!(e, NcuError::BadSeparator { line: 4, .. }), "{e:?}");
            assert!(
                e.to_string().starts_with(&format!(
                    "c.csv, line 4: sm__cycles_elapsed.avg = \"{bad}\""
                )),
                "{e}"
            );
        }
    }

    #[test]
    fn a_unit_that_does_not_fit_the_metric_is_refused() {
        for (metric, unit) in [
            ("sm__cycles_elapsed.avg", "msecond"),
            ("dram__bytes.sum", "%"),
            ("gpu__time_duration.sum", "byte"),
            ("sm__cycles_elapsed.avg.per_second", "cycle"),
            (
                "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
                "usecond",
            ),
        ] {
            let text = one_metric(metric, unit, &[(0, "k", "5")]);
            let e = parse_capture(&text, "u.csv").unwrap_err();
            assert!(
                matches!(&e, NcuError::UnitMismatch { line: 3, .. }),
                "{metric} in {unit}: {e:?}"
            );
            assert!(
                e.to_string()
                    .contains(&format!("unit \"{unit}\" does not fit {metric}")),
                "{e}"
            );
        }
        // The units ncu writes for them are accepted.
        for (metric, unit) in [
            ("sm__cycles_elapsed.avg", "cycle"),
            ("dram__bytes.sum", "Mbyte"),
            ("gpu__time_duration.sum", "nsecond"),
            ("sm__cycles_elapsed.avg.per_second", "cycle/usecond"),
            ("sm__inst_executed_pipe_tensor.sum", "inst"),
            ("l1tex__lsu_writeback_active_mem_lgds.sum", "cycle"),
        ] {
            parse_capture(&one_metric(metric, unit, &[(0, "k", "5")]), "u.csv")
                .unwrap_or_else(|e| panic!("{metric} in {unit}: {e}"));
        }
    }

    #[test]
    fn duplicate_launches_and_concatenated_runs_are_refused() {
        let dup = one_metric(
            "dram__bytes.sum",
            "byte",
            &[(0, "k", "1"), (1, "k", "2"), (0, "k", "3")],
        );
        let e = parse_capture(&dup, "d.csv").unwrap_err();
        assert_eq!(
            e.to_string(),
            "d.csv, line 5: launch 0 appears a second time (first at line 3); a file must hold one run: were two captures concatenated?"
        );
        let run = one_metric("dram__bytes.sum", "byte", &[(0, "k", "1")]);
        let e = parse_capture(&format!("{run}{run}"), "two.csv").unwrap_err();
        assert!(matches!(e, NcuError::SecondHeader { line: 4, .. }), "{e:?}");
        // Details page: a launch coming back after another, or one metric twice.
        let again = format!("{DETAILS}{}", DETAILS.lines().nth(1).unwrap());
        let e = parse_capture(&again, "d.csv").unwrap_err();
        assert!(
            matches!(
                e,
                NcuError::DuplicateLaunch {
                    line: 6,
                    first_line: 2,
                    id: 0,
                    ..
                }
            ),
            "{e:?}"
        );
        let lines: Vec<&str> = DETAILS.lines().collect();
        let twice = [lines[0], lines[1], lines[1], lines[2]].join("\n");
        let e = parse_capture(&twice, "d.csv").unwrap_err();
        assert!(
            e.to_string()
                .contains("launch 0 (sm__cycles_elapsed.avg) appears a second time"),
            "{e}"
        );
    }

    /// Found by the `ncu_csv` fuzz target: a launch with an empty kernel name was let through
    /// and refused only when the bundle was validated, naming the bundle's JSON path instead of
    /// the CSV line.
    #[test]
    fn a_launch_without_a_kernel_name_is_refused_with_its_line() {
        let csv = one_metric("dram__bytes.sum", "byte", &[(0, "k", "1"), (1, " ", "2")]);
        let e = parse_capture(&csv, "n.csv").unwrap_err();
        assert_eq!(e.to_string(), "n.csv, line 4: launch 1 has no kernel name");
    }

    fn set(partial: &str) -> Vec<(String, Capture)> {
        let rows: Vec<(u64, &str, &str)> = (0..5)
            .map(|i| (i, if i % 2 == 0 { "a" } else { "b" }, "1000"))
            .collect();
        let time = one_metric("gpu__time_duration.sum", "nsecond", &rows);
        vec![
            ("time.csv".into(), parse_capture(&time, "time.csv").unwrap()),
            (
                "dram.csv".into(),
                parse_capture(partial, "dram.csv").unwrap(),
            ),
        ]
    }

    #[test]
    fn an_incomplete_capture_set_is_refused_unless_allowed() {
        let rows: Vec<(u64, &str, &str)> = (0..5)
            .map(|i| (i, if i % 2 == 0 { "a" } else { "b" }, "64"))
            .collect();
        let full = one_metric("dram__bytes.sum", "byte", &rows);
        assert!(join(set(&full)).is_ok());
        // Only the first three launches.
        let first3 = one_metric("dram__bytes.sum", "byte", &rows[..3]);
        let e = join(set(&first3)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "dram.csv holds 3 of the 5 launches of this capture set; the first missing is launch 3 (b): the file was cut short or captured with a launch limit; capture it again, or pass --allow-partial to import what is there, marked incomplete"
        );
        let j = join_with(
            set(&first3),
            JoinOptions {
                allow_partial: true,
            },
        )
        .unwrap();
        assert!(!j.complete);
        assert_eq!(j.launches.len(), 5);
        assert!(
            j.notes
                .iter()
                .any(|n| n.contains("gpu__time_duration.sum 5 of 5")
                    && n.contains("dram__bytes.sum 3 of 5")),
            "{:?}",
            j.notes
        );
        // Cut inside the last row, at every byte of it.
        let last_row = full[..full.len() - 1].rfind('\n').unwrap() + 1;
        for cut in last_row + 1..full.len() - 1 {
            let e = join(set(&full[..cut])).unwrap_err();
            assert!(
                matches!(&e, NcuError::CutShort { line: 7, .. }),
                "cut at {cut}: {e:?}"
            );
            let j = join_with(
                set(&full[..cut]),
                JoinOptions {
                    allow_partial: true,
                },
            )
            .unwrap();
            assert!(!j.complete);
            assert!(
                !j.launches[4].metrics.contains_key("dram__bytes.sum"),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn captures_in_another_launch_order_are_joined_per_kernel_name() {
        // The same kernels, the same counts, another order: a, b, a, b, a then b, a, a, b, a.
        let order = ["b", "a", "a", "b", "a"];
        let rows: Vec<(u64, &str, &str)> = order
            .iter()
            .enumerate()
            .map(|(i, n)| (i as u64, *n, if *n == "a" { "10" } else { "100" }))
            .collect();
        let j = join_with(
            set(&one_metric("dram__bytes.sum", "byte", &rows)),
            JoinOptions::default(),
        )
        .unwrap();
        assert!(j.complete);
        assert_eq!(j.launches.len(), 2, "one entry per name");
        let a = j.launches.iter().find(|l| l.name == "a").unwrap();
        assert_eq!(a.launches, 3);
        assert_eq!(a.metrics["dram__bytes.sum"], 30.0);
        assert!((a.metrics["gpu__time_duration.sum"] - 3e-6).abs() < 1e-18);
        assert!(
            j.notes.iter().any(|n| n.contains("joined per kernel name")),
            "{:?}",
            j.notes
        );
        let imp = to_kernels(
            &j.launches,
            &ImportOptions {
                convention: Convention::Current,
                arch: None,
                source: DataSource::Import,
            },
        )
        .unwrap();
        assert_eq!(imp.kernels.iter().map(|k| k.launches).sum::<u64>(), 5);
        // Other names, or other counts: refused as before.
        let rows: Vec<(u64, &str, &str)> = ["b", "a", "b", "b", "a"]
            .iter()
            .enumerate()
            .map(|(i, n)| (i as u64, *n, "1"))
            .collect();
        let e = join(set(&one_metric("dram__bytes.sum", "byte", &rows))).unwrap_err();
        assert!(
            e.to_string()
                .contains("launch 0 is \"a\" in time.csv but \"b\" in dram.csv"),
            "{e}"
        );
    }
}
