//! Sharing device memory and events between sessions of one worker (`hipIpc*`).
//!
//! A backend says what another session needs to reach an allocation or event ([`IpcShare`],
//! [`IpcEventShare`]) and maps such a share into its own address space. The host backend
//! shares through memory file descriptors, so sessions in processes of their own
//! ([`crate::sandbox`]) can map the same bytes (the worker passes the descriptor on); GPU
//! backends serve every session from one process and one device context, where the exporter's
//! own pointer and event are valid in every session (the session keeps them alive until the
//! last importer lets go). GPU sessions in processes of their own (`--isolation process`)
//! share as native processes do: the driver's 64-byte IPC handle ([`IpcShare::Driver`]), or a
//! file descriptor of the physical memory for virtual-memory mappings, which the importing
//! process opens with its own driver ([`IpcReach::OtherProcesses`]).

use std::os::fd::OwnedFd;
use std::sync::Arc;

use super::{BackendError, DeviceIndex, DevicePtr, EventHandle};

/// Bytes of a driver's IPC handle: `CUipcMemHandle`, `CUipcEventHandle`,
/// `hipIpcMemHandle_t`, `hipIpcEventHandle_t` are all 64.
pub const DRIVER_IPC_HANDLE_BYTES: usize = 64;

/// A driver's IPC handle, as the exporting process's driver wrote it. It never leaves the
/// worker and its session processes: clients see the worker's tokens only.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct DriverIpcHandle(pub [u8; DRIVER_IPC_HANDLE_BYTES]);

impl std::fmt::Debug for DriverIpcHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the bytes: they open the memory for any process of the host.
        f.write_str("DriverIpcHandle(..)")
    }
}

/// Whom a share is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpcReach {
    /// Sessions of this process (one backend, one device context per device).
    ThisProcess,
    /// Session processes of their own, each with its own backend and device contexts.
    OtherProcesses,
}

/// What another session needs to map an exported allocation.
#[derive(Debug, Clone)]
pub enum IpcShare {
    /// The allocation's bytes live in this file (from its start, `len` bytes): the host
    /// backend's memory file, or a GPU driver's shareable handle of physical memory; any
    /// process holding the descriptor can map them with the same backend.
    Fd { fd: Arc<OwnedFd>, len: u64 },
    /// The exporter's own address, valid in every session of this process.
    Pointer(DevicePtr),
    /// The driver's IPC handle of the allocation (`cuIpcGetMemHandle`, `hipIpcGetMemHandle`),
    /// opened by another process's driver.
    Driver(DriverIpcHandle),
}

/// What another session needs to open an exported event.
#[derive(Debug, Clone)]
pub enum IpcEventShare {
    /// A shared page of completion counters ([`crate::backend::host`]'s interprocess events).
    Fd(Arc<OwnedFd>),
    /// The exporter's own event, valid in every session of this process.
    Handle(EventHandle),
    /// The driver's IPC handle of the event (`cuIpcGetEventHandle`, `hipIpcGetEventHandle`).
    Driver(DriverIpcHandle),
}

/// The refusal of a backend that cannot share with other processes.
fn no_other_processes(what: &str) -> BackendError {
    BackendError::NotSupported(format!("this backend cannot share {what} with another process"))
}

/// Inter-process sharing. The defaults are those of a backend that serves all sessions from
/// one process (GPU backends): shares are the exporter's own pointer and event.
pub trait IpcBackend {
    /// Makes the allocation starting at `base` (`size` bytes) shareable with `reach`.
    fn ipc_export_memory(&self, base: DevicePtr, size: u64, reach: IpcReach) -> Result<IpcShare, BackendError> {
        let _ = size;
        match reach {
            IpcReach::ThisProcess => Ok(IpcShare::Pointer(base)),
            IpcReach::OtherProcesses => Err(no_other_processes("memory")),
        }
    }

    /// Maps a share of an allocation of `size` bytes; answers the base address in this
    /// backend. Unmapped with [`IpcBackend::ipc_close_memory`].
    fn ipc_import_memory(&self, share: &IpcShare, size: u64, device: DeviceIndex) -> Result<DevicePtr, BackendError> {
        let _ = (size, device);
        match share {
            IpcShare::Pointer(ptr) => Ok(*ptr),
            IpcShare::Fd { .. } | IpcShare::Driver(_) => Err(no_other_processes("memory")),
        }
    }

    /// Unmaps what [`IpcBackend::ipc_import_memory`] mapped at `base`.
    fn ipc_close_memory(&self, base: DevicePtr) -> Result<(), BackendError> {
        let _ = base;
        Ok(())
    }

    /// Makes an event created with `hipEventInterprocess` shareable with `reach`.
    fn ipc_export_event(&self, event: EventHandle, reach: IpcReach) -> Result<IpcEventShare, BackendError> {
        match reach {
            IpcReach::ThisProcess => Ok(IpcEventShare::Handle(event)),
            IpcReach::OtherProcesses => Err(no_other_processes("events")),
        }
    }

    /// Opens a shared event on `device`: a handle of this backend, destroyed with
    /// `event_destroy` (a [`IpcEventShare::Handle`] is the exporter's own event: the session
    /// does not destroy it).
    fn ipc_import_event(&self, share: &IpcEventShare, device: DeviceIndex) -> Result<EventHandle, BackendError> {
        let _ = device;
        match share {
            IpcEventShare::Handle(event) => Ok(*event),
            IpcEventShare::Fd(_) | IpcEventShare::Driver(_) => Err(no_other_processes("events")),
        }
    }
}
