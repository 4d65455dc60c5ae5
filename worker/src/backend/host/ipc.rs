//! IPC of the host backend: exported memory and events live in memory files (`memfd`), which
//! any process holding the descriptor maps, so sessions in processes of their own share them
//! (the worker passes descriptors between session processes, [`crate::sandbox`]).
//!
//! * **Memory.** Exporting moves an allocation's pages into a memory file mapped at the same
//!   address ([`super::memory`]'s `HostBlock::share`); an importer maps the file wherever its
//!   kernel places it (the importer's pointer differs, as HIP allows). The kernel counts the
//!   mappings: an exporter freeing its memory unmaps only its own view, so an importer's view
//!   never dangles; the pages go with the last mapping.
//! * **Events.** An interprocess event owns one shared page of two counters: records made
//!   (`recorded`) and the highest record its stream has reached (`completed`). Recording takes
//!   the next number and queues "completed = max(completed, n)" on the stream; a query,
//!   synchronize or stream wait compares the counters as they were when it was issued.

use std::ffi::CStr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::event::Event;
use super::memory::PAGE;
use super::stream::StreamOp;
use super::{write_lock, HostBackend};
use crate::backend::{event_flags, BackendError, DeviceIndex, DevicePtr, EventHandle, IpcBackend, IpcEventShare, IpcReach, IpcShare, StreamHandle};

/// How often a wait on another process's event record looks at the shared counters.
const SHARED_EVENT_POLL: Duration = Duration::from_micros(50);

/// Seals every shared memory file carries: its size is fixed for good, so no process holding
/// it can shrink it under another's mapping (which would make that process fault).
const SIZE_SEALS: libc::c_int = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;

/// A new memory file of `len` bytes (zero-filled, closed on exec), its size sealed.
pub(crate) fn memory_file(len: usize) -> std::io::Result<OwnedFd> {
    const NAME: &CStr = c"hip-remote-ipc";
    // SAFETY: a valid NUL-terminated name and flags; the result is checked.
    let raw = unsafe { libc::memfd_create(NAME.as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) };
    if raw < 0 {
        return Err(crate::sandbox::confine::explain_limit(std::io::Error::last_os_error()));
    }
    // SAFETY: `raw` is a fresh descriptor owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let len = libc::off_t::try_from(len).map_err(|_| std::io::Error::other("memory file too large"))?;
    // SAFETY: `fd` is a valid memory file.
    if unsafe { libc::ftruncate(fd.as_raw_fd(), len) } < 0 {
        // A session process's file-size limit counts memory files too: say which limit.
        return Err(crate::sandbox::confine::explain_limit(std::io::Error::last_os_error()));
    }
    // SAFETY: adding seals to a valid memory file created with sealing allowed.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, SIZE_SEALS) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fd)
}

/// Checks that `fd` (possibly from another process) is a memory file of at least `len`
/// bytes whose size is sealed, so mapping `len` bytes of it can never fault.
pub(crate) fn check_memory_file(fd: &OwnedFd, len: u64) -> Result<(), BackendError> {
    // SAFETY: F_GET_SEALS on a valid descriptor; the result is checked.
    let seals = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GET_SEALS) };
    if seals < 0 || seals & libc::F_SEAL_SHRINK == 0 {
        return Err(BackendError::InvalidValue("the shared memory is not a sealed memory file".into()));
    }
    // SAFETY: an all-zero stat is a valid buffer for fstat to fill.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is a valid descriptor and `stat` writable.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut stat) } < 0 || (stat.st_size as u64) < len {
        return Err(BackendError::InvalidValue(format!("the shared memory file is smaller than {len} bytes")));
    }
    Ok(())
}

/// A shared mapping of a memory file, unmapped on drop.
#[derive(Debug)]
pub(crate) struct SharedMapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory owned by this value; accesses are synchronized by the
// allocation (memory) or atomics (event pages) that use it.
unsafe impl Send for SharedMapping {}
// SAFETY: as above.
unsafe impl Sync for SharedMapping {}

impl SharedMapping {
    /// Maps `len` bytes of `fd` from its start, read-write, shared.
    pub(crate) fn new(fd: &OwnedFd, len: u64) -> Result<Self, BackendError> {
        let len = usize::try_from(len).map_err(|_| BackendError::InvalidValue(format!("{len} bytes exceed the address space")))?;
        if len == 0 {
            return Err(BackendError::InvalidValue("empty shared mapping".into()));
        }
        // SAFETY: a new shared mapping placed by the kernel; the result is checked.
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd.as_raw_fd(), 0) };
        if ptr == libc::MAP_FAILED {
            return Err(BackendError::InvalidValue(format!("cannot map the shared memory: {}", std::io::Error::last_os_error())));
        }
        let ptr = NonNull::new(ptr.cast()).ok_or_else(|| BackendError::Unknown("mmap answered NULL".into()))?;
        Ok(Self { ptr, len })
    }

    pub(crate) fn address(&self) -> u64 {
        self.ptr.as_ptr() as u64
    }
}

impl Drop for SharedMapping {
    fn drop(&mut self) {
        // SAFETY: a mapping of `len` bytes made by `new`, unmapped only here.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// The shared counters of an interprocess event (see the module documentation).
#[derive(Debug)]
pub(super) struct EventPage {
    fd: Arc<OwnedFd>,
    mapping: SharedMapping,
}

impl EventPage {
    /// A fresh page (both counters 0).
    pub(super) fn create() -> Result<Self, BackendError> {
        let fd = memory_file(PAGE as usize).map_err(|e| BackendError::OutOfMemory(format!("event page: {e}")))?;
        Self::open(Arc::new(fd))
    }

    fn open(fd: Arc<OwnedFd>) -> Result<Self, BackendError> {
        // The descriptor may come from another process: it must hold a whole page for good.
        check_memory_file(&fd, PAGE)?;
        let mapping = SharedMapping::new(&fd, PAGE)?;
        Ok(Self { fd, mapping })
    }

    fn counter(&self, index: usize) -> &AtomicU64 {
        // SAFETY: the page is mapped for `PAGE` bytes while `self` lives, page-aligned, and
        // only ever accessed through these atomics (in every process that maps it).
        unsafe { &*(self.mapping.ptr.as_ptr() as *const AtomicU64).add(index) }
    }

    fn recorded(&self) -> &AtomicU64 {
        self.counter(0)
    }

    fn completed(&self) -> &AtomicU64 {
        self.counter(1)
    }

    /// Takes the next record number.
    pub(super) fn next_record(&self) -> u64 {
        self.recorded().fetch_add(1, Ordering::AcqRel) + 1
    }

    /// Marks record `n` as reached.
    pub(super) fn complete(&self, n: u64) {
        self.completed().fetch_max(n, Ordering::AcqRel);
    }

    /// The record a wait issued now waits for.
    pub(super) fn latest_record(&self) -> u64 {
        self.recorded().load(Ordering::Acquire)
    }

    pub(super) fn reached(&self, n: u64) -> bool {
        self.completed().load(Ordering::Acquire) >= n
    }

    pub(super) fn wait_for(&self, n: u64) {
        while !self.reached(n) {
            std::thread::sleep(SHARED_EVENT_POLL);
        }
    }
}

impl HostBackend {
    /// Records an interprocess event: the next number, reached when `stream` gets there.
    pub(super) fn record_shared_event(&self, page: &Arc<EventPage>, device: DeviceIndex, stream: Option<StreamHandle>) -> Result<(), BackendError> {
        let n = page.next_record();
        let page = Arc::clone(page);
        self.enqueue(stream, &[device], StreamOp::HostFunc(Box::new(move || page.complete(n))))
    }

    /// Makes `stream` wait for the latest record of an interprocess event.
    pub(super) fn wait_shared_event(&self, page: &Arc<EventPage>, stream: Option<StreamHandle>) -> Result<(), BackendError> {
        let n = page.latest_record();
        if page.reached(n) {
            return Ok(());
        }
        match stream {
            Some(handle) => {
                let page = Arc::clone(page);
                self.stream(handle)?.submit(StreamOp::HostFunc(Box::new(move || page.wait_for(n)))).map(drop)
            }
            None => {
                page.wait_for(n);
                Ok(())
            }
        }
    }
}

impl IpcBackend for HostBackend {
    fn ipc_export_memory(&self, base: DevicePtr, size: u64, reach: IpcReach) -> Result<IpcShare, BackendError> {
        // Memory files reach this process and others alike.
        // A virtual-memory mapping (client-placed `hipMalloc` memory) lives in a memory file
        // already.
        let share = match self.vmm_mapping_share(base, size)? {
            Some(share) => share,
            None => {
                let (fd, len) = self.address_space.share(base)?;
                IpcShare::Fd { fd, len }
            }
        };
        #[cfg(test)]
        if reach == IpcReach::OtherProcesses && stand_in_driver::active() {
            return Ok(stand_in_driver::export_memory(share));
        }
        let _ = reach;
        Ok(share)
    }

    fn ipc_import_memory(&self, share: &IpcShare, size: u64, device: DeviceIndex) -> Result<DevicePtr, BackendError> {
        self.device(device)?;
        #[cfg(test)]
        let share = &stand_in_driver::import_memory(share)?;
        let IpcShare::Fd { fd, len } = share else {
            return Err(BackendError::InvalidValue("the host backend shares memory through memory files".into()));
        };
        if size > *len {
            return Err(BackendError::InvalidValue(format!("{size} bytes do not fit the shared {len}")));
        }
        check_memory_file(fd, *len)?;
        let mapping = SharedMapping::new(fd, *len)?;
        Ok(self.address_space.map_imported(device, size, mapping))
    }

    fn ipc_close_memory(&self, base: DevicePtr) -> Result<(), BackendError> {
        let allocation =
            self.address_space.unmap_imported(base).ok_or_else(|| BackendError::InvalidValue(format!("{base} is not opened IPC memory")))?;
        // Work still queued on it keeps the mapping until it is done.
        self.kernels_in_flight.retire(Box::new(allocation));
        Ok(())
    }

    fn ipc_export_event(&self, event: EventHandle, reach: IpcReach) -> Result<IpcEventShare, BackendError> {
        let event = self.event(event)?;
        let share = event.shared_page().map(|page| IpcEventShare::Fd(Arc::clone(&page.fd))).ok_or_else(|| {
            BackendError::InvalidConfiguration("the event was not created with hipEventInterprocess | hipEventDisableTiming".into())
        })?;
        // Memory files reach this process and others alike (the GPU backends share events
        // with other processes this way too).
        let _ = reach;
        Ok(share)
    }

    fn ipc_import_event(&self, share: &IpcEventShare, device: DeviceIndex) -> Result<EventHandle, BackendError> {
        self.device(device)?;
        let IpcEventShare::Fd(fd) = share else {
            return Err(BackendError::InvalidValue("the host backend shares events through memory files".into()));
        };
        let page = Arc::new(EventPage::open(Arc::clone(fd))?);
        let handle = EventHandle::from_raw(self.next_handle());
        let flags = event_flags::INTERPROCESS | event_flags::DISABLE_TIMING;
        write_lock(&self.events).insert(handle, Arc::new(Event::with_page(device, flags, page)));
        Ok(handle)
    }
}

/// A memory file for tests elsewhere in the crate.
#[cfg(test)]
pub(crate) fn test_memory_file(len: usize) -> OwnedFd {
    memory_file(len).expect("memfd")
}

/// A stand-in for a GPU driver's IPC handles, for tests of the path GPU session processes
/// take (`IpcShare::Driver`) without a GPU: while active on the calling thread, the host
/// backend exports memory for other processes as 64 random bytes naming its memory file (as
/// `cuIpcGetMemHandle` names an allocation), and opens only bytes it handed out (a driver
/// refuses others). Events need no stand-in: GPU backends share them as pages, as this
/// backend does.
#[cfg(test)]
pub(crate) mod stand_in_driver {
    use super::*;
    use crate::backend::{DriverIpcHandle, DRIVER_IPC_HANDLE_BYTES};
    use std::cell::Cell;
    use std::collections::HashMap;
    use std::sync::Mutex;

    thread_local! {
        static ACTIVE: Cell<bool> = const { Cell::new(false) };
    }

    /// Handles handed out, process-wide (the "driver").
    static HANDLES: Mutex<Option<HashMap<[u8; DRIVER_IPC_HANDLE_BYTES], IpcShare>>> = Mutex::new(None);
    /// Handles the "driver" was asked to open, process-wide.
    static OPENS: AtomicU64 = AtomicU64::new(0);

    /// How many handles the stand-in driver was asked to open so far.
    pub(crate) fn opens() -> u64 {
        OPENS.load(Ordering::SeqCst)
    }

    /// Active on this thread until the guard drops.
    pub(crate) struct Active(());

    impl Drop for Active {
        fn drop(&mut self) {
            ACTIVE.with(|a| a.set(false));
        }
    }

    pub(crate) fn activate() -> Active {
        ACTIVE.with(|a| a.set(true));
        Active(())
    }

    pub(super) fn active() -> bool {
        ACTIVE.with(Cell::get)
    }

    fn issue(what: IpcShare) -> DriverIpcHandle {
        let mut bytes = [0u8; DRIVER_IPC_HANDLE_BYTES];
        getrandom::fill(&mut bytes).expect("randomness");
        HANDLES.lock().unwrap().get_or_insert_with(HashMap::new).insert(bytes, what);
        DriverIpcHandle(bytes)
    }

    fn lookup(handle: &DriverIpcHandle) -> Option<IpcShare> {
        HANDLES.lock().unwrap().as_ref().and_then(|h| h.get(&handle.0).cloned())
    }

    pub(super) fn export_memory(share: IpcShare) -> IpcShare {
        IpcShare::Driver(issue(share))
    }

    pub(super) fn import_memory(share: &IpcShare) -> Result<IpcShare, BackendError> {
        match share {
            IpcShare::Driver(handle) => {
                OPENS.fetch_add(1, Ordering::SeqCst);
                lookup(handle).ok_or_else(|| BackendError::InvalidDevicePointer("the stand-in driver never issued this memory handle".into()))
            }
            other => Ok(other.clone()),
        }
    }
}
