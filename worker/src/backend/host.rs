//! The `host` backend: HIP devices emulated in host memory, for tests, fuzzing and machines
//! without a GPU. It reports itself plainly (`gcnArchName` `host`, a name saying "host
//! emulation") and behaves like a GPU where clients can tell:
//!
//! * **Streams** are FIFOs of operations run asynchronously and in order by one bounded pool
//!   of threads shared by every stream of the worker ([`HostConfig::stream_threads`]; streams
//!   are served round-robin, one operation of a stream at a time, see `executor`), so a client that forgets to synchronize sees stale data
//!   here too. A queued operation that fails (or panics) latches its error on the stream;
//!   every later [`StreamBackend::stream_synchronize`]/[`StreamBackend::stream_query`] of that stream
//!   reports it until the stream is destroyed. Later operations still run, so event records
//!   complete and nobody waiting on them hangs.
//! * **The null stream** (`stream: None`) runs its operation synchronously on the caller's
//!   thread, after every *blocking* stream (created without `hipStreamNonBlocking`) of the
//!   devices involved has finished the work it had when the call began: HIP's legacy-stream
//!   semantics. Non-blocking streams are not waited for. This `None` stream is per device,
//!   as on a real GPU shared by one process; sessions never use it: each has its own
//!   stand-in per device (`stream_flags::SESSION_DEFAULT`), with the session ordering it
//!   after its own blocking streams only. The stand-in runs copies, memsets and event records
//!   on the caller's thread when nothing is queued before them (their errors are the call's),
//!   and queues kernels, host functions and waits, and whatever follows them until it is
//!   idle again: for its caller it is asynchronous, as HIP's null stream is.
//! * **Memory** is zeroed host memory, counted against a per-device capacity shared by all
//!   sessions. Requests beyond the free capacity fail before anything is allocated; a host
//!   allocator refusal is `OutOfMemory`, never an abort. **Device pointers are host
//!   addresses** (identity mapping, 256-byte aligned, with an unowned red zone after each
//!   allocation; see `memory`): kernels dereference them directly. The host backend trades
//!   pointer opacity for executable kernels: a client learns heap addresses of the worker,
//!   and a freed address may come back from a later allocation.
//! * **Free while queued** is safe: queued operations hold an `Arc` to their allocation, so
//!   [`MemoryBackend::free`] unmaps the address at once (later use is an error) while the bytes,
//!   and the capacity [`MemoryBackend::mem_get_info`] reports, return when the last queued user is
//!   done. Kernels cannot say which allocations they use, so memory freed while launches are
//!   in flight is kept until every launch queued before the free has finished (see
//!   `launch::KernelTracker`). Free does not wait for the queue.
//! * **Kernels** come from host modules (`module`, `docs/HOST_MODULES.md`): ELF shared objects
//!   for the worker's CPU with a kernel table, loaded with `dlopen`, typically produced by
//!   hiprtc on this worker (`rtc`, the system C++ compiler). A launch is one stream operation;
//!   its blocks run on up to `launch::MAX_KERNEL_THREADS` threads, the threads of a block one
//!   after another. Kernels using block barriers, shared memory or warp intrinsics are refused
//!   at compile time. **Host modules are native code running inside the worker**: a faulting
//!   kernel (a wild pointer, a failed `assert`) takes the worker process down with every
//!   session on it, and a client can run arbitrary code. The host backend is for tests,
//!   development and trusted clients; see `docs/HOST_MODULES.md`.
//! * **Zero-copy access** ([`MemoryBackend::with_device_bytes`], [`MemoryBackend::with_device_bytes_mut`])
//!   waits for the stream, then runs the closure on the caller's thread under the
//!   allocation's lock: stream executors touching the same allocation wait meanwhile, so
//!   there is never an aliasing `&mut`, whatever the client does.
//! * **Warp size** is 32 (`properties::HOST_WARP_SIZE`), so clients sizing work by
//!   `warpSize` get GPU-like shapes. Stream priorities are not supported: the range is
//!   `(0, 0)` and every priority clamps to 0.
//! * **Limits** report what the backend honours: a stack of [`DEFAULT_KERNEL_STACK_BYTES`]
//!   per thread until a session asks for another, up to [`KERNEL_STACK_BYTES`] (more is
//!   `InvalidValue`; every kernel thread has that much whatever was asked); any printf FIFO and heap size
//!   (kernels print straight to the worker's output and allocate from its heap). The session
//!   keeps what each client set, so limits are per session. **Peers**: every emulated device
//!   is every other's peer (one address space). **`hipFuncSetAttribute`**: the maximum
//!   dynamic shared memory (at most the block's shared memory beside the static part) is
//!   enforced at launch; the carveout is recorded and reported.
//!
//! [`StreamBackend::stream_synchronize`]: crate::backend::StreamBackend::stream_synchronize
//! [`StreamBackend::stream_query`]: crate::backend::StreamBackend::stream_query
//! [`MemoryBackend::free`]: crate::backend::MemoryBackend::free
//! [`MemoryBackend::mem_get_info`]: crate::backend::MemoryBackend::mem_get_info
//! [`MemoryBackend::with_device_bytes`]: crate::backend::MemoryBackend::with_device_bytes
//! [`MemoryBackend::with_device_bytes_mut`]: crate::backend::MemoryBackend::with_device_bytes_mut

mod array;
mod blas;
mod device_attr;
mod event;
mod executor;
mod graph;
mod ipc;
#[cfg(test)]
mod kernel_tests;
mod launch;
mod managed;
mod memory;
mod memset;
mod module;
mod properties;
mod rtc;
mod stream;
mod stream_ops;
#[cfg(test)]
mod tests;
pub mod usage;
mod vmm;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use self::event::Event;
use self::executor::StreamExecutor;
pub use self::executor::{default_stream_threads, STREAM_THREADS_PER_CORE};
#[cfg(test)]
pub(crate) use self::ipc::stand_in_driver;
#[cfg(test)]
pub(crate) use self::ipc::test_memory_file;
pub(crate) use self::ipc::{check_memory_file, memory_file, SharedMapping};
use self::launch::{KernelTracker, MAX_KERNEL_THREADS};
use self::memory::{AddressSpace, DeviceMemory, Region, RowLayout};
use self::module::{HostModule, Kernel, ModuleLimits};
use self::properties::CpuInfo;
pub(crate) use self::stream::KernelOutput;
pub use self::stream::MAX_PENDING_KERNEL_OUTPUT;
use self::stream::{Stream, StreamOp};
pub use self::vmm::RECOMMENDED_GRANULARITY;
use super::{
    BackendError, DeviceBackend, DeviceIndex, DeviceLimit, DeviceProperties, DevicePtr, EventHandle, FunctionHandle, ModuleHandle, Pitched, Rows,
    StreamHandle, TransportHooks,
};

/// How many devices to emulate and how much memory each has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostConfig {
    /// Number of emulated devices.
    pub devices: u32,
    /// Capacity of each device in bytes.
    pub memory_per_device: u64,
    /// Whether clients may load host modules and compile them with hiprtc. A host module is
    /// client code that runs inside the worker, as the worker's user; the operator opts in
    /// (`hip-worker --allow-host-code`). Without it the backend still serves memory, copies,
    /// streams and events, and refuses kernels with `hipErrorNotSupported`, saying why.
    pub allow_host_code: bool,
    /// Threads of the pool that runs every stream's work (`hip-worker --stream-threads`;
    /// default [`default_stream_threads`]). However many streams clients create, the
    /// backend runs at most this many stream threads (plus each running kernel's helpers).
    pub stream_threads: usize,
}

impl Default for HostConfig {
    /// One device with `min(physical RAM / 2, 16 GiB)`.
    fn default() -> Self {
        Self { devices: 1, memory_per_device: properties::default_capacity(), allow_host_code: false, stream_threads: default_stream_threads() }
    }
}

struct HostDevice {
    memory: Arc<DeviceMemory>,
    properties: DeviceProperties,
}

/// A loaded module: the library, its kernels' handles and its mapped globals.
struct ModuleEntry {
    module: Arc<HostModule>,
    device: DeviceIndex,
    /// Handle of each kernel, by index in `module.kernels()`.
    functions: Vec<FunctionHandle>,
    kernel_by_name: HashMap<String, usize>,
    /// Mapped global ranges, by index in `module.globals()`.
    globals: Vec<DevicePtr>,
}

/// A kernel handle's target.
#[derive(Clone)]
struct KernelRef {
    module: Arc<HostModule>,
    index: usize,
    device: DeviceIndex,
    /// What `hipFuncSetAttribute` set (shared by every clone of this handle's entry).
    settings: Arc<Mutex<KernelSettings>>,
}

/// `hipFuncSetAttribute` values of one kernel.
#[derive(Copy, Clone, Debug)]
struct KernelSettings {
    /// Most dynamic shared memory a launch may ask for; starts at everything the block has
    /// beside the kernel's static shared memory.
    max_dynamic_shared: u32,
    /// Preferred carveout, percent (-1: none). Recorded and reported; one CPU core has no L1
    /// split to configure.
    preferred_carveout: i32,
}

/// Stack bytes each emulated GPU thread is guaranteed (`hipLimitStackSize`): the threads of a
/// block run one after another on one OS thread, whose stack (2 MiB for the worker's threads)
/// leaves at least this much to the kernel. Larger requests cannot be honoured.
pub const KERNEL_STACK_BYTES: u64 = 1 << 20;
/// `hipLimitStackSize` reported before a session sets one: GPU runtimes' default of 1 KiB per
/// thread (well within [`KERNEL_STACK_BYTES`]), so a program that reads the limit and asks
/// for a little more, as ROCm's hip-tests do, is honoured.
pub const DEFAULT_KERNEL_STACK_BYTES: u64 = 1 << 10;
/// `hipLimitPrintfFifoSize` reported before a session sets one. Host kernels print straight
/// to the worker's output, so no FIFO can overflow and every size is honoured.
pub const DEFAULT_PRINTF_FIFO_BYTES: u64 = 1 << 20;
/// `hipLimitMallocHeapSize` reported before a session sets one (CUDA's default). Host kernels
/// allocate from the worker's own heap, so every size is honoured.
pub const DEFAULT_MALLOC_HEAP_BYTES: u64 = 8 << 20;

impl KernelRef {
    fn kernel(&self) -> &Kernel {
        &self.module.kernels()[self.index]
    }
}

/// HIP device emulation in host memory. See the module documentation for its semantics.
pub struct HostBackend {
    /// `"host"`; a [device view](HostBackend::device_view) reports its GPU backend's name.
    name: &'static str,
    devices: Vec<HostDevice>,
    address_space: AddressSpace,
    streams: RwLock<HashMap<StreamHandle, Arc<Stream>>>,
    events: RwLock<HashMap<EventHandle, Arc<Event>>>,
    modules: RwLock<HashMap<ModuleHandle, ModuleEntry>>,
    functions: RwLock<HashMap<FunctionHandle, KernelRef>>,
    /// Launches in flight, keeping what is freed meanwhile alive.
    kernels_in_flight: Arc<KernelTracker>,
    /// Threads one launch spreads its blocks over.
    kernel_threads: usize,
    /// Source of stream, event, module and function handles; never reused.
    next_handle: AtomicU64,
    /// See [`HostConfig::allow_host_code`].
    allow_host_code: bool,
    /// Runs every stream's work; dropped (joined) after the streams drained.
    executor: StreamExecutor,
    /// Reservations, physical memory and mappings (`hipMemAddressReserve` and friends).
    vmm: vmm::HostVmm,
    /// Tests of the shared-mode fault path: a sticky error per device, and the resets.
    pub(crate) injected: FaultInjection,
}

/// A fault a test injects: the device's streams report it at synchronize and query, as a
/// GPU context in a sticky error state does, until the device is reset. Unit tests inject
/// directly; the shared session process's test aid ([`TEST_STICKY_FAULT_ENV`]) arms a
/// trigger. Unarmed, a check is one atomic load.
#[derive(Default)]
pub(crate) struct FaultInjection {
    pub(crate) faults: std::sync::Mutex<HashMap<DeviceIndex, BackendError>>,
    pub(crate) resets: std::sync::Mutex<Vec<DeviceIndex>>,
    armed: std::sync::atomic::AtomicBool,
    /// A `hipMalloc` of exactly this many bytes injects an illegal address on its device.
    trigger_size: std::sync::OnceLock<u64>,
}

/// Test aid of a host-backend shared session process (never set by the worker for anything
/// else, and only forwarded with the hidden `--shared-process` test flag): a `hipMalloc` of
/// exactly this many bytes leaves its device in a sticky `hipErrorIllegalAddress` state, as
/// a GPU kernel's wild write does.
pub const TEST_STICKY_FAULT_ENV: &str = "HIP_WORKER_TEST_STICKY_FAULT_SIZE";

impl FaultInjection {
    pub(crate) fn inject(&self, dev: DeviceIndex, error: BackendError) {
        self.faults.lock().unwrap_or_else(PoisonError::into_inner).insert(dev, error);
        self.armed.store(true, Ordering::Release);
    }

    fn check(&self, dev: DeviceIndex) -> Result<(), BackendError> {
        if !self.armed.load(Ordering::Acquire) {
            return Ok(());
        }
        self.faults.lock().unwrap_or_else(PoisonError::into_inner).get(&dev).cloned().map_or(Ok(()), Err)
    }

    /// Arms the trigger of [`TEST_STICKY_FAULT_ENV`].
    pub(crate) fn arm_trigger(&self, size: u64) {
        let _ = self.trigger_size.set(size);
    }

    /// A `hipMalloc` of `size` bytes on `dev`: the armed trigger's size faults the device.
    pub(crate) fn on_malloc(&self, dev: DeviceIndex, size: u64) -> Result<(), BackendError> {
        if self.trigger_size.get() != Some(&size) {
            return Ok(());
        }
        let error = BackendError::IllegalAddress(format!("test fault: a {size}-byte allocation ({TEST_STICKY_FAULT_ENV})"));
        self.inject(dev, error.clone());
        Err(error)
    }
}

impl Default for HostBackend {
    fn default() -> Self {
        Self::new(HostConfig::default())
    }
}

impl HostBackend {
    /// The test aid of [`TEST_STICKY_FAULT_ENV`]: from now on a `hipMalloc` of exactly `size`
    /// bytes leaves its device in a sticky illegal-address state.
    pub fn arm_test_fault(&self, size: u64) {
        self.injected.arm_trigger(size);
    }

    /// Counts every device's memory in `usage`, row `row` (0: only read, the worker's view;
    /// else a session process's own row), from now on; call before the first allocation.
    /// False if the table does not fit this backend or a table was given already.
    pub fn share_usage(&self, usage: &Arc<usage::SharedUsage>, row: usize) -> bool {
        let (devices, slots) = usage.shape();
        if devices < self.devices.len() || row > slots {
            return false;
        }
        self.devices.iter().enumerate().all(|(dev, device)| device.memory.share(Arc::clone(usage), row, dev))
    }

    /// A backend that serves no session: the worker's view of the GPUs its session processes
    /// serve (`--isolation process`). It reports `name`, the devices' `properties` and, as
    /// memory in use, what the session processes publish in `usage`; the worker holds no GPU
    /// context for it.
    pub fn device_view(name: &'static str, properties: Vec<DeviceProperties>, usage: &Arc<usage::SharedUsage>) -> Self {
        let config = HostConfig { devices: properties.len() as u32, memory_per_device: 0, allow_host_code: false, stream_threads: 1 };
        let mut view = Self::new(config);
        view.name = name;
        view.devices = properties
            .into_iter()
            .map(|properties| HostDevice { memory: Arc::new(DeviceMemory::new(properties.total_global_mem)), properties })
            .collect();
        view.share_usage(usage, 0);
        view
    }

    pub fn new(config: HostConfig) -> Self {
        let cpu = CpuInfo::probe();
        let devices = (0..config.devices)
            .map(|dev| HostDevice {
                memory: Arc::new(DeviceMemory::new(config.memory_per_device)),
                properties: properties::host_properties(dev, config.memory_per_device, &cpu),
            })
            .collect();
        let kernel_threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_KERNEL_THREADS);
        Self {
            name: "host",
            devices,
            address_space: AddressSpace::new(),
            streams: RwLock::new(HashMap::new()),
            events: RwLock::new(HashMap::new()),
            modules: RwLock::new(HashMap::new()),
            functions: RwLock::new(HashMap::new()),
            kernels_in_flight: Arc::new(KernelTracker::default()),
            kernel_threads,
            next_handle: AtomicU64::new(1),
            allow_host_code: config.allow_host_code,
            executor: StreamExecutor::new(config.stream_threads),
            vmm: vmm::HostVmm::default(),
            injected: FaultInjection::default(),
        }
    }

    /// Refuses `what` unless the operator allowed host code.
    pub(super) fn check_host_code_allowed(&self, what: &str) -> Result<(), BackendError> {
        if self.allow_host_code {
            return Ok(());
        }
        Err(BackendError::NotSupported(format!(
            "{what}: host code is disabled on this worker (a host module runs client code inside \
             the worker, as its user); the operator can allow it with `hip-worker --allow-host-code`"
        )))
    }

    fn function(&self, handle: FunctionHandle) -> Result<KernelRef, BackendError> {
        read_lock(&self.functions)
            .get(&handle)
            .cloned()
            .ok_or_else(|| BackendError::InvalidHandle(format!("function {} does not exist (or its module was unloaded)", handle.as_raw())))
    }

    fn module_limits(&self, dev: DeviceIndex) -> Result<ModuleLimits, BackendError> {
        Ok(ModuleLimits { shared_mem_per_block: self.device(dev)?.properties.shared_mem_per_block })
    }

    /// Unmaps `globals` (module unload, or a load that failed halfway); anything a queued
    /// launch may still touch is parked with the kernel tracker.
    fn unmap_globals(&self, globals: &[DevicePtr]) {
        for &ptr in globals {
            if let Some(allocation) = self.address_space.unmap_external(ptr) {
                self.kernels_in_flight.retire(Box::new(allocation));
            }
        }
    }

    fn device(&self, dev: DeviceIndex) -> Result<&HostDevice, BackendError> {
        if self.devices.is_empty() {
            return Err(BackendError::NoDevice("the host backend emulates no devices".into()));
        }
        self.devices
            .get(dev as usize)
            .ok_or_else(|| BackendError::InvalidDevice(format!("device {dev} does not exist ({} emulated)", self.devices.len())))
    }

    fn next_handle(&self) -> u64 {
        self.next_handle.fetch_add(1, Ordering::Relaxed)
    }

    fn stream(&self, handle: StreamHandle) -> Result<Arc<Stream>, BackendError> {
        read_lock(&self.streams)
            .get(&handle)
            .cloned()
            .ok_or_else(|| BackendError::InvalidHandle(format!("stream {} does not exist", handle.as_raw())))
    }

    fn event(&self, handle: EventHandle) -> Result<Arc<Event>, BackendError> {
        read_lock(&self.events).get(&handle).cloned().ok_or_else(|| BackendError::InvalidHandle(format!("event {} does not exist", handle.as_raw())))
    }

    /// Waits until every stream of `devices` selected by `include` has run the work it had
    /// when the call began. Streams are snapshotted first, so no registry lock is held while
    /// waiting.
    fn wait_for_streams(&self, devices: &[DeviceIndex], include: impl Fn(&Stream) -> bool) {
        let pending: Vec<(Arc<Stream>, u64)> = read_lock(&self.streams)
            .values()
            .filter(|s| devices.contains(&s.device()) && include(s))
            .map(|s| (Arc::clone(s), s.last_ticket()))
            .collect();
        for (stream, ticket) in pending {
            stream.wait_for(ticket);
        }
    }

    /// The legacy null stream's implicit synchronization: wait for the blocking streams of
    /// `devices`.
    fn null_stream_barrier(&self, devices: &[DeviceIndex]) {
        self.wait_for_streams(devices, Stream::is_blocking);
    }

    /// Orders the caller after `stream`: drains it, or passes the null-stream barrier.
    fn wait_for_stream(&self, stream: Option<StreamHandle>, devices: &[DeviceIndex]) -> Result<(), BackendError> {
        match stream {
            Some(handle) => self.stream(handle)?.drain(),
            None => self.null_stream_barrier(devices),
        }
        Ok(())
    }

    /// Queues `op` on `stream`, or runs it now on the null stream of `devices`.
    fn enqueue(&self, stream: Option<StreamHandle>, devices: &[DeviceIndex], op: StreamOp) -> Result<(), BackendError> {
        match stream {
            Some(handle) => self.stream(handle)?.submit(op).map(drop),
            None => {
                self.null_stream_barrier(devices);
                op.execute()
            }
        }
    }

    fn resolve(&self, ptr: DevicePtr, len: u64) -> Result<Region, BackendError> {
        self.address_space.resolve(ptr, len)
    }

    /// The region spanning `height` rows of `width` bytes at `area`, and their layout in it.
    fn resolve_rows(&self, area: Pitched, width: u64, height: u64) -> Result<(Region, RowLayout), BackendError> {
        let rows = Rows { width, height };
        if area.pitch < width {
            return Err(BackendError::InvalidValue(format!("pitch {} is less than the row width {width}", area.pitch)));
        }
        let span = rows.span(area.pitch).ok_or_else(|| BackendError::InvalidValue(format!("{height} rows at pitch {} overflow", area.pitch)))?;
        let region = self.resolve(area.ptr, span)?;
        // All three fit in usize: they lie inside a mapped allocation.
        let layout = RowLayout { pitch: area.pitch as usize, width: width as usize, height: height as usize };
        Ok((region, layout))
    }
}

impl DeviceBackend for HostBackend {
    fn name(&self) -> &'static str {
        self.name
    }

    fn device_count(&self) -> Result<u32, BackendError> {
        // `devices` was built from a `u32` count.
        Ok(self.devices.len() as u32)
    }

    fn device_properties(&self, dev: DeviceIndex) -> Result<DeviceProperties, BackendError> {
        Ok(self.device(dev)?.properties.clone())
    }

    fn device_synchronize(&self, dev: DeviceIndex) -> Result<(), BackendError> {
        self.device(dev)?;
        self.wait_for_streams(&[dev], |_| true);
        Ok(())
    }

    fn reset_device(&self, dev: DeviceIndex) -> Result<(), BackendError> {
        self.injected.faults.lock().unwrap_or_else(PoisonError::into_inner).remove(&dev);
        self.injected.resets.lock().unwrap_or_else(PoisonError::into_inner).push(dev);
        Ok(())
    }

    /// Healthy unless a fault was injected (tests): a failed host kernel latches its error on
    /// its stream only (a later launch on another stream runs cleanly), so no error of this
    /// backend is sticky by itself.
    fn device_fault(&self, dev: DeviceIndex) -> Option<bool> {
        Some(self.injected.check(dev).is_err())
    }

    fn device_limit(&self, dev: DeviceIndex, limit: DeviceLimit) -> Result<u64, BackendError> {
        self.device(dev)?;
        Ok(match limit {
            DeviceLimit::StackSize => DEFAULT_KERNEL_STACK_BYTES,
            DeviceLimit::PrintfFifoSize => DEFAULT_PRINTF_FIFO_BYTES,
            DeviceLimit::MallocHeapSize => DEFAULT_MALLOC_HEAP_BYTES,
            DeviceLimit::ScratchMin | DeviceLimit::ScratchMax | DeviceLimit::ScratchCurrent => {
                return Err(BackendError::NotSupported("scratch limits exist on AMD GPUs only; the host backend has none".into()))
            }
        })
    }

    fn set_device_limit(&self, dev: DeviceIndex, limit: DeviceLimit, value: u64) -> Result<u64, BackendError> {
        self.device_limit(dev, limit)?;
        if limit == DeviceLimit::StackSize && value > KERNEL_STACK_BYTES {
            return Err(BackendError::InvalidValue(format!(
                "a stack of {value} bytes per thread exceeds the {KERNEL_STACK_BYTES} the host \
                 backend guarantees"
            )));
        }
        // Nothing to apply: the session records the value (limits are per session here).
        Ok(value)
    }

    fn can_access_peer(&self, dev: DeviceIndex, peer: DeviceIndex) -> Result<bool, BackendError> {
        self.device(dev)?;
        self.device(peer)?;
        // Every emulated device lives in one address space: a kernel on any of them can
        // dereference any other's memory.
        Ok(dev != peer)
    }
}

impl TransportHooks for HostBackend {
    fn device_memory_is_host_memory(&self) -> bool {
        true
    }
}

impl Drop for HostBackend {
    /// Closes every stream before joining any, so streams waiting on each other's events all
    /// drain.
    fn drop(&mut self) {
        let streams: Vec<Arc<Stream>> = write_lock(&self.streams).drain().map(|(_, s)| s).collect();
        for stream in &streams {
            stream.close();
        }
        for stream in &streams {
            stream.shut_down();
        }
    }
}

// Lock helpers. Poisoning carries no meaning here: the protected data (byte buffers, queues,
// counters) has no invariant a panicking holder could break halfway, and panics inside
// stream operations are caught before they reach a lock.

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn read_lock<T>(rwlock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    rwlock.read().unwrap_or_else(PoisonError::into_inner)
}

fn write_lock<T>(rwlock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    rwlock.write().unwrap_or_else(PoisonError::into_inner)
}

fn wait<'a, T>(condvar: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    condvar.wait(guard).unwrap_or_else(PoisonError::into_inner)
}
