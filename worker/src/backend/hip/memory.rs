//! Device memory on HIP: `hipMalloc`/`hipFree`, stream-ordered copies (`hipMemcpyAsync`,
//! `hipMemcpy2DAsync`, `hipMemcpyPeerAsync`) and memsets. Asynchronous copies from the host
//! keep their source alive until the stream reaches them; asynchronous copies to the host land
//! in a buffer handed to the session then (see [`HipBackend::when_reached`]).

use super::{lock, HipBackend};
use crate::backend::{
    zeroed_buffer, BackendError, DeviceIndex, DevicePtr, DtohDone, HostData, MemInfo, MemoryBackend, MemsetPattern, Pitched, PoolAccess, Rows,
    StreamHandle,
};
use std::ffi::c_void;

fn usize_of(len: u64) -> Result<usize, BackendError> {
    usize::try_from(len).map_err(|_| BackendError::InvalidValue(format!("{len} bytes exceed the address space")))
}

fn device_ptr(ptr: DevicePtr) -> *mut c_void {
    ptr.0 as *mut c_void
}

impl HipBackend {
    /// The stream to run a copy touching `near` on (`None`: the null stream of its device).
    fn stream_near(&self, stream: Option<StreamHandle>, near: DevicePtr) -> Result<(super::Stream, DeviceIndex), BackendError> {
        let dev = match stream {
            Some(_) => 0,
            None => self.device_of(near)?,
        };
        self.work_stream(stream, dev)
    }

    fn synchronize(&self, stream: super::Stream) -> Result<(), BackendError> {
        let account = self.account_of_raw(stream);
        if let Some(account) = &account {
            account.close(stream);
        }
        // A live stream (or the null stream) of the current device.
        let synced = self.api.stream_synchronize(stream);
        if let Some(account) = &account {
            account.settle();
        }
        synced?;
        self.progress.fence();
        Ok(())
    }

    /// Keeps `keep` alive until `stream` reaches its current end.
    fn keep_until_reached<T: Send + 'static>(&self, stream: super::Stream, dev: DeviceIndex, keep: T) -> Result<(), BackendError> {
        self.when_reached(stream, dev, Box::new(move |_| drop(keep)))
    }
}

impl MemoryBackend for HipBackend {
    fn mem_get_info(&self, dev: DeviceIndex) -> Result<MemInfo, BackendError> {
        self.enter(dev)?;
        let (free, total) = self.api.mem_get_info()?;
        Ok(MemInfo { free: free as u64, total: total as u64 })
    }

    /// `hipMalloc`, pool and managed allocations (arrays, module globals and virtual memory
    /// are not counted).
    fn allocated_bytes(&self, dev: DeviceIndex) -> Option<u64> {
        Some(lock(&self.allocations).values().filter(|(_, d)| *d == dev).map(|(size, _)| size).sum())
    }

    fn malloc(&self, dev: DeviceIndex, size: u64) -> Result<DevicePtr, BackendError> {
        if size == 0 {
            return Ok(DevicePtr::NULL);
        }
        let bytes = usize::try_from(size).map_err(|_| BackendError::OutOfMemory(format!("{size} bytes exceed the address space")))?;
        self.enter(dev)?;
        let ptr = self.api.malloc(bytes)?;
        // The runtime may hand out what another session freed: zeros first.
        if let Err(e) = self.scrub_now(dev, ptr, bytes) {
            // The allocation just made, never handed out.
            let _ = self.api.free(ptr);
            return Err(e);
        }
        lock(&self.allocations).insert(ptr as u64, (size, dev));
        Ok(DevicePtr(ptr as u64))
    }

    /// `hipFree` waits for the device's queued work first (HIP's own rule), so launches still
    /// using the allocation finish.
    fn free(&self, ptr: DevicePtr) -> Result<(), BackendError> {
        if ptr.is_null() {
            return Ok(());
        }
        let (_, dev) = lock(&self.allocations)
            .remove(&ptr.0)
            .ok_or_else(|| BackendError::InvalidDevicePointer(format!("{ptr} is not a HIP allocation base")))?;
        self.enter(dev)?;
        // A live allocation removed from the table above; freed once.
        Ok(self.api.free(device_ptr(ptr))?)
    }

    fn memcpy_htod(&self, stream: Option<StreamHandle>, dst: DevicePtr, data: HostData) -> Result<(), BackendError> {
        if data.is_empty() {
            return Ok(());
        }
        let (s, dev) = self.stream_near(stream, dst)?;
        let bytes = data.as_bytes();
        // SAFETY: `data` stays alive until the stream reaches the copy (kept below).
        unsafe { self.api.memcpy_htod_async(dst.0, bytes.as_ptr(), bytes.len(), s) }?;
        if let Err(e) = self.keep_until_reached(s, dev, data) {
            // The copy is queued but nothing would keep its source alive: wait for it here.
            self.synchronize(s)?;
            tracing::debug!(%e, "htod copy completed synchronously");
        }
        Ok(())
    }

    /// One DMA straight into the registered region; `done` once the stream has passed it.
    fn memcpy_dtoh_registered(
        &self,
        stream: Option<StreamHandle>,
        src: DevicePtr,
        dst: crate::backend::host_region::RegionSlice,
        done: crate::backend::RegisteredDone,
    ) -> Result<(), BackendError> {
        let (s, dev) = self.stream_near(stream, src)?;
        // SAFETY: the destination lies in host memory that `dst` keeps mapped until the
        // stream has passed the copy (moved into the callback).
        unsafe { self.api.memcpy_dtoh_async(dst.addr() as *mut u8, src.0, dst.len(), s) }?;
        let queued = self.when_reached(
            s,
            dev,
            Box::new(move |reached| {
                drop(dst);
                done(reached);
            }),
        );
        if queued.is_err() {
            // Nothing would say when the copy is done: it is, once the stream is.
            self.synchronize(s)?;
        }
        queued
    }

    /// One DMA into the registered region, waited for: no callback holds the region (the
    /// caller does until this returns).
    fn memcpy_dtoh_registered_sync(
        &self,
        stream: Option<StreamHandle>,
        src: DevicePtr,
        dst: &crate::backend::host_region::RegionSlice,
    ) -> Result<(), BackendError> {
        if dst.is_empty() {
            return Ok(());
        }
        let (s, _) = self.stream_near(stream, src)?;
        // SAFETY: the destination lies in registered host memory that the caller's `dst`
        // keeps mapped until the synchronize below returns.
        unsafe { self.api.memcpy_dtoh_async(dst.addr() as *mut u8, src.0, dst.len(), s) }?;
        self.synchronize(s)
    }

    fn memcpy_htod_sync(&self, stream: Option<StreamHandle>, dst: DevicePtr, data: &[u8]) -> Result<(), BackendError> {
        if data.is_empty() {
            return Ok(());
        }
        let (s, _) = self.stream_near(stream, dst)?;
        // SAFETY: `data` outlives the copy: the stream is synchronized before returning.
        unsafe { self.api.memcpy_htod_async(dst.0, data.as_ptr(), data.len(), s) }?;
        self.synchronize(s)
    }

    fn memcpy_dtoh(&self, stream: Option<StreamHandle>, src: DevicePtr, len: u64, done: DtohDone) -> Result<(), BackendError> {
        let mut out = zeroed_buffer(len)?;
        if out.is_empty() {
            done(Ok(out));
            return Ok(());
        }
        let (s, dev) = self.stream_near(stream, src)?;
        // SAFETY: `out`'s heap buffer does not move when `out` moves into the completion
        // below, which keeps it alive, untouched, until the stream has reached the copy.
        unsafe { self.api.memcpy_dtoh_async(out.as_mut_ptr(), src.0, out.len(), s) }?;
        self.when_reached(s, dev, Box::new(move |reached| done(reached.map(|()| out))))
    }

    fn memcpy_dtoh_sync(&self, stream: Option<StreamHandle>, src: DevicePtr, out: &mut [u8]) -> Result<(), BackendError> {
        if out.is_empty() {
            return Ok(());
        }
        let (s, _) = self.stream_near(stream, src)?;
        // SAFETY: `out` outlives the copy: the stream is synchronized before returning.
        unsafe { self.api.memcpy_dtoh_async(out.as_mut_ptr(), src.0, out.len(), s) }?;
        self.synchronize(s)
    }

    fn memcpy_dtod(&self, stream: Option<StreamHandle>, dst: DevicePtr, src: DevicePtr, len: u64) -> Result<(), BackendError> {
        if len == 0 {
            return Ok(());
        }
        let (s, _) = self.stream_near(stream, dst)?;
        Ok(self.api.memcpy_dtod_async(dst.0, src.0, usize_of(len)?, s)?)
    }

    fn memset(&self, stream: Option<StreamHandle>, dst: DevicePtr, pattern: MemsetPattern, count: u64) -> Result<(), BackendError> {
        if count == 0 {
            return Ok(());
        }
        let (s, _) = self.stream_near(stream, dst)?;
        let count = usize_of(count)?;
        Ok(match pattern {
            MemsetPattern::U8(v) => self.api.memset_async(device_ptr(dst), std::ffi::c_int::from(v), count, s),
            MemsetPattern::U16(v) => self.api.memset_d16_async(dst.0, v, count, s),
            MemsetPattern::U32(v) => self.api.memset_d32_async(dst.0, v, count, s),
        }?)
    }

    fn memcpy_htod_2d(&self, stream: Option<StreamHandle>, dst: Pitched, width: u64, data: HostData) -> Result<(), BackendError> {
        if width == 0 || data.is_empty() {
            return Ok(());
        }
        let height = data.len() as u64 / width;
        let (s, dev) = self.stream_near(stream, dst.ptr)?;
        let bytes = data.as_bytes();
        let (dst_pitch, width, height) = (usize_of(dst.pitch)?, usize_of(width)?, usize_of(height)?);
        // SAFETY: `data` holds `height` packed rows and stays alive until the stream reaches
        // the copy.
        unsafe { self.api.memcpy_2d_htod_async(dst.ptr.0, dst_pitch, bytes.as_ptr(), width, height, s) }?;
        if self.keep_until_reached(s, dev, data).is_err() {
            self.synchronize(s)?;
        }
        Ok(())
    }

    fn memcpy_dtoh_2d(&self, stream: Option<StreamHandle>, src: Pitched, rows: Rows, done: DtohDone) -> Result<(), BackendError> {
        let len = rows.packed_len().ok_or_else(|| BackendError::InvalidValue("2D copy size overflows".into()))?;
        let mut out = zeroed_buffer(len)?;
        if out.is_empty() {
            done(Ok(out));
            return Ok(());
        }
        let (s, dev) = self.stream_near(stream, src.ptr)?;
        let (src_pitch, width, height) = (usize_of(src.pitch)?, usize_of(rows.width)?, usize_of(rows.height)?);
        // SAFETY: `out` holds `height` packed rows and moves (without its heap buffer moving)
        // into the completion, alive and untouched until the stream reaches the copy.
        unsafe { self.api.memcpy_2d_dtoh_async(out.as_mut_ptr(), src.ptr.0, src_pitch, width, height, s) }?;
        self.when_reached(s, dev, Box::new(move |reached| done(reached.map(|()| out))))
    }

    fn memcpy_dtod_2d(&self, stream: Option<StreamHandle>, dst: Pitched, src: Pitched, rows: Rows) -> Result<(), BackendError> {
        if rows.width == 0 || rows.height == 0 {
            return Ok(());
        }
        let (s, _) = self.stream_near(stream, dst.ptr)?;
        let (dst_pitch, src_pitch) = (usize_of(dst.pitch)?, usize_of(src.pitch)?);
        Ok(self.api.memcpy_2d_dtod_async(dst.ptr.0, dst_pitch, src.ptr.0, src_pitch, usize_of(rows.width)?, usize_of(rows.height)?, s)?)
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
        self.device(dst_dev)?;
        self.device(src_dev)?;
        if len == 0 {
            return Ok(());
        }
        let (s, _) = self.work_stream(stream, src_dev)?;
        Ok(self.api.memcpy_peer_async(dst.0, self.ordinal(dst_dev)?, src.0, self.ordinal(src_dev)?, usize_of(len)?, s)?)
    }

    fn malloc_async(&self, stream: Option<StreamHandle>, dev: DeviceIndex, size: u64) -> Result<DevicePtr, BackendError> {
        if size == 0 {
            return Ok(DevicePtr::NULL);
        }
        let bytes = usize::try_from(size).map_err(|_| BackendError::OutOfMemory(format!("{size} bytes exceed the address space")))?;
        let s = self.stream(stream, dev)?;
        // A live stream of the current device.
        let ptr = self.api.malloc_async(bytes, s)?;
        // The pool may hand out what another session freed: zeros first, in stream order.
        if let Err(e) = self.scrub_on(ptr, bytes, s) {
            // The allocation just made on `s`, never handed out.
            let _ = self.api.free_async(ptr, s);
            return Err(e);
        }
        lock(&self.allocations).insert(ptr as u64, (size, dev));
        Ok(DevicePtr(ptr as u64))
    }

    fn free_async(&self, stream: Option<StreamHandle>, ptr: DevicePtr) -> Result<(), BackendError> {
        if ptr.is_null() {
            return Ok(());
        }
        let (_, dev) = lock(&self.allocations)
            .remove(&ptr.0)
            .ok_or_else(|| BackendError::InvalidDevicePointer(format!("{ptr} is not a HIP allocation base")))?;
        let s = self.stream(stream, dev)?;
        // A live allocation removed from the table above; the runtime frees it once the
        // stream's earlier work is done.
        Ok(self.api.free_async(device_ptr(ptr), s)?)
    }

    fn set_pool_access(&self, owner: DeviceIndex, peer: DeviceIndex, access: PoolAccess) -> Result<PoolAccess, BackendError> {
        let (owner_ordinal, peer_ordinal) = (self.ordinal(owner)?, self.ordinal(peer)?);
        self.enter(owner)?;
        // The pool hipMallocAsync allocates from (the worker never replaces it): peer access to
        // its memory is the pool's, not hipDeviceEnablePeerAccess's.
        let pool = self.api.device_mem_pool(owner_ordinal)?;
        self.api.mem_pool_set_access(pool, peer_ordinal, access.flags())?;
        let applied = self.api.mem_pool_access(pool, peer_ordinal)?;
        PoolAccess::from_flags(applied)
            .ok_or_else(|| BackendError::Unknown(format!("hipMemPoolGetAccess answered access flags {applied} for device {peer}")))
    }
}
