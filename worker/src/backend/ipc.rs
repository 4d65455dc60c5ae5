//! Sharing device memory and events between sessions of one worker (`hipIpc*`).
//!
//! A backend says what another session needs to reach an allocation or event ([`IpcShare`],
//! [`IpcEventShare`]) and maps such a share into its own address space. The host backend
//! shares through memory file descriptors, so sessions in processes of their own
//! ([`crate::sandbox`]) can map the same bytes (the worker passes the descriptor on); GPU
//! backends serve every session from one process and one device context, where the exporter's
//! own pointer and event are valid in every session (the session keeps them alive until the
//! last importer lets go).

use std::os::fd::OwnedFd;
use std::sync::Arc;

use super::{BackendError, DeviceIndex, DevicePtr, EventHandle};

/// What another session needs to map an exported allocation.
#[derive(Debug, Clone)]
pub enum IpcShare {
    /// The allocation's bytes live in this memory file (from its start, `len` bytes, page
    /// rounded); any process holding the descriptor can map them.
    Fd { fd: Arc<OwnedFd>, len: u64 },
    /// The exporter's own address, valid in every session of this process.
    Pointer(DevicePtr),
}

/// What another session needs to open an exported event.
#[derive(Debug, Clone)]
pub enum IpcEventShare {
    /// A shared page of completion counters ([`crate::backend::host`]'s interprocess events).
    Fd(Arc<OwnedFd>),
    /// The exporter's own event, valid in every session of this process.
    Handle(EventHandle),
}

/// Inter-process sharing. The defaults are those of a backend that serves all sessions from
/// one process (GPU backends): shares are the exporter's own pointer and event.
pub trait IpcBackend {
    /// Makes the allocation starting at `base` (`size` bytes) shareable.
    fn ipc_export_memory(&self, base: DevicePtr, size: u64) -> Result<IpcShare, BackendError> {
        let _ = size;
        Ok(IpcShare::Pointer(base))
    }

    /// Maps a share of an allocation of `size` bytes; answers the base address in this
    /// backend. Unmapped with [`IpcBackend::ipc_close_memory`].
    fn ipc_import_memory(&self, share: &IpcShare, size: u64, device: DeviceIndex) -> Result<DevicePtr, BackendError> {
        let _ = (size, device);
        match share {
            IpcShare::Pointer(ptr) => Ok(*ptr),
            IpcShare::Fd { .. } => Err(BackendError::NotSupported("this backend cannot map another process's memory".into())),
        }
    }

    /// Unmaps what [`IpcBackend::ipc_import_memory`] mapped at `base`.
    fn ipc_close_memory(&self, base: DevicePtr) -> Result<(), BackendError> {
        let _ = base;
        Ok(())
    }

    /// Makes an event created with `hipEventInterprocess` shareable.
    fn ipc_export_event(&self, event: EventHandle) -> Result<IpcEventShare, BackendError> {
        Ok(IpcEventShare::Handle(event))
    }

    /// Opens a shared event on `device`: a handle of this backend, destroyed with
    /// `event_destroy` (a [`IpcEventShare::Handle`] is the exporter's own event: the session
    /// does not destroy it).
    fn ipc_import_event(&self, share: &IpcEventShare, device: DeviceIndex) -> Result<EventHandle, BackendError> {
        let _ = device;
        match share {
            IpcEventShare::Handle(event) => Ok(*event),
            IpcEventShare::Fd(_) => Err(BackendError::NotSupported("this backend cannot open another process's event".into())),
        }
    }
}
