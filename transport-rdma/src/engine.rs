//! The RDMA connection engine: [`Sink`] and [`Source`] over any [`Fabric`].
//!
//! Both halves share one [`Shared`] (a mutex-guarded state and a condition variable). No
//! thread of its own: whichever half needs progress (a free send slot, a credit, received
//! bytes) polls the completion queue itself. When nothing is ready, a waiter first keeps
//! polling for the configured spin time (most replies arrive within it, and then cost no
//! interrupt and no wake-up); after that one waiting thread, the *leader*, arms the
//! completion channel and sleeps in [`Fabric::block`]; the others wait on the condition
//! variable and are woken whenever the leader returns or anyone processes completions
//! (leader/follower). Threads wake at least every [`WAIT_TICK`] to check
//! deadlines, shutdown and keepalive.
//!
//! Failure handling mirrors TCP: a peer that goes away (FIN, DISCONNECTED, flushed work
//! requests) at a frame boundary is [`TransportError::Closed`]; in the middle of a frame, an
//! I/O error; a failed work completion or a broken protocol invariant is an I/O error at
//! once; an operation that waits longer than the configured I/O timeout (a missed
//! completion) is a `TimedOut` I/O error. Every error is sticky: the connection is unusable
//! afterwards, so the worker's driver loop returns and drops the session.

use crate::config::{RdmaConfig, CACHED_ONE_SIDED_MIN, COPY_BULK_BELOW, LINGER, MAX_REMEMBERED_RANGES, WAIT_TICK};
use crate::credit::{Credits, SendPurpose, CONTROL_CREDITS};
use crate::fabric::{Access, Completion, Fabric, FabricError, Region, SendKind, SendWr, Wake};
use crate::hook::ExportedMemory;
use crate::regcache::{CacheStats, Export, Lookup, RegCache, SharedRegion};
use crate::rx::{Piece, Reassembly, Segment};
use crate::tx::{Batcher, Ready, SendSlots};
use crate::wire::{Imm, LandingDesc, RemoteDesc, RemoteHow, SegKind, LANDING_DESC_LEN, REMOTE_DESC_LEN};
use proto_core::header::{FrameHeader, HEADER_LEN};
use proto_core::Flags;
use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use transport_core::MemoryRegistry;
use std::time::{Duration, Instant};
use transport_core::{FrameSink, FrameSource, Received, TransportError};

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
            Broken::PeerGone(why) => {
                TransportError::Io(io::Error::new(io::ErrorKind::ConnectionReset, format!("RDMA peer gone: {why}")))
            }
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

struct State {
    credits: Credits,
    slots: SendSlots,
    control_in_flight: u32,
    rx: Reassembly,
    broken: Option<Broken>,
    leader: bool,
    last_heard: Instant,
    probe_in_flight: bool,
    scratch: Vec<Completion>,
    stats: Stats,
    /// RDMA READs posted and not completed.
    reads_in_flight: u32,
    /// Done messages received (one per remote bulk section we sent).
    dones_received: u64,
    /// Remote bulk sections announced and not yet answered by a Done.
    remote_outstanding: u32,
    /// RDMA WRITEs posted and not completed.
    writes_in_flight: u32,
    /// Client: landings offered, by request id.
    offered: HashMap<u64, Offered>,
    /// Worker: landings the client offered, by request id.
    landings: HashMap<u64, LandingDesc>,
}

/// The state both halves share.
pub struct Shared<F: Fabric> {
    fabric: F,
    io_timeout: Option<Duration>,
    keepalive: Duration,
    /// Polling time before a waiter arms the completion channel and sleeps.
    spin: Duration,
    st: Mutex<State>,
    cv: Condvar,
    /// Long-lived registrations (never locked while `st` is held, so registering, a slow
    /// system call, does not stall progress).
    cache: Mutex<RegCache>,
    role: Role,
    /// A failed registration was logged (once per connection).
    logged_reg_failure: AtomicBool,
    /// The outcome of the first device-memory registration was logged.
    logged_device: AtomicBool,
    /// The first RDMA READ of a peer's bulk was logged.
    logged_read: AtomicBool,
}

type Guard<'a> = MutexGuard<'a, State>;

fn timed_out(what: &str) -> TransportError {
    TransportError::Io(io::Error::new(io::ErrorKind::TimedOut, format!("RDMA: timed out waiting for {what}")))
}

impl<F: Fabric> Shared<F> {
    fn lock(&self) -> Guard<'_> {
        self.st.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn fail(&self, st: &mut State, why: Broken) {
        // The first cause wins, except that a real failure explains a disconnect better.
        match (&st.broken, &why) {
            (None, _) | (Some(Broken::PeerGone(_)), Broken::Failed(_)) => {
                tracing::debug!(?why, "RDMA connection broken");
                st.broken = Some(why);
            }
            _ => {}
        }
        // Offered landings are released now: nothing may be written into them any more.
        st.offered.clear();
        self.cv.notify_all();
    }

    /// Registers a whole remembered range for the cache: host memory by address, device
    /// memory through its dma-buf export (logged once per connection either way).
    fn register_remembered(&self, base: u64, len: u64, export: Option<&Export>) -> Result<Box<dyn Region>, FabricError> {
        let access = self.role.cache_access();
        let Some(export) = export else {
            tracing::debug!(base = format_args!("{base:#x}"), len, "RDMA registration cache: registering remembered memory");
            // SAFETY: remembered memory stays valid until its owner forgets it (the
            // registry's contract), which drops the cache's share of the registration.
            return unsafe { self.fabric.register(base as *mut u8, len as usize, access) };
        };
        let first = !self.logged_device.swap(true, Ordering::Relaxed);
        let result = match export() {
            // SAFETY: as above, for device memory: remembered until its owner frees it.
            Ok(ExportedMemory::Dmabuf { fd, offset, len: l, iova }) => unsafe { self.fabric.register_dmabuf(fd, offset, l as usize, iova, access) },
            Ok(ExportedMemory::Host { addr, len: l }) => unsafe { self.fabric.register(addr as *mut u8, l as usize, access) },
            Err(e) => Err(FabricError::new("dma-buf export", e.to_string())),
        };
        match &result {
            Ok(_) if first => tracing::info!("GPUDirect RDMA in use: device memory registered through its dma-buf; copies skip host staging"),
            Err(e) if first => tracing::warn!(error = %e, "GPUDirect RDMA unavailable; device copies go through pinned host staging"),
            Ok(_) => tracing::debug!(base = format_args!("{base:#x}"), len, "RDMA registration cache: registered device memory"),
            Err(e) => tracing::debug!(error = %e, base = format_args!("{base:#x}"), "RDMA registration cache: device memory not registrable"),
        }
        result
    }

    /// The cached registration of remembered device memory covering `[addr, addr + len)`,
    /// if there is one (made now on first use).
    fn device_region(&self, addr: u64, len: usize) -> Option<SharedRegion> {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        match cache.lookup(addr, len as u64, |base, l, export| self.register_remembered(base, l, export)) {
            Lookup::Hit(region) => Some(region),
            Lookup::Miss | Lookup::Failed(_) => None,
        }
    }

    /// Logs a failed registration once per connection.
    fn log_reg_failure(&self, what: &str, e: &FabricError, len: usize) {
        if !self.logged_reg_failure.swap(true, Ordering::Relaxed) {
            tracing::warn!(error = %e, len, "RDMA {what}: registration failed; using the two-sided path (check `ulimit -l`)");
        }
    }

    /// A registration of `[ptr, ptr + len)` allowing `access`: the cache's when the range
    /// lies in remembered memory, else (when `per_transfer`) one made for this transfer,
    /// else `None`. The second value says whether it came from the cache.
    ///
    /// # Safety
    /// The memory must stay valid while the returned registration is held.
    unsafe fn region_for(&self, ptr: *const u8, len: usize, access: Access, per_transfer: bool) -> Result<Option<(SharedRegion, bool)>, FabricError> {
        let cache_access = self.role.cache_access();
        if cache_access.covers(access) {
            let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            // SAFETY: remembered memory stays valid until its owner forgets it (the
            // registry's contract), which drops the cache's share of the registration.
            let found = cache.lookup(ptr as u64, len as u64, |base, l, export| self.register_remembered(base, l, export));
            match found {
                Lookup::Hit(region) => return Ok(Some((region, true))),
                Lookup::Failed(e) => self.log_reg_failure("registration cache", &e, len),
                Lookup::Miss => {}
            }
        }
        if !per_transfer {
            return Ok(None);
        }
        // SAFETY: the caller keeps the memory valid while the registration is held.
        let region = unsafe { self.fabric.register(ptr.cast_mut(), len, access) }?;
        Ok(Some((Arc::from(region), false)))
    }

    /// Re-posts a receive slot: a consumed data slot (`data`) or a control one.
    fn repost(&self, st: &mut State, slot: u32, data: bool) {
        if st.broken.is_some() {
            return;
        }
        match self.fabric.post_recv(slot) {
            Ok(()) if data => st.credits.on_repost_data(),
            Ok(()) => st.credits.on_repost_ctrl(),
            Err(e) => self.fail(st, Broken::Failed(e.to_string())),
        }
    }

    /// Sends a pure credit update when enough credits are owed.
    fn maybe_update(&self, st: &mut State) {
        if st.broken.is_none() && st.control_in_flight < CONTROL_SQ_DEPTH && st.credits.wants_update() {
            let grant = st.credits.on_send(SendPurpose::Update);
            let imm = Imm { kind: SegKind::Update, grant }.encode();
            match self.fabric.post_send(SendWr::Control { imm }) {
                Ok(()) => {
                    st.control_in_flight += 1;
                    st.stats.updates += 1;
                }
                Err(e) => self.fail(st, Broken::Failed(e.to_string())),
            }
        }
    }

    /// Processes every ready completion.
    fn progress(&self, st: &mut State) {
        let mut done = std::mem::take(&mut st.scratch);
        done.clear();
        if let Err(e) = self.fabric.poll(&mut done) {
            self.fail(st, Broken::Failed(e.to_string()));
        }
        let any = !done.is_empty();
        for c in done.drain(..) {
            match c {
                Completion::Sent(kind) => {
                    st.last_heard = Instant::now();
                    match kind {
                        SendKind::Data(slot) => st.slots.put(slot),
                        SendKind::Control => st.control_in_flight = st.control_in_flight.saturating_sub(1),
                        SendKind::Probe => {
                            st.control_in_flight = st.control_in_flight.saturating_sub(1);
                            st.probe_in_flight = false;
                        }
                        SendKind::Read(_) => st.reads_in_flight = st.reads_in_flight.saturating_sub(1),
                        SendKind::Write(_) => st.writes_in_flight = st.writes_in_flight.saturating_sub(1),
                    }
                }
                Completion::Received { slot, len, imm } => {
                    st.last_heard = Instant::now();
                    let imm = match Imm::decode(imm, len) {
                        Ok(imm) => imm,
                        Err(e) => {
                            self.fail(st, Broken::Failed(format!("peer violated the transport protocol: {e}")));
                            continue;
                        }
                    };
                    if let Err(e) = st.credits.on_grant(imm.grant) {
                        self.fail(st, Broken::Failed(format!("peer violated flow control: {e}")));
                        continue;
                    }
                    match imm.kind {
                        SegKind::Data => {
                            st.stats.segments_received += 1;
                            if st.rx.push(Segment { slot, len }).is_err() {
                                self.fail(st, Broken::Failed("peer sent data after FIN".into()));
                            }
                        }
                        SegKind::Update => self.repost(st, slot, false),
                        SegKind::Fin => st.rx.push_fin(),
                        SegKind::Remote => {
                            st.stats.segments_received += 1;
                            if st.rx.push_remote(slot).is_err() {
                                self.fail(st, Broken::Failed("peer sent data after FIN".into()));
                            }
                        }
                        SegKind::Done => {
                            if st.remote_outstanding == 0 {
                                self.fail(st, Broken::Failed("peer violated the transport protocol: DONE without a remote bulk".into()));
                                continue;
                            }
                            st.remote_outstanding -= 1;
                            st.dones_received += 1;
                            self.repost(st, slot, false);
                        }
                        SegKind::Landing => self.on_landing(st, slot),
                    }
                }
                Completion::Failed { what, status, flushed } => {
                    let why = format!("{what} completion: {status}");
                    self.fail(st, if flushed { Broken::PeerGone(why) } else { Broken::Failed(why) });
                }
            }
        }
        st.scratch = done;
        if any {
            self.maybe_update(st);
            self.cv.notify_all();
        }
    }

    /// A landing offered by the client (worker side): recorded for the reply to its request.
    fn on_landing(&self, st: &mut State, slot: u32) {
        // SAFETY: the slot stays out of the device's hands until it is re-posted below.
        let bytes = unsafe { std::slice::from_raw_parts(self.fabric.recv_slot(slot), LANDING_DESC_LEN) };
        let parsed = LandingDesc::parse(bytes);
        self.repost(st, slot, true);
        let violation = match parsed {
            Err(e) => Some(e.to_string()),
            Ok(_) if self.role != Role::Worker || !self.fabric.landings_agreed() => Some("landing offered without agreement".into()),
            Ok(_) if st.landings.len() >= MAX_LANDINGS => Some(format!("more than {MAX_LANDINGS} landings outstanding")),
            Ok(d) => st.landings.insert(d.request_id, d).map(|_| format!("two landings for request {}", d.request_id)),
        };
        if let Some(why) = violation {
            self.fail(st, Broken::Failed(format!("peer violated the transport protocol: {why}")));
        }
    }

    /// Waits until `ready` yields a value (or an error), driving progress meanwhile.
    fn wait<'a, T>(
        &'a self,
        mut st: Guard<'a>,
        what: &str,
        mut ready: impl FnMut(&Self, &mut State) -> Result<Option<T>, TransportError>,
    ) -> Result<(Guard<'a>, T), TransportError> {
        let started = Instant::now();
        let deadline = self.io_timeout.map(|t| started + t);
        let spin_until = started + self.spin;
        let mut armed = false;
        loop {
            self.progress(&mut st);
            if let Some(v) = ready(self, &mut st)? {
                return Ok((st, v));
            }
            let now = Instant::now();
            if now < spin_until && st.broken.is_none() && deadline.is_none_or(|d| now < d) {
                // Poll without sleeping: a completion due within the spin window skips the
                // interrupt and the wake-up. The lock is let go so other threads progress,
                // and the CPU is yielded to any thread that is ready to run (the peer's, the
                // stream executor's) so spinning never delays the reply it waits for.
                drop(st);
                std::thread::yield_now();
                st = self.lock();
                continue;
            }
            let mut tick = WAIT_TICK;
            if let Some(d) = deadline {
                if now >= d {
                    return Err(timed_out(what));
                }
                tick = tick.min(d - now);
            }
            if st.leader {
                st = self.cv.wait_timeout(st, tick).unwrap_or_else(|p| p.into_inner()).0;
                continue;
            }
            if !armed {
                // Arm, then poll once more: a completion that arrived in between is found
                // now, any later one wakes `block`.
                if let Err(e) = self.fabric.arm() {
                    self.fail(&mut st, Broken::Failed(e.to_string()));
                    continue;
                }
                armed = true;
                continue;
            }
            st.leader = true;
            st.stats.sleeps += 1;
            drop(st);
            let woke = self.fabric.block(tick);
            st = self.lock();
            st.leader = false;
            armed = false;
            self.cv.notify_all();
            match woke {
                Ok(Wake::Completions) => {}
                Ok(Wake::Disconnected) => {
                    // Completions that arrived before the disconnect are still processed
                    // (at the top of the loop) before the source sees the end.
                    self.progress(&mut st);
                    self.fail(&mut st, Broken::PeerGone("peer disconnected".into()));
                }
                Ok(Wake::Timeout) => self.maybe_probe(&mut st),
                Err(e) => self.fail(&mut st, Broken::Failed(e.to_string())),
            }
        }
    }

    /// Keepalive: after `keepalive` without hearing from the peer, a zero-length RDMA WRITE.
    /// A vanished peer (no DISCONNECTED ever arrives when its host dies) fails it with a
    /// transport retry error.
    fn maybe_probe(&self, st: &mut State) {
        if st.broken.is_some() || st.probe_in_flight || st.control_in_flight >= CONTROL_SQ_DEPTH {
            return;
        }
        if st.last_heard.elapsed() < self.keepalive {
            return;
        }
        match self.fabric.post_send(SendWr::Probe) {
            Ok(()) => {
                st.probe_in_flight = true;
                st.control_in_flight += 1;
                st.stats.probes += 1;
                st.last_heard = Instant::now();
            }
            Err(e) => self.fail(st, Broken::Failed(e.to_string())),
        }
    }

    fn check_usable(st: &State) -> Result<(), TransportError> {
        match &st.broken {
            Some(b) => Err(b.to_error()),
            None => Ok(()),
        }
    }

    /// Posts a filled send slot as one SEND, waiting for a credit.
    fn post_data(&self, ready: Ready) -> Result<(), TransportError> {
        self.post_seg(ready, SegKind::Data)
    }

    /// Posts a filled send slot as one SEND of `kind` (data or remote descriptor).
    fn post_seg(&self, ready: Ready, kind: SegKind) -> Result<(), TransportError> {
        let mut stalled = false;
        let st = self.lock();
        let (mut st, ()) = self.wait(st, "a receive credit from the peer", |sh, st| {
            Self::check_usable(st)?;
            if !st.credits.may_send(SendPurpose::Data) {
                if !stalled {
                    stalled = true;
                    st.stats.credit_stalls += 1;
                }
                return Ok(None);
            }
            let grant = st.credits.on_send(SendPurpose::Data);
            let imm = Imm { kind, grant }.encode();
            let wr = SendWr::Data { slot: ready.slot, len: ready.len as u32, imm };
            if let Err(e) = sh.fabric.post_send(wr) {
                st.slots.put(ready.slot);
                sh.fail(st, Broken::Failed(e.to_string()));
                return Err(st.broken.as_ref().map_or_else(|| timed_out("post"), Broken::to_error));
            }
            Ok(Some(()))
        })?;
        st.stats.data_sends += 1;
        st.stats.bytes_sent += ready.len as u64;
        Ok(())
    }

    /// Tells the peer its last remote bulk section is released (waits for a control credit).
    fn send_done(&self) -> Result<(), TransportError> {
        let st = self.lock();
        let (mut st, ()) = self.wait(st, "a control credit for DONE", |sh, st| {
            Self::check_usable(st)?;
            if st.control_in_flight >= CONTROL_SQ_DEPTH || !st.credits.may_send(SendPurpose::Done) {
                return Ok(None);
            }
            let grant = st.credits.on_send(SendPurpose::Done);
            let imm = Imm { kind: SegKind::Done, grant }.encode();
            if let Err(e) = sh.fabric.post_send(SendWr::Control { imm }) {
                sh.fail(st, Broken::Failed(e.to_string()));
                return Err(st.broken.as_ref().map_or_else(|| timed_out("post"), Broken::to_error));
            }
            st.control_in_flight += 1;
            Ok(Some(()))
        })?;
        st.stats.remote_received += 1;
        Ok(())
    }

    /// RDMA-READs `dst.len()` bytes from the peer's `raddr`/`rkey` into `dst` (registered
    /// through the cache or for this transfer), waiting for every completion. A
    /// per-transfer registration is dropped before returning, error or not, so the device
    /// never writes into `dst` afterwards.
    fn read_remote(&self, dst: &mut [u8], raddr: u64, rkey: u32) -> Result<(), TransportError> {
        if dst.is_empty() {
            return Ok(());
        }
        // SAFETY: `dst` is borrowed mutably for this whole call and the registration is
        // dropped (or, cached, outlives it as remembered memory) before it returns.
        let region = match unsafe { self.region_for(dst.as_ptr(), dst.len(), Access::LOCAL_WRITE, true) } {
            Ok(Some((region, _))) => region,
            Ok(None) => unreachable!("per-transfer registration requested"),
            Err(e) => {
                return Err(TransportError::Io(io::Error::other(format!(
                    "RDMA: cannot register the destination of a remote bulk section: {e} (registration pins memory: check `ulimit -l`, or set HIP_REMOTE_RDMA_ONE_SIDED=0)"
                ))))
            }
        };
        let total = dst.len();
        if !self.logged_read.swap(true, Ordering::Relaxed) {
            tracing::info!("RDMA one-sided bulk in use (RDMA-READing the peer's large bulk sections)");
        }
        self.post_rdma(false, dst.as_mut_ptr() as u64, region.lkey(), total, raddr, rkey)?;
        self.wait_rdma(false)?;
        self.lock().stats.bytes_read += total as u64;
        Ok(())
    }

    /// Posts RDMA READs (`write` false: peer → local) or WRITEs (local → peer) of `total`
    /// bytes in chunks, keeping at most READ_DEPTH/WRITE_DEPTH in flight; returns once all
    /// are posted (not completed).
    fn post_rdma(&self, write: bool, local: u64, lkey: u32, total: usize, raddr: u64, rkey: u32) -> Result<(), TransportError> {
        let (chunk, depth) = if write { (WRITE_CHUNK, WRITE_DEPTH) } else { (READ_CHUNK, READ_DEPTH) };
        let mut posted = 0usize;
        let st = self.lock();
        let (_st, ()) = self.wait(st, if write { "RDMA WRITE completions" } else { "RDMA READ completions" }, |sh, st| {
            Self::check_usable(st)?;
            loop {
                let in_flight = if write { st.writes_in_flight } else { st.reads_in_flight };
                if posted == total || in_flight >= depth {
                    break;
                }
                let len = (total - posted).min(chunk);
                let (l, r, n) = (local + posted as u64, raddr + posted as u64, len as u32);
                let wr = if write {
                    SendWr::Write { id: 0, local: l, lkey, len: n, remote: r, rkey }
                } else {
                    SendWr::Read { id: 0, local: l, lkey, len: n, remote: r, rkey }
                };
                if let Err(e) = sh.fabric.post_send(wr) {
                    sh.fail(st, Broken::Failed(e.to_string()));
                    return Err(st.broken.as_ref().map_or_else(|| timed_out("post"), Broken::to_error));
                }
                if write {
                    st.writes_in_flight += 1;
                } else {
                    st.reads_in_flight += 1;
                }
                posted += len;
            }
            Ok((posted == total).then_some(()))
        })?;
        Ok(())
    }

    /// Waits until every posted READ (or WRITE) has completed.
    fn wait_rdma(&self, write: bool) -> Result<(), TransportError> {
        let st = self.lock();
        let (_st, ()) = self.wait(st, if write { "RDMA WRITE completions" } else { "RDMA READ completions" }, |_, st| {
            Self::check_usable(st)?;
            Ok((if write { st.writes_in_flight } else { st.reads_in_flight } == 0).then_some(()))
        })?;
        Ok(())
    }

    fn take_slot(&self) -> Result<u32, TransportError> {
        let st = self.lock();
        let (_guard, slot) = self.wait(st, "a free send slot", |_, st| {
            Self::check_usable(st)?;
            Ok(st.slots.take())
        })?;
        Ok(slot)
    }

    fn stats(&self) -> Stats {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner()).stats();
        Stats { cache, ..self.lock().stats }
    }

    /// Marks the connection closed locally; every waiting and later operation fails.
    fn shutdown(&self) {
        let mut st = self.lock();
        self.fail(&mut st, Broken::Shutdown);
    }
}

impl<F: Fabric> Drop for Shared<F> {
    /// Orderly close: a FIN (when a credit allows), then up to [`LINGER`] for the last
    /// SENDs to complete, so the peer holds every byte before it sees the disconnect.
    fn drop(&mut self) {
        let mut st = self.st.lock().unwrap_or_else(|p| p.into_inner());
        if st.broken.is_none() {
            self.progress(&mut st);
        }
        if st.broken.is_none() && st.credits.may_send(SendPurpose::Fin) && st.control_in_flight < CONTROL_SQ_DEPTH {
            let grant = st.credits.on_send(SendPurpose::Fin);
            let imm = Imm { kind: SegKind::Fin, grant }.encode();
            if self.fabric.post_send(SendWr::Control { imm }).is_ok() {
                st.control_in_flight += 1;
            }
        }
        let until = Instant::now() + LINGER;
        while st.broken.is_none() && !(st.slots.all_free() && st.control_in_flight == 0) && Instant::now() < until {
            let _ = self.fabric.arm();
            self.progress(&mut st);
            if st.slots.all_free() && st.control_in_flight == 0 {
                break;
            }
            drop(st);
            let _ = self.fabric.block(WAIT_TICK.min(until.saturating_duration_since(Instant::now())));
            st = self.st.lock().unwrap_or_else(|p| p.into_inner());
        }
        st.offered.clear();
        drop(st);
        // Registrations go before the fabric's protection domain does.
        self.cache.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.fabric.disconnect();
    }
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
        Sink { sh: shared.clone(), batch: Batcher::new(seg_len), one_sided_min, cached_min, remote_sent: 0, logged_path: false, logged_landing: false },
        Source { sh: shared, head: Vec::with_capacity(4096), bulk_remaining: 0, bulk_fresh: false, remote: None, landing: None, written: None },
    )
}

/// Ends a connection from outside (worker shutdown): its waiting operations fail within
/// [`WAIT_TICK`].
#[derive(Clone)]
pub struct Closer<F: Fabric>(Weak<Shared<F>>);

impl<F: Fabric> Closer<F> {
    /// Shuts the connection down (no-op when it is already gone).
    pub fn shutdown(&self) {
        if let Some(sh) = self.0.upgrade() {
            sh.shutdown();
        }
    }

    /// Whether either half is still alive.
    pub fn is_alive(&self) -> bool {
        self.0.strong_count() > 0
    }
}

/// The sending half.
pub struct Sink<F: Fabric> {
    sh: Arc<Shared<F>>,
    batch: Batcher,
    /// Smallest bulk sent one-sided from memory that must be registered for the transfer
    /// (`usize::MAX`: one-sided off in the configuration).
    one_sided_min: usize,
    /// Smallest bulk sent one-sided from remembered (cache-registered) memory.
    cached_min: usize,
    /// Remote bulk sections sent (each answered by one Done).
    remote_sent: u64,
    /// Whether the path choice for large bulk was logged.
    logged_path: bool,
    /// Whether the first use of a landing was logged.
    logged_landing: bool,
}

impl<F: Fabric> Sink<F> {
    /// Appends `bytes` to the stream, posting every slot that fills.
    fn write(&mut self, bytes: &[u8]) -> Result<(), TransportError> {
        let mut done = 0;
        while done < bytes.len() {
            let room = match self.batch.room(bytes.len() - done) {
                Some(room) => room,
                None => {
                    let slot = self.sh.take_slot()?;
                    self.batch.open(slot);
                    self.batch.room(bytes.len() - done).expect("a slot was just opened")
                }
            };
            // SAFETY: the open slot belongs to this sink until it is posted (taken from the
            // free pool, not handed to the device), and `room` lies inside it.
            unsafe {
                let dst = self.sh.fabric.send_slot(room.slot).add(room.offset);
                std::ptr::copy_nonoverlapping(bytes.as_ptr().add(done), dst, room.len);
            }
            done += room.len;
            if let Some(ready) = self.batch.commit(room.len) {
                self.sh.post_data(ready)?;
            }
        }
        Ok(())
    }

    /// Sends `head` and then `bulk` one-sided when the policy and the peer allow it: `bulk` is
    /// registered (or found in the registration cache), announced by a [`SegKind::Remote`]
    /// descriptor in stream order, and held until the peer's Done (it has read or skipped
    /// the bytes). `Ok(false)`: not taken, the caller sends two-sided.
    fn try_remote(&mut self, head: &[u8], bulk: &[u8]) -> Result<bool, TransportError> {
        if bulk.len() < self.cached_min {
            return Ok(false);
        }
        let per_transfer = bulk.len() >= self.one_sided_min;
        if !self.sh.fabric.peer_reads_remote() {
            if per_transfer {
                if !self.logged_path {
                    self.logged_path = true;
                    tracing::info!("RDMA one-sided bulk: the peer does not accept it; large bulk goes two-sided (copied through the rings)");
                }
                self.sh.lock().stats.remote_fallbacks += 1;
            }
            return Ok(false);
        }
        // SAFETY: the registration only lets the peer read (or is a cached one of remembered
        // memory); `bulk` is borrowed for this whole call, which waits for the peer's Done.
        let region = match unsafe { self.sh.region_for(bulk.as_ptr(), bulk.len(), Access::PEER_READS, per_transfer) } {
            Ok(Some((region, _))) => region,
            Ok(None) => return Ok(false),
            Err(e) => {
                self.sh.log_reg_failure("one-sided bulk", &e, bulk.len());
                self.sh.lock().stats.remote_fallbacks += 1;
                return Ok(false);
            }
        };
        if !self.logged_path {
            self.logged_path = true;
            tracing::info!(min = self.one_sided_min, "RDMA one-sided bulk in use (the peer RDMA-READs large bulk sections)");
        }
        self.write(head)?;
        self.post_open()?;
        let desc = RemoteDesc { addr: bulk.as_ptr() as u64, len: bulk.len() as u64, rkey: region.rkey(), how: RemoteHow::Read };
        // Counted before the post: the peer's Done may be processed by another thread as
        // soon as the descriptor is on the wire.
        self.sh.lock().remote_outstanding += 1;
        self.post_desc(&desc.emit(), SegKind::Remote)?;
        self.remote_sent += 1;
        let want = self.remote_sent;
        let st = self.sh.lock();
        let (mut st, ()) = self.sh.wait(st, "the peer to read a remote bulk section", |_, st| {
            if st.dones_received >= want {
                return Ok(Some(()));
            }
            Shared::<F>::check_usable(st)?;
            Ok(None)
        })?;
        st.stats.remote_sent += 1;
        st.stats.bytes_sent += bulk.len() as u64;
        drop(st);
        drop(region);
        Ok(true)
    }

    /// Worker side: when `head` is the reply to a request whose client offered a landing of
    /// exactly `bulk.len()` bytes, RDMA-WRITEs `bulk` into it, then sends `head` and a
    /// `written` descriptor where the bulk would be. Every reply consumes its request's
    /// landing, used or not. `Ok(false)`: not taken, the caller sends the bulk otherwise.
    fn try_landing(&mut self, head: &[u8], bulk: &[u8]) -> Result<bool, TransportError> {
        if !self.sh.fabric.landings_agreed() || head.len() < HEADER_LEN {
            return Ok(false);
        }
        let Ok(header) = FrameHeader::parse(&head[..HEADER_LEN]) else { return Ok(false) };
        if !header.flags.contains(Flags::RESPONSE) {
            return Ok(false);
        }
        let landing = {
            let mut st = self.sh.lock();
            if st.landings.is_empty() {
                return Ok(false);
            }
            st.landings.remove(&header.request_id)
        };
        let Some(landing) = landing else { return Ok(false) };
        if bulk.is_empty() || landing.len != bulk.len() as u64 {
            // An error reply, or not the size the client expects: it gets what it gets.
            return Ok(false);
        }
        // SAFETY: `bulk` is borrowed for this whole call, which waits for the WRITEs to
        // complete before the registration is dropped.
        let region = match unsafe { self.sh.region_for(bulk.as_ptr(), bulk.len(), Access::LOCAL_READ, bulk.len() >= self.one_sided_min) } {
            Ok(Some((region, _))) => region,
            Ok(None) => return Ok(false),
            Err(e) => {
                self.sh.log_reg_failure("landing", &e, bulk.len());
                return Ok(false);
            }
        };
        self.write_into_landing(head, bulk.as_ptr() as u64, &*region, bulk.len(), &landing)?;
        drop(region);
        Ok(true)
    }

    /// RDMA-WRITEs `len` bytes at local `addr` (inside `region`) into `landing`, then sends
    /// `head` and a `written` descriptor; returns once the WRITEs completed (the NIC no
    /// longer reads the source).
    fn write_into_landing(&mut self, head: &[u8], addr: u64, region: &dyn Region, len: usize, landing: &LandingDesc) -> Result<(), TransportError> {
        if !self.logged_landing {
            self.logged_landing = true;
            tracing::info!("RDMA landings in use (reply bulk is RDMA-WRITten into the client's buffer)");
        }
        // WRITEs first: an RC queue pair executes work requests in order, so the head and
        // the descriptor posted after them reach the client only once the bytes are placed.
        self.sh.post_rdma(true, addr, region.lkey(), len, landing.addr, landing.rkey)?;
        self.write(head)?;
        self.post_open()?;
        let desc = RemoteDesc { addr: 0, len: len as u64, rkey: 0, how: RemoteHow::Written };
        self.post_desc(&desc.emit(), SegKind::Remote)?;
        self.sh.wait_rdma(true)?;
        let mut st = self.sh.lock();
        st.stats.remote_written += 1;
        st.stats.bytes_written += len as u64;
        st.stats.bytes_sent += len as u64;
        Ok(())
    }

    /// Posts a descriptor (remote bulk or landing) as one SEND of `kind`, outside the batch.
    fn post_desc(&mut self, desc: &[u8], kind: SegKind) -> Result<(), TransportError> {
        let slot = self.sh.take_slot()?;
        // SAFETY: the slot was just taken from the free pool (ours until posted); a slot is
        // at least MIN_SLOT_LEN bytes, more than any descriptor.
        unsafe { std::ptr::copy_nonoverlapping(desc.as_ptr(), self.sh.fabric.send_slot(slot), desc.len()) };
        self.sh.post_seg(Ready { slot, len: desc.len() }, kind)
    }

    fn post_open(&mut self) -> Result<(), TransportError> {
        match self.batch.flush() {
            Some(ready) => self.sh.post_data(ready),
            None => Ok(()),
        }
    }

    /// Counters of this connection.
    pub fn stats(&self) -> Stats {
        self.sh.stats()
    }

    /// A handle that can shut the connection down from another thread.
    pub fn closer(&self) -> Closer<F> {
        Closer(Arc::downgrade(&self.sh))
    }

    /// The fabric (for diagnostics and fault injection in tests).
    pub fn fabric(&self) -> &F {
        &self.sh.fabric
    }
}

impl<F: Fabric> Drop for Sink<F> {
    fn drop(&mut self) {
        // Unflushed queued frames are dropped, as on TCP; the slot goes back for the linger.
        if let Some(slot) = self.batch.take_open() {
            self.sh.lock().slots.put(slot);
        }
    }
}

impl<F: Fabric> FrameSink for Sink<F> {
    fn send(&mut self, head: &[u8], bulk: &[u8]) -> Result<(), TransportError> {
        if self.try_landing(head, bulk)? || self.try_remote(head, bulk)? {
            return Ok(());
        }
        self.write(head)?;
        self.write(bulk)?;
        self.post_open()
    }

    fn queue(&mut self, head: &[u8], bulk: &[u8]) -> Result<(), TransportError> {
        if self.try_landing(head, bulk)? || self.try_remote(head, bulk)? {
            return Ok(());
        }
        self.write(head)?;
        self.write(bulk)?;
        if bulk.len() > COPY_BULK_BELOW {
            self.post_open()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), TransportError> {
        self.post_open()
    }

    fn pending(&self) -> usize {
        self.batch.pending()
    }

    unsafe fn offer_landing(&mut self, request_id: u64, dst: *mut u8, len: usize) -> Result<(), TransportError> {
        if self.sh.role != Role::Client || !self.sh.fabric.landings_agreed() || len < self.cached_min {
            return Ok(());
        }
        {
            let st = self.sh.lock();
            if st.offered.len() >= MAX_LANDINGS || st.offered.contains_key(&request_id) {
                return Ok(());
            }
        }
        // SAFETY: the caller keeps `dst` valid and untouched until the reply arrives; the
        // registration is held until then (or until the connection fails).
        let region = match unsafe { self.sh.region_for(dst, len, Access::PEER_WRITES, len >= self.one_sided_min) } {
            Ok(Some((region, _))) => region,
            Ok(None) => return Ok(()),
            Err(e) => {
                self.sh.log_reg_failure("landing", &e, len);
                return Ok(());
            }
        };
        let desc = LandingDesc { addr: dst as u64, len: len as u64, rkey: region.rkey(), request_id };
        {
            let mut st = self.sh.lock();
            Shared::<F>::check_usable(&st)?;
            st.offered.insert(request_id, Offered { addr: desc.addr, len: desc.len, _region: region });
            st.stats.landings_offered += 1;
        }
        self.post_desc(&desc.emit(), SegKind::Landing)
    }

    fn send_from_device(&mut self, head: &[u8], addr: u64, len: usize) -> Result<bool, TransportError> {
        if len == 0 || !self.sh.fabric.landings_agreed() || head.len() < HEADER_LEN {
            return Ok(false);
        }
        let Ok(header) = FrameHeader::parse(&head[..HEADER_LEN]) else { return Ok(false) };
        if !header.flags.contains(Flags::RESPONSE) || header.bulk_len as usize != len {
            return Ok(false);
        }
        let landing = match self.sh.lock().landings.get(&header.request_id) {
            Some(l) if l.len == len as u64 => *l,
            _ => return Ok(false),
        };
        // Only a registered device range qualifies; otherwise the caller stages the bytes
        // and the landing is still there for that send.
        let Some(region) = self.sh.device_region(addr, len) else { return Ok(false) };
        self.sh.lock().landings.remove(&header.request_id);
        self.write_into_landing(head, addr, &*region, len, &landing)?;
        self.sh.lock().stats.device_direct += 1;
        Ok(true)
    }

    fn memory_registry(&self) -> Option<Arc<dyn MemoryRegistry>> {
        Some(Arc::new(Registry(Arc::downgrade(&self.sh))))
    }
}

/// The [`MemoryRegistry`] of a connection: feeds its registration cache.
struct Registry<F: Fabric>(Weak<Shared<F>>);

impl<F: Fabric> MemoryRegistry for Registry<F> {
    fn remember(&self, addr: usize, len: usize) {
        if let Some(sh) = self.0.upgrade() {
            sh.cache.lock().unwrap_or_else(|p| p.into_inner()).remember(addr as u64, len as u64);
        }
    }

    fn forget(&self, addr: usize) {
        if let Some(sh) = self.0.upgrade() {
            sh.cache.lock().unwrap_or_else(|p| p.into_inner()).forget(addr as u64);
        }
    }

    fn remember_device(&self, addr: u64, len: u64, export: transport_core::DeviceExport) {
        let Some(sh) = self.0.upgrade() else { return };
        let export: Export = Arc::new(move || {
            let (fd, offset) = export()?;
            Ok(ExportedMemory::Dmabuf { fd, offset, len, iova: addr })
        });
        sh.cache.lock().unwrap_or_else(|p| p.into_inner()).remember_device(addr, len, export);
    }
}

/// The receiving half.
pub struct Source<F: Fabric> {
    sh: Arc<Shared<F>>,
    head: Vec<u8>,
    bulk_remaining: usize,
    /// The current frame's bulk has not been touched yet (it may be announced as remote).
    bulk_fresh: bool,
    /// The current frame's bulk is remote: where the next byte is read from.
    remote: Option<RemoteDesc>,
    /// Client: the landing offered for the current reply (taken at its head).
    landing: Option<Offered>,
    /// Client: the current reply's bulk was written into this landing by the worker.
    written: Option<Offered>,
}

impl<F: Fabric> Source<F> {
    /// Reads the next `n` stream bytes into `dst` (or discards them when `dst` is `None`).
    /// `at_boundary`: the stream ending before the first byte is a clean close.
    fn read(&mut self, mut dst: Option<&mut [u8]>, n: usize, at_boundary: bool) -> Result<(), TransportError> {
        let mut done = 0;
        while done < n {
            let st = self.sh.lock();
            let (st, piece): (Guard<'_>, Piece) = self.sh.wait(st, "data from the peer", |_, st| {
                if let Some(piece) = st.rx.peek(n - done) {
                    return Ok(Some(piece));
                }
                if st.rx.front_remote().is_some() {
                    return Err(TransportError::Io(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "RDMA: peer announced a remote bulk section where frame bytes were expected",
                    )));
                }
                let ended = st.rx.fin_received() || matches!(st.broken, Some(Broken::PeerGone(_)));
                if ended {
                    return Err(if at_boundary && done == 0 {
                        TransportError::Closed
                    } else {
                        TransportError::Io(io::Error::new(io::ErrorKind::UnexpectedEof, "RDMA connection closed mid-frame"))
                    });
                }
                Shared::<F>::check_usable(st)?;
                Ok(None)
            })?;
            drop(st);
            if let Some(dst) = dst.as_deref_mut() {
                // SAFETY: the segment's slot stays out of the device's hands until it is
                // consumed below (the engine re-posts only consumed slots), and `piece` lies
                // inside the received bytes.
                unsafe {
                    let src = self.sh.fabric.recv_slot(piece.slot).add(piece.offset);
                    std::ptr::copy_nonoverlapping(src, dst.as_mut_ptr().add(done), piece.len);
                }
            }
            let mut st = self.sh.lock();
            if let Some(slot) = st.rx.consume(piece.len) {
                self.sh.repost(&mut st, slot, true);
                self.sh.maybe_update(&mut st);
            }
            done += piece.len;
        }
        Ok(())
    }

    /// At the start of a frame's bulk: waits for its first stream item and, when it is a
    /// remote descriptor, takes it (the bulk is then read with RDMA READ).
    fn open_bulk(&mut self) -> Result<(), TransportError> {
        if !std::mem::take(&mut self.bulk_fresh) {
            return Ok(());
        }
        let st = self.sh.lock();
        let (mut st, remote) = self.sh.wait(st, "data from the peer", |_, st| {
            if st.rx.peek(1).is_some() {
                return Ok(Some(None));
            }
            if let Some(slot) = st.rx.front_remote() {
                return Ok(Some(Some(slot)));
            }
            if st.rx.fin_received() || matches!(st.broken, Some(Broken::PeerGone(_))) {
                return Err(TransportError::Io(io::Error::new(io::ErrorKind::UnexpectedEof, "RDMA connection closed mid-frame")));
            }
            Shared::<F>::check_usable(st)?;
            Ok(None)
        })?;
        let Some(slot) = remote else { return Ok(()) };
        // SAFETY: the descriptor's slot stays out of the device's hands until re-posted below.
        let bytes = unsafe { std::slice::from_raw_parts(self.sh.fabric.recv_slot(slot), REMOTE_DESC_LEN) };
        let parsed = RemoteDesc::parse(bytes);
        st.rx.take_remote();
        self.sh.repost(&mut st, slot, true);
        self.sh.maybe_update(&mut st);
        let desc = match parsed {
            Ok(d) if d.len == self.bulk_remaining as u64 => d,
            Ok(d) => {
                let why = format!("remote bulk of {} bytes announced for a {}-byte bulk section", d.len, self.bulk_remaining);
                self.sh.fail(&mut st, Broken::Failed(format!("peer violated the transport protocol: {why}")));
                return Err(Broken::Failed(why).to_error());
            }
            Err(e) => {
                self.sh.fail(&mut st, Broken::Failed(format!("peer violated the transport protocol: {e}")));
                return Err(Broken::Failed(e.to_string()).to_error());
            }
        };
        match desc.how {
            RemoteHow::Read => self.remote = Some(desc),
            RemoteHow::Written => match self.landing.take() {
                Some(landing) if landing.len == desc.len => self.written = Some(landing),
                _ => {
                    let why = "reply bulk announced as written without a matching landing";
                    self.sh.fail(&mut st, Broken::Failed(format!("peer violated the transport protocol: {why}")));
                    return Err(Broken::Failed(why.into()).to_error());
                }
            },
        }
        Ok(())
    }

    /// Counters of this connection.
    pub fn stats(&self) -> Stats {
        self.sh.stats()
    }

    /// A handle that can shut the connection down from another thread.
    pub fn closer(&self) -> Closer<F> {
        Closer(Arc::downgrade(&self.sh))
    }

    /// The fabric.
    pub fn fabric(&self) -> &F {
        &self.sh.fabric
    }
}

impl<F: Fabric> FrameSource for Source<F> {
    fn recv_head(&mut self) -> Result<Received<'_>, TransportError> {
        self.skip_bulk()?;
        let mut head = std::mem::take(&mut self.head);
        head.resize(HEADER_LEN, 0);
        let result = self.read(Some(&mut head[..]), HEADER_LEN, true);
        self.head = head;
        result?;
        // Validates magic, version, flags and both lengths before the control part is read.
        let header = FrameHeader::parse(&self.head)?;
        let control_len = header.control_len as usize;
        let mut head = std::mem::take(&mut self.head);
        head.resize(HEADER_LEN + control_len, 0);
        let result = self.read(Some(&mut head[HEADER_LEN..]), control_len, false);
        self.head = head;
        result?;
        self.bulk_remaining = header.bulk_len as usize;
        self.bulk_fresh = self.bulk_remaining > 0;
        // The reply to a request with a landing: the landing is released with this frame
        // (the worker writes into it only before sending the reply's head).
        self.written = None;
        self.landing = None;
        if header.flags.contains(Flags::RESPONSE) {
            let mut st = self.sh.lock();
            if !st.offered.is_empty() {
                let landing = st.offered.remove(&header.request_id);
                // Kept only while the bulk may still turn out to be written into it.
                if self.bulk_remaining > 0 {
                    self.landing = landing;
                }
            }
        }
        Ok(Received { header, control: &self.head[HEADER_LEN..] })
    }

    fn recv_bulk(&mut self, dst: &mut [u8]) -> Result<(), TransportError> {
        if dst.len() > self.bulk_remaining {
            return Err(TransportError::Io(io::Error::new(io::ErrorKind::InvalidInput, "read past the frame's bulk section")));
        }
        let n = dst.len();
        if n == 0 {
            return Ok(());
        }
        self.open_bulk()?;
        if let Some(landing) = &self.written {
            let src = landing.addr + (landing.len - self.bulk_remaining as u64);
            if src != dst.as_ptr() as u64 {
                // SAFETY: the landing is the application's buffer, valid for `landing.len`
                // bytes until this reply is consumed (`offer_landing`'s contract), and the
                // worker's WRITEs into it completed before this reply's head arrived.
                unsafe { std::ptr::copy(src as *const u8, dst.as_mut_ptr(), n) };
            }
            self.bulk_remaining -= n;
            if self.bulk_remaining == 0 {
                self.written = None;
                self.sh.lock().stats.landed += 1;
            }
            return Ok(());
        }
        if let Some(desc) = self.remote {
            let off = desc.len - self.bulk_remaining as u64;
            self.sh.read_remote(dst, desc.addr + off, desc.rkey)?;
            self.bulk_remaining -= n;
            if self.bulk_remaining == 0 {
                self.remote = None;
                self.landing = None;
                self.sh.send_done()?;
            }
            return Ok(());
        }
        self.read(Some(dst), n, false)?;
        self.bulk_remaining -= n;
        if self.bulk_remaining == 0 {
            self.landing = None;
        }
        Ok(())
    }

    fn recv_bulk_to_device(&mut self, addr: u64, len: usize) -> Result<bool, TransportError> {
        if len == 0 || len > self.bulk_remaining {
            return Ok(false);
        }
        self.open_bulk()?;
        let Some(desc) = self.remote else { return Ok(false) };
        let Some(region) = self.sh.device_region(addr, len) else { return Ok(false) };
        let off = desc.len - self.bulk_remaining as u64;
        self.sh.post_rdma(false, addr, region.lkey(), len, desc.addr + off, desc.rkey)?;
        self.sh.wait_rdma(false)?;
        drop(region);
        {
            let mut st = self.sh.lock();
            st.stats.bytes_read += len as u64;
            st.stats.device_direct += 1;
        }
        self.bulk_remaining -= len;
        if self.bulk_remaining == 0 {
            self.remote = None;
            self.landing = None;
            self.sh.send_done()?;
        }
        Ok(true)
    }

    fn bulk_remaining(&self) -> usize {
        self.bulk_remaining
    }

    fn skip_bulk(&mut self) -> Result<(), TransportError> {
        if self.bulk_remaining == 0 {
            return Ok(());
        }
        self.open_bulk()?;
        if self.written.take().is_some() {
            self.bulk_remaining = 0;
            return Ok(());
        }
        if self.remote.take().is_some() {
            self.bulk_remaining = 0;
            self.landing = None;
            return self.sh.send_done();
        }
        let n = self.bulk_remaining;
        self.read(None, n, false)?;
        self.bulk_remaining = 0;
        self.landing = None;
        Ok(())
    }
}
