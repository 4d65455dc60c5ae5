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

mod error;
mod module;
mod props;
mod rtc;

use super::{
    validate_event_flags, Backend, BackendError, DeviceIndex, DeviceLimit, DeviceProperties, DevicePtr, DtohDone, EventHandle,
    FunctionAttribute, FunctionAttributes, FunctionHandle, HostData, HostFn, KernelFunction, LaunchConfig, MemInfo, MemsetPattern,
    ModuleFormat, ModuleHandle, Pitched, RtcOutput, RtcRequest, Rows, StreamHandle,
};
use cudarc::driver::sys::{self, CUcontext, CUdevice, CUevent, CUstream};
use error::Check;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Size of one pinned staging buffer (the client's copy chunk size).
pub const STAGING_BYTES: usize = proto_core::limits::DEFAULT_COPY_CHUNK;
/// The driver's number for a limit.
fn cu_limit(limit: DeviceLimit) -> sys::CUlimit {
    match limit {
        DeviceLimit::StackSize => sys::CUlimit::CU_LIMIT_STACK_SIZE,
        DeviceLimit::PrintfFifoSize => sys::CUlimit::CU_LIMIT_PRINTF_FIFO_SIZE,
        DeviceLimit::MallocHeapSize => sys::CUlimit::CU_LIMIT_MALLOC_HEAP_SIZE,
    }
}

/// Pinned staging buffers kept for reuse.
pub const STAGING_POOL_MAX: usize = 16;
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
}

struct EventEntry {
    raw: Raw<CUevent>,
    device: DeviceIndex,
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
    devices: Vec<Device>,
    streams: Mutex<HashMap<u64, StreamEntry>>,
    events: Mutex<HashMap<u64, EventEntry>>,
    allocations: Mutex<HashMap<u64, (u64, DeviceIndex)>>,
    /// The allocations of `allocations` made by `cuMemAllocAsync` (pool memory).
    pool_allocations: Mutex<std::collections::HashSet<u64>>,
    staging: Mutex<Vec<Pinned>>,
    /// Idle reserved staging buffers.
    reserved: Mutex<Vec<Pinned>>,
    /// Every reserved staging buffer, (address, length); allocated on first request.
    reserved_ranges: std::sync::OnceLock<Vec<(usize, usize)>>,
    next_handle: AtomicU64,
    modules: Mutex<module::ModuleTables>,
    /// Module globals: device memory for copies, never freeable.
    globals: Mutex<HashMap<u64, (u64, DeviceIndex)>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl CudaBackend {
    /// Loads the driver and opens every device, or says why it cannot.
    pub fn new() -> Result<Self, BackendError> {
        // SAFETY: only checks whether libcuda can be dlopen'ed.
        if !unsafe { sys::is_culib_present() } {
            return Err(BackendError::NotInitialized("libcuda.so could not be loaded (no NVIDIA driver)".into()));
        }
        cudarc::driver::result::init().check("cuInit")?;
        let count = cudarc::driver::result::device::get_count().map_err(|e| error::map("cuDeviceGetCount", e))?;
        if count <= 0 {
            return Err(BackendError::NoDevice("the CUDA driver reports no device".into()));
        }
        let mut devices = Vec::new();
        for ordinal in 0..count {
            let dev = cudarc::driver::result::device::get(ordinal).map_err(|e| error::map("cuDeviceGet", e))?;
            // SAFETY: `dev` is a valid device; the primary context is released in Drop.
            let ctx = unsafe { cudarc::driver::result::primary_ctx::retain(dev) }.map_err(|e| error::map("cuDevicePrimaryCtxRetain", e))?;
            // SAFETY: a context just retained.
            unsafe { cudarc::driver::result::ctx::set_current(ctx) }.check("cuCtxSetCurrent")?;
            let props = props::read(dev)?;
            tracing::info!(ordinal, name = %props.name, arch = %props.gcn_arch_name, "CUDA device opened");
            devices.push(Device { dev, ctx: Raw(ctx), props });
        }
        Ok(Self {
            devices,
            streams: Mutex::default(),
            events: Mutex::default(),
            allocations: Mutex::default(),
            pool_allocations: Mutex::default(),
            staging: Mutex::default(),
            reserved: Mutex::default(),
            reserved_ranges: std::sync::OnceLock::new(),
            next_handle: AtomicU64::new(1),
            modules: Mutex::default(),
            globals: Mutex::default(),
        })
    }

    fn device(&self, dev: DeviceIndex) -> Result<&Device, BackendError> {
        self.devices
            .get(dev as usize)
            .ok_or_else(|| BackendError::InvalidDevice(format!("device {dev} out of range ({} CUDA devices)", self.devices.len())))
    }

    /// Makes `dev`'s context current on this thread.
    fn enter(&self, dev: DeviceIndex) -> Result<(), BackendError> {
        let d = self.device(dev)?;
        // SAFETY: a retained primary context.
        unsafe { cudarc::driver::result::ctx::set_current(d.ctx.0) }.check("cuCtxSetCurrent")
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
            Some(s) => {
                let (raw, device) = {
                    let streams = lock(&self.streams);
                    let e = streams.get(&s.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("stream {:#x}", s.as_raw())))?;
                    (e.raw, e.device)
                };
                self.enter(device)?;
                Ok(raw.0)
            }
        }
    }

    fn alloc_staging(reserved: bool) -> Result<Pinned, BackendError> {
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
        Self::alloc_staging(false)
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
        // SAFETY: ranges valid (caller contract); `stream` is live in the current context.
        unsafe { sys::cuMemcpy2DAsync_v2(copy, stream) }.check("cuMemcpy2DAsync")?;
        // SAFETY: as above.
        unsafe { sys::cuStreamSynchronize(stream) }.check("cuStreamSynchronize")
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

/// One side of a 2D copy: a host buffer or device memory, with its row pitch.
enum Side {
    Host(*mut c_void, usize),
    Device(u64, usize),
}

/// The `CUDA_MEMCPY2D` description of copying `height` rows of `width` bytes. Every field is
/// written out: `CUmemorytype` has no zero value, so an all-zero struct is not a valid one
/// (`mem::zeroed` of it panics, and the panic cannot unwind out of the driver-facing code:
/// it aborted the worker on the H100).
fn copy_2d(src: Side, dst: Side, width: usize, height: usize) -> sys::CUDA_MEMCPY2D {
    use sys::CUmemorytype::{CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST};
    let (src_type, src_host, src_device, src_pitch) = match src {
        Side::Host(ptr, pitch) => (CU_MEMORYTYPE_HOST, ptr as *const c_void, 0, pitch),
        Side::Device(ptr, pitch) => (CU_MEMORYTYPE_DEVICE, std::ptr::null(), ptr, pitch),
    };
    let (dst_type, dst_host, dst_device, dst_pitch) = match dst {
        Side::Host(ptr, pitch) => (CU_MEMORYTYPE_HOST, ptr, 0, pitch),
        Side::Device(ptr, pitch) => (CU_MEMORYTYPE_DEVICE, std::ptr::null_mut(), ptr, pitch),
    };
    sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: src_type,
        srcHost: src_host,
        srcDevice: src_device,
        srcArray: std::ptr::null_mut(),
        srcPitch: src_pitch,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: dst_type,
        dstHost: dst_host,
        dstDevice: dst_device,
        dstArray: std::ptr::null_mut(),
        dstPitch: dst_pitch,
        WidthInBytes: width,
        Height: height,
    }
}

impl Drop for CudaBackend {
    fn drop(&mut self) {
        let reserved = std::mem::take(&mut *lock(&self.reserved));
        for p in lock(&self.staging).drain(..).chain(reserved) {
            // SAFETY: pool buffers are owned and idle.
            let _ = unsafe { sys::cuMemFreeHost(p.ptr.0.cast()) };
        }
        for d in &self.devices {
            // SAFETY: retained in `new`.
            let _ = unsafe { cudarc::driver::result::primary_ctx::release(d.dev) };
        }
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        "cuda"
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
                    match Self::alloc_staging(true) {
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
        let end = ptr.0.checked_add(len).and_then(|e| e.checked_next_multiple_of(PAGE)).ok_or_else(|| BackendError::InvalidValue("range overflows".into()))?;
        let fd = self.export_dmabuf(DevicePtr(start), end - start)?;
        // SAFETY: the driver returned a new dma-buf fd that nothing else owns.
        Ok((unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) }, ptr.0 - start))
    }

    fn device_count(&self) -> Result<u32, BackendError> {
        Ok(self.devices.len() as u32)
    }

    fn device_properties(&self, dev: DeviceIndex) -> Result<DeviceProperties, BackendError> {
        Ok(self.device(dev)?.props.clone())
    }

    fn device_synchronize(&self, dev: DeviceIndex) -> Result<(), BackendError> {
        self.enter(dev)?;
        cudarc::driver::result::ctx::synchronize().check("cuCtxSynchronize")
    }

    fn mem_get_info(&self, dev: DeviceIndex) -> Result<MemInfo, BackendError> {
        self.enter(dev)?;
        let (free, total) = cudarc::driver::result::mem_get_info().map_err(|e| error::map("cuMemGetInfo", e))?;
        Ok(MemInfo { free: free as u64, total: total as u64 })
    }

    fn malloc(&self, dev: DeviceIndex, size: u64) -> Result<DevicePtr, BackendError> {
        if size == 0 {
            return Ok(DevicePtr::NULL);
        }
        self.enter(dev)?;
        let size_usize = usize::try_from(size).map_err(|_| BackendError::OutOfMemory(format!("{size} bytes")))?;
        let (free, _) = cudarc::driver::result::mem_get_info().map_err(|e| error::map("cuMemGetInfo", e))?;
        if size_usize > free {
            return Err(BackendError::OutOfMemory(format!("{size} bytes requested, {free} free on device {dev}")));
        }
        // SAFETY: context current; freed by `free`.
        let ptr = unsafe { cudarc::driver::result::malloc_sync(size_usize) }.map_err(|e| error::map("cuMemAlloc", e))?;
        lock(&self.allocations).insert(ptr, (size, dev));
        Ok(DevicePtr(ptr))
    }

    fn free(&self, ptr: DevicePtr) -> Result<(), BackendError> {
        if ptr.is_null() {
            return Ok(());
        }
        let (_, dev) = lock(&self.allocations)
            .remove(&ptr.0)
            .ok_or_else(|| BackendError::InvalidValue(format!("{ptr} is not the start of a CUDA allocation")))?;
        self.enter(dev)?;
        if lock(&self.pool_allocations).remove(&ptr.0) {
            // Pool memory goes back the way it came, on the legacy null stream (which waits
            // for the blocking streams), and is released before we return, like cuMemFree.
            // SAFETY: a live cuMemAllocAsync allocation, removed from the tables above; the
            // legacy null stream of the current context.
            return unsafe { sys::cuMemFreeAsync(ptr.0, std::ptr::null_mut()) }
                .check("cuMemFreeAsync")
                // SAFETY: the legacy null stream of the current context.
                .and_then(|_| unsafe { sys::cuStreamSynchronize(std::ptr::null_mut()) }.check("cuStreamSynchronize"));
        }
        // SAFETY: a live allocation from cuMemAlloc, removed from the table above.
        unsafe { cudarc::driver::result::free_sync(ptr.0) }.check("cuMemFree")
    }

    fn memcpy_htod(&self, stream: Option<StreamHandle>, dst: DevicePtr, data: HostData) -> Result<(), BackendError> {
        let dev = self.device_of(dst)?;
        let s = self.stream(stream, dev)?;
        // Stage through pinned buffers so the copy is truly asynchronous; each buffer goes
        // back to the pool from a host function once the stream has consumed it.
        for (i, chunk) in data.as_bytes().chunks(STAGING_BYTES).enumerate() {
            let mut pinned = self.take_staging()?;
            pinned.slice(chunk.len()).copy_from_slice(chunk);
            // SAFETY: destination validated by the session; source is pinned and stays alive
            // until the host function below returns it to the pool.
            unsafe { sys::cuMemcpyHtoDAsync_v2(dst.0 + (i * STAGING_BYTES) as u64, pinned.ptr.0.cast(), chunk.len(), s) }
                .check("cuMemcpyHtoDAsync")?;
            let pool: *const Self = self;
            let pool = Raw(pool);
            self.launch_host(
                s,
                Box::new(move || {
                    let pool = pool;
                    // SAFETY: the backend outlives every stream (streams are drained before
                    // it is dropped); no CUDA call is made here.
                    unsafe { &*pool.0 }.return_staging_from_host_fn(pinned);
                }),
            )?;
        }
        Ok(())
    }

    fn memcpy_htod_sync(&self, stream: Option<StreamHandle>, dst: DevicePtr, data: &[u8]) -> Result<(), BackendError> {
        let dev = self.device_of(dst)?;
        let s = self.stream(stream, dev)?;
        let mut pinned = self.take_staging()?;
        let result = (|| {
            for (i, chunk) in data.chunks(STAGING_BYTES).enumerate() {
                pinned.slice(chunk.len()).copy_from_slice(chunk);
                // SAFETY: validated destination; pinned source synchronised before reuse.
                unsafe { sys::cuMemcpyHtoDAsync_v2(dst.0 + (i * STAGING_BYTES) as u64, pinned.ptr.0.cast(), chunk.len(), s) }
                    .check("cuMemcpyHtoDAsync")?;
                // SAFETY: a live stream of the current context.
                unsafe { sys::cuStreamSynchronize(s) }.check("cuStreamSynchronize")?;
            }
            Ok(())
        })();
        self.return_staging(pinned);
        result
    }

    fn with_device_bytes_mut(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        len: u64,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), BackendError> {
        let len = usize::try_from(len).map_err(|_| BackendError::InvalidValue("copy too large".into()))?;
        if len > STAGING_BYTES {
            let mut staging = super::zeroed_buffer(len as u64)?;
            fill(&mut staging);
            return self.memcpy_htod_sync(stream, dst, &staging);
        }
        let dev = self.device_of(dst)?;
        let s = self.stream(stream, dev)?;
        let mut pinned = self.take_staging()?;
        // Double buffering: the socket is read straight into pinned memory, the DMA is
        // started and we return at once, so the next chunk is received while this one
        // travels; the buffer goes back to the pool when the stream has consumed it.
        fill(pinned.slice(len));
        // SAFETY: validated destination; the pinned source stays alive until the host
        // function below returns it to the pool.
        unsafe { sys::cuMemcpyHtoDAsync_v2(dst.0, pinned.ptr.0.cast(), len, s) }.check("cuMemcpyHtoDAsync")?;
        let pool = Raw(self as *const Self);
        self.launch_host(
            s,
            Box::new(move || {
                let pool = pool;
                // SAFETY: the backend outlives its streams; no CUDA call is made here.
                unsafe { &*pool.0 }.return_staging_from_host_fn(pinned);
            }),
        )
    }

    fn finish_device_writes(&self, stream: Option<StreamHandle>, near: DevicePtr) -> Result<(), BackendError> {
        let dev = self.device_of(near)?;
        let s = self.stream(stream, dev)?;
        // SAFETY: a live stream (or the legacy null stream) of the current context.
        unsafe { sys::cuStreamSynchronize(s) }.check("cuStreamSynchronize")
    }

    fn memcpy_dtoh(&self, stream: Option<StreamHandle>, src: DevicePtr, len: u64, done: DtohDone) -> Result<(), BackendError> {
        let dev = self.device_of(src)?;
        let s = self.stream(stream, dev)?;
        let len = usize::try_from(len).map_err(|_| BackendError::InvalidValue("copy too large".into()))?;
        if len > STAGING_BYTES || stream.is_none() {
            let mut out = super::zeroed_buffer(len as u64)?;
            self.memcpy_dtoh_sync(stream, src, &mut out)?;
            done(Ok(out));
            return Ok(());
        }
        let mut pinned = self.take_staging()?;
        // SAFETY: validated source; the pinned destination stays alive until the host
        // function below has copied it out and returned it to the pool.
        unsafe { sys::cuMemcpyDtoHAsync_v2(pinned.ptr.0.cast(), src.0, len, s) }.check("cuMemcpyDtoHAsync")?;
        let pool = Raw(self as *const Self);
        self.launch_host(
            s,
            Box::new(move || {
                let pool = pool;
                let bytes = pinned.slice(len).to_vec();
                // SAFETY: the backend outlives its streams; no CUDA call is made here.
                unsafe { &*pool.0 }.return_staging_from_host_fn(pinned);
                done(Ok(bytes));
            }),
        )
    }

    fn memcpy_dtoh_sync(&self, stream: Option<StreamHandle>, src: DevicePtr, out: &mut [u8]) -> Result<(), BackendError> {
        let dev = self.device_of(src)?;
        let s = self.stream(stream, dev)?;
        let mut pinned = self.take_staging()?;
        let result = (|| {
            for (i, chunk) in out.chunks_mut(STAGING_BYTES).enumerate() {
                // SAFETY: validated source; pinned destination synchronised before reading.
                unsafe { sys::cuMemcpyDtoHAsync_v2(pinned.ptr.0.cast(), src.0 + (i * STAGING_BYTES) as u64, chunk.len(), s) }
                    .check("cuMemcpyDtoHAsync")?;
                // SAFETY: a live stream of the current context.
                unsafe { sys::cuStreamSynchronize(s) }.check("cuStreamSynchronize")?;
                chunk.copy_from_slice(pinned.slice(chunk.len()));
            }
            Ok(())
        })();
        self.return_staging(pinned);
        result
    }

    fn with_device_bytes(&self, stream: Option<StreamHandle>, src: DevicePtr, len: u64, read: &mut dyn FnMut(&[u8])) -> Result<(), BackendError> {
        let len = usize::try_from(len).map_err(|_| BackendError::InvalidValue("copy too large".into()))?;
        if len > STAGING_BYTES {
            let mut out = super::zeroed_buffer(len as u64)?;
            self.memcpy_dtoh_sync(stream, src, &mut out)?;
            read(&out);
            return Ok(());
        }
        let dev = self.device_of(src)?;
        let s = self.stream(stream, dev)?;
        let mut pinned = self.take_staging()?;
        // SAFETY: validated source; synchronised before the bytes are read.
        let r = unsafe { sys::cuMemcpyDtoHAsync_v2(pinned.ptr.0.cast(), src.0, len, s) }
            .check("cuMemcpyDtoHAsync")
            // SAFETY: a live stream of the current context.
            .and_then(|_| unsafe { sys::cuStreamSynchronize(s) }.check("cuStreamSynchronize"));
        if r.is_ok() {
            // The bytes go from pinned memory straight to the socket.
            read(pinned.slice(len));
        }
        self.return_staging(pinned);
        r
    }

    fn memcpy_dtod(&self, stream: Option<StreamHandle>, dst: DevicePtr, src: DevicePtr, len: u64) -> Result<(), BackendError> {
        let dev = self.device_of(dst)?;
        self.device_of(src)?;
        let s = self.stream(stream, dev)?;
        // SAFETY: both ranges validated by the session against live allocations.
        unsafe { sys::cuMemcpyDtoDAsync_v2(dst.0, src.0, len as usize, s) }.check("cuMemcpyDtoDAsync")
    }

    fn memset(&self, stream: Option<StreamHandle>, dst: DevicePtr, pattern: MemsetPattern, count: u64) -> Result<(), BackendError> {
        let dev = self.device_of(dst)?;
        let s = self.stream(stream, dev)?;
        let n = count as usize;
        // SAFETY: the range was validated by the session.
        unsafe {
            match pattern {
                MemsetPattern::U8(v) => sys::cuMemsetD8Async(dst.0, v, n, s),
                MemsetPattern::U16(v) => sys::cuMemsetD16Async(dst.0, v, n, s),
                MemsetPattern::U32(v) => sys::cuMemsetD32Async(dst.0, v, n, s),
            }
        }
        .check("cuMemsetAsync")
    }

    fn memcpy_htod_2d(&self, stream: Option<StreamHandle>, dst: Pitched, width: u64, data: HostData) -> Result<(), BackendError> {
        let dev = self.device_of(dst.ptr)?;
        let s = self.stream(stream, dev)?;
        let width = usize::try_from(width).map_err(|_| BackendError::InvalidValue("row too wide".into()))?;
        if width == 0 {
            return Err(BackendError::InvalidValue("2D rows of 0 bytes".into()));
        }
        if width > STAGING_BYTES {
            // Rows wider than a staging buffer (the client sends those as 1D copies): copied
            // from the request's own bytes, which must then stay until the copy is done.
            let bytes = data.as_bytes();
            let copy = copy_2d(
                Side::Host(bytes.as_ptr().cast_mut().cast(), width),
                Side::Device(dst.ptr.0, dst.pitch as usize),
                width,
                bytes.len() / width,
            );
            // SAFETY: destination rows validated by the session; `data` outlives the copy,
            // which is complete when this returns.
            return unsafe { self.copy_2d_blocking(&copy, s) };
        }
        // Whole rows per pinned buffer; each buffer goes back to the pool from a host function
        // once the stream has consumed it, as in `memcpy_htod`.
        let rows_per_buffer = STAGING_BYTES / width;
        for (i, chunk) in data.as_bytes().chunks(rows_per_buffer * width).enumerate() {
            let mut pinned = self.take_staging()?;
            pinned.slice(chunk.len()).copy_from_slice(chunk);
            let first_row = (i * rows_per_buffer) as u64;
            let copy = copy_2d(
                Side::Host(pinned.ptr.0.cast(), width),
                Side::Device(dst.ptr.0 + first_row * dst.pitch, dst.pitch as usize),
                width,
                chunk.len() / width,
            );
            // SAFETY: destination rows validated by the session; the pinned source stays
            // alive until the host function below returns it to the pool.
            unsafe { sys::cuMemcpy2DAsync_v2(&copy, s) }.check("cuMemcpy2DAsync")?;
            let pool = Raw(self as *const Self);
            self.launch_host(
                s,
                Box::new(move || {
                    let pool = pool;
                    // SAFETY: the backend outlives its streams; no CUDA call is made here.
                    unsafe { &*pool.0 }.return_staging_from_host_fn(pinned);
                }),
            )?;
        }
        Ok(())
    }

    fn memcpy_dtoh_2d(&self, stream: Option<StreamHandle>, src: Pitched, rows: Rows, done: DtohDone) -> Result<(), BackendError> {
        let dev = self.device_of(src.ptr)?;
        let s = self.stream(stream, dev)?;
        let (width, height) = (rows.width as usize, rows.height as usize);
        let len = rows.packed_len().ok_or_else(|| BackendError::InvalidValue(format!("2D copy of {width}x{height} bytes overflows")))?;
        if len as usize > STAGING_BYTES {
            // More than a staging buffer (the client never asks for that): gathered straight
            // into a buffer of the reply, in order after the stream's earlier work.
            let mut out = super::zeroed_buffer(len)?;
            let copy = copy_2d(Side::Device(src.ptr.0, src.pitch as usize), Side::Host(out.as_mut_ptr().cast(), width), width, height);
            // SAFETY: source rows validated by the session; `out` holds `len` bytes and
            // outlives the copy, which is complete when this returns.
            unsafe { self.copy_2d_blocking(&copy, s) }?;
            done(Ok(out));
            return Ok(());
        }
        let len = len as usize;
        let mut pinned = self.take_staging()?;
        let copy = copy_2d(Side::Device(src.ptr.0, src.pitch as usize), Side::Host(pinned.ptr.0.cast(), width), width, height);
        // SAFETY: source rows validated by the session; the pinned destination stays alive
        // until it is read (below, or in the host function) and returned to the pool.
        if let Err(e) = unsafe { sys::cuMemcpy2DAsync_v2(&copy, s) }.check("cuMemcpy2DAsync") {
            self.return_staging(pinned);
            return Err(e);
        }
        if stream.is_none() {
            // Null stream: the copy is due now (as `memcpy_dtoh` does).
            // SAFETY: the legacy null stream of the current context.
            let r = unsafe { sys::cuStreamSynchronize(s) }.check("cuStreamSynchronize");
            let bytes = r.map(|_| pinned.slice(len).to_vec());
            self.return_staging(pinned);
            done(bytes);
            return Ok(());
        }
        let pool = Raw(self as *const Self);
        self.launch_host(
            s,
            Box::new(move || {
                let pool = pool;
                let bytes = pinned.slice(len).to_vec();
                // SAFETY: the backend outlives its streams; no CUDA call is made here.
                unsafe { &*pool.0 }.return_staging_from_host_fn(pinned);
                done(Ok(bytes));
            }),
        )
    }

    fn memcpy_dtod_2d(&self, stream: Option<StreamHandle>, dst: Pitched, src: Pitched, rows: Rows) -> Result<(), BackendError> {
        let dev = self.device_of(dst.ptr)?;
        self.device_of(src.ptr)?;
        let s = self.stream(stream, dev)?;
        let copy = copy_2d(
            Side::Device(src.ptr.0, src.pitch as usize),
            Side::Device(dst.ptr.0, dst.pitch as usize),
            rows.width as usize,
            rows.height as usize,
        );
        // SAFETY: both row sets validated by the session against live allocations.
        unsafe { sys::cuMemcpy2DAsync_v2(&copy, s) }.check("cuMemcpy2DAsync")
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
        let (dst_ctx, src_ctx) = (self.device(dst_dev)?.ctx.0, self.device(src_dev)?.ctx.0);
        // The null stream is the destination device's, as for other copies.
        let s = self.stream(stream, dst_dev)?;
        // SAFETY: both ranges validated by the session; the contexts are retained primary
        // contexts of the named devices.
        unsafe { sys::cuMemcpyPeerAsync(dst.0, dst_ctx, src.0, src_ctx, len as usize, s) }.check("cuMemcpyPeerAsync")
    }

    fn malloc_async(&self, stream: Option<StreamHandle>, dev: DeviceIndex, size: u64) -> Result<DevicePtr, BackendError> {
        if size == 0 {
            return Ok(DevicePtr::NULL);
        }
        let s = self.stream(stream, dev)?;
        let size_usize = usize::try_from(size).map_err(|_| BackendError::OutOfMemory(format!("{size} bytes")))?;
        let mut ptr = 0;
        // SAFETY: valid out-pointer; `s` is a live stream (or the null stream) of `dev`, whose
        // context is current; freed by `free_async` or `free`.
        unsafe { sys::cuMemAllocAsync(&mut ptr, size_usize, s) }.check("cuMemAllocAsync")?;
        lock(&self.allocations).insert(ptr, (size, dev));
        lock(&self.pool_allocations).insert(ptr);
        Ok(DevicePtr(ptr))
    }

    fn free_async(&self, stream: Option<StreamHandle>, ptr: DevicePtr) -> Result<(), BackendError> {
        let (_, dev) = *lock(&self.allocations)
            .get(&ptr.0)
            .ok_or_else(|| BackendError::InvalidValue(format!("{ptr} is not the start of a CUDA allocation")))?;
        let s = self.stream(stream, dev)?;
        // Out of the tables first: the address is invalid for new work from now on.
        lock(&self.allocations).remove(&ptr.0);
        if lock(&self.pool_allocations).remove(&ptr.0) {
            // SAFETY: a live cuMemAllocAsync allocation removed from the tables above; the
            // driver frees it once the stream's earlier work is done.
            return unsafe { sys::cuMemFreeAsync(ptr.0, s) }.check("cuMemFreeAsync");
        }
        // hipMalloc memory freed in stream order: wait for the stream, then free it plainly.
        // SAFETY: a live stream (or the legacy null stream) of the current context.
        unsafe { sys::cuStreamSynchronize(s) }.check("cuStreamSynchronize")?;
        // SAFETY: a live cuMemAlloc allocation removed from the table above, unused by the
        // stream's earlier work (drained above).
        unsafe { cudarc::driver::result::free_sync(ptr.0) }.check("cuMemFree")
    }

    fn stream_create(&self, dev: DeviceIndex, flags: u32, priority: i32) -> Result<StreamHandle, BackendError> {
        if flags & !super::stream_flags::SUPPORTED != 0 {
            return Err(BackendError::InvalidValue(format!("unknown stream flags {flags:#x}")));
        }
        self.enter(dev)?;
        let (least, greatest) = self.stream_priority_range(dev)?;
        let priority = priority.clamp(greatest.min(least), greatest.max(least));
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid out-pointer, context current.
        unsafe { sys::cuStreamCreateWithPriority(&mut raw, flags, priority) }.check("cuStreamCreateWithPriority")?;
        let id = self.handle();
        lock(&self.streams).insert(id, StreamEntry { raw: Raw(raw), device: dev });
        Ok(StreamHandle::from_raw(id))
    }

    fn stream_destroy(&self, stream: StreamHandle) -> Result<(), BackendError> {
        let entry = lock(&self.streams)
            .remove(&stream.as_raw())
            .ok_or_else(|| BackendError::InvalidHandle(format!("stream {:#x}", stream.as_raw())))?;
        self.enter(entry.device)?;
        // Drain first so host functions referencing this backend finish.
        // SAFETY: a live stream we own.
        let sync = unsafe { sys::cuStreamSynchronize(entry.raw.0) }.check("cuStreamSynchronize");
        // SAFETY: removed from the table; destroyed once.
        unsafe { sys::cuStreamDestroy_v2(entry.raw.0) }.check("cuStreamDestroy")?;
        sync
    }

    fn stream_synchronize(&self, stream: StreamHandle) -> Result<(), BackendError> {
        let s = self.stream(Some(stream), 0)?;
        // SAFETY: a live stream, context entered.
        unsafe { sys::cuStreamSynchronize(s) }.check("cuStreamSynchronize")
    }

    fn stream_query(&self, stream: StreamHandle) -> Result<bool, BackendError> {
        let s = self.stream(Some(stream), 0)?;
        // SAFETY: a live stream, context entered.
        match unsafe { sys::cuStreamQuery(s) }.check("cuStreamQuery") {
            Ok(()) => Ok(true),
            Err(BackendError::NotReady(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn stream_wait_event(&self, stream: Option<StreamHandle>, event: EventHandle) -> Result<(), BackendError> {
        let (raw, device, recorded) = {
            let events = lock(&self.events);
            let e = events.get(&event.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("event {:#x}", event.as_raw())))?;
            (e.raw, e.device, e.recorded)
        };
        if !recorded {
            return Ok(());
        }
        let s = self.stream(stream, device)?;
        // SAFETY: live stream and event.
        unsafe { sys::cuStreamWaitEvent(s, raw.0, 0) }.check("cuStreamWaitEvent")
    }

    fn device_limit(&self, dev: DeviceIndex, limit: DeviceLimit) -> Result<u64, BackendError> {
        self.enter(dev)?;
        let mut value = 0usize;
        // SAFETY: valid out-pointer, the device's primary context current.
        unsafe { sys::cuCtxGetLimit(&mut value, cu_limit(limit)) }.check("cuCtxGetLimit")?;
        Ok(value as u64)
    }

    /// The primary context is shared by every session on the device, so a session's setting
    /// applies to the others' later launches too (each session still reads back its own).
    fn set_device_limit(&self, dev: DeviceIndex, limit: DeviceLimit, value: u64) -> Result<u64, BackendError> {
        let value = usize::try_from(value).map_err(|_| BackendError::InvalidValue(format!("limit value {value} does not fit usize")))?;
        self.enter(dev)?;
        // SAFETY: the device's primary context current.
        unsafe { sys::cuCtxSetLimit(cu_limit(limit), value) }.check("cuCtxSetLimit")?;
        // The driver may round (the stack size to its granularity): report what it applied.
        self.device_limit(dev, limit)
    }

    fn can_access_peer(&self, dev: DeviceIndex, peer: DeviceIndex) -> Result<bool, BackendError> {
        let (d, p) = (self.device(dev)?.dev, self.device(peer)?.dev);
        let mut can = 0;
        // SAFETY: two valid device ordinals; valid out-pointer.
        unsafe { sys::cuDeviceCanAccessPeer(&mut can, d, p) }.check("cuDeviceCanAccessPeer")?;
        Ok(can != 0)
    }

    fn stream_priority_range(&self, dev: DeviceIndex) -> Result<(i32, i32), BackendError> {
        self.enter(dev)?;
        let (mut least, mut greatest) = (0, 0);
        // SAFETY: valid out-pointers, context current.
        unsafe { sys::cuCtxGetStreamPriorityRange(&mut least, &mut greatest) }.check("cuCtxGetStreamPriorityRange")?;
        Ok((least, greatest))
    }

    fn stream_info(&self, stream: StreamHandle) -> Result<(u32, i32), BackendError> {
        let s = self.stream(Some(stream), 0)?;
        let (mut flags, mut priority) = (0, 0);
        // SAFETY: a live stream, context entered; valid out-pointers.
        unsafe { sys::cuStreamGetFlags(s, &mut flags) }.check("cuStreamGetFlags")?;
        // SAFETY: as above.
        unsafe { sys::cuStreamGetPriority(s, &mut priority) }.check("cuStreamGetPriority")?;
        Ok((flags, priority))
    }

    fn launch_host_func(&self, stream: StreamHandle, f: HostFn) -> Result<(), BackendError> {
        let s = self.stream(Some(stream), 0)?;
        self.launch_host(s, f)
    }

    fn event_create(&self, dev: DeviceIndex, flags: u32) -> Result<EventHandle, BackendError> {
        validate_event_flags(flags)?;
        self.enter(dev)?;
        let timing = flags & super::event_flags::DISABLE_TIMING == 0;
        let cu_flags = flags & (super::event_flags::BLOCKING_SYNC | super::event_flags::DISABLE_TIMING | super::event_flags::INTERPROCESS);
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid out-pointer, context current; flag bits equal CUDA's.
        unsafe { sys::cuEventCreate(&mut raw, cu_flags) }.check("cuEventCreate")?;
        let id = self.handle();
        lock(&self.events).insert(id, EventEntry { raw: Raw(raw), device: dev, timing, recorded: false });
        Ok(EventHandle::from_raw(id))
    }

    fn event_destroy(&self, event: EventHandle) -> Result<(), BackendError> {
        let e = lock(&self.events)
            .remove(&event.as_raw())
            .ok_or_else(|| BackendError::InvalidHandle(format!("event {:#x}", event.as_raw())))?;
        self.enter(e.device)?;
        // SAFETY: removed from the table; destroyed once.
        unsafe { sys::cuEventDestroy_v2(e.raw.0) }.check("cuEventDestroy")
    }

    fn event_record(&self, event: EventHandle, stream: Option<StreamHandle>) -> Result<(), BackendError> {
        let (raw, device) = {
            let events = lock(&self.events);
            let e = events.get(&event.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("event {:#x}", event.as_raw())))?;
            (e.raw, e.device)
        };
        let s = self.stream(stream, device)?;
        // SAFETY: live event and stream.
        unsafe { sys::cuEventRecord(raw.0, s) }.check("cuEventRecord")?;
        if let Some(e) = lock(&self.events).get_mut(&event.as_raw()) {
            e.recorded = true;
        }
        Ok(())
    }

    fn event_synchronize(&self, event: EventHandle) -> Result<(), BackendError> {
        let (raw, device, recorded) = self.event_entry(event)?;
        if !recorded {
            return Ok(());
        }
        self.enter(device)?;
        // SAFETY: a live event.
        unsafe { sys::cuEventSynchronize(raw.0) }.check("cuEventSynchronize")
    }

    fn event_query(&self, event: EventHandle) -> Result<bool, BackendError> {
        let (raw, device, recorded) = self.event_entry(event)?;
        if !recorded {
            return Ok(true);
        }
        self.enter(device)?;
        // SAFETY: a live event.
        match unsafe { sys::cuEventQuery(raw.0) }.check("cuEventQuery") {
            Ok(()) => Ok(true),
            Err(BackendError::NotReady(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn event_elapsed_ms(&self, start: EventHandle, end: EventHandle) -> Result<f32, BackendError> {
        let timing = |h: EventHandle| -> Result<(Raw<CUevent>, DeviceIndex), BackendError> {
            let events = lock(&self.events);
            let e = events.get(&h.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("event {:#x}", h.as_raw())))?;
            if !e.timing || !e.recorded {
                return Err(BackendError::InvalidHandle("event not recorded or created with hipEventDisableTiming".into()));
            }
            Ok((e.raw, e.device))
        };
        let (a, dev) = timing(start)?;
        let (b, _) = timing(end)?;
        self.enter(dev)?;
        // SAFETY: both live, recorded timing events.
        unsafe { cudarc::driver::result::event::elapsed(a.0, b.0) }.map_err(|e| error::map("cuEventElapsedTime", e))
    }

    fn module_load(&self, dev: DeviceIndex, format: ModuleFormat, image: &[u8]) -> Result<ModuleHandle, BackendError> {
        self.do_module_load(dev, format, image)
    }

    fn module_unload(&self, module: ModuleHandle) -> Result<(), BackendError> {
        self.do_module_unload(module)
    }

    fn module_function(&self, module: ModuleHandle, name: &str) -> Result<KernelFunction, BackendError> {
        self.do_module_function(module, name)
    }

    fn module_global(&self, module: ModuleHandle, name: &str) -> Result<(DevicePtr, u64), BackendError> {
        self.do_module_global(module, name)
    }

    fn function_attributes(&self, function: FunctionHandle) -> Result<FunctionAttributes, BackendError> {
        self.do_function_attributes(function)
    }

    fn function_set_attribute(&self, function: FunctionHandle, attribute: FunctionAttribute, value: i32) -> Result<(), BackendError> {
        self.do_function_set_attribute(function, attribute, value)
    }

    fn launch_kernel(&self, stream: Option<StreamHandle>, function: FunctionHandle, config: LaunchConfig, args: Vec<u8>) -> Result<(), BackendError> {
        self.do_launch(stream, function, config, args)
    }

    fn occupancy_max_active_blocks(&self, function: FunctionHandle, block_size: u32, dynamic_shared: u64) -> Result<u32, BackendError> {
        self.do_occupancy_blocks(function, block_size, dynamic_shared)
    }

    fn occupancy_max_potential_block_size(&self, function: FunctionHandle, dynamic_shared: u64, block_size_limit: u32) -> Result<(u32, u32), BackendError> {
        self.do_occupancy_block_size(function, dynamic_shared, block_size_limit)
    }

    fn rtc_compile(&self, dev: DeviceIndex, request: &RtcRequest<'_>) -> Result<RtcOutput, BackendError> {
        self.do_rtc_compile(dev, request)
    }
}

impl CudaBackend {
    fn event_entry(&self, event: EventHandle) -> Result<(Raw<CUevent>, DeviceIndex, bool), BackendError> {
        let events = lock(&self.events);
        let e = events.get(&event.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("event {:#x}", event.as_raw())))?;
        Ok((e.raw, e.device, e.recorded))
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
