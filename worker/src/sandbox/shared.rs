//! The shared session process: with `--isolation shared` on a GPU backend, every session of
//! the worker runs in ONE confined session process, on one context per device, not in the
//! worker (`docs/ISOLATION.md`, "Faults in shared mode").
//!
//! Why a process and not the worker: a GPU context in a sticky error state (a kernel's
//! illegal address, 700, and the like) cannot be repaired in the process that holds it —
//! CUDA: "the process must be terminated and relaunched" (measured: after
//! `cuDevicePrimaryCtxReset` the next `cuDevicePrimaryCtxRetain` answers the same error).
//! So the worker starts the shared process (`relay::start` with `shared`: the same
//! confinement, environment, usage row and scratch as a session process) when a session
//! comes and none is running, and hands it each authenticated connection — TCP and
//! same-host handed over, TLS and RDMA relayed over a socket of their own — preceded by the
//! session's identity ([`SessionArgs`]) and its callback bridge.
//!
//! The process serves each connection on a thread of its own, its sessions sharing one
//! backend as sessions in the worker do. IPC between them goes through the process's own
//! [`LocalBroker`](crate::ipc::LocalBroker) (the exporter's own pointer, tokens per tenant):
//! every live session of the worker is in the current process; tokens of a poisoned one's
//! sessions name memory of a dead context and are not valid in its successor. On a sticky fault the sessions' fence
//! ([`crate::device_faults`]) makes every session holding work on the device answer the
//! fault's code; instead of resetting the context the process reports [`Report::Poisoned`]
//! to the worker, which hands it no more sessions and starts a fresh process for the next
//! one. The poisoned process answers its fenced sessions until they leave, then exits; the
//! worker kills it after [`POISONED_GRACE`] if they do not. If it dies instead, every
//! session it served gets the worker's death notice.

use super::child::{ChildArgs, ChildLimits};
use super::handover::{DeathNotice, Handed, CONTROL_WRITE_TIMEOUT, REAP_POLL};
use super::link::{LinkSink, LinkSource};
use super::relay::{self, SessionChild, EXIT_GRACE};
use super::{SessionProcess, UsageRow};
use crate::backend::host::usage::SharedUsage;
use crate::backend::Backend;
use crate::device_faults::{DeviceFaults, FaultEvent};
use crate::driver::ReplyWriter;
use crate::metrics::{Metrics, OpenSession};
use crate::session::{RtcCacheDir, Session, SessionConfig, SessionLimits};
use proto_core::Status;
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::process::{ExitCode, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use transport_core::{FrameSource, TransportError};

/// How long a poisoned shared process may keep serving its fenced sessions (which only get
/// the fault's error) before the worker kills it.
pub const POISONED_GRACE: Duration = Duration::from_secs(60);
/// Bytes of a [`Report`] on the control channel (process → worker).
const REPORT_BYTES: usize = 24;
const REPORT_ENDED: u32 = 1;
const REPORT_POISONED: u32 = 2;
const REPORT_FENCED: u32 = 3;
/// How often the worker's reader of a shared process's reports looks at its grace.
const REPORT_POLL: Duration = Duration::from_millis(200);
/// Most bytes of a [`SessionArgs`] message.
const MAX_SESSION_ARGS_BYTES: usize = 64 << 10;

/// What a shared session process tells the worker, on its control channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// Session `0` has ended (its client left).
    Ended(u64),
    /// A sticky fault poisoned the device's context: the worker must not hand this process
    /// new sessions.
    Poisoned { device: u32, code: i32, session: u64 },
    /// Session `session` lost its work on `device` to the fault.
    Fenced { device: u32, session: u64 },
}

impl Report {
    fn encode(self) -> [u8; REPORT_BYTES] {
        let mut bytes = [0u8; REPORT_BYTES];
        let (kind, device, code, session) = match self {
            Report::Ended(session) => (REPORT_ENDED, 0, 0, session),
            Report::Poisoned { device, code, session } => (REPORT_POISONED, device, code, session),
            Report::Fenced { device, session } => (REPORT_FENCED, device, 0, session),
        };
        bytes[0..4].copy_from_slice(&kind.to_le_bytes());
        bytes[4..8].copy_from_slice(&device.to_le_bytes());
        bytes[8..12].copy_from_slice(&code.to_le_bytes());
        bytes[16..24].copy_from_slice(&session.to_le_bytes());
        bytes
    }

    fn decode(bytes: &[u8; REPORT_BYTES]) -> io::Result<Self> {
        let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        let session = u64::from_le_bytes(bytes[16..24].try_into().expect("8 bytes"));
        match word(0) {
            REPORT_ENDED => Ok(Report::Ended(session)),
            REPORT_POISONED => Ok(Report::Poisoned { device: word(4), code: word(8) as i32, session }),
            REPORT_FENCED => Ok(Report::Fenced { device: word(4), session }),
            other => Err(io::Error::new(io::ErrorKind::InvalidData, format!("unknown report kind {other} from the shared session process"))),
        }
    }
}

/// Who a session handed to the shared process is: what a session process gets on its
/// command line, per session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionArgs {
    pub session_id: u64,
    pub client_name: String,
    pub tenant: Option<String>,
    /// The tenant's compile cache directory.
    pub rtc_cache: Option<std::path::PathBuf>,
    pub limits: ChildLimits,
    pub max_queued_reply_bytes: usize,
    /// The session's row of the usage table, for its device time.
    pub usage_row: usize,
}

/// `%` and line ends escaped, so a value (a client's name) cannot start a line of its own.
fn escape(value: &str) -> String {
    value.replace('%', "%25").replace('\n', "%0A").replace('\r', "%0D")
}

fn unescape(value: &str) -> String {
    value.replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")
}

impl SessionArgs {
    /// `KEY=VALUE` lines.
    pub fn encode(&self) -> Vec<u8> {
        let mut lines = vec![
            format!("session={}", self.session_id),
            format!("client={}", escape(&self.client_name)),
            format!("max-streams={}", self.limits.max_streams),
            format!("max-events={}", self.limits.max_events),
            format!("max-modules={}", self.limits.max_modules),
            format!("max-memory={}", self.limits.max_memory.unwrap_or(0)),
            format!("max-pending={}", self.limits.max_pending_bytes),
            format!("max-queued-reply={}", self.max_queued_reply_bytes),
            format!("usage-row={}", self.usage_row),
        ];
        if let Some(tenant) = &self.tenant {
            lines.push(format!("tenant={}", escape(tenant)));
        }
        if let Some(dir) = &self.rtc_cache {
            lines.push(format!("rtc-cache={}", escape(&dir.to_string_lossy())));
        }
        lines.join("\n").into_bytes()
    }

    /// Parses [`encode`](Self::encode)'s output; a key given twice is refused.
    pub fn decode(bytes: &[u8]) -> Result<Self, String> {
        let text = std::str::from_utf8(bytes).map_err(|e| format!("session arguments: {e}"))?;
        let mut map = HashMap::new();
        for line in text.lines() {
            let (key, value) = line.split_once('=').ok_or_else(|| format!("session argument {line:?} is not KEY=VALUE"))?;
            if map.insert(key, unescape(value)).is_some() {
                return Err(format!("session argument {key}= given twice"));
            }
        }
        let get = |key: &str| map.get(key).cloned().ok_or_else(|| format!("missing {key}="));
        let number = |key: &str| get(key)?.parse::<u64>().map_err(|e| format!("{key}=: {e}"));
        Ok(Self {
            session_id: number("session")?,
            client_name: get("client")?,
            tenant: map.get("tenant").cloned(),
            rtc_cache: map.get("rtc-cache").map(std::path::PathBuf::from),
            limits: ChildLimits {
                max_streams: number("max-streams")? as usize,
                max_events: number("max-events")? as usize,
                max_modules: number("max-modules")? as usize,
                max_memory: Some(number("max-memory")?).filter(|&m| m > 0),
                max_pending_bytes: number("max-pending")? as usize,
            },
            max_queued_reply_bytes: number("max-queued-reply")? as usize,
            usage_row: number("usage-row")? as usize,
        })
    }
}

// ---- The worker's side ----

/// The worker's shared session process, replaced when it is poisoned or dies.
#[derive(Debug, Default)]
pub struct SharedProcesses {
    current: Mutex<Option<Arc<Instance>>>,
}

/// One shared session process.
#[derive(Debug)]
struct Instance {
    pid: u32,
    /// The control channel: messages to the process (sent under `sending`), reports back.
    control: Arc<UnixStream>,
    sending: Arc<Mutex<()>>,
    child: Mutex<SessionChild>,
    /// Set by its first [`Report::Poisoned`]: no new session goes to it.
    poisoned: AtomicBool,
    /// The sessions it serves, told when theirs ends (dropped: the process ended).
    sessions: Mutex<HashMap<u64, mpsc::Sender<()>>>,
    /// How the process ended, once it has.
    exit: OnceLock<ExitStatus>,
}

impl Instance {
    fn usable(&self) -> bool {
        !self.poisoned.load(Ordering::Acquire) && self.exit.get().is_none()
    }

    fn kill(&self) {
        relay::lock(&self.child).kill();
    }
}

impl SharedProcesses {
    /// The running, healthy shared process, or a new one started for `session`.
    fn current(&self, session: &Session, process: &SessionProcess) -> io::Result<Arc<Instance>> {
        let mut current = relay::lock(&self.current);
        if let Some(instance) = current.as_ref().filter(|i| i.usable()) {
            return Ok(Arc::clone(instance));
        }
        let row = process.claim_row().ok_or_else(|| io::Error::other("the worker runs its most session processes already"))?;
        let (child, control, ipc_channel, scratch) = relay::start(session, process, row.row, true)?;
        // The process's own IPC channel is unused: each session brings its own.
        drop(ipc_channel);
        if let Err(e) = control.set_write_timeout(Some(CONTROL_WRITE_TIMEOUT)) {
            tracing::warn!(%e, "no write timeout on the shared process's control channel");
        }
        let reports = control.try_clone()?;
        let instance = Arc::new(Instance {
            pid: child.id(),
            control: Arc::new(control),
            sending: Arc::default(),
            child: Mutex::new(SessionChild::new(child)),
            poisoned: AtomicBool::new(false),
            sessions: Mutex::default(),
            exit: OnceLock::new(),
        });
        session.metrics().session_process_started(true);
        tracing::info!(pid = instance.pid, "shared session process started");
        let watched = Arc::clone(&instance);
        let (metrics, max_file_bytes) = (session.metrics(), process.max_file_bytes);
        std::thread::Builder::new()
            .name(format!("hip-shared-{}", instance.pid))
            .spawn(move || watch(&watched, reports, &metrics, max_file_bytes, row, scratch))
            .inspect_err(|_| instance.kill())?;
        *current = Some(Arc::clone(&instance));
        Ok(instance)
    }
}

/// Reads a shared process's reports until it ends, then reaps it: tells each session whose
/// session ended, marks it poisoned (killed after [`POISONED_GRACE`]), and once it has
/// ended frees its row and scratch directory and tells every session still served.
fn watch(instance: &Instance, mut reports: UnixStream, metrics: &Metrics, max_file_bytes: u64, row: UsageRow, scratch: relay::Scratch) {
    let _ = reports.set_read_timeout(Some(REPORT_POLL));
    let mut poisoned_at: Option<Instant> = None;
    let mut record = [0u8; REPORT_BYTES];
    let mut filled = 0;
    loop {
        if poisoned_at.is_some_and(|at| at.elapsed() >= POISONED_GRACE) {
            tracing::warn!(pid = instance.pid, "the poisoned shared session process still serves sessions after {POISONED_GRACE:?}; killing it");
            instance.kill();
            break;
        }
        match reports.read(&mut record[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted) => continue,
            Err(e) => {
                tracing::warn!(pid = instance.pid, %e, "the shared session process's control channel failed");
                break;
            }
        }
        if filled < REPORT_BYTES {
            continue;
        }
        filled = 0;
        match Report::decode(&record) {
            Ok(Report::Ended(session)) => {
                if let Some(ended) = relay::lock(&instance.sessions).remove(&session) {
                    let _ = ended.send(());
                }
            }
            Ok(Report::Fenced { device, .. }) => metrics.session_ended_by_fault(device),
            Ok(Report::Poisoned { device, code, session }) => {
                if poisoned_at.is_none() {
                    let name = proto_core::hip_error::name(code).to_string_lossy();
                    tracing::warn!(
                        pid = instance.pid,
                        device,
                        code,
                        session,
                        "device fault in the shared session process: session {session} met {name} ({code}) on device {device}; every \
                         session holding work on it gets the error, and new sessions go to a new process"
                    );
                    metrics.device_reset(device);
                    // No new session reaches it: those it serves still end normally.
                    let _sending = relay::lock(&instance.sending);
                    instance.poisoned.store(true, Ordering::Release);
                    let _ = instance.control.shutdown(std::net::Shutdown::Write);
                    poisoned_at = Some(Instant::now());
                }
            }
            Err(e) => {
                tracing::warn!(pid = instance.pid, %e, "ending the shared session process");
                instance.kill();
                break;
            }
        }
    }
    let status = relay::wait(&instance.child, Some(EXIT_GRACE));
    let killed = relay::lock(&instance.child).killed;
    let _ = instance.exit.set(status);
    if status.code() == Some(i32::from(crate::watchdog::EXIT_KERNEL_TIMEOUT)) {
        tracing::warn!(pid = instance.pid, "a kernel ran past --max-kernel-ms: the shared session process was ended, with every session in it");
        metrics.kernel_timeout();
    } else if let Some(why) = relay::died(&status, killed, max_file_bytes) {
        tracing::warn!(pid = instance.pid, "the shared session process died: {why}; every session it served has ended");
    } else {
        tracing::info!(pid = instance.pid, %status, "shared session process ended");
    }
    // Every session still waiting learns the process has ended.
    relay::lock(&instance.sessions).clear();
    drop((row, scratch));
}

/// How a session in the shared process ended, as its worker thread saw it.
enum Ending {
    /// Its client left; the process goes on.
    Ended,
    /// The process ended with it.
    ProcessEnded,
}

/// Hands `session` (just authenticated) to the shared session process and waits until its
/// session ends there; its connection comes as `handed`, or for a relayed connection
/// ([`Handed::RelaySocket`]) over the returned socket's peer. The session counts as open
/// (`open`) until then.
pub fn serve(
    session: &Session,
    handed: Handed,
    replies: &ReplyWriter,
    process: &SessionProcess,
    open: OpenSession,
    stopping: &(dyn Fn() -> bool + Sync),
) -> Result<(), TransportError> {
    let _open = open;
    let peer = match &handed {
        Handed::Tcp { peer, .. } => *peer,
        _ => None,
    };
    let notice = DeathNotice::of(&handed);
    // Every session of the shared process takes other workers' fetches over its control
    // channel; stripes only from a TCP client's address (`peer`).
    let entered = match enter(session, handed, process) {
        Ok(entered) => entered,
        Err(e) => {
            tracing::error!(%e, "cannot hand the session to the shared session process");
            let _ = replies.send_error(0, 0, Status::OUT_OF_MEMORY, &format!("the worker cannot hand this session to its shared process: {e}"));
            return Err(TransportError::Io(e));
        }
    };
    process.handed.insert(session.id(), Arc::clone(&entered.instance.control), peer.map(|p| p.ip()), Some(Arc::clone(&entered.instance.sending)));
    let ending = entered.wait(stopping);
    process.handed.remove(session.id());
    if let Ending::ProcessEnded = ending {
        let (status, message) = entered.ended_message(session);
        notice.send(replies, status, &message);
    }
    Ok(())
}

/// [`serve`] for a connection the worker must relay (TLS, RDMA): the frames pass through a
/// socket pair, whose far end the shared process serves the session over.
pub fn relay(
    session: &Session,
    source: &mut dyn FrameSource,
    replies: &ReplyWriter,
    process: &SessionProcess,
    open: OpenSession,
    hang_up: &(dyn Fn() + Sync),
) -> Result<(), TransportError> {
    let _open = open;
    let (ours, theirs) = UnixStream::pair().map_err(TransportError::Io)?;
    let entered = match enter(session, Handed::RelaySocket { socket: theirs.into() }, process) {
        Ok(entered) => entered,
        Err(e) => {
            tracing::error!(%e, "cannot hand the session to the shared session process");
            let _ = replies.send_error(0, 0, Status::OUT_OF_MEMORY, &format!("the worker cannot hand this session to its shared process: {e}"));
            return Err(TransportError::Io(e));
        }
    };
    let metrics = session.metrics();
    let timed = Mutex::default();
    let (to_child, from_child) = match ours.try_clone() {
        Ok(reader) => (LinkSink::new(ours), LinkSource::new(reader, process.spin)),
        Err(e) => return Err(TransportError::Io(e)),
    };
    // Other workers' fetches of this session's grants come over the process's control channel.
    process.handed.insert(session.id(), Arc::clone(&entered.instance.control), None, Some(Arc::clone(&entered.instance.sending)));
    let up = std::thread::scope(|scope| {
        let up = std::thread::Builder::new()
            .name(format!("hip-relay-{}", session.id()))
            .spawn_scoped(scope, || relay::client_to_child(source, to_child, &metrics, &timed, &|| ()))
            .map_err(|e| TransportError::Io(io::Error::other(e)))?;
        let down = relay::child_to_client(from_child, replies, &metrics, &timed);
        if let Ending::ProcessEnded = entered.wait(&|| false) {
            let (status, message) = entered.ended_message(session);
            let _ = replies.send_error(0, 0, status, &message);
        } else if let Err(e) = &down {
            tracing::debug!(%e, "link from the shared session process ended");
        }
        hang_up();
        up.join().unwrap_or_else(|_| Err(TransportError::Io(io::Error::other("relay thread panicked"))))
    });
    process.handed.remove(session.id());
    match up {
        Err(TransportError::Closed) => Ok(()),
        other => other,
    }
}

/// A session handed to a shared process.
struct Entered {
    instance: Arc<Instance>,
    ended: mpsc::Receiver<()>,
    /// Its device time, counted for its tenant until dropped (after the row).
    _tenant_row: crate::accounting::AttachedRow,
    _row: UsageRow,
}

impl Entered {
    /// Until the session ends in the process, or the process ends; on the worker's shutdown
    /// the process is given [`EXIT_GRACE`] before it is killed.
    fn wait(&self, stopping: &(dyn Fn() -> bool + Sync)) -> Ending {
        let mut stop_seen: Option<Instant> = None;
        loop {
            match self.ended.recv_timeout(REAP_POLL * 20) {
                Ok(()) => return Ending::Ended,
                Err(mpsc::RecvTimeoutError::Disconnected) => return Ending::ProcessEnded,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if stop_seen.is_none() && stopping() {
                stop_seen = Some(Instant::now());
            }
            if stop_seen.is_some_and(|seen| seen.elapsed() >= EXIT_GRACE) {
                tracing::warn!("the shared session process did not end within {EXIT_GRACE:?} of the worker's shutdown; killing it");
                self.instance.kill();
                stop_seen = None;
            }
        }
    }

    /// The error a session gets when the process ended under it.
    fn ended_message(&self, session: &Session) -> (Status, String) {
        let timed_out = self.instance.exit.get().and_then(ExitStatus::code) == Some(i32::from(crate::watchdog::EXIT_KERNEL_TIMEOUT));
        match (timed_out, session.config().kernel_watchdog) {
            (true, Some(limit)) => (
                Status::LAUNCH_TIME_OUT,
                format!(
                    "a kernel ran longer than the worker's limit of {} ms (--max-kernel-ms) in the process every session shares \
                     (--isolation shared), which was ended: this session has ended too; reconnect to go on",
                    limit.as_millis()
                ),
            ),
            _ => {
                let why = self.instance.exit.get().map_or_else(|| "it was lost".to_string(), |status| status.to_string());
                (
                    Status::LAUNCH_FAILURE,
                    format!(
                        "the shared session process died ({why}): every session it served has ended, its resources are freed; reconnect to go on"
                    ),
                )
            }
        }
    }
}

/// Hands `session` and its connection (`handed`) to the current shared process (started or
/// replaced as needed), with its identity and callback bridge.
fn enter(session: &Session, handed: Handed, process: &SessionProcess) -> io::Result<Entered> {
    let shared = process.shared.as_ref().ok_or_else(|| io::Error::other("no shared session process configured"))?;
    let row = process.claim_row().ok_or_else(|| io::Error::other("the worker serves its most sessions already"))?;
    let tenant_row = relay::metrics_tenant_row(session, process, row.row);
    let (client, tenant) = session.client();
    let args = SessionArgs {
        session_id: session.id(),
        client_name: client.to_owned(),
        tenant: tenant.map(str::to_owned),
        rtc_cache: relay::session_cache_dir(session, process),
        limits: ChildLimits::of(&session.config().limits),
        max_queued_reply_bytes: session.config().max_queued_reply_bytes,
        usage_row: row.row,
    };
    let (bridge, their_bridge) = UnixStream::pair()?;
    // Two tries: a process poisoned or dead between the look and the send is replaced once.
    let mut tries = 0;
    let (instance, ended) = loop {
        tries += 1;
        let instance = shared.current(session, process)?;
        let _sending = relay::lock(&instance.sending);
        if !instance.usable() {
            if tries < 2 {
                continue;
            }
            return Err(io::Error::other("the shared session process was replaced twice while this session was handed to it"));
        }
        let (tell, ended) = mpsc::channel();
        relay::lock(&instance.sessions).insert(session.id(), tell);
        let message = Handed::Session { args: args.encode(), bridge: their_bridge.try_clone()?.into() };
        match message.send(&instance.control).and_then(|()| handed.send(&instance.control)) {
            Ok(()) => break (Arc::clone(&instance), ended),
            Err(e) => {
                relay::lock(&instance.sessions).remove(&session.id());
                return Err(e);
            }
        }
    };
    drop(their_bridge);
    crate::session::CallbackChannel::bridge_worker(bridge)?;
    tracing::info!(pid = instance.pid, "session handed to the shared session process");
    Ok(Entered { instance, ended, _tenant_row: tenant_row, _row: row })
}

// ---- The shared process's side ----

/// `main` of a shared session process, after confinement and the backend: serves every
/// session the worker hands over `control` on a thread of its own, until the worker closes
/// the channel (it is poisoned, or the worker ends) and its last session has ended.
pub fn serve_sessions(
    control: UnixStream,
    backend: Arc<dyn Backend>,
    usage: Arc<SharedUsage>,
    transfers: Arc<crate::transfer::TransferHub>,
    args: &ChildArgs,
) -> ExitCode {
    let faults = Arc::new(DeviceFaults::default());
    let ipc = Arc::new(crate::ipc::LocalBroker::default());
    let metrics = Arc::new(Metrics::default());
    // Fetches of any session's grants by other workers: the hub is the process's.
    let fetch_config = Arc::new(SessionConfig {
        transfers: Some(Arc::clone(&transfers)),
        metrics: Arc::clone(&metrics),
        device_faults: Arc::clone(&faults),
        ..SessionConfig::default()
    });
    let reports = match control.try_clone() {
        Ok(reports) => Arc::new(Mutex::new(reports)),
        Err(e) => {
            tracing::error!(%e, "no report channel to the worker");
            return ExitCode::from(super::child::EXIT_SETUP_FAILED);
        }
    };
    let report = {
        let reports = Arc::clone(&reports);
        move |report: Report| {
            if let Err(e) = relay::lock(&reports).write_all(&report.encode()) {
                tracing::warn!(%e, ?report, "cannot report to the worker");
            }
        }
    };
    let poisoned = {
        let report = report.clone();
        move |device, event: FaultEvent| match event {
            FaultEvent::Poisoned(fault) => report(Report::Poisoned { device, code: fault.code, session: fault.session }),
            FaultEvent::Fenced(session) => report(Report::Fenced { device, session }),
        }
    };
    faults.replace_process_on_fault(Box::new(poisoned));
    if let Some(limit) = args.max_kernel_ms.map(crate::watchdog::parse_limit) {
        let started = limit.map_err(io::Error::other).and_then(|limit| crate::watchdog::start_in_shared_process(limit, Arc::clone(&backend)));
        if let Err(e) = started {
            tracing::error!(%e, "cannot start the kernel watchdog: the shared session process does not serve");
            return ExitCode::from(super::child::EXIT_SETUP_FAILED);
        }
    }
    // Stripes of the live sessions, by session id.
    let stripes: Arc<Mutex<HashMap<u64, super::child::StripeSessions>>> = Arc::default();
    let mut threads = Vec::new();
    loop {
        let message = match Handed::recv(&control) {
            Ok(Some(message)) => message,
            Ok(None) => break,
            Err(e) => {
                tracing::warn!(%e, "the control channel failed: no new sessions");
                break;
            }
        };
        let (args_bytes, bridge) = match message {
            Handed::Session { args, bridge } => (args, bridge),
            Handed::Stripe { session, socket, unread, peer } => {
                match relay::lock(&stripes).get(&session) {
                    Some(hub) => hub.serve_one(socket, unread, peer),
                    None => tracing::warn!(session, "a stripe for a session this process does not serve"),
                }
                continue;
            }
            Handed::Fetch { socket, unread, peer, .. } => {
                super::child::serve_fetch(&backend, &fetch_config, socket, unread, peer, args.spin);
                continue;
            }
            other => {
                tracing::warn!(?other, "a connection without its session's identity; dropped");
                continue;
            }
        };
        let connection = match Handed::recv(&control) {
            Ok(Some(connection)) => connection,
            other => {
                tracing::warn!(?other, "a session's identity without its connection: no new sessions");
                break;
            }
        };
        if args_bytes.len() > MAX_SESSION_ARGS_BYTES {
            tracing::warn!(len = args_bytes.len(), "session arguments too long; the session is not served");
            continue;
        }
        let ident = match SessionArgs::decode(&args_bytes) {
            Ok(ident) => ident,
            Err(e) => {
                tracing::warn!("{e}; the session is not served");
                continue;
            }
        };
        let config = SessionConfig {
            max_queued_reply_bytes: ident.max_queued_reply_bytes,
            limits: SessionLimits {
                max_streams: ident.limits.max_streams,
                max_events: ident.limits.max_events,
                max_modules: ident.limits.max_modules,
                max_memory: ident.limits.max_memory,
                max_pending_bytes: ident.limits.max_pending_bytes,
                ..SessionLimits::default()
            },
            ipc: Arc::clone(&ipc) as Arc<dyn crate::ipc::IpcBroker>,
            rtc_cache_dir: ident.rtc_cache.clone().map(RtcCacheDir::Tenant),
            device_faults: Arc::clone(&faults),
            metrics: Arc::clone(&metrics),
            transfers: Some(Arc::clone(&transfers)),
            ..SessionConfig::default()
        };
        let mut session = Session::new(Arc::clone(&backend), Arc::new(config));
        let id = ident.session_id;
        session.adopt_handshake(id, ident.client_name, ident.tenant);
        session.device_time().report_to(Arc::clone(&usage), ident.usage_row);
        // One context for all these sessions: the driver's launch path is theirs to share.
        session.device_time().pace_queued_work();
        if let Err(e) = session.bridge_callbacks(UnixStream::from(bridge)) {
            tracing::warn!(%e, session = id, "no callback bridge to the worker: stream callbacks will fail");
        }
        let (stripes, ended, spin) = (Arc::clone(&stripes), report.clone(), args.spin);
        let span = tracing::info_span!("session", session = id);
        let spawned = std::thread::Builder::new().name(format!("hip-session-{id}")).spawn(move || {
            let _in_span = span.enter();
            let result = super::child::serve_handed(connection, None, session, spin, |hub| {
                relay::lock(&stripes).insert(id, hub);
                Ok(())
            });
            relay::lock(&stripes).remove(&id);
            tracing::info!(?result, "session ended");
            ended(Report::Ended(id));
        });
        match spawned {
            Ok(thread) => threads.push(thread),
            Err(e) => {
                tracing::warn!(%e, session = id, "no thread for the session");
                report(Report::Ended(id));
            }
        }
        threads.retain(|t| !t.is_finished());
    }
    // No new session comes: those left are served to their end.
    for thread in threads {
        let _ = thread.join();
    }
    tracing::info!("shared session process exits: no session left, and the worker hands it no more");
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_arguments_survive_and_a_name_cannot_add_a_line() {
        let args = SessionArgs {
            session_id: 42,
            client_name: "a name\ntenant=other %0A".into(),
            tenant: Some("team-a".into()),
            rtc_cache: Some("/var/cache/hip-remote/rtc/0123".into()),
            limits: ChildLimits { max_streams: 3, max_events: 4, max_modules: 5, max_memory: Some(1 << 20), max_pending_bytes: 6 },
            max_queued_reply_bytes: 7,
            usage_row: 8,
        };
        assert_eq!(SessionArgs::decode(&args.encode()).unwrap(), args);
        let without = SessionArgs { tenant: None, rtc_cache: None, ..args.clone() };
        assert_eq!(SessionArgs::decode(&without.encode()).unwrap(), without);
        assert!(SessionArgs::decode(b"session=1\nsession=2").unwrap_err().contains("twice"));
    }

    #[test]
    fn reports_cross_intact() {
        for report in [Report::Ended(7), Report::Poisoned { device: 1, code: 700, session: 9 }, Report::Fenced { device: 2, session: 3 }] {
            assert_eq!(Report::decode(&report.encode()).unwrap(), report);
        }
        assert!(Report::decode(&[9u8; REPORT_BYTES]).is_err());
    }
}
