//! A catalogue entry as a bundle's machine: its datasheet figures as theoretical ceilings, each
//! with its cited source ([`FigureSource`]: `datasheet` or `derived`) and the clock it assumes,
//! and the machine's origin saying which entry and how it was chosen ([`MachineOrigin`]).
//! Figures the entry does not give (an L2 bandwidth, most L1 ones, the launch overhead) are
//! absent: the charts then draw no such ceiling.

use roofline_model::bundle::{
    BandwidthCeiling, ClockSource, ComputeCeiling, FigureSource, LinkCeiling, LinkKind, Machine,
    MachineOrigin, MemoryLevel, Method, OriginKind, SourceKind,
};

use crate::Catalogue;
use crate::entry::{Direction, Figure, GpuEntry, Kind, LinkScope, System};

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
        m.links = self.link_ceilings(catalogue);
        m
    }

    /// The links a collective of this GPU runs on, byte/s in one direction (what a bus
    /// bandwidth is compared with): its NVLink where the GPU reaches the node's other GPUs over
    /// it (an SXM board; a bridge joins two or four cards, and whether one is fitted is not
    /// recorded, so a bridge's figure is left out), and its PCIe link. A figure printed for both
    /// directions together is halved (derived); one whose direction its source does not state
    /// is left out.
    pub fn link_ceilings(&self, catalogue: &Catalogue) -> Vec<LinkCeiling> {
        let mut out = Vec::new();
        let links = [
            (LinkKind::Nvlink, self.links.nvlink.as_ref()),
            (LinkKind::Pcie, self.links.pcie.as_ref()),
        ];
        for (kind, link) in links {
            let Some(l) = link else { continue };
            let bridge = l
                .generation
                .as_deref()
                .is_some_and(|g| g.to_ascii_lowercase().contains("bridge"));
            let (Some(f), Some(direction)) = (&l.bytes_per_s, l.direction) else {
                continue;
            };
            if bridge || l.scope != LinkScope::Device {
                continue;
            }
            let words = match (kind, &l.generation) {
                (LinkKind::Pcie, Some(g)) => format!("PCIe {g}"),
                (_, Some(g)) => g.clone(),
                (_, None) => kind.label().to_string(),
            };
            if let Some(c) = one_direction(catalogue, f, direction, &words, &self.product) {
                out.push(LinkCeiling { link: kind, ..c });
            }
        }
        out
    }
}

/// A link's figure as a ceiling in one direction: as printed when per direction, halved
/// (derived) when printed for both together, none when the source does not say.
fn one_direction(
    catalogue: &Catalogue,
    f: &Figure,
    direction: Direction,
    words: &str,
    product: &str,
) -> Option<LinkCeiling> {
    let source = source_of(catalogue, f)?;
    let (value, source) = match direction {
        Direction::PerDirection => (f.value, source),
        Direction::Bidirectional => (
            f.value / 2.0,
            FigureSource {
                kind: SourceKind::Derived,
                citation: format!(
                    "{}; one direction: {} for both directions / 2",
                    source.citation,
                    roofline_model::analysis::si::format_si(f.value, "B/s")
                ),
            },
        ),
        Direction::Unstated => return None,
    };
    Some(LinkCeiling {
        link: LinkKind::Nvlink,
        value,
        method: Method::Theoretical,
        implementation: Some(format!("{product}: {words} ({})", source.kind.key())),
        source: Some(source),
    })
}

impl System {
    /// The links of a GPU in this system, byte/s in one direction: its NVLink into the fabric
    /// and its share of the compute network (the NIC's line rate, bit/s / 8, per direction).
    pub fn link_ceilings(&self, catalogue: &Catalogue) -> Vec<LinkCeiling> {
        let mut out = Vec::new();
        if let Some(c) = one_direction(
            catalogue,
            &self.nvlink_bytes_per_s_per_gpu,
            self.nvlink_direction,
            &self.fabric,
            &self.name,
        ) {
            out.push(c);
        }
        let f = &self.network_bits_per_s_per_gpu;
        if let Some(source) = source_of(catalogue, f) {
            out.push(LinkCeiling {
                link: LinkKind::Network,
                value: f.value / 8.0,
                method: Method::Theoretical,
                implementation: Some(format!("{}: {} (derived)", self.name, self.network)),
                source: Some(FigureSource {
                    kind: SourceKind::Derived,
                    citation: format!(
                        "{}; per GPU, one direction: {} / 8 bits per byte",
                        source.citation,
                        roofline_model::analysis::si::format_si(f.value, "bit/s")
                    ),
                }),
            });
        }
        out
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

    /// Links in one direction: the H100 SXM5's 900 GB/s NVLink and 128 GB/s PCIe Gen5 (both
    /// directions together) halved; a bridged card gets no NVLink ceiling; a DGX's network is
    /// its NIC's rate over 8 bits.
    #[test]
    fn links_are_one_direction() {
        let c = Catalogue::get();
        let h100 = c.by_id("nvidia-h100-sxm5").unwrap().link_ceilings(c);
        let get =
            |ls: &[LinkCeiling], k: LinkKind| ls.iter().find(|l| l.link == k).map(|l| l.value);
        assert_eq!(get(&h100, LinkKind::Nvlink), Some(450e9));
        assert_eq!(get(&h100, LinkKind::Pcie), Some(64e9));
        let nv = h100.iter().find(|l| l.link == LinkKind::Nvlink).unwrap();
        assert_eq!(nv.source.as_ref().unwrap().kind, SourceKind::Derived);
        assert!(
            nv.source.as_ref().unwrap().citation.contains("900GB/s"),
            "{:?}",
            nv.source
        );
        let nvl = c.by_id("nvidia-h100-nvl").unwrap().link_ceilings(c);
        assert_eq!(get(&nvl, LinkKind::Nvlink), None);
        assert_eq!(get(&nvl, LinkKind::Pcie), Some(64e9));
        let v100 = c.by_id("nvidia-v100-sxm2-32gb").unwrap().link_ceilings(c);
        assert_eq!(get(&v100, LinkKind::Nvlink), Some(150e9));
        let dgx = c.system("nvidia-dgx-a100").unwrap().link_ceilings(c);
        assert_eq!(get(&dgx, LinkKind::Network), Some(25e9));
        assert_eq!(get(&dgx, LinkKind::Nvlink), Some(300e9));
        for s in c.systems() {
            assert_eq!(s.link_ceilings(c).len(), 2, "{}", s.id);
        }
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
