//! Transport hooks: what lets a transport move bytes without copying them (registering device or
//! staging memory with a NIC). Not a protocol family: no opcode reaches these.

use super::{BackendError, DeviceBackend, DevicePtr};

/// Zero-copy hooks for transports; the defaults describe a backend with none.
pub trait TransportHooks: DeviceBackend {
    /// Whether device pointers are ordinary host addresses of this process (the host
    /// backend): a transport may then register device allocations with the NIC directly.
    fn device_memory_is_host_memory(&self) -> bool {
        false
    }

    /// Host buffers, (address, length), that the backend stages copies through and keeps
    /// until it is dropped (pinned staging): a transport may register them with its NIC once
    /// instead of for every copy. Default: none.
    fn staging_buffers(&self) -> Vec<(usize, usize)> {
        Vec::new()
    }

    /// Exports the allocation `[ptr, ptr + len)` as a dma-buf a NIC can register (GPUDirect
    /// RDMA): the fd and the offset of `ptr` inside it. Default: not supported.
    fn export_dmabuf_fd(&self, ptr: DevicePtr, len: u64) -> Result<(std::os::fd::OwnedFd, u64), BackendError> {
        let _ = (ptr, len);
        Err(BackendError::NotSupported(format!("the {} backend cannot export device memory as a dma-buf", self.name())))
    }

    /// Registers host memory `[addr, addr + len)` (a shared region's mapping) with the GPU so
    /// copies from and to it are one DMA: `cuMemHostRegister`, `hipHostRegister`. Default
    /// (host backend): nothing to do.
    fn register_host_memory(&self, addr: usize, len: usize) -> Result<(), BackendError> {
        let _ = (addr, len);
        Ok(())
    }

    /// Undoes [`register_host_memory`](Self::register_host_memory) for the range at `addr`.
    fn unregister_host_memory(&self, addr: usize) -> Result<(), BackendError> {
        let _ = addr;
        Ok(())
    }
}
