//! One client session: the handle and pointer tables, limits, and the [`Handler`](proto_core::opcode::Handler) methods
//! that turn validated requests into backend calls.
//!
//! A session is a state machine fed by a driver ([`crate::driver`]) that owns the transport:
//! it never touches a socket. Handlers take a request and a [`CallCx`] (plain data) and
//! return a reply, an [`Outcome`](proto_core::Outcome) the driver carries out, or a failure;
//! replies produced later by stream executors go into [`LateReplies`], which the driver
//! drains. So a session can be tested without any transport, run in a thread (today) or in a
//! process of its own (for fault isolation on GPUs). One file per opcode family implements
//! that family's handler trait.
//!
//! Every pointer and handle a client sends is looked up in this session's own tables before
//! the backend sees it: another session's pointer, a freed one or a made-up one is an error
//! reply, never a worker crash. Dropping the session frees everything it still holds.

mod array;
#[cfg(test)]
mod array_tests;
mod blas;
#[cfg(test)]
mod blas_capture_tests;
mod callbacks;
mod capture;
mod client_alloc;
pub mod content;
mod cx;
mod device;
mod event;
mod faults;
mod graph;
mod graph_nodes;
mod handshake;
mod ipc;
mod legacy_order;
mod managed;
mod memory;
mod memset;
mod module;
mod pool;
pub mod rtc_cache;
pub mod shared_host;
mod stream;
mod stripes;
mod tables;
#[cfg(test)]
mod tenant_memory_tests;
#[cfg(test)]
mod tests;
mod transfer;
mod vmm;

pub use callbacks::{CallbackChannel, CALLBACK_POLL, MAX_OUTSTANDING_CALLBACKS, MAX_PER_THREAD_STREAMS};
pub use cx::{truncate_utf8, CallCx, LateReplies, PlacedBulk};
pub use device::REPORTED_HIP_VERSION;
pub use graph::{MAX_GRAPHS_PER_SESSION, MAX_GRAPH_EXECS_PER_SESSION, MAX_GRAPH_NODES_PER_SESSION};
pub use memory::BulkDestination;
pub use module::{MAX_FUNCTIONS_PER_SESSION, MAX_MODULES_PER_SESSION};
pub use stripes::Handoff;
pub use tables::{Allocations, Handles};

use module::{FunctionEntry, ModuleEntry, RtcReply};

use crate::backend::{Backend, BackendError, DeviceIndex, DeviceLimit, EventHandle, StreamHandle};
use proto_core::Status;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use transport_core::MemoryRegistry;

/// Most live allocations one session may hold.
pub const MAX_ALLOCATIONS_PER_SESSION: usize = 1 << 20;
/// Most live streams one session may hold.
pub const MAX_STREAMS_PER_SESSION: usize = 1024;
/// The device ordinal a reply carries for a worker device the client's visibility
/// variables hide (an IPC import of another process's memory there): no client ordinal.
pub const HIDDEN_DEVICE: u32 = u32::MAX;
/// Most live events one session may hold.
pub const MAX_EVENTS_PER_SESSION: usize = 1 << 16;

/// Why a request did not produce a normal response.
#[derive(Debug)]
pub enum Failure {
    /// The request failed: reply with this status and message.
    Status(Status, String),
    /// The handler arranged for the reply to be sent later (an asynchronous device-to-host
    /// copy answers when its stream reaches it).
    ReplyDeferred,
}

impl Failure {
    /// A failure with a message.
    pub fn new(status: Status, message: impl Into<String>) -> Self {
        Self::Status(status, message.into())
    }
}

impl From<BackendError> for Failure {
    fn from(e: BackendError) -> Self {
        Self::Status(Status(e.hip_code()), e.to_string())
    }
}

/// Default bound on the bytes of device-to-host replies a session may have queued or in
/// flight (`--max-queued-reply-mib`): a client that never reads its replies holds at most
/// this much worker memory; copies beyond it fail with `hipErrorOutOfMemory`.
pub const DEFAULT_MAX_QUEUED_REPLY_BYTES: usize = 256 << 20;

/// Default bound on the bytes of a session's fire-and-forget uploads received but not yet
/// executed (queued behind its streams' work, `--max-pending-mib`): past it, uploads are
/// refused with `hipErrorOutOfMemory` before their bytes are buffered.
pub const DEFAULT_MAX_PENDING_BYTES: usize = 256 << 20;
/// Default bound on the streams of all sessions together (`--max-worker-streams`).
pub const MAX_WORKER_STREAMS: usize = 16 * 1024;

/// Per-session and per-worker resource bounds, each a named default with a worker flag.
/// Exceeding one is `hipErrorOutOfMemory` (what ROCm answers when it cannot create a stream,
/// event or module or allocate), checked before anything is allocated; the session stays
/// usable once it frees.
#[derive(Debug, Clone)]
pub struct SessionLimits {
    /// Streams per session (`--max-session-streams`).
    pub max_streams: usize,
    /// Events per session (`--max-session-events`).
    pub max_events: usize,
    /// Loaded modules per session (`--max-session-modules`).
    pub max_modules: usize,
    /// Device memory one session may hold allocated (`--max-session-memory-mib`); `None`:
    /// up to the device's capacity.
    pub max_memory: Option<u64>,
    /// Bytes of fire-and-forget uploads received but not yet executed.
    pub max_pending_bytes: usize,
    /// Streams of all sessions together.
    pub max_worker_streams: usize,
    /// Streams live on the worker now, shared by every session.
    pub worker_streams: Arc<AtomicUsize>,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            max_streams: MAX_STREAMS_PER_SESSION,
            max_events: MAX_EVENTS_PER_SESSION,
            max_modules: MAX_MODULES_PER_SESSION,
            max_memory: None,
            max_pending_bytes: DEFAULT_MAX_PENDING_BYTES,
            max_worker_streams: MAX_WORKER_STREAMS,
            worker_streams: Arc::default(),
        }
    }
}

/// Worker-wide settings a session needs.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// Name reported in WELCOME.
    pub worker_name: String,
    /// The tenants' tokens; a client must prove it holds one (AUTHENTICATE) before anything
    /// else is served. `None`: no authentication; an empty store refuses every client.
    pub tokens: Option<Arc<crate::auth::TokenStore>>,
    /// The worker's RDMA listener (`host:port`), advertised in WELCOME with the `RDMA`
    /// feature so clients told to prefer RDMA move there.
    pub rdma_endpoint: Option<String>,
    /// The worker's same-host listener, offered to clients that show they run on this
    /// machine (`SameHostOffer`).
    pub same_host: Arc<SameHost>,
    /// The worker's metrics, which every session's driver records into.
    pub metrics: Arc<crate::metrics::Metrics>,
    /// Bound on the session's queued and in-flight device-to-host reply bytes
    /// ([`LateReplies`]).
    pub max_queued_reply_bytes: usize,
    /// Resource bounds.
    pub limits: SessionLimits,
    /// The worker's registry of IPC exports (`hipIpc*`), shared by its sessions.
    pub ipc: Arc<dyn crate::ipc::IpcBroker>,
    /// Compiled hiprtc programs, shared by the sessions of this process.
    pub rtc_cache: Arc<rtc_cache::RtcCache>,
    /// Where compiled programs are kept between processes ([`rtc_cache`]).
    pub rtc_cache_dir: Option<RtcCacheDir>,
    /// The devices' generations: sticky faults and the resets that heal them
    /// ([`crate::device_faults`]), shared by the sessions of one backend.
    pub device_faults: Arc<crate::device_faults::DeviceFaults>,
    /// The longest a kernel may run (`--max-kernel-ms`, [`crate::watchdog`]); `None`: no
    /// limit.
    pub kernel_watchdog: Option<std::time::Duration>,
    /// Large uploads kept per tenant, shared by the sessions of this process ([`content`]).
    pub content: Arc<content::ContentStore>,
    /// Where sessions whose connection broke wait for their client (`--resume-grace-s`);
    /// `None`: sessions end with their connection (and `RESUME` is not offered).
    pub resume: Option<Arc<crate::resume::ResumeHub>>,
    /// Grants of copies between workers, and whether sessions may dial other workers
    /// ([`crate::transfer`]); `None`: sessions in session processes, which open no
    /// connections (copies between workers are refused).
    pub transfers: Option<Arc<crate::transfer::TransferHub>>,
}

/// The worker's same-host transport, as its sessions offer it.
#[derive(Debug, Default)]
pub struct SameHost {
    /// The listener's socket path, once it listens (it starts after the TCP listener, whose
    /// port its default path names).
    pub socket: std::sync::OnceLock<String>,
    /// This machine's identity (`transport_shm::machine_identity`); `None`: never offered.
    pub machine: Option<Vec<u8>>,
}

/// The directory tier of the compile cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RtcCacheDir {
    /// A root holding one directory per tenant (the worker).
    Root(std::path::PathBuf),
    /// This session's tenant's own directory (a session process, which may write only there).
    Tenant(std::path::PathBuf),
}

impl Default for SessionConfig {
    fn default() -> Self {
        Self {
            worker_name: String::new(),
            tokens: None,
            rdma_endpoint: None,
            same_host: Arc::default(),
            metrics: Arc::default(),
            max_queued_reply_bytes: DEFAULT_MAX_QUEUED_REPLY_BYTES,
            limits: SessionLimits::default(),
            ipc: Arc::new(crate::ipc::LocalBroker::default()),
            rtc_cache: Arc::default(),
            rtc_cache_dir: None,
            device_faults: Arc::default(),
            kernel_watchdog: None,
            content: Arc::default(),
            resume: None,
            transfers: None,
        }
    }
}

static NEXT_SESSION_ID: AtomicU64 = AtomicU64::new(1);

/// A client's session.
pub struct Session {
    id: u64,
    backend: Arc<dyn Backend>,
    config: Arc<SessionConfig>,
    greeted: bool,
    /// Set once the client has authenticated (or at HELLO, when the worker needs no token);
    /// shared with the connection's pre-authentication deadline.
    trusted: Arc<AtomicBool>,
    /// The WELCOME an AUTHENTICATE must answer, between the two.
    challenge: Option<handshake::Challenge>,
    /// The authenticated tenant.
    tenant: Option<String>,
    /// The peer's address, for logs (refused logins).
    peer: Option<std::net::SocketAddr>,
    client_name: String,
    allocations: Allocations,
    /// The client's arrays and mipmapped arrays.
    arrays: array::Arrays,
    /// The client's streams: backend handle, device, and whether it is blocking (the null
    /// stream synchronizes with it).
    streams: Handles<(StreamHandle, DeviceIndex, bool)>,
    /// The session's own stand-in for each device's null stream, created on first use
    /// (`stream_flags::SESSION_DEFAULT`): sessions never share a stream.
    null_streams: crate::backend::HandleMap<DeviceIndex, StreamHandle>,
    /// Which legacy-stream waits are already in place.
    legacy_order: legacy_order::LegacyOrder,
    /// The HIP priority (`hip_priority`) each created stream was given, by backend handle.
    stream_priorities: HashMap<StreamHandle, i32>,
    events: Handles<(EventHandle, DeviceIndex)>,
    modules: Handles<ModuleEntry>,
    functions: Handles<FunctionEntry>,
    /// Device limits this session set (`hipDeviceSetLimit`), as the backend applied them.
    limits: HashMap<(DeviceIndex, DeviceLimit), u64>,
    /// `(device, peer)` pairs this session enabled (`hipDeviceEnablePeerAccess`).
    peer_access: std::collections::HashSet<(DeviceIndex, DeviceIndex)>,
    /// The client's ordinal of this worker's device 0 when the worker is one of several in
    /// the client's device list (`SessionDeviceBase`; 0 otherwise): device ordinals on the
    /// wire are the client's, [`Self::device`] turns them into the backend's.
    device_base: u32,
    /// The worker's devices the client sees, `(client ordinal, backend device)`, when the
    /// client's visibility variables chose them (`SessionDeviceMap`): the others do not
    /// exist for this session. Replaces `device_base`.
    device_map: Option<Vec<(u32, DeviceIndex)>>,
    /// The latest hiprtc result, borrowed by its reply.
    rtc_reply: RtcReply,
    /// Kernels were launched since kernel output was last forwarded: a blocking copy to the
    /// host then forwards what they printed first, as a GPU runtime flushes device printf
    /// at blocking copies.
    launched_since_output: std::sync::atomic::AtomicBool,
    /// The latest `ModuleFunctionNames` answer (NUL-separated), which the reply borrows.
    function_names: String,
    /// The image of the latest successful `RtcLink`, until `RtcLinkedImage` takes it.
    /// Program text staged by `RtcStage` for the next `RtcCompileStaged` (part 0 the source,
    /// `1 + i` header `i`), at most `MAX_RTC_STAGED_BYTES` in all.
    rtc_staged: Vec<Vec<u8>>,
    linked_image: Vec<u8>,
    /// The image `RtcLinkedImage` last sent, which its reply borrows.
    linked_image_sent: Vec<u8>,
    /// The log of the latest `RtcLink`, which its reply borrows.
    link_log: String,
    /// Bytes of fire-and-forget uploads held until their stream runs them.
    pending_bytes: Arc<AtomicUsize>,
    /// Replies produced after their handler returned, and deferred statuses.
    late: Arc<LateReplies>,
    /// The transport's registry of long-lived memory: device allocations (host memory by
    /// address, GPU memory with its dma-buf export) and the backend's staging buffers are
    /// announced to it (RDMA registers each once, not per copy).
    memory: Option<Arc<dyn MemoryRegistry>>,
    /// Memory pools (`hipMemPool*`), their cached blocks and the blocks in use.
    pools: pool::Pools,
    /// Address reservations, physical allocations and mappings (`hipMemAddressReserve`...).
    vmm: vmm::Vmm,
    /// Ranges the client places `hipMalloc` allocations in itself (`CLIENT_ALLOCATION`).
    client_ranges: client_alloc::ClientRanges,
    /// Memory and events shared with other sessions.
    ipc: ipc::IpcState,
    /// Managed and mapped host allocations: what the client last saw of each.
    managed: managed::ManagedState,
    /// Graphs, their nodes and executable graphs (`hipGraph*`).
    graphs: graph::Graphs,
    /// Stream captures in progress (`hipStreamBeginCapture`...).
    captures: capture::Captures,
    /// Where this session's streams hand their callbacks to the client.
    callbacks: Arc<CallbackChannel>,
    /// BLAS handles (`hipblasCreate`): the backend's handle and its device.
    blas: Handles<(crate::backend::blas::BlasHandle, DeviceIndex)>,
    /// Backend BLAS handles the client destroyed while graphs still run routines with them.
    blas_retired: Vec<crate::backend::blas::BlasHandle>,
    /// On a callback channel connection: the session whose callbacks it fetches.
    serves_callbacks_of: Option<Arc<CallbackChannel>>,
    /// The client said at HELLO that this connection is to be a callback channel.
    callback_connection: bool,
    /// The worker's registry of stripe sets, where this connection may be granted or join
    /// stripes (plain TCP or TLS connections served in the worker; `None` elsewhere).
    stripe_hub: Option<Arc<crate::stripes::StripeHub>>,
    /// The stripes granted to this session (dropped with it, ending them).
    stripes: Option<crate::stripes::StripeLease>,
    /// Whether STRIPED_BULK was negotiated at HELLO.
    striped_bulk: bool,
    /// Stripes join sessions served in session processes: a `StripeJoin` on this connection
    /// is kept ([`Session::take_handoff`]) for the connection to be handed over.
    stripes_join_elsewhere: bool,
    /// Grants of sessions served in session processes are fetched there: a `TransferFetch` on
    /// this connection is kept for the connection to be handed over.
    fetches_elsewhere: bool,
    /// What a kept `StripeJoin` or `TransferFetch` is, the session it named, and its frame.
    kept_handoff: Option<(stripes::Handoff, u64, Vec<u8>)>,
    /// The bytes a `TransferFetch` answers with (the reply borrows them).
    fetched: Vec<u8>,
    /// WELCOME offered the same-host transport (`SameHostOffer` is answered), or, on a
    /// same-host connection, shared host memory.
    shared_memory_offered: bool,
    /// The connection's descriptor channel (same-host connections): shared host memory.
    descriptors: Option<Arc<dyn shared_host::DescriptorSender>>,
    /// The shared host regions this session holds.
    shared_regions: shared_host::SharedRegions,
    /// Device time of this session's work, charged to its tenant ([`crate::accounting`]).
    device_time: Arc<crate::accounting::DeviceTime>,
    /// The devices' generations as this session knows them, and the devices it lost to a
    /// fault.
    faults: faults::FaultView,
    /// With `RESUME`: the replies sent and the highest request executed ([`crate::resume`]).
    replay: Arc<Mutex<crate::resume::ReplayRecord>>,
    /// With `RESUME`: the secret a new connection presents to take this session back.
    resume_secret: Vec<u8>,
    /// A `Resume` this connection asked for: the server hands the connection to that session.
    resume_ask: Option<crate::resume::ResumeAsk>,
    /// The client said GOODBYE.
    said_goodbye: bool,
}

impl Session {
    /// A session that waits for HELLO.
    pub fn new(backend: Arc<dyn Backend>, config: Arc<SessionConfig>) -> Self {
        let id = NEXT_SESSION_ID.fetch_add(1, Ordering::Relaxed);
        let late = Arc::new(LateReplies::with_limit(config.max_queued_reply_bytes));
        let limits = config.limits.clone();
        let config_faults = Arc::clone(&config.device_faults);
        Self {
            id,
            backend,
            config,
            device_time: Arc::default(),
            greeted: false,
            trusted: Arc::default(),
            challenge: None,
            tenant: None,
            peer: None,
            client_name: String::new(),
            allocations: Allocations::default(),
            arrays: array::Arrays::default(),
            streams: Handles::new("stream", 0x5354_0000_0000_0000, limits.max_streams),
            events: Handles::new("event", 0x4556_0000_0000_0000, limits.max_events),
            modules: Handles::new("module", 0x4d4f_0000_0000_0000, limits.max_modules),
            pending_bytes: Arc::default(),
            functions: Handles::new("function", 0x4655_0000_0000_0000, MAX_FUNCTIONS_PER_SESSION),
            null_streams: Default::default(),
            legacy_order: legacy_order::LegacyOrder::default(),
            stream_priorities: HashMap::new(),
            limits: HashMap::new(),
            peer_access: Default::default(),
            device_base: 0,
            device_map: None,
            rtc_reply: RtcReply::default(),
            launched_since_output: std::sync::atomic::AtomicBool::new(false),
            function_names: String::new(),
            rtc_staged: Vec::new(),
            linked_image: Vec::new(),
            linked_image_sent: Vec::new(),
            link_log: String::new(),
            late,
            memory: None,
            pools: pool::Pools::default(),
            vmm: vmm::Vmm::default(),
            client_ranges: Default::default(),
            ipc: ipc::IpcState::default(),
            managed: Default::default(),
            graphs: graph::Graphs::default(),
            captures: capture::Captures::default(),
            callbacks: Arc::default(),
            blas: Handles::new("BLAS handle", 0x424c_0000_0000_0000, blas::MAX_BLAS_HANDLES_PER_SESSION),
            blas_retired: Vec::new(),
            serves_callbacks_of: None,
            callback_connection: false,
            stripe_hub: None,
            stripes: None,
            striped_bulk: false,
            stripes_join_elsewhere: false,
            fetches_elsewhere: false,
            kept_handoff: None,
            fetched: Vec::new(),
            shared_memory_offered: false,
            descriptors: None,
            shared_regions: shared_host::SharedRegions::default(),
            faults: faults::FaultView::current(&config_faults),
            replay: Arc::default(),
            resume_secret: Vec::new(),
            resume_ask: None,
            said_goodbye: false,
        }
    }

    /// Lets the session announce its device allocations, and the backend's long-lived
    /// staging buffers, to the transport's registry (RDMA registers each once, not per copy).
    pub fn set_memory_registry(&mut self, registry: Option<Arc<dyn MemoryRegistry>>) {
        if let Some(memory) = &registry {
            // The buffers outlive the connection; its registrations go when it closes.
            for (addr, len) in self.backend.staging_buffers() {
                memory.remember(addr, len);
            }
        }
        self.memory = registry;
    }

    /// Announces a new allocation to the transport: host memory by address; GPU memory with
    /// its dma-buf export, which the transport calls on first use (GPUDirect RDMA).
    fn remember_allocation(&self, ptr: u64, size: u64) {
        let Some(memory) = &self.memory else { return };
        if self.backend.device_memory_is_host_memory() {
            memory.remember(ptr as usize, size as usize);
            return;
        }
        let backend = Arc::clone(&self.backend);
        memory.remember_device(
            ptr,
            size,
            Box::new(move || backend.export_dmabuf_fd(crate::backend::DevicePtr(ptr), size).map_err(std::io::Error::other)),
        );
    }

    /// Withdraws an allocation from the transport before it is freed.
    fn forget_allocation(&self, ptr: u64) {
        if let Some(memory) = &self.memory {
            memory.forget(ptr as usize);
        }
    }

    /// Records the peer's address for logs.
    pub fn set_peer(&mut self, peer: Option<std::net::SocketAddr>) {
        self.peer = peer;
    }

    /// Takes over a session whose handshake another process did (a session process,
    /// [`crate::sandbox`]): it is trusted, with the id, client and tenant established there.
    pub fn adopt_handshake(&mut self, id: u64, client_name: String, tenant: Option<String>) {
        self.id = id;
        self.client_name = client_name;
        self.tenant = tenant;
        self.greeted = true;
        self.trusted.store(true, Ordering::Release);
    }

    /// The backend the session runs on.
    pub fn backend(&self) -> Arc<dyn Backend> {
        Arc::clone(&self.backend)
    }

    /// The worker-wide settings the session runs with.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// This session's directory of the compile cache, if there is one.
    pub(crate) fn rtc_cache_dir(&self) -> Option<std::path::PathBuf> {
        match self.config().rtc_cache_dir.as_ref()? {
            RtcCacheDir::Root(root) => Some(rtc_cache::tenant_dir(root, self.tenant.as_deref())),
            RtcCacheDir::Tenant(dir) => Some(dir.clone()),
        }
    }

    /// The client's name (HELLO) and its authenticated tenant, if any.
    pub fn client(&self) -> (&str, Option<&str>) {
        (&self.client_name, self.tenant.as_deref())
    }

    /// Whether the client may send more than HELLO and AUTHENTICATE: it authenticated, or
    /// the worker needs no authentication and HELLO succeeded.
    pub fn trusted(&self) -> bool {
        self.trusted.load(Ordering::Acquire)
    }

    /// Logs a connection refused before trust at WARN, with the peer's address.
    pub fn log_refused(&self, why: &str) {
        tracing::warn!(peer = ?self.peer, session = self.id, client = %self.client_name, "connection refused before authentication: {why}");
    }

    /// The flag behind [`trusted`](Self::trusted), for a watchdog on another thread.
    pub fn trust_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.trusted)
    }

    /// Whether the client opened this connection as a callback channel (the worker serves
    /// it in its own process, where the channel's tickets are).
    pub fn is_callback_connection(&self) -> bool {
        self.callback_connection
    }

    /// Makes this session (in a session process) hand its callbacks to the worker over
    /// `bridge` ([`CallbackChannel::bridge_session_process`]).
    pub fn bridge_callbacks(&self, bridge: std::os::unix::net::UnixStream) -> std::io::Result<()> {
        CallbackChannel::bridge_session_process(&self.callbacks, bridge)
    }

    /// Session id (as sent in WELCOME).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The replies this session sent and the highest request it executed (recorded only
    /// with `RESUME`), shared with the connection's reply writer.
    pub fn replay_record(&self) -> Arc<Mutex<crate::resume::ReplayRecord>> {
        Arc::clone(&self.replay)
    }

    /// Whether the session outlives its connection (`RESUME` negotiated).
    pub fn resumable(&self) -> bool {
        !self.resume_secret.is_empty()
    }

    /// The secret that resumes this session (empty: not resumable).
    pub fn resume_secret(&self) -> &[u8] {
        &self.resume_secret
    }

    /// The tenant the client authenticated as (`None`: a worker without tokens).
    pub fn tenant_name(&self) -> Option<&str> {
        self.tenant.as_deref()
    }

    /// Whether the client ended the session with GOODBYE (nothing to resume).
    pub fn said_goodbye(&self) -> bool {
        self.said_goodbye
    }

    /// The `Resume` this connection asked for, once.
    pub fn take_resume_ask(&mut self) -> Option<crate::resume::ResumeAsk> {
        self.resume_ask.take()
    }

    /// The session's queue of late replies and deferred statuses (the driver sends them).
    pub fn late_replies(&self) -> Arc<LateReplies> {
        Arc::clone(&self.late)
    }

    /// The worker's metrics.
    pub fn metrics(&self) -> Arc<crate::metrics::Metrics> {
        Arc::clone(&self.config.metrics)
    }

    /// Whether HELLO has been accepted.
    pub fn greeted(&self) -> bool {
        self.greeted
    }

    /// Client identification from HELLO.
    pub fn client_name(&self) -> &str {
        &self.client_name
    }

    /// The backend's device for the client's ordinal `device` (the session's device base
    /// subtracted: a device of another worker in the client's list is out of range here).
    fn device(&self, device: u32) -> Result<DeviceIndex, Failure> {
        if let Some(map) = &self.device_map {
            return map.iter().find(|&&(ordinal, _)| ordinal == device).map(|&(_, local)| local).ok_or_else(|| {
                Failure::new(Status::INVALID_DEVICE, format!("device {device} is not one of the {} this worker shows the client", map.len()))
            });
        }
        let count = self.backend.device_count()?;
        match device.checked_sub(self.device_base) {
            Some(local) if local < count => Ok(local),
            _ if self.device_base == 0 => Err(Failure::new(Status::INVALID_DEVICE, format!("device {device} out of range (worker has {count})"))),
            _ => Err(Failure::new(
                Status::INVALID_DEVICE,
                format!(
                    "device {device} is not on this worker (its devices are {}..{} of the client's list)",
                    self.device_base,
                    self.device_base + count
                ),
            )),
        }
    }

    /// The client's ordinal of the backend's device `device` (replies that name a device).
    /// A device the client's visibility variables hide answers `HIDDEN_DEVICE`.
    fn client_device(&self, device: DeviceIndex) -> u32 {
        if let Some(map) = &self.device_map {
            return map.iter().find(|&&(_, local)| local == device).map_or(HIDDEN_DEVICE, |&(ordinal, _)| ordinal);
        }
        device.saturating_add(self.device_base)
    }

    /// Resolves a client stream handle for work about to be queued; 0 is the null stream of
    /// `device` (the device of the memory or kernel involved), which is the session's own
    /// stand-in. Applies the legacy null stream's implicit synchronization, within this
    /// session only: null-stream work comes after the work the session's blocking streams
    /// have so far, and a blocking stream's next work after the null stream's.
    fn stream(&mut self, stream: u64, device: DeviceIndex) -> Result<Option<StreamHandle>, Failure> {
        self.materialize_per_thread(stream)?;
        self.capture_gate(stream)?;
        if stream == 0 {
            let null = self.null_stream(device)?;
            for &(blocking, _, _) in self.streams.values().filter(|(_, d, blocking)| *d == device && *blocking) {
                if self.legacy_order.needs(null, blocking) {
                    self.backend.stream_order_after(null, blocking)?;
                    self.legacy_order.ordered(null, blocking);
                }
            }
            self.legacy_order.worked(null);
            return Ok(Some(null));
        }
        let &(handle, device, blocking) = self.streams.get(stream)?;
        if let Some(&null) = self.null_streams.get(&device).filter(|_| blocking) {
            if self.legacy_order.needs(handle, null) {
                self.backend.stream_order_after(handle, null)?;
                self.legacy_order.ordered(handle, null);
            }
        }
        self.legacy_order.worked(handle);
        Ok(Some(handle))
    }

    /// The device of the allocation holding `ptr`: where null-stream work on it runs. A
    /// pointer of no allocation fails its own check later; its work goes to device 0.
    fn device_of(&self, ptr: u64) -> DeviceIndex {
        self.allocations.resolve(ptr, 0, "").map_or(0, |(_, info)| info.device)
    }

    /// Takes one of the worker's stream slots (given back by [`Self::release_worker_stream`]);
    /// refused past `--max-worker-streams`.
    fn reserve_worker_stream(&self) -> Result<(), Failure> {
        let limits = &self.config.limits;
        let taken = limits.worker_streams.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < limits.max_worker_streams).then_some(n + 1));
        taken.map(drop).map_err(|_| {
            Failure::new(
                Status::OUT_OF_MEMORY,
                format!("the worker runs its maximum of {} streams (--max-worker-streams)", limits.max_worker_streams),
            )
        })
    }

    /// Creates a backend stream whose device time is this session's, charged to its tenant.
    fn create_backend_stream(&mut self, device: DeviceIndex, flags: u32, priority: i32) -> Result<StreamHandle, crate::backend::BackendError> {
        if !self.device_time.is_charged() {
            self.device_time.charge(self.config.metrics.tenants().get(self.tenant.as_deref()));
        }
        let priority = hip_priority::clamp(priority);
        let (least, greatest) = self.backend.stream_priority_range(device)?;
        let handle = self.backend.stream_create(device, flags, hip_priority::to_backend(priority, least, greatest))?;
        self.stream_priorities.insert(handle, priority);
        if !crate::accounting::enabled() {
            return Ok(handle);
        }
        if let Err(e) = self.backend.account_stream(handle, Arc::clone(&self.device_time)) {
            tracing::warn!(session = self.id, %e, "stream's device time not accounted");
        }
        Ok(handle)
    }

    /// Device time of this session's work so far ([`crate::accounting`]).
    pub fn device_time(&self) -> &Arc<crate::accounting::DeviceTime> {
        &self.device_time
    }

    fn release_worker_stream(&self) {
        self.config.limits.worker_streams.fetch_sub(1, Ordering::AcqRel);
    }

    /// The session's stand-in for `device`'s null stream, created on first use.
    fn null_stream(&mut self, device: DeviceIndex) -> Result<StreamHandle, Failure> {
        if let Some(&null) = self.null_streams.get(&device) {
            return Ok(null);
        }
        self.reserve_worker_stream()?;
        let null =
            self.create_backend_stream(device, crate::backend::stream_flags::SESSION_DEFAULT, 0).inspect_err(|_| self.release_worker_stream())?;
        self.null_streams.insert(device, null);
        Ok(null)
    }

    /// Waits for everything the session queued on `device` (every device: `None`), as
    /// `hipDeviceSynchronize` does for a process; reports the first latched error. Other
    /// sessions' work on the device is not waited for.
    fn synchronize_session(&self, device: Option<DeviceIndex>) -> Result<(), Failure> {
        let on_device = |d: DeviceIndex| device.is_none_or(|want| want == d);
        let mut first_error = Ok(());
        let streams = self.streams.values().filter(|(_, d, _)| on_device(*d)).map(|(s, _, _)| *s);
        let nulls = self.null_streams.iter().filter(|(d, _)| on_device(**d)).map(|(_, s)| *s);
        let all: Vec<StreamHandle> = streams.chain(nulls).collect();
        for &stream in &all {
            if let Err(e) = self.backend.stream_synchronize(stream) {
                first_error = first_error.and(Err(e));
            }
        }
        self.forward_kernel_output(&all);
        first_error?;
        self.check_reset_under_call()
    }

    /// Notes a launch for [`Self::forward_output_before_copy`].
    fn note_launch(&self) {
        self.launched_since_output.store(true, Ordering::Relaxed);
    }

    /// Before a blocking copy to the host from `stream`: when kernels were launched since
    /// output was last forwarded, waits for the stream (the copy waits for it anyway) and
    /// forwards what they printed, so it reaches the client's stdout before the program
    /// prints what it copied back. A latched error stays latched for the copy to report.
    fn forward_output_before_copy(&self, stream: Option<StreamHandle>, device: DeviceIndex) {
        if !self.launched_since_output.load(Ordering::Relaxed) {
            return;
        }
        match stream {
            Some(stream) => {
                let _ = self.backend.stream_synchronize(stream);
                self.forward_kernel_output(&[stream]);
            }
            // The legacy null stream orders after the device's blocking streams.
            None => {
                let _ = self.synchronize_session(Some(device));
            }
        }
    }

    /// Sends the client what the kernels of `streams` printed, ahead of the reply of the
    /// synchronization that waited for them (the driver drains the late queue before a direct
    /// reply): request id 0, `KernelOutput`. Output a failed launch printed goes too.
    fn forward_kernel_output(&self, streams: &[StreamHandle]) {
        self.launched_since_output.store(false, Ordering::Relaxed);
        let text: Vec<u8> = streams.iter().flat_map(|&s| self.backend.take_kernel_output(s)).collect();
        if !text.is_empty() {
            let output = proto_core::wire::KernelOutputText { data: proto_core::Bulk(&text) };
            self.late.push_response(0, &proto_core::Response::KernelOutput(output));
        }
    }

    /// Every stream of the session, null-stream stand-ins included.
    fn all_streams(&self) -> Vec<StreamHandle> {
        self.streams.values().map(|(s, _, _)| *s).chain(self.null_streams.values().copied()).collect()
    }

    /// A `hipLimit_t` the backends support; the rest are `hipErrorUnsupportedLimit`.
    fn limit(raw: u32) -> Result<DeviceLimit, Failure> {
        DeviceLimit::from_raw(raw).ok_or_else(|| Failure::new(Status::UNSUPPORTED_LIMIT, format!("hipLimit_t {raw} is not supported")))
    }

    fn event(&self, event: u64) -> Result<EventHandle, Failure> {
        Ok(self.events.get(event)?.0)
    }

    /// Frees everything the session holds on `device` (hipDeviceReset) or on every device.
    /// Streams go first, so no work of the session is still queued when its memory and
    /// modules go.
    fn release(&mut self, device: Option<DeviceIndex>) {
        self.release_graphs(device);
        if device.is_none() {
            // After the graphs: none holds a BLAS handle any more.
            self.release_blas();
        }
        self.ipc_release(device);
        // Before the streams go: their work on the memory is waited for first.
        self.release_client_ranges(device);
        let on_device = |d: DeviceIndex| device.is_none_or(|want| want == d);
        let nulls: Vec<StreamHandle> = self.null_streams.extract_if(|d, _| on_device(*d)).map(|(_, s)| s).collect();
        let streams = self.streams.drain_where(|(_, d, _)| on_device(*d)).into_iter().map(|(_, (s, _, _))| s);
        for stream in streams.chain(nulls) {
            self.legacy_order.forget(stream);
            self.stream_priorities.remove(&stream);
            self.release_worker_stream();
            if let Err(e) = self.backend.stream_destroy(stream) {
                tracing::warn!(session = self.id, %e, "destroying stream during cleanup failed");
            }
        }
        if device.is_none() {
            // After the streams: no copy uses a region any more.
            self.shared_regions.clear();
        }
        self.capture_release();
        for (_, (event, _)) in self.events.drain_where(|(_, d)| on_device(*d)) {
            if let Err(e) = self.backend.event_destroy(event) {
                tracing::warn!(session = self.id, %e, "destroying event during cleanup failed");
            }
        }
        self.release_arrays(device);
        self.release_pools(device);
        if device.is_none() {
            self.release_vmm();
        }
        for (ptr, _) in self.allocations.drain_where(|a| on_device(a.device) && a.module.is_none()) {
            self.forget_allocation(ptr);
            if let Err(e) = self.backend.free(crate::backend::DevicePtr(ptr)) {
                tracing::warn!(session = self.id, ptr, %e, "freeing allocation during cleanup failed");
            }
        }
        for (_, module) in self.modules.drain_where(|m| on_device(m.device())) {
            self.forget_module(&module);
            if let Err(e) = self.backend.module_unload(module.handle()) {
                tracing::warn!(session = self.id, %e, "unloading module during cleanup failed");
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Streams waiting for the client's callbacks go on (with an error) before they drain.
        self.callbacks.close();
        if let Some(channel) = &self.serves_callbacks_of {
            channel.close();
        }
        let (allocs, bytes, modules) = (self.allocations.len(), self.allocations.total_bytes(), self.modules.len());
        self.release(None);
        tracing::info!(session = self.id, client = %self.client_name, allocs, bytes, modules, "session closed, resources freed");
    }
}

impl proto_core::HandlerTypes for Session {
    type Error = Failure;
    type Cx = CallCx;
}

/// Stream priorities as ROCm 7 numbers them (`hip::Stream::Priority`): 1 the least, -1 the
/// greatest, 0 normal, whatever the backend's own range; a request beyond them is clamped.
pub(crate) mod hip_priority {
    /// `hipDeviceGetStreamPriorityRange`'s least priority.
    pub const LEAST: i32 = 1;
    /// Its greatest priority.
    pub const GREATEST: i32 = -1;

    pub fn clamp(priority: i32) -> i32 {
        priority.clamp(GREATEST, LEAST)
    }

    /// The backend priority for a HIP one: the ends of the backend's range for HIP's ends, its
    /// default (0, within the range) for normal.
    pub fn to_backend(priority: i32, least: i32, greatest: i32) -> i32 {
        match priority {
            GREATEST => greatest,
            LEAST => least,
            _ => 0.clamp(greatest.min(least), greatest.max(least)),
        }
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn hip_priorities_map_onto_any_backend_range() {
            assert_eq!(super::clamp(-7), -1);
            assert_eq!(super::clamp(5), 1);
            // CUDA's range on an H200: least 0, greatest -5.
            assert_eq!([-1, 0, 1].map(|p| super::to_backend(p, 0, -5)), [-5, 0, 0]);
            // A backend without priorities (least = greatest = 0).
            assert_eq!([-1, 0, 1].map(|p| super::to_backend(p, 0, 0)), [0, 0, 0]);
            // ROCm's own range maps onto itself.
            assert_eq!([-1, 0, 1].map(|p| super::to_backend(p, 1, -1)), [-1, 0, 1]);
        }
    }
}
