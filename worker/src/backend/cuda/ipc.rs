//! IPC of the CUDA backend.
//!
//! * **One process** (`--isolation shared`, [`IpcReach::ThisProcess`]): every session runs in
//!   the worker's one process and CUDA context, so an exported allocation or event is shared
//!   as the exporter's own pointer or event (`cuIpcOpenMemHandle` cannot open a handle of its
//!   own process). The session keeps them alive until the last importer closes them.
//! * **Session processes** (`--isolation process`, [`IpcReach::OtherProcesses`]): as native
//!   CUDA processes do. `cuMemAlloc` memory is exported with `cuIpcGetMemHandle` and opened
//!   with `cuIpcOpenMemHandle(CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)`; a virtual-memory mapping
//!   (client-placed `hipMalloc` memory, which `cuIpcGetMemHandle` refuses) is exported as a
//!   POSIX file descriptor of its physical memory (`cuMemExportToShareableHandle`), which the
//!   importer imports, maps into a reservation of its own and makes accessible. Stream-ordered
//!   (`cuMemAllocAsync`) memory comes from the device's default pool, which cannot export:
//!   refused with `hipErrorNotSupported`.
//! * **Interprocess events between session processes** do not use `cuIpcGetEventHandle`: the
//!   driver implements those with files in `/dev/shm`, which a confined session process
//!   cannot reach (and which would be common to every tenant's processes). An exported event
//!   gets a shared page instead ([`EventPage`], the host backend's design): a memory file of
//!   two counters, records made and the highest record reached, registered with the driver so
//!   a stream writes it. Recording takes the next number and queues `cuStreamWriteValue64`
//!   of it (behind a memory fence, so the stream's earlier writes are visible first); a query
//!   compares the counters, a synchronize polls them, a stream wait queues
//!   `cuStreamWaitValue64(>=)`. The page travels to the importer as a descriptor, through the
//!   worker's registry.
//!
//! The driver keeps exported memory alive for the processes that opened it, so an exporter's
//! free or exit leaves their mappings valid until they close them (the registry no longer
//! hands out the handle).

use std::collections::HashMap;
use std::ffi::c_void;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;

use super::{lock, result, sys, CudaBackend, EventEntry, Raw};
use crate::backend::{
    BackendError, DeviceIndex, DevicePtr, DriverIpcHandle, EventHandle, IpcBackend, IpcEventShare, IpcReach, IpcShare, SharedEventPage,
    DRIVER_IPC_HANDLE_BYTES, EVENT_PAGE_BYTES,
};

/// How this process opened another's memory.
#[derive(Debug, Clone, Copy)]
pub(super) enum Opened {
    /// `cuIpcOpenMemHandle`: closed with `cuIpcCloseMemHandle`.
    IpcHandle,
    /// Imported physical memory mapped into a reservation of `len` bytes: unmapped and freed.
    Mapped { len: u64 },
}

/// Memory this backend opened from other processes, by base address.
pub(super) type OpenedTable = HashMap<u64, (Opened, DeviceIndex)>;

/// An interprocess event's shared page as this process's device sees it (module
/// documentation).
pub(super) struct EventPage {
    page: SharedEventPage,
    /// The page's device address (registered with `cuMemHostRegister`).
    device_address: sys::CUdeviceptr,
}

/// Interprocess events with a shared page, by event handle.
pub(super) type EventPages = HashMap<u64, Arc<EventPage>>;

fn to_c(bytes: [u8; DRIVER_IPC_HANDLE_BYTES]) -> [std::ffi::c_char; DRIVER_IPC_HANDLE_BYTES] {
    bytes.map(|b| b as std::ffi::c_char)
}

fn from_c(raw: [std::ffi::c_char; DRIVER_IPC_HANDLE_BYTES]) -> DriverIpcHandle {
    DriverIpcHandle(raw.map(|c| c as u8))
}

/// A driver refusal to open memory, as ROCm answers a handle it cannot attach
/// (`hipErrorInvalidDevicePointer`); running out of memory stays itself.
fn not_attachable(e: BackendError) -> BackendError {
    match e {
        BackendError::OutOfMemory(_) => e,
        other => BackendError::InvalidDevicePointer(format!("the exported memory cannot be opened (its exporter may be gone): {other}")),
    }
}

impl CudaBackend {
    /// Registers `page` with the driver on `dev`.
    fn register_event_page(&self, page: SharedEventPage, dev: DeviceIndex) -> Result<EventPage, BackendError> {
        self.enter(dev)?;
        let host = page.host_address() as *mut c_void;
        let flags = sys::CU_MEMHOSTREGISTER_PORTABLE | sys::CU_MEMHOSTREGISTER_DEVICEMAP;
        // SAFETY: a mapping of EVENT_PAGE_BYTES that outlives the registration (unregistered
        // in `drop_event_page`, or below, before the mapping goes).
        unsafe { result::host::register(host, EVENT_PAGE_BYTES as usize, flags) }?;
        match result::host::device_pointer(host) {
            Ok(device_address) => Ok(EventPage { page, device_address }),
            Err(e) => {
                // Registered above, known to nobody else.
                let _ = result::host::unregister(host);
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
        if self.enter(dev).is_ok() {
            if !page.page.complete() {
                // A record of this process's may still be on its way to the page: the
                // device must not write it once it is unregistered and unmapped.
                let _ = result::ctx::synchronize();
            }
            // Registered in `register_event_page`; the page is unmapped only when `page`
            // drops, after this.
            let _ = result::host::unregister(page.page.host_address() as *mut c_void);
        }
    }

    /// Records `page` on `stream`: the next record number, reached when the stream gets
    /// there.
    pub(super) fn record_event_page(&self, page: &EventPage, stream: sys::CUstream) -> Result<(), BackendError> {
        let n = page.page.next_record();
        let completed = page.device_address + SharedEventPage::COMPLETED_OFFSET;
        // A live stream of the current context; the page registered on it. Flags 0: the
        // write follows a memory fence.
        let written = result::stream_op::write64(stream, completed, n);
        if written.is_err() {
            // Never reached otherwise: waiters would wait for good.
            page.page.mark_reached(n);
        }
        Ok(written?)
    }

    /// Whether the latest record of `page` has been reached.
    pub(super) fn event_page_complete(page: &EventPage) -> bool {
        page.page.complete()
    }

    /// Waits on the host for the latest record of `page`.
    pub(super) fn wait_event_page(page: &EventPage) {
        page.page.wait();
    }

    /// Makes `stream` wait for the latest record of `page`.
    pub(super) fn stream_wait_event_page(&self, page: &EventPage, stream: sys::CUstream) -> Result<(), BackendError> {
        let n = page.page.latest();
        if page.page.reached(n) {
            return Ok(());
        }
        let completed = page.device_address + SharedEventPage::COMPLETED_OFFSET;
        // A live stream of the current context; the page registered on it. Flags 0:
        // CU_STREAM_WAIT_VALUE_GEQ.
        Ok(result::stream_op::wait64(stream, completed, n, 0)?)
    }

    /// Exports the virtual-memory mapping at `base` (`size` bytes) as a file descriptor of
    /// its physical memory.
    fn export_mapping(&self, base: DevicePtr, size: u64, dev: DeviceIndex) -> Result<IpcShare, BackendError> {
        self.enter(dev)?;
        // `base` is the start of a mapping of this backend.
        let physical = result::shareable::retain(base.0)?;
        let exported = result::shareable::export_fd(physical);
        // Releases the reference the retain took; the mapping keeps its own.
        let released = result::vmm::release(physical);
        let fd = exported.map_err(|e| match BackendError::from(e) {
            BackendError::InvalidValue(m) | BackendError::NotSupported(m) => BackendError::NotSupported(format!(
                "{m} (this memory was created without a shareable handle type: the driver lacks POSIX descriptor support)"
            )),
            other => other,
        })?;
        released?;
        Ok(IpcShare::Fd { fd: Arc::new(fd), len: size })
    }

    /// Imports physical memory shared as `fd` and maps its `len` bytes into a reservation
    /// of this process, accessible from `dev`; answers the mapping's base.
    fn import_mapping(&self, fd: &OwnedFd, len: u64, dev: DeviceIndex) -> Result<DevicePtr, BackendError> {
        let bytes = usize::try_from(len).map_err(|_| BackendError::InvalidValue(format!("{len} bytes exceed the address space")))?;
        let location = self.allocation_prop(dev)?.location;
        self.enter(dev)?;
        let physical = result::shareable::import_fd(fd.as_fd())?;
        // A context is current.
        let mapped = result::vmm::reserve(bytes, 0).and_then(|base| {
            // A fresh reservation of `bytes` and a live physical handle of at least that size
            // (the driver checks).
            result::vmm::map(base, bytes, physical).map(|()| base).inspect_err(|_| {
                // The reservation made above, with nothing mapped.
                let _ = result::vmm::free_reservation(base, bytes);
            })
        });
        // The import's reference; a mapping made above keeps its own.
        let _ = result::vmm::release(physical);
        let base = mapped?;
        let access = sys::CUmemAccessDesc { location, flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
        if let Err(e) = result::vmm::set_access(base, bytes, &access) {
            // The mapping and reservation made above, not yet known to anyone.
            let _ = result::vmm::unmap(base, bytes);
            let _ = result::vmm::free_reservation(base, bytes);
            return Err(e.into());
        }
        Ok(DevicePtr(base))
    }
}

impl IpcBackend for CudaBackend {
    fn ipc_export_memory(&self, base: DevicePtr, size: u64, reach: IpcReach) -> Result<IpcShare, BackendError> {
        if reach == IpcReach::ThisProcess {
            return Ok(IpcShare::Pointer(base));
        }
        if lock(&self.pool_allocations).contains(&base.0) {
            return Err(BackendError::NotSupported(
                "stream-ordered memory (hipMallocAsync) comes from the device's default pool, which cannot be shared with another \
                 process: share hipMalloc memory"
                    .into(),
            ));
        }
        let allocated = lock(&self.allocations).get(&base.0).map(|(_, dev)| *dev);
        if let Some(dev) = allocated {
            self.enter(dev)?;
            // `base` is a live cuMemAlloc allocation of this context (the handle names the
            // whole allocation).
            return Ok(IpcShare::Driver(from_c(result::ipc::get_mem_handle(base.0)?)));
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
                self.enter(device)?;
                let flags = sys::CUipcMem_flags::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS as u32;
                let base = result::ipc::open_mem_handle(to_c(handle.0), flags).map_err(|e| not_attachable(e.into()))?;
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
            // Memory this backend opened with cuIpcOpenMemHandle, closed once (removed from
            // the table above); the session let queued work on it finish.
            Opened::IpcHandle => Ok(result::ipc::close_mem_handle(base.0)?),
            Opened::Mapped { len } => {
                let bytes = usize::try_from(len).map_err(|_| BackendError::InvalidValue(format!("{len} bytes")))?;
                // The mapping and reservation `import_mapping` made, released once.
                result::vmm::unmap(base.0, bytes)?;
                Ok(result::vmm::free_reservation(base.0, bytes)?)
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
            // Records made before the export live in the driver's event only: the page
            // starts where they are reached.
            self.enter(device)?;
            result::event::synchronize(raw.0)?;
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
        // A driver event of its own, so every event path finds one; the page decides
        // completion. Interprocess events have no timing.
        // The device's context is current (entered above).
        let raw = match result::event::create(crate::backend::event_flags::DISABLE_TIMING) {
            Ok(raw) => raw,
            Err(e) => {
                // Registered by `register_event_page`, known to nobody else.
                let _ = result::host::unregister(page.page.host_address() as *mut c_void);
                return Err(e.into());
            }
        };
        let id = self.handle();
        let entry = EventEntry { raw: Raw(raw), device, stream: super::device_log::stream_key(None), timing: false, recorded: false };
        lock(&self.events).insert(id, entry);
        lock(&self.event_pages).insert(id, page);
        Ok(EventHandle::from_raw(id))
    }
}
