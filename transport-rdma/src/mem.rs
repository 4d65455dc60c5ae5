//! An in-memory [`Fabric`]: two connected endpoints that behave like an RC queue pair where
//! it matters for the engine's logic, and stricter than hardware where that finds bugs:
//!
//! - a SEND that finds no posted receive at the peer fails at once with an RNR error (real
//!   hardware would retry `rnr_retry` times first) and puts both queue pairs in the error
//!   state; [`MemFabric::rnr_errors`] counts them, so tests can assert flow control never
//!   lets it happen;
//! - SENDs larger than the peer's slot fail (a real responder reports a length error);
//! - [`MemFabric::kill`] is a peer process dying: the other side gets a DISCONNECTED wake-up
//!   and its posted receives are flushed;
//! - [`MemFabric::swallow_completions`] loses completions (a missed completion);
//!   [`MemFabric::fail_next_send`] fails one work request;
//! - an endpoint used without an engine is a hostile peer ([`MemFabric::post_raw`],
//!   [`MemFabric::expose`], [`MemFabric::recycle_receives`]): it sends whatever immediate
//!   data and bytes it likes, as a misbehaving client on a real fabric could (the
//!   `rdma_peer` fuzz target).
//!
//! Delivery is synchronous (the "NIC" copies during `post_send`), so the engine's waiting
//! paths are exercised through credits and slots rather than through latency.

use crate::config::RdmaConfig;
use crate::credit::CONTROL_CREDITS;
use crate::fabric::{Access, Completion, Fabric, FabricError, Region, SendKind, SendWr, Wake};
use crate::wire::{FLAG_LANDINGS, FLAG_ONE_SIDED};
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Registered-memory stand-in: a heap block handed out by raw pointer.
struct Block {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the block is plain heap memory; who may touch which slot is decided by the engine's
// state machine, exactly as with device-registered memory.
unsafe impl Send for Block {}
// SAFETY: as above.
unsafe impl Sync for Block {}

impl Block {
    fn new(len: usize) -> Self {
        let mut v = vec![0u8; len].into_boxed_slice();
        let ptr = v.as_mut_ptr();
        std::mem::forget(v);
        Self { ptr, len }
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` come from a leaked boxed slice of exactly this length.
        unsafe { drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.ptr, self.len))) };
    }
}

#[derive(Default)]
struct Side {
    posted: VecDeque<u32>,
    cq: VecDeque<Completion>,
    generation: u64,
    armed_at: Option<u64>,
    cm_disconnected: bool,
    qp_error: bool,
    gone: bool,
    swallow: bool,
    fail_next: bool,
    rnr_errors: u64,
    refuse_dmabuf: bool,
    /// Registrations: (key, addr, len, access).
    regions: Vec<(u32, u64, u64, Access)>,
    next_key: u32,
    /// Memory a hostile endpoint exposed to its peer (lives as long as the link).
    exposed: Vec<Block>,
}

/// A registration of the in-memory fabric (checked by its RDMA READs like a real MR).
struct MemRegion {
    link: Arc<Link>,
    me: usize,
    key: u32,
}

impl Region for MemRegion {
    fn lkey(&self) -> u32 {
        self.key
    }

    fn rkey(&self) -> u32 {
        self.key
    }
}

impl Drop for MemRegion {
    fn drop(&mut self) {
        let mut sides = self.link.sides.lock().unwrap_or_else(|p| p.into_inner());
        sides[self.me].regions.retain(|r| r.0 != self.key);
    }
}

/// Whether a registration with `key` covers the range and allows `need` (as an MR check).
fn covers(regions: &[(u32, u64, u64, Access)], key: u32, addr: u64, len: u64, need: Access) -> bool {
    regions.iter().any(|&(k, a, l, acc)| k == key && acc.covers(need) && addr >= a && addr + len <= a + l)
}

struct Link {
    sides: Mutex<[Side; 2]>,
    cv: Condvar,
    send: [Block; 2],
    recv: [Block; 2],
    slot_len: [usize; 2],
    depth: [(u32, u32); 2],
    flags: [u16; 2],
}

/// One endpoint of an in-memory connection.
pub struct MemFabric {
    link: Arc<Link>,
    me: usize,
}

impl MemFabric {
    /// Two connected endpoints with the given ring settings (all receives posted).
    pub fn pair(a: &RdmaConfig, b: &RdmaConfig) -> (Self, Self) {
        let (a, b) = (a.clamped(), b.clamped());
        let mk = |c: &RdmaConfig| Side { posted: (0..c.recv_depth + CONTROL_CREDITS).collect(), ..Side::default() };
        let link = Arc::new(Link {
            sides: Mutex::new([mk(&a), mk(&b)]),
            cv: Condvar::new(),
            send: [Block::new(a.slot_len * a.send_depth as usize), Block::new(b.slot_len * b.send_depth as usize)],
            recv: [
                Block::new(a.slot_len * (a.recv_depth + CONTROL_CREDITS) as usize),
                Block::new(b.slot_len * (b.recv_depth + CONTROL_CREDITS) as usize),
            ],
            slot_len: [a.slot_len, b.slot_len],
            depth: [(a.send_depth, a.recv_depth), (b.send_depth, b.recv_depth)],
            flags: [a, b].map(|c| match (c.one_sided, c.landings) {
                (true, true) => FLAG_ONE_SIDED | FLAG_LANDINGS,
                (true, false) => FLAG_ONE_SIDED,
                _ => 0,
            }),
        });
        (Self { link: link.clone(), me: 0 }, Self { link, me: 1 })
    }

    fn sides(&self) -> MutexGuard<'_, [Side; 2]> {
        self.link.sides.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn push(link: &Link, side: &mut Side, c: Completion) {
        if Self::enqueue(side, c) {
            link.cv.notify_all();
        }
    }

    /// Queues a completion without waking anyone; whether it was queued.
    fn enqueue(side: &mut Side, c: Completion) -> bool {
        if side.swallow {
            return false;
        }
        side.cq.push_back(c);
        side.generation += 1;
        true
    }

    /// Puts a side's queue pair in the error state: posted receives are flushed, with one
    /// wake-up for all of them (each is a system call, and waiters see them only once the
    /// lock is released anyway).
    fn to_error(link: &Link, side: &mut Side) {
        if side.qp_error {
            return;
        }
        side.qp_error = true;
        let mut queued = false;
        while side.posted.pop_front().is_some() {
            queued |= Self::enqueue(side, Completion::Failed { what: "receive", status: "WR flushed".into(), flushed: true });
        }
        if queued {
            link.cv.notify_all();
        }
    }

    /// The peer process dies: this endpoint sees DISCONNECTED, both queue pairs go to error.
    pub fn kill(&self) {
        let mut sides = self.sides();
        let link = &*self.link;
        let peer = 1 - self.me;
        sides[peer].gone = true;
        Self::to_error(link, &mut sides[peer]);
        sides[self.me].cm_disconnected = true;
        Self::to_error(link, &mut sides[self.me]);
        link.cv.notify_all();
    }

    /// From now on, completions of this endpoint are lost.
    pub fn swallow_completions(&self) {
        self.sides()[self.me].swallow = true;
    }

    /// The next send work request of this endpoint completes with an error.
    pub fn fail_next_send(&self) {
        self.sides()[self.me].fail_next = true;
    }

    /// Makes this side's "NIC" refuse dma-buf registrations (no GPUDirect support).
    pub fn refuse_dmabuf(&self) {
        self.sides()[self.me].refuse_dmabuf = true;
    }

    /// Registrations this endpoint holds (one-sided transfers must release theirs).
    pub fn registrations(&self) -> usize {
        self.sides()[self.me].regions.len()
    }

    /// RNR errors this endpoint's SENDs caused (must stay 0 under credit flow control).
    pub fn rnr_errors(&self) -> u64 {
        self.sides()[self.me].rnr_errors
    }

    /// Hostile peer: a SEND of `payload` with immediate data `imm`, whatever either means,
    /// from send slot 0 (an endpoint without an engine owns all its slots; delivery copies
    /// at once). An empty payload is a zero-byte SEND. Fails as hardware would: a payload
    /// larger than a slot is a length error, no posted receive at the peer an RNR error.
    pub fn post_raw(&self, imm: u32, payload: &[u8]) -> Result<(), FabricError> {
        let len = payload.len().min(self.link.slot_len[self.me]);
        // SAFETY: slot 0 belongs to this endpoint (no engine posts from it) and holds
        // `slot_len` bytes; `len` is capped to it.
        unsafe { std::ptr::copy_nonoverlapping(payload.as_ptr(), self.send_slot(0), len) };
        if payload.len() > len {
            // Posted as it is, so the fabric reports the length error.
            return self.post_send(SendWr::Data { slot: 0, len: payload.len() as u32, imm });
        }
        if len == 0 {
            return self.post_send(SendWr::Control { imm });
        }
        self.post_send(SendWr::Data { slot: 0, len: len as u32, imm })
    }

    /// Hostile peer: `len` zeroed bytes of this endpoint the peer may RDMA-READ and -WRITE:
    /// `(address, rkey)`. They live as long as the link.
    pub fn expose(&self, len: usize) -> (u64, u32) {
        let block = Block::new(len.max(1));
        let mut sides = self.sides();
        let me = &mut sides[self.me];
        me.next_key += 1;
        let key = me.next_key;
        me.regions.push((key, block.ptr as u64, len as u64, Access::ALL));
        let addr = block.ptr as u64;
        me.exposed.push(block);
        (addr, key)
    }

    /// Hostile peer: drops every completion of this endpoint, re-posting the receive slots
    /// the peer's SENDs consumed (so the peer can keep sending).
    pub fn recycle_receives(&self) {
        let mut sides = self.sides();
        let me = &mut sides[self.me];
        let done: Vec<Completion> = me.cq.drain(..).collect();
        for c in done {
            if let Completion::Received { slot, .. } = c {
                if !me.qp_error {
                    me.posted.push_back(slot);
                }
            }
        }
    }
}

impl Fabric for MemFabric {
    fn seg_len(&self) -> usize {
        self.link.slot_len[0].min(self.link.slot_len[1])
    }

    fn send_depth(&self) -> u32 {
        self.link.depth[self.me].0
    }

    fn recv_depth(&self) -> u32 {
        self.link.depth[self.me].1
    }

    fn peer_recv_depth(&self) -> u32 {
        self.link.depth[1 - self.me].1
    }

    fn send_slot(&self, slot: u32) -> *mut u8 {
        assert!(slot < self.send_depth());
        // SAFETY: in bounds of the send block (slot < send_depth).
        unsafe { self.link.send[self.me].ptr.add(slot as usize * self.link.slot_len[self.me]) }
    }

    fn recv_slot(&self, slot: u32) -> *const u8 {
        assert!(slot < self.recv_depth() + CONTROL_CREDITS);
        // SAFETY: in bounds of the receive block (slot < recv_depth + CONTROL_CREDITS).
        unsafe { self.link.recv[self.me].ptr.add(slot as usize * self.link.slot_len[self.me]) }
    }

    fn post_send(&self, wr: SendWr) -> Result<(), FabricError> {
        let link = &*self.link;
        let mut guard = self.sides();
        let (a, b) = guard.split_at_mut(1);
        let (me, peer) = if self.me == 0 { (&mut a[0], &mut b[0]) } else { (&mut b[0], &mut a[0]) };
        if me.gone {
            return Err(FabricError::new("post_send", "device gone"));
        }
        let kind = match wr {
            SendWr::Data { slot, .. } => SendKind::Data(slot),
            SendWr::Control { .. } => SendKind::Control,
            SendWr::Probe => SendKind::Probe,
            SendWr::Read { id, .. } => SendKind::Read(id),
            SendWr::Write { id, .. } => SendKind::Write(id),
        };
        let what = match wr {
            SendWr::Probe | SendWr::Write { .. } => "RDMA WRITE",
            SendWr::Read { .. } => "RDMA READ",
            _ => "SEND",
        };
        if me.qp_error {
            Self::push(link, me, Completion::Failed { what, status: "WR flushed".into(), flushed: true });
            return Ok(());
        }
        if std::mem::take(&mut me.fail_next) {
            Self::push(link, me, Completion::Failed { what, status: "injected failure".into(), flushed: false });
            Self::to_error(link, me);
            return Ok(());
        }
        if peer.gone || peer.qp_error {
            Self::push(link, me, Completion::Failed { what, status: "transport retry counter exceeded".into(), flushed: false });
            Self::to_error(link, me);
            return Ok(());
        }
        let (len, imm, src) = match wr {
            SendWr::Data { slot, len, imm } => (len as usize, imm, Some(self.send_slot(slot))),
            SendWr::Control { imm } => (0, imm, None),
            SendWr::Probe => {
                Self::push(link, me, Completion::Sent(kind));
                return Ok(());
            }
            SendWr::Write { local, lkey, len, remote, rkey, .. } => {
                let len64 = u64::from(len);
                if !covers(&me.regions, lkey, local, len64, Access::LOCAL_READ) {
                    Self::push(link, me, Completion::Failed { what, status: "local protection error".into(), flushed: false });
                    Self::to_error(link, me);
                } else if !covers(&peer.regions, rkey, remote, len64, Access::PEER_WRITES) {
                    Self::push(link, me, Completion::Failed { what, status: "remote access error".into(), flushed: false });
                    Self::to_error(link, me);
                    Self::to_error(link, peer);
                } else {
                    // SAFETY: both ranges lie inside live registrations, whose owners keep the
                    // memory valid while registered (the engine's contract).
                    unsafe { std::ptr::copy(local as *const u8, remote as *mut u8, len as usize) };
                    Self::push(link, me, Completion::Sent(kind));
                }
                return Ok(());
            }
            SendWr::Read { local, lkey, len, remote, rkey, .. } => {
                let len64 = u64::from(len);
                if !covers(&me.regions, lkey, local, len64, Access::LOCAL_WRITE) {
                    Self::push(link, me, Completion::Failed { what, status: "local protection error".into(), flushed: false });
                    Self::to_error(link, me);
                } else if !covers(&peer.regions, rkey, remote, len64, Access::PEER_READS) {
                    Self::push(link, me, Completion::Failed { what, status: "remote access error".into(), flushed: false });
                    Self::to_error(link, me);
                    Self::to_error(link, peer);
                } else {
                    // SAFETY: both ranges lie inside live registrations, whose owners keep the
                    // memory valid and untouched while registered (the engine's contract).
                    unsafe { std::ptr::copy(remote as *const u8, local as *mut u8, len as usize) };
                    Self::push(link, me, Completion::Sent(kind));
                }
                return Ok(());
            }
        };
        let peer_slot_len = link.slot_len[1 - self.me];
        if len > peer_slot_len || len > link.slot_len[self.me] {
            Self::push(link, me, Completion::Failed { what, status: "local length error".into(), flushed: false });
            Self::to_error(link, me);
            return Ok(());
        }
        let Some(rslot) = peer.posted.pop_front() else {
            me.rnr_errors += 1;
            Self::push(link, me, Completion::Failed { what, status: "RNR retry counter exceeded".into(), flushed: false });
            Self::to_error(link, me);
            Self::to_error(link, peer);
            return Ok(());
        };
        if let Some(src) = src {
            // SAFETY: the source slot is owned by the poster until its completion; the
            // destination receive slot was posted (owned by the "device") and is handed to
            // the peer's engine only by the completion pushed below.
            unsafe {
                let dst = link.recv[1 - self.me].ptr.add(rslot as usize * peer_slot_len);
                std::ptr::copy_nonoverlapping(src, dst, len);
            }
        }
        Self::push(link, peer, Completion::Received { slot: rslot, len: len as u32, imm });
        Self::push(link, me, Completion::Sent(kind));
        Ok(())
    }

    fn post_recv(&self, slot: u32) -> Result<(), FabricError> {
        let link = &*self.link;
        let mut sides = self.sides();
        let me = &mut sides[self.me];
        if me.gone {
            return Err(FabricError::new("post_recv", "device gone"));
        }
        if me.qp_error {
            Self::push(link, me, Completion::Failed { what: "receive", status: "WR flushed".into(), flushed: true });
            return Ok(());
        }
        debug_assert!(!me.posted.contains(&slot), "receive slot {slot} posted twice");
        me.posted.push_back(slot);
        Ok(())
    }

    fn poll(&self, out: &mut Vec<Completion>) -> Result<(), FabricError> {
        out.extend(self.sides()[self.me].cq.drain(..));
        Ok(())
    }

    fn arm(&self) -> Result<(), FabricError> {
        let mut sides = self.sides();
        let me = &mut sides[self.me];
        me.armed_at = Some(me.generation);
        Ok(())
    }

    fn block(&self, timeout: Duration) -> Result<Wake, FabricError> {
        let until = Instant::now() + timeout;
        let mut sides = self.sides();
        loop {
            let me = &mut sides[self.me];
            if std::mem::take(&mut me.cm_disconnected) {
                return Ok(Wake::Disconnected);
            }
            if me.armed_at.is_some_and(|g| g != me.generation) {
                me.armed_at = None;
                return Ok(Wake::Completions);
            }
            let now = Instant::now();
            if now >= until {
                return Ok(Wake::Timeout);
            }
            sides = self.link.cv.wait_timeout(sides, until - now).unwrap_or_else(|p| p.into_inner()).0;
        }
    }

    fn peer_reads_remote(&self) -> bool {
        self.link.flags[0] & self.link.flags[1] & FLAG_ONE_SIDED != 0
    }

    unsafe fn register_dmabuf(
        &self,
        _fd: std::os::fd::OwnedFd,
        _offset: u64,
        len: usize,
        iova: u64,
        access: Access,
    ) -> Result<Box<dyn Region>, FabricError> {
        if self.sides()[self.me].refuse_dmabuf {
            return Err(FabricError::new("ibv_reg_dmabuf_mr", "Operation not supported (emulated NIC without dma-buf support)"));
        }
        // The tests' "device memory" is host memory at `iova`.
        // SAFETY: forwarded contract.
        unsafe { self.register(iova as *mut u8, len, access) }
    }

    fn landings_agreed(&self) -> bool {
        let both = FLAG_ONE_SIDED | FLAG_LANDINGS;
        self.link.flags[0] & self.link.flags[1] & both == both
    }

    unsafe fn register(&self, ptr: *mut u8, len: usize, access: Access) -> Result<Box<dyn Region>, FabricError> {
        let mut sides = self.sides();
        let me = &mut sides[self.me];
        if me.gone {
            return Err(FabricError::new("register", "device gone"));
        }
        me.next_key += 1;
        let key = me.next_key;
        me.regions.push((key, ptr as u64, len as u64, access));
        Ok(Box::new(MemRegion { link: self.link.clone(), me: self.me, key }))
    }

    fn disconnect(&self) {
        let link = &*self.link;
        let mut sides = self.sides();
        let peer = 1 - self.me;
        if sides[self.me].gone {
            return;
        }
        sides[self.me].gone = true;
        Self::to_error(link, &mut sides[self.me]);
        sides[peer].cm_disconnected = true;
        Self::to_error(link, &mut sides[peer]);
        link.cv.notify_all();
    }
}

#[cfg(test)]
mod test;
