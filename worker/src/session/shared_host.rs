//! Shared registered host memory of a same-host session: `hipHostMalloc` regions the worker
//! creates, registers with the GPU and passes to the client ([`HostRegion`]), and the copies
//! that name them (one DMA, no bytes through the rings). Only a connection with a
//! descriptor channel (`shm://`, served in the worker's process) has them; elsewhere every
//! request is refused with `hipErrorNotSupported` and the client keeps its memory local.

use super::{Failure, Session};
use crate::backend::host_region::HostRegion;
use crate::backend::{BackendError, DevicePtr};
use proto_core::wire;
use proto_core::Status;
use std::collections::HashMap;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::{Arc, Mutex};

/// Most shared regions one session holds (each is a memfd, a mapping and a registration).
pub const MAX_SHARED_REGIONS_PER_SESSION: usize = 1024;
/// Most bytes of shared regions one session holds (the session memory bound,
/// `--max-session-memory-mib`, applies too).
pub const MAX_SHARED_BYTES_PER_SESSION: u64 = 64 << 30;
/// Regions are whole pages.
const PAGE_BYTES: u64 = 4096;

/// Passes a descriptor to the session's client (the shared-memory connection's descriptor
/// channel), tagged with the id the reply names.
pub trait DescriptorSender: Send + Sync {
    /// Sends `fd` tagged `tag`; fails at once when the client does not read.
    fn send_descriptor(&self, tag: u64, fd: BorrowedFd<'_>) -> std::io::Result<()>;
}

/// The session's regions.
#[derive(Default)]
pub(super) struct SharedRegions {
    regions: HashMap<u64, Arc<HostRegion>>,
    next_id: u64,
    bytes: u64,
}

impl SharedRegions {
    /// Bytes held, against the session's memory bound.
    pub(super) fn bytes(&self) -> u64 {
        self.bytes
    }

    fn get(&self, region: u64) -> Result<&Arc<HostRegion>, Failure> {
        self.regions.get(&region).ok_or_else(|| Failure::new(Status::INVALID_VALUE, format!("shared host region {region} is not this session's")))
    }

    /// Drops every region (the session's work on them is done: its streams are gone).
    pub(super) fn clear(&mut self) {
        self.regions.clear();
        self.bytes = 0;
    }
}

impl Session {
    /// Lets this session share host memory with its client through `sender`.
    pub fn set_descriptor_sender(&mut self, sender: Arc<dyn DescriptorSender>) {
        self.descriptors = Some(sender);
    }

    /// Whether WELCOME offers [`wire::features::SHARED_MEMORY`] for shared host memory.
    pub(super) fn offers_shared_host_memory(&self) -> bool {
        self.descriptors.is_some()
    }

    /// `[offset, offset + len)` of `region`, checked.
    fn region_slice(&self, region: u64, offset: u64, len: u64) -> Result<crate::backend::host_region::RegionSlice, Failure> {
        self.shared_regions
            .get(region)?
            .slice(offset, len)
            .ok_or_else(|| Failure::new(Status::INVALID_VALUE, format!("[{offset}, {offset} + {len}) is not inside shared host region {region}")))
    }

    pub(super) fn host_alloc_shared_request(&mut self, req: wire::HostAllocShared) -> Result<wire::SharedRegion, Failure> {
        let Some(sender) = self.descriptors.clone().filter(|_| self.shared_memory_offered) else {
            return Err(Failure::new(
                Status::NOT_SUPPORTED,
                "shared host memory needs a same-host (shm://) connection that the worker or the session's process serves (not relayed)",
            ));
        };
        if req.size == 0 {
            return Err(Failure::new(Status::INVALID_VALUE, "shared host memory of 0 bytes"));
        }
        let len = req.size.checked_next_multiple_of(PAGE_BYTES).filter(|&l| l <= MAX_SHARED_BYTES_PER_SESSION).ok_or_else(|| {
            Failure::new(
                Status::OUT_OF_MEMORY,
                format!("{} bytes of shared host memory exceed the per-session limit {MAX_SHARED_BYTES_PER_SESSION}", req.size),
            )
        })?;
        let regions = &self.shared_regions;
        if regions.regions.len() >= MAX_SHARED_REGIONS_PER_SESSION {
            return Err(Failure::new(
                Status::OUT_OF_MEMORY,
                format!("session holds the maximum of {MAX_SHARED_REGIONS_PER_SESSION} shared host regions"),
            ));
        }
        if regions.bytes + len > MAX_SHARED_BYTES_PER_SESSION {
            return Err(Failure::new(
                Status::OUT_OF_MEMORY,
                format!("{len} more bytes of shared host memory would pass the per-session limit {MAX_SHARED_BYTES_PER_SESSION}"),
            ));
        }
        self.check_session_memory(len, "shared host memory")?;
        let (region, fd) = HostRegion::create(Arc::clone(&self.backend), len as usize)?;
        let regions = &mut self.shared_regions;
        regions.next_id += 1;
        let id = regions.next_id;
        sender
            .send_descriptor(id, fd.as_fd())
            .map_err(|e| Failure::new(Status::OUT_OF_MEMORY, format!("cannot pass shared host memory to the client: {e}")))?;
        drop(fd);
        let worker_addr = region.addr() as u64;
        regions.regions.insert(id, region);
        regions.bytes += len;
        tracing::debug!(session = self.id, region = id, len, "shared host region created");
        Ok(wire::SharedRegion { region: id, size: len, worker_addr })
    }

    pub(super) fn host_free_shared_request(&mut self, req: wire::HostFreeShared) -> Result<wire::Empty, Failure> {
        let region =
            self.shared_regions.regions.remove(&req.region).ok_or_else(|| {
                Failure::new(Status::INVALID_VALUE, format!("hipHostFree: shared host region {} is not this session's", req.region))
            })?;
        self.shared_regions.bytes -= region.len() as u64;
        if Arc::strong_count(&region) > 1 {
            // Copies in flight hold it: they finish first (hipHostFree waits for the device,
            // and the last holder must not be a stream callback, where unregistering is
            // forbidden).
            let _ = self.synchronize_session(None);
        }
        drop(region);
        Ok(wire::Empty {})
    }

    pub(super) fn memcpy_htod_shared_request(&mut self, req: wire::MemcpyHtoDShared) -> Result<wire::Empty, Failure> {
        let src = self.region_slice(req.region, req.offset, req.len)?;
        if req.len == 0 {
            return Ok(wire::Empty {});
        }
        self.allocations.resolve(req.dst, req.len, "hipMemcpy destination")?;
        let stream = self.stream(req.stream, self.device_of(req.dst))?;
        if req.sync {
            // Complete before the reply, the region held here: nothing queued to hold it.
            self.backend.memcpy_htod_registered_sync(stream, DevicePtr(req.dst), &src)?;
        } else {
            self.backend.memcpy_htod_registered(stream, DevicePtr(req.dst), src)?;
        }
        Ok(wire::Empty {})
    }

    pub(super) fn memcpy_dtoh_shared_request(&mut self, req: wire::MemcpyDtoHShared) -> Result<wire::Empty, Failure> {
        let dst = self.region_slice(req.region, req.offset, req.len)?;
        if req.len == 0 {
            return Ok(wire::Empty {});
        }
        let (_, alloc) = self.allocations.resolve(req.src, req.len, "hipMemcpy source")?;
        let device = alloc.device;
        let stream = self.stream(req.stream, device)?;
        if req.stream == 0 && req.sync {
            // Only a copy the client waits for is due now: an asynchronous one must not wait
            // here for the stream, which may be held by a host callback the client releases
            // only after this call returns.
            self.forward_output_before_copy(stream, device);
        }
        if req.sync {
            self.backend.memcpy_dtoh_registered_sync(stream, DevicePtr(req.src), &dst)?;
            return Ok(wire::Empty {});
        }
        let failed: Arc<Mutex<Option<BackendError>>> = Arc::default();
        let slot = Arc::clone(&failed);
        let session = self.id;
        let done = Box::new(move |result: Result<(), BackendError>| {
            if let Err(e) = result {
                tracing::warn!(session, %e, "device-to-host copy into shared host memory failed");
                *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
            }
        });
        self.backend.memcpy_dtoh_registered(stream, DevicePtr(req.src), dst, done)?;
        if req.sync {
            self.sync_stream(stream)?;
            if let Some(e) = failed.lock().unwrap_or_else(|p| p.into_inner()).take() {
                return Err(e.into());
            }
        }
        Ok(wire::Empty {})
    }
}
