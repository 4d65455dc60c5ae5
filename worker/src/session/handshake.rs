//! Session family: the handshake (version, authentication), liveness, orderly goodbye.
//!
//! Authentication is challenge-response ([`proto_core::auth`]): WELCOME carries a fresh
//! nonce, AUTHENTICATE an HMAC of it and the session's parameters keyed by a tenant's token,
//! checked by [`TokenStore::verify`](crate::auth::TokenStore::verify). A token in HELLO's
//! `auth_token` would have crossed the wire in clear, so it is refused, never checked.

use super::{CallCx, Failure, Session};
use crate::backend::DeviceIndex;
use proto_core::auth::{AuthContext, AUTH_NONCE_LEN};
use proto_core::header::{MIN_PROTOCOL_VERSION, PROTOCOL_VERSION};
use proto_core::limits::{MAX_CLIENT_DEVICES, MAX_DEVICE_BASE};
use proto_core::opcode::SessionHandler;
use proto_core::wire::{self, features};
use proto_core::Status;
use std::sync::atomic::Ordering;

/// What a WELCOME that asked for authentication said, kept for the AUTHENTICATE.
pub(super) struct Challenge {
    nonce: [u8; AUTH_NONCE_LEN],
    version: u16,
    features: u64,
}

impl SessionHandler for Session {
    fn hello<'a>(&'a mut self, _cx: &mut CallCx, req: wire::Hello<'a>) -> Result<wire::Welcome<'a>, Failure> {
        if self.greeted {
            return Err(Failure::new(Status::INVALID_VALUE, "HELLO sent twice"));
        }
        if req.min_version > req.max_version || req.max_version < MIN_PROTOCOL_VERSION || req.min_version > PROTOCOL_VERSION {
            return Err(Failure::new(
                Status::UNSUPPORTED_VERSION,
                format!(
                    "client speaks protocol {}..={}, worker hip-worker {} speaks protocol {MIN_PROTOCOL_VERSION}..={PROTOCOL_VERSION}",
                    req.min_version,
                    req.max_version,
                    hip_remote_build_info::VERSION
                ),
            ));
        }
        if !req.auth_token.0.is_empty() {
            tracing::warn!(peer = ?self.peer, client = %req.client_name.as_str(), "login refused: HELLO carried a token in clear");
            return Err(Failure::new(
                Status::AUTH_FAILED,
                "HELLO carried a token, which crossed the network in clear: refused (clients answer the WELCOME's challenge instead; consider that token disclosed)",
            ));
        }
        let mut offered = features::FIRE_AND_FORGET
            | features::BULK_STREAMING
            | features::CALLBACK_CHANNEL
            | features::CLIENT_ALLOCATION
            | features::COMPRESSED_BULK;
        if self.config.rdma_endpoint.is_some() {
            offered |= features::RDMA;
        }
        if self.offers_stripes() {
            offered |= features::STRIPED_BULK;
        }
        // Content is kept per tenant: a worker without tenants keeps none.
        if self.config.tokens.is_some() {
            offered |= features::CONTENT_STORE;
        }
        if (self.config.same_host.machine.is_some() && self.config.same_host.socket.get().is_some()) || self.offers_shared_host_memory() {
            offered |= features::SHARED_MEMORY;
        }
        // A callback channel carries no session state of its own to resume.
        if self.config.resume.is_some() && req.features & features::CALLBACK_CHANNEL == 0 {
            offered |= features::RESUME;
        }
        if let Some(hub) = &self.config.transfers {
            offered |= features::TRANSFER_SOURCE;
            if hub.may_dial() {
                offered |= features::TRANSFER_PULL;
            }
        }
        let version = req.max_version.min(PROTOCOL_VERSION);
        let mut session_features = req.features & offered;
        // A configured store that is empty (every tenant revoked) refuses everyone.
        let needs_auth = self.config.tokens.is_some();
        if needs_auth {
            session_features |= features::AUTH_REQUIRED;
            let nonce = crate::auth::new_nonce().map_err(|e| Failure::new(Status::UNKNOWN, format!("no randomness for the challenge: {e}")))?;
            self.challenge = Some(Challenge { nonce, version, features: session_features });
        } else {
            self.trusted.store(true, Ordering::Release);
        }
        self.greeted = true;
        self.shared_memory_offered = session_features & features::SHARED_MEMORY != 0;
        self.callback_connection = session_features & features::CALLBACK_CHANNEL != 0;
        self.note_striped_bulk(session_features);
        self.client_name = req.client_name.as_str().to_owned();
        if session_features & features::RESUME != 0 {
            let secret =
                crate::resume::new_secret().map_err(|e| Failure::new(Status::UNKNOWN, format!("no randomness for the resume secret: {e}")))?;
            self.resume_secret = secret.to_vec();
            self.replay.lock().unwrap_or_else(|p| p.into_inner()).enable();
            if let Some(hub) = &self.config.resume {
                hub.attach(self.id);
            }
        }
        tracing::info!(session = self.id, client = %self.client_name, resume = req.resume_session, needs_auth, worker_version = hip_remote_build_info::VERSION, "session opened");
        Ok(wire::Welcome {
            version,
            features: session_features,
            session_id: self.id,
            // A session is resumed by `Resume` after authentication, never by HELLO: this
            // is always a fresh session.
            resumed: false,
            worker_name: self.config.worker_name.as_str().into(),
            backend: self.backend.name().into(),
            auth_challenge: self.challenge.as_ref().map_or(&[][..], |c| &c.nonce[..]).into(),
            rdma_endpoint: self.config.rdma_endpoint.as_deref().unwrap_or("").into(),
            resume_secret: self.resume_secret.as_slice().into(),
        })
    }

    fn authenticate<'a>(&'a mut self, _cx: &mut CallCx, req: wire::Authenticate<'a>) -> Result<wire::Empty, Failure> {
        // One answer per challenge: whatever happens, this nonce is spent.
        let (Some(challenge), Some(tokens)) = (self.challenge.take(), self.config.tokens.as_ref()) else {
            return Err(Failure::new(Status::AUTH_FAILED, "no authentication challenge is pending on this connection"));
        };
        let cx = AuthContext {
            nonce: &challenge.nonce,
            session_id: self.id,
            client_name: &self.client_name,
            version: challenge.version,
            features: challenge.features,
        };
        match tokens.verify(&cx, req.response.0) {
            Some(tenant) => {
                tracing::info!(session = self.id, client = %self.client_name, %tenant, "authenticated");
                self.tenant = Some(tenant);
                self.trusted.store(true, Ordering::Release);
                Ok(wire::Empty {})
            }
            None => {
                tracing::warn!(peer = ?self.peer, session = self.id, client = %self.client_name, "login refused: wrong authentication response");
                Err(Failure::new(Status::AUTH_FAILED, "authentication failed: the response matches no token of this worker"))
            }
        }
    }

    /// Answers the socket only to a proof made with this machine's identity for this
    /// session; anything else gets an empty answer (the client stays where it is).
    fn same_host_offer<'a>(&'a mut self, _cx: &mut CallCx, req: wire::SameHostOffer<'a>) -> Result<wire::SameHostAnswer<'a>, Failure> {
        use subtle::ConstantTimeEq;
        let same_host = &self.config.same_host;
        let (Some(machine), Some(socket)) = (same_host.machine.as_deref(), same_host.socket.get()) else {
            return Ok(wire::SameHostAnswer { socket: "".into() });
        };
        let nonce = self.challenge.as_ref().map_or(&[][..], |c| &c.nonce[..]);
        let expected = proto_core::auth::same_host_proof(machine, self.id, nonce);
        let matches = self.shared_memory_offered && bool::from(expected[..].ct_eq(req.proof.0));
        tracing::debug!(session = self.id, matches, "same-host offer");
        Ok(wire::SameHostAnswer { socket: if matches { socket.as_str().into() } else { "".into() } })
    }

    fn ping<'a>(&'a mut self, cx: &mut CallCx, req: wire::Ping<'a>) -> Result<wire::Pong<'a>, Failure> {
        Ok(wire::Pong { nonce: req.nonce, worker_time_ns: cx.now_ns, payload: req.payload })
    }

    fn goodbye(&mut self, cx: &mut CallCx, _req: wire::Empty) -> Result<wire::Empty, Failure> {
        cx.close_after_reply = true;
        self.said_goodbye = true;
        Ok(wire::Empty {})
    }

    /// Places the session in a client's device list of several workers. Set once, before
    /// the session holds anything (a later change would renumber what it holds).
    fn session_device_base(&mut self, _cx: &mut CallCx, req: wire::DeviceBase) -> Result<wire::Empty, Failure> {
        let count = self.backend.device_count()?;
        if req.base > MAX_DEVICE_BASE || req.base.saturating_add(count) > MAX_CLIENT_DEVICES {
            return Err(Failure::new(
                Status::INVALID_VALUE,
                format!("device base {} with this worker's {count} devices exceeds a client's {MAX_CLIENT_DEVICES} devices", req.base),
            ));
        }
        if req.base != self.device_base && !self.holds_nothing() {
            return Err(Failure::new(Status::INVALID_VALUE, "the device base is set before the session allocates or creates anything"));
        }
        self.device_base = req.base;
        // Handles carry the base too: the client routes a call by the handles it names.
        self.set_handle_namespace(req.base as u8);
        Ok(wire::Empty {})
    }

    /// Shows the session only the worker's devices the client sees (its visibility
    /// variables), each under its client ordinal. Set once, before the session holds
    /// anything; the session's handles carry the smallest ordinal, as with a device base.
    fn session_device_map(&mut self, _cx: &mut CallCx, req: wire::DeviceMap<'_>) -> Result<wire::Empty, Failure> {
        let count = self.backend.device_count()?;
        let ordinals: Vec<u32> = req.ordinals.0.iter().map(|o| o.get()).collect();
        let devices: Vec<u32> = req.devices.0.iter().map(|d| d.get()).collect();
        let refused = |why: String| Err(Failure::new(Status::INVALID_VALUE, format!("device map refused: {why}")));
        if ordinals.len() != devices.len() {
            return refused(format!("{} ordinals for {} devices", ordinals.len(), devices.len()));
        }
        if let Some(o) = ordinals.iter().find(|&&o| o >= MAX_CLIENT_DEVICES) {
            return refused(format!("ordinal {o} is past the {MAX_CLIENT_DEVICES} devices a client can number"));
        }
        if let Some(d) = devices.iter().find(|&&d| d >= count) {
            return refused(format!("device {d} out of range (worker has {count})"));
        }
        let unique = |list: &[u32]| list.iter().collect::<std::collections::HashSet<_>>().len() == list.len();
        if !unique(&ordinals) || !unique(&devices) {
            return refused("an ordinal or a device appears twice".into());
        }
        let map: Vec<(u32, DeviceIndex)> = ordinals.into_iter().zip(devices).collect();
        if self.device_map.as_ref() != Some(&map) && !self.holds_nothing() {
            return Err(Failure::new(Status::INVALID_VALUE, "the device map is set before the session allocates or creates anything"));
        }
        let space = map.iter().map(|&(ordinal, _)| ordinal).min().unwrap_or(0);
        self.device_map = Some(map);
        self.set_handle_namespace(space as u8);
        Ok(wire::Empty {})
    }

    /// Records the ask; the server hands this connection to the parked session once this
    /// request loop ends ([`crate::resume`]), which answers it.
    fn resume<'a>(&'a mut self, cx: &mut CallCx, req: wire::Resume<'a>) -> Result<wire::Resumed, Failure> {
        if self.config.resume.is_none() {
            return Err(Failure::new(
                Status::SESSION_NOT_FOUND,
                "this worker does not resume sessions (--resume-grace-s 0, or sessions run in session processes)",
            ));
        }
        self.resume_ask = Some(crate::resume::ResumeAsk {
            request_id: cx.request_id,
            session_id: req.session_id,
            secret: req.secret.0.to_vec(),
            received_through: req.received_through,
        });
        cx.close_after_reply = true;
        Err(Failure::ReplyDeferred)
    }

    fn callback_channel_open(&mut self, _cx: &mut CallCx, _req: wire::Empty) -> Result<wire::CallbackTicket, Failure> {
        self.open_callback_channel()
    }

    fn callback_channel_attach(&mut self, _cx: &mut CallCx, req: wire::CallbackTicket) -> Result<wire::Empty, Failure> {
        self.attach_callback_channel(req)
    }

    fn callback_next(&mut self, _cx: &mut CallCx, req: wire::CallbackNext) -> Result<wire::CallbackRun, Failure> {
        self.next_callback(req)
    }

    fn stripes_open<'a>(&'a mut self, _cx: &mut CallCx, req: wire::StripesOpen) -> Result<wire::StripesGrant<'a>, Failure> {
        self.open_stripes(req)
    }

    fn stripe_join<'a>(&'a mut self, _cx: &mut CallCx, _req: wire::StripeJoin<'a>) -> Result<wire::Empty, Failure> {
        // The driver serves a join as a connection's first request; here it comes too late.
        Err(Failure::new(Status::ILLEGAL_STATE, "StripeJoin must be the first request of a stripe connection"))
    }

    fn stripe_chunk<'a>(&'a mut self, _cx: &mut CallCx, _req: wire::StripeChunk<'a>) -> Result<wire::Empty, Failure> {
        Err(Failure::new(Status::ILLEGAL_STATE, "StripeChunk is valid only on a joined stripe connection, within a striped copy"))
    }

    fn transfer_offer<'a>(&'a mut self, _cx: &mut CallCx, req: wire::TransferOffer<'a>) -> Result<wire::Empty, Failure> {
        self.offer_transfer(req)
    }

    fn transfer_pull<'a>(&'a mut self, _cx: &mut CallCx, req: wire::TransferPull<'a>) -> Result<wire::Empty, Failure> {
        self.pull_transfer(req)
    }

    fn transfer_fetch<'a>(
        &'a mut self,
        cx: &mut CallCx,
        req: wire::TransferFetch<'a>,
    ) -> Result<proto_core::Outcome<wire::TransferData<'a>>, Failure> {
        self.answer_fetch(cx, req)
    }

    fn kernel_output<'a>(&'a mut self, _cx: &mut CallCx, _req: wire::Empty) -> Result<proto_core::Outcome<wire::KernelOutputText<'a>>, Failure> {
        Err(Failure::new(Status::INVALID_VALUE, "KernelOutput is sent by the worker, not asked for"))
    }
}

impl Session {
    /// Makes every handle the session issues from now on carry `space` in bits 40..48 (the
    /// client's ordinal of one of this worker's devices): the client routes a call by the
    /// handles it names.
    fn set_handle_namespace(&mut self, space: u8) {
        self.streams.set_namespace(space);
        self.events.set_namespace(space);
        self.modules.set_namespace(space);
        self.functions.set_namespace(space);
        self.blas.set_namespace(space);
        self.arrays.arrays.set_namespace(space);
        self.arrays.mipmaps.set_namespace(space);
        self.arrays.texture_ids.set_namespace(space);
        self.graphs.graphs.set_namespace(space);
        self.graphs.nodes.set_namespace(space);
        self.graphs.execs.set_namespace(space);
        self.pools.pools.set_namespace(space);
        self.vmm.physical.set_namespace(space);
    }
}
