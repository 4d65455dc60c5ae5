//! Handles and addresses: how sessions and backends name devices, device memory and the objects a
//! backend creates.

use std::fmt;

/// A device ordinal, `0..device_count()`.
pub type DeviceIndex = u32;

/// A device address as the client sees it. `DevicePtr::NULL` is never a live allocation.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct DevicePtr(pub u64);

impl DevicePtr {
    /// The null device pointer (`hipMalloc(&p, 0)` yields it).
    pub const NULL: Self = Self(0);

    /// Whether this is the null pointer.
    pub fn is_null(self) -> bool {
        self.0 == 0
    }

    /// This address plus `bytes`, or `None` on overflow.
    pub fn checked_add(self, bytes: u64) -> Option<Self> {
        self.0.checked_add(bytes).map(Self)
    }
}

impl fmt::Display for DevicePtr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

/// An opaque stream created by [`StreamBackend::stream_create`]. Handles are never reused.
///
/// [`StreamBackend::stream_create`]: crate::backend::StreamBackend::stream_create
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct StreamHandle(u64);

impl StreamHandle {
    pub(crate) fn from_raw(raw: u64) -> Self {
        Self(raw)
    }

    /// The raw value, for logs and handle tables.
    pub fn as_raw(self) -> u64 {
        self.0
    }
}

/// An opaque event created by [`EventBackend::event_create`]. Handles are never reused.
///
/// [`EventBackend::event_create`]: crate::backend::EventBackend::event_create
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct EventHandle(u64);

impl EventHandle {
    pub(crate) fn from_raw(raw: u64) -> Self {
        Self(raw)
    }

    /// The raw value, for logs and handle tables.
    pub fn as_raw(self) -> u64 {
        self.0
    }
}

/// An opaque module created by [`ModuleBackend::module_load`]. Handles are never reused.
///
/// [`ModuleBackend::module_load`]: crate::backend::ModuleBackend::module_load
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct ModuleHandle(u64);

impl ModuleHandle {
    pub(crate) fn from_raw(raw: u64) -> Self {
        Self(raw)
    }

    /// The raw value, for logs and handle tables.
    pub fn as_raw(self) -> u64 {
        self.0
    }
}

/// An opaque kernel of a loaded module ([`ModuleBackend::module_function`]). It becomes invalid
/// when its module is unloaded. Handles are never reused.
///
/// [`ModuleBackend::module_function`]: crate::backend::ModuleBackend::module_function
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct FunctionHandle(u64);

impl FunctionHandle {
    pub(crate) fn from_raw(raw: u64) -> Self {
        Self(raw)
    }

    /// The raw value, for logs and handle tables.
    pub fn as_raw(self) -> u64 {
        self.0
    }
}

/// Hashing for maps keyed by what this process hands out or has validated itself (handles:
/// counters and tagged counters; device ordinals): a client never chooses a key that is
/// inserted, so SipHash's resistance to flooding buys nothing, and it costs a measurable
/// part of a launch (several lookups each).
/// One multiply by an odd constant: a bijection, so sequential keys never collide, with the
/// high bits (which the table's control bytes use) mixed.
#[derive(Clone, Copy, Default, Debug)]
pub struct HandleHasher(u64);

impl std::hash::Hasher for HandleHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(29) ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// A map keyed by handles this process issued (see [`HandleHasher`]).
pub type HandleMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<HandleHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn handle_hashes_of_sequential_and_tagged_keys_are_distinct_and_spread() {
        let build = std::hash::BuildHasherDefault::<HandleHasher>::default();
        let mut hashes = std::collections::HashSet::new();
        for tag in [0u64, 1 << 56, 0x5a << 48] {
            for i in 0..4096u64 {
                assert!(hashes.insert(build.hash_one(tag + i)), "collision at {tag:#x} + {i}");
            }
        }
        // The top 7 bits (the table's control bytes) vary across sequential keys.
        let tops: std::collections::HashSet<u64> = (0..256u64).map(|i| build.hash_one(i) >> 57).collect();
        assert!(tops.len() > 64, "only {} distinct top bits", tops.len());
        // Pairs (the legacy-order map's keys) keep their order in the hash.
        assert_ne!(build.hash_one((1u64, 2u64)), build.hash_one((2u64, 1u64)));
        let mut map: HandleMap<StreamHandle, u32> = HandleMap::default();
        map.insert(StreamHandle::from_raw(7), 1);
        assert_eq!(map.get(&StreamHandle::from_raw(7)), Some(&1));
    }
}
