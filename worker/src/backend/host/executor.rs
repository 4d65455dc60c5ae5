//! The host backend's stream executor: a bounded pool of OS threads serving every stream of
//! the worker, instead of a thread per stream (4 096 streams were 4 100 threads).
//!
//! Each stream keeps its own FIFO; a stream with work is *ready* and waits in one run queue
//! shared by the pool. A pool thread takes the stream at the front, runs exactly one of its
//! operations and, if the stream has more, puts it back at the end: streams are served
//! round-robin, one operation of a stream at a time, so a session with a long queue cannot
//! starve another session's stream, and order within a stream is kept. A long kernel holds
//! one pool thread only. An event wait whose record has not been reached does not hold a
//! thread either: the stream is parked on the record's [`Signal`] and made ready again when
//! the record fires, so waits between streams cannot exhaust the pool and deadlock it.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};

use super::stream::Queue;
use super::{lock, wait};

/// Default pool threads per CPU core (`hip-worker --stream-threads` sets the total): two per
/// core keeps every core busy while some threads wait in host functions or copies.
pub const STREAM_THREADS_PER_CORE: usize = 2;

/// The default pool size: [`STREAM_THREADS_PER_CORE`] per available core.
pub fn default_stream_threads() -> usize {
    thread::available_parallelism().map_or(1, |n| n.get()) * STREAM_THREADS_PER_CORE
}

thread_local! {
    /// The stream whose operation this pool thread is running (its queue's address), so a
    /// host function destroying its own stream does not wait for itself.
    static RUNNING: Cell<usize> = const { Cell::new(0) };
}

/// Whether the calling thread is a pool thread running an operation of `queue`.
pub(super) fn is_running(queue: &Queue) -> bool {
    RUNNING.with(|running| running.get() == queue as *const Queue as usize)
}

#[derive(Default)]
struct RunQueue {
    ready: VecDeque<Arc<Queue>>,
    /// Pool threads waiting for a ready stream.
    idle: usize,
    shutting_down: bool,
}

/// The pool's shared state: the run queue and its threads, started lazily up to the
/// maximum. Streams hold it to make themselves ready.
pub(super) struct Pool {
    run_queue: Mutex<RunQueue>,
    ready: Condvar,
    threads: Mutex<Vec<JoinHandle<()>>>,
    max_threads: usize,
}

/// Owns the pool: dropping it lets the threads finish every ready stream, then joins them.
pub(super) struct StreamExecutor {
    pool: Arc<Pool>,
}

impl StreamExecutor {
    pub(super) fn new(max_threads: usize) -> Self {
        let pool = Pool { run_queue: Mutex::default(), ready: Condvar::new(), threads: Mutex::default(), max_threads: max_threads.max(1) };
        Self { pool: Arc::new(pool) }
    }

    pub(super) fn pool(&self) -> &Arc<Pool> {
        &self.pool
    }

    /// How many pool threads are running.
    #[cfg(test)]
    pub(super) fn thread_count(&self) -> usize {
        lock(&self.pool.threads).len()
    }
}

impl Drop for StreamExecutor {
    fn drop(&mut self) {
        lock(&self.pool.run_queue).shutting_down = true;
        self.pool.ready.notify_all();
        let threads = std::mem::take(&mut *lock(&self.pool.threads));
        for thread in threads {
            if thread.join().is_err() {
                tracing::error!("stream pool thread panicked");
            }
        }
    }
}

impl Pool {
    /// Puts `queue` at the end of the run queue, starting a thread if none is idle and the
    /// pool is not full. The caller marked the stream scheduled, so it is in the run queue
    /// at most once.
    pub(super) fn make_ready(self: &Arc<Self>, queue: Arc<Queue>) {
        let grow = {
            let mut run_queue = lock(&self.run_queue);
            run_queue.ready.push_back(queue);
            run_queue.idle < run_queue.ready.len() && !run_queue.shutting_down
        };
        self.ready.notify_one();
        if grow {
            self.grow();
        }
    }

    fn grow(self: &Arc<Self>) {
        let mut threads = lock(&self.threads);
        if threads.len() >= self.max_threads {
            return;
        }
        let pool = Arc::clone(self);
        match thread::Builder::new().name(format!("hip-host-stream-{}", threads.len())).spawn(move || pool.serve()) {
            Ok(handle) => threads.push(handle),
            // The threads already running still serve every stream, with less overlap.
            Err(error) => tracing::warn!(%error, running = threads.len(), "cannot start another stream pool thread"),
        }
    }

    /// A pool thread: runs one operation of the stream at the front at a time, until the
    /// pool shuts down with nothing ready.
    fn serve(self: Arc<Self>) {
        loop {
            let queue = {
                let mut run_queue = lock(&self.run_queue);
                loop {
                    if let Some(queue) = run_queue.ready.pop_front() {
                        break queue;
                    }
                    if run_queue.shutting_down {
                        return;
                    }
                    run_queue.idle += 1;
                    run_queue = wait(&self.ready, run_queue);
                    run_queue.idle -= 1;
                }
            };
            RUNNING.with(|running| running.set(Arc::as_ptr(&queue) as usize));
            let more = Queue::run_one(&queue, &self);
            RUNNING.with(|running| running.set(0));
            if more {
                self.make_ready(queue);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::host::stream::{Signal, Stream, StreamOp};
    use std::time::{Duration, Instant};

    fn host_fn(f: impl FnOnce() + Send + 'static) -> StreamOp {
        StreamOp::HostFunc(Box::new(f))
    }

    #[test]
    fn many_streams_share_a_bounded_pool_in_order() {
        let executor = StreamExecutor::new(3);
        let streams: Vec<Stream> = (0..64).map(|_| Stream::new(executor.pool(), 0, true, false)).collect();
        let seen = Arc::new(Mutex::new(vec![Vec::new(); streams.len()]));
        for step in 0..20 {
            for (i, stream) in streams.iter().enumerate() {
                let seen = Arc::clone(&seen);
                stream.submit(host_fn(move || lock(&seen)[i].push(step))).unwrap();
            }
        }
        for stream in &streams {
            stream.synchronize().unwrap();
        }
        assert!(executor.thread_count() <= 3, "{} pool threads", executor.thread_count());
        for order in lock(&seen).iter() {
            assert_eq!(*order, (0..20).collect::<Vec<_>>(), "each stream runs its operations in order");
        }
    }

    #[test]
    fn a_long_stream_does_not_starve_another() {
        let executor = StreamExecutor::new(1);
        let (busy, quick) = (Stream::new(executor.pool(), 0, true, false), Stream::new(executor.pool(), 0, true, false));
        for _ in 0..50 {
            busy.submit(host_fn(|| thread::sleep(Duration::from_millis(20)))).unwrap();
        }
        let started = Instant::now();
        quick.submit(host_fn(|| {})).unwrap();
        quick.synchronize().unwrap();
        // Round-robin: at most the operation running now plus one more of the busy stream.
        assert!(started.elapsed() < Duration::from_millis(500), "waited {:?} behind another stream", started.elapsed());
        busy.synchronize().unwrap();
    }

    #[test]
    fn event_waits_park_instead_of_holding_pool_threads() {
        // One thread, 8 streams waiting for a record queued last: blocking waits would
        // deadlock the pool.
        let executor = StreamExecutor::new(1);
        let signal = Arc::new(Signal::new());
        let waiters: Vec<Stream> = (0..8).map(|_| Stream::new(executor.pool(), 0, true, false)).collect();
        for waiter in &waiters {
            waiter.submit(StreamOp::WaitEvent(Arc::clone(&signal))).unwrap();
        }
        let recorder = Stream::new(executor.pool(), 0, true, false);
        recorder.submit(StreamOp::RecordEvent(Arc::clone(&signal))).unwrap();
        for waiter in &waiters {
            waiter.synchronize().unwrap();
        }
        assert!(signal.fired_at().is_some());
    }
}
