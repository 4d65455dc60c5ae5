//! Copies between workers at the protocol level (`docs/PROTOCOL.md`, "Copies between
//! workers"): two in-process workers over TCP, a raw client on each, and a hostile peer that
//! presents forged, replayed and mismatched grants to the source worker. Each refusal is
//! `AUTH_FAILED` at once, the connection closes, and the worker goes on serving.

mod common;

use common::*;
use hip_worker::transfer::{DialPolicy, TransferHub};
use proto_core::wire::{self, TRANSFER_SECRET_LEN};
use proto_core::{Bulk, Flags, Request, Response, Status, PROTOCOL_VERSION};
use std::time::{Duration, Instant};

/// A worker whose sessions may dial `dial` (`--dial-workers`).
fn transfer_worker(dial: &[String]) -> TestWorker {
    let mut config = config_with(None);
    config.session.transfers = Some(TransferHub::direct(DialPolicy::new(dial.iter().cloned()).expect("a dial policy")));
    TestWorker::tcp(config)
}

fn addr(worker: &TestWorker) -> String {
    worker.tcp.as_ref().expect("a TCP worker").local_addr().to_string()
}

/// A greeted client and its session id.
fn session(worker: &TestWorker) -> (SessionDriver, u64) {
    let mut c = SessionDriver::connect(worker);
    let reply = c.call(&hello(PROTOCOL_VERSION, PROTOCOL_VERSION, ""));
    let id = match reply.response() {
        Response::Hello(w) => w.session_id,
        other => panic!("HELLO answered with {other:?}"),
    };
    (c, id)
}

fn upload(c: &mut SessionDriver, data: &[u8]) -> u64 {
    let ptr = c.malloc(data.len() as u64);
    let r = c.call(&Request::MemcpyHtoD(wire::MemcpyHtoD { dst: ptr, stream: 0, sync: true, data: Bulk(data) }));
    assert!(matches!(r.response(), Response::MemcpyHtoD(_)));
    ptr
}

fn download(c: &mut SessionDriver, ptr: u64, len: usize) -> Vec<u8> {
    match c.call(&Request::MemcpyDtoH(wire::MemcpyDtoH { src: ptr, len: len as u64, stream: 0 })).response() {
        Response::MemcpyDtoH(d) => d.data.0.to_vec(),
        other => panic!("MemcpyDtoH answered with {other:?}"),
    }
}

fn offer(c: &mut SessionDriver, grant_id: u64, secret: &[u8], src: u64, len: u64) {
    let offer = wire::TransferOffer { grant_id, secret: proto_core::field::Bytes(secret), src, len, stream: 0 };
    c.send(&Request::TransferOffer(offer), Flags::NO_REPLY);
}

/// A hostile peer's fetch on a fresh connection to `worker`: the worker's answer, then the
/// connection must be closed.
fn fetch(worker: &TestWorker, session_id: u64, grant_id: u64, secret: &[u8], len: u64) -> Reply {
    let mut peer = SessionDriver::connect(worker);
    let req = wire::TransferFetch { session_id, grant_id, secret: proto_core::field::Bytes(secret), len };
    let reply = peer.call(&Request::TransferFetch(req));
    peer.expect_closed();
    reply
}

fn refused(reply: &Reply) -> String {
    let (status, message) = reply.error();
    assert_eq!(status, Status::AUTH_FAILED, "{message}");
    message
}

const SECRET: [u8; TRANSFER_SECRET_LEN] = [0x5c; TRANSFER_SECRET_LEN];

#[test]
fn forged_replayed_and_mismatched_grants_are_refused_and_the_worker_serves_on() {
    let source = transfer_worker(&[]);
    let (mut owner, session_id) = session(&source);
    let data: Vec<u8> = (0..50_000u32).map(|i| (i * 7) as u8).collect();
    let src = upload(&mut owner, &data);
    offer(&mut owner, 1, &SECRET, src, data.len() as u64);
    owner.ping(1);

    let started = Instant::now();
    let mut forged = SECRET;
    forged[0] ^= 0xff;
    let message = refused(&fetch(&source, session_id, 1, &forged, data.len() as u64));
    assert!(message.contains("transfer grant refused"), "{message}");
    refused(&fetch(&source, session_id, 1, &SECRET, data.len() as u64 - 1));
    refused(&fetch(&source, session_id, 1, &SECRET[..16], data.len() as u64));
    // The genuine fetch, once.
    let genuine = fetch(&source, session_id, 1, &SECRET, data.len() as u64);
    match genuine.response() {
        Response::TransferFetch(d) => assert!(d.data.0 == data.as_slice(), "fetched bytes differ"),
        other => panic!("TransferFetch answered with {other:?}"),
    }
    // Replayed: refused at once, not after waiting for an offer.
    refused(&fetch(&source, session_id, 1, &SECRET, data.len() as u64));
    // A forged secret for a live grant: refused, and the grant stays for its genuine fetch.
    offer(&mut owner, 2, &SECRET, src, 16);
    owner.ping(2);
    refused(&fetch(&source, session_id, 2, &forged, 16));
    assert!(started.elapsed() < Duration::from_secs(10), "refusals took {:?}", started.elapsed());

    // A fetch is a connection's first request only: after HELLO it is refused.
    let (mut greeted, _) = session(&source);
    let req = wire::TransferFetch { session_id, grant_id: 2, secret: proto_core::field::Bytes(&SECRET), len: 16 };
    let reply = greeted.call(&Request::TransferFetch(req));
    assert!(reply.is_error(), "a fetch after HELLO was answered");

    // An offer the session cannot make: memory it does not hold, a short secret.
    let r = owner.call(&Request::TransferOffer(wire::TransferOffer {
        grant_id: 3,
        secret: proto_core::field::Bytes(&SECRET),
        src: 0x10,
        len: 16,
        stream: 0,
    }));
    assert!(r.is_error());
    let r = owner.call(&Request::TransferOffer(wire::TransferOffer {
        grant_id: 4,
        secret: proto_core::field::Bytes(&SECRET[..8]),
        src,
        len: 16,
        stream: 0,
    }));
    assert_eq!(r.error().0, Status::INVALID_VALUE);

    // The worker serves on: the owner and a new client.
    owner.round_trip(3);
    let (mut other, _) = session(&source);
    other.round_trip(4);
    drop((owner, other, greeted));
    source.shutdown();
}

#[test]
fn a_pull_fetches_from_the_source_worker_and_refuses_a_replay() {
    let source = transfer_worker(&[]);
    let destination = transfer_worker(&[addr(&source)]);
    let (mut on_source, session_id) = session(&source);
    let (mut on_destination, _) = session(&destination);
    let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    let src = upload(&mut on_source, &data);
    let dst = on_destination.malloc(data.len() as u64);
    offer(&mut on_source, 7, &SECRET, src, data.len() as u64);
    on_source.ping(1);
    let source_addr = addr(&source);
    let pull = |grant_id| wire::TransferPull {
        grant_id,
        secret: proto_core::field::Bytes(&SECRET),
        source_session: session_id,
        source: proto_core::field::Str(&source_addr),
        dst,
        len: data.len() as u64,
        stream: 0,
        sync: true,
    };
    let r = on_destination.call(&Request::TransferPull(pull(7)));
    assert!(matches!(r.response(), Response::TransferPull(_)));
    assert!(download(&mut on_destination, dst, data.len()) == data, "pulled bytes differ");
    // The same grant again: the source refuses it, the destination reports it.
    let r = on_destination.call(&Request::TransferPull(pull(7)));
    let (status, message) = r.error();
    assert_eq!(status, Status::INVALID_VALUE, "{message}");
    assert!(message.contains("refused the transfer"), "{message}");
    // A source that may not be dialled by the source itself (no --dial-workers) refuses to pull.
    let r = on_source.call(&Request::TransferPull(pull(8)));
    let (status, message) = r.error();
    assert_eq!(status, Status::NOT_SUPPORTED, "{message}");
    assert!(message.contains("--dial-workers"), "{message}");
    // A source the destination's --dial-workers does not name: refused before any connect.
    let elsewhere = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let elsewhere_addr = elsewhere.local_addr().unwrap().to_string();
    let mut unlisted = pull(9);
    unlisted.source = proto_core::field::Str(&elsewhere_addr);
    let r = on_destination.call(&Request::TransferPull(unlisted));
    let (status, message) = r.error();
    assert_eq!(status, Status::NOT_SUPPORTED, "{message}");
    assert!(message.contains("--dial-workers") && message.contains(&source_addr), "{message}");
    elsewhere.set_nonblocking(true).unwrap();
    assert!(elsewhere.accept().is_err(), "the unlisted address was dialled");
    on_destination.round_trip(5);
    on_source.round_trip(6);
    drop((on_source, on_destination));
    source.shutdown();
    destination.shutdown();
}

/// A range of several answer pieces, more than the source's window: pulled whole (checked
/// against a pattern) synchronously, straight into device memory, and asynchronously on a
/// stream, through a buffer.
#[test]
fn a_pull_larger_than_the_window_arrives_whole_sync_and_on_a_stream() {
    let source = transfer_worker(&[]);
    let destination = transfer_worker(&[addr(&source)]);
    let (mut on_source, session_id) = session(&source);
    let (mut on_destination, _) = session(&destination);
    let chunk = wire::TRANSFER_CHUNK_BYTES as usize;
    let len = (hip_worker::transfer::TRANSFER_WINDOW_CHUNKS + 2) * chunk + 777;
    let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8 ^ (i / 251 % 256) as u8).collect();
    let src = upload(&mut on_source, &data);
    let source_addr = addr(&source);
    let stream = on_destination.stream_create(0);
    for (grant_id, sync, on_stream) in [(31, true, 0), (32, false, stream)] {
        let dst = on_destination.malloc(len as u64);
        offer(&mut on_source, grant_id, &SECRET, src, len as u64);
        let pull = wire::TransferPull {
            grant_id,
            secret: proto_core::field::Bytes(&SECRET),
            source_session: session_id,
            source: proto_core::field::Str(&source_addr),
            dst,
            len: len as u64,
            stream: on_stream,
            sync,
        };
        let r = on_destination.call(&Request::TransferPull(pull));
        assert!(matches!(r.response(), Response::TransferPull(_)), "pull {grant_id}");
        let r = on_destination.call(&Request::StreamSynchronize(wire::StreamRef { stream: on_stream }));
        assert!(!r.is_error(), "synchronize after pull {grant_id}");
        assert!(download(&mut on_destination, dst, len) == data, "pull {grant_id}: the bytes differ from the source's");
    }
    on_source.round_trip(1);
    drop((on_source, on_destination));
    source.shutdown();
    destination.shutdown();
}

/// A source that answers one piece, then its read's error: the pull fails with that error,
/// saying how far it got, and the destination worker serves on. Buffered for a stream, the
/// failed copy leaves its destination as it was.
#[test]
fn a_source_failing_midway_fails_the_pull_with_its_error() {
    let fake = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let fake_addr = fake.local_addr().unwrap().to_string();
    let destination = transfer_worker(std::slice::from_ref(&fake_addr));
    let (mut on_destination, _) = session(&destination);
    let chunk = wire::TRANSFER_CHUNK_BYTES as usize;
    let len = 3 * chunk;
    let source = std::thread::spawn(move || {
        use std::io::{Read, Write};
        for _ in 0..2 {
            let (mut conn, _) = fake.accept().unwrap();
            let mut head = [0u8; proto_core::header::HEADER_LEN];
            conn.read_exact(&mut head).unwrap();
            let header = proto_core::FrameHeader::parse(&head).unwrap();
            conn.read_exact(&mut vec![0u8; header.control_len as usize]).unwrap();
            let piece = vec![0x3cu8; chunk];
            let mut buf = vec![0u8; 4096];
            let frame = Response::TransferFetch(wire::TransferData { data: Bulk(&piece) }).encode_frame(&mut buf, header.request_id, 0).unwrap();
            let head_len = frame.head_len;
            conn.write_all(&buf[..head_len]).unwrap();
            conn.write_all(&piece).unwrap();
            let error = wire::ErrorReply { status: Status(999), message: "reading the source range failed at byte 4194304: injected".into() };
            let meta = proto_core::frame::FrameMeta {
                opcode: proto_core::Opcode::TransferFetch.raw(),
                flags: Flags::RESPONSE | Flags::ERROR,
                request_id: header.request_id,
                credits: 0,
                aux: 0,
            };
            let frame = proto_core::frame::encode_frame(&mut buf, meta, &error).unwrap();
            let head_len = frame.head_len;
            conn.write_all(&buf[..head_len]).unwrap();
        }
    });
    let before = vec![0x11u8; len];
    let stream = on_destination.stream_create(0);
    for (sync, on_stream) in [(true, 0), (false, stream)] {
        let dst = upload(&mut on_destination, &before);
        let pull = wire::TransferPull {
            grant_id: 1,
            secret: proto_core::field::Bytes(&SECRET),
            source_session: 1,
            source: proto_core::field::Str(&fake_addr),
            dst,
            len: len as u64,
            stream: on_stream,
            sync,
        };
        let r = on_destination.call(&Request::TransferPull(pull));
        let (status, message) = r.error();
        assert_eq!(status, Status(999), "{message}");
        assert!(message.contains(&format!("after {chunk} of {len} bytes")) && message.contains("injected"), "{message}");
        if !sync {
            let r = on_destination.call(&Request::StreamSynchronize(wire::StreamRef { stream: on_stream }));
            assert!(!r.is_error(), "the stream runs on");
            assert!(download(&mut on_destination, dst, len) == before, "a failed buffered copy wrote its destination");
        }
    }
    source.join().unwrap();
    on_destination.round_trip(2);
    drop(on_destination);
    destination.shutdown();
}

// ---- Workers whose sessions run in session processes (as GPU workers' do) ----

use hip_remote_tests::{TempDir, WorkerProcess, TEST_TOKEN};

/// How the workers below serve their sessions.
const DEDICATED: &str = "--allow-host-code";
const SHARED: &str = "--shared-process";

/// A host worker serving its sessions in session processes (`mode`), with a metrics endpoint,
/// that may dial `dial`.
fn process_worker(dir: &TempDir, name: &str, mode: &str, dial: Option<&str>) -> (WorkerProcess, String) {
    process_worker_with(dir, name, mode, dial, &[])
}

fn process_worker_with(dir: &TempDir, name: &str, mode: &str, dial: Option<&str>, env: &[(&str, String)]) -> (WorkerProcess, String) {
    let metrics = format!("127.0.0.1:{}", hip_remote_tests::closed_port());
    let mut args = vec!["--listen", "127.0.0.1:0", "--backend", "host", "--host-memory-mib", "96", mode, "--metrics", &metrics];
    if let Some(dial) = dial {
        args.extend(["--dial-workers", dial]);
    }
    let worker = WorkerProcess::start_exactly(&hip_remote_tests::artifacts().worker, &args, env, &dir.path().join(format!("{name}.log")));
    (worker, metrics)
}

fn tcp_driver(addr: &str) -> SessionDriver {
    let cfg = transport_tcp::TcpConfig { io_timeout: Some(Duration::from_secs(60)), ..transport_tcp::TcpConfig::default() };
    let (sink, source) = transport_tcp::connect(addr, &cfg).expect("connect");
    SessionDriver::over(Box::new(sink), Box::new(source))
}

/// An authenticated client of a worker process, and its session id.
fn process_session(worker: &WorkerProcess) -> (SessionDriver, u64) {
    authenticated(tcp_driver(worker.addr()))
}

/// HELLO and AUTHENTICATE on `c`: the client and its session id.
fn authenticated(mut c: SessionDriver) -> (SessionDriver, u64) {
    use proto_core::auth::{auth_response, AuthContext};
    let reply = c.call(&hello(PROTOCOL_VERSION, PROTOCOL_VERSION, ""));
    let (id, response) = match reply.response() {
        Response::Hello(w) => {
            let context = AuthContext {
                nonce: w.auth_challenge.0,
                session_id: w.session_id,
                client_name: "session.rs",
                version: w.version,
                features: w.features,
            };
            (w.session_id, auth_response(TEST_TOKEN.as_bytes(), &context))
        }
        other => panic!("HELLO answered with {other:?}"),
    };
    let reply = c.call(&Request::Authenticate(wire::Authenticate { response: response.as_slice().into() }));
    assert!(!reply.is_error(), "authentication failed: {:?}", reply.error());
    (c, id)
}

/// A hostile peer's fetch at `addr`: the answer, then the connection must be closed.
fn fetch_at(addr: &str, session_id: u64, grant_id: u64, secret: &[u8], len: u64) -> Reply {
    let mut peer = tcp_driver(addr);
    let reply = peer.call(&Request::TransferFetch(wire::TransferFetch { session_id, grant_id, secret: proto_core::field::Bytes(secret), len }));
    peer.expect_closed();
    reply
}

fn metric(addr: &str, name: &str) -> u64 {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(addr).expect("metrics endpoint");
    conn.write_all(b"GET /metrics HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").unwrap();
    let mut text = String::new();
    conn.read_to_string(&mut text).unwrap();
    let line = text.lines().find(|l| l.starts_with(name) && l[name.len()..].starts_with(' ')).unwrap_or_else(|| panic!("no {name} in:\n{text}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

/// `name` at `addr` once it reads `want` (a session process's notes reach its worker a moment
/// after the answer), or what it reads after a generous wait.
fn metric_settled(addr: &str, name: &str, want: u64) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = metric(addr, name);
        if got == want || Instant::now() >= deadline {
            return got;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The answer to request `id`, past the worker's heartbeats (request id 0) while it works.
fn answer_to(c: &mut SessionDriver, id: u64) -> Reply {
    loop {
        let reply = c.recv();
        if reply.header.request_id == id {
            return reply;
        }
        assert_eq!(reply.header.request_id, 0, "a frame answering another request: {:?}", reply.header);
    }
}

fn pull_of<'a>(grant_id: u64, session: u64, source: &'a str, dst: u64, len: u64) -> wire::TransferPull<'a> {
    wire::TransferPull {
        grant_id,
        secret: proto_core::field::Bytes(&SECRET),
        source_session: session,
        source: proto_core::field::Str(source),
        dst,
        len,
        stream: 0,
        sync: true,
    }
}

/// Sessions in session processes: the destination's process has the worker dial the source
/// (within its --dial-workers), the source worker hands the fetch to the source session's
/// process; forged grants, unknown sessions and unlisted sources get clear errors, and both
/// workers serve on.
/// `relay_destination`: the destination worker relays its sessions' frames (as TLS and RDMA
/// connections are), so its process's control channel is the session's link.
fn pull_between_session_processes(mode: &str, relay_destination: bool) {
    let dir = TempDir::new("transfer_processes");
    let (mut source, source_metrics) = process_worker(&dir, "source", mode, None);
    let relay = if relay_destination { vec![(hip_worker::server::RELAY_EVERY_SESSION_ENV, "1".to_string())] } else { Vec::new() };
    let (mut destination, destination_metrics) = process_worker_with(&dir, "destination", mode, Some(source.addr()), &relay);
    let (mut on_source, session_id) = process_session(&source);
    // Several answer pieces, handed or relayed to and from the session processes.
    let data: Vec<u8> = (0..2 * wire::TRANSFER_CHUNK_BYTES as u32 + 300_000).map(|i| (i % 253) as u8 ^ (i >> 16) as u8).collect();
    let len = data.len() as u64;
    let src = upload(&mut on_source, &data);
    offer(&mut on_source, 7, &SECRET, src, len);
    on_source.ping(1);

    // Forged: the source session's process refuses it; the grant stays for its genuine fetch.
    let started = Instant::now();
    let mut forged = SECRET;
    forged[3] ^= 0x40;
    let message = refused(&fetch_at(source.addr(), session_id, 7, &forged, len));
    assert!(message.contains("transfer grant refused"), "{message}");
    // A session the source worker does not serve: refused by the worker, at once.
    let message = refused(&fetch_at(source.addr(), session_id + 1000, 7, &SECRET, len));
    assert!(message.contains("transfer grant refused"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(10), "refusals took {:?}", started.elapsed());

    let (mut on_destination, _) = process_session(&destination);
    let dst = on_destination.malloc(len);
    let r = on_destination.call(&Request::TransferPull(pull_of(7, session_id, source.addr(), dst, len)));
    assert!(matches!(r.response(), Response::TransferPull(_)), "{:?}", r.error());
    assert!(download(&mut on_destination, dst, data.len()) == data, "pulled bytes differ");
    // The workers count what their processes moved.
    assert_eq!(metric_settled(&source_metrics, "hip_worker_transfer_sent_bytes_total", len), len);
    assert_eq!(metric_settled(&destination_metrics, "hip_worker_transfer_received_bytes_total", len), len);
    // A replay: the source's process refuses it, the destination reports so.
    let r = on_destination.call(&Request::TransferPull(pull_of(7, session_id, source.addr(), dst, len)));
    let (status, message) = r.error();
    assert_eq!(status, Status::INVALID_VALUE, "{message}");
    assert!(message.contains("refused the transfer"), "{message}");
    // A source the destination worker's --dial-workers does not name: the worker refuses to
    // dial for its session process.
    let elsewhere = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let elsewhere_addr = elsewhere.local_addr().unwrap().to_string();
    let r = on_destination.call(&Request::TransferPull(pull_of(8, session_id, &elsewhere_addr, dst, 16)));
    let (status, message) = r.error();
    assert_eq!(status, Status::NOT_SUPPORTED, "{message}");
    assert!(message.contains("--dial-workers") && message.contains(source.addr()), "{message}");
    elsewhere.set_nonblocking(true).unwrap();
    assert!(elsewhere.accept().is_err(), "the unlisted address was dialled");
    // The source worker may not dial at all: it says which flag would allow it.
    let r = on_source.call(&Request::TransferPull(pull_of(9, session_id, destination.addr(), src, 16)));
    let (status, message) = r.error();
    assert_eq!(status, Status::NOT_SUPPORTED, "{message}");
    assert!(message.contains("--dial-workers"), "{message}");

    // Both serve on: these sessions and new ones.
    on_destination.round_trip(5);
    on_source.round_trip(6);
    process_session(&source).0.round_trip(7);
    process_session(&destination).0.round_trip(8);
    source.assert_alive();
    destination.assert_alive();
}

#[test]
fn sessions_in_session_processes_pull_from_each_other_and_refuse_hostile_requests() {
    pull_between_session_processes(DEDICATED, false);
}

#[test]
fn sessions_of_shared_session_processes_pull_from_each_other_and_refuse_hostile_requests() {
    pull_between_session_processes(SHARED, false);
}

#[test]
fn relayed_sessions_in_session_processes_pull_alike() {
    pull_between_session_processes(DEDICATED, true);
    pull_between_session_processes(SHARED, true);
}

/// The source session's process dies while the destination waits for its fetch (the read
/// held behind seconds of work on the source stream): the pull fails with a clear error, and
/// both workers serve on.
#[test]
fn a_source_process_killed_mid_fetch_fails_the_pull_clearly() {
    let dir = TempDir::new("transfer_killed_source");
    let (source, _) = process_worker(&dir, "source", DEDICATED, None);
    let (destination, _) = process_worker(&dir, "destination", DEDICATED, Some(source.addr()));
    let (on_source, session_id) = process_session(&source);
    kill_source_process_mid_fetch(source, destination, on_source, session_id, &process_session);
}

/// The same over TLS: the source session is relayed by its worker, which relays the fetch
/// too; the destination's worker relays its process's fetch over TLS.
#[test]
fn a_relayed_tls_source_process_killed_mid_fetch_fails_the_pull_clearly() {
    let dir = TempDir::new("transfer_killed_tls_source");
    let pki = TestPki::new("transfer-killed-tls");
    let (source, _) = tls_worker(&dir, "source", &pki, DEDICATED, None);
    let (destination, _) = tls_worker(&dir, "destination", &pki, DEDICATED, Some((source.addr(), &pki.path("ca.pem"))));
    let (on_source, session_id) = tls_session(&source, &pki);
    kill_source_process_mid_fetch(source, destination, on_source, session_id, &|w| tls_session(w, &pki));
}

/// Holds the read of a grant behind 20 s of work on the source stream, has the destination
/// pull it, kills the source session's process: the pull fails within seconds naming the
/// source, and both workers serve on.
fn kill_source_process_mid_fetch(
    mut source: WorkerProcess,
    mut destination: WorkerProcess,
    mut on_source: SessionDriver,
    session_id: u64,
    new_session: &dyn Fn(&WorkerProcess) -> (SessionDriver, u64),
) {
    let data = vec![0x3cu8; 100_000];
    let src = upload(&mut on_source, &data);
    let busy = on_source.malloc(FLOOD_BYTES);
    let stream = on_source.stream_create(0);
    on_source.flood(busy, stream, Duration::from_secs(20));
    let offer = wire::TransferOffer { grant_id: 1, secret: proto_core::field::Bytes(&SECRET), src, len: data.len() as u64, stream };
    on_source.send(&Request::TransferOffer(offer), Flags::NO_REPLY);
    on_source.ping(1);

    let (mut on_destination, _) = new_session(&destination);
    let dst = on_destination.malloc(data.len() as u64);
    let started = Instant::now();
    let pull = on_destination.send(&Request::TransferPull(pull_of(1, session_id, source.addr(), dst, data.len() as u64)), Flags::empty());
    // The fetch reaches the source session's process and waits for the read; then it dies.
    std::thread::sleep(Duration::from_millis(500));
    let log = source.log_text();
    let pid: u32 = log
        .lines()
        .rev()
        .filter(|l| l.contains("session process started"))
        .filter_map(|l| l.split("pid=").nth(1)?.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
        .next()
        .unwrap_or_else(|| panic!("no session process in the source's log:\n{log}"));
    let killed = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status().expect("run kill");
    assert!(killed.success());
    let reply = answer_to(&mut on_destination, pull);
    let (status, message) = reply.error();
    eprintln!("the pull after the kill: {status:?} {message}");
    assert_ne!(status, Status(0), "{message}");
    assert!(message.contains(source.addr()), "the error names the source worker: {message}");
    assert!(started.elapsed() < Duration::from_secs(15), "the pull failed only after {:?}", started.elapsed());
    // Both serve on. (The destination's writer may have sent a heartbeat just after the
    // pull's answer: the next answer is looked for past it.)
    let ping = on_destination.send(&Request::Ping(wire::Ping { nonce: 3, payload: Default::default() }), Flags::empty());
    assert!(matches!(answer_to(&mut on_destination, ping).response(), Response::Ping(_)));
    new_session(&source).0.round_trip(4);
    drop(on_source);
    source.assert_alive();
    destination.assert_alive();
}

/// A fetch whose grant's read waits longer than the pre-authentication deadline (the source
/// stream busy) is not cut by it: the deadline stops reading further requests, and the fetch
/// is already in flight.
#[test]
fn a_fetch_waiting_for_a_slow_read_outlives_the_preauth_deadline() {
    let deadline = Duration::from_millis(400);
    let worker = |dial: &[String]| {
        let mut config = config_with(None);
        config.limits.preauth_deadline = deadline;
        config.session.transfers = Some(TransferHub::direct(DialPolicy::new(dial.iter().cloned()).expect("a dial policy")));
        TestWorker::tcp(config)
    };
    let source = worker(&[]);
    let destination = worker(&[addr(&source)]);
    let (mut on_source, session_id) = session(&source);
    let data: Vec<u8> = (0..70_000u32).map(|i| (i % 241) as u8).collect();
    let src = upload(&mut on_source, &data);
    let busy = on_source.malloc(FLOOD_BYTES);
    let stream = on_source.stream_create(0);
    on_source.flood(busy, stream, deadline * 4);
    let offer = wire::TransferOffer { grant_id: 1, secret: proto_core::field::Bytes(&SECRET), src, len: data.len() as u64, stream };
    on_source.send(&Request::TransferOffer(offer), Flags::NO_REPLY);
    on_source.ping(1);
    let (mut on_destination, _) = session(&destination);
    let dst = on_destination.malloc(data.len() as u64);
    let source_addr = addr(&source);
    let started = Instant::now();
    let pull = on_destination.send(&Request::TransferPull(pull_of(1, session_id, &source_addr, dst, data.len() as u64)), Flags::empty());
    let r = answer_to(&mut on_destination, pull);
    assert!(!r.is_error(), "{:?}", r.error());
    assert!(started.elapsed() > deadline, "the read did not outlast the deadline ({:?}): the test shows nothing", started.elapsed());
    assert!(download(&mut on_destination, dst, data.len()) == data, "pulled bytes differ");
    drop((on_source, on_destination));
    source.shutdown();
    destination.shutdown();
}

// ---- Workers reached over TLS ----

use hip_remote_tests::TestPki;

/// The worker's own process serves the sessions (no session processes).
const IN_WORKER: &str = "";

/// A host worker serving TLS with `pki`'s certificate (client certificates required), its
/// sessions served as `mode` says, with a metrics endpoint; it may dial `dial`, trusting the
/// CA `dial_ca` and showing `pki`'s client certificate.
fn tls_worker(dir: &TempDir, name: &str, pki: &TestPki, mode: &str, dial: Option<(&str, &std::path::Path)>) -> (WorkerProcess, String) {
    let metrics = format!("127.0.0.1:{}", hip_remote_tests::closed_port());
    let mut args: Vec<String> =
        ["--listen", "127.0.0.1:0", "--backend", "host", "--host-memory-mib", "96", "--metrics", &metrics].map(String::from).into();
    if !mode.is_empty() {
        args.push(mode.into());
    }
    args.extend(pki.worker_args(true));
    if let Some((dial, ca)) = dial {
        let (cert, key) = (pki.path("client.pem"), pki.path("client.key"));
        for (flag, value) in [("--dial-workers", dial.to_string()), ("--dial-workers-ca", ca.display().to_string())] {
            args.extend([flag.to_string(), value]);
        }
        args.extend(["--dial-workers-cert".into(), cert.display().to_string(), "--dial-workers-key".into(), key.display().to_string()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let worker = WorkerProcess::start_exactly(&hip_remote_tests::artifacts().worker, &args, &[], &dir.path().join(format!("{name}.log")));
    assert!(worker.addr().starts_with("tls://"), "not a TLS worker: {}", worker.addr());
    (worker, metrics)
}

/// A raw client of the TLS worker at `addr` (`tls://host:port`), showing `pki`'s client
/// certificate.
fn tls_driver(addr: &str, pki: &TestPki) -> SessionDriver {
    let (cert, key) = (pki.path("client.pem"), pki.path("client.key"));
    let tls = transport_tcp::tls::TlsClient::new(Some(&pki.path("ca.pem")), Some((&cert, &key)), None).expect("client TLS");
    let cfg = transport_tcp::TcpConfig { io_timeout: Some(Duration::from_secs(60)), ..transport_tcp::TcpConfig::default() };
    let (sink, source) = transport_tcp::tls::connect(addr.strip_prefix("tls://").unwrap_or(addr), &cfg, &tls).expect("TLS connect");
    SessionDriver::over(Box::new(sink), Box::new(source))
}

/// An authenticated TLS client of `worker` and its session id.
fn tls_session(worker: &WorkerProcess, pki: &TestPki) -> (SessionDriver, u64) {
    authenticated(tls_driver(worker.addr(), pki))
}

/// Copies between workers reached over TLS (`tls://` in --dial-workers, --dial-workers-ca):
/// the destination fetches over TLS, checking the source's certificate (and showing its own,
/// as the source requires client certificates); the source's session, relayed by its worker
/// when it runs in a session process, answers through the worker. A destination that does
/// not trust the source's certificate, a source named without its scheme, and forged grants
/// get clear errors; every worker serves on.
fn pull_over_tls(mode: &str) {
    let dir = TempDir::new("transfer_tls");
    let pki = TestPki::new("transfer-tls");
    let stranger = TestPki::new("transfer-tls-stranger");
    let (mut source, source_metrics) = tls_worker(&dir, "source", &pki, mode, None);
    let source_host = source.addr().strip_prefix("tls://").expect("a tls:// address").to_string();
    let dial = format!("tls://{source_host}");
    let (mut destination, destination_metrics) = tls_worker(&dir, "destination", &pki, mode, Some((&dial, &pki.path("ca.pem"))));
    // Trusts another CA: the source's certificate fails its check.
    let (mut doubter, _) = tls_worker(&dir, "doubter", &pki, mode, Some((&dial, &stranger.path("ca.pem"))));

    let (mut on_source, session_id) = tls_session(&source, &pki);
    // Several answer pieces: a relaying worker passes each on.
    let data: Vec<u8> = (0..2 * wire::TRANSFER_CHUNK_BYTES as u32 + 300_000).map(|i| (i * 13 % 251) as u8 ^ (i >> 16) as u8).collect();
    let len = data.len() as u64;
    let src = upload(&mut on_source, &data);
    offer(&mut on_source, 7, &SECRET, src, len);
    offer(&mut on_source, 8, &SECRET, src, len);
    on_source.ping(1);

    // Hostile fetches over TLS: a forged secret, a session the worker does not serve.
    let fetch_tls = |session: u64, grant: u64, secret: &[u8]| {
        let mut peer = tls_driver(source.addr(), &pki);
        let reply = peer.call(&Request::TransferFetch(wire::TransferFetch {
            session_id: session,
            grant_id: grant,
            secret: proto_core::field::Bytes(secret),
            len,
        }));
        peer.expect_closed();
        reply
    };
    let mut forged = SECRET;
    forged[9] ^= 0x11;
    let message = refused(&fetch_tls(session_id, 7, &forged));
    assert!(message.contains("transfer grant refused"), "{message}");
    if mode != IN_WORKER {
        // The worker serves no such session in a process: refused at once (a worker's own
        // sessions' fetch waits for its offer instead, as over TCP).
        let message = refused(&fetch_tls(session_id + 1000, 7, &SECRET));
        assert!(message.contains("transfer grant refused"), "{message}");
    }

    // The source's certificate is not trusted: refused before any grant is presented.
    let (mut on_doubter, _) = tls_session(&doubter, &pki);
    let doubter_dst = on_doubter.malloc(len);
    let r = on_doubter.call(&Request::TransferPull(pull_of(8, session_id, source.addr(), doubter_dst, len)));
    let (status, message) = r.error();
    assert_eq!(status, Status::NOT_SUPPORTED, "{message}");
    assert!(message.contains("TLS handshake") && message.contains("--dial-workers-ca") && message.contains(source.addr()), "{message}");

    // The genuine pulls, byte for byte: grant 8 is still there (the doubter never presented it).
    let (mut on_destination, _) = tls_session(&destination, &pki);
    let mut dst = 0;
    for grant in [7, 8] {
        dst = on_destination.malloc(len);
        let r = on_destination.call(&Request::TransferPull(pull_of(grant, session_id, source.addr(), dst, len)));
        assert!(matches!(r.response(), Response::TransferPull(_)), "{:?}", r.error());
        assert!(download(&mut on_destination, dst, data.len()) == data, "pulled bytes of grant {grant} differ");
    }
    assert_eq!(metric_settled(&source_metrics, "hip_worker_transfer_sent_bytes_total", 2 * len), 2 * len);
    assert_eq!(metric_settled(&destination_metrics, "hip_worker_transfer_received_bytes_total", 2 * len), 2 * len);
    // A replay: the source refuses it.
    let r = on_destination.call(&Request::TransferPull(pull_of(7, session_id, source.addr(), dst, len)));
    let (status, message) = r.error();
    assert_eq!(status, Status::INVALID_VALUE, "{message}");
    assert!(message.contains("refused the transfer"), "{message}");
    // The source named as a plain TCP address: its --dial-workers entry is tls://, so refused.
    let r = on_destination.call(&Request::TransferPull(pull_of(9, session_id, &source_host, dst, 16)));
    let (status, message) = r.error();
    assert_eq!(status, Status::NOT_SUPPORTED, "{message}");
    assert!(message.contains("--dial-workers") && message.contains(&dial), "{message}");

    // All serve on: these sessions and new ones.
    on_destination.round_trip(5);
    on_source.round_trip(6);
    on_doubter.round_trip(7);
    tls_session(&source, &pki).0.round_trip(8);
    tls_session(&destination, &pki).0.round_trip(9);
    source.assert_alive();
    destination.assert_alive();
    doubter.assert_alive();
}

#[test]
fn workers_reached_over_tls_copy_between_them() {
    pull_over_tls(IN_WORKER);
}

#[test]
fn relayed_tls_sessions_in_session_processes_copy_between_workers() {
    pull_over_tls(DEDICATED);
}

#[test]
fn relayed_tls_sessions_of_shared_session_processes_copy_between_workers() {
    pull_over_tls(SHARED);
}
