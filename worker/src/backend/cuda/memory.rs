//! Device memory on CUDA: allocations, copies through pinned staging buffers, memset.

use std::collections::HashMap;

use super::result::mem::{copy_2d_desc as copy_2d, Side2d as Side};
use super::{lock, result, sys, CudaBackend, Pinned, Raw, STAGING_BYTES};

use crate::backend::host_region::RegionSlice;
use crate::backend::{
    BackendError, DeviceIndex, DevicePtr, DtohDone, HostData, MemInfo, MemoryBackend, MemsetPattern, Pitched, PoolAccess, RegisteredDone, Rows,
    StreamHandle,
};

impl MemoryBackend for CudaBackend {
    fn mem_get_info(&self, dev: DeviceIndex) -> Result<MemInfo, BackendError> {
        self.enter(dev)?;
        let (free, total) = result::mem::info()?;
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
        let (free, _) = result::mem::info()?;
        if size_usize > free {
            return Err(BackendError::OutOfMemory(format!("{size} bytes requested, {free} free on device {dev}")));
        }
        // Freed by `free`.
        let ptr = result::mem::alloc(size_usize)?;
        // The context may hand out what another session freed: zeros first.
        if let Err(e) = self.scrub_now(dev, ptr, size_usize) {
            // The allocation just made, never handed out.
            let _ = result::mem::free(ptr);
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
            let null_stream = std::ptr::null_mut();
            result::mem::free_async(ptr.0, null_stream)?;
            return Ok(result::stream::synchronize(null_stream)?);
        }
        // A live allocation from cuMemAlloc, removed from the table above.
        Ok(result::mem::free(ptr.0)?)
    }

    fn memcpy_htod(&self, stream: Option<StreamHandle>, dst: DevicePtr, data: HostData) -> Result<(), BackendError> {
        let dev = self.device_of(dst)?;
        let s = self.work_stream(stream, dev)?;
        // Stage through pinned buffers so the copy is truly asynchronous; each buffer goes
        // back to the pool from a host function once the stream has consumed it.
        for (i, chunk) in data.as_bytes().chunks(STAGING_BYTES).enumerate() {
            let mut pinned = self.take_staging()?;
            pinned.slice(chunk.len()).copy_from_slice(chunk);
            // SAFETY: the source is pinned and stays alive until the host function queued
            // below returns it to the pool.
            unsafe { result::mem::copy_htod_async(dst.0 + (i * STAGING_BYTES) as u64, pinned.ptr.0, chunk.len(), s) }?;
            self.return_staging_when_passed(s, pinned)?;
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
                // SAFETY: the pinned source is synchronised before reuse.
                unsafe { result::mem::copy_htod_async(dst.0 + (i * STAGING_BYTES) as u64, pinned.ptr.0, chunk.len(), s) }?;
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
        // Double buffering: the socket is read straight into pinned memory, the DMA is
        // started and we return at once, so the next chunk is received while this one
        // travels; the buffer goes back to the pool when the stream has consumed it.
        self.upload_staged(stream, dst, len, fill, StagedUpload::ReturnOnStream)
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
        self.upload_staged(stream, dst, len, fill, StagedUpload::Wait)
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
        let pinned = self.take_staging()?;
        // SAFETY: the pinned destination stays alive, untouched, until the host function
        // queued below has copied it out and returned it to the pool.
        unsafe { result::mem::copy_dtoh_async(pinned.ptr.0, src.0, len, s) }?;
        self.deliver_staging_when_passed(s, pinned, len, done)
    }

    /// One DMA straight from the registered region (no staging); the region is held until
    /// the stream has passed the copy.
    fn memcpy_htod_registered(&self, stream: Option<StreamHandle>, dst: DevicePtr, src: RegionSlice) -> Result<(), BackendError> {
        let dev = self.device_of(dst)?;
        let s = self.work_stream(stream, dev)?;
        // SAFETY: the source lies in host memory registered with `cuMemHostRegister` that
        // `src` keeps mapped until the host function below has run (after the copy, in stream
        // order).
        unsafe { result::mem::copy_htod_async(dst.0, src.addr() as *const u8, src.len(), s) }?;
        // The session synchronises before it lets go of a region, so this is never the last
        // hold (whose drop unregisters, a CUDA call a host function may not make).
        self.launch_host(s, Box::new(move || drop(src)))
    }

    /// One DMA from the registered region, waited for: the caller holds the region, so no
    /// host function (whose callback thread's wake-up a synchronize would wait for).
    fn memcpy_htod_registered_sync(&self, stream: Option<StreamHandle>, dst: DevicePtr, src: &RegionSlice) -> Result<(), BackendError> {
        let dev = self.device_of(dst)?;
        let s = self.work_stream(stream, dev)?;
        // SAFETY: the source lies in registered host memory that the caller's `src` keeps
        // mapped until the synchronize below returns.
        unsafe { result::mem::copy_htod_async(dst.0, src.addr() as *const u8, src.len(), s) }?;
        self.wait_registered_copy(stream, s)
    }

    /// One DMA into the registered region, waited for (as the upload above).
    fn memcpy_dtoh_registered_sync(&self, stream: Option<StreamHandle>, src: DevicePtr, dst: &RegionSlice) -> Result<(), BackendError> {
        let dev = self.device_of(src)?;
        let s = self.work_stream(stream, dev)?;
        // SAFETY: the destination lies in registered host memory that the caller's `dst`
        // keeps mapped until the synchronize below returns.
        unsafe { result::mem::copy_dtoh_async(dst.addr() as *mut u8, src.0, dst.len(), s) }?;
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
        // SAFETY: the destination lies in registered host memory that `dst` keeps mapped
        // until the host function below has run.
        unsafe { result::mem::copy_dtoh_async(dst.addr() as *mut u8, src.0, dst.len(), s) }?;
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
                // SAFETY: the pinned destination is synchronised before it is read.
                unsafe { result::mem::copy_dtoh_async(pinned.ptr.0, src.0 + (i * STAGING_BYTES) as u64, chunk.len(), s) }?;
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
            // SAFETY: the pinned destination is synchronised before the bytes are read.
            unsafe { result::mem::copy_dtoh_async(pinned.ptr.0, src.0, len, s) }?;
            self.sync_raw(stream, s)
        });
        if r.is_ok() {
            // The bytes go from pinned memory straight to the socket.
            read(pinned.slice(len));
        }
        self.return_staging(pinned);
        r
    }

    fn memcpy_dtod(&self, stream: Option<StreamHandle>, dst: DevicePtr, src: DevicePtr, len: u64) -> Result<(), BackendError> {
        let (dst_dev, src_dev) = (self.device_of(dst)?, self.device_of(src)?);
        let stream_dev = self.stream_device(stream, dst_dev)?;
        let s = self.work_stream(stream, dst_dev)?;
        if dst_dev == src_dev && stream_dev == dst_dev {
            return Ok(result::mem::copy_dtod_async(dst.0, src.0, len as usize, s)?);
        }
        // HIP copies between devices whatever peer access is enabled, on any device's
        // stream. cuMemcpyDtoDAsync reads both pointers in the stream's context: memory of
        // another device mapped with cuMemMap (client allocations) is invalid there unless
        // that device was granted access (CUDA_ERROR_INVALID_VALUE). Naming each side's
        // context lets the driver copy peer to peer, or through the host where it must.
        let (dst_ctx, src_ctx) = (self.device(dst_dev)?.ctx.0, self.device(src_dev)?.ctx.0);
        Ok(result::mem::copy_peer_async(dst.0, dst_ctx, src.0, src_ctx, len as usize, s)?)
    }

    fn memset(&self, stream: Option<StreamHandle>, dst: DevicePtr, pattern: MemsetPattern, count: u64) -> Result<(), BackendError> {
        let dev = self.device_of(dst)?;
        let s = self.work_stream(stream, dev)?;
        Ok(result::mem::set_async(dst.0, pattern, count as usize, s)?)
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
            // SAFETY: the pinned source stays alive until the host function queued below
            // returns it to the pool.
            unsafe { result::mem::copy_2d_async(&copy, s) }?;
            self.return_staging_when_passed(s, pinned)?;
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
        // SAFETY: the pinned destination stays alive, untouched, until it is read (below, or
        // in the host function) and returned to the pool.
        if let Err(e) = unsafe { result::mem::copy_2d_async(&copy, s) } {
            self.return_staging(pinned);
            return Err(e.into());
        }
        if stream.is_none() {
            // Null stream: the copy is due now (as `memcpy_dtoh` does).
            let r = self.sync_raw(stream, s);
            let bytes = r.map(|_| pinned.slice(len).to_vec());
            self.return_staging(pinned);
            done(bytes);
            return Ok(());
        }
        self.deliver_staging_when_passed(s, pinned, len, done)
    }

    fn memcpy_dtod_2d(&self, stream: Option<StreamHandle>, dst: Pitched, src: Pitched, rows: Rows) -> Result<(), BackendError> {
        let (dst_dev, src_dev) = (self.device_of(dst.ptr)?, self.device_of(src.ptr)?);
        let stream_dev = self.stream_device(stream, dst_dev)?;
        let s = self.work_stream(stream, dst_dev)?;
        if dst_dev != src_dev || stream_dev != dst_dev {
            // Between devices, as `memcpy_dtod`: each side in its own context.
            let (dst_ctx, src_ctx) = (self.device(dst_dev)?.ctx.0, self.device(src_dev)?.ctx.0);
            return Ok(result::peer_copy::copy_2d_async(
                dst.ptr.0,
                dst.pitch as usize,
                dst_ctx,
                src.ptr.0,
                src.pitch as usize,
                src_ctx,
                rows.width as usize,
                rows.height as usize,
                s,
            )?);
        }
        Ok(result::mem::copy_2d_dtod_async(
            dst.ptr.0,
            dst.pitch as usize,
            src.ptr.0,
            src.pitch as usize,
            rows.width as usize,
            rows.height as usize,
            s,
        )?)
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
        Ok(result::mem::copy_peer_async(dst.0, dst_ctx, src.0, src_ctx, len as usize, s)?)
    }

    fn malloc_async(&self, stream: Option<StreamHandle>, dev: DeviceIndex, size: u64) -> Result<DevicePtr, BackendError> {
        if size == 0 {
            return Ok(DevicePtr::NULL);
        }
        let s = self.stream(stream, dev)?;
        let size_usize = usize::try_from(size).map_err(|_| BackendError::OutOfMemory(format!("{size} bytes")))?;
        // `s` is a live stream (or the null stream) of `dev`, whose context is current; freed
        // by `free_async` or `free`.
        let ptr = result::mem::alloc_async(size_usize, s)?;
        // The pool may hand out what another session freed: zeros first, in stream order.
        if let Err(e) = self.scrub_on(ptr, size_usize, s) {
            // The allocation just made on `s`, never handed out.
            let _ = result::mem::free_async(ptr, s);
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
            // A live cuMemAllocAsync allocation removed from the tables above; the driver
            // frees it once the stream's earlier work is done.
            return Ok(result::mem::free_async(ptr.0, s)?);
        }
        // hipMalloc memory freed in stream order: wait for the stream, then free it plainly.
        self.sync_raw(stream, s)?;
        // A live cuMemAlloc allocation removed from the table above, unused by the stream's
        // earlier work (drained above).
        Ok(result::mem::free(ptr.0)?)
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

/// What an upload through one staging buffer does once its DMA is queued.
#[derive(Clone, Copy, PartialEq, Eq)]
enum StagedUpload {
    /// Return at once; a host function gives the buffer back when the stream has passed it.
    ReturnOnStream,
    /// Wait for the DMA here and give the buffer back before returning.
    Wait,
}

impl CudaBackend {
    /// `fill` writes `len` bytes that go to `dst`: straight into a pinned staging buffer when
    /// they fit one, else into a plain buffer copied chunk by chunk (and waited for).
    fn upload_staged(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        len: u64,
        fill: &mut dyn FnMut(&mut [u8]),
        then: StagedUpload,
    ) -> Result<(), BackendError> {
        let len = usize::try_from(len).map_err(|_| BackendError::InvalidValue("copy too large".into()))?;
        if len > STAGING_BYTES {
            let mut staging = crate::backend::zeroed_buffer(len as u64)?;
            fill(&mut staging);
            self.memcpy_htod_sync(stream, dst, &staging)?;
            return match then {
                StagedUpload::ReturnOnStream => Ok(()),
                StagedUpload::Wait => self.finish_device_writes(stream, dst),
            };
        }
        let dev = self.device_of(dst)?;
        let s = self.work_stream(stream, dev)?;
        let mut pinned = self.take_staging()?;
        fill(pinned.slice(len));
        // SAFETY: the pinned source is not reused before the stream has passed the copy: the
        // host function below returns it, or the synchronize below has returned (on a failure
        // the copy never runs).
        if let Err(e) = unsafe { result::mem::copy_htod_async(dst.0, pinned.ptr.0, len, s) } {
            self.return_staging(pinned);
            return Err(e.into());
        }
        match then {
            StagedUpload::ReturnOnStream => self.return_staging_when_passed(s, pinned),
            StagedUpload::Wait => {
                self.sync_raw(stream, s)?;
                self.return_staging(pinned);
                Ok(())
            }
        }
    }

    /// Gives `pinned` back to the pool from a host function once `s` has passed the work
    /// queued so far.
    fn return_staging_when_passed(&self, s: sys::CUstream, pinned: Pinned) -> Result<(), BackendError> {
        let pool = Raw(self as *const Self);
        self.launch_host(
            s,
            Box::new(move || {
                let pool = pool;
                // SAFETY: the backend outlives every stream (streams are drained before it is
                // dropped); no CUDA call is made here.
                unsafe { &*pool.0 }.return_staging_from_host_fn(pinned);
            }),
        )
    }

    /// Once `s` has passed the download into `pinned`: its first `len` bytes to `done`, the
    /// buffer back to the pool.
    fn deliver_staging_when_passed(&self, s: sys::CUstream, mut pinned: Pinned, len: usize, done: DtohDone) -> Result<(), BackendError> {
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

    /// Waits for a copy just queued on `s` as a stream synchronize does (device logs read,
    /// a latched fault reported), for the synchronous copies with registered memory.
    fn wait_registered_copy(&self, stream: Option<StreamHandle>, s: sys::CUstream) -> Result<(), BackendError> {
        match stream {
            Some(handle) => self.synchronize_stream(handle, s),
            None => self.copy_waiting_for_stream(None, || self.sync_raw(None, s)),
        }
    }
}
