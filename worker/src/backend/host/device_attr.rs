//! The host backend's remaining device attributes: what the CPU emulation provides (no
//! texture units, host-coherent memory, one address space for every device) and a UUID
//! derived from the machine and the device index.

use super::HostBackend;
use crate::backend::{link_type, BackendError, DeviceAttributeBackend, DeviceIndex, PeerAttribute};
use proto_core::wire::{MAX_ARRAY_1D_WIDTH, MAX_ARRAY_2D, MAX_ARRAY_3D};

/// FNV-1a over `bytes`, from `seed`.
fn fnv1a(seed: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(seed, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// What identifies this machine: systemd's machine id, else the host name.
fn machine_identity() -> String {
    ["/etc/machine-id", "/proc/sys/kernel/hostname"]
        .iter()
        .find_map(|path| std::fs::read_to_string(path).ok().filter(|s| !s.trim().is_empty()))
        .unwrap_or_default()
}

/// A UUID (RFC 9562 version 8: vendor-defined) that stays the same for this device of this
/// machine across worker restarts.
fn host_uuid(machine: &str, dev: DeviceIndex) -> [u8; 16] {
    let input = format!("hip-remote host device {dev} on {}", machine.trim());
    let hi = fnv1a(0xcbf2_9ce4_8422_2325, input.as_bytes());
    let lo = fnv1a(hi ^ 0x9e37_79b9_7f4a_7c15, input.as_bytes());
    let mut uuid = [0u8; 16];
    uuid[..8].copy_from_slice(&hi.to_be_bytes());
    uuid[8..].copy_from_slice(&lo.to_be_bytes());
    uuid[6] = (uuid[6] & 0x0f) | 0x80; // version 8
    uuid[8] = (uuid[8] & 0x3f) | 0x80; // RFC variant
    uuid
}

impl DeviceAttributeBackend for HostBackend {
    fn device_attribute(&self, dev: DeviceIndex, attr: u32) -> Result<Option<i64>, BackendError> {
        let p = &self.device(dev)?.properties;
        let value = match attr {
            // No L2 access policy, no preemption, no LUID (not Windows), nothing reserved.
            1 | 7 | 22 | 73 => 0,
            // Client memory lives on another machine: the device cannot use it directly.
            4 | 13 | 66 => 0,
            // Textures are sampled in software from the worker's arrays: their limits.
            39 => MAX_ARRAY_1D_WIDTH as i64,
            43 | 44 => MAX_ARRAY_2D[(attr - 43) as usize] as i64,
            49..=51 => MAX_ARRAY_3D[(attr - 49) as usize] as i64,
            // No surfaces, layered, gathered, mipmapped, cubemap or linear-pitch textures: their
            // limits are 0, as on a device without them.
            32..=54 | 79 | 82 => 0,
            62 => i64::from(dev),
            // Stream-ordered pools, VMM and host registration are served by the worker; no
            // shareable pool handle types.
            88..=90 => 1,
            91 => 0,
            // Multi-device cooperative launches are not offered, so neither are their
            // unmatched forms.
            10007..=10010 => 0,
            10011 | 10012 | 10014 | 10020 => 0,
            // hipStreamWaitValue* run on the worker's streams; host memory is coherent.
            10013 | 10016 => 1,
            10015 => i64::from(p.multi_processor_count),
            // Device timers read the host's monotonic clock, in nanoseconds.
            10017 => 1_000_000,
            10018 => 1,
            _ => return Ok(None),
        };
        Ok(Some(value))
    }

    fn device_uuid(&self, dev: DeviceIndex) -> Result<[u8; 16], BackendError> {
        self.device(dev)?;
        Ok(host_uuid(&machine_identity(), dev))
    }

    fn peer_attribute(&self, dev: DeviceIndex, peer: DeviceIndex, attr: PeerAttribute) -> Result<i64, BackendError> {
        self.device(dev)?;
        self.device(peer)?;
        // Every emulated device lives in one coherent address space: full access, atomics
        // included, over the best link there is, one hop away.
        Ok(match attr {
            PeerAttribute::PerformanceRank => 0,
            PeerAttribute::AccessSupported | PeerAttribute::NativeAtomicSupported | PeerAttribute::ArrayAccessSupported => 1,
            PeerAttribute::LinkType => link_type::XGMI,
            PeerAttribute::HopCount => 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_uuids_are_stable_and_distinct() {
        let a = host_uuid("machine-a", 0);
        assert_eq!(a, host_uuid("machine-a\n", 0), "stable across reads");
        assert_ne!(a, host_uuid("machine-a", 1), "one per device");
        assert_ne!(a, host_uuid("machine-b", 0), "one per machine");
        assert_eq!(a[6] >> 4, 8);
        assert_eq!(a[8] >> 6, 0b10);
    }
}
