//! The sending half: frames are copied into send slots (small ones batched into one SEND),
//! large bulk goes one-sided (announced as remote, read by the peer) or, on the worker, is
//! RDMA-WRITten into a landing the client offered; the client offers those landings.

use super::one_sided::Registry;
use super::{Closer, Offered, Role, Shared, Stats, MAX_LANDINGS};
use crate::config::COPY_BULK_BELOW;
use crate::fabric::{Access, Fabric, Region};
use crate::tx::{Batcher, Ready};
use crate::wire::{LandingDesc, RemoteDesc, RemoteHow, SegKind};
use proto_core::header::{FrameHeader, HEADER_LEN};
use proto_core::Flags;
use std::sync::Arc;
use transport_core::{FrameSink, MemoryRegistry, TransportError};

/// The sending half.
pub struct Sink<F: Fabric> {
    pub(super) sh: Arc<Shared<F>>,
    pub(super) batch: Batcher,
    /// Smallest bulk sent one-sided from memory that must be registered for the transfer
    /// (`usize::MAX`: one-sided off in the configuration).
    pub(super) one_sided_min: usize,
    /// Smallest bulk sent one-sided from remembered (cache-registered) memory.
    pub(super) cached_min: usize,
    /// Remote bulk sections sent (each answered by one Done).
    pub(super) remote_sent: u64,
    /// Whether the path choice for large bulk was logged.
    pub(super) logged_path: bool,
    /// Whether the first use of a landing was logged.
    pub(super) logged_landing: bool,
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
