//! The remaining device attributes on HIP: asked of the runtime itself
//! (`hipDeviceGetAttribute`, `hipDeviceGetUuid`, `hipDeviceGetP2PAttribute`,
//! `hipExtGetLinkTypeAndHopCount`), so they are exactly what ROCm reports.

use super::error::Check;
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
        let mut value = 0;
        // SAFETY: a valid ordinal and out-pointer; the attributes that write more than an int
        // are excluded above.
        match unsafe { (self.api.hipDeviceGetAttribute)(&mut value, raw, ordinal) } {
            0 => Ok(Some(i64::from(value))),
            // The runtime does not report this attribute.
            hip_code::INVALID_VALUE => Ok(None),
            other => other.check("hipDeviceGetAttribute").map(|_| None),
        }
    }

    fn device_uuid(&self, dev: DeviceIndex) -> Result<[u8; 16], BackendError> {
        let ordinal = self.ordinal(dev)?;
        let mut uuid = [0u8; 16];
        // SAFETY: a valid ordinal; `hipUUID` is 16 bytes.
        unsafe { (self.api.hipDeviceGetUuid)(&mut uuid, ordinal) }.check("hipDeviceGetUuid")?;
        Ok(uuid)
    }

    fn peer_attribute(&self, dev: DeviceIndex, peer: DeviceIndex, attr: PeerAttribute) -> Result<i64, BackendError> {
        let (d, p) = (self.ordinal(dev)?, self.ordinal(peer)?);
        let p2p = |a: c_int| -> Result<i64, BackendError> {
            let mut v = 0;
            // SAFETY: valid ordinals and out-pointer.
            unsafe { (self.api.hipDeviceGetP2PAttribute)(&mut v, a, d, p) }.check("hipDeviceGetP2PAttribute")?;
            Ok(i64::from(v))
        };
        let link = || -> Result<(u32, u32), BackendError> {
            let (mut link_type, mut hops) = (0, 0);
            // SAFETY: valid ordinals and out-pointers.
            unsafe { (self.api.hipExtGetLinkTypeAndHopCount)(d, p, &mut link_type, &mut hops) }.check("hipExtGetLinkTypeAndHopCount")?;
            Ok((link_type, hops))
        };
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
