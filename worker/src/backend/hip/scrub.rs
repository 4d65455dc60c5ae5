//! Zeroing memory before a session sees it (see the cuda backend's `scrub.rs`): in shared
//! mode `hipMalloc`/`hipMallocAsync` may hand out memory another session freed in this
//! process, so each new allocation is filled with zeros before its pointer is returned.

use super::api::Stream;
use super::{lock, HipBackend, Raw};
use crate::backend::{BackendError, DeviceIndex};
use std::ffi::c_void;

/// `hipStreamNonBlocking`: the internal stream waits for no session's work.
const STREAM_NON_BLOCKING: u32 = 0x1;

impl HipBackend {
    /// Zeroes `[ptr, ptr + len)` of `dev` (current) on the device's internal stream and
    /// waits for it.
    pub(super) fn scrub_now(&self, dev: DeviceIndex, ptr: *mut c_void, len: usize) -> Result<(), BackendError> {
        let stream = {
            let mut streams = lock(&self.scrub_streams);
            match streams.get(&dev) {
                Some(s) => s.0,
                None => {
                    // The device is current; kept until the device is reset or the process
                    // ends.
                    let raw = self.api.stream_create_with_priority(STREAM_NON_BLOCKING, 0)?;
                    streams.insert(dev, Raw(raw));
                    raw
                }
            }
        };
        self.scrub_on(ptr, len, stream)?;
        // The device's internal stream, live.
        Ok(self.api.stream_synchronize(stream)?)
    }

    /// Queues zeroing `[ptr, ptr + len)` on `stream` (stream-ordered memory).
    pub(super) fn scrub_on(&self, ptr: *mut c_void, len: usize, stream: Stream) -> Result<(), BackendError> {
        // An allocation just made on the current device.
        Ok(self.api.memset_async(ptr, 0, len, stream)?)
    }
}
