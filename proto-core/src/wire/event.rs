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
