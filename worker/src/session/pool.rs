//! Pool family handlers: stream-ordered memory pools (`hipMemPool*`, `hipMallocAsync`).
//!
//! Pools are session objects. Each keeps the blocks freed into it (`hipFreeAsync`) while it
//! reserves no more than its release threshold, and hands them out again to later
//! allocations in stream order: on the stream that freed the block at once, on another
//! stream behind the freeing stream's work where `hipMemPoolReuseAllowInternalDependencies`
//! allows (the backend's `stream_order_after`). Blocks come from and go back to the backend's
//! stream-ordered allocator, so the same pool works on every backend. Reserved and used bytes
//! are counted as they change; cached blocks count in the session's memory account.

use super::tables::AllocInfo;
use super::{CallCx, Failure, Session};
use crate::backend::{Backend, DeviceIndex, DevicePtr, StreamHandle};
use proto_core::opcode::PoolHandler;
use proto_core::wire;
use proto_core::Status;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

/// Pools one session may create (default pools not counted).
pub const MAX_POOLS_PER_SESSION: usize = 256;

/// Freed blocks one pool keeps for reuse; past this, freed blocks go back to the backend.
pub const MAX_CACHED_BLOCKS_PER_POOL: usize = 4096;

/// A cached block is reused for a request of at least this fraction (1/N) of its size, so a
/// small allocation does not pin a large block.
const REUSE_MIN_FRACTION: u64 = 2;

/// `hipMemPoolAttr` values.
mod attr {
    pub const REUSE_FOLLOW_EVENT_DEPENDENCIES: u32 = 1;
    pub const REUSE_ALLOW_OPPORTUNISTIC: u32 = 2;
    pub const REUSE_ALLOW_INTERNAL_DEPENDENCIES: u32 = 3;
    pub const RELEASE_THRESHOLD: u32 = 4;
    pub const RESERVED_MEM_CURRENT: u32 = 5;
    pub const RESERVED_MEM_HIGH: u32 = 6;
    pub const USED_MEM_CURRENT: u32 = 7;
    pub const USED_MEM_HIGH: u32 = 8;
}

/// `hipMemAccessFlagsProtReadWrite`, the highest access flag.
const ACCESS_READ_WRITE: u32 = 3;

/// `hipMemAccessFlagsProtNone`.
const ACCESS_NONE: u32 = 0;

/// `hipMemHandleTypePosixFileDescriptor`, the one shareable handle type.
const HANDLE_TYPE_POSIX_FD: u32 = 1;

/// The owner recorded in the allocation table for pointers imported from another session's
/// pool: not this session's memory to free to the backend (see [`ExportedBlock`]).
const IMPORTED_OWNER: u64 = u64::MAX - 1;

/// An exported pool, worker-wide: what an importing session needs to know.
#[derive(Debug, Clone)]
struct ExportedPool {
    uid: u64,
    device: DeviceIndex,
    tenant: Option<String>,
}

/// A pool block exported with `hipMemPoolExportPointer`, shared by the exporting session and
/// the sessions that imported it. Freed by the exporter while imported, it is orphaned: the
/// memory then goes back to the backend with the last importer.
struct ExportedBlock {
    backend: Arc<dyn Backend>,
    ptr: u64,
    size: u64,
    device: DeviceIndex,
    pool_uid: u64,
    tenant: Option<String>,
    orphaned: AtomicBool,
}

impl Drop for ExportedBlock {
    fn drop(&mut self) {
        if self.orphaned.load(Ordering::Acquire) {
            if let Err(e) = self.backend.free(DevicePtr(self.ptr)) {
                tracing::warn!(ptr = self.ptr, %e, "freeing an orphaned exported pool block failed");
            }
        }
        block_exports().retain(|_, weak| weak.strong_count() > 0);
    }
}

impl std::fmt::Debug for ExportedBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExportedBlock").field("ptr", &self.ptr).field("size", &self.size).finish()
    }
}

fn pool_exports() -> MutexGuard<'static, HashMap<u64, ExportedPool>> {
    static EXPORTS: OnceLock<Mutex<HashMap<u64, ExportedPool>>> = OnceLock::new();
    EXPORTS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
}

fn block_exports() -> MutexGuard<'static, HashMap<u64, Weak<ExportedBlock>>> {
    static EXPORTS: OnceLock<Mutex<HashMap<u64, Weak<ExportedBlock>>>> = OnceLock::new();
    EXPORTS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
}

/// A freed block kept for reuse.
#[derive(Debug, Clone, Copy)]
struct CachedBlock {
    ptr: u64,
    size: u64,
    /// The stream whose work may still use the block.
    freed_on: Option<StreamHandle>,
}

/// One memory pool.
#[derive(Debug)]
pub struct Pool {
    device: DeviceIndex,
    /// Most bytes the pool may reserve (0: unbounded).
    max_size: u64,
    is_default: bool,
    follow_event_dependencies: bool,
    allow_opportunistic: bool,
    allow_internal_dependencies: bool,
    release_threshold: u64,
    reserved: u64,
    reserved_high: u64,
    used: u64,
    used_high: u64,
    /// Access other devices were given (`hipMemPoolSetAccess`); the owner always has RW.
    access: HashMap<DeviceIndex, u32>,
    cached: Vec<CachedBlock>,
    /// `hipMemAllocationHandleType`s it may be exported as.
    handle_types: u32,
    /// Its worker-wide identity once exported, and the tokens naming it.
    export: Option<(u64, Vec<u64>)>,
    /// For a pool imported from another session: the exported pool's identity. Such a pool
    /// only imports pointers.
    imported_from: Option<u64>,
}

impl Pool {
    fn new(device: DeviceIndex, max_size: u64, is_default: bool) -> Self {
        Self {
            device,
            max_size,
            is_default,
            // CUDA's and HIP's defaults: every reuse policy on, threshold 0.
            follow_event_dependencies: true,
            allow_opportunistic: true,
            allow_internal_dependencies: true,
            release_threshold: 0,
            reserved: 0,
            reserved_high: 0,
            used: 0,
            used_high: 0,
            access: HashMap::new(),
            cached: Vec::new(),
            handle_types: 0,
            export: None,
            imported_from: None,
        }
    }

    fn cached_bytes(&self) -> u64 {
        self.cached.iter().map(|b| b.size).sum()
    }

    fn add_reserved(&mut self, size: u64) {
        self.reserved += size;
        self.reserved_high = self.reserved_high.max(self.reserved);
    }

    fn add_used(&mut self, size: u64) {
        self.used += size;
        self.used_high = self.used_high.max(self.used);
    }
}

/// A pool block handed out to the client.
#[derive(Debug, Clone)]
struct LiveBlock {
    pool: u64,
    /// The block's size (at least the requested size, for a reused block).
    size: u64,
    /// Set once exported (`hipMemPoolExportPointer`).
    export: Option<Arc<ExportedBlock>>,
}

/// The session's pools: handles, each device's default and current pool, and the blocks in
/// use by address.
#[derive(Debug)]
pub struct Pools {
    pub(super) pools: super::tables::Handles<Pool>,
    defaults: HashMap<DeviceIndex, u64>,
    current: HashMap<DeviceIndex, u64>,
    live: HashMap<u64, LiveBlock>,
    /// Pointers imported from other sessions' pools.
    imported: HashMap<u64, Arc<ExportedBlock>>,
}

impl Default for Pools {
    fn default() -> Self {
        // Default pools are created on first use; the table holds them too.
        Self {
            pools: super::tables::Handles::new("memory pool", 0x504f_0000_0000_0000, MAX_POOLS_PER_SESSION + 64),
            defaults: HashMap::new(),
            current: HashMap::new(),
            live: HashMap::new(),
            imported: HashMap::new(),
        }
    }
}

impl Pools {
    /// Bytes held in freed blocks kept for reuse (counted in the session's memory account).
    pub fn cached_bytes(&self) -> u64 {
        self.pools.values().map(Pool::cached_bytes).sum()
    }

    /// Whether `ptr` is a block handed out by a pool.
    pub fn owns(&self, ptr: u64) -> bool {
        self.live.contains_key(&ptr)
    }

    fn pool(&self, handle: u64) -> Result<&Pool, Failure> {
        self.pools.get(handle).map_err(|_| invalid(format!("{handle:#x} is not a memory pool of this session")))
    }

    fn pool_mut(&mut self, handle: u64) -> Result<&mut Pool, Failure> {
        self.pools.get_mut(handle).map_err(|_| invalid(format!("{handle:#x} is not a memory pool of this session")))
    }
}

fn invalid(message: impl Into<String>) -> Failure {
    Failure::new(Status::INVALID_VALUE, message)
}

impl Session {
    /// The device's default pool, created on first use.
    fn default_pool(&mut self, device: DeviceIndex) -> u64 {
        if let Some(&pool) = self.pools.defaults.get(&device) {
            return pool;
        }
        let pool = self.pools.pools.insert(Pool::new(device, 0, true));
        self.pools.defaults.insert(device, pool);
        pool
    }

    fn current_pool(&mut self, device: DeviceIndex) -> u64 {
        match self.pools.current.get(&device) {
            Some(&pool) => pool,
            None => self.default_pool(device),
        }
    }

    /// Allocates `size` bytes from `pool` in `stream` order: a cached block the stream may
    /// use, else fresh memory from the backend.
    pub(super) fn pool_allocate(&mut self, pool_handle: u64, stream_id: u64, size: u64) -> Result<(u64, DeviceIndex), Failure> {
        let pool = self.pools.pool(pool_handle)?;
        if pool.imported_from.is_some() {
            return Err(invalid("an imported pool only imports pointers (hipMemPoolImportPointer)"));
        }
        let device = pool.device;
        let stream = self.stream(stream_id, device)?;
        if size == 0 {
            return Ok((0, device));
        }
        let pool = self.pools.pool_mut(pool_handle)?;
        let reusable = pool
            .cached
            .iter()
            .enumerate()
            .filter(|(_, b)| b.size >= size && b.size / REUSE_MIN_FRACTION <= size)
            .filter(|(_, b)| b.freed_on == stream || pool.allow_internal_dependencies)
            .min_by_key(|(_, b)| b.size)
            .map(|(i, _)| i);
        let (ptr, block_size) = if let Some(i) = reusable {
            let block = pool.cached.swap_remove(i);
            if let (Some(waiter), Some(waited)) = (stream, block.freed_on) {
                if waiter != waited && self.stream_is_live(waited) {
                    // The earlier user's work must be done before the new owner's starts.
                    self.backend.stream_order_after(waiter, waited)?;
                }
            }
            (block.ptr, block.size)
        } else {
            if pool.max_size != 0 && pool.reserved.saturating_add(size) > pool.max_size {
                return Err(Failure::new(
                    Status::OUT_OF_MEMORY,
                    format!("pool {pool_handle:#x} would pass its maximum size of {} bytes", pool.max_size),
                ));
            }
            self.check_allocation_capacity(size)?;
            let ptr = self.backend.malloc_async(stream, device, size)?;
            self.pools.pool_mut(pool_handle)?.add_reserved(size);
            (ptr.0, size)
        };
        self.pools.pool_mut(pool_handle)?.add_used(block_size);
        self.pools.live.insert(ptr, LiveBlock { pool: pool_handle, size: block_size, export: None });
        self.record_allocation(DevicePtr(ptr), size, device);
        Ok((ptr, device))
    }

    /// Returns the pool block at `ptr` (already out of the allocation table) to its pool in
    /// `stream` order: kept for reuse while the pool reserves no more than its release
    /// threshold, else given back to the backend behind the stream's work.
    pub(super) fn pool_free(&mut self, ptr: u64, stream: Option<StreamHandle>) -> Result<(), Failure> {
        let Some(block) = self.pools.live.remove(&ptr) else {
            return Ok(self.backend.free_async(stream, DevicePtr(ptr))?);
        };
        if let Some(export) = block.export.as_ref().filter(|e| Arc::strong_count(e) > 1) {
            // Imported by another session: the memory leaves the pool and goes with the last
            // importer.
            export.orphaned.store(true, Ordering::Release);
            if let Ok(pool) = self.pools.pools.get_mut(block.pool) {
                pool.used -= block.size;
                pool.reserved -= block.size;
            }
            return Ok(());
        }
        let Ok(pool) = self.pools.pools.get_mut(block.pool) else {
            // Its pool was destroyed while the block was in use.
            return Ok(self.backend.free_async(stream, DevicePtr(ptr))?);
        };
        pool.used -= block.size;
        if pool.reserved <= pool.release_threshold && pool.cached.len() < MAX_CACHED_BLOCKS_PER_POOL {
            pool.cached.push(CachedBlock { ptr, size: block.size, freed_on: stream });
            return Ok(());
        }
        pool.reserved -= block.size;
        self.backend.free_async(stream, DevicePtr(ptr))?;
        Ok(())
    }

    fn stream_is_live(&self, stream: StreamHandle) -> bool {
        self.streams.values().any(|(s, _, _)| *s == stream) || self.null_streams.values().any(|s| *s == stream)
    }

    /// Frees a pointer imported from another session's pool (`hipFree`/`hipFreeAsync` in
    /// the importer): this session's work on it finishes, then the session lets go of it.
    /// False if `ptr` is no imported pointer.
    pub(super) fn free_imported_pointer(&mut self, ptr: u64) -> bool {
        if !self.pools.imported.contains_key(&ptr) {
            return false;
        }
        let _ = self.synchronize_session(None);
        self.allocations.remove(ptr);
        self.pools.imported.remove(&ptr);
        true
    }

    /// Gives cached blocks of `pool` back to the backend until it reserves at most `keep`
    /// bytes; the work that last used them is waited for first.
    fn pool_trim(&mut self, pool_handle: u64, keep: u64) -> Result<(), Failure> {
        let pool = self.pools.pool_mut(pool_handle)?;
        // Largest first: the fewest blocks released to get under `keep`.
        pool.cached.sort_by_key(|b| b.size);
        let mut released = Vec::new();
        while pool.reserved > keep {
            let Some(block) = pool.cached.pop() else { break };
            pool.reserved -= block.size;
            released.push(block);
        }
        for block in released {
            // A destroyed stream finished its work when it went.
            if let Some(stream) = block.freed_on.filter(|s| self.stream_is_live(*s)) {
                self.backend.stream_synchronize(stream)?;
            }
            self.backend.free(DevicePtr(block.ptr))?;
        }
        Ok(())
    }

    /// Frees the cached blocks of every pool on `device` (every device: `None`) and forgets
    /// those pools (session end, `hipDeviceReset`). Blocks in use are in the allocation
    /// table and freed with it. Called after the session's streams are gone.
    pub(super) fn release_pools(&mut self, device: Option<DeviceIndex>) {
        let on_device = |d: DeviceIndex| device.is_none_or(|want| want == d);
        for (_, pool) in self.pools.pools.drain_where(|p| on_device(p.device)) {
            if let Some((_, tokens)) = &pool.export {
                let mut exports = pool_exports();
                tokens.iter().for_each(|t| drop(exports.remove(t)));
            }
            for block in pool.cached {
                if let Err(e) = self.backend.free(DevicePtr(block.ptr)) {
                    tracing::warn!(session = self.id, ptr = block.ptr, %e, "freeing cached pool block during cleanup failed");
                }
            }
        }
        for (ptr, block) in self.pools.live.iter().filter(|(_, b)| b.export.as_ref().is_some_and(|e| Arc::strong_count(e) > 1)) {
            if let Some(export) = &block.export {
                if device.is_none_or(|d| d == export.device) {
                    // Still imported elsewhere: the last importer frees it, not this cleanup.
                    export.orphaned.store(true, Ordering::Release);
                    self.allocations.remove(*ptr);
                }
            }
        }
        let imported: Vec<u64> = self.pools.imported.iter().filter(|(_, b)| on_device(b.device)).map(|(p, _)| *p).collect();
        for ptr in imported {
            self.pools.imported.remove(&ptr);
            self.allocations.remove(ptr);
        }
        self.pools.defaults.retain(|d, _| !on_device(*d));
        self.pools.current.retain(|d, _| !on_device(*d));
        // Blocks in use on the device are in the allocation table, which the caller frees
        // next: the pools forget them.
        let allocations = &self.allocations;
        self.pools.live.retain(|ptr, _| allocations.get(*ptr).is_some_and(|a| !on_device(a.device)));
    }
}

impl PoolHandler for Session {
    fn pool_create(&mut self, _cx: &mut CallCx, req: wire::PoolCreate) -> Result<wire::PoolRef, Failure> {
        // ROCm answers a bad location with hipErrorInvalidValue, not hipErrorInvalidDevice.
        let device = self.device(req.device).map_err(|_| invalid(format!("pool location: device {} does not exist", req.device)))?;
        let created = self.pools.pools.values().filter(|p| !p.is_default).count();
        if created >= MAX_POOLS_PER_SESSION {
            return Err(Failure::new(Status::OUT_OF_MEMORY, format!("session holds the maximum of {MAX_POOLS_PER_SESSION} memory pools")));
        }
        if req.handle_types & !HANDLE_TYPE_POSIX_FD != 0 {
            return Err(Failure::new(Status::NOT_SUPPORTED, format!("pool handle types {:#x}: only POSIX file descriptors", req.handle_types)));
        }
        let mut pool = Pool::new(device, req.max_size, false);
        pool.handle_types = req.handle_types;
        let pool = self.pools.pools.insert(pool);
        Ok(wire::PoolRef { pool })
    }

    fn pool_destroy(&mut self, _cx: &mut CallCx, req: wire::PoolRef) -> Result<wire::Empty, Failure> {
        let pool = self.pools.pool(req.pool)?;
        if pool.is_default {
            return Err(invalid("a device's default memory pool cannot be destroyed"));
        }
        let device = pool.device;
        self.pool_trim(req.pool, 0)?;
        if let Some((_, tokens)) = self.pools.pools.remove(req.pool)?.export {
            let mut exports = pool_exports();
            tokens.iter().for_each(|t| drop(exports.remove(t)));
        }
        // The device falls back to its default pool when its current one goes.
        if self.pools.current.get(&device) == Some(&req.pool) {
            self.pools.current.remove(&device);
        }
        Ok(wire::Empty {})
    }

    fn device_get_pool(&mut self, _cx: &mut CallCx, req: wire::DevicePoolQuery) -> Result<wire::PoolRef, Failure> {
        let device = if req.default {
            self.device(req.device)?
        } else {
            // hipDeviceGetMemPool answers a bad ordinal with hipErrorInvalidValue.
            self.device(req.device).map_err(|_| invalid(format!("device {} does not exist", req.device)))?
        };
        let pool = if req.default { self.default_pool(device) } else { self.current_pool(device) };
        Ok(wire::PoolRef { pool })
    }

    fn device_set_pool(&mut self, _cx: &mut CallCx, req: wire::DeviceSetPool) -> Result<wire::Empty, Failure> {
        let device = self.device(req.device).map_err(|_| invalid(format!("device {} does not exist", req.device)))?;
        let pool = self.pools.pool(req.pool)?;
        if pool.device != device {
            return Err(Failure::new(Status::INVALID_DEVICE, format!("pool {:#x} belongs to device {}, not {device}", req.pool, pool.device)));
        }
        self.pools.current.insert(device, req.pool);
        Ok(wire::Empty {})
    }

    fn malloc_from_pool(&mut self, _cx: &mut CallCx, req: wire::MallocFromPool) -> Result<wire::AsyncAllocation, Failure> {
        // A per-thread default stream is made on first sight, here too (its device is read
        // below, before anything else names the stream).
        self.materialize_per_thread(req.stream)?;
        let pool = match req.pool {
            0 => {
                // The current pool of the stream's device (the current device for the null
                // stream), as hipMallocAsync does.
                let device = match req.stream {
                    0 => self.device(req.device)?,
                    s => self.streams.get(s)?.1,
                };
                self.current_pool(device)
            }
            pool => pool,
        };
        let pool_device = self.pools.pool(pool)?.device;
        if let Some(captured) = self.capture_mem_alloc(req.stream, pool_device, req.size)? {
            return Ok(captured);
        }
        let (ptr, device) = self.pool_allocate(pool, req.stream, req.size)?;
        Ok(wire::AsyncAllocation { ptr, device: self.client_device(device) })
    }

    fn pool_get_attribute(&mut self, _cx: &mut CallCx, req: wire::PoolAttrQuery) -> Result<wire::PoolAttrValue, Failure> {
        let pool = self.pools.pool(req.pool)?;
        let value = match req.attr {
            attr::REUSE_FOLLOW_EVENT_DEPENDENCIES => pool.follow_event_dependencies as u64,
            attr::REUSE_ALLOW_OPPORTUNISTIC => pool.allow_opportunistic as u64,
            attr::REUSE_ALLOW_INTERNAL_DEPENDENCIES => pool.allow_internal_dependencies as u64,
            attr::RELEASE_THRESHOLD => pool.release_threshold,
            attr::RESERVED_MEM_CURRENT => pool.reserved,
            attr::RESERVED_MEM_HIGH => pool.reserved_high,
            attr::USED_MEM_CURRENT => pool.used,
            attr::USED_MEM_HIGH => pool.used_high,
            other => return Err(invalid(format!("hipMemPoolAttr {other} does not exist"))),
        };
        Ok(wire::PoolAttrValue { value })
    }

    fn pool_set_attribute(&mut self, _cx: &mut CallCx, req: wire::PoolSetAttr) -> Result<wire::Empty, Failure> {
        let pool = self.pools.pool_mut(req.pool)?;
        let flag = req.value != 0;
        match req.attr {
            attr::REUSE_FOLLOW_EVENT_DEPENDENCIES => pool.follow_event_dependencies = flag,
            attr::REUSE_ALLOW_OPPORTUNISTIC => pool.allow_opportunistic = flag,
            attr::REUSE_ALLOW_INTERNAL_DEPENDENCIES => pool.allow_internal_dependencies = flag,
            attr::RELEASE_THRESHOLD => pool.release_threshold = req.value,
            // The high-water marks may only be reset, to the current value.
            attr::RESERVED_MEM_HIGH if req.value == 0 => pool.reserved_high = pool.reserved,
            attr::USED_MEM_HIGH if req.value == 0 => pool.used_high = pool.used,
            attr::RESERVED_MEM_HIGH | attr::USED_MEM_HIGH => return Err(invalid("a high-water mark can only be reset (set to 0)")),
            attr::RESERVED_MEM_CURRENT | attr::USED_MEM_CURRENT => return Err(invalid(format!("hipMemPoolAttr {} is read-only", req.attr))),
            other => return Err(invalid(format!("hipMemPoolAttr {other} does not exist"))),
        }
        Ok(wire::Empty {})
    }

    fn pool_trim_to(&mut self, _cx: &mut CallCx, req: wire::PoolTrim) -> Result<wire::Empty, Failure> {
        self.pool_trim(req.pool, req.min_bytes)?;
        Ok(wire::Empty {})
    }

    /// ROCm 7's `hipMemPoolSetAccess` for one descriptor: a device out of range and "no
    /// access" are `hipErrorInvalidDevice` (ROCm has no revocation through this call), a flag
    /// above read-write `hipErrorInvalidValue`; the pool's own device is left as it is (always
    /// read-write). A peer's read or read-write access is applied by the backend to the
    /// memory the pool hands out, and what the backend reads back is what
    /// `hipMemPoolGetAccess` answers.
    fn pool_set_access(&mut self, _cx: &mut CallCx, req: wire::PoolSetAccess) -> Result<wire::Empty, Failure> {
        let device = self.device(req.device)?;
        if req.flags == ACCESS_NONE {
            return Err(Failure::new(
                Status::INVALID_DEVICE,
                format!("hipMemAccessFlagsProtNone for device {}: access cannot be revoked", req.device),
            ));
        }
        if req.flags > ACCESS_READ_WRITE {
            return Err(invalid(format!("hipMemAccessFlags {} does not exist", req.flags)));
        }
        let pool = self.pools.pool_mut(req.pool)?;
        if device == pool.device {
            return Ok(wire::Empty {});
        }
        let owner = pool.device;
        // ROCm records a value between read and read-write (2) without granting anything.
        let applied = match crate::backend::PoolAccess::from_flags(req.flags) {
            Some(access) => {
                if !self.backend.can_access_peer(device, owner)? {
                    return Err(Failure::new(Status::INVALID_DEVICE, format!("device {device} cannot access device {owner}'s memory")));
                }
                self.backend.set_pool_access(owner, device, access)?.flags()
            }
            None => req.flags,
        };
        let pool = self.pools.pool_mut(req.pool)?;
        pool.access.insert(device, applied);
        Ok(wire::Empty {})
    }

    fn pool_get_access(&mut self, _cx: &mut CallCx, req: wire::PoolAccessQuery) -> Result<wire::AccessFlags, Failure> {
        let device = self.device(req.device).map_err(|_| invalid(format!("device {} does not exist", req.device)))?;
        let pool = self.pools.pool(req.pool)?;
        let flags = if device == pool.device { ACCESS_READ_WRITE } else { pool.access.get(&device).copied().unwrap_or(0) };
        Ok(wire::AccessFlags { flags })
    }

    fn pool_export(&mut self, _cx: &mut CallCx, req: wire::PoolExport) -> Result<wire::ShareableToken, Failure> {
        let tenant = self.tenant.clone();
        let pool = self.pools.pool_mut(req.pool)?;
        if req.handle_type != HANDLE_TYPE_POSIX_FD || pool.handle_types & HANDLE_TYPE_POSIX_FD == 0 {
            return Err(invalid("only a pool created with hipMemHandleTypePosixFileDescriptor exports, as that type"));
        }
        let uid = match &pool.export {
            Some((uid, _)) => *uid,
            None => super::vmm::random_token()?,
        };
        let token = super::vmm::random_token()?;
        pool.export.get_or_insert_with(|| (uid, Vec::new())).1.push(token);
        pool_exports().insert(token, ExportedPool { uid, device: pool.device, tenant });
        Ok(wire::ShareableToken { token })
    }

    fn pool_import(&mut self, _cx: &mut CallCx, req: wire::PoolImport) -> Result<wire::PoolRef, Failure> {
        if req.handle_type != HANDLE_TYPE_POSIX_FD {
            return Err(invalid(format!("import of handle type {} (only hipMemHandleTypePosixFileDescriptor)", req.handle_type)));
        }
        let found = pool_exports().get(&req.token).cloned();
        // Another tenant's pool is answered as a token that does not exist.
        let exported = found
            .filter(|e| e.tenant == self.tenant)
            .ok_or_else(|| invalid("the shareable handle names no exported pool this session may import"))?;
        let created = self.pools.pools.values().filter(|p| !p.is_default).count();
        if created >= MAX_POOLS_PER_SESSION {
            return Err(Failure::new(Status::OUT_OF_MEMORY, format!("session holds the maximum of {MAX_POOLS_PER_SESSION} memory pools")));
        }
        let mut pool = Pool::new(exported.device, 0, false);
        pool.imported_from = Some(exported.uid);
        Ok(wire::PoolRef { pool: self.pools.pools.insert(pool) })
    }

    fn pool_export_pointer(&mut self, _cx: &mut CallCx, req: wire::VmmAddress) -> Result<wire::ShareableToken, Failure> {
        let block =
            self.pools.live.get(&req.ptr).ok_or_else(|| invalid(format!("{:#x} is not the start of a pool allocation of this session", req.ptr)))?;
        let pool = self.pools.pool(block.pool)?;
        let Some((uid, _)) = pool.export.as_ref().filter(|_| pool.handle_types & HANDLE_TYPE_POSIX_FD != 0) else {
            return Err(invalid("the pointer's pool is not exported (hipMemPoolExportToShareableHandle first)"));
        };
        let (uid, device) = (*uid, pool.device);
        let size = self.allocations.get(req.ptr).map_or(block.size, |a| a.size);
        let export = match &block.export {
            Some(export) => Arc::clone(export),
            None => Arc::new(ExportedBlock {
                backend: Arc::clone(&self.backend),
                ptr: req.ptr,
                size,
                device,
                pool_uid: uid,
                tenant: self.tenant.clone(),
                orphaned: AtomicBool::new(false),
            }),
        };
        let token = super::vmm::random_token()?;
        block_exports().insert(token, Arc::downgrade(&export));
        if let Some(block) = self.pools.live.get_mut(&req.ptr) {
            block.export = Some(export);
        }
        Ok(wire::ShareableToken { token })
    }

    fn pool_import_pointer(&mut self, _cx: &mut CallCx, req: wire::PoolImportPointer) -> Result<wire::AsyncAllocation, Failure> {
        let pool = self.pools.pool(req.pool)?;
        let uid = pool.imported_from.ok_or_else(|| invalid("pointers import into a pool imported with hipMemPoolImportFromShareableHandle"))?;
        let found = block_exports().get(&req.token).and_then(Weak::upgrade);
        let block = found
            .filter(|b| b.tenant == self.tenant && b.pool_uid == uid && !b.orphaned.load(Ordering::Acquire))
            .ok_or_else(|| invalid("the export data names no live allocation of this pool"))?;
        let (ptr, device) = (block.ptr, block.device);
        // A block of this session's own is already in its table, as it is.
        if !self.pools.imported.contains_key(&ptr) && !self.pools.live.contains_key(&ptr) {
            self.check_allocation_capacity(0)?;
            self.allocations.insert(ptr, AllocInfo { size: block.size, device, module: Some(IMPORTED_OWNER) });
            self.pools.imported.insert(ptr, block);
        }
        Ok(wire::AsyncAllocation { ptr, device: self.client_device(device) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{HostBackend, HostConfig, MemoryBackend};
    use crate::session::SessionConfig;

    const MIB: u64 = 1 << 20;

    fn cx() -> CallCx {
        CallCx::new(1, proto_core::Opcode::Ping, false, 0)
    }

    #[test]
    fn cached_blocks_count_in_the_session_and_go_with_it() {
        let backend = Arc::new(HostBackend::new(HostConfig { devices: 1, memory_per_device: 64 * MIB, ..HostConfig::default() }));
        let full = backend.mem_get_info(0).unwrap().free;
        let mut config = SessionConfig::default();
        config.limits.max_memory = Some(2 * MIB + MIB / 2);
        let mut s = Session::new(backend.clone(), Arc::new(config));
        let pool = s.pool_create(&mut cx(), wire::PoolCreate { device: 0, max_size: 0, handle_types: 0 }).unwrap().pool;
        s.pool_set_attribute(&mut cx(), wire::PoolSetAttr { pool, attr: attr::RELEASE_THRESHOLD, value: u64::MAX }).unwrap();
        let alloc = |s: &mut Session, size| s.malloc_from_pool(&mut cx(), wire::MallocFromPool { pool, device: 0, size, stream: 0 });
        let a = alloc(&mut s, 2 * MIB).unwrap().ptr;
        proto_core::opcode::MemoryHandler::free_async(&mut s, &mut cx(), wire::FreeAsync { ptr: a, stream: 0 }).unwrap();
        // The cached 2 MiB still count: 3/4 MiB more (too small to reuse the block) would
        // pass the 2.5 MiB bound.
        assert_eq!(s.session_memory_in_use(), 2 * MIB);
        assert!(matches!(alloc(&mut s, 3 * MIB / 4), Err(Failure::Status(Status::OUT_OF_MEMORY, _))));
        // ... while the cached block itself is handed out again.
        assert_eq!(alloc(&mut s, 2 * MIB).unwrap().ptr, a);
        assert_eq!(backend.mem_get_info(0).unwrap().free, full - 2 * MIB);
        drop(s);
        assert_eq!(backend.mem_get_info(0).unwrap().free, full, "everything freed with the session");
    }
}
