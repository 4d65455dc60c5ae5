//! The session's tables: live allocations (by address range) and opaque handles.

use super::Failure;
use proto_core::Status;
use std::collections::BTreeMap;

/// One live allocation, or a module global the session has looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocInfo {
    /// Bytes.
    pub size: u64,
    /// Device it lives on.
    pub device: u32,
    /// The module (session handle) owning this range: a global, not freeable with `hipFree`
    /// and not counted in [`Allocations::total_bytes`]. `None` for `hipMalloc` memory.
    pub module: Option<u64>,
}

/// Live allocations keyed by base address, so any pointer into one can be resolved.
#[derive(Debug, Default)]
pub struct Allocations {
    by_base: BTreeMap<u64, AllocInfo>,
    total_bytes: u64,
}

impl Allocations {
    /// Records a new allocation (or module global).
    pub fn insert(&mut self, base: u64, info: AllocInfo) {
        if info.module.is_none() {
            self.total_bytes += info.size;
        }
        if let Some(old) = self.by_base.insert(base, info) {
            if old.module.is_none() {
                self.total_bytes -= old.size;
            }
        }
    }

    /// The range that starts exactly at `base`.
    pub fn get(&self, base: u64) -> Option<&AllocInfo> {
        self.by_base.get(&base)
    }

    /// Removes the range that starts exactly at `base`.
    pub fn remove(&mut self, base: u64) -> Option<AllocInfo> {
        let info = self.by_base.remove(&base)?;
        if info.module.is_none() {
            self.total_bytes -= info.size;
        }
        Some(info)
    }

    /// The allocation containing all of `[ptr, ptr + len)`, or an error naming the problem:
    /// a pointer in no allocation of this session, or a range running past its end.
    pub fn resolve(&self, ptr: u64, len: u64, what: &str) -> Result<(u64, AllocInfo), Failure> {
        let (&base, &info) = self
            .by_base
            .range(..=ptr)
            .next_back()
            .filter(|(&base, info)| ptr - base < info.size.max(1))
            .ok_or_else(|| Failure::new(Status::INVALID_VALUE, format!("{what} {ptr:#x} is not a device allocation of this session")))?;
        let end = ptr.checked_add(len).ok_or_else(|| Failure::new(Status::INVALID_VALUE, format!("{what} range {ptr:#x}+{len} overflows")))?;
        if end > base + info.size {
            return Err(Failure::new(
                Status::INVALID_VALUE,
                format!("{what} range {ptr:#x}+{len} runs past the end of its allocation {base:#x}+{}", info.size),
            ));
        }
        Ok((base, info))
    }

    /// Whether any allocation (or global) shares a byte with `[ptr, ptr + len)`.
    pub fn overlaps(&self, ptr: u64, len: u64) -> bool {
        let end = ptr.saturating_add(len);
        let before = self.by_base.range(..=ptr).next_back().is_some_and(|(&base, info)| base + info.size.max(1) > ptr);
        before || self.by_base.range(ptr..end).next().is_some()
    }

    /// Number of live allocations.
    pub fn len(&self) -> usize {
        self.by_base.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.by_base.is_empty()
    }

    /// Bytes of `hipMalloc` memory held (module globals not counted).
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Every live allocation, by base.
    pub fn iter(&self) -> impl Iterator<Item = (&u64, &AllocInfo)> {
        self.by_base.iter()
    }

    /// Removes and returns every allocation matching `pred`.
    pub fn drain_where(&mut self, mut pred: impl FnMut(&AllocInfo) -> bool) -> Vec<(u64, AllocInfo)> {
        let bases: Vec<u64> = self.by_base.iter().filter(|(_, a)| pred(a)).map(|(b, _)| *b).collect();
        bases.into_iter().filter_map(|b| self.remove(b).map(|a| (b, a))).collect()
    }
}

/// The bits of a handle its kind's tag occupies.
const HANDLE_TAG_MASK: u64 = 0xffff_0000_0000_0000;
/// Where a handle carries its session's namespace ([`Handles::set_namespace`]).
pub const HANDLE_NAMESPACE_SHIFT: u32 = 40;
const HANDLE_NAMESPACE_MASK: u64 = 0xff << HANDLE_NAMESPACE_SHIFT;

/// Opaque client handles for backend objects. Values carry a per-kind tag so a stream handle
/// passed as an event is refused, and are never reused within a session.
#[derive(Debug)]
pub struct Handles<T> {
    kind: &'static str,
    next: u64,
    capacity: usize,
    live: crate::backend::HandleMap<u64, T>,
}

impl<T> Handles<T> {
    /// A table of `kind` handles starting at `tag + 1`, holding at most `capacity`.
    pub fn new(kind: &'static str, tag: u64, capacity: usize) -> Self {
        Self { kind, next: tag + 1, capacity, live: Default::default() }
    }

    /// Moves the handles still to be issued into namespace `space` (bits 40..48 under the
    /// tag): a client's device list tells its workers' handles apart by it
    /// (`SessionDeviceBase`). Only before the first handle is issued.
    pub fn set_namespace(&mut self, space: u8) {
        let tag = self.next & HANDLE_TAG_MASK;
        if self.next & !HANDLE_TAG_MASK & !HANDLE_NAMESPACE_MASK == 1 {
            self.next = tag | (u64::from(space) << HANDLE_NAMESPACE_SHIFT) | 1;
        }
    }

    /// Fails with `QUOTA_EXCEEDED`-style `hipErrorOutOfMemory` when the table is full.
    pub fn check_capacity(&self) -> Result<(), Failure> {
        if self.live.len() >= self.capacity {
            return Err(Failure::new(Status::OUT_OF_MEMORY, format!("session holds the maximum of {} {}s", self.capacity, self.kind)));
        }
        Ok(())
    }

    /// Stores `value` under a fresh handle.
    pub fn insert(&mut self, value: T) -> u64 {
        let handle = self.next;
        self.next += 1;
        self.live.insert(handle, value);
        handle
    }

    /// Stores `value` under `handle`, an id chosen outside the table (per-thread streams).
    /// The caller has checked capacity and that `handle` is outside the table's own range.
    pub fn insert_at(&mut self, handle: u64, value: T) {
        self.live.insert(handle, value);
    }

    /// Every live handle.
    pub fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.live.keys().copied()
    }

    /// The object behind `handle`.
    pub fn get(&self, handle: u64) -> Result<&T, Failure> {
        self.live.get(&handle).ok_or_else(|| self.unknown(handle))
    }

    /// The object behind `handle`, for updates.
    pub fn get_mut(&mut self, handle: u64) -> Result<&mut T, Failure> {
        if !self.live.contains_key(&handle) {
            return Err(self.unknown(handle));
        }
        self.live.get_mut(&handle).ok_or_else(|| Failure::new(Status::INVALID_HANDLE, "handle vanished"))
    }

    /// Removes `handle`.
    pub fn remove(&mut self, handle: u64) -> Result<T, Failure> {
        self.live.remove(&handle).ok_or_else(|| self.unknown(handle))
    }

    /// Number of live handles.
    pub fn len(&self) -> usize {
        self.live.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    /// Every live object.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.live.values()
    }

    /// Removes and returns every entry matching `pred`.
    pub fn drain_where(&mut self, mut pred: impl FnMut(&T) -> bool) -> Vec<(u64, T)> {
        let keys: Vec<u64> = self.live.iter().filter(|(_, v)| pred(v)).map(|(k, _)| *k).collect();
        keys.into_iter().filter_map(|k| self.live.remove(&k).map(|v| (k, v))).collect()
    }

    fn unknown(&self, handle: u64) -> Failure {
        Failure::new(Status::INVALID_HANDLE, format!("{handle:#x} is not a live {} of this session", self.kind))
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn resolve_checks_ranges() {
        let mut a = Allocations::default();
        a.insert(0x1000, AllocInfo { size: 0x100, device: 0, module: None });
        a.insert(0x2000, AllocInfo { size: 0x40, device: 0, module: Some(7) });
        assert!(a.resolve(0x2000, 0x40, "p").is_ok(), "globals resolve like memory");
        assert_eq!(a.total_bytes(), 0x100, "but are not counted");
        assert_eq!(a.remove(0x2000).map(|g| g.module), Some(Some(7)));
        assert!(a.resolve(0x1000, 0x100, "p").is_ok());
        assert!(a.resolve(0x10ff, 1, "p").is_ok());
        assert!(a.resolve(0x10ff, 2, "p").is_err());
        assert!(a.resolve(0x1100, 0, "p").is_err());
        assert!(a.resolve(0xfff, 1, "p").is_err());
        assert!(a.resolve(0x1000, u64::MAX, "p").is_err());
        assert_eq!(a.total_bytes(), 0x100);
        assert!(a.overlaps(0xf00, 0x101) && a.overlaps(0x10ff, 0x10) && a.overlaps(0x1010, 1));
        assert!(!a.overlaps(0xf00, 0x100) && !a.overlaps(0x1100, 0x100));
        assert!(a.remove(0x1001).is_none());
        assert!(a.remove(0x1000).is_some());
        assert_eq!(a.total_bytes(), 0);
    }

    #[test]
    fn a_namespace_moves_handles_only_before_the_first() {
        let mut h = Handles::new("stream", 0x5354_0000_0000_0000, 4);
        h.set_namespace(3);
        assert_eq!(h.insert(()), 0x5354_0300_0000_0001);
        h.set_namespace(3);
        assert_eq!(h.insert(()), 0x5354_0300_0000_0002, "the same namespace again changes nothing");
        h.set_namespace(5);
        assert_eq!(h.insert(()), 0x5354_0300_0000_0003, "issued handles keep their namespace");
        let mut plain = Handles::new("event", 0x4556_0000_0000_0000, 1);
        plain.set_namespace(0);
        assert_eq!(plain.insert(()), 0x4556_0000_0000_0001, "namespace 0 is the single worker's numbering");
    }

    #[test]
    fn handles_are_tagged_and_bounded() {
        let mut h = Handles::new("stream", 0x10_0000, 2);
        let a = h.insert(1);
        let _b = h.insert(2);
        assert!(h.check_capacity().is_err());
        assert_eq!(*h.get(a).unwrap(), 1);
        assert!(h.get(0x99).is_err());
        h.remove(a).unwrap();
        assert!(h.remove(a).is_err());
        assert_ne!(h.insert(3), a);
    }
}
