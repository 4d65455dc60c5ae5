//! Stream capture: while a stream captures, the worker session records the work queued on it
//! (and on streams that join it through events) as nodes of a graph instead of running it;
//! ending the capture hands that graph back, an ordinary graph handle. The calling thread's
//! id and capture mode travel in these messages because one connection serves all of a
//! client's threads, and HIP's capture rules are per thread.

use crate::field::List;
use crate::wire::MAX_GRAPH_NODES;
use zerocopy::byteorder::little_endian::U64;

message! {
    /// `hipStreamBeginCapture`, `hipStreamBeginCaptureToGraph`: `stream` starts capturing
    /// into `graph` (0: a new graph) after `dependencies` (nodes of `graph`).
    pub struct StreamBeginCapture<'a> {
        /// Stream handle (not the null stream).
        pub stream: u64,
        /// `hipStreamCaptureMode`: 0 global, 1 thread-local, 2 relaxed.
        pub mode: u32,
        /// The calling thread (the client's id for it).
        pub thread: u64,
        /// Graph to capture into, or 0 for a new one.
        pub graph: u64,
        /// Nodes of `graph` the first captured work depends on.
        pub dependencies: List<'a, U64, MAX_GRAPH_NODES>,
    }
}

message! {
    /// `hipStreamEndCapture`: ends the capture `stream` began; answered by
    /// [`GraphRef`](crate::wire::GraphRef), the captured graph.
    pub struct StreamEndCapture {
        /// Stream handle (the stream that began the capture).
        pub stream: u64,
        /// The calling thread (the client's id for it).
        pub thread: u64,
    }
}

message! {
    /// `hipStreamIsCapturing`, `hipStreamGetCaptureInfo` (v1, v2): a stream's capture
    /// state; answered by [`CaptureInfo`].
    pub struct StreamCaptureQuery {
        /// Stream handle (0 = the null stream).
        pub stream: u64,
    }
}

message! {
    /// A stream's capture state.
    pub struct CaptureInfo<'a> {
        /// `hipStreamCaptureStatus`: 0 none, 1 active, 2 invalidated.
        pub status: u32,
        /// The capture sequence's id (active captures; 0 otherwise).
        pub id: u64,
        /// The graph being captured into (active captures; 0 otherwise).
        pub graph: u64,
        /// The nodes the stream's next captured work will depend on.
        pub dependencies: List<'a, U64, MAX_GRAPH_NODES>,
    }
}

message! {
    /// `hipStreamUpdateCaptureDependencies`: adds to (`flags` 0) or replaces (`flags` 1)
    /// the nodes the stream's next captured work depends on.
    pub struct StreamUpdateCaptureDependencies<'a> {
        /// Stream handle.
        pub stream: u64,
        /// `hipStreamUpdateCaptureDependenciesFlags`.
        pub flags: u32,
        /// Nodes of the capture's graph.
        pub dependencies: List<'a, U64, MAX_GRAPH_NODES>,
    }
}

message! {
    /// A call HIP forbids during some captures (`hipMalloc`, `hipFree`, ...): refused with
    /// `hipErrorStreamCaptureUnsupported`, invalidating the captures it would disturb, when
    /// the calling thread captures (thread-local or global mode) or, in global mode, when
    /// any thread does; answered by `Empty`.
    pub struct CaptureCheck {
        /// The calling thread (the client's id for it).
        pub thread: u64,
        /// The calling thread's `hipStreamCaptureMode` (`hipThreadExchangeStreamCaptureMode`).
        pub mode: u32,
    }
}
