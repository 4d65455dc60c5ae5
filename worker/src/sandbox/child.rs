//! The session process: `hip-worker --session-child KEY=VALUE...`, started by the worker
//! ([`relay::start`](super::relay::start)) with its control channel as stdin. It confines
//! itself, builds its own host backend, takes its connection from the control channel
//! ([`super::handover`]) and serves one already-authenticated session until it ends.

use super::confine;
use super::handover::Handed;
use super::link::{LinkSink, LinkSource};
use super::BackendSpec;
use crate::backend::host::usage::SharedUsage;
use crate::backend::{Backend, HostBackend};
use crate::session::{Session, SessionConfig, SessionLimits};
use crate::stripes::{StripeConfig, StripeHub};
use std::collections::HashMap;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use transport_core::TransportError;

/// The name of a GPU session process's main thread.
const SESSION_THREAD_NAME: &str = "hip-session";

/// Exit status of a session process that could not confine itself or start.
pub const EXIT_SETUP_FAILED: u8 = 3;
/// How often a GPU session process publishes the device memory it holds in its row of the
/// shared usage table (the worker's metrics and other sessions' view lag this much).
pub const USAGE_PUBLISH_INTERVAL: std::time::Duration = std::time::Duration::from_millis(200);

/// The per-session bounds of [`SessionLimits`] a session process enforces itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildLimits {
    /// Streams.
    pub max_streams: usize,
    /// Events.
    pub max_events: usize,
    /// Loaded modules.
    pub max_modules: usize,
    /// Device memory, bytes (`None`: the device's capacity).
    pub max_memory: Option<u64>,
    /// Fire-and-forget upload bytes not yet executed.
    pub max_pending_bytes: usize,
}

impl ChildLimits {
    /// The per-session part of `limits`.
    pub fn of(limits: &SessionLimits) -> Self {
        Self {
            max_streams: limits.max_streams,
            max_events: limits.max_events,
            max_modules: limits.max_modules,
            max_memory: limits.max_memory,
            max_pending_bytes: limits.max_pending_bytes,
        }
    }
}

/// What the worker tells a session process, as `KEY=VALUE` arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildArgs {
    /// The session's id (as the client got it in WELCOME).
    pub session_id: u64,
    /// The client's name from HELLO.
    pub client_name: String,
    /// The authenticated tenant.
    pub tenant: Option<String>,
    /// The backend the process builds (host emulation, or its own GPU context per device).
    pub backend: BackendSpec,
    /// Bound on unread device-to-host replies, bytes.
    pub max_queued_reply_bytes: usize,
    /// The session's resource bounds (the worker-wide stream count stays the worker's: a
    /// session process counts only its own streams against it).
    pub limits: ChildLimits,
    /// Largest file the process may write (RLIMIT_FSIZE), bytes.
    pub max_file_bytes: u64,
    /// User and group to switch to when started as root.
    pub run_as: Option<(u32, u32)>,
    /// The one writable directory.
    pub scratch: PathBuf,
    /// The tenant's compile cache directory, also writable.
    pub rtc_cache: Option<PathBuf>,
    /// Log filter.
    pub log_filter: String,
    /// How long link reads poll before blocking.
    pub spin: std::time::Duration,
    /// This process's row of the shared usage table.
    pub usage_row: usize,
    /// Rows of the shared usage table (sessions).
    pub usage_rows: usize,
    /// Devices of the shared usage table (the worker's devices).
    pub usage_devices: usize,
    /// The kernel watchdog's limit (`--max-kernel-ms`), if any.
    pub max_kernel_ms: Option<u64>,
    /// A shared session process ([`super::shared`]): it serves every session the worker
    /// hands it, each with the identity that comes with it; the session fields above are
    /// then unused.
    pub shared: bool,
}

impl ChildArgs {
    /// The arguments after [`CHILD_ARG`](super::CHILD_ARG).
    pub fn to_args(&self) -> Vec<String> {
        let mut args = vec![
            format!("session={}", self.session_id),
            format!("client={}", self.client_name),
            format!("max-queued-reply={}", self.max_queued_reply_bytes),
            format!("max-streams={}", self.limits.max_streams),
            format!("max-events={}", self.limits.max_events),
            format!("max-modules={}", self.limits.max_modules),
            format!("max-memory={}", self.limits.max_memory.unwrap_or(0)),
            format!("max-pending={}", self.limits.max_pending_bytes),
            format!("max-file={}", self.max_file_bytes),
            format!("scratch={}", self.scratch.display()),
            format!("log={}", self.log_filter),
            format!("spin-us={}", self.spin.as_micros()),
            format!("usage-row={}", self.usage_row),
            format!("usage-rows={}", self.usage_rows),
            format!("usage-devices={}", self.usage_devices),
            format!("max-kernel-ms={}", self.max_kernel_ms.unwrap_or(0)),
            format!("shared={}", u8::from(self.shared)),
        ];
        args.extend(self.backend.to_args());
        if let Some(tenant) = &self.tenant {
            args.push(format!("tenant={tenant}"));
        }
        if let Some(dir) = &self.rtc_cache {
            args.push(format!("rtc-cache={}", dir.display()));
        }
        if let Some((uid, gid)) = self.run_as {
            args.push(format!("uid={uid}"));
            args.push(format!("gid={gid}"));
        }
        args
    }

    /// Parses [`to_args`](Self::to_args)'s output.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Self, String> {
        let mut map = HashMap::new();
        for arg in args {
            let (key, value) = arg.split_once('=').ok_or_else(|| format!("argument {arg:?} is not KEY=VALUE"))?;
            map.insert(key.to_owned(), value.to_owned());
        }
        let get = |key: &str| map.get(key).cloned().ok_or_else(|| format!("missing {key}="));
        let number = |key: &str| get(key)?.parse::<u64>().map_err(|e| format!("{key}=: {e}"));
        let run_as = match (map.get("uid"), map.get("gid")) {
            (Some(uid), Some(gid)) => Some((uid.parse().map_err(|e| format!("uid=: {e}"))?, gid.parse().map_err(|e| format!("gid=: {e}"))?)),
            _ => None,
        };
        Ok(Self {
            session_id: number("session")?,
            client_name: get("client")?,
            tenant: map.get("tenant").cloned(),
            backend: BackendSpec::parse(&map)?,
            max_queued_reply_bytes: number("max-queued-reply")? as usize,
            limits: ChildLimits {
                max_streams: number("max-streams")? as usize,
                max_events: number("max-events")? as usize,
                max_modules: number("max-modules")? as usize,
                max_memory: Some(number("max-memory")?).filter(|&m| m > 0),
                max_pending_bytes: number("max-pending")? as usize,
            },
            max_file_bytes: number("max-file")?,
            run_as,
            scratch: get("scratch")?.into(),
            rtc_cache: map.get("rtc-cache").map(PathBuf::from),
            log_filter: get("log")?,
            spin: std::time::Duration::from_micros(number("spin-us")?),
            usage_row: number("usage-row")? as usize,
            usage_rows: number("usage-rows")? as usize,
            usage_devices: number("usage-devices")? as usize,
            max_kernel_ms: Some(number("max-kernel-ms")?).filter(|&ms| ms > 0),
            shared: number("shared")? == 1,
        })
    }
}

/// `main` of a session process: `args` are those after [`CHILD_ARG`](super::CHILD_ARG).
pub fn main(args: impl IntoIterator<Item = String>) -> ExitCode {
    if let Err(e) = confine::close_inherited_fds(super::FIRST_FREE_FD) {
        eprintln!("hip-worker session process: cannot close inherited descriptors: {e}");
        return ExitCode::from(EXIT_SETUP_FAILED);
    }
    let args = match ChildArgs::parse(args) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("hip-worker session process: {e}");
            return ExitCode::from(EXIT_SETUP_FAILED);
        }
    };
    if let Err(e) = crate::logging::init(&args.log_filter, "the worker's") {
        eprintln!("hip-worker session process: {e}");
    }
    let span = tracing::info_span!("session-process", session = args.session_id, pid = std::process::id());
    let _in_span = span.enter();
    // The control channel, taken before anything else could be given descriptor 0's number.
    let link = match std::io::stdin().as_fd().try_clone_to_owned() {
        Ok(fd) => UnixStream::from(fd),
        Err(e) => {
            tracing::error!(%e, "no control channel to the worker");
            return ExitCode::from(EXIT_SETUP_FAILED);
        }
    };
    // Confined before any thread starts: Landlock and seccomp apply to the calling thread and
    // the threads it creates after (a GPU driver's threads among them: it starts here, after).
    let gpu = args.backend.gpu().map(|vendor| confine::GpuAccess {
        vendor,
        library_dirs: args.backend.library_dirs(),
        writable_dirs: confine::GpuAccess::mps_directories(),
    });
    let (memory_per_device, devices) = match &args.backend {
        BackendSpec::Host(host) => (host.memory_per_device, host.devices),
        _ => (0, 0),
    };
    let limits = confine::FileLimits { max_file_bytes: args.max_file_bytes, max_open_files: confine::max_open_files(memory_per_device, devices) };
    match confine::confine(args.run_as, &args.scratch, args.rtc_cache.as_deref(), limits, gpu.as_ref()) {
        Ok(enforced) => tracing::info!(
            backend = args.backend.name(),
            user = ?enforced.switched_user,
            groups = ?enforced.device_groups,
            landlock = %enforced.landlock,
            seccomp = %enforced.seccomp,
            "session process confined"
        ),
        Err(e) => {
            tracing::error!(%e, "session process cannot drop its rights; the session is not served");
            return ExitCode::from(EXIT_SETUP_FAILED);
        }
    }
    // Named as the GPU drivers name their threads (CUDA's cuInit fails with
    // CUDA_ERROR_OPERATING_SYSTEM where it cannot): a confinement that forbids it says so here.
    if args.backend.gpu().is_some() {
        match std::fs::write("/proc/thread-self/comm", SESSION_THREAD_NAME) {
            Ok(()) => tracing::debug!("thread named through /proc, as the GPU driver names its own"),
            Err(e) => {
                tracing::warn!(%e, "a GPU session process cannot name its threads through /proc/thread-self/comm: the CUDA driver fails cuInit with CUDA_ERROR_OPERATING_SYSTEM then")
            }
        }
    }
    // SAFETY: the worker passed the table as this descriptor, which nothing else owns.
    let usage_fd = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(super::USAGE_FD) };
    let usage = match SharedUsage::open(usage_fd, args.usage_devices, args.usage_rows) {
        Ok(usage) => Arc::new(usage),
        Err(e) => {
            tracing::error!(%e, "cannot map the shared memory-usage table");
            return ExitCode::from(EXIT_SETUP_FAILED);
        }
    };
    // The tenant's CUDA JIT cache (`CUDA_CACHE_PATH`, set by the worker): made here, as the
    // session user, inside the tenant's cache directory, before the driver looks for it.
    if let (BackendSpec::Cuda { .. }, Some(dir)) = (&args.backend, &args.rtc_cache) {
        use std::os::unix::fs::DirBuilderExt;
        let jit = dir.join(super::spec::CUDA_JIT_CACHE_DIR);
        if let Err(e) = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&jit) {
            tracing::warn!(
                dir = %jit.display(),
                %e,
                "no CUDA JIT cache: the driver compiles this session's PTX without one; the session user must be able to reach \
                 --rtc-cache-dir (not under a directory only root may enter, such as /root)"
            );
        }
    }
    let backend = match build_backend(&args.backend, &usage, args.usage_row, args.shared) {
        Ok(backend) => backend,
        Err(e) => {
            tracing::error!("{e}; the session is not served");
            return ExitCode::from(EXIT_SETUP_FAILED);
        }
    };
    // SAFETY: the worker passed the dial channel as this descriptor, which nothing else owns.
    let dial_channel = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(super::DIAL_FD) };
    // Grants of this process's sessions; their pulls dial through the worker.
    let transfers = match super::dial::WorkerDialer::new(dial_channel) {
        Ok(dialer) => crate::transfer::TransferHub::new(crate::transfer::Dialer::Worker(dialer)),
        Err(e) => {
            tracing::error!(%e, "no thread for the dial channel");
            return ExitCode::from(EXIT_SETUP_FAILED);
        }
    };
    if args.shared {
        return super::shared::serve_sessions(link, backend, usage, transfers, &args);
    }
    let limits = SessionLimits {
        max_streams: args.limits.max_streams,
        max_events: args.limits.max_events,
        max_modules: args.limits.max_modules,
        max_memory: args.limits.max_memory,
        max_pending_bytes: args.limits.max_pending_bytes,
        ..SessionLimits::default()
    };
    // SAFETY: the worker passed the IPC channel as this descriptor, which nothing else owns.
    let ipc_channel = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(super::IPC_FD) };
    let config = SessionConfig {
        max_queued_reply_bytes: args.max_queued_reply_bytes,
        limits,
        ipc: Arc::new(crate::ipc::ChildBroker::new(ipc_channel)),
        rtc_cache_dir: args.rtc_cache.clone().map(crate::session::RtcCacheDir::Tenant),
        transfers: Some(transfers),
        ..SessionConfig::default()
    };
    let mut session = Session::new(backend, Arc::new(config));
    session.adopt_handshake(args.session_id, args.client_name, args.tenant);
    // The worker adds this process's device time to the tenant from its row.
    session.device_time().report_to(usage, args.usage_row);
    crate::watchdog::start_for_session(args.max_kernel_ms, &session);
    // SAFETY: the worker passed the bridge as this descriptor, which nothing else owns.
    let bridge = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(super::CALLBACK_FD) };
    if let Err(e) = session.bridge_callbacks(UnixStream::from(bridge)) {
        tracing::warn!(%e, "no callback bridge to the worker: stream callbacks will fail");
    }
    let result = match serve_connection(&link, session, args.spin) {
        Ok(result) => result,
        Err(e) => {
            tracing::error!(%e, "no connection from the worker");
            return ExitCode::from(EXIT_SETUP_FAILED);
        }
    };
    match result {
        Ok(()) => {
            tracing::debug!("session ended; session process exits");
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::info!(%e, "link to the worker ended; session process exits");
            ExitCode::SUCCESS
        }
    }
}

/// The backend of `spec`, its device memory counted in row `row` of `usage`. `shared`: a
/// shared session process, whose host backend honours the test aid
/// [`TEST_STICKY_FAULT_ENV`](crate::backend::TEST_STICKY_FAULT_ENV).
fn build_backend(spec: &BackendSpec, usage: &Arc<SharedUsage>, row: usize, shared: bool) -> Result<Arc<dyn Backend>, String> {
    let gpu: Arc<dyn Backend> = match spec {
        BackendSpec::Host(config) => {
            let backend = HostBackend::new(*config);
            if !backend.share_usage(usage, row) {
                return Err(format!("the shared memory-usage table does not fit this session (row {row})"));
            }
            let test_fault = std::env::var(crate::backend::TEST_STICKY_FAULT_ENV).ok().and_then(|size| size.parse::<u64>().ok());
            if let (true, Some(size)) = (shared, test_fault) {
                tracing::warn!(size, "test aid: a {size}-byte hipMalloc leaves its device in a sticky fault");
                backend.arm_test_fault(size);
            }
            return Ok(Arc::new(backend));
        }
        BackendSpec::Cuda { selection } => cuda(selection.as_ref())?,
        BackendSpec::Hip { library, selection } => hip(library, selection.as_ref())?,
    };
    let devices = gpu.device_count().map_err(|e| e.to_string())?;
    if devices as usize > usage.shape().0 {
        return Err(format!("the driver shows this process {devices} devices, the worker {}: their environments differ", usage.shape().0));
    }
    publish_usage(Arc::clone(&gpu), Arc::clone(usage), row, devices);
    Ok(gpu)
}

/// Why a GPU backend did not open in a session process, with where to look.
fn gpu_unavailable(backend: &str, e: impl std::fmt::Display) -> String {
    format!(
        "the session process cannot open the {backend} backend the worker opened: {e} (when the worker runs it, the confinement \
         may refuse the driver a file or a system call: see this process's Landlock and seccomp lines, docs/ISOLATION.md)"
    )
}

#[cfg(feature = "cuda")]
fn cuda(selection: Option<&crate::devices::DeviceSelection>) -> Result<Arc<dyn Backend>, String> {
    crate::backend::cuda::CudaBackend::with_devices(selection).map(|b| Arc::new(b) as Arc<dyn Backend>).map_err(|e| gpu_unavailable("cuda", e))
}

#[cfg(not(feature = "cuda"))]
fn cuda(_selection: Option<&crate::devices::DeviceSelection>) -> Result<Arc<dyn Backend>, String> {
    Err(gpu_unavailable("cuda", "this worker was built without the `cuda` feature"))
}

#[cfg(feature = "hip")]
fn hip(library: &std::path::Path, selection: Option<&crate::devices::DeviceSelection>) -> Result<Arc<dyn Backend>, String> {
    crate::backend::hip::HipBackend::new(library, selection).map(|b| Arc::new(b) as Arc<dyn Backend>).map_err(|e| gpu_unavailable("hip", e))
}

#[cfg(not(feature = "hip"))]
fn hip(_library: &std::path::Path, _selection: Option<&crate::devices::DeviceSelection>) -> Result<Arc<dyn Backend>, String> {
    Err(gpu_unavailable("hip", "this worker was built without the `hip` feature"))
}

/// Publishes what `backend` holds on each device in row `row` of `usage`, every
/// [`USAGE_PUBLISH_INTERVAL`], until the process exits (the worker then gives the row back).
fn publish_usage(backend: Arc<dyn Backend>, usage: Arc<SharedUsage>, row: usize, devices: u32) {
    let publish = move || loop {
        for dev in 0..devices {
            if let Some(bytes) = backend.allocated_bytes(dev) {
                usage.publish(row, dev as usize, bytes);
            }
        }
        std::thread::sleep(USAGE_PUBLISH_INTERVAL);
    };
    if let Err(e) = std::thread::Builder::new().name("hip-usage".into()).spawn(publish) {
        tracing::warn!(%e, "cannot start the usage publisher: the worker's metrics miss this session's device memory");
    }
}

/// Takes the session's connection from the control channel (`control`, [`Handed`]) and
/// serves `session` over it until it ends: handed over (TCP, same-host), the process serves
/// the connection itself, and a thread takes the session's stripes from the channel;
/// relayed, a socket pair of its own carries the frames and the channel other workers'
/// fetches. `Err`: no connection came.
fn serve_connection(control: &UnixStream, session: Session, spin: std::time::Duration) -> std::io::Result<Result<(), TransportError>> {
    let handed =
        Handed::recv(control)?.ok_or_else(|| std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the worker closed the control channel"))?;
    let stripe_control = control.try_clone()?;
    serve_handed(handed, Some(control), session, spin, move |stripes| {
        let span = tracing::Span::current();
        std::thread::Builder::new().name("hip-stripes".into()).spawn(move || span.in_scope(|| stripes.take_from(&stripe_control))).map(drop)
    })
}

/// Serves `session` over the connection `handed` until it ends. `relay_link`: the channel
/// whose frames a [`Handed::Relay`] session comes over; `stripes_go`: where the stripes of
/// a handed TCP session are served from.
pub(super) fn serve_handed(
    handed: Handed,
    relay_link: Option<&UnixStream>,
    mut session: Session,
    spin: std::time::Duration,
    stripes_go: impl FnOnce(StripeSessions) -> std::io::Result<()>,
) -> std::io::Result<Result<(), TransportError>> {
    let (_, result) = match handed {
        Handed::Relay => {
            let link = relay_link.ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidData, "a relayed session without its link"))?;
            crate::server::run_session(LinkSink::new(link.try_clone()?), LinkSource::new(link.try_clone()?, spin), session)
        }
        Handed::RelaySocket { socket } => {
            let link = UnixStream::from(socket);
            // No stripes, but other workers' fetches of its grants come over the control
            // channel, relayed by the worker (a relayed connection's own state cannot move).
            let hub = StripeHub::new(StripeConfig { max_stripes: 0 });
            stripes_go(StripeSessions { backend: session.shared_backend(), config: Arc::new(session.config().clone()), hub, spin })?;
            crate::server::run_session(LinkSink::new(link.try_clone()?), LinkSource::new(link, spin), session)
        }
        Handed::Tcp { socket, unread, peer, terms } => {
            let (sink, source) = transport_tcp::tcp::from_parts(std::net::TcpStream::from(socket), &unread, spin)?;
            session.set_peer(peer);
            session.adopt_features(terms.features);
            let hub = StripeHub::new(StripeConfig { max_stripes: terms.max_stripes as usize });
            session.set_stripe_hub(Arc::clone(&hub));
            stripes_go(StripeSessions { backend: session.shared_backend(), config: Arc::new(session.config().clone()), hub, spin })?;
            crate::server::run_session(sink, source, session)
        }
        #[cfg(target_os = "linux")]
        Handed::Shm { parts, terms } => {
            let shm = transport_shm::ShmConfig { spin, ..transport_shm::ShmConfig::default() };
            let (sink, source, _hangup, descriptors) = transport_shm::worker_from_parts(parts, &shm)?;
            session.adopt_features(terms.features);
            session.set_descriptor_sender(Arc::new(crate::shm::Descriptors(descriptors)));
            // No stripes (the session gets no stripe hub), but other workers' fetches of its
            // grants come over the control channel as a TCP session's do.
            let hub = StripeHub::new(StripeConfig { max_stripes: 0 });
            stripes_go(StripeSessions { backend: session.shared_backend(), config: Arc::new(session.config().clone()), hub, spin })?;
            crate::server::run_session(sink, source, session)
        }
        Handed::Stripe { .. } | Handed::Fetch { .. } | Handed::Session { .. } => {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "a control message came where the session's connection was due"));
        }
    };
    Ok(result)
}

/// What a session process needs to serve the stripes of its session.
pub(super) struct StripeSessions {
    backend: Arc<dyn crate::backend::Backend>,
    config: Arc<SessionConfig>,
    hub: Arc<StripeHub>,
    spin: std::time::Duration,
}

impl StripeSessions {
    /// Serves each stripe connection the worker hands over, on a thread of its own, until
    /// the worker closes the channel. Its first frame is its `StripeJoin`, checked against
    /// this process's grant (key, index, address, expiry) by the normal driver. Fetches of
    /// this session's grants by other workers come the same way ([`serve_fetch`]).
    fn take_from(self, control: &UnixStream) {
        loop {
            match Handed::recv(control) {
                Ok(Some(Handed::Stripe { socket, unread, peer, .. })) => self.serve_one(socket, unread, peer),
                Ok(Some(Handed::Fetch { socket, unread, peer, .. })) => serve_fetch(&self.backend, &self.config, socket, unread, peer, self.spin),
                Ok(None) => return,
                Ok(Some(other)) => {
                    tracing::warn!(?other, "unexpected control message; the stripes are not taken any more");
                    return;
                }
                Err(e) => {
                    tracing::warn!(%e, "control channel failed; the stripes are not taken any more");
                    return;
                }
            }
        }
    }

    /// Serves one stripe connection on a thread of its own.
    pub(super) fn serve_one(&self, socket: OwnedFd, unread: Vec<u8>, peer: Option<std::net::SocketAddr>) {
        let (sink, source) = match transport_tcp::tcp::from_parts(std::net::TcpStream::from(socket), &unread, self.spin) {
            Ok(halves) => halves,
            Err(e) => {
                tracing::warn!(%e, "stripe connection unusable");
                return;
            }
        };
        let mut stripe = Session::new(Arc::clone(&self.backend), Arc::clone(&self.config));
        stripe.set_peer(peer);
        stripe.set_stripe_hub(Arc::clone(&self.hub));
        let span = tracing::Span::current();
        let spawned = std::thread::Builder::new().name("hip-stripe".into()).spawn(move || {
            let _in_span = span.enter();
            let (_, result) = crate::server::run_session(sink, source, stripe);
            tracing::debug!(?result, "stripe connection ended");
        });
        if let Err(e) = spawned {
            tracing::warn!(%e, "no thread for a stripe connection");
        }
    }
}

/// Serves a connection another worker opened to fetch a grant of a session of this process
/// (`TransferFetch`, its first and only request, in `unread`), on a thread of its own: the
/// normal driver checks the grant against this process's hub (`config.transfers`) and
/// answers its bytes once.
pub(super) fn serve_fetch(
    backend: &Arc<dyn crate::backend::Backend>,
    config: &Arc<SessionConfig>,
    socket: OwnedFd,
    unread: Vec<u8>,
    peer: Option<std::net::SocketAddr>,
    spin: std::time::Duration,
) {
    let (sink, source) = match transport_tcp::tcp::from_parts(std::net::TcpStream::from(socket), &unread, spin) {
        Ok(halves) => halves,
        Err(e) => {
            tracing::warn!(%e, "transfer connection unusable");
            return;
        }
    };
    let mut fetch = Session::new(Arc::clone(backend), Arc::clone(config));
    fetch.set_peer(peer);
    let span = tracing::Span::current();
    let spawned = std::thread::Builder::new().name("hip-fetch".into()).spawn(move || {
        let _in_span = span.enter();
        let (_, result) = crate::server::run_session(sink, source, fetch);
        tracing::debug!(?result, "transfer connection ended");
    });
    if let Err(e) = spawned {
        tracing::warn!(%e, "no thread for a transfer connection");
    }
}
