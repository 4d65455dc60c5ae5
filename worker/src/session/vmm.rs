//! Vmm family handlers: virtual memory management (`hipMemAddressReserve`, `hipMemCreate`,
//! `hipMemMap`, `hipMemSetAccess`, ...) and physical allocations shared between sessions of
//! one worker (`hipMemExportToShareableHandle` / `hipMemImportFromShareableHandle`).
//!
//! The session keeps every table and checks each request against it before the backend is
//! called: a reservation, physical allocation or mapping of another session, or a range that
//! is not one, is an error reply. An accessible mapping joins the session's allocation table
//! (not freeable with `hipFree`, not counted twice), so copies, memsets and kernels to it are
//! bounds-checked like `hipMalloc` memory; an inaccessible or unmapped range is in no table
//! and every access to it is refused. Physical memory counts in the session's memory account.
//!
//! A physical allocation lives while a session holds it (a handle or a mapping): exporting
//! hands out an unguessable token (64 random bits) that a session of the same tenant may
//! import; the backend releases the memory with the last holder.

use super::tables::{AllocInfo, Handles};
use super::{CallCx, Failure, Session};
use crate::backend::vmm::{access, PhysicalHandle};
use crate::backend::{Backend, DeviceIndex, DevicePtr};
use proto_core::opcode::VmmHandler;
use proto_core::wire;
use proto_core::Status;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// Address reservations one session may hold.
pub const MAX_RESERVATIONS_PER_SESSION: usize = 1024;
/// Mappings one session may hold.
pub const MAX_MAPPINGS_PER_SESSION: usize = 16 * 1024;
/// Physical allocation handles one session may hold.
pub const MAX_PHYSICAL_PER_SESSION: usize = 16 * 1024;
/// Device address space one session may hold reserved.
pub const MAX_RESERVED_VA_PER_SESSION: u64 = 1 << 40;

/// The owner recorded in the allocation table for mapped ranges: like a module global, a
/// mapping is not freeable with `hipFree` and its bytes are counted as physical memory.
const MAPPING_OWNER: u64 = u64::MAX;

/// `hipMemHandleTypePosixFileDescriptor`, the one shareable handle type.
const HANDLE_TYPE_POSIX_FD: u32 = 1;

/// Physical memory of the backend, shared by the sessions holding it; released with the
/// last holder.
struct SharedPhysical {
    backend: Arc<dyn Backend>,
    handle: PhysicalHandle,
    device: DeviceIndex,
    size: u64,
    handle_type: u32,
    tenant: Option<String>,
}

impl Drop for SharedPhysical {
    fn drop(&mut self) {
        if let Err(e) = self.backend.vmm_release(self.handle) {
            tracing::warn!(%e, "releasing physical memory failed");
        }
        lock_exports().retain(|_, weak| weak.strong_count() > 0);
    }
}

/// Exported physical allocations by token, worker-wide.
fn exports() -> &'static Mutex<HashMap<u64, Weak<SharedPhysical>>> {
    static EXPORTS: OnceLock<Mutex<HashMap<u64, Weak<SharedPhysical>>>> = OnceLock::new();
    EXPORTS.get_or_init(Default::default)
}

fn lock_exports() -> std::sync::MutexGuard<'static, HashMap<u64, Weak<SharedPhysical>>> {
    exports().lock().unwrap_or_else(|p| p.into_inner())
}

/// A physical allocation handle of the session.
pub(super) struct PhysicalEntry {
    shared: Arc<SharedPhysical>,
    /// The client's references (create/import, retain); released ones make the handle
    /// unusable, and it goes once no mapping names it either.
    refs: u32,
    mapped: u32,
}

struct Mapping {
    size: u64,
    physical: u64,
    shared: Arc<SharedPhysical>,
    access: HashMap<DeviceIndex, u32>,
}

/// The session's VMM tables.
pub struct Vmm {
    reservations: BTreeMap<u64, u64>,
    reserved_bytes: u64,
    pub(super) physical: Handles<PhysicalEntry>,
    mappings: BTreeMap<u64, Mapping>,
}

impl Default for Vmm {
    fn default() -> Self {
        Self {
            reservations: BTreeMap::new(),
            reserved_bytes: 0,
            physical: Handles::new("physical allocation", 0x564d_0000_0000_0000, MAX_PHYSICAL_PER_SESSION),
            mappings: BTreeMap::new(),
        }
    }
}

impl std::fmt::Debug for Vmm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vmm").field("reservations", &self.reservations.len()).field("mappings", &self.mappings.len()).finish()
    }
}

impl Vmm {
    /// Bytes of physical memory the session holds (each allocation once).
    pub fn physical_bytes(&self) -> u64 {
        let mut seen = HashSet::new();
        let held = self.physical.values().map(|e| &e.shared).chain(self.mappings.values().map(|m| &m.shared));
        held.filter(|s| seen.insert(Arc::as_ptr(s))).map(|s| s.size).sum()
    }

    /// The reservation containing `[ptr, ptr + size)`.
    fn reservation_of(&self, ptr: u64, size: u64) -> Option<(u64, u64)> {
        let (&base, &len) = self.reservations.range(..=ptr).next_back()?;
        (ptr.checked_add(size)? <= base + len).then_some((base, len))
    }

    /// The mapping containing `ptr`.
    fn mapping_at(&self, ptr: u64) -> Option<(u64, &Mapping)> {
        self.mappings.range(..=ptr).next_back().filter(|(base, m)| ptr - **base < m.size).map(|(b, m)| (*b, m))
    }

    /// The bases of the mappings that exactly tile `[ptr, ptr + size)`, or `None`.
    fn tiling(&self, ptr: u64, size: u64) -> Option<Vec<u64>> {
        let end = ptr.checked_add(size)?;
        let mut at = ptr;
        let mut bases = Vec::new();
        while at < end {
            let m = self.mappings.get(&at)?;
            bases.push(at);
            at += m.size;
        }
        (at == end && !bases.is_empty()).then_some(bases)
    }

    fn entry(&self, handle: u64) -> Result<&PhysicalEntry, Failure> {
        match self.physical.get(handle) {
            Ok(e) if e.refs > 0 => Ok(e),
            _ => Err(invalid(format!("{handle:#x} is not a live physical allocation of this session"))),
        }
    }
}

/// A fresh non-zero random 64-bit value: a token another session cannot guess.
pub(super) fn random_token() -> Result<u64, Failure> {
    loop {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).map_err(|e| Failure::new(Status::UNKNOWN, format!("no randomness for a token: {e}")))?;
        let token = u64::from_le_bytes(bytes);
        if token != 0 {
            return Ok(token);
        }
    }
}

fn invalid(message: impl Into<String>) -> Failure {
    Failure::new(Status::INVALID_VALUE, message)
}

impl Session {
    fn vmm_device(&self, device: u32) -> Result<DeviceIndex, Failure> {
        // ROCm answers a bad location with hipErrorInvalidValue.
        self.device(device).map_err(|_| invalid(format!("device {device} does not exist")))
    }

    fn min_granularity(&self, device: DeviceIndex) -> Result<u64, Failure> {
        Ok(self.backend.vmm_granularity(device, false)?.max(1))
    }

    /// Drops the handle entry once it is released and unmapped.
    fn settle_physical(&mut self, handle: u64) {
        if self.vmm.physical.get(handle).is_ok_and(|e| e.refs == 0 && e.mapped == 0) {
            let _ = self.vmm.physical.remove(handle);
        }
    }

    /// Unmaps the mapping at `base` (its work is done: the caller waited).
    fn unmap_one(&mut self, base: u64) -> Result<(), Failure> {
        let Some(mapping) = self.vmm.mappings.remove(&base) else { return Ok(()) };
        if self.allocations.get(base).is_some_and(|a| a.module == Some(MAPPING_OWNER)) {
            self.allocations.remove(base);
            self.forget_allocation(base);
        }
        self.backend.vmm_unmap(DevicePtr(base), mapping.size)?;
        if let Ok(entry) = self.vmm.physical.get_mut(mapping.physical) {
            entry.mapped -= 1;
        }
        self.settle_physical(mapping.physical);
        Ok(())
    }

    /// Frees every mapping and reservation of the session and drops its physical handles
    /// (session end; its streams are gone).
    pub(super) fn release_vmm(&mut self) {
        let bases: Vec<u64> = self.vmm.mappings.keys().copied().collect();
        for base in bases {
            if let Err(Failure::Status(_, e)) = self.unmap_one(base) {
                tracing::warn!(session = self.id, base, %e, "unmapping during cleanup failed");
            }
        }
        for (base, size) in std::mem::take(&mut self.vmm.reservations) {
            if let Err(e) = self.backend.vmm_free_reservation(DevicePtr(base), size) {
                tracing::warn!(session = self.id, base, %e, "freeing a reservation during cleanup failed");
            }
        }
        self.vmm.reserved_bytes = 0;
        drop(self.vmm.physical.drain_where(|_| true));
    }

    fn add_physical(&mut self, shared: Arc<SharedPhysical>) -> Result<u64, Failure> {
        self.vmm.physical.check_capacity()?;
        Ok(self.vmm.physical.insert(PhysicalEntry { shared, refs: 1, mapped: 0 }))
    }
}

impl VmmHandler for Session {
    fn vmm_get_granularity(&mut self, _cx: &mut CallCx, req: wire::VmmGranularityQuery) -> Result<wire::VmmGranularity, Failure> {
        let device = self.vmm_device(req.device)?;
        Ok(wire::VmmGranularity { granularity: self.backend.vmm_granularity(device, req.recommended)? })
    }

    fn address_reserve(&mut self, _cx: &mut CallCx, req: wire::AddressReserve) -> Result<wire::VmmAddress, Failure> {
        let granularity = self.min_granularity(0)?;
        // ROCm: hipErrorMemoryAllocation (= hipErrorOutOfMemory) for a bad size or alignment.
        if req.size == 0 || !req.size.is_multiple_of(granularity) || (req.alignment != 0 && !req.alignment.is_power_of_two()) {
            return Err(Failure::new(
                Status::OUT_OF_MEMORY,
                format!(
                    "reservation of {} bytes aligned to {}: the size must be a non-zero multiple of {granularity}, the alignment a power of two",
                    req.size, req.alignment
                ),
            ));
        }
        if self.vmm.reservations.len() >= MAX_RESERVATIONS_PER_SESSION {
            return Err(Failure::new(Status::OUT_OF_MEMORY, format!("session holds the maximum of {MAX_RESERVATIONS_PER_SESSION} reservations")));
        }
        if self.vmm.reserved_bytes.saturating_add(req.size) > MAX_RESERVED_VA_PER_SESSION {
            return Err(Failure::new(
                Status::OUT_OF_MEMORY,
                format!("session would pass its {MAX_RESERVED_VA_PER_SESSION}-byte reserved address space"),
            ));
        }
        let ptr = self.backend.vmm_reserve(req.size, req.alignment.max(granularity))?;
        self.vmm.reservations.insert(ptr.0, req.size);
        self.vmm.reserved_bytes += req.size;
        Ok(wire::VmmAddress { ptr: ptr.0 })
    }

    fn address_free(&mut self, _cx: &mut CallCx, req: wire::VmmSpan) -> Result<wire::Empty, Failure> {
        if self.vmm.reservations.get(&req.ptr) != Some(&req.size) {
            return Err(invalid(format!("{:#x}+{} is not a reservation of this session", req.ptr, req.size)));
        }
        if self.vmm.mappings.range(req.ptr..req.ptr + req.size).next().is_some() {
            return Err(invalid("the reservation still has mappings (hipMemUnmap them first)"));
        }
        self.backend.vmm_free_reservation(DevicePtr(req.ptr), req.size)?;
        self.vmm.reservations.remove(&req.ptr);
        self.vmm.reserved_bytes -= req.size;
        Ok(wire::Empty {})
    }

    fn mem_create(&mut self, _cx: &mut CallCx, req: wire::MemCreate) -> Result<wire::PhysicalRef, Failure> {
        let device = self.vmm_device(req.device)?;
        let granularity = self.min_granularity(device)?;
        if req.size == 0 || !req.size.is_multiple_of(granularity) {
            return Err(invalid(format!("physical allocation of {} bytes: must be a non-zero multiple of {granularity}", req.size)));
        }
        if req.handle_type != 0 && req.handle_type != HANDLE_TYPE_POSIX_FD {
            return Err(Failure::new(Status::NOT_SUPPORTED, format!("hipMemAllocationHandleType {} is not supported", req.handle_type)));
        }
        self.vmm.physical.check_capacity()?;
        self.check_session_memory(req.size, "physical allocation")?;
        let handle = self.backend.vmm_create(device, req.size)?;
        let shared = Arc::new(SharedPhysical {
            backend: Arc::clone(&self.backend),
            handle,
            device,
            size: req.size,
            handle_type: req.handle_type,
            tenant: self.tenant.clone(),
        });
        Ok(wire::PhysicalRef { handle: self.add_physical(shared)? })
    }

    fn mem_release(&mut self, _cx: &mut CallCx, req: wire::PhysicalRef) -> Result<wire::Empty, Failure> {
        self.vmm.entry(req.handle)?;
        self.vmm.physical.get_mut(req.handle)?.refs -= 1;
        self.settle_physical(req.handle);
        Ok(wire::Empty {})
    }

    fn mem_map(&mut self, _cx: &mut CallCx, req: wire::MemMap) -> Result<wire::Empty, Failure> {
        let entry = self.vmm.entry(req.handle)?;
        let shared = Arc::clone(&entry.shared);
        if req.size == 0 || req.size > shared.size {
            return Err(invalid(format!("mapping of {} bytes of a {}-byte physical allocation", req.size, shared.size)));
        }
        if !req.size.is_multiple_of(self.min_granularity(shared.device)?) {
            return Err(invalid(format!("mapping size {} is not a multiple of the granularity", req.size)));
        }
        if self.vmm.reservation_of(req.ptr, req.size).is_none() {
            return Err(invalid(format!("{:#x}+{} is not inside a reservation of this session", req.ptr, req.size)));
        }
        let end = req.ptr + req.size;
        let overlaps = self.vmm.mapping_at(req.ptr).is_some() || self.vmm.mappings.range(req.ptr..end).next().is_some();
        if overlaps {
            return Err(invalid(format!("{:#x}+{} overlaps a mapping", req.ptr, req.size)));
        }
        if self.vmm.mappings.len() >= MAX_MAPPINGS_PER_SESSION {
            return Err(Failure::new(Status::OUT_OF_MEMORY, format!("session holds the maximum of {MAX_MAPPINGS_PER_SESSION} mappings")));
        }
        self.backend.vmm_map(DevicePtr(req.ptr), req.size, shared.handle)?;
        self.vmm.physical.get_mut(req.handle)?.mapped += 1;
        self.vmm.mappings.insert(req.ptr, Mapping { size: req.size, physical: req.handle, shared, access: HashMap::new() });
        Ok(wire::Empty {})
    }

    fn mem_unmap(&mut self, _cx: &mut CallCx, req: wire::VmmSpan) -> Result<wire::Empty, Failure> {
        let bases =
            self.vmm.tiling(req.ptr, req.size).ok_or_else(|| invalid(format!("{:#x}+{} is not a run of whole mappings", req.ptr, req.size)))?;
        // Work queued on the range finishes before it goes (as hipMemUnmap waits).
        let _ = self.synchronize_session(None);
        for base in bases {
            self.unmap_one(base)?;
        }
        Ok(wire::Empty {})
    }

    fn mem_set_access(&mut self, _cx: &mut CallCx, req: wire::MemSetAccess) -> Result<wire::Empty, Failure> {
        let device = self.vmm_device(req.device)?;
        if !matches!(req.flags, access::NONE | access::READ | access::READ_WRITE) {
            return Err(invalid(format!("hipMemAccessFlags {} does not exist", req.flags)));
        }
        let bases =
            self.vmm.tiling(req.ptr, req.size).ok_or_else(|| invalid(format!("{:#x}+{} is not a run of whole mappings", req.ptr, req.size)))?;
        if req.flags == access::NONE {
            // Queued work may still use the range.
            let _ = self.synchronize_session(None);
        }
        for base in bases {
            let mapping = self.vmm.mappings.get_mut(&base).ok_or_else(|| invalid("mapping vanished"))?;
            let (size, owner) = (mapping.size, mapping.shared.device);
            self.backend.vmm_set_access(DevicePtr(base), size, device, req.flags)?;
            mapping.access.insert(device, req.flags);
            let accessible = mapping.access.values().any(|&f| f != access::NONE);
            let listed = self.allocations.get(base).is_some();
            if accessible && !listed {
                self.allocations.insert(base, AllocInfo { size, device: owner, module: Some(MAPPING_OWNER) });
                self.remember_allocation(base, size);
            } else if !accessible && listed {
                self.allocations.remove(base);
                self.forget_allocation(base);
            }
        }
        Ok(wire::Empty {})
    }

    fn mem_get_access(&mut self, _cx: &mut CallCx, req: wire::MemAccessQuery) -> Result<wire::AccessFlags, Failure> {
        let device = self.vmm_device(req.device)?;
        let (_, mapping) = self.vmm.mapping_at(req.ptr).ok_or_else(|| invalid(format!("{:#x} is not in a mapping of this session", req.ptr)))?;
        Ok(wire::AccessFlags { flags: mapping.access.get(&device).copied().unwrap_or(access::NONE) })
    }

    fn mem_get_properties(&mut self, _cx: &mut CallCx, req: wire::PhysicalRef) -> Result<wire::PhysicalInfo, Failure> {
        let shared = &self.vmm.entry(req.handle)?.shared;
        Ok(wire::PhysicalInfo { device: self.client_device(shared.device), size: shared.size, handle_type: shared.handle_type })
    }

    fn mem_retain(&mut self, _cx: &mut CallCx, req: wire::VmmAddress) -> Result<wire::PhysicalRef, Failure> {
        let (_, mapping) = self.vmm.mapping_at(req.ptr).ok_or_else(|| invalid(format!("{:#x} is not in a mapping of this session", req.ptr)))?;
        let handle = mapping.physical;
        self.vmm.physical.get_mut(handle)?.refs += 1;
        Ok(wire::PhysicalRef { handle })
    }

    fn mem_export(&mut self, _cx: &mut CallCx, req: wire::MemExport) -> Result<wire::ShareableToken, Failure> {
        let shared = &self.vmm.entry(req.handle)?.shared;
        if req.handle_type != HANDLE_TYPE_POSIX_FD || shared.handle_type != HANDLE_TYPE_POSIX_FD {
            return Err(invalid(format!(
                "export as handle type {} of an allocation created for type {} (only hipMemHandleTypePosixFileDescriptor is shareable)",
                req.handle_type, shared.handle_type
            )));
        }
        let weak = Arc::downgrade(shared);
        let mut exports = lock_exports();
        let token = loop {
            let token = random_token()?;
            if !exports.contains_key(&token) {
                break token;
            }
        };
        exports.insert(token, weak);
        Ok(wire::ShareableToken { token })
    }

    fn mem_import(&mut self, _cx: &mut CallCx, req: wire::MemImport) -> Result<wire::PhysicalRef, Failure> {
        if req.handle_type != HANDLE_TYPE_POSIX_FD {
            return Err(invalid(format!("import of handle type {} (only hipMemHandleTypePosixFileDescriptor is shareable)", req.handle_type)));
        }
        let found = lock_exports().get(&req.token).and_then(Weak::upgrade);
        // Another tenant's allocation is answered as a token that does not exist.
        let shared = found
            .filter(|s| s.tenant == self.tenant)
            .ok_or_else(|| invalid("the shareable handle names no exported allocation this session may import"))?;
        self.check_session_memory(shared.size, "imported physical allocation")?;
        Ok(wire::PhysicalRef { handle: self.add_physical(shared)? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{HostBackend, HostConfig, MemoryBackend};
    use crate::session::SessionConfig;

    const MIB: u64 = 1 << 20;

    fn backend() -> Arc<HostBackend> {
        Arc::new(HostBackend::new(HostConfig { devices: 1, memory_per_device: 64 * MIB, ..HostConfig::default() }))
    }

    fn session(backend: &Arc<HostBackend>, tenant: &str, config: SessionConfig) -> Session {
        let mut session = Session::new(backend.clone(), Arc::new(config));
        session.adopt_handshake(0, "test".into(), Some(tenant.into()));
        session
    }

    fn cx() -> CallCx {
        CallCx::new(1, proto_core::Opcode::Ping, false, 0)
    }

    fn free_bytes(backend: &HostBackend) -> u64 {
        backend.mem_get_info(0).unwrap().free
    }

    /// Creates `size` bytes on device 0, mapped read-write in a fresh reservation.
    fn mapped(session: &mut Session, size: u64, handle_type: u32) -> (u64, u64) {
        let cx = &mut cx();
        let handle = session.mem_create(cx, wire::MemCreate { device: 0, size, handle_type }).unwrap().handle;
        let ptr = session.address_reserve(cx, wire::AddressReserve { size, alignment: 0, addr: 0 }).unwrap().ptr;
        session.mem_map(cx, wire::MemMap { ptr, size, handle }).unwrap();
        session.mem_set_access(cx, wire::MemSetAccess { ptr, size, device: 0, flags: access::READ_WRITE }).unwrap();
        (handle, ptr)
    }

    #[test]
    fn exported_memory_is_imported_by_the_same_tenant_only_and_outlives_its_exporter() {
        let backend = backend();
        let full = free_bytes(&backend);
        let mut a = session(&backend, "a", SessionConfig::default());
        let (handle, ptr) = mapped(&mut a, MIB, HANDLE_TYPE_POSIX_FD);
        backend.memcpy_htod_sync(None, DevicePtr(ptr), &[7u8; 64]).unwrap();
        let token = a.mem_export(&mut cx(), wire::MemExport { handle, handle_type: HANDLE_TYPE_POSIX_FD }).unwrap().token;
        let again = a.mem_export(&mut cx(), wire::MemExport { handle, handle_type: HANDLE_TYPE_POSIX_FD }).unwrap().token;
        assert_ne!(token, again, "each export gets a fresh random token");

        let mut other_tenant = session(&backend, "b", SessionConfig::default());
        let refused = other_tenant.mem_import(&mut cx(), wire::MemImport { token, handle_type: HANDLE_TYPE_POSIX_FD });
        assert!(matches!(refused, Err(Failure::Status(Status::INVALID_VALUE, _))));
        let guessed = other_tenant.mem_import(&mut cx(), wire::MemImport { token: token ^ 1, handle_type: HANDLE_TYPE_POSIX_FD });
        assert!(matches!(guessed, Err(Failure::Status(Status::INVALID_VALUE, _))));

        let mut same_tenant = session(&backend, "a", SessionConfig::default());
        let imported = same_tenant.mem_import(&mut cx(), wire::MemImport { token, handle_type: HANDLE_TYPE_POSIX_FD }).unwrap().handle;
        let ptr_b = same_tenant.address_reserve(&mut cx(), wire::AddressReserve { size: MIB, alignment: 0, addr: 0 }).unwrap().ptr;
        same_tenant.mem_map(&mut cx(), wire::MemMap { ptr: ptr_b, size: MIB, handle: imported }).unwrap();
        same_tenant.mem_set_access(&mut cx(), wire::MemSetAccess { ptr: ptr_b, size: MIB, device: 0, flags: access::READ_WRITE }).unwrap();

        // The exporter goes: the importer's mapping keeps the memory and its bytes.
        drop(a);
        assert_eq!(free_bytes(&backend), full - MIB);
        let mut seen = Vec::new();
        backend.with_device_bytes(None, DevicePtr(ptr_b), 64, &mut |b| seen.extend_from_slice(b)).unwrap();
        assert_eq!(seen, [7u8; 64]);
        drop(same_tenant);
        assert_eq!(free_bytes(&backend), full, "released with the last holder");
        // The token names nothing any more.
        let late = other_tenant.mem_import(&mut cx(), wire::MemImport { token, handle_type: HANDLE_TYPE_POSIX_FD });
        assert!(late.is_err());
    }

    #[test]
    fn ending_the_session_frees_mappings_reservations_and_memory() {
        let backend = backend();
        let full = free_bytes(&backend);
        let mut s = session(&backend, "a", SessionConfig::default());
        mapped(&mut s, 2 * MIB, 0);
        let _unmapped = s.mem_create(&mut cx(), wire::MemCreate { device: 0, size: MIB, handle_type: 0 }).unwrap();
        assert_eq!(free_bytes(&backend), full - 3 * MIB);
        assert_eq!(s.session_memory_in_use(), 3 * MIB, "physical memory counted once, mappings not again");
        drop(s);
        assert_eq!(free_bytes(&backend), full);
    }

    #[test]
    fn physical_memory_counts_against_the_session_bound() {
        let backend = backend();
        let mut config = SessionConfig::default();
        config.limits.max_memory = Some(2 * MIB);
        let mut s = session(&backend, "a", config);
        s.mem_create(&mut cx(), wire::MemCreate { device: 0, size: 2 * MIB, handle_type: 0 }).unwrap();
        let refused = s.mem_create(&mut cx(), wire::MemCreate { device: 0, size: 4096, handle_type: 0 });
        assert!(matches!(refused, Err(Failure::Status(Status::OUT_OF_MEMORY, _))));
    }
}
