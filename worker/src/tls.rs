//! TLS on the worker's TCP listener: [`TlsListener`] accepts TCP connections like the plain
//! listener and runs the TLS handshake on the connection's own thread; the whole handshake
//! lies within the pre-authentication deadline (one deadline from accept to authentication,
//! however the peer paces its bytes). A plain hip-remote client that reaches it is told, in a
//! clear error frame, to use TLS; a TLS client refused before its session (connection
//! limits, shutdown) is told why inside TLS, by one background thread with a short queue.
//! RDMA keeps its own path (no TLS there).

use crate::backend::Backend;
use crate::config::WorkerConfig;
use crate::listener::{Accepted, Connection, Hangup, Listener, TcpAccepted};
use crate::server::Server;
use proto_core::frame::{encode_frame, FrameMeta};
use proto_core::wire::ErrorReply;
use proto_core::Flags;
use proto_core::Status;
use std::io::{self, Read};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use transport_core::FrameSink;
use transport_tcp::tls::{TlsSink, TlsSource};
use transport_tcp::TcpConfig;

/// How long a refused TLS peer gets to finish its handshake before it is closed unanswered.
const REFUSAL_HANDSHAKE: Duration = Duration::from_secs(1);
/// How long a refused peer gets to read the error frame before the close.
const REFUSAL_LINGER: Duration = Duration::from_millis(200);
/// Refused TLS connections waiting to be answered; beyond this they are closed unanswered,
/// so a flood costs the worker one thread and this many sockets.
const MAX_QUEUED_TLS_REFUSALS: usize = 16;

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
    const TAKES_STRIPES: bool = true;
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

    /// Answers on the refusal thread: the TLS handshake (within [`REFUSAL_HANDSHAKE`]), the
    /// error frame inside it, then [`REFUSAL_LINGER`] for the peer to read it. Never blocks
    /// the accept loop; a full queue closes the connection unanswered.
    fn refuse(self, status: Status, message: &str) {
        static REFUSALS: OnceLock<Option<SyncSender<(TlsAccepted, Status, String)>>> = OnceLock::new();
        let queue = REFUSALS.get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<(TlsAccepted, Status, String)>(MAX_QUEUED_TLS_REFUSALS);
            let spawned = std::thread::Builder::new().name("hip-tls-refusals".into()).spawn(move || {
                for (accepted, status, message) in rx {
                    if let Err(e) = answer_refusal(accepted, status, &message) {
                        tracing::debug!(%e, "a refused TLS peer was closed without its error frame");
                    }
                }
            });
            spawned.ok().map(|_| tx)
        });
        if let Some(queue) = queue {
            let _ = queue.try_send((self, status, message.to_owned()));
        }
    }

    /// The handshake blocks in reads: shutting the socket's reading side ends them.
    fn hangup_while_establishing(&self) -> Option<Box<dyn Hangup>> {
        self.tcp.stream.try_clone().ok().map(|stream| Box::new(stream) as Box<dyn Hangup>)
    }

    /// The first bytes and the whole handshake within the pre-authentication deadline (the
    /// server's watchdog hangs up at that deadline too, see `hangup_while_establishing`).
    fn establish(self, config: &WorkerConfig) -> io::Result<Connection<TlsSink, TlsSource>> {
        let Self { tcp, tls } = self;
        let peer = tcp.peer;
        tcp.stream.set_nonblocking(false)?;
        let limit = config.limits.preauth_deadline;
        let deadline = Instant::now() + limit;
        if speaks_plain_protocol(&tcp, limit) {
            tracing::warn!(%peer, "connection refused: a plain (not TLS) hip-remote client");
            config.session.metrics.refused(crate::metrics::Refusal::Handshake);
            tcp.refuse(Status::AUTH_REQUIRED, TLS_ONLY);
            return Err(io::Error::new(io::ErrorKind::InvalidData, "a plain client on the TLS listener"));
        }
        let hangup = Box::new(tcp.stream.try_clone()?);
        let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
        match transport_tcp::tls::accept(tcp.stream, &config.tcp, &tls, left) {
            Ok((sink, source)) => Ok(Connection { sink, source, hangup, peer: Some(peer), descriptors: None }),
            Err(e) => {
                tracing::warn!(%peer, %e, "connection refused: TLS handshake failed");
                config.session.metrics.refused(crate::metrics::Refusal::Handshake);
                Err(e)
            }
        }
    }
}

/// Completes the TLS handshake of a refused peer and sends it `status` and `message`.
fn answer_refusal(accepted: TlsAccepted, status: Status, message: &str) -> io::Result<()> {
    let TlsAccepted { tcp, tls } = accepted;
    tcp.stream.set_nonblocking(false)?;
    let raw: TcpStream = tcp.stream.try_clone()?;
    let tcp_config = TcpConfig { io_timeout: Some(REFUSAL_HANDSHAKE), ..TcpConfig::default() };
    let (mut sink, _source) = transport_tcp::tls::accept(tcp.stream, &tcp_config, &tls, REFUSAL_HANDSHAKE)?;
    let reply = ErrorReply { status, message: message.into() };
    let meta = FrameMeta { opcode: 0, flags: Flags::RESPONSE | Flags::ERROR, request_id: 0, credits: 0, aux: 0 };
    let mut buf = [0u8; 1024];
    let frame = encode_frame(&mut buf, meta, &reply).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    sink.send(&buf[..frame.head_len], &[]).map_err(|e| io::Error::other(e.to_string()))?;
    // Read what the peer sent until it closes (or the linger ends), so the close is not a
    // reset that could discard the frame before the peer reads it.
    raw.shutdown(Shutdown::Write)?;
    let deadline = Instant::now() + REFUSAL_LINGER;
    let mut scratch = [0u8; 4096];
    while let Some(left) = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) {
        raw.set_read_timeout(Some(left))?;
        match (&raw).read(&mut scratch) {
            Ok(n) if n > 0 => continue,
            _ => break,
        }
    }
    Ok(())
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
