//! Nsight Compute CSV text into a [`Capture`]: both forms of the table (the raw page, one row per
//! launch and one column per metric with an optional units row; the details page, one row per
//! launch per metric), in any units, each value converted to SI base units and checked as read.

use std::collections::{BTreeMap, BTreeSet};

use crate::ncu::csv::{Table, find_table};
use crate::ncu::error::{NcuError, Scale};
use crate::ncu::metrics::{self};
use crate::ncu::units::{self, Dimension};

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
    /// Metrics the capture holds that this launch has no value for (`n/a`, an empty cell, no
    /// row on a details page): a figure that needs one of them is unknown for it.
    pub missing: BTreeSet<String>,
    /// The launch for messages, with where it was read (`FILE, line N: launch ID (NAME)`; a
    /// trace's `event N (cuda_profiler_range "NAME")`), when known.
    pub at: Option<String>,
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
    /// Lines that start as launch rows but are broken (too few or too many fields, a broken
    /// quote), left out; [`crate::ncu::join_with`] refuses them unless `allow_partial`.
    pub broken_rows: Vec<crate::ncu::csv::BrokenRow>,
}

impl Capture {
    /// The note on the columns this build does not know (`None` when there is none): the first
    /// 20 named, the rest counted, so that a table of thousands of columns gives a line.
    pub fn ignored_note(&self, source_name: &str) -> Option<String> {
        const SHOWN: usize = 20;
        if self.ignored_columns.is_empty() {
            return None;
        }
        let mut list = self.ignored_columns[..self.ignored_columns.len().min(SHOWN)].join(", ");
        if self.ignored_columns.len() > SHOWN {
            list.push_str(&format!(
                " … and {} more",
                self.ignored_columns.len() - SHOWN
            ));
        }
        Some(format!(
            "{source_name}: ignored columns this build does not know: {list}"
        ))
    }

    /// The notes an import of this capture carries: the columns ignored, and the lines inside
    /// the table that were not rows.
    pub fn notes(&self, source_name: &str) -> Vec<String> {
        let mut notes: Vec<String> = self.ignored_note(source_name).into_iter().collect();
        if !self.skipped_lines.is_empty() {
            notes.push(format!(
                "{source_name}: {} line(s) inside the table were not CSV rows and were skipped",
                self.skipped_lines.len()
            ));
        }
        notes
    }
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
        missing: BTreeSet::new(),
        at: Some(format!(
            "{source_name}, line {line}: launch {id} ({})",
            shorten(row[c.name].trim())
        )),
    })
}

/// What a metric counts, from its name: the dimensions its unit may have, and, for a value
/// whose unit has a scale (a time, a rate, bytes, cycles), what it is and what its unit may be,
/// for the message when the unit is missing. Counts of instructions and operations have no
/// scale: without a unit they are read as they are.
fn expected_dimension(
    metric: &str,
) -> (&'static str, &'static [Dimension], Option<&'static Scale>) {
    use Dimension as D;
    if metric.ends_with(".per_second") && metric.contains("cycles") {
        (
            "a clock rate (cycles per second)",
            &[D::Frequency],
            Some(&Scale {
                what: "a clock rate",
                hint: "cycle/second or cycle/nsecond?",
            }),
        )
    } else if metric.ends_with(".per_second") {
        (
            "a rate (per second)",
            &[D::Rate],
            Some(&Scale {
                what: "a rate",
                hint: "cycle/second or cycle/nsecond?",
            }),
        )
    } else if metric.starts_with("gpu__time_duration") {
        (
            "time",
            &[D::Time],
            Some(&Scale {
                what: "a time",
                hint: "Nsight Compute's base unit for a duration is the nanosecond",
            }),
        )
    } else if metric.starts_with("sm__cycles_elapsed") {
        (
            "cycles",
            &[D::Cycles],
            Some(&Scale {
                what: "a cycle count",
                hint: "cycle, or Kcycle?",
            }),
        )
    } else if metric.contains("bytes") {
        (
            "bytes",
            &[D::Bytes],
            Some(&Scale {
                what: "a byte count",
                hint: "byte, Kbyte or Mbyte?",
            }),
        )
    } else {
        (
            "events (instructions, operations, cycles)",
            &[D::None, D::Count, D::Cycles],
            None,
        )
    }
}

/// Where one value is, and why its unit may be missing, for [`convert`]'s messages.
struct At<'a> {
    metric: &'a str,
    line: usize,
    source_name: &'a str,
    /// Why the unit is empty, when it is: no units row, or an empty cell.
    no_unit: &'static str,
}

fn convert(value: &str, unit: &str, at: &At<'_>) -> Result<Option<f64>, NcuError> {
    let At {
        metric,
        line,
        source_name,
        no_unit,
    } = *at;
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
    let (expected, fits, scaled) = expected_dimension(metric);
    if let Some(scale) = scaled
        && unit.trim().is_empty()
    {
        return Err(NcuError::NoUnit {
            source_name: source_name.to_string(),
            line,
            metric: metric.to_string(),
            value: t.to_string(),
            why: no_unit,
            scale,
        });
    }
    if v < 0.0 {
        return Err(NcuError::Negative {
            source_name: source_name.to_string(),
            line,
            metric: metric.to_string(),
            value: t.to_string(),
        });
    }
    let base = units::to_base(v, unit).ok_or_else(|| NcuError::BadUnit {
        source_name: source_name.to_string(),
        line,
        metric: metric.to_string(),
        unit: unit.to_string(),
    })?;
    // A value written non-zero that reads as zero is below what a double holds.
    let mantissa = t.split(['e', 'E']).next().unwrap_or_default();
    if base == 0.0 && mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
        return Err(NcuError::Underflow {
            source_name: source_name.to_string(),
            line,
            metric: metric.to_string(),
            value: t.to_string(),
        });
    }
    if !fits.contains(&units::dimension(unit)) {
        return Err(NcuError::UnitMismatch {
            source_name: source_name.to_string(),
            line,
            metric: metric.to_string(),
            unit: unit.trim().to_string(),
            expected,
        });
    }
    // `-0` is a zero: `+ 0.0` makes it a positive one.
    Ok(Some(base + 0.0))
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
    const DETAILS: [&str; 3] = ["Metric Name", "Metric Unit", "Metric Value"];
    let details = DETAILS.map(|h| t.header.iter().position(|x| x == h));
    if details.iter().any(Option::is_some) && details.iter().any(Option::is_none) {
        // A details page with a column missing: not a raw page either.
        let (present, missing): (Vec<_>, Vec<_>) =
            DETAILS.iter().zip(details).partition(|(_, d)| d.is_some());
        let names = |v: Vec<(&&str, Option<usize>)>| {
            v.iter()
                .map(|(h, _)| format!("{h:?}"))
                .collect::<Vec<_>>()
                .join(" and ")
        };
        return Err(NcuError::IncompleteDetails {
            source_name: source_name.to_string(),
            present: names(present),
            missing: names(missing),
        });
    }
    let used = metrics::used_metrics();
    let mut capture = Capture {
        launches: Vec::new(),
        metric_names: BTreeSet::new(),
        ignored_columns: Vec::new(),
        skipped_lines: t.skipped_lines.clone(),
        other_metrics: BTreeSet::new(),
        cut_short: t.cut_short,
        broken_rows: t.broken_rows.clone(),
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
        // The line each launch's metric value (in its `metrics`) was last read from: one metric
        // may be shown in two sections (the same value), never with two values.
        let mut value_lines: BTreeMap<(u64, &str), usize> = BTreeMap::new();
        for (line, row) in &t.rows {
            let l = launch_of(row, &c, *line, source_name)?;
            let id = l.id;
            let i = match index.get(&id) {
                Some(&(i, first_line)) => {
                    if i + 1 != capture.launches.len() {
                        return duplicate(*line, first_line, id, "");
                    }
                    if capture.launches[i].name != l.name {
                        return Err(NcuError::NameChanged {
                            source_name: source_name.to_string(),
                            line: *line,
                            first_line,
                            id,
                            first: shorten(&capture.launches[i].name),
                            second: shorten(&l.name),
                        });
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
            let at = At {
                metric,
                line: *line,
                source_name,
                no_unit: "its unit cell is empty",
            };
            if let Some(v) = convert(&row[mv], &row[mu], &at)? {
                let held = &mut capture.launches[i].metrics;
                if let Some(&first_line) = value_lines.get(&(id, metric))
                    && let Some(&first) = held.get(metric)
                    && first != v
                {
                    return Err(NcuError::ConflictingValues {
                        source_name: source_name.to_string(),
                        line: *line,
                        first_line,
                        id,
                        metric: metric.to_string(),
                        first,
                        second: v,
                    });
                }
                value_lines.insert((id, metric), *line);
                held.insert(metric.to_string(), v);
            }
            capture.metric_names.insert(metric.to_string());
        }
        return finish_capture(capture, source_name);
    }
    // Raw page: metric columns contain "__"; an optional units row has an empty ID.
    let mut metric_cols: Vec<(usize, String)> = Vec::new();
    for (i, h) in t.header.iter().enumerate() {
        if used.contains(h.as_str()) {
            if let Some((first, _)) = metric_cols.iter().find(|(_, m)| m == h) {
                return Err(NcuError::DuplicateColumn {
                    source_name: source_name.to_string(),
                    line: t.header_line,
                    metric: h.clone(),
                    first: first + 1,
                    second: i + 1,
                });
            }
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
            let at = At {
                metric: name,
                line: *line,
                source_name,
                no_unit: if unit_row.is_some() {
                    "its unit cell is empty"
                } else {
                    "the table has no units row under its header"
                },
            };
            if let Some(v) = convert(&row[*i], unit, &at)? {
                l.metrics.insert(name.clone(), v);
            }
        }
        capture.launches.push(l);
    }
    finish_capture(capture, source_name)
}

/// A kernel name in a message, at most 100 characters.
fn shorten(s: &str) -> String {
    roofline_model::analysis::names::truncate(s, 100)
}

/// A capture with launches but none of our metrics is refused with what it holds instead;
/// otherwise each launch learns which of the capture's metrics it has no value for.
fn finish_capture(mut capture: Capture, source_name: &str) -> Result<Capture, NcuError> {
    for l in &mut capture.launches {
        l.missing = capture
            .metric_names
            .iter()
            .filter(|m| !l.metrics.contains_key(*m))
            .cloned()
            .collect();
    }
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
