//! Counters from one trace, times from another. Kineto's CUPTI range profiler
//! (`profiler_measure_per_kernel=True`) records per-kernel counters but no kernel events and no
//! kernel times (its ranges' time stamps are spread evenly over the profiling window); a second
//! run of the same program and steps with the ordinary activity tracer records each kernel's time
//! (and, with `record_shapes`, its operator). The range profiler replays the kernels one at a time
//! in launch order (Kineto's `CuptiRangeProfiler.cpp`, kernel replay with per-kernel ranges), so
//! its ranges are the profiled steps' launches in that order: [`align`] finds that sequence among
//! the timing trace's launches by kernel name, and [`crate::trace::import::import_with_counters`]
//! gives each matched launch its range's counters and keeps its own measured time.
//!
//! Nothing is matched loosely: every named range must carry the name of the launch it is paired
//! with, or the join is refused and says where the sequences part.

use crate::trace::model::{Ns, Trace};

/// Kineto's name for a range whose kernel it could not name; it pairs with any launch.
pub const UNNAMED_RANGE: &str = "__missing__";

/// Where the ranges sit among the launches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alignment {
    /// Range `i` is launch `offset + i`.
    pub offset: usize,
    /// Ranges named [`UNNAMED_RANGE`], paired by position alone.
    pub unnamed: usize,
    /// Further offsets where the sequence also fits (a program repeating the same steps); the
    /// first is taken.
    pub also_fits: usize,
}

/// Why the ranges could not be placed among the launches.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Mismatch {
    /// More ranges than launches.
    #[error(
        "{ranges} profiler ranges but only {launches} kernel launches in the timing trace: record the timing trace over the same steps (or more)"
    )]
    TooFewLaunches {
        /// Ranges.
        ranges: usize,
        /// Launches.
        launches: usize,
    },
    /// No offset where every named range names its launch.
    #[error(
        "the {ranges} profiler ranges are not the kernel sequence of any {ranges} consecutive launches of the {launches} in the timing trace; the closest fit (from launch {offset}) agrees for {agreeing} ranges and first parts at range {agreeing}: {range:?} against launch {launch:?}. Record both traces from the same program, inputs and steps"
    )]
    Parted {
        /// Ranges.
        ranges: usize,
        /// Launches.
        launches: usize,
        /// The offset of the closest fit.
        offset: usize,
        /// Ranges agreeing there before the first difference, which is the index of the first
        /// range that differs.
        agreeing: usize,
        /// Its name (shortened).
        range: String,
        /// The launch's name (shortened).
        launch: String,
    },
}

/// Finds the first offset where every range names its launch (an unnamed range pairs with any).
///
/// # Errors
/// [`Mismatch`]: more ranges than launches, or no offset fits (the closest one is described).
pub fn align(ranges: &[&str], launches: &[&str]) -> Result<Alignment, Mismatch> {
    if ranges.len() > launches.len() {
        return Err(Mismatch::TooFewLaunches {
            ranges: ranges.len(),
            launches: launches.len(),
        });
    }
    let fits = |r: &str, l: &str| r == UNNAMED_RANGE || r == l;
    let mut found: Option<usize> = None;
    let mut also_fits = 0;
    // The closest miss: (agreeing prefix, offset).
    let mut closest = (0, 0);
    for offset in 0..=launches.len() - ranges.len() {
        let window = &launches[offset..offset + ranges.len()];
        match ranges.iter().zip(window).position(|(r, l)| !fits(r, l)) {
            None if found.is_none() => found = Some(offset),
            None => also_fits += 1,
            Some(p) if found.is_none() && p > closest.0 => closest = (p, offset),
            Some(_) => {}
        }
    }
    match found {
        Some(offset) => Ok(Alignment {
            offset,
            unnamed: ranges.iter().filter(|r| **r == UNNAMED_RANGE).count(),
            also_fits,
        }),
        None => {
            let (agreeing, offset) = closest;
            Err(Mismatch::Parted {
                ranges: ranges.len(),
                launches: launches.len(),
                offset,
                agreeing,
                range: shorten(ranges[agreeing]),
                launch: shorten(launches[offset + agreeing]),
            })
        }
    }
}

/// A name in a [`Mismatch::Parted`] message, at most this many characters.
const NAME_CHARS: usize = 100;

fn shorten(s: &str) -> String {
    roofline_model::analysis::names::truncate(s, NAME_CHARS)
}

/// The timing trace's kernel events of one device in launch order: by the time of the runtime
/// call that launched each (`launch_rt`, from [`crate::trace::link::link`]), else by the
/// kernel's own start. Returns indices into `trace.kernels`.
pub fn launch_order(trace: &Trace, launch_rt: &[Option<usize>], device: Option<i64>) -> Vec<usize> {
    let mut order: Vec<(Ns, Ns, usize)> = trace
        .kernels
        .iter()
        .enumerate()
        .filter(|(_, k)| k.device == device)
        .map(|(i, k)| {
            let call = launch_rt
                .get(i)
                .copied()
                .flatten()
                .map_or(k.ts, |r| trace.runtimes[r].ts);
            (call, k.ts, i)
        })
        .collect();
    order.sort_unstable();
    order.into_iter().map(|(_, _, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ranges_are_found_where_every_name_agrees() {
        let launches = ["a", "b", "c", "a", "b", "d"];
        assert_eq!(
            align(&["a", "b", "d"], &launches),
            Ok(Alignment {
                offset: 3,
                unnamed: 0,
                also_fits: 0
            })
        );
        // The same steps twice: the first is taken, the other counted.
        assert_eq!(
            align(&["a", "b"], &launches),
            Ok(Alignment {
                offset: 0,
                unnamed: 0,
                also_fits: 1
            })
        );
        // An unnamed range pairs with any launch, by position.
        assert_eq!(
            align(&["c", UNNAMED_RANGE, "b"], &launches),
            Ok(Alignment {
                offset: 2,
                unnamed: 1,
                also_fits: 0
            })
        );
        // As many ranges as launches.
        assert_eq!(align(&launches, &launches).map(|a| a.offset), Ok(0));
    }

    #[test]
    fn a_sequence_that_fits_nowhere_is_refused_saying_where_it_parts() {
        let e = align(&["a", "b", "x"], &["a", "b", "c", "a"]).unwrap_err();
        assert_eq!(
            e,
            Mismatch::Parted {
                ranges: 3,
                launches: 4,
                offset: 0,
                agreeing: 2,
                range: "x".into(),
                launch: "c".into(),
            }
        );
        assert!(e.to_string().contains("parts at range 2"), "{e}");
        assert_eq!(
            align(&["a", "b", "c"], &["a", "b"]),
            Err(Mismatch::TooFewLaunches {
                ranges: 3,
                launches: 2
            })
        );
    }
}
