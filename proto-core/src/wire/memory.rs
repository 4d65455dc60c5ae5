//! Memory: allocation, copies in every direction, memset.
//!
//! Host-to-host copies never reach the worker. Every copy names a stream (0 = null stream);
//! `sync` copies complete on the worker before their response is sent (hipMemcpy's
//! semantics), the others are queued on their stream. Copies larger than one frame's bulk
//! limit are split by the client into chunks of consecutive addresses.

use crate::field::{Blob, Bulk};

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
    /// The client's allocation range of one device (`CLIENT_ALLOCATION`): address space the
    /// worker reserved for the session, inside which the client places `hipMalloc`
    /// allocations itself ([`MallocAt`]).
    pub struct ClientRange {
        /// First address.
        pub base: u64,
        /// Bytes.
        pub len: u64,
        /// The backend's mapping granularity: allocations of at least this size start on a
        /// multiple of it; smaller ones never cross one.
        pub granularity: u64,
        /// Free device memory when the range was reserved (the client's budget for posting).
        pub free: u64,
    }
}

message! {
    /// `ClientRangeReserveAt`: the device's client allocation range, asked at an address the
    /// client chose (workers of one client's device list get disjoint windows).
    pub struct ClientRangeAt {
        /// Device ordinal.
        pub device: u32,
        /// Where the client would have the range start (the worker may place it elsewhere).
        pub hint: u64,
        /// Most bytes the range may span (its window).
        pub max_len: u64,
    }
}

message! {
    /// `hipMalloc` at an address the client chose inside its [`ClientRange`].
    pub struct MallocAt {
        /// Device ordinal.
        pub device: u32,
        /// Address (a multiple of 256; of the granularity for allocations at least that size).
        pub ptr: u64,
        /// Bytes.
        pub size: u64,
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
    /// Host-to-device copy of `len` bytes named by their content hash
    /// ([`crate::content::content_hash`]; `features::CONTENT_STORE`): a worker that holds the
    /// content for the session's tenant copies it as [`MemcpyHtoD`] would (`sync` as there)
    /// and answers `found`; otherwise it does nothing and the client sends the bytes.
    pub struct MemcpyHtoDByHash<'a> {
        /// Destination device address.
        pub dst: u64,
        /// Bytes.
        pub len: u64,
        /// Stream (0 = null stream).
        pub stream: u64,
        /// Complete the copy before responding.
        pub sync: bool,
        /// The content hash (`CONTENT_HASH_LEN` bytes).
        pub hash: Blob<'a>,
    }
}

message! {
    /// Host-to-device copy whose bulk is the LZ4 block (`lz4_flex::block`, no size prefix)
    /// of `len` bytes (`features::COMPRESSED_BULK`): the worker decompresses it, refusing a
    /// block that does not give exactly `len` bytes, then copies as [`MemcpyHtoD`].
    pub struct MemcpyHtoDCompressed<'a> {
        /// Destination device address.
        pub dst: u64,
        /// Bytes once decompressed (at most `MAX_BULK_LEN`).
        pub len: u64,
        /// Stream (0 = null stream).
        pub stream: u64,
        /// Complete the copy before responding.
        pub sync: bool,
        /// The compressed bytes.
        pub data: Bulk<'a>,
    }
}

message! {
    /// Whether the worker held the content named ([`MemcpyHtoDByHash`]).
    pub struct ContentFound {
        /// The worker held it and copied it.
        pub found: bool,
    }
}

message! {
    /// After a copy the worker did not hold: keep the `len` bytes now at `src` (once earlier
    /// work on `stream` is done) as content `hash` of the session's tenant. The worker reads
    /// them back and keeps them only if they hash to `hash`.
    pub struct ContentRemember<'a> {
        /// Device address the bytes were copied to.
        pub src: u64,
        /// Bytes.
        pub len: u64,
        /// Stream the copy went to (0 = null stream).
        pub stream: u64,
        /// The content hash (`CONTENT_HASH_LEN` bytes).
        pub hash: Blob<'a>,
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

message! {
    /// Host-to-device 2D copy (`hipMemcpy2D*`): `data` holds `data.len() / width` rows of
    /// `width` bytes, packed; the worker scatters them `pitch` bytes apart from `dst`. The
    /// client splits a large copy into chunks of whole rows, like 1D copies.
    pub struct MemcpyHtoD2D<'a> {
        /// Destination device address of the first row.
        pub dst: u64,
        /// Bytes between the starts of two destination rows.
        pub pitch: u64,
        /// Bytes per row (non-zero; `data` is a whole number of rows).
        pub width: u64,
        /// Stream (0 = null stream).
        pub stream: u64,
        /// Complete the copy before responding.
        pub sync: bool,
        /// The packed rows, as the frame's bulk section.
        pub data: Bulk<'a>,
    }
}

message! {
    /// Device-to-host 2D copy: the worker gathers `height` rows of `width` bytes, `pitch`
    /// bytes apart from `src`, and answers them packed in one [`MemcpyData`].
    pub struct MemcpyDtoH2D {
        /// Source device address of the first row.
        pub src: u64,
        /// Bytes between the starts of two source rows.
        pub pitch: u64,
        /// Bytes per row.
        pub width: u64,
        /// Rows (`width * height` is at most one frame's bulk limit).
        pub height: u64,
        /// Stream (0 = null stream); the response is sent when the stream reaches the copy.
        pub stream: u64,
    }
}

message! {
    /// Device-to-device 2D copy.
    pub struct MemcpyDtoD2D {
        /// Destination device address of the first row.
        pub dst: u64,
        /// Bytes between destination rows.
        pub dst_pitch: u64,
        /// Source device address of the first row.
        pub src: u64,
        /// Bytes between source rows.
        pub src_pitch: u64,
        /// Bytes per row.
        pub width: u64,
        /// Rows.
        pub height: u64,
        /// Stream (0 = null stream).
        pub stream: u64,
        /// Complete the copy before responding.
        pub sync: bool,
    }
}

message! {
    /// `hipMemcpyPeer` / `hipMemcpyPeerAsync`: a device-to-device copy between the named
    /// devices.
    pub struct MemcpyPeer {
        /// Destination device address.
        pub dst: u64,
        /// Device ordinal of the destination.
        pub dst_device: u32,
        /// Source device address.
        pub src: u64,
        /// Device ordinal of the source.
        pub src_device: u32,
        /// Bytes.
        pub len: u64,
        /// Stream (0 = null stream).
        pub stream: u64,
        /// Complete the copy before responding.
        pub sync: bool,
    }
}

message! {
    /// `hipMallocAsync`: a stream-ordered allocation on the stream's device (`device` for
    /// the null stream); answered by [`AsyncAllocation`].
    pub struct MallocAsync {
        /// Device ordinal (the client's current device; used for the null stream).
        pub device: u32,
        /// Bytes.
        pub size: u64,
        /// Stream (0 = null stream).
        pub stream: u64,
    }
}

message! {
    /// A stream-ordered allocation and the device it belongs to (the stream's).
    pub struct AsyncAllocation {
        /// Device address (0 for a zero-byte allocation).
        pub ptr: u64,
        /// Device ordinal the memory lives on.
        pub device: u32,
    }
}

message! {
    /// `hipFreeAsync`: frees `ptr` once the stream's earlier work is done; the address is
    /// unusable from this request on.
    pub struct FreeAsync {
        /// Device address from [`Allocation`].
        pub ptr: u64,
        /// Stream (0 = null stream).
        pub stream: u64,
    }
}
