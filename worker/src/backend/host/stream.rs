//! Streams of the host backend: one executor thread per stream, running a FIFO of
//! [`StreamOp`]s in submission order; and the backend's [`StreamBackend`] impl.
//!
//! Progress is counted in tickets: submitting the n-th operation returns ticket n, and the
//! stream has reached ticket n once `completed >= n`. Waiting for "everything so far" means
//! waiting for the ticket current at the time of the call, so a producer that keeps queueing
//! cannot starve a synchronize.

use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle, ThreadId};
use std::time::Instant;

use super::launch::KernelLaunch;
use super::memory::{Region, RowLayout};
use super::{lock, wait, write_lock, HostBackend};

use crate::backend::{stream_flags, BackendError, DeviceIndex, DtohDone, EventHandle, HostData, HostFn, MemsetPattern, StreamBackend, StreamHandle};

/// One unit of queued work. Regions hold their allocations alive, so an operation never
/// outlives the memory it touches.
pub(super) enum StreamOp {
    CopyHtoD {
        dst: Region,
        data: HostData,
    },
    CopyDtoH {
        src: Region,
        done: DtohDone,
    },
    CopyDtoD {
        dst: Region,
        src: Region,
    },
    Memset {
        dst: Region,
        pattern: MemsetPattern,
    },
    CopyHtoD2D {
        dst: Region,
        rows: RowLayout,
        data: HostData,
    },
    CopyDtoH2D {
        src: Region,
        rows: RowLayout,
        done: DtohDone,
    },
    CopyDtoD2D {
        dst: Region,
        dst_pitch: usize,
        src: Region,
        src_pitch: usize,
        width: usize,
        height: usize,
    },
    /// Timestamps and completes an event record.
    RecordEvent(Arc<Signal>),
    /// Holds the stream until another stream reaches an event record.
    WaitEvent(Arc<Signal>),
    HostFunc(HostFn),
    /// A kernel launch; a failure is latched on the stream as a GPU fault would be.
    Kernel(KernelLaunch),
}

impl StreamOp {
    /// Runs the operation on the calling thread: the stream's executor, or the caller itself
    /// for null-stream work.
    pub(super) fn execute(self) -> Result<(), BackendError> {
        match self {
            Self::CopyHtoD { dst, data } => dst.write(data.as_bytes()),
            Self::CopyDtoH { src, done } => {
                let bytes = src.read_to_vec();
                let outcome = bytes.as_ref().map(drop).map_err(Clone::clone);
                done(bytes);
                return outcome;
            }
            Self::CopyDtoD { dst, src } => Region::copy(&dst, &src),
            Self::Memset { dst, pattern } => dst.fill(pattern),
            Self::CopyHtoD2D { dst, rows, data } => dst.write_rows(rows, data.as_bytes()),
            Self::CopyDtoH2D { src, rows, done } => {
                let bytes = src.read_rows(rows);
                let outcome = bytes.as_ref().map(drop).map_err(Clone::clone);
                done(bytes);
                return outcome;
            }
            Self::CopyDtoD2D { dst, dst_pitch, src, src_pitch, width, height } => Region::copy_rows(&dst, dst_pitch, &src, src_pitch, width, height),
            Self::RecordEvent(signal) => signal.fire(),
            Self::WaitEvent(signal) => {
                signal.wait();
            }
            Self::HostFunc(f) => f(),
            Self::Kernel(launch) => return launch.run(),
        }
        Ok(())
    }

    fn kind(&self) -> &'static str {
        match self {
            Self::CopyHtoD { .. } => "host-to-device copy",
            Self::CopyDtoH { .. } => "device-to-host copy",
            Self::CopyDtoD { .. } => "device-to-device copy",
            Self::Memset { .. } => "memset",
            Self::CopyHtoD2D { .. } => "host-to-device 2D copy",
            Self::CopyDtoH2D { .. } => "device-to-host 2D copy",
            Self::CopyDtoD2D { .. } => "device-to-device 2D copy",
            Self::RecordEvent(_) => "event record",
            Self::WaitEvent(_) => "event wait",
            Self::HostFunc(_) => "host function",
            Self::Kernel(_) => "kernel launch",
        }
    }
}

/// A one-shot completion with a timestamp: the point an event record stands for.
#[derive(Debug, Default)]
pub(super) struct Signal {
    fired_at: Mutex<Option<Instant>>,
    fired: Condvar,
}

impl Signal {
    pub(super) fn new() -> Self {
        Self::default()
    }

    /// Marks the signal reached now; later calls keep the first timestamp.
    pub(super) fn fire(&self) {
        lock(&self.fired_at).get_or_insert_with(Instant::now);
        self.fired.notify_all();
    }

    pub(super) fn fired_at(&self) -> Option<Instant> {
        *lock(&self.fired_at)
    }

    /// Blocks until the signal fires; returns its timestamp.
    pub(super) fn wait(&self) -> Instant {
        let mut fired_at = lock(&self.fired_at);
        loop {
            if let Some(at) = *fired_at {
                return at;
            }
            fired_at = wait(&self.fired, fired_at);
        }
    }
}

#[derive(Default)]
struct QueueState {
    pending: VecDeque<StreamOp>,
    submitted: u64,
    completed: u64,
    /// The first failure of a queued operation; reported until the stream is destroyed.
    error: Option<BackendError>,
    closing: bool,
}

#[derive(Default)]
struct Queue {
    state: Mutex<QueueState>,
    /// Signalled when work is pushed or the stream closes.
    work: Condvar,
    /// Signalled when an operation completes.
    progress: Condvar,
}

/// A stream: its queue and the thread draining it.
pub(super) struct Stream {
    device: DeviceIndex,
    /// Not created with `hipStreamNonBlocking`: the null stream waits for it.
    blocking: bool,
    queue: Arc<Queue>,
    executor: Mutex<Option<JoinHandle<()>>>,
    executor_id: ThreadId,
}

impl Stream {
    pub(super) fn spawn(id: u64, device: DeviceIndex, blocking: bool) -> Result<Self, BackendError> {
        let queue = Arc::new(Queue::default());
        let executor = thread::Builder::new()
            .name(format!("hip-host-stream-{id}"))
            .spawn({
                let queue = Arc::clone(&queue);
                move || run_executor(&queue)
            })
            .map_err(|e| BackendError::OutOfMemory(format!("cannot start a stream executor thread: {e}")))?;
        let executor_id = executor.thread().id();
        Ok(Self { device, blocking, queue, executor: Mutex::new(Some(executor)), executor_id })
    }

    pub(super) fn device(&self) -> DeviceIndex {
        self.device
    }

    pub(super) fn is_blocking(&self) -> bool {
        self.blocking
    }

    /// Queues `op`; returns its ticket.
    pub(super) fn submit(&self, op: StreamOp) -> Result<u64, BackendError> {
        let mut state = lock(&self.queue.state);
        if state.closing {
            return Err(BackendError::InvalidHandle("stream is being destroyed".into()));
        }
        state.pending.push_back(op);
        state.submitted += 1;
        let ticket = state.submitted;
        drop(state);
        self.queue.work.notify_one();
        Ok(ticket)
    }

    /// The ticket of the latest operation submitted so far.
    pub(super) fn last_ticket(&self) -> u64 {
        lock(&self.queue.state).submitted
    }

    /// Blocks until the operation with `ticket` (and all before it) has run.
    pub(super) fn wait_for(&self, ticket: u64) {
        let mut state = lock(&self.queue.state);
        while state.completed < ticket {
            state = wait(&self.queue.progress, state);
        }
    }

    /// Blocks until everything submitted so far has run, ignoring latched errors.
    pub(super) fn drain(&self) {
        self.wait_for(self.last_ticket());
    }

    /// Drains, then reports the latched error, if any.
    pub(super) fn synchronize(&self) -> Result<(), BackendError> {
        self.drain();
        self.latched_error().map_or(Ok(()), Err)
    }

    /// Whether everything submitted has run; a latched error is reported instead.
    pub(super) fn query(&self) -> Result<bool, BackendError> {
        let state = lock(&self.queue.state);
        match &state.error {
            Some(error) => Err(error.clone()),
            None => Ok(state.completed == state.submitted),
        }
    }

    fn latched_error(&self) -> Option<BackendError> {
        lock(&self.queue.state).error.clone()
    }

    /// Tells the executor to exit once the queue is empty; nothing is discarded.
    pub(super) fn close(&self) {
        lock(&self.queue.state).closing = true;
        self.queue.work.notify_all();
    }

    /// Closes the stream and joins its executor after it ran the queued work. Idempotent.
    /// Called from the executor itself (a host function destroying its own stream) it only
    /// closes: a thread cannot join itself.
    pub(super) fn shut_down(&self) {
        self.close();
        if thread::current().id() == self.executor_id {
            return;
        }
        let Some(executor) = lock(&self.executor).take() else {
            return;
        };
        if executor.join().is_err() {
            tracing::error!(device = self.device, "stream executor thread panicked");
        }
        if let Some(error) = self.latched_error() {
            tracing::warn!(device = self.device, %error, "stream destroyed with a latched error");
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// The executor loop: pops operations in order until the queue is closed and empty.
fn run_executor(queue: &Queue) {
    loop {
        let op = {
            let mut state = lock(&queue.state);
            loop {
                if let Some(op) = state.pending.pop_front() {
                    break op;
                }
                if state.closing {
                    return;
                }
                state = wait(&queue.work, state);
            }
        };
        let kind = op.kind();
        // A panicking operation (a host function, the session's dtoh callback) must not take
        // the executor down with it: later work and every waiter would hang.
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| op.execute()))
            .unwrap_or_else(|_| Err(BackendError::Unknown(format!("{kind} panicked on the stream executor"))));
        let mut state = lock(&queue.state);
        state.completed += 1;
        if let Err(error) = outcome {
            tracing::debug!(%error, "queued {kind} failed");
            state.error.get_or_insert(error);
        }
        drop(state);
        queue.progress.notify_all();
    }
}

impl StreamBackend for HostBackend {
    fn stream_create(&self, dev: DeviceIndex, flags: u32, _priority: i32) -> Result<StreamHandle, BackendError> {
        self.device(dev)?;
        if flags & !stream_flags::SUPPORTED != 0 {
            return Err(BackendError::InvalidValue(format!("unknown stream flags {flags:#x}")));
        }
        // Priorities are unsupported: every priority clamps into the range (0, 0).
        let blocking = flags & stream_flags::NON_BLOCKING == 0;
        let handle = StreamHandle::from_raw(self.next_handle());
        let stream = Stream::spawn(handle.as_raw(), dev, blocking)?;
        write_lock(&self.streams).insert(handle, Arc::new(stream));
        Ok(handle)
    }

    fn stream_destroy(&self, stream: StreamHandle) -> Result<(), BackendError> {
        let removed = write_lock(&self.streams)
            .remove(&stream)
            .ok_or_else(|| BackendError::InvalidHandle(format!("stream {} does not exist", stream.as_raw())))?;
        removed.shut_down();
        Ok(())
    }

    fn stream_synchronize(&self, stream: StreamHandle) -> Result<(), BackendError> {
        self.stream(stream)?.synchronize()
    }

    fn stream_query(&self, stream: StreamHandle) -> Result<bool, BackendError> {
        self.stream(stream)?.query()
    }

    fn stream_wait_event(&self, stream: Option<StreamHandle>, event: EventHandle) -> Result<(), BackendError> {
        let event = self.event(event)?;
        let Some(signal) = event.latest() else {
            return Ok(());
        };
        match stream {
            Some(handle) => self.stream(handle)?.submit(StreamOp::WaitEvent(signal)).map(drop),
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

    fn stream_info(&self, stream: StreamHandle) -> Result<(u32, i32), BackendError> {
        let flags = if self.stream(stream)?.is_blocking() { stream_flags::DEFAULT } else { stream_flags::NON_BLOCKING };
        // Priorities are unsupported: every stream's priority clamps to 0.
        Ok((flags, 0))
    }

    fn launch_host_func(&self, stream: StreamHandle, f: HostFn) -> Result<(), BackendError> {
        self.stream(stream)?.submit(StreamOp::HostFunc(f)).map(drop)
    }
}
