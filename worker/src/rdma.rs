//! The RDMA listener (feature `rdma`): the same accept loop ([`Server`]) and driver loop
//! as TCP, over `transport-rdma`'s sink and source.

use crate::backend::Backend;
use crate::config::WorkerConfig;
use crate::listener::{Accepted, Connection, Hangup, Listener};
use crate::server::Server;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use transport_rdma::engine::Closer;
use transport_rdma::{Incoming, RdmaConfig, RdmaListener, RdmaSink, RdmaSource, VerbsFabric};

/// How long an accepted connection may take to become established.
const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(10);

/// The RDMA worker.
pub type RdmaWorker = Server<RdmaAcceptor>;

impl RdmaWorker {
    /// Listens on `addr` (an address of an RDMA device's interface) and serves in
    /// background threads, one per connection, like the TCP worker.
    pub fn start(addr: &str, backend: Arc<dyn Backend>, config: WorkerConfig) -> io::Result<Self> {
        // The worker waits for requests without a deadline (as on TCP); dead peers are found
        // by DISCONNECTED events, failed completions and keepalive probes.
        let rdma = RdmaConfig { io_timeout: None, ..RdmaConfig::from_env().map_err(io::Error::other)? };
        let listener = RdmaListener::bind(addr, &rdma)?;
        Self::spawn(RdmaAcceptor { listener, rdma }, backend, config)
    }
}

/// An RDMA listener with the settings its connections get.
pub struct RdmaAcceptor {
    listener: RdmaListener,
    rdma: RdmaConfig,
}

impl Listener for RdmaAcceptor {
    const TRANSPORT: &'static str = "RDMA";
    type Accepted = RdmaAccepted;

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    fn poll_accept(&self, timeout: Duration) -> io::Result<Option<RdmaAccepted>> {
        let incoming = self.listener.accept(timeout)?;
        Ok(incoming.map(|incoming| RdmaAccepted { incoming, rdma: self.rdma }))
    }
}

/// An accepted RDMA connection waiting for its handshake (its peer is known only then).
pub struct RdmaAccepted {
    incoming: Incoming,
    rdma: RdmaConfig,
}

impl Accepted for RdmaAccepted {
    type Sink = RdmaSink;
    type Source = RdmaSource;

    fn establish(self, _config: &WorkerConfig) -> io::Result<Connection<RdmaSink, RdmaSource>> {
        let (sink, source) = self.incoming.establish(&self.rdma, ESTABLISH_TIMEOUT)?;
        let peer = source.fabric().peer_addr();
        Ok(Connection { hangup: Box::new(source.closer()), peer, sink, source, descriptors: None })
    }
}

impl Hangup for Closer<VerbsFabric> {
    fn hang_up(&self) {
        self.shutdown();
    }
}
