//! The cuda backend's result layer: one safe function per CUDA driver entry point the backend
//! calls, each answering `Result` with the driver's own error ([`CudaError`]: the entry
//! point and cudarc's `DriverError`), as cudarc's `driver::result` does. cudarc's functions
//! are used where it has them; the others call `cudarc::driver::sys` here. Families above
//! this file call no raw FFI: every `unsafe` block of the families lives here.
//!
//! Contract of every function: handles (`CUstream`, `CUevent`, `CUmemoryPool`, contexts) are
//! live ones the backend created or retained and has not released — its tables guarantee it,
//! and a stale handle is a bug there, not a value the driver is asked to judge; device
//! addresses are any values (the driver checks them and answers an error); host memory is
//! passed as Rust references or slices, so its length is the one the driver is told.
//! NVIDIA's reference for each call: <https://docs.nvidia.com/cuda/cuda-driver-api/>.

use crate::backend::BackendError;
use cudarc::driver::sys::{self, CUdevice, CUdeviceptr, CUmemoryPool, CUresult, CUstream};
use cudarc::driver::DriverError;

/// A failed driver call: which entry point, and the driver's error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CudaError {
    /// The entry point that failed.
    pub call: &'static str,
    /// The driver's error.
    pub error: DriverError,
}

impl CudaError {
    /// The driver's result code.
    pub fn code(&self) -> CUresult {
        self.error.0
    }
}

impl From<CudaError> for BackendError {
    fn from(e: CudaError) -> Self {
        super::error::map(e.call, e.error)
    }
}

impl std::fmt::Display for CudaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {:?}", self.call, self.error.0)
    }
}

/// `CUresult` → `Result`, naming the entry point.
fn check(call: &'static str, result: CUresult) -> Result<(), CudaError> {
    result.result().map_err(|error| CudaError { call, error })
}

/// Device queries.
pub mod device {
    use super::*;

    /// `cuDeviceGetAttribute`.
    pub fn attribute(dev: CUdevice, attribute: sys::CUdevice_attribute) -> Result<i32, CudaError> {
        let mut v = 0;
        // SAFETY: a valid out-pointer; the driver checks the ordinal and attribute.
        check("cuDeviceGetAttribute", unsafe { sys::cuDeviceGetAttribute(&mut v, attribute, dev) })?;
        Ok(v)
    }

    /// `cuDeviceGetName`.
    pub fn name(dev: CUdevice) -> Result<String, CudaError> {
        let mut name = [0 as std::ffi::c_char; 256];
        // SAFETY: the buffer is 256 bytes, as passed.
        check("cuDeviceGetName", unsafe { sys::cuDeviceGetName(name.as_mut_ptr(), name.len() as i32, dev) })?;
        // The driver NUL-terminates within the buffer; a last NUL of our own bounds it anyway.
        name[name.len() - 1] = 0;
        // SAFETY: NUL-terminated within the buffer (above).
        Ok(unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned())
    }

    /// `cuDeviceTotalMem_v2`.
    pub fn total_mem(dev: CUdevice) -> Result<usize, CudaError> {
        let mut total = 0usize;
        // SAFETY: a valid out-pointer; the driver checks the ordinal.
        check("cuDeviceTotalMem", unsafe { sys::cuDeviceTotalMem_v2(&mut total, dev) })?;
        Ok(total)
    }

    /// `cuDeviceGetUuid_v2`.
    pub fn uuid(dev: CUdevice) -> Result<[u8; 16], CudaError> {
        let mut uuid = sys::CUuuid { bytes: [0; 16] };
        // SAFETY: a valid out-pointer; the driver checks the ordinal.
        check("cuDeviceGetUuid_v2", unsafe { sys::cuDeviceGetUuid_v2(&mut uuid, dev) })?;
        Ok(uuid.bytes.map(|b| b as u8))
    }

    /// `cuDeviceGetP2PAttribute` of `dev` towards `peer`.
    pub fn p2p_attribute(attribute: sys::CUdevice_P2PAttribute, dev: CUdevice, peer: CUdevice) -> Result<i32, CudaError> {
        let mut v = 0;
        // SAFETY: a valid out-pointer; the driver checks the ordinals.
        check("cuDeviceGetP2PAttribute", unsafe { sys::cuDeviceGetP2PAttribute(&mut v, attribute, dev, peer) })?;
        Ok(v)
    }

    /// `cuDeviceGetTexture1DLinearMaxWidth` for one-byte, one-channel elements.
    pub fn texture_1d_linear_max_width(dev: CUdevice) -> Result<usize, CudaError> {
        let mut width = 0usize;
        let format = sys::CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8;
        // SAFETY: a valid out-pointer; the driver checks the ordinal.
        check("cuDeviceGetTexture1DLinearMaxWidth", unsafe { sys::cuDeviceGetTexture1DLinearMaxWidth(&mut width, format, 1, dev) })?;
        Ok(width)
    }
}

/// Peer access between devices and their contexts.
pub mod peer {
    use super::*;

    /// `cuDeviceCanAccessPeer`: whether kernels on `dev` can reach memory of `peer`.
    pub fn can_access(dev: CUdevice, peer: CUdevice) -> Result<bool, CudaError> {
        let mut can = 0;
        // SAFETY: a valid out-pointer; device ordinals are checked by the driver.
        check("cuDeviceCanAccessPeer", unsafe { sys::cuDeviceCanAccessPeer(&mut can, dev, peer) })?;
        Ok(can != 0)
    }

    /// `cuCtxEnablePeerAccess` from the current context to `peer_ctx`'s memory (flags 0).
    pub fn enable(peer_ctx: sys::CUcontext) -> Result<(), CudaError> {
        // SAFETY: `peer_ctx` is a retained primary context (module contract); flags must be 0.
        check("cuCtxEnablePeerAccess", unsafe { sys::cuCtxEnablePeerAccess(peer_ctx, 0) })
    }
}

/// Stream-ordered memory pools (`cuMemAllocAsync`'s).
pub mod mem_pool {
    use super::*;
    use sys::{CUmemAccessDesc, CUmemAccess_flags, CUmemLocation, CUmemLocationType};

    /// `cuDeviceGetMemPool`: the pool `cuMemAllocAsync` allocates from on `dev`.
    pub fn of_device(dev: CUdevice) -> Result<CUmemoryPool, CudaError> {
        // SAFETY: cudarc's wrapper writes the out-pointer it owns; the ordinal is checked by
        // the driver.
        unsafe { cudarc::driver::result::device::get_mem_pool(dev) }.map_err(|error| CudaError { call: "cuDeviceGetMemPool", error })
    }

    fn device_location(ordinal: CUdevice) -> CUmemLocation {
        CUmemLocation { type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, id: ordinal }
    }

    /// `cuMemPoolSetAccess` for one device.
    pub fn set_access(pool: CUmemoryPool, ordinal: CUdevice, flags: CUmemAccess_flags) -> Result<(), CudaError> {
        let desc = CUmemAccessDesc { location: device_location(ordinal), flags };
        // SAFETY: one descriptor, `count` 1; `pool` is live (module contract).
        check("cuMemPoolSetAccess", unsafe { sys::cuMemPoolSetAccess(pool, &desc, 1) })
    }

    /// `cuMemPoolGetAccess` of one device.
    pub fn access(pool: CUmemoryPool, ordinal: CUdevice) -> Result<CUmemAccess_flags, CudaError> {
        let mut flags = CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_NONE;
        let mut location = device_location(ordinal);
        // SAFETY: valid out-pointer and location; `pool` is live (module contract).
        check("cuMemPoolGetAccess", unsafe { sys::cuMemPoolGetAccess(&mut flags, pool, &mut location) })?;
        Ok(flags)
    }
}

/// Stream memory operations (`cuStreamWaitValue*`, `cuStreamWriteValue*`).
pub mod stream_op {
    use super::*;

    /// `cuStreamWaitValue32_v2`.
    pub fn wait32(stream: CUstream, addr: CUdeviceptr, value: u32, flags: u32) -> Result<(), CudaError> {
        // SAFETY: `stream` is live (module contract); the driver checks `addr`.
        check("cuStreamWaitValue32", unsafe { sys::cuStreamWaitValue32_v2(stream, addr, value, flags) })
    }

    /// `cuStreamWaitValue64_v2`.
    pub fn wait64(stream: CUstream, addr: CUdeviceptr, value: u64, flags: u32) -> Result<(), CudaError> {
        // SAFETY: as in `wait32`.
        check("cuStreamWaitValue64", unsafe { sys::cuStreamWaitValue64_v2(stream, addr, value, flags) })
    }

    /// `cuStreamWriteValue32_v2` (flags 0).
    pub fn write32(stream: CUstream, addr: CUdeviceptr, value: u32) -> Result<(), CudaError> {
        // SAFETY: as in `wait32`.
        check("cuStreamWriteValue32", unsafe { sys::cuStreamWriteValue32_v2(stream, addr, value, 0) })
    }

    /// `cuStreamWriteValue64_v2` (flags 0).
    pub fn write64(stream: CUstream, addr: CUdeviceptr, value: u64) -> Result<(), CudaError> {
        // SAFETY: as in `wait32`.
        check("cuStreamWriteValue64", unsafe { sys::cuStreamWriteValue64_v2(stream, addr, value, 0) })
    }
}

/// Device memory.
pub mod mem {
    use super::*;

    /// `CU_MEM_ATTACH_GLOBAL`: every stream may access managed memory.
    const ATTACH_GLOBAL: u32 = 0x1;

    /// `cuMemGetInfo`: (free, total) bytes of the current context's device.
    pub fn info() -> Result<(usize, usize), CudaError> {
        cudarc::driver::result::mem_get_info().map_err(|error| CudaError { call: "cuMemGetInfo", error })
    }

    /// `cuMemAllocManaged`, attached globally; freed with [`free`].
    pub fn alloc_managed(bytes: usize) -> Result<CUdeviceptr, CudaError> {
        let mut ptr = 0;
        // SAFETY: a valid out-pointer; the caller made a context current.
        check("cuMemAllocManaged", unsafe { sys::cuMemAllocManaged(&mut ptr, bytes, ATTACH_GLOBAL) })?;
        Ok(ptr)
    }

    /// `cuMemFree`.
    pub fn free(ptr: CUdeviceptr) -> Result<(), CudaError> {
        // SAFETY: the driver refuses addresses that are not allocation bases; callers free
        // each allocation once, after taking it out of the backend's tables.
        unsafe { cudarc::driver::result::free_sync(ptr) }.map_err(|error| CudaError { call: "cuMemFree", error })
    }

    /// `cuMemsetD2D{8,16,32}Async`: `height` rows of `width` elements, `pitch` bytes apart.
    pub fn set_2d_async(
        ptr: CUdeviceptr,
        pitch: usize,
        pattern: crate::backend::MemsetPattern,
        width: usize,
        height: usize,
        stream: CUstream,
    ) -> Result<(), CudaError> {
        use crate::backend::MemsetPattern;
        // SAFETY: `stream` is live (module contract); the driver checks the device range.
        let result = unsafe {
            match pattern {
                MemsetPattern::U8(v) => sys::cuMemsetD2D8Async(ptr, pitch, v, width, height, stream),
                MemsetPattern::U16(v) => sys::cuMemsetD2D16Async(ptr, pitch, v, width, height, stream),
                MemsetPattern::U32(v) => sys::cuMemsetD2D32Async(ptr, pitch, v, width, height, stream),
            }
        };
        check("cuMemsetD2DAsync", result)
    }

    /// `cuMemsetD8Async`.
    pub fn set_d8_async(ptr: CUdeviceptr, value: u8, len: usize, stream: CUstream) -> Result<(), CudaError> {
        // SAFETY: `stream` is live (module contract); the driver checks the device range.
        check("cuMemsetD8Async", unsafe { sys::cuMemsetD8Async(ptr, value, len, stream) })
    }

    /// `cuMemsetD{8,16,32}Async` of `count` elements (named `cuMemsetAsync` in errors).
    pub fn set_async(ptr: CUdeviceptr, pattern: crate::backend::MemsetPattern, count: usize, stream: CUstream) -> Result<(), CudaError> {
        use crate::backend::MemsetPattern;
        // SAFETY: `stream` is live (module contract); the driver checks the device range.
        let result = unsafe {
            match pattern {
                MemsetPattern::U8(v) => sys::cuMemsetD8Async(ptr, v, count, stream),
                MemsetPattern::U16(v) => sys::cuMemsetD16Async(ptr, v, count, stream),
                MemsetPattern::U32(v) => sys::cuMemsetD32Async(ptr, v, count, stream),
            }
        };
        check("cuMemsetAsync", result)
    }

    /// `cuMemAlloc_v2` in the current context; freed with [`free`].
    pub fn alloc(bytes: usize) -> Result<CUdeviceptr, CudaError> {
        // SAFETY: cudarc's wrapper writes the out-pointer it owns; the caller made a context
        // current.
        unsafe { cudarc::driver::result::malloc_sync(bytes) }.map_err(|error| CudaError { call: "cuMemAlloc", error })
    }

    /// `cuMemAllocAsync` from the device's default pool, in `stream`'s order; freed with
    /// [`free_async`].
    pub fn alloc_async(bytes: usize, stream: CUstream) -> Result<CUdeviceptr, CudaError> {
        let mut ptr = 0;
        // SAFETY: a valid out-pointer; `stream` is live (module contract).
        check("cuMemAllocAsync", unsafe { sys::cuMemAllocAsync(&mut ptr, bytes, stream) })?;
        Ok(ptr)
    }

    /// `cuMemFreeAsync`: the driver frees `ptr` once `stream`'s earlier work is done.
    pub fn free_async(ptr: CUdeviceptr, stream: CUstream) -> Result<(), CudaError> {
        // SAFETY: `stream` is live (module contract); the driver refuses addresses that are
        // not pool allocations; callers free each once, after taking it out of their tables.
        check("cuMemFreeAsync", unsafe { sys::cuMemFreeAsync(ptr, stream) })
    }

    /// `cuMemcpyHtoDAsync_v2` of `len` bytes from host memory at `src`.
    ///
    /// # Safety
    /// `src..src + len` is readable host memory that stays alive and unchanged until `stream`
    /// has passed the copy (pinned or registered memory: the DMA runs later).
    pub unsafe fn copy_htod_async(dst: CUdeviceptr, src: *const u8, len: usize, stream: CUstream) -> Result<(), CudaError> {
        // SAFETY: the source range is the caller's contract; `stream` is live.
        check("cuMemcpyHtoDAsync", unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src.cast(), len, stream) })
    }

    /// `cuMemcpyDtoHAsync_v2` of `len` bytes into host memory at `dst`.
    ///
    /// # Safety
    /// `dst..dst + len` is writable host memory that stays alive, and is neither read nor
    /// written by anyone else, until `stream` has passed the copy.
    pub unsafe fn copy_dtoh_async(dst: *mut u8, src: CUdeviceptr, len: usize, stream: CUstream) -> Result<(), CudaError> {
        // SAFETY: the destination range is the caller's contract; `stream` is live.
        check("cuMemcpyDtoHAsync", unsafe { sys::cuMemcpyDtoHAsync_v2(dst.cast(), src, len, stream) })
    }

    /// `cuMemcpyDtoDAsync_v2`.
    pub fn copy_dtod_async(dst: CUdeviceptr, src: CUdeviceptr, len: usize, stream: CUstream) -> Result<(), CudaError> {
        // SAFETY: device memory only (the driver checks both ranges); `stream` is live.
        check("cuMemcpyDtoDAsync", unsafe { sys::cuMemcpyDtoDAsync_v2(dst, src, len, stream) })
    }

    /// `cuMemcpyPeerAsync` between the memory of two contexts.
    pub fn copy_peer_async(
        dst: CUdeviceptr,
        dst_ctx: sys::CUcontext,
        src: CUdeviceptr,
        src_ctx: sys::CUcontext,
        len: usize,
        stream: CUstream,
    ) -> Result<(), CudaError> {
        // SAFETY: device memory only (the driver checks both ranges); retained contexts and a
        // live stream (module contract).
        check("cuMemcpyPeerAsync", unsafe { sys::cuMemcpyPeerAsync(dst, dst_ctx, src, src_ctx, len, stream) })
    }

    /// One side of a 2D copy: host memory or device memory, with its row pitch.
    pub enum Side2d {
        /// A host address and pitch.
        Host(*mut std::ffi::c_void, usize),
        /// A device address and pitch.
        Device(CUdeviceptr, usize),
    }

    /// The `CUDA_MEMCPY2D` description of copying `height` rows of `width` bytes. Every field
    /// is written out: `CUmemorytype` has no zero value, so an all-zero struct is not a valid
    /// one (`mem::zeroed` of it panics, and the panic cannot unwind out of the driver-facing
    /// code: it aborted the worker on the H100).
    pub fn copy_2d_desc(src: Side2d, dst: Side2d, width: usize, height: usize) -> sys::CUDA_MEMCPY2D {
        use std::ffi::c_void;
        use sys::CUmemorytype::{CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST};
        let (src_type, src_host, src_device, src_pitch) = match src {
            Side2d::Host(ptr, pitch) => (CU_MEMORYTYPE_HOST, ptr as *const c_void, 0, pitch),
            Side2d::Device(ptr, pitch) => (CU_MEMORYTYPE_DEVICE, std::ptr::null(), ptr, pitch),
        };
        let (dst_type, dst_host, dst_device, dst_pitch) = match dst {
            Side2d::Host(ptr, pitch) => (CU_MEMORYTYPE_HOST, ptr, 0, pitch),
            Side2d::Device(ptr, pitch) => (CU_MEMORYTYPE_DEVICE, std::ptr::null_mut(), ptr, pitch),
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

    /// `cuMemcpy2DAsync_v2`.
    ///
    /// # Safety
    /// Every host range `copy` names (rows of `WidthInBytes`, `Pitch` apart) stays alive until
    /// `stream` has passed the copy; a host destination is touched by nobody else until then.
    pub unsafe fn copy_2d_async(copy: &sys::CUDA_MEMCPY2D, stream: CUstream) -> Result<(), CudaError> {
        // SAFETY: host ranges are the caller's contract; the driver checks device ranges;
        // `stream` is live.
        check("cuMemcpy2DAsync", unsafe { sys::cuMemcpy2DAsync_v2(copy, stream) })
    }

    /// `cuMemcpy2DAsync_v2` between two pitched device areas.
    pub fn copy_2d_dtod_async(
        dst: CUdeviceptr,
        dst_pitch: usize,
        src: CUdeviceptr,
        src_pitch: usize,
        width: usize,
        height: usize,
        stream: CUstream,
    ) -> Result<(), CudaError> {
        let copy = copy_2d_desc(Side2d::Device(src, src_pitch), Side2d::Device(dst, dst_pitch), width, height);
        // SAFETY: both sides are device memory (the driver checks them): no host range.
        unsafe { copy_2d_async(&copy, stream) }
    }
}

/// Copies between the memory of two contexts in 2D.
pub mod peer_copy {
    use super::*;

    /// `cuMemcpy3DPeerAsync` of `height` rows of `width` bytes (one slice) between device
    /// memory of two contexts.
    #[allow(clippy::too_many_arguments)] // each side is an address, a pitch and a context
    pub fn copy_2d_async(
        dst: CUdeviceptr,
        dst_pitch: usize,
        dst_ctx: sys::CUcontext,
        src: CUdeviceptr,
        src_pitch: usize,
        src_ctx: sys::CUcontext,
        width: usize,
        height: usize,
        stream: CUstream,
    ) -> Result<(), CudaError> {
        use sys::CUmemorytype::CU_MEMORYTYPE_DEVICE;
        // Every field written out: `CUmemorytype` has no zero value.
        let copy = sys::CUDA_MEMCPY3D_PEER {
            srcXInBytes: 0,
            srcY: 0,
            srcZ: 0,
            srcLOD: 0,
            srcMemoryType: CU_MEMORYTYPE_DEVICE,
            srcHost: std::ptr::null(),
            srcDevice: src,
            srcArray: std::ptr::null_mut(),
            srcContext: src_ctx,
            srcPitch: src_pitch,
            srcHeight: height,
            dstXInBytes: 0,
            dstY: 0,
            dstZ: 0,
            dstLOD: 0,
            dstMemoryType: CU_MEMORYTYPE_DEVICE,
            dstHost: std::ptr::null_mut(),
            dstDevice: dst,
            dstArray: std::ptr::null_mut(),
            dstContext: dst_ctx,
            dstPitch: dst_pitch,
            dstHeight: height,
            WidthInBytes: width,
            Height: height,
            Depth: 1,
        };
        // SAFETY: a fully initialised description of device memory only (the driver checks
        // both ranges), retained contexts and a live stream.
        check("cuMemcpy3DPeerAsync", unsafe { sys::cuMemcpy3DPeerAsync(&copy, stream) })
    }
}

/// Events.
pub mod event {
    use super::*;
    use sys::CUevent;

    /// `cuEventCreate` in the current context.
    pub fn create(flags: u32) -> Result<CUevent, CudaError> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the driver checks the flags.
        check("cuEventCreate", unsafe { sys::cuEventCreate(&mut raw, flags) })?;
        Ok(raw)
    }

    /// `cuEventDestroy_v2`: callers destroy each event once, after taking it out of their
    /// tables.
    pub fn destroy(event: CUevent) -> Result<(), CudaError> {
        // SAFETY: `event` is live (module contract).
        check("cuEventDestroy", unsafe { sys::cuEventDestroy_v2(event) })
    }

    /// `cuEventRecord`.
    pub fn record(event: CUevent, stream: CUstream) -> Result<(), CudaError> {
        // SAFETY: live event and stream (module contract).
        check("cuEventRecord", unsafe { sys::cuEventRecord(event, stream) })
    }

    /// `cuEventSynchronize`.
    pub fn synchronize(event: CUevent) -> Result<(), CudaError> {
        // SAFETY: `event` is live (module contract).
        check("cuEventSynchronize", unsafe { sys::cuEventSynchronize(event) })
    }

    /// `cuEventQuery`: `Ok(true)` done, `Ok(false)` not yet (`CUDA_ERROR_NOT_READY`).
    pub fn query(event: CUevent) -> Result<bool, CudaError> {
        // SAFETY: `event` is live (module contract).
        match unsafe { sys::cuEventQuery(event) } {
            CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            result => check("cuEventQuery", result).map(|()| true),
        }
    }

    /// `cuEventElapsedTime` in milliseconds.
    pub fn elapsed_ms(start: CUevent, end: CUevent) -> Result<f32, CudaError> {
        // SAFETY: both live (module contract); cudarc writes its own out-pointer.
        unsafe { cudarc::driver::result::event::elapsed(start, end) }.map_err(|error| CudaError { call: "cuEventElapsedTime", error })
    }
}

/// Streams.
pub mod stream {
    use super::*;

    /// `cuStreamSynchronize`.
    pub fn synchronize(stream: CUstream) -> Result<(), CudaError> {
        // SAFETY: `stream` is live (module contract).
        check("cuStreamSynchronize", unsafe { sys::cuStreamSynchronize(stream) })
    }

    /// `cuStreamCreate` in the current context.
    pub fn create(flags: u32) -> Result<CUstream, CudaError> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the driver checks the flags.
        check("cuStreamCreate", unsafe { sys::cuStreamCreate(&mut raw, flags) })?;
        Ok(raw)
    }

    /// `cuStreamCreateWithPriority` in the current context.
    pub fn create_with_priority(flags: u32, priority: i32) -> Result<CUstream, CudaError> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the driver checks flags and priority.
        check("cuStreamCreateWithPriority", unsafe { sys::cuStreamCreateWithPriority(&mut raw, flags, priority) })?;
        Ok(raw)
    }

    /// `cuStreamDestroy_v2`: callers destroy each stream once, after taking it out of their
    /// tables.
    pub fn destroy(stream: CUstream) -> Result<(), CudaError> {
        // SAFETY: `stream` is live (module contract).
        check("cuStreamDestroy", unsafe { sys::cuStreamDestroy_v2(stream) })
    }

    /// `cuStreamQuery`: `Ok(true)` idle, `Ok(false)` work pending (`CUDA_ERROR_NOT_READY`).
    pub fn query(stream: CUstream) -> Result<bool, CudaError> {
        // SAFETY: `stream` is live (module contract).
        match unsafe { sys::cuStreamQuery(stream) } {
            CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            result => check("cuStreamQuery", result).map(|()| true),
        }
    }

    /// `cuStreamWaitEvent` (flags 0).
    pub fn wait_event(stream: CUstream, event: sys::CUevent) -> Result<(), CudaError> {
        // SAFETY: live stream and event (module contract).
        check("cuStreamWaitEvent", unsafe { sys::cuStreamWaitEvent(stream, event, 0) })
    }

    /// `cuCtxGetStreamPriorityRange` of the current context: (least, greatest).
    pub fn priority_range() -> Result<(i32, i32), CudaError> {
        let (mut least, mut greatest) = (0, 0);
        // SAFETY: valid out-pointers.
        check("cuCtxGetStreamPriorityRange", unsafe { sys::cuCtxGetStreamPriorityRange(&mut least, &mut greatest) })?;
        Ok((least, greatest))
    }

    /// `cuStreamGetFlags`.
    pub fn flags(stream: CUstream) -> Result<u32, CudaError> {
        let mut flags = 0;
        // SAFETY: `stream` is live (module contract); a valid out-pointer.
        check("cuStreamGetFlags", unsafe { sys::cuStreamGetFlags(stream, &mut flags) })?;
        Ok(flags)
    }

    /// `cuStreamGetPriority`.
    pub fn priority(stream: CUstream) -> Result<i32, CudaError> {
        let mut priority = 0;
        // SAFETY: `stream` is live (module contract); a valid out-pointer.
        check("cuStreamGetPriority", unsafe { sys::cuStreamGetPriority(stream, &mut priority) })?;
        Ok(priority)
    }
}

/// Virtual memory management (`cuMemAddressReserve`, `cuMemCreate`, `cuMemMap`, ...).
/// Reservations and mappings are device address space: the driver checks every address and
/// handle value against its own tables and answers an error.
pub mod vmm {
    use super::*;
    use sys::{CUmemAccessDesc, CUmemAllocationGranularity_flags, CUmemAllocationProp, CUmemGenericAllocationHandle};

    /// An all-zero `CUmemAllocationProp`, its documented default.
    pub fn zeroed_prop() -> CUmemAllocationProp {
        // SAFETY: a plain C struct of integers and enums whose zero value is valid.
        unsafe { std::mem::zeroed() }
    }

    /// `cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED)`.
    pub fn posix_fd_supported(dev: CUdevice) -> Result<bool, CudaError> {
        let mut supported = 0;
        let attribute = sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED;
        // SAFETY: a valid out-pointer; the driver checks the ordinal.
        check("cuDeviceGetAttribute", unsafe { sys::cuDeviceGetAttribute(&mut supported, attribute, dev) })?;
        Ok(supported != 0)
    }

    /// `cuMemGetAllocationPropertiesFromHandle`.
    pub fn properties_of(handle: CUmemGenericAllocationHandle) -> Result<CUmemAllocationProp, CudaError> {
        let mut prop = zeroed_prop();
        // SAFETY: a valid out-pointer; the driver checks the handle.
        check("cuMemGetAllocationPropertiesFromHandle", unsafe { sys::cuMemGetAllocationPropertiesFromHandle(&mut prop, handle) })?;
        Ok(prop)
    }

    /// `cuMemGetAllocationGranularity`.
    pub fn granularity(prop: &CUmemAllocationProp, option: CUmemAllocationGranularity_flags) -> Result<usize, CudaError> {
        let mut granularity = 0usize;
        // SAFETY: valid pointers.
        check("cuMemGetAllocationGranularity", unsafe { sys::cuMemGetAllocationGranularity(&mut granularity, prop, option) })?;
        Ok(granularity)
    }

    /// `cuMemAddressReserve` (no fixed address, flags 0).
    pub fn reserve(size: usize, alignment: usize) -> Result<CUdeviceptr, CudaError> {
        reserve_at(size, alignment, 0)
    }

    /// `cuMemAddressReserve` near `hint` (flags 0): the driver may reserve elsewhere.
    pub fn reserve_at(size: usize, alignment: usize, hint: CUdeviceptr) -> Result<CUdeviceptr, CudaError> {
        let mut ptr = 0;
        // SAFETY: a valid out-pointer; `hint` is only a hint.
        check("cuMemAddressReserve", unsafe { sys::cuMemAddressReserve(&mut ptr, size, alignment, hint, 0) })?;
        Ok(ptr)
    }

    /// `cuMemAddressFree`.
    pub fn free_reservation(ptr: CUdeviceptr, size: usize) -> Result<(), CudaError> {
        // SAFETY: device address space only; the driver checks the range.
        check("cuMemAddressFree", unsafe { sys::cuMemAddressFree(ptr, size) })
    }

    /// `cuMemCreate` (flags 0).
    pub fn create(size: usize, prop: &CUmemAllocationProp) -> Result<CUmemGenericAllocationHandle, CudaError> {
        let mut handle = 0;
        // SAFETY: valid pointers.
        check("cuMemCreate", unsafe { sys::cuMemCreate(&mut handle, size, prop, 0) })?;
        Ok(handle)
    }

    /// `cuMemRelease`.
    pub fn release(handle: CUmemGenericAllocationHandle) -> Result<(), CudaError> {
        // SAFETY: the driver checks the handle; callers release each once.
        check("cuMemRelease", unsafe { sys::cuMemRelease(handle) })
    }

    /// `cuMemMap` of the whole allocation (offset 0, flags 0).
    pub fn map(ptr: CUdeviceptr, size: usize, handle: CUmemGenericAllocationHandle) -> Result<(), CudaError> {
        // SAFETY: device address space only; the driver checks range and handle.
        check("cuMemMap", unsafe { sys::cuMemMap(ptr, size, 0, handle, 0) })
    }

    /// `cuMemUnmap`.
    pub fn unmap(ptr: CUdeviceptr, size: usize) -> Result<(), CudaError> {
        // SAFETY: device address space only; the driver checks the range.
        check("cuMemUnmap", unsafe { sys::cuMemUnmap(ptr, size) })
    }

    /// `cuMemSetAccess` with one descriptor.
    pub fn set_access(ptr: CUdeviceptr, size: usize, desc: &CUmemAccessDesc) -> Result<(), CudaError> {
        // SAFETY: one valid descriptor, count 1; the driver checks the range.
        check("cuMemSetAccess", unsafe { sys::cuMemSetAccess(ptr, size, desc, 1) })
    }
}

/// The current context.
pub mod ctx {
    use super::*;

    /// `cuCtxSynchronize`: waits for all work of the current context.
    pub fn synchronize() -> Result<(), CudaError> {
        cudarc::driver::result::ctx::synchronize().map_err(|error| CudaError { call: "cuCtxSynchronize", error })
    }
}

/// Modules and their functions and globals.
pub mod module {
    use super::*;
    use std::ffi::CStr;
    use sys::{CUfunction, CUmodule};

    /// `cuModuleLoadData` in the current context.
    ///
    /// The image is read during the call only (the driver copies what it keeps); a PTX image
    /// must end in NUL, which callers append.
    pub fn load_data(image: &[u8]) -> Result<CUmodule, CudaError> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; `image` is a complete image in memory for the call.
        check("cuModuleLoadData", unsafe { sys::cuModuleLoadData(&mut raw, image.as_ptr().cast()) })?;
        Ok(raw)
    }

    /// `cuModuleUnload`: callers unload each module once, after taking it out of their tables.
    pub fn unload(module: CUmodule) -> Result<(), CudaError> {
        // SAFETY: `module` is live (module contract).
        check("cuModuleUnload", unsafe { sys::cuModuleUnload(module) })
    }

    /// `cuModuleGetFunction`.
    pub fn function(module: CUmodule, name: &CStr) -> Result<CUfunction, CudaError> {
        let mut f = std::ptr::null_mut();
        // SAFETY: a live module; a NUL-terminated name; a valid out-pointer.
        check("cuModuleGetFunction", unsafe { sys::cuModuleGetFunction(&mut f, module, name.as_ptr()) })?;
        Ok(f)
    }

    /// `cuModuleGetGlobal_v2`: (address, bytes).
    pub fn global(module: CUmodule, name: &CStr) -> Result<(CUdeviceptr, usize), CudaError> {
        let (mut ptr, mut size) = (0, 0usize);
        // SAFETY: a live module; a NUL-terminated name; valid out-pointers.
        check("cuModuleGetGlobal", unsafe { sys::cuModuleGetGlobal_v2(&mut ptr, &mut size, module, name.as_ptr()) })?;
        Ok((ptr, size))
    }

    /// `cuModuleGetFunctionCount` (CUDA 12.4).
    pub fn function_count(module: CUmodule) -> Result<u32, CudaError> {
        let mut n = 0;
        // SAFETY: a live module; a valid out-pointer.
        check("cuModuleGetFunctionCount", unsafe { sys::cuModuleGetFunctionCount(&mut n, module) })?;
        Ok(n)
    }

    /// `cuModuleEnumerateFunctions` (CUDA 12.4): the first `count` functions.
    pub fn functions(module: CUmodule, count: u32) -> Result<Vec<CUfunction>, CudaError> {
        let mut functions: Vec<CUfunction> = vec![std::ptr::null_mut(); count as usize];
        // SAFETY: a live module; the array holds `count` entries, as passed.
        check("cuModuleEnumerateFunctions", unsafe { sys::cuModuleEnumerateFunctions(functions.as_mut_ptr(), count, module) })?;
        Ok(functions)
    }
}

/// Functions (kernels): attributes, parameters, names.
pub mod func {
    use super::*;
    use sys::{CUfunction, CUfunction_attribute};

    /// `cuFuncGetAttribute`.
    pub fn attribute(f: CUfunction, attribute: CUfunction_attribute) -> Result<i32, CudaError> {
        let mut v = 0;
        // SAFETY: a live function (module contract) and a valid out-pointer.
        check("cuFuncGetAttribute", unsafe { sys::cuFuncGetAttribute(&mut v, attribute, f) })?;
        Ok(v)
    }

    /// `cuFuncSetAttribute` (the driver validates the value).
    pub fn set_attribute(f: CUfunction, attribute: CUfunction_attribute, value: i32) -> Result<(), CudaError> {
        // SAFETY: a live function of the current context (module contract).
        check("cuFuncSetAttribute", unsafe { sys::cuFuncSetAttribute(f, attribute, value) })
    }

    /// `cuFuncGetParamInfo`: (offset, size) of parameter `index`; past the last parameter the
    /// driver answers `CUDA_ERROR_INVALID_VALUE`.
    pub fn param_info(f: CUfunction, index: usize) -> Result<(usize, usize), CudaError> {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: a live function; valid out-pointers.
        check("cuFuncGetParamInfo", unsafe { sys::cuFuncGetParamInfo(f, index, &mut offset, &mut size) })?;
        Ok((offset, size))
    }

    /// `cuFuncGetName` (CUDA 12.3): `None` when the driver gives no name.
    pub fn name(f: CUfunction) -> Result<Option<String>, CudaError> {
        let mut name = std::ptr::null();
        // SAFETY: a live function; a valid out-pointer.
        check("cuFuncGetName", unsafe { sys::cuFuncGetName(&mut name, f) })?;
        if name.is_null() {
            return Ok(None);
        }
        // SAFETY: a NUL-terminated name owned by the function's module, copied at once.
        Ok(Some(unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy().into_owned()))
    }
}

/// Kernel launches.
pub mod launch {
    use super::*;
    use crate::backend::{LaunchConfig, ParamLayout};
    use std::ffi::c_void;
    use sys::CUfunction;

    /// `CU_LAUNCH_PARAM_BUFFER_POINTER`, `_SIZE` and `_END`: the markers of `extra`.
    const BUFFER_POINTER: usize = 1;
    const BUFFER_SIZE: usize = 2;
    const END: usize = 0;

    /// `extra` for `cuLaunchKernel` / kernel nodes: the packed blob `args` (of `*size` bytes,
    /// `size` kept alive by the caller), read by the driver during the call only.
    pub(super) fn packed_extra(args: &[u8], size: &mut usize) -> [*mut c_void; 5] {
        *size = args.len();
        [
            BUFFER_POINTER as *mut c_void,
            // The driver only reads the blob (CUDA's `extra` array is not const-qualified).
            args.as_ptr().cast_mut().cast(),
            BUFFER_SIZE as *mut c_void,
            (size as *mut usize).cast(),
            END as *mut c_void,
        ]
    }

    /// `cuLaunchKernel` with the client's packed arguments (`extra`), exactly as packed.
    pub fn kernel(f: CUfunction, config: &LaunchConfig, stream: CUstream, args: &[u8]) -> Result<(), CudaError> {
        let mut size = 0;
        let mut extra = packed_extra(args, &mut size);
        let [gx, gy, gz] = config.grid;
        let [bx, by, bz] = config.block;
        // SAFETY: a live function of the current context and a live stream (module
        // contract); `extra` describes `args` by its true length, alive for the call (the
        // driver copies the arguments at launch).
        check("cuLaunchKernel", unsafe {
            sys::cuLaunchKernel(f, gx, gy, gz, bx, by, bz, config.shared_mem, stream, std::ptr::null_mut(), extra.as_mut_ptr())
        })
    }

    /// `cuLaunchCooperativeKernel`: one pointer per parameter of `params`, into `args`; a
    /// parameter reaching past `args` is `CUDA_ERROR_INVALID_VALUE` (callers check first).
    pub fn cooperative(f: CUfunction, config: &LaunchConfig, stream: CUstream, args: &mut [u8], params: &[ParamLayout]) -> Result<(), CudaError> {
        let fits = |p: &ParamLayout| (p.offset as usize).checked_add(p.size as usize).is_some_and(|end| end <= args.len());
        if !params.iter().all(fits) {
            return Err(CudaError { call: "cuLaunchCooperativeKernel", error: DriverError(CUresult::CUDA_ERROR_INVALID_VALUE) });
        }
        let base = args.as_mut_ptr();
        let mut pointers: Vec<*mut c_void> = params.iter().map(|p| base.wrapping_add(p.offset as usize).cast()).collect();
        let [gx, gy, gz] = config.grid;
        let [bx, by, bz] = config.block;
        // SAFETY: a live function and stream (module contract); each pointer addresses its
        // parameter's bytes inside `args` (checked above), alive for the call (the driver
        // copies them).
        check("cuLaunchCooperativeKernel", unsafe {
            sys::cuLaunchCooperativeKernel(f, gx, gy, gz, bx, by, bz, config.shared_mem, stream, pointers.as_mut_ptr())
        })
    }
}

/// Occupancy queries.
pub mod occupancy {
    use super::*;
    use sys::CUfunction;

    /// `cuOccupancyMaxActiveBlocksPerMultiprocessor`.
    pub fn max_active_blocks(f: CUfunction, block_size: i32, dynamic_shared: usize) -> Result<i32, CudaError> {
        let mut n = 0;
        // SAFETY: a live function (module contract); a valid out-pointer.
        check("cuOccupancyMaxActiveBlocksPerMultiprocessor", unsafe {
            sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut n, f, block_size, dynamic_shared)
        })?;
        Ok(n)
    }

    /// `cuOccupancyMaxPotentialBlockSize` (no per-block-size callback): (grid, block).
    pub fn max_potential_block_size(f: CUfunction, dynamic_shared: usize, limit: i32) -> Result<(i32, i32), CudaError> {
        let (mut grid, mut block) = (0, 0);
        // SAFETY: a live function (module contract); valid out-pointers.
        check("cuOccupancyMaxPotentialBlockSize", unsafe {
            sys::cuOccupancyMaxPotentialBlockSize(&mut grid, &mut block, f, None, dynamic_shared, limit)
        })?;
        Ok((grid, block))
    }
}

/// Graphs: a `CUgraph` built node by node, instantiated into a `CUgraphExec`.
pub mod graph {
    use super::*;
    use crate::backend::LaunchConfig;
    use sys::{CUcontext, CUevent, CUfunction, CUgraph, CUgraphExec, CUgraphNode};

    /// A `CUgraph` this module created, destroyed when dropped (an executable graph made from
    /// it does not need it).
    pub struct Graph(CUgraph);

    impl Drop for Graph {
        fn drop(&mut self) {
            // SAFETY: a graph `create` made and nothing else holds, destroyed once.
            unsafe { sys::cuGraphDestroy(self.0) };
        }
    }

    /// A node of the graph: `Ok(node)` from the driver's result and its out-parameter.
    fn node(call: &'static str, result: CUresult, node: CUgraphNode) -> Result<CUgraphNode, CudaError> {
        check(call, result).map(|()| node)
    }

    impl Graph {
        /// `cuGraphCreate` (flags 0).
        pub fn create() -> Result<Self, CudaError> {
            let mut raw: CUgraph = std::ptr::null_mut();
            // SAFETY: a valid out-pointer; flags must be 0.
            check("cuGraphCreate", unsafe { sys::cuGraphCreate(&mut raw, 0) })?;
            Ok(Self(raw))
        }

        /// What `work` queues on `stream`, captured as a graph (`cuStreamBeginCapture_v2` in
        /// relaxed mode, `work`, `cuStreamEndCapture`); the stream captures no more afterwards,
        /// even when `work` fails.
        pub fn capture<E: From<CudaError>>(stream: sys::CUstream, work: impl FnOnce() -> Result<(), E>) -> Result<Self, E> {
            // SAFETY: `stream` is live (module contract) and not capturing.
            check("cuStreamBeginCapture", unsafe { sys::cuStreamBeginCapture_v2(stream, sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED) })?;
            let worked = work();
            let mut raw: CUgraph = std::ptr::null_mut();
            // SAFETY: the stream began capturing above; a valid out-pointer.
            let ended = check("cuStreamEndCapture", unsafe { sys::cuStreamEndCapture(stream, &mut raw) });
            // The captured graph is this object's from here on, whatever else failed.
            let graph = (!raw.is_null()).then_some(Self(raw));
            worked?;
            ended?;
            graph.ok_or_else(|| {
                E::from(CudaError { call: "cuStreamEndCapture", error: cudarc::driver::DriverError(CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) })
            })
        }

        /// `cuGraphAddChildGraphNode`: a node running a copy of `child` after `deps`.
        pub fn add_child_graph_node(&self, deps: &[CUgraphNode], child: &Graph) -> Result<CUgraphNode, CudaError> {
            let mut n = std::ptr::null_mut();
            // SAFETY: `deps` are nodes of this graph; `child` is a live graph the driver copies.
            let r = unsafe { sys::cuGraphAddChildGraphNode(&mut n, self.0, deps.as_ptr(), deps.len(), child.0) };
            node("cuGraphAddChildGraphNode", r, n)
        }

        /// `cuGraphAddKernelNode_v2` with the client's packed arguments (`extra`), after
        /// `deps` (nodes of this graph).
        pub fn add_kernel_node(&self, deps: &[CUgraphNode], f: CUfunction, config: &LaunchConfig, args: &[u8]) -> Result<CUgraphNode, CudaError> {
            let mut size = 0;
            let mut extra = super::launch::packed_extra(args, &mut size);
            // SAFETY: a C struct of integers and pointers, for which all zeros is the "not
            // given" value of every optional field (kern, ctx).
            let mut params: sys::CUDA_KERNEL_NODE_PARAMS = unsafe { std::mem::zeroed() };
            params.func = f;
            [params.gridDimX, params.gridDimY, params.gridDimZ] = config.grid;
            [params.blockDimX, params.blockDimY, params.blockDimZ] = config.block;
            params.sharedMemBytes = config.shared_mem;
            params.extra = extra.as_mut_ptr();
            let mut n = std::ptr::null_mut();
            // SAFETY: a live function (module contract); `extra` describes `args` by its true
            // length, alive for the call (the driver copies the arguments into the node);
            // `deps` are nodes of this graph.
            let r = unsafe { sys::cuGraphAddKernelNode_v2(&mut n, self.0, deps.as_ptr(), deps.len(), &params) };
            node("cuGraphAddKernelNode", r, n)
        }

        /// `cuGraphAddMemsetNode`: `height` rows of `width` elements of `element_size` bytes,
        /// `pitch` bytes apart, in `ctx`.
        #[allow(clippy::too_many_arguments)]
        pub fn add_memset_node(
            &self,
            deps: &[CUgraphNode],
            dst: CUdeviceptr,
            pitch: usize,
            element_size: u32,
            value: u32,
            width: usize,
            height: usize,
            ctx: CUcontext,
        ) -> Result<CUgraphNode, CudaError> {
            // SAFETY: plain C struct; every field is set below or zero by design.
            let mut params: sys::CUDA_MEMSET_NODE_PARAMS = unsafe { std::mem::zeroed() };
            params.dst = dst;
            params.pitch = pitch;
            params.elementSize = element_size;
            params.value = value;
            params.width = width;
            params.height = height;
            let mut n = std::ptr::null_mut();
            // SAFETY: device memory only (the driver checks it); `ctx` is retained (module
            // contract); `deps` are nodes of this graph.
            let r = unsafe { sys::cuGraphAddMemsetNode(&mut n, self.0, deps.as_ptr(), deps.len(), &params, ctx) };
            node("cuGraphAddMemsetNode", r, n)
        }

        /// `cuGraphAddMemcpyNode` of `len` bytes from device memory to device memory, in `ctx`.
        pub fn add_memcpy_dtod_node(
            &self,
            deps: &[CUgraphNode],
            dst: CUdeviceptr,
            src: CUdeviceptr,
            len: usize,
            ctx: CUcontext,
        ) -> Result<CUgraphNode, CudaError> {
            use sys::CUmemorytype::CU_MEMORYTYPE_DEVICE;
            // Every field written out: all-zero is not a valid CUDA_MEMCPY3D (its memory types
            // have no zero value), and zero-initialising it aborts the worker. One row of
            // `len` bytes on each side.
            let copy = sys::CUDA_MEMCPY3D {
                srcXInBytes: 0,
                srcY: 0,
                srcZ: 0,
                srcLOD: 0,
                srcMemoryType: CU_MEMORYTYPE_DEVICE,
                srcHost: std::ptr::null(),
                srcDevice: src,
                srcArray: std::ptr::null_mut(),
                reserved0: std::ptr::null_mut(),
                srcPitch: len,
                srcHeight: 1,
                dstXInBytes: 0,
                dstY: 0,
                dstZ: 0,
                dstLOD: 0,
                dstMemoryType: CU_MEMORYTYPE_DEVICE,
                dstHost: std::ptr::null_mut(),
                dstDevice: dst,
                dstArray: std::ptr::null_mut(),
                reserved1: std::ptr::null_mut(),
                dstPitch: len,
                dstHeight: 1,
                WidthInBytes: len,
                Height: 1,
                Depth: 1,
            };
            let mut n = std::ptr::null_mut();
            // SAFETY: device memory only (the driver checks both ranges); `ctx` is retained
            // (module contract); `deps` are nodes of this graph.
            let r = unsafe { sys::cuGraphAddMemcpyNode(&mut n, self.0, deps.as_ptr(), deps.len(), &copy, ctx) };
            node("cuGraphAddMemcpyNode", r, n)
        }

        /// `cuGraphAddEmptyNode`.
        pub fn add_empty_node(&self, deps: &[CUgraphNode]) -> Result<CUgraphNode, CudaError> {
            let mut n = std::ptr::null_mut();
            // SAFETY: `deps` are nodes of this graph; a valid out-pointer.
            let r = unsafe { sys::cuGraphAddEmptyNode(&mut n, self.0, deps.as_ptr(), deps.len()) };
            node("cuGraphAddEmptyNode", r, n)
        }

        /// `cuGraphAddEventRecordNode`.
        pub fn add_event_record_node(&self, deps: &[CUgraphNode], event: CUevent) -> Result<CUgraphNode, CudaError> {
            let mut n = std::ptr::null_mut();
            // SAFETY: a live event (module contract); `deps` are nodes of this graph.
            let r = unsafe { sys::cuGraphAddEventRecordNode(&mut n, self.0, deps.as_ptr(), deps.len(), event) };
            node("cuGraphAddEventRecordNode", r, n)
        }

        /// `cuGraphAddEventWaitNode`.
        pub fn add_event_wait_node(&self, deps: &[CUgraphNode], event: CUevent) -> Result<CUgraphNode, CudaError> {
            let mut n = std::ptr::null_mut();
            // SAFETY: a live event (module contract); `deps` are nodes of this graph.
            let r = unsafe { sys::cuGraphAddEventWaitNode(&mut n, self.0, deps.as_ptr(), deps.len(), event) };
            node("cuGraphAddEventWaitNode", r, n)
        }

        /// `cuGraphInstantiateWithFlags` (flags 0) in the current context; destroyed with
        /// [`exec_destroy`].
        pub fn instantiate(&self) -> Result<CUgraphExec, CudaError> {
            let mut exec: CUgraphExec = std::ptr::null_mut();
            // SAFETY: a complete graph; a valid out-pointer.
            check("cuGraphInstantiate", unsafe { sys::cuGraphInstantiateWithFlags(&mut exec, self.0, 0) })?;
            Ok(exec)
        }

        /// `cuGraphExecUpdate_v2`: `exec` takes this graph's node parameters where the
        /// topology and node kinds match (an error otherwise, `exec` unchanged).
        pub fn update(&self, exec: CUgraphExec) -> Result<(), CudaError> {
            let mut info = std::mem::MaybeUninit::<sys::CUgraphExecUpdateResultInfo>::uninit();
            // SAFETY: a live executable graph (module contract) and a complete graph of the
            // same context; `info` is an out-parameter never read.
            check("cuGraphExecUpdate", unsafe { sys::cuGraphExecUpdate_v2(exec, self.0, info.as_mut_ptr()) })
        }
    }

    /// `cuGraphLaunch`.
    pub fn launch(exec: CUgraphExec, stream: CUstream) -> Result<(), CudaError> {
        // SAFETY: a live executable graph and stream (module contract).
        check("cuGraphLaunch", unsafe { sys::cuGraphLaunch(exec, stream) })
    }

    /// `cuGraphUpload`.
    pub fn upload(exec: CUgraphExec, stream: CUstream) -> Result<(), CudaError> {
        // SAFETY: a live executable graph and stream (module contract).
        check("cuGraphUpload", unsafe { sys::cuGraphUpload(exec, stream) })
    }

    /// `cuGraphExecDestroy`: callers destroy each executable graph once.
    pub fn exec_destroy(exec: CUgraphExec) -> Result<(), CudaError> {
        // SAFETY: a live executable graph (module contract).
        check("cuGraphExecDestroy", unsafe { sys::cuGraphExecDestroy(exec) })
    }
}

/// Page-locked registration of host memory the worker mapped.
pub mod host {
    use super::*;
    use std::ffi::c_void;

    /// `cuMemHostRegister_v2` of `len` bytes at `ptr` with `flags`.
    ///
    /// # Safety
    /// `ptr..ptr + len` is a mapping of the caller's that stays mapped until [`unregister`]
    /// has returned: the device may read and write it (through copies, or its device address)
    /// while it is registered.
    pub unsafe fn register(ptr: *mut c_void, len: usize, flags: u32) -> Result<(), CudaError> {
        // SAFETY: the mapping outlives the registration (the caller's contract).
        check("cuMemHostRegister", unsafe { sys::cuMemHostRegister_v2(ptr, len, flags) })
    }

    /// `cuMemHostUnregister`: the device no longer reaches the range registered at `ptr`
    /// (the host memory itself is not touched; the driver refuses an unregistered `ptr`).
    pub fn unregister(ptr: *mut c_void) -> Result<(), CudaError> {
        // SAFETY: ends the device's access only; the driver checks `ptr`.
        check("cuMemHostUnregister", unsafe { sys::cuMemHostUnregister(ptr) })
    }

    /// `cuMemHostGetDevicePointer_v2` (flags 0): the device address of registered host
    /// memory at `ptr`.
    pub fn device_pointer(ptr: *mut c_void) -> Result<CUdeviceptr, CudaError> {
        let mut device = 0;
        // SAFETY: a valid out-pointer; a lookup only (the driver checks `ptr`).
        check("cuMemHostGetDevicePointer", unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, ptr, 0) })?;
        Ok(device)
    }
}

/// Legacy interprocess memory handles (`cuIpc*MemHandle`).
pub mod ipc {
    use super::*;
    use std::ffi::c_char;

    /// Bytes of a `CUipcMemHandle`.
    pub const HANDLE_BYTES: usize = 64;

    /// `cuIpcGetMemHandle` of the `cuMemAlloc` allocation at `ptr`.
    pub fn get_mem_handle(ptr: CUdeviceptr) -> Result<[c_char; HANDLE_BYTES], CudaError> {
        let mut handle = sys::CUipcMemHandle { reserved: [0; HANDLE_BYTES] };
        // SAFETY: a valid out-pointer; the driver checks `ptr`.
        check("cuIpcGetMemHandle", unsafe { sys::cuIpcGetMemHandle(&mut handle, ptr) })?;
        Ok(handle.reserved)
    }

    /// `cuIpcOpenMemHandle_v2`; closed with [`close_mem_handle`].
    pub fn open_mem_handle(handle: [c_char; HANDLE_BYTES], flags: u32) -> Result<CUdeviceptr, CudaError> {
        let mut ptr = 0;
        // SAFETY: a valid out-pointer; the handle's bytes are the driver's to check.
        check("cuIpcOpenMemHandle", unsafe { sys::cuIpcOpenMemHandle_v2(&mut ptr, sys::CUipcMemHandle { reserved: handle }, flags) })?;
        Ok(ptr)
    }

    /// `cuIpcCloseMemHandle`: callers close each opened address once, after the work queued
    /// on it has finished.
    pub fn close_mem_handle(ptr: CUdeviceptr) -> Result<(), CudaError> {
        // SAFETY: device address space only; the driver checks `ptr`.
        check("cuIpcCloseMemHandle", unsafe { sys::cuIpcCloseMemHandle(ptr) })
    }
}

/// Physical allocations shared between processes as POSIX file descriptors.
pub mod shareable {
    use super::*;
    use std::ffi::{c_int, c_void};
    use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
    use sys::CUmemGenericAllocationHandle;

    const POSIX_FD: sys::CUmemAllocationHandleType = sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;

    /// `cuMemRetainAllocationHandle`: a new reference to the physical allocation mapped at
    /// `ptr`, released with [`super::vmm::release`].
    pub fn retain(ptr: CUdeviceptr) -> Result<CUmemGenericAllocationHandle, CudaError> {
        let mut handle = 0;
        // SAFETY: a valid out-pointer; a lookup in device address space (the driver checks
        // `ptr`).
        check("cuMemRetainAllocationHandle", unsafe { sys::cuMemRetainAllocationHandle(&mut handle, ptr as *mut c_void) })?;
        Ok(handle)
    }

    /// `cuMemExportToShareableHandle` as a POSIX file descriptor (flags 0).
    pub fn export_fd(handle: CUmemGenericAllocationHandle) -> Result<OwnedFd, CudaError> {
        let mut fd: c_int = -1;
        // SAFETY: for POSIX descriptors the shareable handle is an `int` written through the
        // pointer; the driver checks `handle`.
        check("cuMemExportToShareableHandle", unsafe { sys::cuMemExportToShareableHandle((&mut fd as *mut c_int).cast(), handle, POSIX_FD, 0) })?;
        // SAFETY: a fresh descriptor the driver created for this call, owned by nobody else.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// `cuMemImportFromShareableHandle` of a POSIX file descriptor (the driver dups what it
    /// keeps); released with [`super::vmm::release`].
    pub fn import_fd(fd: BorrowedFd<'_>) -> Result<CUmemGenericAllocationHandle, CudaError> {
        let mut handle = 0;
        // SAFETY: for POSIX descriptors the OS handle is the descriptor's number cast to a
        // pointer; `fd` is open for the call.
        check("cuMemImportFromShareableHandle", unsafe {
            sys::cuMemImportFromShareableHandle(&mut handle, fd.as_raw_fd() as isize as *mut c_void, POSIX_FD)
        })?;
        Ok(handle)
    }
}

/// The driver's JIT linker (`cuLink*`).
pub mod link {
    use super::*;
    use std::ffi::{c_void, CStr};
    use sys::{CUjitInputType, CUjit_option as Opt, CUlinkState};

    /// A link in progress with its error log buffer, destroyed when dropped.
    pub struct LinkState {
        raw: CUlinkState,
        /// Where the driver writes its error log (the state keeps a pointer to it).
        error_log: Box<[u8]>,
        /// The options and their values: the driver reads them until the state is destroyed
        /// (`cuLinkCreate`: they must stay valid for the state's life), so they live on the
        /// heap with it, not in `create`'s frame.
        _options: Box<[Opt; 2]>,
        _values: Box<[*mut c_void; 2]>,
    }

    impl LinkState {
        /// `cuLinkCreate_v2` in the current context, its error log kept in `log_len` bytes.
        pub fn create(log_len: usize) -> Result<Self, CudaError> {
            let mut error_log = vec![0u8; log_len].into_boxed_slice();
            let mut options = Box::new([Opt::CU_JIT_ERROR_LOG_BUFFER, Opt::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]);
            let mut values: Box<[*mut c_void; 2]> = Box::new([error_log.as_mut_ptr().cast(), log_len as *mut c_void]);
            let mut raw = std::ptr::null_mut();
            // SAFETY: two options with their values; the arrays and the log buffer are heap
            // allocations that move with `Self` without moving and outlive the state (their
            // fields are dropped after `Drop` destroys it).
            check("cuLinkCreate", unsafe { sys::cuLinkCreate_v2(2, options.as_mut_ptr(), values.as_mut_ptr(), &mut raw) })?;
            Ok(Self { raw, error_log, _options: options, _values: values })
        }

        /// `cuLinkAddData_v2` of one input (no per-input options); PTX must end in NUL, which
        /// callers append. The driver copies the data.
        pub fn add_data(&mut self, kind: CUjitInputType, data: &[u8], name: &CStr) -> Result<(), CudaError> {
            // SAFETY: a live link state; `data` is valid for its length during the call (the
            // driver only reads it); no options.
            check("cuLinkAddData", unsafe {
                sys::cuLinkAddData_v2(
                    self.raw,
                    kind,
                    data.as_ptr() as *mut c_void,
                    data.len(),
                    name.as_ptr(),
                    0,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
            })
        }

        /// `cuLinkComplete`: a copy of the linked image (`None`: the driver gave none).
        pub fn complete(&mut self) -> Result<Option<Vec<u8>>, CudaError> {
            let (mut image, mut size) = (std::ptr::null_mut(), 0usize);
            // SAFETY: a live link state; valid out-pointers. The image belongs to the state.
            check("cuLinkComplete", unsafe { sys::cuLinkComplete(self.raw, &mut image, &mut size) })?;
            if image.is_null() {
                return Ok(None);
            }
            // SAFETY: the driver's image of `size` bytes, alive until the state is destroyed,
            // copied now.
            Ok(Some(unsafe { std::slice::from_raw_parts(image as *const u8, size) }.to_vec()))
        }

        /// The driver's error log so far (up to its NUL).
        pub fn error_log(&self) -> String {
            let end = self.error_log.iter().position(|&b| b == 0).unwrap_or(self.error_log.len());
            String::from_utf8_lossy(&self.error_log[..end]).into_owned()
        }
    }

    impl Drop for LinkState {
        fn drop(&mut self) {
            // SAFETY: the state `create` made, destroyed once; the log buffer is freed after.
            unsafe { sys::cuLinkDestroy(self.raw) };
        }
    }
}

/// NVRTC, the runtime compiler: one safe function per entry point, errors as
/// [`NvrtcError`].
pub mod nvrtc {
    use crate::backend::BackendError;
    use cudarc::nvrtc::sys::{self, nvrtcResult};
    use std::ffi::{c_char, CStr, CString};

    /// A failed NVRTC call: which entry point, and its result.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct NvrtcError {
        /// The entry point that failed.
        pub call: &'static str,
        /// NVRTC's result.
        pub result: nvrtcResult,
    }

    impl From<NvrtcError> for BackendError {
        fn from(e: NvrtcError) -> Self {
            BackendError::Unknown(format!("{}: {:?}", e.call, e.result))
        }
    }

    fn check(call: &'static str, result: nvrtcResult) -> Result<(), NvrtcError> {
        if result == nvrtcResult::NVRTC_SUCCESS {
            Ok(())
        } else {
            Err(NvrtcError { call, result })
        }
    }

    /// Whether libnvrtc can be loaded.
    pub fn is_available() -> bool {
        // SAFETY: only checks whether libnvrtc can be dlopen'ed.
        unsafe { sys::is_culib_present() }
    }

    /// An NVRTC program, destroyed when dropped.
    pub struct Program(sys::nvrtcProgram);

    impl Program {
        /// `nvrtcCreateProgram` of `source` named `name`, with in-memory headers
        /// (`header_sources[i]` served as `header_names[i]`; unequal lengths are
        /// `NVRTC_ERROR_INVALID_INPUT`).
        pub fn create(source: &CStr, name: &CStr, header_sources: &[CString], header_names: &[CString]) -> Result<Self, NvrtcError> {
            const CALL: &str = "nvrtcCreateProgram";
            if header_sources.len() != header_names.len() {
                return Err(NvrtcError { call: CALL, result: nvrtcResult::NVRTC_ERROR_INVALID_INPUT });
            }
            let count = i32::try_from(header_sources.len()).map_err(|_| NvrtcError { call: CALL, result: nvrtcResult::NVRTC_ERROR_INVALID_INPUT })?;
            let src_ptrs: Vec<*const c_char> = header_sources.iter().map(|s| s.as_ptr()).collect();
            let name_ptrs: Vec<*const c_char> = header_names.iter().map(|s| s.as_ptr()).collect();
            let mut prog: sys::nvrtcProgram = std::ptr::null_mut();
            // SAFETY: all strings outlive the call; `count` entries in both arrays.
            check(CALL, unsafe { sys::nvrtcCreateProgram(&mut prog, source.as_ptr(), name.as_ptr(), count, src_ptrs.as_ptr(), name_ptrs.as_ptr()) })?;
            Ok(Self(prog))
        }

        /// `nvrtcAddNameExpression`.
        pub fn add_name_expression(&self, expression: &CStr) -> Result<(), NvrtcError> {
            // SAFETY: a live program, a NUL-terminated expression.
            check("nvrtcAddNameExpression", unsafe { sys::nvrtcAddNameExpression(self.0, expression.as_ptr()) })
        }

        /// `nvrtcCompileProgram`: `Err` where the program did not compile (the log says why).
        pub fn compile(&self, options: &[CString]) -> Result<(), NvrtcError> {
            let ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
            // SAFETY: a live program; the option strings outlive the call.
            check("nvrtcCompileProgram", unsafe { sys::nvrtcCompileProgram(self.0, ptrs.len() as i32, ptrs.as_ptr()) })
        }

        /// `nvrtcGetProgramLogSize` / `nvrtcGetProgramLog`: the log's bytes (at least one).
        pub fn log(&self) -> Result<Vec<u8>, NvrtcError> {
            let mut len = 0usize;
            // SAFETY: a live program, a valid out-pointer.
            check("nvrtcGetProgramLogSize", unsafe { sys::nvrtcGetProgramLogSize(self.0, &mut len) })?;
            let mut log = vec![0u8; len.max(1)];
            // SAFETY: a buffer of the size NVRTC reported.
            check("nvrtcGetProgramLog", unsafe { sys::nvrtcGetProgramLog(self.0, log.as_mut_ptr().cast()) })?;
            Ok(log)
        }

        /// `nvrtcGetPTXSize` / `nvrtcGetPTX`: the PTX, NUL included.
        pub fn ptx(&self) -> Result<Vec<u8>, NvrtcError> {
            let mut len = 0usize;
            // SAFETY: a live program, a valid out-pointer.
            check("nvrtcGetPTXSize", unsafe { sys::nvrtcGetPTXSize(self.0, &mut len) })?;
            let mut ptx = vec![0u8; len];
            // SAFETY: a buffer of the size NVRTC reported (includes the NUL).
            check("nvrtcGetPTX", unsafe { sys::nvrtcGetPTX(self.0, ptx.as_mut_ptr().cast()) })?;
            Ok(ptx)
        }

        /// `nvrtcGetLoweredName` of an expression added before compiling (`None`: NVRTC gave
        /// no name).
        pub fn lowered_name(&self, expression: &CStr) -> Result<Option<String>, NvrtcError> {
            let mut lowered: *const c_char = std::ptr::null();
            // SAFETY: a live program; a NUL-terminated expression; a valid out-pointer.
            check("nvrtcGetLoweredName", unsafe { sys::nvrtcGetLoweredName(self.0, expression.as_ptr(), &mut lowered) })?;
            if lowered.is_null() {
                return Ok(None);
            }
            // SAFETY: a NUL-terminated string owned by the program (alive here), copied now.
            Ok(Some(unsafe { CStr::from_ptr(lowered) }.to_string_lossy().into_owned()))
        }
    }

    impl Drop for Program {
        fn drop(&mut self) {
            // SAFETY: created by `create`, destroyed once.
            let _ = unsafe { sys::nvrtcDestroyProgram(&mut self.0) };
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// NVRTC failures reach the client as hipErrorUnknown naming the call and result.
        #[test]
        fn nvrtc_errors_are_unknown_with_call_and_result() {
            let e = BackendError::from(NvrtcError { call: "nvrtcGetPTX", result: nvrtcResult::NVRTC_ERROR_INVALID_PROGRAM });
            assert_eq!(e, BackendError::Unknown("nvrtcGetPTX: NVRTC_ERROR_INVALID_PROGRAM".into()));
            assert_eq!(check("nvrtcGetPTX", nvrtcResult::NVRTC_SUCCESS), Ok(()));
        }
    }
}

/// Arrays, mipmapped arrays, texture objects and 3D copies.
pub mod array {
    use super::*;
    use crate::backend::{ResourceDesc, ResourceViewDesc, TextureDesc};
    use sys::{CUarray, CUmemorytype, CUmipmappedArray, CUDA_ARRAY3D_DESCRIPTOR, CUDA_MEMCPY3D};

    /// `cuArray3DCreate_v2` in the current context.
    pub fn create(desc: &CUDA_ARRAY3D_DESCRIPTOR) -> Result<CUarray, CudaError> {
        let mut array: CUarray = std::ptr::null_mut();
        // SAFETY: a valid descriptor and out-pointer; the driver checks the descriptor.
        check("cuArray3DCreate", unsafe { sys::cuArray3DCreate_v2(&mut array, desc) })?;
        Ok(array)
    }

    /// `cuArrayDestroy`: callers destroy each array once.
    pub fn destroy(array: CUarray) -> Result<(), CudaError> {
        // SAFETY: a live array (module contract).
        check("cuArrayDestroy", unsafe { sys::cuArrayDestroy(array) })
    }

    /// `cuMipmappedArrayCreate` in the current context.
    pub fn mipmap_create(desc: &CUDA_ARRAY3D_DESCRIPTOR, levels: u32) -> Result<CUmipmappedArray, CudaError> {
        let mut mipmap: CUmipmappedArray = std::ptr::null_mut();
        // SAFETY: a valid descriptor and out-pointer; the driver checks the descriptor.
        check("cuMipmappedArrayCreate", unsafe { sys::cuMipmappedArrayCreate(&mut mipmap, desc, levels) })?;
        Ok(mipmap)
    }

    /// `cuMipmappedArrayGetLevel`.
    pub fn mipmap_level(mipmap: CUmipmappedArray, level: u32) -> Result<CUarray, CudaError> {
        let mut array: CUarray = std::ptr::null_mut();
        // SAFETY: a live mipmapped array (module contract); a valid out-pointer; the driver
        // checks the level.
        check("cuMipmappedArrayGetLevel", unsafe { sys::cuMipmappedArrayGetLevel(&mut array, mipmap, level) })?;
        Ok(array)
    }

    /// `cuMipmappedArrayDestroy` (its levels with it): callers destroy each once.
    pub fn mipmap_destroy(mipmap: CUmipmappedArray) -> Result<(), CudaError> {
        // SAFETY: a live mipmapped array (module contract).
        check("cuMipmappedArrayDestroy", unsafe { sys::cuMipmappedArrayDestroy(mipmap) })
    }

    /// `cuTexObjectCreate` from the driver-form structs of `backend::texture` (CUDA's
    /// `CUDA_RESOURCE_DESC`, `CUDA_TEXTURE_DESC`, `CUDA_RESOURCE_VIEW_DESC` field for field,
    /// asserted in `array.rs`).
    pub fn texture_create(resource: &ResourceDesc, texture: &TextureDesc, view: Option<&ResourceViewDesc>) -> Result<sys::CUtexObject, CudaError> {
        let view = view.map_or(std::ptr::null(), |v| (v as *const ResourceViewDesc).cast());
        let mut object: sys::CUtexObject = 0;
        // SAFETY: the three structs have CUDA's layouts (above); the resource names an array
        // or device memory (module contract), which the driver checks; a valid out-pointer.
        check("cuTexObjectCreate", unsafe {
            sys::cuTexObjectCreate(&mut object, (resource as *const ResourceDesc).cast(), (texture as *const TextureDesc).cast(), view)
        })?;
        Ok(object)
    }

    /// `cuTexObjectDestroy`: callers destroy each texture object once.
    pub fn texture_destroy(texture: sys::CUtexObject) -> Result<(), CudaError> {
        // SAFETY: the driver checks the object.
        check("cuTexObjectDestroy", unsafe { sys::cuTexObjectDestroy(texture) })
    }

    /// `cuMemcpy3DAsync_v2`.
    ///
    /// # Safety
    /// Every host box `copy` names stays alive until `stream` has passed the copy; a host
    /// destination is touched by nobody else until then.
    pub unsafe fn copy_3d_async(copy: &CUDA_MEMCPY3D, stream: CUstream) -> Result<(), CudaError> {
        // SAFETY: host boxes are the caller's contract; the driver checks device memory and
        // arrays; `stream` is live.
        check("cuMemcpy3DAsync", unsafe { sys::cuMemcpy3DAsync_v2(copy, stream) })
    }

    /// `cuMemcpy3DAsync_v2` between device memory and arrays only: a copy naming host memory
    /// (or unified memory, which may be host memory) is `CUDA_ERROR_INVALID_VALUE`.
    pub fn copy_3d_device_async(copy: &CUDA_MEMCPY3D, stream: CUstream) -> Result<(), CudaError> {
        let on_device = |t: CUmemorytype| matches!(t, CUmemorytype::CU_MEMORYTYPE_DEVICE | CUmemorytype::CU_MEMORYTYPE_ARRAY);
        if !on_device(copy.srcMemoryType) || !on_device(copy.dstMemoryType) {
            return Err(CudaError { call: "cuMemcpy3DAsync", error: DriverError(CUresult::CUDA_ERROR_INVALID_VALUE) });
        }
        // SAFETY: no host memory (checked above).
        unsafe { copy_3d_async(copy, stream) }
    }
}
