//! The worker's driver and session, spoken to directly as an in-memory pair: each client is
//! connected to its own session through `transport_core::mem` (the driver and session exactly
//! as over TCP, framed by the same decoder, no socket), over one shared `HostBackend`; frames
//! are sent and read by the real client session (`client_core::ClientSession`, through
//! `common::SessionDriver`), or by `common::HostilePeer` where a test needs a frame no client
//! would send. Tests about connections themselves use a TCP `hip_worker::Worker`.
//!
//! Every test keeps a second, well-behaved connection ("bystander") open throughout and checks
//! at the end that the worker still serves it: nothing one client sends may take down the
//! worker or another session.

mod common;

use common::*;
use hip_worker::session::SessionConfig;
use hip_worker::WorkerConfig;
use proto_core::auth::{auth_response, AuthContext};
use proto_core::wire;
use proto_core::{Bulk, Flags, Opcode, Request, Response, Status};
use std::time::Duration;
use transport_tcp::TcpConfig;

#[test]
fn hello_is_required_first() {
    with_bystander(|worker| {
        let mut c = SessionDriver::connect(worker);
        let reply = c.call(&Request::GetDeviceCount(wire::Empty {}));
        let (status, message) = reply.error();
        assert_eq!(status, Status::HELLO_REQUIRED, "{message}");
        c.expect_closed();

        // Allocation before HELLO is refused the same way (and allocates nothing).
        let mut c = SessionDriver::connect(worker);
        let (status, _) = c.call(&Request::Malloc(wire::Malloc { device: 0, size: 1 << 20, flags: 0 })).error();
        assert_eq!(status, Status::HELLO_REQUIRED);
        c.expect_closed();
    });
}

#[test]
fn handshake_welcome_and_features() {
    with_bystander(|worker| {
        let mut c = SessionDriver::connect(worker);
        let reply = c.call(&Request::Hello(wire::Hello {
            min_version: proto_core::header::MIN_PROTOCOL_VERSION,
            max_version: 7, // a newer client: the worker picks its own newest
            features: wire::features::ALL | (1 << 40),
            client_name: "future client".into(),
            resume_session: 0,
            auth_token: b"".as_slice().into(),
        }));
        assert_eq!(reply.header.aux, 0);
        match reply.response() {
            Response::Hello(w) => {
                assert_eq!(w.version, proto_core::PROTOCOL_VERSION);
                assert_eq!(w.features & !wire::features::ALL, 0, "unknown feature bits echoed: {:#x}", w.features);
                assert_eq!(w.features & wire::features::FIRE_AND_FORGET, wire::features::FIRE_AND_FORGET);
                assert_eq!(w.features & wire::features::RDMA, 0, "no RDMA listener, no RDMA feature");
                assert_eq!(w.rdma_endpoint.as_str(), "");
                assert!(!w.resumed);
            }
            other => panic!("{other:?}"),
        }
        c.ping(1);
    });
}

#[test]
fn welcome_advertises_the_rdma_listener_to_clients_that_can_use_it() {
    let session = SessionConfig { worker_name: "w".into(), rdma_endpoint: Some("10.0.0.5:18516".into()), ..Default::default() };
    let worker = TestWorker::in_memory(WorkerConfig { session, tcp: TcpConfig::default(), ..Default::default() });
    for (client_features, expect_rdma) in [(wire::features::RDMA | wire::features::FIRE_AND_FORGET, true), (wire::features::FIRE_AND_FORGET, false)] {
        let mut c = SessionDriver::connect(&worker);
        let reply = c.call(&Request::Hello(wire::Hello {
            min_version: proto_core::header::MIN_PROTOCOL_VERSION,
            max_version: proto_core::PROTOCOL_VERSION,
            features: client_features,
            client_name: "rdma-capable?".into(),
            resume_session: 0,
            auth_token: b"".as_slice().into(),
        }));
        match reply.response() {
            Response::Hello(w) => {
                assert_eq!(w.features & wire::features::RDMA != 0, expect_rdma, "features {:#x}", w.features);
                assert_eq!(w.rdma_endpoint.as_str(), "10.0.0.5:18516");
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn hello_version_mismatch_is_refused() {
    with_bystander(|worker| {
        // HELLO's range excludes the worker's version.
        let mut c = SessionDriver::connect(worker);
        let reply = c.call(&hello(proto_core::PROTOCOL_VERSION + 1, proto_core::PROTOCOL_VERSION + 5, ""));
        let (status, message) = reply.error();
        assert_eq!(status, Status::UNSUPPORTED_VERSION, "{message}");
        assert_eq!(status.0, 10001);
        assert!(message.contains(&proto_core::PROTOCOL_VERSION.to_string()), "the message should name the worker's versions: {message:?}");
        assert!(
            message.contains(&format!("worker hip-worker {}", hip_remote_build_info::VERSION)),
            "the message should name the worker's release: {message:?}"
        );
        c.expect_closed();

        // An inverted range.
        let mut c = SessionDriver::connect(worker);
        let (status, _) = c.call(&hello(1, 0, "")).error();
        assert_eq!(status, Status::UNSUPPORTED_VERSION);
        c.expect_closed();

        // A frame header of an unknown version: connection-level error, request id 0.
        let mut c = HostilePeer::connect(worker);
        let mut header = raw_header(Opcode::Hello.raw(), Flags::empty(), 1, 0, 0);
        header[4] = proto_core::PROTOCOL_VERSION as u8 + 1;
        c.send_raw(&header);
        let reply = c.recv();
        assert_eq!(reply.header.request_id, 0);
        let (status, message) = reply.error();
        assert_eq!(status, Status::UNSUPPORTED_VERSION);
        let speaks = format!(
            "worker hip-worker {} speaks protocol {}..={}",
            hip_remote_build_info::VERSION,
            proto_core::header::MIN_PROTOCOL_VERSION,
            proto_core::PROTOCOL_VERSION
        );
        assert!(message.ends_with(&speaks), "{message:?}");
        c.expect_closed();
    });
}

#[test]
fn challenge_response_authenticates_and_wrong_responses_are_refused() {
    let worker = start_worker_with(Some("sesame"));
    let mut good = SessionDriver::connect(&worker);
    assert!(matches!(authenticate(&mut good, b"sesame").response(), Response::Authenticate(_)));
    for token in [&b""[..], b"sesam", b"sesame!", b"SESAME"] {
        let mut c = SessionDriver::connect(&worker);
        let (status, _) = authenticate(&mut c, token).error();
        assert_eq!(status, Status::AUTH_FAILED, "token {token:?}");
        c.expect_closed();
    }
    // A response of the wrong length, and none at all: AUTHENTICATE skipped.
    let mut c = SessionDriver::connect(&worker);
    assert!(matches!(c.call(&hello(proto_core::PROTOCOL_VERSION, proto_core::PROTOCOL_VERSION, "")).response(), Response::Hello(_)));
    let (status, _) = c.call(&Request::Authenticate(wire::Authenticate { response: b"short".as_slice().into() })).error();
    assert_eq!(status, Status::AUTH_FAILED);
    c.expect_closed();
    let mut c = SessionDriver::connect(&worker);
    assert!(matches!(c.call(&hello(proto_core::PROTOCOL_VERSION, proto_core::PROTOCOL_VERSION, "")).response(), Response::Hello(_)));
    let (status, _) = c.call(&Request::GetDeviceCount(wire::Empty {})).error();
    assert_eq!(status, Status::AUTH_REQUIRED);
    c.expect_closed();
    good.round_trip(3);
}

/// A token in HELLO crossed the wire in clear: refused even when it is the right one.
#[test]
fn token_in_hello_is_refused() {
    let worker = start_worker_with(Some("sesame"));
    let mut c = SessionDriver::connect(&worker);
    let (status, message) = c.call(&hello(proto_core::PROTOCOL_VERSION, proto_core::PROTOCOL_VERSION, "sesame")).error();
    assert_eq!(status, Status::AUTH_FAILED, "{message}");
    assert!(message.contains("clear"), "{message}");
    c.expect_closed();
    // Also on a worker without tokens: the client believed it needed one.
    let worker = start_worker();
    let mut c = SessionDriver::connect(&worker);
    assert_eq!(c.call(&hello(proto_core::PROTOCOL_VERSION, proto_core::PROTOCOL_VERSION, "sesame")).error().0, Status::AUTH_FAILED);
    c.expect_closed();
}

/// An AUTHENTICATE recorded from one session does not open another: the nonce and the
/// session id differ.
#[test]
fn replayed_authenticate_is_refused() {
    let worker = start_worker_with(Some("sesame"));
    let mut first = SessionDriver::connect(&worker);
    let welcome = first.call(&hello(proto_core::PROTOCOL_VERSION, proto_core::PROTOCOL_VERSION, ""));
    let recorded = match welcome.response() {
        Response::Hello(w) => auth_response(
            b"sesame",
            &AuthContext { nonce: w.auth_challenge.0, session_id: w.session_id, client_name: "session.rs", version: w.version, features: w.features },
        ),
        other => panic!("{other:?}"),
    };
    assert!(matches!(
        first.call(&Request::Authenticate(wire::Authenticate { response: recorded.as_slice().into() })).response(),
        Response::Authenticate(_)
    ));
    let mut replay = SessionDriver::connect(&worker);
    assert!(matches!(replay.call(&hello(proto_core::PROTOCOL_VERSION, proto_core::PROTOCOL_VERSION, "")).response(), Response::Hello(_)));
    let (status, _) = replay.call(&Request::Authenticate(wire::Authenticate { response: recorded.as_slice().into() })).error();
    assert_eq!(status, Status::AUTH_FAILED);
    replay.expect_closed();
    // Nor can the same connection answer twice.
    let (status, _) = first.call(&Request::Authenticate(wire::Authenticate { response: recorded.as_slice().into() })).error();
    assert_eq!(status, Status::AUTH_FAILED);
    first.round_trip(4);
}

/// Before authentication a frame announcing a bulk section is refused from its header: the
/// worker closes without reading (so without buffering) a byte of the announced 64 MiB.
#[test]
fn preauth_bulk_is_refused_from_the_header() {
    let tcp_worker = TestWorker::tcp(config_with(Some("sesame")));
    let mut good = SessionDriver::connect(&tcp_worker);
    assert!(matches!(authenticate(&mut good, b"sesame").response(), Response::Authenticate(_)));
    let scenario = |worker: &TestWorker| {
        for opcode in [Opcode::Hello, Opcode::MemcpyHtoD] {
            let mut c = HostilePeer::connect(worker);
            let bulk_len = proto_core::limits::MAX_BULK_LEN as u32;
            c.send_raw(&raw_header(opcode.raw(), Flags::BULK, 1, 0, bulk_len));
            let (status, message) = c.recv().error();
            assert!(matches!(status, Status::AUTH_REQUIRED | Status::HELLO_REQUIRED), "{status:?} {message}");
            c.expect_closed();
        }
        // A control part over the pre-authentication limit: refused before it is read.
        let mut c = HostilePeer::connect(worker);
        c.send_raw(&raw_header(Opcode::Hello.raw(), Flags::empty(), 1, (proto_core::limits::MAX_PREAUTH_CONTROL_LEN + 1) as u32, 0));
        let reply = c.recv();
        assert_eq!(reply.error().0, Status::TOO_LARGE);
        c.expect_closed();
        // The same after HELLO, before AUTHENTICATE.
        let mut c = SessionDriver::connect(worker);
        assert!(matches!(c.call(&hello(proto_core::PROTOCOL_VERSION, proto_core::PROTOCOL_VERSION, "")).response(), Response::Hello(_)));
        c.hostile().send_raw(&raw_header(Opcode::Authenticate.raw(), Flags::BULK, 2, 0, 1 << 20));
        assert_eq!(c.recv().error().0, Status::AUTH_REQUIRED);
        c.expect_closed();
    };
    scenario(&tcp_worker);
    good.round_trip(8);
    drop(good);
    tcp_worker.shutdown();
}

/// Many connections announcing 64 MiB of HELLO bulk each: the worker's resident memory does
/// not grow by what they announce (it used to allocate and zero each section).
#[test]
fn preauth_bulk_does_not_allocate() {
    let worker = TestWorker::tcp(config_with(Some("sesame")));
    let rss_before = resident_bytes();
    let mut held = Vec::new();
    for i in 0..16 {
        let mut c = HostilePeer::connect(&worker);
        c.send_raw(&raw_header(Opcode::Hello.raw(), Flags::BULK, i, 0, proto_core::limits::MAX_BULK_LEN as u32));
        c.send_raw(&[0xa5; 4096]);
        held.push(c);
    }
    for c in &mut held {
        assert_eq!(c.recv().error().0, Status::AUTH_REQUIRED);
    }
    let grown = resident_bytes().saturating_sub(rss_before);
    assert!(grown < 256 << 20, "16 x 64 MiB announced before authentication grew the worker by {} MiB", grown >> 20);
    let mut good = SessionDriver::connect(&worker);
    assert!(matches!(authenticate(&mut good, b"sesame").response(), Response::Authenticate(_)));
    good.round_trip(5);
    drop((held, good));
    worker.shutdown();
}

/// A connection that never authenticates is closed after the (configured) deadline, while a
/// well-behaved client is served throughout.
#[test]
fn idle_preauth_connection_is_closed_after_the_deadline() {
    let mut config = config_with(Some("sesame"));
    config.limits.preauth_deadline = Duration::from_millis(300);
    let worker = TestWorker::tcp(config);
    let started = std::time::Instant::now();
    let mut idle = SessionDriver::connect(&worker);
    let mut greeted_only = SessionDriver::connect(&worker);
    assert!(matches!(greeted_only.call(&hello(proto_core::PROTOCOL_VERSION, proto_core::PROTOCOL_VERSION, "")).response(), Response::Hello(_)));
    let mut good = SessionDriver::connect(&worker);
    assert!(matches!(authenticate(&mut good, b"sesame").response(), Response::Authenticate(_)));
    idle.expect_closed();
    greeted_only.expect_closed();
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(250) && waited < Duration::from_secs(10), "closed after {waited:?}");
    // Trusted connections outlive the deadline.
    std::thread::sleep(Duration::from_millis(400));
    good.round_trip(6);
    drop((idle, greeted_only, good));
    worker.shutdown();
}

/// Connections above the worker's limit get an error frame (not a bare reset) and a close;
/// so do those above the per-address limit; a client within the limits is served throughout.
#[test]
fn connection_floods_get_an_error_frame() {
    for per_address in [false, true] {
        let mut config = config_with(None);
        if per_address {
            config.limits.max_per_address = 4;
        } else {
            config.limits.max_connections = 4;
        }
        let worker = TestWorker::tcp(config);
        let mut good = SessionDriver::greeted(&worker);
        let idle: Vec<SessionDriver> = (0..3).map(|_| SessionDriver::connect(&worker)).collect();
        // Let the worker accept them before the flood.
        good.ping(1);
        for _ in 0..8 {
            let mut refused = SessionDriver::connect(&worker);
            let reply = refused.recv();
            let (status, message) = reply.error();
            assert_eq!(status, Status::TOO_MANY_CONNECTIONS, "{message}");
            assert_eq!(reply.header.request_id, 0);
            refused.expect_closed();
            good.ping(2);
        }
        good.round_trip(7);
        drop(idle);
        // Slots are given back: a new client gets in once the idle ones are gone.
        let mut admitted = None;
        for _ in 0..100 {
            let mut c = SessionDriver::connect(&worker);
            c.send(&hello(proto_core::PROTOCOL_VERSION, proto_core::PROTOCOL_VERSION, ""), Flags::empty());
            // Refused (the error frame, request id 0) until the worker has seen the idle ones go.
            if !c.recv().is_error() {
                admitted = Some(c);
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        admitted.expect("a slot frees once a connection ends").ping(3);
        drop(good);
        worker.shutdown();
    }
}

/// The accept loop sleeps in the kernel: a fresh connection is served at once (it used to
/// wait for the next 50 ms poll), and shutdown still ends it promptly.
#[test]
fn accept_blocks_in_the_kernel_and_wakes_on_shutdown() {
    let worker = TestWorker::tcp(config_with(None));
    std::thread::sleep(Duration::from_millis(120));
    let mut slowest = Duration::ZERO;
    for _ in 0..5 {
        let started = std::time::Instant::now();
        let mut c = SessionDriver::greeted(&worker);
        slowest = slowest.max(started.elapsed());
        drop(c.ping(1));
        std::thread::sleep(Duration::from_millis(70));
    }
    assert!(slowest < Duration::from_millis(30), "a fresh connection waited {slowest:?} for its WELCOME");
    let started = std::time::Instant::now();
    worker.shutdown();
    assert!(started.elapsed() < Duration::from_secs(2), "shutdown took {:?}", started.elapsed());
}

#[test]
fn second_hello_is_refused() {
    with_bystander(|worker| {
        let mut c = SessionDriver::greeted(worker);
        let (status, _) = c.call(&hello(proto_core::PROTOCOL_VERSION, proto_core::PROTOCOL_VERSION, "")).error();
        assert_eq!(status, Status::INVALID_VALUE);
    });
}

/// docs/PROTOCOL.md §6: "A second HELLO on the same connection is refused
/// (`hipErrorInvalidValue`)" — refused, not fatal: the session should keep serving.
/// Regression: a failed HELLO used to end the connection even on an established session,
/// destroying everything it allocated; the driver (worker/src/driver.rs `serve`) closes the
/// connection only when the HELLO that would establish the session fails.
#[test]
fn second_hello_keeps_the_session() {
    let worker = start_worker();
    let mut c = SessionDriver::greeted(&worker);
    let ptr = c.malloc(4096);
    let (status, _) = c.call(&hello(proto_core::PROTOCOL_VERSION, proto_core::PROTOCOL_VERSION, "")).error();
    assert_eq!(status, Status::INVALID_VALUE);
    c.ping(5);
    assert!(matches!(c.call(&Request::Free(wire::Free { ptr })).response(), Response::Free(_)));
}

#[test]
fn malformed_control_part_is_answered_and_the_connection_keeps_serving() {
    with_bystander(|worker| {
        let mut c = SessionDriver::greeted(worker);

        // Malloc's control part is 16 bytes; send 3.
        let mut frame = raw_header(Opcode::Malloc.raw(), Flags::empty(), 100, 3, 0).to_vec();
        frame.extend_from_slice(&[1, 2, 3]);
        c.hostile().send_raw(&frame);
        let reply = c.recv();
        assert_eq!(reply.header.request_id, 100);
        assert_eq!(reply.header.opcode, Opcode::Malloc.raw());
        let (status, message) = reply.error();
        assert_eq!(status, Status::MALFORMED_FRAME, "{message}");
        c.ping(1);

        // A valid Malloc with a trailing byte.
        let mut buf = vec![0u8; 256];
        let req = Request::Malloc(wire::Malloc { device: 0, size: 4096, flags: 0 });
        let len = req.encode_frame(&mut buf, Flags::empty(), 101).expect("encode").head_len;
        let control_len = (len - 32) as u32;
        let mut frame = raw_header(Opcode::Malloc.raw(), Flags::empty(), 101, control_len + 1, 0).to_vec();
        frame.extend_from_slice(&buf[32..len]);
        frame.push(0);
        c.hostile().send_raw(&frame);
        let reply = c.recv();
        assert_eq!(reply.header.request_id, 101);
        assert_eq!(reply.error().0, Status::MALFORMED_FRAME);

        // A Memset whose width enum is out of range.
        let req = Request::Memset(wire::Memset { dst: 0x1000, value: 0, width: wire::MemsetWidth::Byte, count: 1, stream: 0, sync: true });
        let len = req.encode_frame(&mut buf, Flags::empty(), 102).expect("encode").head_len;
        let mut frame = buf[..len].to_vec();
        // Fields: dst u64, value u32, width u8 → the width byte is at control offset 12.
        frame[32 + 12] = 0x7f;
        c.hostile().send_raw(&frame);
        let reply = c.recv();
        assert_eq!(reply.header.request_id, 102);
        assert_eq!(reply.error().0, Status::MALFORMED_FRAME);

        // A frame flagged as a response, sent to the worker.
        let req = Request::GetDeviceCount(wire::Empty {});
        let id = c.hostile().send_frame(&req, Flags::RESPONSE, 103);
        let reply = c.recv();
        assert_eq!(reply.header.request_id, id);
        assert_eq!(reply.error().0, Status::MALFORMED_FRAME);

        // Still a working session.
        c.round_trip(4);
    });
}

#[test]
fn unknown_opcode_is_answered_and_the_connection_keeps_serving() {
    with_bystander(|worker| {
        let mut c = SessionDriver::greeted(worker);
        for (id, opcode) in [(200u64, 0x7f01u16), (201, 0x0000), (202, 0x00ff), (203, 0xffff)] {
            c.hostile().send_raw(&raw_header(opcode, Flags::empty(), id, 0, 0));
            let reply = c.recv();
            assert_eq!(reply.header.request_id, id);
            assert_eq!(reply.header.opcode, opcode);
            let (status, message) = reply.error();
            assert_eq!(status, Status::UNKNOWN_OPCODE, "opcode {opcode:#06x}: {message}");
            assert_eq!(status.0, 10002);
        }
        // With a control part and a bulk section that the worker must skip.
        let mut frame = raw_header(0x7f02, Flags::BULK, 204, 5, 70_000).to_vec();
        frame.extend_from_slice(&vec![0xa5u8; 5 + 70_000]);
        c.hostile().send_raw(&frame);
        let reply = c.recv();
        assert_eq!(reply.header.request_id, 204);
        assert_eq!(reply.error().0, Status::UNKNOWN_OPCODE);
        c.ping(2);
        c.round_trip(5);
    });
}

#[test]
fn hostile_header_lengths_are_refused_and_the_connection_closed() {
    with_bystander(|worker| {
        let cases: [(&str, [u8; 32], Status); 5] = [
            ("payload_len 0xffffffff", raw_header(Opcode::Ping.raw(), Flags::empty(), 7, u32::MAX, 0), Status::TOO_LARGE),
            ("bulk over MAX_BULK_LEN", raw_header(Opcode::MemcpyHtoD.raw(), Flags::BULK, 7, 17, 0x8000_0000), Status::TOO_LARGE),
            (
                "bulk_len > payload_len",
                {
                    let mut h = raw_header(Opcode::Ping.raw(), Flags::BULK, 7, 0, 16);
                    h[20..24].copy_from_slice(&8u32.to_le_bytes());
                    h
                },
                Status::MALFORMED_FRAME,
            ),
            (
                "bad magic",
                {
                    let mut h = raw_header(Opcode::Ping.raw(), Flags::empty(), 7, 0, 0);
                    h[0..4].copy_from_slice(b"GET ");
                    h
                },
                Status::MALFORMED_FRAME,
            ),
            ("undefined flag bit", raw_header(Opcode::Ping.raw(), Flags::empty(), 7, 0, 0).map_flags(0x0100), Status::MALFORMED_FRAME),
        ];
        for (what, header, want) in cases {
            let mut c = SessionDriver::greeted(worker);
            let ptr = c.malloc(8 << 20); // released when the worker drops the connection
            assert_ne!(ptr, 0);
            c.hostile().send_raw(&header);
            let reply = c.recv();
            assert_eq!(reply.header.request_id, 0, "{what}: a refused header is answered with request id 0");
            let (status, message) = reply.error();
            assert_eq!(status, want, "{what}: {message}");
            c.expect_closed();
        }
    });
}

/// Sets the flags field of a hand-made header to raw bits (for undefined bits).
trait MapFlags {
    fn map_flags(self, bits: u16) -> Self;
}
impl MapFlags for [u8; 32] {
    fn map_flags(mut self, bits: u16) -> Self {
        self[8..10].copy_from_slice(&bits.to_le_bytes());
        self
    }
}

/// The opcode table allows fire-and-forget only for calls declared `post`: a `NO_REPLY`
/// Malloc (whose answer is the pointer) gets an error reply at once, allocates nothing and
/// defers nothing.
#[test]
fn no_reply_is_refused_for_calls_that_must_answer() {
    with_bystander(|worker| {
        let mut c = SessionDriver::greeted(worker);
        let id = c.send(&Request::Malloc(wire::Malloc { device: 0, size: 4096, flags: 0 }), Flags::NO_REPLY);
        let reply = c.recv();
        assert_eq!(reply.header.request_id, id);
        let (status, message) = reply.error();
        assert_eq!(status, Status::MALFORMED_FRAME);
        assert!(message.contains("Malloc cannot be sent without a reply"), "{message}");
        assert_eq!(c.ping(1).header.aux, 0, "nothing deferred");
        let info = c.call(&Request::MemGetInfo(wire::DeviceRef { device: 0 }));
        let Response::MemGetInfo(info) = info.response() else { panic!("MemGetInfo reply") };
        assert_eq!(info.free, info.total, "the refused Malloc allocated nothing");
    });
}

#[test]
fn fire_and_forget_failure_is_reported_in_the_next_aux() {
    with_bystander(|worker| {
        let mut c = SessionDriver::greeted(worker);
        // A failing NO_REPLY request gets no answer of its own.
        let bad_memset = wire::Memset { dst: 0xdead_0000, value: 0, width: wire::MemsetWidth::Byte, count: 16, stream: 0, sync: false };
        c.send(&Request::Memset(bad_memset), Flags::NO_REPLY);
        // A second failure before the next response: the first one wins.
        c.send(&Request::StreamWaitEvent(wire::StreamWaitEvent { stream: 0xbad, event: 0xbad, flags: 0 }), Flags::NO_REPLY);
        let reply = c.ping(1);
        assert_eq!(reply.header.aux, Status::INVALID_VALUE.0, "aux of the response after a failed NO_REPLY Memset");
        // The client session holds it for the application's next call.
        assert_eq!(c.session.take_deferred(), Some(client_core::HipError::INVALID_VALUE));
        // Reported once.
        assert_eq!(c.ping(2).header.aux, 0);
        assert_eq!(c.session.take_deferred(), None);

        // Successful NO_REPLY requests defer nothing.
        let ptr = c.malloc(4096);
        c.send(
            &Request::Memset(wire::Memset { dst: ptr, value: 7, width: wire::MemsetWidth::Byte, count: 4096, stream: 0, sync: false }),
            Flags::NO_REPLY,
        );
        assert_eq!(c.ping(3).header.aux, 0);

        // The deferred status rides on an error reply too, and on any opcode's response.
        c.send(
            &Request::Memset(wire::Memset { dst: ptr + 4000, value: 7, width: wire::MemsetWidth::Word, count: 100, stream: 0, sync: false }),
            Flags::NO_REPLY,
        );
        let reply = c.call(&Request::Free(wire::Free { ptr: 0x1234 }));
        assert_eq!(reply.error().0, Status::INVALID_VALUE);
        assert_eq!(reply.header.aux, Status::INVALID_VALUE.0, "a memset past the end of its allocation");
        c.send(&Request::EventRecord(wire::EventRecord { event: 0x42, stream: 0 }), Flags::NO_REPLY);
        let reply = c.call(&Request::GetDeviceCount(wire::Empty {}));
        assert!(matches!(reply.response(), Response::GetDeviceCount(d) if d.count == 1));
        assert_eq!(reply.header.aux, Status::INVALID_HANDLE.0);
        // The first deferred failure wins in the client session too (the memset's).
        assert_eq!(c.session.take_deferred(), Some(client_core::HipError::INVALID_VALUE));

        // Protocol-level failures of NO_REPLY requests are deferred as well.
        c.hostile().send_raw(&raw_header(0x7f33, Flags::NO_REPLY, 300, 0, 0));
        assert_eq!(c.ping(4).header.aux, Status::UNKNOWN_OPCODE.0);
        let mut frame = raw_header(Opcode::Memset.raw(), Flags::NO_REPLY, 301, 2, 0).to_vec();
        frame.extend_from_slice(&[0, 0]);
        c.hostile().send_raw(&frame);
        assert_eq!(c.ping(5).header.aux, Status::MALFORMED_FRAME.0);
        assert_eq!(c.ping(6).header.aux, 0);
    });
}

#[test]
fn async_device_to_host_replies_arrive() {
    with_bystander(|worker| {
        let mut c = SessionDriver::greeted(worker);
        let len = 3 << 20;
        let data: Vec<u8> = (0..len as u32).map(|i| (i ^ (i >> 9)) as u8).collect();
        let ptr = c.malloc(len as u64);
        let stream = match c.call(&Request::StreamCreate(wire::StreamCreate { device: 0, flags: 1, priority: 0 })).response() {
            Response::StreamCreate(s) => s.stream,
            other => panic!("{other:?}"),
        };
        // Queued upload (fire-and-forget), then pipelined downloads of three ranges on the
        // same stream: each reply carries exactly its range, matched by request id.
        c.send(&Request::MemcpyHtoD(wire::MemcpyHtoD { dst: ptr, stream, sync: false, data: Bulk(&data) }), Flags::NO_REPLY);
        let ranges = [(0usize, 1usize << 20), (1 << 20, 1 << 20), (2 << 20, 1 << 20)];
        let ids: Vec<u64> = ranges
            .iter()
            .map(|&(off, n)| c.send(&Request::MemcpyDtoH(wire::MemcpyDtoH { src: ptr + off as u64, len: n as u64, stream }), Flags::empty()))
            .collect();
        let mut seen = 0;
        while seen < ids.len() {
            let reply = c.recv();
            let i = ids.iter().position(|&id| id == reply.header.request_id).expect("reply to a request we sent");
            assert_eq!(reply.header.opcode, Opcode::MemcpyDtoH.raw());
            assert_eq!(reply.header.aux, 0);
            let (off, n) = ranges[i];
            match reply.response() {
                Response::MemcpyDtoH(d) => assert!(d.data.0 == &data[off..off + n], "range {i} differs"),
                other => panic!("{other:?}"),
            }
            seen += 1;
        }
        // A failing async download is answered with an error reply carrying its id.
        let bad = c.send(&Request::MemcpyDtoH(wire::MemcpyDtoH { src: ptr + len as u64 - 10, len: 20, stream }), Flags::empty());
        let reply = c.recv();
        assert_eq!(reply.header.request_id, bad);
        assert_eq!(reply.error().0, Status::INVALID_VALUE);
        let r = c.call(&Request::StreamSynchronize(wire::StreamRef { stream }));
        assert!(matches!(r.response(), Response::StreamSynchronize(_)));
        let r = c.call(&Request::StreamDestroy(wire::StreamRef { stream }));
        assert!(matches!(r.response(), Response::StreamDestroy(_)));
        // The stream handle is gone.
        let (status, _) = c.call(&Request::StreamQuery(wire::StreamRef { stream })).error();
        assert_eq!(status, Status::INVALID_HANDLE);
    });
}

#[test]
fn goodbye_closes_and_frees_the_session() {
    with_bystander(|worker| {
        let mut c = SessionDriver::greeted(worker);
        let ptr = c.malloc(16 << 20);
        assert_ne!(ptr, 0);
        let reply = c.call(&Request::Goodbye(wire::Empty {}));
        assert!(matches!(reply.response(), Response::Goodbye(_)));
        c.expect_closed();
        // with_bystander checks the 16 MiB came back.
    });
}

#[test]
fn sessions_are_isolated() {
    with_bystander(|worker| {
        let mut a = SessionDriver::greeted(worker);
        let mut b = SessionDriver::greeted(worker);
        let ptr = a.malloc(4096);
        let (status, _) = b.call(&Request::MemcpyDtoH(wire::MemcpyDtoH { src: ptr, len: 16, stream: 0 })).error();
        assert_eq!(status, Status::INVALID_VALUE);
        let (status, _) = b.call(&Request::Free(wire::Free { ptr })).error();
        assert_eq!(status, Status::INVALID_VALUE);
        let stream = match a.call(&Request::StreamCreate(wire::StreamCreate { device: 0, flags: 0, priority: 0 })).response() {
            Response::StreamCreate(s) => s.stream,
            other => panic!("{other:?}"),
        };
        let (status, _) = b.call(&Request::StreamSynchronize(wire::StreamRef { stream })).error();
        assert_eq!(status, Status::INVALID_HANDLE);
        assert!(matches!(a.call(&Request::Free(wire::Free { ptr })).response(), Response::Free(_)));
        // Dropping a connection without GOODBYE releases its session too.
        let _leaked = b.malloc(32 << 20);
        drop(b);
    });
}

#[test]
fn many_connections_come_and_go() {
    with_bystander_on(TestWorker::tcp(config_with(None)), |worker| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let addr = worker.tcp.as_ref().expect("TCP worker").local_addr().to_string();
                std::thread::spawn(move || {
                    for round in 0..5u8 {
                        let cfg = TcpConfig { io_timeout: Some(Duration::from_secs(20)), ..TcpConfig::default() };
                        let (sink, source) = transport_tcp::connect(&addr, &cfg).expect("connect");
                        let mut c = SessionDriver::over(Box::new(sink), Box::new(source));
                        assert!(matches!(
                            c.call(&hello(proto_core::PROTOCOL_VERSION, proto_core::PROTOCOL_VERSION, "")).response(),
                            Response::Hello(_)
                        ));
                        c.round_trip(i * 10 + round);
                        let _ = c.malloc(1 << 20); // left for the worker to clean up
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().expect("client thread");
        }
    });
}

#[test]
fn limits_stream_info_peers_and_function_attributes_are_checked_per_session() {
    with_bystander(|worker| {
        let mut a = SessionDriver::greeted(worker);
        let mut b = SessionDriver::greeted(worker);
        let get_stack = |c: &mut SessionDriver| match c.call(&Request::DeviceGetLimit(wire::LimitRef { device: 0, limit: 0 })).response() {
            Response::DeviceGetLimit(v) => v.value,
            other => panic!("{other:?}"),
        };
        let default_stack = get_stack(&mut a);
        match a.call(&Request::DeviceSetLimit(wire::SetLimit { device: 0, limit: 0, value: 4096 })).response() {
            Response::DeviceSetLimit(v) => assert_eq!(v.value, 4096),
            other => panic!("{other:?}"),
        }
        assert_eq!(get_stack(&mut a), 4096);
        assert_eq!(get_stack(&mut b), default_stack, "one session's limit leaked into another");
        let refused = a.call(&Request::DeviceSetLimit(wire::SetLimit { device: 0, limit: 0, value: 1 << 40 })).error();
        assert_eq!(refused.0, Status::INVALID_VALUE);
        assert_eq!(get_stack(&mut a), 4096, "a refused value changed the limit");
        for limit in [3, 4096, u32::MAX] {
            let (status, _) = a.call(&Request::DeviceGetLimit(wire::LimitRef { device: 0, limit })).error();
            assert_eq!(status, Status::UNSUPPORTED_LIMIT, "limit {limit}");
        }
        let (status, _) = a.call(&Request::DeviceGetLimit(wire::LimitRef { device: 7, limit: 0 })).error();
        assert_eq!(status, Status::INVALID_DEVICE);
        assert!(matches!(a.call(&Request::DeviceReset(wire::DeviceRef { device: 0 })).response(), Response::DeviceReset(_)));
        assert_eq!(get_stack(&mut a), default_stack, "hipDeviceReset keeps the session's limits");

        match a.call(&Request::DeviceCanAccessPeer(wire::PeerQuery { device: 0, peer: 0 })).response() {
            Response::DeviceCanAccessPeer(p) => assert!(!p.can_access, "a device is its own peer"),
            other => panic!("{other:?}"),
        }
        let (status, _) = a.call(&Request::DeviceCanAccessPeer(wire::PeerQuery { device: 0, peer: 1 })).error();
        assert_eq!(status, Status::INVALID_DEVICE);

        let stream = match a.call(&Request::StreamCreate(wire::StreamCreate { device: 0, flags: 1, priority: -3 })).response() {
            Response::StreamCreate(s) => s.stream,
            other => panic!("{other:?}"),
        };
        match a.call(&Request::StreamGetInfo(wire::StreamRef { stream })).response() {
            // -3 clamps to ROCm's greatest priority, -1, whatever the backend's range.
            Response::StreamGetInfo(i) => assert_eq!((i.device, i.flags, i.priority), (0, 1, -1)),
            other => panic!("{other:?}"),
        }
        let (status, _) = b.call(&Request::StreamGetInfo(wire::StreamRef { stream })).error();
        assert_eq!(status, Status::INVALID_HANDLE, "another session's stream");
        let (status, _) = a.call(&Request::StreamGetInfo(wire::StreamRef { stream: 0 })).error();
        assert_eq!(status, Status::INVALID_VALUE, "the null stream");
        assert!(matches!(a.call(&Request::StreamDestroy(wire::StreamRef { stream })).response(), Response::StreamDestroy(_)));
        let (status, _) = a.call(&Request::StreamGetInfo(wire::StreamRef { stream })).error();
        assert_eq!(status, Status::INVALID_HANDLE, "a destroyed stream");

        let (status, _) =
            a.call(&Request::FuncSetAttribute(wire::FuncSetAttribute { function: 0x4655_0000_0000_0001, attribute: 8, value: 0 })).error();
        assert_eq!(status, Status::INVALID_HANDLE, "a function this session never got");
        let (status, _) =
            a.call(&Request::FuncSetAttribute(wire::FuncSetAttribute { function: 0x4655_0000_0000_0001, attribute: 7, value: 0 })).error();
        assert_eq!(status, Status::INVALID_VALUE, "an attribute that cannot be set");
    });
}

/// The worker-side checks of 2D copies, peer copies, allocation kinds and stream-ordered
/// allocation: every pointer is validated against this session's table first.
#[test]
fn pitched_peer_and_stream_ordered_memory_are_checked() {
    with_bystander(|worker| {
        let mut c = SessionDriver::greeted(worker);
        let mut other = SessionDriver::greeted(worker);
        let foreign = other.malloc(4096);
        let status = |c: &mut SessionDriver, req: &Request<'_>| c.call(req).error().0;
        let ptr = c.malloc(4096);

        // 2D upload: 3 rows of 10 bytes, 100 bytes apart; downloaded back packed.
        let rows: Vec<u8> = (0..30u8).collect();
        let up = |dst, pitch, width, data| Request::MemcpyHtoD2D(wire::MemcpyHtoD2D { dst, pitch, width, stream: 0, sync: true, data: Bulk(data) });
        assert!(matches!(c.call(&up(ptr + 50, 100, 10, &rows)).response(), Response::MemcpyHtoD2D(_)));
        let down = |src, pitch, width, height| Request::MemcpyDtoH2D(wire::MemcpyDtoH2D { src, pitch, width, height, stream: 0 });
        let reply = c.call(&down(ptr + 50, 100, 10, 3));
        match reply.response() {
            Response::MemcpyDtoH2D(d) => assert_eq!(d.data.0, rows.as_slice()),
            other => panic!("{other:?}"),
        }
        // The gaps are untouched: byte 60 (after row 0) is still zero.
        match c.call(&Request::MemcpyDtoH(wire::MemcpyDtoH { src: ptr + 60, len: 1, stream: 0 })).response() {
            Response::MemcpyDtoH(d) => assert_eq!(d.data.0, [0]),
            other => panic!("{other:?}"),
        }
        assert_eq!(status(&mut c, &up(ptr, 100, 7, &rows)), Status::INVALID_VALUE, "not whole rows");
        assert_eq!(status(&mut c, &up(ptr, 5, 10, &rows)), Status::INVALID_PITCH_VALUE);
        assert_eq!(status(&mut c, &up(ptr + 3900, 100, 10, &rows)), Status::INVALID_VALUE, "past the end");
        assert_eq!(status(&mut c, &up(foreign, 100, 10, &rows)), Status::INVALID_VALUE, "another session's memory");
        assert_eq!(status(&mut c, &down(ptr, 5, 10, 3)), Status::INVALID_PITCH_VALUE);
        assert_eq!(status(&mut c, &down(foreign, 100, 10, 3)), Status::INVALID_VALUE);
        assert_eq!(status(&mut c, &down(ptr, 1 << 20, 1 << 20, 65)), Status::INVALID_VALUE, "over the bulk limit");
        let d2d = |dst, src, height| {
            Request::MemcpyDtoD2D(wire::MemcpyDtoD2D { dst, dst_pitch: 64, src, src_pitch: 100, width: 10, height, stream: 0, sync: true })
        };
        assert!(matches!(c.call(&d2d(ptr + 2048, ptr + 50, 3)).response(), Response::MemcpyDtoD2D(_)));
        match c.call(&down(ptr + 2048, 64, 10, 3)).response() {
            Response::MemcpyDtoH2D(d) => assert_eq!(d.data.0, rows.as_slice()),
            other => panic!("{other:?}"),
        }
        assert_eq!(status(&mut c, &d2d(foreign, ptr, 3)), Status::INVALID_VALUE);
        assert_eq!(status(&mut c, &d2d(ptr + 4000, ptr, 3)), Status::INVALID_VALUE);

        // Peer copies: device ordinals first, then the ranges.
        let peer = |dst, dst_device, src, src_device, len| {
            Request::MemcpyPeer(wire::MemcpyPeer { dst, dst_device, src, src_device, len, stream: 0, sync: true })
        };
        assert!(matches!(c.call(&peer(ptr + 1000, 0, ptr + 50, 0, 10)).response(), Response::MemcpyPeer(_)));
        assert_eq!(status(&mut c, &peer(ptr, 1, ptr, 0, 10)), Status::INVALID_DEVICE);
        assert_eq!(status(&mut c, &peer(ptr, 0, ptr, 7, 10)), Status::INVALID_DEVICE);
        assert_eq!(status(&mut c, &peer(ptr, 0, foreign, 0, 10)), Status::INVALID_VALUE);

        // Allocation kinds of hipExtMallocWithFlags.
        let malloc = |size, flags| Request::Malloc(wire::Malloc { device: 0, size, flags });
        assert!(matches!(c.call(&malloc(64, 1)).response(), Response::Malloc(_)));
        assert!(matches!(c.call(&malloc(8, 2)).response(), Response::Malloc(_)));
        assert_eq!(status(&mut c, &malloc(16, 2)), Status::INVALID_VALUE, "signal memory is 8 bytes");
        assert_eq!(status(&mut c, &malloc(64, 5)), Status::INVALID_VALUE);

        // Stream-ordered allocation.
        let malloc_async = |stream| Request::MallocAsync(wire::MallocAsync { device: 0, size: 256, stream });
        let free_async = |ptr| Request::FreeAsync(wire::FreeAsync { ptr, stream: 0 });
        let p = match c.call(&malloc_async(0)).response() {
            Response::MallocAsync(a) => {
                assert_eq!(a.device, 0);
                a.ptr
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(status(&mut c, &malloc_async(0x1234)), Status::INVALID_HANDLE);
        assert_eq!(status(&mut c, &free_async(p + 1)), Status::INVALID_VALUE, "interior pointer");
        assert_eq!(status(&mut c, &free_async(foreign)), Status::INVALID_VALUE, "another session's memory");
        assert!(matches!(c.call(&free_async(p)).response(), Response::FreeAsync(_)));
        assert_eq!(status(&mut c, &free_async(p)), Status::INVALID_VALUE, "freed twice");
        assert_eq!(
            status(&mut c, &Request::Memset(wire::Memset { dst: p, value: 0, width: wire::MemsetWidth::Byte, count: 1, stream: 0, sync: true })),
            Status::INVALID_VALUE
        );
        // The other session's memory was never touched.
        other.round_trip(9);
    });
}

/// A worker busy in a long synchronize sends heartbeats (PONGs with request id 0) while it
/// waits, so the client can tell it from a frozen one; the synchronize's reply follows.
#[test]
fn a_long_synchronize_sends_heartbeats_until_its_reply() {
    use std::time::Instant;
    with_bystander(|worker| {
        let mut c = SessionDriver::greeted(worker);
        // Long-running work on one of the client's streams (what a long kernel is to the null
        // stream's synchronize): memsets queued for about 3.5 s.
        let (ptr, stream) = (c.malloc(FLOOD_BYTES), c.stream_create(0));
        let busy = Duration::from_millis(3500);
        c.flood(ptr, stream, busy);
        let started = Instant::now();
        let id = c.send(&Request::StreamSynchronize(wire::StreamRef { stream: 0 }), Flags::empty());
        let mut heartbeats = Vec::new();
        let reply = loop {
            let frame = c.recv();
            if frame.header.request_id == id {
                break frame;
            }
            assert_eq!(frame.header.request_id, 0, "only heartbeats come unasked: {:?}", frame.header);
            assert_eq!(frame.header.aux, 0, "a heartbeat carries no deferred status");
            assert!(matches!(frame.response(), Response::Ping(p) if p.nonce == 0));
            heartbeats.push(started.elapsed());
        };
        assert!(matches!(reply.response(), Response::StreamSynchronize(_)));
        let waited = started.elapsed();
        assert!(waited >= Duration::from_secs(2), "the queued work took only {waited:?}");
        // One a second (WORKER_HEARTBEAT) while nothing else is sent.
        let seconds = waited.as_secs() as usize;
        assert!((seconds - 1..=seconds + 1).contains(&heartbeats.len()), "heartbeats at {heartbeats:?} in {waited:?}");
        // Idle again: no more heartbeats, the next call's reply comes first.
        c.ping(5);
    });
}

/// Each bound (session memory, events, pending uploads; the worker's streams) answers
/// hipErrorOutOfMemory before allocating, never a crash, and the session is served again once
/// it frees.
#[test]
fn session_and_worker_limits_answer_out_of_memory_and_recover() {
    use hip_worker::session::SessionLimits;
    const MIB: u64 = 1 << 20;
    fn refused(reply: Reply) {
        assert_eq!(reply.error().0, Status::OUT_OF_MEMORY, "{:?}", reply.error());
    }
    let mut config = config_with(None);
    config.session.limits =
        SessionLimits { max_events: 2, max_memory: Some(48 * MIB), max_pending_bytes: MIB as usize, max_worker_streams: 4, ..Default::default() };
    with_bystander_on(TestWorker::in_memory(config), |worker| {
        let mut c = SessionDriver::greeted(worker);
        // Device memory per session.
        let big = c.malloc(40 * MIB);
        refused(c.call(&Request::Malloc(wire::Malloc { device: 0, size: 16 * MIB, flags: 0 })));
        assert!(matches!(c.call(&Request::Free(wire::Free { ptr: big })).response(), Response::Free(_)));
        let big = c.malloc(48 * MIB);
        assert!(matches!(c.call(&Request::Free(wire::Free { ptr: big })).response(), Response::Free(_)));

        // Events per session.
        let event = |c: &mut SessionDriver| c.call(&Request::EventCreate(wire::EventCreate { device: 0, flags: 0 }));
        let first = match event(&mut c).response() {
            Response::EventCreate(e) => e.event,
            other => panic!("{other:?}"),
        };
        assert!(!event(&mut c).is_error());
        refused(event(&mut c));
        assert!(!c.call(&Request::EventDestroy(wire::EventRef { event: first })).is_error());
        assert!(!event(&mut c).is_error());

        // Streams of the whole worker: the bystander's null stream holds one of the 4.
        let streams: Vec<u64> = (0..3).map(|_| c.stream_create(0)).collect();
        refused(c.call(&Request::StreamCreate(wire::StreamCreate { device: 0, flags: 0, priority: 0 })));
        let mut other = SessionDriver::greeted(worker);
        refused(other.call(&Request::StreamCreate(wire::StreamCreate { device: 0, flags: 0, priority: 0 })));
        for stream in &streams[1..] {
            assert!(!c.call(&Request::StreamDestroy(wire::StreamRef { stream: *stream })).is_error());
        }
        other.stream_create(1);

        // Uploads queued behind a busy stream: 1 MiB may wait, more is refused.
        let (ptr, stream) = (c.malloc(FLOOD_BYTES), streams[0]);
        c.flood(ptr, stream, Duration::from_secs(1));
        let chunk = vec![3u8; 512 << 10];
        let upload = |c: &mut SessionDriver| c.call(&Request::MemcpyHtoD(wire::MemcpyHtoD { dst: ptr, stream, sync: false, data: Bulk(&chunk) }));
        assert!(!upload(&mut c).is_error());
        assert!(!upload(&mut c).is_error());
        refused(upload(&mut c));
        let id = c.send(&Request::StreamSynchronize(wire::StreamRef { stream }), Flags::empty());
        let reply = loop {
            match c.recv() {
                heartbeat if heartbeat.header.request_id == 0 => continue,
                reply => break reply,
            }
        };
        assert_eq!(reply.header.request_id, id);
        assert!(matches!(reply.response(), Response::StreamSynchronize(_)));
        assert!(!upload(&mut c).is_error(), "the bound is given back once the stream ran the uploads");
    });
}

/// `--max-session-memory-mib` is one account: device allocations, buffered uploads and
/// device-to-host replies not yet sent together. Downloads queued behind a busy stream hold
/// their reply bytes, so an allocation past the bound is refused; once they are answered the
/// same allocation fits.
#[test]
fn session_memory_counts_allocations_and_queued_replies_together() {
    use hip_worker::session::SessionLimits;
    const MIB: u64 = 1 << 20;
    let mut config = config_with(None);
    config.session.limits = SessionLimits { max_memory: Some(FLOOD_BYTES + 8 * MIB), ..Default::default() };
    with_bystander_on(TestWorker::in_memory(config), |worker| {
        let mut c = SessionDriver::greeted(worker);
        let src = c.malloc(FLOOD_BYTES);
        let stream = c.stream_create(0);
        c.flood(src, stream, Duration::from_secs(1));
        // Two 3 MiB downloads behind the flood: their 6 MiB are reserved until answered.
        let ids: Vec<u64> = (0..2).map(|_| c.send(&Request::MemcpyDtoH(wire::MemcpyDtoH { src, len: 3 * MIB, stream }), Flags::empty())).collect();
        // 4 MiB more would pass the bound by 2 MiB.
        let refused = c.send(&Request::Malloc(wire::Malloc { device: 0, size: 4 * MIB, flags: 0 }), Flags::empty());
        let mut replies = std::collections::HashMap::new();
        while replies.len() < 3 {
            let reply = c.recv();
            if reply.header.request_id != 0 {
                replies.insert(reply.header.request_id, reply);
            }
        }
        let (status, message) = replies[&refused].error();
        assert_eq!(status, Status::OUT_OF_MEMORY, "{message}");
        assert!(message.contains("--max-session-memory-mib"), "{message}");
        for id in &ids {
            assert!(matches!(replies[id].response(), Response::MemcpyDtoH(d) if d.data.0.len() == 3 * MIB as usize));
        }
        // Answered: the same allocation fits now.
        c.malloc(4 * MIB);
    });
}

#[test]
fn peer_access_and_module_devices_on_a_two_device_worker() {
    with_bystander_on(TestWorker::in_memory_devices(config_with(None), 2), |worker| {
        let mut a = SessionDriver::greeted(worker);
        let mut b = SessionDriver::greeted(worker);
        let set =
            |c: &mut SessionDriver, device, peer, enable| c.call(&Request::DeviceSetPeerAccess(wire::PeerAccessChange { device, peer, enable }));
        match a.call(&Request::DeviceCanAccessPeer(wire::PeerQuery { device: 0, peer: 1 })).response() {
            Response::DeviceCanAccessPeer(p) => assert!(p.can_access, "emulated devices share one address space"),
            other => panic!("{other:?}"),
        }
        assert_eq!(set(&mut a, 0, 1, false).error().0, Status::PEER_ACCESS_NOT_ENABLED);
        assert!(matches!(set(&mut a, 0, 1, true).response(), Response::DeviceSetPeerAccess(_)));
        assert_eq!(set(&mut a, 0, 1, true).error().0, Status::PEER_ACCESS_ALREADY_ENABLED);
        // Pairs are per session, and per direction.
        assert!(matches!(set(&mut b, 0, 1, true).response(), Response::DeviceSetPeerAccess(_)));
        assert!(matches!(set(&mut a, 1, 0, true).response(), Response::DeviceSetPeerAccess(_)));
        assert!(matches!(set(&mut a, 0, 1, false).response(), Response::DeviceSetPeerAccess(_)));
        assert_eq!(set(&mut a, 0, 1, false).error().0, Status::PEER_ACCESS_NOT_ENABLED);
        // A device is not its own peer; ordinals the worker does not serve are refused.
        for (device, peer) in [(0, 0), (1, 1), (0, 2), (2, 0), (u32::MAX, 1)] {
            assert_eq!(set(&mut a, device, peer, true).error().0, Status::INVALID_DEVICE, "{device} -> {peer}");
        }
        // hipDeviceReset forgets the device's pairs.
        assert!(matches!(a.call(&Request::DeviceReset(wire::DeviceRef { device: 1 })).response(), Response::DeviceReset(_)));
        assert_eq!(set(&mut a, 1, 0, false).error().0, Status::PEER_ACCESS_NOT_ENABLED);

        // Modules and hiprtc name their device; one the worker does not serve is refused.
        let load = wire::ModuleLoad { device: 2, format: wire::ModuleFormat::Auto, origin: "m.co".into(), image: Bulk(b"junk") };
        assert_eq!(a.call(&Request::ModuleLoad(load)).error().0, Status::INVALID_DEVICE);
        let compile = wire::RtcCompile { device: 7, name: "k.hip".into(), source: "".into(), ..Default::default() };
        assert_eq!(a.call(&Request::RtcCompile(compile)).error().0, Status::INVALID_DEVICE);
        let load = wire::ModuleLoad { device: 1, format: wire::ModuleFormat::Auto, origin: "m.co".into(), image: Bulk(b"junk") };
        assert_eq!(a.call(&Request::ModuleLoad(load)).error().0, Status::INVALID_IMAGE, "device 1 exists: the image is what is wrong");
    });
}

/// Pitched memsets are checked as a whole extent (overflowing sizes, rows over the pitch,
/// overlapping slices, another session's memory) before the backend is called; device and
/// peer attribute queries refuse bad devices and attributes.
#[test]
fn pitched_memsets_and_attribute_queries_are_checked() {
    with_bystander(|worker| {
        let mut c = SessionDriver::greeted(worker);
        let mut other = SessionDriver::greeted(worker);
        let foreign = other.malloc(4096);
        let ptr = c.malloc(4096);
        let status = |c: &mut SessionDriver, req: &Request<'_>| c.call(req).error().0;
        let fill = |dst, pitch, slice_pitch, width, height, depth| {
            Request::MemsetPitched(wire::MemsetPitched {
                dst,
                pitch,
                slice_pitch,
                value: 0x0102_0304,
                elem: wire::MemsetWidth::Word,
                width,
                height,
                depth,
                stream: 0,
                sync: true,
            })
        };
        // 2 slices of 3 rows of 2 words: rows 16 bytes apart, slices 64.
        assert!(matches!(c.call(&fill(ptr, 16, 64, 2, 3, 2)).response(), Response::MemsetPitched(_)));
        match c.call(&Request::MemcpyDtoH(wire::MemcpyDtoH { src: ptr, len: 128, stream: 0 })).response() {
            Response::MemcpyDtoH(d) => {
                for (at, &byte) in d.data.0.iter().enumerate() {
                    let (y, x) = ((at % 64) / 16, at % 16);
                    let want = if y < 3 && x < 8 { [4, 3, 2, 1][x % 4] } else { 0 };
                    assert_eq!(byte, want, "byte {at}");
                }
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(c.call(&fill(0, 0, 0, 0, 5, 5)).response(), Response::MemsetPitched(_)), "empty extents do nothing");
        assert_eq!(status(&mut c, &fill(ptr, 4, 64, 2, 3, 2)), Status::INVALID_VALUE, "rows wider than the pitch");
        assert_eq!(status(&mut c, &fill(ptr, 16, 32, 2, 3, 2)), Status::INVALID_VALUE, "slices overlap");
        assert_eq!(status(&mut c, &fill(ptr, 16, 64, 2, 3, 65)), Status::INVALID_VALUE, "past the end");
        assert_eq!(status(&mut c, &fill(ptr, u64::MAX, u64::MAX, 2, 3, 2)), Status::INVALID_VALUE, "overflowing extent");
        assert_eq!(status(&mut c, &fill(ptr, 16, 64, u64::MAX, 1, 1)), Status::INVALID_VALUE, "overflowing row");
        assert_eq!(status(&mut c, &fill(foreign, 16, 64, 2, 3, 2)), Status::INVALID_VALUE, "another session's memory");
        assert_eq!(status(&mut c, &fill(ptr + 4096, 16, 64, 1, 1, 1)), Status::INVALID_VALUE, "one past the end");

        let attr = |device, attr| Request::DeviceGetAttribute(wire::AttributeQuery { device, attr });
        match c.call(&attr(0, 10018)).response() {
            Response::DeviceGetAttribute(v) => assert!(v.known && v.value >= 1, "{v:?}"),
            other => panic!("{other:?}"),
        }
        match c.call(&attr(0, 9998)).response() {
            Response::DeviceGetAttribute(v) => assert!(!v.known, "{v:?}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(status(&mut c, &attr(7, 10018)), Status::INVALID_DEVICE);
        let peer = |device, peer, attr| Request::DeviceGetPeerAttribute(wire::PeerAttributeQuery { device, peer, attr });
        assert_eq!(status(&mut c, &peer(0, 0, 1)), Status::INVALID_DEVICE, "a device and itself");
        assert_eq!(status(&mut c, &peer(0, 9, 1)), Status::INVALID_DEVICE);
        other.round_trip(9);
    });
}

#[test]
fn link_requests_kernel_names_and_cooperative_launches_are_checked() {
    with_bystander(|worker| {
        let mut c = SessionDriver::greeted(worker);
        let input = |kind: u32, len: u32| wire::LinkInput { kind: kind.into(), len: len.into() };
        let link = |c: &mut SessionDriver, inputs: &[wire::LinkInput], names: &str, data: &[u8]| {
            let req = wire::RtcLink {
                device: 0,
                inputs: proto_core::List(inputs),
                names: proto_core::StrList::from_packed(names).unwrap(),
                data: Bulk(data),
            };
            c.call(&Request::RtcLink(req)).error()
        };
        // The inputs' lengths must cover the bulk section exactly, one name per input, and
        // each kind must be a hipJitInputType.
        assert_eq!(link(&mut c, &[input(3, 4)], "a\0", b"abc").0, Status::INVALID_VALUE);
        assert_eq!(link(&mut c, &[input(3, 2)], "a\0", b"abc").0, Status::INVALID_VALUE);
        assert_eq!(link(&mut c, &[input(3, 1), input(3, 2)], "a\0", b"abc").0, Status::INVALID_VALUE);
        assert_eq!(link(&mut c, &[input(77, 3)], "a\0", b"abc").0, Status::INVALID_VALUE);
        let bad_device = wire::RtcLink {
            device: 9,
            inputs: proto_core::List(&[input(3, 3)]),
            names: proto_core::StrList::from_packed("a\0").unwrap(),
            data: Bulk(b"abc"),
        };
        assert_eq!(c.call(&Request::RtcLink(bad_device)).error().0, Status::INVALID_DEVICE);
        // No image waits without a successful link.
        assert_eq!(c.call(&Request::RtcLinkedImage(wire::Empty {})).error().0, Status::INVALID_VALUE);
        // Unknown modules and functions.
        assert_eq!(c.call(&Request::ModuleFunctionNames(wire::ModuleRef { module: 0x77 })).error().0, Status::INVALID_HANDLE);
        let launch = wire::LaunchKernel { function: 0x99, grid: [1, 1, 1], block: [1, 1, 1], shared_mem: 0, stream: 0, args: Default::default() };
        assert_eq!(c.call(&Request::LaunchCooperative(launch)).error().0, Status::INVALID_HANDLE);
    });
}

/// Graphs are session objects: another session's graph is unknown to a client
/// (`INVALID_VALUE`, HIP's answer for a graph it does not know), each session holds at most
/// `MAX_GRAPHS_PER_SESSION`, and an executable graph is launched with one message.
#[test]
fn graphs_are_per_session_and_bounded() {
    use hip_worker::session::MAX_GRAPHS_PER_SESSION;
    with_bystander(|worker| {
        let mut a = SessionDriver::greeted(worker);
        let mut b = SessionDriver::greeted(worker);
        let create = Request::GraphCreate(wire::GraphCreate { flags: 0 });
        let Response::GraphCreate(g) = a.call(&create).response() else { panic!("GraphCreate answered otherwise") };
        let graph = g.graph;
        let (status, message) = b.call(&Request::GraphGetNodes(wire::GraphRef { graph })).error();
        assert_eq!(status, Status::INVALID_VALUE, "{message}");
        let (status, _) = b.call(&Request::GraphDestroy(wire::GraphRef { graph })).error();
        assert_eq!(status, Status::INVALID_VALUE);

        // An empty node, a self edge refused, an empty graph instantiated and launched.
        let none: [zerocopy::byteorder::little_endian::U64; 0] = [];
        let add = wire::GraphAddNode {
            graph,
            kind: wire::GraphNodeKind::Empty,
            dependencies: proto_core::field::List(&none),
            function: 0,
            grid: [0; 3],
            block: [0; 3],
            shared_mem: 0,
            dst: 0,
            src: 0,
            value: 0,
            element_size: 0,
            width: 0,
            height: 0,
            pitch: 0,
            host_token: 0,
            args: Default::default(),
        };
        let Response::GraphAddNode(n) = a.call(&Request::GraphAddNode(add.clone())).response() else { panic!("GraphAddNode") };
        let one = [zerocopy::byteorder::little_endian::U64::new(n.node)];
        let edge = wire::GraphEdges { graph, from: proto_core::field::List(&one), to: proto_core::field::List(&one) };
        assert_eq!(a.call(&Request::GraphAddDependencies(edge)).error().0, Status::INVALID_VALUE);
        let Response::GraphInstantiate(e) = a.call(&Request::GraphInstantiate(wire::GraphInstantiate { graph, flags: 0 })).response() else {
            panic!("GraphInstantiate")
        };
        a.call(&Request::GraphLaunch(wire::GraphLaunch { exec: e.exec, stream: 0 })).response();
        assert_eq!(b.call(&Request::GraphLaunch(wire::GraphLaunch { exec: e.exec, stream: 0 })).error().0, Status::INVALID_VALUE);

        // The bound: one graph is held already.
        for _ in 1..MAX_GRAPHS_PER_SESSION {
            a.call(&create).response();
        }
        let (status, message) = a.call(&create).error();
        assert_eq!(status, Status::OUT_OF_MEMORY, "{message}");
        // Freeing one makes room again; the other session was never limited by these.
        a.call(&Request::GraphDestroy(wire::GraphRef { graph })).response();
        a.call(&create).response();
        b.call(&create).response();
    });
}

/// Executable graphs are session objects too: another session cannot change, update, query or
/// disable one (`INVALID_VALUE`); a setter of another node kind, a node the executable graph
/// was not made from and disabling an empty node are refused; an update from a graph of the
/// same shape answers `Success`, one of another shape names the refusal in its reply.
#[test]
fn executable_graphs_are_per_session() {
    with_bystander(|worker| {
        let mut a = SessionDriver::greeted(worker);
        let mut b = SessionDriver::greeted(worker);
        let none: [zerocopy::byteorder::little_endian::U64; 0] = [];
        let new_graph = |c: &mut SessionDriver| {
            let Response::GraphCreate(g) = c.call(&Request::GraphCreate(wire::GraphCreate { flags: 0 })).response() else { panic!("GraphCreate") };
            g.graph
        };
        let add_empty = |c: &mut SessionDriver, graph: u64| {
            let add =
                wire::GraphAddNode { graph, kind: wire::GraphNodeKind::Empty, dependencies: proto_core::field::List(&none), ..Default::default() };
            let Response::GraphAddNode(n) = c.call(&Request::GraphAddNode(add)).response() else { panic!("GraphAddNode") };
            n.node
        };
        let graph = new_graph(&mut a);
        let node = add_empty(&mut a, graph);
        let Response::GraphInstantiate(e) = a.call(&Request::GraphInstantiate(wire::GraphInstantiate { graph, flags: 1 })).response() else {
            panic!("GraphInstantiate")
        };
        let exec = e.exec;
        let Response::GraphExecGetFlags(f) = a.call(&Request::GraphExecGetFlags(wire::GraphExecRef { exec })).response() else { panic!("flags") };
        assert_eq!(f.flags, 1);

        let set = wire::GraphExecSetNode { exec, node, kind: wire::GraphNodeKind::Empty, ..Default::default() };
        a.call(&Request::GraphExecSetNode(set.clone())).response();
        let memset = wire::GraphExecSetNode { kind: wire::GraphNodeKind::Memset, element_size: 1, width: 1, height: 1, ..set.clone() };
        assert_eq!(a.call(&Request::GraphExecSetNode(memset)).error().0, Status::INVALID_VALUE);
        let foreign = wire::GraphExecSetNode { node: node + 1, ..set.clone() };
        assert_eq!(a.call(&Request::GraphExecSetNode(foreign)).error().0, Status::INVALID_VALUE);
        let disable = wire::GraphNodeSetEnabled { exec, node, enabled: false };
        assert_eq!(a.call(&Request::GraphNodeSetEnabled(disable.clone())).error().0, Status::INVALID_VALUE);

        let same = new_graph(&mut a);
        add_empty(&mut a, same);
        let Response::GraphExecUpdate(u) = a.call(&Request::GraphExecUpdate(wire::GraphExecUpdate { exec, graph: same })).response() else {
            panic!("GraphExecUpdate")
        };
        assert_eq!((u.result, u.error_node), (wire::GraphExecUpdateResult::Success, 0));
        let bigger = new_graph(&mut a);
        add_empty(&mut a, bigger);
        add_empty(&mut a, bigger);
        let Response::GraphExecUpdate(u) = a.call(&Request::GraphExecUpdate(wire::GraphExecUpdate { exec, graph: bigger })).response() else {
            panic!("GraphExecUpdate")
        };
        assert_eq!((u.result, u.error_node), (wire::GraphExecUpdateResult::TopologyChanged, 0));

        // The other session knows none of it.
        assert_eq!(b.call(&Request::GraphExecSetNode(set)).error().0, Status::INVALID_VALUE);
        assert_eq!(b.call(&Request::GraphNodeSetEnabled(disable)).error().0, Status::INVALID_VALUE);
        assert_eq!(b.call(&Request::GraphExecGetFlags(wire::GraphExecRef { exec })).error().0, Status::INVALID_VALUE);
        assert_eq!(b.call(&Request::GraphUpload(wire::GraphUpload { exec, stream: 0 })).error().0, Status::INVALID_VALUE);
        let other = new_graph(&mut b);
        assert_eq!(b.call(&Request::GraphExecUpdate(wire::GraphExecUpdate { exec, graph: other })).error().0, Status::INVALID_VALUE);
        a.call(&Request::GraphUpload(wire::GraphUpload { exec, stream: 0 })).response();
        a.call(&Request::GraphLaunch(wire::GraphLaunch { exec, stream: 0 })).response();
    });
}

/// Stream capture lives in the session: work queued on a capturing stream is recorded as a
/// node, not run, until the captured graph is launched (one message); another session neither
/// sees nor ends the capture, nor is bound by its rules; a captured graph whose memory was
/// freed fails its launch with HIP's error.
#[test]
fn capture_records_in_the_session_instead_of_running() {
    use zerocopy::byteorder::little_endian::U64;
    with_bystander(|worker| {
        let mut a = SessionDriver::greeted(worker);
        let mut b = SessionDriver::greeted(worker);
        let Response::Malloc(m) = a.call(&Request::Malloc(wire::Malloc { device: 0, size: 64, flags: 0 })).response() else { panic!("Malloc") };
        let ptr = m.ptr;
        let clear = wire::Memset { dst: ptr, value: 0, width: wire::MemsetWidth::Byte, count: 64, stream: 0, sync: true };
        a.call(&Request::Memset(clear)).response();
        let Response::StreamCreate(s) = a.call(&Request::StreamCreate(wire::StreamCreate { device: 0, flags: 1, priority: 0 })).response() else {
            panic!("StreamCreate")
        };
        let stream = s.stream;
        let none: [U64; 0] = [];
        let begin = wire::StreamBeginCapture { stream, mode: 0, thread: 7, graph: 0, dependencies: proto_core::field::List(&none) };
        a.call(&Request::StreamBeginCapture(begin.clone())).response();
        assert_eq!(a.call(&Request::StreamBeginCapture(begin)).error().0, Status::ILLEGAL_STATE);

        // The other session: not its stream, and its calls are not bound by this capture.
        let end = wire::StreamEndCapture { stream, thread: 7 };
        assert_eq!(b.call(&Request::StreamEndCapture(end.clone())).error().0, Status::ILLEGAL_STATE);
        assert!(b.call(&Request::StreamCaptureQuery(wire::StreamCaptureQuery { stream })).is_error());
        b.call(&Request::CaptureCheck(wire::CaptureCheck { thread: 7, mode: 0 })).response();

        // Recorded, not run.
        let fill = wire::Memset { dst: ptr, value: 0xab, width: wire::MemsetWidth::Byte, count: 64, stream, sync: false };
        a.call(&Request::Memset(fill)).response();
        let reply = a.call(&Request::StreamCaptureQuery(wire::StreamCaptureQuery { stream }));
        let Response::StreamCaptureQuery(info) = reply.response() else { panic!("StreamCaptureQuery") };
        assert_eq!((info.status, info.id, info.dependencies.0.len()), (1, 1, 1));
        assert_eq!(a.call(&Request::StreamEndCapture(wire::StreamEndCapture { stream, thread: 8 })).error().0, Status::STREAM_CAPTURE_WRONG_THREAD);
        let Response::StreamEndCapture(g) = a.call(&Request::StreamEndCapture(end)).response() else { panic!("StreamEndCapture") };
        let read = |c: &mut SessionDriver| match c.call(&Request::MemcpyDtoH(wire::MemcpyDtoH { src: ptr, len: 64, stream: 0 })).response() {
            Response::MemcpyDtoH(d) => d.data.0.to_vec(),
            other => panic!("{other:?}"),
        };
        assert_eq!(read(&mut a), vec![0; 64], "the captured memset ran during capture");

        // Replayed with one message.
        let instantiate = Request::GraphInstantiate(wire::GraphInstantiate { graph: g.graph, flags: 0 });
        let Response::GraphInstantiate(e) = a.call(&instantiate).response() else { panic!("GraphInstantiate") };
        a.call(&Request::GraphLaunch(wire::GraphLaunch { exec: e.exec, stream })).response();
        a.call(&Request::StreamSynchronize(wire::StreamRef { stream })).response();
        assert_eq!(read(&mut a), vec![0xab; 64]);

        // Its memory freed, the captured graph fails its launch; the session goes on.
        a.call(&Request::Free(wire::Free { ptr })).response();
        assert_eq!(a.call(&Request::GraphLaunch(wire::GraphLaunch { exec: e.exec, stream })).error().0, Status::INVALID_VALUE);
        a.call(&Request::StreamSynchronize(wire::StreamRef { stream })).response();
    });
}

/// SameHostOffer (after WELCOME, before AUTHENTICATE): the worker names its shared-memory
/// socket only for a proof made with its own machine identity for this very session; any
/// other proof gets an empty answer, and the offer grants nothing else.
#[test]
fn same_host_offer_answers_only_a_proof_of_this_machine_for_this_session() {
    use proto_core::auth::same_host_proof;
    let machine = b"machine-a/boot-1";
    let mut config = config_with(Some("tok"));
    let same_host = hip_worker::session::SameHost { machine: Some(machine.to_vec()), ..Default::default() };
    same_host.socket.set("/run/hip-remote-test.sock".into()).unwrap();
    config.session.same_host = std::sync::Arc::new(same_host);
    let worker = TestWorker::in_memory(config);
    let answer = |c: &mut SessionDriver, proof: &[u8]| match c.call(&Request::SameHostOffer(wire::SameHostOffer { proof: proof.into() })).response() {
        Response::SameHostOffer(a) => a.socket.as_str().to_string(),
        other => panic!("{other:?}"),
    };

    let hello_with = |features: u64| {
        Request::Hello(wire::Hello {
            min_version: proto_core::PROTOCOL_VERSION,
            max_version: proto_core::PROTOCOL_VERSION,
            features,
            client_name: "session.rs".into(),
            resume_session: 0,
            auth_token: b"".as_slice().into(),
        })
    };

    let mut c = SessionDriver::connect(&worker);
    let (session_id, nonce) = match c.call(&hello_with(wire::features::FIRE_AND_FORGET | wire::features::SHARED_MEMORY)).response() {
        Response::Hello(w) => {
            assert_ne!(w.features & wire::features::SHARED_MEMORY, 0, "features {:#x}", w.features);
            (w.session_id, w.auth_challenge.0.to_vec())
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(answer(&mut c, &same_host_proof(machine, session_id, &nonce)), "/run/hip-remote-test.sock");
    assert_eq!(answer(&mut c, &same_host_proof(b"machine-b/boot-1", session_id, &nonce)), "");
    assert_eq!(answer(&mut c, &same_host_proof(machine, session_id + 1, &nonce)), "");
    assert_eq!(answer(&mut c, &same_host_proof(machine, session_id, &[0; 32])), "");
    assert_eq!(answer(&mut c, b""), "");
    // Still not trusted: anything but AUTHENTICATE is refused and the connection closed.
    let (status, _) = c.call(&Request::GetDeviceCount(wire::Empty {})).error();
    assert_eq!(status, Status::AUTH_REQUIRED);
    c.expect_closed();

    // A client that did not ask for the feature, and a worker without a same-host listener,
    // get nothing.
    let plain = start_worker_with(Some("tok"));
    for (w, features) in [(&worker, wire::features::FIRE_AND_FORGET), (&plain, wire::features::ALL)] {
        let mut c = SessionDriver::connect(w);
        let (session_id, nonce) = match c.call(&hello_with(features)).response() {
            Response::Hello(w) => {
                assert_eq!(w.features & wire::features::SHARED_MEMORY, 0);
                (w.session_id, w.auth_challenge.0.to_vec())
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(answer(&mut c, &same_host_proof(machine, session_id, &nonce)), "");
    }
}
