//! Shared registered host memory on a same-host (`shm://`) connection (docs/TRANSPORTS.md,
//! "Same-host shared memory"): `hipHostMalloc` memory lives in regions the worker creates,
//! registers with the GPU and passes to us (a memfd on the connection's descriptor channel),
//! so a copy from or to it names the region instead of carrying its bytes: one DMA on the
//! worker, as from native pinned memory. Large copies from other (pageable) memory go
//! through two staging regions of the connection, the memcpy of one chunk overlapping the
//! DMA of the one before.

use super::{CallError, Conn};
use client_core::{Expect, Ticket};
use proto_core::wire;
use proto_core::{calls, Call, Calls};
use std::collections::BTreeSet;
use std::sync::{Mutex, OnceLock};

/// Smallest copy from or to pageable memory staged through the shared staging regions;
/// smaller ones cross the rings. A default to be measured on the H100 by the lead.
pub const SHM_STAGED_COPY_MIN_BYTES: usize = 256 << 10;
/// Bytes of each staging region (and of each staged chunk). A default to be measured on the
/// H100 by the lead.
pub const SHM_STAGING_REGION_BYTES: usize = 16 << 20;
/// Staging regions of a connection: two, so one fills while the other is copied.
pub const SHM_STAGING_REGIONS: usize = 2;

/// Client addresses of the application's shared regions (so `hipHostFree` of local memory
/// never needs the connection).
fn shared_addresses() -> &'static Mutex<BTreeSet<usize>> {
    static ADDRESSES: OnceLock<Mutex<BTreeSet<usize>>> = OnceLock::new();
    ADDRESSES.get_or_init(Default::default)
}

/// Whether `addr` is the start of a shared region `hipHostMalloc` returned.
pub fn is_shared_host_allocation(addr: usize) -> bool {
    shared_addresses().lock().unwrap_or_else(|p| p.into_inner()).contains(&addr)
}

/// The connection's descriptor channel.
#[cfg(target_os = "linux")]
pub type DescriptorChannel = transport_shm::FdChannel;
/// No descriptor channel off Linux.
#[cfg(not(target_os = "linux"))]
pub enum DescriptorChannel {}

/// The shared regions of a same-host connection.
pub struct SharedHost {
    #[cfg(target_os = "linux")]
    descriptors: DescriptorChannel,
    #[cfg(target_os = "linux")]
    regions: std::collections::BTreeMap<usize, Region>,
    /// The staging regions (region id, client address), made by the first large pageable
    /// copy; empty when they could not be made.
    staging: Option<Vec<(u64, usize)>>,
}

#[cfg(target_os = "linux")]
struct Region {
    id: u64,
    mapping: transport_shm::sys::Mapping,
}

impl Drop for SharedHost {
    /// The application's pointers into the regions stay valid after the connection is gone
    /// (its later HIP calls fail, its memory accesses must not): the mappings are kept
    /// until the process ends.
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        for (_, region) in std::mem::take(&mut self.regions) {
            std::mem::forget(region.mapping);
        }
    }
}

impl SharedHost {
    /// Shared memory over `descriptors`.
    pub fn new(descriptors: DescriptorChannel) -> Self {
        #[cfg(target_os = "linux")]
        return Self { descriptors, regions: Default::default(), staging: None };
        #[cfg(not(target_os = "linux"))]
        match descriptors {}
    }
}

/// Staged chunks are copied by up to this many threads: one core's memcpy (~6–10 GB/s) is
/// below what the DMA and CUDA's own pageable path move.
const STAGING_COPY_THREADS: usize = 4;
/// Least bytes each copying thread gets (below it, threads cost more than they save).
const STAGING_COPY_MIN_PER_THREAD: usize = 2 << 20;

/// Copies `len` bytes from `src` to `dst` with up to [`STAGING_COPY_THREADS`] threads.
///
/// # Safety
/// `src` must be valid for reads and `dst` for writes of `len` bytes, not overlapping.
unsafe fn parallel_copy(src: *const u8, dst: *mut u8, len: usize) {
    let threads = (len / STAGING_COPY_MIN_PER_THREAD).clamp(1, STAGING_COPY_THREADS);
    if threads == 1 {
        // SAFETY: caller contract.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
        return;
    }
    let part = len.div_ceil(threads);
    let (src, dst) = (src as usize, dst as usize);
    std::thread::scope(|scope| {
        for start in (0..len).step_by(part) {
            let n = part.min(len - start);
            scope.spawn(move || {
                // SAFETY: `[start, start + n)` lies inside both buffers (caller contract); the
                // parts are disjoint and the scope ends before the caller's borrow does.
                unsafe { std::ptr::copy_nonoverlapping((src + start) as *const u8, (dst + start) as *mut u8, n) }
            });
        }
    });
}

/// How long the descriptor of a region may lag behind the reply that announced it (the
/// worker sends it first: it is normally there already).
#[cfg(target_os = "linux")]
const DESCRIPTOR_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

impl Conn {
    /// `hipHostMalloc` on a same-host connection: the address of a new shared region, or
    /// `None` where this connection has none or the worker refused (the caller then
    /// allocates locally, as before).
    pub fn alloc_shared_host(&mut self, size: usize, flags: u32) -> Result<Option<usize>, CallError> {
        let addr = self.new_region(size, flags)?;
        if let Some(addr) = addr {
            shared_addresses().lock().unwrap_or_else(|p| p.into_inner()).insert(addr);
        }
        Ok(addr)
    }

    /// `hipHostFree` of a shared region: `false` when `addr` is none.
    pub fn free_shared_host(&mut self, addr: usize) -> Result<bool, CallError> {
        if !shared_addresses().lock().unwrap_or_else(|p| p.into_inner()).remove(&addr) {
            return Ok(false);
        }
        self.drop_region(addr)?;
        Ok(true)
    }

    #[cfg(not(target_os = "linux"))]
    fn new_region(&mut self, _size: usize, _flags: u32) -> Result<Option<usize>, CallError> {
        Ok(None)
    }

    #[cfg(not(target_os = "linux"))]
    fn drop_region(&mut self, _addr: usize) -> Result<(), CallError> {
        Ok(())
    }

    #[cfg(not(target_os = "linux"))]
    fn shared_range(&self, _addr: usize, _len: usize) -> Option<(u64, u64)> {
        None
    }

    #[cfg(target_os = "linux")]
    fn new_region(&mut self, size: usize, flags: u32) -> Result<Option<usize>, CallError> {
        use std::os::fd::AsFd;
        if self.shared_host.is_none() {
            return Ok(None);
        }
        let (id, len) = match self.host_alloc_shared(wire::HostAllocShared { size: size as u64, flags }) {
            Ok(r) => (r.region, r.size),
            Err(e) if e.message.starts_with(super::LOST) => return Err(e),
            // Refused (a limit, a session process): local memory still works.
            Err(_) => return Ok(None),
        };
        let host = self.shared_host.as_mut().expect("checked above");
        let mapped = host.descriptors.recv(id, DESCRIPTOR_WAIT).and_then(|fd| {
            let sealed = transport_shm::sys::sealed_len(fd.as_fd())?;
            if sealed as u64 != len || (len as usize) < size {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("region of {sealed} bytes, announced {len}, wanted {size}"),
                ));
            }
            transport_shm::sys::Mapping::new(fd.as_fd(), sealed)
        });
        match mapped {
            Ok(mapping) => {
                let addr = mapping.as_ptr() as usize;
                host.regions.insert(addr, Region { id, mapping });
                Ok(Some(addr))
            }
            Err(e) => {
                eprintln!("hip-remote: shared host memory from the worker unusable ({e}); using local memory");
                let _ = self.host_free_shared(wire::HostFreeShared { region: id });
                Ok(None)
            }
        }
    }

    #[cfg(target_os = "linux")]
    fn drop_region(&mut self, addr: usize) -> Result<(), CallError> {
        let Some(region) = self.shared_host.as_mut().and_then(|h| h.regions.remove(&addr)) else { return Ok(()) };
        // The worker lets go once its copies are done; then the mapping goes here.
        let freed = self.host_free_shared(wire::HostFreeShared { region: region.id }).map(drop);
        drop(region);
        freed
    }

    /// The region and offset of `[addr, addr + len)` when it lies wholly inside one region.
    #[cfg(target_os = "linux")]
    fn shared_range(&self, addr: usize, len: usize) -> Option<(u64, u64)> {
        let host = self.shared_host.as_ref()?;
        let (base, region) = host.regions.range(..=addr).next_back()?;
        let offset = addr - base;
        (offset.checked_add(len)? <= region.mapping.len()).then_some((region.id, offset as u64))
    }

    /// The staging regions, made on first use; `None` where there are none.
    fn staging_regions(&mut self) -> Option<Vec<(u64, usize)>> {
        let host = self.shared_host.as_ref()?;
        if let Some(staging) = &host.staging {
            return (!staging.is_empty()).then(|| staging.clone());
        }
        let mut staging = Vec::with_capacity(SHM_STAGING_REGIONS);
        for _ in 0..SHM_STAGING_REGIONS {
            match self.new_region(SHM_STAGING_REGION_BYTES, 0) {
                Ok(Some(addr)) => staging.push((self.shared_range(addr, 1)?.0, addr)),
                _ => {
                    for (_, addr) in staging.drain(..) {
                        let _ = self.drop_region(addr);
                    }
                    break;
                }
            }
        }
        self.shared_host.as_mut()?.staging = Some(staging.clone());
        (!staging.is_empty()).then_some(staging)
    }

    /// Sends call `req` without waiting: its request id, for [`Self::wait_reply`].
    fn send_call<C: Call>(&mut self, req: C::Request<'_>) -> Result<Ticket, CallError> {
        let ticket = self.transmit(&C::wrap(req), Expect::Reply, true)?;
        self.session.arm_deadline(std::time::Instant::now());
        Ok(ticket)
    }

    /// [`Self::upload`] through shared memory: a copy from a shared region names it; a large
    /// one from elsewhere is staged. `None`: neither applies, take the rings.
    pub(super) fn upload_shared(&mut self, dst: u64, src: &[u8], stream: u64, sync: bool) -> Option<Result<(), CallError>> {
        if src.is_empty() || self.shared_host.is_none() {
            return None;
        }
        if let Some((region, offset)) = self.shared_range(src.as_ptr() as usize, src.len()) {
            let req = wire::MemcpyHtoDShared { dst, region, offset, len: src.len() as u64, stream, sync };
            return Some(self.memcpy_htod_shared(req).map(drop));
        }
        if src.len() < SHM_STAGED_COPY_MIN_BYTES {
            return None;
        }
        let staging = self.staging_regions()?;
        // Chunk k fills region k % n once the copy that used it before is done; each chunk
        // completes on the device before its reply (pageable memory may be reused once the
        // call returns), so the memcpy of chunk k + 1 overlaps the DMA of chunk k.
        // Requests are answered in order: the front one used the region chunk k needs.
        let mut in_flight = std::collections::VecDeque::with_capacity(staging.len());
        let mut result = Ok(());
        for (k, chunk) in src.chunks(SHM_STAGING_REGION_BYTES).enumerate() {
            if in_flight.len() == staging.len() {
                let id = in_flight.pop_front().expect("one request per region");
                result = self.wait_reply(id).map(drop);
                if result.is_err() {
                    break;
                }
            }
            let (region, addr) = staging[k % staging.len()];
            // SAFETY: the staging region is mapped for SHM_STAGING_REGION_BYTES (≥ a chunk)
            // while the connection lives, and no copy uses it (its last one was waited for).
            unsafe { parallel_copy(chunk.as_ptr(), addr as *mut u8, chunk.len()) };
            let req = wire::MemcpyHtoDShared {
                dst: dst + (k * SHM_STAGING_REGION_BYTES) as u64,
                region,
                offset: 0,
                len: chunk.len() as u64,
                stream,
                sync: true,
            };
            match self.send_call::<calls::MemcpyHtoDShared>(req) {
                Ok(id) => in_flight.push_back(id),
                Err(e) => return Some(Err(e)),
            }
        }
        for id in in_flight {
            let waited = self.wait_reply(id).map(drop);
            result = result.and(waited);
        }
        Some(result)
    }

    /// [`Self::download`] through shared memory, as [`Self::upload_shared`]. Staged copies
    /// are complete on return, whatever `wait` says.
    ///
    /// # Safety
    /// `dst` must be valid for `len` bytes of writes until the copy has landed.
    pub(super) unsafe fn download_shared(&mut self, dst: *mut u8, src: u64, len: usize, stream: u64, wait: bool) -> Option<Result<(), CallError>> {
        if len == 0 || self.shared_host.is_none() {
            return None;
        }
        if let Some((region, offset)) = self.shared_range(dst as usize, len) {
            let req = wire::MemcpyDtoHShared { src, region, offset, len: len as u64, stream, sync: wait };
            return Some(self.memcpy_dtoh_shared(req).map(drop));
        }
        if len < SHM_STAGED_COPY_MIN_BYTES {
            return None;
        }
        let staging = self.staging_regions()?;
        let chunks = len.div_ceil(SHM_STAGING_REGION_BYTES);
        let chunk_len = |k: usize| (len - k * SHM_STAGING_REGION_BYTES).min(SHM_STAGING_REGION_BYTES);
        let send = |conn: &mut Self, k: usize| {
            let req = wire::MemcpyDtoHShared {
                src: src + (k * SHM_STAGING_REGION_BYTES) as u64,
                region: staging[k % staging.len()].0,
                offset: 0,
                len: chunk_len(k) as u64,
                stream,
                sync: true,
            };
            conn.send_call::<calls::MemcpyDtoHShared>(req)
        };
        // Every region holds a chunk in flight; each is copied out, then refilled with the
        // chunk n regions later, while the worker fills the next.
        let mut ids = std::collections::VecDeque::new();
        for k in 0..chunks.min(staging.len()) {
            match send(self, k) {
                Ok(id) => ids.push_back(id),
                Err(e) => return Some(Err(e)),
            }
        }
        let mut result = Ok(());
        let mut k = 0;
        // Requests are answered in order: the one at the front is chunk k's.
        while let Some(id) = ids.pop_front() {
            let landed = self.wait_reply(id).map(drop);
            if landed.is_ok() && result.is_ok() {
                let addr = staging[k % staging.len()].1;
                // SAFETY: the staging region holds chunk k (its copy is done) and `dst` is
                // valid for `len` bytes (caller contract); chunk k lies inside both.
                unsafe { parallel_copy(addr as *const u8, dst.add(k * SHM_STAGING_REGION_BYTES), chunk_len(k)) };
            }
            result = result.and(landed);
            let next = k + staging.len();
            if next < chunks && result.is_ok() {
                match send(self, next) {
                    Ok(id) => ids.push_back(id),
                    Err(e) => return Some(Err(e)),
                }
            }
            k += 1;
        }
        Some(result)
    }
}
