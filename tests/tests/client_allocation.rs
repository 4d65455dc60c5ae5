//! Operations without a round trip (`CLIENT_ALLOCATION`, `docs/ALLOCATION.md`), spoken to the
//! worker's session directly: streams and events created under handles the client chose,
//! posted destroys, and posted synchronous host-to-device copies the worker completes before
//! the next request. Every failure of a posted request is deferred to the next reply's aux.

mod common;

use common::*;
use hip_worker::session::{SessionConfig, SessionLimits};
use hip_worker::WorkerConfig;
use proto_core::wire;
use proto_core::{Bulk, Flags, Request, Response, Status};

const STREAM_A: u64 = wire::CLIENT_STREAM_TAG | 1;
const EVENT_A: u64 = wire::CLIENT_EVENT_TAG | 2;

fn post(c: &mut SessionDriver, req: &Request<'_>) {
    c.send(req, Flags::NO_REPLY);
}

fn download(c: &mut SessionDriver, src: u64, len: u64, stream: u64) -> Vec<u8> {
    match c.call(&Request::MemcpyDtoH(wire::MemcpyDtoH { src, len, stream })).response() {
        Response::MemcpyDtoH(d) => d.data.0.to_vec(),
        other => panic!("MemcpyDtoH answered with {other:?}"),
    }
}

#[test]
fn the_worker_offers_client_allocation() {
    with_bystander(|worker| {
        let mut c = SessionDriver::connect(worker);
        let reply = c.call(&Request::Hello(wire::Hello {
            min_version: proto_core::PROTOCOL_VERSION,
            max_version: proto_core::PROTOCOL_VERSION,
            features: wire::features::FIRE_AND_FORGET | wire::features::CLIENT_ALLOCATION,
            client_name: "client allocation".into(),
            resume_session: 0,
            auth_token: b"".as_slice().into(),
        }));
        let Response::Hello(w) = reply.response() else { panic!("HELLO reply") };
        assert_ne!(w.features & wire::features::CLIENT_ALLOCATION, 0);
        assert_eq!(wire::features::ALL & wire::features::CLIENT_ALLOCATION, wire::features::CLIENT_ALLOCATION);
    });
}

#[test]
fn streams_and_events_created_without_waiting_are_used_and_destroyed() {
    with_bystander(|worker| {
        let mut c = SessionDriver::greeted(worker);
        let len = 64 << 10;
        let ptr = c.malloc(len);
        let data: Vec<u8> = (0..len as u32).map(|i| (i * 7 + 3) as u8).collect();
        // Nothing waits: create, use, record, in one burst of posted requests.
        post(&mut c, &Request::StreamCreateAt(wire::StreamCreateAt { stream: STREAM_A, device: 0, flags: 1, priority: 0 }));
        post(&mut c, &Request::EventCreateAt(wire::EventCreateAt { event: EVENT_A, device: 0, flags: 0 }));
        post(&mut c, &Request::MemcpyHtoD(wire::MemcpyHtoD { dst: ptr, stream: STREAM_A, sync: false, data: Bulk(&data) }));
        post(&mut c, &Request::EventRecord(wire::EventRecord { event: EVENT_A, stream: STREAM_A }));
        let reply = c.call(&Request::EventSynchronize(wire::EventRef { event: EVENT_A }));
        assert!(!reply.is_error(), "{:?}", reply.error());
        assert_eq!(reply.header.aux, 0, "every posted request succeeded");
        assert_eq!(download(&mut c, ptr, len, STREAM_A), data);
        let Response::StreamGetInfo(info) = c.call(&Request::StreamGetInfo(wire::StreamRef { stream: STREAM_A })).response() else {
            panic!("StreamGetInfo reply")
        };
        assert_eq!(info.flags, 1, "the stream was created with the posted flags");

        // Destroys posted too; afterwards the handles are unknown, and a second destroy (a call)
        // says so at once.
        post(&mut c, &Request::EventDestroy(wire::EventRef { event: EVENT_A }));
        post(&mut c, &Request::StreamDestroy(wire::StreamRef { stream: STREAM_A }));
        assert_eq!(c.ping(1).header.aux, 0);
        assert_eq!(c.call(&Request::StreamDestroy(wire::StreamRef { stream: STREAM_A })).error().0, Status::INVALID_HANDLE);
        assert_eq!(c.call(&Request::EventDestroy(wire::EventRef { event: EVENT_A })).error().0, Status::INVALID_HANDLE);

        // A thousand create/destroy pairs leave nothing behind (the session's capacity would
        // refuse the 1025th stream otherwise).
        for i in 0..1000u64 {
            let stream = wire::CLIENT_STREAM_TAG | (100 + i);
            let event = wire::CLIENT_EVENT_TAG | (100 + i);
            post(&mut c, &Request::StreamCreateAt(wire::StreamCreateAt { stream, device: 0, flags: 0, priority: 0 }));
            post(&mut c, &Request::EventCreateAt(wire::EventCreateAt { event, device: 0, flags: 0 }));
            post(&mut c, &Request::EventRecord(wire::EventRecord { event, stream }));
            post(&mut c, &Request::EventDestroy(wire::EventRef { event }));
            post(&mut c, &Request::StreamDestroy(wire::StreamRef { stream }));
        }
        assert_eq!(c.ping(2).header.aux, 0, "the loop's posted requests all succeeded");
    });
}

#[test]
fn a_failed_posted_creation_is_deferred_and_the_handle_stays_unknown() {
    with_bystander(|worker| {
        let mut c = SessionDriver::greeted(worker);
        // A handle without the client tag (here the worker's own stream tag) is refused.
        post(&mut c, &Request::StreamCreateAt(wire::StreamCreateAt { stream: 0x5354_0000_0000_0001, device: 0, flags: 0, priority: 0 }));
        assert_eq!(c.ping(1).header.aux, Status::INVALID_HANDLE.0);
        post(&mut c, &Request::EventCreateAt(wire::EventCreateAt { event: wire::CLIENT_STREAM_TAG | 5, device: 0, flags: 0 }));
        assert_eq!(c.ping(2).header.aux, Status::INVALID_HANDLE.0, "a stream-tagged event");
        // A bad device: deferred hipErrorInvalidDevice; the handle is then unknown.
        post(&mut c, &Request::StreamCreateAt(wire::StreamCreateAt { stream: STREAM_A, device: 7, flags: 0, priority: 0 }));
        let aux = c.ping(3).header.aux;
        assert_ne!(aux, 0, "a stream on a device that does not exist");
        let (status, message) = c.call(&Request::StreamSynchronize(wire::StreamRef { stream: STREAM_A })).error();
        assert_eq!(status, Status::INVALID_HANDLE);
        assert!(message.contains("not a live stream"), "{message}");
        // Unknown flags.
        post(&mut c, &Request::StreamCreateAt(wire::StreamCreateAt { stream: STREAM_A, device: 0, flags: 0x80, priority: 0 }));
        assert_eq!(c.ping(4).header.aux, Status::INVALID_VALUE.0);
        // A handle already live is not created twice (the first stays usable).
        post(&mut c, &Request::StreamCreateAt(wire::StreamCreateAt { stream: STREAM_A, device: 0, flags: 0, priority: 0 }));
        post(&mut c, &Request::StreamCreateAt(wire::StreamCreateAt { stream: STREAM_A, device: 0, flags: 1, priority: 0 }));
        assert_eq!(c.ping(5).header.aux, Status::INVALID_HANDLE.0);
        let Response::StreamGetInfo(info) = c.call(&Request::StreamGetInfo(wire::StreamRef { stream: STREAM_A })).response() else {
            panic!("StreamGetInfo reply")
        };
        assert_eq!(info.flags, 0, "the first creation stands");
        post(&mut c, &Request::EventCreateAt(wire::EventCreateAt { event: EVENT_A, device: 0, flags: 0 }));
        post(&mut c, &Request::EventCreateAt(wire::EventCreateAt { event: EVENT_A, device: 0, flags: 0 }));
        assert_eq!(c.ping(6).header.aux, Status::INVALID_HANDLE.0);
        // The session's end destroys them (with_bystander checks the worker still serves).
    });
}

#[test]
fn posted_creations_respect_the_session_limits() {
    let limits = SessionLimits { max_streams: 2, max_events: 1, ..SessionLimits::default() };
    let mut config = config_with(None);
    config.session = SessionConfig { limits, ..config.session };
    with_bystander_on(TestWorker::in_memory(WorkerConfig { ..config }), |worker| {
        let mut c = SessionDriver::greeted(worker);
        for i in 1..=3 {
            post(&mut c, &Request::StreamCreateAt(wire::StreamCreateAt { stream: wire::CLIENT_STREAM_TAG | i, device: 0, flags: 0, priority: 0 }));
        }
        assert_eq!(c.ping(1).header.aux, Status::OUT_OF_MEMORY.0, "the third stream passes the session's bound");
        let (status, _) = c.call(&Request::StreamQuery(wire::StreamRef { stream: wire::CLIENT_STREAM_TAG | 3 })).error();
        assert_eq!(status, Status::INVALID_HANDLE);
        for i in 1..=2 {
            post(&mut c, &Request::EventCreateAt(wire::EventCreateAt { event: wire::CLIENT_EVENT_TAG | i, device: 0, flags: 0 }));
        }
        assert_eq!(c.ping(2).header.aux, Status::OUT_OF_MEMORY.0);
    });
}

#[test]
fn a_posted_sync_upload_is_complete_before_the_next_request() {
    with_bystander(|worker| {
        let mut c = SessionDriver::greeted(worker);
        let len = 4096u64;
        let ptr = c.malloc(len);
        let other = c.stream_create(1); // non-blocking: not ordered after the null stream
        for round in 0..50u32 {
            let data: Vec<u8> = (0..len as u32).map(|i| (i ^ round.wrapping_mul(131)) as u8).collect();
            // hipMemcpy without waiting: posted with `sync`, then read on another stream.
            post(&mut c, &Request::MemcpyHtoD(wire::MemcpyHtoD { dst: ptr, stream: 0, sync: true, data: Bulk(&data) }));
            assert_eq!(download(&mut c, ptr, len, other), data, "round {round}");
        }
        // A bad destination: nothing answers the copy; the next reply carries hipErrorInvalidValue
        // (HIP's code for a pointer it does not know), once.
        post(&mut c, &Request::MemcpyHtoD(wire::MemcpyHtoD { dst: 0xdead_0000, stream: 0, sync: true, data: Bulk(&[1, 2, 3]) }));
        let reply = c.call(&Request::DeviceSynchronize(wire::DeviceRef { device: 0 }));
        assert_eq!(reply.header.aux, Status::INVALID_VALUE.0);
        assert_eq!(c.ping(1).header.aux, 0);
        // Past the end of the allocation: refused the same way, nothing written.
        let before = download(&mut c, ptr, len, 0);
        post(&mut c, &Request::MemcpyHtoD(wire::MemcpyHtoD { dst: ptr + len - 2, stream: 0, sync: true, data: Bulk(&[9; 8]) }));
        assert_eq!(c.ping(2).header.aux, Status::INVALID_VALUE.0);
        assert_eq!(download(&mut c, ptr, len, 0), before);
    });
}

fn reserve(c: &mut SessionDriver) -> wire::ClientRange {
    match c.call(&Request::ClientRangeReserve(wire::DeviceRef { device: 0 })).response() {
        Response::ClientRangeReserve(r) => wire::ClientRange { base: r.base, len: r.len, granularity: r.granularity, free: r.free },
        other => panic!("ClientRangeReserve answered with {other:?}"),
    }
}

fn malloc_at(c: &mut SessionDriver, ptr: u64, size: u64) {
    post(c, &Request::MallocAt(wire::MallocAt { device: 0, ptr, size }));
}

fn free_at(c: &mut SessionDriver, ptr: u64) {
    post(c, &Request::FreeAt(wire::Free { ptr }));
}

#[test]
fn client_placed_allocations_work_like_hipmalloc_ones() {
    with_bystander(|worker| {
        let mut c = SessionDriver::greeted(worker);
        let range = reserve(&mut c);
        assert!(range.len >= DEVICE_BYTES && range.granularity >= 256 && range.free <= DEVICE_BYTES);
        assert_eq!(reserve(&mut c).base, range.base, "one range per device and session");
        let g = range.granularity;
        // Two small allocations sharing a granule, one large one owning its granules.
        let (a, b, big) = (range.base, range.base + 256, range.base + g);
        malloc_at(&mut c, a, 100);
        malloc_at(&mut c, b, 200);
        malloc_at(&mut c, big, 3 * g + 5);
        let data: Vec<u8> = (0..200u32).map(|i| i as u8 ^ 0x5a).collect();
        post(&mut c, &Request::MemcpyHtoD(wire::MemcpyHtoD { dst: b, stream: 0, sync: true, data: Bulk(&data) }));
        c.memset(big, 3 * g + 5, 0, Flags::NO_REPLY);
        assert_eq!(c.ping(1).header.aux, 0, "all placed and used");
        assert_eq!(download(&mut c, b, 200, 0), data);
        assert!(download(&mut c, big + 3 * g, 5, 0).iter().all(|&x| x == 0x5a));
        // Past the end of an allocation is refused as for hipMalloc memory.
        let (status, _) = c.call(&Request::MemcpyDtoH(wire::MemcpyDtoH { src: a + 50, len: 51, stream: 0 })).error();
        assert_eq!(status, Status::INVALID_VALUE);
        // hipMemGetInfo counts them.
        let free = c.free_mem();
        assert!(free <= DEVICE_BYTES - 4 * g, "free {free}");
        // A malloc/free loop at one address reuses the cached unit; frees are ordered.
        for _ in 0..1000 {
            malloc_at(&mut c, big, 3 * g + 5);
            free_at(&mut c, big);
        }
        free_at(&mut c, a);
        assert_eq!(c.ping(2).header.aux, Status::INVALID_VALUE.0, "the loop's first MallocAt overlapped the live allocation");
        assert_eq!(c.ping(3).header.aux, 0, "the rest of the loop placed and freed it");
        assert_eq!(download(&mut c, b, 200, 0), data, "b's granule neighbour was freed; b stays");
        for _ in 0..1000 {
            malloc_at(&mut c, big, 3 * g + 5);
            free_at(&mut c, big);
        }
        assert_eq!(c.ping(4).header.aux, 0);
        // A double free and a free of a bad pointer: hipErrorInvalidValue, as ROCm's hipFree.
        free_at(&mut c, big);
        assert_eq!(c.ping(5).header.aux, Status::INVALID_VALUE.0);
        let (status, _) = c.call(&Request::Free(wire::Free { ptr: big + 8 })).error();
        assert_eq!(status, Status::INVALID_VALUE);
        free_at(&mut c, b);
        assert_eq!(c.ping(6).header.aux, 0);
        assert_eq!(c.free_mem(), free + 4 * g + g, "freed memory is counted free again (the cached units included)");
        // A large allocation where small ones' cached unit was: the cache gives way.
        malloc_at(&mut c, a, 2 * g);
        assert_eq!(c.ping(7).header.aux, 0);
        // The session ends with allocations live: with_bystander checks all memory came back.
    });
}

#[test]
fn hostile_placements_are_refused_and_the_worker_serves_on() {
    with_bystander(|worker| {
        let mut c = SessionDriver::greeted(worker);
        // Before any range.
        malloc_at(&mut c, 0x1000_0000, 4096);
        assert_eq!(c.ping(1).header.aux, Status::INVALID_VALUE.0);
        let range = reserve(&mut c);
        let g = range.granularity;
        let end = range.base + range.len;
        for (ptr, size, what) in [
            (range.base - 4096, 4096, "below the range"),
            (end - 256, 512, "past its end"),
            (end, 256, "at its end"),
            (u64::MAX - 255, 256, "overflowing"),
            (range.base, 0, "empty"),
            (range.base + 8, 64, "misaligned"),
            (range.base + 256, g, "a granule-sized one off a granule"),
            (range.base + g - 256, 512, "a small one across a granule"),
            (range.base, range.len, "the whole range: more than the device has"),
        ] {
            malloc_at(&mut c, ptr, size);
            assert_ne!(c.ping(2).header.aux, 0, "{what}");
        }
        malloc_at(&mut c, range.base, 1024);
        assert_eq!(c.ping(3).header.aux, 0);
        malloc_at(&mut c, range.base + 512, 1024);
        assert_eq!(c.ping(4).header.aux, Status::INVALID_VALUE.0, "overlapping a live allocation");
        malloc_at(&mut c, range.base, 2 * g);
        assert_eq!(c.ping(5).header.aux, Status::INVALID_VALUE.0, "a large one over a granule small ones use");
        // A failed MallocAt leaves nothing behind: its address is no allocation.
        let (status, message) = c.call(&Request::MemcpyDtoH(wire::MemcpyDtoH { src: range.base + 512 + 1024, len: 4, stream: 0 })).error();
        assert_eq!(status, Status::INVALID_VALUE);
        assert!(message.contains("not a device allocation"), "{message}");
        // Another client is served throughout, with its own range.
        let mut other = SessionDriver::greeted(worker);
        let theirs = reserve(&mut other);
        assert_ne!(theirs.base, range.base);
        malloc_at(&mut other, theirs.base, 4096);
        assert_eq!(other.ping(1).header.aux, 0);
        // Another session's client range is not ours to place in.
        malloc_at(&mut c, theirs.base, 4096);
        assert_eq!(c.ping(6).header.aux, Status::INVALID_VALUE.0);
    });
}

#[test]
fn placements_past_the_session_memory_bound_are_refused() {
    let mut config = config_with(None);
    config.session = SessionConfig { limits: SessionLimits { max_memory: Some(8 << 20), ..SessionLimits::default() }, ..config.session };
    with_bystander_on(TestWorker::in_memory(config), |worker| {
        let mut c = SessionDriver::greeted(worker);
        let range = reserve(&mut c);
        assert_eq!(range.free, 8 << 20, "the reservation reports what the session may still take");
        let g = range.granularity;
        let size = (6u64 << 20).next_multiple_of(g);
        // The call form answers at once: what the client uses when its budget is spent.
        let reply = c.call(&Request::MallocAt(wire::MallocAt { device: 0, ptr: range.base, size }));
        assert!(!reply.is_error(), "{:?}", reply.error());
        let reply = c.call(&Request::MallocAt(wire::MallocAt { device: 0, ptr: range.base + size, size }));
        assert_eq!(reply.error().0, Status::OUT_OF_MEMORY);
        assert_eq!(reserve(&mut c).free, (8 << 20) - size);
    });
}

#[test]
fn device_reset_releases_the_range_and_its_allocations() {
    with_bystander(|worker| {
        let mut c = SessionDriver::greeted(worker);
        let free = c.free_mem();
        let range = reserve(&mut c);
        malloc_at(&mut c, range.base, 4 * range.granularity);
        malloc_at(&mut c, range.base + 4 * range.granularity, 1000);
        free_at(&mut c, range.base + 4 * range.granularity); // cached
        assert_eq!(c.ping(1).header.aux, 0);
        assert!(c.free_mem() < free);
        assert!(!c.call(&Request::DeviceReset(wire::DeviceRef { device: 0 })).is_error());
        assert_eq!(c.free_mem(), free, "the allocation and the cache went");
        let (status, _) = c.call(&Request::MemcpyDtoH(wire::MemcpyDtoH { src: range.base, len: 4, stream: 0 })).error();
        assert_eq!(status, Status::INVALID_VALUE, "the allocation is gone");
        malloc_at(&mut c, range.base, 4096);
        assert_eq!(c.ping(2).header.aux, Status::INVALID_VALUE.0, "the range is gone until reserved again");
        let again = reserve(&mut c);
        malloc_at(&mut c, again.base, 4096);
        assert_eq!(c.ping(3).header.aux, 0);
    });
}
