//! Events: markers recorded into streams, timestamped when reached.

use super::{BackendError, DeviceIndex, EventHandle, StreamHandle};

/// `hipEventCreateWithFlags` flags.
pub mod event_flags {
    /// `hipEventDefault`.
    pub const DEFAULT: u32 = 0x0;
    /// `hipEventBlockingSync`: waiters sleep instead of spinning.
    pub const BLOCKING_SYNC: u32 = 0x1;
    /// `hipEventDisableTiming`: no timestamp; `hipEventElapsedTime` refuses the event.
    pub const DISABLE_TIMING: u32 = 0x2;
    /// `hipEventInterprocess`: requires [`DISABLE_TIMING`].
    pub const INTERPROCESS: u32 = 0x4;
    /// `hipEventDisableSystemFence`.
    pub const DISABLE_SYSTEM_FENCE: u32 = 0x2000_0000;
    /// `hipEventReleaseToDevice`.
    pub const RELEASE_TO_DEVICE: u32 = 0x4000_0000;
    /// `hipEventReleaseToSystem`.
    pub const RELEASE_TO_SYSTEM: u32 = 0x8000_0000;
    /// The release-scope flags, of which at most one may be set.
    pub const RELEASE_SCOPES: u32 = DISABLE_SYSTEM_FENCE | RELEASE_TO_DEVICE | RELEASE_TO_SYSTEM;
    /// Every flag a backend accepts.
    pub const SUPPORTED: u32 = BLOCKING_SYNC | DISABLE_TIMING | INTERPROCESS | RELEASE_SCOPES;
}

/// Checks `hipEventCreateWithFlags` flags the way ROCm does: no unknown bits, at most one
/// release scope, and `INTERPROCESS` only together with `DISABLE_TIMING`.
pub fn validate_event_flags(flags: u32) -> Result<(), BackendError> {
    use event_flags::*;
    if flags & !SUPPORTED != 0 {
        return Err(BackendError::InvalidValue(format!("unknown event flags {:#x}", flags & !SUPPORTED)));
    }
    if (flags & RELEASE_SCOPES).count_ones() > 1 {
        return Err(BackendError::InvalidValue(format!("event flags {flags:#x} name more than one release scope")));
    }
    if flags & INTERPROCESS != 0 && flags & DISABLE_TIMING == 0 {
        return Err(BackendError::InvalidValue("hipEventInterprocess requires hipEventDisableTiming".into()));
    }
    Ok(())
}

/// The event family: creating, recording, waiting for and timing events.
pub trait EventBackend {
    /// Creates an event on `dev` (events belong to a device, as in HIP and CUDA) with
    /// [`event_flags`], checked by [`validate_event_flags`].
    fn event_create(&self, dev: DeviceIndex, flags: u32) -> Result<EventHandle, BackendError>;

    /// Destroys `event`; records still queued complete harmlessly.
    fn event_destroy(&self, event: EventHandle) -> Result<(), BackendError>;

    /// Records `event` into `stream` (`None`: the null stream of the event's device). The
    /// event completes, and takes its timestamp, when the stream reaches the record.
    /// A stream of another device is `InvalidHandle`, as in HIP.
    fn event_record(&self, event: EventHandle, stream: Option<StreamHandle>) -> Result<(), BackendError>;

    /// Waits until the latest record of `event` is reached; immediate if never recorded.
    fn event_synchronize(&self, event: EventHandle) -> Result<(), BackendError>;

    /// Whether the latest record of `event` has been reached (`true` if never recorded, as
    /// in HIP; the session maps `false` to `hipErrorNotReady`).
    fn event_query(&self, event: EventHandle) -> Result<bool, BackendError>;

    /// Milliseconds between the timestamps of `start` and `end`, negative if `end` came first.
    /// Either never recorded, or created with `DISABLE_TIMING`: `InvalidHandle`; either not
    /// yet reached: `NotReady` (ROCm's order of checks).
    fn event_elapsed_ms(&self, start: EventHandle, end: EventHandle) -> Result<f32, BackendError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_flags_follow_rocm() {
        use event_flags::*;
        assert!(validate_event_flags(DEFAULT).is_ok());
        assert!(validate_event_flags(BLOCKING_SYNC | DISABLE_TIMING).is_ok());
        assert!(validate_event_flags(INTERPROCESS | DISABLE_TIMING).is_ok());
        assert!(validate_event_flags(INTERPROCESS).is_err());
        assert!(validate_event_flags(RELEASE_TO_DEVICE | RELEASE_TO_SYSTEM).is_err());
        assert!(validate_event_flags(0x8).is_err());
    }
}
