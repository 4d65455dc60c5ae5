//! One client session: the handle and pointer tables, limits, and the [`Handler`] methods
//! that turn validated requests into backend calls.
//!
//! A session is a state machine fed by a driver ([`crate::server`]) that owns the transport:
//! it never touches a socket except through [`WorkerIo`], so the same session can run in a
//! thread (today) or in a process of its own (for fault isolation on GPUs, where one
//! client's faulting kernel would otherwise poison the shared context).
//!
//! Every pointer and handle a client sends is looked up in this session's own tables before
//! the backend sees it: another session's pointer, a freed one or a made-up one is an error
//! reply, never a worker crash. Dropping the session frees everything it still holds.

mod io;
mod memory;
mod module;
mod tables;
#[cfg(test)]
mod tests;

pub use io::{ReplySender, WorkerIo};
pub use module::{MAX_FUNCTIONS_PER_SESSION, MAX_MODULES_PER_SESSION, MODULE_DEVICE};
pub use tables::{Allocations, Handles};

use module::{FunctionEntry, ModuleEntry, RtcReply};

use crate::backend::{Backend, BackendError, DeviceIndex, EventHandle, StreamHandle};
use proto_core::header::{MIN_PROTOCOL_VERSION, PROTOCOL_VERSION};
use proto_core::wire::{self, features};
use proto_core::{FixedStr, Handler, Status};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use transport_tcp::MemoryRegistry;

/// Most live allocations one session may hold.
pub const MAX_ALLOCATIONS_PER_SESSION: usize = 1 << 20;
/// Most live streams one session may hold.
pub const MAX_STREAMS_PER_SESSION: usize = 4096;
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

/// Worker-wide settings a session needs.
#[derive(Debug, Clone, Default)]
pub struct SessionConfig {
    /// Name reported in WELCOME.
    pub worker_name: String,
    /// Shared token every client must present in HELLO (`None` = no authentication).
    pub auth_token: Option<String>,
    /// The worker's RDMA listener (`host:port`), advertised in WELCOME with the `RDMA`
    /// feature so clients told to prefer RDMA move there.
    pub rdma_endpoint: Option<String>,
}

static NEXT_SESSION_ID: AtomicU64 = AtomicU64::new(1);

/// A client's session.
pub struct Session {
    id: u64,
    backend: Arc<dyn Backend>,
    config: Arc<SessionConfig>,
    greeted: bool,
    client_name: String,
    allocations: Allocations,
    streams: Handles<(StreamHandle, DeviceIndex)>,
    events: Handles<(EventHandle, DeviceIndex)>,
    modules: Handles<ModuleEntry>,
    functions: Handles<FunctionEntry>,
    /// The latest hiprtc result, borrowed by its reply.
    rtc_reply: RtcReply,
    /// The transport's registry of long-lived memory: device allocations (host memory by
    /// address, GPU memory with its dma-buf export) and the backend's staging buffers are
    /// announced to it (RDMA registers each once, not per copy).
    memory: Option<Arc<dyn MemoryRegistry>>,
}

impl Session {
    /// A session that waits for HELLO.
    pub fn new(backend: Arc<dyn Backend>, config: Arc<SessionConfig>) -> Self {
        let id = NEXT_SESSION_ID.fetch_add(1, Ordering::Relaxed);
        Self {
            id,
            backend,
            config,
            greeted: false,
            client_name: String::new(),
            allocations: Allocations::default(),
            streams: Handles::new("stream", 0x5354_0000_0000_0000, MAX_STREAMS_PER_SESSION),
            events: Handles::new("event", 0x4556_0000_0000_0000, MAX_EVENTS_PER_SESSION),
            modules: Handles::new("module", 0x4d4f_0000_0000_0000, MAX_MODULES_PER_SESSION),
            functions: Handles::new("function", 0x4655_0000_0000_0000, MAX_FUNCTIONS_PER_SESSION),
            rtc_reply: RtcReply::default(),
            memory: None,
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

    /// Session id (as sent in WELCOME).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Whether HELLO has been accepted.
    pub fn greeted(&self) -> bool {
        self.greeted
    }

    /// Client identification from HELLO.
    pub fn client_name(&self) -> &str {
        &self.client_name
    }

    /// Bytes of device memory the session holds.
    pub fn bytes_allocated(&self) -> u64 {
        self.allocations.total_bytes()
    }

    fn device(&self, device: u32) -> Result<DeviceIndex, Failure> {
        let count = self.backend.device_count()?;
        if device < count {
            Ok(device)
        } else {
            Err(Failure::new(Status::INVALID_DEVICE, format!("device {device} out of range (worker has {count})")))
        }
    }

    /// Resolves a client stream handle; 0 is the null stream.
    fn stream(&self, stream: u64) -> Result<Option<StreamHandle>, Failure> {
        if stream == 0 {
            return Ok(None);
        }
        Ok(Some(self.streams.get(stream)?.0))
    }

    fn event(&self, event: u64) -> Result<EventHandle, Failure> {
        Ok(self.events.get(event)?.0)
    }

    /// Frees everything the session holds on `device` (hipDeviceReset) or on every device.
    /// Streams go first, so no work of the session is still queued when its memory and
    /// modules go.
    fn release(&mut self, device: Option<DeviceIndex>) {
        let on_device = |d: DeviceIndex| device.is_none_or(|want| want == d);
        for (_, (stream, d)) in self.streams.drain_where(|(_, d)| on_device(*d)) {
            if let Err(e) = self.backend.stream_destroy(stream) {
                tracing::warn!(session = self.id, %e, "destroying stream during cleanup failed");
            }
            let _ = d;
        }
        for (_, (event, _)) in self.events.drain_where(|(_, d)| on_device(*d)) {
            if let Err(e) = self.backend.event_destroy(event) {
                tracing::warn!(session = self.id, %e, "destroying event during cleanup failed");
            }
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
        let (allocs, bytes, modules) = (self.allocations.len(), self.allocations.total_bytes(), self.modules.len());
        self.release(None);
        tracing::info!(session = self.id, client = %self.client_name, allocs, bytes, modules, "session closed, resources freed");
    }
}

fn to_wire_properties(p: &crate::backend::DeviceProperties) -> wire::DeviceProperties {
    let u = |v: i32| v.max(0) as u32;
    wire::DeviceProperties {
        name: FixedStr::truncated(&p.name),
        arch_name: FixedStr::truncated(&p.gcn_arch_name),
        uuid: [0; 16],
        total_global_mem: p.total_global_mem,
        shared_mem_per_block: p.shared_mem_per_block,
        regs_per_block: u(p.regs_per_block),
        warp_size: u(p.warp_size),
        mem_pitch: p.mem_pitch,
        max_threads_per_block: u(p.max_threads_per_block),
        max_threads_dim: p.max_threads_dim.map(u),
        max_grid_size: p.max_grid_size.map(u),
        clock_rate_khz: u(p.clock_rate_khz),
        total_const_mem: p.total_const_mem,
        major: u(p.major),
        minor: u(p.minor),
        texture_alignment: p.texture_alignment,
        multi_processor_count: u(p.multi_processor_count),
        kernel_exec_timeout: p.kernel_exec_timeout_enabled,
        integrated: p.integrated,
        can_map_host_memory: p.can_map_host_memory,
        compute_mode: u(p.compute_mode),
        concurrent_kernels: p.concurrent_kernels,
        ecc_enabled: p.ecc_enabled,
        pci_bus_id: u(p.pci_bus_id),
        pci_device_id: u(p.pci_device_id),
        pci_domain_id: u(p.pci_domain_id),
        async_engine_count: u(p.async_engine_count),
        unified_addressing: p.unified_addressing,
        memory_clock_rate_khz: u(p.memory_clock_rate_khz),
        memory_bus_width: u(p.memory_bus_width),
        l2_cache_size: u(p.l2_cache_size),
        persisting_l2_cache_max_size: 0,
        max_threads_per_multiprocessor: u(p.max_threads_per_multiprocessor),
        stream_priorities_supported: true,
        global_l1_cache_supported: true,
        local_l1_cache_supported: true,
        shared_mem_per_multiprocessor: p.max_shared_memory_per_multiprocessor,
        regs_per_multiprocessor: u(p.regs_per_block),
        managed_memory: p.managed_memory,
        is_multi_gpu_board: p.is_multi_gpu_board,
        pageable_memory_access: p.pageable_memory_access,
        concurrent_managed_access: p.concurrent_managed_access,
        cooperative_launch: p.cooperative_launch,
        cooperative_multi_device_launch: false,
        shared_mem_per_block_optin: p.shared_mem_per_block,
        max_blocks_per_multiprocessor: u(p.max_threads_per_multiprocessor / p.warp_size.max(1)).max(1),
        host_native_atomic_supported: true,
        clock_instruction_rate_khz: u(p.clock_rate_khz),
    }
}

/// Version numbers reported as HIP 7.0 (`HIP_VERSION` = major·10⁷ + minor·10⁵ + patch).
pub const REPORTED_HIP_VERSION: i32 = 70_000_000;

impl Handler for Session {
    type Error = Failure;
    type Io = WorkerIo;

    // ---- session ----------------------------------------------------------------------

    fn hello<'a>(&'a mut self, _io: &mut WorkerIo, req: wire::Hello<'a>) -> Result<wire::Welcome<'a>, Failure> {
        if self.greeted {
            return Err(Failure::new(Status::INVALID_VALUE, "HELLO sent twice"));
        }
        if req.min_version > req.max_version || req.max_version < MIN_PROTOCOL_VERSION || req.min_version > PROTOCOL_VERSION {
            return Err(Failure::new(
                Status::UNSUPPORTED_VERSION,
                format!(
                    "client speaks protocol {}..={}, worker speaks {MIN_PROTOCOL_VERSION}..={PROTOCOL_VERSION}",
                    req.min_version, req.max_version
                ),
            ));
        }
        if let Some(token) = &self.config.auth_token {
            if !constant_time_eq(token.as_bytes(), req.auth_token.0) {
                return Err(Failure::new(Status::AUTH_FAILED, "authentication token missing or wrong"));
            }
        }
        self.greeted = true;
        self.client_name = req.client_name.as_str().to_owned();
        tracing::info!(session = self.id, client = %self.client_name, resume = req.resume_session, "session opened");
        let mut offered = features::FIRE_AND_FORGET | features::BULK_STREAMING;
        if self.config.rdma_endpoint.is_some() {
            offered |= features::RDMA;
        }
        Ok(wire::Welcome {
            version: req.max_version.min(PROTOCOL_VERSION),
            features: req.features & offered,
            session_id: self.id,
            // Session state lives and dies with its connection: resume is refused by
            // answering with a fresh session, which the client sees in `resumed`.
            resumed: false,
            worker_name: self.config.worker_name.as_str().into(),
            backend: self.backend.name().into(),
            auth_challenge: Default::default(),
            rdma_endpoint: self.config.rdma_endpoint.as_deref().unwrap_or("").into(),
        })
    }

    fn authenticate<'a>(&'a mut self, _io: &mut WorkerIo, _req: wire::Authenticate<'a>) -> Result<wire::Empty, Failure> {
        Err(Failure::new(Status::NOT_SUPPORTED, "challenge/response authentication is not configured on this worker"))
    }

    fn ping<'a>(&'a mut self, io: &mut WorkerIo, req: wire::Ping<'a>) -> Result<wire::Pong<'a>, Failure> {
        Ok(wire::Pong { nonce: req.nonce, worker_time_ns: io.now_ns(), payload: req.payload })
    }

    fn goodbye(&mut self, io: &mut WorkerIo, _req: wire::Empty) -> Result<wire::Empty, Failure> {
        io.close_after_reply = true;
        Ok(wire::Empty {})
    }

    // ---- device -----------------------------------------------------------------------

    fn get_versions<'a>(&'a mut self, _io: &mut WorkerIo, _req: wire::Empty) -> Result<wire::Versions<'a>, Failure> {
        Ok(wire::Versions {
            driver_version: REPORTED_HIP_VERSION,
            runtime_version: REPORTED_HIP_VERSION,
            backend: self.backend.name().into(),
        })
    }

    fn get_device_count(&mut self, _io: &mut WorkerIo, _req: wire::Empty) -> Result<wire::DeviceCount, Failure> {
        Ok(wire::DeviceCount { count: self.backend.device_count()? })
    }

    fn get_device_properties(&mut self, _io: &mut WorkerIo, req: wire::DeviceRef) -> Result<wire::DeviceProperties, Failure> {
        let dev = self.device(req.device)?;
        Ok(to_wire_properties(&self.backend.device_properties(dev)?))
    }

    fn device_synchronize(&mut self, _io: &mut WorkerIo, req: wire::DeviceRef) -> Result<wire::Empty, Failure> {
        let dev = self.device(req.device)?;
        self.backend.device_synchronize(dev)?;
        // A device synchronize reports errors latched on the session's streams, as HIP does.
        for (stream, d) in self.streams.values() {
            if *d == dev {
                self.backend.stream_synchronize(*stream)?;
            }
        }
        Ok(wire::Empty {})
    }

    fn device_reset(&mut self, _io: &mut WorkerIo, req: wire::DeviceRef) -> Result<wire::Empty, Failure> {
        let dev = self.device(req.device)?;
        self.release(Some(dev));
        Ok(wire::Empty {})
    }

    fn mem_get_info(&mut self, _io: &mut WorkerIo, req: wire::DeviceRef) -> Result<wire::MemInfo, Failure> {
        let dev = self.device(req.device)?;
        let info = self.backend.mem_get_info(dev)?;
        Ok(wire::MemInfo { free: info.free, total: info.total })
    }

    fn stream_priority_range(&mut self, _io: &mut WorkerIo, req: wire::DeviceRef) -> Result<wire::PriorityRange, Failure> {
        let dev = self.device(req.device)?;
        let (least, greatest) = self.backend.stream_priority_range(dev)?;
        Ok(wire::PriorityRange { least, greatest })
    }

    // ---- memory (see memory.rs) -------------------------------------------------------

    fn malloc(&mut self, _io: &mut WorkerIo, req: wire::Malloc) -> Result<wire::Allocation, Failure> {
        self.do_malloc(req)
    }

    fn free(&mut self, _io: &mut WorkerIo, req: wire::Free) -> Result<wire::Empty, Failure> {
        self.do_free(req)
    }

    fn memcpy_htod<'a>(&'a mut self, io: &mut WorkerIo, req: wire::MemcpyHtoD<'a>) -> Result<wire::Empty, Failure> {
        self.do_memcpy_htod(io, req)
    }

    fn memcpy_dtoh<'a>(&'a mut self, io: &mut WorkerIo, req: wire::MemcpyDtoH) -> Result<wire::MemcpyData<'a>, Failure> {
        self.do_memcpy_dtoh(io, req)
    }

    fn memcpy_dtod(&mut self, _io: &mut WorkerIo, req: wire::MemcpyDtoD) -> Result<wire::Empty, Failure> {
        self.do_memcpy_dtod(req)
    }

    fn memset(&mut self, _io: &mut WorkerIo, req: wire::Memset) -> Result<wire::Empty, Failure> {
        self.do_memset(req)
    }

    fn memcpy_htod_2d<'a>(&'a mut self, _io: &mut WorkerIo, req: wire::MemcpyHtoD2D<'a>) -> Result<wire::Empty, Failure> {
        self.do_memcpy_htod_2d(req)
    }

    fn memcpy_dtoh_2d<'a>(&'a mut self, io: &mut WorkerIo, req: wire::MemcpyDtoH2D) -> Result<wire::MemcpyData<'a>, Failure> {
        self.do_memcpy_dtoh_2d(io, req)
    }

    fn memcpy_dtod_2d(&mut self, _io: &mut WorkerIo, req: wire::MemcpyDtoD2D) -> Result<wire::Empty, Failure> {
        self.do_memcpy_dtod_2d(req)
    }

    fn memcpy_peer(&mut self, _io: &mut WorkerIo, req: wire::MemcpyPeer) -> Result<wire::Empty, Failure> {
        self.do_memcpy_peer(req)
    }

    fn malloc_async(&mut self, _io: &mut WorkerIo, req: wire::MallocAsync) -> Result<wire::AsyncAllocation, Failure> {
        self.do_malloc_async(req)
    }

    fn free_async(&mut self, _io: &mut WorkerIo, req: wire::FreeAsync) -> Result<wire::Empty, Failure> {
        self.do_free_async(req)
    }

    // ---- streams ----------------------------------------------------------------------

    fn stream_create(&mut self, _io: &mut WorkerIo, req: wire::StreamCreate) -> Result<wire::StreamCreated, Failure> {
        let dev = self.device(req.device)?;
        self.streams.check_capacity()?;
        let handle = self.backend.stream_create(dev, req.flags, req.priority)?;
        Ok(wire::StreamCreated { stream: self.streams.insert((handle, dev)) })
    }

    fn stream_destroy(&mut self, _io: &mut WorkerIo, req: wire::StreamRef) -> Result<wire::Empty, Failure> {
        let (handle, _) = self.streams.remove(req.stream)?;
        self.backend.stream_destroy(handle)?;
        Ok(wire::Empty {})
    }

    fn stream_synchronize(&mut self, _io: &mut WorkerIo, req: wire::StreamRef) -> Result<wire::Empty, Failure> {
        match self.stream(req.stream)? {
            Some(stream) => self.backend.stream_synchronize(stream)?,
            // The null stream: everything on every device the session can see.
            None => {
                for dev in 0..self.backend.device_count()? {
                    self.backend.device_synchronize(dev)?;
                }
            }
        }
        Ok(wire::Empty {})
    }

    fn stream_query(&mut self, _io: &mut WorkerIo, req: wire::StreamRef) -> Result<wire::QueryResult, Failure> {
        let complete = match self.stream(req.stream)? {
            Some(stream) => self.backend.stream_query(stream)?,
            None => true,
        };
        Ok(wire::QueryResult { complete })
    }

    fn stream_wait_event(&mut self, _io: &mut WorkerIo, req: wire::StreamWaitEvent) -> Result<wire::Empty, Failure> {
        if req.flags != 0 {
            return Err(Failure::new(Status::INVALID_VALUE, format!("hipStreamWaitEvent flags {:#x} must be 0", req.flags)));
        }
        let stream = self.stream(req.stream)?;
        let event = self.event(req.event)?;
        self.backend.stream_wait_event(stream, event)?;
        Ok(wire::Empty {})
    }

    // ---- events -----------------------------------------------------------------------

    fn event_create(&mut self, _io: &mut WorkerIo, req: wire::EventCreate) -> Result<wire::EventCreated, Failure> {
        self.events.check_capacity()?;
        let dev = self.device(req.device)?;
        let handle = self.backend.event_create(dev, req.flags)?;
        Ok(wire::EventCreated { event: self.events.insert((handle, dev)) })
    }

    fn event_record(&mut self, _io: &mut WorkerIo, req: wire::EventRecord) -> Result<wire::Empty, Failure> {
        let event = self.event(req.event)?;
        let stream = self.stream(req.stream)?;
        self.backend.event_record(event, stream)?;
        Ok(wire::Empty {})
    }

    fn event_synchronize(&mut self, _io: &mut WorkerIo, req: wire::EventRef) -> Result<wire::Empty, Failure> {
        self.backend.event_synchronize(self.event(req.event)?)?;
        Ok(wire::Empty {})
    }

    fn event_query(&mut self, _io: &mut WorkerIo, req: wire::EventRef) -> Result<wire::QueryResult, Failure> {
        Ok(wire::QueryResult { complete: self.backend.event_query(self.event(req.event)?)? })
    }

    fn event_elapsed_time(&mut self, _io: &mut WorkerIo, req: wire::EventElapsed) -> Result<wire::ElapsedTime, Failure> {
        let (start, end) = (self.event(req.start)?, self.event(req.end)?);
        Ok(wire::ElapsedTime { ms: self.backend.event_elapsed_ms(start, end)? })
    }

    fn event_destroy(&mut self, _io: &mut WorkerIo, req: wire::EventRef) -> Result<wire::Empty, Failure> {
        let (handle, _) = self.events.remove(req.event)?;
        self.backend.event_destroy(handle)?;
        Ok(wire::Empty {})
    }

    // ---- modules, kernels, hiprtc (see module.rs) ----------------------------------------

    fn module_load<'a>(&'a mut self, _io: &mut WorkerIo, req: wire::ModuleLoad<'a>) -> Result<wire::ModuleLoaded, Failure> {
        self.do_module_load(req)
    }

    fn module_unload(&mut self, _io: &mut WorkerIo, req: wire::ModuleRef) -> Result<wire::Empty, Failure> {
        self.do_module_unload(req)
    }

    fn module_get_function<'a>(&'a mut self, _io: &mut WorkerIo, req: wire::SymbolLookup<'a>) -> Result<wire::FunctionInfo<'a>, Failure> {
        self.do_module_get_function(req)
    }

    fn module_get_global<'a>(&'a mut self, _io: &mut WorkerIo, req: wire::SymbolLookup<'a>) -> Result<wire::GlobalInfo, Failure> {
        self.do_module_get_global(req)
    }

    fn launch_kernel<'a>(&'a mut self, _io: &mut WorkerIo, req: wire::LaunchKernel<'a>) -> Result<wire::Empty, Failure> {
        self.do_launch_kernel(req)
    }

    fn func_get_attributes(&mut self, _io: &mut WorkerIo, req: wire::FunctionRef) -> Result<wire::FuncAttributes, Failure> {
        self.do_func_get_attributes(req)
    }

    fn occupancy_max_active_blocks(&mut self, _io: &mut WorkerIo, req: wire::OccupancyQuery) -> Result<wire::Occupancy, Failure> {
        self.do_occupancy_max_active_blocks(req)
    }

    fn occupancy_max_potential_block_size(&mut self, _io: &mut WorkerIo, req: wire::BlockSizeQuery) -> Result<wire::BlockSize, Failure> {
        self.do_occupancy_max_potential_block_size(req)
    }

    fn rtc_compile<'a>(&'a mut self, _io: &mut WorkerIo, req: wire::RtcCompile<'a>) -> Result<wire::RtcCompiled<'a>, Failure> {
        self.do_rtc_compile(req)
    }
}

/// Compares secrets without an early exit that would leak the matching prefix's length.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
