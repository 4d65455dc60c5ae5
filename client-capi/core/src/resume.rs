//! What a resumable session keeps to survive its connection (`features::RESUME`): every
//! request the worker has not shown it executed, with its bulk, to send again after a resume.
//!
//! A reply (or error reply) to request `n` shows the worker executed every request up to
//! `n` (it reads a connection's requests in order), so those are dropped. Bounded by
//! [`MAX_UNACKED_BYTES`] and [`MAX_UNACKED_REQUESTS`]: past them the driver asks the worker
//! for an acknowledgement (a PING round trip) before it submits more.

use std::collections::VecDeque;

/// Most request bytes (heads and bulk) kept unacknowledged; the driver waits for an
/// acknowledgement before going past it.
pub const MAX_UNACKED_BYTES: usize = 64 << 20;

/// Most requests kept unacknowledged (a launch storm keeps about 100 bytes each).
pub const MAX_UNACKED_REQUESTS: usize = 16 << 10;

/// The requests kept for a resume.
#[derive(Debug, Default)]
pub(crate) struct Retention {
    /// `(request id, frame, head length)` in the order they were submitted.
    frames: VecDeque<(u64, Vec<u8>, usize)>,
    bytes: usize,
    /// Highest request id the worker has shown it executed.
    acked_through: u64,
    /// Highest request id that could not be kept (too large, or its bulk travels on a
    /// stripe): a resume before the worker executed it fails.
    pub(crate) unkept_through: u64,
}

impl Retention {
    /// Keeps request `id` (`head` then `bulk`).
    pub(crate) fn keep(&mut self, id: u64, head: &[u8], bulk: &[u8]) {
        let len = head.len() + bulk.len();
        if len > MAX_UNACKED_BYTES {
            self.unkept_through = id;
            return;
        }
        let mut frame = Vec::with_capacity(len);
        frame.extend_from_slice(head);
        frame.extend_from_slice(bulk);
        self.bytes += len;
        self.frames.push_back((id, frame, head.len()));
    }

    /// The worker executed every request up to `id`.
    pub(crate) fn acked(&mut self, id: u64) {
        if id <= self.acked_through {
            return;
        }
        self.acked_through = id;
        while self.frames.front().is_some_and(|(first, _, _)| *first <= id) {
            let (_, frame, _) = self.frames.pop_front().expect("checked");
            self.bytes -= frame.len();
        }
    }

    /// Whether keeping `len` more bytes would pass a bound.
    pub(crate) fn full_for(&self, len: usize) -> bool {
        !self.frames.is_empty() && (self.bytes + len > MAX_UNACKED_BYTES || self.frames.len() >= MAX_UNACKED_REQUESTS)
    }

    /// Highest request id the worker has shown it executed.
    pub(crate) fn acked_through(&self) -> u64 {
        self.acked_through
    }

    /// Bytes kept.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The frames kept (and where each one's bulk starts), oldest first.
    pub(crate) fn frames(&self) -> impl Iterator<Item = (u64, &[u8], usize)> {
        self.frames.iter().map(|(id, frame, head_len)| (*id, frame.as_slice(), *head_len))
    }
}
