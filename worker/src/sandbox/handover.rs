//! Connections handed to session processes: after the handshake the worker passes the
//! connection's descriptors (`SCM_RIGHTS`) and the bytes it read past the handshake to the
//! session process, which serves the connection itself with the normal driver
//! (`docs/ISOLATION.md`, section "Connections handed to session processes").
//!
//! The session process's stdin is its *control channel*: a Unix socket on which the worker
//! sends [`Handed`] messages — first how the session's connection comes (handed over, or
//! relayed by the worker over a socket pair of its own: TLS and RDMA, whose state cannot move
//! between processes), then any stripe connections that join the session later and other
//! workers' fetches of its grants. A message is a fixed header
//! ([`HEADER_BYTES`]) sent with its descriptors, then its unread bytes.
//!
//! The worker keeps what it needs to stay responsible for the connection without reading it:
//! for TCP a duplicate of the socket (the reply writer it did the handshake with), so it can
//! end the connection when it shuts down and send the death notice — an error frame with
//! request id 0 naming the cause — once the process has died; for the same-host transport its
//! copies of the doorbell sockets, closed once the process is gone, so the client sees the
//! dead peer at once.

use super::relay::{self, SessionChild, EXIT_GRACE};
use super::SessionProcess;
use crate::driver::ReplyWriter;
use crate::metrics::OpenSession;
use crate::session::Session;
use proto_core::Status;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv6Addr, Shutdown, SocketAddr, TcpStream};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use transport_core::TransportError;

/// Bytes of a control message's fixed header.
pub const HEADER_BYTES: usize = 64;
/// Most bytes read past the handshake (or past a stripe's join) that travel with a handed
/// connection: the TCP source's read-ahead buffer, and a stripe's join frame.
pub const MAX_UNREAD_BYTES: usize = 4 << 20;
/// How long a TCP client is given to read the death notice before its connection closes
/// (closing with its requests unread would reset the connection and could discard it).
pub(super) const NOTICE_LINGER: Duration = Duration::from_millis(200);
/// Longest wait for a session process to take a stripe from its control channel (one that
/// does not read it must not hold the worker's connection threads).
pub(super) const CONTROL_WRITE_TIMEOUT: Duration = Duration::from_secs(2);
/// How often the worker looks whether a session process has ended.
pub(super) const REAP_POLL: Duration = Duration::from_millis(5);

const KIND_RELAY: u32 = 1;
const KIND_TCP: u32 = 2;
#[cfg(target_os = "linux")]
const KIND_SHM: u32 = 3;
const KIND_STRIPE: u32 = 4;
const KIND_SESSION: u32 = 5;
const KIND_RELAY_SOCKET: u32 = 6;
const KIND_FETCH: u32 = 7;

/// What the handshake settled that the session process needs to serve the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Terms {
    /// The features of WELCOME the session process honours itself (shared host memory,
    /// striped bulk: [`Session::handed_features`]).
    pub features: u64,
    /// Stripes a session may be granted at most (`--max-stripes`).
    pub max_stripes: u32,
}

/// A connection, as the worker hands it to a session process.
#[derive(Debug)]
pub enum Handed {
    /// The session's connection stays with the worker, which relays its frames over the
    /// control channel itself. (The worker relays over [`Handed::RelaySocket`] instead, so
    /// the control channel stays free for fetches; a process still takes this.)
    Relay,
    /// A TCP connection: its socket (configured) and the bytes read past the handshake.
    Tcp { socket: OwnedFd, unread: Vec<u8>, peer: Option<SocketAddr>, terms: Terms },
    /// A same-host connection: its rings, doorbells and descriptor channel.
    #[cfg(target_os = "linux")]
    Shm { parts: transport_shm::ShmParts, terms: Terms },
    /// A stripe connection of the session (TCP), whose unread bytes begin with its
    /// `StripeJoin` frame: the session process checks the join as the worker would.
    /// `session`: the session it joins (a shared session process serves several).
    Stripe { session: u64, socket: OwnedFd, unread: Vec<u8>, peer: Option<SocketAddr> },
    /// A connection another worker opened to fetch a grant of session `session` (a copy
    /// between workers, [`crate::transfer`]), whose unread bytes begin with its
    /// `TransferFetch` frame: the session process checks the grant itself.
    Fetch { session: u64, socket: OwnedFd, unread: Vec<u8>, peer: Option<SocketAddr> },
    /// To a shared session process ([`super::shared`]): the identity of the next session
    /// (its [`super::shared::SessionArgs`] as text), with the session's callback bridge; its
    /// connection follows in the next message.
    Session { args: Vec<u8>, bridge: OwnedFd },
    /// A session relayed by the worker (TLS, RDMA) over a socket of its own, so the control
    /// channel stays free for what else comes (a shared process's other sessions, fetches).
    RelaySocket { socket: OwnedFd },
}

impl Handed {
    /// Sends this message over the control channel.
    pub fn send(&self, channel: &UnixStream) -> io::Result<()> {
        let mut header = [0u8; HEADER_BYTES];
        let mut put_terms = |terms: &Terms| {
            header[44..48].copy_from_slice(&terms.max_stripes.to_le_bytes());
            header[48..56].copy_from_slice(&terms.features.to_le_bytes());
        };
        let (kind, unread, peer, fds): (u32, &[u8], Option<SocketAddr>, Vec<std::os::fd::BorrowedFd<'_>>) = match self {
            Handed::Relay => (KIND_RELAY, &[], None, Vec::new()),
            Handed::Tcp { socket, unread, peer, terms } => {
                put_terms(terms);
                (KIND_TCP, unread, *peer, vec![socket.as_fd()])
            }
            #[cfg(target_os = "linux")]
            Handed::Shm { parts, terms } => {
                put_terms(terms);
                header[8..16].copy_from_slice(&parts.request_tail.to_le_bytes());
                header[16..24].copy_from_slice(&parts.reply_head.to_le_bytes());
                (KIND_SHM, &[], None, vec![parts.rings.as_fd(), parts.data.as_fd(), parts.space.as_fd(), parts.descriptors.as_fd()])
            }
            Handed::Stripe { session, socket, unread, peer } => {
                header[8..16].copy_from_slice(&session.to_le_bytes());
                (KIND_STRIPE, unread, *peer, vec![socket.as_fd()])
            }
            Handed::Fetch { session, socket, unread, peer } => {
                header[8..16].copy_from_slice(&session.to_le_bytes());
                (KIND_FETCH, unread, *peer, vec![socket.as_fd()])
            }
            Handed::Session { args, bridge } => (KIND_SESSION, args, None, vec![bridge.as_fd()]),
            Handed::RelaySocket { socket } => (KIND_RELAY_SOCKET, &[], None, vec![socket.as_fd()]),
        };
        if unread.len() > MAX_UNREAD_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} unread bytes to hand over (at most {MAX_UNREAD_BYTES})", unread.len()),
            ));
        }
        header[0..4].copy_from_slice(&kind.to_le_bytes());
        header[4..8].copy_from_slice(&(unread.len() as u32).to_le_bytes());
        if let Some(peer) = peer {
            let (family, ip) = match peer.ip() {
                IpAddr::V4(v4) => (4u8, v4.to_ipv6_mapped()),
                IpAddr::V6(v6) => (6u8, v6),
            };
            header[24] = family;
            header[25..27].copy_from_slice(&peer.port().to_le_bytes());
            header[27..43].copy_from_slice(&ip.octets());
        }
        if fds.is_empty() {
            (&*channel).write_all(&header)?;
        } else {
            transport_shm::sys::send_fds(channel.as_fd(), &header, &fds)?;
        }
        (&*channel).write_all(unread)
    }

    /// Receives the next message from the control channel; `None` when the worker closed it.
    pub fn recv(channel: &UnixStream) -> io::Result<Option<Self>> {
        let mut header = [0u8; HEADER_BYTES];
        let (n, fds) = transport_shm::sys::recv_fds(channel.as_fd(), &mut header)?;
        if n == 0 && fds.is_empty() {
            return Ok(None);
        }
        (&*channel).read_exact(&mut header[n..])?;
        let word = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().expect("4 bytes"));
        let long = |at: usize| u64::from_le_bytes(header[at..at + 8].try_into().expect("8 bytes"));
        let (kind, unread_len) = (word(0), word(4) as usize);
        if unread_len > MAX_UNREAD_BYTES {
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("{unread_len} unread bytes handed over (at most {MAX_UNREAD_BYTES})")));
        }
        let mut unread = vec![0u8; unread_len];
        (&*channel).read_exact(&mut unread)?;
        let peer = {
            let ip = Ipv6Addr::from(<[u8; 16]>::try_from(&header[27..43]).expect("16 bytes"));
            let port = u16::from_le_bytes([header[25], header[26]]);
            match header[24] {
                4 => ip.to_ipv4_mapped().map(|v4| SocketAddr::from((v4, port))),
                6 => Some(SocketAddr::from((ip, port))),
                _ => None,
            }
        };
        let terms = Terms { max_stripes: word(44), features: long(48) };
        let mut fds = fds.into_iter();
        let wrong =
            |wanted: usize| io::Error::new(io::ErrorKind::InvalidData, format!("control message of kind {kind} without its {wanted} descriptors"));
        let handed = match kind {
            KIND_RELAY => Handed::Relay,
            KIND_TCP => Handed::Tcp { socket: fds.next().ok_or_else(|| wrong(1))?, unread, peer, terms },
            KIND_STRIPE => Handed::Stripe { session: long(8), socket: fds.next().ok_or_else(|| wrong(1))?, unread, peer },
            KIND_FETCH => Handed::Fetch { session: long(8), socket: fds.next().ok_or_else(|| wrong(1))?, unread, peer },
            KIND_SESSION => Handed::Session { args: unread, bridge: fds.next().ok_or_else(|| wrong(1))? },
            KIND_RELAY_SOCKET => Handed::RelaySocket { socket: fds.next().ok_or_else(|| wrong(1))? },
            #[cfg(target_os = "linux")]
            KIND_SHM => {
                let (Some(rings), Some(data), Some(space), Some(descriptors)) = (fds.next(), fds.next(), fds.next(), fds.next()) else {
                    return Err(wrong(4));
                };
                let parts = transport_shm::ShmParts {
                    rings,
                    data: data.into(),
                    space: space.into(),
                    descriptors: descriptors.into(),
                    request_tail: long(8),
                    reply_head: long(16),
                };
                Handed::Shm { parts, terms }
            }
            other => return Err(io::Error::new(io::ErrorKind::InvalidData, format!("unknown control message kind {other}"))),
        };
        Ok(Some(handed))
    }
}

/// Sessions whose connections their processes serve, by session id: where their stripe
/// connections, and other workers' fetches of their grants, are handed.
#[derive(Default, Debug)]
pub struct HandedSessions {
    sessions: Mutex<std::collections::HashMap<u64, HandedSession>>,
}

#[derive(Debug)]
struct HandedSession {
    control: Arc<UnixStream>,
    /// Stripes join only from the main connection's address.
    peer: Option<IpAddr>,
    /// Held while sending on `control`: stripes join on connections of their own, served by
    /// threads of their own, and a message (descriptors, header, unread bytes) must not land
    /// between two parts of another's. A shared session process's sessions share one.
    sending: Arc<Mutex<()>>,
}

impl HandedSessions {
    /// Hands stripe connection `stripe` (from `peer`, its join frame and what followed in
    /// `unread`) to the process serving session `session_id`. `Err`: no such session here, or
    /// from another address (the process checks the join key, index and grant itself).
    pub fn hand_stripe(&self, session_id: u64, socket: OwnedFd, unread: Vec<u8>, peer: Option<SocketAddr>) -> Result<(), &'static str> {
        const REFUSED: &str = "stripe join refused: unknown session, wrong key or address, or expired grant";
        let (control, sending) = {
            let sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
            let session = sessions.get(&session_id).ok_or(REFUSED)?;
            if session.peer != peer.map(|p| p.ip()) {
                return Err(REFUSED);
            }
            (Arc::clone(&session.control), Arc::clone(&session.sending))
        };
        let _sending = sending.lock().unwrap_or_else(|p| p.into_inner());
        Handed::Stripe { session: session_id, socket, unread, peer }.send(&control).map_err(|e| {
            tracing::warn!(%e, session_id, "cannot hand a stripe to its session process");
            "stripe join refused: the session's process does not take it"
        })
    }

    /// Hands a connection another worker opened to fetch a grant of session `session_id`
    /// (its `TransferFetch` frame and what followed in `unread`) to the process serving that
    /// session, which checks the grant. Unlike a stripe's, it comes from another worker, not
    /// from the client's address. `Err`: no such session here (refused as a wrong grant is).
    pub fn hand_fetch(&self, session_id: u64, socket: OwnedFd, unread: Vec<u8>, peer: Option<SocketAddr>) -> Result<(), &'static str> {
        let (control, sending) = {
            let sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
            let session = sessions.get(&session_id).ok_or(crate::transfer::GRANT_REFUSED)?;
            (Arc::clone(&session.control), Arc::clone(&session.sending))
        };
        let _sending = sending.lock().unwrap_or_else(|p| p.into_inner());
        Handed::Fetch { session: session_id, socket, unread, peer }.send(&control).map_err(|e| {
            tracing::warn!(%e, session_id, "cannot hand a transfer fetch to its session process");
            "transfer fetch refused: the session's process does not take it"
        })
    }

    /// Hands a fetch that came over a connection the worker keeps (TLS, RDMA, a relayed one:
    /// its state cannot move) to the process serving session `session_id`, as
    /// [`HandedSessions::hand_fetch`] does with its end of a socket pair, and relays the
    /// process's answer to `replies`: its heartbeats, then the answer. Returns once the answer
    /// is sent; `Err`: not handed (refused as a wrong grant is).
    pub fn relay_fetch(&self, session_id: u64, frame: Vec<u8>, peer: Option<SocketAddr>, replies: &ReplyWriter) -> Result<(), &'static str> {
        let (ours, theirs) = UnixStream::pair().map_err(|e| {
            tracing::warn!(%e, "no socket pair to relay a transfer fetch");
            "transfer fetch refused: the worker cannot relay it now"
        })?;
        let len = fetched_len(&frame).ok_or("transfer fetch refused: not a TransferFetch")?;
        self.hand_fetch(session_id, theirs.into(), frame, peer)?;
        if let Err(e) = relay_fetch_answer(ours, replies, len) {
            tracing::info!(%e, session_id, "a relayed transfer fetch ended without its answer");
        }
        Ok(())
    }

    /// `sending`: the lock of a control channel other sessions send over too; `None` for a
    /// channel of this session alone (it gets a lock of its own).
    pub(super) fn insert(&self, session_id: u64, control: Arc<UnixStream>, peer: Option<IpAddr>, sending: Option<Arc<Mutex<()>>>) {
        let sending = sending.unwrap_or_default();
        self.sessions.lock().unwrap_or_else(|p| p.into_inner()).insert(session_id, HandedSession { control, peer, sending });
    }

    pub(super) fn remove(&self, session_id: u64) {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner()).remove(&session_id);
    }
}

/// The length a `TransferFetch` frame (header and control part) asks for.
fn fetched_len(frame: &[u8]) -> Option<u64> {
    use proto_core::header::HEADER_LEN;
    let header = proto_core::FrameHeader::parse(frame.get(..HEADER_LEN)?).ok()?;
    if header.opcode != proto_core::Opcode::TransferFetch.raw() {
        return None;
    }
    let control = frame.get(HEADER_LEN..HEADER_LEN + header.control_len as usize)?;
    <proto_core::wire::TransferFetch as proto_core::Message>::parse(control, &[]).ok().map(|fetch| fetch.len)
}

/// Forwards what a session process answers a relayed fetch of `len` bytes (its end of the
/// pair is `from`) to the fetching worker (`replies`): heartbeats (unsolicited PONGs, at most
/// [`crate::transfer::MAX_RELAYED_HEARTBEATS`]) and the answer's pieces until they add up to
/// `len` or an error ends them, each frame bounded before it is read (control part within
/// `MAX_PREAUTH_CONTROL_LEN`, bulk within what is left of `len`), all within
/// [`crate::transfer::TRANSFER_IO_TIMEOUT`].
fn relay_fetch_answer(mut from: UnixStream, replies: &ReplyWriter, len: u64) -> io::Result<()> {
    use proto_core::header::HEADER_LEN;
    let deadline = Instant::now() + crate::transfer::TRANSFER_IO_TIMEOUT;
    from.set_read_timeout(Some(crate::transfer::TRANSFER_IO_TIMEOUT))?;
    let (mut heartbeats, mut relayed) = (0u64, 0u64);
    let mut bulk = Vec::new();
    loop {
        let mut head = vec![0u8; HEADER_LEN];
        from.read_exact(&mut head)?;
        let header = proto_core::FrameHeader::parse(&head).map_err(|e| io::Error::other(format!("a malformed answer: {e}")))?;
        let control = header.control_len as usize;
        if control > proto_core::limits::MAX_PREAUTH_CONTROL_LEN || u64::from(header.bulk_len) > len - relayed {
            return Err(io::Error::other("an answer larger than the fetch's"));
        }
        head.resize(HEADER_LEN + control, 0);
        from.read_exact(&mut head[HEADER_LEN..])?;
        bulk.resize(header.bulk_len as usize, 0);
        from.read_exact(&mut bulk)?;
        replies.forward(&head, &bulk).map_err(|e| io::Error::other(e.to_string()))?;
        let heartbeat = header.opcode == proto_core::Opcode::Ping.raw() && header.request_id == 0;
        if heartbeat {
            heartbeats += 1;
            if heartbeats > crate::transfer::MAX_RELAYED_HEARTBEATS {
                return Err(io::Error::other(format!("more than {} heartbeats and no answer", crate::transfer::MAX_RELAYED_HEARTBEATS)));
            }
        } else {
            relayed += u64::from(header.bulk_len);
            if header.flags.contains(proto_core::Flags::ERROR) || header.bulk_len == 0 || relayed == len {
                return Ok(());
            }
        }
        if Instant::now() >= deadline {
            return Err(io::Error::other("no whole answer in time"));
        }
    }
}

/// Starts the session process of `session` (just authenticated) and hands it the connection
/// (`handed`), then waits until the process ends: on the worker's shutdown (`stopping`; the
/// connection was hung up) it is given [`EXIT_GRACE`] before it is killed. `replies` is the
/// worker's writer on the connection, used only for the death notice (TCP). The session
/// counts as open (`open`) until then.
pub fn serve(
    session: &Session,
    handed: Handed,
    replies: &ReplyWriter,
    process: &SessionProcess,
    open: OpenSession,
    stopping: &(dyn Fn() -> bool + Sync),
) -> Result<(), TransportError> {
    let _open = open;
    let Some(row) = process.claim_row() else {
        let _ = replies.send_error(0, 0, Status::TOO_MANY_CONNECTIONS, "the worker runs its most session processes already");
        return Err(TransportError::Io(io::Error::other("no free session-process row")));
    };
    // Dropped last: the process has ended by then, so what its row still holds is given back.
    let _row = row;
    let (child, control, ipc_channel, _scratch) = match relay::start(session, process, _row.row, false) {
        Ok(started) => started,
        Err(e) => {
            tracing::error!(%e, "cannot start the session process");
            let _ = replies.send_error(0, 0, Status::OUT_OF_MEMORY, &format!("the worker cannot start a process for this session: {e}"));
            return Err(TransportError::Io(e));
        }
    };
    // Dropped before the row (after the process ended): the row's device time goes to the
    // tenant for good.
    let _tenant_row = relay::metrics_tenant_row(session, process, _row.row);
    let pid = child.id();
    let child = Mutex::new(SessionChild::new(child));
    let notice = DeathNotice::of(&handed);
    let client_peer = match &handed {
        Handed::Tcp { peer, .. } => *peer,
        _ => None,
    };
    // A session whose connection the process serves itself takes stripes (TCP, from the
    // client's address) and other workers' fetches (TCP and same-host) over the control
    // channel (a relayed one is served by `relay::relay`, which registers it alike).
    let takes_handoffs = !matches!(handed, Handed::Relay);
    if let Err(e) = handed.send(&control) {
        tracing::error!(%e, "cannot hand the connection to the session process");
        relay::lock(&child).kill();
        relay::wait(&child, None);
        let _ = replies.send_error(0, 0, Status::OUT_OF_MEMORY, &format!("the worker cannot hand this session to its process: {e}"));
        return Err(TransportError::Io(e));
    }
    // The worker's copies of the descriptors it sent go now: the process owns the connection.
    drop(handed);
    session.metrics().session_process_started(true);
    tracing::info!(pid, "session process started; the connection is handed over");
    if let Err(e) = control.set_write_timeout(Some(CONTROL_WRITE_TIMEOUT)) {
        tracing::warn!(%e, "no write timeout on the control channel");
    }
    let control = Arc::new(control);
    if takes_handoffs {
        process.handed.insert(session.id(), Arc::clone(&control), client_peer.map(|p| p.ip()), None);
    }
    let status = std::thread::scope(|scope| {
        let ipc = std::thread::Builder::new()
            .name(format!("hip-ipc-{}", session.id()))
            .spawn_scoped(scope, || crate::ipc::serve_channel(ipc_channel, &*session.config().ipc, session.client().1));
        if let Err(e) = ipc {
            tracing::warn!(%e, "no IPC service for the session process");
        }
        let mut stop_seen: Option<Instant> = None;
        loop {
            if let Some(status) = relay::lock(&child).poll() {
                break status;
            }
            if stop_seen.is_none() && stopping() {
                stop_seen = Some(Instant::now());
            }
            if stop_seen.is_some_and(|seen| seen.elapsed() >= EXIT_GRACE) {
                tracing::warn!("session process did not end within {EXIT_GRACE:?} of the worker's shutdown; killing it");
                relay::lock(&child).kill();
                break relay::wait(&child, None);
            }
            std::thread::sleep(REAP_POLL);
        }
    });
    process.handed.remove(session.id());
    drop(control);
    let why = match crate::watchdog::ended_by_watchdog(&status, &session.metrics(), session.id()) {
        // The process sent the client its final error itself.
        true => None,
        false => relay::died(&status, relay::lock(&child).killed, process.max_file_bytes),
    };
    match why {
        Some(why) => {
            tracing::warn!(pid, "session process died: {why}; the session has ended");
            let message = format!("the session's process died ({why}): the session has ended, its resources are freed");
            notice.send(replies, Status::LAUNCH_FAILURE, &message);
        }
        None => tracing::info!(pid, %status, "session process ended"),
    }
    Ok(())
}

/// What the worker keeps of a handed connection to tell its client that the process serving
/// it died: a duplicate of the TCP socket, or of the same-host rings.
pub(super) struct DeathNotice {
    socket: Option<TcpStream>,
    #[cfg(target_os = "linux")]
    ring: Option<transport_shm::ShmParts>,
}

impl DeathNotice {
    /// Keeps what `handed` needs for a notice (nothing for a relayed or stripe connection:
    /// the relay answers those itself).
    pub(super) fn of(handed: &Handed) -> Self {
        Self {
            socket: match handed {
                Handed::Tcp { socket, .. } => socket.try_clone().ok().map(TcpStream::from),
                _ => None,
            },
            #[cfg(target_os = "linux")]
            ring: match handed {
                Handed::Shm { parts, .. } => parts.try_clone().ok(),
                _ => None,
            },
        }
    }

    /// Sends the client an error frame with request id 0 (`status`, `message`), which it
    /// returns as its pending call's error, and closes the connection.
    pub(super) fn send(self, replies: &ReplyWriter, status: Status, message: &str) {
        if let Some(socket) = self.socket {
            let _ = replies.send_error(0, 0, status, message);
            linger_then_close(socket);
        }
        #[cfg(target_os = "linux")]
        if let Some(parts) = self.ring {
            notice_over_rings(&parts, status, message);
        }
    }
}

/// Writes the death notice into a same-host connection's reply ring, where the dead process
/// stopped, if it stopped between frames (else the client sees its peer gone, as it does
/// once the worker's copies of the doorbells close).
#[cfg(target_os = "linux")]
fn notice_over_rings(parts: &transport_shm::ShmParts, status: Status, message: &str) {
    use transport_core::FrameSink;
    // A client that does not read gets its peer gone instead, after this long.
    let config = transport_shm::ShmConfig { spin: Duration::ZERO, stall_timeout: Some(NOTICE_LINGER), ..transport_shm::ShmConfig::default() };
    let mut sink = match parts.sink_after_peer(&config) {
        Ok(Some(sink)) => sink,
        Ok(None) => {
            tracing::info!("the session process died in the middle of a reply: its client sees the connection end without a notice");
            return;
        }
        Err(e) => {
            tracing::warn!(%e, "no death notice over the rings");
            return;
        }
    };
    let reply = proto_core::wire::ErrorReply { status, message: crate::session::truncate_utf8(message, proto_core::limits::MAX_NAME_LEN).into() };
    let meta =
        proto_core::frame::FrameMeta { opcode: 0, flags: proto_core::Flags::RESPONSE | proto_core::Flags::ERROR, request_id: 0, credits: 0, aux: 0 };
    // Header, status, length prefix and the (truncated) message.
    let mut buf = vec![0u8; proto_core::header::HEADER_LEN + 64 + proto_core::limits::MAX_NAME_LEN];
    match proto_core::frame::encode_frame(&mut buf, meta, &reply) {
        Ok(frame) => {
            let head_len = frame.head_len;
            if let Err(e) = sink.send(&buf[..head_len], &[]) {
                tracing::debug!(%e, "death notice not delivered over the rings");
            }
        }
        Err(e) => tracing::warn!(%e, "death notice not encodable"),
    }
}

/// Closes a TCP connection after its last frame: no more from this side, and the client's
/// unread requests drained for up to [`NOTICE_LINGER`], so the close does not reset the
/// connection before the client has read that frame.
fn linger_then_close(socket: TcpStream) {
    let _ = socket.shutdown(Shutdown::Write);
    let deadline = Instant::now() + NOTICE_LINGER;
    let mut scratch = [0u8; 16 << 10];
    while let Some(left) = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) {
        let _ = socket.set_read_timeout(Some(left));
        match (&socket).read(&mut scratch) {
            Ok(n) if n > 0 => continue,
            _ => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_messages_cross_with_their_descriptors_and_bytes() {
        let (worker, child) = UnixStream::pair().unwrap();
        let (a, mut b) = UnixStream::pair().unwrap();
        let peer: SocketAddr = "10.1.2.3:4567".parse().unwrap();
        let unread = (0..100_000u32).map(|i| i as u8).collect::<Vec<_>>();
        let sender = {
            let unread = unread.clone();
            std::thread::spawn(move || {
                let terms = Terms { features: 0x1234_5678_9abc, max_stripes: 7 };
                Handed::Tcp { socket: OwnedFd::from(a), unread, peer: Some(peer), terms }.send(&worker).unwrap();
                Handed::Stripe { session: 9, socket: OwnedFd::from(UnixStream::pair().unwrap().0), unread: vec![1, 2, 3], peer: None }
                    .send(&worker)
                    .unwrap();
                Handed::Fetch { session: 11, socket: OwnedFd::from(UnixStream::pair().unwrap().0), unread: vec![4, 5], peer: Some(peer) }
                    .send(&worker)
                    .unwrap();
                Handed::Relay.send(&worker).unwrap();
                Handed::Session { args: b"session=5".to_vec(), bridge: OwnedFd::from(UnixStream::pair().unwrap().0) }.send(&worker).unwrap();
                Handed::RelaySocket { socket: OwnedFd::from(UnixStream::pair().unwrap().0) }.send(&worker).unwrap();
            })
        };
        let Some(Handed::Tcp { socket, unread: got, peer: got_peer, terms }) = Handed::recv(&child).unwrap() else { panic!("a TCP handover") };
        assert_eq!(got, unread);
        assert_eq!(terms, Terms { features: 0x1234_5678_9abc, max_stripes: 7 });
        assert_eq!(got_peer, Some(peer));
        // The descriptor is the same socket: what is written on it arrives at its peer.
        (&UnixStream::from(socket)).write_all(b"hi").unwrap();
        let mut two = [0u8; 2];
        b.read_exact(&mut two).unwrap();
        assert_eq!(&two, b"hi");
        assert!(matches!(Handed::recv(&child).unwrap(), Some(Handed::Stripe { session: 9, ref unread, peer: None, .. }) if unread == &[1, 2, 3]));
        assert!(
            matches!(Handed::recv(&child).unwrap(), Some(Handed::Fetch { session: 11, ref unread, peer: Some(p), .. }) if unread == &[4, 5] && p == peer)
        );
        assert!(matches!(Handed::recv(&child).unwrap(), Some(Handed::Relay)));
        assert!(matches!(Handed::recv(&child).unwrap(), Some(Handed::Session { ref args, .. }) if args == b"session=5"));
        assert!(matches!(Handed::recv(&child).unwrap(), Some(Handed::RelaySocket { .. })));
        sender.join().unwrap();
        assert!(Handed::recv(&child).unwrap().is_none(), "the worker's end closed");
    }

    /// Stripes of one session join on connections of their own, handed over by threads of
    /// their own: every message must arrive whole, whatever the interleaving.
    #[test]
    fn stripes_handed_at_once_arrive_whole() {
        const STRIPES: u64 = 8;
        let (worker, child) = UnixStream::pair().unwrap();
        let sessions = Arc::new(HandedSessions::default());
        let peer: SocketAddr = "127.0.0.1:9".parse().unwrap();
        sessions.insert(3, Arc::new(worker), Some(peer.ip()), None);
        let senders: Vec<_> = (0..STRIPES)
            .map(|stripe| {
                let sessions = Arc::clone(&sessions);
                std::thread::spawn(move || {
                    for round in 0..20u64 {
                        let unread = vec![(stripe * 31 + round) as u8; 3000 + stripe as usize * 977];
                        let socket = OwnedFd::from(UnixStream::pair().unwrap().0);
                        sessions.hand_stripe(3, socket, unread, Some(peer)).unwrap();
                    }
                })
            })
            .collect();
        let mut seen = std::collections::HashMap::<usize, u32>::new();
        for _ in 0..STRIPES * 20 {
            let Some(Handed::Stripe { session: 3, unread, peer: Some(got), .. }) = Handed::recv(&child).unwrap() else {
                panic!("a stripe of session 3")
            };
            assert_eq!(got, peer);
            let stripe = (unread.len() - 3000) / 977;
            assert!(unread.iter().all(|&b| b == unread[0]), "the unread bytes of one stripe, not a mix");
            *seen.entry(stripe).or_default() += 1;
        }
        senders.into_iter().for_each(|s| s.join().unwrap());
        assert_eq!(seen.len() as u64, STRIPES);
        assert!(seen.values().all(|&n| n == 20));
    }
}
