//! The RDMA connection engine: [`Sink`] and [`Source`] over any [`Fabric`].
//!
//! Both halves share one [`Shared`] (a mutex-guarded state and a condition variable). No
//! thread of its own: whichever half needs progress (a free send slot, a credit, received
//! bytes) polls the completion queue itself. When nothing is ready, one waiting thread, the
//! *leader*, arms the completion channel and sleeps in [`Fabric::block`]; the others wait on
//! the condition variable and are woken whenever the leader returns or anyone processes
//! completions (leader/follower). Threads wake at least every [`WAIT_TICK`] to check
//! deadlines, shutdown and keepalive.
//!
//! Failure handling mirrors TCP: a peer that goes away (FIN, DISCONNECTED, flushed work
//! requests) at a frame boundary is [`TransportError::Closed`]; in the middle of a frame, an
//! I/O error; a failed work completion or a broken protocol invariant is an I/O error at
//! once; an operation that waits longer than the configured I/O timeout (a missed
//! completion) is a `TimedOut` I/O error. Every error is sticky: the connection is unusable
//! afterwards, so the worker's driver loop returns and drops the session.

use crate::config::{RdmaConfig, COPY_BULK_BELOW, LINGER, WAIT_TICK};
use crate::credit::{Credits, SendPurpose, CONTROL_CREDITS};
use crate::fabric::{Completion, Fabric, SendKind, SendWr, Wake};
use crate::rx::{Piece, Reassembly, Segment};
use crate::tx::{Batcher, Ready, SendSlots};
use crate::fabric::Region;
use crate::wire::{Imm, RemoteDesc, SegKind, REMOTE_DESC_LEN};
use proto_core::header::{FrameHeader, HEADER_LEN};
use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};
use transport_tcp::{FrameSink, FrameSource, Received, TransportError};

/// Control work requests (credit updates and FIN, bounded by the control credits, plus one
/// keepalive probe) in flight at most; the send queue is sized
/// `send_depth + CONTROL_SQ_DEPTH + READ_DEPTH`.
pub const CONTROL_SQ_DEPTH: u32 = CONTROL_CREDITS + 1;

/// Largest RDMA READ of the one-sided path (one work request).
pub const READ_CHUNK: usize = 1 << 20;
/// RDMA READs in flight per connection at most; the send queue has room for them.
pub const READ_DEPTH: u32 = 4;

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
}

/// The state both halves share.
pub struct Shared<F: Fabric> {
    fabric: F,
    io_timeout: Option<Duration>,
    keepalive: Duration,
    st: Mutex<State>,
    cv: Condvar,
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
        self.cv.notify_all();
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

    /// Waits until `ready` yields a value (or an error), driving progress meanwhile.
    fn wait<'a, T>(
        &'a self,
        mut st: Guard<'a>,
        what: &str,
        mut ready: impl FnMut(&Self, &mut State) -> Result<Option<T>, TransportError>,
    ) -> Result<(Guard<'a>, T), TransportError> {
        let deadline = self.io_timeout.map(|t| Instant::now() + t);
        let mut armed = false;
        loop {
            self.progress(&mut st);
            if let Some(v) = ready(self, &mut st)? {
                return Ok((st, v));
            }
            let now = Instant::now();
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

    /// RDMA-READs `dst.len()` bytes from the peer's `raddr`/`rkey` into `dst`: `dst` is
    /// registered for the transfer, read in [`READ_CHUNK`]s with up to [`READ_DEPTH`] in
    /// flight. The registration is dropped before returning, error or not, so the device
    /// never writes into `dst` afterwards.
    fn read_remote(&self, dst: &mut [u8], raddr: u64, rkey: u32) -> Result<(), TransportError> {
        if dst.is_empty() {
            return Ok(());
        }
        // SAFETY: `dst` is borrowed mutably for this whole call and the region is dropped
        // (deregistered) before it returns.
        let region: Box<dyn Region> = unsafe { self.fabric.register(dst.as_mut_ptr(), dst.len(), false) }.map_err(|e| {
            TransportError::Io(io::Error::other(format!(
                "RDMA: cannot register the destination of a remote bulk section: {e} (registration pins memory: check `ulimit -l`, or set HIP_REMOTE_RDMA_ONE_SIDED=0)"
            )))
        })?;
        let base = dst.as_mut_ptr() as u64;
        let total = dst.len();
        let mut posted = 0usize;
        let st = self.lock();
        let result = self.wait(st, "RDMA READ completions", |sh, st| {
            Self::check_usable(st)?;
            while posted < total && st.reads_in_flight < READ_DEPTH {
                let len = (total - posted).min(READ_CHUNK);
                let wr = SendWr::Read {
                    id: 0,
                    local: base + posted as u64,
                    lkey: region.lkey(),
                    len: len as u32,
                    remote: raddr + posted as u64,
                    rkey,
                };
                if let Err(e) = sh.fabric.post_send(wr) {
                    sh.fail(st, Broken::Failed(e.to_string()));
                    return Err(st.broken.as_ref().map_or_else(|| timed_out("post"), Broken::to_error));
                }
                st.reads_in_flight += 1;
                posted += len;
            }
            Ok((posted == total && st.reads_in_flight == 0).then_some(()))
        });
        let outcome = match result {
            Ok((mut st, ())) => {
                st.stats.bytes_read += total as u64;
                Ok(())
            }
            Err(e) => Err(e),
        };
        drop(region);
        outcome
    }

    fn take_slot(&self) -> Result<u32, TransportError> {
        let st = self.lock();
        let (_guard, slot) = self.wait(st, "a free send slot", |_, st| {
            Self::check_usable(st)?;
            Ok(st.slots.take())
        })?;
        Ok(slot)
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
        drop(st);
        self.fabric.disconnect();
    }
}

/// Creates the two halves over a connected fabric whose receive ring is fully posted.
pub fn split<F: Fabric>(fabric: F, config: &RdmaConfig) -> (Sink<F>, Source<F>) {
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
    };
    let shared = Arc::new(Shared {
        fabric,
        io_timeout: config.io_timeout,
        keepalive: config.keepalive,
        st: Mutex::new(st),
        cv: Condvar::new(),
    });
    let one_sided_min = if config.one_sided { config.one_sided_min.max(COPY_BULK_BELOW + 1) } else { usize::MAX };
    (
        Sink { sh: shared.clone(), batch: Batcher::new(seg_len), one_sided_min, remote_sent: 0, logged_path: false },
        Source { sh: shared, head: Vec::with_capacity(4096), bulk_remaining: 0, bulk_fresh: false, remote: None },
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
    /// Smallest bulk sent one-sided (`usize::MAX`: one-sided off in the configuration).
    one_sided_min: usize,
    /// Remote bulk sections sent (each answered by one Done).
    remote_sent: u64,
    /// Whether the path choice for large bulk was logged.
    logged_path: bool,
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
    /// registered, announced by a [`SegKind::Remote`] descriptor in stream order, and held
    /// until the peer's Done (it has read or skipped the bytes). `Ok(false)`: not taken, the
    /// caller sends two-sided.
    fn try_remote(&mut self, head: &[u8], bulk: &[u8]) -> Result<bool, TransportError> {
        if bulk.len() < self.one_sided_min {
            return Ok(false);
        }
        if !self.sh.fabric.peer_reads_remote() {
            if !self.logged_path {
                self.logged_path = true;
                tracing::info!("RDMA one-sided bulk: the peer does not accept it; large bulk goes two-sided (copied through the rings)");
            }
            self.sh.lock().stats.remote_fallbacks += 1;
            return Ok(false);
        }
        // SAFETY: the region only allows remote reads (nothing writes into `bulk`); `bulk` is
        // borrowed for this whole call and the region is dropped before it returns.
        let region = match unsafe { self.sh.fabric.register(bulk.as_ptr().cast_mut(), bulk.len(), true) } {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, len = bulk.len(), "RDMA one-sided bulk: registration failed; sending two-sided");
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
        let desc = RemoteDesc { addr: bulk.as_ptr() as u64, len: bulk.len() as u64, rkey: region.rkey() }.emit();
        let slot = self.sh.take_slot()?;
        // SAFETY: the slot was just taken from the free pool (ours until posted); a slot is
        // at least MIN_SLOT_LEN > REMOTE_DESC_LEN bytes.
        unsafe { std::ptr::copy_nonoverlapping(desc.as_ptr(), self.sh.fabric.send_slot(slot), REMOTE_DESC_LEN) };
        // Counted before the post: the peer's Done may be processed by another thread as
        // soon as the descriptor is on the wire.
        self.sh.lock().remote_outstanding += 1;
        self.sh.post_seg(Ready { slot, len: REMOTE_DESC_LEN }, SegKind::Remote)?;
        self.remote_sent += 1;
        let want = self.remote_sent;
        let st = self.sh.lock();
        let result = self.sh.wait(st, "the peer to read a remote bulk section", |_, st| {
            if st.dones_received >= want {
                return Ok(Some(()));
            }
            Shared::<F>::check_usable(st)?;
            Ok(None)
        });
        let outcome = match result {
            Ok((mut st, ())) => {
                st.stats.remote_sent += 1;
                st.stats.bytes_sent += bulk.len() as u64;
                Ok(true)
            }
            Err(e) => Err(e),
        };
        drop(region);
        outcome
    }

    fn post_open(&mut self) -> Result<(), TransportError> {
        match self.batch.flush() {
            Some(ready) => self.sh.post_data(ready),
            None => Ok(()),
        }
    }

    /// Counters of this connection.
    pub fn stats(&self) -> Stats {
        self.sh.lock().stats
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
        if self.try_remote(head, bulk)? {
            return Ok(());
        }
        self.write(head)?;
        self.write(bulk)?;
        self.post_open()
    }

    fn queue(&mut self, head: &[u8], bulk: &[u8]) -> Result<(), TransportError> {
        if self.try_remote(head, bulk)? {
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
        self.remote = Some(desc);
        Ok(())
    }

    /// Counters of this connection.
    pub fn stats(&self) -> Stats {
        self.sh.lock().stats
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
        if let Some(desc) = self.remote {
            let off = desc.len - self.bulk_remaining as u64;
            self.sh.read_remote(dst, desc.addr + off, desc.rkey)?;
            self.bulk_remaining -= n;
            if self.bulk_remaining == 0 {
                self.remote = None;
                self.sh.send_done()?;
            }
            return Ok(());
        }
        self.read(Some(dst), n, false)?;
        self.bulk_remaining -= n;
        Ok(())
    }

    fn bulk_remaining(&self) -> usize {
        self.bulk_remaining
    }

    fn skip_bulk(&mut self) -> Result<(), TransportError> {
        if self.bulk_remaining == 0 {
            return Ok(());
        }
        self.open_bulk()?;
        if self.remote.take().is_some() {
            self.bulk_remaining = 0;
            return self.sh.send_done();
        }
        let n = self.bulk_remaining;
        self.read(None, n, false)?;
        self.bulk_remaining = 0;
        Ok(())
    }
}
