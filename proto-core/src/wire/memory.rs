//! Memory: allocation, copies in every direction, memset.
//!
//! Host-to-host copies never reach the worker. Every copy names a stream (0 = null stream);
//! `sync` copies complete on the worker before their response is sent (hipMemcpy's
//! semantics), the others are queued on their stream. Copies larger than one frame's bulk
//! limit are split by the client into chunks of consecutive addresses.

use crate::field::Bulk;

message! {
    /// `hipMalloc`.
    pub struct Malloc {
        /// Device ordinal.
        pub device: u32,
        /// Bytes.
        pub size: u64,
        /// `hipMallocManaged`/`hipExtMallocWithFlags` flags; 0 for hipMalloc.
        pub flags: u32,
    }
}

message! {
    /// A new allocation.
    pub struct Allocation {
        /// Device address (0 for a zero-byte allocation).
        pub ptr: u64,
    }
}

message! {
    /// `hipFree`.
    pub struct Free {
        /// Device address from [`Allocation`] (0 is a no-op).
        pub ptr: u64,
    }
}

message! {
    /// Host-to-device copy; the data is the frame's bulk section.
    pub struct MemcpyHtoD<'a> {
        /// Destination device address.
        pub dst: u64,
        /// Stream (0 = null stream).
        pub stream: u64,
        /// Complete the copy before responding.
        pub sync: bool,
        /// The bytes.
        pub data: Bulk<'a>,
    }
}

message! {
    /// Device-to-host copy; answered by [`MemcpyData`].
    pub struct MemcpyDtoH {
        /// Source device address.
        pub src: u64,
        /// Bytes.
        pub len: u64,
        /// Stream (0 = null stream); the response is sent when the stream reaches the copy.
        pub stream: u64,
    }
}

message! {
    /// Data read from the device.
    pub struct MemcpyData<'a> {
        /// The bytes, as the frame's bulk section.
        pub data: Bulk<'a>,
    }
}

message! {
    /// Device-to-device copy.
    pub struct MemcpyDtoD {
        /// Destination device address.
        pub dst: u64,
        /// Source device address.
        pub src: u64,
        /// Bytes.
        pub len: u64,
        /// Stream (0 = null stream).
        pub stream: u64,
        /// Complete the copy before responding.
        pub sync: bool,
    }
}

wire_enum! {
    /// Element width of a memset.
    pub enum MemsetWidth: u8 {
        /// hipMemset / hipMemsetD8.
        Byte = 1,
        /// hipMemsetD16.
        Half = 2,
        /// hipMemsetD32.
        Word = 4,
    }
}

message! {
    /// `hipMemset` and the `D8/D16/D32` variants.
    pub struct Memset {
        /// Destination device address.
        pub dst: u64,
        /// Value (low `width` bytes used).
        pub value: u32,
        /// Element width.
        pub width: MemsetWidth,
        /// Number of elements.
        pub count: u64,
        /// Stream (0 = null stream).
        pub stream: u64,
        /// Complete before responding.
        pub sync: bool,
    }
}
