//! Copies between workers of one client's device list (`docs/CLIENT.md`, "Copies between
//! workers"; wire: `docs/PROTOCOL.md`, "Copies between workers").
//!
//! The client offers a range of its session on the source worker under a one-time grant
//! (`TransferOffer`: an id and a 32-byte secret the client drew), and tells the destination
//! worker to pull it (`TransferPull`, naming the source worker's address as the client reached
//! it). The source session reads the range in the order of its stream (queued like a
//! device-to-host copy, so its request loop does not wait) into the [`TransferHub`]; the
//! destination dials the source's listener ([`fetch`]), presents the grant as the first and
//! only request of that connection (`TransferFetch`), and writes the bytes it gets in the order
//! of its own stream. The bytes never pass through the client.
//!
//! A grant serves one fetch: a wrong secret, a grant already fetched, one past its expiry or
//! another length is refused with `AUTH_FAILED` and the connection closed; the worker goes on
//! serving. Like [`crate::driver`] and [`crate::stripes`], this is code that opens and reads
//! connections; the session only validates and names ranges.

use crate::backend::BackendError;
use crate::session::{Failure, LateReplies};
use proto_core::frame::{encode_frame, FrameMeta};
use proto_core::header::HEADER_LEN;
use proto_core::wire::{self, TRANSFER_SECRET_LEN};
use proto_core::{FrameHeader, Message, Opcode, Status};
use std::collections::{HashMap, VecDeque};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use subtle::ConstantTimeEq;

/// Grants a session may hold at once (offered, not fetched yet).
pub const MAX_GRANTS_PER_SESSION: usize = 16;
/// Bytes all grants of this worker may hold at once: an offer beyond it is refused before its
/// bytes are read (`hipErrorOutOfMemory`).
pub const MAX_GRANTED_BYTES: u64 = 1 << 30;
/// How long a grant whose bytes are ready waits for its fetch before it is dropped: as long
/// as a fetch waits, since the destination's request loop may be as far behind the source's.
pub const TRANSFER_GRANT_TTL: Duration = TRANSFER_WAIT;
/// How long a fetch waits for its grant: to be offered (the source session's request loop
/// may be behind the destination's) and its bytes read (the source stream's earlier work).
pub const TRANSFER_WAIT: Duration = Duration::from_secs(120);
/// Fetches that may wait for their grant at once; more are refused at once.
pub const MAX_WAITING_FETCHES: usize = 64;
/// Fetched or refused grant ids remembered, so a replay is refused at once instead of
/// waiting for an offer that will not come.
pub const MAX_SPENT_GRANTS: usize = 4096;
/// How long the destination tries to reach the source worker.
pub const TRANSFER_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest silence on a transfer connection: the fetch's wait, plus time to send the bytes.
pub const TRANSFER_IO_TIMEOUT: Duration = Duration::from_secs(TRANSFER_WAIT.as_secs() + 60);

/// Fetched pieces a source lets wait for the fetching worker at once (each at most
/// [`wire::TRANSFER_CHUNK_BYTES`]): while they wait, the next ones are read from the device.
pub const TRANSFER_WINDOW_CHUNKS: usize = 4;

type GrantKey = (u64, u64);

struct Grant {
    secret: [u8; TRANSFER_SECRET_LEN],
    len: u64,
    /// Bytes the source stream has read so far (queued in `chunks` or sent).
    read: u64,
    /// Pieces read and not taken by the fetch yet, in order.
    chunks: VecDeque<Vec<u8>>,
    /// The read failed on the source device: the fetch gets the pieces before, then this.
    failed: Option<(Status, String)>,
    /// A fetch presented the grant and is being answered: no other fetch may.
    claimed: bool,
    /// When the grant is dropped unfetched: [`TRANSFER_GRANT_TTL`] after its bytes are ready
    /// (or its read failed); never while claimed (the claim drops it when it ends).
    expires: Option<Instant>,
}

#[derive(Default)]
struct HubState {
    grants: HashMap<GrantKey, Grant>,
    /// Bytes reserved by live grants (counted from the offer, before the read, until the
    /// fetch's answer is done).
    bytes: u64,
    spent: VecDeque<GrantKey>,
    waiting: usize,
}

impl HubState {
    fn drop_expired(&mut self, now: Instant) {
        let expired: Vec<GrantKey> = self.grants.iter().filter(|(_, g)| !g.claimed && g.expires.is_some_and(|t| t <= now)).map(|(k, _)| *k).collect();
        for key in expired {
            self.remove(key);
        }
    }

    fn remove(&mut self, key: GrantKey) -> Option<Grant> {
        let grant = self.grants.remove(&key)?;
        self.bytes -= grant.len;
        if self.spent.len() >= MAX_SPENT_GRANTS {
            self.spent.pop_front();
        }
        self.spent.push_back(key);
        Some(grant)
    }
}

/// The pieces a grant of `len` bytes is read in, in stream order: `(offset, length)`.
pub fn grant_chunks(len: u64) -> impl Iterator<Item = (u64, u64)> {
    (0..len).step_by(wire::TRANSFER_CHUNK_BYTES as usize).map(move |offset| (offset, (len - offset).min(wire::TRANSFER_CHUNK_BYTES)))
}

/// Longest source address a session may have dialled (`host:port`, `tcp://host:port`,
/// `tls://host:port`).
pub const MAX_DIAL_ADDRESS_LEN: usize = 1024;
/// Most workers `--dial-workers` may name.
pub const MAX_DIAL_WORKERS: usize = 256;
/// Bytes a relayed TLS fetch may carry past its answer's: the heartbeats sent while the source
/// waits for its read, and the answer's header and control part.
pub const MAX_RELAYED_FETCH_OVERHEAD: u64 = 1 << 20;

/// Heartbeats the worker forwards from a session process before its answer to a fetch that
/// came over a connection the worker keeps (TLS): the process's writer sends one a second
/// while the fetch waits, so twice the longest wait's seconds is a generous bound.
pub const MAX_RELAYED_HEARTBEATS: u64 = 2 * TRANSFER_IO_TIMEOUT.as_secs();

/// A worker `--dial-workers` names: its address, and whether it is reached over TLS.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DialEntry {
    addr: String,
    tls: bool,
}

impl std::fmt::Display for DialEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.tls {
            write!(f, "tls://{}", self.addr)
        } else {
            f.write_str(&self.addr)
        }
    }
}

/// The workers this worker's sessions may fetch from (`--dial-workers`): the client names the
/// address the worker connects to, so only the operator's list is dialled. An entry is
/// `host:port` or `tcp://host:port` (a plain TCP listener) or `tls://host:port` (a TLS
/// listener, its certificate checked against `--dial-workers-ca` for the entry's host); a
/// name stands for every address it resolves to, looked up at each dial, so a headless
/// Service's name covers its pods. A source is dialled only at an address an entry of its
/// scheme resolves to, port included.
#[derive(Debug, Clone, Default)]
pub struct DialPolicy {
    allowed: Vec<DialEntry>,
    /// Whom a TLS source must prove it is, and what this worker shows when asked.
    tls: Option<transport_tcp::tls::TlsClient>,
}

/// Why a `tls://` entry needs the CA flag.
const NO_TLS_TRUST: &str = "needs --dial-workers-ca (the PEM file of the CA certificates that sign the source workers' certificates)";

impl DialPolicy {
    /// The policy of `--dial-workers` entries (`host:port`, `tcp://host:port`); empty: no
    /// dialling. A `tls://` entry needs [`DialPolicy::with_tls`].
    pub fn new(entries: impl IntoIterator<Item = String>) -> Result<Self, String> {
        Self::with_tls(entries, None)
    }

    /// The policy of `--dial-workers` entries, `tls://` ones trusted with `tls`
    /// (`--dial-workers-ca`, and `--dial-workers-cert` for sources that ask for a client
    /// certificate).
    pub fn with_tls(entries: impl IntoIterator<Item = String>, tls: Option<transport_tcp::tls::TlsClient>) -> Result<Self, String> {
        let mut allowed = Vec::new();
        for entry in entries {
            let entry = entry.trim();
            if entry.is_empty() {
                continue;
            }
            let (plain, tls_entry) = match entry.strip_prefix("tls://") {
                Some(rest) => (rest, true),
                None => (entry.strip_prefix("tcp://").unwrap_or(entry), false),
            };
            let port = plain.rsplit_once(':').map(|(host, port)| (host, port.parse::<u16>()));
            if !matches!(port, Some((host, Ok(_))) if !host.is_empty()) || plain.contains("://") || plain.len() > MAX_DIAL_ADDRESS_LEN {
                return Err(format!("--dial-workers: {entry:?} is not HOST:PORT or tls://HOST:PORT (a worker's listener)"));
            }
            if tls_entry {
                transport_tcp::tls::server_name_of(plain).map_err(|e| format!("--dial-workers: {entry:?}: {e}"))?;
                if tls.is_none() {
                    return Err(format!("--dial-workers: {entry:?} {NO_TLS_TRUST}"));
                }
            }
            allowed.push(DialEntry { addr: plain.to_owned(), tls: tls_entry });
        }
        if allowed.len() > MAX_DIAL_WORKERS {
            return Err(format!("--dial-workers names {} workers, at most {MAX_DIAL_WORKERS}", allowed.len()));
        }
        Ok(Self { allowed, tls })
    }

    /// Whether any worker may be dialled.
    pub fn may_dial(&self) -> bool {
        !self.allowed.is_empty()
    }

    fn listed(&self) -> String {
        self.allowed.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")
    }

    /// Connects to `source` (the source worker's address as the client reached it) if the
    /// policy allows it: a connected, configured socket (over TLS, its handshake done and the
    /// source's certificate checked), or why not.
    pub fn connect(&self, source: &str) -> Result<SourceConnection, Failure> {
        if source.len() > MAX_DIAL_ADDRESS_LEN {
            return Err(Failure::new(Status::INVALID_VALUE, format!("a source worker's address is at most {MAX_DIAL_ADDRESS_LEN} bytes")));
        }
        let (target, over_tls) = dialable(source)?;
        if !self.may_dial() {
            return Err(Failure::new(Status::NOT_SUPPORTED, NO_DIALLING));
        }
        let unreachable = |e: std::io::Error| {
            Failure::new(Status::NOT_SUPPORTED, format!("the source worker {source} cannot be reached for a copy between workers: {e}"))
        };
        let entries: Vec<(&DialEntry, Vec<SocketAddr>)> = self
            .allowed
            .iter()
            .filter(|entry| entry.tls == over_tls)
            .filter_map(|entry| {
                let addrs =
                    entry.addr.to_socket_addrs().inspect_err(|e| tracing::warn!(entry = %entry, %e, "a --dial-workers entry does not resolve"));
                addrs.ok().map(|addrs| (entry, addrs.collect()))
            })
            .collect();
        // Each address of the source with the entry that allows it (its host is the name a
        // TLS source's certificate must carry: the operator's, not the client's).
        let permitted: Vec<(SocketAddr, &DialEntry)> = target
            .to_socket_addrs()
            .map_err(unreachable)?
            .filter_map(|addr| entries.iter().find(|(_, addrs)| addrs.contains(&addr)).map(|(entry, _)| (addr, *entry)))
            .collect();
        if permitted.is_empty() {
            return Err(Failure::new(
                Status::NOT_SUPPORTED,
                format!(
                    "this worker may not dial {source}: it is none of the workers --dial-workers names ({}); add the source worker there, as the client reaches it (or copy through host memory)",
                    self.listed()
                ),
            ));
        }
        let mut last = std::io::Error::other("no address");
        for (addr, entry) in permitted {
            match TcpStream::connect_timeout(&addr, TRANSFER_CONNECT_TIMEOUT) {
                Ok(socket) => {
                    let broke = |e: std::io::Error| Failure::new(Status::UNKNOWN, format!("the transfer connection to {source} broke: {e}"));
                    let _ = socket.set_nodelay(true);
                    if !entry.tls {
                        socket.set_read_timeout(Some(TRANSFER_IO_TIMEOUT)).map_err(broke)?;
                        socket.set_write_timeout(Some(TRANSFER_IO_TIMEOUT)).map_err(broke)?;
                        return Ok(SourceConnection::Tcp(socket));
                    }
                    let tls = self.tls.as_ref().ok_or_else(|| Failure::new(Status::NOT_SUPPORTED, format!("{entry} {NO_TLS_TRUST}")))?;
                    return tls_handshake(socket, tls, entry, source);
                }
                Err(e) => last = e,
            }
        }
        Err(unreachable(last))
    }
}

/// Completes the TLS handshake with a source worker on `socket` within
/// [`TRANSFER_CONNECT_TIMEOUT`], expecting a certificate for `entry`'s host (or the name
/// the trust names) signed by a CA of `--dial-workers-ca`.
fn tls_handshake(mut socket: TcpStream, tls: &transport_tcp::tls::TlsClient, entry: &DialEntry, source: &str) -> Result<SourceConnection, Failure> {
    let broke = |e: std::io::Error| Failure::new(Status::UNKNOWN, format!("the transfer connection to {source} broke: {e}"));
    let name = match &tls.server_name {
        Some(name) => name.clone(),
        None => transport_tcp::tls::server_name_of(&entry.addr)
            .map_err(|e| Failure::new(Status::NOT_SUPPORTED, format!("--dial-workers {entry}: {e}")))?,
    };
    let mut conn = rustls::ClientConnection::new(std::sync::Arc::clone(&tls.config), name.clone())
        .map_err(|e| Failure::new(Status::UNKNOWN, format!("no TLS connection to {source}: {e}")))?;
    let deadline = Instant::now() + TRANSFER_CONNECT_TIMEOUT;
    while conn.is_handshaking() {
        let left = deadline.saturating_duration_since(Instant::now());
        let refused = |why: String| {
            Failure::new(
                Status::NOT_SUPPORTED,
                format!(
                    "the TLS handshake with the source worker {source} failed: {why}; its certificate must be signed by a CA of this worker's --dial-workers-ca and name {} (--dial-workers {entry})",
                    name.to_str()
                ),
            )
        };
        if left.is_zero() {
            return Err(refused(format!("not done within {} s", TRANSFER_CONNECT_TIMEOUT.as_secs())));
        }
        socket.set_read_timeout(Some(left)).map_err(broke)?;
        socket.set_write_timeout(Some(left)).map_err(broke)?;
        if let Err(e) = conn.complete_io(&mut socket) {
            return Err(refused(e.to_string()));
        }
    }
    socket.set_read_timeout(Some(TRANSFER_IO_TIMEOUT)).map_err(broke)?;
    socket.set_write_timeout(Some(TRANSFER_IO_TIMEOUT)).map_err(broke)?;
    Ok(SourceConnection::Tls(Box::new(rustls::StreamOwned::new(conn, socket))))
}

/// A connection to a source worker for one fetch.
#[derive(Debug)]
pub enum SourceConnection {
    /// Plain TCP, or a socket the worker connected for a session process (a plain one, or
    /// its end of a pair the worker relays to a TLS source over, see [`relay_fetch`]).
    Tcp(TcpStream),
    /// TLS over TCP, its handshake done.
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Read for SourceConnection {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            SourceConnection::Tcp(socket) => socket.read(buf),
            SourceConnection::Tls(tls) => tls.read(buf),
        }
    }
}

impl Write for SourceConnection {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            SourceConnection::Tcp(socket) => socket.write(buf),
            SourceConnection::Tls(tls) => tls.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            SourceConnection::Tcp(socket) => socket.flush(),
            SourceConnection::Tls(tls) => tls.flush(),
        }
    }
}

/// Relays one fetch between a session process (`local`, its end of a socket pair: it speaks
/// plain frames) and a source worker reached over TLS (`remote`): the process's one request
/// (`TransferFetch`, bounded), then what the source answers until it closes, at most the
/// longest answer ([`wire::MAX_TRANSFER_BYTES`] and [`MAX_RELAYED_FETCH_OVERHEAD`]) and within
/// [`TRANSFER_IO_TIMEOUT`]. The process checks the answer itself.
pub fn relay_fetch(mut remote: SourceConnection, mut local: std::os::unix::net::UnixStream) -> std::io::Result<()> {
    let deadline = Instant::now() + TRANSFER_IO_TIMEOUT;
    local.set_read_timeout(Some(TRANSFER_IO_TIMEOUT))?;
    local.set_write_timeout(Some(TRANSFER_IO_TIMEOUT))?;
    let mut request = vec![0u8; HEADER_LEN];
    local.read_exact(&mut request)?;
    let header = FrameHeader::parse(&request).map_err(|e| std::io::Error::other(format!("a malformed fetch request: {e}")))?;
    if header.opcode != Opcode::TransferFetch.raw()
        || header.bulk_len != 0
        || header.control_len as usize > proto_core::limits::MAX_PREAUTH_CONTROL_LEN
    {
        return Err(std::io::Error::other("the session process sent no TransferFetch"));
    }
    request.resize(HEADER_LEN + header.control_len as usize, 0);
    local.read_exact(&mut request[HEADER_LEN..])?;
    remote.write_all(&request)?;
    remote.flush()?;
    let mut budget = wire::MAX_TRANSFER_BYTES + MAX_RELAYED_FETCH_OVERHEAD;
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match remote.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            // A source that closes without TLS's close_notify after its answer.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(e),
        };
        budget = budget.checked_sub(n as u64).ok_or_else(|| std::io::Error::other("the source answered more than a fetch's answer"))?;
        local.write_all(&buf[..n])?;
        if Instant::now() >= deadline {
            return Err(std::io::Error::other(format!("no answer within {} s", TRANSFER_IO_TIMEOUT.as_secs())));
        }
    }
    // The process may have closed its end once it had the answer.
    let _ = local.shutdown(std::net::Shutdown::Write);
    Ok(())
}

/// Why a worker without `--dial-workers` takes no copies from other workers.
pub const NO_DIALLING: &str = "this worker may not dial other workers, so it takes no copies from them: start it with --dial-workers naming \
     the workers it may take copies from (or copy through host memory)";

/// How this process's sessions reach a source worker.
#[derive(Debug)]
pub enum Dialer {
    /// Sessions of the worker's own process connect themselves, within the policy.
    Direct(DialPolicy),
    /// Sessions in a session process, which opens no sockets: the worker connects for them,
    /// within its policy, and hands over the socket ([`crate::sandbox::dial`]).
    Worker(Arc<crate::sandbox::dial::WorkerDialer>),
}

impl Dialer {
    fn connect(&self, source: &str) -> Result<SourceConnection, Failure> {
        match self {
            Dialer::Direct(policy) => policy.connect(source),
            Dialer::Worker(worker) => worker.dial(source).map(SourceConnection::Tcp),
        }
    }
}

/// Which way the bytes of a copy between workers went, for the worker's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moved {
    /// Fetched from another worker.
    In,
    /// Answered to another worker's fetch.
    Out,
}

/// The grants of the sessions this process serves, and how its sessions dial other workers.
pub struct TransferHub {
    dialer: Dialer,
    state: Mutex<HubState>,
    changed: Condvar,
}

impl std::fmt::Debug for TransferHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("TransferHub").field("dialer", &self.dialer).field("grants", &state.grants.len()).field("bytes", &state.bytes).finish()
    }
}

fn refused(message: impl Into<String>) -> Failure {
    Failure::new(Status::AUTH_FAILED, message)
}

/// What every refusal of a presented grant says (which of the causes, a peer need not learn).
pub const GRANT_REFUSED: &str = "transfer grant refused: unknown, expired, already fetched, or the secret or length does not match";

impl TransferHub {
    /// `dialer`: how sessions of this process fetch from other workers (`--dial-workers`);
    /// serving fetches of its own grants needs no permission.
    pub fn new(dialer: Dialer) -> Arc<Self> {
        Arc::new(Self { dialer, state: Mutex::default(), changed: Condvar::new() })
    }

    /// A hub of the worker's own process whose sessions dial within `policy`.
    pub fn direct(policy: DialPolicy) -> Arc<Self> {
        Self::new(Dialer::Direct(policy))
    }

    fn lock(&self) -> MutexGuard<'_, HubState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether WELCOME may say sessions here take copies from other workers: the worker's
    /// policy names some (a session process asks the worker, which checks each dial).
    pub fn may_dial(&self) -> bool {
        match &self.dialer {
            Dialer::Direct(policy) => policy.may_dial(),
            Dialer::Worker(_) => true,
        }
    }

    /// The worker's policy, for the session processes it serves (`None` in a session process).
    pub fn policy(&self) -> Option<&DialPolicy> {
        match &self.dialer {
            Dialer::Direct(policy) => Some(policy),
            Dialer::Worker(_) => None,
        }
    }

    /// Connects to the source worker `source` for a pull.
    pub fn connect(&self, source: &str) -> Result<SourceConnection, Failure> {
        self.dialer.connect(source)
    }

    /// Counts `bytes` of a copy between workers that moved `way`: a session process tells the
    /// worker, whose metrics count them (the worker's own sessions count them themselves).
    pub fn note_moved(&self, way: Moved, bytes: u64) {
        if let Dialer::Worker(worker) = &self.dialer {
            worker.note_moved(way, bytes);
        }
    }

    /// Registers grant `grant_id` of `session` for `len` bytes, not ready yet; the caller
    /// then queues the read and hands its result to [`TransferHub::complete`].
    pub fn offer(&self, session: u64, grant_id: u64, secret: &[u8], len: u64) -> Result<(), Failure> {
        let secret: [u8; TRANSFER_SECRET_LEN] = secret
            .try_into()
            .map_err(|_| Failure::new(Status::INVALID_VALUE, format!("a transfer secret is {TRANSFER_SECRET_LEN} bytes, not {}", secret.len())))?;
        if len == 0 || len > wire::MAX_TRANSFER_BYTES {
            return Err(Failure::new(Status::INVALID_VALUE, format!("a transfer grant covers 1 to {} bytes, not {len}", wire::MAX_TRANSFER_BYTES)));
        }
        let mut state = self.lock();
        state.drop_expired(Instant::now());
        let key = (session, grant_id);
        if state.grants.contains_key(&key) || state.spent.contains(&key) {
            return Err(Failure::new(Status::INVALID_VALUE, format!("transfer grant {grant_id} was offered before: a grant id serves once")));
        }
        if state.grants.keys().filter(|(s, _)| *s == session).count() >= MAX_GRANTS_PER_SESSION {
            return Err(Failure::new(
                Status::OUT_OF_MEMORY,
                format!("the session holds {MAX_GRANTS_PER_SESSION} transfer grants not fetched yet: synchronize the destination first"),
            ));
        }
        if state.bytes.saturating_add(len) > MAX_GRANTED_BYTES {
            return Err(Failure::new(
                Status::OUT_OF_MEMORY,
                format!("a {len}-byte transfer grant would pass the worker's {MAX_GRANTED_BYTES} bytes of grants waiting for their fetch"),
            ));
        }
        state.bytes += len;
        // A read that never completes (its stream destroyed under it) does not hold the grant
        // past the longest a fetch would wait for it.
        let expires = Some(Instant::now() + TRANSFER_WAIT + TRANSFER_GRANT_TTL);
        let grant = Grant { secret, len, read: 0, chunks: VecDeque::new(), failed: None, claimed: false, expires };
        state.grants.insert(key, grant);
        Ok(())
    }

    /// The source stream read the piece of grant `grant_id` of `session` at `offset` (the
    /// pieces of [`grant_chunks`], in order), or failed to.
    pub fn complete_chunk(&self, session: u64, grant_id: u64, offset: u64, read: Result<Vec<u8>, BackendError>) {
        let mut state = self.lock();
        if let Some(grant) = state.grants.get_mut(&(session, grant_id)) {
            if grant.failed.is_none() {
                let expected = grant.len.saturating_sub(offset).min(wire::TRANSFER_CHUNK_BYTES);
                match read {
                    Ok(bytes) if offset == grant.read && bytes.len() as u64 == expected && expected > 0 => {
                        grant.read += expected;
                        grant.chunks.push_back(bytes);
                    }
                    Ok(bytes) => {
                        let why = format!(
                            "the source read {} bytes at offset {offset} of the grant, {expected} expected after {}",
                            bytes.len(),
                            grant.read
                        );
                        grant.failed = Some((Status::UNKNOWN, why));
                    }
                    Err(e) => grant.failed = Some((Status(e.hip_code()), format!("reading the source range failed at byte {offset}: {e}"))),
                }
                if grant.read == grant.len || grant.failed.is_some() {
                    grant.expires = Some(Instant::now() + TRANSFER_GRANT_TTL);
                }
            }
        }
        drop(state);
        self.changed.notify_all();
    }

    /// Withdraws a grant whose read could not be queued.
    pub fn withdraw(&self, session: u64, grant_id: u64) {
        self.lock().remove((session, grant_id));
        self.changed.notify_all();
    }

    /// Claims grant `grant_id` of `session` for the fetch presenting `secret` and `len`: waits
    /// (at most [`TRANSFER_WAIT`]) while it is not offered yet. A grant is claimed once; its
    /// pieces then come from [`GrantClaim::next_chunk`] as the source stream reads them.
    pub fn claim(self: &Arc<Self>, session: u64, grant_id: u64, secret: &[u8], len: u64) -> Result<GrantClaim, Failure> {
        let key = (session, grant_id);
        let deadline = Instant::now() + TRANSFER_WAIT;
        let mut state = self.lock();
        let mut counted = false;
        let result = loop {
            let now = Instant::now();
            state.drop_expired(now);
            let spent = state.spent.contains(&key);
            match state.grants.get_mut(&key) {
                Some(grant) => {
                    // Constant time: a peer learns nothing of the secret from the timing.
                    if !bool::from(grant.secret.ct_eq(secret)) || grant.len != len || grant.claimed {
                        break Err(refused(GRANT_REFUSED));
                    }
                    grant.claimed = true;
                    break Ok(GrantClaim { hub: Arc::clone(self), key, len, taken: 0 });
                }
                None if spent => break Err(refused(GRANT_REFUSED)),
                None => {}
            }
            if now >= deadline {
                break Err(refused(format!("{GRANT_REFUSED} (none was offered within {} s)", TRANSFER_WAIT.as_secs())));
            }
            if !counted {
                if state.waiting >= MAX_WAITING_FETCHES {
                    return Err(refused(format!("{MAX_WAITING_FETCHES} transfer fetches wait already; try again")));
                }
                state.waiting += 1;
                counted = true;
            }
            state = self.changed.wait_timeout(state, deadline - now).unwrap_or_else(|p| p.into_inner()).0;
        };
        if counted {
            state.waiting -= 1;
        }
        result
    }

    /// The whole grant (tests): its pieces joined.
    #[cfg(test)]
    fn take(self: &Arc<Self>, session: u64, grant_id: u64, secret: &[u8], len: u64) -> Result<Vec<u8>, Failure> {
        let mut claim = self.claim(session, grant_id, secret, len)?;
        let mut bytes = Vec::new();
        while let Some(chunk) = claim.next_chunk(TRANSFER_WAIT)? {
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    }
}

/// A grant a fetch presented: its pieces in order, each once the source stream has read it.
/// Dropping it ends the grant (its bytes are released; a replay is refused).
pub struct GrantClaim {
    hub: Arc<TransferHub>,
    key: GrantKey,
    len: u64,
    taken: u64,
}

impl GrantClaim {
    /// Whether every piece was taken.
    pub fn is_done(&self) -> bool {
        self.taken == self.len
    }

    /// The next piece, waiting at most `wait` for the source stream to read it (its earlier
    /// work first); `None` once every piece was taken. A failed read is its error, after the
    /// pieces read before it.
    pub fn next_chunk(&mut self, wait: Duration) -> Result<Option<Vec<u8>>, Failure> {
        if self.is_done() {
            return Ok(None);
        }
        let deadline = Instant::now() + wait;
        let mut state = self.hub.lock();
        loop {
            let grant = state.grants.get_mut(&self.key).ok_or_else(|| Failure::new(Status::UNKNOWN, "the transfer grant ended under its fetch"))?;
            if let Some(chunk) = grant.chunks.pop_front() {
                self.taken += chunk.len() as u64;
                return Ok(Some(chunk));
            }
            if let Some((status, message)) = &grant.failed {
                return Err(Failure::new(*status, message.clone()));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Failure::new(
                    Status::UNKNOWN,
                    format!("the source stream read {} of the grant's {} bytes and no more within {} s", grant.read, self.len, wait.as_secs()),
                ));
            }
            state = self.hub.changed.wait_timeout(state, deadline - now).unwrap_or_else(|p| p.into_inner()).0;
        }
    }
}

impl Drop for GrantClaim {
    fn drop(&mut self) {
        self.hub.lock().remove(self.key);
        self.hub.changed.notify_all();
    }
}

/// Answers a claimed grant over a transfer connection: every piece but the last is queued on
/// `late` (the connection's writer sends it) for request `request_id`, at most
/// [`TRANSFER_WINDOW_CHUNKS`] waiting there at once, so a fetcher that reads slowly, or not
/// at all, holds the source to that window; the last piece is returned for the direct reply
/// (which the driver sends after the queued ones, then closes). `io_wait`: how long the
/// fetcher may take to make room, and the source stream to read a piece.
pub fn answer_claim(claim: &mut GrantClaim, late: &LateReplies, request_id: u64, io_wait: Duration) -> Result<Vec<u8>, Failure> {
    let window = TRANSFER_WINDOW_CHUNKS * wire::TRANSFER_CHUNK_BYTES as usize;
    loop {
        let chunk = claim.next_chunk(io_wait)?.ok_or_else(|| Failure::new(Status::UNKNOWN, "a transfer grant with nothing to send"))?;
        if claim.is_done() {
            return Ok(chunk);
        }
        if !late.wait_charged_at_most(window - chunk.len(), io_wait) || !late.try_reserve(chunk.len()) {
            return Err(Failure::new(
                Status::UNKNOWN,
                format!("the fetching worker took no transfer bytes for {} s: the answer is abandoned", io_wait.as_secs()),
            ));
        }
        let reserved = chunk.len();
        late.push_reserved_bulk(request_id, chunk, reserved, |data| {
            proto_core::Response::TransferFetch(wire::TransferData { data: proto_core::Bulk(data) })
        });
    }
}

/// Where a session may fetch from (the source worker's address as the client reached it),
/// and whether over TLS.
fn dialable(source: &str) -> Result<(&str, bool), Failure> {
    if let Some(rest) = source.strip_prefix("tcp://") {
        return Ok((rest, false));
    }
    if let Some(rest) = source.strip_prefix("tls://") {
        return Ok((rest, true));
    }
    if let Some((scheme, _)) = source.split_once("://") {
        return Err(Failure::new(
            Status::NOT_SUPPORTED,
            format!(
                "a copy between workers needs the source worker reached over TCP or TLS; the client reached it over {scheme}:// (copy through host memory)"
            ),
        ));
    }
    Ok((source, false))
}

/// Where a fetch lands each piece it receives: `land(offset, n, fill)` lends `fill` the `n`
/// bytes at `offset` of the destination range (device memory, or a buffer) to receive into.
pub type Landing<'l> = dyn FnMut(u64, usize, &mut dyn FnMut(&mut [u8])) -> Result<(), Failure> + 'l;

/// Fetches grant `grant_id` of session `session_id` (`len` bytes) over `socket`, connected to
/// the worker at `source` ([`TransferHub::connect`]): one connection, one request, and its
/// answer's pieces, each received straight into `land` (at most
/// [`wire::TRANSFER_CHUNK_BYTES`] at a time) while the source reads the next. On an error
/// the pieces before it may have landed: the caller reports the copy failed.
pub fn fetch(
    mut socket: impl Read + Write,
    source: &str,
    session_id: u64,
    grant_id: u64,
    secret: &[u8],
    len: u64,
    land: &mut Landing<'_>,
) -> Result<(), Failure> {
    let broke = |e: std::io::Error| {
        let message = if e.kind() == std::io::ErrorKind::UnexpectedEof {
            format!(
                "the source worker {source} closed the transfer connection before its answer: the source session, its process or the worker ended"
            )
        } else {
            format!("the transfer connection to {source} broke: {e}")
        };
        Failure::new(Status::UNKNOWN, message)
    };
    let request = wire::TransferFetch { session_id, grant_id, secret: proto_core::field::Bytes(secret), len };
    let mut buf = [0u8; HEADER_LEN + 128];
    let meta = FrameMeta { opcode: Opcode::TransferFetch.raw(), flags: proto_core::Flags::empty(), request_id: 1, credits: 0, aux: 0 };
    let frame = encode_frame(&mut buf, meta, &request).map_err(|e| Failure::new(Status::INVALID_VALUE, format!("TransferFetch: {e}")))?;
    socket.write_all(&buf[..frame.head_len]).map_err(broke)?;
    socket.flush().map_err(broke)?;
    // Bounded before anything is allocated: an error reply's control part, or a piece within
    // what is left of the grant.
    let max_control = proto_core::limits::MAX_PREAUTH_CONTROL_LEN;
    let mut head = [0u8; HEADER_LEN];
    let mut control = [0u8; proto_core::limits::MAX_PREAUTH_CONTROL_LEN];
    // While the source waits for its stream, its writer sends heartbeats (unsolicited PONGs,
    // request id 0) every second: skipped, within the wait.
    let deadline = Instant::now() + TRANSFER_IO_TIMEOUT;
    let mut received = 0u64;
    while received < len {
        socket.read_exact(&mut head).map_err(broke)?;
        let header = FrameHeader::parse(&head).map_err(|e| broke(std::io::Error::other(format!("a malformed reply: {e}"))))?;
        if header.control_len as usize > max_control {
            return Err(broke(std::io::Error::other("a reply that is no answer to TransferFetch")));
        }
        let control = &mut control[..header.control_len as usize];
        let heartbeat = header.opcode == Opcode::Ping.raw() && header.request_id == 0 && header.bulk_len == 0;
        if heartbeat {
            socket.read_exact(control).map_err(broke)?;
            if Instant::now() >= deadline {
                return Err(broke(std::io::Error::other(format!("no answer within {} s, only heartbeats", TRANSFER_IO_TIMEOUT.as_secs()))));
            }
            continue;
        }
        if header.opcode != Opcode::TransferFetch.raw() || u64::from(header.bulk_len) > len - received {
            return Err(broke(std::io::Error::other("a reply that is no answer to TransferFetch")));
        }
        socket.read_exact(control).map_err(broke)?;
        if header.flags.contains(proto_core::Flags::ERROR) {
            let error = wire::ErrorReply::parse(control, &[]).map_err(|e| broke(std::io::Error::other(format!("a malformed error reply: {e}"))))?;
            // The source's refusal (AUTH_FAILED) is not a HIP code: the client sees an invalid value.
            let status = if error.status.0 < 10_000 { error.status } else { Status::INVALID_VALUE };
            let after = if received > 0 { format!(" after {received} of {len} bytes") } else { String::new() };
            return Err(Failure::new(status, format!("the source worker {source} refused the transfer{after}: {}", error.message.0)));
        }
        if header.bulk_len == 0 {
            return Err(broke(std::io::Error::other("an empty piece of a transfer")));
        }
        let mut left = u64::from(header.bulk_len);
        while left > 0 {
            let n = left.min(wire::TRANSFER_CHUNK_BYTES) as usize;
            let mut io = Ok(());
            land(received, n, &mut |bytes: &mut [u8]| io = socket.read_exact(bytes))?;
            io.map_err(broke)?;
            received += n as u64;
            left -= n as u64;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: [u8; TRANSFER_SECRET_LEN] = [7; TRANSFER_SECRET_LEN];

    /// [`fetch`] into a buffer.
    fn fetch_all(socket: impl Read + Write, source: &str, session_id: u64, grant_id: u64, secret: &[u8], len: u64) -> Result<Vec<u8>, Failure> {
        let mut bytes = Vec::new();
        fetch(socket, source, session_id, grant_id, secret, len, &mut |offset, n, fill| {
            assert_eq!(offset as usize, bytes.len(), "pieces land in order");
            bytes.resize(offset as usize + n, 0);
            fill(&mut bytes[offset as usize..]);
            Ok(())
        })?;
        Ok(bytes)
    }

    #[test]
    fn a_grant_is_fetched_once_with_its_secret_and_length() {
        let hub = TransferHub::direct(DialPolicy::default());
        hub.offer(1, 10, &SECRET, 4).unwrap();
        hub.complete_chunk(1, 10, 0, Ok(vec![1, 2, 3, 4]));
        let mut wrong = SECRET;
        wrong[31] ^= 1;
        assert!(matches!(hub.take(1, 10, &wrong, 4), Err(Failure::Status(Status::AUTH_FAILED, _))), "wrong secret");
        assert!(matches!(hub.take(1, 10, &SECRET, 5), Err(Failure::Status(Status::AUTH_FAILED, _))), "wrong length");
        assert_eq!(hub.take(1, 10, &SECRET, 4).unwrap(), vec![1, 2, 3, 4]);
        let started = Instant::now();
        assert!(matches!(hub.take(1, 10, &SECRET, 4), Err(Failure::Status(Status::AUTH_FAILED, _))), "a replay");
        assert!(started.elapsed() < Duration::from_secs(1), "a replay is refused at once");
        assert!(hub.offer(1, 10, &SECRET, 4).is_err(), "a grant id serves once");
        assert_eq!(hub.lock().bytes, 0);
    }

    #[test]
    fn a_fetch_waits_for_the_source_read() {
        let hub = TransferHub::direct(DialPolicy::default());
        hub.offer(1, 11, &SECRET, 3).unwrap();
        let waiter = {
            let hub = Arc::clone(&hub);
            std::thread::spawn(move || hub.take(1, 11, &SECRET, 3))
        };
        std::thread::sleep(Duration::from_millis(50));
        hub.complete_chunk(1, 11, 0, Ok(vec![9, 8, 7]));
        assert_eq!(waiter.join().unwrap().unwrap(), vec![9, 8, 7]);
    }

    #[test]
    fn offers_are_bounded_before_anything_is_read() {
        let hub = TransferHub::direct(DialPolicy::default());
        assert!(hub.offer(1, 1, &SECRET[..8], 4).is_err(), "a short secret");
        assert!(hub.offer(1, 1, &SECRET, 0).is_err());
        assert!(hub.offer(1, 1, &SECRET, wire::MAX_TRANSFER_BYTES + 1).is_err());
        for id in 0..MAX_GRANTS_PER_SESSION as u64 {
            hub.offer(1, 100 + id, &SECRET, 1).unwrap();
        }
        assert!(matches!(hub.offer(1, 999, &SECRET, 1), Err(Failure::Status(Status::OUT_OF_MEMORY, _))));
        hub.offer(2, 999, &SECRET, 1).unwrap();
        let per_grant = wire::MAX_TRANSFER_BYTES;
        let room = (MAX_GRANTED_BYTES - hub.lock().bytes) / per_grant;
        for id in 0..room {
            hub.offer(3 + id, 1, &SECRET, per_grant).unwrap();
        }
        assert!(matches!(hub.offer(1000, 1, &SECRET, per_grant), Err(Failure::Status(Status::OUT_OF_MEMORY, _))));
    }

    #[test]
    fn a_failed_read_reaches_the_fetch() {
        let hub = TransferHub::direct(DialPolicy::default());
        hub.offer(1, 12, &SECRET, 3).unwrap();
        hub.complete_chunk(1, 12, 0, Ok(vec![1]));
        assert!(matches!(hub.take(1, 12, &SECRET, 3), Err(Failure::Status(Status::UNKNOWN, _))));
    }

    /// The pattern a test grant holds: no piece repeats another, so a piece out of place shows.
    fn pattern(len: u64) -> Vec<u8> {
        (0..len).map(|i| (i % 251) as u8 ^ (i / 251 % 256) as u8).collect()
    }

    /// Completes the pieces of grant `(session, grant)` from `bytes` on another thread, as a
    /// stream executor would, the piece at `fail_at` (if any) failing.
    fn read_pieces(hub: &Arc<TransferHub>, session: u64, grant: u64, bytes: Vec<u8>, fail_at: Option<u64>) -> std::thread::JoinHandle<()> {
        let hub = Arc::clone(hub);
        std::thread::spawn(move || {
            for (offset, len) in grant_chunks(bytes.len() as u64) {
                std::thread::sleep(Duration::from_millis(2));
                let read = if fail_at == Some(offset) {
                    Err(BackendError::InvalidValue("the device lost the range".into()))
                } else {
                    Ok(bytes[offset as usize..(offset + len) as usize].to_vec())
                };
                hub.complete_chunk(session, grant, offset, read);
            }
        })
    }

    #[test]
    fn a_grant_of_several_pieces_arrives_whole_and_in_order() {
        let hub = TransferHub::direct(DialPolicy::default());
        let len = 2 * wire::TRANSFER_CHUNK_BYTES + 12_345;
        let bytes = pattern(len);
        assert_eq!(grant_chunks(len).count(), 3);
        hub.offer(1, 20, &SECRET, len).unwrap();
        let reader = read_pieces(&hub, 1, 20, bytes.clone(), None);
        let mut claim = hub.claim(1, 20, &SECRET, len).unwrap();
        let mut got = Vec::new();
        while let Some(piece) = claim.next_chunk(TRANSFER_WAIT).unwrap() {
            assert!(piece.len() as u64 <= wire::TRANSFER_CHUNK_BYTES);
            got.extend_from_slice(&piece);
        }
        assert!(got == bytes, "the pieces joined differ from the range");
        // Claimed once: a second fetch is refused at once, and the grant ends with its claim.
        assert!(matches!(hub.claim(1, 20, &SECRET, len), Err(Failure::Status(Status::AUTH_FAILED, _))));
        drop(claim);
        reader.join().unwrap();
        assert_eq!(hub.lock().bytes, 0, "the grant's bytes are released");
        assert!(matches!(hub.claim(1, 20, &SECRET, len), Err(Failure::Status(Status::AUTH_FAILED, _))));
    }

    #[test]
    fn a_piece_out_of_order_or_of_another_length_fails_the_grant() {
        let hub = TransferHub::direct(DialPolicy::default());
        let len = wire::TRANSFER_CHUNK_BYTES + 10;
        hub.offer(1, 21, &SECRET, len).unwrap();
        hub.complete_chunk(1, 21, wire::TRANSFER_CHUNK_BYTES, Ok(vec![0; 10]));
        match hub.take(1, 21, &SECRET, len) {
            Err(Failure::Status(Status::UNKNOWN, why)) => assert!(why.contains("offset"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    /// A source whose read fails after the first piece: the fetch gets that piece, then the
    /// read's error (not a short success), both from the hub and over the wire.
    #[test]
    fn a_read_failing_midway_ends_the_fetch_with_its_error() {
        let hub = TransferHub::direct(DialPolicy::default());
        let len = 3 * wire::TRANSFER_CHUNK_BYTES;
        hub.offer(1, 22, &SECRET, len).unwrap();
        let reader = read_pieces(&hub, 1, 22, pattern(len), Some(wire::TRANSFER_CHUNK_BYTES));
        let mut claim = hub.claim(1, 22, &SECRET, len).unwrap();
        assert_eq!(claim.next_chunk(TRANSFER_WAIT).unwrap().map(|p| p.len() as u64), Some(wire::TRANSFER_CHUNK_BYTES));
        match claim.next_chunk(TRANSFER_WAIT) {
            Err(Failure::Status(Status::INVALID_VALUE, why)) => {
                assert!(why.contains("the device lost the range") && why.contains(&format!("at byte {}", wire::TRANSFER_CHUNK_BYTES)), "{why}")
            }
            other => panic!("{other:?}"),
        }
        reader.join().unwrap();

        // Over the wire: one piece, then the source's error frame.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let piece = pattern(1000);
        let sent = piece.clone();
        let source = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut head = [0u8; HEADER_LEN];
            conn.read_exact(&mut head).unwrap();
            let header = FrameHeader::parse(&head).unwrap();
            conn.read_exact(&mut vec![0u8; header.control_len as usize]).unwrap();
            let mut buf = vec![0u8; 4096];
            let frame = proto_core::Response::TransferFetch(wire::TransferData { data: proto_core::Bulk(&sent) })
                .encode_frame(&mut buf, header.request_id, 0)
                .unwrap();
            let (head_len, bulk) = (frame.head_len, frame.bulk.to_vec());
            conn.write_all(&buf[..head_len]).unwrap();
            conn.write_all(&bulk).unwrap();
            let error = wire::ErrorReply { status: Status(1), message: "reading the source range failed at byte 1000: gone".into() };
            let meta = FrameMeta {
                opcode: Opcode::TransferFetch.raw(),
                flags: proto_core::Flags::RESPONSE | proto_core::Flags::ERROR,
                request_id: header.request_id,
                credits: 0,
                aux: 0,
            };
            let frame = encode_frame(&mut buf, meta, &error).unwrap();
            let head_len = frame.head_len;
            conn.write_all(&buf[..head_len]).unwrap();
        });
        let mut landed = Vec::new();
        let result = fetch(TcpStream::connect(&addr).unwrap(), &addr, 1, 2, &SECRET, 3000, &mut |offset, n, fill| {
            landed.resize(offset as usize + n, 0);
            fill(&mut landed[offset as usize..]);
            Ok(())
        });
        match result {
            Err(Failure::Status(Status::INVALID_VALUE, why)) => {
                assert!(why.contains("after 1000 of 3000 bytes") && why.contains("failed at byte 1000"), "{why}")
            }
            other => panic!("{other:?}"),
        }
        assert!(landed == piece, "only the piece before the error landed");
        source.join().unwrap();
    }

    /// A fetcher that takes nothing: the source queues at most its window of pieces for the
    /// connection, then abandons the answer with a clear error and releases the grant.
    #[test]
    fn a_fetcher_that_reads_nothing_holds_the_source_to_its_window() {
        let hub = TransferHub::direct(DialPolicy::default());
        let len = (TRANSFER_WINDOW_CHUNKS as u64 + 3) * wire::TRANSFER_CHUNK_BYTES;
        hub.offer(1, 23, &SECRET, len).unwrap();
        let reader = read_pieces(&hub, 1, 23, pattern(len), None);
        let late = LateReplies::with_limit(usize::MAX);
        let mut claim = hub.claim(1, 23, &SECRET, len).unwrap();
        match answer_claim(&mut claim, &late, 1, Duration::from_millis(300)) {
            Err(Failure::Status(Status::UNKNOWN, why)) => assert!(why.contains("took no transfer bytes"), "{why}"),
            other => panic!("{other:?}"),
        }
        let window = TRANSFER_WINDOW_CHUNKS * wire::TRANSFER_CHUNK_BYTES as usize;
        assert_eq!(late.charged_bytes(), window, "queued for the connection: the window");
        assert_eq!(late.len(), TRANSFER_WINDOW_CHUNKS);
        drop(claim);
        reader.join().unwrap();
        assert_eq!(hub.lock().bytes, 0, "the abandoned grant's bytes are released");

        // A fetcher that reads: every piece but the last through the queue, in order.
        hub.offer(1, 24, &SECRET, len).unwrap();
        let reader = read_pieces(&hub, 1, 24, pattern(len), None);
        let late = Arc::new(LateReplies::with_limit(usize::MAX));
        let drained = {
            let late = Arc::clone(&late);
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                while late.wait() {
                    while let Some((_, bulk)) = late.pop() {
                        bytes.extend_from_slice(&bulk);
                    }
                }
                bytes
            })
        };
        let mut claim = hub.claim(1, 24, &SECRET, len).unwrap();
        let last = answer_claim(&mut claim, &late, 1, Duration::from_secs(30)).unwrap();
        late.close();
        let mut got = drained.join().unwrap();
        got.extend_from_slice(&last);
        assert!(got == pattern(len), "the answer's pieces differ from the range");
        reader.join().unwrap();
    }

    #[test]
    fn the_dial_policy_takes_host_port_entries_only() {
        let policy = DialPolicy::new(["127.0.0.1:7000".to_string(), " tcp://workers.ns.svc:7001".into(), String::new()]).unwrap();
        assert!(policy.may_dial());
        assert_eq!(policy.listed(), "127.0.0.1:7000,workers.ns.svc:7001");
        assert!(!DialPolicy::new(Vec::<String>::new()).unwrap().may_dial());
        for bad in ["host", "host:port", ":7000", "h:70000", "*", "shm://h:1", "tls://h"] {
            assert!(DialPolicy::new([bad.to_string()]).is_err(), "{bad} accepted");
        }
        // A TLS entry needs the CA that signs its certificate (--dial-workers-ca).
        let why = DialPolicy::new(["tls://h:1".to_string()]).unwrap_err();
        assert!(why.contains("--dial-workers-ca"), "{why}");
        assert!(DialPolicy::new((0..=MAX_DIAL_WORKERS).map(|i| format!("h{i}:1"))).is_err());
        // A source the policy does not name is refused before any connect.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let listening = listener.local_addr().unwrap().to_string();
        match policy.connect(&listening) {
            Err(Failure::Status(Status::NOT_SUPPORTED, why)) => assert!(why.contains("--dial-workers"), "{why}"),
            other => panic!("{other:?}"),
        }
        let allowed = DialPolicy::new([format!("localhost:{}", listener.local_addr().unwrap().port())]).unwrap();
        if "localhost:1".to_socket_addrs().is_ok_and(|mut a| a.any(|a| a.ip().is_loopback() && a.is_ipv4())) {
            allowed.connect(&listening).expect("a name in the policy covers the addresses it resolves to");
        }
    }

    /// A source whose read takes a while sends heartbeats before the answer: the fetch skips
    /// them (it failed with "a reply that is no answer" when a read took over a second).
    #[test]
    fn a_fetch_skips_the_sources_heartbeats() {
        use proto_core::{Bulk, Response};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let source = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut head = [0u8; HEADER_LEN];
            conn.read_exact(&mut head).unwrap();
            let header = FrameHeader::parse(&head).unwrap();
            let mut rest = vec![0u8; header.control_len as usize];
            conn.read_exact(&mut rest).unwrap();
            let mut buf = vec![0u8; 4096];
            for _ in 0..3 {
                let pong = wire::Pong { nonce: 0, worker_time_ns: 1, payload: (&[][..]).into() };
                let frame = Response::Ping(pong).encode_frame(&mut buf, 0, 0).unwrap();
                let head_len = frame.head_len;
                conn.write_all(&buf[..head_len]).unwrap();
            }
            let data = [9u8; 5];
            let frame = Response::TransferFetch(wire::TransferData { data: Bulk(&data) }).encode_frame(&mut buf, header.request_id, 0).unwrap();
            let (head_len, bulk) = (frame.head_len, frame.bulk.to_vec());
            conn.write_all(&buf[..head_len]).unwrap();
            conn.write_all(&bulk).unwrap();
        });
        let socket = TcpStream::connect(&addr).unwrap();
        assert_eq!(fetch_all(socket, &addr, 1, 2, &SECRET, 5).unwrap(), vec![9u8; 5]);
        source.join().unwrap();
    }

    /// The worker's relay between a session process and a TLS source (here a plain socket
    /// stands for the TLS connection): the process's fetch goes out, the answer comes back
    /// whole and the process then sees the end; anything but a fetch goes nowhere.
    #[test]
    fn a_relayed_fetch_passes_the_request_and_the_answer_only() {
        use std::os::unix::net::UnixStream;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let source = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut head = [0u8; HEADER_LEN];
            conn.read_exact(&mut head).unwrap();
            let header = FrameHeader::parse(&head).unwrap();
            assert_eq!(header.opcode, Opcode::TransferFetch.raw());
            let mut rest = vec![0u8; header.control_len as usize];
            conn.read_exact(&mut rest).unwrap();
            let mut buf = vec![0u8; 4096];
            let data = [4u8; 300];
            let frame = proto_core::Response::TransferFetch(wire::TransferData { data: proto_core::Bulk(&data) })
                .encode_frame(&mut buf, header.request_id, 0)
                .unwrap();
            let (head_len, bulk) = (frame.head_len, frame.bulk.to_vec());
            conn.write_all(&buf[..head_len]).unwrap();
            conn.write_all(&bulk).unwrap();
        });
        let (ours, theirs) = UnixStream::pair().unwrap();
        let relay = std::thread::spawn(move || relay_fetch(SourceConnection::Tcp(TcpStream::connect(addr).unwrap()), ours));
        // The process's side: the normal fetch over its end of the pair.
        let got = fetch_all(theirs, "tls://source:1", 1, 2, &SECRET, 300).unwrap();
        assert_eq!(got, vec![4u8; 300]);
        relay.join().unwrap().unwrap();
        source.join().unwrap();

        // A process that sends something else: refused, and nothing reaches the source.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        let relay = std::thread::spawn(move || relay_fetch(SourceConnection::Tcp(TcpStream::connect(addr).unwrap()), ours));
        let mut buf = [0u8; 256];
        let frame = proto_core::Request::Ping(wire::Ping { nonce: 1, payload: Default::default() })
            .encode_frame(&mut buf, proto_core::Flags::empty(), 1)
            .unwrap();
        theirs.write_all(&buf[..frame.head_len]).unwrap();
        assert!(relay.join().unwrap().is_err());
        let (mut conn, _) = listener.accept().unwrap();
        let mut sent = Vec::new();
        conn.read_to_end(&mut sent).unwrap();
        assert!(sent.is_empty(), "the relay sent {} bytes to the source", sent.len());
    }

    #[test]
    fn only_tcp_and_tls_sources_are_dialled() {
        assert_eq!(dialable("127.0.0.1:5").ok(), Some(("127.0.0.1:5", false)));
        assert_eq!(dialable("tcp://h:5").ok(), Some(("h:5", false)));
        assert_eq!(dialable("tls://h:5").ok(), Some(("h:5", true)));
        assert!(matches!(dialable("shm:///tmp/s"), Err(Failure::Status(Status::NOT_SUPPORTED, _))));
        assert!(matches!(dialable("rdma://h:5"), Err(Failure::Status(Status::NOT_SUPPORTED, _))));
    }
}
