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
use std::ffi::{c_int, c_void};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;

use super::error::Check;
use super::{lock, sys, CudaBackend, EventEntry, Raw};
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
        unsafe { sys::cuMemHostRegister_v2(host, EVENT_PAGE_BYTES as usize, flags) }.check("cuMemHostRegister")?;
        let mut device_address = 0;
        // SAFETY: a valid out-pointer; the page registered above.
        if let Err(e) = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device_address, host, 0) }.check("cuMemHostGetDevicePointer") {
            // SAFETY: registered above, known to nobody else.
            unsafe { sys::cuMemHostUnregister(host) };
            return Err(e);
        }
        Ok(EventPage { page, device_address })
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
                // SAFETY: the context entered above.
                let _ = unsafe { sys::cuCtxSynchronize() }.check("cuCtxSynchronize");
            }
            // SAFETY: registered in `register_event_page`; the page is unmapped only when
            // `page` drops, after this.
            unsafe { sys::cuMemHostUnregister(page.page.host_address() as *mut c_void) };
        }
    }

    /// Records `page` on `stream`: the next record number, reached when the stream gets
    /// there.
    pub(super) fn record_event_page(&self, page: &EventPage, stream: sys::CUstream) -> Result<(), BackendError> {
        let n = page.page.next_record();
        let completed = page.device_address + SharedEventPage::COMPLETED_OFFSET;
        // SAFETY: a live stream of the current context; the page registered on it. Flags 0:
        // the write follows a memory fence.
        let written = unsafe { sys::cuStreamWriteValue64_v2(stream, completed, n, 0) }.check("cuStreamWriteValue64");
        if written.is_err() {
            // Never reached otherwise: waiters would wait for good.
            page.page.mark_reached(n);
        }
        written
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
        // SAFETY: a live stream of the current context; the page registered on it. Flags 0:
        // CU_STREAM_WAIT_VALUE_GEQ.
        unsafe { sys::cuStreamWaitValue64_v2(stream, completed, n, 0) }.check("cuStreamWaitValue64")
    }

    /// Exports the virtual-memory mapping at `base` (`size` bytes) as a file descriptor of
    /// its physical memory.
    fn export_mapping(&self, base: DevicePtr, size: u64, dev: DeviceIndex) -> Result<IpcShare, BackendError> {
        self.enter(dev)?;
        let mut physical = 0;
        // SAFETY: a valid out-pointer; `base` is the start of a mapping of this backend.
        unsafe { sys::cuMemRetainAllocationHandle(&mut physical, base.0 as *mut c_void) }.check("cuMemRetainAllocationHandle")?;
        let mut fd: c_int = -1;
        // SAFETY: for POSIX descriptors the shareable handle is an `int` written through the
        // pointer; `physical` is live (retained above).
        let exported = unsafe {
            sys::cuMemExportToShareableHandle(
                (&mut fd as *mut c_int).cast(),
                physical,
                sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                0,
            )
        }
        .check("cuMemExportToShareableHandle");
        // SAFETY: releases the reference `cuMemRetainAllocationHandle` took; the mapping keeps
        // its own.
        let released = unsafe { sys::cuMemRelease(physical) }.check("cuMemRelease");
        exported.map_err(|e| match e {
            BackendError::InvalidValue(m) | BackendError::NotSupported(m) => BackendError::NotSupported(format!(
                "{m} (this memory was created without a shareable handle type: the driver lacks POSIX descriptor support)"
            )),
            other => other,
        })?;
        // SAFETY: a fresh descriptor the driver created for this call, owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        released?;
        Ok(IpcShare::Fd { fd: Arc::new(fd), len: size })
    }

    /// Imports physical memory shared as `fd` and maps its `len` bytes into a reservation
    /// of this process, accessible from `dev`; answers the mapping's base.
    fn import_mapping(&self, fd: &OwnedFd, len: u64, dev: DeviceIndex) -> Result<DevicePtr, BackendError> {
        let bytes = usize::try_from(len).map_err(|_| BackendError::InvalidValue(format!("{len} bytes exceed the address space")))?;
        let location = self.allocation_prop(dev)?.location;
        self.enter(dev)?;
        let mut physical = 0;
        // SAFETY: for POSIX descriptors the OS handle is the descriptor's number cast to a
        // pointer; the driver dups what it keeps.
        unsafe {
            sys::cuMemImportFromShareableHandle(
                &mut physical,
                fd.as_raw_fd() as isize as *mut c_void,
                sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
            )
        }
        .check("cuMemImportFromShareableHandle")?;
        let mut base = 0;
        // SAFETY: a valid out-pointer; a context is current.
        let mapped = unsafe { sys::cuMemAddressReserve(&mut base, bytes, 0, 0, 0) }.check("cuMemAddressReserve").and_then(|()| {
            // SAFETY: a fresh reservation of `bytes` and a live physical handle of at least
            // that size (the driver checks).
            unsafe { sys::cuMemMap(base, bytes, 0, physical, 0) }.check("cuMemMap").inspect_err(|_| {
                // SAFETY: the reservation made above, with nothing mapped.
                unsafe { sys::cuMemAddressFree(base, bytes) };
            })
        });
        // SAFETY: the import's reference; a mapping made above keeps its own.
        unsafe { sys::cuMemRelease(physical) };
        mapped?;
        let access = sys::CUmemAccessDesc { location, flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
        // SAFETY: one valid descriptor; the mapping made above.
        if let Err(e) = unsafe { sys::cuMemSetAccess(base, bytes, &access, 1) }.check("cuMemSetAccess") {
            // SAFETY: the mapping and reservation made above, not yet known to anyone.
            unsafe {
                sys::cuMemUnmap(base, bytes);
                sys::cuMemAddressFree(base, bytes);
            }
            return Err(e);
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
            // SAFETY: a plain C struct; all-zero is a valid value to overwrite.
            let mut handle: sys::CUipcMemHandle = unsafe { std::mem::zeroed() };
            // SAFETY: a valid out-pointer; `base` is a live cuMemAlloc allocation of this
            // context (the handle names the whole allocation).
            unsafe { sys::cuIpcGetMemHandle(&mut handle, base.0) }.check("cuIpcGetMemHandle")?;
            return Ok(IpcShare::Driver(from_c(handle.reserved)));
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
                let handle = sys::CUipcMemHandle { reserved: to_c(handle.0) };
                let mut base = 0;
                // SAFETY: a valid out-pointer; the handle's bytes are the driver's to check.
                unsafe { sys::cuIpcOpenMemHandle_v2(&mut base, handle, sys::CUipcMem_flags::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS as u32) }
                    .check("cuIpcOpenMemHandle")
                    .map_err(not_attachable)?;
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
            // SAFETY: memory this backend opened with cuIpcOpenMemHandle, closed once (removed
            // from the table above); the session let queued work on it finish.
            Opened::IpcHandle => unsafe { sys::cuIpcCloseMemHandle(base.0) }.check("cuIpcCloseMemHandle"),
            Opened::Mapped { len } => {
                let bytes = usize::try_from(len).map_err(|_| BackendError::InvalidValue(format!("{len} bytes")))?;
                // SAFETY: the mapping and reservation `import_mapping` made, released once.
                unsafe { sys::cuMemUnmap(base.0, bytes) }.check("cuMemUnmap")?;
                // SAFETY: as above; nothing is mapped in it any more.
                unsafe { sys::cuMemAddressFree(base.0, bytes) }.check("cuMemAddressFree")
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
            // SAFETY: a live event of this backend.
            unsafe { sys::cuEventSynchronize(raw.0) }.check("cuEventSynchronize")?;
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
        let mut raw = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the device's context is current (entered above).
        if let Err(e) = unsafe { sys::cuEventCreate(&mut raw, crate::backend::event_flags::DISABLE_TIMING) }.check("cuEventCreate") {
            // SAFETY: registered by `map_event_page`, known to nobody else.
            unsafe { sys::cuMemHostUnregister(page.page.host_address() as *mut c_void) };
            return Err(e);
        }
        let id = self.handle();
        let entry = EventEntry { raw: Raw(raw), device, stream: super::device_log::stream_key(None), timing: false, recorded: false };
        lock(&self.events).insert(id, entry);
        lock(&self.event_pages).insert(id, page);
        Ok(EventHandle::from_raw(id))
    }
}
