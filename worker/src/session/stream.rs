//! Stream family: create, destroy, synchronise, query, wait on events; memory operations and
//! callbacks (in `callbacks.rs`).

use super::{CallCx, Failure, Session};
use crate::backend::stream_flags;
use proto_core::opcode::StreamHandler;
use proto_core::wire;
use proto_core::Status;

impl StreamHandler for Session {
    fn stream_create(&mut self, _cx: &mut CallCx, req: wire::StreamCreate) -> Result<wire::StreamCreated, Failure> {
        let entry = self.new_stream(req.device, req.flags, req.priority)?;
        Ok(wire::StreamCreated { stream: self.streams.insert(entry) })
    }

    fn stream_create_at(&mut self, _cx: &mut CallCx, req: wire::StreamCreateAt) -> Result<wire::Empty, Failure> {
        if req.stream & wire::CLIENT_HANDLE_TAG_MASK != wire::CLIENT_STREAM_TAG {
            return Err(Failure::new(Status::INVALID_HANDLE, format!("{:#x} is not a client-chosen stream handle", req.stream)));
        }
        if self.streams.get(req.stream).is_ok() {
            return Err(Failure::new(Status::INVALID_HANDLE, format!("stream {:#x} already exists", req.stream)));
        }
        let entry = self.new_stream(req.device, req.flags, req.priority)?;
        self.streams.insert_at(req.stream, entry);
        Ok(wire::Empty {})
    }

    fn stream_destroy(&mut self, _cx: &mut CallCx, req: wire::StreamRef) -> Result<wire::Empty, Failure> {
        // A per-thread stream never used needs no creating just to go.
        if req.stream & wire::PER_THREAD_STREAM_TAG_MASK == wire::PER_THREAD_STREAM_TAG && self.streams.get(req.stream).is_err() {
            return Ok(wire::Empty {});
        }
        let (handle, _, _) = self.streams.remove(req.stream)?;
        self.stream_priorities.remove(&handle);
        self.capture_forget_stream(req.stream);
        self.release_worker_stream();
        self.legacy_order.forget(handle);
        self.backend.stream_destroy(handle)?;
        Ok(wire::Empty {})
    }

    fn stream_synchronize(&mut self, _cx: &mut CallCx, req: wire::StreamRef) -> Result<wire::Empty, Failure> {
        self.materialize_per_thread(req.stream)?;
        self.capture_gate(req.stream)?;
        match req.stream {
            // The null stream: everything the session queued, on every device.
            0 => self.synchronize_session(None)?,
            stream => {
                let handle = self.streams.get(stream)?.0;
                let synced = self.backend.stream_synchronize(handle);
                self.forward_kernel_output(&[handle]);
                synced?;
                self.check_reset_under_call()?
            }
        }
        Ok(wire::Empty {})
    }

    fn stream_query(&mut self, _cx: &mut CallCx, req: wire::StreamRef) -> Result<wire::QueryResult, Failure> {
        self.materialize_per_thread(req.stream)?;
        self.capture_gate(req.stream)?;
        let complete = match req.stream {
            // The legacy null stream: ROCm queries it after making it wait for the blocking
            // streams, so it is ready only when they are too (the per-thread streams are
            // blocking streams).
            0 => {
                let blocking = self.streams.values().filter(|(_, _, blocking)| *blocking).map(|(s, _, _)| *s);
                let all: Vec<_> = self.null_streams.values().copied().chain(blocking).collect();
                let mut complete = true;
                for stream in all {
                    complete = complete && self.backend.stream_query(stream)?;
                }
                complete
            }
            stream => self.backend.stream_query(self.streams.get(stream)?.0)?,
        };
        Ok(wire::QueryResult { complete })
    }

    fn stream_wait_event(&mut self, _cx: &mut CallCx, req: wire::StreamWaitEvent) -> Result<wire::Empty, Failure> {
        if req.flags != 0 {
            return Err(Failure::new(Status::INVALID_VALUE, format!("hipStreamWaitEvent flags {:#x} must be 0", req.flags)));
        }
        let event = self.event(req.event)?;
        if self.capture_wait_event(req.stream, req.event)? {
            return Ok(wire::Empty {});
        }
        let device = self.events.get(req.event)?.1;
        let stream = self.stream(req.stream, device)?;
        self.backend.stream_wait_event(stream, event)?;
        Ok(wire::Empty {})
    }
    fn stream_get_info(&mut self, _cx: &mut CallCx, req: wire::StreamRef) -> Result<wire::StreamInfo, Failure> {
        if req.stream == 0 {
            return Err(Failure::new(Status::INVALID_VALUE, "the null stream has no creation flags or priority"));
        }
        self.materialize_per_thread(req.stream)?;
        let (handle, device, _) = *self.streams.get(req.stream)?;
        let (flags, _) = self.backend.stream_info(handle)?;
        // The HIP priority it was created with (per-thread streams: normal).
        let priority = self.stream_priorities.get(&handle).copied().unwrap_or(0);
        Ok(wire::StreamInfo { device: self.client_device(device), flags, priority })
    }

    fn stream_mem_op(&mut self, _cx: &mut CallCx, req: wire::StreamMemOp) -> Result<wire::Empty, Failure> {
        self.mem_op(req)
    }

    fn stream_add_callback(&mut self, _cx: &mut CallCx, req: wire::StreamAddCallback) -> Result<wire::Empty, Failure> {
        self.add_callback(req)
    }
}

impl Session {
    /// A backend stream for `hipStreamCreate*`, checked against the flags, the session's and the
    /// worker's limits: its table entry `(handle, device, blocking)`, not yet inserted.
    fn new_stream(
        &mut self,
        device: u32,
        flags: u32,
        priority: i32,
    ) -> Result<(crate::backend::StreamHandle, crate::backend::DeviceIndex, bool), Failure> {
        let dev = self.device(device)?;
        if flags & !stream_flags::SUPPORTED != 0 {
            return Err(Failure::new(Status::INVALID_VALUE, format!("unknown stream flags {flags:#x}")));
        }
        self.streams.check_capacity()?;
        self.reserve_worker_stream()?;
        let handle = self.create_backend_stream(dev, flags, priority).inspect_err(|_| self.release_worker_stream())?;
        Ok((handle, dev, flags & stream_flags::NON_BLOCKING == 0))
    }
}
