//! Stream callbacks (the callback channel), stream memory operations (wait/write value) and
//! per-thread default streams.

/// Stream ids with this tag in their top 16 bits name a per-thread default stream
/// (`hipStreamPerThread`): `tag | thread << 8 | device`, chosen by the client (one per client
/// thread and device) and created by the worker on first sight, a blocking stream of
/// `device`. Created streams' ids never carry it.
pub const PER_THREAD_STREAM_TAG: u64 = 0x5054_0000_0000_0000;
/// The bits of a stream id [`PER_THREAD_STREAM_TAG`] occupies.
pub const PER_THREAD_STREAM_TAG_MASK: u64 = 0xffff_0000_0000_0000;

message! {
    /// `hipStreamWaitValue32/64`, `hipStreamWriteValue32/64` and each operation of
    /// `hipStreamBatchMemOp`: queued on `stream`, run in order with its other work.
    pub struct StreamMemOp {
        /// Stream (0 = null stream).
        pub stream: u64,
        /// Device address of the 32- or 64-bit word (inside one of the session's allocations,
        /// aligned to its width).
        pub ptr: u64,
        /// Value compared with (wait) or stored (write).
        pub value: u64,
        /// Bits of the word a wait looks at (ignored by writes).
        pub mask: u64,
        /// [`stream_mem_op`] kind.
        pub op: u32,
        /// Wait: `hipStreamWaitValueGte/Eq/And/Nor`; write: 0.
        pub flags: u32,
    }
}

/// [`StreamMemOp::op`] values.
pub mod stream_mem_op {
    /// Wait on a 32-bit word.
    pub const WAIT32: u32 = 1;
    /// Wait on a 64-bit word.
    pub const WAIT64: u32 = 2;
    /// Write a 32-bit word.
    pub const WRITE32: u32 = 3;
    /// Write a 64-bit word.
    pub const WRITE64: u32 = 4;
}

message! {
    /// `hipStreamAddCallback` / `hipLaunchHostFunc`: the stream stops at this point until the
    /// client has run callback `token` on its callback channel and answered.
    pub struct StreamAddCallback {
        /// Stream (0 = null stream).
        pub stream: u64,
        /// The current device of the calling thread (where null-stream work runs).
        pub device: u32,
        /// The client's name for the callback (function and user data); echoed in
        /// [`CallbackRun`].
        pub token: u64,
    }
}

message! {
    /// The secret that binds a second connection to this session as its callback channel
    /// (answer to `CallbackChannelOpen`). 128 random bits, issued over the authenticated
    /// connection; valid for one attach.
    pub struct CallbackTicket {
        /// High half.
        pub secret_hi: u64,
        /// Low half.
        pub secret_lo: u64,
    }
}

message! {
    /// The client's callback thread: answers callback `done` (0: none) and asks for the
    /// next one to run; the worker answers within a bounded wait, with `seq` 0 when there
    /// is none yet.
    pub struct CallbackNext {
        /// Sequence number of the callback just run (0: none).
        pub done: u64,
    }
}

message! {
    /// A callback the client is to run now (`seq` 0: none yet, ask again).
    pub struct CallbackRun {
        /// Sequence number to answer with in the next [`CallbackNext`].
        pub seq: u64,
        /// The token given in [`StreamAddCallback`].
        pub token: u64,
        /// The stream's status when the callback was reached (a `hipError_t`).
        pub status: i32,
    }
}
