//! Streams.

message! {
    /// `hipStreamCreateWithPriority` (and the simpler forms).
    pub struct StreamCreate {
        /// Device ordinal.
        pub device: u32,
        /// `hipStreamDefault` / `hipStreamNonBlocking`.
        pub flags: u32,
        /// Priority (0 = default).
        pub priority: i32,
    }
}

/// Tag of the stream handles a client chooses itself ([`StreamCreateAt`], with the
/// `CLIENT_ALLOCATION` feature): `tag | n`, `n` below 2^48. Handles the worker assigns and
/// per-thread streams never carry it.
pub const CLIENT_STREAM_TAG: u64 = 0x4353_0000_0000_0000;
/// The bits of a handle [`CLIENT_STREAM_TAG`] and [`crate::wire::CLIENT_EVENT_TAG`] occupy.
pub const CLIENT_HANDLE_TAG_MASK: u64 = 0xffff_0000_0000_0000;

message! {
    /// `hipStreamCreate*` without a round trip: the client names the handle (carrying
    /// [`CLIENT_STREAM_TAG`]); the worker creates the stream when it reaches the request, and
    /// a failure is deferred (later use of the handle fails as an unknown stream).
    pub struct StreamCreateAt {
        /// The handle the client chose.
        pub stream: u64,
        /// Device ordinal.
        pub device: u32,
        /// `hipStreamDefault` / `hipStreamNonBlocking`.
        pub flags: u32,
        /// Priority (0 = default).
        pub priority: i32,
    }
}

message! {
    /// A new stream handle.
    pub struct StreamCreated {
        /// Session-scoped handle.
        pub stream: u64,
    }
}

message! {
    /// A request naming one stream (destroy, synchronize, query).
    pub struct StreamRef {
        /// Handle (0 = null stream).
        pub stream: u64,
    }
}

message! {
    /// `hipStreamWaitEvent`.
    pub struct StreamWaitEvent {
        /// Stream that waits.
        pub stream: u64,
        /// Event waited for.
        pub event: u64,
        /// Flags (0).
        pub flags: u32,
    }
}

message! {
    /// Answer to a query: whether all work is complete (`false` = hipErrorNotReady).
    pub struct QueryResult {
        /// Complete.
        pub complete: bool,
    }
}

message! {
    /// `hipStreamGetFlags`, `hipStreamGetPriority`, `hipStreamGetDevice` of a created stream.
    pub struct StreamInfo {
        /// Device ordinal the stream belongs to.
        pub device: u32,
        /// Flags it was created with.
        pub flags: u32,
        /// Priority in effect (after clamping into the device's range).
        pub priority: i32,
    }
}
