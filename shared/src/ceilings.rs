//! Resolving a machine characterization into the ceilings charts and analyses use.
//!
//! A bundle may hold several ceilings for one level or datapath (our own kernel, a library GEMM,
//! the theoretical figure). The ceiling used for plots and bounds is the highest empirical one;
//! a theoretical figure is used only where nothing was measured, and is marked as such.

use crate::bundle::{Bundle, Datapath, Machine, MemoryLevel, Method};

/// One resolved ceiling: its value and how it was obtained.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ceiling {
    /// Byte/s for bandwidth, FLOP/s for compute.
    pub value: f64,
    /// Empirical, or theoretical when nothing was measured.
    pub method: Method,
}

/// The ceilings of one device, one per memory level and per datapath at most, plus `t_launch`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ceilings {
    bandwidth: [Option<Ceiling>; MemoryLevel::ALL.len()],
    compute: [Option<Ceiling>; Datapath::ALL.len()],
    /// Kernel launch overhead, seconds.
    pub launch_overhead_s: Option<f64>,
}

// The enums' declaration order is the order of their `ALL` arrays (checked by a test).
fn level_index(l: MemoryLevel) -> usize {
    l as usize
}

fn datapath_index(d: Datapath) -> usize {
    d as usize
}

/// Keeps the better of two candidates: empirical beats theoretical, then the higher value.
fn better(current: Option<Ceiling>, candidate: Ceiling) -> Option<Ceiling> {
    if !(candidate.value.is_finite() && candidate.value > 0.0) {
        return current;
    }
    let rank = |c: &Ceiling| (c.method == Method::Empirical, c.value);
    match current {
        Some(c) if rank(&c) >= rank(&candidate) => Some(c),
        _ => Some(candidate),
    }
}

impl Ceilings {
    /// The ceilings a device's kernels are read against ([`Bundle::machine_of`]'s rule: that
    /// device's own machine; `None` reads the bundle's first device), resolved.
    pub fn of_device(bundle: &Bundle, device: Option<&str>) -> Option<Self> {
        bundle.machine_of(device).map(Ceilings::from_machine)
    }

    /// Resolves a machine: the highest empirical ceiling per level and datapath, else the highest
    /// theoretical one.
    pub fn from_machine(m: &Machine) -> Self {
        let mut c = Ceilings::default();
        for b in &m.bandwidth {
            let i = level_index(b.level);
            c.bandwidth[i] = better(
                c.bandwidth[i],
                Ceiling {
                    value: b.value,
                    method: b.method,
                },
            );
        }
        for p in &m.compute {
            let i = datapath_index(p.datapath);
            c.compute[i] = better(
                c.compute[i],
                Ceiling {
                    value: p.value,
                    method: p.method,
                },
            );
        }
        c.launch_overhead_s = m
            .launch_overhead
            .as_ref()
            .map(|l| l.value_s)
            .filter(|v| v.is_finite() && *v > 0.0);
        c
    }

    /// The bandwidth ceiling of a level, byte/s.
    pub fn bandwidth(&self, level: MemoryLevel) -> Option<f64> {
        self.bandwidth_ceiling(level).map(|c| c.value)
    }

    /// The bandwidth ceiling of a level with its method.
    pub fn bandwidth_ceiling(&self, level: MemoryLevel) -> Option<Ceiling> {
        self.bandwidth[level_index(level)]
    }

    /// The compute peak of a datapath, FLOP/s.
    pub fn peak(&self, d: Datapath) -> Option<f64> {
        self.peak_ceiling(d).map(|c| c.value)
    }

    /// The compute peak of a datapath with its method.
    pub fn peak_ceiling(&self, d: Datapath) -> Option<Ceiling> {
        self.compute[datapath_index(d)]
    }

    /// Overrides a bandwidth ceiling (what-if edits in the viewer); `None` removes it.
    pub fn set_bandwidth(&mut self, level: MemoryLevel, c: Option<Ceiling>) {
        self.bandwidth[level_index(level)] = c;
    }

    /// Overrides a compute peak (what-if edits in the viewer); `None` removes it.
    pub fn set_peak(&mut self, d: Datapath, c: Option<Ceiling>) {
        self.compute[datapath_index(d)] = c;
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
    use crate::bundle::{BandwidthCeiling, ComputeCeiling};

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
}
