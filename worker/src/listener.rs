//! What the accept loop in [`server`](crate::server) needs from a transport: a listener
//! polled with a timeout (so the loop can notice shutdown), and accepted connections that
//! become a sink/source pair plus a handle to end them from another thread. TCP is
//! implemented here; RDMA in [`rdma`](crate::rdma).

use crate::config::WorkerConfig;
use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::time::Duration;
use transport_core::{FrameSink, FrameSource};
use transport_tcp::tcp::{TcpSink, TcpSource};

/// A bound listener the worker accepts connections on.
pub trait Listener: Send + 'static {
    /// The transport's name in logs ("TCP", "RDMA"); lowercased in thread names.
    const TRANSPORT: &'static str;
    /// A connection taken off the listener, not yet ready for frames.
    type Accepted: Accepted;

    /// The bound address (with the port chosen for port 0).
    fn local_addr(&self) -> io::Result<SocketAddr>;

    /// Waits up to `timeout` for a connection; `Ok(None)` when none came.
    fn poll_accept(&self, timeout: Duration) -> io::Result<Option<Self::Accepted>>;
}

/// An accepted connection. Establishing it may block (RDMA waits for the handshake), so
/// it runs on the connection's own thread rather than the accept loop.
pub trait Accepted: Send + 'static {
    /// The sending half once established.
    type Sink: FrameSink + 'static;
    /// The receiving half once established.
    type Source: FrameSource + 'static;

    /// The peer, where the transport knows it before the connection is established.
    fn peer(&self) -> Option<SocketAddr> {
        None
    }

    /// Makes the connection ready for frames.
    fn establish(self, config: &WorkerConfig) -> io::Result<Connection<Self::Sink, Self::Source>>;
}

/// An established connection.
pub struct Connection<Sink, Source> {
    /// The sending half.
    pub sink: Sink,
    /// The receiving half.
    pub source: Source,
    /// Ends the connection from another thread (worker shutdown).
    pub hangup: Box<dyn Hangup>,
    /// The peer, for logs.
    pub peer: Option<SocketAddr>,
}

/// Ends a live connection from another thread.
pub trait Hangup: Send {
    /// Makes the connection's session loop end soon; a no-op once the connection is gone.
    fn hang_up(&self);
}

/// The listener must be non-blocking (see [`Worker::start_on`](crate::Worker::start_on)):
/// a blocking accept would keep the accept loop from noticing shutdown.
impl Listener for TcpListener {
    const TRANSPORT: &'static str = "TCP";
    type Accepted = TcpAccepted;

    fn local_addr(&self) -> io::Result<SocketAddr> {
        TcpListener::local_addr(self)
    }

    fn poll_accept(&self, timeout: Duration) -> io::Result<Option<TcpAccepted>> {
        match self.accept() {
            Ok((stream, peer)) => Ok(Some(TcpAccepted { stream, peer })),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(timeout);
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

/// An accepted TCP stream.
pub struct TcpAccepted {
    stream: TcpStream,
    peer: SocketAddr,
}

impl Accepted for TcpAccepted {
    type Sink = TcpSink;
    type Source = TcpSource;

    fn peer(&self) -> Option<SocketAddr> {
        Some(self.peer)
    }

    fn establish(self, config: &WorkerConfig) -> io::Result<Connection<TcpSink, TcpSource>> {
        // Accepted sockets inherit the listener's non-blocking mode.
        self.stream.set_nonblocking(false)?;
        let hangup = Box::new(self.stream.try_clone()?);
        let (sink, source) = transport_tcp::tcp::split(self.stream, &config.tcp)?;
        Ok(Connection { sink, source, hangup, peer: Some(self.peer) })
    }
}

impl Hangup for TcpStream {
    /// Reading stops at the next frame boundary; requests in flight complete first.
    fn hang_up(&self) {
        let _ = self.shutdown(Shutdown::Read);
    }
}
