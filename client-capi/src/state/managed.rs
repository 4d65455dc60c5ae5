//! The client's half of the coherence engine for managed memory (`hipMallocManaged`) and
//! device-visible host memory (`hipHostRegister`, `hipHostMalloc(hipHostMallocMapped)`); the
//! semantics and their limits are in docs/MANAGED_MEMORY.md.
//!
//! Each mirrored range is host memory the CPU uses as ordinary memory, with a device twin on
//! the worker. Both sides keep the hash of every [`MANAGED_PAGE`] as they last agreed on it.
//! Dirty pages are found by comparing hashes (no page protection: no fault handler that could
//! need the connection lock its thread holds, no `EFAULT` from `read()`/`write()` into
//! protected pages, and the same code on every platform):
//! - before a request whose worker-side work reads or writes device memory (copies, memsets,
//!   launches, prefetches: [`before_request`]), the pages whose contents changed are pushed,
//!   batched into frames of up to [`MAX_PAGES_PER_FRAME`] pages;
//! - after a synchronisation ([`after_sync`]) that may have let device work finish, the
//!   worker answers the device pages that changed since the client last saw them.
//!
//! Lock order: the connection lock, then this engine's lock, never the reverse.

use crate::abi::HipError;
use crate::conn::Conn;
use client_core::CallError;
use proto_core::wire::{self, page_hash, MANAGED_PAGE, MAX_PAGES_PER_FRAME};
use proto_core::{calls, Bulk, Caller, Calls, Family, List, Opcode};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use zerocopy::byteorder::little_endian::U32;

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
    pub read_mostly: bool,
    pub coarse_grain: bool,
    /// `hipInvalidDeviceId` (-2) when unset; `hipCpuDeviceId` (-1) for the host.
    pub preferred_location: i32,
    pub last_prefetch: i32,
    /// Bit `d + 1` for device `d`, bit 0 for the CPU.
    pub accessed_by: u64,
}

impl Default for PageAdvice {
    fn default() -> Self {
        Self { read_mostly: false, coarse_grain: false, preferred_location: -2, last_prefetch: -2, accessed_by: 0 }
    }
}

/// One mirrored range: `len` bytes from `base` in this process, twin at `device_base`.
/// Only `[owned_start, owned_end)` is the application's (registered memory need not be
/// page-aligned): bytes of the first and last page outside it are never written here and
/// travel as zeros.
#[derive(Debug)]
pub struct Mirror {
    pub kind: MirrorKind,
    pub base: usize,
    pub len: usize,
    pub owned_start: usize,
    pub owned_end: usize,
    pub device_base: u64,
    pub device: u32,
    /// `hipMallocManaged`/`hipHostRegister`/`hipHostMalloc` flags.
    pub flags: u32,
    /// `hipStreamAttachMemAsync`: the stream and flags last attached.
    pub attached: Option<(u64, u32)>,
    hashes: Vec<u64>,
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

    pub fn pages(&self) -> usize {
        self.hashes.len()
    }

    /// The application's part of page `i`: `(start, end)` in bytes from the page start.
    fn owned_part(&self, i: usize) -> (usize, usize) {
        let page_start = self.base + i * PAGE;
        let start = self.owned_start.max(page_start).min(page_start + PAGE);
        let end = self.owned_end.min(page_start + PAGE).max(start);
        (start - page_start, end - page_start)
    }

    /// Page `i` as it travels: the live bytes, with zeros outside the application's part.
    fn read_page(&self, i: usize, out: &mut [u8; PAGE]) {
        let (start, end) = self.owned_part(i);
        out.fill(0);
        // SAFETY: `[base + i * PAGE + start, + end)` lies inside memory this range mirrors,
        // which stays mapped while it is in the engine (the application's registered buffer,
        // or our own mapping). The application may not write it concurrently with a HIP call
        // that synchronises it (HIP's rule for managed memory without concurrent access).
        let live = unsafe { std::slice::from_raw_parts((self.base + i * PAGE + start) as *const u8, end - start) };
        out[start..end].copy_from_slice(live);
    }

    /// Writes the application's part of page `i` from `data` (a whole page).
    fn write_page(&self, i: usize, data: &[u8]) {
        let (start, end) = self.owned_part(i);
        // SAFETY: as in `read_page`; the bytes are the application's and it is not
        // accessing them (it is inside a synchronising HIP call).
        let live = unsafe { std::slice::from_raw_parts_mut((self.base + i * PAGE + start) as *mut u8, end - start) };
        live.copy_from_slice(&data[start..end]);
    }
}

/// Every mirrored range of this process, by the start of its application part (two
/// registrations may share a page, never bytes).
#[derive(Debug, Default)]
pub struct Engine {
    pub mirrors: BTreeMap<usize, Mirror>,
    /// Requests that may have let the device write mirrored memory.
    device_epoch: u64,
    /// The epoch up to which a device-wide synchronisation has pulled everything.
    pulled_epoch: u64,
    /// A `hipDeviceSynchronize` is in flight: the epoch it covers.
    full_sync_at: Option<u64>,
}

static ENGINE: Mutex<Engine> = Mutex::new(Engine { mirrors: BTreeMap::new(), device_epoch: 0, pulled_epoch: 0, full_sync_at: None });
/// Number of mirrored ranges: the hooks' fast path when there are none.
static MIRRORS: AtomicUsize = AtomicUsize::new(0);
/// Bytes pushed to / pulled from the worker (`hipRemoteManagedStats`).
static PUSHED_BYTES: AtomicU64 = AtomicU64::new(0);
static PULLED_BYTES: AtomicU64 = AtomicU64::new(0);

/// The engine, locked (take the connection first if both are needed).
pub fn engine() -> MutexGuard<'static, Engine> {
    ENGINE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Adds a range.
pub fn insert(mirror: Mirror) {
    crate::conn::give_request_hooks(crate::conn::RequestHooks { before_request, after_sync });
    let mut engine = engine();
    engine.mirrors.insert(mirror.owned_start, mirror);
    MIRRORS.store(engine.mirrors.len(), Ordering::Release);
}

/// Removes the range whose application part starts at `start`, if `keep` agrees.
pub fn remove_if(start: usize, keep: impl FnOnce(&Mirror) -> bool) -> Option<Mirror> {
    let mut engine = engine();
    if !engine.mirrors.get(&start).is_some_and(keep) {
        return None;
    }
    let removed = engine.mirrors.remove(&start);
    MIRRORS.store(engine.mirrors.len(), Ordering::Release);
    removed
}

impl Engine {
    /// The range whose application part contains host address `addr`.
    pub fn find(&self, addr: usize) -> Option<&Mirror> {
        self.mirrors.range(..=addr).next_back().map(|(_, m)| m).filter(|m| addr < m.owned_end)
    }

    pub fn find_mut(&mut self, addr: usize) -> Option<&mut Mirror> {
        self.mirrors.range_mut(..=addr).next_back().map(|(_, m)| m).filter(|m| addr < m.owned_end)
    }

    /// Whether `[start, end)` overlaps the application part of a range.
    pub fn overlaps(&self, start: usize, end: usize) -> bool {
        self.mirrors.range(..end).next_back().is_some_and(|(_, m)| m.owned_end > start)
    }
}

/// Bytes pushed and pulled so far by this process.
pub fn stats() -> (u64, u64) {
    (PUSHED_BYTES.load(Ordering::Relaxed), PULLED_BYTES.load(Ordering::Relaxed))
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

/// Called before `op` is encoded: pushes the CPU's changes first when `op` touches device
/// memory, and notes that the device may since have written.
pub fn before_request(conn: &mut Conn, op: Opcode) -> Result<(), CallError> {
    if MIRRORS.load(Ordering::Acquire) == 0 || op.family() == Family::Managed {
        return Ok(());
    }
    if waits_on_device_work(op) {
        // Device work may be waiting on a value the CPU wrote (hipStreamWaitValue* on mapped
        // or signal memory): the wait must see it.
        push_all(conn)?;
    }
    if op == Opcode::DeviceSynchronize {
        let mut engine = engine();
        engine.full_sync_at = Some(engine.device_epoch);
        return Ok(());
    }
    if touches_device_memory(op) {
        push_all(conn)?;
        engine().device_epoch += 1;
    }
    Ok(())
}

/// Pushes every page whose contents changed since both sides last agreed on it.
pub fn push_all(conn: &mut Conn) -> Result<(), CallError> {
    let mut engine = engine();
    let mut page = [0u8; PAGE];
    let (mut indices, mut data): (Vec<U32>, Vec<u8>) = (Vec::new(), Vec::new());
    for mirror in engine.mirrors.values_mut() {
        for i in 0..mirror.pages() {
            mirror.read_page(i, &mut page);
            let hash = page_hash(&page);
            if hash == mirror.hashes[i] {
                continue;
            }
            mirror.hashes[i] = hash;
            indices.push(U32::new(i as u32));
            data.extend_from_slice(&page);
            if indices.len() == MAX_PAGES_PER_FRAME {
                send_push(conn, mirror.device_base, &mut indices, &mut data)?;
            }
        }
        if !indices.is_empty() {
            send_push(conn, mirror.device_base, &mut indices, &mut data)?;
        }
    }
    Ok(())
}

fn send_push(conn: &mut Conn, device_base: u64, indices: &mut Vec<U32>, data: &mut Vec<u8>) -> Result<(), CallError> {
    PUSHED_BYTES.fetch_add(data.len() as u64, Ordering::Relaxed);
    conn.post::<calls::ManagedPush>(wire::ManagedPush { ptr: device_base, pages: List(indices), data: Bulk(data) })?;
    indices.clear();
    data.clear();
    Ok(())
}

/// Whether managed memory is mirrored: synchronising calls then bring the device's changes
/// back, so they must wait for the worker.
pub fn mirrors_active() -> bool {
    MIRRORS.load(Ordering::Acquire) != 0
}

/// Called after a synchronising call succeeded: brings back the device's changes if device
/// work may have written mirrored memory since the last device-wide synchronisation.
pub fn after_sync(conn: &mut Conn) -> Result<(), CallError> {
    if MIRRORS.load(Ordering::Acquire) == 0 {
        return Ok(());
    }
    let mut engine = engine();
    let full_sync = engine.full_sync_at.take();
    if engine.device_epoch <= engine.pulled_epoch {
        return Ok(());
    }
    for mirror in engine.mirrors.values_mut() {
        pull(conn, mirror)?;
    }
    if let Some(epoch) = full_sync {
        // Everything issued before the device-wide synchronisation has finished and is back.
        engine.pulled_epoch = engine.pulled_epoch.max(epoch);
    }
    Ok(())
}

fn pull(conn: &mut Conn, mirror: &mut Mirror) -> Result<(), CallError> {
    let mut from = 0u32;
    while (from as usize) < mirror.pages() {
        let reply = conn.managed_pull(wire::ManagedPull { ptr: mirror.device_base, from })?;
        let (pages, data) = (reply.pages.0, reply.data.0);
        if data.len() != pages.len() * PAGE || reply.next <= from {
            return Err(CallError::new(HipError::UNKNOWN, "malformed managed pull reply"));
        }
        for (index, bytes) in pages.iter().zip(data.chunks_exact(PAGE)) {
            let i = index.get() as usize;
            if i >= mirror.pages() {
                return Err(CallError::new(HipError::UNKNOWN, "managed pull reply names a page outside the range"));
            }
            mirror.write_page(i, bytes);
            mirror.hashes[i] = page_hash(bytes);
        }
        PULLED_BYTES.fetch_add(data.len() as u64, Ordering::Relaxed);
        from = reply.next;
    }
    Ok(())
}

/// This process's side of a mirrored range: pages of its own at a chosen address.
#[cfg(unix)]
pub mod os {
    use super::*;

    /// Fresh zeroed read-write pages anywhere.
    pub fn map_anywhere(len: usize) -> Result<usize, CallError> {
        map(0, len, 0)
    }

    /// Fresh zeroed pages exactly at `addr`, or an error if any of the range is taken.
    pub fn map_at(addr: usize, len: usize) -> Result<(), CallError> {
        #[cfg(target_os = "linux")]
        let got = map(addr, len, libc::MAP_FIXED_NOREPLACE)?;
        #[cfg(not(target_os = "linux"))]
        let got = map(addr, len, 0)?;
        if got != addr {
            unmap(got, len);
            return Err(CallError::new(HipError::OUT_OF_MEMORY, format!("{addr:#x} is taken in this process")));
        }
        Ok(())
    }

    fn map(addr: usize, len: usize, extra: libc::c_int) -> Result<usize, CallError> {
        // SAFETY: an anonymous private mapping; MAP_FIXED_NOREPLACE never replaces an
        // existing mapping, and without it `addr` is only a hint.
        let got = unsafe {
            libc::mmap(addr as *mut libc::c_void, len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANON | extra, -1, 0)
        };
        if got == libc::MAP_FAILED {
            let error = std::io::Error::last_os_error();
            return Err(CallError::new(HipError::OUT_OF_MEMORY, format!("mapping {len} bytes at {addr:#x} failed: {error}")));
        }
        Ok(got as usize)
    }

    pub fn unmap(addr: usize, len: usize) {
        // SAFETY: `addr`/`len` name a mapping made by `map` that nothing uses any more.
        unsafe { libc::munmap(addr as *mut libc::c_void, len) };
    }
}

/// Without mmap there is no way to place memory at the device's address: managed and mapped
/// host allocations are refused (registration of the application's memory still works).
#[cfg(not(unix))]
pub mod os {
    use super::*;

    const WHY: &str = "managed and mapped host memory need mmap to place pages at the device's address (Linux and macOS clients)";

    pub fn map_anywhere(_len: usize) -> Result<usize, CallError> {
        Err(CallError::new(HipError::NOT_SUPPORTED, WHY))
    }

    pub fn map_at(_addr: usize, _len: usize) -> Result<(), CallError> {
        Err(CallError::new(HipError::NOT_SUPPORTED, WHY))
    }

    pub fn unmap(_addr: usize, _len: usize) {}
}

/// Drops the ranges of `device` after `hipDeviceReset` (the worker freed their twins): the
/// application's registered memory stays, our own mappings go.
pub fn forget_device(device: u32) {
    let mut engine = engine();
    let gone: Vec<usize> = engine.mirrors.iter().filter(|(_, m)| m.device == device).map(|(&start, _)| start).collect();
    for start in gone {
        if let Some(mirror) = engine.mirrors.remove(&start) {
            if mirror.kind != MirrorKind::Registered {
                os::unmap(mirror.base, mirror.len);
            }
        }
    }
    MIRRORS.store(engine.mirrors.len(), Ordering::Release);
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn unaligned_registration_travels_only_its_own_bytes() {
        let mut buffer = vec![0xAAu8; 3 * PAGE];
        let base = buffer.as_mut_ptr() as usize;
        // The application's part: from 100 bytes into page 0 to 50 bytes into page 2.
        let mirror = Mirror::new(MirrorKind::Registered, base, 3 * PAGE, (base + 100, base + 2 * PAGE + 50), 0x1000, 0, 0);
        let mut page = [0u8; PAGE];
        mirror.read_page(0, &mut page);
        assert!(page[..100].iter().all(|&b| b == 0) && page[100..].iter().all(|&b| b == 0xAA));
        mirror.read_page(2, &mut page);
        assert!(page[..50].iter().all(|&b| b == 0xAA) && page[50..].iter().all(|&b| b == 0));
        mirror.write_page(0, &[0x11; PAGE]);
        assert!(buffer[..100].iter().all(|&b| b == 0xAA) && buffer[100..PAGE].iter().all(|&b| b == 0x11));
        assert_eq!(mirror.device_address(base + 100), 0x1000 + 100);
    }
}
