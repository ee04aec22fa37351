//! The links a collective runs on, as far as one host can measure them: the host link, what one
//! GPU moves over PCIe, host to device and device to host, between page-locked host memory and
//! device memory (the driver's copies, as CUDA's `bandwidthTest` and nvbandwidth's
//! `host_to_device_memcpy_ce` / `device_to_host_memcpy_ce` time them), as the machine's PCIe
//! link ceiling; and, on a host with a second GPU that NVML says is joined to this one by
//! NVLink, the NVLink: device memory copied to the peer's and back (`cuMemcpyPeerAsync` with
//! peer access enabled, as nvbandwidth's `device_to_device_memcpy_write_ce` /
//! `device_to_device_memcpy_read_ce` time them). A collective within a node runs on NVLink where
//! there is one, on PCIe otherwise (`roofline_model::analysis::comm::binding_link`); the network
//! between nodes is not measured here and stays the catalogue's.

use roofline_model::bundle::{LinkCeiling, LinkKind, Machine, Method, Skipped};

use std::sync::Arc;

use cudarc::driver::CudaContext;

use crate::nvml::Nvml;
use crate::session::{can_access_peer, driver, enable_peer_access, pci_bus_id};
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

/// A link's ceiling from its two directions' rates, byte/s: the slower one (a collective's ring
/// sends and receives at once, and nccl-tests' bus bandwidth is one direction's); none unless
/// both are finite and positive. `words` says how it was measured, given the two rates.
fn slower_direction(
    link: LinkKind,
    a: f64,
    b: f64,
    words: impl FnOnce(f64, f64) -> String,
) -> Option<LinkCeiling> {
    let rate = |r: f64| r.is_finite() && r > 0.0;
    (rate(a) && rate(b)).then(|| LinkCeiling {
        link,
        value: a.min(b),
        method: Method::Empirical,
        implementation: Some(words(a / 1e9, b / 1e9)),
        source: None,
    })
}

/// The PCIe link's ceiling from the host-to-device and device-to-host rates, byte/s.
pub(super) fn pcie_ceiling(h2d: f64, d2h: f64, mib: usize) -> Option<LinkCeiling> {
    slower_direction(LinkKind::Pcie, h2d, d2h, |a, b| {
        format!(
            "page-locked host↔device copies of {mib} MiB (cuMemcpyHtoDAsync {a:.1} GB/s, cuMemcpyDtoHAsync {b:.1} GB/s): the slower direction"
        )
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

/// The NVLink ceiling from the rates to the peer and back, byte/s.
pub(super) fn nvlink_ceiling(out: f64, back: f64, mib: usize, peer: &str) -> Option<LinkCeiling> {
    slower_direction(LinkKind::Nvlink, out, back, |a, b| {
        format!(
            "device↔device copies of {mib} MiB to and from {peer} over NVLink, peer access enabled (cuMemcpyPeerAsync {a:.1} GB/s there, {b:.1} GB/s back): the slower direction"
        )
    })
}

/// The GPU this one reaches over NVLink: the first other CUDA device that NVML says shares
/// NVLink with it and that CUDA lets it access; or why there is none (said under `skipped`).
fn nvlink_peer(rig: &Rig) -> Result<(Arc<CudaContext>, String), String> {
    let count = CudaContext::device_count().map_err(|e| format!("counting the GPUs: {e}"))?;
    if count < 2 {
        return Err("this host shows CUDA one GPU: peer copies need two; the NVLink ceiling stays the catalogue's".into());
    }
    let nvml = Nvml::load().map_err(|e| {
        format!("NVML, which tells NVLink from PCIe between GPUs, is not usable ({e}); the NVLink ceiling stays the catalogue's")
    })?;
    let ours = rig.session.pci_bus_id().map_err(|e| e.to_string())?;
    let ours_nvml = nvml.device(&ours).map_err(|e| e.to_string())?;
    let me = rig.session.ordinal();
    let mut seen = Vec::new();
    for peer in (0..usize::try_from(count).unwrap_or(0)).filter(|&p| p != me) {
        let ctx = CudaContext::new(peer).map_err(|e| format!("GPU {peer}: {e}"))?;
        let bus = pci_bus_id(&ctx).map_err(|e| e.to_string())?;
        let nvlink = nvml
            .device(&bus)
            .and_then(|d| ours_nvml.nvlink_to(&d))
            .map_err(|e| format!("GPU {peer} ({bus}): {e}"))?;
        let access = can_access_peer(rig.session.context(), &ctx).map_err(|e| e.to_string())?;
        if nvlink && access {
            return Ok((ctx, format!("GPU {peer} ({bus})")));
        }
        seen.push(format!(
            "GPU {peer} ({bus}): {}",
            if nvlink {
                "NVLink, but CUDA refuses peer access"
            } else {
                "no NVLink"
            }
        ));
    }
    Err(format!(
        "no GPU on this host shares NVLink with this one ({}); the NVLink ceiling stays the catalogue's",
        seen.join("; ")
    ))
}

/// The NVLink to a peer GPU: a buffer of the host link's size copied to the peer's memory and
/// back, each direction timed as a burst on this GPU's stream, the slower one the machine's
/// NVLink ceiling. Only between GPUs that NVML says share NVLink (a peer copy between GPUs
/// without it crosses PCIe); a host with one GPU, no NVML or no such peer is recorded under
/// `skipped` with the reason, and the NVLink ceiling stays the catalogue's.
pub(super) fn peer_link(
    rig: &mut Rig,
    m: &mut Machine,
    skipped: &mut Vec<Skipped>,
) -> Result<(), MachineError> {
    let skip = |skipped: &mut Vec<Skipped>, reason: String| {
        skipped.push(Skipped {
            what: "NVLink peer copies".into(),
            reason,
        });
    };
    let (peer, name) = match nvlink_peer(rig) {
        Ok(p) => p,
        Err(why) => {
            skip(skipped, why);
            return Ok(());
        }
    };
    let ours = Arc::clone(rig.session.context());
    let enabled = enable_peer_access(&ours, &peer).and_then(|()| enable_peer_access(&peer, &ours));
    ours.bind_to_thread()
        .map_err(|e| MachineError::from(driver("binding the context")(e)))?;
    if let Err(e) = enabled {
        skip(skipped, format!("{name}: {e}"));
        return Ok(());
    }
    let bytes = rig.plan.host_link_bytes();
    let mib = bytes >> 20;
    let buffers = match rig.session.peer_buffers(&peer, bytes) {
        Ok(b) => b,
        Err(e) => {
            skip(skipped, format!("{name}: {e}"));
            return Ok(());
        }
    };
    let copy = |to_peer: bool| {
        let b = &buffers;
        move |s: &crate::Session| s.peer_copy(b, to_peer).map_err(MachineError::from)
    };
    let out = copies(rig, "cuMemcpyPeerAsync to the peer", bytes, copy(true));
    let back = out.and_then(|out| {
        copies(rig, "cuMemcpyPeerAsync from the peer", bytes, copy(false)).map(|back| (out, back))
    });
    rig.session.synchronize("the NVLink copies")?;
    match back {
        Ok((out, back)) => match nvlink_ceiling(out, back, mib, &name) {
            Some(c) => m.links.push(c),
            None => skip(
                skipped,
                format!("{name}: no rate: there {out} B/s, back {back} B/s"),
            ),
        },
        Err(e) => skip(skipped, format!("{name}: {e}")),
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

    #[test]
    fn nvlink_is_the_slower_direction_and_names_the_peer() {
        let c = nvlink_ceiling(389.0e9, 375.5e9, 256, "GPU 1 (0000:41:00.0)").unwrap();
        assert_eq!(
            (c.link, c.value, c.method),
            (LinkKind::Nvlink, 375.5e9, Method::Empirical)
        );
        let words = c.implementation.unwrap();
        assert!(words.contains("GPU 1 (0000:41:00.0)"), "{words}");
        assert!(
            words.contains("389.0 GB/s there, 375.5 GB/s back"),
            "{words}"
        );
        assert!(nvlink_ceiling(f64::INFINITY, 1e9, 256, "x").is_none());
        assert!(nvlink_ceiling(1e9, -1.0, 256, "x").is_none());
    }
}
