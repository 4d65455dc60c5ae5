//! One-sided bulk: registrations (the cache's for remembered host and device memory, or one
//! per transfer), RDMA READs of a peer's remote bulk and RDMA WRITEs into its landings, in
//! chunks with a bounded number in flight; and the connection's [`MemoryRegistry`], which
//! feeds the registration cache.

use super::shared::{timed_out, Shared};
use super::{Broken, READ_CHUNK, READ_DEPTH, WRITE_CHUNK, WRITE_DEPTH};
use crate::fabric::{Access, Fabric, FabricError, Region, SendWr};
use crate::hook::ExportedMemory;
use crate::regcache::{Export, Lookup, SharedRegion};
use std::io;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use transport_core::{MemoryRegistry, TransportError};

impl<F: Fabric> Shared<F> {
    /// Registers a whole remembered range for the cache: host memory by address, device
    /// memory through its dma-buf export (logged once per connection either way).
    pub(super) fn register_remembered(&self, base: u64, len: u64, export: Option<&Export>) -> Result<Box<dyn Region>, FabricError> {
        let access = self.role.cache_access();
        let Some(export) = export else {
            tracing::debug!(base = format_args!("{base:#x}"), len, "RDMA registration cache: registering remembered memory");
            // SAFETY: remembered memory stays valid until its owner forgets it (the
            // registry's contract), which drops the cache's share of the registration.
            return unsafe { self.fabric.register(base as *mut u8, len as usize, access) };
        };
        let first = !self.logged_device.swap(true, Ordering::Relaxed);
        let result = match export() {
            // SAFETY: as above, for device memory: remembered until its owner frees it.
            Ok(ExportedMemory::Dmabuf { fd, offset, len: l, iova }) => unsafe { self.fabric.register_dmabuf(fd, offset, l as usize, iova, access) },
            // SAFETY: as above: the host memory the export names is remembered memory too,
            // valid until its owner forgets it.
            // SAFETY: as above: the host memory the export names is remembered memory too,
            // valid until its owner forgets it.
            Ok(ExportedMemory::Host { addr, len: l }) => unsafe { self.fabric.register(addr as *mut u8, l as usize, access) },
            Err(e) => Err(FabricError::new("dma-buf export", e.to_string())),
        };
        match &result {
            Ok(_) if first => tracing::info!("GPUDirect RDMA in use: device memory registered through its dma-buf; copies skip host staging"),
            Err(e) if first => tracing::warn!(error = %e, "GPUDirect RDMA unavailable; device copies go through pinned host staging"),
            Ok(_) => tracing::debug!(base = format_args!("{base:#x}"), len, "RDMA registration cache: registered device memory"),
            Err(e) => tracing::debug!(error = %e, base = format_args!("{base:#x}"), "RDMA registration cache: device memory not registrable"),
        }
        result
    }

    /// The cached registration of remembered device memory covering `[addr, addr + len)`,
    /// if there is one (made now on first use).
    pub(super) fn device_region(&self, addr: u64, len: usize) -> Option<SharedRegion> {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        match cache.lookup(addr, len as u64, |base, l, export| self.register_remembered(base, l, export)) {
            Lookup::Hit(region) => Some(region),
            Lookup::Miss | Lookup::Failed(_) => None,
        }
    }

    /// Logs a failed registration once per connection.
    pub(super) fn log_reg_failure(&self, what: &str, e: &FabricError, len: usize) {
        if !self.logged_reg_failure.swap(true, Ordering::Relaxed) {
            tracing::warn!(error = %e, len, "RDMA {what}: registration failed; using the two-sided path (check `ulimit -l`)");
        }
    }

    /// A registration of `[ptr, ptr + len)` allowing `access`: the cache's when the range
    /// lies in remembered memory, else (when `per_transfer`) one made for this transfer,
    /// else `None`. The second value says whether it came from the cache.
    ///
    /// # Safety
    /// The memory must stay valid while the returned registration is held.
    pub(super) unsafe fn region_for(
        &self,
        ptr: *const u8,
        len: usize,
        access: Access,
        per_transfer: bool,
    ) -> Result<Option<(SharedRegion, bool)>, FabricError> {
        let cache_access = self.role.cache_access();
        if cache_access.covers(access) {
            let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            // SAFETY: remembered memory stays valid until its owner forgets it (the
            // registry's contract), which drops the cache's share of the registration.
            let found = cache.lookup(ptr as u64, len as u64, |base, l, export| self.register_remembered(base, l, export));
            match found {
                Lookup::Hit(region) => return Ok(Some((region, true))),
                Lookup::Failed(e) => self.log_reg_failure("registration cache", &e, len),
                Lookup::Miss => {}
            }
        }
        if !per_transfer {
            return Ok(None);
        }
        // SAFETY: the caller keeps the memory valid while the registration is held.
        let region = unsafe { self.fabric.register(ptr.cast_mut(), len, access) }?;
        Ok(Some((Arc::from(region), false)))
    }

    /// RDMA-READs `dst.len()` bytes from the peer's `raddr`/`rkey` into `dst` (registered
    /// through the cache or for this transfer), waiting for every completion. A
    /// per-transfer registration is dropped before returning, error or not, so the device
    /// never writes into `dst` afterwards.
    pub(super) fn read_remote(&self, dst: &mut [u8], raddr: u64, rkey: u32) -> Result<(), TransportError> {
        if dst.is_empty() {
            return Ok(());
        }
        // SAFETY: `dst` is borrowed mutably for this whole call and the registration is
        // dropped (or, cached, outlives it as remembered memory) before it returns.
        let region = match unsafe { self.region_for(dst.as_ptr(), dst.len(), Access::LOCAL_WRITE, true) } {
            Ok(Some((region, _))) => region,
            Ok(None) => unreachable!("per-transfer registration requested"),
            Err(e) => {
                return Err(TransportError::Io(io::Error::other(format!(
                    "RDMA: cannot register the destination of a remote bulk section: {e} (registration pins memory: check `ulimit -l`, or set HIP_REMOTE_RDMA_ONE_SIDED=0)"
                ))))
            }
        };
        let total = dst.len();
        if !self.logged_read.swap(true, Ordering::Relaxed) {
            tracing::info!("RDMA one-sided bulk in use (RDMA-READing the peer's large bulk sections)");
        }
        self.post_rdma(false, dst.as_mut_ptr() as u64, region.lkey(), total, raddr, rkey)?;
        self.wait_rdma(false)?;
        self.lock().stats.bytes_read += total as u64;
        Ok(())
    }

    /// Posts RDMA READs (`write` false: peer → local) or WRITEs (local → peer) of `total`
    /// bytes in chunks, keeping at most READ_DEPTH/WRITE_DEPTH in flight; returns once all
    /// are posted (not completed).
    pub(super) fn post_rdma(&self, write: bool, local: u64, lkey: u32, total: usize, raddr: u64, rkey: u32) -> Result<(), TransportError> {
        let (chunk, depth) = if write { (WRITE_CHUNK, WRITE_DEPTH) } else { (READ_CHUNK, READ_DEPTH) };
        let mut posted = 0usize;
        let st = self.lock();
        let (_st, ()) = self.wait(st, if write { "RDMA WRITE completions" } else { "RDMA READ completions" }, |sh, st| {
            Self::check_usable(st)?;
            loop {
                let in_flight = if write { st.writes_in_flight } else { st.reads_in_flight };
                if posted == total || in_flight >= depth {
                    break;
                }
                let len = (total - posted).min(chunk);
                let (l, r, n) = (local + posted as u64, raddr + posted as u64, len as u32);
                let wr = if write {
                    SendWr::Write { id: 0, local: l, lkey, len: n, remote: r, rkey }
                } else {
                    SendWr::Read { id: 0, local: l, lkey, len: n, remote: r, rkey }
                };
                if let Err(e) = sh.fabric.post_send(wr) {
                    sh.fail(st, Broken::Failed(e.to_string()));
                    return Err(st.broken.as_ref().map_or_else(|| timed_out("post"), Broken::to_error));
                }
                if write {
                    st.writes_in_flight += 1;
                } else {
                    st.reads_in_flight += 1;
                }
                posted += len;
            }
            Ok((posted == total).then_some(()))
        })?;
        Ok(())
    }

    /// Waits until every posted READ (or WRITE) has completed.
    pub(super) fn wait_rdma(&self, write: bool) -> Result<(), TransportError> {
        let st = self.lock();
        let (_st, ()) = self.wait(st, if write { "RDMA WRITE completions" } else { "RDMA READ completions" }, |_, st| {
            Self::check_usable(st)?;
            Ok((if write { st.writes_in_flight } else { st.reads_in_flight } == 0).then_some(()))
        })?;
        Ok(())
    }
}

/// The [`MemoryRegistry`] of a connection: feeds its registration cache.
pub(super) struct Registry<F: Fabric>(pub(super) Weak<Shared<F>>);

impl<F: Fabric> MemoryRegistry for Registry<F> {
    fn remember(&self, addr: usize, len: usize) {
        if let Some(sh) = self.0.upgrade() {
            sh.cache.lock().unwrap_or_else(|p| p.into_inner()).remember(addr as u64, len as u64);
        }
    }

    fn forget(&self, addr: usize) {
        if let Some(sh) = self.0.upgrade() {
            sh.cache.lock().unwrap_or_else(|p| p.into_inner()).forget(addr as u64);
        }
    }

    fn remember_device(&self, addr: u64, len: u64, export: transport_core::DeviceExport) {
        let Some(sh) = self.0.upgrade() else { return };
        let export: Export = Arc::new(move || {
            let (fd, offset) = export()?;
            Ok(ExportedMemory::Dmabuf { fd, offset, len, iova: addr })
        });
        sh.cache.lock().unwrap_or_else(|p| p.into_inner()).remember_device(addr, len, export);
    }
}
