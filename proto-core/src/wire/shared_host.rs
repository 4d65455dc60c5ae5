//! Shared registered host memory of a same-host session (`docs/TRANSPORTS.md`, section
//! "Same-host shared memory"): `hipHostMalloc` memory that the worker creates, registers with
//! the GPU and shares with the client (a memfd passed over the connection's Unix socket), and
//! copies that name it instead of carrying their bytes.

message! {
    /// `hipHostMalloc` on a same-host connection: the worker creates and registers a region
    /// of `size` bytes and passes its memfd on the connection's descriptor channel, tagged
    /// with the region's id, before it answers.
    pub struct HostAllocShared {
        /// Bytes (the worker rounds up to whole pages).
        pub size: u64,
        /// `hipHostMalloc` flags.
        pub flags: u32,
    }
}

message! {
    /// The region [`HostAllocShared`] made.
    pub struct SharedRegion {
        /// The region's id (the tag of its memfd on the descriptor channel).
        pub region: u64,
        /// Bytes of the memfd (the request's size rounded up to whole pages).
        pub size: u64,
        /// Where the region is mapped in the worker (its address for the device).
        pub worker_addr: u64,
    }
}

message! {
    /// Releases a region (`hipHostFree`): unregistered and unmapped once copies that use it
    /// are done.
    pub struct HostFreeShared {
        /// The region's id.
        pub region: u64,
    }
}

message! {
    /// Host-to-device copy from a shared region: no bytes travel, the device reads the region.
    pub struct MemcpyHtoDShared {
        /// Destination device address.
        pub dst: u64,
        /// Source region.
        pub region: u64,
        /// Offset of the source in the region.
        pub offset: u64,
        /// Bytes.
        pub len: u64,
        /// Stream (0 = null stream).
        pub stream: u64,
        /// Complete the copy on the device before responding.
        pub sync: bool,
    }
}

message! {
    /// Device-to-host copy into a shared region: no bytes travel, the device writes the region.
    pub struct MemcpyDtoHShared {
        /// Source device address.
        pub src: u64,
        /// Destination region.
        pub region: u64,
        /// Offset of the destination in the region.
        pub offset: u64,
        /// Bytes.
        pub len: u64,
        /// Stream (0 = null stream).
        pub stream: u64,
        /// Complete the copy before responding.
        pub sync: bool,
    }
}
