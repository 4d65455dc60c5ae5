//! The RDMA connection engine: [`Sink`] and [`Source`] over any [`Fabric`].
//!
//! Both halves share one [`Shared`] (a mutex-guarded state and a condition variable). No
//! thread of its own: whichever half needs progress (a free send slot, a credit, received
//! bytes) polls the completion queue itself. When nothing is ready, a waiter first keeps
//! polling for the configured spin time (most replies arrive within it, and then cost no
//! interrupt and no wake-up); after that one waiting thread, the *leader*, arms the
//! completion channel and sleeps in [`Fabric::block`]; the others wait on the condition
//! variable and are woken whenever the leader returns or anyone processes completions
//! (leader/follower). Threads wake at least every [`WAIT_TICK`](crate::config::WAIT_TICK)
//! to check deadlines, shutdown and keepalive.
//!
//! Failure handling mirrors TCP: a peer that goes away (FIN, DISCONNECTED, flushed work
//! requests) at a frame boundary is [`TransportError::Closed`]; in the middle of a frame, an
//! I/O error; a failed work completion or a broken protocol invariant is an I/O error at
//! once; an operation that waits longer than the configured I/O timeout (a missed
//! completion) is a `TimedOut` I/O error. Every error is sticky: the connection is unusable
//! afterwards, so the worker's driver loop returns and drops the session.
//!
//! # Files
//!
//! - this file: the public types ([`Role`], [`Stats`], [`Closer`]), the limits on work
//!   requests in flight, and [`split`], which builds the two halves;
//! - `shared`: the state both halves share, its lock, failure recording and the orderly
//!   close;
//! - `wait`: the wait loop (spin, then leader/follower sleep on the completion channel) and
//!   the keepalive probe;
//! - `completions`: completion processing, receive re-posting and credit updates;
//! - `post`: posting SENDs (data, descriptors, DONE) against send slots and credits;
//! - `one_sided`: registrations (per transfer and cached), RDMA READ/WRITE of bulk sections,
//!   and the connection's [`MemoryRegistry`](transport_core::MemoryRegistry);
//! - `sink`: [`Sink`], the [`FrameSink`](transport_core::FrameSink) (batching, one-sided
//!   bulk, landings);
//! - `source`: [`Source`], the [`FrameSource`](transport_core::FrameSource) (reassembly,
//!   remote and landed bulk).

mod completions;
mod one_sided;
mod post;
mod shared;
mod sink;
mod source;
mod wait;

pub use shared::Shared;
pub use sink::Sink;
pub use source::Source;

use crate::config::{RdmaConfig, CACHED_ONE_SIDED_MIN, COPY_BULK_BELOW, MAX_REMEMBERED_RANGES};
use crate::credit::{Credits, CONTROL_CREDITS};
use crate::fabric::{Access, Fabric};
use crate::regcache::{CacheStats, RegCache, SharedRegion};
use crate::rx::Reassembly;
use crate::tx::{Batcher, SendSlots};
use shared::State;
use std::collections::HashMap;
use std::io;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Instant;
use transport_core::TransportError;

/// Control work requests (credit updates and FIN, bounded by the control credits, plus one
/// keepalive probe) in flight at most; the send queue is sized
/// `send_depth + CONTROL_SQ_DEPTH + READ_DEPTH`.
pub const CONTROL_SQ_DEPTH: u32 = CONTROL_CREDITS + 1;

/// Largest RDMA READ of the one-sided path (one work request).
pub const READ_CHUNK: usize = 1 << 20;
/// RDMA READs in flight per connection at most; the send queue has room for them.
pub const READ_DEPTH: u32 = 4;
/// Largest RDMA WRITE of a reply into a landing (one work request).
pub const WRITE_CHUNK: usize = 1 << 20;
/// RDMA WRITEs in flight per connection at most; the send queue has room for them.
pub const WRITE_DEPTH: u32 = 4;
/// Landings a client may have offered whose replies have not arrived yet (one per
/// device-to-host copy chunk in flight); beyond it, replies come two-sided. The worker
/// refuses a client that exceeds it.
pub const MAX_LANDINGS: usize = 1024;

/// Which end of the connection this is. It decides what long-lived (cached) registrations
/// allow: the worker never hands the client a key to memory the cache registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The application's side: remembered memory (`hipHostMalloc` buffers) is registered
    /// for every use, the worker reading and writing it included.
    Client,
    /// The worker: remembered memory (a session's device allocations) is registered for
    /// local access only (target of its READs, source of its WRITEs).
    Worker,
}

impl Role {
    fn cache_access(self) -> Access {
        match self {
            Role::Client => Access::ALL,
            Role::Worker => Access::LOCAL_WRITE,
        }
    }
}

/// A landing this client offered: held (registered) until the reply arrives.
struct Offered {
    addr: u64,
    len: u64,
    _region: SharedRegion,
}

/// Why a connection became unusable.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Broken {
    /// The peer disconnected or its queue pair went away (flushed work requests).
    PeerGone(String),
    /// A failed completion, a device error or a protocol violation.
    Failed(String),
    /// Closed locally ([`Closer::shutdown`]).
    Shutdown,
}

impl Broken {
    fn to_error(&self) -> TransportError {
        match self {
            Broken::PeerGone(why) => TransportError::Io(io::Error::new(io::ErrorKind::ConnectionReset, format!("RDMA peer gone: {why}"))),
            Broken::Failed(why) => TransportError::Io(io::Error::other(format!("RDMA connection failed: {why}"))),
            Broken::Shutdown => TransportError::Io(io::Error::new(io::ErrorKind::ConnectionAborted, "RDMA connection shut down")),
        }
    }
}

/// Counters, for tests and the throughput estimate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Data SENDs posted.
    pub data_sends: u64,
    /// Pure credit updates posted.
    pub updates: u64,
    /// Stream bytes sent.
    pub bytes_sent: u64,
    /// Data segments received.
    pub segments_received: u64,
    /// Keepalive probes posted.
    pub probes: u64,
    /// Times a sender had to wait for a credit.
    pub credit_stalls: u64,
    /// Bulk sections sent one-sided (announced as remote, read by the peer).
    pub remote_sent: u64,
    /// Remote bulk sections received (read with RDMA READ or skipped).
    pub remote_received: u64,
    /// Bytes read with RDMA READ.
    pub bytes_read: u64,
    /// Bulk sections at or above the one-sided threshold sent two-sided instead (peer
    /// without one-sided support or registration failed).
    pub remote_fallbacks: u64,
    /// Landings offered (client).
    pub landings_offered: u64,
    /// Reply bulk sections RDMA-WRITten into the peer's landings (worker).
    pub remote_written: u64,
    /// Bytes RDMA-WRITten into landings (worker).
    pub bytes_written: u64,
    /// Reply bulk sections that arrived already written into our landing (client).
    pub landed: u64,
    /// Bulk sections moved between the NIC and device memory directly (GPUDirect).
    pub device_direct: u64,
    /// Times a waiter slept on the completion channel (its spin time passed first).
    pub sleeps: u64,
    /// The registration cache's counters.
    pub cache: CacheStats,
}

/// Creates the two halves over a connected fabric whose receive ring is fully posted.
pub fn split<F: Fabric>(fabric: F, config: &RdmaConfig, role: Role) -> (Sink<F>, Source<F>) {
    let seg_len = fabric.seg_len();
    let st = State {
        credits: Credits::new(fabric.peer_recv_depth(), fabric.recv_depth()),
        slots: SendSlots::new(fabric.send_depth()),
        control_in_flight: 0,
        rx: Reassembly::new(),
        broken: None,
        leader: false,
        last_heard: Instant::now(),
        probe_in_flight: false,
        scratch: Vec::with_capacity(32),
        stats: Stats::default(),
        reads_in_flight: 0,
        dones_received: 0,
        remote_outstanding: 0,
        writes_in_flight: 0,
        offered: HashMap::new(),
        landings: HashMap::new(),
    };
    let shared = Arc::new(Shared {
        fabric,
        io_timeout: config.io_timeout,
        keepalive: config.keepalive,
        spin: config.spin,
        st: Mutex::new(st),
        cv: Condvar::new(),
        cache: Mutex::new(RegCache::new(config.reg_cache_bytes, MAX_REMEMBERED_RANGES)),
        role,
        logged_reg_failure: AtomicBool::new(false),
        logged_device: AtomicBool::new(false),
        logged_read: AtomicBool::new(false),
    });
    let (one_sided_min, cached_min) = if config.one_sided {
        let min = config.one_sided_min.max(COPY_BULK_BELOW + 1);
        (min, CACHED_ONE_SIDED_MIN.clamp(COPY_BULK_BELOW + 1, min))
    } else {
        (usize::MAX, usize::MAX)
    };
    (
        Sink {
            sh: shared.clone(),
            batch: Batcher::new(seg_len),
            one_sided_min,
            cached_min,
            remote_sent: 0,
            logged_path: false,
            logged_landing: false,
        },
        Source { sh: shared, head: Vec::with_capacity(4096), bulk_remaining: 0, bulk_fresh: false, remote: None, landing: None, written: None },
    )
}

/// Ends a connection from outside (worker shutdown): its waiting operations fail within
/// [`WAIT_TICK`](crate::config::WAIT_TICK).
#[derive(Clone)]
pub struct Closer<F: Fabric>(Weak<Shared<F>>);

impl<F: Fabric> Closer<F> {
    /// Shuts the connection down (no-op when it is already gone).
    pub fn shutdown(&self) {
        if let Some(sh) = self.0.upgrade() {
            sh.shutdown();
        }
    }
}
