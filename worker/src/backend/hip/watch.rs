//! Launches watched for the kernel watchdog (`--max-kernel-ms`, `crate::watchdog`): an event
//! after each launch while it is on (`crate::backend::launch_watch`).

use super::api::{Event, Stream};
use super::error::Check;
use super::{HipBackend, Raw};
use crate::backend::DeviceIndex;

/// `hipEventDisableTiming`.
const EVENT_DISABLE_TIMING: u32 = 0x2;
/// `hipErrorNotReady`.
const NOT_READY: i32 = 600;

impl HipBackend {
    /// Records an event after a launch on `stream` (the kernel watchdog is on).
    pub(super) fn watch_launch(&self, stream: Stream, dev: DeviceIndex) {
        self.launch_watch.launched((stream as usize, dev), || {
            let mut event: Event = std::ptr::null_mut();
            // SAFETY: a valid out-pointer; the stream's device is current (just launched).
            unsafe { (self.api.hipEventCreateWithFlags)(&mut event, EVENT_DISABLE_TIMING) }.check("hipEventCreateWithFlags")?;
            // SAFETY: an event just created and a live stream of the current device.
            if let Err(e) = unsafe { (self.api.hipEventRecord)(event, stream) }.check("hipEventRecord") {
                // SAFETY: the event just created, used by nothing.
                let _ = unsafe { (self.api.hipEventDestroy)(event) };
                return Err(e);
            }
            Ok(Raw(event))
        });
    }

    /// The devices whose oldest unfinished launch of some stream ran past `limit`.
    pub(super) fn launches_overrun(&self, limit: std::time::Duration) -> Vec<DeviceIndex> {
        use crate::backend::launch_watch::Reached;
        let query = |dev: DeviceIndex, event: Raw<Event>| {
            if self.enter(dev).is_err() {
                return Reached::Failed;
            }
            // SAFETY: an event recorded by `watch_launch`, not destroyed.
            match unsafe { (self.api.hipEventQuery)(event.0) } {
                0 => Reached::Done,
                NOT_READY => Reached::Running,
                _ => Reached::Failed,
            }
        };
        let destroy = |_: DeviceIndex, event: Raw<Event>| {
            // SAFETY: a reached event, forgotten by the watch.
            let _ = unsafe { (self.api.hipEventDestroy)(event.0) };
        };
        self.launch_watch.overrun(limit, query, destroy)
    }
}
