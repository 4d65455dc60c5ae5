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

fn post(c: &mut Client, req: &Request<'_>) {
    c.send(req, Flags::NO_REPLY);
}

fn download(c: &mut Client, src: u64, len: u64, stream: u64) -> Vec<u8> {
    match c.call(&Request::MemcpyDtoH(wire::MemcpyDtoH { src, len, stream })).response() {
        Response::MemcpyDtoH(d) => d.data.0.to_vec(),
        other => panic!("MemcpyDtoH answered with {other:?}"),
    }
}

#[test]
fn the_worker_offers_client_allocation() {
    with_bystander(|worker| {
        let mut c = Client::connect(worker);
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
        let mut c = Client::greeted(worker);
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
        let mut c = Client::greeted(worker);
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
        let mut c = Client::greeted(worker);
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
        let mut c = Client::greeted(worker);
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
