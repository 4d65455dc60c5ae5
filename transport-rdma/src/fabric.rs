//! What the engine needs from an RDMA device: a connected RC queue pair with registered send
//! and receive rings. Implemented by `verbs::VerbsFabric` (real verbs) and
//! [`crate::mem::MemFabric`] (in memory, for tests).

use std::time::Duration;

/// A work request on the send queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendWr {
    /// SEND_WITH_IMM of `len` bytes from send slot `slot`.
    Data {
        /// Send slot.
        slot: u32,
        /// Bytes.
        len: u32,
        /// Immediate data (host order).
        imm: u32,
    },
    /// Zero-length SEND_WITH_IMM (credit update, FIN).
    Control {
        /// Immediate data (host order).
        imm: u32,
    },
    /// Zero-length RDMA WRITE: touches no memory at the peer, consumes no receive, but fails
    /// with a retry error when the peer is gone (keepalive).
    Probe,
    /// RDMA READ of `len` bytes from the peer's `remote`/`rkey` into local `local`/`lkey`
    /// (one-sided bulk); `id` comes back in [`SendKind::Read`].
    Read {
        /// Caller's tag.
        id: u32,
        /// Local address (inside a registration of this fabric).
        local: u64,
        /// Local key.
        lkey: u32,
        /// Bytes.
        len: u32,
        /// Peer address.
        remote: u64,
        /// Peer key.
        rkey: u32,
    },
}

/// A memory registration made by [`Fabric::register`]; released on drop (after which the
/// device no longer touches the memory).
pub trait Region: Send {
    /// Local key.
    fn lkey(&self) -> u32;
    /// Remote key.
    fn rkey(&self) -> u32;
}

/// Which send work request completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendKind {
    /// A [`SendWr::Data`] from this slot.
    Data(u32),
    /// A [`SendWr::Control`].
    Control,
    /// A [`SendWr::Probe`].
    Probe,
    /// A [`SendWr::Read`] with this id.
    Read(u32),
}

/// A work completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completion {
    /// A send work request finished.
    Sent(SendKind),
    /// A SEND from the peer landed in receive slot `slot`.
    Received {
        /// Receive slot.
        slot: u32,
        /// Bytes received.
        len: u32,
        /// Immediate data (host order).
        imm: u32,
    },
    /// A work request failed. `flushed`: the queue pair was already in the error state
    /// (a consequence, not a cause).
    Failed {
        /// What the request was.
        what: &'static str,
        /// The verbs status, as text.
        status: String,
        /// Whether this is a flush after an earlier error or disconnect.
        flushed: bool,
    },
}

/// Why [`Fabric::block`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// Completions may be ready.
    Completions,
    /// The connection manager reports the peer gone (DISCONNECTED, device removal...).
    Disconnected,
    /// The timeout passed.
    Timeout,
}

/// A device-level failure (post, poll or wait failed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}: {message}")]
pub struct FabricError {
    /// The operation.
    pub what: &'static str,
    /// Why.
    pub message: String,
}

impl FabricError {
    /// An error of operation `what`.
    pub fn new(what: &'static str, message: impl Into<String>) -> Self {
        Self { what, message: message.into() }
    }
}

/// A connected RC queue pair with its rings.
///
/// Slot memory is shared with the device; the engine's state machine decides who may touch
/// a slot: a receive slot only between its completion and its re-post, a send slot only
/// between taking it from the free pool and posting it.
pub trait Fabric: Send + Sync + 'static {
    /// Largest SEND: the smaller of our send slot and the peer's receive slot.
    fn seg_len(&self) -> usize;
    /// Send slots.
    fn send_depth(&self) -> u32;
    /// Our data ring depth (announced to the peer). The fabric posts
    /// `recv_depth() + CONTROL_CREDITS` receive slots at connect, all of `slot_len` bytes
    /// (any SEND may land in any receive).
    fn recv_depth(&self) -> u32;
    /// The peer's receive slots: our initial credits.
    fn peer_recv_depth(&self) -> u32;
    /// Start of send slot `slot` (`slot_len` bytes, writable by the owner of the slot).
    fn send_slot(&self, slot: u32) -> *mut u8;
    /// Start of receive slot `slot`.
    fn recv_slot(&self, slot: u32) -> *const u8;
    /// Posts a send work request (always signaled).
    fn post_send(&self, wr: SendWr) -> Result<(), FabricError>;
    /// Re-posts receive slot `slot`.
    fn post_recv(&self, slot: u32) -> Result<(), FabricError>;
    /// Appends ready completions to `out` without blocking.
    fn poll(&self, out: &mut Vec<Completion>) -> Result<(), FabricError>;
    /// Requests a wake-up for the next completion. Completions that arrive after `arm` wake
    /// [`block`](Self::block); the caller polls once more after arming, so none is missed.
    fn arm(&self) -> Result<(), FabricError>;
    /// Sleeps until a completion event (after [`arm`](Self::arm)), a connection-manager
    /// event, or `timeout`.
    fn block(&self, timeout: Duration) -> Result<Wake, FabricError>;
    /// Starts tearing the connection down (the peer sees a disconnect).
    fn disconnect(&self);
    /// Whether both sides agreed on one-sided bulk at connect (this side may send remote
    /// bulk sections; the peer reads them). Default: no.
    fn peer_reads_remote(&self) -> bool {
        false
    }
    /// Registers `[ptr, ptr + len)`: for the peer to read (`peer_reads`, remote read only, so
    /// read-only memory registers too) or as the local target of RDMA READs (local write).
    /// Default: unsupported.
    ///
    /// # Safety
    /// The memory must stay valid until the region is dropped.
    unsafe fn register(&self, _ptr: *mut u8, _len: usize, _peer_reads: bool) -> Result<Box<dyn Region>, FabricError> {
        Err(FabricError::new("register", "not supported by this fabric"))
    }
}
