//! The receiving half: frame heads are read from the reassembled byte stream; a bulk section
//! is read from the stream, RDMA-READ from the peer's memory (remote), or found already
//! written into the landing this client offered.

use super::shared::Guard;
use super::{Broken, Closer, Offered, Shared, Stats};
use crate::fabric::Fabric;
use crate::rx::Piece;
use crate::wire::{RemoteDesc, RemoteHow, REMOTE_DESC_LEN};
use proto_core::header::{FrameHeader, HEADER_LEN};
use proto_core::Flags;
use std::io;
use std::sync::Arc;
use transport_core::{FrameSource, Received, TransportError};

/// The receiving half.
pub struct Source<F: Fabric> {
    pub(super) sh: Arc<Shared<F>>,
    pub(super) head: Vec<u8>,
    pub(super) bulk_remaining: usize,
    /// The current frame's bulk has not been touched yet (it may be announced as remote).
    pub(super) bulk_fresh: bool,
    /// The current frame's bulk is remote: where the next byte is read from.
    pub(super) remote: Option<RemoteDesc>,
    /// Client: the landing offered for the current reply (taken at its head).
    pub(super) landing: Option<Offered>,
    /// Client: the current reply's bulk was written into this landing by the worker.
    pub(super) written: Option<Offered>,
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
