//! Memory handlers: allocation and every copy direction, with pointer validation against the
//! session's allocation table before the backend is called.

use super::tables::AllocInfo;
use super::{Failure, Session, WorkerIo, MAX_ALLOCATIONS_PER_SESSION};
use crate::backend::{DevicePtr, MemsetPattern};
use proto_core::limits::MAX_BULK_LEN;
use proto_core::wire::{self, MemsetWidth};
use proto_core::{Response, Status};
use std::sync::Arc;

impl Session {
    pub(super) fn do_malloc(&mut self, req: wire::Malloc) -> Result<wire::Allocation, Failure> {
        let dev = self.device(req.device)?;
        if req.flags != 0 {
            return Err(Failure::new(Status::INVALID_VALUE, format!("hipMalloc flags {:#x} are not supported", req.flags)));
        }
        if self.allocations.len() >= MAX_ALLOCATIONS_PER_SESSION {
            return Err(Failure::new(Status::OUT_OF_MEMORY, format!("session holds the maximum of {MAX_ALLOCATIONS_PER_SESSION} allocations")));
        }
        let ptr = self.backend.malloc(dev, req.size)?;
        if !ptr.is_null() {
            self.allocations.insert(ptr.0, AllocInfo { size: req.size, device: dev, module: None });
            self.remember_allocation(ptr.0, req.size);
        }
        Ok(wire::Allocation { ptr: ptr.0 })
    }

    pub(super) fn do_free(&mut self, req: wire::Free) -> Result<wire::Empty, Failure> {
        if req.ptr == 0 {
            return Ok(wire::Empty {});
        }
        match self.allocations.get(req.ptr) {
            None => return Err(Failure::new(Status::INVALID_VALUE, format!("hipFree({:#x}): not the start of a live allocation of this session", req.ptr))),
            Some(info) if info.module.is_some() => {
                return Err(Failure::new(Status::INVALID_VALUE, format!("hipFree({:#x}): a module global cannot be freed (unload its module)", req.ptr)))
            }
            Some(_) => {}
        }
        self.allocations.remove(req.ptr);
        // hipFree synchronizes the device before releasing memory.
        for (stream, _) in self.streams.values() {
            let _ = self.backend.stream_synchronize(*stream);
        }
        self.forget_allocation(req.ptr);
        self.backend.free(DevicePtr(req.ptr))?;
        Ok(wire::Empty {})
    }

    pub(super) fn do_memcpy_htod<'a>(&'a mut self, io: &mut WorkerIo, req: wire::MemcpyHtoD<'a>) -> Result<wire::Empty, Failure> {
        // The driver leaves MemcpyHtoD's bulk section in the transport so it can be placed
        // straight into device memory; bytes already decoded (in-memory tests) are used as is.
        let len = if req.data.0.is_empty() { io.source.bulk_remaining() } else { req.data.0.len() };
        if len == 0 {
            return Ok(wire::Empty {});
        }
        let (_, alloc) = self.allocations.resolve(req.dst, len as u64, "hipMemcpy destination")?;
        let stream = self.stream(req.stream)?;
        let dst = DevicePtr(req.dst);
        if !req.data.0.is_empty() {
            self.backend.memcpy_htod_sync(stream, dst, req.data.0)?;
            return Ok(wire::Empty {});
        }
        if (req.sync || stream.is_none()) && self.gpu_direct_possible() {
            // GPUDirect: the NIC writes into device memory itself, once the work ordered
            // before this copy is done.
            self.wait_before_direct(stream, alloc.device)?;
            let placed = io.source.recv_bulk_to_device(req.dst, len);
            if placed.map_err(|e| Failure::new(Status::UNKNOWN, format!("connection failed during copy: {e}")))? {
                return Ok(wire::Empty {});
            }
        }
        if req.sync || stream.is_none() {
            // Zero-copy on the host backend: the socket is read straight into device memory.
            let mut transport_result = Ok(());
            self.backend.with_device_bytes_mut(stream, dst, len as u64, &mut |bytes| {
                transport_result = io.source.recv_bulk(bytes);
            })?;
            transport_result.map_err(|e| Failure::new(Status::UNKNOWN, format!("connection failed during copy: {e}")))?;
            if !io.no_reply {
                // The client is told the copy is complete: every chunk must have landed.
                self.backend.finish_device_writes(stream, dst)?;
            }
        } else {
            // Queued behind earlier work: the bytes must outlive this request.
            let mut data = Vec::new();
            data.try_reserve_exact(len).map_err(|_| Failure::new(Status::OUT_OF_MEMORY, "worker cannot buffer the copy"))?;
            data.resize(len, 0);
            io.source
                .recv_bulk(&mut data)
                .map_err(|e| Failure::new(Status::UNKNOWN, format!("connection failed during copy: {e}")))?;
            self.backend.memcpy_htod(stream, dst, data.into())?;
        }
        Ok(wire::Empty {})
    }

    pub(super) fn do_memcpy_dtoh<'a>(&'a mut self, io: &mut WorkerIo, req: wire::MemcpyDtoH) -> Result<wire::MemcpyData<'a>, Failure> {
        if req.len as usize > MAX_BULK_LEN {
            return Err(Failure::new(Status::INVALID_VALUE, format!("copy of {} bytes exceeds the per-frame limit {MAX_BULK_LEN}; split it", req.len)));
        }
        if req.len == 0 {
            return Ok(wire::MemcpyData { data: Default::default() });
        }
        let (_, alloc) = self.allocations.resolve(req.src, req.len, "hipMemcpy source")?;
        let stream = self.stream(req.stream)?;
        if stream.is_none() && !io.no_reply && self.gpu_direct_possible() {
            // GPUDirect: the NIC reads device memory into the client's landing itself.
            self.wait_before_direct(None, alloc.device)?;
            let empty = Response::MemcpyDtoH(wire::MemcpyData { data: proto_core::Bulk(&[]) });
            let sent = io.replies.send_response_from_device(io.request_id, &empty, req.src, req.len);
            if sent.map_err(|e| Failure::new(Status::UNKNOWN, format!("connection failed during copy: {e}")))? {
                return Err(Failure::ReplyDeferred);
            }
        }
        if stream.is_none() && !io.no_reply {
            // Null stream: the copy is due now, so the reply is written straight from device
            // memory (zero-copy on the host backend; one staging copy on GPU backends).
            let mut sent = Ok(());
            let request_id = io.request_id;
            let replies = &io.replies;
            self.backend.with_device_bytes(None, DevicePtr(req.src), req.len, &mut |bytes| {
                sent = replies.send_response(request_id, &Response::MemcpyDtoH(wire::MemcpyData { data: proto_core::Bulk(bytes) }));
            })?;
            sent.map_err(|e| Failure::new(Status::UNKNOWN, format!("connection failed during copy: {e}")))?;
            return Err(Failure::ReplyDeferred);
        }
        // The reply goes out when the stream reaches the copy, from whichever thread runs it;
        // the request loop meanwhile serves the client's next requests.
        let replies = Arc::clone(&io.replies);
        let (request_id, opcode, no_reply) = (io.request_id, io.opcode, io.no_reply);
        self.backend.memcpy_dtoh(
            stream,
            DevicePtr(req.src),
            req.len,
            Box::new(move |result| {
                // Queued, never written here: this runs on a stream executor, which must not
                // block on a client that is busy sending (see ReplySender).
                match result {
                    Ok(_) if no_reply => {}
                    Ok(bytes) => replies.queue_response(request_id, &Response::MemcpyDtoH(wire::MemcpyData { data: proto_core::Bulk(&bytes) })),
                    Err(e) if no_reply => replies.defer(Status(e.hip_code())),
                    Err(e) => replies.queue_error(request_id, opcode.raw(), Status(e.hip_code()), &e.to_string()),
                }
            }),
        )?;
        Err(Failure::ReplyDeferred)
    }

    pub(super) fn do_memcpy_dtod(&mut self, req: wire::MemcpyDtoD) -> Result<wire::Empty, Failure> {
        if req.len == 0 {
            return Ok(wire::Empty {});
        }
        self.allocations.resolve(req.dst, req.len, "hipMemcpy destination")?;
        self.allocations.resolve(req.src, req.len, "hipMemcpy source")?;
        let stream = self.stream(req.stream)?;
        self.backend.memcpy_dtod(stream, DevicePtr(req.dst), DevicePtr(req.src), req.len)?;
        if req.sync {
            self.sync_stream(stream)?;
        }
        Ok(wire::Empty {})
    }

    pub(super) fn do_memset(&mut self, req: wire::Memset) -> Result<wire::Empty, Failure> {
        let pattern = match req.width {
            MemsetWidth::Byte => MemsetPattern::U8(req.value as u8),
            MemsetWidth::Half => MemsetPattern::U16(req.value as u16),
            MemsetWidth::Word => MemsetPattern::U32(req.value),
        };
        let bytes = pattern
            .byte_len(req.count)
            .ok_or_else(|| Failure::new(Status::INVALID_VALUE, "memset size overflows"))?;
        if bytes == 0 {
            return Ok(wire::Empty {});
        }
        self.allocations.resolve(req.dst, bytes, "hipMemset destination")?;
        let stream = self.stream(req.stream)?;
        self.backend.memset(stream, DevicePtr(req.dst), pattern, req.count)?;
        if req.sync {
            self.sync_stream(stream)?;
        }
        Ok(wire::Empty {})
    }

    /// Whether copies may bypass host staging: GPU memory, and a transport that takes
    /// device memory (the session announced its allocations to it).
    fn gpu_direct_possible(&self) -> bool {
        self.memory.is_some() && !self.backend.device_memory_is_host_memory()
    }

    /// Waits for the work a direct NIC access must come after: the stream's, or the whole
    /// device's for the null stream.
    fn wait_before_direct(&self, stream: Option<crate::backend::StreamHandle>, device: crate::backend::DeviceIndex) -> Result<(), Failure> {
        match stream {
            Some(s) => self.backend.stream_synchronize(s)?,
            None => self.backend.device_synchronize(device)?,
        }
        Ok(())
    }

    fn sync_stream(&self, stream: Option<crate::backend::StreamHandle>) -> Result<(), Failure> {
        // Null-stream work completes before the backend call returns.
        if let Some(s) = stream {
            self.backend.stream_synchronize(s)?;
        }
        Ok(())
    }
}
