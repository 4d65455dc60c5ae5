//! The hip backend's result layer: one safe function per HIP runtime entry point the backend
//! calls (over the tables of `api.rs`), each answering `Result` with the runtime's own error
//! ([`HipCallError`]: the entry point and its `hipError_t`), as cudarc's `driver::result` does
//! for CUDA. An optional entry point the loaded runtime lacks answers
//! `hipErrorNotSupported`, naming it. Families above this file call no raw FFI.
//!
//! Contract of every function: handles (streams, pools) are live ones the backend created or
//! obtained and has not released — its tables guarantee it, and a stale handle is a bug there,
//! not a value the runtime is asked to judge; device addresses are any values (the runtime
//! checks them and answers an error); host memory is passed as Rust references, so what the
//! runtime writes is memory of the right type and size.

use super::api::{Event, Function, Graph, GraphExec, GraphNode, HipApi, HipError, LinkState as LinkStateHandle, Module, Program, RtcApi, Stream};
use super::array::{Array3DDescriptor, Memcpy3D};
use super::graph::{KernelNodeParams, MemsetParams};
use super::ipc::{IpcHandle, HANDLE_TYPE_POSIX_FD};
use super::vmm::{MemAccessDesc, MemAllocationProp, MemLocation, LOCATION_TYPE_DEVICE};
use crate::backend::{hip_code, BackendError, LaunchConfig, ParamLayout, ResourceDesc, ResourceViewDesc, TextureDesc};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// A failed runtime call: which entry point, and the `hipError_t` it answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HipCallError {
    /// The entry point that failed.
    pub call: &'static str,
    /// The runtime's `hipError_t` (`hipErrorNotSupported` where the entry point is missing).
    pub code: HipError,
    /// The loaded runtime lacks the entry point (an optional one).
    pub missing: bool,
}

impl From<HipCallError> for BackendError {
    fn from(e: HipCallError) -> Self {
        if e.missing {
            return BackendError::NotSupported(format!("the HIP runtime lacks {}", e.call));
        }
        super::error::map(e.call, e.code)
    }
}

impl std::fmt::Display for HipCallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.call, proto_core::hip_error::name(self.code).to_string_lossy())
    }
}

/// `hipError_t` → `Result`, naming the entry point.
fn check(call: &'static str, code: HipError) -> Result<(), HipCallError> {
    if code == 0 {
        Ok(())
    } else {
        Err(HipCallError { call, code, missing: false })
    }
}

/// An optional entry point the runtime lacks.
fn missing(call: &'static str) -> HipCallError {
    HipCallError { call, code: hip_code::NOT_SUPPORTED, missing: true }
}

/// `hipMemcpyKind` values.
const MEMCPY_HOST_TO_DEVICE: c_int = 1;
const MEMCPY_DEVICE_TO_HOST: c_int = 2;
const MEMCPY_DEVICE_TO_DEVICE: c_int = 3;

/// `HIP_LAUNCH_PARAM_BUFFER_POINTER`, `_SIZE`, `_END`: the markers of `extra`.
const LAUNCH_PARAM_BUFFER_POINTER: usize = 1;
const LAUNCH_PARAM_BUFFER_SIZE: usize = 2;
const LAUNCH_PARAM_END: usize = 3;

/// `extra` for `hipModuleLaunchKernel` / kernel nodes: the packed blob `args` (of `*size`
/// bytes, `size` kept alive by the caller), read by the runtime during the call only.
fn packed_extra(args: &[u8], size: &mut usize) -> [*mut c_void; 5] {
    *size = args.len();
    [
        LAUNCH_PARAM_BUFFER_POINTER as *mut c_void,
        // The runtime only reads the blob (HIP's `extra` array is not const-qualified).
        args.as_ptr().cast_mut().cast(),
        LAUNCH_PARAM_BUFFER_SIZE as *mut c_void,
        (size as *mut usize).cast(),
        LAUNCH_PARAM_END as *mut c_void,
    ]
}

/// A list the runtime reports, or how many items it has where that is more than asked for.
pub enum Bounded<T> {
    /// All the items.
    Within(Vec<T>),
    /// The count the runtime reported, above the limit.
    TooMany(u32),
}

/// `hipMemPool_t`.
pub type MemPool = *mut c_void;

impl HipApi {
    // ---- devices ------------------------------------------------------------------------------

    /// `hipDeviceGetAttribute` of an attribute that writes one `int` (callers keep out the
    /// ones ROCm writes wider values through).
    pub fn device_attribute(&self, attribute: c_int, dev: c_int) -> Result<c_int, HipCallError> {
        let mut value = 0;
        // SAFETY: a valid out-pointer; the runtime checks ordinal and attribute.
        check("hipDeviceGetAttribute", unsafe { (self.hipDeviceGetAttribute)(&mut value, attribute, dev) })?;
        Ok(value)
    }

    /// `hipDeviceGetUuid`.
    pub fn device_uuid(&self, dev: c_int) -> Result<[u8; 16], HipCallError> {
        let mut uuid = [0u8; 16];
        // SAFETY: `hipUUID` is 16 bytes; the runtime checks the ordinal.
        check("hipDeviceGetUuid", unsafe { (self.hipDeviceGetUuid)(&mut uuid, dev) })?;
        Ok(uuid)
    }

    /// `hipDeviceGetP2PAttribute` of `dev` towards `peer`.
    pub fn device_p2p_attribute(&self, attribute: c_int, dev: c_int, peer: c_int) -> Result<c_int, HipCallError> {
        let mut v = 0;
        // SAFETY: a valid out-pointer; the runtime checks the ordinals.
        check("hipDeviceGetP2PAttribute", unsafe { (self.hipDeviceGetP2PAttribute)(&mut v, attribute, dev, peer) })?;
        Ok(v)
    }

    /// `hipExtGetLinkTypeAndHopCount`: (link type, hops).
    pub fn link_type_and_hop_count(&self, dev: c_int, peer: c_int) -> Result<(u32, u32), HipCallError> {
        let (mut link_type, mut hops) = (0, 0);
        // SAFETY: valid out-pointers; the runtime checks the ordinals.
        check("hipExtGetLinkTypeAndHopCount", unsafe { (self.hipExtGetLinkTypeAndHopCount)(dev, peer, &mut link_type, &mut hops) })?;
        Ok((link_type, hops))
    }

    // ---- peers ----------------------------------------------------------------------------

    /// `hipDeviceCanAccessPeer`.
    pub fn device_can_access_peer(&self, dev: c_int, peer: c_int) -> Result<bool, HipCallError> {
        let mut can = 0;
        // SAFETY: a valid out-pointer; the ordinals are checked by the runtime.
        check("hipDeviceCanAccessPeer", unsafe { (self.hipDeviceCanAccessPeer)(&mut can, dev, peer) })?;
        Ok(can != 0)
    }

    /// `hipDeviceEnablePeerAccess` from the current device (flags 0).
    pub fn device_enable_peer_access(&self, peer: c_int) -> Result<(), HipCallError> {
        // SAFETY: plain values; the runtime checks the ordinal.
        check("hipDeviceEnablePeerAccess", unsafe { (self.hipDeviceEnablePeerAccess)(peer, 0) })
    }

    // ---- stream-ordered pools ---------------------------------------------------------------

    /// `hipDeviceGetMemPool`: the pool `hipMallocAsync` allocates from on `dev`.
    pub fn device_mem_pool(&self, dev: c_int) -> Result<MemPool, HipCallError> {
        let f = self.hipDeviceGetMemPool.ok_or(missing("hipDeviceGetMemPool"))?;
        let mut pool = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the runtime checks the ordinal.
        check("hipDeviceGetMemPool", unsafe { f(&mut pool, dev) })?;
        Ok(pool)
    }

    /// `hipMemPoolSetAccess` for one device.
    pub fn mem_pool_set_access(&self, pool: MemPool, dev: c_int, flags: u32) -> Result<(), HipCallError> {
        let f = self.hipMemPoolSetAccess.ok_or(missing("hipMemPoolSetAccess"))?;
        let desc = MemAccessDesc { location: MemLocation { kind: LOCATION_TYPE_DEVICE, id: dev }, flags };
        // SAFETY: one descriptor, count 1; `pool` is live (module contract).
        check("hipMemPoolSetAccess", unsafe { f(pool, &desc, 1) })
    }

    /// `hipMemPoolGetAccess` of one device.
    pub fn mem_pool_access(&self, pool: MemPool, dev: c_int) -> Result<u32, HipCallError> {
        let f = self.hipMemPoolGetAccess.ok_or(missing("hipMemPoolGetAccess"))?;
        let mut flags = 0;
        let mut location = MemLocation { kind: LOCATION_TYPE_DEVICE, id: dev };
        // SAFETY: valid out-pointer and location; `pool` is live (module contract).
        check("hipMemPoolGetAccess", unsafe { f(&mut flags, pool, &mut location) })?;
        Ok(flags)
    }

    // ---- stream memory operations -----------------------------------------------------------

    /// `hipStreamWaitValue32`.
    pub fn stream_wait_value32(&self, stream: Stream, addr: u64, value: u32, flags: u32, mask: u32) -> Result<(), HipCallError> {
        let f = self.hipStreamWaitValue32.ok_or(missing("hipStreamWaitValue32"))?;
        // SAFETY: `stream` is live (module contract); the runtime checks `addr`.
        check("hipStreamWaitValue32", unsafe { f(stream, addr as *mut c_void, value, flags, mask) })
    }

    /// `hipStreamWaitValue64`.
    pub fn stream_wait_value64(&self, stream: Stream, addr: u64, value: u64, flags: u32, mask: u64) -> Result<(), HipCallError> {
        let f = self.hipStreamWaitValue64.ok_or(missing("hipStreamWaitValue64"))?;
        // SAFETY: as in `stream_wait_value32`.
        check("hipStreamWaitValue64", unsafe { f(stream, addr as *mut c_void, value, flags, mask) })
    }

    /// `hipStreamWriteValue32` (flags 0: AMD's runtime ignores them).
    pub fn stream_write_value32(&self, stream: Stream, addr: u64, value: u32) -> Result<(), HipCallError> {
        let f = self.hipStreamWriteValue32.ok_or(missing("hipStreamWriteValue32"))?;
        // SAFETY: as in `stream_wait_value32`.
        check("hipStreamWriteValue32", unsafe { f(stream, addr as *mut c_void, value, 0) })
    }

    /// `hipStreamWriteValue64` (flags 0).
    pub fn stream_write_value64(&self, stream: Stream, addr: u64, value: u64) -> Result<(), HipCallError> {
        let f = self.hipStreamWriteValue64.ok_or(missing("hipStreamWriteValue64"))?;
        // SAFETY: as in `stream_wait_value32`.
        check("hipStreamWriteValue64", unsafe { f(stream, addr as *mut c_void, value, 0) })
    }

    // ---- memory -------------------------------------------------------------------------------

    /// `hipMallocManaged`, attached globally; freed with [`HipApi::free`].
    pub fn malloc_managed(&self, bytes: usize) -> Result<*mut c_void, HipCallError> {
        /// `hipMemAttachGlobal`.
        const ATTACH_GLOBAL: u32 = 0x1;
        let f = self.hipMallocManaged.ok_or(missing("hipMallocManaged"))?;
        let mut ptr = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        check("hipMallocManaged", unsafe { f(&mut ptr, bytes, ATTACH_GLOBAL) })?;
        Ok(ptr)
    }

    /// `hipFree`.
    pub fn free(&self, ptr: *mut c_void) -> Result<(), HipCallError> {
        // SAFETY: the runtime refuses addresses that are not allocation bases; callers free
        // each allocation once, after taking it out of the backend's tables.
        check("hipFree", unsafe { (self.hipFree)(ptr) })
    }

    /// `hipMemsetAsync`.
    pub fn memset_async(&self, ptr: *mut c_void, value: c_int, len: usize, stream: Stream) -> Result<(), HipCallError> {
        // SAFETY: `stream` is live (module contract); the runtime checks the device range.
        check("hipMemsetAsync", unsafe { (self.hipMemsetAsync)(ptr, value, len, stream) })
    }

    /// `hipMemset2DAsync` of bytes.
    pub fn memset_2d_async(&self, ptr: u64, pitch: usize, value: u8, width: usize, height: usize, stream: Stream) -> Result<(), HipCallError> {
        // SAFETY: `stream` is live (module contract); the runtime checks the device range.
        check("hipMemset2DAsync", unsafe { (self.hipMemset2DAsync)(ptr as *mut c_void, pitch, c_int::from(value), width, height, stream) })
    }

    /// `hipMemsetD2D16Async` where the runtime has it (`None`: it does not).
    pub fn memset_d2d16_async(
        &self,
        ptr: u64,
        pitch: usize,
        value: u16,
        width: usize,
        height: usize,
        stream: Stream,
    ) -> Option<Result<(), HipCallError>> {
        let f = self.hipMemsetD2D16Async?;
        // SAFETY: as in `memset_2d_async`.
        Some(check("hipMemsetD2D16Async", unsafe { f(ptr as *mut c_void, pitch, value, width, height, stream) }))
    }

    /// `hipMemsetD2D32Async` where the runtime has it (`None`: it does not).
    pub fn memset_d2d32_async(
        &self,
        ptr: u64,
        pitch: usize,
        value: u32,
        width: usize,
        height: usize,
        stream: Stream,
    ) -> Option<Result<(), HipCallError>> {
        let f = self.hipMemsetD2D32Async?;
        // SAFETY: as in `memset_2d_async`.
        Some(check("hipMemsetD2D32Async", unsafe { f(ptr as *mut c_void, pitch, value, width, height, stream) }))
    }

    /// `hipMemsetD16Async`: `count` 16-bit elements.
    pub fn memset_d16_async(&self, ptr: u64, value: u16, count: usize, stream: Stream) -> Result<(), HipCallError> {
        // SAFETY: as in `memset_2d_async`.
        check("hipMemsetD16Async", unsafe { (self.hipMemsetD16Async)(ptr as *mut c_void, value, count, stream) })
    }

    /// `hipMemsetD32Async`: `count` 32-bit elements.
    pub fn memset_d32_async(&self, ptr: u64, value: u32, count: usize, stream: Stream) -> Result<(), HipCallError> {
        // SAFETY: as in `memset_2d_async`.
        check("hipMemsetD32Async", unsafe { (self.hipMemsetD32Async)(ptr as *mut c_void, value as c_int, count, stream) })
    }

    /// `hipMemGetInfo` of the current device: (free, total) bytes.
    pub fn mem_get_info(&self) -> Result<(usize, usize), HipCallError> {
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: valid out-pointers.
        check("hipMemGetInfo", unsafe { (self.hipMemGetInfo)(&mut free, &mut total) })?;
        Ok((free, total))
    }

    /// `hipMalloc` on the current device; freed with [`HipApi::free`].
    pub fn malloc(&self, bytes: usize) -> Result<*mut c_void, HipCallError> {
        let mut ptr = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        check("hipMalloc", unsafe { (self.hipMalloc)(&mut ptr, bytes) })?;
        Ok(ptr)
    }

    /// `hipMallocAsync` in `stream`'s order; freed with [`HipApi::free_async`].
    pub fn malloc_async(&self, bytes: usize, stream: Stream) -> Result<*mut c_void, HipCallError> {
        let mut ptr = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; `stream` is live (module contract).
        check("hipMallocAsync", unsafe { (self.hipMallocAsync)(&mut ptr, bytes, stream) })?;
        Ok(ptr)
    }

    /// `hipFreeAsync`: the runtime frees `ptr` once `stream`'s earlier work is done.
    pub fn free_async(&self, ptr: *mut c_void, stream: Stream) -> Result<(), HipCallError> {
        // SAFETY: `stream` is live (module contract); the runtime refuses addresses that are
        // not allocation bases; callers free each once, after taking it out of their tables.
        check("hipFreeAsync", unsafe { (self.hipFreeAsync)(ptr, stream) })
    }

    /// `hipMemcpyAsync(hipMemcpyHostToDevice)` of `len` bytes from host memory at `src`.
    ///
    /// # Safety
    /// `src..src + len` is readable host memory that stays alive and unchanged until `stream`
    /// has passed the copy.
    pub unsafe fn memcpy_htod_async(&self, dst: u64, src: *const u8, len: usize, stream: Stream) -> Result<(), HipCallError> {
        // SAFETY: the source range is the caller's contract; the runtime checks `dst`.
        check("hipMemcpyAsync", unsafe { (self.hipMemcpyAsync)(dst as *mut c_void, src.cast(), len, MEMCPY_HOST_TO_DEVICE, stream) })
    }

    /// `hipMemcpyAsync(hipMemcpyDeviceToHost)` of `len` bytes into host memory at `dst`.
    ///
    /// # Safety
    /// `dst..dst + len` is writable host memory that stays alive, and is neither read nor
    /// written by anyone else, until `stream` has passed the copy.
    pub unsafe fn memcpy_dtoh_async(&self, dst: *mut u8, src: u64, len: usize, stream: Stream) -> Result<(), HipCallError> {
        // SAFETY: the destination range is the caller's contract; the runtime checks `src`.
        check("hipMemcpyAsync", unsafe { (self.hipMemcpyAsync)(dst.cast(), src as *const c_void, len, MEMCPY_DEVICE_TO_HOST, stream) })
    }

    /// `hipMemcpyAsync(hipMemcpyDeviceToDevice)`.
    pub fn memcpy_dtod_async(&self, dst: u64, src: u64, len: usize, stream: Stream) -> Result<(), HipCallError> {
        // SAFETY: device memory only (the runtime checks both ranges); `stream` is live.
        check("hipMemcpyAsync", unsafe { (self.hipMemcpyAsync)(dst as *mut c_void, src as *const c_void, len, MEMCPY_DEVICE_TO_DEVICE, stream) })
    }

    /// `hipMemcpy2DAsync(hipMemcpyHostToDevice)`: `height` packed rows of `width` bytes from
    /// `src` to rows `dst_pitch` apart.
    ///
    /// # Safety
    /// `src..src + width * height` is readable host memory that stays alive and unchanged until
    /// `stream` has passed the copy.
    pub unsafe fn memcpy_2d_htod_async(
        &self,
        dst: u64,
        dst_pitch: usize,
        src: *const u8,
        width: usize,
        height: usize,
        stream: Stream,
    ) -> Result<(), HipCallError> {
        // SAFETY: the source range is the caller's contract; the runtime checks the rows at
        // `dst`.
        check("hipMemcpy2DAsync", unsafe {
            (self.hipMemcpy2DAsync)(dst as *mut c_void, dst_pitch, src.cast(), width, width, height, MEMCPY_HOST_TO_DEVICE, stream)
        })
    }

    /// `hipMemcpy2DAsync(hipMemcpyDeviceToHost)`: rows `src_pitch` apart into `height` packed
    /// rows of `width` bytes at `dst`.
    ///
    /// # Safety
    /// `dst..dst + width * height` is writable host memory that stays alive, and is neither
    /// read nor written by anyone else, until `stream` has passed the copy.
    pub unsafe fn memcpy_2d_dtoh_async(
        &self,
        dst: *mut u8,
        src: u64,
        src_pitch: usize,
        width: usize,
        height: usize,
        stream: Stream,
    ) -> Result<(), HipCallError> {
        // SAFETY: the destination range is the caller's contract; the runtime checks the rows
        // at `src`.
        check("hipMemcpy2DAsync", unsafe {
            (self.hipMemcpy2DAsync)(dst.cast(), width, src as *const c_void, src_pitch, width, height, MEMCPY_DEVICE_TO_HOST, stream)
        })
    }

    /// `hipMemcpy2DAsync(hipMemcpyDeviceToDevice)`.
    #[allow(clippy::too_many_arguments)]
    pub fn memcpy_2d_dtod_async(
        &self,
        dst: u64,
        dst_pitch: usize,
        src: u64,
        src_pitch: usize,
        width: usize,
        height: usize,
        stream: Stream,
    ) -> Result<(), HipCallError> {
        // SAFETY: device memory only (the runtime checks both areas); `stream` is live.
        check("hipMemcpy2DAsync", unsafe {
            (self.hipMemcpy2DAsync)(dst as *mut c_void, dst_pitch, src as *const c_void, src_pitch, width, height, MEMCPY_DEVICE_TO_DEVICE, stream)
        })
    }

    /// `hipMemcpyPeerAsync` between device ordinals.
    pub fn memcpy_peer_async(&self, dst: u64, dst_dev: c_int, src: u64, src_dev: c_int, len: usize, stream: Stream) -> Result<(), HipCallError> {
        // SAFETY: device memory only (the runtime checks both ranges and ordinals); `stream`
        // is live.
        check("hipMemcpyPeerAsync", unsafe { (self.hipMemcpyPeerAsync)(dst as *mut c_void, dst_dev, src as *const c_void, src_dev, len, stream) })
    }

    // ---- events -------------------------------------------------------------------------------

    /// `hipEventCreateWithFlags` on the current device.
    pub fn event_create_with_flags(&self, flags: u32) -> Result<Event, HipCallError> {
        let mut raw: Event = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the runtime checks the flags.
        check("hipEventCreateWithFlags", unsafe { (self.hipEventCreateWithFlags)(&mut raw, flags) })?;
        Ok(raw)
    }

    /// `hipEventDestroy`: callers destroy each event once, after taking it out of their tables.
    pub fn event_destroy(&self, event: Event) -> Result<(), HipCallError> {
        // SAFETY: `event` is live (module contract).
        check("hipEventDestroy", unsafe { (self.hipEventDestroy)(event) })
    }

    /// `hipEventRecord`.
    pub fn event_record(&self, event: Event, stream: Stream) -> Result<(), HipCallError> {
        // SAFETY: live event and stream (module contract).
        check("hipEventRecord", unsafe { (self.hipEventRecord)(event, stream) })
    }

    /// `hipEventQuery`: `Ok(true)` done, `Ok(false)` not yet (`hipErrorNotReady`).
    pub fn event_query(&self, event: Event) -> Result<bool, HipCallError> {
        // SAFETY: `event` is live (module contract).
        match unsafe { (self.hipEventQuery)(event) } {
            hip_code::NOT_READY => Ok(false),
            code => check("hipEventQuery", code).map(|()| true),
        }
    }

    /// `hipEventElapsedTime` in milliseconds.
    pub fn event_elapsed_ms(&self, start: Event, end: Event) -> Result<f32, HipCallError> {
        let mut ms = 0f32;
        // SAFETY: a valid out-pointer; live events (module contract).
        check("hipEventElapsedTime", unsafe { (self.hipEventElapsedTime)(&mut ms, start, end) })?;
        Ok(ms)
    }

    // ---- streams ------------------------------------------------------------------------------

    /// `hipStreamCreateWithPriority`.
    pub fn stream_create_with_priority(&self, flags: u32, priority: c_int) -> Result<Stream, HipCallError> {
        let mut raw: Stream = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        check("hipStreamCreateWithPriority", unsafe { (self.hipStreamCreateWithPriority)(&mut raw, flags, priority) })?;
        Ok(raw)
    }

    /// `hipStreamDestroy`: callers destroy each stream once, after taking it out of their
    /// tables.
    pub fn stream_destroy(&self, stream: Stream) -> Result<(), HipCallError> {
        // SAFETY: `stream` is live (module contract).
        check("hipStreamDestroy", unsafe { (self.hipStreamDestroy)(stream) })
    }

    /// `hipStreamQuery`: `Ok(true)` idle, `Ok(false)` work pending (`hipErrorNotReady`).
    pub fn stream_query(&self, stream: Stream) -> Result<bool, HipCallError> {
        // SAFETY: `stream` is live (module contract).
        match unsafe { (self.hipStreamQuery)(stream) } {
            hip_code::NOT_READY => Ok(false),
            code => check("hipStreamQuery", code).map(|()| true),
        }
    }

    /// `hipStreamWaitEvent` (flags 0).
    pub fn stream_wait_event(&self, stream: Stream, event: Event) -> Result<(), HipCallError> {
        // SAFETY: live stream and event (module contract).
        check("hipStreamWaitEvent", unsafe { (self.hipStreamWaitEvent)(stream, event, 0) })
    }

    /// `hipDeviceGetStreamPriorityRange` of the current device: (least, greatest).
    pub fn stream_priority_range(&self) -> Result<(c_int, c_int), HipCallError> {
        let (mut least, mut greatest) = (0, 0);
        // SAFETY: valid out-pointers.
        check("hipDeviceGetStreamPriorityRange", unsafe { (self.hipDeviceGetStreamPriorityRange)(&mut least, &mut greatest) })?;
        Ok((least, greatest))
    }

    /// `hipStreamGetFlags`.
    pub fn stream_flags(&self, stream: Stream) -> Result<u32, HipCallError> {
        let mut flags = 0;
        // SAFETY: `stream` is live (module contract); a valid out-pointer.
        check("hipStreamGetFlags", unsafe { (self.hipStreamGetFlags)(stream, &mut flags) })?;
        Ok(flags)
    }

    /// `hipStreamGetPriority`.
    pub fn stream_priority(&self, stream: Stream) -> Result<c_int, HipCallError> {
        let mut priority = 0;
        // SAFETY: `stream` is live (module contract); a valid out-pointer.
        check("hipStreamGetPriority", unsafe { (self.hipStreamGetPriority)(stream, &mut priority) })?;
        Ok(priority)
    }

    /// `hipEventSynchronize`.
    pub fn event_synchronize(&self, event: Event) -> Result<(), HipCallError> {
        // SAFETY: `event` is live (module contract).
        check("hipEventSynchronize", unsafe { (self.hipEventSynchronize)(event) })
    }

    /// `hipStreamSynchronize`.
    pub fn stream_synchronize(&self, stream: Stream) -> Result<(), HipCallError> {
        // SAFETY: `stream` is live (module contract).
        check("hipStreamSynchronize", unsafe { (self.hipStreamSynchronize)(stream) })
    }

    // ---- modules, functions, launches ---------------------------------------------------------

    /// `hipDeviceSynchronize`: waits for all work of the current device.
    pub fn device_synchronize(&self) -> Result<(), HipCallError> {
        // SAFETY: no arguments.
        check("hipDeviceSynchronize", unsafe { (self.hipDeviceSynchronize)() })
    }

    /// `hipModuleLoadData` on the current device: the image is read during the call only
    /// (the runtime copies what it keeps).
    pub fn module_load_data(&self, image: &[u8]) -> Result<Module, HipCallError> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; `image` is a complete image in memory for the call.
        check("hipModuleLoadData", unsafe { (self.hipModuleLoadData)(&mut raw, image.as_ptr().cast()) })?;
        Ok(raw)
    }

    /// `hipModuleUnload`: callers unload each module once, after taking it out of their
    /// tables.
    pub fn module_unload(&self, module: Module) -> Result<(), HipCallError> {
        // SAFETY: `module` is live (module contract).
        check("hipModuleUnload", unsafe { (self.hipModuleUnload)(module) })
    }

    /// `hipModuleGetFunction`.
    pub fn module_get_function(&self, module: Module, name: &CStr) -> Result<Function, HipCallError> {
        let mut f = std::ptr::null_mut();
        // SAFETY: a live module; a NUL-terminated name; a valid out-pointer.
        check("hipModuleGetFunction", unsafe { (self.hipModuleGetFunction)(&mut f, module, name.as_ptr()) })?;
        Ok(f)
    }

    /// `hipModuleGetGlobal`: (address, bytes).
    pub fn module_get_global(&self, module: Module, name: &CStr) -> Result<(u64, usize), HipCallError> {
        let (mut ptr, mut size) = (std::ptr::null_mut::<c_void>(), 0usize);
        // SAFETY: a live module; a NUL-terminated name; valid out-pointers.
        check("hipModuleGetGlobal", unsafe { (self.hipModuleGetGlobal)(&mut ptr, &mut size, module, name.as_ptr()) })?;
        Ok((ptr as u64, size))
    }

    /// `hipFuncGetAttribute`.
    pub fn func_get_attribute(&self, f: Function, attribute: c_int) -> Result<c_int, HipCallError> {
        let mut v = 0;
        // SAFETY: a live function (module contract); a valid out-pointer.
        check("hipFuncGetAttribute", unsafe { (self.hipFuncGetAttribute)(&mut v, attribute, f) })?;
        Ok(v)
    }

    /// `hipFuncSetAttribute` with the `hipFunction_t` (the runtime validates the value).
    pub fn func_set_attribute(&self, f: Function, attribute: c_int, value: c_int) -> Result<(), HipCallError> {
        // SAFETY: a live function of the current device (module contract).
        check("hipFuncSetAttribute", unsafe { (self.hipFuncSetAttribute)(f as *const c_void, attribute, value) })
    }

    /// `hipRemoteFunctionParamLayout` (hip-remote's own library) where the runtime has it
    /// (`None`: it does not): (offset, size) of each parameter, at most `max` of them.
    pub fn remote_function_param_layout(&self, f: Function, max: usize) -> Option<Result<Bounded<(u32, u32)>, HipCallError>> {
        let report = self.hipRemoteFunctionParamLayout?;
        let (mut offsets, mut sizes) = (vec![0u32; max], vec![0u32; max]);
        let mut count = 0u32;
        // SAFETY: a live function; both arrays hold `max` elements, as passed.
        let reported = check("hipRemoteFunctionParamLayout", unsafe { report(f, &mut count, offsets.as_mut_ptr(), sizes.as_mut_ptr(), max as u32) });
        Some(reported.map(|()| {
            if count as usize > max {
                return Bounded::TooMany(count);
            }
            Bounded::Within(offsets.into_iter().zip(sizes).take(count as usize).collect())
        }))
    }

    /// `hipModuleLaunchKernel` with the client's packed arguments (`extra`), exactly as packed.
    pub fn module_launch_kernel(&self, f: Function, config: &LaunchConfig, stream: Stream, args: &[u8]) -> Result<(), HipCallError> {
        let mut size = 0;
        let mut extra = packed_extra(args, &mut size);
        let [gx, gy, gz] = config.grid;
        let [bx, by, bz] = config.block;
        // SAFETY: a live function of the current device and a live stream (module contract);
        // `extra` describes `args` by its true length, alive for the call (the runtime copies
        // the arguments at launch).
        check("hipModuleLaunchKernel", unsafe {
            (self.hipModuleLaunchKernel)(f, gx, gy, gz, bx, by, bz, config.shared_mem, stream, std::ptr::null_mut(), extra.as_mut_ptr())
        })
    }

    /// `hipModuleLaunchCooperativeKernel`: one pointer per parameter of `params`, into
    /// `args`; a parameter reaching past `args` is `hipErrorInvalidValue` (callers check
    /// first).
    pub fn module_launch_cooperative_kernel(
        &self,
        f: Function,
        config: &LaunchConfig,
        stream: Stream,
        args: &mut [u8],
        params: &[ParamLayout],
    ) -> Result<(), HipCallError> {
        const CALL: &str = "hipModuleLaunchCooperativeKernel";
        let launch = self.hipModuleLaunchCooperativeKernel.ok_or(missing(CALL))?;
        let fits = |p: &ParamLayout| (p.offset as usize).checked_add(p.size as usize).is_some_and(|end| end <= args.len());
        if !params.iter().all(fits) {
            return check(CALL, hip_code::INVALID_VALUE);
        }
        let base = args.as_mut_ptr();
        let mut pointers: Vec<*mut c_void> = params.iter().map(|p| base.wrapping_add(p.offset as usize).cast()).collect();
        let [gx, gy, gz] = config.grid;
        let [bx, by, bz] = config.block;
        // SAFETY: a live function and stream (module contract); each pointer addresses its
        // parameter's bytes inside `args` (checked above), alive for the call (the runtime
        // copies them).
        check(CALL, unsafe { launch(f, gx, gy, gz, bx, by, bz, config.shared_mem, stream, pointers.as_mut_ptr()) })
    }

    /// `hipModuleOccupancyMaxActiveBlocksPerMultiprocessor`.
    pub fn occupancy_max_active_blocks(&self, f: Function, block_size: c_int, dynamic_shared: usize) -> Result<c_int, HipCallError> {
        let mut n = 0;
        // SAFETY: a live function (module contract); a valid out-pointer.
        check("hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", unsafe {
            (self.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor)(&mut n, f, block_size, dynamic_shared)
        })?;
        Ok(n)
    }

    /// `hipModuleOccupancyMaxPotentialBlockSize`: (grid, block).
    pub fn occupancy_max_potential_block_size(&self, f: Function, dynamic_shared: usize, limit: c_int) -> Result<(c_int, c_int), HipCallError> {
        let (mut grid, mut block) = (0, 0);
        // SAFETY: a live function (module contract); valid out-pointers.
        check("hipModuleOccupancyMaxPotentialBlockSize", unsafe {
            (self.hipModuleOccupancyMaxPotentialBlockSize)(&mut grid, &mut block, f, dynamic_shared, limit)
        })?;
        Ok((grid, block))
    }

    /// The names of the kernels of `image`, loaded once more as a library
    /// (`hipLibraryLoadData`, `hipLibraryGetKernelCount`, `hipLibraryEnumerateKernels`,
    /// `hipKernelGetName`; ROCm 7) and unloaded again (`None`: the runtime gave a kernel no
    /// name), at most `max` of them. The image is read during the load only.
    pub fn library_kernel_names(&self, image: &[u8], max: usize) -> Result<Bounded<Option<String>>, HipCallError> {
        let load = self.hipLibraryLoadData.ok_or(missing("hipLibraryLoadData"))?;
        let unload = self.hipLibraryUnload.ok_or(missing("hipLibraryUnload"))?;
        let count = self.hipLibraryGetKernelCount.ok_or(missing("hipLibraryGetKernelCount"))?;
        let enumerate = self.hipLibraryEnumerateKernels.ok_or(missing("hipLibraryEnumerateKernels"))?;
        let name_of = self.hipKernelGetName.ok_or(missing("hipKernelGetName"))?;
        let mut library = std::ptr::null_mut();
        let (no_options, no_values) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: the image is complete in memory for the call; no options are passed.
        check("hipLibraryLoadData", unsafe { load(&mut library, image.as_ptr().cast(), no_options, no_values, 0, no_options, no_values, 0) })?;
        let names = (|| {
            let mut n = 0;
            // SAFETY: a live library; a valid out-pointer.
            check("hipLibraryGetKernelCount", unsafe { count(&mut n, library) })?;
            if n as usize > max {
                return Ok(Bounded::TooMany(n));
            }
            let mut kernels = vec![std::ptr::null_mut(); n as usize];
            // SAFETY: the array holds `n` entries, as passed.
            check("hipLibraryEnumerateKernels", unsafe { enumerate(kernels.as_mut_ptr(), n, library) })?;
            let mut names = Vec::with_capacity(kernels.len());
            for k in kernels {
                let mut name = std::ptr::null();
                // SAFETY: a kernel of the live library; a valid out-pointer.
                check("hipKernelGetName", unsafe { name_of(&mut name, k) })?;
                let name = if name.is_null() {
                    None
                } else {
                    // SAFETY: a NUL-terminated name owned by the library, copied before it is
                    // unloaded.
                    Some(unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned())
                };
                names.push(name);
            }
            Ok(Bounded::Within(names))
        })();
        // SAFETY: the library loaded above, used by nothing else, unloaded once.
        let unloaded = check("hipLibraryUnload", unsafe { unload(library) });
        let names = names?;
        unloaded?;
        Ok(names)
    }

    // ---- graphs -------------------------------------------------------------------------------

    /// Whether the runtime has every entry point a native graph needs (without them the
    /// backend replays the recorded node list).
    pub fn has_graphs(&self) -> bool {
        self.hipGraphCreate.is_some()
            && self.hipGraphDestroy.is_some()
            && self.hipGraphAddKernelNode.is_some()
            && self.hipGraphAddMemsetNode.is_some()
            && self.hipGraphAddMemcpyNode1D.is_some()
            && self.hipGraphAddEmptyNode.is_some()
            && self.hipGraphInstantiateWithFlags.is_some()
            && self.hipGraphLaunch.is_some()
            && self.hipGraphExecDestroy.is_some()
    }

    /// `hipGraphCreate` (flags 0); destroyed with [`HipApi::graph_destroy`].
    pub fn graph_create(&self) -> Result<Graph, HipCallError> {
        let f = self.hipGraphCreate.ok_or(missing("hipGraphCreate"))?;
        let mut graph: Graph = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; flags must be 0.
        check("hipGraphCreate", unsafe { f(&mut graph, 0) })?;
        Ok(graph)
    }

    /// `hipGraphDestroy`: callers destroy each graph once.
    pub fn graph_destroy(&self, graph: Graph) -> Result<(), HipCallError> {
        let f = self.hipGraphDestroy.ok_or(missing("hipGraphDestroy"))?;
        // SAFETY: a live graph (module contract).
        check("hipGraphDestroy", unsafe { f(graph) })
    }

    /// `hipGraphAddKernelNode` with the client's packed arguments (`extra`), after `deps`
    /// (nodes of `graph`).
    pub fn graph_add_kernel_node(
        &self,
        graph: Graph,
        deps: &[GraphNode],
        f: Function,
        config: &LaunchConfig,
        args: &[u8],
    ) -> Result<GraphNode, HipCallError> {
        let add = self.hipGraphAddKernelNode.ok_or(missing("hipGraphAddKernelNode"))?;
        let mut size = 0;
        let mut extra = packed_extra(args, &mut size);
        let params = KernelNodeParams::new(f, config, extra.as_mut_ptr());
        let mut node = std::ptr::null_mut();
        // SAFETY: a live function and graph (module contract); `extra` describes `args` by its
        // true length, alive for the call (the runtime copies the arguments into the node).
        check("hipGraphAddKernelNode", unsafe { add(&mut node, graph, deps.as_ptr(), deps.len(), &params) })?;
        Ok(node)
    }

    /// `hipGraphAddMemsetNode`: `height` rows of `width` elements of `element_size` bytes,
    /// `pitch` bytes apart.
    #[allow(clippy::too_many_arguments)]
    pub fn graph_add_memset_node(
        &self,
        graph: Graph,
        deps: &[GraphNode],
        dst: u64,
        pitch: usize,
        element_size: u32,
        value: u32,
        width: usize,
        height: usize,
    ) -> Result<GraphNode, HipCallError> {
        let add = self.hipGraphAddMemsetNode.ok_or(missing("hipGraphAddMemsetNode"))?;
        let params = MemsetParams::new(dst, pitch, element_size, value, width, height);
        let mut node = std::ptr::null_mut();
        // SAFETY: device memory only (the runtime checks it); a live graph (module contract).
        check("hipGraphAddMemsetNode", unsafe { add(&mut node, graph, deps.as_ptr(), deps.len(), &params) })?;
        Ok(node)
    }

    /// `hipGraphAddMemcpyNode1D` from device memory to device memory.
    pub fn graph_add_memcpy_dtod_node(&self, graph: Graph, deps: &[GraphNode], dst: u64, src: u64, len: usize) -> Result<GraphNode, HipCallError> {
        let add = self.hipGraphAddMemcpyNode1D.ok_or(missing("hipGraphAddMemcpyNode1D"))?;
        let mut node = std::ptr::null_mut();
        // SAFETY: device memory only (the runtime checks both ranges); a live graph.
        check("hipGraphAddMemcpyNode1D", unsafe {
            add(&mut node, graph, deps.as_ptr(), deps.len(), dst as *mut c_void, src as *const c_void, len, MEMCPY_DEVICE_TO_DEVICE)
        })?;
        Ok(node)
    }

    /// `hipGraphAddEmptyNode`.
    pub fn graph_add_empty_node(&self, graph: Graph, deps: &[GraphNode]) -> Result<GraphNode, HipCallError> {
        let add = self.hipGraphAddEmptyNode.ok_or(missing("hipGraphAddEmptyNode"))?;
        let mut node = std::ptr::null_mut();
        // SAFETY: a live graph; `deps` are nodes of it.
        check("hipGraphAddEmptyNode", unsafe { add(&mut node, graph, deps.as_ptr(), deps.len()) })?;
        Ok(node)
    }

    /// `hipGraphInstantiateWithFlags` (flags 0); destroyed with [`HipApi::graph_exec_destroy`].
    pub fn graph_instantiate(&self, graph: Graph) -> Result<GraphExec, HipCallError> {
        let f = self.hipGraphInstantiateWithFlags.ok_or(missing("hipGraphInstantiateWithFlags"))?;
        let mut exec: GraphExec = std::ptr::null_mut();
        // SAFETY: a complete, live graph; a valid out-pointer.
        check("hipGraphInstantiateWithFlags", unsafe { f(&mut exec, graph, 0) })?;
        Ok(exec)
    }

    /// `hipGraphExecUpdate`: `exec` takes `graph`'s node parameters where the topology and
    /// node kinds match (an error otherwise).
    pub fn graph_exec_update(&self, exec: GraphExec, graph: Graph) -> Result<(), HipCallError> {
        let f = self.hipGraphExecUpdate.ok_or(missing("hipGraphExecUpdate"))?;
        let (mut error_node, mut result): (GraphNode, std::ffi::c_uint) = (std::ptr::null_mut(), 0);
        // SAFETY: a live executable graph and a complete graph (module contract); valid
        // out-pointers.
        check("hipGraphExecUpdate", unsafe { f(exec, graph, &mut error_node, &mut result) })
    }

    /// `hipGraphLaunch`.
    pub fn graph_launch(&self, exec: GraphExec, stream: Stream) -> Result<(), HipCallError> {
        let f = self.hipGraphLaunch.ok_or(missing("hipGraphLaunch"))?;
        // SAFETY: a live executable graph and stream (module contract).
        check("hipGraphLaunch", unsafe { f(exec, stream) })
    }

    /// `hipGraphUpload`.
    pub fn graph_upload(&self, exec: GraphExec, stream: Stream) -> Result<(), HipCallError> {
        let f = self.hipGraphUpload.ok_or(missing("hipGraphUpload"))?;
        // SAFETY: a live executable graph and stream (module contract).
        check("hipGraphUpload", unsafe { f(exec, stream) })
    }

    /// `hipGraphExecDestroy`: callers destroy each executable graph once.
    pub fn graph_exec_destroy(&self, exec: GraphExec) -> Result<(), HipCallError> {
        let f = self.hipGraphExecDestroy.ok_or(missing("hipGraphExecDestroy"))?;
        // SAFETY: a live executable graph (module contract).
        check("hipGraphExecDestroy", unsafe { f(exec) })
    }

    // ---- host memory registration and interprocess sharing ---------------------------------

    /// `hipHostRegister` of `len` bytes at `ptr` with `flags`.
    ///
    /// # Safety
    /// `ptr..ptr + len` is a mapping of the caller's that stays mapped until
    /// [`HipApi::host_unregister`] has returned: the device may read and write it while it is
    /// registered.
    pub unsafe fn host_register(&self, ptr: *mut c_void, len: usize, flags: u32) -> Result<(), HipCallError> {
        let f = self.hipHostRegister.ok_or(missing("hipHostRegister"))?;
        // SAFETY: the mapping outlives the registration (the caller's contract).
        check("hipHostRegister", unsafe { f(ptr, len, flags) })
    }

    /// `hipHostUnregister`: the device no longer reaches the range registered at `ptr` (the
    /// host memory itself is not touched; the runtime refuses an unregistered `ptr`).
    pub fn host_unregister(&self, ptr: *mut c_void) -> Result<(), HipCallError> {
        let f = self.hipHostUnregister.ok_or(missing("hipHostUnregister"))?;
        // SAFETY: ends the device's access only; the runtime checks `ptr`.
        check("hipHostUnregister", unsafe { f(ptr) })
    }

    /// `hipHostGetDevicePointer` (flags 0): the device address of registered host memory.
    pub fn host_get_device_pointer(&self, ptr: *mut c_void) -> Result<u64, HipCallError> {
        let f = self.hipHostGetDevicePointer.ok_or(missing("hipHostGetDevicePointer"))?;
        let mut device = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; a lookup only (the runtime checks `ptr`).
        check("hipHostGetDevicePointer", unsafe { f(&mut device, ptr, 0) })?;
        Ok(device as u64)
    }

    /// `hipIpcGetMemHandle` of the allocation at `ptr`.
    pub fn ipc_get_mem_handle(&self, ptr: u64) -> Result<IpcHandle, HipCallError> {
        let f = self.hipIpcGetMemHandle.ok_or(missing("hipIpcGetMemHandle"))?;
        let mut handle = IpcHandle::zeroed();
        // SAFETY: a valid out-pointer; the runtime checks `ptr`.
        check("hipIpcGetMemHandle", unsafe { f(&mut handle, ptr as *mut c_void) })?;
        Ok(handle)
    }

    /// `hipIpcOpenMemHandle`; closed with [`HipApi::ipc_close_mem_handle`].
    pub fn ipc_open_mem_handle(&self, handle: IpcHandle, flags: u32) -> Result<u64, HipCallError> {
        let f = self.hipIpcOpenMemHandle.ok_or(missing("hipIpcOpenMemHandle"))?;
        let mut ptr = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the handle's bytes are the runtime's to check.
        check("hipIpcOpenMemHandle", unsafe { f(&mut ptr, handle, flags) })?;
        Ok(ptr as u64)
    }

    /// `hipIpcCloseMemHandle`: callers close each opened address once, after the work queued
    /// on it has finished.
    pub fn ipc_close_mem_handle(&self, ptr: u64) -> Result<(), HipCallError> {
        let f = self.hipIpcCloseMemHandle.ok_or(missing("hipIpcCloseMemHandle"))?;
        // SAFETY: device address space only; the runtime checks `ptr`.
        check("hipIpcCloseMemHandle", unsafe { f(ptr as *mut c_void) })
    }

    /// `hipMemRetainAllocationHandle`: a new reference to the physical allocation mapped at
    /// `ptr`, released with [`HipApi::mem_release`].
    pub fn mem_retain_allocation_handle(&self, ptr: u64) -> Result<u64, HipCallError> {
        let f = self.hipMemRetainAllocationHandle.ok_or(missing("hipMemRetainAllocationHandle"))?;
        let mut handle = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; a lookup in device address space (the runtime checks
        // `ptr`).
        check("hipMemRetainAllocationHandle", unsafe { f(&mut handle, ptr as *mut c_void) })?;
        Ok(handle as u64)
    }

    /// `hipMemExportToShareableHandle` as a POSIX file descriptor (flags 0).
    pub fn mem_export_fd(&self, handle: u64) -> Result<OwnedFd, HipCallError> {
        let f = self.hipMemExportToShareableHandle.ok_or(missing("hipMemExportToShareableHandle"))?;
        let mut fd: c_int = -1;
        // SAFETY: for POSIX descriptors the shareable handle is an `int` written through the
        // pointer; the runtime checks `handle`.
        check("hipMemExportToShareableHandle", unsafe { f((&mut fd as *mut c_int).cast(), handle as *mut c_void, HANDLE_TYPE_POSIX_FD, 0) })?;
        // SAFETY: a fresh descriptor the runtime created for this call, owned by nobody else.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// `hipMemImportFromShareableHandle` of a POSIX file descriptor (the runtime dups what it
    /// keeps); released with [`HipApi::mem_release`].
    pub fn mem_import_fd(&self, fd: BorrowedFd<'_>) -> Result<u64, HipCallError> {
        let f = self.hipMemImportFromShareableHandle.ok_or(missing("hipMemImportFromShareableHandle"))?;
        let mut handle = std::ptr::null_mut();
        // SAFETY: for POSIX descriptors the OS handle is the descriptor's number cast to a
        // pointer; `fd` is open for the call.
        check("hipMemImportFromShareableHandle", unsafe { f(&mut handle, fd.as_raw_fd() as isize as *mut c_void, HANDLE_TYPE_POSIX_FD) })?;
        Ok(handle as u64)
    }

    // ---- arrays, texture objects, 3D copies -------------------------------------------------

    /// `hipArray3DCreate` on the current device.
    pub fn array_3d_create(&self, desc: &Array3DDescriptor) -> Result<*mut c_void, HipCallError> {
        let f = self.hipArray3DCreate.ok_or(missing("hipArray3DCreate"))?;
        let mut array = std::ptr::null_mut();
        // SAFETY: a valid descriptor and out-pointer; the runtime checks the descriptor.
        check("hipArray3DCreate", unsafe { f(&mut array, desc) })?;
        Ok(array)
    }

    /// `hipArrayDestroy`: callers destroy each array once.
    pub fn array_destroy(&self, array: *mut c_void) -> Result<(), HipCallError> {
        let f = self.hipArrayDestroy.ok_or(missing("hipArrayDestroy"))?;
        // SAFETY: a live array (module contract).
        check("hipArrayDestroy", unsafe { f(array) })
    }

    /// `hipMipmappedArrayCreate` on the current device.
    pub fn mipmapped_array_create(&self, desc: &Array3DDescriptor, levels: u32) -> Result<*mut c_void, HipCallError> {
        let f = self.hipMipmappedArrayCreate.ok_or(missing("hipMipmappedArrayCreate"))?;
        let mut mipmap = std::ptr::null_mut();
        // SAFETY: a valid descriptor and out-pointer; the runtime checks the descriptor.
        check("hipMipmappedArrayCreate", unsafe { f(&mut mipmap, desc, levels) })?;
        Ok(mipmap)
    }

    /// `hipMipmappedArrayGetLevel`.
    pub fn mipmapped_array_get_level(&self, mipmap: *mut c_void, level: u32) -> Result<*mut c_void, HipCallError> {
        let f = self.hipMipmappedArrayGetLevel.ok_or(missing("hipMipmappedArrayGetLevel"))?;
        let mut array = std::ptr::null_mut();
        // SAFETY: a live mipmapped array (module contract); a valid out-pointer; the runtime
        // checks the level.
        check("hipMipmappedArrayGetLevel", unsafe { f(&mut array, mipmap, level) })?;
        Ok(array)
    }

    /// `hipMipmappedArrayDestroy` (its levels with it): callers destroy each once.
    pub fn mipmapped_array_destroy(&self, mipmap: *mut c_void) -> Result<(), HipCallError> {
        let f = self.hipMipmappedArrayDestroy.ok_or(missing("hipMipmappedArrayDestroy"))?;
        // SAFETY: a live mipmapped array (module contract).
        check("hipMipmappedArrayDestroy", unsafe { f(mipmap) })
    }

    /// `hipTexObjectCreate` from the driver-form structs of `backend::texture`
    /// (`HIP_RESOURCE_DESC`, `HIP_TEXTURE_DESC`, `HIP_RESOURCE_VIEW_DESC`).
    pub fn tex_object_create(&self, resource: &ResourceDesc, texture: &TextureDesc, view: Option<&ResourceViewDesc>) -> Result<u64, HipCallError> {
        let f = self.hipTexObjectCreate.ok_or(missing("hipTexObjectCreate"))?;
        let view = view.map_or(std::ptr::null(), |v| v as *const _);
        let mut object = std::ptr::null_mut();
        // SAFETY: the runtime's struct layouts; the resource names an array or device memory
        // (module contract), which the runtime checks; a valid out-pointer.
        check("hipTexObjectCreate", unsafe { f(&mut object, resource, texture, view) })?;
        Ok(object as u64)
    }

    /// `hipTexObjectDestroy`: callers destroy each texture object once.
    pub fn tex_object_destroy(&self, texture: u64) -> Result<(), HipCallError> {
        let f = self.hipTexObjectDestroy.ok_or(missing("hipTexObjectDestroy"))?;
        // SAFETY: the runtime checks the object.
        check("hipTexObjectDestroy", unsafe { f(texture as *mut c_void) })
    }

    /// `hipDrvMemcpy3DAsync`.
    ///
    /// # Safety
    /// Every host box `copy` names stays alive until `stream` has passed the copy; a host
    /// destination is touched by nobody else until then.
    pub unsafe fn drv_memcpy_3d_async(&self, copy: &Memcpy3D, stream: Stream) -> Result<(), HipCallError> {
        let f = self.hipDrvMemcpy3DAsync.ok_or(missing("hipDrvMemcpy3DAsync"))?;
        // SAFETY: host boxes are the caller's contract; the runtime checks device memory and
        // arrays; `stream` is live.
        check("hipDrvMemcpy3DAsync", unsafe { f(copy, stream) })
    }

    // ---- virtual memory management ------------------------------------------------------------
    // Reservations and mappings are device address space: the runtime checks every address and
    // handle value against its own tables and answers an error.

    /// `hipMemGetAllocationPropertiesFromHandle`.
    pub fn mem_allocation_properties(&self, handle: *mut c_void, into: &mut MemAllocationProp) -> Result<(), HipCallError> {
        let f = self.hipMemGetAllocationPropertiesFromHandle.ok_or(missing("hipMemGetAllocationPropertiesFromHandle"))?;
        // SAFETY: a valid out-pointer; the runtime checks the handle.
        check("hipMemGetAllocationPropertiesFromHandle", unsafe { f(into, handle) })
    }

    /// `hipMemGetAllocationGranularity` (`option` 1: recommended, 0: minimum).
    pub fn mem_granularity(&self, prop: &MemAllocationProp, option: c_int) -> Result<usize, HipCallError> {
        let f = self.hipMemGetAllocationGranularity.ok_or(missing("hipMemGetAllocationGranularity"))?;
        let mut granularity = 0usize;
        // SAFETY: valid pointers.
        check("hipMemGetAllocationGranularity", unsafe { f(&mut granularity, prop, option) })?;
        Ok(granularity)
    }

    /// `hipMemAddressReserve` (no fixed address, flags 0).
    pub fn mem_address_reserve(&self, size: usize, alignment: usize) -> Result<u64, HipCallError> {
        self.mem_address_reserve_at(size, alignment, 0)
    }

    /// `hipMemAddressReserve` near `hint` (flags 0): the runtime may reserve elsewhere.
    pub fn mem_address_reserve_at(&self, size: usize, alignment: usize, hint: u64) -> Result<u64, HipCallError> {
        let f = self.hipMemAddressReserve.ok_or(missing("hipMemAddressReserve"))?;
        let mut ptr = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; `hint` is only a hint.
        check("hipMemAddressReserve", unsafe { f(&mut ptr, size, alignment, hint as usize as *mut std::ffi::c_void, 0) })?;
        Ok(ptr as u64)
    }

    /// `hipMemAddressFree`.
    pub fn mem_address_free(&self, ptr: u64, size: usize) -> Result<(), HipCallError> {
        let f = self.hipMemAddressFree.ok_or(missing("hipMemAddressFree"))?;
        // SAFETY: device address space only; the runtime checks the range.
        check("hipMemAddressFree", unsafe { f(ptr as *mut c_void, size) })
    }

    /// `hipMemCreate` (flags 0).
    pub fn mem_create(&self, size: usize, prop: &MemAllocationProp) -> Result<u64, HipCallError> {
        let f = self.hipMemCreate.ok_or(missing("hipMemCreate"))?;
        let mut handle = std::ptr::null_mut();
        // SAFETY: valid pointers.
        check("hipMemCreate", unsafe { f(&mut handle, size, prop, 0) })?;
        Ok(handle as u64)
    }

    /// `hipMemRelease`.
    pub fn mem_release(&self, handle: u64) -> Result<(), HipCallError> {
        let f = self.hipMemRelease.ok_or(missing("hipMemRelease"))?;
        // SAFETY: the runtime checks the handle; callers release each once.
        check("hipMemRelease", unsafe { f(handle as *mut c_void) })
    }

    /// `hipMemMap` of the whole allocation (offset 0, flags 0).
    pub fn mem_map(&self, ptr: u64, size: usize, handle: u64) -> Result<(), HipCallError> {
        let f = self.hipMemMap.ok_or(missing("hipMemMap"))?;
        // SAFETY: device address space only; the runtime checks range and handle.
        check("hipMemMap", unsafe { f(ptr as *mut c_void, size, 0, handle as *mut c_void, 0) })
    }

    /// `hipMemUnmap`.
    pub fn mem_unmap(&self, ptr: u64, size: usize) -> Result<(), HipCallError> {
        let f = self.hipMemUnmap.ok_or(missing("hipMemUnmap"))?;
        // SAFETY: device address space only; the runtime checks the range.
        check("hipMemUnmap", unsafe { f(ptr as *mut c_void, size) })
    }

    /// `hipMemSetAccess` with one descriptor.
    pub fn mem_set_access(&self, ptr: u64, size: usize, desc: &MemAccessDesc) -> Result<(), HipCallError> {
        let f = self.hipMemSetAccess.ok_or(missing("hipMemSetAccess"))?;
        // SAFETY: one valid descriptor, count 1; the runtime checks the range.
        check("hipMemSetAccess", unsafe { f(ptr as *mut c_void, size, desc, 1) })
    }
}

/// A failed hiprtc call: which entry point, and its `hiprtcResult`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtcCallError {
    /// The entry point that failed.
    pub call: &'static str,
    /// hiprtc's result.
    pub code: c_int,
}

impl From<RtcCallError> for BackendError {
    fn from(e: RtcCallError) -> Self {
        let name =
            proto_core::hip_error::rtc_name(e.code).map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| format!("hiprtcResult {}", e.code));
        BackendError::Unknown(format!("{}: {name}", e.call))
    }
}

fn check_rtc(call: &'static str, code: c_int) -> Result<(), RtcCallError> {
    if code == 0 {
        Ok(())
    } else {
        Err(RtcCallError { call, code })
    }
}

/// A hiprtc program, destroyed when dropped.
pub struct RtcProgram<'a> {
    api: &'a RtcApi,
    raw: Program,
}

impl RtcApi {
    /// `hiprtcCreateProgram` of `source` named `name`, with in-memory headers
    /// (`header_sources[i]` served as `header_names[i]`; unequal lengths are
    /// `HIPRTC_ERROR_INVALID_INPUT`).
    pub fn create_program(
        &self,
        source: &CStr,
        name: &CStr,
        header_sources: &[CString],
        header_names: &[CString],
    ) -> Result<RtcProgram<'_>, RtcCallError> {
        const CALL: &str = "hiprtcCreateProgram";
        const INVALID_INPUT: c_int = proto_core::hip_error::rtc_code::ERROR_INVALID_INPUT;
        if header_sources.len() != header_names.len() {
            return Err(RtcCallError { call: CALL, code: INVALID_INPUT });
        }
        let count = c_int::try_from(header_sources.len()).map_err(|_| RtcCallError { call: CALL, code: INVALID_INPUT })?;
        let source_ptrs: Vec<*const c_char> = header_sources.iter().map(|s| s.as_ptr()).collect();
        let name_ptrs: Vec<*const c_char> = header_names.iter().map(|s| s.as_ptr()).collect();
        let mut raw: Program = std::ptr::null_mut();
        // SAFETY: every string outlives the call; `count` entries in both arrays.
        check_rtc(CALL, unsafe {
            (self.hiprtcCreateProgram)(&mut raw, source.as_ptr(), name.as_ptr(), count, source_ptrs.as_ptr(), name_ptrs.as_ptr())
        })?;
        Ok(RtcProgram { api: self, raw })
    }
}

impl RtcProgram<'_> {
    /// `hiprtcAddNameExpression`.
    pub fn add_name_expression(&self, expression: &CStr) -> Result<(), RtcCallError> {
        // SAFETY: a live program, a NUL-terminated expression.
        check_rtc("hiprtcAddNameExpression", unsafe { (self.api.hiprtcAddNameExpression)(self.raw, expression.as_ptr()) })
    }

    /// `hiprtcCompileProgram`: `Err` where the program did not compile (the log says why).
    pub fn compile(&self, options: &[CString]) -> Result<(), RtcCallError> {
        let ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
        // SAFETY: a live program; the option strings outlive the call.
        check_rtc("hiprtcCompileProgram", unsafe { (self.api.hiprtcCompileProgram)(self.raw, ptrs.len() as c_int, ptrs.as_ptr()) })
    }

    /// `hiprtcGetProgramLogSize` / `hiprtcGetProgramLog`: the log's bytes (at least one).
    pub fn log(&self) -> Result<Vec<u8>, RtcCallError> {
        let mut len = 0usize;
        // SAFETY: a live program, a valid out-pointer.
        check_rtc("hiprtcGetProgramLogSize", unsafe { (self.api.hiprtcGetProgramLogSize)(self.raw, &mut len) })?;
        let mut log = vec![0u8; len.max(1)];
        // SAFETY: a buffer of the size hiprtc reported.
        check_rtc("hiprtcGetProgramLog", unsafe { (self.api.hiprtcGetProgramLog)(self.raw, log.as_mut_ptr().cast()) })?;
        Ok(log)
    }

    /// `hiprtcGetCodeSize` / `hiprtcGetCode`: the code object.
    pub fn code(&self) -> Result<Vec<u8>, RtcCallError> {
        let mut len = 0usize;
        // SAFETY: a live program, a valid out-pointer.
        check_rtc("hiprtcGetCodeSize", unsafe { (self.api.hiprtcGetCodeSize)(self.raw, &mut len) })?;
        let mut code = vec![0u8; len];
        // SAFETY: a buffer of the size hiprtc reported.
        check_rtc("hiprtcGetCode", unsafe { (self.api.hiprtcGetCode)(self.raw, code.as_mut_ptr().cast()) })?;
        Ok(code)
    }

    /// `hiprtcGetLoweredName` of an expression added before compiling (`None`: hiprtc gave
    /// no name).
    pub fn lowered_name(&self, expression: &CStr) -> Result<Option<String>, RtcCallError> {
        let mut lowered: *const c_char = std::ptr::null();
        // SAFETY: a live program; a NUL-terminated expression; a valid out-pointer.
        check_rtc("hiprtcGetLoweredName", unsafe { (self.api.hiprtcGetLoweredName)(self.raw, expression.as_ptr(), &mut lowered) })?;
        if lowered.is_null() {
            return Ok(None);
        }
        // SAFETY: a NUL-terminated string owned by the program (alive here), copied now.
        Ok(Some(unsafe { CStr::from_ptr(lowered) }.to_string_lossy().into_owned()))
    }
}

impl Drop for RtcProgram<'_> {
    fn drop(&mut self) {
        // SAFETY: created by `create_program`, destroyed once.
        let _ = unsafe { (self.api.hiprtcDestroyProgram)(&mut self.raw) };
    }
}

/// A link in progress (`hipLink*`) with its error log buffer, destroyed when dropped.
pub struct LinkState<'a> {
    api: &'a HipApi,
    raw: LinkStateHandle,
    /// Where the runtime writes its error log (the state keeps a pointer to it).
    error_log: Box<[u8]>,
    /// The options and their values, kept for the state's life (see `link_create`).
    _options: Box<[c_int; 2]>,
    _values: Box<[*mut c_void; 2]>,
}

impl HipApi {
    /// `hipLinkCreate` on the current device, its error log kept in `log_len` bytes.
    pub fn link_create(&self, log_len: usize) -> Result<LinkState<'_>, HipCallError> {
        /// `hipJitOptionErrorLogBuffer`, `hipJitOptionErrorLogBufferSizeBytes`.
        const ERROR_LOG_BUFFER: c_int = 5;
        const ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;
        let create = self.hipLinkCreate.ok_or(missing("hipLinkCreate"))?;
        self.hipLinkDestroy.ok_or(missing("hipLinkDestroy"))?;
        let mut error_log = vec![0u8; log_len].into_boxed_slice();
        let mut options: Box<[c_int; 2]> = Box::new([ERROR_LOG_BUFFER, ERROR_LOG_BUFFER_SIZE_BYTES]);
        let mut values: Box<[*mut c_void; 2]> = Box::new([error_log.as_mut_ptr().cast(), log_len as *mut c_void]);
        let mut raw = std::ptr::null_mut();
        // SAFETY: two options with their values; the arrays and the log buffer are heap
        // allocations that move with the state without moving and outlive it (dropped after
        // it): a linker may read its options until it is destroyed, as CUDA's does.
        check("hipLinkCreate", unsafe { create(2, options.as_mut_ptr(), values.as_mut_ptr(), &mut raw) })?;
        Ok(LinkState { api: self, raw, error_log, _options: options, _values: values })
    }
}

impl LinkState<'_> {
    /// `hipLinkAddData` of one input of `hipJitInputType` `kind` (no per-input options); the
    /// runtime copies the data.
    pub fn add_data(&mut self, kind: c_int, data: &[u8], name: &CStr) -> Result<(), HipCallError> {
        let add = self.api.hipLinkAddData.ok_or(missing("hipLinkAddData"))?;
        // SAFETY: a live link state; `data` is valid for its length during the call (the
        // runtime only reads it); no options.
        check("hipLinkAddData", unsafe {
            add(self.raw, kind, data.as_ptr() as *mut c_void, data.len(), name.as_ptr(), 0, std::ptr::null_mut(), std::ptr::null_mut())
        })
    }

    /// `hipLinkComplete`: a copy of the linked image (`None`: the runtime gave none).
    pub fn complete(&mut self) -> Result<Option<Vec<u8>>, HipCallError> {
        let complete = self.api.hipLinkComplete.ok_or(missing("hipLinkComplete"))?;
        let (mut image, mut size) = (std::ptr::null_mut(), 0usize);
        // SAFETY: a live link state; valid out-pointers. The image belongs to the state.
        check("hipLinkComplete", unsafe { complete(self.raw, &mut image, &mut size) })?;
        if image.is_null() {
            return Ok(None);
        }
        // SAFETY: the runtime's image of `size` bytes, alive until the state is destroyed,
        // copied now.
        Ok(Some(unsafe { std::slice::from_raw_parts(image as *const u8, size) }.to_vec()))
    }

    /// The runtime's error log so far (up to its NUL).
    pub fn error_log(&self) -> String {
        let end = self.error_log.iter().position(|&b| b == 0).unwrap_or(self.error_log.len());
        String::from_utf8_lossy(&self.error_log[..end]).into_owned()
    }
}

impl Drop for LinkState<'_> {
    fn drop(&mut self) {
        if let Some(destroy) = self.api.hipLinkDestroy {
            // SAFETY: the state `link_create` made, destroyed once; the log buffer is freed
            // after.
            let _ = unsafe { destroy(self.raw) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A failed call keeps its `hipError_t` and names its entry point; a missing optional
    /// entry point is `hipErrorNotSupported`, named too.
    #[test]
    fn call_errors_reach_the_client_with_their_code() {
        for code in [hip_code::INVALID_VALUE, hip_code::OUT_OF_MEMORY, hip_code::INVALID_HANDLE, hip_code::ILLEGAL_ADDRESS, hip_code::NOT_READY] {
            let e = BackendError::from(check("hipMemcpyAsync", code).unwrap_err());
            assert_eq!(e.hip_code(), code);
            assert!(e.message().starts_with("hipMemcpyAsync: "), "{e}");
        }
        assert_eq!(check("hipMemcpyAsync", 0), Ok(()));
        let e = BackendError::from(missing("hipGraphCreate"));
        assert_eq!(e.hip_code(), hip_code::NOT_SUPPORTED);
        assert_eq!(e.message(), "the HIP runtime lacks hipGraphCreate");
    }

    /// hiprtc failures reach the client as hipErrorUnknown naming the call and result.
    #[test]
    fn rtc_errors_are_unknown_with_call_and_result_name() {
        let e = BackendError::from(check_rtc("hiprtcGetCode", 4).unwrap_err());
        assert_eq!(e, BackendError::Unknown("hiprtcGetCode: HIPRTC_ERROR_INVALID_PROGRAM".into()));
        let e = BackendError::from(check_rtc("hiprtcGetCode", 9999).unwrap_err());
        assert_eq!(e, BackendError::Unknown("hiprtcGetCode: hiprtcResult 9999".into()));
        assert_eq!(check_rtc("hiprtcGetCode", 0), Ok(()));
    }
}
