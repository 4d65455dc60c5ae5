//! The client's connection to its worker: the driver of a [`ClientSession`] (the `client-core`
//! crate), which holds request ids, fire-and-forget batching, the table of replies still to
//! land, the deferred error of failed fire-and-forget requests and the liveness timers. This
//! module owns what the session must not: the transport, the clock, the stripes and the shared
//! host regions, and the writes of landed bytes into the application's buffers (asynchronous
//! device-to-host copies write straight into them).
//!
//! While it waits for a reply, the driver runs the session's timers: after each heartbeat of
//! silence it sends the session's PING (an idle worker answers it; a worker busy with a long
//! request sends heartbeats of its own), and silence for the liveness timeout, or a reply later
//! than the call's deadline (`HIP_REMOTE_IO_TIMEOUT`), ends the connection with a clear error.
//!
//! One connection per process, created lazily by the first call that needs the worker and
//! shared by all threads under a mutex (HIP calls are thread-safe; the worker serves one
//! session per connection).

use crate::abi::HipError;
use crate::config::ClientConfig;
use shared_host::{DescriptorChannel, SharedHost};
use stripes::{StripedResult, Stripes};

mod mirrors;
pub mod profile;
mod shared_host;
pub mod stripes;
use client_core::client_handles::ClientHandles;
use client_core::client_memory::{ClientMemory, DeviceRange};
use client_core::compression::{Compression, COMPRESS_MIN_BYTES, COMPRESS_SAMPLE_BYTES};
pub use client_core::WelcomeInfo;
pub use client_core::{status_to_hip, version_mismatch, CallError, LOST};
use client_core::{ClientSession, Expect, Flush, Inbound, Landing, SessionConfig, Ticket};
use proto_core::auth::{auth_response, AuthContext};
use proto_core::content::{content_hash, CONTENT_ADDRESSED_MIN_BYTES};
use proto_core::limits::DEFAULT_COPY_CHUNK;
use proto_core::opcode::assert_postable;
use proto_core::wire;
use proto_core::{calls, Bulk, Call, Caller, Calls, FrameHeader, Opcode, Request, Response};
pub use shared_host::{is_shared_host_allocation, SHM_STAGED_COPY_MIN_BYTES, SHM_STAGING_REGIONS, SHM_STAGING_REGION_BYTES};
use std::time::{Duration, Instant};
use transport_core::{Connected, Connector, FrameSink, FrameSource, TransportError};

/// Where the client allocation ranges of a device list of several workers start: device `d`'s
/// window is `CLIENT_RANGE_WINDOWS_BASE + d * CLIENT_RANGE_WINDOW`. Workers on one machine
/// (one GPU's contexts, host-backend processes) would otherwise reserve the same addresses.
/// 256 devices' windows end at 96 TiB, inside a 47-bit user address space.
pub const CLIENT_RANGE_WINDOWS_BASE: u64 = 32 << 40;
/// Bytes of address space of one device's window (its range: at most this, at least the
/// device's memory where the driver honours the address).
pub const CLIENT_RANGE_WINDOW: u64 = 256 << 30;

/// The window of device `device` (the client's ordinal): its first address and length.
pub fn range_window(device: u32) -> (u64, u64) {
    (CLIENT_RANGE_WINDOWS_BASE + u64::from(device) * CLIENT_RANGE_WINDOW, CLIENT_RANGE_WINDOW)
}

/// An established session with a worker.
pub struct Conn {
    sink: Box<dyn FrameSink>,
    source: Box<dyn FrameSource>,
    /// Everything the connection knows that is not I/O.
    session: ClientSession,
    /// The control part and bulk of the reply just read.
    control: Vec<u8>,
    bulk: Vec<u8>,
    /// Where the session's own frames (PINGs) are encoded.
    transmit_buf: Vec<u8>,
    /// The reader's usual spin, and its spin while a call waits for device work.
    spin: Duration,
    device_wait_spin: Duration,
    /// The session's stripe connections, when the worker granted some.
    stripes: Option<Stripes>,
    /// Until the first copy large enough to be striped: how to open the stripes then (a
    /// program that makes no large copy opens none).
    stripes_to_open: Option<Box<ClientConfig>>,
    /// Smallest copy sent over the stripes (`HIP_REMOTE_STRIPE_MIN_BYTES`).
    stripe_min_bytes: usize,
    /// Shared registered host memory (a same-host connection whose worker offers it).
    shared_host: Option<SharedHost>,
    /// AUTHENTICATE, sent without waiting (its reply comes before any later one), and the
    /// worker's address for the message should it be refused.
    auth_pending: Option<(Ticket, String)>,
    /// Large uploads are named by hash first (`HIP_REMOTE_CONTENT_STORE`, and the worker
    /// offers `CONTENT_STORE`).
    content_store: bool,
    /// Large uploads may go compressed where that is faster (the worker offers
    /// `COMPRESSED_BULK`; [`Compression`] decides per copy).
    compressed_bulk: bool,
    compression: Compression,
    /// With `RESUME`: where and how to reconnect when the connection breaks.
    resume_with: Option<(String, Box<ClientConfig>)>,
    /// A round trip for the worker's acknowledgement is under way (not to be nested).
    acking: bool,
    /// The session was resumed on a new connection: the stripes go before the next copy.
    stripes_stale: bool,
    /// In a device list of several workers: client allocation ranges are asked for in each
    /// device's window ([`range_window`]), so two workers never place memory at one address.
    range_windows: bool,
}

/// Whether `worker` (`HOST:PORT`, any scheme) names this machine's loopback interface.
fn is_loopback(worker: &str) -> bool {
    let host_port = worker.rsplit("://").next().unwrap_or(worker);
    let host = host_port.rsplit_once(':').map_or(host_port, |(h, _)| h).trim_start_matches('[').trim_end_matches(']');
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// How long a client whose connection broke tries to reach its worker again and resume the
/// session (the worker keeps it for its grace period, 60 s by default).
pub const RESUME_WINDOW: Duration = Duration::from_secs(30);

/// First pause between attempts to resume; it doubles up to [`RESUME_MAX_BACKOFF`].
const RESUME_FIRST_BACKOFF: Duration = Duration::from_millis(20);
const RESUME_MAX_BACKOFF: Duration = Duration::from_secs(1);

/// Why an attempt to resume failed.
enum ResumeAttempt {
    /// Worth another attempt (the worker unreachable, or not yet aware of the break).
    Again(String),
    /// The session cannot be resumed.
    Refused(CallError),
}

/// Largest synchronous host-to-device `hipMemcpy` that returns once its bytes are sent
/// rather than when the worker has them in device memory (with `CLIENT_ALLOCATION`). Larger
/// copies wait: their time is the transfer's, and a failure is better reported by the copy.
/// A default to be measured on the H100 by the lead (the bench's 4 KiB H2D figure).
pub const SMALL_UPLOAD_NO_WAIT_BYTES: usize = 64 << 10;

/// Whether a synchronous upload of `len` bytes to `dst` may return once its bytes are sent.
pub type SentIsEnough = fn(u64, usize) -> bool;

fn transport_error(e: TransportError) -> CallError {
    CallError::new(HipError::NOT_INITIALIZED, format!("{LOST}: {e}"))
}

/// Opens the transport `worker` names (through [`connector_for`]).
pub(crate) fn connect_transport(worker: &str, config: &ClientConfig) -> std::io::Result<(Box<dyn FrameSink>, Box<dyn FrameSource>)> {
    connect_transport_with_descriptors(worker, config).map(|(sink, source, _)| (sink, source))
}

/// The halves of a connection, and its descriptor channel where it has one (`shm://`).
type Opened = (Box<dyn FrameSink>, Box<dyn FrameSource>, Option<DescriptorChannel>);

/// [`connect_transport`], keeping a same-host connection's descriptor channel.
fn connect_transport_with_descriptors(worker: &str, config: &ClientConfig) -> std::io::Result<Opened> {
    let (connector, target) = connector_for(worker, config);
    let Connected { sink, source, descriptors } = connector.connect(&target)?;
    Ok((sink, source, descriptors))
}

/// The one place the driver picks a transport: the [`Connector`] for the scheme `worker`
/// names (`shm:///path`: a worker on this machine, Linux; `rdma://host[:port]`, feature
/// `rdma`; else TCP, with TLS when the configuration has TLS settings), and the target it
/// connects to.
fn connector_for<'a>(worker: &'a str, config: &'a ClientConfig) -> (Box<dyn Connector<DescriptorChannel> + 'a>, String) {
    use transport_core::Scheme;
    match Scheme::of(worker) {
        (Scheme::Shm, path) => {
            #[cfg(target_os = "linux")]
            let connector = Box::new(transport_shm::ShmConnector(transport_shm::ShmConfig {
                spin: config.tcp.spin,
                stall_timeout: Some(config.liveness.timeout),
                connect_timeout: config.tcp.connect_timeout,
            }));
            #[cfg(not(target_os = "linux"))]
            let connector = Box::new(transport_core::connector::Unsupported(format!("use {}", crate::config::SHM_NEEDS_LINUX)));
            (connector, path.to_string())
        }
        (Scheme::Rdma, addr) => {
            let addr = if addr.contains(':') { addr.to_string() } else { format!("{addr}:{}", crate::config::DEFAULT_PORT) };
            #[cfg(feature = "rdma")]
            let connector = Box::new(transport_rdma::RdmaConnector(&config.rdma));
            #[cfg(not(feature = "rdma"))]
            let connector = Box::new(transport_core::connector::Unsupported("this libamdhip64 was built without the `rdma` feature".into()));
            (connector, addr)
        }
        (Scheme::Tcp, addr) => match &config.tls {
            #[cfg(feature = "tls")]
            Some(tls) => (Box::new(transport_tcp::tls::TlsConnector(&config.tcp, tls)), addr.to_string()),
            #[cfg(not(feature = "tls"))]
            Some(tls) => match *tls {},
            None => (Box::new(transport_tcp::tcp::TcpConnector(&config.tcp)), addr.to_string()),
        },
    }
}

/// This machine's identity when `worker` is a plain TCP address and the configuration lets
/// the client move to a worker on its machine (`HIP_REMOTE_SHM=auto`, Linux).
fn same_host_identity(worker: &str, config: &ClientConfig) -> Option<Vec<u8>> {
    let plain_tcp = !worker.contains("://") && config.tls.is_none();
    if !(config.same_host && plain_tcp) {
        return None;
    }
    #[cfg(target_os = "linux")]
    return transport_shm::machine_identity();
    #[cfg(not(target_os = "linux"))]
    None
}

/// The `rdma://` address for an advertised RDMA endpoint: a wildcard host (the worker
/// listens on every address) is replaced by the host the client reached over TCP.
fn rdma_target(endpoint: &str, tcp_worker: &str) -> String {
    let (host, port) = endpoint.rsplit_once(':').unwrap_or((endpoint, ""));
    let wildcard = matches!(host.trim_matches(['[', ']']), "0.0.0.0" | "::" | "");
    let host = if wildcard { tcp_worker.rsplit_once(':').map_or(tcp_worker, |(h, _)| h) } else { host };
    format!("rdma://{host}:{port}")
}

impl Conn {
    /// Connects to the configured worker and performs the HELLO/WELCOME handshake; with
    /// `prefer_rdma`, then moves to the RDMA listener WELCOME advertises (a new session there;
    /// the TCP one is closed with GOODBYE).
    pub fn open(config: &ClientConfig) -> Result<Self, CallError> {
        let mut conn = Self::open_at(&config.worker, config, 0, 0)?;
        let offered = conn.session.welcome().features & wire::features::RDMA != 0 && !conn.session.welcome().rdma_endpoint.is_empty();
        if config.rdma_kept_off_by_tls && offered {
            eprintln!("hip-remote: the worker offers RDMA, but RDMA is not encrypted: staying on TLS (HIP_REMOTE_RDMA_WITHOUT_TLS=1 moves anyway)");
        }
        if config.prefer_rdma && offered && transport_core::Scheme::of(&config.worker).0 != transport_core::Scheme::Rdma {
            let target = rdma_target(&conn.session.welcome().rdma_endpoint, &config.worker);
            match Self::open_at(&target, config, 0, 0) {
                Ok(rdma) => {
                    let _ = conn.goodbye(wire::Empty {});
                    return Ok(rdma);
                }
                Err(e) => eprintln!("hip-remote: the worker offers RDMA at {target}, but moving there failed ({}); staying on TCP", e.message),
            }
        }
        // A local worker's shared memory, unless RDMA was asked for explicitly (above).
        if let Some(socket) = conn.session.welcome().same_host_socket.clone() {
            let target = format!("shm://{socket}");
            match Self::open_at(&target, config, 0, 0) {
                Ok(shm) => {
                    let _ = conn.goodbye(wire::Empty {});
                    return Ok(shm);
                }
                Err(e) => eprintln!(
                    "hip-remote: the worker runs on this machine, but moving to its shared memory at {target} failed ({}); staying on TCP",
                    e.message
                ),
            }
        }
        if conn.session.welcome().features & wire::features::STRIPED_BULK != 0 {
            conn.stripes_to_open = Some(Box::new(config.clone()));
        }
        Ok(conn)
    }

    /// A second connection to the configured worker that is to become this process's
    /// callback channel (`wire::features::CALLBACK_CHANNEL`): it carries no bulk data, so it
    /// stays on the configured address (TCP unless that is an `rdma://` one).
    pub fn open_callback_channel(config: &ClientConfig) -> Result<Self, CallError> {
        Self::open_at(&config.worker, config, wire::features::CALLBACK_CHANNEL, 0)
    }

    /// Connects to `worker` and performs the handshake; `resume_session`: the session this
    /// connection is to resume (it sends `Resume` next).
    fn open_at(worker: &str, config: &ClientConfig, extra_features: u64, resume_session: u64) -> Result<Self, CallError> {
        let opened = connect_transport_with_descriptors(worker, config)
            .map_err(|e| CallError::new(HipError::NOT_INITIALIZED, format!("cannot connect to hip-worker at {worker}: {e}")))?;
        Self::handshake_on(opened, worker, config, extra_features, resume_session)
    }

    /// The handshake on a connection to `worker` just opened.
    fn handshake_on(opened: Opened, worker: &str, config: &ClientConfig, extra_features: u64, resume_session: u64) -> Result<Self, CallError> {
        let (sink, source, descriptors) = opened;
        let mut conn = Self {
            sink,
            source,
            session: ClientSession::new(SessionConfig {
                heartbeat: config.liveness.heartbeat,
                liveness_timeout: config.liveness.timeout,
                call_timeout: config.tcp.io_timeout,
            }),
            control: Vec::new(),
            bulk: Vec::new(),
            transmit_buf: Vec::new(),
            spin: config.tcp.spin,
            device_wait_spin: config.device_wait_spin.max(config.tcp.spin),
            stripes: None,
            stripes_to_open: None,
            stripe_min_bytes: config.stripe_min_bytes,
            shared_host: None,
            auth_pending: None,
            content_store: false,
            compressed_bulk: false,
            compression: Compression::default(),
            resume_with: None,
            acking: false,
            stripes_stale: false,
            range_windows: false,
        };
        // Over TCP (not shared memory or RDMA, where bytes cost less than hashing them).
        let wants_content_store = !worker.contains("://") && config.content_store.unwrap_or_else(|| !is_loopback(worker));
        let wants_compression = !worker.contains("://") && config.compression.unwrap_or_else(|| !is_loopback(worker));
        // The main connection over TCP or TLS outlives a break (same-host and RDMA
        // connections, stripes and the callback channel are not resumed).
        let resumable = config.resume && extra_features == 0 && !worker.contains("://");
        let client_name = format!("{} pid {}", std::env::args().next().unwrap_or_else(|| "hip-app".into()), std::process::id());
        // Only the main connection of a plain TCP client looks for a worker on its machine
        // (TLS stays TLS; a callback channel carries no bulk).
        let same_host = same_host_identity(worker, config).filter(|_| extra_features == 0);
        let hello = wire::Hello {
            min_version: proto_core::header::MIN_PROTOCOL_VERSION,
            max_version: proto_core::PROTOCOL_VERSION,
            features: wire::features::FIRE_AND_FORGET
                | wire::features::BULK_STREAMING
                | if extra_features == 0 && config.stripes >= 2 { wire::features::STRIPED_BULK } else { 0 }
                | if cfg!(feature = "rdma") { wire::features::RDMA } else { 0 }
                | if config.client_alloc { wire::features::CLIENT_ALLOCATION } else { 0 }
                | if wants_content_store && extra_features == 0 { wire::features::CONTENT_STORE } else { 0 }
                | if wants_compression && extra_features == 0 { wire::features::COMPRESSED_BULK } else { 0 }
                | if extra_features == 0 { wire::features::TRANSFER_SOURCE | wire::features::TRANSFER_PULL } else { 0 }
                | if same_host.is_some() || descriptors.is_some() { wire::features::SHARED_MEMORY } else { 0 }
                | if resumable { wire::features::RESUME } else { 0 }
                | extra_features,
            client_name: client_name.as_str().into(),
            resume_session,
            // The token never crosses the wire: the worker refuses one here.
            auth_token: Default::default(),
        };
        let w = conn.hello(hello).map_err(|e| version_mismatch(e, worker, "client libamdhip64"))?;
        tracing::info!(
            worker = %w.worker_name.as_str(),
            backend = %w.backend.as_str(),
            protocol = w.version,
            session = w.session_id,
            client_version = hip_remote_build_info::VERSION,
            "WELCOME"
        );
        let nonce = w.auth_challenge.0.to_vec();
        let auth = (w.features & wire::features::AUTH_REQUIRED != 0).then(|| {
            let cx = AuthContext {
                nonce: w.auth_challenge.0,
                session_id: w.session_id,
                client_name: &client_name,
                version: w.version,
                features: w.features,
            };
            config.token.as_deref().map(|token| auth_response(token.as_bytes(), &cx))
        });
        let welcome = WelcomeInfo::from_wire(&w);
        conn.content_store = welcome.features & wire::features::CONTENT_STORE != 0;
        conn.compressed_bulk = welcome.features & wire::features::COMPRESSED_BULK != 0;
        conn.session.handle_welcome(welcome, config.client_alloc);
        if conn.session.resumable() && resume_session == 0 {
            conn.resume_with = Some((worker.to_owned(), Box::new(config.clone())));
        }
        if conn.session.welcome().features & wire::features::SHARED_MEMORY != 0 {
            conn.shared_host = descriptors.map(SharedHost::new);
        }
        if let (Some(machine), true) = (same_host, conn.session.welcome().features & wire::features::SHARED_MEMORY != 0) {
            let proof = proto_core::auth::same_host_proof(&machine, conn.session.welcome().session_id, &nonce);
            // A worker that cannot answer leaves the client where it is.
            if let Ok(answer) = conn.same_host_offer(wire::SameHostOffer { proof: proof[..].into() }) {
                let socket = Some(answer.socket.as_str().to_owned()).filter(|s| !s.is_empty());
                conn.session.set_same_host_socket(socket);
            }
        }
        match auth {
            None => {}
            Some(None) => {
                return Err(CallError::new(
                    HipError::NOT_INITIALIZED,
                    format!("the hip-worker at {worker} requires authentication: set HIP_REMOTE_TOKEN to your token"),
                ))
            }
            Some(Some(response)) => {
                // Sent now, not waited for: the program's first call follows in the same
                // round trip, and the worker answers in order, so the reply (or refusal) is
                // read before that call's ([`Conn::receive_one`]).
                let req = Request::Authenticate(wire::Authenticate { response: response.as_slice().into() });
                let ticket = conn.transmit(&req, Expect::Reply, true)?;
                conn.auth_pending = Some((ticket, worker.to_string()));
            }
        }
        Ok(conn)
    }

    /// Submits `req` to the session and hands its frame to the transport: sent now
    /// (`send_now`) or queued behind fire-and-forget frames. Its ticket.
    fn transmit(&mut self, req: &Request<'_>, delivery: Expect, send_now: bool) -> Result<Ticket, CallError> {
        // Managed memory: the CPU's writes reach the device before work that may read them.
        self.before_request(req.opcode())?;
        self.bound_unacked()?;
        let out = self.session.submit(req, delivery)?;
        let ticket = out.ticket;
        let sent = if send_now { self.sink.send(out.head, out.bulk) } else { self.sink.queue(out.head, out.bulk) };
        if let Err(e) = sent {
            // Kept by the session: a resume sends it again.
            self.recover(e)?;
        }
        Ok(ticket)
    }

    /// Past the bound on requests kept for a resume, asks the worker to acknowledge them (a
    /// PING round trip: its reply shows every earlier request executed). Not while a reply
    /// is awaited: the wait for the PONG would take it from its waiter (that reply
    /// acknowledges as much).
    fn bound_unacked(&mut self) -> Result<(), CallError> {
        if self.acking || !self.session.needs_ack_before(0) || self.session.has_pending_replies() {
            return Ok(());
        }
        self.acking = true;
        let acked = self.ping(wire::Ping { nonce: 0, payload: Default::default() }).map(drop);
        self.acking = false;
        acked
    }

    /// The connection broke with `e`: resumes the session on a new connection where it can
    /// (the worker re-sends the replies lost with the old one, and gets again the requests it
    /// never read), else the error of a lost connection.
    fn recover(&mut self, e: TransportError) -> Result<(), CallError> {
        let Some((worker, config)) = self.resume_with.clone() else { return Err(transport_error(e)) };
        if let Some(ended) = self.session.ended() {
            return Err(ended.clone());
        }
        eprintln!("hip-remote: the connection to {worker} broke ({e}); resuming the session");
        let deadline = Instant::now() + RESUME_WINDOW;
        let mut backoff = RESUME_FIRST_BACKOFF;
        loop {
            match self.try_resume(&worker, &config) {
                Ok(()) => {
                    eprintln!("hip-remote: session resumed on a new connection to {worker}");
                    return Ok(());
                }
                Err(ResumeAttempt::Refused(e)) => {
                    self.resume_with = None;
                    return Err(e);
                }
                Err(ResumeAttempt::Again(_)) if Instant::now() + backoff < deadline => {
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(RESUME_MAX_BACKOFF);
                }
                Err(ResumeAttempt::Again(why)) => {
                    self.resume_with = None;
                    return Err(client_core::resume_failed(&format!("{worker} was not reached again within {} s: {why}", RESUME_WINDOW.as_secs())));
                }
            }
        }
    }

    /// One attempt: a new connection, the handshake, `Resume`, then the requests to send again.
    fn try_resume(&mut self, worker: &str, config: &ClientConfig) -> Result<(), ResumeAttempt> {
        let opened = connect_transport_with_descriptors(worker, config).map_err(|e| match e.kind() {
            // Nothing listens there: the worker has stopped, and its sessions with it.
            std::io::ErrorKind::ConnectionRefused => {
                ResumeAttempt::Refused(client_core::resume_failed(&format!("the worker at {worker} refuses connections (it has stopped): {e}")))
            }
            _ => ResumeAttempt::Again(format!("cannot connect to hip-worker at {worker}: {e}")),
        })?;
        let mut fresh =
            Self::handshake_on(opened, worker, config, 0, self.session.welcome().session_id).map_err(|e| ResumeAttempt::Again(e.message))?;
        let resumed = match fresh.resume(self.session.resume_request()) {
            Ok(resumed) => resumed,
            // The worker has not seen the old connection break yet.
            Err(e) if e.code == HipError::ILLEGAL_STATE || e.is_lost() => return Err(ResumeAttempt::Again(e.message)),
            Err(e) => return Err(ResumeAttempt::Refused(client_core::resume_failed(&e.message))),
        };
        if let Err(e) = self.session.handle_resumed(&resumed) {
            // The worker gave the session to this connection: end it rather than leave it
            // parked for the grace period.
            let _ = fresh.goodbye(wire::Empty {});
            return Err(ResumeAttempt::Refused(e));
        }
        // The new connection is this one's now (the replies the worker re-sends follow its
        // answer in the same stream); the broken halves go with `fresh`.
        std::mem::swap(&mut self.sink, &mut fresh.sink);
        std::mem::swap(&mut self.source, &mut fresh.source);
        self.source.set_wait_spin(self.spin);
        // Stripes are not resumed: large copies take this connection from the next one on
        // (a striped copy under way sees its stripes broken and ends first).
        self.stripes_stale = true;
        self.stripes_to_open = None;
        for (_, frame, head_len) in self.session.unacked_frames() {
            self.sink.queue(&frame[..head_len], &frame[head_len..]).map_err(|e| ResumeAttempt::Again(e.to_string()))?;
        }
        self.sink.flush().map_err(|e| ResumeAttempt::Again(e.to_string()))
    }

    /// Queues a device-to-host copy's request whose reply lands `len` bytes at `dst`
    /// (`rows`: scattered rows of a 2D copy; the transport may then not land it itself).
    ///
    /// # Safety
    /// `dst` must be valid for writes of the landing until its reply has been received.
    unsafe fn queue_landing(&mut self, req: &Request<'_>, landing: Landing, awaited: bool) -> Result<Ticket, CallError> {
        self.before_request(req.opcode())?;
        self.bound_unacked()?;
        let out = self.session.submit(req, Expect::Landing { landing, awaited })?;
        let ticket = out.ticket;
        if landing.rows.is_none() {
            // SAFETY: `dst` is writable for `len` bytes until the reply has been received
            // (caller contract).
            unsafe { self.sink.offer_landing(out.ticket.request_id(), landing.dst as *mut u8, landing.len) }.map_err(transport_error)?;
        }
        if let Err(e) = self.sink.queue(out.head, out.bulk) {
            self.recover(e)?;
        }
        Ok(ticket)
    }

    /// Sends queued fire-and-forget requests now.
    pub fn flush(&mut self) -> Result<(), CallError> {
        match self.sink.flush() {
            Ok(()) => Ok(()),
            Err(e) => self.recover(e),
        }
    }

    /// Runs `f`, a call that waits for device work, with the reader spinning for the device
    /// wait spin (`spin`: false keeps the usual one, for `hipDeviceScheduleBlockingSync`).
    pub fn waiting_for_device<R>(&mut self, spin: bool, f: impl FnOnce(&mut Self) -> R) -> R {
        if !spin || self.device_wait_spin == self.spin {
            return f(self);
        }
        self.source.set_wait_spin(self.device_wait_spin);
        let result = f(self);
        self.source.set_wait_spin(self.spin);
        result
    }

    /// The deferred error of an earlier fire-and-forget request, once.
    pub fn take_deferred(&mut self) -> Option<HipError> {
        self.session.take_deferred()
    }

    /// The error with which the worker ended the session, if it did: every pending and later
    /// call fails with it.
    pub fn ended_by_worker(&self) -> Option<&CallError> {
        self.session.ended()
    }

    /// Stream and event handles chosen here.
    pub fn client_handles(&mut self) -> &mut ClientHandles {
        self.session.client_handles()
    }

    /// Device memory placed here (`hipMalloc` without a round trip).
    pub fn client_memory(&mut self) -> &mut ClientMemory {
        self.session.client_memory()
    }

    /// Keeps the session's state that is read without the connection in `published` (see
    /// [`client_core::ClientSession::publish_to`]): the owner made it before the connection.
    pub fn publish_to(&mut self, published: std::sync::Arc<client_core::published::Published>) {
        self.session.publish_to(published);
    }

    /// Stream captures begun on this session and not ended.
    pub fn captures(&self) -> &client_core::capture::CaptureCount {
        self.session.captures()
    }

    /// Dependency arrays handed to the application by capture queries.
    pub fn dependency_arrays(&mut self) -> &mut client_core::capture::DependencyArrays {
        self.session.dependency_arrays()
    }

    /// Stream attributes kept on the client (CU masks, synchronization policies).
    pub fn streams(&mut self) -> &mut client_core::streams::StreamTable {
        self.session.streams()
    }

    /// Whether streams, events and small uploads go without a round trip on this connection.
    pub fn without_round_trip(&self) -> bool {
        self.session.without_round_trip()
    }

    /// Client allocation ranges from now on in each device's window ([`range_window`]): the
    /// connection is one of a device list of several workers.
    pub fn use_range_windows(&mut self) {
        self.range_windows = true;
    }

    /// What the worker told us in WELCOME.
    pub fn welcome(&self) -> &WelcomeInfo {
        self.session.welcome()
    }

    /// `hipMalloc` of `size` bytes on `device` placed here ([`client_core::client_memory`]):
    /// the address, or `None` where the worker does not allow it (the caller asks the worker).
    /// Posted while the free-memory budget allows; otherwise the worker's answer is awaited,
    /// so running out of memory is reported here.
    pub fn client_malloc(&mut self, device: u32, size: u64) -> Result<Option<u64>, CallError> {
        if !self.session.without_round_trip() || size == 0 || self.session.client_memory().refused(device) {
            return Ok(None);
        }
        if self.session.client_memory().range(device).is_none() {
            // First use on this device: one round trip reserves the range (refused where the
            // backend has no virtual memory management; hipMalloc then always waits).
            let reserved = if self.range_windows {
                let (hint, window) = range_window(device);
                // A range outside its window could overlap another worker's memory: such a
                // device's hipMalloc goes to the worker (with its collision check) instead.
                self.client_range_reserve_at(wire::ClientRangeAt { device, hint, max_len: window })
                    .map(|r| (r.base >= hint && r.base.saturating_add(r.len) <= hint + window).then_some(r))
            } else {
                self.client_range_reserve(wire::DeviceRef { device }).map(Some)
            };
            let range = match reserved {
                Ok(r) => r.map(|r| DeviceRange::new(r.base, r.len, r.granularity, r.free)),
                Err(e) if e.is_lost() => return Err(e),
                Err(_) => None,
            };
            self.session.client_memory().reserved(device, range);
        }
        let Some(range) = self.session.client_memory().range(device) else { return Ok(None) };
        // A full range (fragmented past its four times the device's memory): the worker places it.
        let Some(ptr) = range.allocate(size) else { return Ok(None) };
        let post = range.may_post(size);
        let req = wire::MallocAt { device, ptr, size };
        if post {
            range.posted(size);
            self.post::<calls::MallocAt>(req)?;
            return Ok(Some(ptr));
        }
        let placed = self.malloc_at(req);
        let measured = placed.as_ref().ok().map(|_| self.client_range_reserve(wire::DeviceRef { device }));
        let range = self.session.client_memory().range(device).expect("reserved above");
        match (placed, measured) {
            (Err(e), _) => {
                range.release(ptr);
                Err(e)
            }
            (Ok(_), Some(Ok(r))) => {
                range.measured(r.free);
                Ok(Some(ptr))
            }
            (Ok(_), _) => Ok(Some(ptr)),
        }
    }

    /// `hipFree` of memory placed here: posted (the worker still frees it in order, after
    /// the work queued before), or awaited where other processes may be told it is gone
    /// (shared through IPC: its handle must open no more once hipFree returns). Whether
    /// `ptr` was such memory.
    pub fn client_free(&mut self, ptr: u64) -> Result<bool, CallError> {
        let Some(device) = self.session.client_memory().owner(ptr) else { return Ok(false) };
        let range = self.session.client_memory().range(device).expect("owner found it");
        let shared = range.shared(ptr);
        range.release(ptr);
        if shared {
            self.free_at(wire::Free { ptr })?;
            if let Some(e) = self.take_deferred() {
                return Err(CallError::new(e, "an earlier asynchronous operation failed on the worker"));
            }
        } else {
            self.post::<calls::FreeAt>(wire::Free { ptr })?;
        }
        Ok(true)
    }

    /// Host-to-device copy of `src` to `dst`, split into chunks. With `sync`, returns once the
    /// worker has completed it (hipMemcpy), or, for a small copy on a connection that allows
    /// it ([`SMALL_UPLOAD_NO_WAIT_BYTES`]), once its bytes are sent: the worker completes a
    /// posted synchronous copy before it reads the next request, so whatever the application
    /// does next finds it done, and a failure is deferred to the next synchronising call.
    /// Otherwise it is queued on `stream`. `sent_is_enough(dst, len)` says whether nothing
    /// but the reply would report what the application must hear (the layers above know:
    /// captures, the process's allocations; [`crate::state::copy::sent_is_enough`]; the
    /// session's managed mirrors the driver asks itself).
    pub fn upload(&mut self, dst: u64, src: &[u8], stream: u64, sync: bool, sent_is_enough: SentIsEnough) -> Result<(), CallError> {
        if !self.content_store || src.len() < CONTENT_ADDRESSED_MIN_BYTES {
            return self.upload_bytes(dst, src, stream, sync, sent_is_enough);
        }
        // Named by hash first: a worker that holds these bytes for our tenant copies them
        // itself (one round trip, no bytes); else they go as usual and the worker keeps them.
        let hash = content_hash(src);
        let req = wire::MemcpyHtoDByHash { dst, len: src.len() as u64, stream, sync, hash: hash[..].into() };
        if self.memcpy_htod_by_hash(req)?.found {
            if sync {
                self.after_sync()?;
            }
            return Ok(());
        }
        self.upload_bytes(dst, src, stream, sync, sent_is_enough)?;
        self.post::<calls::ContentRemember>(wire::ContentRemember { src: dst, len: src.len() as u64, stream, hash: hash[..].into() })
    }

    /// Loads the module image `code` onto `device`: its worker handle. An image of at least
    /// `CONTENT_ADDRESSED_MIN_BYTES` on a connection with the content store is named by its
    /// hash first: a worker that keeps it for our tenant loads it without the bytes (a program
    /// run again, or another process of the tenant); else the image goes with the load and
    /// the worker keeps it.
    pub fn load_module(&mut self, device: u32, format: wire::ModuleFormat, origin: &str, code: &[u8]) -> Result<u64, CallError> {
        if !self.content_store || code.len() < CONTENT_ADDRESSED_MIN_BYTES {
            return Ok(self.module_load(wire::ModuleLoad { device, format, origin: origin.into(), image: Bulk(code) })?.module);
        }
        let hash = content_hash(code);
        let named = wire::ModuleLoadByHash { device, format, origin: origin.into(), len: code.len() as u64, hash: hash[..].into() };
        let found = self.module_load_by_hash(named)?;
        if found.found {
            return Ok(found.module);
        }
        let req = wire::ModuleLoadKeep { device, format, origin: origin.into(), hash: hash[..].into(), image: Bulk(code) };
        Ok(self.module_load_keep(req)?.module)
    }

    /// A module load posted under a handle chosen here (`ModuleLoadAt`), where the worker
    /// allows it and the image goes as it is (not by hash): `None` means load it waiting.
    /// A failure of the load is the connection's deferred error, with the load's status.
    pub fn post_module_load(&mut self, device: u32, format: wire::ModuleFormat, origin: &str, code: &[u8]) -> Result<Option<u64>, CallError> {
        if !self.without_round_trip() || (self.content_store && code.len() >= CONTENT_ADDRESSED_MIN_BYTES) {
            return Ok(None);
        }
        let Some(module) = self.client_handles().fresh(wire::CLIENT_MODULE_TAG) else { return Ok(None) };
        self.post::<calls::ModuleLoadAt>(wire::ModuleLoadAt { module, device, format, origin: origin.into(), image: Bulk(code) })?;
        Ok(Some(module))
    }

    /// A function lookup posted under a handle chosen here (`ModuleGetFunctionAt`) in a module
    /// loaded the same way; `None`: look it up waiting. Whether to post it at all is the
    /// caller's choice (`HIP_REMOTE_POSTED_LOOKUPS`, what the module's image shows).
    pub fn post_function_lookup(&mut self, module: u64, name: &str) -> Result<Option<u64>, CallError> {
        if module & wire::CLIENT_HANDLE_TAG_MASK != wire::CLIENT_MODULE_TAG || !self.without_round_trip() {
            return Ok(None);
        }
        let Some(function) = self.client_handles().fresh(wire::CLIENT_FUNCTION_TAG) else { return Ok(None) };
        self.post::<calls::ModuleGetFunctionAt>(wire::FunctionAt { module, function, name: name.into() })?;
        Ok(Some(function))
    }

    fn upload_bytes(&mut self, dst: u64, src: &[u8], stream: u64, sync: bool, sent_is_enough: SentIsEnough) -> Result<(), CallError> {
        if self.compressed_bulk && src.len() >= COMPRESS_MIN_BYTES {
            if let Some(done) = self.upload_compressed(dst, src, stream, sync) {
                return done;
            }
        }
        let started = Instant::now();
        let sent = self.upload_uncompressed(dst, src, stream, sync, sent_is_enough);
        if self.compressed_bulk && sync && sent.is_ok() {
            // What the link does with bytes as they are, for the compression policy.
            self.compression.link_measured(src.len(), started.elapsed().as_secs_f64());
        }
        sent
    }

    /// A host-to-device copy sent compressed, when [`Compression`] finds that faster (a
    /// sample of the bytes compressed and timed); `None`: send it as it is.
    fn upload_compressed(&mut self, dst: u64, src: &[u8], stream: u64, sync: bool) -> Option<Result<(), CallError>> {
        let sample = &src[..src.len().min(COMPRESS_SAMPLE_BYTES)];
        let started = Instant::now();
        let packed = lz4_flex::block::compress(sample);
        if !self.compression.compress(src.len(), sample.len(), packed.len(), started.elapsed().as_secs_f64()) {
            return None;
        }
        let mut chunks = src.chunks(DEFAULT_COPY_CHUNK).enumerate().peekable();
        let sent = (|| {
            while let Some((i, chunk)) = chunks.next() {
                let wait = sync && chunks.peek().is_none();
                let at = dst + (i * DEFAULT_COPY_CHUNK) as u64;
                let packed = lz4_flex::block::compress(chunk);
                if packed.len() >= chunk.len() {
                    // This part does not shrink: as it is.
                    let req = wire::MemcpyHtoD { dst: at, stream, sync: wait, data: Bulk(chunk) };
                    if wait {
                        self.memcpy_htod(req)?;
                    } else {
                        self.post::<calls::MemcpyHtoD>(req)?;
                    }
                    continue;
                }
                let req = wire::MemcpyHtoDCompressed { dst: at, len: chunk.len() as u64, stream, sync: wait, data: Bulk(&packed) };
                if wait {
                    self.memcpy_htod_compressed(req)?;
                } else {
                    self.post::<calls::MemcpyHtoDCompressed>(req)?;
                }
            }
            if sync {
                // The last part's reply carries any failure of the earlier ones (aux).
                if let Some(e) = self.take_deferred() {
                    return Err(CallError::new(e, "host-to-device copy failed on the worker"));
                }
                self.after_sync()?;
            }
            Ok(())
        })();
        Some(sent)
    }

    fn upload_uncompressed(&mut self, dst: u64, src: &[u8], stream: u64, sync: bool, sent_is_enough: SentIsEnough) -> Result<(), CallError> {
        if src.is_empty() {
            return Ok(());
        }
        // Managed mirrors are pulled back only after a reply.
        let no_wait = sync
            && self.session.without_round_trip()
            && src.len() <= SMALL_UPLOAD_NO_WAIT_BYTES
            && self.session.managed().is_empty()
            && sent_is_enough(dst, src.len());
        // Shared memory first (unless the copy may go without waiting: then its bytes go
        // inline, as a copy from anywhere else does, rather than a request that must wait for
        // the device to read the shared pages), then the stripes; each answers `None` when it
        // does not apply.
        let shared = if no_wait { None } else { self.upload_shared(dst, src, stream, sync) };
        let done = match shared {
            Some(result) => Some(result),
            None if self.striped(src.len()) => self.upload_striped(dst, src, stream, sync),
            None => None,
        };
        if let Some(result) = done {
            result?;
            if sync {
                if let Some(e) = self.take_deferred() {
                    return Err(CallError::new(e, "host-to-device copy failed on the worker"));
                }
                self.after_sync()?;
            }
            return Ok(());
        }
        let mut chunks = src.chunks(DEFAULT_COPY_CHUNK).enumerate().peekable();
        while let Some((i, chunk)) = chunks.next() {
            let last = chunks.peek().is_none();
            // Only the last chunk says `sync`: the worker completes a posted one before going on.
            let req = wire::MemcpyHtoD { dst: dst + (i * DEFAULT_COPY_CHUNK) as u64, stream, sync: sync && last, data: Bulk(chunk) };
            if no_wait && last {
                // Sent, not just queued: the source may be reused on return and nothing later
                // depends on another call to push it out.
                self.post::<calls::MemcpyHtoD>(req)?;
                self.flush()?;
            } else if sync && last {
                // The last chunk's reply also carries any failure of the earlier ones (aux),
                // which this copy's error reports: none is left for a later call.
                let last = self.memcpy_htod(req);
                let earlier = self.take_deferred();
                last?;
                if let Some(e) = earlier {
                    return Err(CallError::new(e, "host-to-device copy failed on the worker"));
                }
                self.after_sync()?;
            } else {
                self.post::<calls::MemcpyHtoD>(req)?;
            }
        }
        Ok(())
    }

    /// Device-to-host copy into `dst`. All chunk requests are sent at once (pipelined); their
    /// data is read straight from the socket into `dst`. With `wait`, returns once every byte
    /// has landed; otherwise the bytes land during a later call that reads replies (at the
    /// latest the stream's or event's synchronisation), as HIP's async copy semantics allow.
    ///
    /// # Safety
    /// `dst` must be valid for `len` bytes of writes until the copy has landed.
    pub unsafe fn download(&mut self, dst: *mut u8, src: u64, len: usize, stream: u64, wait: bool) -> Result<(), CallError> {
        // SAFETY: `dst` is valid for `len` bytes of writes until the copy has landed (caller
        // contract); a shared copy names memory the worker writes, a staged one lands here
        // before it returns.
        if let Some(result) = unsafe { self.download_shared(dst, src, len, stream, wait) } {
            result?;
            return if wait { self.after_sync() } else { Ok(()) };
        }
        if self.striped(len) {
            // SAFETY: `dst` is valid for `len` bytes of writes until the copy has landed
            // (caller contract), which the striped copy does before it returns.
            if let Some(result) = unsafe { self.download_striped(dst, src, len, stream) } {
                result?;
                return if wait { self.after_sync() } else { Ok(()) };
            }
        }
        let mut ids = Vec::with_capacity(len.div_ceil(DEFAULT_COPY_CHUNK));
        let mut offset = 0;
        while offset < len {
            let n = (len - offset).min(DEFAULT_COPY_CHUNK);
            let req = calls::MemcpyDtoH::wrap(wire::MemcpyDtoH { src: src + offset as u64, len: n as u64, stream });
            let landing = Landing { dst: dst as usize + offset, len: n, rows: None };
            // SAFETY: the caller keeps `dst` valid for `len` bytes until the copy has landed,
            // which is when this request's reply has been received.
            ids.push(unsafe { self.queue_landing(&req, landing, wait) }?);
            offset += n;
        }
        self.flush()?;
        if !wait {
            return Ok(());
        }
        self.wait_landings(&ids)?;
        self.after_sync()
    }

    /// Whether a copy of `len` bytes goes over the stripes (opened by the first such copy).
    fn striped(&mut self, len: usize) -> bool {
        if std::mem::take(&mut self.stripes_stale) {
            self.stripes = None;
        }
        if len < self.stripe_min_bytes {
            return false;
        }
        if let Some(config) = self.stripes_to_open.take() {
            self.stripes = Stripes::open(self, &config);
        }
        self.stripes.is_some()
    }

    /// Closes the stripes after one broke: copies take the main connection from now on.
    fn drop_stripes(&mut self, why: &str) {
        eprintln!("hip-remote: a stripe connection failed ({why}); large copies take the main connection from now on");
        self.stripes = None;
    }

    /// [`Self::upload`] over the stripes: the request on the main connection, the bytes in
    /// chunks over the stripes, one reply once the worker has them all. `None`: a stripe
    /// broke, the stripes are closed and the copy is to be sent the usual way.
    fn upload_striped(&mut self, dst: u64, src: &[u8], stream: u64, sync: bool) -> Option<Result<(), CallError>> {
        let stripes = self.stripes.as_mut()?;
        let (copy_id, count) = (stripes.next_copy_id(), stripes.count());
        // SAFETY: `src` is borrowed for this whole call, and `wait` below returns only once
        // every stripe is done reading it.
        let pending = unsafe { stripes.start_upload(copy_id, src.as_ptr(), src.len()) };
        let req = wire::MemcpyHtoDStriped { dst, len: src.len() as u64, stream, sync, copy_id, stripes: count };
        let reply = self.memcpy_htod_striped(req).map(drop);
        let since = Instant::now();
        let outcome = pending.wait();
        profile::waited(|| "striped host-to-device data".into(), since);
        match outcome {
            StripedResult::Done => Some(reply),
            StripedResult::Failed(e) => Some(reply.and(Err(e))),
            StripedResult::Broken(why) => {
                self.drop_stripes(&why);
                None
            }
        }
    }

    /// [`Self::download`] over the stripes, complete on return. `None`: a stripe broke, the
    /// stripes are closed and the copy is to be made the usual way.
    ///
    /// # Safety
    /// `dst` must be valid for `len` bytes of writes during the call.
    unsafe fn download_striped(&mut self, dst: *mut u8, src: u64, len: usize, stream: u64) -> Option<Result<(), CallError>> {
        let stripes = self.stripes.as_mut()?;
        let (copy_id, count) = (stripes.next_copy_id(), stripes.count());
        // SAFETY: `dst` is writable for `len` bytes during this call (caller contract), and
        // `wait` below returns only once every stripe is done writing it.
        let pending = unsafe { stripes.start_download(copy_id, dst, len) };
        let reply = self.memcpy_dtoh_striped(wire::MemcpyDtoHStriped { src, len: len as u64, stream, copy_id, stripes: count }).map(drop);
        let since = Instant::now();
        let outcome = pending.wait();
        profile::waited(|| "striped device-to-host data".into(), since);
        match outcome {
            StripedResult::Done => Some(reply),
            StripedResult::Failed(e) => Some(reply.and(Err(e))),
            StripedResult::Broken(why) => {
                self.drop_stripes(&why);
                None
            }
        }
    }

    /// Host-to-device 2D copy: `height` rows of `width` bytes, `src_pitch` apart in `src`, to
    /// rows `dst_pitch` apart from `dst`. Whole rows travel packed, as many per request as
    /// fit in a copy chunk; rows wider than a chunk go as 1D copies. With `sync`, returns once
    /// the worker has completed the copy.
    ///
    /// # Safety
    /// `src` must be valid for reads of the rows.
    #[allow(clippy::too_many_arguments)] // the 2D copy's own parameters, as HIP has them
    pub unsafe fn upload_2d(
        &mut self,
        dst: u64,
        dst_pitch: u64,
        src: *const u8,
        src_pitch: usize,
        width: usize,
        height: usize,
        stream: u64,
        sync: bool,
        sent_is_enough: SentIsEnough,
    ) -> Result<(), CallError> {
        // SAFETY: row `i` of the source is `width` readable bytes at `src + i * src_pitch`
        // (caller contract).
        let row = |i: usize| unsafe { std::slice::from_raw_parts(src.add(i * src_pitch), width) };
        if width > DEFAULT_COPY_CHUNK {
            for i in 0..height {
                self.upload(dst + i as u64 * dst_pitch, row(i), stream, sync && i + 1 == height, sent_is_enough)?;
            }
            return Ok(());
        }
        let rows_per_chunk = DEFAULT_COPY_CHUNK / width;
        let mut packed = Vec::with_capacity(rows_per_chunk.min(height) * width);
        let mut first = 0;
        while first < height {
            let n = rows_per_chunk.min(height - first);
            let data: &[u8] = if src_pitch == width {
                // Adjacent rows are already packed: sent straight from the application.
                // SAFETY: with `src_pitch == width`, rows `first..first + n` are `n * width`
                // adjacent readable bytes (caller contract).
                unsafe { std::slice::from_raw_parts(src.add(first * width), n * width) }
            } else {
                packed.clear();
                (first..first + n).for_each(|i| packed.extend_from_slice(row(i)));
                &packed
            };
            let last = first + n == height;
            let req =
                wire::MemcpyHtoD2D { dst: dst + first as u64 * dst_pitch, pitch: dst_pitch, width: width as u64, stream, sync, data: Bulk(data) };
            if sync && last {
                // The last chunk's reply also carries any failure of the earlier ones (aux).
                self.memcpy_htod_2d(req)?;
                if let Some(e) = self.take_deferred() {
                    return Err(CallError::new(e, "host-to-device 2D copy failed on the worker"));
                }
            } else {
                self.post::<calls::MemcpyHtoD2D>(req)?;
            }
            first += n;
        }
        Ok(())
    }

    /// Device-to-host 2D copy into rows `dst_pitch` apart from `dst`. Requests of whole rows
    /// (packed replies, scattered on arrival) are pipelined like [`Self::download`]; rows
    /// wider than a copy chunk go as 1D copies.
    ///
    /// # Safety
    /// `dst` must be valid for writes of the rows until the copy has landed.
    #[allow(clippy::too_many_arguments)] // the 2D copy's own parameters, as HIP has them
    pub unsafe fn download_2d(
        &mut self,
        dst: *mut u8,
        dst_pitch: usize,
        src: u64,
        src_pitch: u64,
        width: usize,
        height: usize,
        stream: u64,
        wait: bool,
    ) -> Result<(), CallError> {
        if width > DEFAULT_COPY_CHUNK {
            for i in 0..height {
                // SAFETY: row `i` of `dst` is `width` writable bytes (caller contract).
                unsafe { self.download(dst.add(i * dst_pitch), src + i as u64 * src_pitch, width, stream, wait && i + 1 == height)? };
            }
            return Ok(());
        }
        let rows_per_chunk = DEFAULT_COPY_CHUNK / width;
        let mut ids = Vec::with_capacity(height.div_ceil(rows_per_chunk));
        let mut first = 0;
        while first < height {
            let n = rows_per_chunk.min(height - first);
            let req = calls::MemcpyDtoH2D::wrap(wire::MemcpyDtoH2D {
                src: src + first as u64 * src_pitch,
                pitch: src_pitch,
                width: width as u64,
                height: n as u64,
                stream,
            });
            // SAFETY: row `first` of `dst` lies inside the caller's buffer.
            let start = unsafe { dst.add(first * dst_pitch) };
            let adjacent = dst_pitch == width || n == 1;
            let landing = Landing { dst: start as usize, len: n * width, rows: (!adjacent).then_some((width, dst_pitch)) };
            // SAFETY: the rows (`width` bytes every `dst_pitch`, adjacent when `rows` is
            // `None`) are writable until the copy has landed (caller contract).
            ids.push(unsafe { self.queue_landing(&req, landing, wait) }?);
            first += n;
        }
        self.flush()?;
        if wait {
            self.wait_landings(&ids)?;
        }
        Ok(())
    }

    /// Waits until the replies of `ids` (awaited landings) have landed; the first failure
    /// among them is returned.
    fn wait_landings(&mut self, ids: &[Ticket]) -> Result<(), CallError> {
        let since = Instant::now();
        let waited = self.wait_landings_since(ids, since);
        profile::waited(|| "device-to-host data".into(), since);
        waited
    }

    fn wait_landings_since(&mut self, ids: &[Ticket], since: Instant) -> Result<(), CallError> {
        self.session.arm_deadline(since);
        let mut first_error = None;
        for &id in ids {
            while self.session.is_pending(id) {
                match self.receive_one()?.0 {
                    Inbound::Failed(failed, e) if ids.contains(&failed) => {
                        first_error.get_or_insert(e);
                    }
                    other => self.defer_unclaimed(other),
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The transport's registry of long-lived memory, if it has one.
    pub fn memory_registry(&self) -> Option<std::sync::Arc<dyn transport_core::MemoryRegistry>> {
        self.sink.memory_registry()
    }

    /// Whether asynchronous copies are still to land.
    pub fn has_pending_landings(&self) -> bool {
        self.session.has_pending_landings()
    }

    /// Reads replies until `ticket`'s arrives; its control part and bulk are then in
    /// `self.control` and `self.bulk`.
    fn wait_reply(&mut self, ticket: Ticket) -> Result<FrameHeader, CallError> {
        loop {
            match self.receive_one()? {
                (Inbound::Reply(t, outcome), header) if t == ticket => return outcome.map(|()| header),
                (other, _) => self.defer_unclaimed(other),
            }
        }
    }

    /// A frame nobody in this wait asked for: a failure in it is reported by the next
    /// synchronising call.
    fn defer_unclaimed(&mut self, inbound: Inbound) {
        if let Inbound::Failed(_, e) | Inbound::Reply(_, Err(e)) = inbound {
            self.session.defer(e.code);
        }
    }

    fn parse_wanted(&self, opcode: u16, header: &FrameHeader) -> Result<Response<'_>, CallError> {
        Response::parse(opcode, &self.control, &self.bulk)
            .map_err(|e| CallError::new(HipError::UNKNOWN, format!("malformed reply to {:#06x} (header opcode {:#06x}): {e}", opcode, header.opcode)))
    }

    /// Sends `reqs` back to back and then collects their replies: one round trip for all
    /// (e.g. the functions of a freshly loaded fat binary). Replies may come in any order;
    /// `on_reply(i, response)` sees request `i`'s. The outer error is a failed connection; the
    /// inner ones are the requests' own error replies, each in its request's place.
    pub fn call_batch<'r, C: Call, R>(
        &mut self,
        reqs: impl IntoIterator<Item = C::Request<'r>>,
        mut on_reply: impl FnMut(usize, C::Reply<'_>) -> R,
    ) -> Result<Vec<Result<R, CallError>>, CallError> {
        let mut ids = Vec::new();
        for req in reqs {
            ids.push(self.transmit(&C::wrap(req), Expect::Reply, false)?);
        }
        self.flush()?;
        let since = Instant::now();
        self.session.arm_deadline(since);
        let mut results: Vec<Option<Result<R, CallError>>> = ids.iter().map(|_| None).collect();
        let mut open = ids.clone();
        while !open.is_empty() {
            match self.receive_one()? {
                (Inbound::Reply(id, outcome), header) if open.contains(&id) => {
                    let Some(i) = ids.iter().position(|&x| x == id) else { continue };
                    results[i] = Some(match outcome {
                        Ok(()) => self.parse_wanted(C::OPCODE.raw(), &header).and_then(|r| match C::unwrap(r) {
                            Some(reply) => Ok(on_reply(i, reply)),
                            None => Err(CallError::new(HipError::UNKNOWN, format!("worker answered {} with another reply", C::OPCODE))),
                        }),
                        Err(e) => Err(e),
                    });
                    open.retain(|&x| x != id);
                }
                (other, _) => self.defer_unclaimed(other),
            }
        }
        profile::waited(|| format!("{} ×{} (one batch)", C::OPCODE, ids.len()), since);
        Ok(results.into_iter().map(|r| r.unwrap_or_else(|| Err(CallError::new(HipError::UNKNOWN, "reply missing")))).collect())
    }

    /// Sends `first` and `second` back to back, then reads both replies: one round trip for
    /// two calls (the device count with device 0's properties). The outer error is the
    /// first call's or a failed connection; the second call's own failure is the inner one.
    pub fn call_pair<A: Call, B: Call, RA, RB>(
        &mut self,
        first: A::Request<'_>,
        second: B::Request<'_>,
        on_first: impl FnOnce(A::Reply<'_>) -> RA,
        on_second: impl FnOnce(B::Reply<'_>) -> RB,
    ) -> Result<(RA, Result<RB, CallError>), CallError> {
        let ta = self.transmit(&A::wrap(first), Expect::Reply, false)?;
        let tb = self.transmit(&B::wrap(second), Expect::Reply, true)?;
        let since = Instant::now();
        self.session.arm_deadline(since);
        let wrong = |op: Opcode| CallError::new(HipError::UNKNOWN, format!("worker answered {op} with another reply"));
        let ra = match self.wait_reply(ta) {
            Ok(header) => self.parse_wanted(A::OPCODE.raw(), &header).and_then(|r| A::unwrap(r).map(on_first).ok_or_else(|| wrong(A::OPCODE))),
            Err(e) => Err(e),
        };
        // The second reply is read whatever the first said, so no failure of it is left to
        // surface in a later call.
        let rb = match self.wait_reply(tb) {
            Ok(header) => self.parse_wanted(B::OPCODE.raw(), &header).and_then(|r| B::unwrap(r).map(on_second).ok_or_else(|| wrong(B::OPCODE))),
            Err(e) => Err(e),
        };
        profile::waited(|| format!("{} + {} (one round trip)", A::OPCODE, B::OPCODE), since);
        Ok((ra?, rb))
    }

    /// Waits until the next frame begins, running the session's timers: each heartbeat of
    /// silence sends its PING; silence for the liveness timeout, or the call's deadline
    /// passing, ends the connection. When the frame began. One clock read before the wait and
    /// one after it: every call that waits pays for them.
    fn await_frame(&mut self) -> Result<Instant, CallError> {
        let mut now = Instant::now();
        self.session.awaiting_frame(now);
        loop {
            self.session.handle_timeout(now)?;
            while let Some(len) = self.session.poll_transmit(now, &mut self.transmit_buf) {
                if let Err(e) = self.sink.send(&self.transmit_buf[..len], &[]) {
                    self.recover(e)?;
                }
            }
            let wait = self.session.poll_timeout().map_or(Duration::ZERO, |at| at.saturating_duration_since(now));
            let readable = self.source.wait_readable(wait);
            now = Instant::now();
            match readable {
                Ok(true) => return Ok(now),
                Ok(false) => {}
                Err(e) => {
                    self.recover(e)?;
                    now = Instant::now();
                    self.session.awaiting_frame(now);
                }
            }
        }
    }

    /// Reads one frame and does what the session says with it: land copy data, print kernel
    /// output, keep an awaited reply's control part and bulk in `self.control` and
    /// `self.bulk`, or skip it. What the session made of it, and its header.
    fn receive_one(&mut self) -> Result<(Inbound, FrameHeader), CallError> {
        loop {
            let began = self.await_frame()?;
            let head = match self.source.recv_head() {
                Ok(head) => head,
                Err(e) => {
                    self.recover(e)?;
                    continue;
                }
            };
            let header = head.header;
            self.control.clear();
            self.control.extend_from_slice(head.control);
            let inbound = self.session.handle_frame(began, &header, &self.control)?;
            if let (Some((ticket, worker)), Inbound::Reply(id, outcome)) = (&self.auth_pending, &inbound) {
                if id == ticket {
                    let refused = outcome.as_ref().err().map(|e| {
                        CallError::new(HipError::NOT_INITIALIZED, format!("the hip-worker at {worker} refused HIP_REMOTE_TOKEN: {}", e.message))
                    });
                    self.auth_pending = None;
                    if let Some(e) = refused {
                        return Err(e);
                    }
                }
            }
            let read = match &inbound {
                Inbound::Reply(_, Ok(())) => {
                    self.bulk.clear();
                    self.bulk.resize(header.bulk_len as usize, 0);
                    self.source.recv_bulk(&mut self.bulk)
                }
                Inbound::Land(_, landing) => self.land(landing),
                Inbound::KernelOutput => {
                    // What kernels printed, sent ahead of a synchronize's reply: the program's
                    // own standard output, as a GPU runtime prints it.
                    let mut text = vec![0; header.bulk_len as usize];
                    let read = self.source.recv_bulk(&mut text);
                    if read.is_ok() {
                        print_kernel_output(&text);
                    }
                    read
                }
                Inbound::Reply(_, Err(_)) | Inbound::Failed(..) | Inbound::Skip => self.source.skip_bulk(),
            };
            match read {
                Ok(()) => return Ok((inbound, header)),
                Err(e) => {
                    // The frame's reply or landing is expected again: the resumed worker
                    // re-sends it whole.
                    self.session.restore_last();
                    self.recover(e)?;
                }
            }
        }
    }

    /// Reads a landing's bytes (the session checked their length) into the application's buffer.
    fn land(&mut self, landing: &Landing) -> Result<(), TransportError> {
        if let Some((width, pitch)) = landing.rows {
            let mut packed = vec![0; landing.len];
            self.source.recv_bulk(&mut packed)?;
            for (i, row) in packed.chunks_exact(width).enumerate() {
                // SAFETY: `dst` was handed to a HIP 2D copy call whose contract keeps its
                // rows (`width` bytes every `pitch`) valid until the copy is synchronised;
                // we are inside such a call now, under the connection lock.
                let out = unsafe { std::slice::from_raw_parts_mut((landing.dst + i * pitch) as *mut u8, width) };
                out.copy_from_slice(row);
            }
            return Ok(());
        }
        // SAFETY: `dst` was handed to a HIP copy call whose contract keeps the buffer
        // valid for `len` bytes until the copy is synchronised; we are inside such a call
        // (or a later synchronising one) now, under the connection lock.
        let dst = unsafe { std::slice::from_raw_parts_mut(landing.dst as *mut u8, landing.len) };
        self.source.recv_bulk(dst)
    }
}

/// Writes kernel output to the process's standard output, as a GPU runtime's device printf
/// does. Text the program printed itself comes first only if it flushed its own buffer.
/// Most kernel output held for [`take_kernel_output`] before the excess is dropped (with a
/// note in what is kept).
pub(crate) const MAX_CAPTURED_KERNEL_OUTPUT: usize = 4 << 20;
/// Whether kernel output is held for a worker's hip backend instead of printed.
static CAPTURE_KERNEL_OUTPUT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static CAPTURED_KERNEL_OUTPUT: std::sync::Mutex<Vec<u8>> = std::sync::Mutex::new(Vec::new());

/// Makes kernel output held for [`take_kernel_output`] rather than written to stdout.
pub(crate) fn capture_kernel_output(on: bool) {
    CAPTURE_KERNEL_OUTPUT.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// The kernel output held so far.
pub(crate) fn take_kernel_output() -> Vec<u8> {
    std::mem::take(&mut *CAPTURED_KERNEL_OUTPUT.lock().unwrap_or_else(|p| p.into_inner()))
}

fn print_kernel_output(text: &[u8]) {
    use std::io::Write;
    if CAPTURE_KERNEL_OUTPUT.load(std::sync::atomic::Ordering::Relaxed) {
        let mut held = CAPTURED_KERNEL_OUTPUT.lock().unwrap_or_else(|p| p.into_inner());
        let room = MAX_CAPTURED_KERNEL_OUTPUT.saturating_sub(held.len());
        held.extend_from_slice(&text[..text.len().min(room)]);
        if text.len() > room && room > 0 {
            held.extend_from_slice(b"\n[hip-remote: kernel output beyond 4 MiB between synchronizations was dropped]\n");
        }
        return;
    }
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text);
    let _ = out.flush();
}

impl Conn {
    /// A stream or event query that found the work complete synchronises like
    /// `hipStreamSynchronize`: managed memory the work wrote comes back (the query's reply is
    /// kept aside meanwhile).
    fn after_completed_query(&mut self, opcode: Opcode, header: &FrameHeader) -> Result<(), CallError> {
        let complete = match self.parse_wanted(opcode.raw(), header) {
            Ok(Response::StreamQuery(q) | Response::EventQuery(q)) => q.complete,
            _ => false,
        };
        if complete {
            let (control, bulk) = (self.control.clone(), self.bulk.clone());
            self.after_sync()?;
            (self.control, self.bulk) = (control, bulk);
        }
        Ok(())
    }
}

impl Caller for Conn {
    type Error = CallError;

    fn call<'s, C: Call>(&'s mut self, req: C::Request<'_>) -> Result<C::Reply<'s>, CallError> {
        let ticket = self.transmit(&C::wrap(req), Expect::Reply, true)?;
        let since = Instant::now();
        self.session.arm_deadline(since);
        let header = self.wait_reply(ticket);
        profile::waited(|| C::OPCODE.to_string(), since);
        let header = header?;
        if matches!(C::OPCODE, Opcode::StreamQuery | Opcode::EventQuery) {
            self.after_completed_query(C::OPCODE, &header)?;
        }
        let response = self.parse_wanted(C::OPCODE.raw(), &header)?;
        C::unwrap(response).ok_or_else(|| CallError::new(HipError::UNKNOWN, format!("worker answered {} with another reply", C::OPCODE)))
    }

    fn post<C: Call>(&mut self, req: C::Request<'_>) -> Result<(), CallError> {
        const { assert_postable::<C>() };
        self.transmit(&C::wrap(req), Expect::NoReply, false)?;
        if self.session.batch_queued(self.sink.pending()) == Flush::Now {
            self.flush()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::thread::JoinHandle;
    use transport_core::Liveness;
    use transport_tcp::TcpConfig;

    #[test]
    fn advertised_rdma_endpoint_becomes_a_reachable_address() {
        assert_eq!(rdma_target("10.0.0.5:18516", "gpu1:18515"), "rdma://10.0.0.5:18516");
        assert_eq!(rdma_target("0.0.0.0:18516", "gpu1.cluster:18515"), "rdma://gpu1.cluster:18516");
        assert_eq!(rdma_target("[::]:7000", "[fd00::2]:18515"), "rdma://[fd00::2]:7000");
    }

    /// What the fake worker does after WELCOME with the first request other than PING.
    #[derive(Clone, Copy)]
    enum Behaviour {
        /// Reads on but never sends another byte (a frozen process whose kernel still ACKs).
        Frozen,
        /// Sends a heartbeat (an id-0 PONG) every 200 ms for `busy`, then the reply
        /// (a worker busy in a long synchronize).
        BusyFor(Duration),
        /// Reads on, answers nothing, and counts every frame after HELLO (in the counter
        /// that otherwise counts PINGs).
        CountsFrames,
    }

    /// Sends a response; `false` once the client has gone.
    fn send_response(sink: &mut dyn FrameSink, request_id: u64, response: &Response<'_>) -> bool {
        let mut buf = vec![0u8; 4096];
        let frame = response.encode_frame(&mut buf, request_id, 0).expect("encode");
        sink.send(&buf[..frame.head_len], frame.bulk).is_ok()
    }

    /// An in-process worker that completes the handshake and then behaves as told; counts
    /// the PINGs it receives (every frame, for [`Behaviour::CountsFrames`]).
    fn fake_worker(behaviour: Behaviour, pings: Arc<AtomicUsize>) -> (String, JoinHandle<()>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let thread = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let (mut sink, mut source) = transport_tcp::tcp::split(stream, &TcpConfig { io_timeout: None, ..TcpConfig::default() }).unwrap();
            let mut served = false;
            loop {
                let Ok(head) = source.recv_head() else { return };
                let header = head.header;
                source.skip_bulk().unwrap();
                match proto_core::Opcode::from_u16(header.opcode) {
                    Some(proto_core::Opcode::Hello) => {
                        let welcome = wire::Welcome {
                            version: proto_core::PROTOCOL_VERSION,
                            features: 0,
                            session_id: 7,
                            resumed: false,
                            worker_name: "fake".into(),
                            backend: "none".into(),
                            auth_challenge: Default::default(),
                            rdma_endpoint: "".into(),
                            resume_secret: Default::default(),
                        };
                        assert!(send_response(&mut sink, header.request_id, &Response::Hello(welcome)));
                    }
                    _ if matches!(behaviour, Behaviour::CountsFrames) => {
                        pings.fetch_add(1, Ordering::SeqCst);
                    }
                    Some(proto_core::Opcode::Ping) => {
                        pings.fetch_add(1, Ordering::SeqCst);
                    }
                    _ if served => {}
                    _ => {
                        served = true;
                        if let Behaviour::BusyFor(busy) = behaviour {
                            let until = Instant::now() + busy;
                            while Instant::now() < until {
                                std::thread::sleep(Duration::from_millis(200));
                                let beat = wire::Pong { nonce: 0, worker_time_ns: 0, payload: Default::default() };
                                if !send_response(&mut sink, 0, &Response::Ping(beat)) {
                                    return;
                                }
                            }
                            let _ = send_response(&mut sink, header.request_id, &Response::GetDeviceCount(wire::DeviceCount { count: 3 }));
                        }
                    }
                }
            }
        });
        (addr, thread)
    }

    /// A worker that answers HELLO with an `UnsupportedVersion` error frame carrying
    /// `message`, in a frame header of protocol `header_version`.
    fn refusing_worker(header_version: u16, message: String) -> (String, JoinHandle<()>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let thread = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let (mut sink, mut source) = transport_tcp::tcp::split(stream, &TcpConfig { io_timeout: None, ..TcpConfig::default() }).unwrap();
            let head = source.recv_head().unwrap();
            let request_id = head.header.request_id;
            source.skip_bulk().unwrap();
            let reply = wire::ErrorReply { status: proto_core::Status::UNSUPPORTED_VERSION, message: message.as_str().into() };
            let meta = proto_core::frame::FrameMeta {
                opcode: proto_core::Opcode::Hello.raw(),
                flags: proto_core::Flags::RESPONSE | proto_core::Flags::ERROR,
                request_id,
                credits: 0,
                aux: 0,
            };
            let mut buf = vec![0u8; 4096];
            let frame = proto_core::frame::encode_frame(&mut buf, meta, &reply).unwrap();
            let head_len = frame.head_len;
            // The protocol number sits right after the 4-byte magic (docs/PROTOCOL.md).
            buf[4..6].copy_from_slice(&header_version.to_le_bytes());
            let _ = sink.send(&buf[..head_len], &[]);
            // Hold the connection until the client has read the refusal.
            let _ = source.recv_head();
        });
        (addr, thread)
    }

    /// A worker of another protocol: the error names both sides' releases and protocols and
    /// says what to do, rather than reading as a lost connection.
    #[test]
    fn a_version_mismatch_names_both_sides() {
        let newer = proto_core::PROTOCOL_VERSION + 1;
        // A newer worker, whose refusal frame this client cannot parse: only its protocol is known.
        let (addr, worker) = refusing_worker(newer, format!("frame refused: unsupported protocol version {}", proto_core::PROTOCOL_VERSION));
        let e = Conn::open(&config(addr.clone(), Duration::from_secs(5), Some(Duration::from_secs(5)))).map(|_| ()).expect_err("refused");
        worker.join().unwrap();
        assert_eq!(e.code, HipError::NOT_INITIALIZED);
        let client = format!(
            "hip-remote {}) speaks protocol {}..={}",
            hip_remote_build_info::VERSION,
            proto_core::header::MIN_PROTOCOL_VERSION,
            proto_core::PROTOCOL_VERSION
        );
        assert!(e.message.starts_with(&format!("version mismatch with the hip-worker at {addr}: client libamdhip64 (")), "{}", e.message);
        assert!(e.message.contains(&client) && e.message.contains(&format!("worker speaks protocol {newer} ")), "{}", e.message);
        assert!(e.message.contains("upgrade the older side") && !e.message.contains(LOST), "{}", e.message);

        // A worker that can still write a frame this client reads: its release is named too.
        let words = format!(
            "frame refused: unsupported protocol version 9: worker hip-worker 9.9.9 (abcdef1) speaks protocol {0}..={0}",
            proto_core::PROTOCOL_VERSION
        );
        let (addr, worker) = refusing_worker(proto_core::PROTOCOL_VERSION, words);
        let e = Conn::open(&config(addr, Duration::from_secs(5), Some(Duration::from_secs(5)))).map(|_| ()).expect_err("refused");
        worker.join().unwrap();
        assert!(e.message.contains(&client), "{}", e.message);
        assert!(
            e.message.contains(&format!("worker hip-worker 9.9.9 (abcdef1) speaks protocol {0}..={0}: upgrade", proto_core::PROTOCOL_VERSION)),
            "{}",
            e.message
        );
    }

    fn config(worker: String, liveness: Duration, io: Option<Duration>) -> ClientConfig {
        let liveness = Liveness { heartbeat: Duration::from_millis(200), timeout: liveness };
        let tcp = TcpConfig { io_timeout: io, stall_timeout: Some(liveness.timeout), ..TcpConfig::default() };
        ClientConfig { worker, tcp, liveness, ..ClientConfig::defaults() }
    }

    #[test]
    fn a_frozen_worker_fails_the_call_within_the_liveness_timeout() {
        let pings = Arc::new(AtomicUsize::new(0));
        let (addr, worker) = fake_worker(Behaviour::Frozen, pings.clone());
        let mut conn = Conn::open(&config(addr, Duration::from_secs(1), Some(Duration::from_secs(600)))).expect("handshake");
        let started = Instant::now();
        let e = conn.get_device_count(wire::Empty {}).map(|_| ()).expect_err("a frozen worker cannot answer");
        let took = started.elapsed();
        assert_eq!(e.code, HipError::NOT_INITIALIZED);
        assert!(e.message.starts_with(LOST) && e.message.contains("no answer within 1 s"), "{}", e.message);
        assert!(took >= Duration::from_secs(1) && took < Duration::from_secs(3), "failed after {took:?}");
        assert!(pings.load(Ordering::SeqCst) >= 2, "the client sends PINGs while it waits in silence");
        drop(conn);
        worker.join().unwrap();
    }

    /// After a reply the worker is idle: the driver sends the first fire-and-forget requests
    /// once `client_core::FIRST_BATCH_BYTES` are queued; then batches of `STREAMING_BATCH_BYTES` within the window.
    #[test]
    fn the_first_batch_after_a_reply_is_sent_early() {
        let frames = Arc::new(AtomicUsize::new(0));
        let (addr, worker) = fake_worker(Behaviour::CountsFrames, frames.clone());
        let mut conn = Conn::open(&config(addr, Duration::from_secs(30), None)).expect("handshake");
        let args = [7u8; 32];
        let launch = || wire::LaunchKernel { function: 1, grid: [1; 3], block: [1; 3], shared_mem: 0, stream: 0, args: args[..].into() };
        let mut early = None;
        for i in 1..=100 {
            conn.post::<calls::LaunchKernel>(launch()).expect("queued");
            if early.is_none() && conn.sink.pending() == 0 {
                early = Some(i);
            }
        }
        let early = early.expect("the first batch was sent before 100 launches were queued");
        assert!(early < 100 && conn.sink.pending() > 0, "sent after {early} launches; the rest stay queued");
        let until = Instant::now() + Duration::from_secs(5);
        while frames.load(Ordering::SeqCst) < early && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(frames.load(Ordering::SeqCst), early, "the worker got the first batch while the rest were queued");
        conn.flush().expect("flush");
        let until = Instant::now() + Duration::from_secs(5);
        while frames.load(Ordering::SeqCst) < 100 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(frames.load(Ordering::SeqCst), 100);
        // Then batches of STREAMING_BATCH_BYTES while under STREAMING_WINDOW_BYTES since the
        // reply; past it, the transport's own (larger) coalescing.
        let mut largest_queued = 0;
        while conn.session.batching().sent_since_reply() < client_core::STREAMING_WINDOW_BYTES {
            conn.post::<calls::LaunchKernel>(launch()).expect("queued");
            largest_queued = largest_queued.max(conn.sink.pending());
        }
        assert!(largest_queued < client_core::STREAMING_BATCH_BYTES, "{largest_queued} bytes queued inside the window");
        for _ in 0..2000 {
            conn.post::<calls::LaunchKernel>(launch()).expect("queued");
            largest_queued = largest_queued.max(conn.sink.pending());
        }
        assert!(largest_queued >= client_core::STREAMING_BATCH_BYTES, "past the window batches grow to the transport's size");
        conn.flush().expect("flush");
        drop(conn);
        worker.join().unwrap();
    }

    #[test]
    fn a_busy_worker_that_sends_heartbeats_is_waited_for() {
        let (addr, worker) = fake_worker(Behaviour::BusyFor(Duration::from_secs(3)), Arc::default());
        let mut conn = Conn::open(&config(addr, Duration::from_secs(1), Some(Duration::from_secs(600)))).expect("handshake");
        let started = Instant::now();
        let count = conn.get_device_count(wire::Empty {}).expect("heartbeats keep the call alive").count;
        assert_eq!(count, 3);
        assert!(started.elapsed() >= Duration::from_secs(3));
        drop(conn);
        worker.join().unwrap();
    }

    #[test]
    fn the_io_timeout_bounds_the_whole_call_not_each_read() {
        // Heartbeats every 200 ms: no single read waits long, yet the call must end at 1.5 s.
        let (addr, worker) = fake_worker(Behaviour::BusyFor(Duration::from_secs(4)), Arc::default());
        let mut conn = Conn::open(&config(addr, Duration::from_secs(1), Some(Duration::from_millis(1500)))).expect("handshake");
        let started = Instant::now();
        let e = conn.get_device_count(wire::Empty {}).map(|_| ()).expect_err("the deadline passes");
        let took = started.elapsed();
        assert!(e.message.contains("HIP_REMOTE_IO_TIMEOUT"), "{}", e.message);
        assert!(took >= Duration::from_millis(1500) && took < Duration::from_millis(2500), "failed after {took:?}");
        drop(conn);
        worker.join().unwrap();
    }
}
