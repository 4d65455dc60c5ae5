//! The `host` backend: HIP devices emulated in host memory, for tests, fuzzing and machines
//! without a GPU. It reports itself plainly (`gcnArchName` `host`, a name saying "host
//! emulation") and behaves like a GPU where clients can tell:
//!
//! * **Streams** are executor threads, one per stream, running their FIFO of operations
//!   asynchronously and in order, so a client that forgets to synchronize sees stale data
//!   here too. A queued operation that fails (or panics) latches its error on the stream;
//!   every later [`Backend::stream_synchronize`]/[`Backend::stream_query`] of that stream
//!   reports it until the stream is destroyed. Later operations still run, so event records
//!   complete and nobody waiting on them hangs.
//! * **The null stream** (`stream: None`) runs its operation synchronously on the caller's
//!   thread, after every *blocking* stream (created without `hipStreamNonBlocking`) of the
//!   devices involved has finished the work it had when the call began: HIP's legacy-stream
//!   semantics. Non-blocking streams are not waited for. The legacy stream is per device,
//!   not per session, as on a real GPU shared by one process.
//! * **Memory** is zeroed host memory, counted against a per-device capacity shared by all
//!   sessions. Requests beyond the free capacity fail before anything is allocated; a host
//!   allocator refusal is `OutOfMemory`, never an abort. Device addresses are synthetic and
//!   page aligned, with an unmapped guard page after each allocation (see `memory`).
//! * **Free while queued** is safe: queued operations hold an `Arc` to their allocation, so
//!   [`Backend::free`] unmaps the address at once (later use is an error) while the bytes,
//!   and the capacity [`Backend::mem_get_info`] reports, return when the last queued user is
//!   done. Free does not wait for the queue.
//! * **Zero-copy access** ([`Backend::with_device_bytes`], [`Backend::with_device_bytes_mut`])
//!   waits for the stream, then runs the closure on the caller's thread under the
//!   allocation's lock: stream executors touching the same allocation wait meanwhile, so
//!   there is never an aliasing `&mut`, whatever the client does.
//! * **Warp size** is 32 (`properties::HOST_WARP_SIZE`), so clients sizing work by
//!   `warpSize` get GPU-like shapes. Stream priorities are not supported: the range is
//!   `(0, 0)` and every priority clamps to 0.

mod event;
mod memory;
mod properties;
mod stream;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{
    Arc, Condvar, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard,
};

use self::event::Event;
use self::memory::{AddressSpace, DeviceMemory, Region, PAGE};
use self::properties::CpuInfo;
use self::stream::{Signal, Stream, StreamOp};
use super::{
    stream_flags, validate_event_flags, Backend, BackendError, DeviceIndex, DeviceProperties,
    DevicePtr, DtohDone, EventHandle, HostData, HostFn, MemInfo, MemsetPattern, StreamHandle,
};

/// How many devices to emulate and how much memory each has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostConfig {
    /// Number of emulated devices.
    pub devices: u32,
    /// Capacity of each device in bytes.
    pub memory_per_device: u64,
}

impl Default for HostConfig {
    /// One device with `min(physical RAM / 2, 16 GiB)`.
    fn default() -> Self {
        Self {
            devices: 1,
            memory_per_device: properties::default_capacity(),
        }
    }
}

struct HostDevice {
    memory: Arc<DeviceMemory>,
    properties: DeviceProperties,
}

/// HIP device emulation in host memory. See the module documentation for its semantics.
pub struct HostBackend {
    devices: Vec<HostDevice>,
    address_space: AddressSpace,
    streams: RwLock<HashMap<StreamHandle, Arc<Stream>>>,
    events: RwLock<HashMap<EventHandle, Arc<Event>>>,
    /// Source of stream and event handles; never reused.
    next_handle: AtomicU64,
}

impl Default for HostBackend {
    fn default() -> Self {
        Self::new(HostConfig::default())
    }
}

impl HostBackend {
    pub fn new(config: HostConfig) -> Self {
        let cpu = CpuInfo::probe();
        let devices = (0..config.devices)
            .map(|dev| HostDevice {
                memory: Arc::new(DeviceMemory::new(config.memory_per_device)),
                properties: properties::host_properties(dev, config.memory_per_device, &cpu),
            })
            .collect();
        Self {
            devices,
            address_space: AddressSpace::new(),
            streams: RwLock::new(HashMap::new()),
            events: RwLock::new(HashMap::new()),
            next_handle: AtomicU64::new(1),
        }
    }

    fn device(&self, dev: DeviceIndex) -> Result<&HostDevice, BackendError> {
        if self.devices.is_empty() {
            return Err(BackendError::NoDevice(
                "the host backend emulates no devices".into(),
            ));
        }
        self.devices.get(dev as usize).ok_or_else(|| {
            BackendError::InvalidDevice(format!(
                "device {dev} does not exist ({} emulated)",
                self.devices.len()
            ))
        })
    }

    fn next_handle(&self) -> u64 {
        self.next_handle.fetch_add(1, Ordering::Relaxed)
    }

    fn stream(&self, handle: StreamHandle) -> Result<Arc<Stream>, BackendError> {
        read_lock(&self.streams)
            .get(&handle)
            .cloned()
            .ok_or_else(|| {
                BackendError::InvalidHandle(format!("stream {} does not exist", handle.as_raw()))
            })
    }

    fn event(&self, handle: EventHandle) -> Result<Arc<Event>, BackendError> {
        read_lock(&self.events)
            .get(&handle)
            .cloned()
            .ok_or_else(|| {
                BackendError::InvalidHandle(format!("event {} does not exist", handle.as_raw()))
            })
    }

    /// Waits until every stream of `devices` selected by `include` has run the work it had
    /// when the call began. Streams are snapshotted first, so no registry lock is held while
    /// waiting.
    fn wait_for_streams(&self, devices: &[DeviceIndex], include: impl Fn(&Stream) -> bool) {
        let pending: Vec<(Arc<Stream>, u64)> = read_lock(&self.streams)
            .values()
            .filter(|s| devices.contains(&s.device()) && include(s))
            .map(|s| (Arc::clone(s), s.last_ticket()))
            .collect();
        for (stream, ticket) in pending {
            stream.wait_for(ticket);
        }
    }

    /// The legacy null stream's implicit synchronization: wait for the blocking streams of
    /// `devices`.
    fn null_stream_barrier(&self, devices: &[DeviceIndex]) {
        self.wait_for_streams(devices, Stream::is_blocking);
    }

    /// Orders the caller after `stream`: drains it, or passes the null-stream barrier.
    fn wait_for_stream(
        &self,
        stream: Option<StreamHandle>,
        devices: &[DeviceIndex],
    ) -> Result<(), BackendError> {
        match stream {
            Some(handle) => self.stream(handle)?.drain(),
            None => self.null_stream_barrier(devices),
        }
        Ok(())
    }

    /// Queues `op` on `stream`, or runs it now on the null stream of `devices`.
    fn enqueue(
        &self,
        stream: Option<StreamHandle>,
        devices: &[DeviceIndex],
        op: StreamOp,
    ) -> Result<(), BackendError> {
        match stream {
            Some(handle) => self.stream(handle)?.submit(op).map(drop),
            None => {
                self.null_stream_barrier(devices);
                op.execute()
            }
        }
    }

    fn resolve(&self, ptr: DevicePtr, len: u64) -> Result<Region, BackendError> {
        self.address_space.resolve(ptr, len)
    }
}

impl Backend for HostBackend {
    fn name(&self) -> &'static str {
        "host"
    }

    fn device_count(&self) -> Result<u32, BackendError> {
        // `devices` was built from a `u32` count.
        Ok(self.devices.len() as u32)
    }

    fn device_properties(&self, dev: DeviceIndex) -> Result<DeviceProperties, BackendError> {
        Ok(self.device(dev)?.properties.clone())
    }

    fn device_synchronize(&self, dev: DeviceIndex) -> Result<(), BackendError> {
        self.device(dev)?;
        self.wait_for_streams(&[dev], |_| true);
        Ok(())
    }

    fn mem_get_info(&self, dev: DeviceIndex) -> Result<MemInfo, BackendError> {
        Ok(self.device(dev)?.memory.info())
    }

    fn malloc(&self, dev: DeviceIndex, size: u64) -> Result<DevicePtr, BackendError> {
        let device = self.device(dev)?;
        if size == 0 {
            return Ok(DevicePtr::NULL);
        }
        let out_of_memory = || {
            let MemInfo { free, total } = device.memory.info();
            BackendError::OutOfMemory(format!(
                "{size} bytes requested on device {dev}, {free} of {total} free"
            ))
        };
        let footprint = size
            .checked_next_multiple_of(PAGE)
            .ok_or_else(out_of_memory)?;
        let capacity = device
            .memory
            .try_reserve(footprint)
            .ok_or_else(out_of_memory)?;
        self.address_space.map(dev, size, capacity)
    }

    fn free(&self, ptr: DevicePtr) -> Result<(), BackendError> {
        if ptr.is_null() {
            return Ok(());
        }
        self.address_space.unmap(ptr)
    }

    fn memcpy_htod(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        data: HostData,
    ) -> Result<(), BackendError> {
        let dst = self.resolve(dst, data.len() as u64)?;
        self.enqueue(stream, &[dst.device()], StreamOp::CopyHtoD { dst, data })
    }

    fn memcpy_htod_sync(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        data: &[u8],
    ) -> Result<(), BackendError> {
        let dst = self.resolve(dst, data.len() as u64)?;
        self.wait_for_stream(stream, &[dst.device()])?;
        dst.write(data);
        Ok(())
    }

    fn with_device_bytes_mut(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        len: u64,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), BackendError> {
        let dst = self.resolve(dst, len)?;
        self.wait_for_stream(stream, &[dst.device()])?;
        dst.with_bytes_mut(fill);
        Ok(())
    }

    fn memcpy_dtoh(
        &self,
        stream: Option<StreamHandle>,
        src: DevicePtr,
        len: u64,
        done: DtohDone,
    ) -> Result<(), BackendError> {
        let src = self.resolve(src, len)?;
        self.enqueue(stream, &[src.device()], StreamOp::CopyDtoH { src, done })
    }

    fn memcpy_dtoh_sync(
        &self,
        stream: Option<StreamHandle>,
        src: DevicePtr,
        out: &mut [u8],
    ) -> Result<(), BackendError> {
        let src = self.resolve(src, out.len() as u64)?;
        self.wait_for_stream(stream, &[src.device()])?;
        src.read_into(out);
        Ok(())
    }

    fn with_device_bytes(
        &self,
        stream: Option<StreamHandle>,
        src: DevicePtr,
        len: u64,
        read: &mut dyn FnMut(&[u8]),
    ) -> Result<(), BackendError> {
        let src = self.resolve(src, len)?;
        self.wait_for_stream(stream, &[src.device()])?;
        src.with_bytes(read);
        Ok(())
    }

    fn memcpy_dtod(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        src: DevicePtr,
        len: u64,
    ) -> Result<(), BackendError> {
        let dst = self.resolve(dst, len)?;
        let src = self.resolve(src, len)?;
        let devices = [dst.device(), src.device()];
        self.enqueue(stream, &devices, StreamOp::CopyDtoD { dst, src })
    }

    fn memset(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        pattern: MemsetPattern,
        count: u64,
    ) -> Result<(), BackendError> {
        let len = pattern.byte_len(count).ok_or_else(|| {
            BackendError::InvalidValue(format!("memset of {count} elements overflows"))
        })?;
        let dst = self.resolve(dst, len)?;
        self.enqueue(stream, &[dst.device()], StreamOp::Memset { dst, pattern })
    }

    fn stream_create(
        &self,
        dev: DeviceIndex,
        flags: u32,
        _priority: i32,
    ) -> Result<StreamHandle, BackendError> {
        self.device(dev)?;
        if flags & !stream_flags::SUPPORTED != 0 {
            return Err(BackendError::InvalidValue(format!(
                "unknown stream flags {flags:#x}"
            )));
        }
        // Priorities are unsupported: every priority clamps into the range (0, 0).
        let blocking = flags & stream_flags::NON_BLOCKING == 0;
        let handle = StreamHandle::from_raw(self.next_handle());
        let stream = Stream::spawn(handle.as_raw(), dev, blocking)?;
        write_lock(&self.streams).insert(handle, Arc::new(stream));
        Ok(handle)
    }

    fn stream_destroy(&self, stream: StreamHandle) -> Result<(), BackendError> {
        let removed = write_lock(&self.streams).remove(&stream).ok_or_else(|| {
            BackendError::InvalidHandle(format!("stream {} does not exist", stream.as_raw()))
        })?;
        removed.shut_down();
        Ok(())
    }

    fn stream_synchronize(&self, stream: StreamHandle) -> Result<(), BackendError> {
        self.stream(stream)?.synchronize()
    }

    fn stream_query(&self, stream: StreamHandle) -> Result<bool, BackendError> {
        self.stream(stream)?.query()
    }

    fn stream_wait_event(
        &self,
        stream: Option<StreamHandle>,
        event: EventHandle,
    ) -> Result<(), BackendError> {
        let event = self.event(event)?;
        let Some(signal) = event.latest() else {
            return Ok(());
        };
        match stream {
            Some(handle) => self
                .stream(handle)?
                .submit(StreamOp::WaitEvent(signal))
                .map(drop),
            None => {
                signal.wait();
                Ok(())
            }
        }
    }

    fn stream_priority_range(&self, dev: DeviceIndex) -> Result<(i32, i32), BackendError> {
        self.device(dev)?;
        Ok((0, 0))
    }

    fn launch_host_func(&self, stream: StreamHandle, f: HostFn) -> Result<(), BackendError> {
        self.stream(stream)?.submit(StreamOp::HostFunc(f)).map(drop)
    }

    fn event_create(&self, dev: DeviceIndex, flags: u32) -> Result<EventHandle, BackendError> {
        self.device(dev)?;
        validate_event_flags(flags)?;
        let handle = EventHandle::from_raw(self.next_handle());
        write_lock(&self.events).insert(handle, Arc::new(Event::new(dev, flags)));
        Ok(handle)
    }

    fn event_destroy(&self, event: EventHandle) -> Result<(), BackendError> {
        write_lock(&self.events)
            .remove(&event)
            .map(drop)
            .ok_or_else(|| {
                BackendError::InvalidHandle(format!("event {} does not exist", event.as_raw()))
            })
    }

    fn event_record(
        &self,
        event: EventHandle,
        stream: Option<StreamHandle>,
    ) -> Result<(), BackendError> {
        let event = self.event(event)?;
        let signal = Arc::new(Signal::new());
        match stream {
            Some(handle) => {
                let stream = self.stream(handle)?;
                if stream.device() != event.device() {
                    return Err(BackendError::InvalidHandle(format!(
                        "event of device {} recorded on a stream of device {}",
                        event.device(),
                        stream.device()
                    )));
                }
                stream.submit(StreamOp::RecordEvent(Arc::clone(&signal)))?;
            }
            None => {
                self.null_stream_barrier(&[event.device()]);
                signal.fire();
            }
        }
        event.set_latest(signal);
        Ok(())
    }

    fn event_synchronize(&self, event: EventHandle) -> Result<(), BackendError> {
        if let Some(signal) = self.event(event)?.latest() {
            signal.wait();
        }
        Ok(())
    }

    fn event_query(&self, event: EventHandle) -> Result<bool, BackendError> {
        // Never recorded counts as complete, as in HIP.
        let reached = match self.event(event)?.latest() {
            Some(signal) => signal.fired_at().is_some(),
            None => true,
        };
        Ok(reached)
    }

    fn event_elapsed_ms(&self, start: EventHandle, end: EventHandle) -> Result<f32, BackendError> {
        let (start, end) = (self.event(start)?, self.event(end)?);
        if start.device() != end.device() {
            return Err(BackendError::InvalidHandle(
                "events belong to different devices".into(),
            ));
        }
        event::elapsed_ms(&start, &end)
    }
}

impl Drop for HostBackend {
    /// Closes every stream before joining any, so streams waiting on each other's events all
    /// drain.
    fn drop(&mut self) {
        let streams: Vec<Arc<Stream>> = write_lock(&self.streams).drain().map(|(_, s)| s).collect();
        for stream in &streams {
            stream.close();
        }
        for stream in &streams {
            stream.shut_down();
        }
    }
}

// Lock helpers. Poisoning carries no meaning here: the protected data (byte buffers, queues,
// counters) has no invariant a panicking holder could break halfway, and panics inside
// stream operations are caught before they reach a lock.

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn read_lock<T>(rwlock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    rwlock.read().unwrap_or_else(PoisonError::into_inner)
}

fn write_lock<T>(rwlock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    rwlock.write().unwrap_or_else(PoisonError::into_inner)
}

fn wait<'a, T>(condvar: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    condvar.wait(guard).unwrap_or_else(PoisonError::into_inner)
}
