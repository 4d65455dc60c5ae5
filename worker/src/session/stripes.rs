//! Striped copies, the session's part: grants (through the worker's [`StripeHub`]) and the
//! validation of each striped copy's device range before any chunk moves. The chunks
//! themselves are moved by the stripe connections ([`crate::stripes`]).

use super::{Failure, Session};
use crate::backend::{Backend, DevicePtr, StreamHandle};
use crate::stripes::{StripeHub, StripeJob, StripeLease, STRIPE_CHUNK_BYTES};
use proto_core::wire::{self, features};
use proto_core::Status;
use std::sync::mpsc::Receiver;
use std::sync::Arc;

/// A first request that makes a connection part of a session served in a session process:
/// the server hands the connection there ([`Session::take_handoff`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handoff {
    /// A stripe joining its session (`StripeJoin`).
    Stripe,
    /// Another worker fetching a grant of the session (`TransferFetch`).
    Fetch,
}

impl Session {
    /// Lets this connection be granted stripes, or join a session's as one.
    pub fn set_stripe_hub(&mut self, hub: Arc<StripeHub>) {
        self.stripe_hub = Some(hub);
    }

    /// Whether WELCOME offers [`features::STRIPED_BULK`].
    pub(super) fn offers_stripes(&self) -> bool {
        self.stripe_hub.as_ref().is_some_and(|hub| hub.enabled())
    }

    /// Records the features negotiated at HELLO.
    pub(super) fn note_striped_bulk(&mut self, session_features: u64) {
        self.striped_bulk = session_features & features::STRIPED_BULK != 0;
    }

    /// `StripesOpen`: grants up to `req.count` stripes, or none (`granted` 0) where this
    /// connection cannot have them.
    pub(super) fn open_stripes(&mut self, req: wire::StripesOpen) -> Result<wire::StripesGrant<'_>, Failure> {
        let refused = wire::StripesGrant { granted: 0, chunk_bytes: STRIPE_CHUNK_BYTES, join_key: Default::default() };
        if self.stripes.is_some() {
            return Err(Failure::new(Status::ILLEGAL_STATE, "this session holds stripes already"));
        }
        let Some(hub) = self.stripe_hub.as_ref().filter(|_| self.striped_bulk) else { return Ok(refused) };
        let Some(grant) = hub.grant(self.id, self.peer.map(|p| p.ip()), req.count)? else { return Ok(refused) };
        tracing::info!(session = self.id, granted = grant.granted, "stripes granted");
        let lease = self.stripes.insert(grant.lease);
        Ok(wire::StripesGrant { granted: lease.granted(), chunk_bytes: STRIPE_CHUNK_BYTES, join_key: lease.key().as_slice().into() })
    }

    /// Makes a `StripeJoin` on this connection be kept for a session process rather than
    /// joined here ([`crate::sandbox::handover`]).
    pub fn set_stripes_join_elsewhere(&mut self) {
        self.stripes_join_elsewhere = true;
    }

    /// Whether a `StripeJoin` is kept rather than joined here.
    pub fn stripes_join_elsewhere(&self) -> bool {
        self.stripes_join_elsewhere
    }

    /// Makes a `TransferFetch` on this connection be kept for the session process serving
    /// the session it names rather than answered here ([`crate::sandbox::handover`]).
    pub fn set_fetches_elsewhere(&mut self) {
        self.fetches_elsewhere = true;
    }

    /// Whether a `TransferFetch` is kept rather than answered here.
    pub fn fetches_elsewhere(&self) -> bool {
        self.fetches_elsewhere
    }

    /// Keeps a `StripeJoin` or `TransferFetch` (`kind`) naming `session_id`, whose whole
    /// frame is `frame`.
    pub fn keep_handoff(&mut self, kind: Handoff, session_id: u64, frame: Vec<u8>) {
        self.kept_handoff = Some((kind, session_id, frame));
    }

    /// The kept `StripeJoin` or `TransferFetch`: which, the session it names and its frame.
    pub fn take_handoff(&mut self) -> Option<(Handoff, u64, Vec<u8>)> {
        self.kept_handoff.take()
    }

    /// The features of WELCOME that a session process serving this session honours itself.
    pub fn handed_features(&self) -> u64 {
        let mut handed = 0;
        if self.striped_bulk {
            handed |= features::STRIPED_BULK;
        }
        if self.shared_memory_offered {
            handed |= features::SHARED_MEMORY;
        }
        handed
    }

    /// Takes over what [`handed_features`](Self::handed_features) says (in the session
    /// process).
    pub fn adopt_features(&mut self, handed: u64) {
        self.note_striped_bulk(handed);
        self.shared_memory_offered = handed & features::SHARED_MEMORY != 0;
    }

    /// `StripeJoin` as this connection's first request: the joined stripe's job queue.
    pub fn join_stripe(&self, req: &wire::StripeJoin<'_>) -> Result<Receiver<StripeJob>, Failure> {
        let hub = self.stripe_hub.as_ref().ok_or_else(|| Failure::new(Status::NOT_SUPPORTED, "this listener takes no stripes"))?;
        let queue = hub.join(req, self.peer.map(|p| p.ip())).map_err(|why| Failure::new(Status::AUTH_FAILED, why))?;
        tracing::info!(session = req.session_id, index = req.index, "stripe joined");
        Ok(queue)
    }

    /// The stripes granted to this session.
    pub fn stripe_lease(&self) -> Option<&StripeLease> {
        self.stripes.as_ref()
    }

    /// The backend, for the stripe connections' copies.
    pub fn shared_backend(&self) -> Arc<dyn Backend> {
        Arc::clone(&self.backend)
    }

    /// Validates a striped upload's destination: the stream and address its chunks go to.
    pub fn striped_destination(&mut self, req: &wire::MemcpyHtoDStriped) -> Result<(Option<StreamHandle>, DevicePtr), Failure> {
        let (_, alloc) = self.allocations.resolve(req.dst, req.len, "hipMemcpy destination")?;
        let stream = self.stream(req.stream, alloc.device)?;
        Ok((stream, DevicePtr(req.dst)))
    }

    /// Validates a striped download's source: the stream and address its chunks come from.
    pub fn striped_source(&mut self, req: &wire::MemcpyDtoHStriped) -> Result<(Option<StreamHandle>, DevicePtr), Failure> {
        let (_, alloc) = self.allocations.resolve(req.src, req.len, "hipMemcpy source")?;
        let stream = self.stream(req.stream, alloc.device)?;
        if req.stream == 0 {
            // A blocking copy: what the kernels before it printed is forwarded first, as
            // for an ordinary one (`memcpy_dtoh`).
            self.forward_output_before_copy(stream, alloc.device);
        }
        Ok((stream, DevicePtr(req.src)))
    }

    /// Waits until a striped upload's chunks are in device memory (GPU backends stage them
    /// asynchronously).
    pub fn finish_striped_upload(&self, stream: Option<StreamHandle>, dst: DevicePtr) -> Result<(), Failure> {
        self.backend.finish_device_writes(stream, dst)?;
        Ok(())
    }
}
