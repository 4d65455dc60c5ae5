//! Stream family: create, destroy, synchronise, query, wait on events.

use super::{CallCx, Failure, Session};
use proto_core::opcode::StreamHandler;
use proto_core::wire;
use proto_core::Status;

impl StreamHandler for Session {
    fn stream_create(&mut self, _cx: &mut CallCx, req: wire::StreamCreate) -> Result<wire::StreamCreated, Failure> {
        let dev = self.device(req.device)?;
        self.streams.check_capacity()?;
        let handle = self.backend.stream_create(dev, req.flags, req.priority)?;
        Ok(wire::StreamCreated { stream: self.streams.insert((handle, dev)) })
    }

    fn stream_destroy(&mut self, _cx: &mut CallCx, req: wire::StreamRef) -> Result<wire::Empty, Failure> {
        let (handle, _) = self.streams.remove(req.stream)?;
        self.backend.stream_destroy(handle)?;
        Ok(wire::Empty {})
    }

    fn stream_synchronize(&mut self, _cx: &mut CallCx, req: wire::StreamRef) -> Result<wire::Empty, Failure> {
        match self.stream(req.stream)? {
            Some(stream) => self.backend.stream_synchronize(stream)?,
            // The null stream: everything on every device the session can see.
            None => {
                for dev in 0..self.backend.device_count()? {
                    self.backend.device_synchronize(dev)?;
                }
            }
        }
        Ok(wire::Empty {})
    }

    fn stream_query(&mut self, _cx: &mut CallCx, req: wire::StreamRef) -> Result<wire::QueryResult, Failure> {
        let complete = match self.stream(req.stream)? {
            Some(stream) => self.backend.stream_query(stream)?,
            None => true,
        };
        Ok(wire::QueryResult { complete })
    }

    fn stream_wait_event(&mut self, _cx: &mut CallCx, req: wire::StreamWaitEvent) -> Result<wire::Empty, Failure> {
        if req.flags != 0 {
            return Err(Failure::new(Status::INVALID_VALUE, format!("hipStreamWaitEvent flags {:#x} must be 0", req.flags)));
        }
        let stream = self.stream(req.stream)?;
        let event = self.event(req.event)?;
        self.backend.stream_wait_event(stream, event)?;
        Ok(wire::Empty {})
    }
    fn stream_get_info(&mut self, _cx: &mut CallCx, req: wire::StreamRef) -> Result<wire::StreamInfo, Failure> {
        if req.stream == 0 {
            return Err(Failure::new(Status::INVALID_VALUE, "the null stream has no creation flags or priority"));
        }
        let (handle, device) = *self.streams.get(req.stream)?;
        let (flags, priority) = self.backend.stream_info(handle)?;
        Ok(wire::StreamInfo { device, flags, priority })
    }
}
