//! `hipMalloc` without a round trip (`CLIENT_ALLOCATION`, `docs/ALLOCATION.md`).
//!
//! Per device, on the client's first ask (`ClientRangeReserve`), the session reserves a large
//! range of device address space with the backend's virtual-memory API. The client places
//! its allocations inside it itself and posts `MallocAt`; the session checks the address
//! (inside the range, aligned, overlapping no live allocation, within the session's limits)
//! and backs it: the granules the allocation touches are one *unit* of physical memory,
//! created, mapped and made accessible. An allocation at least a granule large owns its unit
//! (granule-aligned); smaller ones never cross a granule and share that granule's unit, which
//! counts its users. A unit whose last user is freed stays mapped in a bounded cache
//! ([`CLIENT_ALLOC_CACHE_BYTES`]) so a malloc/free loop reuses it without driver calls; the
//! cache is trimmed oldest first, emptied when physical memory runs out, at `hipDeviceReset`
//! and at the session's end. The allocation joins the session's allocation table like a
//! `hipMalloc` one, so copies, kernels, memsets, pointer queries and accounting see no
//! difference.

use super::{Failure, Session};
use crate::backend::vmm::{access, PhysicalHandle};
use crate::backend::{Backend, BackendError, DeviceIndex, DevicePtr};
use proto_core::wire;
use proto_core::Status;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Largest client allocation range per device: the device's memory times
/// [`CLIENT_RANGE_MEMORY_FACTOR`], at most this (address space, not memory).
pub const MAX_CLIENT_RANGE_BYTES: u64 = 1 << 40;
/// The range spans this many times the device's memory, so fragmentation never runs it out
/// before memory does.
pub const CLIENT_RANGE_MEMORY_FACTOR: u64 = 4;
/// Physical memory of freed client allocations kept mapped per session, for reuse by the next
/// allocation at the same place. A default to be measured on the H100 by the lead (the
/// bench's malloc/free figure).
pub const CLIENT_ALLOC_CACHE_BYTES: u64 = 256 << 20;
/// Alignment of every client allocation (hipMalloc guarantees 256 bytes).
pub const CLIENT_ALLOC_ALIGNMENT: u64 = 256;

/// A reserved range of address space, given back with its last holder (the session's range
/// table, and the units mapped in it, which IPC importers may outlive the session with).
struct Reservation {
    backend: Arc<dyn Backend>,
    base: u64,
    len: u64,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let Err(e) = self.backend.vmm_free_reservation(DevicePtr(self.base), self.len) {
            tracing::warn!(base = self.base, %e, "freeing a client allocation range failed");
        }
    }
}

/// Physical memory mapped at a run of granules; unmapped and released with its last holder
/// (the session, and IPC importers of an allocation in it).
struct Backing {
    backend: Arc<dyn Backend>,
    base: u64,
    size: u64,
    physical: PhysicalHandle,
    _reservation: Arc<Reservation>,
}

impl Drop for Backing {
    fn drop(&mut self) {
        if let Err(e) = self.backend.vmm_unmap(DevicePtr(self.base), self.size) {
            tracing::warn!(base = self.base, %e, "unmapping a client allocation unit failed");
        }
        if let Err(e) = self.backend.vmm_release(self.physical) {
            tracing::warn!(base = self.base, %e, "releasing a client allocation unit failed");
        }
    }
}

/// One unit of a range: a run of granules and its memory.
struct Unit {
    size: u64,
    backing: Arc<Backing>,
    /// Live allocations inside it; 0: cached.
    users: u32,
    /// When it was last released, for trimming the cache oldest first.
    released_at: u64,
    /// Shared through IPC: never cached, its addresses retired with its last user.
    exported: bool,
}

/// One device's client allocation range.
struct Range {
    reservation: Arc<Reservation>,
    granularity: u64,
    /// Units by first address.
    units: BTreeMap<u64, Unit>,
    /// Address runs of exported units whose users are gone: never backed again.
    retired: BTreeMap<u64, u64>,
}

impl Range {
    fn base(&self) -> u64 {
        self.reservation.base
    }

    fn len(&self) -> u64 {
        self.reservation.len
    }
}

/// The session's client allocation ranges and the allocations placed in them.
#[derive(Default)]
pub struct ClientRanges {
    ranges: HashMap<DeviceIndex, Range>,
    /// Live client allocations: their device and the base of their unit.
    live: HashMap<u64, (DeviceIndex, u64)>,
    /// Bytes of units with no user.
    cached_bytes: u64,
    clock: u64,
}

impl std::fmt::Debug for ClientRanges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientRanges")
            .field("devices", &self.ranges.len())
            .field("live", &self.live.len())
            .field("cached_bytes", &self.cached_bytes)
            .finish()
    }
}

impl ClientRanges {
    /// Bytes of physical memory kept for reuse (counted in the session's memory account).
    pub fn cached_bytes(&self) -> u64 {
        self.cached_bytes
    }
}

fn invalid(message: impl Into<String>) -> Failure {
    Failure::new(Status::INVALID_VALUE, message)
}

impl Session {
    /// `ClientRangeReserve`: the device's range, reserved on first ask; `at`: preferably at
    /// this address and at most this long (`ClientRangeReserveAt`).
    pub(super) fn client_range(&mut self, device: u32, at: Option<(u64, u64)>) -> Result<wire::ClientRange, Failure> {
        let dev = self.device(device)?;
        let info = self.backend.mem_get_info(dev)?;
        let total = info.total;
        let device_free = info.free.saturating_add(self.client_cached_bytes(dev)).min(total);
        // What the session may still take: the device's free memory within its own bound.
        let free = match self.config.limits.max_memory {
            Some(max) => device_free.min(max.saturating_sub(self.session_memory_in_use().saturating_sub(self.client_ranges.cached_bytes))),
            None => device_free,
        };
        if let Some(range) = self.client_ranges.ranges.get(&dev) {
            return Ok(wire::ClientRange { base: range.base(), len: range.len(), granularity: range.granularity, free });
        }
        // The recommended granularity (2 MiB on CUDA and the host backend): fewer units to
        // create and map, small allocations packed into shared ones.
        let granularity = self.backend.vmm_granularity(dev, true)?.max(CLIENT_ALLOC_ALIGNMENT);
        let mut len = total.saturating_mul(CLIENT_RANGE_MEMORY_FACTOR).clamp(granularity, MAX_CLIENT_RANGE_BYTES).next_multiple_of(granularity);
        if let Some((_, max_len)) = at {
            if max_len < granularity {
                return Err(invalid(format!("a client allocation range of at most {max_len} bytes is below the granularity {granularity}")));
            }
            len = len.min(max_len - max_len % granularity);
        }
        // A backend without virtual memory management refuses here: the client keeps hipMalloc.
        let base = match at {
            Some((hint, _)) => self.backend.vmm_reserve_at(len, granularity, hint)?,
            None => self.backend.vmm_reserve(len, granularity)?,
        };
        let reservation = Arc::new(Reservation { backend: Arc::clone(&self.backend), base: base.0, len });
        self.client_ranges.ranges.insert(dev, Range { reservation, granularity, units: BTreeMap::new(), retired: BTreeMap::new() });
        tracing::debug!(session = self.id, device = dev, base = base.0, len, granularity, "client allocation range reserved");
        Ok(wire::ClientRange { base: base.0, len, granularity, free })
    }

    /// Bytes of freed client allocations on `dev` kept mapped for reuse.
    pub(super) fn client_cached_bytes(&self, dev: DeviceIndex) -> u64 {
        self.client_ranges.ranges.get(&dev).map_or(0, |r| r.units.values().filter(|u| u.users == 0 && !u.exported).map(|u| u.size).sum())
    }

    /// `MallocAt`: checks the client's placement, backs it and records the allocation.
    pub(super) fn client_malloc(&mut self, req: wire::MallocAt) -> Result<(), Failure> {
        let dev = self.device(req.device)?;
        let range =
            self.client_ranges.ranges.get(&dev).ok_or_else(|| invalid(format!("no client allocation range on device {dev}: reserve one first")))?;
        let (granularity, range_end) = (range.granularity, range.base() + range.len());
        let end = req.ptr.checked_add(req.size).ok_or_else(|| invalid(format!("MallocAt {:#x}+{} overflows", req.ptr, req.size)))?;
        if req.size == 0 || req.ptr < range.base() || end > range_end {
            return Err(invalid(format!("MallocAt {:#x}+{} is not inside the client range {:#x}+{}", req.ptr, req.size, range.base(), range.len())));
        }
        if !req.ptr.is_multiple_of(CLIENT_ALLOC_ALIGNMENT) {
            return Err(invalid(format!("MallocAt {:#x} is not {CLIENT_ALLOC_ALIGNMENT}-byte aligned", req.ptr)));
        }
        let unit_base = req.ptr - req.ptr % granularity;
        let unit_size = if req.size >= granularity {
            if !req.ptr.is_multiple_of(granularity) {
                return Err(invalid(format!("MallocAt {:#x}: an allocation of a granule or more starts on a granule ({granularity})", req.ptr)));
            }
            req.size.next_multiple_of(granularity)
        } else {
            if end > unit_base + granularity {
                return Err(invalid(format!("MallocAt {:#x}+{}: an allocation under a granule may not cross one", req.ptr, req.size)));
            }
            granularity
        };
        if self.allocations.overlaps(req.ptr, req.size) {
            return Err(invalid(format!("MallocAt {:#x}+{} overlaps a live allocation", req.ptr, req.size)));
        }
        super::memory::check_malloc_flags(0, req.size)?;
        self.check_allocation_capacity(req.size)?;
        self.back_unit(dev, unit_base, unit_size)?;
        self.client_ranges.live.insert(req.ptr, (dev, unit_base));
        self.record_allocation(DevicePtr(req.ptr), req.size, dev);
        Ok(())
    }

    /// Makes `[base, base + size)` one unit with one more user: the unit that is exactly
    /// there, or a new one once the cached units in the way are gone.
    fn back_unit(&mut self, dev: DeviceIndex, base: u64, size: u64) -> Result<(), Failure> {
        let cr = &mut self.client_ranges;
        let range = cr.ranges.get_mut(&dev).expect("checked by the caller");
        if let Some(unit) = range.units.get_mut(&base).filter(|u| u.size == size) {
            if unit.users == 0 {
                cr.cached_bytes -= unit.size;
            }
            unit.users += 1;
            return Ok(());
        }
        let retired = range.retired.range(..base + size).next_back().is_some_and(|(b, len)| b + len > base);
        if retired {
            return Err(invalid(format!("MallocAt {base:#x}+{size}: the addresses were shared through IPC and are not used again")));
        }
        let first = range.units.range(..base).next_back().filter(|(b, u)| *b + u.size > base).map_or(base, |(b, _)| *b);
        let in_the_way: Vec<u64> = range.units.range(first..base + size).map(|(b, _)| *b).collect();
        if let Some(live) = in_the_way.iter().find(|b| range.units[b].users > 0) {
            return Err(invalid(format!("MallocAt {base:#x}+{size}: the granules are backed for other allocations (unit at {live:#x})")));
        }
        let reservation = Arc::clone(&range.reservation);
        for unit_base in in_the_way {
            self.drop_cached_unit(dev, unit_base);
        }
        let physical = match self.backend.vmm_create(dev, size) {
            Err(BackendError::OutOfMemory(_)) if self.client_ranges.cached_bytes > 0 => {
                // Memory pressure: the cache goes first.
                self.trim_client_cache(0);
                self.backend.vmm_create(dev, size)?
            }
            other => other?,
        };
        if let Err(e) = self.backend.vmm_map(DevicePtr(base), size, physical) {
            let _ = self.backend.vmm_release(physical);
            return Err(e.into());
        }
        // From here the backing owns the mapping and the memory.
        let backing = Arc::new(Backing { backend: Arc::clone(&self.backend), base, size, physical, _reservation: reservation });
        self.backend.vmm_set_access(DevicePtr(base), size, dev, access::READ_WRITE)?;
        // Devices this session let access `dev` reach new memory of `dev` too.
        let peers: Vec<DeviceIndex> = self.peer_access.iter().filter(|(_, owner)| *owner == dev).map(|(accessor, _)| *accessor).collect();
        for accessor in peers {
            self.backend.vmm_set_access(DevicePtr(base), size, accessor, access::READ_WRITE)?;
        }
        // New physical memory may hold what another session of this process released.
        self.backend.vmm_scrub(DevicePtr(base), size, dev)?;
        let range = self.client_ranges.ranges.get_mut(&dev).expect("checked by the caller");
        range.units.insert(base, Unit { size, backing, users: 1, released_at: 0, exported: false });
        Ok(())
    }

    /// `hipDeviceEnablePeerAccess` for client allocations: `accessor` gets read-write access
    /// to every unit backed on `owner`. They are mappings of their own (`cuMemMap`), which
    /// the context-wide peer access of the backend does not cover, as HIP's does for all of
    /// `owner`'s memory; units backed later get it in `back_unit`. Disabling does not take
    /// it back: a correct program no longer touches the peer's memory, and on the host
    /// backend access is per mapping, not per device.
    pub(super) fn grant_peer_access_to_client_units(&mut self, accessor: DeviceIndex, owner: DeviceIndex) -> Result<(), Failure> {
        let Some(range) = self.client_ranges.ranges.get(&owner) else { return Ok(()) };
        let units: Vec<(u64, u64)> = range.units.iter().map(|(base, unit)| (*base, unit.size)).collect();
        for (base, size) in units {
            self.backend.vmm_set_access(DevicePtr(base), size, accessor, access::READ_WRITE)?;
        }
        Ok(())
    }

    /// The client allocation at `ptr` is freed (taken out of the allocation table already,
    /// its work done): its unit loses a user, and is cached when that was the last.
    /// Whether `ptr` was one.
    pub(super) fn client_free(&mut self, ptr: u64) -> bool {
        let Some((dev, unit_base)) = self.client_ranges.live.remove(&ptr) else { return false };
        let cr = &mut self.client_ranges;
        cr.clock += 1;
        let clock = cr.clock;
        if let Some(range) = cr.ranges.get_mut(&dev) {
            if let Some(unit) = range.units.get_mut(&unit_base) {
                unit.users -= 1;
                if unit.users == 0 && unit.exported {
                    // Importers may still use it: its addresses are not backed again here.
                    range.retired.insert(unit_base, unit.size);
                    range.units.remove(&unit_base);
                } else if unit.users == 0 {
                    unit.released_at = clock;
                    cr.cached_bytes += unit.size;
                }
            }
        }
        self.trim_client_cache(CLIENT_ALLOC_CACHE_BYTES);
        true
    }

    /// Releases cached units, oldest first, until at most `keep` bytes are cached.
    fn trim_client_cache(&mut self, keep: u64) {
        while self.client_ranges.cached_bytes > keep {
            let oldest = self
                .client_ranges
                .ranges
                .iter()
                .flat_map(|(dev, r)| r.units.iter().filter(|(_, u)| u.users == 0).map(move |(b, u)| (u.released_at, *dev, *b)))
                .min();
            let Some((_, dev, base)) = oldest else { break };
            self.drop_cached_unit(dev, base);
        }
    }

    /// Drops the session's hold on the unused unit at `base` (unmapped and released unless
    /// an IPC importer still holds it).
    fn drop_cached_unit(&mut self, dev: DeviceIndex, base: u64) {
        let Some(unit) = self.client_ranges.ranges.get_mut(&dev).and_then(|r| r.units.remove(&base)) else { return };
        if unit.users == 0 && !unit.exported {
            self.client_ranges.cached_bytes -= unit.size;
        }
    }

    /// Frees every client allocation of `device` (all: `None`) and gives its range back
    /// (`hipDeviceReset`, the session's end). The session's work is done.
    pub(super) fn release_client_ranges(&mut self, device: Option<DeviceIndex>) {
        let devices: Vec<DeviceIndex> = self.client_ranges.ranges.keys().copied().filter(|d| device.is_none_or(|want| want == *d)).collect();
        for dev in devices {
            // Nothing queued may still use the memory when it is unmapped.
            let _ = self.synchronize_session(Some(dev));
            let ptrs: Vec<u64> = self.client_ranges.live.iter().filter(|(_, (d, _))| *d == dev).map(|(p, _)| *p).collect();
            for ptr in ptrs {
                if self.allocations.remove(ptr).is_some() {
                    self.forget_allocation(ptr);
                }
                self.client_ranges.live.remove(&ptr);
            }
            // Units go with the range (their memory with the last IPC importer, if any).
            if let Some(range) = self.client_ranges.ranges.remove(&dev) {
                let cached: u64 = range.units.values().filter(|u| u.users == 0 && !u.exported).map(|u| u.size).sum();
                self.client_ranges.cached_bytes -= cached;
            }
        }
    }

    /// The unit holding the client allocation at `base`: its first address and size.
    pub(super) fn client_unit(&self, base: u64) -> Option<(u64, u64)> {
        let &(dev, unit_base) = self.client_ranges.live.get(&base)?;
        Some((unit_base, self.client_ranges.ranges.get(&dev)?.units.get(&unit_base)?.size))
    }

    /// The allocation at `base` is shared through IPC: a hold on its unit's memory for the
    /// importers. The unit is marked so it is never cached or backed again.
    pub(super) fn client_export(&mut self, base: u64) -> Option<Arc<dyn std::any::Any + Send + Sync>> {
        let &(dev, unit_base) = self.client_ranges.live.get(&base)?;
        let unit = self.client_ranges.ranges.get_mut(&dev)?.units.get_mut(&unit_base)?;
        unit.exported = true;
        Some(Arc::clone(&unit.backing) as Arc<dyn std::any::Any + Send + Sync>)
    }
}
