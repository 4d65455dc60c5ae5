//! IPC of the hip backend.
//!
//! * **One process** (`--isolation shared`, [`IpcReach::ThisProcess`]): every session runs in
//!   the worker's one process, so an exported allocation or event is shared as the exporter's
//!   own pointer or event; the loaded runtime's `hipIpcOpenMemHandle` refuses a handle of its
//!   own process (`hipErrorInvalidContext`). The session keeps them alive until the last
//!   importer closes them.
//! * **Session processes** (`--isolation process`, [`IpcReach::OtherProcesses`]): as native
//!   HIP processes do. `hipMalloc` memory goes through the runtime's `hipIpcGetMemHandle` /
//!   `hipIpcOpenMemHandle(hipIpcMemLazyEnablePeerAccess)` / `hipIpcCloseMemHandle` (the
//!   64-byte handle names the whole allocation); a virtual-memory mapping (client-placed
//!   `hipMalloc` memory) is exported as a POSIX file descriptor of its physical memory
//!   (`hipMemExportToShareableHandle`), imported and mapped by the importer. A runtime without
//!   these entry points answers `hipErrorNotSupported` naming the one it lacks.
//! * **Interprocess events between session processes** get a shared page
//!   ([`SharedEventPage`]) rather than `hipIpcGetEventHandle`, whose events live in
//!   `/dev/shm` (out of a confined process's reach, and common to every tenant's processes):
//!   registered with `hipHostRegister`, written by `hipStreamWriteValue64` when a stream
//!   reaches a record, waited on with `hipStreamWaitValue64(>=)`, polled by queries and
//!   synchronizes (the CUDA backend's `ipc.rs` says more).

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;

use super::vmm::{entry, host_len, MemAccessDesc, MemLocation, LOCATION_TYPE_DEVICE};
use super::{lock, EventEntry, HipBackend, Raw};
use crate::backend::{
    BackendError, DeviceIndex, DevicePtr, DriverIpcHandle, EventHandle, IpcBackend, IpcEventShare, IpcReach, IpcShare, SharedEventPage,
    DRIVER_IPC_HANDLE_BYTES,
};

/// `hipIpcMemHandle_t` and `hipIpcEventHandle_t` (both 64 reserved bytes), passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct IpcHandle {
    reserved: [c_char; DRIVER_IPC_HANDLE_BYTES],
}

impl IpcHandle {
    fn of(handle: &DriverIpcHandle) -> Self {
        Self { reserved: handle.0.map(|b| b as c_char) }
    }

    pub(super) fn zeroed() -> Self {
        Self { reserved: [0; DRIVER_IPC_HANDLE_BYTES] }
    }

    fn bytes(&self) -> DriverIpcHandle {
        DriverIpcHandle(self.reserved.map(|c| c as u8))
    }
}

/// `hipIpcMemLazyEnablePeerAccess`.
const IPC_MEM_LAZY_ENABLE_PEER_ACCESS: u32 = 1;
/// `hipMemHandleTypePosixFileDescriptor`.
pub(super) const HANDLE_TYPE_POSIX_FD: c_int = 1;
/// `hipMemAccessFlagsProtReadWrite`.
const ACCESS_READ_WRITE: u32 = 3;

/// `hipStreamWaitValueGte`.
const WAIT_VALUE_GEQ: u32 = 0;

/// An interprocess event's shared page as this process's device sees it.
pub(super) struct EventPage {
    pub(super) page: SharedEventPage,
    /// The page's device address (registered with `hipHostRegister`).
    device_address: u64,
}

/// Interprocess events with a shared page, by event handle.
pub(super) type EventPages = HashMap<u64, Arc<EventPage>>;

/// How this process opened another's memory.
#[derive(Debug, Clone, Copy)]
pub(super) enum Opened {
    /// `hipIpcOpenMemHandle`: closed with `hipIpcCloseMemHandle`.
    IpcHandle,
    /// Imported physical memory mapped into a reservation of `len` bytes.
    Mapped { len: u64 },
}

/// Memory this backend opened from other processes, by base address.
pub(super) type OpenedTable = HashMap<u64, (Opened, DeviceIndex)>;

/// The device address of `page`'s "reached" counter.
fn device_word(page: &EventPage) -> u64 {
    page.device_address.wrapping_add(SharedEventPage::COMPLETED_OFFSET)
}

/// A runtime refusal to open memory, as ROCm answers a handle it cannot attach
/// (`hipErrorInvalidDevicePointer`); running out of memory or entry points stays itself.
fn not_attachable(e: BackendError) -> BackendError {
    match e {
        BackendError::OutOfMemory(_) | BackendError::NotSupported(_) => e,
        other => BackendError::InvalidDevicePointer(format!("the exported memory cannot be opened (its exporter may be gone): {other}")),
    }
}

impl HipBackend {
    /// Registers `page` with the runtime on `dev`.
    fn register_event_page(&self, page: SharedEventPage, dev: DeviceIndex) -> Result<EventPage, BackendError> {
        entry(self.api.hipHostRegister, "hipHostRegister")?;
        entry(self.api.hipHostUnregister, "hipHostUnregister")?;
        entry(self.api.hipHostGetDevicePointer, "hipHostGetDevicePointer")?;
        entry(self.api.hipStreamWriteValue64, "hipStreamWriteValue64")?;
        entry(self.api.hipStreamWaitValue64, "hipStreamWaitValue64")?;
        self.enter(dev)?;
        let host = page.host_address() as *mut c_void;
        // SAFETY: a mapping of a page that outlives the registration (unregistered in
        // `drop_event_page`, or below, before the mapping goes).
        unsafe { self.api.host_register(host, crate::backend::EVENT_PAGE_BYTES as usize, super::HOST_REGISTER_PORTABLE_MAPPED) }?;
        match self.api.host_get_device_pointer(host) {
            Ok(device_address) => Ok(EventPage { page, device_address }),
            Err(e) => {
                // Registered above, known to nobody else.
                let _ = self.api.host_unregister(host);
                Err(e.into())
            }
        }
    }

    /// The shared page of `event`, if it was exported to or opened from another process.
    pub(super) fn event_page(&self, event: EventHandle) -> Option<Arc<EventPage>> {
        lock(&self.event_pages).get(&event.as_raw()).cloned()
    }

    /// Unregisters and forgets `event`'s page (`event_destroy`).
    pub(super) fn drop_event_page(&self, event: EventHandle, dev: DeviceIndex) {
        let Some(page) = lock(&self.event_pages).remove(&event.as_raw()) else { return };
        if self.api.hipHostUnregister.is_none() {
            return;
        }
        if self.enter(dev).is_ok() {
            if !page.page.complete() {
                // A record of this process's may still be on its way to the page: the
                // device must not write it once it is unregistered and unmapped.
                let _ = self.api.device_synchronize();
            }
            // Registered in `register_event_page`; unmapped only when `page` drops.
            let _ = self.api.host_unregister(page.page.host_address() as *mut c_void);
        }
    }

    /// Records `page` on `stream`: the next record number, reached when the stream gets
    /// there.
    pub(super) fn record_event_page(&self, page: &EventPage, stream: super::Stream) -> Result<(), BackendError> {
        entry(self.api.hipStreamWriteValue64, "hipStreamWriteValue64")?;
        let n = page.page.next_record();
        // A live stream of the current device; the registered page's device address.
        let written = self.api.stream_write_value64(stream, device_word(page), n);
        if written.is_err() {
            // Never reached otherwise: waiters would wait for good.
            page.page.mark_reached(n);
        }
        Ok(written?)
    }

    /// Makes `stream` wait for the latest record of `page`.
    pub(super) fn stream_wait_event_page(&self, page: &EventPage, stream: super::Stream) -> Result<(), BackendError> {
        entry(self.api.hipStreamWaitValue64, "hipStreamWaitValue64")?;
        let n = page.page.latest();
        if page.page.reached(n) {
            return Ok(());
        }
        // A live stream of the current device; the registered page's device address.
        Ok(self.api.stream_wait_value64(stream, device_word(page), n, WAIT_VALUE_GEQ, u64::MAX)?)
    }

    /// Exports the virtual-memory mapping at `base` as a file descriptor of its physical
    /// memory.
    fn export_mapping(&self, base: DevicePtr, size: u64, dev: DeviceIndex) -> Result<IpcShare, BackendError> {
        entry(self.api.hipMemRetainAllocationHandle, "hipMemRetainAllocationHandle")?;
        entry(self.api.hipMemExportToShareableHandle, "hipMemExportToShareableHandle")?;
        entry(self.api.hipMemRelease, "hipMemRelease")?;
        self.enter(dev)?;
        // `base` starts a mapping of this backend.
        let physical = self.api.mem_retain_allocation_handle(base.0)?;
        let exported = self.api.mem_export_fd(physical);
        // The reference taken by the retain above; the mapping keeps its own.
        let released = self.api.mem_release(physical);
        let fd = exported?;
        released?;
        Ok(IpcShare::Fd { fd: Arc::new(fd), len: size })
    }

    /// Imports physical memory shared as `fd` and maps its `len` bytes into a reservation
    /// of this process, read-write from `dev`; answers the mapping's base.
    fn import_mapping(&self, fd: &OwnedFd, len: u64, dev: DeviceIndex) -> Result<DevicePtr, BackendError> {
        entry(self.api.hipMemImportFromShareableHandle, "hipMemImportFromShareableHandle")?;
        entry(self.api.hipMemAddressReserve, "hipMemAddressReserve")?;
        entry(self.api.hipMemAddressFree, "hipMemAddressFree")?;
        entry(self.api.hipMemMap, "hipMemMap")?;
        entry(self.api.hipMemUnmap, "hipMemUnmap")?;
        entry(self.api.hipMemRelease, "hipMemRelease")?;
        entry(self.api.hipMemSetAccess, "hipMemSetAccess")?;
        let bytes = host_len(len)?;
        let desc = MemAccessDesc { location: MemLocation { kind: LOCATION_TYPE_DEVICE, id: self.ordinal(dev)? }, flags: ACCESS_READ_WRITE };
        self.enter(dev)?;
        let physical = self.api.mem_import_fd(fd.as_fd())?;
        let mapped = self.api.mem_address_reserve(bytes, 0).and_then(|base| {
            // A fresh reservation of `bytes` and a live physical handle (the runtime checks
            // its size).
            self.api.mem_map(base, bytes, physical).map(|()| base).inspect_err(|_| {
                // The reservation made above, with nothing mapped.
                let _ = self.api.mem_address_free(base, bytes);
            })
        });
        // The import's reference; a mapping made above keeps its own.
        let _ = self.api.mem_release(physical);
        let base = mapped?;
        if let Err(e) = self.api.mem_set_access(base, bytes, &desc) {
            // The mapping and reservation made above, known to nobody else.
            let _ = self.api.mem_unmap(base, bytes);
            let _ = self.api.mem_address_free(base, bytes);
            return Err(e.into());
        }
        Ok(DevicePtr(base))
    }
}

impl IpcBackend for HipBackend {
    fn ipc_export_memory(&self, base: DevicePtr, size: u64, reach: IpcReach) -> Result<IpcShare, BackendError> {
        if reach == IpcReach::ThisProcess {
            return Ok(IpcShare::Pointer(base));
        }
        let allocated = lock(&self.allocations).get(&base.0).map(|(_, dev)| *dev);
        if let Some(dev) = allocated {
            entry(self.api.hipIpcGetMemHandle, "hipIpcGetMemHandle")?;
            self.enter(dev)?;
            // `base` is a live allocation of this runtime.
            return Ok(IpcShare::Driver(self.api.ipc_get_mem_handle(base.0)?.bytes()));
        }
        let mapped = lock(&self.globals).get(&base.0).map(|(_, dev)| *dev);
        match mapped {
            Some(dev) if !lock(&self.ipc_opened).contains_key(&base.0) => self.export_mapping(base, size, dev),
            _ => Err(BackendError::InvalidValue(format!("{base} is not the start of memory this process allocated"))),
        }
    }

    fn ipc_import_memory(&self, share: &IpcShare, size: u64, device: DeviceIndex) -> Result<DevicePtr, BackendError> {
        let (base, opened) = match share {
            IpcShare::Pointer(ptr) => return Ok(*ptr),
            IpcShare::Driver(handle) => {
                entry(self.api.hipIpcOpenMemHandle, "hipIpcOpenMemHandle")?;
                self.enter(device)?;
                let base =
                    self.api.ipc_open_mem_handle(IpcHandle::of(handle), IPC_MEM_LAZY_ENABLE_PEER_ACCESS).map_err(|e| not_attachable(e.into()))?;
                (base, Opened::IpcHandle)
            }
            IpcShare::Fd { fd, len } => {
                if size > *len {
                    return Err(BackendError::InvalidValue(format!("{size} bytes do not fit the shared {len}")));
                }
                (self.import_mapping(fd, *len, device).map_err(not_attachable)?.0, Opened::Mapped { len: *len })
            }
        };
        lock(&self.ipc_opened).insert(base, (opened, device));
        // Copies find its device among the never-freeable ranges.
        lock(&self.globals).insert(base, (size, device));
        Ok(DevicePtr(base))
    }

    fn ipc_close_memory(&self, base: DevicePtr) -> Result<(), BackendError> {
        let Some((opened, dev)) = lock(&self.ipc_opened).remove(&base.0) else {
            // A pointer of this process's own (one-process sharing): nothing was mapped.
            return Ok(());
        };
        lock(&self.globals).remove(&base.0);
        self.enter(dev)?;
        match opened {
            Opened::IpcHandle => {
                // Memory opened with hipIpcOpenMemHandle, closed once (removed above).
                Ok(self.api.ipc_close_mem_handle(base.0)?)
            }
            Opened::Mapped { len } => {
                entry(self.api.hipMemUnmap, "hipMemUnmap")?;
                entry(self.api.hipMemAddressFree, "hipMemAddressFree")?;
                let bytes = host_len(len)?;
                // The mapping and reservation `import_mapping` made, released once.
                self.api.mem_unmap(base.0, bytes)?;
                Ok(self.api.mem_address_free(base.0, bytes)?)
            }
        }
    }

    fn ipc_export_event(&self, event: EventHandle, reach: IpcReach) -> Result<IpcEventShare, BackendError> {
        if reach == IpcReach::ThisProcess {
            return Ok(IpcEventShare::Handle(event));
        }
        if let Some(page) = self.event_page(event) {
            return Ok(IpcEventShare::Fd(Arc::clone(page.page.fd())));
        }
        let (raw, device, recorded) = self.event_entry(event)?;
        if recorded {
            // Records made before the export live in the runtime's event only: the page
            // starts where they are reached.
            self.enter(device)?;
            self.api.event_synchronize(raw.0)?;
        }
        let page = Arc::new(self.register_event_page(SharedEventPage::create()?, device)?);
        lock(&self.event_pages).insert(event.as_raw(), Arc::clone(&page));
        Ok(IpcEventShare::Fd(Arc::clone(page.page.fd())))
    }

    fn ipc_import_event(&self, share: &IpcEventShare, device: DeviceIndex) -> Result<EventHandle, BackendError> {
        let fd = match share {
            IpcEventShare::Handle(event) => return Ok(*event),
            IpcEventShare::Fd(fd) => Arc::clone(fd),
        };
        let page = Arc::new(self.register_event_page(SharedEventPage::open(fd)?, device)?);
        // A runtime event of its own, so every event path finds one; the page decides
        // completion. Interprocess events have no timing.
        // The device is current (entered above).
        let raw = match self.api.event_create_with_flags(super::EVENT_DISABLE_TIMING) {
            Ok(raw) => raw,
            Err(e) => {
                // Registered by `register_event_page`, known to nobody else.
                let _ = self.api.host_unregister(page.page.host_address() as *mut c_void);
                return Err(e.into());
            }
        };
        let id = self.handle();
        lock(&self.events).insert(id, EventEntry { raw: Raw(raw), device, timing: false, recorded: false, completions_before: 0 });
        lock(&self.event_pages).insert(id, page);
        Ok(EventHandle::from_raw(id))
    }
}
