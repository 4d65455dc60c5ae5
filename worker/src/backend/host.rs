//! The `host` backend: HIP devices emulated in host memory, for tests, fuzzing and machines
//! without a GPU. It reports itself plainly (`gcnArchName` `host`, a name saying "host
//! emulation") and behaves like a GPU where clients can tell:
//!
//! * **Streams** are executor threads, one per stream, running their FIFO of operations
//!   asynchronously and in order, so a client that forgets to synchronize sees stale data
//!   here too. A queued operation that fails (or panics) latches its error on the stream;
//!   every later [`Backend::stream_synchronize`]/[`Backend::stream_query`] of that stream
//!   reports it until the stream is destroyed. Later operations still run, so event records
//!   complete and nobody waiting on them hangs.
//! * **The null stream** (`stream: None`) runs its operation synchronously on the caller's
//!   thread, after every *blocking* stream (created without `hipStreamNonBlocking`) of the
//!   devices involved has finished the work it had when the call began: HIP's legacy-stream
//!   semantics. Non-blocking streams are not waited for. The legacy stream is per device,
//!   not per session, as on a real GPU shared by one process.
//! * **Memory** is zeroed host memory, counted against a per-device capacity shared by all
//!   sessions. Requests beyond the free capacity fail before anything is allocated; a host
//!   allocator refusal is `OutOfMemory`, never an abort. **Device pointers are host
//!   addresses** (identity mapping, 256-byte aligned, with an unowned red zone after each
//!   allocation; see `memory`): kernels dereference them directly. The host backend trades
//!   pointer opacity for executable kernels: a client learns heap addresses of the worker,
//!   and a freed address may come back from a later allocation.
//! * **Free while queued** is safe: queued operations hold an `Arc` to their allocation, so
//!   [`Backend::free`] unmaps the address at once (later use is an error) while the bytes,
//!   and the capacity [`Backend::mem_get_info`] reports, return when the last queued user is
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
//! * **Zero-copy access** ([`Backend::with_device_bytes`], [`Backend::with_device_bytes_mut`])
//!   waits for the stream, then runs the closure on the caller's thread under the
//!   allocation's lock: stream executors touching the same allocation wait meanwhile, so
//!   there is never an aliasing `&mut`, whatever the client does.
//! * **Warp size** is 32 (`properties::HOST_WARP_SIZE`), so clients sizing work by
//!   `warpSize` get GPU-like shapes. Stream priorities are not supported: the range is
//!   `(0, 0)` and every priority clamps to 0.
//! * **Limits** report what the backend honours: a stack of [`KERNEL_STACK_BYTES`] per
//!   thread (less may be asked for, more is `InvalidValue`); any printf FIFO and heap size
//!   (kernels print straight to the worker's output and allocate from its heap). The session
//!   keeps what each client set, so limits are per session. **Peers**: every emulated device
//!   is every other's peer (one address space). **`hipFuncSetAttribute`**: the maximum
//!   dynamic shared memory (at most the block's shared memory beside the static part) is
//!   enforced at launch; the carveout is recorded and reported.

mod event;
#[cfg(test)]
mod kernel_tests;
mod launch;
mod memory;
mod module;
mod properties;
mod rtc;
mod stream;
#[cfg(test)]
mod tests;

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{
    Arc, Condvar, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard,
};

use self::event::Event;
use self::launch::{AlignedBytes, KernelLaunch, KernelTracker, MAX_KERNEL_THREADS};
use self::memory::{AddressSpace, DeviceMemory, Region, RowLayout, PAGE};
use self::module::{HostModule, Kernel, ModuleLimits};
use self::properties::CpuInfo;
use self::stream::{Signal, Stream, StreamOp};
use super::{
    stream_flags, validate_event_flags, Backend, BackendError, DeviceIndex, DeviceLimit, DeviceProperties, DevicePtr, DtohDone,
    EventHandle, FunctionAttribute, FunctionAttributes, FunctionHandle, HostData, HostFn, KernelFunction, LaunchConfig, MemInfo,
    MemsetPattern, ModuleFormat, ModuleHandle, Pitched, RtcOutput, RtcRequest, Rows, StreamHandle,
};

/// How many devices to emulate and how much memory each has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostConfig {
    /// Number of emulated devices.
    pub devices: u32,
    /// Capacity of each device in bytes.
    pub memory_per_device: u64,
}

impl Default for HostConfig {
    /// One device with `min(physical RAM / 2, 16 GiB)`.
    fn default() -> Self {
        Self {
            devices: 1,
            memory_per_device: properties::default_capacity(),
        }
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
}

impl Default for HostBackend {
    fn default() -> Self {
        Self::new(HostConfig::default())
    }
}

impl HostBackend {
    pub fn new(config: HostConfig) -> Self {
        let cpu = CpuInfo::probe();
        let devices = (0..config.devices)
            .map(|dev| HostDevice {
                memory: Arc::new(DeviceMemory::new(config.memory_per_device)),
                properties: properties::host_properties(dev, config.memory_per_device, &cpu),
            })
            .collect();
        let kernel_threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_KERNEL_THREADS);
        Self {
            devices,
            address_space: AddressSpace::new(),
            streams: RwLock::new(HashMap::new()),
            events: RwLock::new(HashMap::new()),
            modules: RwLock::new(HashMap::new()),
            functions: RwLock::new(HashMap::new()),
            kernels_in_flight: Arc::new(KernelTracker::default()),
            kernel_threads,
            next_handle: AtomicU64::new(1),
        }
    }

    fn function(&self, handle: FunctionHandle) -> Result<KernelRef, BackendError> {
        read_lock(&self.functions)
            .get(&handle)
            .cloned()
            .ok_or_else(|| {
                BackendError::InvalidHandle(format!(
                    "function {} does not exist (or its module was unloaded)",
                    handle.as_raw()
                ))
            })
    }

    fn module_limits(&self, dev: DeviceIndex) -> Result<ModuleLimits, BackendError> {
        Ok(ModuleLimits {
            shared_mem_per_block: self.device(dev)?.properties.shared_mem_per_block,
        })
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
            return Err(BackendError::NoDevice(
                "the host backend emulates no devices".into(),
            ));
        }
        self.devices.get(dev as usize).ok_or_else(|| {
            BackendError::InvalidDevice(format!(
                "device {dev} does not exist ({} emulated)",
                self.devices.len()
            ))
        })
    }

    fn next_handle(&self) -> u64 {
        self.next_handle.fetch_add(1, Ordering::Relaxed)
    }

    fn stream(&self, handle: StreamHandle) -> Result<Arc<Stream>, BackendError> {
        read_lock(&self.streams)
            .get(&handle)
            .cloned()
            .ok_or_else(|| {
                BackendError::InvalidHandle(format!("stream {} does not exist", handle.as_raw()))
            })
    }

    fn event(&self, handle: EventHandle) -> Result<Arc<Event>, BackendError> {
        read_lock(&self.events)
            .get(&handle)
            .cloned()
            .ok_or_else(|| {
                BackendError::InvalidHandle(format!("event {} does not exist", handle.as_raw()))
            })
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
    fn wait_for_stream(
        &self,
        stream: Option<StreamHandle>,
        devices: &[DeviceIndex],
    ) -> Result<(), BackendError> {
        match stream {
            Some(handle) => self.stream(handle)?.drain(),
            None => self.null_stream_barrier(devices),
        }
        Ok(())
    }

    /// Queues `op` on `stream`, or runs it now on the null stream of `devices`.
    fn enqueue(
        &self,
        stream: Option<StreamHandle>,
        devices: &[DeviceIndex],
        op: StreamOp,
    ) -> Result<(), BackendError> {
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
        let span = rows
            .span(area.pitch)
            .ok_or_else(|| BackendError::InvalidValue(format!("{height} rows at pitch {} overflow", area.pitch)))?;
        let region = self.resolve(area.ptr, span)?;
        // All three fit in usize: they lie inside a mapped allocation.
        let layout = RowLayout { pitch: area.pitch as usize, width: width as usize, height: height as usize };
        Ok((region, layout))
    }
}

impl Backend for HostBackend {
    fn name(&self) -> &'static str {
        "host"
    }

    fn device_memory_is_host_memory(&self) -> bool {
        true
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

    fn mem_get_info(&self, dev: DeviceIndex) -> Result<MemInfo, BackendError> {
        Ok(self.device(dev)?.memory.info())
    }

    fn malloc(&self, dev: DeviceIndex, size: u64) -> Result<DevicePtr, BackendError> {
        let device = self.device(dev)?;
        if size == 0 {
            return Ok(DevicePtr::NULL);
        }
        let out_of_memory = || {
            let MemInfo { free, total } = device.memory.info();
            BackendError::OutOfMemory(format!(
                "{size} bytes requested on device {dev}, {free} of {total} free"
            ))
        };
        let footprint = size
            .checked_next_multiple_of(PAGE)
            .ok_or_else(out_of_memory)?;
        let capacity = device
            .memory
            .try_reserve(footprint)
            .ok_or_else(out_of_memory)?;
        self.address_space.map(dev, size, capacity)
    }

    fn free(&self, ptr: DevicePtr) -> Result<(), BackendError> {
        if ptr.is_null() {
            return Ok(());
        }
        let allocation = self.address_space.unmap(ptr)?;
        self.kernels_in_flight.retire(Box::new(allocation));
        Ok(())
    }

    fn memcpy_htod(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        data: HostData,
    ) -> Result<(), BackendError> {
        let dst = self.resolve(dst, data.len() as u64)?;
        self.enqueue(stream, &[dst.device()], StreamOp::CopyHtoD { dst, data })
    }

    fn memcpy_htod_sync(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        data: &[u8],
    ) -> Result<(), BackendError> {
        let dst = self.resolve(dst, data.len() as u64)?;
        self.wait_for_stream(stream, &[dst.device()])?;
        dst.write(data);
        Ok(())
    }

    fn with_device_bytes_mut(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        len: u64,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), BackendError> {
        let dst = self.resolve(dst, len)?;
        self.wait_for_stream(stream, &[dst.device()])?;
        dst.with_bytes_mut(fill);
        Ok(())
    }

    fn memcpy_dtoh(
        &self,
        stream: Option<StreamHandle>,
        src: DevicePtr,
        len: u64,
        done: DtohDone,
    ) -> Result<(), BackendError> {
        let src = self.resolve(src, len)?;
        self.enqueue(stream, &[src.device()], StreamOp::CopyDtoH { src, done })
    }

    fn memcpy_dtoh_sync(
        &self,
        stream: Option<StreamHandle>,
        src: DevicePtr,
        out: &mut [u8],
    ) -> Result<(), BackendError> {
        let src = self.resolve(src, out.len() as u64)?;
        self.wait_for_stream(stream, &[src.device()])?;
        src.read_into(out);
        Ok(())
    }

    fn with_device_bytes(
        &self,
        stream: Option<StreamHandle>,
        src: DevicePtr,
        len: u64,
        read: &mut dyn FnMut(&[u8]),
    ) -> Result<(), BackendError> {
        let src = self.resolve(src, len)?;
        self.wait_for_stream(stream, &[src.device()])?;
        src.with_bytes(read);
        Ok(())
    }

    fn memcpy_dtod(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        src: DevicePtr,
        len: u64,
    ) -> Result<(), BackendError> {
        let dst = self.resolve(dst, len)?;
        let src = self.resolve(src, len)?;
        let devices = [dst.device(), src.device()];
        self.enqueue(stream, &devices, StreamOp::CopyDtoD { dst, src })
    }

    fn memset(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        pattern: MemsetPattern,
        count: u64,
    ) -> Result<(), BackendError> {
        let len = pattern.byte_len(count).ok_or_else(|| {
            BackendError::InvalidValue(format!("memset of {count} elements overflows"))
        })?;
        let dst = self.resolve(dst, len)?;
        self.enqueue(stream, &[dst.device()], StreamOp::Memset { dst, pattern })
    }

    fn memcpy_htod_2d(
        &self,
        stream: Option<StreamHandle>,
        dst: Pitched,
        width: u64,
        data: HostData,
    ) -> Result<(), BackendError> {
        let (region, rows) = self.resolve_rows(dst, width, data.len() as u64 / width.max(1))?;
        let devices = [region.device()];
        self.enqueue(stream, &devices, StreamOp::CopyHtoD2D { dst: region, rows, data })
    }

    fn memcpy_dtoh_2d(
        &self,
        stream: Option<StreamHandle>,
        src: Pitched,
        rows: Rows,
        done: DtohDone,
    ) -> Result<(), BackendError> {
        let (region, rows) = self.resolve_rows(src, rows.width, rows.height)?;
        let devices = [region.device()];
        self.enqueue(stream, &devices, StreamOp::CopyDtoH2D { src: region, rows, done })
    }

    fn memcpy_dtod_2d(
        &self,
        stream: Option<StreamHandle>,
        dst: Pitched,
        src: Pitched,
        rows: Rows,
    ) -> Result<(), BackendError> {
        let (dst_region, dst_rows) = self.resolve_rows(dst, rows.width, rows.height)?;
        let (src_region, src_rows) = self.resolve_rows(src, rows.width, rows.height)?;
        let devices = [dst_region.device(), src_region.device()];
        let op = StreamOp::CopyDtoD2D {
            dst: dst_region,
            dst_pitch: dst_rows.pitch,
            src: src_region,
            src_pitch: src_rows.pitch,
            width: dst_rows.width,
            height: dst_rows.height,
        };
        self.enqueue(stream, &devices, op)
    }

    fn memcpy_peer(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        dst_dev: DeviceIndex,
        src: DevicePtr,
        src_dev: DeviceIndex,
        len: u64,
    ) -> Result<(), BackendError> {
        // One address space holds every emulated device: a peer copy is a plain copy.
        self.device(dst_dev)?;
        self.device(src_dev)?;
        self.memcpy_dtod(stream, dst, src, len)
    }

    fn malloc_async(
        &self,
        stream: Option<StreamHandle>,
        dev: DeviceIndex,
        size: u64,
    ) -> Result<DevicePtr, BackendError> {
        if let Some(handle) = stream {
            self.stream(handle)?;
        }
        // Allocating now is a valid stream order: the memory exists before any later work.
        self.malloc(dev, size)
    }

    fn free_async(&self, stream: Option<StreamHandle>, ptr: DevicePtr) -> Result<(), BackendError> {
        if let Some(handle) = stream {
            self.stream(handle)?;
        }
        // Unmapping now refuses new work on the address; operations already queued hold
        // their regions (and launches their allocations, through `kernels_in_flight`), so
        // the bytes are released only after the stream's earlier work.
        self.free(ptr)
    }

    fn stream_create(
        &self,
        dev: DeviceIndex,
        flags: u32,
        _priority: i32,
    ) -> Result<StreamHandle, BackendError> {
        self.device(dev)?;
        if flags & !stream_flags::SUPPORTED != 0 {
            return Err(BackendError::InvalidValue(format!(
                "unknown stream flags {flags:#x}"
            )));
        }
        // Priorities are unsupported: every priority clamps into the range (0, 0).
        let blocking = flags & stream_flags::NON_BLOCKING == 0;
        let handle = StreamHandle::from_raw(self.next_handle());
        let stream = Stream::spawn(handle.as_raw(), dev, blocking)?;
        write_lock(&self.streams).insert(handle, Arc::new(stream));
        Ok(handle)
    }

    fn stream_destroy(&self, stream: StreamHandle) -> Result<(), BackendError> {
        let removed = write_lock(&self.streams).remove(&stream).ok_or_else(|| {
            BackendError::InvalidHandle(format!("stream {} does not exist", stream.as_raw()))
        })?;
        removed.shut_down();
        Ok(())
    }

    fn stream_synchronize(&self, stream: StreamHandle) -> Result<(), BackendError> {
        self.stream(stream)?.synchronize()
    }

    fn stream_query(&self, stream: StreamHandle) -> Result<bool, BackendError> {
        self.stream(stream)?.query()
    }

    fn stream_wait_event(
        &self,
        stream: Option<StreamHandle>,
        event: EventHandle,
    ) -> Result<(), BackendError> {
        let event = self.event(event)?;
        let Some(signal) = event.latest() else {
            return Ok(());
        };
        match stream {
            Some(handle) => self
                .stream(handle)?
                .submit(StreamOp::WaitEvent(signal))
                .map(drop),
            None => {
                signal.wait();
                Ok(())
            }
        }
    }

    fn device_limit(&self, dev: DeviceIndex, limit: DeviceLimit) -> Result<u64, BackendError> {
        self.device(dev)?;
        Ok(match limit {
            DeviceLimit::StackSize => KERNEL_STACK_BYTES,
            DeviceLimit::PrintfFifoSize => DEFAULT_PRINTF_FIFO_BYTES,
            DeviceLimit::MallocHeapSize => DEFAULT_MALLOC_HEAP_BYTES,
        })
    }

    fn set_device_limit(
        &self,
        dev: DeviceIndex,
        limit: DeviceLimit,
        value: u64,
    ) -> Result<u64, BackendError> {
        self.device(dev)?;
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

    fn stream_priority_range(&self, dev: DeviceIndex) -> Result<(i32, i32), BackendError> {
        self.device(dev)?;
        Ok((0, 0))
    }

    fn stream_info(&self, stream: StreamHandle) -> Result<(u32, i32), BackendError> {
        let flags = if self.stream(stream)?.is_blocking() {
            stream_flags::DEFAULT
        } else {
            stream_flags::NON_BLOCKING
        };
        // Priorities are unsupported: every stream's priority clamps to 0.
        Ok((flags, 0))
    }

    fn launch_host_func(&self, stream: StreamHandle, f: HostFn) -> Result<(), BackendError> {
        self.stream(stream)?.submit(StreamOp::HostFunc(f)).map(drop)
    }

    fn event_create(&self, dev: DeviceIndex, flags: u32) -> Result<EventHandle, BackendError> {
        self.device(dev)?;
        validate_event_flags(flags)?;
        let handle = EventHandle::from_raw(self.next_handle());
        write_lock(&self.events).insert(handle, Arc::new(Event::new(dev, flags)));
        Ok(handle)
    }

    fn event_destroy(&self, event: EventHandle) -> Result<(), BackendError> {
        write_lock(&self.events)
            .remove(&event)
            .map(drop)
            .ok_or_else(|| {
                BackendError::InvalidHandle(format!("event {} does not exist", event.as_raw()))
            })
    }

    fn event_record(
        &self,
        event: EventHandle,
        stream: Option<StreamHandle>,
    ) -> Result<(), BackendError> {
        let event = self.event(event)?;
        let signal = Arc::new(Signal::new());
        match stream {
            Some(handle) => {
                let stream = self.stream(handle)?;
                if stream.device() != event.device() {
                    return Err(BackendError::InvalidHandle(format!(
                        "event of device {} recorded on a stream of device {}",
                        event.device(),
                        stream.device()
                    )));
                }
                stream.submit(StreamOp::RecordEvent(Arc::clone(&signal)))?;
            }
            None => {
                self.null_stream_barrier(&[event.device()]);
                signal.fire();
            }
        }
        event.set_latest(signal);
        Ok(())
    }

    fn event_synchronize(&self, event: EventHandle) -> Result<(), BackendError> {
        if let Some(signal) = self.event(event)?.latest() {
            signal.wait();
        }
        Ok(())
    }

    fn event_query(&self, event: EventHandle) -> Result<bool, BackendError> {
        // Never recorded counts as complete, as in HIP.
        let reached = match self.event(event)?.latest() {
            Some(signal) => signal.fired_at().is_some(),
            None => true,
        };
        Ok(reached)
    }

    fn event_elapsed_ms(&self, start: EventHandle, end: EventHandle) -> Result<f32, BackendError> {
        let (start, end) = (self.event(start)?, self.event(end)?);
        if start.device() != end.device() {
            return Err(BackendError::InvalidHandle(
                "events belong to different devices".into(),
            ));
        }
        event::elapsed_ms(&start, &end)
    }

    fn module_load(
        &self,
        dev: DeviceIndex,
        format: ModuleFormat,
        image: &[u8],
    ) -> Result<ModuleHandle, BackendError> {
        let limits = self.module_limits(dev)?;
        let module = Arc::new(HostModule::load_image(
            image,
            format,
            &std::env::temp_dir(),
            &limits,
        )?);
        let owner: Arc<dyn Any + Send + Sync> = module.clone();
        let mut globals = Vec::with_capacity(module.globals().len());
        for global in module.globals() {
            match self.address_space.map_external(
                dev,
                global.address,
                global.size,
                Arc::clone(&owner),
            ) {
                Ok(ptr) => globals.push(ptr),
                Err(e) => {
                    self.unmap_globals(&globals);
                    return Err(BackendError::InvalidImage(format!(
                        "{}: global `{}`: {}",
                        module.origin(),
                        global.name,
                        e.message()
                    )));
                }
            }
        }
        let handle = ModuleHandle::from_raw(self.next_handle());
        let functions: Vec<FunctionHandle> = module
            .kernels()
            .iter()
            .map(|_| FunctionHandle::from_raw(self.next_handle()))
            .collect();
        let kernel_by_name = module
            .kernels()
            .iter()
            .enumerate()
            .map(|(i, k)| (k.name.clone(), i))
            .collect();
        {
            let block_shared = self.device(dev)?.properties.shared_mem_per_block;
            let mut table = write_lock(&self.functions);
            for (index, &function) in functions.iter().enumerate() {
                let static_shared = u64::from(module.kernels()[index].static_shared);
                let settings = KernelSettings {
                    max_dynamic_shared: u32::try_from(block_shared.saturating_sub(static_shared))
                        .unwrap_or(u32::MAX),
                    preferred_carveout: -1,
                };
                table.insert(
                    function,
                    KernelRef {
                        module: Arc::clone(&module),
                        index,
                        device: dev,
                        settings: Arc::new(Mutex::new(settings)),
                    },
                );
            }
        }
        tracing::debug!(
            module = handle.as_raw(),
            kernels = functions.len(),
            globals = globals.len(),
            "host module loaded"
        );
        write_lock(&self.modules).insert(
            handle,
            ModuleEntry {
                module,
                device: dev,
                functions,
                kernel_by_name,
                globals,
            },
        );
        Ok(handle)
    }

    fn module_unload(&self, module: ModuleHandle) -> Result<(), BackendError> {
        let entry = write_lock(&self.modules).remove(&module).ok_or_else(|| {
            BackendError::InvalidHandle(format!("module {} does not exist", module.as_raw()))
        })?;
        {
            let mut table = write_lock(&self.functions);
            for function in &entry.functions {
                table.remove(function);
            }
        }
        self.unmap_globals(&entry.globals);
        // Queued launches hold the module themselves; launches of other modules may still
        // write its globals through pointers, so it is parked like freed memory.
        self.kernels_in_flight.retire(Box::new(entry.module));
        Ok(())
    }

    fn module_function(
        &self,
        module: ModuleHandle,
        name: &str,
    ) -> Result<KernelFunction, BackendError> {
        let modules = read_lock(&self.modules);
        let entry = modules.get(&module).ok_or_else(|| {
            BackendError::InvalidHandle(format!("module {} does not exist", module.as_raw()))
        })?;
        let index = *entry.kernel_by_name.get(name).ok_or_else(|| {
            let mut known: Vec<&str> = entry
                .module
                .kernels()
                .iter()
                .map(|k| k.name.as_str())
                .collect();
            known.sort_unstable();
            let shown = known.iter().take(8).copied().collect::<Vec<_>>().join(", ");
            let more = if known.len() > 8 { ", ..." } else { "" };
            BackendError::NotFound(format!(
                "{} has no kernel `{name}` (kernels: {shown}{more})",
                entry.module.origin()
            ))
        })?;
        let kernel = &entry.module.kernels()[index];
        let props = &self.device(entry.device)?.properties;
        Ok(KernelFunction {
            handle: entry.functions[index],
            params: kernel.params.clone(),
            attributes: launch::attributes(kernel, props),
        })
    }

    fn module_global(
        &self,
        module: ModuleHandle,
        name: &str,
    ) -> Result<(DevicePtr, u64), BackendError> {
        let modules = read_lock(&self.modules);
        let entry = modules.get(&module).ok_or_else(|| {
            BackendError::InvalidHandle(format!("module {} does not exist", module.as_raw()))
        })?;
        entry
            .module
            .globals()
            .iter()
            .zip(&entry.globals)
            .find(|(global, _)| global.name == name)
            .map(|(global, &ptr)| (ptr, global.size))
            .ok_or_else(|| {
                BackendError::NotFound(format!("{} has no global `{name}`", entry.module.origin()))
            })
    }

    fn function_attributes(
        &self,
        function: FunctionHandle,
    ) -> Result<FunctionAttributes, BackendError> {
        let target = self.function(function)?;
        let props = &self.device(target.device)?.properties;
        let settings = *lock(&target.settings);
        Ok(FunctionAttributes {
            max_dynamic_shared_size: i32::try_from(settings.max_dynamic_shared)
                .unwrap_or(i32::MAX),
            preferred_shmem_carveout: settings.preferred_carveout,
            ..launch::attributes(target.kernel(), props)
        })
    }

    fn function_set_attribute(
        &self,
        function: FunctionHandle,
        attribute: FunctionAttribute,
        value: i32,
    ) -> Result<(), BackendError> {
        let target = self.function(function)?;
        let mut settings = lock(&target.settings);
        match attribute {
            FunctionAttribute::MaxDynamicSharedSize => {
                let props = &self.device(target.device)?.properties;
                let available = props
                    .shared_mem_per_block_optin
                    .saturating_sub(u64::from(target.kernel().static_shared));
                match u32::try_from(value) {
                    Ok(v) if u64::from(v) <= available => settings.max_dynamic_shared = v,
                    _ => {
                        return Err(BackendError::InvalidValue(format!(
                            "maximum dynamic shared memory {value} is outside 0..={available} \
                             bytes for `{}`",
                            target.kernel().name
                        )))
                    }
                }
            }
            FunctionAttribute::PreferredSharedCarveout => {
                if !(-1..=100).contains(&value) {
                    return Err(BackendError::InvalidValue(format!(
                        "shared memory carveout {value} is outside -1..=100"
                    )));
                }
                settings.preferred_carveout = value;
            }
        }
        Ok(())
    }

    fn launch_kernel(
        &self,
        stream: Option<StreamHandle>,
        function: FunctionHandle,
        config: LaunchConfig,
        args: Vec<u8>,
    ) -> Result<(), BackendError> {
        let target = self.function(function)?;
        let (queue, device) = match stream {
            Some(handle) => {
                let queue = self.stream(handle)?;
                let device = queue.device();
                (Some(queue), device)
            }
            None => (None, target.device),
        };
        let props = &self.device(device)?.properties;
        launch::validate_launch(target.kernel(), &config, args.len(), props)?;
        let max_dynamic = lock(&target.settings).max_dynamic_shared;
        if config.shared_mem > max_dynamic {
            // hipErrorInvalidValue, as CUDA answers a launch above the attribute and ROCm one
            // above the device's shared memory.
            return Err(BackendError::InvalidValue(format!(
                "launch of `{}`: {} bytes of dynamic shared memory exceed the {max_dynamic} its \
                 hipFuncAttributeMaxDynamicSharedMemorySize allows",
                target.kernel().name,
                config.shared_mem
            )));
        }
        let launch = KernelLaunch {
            args: AlignedBytes::copy_of(&args)?,
            module: Arc::clone(&target.module),
            kernel: target.index,
            config,
            threads: self.kernel_threads,
            _ticket: self.kernels_in_flight.begin(),
        };
        match queue {
            Some(queue) => queue.submit(StreamOp::Kernel(launch)).map(drop),
            None => {
                self.null_stream_barrier(&[device]);
                StreamOp::Kernel(launch).execute()
            }
        }
    }

    fn occupancy_max_active_blocks(
        &self,
        function: FunctionHandle,
        block_size: u32,
        dynamic_shared: u64,
    ) -> Result<u32, BackendError> {
        let target = self.function(function)?;
        let props = &self.device(target.device)?.properties;
        launch::max_active_blocks(target.kernel(), props, block_size, dynamic_shared)
    }

    fn occupancy_max_potential_block_size(
        &self,
        function: FunctionHandle,
        dynamic_shared: u64,
        block_size_limit: u32,
    ) -> Result<(u32, u32), BackendError> {
        let target = self.function(function)?;
        let props = &self.device(target.device)?.properties;
        launch::max_potential_block_size(target.kernel(), props, dynamic_shared, block_size_limit)
    }

    fn rtc_compile(
        &self,
        dev: DeviceIndex,
        request: &RtcRequest<'_>,
    ) -> Result<RtcOutput, BackendError> {
        let limits = self.module_limits(dev)?;
        rtc::compile(request, &limits)
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
