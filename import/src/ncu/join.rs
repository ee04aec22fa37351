//! Several captures of one run joined launch by launch on their `ID` (the 2020 study collected
//! one metric per run), or per kernel name when separate runs changed the launch order.

use std::collections::{BTreeMap, BTreeSet};

use crate::ncu::capture::{Capture, Launch};
use crate::ncu::error::NcuError;

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
/// Every capture must hold every launch of the set, no file may end inside a row, and no row
/// may be broken; otherwise the join fails naming the file and the line or the first launch
/// missing, unless
/// [`JoinOptions::allow_partial`], which imports what is there, marked incomplete, with
/// per-metric counts in the notes.
///
/// # Errors
/// [`NcuError::OverlappingCaptures`] when two captures hold the same metric (separate runs),
/// [`NcuError::BrokenRow`], [`NcuError::CutShort`] and [`NcuError::MissingLaunches`] for an
/// incomplete set, and
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
        for b in &cap.broken_rows {
            if !opts.allow_partial {
                return Err(NcuError::BrokenRow {
                    source_name: name.clone(),
                    line: b.line,
                    what: b.what(),
                });
            }
            complete = false;
            notes.push(format!(
                "{name}, line {}: a broken row, left out (a launch row that {})",
                b.line,
                b.what()
            ));
        }
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
    ours.missing.extend(l.missing);
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
                    agg.missing.extend(l.missing);
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
