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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

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
    /// A shared page of completion counters: the host backend's interprocess events, and a
    /// GPU backend's between session processes ([`SharedEventPage`]).
    Fd(Arc<OwnedFd>),
    /// The exporter's own event, valid in every session of this process.
    Handle(EventHandle),
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
            IpcEventShare::Fd(_) => Err(no_other_processes("events")),
        }
    }
}

/// Bytes of an interprocess event's shared page (two counters, alone in a page).
pub const EVENT_PAGE_BYTES: u64 = 4096;
/// How often a host wait on an interprocess event's record looks at its counters.
pub const EVENT_PAGE_POLL: Duration = Duration::from_micros(50);

/// The shared counters of an interprocess event that GPU session processes share (the
/// drivers' own interprocess events live in `/dev/shm`, which a confined session process
/// cannot reach): records made, and the highest record a stream has reached. A GPU backend
/// registers the page with its driver and has streams write [`Self::COMPLETED_OFFSET`]
/// (stream memory operations); any process holding the descriptor maps the same counters.
#[derive(Debug)]
pub struct SharedEventPage {
    fd: Arc<OwnedFd>,
    mapping: super::host::SharedMapping,
}

impl SharedEventPage {
    /// Offset of the "reached" counter in the page, which streams write.
    pub const COMPLETED_OFFSET: u64 = 8;

    /// A fresh page: nothing recorded.
    pub fn create() -> Result<Self, BackendError> {
        let fd = super::host::memory_file(EVENT_PAGE_BYTES as usize)
            .map_err(|e| BackendError::OutOfMemory(format!("an interprocess event's page: {e}")))?;
        Self::open(Arc::new(fd))
    }

    /// Maps the page in `fd` (possibly another process's: it must be a sealed memory file of
    /// a whole page, so the mapping can never fault).
    pub fn open(fd: Arc<OwnedFd>) -> Result<Self, BackendError> {
        super::host::check_memory_file(&fd, EVENT_PAGE_BYTES)?;
        let mapping = super::host::SharedMapping::new(&fd, EVENT_PAGE_BYTES)?;
        Ok(Self { fd, mapping })
    }

    /// The memory file, for another process.
    pub fn fd(&self) -> &Arc<OwnedFd> {
        &self.fd
    }

    /// Where the page is mapped in this process.
    pub fn host_address(&self) -> u64 {
        self.mapping.address()
    }

    fn counter(&self, index: usize) -> &AtomicU64 {
        // SAFETY: the page is mapped for EVENT_PAGE_BYTES while `self` lives, page-aligned,
        // and accessed only through these atomics (hosts) and stream memory operations
        // (devices).
        unsafe { &*(self.mapping.address() as *const AtomicU64).add(index) }
    }

    /// Takes the next record number.
    pub fn next_record(&self) -> u64 {
        self.counter(0).fetch_add(1, Ordering::AcqRel) + 1
    }

    /// Marks record `n` reached from the host (a record whose stream write failed, so no
    /// waiter waits for good).
    pub fn mark_reached(&self, n: u64) {
        self.counter(1).fetch_max(n, Ordering::AcqRel);
    }

    /// The record a query or wait issued now looks for.
    pub fn latest(&self) -> u64 {
        self.counter(0).load(Ordering::Acquire)
    }

    /// Whether record `n` has been reached.
    pub fn reached(&self, n: u64) -> bool {
        self.counter(1).load(Ordering::Acquire) >= n
    }

    /// Whether the latest record has been reached (`hipEventQuery`).
    pub fn complete(&self) -> bool {
        self.reached(self.latest())
    }

    /// Waits on the host for the latest record (`hipEventSynchronize`).
    pub fn wait(&self) {
        let n = self.latest();
        while !self.reached(n) {
            std::thread::sleep(EVENT_PAGE_POLL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_page_is_one_set_of_counters_for_every_holder() {
        let exporter = SharedEventPage::create().unwrap();
        // Another process maps the same memory file.
        let importer = SharedEventPage::open(Arc::clone(exporter.fd())).unwrap();
        assert_ne!(exporter.host_address(), importer.host_address());
        assert!(exporter.complete() && importer.complete(), "never recorded: complete");
        let first = importer.next_record();
        let second = exporter.next_record();
        assert_eq!((first, second), (1, 2));
        assert!(!exporter.complete() && !importer.complete());
        // A stream reaching record 1 leaves record 2 pending; reaching 2 completes both.
        exporter.mark_reached(first);
        assert!(importer.reached(first) && !importer.complete());
        importer.mark_reached(second);
        exporter.wait();
        assert!(exporter.complete());
        // The reached counter never goes back.
        exporter.mark_reached(first);
        assert!(importer.reached(second));
        // What another process sends must be a sealed page-sized memory file.
        let small = Arc::new(crate::backend::host::test_memory_file(64));
        assert!(SharedEventPage::open(small).is_err());
    }
}
