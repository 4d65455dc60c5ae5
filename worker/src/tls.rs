//! TLS on the worker's TCP listener: [`TlsListener`] accepts TCP connections like the plain
//! listener and runs the TLS handshake on the connection's own thread, within the
//! pre-authentication deadline. A plain hip-remote client that reaches it is told, in a
//! clear error frame, to use TLS. RDMA keeps its own path (no TLS there).

use crate::backend::Backend;
use crate::config::WorkerConfig;
use crate::listener::{Accepted, Connection, Listener, TcpAccepted};
use crate::server::Server;
use proto_core::Status;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;
use transport_tcp::tls::{TlsSink, TlsSource};

pub use transport_tcp::tls::server_config;
/// rustls' server configuration.
pub type ServerConfig = rustls::ServerConfig;

/// The TCP worker serving TLS.
pub type TlsWorker = Server<TlsListener>;

impl TlsWorker {
    /// Binds `addr` and starts serving TLS (`tls`: see [`server_config`]) in background
    /// threads.
    pub fn start_tls(addr: &str, backend: Arc<dyn Backend>, config: WorkerConfig, tls: Arc<ServerConfig>) -> io::Result<Self> {
        let listener = transport_tcp::listen(addr)?;
        listener.set_nonblocking(false)?;
        Self::spawn(TlsListener { listener, tls }, backend, config)
    }
}

/// A TCP listener whose connections speak TLS.
pub struct TlsListener {
    listener: TcpListener,
    tls: Arc<ServerConfig>,
}

impl Listener for TlsListener {
    const TRANSPORT: &'static str = "TLS";
    type Accepted = TlsAccepted;

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    fn poll_accept(&self, timeout: Duration) -> io::Result<Option<TlsAccepted>> {
        Ok(self.listener.poll_accept(timeout)?.map(|tcp| TlsAccepted { tcp, tls: self.tls.clone() }))
    }

    fn waker(&self) -> io::Result<Option<Box<dyn Fn() + Send>>> {
        Listener::waker(&self.listener)
    }
}

/// An accepted TCP connection before its TLS handshake.
pub struct TlsAccepted {
    tcp: TcpAccepted,
    tls: Arc<ServerConfig>,
}

/// What a plain client that reached the TLS listener is told.
const TLS_ONLY: &str = "this worker accepts TLS connections only: connect with HIP_REMOTE_WORKER=tls://HOST:PORT (or HIP_REMOTE_TLS=1)";

impl Accepted for TlsAccepted {
    type Sink = TlsSink;
    type Source = TlsSource;

    fn peer(&self) -> Option<SocketAddr> {
        Some(self.tcp.peer)
    }

    fn establish(self, config: &WorkerConfig) -> io::Result<Connection<TlsSink, TlsSource>> {
        let Self { tcp, tls } = self;
        let peer = tcp.peer;
        tcp.stream.set_nonblocking(false)?;
        let deadline = config.limits.preauth_deadline;
        if speaks_plain_protocol(&tcp, deadline) {
            tracing::warn!(%peer, "connection refused: a plain (not TLS) hip-remote client");
            config.session.metrics.refused(crate::metrics::Refusal::Handshake);
            tcp.refuse(Status::AUTH_REQUIRED, TLS_ONLY);
            return Err(io::Error::new(io::ErrorKind::InvalidData, "a plain client on the TLS listener"));
        }
        let hangup = Box::new(tcp.stream.try_clone()?);
        match transport_tcp::tls::accept(tcp.stream, &config.tcp, &tls, deadline) {
            Ok((sink, source)) => Ok(Connection { sink, source, hangup, peer: Some(peer) }),
            Err(e) => {
                tracing::warn!(%peer, %e, "connection refused: TLS handshake failed");
                config.session.metrics.refused(crate::metrics::Refusal::Handshake);
                Err(e)
            }
        }
    }
}

/// Whether the peer's first bytes (waited for up to `deadline`) are a hip-remote frame
/// header rather than a TLS record.
fn speaks_plain_protocol(tcp: &TcpAccepted, deadline: Duration) -> bool {
    let mut first = [0u8; 4];
    if tcp.stream.set_read_timeout(Some(deadline)).is_err() {
        return false;
    }
    match tcp.stream.peek(&mut first) {
        Ok(n) if n > 0 => first[..n] == proto_core::MAGIC[..n],
        _ => false,
    }
}
