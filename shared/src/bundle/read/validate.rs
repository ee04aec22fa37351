//! Validation of a typed bundle: every figure finite, counts and sizes non-negative, times and
//! rates positive, device references that resolve, unique devices, launch sums that fit a `u64`;
//! every problem listed with its JSON path.

use std::collections::HashSet;

use super::{Issue, Problem, ReadError};
use crate::bundle::{Bundle, Kernel};

/// Checks the figures of a typed bundle: finite, non-negative, positive times and rates, device
/// references that resolve, unique devices.
///
/// # Errors
/// [`ReadError::Invalid`] listing every problem with its JSON path.
pub fn validate(bundle: &Bundle) -> Result<(), ReadError> {
    let mut v = Validator::default();
    v.bundle(bundle);
    if v.issues.is_empty() {
        Ok(())
    } else {
        Err(ReadError::Invalid(v.issues))
    }
}

/// Checks everything in a bundle but its kernels (which may be many, and are checked one by
/// one as they are written: [`crate::bundle::stream`]).
///
/// # Errors
/// [`ReadError::Invalid`] listing every problem with its path.
pub(crate) fn validate_shell(bundle: &Bundle) -> Result<(), ReadError> {
    let mut v = Validator::default();
    v.shell(bundle);
    if v.issues.is_empty() {
        Ok(())
    } else {
        Err(ReadError::Invalid(v.issues))
    }
}

/// The problems of one kernel, `$.kernels[index]`, as [`validate`] finds them in a bundle whose
/// devices `known` says are declared, `n_devices` of them (0: device references not checked).
pub(crate) fn kernel_issues(
    index: usize,
    k: &Kernel,
    known: &dyn Fn(&str) -> bool,
    n_devices: usize,
) -> Vec<Issue> {
    let mut v = Validator::default();
    v.kernel(index, k, known, n_devices);
    v.issues
}

#[derive(Default)]
struct Validator {
    issues: Vec<Issue>,
}

impl Validator {
    fn push(&mut self, path: impl Into<String>, problem: Problem) {
        self.issues.push(Issue {
            path: path.into(),
            problem,
        });
    }

    /// A count, size or duration: finite and ≥ 0.
    fn non_negative(&mut self, path: &dyn Fn() -> String, v: f64) {
        if !v.is_finite() {
            self.push(path(), Problem::NotFinite(v));
        } else if v < 0.0 {
            self.push(path(), Problem::Negative(v));
        }
    }

    /// A time or rate: finite and > 0.
    fn positive(&mut self, path: &dyn Fn() -> String, v: f64) {
        if !v.is_finite() {
            self.push(path(), Problem::NotFinite(v));
        } else if v < 0.0 {
            self.push(path(), Problem::Negative(v));
        } else if v == 0.0 {
            self.push(path(), Problem::Zero);
        }
    }

    fn opt_non_negative(&mut self, path: &dyn Fn() -> String, v: Option<f64>) {
        if let Some(v) = v {
            self.non_negative(path, v);
        }
    }

    fn opt_positive(&mut self, path: &dyn Fn() -> String, v: Option<f64>) {
        if let Some(v) = v {
            self.positive(path, v);
        }
    }

    /// How a measured ceiling was taken (timing, NVML's telemetry, the sustained figure, the
    /// GEMM chosen): every figure finite, times and rates positive, fractions within 0 to 1.
    fn measurement(
        &mut self,
        q: &str,
        timing: Option<&crate::bundle::TimingInfo>,
        telemetry: Option<&crate::bundle::Telemetry>,
        sustained: Option<&crate::bundle::Sustained>,
    ) {
        if let Some(t) = timing {
            self.non_negative(&|| format!("{q}.timing.warmup_s"), t.warmup_s);
            self.positive(&|| format!("{q}.timing.launch_s"), t.launch_s);
            self.positive(&|| format!("{q}.timing.interval_s"), t.interval_s);
        }
        if let Some(t) = telemetry {
            self.telemetry(&format!("{q}.telemetry"), t);
        }
        if let Some(s) = sustained {
            let q = format!("{q}.sustained");
            self.positive(&|| format!("{q}.value"), s.value);
            self.positive(&|| format!("{q}.window_s"), s.window_s);
            self.non_negative(&|| format!("{q}.settle_s"), s.settle_s);
            self.opt_positive(&|| format!("{q}.clock_hz"), s.clock_hz);
            self.samples(&q, &s.samples);
            if let Some(t) = &s.telemetry {
                self.telemetry(&format!("{q}.telemetry"), t);
            }
        }
    }

    fn telemetry(&mut self, q: &str, t: &crate::bundle::Telemetry) {
        self.non_negative(&|| format!("{q}.window_s"), t.window_s);
        for (name, spread) in [("sm_clock_hz", &t.sm_clock_hz), ("power_w", &t.power_w)] {
            let Some(s) = spread else { continue };
            let p = format!("{q}.{name}");
            for (field, v) in [("min", s.min), ("median", s.median), ("max", s.max)] {
                self.non_negative(&|| format!("{p}.{field}"), v);
            }
            if !(s.min <= s.median && s.median <= s.max) {
                self.push(
                    p,
                    Problem::SpreadOutOfOrder {
                        min: s.min,
                        median: s.median,
                        max: s.max,
                    },
                );
            }
        }
        self.opt_non_negative(&|| format!("{q}.energy_power_w"), t.energy_power_w);
        if let Some(c) = t.temperature_c_max.filter(|c| !c.is_finite()) {
            self.push(format!("{q}.temperature_c_max"), Problem::NotFinite(c));
        }
        for (j, r) in t.clock_event_reasons.iter().enumerate() {
            if !(r.fraction.is_finite() && (0.0..=1.0).contains(&r.fraction)) {
                self.push(
                    format!("{q}.clock_event_reasons[{j}].fraction"),
                    Problem::NotAFraction(r.fraction),
                );
            }
        }
    }

    fn samples(&mut self, base: &str, samples: &[f64]) {
        for (j, s) in samples.iter().enumerate() {
            self.non_negative(&|| format!("{base}.samples[{j}]"), *s);
        }
    }

    fn bundle(&mut self, b: &Bundle) {
        let ids = self.shell(b);
        self.kernels(b, &ids);
    }

    /// Everything but the kernels; returns the device ids.
    fn shell<'b>(&mut self, b: &'b Bundle) -> HashSet<&'b str> {
        let mut ids = HashSet::new();
        for (i, d) in b.devices.iter().enumerate() {
            let p = format!("$.devices[{i}]");
            if d.id.is_empty() {
                self.push(format!("{p}.id"), Problem::Empty);
            }
            if !ids.insert(d.id.as_str()) {
                self.push(format!("{p}.id"), Problem::DuplicateDevice(d.id.clone()));
            }
            self.opt_positive(&|| format!("{p}.sm_clock_hz"), d.sm_clock_hz);
            self.opt_positive(&|| format!("{p}.memory_clock_hz"), d.memory_clock_hz);
            self.opt_non_negative(&|| format!("{p}.memory_bytes"), d.memory_bytes);
            self.opt_non_negative(&|| format!("{p}.l2_bytes"), d.l2_bytes);
            self.opt_positive(&|| format!("{p}.power_limit_w"), d.power_limit_w);
        }
        let mut machine_devices = HashSet::new();
        for (i, m) in b.machines.iter().enumerate() {
            let p = format!("$.machines[{i}]");
            if !ids.contains(m.device.as_str()) {
                self.push(
                    format!("{p}.device"),
                    Problem::UnknownDevice(m.device.clone()),
                );
            }
            if !machine_devices.insert(m.device.as_str()) {
                self.push(
                    format!("{p}.device"),
                    Problem::DuplicateMachine(m.device.clone()),
                );
            }
            for (j, c) in m.bandwidth.iter().enumerate() {
                let q = format!("{p}.bandwidth[{j}]");
                self.positive(&|| format!("{q}.value"), c.value);
                self.opt_positive(&|| format!("{q}.clock_hz"), c.clock_hz);
                self.samples(&q, &c.samples);
                self.measurement(
                    &q,
                    c.timing.as_ref(),
                    c.telemetry.as_ref(),
                    c.sustained.as_ref(),
                );
            }
            for (j, c) in m.compute.iter().enumerate() {
                let q = format!("{p}.compute[{j}]");
                self.positive(&|| format!("{q}.value"), c.value);
                self.opt_positive(&|| format!("{q}.clock_hz"), c.clock_hz);
                self.samples(&q, &c.samples);
                self.measurement(
                    &q,
                    c.timing.as_ref(),
                    c.telemetry.as_ref(),
                    c.sustained.as_ref(),
                );
                if let Some(g) = &c.gemm {
                    for (k, cand) in g.candidates.iter().enumerate() {
                        self.opt_positive(
                            &|| format!("{q}.gemm.candidates[{k}].value"),
                            cand.value,
                        );
                        self.opt_positive(
                            &|| format!("{q}.gemm.candidates[{k}].sustained"),
                            cand.sustained,
                        );
                    }
                }
            }
            if let Some(l) = &m.launch_overhead {
                let q = format!("{p}.launch_overhead");
                self.positive(&|| format!("{q}.value_s"), l.value_s);
                self.opt_positive(&|| format!("{q}.back_to_back_s"), l.back_to_back_s);
                self.opt_positive(&|| format!("{q}.graph_s"), l.graph_s);
                self.samples(&q, &l.samples);
            }
            for (j, l) in m.links.iter().enumerate() {
                self.positive(&|| format!("{p}.links[{j}].value"), l.value);
            }
            for (j, s) in m.sweep.iter().enumerate() {
                let q = format!("{p}.sweep[{j}]");
                self.positive(&|| format!("{q}.working_set_bytes"), s.working_set_bytes);
                self.non_negative(&|| format!("{q}.flops_per_element"), s.flops_per_element);
                self.non_negative(&|| format!("{q}.flops"), s.flops);
                self.non_negative(&|| format!("{q}.bytes"), s.bytes);
                self.positive(&|| format!("{q}.time_s"), s.time_s);
            }
        }
        ids
    }

    fn kernels(&mut self, b: &Bundle, ids: &HashSet<&str>) {
        let mut launches: u64 = 0;
        let mut overflowed = false;
        let mut time = 0.0f64;
        for (i, k) in b.kernels.iter().enumerate() {
            self.kernel(i, k, &|d| ids.contains(d), b.devices.len());
            // Said once, as for the launches: every total time is a sum over a subset of these.
            if time.is_finite() {
                time += k.time.total_s;
                if time.is_infinite() {
                    self.push(
                        format!("$.kernels[{i}].time.total_s"),
                        Problem::TimeOverflow,
                    );
                }
            }
            match launches.checked_add(k.launches) {
                Some(n) => launches = n,
                None if !overflowed => {
                    // Said once: every sum of launches downstream is over a subset of these.
                    overflowed = true;
                    self.push(
                        format!("$.kernels[{i}].launches"),
                        Problem::LaunchesOverflow,
                    );
                }
                None => {}
            }
        }
    }

    /// Checks kernel `i`: `known` says whether a device id is declared; with `n_devices` 0 the
    /// device references are left to the caller (a stream whose devices come later).
    fn kernel(&mut self, i: usize, k: &Kernel, known: &dyn Fn(&str) -> bool, n_devices: usize) {
        let p = format!("$.kernels[{i}]");
        if k.name.is_empty() {
            self.push(format!("{p}.name"), Problem::Empty);
        }
        if k.launches == 0 {
            self.push(format!("{p}.launches"), Problem::NoLaunches);
        }
        match &k.device {
            Some(d) if !known(d.as_str()) => {
                self.push(format!("{p}.device"), Problem::UnknownDevice(d.clone()));
            }
            None if n_devices > 1 => self.push(format!("{p}.device"), Problem::AmbiguousDevice),
            _ => {}
        }
        self.positive(&|| format!("{p}.time.total_s"), k.time.total_s);
        if let Some(s) = &k.time.per_launch {
            let q = format!("{p}.time.per_launch");
            self.positive(&|| format!("{q}.min_s"), s.min_s);
            self.positive(&|| format!("{q}.mean_s"), s.mean_s);
            self.positive(&|| format!("{q}.max_s"), s.max_s);
            self.opt_positive(&|| format!("{q}.median_s"), s.median_s);
            self.opt_non_negative(&|| format!("{q}.stddev_s"), s.stddev_s);
            // Allow for rounding in the last digits when statistics were computed elsewhere.
            let tol = 1e-9 * s.max_s.abs();
            if s.min_s > s.max_s || s.min_s > s.mean_s + tol || s.mean_s > s.max_s + tol {
                self.push(
                    q,
                    Problem::StatsOutOfOrder {
                        min: s.min_s,
                        mean: s.mean_s,
                        max: s.max_s,
                    },
                );
            }
        }
        for d in crate::bundle::Datapath::ALL {
            self.opt_non_negative(&|| format!("{p}.flops.{}", d.key()), k.flops.get(d));
        }
        for l in crate::bundle::MemoryLevel::KERNEL_LEVELS {
            self.opt_non_negative(&|| format!("{p}.bytes.{}", l.key()), k.bytes.get(l));
        }
        if let Some(c) = &k.complexity {
            self.non_negative(&|| format!("{p}.complexity.flops"), c.flops);
            self.non_negative(&|| format!("{p}.complexity.bytes"), c.bytes);
        }
        if let Some(c) = k.operator.as_ref().and_then(|o| o.complexity.as_ref()) {
            self.non_negative(&|| format!("{p}.operator.complexity.flops"), c.flops);
            self.non_negative(&|| format!("{p}.operator.complexity.bytes"), c.bytes);
        }
        if let Some(c) = &k.collective {
            let q = format!("{p}.collective");
            self.opt_non_negative(&|| format!("{q}.bytes"), c.bytes);
            self.opt_non_negative(&|| format!("{q}.exposed_s"), c.exposed_s);
            self.opt_non_negative(&|| format!("{q}.overlapped_s"), c.overlapped_s);
            if c.group_size == Some(0) {
                self.push(format!("{q}.group_size"), Problem::Zero);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::bundle::read::fixtures::{MINIMAL, invalid, with};
    use crate::bundle::read::{Problem, parse_bundle};

    /// The measurement details of a ceiling (`roofline machine`'s timing, NVML telemetry and
    /// sustained figure) are checked as every other figure is, with their paths.
    #[test]
    fn a_ceilings_measurement_details_are_validated() {
        let machine = r#""machines": [{"device": "0", "bandwidth": [{"level": "hbm", "value": 3e12, "method": "empirical",
            "timing": {"warmup_s": 0.4, "launch_s": 0.0, "launches_per_interval": 8, "interval_s": 2e-3, "intervals": 11},
            "telemetry": {"samples": 20, "window_s": 0.4, "sm_clock_hz": {"min": 1.9e9, "median": 1.8e9, "max": 1.98e9},
              "clock_event_reasons": [{"reason": "sw_power_cap", "fraction": 1.5}]},
            "sustained": {"value": -2.9e12, "window_s": 2.0, "settle_s": 0.5, "settled": true}}],
          "compute": []}],
  "kernels""#;
        let issues = invalid(&with(r#""kernels""#, machine));
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "$.machines[0].bandwidth[0].timing.launch_s",
                "$.machines[0].bandwidth[0].telemetry.sm_clock_hz",
                "$.machines[0].bandwidth[0].telemetry.clock_event_reasons[0].fraction",
                "$.machines[0].bandwidth[0].sustained.value",
            ]
        );
    }

    #[test]
    fn impossible_figures_are_listed_with_paths() {
        let issues = invalid(&with("\"total_s\": 1e-3", "\"total_s\": 0"));
        assert_eq!(issues[0].path, "$.kernels[0].time.total_s");
        assert_eq!(issues[0].problem, Problem::Zero);
        let issues = invalid(&with("\"hbm\": 1e8", "\"hbm\": -5"));
        assert_eq!(issues[0].path, "$.kernels[0].bytes.hbm");
        assert_eq!(issues[0].problem, Problem::Negative(-5.0));
        let issues = invalid(&with("\"launches\": 1", "\"launches\": 0"));
        assert_eq!(issues[0].problem, Problem::NoLaunches);
    }

    #[test]
    fn per_launch_statistics_must_be_ordered() {
        let text = with(
            "\"time\": {\"total_s\": 1e-3}",
            "\"time\": {\"total_s\": 1e-3, \"per_launch\": {\"min_s\": 1.000000001, \"mean_s\": 1.0000000005, \"max_s\": 1.0}}",
        );
        let issues = invalid(&text);
        assert!(
            matches!(issues[0].problem, Problem::StatsOutOfOrder { .. }),
            "{issues:?}"
        );
    }

    #[test]
    fn device_references_are_checked() {
        let dup = with(
            "[{\"id\": \"0\", \"name\": \"Tesla V100-SXM2-16GB\"}]",
            "[{\"id\": \"0\", \"name\": \"a\"}, {\"id\": \"0\", \"name\": \"b\"}]",
        );
        let issues = invalid(&dup);
        assert!(
            issues.iter().any(|i| i.path == "$.devices[1].id"
                && i.problem == Problem::DuplicateDevice("0".into()))
        );
        // Two devices and a kernel that names neither.
        assert!(issues.iter().any(|i| i.problem == Problem::AmbiguousDevice));
        let issues = invalid(&with(
            "\"name\": \"k\",",
            "\"name\": \"k\", \"device\": \"7\",",
        ));
        assert_eq!(issues[0].problem, Problem::UnknownDevice("7".into()));
    }

    #[test]
    fn launches_that_sum_beyond_a_u64_are_refused() {
        // Two entries whose launches add up past 2^64 − 1 would wrap in every total:
        // refused on reading, so no sum downstream (aggregation, groups, totals) can overflow.
        let two = MINIMAL.replace("\"launches\": 1,", "\"launches\": 18446744073709551615,");
        let two = two.replace(
            "\"kernels\": [\n",
            "\"kernels\": [\n    {\"name\": \"j\", \"launches\": 2, \"time\": {\"total_s\": 1e-3}, \"source\": \"published\"},\n",
        );
        let e = parse_bundle(&two).unwrap_err().to_string();
        assert!(
            e.contains("`$.kernels[1].launches`")
                && e.contains("the launches of all kernel entries up to this one sum beyond 18446744073709551615"),
            "{e}"
        );
        // One entry at the maximum is fine.
        let one = MINIMAL.replace("\"launches\": 1,", "\"launches\": 18446744073709551615,");
        assert_eq!(parse_bundle(&one).unwrap().kernels[0].launches, u64::MAX);
    }

    #[test]
    fn times_that_sum_beyond_a_double_are_refused() {
        // Each time is finite, their total is not: every share, total and speed-up would be
        // `inf` or `NaN`, so the bundle is refused where it is read, as the stream reader and
        // writer refuse it.
        let two = MINIMAL.replace("\"total_s\": 1e-3", "\"total_s\": 1e308");
        let two = two.replace(
            "\"kernels\": [\n",
            "\"kernels\": [\n    {\"name\": \"j\", \"launches\": 2, \"time\": {\"total_s\": 1.5e308}, \"source\": \"published\"},\n",
        );
        let issues = invalid(&two);
        assert_eq!(issues.len(), 1, "{issues:?}");
        assert_eq!(issues[0].path, "$.kernels[1].time.total_s");
        assert_eq!(issues[0].problem, Problem::TimeOverflow);
        let mut b =
            parse_bundle(&MINIMAL.replace("\"total_s\": 1e-3", "\"total_s\": 1e308")).unwrap();
        assert!(crate::validate(&b).is_ok());
        b.kernels.push(b.kernels[0].clone());
        assert!(crate::to_json(&b).is_err());
        let mut w = crate::bundle::stream::Writer::begin(Vec::new(), &b).unwrap();
        w.kernel(&b.kernels[0]).unwrap();
        let e = w.kernel(&b.kernels[1]).unwrap_err().to_string();
        assert!(e.contains("$.kernels[1].time.total_s"), "{e}");
    }
}
