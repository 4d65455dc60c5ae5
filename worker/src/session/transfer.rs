//! Session side of copies between workers ([`crate::transfer`]): the source's offer (a read
//! queued in stream order into the grant), the destination's pull (a fetch from the source,
//! then a write queued in stream order), and the fetch a source answers.

use super::memory::PendingUpload;
use super::{CallCx, Failure, Session};
use crate::backend::{DevicePtr, DtohDone, HostData};
use proto_core::wire;
use proto_core::{Outcome, Status};
use std::sync::Arc;

/// Why a session here takes no part in copies between workers.
const NO_TRANSFERS: &str = "this worker takes no part in copies between workers (copy through host memory)";

impl Session {
    fn transfer_hub(&self) -> Result<Arc<crate::transfer::TransferHub>, Failure> {
        self.config.transfers.clone().ok_or_else(|| Failure::new(Status::NOT_SUPPORTED, NO_TRANSFERS))
    }

    /// `TransferOffer`: registers the grant, then queues the read of the range behind the
    /// stream's earlier work, piece by piece, so the fetch sends the first pieces while the
    /// next are read; the request loop goes on meanwhile.
    pub(super) fn offer_transfer(&mut self, req: wire::TransferOffer<'_>) -> Result<wire::Empty, Failure> {
        let hub = self.transfer_hub()?;
        if req.len == 0 || req.len > wire::MAX_TRANSFER_BYTES {
            return Err(Failure::new(
                Status::INVALID_VALUE,
                format!("a transfer grant covers 1 to {} bytes, not {}", wire::MAX_TRANSFER_BYTES, req.len),
            ));
        }
        let (_, alloc) = self.allocations.resolve(req.src, req.len, "source of a copy between workers")?;
        let stream = self.stream(req.stream, alloc.device)?;
        let (session, grant) = (self.id, req.grant_id);
        hub.offer(session, grant, req.secret.0, req.len)?;
        for (offset, len) in crate::transfer::grant_chunks(req.len) {
            let completer = Arc::clone(&hub);
            let done: DtohDone = Box::new(move |read| completer.complete_chunk(session, grant, offset, read));
            if let Err(e) = self.backend.memcpy_dtoh(stream, DevicePtr(req.src + offset), len, done) {
                // Pieces queued before still run; the fetch finds the grant gone.
                hub.withdraw(session, grant);
                return Err(e.into());
            }
        }
        Ok(wire::Empty {})
    }

    /// `TransferPull`: fetches the grant from the source worker (this request loop waits for
    /// it) and queues the write behind the stream's earlier work.
    pub(super) fn pull_transfer(&mut self, req: wire::TransferPull<'_>) -> Result<wire::Empty, Failure> {
        let hub = self.transfer_hub()?;
        if !hub.may_dial() {
            return Err(Failure::new(Status::NOT_SUPPORTED, crate::transfer::NO_DIALLING));
        }
        if req.len == 0 || req.len > wire::MAX_TRANSFER_BYTES {
            return Err(Failure::new(
                Status::INVALID_VALUE,
                format!("a transfer grant covers 1 to {} bytes, not {}", wire::MAX_TRANSFER_BYTES, req.len),
            ));
        }
        let (_, alloc) = self.allocations.resolve(req.dst, req.len, "destination of a copy between workers")?;
        let stream = self.stream(req.stream, alloc.device)?;
        if !req.sync {
            // Buffered until the stream runs the write: bounded with the session's uploads.
            let (pending, max) = (self.pending_bytes.load(std::sync::atomic::Ordering::Acquire), self.config.limits.max_pending_bytes);
            if pending.saturating_add(req.len as usize) > max {
                return Err(Failure::new(
                    Status::OUT_OF_MEMORY,
                    format!(
                        "{}-byte copy refused: the session's queued uploads would pass {max} bytes (--max-pending-mib); synchronize first",
                        req.len
                    ),
                ));
            }
        }
        // The policy (--dial-workers) is checked where the socket is made: here, or in the
        // worker for a session process.
        let socket = hub.connect(req.source.0)?;
        let dst = DevicePtr(req.dst);
        let fetch = |land: &mut crate::transfer::Landing<'_>| {
            crate::transfer::fetch(socket, req.source.0, req.source_session, req.grant_id, req.secret.0, req.len, land)
        };
        if req.sync || req.stream == 0 {
            // Each piece is received straight into device memory once the stream's earlier
            // work is done (a GPU's staging buffer, its DMA overlapping the next piece), as a
            // synchronous or null-stream upload is.
            fetch(&mut |offset, n, fill| self.receive_into_device(stream, DevicePtr(req.dst + offset), n as u64, fill))?;
            if req.sync {
                self.backend.finish_device_writes(stream, dst)?;
            }
        } else {
            // Buffered until the stream runs the write (checked against --max-pending-mib
            // above): a failed fetch leaves the destination untouched.
            let mut bytes = Vec::new();
            bytes
                .try_reserve_exact(req.len as usize)
                .map_err(|_| Failure::new(Status::OUT_OF_MEMORY, format!("no host memory to buffer a {}-byte copy", req.len)))?;
            fetch(&mut |offset, n, fill| {
                let at = offset as usize;
                bytes.resize(at + n, 0);
                fill(&mut bytes[at..]);
                Ok(())
            })?;
            let data = PendingUpload::new(bytes, &self.pending_bytes);
            self.backend.memcpy_htod(stream, dst, HostData::from_buffer(data))?;
        }
        self.metrics().add_transfer_bytes_in(req.len);
        hub.note_moved(crate::transfer::Moved::In, req.len);
        Ok(wire::Empty {})
    }

    /// `TransferFetch`, the first and only request of a transfer connection: the grant's
    /// bytes, once, piece by piece as the source stream reads them (all but the last queued
    /// for the connection's writer, the last as the reply); the connection closes after it.
    pub(super) fn answer_fetch<'a>(&'a mut self, cx: &mut CallCx, req: wire::TransferFetch<'_>) -> Result<Outcome<wire::TransferData<'a>>, Failure> {
        cx.close_after_reply = true;
        if self.trusted() || self.greeted() {
            return Err(Failure::new(Status::ILLEGAL_STATE, "TransferFetch must be the first and only request of a transfer connection"));
        }
        let hub = self.transfer_hub()?;
        let mut claim = hub.claim(req.session_id, req.grant_id, req.secret.0, req.len)?;
        self.fetched = crate::transfer::answer_claim(&mut claim, &self.late, cx.request_id, crate::transfer::TRANSFER_WAIT)?;
        drop(claim);
        self.metrics().add_transfer_bytes_out(req.len);
        hub.note_moved(crate::transfer::Moved::Out, req.len);
        tracing::debug!(session = req.session_id, grant = req.grant_id, len = req.len, "transfer grant fetched");
        Ok(Outcome::Reply(wire::TransferData { data: proto_core::Bulk(&self.fetched) }))
    }
}
