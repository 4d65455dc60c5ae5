//! Events.

message! {
    /// `hipEventCreateWithFlags`.
    pub struct EventCreate {
        /// Device the event belongs to (the client's current device).
        pub device: u32,
        /// `hipEventDefault`, `hipEventBlockingSync`, `hipEventDisableTiming`…
        pub flags: u32,
    }
}

/// Tag of the event handles a client chooses itself ([`EventCreateAt`]): `tag | n`, `n`
/// below 2^48 (the tag's bits: [`crate::wire::CLIENT_HANDLE_TAG_MASK`]).
pub const CLIENT_EVENT_TAG: u64 = 0x4345_0000_0000_0000;

message! {
    /// `hipEventCreate*` without a round trip: the client names the handle (carrying
    /// [`CLIENT_EVENT_TAG`]); the worker creates the event when it reaches the request, and a
    /// failure is deferred (later use of the handle fails as an unknown event).
    pub struct EventCreateAt {
        /// The handle the client chose.
        pub event: u64,
        /// Device the event belongs to (the client's current device).
        pub device: u32,
        /// `hipEventDefault`, `hipEventBlockingSync`, `hipEventDisableTiming`…
        pub flags: u32,
    }
}

message! {
    /// A new event handle.
    pub struct EventCreated {
        /// Session-scoped handle.
        pub event: u64,
    }
}

message! {
    /// `hipEventRecord`.
    pub struct EventRecord {
        /// Event.
        pub event: u64,
        /// Stream (0 = null stream).
        pub stream: u64,
    }
}

message! {
    /// A request naming one event (synchronize, query, destroy).
    pub struct EventRef {
        /// Handle.
        pub event: u64,
    }
}

message! {
    /// `hipEventElapsedTime`.
    pub struct EventElapsed {
        /// Start event.
        pub start: u64,
        /// End event.
        pub end: u64,
    }
}

message! {
    /// Milliseconds between two events.
    pub struct ElapsedTime {
        /// Milliseconds.
        pub ms: f32,
    }
}
