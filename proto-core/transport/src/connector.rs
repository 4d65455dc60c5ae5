//! What the client's driver needs from a transport to reach a worker: the client-side
//! counterpart of the worker's `Listener` (`worker/src/listener.rs`). Each transport offers
//! one beside its `connect` (`transport_tcp::tcp::TcpConnector`,
//! `transport_tcp::tls::TlsConnector`, `transport_shm::ShmConnector`,
//! `transport_rdma::verbs::RdmaConnector`); the driver picks one by the worker address's
//! [`Scheme`] and opens every connection (main, stripes, resume) through it.

use crate::{FrameSink, FrameSource};
use std::io;

/// How a worker address names its transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// `host:port`: TCP, with TLS when the client's configuration has TLS settings.
    Tcp,
    /// `shm:///path`: a worker on this machine, over shared memory (Linux).
    Shm,
    /// `rdma://host[:port]`: RDMA verbs.
    Rdma,
}

impl Scheme {
    /// The transport `worker` names, and the target its connector takes (the address
    /// without its scheme).
    pub fn of(worker: &str) -> (Self, &str) {
        if let Some(path) = worker.strip_prefix("shm://") {
            (Self::Shm, path)
        } else if let Some(addr) = worker.strip_prefix("rdma://") {
            (Self::Rdma, addr)
        } else {
            (Self::Tcp, worker)
        }
    }
}

/// A connection a [`Connector`] opened: its halves, and the channel for passing file
/// descriptors (`D`) where the transport has one (same-host connections: shared host memory).
pub struct Connected<D> {
    /// The sending half.
    pub sink: Box<dyn FrameSink>,
    /// The receiving half.
    pub source: Box<dyn FrameSource>,
    /// Where the transport passes descriptors; `None` for transports without.
    pub descriptors: Option<D>,
}

impl<D> Connected<D> {
    /// A connection without a descriptor channel.
    pub fn new(sink: impl FrameSink + 'static, source: impl FrameSource + 'static) -> Self {
        Self { sink: Box::new(sink), source: Box::new(source), descriptors: None }
    }
}

/// Opens connections to workers over one transport. `D` is the descriptor channel type of
/// the driver's connections (transports without one are connectors for every `D`).
pub trait Connector<D> {
    /// The transport's name in messages ("TCP", "TLS", "shared memory", "RDMA").
    fn name(&self) -> &'static str;

    /// Connects to `target` (the worker address without its scheme: `host:port`, a socket
    /// path) within the transport's connect timeout.
    fn connect(&self, target: &str) -> io::Result<Connected<D>>;
}

/// A connector for a transport this build lacks: every connection fails with `why`.
pub struct Unsupported(pub String);

impl<D> Connector<D> for Unsupported {
    fn name(&self) -> &'static str {
        "unsupported"
    }

    fn connect(&self, target: &str) -> io::Result<Connected<D>> {
        Err(io::Error::new(io::ErrorKind::Unsupported, format!("{target}: {}", self.0)))
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn the_scheme_names_the_transport() {
        assert_eq!(Scheme::of("shm:///run/hip.sock"), (Scheme::Shm, "/run/hip.sock"));
        assert_eq!(Scheme::of("rdma://10.0.0.1:7070"), (Scheme::Rdma, "10.0.0.1:7070"));
        assert_eq!(Scheme::of("gpu-node:7070"), (Scheme::Tcp, "gpu-node:7070"));
        assert_eq!(Scheme::of("[::1]:7070"), (Scheme::Tcp, "[::1]:7070"));
    }

    #[test]
    fn an_unsupported_transport_says_why() {
        let e = Connector::<()>::connect(&Unsupported("built without `rdma`".into()), "h:1").err().expect("refused");
        assert_eq!(e.kind(), io::ErrorKind::Unsupported);
        assert!(e.to_string().contains("built without `rdma`"), "{e}");
    }
}
