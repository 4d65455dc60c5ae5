//! Receive side: the frame byte stream rebuilt from received data segments, without I/O.
//!
//! A segment stays in its receive slot until every byte of it has been consumed (copied out
//! or skipped); only then is the slot handed back for re-posting. Segments never exceed the
//! ring, so this queue is bounded by the ring depth.

use std::collections::VecDeque;

/// A received data segment: `len` stream bytes at the start of receive slot `slot`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Receive slot index.
    pub slot: u32,
    /// Bytes in the slot.
    pub len: u32,
}

/// The next contiguous bytes available: `len` bytes of slot `slot` from `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    /// Receive slot index.
    pub slot: u32,
    /// Offset in the slot.
    pub offset: usize,
    /// Length.
    pub len: usize,
}

/// The stream position over queued segments.
#[derive(Debug, Default)]
pub struct Reassembly {
    segs: VecDeque<Segment>,
    /// Bytes of the front segment already consumed.
    offset: usize,
    available: usize,
    fin: bool,
}

/// Data after the peer's FIN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("data segment after the end of the stream")]
pub struct AfterFin;

impl Reassembly {
    /// An empty stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues a received data segment.
    pub fn push(&mut self, seg: Segment) -> Result<(), AfterFin> {
        if self.fin {
            return Err(AfterFin);
        }
        debug_assert!(seg.len > 0, "data segments are never empty");
        self.available += seg.len as usize;
        self.segs.push_back(seg);
        Ok(())
    }

    /// Queues a remote bulk descriptor held in receive slot `slot` (in stream order; it
    /// carries no stream bytes, [`peek`](Self::peek) stops before it).
    pub fn push_remote(&mut self, slot: u32) -> Result<(), AfterFin> {
        if self.fin {
            return Err(AfterFin);
        }
        self.segs.push_back(Segment { slot, len: 0 });
        Ok(())
    }

    /// The slot of the remote descriptor at the front of the stream, if the next thing in
    /// the stream is one.
    pub fn front_remote(&self) -> Option<u32> {
        self.segs.front().filter(|s| s.len == 0).map(|s| s.slot)
    }

    /// Removes the remote descriptor at the front (after its bytes were copied out);
    /// returns its slot for re-posting.
    pub fn take_remote(&mut self) -> Option<u32> {
        let slot = self.front_remote()?;
        self.segs.pop_front();
        self.offset = 0;
        Some(slot)
    }

    /// Records the peer's FIN: the stream ends after the queued bytes.
    pub fn push_fin(&mut self) {
        self.fin = true;
    }

    /// Whether the peer sent FIN.
    pub fn fin_received(&self) -> bool {
        self.fin
    }

    /// Bytes queued and not consumed.
    pub fn available(&self) -> usize {
        self.available
    }

    /// Segments (slots) held.
    pub fn held_slots(&self) -> usize {
        self.segs.len()
    }

    /// The next contiguous run of at most `max` bytes (`None` when nothing is queued or
    /// `max` is 0). Nothing is consumed.
    pub fn peek(&self, max: usize) -> Option<Piece> {
        let seg = self.segs.front()?;
        let len = (seg.len as usize - self.offset).min(max);
        (len > 0).then_some(Piece { slot: seg.slot, offset: self.offset, len })
    }

    /// Consumes `n` bytes of the front segment (at most what [`peek`](Self::peek) offered);
    /// returns the slot to re-post when the segment is used up.
    pub fn consume(&mut self, n: usize) -> Option<u32> {
        let seg = *self.segs.front()?;
        let n = n.min(seg.len as usize - self.offset);
        self.offset += n;
        self.available -= n;
        if self.offset == seg.len as usize {
            self.segs.pop_front();
            self.offset = 0;
            Some(seg.slot)
        } else {
            None
        }
    }

    /// Drops every queued segment (connection teardown); returns the slots.
    pub fn clear(&mut self) -> Vec<u32> {
        self.offset = 0;
        self.available = 0;
        self.segs.drain(..).map(|s| s.slot).collect()
    }
}

#[cfg(test)]
mod test {
    use super::*;

    /// Copies `dst.len()` bytes out of `slots` through the reassembly, re-posting as it goes.
    fn read(r: &mut Reassembly, slots: &[Vec<u8>], dst: &mut [u8], reposted: &mut Vec<u32>) -> usize {
        let mut done = 0;
        while let Some(p) = r.peek(dst.len() - done) {
            dst[done..done + p.len].copy_from_slice(&slots[p.slot as usize][p.offset..p.offset + p.len]);
            done += p.len;
            reposted.extend(r.consume(p.len));
        }
        done
    }

    #[test]
    fn frames_straddling_segments_come_out_whole() {
        let stream: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
        // cut into segments of uneven sizes, placed in slots out of order
        let cuts = [0usize, 13, 14, 300, 301, 999, 1000];
        let order = [5u32, 2, 0, 4, 1, 3];
        let mut slots = vec![Vec::new(); 6];
        let mut r = Reassembly::new();
        for (k, w) in cuts.windows(2).enumerate() {
            let slot = order[k];
            slots[slot as usize] = stream[w[0]..w[1]].to_vec();
            r.push(Segment { slot, len: (w[1] - w[0]) as u32 }).unwrap();
        }
        assert_eq!(r.available(), 1000);
        let mut out = vec![0u8; 1000];
        let mut reposted = Vec::new();
        let mut pos = 0;
        for want in [32usize, 1, 500, 467] {
            assert_eq!(read(&mut r, &slots, &mut out[pos..pos + want], &mut reposted), want);
            pos += want;
        }
        assert_eq!(out, stream);
        assert_eq!(reposted, order.to_vec(), "each slot is handed back once, in arrival order");
        assert_eq!(r.available(), 0);
        assert_eq!(r.peek(10), None);
    }

    #[test]
    fn partial_consumption_holds_the_slot() {
        let mut r = Reassembly::new();
        r.push(Segment { slot: 3, len: 10 }).unwrap();
        assert_eq!(r.peek(4), Some(Piece { slot: 3, offset: 0, len: 4 }));
        assert_eq!(r.consume(4), None);
        assert_eq!(r.peek(100), Some(Piece { slot: 3, offset: 4, len: 6 }));
        assert_eq!(r.held_slots(), 1);
        assert_eq!(r.consume(6), Some(3));
        assert_eq!(r.held_slots(), 0);
        assert_eq!(r.peek(0), None);
    }

    #[test]
    fn nothing_after_fin() {
        let mut r = Reassembly::new();
        r.push(Segment { slot: 0, len: 1 }).unwrap();
        r.push_fin();
        assert!(r.fin_received());
        assert_eq!(r.push(Segment { slot: 1, len: 1 }), Err(AfterFin));
        assert_eq!(r.clear(), vec![0]);
    }
}
