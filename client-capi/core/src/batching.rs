//! When queued fire-and-forget frames must go out.
//!
//! The transport coalesces posted frames (256 KiB on TCP) and sends them when its buffer fills,
//! at the next awaited call, or on an explicit flush. Waiting for a full buffer leaves an idle
//! worker waiting too: after a reply the worker has nothing to do until the client's next
//! frames arrive. So the first batch after a reply goes out small, then medium batches keep the
//! worker fed while a step is being queued, and past a window the transport's own coalescing
//! takes over.

/// Queued bytes after which the first batch following a reply is sent: the worker, idle
/// since that reply, starts on the first ~40 launches of a step instead of waiting for the
/// client to fill a whole batch (hundreds of launches). Later batches fill up as usual.
/// To be measured on the H100 by the lead (the launch-rate and kernel-step figures).
pub const FIRST_BATCH_BYTES: usize = 4096;
/// After the first batch, batches of this size (~350 launches) go out until
/// [`STREAMING_WINDOW_BYTES`] have been sent since the last reply; then the transport's own
/// coalescing (256 KiB) takes over. Waiting for a whole 256 KiB buffer, more than a step of
/// 2 000 launches, left the worker idle while the client queued the step (1.21–1.25× native
/// on the H100); batches of 32 KiB throughout cost launch-storm throughput there (0.66–0.73×).
pub const STREAMING_BATCH_BYTES: usize = 32 << 10;
/// How much of a run of fire-and-forget requests after a reply goes in
/// [`STREAMING_BATCH_BYTES`] batches (a step of 2 000 small launches is ~220 KiB).
pub const STREAMING_WINDOW_BYTES: usize = 512 << 10;

/// What the driver does with the transport's queue after queuing a fire-and-forget frame.
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flush {
    /// Send the queue now.
    Now,
    /// Leave it to the transport's own coalescing.
    Later,
}

/// The batching policy's state: where the run of fire-and-forget frames since the last reply
/// stands.
#[derive(Debug, Clone)]
pub struct Batching {
    /// The worker is probably idle (a reply was just read): the next fire-and-forget
    /// frames go out once [`FIRST_BATCH_BYTES`] are queued, not when the batch is full.
    worker_idle: bool,
    /// Fire-and-forget bytes sent since the last reply, while under [`STREAMING_WINDOW_BYTES`].
    sent_since_reply: usize,
}

impl Default for Batching {
    fn default() -> Self {
        Self { worker_idle: true, sent_since_reply: 0 }
    }
}

impl Batching {
    /// A reply was read: the worker has caught up and waits for more.
    pub fn reply_received(&mut self) {
        *self = Self::default();
    }

    /// The transport holds `queued` bytes after a fire-and-forget frame was queued: whether
    /// they go out now (and are counted as sent).
    pub fn queued(&mut self, queued: usize) -> Flush {
        let early = if self.worker_idle {
            Some(FIRST_BATCH_BYTES)
        } else {
            (self.sent_since_reply < STREAMING_WINDOW_BYTES).then_some(STREAMING_BATCH_BYTES)
        };
        if early.is_some_and(|batch| queued >= batch) {
            self.worker_idle = false;
            self.sent_since_reply += queued;
            return Flush::Now;
        }
        Flush::Later
    }

    /// Bytes sent in early batches since the last reply.
    pub fn sent_since_reply(&self) -> usize {
        self.sent_since_reply
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Queues `frames` frames of `frame_len` bytes into a model transport that holds what it
    /// is not told to send, and sends on its own once `coalesce` bytes are held; returns the
    /// sizes of the batches sent early (by the policy).
    fn run(batching: &mut Batching, frames: usize, frame_len: usize, coalesce: usize) -> Vec<usize> {
        let (mut held, mut early) = (0, Vec::new());
        for _ in 0..frames {
            held += frame_len;
            if batching.queued(held) == Flush::Now {
                early.push(held);
                held = 0;
            } else if held >= coalesce {
                held = 0;
            }
        }
        early
    }

    #[test]
    fn the_first_batch_after_a_reply_goes_at_four_kib() {
        let mut b = Batching::default();
        // 100-byte launches: the 41st crosses 4 KiB.
        assert_eq!(b.queued(4000), Flush::Later);
        assert_eq!(b.queued(4100), Flush::Now);
        assert_eq!(b.sent_since_reply(), 4100);
        // The next batch waits for 32 KiB.
        assert_eq!(b.queued(FIRST_BATCH_BYTES), Flush::Later);
        assert_eq!(b.queued(STREAMING_BATCH_BYTES - 1), Flush::Later);
        assert_eq!(b.queued(STREAMING_BATCH_BYTES), Flush::Now);
    }

    #[test]
    fn streaming_batches_cover_the_window_then_the_transport_coalesces() {
        let mut b = Batching::default();
        let early = run(&mut b, 20_000, 100, 256 << 10);
        assert_eq!(early[0], 4100, "the first batch: 41 launches");
        assert!(early[1..].iter().all(|&n| (STREAMING_BATCH_BYTES..STREAMING_BATCH_BYTES + 100).contains(&n)), "{early:?}");
        let sent: usize = early.iter().sum();
        assert!((STREAMING_WINDOW_BYTES..STREAMING_WINDOW_BYTES + STREAMING_BATCH_BYTES + 100).contains(&sent), "{sent}");
        // 2 MB queued in all: past the window nothing more goes early.
        assert_eq!(b.sent_since_reply(), sent);
    }

    #[test]
    fn a_reply_starts_a_new_run() {
        let mut b = Batching::default();
        run(&mut b, 20_000, 100, 256 << 10);
        assert_eq!(b.queued(FIRST_BATCH_BYTES), Flush::Later, "past the window");
        b.reply_received();
        assert_eq!(b.queued(FIRST_BATCH_BYTES), Flush::Now);
    }
}
