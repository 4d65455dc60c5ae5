//! Accepting connections and driving sessions.
//!
//! [`Server`] runs the accept loop over any [`Listener`] (TCP: [`Worker`]; RDMA:
//! `rdma::RdmaWorker`). One thread per connection runs its session through
//! [`driver::serve`].

use crate::backend::Backend;
use crate::config::{ConnectionLimits, WorkerConfig};
use crate::driver::{self, ReplyWriter};
use crate::listener::{Accepted, Connection, Hangup, Listener};
use crate::metrics::Refusal;
use crate::resume::{Refused, ResumeAsk};
use crate::sandbox::handover::{self, Handed, Terms};
use crate::sandbox::SessionProcess;
use crate::session::Session;
use crate::stripes::StripeHub;
use proto_core::wire::Resumed;
use proto_core::{Opcode, Status};
use std::collections::HashMap;
use std::marker::PhantomData;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;
use transport_core::mem::{MemSink, MemSource};
use transport_core::{FrameSink, FrameSource, TransportError};

/// How often the accept loop checks for shutdown on transports that poll (RDMA); TCP blocks
/// in the kernel and is woken by [`Listener::waker`].
const ACCEPT_POLL: Duration = Duration::from_millis(50);
pub use crate::config::MAX_CONNECTIONS;

/// The TCP worker.
pub type Worker = Server<TcpListener>;

impl Worker {
    /// Binds `addr` and starts serving in background threads.
    pub fn start(addr: &str, backend: Arc<dyn Backend>, config: WorkerConfig) -> std::io::Result<Self> {
        let listener = transport_tcp::listen(addr)?;
        Self::start_on(listener, backend, config)
    }

    /// Serves on an already bound listener.
    pub fn start_on(listener: TcpListener, backend: Arc<dyn Backend>, config: WorkerConfig) -> std::io::Result<Self> {
        listener.set_nonblocking(false)?;
        Self::spawn(listener, backend, config)
    }
}

/// A running worker on one listener: its accept thread and one thread per connection.
pub struct Server<L: Listener> {
    local_addr: SocketAddr,
    connections: Arc<Connections>,
    accept_thread: Option<JoinHandle<()>>,
    /// Wakes the accept thread from a blocking accept.
    wake: Option<Box<dyn Fn() + Send>>,
    _listener: PhantomData<fn() -> L>,
}

impl<L: Listener> Server<L> {
    /// Starts the accept thread on `listener`, which honours the poll timeout or has a waker.
    pub(crate) fn spawn(listener: L, backend: Arc<dyn Backend>, config: WorkerConfig) -> std::io::Result<Self> {
        let local_addr = listener.local_addr()?;
        let wake = listener.waker()?;
        let connections = Arc::new(Connections::default());
        // Stripes are extra TCP connections to this listener; RDMA takes none, and neither do
        // sessions whose connections session processes cannot take (TLS: relayed). Stripes of
        // a session served in a session process are handed to it.
        let stripes = (L::TAKES_STRIPES && (config.session_process.is_none() || L::HANDS_OVER)).then(|| StripeHub::new(config.stripes));
        let accept_thread = {
            let connections = connections.clone();
            let config = Arc::new(config);
            std::thread::Builder::new()
                .name(format!("hip-{}-accept", L::TRANSPORT.to_ascii_lowercase()))
                .spawn(move || accept_loop(listener, backend, config, connections, stripes))?
        };
        tracing::info!(%local_addr, transport = L::TRANSPORT, "hip-worker listening");
        Ok(Self { local_addr, connections, accept_thread: Some(accept_thread), wake, _listener: PhantomData })
    }

    /// The bound address (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops accepting, lets every session finish the request it is executing, closes the
    /// connections (freeing each session's resources) and waits for all threads.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.connections.stopping.store(true, Ordering::SeqCst);
        if let (Some(wake), Some(_)) = (&self.wake, &self.accept_thread) {
            wake();
        }
        if let Some(t) = self.accept_thread.take() {
            let _ = t.join();
        }
        for hangup in self.connections.live().values().flatten() {
            hangup.hang_up();
        }
        let threads = std::mem::take(&mut *self.connections.threads.lock().unwrap_or_else(|p| p.into_inner()));
        for t in threads {
            let _ = t.join();
        }
    }
}

impl<L: Listener> Drop for Server<L> {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Connection bookkeeping shared by the accept loop, the connection threads and `stop`.
#[derive(Default)]
struct Connections {
    stopping: AtomicBool,
    /// Every connection with a thread; `None` until it is established.
    live: Mutex<HashMap<u64, Option<Box<dyn Hangup>>>>,
    /// Live connections per peer address.
    per_address: Mutex<HashMap<IpAddr, usize>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Connections {
    fn live(&self) -> MutexGuard<'_, HashMap<u64, Option<Box<dyn Hangup>>>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a slot for a new connection from `peer`, unless the worker or that address has
    /// its most connections already; `Err` says which.
    fn reserve(self: &Arc<Self>, conn_id: u64, peer: Option<IpAddr>, limits: &ConnectionLimits) -> Result<Slot, String> {
        let mut live = self.live();
        if live.len() >= limits.max_connections {
            return Err(format!("the worker serves its most connections ({}) already", limits.max_connections));
        }
        if let Some(ip) = peer {
            let mut per_address = self.per_address.lock().unwrap_or_else(|p| p.into_inner());
            let count = per_address.entry(ip).or_insert(0);
            if *count >= limits.max_per_address {
                return Err(format!("{ip} has its most connections ({}) already", limits.max_per_address));
            }
            *count += 1;
        }
        live.insert(conn_id, None);
        Ok(Slot { connections: self.clone(), conn_id, peer })
    }

    /// Ends connection `conn_id` if it is still live and established.
    fn hang_up(&self, conn_id: u64) {
        if let Some(Some(hangup)) = self.live().get(&conn_id) {
            hangup.hang_up();
        }
    }

    fn add_thread(&self, handle: JoinHandle<()>) {
        let mut threads = self.threads.lock().unwrap_or_else(|p| p.into_inner());
        threads.retain(|t| !t.is_finished());
        threads.push(handle);
    }
}

/// A connection's place in [`Connections`], given back when dropped.
struct Slot {
    connections: Arc<Connections>,
    conn_id: u64,
    peer: Option<IpAddr>,
}

impl Slot {
    /// Makes the connection reachable by `stop`. False when the worker is already stopping
    /// (`stop` may have hung up the others already, so this one must not start).
    fn register(&self, hangup: Box<dyn Hangup>) -> bool {
        let mut live = self.connections.live();
        if self.connections.stopping.load(Ordering::SeqCst) {
            return false;
        }
        live.insert(self.conn_id, Some(hangup));
        true
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.connections.live().remove(&self.conn_id);
        if let Some(ip) = self.peer {
            let mut per_address = self.connections.per_address.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(count) = per_address.get_mut(&ip) {
                *count -= 1;
                if *count == 0 {
                    per_address.remove(&ip);
                }
            }
        }
    }
}

fn accept_loop<L: Listener>(
    listener: L,
    backend: Arc<dyn Backend>,
    config: Arc<WorkerConfig>,
    connections: Arc<Connections>,
    stripes: Option<Arc<StripeHub>>,
) {
    static NEXT_CONN: AtomicU64 = AtomicU64::new(1);
    let transport = L::TRANSPORT;
    while !connections.stopping.load(Ordering::SeqCst) {
        let accepted = match listener.poll_accept(ACCEPT_POLL) {
            Ok(Some(accepted)) => accepted,
            Ok(None) => continue,
            Err(e) => {
                tracing::warn!(transport, %e, "accept failed");
                // A lasting error (out of descriptors) must not spin.
                std::thread::sleep(ACCEPT_POLL);
                continue;
            }
        };
        if connections.stopping.load(Ordering::SeqCst) {
            accepted.refuse(Status::SHUTTING_DOWN, "the worker is shutting down");
            break;
        }
        let conn_id = NEXT_CONN.fetch_add(1, Ordering::Relaxed);
        let peer = accepted.peer();
        let slot = match connections.reserve(conn_id, peer.map(|p| p.ip()), &config.limits) {
            Ok(slot) => slot,
            Err(why) => {
                config.session.metrics.refused(Refusal::ConnectionLimit);
                tracing::warn!(transport, ?peer, "connection refused: {why}");
                accepted.refuse(Status::TOO_MANY_CONNECTIONS, &format!("connection refused: {why}"));
                continue;
            }
        };
        let (backend, config, stripes) = (backend.clone(), config.clone(), stripes.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("hip-{}-session-{conn_id}", transport.to_ascii_lowercase()))
            .spawn(move || serve_accepted::<L>(accepted, slot, backend, &config, stripes));
        match spawned {
            Ok(handle) => connections.add_thread(handle),
            Err(e) => tracing::error!(transport, %e, "could not spawn a session thread"),
        }
    }
}

/// A connection thread: establishes the connection, serves its session, frees its slot.
fn serve_accepted<L: Listener>(accepted: L::Accepted, slot: Slot, backend: Arc<dyn Backend>, config: &WorkerConfig, stripes: Option<Arc<StripeHub>>) {
    let (transport, conn_id) = (L::TRANSPORT, slot.conn_id);
    // The pre-authentication deadline runs from here: establishing the connection (a TLS
    // handshake) counts against it as well as authenticating, so a peer that dribbles its
    // handshake cannot hold the connection's slot past it.
    if let Some(hangup) = accepted.hangup_while_establishing() {
        if !slot.register(hangup) {
            return;
        }
    }
    let trust = Arc::new(OnceLock::new());
    let deadline = PreauthDeadline::start(&slot, Arc::clone(&trust), config.limits.preauth_deadline);
    let Connection { sink, source, hangup, peer, descriptors } = match accepted.establish(config) {
        Ok(connection) => connection,
        Err(e) => {
            tracing::info!(transport, conn_id, %e, "connection not established");
            return;
        }
    };
    if !slot.register(hangup) {
        return;
    }
    if deadline.as_ref().is_some_and(PreauthDeadline::passed) {
        tracing::warn!(transport, conn_id, ?peer, "connection closed: not established within the pre-authentication deadline");
        return;
    }
    // Every log line of the session names its peer (refused logins above all).
    let span = tracing::info_span!("session", conn_id, peer = %peer.map_or_else(|| "unknown".to_string(), |p| p.to_string()));
    let _in_span = span.enter();
    tracing::debug!(transport, "connection accepted");
    let mut session = Session::new(backend, Arc::new(config.session.clone()));
    session.set_peer(peer);
    if let Some(hub) = stripes {
        session.set_stripe_hub(hub);
        if config.session_process.is_some() {
            session.set_stripes_join_elsewhere();
        }
    }
    if config.session_process.is_some() {
        session.set_fetches_elsewhere();
    }
    // Same-host connections only; a session process is handed the channel with the rest.
    if let Some(sender) = descriptors {
        session.set_descriptor_sender(sender);
    }
    let _ = trust.set(session.trust_flag());
    let hang_up = || slot.connections.hang_up(conn_id);
    let stopping = || slot.connections.stopping.load(Ordering::SeqCst);
    let isolated = config.session_process.as_deref().map(|process| Isolated {
        process,
        hang_up: &hang_up,
        stopping: &stopping,
        hand_over: if relay_every_session() { relay_instead } else { <L::Accepted as Accepted>::hand_over },
        peer,
        max_stripes: u32::try_from(config.stripes.max_stripes).unwrap_or(u32::MAX),
    });
    let (session, result) = run_session_in(sink, source, session, isolated, Some(&stopping));
    let parked = |id| config.session.resume.as_ref().is_some_and(|hub| hub.is_parked(id));
    match result {
        Ok(()) if session == STRIPE_HANDED => {
            tracing::info!("{transport} connection handed to its session's process (a stripe, or another worker's fetch)")
        }
        Ok(()) if parked(session) => tracing::info!(session, "{transport} connection ended; session kept for its client to resume"),
        Err(e) if parked(session) => tracing::info!(session, %e, "{transport} connection ended; session kept for its client to resume"),
        Ok(()) => tracing::info!(session, "{transport} connection ended; session freed"),
        Err(e) => tracing::info!(session, %e, "{transport} connection ended; session freed"),
    }
}

/// Closes a connection that has not authenticated within its deadline, counted from before
/// the connection is established: a watchdog thread that ends when the deadline passes or
/// the connection ends (this is dropped), whichever comes first. `trusted` holds the
/// session's trust flag once there is a session.
struct PreauthDeadline {
    _connection_alive: std::sync::mpsc::Sender<()>,
    passed: Arc<AtomicBool>,
}

impl PreauthDeadline {
    fn start(slot: &Slot, trusted: Arc<OnceLock<Arc<AtomicBool>>>, deadline: Duration) -> Option<Self> {
        let (alive, ended) = std::sync::mpsc::channel::<()>();
        let (connections, conn_id) = (slot.connections.clone(), slot.conn_id);
        let passed = Arc::new(AtomicBool::new(false));
        let mark = Arc::clone(&passed);
        let spawned = std::thread::Builder::new().name(format!("hip-preauth-{conn_id}")).spawn(move || {
            let is_trusted = || trusted.get().is_some_and(|flag| flag.load(Ordering::Acquire));
            if ended.recv_timeout(deadline) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) && !is_trusted() {
                mark.store(true, Ordering::Release);
                tracing::warn!(conn_id, ?deadline, "connection closed: not authenticated within the deadline");
                connections.hang_up(conn_id);
            }
        });
        match spawned {
            Ok(_) => Some(Self { _connection_alive: alive, passed }),
            Err(e) => {
                tracing::error!(%e, "cannot start the pre-authentication deadline; closing the connection");
                slot.connections.hang_up(conn_id);
                None
            }
        }
    }

    /// Whether the deadline passed before the session was trusted (the connection was hung
    /// up, or had no hang-up registered yet to end it with).
    fn passed(&self) -> bool {
        self.passed.load(Ordering::Acquire)
    }
}

/// Runs `session` over `sink` and `source` and frees it; returns its id and how it ended.
pub(crate) fn run_session<Source: FrameSource + 'static>(
    sink: impl FrameSink + 'static,
    source: Source,
    session: Session,
) -> (u64, Result<(), TransportError>) {
    run_session_in(sink, source, session, None, None)
}

/// The environment variable that makes the worker relay every session process's connection,
/// as it must for TLS and RDMA: for measuring the relay against the handover only
/// (`scripts/session-process-bench.sh`).
pub const RELAY_EVERY_SESSION_ENV: &str = "HIP_WORKER_RELAY_SESSIONS";

fn relay_every_session() -> bool {
    static RELAY: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *RELAY.get_or_init(|| std::env::var_os(RELAY_EVERY_SESSION_ENV).is_some_and(|v| v == "1"))
}

/// A hand-over that keeps the connection in the worker (relayed).
fn relay_instead<Source>(source: Source, _peer: Option<SocketAddr>, _terms: Terms) -> Result<Handed, Source> {
    Err(source)
}

/// What [`run_session_in`] returns as the session id of a stripe connection it handed to its
/// session's process (no session of the worker's has this id: ids count from 1).
const STRIPE_HANDED: u64 = 0;

/// How a connection's session goes on in a session process ([`crate::sandbox`]).
struct Isolated<'a, Source> {
    process: &'a SessionProcess,
    /// Disconnects the client (a relayed connection's reading half returns).
    hang_up: &'a (dyn Fn() + Sync),
    /// Whether the worker is shutting down.
    stopping: &'a (dyn Fn() -> bool + Sync),
    /// Takes the connection apart for the process ([`Accepted::hand_over`]).
    hand_over: fn(Source, Option<SocketAddr>, Terms) -> Result<Handed, Source>,
    peer: Option<SocketAddr>,
    max_stripes: u32,
}

/// [`run_session`], or with `isolated` the handshake only, the rest of the session in a
/// session process: handed the connection where the transport allows, else relayed.
fn run_session_in<Source: FrameSource + 'static>(
    sink: impl FrameSink + 'static,
    mut source: Source,
    mut session: Session,
    isolated: Option<Isolated<'_, Source>>,
    stopping: Option<&(dyn Fn() -> bool + Sync)>,
) -> (u64, Result<(), TransportError>) {
    let registry = sink.memory_registry();
    session.set_memory_registry(registry.clone());
    let mut late = session.late_replies();
    let mut replies = ReplyWriter::start(Box::new(sink), Arc::clone(&late), session.replay_record(), session.metrics());
    let mut resume_refused = false;
    let result = match isolated {
        None => {
            let mut result = driver::serve(&mut session, &mut source, &replies);
            // The handshake's own session of a refused `Resume` is not kept.
            // A `Resume`: this connection goes on with the session it names.
            while let Some(ask) = session.take_resume_ask() {
                let Some(hub) = session.config().resume.clone() else { break };
                match hub.take(&ask, session.tenant_name()) {
                    Ok((mut resumed, resumed_late)) => {
                        let sink = replies.retire();
                        hub.detach(session.id());
                        tracing::info!(session = resumed.id(), handshake = session.id(), "session resumed on a new connection");
                        // The handshake's own session goes; the resumed one takes its place.
                        drop(std::mem::replace(&mut session, {
                            resumed.set_memory_registry(registry.clone());
                            resumed
                        }));
                        late.close();
                        late = resumed_late;
                        match resume_on(sink, &session, &ask) {
                            Ok(sink) => {
                                hub.attach(session.id());
                                replies = ReplyWriter::start(sink, Arc::clone(&late), session.replay_record(), session.metrics());
                                result = driver::serve(&mut session, &mut source, &replies);
                            }
                            Err(e) => {
                                // Broke again before the session was back: it stays parked.
                                result = Err(e);
                                replies =
                                    ReplyWriter::start(Box::new(driver::RetiredSink), Arc::clone(&late), session.replay_record(), session.metrics());
                            }
                        }
                    }
                    Err(refused) => {
                        let message = match refused {
                            Refused::NotFound => {
                                "no session to resume: it ended (the worker's resume grace period passed), or the secret or tenant does not match"
                            }
                            Refused::StillAttached => "the session still has its old connection: try again shortly",
                        };
                        tracing::info!(session = ask.session_id, reason = message, "resume refused");
                        let status = if refused == Refused::StillAttached { Status::ILLEGAL_STATE } else { Status::SESSION_NOT_FOUND };
                        let _ = replies.send_error(ask.request_id, Opcode::Resume.raw(), status, message);
                        resume_refused = true;
                        break;
                    }
                }
            }
            result
        }
        Some(isolated) => match driver::serve_handshake(&mut session, &mut source, &replies) {
            // A callback channel runs no client code: served here, where its tickets are.
            Ok(Some(open)) if session.is_callback_connection() => driver::serve_trusted(&mut session, &mut source, &replies, open),
            Ok(Some(open)) => {
                let terms = Terms { features: session.handed_features(), max_stripes: isolated.max_stripes };
                let shared = isolated.process.shared.is_some();
                match (isolated.hand_over)(source, isolated.peer, terms) {
                    Ok(handed) if shared => crate::sandbox::shared::serve(&session, handed, &replies, isolated.process, open, isolated.stopping),
                    Ok(handed) => handover::serve(&session, handed, &replies, isolated.process, open, isolated.stopping),
                    Err(mut source) if shared => {
                        crate::sandbox::shared::relay(&session, &mut source, &replies, isolated.process, open, isolated.hang_up)
                    }
                    Err(mut source) => crate::sandbox::relay::relay(&session, &mut source, &replies, isolated.process, open, isolated.hang_up),
                }
            }
            Ok(None) => match session.take_handoff() {
                Some((kind, session_id, frame)) => {
                    let handed = hand_over_to_session(kind, session_id, frame, source, &replies, &session.metrics(), &isolated);
                    if handed.as_ref().is_ok_and(|&handed| handed) {
                        drop(session);
                        late.close();
                        return (STRIPE_HANDED, Ok(()));
                    }
                    handed.map(drop)
                }
                None => Ok(()),
            },
            Err(e) => Err(e),
        },
    };
    let id = session.id();
    if let Some(hub) = session.config().resume.clone().filter(|_| session.resumable()) {
        let broke = session.trusted() && !session.said_goodbye() && !resume_refused && session.take_resume_ask().is_none();
        if broke && stopping.is_some_and(|stopping| !stopping()) {
            // The session waits for its client to come back (`crate::resume`); this
            // connection's writer takes none of its late replies from now on.
            drop(replies.retire());
            hub.park(session, late);
            return (id, result);
        }
        hub.detach(id);
    }
    // Free the session's resources (draining its streams, whose callbacks may still queue
    // replies) before the writer is told to finish.
    drop(session);
    late.close();
    (id, result)
}

/// Sends a resumed session's answer to `Resume` and the replies it recorded after the
/// client's `received_through`, in the order they were first sent; the sink, to serve the
/// session on.
fn resume_on(mut sink: Box<dyn FrameSink>, session: &Session, ask: &ResumeAsk) -> Result<Box<dyn FrameSink>, TransportError> {
    let record = session.replay_record();
    let (resumed, frames) = {
        let mut record = record.lock().unwrap_or_else(|p| p.into_inner());
        let frames = record.replies_after(ask.received_through);
        (Resumed { executed_through: record.executed_through(), evicted_through: record.evicted_through() }, frames)
    };
    let executed_through = resumed.executed_through;
    let head = driver::encode_head(ask.request_id, &proto_core::Response::Resume(resumed))
        .map_err(|e| TransportError::Io(std::io::Error::other(format!("Resumed not encodable: {e}"))))?;
    sink.send(&head, &[])?;
    for (frame, head_len) in &frames {
        sink.send(&frame[..*head_len], &frame[*head_len..])?;
    }
    tracing::info!(session = session.id(), replayed = frames.len(), executed_through, "session resumed");
    Ok(sink)
}

/// Hands a connection whose first request (`frame`) names session `session_id` to the
/// process serving that session: a stripe (`StripeJoin`), which the process checks as the
/// worker would, or another worker's fetch of a grant (`TransferFetch`), whose grant the
/// process checks. Refuses it here when no such session is served by a process, or a stripe
/// from another address. `Ok(true)`: handed.
fn hand_over_to_session<Source>(
    kind: crate::session::Handoff,
    session_id: u64,
    frame: Vec<u8>,
    source: Source,
    replies: &ReplyWriter,
    metrics: &crate::metrics::Metrics,
    isolated: &Isolated<'_, Source>,
) -> Result<bool, TransportError> {
    use crate::session::Handoff;
    let request_id = proto_core::FrameHeader::parse(&frame[..proto_core::header::HEADER_LEN.min(frame.len())]).map_or(0, |h| h.request_id);
    let (opcode, what) = match kind {
        Handoff::Stripe => (proto_core::Opcode::StripeJoin, "stripe join refused"),
        Handoff::Fetch => (proto_core::Opcode::TransferFetch, "transfer fetch refused"),
    };
    let refused = match (isolated.hand_over)(source, isolated.peer, Terms::default()) {
        Ok(Handed::Tcp { socket, unread, peer, .. }) => {
            let mut bytes = frame;
            bytes.extend_from_slice(&unread);
            let handed = match kind {
                Handoff::Stripe => isolated.process.handed.hand_stripe(session_id, socket, bytes, peer),
                Handoff::Fetch => isolated.process.handed.hand_fetch(session_id, socket, bytes, peer),
            };
            match handed {
                Ok(()) => return Ok(true),
                Err(why) => why,
            }
        }
        // A connection the worker keeps (TLS, RDMA, a relayed one): the process answers over a
        // socket pair, and the worker relays that answer. The connection stays open until then.
        kept if matches!(kind, Handoff::Fetch) => {
            let _kept = kept;
            match isolated.process.handed.relay_fetch(session_id, frame, isolated.peer, replies) {
                Ok(()) => return Ok(true),
                Err(why) => why,
            }
        }
        _ => "stripe join refused: this connection cannot join a session served by a session process",
    };
    metrics.refused(crate::metrics::Refusal::Authentication);
    tracing::warn!(reason = refused, "{what}");
    replies.send_error(request_id, opcode.raw(), Status::AUTH_FAILED, refused).map(|()| false)
}

/// Serves one session over an in-memory connection, in a thread of its own: the same driver
/// and session as over TCP, without a socket (tests run client and worker as an in-memory
/// pair). Returns the client's ends; the thread ends, freeing the session, once the client
/// drops them or says GOODBYE.
pub fn serve_in_memory(backend: Arc<dyn Backend>, config: WorkerConfig) -> std::io::Result<(MemSink, MemSource, JoinHandle<()>)> {
    let ((client_sink, client_source), (sink, source)) = transport_core::mem::duplex();
    let thread = std::thread::Builder::new().name("hip-mem-session".into()).spawn(move || {
        let (session, result) = run_session(sink, source, Session::new(backend, Arc::new(config.session.clone())));
        match result {
            Ok(()) => tracing::info!(session, "in-memory connection ended; session freed"),
            Err(e) => tracing::info!(session, %e, "in-memory connection ended; session freed"),
        }
    })?;
    Ok((client_sink, client_source, thread))
}
