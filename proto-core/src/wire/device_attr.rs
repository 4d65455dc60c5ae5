//! Device attributes the cached `DeviceProperties` do not carry, answered by the worker's
//! backend: `hipDeviceGetAttribute` for the rest of ROCm's `hipDeviceAttribute_t`,
//! `hipDeviceGetP2PAttribute` and `hipExtGetLinkTypeAndHopCount`.

message! {
    /// One `hipDeviceAttribute_t` of one device.
    pub struct AttributeQuery {
        /// Device ordinal.
        pub device: u32,
        /// `hipDeviceAttribute_t` value (ROCm 7 numbering).
        pub attr: u32,
    }
}

message! {
    /// The value of an attribute.
    pub struct AttributeValue {
        /// Whether the backend reports the attribute (`false`: `hipErrorInvalidValue`).
        pub known: bool,
        /// The value (0 when not known).
        pub value: i64,
    }
}

message! {
    /// One attribute of the link from `device` to `peer`.
    pub struct PeerAttributeQuery {
        /// Device whose kernels access the peer's memory.
        pub device: u32,
        /// Device owning the memory.
        pub peer: u32,
        /// `hipDeviceP2PAttr` (0 performance rank, 1 access supported, 2 native atomics,
        /// 3 array access), or 0x100 link type (`hsa_amd_link_info_type_t`), 0x101 hop count
        /// (`hipExtGetLinkTypeAndHopCount`).
        pub attr: u32,
    }
}
