//! Streams of the host backend: a FIFO of [`StreamOp`]s per stream, run in submission order
//! by the worker's bounded thread pool ([`executor`](super::executor)); and the backend's
//! [`StreamBackend`] impl.
//!
//! Progress is counted in tickets: submitting the n-th operation returns ticket n, and the
//! stream has reached ticket n once `completed >= n`. Waiting for "everything so far" means
//! waiting for the ticket current at the time of the call, so a producer that keeps queueing
//! cannot starve a synchronize.

use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use super::executor::{self, Pool};

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
    /// A host step whose failure is latched on the stream (stream memory operations,
    /// callbacks the client must answer).
    Checked(crate::backend::CheckedHostFn),
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
            Self::Checked(f) => return f(),
            Self::Kernel(launch) => return launch.run(),
        }
        Ok(())
    }

    /// Whether the operation keeps the device busy (and counts as device time): copies,
    /// memsets and kernels; not event records and waits or host functions.
    fn is_device_work(&self) -> bool {
        !matches!(self, Self::RecordEvent(_) | Self::WaitEvent(_) | Self::HostFunc(_) | Self::Checked(_))
    }

    /// Runs the operation, adding its time to `account` when it is device work.
    fn execute_accounted(self, account: Option<&crate::accounting::DeviceTime>) -> Result<(), BackendError> {
        match account {
            Some(account) if self.is_device_work() => account.run(|| self.execute()),
            _ => self.execute(),
        }
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
            Self::Checked(_) => "stream operation",
            Self::Kernel(_) => "kernel launch",
        }
    }
}

/// A one-shot completion with a timestamp: the point an event record stands for.
#[derive(Default)]
pub(super) struct Signal {
    state: Mutex<SignalState>,
    fired: Condvar,
}

#[derive(Default)]
struct SignalState {
    fired_at: Option<Instant>,
    /// Streams parked on this signal (an event wait reached before its record), made ready
    /// when it fires.
    parked: Vec<(Arc<Pool>, Arc<Queue>)>,
}

impl Signal {
    pub(super) fn new() -> Self {
        Self::default()
    }

    /// Marks the signal reached now; later calls keep the first timestamp.
    pub(super) fn fire(&self) {
        let parked = {
            let mut state = lock(&self.state);
            state.fired_at.get_or_insert_with(Instant::now);
            std::mem::take(&mut state.parked)
        };
        self.fired.notify_all();
        for (pool, queue) in parked {
            pool.make_ready(queue);
        }
    }

    pub(super) fn fired_at(&self) -> Option<Instant> {
        lock(&self.state).fired_at
    }

    /// Blocks until the signal fires; returns its timestamp.
    pub(super) fn wait(&self) -> Instant {
        let mut state = lock(&self.state);
        loop {
            if let Some(at) = state.fired_at {
                return at;
            }
            state = wait(&self.fired, state);
        }
    }

    /// Parks `queue` until the signal fires, unless it has: then `false`.
    fn park(&self, pool: &Arc<Pool>, queue: &Arc<Queue>) -> bool {
        let mut state = lock(&self.state);
        if state.fired_at.is_some() {
            return false;
        }
        state.parked.push((Arc::clone(pool), Arc::clone(queue)));
        true
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
    /// In the pool's run queue, being run, or parked on a signal: the stream has a turn
    /// coming and must not be made ready again.
    scheduled: bool,
}

/// A stream's operations and progress.
#[derive(Default)]
pub(super) struct Queue {
    state: Mutex<QueueState>,
    /// Signalled when an operation completes.
    progress: Condvar,
    /// Where the device time of its work goes (the owning session's account).
    account: std::sync::OnceLock<Arc<crate::accounting::DeviceTime>>,
}

impl Queue {
    /// Runs the stream's next operation on the calling pool thread; returns whether the
    /// stream has more and should go back into the run queue. An event wait whose record is
    /// not reached yet parks the stream on the record instead of blocking the thread.
    pub(super) fn run_one(queue: &Arc<Queue>, pool: &Arc<Pool>) -> bool {
        let op = {
            let mut state = lock(&queue.state);
            let Some(op) = state.pending.pop_front() else {
                state.scheduled = false;
                return false;
            };
            if let StreamOp::WaitEvent(signal) = &op {
                if signal.park(pool, queue) {
                    state.pending.push_front(op);
                    return false;
                }
            }
            op
        };
        let kind = op.kind();
        // A panicking operation (a host function, the session's dtoh callback) must not take
        // the pool thread down with it: later work and every waiter would hang.
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| op.execute_accounted(queue.account.get().map(|a| &**a))))
            .unwrap_or_else(|_| Err(BackendError::Unknown(format!("{kind} panicked on the stream executor"))));
        let mut state = lock(&queue.state);
        state.completed += 1;
        if let Err(error) = outcome {
            tracing::debug!(%error, "queued {kind} failed");
            state.error.get_or_insert(error);
        }
        let more = !state.pending.is_empty();
        state.scheduled = more;
        drop(state);
        queue.progress.notify_all();
        more
    }
}

/// A stream: its queue, served by the pool; or, for a session's stand-in for the null
/// stream, run on the caller's thread.
pub(super) struct Stream {
    device: DeviceIndex,
    /// Not created with `hipStreamNonBlocking`: the null stream waits for it.
    blocking: bool,
    /// Runs a short operation on the submitting thread, returning its error, when nothing is
    /// queued before it (for a session's stand-in for the null stream: see
    /// `stream_flags::SESSION_DEFAULT`); kernels and waits are queued (see [`Stream::submit`]).
    inline: bool,
    queue: Arc<Queue>,
    pool: Arc<Pool>,
    /// What its kernels printed, until the session takes it for the client.
    output: Arc<KernelOutput>,
}

/// Most bytes of kernel output a stream keeps for its client between two synchronizations;
/// beyond it, output is dropped and a note says how much.
pub const MAX_PENDING_KERNEL_OUTPUT: usize = 4 << 20;

/// Kernel `printf` output of one stream, in launch order, bounded by
/// [`MAX_PENDING_KERNEL_OUTPUT`].
#[derive(Default)]
pub(crate) struct KernelOutput {
    pending: Mutex<(Vec<u8>, usize)>,
}

impl KernelOutput {
    /// Appends a launch's output (dropping what exceeds the bound, counted).
    pub(crate) fn append(&self, text: &[u8]) {
        let mut pending = lock(&self.pending);
        let room = MAX_PENDING_KERNEL_OUTPUT.saturating_sub(pending.0.len());
        let kept = text.len().min(room);
        pending.0.extend_from_slice(&text[..kept]);
        pending.1 += text.len() - kept;
    }

    /// Everything appended since the last call, with a note of what was dropped.
    pub(crate) fn take(&self) -> Vec<u8> {
        let (mut text, dropped) = std::mem::take(&mut *lock(&self.pending));
        if dropped > 0 {
            text.extend(format!("\n[hip-remote: {dropped} bytes of kernel printf output beyond {MAX_PENDING_KERNEL_OUTPUT} dropped]\n").bytes());
        }
        text
    }
}

impl Stream {
    pub(super) fn new(pool: &Arc<Pool>, device: DeviceIndex, blocking: bool, inline: bool) -> Self {
        Self { device, blocking, inline, queue: Arc::default(), pool: Arc::clone(pool), output: Arc::default() }
    }

    /// Where the stream's kernels print.
    pub(super) fn output(&self) -> &Arc<KernelOutput> {
        &self.output
    }

    pub(super) fn device(&self) -> DeviceIndex {
        self.device
    }

    pub(super) fn is_blocking(&self) -> bool {
        self.blocking
    }

    /// Queues `op`; returns its ticket. An inline stream with nothing queued runs a short
    /// `op` now and returns its failure instead.
    pub(super) fn submit(&self, op: StreamOp) -> Result<u64, BackendError> {
        let mut state = lock(&self.queue.state);
        if state.closing {
            return Err(BackendError::InvalidHandle("stream is being destroyed".into()));
        }
        state.submitted += 1;
        let ticket = state.submitted;
        // On the inline stream, an operation runs here only when nothing before it is still
        // queued and it cannot take long: kernels, host functions (which wait for the client's
        // callback thread) and waits on other streams are queued, and so is everything after
        // them until the queue is empty again. The null stream is asynchronous for its caller,
        // as HIP's is: a launch returns at once, and a query or event record behind a running
        // kernel neither blocks the session nor completes early.
        let queued_kind = matches!(op, StreamOp::HostFunc(_) | StreamOp::Checked(_) | StreamOp::Kernel(_) | StreamOp::WaitEvent(_));
        if self.inline && !queued_kind && state.completed + 1 == ticket {
            drop(state);
            let outcome = op.execute_accounted(self.queue.account.get().map(|a| &**a));
            lock(&self.queue.state).completed += 1;
            self.queue.progress.notify_all();
            return outcome.map(|()| ticket);
        }
        state.pending.push_back(op);
        let make_ready = !state.scheduled;
        state.scheduled = true;
        drop(state);
        if make_ready {
            self.pool.make_ready(Arc::clone(&self.queue));
        }
        Ok(ticket)
    }

    /// Adds the device time of this stream's work to `account` from now on (once).
    pub(super) fn set_account(&self, account: Arc<crate::accounting::DeviceTime>) {
        let _ = self.queue.account.set(account);
    }

    /// Whether everything submitted has run.
    pub(super) fn is_idle(&self) -> bool {
        let state = lock(&self.queue.state);
        state.completed == state.submitted
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

    /// Refuses further work; what is queued still runs.
    pub(super) fn close(&self) {
        lock(&self.queue.state).closing = true;
    }

    /// Closes the stream and waits until its queued work has run. Idempotent. Called from
    /// the stream's own work (a host function destroying its stream) it only closes: it
    /// cannot wait for itself.
    pub(super) fn shut_down(&self) {
        self.close();
        if executor::is_running(&self.queue) {
            return;
        }
        self.drain();
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

impl StreamBackend for HostBackend {
    fn stream_create(&self, dev: DeviceIndex, flags: u32, _priority: i32) -> Result<StreamHandle, BackendError> {
        self.device(dev)?;
        if flags & !(stream_flags::SUPPORTED | stream_flags::SESSION_DEFAULT) != 0 {
            return Err(BackendError::InvalidValue(format!("unknown stream flags {flags:#x}")));
        }
        // Priorities are unsupported: every priority clamps into the range (0, 0).
        let session_default = flags & stream_flags::SESSION_DEFAULT != 0;
        let blocking = flags & stream_flags::NON_BLOCKING == 0 && !session_default;
        let handle = StreamHandle::from_raw(self.next_handle());
        let stream = Stream::new(self.executor.pool(), dev, blocking, session_default);
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
        let stream = self.stream(stream)?;
        self.injected.check(stream.device)?;
        stream.synchronize()
    }

    fn account_stream(&self, stream: StreamHandle, account: Arc<crate::accounting::DeviceTime>) -> Result<(), BackendError> {
        self.stream(stream)?.set_account(account);
        Ok(())
    }

    fn take_kernel_output(&self, stream: StreamHandle) -> Vec<u8> {
        self.stream(stream).map(|s| s.output().take()).unwrap_or_default()
    }

    fn stream_query(&self, stream: StreamHandle) -> Result<bool, BackendError> {
        let stream = self.stream(stream)?;
        self.injected.check(stream.device)?;
        stream.query()
    }

    fn stream_wait_event(&self, stream: Option<StreamHandle>, event: EventHandle) -> Result<(), BackendError> {
        let event = self.event(event)?;
        if let Some(page) = event.shared_page() {
            return self.wait_shared_event(page, stream);
        }
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

    fn stream_order_after(&self, waiter: StreamHandle, waited: StreamHandle) -> Result<(), BackendError> {
        let (waiter, waited) = (self.stream(waiter)?, self.stream(waited)?);
        if waited.is_idle() {
            return Ok(());
        }
        let signal = Arc::new(Signal::new());
        waited.submit(StreamOp::RecordEvent(Arc::clone(&signal)))?;
        waiter.submit(StreamOp::WaitEvent(signal)).map(drop)
    }

    fn launch_host_func(&self, stream: StreamHandle, f: HostFn) -> Result<(), BackendError> {
        self.stream(stream)?.submit(StreamOp::HostFunc(f)).map(drop)
    }
}

#[cfg(test)]
mod kernel_output_tests {
    use super::*;

    #[test]
    fn output_is_kept_in_order_up_to_the_bound_and_what_is_dropped_is_counted() {
        let out = KernelOutput::default();
        out.append(b"first\n");
        out.append(b"second\n");
        assert_eq!(out.take(), b"first\nsecond\n");
        assert!(out.take().is_empty(), "taken once");
        out.append(&vec![b'a'; MAX_PENDING_KERNEL_OUTPUT - 1]);
        out.append(b"bcd");
        let text = out.take();
        assert!(text.starts_with(&vec![b'a'; MAX_PENDING_KERNEL_OUTPUT - 1]));
        assert_eq!(text[MAX_PENDING_KERNEL_OUTPUT - 1], b'b');
        let note = String::from_utf8_lossy(&text[MAX_PENDING_KERNEL_OUTPUT..]).into_owned();
        assert_eq!(note, format!("\n[hip-remote: 2 bytes of kernel printf output beyond {MAX_PENDING_KERNEL_OUTPUT} dropped]\n"));
    }
}
