//! The remaining device attributes on HIP: asked of the runtime itself
//! (`hipDeviceGetAttribute`, `hipDeviceGetUuid`, `hipDeviceGetP2PAttribute`,
//! `hipExtGetLinkTypeAndHopCount`), so they are exactly what ROCm reports.

use super::HipBackend;
use crate::backend::{hip_code, BackendError, DeviceAttributeBackend, DeviceIndex, PeerAttribute};
use std::ffi::c_int;

/// `hipDeviceAttributeHdpMemFlushCntl`, `hipDeviceAttributeHdpRegFlushCntl`: ROCm writes a
/// register *address* through the `int*`, meaningless (and too wide) on another machine.
const HDP_FLUSH_ATTRIBUTES: [u32; 2] = [10005, 10006];

impl DeviceAttributeBackend for HipBackend {
    fn device_attribute(&self, dev: DeviceIndex, attr: u32) -> Result<Option<i64>, BackendError> {
        let ordinal = self.ordinal(dev)?;
        let Ok(raw) = c_int::try_from(attr) else { return Ok(None) };
        if HDP_FLUSH_ATTRIBUTES.contains(&attr) {
            return Ok(None);
        }
        // The attributes that write more than an int are excluded above.
        match self.api.device_attribute(raw, ordinal) {
            Ok(value) => Ok(Some(i64::from(value))),
            // The runtime does not report this attribute.
            Err(e) if e.code == hip_code::INVALID_VALUE => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    fn device_uuid(&self, dev: DeviceIndex) -> Result<[u8; 16], BackendError> {
        let ordinal = self.ordinal(dev)?;
        Ok(self.api.device_uuid(ordinal)?)
    }

    fn peer_attribute(&self, dev: DeviceIndex, peer: DeviceIndex, attr: PeerAttribute) -> Result<i64, BackendError> {
        let (d, p) = (self.ordinal(dev)?, self.ordinal(peer)?);
        let p2p = |a: c_int| -> Result<i64, BackendError> { Ok(i64::from(self.api.device_p2p_attribute(a, d, p)?)) };
        let link = || -> Result<(u32, u32), BackendError> { Ok(self.api.link_type_and_hop_count(d, p)?) };
        match attr {
            PeerAttribute::PerformanceRank => p2p(0),
            PeerAttribute::AccessSupported => p2p(1),
            PeerAttribute::NativeAtomicSupported => p2p(2),
            PeerAttribute::ArrayAccessSupported => p2p(3),
            PeerAttribute::LinkType => Ok(i64::from(link()?.0)),
            PeerAttribute::HopCount => Ok(i64::from(link()?.1)),
        }
    }
}
