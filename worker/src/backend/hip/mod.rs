//! The `hip` backend: HIP work on AMD GPUs through the HIP runtime itself (`libamdhip64.so`,
//! loaded at run time with libloading, so the worker builds and runs where no ROCm is
//! installed; `--backend auto` then moves on to host emulation, saying why).
//!
//! Shaped like the [`cuda`](super::cuda) backend: HIP streams, events, modules and device
//! pointers are the runtime's own, behind opaque handles of ours. The runtime keeps the
//! current device per thread, so every call that depends on it first sets the device it
//! targets (`hipSetDevice`), whichever session thread makes it. Work that must run when a
//! stream reaches it (the bytes of an asynchronous device-to-host copy, host functions,
//! dropping the source of an asynchronous copy) waits on an event recorded into the stream,
//! on one completion thread: later work on the stream does not wait for it.
//!
//! Any library with the HIP C ABI serves: the chained test runs this backend on hip-remote's
//! own `libamdhip64.so`, whose calls go to a second worker. That library also reports kernel
//! parameter layouts directly (`hipRemoteFunctionParamLayout`); with AMD's runtime they come
//! from the code object's metadata ([`layout`]).
//!
//! Runtime versions: ROCm 6.0 and later (the R0600 `hipDeviceProp_t` layout through
//! `hipGetDevicePropertiesR0600`, and `hipDeviceSetLimit`). ROCm 5's `libamdhip64.so.5` lacks
//! both and is refused at start with the missing names (as Debian's packaged ROCm 5 is).
//! Validated on real AMD hardware: not yet; the chained test exercises every call above
//! except the AMD runtime underneath.

mod accounting;
mod api;
mod array;
mod blas;
mod device_attr;
mod error;
mod graph;
mod ipc;
mod layout;
mod managed;
mod memory;
mod memset;
mod module;
mod props;
mod result;
mod rtc;
mod scrub;
mod stream;
mod stream_ops;
mod vmm;
mod watch;

use super::{BackendError, DeviceBackend, DeviceIndex, DeviceLimit, DeviceProperties, DevicePtr, TransportHooks};
use api::{Event, HipApi, RtcApi, Stream};
use error::Check;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};

pub use api::{hip_library_path, rtc_library_path};

/// A raw HIP handle that may cross threads: the HIP runtime is thread-safe and every call
/// sets its device first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Raw<T>(T);
// SAFETY: HIP runtime handles are process-wide and usable from any thread (see above).
unsafe impl<T> Send for Raw<T> {}
// SAFETY: as above; the runtime serialises access internally.
unsafe impl<T> Sync for Raw<T> {}

/// `hipEventDisableTiming`.
const EVENT_DISABLE_TIMING: u32 = 0x2;

struct StreamEntry {
    raw: Raw<Stream>,
    device: DeviceIndex,
    /// Where its device time goes, once a session accounts it.
    account: Option<Arc<accounting::StreamAccount>>,
}

struct EventEntry {
    raw: Raw<Event>,
    device: DeviceIndex,
    timing: bool,
    recorded: bool,
    /// Completions queued when it was last recorded: the event is complete once those ran
    /// too (only they can precede it; later ones, other sessions' included, do not count).
    completions_before: u64,
}

/// Work to run once `event` (recorded into a stream, owned by the completion) is reached.
struct Completion {
    event: Raw<Event>,
    /// The HIP runtime's ordinal of the event's device.
    ordinal: c_int,
    then: Box<dyn FnOnce(Result<(), BackendError>) + Send>,
}

/// The HIP backend.
pub struct HipBackend {
    api: Arc<HipApi>,
    /// hiprtc, or why it could not be loaded (compiles then fail with that reason).
    rtc: Result<RtcApi, String>,
    devices: Vec<DeviceProperties>,
    /// The HIP runtime's ordinal of each served device (`--devices` selects and renumbers).
    ordinals: Vec<c_int>,
    streams: Mutex<HashMap<u64, StreamEntry>>,
    events: Mutex<HashMap<u64, EventEntry>>,
    /// Live allocations: base → (size, device).
    allocations: Mutex<HashMap<u64, (u64, DeviceIndex)>>,
    /// Module globals: device memory for copies, never freeable.
    globals: Mutex<HashMap<u64, (u64, DeviceIndex)>>,
    /// Memory opened from other processes (`hipIpcOpenMemHandle` in a session process).
    ipc_opened: Mutex<ipc::OpenedTable>,
    /// Shared pages of interprocess events exported to or opened from other processes.
    event_pages: Mutex<ipc::EventPages>,
    modules: Mutex<module::ModuleTables>,
    next_handle: AtomicU64,
    completions: Mutex<mpsc::Sender<Completion>>,
    progress: Arc<Progress>,
    /// Per stream (raw pointer and device: the null stream is one per device), the number
    /// of the last completion queued on it, so a stream query waits for its own completions
    /// only, not other sessions' work in flight.
    last_completion: Mutex<HashMap<(usize, DeviceIndex), u64>>,
    /// Per device, the internal non-blocking stream new allocations are zeroed on.
    scrub_streams: Mutex<HashMap<DeviceIndex, Raw<Stream>>>,
    /// Launches in flight, while the kernel watchdog is on.
    launch_watch: crate::backend::launch_watch::LaunchWatch<Raw<Event>>,
}

/// How far the completion thread has got: completions queued and run, counted so a
/// synchronize can wait for the ones queued before it (a stream reaching an event does not
/// mean its completion has run yet).
#[derive(Default)]
struct Progress {
    queued: AtomicU64,
    done: Mutex<u64>,
    advanced: Condvar,
}

impl Progress {
    /// Waits until every completion queued so far has run.
    fn fence(&self) {
        let target = self.queued.load(Ordering::Acquire);
        let mut done = lock(&self.done);
        while *done < target {
            done = self.advanced.wait(done).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Completions queued so far.
    fn queued(&self) -> u64 {
        self.queued.load(Ordering::Acquire)
    }

    /// Whether the first `count` completions have run.
    fn reached(&self, count: u64) -> bool {
        *lock(&self.done) >= count
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The runtime's number for a limit (`hipLimit_t`).
fn hip_limit(limit: DeviceLimit) -> c_int {
    limit.raw() as c_int
}

impl HipBackend {
    /// Loads the HIP runtime from `library` (see [`hip_library_path`]) and hiprtc beside it,
    /// and reads the properties of the devices of `selection` (every device when `None`),
    /// numbered in the selection's order; an error says in one line what is missing.
    /// Whether the library is hip-remote's own client (a chained worker): its "devices" are
    /// another worker's, whose sessions that worker isolates; a process of its own per
    /// session would need the network and the client's settings, which confinement removes.
    pub fn is_hip_remote_client(&self) -> bool {
        self.api.hipRemoteCaptureKernelOutput.is_some()
    }

    pub fn new(library: &Path, selection: Option<&crate::devices::DeviceSelection>) -> Result<Self, BackendError> {
        let api = Arc::new(HipApi::load(library).map_err(BackendError::NotInitialized)?);
        let rtc_path = rtc_library_path(library);
        blas::set_library_dir(library);
        let rtc = RtcApi::load(&rtc_path);
        if let Err(why) = &rtc {
            tracing::warn!(%why, "hiprtc unavailable: runtime compilation will fail on this worker");
        }
        if let Some(capture) = api.hipRemoteCaptureKernelOutput {
            // Our own library (a chained worker): kernel output comes back to be forwarded to
            // this worker's client rather than printed on the worker's stdout.
            // SAFETY: no arguments beyond the flag.
            unsafe { capture(1) };
        }
        let mut count = 0;
        // SAFETY: a valid out-pointer.
        unsafe { (api.hipGetDeviceCount)(&mut count) }.check("hipGetDeviceCount")?;
        if count <= 0 {
            return Err(BackendError::NoDevice(format!("{} reports no device", library.display())));
        }
        let ordinals: Vec<c_int> = match selection {
            Some(selection) => {
                selection.check(count as u32, "the HIP runtime").map_err(BackendError::InvalidDevice)?;
                selection.ordinals.iter().map(|&o| o as c_int).collect()
            }
            None => (0..count).collect(),
        };
        let mut devices = Vec::new();
        for &ordinal in &ordinals {
            let mut prop = props::HipDeviceProp::zeroed();
            // SAFETY: `prop` has the R0600 layout this entry point fills.
            unsafe { (api.hipGetDevicePropertiesR0600)(&mut prop, ordinal) }.check("hipGetDevicePropertiesR0600")?;
            let props = props::properties(&prop);
            tracing::info!(ordinal, served_as = devices.len(), name = %props.name, arch = %props.gcn_arch_name, "HIP device opened");
            devices.push(props);
        }
        let (completions, pending) = mpsc::channel::<Completion>();
        let completion_api = api.clone();
        let progress = Arc::new(Progress::default());
        let completion_progress = progress.clone();
        std::thread::Builder::new()
            .name("hip-completions".into())
            .spawn(move || run_completions(&completion_api, &completion_progress, pending))
            .map_err(|e| BackendError::NotInitialized(format!("cannot start the completion thread: {e}")))?;
        Ok(Self {
            api,
            rtc,
            devices,
            ordinals,
            streams: Mutex::default(),
            events: Mutex::default(),
            allocations: Mutex::default(),
            globals: Mutex::default(),
            ipc_opened: Mutex::default(),
            event_pages: Mutex::default(),
            modules: Mutex::default(),
            next_handle: AtomicU64::new(1),
            completions: Mutex::new(completions),
            progress,
            last_completion: Mutex::default(),
            scrub_streams: Mutex::default(),
            launch_watch: Default::default(),
        })
    }

    fn device(&self, dev: DeviceIndex) -> Result<&DeviceProperties, BackendError> {
        self.devices
            .get(dev as usize)
            .ok_or_else(|| BackendError::InvalidDevice(format!("device {dev} out of range ({} HIP devices)", self.devices.len())))
    }

    /// The HIP runtime's ordinal of the worker's device `dev` (`--devices` renumbers).
    fn ordinal(&self, dev: DeviceIndex) -> Result<c_int, BackendError> {
        self.device(dev)?;
        Ok(self.ordinals[dev as usize])
    }

    /// Makes `dev` the calling thread's current device.
    fn enter(&self, dev: DeviceIndex) -> Result<(), BackendError> {
        let ordinal = self.ordinal(dev)?;
        // SAFETY: a device ordinal in range.
        unsafe { (self.api.hipSetDevice)(ordinal) }.check("hipSetDevice")
    }

    fn handle(&self) -> u64 {
        self.next_handle.fetch_add(1, Ordering::Relaxed)
    }

    /// The device owning `ptr` (the session validated it already; this guards the backend).
    fn device_of(&self, ptr: DevicePtr) -> Result<DeviceIndex, BackendError> {
        let inside = |(base, (size, _)): &(&u64, &(u64, DeviceIndex))| ptr.0 >= **base && ptr.0 - **base < (*size).max(1);
        let found = lock(&self.allocations).iter().find(inside).map(|(_, (_, d))| *d);
        found
            .or_else(|| lock(&self.globals).iter().find(inside).map(|(_, (_, d))| *d))
            .ok_or_else(|| BackendError::InvalidDevicePointer(format!("{ptr} is not a live HIP allocation")))
    }

    /// Resolves a stream (`None`: the null stream of `dev`) and enters its device.
    fn stream(&self, stream: Option<super::StreamHandle>, dev: DeviceIndex) -> Result<Stream, BackendError> {
        self.stream_and_device(stream, dev).map(|(raw, _)| raw)
    }

    /// [`Self::stream`], with the device it entered.
    fn stream_and_device(&self, stream: Option<super::StreamHandle>, dev: DeviceIndex) -> Result<(Stream, DeviceIndex), BackendError> {
        let (raw, device) = match stream {
            None => (std::ptr::null_mut(), dev),
            Some(s) => {
                let streams = lock(&self.streams);
                let e = streams.get(&s.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("stream {:#x}", s.as_raw())))?;
                (e.raw.0, e.device)
            }
        };
        self.enter(device)?;
        Ok((raw, device))
    }

    /// Runs `then` on the completion thread once `stream` (of the current device `dev`) has
    /// done everything queued so far. On `Err` nothing was queued and `then` is dropped.
    fn when_reached(&self, stream: Stream, dev: DeviceIndex, then: Box<dyn FnOnce(Result<(), BackendError>) + Send>) -> Result<(), BackendError> {
        let mut event = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the device is current.
        unsafe { (self.api.hipEventCreateWithFlags)(&mut event, EVENT_DISABLE_TIMING) }.check("hipEventCreateWithFlags")?;
        // SAFETY: a live event and stream of the current device.
        if let Err(e) = unsafe { (self.api.hipEventRecord)(event, stream) }.check("hipEventRecord") {
            // SAFETY: ours, never recorded.
            let _ = unsafe { (self.api.hipEventDestroy)(event) };
            return Err(e);
        }
        let completion = Completion { event: Raw(event), ordinal: self.ordinal(dev)?, then };
        let completions = lock(&self.completions);
        let number = self.progress.queued.fetch_add(1, Ordering::AcqRel) + 1;
        lock(&self.last_completion).insert((stream as usize, dev), number);
        completions.send(completion).map_err(|_| BackendError::Unknown("the completion thread has stopped".into()))
    }
}

/// The completion thread: waits for each event in turn, then runs its work.
fn run_completions(api: &HipApi, progress: &Progress, pending: mpsc::Receiver<Completion>) {
    for Completion { event, ordinal, then } in pending {
        // SAFETY: a device ordinal the backend checked; an event it recorded and handed over.
        let reached = unsafe { (api.hipSetDevice)(ordinal) }
            .check("hipSetDevice")
            // SAFETY: as above.
            .and_then(|()| unsafe { (api.hipEventSynchronize)(event.0) }.check("hipEventSynchronize"));
        // SAFETY: ours; destroyed once.
        let _ = unsafe { (api.hipEventDestroy)(event.0) };
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| then(reached)));
        *lock(&progress.done) += 1;
        progress.advanced.notify_all();
    }
}

impl DeviceBackend for HipBackend {
    /// clr answers a queue error recorded for the process to every later call,
    /// `hipMemGetInfo` included, without waiting for work.
    fn device_fault(&self, dev: DeviceIndex) -> Option<bool> {
        self.enter(dev).ok()?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: valid out-pointers; the device is current.
        let code = unsafe { (self.api.hipMemGetInfo)(&mut free, &mut total) };
        Some(crate::device_faults::is_sticky(code))
    }

    fn watch_launches(&self) -> bool {
        self.launch_watch.enable();
        true
    }

    fn overrun_devices(&self, limit: std::time::Duration) -> Vec<DeviceIndex> {
        self.launches_overrun(limit)
    }

    fn name(&self) -> &'static str {
        "hip"
    }

    fn device_count(&self) -> Result<u32, BackendError> {
        Ok(self.devices.len() as u32)
    }

    fn device_properties(&self, dev: DeviceIndex) -> Result<DeviceProperties, BackendError> {
        self.device(dev).cloned()
    }

    fn device_synchronize(&self, dev: DeviceIndex) -> Result<(), BackendError> {
        self.enter(dev)?;
        // SAFETY: no arguments; the device is current.
        unsafe { (self.api.hipDeviceSynchronize)() }.check("hipDeviceSynchronize")?;
        self.progress.fence();
        Ok(())
    }

    fn device_limit(&self, dev: DeviceIndex, limit: DeviceLimit) -> Result<u64, BackendError> {
        self.enter(dev)?;
        let mut value = 0usize;
        // SAFETY: a valid out-pointer; the device is current.
        unsafe { (self.api.hipDeviceGetLimit)(&mut value, hip_limit(limit)) }.check("hipDeviceGetLimit")?;
        Ok(value as u64)
    }

    /// Device-wide, as on CUDA: a session's setting applies to other sessions' later launches.
    fn set_device_limit(&self, dev: DeviceIndex, limit: DeviceLimit, value: u64) -> Result<u64, BackendError> {
        let value = usize::try_from(value).map_err(|_| BackendError::InvalidValue(format!("limit value {value} does not fit usize")))?;
        self.enter(dev)?;
        // SAFETY: the device is current.
        unsafe { (self.api.hipDeviceSetLimit)(hip_limit(limit), value) }.check("hipDeviceSetLimit")?;
        self.device_limit(dev, limit)
    }

    fn can_access_peer(&self, dev: DeviceIndex, peer: DeviceIndex) -> Result<bool, BackendError> {
        self.device(dev)?;
        self.device(peer)?;
        Ok(self.api.device_can_access_peer(self.ordinal(dev)?, self.ordinal(peer)?)?)
    }

    fn enable_peer_access(&self, dev: DeviceIndex, peer: DeviceIndex) -> Result<(), BackendError> {
        let peer_ordinal = self.ordinal(peer)?;
        self.enter(dev)?;
        match self.api.device_enable_peer_access(peer_ordinal) {
            // Another session enabled the pair first: the mapping is shared.
            Err(e) if e.code == HIP_ERROR_PEER_ACCESS_ALREADY_ENABLED => Ok(()),
            other => Ok(other?),
        }
    }
}

/// `hipErrorPeerAccessAlreadyEnabled`.
const HIP_ERROR_PEER_ACCESS_ALREADY_ENABLED: c_int = 704;

/// `hipMemRangeHandleTypeDmaBufFd`.
const HANDLE_TYPE_DMA_BUF_FD: c_int = 1;

/// `hipHostRegisterPortable | hipHostRegisterMapped`.
pub(super) const HOST_REGISTER_PORTABLE_MAPPED: std::ffi::c_uint = 0x1 | 0x2;

impl TransportHooks for HipBackend {
    /// `hipHostRegister` (portable, mapped), where the runtime has it; copies still work
    /// without it, staged.
    fn register_host_memory(&self, addr: usize, len: usize) -> Result<(), BackendError> {
        let Some(register) = self.api.hipHostRegister else { return Ok(()) };
        self.enter(0)?;
        // SAFETY: `[addr, addr + len)` is a live shared mapping of the caller's, page-aligned,
        // unregistered before it is unmapped.
        unsafe { register(addr as *mut c_void, len, HOST_REGISTER_PORTABLE_MAPPED) }.check("hipHostRegister")
    }

    fn unregister_host_memory(&self, addr: usize) -> Result<(), BackendError> {
        let (Some(_), Some(unregister)) = (self.api.hipHostRegister, self.api.hipHostUnregister) else { return Ok(()) };
        self.enter(0)?;
        // SAFETY: `addr` is the start of a range registered by `register_host_memory`.
        unsafe { unregister(addr as *mut c_void) }.check("hipHostUnregister")
    }

    /// `hipMemGetHandleForAddressRange` where the runtime has it (ROCm 6+), over the
    /// page-aligned cover of the range.
    fn export_dmabuf_fd(&self, ptr: DevicePtr, len: u64) -> Result<(std::os::fd::OwnedFd, u64), BackendError> {
        use std::os::fd::FromRawFd;
        let export = self
            .api
            .hipMemGetHandleForAddressRange
            .ok_or_else(|| BackendError::NotSupported("this HIP runtime has no hipMemGetHandleForAddressRange (dma-buf export)".into()))?;
        const PAGE: u64 = 4096;
        let start = ptr.0 & !(PAGE - 1);
        let end = ptr
            .0
            .checked_add(len)
            .and_then(|e| e.checked_next_multiple_of(PAGE))
            .ok_or_else(|| BackendError::InvalidValue("range overflows".into()))?;
        self.enter(self.device_of(ptr)?)?;
        let mut fd: c_int = -1;
        // SAFETY: `fd` is the int the runtime writes for a dma-buf handle; the range lies in a
        // live allocation of the current device (checked above).
        unsafe { export((&mut fd as *mut c_int).cast::<c_void>(), start as *mut c_void, (end - start) as usize, HANDLE_TYPE_DMA_BUF_FD, 0) }
            .check("hipMemGetHandleForAddressRange")?;
        if fd < 0 {
            return Err(BackendError::Unknown("hipMemGetHandleForAddressRange returned no fd".into()));
        }
        // SAFETY: a new dma-buf fd that nothing else owns.
        Ok((unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) }, ptr.0 - start))
    }
}
