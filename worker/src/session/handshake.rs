//! Session family: the handshake (version, authentication), liveness, orderly goodbye.

use super::{CallCx, Failure, Session};
use proto_core::header::{MIN_PROTOCOL_VERSION, PROTOCOL_VERSION};
use proto_core::opcode::SessionHandler;
use proto_core::wire::{self, features};
use proto_core::Status;

impl SessionHandler for Session {
    fn hello<'a>(&'a mut self, _cx: &mut CallCx, req: wire::Hello<'a>) -> Result<wire::Welcome<'a>, Failure> {
        if self.greeted {
            return Err(Failure::new(Status::INVALID_VALUE, "HELLO sent twice"));
        }
        if req.min_version > req.max_version || req.max_version < MIN_PROTOCOL_VERSION || req.min_version > PROTOCOL_VERSION {
            return Err(Failure::new(
                Status::UNSUPPORTED_VERSION,
                format!(
                    "client speaks protocol {}..={}, worker speaks {MIN_PROTOCOL_VERSION}..={PROTOCOL_VERSION}",
                    req.min_version, req.max_version
                ),
            ));
        }
        if let Some(token) = &self.config.auth_token {
            if !constant_time_eq(token.as_bytes(), req.auth_token.0) {
                return Err(Failure::new(Status::AUTH_FAILED, "authentication token missing or wrong"));
            }
        }
        self.greeted = true;
        self.client_name = req.client_name.as_str().to_owned();
        tracing::info!(session = self.id, client = %self.client_name, resume = req.resume_session, "session opened");
        let mut offered = features::FIRE_AND_FORGET | features::BULK_STREAMING;
        if self.config.rdma_endpoint.is_some() {
            offered |= features::RDMA;
        }
        Ok(wire::Welcome {
            version: req.max_version.min(PROTOCOL_VERSION),
            features: req.features & offered,
            session_id: self.id,
            // Session state lives and dies with its connection: resume is refused by
            // answering with a fresh session, which the client sees in `resumed`.
            resumed: false,
            worker_name: self.config.worker_name.as_str().into(),
            backend: self.backend.name().into(),
            auth_challenge: Default::default(),
            rdma_endpoint: self.config.rdma_endpoint.as_deref().unwrap_or("").into(),
        })
    }

    fn authenticate<'a>(&'a mut self, _cx: &mut CallCx, _req: wire::Authenticate<'a>) -> Result<wire::Empty, Failure> {
        Err(Failure::new(Status::NOT_SUPPORTED, "challenge/response authentication is not configured on this worker"))
    }

    fn ping<'a>(&'a mut self, cx: &mut CallCx, req: wire::Ping<'a>) -> Result<wire::Pong<'a>, Failure> {
        Ok(wire::Pong { nonce: req.nonce, worker_time_ns: cx.now_ns, payload: req.payload })
    }

    fn goodbye(&mut self, cx: &mut CallCx, _req: wire::Empty) -> Result<wire::Empty, Failure> {
        cx.close_after_reply = true;
        Ok(wire::Empty {})
    }
}

/// Compares secrets without an early exit that would leak the matching prefix's length.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
