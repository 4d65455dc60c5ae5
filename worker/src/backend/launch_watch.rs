//! What the GPU backends keep for the kernel watchdog (`--max-kernel-ms`, `crate::watchdog`)
//! while it is on: an event recorded after each launch, per stream in launch order. A stream
//! whose oldest unfinished launch has been at its head — the launch before it finished —
//! longer than the limit runs a kernel past it. Stream waits (`hipStreamWaitValue*`) are
//! entries too, never counted: a wait lasts as long as the application holds it, and the
//! launch queued behind it counts from when it was released, not from its queueing. Off (the
//! default), nothing is recorded and the launch path makes no extra call.

use super::DeviceIndex;
use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A stream: its raw handle (0 for a device's null stream) and device.
pub type StreamKey = (usize, DeviceIndex);

struct Pending<E> {
    event: E,
    /// Since when the launch is the oldest unfinished one of its stream.
    head_since: Option<Instant>,
    /// A launch of the tenant's, held to the limit; false for a stream wait.
    counted: bool,
}

/// Launches in flight per stream, with the event recorded after each; generic over the
/// runtime's event type.
pub struct LaunchWatch<E> {
    on: OnceLock<()>,
    streams: Mutex<HashMap<StreamKey, VecDeque<Pending<E>>>>,
}

impl<E: Copy> Default for LaunchWatch<E> {
    fn default() -> Self {
        Self { on: OnceLock::new(), streams: Mutex::default() }
    }
}

/// What an event query answered.
pub enum Reached {
    /// The launch finished.
    Done,
    /// Still running (or waiting its turn).
    Running,
    /// The query failed (a context in a sticky error state): forget the launch.
    Failed,
}

impl<E: Copy> LaunchWatch<E> {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<StreamKey, VecDeque<Pending<E>>>> {
        self.streams.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Turns recording on (once the watchdog runs).
    pub fn enable(&self) {
        let _ = self.on.set(());
    }

    /// Whether launches are recorded.
    pub fn enabled(&self) -> bool {
        self.on.get().is_some()
    }

    /// A launch was queued on `stream`; `record` records its event (after the launch, on
    /// the same stream). A failed record leaves the launch unwatched.
    pub fn launched<Err>(&self, stream: StreamKey, record: impl FnOnce() -> Result<E, Err>) {
        self.push(stream, record, true);
    }

    /// A stream wait was queued on `stream` (`record` as for [`LaunchWatch::launched`]): it
    /// may hold the stream for any time without counting as an overrun, and the launches
    /// behind it count from when it is seen finished.
    pub fn waited<Err>(&self, stream: StreamKey, record: impl FnOnce() -> Result<E, Err>) {
        self.push(stream, record, false);
    }

    fn push<Err>(&self, stream: StreamKey, record: impl FnOnce() -> Result<E, Err>, counted: bool) {
        let Ok(event) = record() else { return };
        let mut streams = self.lock();
        let queue = streams.entry(stream).or_default();
        let head_since = queue.is_empty().then(Instant::now);
        queue.push_back(Pending { event, head_since, counted });
    }

    /// The devices with a stream whose head launch has run longer than `limit`. `query`
    /// asks whether an event was reached (called with the event's device); `destroy` frees
    /// the events of finished launches.
    pub fn overrun(&self, limit: Duration, query: impl Fn(DeviceIndex, E) -> Reached, destroy: impl Fn(DeviceIndex, E)) -> Vec<DeviceIndex> {
        let now = Instant::now();
        let mut over = Vec::new();
        let mut streams = self.lock();
        for (&(_, device), queue) in streams.iter_mut() {
            while let Some(head) = queue.front_mut() {
                match query(device, head.event) {
                    Reached::Running if !head.counted => break,
                    Reached::Running => {
                        let since = *head.head_since.get_or_insert(now);
                        if now.saturating_duration_since(since) > limit && !over.contains(&device) {
                            over.push(device);
                        }
                        break;
                    }
                    Reached::Done => {
                        destroy(device, head.event);
                        queue.pop_front();
                    }
                    Reached::Failed => {
                        queue.pop_front();
                    }
                }
            }
        }
        streams.retain(|_, queue| !queue.is_empty());
        over
    }

    /// Forgets `device`'s launches (its context was reset: the events went with it).
    pub fn forget_device(&self, device: DeviceIndex) {
        self.lock().retain(|&(_, d), _| d != device);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[test]
    fn the_head_launch_counts_from_when_the_one_before_finished() {
        let watch = LaunchWatch::<u32>::default();
        let done = RefCell::new(vec![false; 3]);
        let query = |_: DeviceIndex, e: u32| if done.borrow()[e as usize] { Reached::Done } else { Reached::Running };
        watch.launched::<()>((7, 0), || Ok(0));
        watch.launched::<()>((7, 0), || Ok(1));
        watch.launched::<()>((9, 1), || Ok(2));
        std::thread::sleep(Duration::from_millis(30));
        // Both heads have been running 30 ms.
        let mut over = watch.overrun(Duration::from_millis(10), query, |_, _| {});
        over.sort_unstable();
        assert_eq!(over, vec![0, 1]);
        // The first launch finished: the second is the head from now on, not from its queueing.
        done.borrow_mut()[0] = true;
        done.borrow_mut()[2] = true;
        assert_eq!(watch.overrun(Duration::from_millis(10), query, |_, _| {}), Vec::<DeviceIndex>::new());
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(watch.overrun(Duration::from_millis(10), query, |_, _| {}), vec![0]);
        watch.forget_device(0);
        assert!(watch.overrun(Duration::ZERO, query, |_, _| {}).is_empty());
    }

    #[test]
    fn a_stream_wait_is_never_an_overrun_and_the_launch_behind_it_counts_from_its_release() {
        let watch = LaunchWatch::<u32>::default();
        let done = RefCell::new(vec![false; 2]);
        let query = |_: DeviceIndex, e: u32| if done.borrow()[e as usize] { Reached::Done } else { Reached::Running };
        // A wait the application holds, then a launch queued behind it.
        watch.waited::<()>((7, 0), || Ok(0));
        watch.launched::<()>((7, 0), || Ok(1));
        std::thread::sleep(Duration::from_millis(30));
        assert!(watch.overrun(Duration::from_millis(10), query, |_, _| {}).is_empty(), "the held wait is not a runaway kernel");
        // Released: the launch is the head from this look on, not from its queueing 30 ms ago.
        done.borrow_mut()[0] = true;
        assert!(watch.overrun(Duration::from_millis(10), query, |_, _| {}).is_empty());
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(watch.overrun(Duration::from_millis(10), query, |_, _| {}), vec![0], "the launch itself is still held to the limit");
    }
}
