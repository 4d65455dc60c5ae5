//! Synchronising calls: what HIP reports, and makes visible, when the device has caught up.

use crate::conn::Conn;
use crate::remote::{on_device, with_conn};
use client_core::CallError;
use proto_core::{wire, Calls};
use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::Duration;

/// Runs a synchronous call and reports with it the deferred failure of an earlier
/// fire-and-forget request, as HIP's synchronising calls do. The reader spins for the device
/// unless the current device is set to `hipDeviceScheduleBlockingSync`.
pub fn call_sync<R>(f: impl FnOnce(&mut Conn) -> Result<R, CallError>) -> Result<(), CallError> {
    let spin = !super::devices::blocking_sync(super::devices::current_device());
    with_conn(|c| {
        c.waiting_for_device(spin, f)?;
        match c.take_deferred() {
            Some(code) => Err(CallError::new(code, "an earlier asynchronous operation failed on the worker")),
            // Device work that finished may have written managed memory: the CPU sees it now.
            None => c.after_sync(),
        }
    })
}

/// First pause between two completion queries while a stream wait is pending.
pub const STREAM_WAIT_POLL_FIRST_PAUSE: Duration = Duration::from_micros(20);

/// Longest pause between two completion queries (the most a release waits to be seen, on top
/// of a round trip).
pub const STREAM_WAIT_POLL_MAX_PAUSE: Duration = Duration::from_millis(1);

/// Streams (with the device that routes them) holding a `hipStreamWaitValue*` that has not
/// been seen complete. While one is pending, synchronising calls poll instead of holding the
/// connection through one blocking request: the wait may be released only by a write of this
/// process — a host store to mapped memory, pushed before each query, or another thread's HIP
/// call, which a held connection would queue behind the synchronize for ever.
static PENDING_WAITS: Mutex<BTreeSet<(u64, u32)>> = Mutex::new(BTreeSet::new());

fn pending() -> std::sync::MutexGuard<'static, BTreeSet<(u64, u32)>> {
    PENDING_WAITS.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A wait was queued on `stream` (routed to `device`).
pub fn note_stream_wait(stream: u64, device: u32) {
    pending().insert((stream, device));
}

/// `stream`'s earlier work, its waits among it, is complete (or the stream is gone).
pub fn stream_waits_settled(stream: u64) {
    pending().retain(|&(s, _)| s != stream);
}

/// Asks `complete` until it answers true or fails, pausing between asks with the connection
/// free (`complete` takes it for one query). A failure ends the polling: the blocking call
/// that follows reports it as HIP would.
fn poll_until(mut complete: impl FnMut() -> Result<bool, CallError>) {
    let mut pause = STREAM_WAIT_POLL_FIRST_PAUSE;
    while let Ok(false) = complete() {
        std::thread::sleep(pause);
        pause = (pause * 2).min(STREAM_WAIT_POLL_MAX_PAUSE);
    }
}

/// `hipStreamSynchronize(stream)`: polls first while any wait is pending (the stream may
/// depend on a waiting one through an event or the null stream's order).
/// `reply_error` maps the worker's own answer to the synchronize (not an error deferred from
/// earlier work, which keeps its code).
pub fn synchronize_stream(stream: u64, reply_error: fn(CallError) -> CallError) -> Result<(), CallError> {
    if !pending().is_empty() {
        poll_until(|| with_conn(|c| c.stream_query(wire::StreamRef { stream })).map(|q| q.complete));
    }
    call_sync(|c| c.stream_synchronize(wire::StreamRef { stream }).map_err(reply_error))?;
    stream_waits_settled(stream);
    Ok(())
}

/// `hipEventSynchronize(event)`: polls first while any wait is pending.
pub fn synchronize_event(event: u64) -> Result<(), CallError> {
    if !pending().is_empty() {
        poll_until(|| with_conn(|c| c.event_query(wire::EventRef { event })).map(|q| q.complete));
    }
    call_sync(|c| c.event_synchronize(wire::EventRef { event }))
}

/// `hipDeviceSynchronize()` on `device`: first polls every stream of the device with a
/// pending wait until it is complete.
pub fn synchronize_device(device: u32) -> Result<(), CallError> {
    let waiting: Vec<u64> = pending().iter().filter(|&&(_, d)| d == device).map(|&(s, _)| s).collect();
    for stream in waiting {
        poll_until(|| on_device(device, || with_conn(|c| c.stream_query(wire::StreamRef { stream })).map(|q| q.complete)));
    }
    call_sync(|c| c.device_synchronize(wire::DeviceRef { device }))?;
    pending().retain(|&(_, d)| d != device);
    Ok(())
}

#[cfg(test)]
mod test {
    use super::*;
    use client_core::CallError;

    #[test]
    fn polling_ends_when_done_or_failed_and_backs_off_up_to_the_bound() {
        let mut asked = 0;
        let started = std::time::Instant::now();
        poll_until(|| {
            asked += 1;
            Ok(asked == 12)
        });
        assert_eq!(asked, 12);
        // 11 pauses: 20, 40, ... µs doubling, capped at 1 ms: at least 20+40+...+640 µs + 5 ms.
        let least = Duration::from_micros(20 + 40 + 80 + 160 + 320 + 640) + 5 * STREAM_WAIT_POLL_MAX_PAUSE;
        assert!(started.elapsed() >= least, "paused {:?}, less than {least:?}", started.elapsed());
        let mut asked = 0;
        poll_until(|| {
            asked += 1;
            Err(CallError::new(crate::abi::HipError::INVALID_HANDLE, "gone"))
        });
        assert_eq!(asked, 1, "a failed query ends the polling (the blocking call reports it)");
    }

    #[test]
    fn a_stream_wait_is_pending_until_its_stream_settles() {
        note_stream_wait(0xfeed_0001, 0);
        note_stream_wait(0xfeed_0002, 1);
        assert!(pending().contains(&(0xfeed_0001, 0)) && pending().contains(&(0xfeed_0002, 1)));
        stream_waits_settled(0xfeed_0001);
        assert!(!pending().contains(&(0xfeed_0001, 0)) && pending().contains(&(0xfeed_0002, 1)));
        stream_waits_settled(0xfeed_0002);
        assert!(!pending().iter().any(|&(s, _)| s >> 16 == 0xfeed));
    }
}
