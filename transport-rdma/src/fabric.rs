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
    /// RDMA WRITE of `len` bytes from local `local`/`lkey` into the peer's `remote`/`rkey`
    /// (a reply's bulk placed in the peer's landing); `id` comes back in [`SendKind::Write`].
    Write {
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

/// What a registration lets the device do with the memory (local reads are always allowed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Access {
    /// The local device may write into it (target of our RDMA READs).
    pub local_write: bool,
    /// The peer may RDMA-READ it.
    pub remote_read: bool,
    /// The peer may RDMA-WRITE it (needs `local_write` too, as verbs requires).
    pub remote_write: bool,
}

impl Access {
    /// Source of a peer's RDMA READ (read-only memory registers too).
    pub const PEER_READS: Self = Self { local_write: false, remote_read: true, remote_write: false };
    /// Source of our RDMA WRITEs: local access only.
    pub const LOCAL_READ: Self = Self { local_write: false, remote_read: false, remote_write: false };
    /// Target of our RDMA READs.
    pub const LOCAL_WRITE: Self = Self { local_write: true, remote_read: false, remote_write: false };
    /// Target of the peer's RDMA WRITEs (a landing).
    pub const PEER_WRITES: Self = Self { local_write: true, remote_read: false, remote_write: true };
    /// Everything: long-lived registrations reused for any transfer direction.
    pub const ALL: Self = Self { local_write: true, remote_read: true, remote_write: true };

    /// Whether a registration with `self` allows everything `need` asks for.
    pub fn covers(self, need: Access) -> bool {
        (self.local_write || !need.local_write) && (self.remote_read || !need.remote_read) && (self.remote_write || !need.remote_write)
    }
}

/// A memory registration made by [`Fabric::register`]; released on drop (after which the
/// device no longer touches the memory).
pub trait Region: Send + Sync {
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
    /// A [`SendWr::Write`] with this id.
    Write(u32),
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
    /// Whether both sides agreed on landings at connect: the client may offer a reply's
    /// destination and the worker RDMA-WRITEs the reply's bulk into it. Default: no.
    fn landings_agreed(&self) -> bool {
        false
    }
    /// Registers `[ptr, ptr + len)` with `access`. Default: unsupported.
    ///
    /// # Safety
    /// The memory must stay valid until the region is dropped.
    unsafe fn register(&self, _ptr: *mut u8, _len: usize, _access: Access) -> Result<Box<dyn Region>, FabricError> {
        Err(FabricError::new("register", "not supported by this fabric"))
    }
    /// Registers device memory exported as a dma-buf (GPUDirect RDMA); the region's
    /// addresses are the dma-buf's `iova`. Default: unsupported.
    ///
    /// # Safety
    /// The device memory must stay allocated until the region is dropped.
    unsafe fn register_dmabuf(
        &self,
        _fd: std::os::fd::OwnedFd,
        _offset: u64,
        _len: usize,
        _iova: u64,
        _access: Access,
    ) -> Result<Box<dyn Region>, FabricError> {
        Err(FabricError::new("register_dmabuf", "not supported by this fabric"))
    }
}
