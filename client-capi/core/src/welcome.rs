//! What the handshake settled: the worker's WELCOME, and what it allows this session.

use proto_core::wire;

/// Facts from the handshake.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WelcomeInfo {
    /// Session id.
    pub session_id: u64,
    /// Worker identification.
    pub worker_name: String,
    /// Backend name.
    pub backend: String,
    /// Negotiated protocol version.
    pub version: u16,
    /// Negotiated features.
    pub features: u64,
    /// The worker's RDMA listener (`host:port`, empty: none).
    pub rdma_endpoint: String,
    /// The worker's shared-memory socket, when it runs on this machine (it said so to the
    /// client's `SameHostOffer`).
    pub same_host_socket: Option<String>,
    /// With `RESUME`: the secret that resumes the session on a new connection.
    pub resume_secret: Vec<u8>,
}

impl WelcomeInfo {
    /// The facts of a WELCOME (no same-host socket yet: that answer comes later).
    pub fn from_wire(w: &wire::Welcome<'_>) -> Self {
        Self {
            session_id: w.session_id,
            worker_name: w.worker_name.as_str().to_owned(),
            backend: w.backend.as_str().to_owned(),
            version: w.version,
            features: w.features,
            rdma_endpoint: w.rdma_endpoint.as_str().to_owned(),
            same_host_socket: None,
            resume_secret: w.resume_secret.0.to_vec(),
        }
    }

    /// Whether the worker negotiated every bit of `features`.
    pub fn has(&self, features: u64) -> bool {
        self.features & features == features
    }
}
