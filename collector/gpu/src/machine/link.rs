//! The host link: what one GPU moves over PCIe, host to device and device to host, between
//! page-locked host memory and device memory (the driver's copies, as CUDA's `bandwidthTest`
//! and nvbandwidth's `host_to_device_memcpy_ce` / `device_to_host_memcpy_ce` time them), as the
//! machine's PCIe link ceiling. A collective within a node of GPUs without NVLink runs on it
//! (`roofline_model::analysis::comm::binding_link`); NVLink and the network are not measured
//! here (peer copies need a second GPU), and stay the catalogue's.

use roofline_model::bundle::{LinkCeiling, LinkKind, Machine, Method, Skipped};

use crate::session::driver;
use crate::timing::BurstPlan;

use super::MachineError;
use super::rig::Rig;

/// One direction's rate, byte/s: `bytes` per copy over the burst's median interval.
fn copies(
    rig: &mut Rig,
    what: &str,
    bytes: usize,
    mut copy: impl FnMut(&crate::Session) -> Result<(), MachineError>,
) -> Result<f64, MachineError> {
    let plan = BurstPlan::host_link(rig.plan.quick);
    for _ in 0..plan.untimed {
        copy(&rig.session)?;
    }
    rig.session.synchronize(what)?;
    let (_, p) = rig.session.burst(what, plan, copy)?;
    Ok(p.median_rate(bytes as f64))
}

/// The link's ceiling from the two directions' rates, byte/s: the slower one (a collective's
/// ring sends and receives at once, and nccl-tests' bus bandwidth is one direction's).
pub(super) fn pcie_ceiling(h2d: f64, d2h: f64, mib: usize) -> Option<LinkCeiling> {
    let rate = |r: f64| r.is_finite() && r > 0.0;
    let value = h2d.min(d2h);
    (rate(h2d) && rate(d2h)).then(|| LinkCeiling {
        link: LinkKind::Pcie,
        value,
        method: Method::Empirical,
        implementation: Some(format!(
            "page-locked host↔device copies of {mib} MiB (cuMemcpyHtoDAsync {:.1} GB/s, cuMemcpyDtoHAsync {:.1} GB/s): the slower direction",
            h2d / 1e9,
            d2h / 1e9
        )),
        source: None,
    })
}

/// The PCIe link: a page-locked host buffer copied to the device and back, each direction timed
/// as a burst. Page-locked memory the host refuses, or a copy that fails, is recorded under
/// `skipped` and the run goes on: the link is the catalogue's then.
pub(super) fn host_link(
    rig: &mut Rig,
    m: &mut Machine,
    skipped: &mut Vec<Skipped>,
) -> Result<(), MachineError> {
    let bytes = rig.plan.host_link_bytes();
    let mib = bytes >> 20;
    let skip = |skipped: &mut Vec<Skipped>, reason: String| {
        skipped.push(Skipped {
            what: "PCIe host link".into(),
            reason,
        });
    };
    let mut host = match rig.session.alloc_pinned(bytes, "the host link's copies") {
        Ok(h) => h,
        Err(e) => {
            skip(skipped, e.to_string());
            return Ok(());
        }
    };
    let mut dev = rig
        .session
        .alloc_zeros::<u8>(bytes, "the host link's copies")?;
    let h2d = copies(rig, "cuMemcpyHtoD", bytes, |s| {
        s.stream()
            .memcpy_htod(&host, &mut dev)
            .map_err(|e| MachineError::from(driver("cuMemcpyHtoDAsync")(e)))
    });
    let d2h = h2d.and_then(|h2d| {
        copies(rig, "cuMemcpyDtoH", bytes, |s| {
            s.stream()
                .memcpy_dtoh(&dev, &mut host)
                .map_err(|e| MachineError::from(driver("cuMemcpyDtoHAsync")(e)))
        })
        .map(|d2h| (h2d, d2h))
    });
    match d2h {
        Ok((h2d, d2h)) => match pcie_ceiling(h2d, d2h, mib) {
            Some(c) => m.links.push(c),
            None => skip(
                skipped,
                format!("no rate: host to device {h2d} B/s, device to host {d2h} B/s"),
            ),
        },
        Err(e) => skip(skipped, e.to_string()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_link_is_the_slower_direction_and_says_both() {
        let c = pcie_ceiling(26.1e9, 24.9e9, 256).unwrap();
        assert_eq!(
            (c.link, c.value, c.method),
            (LinkKind::Pcie, 24.9e9, Method::Empirical)
        );
        let words = c.implementation.unwrap();
        assert!(words.contains("cuMemcpyHtoDAsync 26.1 GB/s"), "{words}");
        assert!(words.contains("cuMemcpyDtoHAsync 24.9 GB/s"), "{words}");
        assert!(c.source.is_none());
        assert!(pcie_ceiling(f64::NAN, 1e9, 256).is_none());
        assert!(pcie_ceiling(1e9, f64::NAN, 256).is_none());
        assert!(pcie_ceiling(0.0, 1e9, 256).is_none());
    }
}
