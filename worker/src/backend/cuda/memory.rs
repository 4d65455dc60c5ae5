//! Device memory on CUDA: allocations, copies through pinned staging buffers, memset.

use super::error::Check;
use std::collections::HashMap;
use std::ffi::c_void;

use super::{error, lock, result, sys, CudaBackend, Raw, STAGING_BYTES};

use crate::backend::host_region::RegionSlice;
use crate::backend::{
    BackendError, DeviceIndex, DevicePtr, DtohDone, HostData, MemInfo, MemoryBackend, MemsetPattern, Pitched, PoolAccess, RegisteredDone, Rows,
    StreamHandle,
};

impl MemoryBackend for CudaBackend {
    fn mem_get_info(&self, dev: DeviceIndex) -> Result<MemInfo, BackendError> {
        self.enter(dev)?;
        let (free, total) = cudarc::driver::result::mem_get_info().map_err(|e| error::map("cuMemGetInfo", e))?;
        Ok(MemInfo { free: free as u64, total: total as u64 })
    }

    /// `hipMalloc`, pool and managed allocations (arrays, module globals and virtual memory
    /// are not counted).
    fn allocated_bytes(&self, dev: DeviceIndex) -> Option<u64> {
        // Allocations, and mapped ranges (client-placed memory, hipMemMap) with module globals.
        let on_device = |table: &HashMap<u64, (u64, DeviceIndex)>| table.values().filter(|(_, d)| *d == dev).map(|(size, _)| size).sum::<u64>();
        Some(on_device(&lock(&self.allocations)) + on_device(&lock(&self.globals)))
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
        // The context may hand out what another session freed: zeros first.
        if let Err(e) = self.scrub_now(dev, ptr, size_usize) {
            // SAFETY: the allocation just made, never handed out.
            let _ = unsafe { cudarc::driver::result::free_sync(ptr) };
            return Err(e);
        }
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
        let s = self.work_stream(stream, dev)?;
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
        let s = self.work_stream(stream, dev)?;
        let mut pinned = self.take_staging()?;
        let result = (|| {
            for (i, chunk) in data.chunks(STAGING_BYTES).enumerate() {
                pinned.slice(chunk.len()).copy_from_slice(chunk);
                // SAFETY: validated destination; pinned source synchronised before reuse.
                unsafe { sys::cuMemcpyHtoDAsync_v2(dst.0 + (i * STAGING_BYTES) as u64, pinned.ptr.0.cast(), chunk.len(), s) }
                    .check("cuMemcpyHtoDAsync")?;
                self.sync_raw(stream, s)?;
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
            let mut staging = crate::backend::zeroed_buffer(len as u64)?;
            fill(&mut staging);
            return self.memcpy_htod_sync(stream, dst, &staging);
        }
        let dev = self.device_of(dst)?;
        let s = self.work_stream(stream, dev)?;
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

    /// One staging buffer, its DMA waited for here, the buffer back at once: no host function
    /// on the stream, so the wait is the copy's, not the driver's callback thread's wake-up.
    fn with_device_bytes_mut_finished(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        len: u64,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), BackendError> {
        let len = usize::try_from(len).map_err(|_| BackendError::InvalidValue("copy too large".into()))?;
        if len > STAGING_BYTES {
            self.with_device_bytes_mut(stream, dst, len as u64, fill)?;
            return self.finish_device_writes(stream, dst);
        }
        let dev = self.device_of(dst)?;
        let s = self.work_stream(stream, dev)?;
        let mut pinned = self.take_staging()?;
        fill(pinned.slice(len));
        // SAFETY: validated destination; the pinned source is not reused before the
        // synchronize below has returned (on its failure it is never reused).
        if let Err(e) = unsafe { sys::cuMemcpyHtoDAsync_v2(dst.0, pinned.ptr.0.cast(), len, s) }.check("cuMemcpyHtoDAsync") {
            self.return_staging(pinned);
            return Err(e);
        }
        self.sync_raw(stream, s)?;
        self.return_staging(pinned);
        Ok(())
    }

    fn finish_device_writes(&self, stream: Option<StreamHandle>, near: DevicePtr) -> Result<(), BackendError> {
        let dev = self.device_of(near)?;
        let s = self.stream(stream, dev)?;
        self.sync_raw(stream, s)
    }

    fn memcpy_dtoh(&self, stream: Option<StreamHandle>, src: DevicePtr, len: u64, done: DtohDone) -> Result<(), BackendError> {
        let dev = self.device_of(src)?;
        let s = self.work_stream(stream, dev)?;
        let len = usize::try_from(len).map_err(|_| BackendError::InvalidValue("copy too large".into()))?;
        if len > STAGING_BYTES || stream.is_none() {
            let mut out = crate::backend::zeroed_buffer(len as u64)?;
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

    /// One DMA straight from the registered region (no staging); the region is held until
    /// the stream has passed the copy.
    fn memcpy_htod_registered(&self, stream: Option<StreamHandle>, dst: DevicePtr, src: RegionSlice) -> Result<(), BackendError> {
        let dev = self.device_of(dst)?;
        let s = self.work_stream(stream, dev)?;
        // SAFETY: destination validated by the session; the source lies in host memory
        // registered with `cuMemHostRegister` that `src` keeps mapped until the host function
        // below has run (after the copy, in stream order).
        unsafe { sys::cuMemcpyHtoDAsync_v2(dst.0, src.addr() as *const c_void, src.len(), s) }.check("cuMemcpyHtoDAsync")?;
        // The session synchronises before it lets go of a region, so this is never the last
        // hold (whose drop unregisters, a CUDA call a host function may not make).
        self.launch_host(s, Box::new(move || drop(src)))
    }

    /// One DMA from the registered region, waited for: the caller holds the region, so no
    /// host function (whose callback thread's wake-up a synchronize would wait for).
    fn memcpy_htod_registered_sync(&self, stream: Option<StreamHandle>, dst: DevicePtr, src: &RegionSlice) -> Result<(), BackendError> {
        let dev = self.device_of(dst)?;
        let s = self.work_stream(stream, dev)?;
        // SAFETY: destination validated by the session; the source lies in registered host
        // memory that the caller's `src` keeps mapped until the synchronize below returns.
        unsafe { sys::cuMemcpyHtoDAsync_v2(dst.0, src.addr() as *const c_void, src.len(), s) }.check("cuMemcpyHtoDAsync")?;
        self.wait_registered_copy(stream, s)
    }

    /// One DMA into the registered region, waited for (as the upload above).
    fn memcpy_dtoh_registered_sync(&self, stream: Option<StreamHandle>, src: DevicePtr, dst: &RegionSlice) -> Result<(), BackendError> {
        let dev = self.device_of(src)?;
        let s = self.work_stream(stream, dev)?;
        // SAFETY: source validated by the session; the destination lies in registered host
        // memory that the caller's `dst` keeps mapped until the synchronize below returns.
        unsafe { sys::cuMemcpyDtoHAsync_v2(dst.addr() as *mut c_void, src.0, dst.len(), s) }.check("cuMemcpyDtoHAsync")?;
        self.wait_registered_copy(stream, s)
    }

    /// One DMA straight into the registered region; `done` once the stream has passed it.
    fn memcpy_dtoh_registered(
        &self,
        stream: Option<StreamHandle>,
        src: DevicePtr,
        dst: RegionSlice,
        done: RegisteredDone,
    ) -> Result<(), BackendError> {
        let dev = self.device_of(src)?;
        let s = self.work_stream(stream, dev)?;
        // SAFETY: source validated by the session; the destination lies in registered host
        // memory that `dst` keeps mapped until the host function below has run.
        unsafe { sys::cuMemcpyDtoHAsync_v2(dst.addr() as *mut c_void, src.0, dst.len(), s) }.check("cuMemcpyDtoHAsync")?;
        self.launch_host(
            s,
            Box::new(move || {
                drop(dst);
                done(Ok(()));
            }),
        )
    }

    fn memcpy_dtoh_sync(&self, stream: Option<StreamHandle>, src: DevicePtr, out: &mut [u8]) -> Result<(), BackendError> {
        let dev = self.device_of(src)?;
        let s = self.work_stream(stream, dev)?;
        let mut pinned = self.take_staging()?;
        let result = self.copy_waiting_for_stream(stream, || {
            for (i, chunk) in out.chunks_mut(STAGING_BYTES).enumerate() {
                // SAFETY: validated source; pinned destination synchronised before reading.
                unsafe { sys::cuMemcpyDtoHAsync_v2(pinned.ptr.0.cast(), src.0 + (i * STAGING_BYTES) as u64, chunk.len(), s) }
                    .check("cuMemcpyDtoHAsync")?;
                self.sync_raw(stream, s)?;
                chunk.copy_from_slice(pinned.slice(chunk.len()));
            }
            Ok(())
        });
        self.return_staging(pinned);
        result
    }

    fn with_device_bytes(&self, stream: Option<StreamHandle>, src: DevicePtr, len: u64, read: &mut dyn FnMut(&[u8])) -> Result<(), BackendError> {
        let len = usize::try_from(len).map_err(|_| BackendError::InvalidValue("copy too large".into()))?;
        if len > STAGING_BYTES {
            let mut out = crate::backend::zeroed_buffer(len as u64)?;
            self.memcpy_dtoh_sync(stream, src, &mut out)?;
            read(&out);
            return Ok(());
        }
        let dev = self.device_of(src)?;
        let s = self.work_stream(stream, dev)?;
        let mut pinned = self.take_staging()?;
        let r = self.copy_waiting_for_stream(stream, || {
            // SAFETY: validated source; synchronised before the bytes are read.
            unsafe { sys::cuMemcpyDtoHAsync_v2(pinned.ptr.0.cast(), src.0, len, s) }.check("cuMemcpyDtoHAsync").and_then(|_| self.sync_raw(stream, s))
        });
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
        let s = self.work_stream(stream, dev)?;
        // SAFETY: both ranges validated by the session against live allocations.
        unsafe { sys::cuMemcpyDtoDAsync_v2(dst.0, src.0, len as usize, s) }.check("cuMemcpyDtoDAsync")
    }

    fn memset(&self, stream: Option<StreamHandle>, dst: DevicePtr, pattern: MemsetPattern, count: u64) -> Result<(), BackendError> {
        let dev = self.device_of(dst)?;
        let s = self.work_stream(stream, dev)?;
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
        let s = self.work_stream(stream, dev)?;
        let width = usize::try_from(width).map_err(|_| BackendError::InvalidValue("row too wide".into()))?;
        if width == 0 {
            return Err(BackendError::InvalidValue("2D rows of 0 bytes".into()));
        }
        if width > STAGING_BYTES {
            // Rows wider than a staging buffer (the client sends those as 1D copies): copied
            // from the request's own bytes, which must then stay until the copy is done.
            let bytes = data.as_bytes();
            let copy =
                copy_2d(Side::Host(bytes.as_ptr().cast_mut().cast(), width), Side::Device(dst.ptr.0, dst.pitch as usize), width, bytes.len() / width);
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
        let s = self.work_stream(stream, dev)?;
        let (width, height) = (rows.width as usize, rows.height as usize);
        let len = rows.packed_len().ok_or_else(|| BackendError::InvalidValue(format!("2D copy of {width}x{height} bytes overflows")))?;
        if len as usize > STAGING_BYTES {
            // More than a staging buffer (the client never asks for that): gathered straight
            // into a buffer of the reply, in order after the stream's earlier work.
            let mut out = crate::backend::zeroed_buffer(len)?;
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
            let r = self.sync_raw(stream, s);
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
        let s = self.work_stream(stream, dev)?;
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
        let s = self.work_stream(stream, dst_dev)?;
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
        // The pool may hand out what another session freed: zeros first, in stream order.
        if let Err(e) = self.scrub_on(ptr, size_usize, s) {
            // SAFETY: the allocation just made on `s`, never handed out.
            let _ = unsafe { sys::cuMemFreeAsync(ptr, s) };
            return Err(e);
        }
        lock(&self.allocations).insert(ptr, (size, dev));
        lock(&self.pool_allocations).insert(ptr);
        Ok(DevicePtr(ptr))
    }

    fn free_async(&self, stream: Option<StreamHandle>, ptr: DevicePtr) -> Result<(), BackendError> {
        let (_, dev) =
            *lock(&self.allocations).get(&ptr.0).ok_or_else(|| BackendError::InvalidValue(format!("{ptr} is not the start of a CUDA allocation")))?;
        let s = self.stream(stream, dev)?;
        // Out of the tables first: the address is invalid for new work from now on.
        lock(&self.allocations).remove(&ptr.0);
        if lock(&self.pool_allocations).remove(&ptr.0) {
            // SAFETY: a live cuMemAllocAsync allocation removed from the tables above; the
            // driver frees it once the stream's earlier work is done.
            return unsafe { sys::cuMemFreeAsync(ptr.0, s) }.check("cuMemFreeAsync");
        }
        // hipMalloc memory freed in stream order: wait for the stream, then free it plainly.
        self.sync_raw(stream, s)?;
        // SAFETY: a live cuMemAlloc allocation removed from the table above, unused by the
        // stream's earlier work (drained above).
        unsafe { cudarc::driver::result::free_sync(ptr.0) }.check("cuMemFree")
    }

    fn set_pool_access(&self, owner: DeviceIndex, peer: DeviceIndex, access: PoolAccess) -> Result<PoolAccess, BackendError> {
        let (owner_dev, peer_dev) = (self.device(owner)?.dev, self.device(peer)?.dev);
        self.enter(owner)?;
        // The pool cuMemAllocAsync allocates from (the worker never replaces it): peer access
        // to its memory is the pool's, not the context's (cuCtxEnablePeerAccess does not cover
        // it).
        let pool = result::mem_pool::of_device(owner_dev)?;
        let flags = match access {
            PoolAccess::None => sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_NONE,
            PoolAccess::Read => sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READ,
            PoolAccess::ReadWrite => sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        result::mem_pool::set_access(pool, peer_dev, flags)?;
        let applied = result::mem_pool::access(pool, peer_dev)?;
        PoolAccess::from_flags(applied as u32)
            .ok_or_else(|| BackendError::Unknown(format!("cuMemPoolGetAccess answered access flags {} for device {peer}", applied as u32)))
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

impl CudaBackend {
    /// Waits for a copy just queued on `s` as a stream synchronize does (device logs read,
    /// a latched fault reported), for the synchronous copies with registered memory.
    fn wait_registered_copy(&self, stream: Option<StreamHandle>, s: sys::CUstream) -> Result<(), BackendError> {
        match stream {
            Some(handle) => self.synchronize_stream(handle, s),
            None => self.copy_waiting_for_stream(None, || self.sync_raw(None, s)),
        }
    }
}
