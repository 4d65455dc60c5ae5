//! The registration cache: long-lived memory that its owner announced with
//! [`remember`](RegCache::remember) (client: `hipHostMalloc` buffers; worker: device
//! allocations of a host-addressable backend) is registered once, on its first one-sided
//! transfer, and reused by every later transfer inside it until the owner calls
//! [`forget`](RegCache::forget) before freeing it.
//!
//! Only announced memory is cached. A cache keyed by the address of arbitrary application
//! buffers would be unsafe without `free`/`munmap` hooks: a freed buffer and the next one
//! often share an address while being different pages, and a stale registration makes the
//! NIC use the old pinned pages (silent corruption). The owner's `forget` is that hook.
//!
//! The cache keeps at most `budget` bytes registered; registering more releases the least
//! recently used registrations first (the ranges stay remembered and register again on their
//! next use). A range larger than the whole budget is never cached: its transfers register
//! per transfer, like unannounced memory. Registrations are shared (`Arc`): a transfer that
//! holds one keeps it valid even when it is evicted or forgotten meanwhile.

use crate::fabric::{FabricError, Region};
use crate::hook::ExportedMemory;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A registration shared between the cache and the transfers using it.
pub type SharedRegion = Arc<dyn Region>;

/// How remembered device memory (not addressable by this process) is made reachable: a
/// dma-buf export, called on first use (and again after an eviction).
pub type Export = Arc<dyn Fn() -> std::io::Result<ExportedMemory> + Send + Sync>;

/// Counters, for tests and logs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups served by an existing registration.
    pub hits: u64,
    /// Registrations made for remembered ranges.
    pub registrations: u64,
    /// Registrations released to stay within the budget.
    pub evictions: u64,
    /// Registrations that failed.
    pub failures: u64,
}

struct Entry {
    len: u64,
    region: Option<SharedRegion>,
    last_use: u64,
    /// Device memory: how to export it (`None`: host memory, registered by address).
    export: Option<Export>,
    /// Device memory whose export or registration failed: not tried again (transfers use
    /// the staging path).
    unusable: bool,
}

/// What [`RegCache::lookup`] found.
pub enum Lookup {
    /// The range lies inside remembered memory that is registered now.
    Hit(SharedRegion),
    /// Not inside remembered memory (or too large to cache): the caller decides whether a
    /// per-transfer registration is worth it.
    Miss,
    /// Remembered, but registering it failed.
    Failed(FabricError),
}

/// Remembered ranges and their registrations.
pub struct RegCache {
    entries: BTreeMap<u64, Entry>,
    registered: u64,
    budget: u64,
    max_ranges: usize,
    clock: u64,
    stats: CacheStats,
}

impl RegCache {
    /// An empty cache keeping at most `budget` bytes registered and `max_ranges` ranges.
    pub fn new(budget: usize, max_ranges: usize) -> Self {
        Self { entries: BTreeMap::new(), registered: 0, budget: budget as u64, max_ranges, clock: 0, stats: CacheStats::default() }
    }

    /// Announces `[base, base + len)` as long-lived. Ranges it overlaps are forgotten (their
    /// memory must have been freed already). Returns whether it was taken (`false`: empty,
    /// or the cache holds its maximum of ranges).
    pub fn remember(&mut self, base: u64, len: u64) -> bool {
        self.remember_entry(base, len, None)
    }

    /// Announces device memory `[base, base + len)`, registered through `export` on first
    /// use. Same rules as [`remember`](Self::remember).
    pub fn remember_device(&mut self, base: u64, len: u64, export: Export) -> bool {
        self.remember_entry(base, len, Some(export))
    }

    fn remember_entry(&mut self, base: u64, len: u64, export: Option<Export>) -> bool {
        if len == 0 || base.checked_add(len).is_none() {
            return false;
        }
        let overlapping: Vec<u64> = self.entries.range(..base + len).filter(|(&b, e)| b + e.len > base).map(|(&b, _)| b).collect();
        for b in overlapping {
            self.forget(b);
        }
        if self.entries.len() >= self.max_ranges {
            return false;
        }
        self.entries.insert(base, Entry { len, region: None, last_use: 0, export, unusable: false });
        true
    }

    /// The memory at `base` is about to be freed: forgets it and releases its registration
    /// (once no transfer holds it any more). Unknown bases are ignored.
    pub fn forget(&mut self, base: u64) {
        if let Some(entry) = self.entries.remove(&base) {
            if entry.region.is_some() {
                self.registered -= entry.len;
            }
        }
    }

    /// Forgets everything (the connection is going away).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.registered = 0;
    }

    /// Whether `[addr, addr + len)` lies inside remembered memory.
    pub fn contains(&self, addr: u64, len: u64) -> bool {
        self.find(addr, len).is_some()
    }

    fn find(&self, addr: u64, len: u64) -> Option<u64> {
        let end = addr.checked_add(len)?;
        let (&base, entry) = self.entries.range(..=addr).next_back()?;
        (end <= base + entry.len).then_some(base)
    }

    /// The registration covering `[addr, addr + len)` if it lies inside remembered memory,
    /// registering the whole remembered range with `register(base, len, export)` on first
    /// use (`export`: `Some` for device memory). Device memory whose registration failed
    /// once is a [`Lookup::Miss`] from then on.
    pub fn lookup(
        &mut self,
        addr: u64,
        len: u64,
        register: impl FnOnce(u64, u64, Option<&Export>) -> Result<Box<dyn Region>, FabricError>,
    ) -> Lookup {
        let Some(base) = self.find(addr, len) else { return Lookup::Miss };
        self.clock += 1;
        let clock = self.clock;
        let entry = self.entries.get_mut(&base).expect("found above");
        entry.last_use = clock;
        if let Some(region) = &entry.region {
            self.stats.hits += 1;
            return Lookup::Hit(region.clone());
        }
        let entry_len = entry.len;
        if entry_len > self.budget || entry.unusable {
            return Lookup::Miss;
        }
        let export = entry.export.clone();
        self.evict_until_fits(entry_len, base);
        match register(base, entry_len, export.as_ref()) {
            Ok(region) => {
                let region: SharedRegion = Arc::from(region);
                let entry = self.entries.get_mut(&base).expect("not evicted: it had no registration");
                entry.region = Some(region.clone());
                self.registered += entry_len;
                self.stats.registrations += 1;
                Lookup::Hit(region)
            }
            Err(e) => {
                self.stats.failures += 1;
                if export.is_some() {
                    self.entries.get_mut(&base).expect("still remembered").unusable = true;
                }
                Lookup::Failed(e)
            }
        }
    }

    /// Releases least recently used registrations (never `keep`'s) until `extra` more bytes
    /// fit in the budget.
    fn evict_until_fits(&mut self, extra: u64, keep: u64) {
        while self.registered + extra > self.budget {
            let victim = self.entries.iter().filter(|(&b, e)| b != keep && e.region.is_some()).min_by_key(|(_, e)| e.last_use).map(|(&b, _)| b);
            let Some(b) = victim else { return };
            let entry = self.entries.get_mut(&b).expect("just found");
            entry.region = None;
            self.registered -= entry.len;
            self.stats.evictions += 1;
        }
    }

    /// Bytes registered through the cache now.
    pub fn registered_bytes(&self) -> u64 {
        self.registered
    }

    /// Remembered ranges.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Counters.
    pub fn stats(&self) -> CacheStats {
        self.stats
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    static LIVE: AtomicU32 = AtomicU32::new(0);

    struct Fake(u32);
    impl Region for Fake {
        fn lkey(&self) -> u32 {
            self.0
        }
        fn rkey(&self) -> u32 {
            self.0
        }
    }
    impl Drop for Fake {
        fn drop(&mut self) {
            LIVE.fetch_sub(1, Ordering::SeqCst);
        }
    }

    fn reg(key: u32) -> impl FnOnce(u64, u64, Option<&Export>) -> Result<Box<dyn Region>, FabricError> {
        move |_, _, _| {
            LIVE.fetch_add(1, Ordering::SeqCst);
            Ok(Box::new(Fake(key)))
        }
    }

    fn hit(l: Lookup) -> SharedRegion {
        match l {
            Lookup::Hit(r) => r,
            Lookup::Miss => panic!("miss"),
            Lookup::Failed(e) => panic!("{e}"),
        }
    }

    // One test owns LIVE (tests run in parallel threads).
    #[test]
    fn caches_evicts_forgets_and_never_serves_unannounced_memory() {
        let mut c = RegCache::new(3 << 20, 8);
        assert!(matches!(c.lookup(0x1000, 10, reg(1)), Lookup::Miss), "unannounced memory is not cached");
        assert!(c.remember(0x10_0000, 1 << 20));
        assert!(c.remember(0x20_0000, 1 << 20));
        assert!(c.remember(0x30_0000, 1 << 20));
        assert!(matches!(c.lookup(0x10_0000 + (1 << 20) - 4, 8, reg(9)), Lookup::Miss), "straddles the end");
        // First use registers the whole range; later uses inside it hit.
        let a = hit(c.lookup(0x10_0010, 100, reg(1)));
        assert_eq!(a.lkey(), 1);
        assert_eq!(hit(c.lookup(0x10_0000, 1 << 20, reg(99))).lkey(), 1);
        let _b = hit(c.lookup(0x20_0000, 4096, reg(2)));
        let _c = hit(c.lookup(0x30_0000, 4096, reg(3)));
        assert_eq!(c.registered_bytes(), 3 << 20);
        assert_eq!(c.stats().registrations, 3);
        assert_eq!(c.stats().hits, 1);

        let _ = hit(c.lookup(0x10_0000, 1, reg(98))); // 0x10_0000 is now the most recently used
                                                      // A fourth range exceeds the budget: the least recently used (0x20_0000) goes.
        assert!(c.remember(0x40_0000, 1 << 20));
        assert_eq!(hit(c.lookup(0x40_0000, 1, reg(4))).lkey(), 4);
        assert_eq!(c.stats().evictions, 1);
        assert_eq!(c.registered_bytes(), 3 << 20);
        // Evicted but still remembered: the next use registers again.
        assert_eq!(hit(c.lookup(0x20_0000, 1, reg(5))).lkey(), 5);
        assert_eq!(c.stats().evictions, 2, "0x30_0000 was the least recently used now");
        // Forgetting releases the cache's share; a transfer still holding it keeps it alive.
        drop(_c);
        let live_before = LIVE.load(Ordering::SeqCst);
        c.forget(0x10_0000);
        assert_eq!(LIVE.load(Ordering::SeqCst), live_before, "`a` still holds the registration");
        drop(a);
        assert_eq!(LIVE.load(Ordering::SeqCst), live_before - 1);
        assert!(matches!(c.lookup(0x10_0000, 1, reg(6)), Lookup::Miss), "forgotten memory is not served");
        // Re-announcing an overlapping range forgets the old one.
        assert!(c.remember(0x3f_f000, 0x2000));
        assert!(!c.contains(0x40_0000 + 0x2000, 1), "0x40_0000 was forgotten by the overlap");
        assert!(c.contains(0x3f_f000, 0x2000));
        // Larger than the whole budget: never cached.
        assert!(c.remember(0x100_0000, 4 << 20));
        assert!(matches!(c.lookup(0x100_0000, 1, reg(7)), Lookup::Miss));
        // A failed registration is reported, not cached.
        assert!(c.remember(0x200_0000, 4096));
        assert!(matches!(c.lookup(0x200_0000, 1, |_, _, _| Err(FabricError::new("register", "no"))), Lookup::Failed(_)));
        assert_eq!(c.stats().failures, 1);
        // Device memory: registered through its export; a failure is final for that range.
        let export: Export = Arc::new(|| Err(std::io::Error::other("unused")));
        assert!(c.remember_device(0x300_0000, 4096, export.clone()));
        let got = c.lookup(0x300_0000, 8, |base, len, ex| {
            assert!(ex.is_some() && (base, len) == (0x300_0000, 4096));
            Err(FabricError::new("ibv_reg_dmabuf_mr", "not supported"))
        });
        assert!(matches!(got, Lookup::Failed(_)));
        assert!(matches!(c.lookup(0x300_0000, 8, |_, _, _| panic!("not retried")), Lookup::Miss));
        assert!(c.remember_device(0x310_0000, 4096, export));
        assert_eq!(hit(c.lookup(0x310_0000, 8, reg(8))).lkey(), 8);
        c.forget(0x310_0000);
        c.clear();
        drop(_b);
        assert_eq!(c.registered_bytes(), 0);
        assert_eq!(LIVE.load(Ordering::SeqCst), 0, "every registration released");
        // Limits.
        let mut small = RegCache::new(1 << 20, 2);
        assert!(small.remember(0x1000, 1) && small.remember(0x2000, 1));
        assert!(!small.remember(0x3000, 1), "range limit");
        assert!(!small.remember(0x4000, 0), "empty range");
        assert!(!small.remember(u64::MAX, 2), "wrapping range");
    }
}
