//! The legacy null stream's ordering, without redundant waits.
//!
//! Work on a blocking stream waits for the null stream's earlier work, and work on the null
//! stream waits for every blocking stream's earlier work (HIP's legacy default stream). The
//! backend orders one stream after another with an event (`stream_order_after`: on GPUs an
//! event record and a stream wait, several driver calls). A wait already covers everything
//! queued on the waited stream up to it, so it is needed again only once new work has been
//! queued there: this clock tracks when each stream last got work and what each waiter has
//! already been ordered after, so a blocking stream fed thousands of launches between two
//! null-stream operations pays one wait, not one per launch.

use crate::backend::{HandleMap, StreamHandle};

#[derive(Debug, Default)]
pub(super) struct LegacyOrder {
    clock: u64,
    /// When each stream last had work queued (a tick of `clock`).
    last_work: HandleMap<StreamHandle, u64>,
    /// `(waiter, waited)`: the waited stream's `last_work` the waiter is ordered after.
    ordered: HandleMap<(StreamHandle, StreamHandle), u64>,
}

impl LegacyOrder {
    /// Whether `waiter` must be ordered after `waited` again: work was queued on `waited`
    /// since the last time.
    pub(super) fn needs(&self, waiter: StreamHandle, waited: StreamHandle) -> bool {
        let Some(&work) = self.last_work.get(&waited) else { return false };
        self.ordered.get(&(waiter, waited)).is_none_or(|&seen| seen < work)
    }

    /// `waiter` is now ordered after everything queued on `waited` so far.
    pub(super) fn ordered(&mut self, waiter: StreamHandle, waited: StreamHandle) {
        if let Some(&work) = self.last_work.get(&waited) {
            self.ordered.insert((waiter, waited), work);
        }
    }

    /// Work is being queued on `stream`.
    pub(super) fn worked(&mut self, stream: StreamHandle) {
        self.clock += 1;
        self.last_work.insert(stream, self.clock);
    }

    /// `stream` is destroyed: the backend may hand its handle out again.
    pub(super) fn forget(&mut self, stream: StreamHandle) {
        self.last_work.remove(&stream);
        self.ordered.retain(|&(waiter, waited), _| waiter != stream && waited != stream);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_is_repeated_only_after_new_work_on_the_waited_stream() {
        let (null, blocking) = (StreamHandle::from_raw(1), StreamHandle::from_raw(2));
        let mut order = LegacyOrder::default();
        assert!(!order.needs(blocking, null), "nothing queued on the null stream yet");
        order.worked(null);
        assert!(order.needs(blocking, null));
        order.ordered(blocking, null);
        for _ in 0..3 {
            assert!(!order.needs(blocking, null), "launches after one wait need no other");
            order.worked(blocking);
        }
        assert!(order.needs(null, blocking), "the null stream waits for the blocking stream's launches");
        order.ordered(null, blocking);
        order.worked(null);
        assert!(!order.needs(null, blocking));
        assert!(order.needs(blocking, null), "new null-stream work: the blocking stream waits again");
        order.forget(blocking);
        assert!(!order.needs(null, blocking));
        order.worked(blocking);
        assert!(order.needs(null, blocking), "a reused handle starts afresh");
    }
}
