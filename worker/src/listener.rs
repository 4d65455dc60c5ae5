//! What the accept loop in [`server`](crate::server) needs from a transport: a listener
//! polled with a timeout (so the loop can notice shutdown), and accepted connections that
//! become a sink/source pair plus a handle to end them from another thread. TCP is
//! implemented here; RDMA in [`rdma`](crate::rdma).

use crate::config::WorkerConfig;
use crate::sandbox::handover::{Handed, Terms};
use proto_core::frame::{encode_frame, FrameMeta};
use proto_core::wire::ErrorReply;
use proto_core::{Flags, Status};
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc::SyncSender;
use std::sync::OnceLock;
use std::time::Duration;
use transport_core::{FrameSink, FrameSource};
use transport_tcp::tcp::{TcpSink, TcpSource};

/// A bound listener the worker accepts connections on.
pub trait Listener: Send + 'static {
    /// The transport's name in logs ("TCP", "RDMA"); lowercased in thread names.
    const TRANSPORT: &'static str;
    /// Whether a session may open stripe connections to this listener (striped TCP bulk:
    /// byte-stream transports; RDMA moves large copies its own way).
    const TAKES_STRIPES: bool = false;
    /// Whether its connections can be handed to session processes
    /// ([`Accepted::hand_over`]); those of other transports are relayed.
    const HANDS_OVER: bool = false;
    /// A connection taken off the listener, not yet ready for frames.
    type Accepted: Accepted;

    /// The bound address (with the port chosen for port 0).
    fn local_addr(&self) -> io::Result<SocketAddr>;

    /// Waits for a connection: up to `timeout` where the transport polls (RDMA), in the
    /// kernel until one comes or [`wake`](Self::wake) is called where it can block (TCP).
    /// `Ok(None)` when none came.
    fn poll_accept(&self, timeout: Duration) -> io::Result<Option<Self::Accepted>>;

    /// Something that makes a blocked [`poll_accept`](Self::poll_accept) return (worker
    /// shutdown). Default: none needed, the transport polls.
    fn waker(&self) -> io::Result<Option<Box<dyn Fn() + Send>>> {
        Ok(None)
    }
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

    /// Ends the connection from another thread while [`establish`](Self::establish) runs (the
    /// pre-authentication deadline covers a TLS handshake). Default: `None`, for transports
    /// whose establishing is quick or bounded on its own.
    fn hangup_while_establishing(&self) -> Option<Box<dyn Hangup>> {
        None
    }

    /// Takes an established connection apart, between frames, for a session process to
    /// serve it itself ([`crate::sandbox::handover`]); `Err` gives the source back, and the
    /// worker relays the connection instead. Default: relayed (TLS state and RDMA queue
    /// pairs cannot move between processes).
    fn hand_over(source: Self::Source, peer: Option<SocketAddr>, terms: Terms) -> Result<Handed, Self::Source>
    where
        Self: Sized,
    {
        let _ = (peer, terms);
        Err(source)
    }

    /// Closes a connection the worker will not serve, telling the peer why with an error
    /// frame where the transport can send one before the connection is established.
    /// Default: just closed.
    fn refuse(self, status: Status, message: &str)
    where
        Self: Sized,
    {
        let _ = (status, message);
    }
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
    /// Where the transport can pass descriptors to the client (same-host connections: shared
    /// host memory); `None` elsewhere.
    pub descriptors: Option<std::sync::Arc<dyn crate::session::shared_host::DescriptorSender>>,
}

/// Ends a live connection from another thread.
pub trait Hangup: Send {
    /// Makes the connection's session loop end soon; a no-op once the connection is gone.
    fn hang_up(&self);
}

/// The listener is blocking (see [`Worker::start_on`](crate::Worker::start_on)): the accept
/// loop sleeps in `accept` until a connection comes, and shutdown wakes it by connecting.
impl Listener for TcpListener {
    const TRANSPORT: &'static str = "TCP";
    const TAKES_STRIPES: bool = true;
    const HANDS_OVER: bool = true;
    type Accepted = TcpAccepted;

    fn local_addr(&self) -> io::Result<SocketAddr> {
        TcpListener::local_addr(self)
    }

    fn poll_accept(&self, _timeout: Duration) -> io::Result<Option<TcpAccepted>> {
        match self.accept() {
            Ok((stream, peer)) => Ok(Some(TcpAccepted { stream, peer })),
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn waker(&self) -> io::Result<Option<Box<dyn Fn() + Send>>> {
        let mut addr = TcpListener::local_addr(self)?;
        // A listener on every address is reached through loopback.
        if addr.ip().is_unspecified() {
            addr.set_ip(if addr.is_ipv4() { Ipv4Addr::LOCALHOST.into() } else { Ipv6Addr::LOCALHOST.into() });
        }
        Ok(Some(Box::new(move || {
            if let Err(e) = TcpStream::connect_timeout(&addr, WAKE_CONNECT_TIMEOUT) {
                tracing::warn!(%addr, %e, "cannot wake the accept loop; it stops at the next connection");
            }
        })))
    }
}

/// How long shutdown waits for its own connection to the listener that wakes the accept loop.
const WAKE_CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// How long a refused TCP connection is given to read its error frame before it is closed.
const REFUSAL_LINGER: Duration = Duration::from_millis(200);

/// Most refused TCP connections waiting for their error frame to be read; more are closed at
/// once (a flood must not grow a queue).
const MAX_LINGERING_REFUSALS: usize = 64;

/// An accepted TCP stream.
pub struct TcpAccepted {
    pub(crate) stream: TcpStream,
    pub(crate) peer: SocketAddr,
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
        Ok(Connection { sink, source, hangup, peer: Some(self.peer), descriptors: None })
    }

    /// The socket and what was read past the handshake; the worker's sink and hangup keep
    /// duplicates of the socket.
    fn hand_over(source: TcpSource, peer: Option<SocketAddr>, terms: Terms) -> Result<Handed, TcpSource> {
        let (stream, unread) = source.into_parts()?;
        Ok(Handed::Tcp { socket: stream.into(), unread, peer, terms })
    }

    /// Sends the error frame, then gives the peer [`REFUSAL_LINGER`] to read it before the
    /// close (closing with the peer's HELLO unread would reset the connection, and a reset
    /// can discard the error frame before the peer reads it). The lingering happens on one
    /// background thread, so the accept loop never waits for a refused peer.
    fn refuse(self, status: Status, message: &str) {
        static LINGER: OnceLock<Option<SyncSender<TcpStream>>> = OnceLock::new();
        let reply = ErrorReply { status, message: message.into() };
        let meta = FrameMeta { opcode: 0, flags: Flags::RESPONSE | Flags::ERROR, request_id: 0, credits: 0, aux: 0 };
        let mut buf = [0u8; 512];
        let Ok(frame) = encode_frame(&mut buf, meta, &reply) else { return };
        // A fresh socket's send buffer takes a small frame whole: this does not block.
        let _ = self.stream.set_nonblocking(true);
        if (&self.stream).write_all(&buf[..frame.head_len]).is_err() {
            return;
        }
        let _ = self.stream.shutdown(Shutdown::Write);
        let linger = LINGER.get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<TcpStream>(MAX_LINGERING_REFUSALS);
            let spawned = std::thread::Builder::new().name("hip-tcp-refusals".into()).spawn(move || {
                for stream in rx {
                    let deadline = std::time::Instant::now() + REFUSAL_LINGER;
                    let _ = stream.set_nonblocking(false);
                    let mut scratch = [0u8; 4096];
                    while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()).filter(|d| !d.is_zero()) {
                        let _ = stream.set_read_timeout(Some(left));
                        match (&stream).read(&mut scratch) {
                            Ok(n) if n > 0 => continue,
                            _ => break,
                        }
                    }
                }
            });
            spawned.ok().map(|_| tx)
        });
        if let Some(tx) = linger {
            let _ = tx.try_send(self.stream);
        }
    }
}

impl Hangup for TcpStream {
    /// Reading stops at the next frame boundary; requests in flight complete first.
    fn hang_up(&self) {
        let _ = self.shutdown(Shutdown::Read);
    }
}
