//! Events on CUDA: `CUevent`s recorded into streams.

use cudarc::driver::sys::CUevent;

use super::{lock, read, result, CudaBackend, EventEntry, Raw};

use crate::backend::{validate_event_flags, BackendError, DeviceIndex, EventBackend, EventHandle, StreamHandle};

impl EventBackend for CudaBackend {
    fn event_create(&self, dev: DeviceIndex, flags: u32) -> Result<EventHandle, BackendError> {
        validate_event_flags(flags)?;
        self.enter(dev)?;
        let timing = flags & crate::backend::event_flags::DISABLE_TIMING == 0;
        // Not CU_EVENT_INTERPROCESS: the driver's interprocess events live in /dev/shm, which
        // a confined session process cannot reach; sharing gives an event a page of its own
        // (`ipc.rs`), and the session keeps the flag.
        let cu_flags = flags & (crate::backend::event_flags::BLOCKING_SYNC | crate::backend::event_flags::DISABLE_TIMING);
        // The context is current; the flag bits equal CUDA's.
        let raw = result::event::create(cu_flags)?;
        let id = self.handle();
        lock(&self.events)
            .insert(id, EventEntry { raw: Raw(raw), device: dev, stream: super::device_log::stream_key(None), timing, recorded: false });
        Ok(EventHandle::from_raw(id))
    }

    fn event_destroy(&self, event: EventHandle) -> Result<(), BackendError> {
        let e = lock(&self.events).remove(&event.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("event {:#x}", event.as_raw())))?;
        self.drop_event_page(event, e.device);
        self.enter(e.device)?;
        // Removed from the table: destroyed once.
        Ok(result::event::destroy(e.raw.0)?)
    }

    fn event_record(&self, event: EventHandle, stream: Option<StreamHandle>) -> Result<(), BackendError> {
        let (raw, device) = {
            let events = lock(&self.events);
            let e = events.get(&event.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("event {:#x}", event.as_raw())))?;
            (e.raw, e.device)
        };
        let s = self.stream(stream, device)?;
        // A client's event ends a batch of device time: what follows may come after a wait.
        if let Some(account) = stream.and_then(|h| read(&self.streams).get(&h.as_raw()).and_then(|e| e.account.clone())) {
            account.close(s);
            account.settle();
        }
        result::event::record(raw.0, s)?;
        if let Some(page) = self.event_page(event) {
            self.record_event_page(&page, s)?;
        }
        if let Some(e) = lock(&self.events).get_mut(&event.as_raw()) {
            e.recorded = true;
            e.stream = super::device_log::stream_key(stream);
        }
        Ok(())
    }

    fn event_synchronize(&self, event: EventHandle) -> Result<(), BackendError> {
        let (raw, device, recorded) = self.event_entry(event)?;
        if let Some(page) = self.event_page(event) {
            // Recorded by any process sharing it: its page says when.
            Self::wait_event_page(&page);
            return Ok(());
        }
        if !recorded {
            return Ok(());
        }
        let stream = lock(&self.events).get(&event.as_raw()).map_or(super::device_log::stream_key(None), |e| e.stream);
        self.enter(device)?;
        self.wait_for_event(stream, || Ok(result::event::synchronize(raw.0)?))
    }

    fn event_query(&self, event: EventHandle) -> Result<bool, BackendError> {
        let (raw, device, recorded) = self.event_entry(event)?;
        if let Some(page) = self.event_page(event) {
            return Ok(Self::event_page_complete(&page));
        }
        if !recorded {
            return Ok(true);
        }
        self.enter(device)?;
        Ok(result::event::query(raw.0)?)
    }

    fn event_elapsed_ms(&self, start: EventHandle, end: EventHandle) -> Result<f32, BackendError> {
        let timing = |h: EventHandle| -> Result<(Raw<CUevent>, DeviceIndex), BackendError> {
            let events = lock(&self.events);
            let e = events.get(&h.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("event {:#x}", h.as_raw())))?;
            if !e.timing || !e.recorded {
                return Err(BackendError::InvalidHandle("event not recorded or created with hipEventDisableTiming".into()));
            }
            Ok((e.raw, e.device))
        };
        let (a, dev) = timing(start)?;
        let (b, _) = timing(end)?;
        self.enter(dev)?;
        // Both recorded timing events.
        Ok(result::event::elapsed_ms(a.0, b.0)?)
    }
}

impl CudaBackend {
    pub(super) fn event_entry(&self, event: EventHandle) -> Result<(Raw<CUevent>, DeviceIndex, bool), BackendError> {
        let events = lock(&self.events);
        let e = events.get(&event.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("event {:#x}", event.as_raw())))?;
        Ok((e.raw, e.device, e.recorded))
    }
}
