//! Memory a NIC can reach, as the registration paths see it: plain host memory, or device
//! memory exported as a dma-buf.
//!
//! The worker's session announces its allocations through
//! [`MemoryRegistry`](transport_core::MemoryRegistry): host-memory backends with `remember`
//! (registered by address), GPU backends with `remember_device` and an export function
//! (CUDA: `cuMemGetHandleForAddressRange(..., CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, ...)`;
//! ROCm would use `hsa_amd_portable_export_dmabuf`). The registration cache
//! ([`crate::regcache`]) calls the export on first use and registers the result
//! (`ibv_reg_dmabuf_mr` for a dma-buf, `verbs::mr::MemoryRegion::register`); a failure
//! leaves that memory on the pinned-staging path, logged once per connection.

use std::os::fd::OwnedFd;

/// Memory made reachable by a NIC.
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
