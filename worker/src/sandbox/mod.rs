//! Session processes: with host code allowed, each session runs in a process of its own that
//! holds no rights the session lacks (`docs/HOST_MODULES.md`).
//!
//! The worker does the handshake itself — tokens and the token store never reach a session
//! process — then starts `hip-worker --session-child` ([`child::main`]) with one end of a
//! Unix socket pair as its stdin (its control channel) and hands it the connection: TCP and
//! same-host connections are served by the process itself ([`handover`]); TLS and RDMA ones,
//! whose state cannot move between processes, are relayed by the worker over a socket pair
//! it hands the process there ([`relay::relay`]). The session process confines itself ([`confine`]) before it builds its own
//! host backend and serves the session; a crash in client code ends that process and that
//! session only. A second socket ([`IPC_FD`]) lets the process use the worker's IPC registry
//! ([`crate::ipc`]): memory files pass between session processes through the worker, which
//! answers as the tenant it authenticated.
//!
//! GPU backends use the same processes (`--isolation process`, the default): each session
//! process builds a cuda or hip backend of its own ([`BackendSpec`]), with its own GPU
//! context, so a fault that poisons a context (a kernel's illegal address) ends only that
//! session, tenants do not share an address space, and device limits are per session. The
//! worker then holds no context: it reports the devices from [`SessionProcess::usage`]
//! (`docs/ISOLATION.md`).

pub mod child;
pub mod confine;
pub mod dial;
pub mod handover;
pub mod link;
pub mod relay;
pub mod shared;
pub mod spec;

pub use spec::BackendSpec;

use crate::backend::host::usage::SharedUsage;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The argument that makes `hip-worker` a session process.
pub const CHILD_ARG: &str = "--session-child";
/// The descriptor by which a session process inherits the shared memory-usage table.
pub const USAGE_FD: i32 = 3;
/// The descriptor of a session process's channel to the worker's IPC registry
/// ([`crate::ipc::ChildBroker`]).
pub const IPC_FD: i32 = 4;
/// The descriptor by which a session process inherits its end of the callback bridge
/// ([`crate::session::CallbackChannel`]).
pub const CALLBACK_FD: i32 = 5;
/// The descriptor of a session process's channel on which it asks the worker to connect to
/// other workers for it ([`dial`]).
pub const DIAL_FD: i32 = 6;
/// The first descriptor above every inherited one: sources are moved here before the dup2s
/// that place them, and a session process closes everything from here up.
pub const FIRST_FREE_FD: i32 = 7;

/// How the worker starts session processes.
#[derive(Debug)]
pub struct SessionProcess {
    /// The `hip-worker` executable (the running one).
    pub exe: PathBuf,
    /// The backend each session process builds.
    pub backend: BackendSpec,
    /// User and group a session process switches to when the worker runs as root.
    pub run_as: Option<(u32, u32)>,
    /// Where session processes get their scratch directories.
    pub scratch_root: PathBuf,
    /// Log filter of the session processes.
    pub log_filter: String,
    /// How long link reads poll before blocking (the worker's TCP spin).
    pub spin: std::time::Duration,
    /// Largest file a session process may write (RLIMIT_FSIZE), bytes; default
    /// [`confine::default_max_file_bytes`] of the device memory.
    pub max_file_bytes: u64,
    /// Device memory in use, worker-wide, counted by every session process.
    pub usage: Arc<SharedUsage>,
    /// More environment for session processes (the MPS daemon's directories, `--mps`).
    pub child_env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    /// Which rows of `usage` live session processes (and sessions of a shared one) hold.
    rows: Arc<Mutex<Vec<bool>>>,
    /// Sessions whose processes serve their connections, for their stripes.
    pub handed: handover::HandedSessions,
    /// `Some`: every session goes to one shared session process at a time
    /// (`--isolation shared` on a GPU backend), not to a process of its own.
    pub shared: Option<shared::SharedProcesses>,
}

impl SessionProcess {
    /// Session processes of the running executable, serving `devices` devices of `backend`,
    /// for at most `max_sessions` sessions at once, switching to `user` (a name) when the
    /// worker runs as root.
    pub fn new(backend: BackendSpec, devices: u32, user: &str, log_filter: &str, max_sessions: usize) -> std::io::Result<Self> {
        // SAFETY: getuid has no preconditions.
        let root = unsafe { libc::getuid() } == 0;
        let run_as = if root { Some(confine::lookup_user(user)?) } else { None };
        if run_as.is_some_and(|(uid, _)| uid == 0) {
            return Err(std::io::Error::other(format!("--host-code-user {user} is root: session processes must not run as root")));
        }
        let usage = Arc::new(SharedUsage::create(devices as usize, max_sessions)?);
        // Host device memory lives in memory files, which the file-size limit counts.
        let max_file_bytes = confine::default_max_file_bytes(match &backend {
            BackendSpec::Host(host) => host.memory_per_device,
            _ => 0,
        });
        Ok(Self {
            exe: std::env::current_exe()?,
            backend,
            run_as,
            scratch_root: std::env::temp_dir(),
            log_filter: log_filter.to_owned(),
            spin: std::time::Duration::ZERO,
            max_file_bytes,
            usage,
            child_env: Vec::new(),
            rows: Arc::new(Mutex::new(vec![false; max_sessions])),
            handed: handover::HandedSessions::default(),
            shared: None,
        })
    }

    /// Takes a free row of the usage table for a new session process.
    fn claim_row(&self) -> Option<UsageRow> {
        let mut rows = self.rows.lock().unwrap_or_else(|p| p.into_inner());
        let free = rows.iter().position(|used| !used)?;
        rows[free] = true;
        self.usage.note_row_used(free + 1);
        Some(UsageRow { usage: Arc::clone(&self.usage), rows: Arc::clone(&self.rows), row: free + 1 })
    }
}

/// A row of the usage table (a session process's, or a session's in a shared one); what it
/// still holds is given back, and the row freed, when this drops (after its holder ended).
struct UsageRow {
    usage: Arc<SharedUsage>,
    rows: Arc<Mutex<Vec<bool>>>,
    row: usize,
}

impl Drop for UsageRow {
    fn drop(&mut self) {
        self.usage.release_slot(self.row);
        let mut rows = self.rows.lock().unwrap_or_else(|p| p.into_inner());
        rows[self.row - 1] = false;
    }
}

#[cfg(test)]
mod tests {
    use super::child::{ChildArgs, ChildLimits};
    use super::link::{head_bytes, LinkSink, LinkSource};
    use super::BackendSpec;
    use crate::backend::host::usage::SharedUsage;
    use crate::backend::{HostBackend, HostConfig, MemoryBackend};
    use proto_core::wire::MemcpyHtoD;
    use proto_core::{Bulk, Flags, Request};
    use std::os::unix::net::UnixStream;
    use std::sync::Arc;
    use transport_core::{FrameSink, FrameSource, TransportError};

    #[test]
    fn child_arguments_survive_the_command_line() {
        let host = BackendSpec::Host(HostConfig { devices: 2, memory_per_device: 1 << 30, allow_host_code: true, stream_threads: 3 });
        let args = ChildArgs {
            session_id: 42,
            client_name: "a client = with spaces".into(),
            tenant: Some("tenant-a".into()),
            backend: host,
            max_queued_reply_bytes: 256 << 20,
            limits: ChildLimits { max_streams: 1024, max_events: 9, max_modules: 7, max_memory: Some(1 << 20), max_pending_bytes: 5 },
            max_file_bytes: 1 << 30,
            run_as: Some((65534, 65534)),
            scratch: "/tmp/hip-session-42".into(),
            rtc_cache: Some("/var/cache/hip-remote/rtc/0123abcd".into()),
            log_filter: "info,hip_worker=debug".into(),
            spin: std::time::Duration::from_micros(50),
            usage_row: 3,
            usage_rows: 1024,
            usage_devices: 2,
            max_kernel_ms: Some(500),
            shared: false,
        };
        assert_eq!(ChildArgs::parse(args.to_args()).unwrap(), args);
        let without = ChildArgs { tenant: None, run_as: None, shared: true, ..args.clone() };
        assert_eq!(ChildArgs::parse(without.to_args()).unwrap(), without);
        // A GPU process's spec travels with the rest; a session's arguments cannot pose as it.
        let selection = Some(crate::devices::DeviceSelection { ordinals: vec![1, 0], source: super::spec::INHERITED_SELECTION });
        let cuda = ChildArgs { backend: BackendSpec::Cuda { selection: selection.clone() }, usage_devices: 2, ..args.clone() };
        assert_eq!(ChildArgs::parse(cuda.to_args()).unwrap(), cuda);
        let hip = ChildArgs { backend: BackendSpec::Hip { library: "/opt/rocm/lib/libamdhip64.so".into(), selection }, ..args.clone() };
        assert_eq!(ChildArgs::parse(hip.to_args()).unwrap(), hip);
        let posing = ChildArgs { client_name: "x backend=cuda".into(), ..args.clone() };
        assert_eq!(ChildArgs::parse(posing.to_args()).unwrap().backend, args.backend);
        assert!(ChildArgs::parse(["session=1".to_string()]).is_err());
    }

    #[test]
    fn a_gpu_view_reports_the_devices_and_what_every_session_process_published() {
        use crate::backend::DeviceBackend;
        let usage = Arc::new(SharedUsage::create(2, 3).unwrap());
        let template = HostBackend::new(HostConfig::default()).device_properties(0).unwrap();
        let gpu = |name: &str, total| crate::backend::DeviceProperties { name: name.into(), total_global_mem: total, ..template.clone() };
        let view = HostBackend::device_view("cuda", vec![gpu("H200 a", 8 << 30), gpu("H200 b", 4 << 30)], &usage);
        assert_eq!((view.name(), view.device_count().unwrap()), ("cuda", 2));
        assert_eq!(view.device_properties(1).unwrap().name, "H200 b");
        // Two session processes publish, one republishes less, then one ends.
        usage.publish(1, 0, 3 << 30);
        usage.publish(2, 0, 1 << 30);
        usage.publish(2, 1, 1 << 30);
        assert_eq!(view.mem_get_info(0).unwrap().free, 4 << 30);
        assert_eq!(view.mem_get_info(1).unwrap().free, 3 << 30);
        usage.publish(1, 0, 1 << 30);
        assert_eq!(view.mem_get_info(0).unwrap().free, 6 << 30);
        usage.release_slot(2);
        assert_eq!(view.mem_get_info(0).unwrap().free, 7 << 30);
        assert_eq!(view.mem_get_info(1).unwrap(), crate::backend::MemInfo { free: 4 << 30, total: 4 << 30 });
        // Row 0 is the total: nobody publishes into it.
        usage.publish(0, 0, 1 << 40);
        assert_eq!(view.mem_get_info(0).unwrap().free, 7 << 30);
    }

    #[test]
    fn frames_cross_the_link_intact_and_a_close_between_frames_is_clean() {
        let (a, b) = UnixStream::pair().unwrap();
        let mut sink = LinkSink::new(a);
        let mut source = LinkSource::new(b, std::time::Duration::from_micros(20));
        let mut buf = [0u8; 256];
        let payload = vec![7u8; 100_000];
        let frame = Request::MemcpyHtoD(MemcpyHtoD { dst: 0x1000, stream: 0, sync: true, data: Bulk(&payload) })
            .encode_frame(&mut buf, Flags::empty(), 77)
            .unwrap();
        let (head, bulk) = (buf[..frame.head_len].to_vec(), frame.bulk.to_vec());
        let sender = std::thread::spawn(move || {
            sink.send(&head, &bulk).unwrap();
            sink.send(&head, &bulk).unwrap();
        });
        let received = source.recv_head().unwrap();
        assert_eq!(received.header.request_id, 77);
        let first_head = head_bytes(&received);
        let mut got = vec![0u8; received.header.bulk_len as usize];
        source.recv_bulk(&mut got).unwrap();
        assert_eq!(got, payload);
        // The second frame's bulk is skipped by the next head.
        assert_eq!(head_bytes(&source.recv_head().unwrap()), first_head);
        sender.join().unwrap();
        assert!(matches!(source.recv_head(), Err(TransportError::Closed)));
    }

    #[test]
    fn shared_usage_counts_every_process_and_gives_back_a_dead_ones_share() {
        let usage = Arc::new(SharedUsage::create(1, 4).unwrap());
        let config = HostConfig { devices: 1, memory_per_device: 8 << 20, allow_host_code: false, ..HostConfig::default() };
        let (worker_view, session_a, session_b) = (HostBackend::new(config), HostBackend::new(config), HostBackend::new(config));
        assert!(worker_view.share_usage(&usage, 0) && session_a.share_usage(&usage, 1) && session_b.share_usage(&usage, 2));
        assert!(!session_a.share_usage(&usage, 1), "a table is given once");
        let a = session_a.malloc(0, 3 << 20).unwrap();
        let _b = session_b.malloc(0, 3 << 20).unwrap();
        // The capacity is worker-wide: every view sees both, and a third 3 MiB does not fit.
        assert_eq!(worker_view.mem_get_info(0).unwrap().free, 2 << 20);
        assert_eq!(session_a.mem_get_info(0).unwrap().free, 2 << 20);
        assert!(session_a.malloc(0, 3 << 20).is_err());
        session_a.free(a).unwrap();
        assert_eq!(worker_view.mem_get_info(0).unwrap().free, 5 << 20);
        // Session b's process dies holding its allocation: the worker gives its row back.
        usage.release_slot(2);
        assert_eq!(worker_view.mem_get_info(0).unwrap().free, 8 << 20);
    }
}
