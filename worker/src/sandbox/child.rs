//! The session process: `hip-worker --session-child KEY=VALUE...`, started by the worker's
//! [`relay`](super::relay) with its link as stdin. It confines itself, builds its own host
//! backend and serves one already-authenticated session until the link closes.

use super::confine;
use super::link::{LinkSink, LinkSource};
use crate::backend::host::usage::SharedUsage;
use crate::backend::{HostBackend, HostConfig};
use crate::session::{Session, SessionConfig, SessionLimits};
use std::collections::HashMap;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// Exit status of a session process that could not confine itself or start.
pub const EXIT_SETUP_FAILED: u8 = 3;

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
    /// Emulated devices.
    pub devices: u32,
    /// Memory per device, bytes.
    pub memory_per_device: u64,
    /// Bound on unread device-to-host replies, bytes.
    pub max_queued_reply_bytes: usize,
    /// The session's resource bounds (the worker-wide stream count stays the worker's: a
    /// session process counts only its own streams against it).
    pub limits: ChildLimits,
    /// Threads of the session process's stream pool.
    pub stream_threads: usize,
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
    /// The kernel watchdog's limit (`--max-kernel-ms`), if any.
    pub max_kernel_ms: Option<u64>,
}

impl ChildArgs {
    /// The arguments after [`CHILD_ARG`](super::CHILD_ARG).
    pub fn to_args(&self) -> Vec<String> {
        let mut args = vec![
            format!("session={}", self.session_id),
            format!("client={}", self.client_name),
            format!("devices={}", self.devices),
            format!("memory={}", self.memory_per_device),
            format!("max-queued-reply={}", self.max_queued_reply_bytes),
            format!("max-streams={}", self.limits.max_streams),
            format!("max-events={}", self.limits.max_events),
            format!("max-modules={}", self.limits.max_modules),
            format!("max-memory={}", self.limits.max_memory.unwrap_or(0)),
            format!("max-pending={}", self.limits.max_pending_bytes),
            format!("stream-threads={}", self.stream_threads),
            format!("scratch={}", self.scratch.display()),
            format!("log={}", self.log_filter),
            format!("spin-us={}", self.spin.as_micros()),
            format!("usage-row={}", self.usage_row),
            format!("usage-rows={}", self.usage_rows),
            format!("max-kernel-ms={}", self.max_kernel_ms.unwrap_or(0)),
        ];
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
            devices: u32::try_from(number("devices")?).map_err(|e| e.to_string())?,
            memory_per_device: number("memory")?,
            max_queued_reply_bytes: number("max-queued-reply")? as usize,
            limits: ChildLimits {
                max_streams: number("max-streams")? as usize,
                max_events: number("max-events")? as usize,
                max_modules: number("max-modules")? as usize,
                max_memory: Some(number("max-memory")?).filter(|&m| m > 0),
                max_pending_bytes: number("max-pending")? as usize,
            },
            stream_threads: number("stream-threads")? as usize,
            run_as,
            scratch: get("scratch")?.into(),
            rtc_cache: map.get("rtc-cache").map(PathBuf::from),
            log_filter: get("log")?,
            spin: std::time::Duration::from_micros(number("spin-us")?),
            usage_row: number("usage-row")? as usize,
            usage_rows: number("usage-rows")? as usize,
            max_kernel_ms: Some(number("max-kernel-ms")?).filter(|&ms| ms > 0),
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
    // The link, taken before anything else could be given descriptor 0's number.
    let link = match std::io::stdin().as_fd().try_clone_to_owned() {
        Ok(fd) => UnixStream::from(fd),
        Err(e) => {
            tracing::error!(%e, "no link to the worker");
            return ExitCode::from(EXIT_SETUP_FAILED);
        }
    };
    // Confined before any thread starts: Landlock and seccomp apply to the calling thread and
    // the threads it creates after.
    match confine::confine(args.run_as, &args.scratch, args.rtc_cache.as_deref()) {
        Ok(enforced) => {
            tracing::info!(user = ?enforced.switched_user, landlock = %enforced.landlock, seccomp = %enforced.seccomp, "session process confined")
        }
        Err(e) => {
            tracing::error!(%e, "session process cannot drop its rights; the session is not served");
            return ExitCode::from(EXIT_SETUP_FAILED);
        }
    }
    let backend = HostBackend::new(HostConfig {
        devices: args.devices,
        memory_per_device: args.memory_per_device,
        allow_host_code: true,
        stream_threads: args.stream_threads,
    });
    // SAFETY: the worker passed the table as this descriptor, which nothing else owns.
    let usage_fd = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(super::USAGE_FD) };
    match SharedUsage::open(usage_fd, args.devices as usize, args.usage_rows).map(Arc::new) {
        Ok(usage) if backend.share_usage(&usage, args.usage_row) => {}
        Ok(_) => {
            tracing::error!(row = args.usage_row, "the shared memory-usage table does not fit this session");
            return ExitCode::from(EXIT_SETUP_FAILED);
        }
        Err(e) => {
            tracing::error!(%e, "cannot map the shared memory-usage table");
            return ExitCode::from(EXIT_SETUP_FAILED);
        }
    }
    let backend = Arc::new(backend);
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
        ..SessionConfig::default()
    };
    let mut session = Session::new(backend, Arc::new(config));
    session.adopt_handshake(args.session_id, args.client_name, args.tenant);
    crate::watchdog::start_for_session(args.max_kernel_ms, &session);
    // SAFETY: the worker passed the bridge as this descriptor, which nothing else owns.
    let bridge = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(super::CALLBACK_FD) };
    if let Err(e) = session.bridge_callbacks(UnixStream::from(bridge)) {
        tracing::warn!(%e, "no callback bridge to the worker: stream callbacks will fail");
    }
    let (sink, source) = match link.try_clone() {
        Ok(reader) => (LinkSink::new(link), LinkSource::new(reader, args.spin)),
        Err(e) => {
            tracing::error!(%e, "cannot split the link");
            return ExitCode::from(EXIT_SETUP_FAILED);
        }
    };
    let (_, result) = crate::server::run_session(sink, source, session);
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
