//! Virtual memory management: address reservations, physical allocations (session handles),
//! mappings and their access, and physical allocations shared between sessions of one
//! worker through exported tokens.

message! {
    /// `hipMemGetAllocationGranularity`; answered by [`VmmGranularity`].
    pub struct VmmGranularityQuery {
        /// Device ordinal.
        pub device: u32,
        /// The recommended granularity rather than the minimum.
        pub recommended: bool,
    }
}

message! {
    /// A granularity in bytes.
    pub struct VmmGranularity {
        /// Bytes.
        pub granularity: u64,
    }
}

message! {
    /// `hipMemAddressReserve`; answered by [`VmmAddress`].
    pub struct AddressReserve {
        /// Bytes (a multiple of the minimum granularity).
        pub size: u64,
        /// Alignment (0: the granularity; else a power of two).
        pub alignment: u64,
        /// Requested address (a hint, 0: none).
        pub addr: u64,
    }
}

message! {
    /// A device address.
    pub struct VmmAddress {
        /// Device address.
        pub ptr: u64,
    }
}

message! {
    /// A device address range (`hipMemAddressFree`, `hipMemUnmap`).
    pub struct VmmSpan {
        /// Start.
        pub ptr: u64,
        /// Bytes.
        pub size: u64,
    }
}

message! {
    /// `hipMemCreate`: physical memory on a device; answered by [`PhysicalRef`].
    pub struct MemCreate {
        /// Device ordinal.
        pub device: u32,
        /// Bytes (a multiple of the minimum granularity).
        pub size: u64,
        /// `hipMemAllocationHandleType` it may be exported as (0: none).
        pub handle_type: u32,
    }
}

message! {
    /// A physical allocation's session handle.
    pub struct PhysicalRef {
        /// Handle.
        pub handle: u64,
    }
}

message! {
    /// `hipMemGetAllocationPropertiesFromHandle`'s answer.
    pub struct PhysicalInfo {
        /// Device ordinal.
        pub device: u32,
        /// Bytes.
        pub size: u64,
        /// `hipMemAllocationHandleType` requested at creation.
        pub handle_type: u32,
    }
}

message! {
    /// `hipMemMap`: maps the physical allocation from its start at `ptr`.
    pub struct MemMap {
        /// Start, inside a reservation.
        pub ptr: u64,
        /// Bytes.
        pub size: u64,
        /// Physical allocation handle.
        pub handle: u64,
    }
}

message! {
    /// `hipMemSetAccess` for one device over whole mappings.
    pub struct MemSetAccess {
        /// Start of the first mapping.
        pub ptr: u64,
        /// Bytes (the mappings, without gaps).
        pub size: u64,
        /// Device ordinal.
        pub device: u32,
        /// `hipMemAccessFlags`.
        pub flags: u32,
    }
}

message! {
    /// `hipMemGetAccess`; answered by [`AccessFlags`](crate::wire::AccessFlags).
    pub struct MemAccessQuery {
        /// An address inside a mapping.
        pub ptr: u64,
        /// Device ordinal.
        pub device: u32,
    }
}

message! {
    /// `hipMemExportToShareableHandle`; answered by [`ShareableToken`].
    pub struct MemExport {
        /// Physical allocation handle.
        pub handle: u64,
        /// `hipMemAllocationHandleType`.
        pub handle_type: u32,
    }
}

message! {
    /// A worker-scoped, unguessable token naming an exported physical allocation.
    pub struct ShareableToken {
        /// Token.
        pub token: u64,
    }
}

message! {
    /// `hipMemImportFromShareableHandle`; answered by [`PhysicalRef`].
    pub struct MemImport {
        /// Token from [`ShareableToken`].
        pub token: u64,
        /// `hipMemAllocationHandleType`.
        pub handle_type: u32,
    }
}
