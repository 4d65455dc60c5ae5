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
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;

use super::error::Check;
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

    fn zeroed() -> Self {
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
const WAIT_VALUE_GEQ: c_uint = 0;

/// An interprocess event's shared page as this process's device sees it.
pub(super) struct EventPage {
    pub(super) page: SharedEventPage,
    /// The page's device address (registered with `hipHostRegister`).
    device_address: *mut c_void,
}

// SAFETY: the device address is a plain number the runtime handed out for the registered
// page, valid in every thread of the process.
unsafe impl Send for EventPage {}
// SAFETY: as above; the page itself is shared through atomics.
unsafe impl Sync for EventPage {}

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
fn device_word(page: &EventPage) -> *mut c_void {
    page.device_address.wrapping_byte_add(SharedEventPage::COMPLETED_OFFSET as usize)
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
        let register = entry(self.api.hipHostRegister, "hipHostRegister")?;
        let unregister = entry(self.api.hipHostUnregister, "hipHostUnregister")?;
        let device_pointer = entry(self.api.hipHostGetDevicePointer, "hipHostGetDevicePointer")?;
        entry(self.api.hipStreamWriteValue64, "hipStreamWriteValue64")?;
        entry(self.api.hipStreamWaitValue64, "hipStreamWaitValue64")?;
        self.enter(dev)?;
        let host = page.host_address() as *mut c_void;
        // SAFETY: a mapping of a page that outlives the registration (unregistered in
        // `drop_event_page`, or below, before the mapping goes).
        unsafe { register(host, crate::backend::EVENT_PAGE_BYTES as usize, super::HOST_REGISTER_PORTABLE_MAPPED) }.check("hipHostRegister")?;
        let mut device_address = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the page registered above.
        if let Err(e) = unsafe { device_pointer(&mut device_address, host, 0) }.check("hipHostGetDevicePointer") {
            // SAFETY: registered above, known to nobody else.
            unsafe { unregister(host) };
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
        let Some(unregister) = self.api.hipHostUnregister else { return };
        if self.enter(dev).is_ok() {
            if !page.page.complete() {
                // A record of this process's may still be on its way to the page: the
                // device must not write it once it is unregistered and unmapped.
                // SAFETY: the device entered above.
                let _ = unsafe { (self.api.hipDeviceSynchronize)() }.check("hipDeviceSynchronize");
            }
            // SAFETY: registered in `register_event_page`; unmapped only when `page` drops.
            unsafe { unregister(page.page.host_address() as *mut c_void) };
        }
    }

    /// Records `page` on `stream`: the next record number, reached when the stream gets
    /// there.
    pub(super) fn record_event_page(&self, page: &EventPage, stream: super::Stream) -> Result<(), BackendError> {
        let write = entry(self.api.hipStreamWriteValue64, "hipStreamWriteValue64")?;
        let n = page.page.next_record();
        // SAFETY: a live stream of the current device; the registered page's device address.
        let written = unsafe { write(stream, device_word(page), n, 0) }.check("hipStreamWriteValue64");
        if written.is_err() {
            // Never reached otherwise: waiters would wait for good.
            page.page.mark_reached(n);
        }
        written
    }

    /// Makes `stream` wait for the latest record of `page`.
    pub(super) fn stream_wait_event_page(&self, page: &EventPage, stream: super::Stream) -> Result<(), BackendError> {
        let wait = entry(self.api.hipStreamWaitValue64, "hipStreamWaitValue64")?;
        let n = page.page.latest();
        if page.page.reached(n) {
            return Ok(());
        }
        // SAFETY: a live stream of the current device; the registered page's device address.
        unsafe { wait(stream, device_word(page), n, WAIT_VALUE_GEQ, u64::MAX) }.check("hipStreamWaitValue64")
    }

    /// Exports the virtual-memory mapping at `base` as a file descriptor of its physical
    /// memory.
    fn export_mapping(&self, base: DevicePtr, size: u64, dev: DeviceIndex) -> Result<IpcShare, BackendError> {
        let retain = entry(self.api.hipMemRetainAllocationHandle, "hipMemRetainAllocationHandle")?;
        let export = entry(self.api.hipMemExportToShareableHandle, "hipMemExportToShareableHandle")?;
        let release = entry(self.api.hipMemRelease, "hipMemRelease")?;
        self.enter(dev)?;
        let mut physical = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; `base` starts a mapping of this backend.
        unsafe { retain(&mut physical, base.0 as *mut c_void) }.check("hipMemRetainAllocationHandle")?;
        let mut fd: c_int = -1;
        // SAFETY: for POSIX descriptors the shareable handle is an `int` written through the
        // pointer; `physical` is live (retained above).
        let exported = unsafe { export((&mut fd as *mut c_int).cast(), physical, HANDLE_TYPE_POSIX_FD, 0) }.check("hipMemExportToShareableHandle");
        // SAFETY: the reference taken by the retain above; the mapping keeps its own.
        let released = unsafe { release(physical) }.check("hipMemRelease");
        exported?;
        // SAFETY: a fresh descriptor the runtime created for this call, owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        released?;
        Ok(IpcShare::Fd { fd: Arc::new(fd), len: size })
    }

    /// Imports physical memory shared as `fd` and maps its `len` bytes into a reservation
    /// of this process, read-write from `dev`; answers the mapping's base.
    fn import_mapping(&self, fd: &OwnedFd, len: u64, dev: DeviceIndex) -> Result<DevicePtr, BackendError> {
        let import = entry(self.api.hipMemImportFromShareableHandle, "hipMemImportFromShareableHandle")?;
        let reserve = entry(self.api.hipMemAddressReserve, "hipMemAddressReserve")?;
        let free = entry(self.api.hipMemAddressFree, "hipMemAddressFree")?;
        let map = entry(self.api.hipMemMap, "hipMemMap")?;
        let unmap = entry(self.api.hipMemUnmap, "hipMemUnmap")?;
        let release = entry(self.api.hipMemRelease, "hipMemRelease")?;
        let set_access = entry(self.api.hipMemSetAccess, "hipMemSetAccess")?;
        let bytes = host_len(len)?;
        let desc = MemAccessDesc { location: MemLocation { kind: LOCATION_TYPE_DEVICE, id: self.ordinal(dev)? }, flags: ACCESS_READ_WRITE };
        self.enter(dev)?;
        let mut physical = std::ptr::null_mut();
        // SAFETY: for POSIX descriptors the OS handle is the descriptor's number cast to a
        // pointer; the runtime dups what it keeps.
        unsafe { import(&mut physical, fd.as_raw_fd() as isize as *mut c_void, HANDLE_TYPE_POSIX_FD) }.check("hipMemImportFromShareableHandle")?;
        let mut base = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        let mapped = unsafe { reserve(&mut base, bytes, 0, std::ptr::null_mut(), 0) }.check("hipMemAddressReserve").and_then(|()| {
            // SAFETY: a fresh reservation of `bytes` and a live physical handle (the runtime
            // checks its size).
            unsafe { map(base, bytes, 0, physical, 0) }.check("hipMemMap").inspect_err(|_| {
                // SAFETY: the reservation made above, with nothing mapped.
                unsafe { free(base, bytes) };
            })
        });
        // SAFETY: the import's reference; a mapping made above keeps its own.
        unsafe { release(physical) };
        mapped?;
        // SAFETY: one valid descriptor; the mapping made above.
        if let Err(e) = unsafe { set_access(base, bytes, &desc, 1) }.check("hipMemSetAccess") {
            // SAFETY: the mapping and reservation made above, known to nobody else.
            unsafe {
                unmap(base, bytes);
                free(base, bytes);
            }
            return Err(e);
        }
        Ok(DevicePtr(base as u64))
    }
}

impl IpcBackend for HipBackend {
    fn ipc_export_memory(&self, base: DevicePtr, size: u64, reach: IpcReach) -> Result<IpcShare, BackendError> {
        if reach == IpcReach::ThisProcess {
            return Ok(IpcShare::Pointer(base));
        }
        let allocated = lock(&self.allocations).get(&base.0).map(|(_, dev)| *dev);
        if let Some(dev) = allocated {
            let get = entry(self.api.hipIpcGetMemHandle, "hipIpcGetMemHandle")?;
            self.enter(dev)?;
            let mut handle = IpcHandle::zeroed();
            // SAFETY: a valid out-pointer; `base` is a live allocation of this runtime.
            unsafe { get(&mut handle, base.0 as *mut c_void) }.check("hipIpcGetMemHandle")?;
            return Ok(IpcShare::Driver(handle.bytes()));
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
                let open = entry(self.api.hipIpcOpenMemHandle, "hipIpcOpenMemHandle")?;
                self.enter(device)?;
                let mut base = std::ptr::null_mut();
                // SAFETY: a valid out-pointer; the handle's bytes are the runtime's to check.
                unsafe { open(&mut base, IpcHandle::of(handle), IPC_MEM_LAZY_ENABLE_PEER_ACCESS) }
                    .check("hipIpcOpenMemHandle")
                    .map_err(not_attachable)?;
                (base as u64, Opened::IpcHandle)
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
                let close = entry(self.api.hipIpcCloseMemHandle, "hipIpcCloseMemHandle")?;
                // SAFETY: memory opened with hipIpcOpenMemHandle, closed once (removed above).
                unsafe { close(base.0 as *mut c_void) }.check("hipIpcCloseMemHandle")
            }
            Opened::Mapped { len } => {
                let unmap = entry(self.api.hipMemUnmap, "hipMemUnmap")?;
                let free = entry(self.api.hipMemAddressFree, "hipMemAddressFree")?;
                let bytes = host_len(len)?;
                // SAFETY: the mapping and reservation `import_mapping` made, released once.
                unsafe { unmap(base.0 as *mut c_void, bytes) }.check("hipMemUnmap")?;
                // SAFETY: as above; nothing is mapped in it any more.
                unsafe { free(base.0 as *mut c_void, bytes) }.check("hipMemAddressFree")
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
            // SAFETY: a live event of this backend.
            unsafe { (self.api.hipEventSynchronize)(raw.0) }.check("hipEventSynchronize")?;
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
        let mut raw = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the device is current (entered above).
        if let Err(e) = unsafe { (self.api.hipEventCreateWithFlags)(&mut raw, super::EVENT_DISABLE_TIMING) }.check("hipEventCreateWithFlags") {
            if let Some(unregister) = self.api.hipHostUnregister {
                // SAFETY: registered by `register_event_page`, known to nobody else.
                unsafe { unregister(page.page.host_address() as *mut c_void) };
            }
            return Err(e);
        }
        let id = self.handle();
        lock(&self.events).insert(id, EventEntry { raw: Raw(raw), device, timing: false, recorded: false, completions_before: 0 });
        lock(&self.event_pages).insert(id, page);
        Ok(EventHandle::from_raw(id))
    }
}
