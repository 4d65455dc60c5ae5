//! How many stream captures the session began and has not ended: while there are none, calls
//! HIP forbids during capture need no question to the worker.
//!
//! Read on every copy and callback without the connection's lock, so the count is an atomic
//! the driver's owner may hold a reader of ([`CaptureCount::clone`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The count of running captures; clones read and change the same count.
#[derive(Debug, Clone, Default)]
pub struct CaptureCount(Arc<AtomicUsize>);

impl CaptureCount {
    /// Whether a capture this session began may still run.
    pub fn any(&self) -> bool {
        self.0.load(Ordering::Acquire) != 0
    }

    /// A capture began.
    pub fn began(&self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }

    /// A capture ended (its graph made, or the capture invalidated); never below zero.
    pub fn ended(&self) {
        let _ = self.0.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn a_reader_sees_the_sessions_captures_and_the_count_stops_at_zero() {
        let count = CaptureCount::default();
        let reader = count.clone();
        assert!(!reader.any());
        count.began();
        count.began();
        count.ended();
        assert!(reader.any(), "one capture still runs");
        count.ended();
        count.ended();
        assert!(!reader.any());
        count.began();
        assert!(reader.any(), "an extra end did not drive the count below zero");
    }
}
