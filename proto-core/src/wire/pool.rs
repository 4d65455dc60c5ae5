//! Stream-ordered memory pools: pools are session objects named by handle; each device has a
//! default pool and a current pool (what `hipMallocAsync` allocates from).

message! {
    /// `hipMemPoolCreate`: a pool of device memory on `device`; answered by [`PoolRef`].
    pub struct PoolCreate {
        /// Device ordinal the pool's memory lives on.
        pub device: u32,
        /// Most bytes the pool may reserve (0: no bound but the device's).
        pub max_size: u64,
        /// `hipMemAllocationHandleType`s the pool may be exported as (0: none).
        pub handle_types: u32,
    }
}

message! {
    /// A request or reply naming one pool.
    pub struct PoolRef {
        /// Pool handle.
        pub pool: u64,
    }
}

message! {
    /// `hipDeviceGetDefaultMemPool` / `hipDeviceGetMemPool`; answered by [`PoolRef`].
    pub struct DevicePoolQuery {
        /// Device ordinal.
        pub device: u32,
        /// The device's default pool rather than its current one.
        pub default: bool,
    }
}

message! {
    /// `hipDeviceSetMemPool`: the pool `hipMallocAsync` on `device` allocates from.
    pub struct DeviceSetPool {
        /// Device ordinal.
        pub device: u32,
        /// Pool handle (of that device).
        pub pool: u64,
    }
}

message! {
    /// `hipMallocFromPoolAsync` and `hipMallocAsync`: a stream-ordered allocation from
    /// `pool`, or from the current pool of the stream's device; answered by
    /// [`AsyncAllocation`](crate::wire::AsyncAllocation).
    pub struct MallocFromPool {
        /// Pool handle; 0: the current pool of the stream's device.
        pub pool: u64,
        /// Device ordinal (the client's current device; used for the null stream).
        pub device: u32,
        /// Bytes.
        pub size: u64,
        /// Stream (0 = null stream).
        pub stream: u64,
    }
}

message! {
    /// `hipMemPoolGetAttribute`; answered by [`PoolAttrValue`].
    pub struct PoolAttrQuery {
        /// Pool handle.
        pub pool: u64,
        /// `hipMemPoolAttr`.
        pub attr: u32,
    }
}

message! {
    /// A pool attribute's value (the reuse flags are 0 or 1).
    pub struct PoolAttrValue {
        /// Value.
        pub value: u64,
    }
}

message! {
    /// `hipMemPoolSetAttribute`.
    pub struct PoolSetAttr {
        /// Pool handle.
        pub pool: u64,
        /// `hipMemPoolAttr`.
        pub attr: u32,
        /// New value (the reuse flags: 0 or not).
        pub value: u64,
    }
}

message! {
    /// `hipMemPoolTrimTo`: releases cached memory until the pool reserves at most
    /// `min_bytes` (memory in use stays).
    pub struct PoolTrim {
        /// Pool handle.
        pub pool: u64,
        /// Bytes the pool may keep reserved.
        pub min_bytes: u64,
    }
}

message! {
    /// `hipMemPoolSetAccess` for one device.
    pub struct PoolSetAccess {
        /// Pool handle.
        pub pool: u64,
        /// Device ordinal given access.
        pub device: u32,
        /// `hipMemAccessFlags`.
        pub flags: u32,
    }
}

message! {
    /// `hipMemPoolGetAccess` for one device; answered by [`AccessFlags`].
    pub struct PoolAccessQuery {
        /// Pool handle.
        pub pool: u64,
        /// Device ordinal.
        pub device: u32,
    }
}

message! {
    /// `hipMemAccessFlags` in effect.
    pub struct AccessFlags {
        /// `hipMemAccessFlags`.
        pub flags: u32,
    }
}

message! {
    /// `hipMemPoolExportToShareableHandle`; answered by
    /// [`ShareableToken`](crate::wire::ShareableToken).
    pub struct PoolExport {
        /// Pool handle.
        pub pool: u64,
        /// `hipMemAllocationHandleType`.
        pub handle_type: u32,
    }
}

message! {
    /// `hipMemPoolImportFromShareableHandle`; answered by [`PoolRef`] (an imported pool:
    /// it only imports pointers).
    pub struct PoolImport {
        /// Token from [`ShareableToken`](crate::wire::ShareableToken).
        pub token: u64,
        /// `hipMemAllocationHandleType`.
        pub handle_type: u32,
    }
}

message! {
    /// `hipMemPoolImportPointer`; answered by [`AsyncAllocation`](crate::wire::AsyncAllocation).
    pub struct PoolImportPointer {
        /// Imported pool handle.
        pub pool: u64,
        /// Token from `PoolExportPointer`.
        pub token: u64,
    }
}
