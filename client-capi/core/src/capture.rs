//! How many stream captures the session began and has not ended: while there are none, calls
//! HIP forbids during capture need no question to the worker.
//!
//! Read on every copy and callback without the connection's lock, so the count is an atomic
//! the driver's owner may hold a reader of ([`CaptureCount::clone`]).

use std::collections::HashMap;
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

/// Dependency arrays handed out by `hipStreamGetCaptureInfo_v2`, per stream: each stays
/// where it is until the next query of that stream (HIP's stay valid until the stream's next
/// captured work).
#[derive(Debug, Default)]
pub struct DependencyArrays(HashMap<u64, Box<[usize]>>);

impl DependencyArrays {
    /// Keeps `nodes` as `stream`'s array (dropping its previous one) and answers it; its
    /// address holds until the next `keep` for that stream or the session's end.
    pub fn keep(&mut self, stream: u64, nodes: Box<[usize]>) -> &[usize] {
        self.0.entry(stream).insert_entry(nodes).into_mut()
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

    #[test]
    fn a_streams_dependency_array_stays_put_while_another_streams_changes() {
        let mut arrays = DependencyArrays::default();
        let first = arrays.keep(1, vec![10, 11].into_boxed_slice()).as_ptr();
        let _ = arrays.keep(2, vec![20].into_boxed_slice());
        assert_eq!(arrays.0[&1].as_ptr(), first);
        assert_eq!(&*arrays.0[&1], &[10, 11]);
        assert_eq!(arrays.keep(1, vec![12].into_boxed_slice()), &[12]);
    }
}
