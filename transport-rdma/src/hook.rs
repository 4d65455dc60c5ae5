//! The worker-side memory-registration hook: how a backend lets the NIC reach its device
//! memory directly (design for the one-sided path; the two-sided path in this crate does not
//! need it).
//!
//! A one-sided transfer needs the *destination* (H2D: the worker RDMA-READs from the client)
//! or the *source* (D2H: the worker RDMA-WRITEs to the client) to be registered with the
//! worker's NIC. For the host backend, device memory is ordinary host memory:
//! `ibv_reg_mr(addr, len)` works, and the backend knows exactly when an allocation dies, so
//! registrations can be cached per allocation without the stale-mapping hazard a client-side
//! cache of arbitrary application buffers has. For GPUs, the NIC reaches device memory
//! through a dma-buf: CUDA exports one with `cuMemGetHandleForAddressRange(...,
//! CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, ...)` (ROCm: `hsa_amd_portable_export_dmabuf`), and
//! the transport registers it with `ibv_reg_dmabuf_mr(pd, offset, len, iova, fd, access)`.
//! That export is the backend's job; registering and caching is the transport's
//! (`verbs::mr::MemoryRegion::register`). The CUDA side of the export exists
//! (`CudaBackend::export_dmabuf` in `worker/src/backend/cuda`); the remaining glue is an
//! adapter implementing [`DeviceMemoryExporter`] with it (`Dmabuf { fd, offset: 0, len, iova:
//! ptr }`, page-aligned ranges) and wiring `on_free` from the session's allocation table so
//! registrations can be cached per allocation. The one-sided data path itself exists
//! (`engine`, `HIP_REMOTE_RDMA_ONE_SIDED=1`); it registers host memory per transfer today.

use std::os::fd::OwnedFd;

/// Device memory made reachable by a NIC.
#[derive(Debug)]
pub enum ExportedMemory {
    /// Plain host virtual memory (host backend, pinned staging buffers): registered with
    /// `ibv_reg_mr`.
    Host {
        /// Start address.
        addr: u64,
        /// Length in bytes.
        len: u64,
    },
    /// A dma-buf covering device memory: registered with `ibv_reg_dmabuf_mr`.
    Dmabuf {
        /// The dma-buf file descriptor (closed when the registration is dropped).
        fd: OwnedFd,
        /// Offset of the range inside the dma-buf.
        offset: u64,
        /// Length in bytes.
        len: u64,
        /// The address the transport will use for the range (the device pointer).
        iova: u64,
    },
}

impl ExportedMemory {
    /// Length in bytes.
    pub fn len(&self) -> u64 {
        match self {
            ExportedMemory::Host { len, .. } | ExportedMemory::Dmabuf { len, .. } => *len,
        }
    }

    /// Whether the range is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Why a backend could not export memory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    /// The backend (or driver) cannot export this memory; the transport falls back to the
    /// two-sided path with a host bounce.
    #[error("device memory export not supported: {0}")]
    Unsupported(String),
    /// The range is not (entirely) device memory of this backend.
    #[error("not device memory of this backend: {0:#x}+{1}")]
    NotDeviceMemory(u64, u64),
}

/// What a worker backend provides so the RDMA transport can register its device memory.
///
/// Called once per allocation (the transport caches the registration keyed by allocation and
/// drops it when [`on_free`](Self::on_free) reports the allocation gone), never on the data
/// path of each copy.
pub trait DeviceMemoryExporter: Send + Sync {
    /// Exports the allocation `[ptr, ptr + len)` (a whole allocation as the session's table
    /// knows it).
    fn export(&self, ptr: u64, len: u64) -> Result<ExportedMemory, ExportError>;

    /// The allocation at `ptr` is about to be freed: registrations covering it must be
    /// released first (the backend calls this before freeing).
    fn on_free(&self, _ptr: u64) {}
}

/// The host backend's exporter: device memory is host memory.
#[derive(Debug, Clone, Copy, Default)]
pub struct HostMemoryExporter;

impl DeviceMemoryExporter for HostMemoryExporter {
    fn export(&self, ptr: u64, len: u64) -> Result<ExportedMemory, ExportError> {
        Ok(ExportedMemory::Host { addr: ptr, len })
    }
}
