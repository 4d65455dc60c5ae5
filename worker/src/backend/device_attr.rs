//! Device facts beyond [`super::DeviceProperties`]: the rest of `hipDeviceGetAttribute`, the
//! device UUID, and attributes of links between devices.

use super::{BackendError, DeviceIndex};

/// An attribute of the link between two distinct devices.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PeerAttribute {
    /// `hipDevP2PAttrPerformanceRank`: relative performance of the link (0 is the best).
    PerformanceRank,
    /// `hipDevP2PAttrAccessSupported`.
    AccessSupported,
    /// `hipDevP2PAttrNativeAtomicSupported`.
    NativeAtomicSupported,
    /// `hipDevP2PAttrHipArrayAccessSupported`.
    ArrayAccessSupported,
    /// `hipExtGetLinkTypeAndHopCount`'s link type (`hsa_amd_link_info_type_t`).
    LinkType,
    /// `hipExtGetLinkTypeAndHopCount`'s hop count.
    HopCount,
}

impl PeerAttribute {
    /// From the wire number (`hipDeviceP2PAttr` 0–3, 0x100 link type, 0x101 hop count).
    pub fn from_raw(raw: u32) -> Option<Self> {
        Some(match raw {
            0 => Self::PerformanceRank,
            1 => Self::AccessSupported,
            2 => Self::NativeAtomicSupported,
            3 => Self::ArrayAccessSupported,
            0x100 => Self::LinkType,
            0x101 => Self::HopCount,
            _ => return None,
        })
    }
}

/// `hsa_amd_link_info_type_t` values a backend reports as a link type.
pub mod link_type {
    /// PCI Express.
    pub const PCIE: i64 = 2;
    /// AMD Infinity Fabric (xGMI); also what a coherent GPU-to-GPU fabric (NVLink) maps to.
    pub const XGMI: i64 = 4;
}

/// The attribute family.
pub trait DeviceAttributeBackend {
    /// `hipDeviceGetAttribute(attr)` of `dev` (ROCm 7 numbering) for an attribute
    /// [`super::DeviceProperties`] does not carry; `None` when the backend does not report it
    /// (the client answers `hipErrorInvalidValue`, as ROCm does for attributes it lacks).
    fn device_attribute(&self, dev: DeviceIndex, attr: u32) -> Result<Option<i64>, BackendError>;

    /// The device's 16-byte UUID (`hipDeviceGetUuid`), stable for the device.
    fn device_uuid(&self, dev: DeviceIndex) -> Result<[u8; 16], BackendError>;

    /// `attr` of the link from `dev` to `peer` (`dev != peer`, both valid: the session checks).
    fn peer_attribute(&self, dev: DeviceIndex, peer: DeviceIndex, attr: PeerAttribute) -> Result<i64, BackendError>;
}
