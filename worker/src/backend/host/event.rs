//! Events of the host backend: the latest record's [`Signal`], timestamped by the stream that
//! reaches it; and the backend's [`EventBackend`] impl.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::ipc::EventPage;
use super::stream::{Signal, StreamOp};
use super::{lock, write_lock, HostBackend};

use crate::backend::{event_flags, validate_event_flags, BackendError, DeviceIndex, EventBackend, EventHandle, StreamHandle};

pub(super) struct Event {
    device: DeviceIndex,
    flags: u32,
    /// The most recent record; `None` until the event is first recorded.
    latest: Mutex<Option<Arc<Signal>>>,
    /// An interprocess event's shared counters, which its records, queries and waits use
    /// instead of `latest` (another process may record it, [`super::ipc`]).
    page: Option<Arc<EventPage>>,
}

impl Event {
    pub(super) fn new(device: DeviceIndex, flags: u32) -> Self {
        Self { device, flags, latest: Mutex::new(None), page: None }
    }

    /// An interprocess event over `page`.
    pub(super) fn with_page(device: DeviceIndex, flags: u32, page: Arc<EventPage>) -> Self {
        Self { page: Some(page), ..Self::new(device, flags) }
    }

    pub(super) fn shared_page(&self) -> Option<&Arc<EventPage>> {
        self.page.as_ref()
    }

    pub(super) fn device(&self) -> DeviceIndex {
        self.device
    }

    /// Makes `signal` the record that queries, waits and timings refer to.
    pub(super) fn set_latest(&self, signal: Arc<Signal>) {
        *lock(&self.latest) = Some(signal);
    }

    pub(super) fn latest(&self) -> Option<Arc<Signal>> {
        lock(&self.latest).clone()
    }

    /// The latest record's timestamp: `InvalidHandle` if the event cannot be timed (never
    /// recorded, or created with `hipEventDisableTiming`), `Ok(None)` if not reached yet.
    fn timestamp(&self) -> Result<Option<Instant>, BackendError> {
        if self.flags & event_flags::DISABLE_TIMING != 0 {
            return Err(BackendError::InvalidHandle("event was created with hipEventDisableTiming".into()));
        }
        let signal = self.latest().ok_or_else(|| BackendError::InvalidHandle("event has never been recorded".into()))?;
        Ok(signal.fired_at())
    }
}

/// Milliseconds from `start` to `end`, with ROCm's order of checks: timing impossible on
/// either event first, then either record not reached.
pub(super) fn elapsed_ms(start: &Event, end: &Event) -> Result<f32, BackendError> {
    let (start_at, end_at) = (start.timestamp()?, end.timestamp()?);
    let (Some(start_at), Some(end_at)) = (start_at, end_at) else {
        return Err(BackendError::NotReady("event record not reached yet".into()));
    };
    let ms = match end_at.checked_duration_since(start_at) {
        Some(forward) => forward.as_secs_f64() * 1e3,
        None => -(start_at.duration_since(end_at).as_secs_f64() * 1e3),
    };
    Ok(ms as f32)
}

impl EventBackend for HostBackend {
    fn event_create(&self, dev: DeviceIndex, flags: u32) -> Result<EventHandle, BackendError> {
        self.device(dev)?;
        validate_event_flags(flags)?;
        let event = match flags & event_flags::INTERPROCESS {
            0 => Event::new(dev, flags),
            _ => Event::with_page(dev, flags, Arc::new(EventPage::create()?)),
        };
        let handle = EventHandle::from_raw(self.next_handle());
        write_lock(&self.events).insert(handle, Arc::new(event));
        Ok(handle)
    }

    fn event_destroy(&self, event: EventHandle) -> Result<(), BackendError> {
        write_lock(&self.events)
            .remove(&event)
            .map(drop)
            .ok_or_else(|| BackendError::InvalidHandle(format!("event {} does not exist", event.as_raw())))
    }

    fn event_record(&self, event: EventHandle, stream: Option<StreamHandle>) -> Result<(), BackendError> {
        let event = self.event(event)?;
        if let Some(page) = event.shared_page() {
            if let Some(handle) = stream {
                let stream_device = self.stream(handle)?.device();
                if stream_device != event.device() {
                    return Err(BackendError::InvalidHandle(format!(
                        "event of device {} recorded on a stream of device {stream_device}",
                        event.device()
                    )));
                }
            }
            return self.record_shared_event(page, event.device(), stream);
        }
        let signal = Arc::new(Signal::new());
        match stream {
            Some(handle) => {
                let stream = self.stream(handle)?;
                if stream.device() != event.device() {
                    return Err(BackendError::InvalidHandle(format!(
                        "event of device {} recorded on a stream of device {}",
                        event.device(),
                        stream.device()
                    )));
                }
                stream.submit(StreamOp::RecordEvent(Arc::clone(&signal)))?;
            }
            None => {
                self.null_stream_barrier(&[event.device()]);
                signal.fire();
            }
        }
        event.set_latest(signal);
        Ok(())
    }

    fn event_synchronize(&self, event: EventHandle) -> Result<(), BackendError> {
        let event = self.event(event)?;
        if let Some(page) = event.shared_page() {
            page.wait_for(page.latest_record());
            return Ok(());
        }
        if let Some(signal) = event.latest() {
            signal.wait();
        }
        Ok(())
    }

    fn event_query(&self, event: EventHandle) -> Result<bool, BackendError> {
        let event = self.event(event)?;
        if let Some(page) = event.shared_page() {
            return Ok(page.reached(page.latest_record()));
        }
        // Never recorded counts as complete, as in HIP.
        let reached = match event.latest() {
            Some(signal) => signal.fired_at().is_some(),
            None => true,
        };
        Ok(reached)
    }

    fn event_elapsed_ms(&self, start: EventHandle, end: EventHandle) -> Result<f32, BackendError> {
        let (start, end) = (self.event(start)?, self.event(end)?);
        if start.device() != end.device() {
            return Err(BackendError::InvalidHandle("events belong to different devices".into()));
        }
        elapsed_ms(&start, &end)
    }
}
