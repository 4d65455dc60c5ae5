//! Behaviour of the host backend through the [`Backend`] trait.

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use super::memory::PAGE;
use super::*;
use crate::backend::{event_flags, hip_code};
use crate::backend::{stream_flags, DeviceBackend, DtohDone, EventBackend, HostFn, MemInfo, MemoryBackend, MemsetPattern, StreamBackend};

const MIB: u64 = 1 << 20;

fn backend() -> HostBackend {
    HostBackend::new(HostConfig { devices: 2, memory_per_device: 64 * MIB, allow_host_code: true, ..HostConfig::default() })
}

/// A host function that holds its stream until the returned sender is used or dropped, so a
/// test can queue work behind it and observe that the work has not run yet.
fn gate() -> (Sender<()>, HostFn) {
    let (open, opened): (Sender<()>, Receiver<()>) = mpsc::channel();
    (
        open,
        Box::new(move || {
            let _ = opened.recv();
        }),
    )
}

/// A dtoh callback forwarding its result to the returned receiver.
fn dtoh_channel() -> (DtohDone, Receiver<Result<Vec<u8>, BackendError>>) {
    let (tx, rx) = mpsc::channel();
    (Box::new(move |result| tx.send(result).unwrap()), rx)
}

fn read_back(backend: &HostBackend, ptr: DevicePtr, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    backend.memcpy_dtoh_sync(None, ptr, &mut out).unwrap();
    out
}

#[test]
fn stream_runs_copy_memset_copy_in_order() {
    let backend = backend();
    let stream = backend.stream_create(0, stream_flags::DEFAULT, 0).unwrap();
    let a = backend.malloc(0, 256).unwrap();
    let b = backend.malloc(0, 256).unwrap();
    let original: Vec<u8> = (0..=255).collect();

    // Everything below queues behind the gate, so it runs asynchronously, after this thread
    // has queued all of it.
    let (open, held) = gate();
    backend.launch_host_func(stream, held).unwrap();
    backend.memcpy_htod(Some(stream), a, original.clone().into()).unwrap();
    backend.memset(Some(stream), a, MemsetPattern::U8(0xab), 100).unwrap();
    backend.memcpy_dtod(Some(stream), b, a, 256).unwrap();
    let (done, received) = dtoh_channel();
    backend.memcpy_dtoh(Some(stream), b, 256, done).unwrap();
    assert_eq!(backend.stream_query(stream), Ok(false));
    assert!(received.try_recv().is_err(), "the copy must wait for the gate");

    open.send(()).unwrap();
    let bytes = received.recv_timeout(Duration::from_secs(10)).unwrap().unwrap();
    let mut expected = original;
    expected[..100].fill(0xab);
    assert_eq!(bytes, expected);
    backend.stream_synchronize(stream).unwrap();
    assert_eq!(backend.stream_query(stream), Ok(true));
}

#[test]
fn async_dtoh_delivers_bytes_on_the_stream_executor() {
    let backend = backend();
    let stream = backend.stream_create(0, stream_flags::DEFAULT, 0).unwrap();
    let ptr = backend.malloc(0, 4096).unwrap();
    let pattern: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 251) as u8).collect();
    backend.memcpy_htod_sync(Some(stream), ptr, &pattern).unwrap();

    let (tx, rx) = mpsc::channel();
    let done: DtohDone = Box::new(move |result| {
        tx.send((thread::current().name().map(str::to_owned), result)).unwrap();
    });
    backend.memcpy_dtoh(Some(stream), DevicePtr(ptr.0 + 1000), 3000, done).unwrap();
    let (thread_name, result) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(result.unwrap(), &pattern[1000..4000]);
    assert!(thread_name.unwrap().starts_with("hip-host-stream-"));
}

#[test]
fn null_stream_dtoh_calls_back_before_returning() {
    let backend = backend();
    let ptr = backend.malloc(0, 16).unwrap();
    backend.memset(None, ptr, MemsetPattern::U32(0x0403_0201), 4).unwrap();
    let (done, received) = dtoh_channel();
    backend.memcpy_dtoh(None, ptr, 8, done).unwrap();
    assert_eq!(received.try_recv().unwrap().unwrap(), [1, 2, 3, 4, 1, 2, 3, 4]);
}

#[test]
fn events_time_a_sleeping_operation() {
    let backend = backend();
    let stream = backend.stream_create(0, stream_flags::DEFAULT, 0).unwrap();
    let start = backend.event_create(0, event_flags::DEFAULT).unwrap();
    let end = backend.event_create(0, event_flags::DEFAULT).unwrap();

    let (open, held) = gate();
    backend.launch_host_func(stream, held).unwrap();
    backend.event_record(start, Some(stream)).unwrap();
    backend.launch_host_func(stream, Box::new(|| thread::sleep(Duration::from_millis(30)))).unwrap();
    backend.event_record(end, Some(stream)).unwrap();

    assert_eq!(backend.event_query(end), Ok(false));
    let not_ready = backend.event_elapsed_ms(start, end).unwrap_err();
    assert_eq!(not_ready.hip_code(), hip_code::NOT_READY);

    open.send(()).unwrap();
    backend.event_synchronize(end).unwrap();
    assert_eq!(backend.event_query(end), Ok(true));
    let ms = backend.event_elapsed_ms(start, end).unwrap();
    assert!(ms >= 29.0, "elapsed {ms} ms");
    let backwards = backend.event_elapsed_ms(end, start).unwrap();
    assert!((backwards + ms).abs() < 1e-3, "{backwards} vs {ms}");
    assert_eq!(backend.event_elapsed_ms(end, end), Ok(0.0));
}

#[test]
fn event_timing_errors_follow_rocm() {
    let backend = backend();
    let timed = backend.event_create(0, event_flags::DEFAULT).unwrap();
    let untimed = backend.event_create(0, event_flags::DISABLE_TIMING).unwrap();
    // Never recorded: queries succeed, timing is an invalid handle.
    assert_eq!(backend.event_query(timed), Ok(true));
    backend.event_synchronize(timed).unwrap();
    let never_recorded = backend.event_elapsed_ms(timed, timed).unwrap_err();
    assert_eq!(never_recorded.hip_code(), hip_code::INVALID_HANDLE);

    backend.event_record(timed, None).unwrap();
    backend.event_record(untimed, None).unwrap();
    let untimed_error = backend.event_elapsed_ms(timed, untimed).unwrap_err();
    assert_eq!(untimed_error.hip_code(), hip_code::INVALID_HANDLE);
    assert!(backend.event_elapsed_ms(timed, timed).is_ok());

    let bad_flags = backend.event_create(0, event_flags::INTERPROCESS).unwrap_err();
    assert_eq!(bad_flags.hip_code(), hip_code::INVALID_VALUE);

    // An event of device 0 cannot be recorded on a stream of device 1.
    let other_device = backend.stream_create(1, stream_flags::DEFAULT, 0).unwrap();
    let mismatch = backend.event_record(timed, Some(other_device)).unwrap_err();
    assert_eq!(mismatch.hip_code(), hip_code::INVALID_HANDLE);

    backend.event_destroy(timed).unwrap();
    assert_eq!(backend.event_query(timed).unwrap_err().hip_code(), hip_code::INVALID_HANDLE);
}

#[test]
fn stream_wait_event_orders_across_streams() {
    let backend = backend();
    let producer = backend.stream_create(0, stream_flags::NON_BLOCKING, 0).unwrap();
    let consumer = backend.stream_create(0, stream_flags::NON_BLOCKING, 0).unwrap();
    let ready = backend.event_create(0, event_flags::DISABLE_TIMING).unwrap();
    let ptr = backend.malloc(0, 64).unwrap();

    let (open, held) = gate();
    backend.launch_host_func(producer, held).unwrap();
    backend.memset(Some(producer), ptr, MemsetPattern::U8(7), 64).unwrap();
    backend.event_record(ready, Some(producer)).unwrap();
    backend.stream_wait_event(Some(consumer), ready).unwrap();
    let (done, received) = dtoh_channel();
    backend.memcpy_dtoh(Some(consumer), ptr, 64, done).unwrap();

    thread::sleep(Duration::from_millis(20));
    assert!(received.try_recv().is_err(), "the consumer must wait for the producer's event");
    open.send(()).unwrap();
    assert_eq!(received.recv_timeout(Duration::from_secs(10)).unwrap().unwrap(), [7; 64]);
}

#[test]
fn null_stream_waits_for_blocking_streams_only() {
    let backend = backend();
    let blocking = backend.stream_create(0, stream_flags::DEFAULT, 0).unwrap();
    let non_blocking = backend.stream_create(0, stream_flags::NON_BLOCKING, 0).unwrap();
    let ptr = backend.malloc(0, 32).unwrap();

    // A held non-blocking stream does not delay the null stream.
    let (open, held) = gate();
    backend.launch_host_func(non_blocking, held).unwrap();
    backend.memset(None, ptr, MemsetPattern::U8(1), 32).unwrap();
    assert_eq!(read_back(&backend, ptr, 32), [1; 32]);
    drop(open);

    // Null-stream work runs after what a blocking stream had queued.
    backend.launch_host_func(blocking, Box::new(|| thread::sleep(Duration::from_millis(20)))).unwrap();
    backend.memset(Some(blocking), ptr, MemsetPattern::U8(2), 32).unwrap();
    assert_eq!(read_back(&backend, ptr, 32), [2; 32]);
}

#[test]
fn queued_errors_latch_on_their_stream() {
    let backend = backend();
    let failing = backend.stream_create(0, stream_flags::DEFAULT, 0).unwrap();
    let healthy = backend.stream_create(0, stream_flags::DEFAULT, 0).unwrap();
    backend.launch_host_func(failing, Box::new(|| panic!("injected failure"))).unwrap();
    // Later work still runs.
    let ptr = backend.malloc(0, 8).unwrap();
    backend.memset(Some(failing), ptr, MemsetPattern::U8(9), 8).unwrap();

    let error = backend.stream_synchronize(failing).unwrap_err();
    assert_eq!(error.hip_code(), hip_code::UNKNOWN);
    assert_eq!(backend.stream_synchronize(failing), Err(error.clone()));
    assert_eq!(backend.stream_query(failing), Err(error));
    assert_eq!(read_back(&backend, ptr, 8), [9; 8]);
    assert_eq!(backend.stream_synchronize(healthy), Ok(()));
    backend.device_synchronize(0).unwrap();
}

#[test]
fn destroying_a_stream_drains_it() {
    let backend = backend();
    let stream = backend.stream_create(0, stream_flags::DEFAULT, 0).unwrap();
    let ptr = backend.malloc(0, 1024).unwrap();
    backend.launch_host_func(stream, Box::new(|| thread::sleep(Duration::from_millis(20)))).unwrap();
    backend.memset(Some(stream), ptr, MemsetPattern::U16(0xbeef), 512).unwrap();
    backend.stream_destroy(stream).unwrap();
    assert_eq!(read_back(&backend, ptr, 4), [0xef, 0xbe, 0xef, 0xbe]);
    let gone = backend.stream_synchronize(stream).unwrap_err();
    assert_eq!(gone.hip_code(), hip_code::INVALID_HANDLE);
    assert_eq!(backend.stream_destroy(stream).unwrap_err().hip_code(), hip_code::INVALID_HANDLE);
}

#[test]
fn oom_is_reported_before_allocating() {
    let backend = backend();
    let before = backend.mem_get_info(0).unwrap();
    for size in [1 << 62, u64::MAX, 64 * MIB + 1] {
        let error = backend.malloc(0, size).unwrap_err();
        assert_eq!(error.hip_code(), hip_code::OUT_OF_MEMORY, "{size}");
    }
    assert_eq!(backend.mem_get_info(0).unwrap(), before);

    // Even with a capacity the host cannot back, a refused host allocation is an error, not an
    // abort.
    let unbounded = HostBackend::new(HostConfig { devices: 1, memory_per_device: u64::MAX, allow_host_code: true, ..HostConfig::default() });
    let error = unbounded.malloc(0, 1 << 62).unwrap_err();
    assert_eq!(error.hip_code(), hip_code::OUT_OF_MEMORY);
    assert_eq!(unbounded.mem_get_info(0).unwrap().free, u64::MAX);
}

#[test]
fn zero_sized_malloc_is_null_and_free_of_null_succeeds() {
    let backend = backend();
    assert_eq!(backend.malloc(0, 0), Ok(DevicePtr::NULL));
    assert_eq!(backend.free(DevicePtr::NULL), Ok(()));
}

#[test]
fn freed_pointers_are_rejected() {
    let backend = backend();
    let ptr = backend.malloc(0, 128).unwrap();
    backend.free(ptr).unwrap();
    assert_eq!(backend.free(ptr).unwrap_err().hip_code(), hip_code::INVALID_VALUE);
    let write = backend.memcpy_htod_sync(None, ptr, &[1, 2, 3]).unwrap_err();
    assert_eq!(write.hip_code(), hip_code::INVALID_DEVICE_POINTER);
    let (done, _received) = dtoh_channel();
    let read = backend.memcpy_dtoh(None, ptr, 1, done).unwrap_err();
    assert_eq!(read.hip_code(), hip_code::INVALID_DEVICE_POINTER);

    // Only an allocation's start can be freed.
    let live = backend.malloc(0, 128).unwrap();
    let interior = backend.free(DevicePtr(live.0 + 8)).unwrap_err();
    assert_eq!(interior.hip_code(), hip_code::INVALID_VALUE);
}

#[test]
fn freeing_memory_used_by_queued_work_is_safe() {
    let backend = backend();
    let stream = backend.stream_create(0, stream_flags::DEFAULT, 0).unwrap();
    let total = backend.mem_get_info(0).unwrap().total;
    let ptr = backend.malloc(0, MIB).unwrap();

    let (open, held) = gate();
    backend.launch_host_func(stream, held).unwrap();
    backend.memset(Some(stream), ptr, MemsetPattern::U8(0x5a), MIB).unwrap();
    let (done, received) = dtoh_channel();
    backend.memcpy_dtoh(Some(stream), ptr, MIB, done).unwrap();
    backend.free(ptr).unwrap();
    // Unmapped at once, but the bytes are still held by the queue.
    assert!(backend.memset(None, ptr, MemsetPattern::U8(0), 1).is_err());
    assert_eq!(backend.mem_get_info(0).unwrap().free, total - MIB);

    open.send(()).unwrap();
    let bytes = received.recv_timeout(Duration::from_secs(10)).unwrap().unwrap();
    assert!(bytes.iter().all(|&b| b == 0x5a));
    backend.stream_synchronize(stream).unwrap();
    assert_eq!(backend.mem_get_info(0).unwrap().free, total);
}

#[test]
fn mem_get_info_counts_pages_across_devices() {
    let backend = backend();
    let total = 64 * MIB;
    assert_eq!(backend.mem_get_info(0).unwrap(), MemInfo { free: total, total });
    let big = backend.malloc(0, MIB).unwrap();
    let small = backend.malloc(0, 1).unwrap();
    assert_eq!(backend.mem_get_info(0).unwrap().free, total - MIB - PAGE);
    assert_eq!(backend.mem_get_info(1).unwrap().free, total, "devices are accounted apart");
    let on_one = backend.malloc(1, 3 * PAGE).unwrap();
    assert_eq!(backend.mem_get_info(1).unwrap().free, total - 3 * PAGE);
    for ptr in [big, small, on_one] {
        backend.free(ptr).unwrap();
    }
    assert_eq!(backend.mem_get_info(0).unwrap().free, total);
    assert_eq!(backend.mem_get_info(1).unwrap().free, total);
    assert_eq!(backend.mem_get_info(2).unwrap_err().hip_code(), hip_code::INVALID_DEVICE);
}

#[test]
fn concurrent_malloc_and_free_from_eight_threads() {
    let backend = Arc::new(backend());
    let workers: Vec<_> = (0..8u8)
        .map(|worker| {
            let backend = Arc::clone(&backend);
            thread::spawn(move || {
                let mut live = Vec::new();
                for round in 0..200u64 {
                    let size = 1 + (round * 97 + u64::from(worker) * 13) % 20_000;
                    let ptr = backend.malloc(0, size).unwrap();
                    let fill = vec![worker; size as usize];
                    backend.memcpy_htod_sync(None, ptr, &fill).unwrap();
                    live.push((ptr, size));
                    if round % 3 == 0 {
                        let (ptr, size) = live.swap_remove(0);
                        assert!(read_back(&backend, ptr, size as usize).iter().all(|&b| b == worker));
                        backend.free(ptr).unwrap();
                    }
                }
                for (ptr, size) in live {
                    assert!(read_back(&backend, ptr, size as usize).iter().all(|&b| b == worker));
                    backend.free(ptr).unwrap();
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let info = backend.mem_get_info(0).unwrap();
    assert_eq!(info.free, info.total);
}

#[test]
fn out_of_range_access_is_rejected() {
    let backend = backend();
    let ptr = backend.malloc(0, 4096).unwrap();
    let past_end = backend.memcpy_htod(None, DevicePtr(ptr.0 + 4000), vec![0; 200].into());
    assert_eq!(past_end.unwrap_err().hip_code(), hip_code::INVALID_VALUE);
    let in_guard = backend.memset(None, DevicePtr(ptr.0 + 4096), MemsetPattern::U8(0), 1);
    assert_eq!(in_guard.unwrap_err().hip_code(), hip_code::INVALID_DEVICE_POINTER);
    let null = backend.memcpy_dtoh_sync(None, DevicePtr::NULL, &mut [0; 4]);
    assert_eq!(null.unwrap_err().hip_code(), hip_code::INVALID_DEVICE_POINTER);
    let overflow = backend.memset(None, ptr, MemsetPattern::U32(0), u64::MAX / 2);
    assert_eq!(overflow.unwrap_err().hip_code(), hip_code::INVALID_VALUE);
    let dtod = backend.memcpy_dtod(None, ptr, DevicePtr(ptr.0 + 1), 4096);
    assert_eq!(dtod.unwrap_err().hip_code(), hip_code::INVALID_VALUE);
    let mut never_called = |_: &mut [u8]| panic!("must not run on a bad range");
    let zero_copy = backend.with_device_bytes_mut(None, DevicePtr(ptr.0 + 1), 4096, &mut never_called);
    assert_eq!(zero_copy.unwrap_err().hip_code(), hip_code::INVALID_VALUE);
    // Nothing was written.
    assert!(read_back(&backend, ptr, 4096).iter().all(|&b| b == 0));
}

#[test]
fn zero_copy_access_sees_stream_results() {
    let backend = backend();
    let stream = backend.stream_create(0, stream_flags::DEFAULT, 0).unwrap();
    let ptr = backend.malloc(0, 64).unwrap();
    backend.launch_host_func(stream, Box::new(|| thread::sleep(Duration::from_millis(10)))).unwrap();
    backend.memset(Some(stream), ptr, MemsetPattern::U8(3), 64).unwrap();
    backend
        .with_device_bytes_mut(Some(stream), DevicePtr(ptr.0 + 60), 4, &mut |bytes| {
            assert_eq!(bytes, [3; 4], "runs after the stream drained");
            bytes.copy_from_slice(b"tail");
        })
        .unwrap();
    let mut seen = Vec::new();
    backend.with_device_bytes(Some(stream), ptr, 64, &mut |bytes| seen.extend_from_slice(bytes)).unwrap();
    assert_eq!(&seen[..60], &[3; 60]);
    assert_eq!(&seen[60..], b"tail");
}

#[test]
fn device_queries() {
    let backend = backend();
    assert_eq!(backend.name(), "host");
    assert_eq!(backend.device_count(), Ok(2));
    let props = backend.device_properties(1).unwrap();
    assert!(props.name.starts_with("hip-remote host emulation ("), "{}", props.name);
    assert!(props.name.len() <= 255);
    assert_eq!(props.gcn_arch_name, "host");
    assert_eq!(props.warp_size, 32);
    assert_eq!(props.total_global_mem, 64 * MIB);
    assert_eq!(props.pci_bus_id, 1);
    assert_eq!(backend.stream_priority_range(0), Ok((0, 0)));
    assert_eq!(backend.device_properties(2).unwrap_err().hip_code(), hip_code::INVALID_DEVICE);
    let bad_flags = backend.stream_create(0, 0x10, 0).unwrap_err();
    assert_eq!(bad_flags.hip_code(), hip_code::INVALID_VALUE);

    let none = HostBackend::new(HostConfig { devices: 0, memory_per_device: 0, allow_host_code: true, ..HostConfig::default() });
    assert_eq!(none.device_count(), Ok(0));
    assert_eq!(none.malloc(0, 1).unwrap_err().hip_code(), hip_code::NO_DEVICE);
}

#[test]
fn dropping_the_backend_drains_streams_waiting_on_each_other() {
    let backend = backend();
    let first = backend.stream_create(0, stream_flags::DEFAULT, 0).unwrap();
    let second = backend.stream_create(0, stream_flags::DEFAULT, 0).unwrap();
    let event = backend.event_create(0, event_flags::DEFAULT).unwrap();
    let (tx, rx) = mpsc::channel();
    backend.launch_host_func(first, Box::new(|| thread::sleep(Duration::from_millis(10)))).unwrap();
    backend.event_record(event, Some(first)).unwrap();
    backend.stream_wait_event(Some(second), event).unwrap();
    backend.launch_host_func(second, Box::new(move || tx.send(()).unwrap())).unwrap();
    drop(backend);
    rx.try_recv().expect("queued work ran before the backend went away");
}

#[test]
fn queued_2d_copies_scatter_and_gather_rows() {
    let backend = backend();
    let stream = backend.stream_create(0, stream_flags::DEFAULT, 0).unwrap();
    let a = backend.malloc(0, 1024).unwrap();
    let b = backend.malloc(1, 1024).unwrap();
    let packed: Vec<u8> = (1..=40).collect();
    let (open, held) = gate();
    backend.launch_host_func(stream, held).unwrap();
    // 4 rows of 10 bytes: to pitch 100 in `a`, then to pitch 30 in `b` on another device.
    let rows = Rows { width: 10, height: 4 };
    backend.memcpy_htod_2d(Some(stream), Pitched { ptr: a, pitch: 100 }, 10, packed.clone().into()).unwrap();
    backend.memcpy_dtod_2d(Some(stream), Pitched { ptr: b, pitch: 30 }, Pitched { ptr: a, pitch: 100 }, rows).unwrap();
    let (done, rx) = dtoh_channel();
    backend.memcpy_dtoh_2d(Some(stream), Pitched { ptr: b, pitch: 30 }, rows, done).unwrap();
    assert!(rx.recv_timeout(Duration::from_millis(50)).is_err(), "ran before the gate opened");
    drop(open);
    assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap().unwrap(), packed);
    let image = read_back(&backend, a, 400);
    for row in 0..4 {
        assert_eq!(image[row * 100..row * 100 + 10], packed[row * 10..row * 10 + 10]);
        assert!(image[row * 100 + 10..(row + 1) * 100].iter().all(|&x| x == 0), "gap of row {row} written");
    }
    // Rows past the end of the allocation are refused before anything is queued.
    let err = backend.memcpy_htod_2d(Some(stream), Pitched { ptr: a, pitch: 400 }, 10, packed.into()).unwrap_err();
    assert_eq!(err.hip_code(), hip_code::INVALID_VALUE);
}

#[test]
fn free_async_releases_after_queued_work() {
    let backend = backend();
    let stream = backend.stream_create(0, stream_flags::DEFAULT, 0).unwrap();
    let p = backend.malloc_async(Some(stream), 0, 4096).unwrap();
    let data: Vec<u8> = (0..4096u32).map(|i| i as u8).collect();
    let (open, held) = gate();
    backend.launch_host_func(stream, held).unwrap();
    backend.memcpy_htod(Some(stream), p, data.clone().into()).unwrap();
    let (done, rx) = dtoh_channel();
    backend.memcpy_dtoh(Some(stream), p, 4096, done).unwrap();
    backend.free_async(Some(stream), p).unwrap();
    // The address is unusable at once ...
    assert!(backend.memset(None, p, MemsetPattern::U8(0), 1).is_err());
    // ... while the work queued before the free still sees the memory.
    drop(open);
    assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap().unwrap(), data);
    backend.stream_synchronize(stream).unwrap();
}

/// A synchronous copy with shared host memory runs on the calling thread once the stream is
/// done: nothing is queued to hold the region (on a GPU that would be a host function per
/// copy, whose callback thread's wake-up every such copy would wait for).
#[test]
fn synchronous_shared_host_copies_queue_nothing_on_the_stream() {
    use crate::backend::host_region::HostRegion;
    let host = Arc::new(backend());
    let as_backend: Arc<dyn crate::backend::Backend> = host.clone();
    let stream = host.stream_create(0, 0, 0).unwrap();
    let dev = host.malloc(0, PAGE).unwrap();
    let (region, _fd) = HostRegion::create(as_backend, PAGE as usize).unwrap();
    let pattern: Vec<u8> = (0..PAGE).map(|i| (i * 7 % 251) as u8).collect();
    let whole = || region.slice(0, PAGE).unwrap();
    whole().write(&pattern);
    let queued = || host.stream(stream).unwrap().last_ticket();
    let before = queued();

    host.memcpy_htod_registered_sync(Some(stream), dev, &whole()).unwrap();
    assert_eq!(read_back(&host, dev, PAGE as usize), pattern, "the upload landed");
    whole().write(&vec![0; PAGE as usize]);
    host.memcpy_dtoh_registered_sync(Some(stream), dev, &whole()).unwrap();
    assert_eq!(whole().as_ref(), &pattern[..], "the download landed");
    assert_eq!(queued(), before, "synchronous shared copies queue no stream operation");

    // The queued form does queue one (what the count above would see if the synchronous
    // form went through it).
    host.memcpy_htod_registered(Some(stream), dev, whole()).unwrap();
    host.stream_synchronize(stream).unwrap();
    assert_eq!(queued(), before + 1);
    host.free(dev).unwrap();
    host.stream_destroy(stream).unwrap();
}
