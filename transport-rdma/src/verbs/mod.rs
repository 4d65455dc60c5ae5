//! Real verbs (feature `verbs`, Linux): librdmacm for connection management, libibverbs for
//! the data path, through rdma-sys.
//!
//! One connection owns: an RDMA CM id on its own event channel (so its DISCONNECTED reaches
//! the thread that waits on it), a protection domain, one completion queue with its
//! completion channel, one RC queue pair created by `rdma_create_qp` (librdmacm drives it
//! through INIT/RTR/RTS, filling in path, MTU and — on RoCE — the GRH, so IB and RoCEv2 need
//! no separate code), and two registered rings: `send_depth` send slots and
//! `recv_depth + CONTROL_CREDITS` receive slots of `slot_len` bytes.
//!
//! Bring-up is a typestate as in rust-ibverbs: [`Prepared`] (resources created, every
//! receive posted, not connected) becomes a [`VerbsFabric`] once the peer's ring parameters
//! are known (from the REQ on the worker, from the REP on the client) and the connection is
//! established.

mod cm;
pub mod mr;

use crate::config::{RdmaConfig, RESOLVE_TIMEOUT, WAIT_TICK};
use crate::credit::CONTROL_CREDITS;
use crate::engine::{split, Role, Sink, Source, CONTROL_SQ_DEPTH, READ_DEPTH, WRITE_DEPTH};
use crate::fabric::Access;
use crate::fabric::{Completion, Fabric, FabricError, Region, SendKind, SendWr, Wake};
use crate::hook::ExportedMemory;
use crate::wire::{ConnParams, FLAG_LANDINGS, FLAG_ONE_SIDED};
use cm::{CmEvent, EventChannel};
use mr::RegBuf;
use rdma_sys::*;
use std::ffi::CStr;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use mr::MemoryRegion;

/// The sending half of a verbs connection.
pub type RdmaSink = Sink<VerbsFabric>;
/// The receiving half of a verbs connection.
pub type RdmaSource = Source<VerbsFabric>;

const TAG_DATA: u64 = 1;
const TAG_CONTROL: u64 = 2;
const TAG_PROBE: u64 = 3;
const TAG_RECV: u64 = 4;
const TAG_READ: u64 = 5;
const TAG_WRITE: u64 = 6;

fn wr_id(tag: u64, index: u32) -> u64 {
    (tag << 32) | u64::from(index)
}

pub(crate) fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

pub(crate) fn os_err(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// verbs calls return a positive errno (post_send, post_recv) or -1 with errno set.
fn ret_err(what: &'static str, ret: i32) -> FabricError {
    let e = if ret > 0 { io::Error::from_raw_os_error(ret) } else { io::Error::last_os_error() };
    FabricError::new(what, e.to_string())
}

pub(crate) fn set_nonblocking(fd: i32) -> io::Result<()> {
    // SAFETY: fcntl on an fd we own.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(os_err("fcntl(O_NONBLOCK)"));
        }
    }
    Ok(())
}

/// `poll(2)` for readability; returns which fds are readable.
pub(crate) fn poll_fds(fds: &[i32], timeout: Duration) -> io::Result<Vec<bool>> {
    let mut pfds: Vec<libc::pollfd> = fds.iter().map(|&fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 }).collect();
    let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: `pfds` is a valid array of `pfds.len()` pollfds.
    let n = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, ms) };
    if n < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(vec![false; fds.len()]);
        }
        return Err(e);
    }
    Ok(pfds.iter().map(|p| p.revents & (libc::POLLIN | libc::POLLERR | libc::POLLHUP) != 0).collect())
}

fn status_str(status: ibv_wc_status::Type) -> String {
    // SAFETY: returns a static string for every value.
    unsafe { CStr::from_ptr(ibv_wc_status_str(status)).to_string_lossy().into_owned() }
}

/// Everything one connection owns, released in dependency order on drop.
struct Resources {
    /// The connection's own event channel (dropped after the id).
    channel: EventChannel,
    id: *mut rdma_cm_id,
    pd: *mut ibv_pd,
    comp: *mut ibv_comp_channel,
    cq: *mut ibv_cq,
    send: Option<RegBuf>,
    recv: Option<RegBuf>,
    qp_created: bool,
    slot_len: usize,
    send_depth: u32,
    recv_depth: u32,
    /// One-sided bulk enabled in this side's configuration.
    one_sided: bool,
    /// Landings (replies RDMA-WRITten by the worker) enabled in this side's configuration.
    landings: bool,
    /// Completion events taken from the channel and not yet acknowledged.
    unacked_events: Mutex<u32>,
    disconnected: AtomicBool,
}

// SAFETY: libibverbs and librdmacm objects may be used from any thread (posting and polling
// are internally locked per queue); our own state is behind Mutex/atomics, and ring memory
// ownership is governed by the engine.
unsafe impl Send for Resources {}
// SAFETY: as above.
unsafe impl Sync for Resources {}

impl Resources {
    /// Creates PD, CQ, completion channel, QP and rings on `id` (address already resolved or
    /// a connect request received), and posts every receive.
    fn new(channel: EventChannel, id: *mut rdma_cm_id, cfg: &RdmaConfig) -> io::Result<Self> {
        let cfg = cfg.clamped();
        let mut r = Self {
            channel,
            id,
            pd: std::ptr::null_mut(),
            comp: std::ptr::null_mut(),
            cq: std::ptr::null_mut(),
            send: None,
            recv: None,
            qp_created: false,
            slot_len: cfg.slot_len,
            send_depth: cfg.send_depth,
            recv_depth: cfg.recv_depth,
            one_sided: cfg.one_sided,
            landings: cfg.one_sided && cfg.landings,
            unacked_events: Mutex::new(0),
            disconnected: AtomicBool::new(false),
        };
        // SAFETY: `id` is a live CM id bound to a device (verbs != null checked); every
        // object created is recorded in `r` at once, so Drop releases whatever was made.
        unsafe {
            let verbs = (*id).verbs;
            if verbs.is_null() {
                return Err(io::Error::new(io::ErrorKind::NotFound, "RDMA CM id is not bound to a device"));
            }
            r.pd = ibv_alloc_pd(verbs);
            if r.pd.is_null() {
                return Err(os_err("ibv_alloc_pd"));
            }
            r.comp = ibv_create_comp_channel(verbs);
            if r.comp.is_null() {
                return Err(os_err("ibv_create_comp_channel"));
            }
            set_nonblocking((*r.comp).fd)?;
            let recv_slots = cfg.recv_depth + CONTROL_CREDITS;
            let sq = cfg.send_depth + CONTROL_SQ_DEPTH + READ_DEPTH + WRITE_DEPTH;
            let cqe = (sq + recv_slots) as i32;
            r.cq = ibv_create_cq(verbs, cqe, std::ptr::null_mut(), r.comp, 0);
            if r.cq.is_null() {
                return Err(os_err("ibv_create_cq"));
            }
            let mut init: ibv_qp_init_attr = std::mem::zeroed();
            init.send_cq = r.cq;
            init.recv_cq = r.cq;
            init.qp_type = ibv_qp_type::IBV_QPT_RC;
            init.cap.max_send_wr = sq;
            init.cap.max_recv_wr = recv_slots;
            init.cap.max_send_sge = 1;
            init.cap.max_recv_sge = 1;
            init.sq_sig_all = 0;
            if rdma_create_qp(id, r.pd, &mut init) != 0 {
                return Err(os_err("rdma_create_qp"));
            }
            r.qp_created = true;
            let local = ibv_access_flags::IBV_ACCESS_LOCAL_WRITE.0 as i32;
            r.send = Some(RegBuf::new(r.pd, cfg.slot_len * cfg.send_depth as usize, local)?);
            r.recv = Some(RegBuf::new(r.pd, cfg.slot_len * recv_slots as usize, local)?);
        }
        for slot in 0..cfg.recv_depth + CONTROL_CREDITS {
            r.post_recv(slot).map_err(|e| io::Error::other(e.to_string()))?;
        }
        Ok(r)
    }

    fn qp(&self) -> *mut ibv_qp {
        // SAFETY: the id is live; its qp was created in `new`.
        unsafe { (*self.id).qp }
    }

    /// RDMA READs the device lets one QP have outstanding (initiator) and accept
    /// (responder), the smaller of the two; 1 when the device cannot be queried.
    fn max_rd_atoms(&self) -> u32 {
        // SAFETY: all-zero is a valid ibv_device_attr; the id is bound to a live device.
        let mut attr: ibv_device_attr = unsafe { std::mem::zeroed() };
        // SAFETY: `verbs` is the id's live device context; `attr` is writable.
        let ret = unsafe { ibv_query_device((*self.id).verbs, &mut attr) };
        if ret != 0 {
            return 1;
        }
        attr.max_qp_rd_atom.min(attr.max_qp_init_rd_atom).max(1) as u32
    }

    fn post_recv(&self, slot: u32) -> Result<(), FabricError> {
        let recv = self.recv.as_ref().expect("rings exist");
        let mut sge = ibv_sge { addr: recv.addr() + (slot as usize * self.slot_len) as u64, length: self.slot_len as u32, lkey: recv.lkey() };
        // SAFETY: zeroed is a valid empty work request; we fill the fields we use.
        let mut wr: ibv_recv_wr = unsafe { std::mem::zeroed() };
        wr.wr_id = wr_id(TAG_RECV, slot);
        wr.sg_list = &mut sge;
        wr.num_sge = 1;
        let mut bad = std::ptr::null_mut();
        // SAFETY: the QP is live; the WR and SGE outlive the call (the device copies them).
        let ret = unsafe { ibv_post_recv(self.qp(), &mut wr, &mut bad) };
        if ret != 0 {
            return Err(ret_err("ibv_post_recv", ret));
        }
        Ok(())
    }

    /// Waits for the connection's next CM event of type `want`.
    fn expect(&self, want: rdma_cm_event_type::Type, timeout: Duration, what: &str) -> io::Result<CmEvent> {
        self.channel.expect(want, timeout, what)
    }
}

impl Drop for Resources {
    fn drop(&mut self) {
        // SAFETY: releases in dependency order what `new` created (null / None = not made):
        // QP before CQ, every CQ event acknowledged before the CQ is destroyed, MRs before the
        // PD, the id before its channel (the channel field drops after this body).
        unsafe {
            if self.qp_created {
                if !self.disconnected.swap(true, Ordering::SeqCst) {
                    rdma_disconnect(self.id);
                }
                rdma_destroy_qp(self.id);
            }
            if !self.cq.is_null() {
                let n = *self.unacked_events.lock().unwrap_or_else(|p| p.into_inner());
                if n > 0 {
                    ibv_ack_cq_events(self.cq, n);
                }
                ibv_destroy_cq(self.cq);
            }
            if !self.comp.is_null() {
                ibv_destroy_comp_channel(self.comp);
            }
            self.send = None;
            self.recv = None;
            if !self.pd.is_null() {
                ibv_dealloc_pd(self.pd);
            }
            // Drain events still queued for the id (destroy waits for acks).
            while let Ok(Some(ev)) = self.channel.next(None) {
                drop(ev);
            }
            rdma_destroy_id(self.id);
        }
    }
}

/// A connection whose resources exist and whose receives are posted, not yet established.
struct Prepared {
    res: Resources,
}

impl Prepared {
    fn params(&self) -> ConnParams {
        let mut flags = 0;
        if self.res.one_sided {
            flags |= FLAG_ONE_SIDED;
        }
        if self.res.landings {
            flags |= FLAG_LANDINGS;
        }
        ConnParams { recv_depth: self.res.recv_depth, slot_len: self.res.slot_len as u32, flags }
    }

    /// Connection parameters for connect/accept: our ring in the private data; no RNR
    /// retries (credits make them impossible: an RNR would be a bug, reported at once);
    /// the maximum transport retries, so a lost peer is detected in seconds, not never.
    fn conn_param(&self, private: &[u8; crate::wire::PARAMS_LEN]) -> rdma_conn_param {
        // SAFETY: all-zero is a valid rdma_conn_param.
        let mut p: rdma_conn_param = unsafe { std::mem::zeroed() };
        p.private_data = private.as_ptr().cast();
        p.private_data_len = private.len() as u8;
        // RDMA READs executed on the wire at once (the engine keeps READ_DEPTH posted), within
        // what the device allows.
        let rd_atoms = self.res.max_rd_atoms().min(READ_DEPTH) as u8;
        p.responder_resources = rd_atoms;
        p.initiator_depth = rd_atoms;
        p.retry_count = 7;
        p.rnr_retry_count = 0;
        p
    }

    fn established(self, peer: ConnParams) -> VerbsFabric {
        let seg_len = self.res.slot_len.min(peer.slot_len as usize);
        let peer_reads_remote = self.res.one_sided && peer.flags & FLAG_ONE_SIDED != 0;
        if self.res.one_sided && !peer_reads_remote {
            tracing::info!("RDMA one-sided bulk: the peer does not accept it; two-sided path only");
        }
        let both = FLAG_ONE_SIDED | FLAG_LANDINGS;
        let landings_agreed = self.res.landings && peer.flags & both == both;
        VerbsFabric { res: self.res, seg_len, peer_recv_depth: peer.recv_depth, peer_reads_remote, landings_agreed, block: Mutex::new(()) }
    }
}

/// The verbs access flags of `access`.
fn verbs_access(access: Access) -> i32 {
    let mut flags = 0;
    if access.local_write {
        flags |= ibv_access_flags::IBV_ACCESS_LOCAL_WRITE.0;
    }
    if access.remote_read {
        flags |= ibv_access_flags::IBV_ACCESS_REMOTE_READ.0;
    }
    if access.remote_write {
        flags |= ibv_access_flags::IBV_ACCESS_REMOTE_WRITE.0;
    }
    flags as i32
}

/// A connected RC queue pair with registered rings: the [`Fabric`] of real verbs.
pub struct VerbsFabric {
    res: Resources,
    seg_len: usize,
    peer_recv_depth: u32,
    /// Both sides enabled one-sided bulk.
    peer_reads_remote: bool,
    /// Both sides enabled landings.
    landings_agreed: bool,
    /// Serialises `block` (only the engine's leader calls it, but the API must not rely on it).
    block: Mutex<()>,
}

impl VerbsFabric {
    /// The peer's address.
    pub fn peer_addr(&self) -> Option<SocketAddr> {
        // SAFETY: the id is live; librdmacm keeps the route's addresses in it.
        unsafe { cm::from_sockaddr(rdma_get_peer_addr(&*self.res.id)) }
    }
}

impl Fabric for VerbsFabric {
    fn seg_len(&self) -> usize {
        self.seg_len
    }

    fn send_depth(&self) -> u32 {
        self.res.send_depth
    }

    fn recv_depth(&self) -> u32 {
        self.res.recv_depth
    }

    fn peer_recv_depth(&self) -> u32 {
        self.peer_recv_depth
    }

    fn send_slot(&self, slot: u32) -> *mut u8 {
        assert!(slot < self.res.send_depth);
        let send = self.res.send.as_ref().expect("rings exist");
        // SAFETY: in bounds (slot < send_depth, buffer is send_depth slots).
        unsafe { send.ptr().add(slot as usize * self.res.slot_len) }
    }

    fn recv_slot(&self, slot: u32) -> *const u8 {
        assert!(slot < self.res.recv_depth + CONTROL_CREDITS);
        let recv = self.res.recv.as_ref().expect("rings exist");
        // SAFETY: in bounds (slot < recv slots).
        unsafe { recv.ptr().add(slot as usize * self.res.slot_len) }
    }

    fn post_send(&self, wr: SendWr) -> Result<(), FabricError> {
        let send = self.res.send.as_ref().expect("rings exist");
        let mut sge = ibv_sge { addr: 0, length: 0, lkey: send.lkey() };
        // SAFETY: zeroed is a valid empty work request; we fill the fields we use.
        let mut w: ibv_send_wr = unsafe { std::mem::zeroed() };
        w.send_flags = ibv_send_flags::IBV_SEND_SIGNALED.0;
        match wr {
            SendWr::Data { slot, len, imm } => {
                if len as usize > self.seg_len {
                    return Err(FabricError::new("post_send", format!("SEND of {len} bytes exceeds the {}-byte segment", self.seg_len)));
                }
                sge.addr = self.send_slot(slot) as u64;
                sge.length = len;
                w.wr_id = wr_id(TAG_DATA, slot);
                w.sg_list = &mut sge;
                w.num_sge = 1;
                w.opcode = ibv_wr_opcode::IBV_WR_SEND_WITH_IMM;
                w.imm_data_invalidated_rkey_union.imm_data = imm.to_be();
            }
            SendWr::Control { imm } => {
                w.wr_id = wr_id(TAG_CONTROL, 0);
                w.num_sge = 0;
                w.opcode = ibv_wr_opcode::IBV_WR_SEND_WITH_IMM;
                w.imm_data_invalidated_rkey_union.imm_data = imm.to_be();
            }
            SendWr::Probe => {
                // Zero-length RDMA WRITE: no address or rkey is checked (IBA C9-88).
                w.wr_id = wr_id(TAG_PROBE, 0);
                w.num_sge = 0;
                w.opcode = ibv_wr_opcode::IBV_WR_RDMA_WRITE;
            }
            SendWr::Read { id, local, lkey, len, remote, rkey } => {
                sge = ibv_sge { addr: local, length: len, lkey };
                w.wr_id = wr_id(TAG_READ, id);
                w.sg_list = &mut sge;
                w.num_sge = 1;
                w.opcode = ibv_wr_opcode::IBV_WR_RDMA_READ;
                w.wr.rdma.remote_addr = remote;
                w.wr.rdma.rkey = rkey;
            }
            SendWr::Write { id, local, lkey, len, remote, rkey } => {
                sge = ibv_sge { addr: local, length: len, lkey };
                w.wr_id = wr_id(TAG_WRITE, id);
                w.sg_list = &mut sge;
                w.num_sge = 1;
                w.opcode = ibv_wr_opcode::IBV_WR_RDMA_WRITE;
                w.wr.rdma.remote_addr = remote;
                w.wr.rdma.rkey = rkey;
            }
        }
        let mut bad = std::ptr::null_mut();
        // SAFETY: the QP is live; the WR and SGE outlive the call; the SGE lies inside the
        // registered send ring.
        let ret = unsafe { ibv_post_send(self.res.qp(), &mut w, &mut bad) };
        if ret != 0 {
            return Err(ret_err("ibv_post_send", ret));
        }
        Ok(())
    }

    fn post_recv(&self, slot: u32) -> Result<(), FabricError> {
        self.res.post_recv(slot)
    }

    fn poll(&self, out: &mut Vec<Completion>) -> Result<(), FabricError> {
        // SAFETY: all-zero ibv_wc values are valid; the device fills up to 16.
        let mut wcs: [ibv_wc; 16] = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: the CQ is live; `wcs` holds 16 entries.
            let n = unsafe { ibv_poll_cq(self.res.cq, wcs.len() as i32, wcs.as_mut_ptr()) };
            if n < 0 {
                return Err(ret_err("ibv_poll_cq", n));
            }
            for wc in &wcs[..n as usize] {
                let (tag, index) = (wc.wr_id >> 32, wc.wr_id as u32);
                let what = match tag {
                    TAG_DATA | TAG_CONTROL => "SEND",
                    TAG_PROBE | TAG_WRITE => "RDMA WRITE",
                    TAG_READ => "RDMA READ",
                    _ => "RECV",
                };
                if wc.status != ibv_wc_status::IBV_WC_SUCCESS {
                    out.push(Completion::Failed { what, status: status_str(wc.status), flushed: wc.status == ibv_wc_status::IBV_WC_WR_FLUSH_ERR });
                    continue;
                }
                out.push(match tag {
                    TAG_DATA => Completion::Sent(SendKind::Data(index)),
                    TAG_CONTROL => Completion::Sent(SendKind::Control),
                    TAG_PROBE => Completion::Sent(SendKind::Probe),
                    TAG_READ => Completion::Sent(SendKind::Read(index)),
                    TAG_WRITE => Completion::Sent(SendKind::Write(index)),
                    _ => {
                        let with_imm = wc.wc_flags & ibv_wc_flags::IBV_WC_WITH_IMM.0 != 0;
                        // SAFETY: imm_data is the active member when IBV_WC_WITH_IMM is set.
                        let imm = if with_imm { u32::from_be(unsafe { wc.imm_data_invalidated_rkey_union.imm_data }) } else { u32::MAX };
                        Completion::Received { slot: index, len: wc.byte_len, imm }
                    }
                });
            }
            if (n as usize) < wcs.len() {
                return Ok(());
            }
        }
    }

    fn arm(&self) -> Result<(), FabricError> {
        // SAFETY: the CQ is live.
        let ret = unsafe { ibv_req_notify_cq(self.res.cq, 0) };
        if ret != 0 {
            return Err(ret_err("ibv_req_notify_cq", ret));
        }
        Ok(())
    }

    fn block(&self, timeout: Duration) -> Result<Wake, FabricError> {
        let _one = self.block.lock().unwrap_or_else(|p| p.into_inner());
        if self.res.disconnected.load(Ordering::SeqCst) {
            std::thread::sleep(timeout.min(WAIT_TICK));
            return Ok(Wake::Timeout);
        }
        // SAFETY: the completion channel is live.
        let comp_fd = unsafe { (*self.res.comp).fd };
        let ready = poll_fds(&[comp_fd, self.res.channel.fd()], timeout).map_err(|e| FabricError::new("poll", e.to_string()))?;
        let mut wake = Wake::Timeout;
        if ready[0] {
            let mut got = 0;
            loop {
                let mut cq = std::ptr::null_mut();
                let mut ctx = std::ptr::null_mut();
                // SAFETY: live channel; the fd is non-blocking, so this returns -1/EAGAIN
                // once the channel is empty.
                if unsafe { ibv_get_cq_event(self.res.comp, &mut cq, &mut ctx) } != 0 {
                    break;
                }
                got += 1;
            }
            if got > 0 {
                let mut unacked = self.res.unacked_events.lock().unwrap_or_else(|p| p.into_inner());
                *unacked += got;
                // Acknowledging takes a lock in libibverbs: batch it.
                if *unacked >= 64 {
                    // SAFETY: acknowledges events taken from this CQ's channel.
                    unsafe { ibv_ack_cq_events(self.res.cq, *unacked) };
                    *unacked = 0;
                }
            }
            wake = Wake::Completions;
        }
        if ready[1] {
            while let Ok(Some(ev)) = self.res.channel.next(None) {
                let kind = ev.kind();
                tracing::debug!(event = %cm::event_name(kind), status = ev.status(), "RDMA CM event");
                if kind == rdma_cm_event_type::RDMA_CM_EVENT_DISCONNECTED
                    || kind == rdma_cm_event_type::RDMA_CM_EVENT_DEVICE_REMOVAL
                    || kind == rdma_cm_event_type::RDMA_CM_EVENT_TIMEWAIT_EXIT
                {
                    wake = Wake::Disconnected;
                }
            }
            if wake == Wake::Disconnected && !self.res.disconnected.swap(true, Ordering::SeqCst) {
                // Complete the disconnect handshake (moves our QP to the error state, which
                // flushes what is still posted).
                // SAFETY: live id.
                unsafe { rdma_disconnect(self.res.id) };
            }
        }
        Ok(wake)
    }

    fn disconnect(&self) {
        if !self.res.disconnected.swap(true, Ordering::SeqCst) {
            // SAFETY: live id.
            unsafe { rdma_disconnect(self.res.id) };
        }
    }

    fn peer_reads_remote(&self) -> bool {
        self.peer_reads_remote
    }

    fn landings_agreed(&self) -> bool {
        self.landings_agreed
    }

    unsafe fn register(&self, ptr: *mut u8, len: usize, access: Access) -> Result<Box<dyn Region>, FabricError> {
        let access = verbs_access(access);
        let mem = ExportedMemory::Host { addr: ptr as u64, len: len as u64 };
        // SAFETY: the PD lives as long as this fabric, which outlives every transfer (the
        // engine drops regions before the call that made them returns); the caller keeps
        // the memory valid.
        match unsafe { MemoryRegion::register(self.res.pd, mem, access) } {
            Ok(mr) => Ok(Box::new(mr)),
            Err(e) => Err(FabricError::new("ibv_reg_mr", e.to_string())),
        }
    }

    unsafe fn register_dmabuf(
        &self,
        fd: std::os::fd::OwnedFd,
        offset: u64,
        len: usize,
        iova: u64,
        access: Access,
    ) -> Result<Box<dyn Region>, FabricError> {
        let mem = ExportedMemory::Dmabuf { fd, offset, len: len as u64, iova };
        // SAFETY: as in `register`; the caller keeps the device memory allocated while the
        // region lives, and the dma-buf fd is kept open with it.
        match unsafe { MemoryRegion::register(self.res.pd, mem, verbs_access(access)) } {
            Ok(mr) => Ok(Box::new(mr)),
            Err(e) => Err(FabricError::new("ibv_reg_dmabuf_mr", e.to_string())),
        }
    }
}

impl Region for MemoryRegion {
    fn lkey(&self) -> u32 {
        MemoryRegion::lkey(self)
    }

    fn rkey(&self) -> u32 {
        MemoryRegion::rkey(self)
    }
}

/// Connects to a worker at `addr` ("host:port"; the host must be an address of an RDMA
/// device's netdev or IPoIB interface) and returns the two halves.
pub fn connect(addr: &str, cfg: &RdmaConfig) -> io::Result<(RdmaSink, RdmaSource)> {
    let mut last = None;
    for sa in cm::resolve(addr)? {
        match connect_one(&sa, cfg) {
            Ok(fabric) => return Ok(split(fabric, cfg, Role::Client)),
            Err(e) => last = Some(io::Error::new(e.kind(), format!("{sa}: {e}"))),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("{addr}: no address"))))
}

/// RDMA verbs as a [`Connector`]: `host:port` of an RDMA device's netdev or IPoIB address.
pub struct RdmaConnector<'a>(pub &'a RdmaConfig);

impl<D> transport_core::Connector<D> for RdmaConnector<'_> {
    fn name(&self) -> &'static str {
        "RDMA"
    }

    fn connect(&self, target: &str) -> io::Result<transport_core::Connected<D>> {
        let (sink, source) = connect(target, self.0)?;
        Ok(transport_core::Connected::new(sink, source))
    }
}

fn connect_one(sa: &SocketAddr, cfg: &RdmaConfig) -> io::Result<VerbsFabric> {
    let started = Instant::now();
    let left = |what: &str| {
        let t = cfg.connect_timeout.saturating_sub(started.elapsed());
        if t.is_zero() {
            Err(io::Error::new(io::ErrorKind::TimedOut, format!("{what}: connect timeout")))
        } else {
            Ok(t)
        }
    };
    let channel = EventChannel::new()?;
    let mut id = std::ptr::null_mut();
    // SAFETY: live channel; `id` is an out-pointer.
    if unsafe { rdma_create_id(channel.0, &mut id, std::ptr::null_mut(), rdma_port_space::RDMA_PS_TCP) } != 0 {
        return Err(os_err("rdma_create_id"));
    }
    // From here `Resources` (or this guard) owns the id.
    struct IdGuard(*mut rdma_cm_id);
    impl Drop for IdGuard {
        fn drop(&mut self) {
            if !self.0.is_null() {
                // SAFETY: a live id never handed to Resources.
                unsafe { rdma_destroy_id(self.0) };
            }
        }
    }
    let mut guard = IdGuard(id);
    let mut dst = cm::to_sockaddr(sa);
    let ms = RESOLVE_TIMEOUT.min(left("resolve")?).as_millis() as i32;
    // SAFETY: live id; `dst` is a valid sockaddr for its family.
    if unsafe { rdma_resolve_addr(id, std::ptr::null_mut(), (&mut dst as *mut libc::sockaddr_storage).cast(), ms) } != 0 {
        return Err(os_err("rdma_resolve_addr"));
    }
    drop(channel.expect(rdma_cm_event_type::RDMA_CM_EVENT_ADDR_RESOLVED, left("address resolution")?, "address resolution")?);
    let ms = RESOLVE_TIMEOUT.min(left("route")?).as_millis() as i32;
    // SAFETY: live id with a resolved address.
    if unsafe { rdma_resolve_route(id, ms) } != 0 {
        return Err(os_err("rdma_resolve_route"));
    }
    drop(channel.expect(rdma_cm_event_type::RDMA_CM_EVENT_ROUTE_RESOLVED, left("route resolution")?, "route resolution")?);
    guard.0 = std::ptr::null_mut();
    let prepared = Prepared { res: Resources::new(channel, id, cfg)? };
    let private = prepared.params().emit();
    let mut param = prepared.conn_param(&private);
    // SAFETY: live id with a QP; `param` and its private data outlive the call.
    if unsafe { rdma_connect(id, &mut param) } != 0 {
        return Err(os_err("rdma_connect"));
    }
    let ev = prepared.res.expect(rdma_cm_event_type::RDMA_CM_EVENT_ESTABLISHED, left("connect")?, "connect")?;
    let peer = ConnParams::parse(&ev.private_data()).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
    drop(ev);
    tracing::debug!(%sa, ?peer, "RDMA connection established");
    Ok(prepared.established(peer))
}

/// A listening RDMA CM id.
pub struct RdmaListener {
    id: *mut rdma_cm_id,
    channel: EventChannel,
    cfg: RdmaConfig,
}

// SAFETY: the listening id and its channel are used through `&self` from one accept thread
// at a time; librdmacm calls on them are thread-safe.
unsafe impl Send for RdmaListener {}
// SAFETY: as above.
unsafe impl Sync for RdmaListener {}

impl RdmaListener {
    /// Binds and listens on `addr` ("ADDR:PORT"; port 0 picks one, see
    /// [`local_addr`](Self::local_addr)). Connections get `cfg`'s ring settings.
    pub fn bind(addr: &str, cfg: &RdmaConfig) -> io::Result<Self> {
        let sa = cm::resolve(addr)?[0];
        let channel = EventChannel::new()?;
        let mut id = std::ptr::null_mut();
        // SAFETY: live channel; out-pointer.
        if unsafe { rdma_create_id(channel.0, &mut id, std::ptr::null_mut(), rdma_port_space::RDMA_PS_TCP) } != 0 {
            return Err(os_err("rdma_create_id"));
        }
        let listener = Self { id, channel, cfg: cfg.clamped() };
        let mut ss = cm::to_sockaddr(&sa);
        // SAFETY: live id; valid sockaddr.
        if unsafe { rdma_bind_addr(id, (&mut ss as *mut libc::sockaddr_storage).cast()) } != 0 {
            return Err(os_err(&format!("rdma_bind_addr({sa})")));
        }
        // SAFETY: live, bound id.
        if unsafe { rdma_listen(id, 128) } != 0 {
            return Err(os_err("rdma_listen"));
        }
        if cm::is_any(&sa.ip()) {
            tracing::info!(%sa, "RDMA listener on every RDMA device");
        }
        Ok(listener)
    }

    /// The bound address (with the port chosen for port 0).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        // SAFETY: live id; librdmacm keeps the bound address in it.
        unsafe { cm::from_sockaddr(rdma_get_local_addr(&*self.id)) }
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "unknown address family"))
    }

    /// Waits up to `timeout` for a connection request, sets the connection up and accepts
    /// it. `Ok(None)`: nothing arrived. A request from something that is not a hip-remote
    /// peer is rejected here and reported as an error (the listener stays usable).
    pub fn accept(&self, timeout: Duration) -> io::Result<Option<Incoming>> {
        let Some(ev) = self.channel.next(Some(timeout))? else { return Ok(None) };
        if ev.kind() != rdma_cm_event_type::RDMA_CM_EVENT_CONNECT_REQUEST {
            tracing::debug!(event = %cm::event_name(ev.kind()), "RDMA listener event ignored");
            return Ok(None);
        }
        let id = ev.id();
        let private = ev.private_data();
        let (peer_responder, peer_initiator) = ev.rd_atoms();
        drop(ev); // acknowledged before the id moves to its own channel
        let reject = |why: String| {
            // SAFETY: `id` is the new, unaccepted connection's id; rejected and destroyed once.
            unsafe {
                rdma_reject(id, std::ptr::null(), 0);
                rdma_destroy_id(id);
            }
            io::Error::new(io::ErrorKind::ConnectionRefused, why)
        };
        let peer = match ConnParams::parse(&private) {
            Ok(p) => p,
            Err(e) => return Err(reject(format!("connection request refused: {e}"))),
        };
        let channel = match EventChannel::new() {
            Ok(c) => c,
            Err(e) => return Err(reject(format!("connection request refused: {e}"))),
        };
        // SAFETY: live id and channel; every event of the id on the old channel was acked.
        if unsafe { rdma_migrate_id(id, channel.0) } != 0 {
            let e = os_err("rdma_migrate_id");
            return Err(reject(e.to_string()));
        }
        let prepared = Prepared { res: Resources::new(channel, id, &self.cfg)? };
        let ours = prepared.params().emit();
        let mut param = prepared.conn_param(&ours);
        // Never more READs than the client issues or accepts at once (at least 1: one-sided
        // bulk needs READs in both directions).
        param.responder_resources = param.responder_resources.min(peer_initiator).max(1);
        param.initiator_depth = param.initiator_depth.min(peer_responder).max(1);
        // SAFETY: live id with a QP; `param` outlives the call.
        if unsafe { rdma_accept(id, &mut param) } != 0 {
            return Err(os_err("rdma_accept"));
        }
        Ok(Some(Incoming { prepared, peer }))
    }
}

impl Drop for RdmaListener {
    fn drop(&mut self) {
        while let Ok(Some(ev)) = self.channel.next(None) {
            drop(ev);
        }
        // SAFETY: live id, destroyed once, before its channel (dropped after this body).
        unsafe { rdma_destroy_id(self.id) };
    }
}

/// An accepted connection waiting for the handshake to complete.
pub struct Incoming {
    prepared: Prepared,
    peer: ConnParams,
}

impl Incoming {
    /// Waits for ESTABLISHED and returns the two halves (configured as the listener's).
    pub fn establish(self, cfg: &RdmaConfig, timeout: Duration) -> io::Result<(RdmaSink, RdmaSource)> {
        drop(self.prepared.res.expect(rdma_cm_event_type::RDMA_CM_EVENT_ESTABLISHED, timeout, "accept")?);
        let fabric = self.prepared.established(self.peer);
        tracing::debug!(peer = ?fabric.peer_addr(), params = ?self.peer, "RDMA connection accepted");
        Ok(split(fabric, cfg, Role::Worker))
    }
}
