//! TLS (rustls, `ring` provider) over TCP: [`FrameSink`]/[`FrameSource`] with the same
//! framing, coalescing and bulk placement as [`tcp`](crate::tcp).
//!
//! A connection's halves run on different threads (the worker's reader and its reply
//! writer), and one `rustls::Connection` holds the state of both directions, so it sits
//! behind a mutex that is never held while waiting for the network:
//! - the reader reads raw bytes from its own clone of the socket without the lock, then
//!   locks to decrypt them;
//! - the writer locks, encrypts into its own buffer, takes the socket's write lock *before*
//!   releasing the connection (records reach the socket in the order they were made), then
//!   writes. Locks are always taken in that order (connection, then socket), never the
//!   reverse, so the two halves cannot deadlock. The reader only ever `try_lock`s the socket
//!   (for an alert): when the writer holds it, the writer sends the reader's records too
//!   before it lets go.
//!
//! The plain TCP path does not go through here: TLS costs nothing when it is off.

use crate::config::{TcpConfig, COALESCE_BYTES, COPY_BULK_BELOW, RECV_BUFFER_BYTES};
use crate::nosigpipe::NoSigpipe;
use proto_core::header::HEADER_LEN;
use proto_core::{DeframedHead, FrameDecoder};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, Connection, RootCertStore, ServerConfig, ServerConnection};
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};
use transport_core::config::{self as env, EnvError, Lookup};
use transport_core::{Connected, Connector};
use transport_core::{FrameSink, FrameSource, Received, TransportError};

/// Plaintext encrypted per lock of the connection before the records go to the socket: large
/// enough that a big copy costs few locks and system calls, small enough that the reader is
/// never kept from decrypting for long.
const ENCRYPT_CHUNK: usize = 256 << 10;
/// Raw (encrypted) bytes read from the socket at a time.
const RAW_READ_BYTES: usize = 256 << 10;

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A file's certificates (PEM), at least one.
fn load_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("cannot read certificates from {}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{} holds no PEM certificate", path.display()));
    }
    Ok(certs)
}

fn load_key(path: &Path) -> Result<PrivateKeyDer<'static>, String> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| format!("cannot read a private key from {}: {e}", path.display()))
}

fn load_roots(path: &Path) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    for cert in load_certs(path)? {
        roots.add(cert).map_err(|e| format!("{}: not a usable CA certificate: {e}", path.display()))?;
    }
    Ok(roots)
}

/// The worker's TLS settings: its certificate chain and key (PEM files) and, when
/// `client_ca` is given, client certificates required and checked against that CA.
pub fn server_config(cert: &Path, key: &Path, client_ca: Option<&Path>) -> Result<Arc<ServerConfig>, String> {
    let builder = ServerConfig::builder_with_provider(provider()).with_safe_default_protocol_versions().map_err(|e| e.to_string())?;
    let builder = match client_ca {
        Some(ca) => {
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(load_roots(ca)?), provider())
                .build()
                .map_err(|e| format!("client CA {}: {e}", ca.display()))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config =
        builder.with_single_cert(load_certs(cert)?, load_key(key)?).map_err(|e| format!("{} and {}: {e}", cert.display(), key.display()))?;
    // No session resumption: tickets would be post-handshake records a client has to read
    // before its first reply, and every session opens one connection anyway.
    config.send_tls13_tickets = 0;
    Ok(Arc::new(config))
}

/// The client's TLS settings: whom to trust, what to show, which name to expect.
#[derive(Clone)]
pub struct TlsClient {
    /// rustls' configuration.
    pub config: Arc<ClientConfig>,
    /// The name the worker's certificate must carry (`None`: the host part of the worker's
    /// address).
    pub server_name: Option<ServerName<'static>>,
}

impl std::fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsClient").field("server_name", &self.server_name).finish_non_exhaustive()
    }
}

impl TlsClient {
    /// Trusts the CA certificates of `ca` (PEM), or the system's store without one; shows the
    /// certificate `client` (chain, key) when given.
    pub fn new(ca: Option<&Path>, client: Option<(&Path, &Path)>, server_name: Option<ServerName<'static>>) -> Result<Self, String> {
        let roots = match ca {
            Some(ca) => load_roots(ca)?,
            None => system_roots()?,
        };
        let builder = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots);
        let config = match client {
            Some((cert, key)) => builder
                .with_client_auth_cert(load_certs(cert)?, load_key(key)?)
                .map_err(|e| format!("{} and {}: {e}", cert.display(), key.display()))?,
            None => builder.with_no_client_auth(),
        };
        Ok(Self { config: Arc::new(config), server_name })
    }

    /// The TLS settings of the environment when TLS is on: `HIP_REMOTE_TLS_CA` (PEM file of
    /// CA certificates; else the system store), `HIP_REMOTE_TLS_CERT` and
    /// `HIP_REMOTE_TLS_KEY` (a client certificate, both or neither) and
    /// `HIP_REMOTE_TLS_SERVER_NAME` (the name to expect instead of the address's host). A
    /// file that cannot be read or parsed is refused, naming its variable.
    pub fn from_lookup(lookup: &Lookup<'_>) -> Result<Self, EnvError> {
        let path = |name: &str| env::text(lookup, name).map(|v| v.map(std::path::PathBuf::from));
        let refuse = |name: &str, value: &Option<std::path::PathBuf>, expected: String| EnvError {
            name: name.into(),
            value: value.as_ref().map_or_else(String::new, |p| p.display().to_string()),
            expected,
        };
        let ca = path("HIP_REMOTE_TLS_CA")?;
        let (cert, key) = (path("HIP_REMOTE_TLS_CERT")?, path("HIP_REMOTE_TLS_KEY")?);
        let server_name = match env::text(lookup, "HIP_REMOTE_TLS_SERVER_NAME")? {
            Some(name) => Some(ServerName::try_from(name.clone()).map_err(|_| EnvError {
                name: "HIP_REMOTE_TLS_SERVER_NAME".into(),
                value: name,
                expected: "a DNS name or an IP address".into(),
            })?),
            None => None,
        };
        let roots_error = |e: String| refuse("HIP_REMOTE_TLS_CA", &ca, format!("a readable PEM file of CA certificates ({e})"));
        if let Some(ca_path) = &ca {
            load_roots(ca_path).map_err(roots_error)?;
        }
        let client = match (&cert, &key) {
            (Some(c), Some(k)) => {
                load_certs(c).map_err(|e| refuse("HIP_REMOTE_TLS_CERT", &cert, format!("a readable PEM certificate chain ({e})")))?;
                load_key(k).map_err(|e| refuse("HIP_REMOTE_TLS_KEY", &key, format!("a readable PEM private key ({e})")))?;
                Some((c.as_path(), k.as_path()))
            }
            (Some(_), None) => return Err(refuse("HIP_REMOTE_TLS_CERT", &cert, "HIP_REMOTE_TLS_KEY set as well (the certificate's key)".into())),
            (None, Some(_)) => return Err(refuse("HIP_REMOTE_TLS_KEY", &key, "HIP_REMOTE_TLS_CERT set as well (the key's certificate)".into())),
            (None, None) => None,
        };
        // The files were checked above: what fails now is the system store or the pair.
        Self::new(ca.as_deref(), client, server_name).map_err(|e| match client {
            Some(_) => refuse("HIP_REMOTE_TLS_KEY", &key, format!("the private key of HIP_REMOTE_TLS_CERT ({e})")),
            None => roots_error(e),
        })
    }
}

/// The system's trusted CA certificates.
#[cfg(not(target_os = "macos"))]
fn system_roots() -> Result<RootCertStore, String> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (added, _ignored) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        let why = found.errors.first().map_or_else(|| "none found".to_string(), |e| e.to_string());
        return Err(format!("no usable CA certificate in the system store ({why}); set HIP_REMOTE_TLS_CA"));
    }
    Ok(roots)
}

/// macOS's bundle of its system trust roots (kept by the system, as LibreSSL reads them).
#[cfg(target_os = "macos")]
pub const MACOS_SYSTEM_ROOTS: &str = "/etc/ssl/cert.pem";

/// The system's trusted CA certificates, on macOS from [`MACOS_SYSTEM_ROOTS`]: reading the
/// Keychain (rustls-native-certs) links Apple's Security framework, which a build without
/// the macOS SDK (hip-remote's cross-built macOS client) cannot link. A CA trusted only in the
/// Keychain is given with HIP_REMOTE_TLS_CA.
#[cfg(target_os = "macos")]
fn system_roots() -> Result<RootCertStore, String> {
    load_roots(Path::new(MACOS_SYSTEM_ROOTS)).map_err(|e| format!("no usable system CA bundle ({e}); set HIP_REMOTE_TLS_CA"))
}

/// The host part of `host:port` (brackets of an IPv6 address removed) as a server name.
pub fn server_name_of(addr: &str) -> io::Result<ServerName<'static>> {
    let host = addr.rsplit_once(':').map_or(addr, |(host, _)| host);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(host.to_string())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, format!("{host:?} is not a valid TLS server name (set HIP_REMOTE_TLS_SERVER_NAME)")))
}

/// Connects to `addr` ("host:port"), completes the TLS handshake within the connect timeout
/// (one deadline for the whole handshake) and returns the two halves of the connection.
pub fn connect(addr: &str, cfg: &TcpConfig, tls: &TlsClient) -> io::Result<(TlsSink, TlsSource)> {
    let name = match &tls.server_name {
        Some(name) => name.clone(),
        None => server_name_of(addr)?,
    };
    let mut last_err = None;
    for sa in addr.to_socket_addrs()? {
        let stream = match TcpStream::connect_timeout(&sa, cfg.connect_timeout) {
            Ok(stream) => stream,
            Err(e) => {
                last_err = Some(e);
                continue;
            }
        };
        let conn = ClientConnection::new(tls.config.clone(), name.clone()).map_err(io::Error::other)?;
        return establish(stream, conn.into(), cfg, cfg.connect_timeout).map_err(|e| handshake_error(addr, e));
    }
    Err(last_err.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("{addr}: no address"))))
}

/// TCP with TLS as a [`Connector`]: `host:port` addresses, the certificate checked for the
/// host (or the configured server name).
pub struct TlsConnector<'a>(pub &'a TcpConfig, pub &'a TlsClient);

impl<D> Connector<D> for TlsConnector<'_> {
    fn name(&self) -> &'static str {
        "TLS"
    }

    fn connect(&self, target: &str) -> io::Result<Connected<D>> {
        let (sink, source) = connect(target, self.0, self.1)?;
        Ok(Connected::new(sink, source))
    }
}

/// Completes the server side of the handshake on an accepted stream within
/// `handshake_timeout` (one deadline for the whole handshake, however the peer paces its
/// bytes) and returns the two halves of the connection.
pub fn accept(stream: TcpStream, cfg: &TcpConfig, tls: &Arc<ServerConfig>, handshake_timeout: Duration) -> io::Result<(TlsSink, TlsSource)> {
    let conn = ServerConnection::new(tls.clone()).map_err(io::Error::other)?;
    establish(stream, conn.into(), cfg, handshake_timeout)
}

fn handshake_error(addr: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("TLS handshake with {addr} failed: {e}"))
}

fn establish(stream: TcpStream, mut conn: Connection, cfg: &TcpConfig, handshake_timeout: Duration) -> io::Result<(TlsSink, TlsSource)> {
    crate::tcp::configure(&stream, cfg)?;
    // rustls writes through `Write`: sends that cannot raise SIGPIPE.
    let mut stream = NoSigpipe::new(stream)?;
    // The whole handshake has one deadline, not each read: a peer that says nothing, or
    // dribbles its hello a byte at a time, is dropped when it passes.
    let mut io = Deadlined { stream: &mut stream, deadline: Instant::now() + handshake_timeout, limit: handshake_timeout };
    while conn.is_handshaking() {
        conn.complete_io(&mut io)?;
    }
    stream.get_ref().set_read_timeout(cfg.read_timeout())?;
    stream.get_ref().set_write_timeout(cfg.io_timeout)?;
    // The writer hands whole chunks to rustls and sends them itself.
    conn.set_buffer_limit(None);
    let reader = stream.get_ref().try_clone()?;
    let shared = Arc::new(Shared { conn: Mutex::new(conn), socket: Mutex::new(stream) });
    let sink = TlsSink { shared: shared.clone(), batch: Vec::with_capacity(COALESCE_BYTES), out: Vec::new() };
    let source = TlsSource {
        shared,
        stream: reader,
        raw: vec![0; RAW_READ_BYTES],
        raw_start: 0,
        raw_end: 0,
        out: Vec::new(),
        buf: vec![0; RECV_BUFFER_BYTES],
        start: 0,
        end: 0,
        bulk_remaining: 0,
        max_control: proto_core::limits::MAX_CONTROL_LEN,
        spin: cfg.spin,
        at_eof: false,
    };
    Ok((sink, source))
}

/// The stream during the handshake: every read and write waits at most until `deadline`,
/// then fails (rustls' `complete_io` reads many times before it returns).
struct Deadlined<'a> {
    stream: &'a mut NoSigpipe,
    deadline: Instant,
    limit: Duration,
}

impl Deadlined<'_> {
    /// Time left, set as the socket's timeouts; an error once none is left.
    fn arm(&self) -> io::Result<()> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, format!("the TLS handshake did not end within {:?}", self.limit)));
        }
        self.stream.get_ref().set_read_timeout(Some(left))?;
        self.stream.get_ref().set_write_timeout(Some(left))
    }

    /// A timed-out socket call as the deadline's error.
    fn explain(&self, e: io::Error) -> io::Error {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                io::Error::new(io::ErrorKind::TimedOut, format!("the TLS handshake did not end within {:?}", self.limit))
            }
            _ => e,
        }
    }
}

impl Read for Deadlined<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.arm()?;
        self.stream.read(buf).map_err(|e| self.explain(e))
    }
}

impl Write for Deadlined<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.arm()?;
        self.stream.write(buf).map_err(|e| self.explain(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// What both halves share: the TLS state and the socket's write side.
struct Shared {
    conn: Mutex<Connection>,
    socket: Mutex<NoSigpipe>,
}

/// Sends what `conn` has encrypted, in order; returns the connection locked again. `wait`:
/// block for the socket's write lock (the writer); otherwise leave the records to whoever
/// holds it (the reader's alerts), who sends them before letting go.
fn write_out<'a>(shared: &'a Shared, mut conn: MutexGuard<'a, Connection>, out: &mut Vec<u8>, wait: bool) -> io::Result<MutexGuard<'a, Connection>> {
    while conn.wants_write() {
        let mut socket = if wait {
            lock(&shared.socket)
        } else {
            match shared.socket.try_lock() {
                Ok(socket) => socket,
                Err(TryLockError::WouldBlock) => return Ok(conn),
                Err(TryLockError::Poisoned(p)) => p.into_inner(),
            }
        };
        out.clear();
        while conn.wants_write() {
            conn.write_tls(out)?;
        }
        drop(conn);
        let written = socket.write_all(out);
        drop(socket);
        written?;
        conn = lock(&shared.conn);
    }
    Ok(conn)
}

/// Sending half: coalesces fire-and-forget frames as [`TcpSink`](crate::TcpSink) does, and
/// encrypts large bulk sections in chunks straight from the caller's memory.
pub struct TlsSink {
    shared: Arc<Shared>,
    batch: Vec<u8>,
    /// Encrypted records on their way to the socket.
    out: Vec<u8>,
}

impl std::fmt::Debug for TlsSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsSink").field("pending", &self.batch.len()).finish_non_exhaustive()
    }
}

impl TlsSink {
    /// Encrypts and sends the batch, then `bulk`; empties the batch.
    fn write_batch_then(&mut self, bulk: &[u8]) -> Result<(), TransportError> {
        let Self { shared, batch, out } = self;
        let result = encrypt_and_send(shared, out, &[batch.as_slice(), bulk]);
        batch.clear();
        result.map_err(TransportError::Io)
    }
}

fn encrypt_and_send(shared: &Shared, out: &mut Vec<u8>, parts: &[&[u8]]) -> io::Result<()> {
    let mut conn = lock(&shared.conn);
    let mut unsent = 0;
    for chunk in parts.iter().flat_map(|part| part.chunks(ENCRYPT_CHUNK)) {
        conn.writer().write_all(chunk)?;
        unsent += chunk.len();
        if unsent >= ENCRYPT_CHUNK {
            conn = write_out(shared, conn, out, true)?;
            unsent = 0;
        }
    }
    write_out(shared, conn, out, true).map(drop)
}

impl FrameSink for TlsSink {
    fn send(&mut self, head: &[u8], bulk: &[u8]) -> Result<(), TransportError> {
        self.batch.extend_from_slice(head);
        if bulk.len() <= COPY_BULK_BELOW {
            // One record for a small frame, not one for its head and one for its bulk.
            self.batch.extend_from_slice(bulk);
            return self.write_batch_then(&[]);
        }
        self.write_batch_then(bulk)
    }

    fn queue(&mut self, head: &[u8], bulk: &[u8]) -> Result<(), TransportError> {
        if bulk.len() > COPY_BULK_BELOW {
            return self.send(head, bulk);
        }
        if self.batch.len() + head.len() + bulk.len() > COALESCE_BYTES {
            self.flush()?;
        }
        self.batch.extend_from_slice(head);
        self.batch.extend_from_slice(bulk);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), TransportError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        self.write_batch_then(&[])
    }

    fn pending(&self) -> usize {
        self.batch.len()
    }
}

/// Receiving half: decrypts into a buffer for headers and control parts, and bulk sections
/// straight into the caller's destination.
pub struct TlsSource {
    shared: Arc<Shared>,
    /// This half's own handle on the socket: reads take no lock.
    stream: TcpStream,
    /// Encrypted bytes read and not yet handed to rustls: `raw[raw_start..raw_end]`.
    raw: Vec<u8>,
    raw_start: usize,
    raw_end: usize,
    /// Alerts on their way to the socket.
    out: Vec<u8>,
    /// Decrypted bytes not consumed yet: `buf[start..end]`.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    bulk_remaining: usize,
    max_control: usize,
    spin: Duration,
    /// The socket reached its end.
    at_eof: bool,
}

impl std::fmt::Debug for TlsSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsSource").field("bulk_remaining", &self.bulk_remaining).finish_non_exhaustive()
    }
}

impl TlsSource {
    /// Decrypts at least one byte into `dst`; `Ok(0)` at the end of the connection (the
    /// peer's close_notify, or the end of the socket).
    fn read_plain(&mut self, dst: &mut [u8]) -> Result<usize, TransportError> {
        debug_assert!(!dst.is_empty());
        loop {
            {
                let Self { shared, raw, raw_start, raw_end, out, .. } = self;
                let mut conn = lock(&shared.conn);
                loop {
                    match conn.reader().read(dst) {
                        Ok(n) => return Ok(n),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                        Err(e) => return Err(TransportError::Io(e)),
                    }
                    if *raw_start == *raw_end {
                        break;
                    }
                    *raw_start += conn.read_tls(&mut &raw[*raw_start..*raw_end])?;
                    if let Err(e) = conn.process_new_packets() {
                        // rustls queued an alert telling the peer why.
                        drop(write_out(shared, conn, out, false));
                        return Err(TransportError::Io(io::Error::new(io::ErrorKind::InvalidData, format!("TLS: {e}"))));
                    }
                    if conn.wants_write() {
                        conn = write_out(shared, conn, out, false)?;
                    }
                }
            }
            if self.at_eof {
                return Ok(0);
            }
            crate::spin::until_readable(&self.stream, self.spin);
            let n = loop {
                match self.stream.read(&mut self.raw) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(TransportError::Io(e)),
                }
            };
            self.at_eof = n == 0;
            (self.raw_start, self.raw_end) = (0, n);
        }
    }

    /// Makes at least `n` decrypted bytes available in `buf`. `at_boundary`: the end of the
    /// connection before any byte is a clean close.
    fn fill(&mut self, n: usize, at_boundary: bool) -> Result<(), TransportError> {
        if self.buf.len() - self.start < n {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.buf.len() < n {
                self.buf.resize(n, 0);
            }
        }
        while self.end - self.start < n {
            let mut free = std::mem::take(&mut self.buf);
            let read = self.read_plain(&mut free[self.end..]);
            self.buf = free;
            match read? {
                0 if at_boundary && self.end == self.start => return Err(TransportError::Closed),
                0 => return Err(TransportError::Io(io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed mid-frame"))),
                read => self.end += read,
            }
        }
        Ok(())
    }

    /// Decrypted bytes wait (in rustls or in `raw`) without reading the socket.
    fn has_buffered(&self) -> bool {
        if self.end > self.start || self.raw_end > self.raw_start {
            return true;
        }
        let mut conn = lock(&self.shared.conn);
        conn.process_new_packets().map(|state| state.plaintext_bytes_to_read() > 0).unwrap_or(true)
    }
}

impl FrameSource for TlsSource {
    fn recv_head(&mut self) -> Result<Received<'_>, TransportError> {
        self.skip_bulk()?;
        let mut at_boundary = true;
        let (consumed, header) = loop {
            match FrameDecoder::decode_head_within(&self.buf[self.start..self.end], self.max_control)? {
                DeframedHead::Head { consumed, header, .. } => break (consumed, header),
                DeframedHead::NeedMore { needed } => {
                    self.fill(needed, at_boundary)?;
                    at_boundary = false;
                }
            }
        };
        let control_start = self.start + HEADER_LEN;
        self.start += consumed;
        self.bulk_remaining = header.bulk_len as usize;
        Ok(Received { header, control: &self.buf[control_start..self.start] })
    }

    fn limit_control(&mut self, max: usize) {
        self.max_control = max.min(proto_core::limits::MAX_CONTROL_LEN);
    }

    fn recv_bulk(&mut self, dst: &mut [u8]) -> Result<(), TransportError> {
        if dst.len() > self.bulk_remaining {
            return Err(TransportError::Io(io::Error::new(io::ErrorKind::InvalidInput, "read past the frame's bulk section")));
        }
        let buffered = (self.end - self.start).min(dst.len());
        dst[..buffered].copy_from_slice(&self.buf[self.start..self.start + buffered]);
        self.start += buffered;
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        }
        let mut placed = buffered;
        while placed < dst.len() {
            match self.read_plain(&mut dst[placed..])? {
                0 => return Err(TransportError::Io(io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed mid-bulk"))),
                n => placed += n,
            }
        }
        self.bulk_remaining -= dst.len();
        Ok(())
    }

    fn set_wait_spin(&mut self, spin: Duration) {
        self.spin = spin;
    }

    fn wait_readable(&mut self, timeout: Duration) -> Result<bool, TransportError> {
        self.skip_bulk()?;
        if self.at_eof || self.has_buffered() {
            return Ok(true);
        }
        crate::spin::until_readable(&self.stream, self.spin.min(timeout));
        crate::spin::wait_readable(&self.stream, timeout).map_err(TransportError::Io)
    }

    fn bulk_remaining(&self) -> usize {
        self.bulk_remaining
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::tcp::listen;
    use proto_core::wire::{MemcpyHtoD, Ping};
    use proto_core::{Bulk, Flags, Request};
    use std::path::PathBuf;

    /// A CA, a worker certificate for localhost/127.0.0.1 and a client certificate, as PEM
    /// files in a fresh directory.
    struct Pki {
        dir: PathBuf,
    }

    impl Pki {
        fn new(tag: &str) -> Self {
            let dir = std::env::temp_dir().join(format!("hip-tls-unit-{tag}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let ca_key = rcgen::KeyPair::generate().unwrap();
            let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
            ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
            ca_params.distinguished_name.push(rcgen::DnType::CommonName, format!("test CA {tag}"));
            let ca = ca_params.self_signed(&ca_key).unwrap();
            std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
            for (name, sans) in [("server", vec!["localhost".to_string(), "127.0.0.1".to_string()]), ("client", vec!["client".to_string()])] {
                let key = rcgen::KeyPair::generate().unwrap();
                let cert = rcgen::CertificateParams::new(sans).unwrap().signed_by(&key, &ca, &ca_key).unwrap();
                std::fs::write(dir.join(format!("{name}.pem")), cert.pem()).unwrap();
                std::fs::write(dir.join(format!("{name}.key")), key.serialize_pem()).unwrap();
            }
            Self { dir }
        }

        fn path(&self, name: &str) -> PathBuf {
            self.dir.join(name)
        }
    }

    impl Drop for Pki {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    fn server(pki: &Pki, client_ca: bool) -> Arc<ServerConfig> {
        let ca = client_ca.then(|| pki.path("ca.pem"));
        server_config(&pki.path("server.pem"), &pki.path("server.key"), ca.as_deref()).unwrap()
    }

    type Halves = (TlsSink, TlsSource);

    /// A TLS pair: (client halves, worker halves), or the client's and the worker's errors.
    fn pair(server_tls: Arc<ServerConfig>, client: &TlsClient) -> Result<(Halves, Halves), (io::Error, io::Error)> {
        let l = listen("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        let t = std::thread::spawn(move || accept(l.accept().unwrap().0, &TcpConfig::default(), &server_tls, Duration::from_secs(5)));
        let c = connect(&addr, &TcpConfig::default(), client);
        match (c, t.join().unwrap()) {
            (Ok(c), Ok(s)) => Ok((c, s)),
            (c, s) => Err((c.err().unwrap_or_else(|| io::Error::other("client ok")), s.err().unwrap_or_else(|| io::Error::other("worker ok")))),
        }
    }

    fn send_copy(tx: &mut dyn FrameSink, id: u64, data: &[u8]) {
        let mut buf = [0u8; 256];
        let f =
            Request::MemcpyHtoD(MemcpyHtoD { dst: id, stream: 0, sync: true, data: Bulk(data) }).encode_frame(&mut buf, Flags::empty(), id).unwrap();
        tx.send(&buf[..f.head_len], f.bulk).unwrap();
    }

    fn recv_copy(rx: &mut dyn FrameSource, id: u64) -> Vec<u8> {
        let head = rx.recv_head().unwrap();
        assert_eq!(head.header.request_id, id);
        let mut placed = vec![0u8; rx.bulk_remaining()];
        rx.recv_bulk(&mut placed).unwrap();
        placed
    }

    #[test]
    fn frames_cross_both_ways_at_once_with_bulk_and_coalesced_pings() {
        let pki = Pki::new("cross");
        let client = TlsClient::new(Some(&pki.path("ca.pem")), None, None).unwrap();
        let ((mut ctx, mut crx), (mut wtx, mut wrx)) = pair(server(&pki, false), &client).unwrap();
        let data: Arc<Vec<u8>> = Arc::new((0..9_000_017u32).map(|i| (i * 7) as u8).collect());
        // Each side sends big frames and many small queued ones from one thread while its
        // other half receives on another: the shared connection must neither deadlock nor
        // reorder.
        let sender = {
            let data = data.clone();
            std::thread::spawn(move || {
                for id in 1..=3 {
                    send_copy(&mut wtx, id, &data);
                }
                let mut buf = [0u8; 128];
                for n in 0..2000u64 {
                    let f = Request::Ping(Ping { nonce: n, payload: b"p"[..].into() }).encode_frame(&mut buf, Flags::NO_REPLY, 100 + n).unwrap();
                    wtx.queue(&buf[..f.head_len], f.bulk).unwrap();
                }
                wtx.flush().unwrap();
                wtx
            })
        };
        let receiver = {
            let data = data.clone();
            std::thread::spawn(move || {
                for id in 1..=3 {
                    assert!(recv_copy(&mut wrx, id) == *data, "client-to-worker copy {id} intact");
                }
                wrx
            })
        };
        for id in 1..=3 {
            send_copy(&mut ctx, id, &data);
        }
        for id in 1..=3 {
            assert!(recv_copy(&mut crx, id) == *data, "worker-to-client copy {id} intact");
        }
        for n in 0..2000u64 {
            assert_eq!(crx.recv_head().unwrap().header.request_id, 100 + n);
        }
        let mut wrx = receiver.join().unwrap();
        drop(sender.join().unwrap());
        drop((ctx, crx));
        assert!(matches!(wrx.recv_head(), Err(TransportError::Closed)));
    }

    #[test]
    fn wait_readable_sees_silence_and_frames() {
        let pki = Pki::new("wait");
        let client = TlsClient::new(Some(&pki.path("ca.pem")), None, None).unwrap();
        let ((_ctx, mut crx), (mut wtx, _wrx)) = pair(server(&pki, false), &client).unwrap();
        assert!(!crx.wait_readable(Duration::from_millis(50)).unwrap());
        send_copy(&mut wtx, 4, b"abc");
        assert!(crx.wait_readable(Duration::from_secs(5)).unwrap());
        assert_eq!(recv_copy(&mut crx, 4), b"abc");
    }

    #[test]
    fn an_unknown_ca_is_refused_by_the_client() {
        let (pki, other) = (Pki::new("ca-a"), Pki::new("ca-b"));
        let client = TlsClient::new(Some(&other.path("ca.pem")), None, None).unwrap();
        let (client_err, _) = pair(server(&pki, false), &client).expect_err("refused");
        assert!(client_err.to_string().contains("TLS handshake") && client_err.to_string().contains("UnknownIssuer"), "{client_err}");
    }

    #[test]
    fn the_server_name_must_match() {
        let pki = Pki::new("name");
        let wrong = ServerName::try_from("gpu7.example").unwrap();
        let client = TlsClient::new(Some(&pki.path("ca.pem")), None, Some(wrong)).unwrap();
        let (client_err, _) = pair(server(&pki, false), &client).expect_err("refused");
        assert!(client_err.to_string().contains("not valid for name"), "{client_err}");
        let right = TlsClient::new(Some(&pki.path("ca.pem")), None, Some(ServerName::try_from("localhost").unwrap())).unwrap();
        assert!(pair(server(&pki, false), &right).is_ok());
    }

    #[test]
    fn a_required_client_certificate_is_checked() {
        let pki = Pki::new("mtls");
        let without = TlsClient::new(Some(&pki.path("ca.pem")), None, None).unwrap();
        // TLS 1.3: the client finishes first; the worker refuses, and the client learns why
        // at its first read.
        match pair(server(&pki, true), &without) {
            Err((_, worker_err)) => assert!(worker_err.to_string().contains("certificate"), "{worker_err}"),
            Ok(_) => panic!("a client without a certificate was accepted"),
        }
        let with = TlsClient::new(Some(&pki.path("ca.pem")), Some((&pki.path("client.pem"), &pki.path("client.key"))), None).unwrap();
        let ((mut ctx, _crx), (_wtx, mut wrx)) = pair(server(&pki, true), &with).unwrap();
        send_copy(&mut ctx, 9, b"ok");
        assert_eq!(recv_copy(&mut wrx, 9), b"ok");
    }

    #[test]
    fn environment_settings_are_checked() {
        let pki = Pki::new("env");
        let ca = pki.path("ca.pem").display().to_string();
        let cert = pki.path("client.pem").display().to_string();
        let lookup = |vars: Vec<(&'static str, String)>| move |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| Ok(v.clone()));
        assert!(TlsClient::from_lookup(&lookup(vec![("HIP_REMOTE_TLS_CA", ca.clone())])).is_ok());
        for (vars, refused) in [
            (vec![("HIP_REMOTE_TLS_CA", "/nonexistent/ca.pem".to_string())], "HIP_REMOTE_TLS_CA"),
            (vec![("HIP_REMOTE_TLS_CA", pki.path("server.key").display().to_string())], "HIP_REMOTE_TLS_CA"),
            (vec![("HIP_REMOTE_TLS_CA", ca.clone()), ("HIP_REMOTE_TLS_CERT", cert.clone())], "HIP_REMOTE_TLS_CERT"),
            (vec![("HIP_REMOTE_TLS_CA", ca.clone()), ("HIP_REMOTE_TLS_CERT", cert), ("HIP_REMOTE_TLS_KEY", ca.clone())], "HIP_REMOTE_TLS_KEY"),
            (vec![("HIP_REMOTE_TLS_CA", ca), ("HIP_REMOTE_TLS_SERVER_NAME", "bad name!".into())], "HIP_REMOTE_TLS_SERVER_NAME"),
        ] {
            let e = TlsClient::from_lookup(&lookup(vars)).expect_err(refused);
            assert_eq!(e.name, refused, "{e}");
        }
    }

    #[test]
    fn server_names_come_from_the_host_part() {
        assert_eq!(server_name_of("gpu1:18515").unwrap(), ServerName::try_from("gpu1").unwrap());
        assert_eq!(server_name_of("[::1]:18515").unwrap(), ServerName::try_from("::1").unwrap());
        assert_eq!(server_name_of("10.0.0.2:1").unwrap(), ServerName::try_from("10.0.0.2").unwrap());
    }
}
