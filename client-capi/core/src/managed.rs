//! The session's book of managed mirrors: managed memory (`hipMallocManaged`) and
//! device-visible host memory (`hipHostRegister`, `hipHostMalloc(hipHostMallocMapped)`) as
//! ranges of the application's memory with a device twin on the worker. Semantics and limits:
//! docs/MANAGED_MEMORY.md.
//!
//! Both sides keep the hash of every [`MANAGED_PAGE`] as they last agreed on it. This book
//! holds the ranges, those hashes and the epochs that decide when pages move:
//! [`ManagedMirrors::before_request`] says whether the CPU's changes must be pushed before a
//! request, [`ManagedMirrors::pull_due`] whether the device's must be pulled after a
//! synchronisation. Reading and writing the application's pages is the driver's (it alone
//! touches application memory); this crate never dereferences an address.

use proto_core::wire::{page_hash, MANAGED_PAGE};
use proto_core::{Family, Opcode};
use std::collections::BTreeMap;

const PAGE: usize = MANAGED_PAGE as usize;

/// What a mirrored range is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MirrorKind {
    /// `hipMallocManaged`: one address on both sides, the client's mapping is ours.
    Managed,
    /// `hipHostRegister`: the application's memory; the device twin may sit elsewhere.
    Registered,
    /// `hipHostMalloc(hipHostMallocMapped)`: our mapping, device twin at the same address
    /// when the worker could place it there.
    MappedHost,
}

/// Advice and prefetch state of one page (`hipMemAdvise`, `hipMemPrefetchAsync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageAdvice {
    /// `hipMemAdviseSetReadMostly`.
    pub read_mostly: bool,
    /// `hipMemAdviseSetCoarseGrain`.
    pub coarse_grain: bool,
    /// `hipInvalidDeviceId` (-2) when unset; `hipCpuDeviceId` (-1) for the host.
    pub preferred_location: i32,
    /// Where the page was last prefetched to (as `preferred_location`).
    pub last_prefetch: i32,
    /// Bit `d + 1` for device `d`, bit 0 for the CPU.
    pub accessed_by: u64,
}

impl Default for PageAdvice {
    fn default() -> Self {
        Self { read_mostly: false, coarse_grain: false, preferred_location: -2, last_prefetch: -2, accessed_by: 0 }
    }
}

/// One mirrored range: `len` bytes from `base` in the application's process, twin at
/// `device_base`. Only `[owned_start, owned_end)` is the application's (registered memory
/// need not be page-aligned): bytes of the first and last page outside it are never written
/// and travel as zeros.
#[derive(Debug)]
pub struct Mirror {
    /// What the range is.
    pub kind: MirrorKind,
    /// First byte of the whole pages mirrored.
    pub base: usize,
    /// Bytes mirrored from `base` (whole pages).
    pub len: usize,
    /// First byte of the application's part.
    pub owned_start: usize,
    /// End of the application's part.
    pub owned_end: usize,
    /// The device twin of `base`.
    pub device_base: u64,
    /// The device the range was made on.
    pub device: u32,
    /// `hipMallocManaged`/`hipHostRegister`/`hipHostMalloc` flags.
    pub flags: u32,
    /// `hipStreamAttachMemAsync`: the stream and flags last attached.
    pub attached: Option<(u64, u32)>,
    hashes: Vec<u64>,
    /// Advice of each page.
    pub advice: Vec<PageAdvice>,
}

impl Mirror {
    /// A range whose device twin is freshly zeroed (what both sides' hashes start from).
    pub fn new(kind: MirrorKind, base: usize, len: usize, owned: (usize, usize), device_base: u64, device: u32, flags: u32) -> Self {
        let pages = len.div_ceil(PAGE);
        let zero = page_hash(&[0; PAGE]);
        Self {
            kind,
            base,
            len,
            owned_start: owned.0,
            owned_end: owned.1,
            device_base,
            device,
            flags,
            attached: None,
            hashes: vec![zero; pages],
            advice: vec![PageAdvice::default(); pages],
        }
    }

    /// Indices of the pages holding `[addr, addr + count)` (inside this range).
    pub fn page_span(&self, addr: usize, count: usize) -> std::ops::Range<usize> {
        (addr - self.base) / PAGE..(addr + count.max(1) - 1 - self.base) / PAGE + 1
    }

    /// The device address of host address `addr` inside this range.
    pub fn device_address(&self, addr: usize) -> u64 {
        self.device_base + (addr - self.base) as u64
    }

    /// How many pages the range has.
    pub fn pages(&self) -> usize {
        self.hashes.len()
    }

    /// The application's part of page `i`: `(start, end)` in bytes from the page start.
    pub fn owned_part(&self, i: usize) -> (usize, usize) {
        let page_start = self.base + i * PAGE;
        let start = self.owned_start.max(page_start).min(page_start + PAGE);
        let end = self.owned_end.min(page_start + PAGE).max(start);
        (start - page_start, end - page_start)
    }

    /// Page `i` now holds contents of hash `hash` on this side: whether the sides no longer
    /// agree on it (the page must be pushed). Records `hash` as agreed either way, since the
    /// caller pushes what this answers.
    pub fn note_local(&mut self, i: usize, hash: u64) -> bool {
        std::mem::replace(&mut self.hashes[i], hash) != hash
    }

    /// The worker sent page `i` with contents of hash `hash`: both sides agree on it now.
    pub fn note_pulled(&mut self, i: usize, hash: u64) {
        self.hashes[i] = hash;
    }
}

/// What a device-wide synchronisation covered, for [`ManagedMirrors::pulled`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PullDue {
    full_sync_epoch: Option<u64>,
}

/// Every mirrored range of the session, by the start of its application part (two
/// registrations may share a page, never bytes), and when pages move.
#[derive(Debug, Default)]
pub struct ManagedMirrors {
    mirrors: BTreeMap<usize, Mirror>,
    /// Requests that may have let the device write mirrored memory.
    device_epoch: u64,
    /// The epoch up to which a device-wide synchronisation has pulled everything.
    pulled_epoch: u64,
    /// A `hipDeviceSynchronize` is in flight: the epoch it covers.
    full_sync_at: Option<u64>,
    pushed_bytes: u64,
    pulled_bytes: u64,
}

/// Whether `op` waits for (or polls) device work, which may itself wait for a CPU write.
fn waits_on_device_work(op: Opcode) -> bool {
    matches!(op, Opcode::DeviceSynchronize | Opcode::StreamSynchronize | Opcode::StreamQuery | Opcode::EventSynchronize | Opcode::EventQuery)
}

/// Whether the worker-side work of `op` may read or write device memory: its request must
/// see the CPU's writes, and a later synchronisation must bring back the device's.
fn touches_device_memory(op: Opcode) -> bool {
    match op.family() {
        Family::Memory | Family::Array | Family::Module | Family::Vmm | Family::Pool => true,
        // Wait/write value and batch memory operations (the 0x0310 block).
        Family::Stream => op.raw() >= 0x0310,
        _ => false,
    }
}

impl ManagedMirrors {
    /// Whether no range is mirrored (the fast path of every request).
    pub fn is_empty(&self) -> bool {
        self.mirrors.is_empty()
    }

    /// Adds a range.
    pub fn insert(&mut self, mirror: Mirror) {
        self.mirrors.insert(mirror.owned_start, mirror);
    }

    /// Removes the range whose application part starts at `start`, if `keep` agrees.
    pub fn remove_if(&mut self, start: usize, keep: impl FnOnce(&Mirror) -> bool) -> Option<Mirror> {
        if !self.mirrors.get(&start).is_some_and(keep) {
            return None;
        }
        self.mirrors.remove(&start)
    }

    /// Removes the ranges of `device` (after `hipDeviceReset`: the worker freed their twins)
    /// and hands them back (the driver unmaps its own).
    pub fn forget_device(&mut self, device: u32) -> Vec<Mirror> {
        let gone: Vec<usize> = self.mirrors.iter().filter(|(_, m)| m.device == device).map(|(&start, _)| start).collect();
        gone.into_iter().filter_map(|start| self.mirrors.remove(&start)).collect()
    }

    /// The range whose application part contains host address `addr`.
    pub fn find(&self, addr: usize) -> Option<&Mirror> {
        self.mirrors.range(..=addr).next_back().map(|(_, m)| m).filter(|m| addr < m.owned_end)
    }

    /// [`Self::find`], to change it.
    pub fn find_mut(&mut self, addr: usize) -> Option<&mut Mirror> {
        self.mirrors.range_mut(..=addr).next_back().map(|(_, m)| m).filter(|m| addr < m.owned_end)
    }

    /// Whether `[start, end)` overlaps the application part of a range.
    pub fn overlaps(&self, start: usize, end: usize) -> bool {
        self.mirrors.range(..end).next_back().is_some_and(|(_, m)| m.owned_end > start)
    }

    /// Every range, to compare or write its pages.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Mirror> {
        self.mirrors.values_mut()
    }

    /// A request of `op` is about to be submitted: whether every changed page must be pushed
    /// first. Notes that the device may write mirrored memory from then on.
    pub fn before_request(&mut self, op: Opcode) -> bool {
        if self.mirrors.is_empty() || op.family() == Family::Managed {
            return false;
        }
        // Device work may be waiting on a value the CPU wrote (hipStreamWaitValue* on mapped
        // or signal memory): the wait must see it.
        let mut push = waits_on_device_work(op);
        if op == Opcode::DeviceSynchronize {
            self.full_sync_at = Some(self.device_epoch);
            return push;
        }
        if touches_device_memory(op) {
            push = true;
            self.device_epoch += 1;
        }
        push
    }

    /// A synchronising call succeeded: whether device work may have written mirrored memory
    /// since the last device-wide synchronisation pulled it (then pull every range and call
    /// [`Self::pulled`]).
    pub fn pull_due(&mut self) -> Option<PullDue> {
        if self.mirrors.is_empty() {
            return None;
        }
        let full_sync_epoch = self.full_sync_at.take();
        (self.device_epoch > self.pulled_epoch).then_some(PullDue { full_sync_epoch })
    }

    /// Every range was pulled after the synchronisation [`Self::pull_due`] answered.
    pub fn pulled(&mut self, due: PullDue) {
        if let Some(epoch) = due.full_sync_epoch {
            // Everything issued before the device-wide synchronisation finished and is back.
            self.pulled_epoch = self.pulled_epoch.max(epoch);
        }
    }

    /// Counts bytes pushed to the worker.
    pub fn note_pushed_bytes(&mut self, bytes: usize) {
        self.pushed_bytes += bytes as u64;
    }

    /// Counts bytes pulled from the worker.
    pub fn note_pulled_bytes(&mut self, bytes: usize) {
        self.pulled_bytes += bytes as u64;
    }

    /// Bytes pushed and pulled so far in this session.
    pub fn stats(&self) -> (u64, u64) {
        (self.pushed_bytes, self.pulled_bytes)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn mirror_at(base: usize, pages: usize) -> Mirror {
        Mirror::new(MirrorKind::Managed, base, pages * PAGE, (base, base + pages * PAGE), base as u64, 0, 0)
    }

    #[test]
    fn nothing_moves_without_mirrors() {
        let mut book = ManagedMirrors::default();
        assert!(!book.before_request(Opcode::MemcpyHtoD));
        assert!(!book.before_request(Opcode::DeviceSynchronize));
        assert_eq!(book.pull_due(), None);
    }

    #[test]
    fn device_work_is_pushed_before_and_pulled_after_until_a_device_sync_covers_it() {
        let mut book = ManagedMirrors::default();
        book.insert(mirror_at(0x10000, 2));
        // Managed traffic itself never triggers the engine (no recursion).
        assert!(!book.before_request(Opcode::ManagedPush));
        // A query of an unrelated family moves nothing and lets the device write nothing.
        assert!(!book.before_request(Opcode::GetDeviceCount));
        assert_eq!(book.pull_due(), None, "no device work since the start");
        // A launch: push first, and the device may write from then on.
        assert!(book.before_request(Opcode::LaunchKernel));
        let due = book.pull_due().expect("a launch ran");
        book.pulled(due);
        // A stream synchronisation does not cover everything: the next one pulls again.
        assert!(book.before_request(Opcode::StreamSynchronize));
        assert!(book.pull_due().is_some());
        // A device-wide synchronisation covers every launch before it: once pulled after it,
        // later synchronisations pull nothing until new device work.
        assert!(book.before_request(Opcode::DeviceSynchronize));
        let due = book.pull_due().expect("the launch is not yet covered");
        book.pulled(due);
        assert_eq!(book.pull_due(), None);
        assert!(book.before_request(Opcode::Memset));
        assert!(book.pull_due().is_some());
    }

    #[test]
    fn lookups_see_only_the_application_part() {
        let mut book = ManagedMirrors::default();
        let base = 0x20000;
        book.insert(Mirror::new(MirrorKind::Registered, base, 3 * PAGE, (base + 100, base + 2 * PAGE + 50), 0x9000_0000, 1, 0));
        assert!(book.find(base + 99).is_none());
        assert_eq!(book.find(base + 100).map(|m| m.device_address(base + 100)), Some(0x9000_0000 + 100));
        assert!(book.find(base + 2 * PAGE + 50).is_none());
        assert!(book.overlaps(base, base + 101) && !book.overlaps(base, base + 100));
        let m = book.find(base + 100).expect("registered");
        assert_eq!(m.owned_part(0), (100, PAGE));
        assert_eq!(m.owned_part(2), (0, 50));
        assert!(book.remove_if(base + 100, |m| m.kind == MirrorKind::Managed).is_none());
        assert_eq!(book.forget_device(1).len(), 1);
        assert!(book.is_empty());
    }

    #[test]
    fn a_page_is_pushed_once_per_change() {
        let mut m = mirror_at(0, 1);
        let zero = page_hash(&[0; PAGE]);
        assert!(!m.note_local(0, zero), "fresh twin is zeroed");
        assert!(m.note_local(0, 7));
        assert!(!m.note_local(0, 7));
        m.note_pulled(0, 9);
        assert!(!m.note_local(0, 9));
    }
}
