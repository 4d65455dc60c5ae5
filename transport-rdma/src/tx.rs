//! Send side, without I/O: which send slots are free, and how the frame byte stream is cut
//! into SENDs (the coalescer).
//!
//! The sink appends bytes to an *open* slot; a full slot becomes one SEND at once, a partly
//! filled one when the caller flushes (or sends synchronously). So queued fire-and-forget
//! frames share SENDs, and a large bulk section becomes a pipeline of full-slot SENDs, each
//! posted as soon as it is filled while the next one is being copied.

use std::collections::VecDeque;

/// The pool of registered send slots.
#[derive(Debug, Clone)]
pub struct SendSlots {
    free: VecDeque<u32>,
    total: u32,
}

impl SendSlots {
    /// `total` slots, all free.
    pub fn new(total: u32) -> Self {
        Self { free: (0..total).collect(), total }
    }

    /// Takes a free slot.
    pub fn take(&mut self) -> Option<u32> {
        self.free.pop_front()
    }

    /// Returns a slot whose SEND completed (or that was taken and not used).
    pub fn put(&mut self, slot: u32) {
        debug_assert!(slot < self.total && !self.free.contains(&slot), "slot {slot} returned twice");
        self.free.push_back(slot);
    }

    /// Free slots.
    pub fn free(&self) -> usize {
        self.free.len()
    }

    /// Whether every slot is free (nothing in flight or open).
    pub fn all_free(&self) -> bool {
        self.free.len() == self.total as usize
    }
}

/// Where the next bytes go: `len` bytes at `offset` of send slot `slot`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Room {
    /// Send slot.
    pub slot: u32,
    /// Offset in the slot.
    pub offset: usize,
    /// Bytes that fit (at most what was asked for).
    pub len: usize,
}

/// A slot ready to be posted as one SEND of `len` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ready {
    /// Send slot.
    pub slot: u32,
    /// Bytes.
    pub len: usize,
}

/// The open slot being filled.
#[derive(Debug, Clone)]
pub struct Batcher {
    seg_len: usize,
    open: Option<(u32, usize)>,
}

impl Batcher {
    /// Cuts the stream into SENDs of at most `seg_len` bytes.
    pub fn new(seg_len: usize) -> Self {
        assert!(seg_len > 0);
        Self { seg_len, open: None }
    }

    /// Largest SEND.
    pub fn seg_len(&self) -> usize {
        self.seg_len
    }

    /// Room for up to `want` bytes in the open slot; `None` when no slot is open (take one
    /// from [`SendSlots`] and [`open`](Self::open) it).
    pub fn room(&self, want: usize) -> Option<Room> {
        let (slot, filled) = self.open?;
        Some(Room { slot, offset: filled, len: want.min(self.seg_len - filled) })
    }

    /// Opens `slot` for filling. A slot must not already be open.
    pub fn open(&mut self, slot: u32) {
        debug_assert!(self.open.is_none());
        self.open = Some((slot, 0));
    }

    /// Records `n` bytes written at the offered room; a slot that is now full is returned
    /// to be posted.
    pub fn commit(&mut self, n: usize) -> Option<Ready> {
        let (slot, filled) = self.open.as_mut()?;
        *filled += n;
        debug_assert!(*filled <= self.seg_len);
        if *filled == self.seg_len {
            let ready = Ready { slot: *slot, len: *filled };
            self.open = None;
            Some(ready)
        } else {
            None
        }
    }

    /// Closes the open slot for a flush: the partly filled slot to post, if it holds bytes.
    /// An open empty slot stays open.
    pub fn flush(&mut self) -> Option<Ready> {
        match self.open {
            Some((slot, filled)) if filled > 0 => {
                self.open = None;
                Some(Ready { slot, len: filled })
            }
            _ => None,
        }
    }

    /// Bytes written and not yet posted.
    pub fn pending(&self) -> usize {
        self.open.map_or(0, |(_, filled)| filled)
    }

    /// The open slot, if any (to give back on teardown).
    pub fn take_open(&mut self) -> Option<u32> {
        self.open.take().map(|(slot, _)| slot)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    /// Runs `writes` (byte counts; `None` = flush) through a batcher and returns the SEND sizes.
    fn sends(seg_len: usize, slots: u32, writes: &[Option<usize>]) -> Vec<usize> {
        let mut pool = SendSlots::new(slots);
        let mut b = Batcher::new(seg_len);
        let mut out = Vec::new();
        for w in writes {
            match w {
                Some(mut n) => {
                    while n > 0 {
                        let room = match b.room(n) {
                            Some(r) => r,
                            None => {
                                b.open(pool.take().expect("slot"));
                                b.room(n).unwrap()
                            }
                        };
                        n -= room.len;
                        if let Some(r) = b.commit(room.len) {
                            out.push(r.len);
                            pool.put(r.slot); // completes at once in this model
                        }
                    }
                }
                None => {
                    if let Some(r) = b.flush() {
                        out.push(r.len);
                        pool.put(r.slot);
                    }
                }
            }
        }
        out
    }

    #[test]
    fn small_frames_share_a_send() {
        // three 40-byte frames queued, then a flush: one SEND of 120
        assert_eq!(sends(1024, 4, &[Some(40), Some(40), Some(40), None]), vec![120]);
    }

    #[test]
    fn bulk_is_cut_into_full_slots() {
        // 72-byte head + 4 MiB + 5 bulk with 64 KiB slots: 64 full SENDs, then the rest
        let seg = 64 << 10;
        let s = sends(seg, 8, &[Some(72), Some((4 << 20) + 5), None]);
        assert_eq!(s.len(), 65);
        assert!(s[..64].iter().all(|&n| n == seg));
        assert_eq!(s[64], 72 + 5);
        assert_eq!(s.iter().sum::<usize>(), 72 + (4 << 20) + 5);
    }

    #[test]
    fn empty_flush_posts_nothing_and_pending_counts() {
        let mut b = Batcher::new(100);
        assert_eq!(b.flush(), None);
        b.open(0);
        assert_eq!(b.flush(), None, "an empty open slot is not posted");
        assert_eq!(b.room(500), Some(Room { slot: 0, offset: 0, len: 100 }));
        assert_eq!(b.commit(30), None);
        assert_eq!(b.pending(), 30);
        assert_eq!(b.room(500), Some(Room { slot: 0, offset: 30, len: 70 }));
        assert_eq!(b.commit(70), Some(Ready { slot: 0, len: 100 }));
        assert_eq!(b.pending(), 0);
        assert_eq!(b.room(1), None);
    }

    #[test]
    fn slot_pool_recycles() {
        let mut p = SendSlots::new(2);
        let a = p.take().unwrap();
        let b = p.take().unwrap();
        assert_eq!(p.take(), None);
        p.put(b);
        p.put(a);
        assert_eq!(p.free(), 2);
        assert!(p.all_free());
        assert_eq!(p.take(), Some(b));
    }
}
