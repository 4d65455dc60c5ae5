//! The `cuda` backend: HIP work on NVIDIA GPUs through the CUDA driver API (cudarc with
//! dynamic loading, so the worker builds and runs where no CUDA is installed; `--backend
//! auto` then falls back to host emulation, saying why).
//!
//! Mapping: one primary context per device, made current on whichever thread calls; HIP
//! streams are `CUstream`s; HIP events are `CUevent`s; device pointers are `CUdeviceptr`s.
//! The null stream is CUDA's legacy default stream, which has HIP's legacy semantics.
//! Host↔device copies go through a pool of pinned staging buffers (no per-copy allocation):
//! asynchronous device-to-host copies land in a pinned buffer and a host function on the
//! stream hands the bytes to the session when the stream reaches them.

mod accounting;
mod array;
mod blas;
mod device_attr;
mod device_log;
mod error;
mod event;
mod graph;
mod ipc;
mod managed;
mod memory;
mod memset;
mod module;
mod props;
mod reset;
mod result;
mod rtc;
mod scrub;
mod stream;
mod stream_ops;
mod vmm;
mod wait_kernel;

use super::{BackendError, DeviceBackend, DeviceIndex, DeviceLimit, DeviceProperties, DevicePtr, HandleMap, HostFn, StreamHandle, TransportHooks};
use crate::devices::DeviceSelection;
use cudarc::driver::sys::{self, CUcontext, CUdevice, CUevent, CUstream};
use error::Check;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Size of one pinned staging buffer (the client's copy chunk size).
pub const STAGING_BYTES: usize = proto_core::limits::DEFAULT_COPY_CHUNK;
/// The driver's number for a limit.
fn cu_limit(limit: DeviceLimit) -> Result<sys::CUlimit, BackendError> {
    Ok(match limit {
        DeviceLimit::StackSize => sys::CUlimit::CU_LIMIT_STACK_SIZE,
        DeviceLimit::PrintfFifoSize => sys::CUlimit::CU_LIMIT_PRINTF_FIFO_SIZE,
        DeviceLimit::MallocHeapSize => sys::CUlimit::CU_LIMIT_MALLOC_HEAP_SIZE,
        DeviceLimit::ScratchMin | DeviceLimit::ScratchMax | DeviceLimit::ScratchCurrent => {
            return Err(BackendError::NotSupported("scratch limits exist on AMD GPUs only; CUDA has no such limit".into()))
        }
    })
}

/// Pinned staging buffers kept for reuse: as many as a striped upload keeps in flight
/// (`stripes::DEFAULT_MAX_STRIPES` × `stripes::STRIPE_DMA_WINDOW`), so striped copies do not
/// allocate and free pinned memory (`cuMemFreeHost` waits for the device) on every copy; at
/// most 128 MiB of pinned memory per worker.
pub const STAGING_POOL_MAX: usize = crate::stripes::DEFAULT_MAX_STRIPES * crate::stripes::STRIPE_DMA_WINDOW;
/// Staging buffers that live as long as the backend, so a transport can register them with
/// its NIC once (RDMA without GPUDirect) instead of for every copy; taken before any other.
pub const STAGING_RESERVED: usize = 4;

/// A raw CUDA handle that may cross threads: the driver API is thread-safe and every call
/// makes the owning context current first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Raw<T>(T);
// SAFETY: CUDA driver handles are process-wide and usable from any thread (see above).
unsafe impl<T> Send for Raw<T> {}
// SAFETY: as above; the driver serialises access internally.
unsafe impl<T> Sync for Raw<T> {}

struct Device {
    dev: CUdevice,
    ctx: Raw<CUcontext>,
    props: DeviceProperties,
}

struct StreamEntry {
    raw: Raw<CUstream>,
    device: DeviceIndex,
    /// Where its device time goes, once a session accounts it.
    account: Option<std::sync::Arc<accounting::StreamAccount>>,
}

struct EventEntry {
    raw: Raw<CUevent>,
    device: DeviceIndex,
    /// The stream of its latest record (a device-log key), for the logs its wait reads.
    stream: u64,
    timing: bool,
    recorded: bool,
}

/// A page-locked host buffer from `cuMemAllocHost`.
struct Pinned {
    ptr: Raw<*mut u8>,
    len: usize,
    /// One of the [`STAGING_RESERVED`] buffers: never freed before the backend.
    reserved: bool,
}

impl Pinned {
    fn slice(&mut self, len: usize) -> &mut [u8] {
        // SAFETY: `ptr` is a live pinned allocation of `self.len` ≥ `len` bytes owned by us.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.0, len.min(self.len)) }
    }
}

/// The CUDA backend.
pub struct CudaBackend {
    /// Tells this backend's contexts apart from those of another (a dropped one whose
    /// context handles were released) in the per-thread cache of [`CudaBackend::enter`].
    instance: u64,
    devices: Vec<Device>,
    /// Read on every launch and copy of every session: shared, so sessions do not queue.
    streams: RwLock<HandleMap<u64, StreamEntry>>,
    events: Mutex<HandleMap<u64, EventEntry>>,
    allocations: Mutex<HashMap<u64, (u64, DeviceIndex)>>,
    /// The allocations of `allocations` made by `cuMemAllocAsync` (pool memory).
    pool_allocations: Mutex<std::collections::HashSet<u64>>,
    staging: Mutex<Vec<Pinned>>,
    /// Idle reserved staging buffers.
    reserved: Mutex<Vec<Pinned>>,
    /// Every reserved staging buffer, (address, length); allocated on first request.
    reserved_ranges: std::sync::OnceLock<Vec<(usize, usize)>>,
    next_handle: AtomicU64,
    modules: RwLock<module::ModuleTables>,
    /// Module globals: device memory for copies, never freeable.
    globals: Mutex<HashMap<u64, (u64, DeviceIndex)>>,
    /// Memory opened from other processes (`hipIpcOpenMemHandle` in a session process).
    ipc_opened: Mutex<ipc::OpenedTable>,
    /// Shared pages of interprocess events exported to or opened from other processes.
    event_pages: Mutex<ipc::EventPages>,
    /// The device logs of loaded modules (kernel printf/assert), with their launches.
    logs: Mutex<crate::backend::device_log::LogBook>,
    /// Launches of logged modules hold it shared from queueing to recording; a wait takes it
    /// exclusively to learn which launches it covers (`device_log.rs`), so launches of
    /// different sessions never queue one behind another on `logs`.
    log_gate: std::sync::RwLock<()>,
    /// Per device, the stream device logs are read on (see `device_log.rs`).
    log_streams: Mutex<HashMap<DeviceIndex, Raw<CUstream>>>,
    /// Kernel printf output and failed asserts per stream, from the device logs.
    outputs: Mutex<crate::backend::device_log::StreamOutputs>,
    /// Launches in flight, while the kernel watchdog is on.
    launch_watch: crate::backend::launch_watch::LaunchWatch<Raw<CUevent>>,
    /// Per device, the kernels serving masked stream waits (`wait_kernel.rs`), once loaded.
    wait_kernels: Mutex<HashMap<DeviceIndex, wait_kernel::WaitKernels>>,
}

/// Instances of [`CudaBackend`] made so far (0 = none: the empty cache entry).
static INSTANCES: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The (backend instance, context) that backend made current on this thread last:
    /// `enter` on every call (each launch) then costs no driver call while it stays so.
    /// Every context switch of this process goes through `enter` or clears this
    /// ([`forget_current_context`]).
    static CURRENT_CONTEXT: std::cell::Cell<(u64, usize)> = const { std::cell::Cell::new((0, 0)) };
}

/// Says that code outside this backend changed the current context of this thread
/// (`cuCtxSetCurrent` of its own): the next `enter` sets it again.
pub fn forget_current_context() {
    CURRENT_CONTEXT.with(|c| c.set((0, 0)));
}

fn read<T>(m: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(|p| p.into_inner())
}

fn write<T>(m: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(|p| p.into_inner())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl CudaBackend {
    /// Loads the driver and opens every device, or says why it cannot.
    pub fn new() -> Result<Self, BackendError> {
        Self::with_devices(None)
    }

    /// Loads the driver and opens the devices of `selection` (every device when `None`),
    /// numbered in the selection's order, or says why it cannot.
    pub fn with_devices(selection: Option<&DeviceSelection>) -> Result<Self, BackendError> {
        let mut devices = Vec::new();
        for (ordinal, dev) in Self::open_driver(selection)? {
            // SAFETY: `dev` is a valid device; the primary context is released in Drop.
            let ctx = unsafe { cudarc::driver::result::primary_ctx::retain(dev) }.map_err(|e| error::map("cuDevicePrimaryCtxRetain", e))?;
            // SAFETY: a context just retained.
            unsafe { cudarc::driver::result::ctx::set_current(ctx) }.check("cuCtxSetCurrent")?;
            forget_current_context();
            let props = props::read(dev)?;
            tracing::info!(ordinal, served_as = devices.len(), name = %props.name, arch = %props.gcn_arch_name, "CUDA device opened");
            devices.push(Device { dev, ctx: Raw(ctx), props });
        }
        Ok(Self {
            instance: INSTANCES.fetch_add(1, Ordering::Relaxed) + 1,
            devices,
            streams: RwLock::default(),
            events: Mutex::default(),
            allocations: Mutex::default(),
            pool_allocations: Mutex::default(),
            staging: Mutex::default(),
            reserved: Mutex::default(),
            reserved_ranges: std::sync::OnceLock::new(),
            next_handle: AtomicU64::new(1),
            modules: RwLock::default(),
            globals: Mutex::default(),
            ipc_opened: Mutex::default(),
            event_pages: Mutex::default(),
            logs: Mutex::default(),
            log_gate: std::sync::RwLock::default(),
            log_streams: Mutex::default(),
            outputs: Mutex::default(),
            launch_watch: Default::default(),
            wait_kernels: Mutex::default(),
        })
    }

    /// Loads the driver and lists the devices of `selection` (every device when `None`), as
    /// (driver ordinal, device), or says why it cannot.
    fn open_driver(selection: Option<&DeviceSelection>) -> Result<Vec<(u32, CUdevice)>, BackendError> {
        // SAFETY: only checks whether libcuda can be dlopen'ed.
        if !unsafe { sys::is_culib_present() } {
            return Err(BackendError::NotInitialized("libcuda.so could not be loaded (no NVIDIA driver)".into()));
        }
        cudarc::driver::result::init().check("cuInit")?;
        let count = cudarc::driver::result::device::get_count().map_err(|e| error::map("cuDeviceGetCount", e))?;
        if count <= 0 {
            return Err(BackendError::NoDevice("the CUDA driver reports no device".into()));
        }
        let ordinals: Vec<u32> = match selection {
            Some(selection) => {
                selection.check(count as u32, "the CUDA driver").map_err(BackendError::InvalidDevice)?;
                selection.ordinals.clone()
            }
            None => (0..count as u32).collect(),
        };
        ordinals
            .into_iter()
            .map(|ordinal| cudarc::driver::result::device::get(ordinal as i32).map(|dev| (ordinal, dev)).map_err(|e| error::map("cuDeviceGet", e)))
            .collect()
    }

    /// The properties of the devices of `selection`, read without creating a context (the
    /// worker's view when each session has a process and contexts of its own): the driver
    /// stays loaded and initialised in the calling process, holding no device memory.
    pub fn probe(selection: Option<&DeviceSelection>) -> Result<Vec<DeviceProperties>, BackendError> {
        Self::open_driver(selection)?.into_iter().map(|(_, dev)| props::read(dev)).collect()
    }

    fn device(&self, dev: DeviceIndex) -> Result<&Device, BackendError> {
        self.devices
            .get(dev as usize)
            .ok_or_else(|| BackendError::InvalidDevice(format!("device {dev} out of range ({} CUDA devices)", self.devices.len())))
    }

    /// Makes `dev`'s context current on this thread; no driver call when it already is
    /// (the launch path enters on every launch).
    fn enter(&self, dev: DeviceIndex) -> Result<(), BackendError> {
        let d = self.device(dev)?;
        let wanted = (self.instance, d.ctx.0 as usize);
        if CURRENT_CONTEXT.with(|c| c.get()) == wanted {
            return Ok(());
        }
        // SAFETY: a retained primary context.
        unsafe { cudarc::driver::result::ctx::set_current(d.ctx.0) }.check("cuCtxSetCurrent")?;
        CURRENT_CONTEXT.with(|c| c.set(wanted));
        Ok(())
    }

    /// The device owning `ptr` (the session validated it already; this guards the backend).
    fn device_of(&self, ptr: DevicePtr) -> Result<DeviceIndex, BackendError> {
        let inside = |(base, (size, _)): &(&u64, &(u64, DeviceIndex))| ptr.0 >= **base && ptr.0 - **base < (*size).max(1);
        let found = lock(&self.allocations).iter().find(inside).map(|(_, (_, d))| *d);
        found
            .or_else(|| lock(&self.globals).iter().find(inside).map(|(_, (_, d))| *d))
            .ok_or_else(|| BackendError::InvalidDevicePointer(format!("{ptr} is not a live CUDA allocation")))
    }

    /// Resolves a stream (None = legacy null stream of `dev`) and enters its device.
    fn stream(&self, stream: Option<StreamHandle>, dev: DeviceIndex) -> Result<CUstream, BackendError> {
        match stream {
            None => {
                self.enter(dev)?;
                Ok(std::ptr::null_mut())
            }
            Some(s) => Ok(self.stream_on_device(s)?.0),
        }
    }

    /// The device `stream` runs on (None = the null stream of `dev`).
    fn stream_device(&self, stream: Option<StreamHandle>, dev: DeviceIndex) -> Result<DeviceIndex, BackendError> {
        let Some(s) = stream else { return Ok(dev) };
        let streams = read(&self.streams);
        streams.get(&s.as_raw()).map(|e| e.device).ok_or_else(|| BackendError::InvalidHandle(format!("stream {:#x}", s.as_raw())))
    }

    /// Resolves a created stream to its handle and device, and enters the device.
    fn stream_on_device(&self, s: StreamHandle) -> Result<(CUstream, DeviceIndex), BackendError> {
        let (raw, device) = {
            let streams = read(&self.streams);
            let e = streams.get(&s.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("stream {:#x}", s.as_raw())))?;
            (e.raw, e.device)
        };
        self.enter(device)?;
        Ok((raw.0, device))
    }

    fn alloc_staging(&self, reserved: bool) -> Result<Pinned, BackendError> {
        let mut ptr = std::ptr::null_mut();
        // SAFETY: valid out-pointer; freed in `Drop` or when the pool is full.
        unsafe { sys::cuMemAllocHost_v2(&mut ptr, STAGING_BYTES) }.check("cuMemAllocHost")?;
        Ok(Pinned { ptr: Raw(ptr.cast()), len: STAGING_BYTES, reserved })
    }

    fn take_staging(&self) -> Result<Pinned, BackendError> {
        if let Some(p) = lock(&self.reserved).pop() {
            return Ok(p);
        }
        if let Some(p) = lock(&self.staging).pop() {
            return Ok(p);
        }
        self.alloc_staging(false)
    }

    /// Returns a buffer from a stream host function, where no CUDA call is allowed: it always
    /// goes back to its pool (bounded by the copies in flight).
    fn return_staging_from_host_fn(&self, p: Pinned) {
        if p.reserved {
            lock(&self.reserved).push(p);
        } else {
            lock(&self.staging).push(p);
        }
    }

    fn return_staging(&self, p: Pinned) {
        if p.reserved {
            lock(&self.reserved).push(p);
            return;
        }
        let mut pool = lock(&self.staging);
        if pool.len() < STAGING_POOL_MAX {
            pool.push(p);
        } else {
            // SAFETY: a pinned allocation we own, not in use.
            let _ = unsafe { sys::cuMemFreeHost(p.ptr.0.cast()) };
        }
    }

    fn handle(&self) -> u64 {
        self.next_handle.fetch_add(1, Ordering::Relaxed)
    }

    /// Runs `copy` on `stream` and waits for it (and the stream's earlier work).
    ///
    /// # Safety
    /// The copy's host and device ranges must be valid until this returns.
    unsafe fn copy_2d_blocking(&self, copy: &sys::CUDA_MEMCPY2D, stream: CUstream) -> Result<(), BackendError> {
        // SAFETY: the ranges stay valid until this returns (caller contract), after the copy.
        unsafe { result::mem::copy_2d_async(copy, stream) }?;
        Ok(result::stream::synchronize(stream)?)
    }

    fn launch_host(&self, stream: CUstream, f: HostFn) -> Result<(), BackendError> {
        unsafe extern "C" fn trampoline(user: *mut c_void) {
            // SAFETY: `user` is the Box leaked below, called exactly once by the driver.
            let f = unsafe { Box::from_raw(user as *mut HostFn) };
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        }
        let user = Box::into_raw(Box::new(f));
        // SAFETY: `stream` is live in the current context; the trampoline frees `user`.
        let r = unsafe { sys::cuLaunchHostFunc(stream, Some(trampoline), user.cast()) }.check("cuLaunchHostFunc");
        if r.is_err() {
            // SAFETY: the driver did not take it; reclaim.
            drop(unsafe { Box::from_raw(user) });
        }
        r
    }
}

impl Drop for CudaBackend {
    fn drop(&mut self) {
        let reserved = std::mem::take(&mut *lock(&self.reserved));
        for p in lock(&self.staging).drain(..).chain(reserved) {
            // SAFETY: pool buffers are owned and idle.
            let _ = unsafe { sys::cuMemFreeHost(p.ptr.0.cast()) };
        }
        for (&device, s) in lock(&self.log_streams).iter() {
            if self.enter(device).is_ok() {
                // SAFETY: created by `log_stream`, idle between reads, destroyed once.
                let _ = unsafe { sys::cuStreamDestroy_v2(s.0) };
            }
        }
        self.unload_wait_kernels();
        for d in &self.devices {
            // SAFETY: retained in `new`.
            let _ = unsafe { cudarc::driver::result::primary_ctx::release(d.dev) };
        }
        forget_current_context();
    }
}

impl DeviceBackend for CudaBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn device_count(&self) -> Result<u32, BackendError> {
        Ok(self.devices.len() as u32)
    }

    fn device_properties(&self, dev: DeviceIndex) -> Result<DeviceProperties, BackendError> {
        Ok(self.device(dev)?.props.clone())
    }

    fn device_fault(&self, dev: DeviceIndex) -> Option<bool> {
        self.probe_fault(dev)
    }

    fn watch_launches(&self) -> bool {
        self.launch_watch.enable();
        true
    }

    fn overrun_devices(&self, limit: std::time::Duration) -> Vec<DeviceIndex> {
        self.launches_overrun(limit)
    }

    fn device_synchronize(&self, dev: DeviceIndex) -> Result<(), BackendError> {
        self.enter(dev)?;
        self.wait_for_device(dev, || cudarc::driver::result::ctx::synchronize().check("cuCtxSynchronize"))
    }

    fn device_limit(&self, dev: DeviceIndex, limit: DeviceLimit) -> Result<u64, BackendError> {
        self.enter(dev)?;
        let mut value = 0usize;
        let limit = cu_limit(limit)?;
        // SAFETY: valid out-pointer, the device's primary context current.
        unsafe { sys::cuCtxGetLimit(&mut value, limit) }.check("cuCtxGetLimit")?;
        Ok(value as u64)
    }

    /// With `--isolation shared` the primary context is shared by every session on the
    /// device, so a session's setting applies to the others' later launches too (each session
    /// still reads back its own); a session process has the context to itself.
    fn set_device_limit(&self, dev: DeviceIndex, limit: DeviceLimit, value: u64) -> Result<u64, BackendError> {
        let value = usize::try_from(value).map_err(|_| BackendError::InvalidValue(format!("limit value {value} does not fit usize")))?;
        self.enter(dev)?;
        let cu = cu_limit(limit)?;
        // SAFETY: the device's primary context current.
        unsafe { sys::cuCtxSetLimit(cu, value) }.check("cuCtxSetLimit")?;
        // The driver may round (the stack size to its granularity): report what it applied.
        self.device_limit(dev, limit)
    }

    fn can_access_peer(&self, dev: DeviceIndex, peer: DeviceIndex) -> Result<bool, BackendError> {
        let (d, p) = (self.device(dev)?.dev, self.device(peer)?.dev);
        Ok(result::peer::can_access(d, p)?)
    }

    fn enable_peer_access(&self, dev: DeviceIndex, peer: DeviceIndex) -> Result<(), BackendError> {
        let peer_ctx = self.device(peer)?.ctx.0;
        self.enter(dev)?;
        match result::peer::enable(peer_ctx) {
            // Another session enabled the pair first: the mapping is shared.
            Err(e) if e.code() == sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => Ok(()),
            other => Ok(other?),
        }
    }
}

impl TransportHooks for CudaBackend {
    /// `cuMemHostRegister` (portable: every context's copies take the one-DMA path; device
    /// mapped: `hipHostGetDevicePointer`-style access works as for `cuMemHostAlloc` memory).
    fn register_host_memory(&self, addr: usize, len: usize) -> Result<(), BackendError> {
        self.enter(0)?;
        let flags = sys::CU_MEMHOSTREGISTER_PORTABLE | sys::CU_MEMHOSTREGISTER_DEVICEMAP;
        // SAFETY: `[addr, addr + len)` is a live shared mapping of the caller's, page-aligned,
        // unregistered before it is unmapped.
        Ok(unsafe { result::host::register(addr as *mut c_void, len, flags) }?)
    }

    fn unregister_host_memory(&self, addr: usize) -> Result<(), BackendError> {
        self.enter(0)?;
        // `addr` is the start of a range registered by `register_host_memory`.
        Ok(result::host::unregister(addr as *mut c_void)?)
    }

    fn staging_buffers(&self) -> Vec<(usize, usize)> {
        self.reserved_ranges
            .get_or_init(|| {
                let mut ranges = Vec::new();
                if let Err(e) = self.enter(0) {
                    tracing::warn!(%e, "no context to reserve pinned staging buffers in");
                    return ranges;
                }
                let mut idle = lock(&self.reserved);
                for _ in 0..STAGING_RESERVED {
                    match self.alloc_staging(true) {
                        Ok(p) => {
                            ranges.push((p.ptr.0 as usize, p.len));
                            idle.push(p);
                        }
                        Err(e) => {
                            tracing::warn!(%e, "reserving pinned staging buffers failed; staged copies register per transfer");
                            break;
                        }
                    }
                }
                ranges
            })
            .clone()
    }

    fn export_dmabuf_fd(&self, ptr: DevicePtr, len: u64) -> Result<(std::os::fd::OwnedFd, u64), BackendError> {
        use std::os::fd::FromRawFd;
        // The driver exports whole host pages: the page-aligned cover of the range.
        const PAGE: u64 = 4096;
        let start = ptr.0 & !(PAGE - 1);
        let end = ptr
            .0
            .checked_add(len)
            .and_then(|e| e.checked_next_multiple_of(PAGE))
            .ok_or_else(|| BackendError::InvalidValue("range overflows".into()))?;
        let fd = self.export_dmabuf(DevicePtr(start), end - start)?;
        // SAFETY: the driver returned a new dma-buf fd that nothing else owns.
        Ok((unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) }, ptr.0 - start))
    }
}

/// GPUDirect RDMA registration hook: a dmabuf file descriptor for a device range, which
/// `ibv_reg_dmabuf_mr` registers with the NIC so RDMA READ/WRITE reach GPU memory directly.
impl CudaBackend {
    /// Whether `dev` can export device memory as dmabuf (`CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED`).
    pub fn dmabuf_supported(&self, dev: DeviceIndex) -> Result<bool, BackendError> {
        let d = self.device(dev)?;
        let mut v = 0;
        // SAFETY: valid device and out-pointer.
        unsafe { sys::cuDeviceGetAttribute(&mut v, sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, d.dev) }
            .check("cuDeviceGetAttribute(DMA_BUF_SUPPORTED)")?;
        Ok(v != 0)
    }

    /// Exports `[ptr, ptr+len)` of a live allocation as a dmabuf fd (the caller closes it).
    /// `ptr` and `len` must be host-page aligned, as the driver requires.
    pub fn export_dmabuf(&self, ptr: DevicePtr, len: u64) -> Result<i32, BackendError> {
        let dev = self.device_of(ptr)?;
        self.enter(dev)?;
        let mut fd: i32 = -1;
        // SAFETY: a live allocation range of the current context; `fd` receives an int.
        unsafe {
            sys::cuMemGetHandleForAddressRange(
                (&mut fd as *mut i32).cast(),
                ptr.0,
                len as usize,
                sys::CUmemRangeHandleType::CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
                0,
            )
        }
        .check("cuMemGetHandleForAddressRange(DMA_BUF_FD)")?;
        Ok(fd)
    }
}
