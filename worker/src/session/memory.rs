//! Memory handlers: allocation and every copy direction, with pointer validation against the
//! session's allocation table before the backend is called. Bulk data never passes through
//! a handler's hands from the socket: the driver places it where [`Session::bulk_destination`]
//! says, and sends device-memory replies itself ([`Outcome::ReplyFromDevice`]).

use super::capture::copy_2d;
use super::tables::AllocInfo;
use super::{CallCx, Failure, LateReplies, PlacedBulk, Session, MAX_ALLOCATIONS_PER_SESSION};
use crate::backend::{BackendError, DeviceIndex, DevicePtr, DtohDone, HostData, MemsetPattern, Pitched, PitchedFill, Rows, StreamHandle};
use proto_core::limits::MAX_BULK_LEN;
use proto_core::opcode::{calls, Call, MemoryHandler};
use proto_core::wire::{self, MemsetWidth};
use proto_core::{Outcome, Request, Status};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Where the driver puts the bulk section of a to-device request.
#[derive(Debug)]
pub enum BulkDestination {
    /// Into device memory at `ptr`, ordered on `stream`; with `direct`, the transport may
    /// write it there itself (GPUDirect), else through [`Session::receive_into_device`].
    /// With `finish`, the copy completes before its reply (a synchronous upload): the bytes
    /// are to be in device memory when [`Session::receive_into_device`] returns.
    Device { stream: Option<StreamHandle>, ptr: DevicePtr, direct: bool, finish: bool },
    /// Into a buffer the handler takes over (the copy is queued behind a stream's work).
    Owned,
}

impl MemoryHandler for Session {
    fn malloc(&mut self, _cx: &mut CallCx, req: wire::Malloc) -> Result<wire::Allocation, Failure> {
        let dev = self.device(req.device)?;
        check_malloc_flags(req.flags, req.size)?;
        self.check_allocation_capacity(req.size)?;
        // Every accepted kind is ordinary device memory to the backends: host memory is
        // coherent already, and CUDA has no uncached/fine-grained device allocations.
        let ptr = self.backend.malloc(dev, req.size)?;
        self.record_allocation(ptr, req.size, dev);
        Ok(wire::Allocation { ptr: ptr.0 })
    }

    fn malloc_async(&mut self, cx: &mut CallCx, req: wire::MallocAsync) -> Result<wire::AsyncAllocation, Failure> {
        // From the current pool of the stream's device, as MallocFromPool with no pool.
        let req = wire::MallocFromPool { pool: 0, device: req.device, size: req.size, stream: req.stream };
        proto_core::opcode::PoolHandler::malloc_from_pool(self, cx, req)
    }

    fn free_async(&mut self, _cx: &mut CallCx, req: wire::FreeAsync) -> Result<wire::Empty, Failure> {
        if self.capture_mem_free(req.stream, req.ptr)? {
            return Ok(wire::Empty {});
        }
        if self.free_imported_pointer(req.ptr) {
            return Ok(wire::Empty {});
        }
        self.check_freeable(req.ptr, "hipFreeAsync")?;
        self.graph_memory_released(req.ptr);
        let stream = self.stream(req.stream, self.device_of(req.ptr))?;
        // Gone from the table now: later requests naming the address are refused, while
        // work queued before stays ordered ahead of the release (or the block's reuse).
        self.allocations.remove(req.ptr);
        self.forget_allocation(req.ptr);
        if self.is_ipc_export(req.ptr) {
            // Its release may not wait for the stream (shared memory goes with its last
            // holder): the session's work on it finishes first, as hipFree's would.
            let _ = self.synchronize_session(None);
        }
        if self.ipc_on_free(req.ptr) {
            // Shared as the exporter's own pointer: it goes with its last importer.
            return Ok(wire::Empty {});
        }
        self.pool_free(req.ptr, stream)?;
        Ok(wire::Empty {})
    }

    fn client_range_reserve(&mut self, _cx: &mut CallCx, req: wire::DeviceRef) -> Result<wire::ClientRange, Failure> {
        self.client_range(req.device, None)
    }

    fn client_range_reserve_at(&mut self, _cx: &mut CallCx, req: wire::ClientRangeAt) -> Result<wire::ClientRange, Failure> {
        self.client_range(req.device, Some((req.hint, req.max_len)))
    }

    fn malloc_at(&mut self, _cx: &mut CallCx, req: wire::MallocAt) -> Result<wire::Empty, Failure> {
        self.client_malloc(req)?;
        Ok(wire::Empty {})
    }

    fn free_at(&mut self, cx: &mut CallCx, req: wire::Free) -> Result<wire::Empty, Failure> {
        // hipFree, posted: the same checks, synchronisation and release.
        self.free(cx, req)
    }

    fn free(&mut self, _cx: &mut CallCx, req: wire::Free) -> Result<wire::Empty, Failure> {
        if req.ptr == 0 {
            return Ok(wire::Empty {});
        }
        if self.free_imported_pointer(req.ptr) {
            return Ok(wire::Empty {});
        }
        self.check_freeable(req.ptr, "hipFree")?;
        self.graph_memory_released(req.ptr);
        self.allocations.remove(req.ptr);
        // hipFree synchronizes the device (the session's work on it) before releasing memory.
        let _ = self.synchronize_session(None);
        self.forget_allocation(req.ptr);
        // Shared as the exporter's own pointer, it goes with its last importer; placed by
        // the client, its unit loses a user (an exported unit's memory goes with its last
        // importer too).
        let shared = self.ipc_on_free(req.ptr);
        if self.client_free(req.ptr) || shared {
            return Ok(wire::Empty {});
        }
        if self.pools.owns(req.ptr) {
            // A pool block freed with hipFree: back to its pool (the session's work is done).
            self.pool_free(req.ptr, None)?;
            return Ok(wire::Empty {});
        }
        self.backend.free(DevicePtr(req.ptr))?;
        Ok(wire::Empty {})
    }

    fn memcpy_htod(&mut self, cx: &mut CallCx, req: wire::MemcpyHtoD<'_>) -> Result<wire::Empty, Failure> {
        let stream = self.stream(req.stream, self.device_of(req.dst))?;
        let dst = DevicePtr(req.dst);
        match std::mem::take(&mut cx.placed) {
            // The driver wrote the bytes into device memory (see `bulk_destination`).
            PlacedBulk::InDevice { len, direct } => {
                self.allocations.resolve(req.dst, len as u64, "hipMemcpy destination")?;
                // The client is told the copy is complete, or (a posted `hipMemcpy`, which
                // has returned already) anything the client sends next must find it done,
                // whichever stream that work runs on: every chunk must have landed.
                if !direct && (!cx.no_reply || req.sync) {
                    self.backend.finish_device_writes(stream, dst)?;
                }
            }
            // Queued behind earlier work on the stream, which keeps the bytes.
            PlacedBulk::Owned(data) => {
                self.allocations.resolve(req.dst, data.len() as u64, "hipMemcpy destination")?;
                let data = PendingUpload::new(data, &self.pending_bytes);
                self.backend.memcpy_htod(stream, dst, HostData::from_buffer(data))?;
            }
            // Bytes in the message itself (a request decoded whole, as in-memory tests send).
            PlacedBulk::None if req.data.0.is_empty() => {}
            PlacedBulk::None => {
                self.allocations.resolve(req.dst, req.data.0.len() as u64, "hipMemcpy destination")?;
                self.backend.memcpy_htod_sync(stream, dst, req.data.0)?;
            }
        }
        Ok(wire::Empty {})
    }

    fn memcpy_htod_by_hash(&mut self, _cx: &mut CallCx, req: wire::MemcpyHtoDByHash<'_>) -> Result<wire::ContentFound, Failure> {
        const MISS: wire::ContentFound = wire::ContentFound { found: false };
        let Some(tenant) = self.tenant.as_deref() else { return Ok(MISS) };
        let Some(bytes) = self.config.content.get(tenant, req.hash.0).filter(|b| b.len() as u64 == req.len) else { return Ok(MISS) };
        let stream = self.stream(req.stream, self.device_of(req.dst))?;
        self.allocations.resolve(req.dst, req.len, "hipMemcpy destination")?;
        let dst = DevicePtr(req.dst);
        if req.sync {
            self.backend.memcpy_htod_sync(stream, dst, &bytes)?;
        } else {
            // Queued behind earlier work on the stream, as an uploaded copy is.
            let data = PendingUpload::new(bytes.to_vec(), &self.pending_bytes);
            self.backend.memcpy_htod(stream, dst, HostData::from_buffer(data))?;
        }
        Ok(wire::ContentFound { found: true })
    }

    fn memcpy_htod_compressed(&mut self, _cx: &mut CallCx, req: wire::MemcpyHtoDCompressed<'_>) -> Result<wire::Empty, Failure> {
        // The bound is checked before anything is allocated for the output.
        if req.len as usize > MAX_BULK_LEN {
            return Err(Failure::new(
                Status::INVALID_VALUE,
                format!("compressed copy of {} bytes exceeds the per-frame limit {MAX_BULK_LEN}; split it", req.len),
            ));
        }
        if req.len == 0 {
            return Ok(wire::Empty {});
        }
        self.allocations.resolve(req.dst, req.len, "hipMemcpy destination")?;
        let mut data = vec![0u8; req.len as usize];
        match lz4_flex::block::decompress_into(req.data.0, &mut data) {
            Ok(n) if n == data.len() => {}
            Ok(n) => return Err(Failure::new(Status::INVALID_VALUE, format!("compressed copy gave {n} bytes, not the {} announced", req.len))),
            Err(e) => return Err(Failure::new(Status::INVALID_VALUE, format!("compressed copy is not a valid LZ4 block: {e}"))),
        }
        let stream = self.stream(req.stream, self.device_of(req.dst))?;
        let dst = DevicePtr(req.dst);
        if req.sync {
            self.backend.memcpy_htod_sync(stream, dst, &data)?;
        } else {
            let data = PendingUpload::new(data, &self.pending_bytes);
            self.backend.memcpy_htod(stream, dst, HostData::from_buffer(data))?;
        }
        Ok(wire::Empty {})
    }

    fn content_remember(&mut self, _cx: &mut CallCx, req: wire::ContentRemember<'_>) -> Result<wire::Empty, Failure> {
        // Content the store could not keep anyway is not read back.
        let Some(tenant) = self.tenant.clone() else { return Ok(wire::Empty {}) };
        if req.len > super::content::MAX_CONTENT_BYTES_PER_TENANT || req.len == 0 {
            return Ok(wire::Empty {});
        }
        let (_, alloc) = self.allocations.resolve(req.src, req.len, "content source")?;
        let stream = self.stream(req.stream, alloc.device)?;
        let mut bytes = vec![0u8; req.len as usize];
        // After the copy that wrote them, whichever stream it went to.
        self.backend.memcpy_dtoh_sync(stream, DevicePtr(req.src), &mut bytes)?;
        if !self.config.content.put(&tenant, req.hash.0, bytes) {
            tracing::debug!(session = self.id, len = req.len, "content not kept (hash mismatch or too large)");
        }
        Ok(wire::Empty {})
    }

    fn memcpy_dtoh<'a>(&'a mut self, cx: &mut CallCx, req: wire::MemcpyDtoH) -> Result<Outcome<wire::MemcpyData<'a>>, Failure> {
        if req.len as usize > MAX_BULK_LEN {
            return Err(Failure::new(
                Status::INVALID_VALUE,
                format!("copy of {} bytes exceeds the per-frame limit {MAX_BULK_LEN}; split it", req.len),
            ));
        }
        if req.len == 0 {
            return Ok(wire::MemcpyData { data: Default::default() }.into());
        }
        let (_, alloc) = self.allocations.resolve(req.src, req.len, "hipMemcpy source")?;
        let stream = self.stream(req.stream, alloc.device)?;
        if req.stream == 0 && !cx.no_reply {
            // Null stream: the copy is due now, so the driver sends the reply straight from
            // device memory (GPUDirect where the transport can, else zero-copy on the host
            // backend and one staging copy on GPU backends) once earlier work is done.
            if self.gpu_direct_possible() {
                self.wait_before_direct(stream)?;
            }
            self.forward_output_before_copy(stream, alloc.device);
            let reply = wire::MemcpyData { data: proto_core::Bulk(&[]) };
            return Ok(Outcome::ReplyFromDevice { reply, ptr: req.src, len: req.len });
        }
        // The reply goes out when the stream reaches the copy, from whichever thread runs it;
        // the request loop meanwhile serves the client's next requests.
        self.check_session_memory(if cx.no_reply { 0 } else { req.len }, "device-to-host reply")?;
        let done = deferred_data_reply::<calls::MemcpyDtoH>(&self.late, cx, req.len as usize)?;
        self.backend.memcpy_dtoh(stream, DevicePtr(req.src), req.len, done)?;
        Ok(Outcome::Later)
    }

    fn memcpy_dtod(&mut self, _cx: &mut CallCx, req: wire::MemcpyDtoD) -> Result<wire::Empty, Failure> {
        if req.len == 0 {
            return Ok(wire::Empty {});
        }
        self.allocations.resolve(req.dst, req.len, "hipMemcpy destination")?;
        self.allocations.resolve(req.src, req.len, "hipMemcpy source")?;
        if !req.sync && self.capture_copy(req.stream, req.dst, req.src, req.len)? {
            return Ok(wire::Empty {});
        }
        let (dst_dev, src_dev) = (self.device_of(req.dst), self.device_of(req.src));
        let stream = self.stream(req.stream, dst_dev)?;
        let source_null = self.other_null_stream(req.stream, dst_dev, src_dev)?;
        self.between_null_streams(stream, source_null, |s| s.backend.memcpy_dtod(stream, DevicePtr(req.dst), DevicePtr(req.src), req.len))?;
        if req.sync {
            self.sync_stream(stream)?;
        }
        Ok(wire::Empty {})
    }

    fn memset(&mut self, _cx: &mut CallCx, req: wire::Memset) -> Result<wire::Empty, Failure> {
        let pattern = match req.width {
            MemsetWidth::Byte => MemsetPattern::U8(req.value as u8),
            MemsetWidth::Half => MemsetPattern::U16(req.value as u16),
            MemsetWidth::Word => MemsetPattern::U32(req.value),
        };
        let bytes = pattern.byte_len(req.count).ok_or_else(|| Failure::new(Status::INVALID_VALUE, "memset size overflows"))?;
        if bytes == 0 {
            return Ok(wire::Empty {});
        }
        self.allocations.resolve(req.dst, bytes, "hipMemset destination")?;
        let fill = PitchedFill { ptr: DevicePtr(req.dst), pitch: bytes, slice_pitch: 0, width: req.count, height: 1, depth: 1 };
        if !req.sync && self.capture_memset(req.stream, fill, pattern)? {
            return Ok(wire::Empty {});
        }
        let stream = self.stream(req.stream, self.device_of(req.dst))?;
        self.backend.memset(stream, DevicePtr(req.dst), pattern, req.count)?;
        if req.sync {
            self.sync_stream(stream)?;
        }
        Ok(wire::Empty {})
    }

    fn memset_pitched(&mut self, _cx: &mut CallCx, req: wire::MemsetPitched) -> Result<wire::Empty, Failure> {
        self.memset_pitched_request(req)
    }

    fn memcpy_htod_2d(&mut self, _cx: &mut CallCx, req: wire::MemcpyHtoD2D<'_>) -> Result<wire::Empty, Failure> {
        let len = req.data.0.len() as u64;
        if req.width == 0 || !len.is_multiple_of(req.width) {
            return Err(Failure::new(Status::INVALID_VALUE, format!("2D copy data of {len} bytes is not a whole number of {}-byte rows", req.width)));
        }
        let rows = Rows { width: req.width, height: len / req.width };
        if len == 0 {
            return Ok(wire::Empty {});
        }
        self.resolve_pitched(req.dst, req.pitch, rows, "hipMemcpy2D destination")?;
        let stream = self.stream(req.stream, self.device_of(req.dst))?;
        let dst = Pitched { ptr: DevicePtr(req.dst), pitch: req.pitch };
        self.backend.memcpy_htod_2d(stream, dst, req.width, req.data.0.to_vec().into())?;
        if req.sync {
            self.sync_stream(stream)?;
        }
        Ok(wire::Empty {})
    }

    fn memcpy_dtoh_2d<'a>(&'a mut self, cx: &mut CallCx, req: wire::MemcpyDtoH2D) -> Result<Outcome<wire::MemcpyData<'a>>, Failure> {
        let rows = Rows { width: req.width, height: req.height };
        let packed = rows.packed_len().filter(|&n| n as usize <= MAX_BULK_LEN).ok_or_else(|| {
            Failure::new(
                Status::INVALID_VALUE,
                format!("2D copy of {}x{} bytes exceeds the per-frame limit {MAX_BULK_LEN}; split it", req.width, req.height),
            )
        })?;
        if packed == 0 {
            return Ok(wire::MemcpyData { data: Default::default() }.into());
        }
        self.resolve_pitched(req.src, req.pitch, rows, "hipMemcpy2D source")?;
        let stream = self.stream(req.stream, self.device_of(req.src))?;
        let src = Pitched { ptr: DevicePtr(req.src), pitch: req.pitch };
        self.check_session_memory(if cx.no_reply { 0 } else { packed }, "device-to-host reply")?;
        let done = deferred_data_reply::<calls::MemcpyDtoH2D>(&self.late, cx, packed as usize)?;
        self.backend.memcpy_dtoh_2d(stream, src, rows, done)?;
        Ok(Outcome::Later)
    }

    fn memcpy_dtod_2d(&mut self, _cx: &mut CallCx, req: wire::MemcpyDtoD2D) -> Result<wire::Empty, Failure> {
        let rows = Rows { width: req.width, height: req.height };
        if rows.packed_len() == Some(0) {
            return Ok(wire::Empty {});
        }
        self.resolve_pitched(req.dst, req.dst_pitch, rows, "hipMemcpy2D destination")?;
        self.resolve_pitched(req.src, req.src_pitch, rows, "hipMemcpy2D source")?;
        if !req.sync && self.capture_copy_3d(req.stream, &copy_2d(&req))? {
            return Ok(wire::Empty {});
        }
        let (dst_dev, src_dev) = (self.device_of(req.dst), self.device_of(req.src));
        let stream = self.stream(req.stream, dst_dev)?;
        let source_null = self.other_null_stream(req.stream, dst_dev, src_dev)?;
        let dst = Pitched { ptr: DevicePtr(req.dst), pitch: req.dst_pitch };
        let src = Pitched { ptr: DevicePtr(req.src), pitch: req.src_pitch };
        self.between_null_streams(stream, source_null, |s| s.backend.memcpy_dtod_2d(stream, dst, src, rows))?;
        if req.sync {
            self.sync_stream(stream)?;
        }
        Ok(wire::Empty {})
    }

    fn memcpy_htod_striped(&mut self, _cx: &mut CallCx, _req: wire::MemcpyHtoDStriped) -> Result<wire::Empty, Failure> {
        // The driver runs striped copies of sessions that hold stripes.
        Err(Failure::new(Status::NOT_SUPPORTED, "striped copy refused: this session holds no stripes (StripesOpen)"))
    }

    fn memcpy_dtoh_striped(&mut self, _cx: &mut CallCx, _req: wire::MemcpyDtoHStriped) -> Result<wire::Empty, Failure> {
        Err(Failure::new(Status::NOT_SUPPORTED, "striped copy refused: this session holds no stripes (StripesOpen)"))
    }

    fn host_alloc_shared(&mut self, _cx: &mut CallCx, req: wire::HostAllocShared) -> Result<wire::SharedRegion, Failure> {
        self.host_alloc_shared_request(req)
    }

    fn host_free_shared(&mut self, _cx: &mut CallCx, req: wire::HostFreeShared) -> Result<wire::Empty, Failure> {
        self.host_free_shared_request(req)
    }

    fn memcpy_htod_shared(&mut self, _cx: &mut CallCx, req: wire::MemcpyHtoDShared) -> Result<wire::Empty, Failure> {
        self.memcpy_htod_shared_request(req)
    }

    fn memcpy_dtoh_shared(&mut self, _cx: &mut CallCx, req: wire::MemcpyDtoHShared) -> Result<wire::Empty, Failure> {
        self.memcpy_dtoh_shared_request(req)
    }

    fn memcpy_peer(&mut self, _cx: &mut CallCx, req: wire::MemcpyPeer) -> Result<wire::Empty, Failure> {
        let dst_dev = self.device(req.dst_device)?;
        let src_dev = self.device(req.src_device)?;
        if req.len == 0 {
            return Ok(wire::Empty {});
        }
        self.allocations.resolve(req.dst, req.len, "hipMemcpyPeer destination")?;
        self.allocations.resolve(req.src, req.len, "hipMemcpyPeer source")?;
        let stream = self.stream(req.stream, dst_dev)?;
        let source_null = self.other_null_stream(req.stream, dst_dev, src_dev)?;
        self.between_null_streams(stream, source_null, |s| {
            s.backend.memcpy_peer(stream, DevicePtr(req.dst), dst_dev, DevicePtr(req.src), src_dev, req.len)
        })?;
        if req.sync {
            self.sync_stream(stream)?;
        }
        Ok(wire::Empty {})
    }
}

impl Session {
    /// For a copy between two devices on the null stream, the source device's null stream
    /// (None otherwise). HIP runs such a copy on the current device's null stream, which the
    /// worker is not told (stream 0 names no device); it runs on the destination's.
    fn other_null_stream(&mut self, stream: u64, dst_dev: DeviceIndex, src_dev: DeviceIndex) -> Result<Option<StreamHandle>, Failure> {
        if stream != 0 || dst_dev == src_dev {
            return Ok(None);
        }
        self.stream(0, src_dev)
    }

    /// Runs `copy` on `stream` (the destination's null stream) ordered after the work queued
    /// before on `source_null`, whose later work then waits for the copy: whichever of the
    /// two devices is current, the copy is where HIP puts it in that device's null stream
    /// (CuPy queues a cross-device copy on the source device's and waits for it there).
    fn between_null_streams(
        &mut self,
        stream: Option<StreamHandle>,
        source_null: Option<StreamHandle>,
        copy: impl FnOnce(&mut Self) -> Result<(), BackendError>,
    ) -> Result<(), Failure> {
        let (Some(stream), Some(source_null)) = (stream, source_null) else { return Ok(copy(self)?) };
        self.backend.stream_order_after(stream, source_null)?;
        copy(self)?;
        self.backend.stream_order_after(source_null, stream)?;
        Ok(())
    }

    /// Where the bulk section of a to-device request goes, decided before any byte of it is
    /// read: its destination is validated first, so a bad pointer costs no device write.
    pub fn bulk_destination(&mut self, request: &Request<'_>, len: usize) -> Result<BulkDestination, Failure> {
        let Request::MemcpyHtoD(req) = request else {
            return Err(Failure::new(Status::INVALID_VALUE, format!("{} carries no data for the device", request.opcode())));
        };
        let (_, alloc) = self.allocations.resolve(req.dst, len as u64, "hipMemcpy destination")?;
        let stream = self.stream(req.stream, alloc.device)?;
        let ptr = DevicePtr(req.dst);
        if !(req.sync || req.stream == 0) {
            // Buffered until the stream runs the copy: bounded per session.
            let (pending, max) = (self.pending_bytes.load(Ordering::Acquire), self.config.limits.max_pending_bytes);
            if pending.saturating_add(len) > max {
                return Err(Failure::new(
                    Status::OUT_OF_MEMORY,
                    format!("{len}-byte upload refused: the session's queued uploads would pass {max} bytes (--max-pending-mib); synchronize first"),
                ));
            }
            self.check_session_memory(len as u64, "buffered upload")?;
            return Ok(BulkDestination::Owned);
        }
        let direct = self.gpu_direct_possible();
        if direct {
            // GPUDirect: the NIC writes into device memory itself, once the work ordered
            // before this copy is done.
            self.wait_before_direct(stream)?;
        }
        Ok(BulkDestination::Device { stream, ptr, direct, finish: req.sync })
    }

    /// Lends `fill` the `len` bytes of device memory at `ptr` to write (the memory itself on
    /// the host backend, a staging buffer copied to the device afterwards on GPUs).
    pub fn receive_into_device(
        &self,
        stream: Option<StreamHandle>,
        ptr: DevicePtr,
        len: u64,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), Failure> {
        self.backend.with_device_bytes_mut(stream, ptr, len, fill)?;
        Ok(())
    }

    /// [`Session::receive_into_device`] for a copy that completes before its reply: the bytes
    /// are in device memory on return, and nothing was queued on the stream to get there (a
    /// GPU's staging buffer goes back once the copy is waited for, not from a host function
    /// whose wake-up the handler's wait would pay).
    pub fn receive_into_device_finished(
        &self,
        stream: Option<StreamHandle>,
        ptr: DevicePtr,
        len: u64,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), Failure> {
        self.backend.with_device_bytes_mut_finished(stream, ptr, len, fill)?;
        Ok(())
    }

    /// Lends `read` the `len` bytes of device memory at `ptr` once the session's null
    /// stream's earlier work is done (zero-copy on the host backend, staged on GPUs).
    pub fn read_device_bytes(&self, ptr: u64, len: u64, read: &mut dyn FnMut(&[u8])) -> Result<(), Failure> {
        // The copy's handler resolved the null stream, creating it.
        let stream = self.null_streams.get(&self.device_of(ptr)).copied();
        self.backend.with_device_bytes(stream, DevicePtr(ptr), len, read)?;
        Ok(())
    }

    /// Refuses an allocation of `size` bytes past the session's count or memory bound,
    /// before anything is allocated.
    pub(super) fn check_allocation_capacity(&self, size: u64) -> Result<(), Failure> {
        if self.allocations.len() >= MAX_ALLOCATIONS_PER_SESSION {
            return Err(Failure::new(Status::OUT_OF_MEMORY, format!("session holds the maximum of {MAX_ALLOCATIONS_PER_SESSION} allocations")));
        }
        self.check_session_memory(size, "allocation")?;
        Ok(())
    }

    /// Bytes the session holds against `--max-session-memory-mib`: its device allocations,
    /// its buffered asynchronous uploads and its queued or in-flight device-to-host replies.
    pub(crate) fn session_memory_in_use(&self) -> u64 {
        let buffered = self.pending_bytes.load(Ordering::Acquire).saturating_add(self.late.charged_bytes());
        self.allocations
            .total_bytes()
            .saturating_add(self.arrays.total_bytes())
            .saturating_add(buffered as u64)
            .saturating_add(self.pools.cached_bytes())
            .saturating_add(self.vmm.physical_bytes())
            .saturating_add(self.client_ranges.cached_bytes())
            .saturating_add(self.shared_regions.bytes())
    }

    /// Refuses `more` bytes of `what` that would take the session past its memory bound.
    /// Only this session's thread adds to the account, so a check is not raced past.
    pub(super) fn check_session_memory(&self, more: u64, what: &str) -> Result<(), Failure> {
        let Some(max) = self.config.limits.max_memory else { return Ok(()) };
        let held = self.session_memory_in_use();
        if held.checked_add(more).is_none_or(|total| total > max) {
            return Err(Failure::new(
                Status::OUT_OF_MEMORY,
                format!(
                    "{more}-byte {what} refused: the session would pass its memory bound of {max} bytes (holds {held} in allocations, \
                     buffered uploads and unread replies; --max-session-memory-mib)"
                ),
            ));
        }
        Ok(())
    }

    pub(super) fn record_allocation(&mut self, ptr: DevicePtr, size: u64, device: u32) {
        if !ptr.is_null() {
            self.allocations.insert(ptr.0, AllocInfo { size, device, module: None });
            self.remember_allocation(ptr.0, size);
        }
    }

    /// Refuses anything but the start of a live `hipMalloc*` allocation of this session.
    fn check_freeable(&self, ptr: u64, what: &str) -> Result<(), Failure> {
        match self.allocations.get(ptr) {
            None => Err(Failure::new(Status::INVALID_VALUE, format!("{what}({ptr:#x}): not the start of a live allocation of this session"))),
            Some(info) if info.module.is_some() => {
                Err(Failure::new(Status::INVALID_VALUE, format!("{what}({ptr:#x}): a module global cannot be freed (unload its module)")))
            }
            Some(_) if self.is_ipc_import(ptr) => {
                Err(Failure::new(Status::INVALID_VALUE, format!("{what}({ptr:#x}): IPC memory is closed with hipIpcCloseMemHandle")))
            }
            Some(_) => Ok(()),
        }
    }

    /// Checks that `rows` at `pitch` from `ptr` lie inside one allocation of this session.
    fn resolve_pitched(&self, ptr: u64, pitch: u64, rows: Rows, what: &str) -> Result<(), Failure> {
        if pitch < rows.width {
            return Err(Failure::new(Status::INVALID_PITCH_VALUE, format!("{what} pitch {pitch} is less than the row width {}", rows.width)));
        }
        let span = rows
            .span(pitch)
            .ok_or_else(|| Failure::new(Status::INVALID_VALUE, format!("{what}: {pitch}-byte pitch over {} rows overflows", rows.height)))?;
        self.allocations.resolve(ptr, span, what)?;
        Ok(())
    }

    /// Whether copies may bypass host staging: GPU memory, and a transport that takes
    /// device memory (the session announced its allocations to it).
    pub fn gpu_direct_possible(&self) -> bool {
        self.memory.is_some() && !self.backend.device_memory_is_host_memory()
    }

    /// Waits for the work a direct NIC access must come after: the stream's (the session's
    /// null stream comes after its blocking streams already, see `Session::stream`).
    fn wait_before_direct(&self, stream: Option<StreamHandle>) -> Result<(), Failure> {
        if let Some(s) = stream {
            self.backend.stream_synchronize(s)?;
        }
        Ok(())
    }

    pub(super) fn sync_stream(&self, stream: Option<StreamHandle>) -> Result<(), Failure> {
        if let Some(s) = stream {
            self.backend.stream_synchronize(s)?;
        }
        Ok(())
    }
}

/// Accepts the `hipExtMallocWithFlags` kinds ROCm accepts (one kind, not a mask); signal
/// memory must be exactly 8 bytes.
pub(super) fn check_malloc_flags(flags: u32, size: u64) -> Result<(), Failure> {
    const DEFAULT: u32 = 0;
    const FINEGRAINED: u32 = 1;
    const SIGNAL_MEMORY: u32 = 2;
    const UNCACHED: u32 = 3;
    const CONTIGUOUS: u32 = 4;
    match flags {
        DEFAULT | FINEGRAINED | UNCACHED | CONTIGUOUS => Ok(()),
        SIGNAL_MEMORY if size == 8 => Ok(()),
        SIGNAL_MEMORY => Err(Failure::new(Status::INVALID_VALUE, format!("hipMallocSignalMemory needs 8 bytes, not {size}"))),
        other => Err(Failure::new(Status::INVALID_VALUE, format!("hipExtMallocWithFlags flags {other:#x} are not a known kind"))),
    }
}

/// The completion of a device-to-host copy of `len` bytes answered later: the bytes (or the
/// error) go out when the stream reaches the copy, from whichever thread runs it, as the reply
/// of call `C` (the opcode table's line, whose reply is the copied bytes). The bytes are
/// reserved in the session's bound on queued replies first; past it the copy fails with
/// `hipErrorOutOfMemory` (a client that never reads its replies cannot grow the worker).
pub(super) fn deferred_data_reply<C>(late: &Arc<LateReplies>, cx: &CallCx, len: usize) -> Result<DtohDone, Failure>
where
    C: for<'b> Call<Reply<'b> = wire::MemcpyData<'b>> + 'static,
{
    let reserved = if cx.no_reply { 0 } else { len };
    if !late.try_reserve(reserved) {
        let message = format!(
            "{len}-byte copy refused: the session's unread device-to-host replies would pass {} bytes (--max-queued-reply-mib); read replies (synchronize) first",
            late.limit()
        );
        return Err(Failure::new(Status::OUT_OF_MEMORY, message));
    }
    // Given back when the completion is dropped without running (the backend refused the
    // copy) or the reply is not queued.
    let mut reservation = Reservation { late: Arc::clone(late), bytes: reserved };
    let late = Arc::clone(late);
    let (request_id, no_reply) = (cx.request_id, cx.no_reply);
    Ok(Box::new(move |result| {
        // Queued, never written here: this runs on a stream executor, which must not block on
        // a client that is busy sending (see LateReplies).
        match result {
            Ok(_) if no_reply => {}
            Ok(bytes) => {
                let reply = C::reply(wire::MemcpyData { data: proto_core::Bulk(&bytes) });
                late.push_reserved(request_id, &reply, std::mem::take(&mut reservation.bytes))
            }
            Err(e) if no_reply => late.defer(Status(e.hip_code())),
            Err(e) => late.push_error(request_id, C::OPCODE.raw(), Status(e.hip_code()), &e.to_string()),
        }
        drop(reservation);
    }))
}

/// An upload's bytes, counted in the session's pending bytes until the copy ran (or was
/// refused) and they are dropped.
pub(super) struct PendingUpload {
    bytes: Vec<u8>,
    pending: Arc<AtomicUsize>,
}

impl PendingUpload {
    pub(super) fn new(bytes: Vec<u8>, pending: &Arc<AtomicUsize>) -> Self {
        pending.fetch_add(bytes.len(), Ordering::AcqRel);
        Self { bytes, pending: Arc::clone(pending) }
    }
}

impl AsRef<[u8]> for PendingUpload {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl Drop for PendingUpload {
    fn drop(&mut self) {
        self.pending.fetch_sub(self.bytes.len(), Ordering::AcqRel);
    }
}

/// Reply bytes reserved in a session's [`LateReplies`], given back on drop unless handed on.
struct Reservation {
    late: Arc<LateReplies>,
    bytes: usize,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.late.release(self.bytes);
    }
}
