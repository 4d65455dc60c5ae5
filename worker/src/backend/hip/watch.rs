//! Launches watched for the kernel watchdog (`--max-kernel-ms`, `crate::watchdog`): an event
//! after each launch, and after each stream wait, while it is on
//! (`crate::backend::launch_watch`).

use super::api::{Event, Stream};
use super::{HipBackend, Raw};
use crate::backend::DeviceIndex;

/// `hipEventDisableTiming`.
const EVENT_DISABLE_TIMING: u32 = 0x2;

impl HipBackend {
    /// Records an event after a launch on `stream` (the kernel watchdog is on).
    pub(super) fn watch_launch(&self, stream: Stream, dev: DeviceIndex) {
        self.launch_watch.launched((stream as usize, dev), || self.record_after(stream));
    }

    /// Records an event after a stream wait (`hipStreamWaitValue*`) on `stream` (the kernel
    /// watchdog is on): never an overrun however long the application holds it.
    pub(super) fn watch_wait(&self, stream: Stream, dev: DeviceIndex) {
        self.launch_watch.waited((stream as usize, dev), || self.record_after(stream));
    }

    /// An event recorded on `stream` after the work just queued there (its device current).
    fn record_after(&self, stream: Stream) -> Result<Raw<Event>, crate::backend::BackendError> {
        let event = self.api.event_create_with_flags(EVENT_DISABLE_TIMING)?;
        if let Err(e) = self.api.event_record(event, stream) {
            // The event just created, used by nothing.
            let _ = self.api.event_destroy(event);
            return Err(crate::backend::BackendError::from(e));
        }
        Ok(Raw(event))
    }

    /// The devices whose oldest unfinished launch of some stream ran past `limit`.
    pub(super) fn launches_overrun(&self, limit: std::time::Duration) -> Vec<DeviceIndex> {
        use crate::backend::launch_watch::Reached;
        let query = |dev: DeviceIndex, event: Raw<Event>| {
            if self.enter(dev).is_err() {
                return Reached::Failed;
            }
            // An event recorded by `watch_launch`, not destroyed.
            match self.api.event_query(event.0) {
                Ok(true) => Reached::Done,
                Ok(false) => Reached::Running,
                Err(_) => Reached::Failed,
            }
        };
        let destroy = |_: DeviceIndex, event: Raw<Event>| {
            // A reached event, forgotten by the watch.
            let _ = self.api.event_destroy(event.0);
        };
        self.launch_watch.overrun(limit, query, destroy)
    }
}
