//! Emulated device memory: per-device accounting, host blocks, and the device address space.
//!
//! Device addresses are synthetic, not host addresses: clients never learn where the worker's
//! heap lives, and a freed range is handed out again only after the whole window has been
//! cycled through (next-fit), so a stale pointer almost always fails instead of aliasing a
//! newer allocation. Every allocation is followed by an unmapped guard page, so running off
//! the end of a buffer hits no neighbour.

use std::alloc::{self, Layout};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use super::{read_lock, write_lock};
use crate::backend::{BackendError, DeviceIndex, DevicePtr, MemInfo, MemsetPattern};

/// Allocation granularity: device addresses are page aligned and usage is counted in pages.
pub(super) const PAGE: u64 = 4096;
/// Unmapped bytes after every allocation.
const GUARD: u64 = PAGE;
/// First device address handed out; low addresses stay unmapped so small integers mistaken
/// for pointers fail.
const WINDOW_START: u64 = 0x1000_0000_0000;
/// One past the last device address handed out.
const WINDOW_END: u64 = 0x7000_0000_0000;

/// Capacity and usage of one emulated device, shared by every session.
#[derive(Debug)]
pub(super) struct DeviceMemory {
    capacity: u64,
    used: AtomicU64,
}

impl DeviceMemory {
    pub(super) fn new(capacity: u64) -> Self {
        Self {
            capacity,
            used: AtomicU64::new(0),
        }
    }

    pub(super) fn info(&self) -> MemInfo {
        let used = self.used.load(Ordering::Acquire);
        MemInfo {
            free: self.capacity.saturating_sub(used),
            total: self.capacity,
        }
    }

    /// Claims `bytes` of capacity, or `None` if they are not free. Nothing is allocated here:
    /// the claim comes first, so an impossible request never reaches the host allocator.
    pub(super) fn try_reserve(self: &Arc<Self>, bytes: u64) -> Option<Reservation> {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes)
                    .filter(|&total| total <= self.capacity)
            })
            .ok()?;
        Some(Reservation {
            memory: Arc::clone(self),
            bytes,
        })
    }
}

/// Capacity claimed from a [`DeviceMemory`], given back on drop.
#[derive(Debug)]
pub(super) struct Reservation {
    memory: Arc<DeviceMemory>,
    bytes: u64,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.memory.used.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// Zero-filled host memory backing one allocation, obtained without aborting on failure.
fn alloc_zeroed_bytes(len: usize) -> Option<Box<[u8]>> {
    debug_assert!(
        len > 0,
        "zero-sized allocations never reach the host allocator"
    );
    let layout = Layout::array::<u8>(len).ok()?;
    // SAFETY: `layout` has a non-zero size (`len > 0`, zero-size mallocs return NULL before
    // getting here).
    let ptr = unsafe { alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return None;
    }
    let slice = std::ptr::slice_from_raw_parts_mut(ptr, len);
    // SAFETY: `ptr` was just returned by the global allocator for `Layout::array::<u8>(len)`,
    // which is exactly the layout `Box<[u8]>` of length `len` frees with; the `len` bytes are
    // initialized (zeroed) and nothing else refers to them, so the box owns them uniquely.
    Some(unsafe { Box::from_raw(slice) })
}

/// One live (or freed but still referenced) allocation.
///
/// The bytes sit behind a `RwLock`: stream executors, null-stream work and the transport's
/// zero-copy access all lock before touching them, so concurrent streams racing on one buffer
/// (a client bug on a real GPU) stays memory-safe here. Queued operations hold an `Arc`, so
/// `free` only unmaps the address; the bytes and the capacity go back when the last queued
/// user is done.
#[derive(Debug)]
pub(super) struct Allocation {
    base: u64,
    size: u64,
    device: DeviceIndex,
    bytes: RwLock<Box<[u8]>>,
    _capacity: Reservation,
}

impl Allocation {
    /// Address just past the guard page, where the next allocation may start.
    fn reserved_end(&self) -> u64 {
        self.base + self.size.next_multiple_of(PAGE) + GUARD
    }
}

/// A checked byte range inside one allocation, keeping the allocation alive.
#[derive(Debug, Clone)]
pub(super) struct Region {
    allocation: Arc<Allocation>,
    offset: usize,
    len: usize,
}

impl Region {
    pub(super) fn device(&self) -> DeviceIndex {
        self.allocation.device
    }

    fn range(&self) -> std::ops::Range<usize> {
        self.offset..self.offset + self.len
    }

    /// Lets `f` read the region's bytes under the allocation's read lock.
    pub(super) fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        let bytes = read_lock(&self.allocation.bytes);
        f(&bytes[self.range()])
    }

    /// Lets `f` write the region's bytes under the allocation's write lock.
    pub(super) fn with_bytes_mut<R>(&self, f: impl FnOnce(&mut [u8]) -> R) -> R {
        let mut bytes = write_lock(&self.allocation.bytes);
        let range = self.range();
        f(&mut bytes[range])
    }

    /// Copies `src` (exactly the region's length) into the region.
    pub(super) fn write(&self, src: &[u8]) {
        self.with_bytes_mut(|dst| dst.copy_from_slice(src));
    }

    /// Copies the region into `dst` (exactly the region's length).
    pub(super) fn read_into(&self, dst: &mut [u8]) {
        self.with_bytes(|src| dst.copy_from_slice(src));
    }

    /// The region's bytes in a new buffer; a buffer the host cannot provide is `OutOfMemory`.
    pub(super) fn read_to_vec(&self) -> Result<Vec<u8>, BackendError> {
        let mut out = Vec::new();
        out.try_reserve_exact(self.len).map_err(|e| {
            BackendError::OutOfMemory(format!("host buffer of {} bytes: {e}", self.len))
        })?;
        self.with_bytes(|src| out.extend_from_slice(src));
        Ok(out)
    }

    pub(super) fn fill(&self, pattern: MemsetPattern) {
        self.with_bytes_mut(|dst| pattern.fill(dst));
    }

    /// `memmove` from `src` into `dst` (same length). Two allocations are locked in address
    /// order, so opposite copies on two streams cannot deadlock.
    pub(super) fn copy(dst: &Region, src: &Region) {
        debug_assert_eq!(dst.len, src.len);
        if Arc::ptr_eq(&dst.allocation, &src.allocation) {
            let mut bytes = write_lock(&dst.allocation.bytes);
            bytes.copy_within(src.range(), dst.offset);
            return;
        }
        let copy = |to: &mut [u8], from: &[u8]| {
            to[dst.range()].copy_from_slice(&from[src.range()]);
        };
        if dst.allocation.base < src.allocation.base {
            let mut to = write_lock(&dst.allocation.bytes);
            let from = read_lock(&src.allocation.bytes);
            copy(&mut to, &from);
        } else {
            let from = read_lock(&src.allocation.bytes);
            let mut to = write_lock(&dst.allocation.bytes);
            copy(&mut to, &from);
        }
    }
}

/// The device address space shared by all devices (unified addressing: an address names its
/// device).
#[derive(Debug)]
pub(super) struct AddressSpace {
    ranges: RwLock<Ranges>,
}

#[derive(Debug)]
struct Ranges {
    live: BTreeMap<u64, Arc<Allocation>>,
    /// Where the next-fit search starts.
    cursor: u64,
}

impl Ranges {
    /// Base address for `size` bytes plus guard, searching forward from the cursor and
    /// wrapping once.
    fn find_free(&self, size: u64) -> Option<u64> {
        let span = size.checked_next_multiple_of(PAGE)?.checked_add(GUARD)?;
        let mut start = self.cursor;
        let mut wrapped = false;
        loop {
            let end = start.checked_add(span)?;
            if end > WINDOW_END {
                if wrapped {
                    return None;
                }
                wrapped = true;
                start = WINDOW_START;
                continue;
            }
            // Live ranges do not overlap, so only the last one starting below `end` can reach
            // into `start..end`.
            match self.live.range(..end).next_back() {
                Some((_, blocking)) if blocking.reserved_end() > start => {
                    start = blocking.reserved_end();
                }
                _ => return Some(start),
            }
        }
    }
}

impl AddressSpace {
    pub(super) fn new() -> Self {
        Self {
            ranges: RwLock::new(Ranges {
                live: BTreeMap::new(),
                cursor: WINDOW_START,
            }),
        }
    }

    /// Allocates `size` bytes of host memory against `capacity` and maps them on `device`.
    pub(super) fn map(
        &self,
        device: DeviceIndex,
        size: u64,
        capacity: Reservation,
    ) -> Result<DevicePtr, BackendError> {
        let len = usize::try_from(size).map_err(|_| {
            BackendError::OutOfMemory(format!("{size} bytes exceed the host address space"))
        })?;
        let bytes = alloc_zeroed_bytes(len).ok_or_else(|| {
            BackendError::OutOfMemory(format!("host allocator refused {size} bytes"))
        })?;
        let mut ranges = write_lock(&self.ranges);
        let base = ranges.find_free(size).ok_or_else(|| {
            BackendError::OutOfMemory("device address space exhausted".to_string())
        })?;
        let allocation = Arc::new(Allocation {
            base,
            size,
            device,
            bytes: RwLock::new(bytes),
            _capacity: capacity,
        });
        ranges.cursor = allocation.reserved_end();
        ranges.live.insert(base, allocation);
        Ok(DevicePtr(base))
    }

    /// Unmaps the allocation starting at `ptr`; its memory goes once no queued work holds it.
    pub(super) fn unmap(&self, ptr: DevicePtr) -> Result<(), BackendError> {
        write_lock(&self.ranges)
            .live
            .remove(&ptr.0)
            .map(drop)
            .ok_or_else(|| {
                BackendError::InvalidValue(format!("{ptr} is not the start of a live allocation"))
            })
    }

    /// The allocation containing `ptr` and `len` bytes from there.
    ///
    /// An address in no allocation is `InvalidDevicePointer`; a range starting inside one but
    /// running past its end is `InvalidValue`. An empty range may sit at the very end.
    pub(super) fn resolve(&self, ptr: DevicePtr, len: u64) -> Result<Region, BackendError> {
        let ranges = read_lock(&self.ranges);
        let allocation = ranges
            .live
            .range(..=ptr.0)
            .next_back()
            .map(|(_, allocation)| allocation)
            .filter(|a| ptr.0 - a.base < a.size || (len == 0 && ptr.0 - a.base == a.size))
            .ok_or_else(|| {
                BackendError::InvalidDevicePointer(format!("{ptr} is not in a live allocation"))
            })?;
        let offset = ptr.0 - allocation.base;
        if len > allocation.size - offset {
            return Err(BackendError::InvalidValue(format!(
                "{len} bytes at {ptr} run past the end of the {}-byte allocation at {}",
                allocation.size,
                DevicePtr(allocation.base)
            )));
        }
        // Both fit in usize: the allocation's size did when it was created.
        Ok(Region {
            allocation: Arc::clone(allocation),
            offset: offset as usize,
            len: len as usize,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(space: &AddressSpace, memory: &Arc<DeviceMemory>, size: u64) -> DevicePtr {
        let footprint = size.next_multiple_of(PAGE);
        space
            .map(0, size, memory.try_reserve(footprint).unwrap())
            .unwrap()
    }

    #[test]
    fn reservation_is_checked_and_returned() {
        let memory = Arc::new(DeviceMemory::new(3 * PAGE));
        let first = memory.try_reserve(2 * PAGE).unwrap();
        assert!(memory.try_reserve(2 * PAGE).is_none());
        assert!(memory.try_reserve(u64::MAX).is_none());
        assert_eq!(
            memory.info(),
            MemInfo {
                free: PAGE,
                total: 3 * PAGE
            }
        );
        drop(first);
        assert_eq!(memory.info().free, 3 * PAGE);
    }

    #[test]
    fn allocations_are_page_aligned_with_guard_gaps() {
        let space = AddressSpace::new();
        let memory = Arc::new(DeviceMemory::new(1 << 20));
        let a = map(&space, &memory, 10);
        let b = map(&space, &memory, PAGE);
        assert_eq!(a.0 % PAGE, 0);
        assert_eq!(b.0, a.0 + PAGE + GUARD);
        // The guard page belongs to nobody.
        let err = space.resolve(DevicePtr(a.0 + PAGE), 1).unwrap_err();
        assert!(matches!(err, BackendError::InvalidDevicePointer(_)));
    }

    #[test]
    fn freed_ranges_are_not_reused_before_wrapping() {
        let space = AddressSpace::new();
        let memory = Arc::new(DeviceMemory::new(1 << 20));
        let a = map(&space, &memory, 64);
        space.unmap(a).unwrap();
        let b = map(&space, &memory, 64);
        assert_ne!(a, b);
    }

    #[test]
    fn search_wraps_around_the_window() {
        let space = AddressSpace::new();
        let memory = Arc::new(DeviceMemory::new(1 << 20));
        let a = map(&space, &memory, PAGE);
        write_lock(&space.ranges).cursor = WINDOW_END - PAGE;
        // Does not fit before the end: wraps, skips `a`, lands right after its guard.
        let b = map(&space, &memory, PAGE);
        assert_eq!(b.0, a.0 + PAGE + GUARD);
    }

    #[test]
    fn resolve_checks_bounds() {
        let space = AddressSpace::new();
        let memory = Arc::new(DeviceMemory::new(1 << 20));
        let a = map(&space, &memory, 100);
        assert_eq!(
            space.resolve(a, 100).unwrap().read_to_vec().unwrap(),
            [0; 100]
        );
        assert!(space
            .resolve(DevicePtr(a.0 + 100), 0)
            .unwrap()
            .read_to_vec()
            .unwrap()
            .is_empty());
        assert!(matches!(
            space.resolve(DevicePtr(a.0 + 50), 51),
            Err(BackendError::InvalidValue(_))
        ));
        assert!(matches!(
            space.resolve(DevicePtr(a.0 + 100), 1),
            Err(BackendError::InvalidDevicePointer(_))
        ));
        assert!(matches!(
            space.resolve(DevicePtr(a.0 - 1), 1),
            Err(BackendError::InvalidDevicePointer(_))
        ));
        assert!(matches!(
            space.resolve(DevicePtr(a.0), u64::MAX),
            Err(BackendError::InvalidValue(_))
        ));
    }

    #[test]
    fn overlapping_copy_is_memmove() {
        let space = AddressSpace::new();
        let memory = Arc::new(DeviceMemory::new(1 << 20));
        let a = map(&space, &memory, 8);
        space
            .resolve(a, 8)
            .unwrap()
            .write(&[0, 1, 2, 3, 4, 5, 6, 7]);
        let dst = space.resolve(DevicePtr(a.0 + 2), 5).unwrap();
        let src = space.resolve(a, 5).unwrap();
        Region::copy(&dst, &src);
        let mut out = [0u8; 8];
        space.resolve(a, 8).unwrap().read_into(&mut out);
        assert_eq!(out, [0, 1, 0, 1, 2, 3, 4, 7]);
    }
}
