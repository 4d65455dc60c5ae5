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
