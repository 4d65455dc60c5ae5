//! Events of the host backend: the latest record's [`Signal`], timestamped by the stream that
//! reaches it.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::lock;
use super::stream::Signal;
use crate::backend::{event_flags, BackendError, DeviceIndex};

pub(super) struct Event {
    device: DeviceIndex,
    flags: u32,
    /// The most recent record; `None` until the event is first recorded.
    latest: Mutex<Option<Arc<Signal>>>,
}

impl Event {
    pub(super) fn new(device: DeviceIndex, flags: u32) -> Self {
        Self {
            device,
            flags,
            latest: Mutex::new(None),
        }
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
            return Err(BackendError::InvalidHandle(
                "event was created with hipEventDisableTiming".into(),
            ));
        }
        let signal = self
            .latest()
            .ok_or_else(|| BackendError::InvalidHandle("event has never been recorded".into()))?;
        Ok(signal.fired_at())
    }
}

/// Milliseconds from `start` to `end`, with ROCm's order of checks: timing impossible on
/// either event first, then either record not reached.
pub(super) fn elapsed_ms(start: &Event, end: &Event) -> Result<f32, BackendError> {
    let (start_at, end_at) = (start.timestamp()?, end.timestamp()?);
    let (Some(start_at), Some(end_at)) = (start_at, end_at) else {
        return Err(BackendError::NotReady(
            "event record not reached yet".into(),
        ));
    };
    let ms = match end_at.checked_duration_since(start_at) {
        Some(forward) => forward.as_secs_f64() * 1e3,
        None => -(start_at.duration_since(end_at).as_secs_f64() * 1e3),
    };
    Ok(ms as f32)
}
