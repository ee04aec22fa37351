//! A catalogue entry as a bundle's machine: its datasheet figures as theoretical ceilings, each
//! with its cited source ([`FigureSource`]: `datasheet` or `derived`) and the clock it assumes,
//! and the machine's origin saying which entry and how it was chosen ([`MachineOrigin`]).
//! Figures the entry does not give (an L2 bandwidth, most L1 ones, the launch overhead) are
//! absent: the charts then draw no such ceiling.

use roofline_model::bundle::{
    BandwidthCeiling, ClockSource, ComputeCeiling, FigureSource, Machine, MachineOrigin,
    MemoryLevel, Method, OriginKind, SourceKind,
};

use crate::Catalogue;
use crate::entry::{Figure, GpuEntry, Kind};

/// The citation of `f`: its source's title and where in it, the words printed, and for a
/// derived figure its formula.
pub fn citation(catalogue: &Catalogue, f: &Figure) -> String {
    let mut out = match catalogue.source_of(f) {
        Some(s) => format!("{}, {} ({})", s.title, s.location, s.year),
        None => f.source.clone(),
    };
    if let Some(p) = &f.printed {
        out.push_str(&format!(": \"{p}\""));
    }
    if let Some(formula) = &f.formula {
        out.push_str(&format!("; derived: {formula}"));
    }
    out
}

fn source_of(catalogue: &Catalogue, f: &Figure) -> Option<FigureSource> {
    let kind = match f.kind {
        Kind::Datasheet => SourceKind::Datasheet,
        Kind::Derived => SourceKind::Derived,
        // A recorded figure is an identity field, never a ceiling (the validation refuses it).
        Kind::Recorded => return None,
    };
    Some(FigureSource {
        kind,
        citation: citation(catalogue, f),
    })
}

impl GpuEntry {
    /// The entry's ceilings as the machine of device `device` (its id in the bundle), its
    /// origin saying the entry and `chosen` (how it was chosen, in words).
    pub fn machine(&self, catalogue: &Catalogue, device: &str, chosen: &str) -> Machine {
        let mut m = Machine {
            device: device.to_string(),
            origin: Some(MachineOrigin {
                kind: OriginKind::Datasheet,
                product: Some(self.product.clone()),
                catalogue_id: Some(self.id.clone()),
                chosen: Some(chosen.to_string()),
            }),
            ..Machine::default()
        };
        for level in [MemoryLevel::L1, MemoryLevel::L2, MemoryLevel::Hbm] {
            let Some(f) = self.bandwidth(level) else {
                continue;
            };
            let Some(source) = source_of(catalogue, f) else {
                continue;
            };
            let mut c = BandwidthCeiling::new(level, f.value, Method::Theoretical);
            c.implementation = Some(format!("{} ({})", self.product, source.kind.key()));
            c.clock_hz = f.clock_hz;
            c.clock_source = Some(ClockSource::Datasheet);
            c.source = Some(source);
            m.bandwidth.push(c);
        }
        for (d, f) in self.peaks() {
            let Some(source) = source_of(catalogue, f) else {
                continue;
            };
            let mut c = ComputeCeiling::new(d, f.value, Method::Theoretical);
            c.implementation = Some(format!("{} ({})", self.product, source.kind.key()));
            c.clock_hz = f.clock_hz.or_else(|| self.assumed_clock_hz(d));
            c.clock_source = Some(ClockSource::Datasheet);
            c.source = Some(source);
            m.compute.push(c);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_model::bundle::Datapath;

    /// The H100 SXM5's machine: its datasheet's HBM and peaks, each cited and at the clock it
    /// assumes (1830 MHz for the Tensor figures), the origin naming the entry; it validates as
    /// a bundle's machine.
    #[test]
    fn an_entry_becomes_a_cited_machine() {
        let c = Catalogue::get();
        let e = c.by_id("nvidia-h100-sxm5").unwrap();
        let m = e.machine(c, "0", "matched by name");
        let o = m.origin.as_ref().unwrap();
        assert_eq!(o.kind, OriginKind::Datasheet);
        assert_eq!(o.catalogue_id.as_deref(), Some("nvidia-h100-sxm5"));
        let hbm = m
            .bandwidth
            .iter()
            .find(|b| b.level == MemoryLevel::Hbm)
            .unwrap();
        assert_eq!(hbm.value, 3.35e12);
        assert_eq!(hbm.source.as_ref().unwrap().kind, SourceKind::Datasheet);
        assert!(hbm.source.as_ref().unwrap().citation.contains("3.35TB/s"));
        let bf16 = m
            .compute
            .iter()
            .find(|p| p.datapath == Datapath::TensorBf16)
            .unwrap();
        assert_eq!(bf16.value, 989.4e12);
        assert_eq!(bf16.clock_hz, Some(1.83e9));
        assert!(m.compute.iter().all(|p| p.method == Method::Theoretical));
        let mut b = roofline_model::Bundle::new(roofline_model::bundle::Provenance::default());
        b.devices.push(roofline_model::bundle::Device::new(
            "0",
            "NVIDIA H100 80GB HBM3",
        ));
        b.machines.push(m);
        roofline_model::validate(&b).unwrap();
    }

    /// Every entry's machine validates, and no ceiling is without its source.
    #[test]
    fn every_entry_gives_a_valid_machine() {
        let c = Catalogue::get();
        for e in c.entries() {
            let mut b = roofline_model::Bundle::new(roofline_model::bundle::Provenance::default());
            b.devices
                .push(roofline_model::bundle::Device::new("0", e.product.clone()));
            let m = e.machine(c, "0", "by hand");
            assert!(
                m.bandwidth.iter().all(|x| x.source.is_some())
                    && m.compute.iter().all(|x| x.source.is_some()),
                "{}",
                e.id
            );
            b.machines.push(m);
            roofline_model::validate(&b).unwrap_or_else(|err| panic!("{}: {err}", e.id));
        }
    }
}
