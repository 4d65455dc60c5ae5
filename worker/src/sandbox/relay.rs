//! The worker's side of a session process: starts it ([`start`]); for connections that
//! cannot be handed over ([`super::handover`]: TLS, RDMA) relays frames both ways, and ends
//! the client's connection with a clear error when the process dies.

use super::child::{ChildArgs, ChildLimits};
use super::link::{head_bytes, LinkSink, LinkSource};
use super::{SessionProcess, CALLBACK_FD, CHILD_ARG, DIAL_FD, FIRST_FREE_FD, IPC_FD, USAGE_FD};
use crate::driver::ReplyWriter;
use crate::metrics::{Metrics, OpenSession};
use crate::session::Session;
use proto_core::opcode::Family;
use proto_core::{Flags, Opcode, Status};
use std::collections::HashMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use transport_core::{FrameSink, FrameSource, TransportError};

/// How long a session process may take to end after its client left (finishing the request
/// it executes) before it is killed.
pub(super) const EXIT_GRACE: Duration = Duration::from_secs(2);
/// Piece of a request's bulk section the relay passes on at a time.
const RELAY_CHUNK_BYTES: usize = 256 << 10;
/// Largest reply buffer the relay keeps between replies.
const KEPT_REPLY_BUFFER_BYTES: usize = 16 << 20;
/// Requests whose replies the relay times for the metrics; more in flight are not timed.
const MAX_TIMED_REQUESTS: usize = 1 << 16;

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A session process's scratch directory, removed with everything in it when dropped.
pub(super) struct Scratch(pub(super) PathBuf);

impl Scratch {
    fn create(root: &Path, session_id: u64, owner: Option<(u32, u32)>) -> std::io::Result<Self> {
        use std::os::unix::fs::DirBuilderExt;
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let path = root.join(format!("hip-session-{session_id}-{}-{nanos}", std::process::id()));
        std::fs::DirBuilder::new().mode(0o700).create(&path)?;
        let scratch = Self(path);
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&scratch.0, Some(uid), Some(gid))?;
        }
        Ok(scratch)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.0) {
            tracing::warn!(path = %self.0.display(), %e, "session scratch directory not removed");
        }
    }
}

/// Starts the session process of `session` (just authenticated) and relays between the
/// client (`source`, `replies`) and it until either ends. `hang_up` ends the client's
/// connection (so the reading half returns). The session counts as open (`open`) until then.
pub fn relay(
    session: &Session,
    source: &mut dyn FrameSource,
    replies: &ReplyWriter,
    process: &SessionProcess,
    open: OpenSession,
    hang_up: &(dyn Fn() + Sync),
) -> Result<(), TransportError> {
    let _open = open;
    let Some(row) = process.claim_row() else {
        let _ = replies.send_error(0, 0, Status::TOO_MANY_CONNECTIONS, "the worker runs its most session processes already");
        return Err(TransportError::Io(std::io::Error::other("no free session-process row")));
    };
    // Dropped last (declared first): the process has ended by then, so what its row still
    // holds can be given back.
    let _row = row;
    let (child, link, ipc_channel, _scratch) = match start(session, process, _row.row, false) {
        Ok(started) => started,
        Err(e) => {
            tracing::error!(%e, "cannot start the session process");
            let _ = replies.send_error(0, 0, Status::OUT_OF_MEMORY, &format!("the worker cannot start a process for this session: {e}"));
            return Err(TransportError::Io(e));
        }
    };
    // Dropped before the row (after the process ended): the row's device time goes to the
    // tenant for good.
    let _tenant_row = metrics_tenant_row(session, process, _row.row);
    let pid = child.id();
    let child = Mutex::new(SessionChild::new(child));
    // The frames go over a socket pair of their own, so the control channel stays free to
    // hand the process other workers' fetches of this session's grants.
    let control = link;
    let link = match UnixStream::pair().and_then(|(ours, theirs)| {
        super::handover::Handed::RelaySocket { socket: theirs.into() }.send(&control)?;
        Ok(ours)
    }) {
        Ok(link) => link,
        Err(e) => {
            lock(&child).kill();
            wait(&child, None);
            return Err(TransportError::Io(e));
        }
    };
    if let Err(e) = control.set_write_timeout(Some(super::handover::CONTROL_WRITE_TIMEOUT)) {
        tracing::warn!(%e, "no write timeout on the control channel");
    }
    process.handed.insert(session.id(), Arc::new(control), None, None);
    let _handed = HandedUntilEnd(process, session.id());
    session.metrics().session_process_started(false);
    tracing::info!(pid, "session process started; the connection is relayed");
    let metrics = session.metrics();
    let timed: Mutex<HashMap<u64, (Family, Instant)>> = Mutex::default();
    let (to_child, from_child) = match link.try_clone() {
        Ok(reader) => (LinkSink::new(link), LinkSource::new(reader, process.spin)),
        Err(e) => {
            lock(&child).kill();
            wait(&child, None);
            return Err(TransportError::Io(e));
        }
    };
    let (status, up) = std::thread::scope(|scope| {
        let up = std::thread::Builder::new()
            .name(format!("hip-relay-{}", session.id()))
            .spawn_scoped(scope, || {
                client_to_child(source, to_child, &metrics, &timed, &|| {
                    wait(&child, Some(EXIT_GRACE));
                })
            })
            .map_err(|e| TransportError::Io(std::io::Error::other(e)));
        let up = match up {
            Ok(up) => up,
            Err(e) => {
                lock(&child).kill();
                return (wait(&child, None), Err(e));
            }
        };
        // The process's IPC requests, answered from the worker's registry as this session's
        // tenant, until the process closes its end.
        let ipc = std::thread::Builder::new()
            .name(format!("hip-ipc-{}", session.id()))
            .spawn_scoped(scope, || crate::ipc::serve_channel(ipc_channel, &*session.config().ipc, session.client().1));
        if let Err(e) = ipc {
            tracing::warn!(%e, "no IPC service for the session process");
        }
        let down = child_to_client(from_child, replies, &metrics, &timed);
        let status = wait(&child, Some(EXIT_GRACE));
        if crate::watchdog::ended_by_watchdog(&status, &metrics, session.id()) {
            // The process sent the client its final error itself.
        } else if let Some(why) = died(&status, lock(&child).killed, process.max_file_bytes) {
            tracing::warn!(pid, "session process died: {why}; the session has ended");
            let _ = replies.send_error(
                0,
                0,
                Status::LAUNCH_FAILURE,
                &format!("the session's process died ({why}): the session has ended, its resources are freed"),
            );
        } else if let Err(e) = &down {
            tracing::debug!(%e, "link from the session process ended");
        }
        hang_up();
        let up = up.join().unwrap_or_else(|_| Err(TransportError::Io(std::io::Error::other("relay thread panicked"))));
        (status, up)
    });
    tracing::info!(pid, %status, "session process ended");
    match up {
        Err(TransportError::Closed) => Ok(()),
        other => other,
    }
}

/// Keeps a relayed session among those whose fetches are handed to their process until it
/// ends.
struct HandedUntilEnd<'a>(&'a SessionProcess, u64);

impl Drop for HandedUntilEnd<'_> {
    fn drop(&mut self) {
        self.0.handed.remove(self.1);
    }
}

/// Counts the device time row `row` reports for `session`'s tenant.
pub(super) fn metrics_tenant_row(session: &Session, process: &SessionProcess, row: usize) -> crate::accounting::AttachedRow {
    let tenant = session.metrics().tenants().get(session.client().1);
    tenant.attach_row(Arc::clone(&process.usage), row)
}

/// Makes a tenant's compile cache directory (private to the user session processes run as).
fn tenant_cache_dir(dir: &Path, owner: Option<(u32, u32)>) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    if let Some(root) = dir.parent() {
        // The root only needs to be traversable by the session user, not listable.
        std::fs::DirBuilder::new().recursive(true).mode(0o711).create(root)?;
        let mode = std::fs::metadata(root)?.permissions().mode();
        if owner.is_some() && mode & 0o001 == 0 {
            std::fs::set_permissions(root, std::fs::Permissions::from_mode((mode & 0o7777) | 0o711))?;
        }
    }
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::chown(dir, Some(uid), Some(gid))?;
    }
    Ok(())
}

/// A tenant's compile cache directory for `session`, made for the session user; `None`
/// (logged) when there is none or it is unusable.
pub(super) fn session_cache_dir(session: &Session, process: &SessionProcess) -> Option<PathBuf> {
    session.rtc_cache_dir().and_then(|dir| match tenant_cache_dir(&dir, process.run_as) {
        Ok(()) => Some(dir),
        Err(e) => {
            tracing::warn!(dir = %dir.display(), %e, "compile cache directory unusable: the session process compiles without it");
            None
        }
    })
}

/// Starts `hip-worker --session-child` for `session`, its link as its stdin, with a
/// scratch directory of its own and a clean environment (the worker's holds its token).
/// `shared`: a shared session process ([`super::shared`]), started for `session` but serving
/// every session handed to it: it gets no session's identity, and the whole compile cache
/// root is writable to it (each session's tenant directory comes with the session).
pub(super) fn start(
    session: &Session,
    process: &SessionProcess,
    usage_row: usize,
    shared: bool,
) -> std::io::Result<(Child, UnixStream, OwnedFd, Scratch)> {
    let scratch = Scratch::create(&process.scratch_root, if shared { 0 } else { session.id() }, process.run_as)?;
    let (client, tenant) = session.client();
    let rtc_cache = match (shared, session.config().rtc_cache_dir.as_ref()) {
        (false, _) => session_cache_dir(session, process),
        (true, Some(crate::session::RtcCacheDir::Root(root) | crate::session::RtcCacheDir::Tenant(root))) => {
            // The CUDA JIT cache of the shared process (CUDA_CACHE_PATH), made for the session
            // user: the root is the worker's.
            let made = std::fs::DirBuilder::new()
                .recursive(true)
                .create(root)
                .and_then(|()| tenant_cache_dir(&root.join(super::spec::CUDA_JIT_CACHE_DIR), process.run_as));
            match made {
                Ok(()) => Some(root.clone()),
                Err(e) => {
                    tracing::warn!(dir = %root.display(), %e, "compile cache directory unusable: the shared session process compiles without it");
                    None
                }
            }
        }
        (true, None) => None,
    };
    let (client, tenant) = if shared { ("shared session process", None) } else { (client, tenant) };
    let args = ChildArgs {
        session_id: if shared { 0 } else { session.id() },
        client_name: client.to_owned(),
        tenant: tenant.map(str::to_owned),
        backend: process.backend.clone(),
        max_queued_reply_bytes: session.config().max_queued_reply_bytes,
        limits: ChildLimits::of(&session.config().limits),
        max_file_bytes: process.max_file_bytes,
        run_as: process.run_as,
        scratch: scratch.0.clone(),
        rtc_cache,
        log_filter: process.log_filter.clone(),
        spin: process.spin,
        usage_row,
        usage_rows: process.usage.shape().1,
        usage_devices: process.usage.shape().0,
        max_kernel_ms: session.config().kernel_watchdog.map(|limit| limit.as_millis() as u64),
        shared,
    };
    let (ours, theirs) = UnixStream::pair()?;
    // The callback bridge: the worker's end relays into a channel it registers a ticket for
    // (the session's callback connection is served here, not in the process); the process's
    // end goes to CALLBACK_FD, moved above the descriptors dup2 targets first.
    let (bridge, their_bridge) = UnixStream::pair()?;
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor we own; the result is a new descriptor we own.
    let high = unsafe { libc::fcntl(their_bridge.as_raw_fd(), libc::F_DUPFD_CLOEXEC, FIRST_FREE_FD) };
    if high < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: just created above and owned by nothing else.
    let their_bridge = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(high) };
    let bridge_fd = their_bridge.as_raw_fd();
    let mut command = Command::new(&process.exe);
    command
        .arg(CHILD_ARG)
        .args(args.to_args())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into()))
        .env("TMPDIR", &scratch.0)
        .env("HOME", &scratch.0)
        .current_dir(&scratch.0)
        .stdin(Stdio::from(OwnedFd::from(theirs)))
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        // A group of its own: whatever it started is ended with it (`SessionChild::poll`).
        .process_group(0);
    command.envs(process.backend.child_environment(args.rtc_cache.as_deref()));
    command.envs(process.child_env.iter().map(|(k, v)| (k, v)));
    if let Some(value) = std::env::var_os(crate::accounting::DEVICE_TIME_VAR) {
        command.env(crate::accounting::DEVICE_TIME_VAR, value);
    }
    let usage_fd = process.usage.fd().as_raw_fd();
    let (ipc_ours, ipc_theirs) = crate::ipc::channel_pair()?;
    // Above every target number, so placing the usage table or the bridge cannot overwrite it.
    // SAFETY: F_DUPFD_CLOEXEC on a valid descriptor; the result is checked.
    let ipc_raw = unsafe { libc::fcntl(ipc_theirs.as_raw_fd(), libc::F_DUPFD_CLOEXEC, FIRST_FREE_FD) };
    if ipc_raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor owned by nobody else.
    let ipc_theirs = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(ipc_raw) };
    let ipc_fd = ipc_theirs.as_raw_fd();
    let (dial_ours, dial_theirs) = crate::ipc::channel_pair()?;
    // SAFETY: F_DUPFD_CLOEXEC on a valid descriptor; the result is checked.
    let dial_raw = unsafe { libc::fcntl(dial_theirs.as_raw_fd(), libc::F_DUPFD_CLOEXEC, FIRST_FREE_FD) };
    if dial_raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    drop(dial_theirs);
    // SAFETY: a fresh descriptor owned by nobody else.
    let dial_theirs = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(dial_raw) };
    let dial_fd = dial_theirs.as_raw_fd();
    // SAFETY: the closure runs in the forked child before exec and only makes system calls
    // that are async-signal-safe (dup2, fcntl), allocating nothing; `bridge_fd` stays open
    // in the parent until after spawn.
    unsafe {
        command.pre_exec(move || {
            if usage_fd == USAGE_FD {
                // Already in place: only let it survive exec.
                if libc::fcntl(usage_fd, libc::F_SETFD, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            } else if libc::dup2(usage_fd, USAGE_FD) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // dup2 leaves the copy open across exec. Both sources are above every target
            // (FIRST_FREE_FD), so no dup2 here replaces another's source.
            if libc::dup2(ipc_fd, IPC_FD) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::dup2(bridge_fd, CALLBACK_FD) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::dup2(dial_fd, DIAL_FD) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
    let child = command.spawn()?;
    // The process has its copies: the worker's must go, so the channels end with the process.
    drop(ipc_theirs);
    drop(their_bridge);
    drop(dial_theirs);
    // The process's dials, checked against the worker's --dial-workers, until it ends.
    let policy = session.config().transfers.as_ref().and_then(|hub| hub.policy().cloned()).unwrap_or_default();
    if let Err(e) = super::dial::serve(dial_ours, policy, session.metrics(), child.id()) {
        tracing::warn!(%e, "no dial service for the session process: its copies from other workers will fail");
    }
    // Kept alive by its relay thread until either end closes.
    crate::session::CallbackChannel::bridge_worker(bridge)?;
    Ok((child, ours, ipc_ours, scratch))
}

/// Client → session process, until the client leaves or either link fails; then the
/// session process is told (its link closes) and given [`EXIT_GRACE`] to end.
pub(super) fn client_to_child(
    source: &mut dyn FrameSource,
    mut to_child: LinkSink,
    metrics: &Metrics,
    timed: &Mutex<HashMap<u64, (Family, Instant)>>,
    child_ends: &(dyn Fn() + Sync),
) -> Result<(), TransportError> {
    let mut chunk = vec![0u8; RELAY_CHUNK_BYTES];
    let result = loop {
        let (head, header) = match source.recv_head() {
            Ok(received) => (head_bytes(&received), received.header),
            Err(e) => break Err(e),
        };
        metrics.add_bytes_in((head.len() + header.bulk_len as usize) as u64);
        if let Some(opcode) = Opcode::from_u16(header.opcode) {
            if header.flags.contains(Flags::NO_REPLY) {
                metrics.record_call(opcode.family(), false, Duration::ZERO);
            } else {
                let mut timed = lock(timed);
                if timed.len() < MAX_TIMED_REQUESTS {
                    timed.insert(header.request_id, (opcode.family(), Instant::now()));
                }
            }
        }
        let len = header.bulk_len as usize;
        if len <= chunk.len() {
            // One write: the session process wakes once for the whole frame.
            if let Err(e) = source.recv_bulk(&mut chunk[..len]).and_then(|()| to_child.send(&head, &chunk[..len])) {
                break Err(e);
            }
            continue;
        }
        // A large bulk section streams through in chunks: nothing of its size is buffered.
        if let Err(e) = to_child.send(&head, &[]) {
            break Err(e);
        }
        let mut left = len;
        let mut streamed = Ok(());
        while left > 0 && streamed.is_ok() {
            let n = left.min(chunk.len());
            streamed = source.recv_bulk(&mut chunk[..n]).and_then(|()| to_child.send(&[], &chunk[..n]));
            left -= n;
        }
        if let Err(e) = streamed {
            break Err(e);
        }
    };
    // The session process sees the end of its link, frees its session and exits.
    let _ = to_child.stream().shutdown(std::net::Shutdown::Write);
    child_ends();
    result
}

/// Session process → client, until the session process closes the link.
pub(super) fn child_to_client(
    mut from_child: LinkSource,
    replies: &ReplyWriter,
    metrics: &Metrics,
    timed: &Mutex<HashMap<u64, (Family, Instant)>>,
) -> Result<(), TransportError> {
    let mut bulk = Vec::new();
    loop {
        let received = from_child.recv_head()?;
        let (head, header) = (head_bytes(&received), received.header);
        // Grown to the largest reply seen, zeroed only then; a large one is given back after.
        let len = header.bulk_len as usize;
        if bulk.len() < len {
            bulk.resize(len, 0);
        }
        from_child.recv_bulk(&mut bulk[..len])?;
        if header.request_id != 0 {
            if let Some((family, sent)) = lock(timed).remove(&header.request_id) {
                metrics.record_call(family, header.flags.contains(Flags::ERROR), sent.elapsed());
            }
        }
        // The session process counted nothing: the relay counts what the client gets.
        replies.forward(&head, &bulk[..len])?;
        if bulk.len() > KEPT_REPLY_BUFFER_BYTES {
            bulk = Vec::new();
        }
    }
}

/// A started session process and, once reaped, how it ended.
#[derive(Debug)]
pub(super) struct SessionChild {
    child: Child,
    ended: Option<ExitStatus>,
    /// The worker killed it (it did not end after its client left).
    pub(super) killed: bool,
}

impl SessionChild {
    pub(super) fn new(child: Child) -> Self {
        Self { child, ended: None, killed: false }
    }

    /// How it ended, once it has; reaps it then, after killing what is left of the process
    /// group it led (programs its host code started; one that left the group with `setsid`
    /// is not reached: the session user's process limit bounds those).
    pub(super) fn poll(&mut self) -> Option<ExitStatus> {
        if self.ended.is_some() {
            return self.ended;
        }
        let pid = libc::pid_t::try_from(self.child.id()).ok()?;
        // SAFETY: an all-zero siginfo_t is valid; waitid fills it for our own child, without
        // reaping it (WNOWAIT) or blocking (WNOHANG).
        let exited = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT) == 0 && info.si_pid() != 0
        };
        if !exited {
            return None;
        }
        // SAFETY: the group's leader is a zombie until reaped below, so its id cannot have
        // been reused: the signal reaches only what it started.
        unsafe { libc::killpg(pid, libc::SIGKILL) };
        self.ended = Some(self.child.wait().unwrap_or_else(|_| ExitStatus::from_raw(0)));
        self.ended
    }

    pub(super) fn kill(&mut self) {
        if self.ended.is_none() {
            self.killed = true;
            let _ = self.child.kill();
        }
    }
}

/// Waits for the session process to end; with `grace`, kills it when that passes first.
pub(super) fn wait(child: &Mutex<SessionChild>, grace: Option<Duration>) -> ExitStatus {
    let started = Instant::now();
    let mut killed = false;
    loop {
        if let Some(status) = lock(child).poll() {
            return status;
        }
        if !killed && grace.is_some_and(|g| started.elapsed() >= g) {
            tracing::warn!("session process did not end within {grace:?} after its client left; killing it");
            lock(child).kill();
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Why the session process died, if it did not exit cleanly. `killed`: the worker killed
/// it; `max_file_bytes`: its file-size limit.
pub(super) fn died(status: &ExitStatus, killed: bool, max_file_bytes: u64) -> Option<String> {
    if let Some(signal) = status.signal() {
        let limit;
        let name = match signal {
            libc::SIGKILL if killed => "SIGKILL, killed by the worker: it did not end after its client left",
            libc::SIGKILL => {
                "SIGKILL, killed by the system: most likely the kernel's out-of-memory killer (the session's host memory, \
                 its device memory included, ran the machine out of memory)"
            }
            libc::SIGXFSZ => {
                limit = format!("SIGXFSZ, a file written beyond {}", super::confine::file_limit_text(Some(max_file_bytes)));
                &limit
            }
            libc::SIGXCPU => "SIGXCPU, its CPU-time limit (RLIMIT_CPU)",
            libc::SIGSEGV => "SIGSEGV, an invalid memory access in client code",
            libc::SIGBUS => "SIGBUS, an invalid memory access in client code",
            libc::SIGILL => "SIGILL, an illegal instruction in client code",
            libc::SIGFPE => "SIGFPE, an arithmetic fault in client code",
            libc::SIGABRT => "SIGABRT, aborted",
            libc::SIGSYS => "SIGSYS, a forbidden system call",
            _ => "a signal",
        };
        return Some(format!("signal {signal}: {name}"));
    }
    match status.code() {
        Some(0) | None => None,
        Some(code) if code == i32::from(super::child::EXIT_SETUP_FAILED) => {
            Some(format!("exit status {code}: it could not drop its rights or start; see the worker's log"))
        }
        Some(code) => Some(format!("exit status {code}")),
    }
}
