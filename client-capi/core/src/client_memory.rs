//! `hipMalloc` without a round trip (`CLIENT_ALLOCATION`, `docs/ALLOCATION.md`): per device,
//! a range of device address space the worker reserved for the session, in which this
//! allocator places allocations itself; the worker backs each one when it reaches the posted
//! `MallocAt`.
//!
//! Placement follows the worker's rules: every allocation is [`ALIGNMENT`]-aligned; one of
//! at least a granule starts on a granule and owns the granules it spans; a smaller one never
//! crosses a granule (small ones share granules). First fit from the lowest address, with
//! freed space coalesced, so a freed address is the first one reused (the worker keeps the
//! memory of recently freed granules mapped for exactly that).
//!
//! Out of memory must be reported by `hipMalloc` itself: allocations are posted only while
//! the bytes placed since the last measure of free memory stay under
//! [`POSTED_FREE_FRACTION`] of it; past that, the allocation waits for the worker's answer and
//! the measure is renewed. Only another tenant taking memory meanwhile can make a posted
//! allocation fail; its error is then deferred to the next synchronising call.

use std::collections::{BTreeMap, HashMap};

/// Alignment of every allocation (hipMalloc guarantees 256 bytes).
pub const ALIGNMENT: u64 = 256;
/// Share of the last measured free memory that posted allocations may take before one
/// waits for the worker (and renews the measure). A default to be measured on the H100 by
/// the lead; small enough that other tenants rarely take the rest meanwhile.
pub const POSTED_FREE_FRACTION: (u64, u64) = (1, 2);

/// One device's range and what is placed in it.
#[derive(Debug)]
pub struct DeviceRange {
    granularity: u64,
    /// Free space: start → length, coalesced.
    free: BTreeMap<u64, u64>,
    /// Live allocations: address → the span they occupy (start, length).
    live: HashMap<u64, (u64, u64)>,
    /// Spans never used again (shared through IPC: the worker retires their granules).
    retired: BTreeMap<u64, u64>,
    /// Free device memory at the last measure.
    known_free: u64,
    /// Bytes placed by posted allocations since that measure, less those freed.
    posted: u64,
}

impl DeviceRange {
    /// A range of `len` bytes at `base` with the worker's `granularity`.
    pub fn new(base: u64, len: u64, granularity: u64, known_free: u64) -> Self {
        let granularity = granularity.max(ALIGNMENT);
        Self { granularity, free: BTreeMap::from([(base, len)]), live: HashMap::new(), retired: BTreeMap::new(), known_free, posted: 0 }
    }

    /// The span an allocation of `size` bytes occupies, placed in the free run `(start, len)`.
    fn fit(&self, start: u64, len: u64, size: u64) -> Option<(u64, u64)> {
        let end = start.checked_add(len)?;
        let (at, span) = if size >= self.granularity {
            (start.checked_next_multiple_of(self.granularity)?, size.checked_next_multiple_of(self.granularity)?)
        } else {
            let span = size.next_multiple_of(ALIGNMENT);
            let at = start.next_multiple_of(ALIGNMENT);
            // Not across a granule: move to the next one if it would cross.
            let granule_end = (at / self.granularity + 1) * self.granularity;
            (if at + size > granule_end { granule_end } else { at }, span)
        };
        (at.checked_add(span)? <= end).then_some((at, span))
    }

    /// Places `size` bytes: the address, or `None` when the range has no room.
    pub fn allocate(&mut self, size: u64) -> Option<u64> {
        let (run, at, span) = self.free.iter().find_map(|(&start, &len)| self.fit(start, len, size).map(|(at, span)| (start, at, span)))?;
        let run_len = self.free.remove(&run).expect("found above");
        if at > run {
            self.free.insert(run, at - run);
        }
        let (end, run_end) = (at + span, run + run_len);
        if run_end > end {
            self.free.insert(end, run_end - end);
        }
        self.live.insert(at, (at, span));
        Some(at)
    }

    /// Takes back the allocation at `ptr`; whether it was one of this range.
    pub fn release(&mut self, ptr: u64) -> bool {
        let shared = self.shared(ptr);
        let Some((start, len)) = self.live.remove(&ptr) else { return false };
        self.posted = self.posted.saturating_sub(len);
        if shared {
            return true;
        }
        self.give_back(start, len);
        true
    }

    fn give_back(&mut self, mut start: u64, mut len: u64) {
        if let Some((&prev, &prev_len)) = self.free.range(..start).next_back() {
            if prev + prev_len == start {
                self.free.remove(&prev);
                start = prev;
                len += prev_len;
            }
        }
        if let Some(next_len) = self.free.remove(&(start + len)) {
            len += next_len;
        }
        self.free.insert(start, len);
    }

    /// Whether `ptr` is a live allocation placed here.
    pub fn owns(&self, ptr: u64) -> bool {
        self.live.contains_key(&ptr)
    }

    /// Whether the live allocation at `ptr` lies in granules shared through IPC.
    pub fn shared(&self, ptr: u64) -> bool {
        self.live.get(&ptr).is_some_and(|&(start, _)| self.retired.range(..=start).next_back().is_some_and(|(b, l)| b + l > start))
    }

    /// The allocation at `ptr` is shared through IPC: the granules it touches are never
    /// placed in again (the worker retires them once their users are freed).
    pub fn retire(&mut self, ptr: u64) {
        let Some(&(start, len)) = self.live.get(&ptr) else { return };
        let g = self.granularity;
        let (first, end) = (start / g * g, (start + len).next_multiple_of(g));
        self.retired.insert(first, end - first);
        // Free space inside those granules is not handed out any more.
        let inside: Vec<(u64, u64)> = self.free.range(..end).filter(|(s, l)| *s + *l > first).map(|(s, l)| (*s, *l)).collect();
        for (s, l) in inside {
            self.free.remove(&s);
            if s < first {
                self.free.insert(s, first - s);
            }
            if s + l > end {
                self.free.insert(end, s + l - end);
            }
        }
    }

    /// Whether an allocation of `size` more bytes may be posted, or must wait for the
    /// worker's answer.
    pub fn may_post(&self, size: u64) -> bool {
        let (num, den) = POSTED_FREE_FRACTION;
        self.posted.saturating_add(size) <= self.known_free / den * num
    }

    /// A posted allocation of `size` bytes was placed.
    pub fn posted(&mut self, size: u64) {
        self.posted = self.posted.saturating_add(size);
    }

    /// Free memory was measured again (after an allocation that waited).
    pub fn measured(&mut self, free: u64) {
        self.known_free = free;
        self.posted = 0;
    }
}

/// The connection's ranges by device.
#[derive(Debug, Default)]
pub struct ClientMemory {
    ranges: HashMap<u32, DeviceRange>,
    /// Devices whose worker refused a range (no virtual-memory support): hipMalloc waits.
    refused: std::collections::HashSet<u32>,
}

impl ClientMemory {
    /// The range of `device`, if one is reserved.
    pub fn range(&mut self, device: u32) -> Option<&mut DeviceRange> {
        self.ranges.get_mut(&device)
    }

    /// Whether the worker refused a range on `device`.
    pub fn refused(&self, device: u32) -> bool {
        self.refused.contains(&device)
    }

    /// Records the worker's answer to the reservation.
    pub fn reserved(&mut self, device: u32, range: Option<DeviceRange>) {
        match range {
            Some(range) => {
                self.ranges.insert(device, range);
            }
            None => {
                self.refused.insert(device);
            }
        }
    }

    /// The device whose range holds the live allocation at `ptr`.
    pub fn owner(&self, ptr: u64) -> Option<u32> {
        self.ranges.iter().find(|(_, r)| r.owns(ptr)).map(|(d, _)| *d)
    }

    /// Forgets `device`'s range (`hipDeviceReset` released it on the worker).
    pub fn forget_device(&mut self, device: u32) {
        self.ranges.remove(&device);
    }
}

#[cfg(test)]
mod test {
    use super::*;

    const BASE: u64 = 0x7000_0000_0000;
    const GRANULE: u64 = 2 << 20;

    fn range() -> DeviceRange {
        DeviceRange::new(BASE, 64 * GRANULE, GRANULE, 32 * GRANULE)
    }

    #[test]
    fn a_freed_address_is_reused_first() {
        let mut r = range();
        let a = r.allocate(1 << 20).unwrap();
        assert_eq!(a, BASE);
        for _ in 0..10_000 {
            let p = r.allocate(1 << 20).unwrap();
            assert_eq!(p, BASE + (1 << 20), "the same address every time");
            assert!(r.release(p));
        }
        assert!(r.release(a));
        assert_eq!(r.free.len(), 1, "everything coalesced back: {:?}", r.free);
        assert!(!r.release(a), "a second free is not ours");
    }

    #[test]
    fn placement_follows_the_granule_rules() {
        let mut r = range();
        let small = r.allocate(100).unwrap();
        assert_eq!(small % ALIGNMENT, 0);
        let big = r.allocate(GRANULE + 1).unwrap();
        assert_eq!(big % GRANULE, 0, "a granule or more starts on a granule");
        assert_eq!(big, BASE + GRANULE, "and owns its granules: not the one small allocations use");
        let second = r.allocate(300).unwrap();
        assert_eq!(second, small + ALIGNMENT, "small ones share the granule");
        // Fill the first granule up to its end: the next small one moves past the big one.
        let rest = GRANULE - (second + 512 - BASE);
        let filler = r.allocate(rest).unwrap();
        assert!(filler + rest <= BASE + GRANULE);
        let next = r.allocate(4096).unwrap();
        assert_eq!(next, BASE + 3 * GRANULE, "not across a granule, not inside the big allocation");
        // Mixed sizes never overlap.
        let mut spans: Vec<(u64, u64)> = r.live.values().copied().collect();
        spans.sort();
        assert!(spans.windows(2).all(|w| w[0].0 + w[0].1 <= w[1].0), "{spans:?}");
    }

    #[test]
    fn retired_granules_are_never_placed_in_again() {
        let mut r = range();
        let a = r.allocate(1000).unwrap();
        let b = r.allocate(1000).unwrap();
        r.retire(a);
        assert!(r.shared(a) && r.shared(b), "the granule is shared");
        assert!(r.release(a));
        assert!(r.release(b));
        let c = r.allocate(1000).unwrap();
        assert!(c >= BASE + GRANULE, "the shared granule is not used again: {c:#x}");
    }

    #[test]
    fn posting_stops_at_the_fraction_of_free_memory() {
        let mut r = DeviceRange::new(BASE, 64 * GRANULE, GRANULE, 100 << 20);
        assert!(r.may_post(50 << 20));
        r.posted(40 << 20);
        assert!(!r.may_post(20 << 20), "past half of the measured free memory");
        let p = r.allocate(40 << 20).unwrap();
        assert!(r.release(p), "frees give the budget back");
        assert!(r.may_post(20 << 20));
        r.measured(10 << 20);
        assert!(!r.may_post(6 << 20));
    }

    #[test]
    fn a_full_range_says_so() {
        let mut r = DeviceRange::new(BASE, 2 * GRANULE, GRANULE, u64::MAX);
        assert!(r.allocate(2 * GRANULE).is_some());
        assert!(r.allocate(1).is_none());
    }
}
