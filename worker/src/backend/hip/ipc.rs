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
//!   (`hipMemExportToShareableHandle`), imported and mapped by the importer; events go
//!   through `hipIpcGetEventHandle` / `hipIpcOpenEventHandle`. A runtime without these entry
//!   points answers `hipErrorNotSupported` naming the one it lacks.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;

use super::error::Check;
use super::vmm::{entry, host_len, MemAccessDesc, MemLocation, LOCATION_TYPE_DEVICE};
use super::{lock, EventEntry, HipBackend, Raw};
use crate::backend::{
    BackendError, DeviceIndex, DevicePtr, DriverIpcHandle, EventHandle, IpcBackend, IpcEventShare, IpcReach, IpcShare, DRIVER_IPC_HANDLE_BYTES,
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
const HANDLE_TYPE_POSIX_FD: c_int = 1;
/// `hipMemAccessFlagsProtReadWrite`.
const ACCESS_READ_WRITE: u32 = 3;

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

/// A runtime refusal to open memory, as ROCm answers a handle it cannot attach
/// (`hipErrorInvalidDevicePointer`); running out of memory or entry points stays itself.
fn not_attachable(e: BackendError) -> BackendError {
    match e {
        BackendError::OutOfMemory(_) | BackendError::NotSupported(_) => e,
        other => BackendError::InvalidDevicePointer(format!("the exported memory cannot be opened (its exporter may be gone): {other}")),
    }
}

impl HipBackend {
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
                unsafe { open(&mut base, IpcHandle::of(handle), IPC_MEM_LAZY_ENABLE_PEER_ACCESS) }.check("hipIpcOpenMemHandle").map_err(not_attachable)?;
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
        let get = entry(self.api.hipIpcGetEventHandle, "hipIpcGetEventHandle")?;
        let (raw, device, _) = self.event_entry(event)?;
        self.enter(device)?;
        let mut handle = IpcHandle::zeroed();
        // SAFETY: a valid out-pointer and a live event (the runtime refuses one created
        // without hipEventInterprocess | hipEventDisableTiming).
        unsafe { get(&mut handle, raw.0) }.check("hipIpcGetEventHandle")?;
        // Other processes may record it now: its queries and waits must ask the runtime.
        if let Some(e) = lock(&self.events).get_mut(&event.as_raw()) {
            e.recorded = true;
        }
        Ok(IpcEventShare::Driver(handle.bytes()))
    }

    fn ipc_import_event(&self, share: &IpcEventShare, device: DeviceIndex) -> Result<EventHandle, BackendError> {
        let handle = match share {
            IpcEventShare::Handle(event) => return Ok(*event),
            IpcEventShare::Fd(_) => return Err(BackendError::InvalidValue("the hip backend shares events through runtime handles".into())),
            IpcEventShare::Driver(handle) => IpcHandle::of(handle),
        };
        let open = entry(self.api.hipIpcOpenEventHandle, "hipIpcOpenEventHandle")?;
        self.enter(device)?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the handle's bytes are the runtime's to check.
        unsafe { open(&mut raw, handle) }.check("hipIpcOpenEventHandle").map_err(|e| match e {
            BackendError::OutOfMemory(_) => e,
            other => BackendError::InvalidValue(format!("the exported event cannot be opened (its exporter may be gone): {other}")),
        })?;
        let id = self.handle();
        // Another process records it: every query and wait asks the runtime; destroyed with
        // hipEventDestroy like any event.
        lock(&self.events).insert(id, EventEntry { raw: Raw(raw), device, timing: false, recorded: true, completions_before: 0 });
        Ok(EventHandle::from_raw(id))
    }
}
