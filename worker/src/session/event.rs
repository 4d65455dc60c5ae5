//! Event family.

use super::{CallCx, Failure, Session};
use proto_core::opcode::EventHandler;
use proto_core::wire;
use proto_core::Status;

impl EventHandler for Session {
    fn event_create(&mut self, _cx: &mut CallCx, req: wire::EventCreate) -> Result<wire::EventCreated, Failure> {
        self.events.check_capacity()?;
        let dev = self.device(req.device)?;
        let handle = self.backend.event_create(dev, req.flags)?;
        let event = self.events.insert((handle, dev));
        self.ipc_on_event_create(event, req.flags);
        Ok(wire::EventCreated { event })
    }

    fn event_create_at(&mut self, _cx: &mut CallCx, req: wire::EventCreateAt) -> Result<wire::Empty, Failure> {
        if req.event & wire::CLIENT_HANDLE_TAG_MASK != wire::CLIENT_EVENT_TAG {
            return Err(Failure::new(Status::INVALID_HANDLE, format!("{:#x} is not a client-chosen event handle", req.event)));
        }
        if self.events.get(req.event).is_ok() {
            return Err(Failure::new(Status::INVALID_HANDLE, format!("event {:#x} already exists", req.event)));
        }
        self.events.check_capacity()?;
        let dev = self.device(req.device)?;
        let handle = self.backend.event_create(dev, req.flags)?;
        self.events.insert_at(req.event, (handle, dev));
        self.ipc_on_event_create(req.event, req.flags);
        Ok(wire::Empty {})
    }

    fn event_record(&mut self, _cx: &mut CallCx, req: wire::EventRecord) -> Result<wire::Empty, Failure> {
        let (event, device) = *self.events.get(req.event)?;
        if self.capture_event_record(req.event, req.stream)? {
            return Ok(wire::Empty {});
        }
        let stream = self.stream(req.stream, device)?;
        self.backend.event_record(event, stream)?;
        Ok(wire::Empty {})
    }

    fn event_synchronize(&mut self, _cx: &mut CallCx, req: wire::EventRef) -> Result<wire::Empty, Failure> {
        let synced = self.backend.event_synchronize(self.event(req.event)?);
        self.forward_kernel_output(&self.all_streams());
        synced?;
        Ok(wire::Empty {})
    }

    fn event_query(&mut self, _cx: &mut CallCx, req: wire::EventRef) -> Result<wire::QueryResult, Failure> {
        Ok(wire::QueryResult { complete: self.backend.event_query(self.event(req.event)?)? })
    }

    fn event_elapsed_time(&mut self, _cx: &mut CallCx, req: wire::EventElapsed) -> Result<wire::ElapsedTime, Failure> {
        let (start, end) = (self.event(req.start)?, self.event(req.end)?);
        Ok(wire::ElapsedTime { ms: self.backend.event_elapsed_ms(start, end)? })
    }

    fn event_destroy(&mut self, _cx: &mut CallCx, req: wire::EventRef) -> Result<wire::Empty, Failure> {
        let (handle, _) = self.events.remove(req.event)?;
        if self.ipc_on_event_destroy(req.event) {
            // Another session's event, or shared: it goes with its last holder.
            return Ok(wire::Empty {});
        }
        self.backend.event_destroy(handle)?;
        Ok(wire::Empty {})
    }
}
