//! Emulated device memory: per-device accounting, host blocks, the device address space, and
//! the backend's [`MemoryBackend`] impl.
//!
//! **Device addresses are host addresses** (identity mapping): a device pointer is the address
//! of the allocation's bytes in the worker, so a host kernel dereferences it directly. The
//! host backend trades pointer opacity for executable kernels: clients learn where the
//! worker's address space looks like, and a freed range may be handed out again by the
//! kernel as soon as it is unmapped, so a stale pointer can alias a newer allocation (the
//! session still refuses pointers that are not in its own table). Each allocation is mapped
//! on pages of its own (page-aligned, beyond the [`ALLOC_ALIGN`] `hipMalloc` guarantees, so an
//! IPC export can turn exactly its pages into shared memory, [`super::ipc`]), and is followed
//! by at least [`RED_ZONE`] bytes that belong to no allocation: an access just past the end is
//! refused instead of landing in a neighbour, and a kernel overrunning a buffer by a little
//! writes into padding rather than the worker's heap.
//!
//! Memory another session exported and this one opened (`hipIpcOpenMemHandle`) is mapped here
//! as an *imported* range: copies resolve it like an allocation, `free` refuses it, and
//! `hipIpcCloseMemHandle` unmaps it.
//!
//! Module globals (a host module's `.data`/`.bss`) are mapped here too, as *external* ranges
//! owned by their module: copies resolve them like allocations, `free` refuses them, and
//! module unload removes them.

use std::any::Any;
use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use super::stream::StreamOp;
use super::{read_lock, write_lock, HostBackend};

use crate::backend::host_region::RegionSlice;
use crate::backend::{
    BackendError, DeviceIndex, DevicePtr, DtohDone, HostData, MemInfo, MemoryBackend, MemsetPattern, Pitched, PoolAccess, Rows, StreamHandle,
};

/// Capacity granularity: usage is counted in pages, as a GPU allocator would round.
pub(super) const PAGE: u64 = 4096;
/// Alignment of every allocation (`hipMalloc` guarantees 256 bytes).
pub(super) const ALLOC_ALIGN: usize = 256;
/// Unowned bytes after every allocation (see the module documentation).
pub(super) const RED_ZONE: usize = ALLOC_ALIGN;

/// Capacity and usage of one emulated device, shared by every session.
#[derive(Debug)]
pub(super) struct DeviceMemory {
    capacity: u64,
    used: AtomicU64,
    /// The worker-wide count when sessions run in processes of their own: the table, this
    /// process's row in it (0: the worker, which only reads) and the device.
    shared: std::sync::OnceLock<(Arc<super::usage::SharedUsage>, usize, usize)>,
}

impl DeviceMemory {
    pub(super) fn new(capacity: u64) -> Self {
        Self { capacity, used: AtomicU64::new(0), shared: std::sync::OnceLock::new() }
    }

    /// Counts this device in `usage` too (row `row`, device `device`); once only.
    pub(super) fn share(&self, usage: Arc<super::usage::SharedUsage>, row: usize, device: usize) -> bool {
        self.shared.set((usage, row, device)).is_ok()
    }

    fn shared_counters(&self) -> Option<(&AtomicU64, &AtomicU64)> {
        let (usage, row, device) = self.shared.get()?;
        Some((usage.counter(0, *device)?, usage.counter(*row, *device)?))
    }

    pub(super) fn info(&self) -> MemInfo {
        let used = match self.shared_counters() {
            Some((total, _)) => total.load(Ordering::Acquire),
            None => self.used.load(Ordering::Acquire),
        };
        MemInfo { free: self.capacity.saturating_sub(used), total: self.capacity }
    }

    /// Claims `bytes` of capacity, or `None` if they are not free. Nothing is allocated here:
    /// the claim comes first, so an impossible request never reaches the host allocator.
    pub(super) fn try_reserve(self: &Arc<Self>, bytes: u64) -> Option<Reservation> {
        let claim = |counter: &AtomicU64| {
            counter.fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| used.checked_add(bytes).filter(|&total| total <= self.capacity)).is_ok()
        };
        if !claim(&self.used) {
            return None;
        }
        if let Some((total, row)) = self.shared_counters() {
            if !claim(total) {
                self.used.fetch_sub(bytes, Ordering::AcqRel);
                return None;
            }
            row.fetch_add(bytes, Ordering::AcqRel);
        }
        Some(Reservation { memory: Arc::clone(self), bytes })
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
        if let Some((total, row)) = self.memory.shared_counters() {
            // Saturating: the table is writable by every session process.
            let give_back = |c: &AtomicU64| c.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| Some(n.saturating_sub(self.bytes)));
            let _ = give_back(row);
            let _ = give_back(total);
        }
    }
}

/// Zero-filled, page-aligned host memory of `len` bytes plus the red zone, mapped on its own
/// pages (so it can be turned into shared memory for IPC without touching a neighbour, see
/// [`HostBlock::share`]), unmapped on drop. Obtained without aborting on failure.
#[derive(Debug)]
struct HostBlock {
    ptr: NonNull<u8>,
    /// Mapped bytes: the length and the red zone, rounded up to whole pages.
    mapped: usize,
    /// The memory file the pages were moved into when the block was first exported.
    shared: std::sync::Mutex<Option<Arc<OwnedFd>>>,
}

// SAFETY: `HostBlock` owns its pages like a `Box<[u8]>`; it hands out no references itself,
// and every access goes through `Region`, which synchronizes Rust-side access with the
// allocation's lock.
unsafe impl Send for HostBlock {}
// SAFETY: as above; `&HostBlock` only exposes the address.
unsafe impl Sync for HostBlock {}

impl HostBlock {
    fn alloc_zeroed(len: usize) -> Option<Self> {
        debug_assert!(len > 0, "zero-sized allocations never reach the host allocator");
        let mapped = len.checked_add(RED_ZONE)?.checked_next_multiple_of(PAGE as usize)?;
        // SAFETY: a fresh private anonymous mapping (zero-filled), placed by the kernel.
        let ptr =
            unsafe { libc::mmap(std::ptr::null_mut(), mapped, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
        if ptr == libc::MAP_FAILED {
            return None;
        }
        Some(Self { ptr: NonNull::new(ptr.cast())?, mapped, shared: std::sync::Mutex::new(None) })
    }

    /// The block's pages as a memory file another process can map: on the first call its
    /// bytes are copied into a new memory file, which is then mapped over the block's own
    /// address (same address, same contents, now shared). The caller holds the allocation's
    /// write lock, so no Rust-side access runs meanwhile.
    fn share(&self) -> std::io::Result<Arc<OwnedFd>> {
        let mut shared = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(fd) = &*shared {
            return Ok(Arc::clone(fd));
        }
        let fd = super::ipc::memory_file(self.mapped)?;
        // SAFETY: the block's pages are mapped and readable for `mapped` bytes while `self` lives.
        let bytes = unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.mapped) };
        std::fs::File::from(fd.try_clone()?).write_all_at(bytes, 0)?;
        // SAFETY: replaces exactly the block's own pages (owned by this block alone, page
        // aligned) with a shared mapping of the file holding the same bytes.
        let at = unsafe {
            libc::mmap(
                self.ptr.as_ptr().cast(),
                self.mapped,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_FIXED,
                fd.as_raw_fd(),
                0,
            )
        };
        if at == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let fd = Arc::new(fd);
        *shared = Some(Arc::clone(&fd));
        Ok(fd)
    }
}

impl Drop for HostBlock {
    fn drop(&mut self) {
        // SAFETY: `ptr` is a mapping of `mapped` bytes made by this block, unmapped only here.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.mapped) };
    }
}

/// What backs an address range.
enum Backing {
    /// Memory of `hipMalloc`, counted against its device's capacity.
    Owned { _block: HostBlock, _capacity: Reservation },
    /// A module global: bytes inside a loaded module, kept mapped by holding its owner.
    External { _owner: Arc<dyn Any + Send + Sync> },
    /// Another session's exported memory, opened with `hipIpcOpenMemHandle`.
    Imported { _mapping: super::ipc::SharedMapping },
    /// Managed or mapped host memory: pages of their own, placed where the client asked.
    Placed { _pages: super::managed::PlacedPages, _capacity: Reservation },
}

impl std::fmt::Debug for Backing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Owned { .. } => "Owned",
            Self::External { .. } => "External",
            Self::Imported { .. } => "Imported",
            Self::Placed { .. } => "Placed",
        })
    }
}

/// One live (or freed but still referenced) address range.
///
/// Rust-side accesses (copies, memsets, the transport's zero-copy access) take `lock`
/// before touching the bytes, so concurrent streams racing on one buffer stay orderly here.
/// Kernels access the bytes directly, without the lock, as a GPU would: a kernel racing with
/// a copy of the same bytes on another stream is a data race of the client's making (the
/// worker keeps none of its own state in device memory). Queued operations hold an `Arc`, so
/// `free` only unmaps the address; the bytes and the capacity go back when the last queued
/// user is done.
#[derive(Debug)]
pub(super) struct Allocation {
    base: u64,
    size: u64,
    device: DeviceIndex,
    lock: RwLock<()>,
    backing: Backing,
}

impl Allocation {
    fn is_external(&self) -> bool {
        matches!(self.backing, Backing::External { .. })
    }

    fn is_imported(&self) -> bool {
        matches!(self.backing, Backing::Imported { .. })
    }

    fn end(&self) -> u64 {
        self.base + self.size
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

    /// First byte of the region. Valid for `len` bytes while `self` lives.
    fn start(&self) -> *mut u8 {
        (self.allocation.base as usize + self.offset) as *mut u8
    }

    /// Lets `f` read the region's bytes under the allocation's read lock.
    pub(super) fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        let _guard = read_lock(&self.allocation.lock);
        // SAFETY: the range lies inside the allocation (checked by `resolve`), whose bytes
        // stay mapped while `self.allocation` is held; Rust-side writers hold the write lock,
        // so none runs meanwhile (kernels: see `Allocation`).
        let bytes = unsafe { std::slice::from_raw_parts(self.start(), self.len) };
        f(bytes)
    }

    /// Lets `f` write the region's bytes under the allocation's write lock.
    pub(super) fn with_bytes_mut<R>(&self, f: impl FnOnce(&mut [u8]) -> R) -> R {
        let _guard = write_lock(&self.allocation.lock);
        // SAFETY: as in `with_bytes`; the write lock excludes every other Rust-side access.
        let bytes = unsafe { std::slice::from_raw_parts_mut(self.start(), self.len) };
        f(bytes)
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
        out.try_reserve_exact(self.len).map_err(|e| BackendError::OutOfMemory(format!("host buffer of {} bytes: {e}", self.len)))?;
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
            let _guard = write_lock(&dst.allocation.lock);
            // SAFETY: both ranges lie inside the one allocation, held alive by `dst`;
            // `ptr::copy` allows overlap; the write lock excludes Rust-side accesses.
            unsafe { std::ptr::copy(src.start(), dst.start(), dst.len) };
            return;
        }
        let copy = || {
            // SAFETY: distinct live allocations never overlap (`AddressSpace` refuses
            // overlapping ranges), both ranges are in bounds, and both locks are held.
            unsafe { std::ptr::copy_nonoverlapping(src.start(), dst.start(), dst.len) };
        };
        if dst.allocation.base < src.allocation.base {
            let _to = write_lock(&dst.allocation.lock);
            let _from = read_lock(&src.allocation.lock);
            copy();
        } else {
            let _from = read_lock(&src.allocation.lock);
            let _to = write_lock(&dst.allocation.lock);
            copy();
        }
    }
}

/// Rows inside a [`Region`]: `height` rows of `width` bytes whose starts are `pitch` bytes
/// apart from the region's start (the region spans exactly the rows).
#[derive(Debug, Clone, Copy)]
pub(super) struct RowLayout {
    pub(super) pitch: usize,
    pub(super) width: usize,
    pub(super) height: usize,
}

impl RowLayout {
    fn offsets(self) -> impl Iterator<Item = usize> {
        (0..self.height).map(move |row| row * self.pitch)
    }
}

impl Region {
    /// Scatters `packed` (whole rows of `rows.width` bytes) to the region's rows.
    pub(super) fn write_rows(&self, rows: RowLayout, packed: &[u8]) {
        self.with_bytes_mut(|dst| {
            for (offset, row) in rows.offsets().zip(packed.chunks_exact(rows.width)) {
                dst[offset..offset + rows.width].copy_from_slice(row);
            }
        });
    }

    /// Gathers the region's rows, packed, into a new buffer.
    pub(super) fn read_rows(&self, rows: RowLayout) -> Result<Vec<u8>, BackendError> {
        let len = rows.width * rows.height;
        let mut out = Vec::new();
        out.try_reserve_exact(len).map_err(|e| BackendError::OutOfMemory(format!("host buffer of {len} bytes: {e}")))?;
        self.with_bytes(|src| {
            for offset in rows.offsets() {
                out.extend_from_slice(&src[offset..offset + rows.width]);
            }
        });
        Ok(out)
    }

    /// Copies the rows of `src` to the rows of `dst`, one row after the other (`memmove`
    /// per row inside one allocation). Locks as [`Region::copy`] does.
    pub(super) fn copy_rows(dst: &Region, dst_pitch: usize, src: &Region, src_pitch: usize, width: usize, height: usize) {
        let copy = |overlap_possible: bool| {
            for row in 0..height {
                let (d, s) = (row * dst_pitch, row * src_pitch);
                debug_assert!(d + width <= dst.len && s + width <= src.len);
                // SAFETY: each row lies inside its region (the regions span the rows), both
                // allocations are alive (held by the regions) and locked by the caller;
                // `ptr::copy` is used where the two may be the same allocation.
                unsafe {
                    if overlap_possible {
                        std::ptr::copy(src.start().add(s), dst.start().add(d), width);
                    } else {
                        std::ptr::copy_nonoverlapping(src.start().add(s), dst.start().add(d), width);
                    }
                }
            }
        };
        if Arc::ptr_eq(&dst.allocation, &src.allocation) {
            let _guard = write_lock(&dst.allocation.lock);
            copy(true);
        } else if dst.allocation.base < src.allocation.base {
            let _to = write_lock(&dst.allocation.lock);
            let _from = read_lock(&src.allocation.lock);
            copy(false);
        } else {
            let _from = read_lock(&src.allocation.lock);
            let _to = write_lock(&dst.allocation.lock);
            copy(false);
        }
    }
}

/// The device address space shared by all devices (unified addressing: an address names its
/// device), keyed by host address.
#[derive(Debug)]
pub(super) struct AddressSpace {
    live: RwLock<BTreeMap<u64, Arc<Allocation>>>,
}

/// Whether `[base, base + size)` overlaps a live range of `live`.
fn overlaps(live: &BTreeMap<u64, Arc<Allocation>>, base: u64, size: u64) -> bool {
    let end = base.saturating_add(size);
    // Live ranges do not overlap, so only the last one starting below `end` can reach into
    // `base..end`.
    live.range(..end).next_back().is_some_and(|(_, a)| a.end() > base)
}

impl AddressSpace {
    pub(super) fn new() -> Self {
        Self { live: RwLock::new(BTreeMap::new()) }
    }

    /// Allocates `size` bytes of host memory against `capacity` and maps them on `device` at
    /// their own address.
    pub(super) fn map(&self, device: DeviceIndex, size: u64, capacity: Reservation) -> Result<DevicePtr, BackendError> {
        let len = usize::try_from(size).map_err(|_| BackendError::OutOfMemory(format!("{size} bytes exceed the host address space")))?;
        let block = HostBlock::alloc_zeroed(len).ok_or_else(|| BackendError::OutOfMemory(format!("host allocator refused {size} bytes")))?;
        let base = block.ptr.as_ptr() as u64;
        let allocation =
            Arc::new(Allocation { base, size, device, lock: RwLock::new(()), backing: Backing::Owned { _block: block, _capacity: capacity } });
        // A fresh block from the allocator cannot overlap a live one; module globals lie in
        // module images, never in the heap.
        write_lock(&self.live).insert(base, allocation);
        Ok(DevicePtr(base))
    }

    /// Maps `pages` (managed or mapped host memory, counted in `capacity`) at their own
    /// address. Refused when they overlap a live range.
    pub(super) fn map_placed(
        &self,
        device: DeviceIndex,
        pages: super::managed::PlacedPages,
        capacity: Reservation,
    ) -> Result<DevicePtr, BackendError> {
        let (base, size) = (pages.addr(), pages.len() as u64);
        let mut live = write_lock(&self.live);
        if overlaps(&live, base, size) {
            return Err(BackendError::InvalidValue(format!("placed range {base:#x}+{size} overlaps live device memory")));
        }
        let backing = Backing::Placed { _pages: pages, _capacity: capacity };
        live.insert(base, Arc::new(Allocation { base, size, device, lock: RwLock::new(()), backing }));
        Ok(DevicePtr(base))
    }

    /// Maps `size` bytes at `base` that belong to `owner` (a module global). Refused when the
    /// range is empty, wraps, or overlaps a live range.
    pub(super) fn map_external(
        &self,
        device: DeviceIndex,
        base: u64,
        size: u64,
        owner: Arc<dyn Any + Send + Sync>,
    ) -> Result<DevicePtr, BackendError> {
        if base == 0 || size == 0 || base.checked_add(size).is_none() {
            return Err(BackendError::InvalidValue(format!("external range {:#x}+{size} is empty or wraps", base)));
        }
        if usize::try_from(size).is_err() {
            return Err(BackendError::InvalidValue(format!("external range of {size} bytes exceeds the host address space")));
        }
        let mut live = write_lock(&self.live);
        if overlaps(&live, base, size) {
            return Err(BackendError::InvalidValue(format!("external range {:#x}+{size} overlaps live device memory", base)));
        }
        live.insert(base, Arc::new(Allocation { base, size, device, lock: RwLock::new(()), backing: Backing::External { _owner: owner } }));
        Ok(DevicePtr(base))
    }

    /// Unmaps the allocation starting at `ptr` and returns it; its memory goes once no queued
    /// work holds it. External ranges are refused (see [`Self::unmap_external`]).
    pub(super) fn unmap(&self, ptr: DevicePtr) -> Result<Arc<Allocation>, BackendError> {
        let mut live = write_lock(&self.live);
        match live.get(&ptr.0) {
            Some(a) if a.is_external() => Err(BackendError::InvalidValue(format!("{ptr} is a module global, which cannot be freed"))),
            Some(a) if a.is_imported() => Err(BackendError::InvalidValue(format!("{ptr} is IPC memory: close it with hipIpcCloseMemHandle"))),
            Some(_) => Ok(live.remove(&ptr.0).expect("present")),
            None => Err(BackendError::InvalidValue(format!("{ptr} is not the start of a live allocation"))),
        }
    }

    /// Makes the allocation starting at `base` shareable: its memory file and mapped length.
    pub(super) fn share(&self, base: DevicePtr) -> Result<(Arc<OwnedFd>, u64), BackendError> {
        let live = read_lock(&self.live);
        let allocation =
            live.get(&base.0).ok_or_else(|| BackendError::InvalidDevicePointer(format!("{base} is not the start of a live allocation")))?;
        let Backing::Owned { _block: block, .. } = &allocation.backing else {
            return Err(BackendError::InvalidValue(format!("{base} is not memory of this session's own allocation")));
        };
        let _guard = write_lock(&allocation.lock);
        let fd = block.share().map_err(|e| BackendError::OutOfMemory(format!("cannot share {base}: {e}")))?;
        Ok((fd, block.mapped as u64))
    }

    /// Maps another session's exported memory (`size` bytes of the allocation) on `device`.
    pub(super) fn map_imported(&self, device: DeviceIndex, size: u64, mapping: super::ipc::SharedMapping) -> DevicePtr {
        let base = mapping.address();
        // A fresh mapping placed by the kernel cannot overlap a live range.
        let allocation = Allocation { base, size, device, lock: RwLock::new(()), backing: Backing::Imported { _mapping: mapping } };
        write_lock(&self.live).insert(base, Arc::new(allocation));
        DevicePtr(base)
    }

    /// Unmaps the imported range starting at `ptr` (`hipIpcCloseMemHandle`).
    pub(super) fn unmap_imported(&self, ptr: DevicePtr) -> Option<Arc<Allocation>> {
        let mut live = write_lock(&self.live);
        if live.get(&ptr.0).is_some_and(|a| a.is_imported()) {
            live.remove(&ptr.0)
        } else {
            None
        }
    }

    /// Unmaps the external range starting at `ptr` (module unload).
    pub(super) fn unmap_external(&self, ptr: DevicePtr) -> Option<Arc<Allocation>> {
        let mut live = write_lock(&self.live);
        if live.get(&ptr.0).is_some_and(|a| a.is_external()) {
            live.remove(&ptr.0)
        } else {
            None
        }
    }

    /// The allocation containing `ptr` and `len` bytes from there.
    ///
    /// An address in no allocation is `InvalidDevicePointer`; a range starting inside one but
    /// running past its end is `InvalidValue`. An empty range may sit at the very end.
    pub(super) fn resolve(&self, ptr: DevicePtr, len: u64) -> Result<Region, BackendError> {
        let live = read_lock(&self.live);
        let allocation = live
            .range(..=ptr.0)
            .next_back()
            .map(|(_, allocation)| allocation)
            .filter(|a| ptr.0 - a.base < a.size || (len == 0 && ptr.0 - a.base == a.size))
            .ok_or_else(|| BackendError::InvalidDevicePointer(format!("{ptr} is not in a live allocation")))?;
        let offset = ptr.0 - allocation.base;
        if len > allocation.size - offset {
            return Err(BackendError::InvalidValue(format!(
                "{len} bytes at {ptr} run past the end of the {}-byte allocation at {}",
                allocation.size,
                DevicePtr(allocation.base)
            )));
        }
        // Both fit in usize: the allocation's size did when it was mapped.
        Ok(Region { allocation: Arc::clone(allocation), offset: offset as usize, len: len as usize })
    }
}

impl HostBackend {
    /// Claims `size` bytes (rounded up to pages) of device `dev`'s capacity.
    pub(super) fn reserve_capacity(&self, dev: DeviceIndex, size: u64) -> Result<Reservation, BackendError> {
        let device = self.device(dev)?;
        let out_of_memory = || {
            let MemInfo { free, total } = device.memory.info();
            BackendError::OutOfMemory(format!("{size} bytes requested on device {dev}, {free} of {total} free"))
        };
        let footprint = size.checked_next_multiple_of(PAGE).ok_or_else(out_of_memory)?;
        device.memory.try_reserve(footprint).ok_or_else(out_of_memory)
    }
}

impl MemoryBackend for HostBackend {
    fn mem_get_info(&self, dev: DeviceIndex) -> Result<MemInfo, BackendError> {
        Ok(self.device(dev)?.memory.info())
    }

    fn malloc(&self, dev: DeviceIndex, size: u64) -> Result<DevicePtr, BackendError> {
        let device = self.device(dev)?;
        self.injected.on_malloc(dev, size)?;
        if size == 0 {
            return Ok(DevicePtr::NULL);
        }
        let out_of_memory = || {
            let MemInfo { free, total } = device.memory.info();
            BackendError::OutOfMemory(format!("{size} bytes requested on device {dev}, {free} of {total} free"))
        };
        let footprint = size.checked_next_multiple_of(PAGE).ok_or_else(out_of_memory)?;
        let capacity = device.memory.try_reserve(footprint).ok_or_else(out_of_memory)?;
        self.address_space.map(dev, size, capacity)
    }

    fn free(&self, ptr: DevicePtr) -> Result<(), BackendError> {
        if ptr.is_null() {
            return Ok(());
        }
        let allocation = self.address_space.unmap(ptr)?;
        self.kernels_in_flight.retire(Box::new(allocation));
        Ok(())
    }

    fn memcpy_htod(&self, stream: Option<StreamHandle>, dst: DevicePtr, data: HostData) -> Result<(), BackendError> {
        let dst = self.resolve(dst, data.len() as u64)?;
        self.enqueue(stream, &[dst.device()], StreamOp::CopyHtoD { dst, data })
    }

    fn memcpy_htod_sync(&self, stream: Option<StreamHandle>, dst: DevicePtr, data: &[u8]) -> Result<(), BackendError> {
        let dst = self.resolve(dst, data.len() as u64)?;
        self.wait_for_stream(stream, &[dst.device()])?;
        dst.write(data);
        Ok(())
    }

    fn with_device_bytes_mut(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        len: u64,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), BackendError> {
        let dst = self.resolve(dst, len)?;
        self.wait_for_stream(stream, &[dst.device()])?;
        dst.with_bytes_mut(fill);
        Ok(())
    }

    fn memcpy_dtoh(&self, stream: Option<StreamHandle>, src: DevicePtr, len: u64, done: DtohDone) -> Result<(), BackendError> {
        let src = self.resolve(src, len)?;
        self.enqueue(stream, &[src.device()], StreamOp::CopyDtoH { src, done })
    }

    fn memcpy_dtoh_sync(&self, stream: Option<StreamHandle>, src: DevicePtr, out: &mut [u8]) -> Result<(), BackendError> {
        let src = self.resolve(src, out.len() as u64)?;
        self.wait_for_stream(stream, &[src.device()])?;
        src.read_into(out);
        Ok(())
    }

    /// After the stream, straight from device memory into the region: no buffer, nothing
    /// queued.
    fn memcpy_dtoh_registered_sync(&self, stream: Option<StreamHandle>, src: DevicePtr, dst: &RegionSlice) -> Result<(), BackendError> {
        let src = self.resolve(src, dst.len() as u64)?;
        self.wait_for_stream(stream, &[src.device()])?;
        src.with_bytes(|bytes| dst.write(bytes));
        Ok(())
    }

    fn with_device_bytes(&self, stream: Option<StreamHandle>, src: DevicePtr, len: u64, read: &mut dyn FnMut(&[u8])) -> Result<(), BackendError> {
        let src = self.resolve(src, len)?;
        self.wait_for_stream(stream, &[src.device()])?;
        src.with_bytes(read);
        Ok(())
    }

    fn memcpy_dtod(&self, stream: Option<StreamHandle>, dst: DevicePtr, src: DevicePtr, len: u64) -> Result<(), BackendError> {
        let dst = self.resolve(dst, len)?;
        let src = self.resolve(src, len)?;
        let devices = [dst.device(), src.device()];
        self.enqueue(stream, &devices, StreamOp::CopyDtoD { dst, src })
    }

    fn memset(&self, stream: Option<StreamHandle>, dst: DevicePtr, pattern: MemsetPattern, count: u64) -> Result<(), BackendError> {
        let len = pattern.byte_len(count).ok_or_else(|| BackendError::InvalidValue(format!("memset of {count} elements overflows")))?;
        let dst = self.resolve(dst, len)?;
        self.enqueue(stream, &[dst.device()], StreamOp::Memset { dst, pattern })
    }

    fn memcpy_htod_2d(&self, stream: Option<StreamHandle>, dst: Pitched, width: u64, data: HostData) -> Result<(), BackendError> {
        let (region, rows) = self.resolve_rows(dst, width, data.len() as u64 / width.max(1))?;
        let devices = [region.device()];
        self.enqueue(stream, &devices, StreamOp::CopyHtoD2D { dst: region, rows, data })
    }

    fn memcpy_dtoh_2d(&self, stream: Option<StreamHandle>, src: Pitched, rows: Rows, done: DtohDone) -> Result<(), BackendError> {
        let (region, rows) = self.resolve_rows(src, rows.width, rows.height)?;
        let devices = [region.device()];
        self.enqueue(stream, &devices, StreamOp::CopyDtoH2D { src: region, rows, done })
    }

    fn memcpy_dtod_2d(&self, stream: Option<StreamHandle>, dst: Pitched, src: Pitched, rows: Rows) -> Result<(), BackendError> {
        let (dst_region, dst_rows) = self.resolve_rows(dst, rows.width, rows.height)?;
        let (src_region, src_rows) = self.resolve_rows(src, rows.width, rows.height)?;
        let devices = [dst_region.device(), src_region.device()];
        let op = StreamOp::CopyDtoD2D {
            dst: dst_region,
            dst_pitch: dst_rows.pitch,
            src: src_region,
            src_pitch: src_rows.pitch,
            width: dst_rows.width,
            height: dst_rows.height,
        };
        self.enqueue(stream, &devices, op)
    }

    fn memcpy_peer(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        dst_dev: DeviceIndex,
        src: DevicePtr,
        src_dev: DeviceIndex,
        len: u64,
    ) -> Result<(), BackendError> {
        // One address space holds every emulated device: a peer copy is a plain copy.
        self.device(dst_dev)?;
        self.device(src_dev)?;
        self.memcpy_dtod(stream, dst, src, len)
    }

    fn malloc_async(&self, stream: Option<StreamHandle>, dev: DeviceIndex, size: u64) -> Result<DevicePtr, BackendError> {
        if let Some(handle) = stream {
            self.stream(handle)?;
        }
        // Allocating now is a valid stream order: the memory exists before any later work.
        self.malloc(dev, size)
    }

    fn free_async(&self, stream: Option<StreamHandle>, ptr: DevicePtr) -> Result<(), BackendError> {
        if let Some(handle) = stream {
            self.stream(handle)?;
        }
        // Unmapping now refuses new work on the address; operations already queued hold
        // their regions (and launches their allocations, through `kernels_in_flight`), so
        // the bytes are released only after the stream's earlier work.
        self.free(ptr)
    }

    fn set_pool_access(&self, owner: DeviceIndex, peer: DeviceIndex, access: PoolAccess) -> Result<PoolAccess, BackendError> {
        self.device(owner)?;
        self.device(peer)?;
        if owner == peer {
            return Err(BackendError::InvalidDevice(format!("device {owner}'s own pool memory needs no access grant")));
        }
        // One address space: every emulated device already reaches the memory, so the access
        // asked for is the access in effect.
        Ok(access)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(space: &AddressSpace, memory: &Arc<DeviceMemory>, size: u64) -> DevicePtr {
        let footprint = size.next_multiple_of(PAGE);
        space.map(0, size, memory.try_reserve(footprint).unwrap()).unwrap()
    }

    #[test]
    fn reservation_is_checked_and_returned() {
        let memory = Arc::new(DeviceMemory::new(3 * PAGE));
        let first = memory.try_reserve(2 * PAGE).unwrap();
        assert!(memory.try_reserve(2 * PAGE).is_none());
        assert!(memory.try_reserve(u64::MAX).is_none());
        assert_eq!(memory.info(), MemInfo { free: PAGE, total: 3 * PAGE });
        drop(first);
        assert_eq!(memory.info().free, 3 * PAGE);
    }

    #[test]
    fn device_pointers_are_host_addresses() {
        let space = AddressSpace::new();
        let memory = Arc::new(DeviceMemory::new(1 << 20));
        let a = map(&space, &memory, 10);
        let b = map(&space, &memory, PAGE);
        for ptr in [a, b] {
            assert_eq!(ptr.0 % ALLOC_ALIGN as u64, 0);
        }
        // A write through the raw address is what the region reads back, and vice versa.
        // SAFETY: `a` is a live 10-byte allocation and no region of it is in use.
        unsafe { std::ptr::write_bytes(a.0 as *mut u8, 0x5a, 10) };
        assert_eq!(space.resolve(a, 10).unwrap().read_to_vec().unwrap(), [0x5a; 10]);
        space.resolve(b, 4).unwrap().write(&[1, 2, 3, 4]);
        // SAFETY: `b` is live and at least 4 bytes long.
        let seen = unsafe { std::slice::from_raw_parts(b.0 as *const u8, 4) };
        assert_eq!(seen, [1, 2, 3, 4]);
        // The red zone belongs to nobody.
        let err = space.resolve(DevicePtr(a.0 + 10), 1).unwrap_err();
        assert!(matches!(err, BackendError::InvalidDevicePointer(_)));
    }

    #[test]
    fn freed_bytes_outlive_queued_regions() {
        let space = AddressSpace::new();
        let memory = Arc::new(DeviceMemory::new(1 << 20));
        let a = map(&space, &memory, 64);
        let region = space.resolve(a, 64).unwrap();
        let unmapped = space.unmap(a).unwrap();
        drop(unmapped);
        assert!(space.resolve(a, 1).is_err());
        assert_eq!(memory.info().free, (1 << 20) - PAGE, "still held by the region");
        region.fill(MemsetPattern::U8(7));
        assert_eq!(region.read_to_vec().unwrap(), [7; 64]);
        drop(region);
        assert_eq!(memory.info().free, 1 << 20);
    }

    #[test]
    fn external_ranges_are_mapped_but_not_freeable() {
        let space = AddressSpace::new();
        let memory = Arc::new(DeviceMemory::new(1 << 20));
        let owned = map(&space, &memory, 128);
        let backing: Arc<Vec<u8>> = Arc::new(vec![0u8; 32]);
        let base = backing.as_ptr() as u64;
        let owner: Arc<dyn Any + Send + Sync> = backing.clone();
        let global = space.map_external(0, base, 32, Arc::clone(&owner)).unwrap();
        space.resolve(global, 32).unwrap().write(&[9; 32]);
        assert_eq!(backing[..], [9; 32]);
        assert!(matches!(space.unmap(global), Err(BackendError::InvalidValue(_))));
        // Overlaps, empty and wrapping ranges are refused.
        for (b, s) in [(base + 8, 8), (base, 0), (u64::MAX - 4, 8), (owned.0 + 64, 8)] {
            assert!(space.map_external(0, b, s, Arc::clone(&owner)).is_err(), "{b:#x}+{s}");
        }
        assert!(space.unmap_external(owned).is_none(), "only external ranges");
        assert!(space.unmap_external(global).is_some());
        assert!(space.resolve(global, 1).is_err());
    }

    #[test]
    fn resolve_checks_bounds() {
        let space = AddressSpace::new();
        let memory = Arc::new(DeviceMemory::new(1 << 20));
        let a = map(&space, &memory, 100);
        assert_eq!(space.resolve(a, 100).unwrap().read_to_vec().unwrap(), [0; 100]);
        assert!(space.resolve(DevicePtr(a.0 + 100), 0).unwrap().read_to_vec().unwrap().is_empty());
        assert!(matches!(space.resolve(DevicePtr(a.0 + 50), 51), Err(BackendError::InvalidValue(_))));
        assert!(matches!(space.resolve(DevicePtr(a.0 + 100), 1), Err(BackendError::InvalidDevicePointer(_))));
        assert!(matches!(space.resolve(DevicePtr(a.0 - 1), 1), Err(BackendError::InvalidDevicePointer(_))));
        assert!(matches!(space.resolve(DevicePtr(a.0), u64::MAX), Err(BackendError::InvalidValue(_))));
    }

    #[test]
    fn overlapping_copy_is_memmove() {
        let space = AddressSpace::new();
        let memory = Arc::new(DeviceMemory::new(1 << 20));
        let a = map(&space, &memory, 8);
        space.resolve(a, 8).unwrap().write(&[0, 1, 2, 3, 4, 5, 6, 7]);
        let dst = space.resolve(DevicePtr(a.0 + 2), 5).unwrap();
        let src = space.resolve(a, 5).unwrap();
        Region::copy(&dst, &src);
        let mut out = [0u8; 8];
        space.resolve(a, 8).unwrap().read_into(&mut out);
        assert_eq!(out, [0, 1, 0, 1, 2, 3, 4, 7]);
    }
}
