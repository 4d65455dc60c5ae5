//! TLS between client and worker: certificates made at test time ([`TestPki`]), an
//! in-process TLS worker spoken to through `transport_tcp::tls`, and the C programs through
//! the real client library over `tls://`.

mod common;

use common::{authenticate, SessionDriver};
use hip_remote_tests::{assert_lost_worker_cleanly, client_command, kill_worker_midcopy, run_with_timeout, Sandbox, TestPki};
use hip_worker::auth::TokenStore;
use hip_worker::backend::{HostBackend, HostConfig};
use hip_worker::config::ConnectionLimits;
use hip_worker::session::SessionConfig;
use hip_worker::tls::{server_config, TlsWorker};
use hip_worker::{Worker, WorkerConfig};
use proto_core::wire;
use proto_core::{Flags, Request, Response, Status};
use std::sync::Arc;
use std::time::Duration;
use transport_tcp::tls::TlsClient;
use transport_tcp::TcpConfig;

const TOKEN: &str = "tls-test-token";

fn worker_config() -> WorkerConfig {
    let tokens = Some(Arc::new(TokenStore::new(Some(TOKEN), None).expect("token store")));
    WorkerConfig {
        session: SessionConfig { worker_name: "tls-test worker".into(), tokens, ..Default::default() },
        tcp: TcpConfig { io_timeout: Some(Duration::from_secs(30)), ..TcpConfig::default() },
        ..WorkerConfig::default()
    }
}

fn backend() -> Arc<HostBackend> {
    Arc::new(HostBackend::new(HostConfig { devices: 1, memory_per_device: 256 << 20, allow_host_code: false, ..HostConfig::default() }))
}

fn tls_worker(pki: &TestPki, client_ca: bool) -> TlsWorker {
    let ca = client_ca.then(|| pki.path("ca.pem"));
    let tls = server_config(&pki.path("server.pem"), &pki.path("server.key"), ca.as_deref()).expect("server config");
    TlsWorker::start_tls("127.0.0.1:0", backend(), worker_config(), tls).expect("start TLS worker")
}

fn client_tls(pki: &TestPki, with_cert: bool) -> TlsClient {
    let (cert, key) = (pki.path("client.pem"), pki.path("client.key"));
    TlsClient::new(Some(&pki.path("ca.pem")), with_cert.then_some((cert.as_path(), key.as_path())), None).expect("client config")
}

fn client_tcp() -> TcpConfig {
    TcpConfig { io_timeout: Some(Duration::from_secs(20)), ..TcpConfig::default() }
}

/// A client session over TLS to `worker` (the real client core; `common::SessionDriver`).
fn tls_client(worker: &TlsWorker, tls: &TlsClient) -> SessionDriver {
    let (sink, source) = transport_tcp::tls::connect(&worker.local_addr().to_string(), &client_tcp(), tls).expect("TLS connect");
    SessionDriver::over(Box::new(sink), Box::new(source))
}

/// HELLO, then AUTHENTICATE with the token's HMAC over the WELCOME.
fn greet(c: &mut SessionDriver) {
    let reply = authenticate(c, TOKEN.as_bytes());
    assert!(matches!(reply.response(), Response::Authenticate(_)));
}

fn ping_request() -> Request<'static> {
    Request::Ping(wire::Ping { nonce: 1, payload: Default::default() })
}

#[test]
fn a_tls_client_authenticates_copies_megabytes_both_ways_and_makes_many_small_calls() {
    let pki = TestPki::new("tls-serve");
    let worker = tls_worker(&pki, false);
    let mut c = tls_client(&worker, &client_tls(&pki, false));
    greet(&mut c);
    for (len, seed) in [(1, 1), (100_000, 2), (6 << 20, 3), ((8 << 20) + 13, 4)] {
        c.round_trip_of(len, seed);
    }
    for n in 0..3000 {
        c.ping(n);
    }
    // Fire-and-forget memsets coalesce in the sink; the next call sends them first, in order.
    let Response::Malloc(a) = c.call(&Request::Malloc(wire::Malloc { device: 0, size: 500 * 64, flags: 0 })).response() else { panic!("Malloc") };
    for n in 0..500u64 {
        let memset = wire::Memset { dst: a.ptr + n * 64, value: n as u32 % 251, width: wire::MemsetWidth::Byte, count: 64, stream: 0, sync: false };
        c.post(&Request::Memset(memset));
    }
    match c.call(&Request::MemcpyDtoH(wire::MemcpyDtoH { src: a.ptr, len: 500 * 64, stream: 0 })).response() {
        Response::MemcpyDtoH(d) => assert!(d.data.0.chunks(64).enumerate().all(|(n, chunk)| chunk.iter().all(|&b| b as usize == n % 251))),
        other => panic!("MemcpyDtoH answered with {other:?}"),
    }
    c.call(&Request::Goodbye(wire::Empty {}));
    worker.shutdown();
}

#[test]
fn a_worker_certificate_from_another_ca_is_refused_and_the_worker_serves_others() {
    let (pki, other) = (TestPki::new("tls-ca"), TestPki::new("tls-other-ca"));
    let worker = tls_worker(&pki, false);
    let err = transport_tcp::tls::connect(&worker.local_addr().to_string(), &client_tcp(), &client_tls(&other, false)).expect_err("untrusted");
    assert!(err.to_string().contains("TLS handshake") && err.to_string().contains("invalid peer certificate"), "{err}");
    let mut c = tls_client(&worker, &client_tls(&pki, false));
    greet(&mut c);
    c.round_trip_of(4096, 5);
    worker.shutdown();
}

#[test]
fn a_plain_client_is_told_to_use_tls_and_the_worker_serves_others() {
    let pki = TestPki::new("tls-plain");
    let worker = tls_worker(&pki, false);
    let mut tls_client = tls_client(&worker, &client_tls(&pki, false));
    greet(&mut tls_client);
    let (sink, source) = transport_tcp::connect(&worker.local_addr().to_string(), &client_tcp()).expect("plain connect");
    let mut plain = SessionDriver::over(Box::new(sink), Box::new(source));
    plain.send(&ping_request(), Flags::empty());
    let refusal = plain.try_recv().expect("an error frame in clear");
    let (status, message) = refusal.error();
    assert_eq!(status, Status::AUTH_REQUIRED);
    assert!(message.contains("tls://"), "{message}");
    tls_client.round_trip_of(1 << 20, 6);
    worker.shutdown();
}

#[test]
fn a_tls_client_over_the_connection_limit_is_told_why_inside_tls() {
    let pki = TestPki::new("tls-limit");
    let ca = None::<&std::path::Path>;
    let tls = server_config(&pki.path("server.pem"), &pki.path("server.key"), ca).expect("server config");
    let mut config = worker_config();
    config.limits = ConnectionLimits { max_connections: 1, ..config.limits };
    let worker = TlsWorker::start_tls("127.0.0.1:0", backend(), config, tls).expect("start TLS worker");
    let mut first = tls_client(&worker, &client_tls(&pki, false));
    greet(&mut first);
    let mut refused = tls_client(&worker, &client_tls(&pki, false));
    refused.send(&ping_request(), Flags::empty());
    let refusal = refused.try_recv().expect("an error frame inside TLS");
    assert_eq!(refusal.header.request_id, 0, "a connection-level error");
    let (status, message) = refusal.error();
    assert_eq!(status, Status::TOO_MANY_CONNECTIONS);
    assert!(message.contains("most connections"), "{message}");
    first.round_trip_of(1 << 16, 3);
    worker.shutdown();
}

#[test]
fn a_tls_client_to_a_plain_worker_fails_cleanly() {
    let pki = TestPki::new("tls-to-plain");
    let worker = Worker::start("127.0.0.1:0", backend(), worker_config()).expect("plain worker");
    let err = transport_tcp::tls::connect(&worker.local_addr().to_string(), &client_tcp(), &client_tls(&pki, false)).expect_err("not TLS");
    assert!(err.to_string().contains("TLS handshake"), "{err}");
    worker.shutdown();
}

#[test]
fn a_required_client_certificate_must_be_shown() {
    let pki = TestPki::new("tls-mtls");
    let worker = tls_worker(&pki, true);
    // TLS 1.3: the client's handshake ends before the worker checks it, so the refusal comes
    // at the connection's first read, or already at connect.
    match transport_tcp::tls::connect(&worker.local_addr().to_string(), &client_tcp(), &client_tls(&pki, false)) {
        Err(e) => assert!(e.to_string().contains("TLS handshake"), "{e}"),
        Ok((sink, source)) => {
            let mut c = SessionDriver::over(Box::new(sink), Box::new(source));
            c.send(&ping_request(), Flags::empty());
            let err = c.try_recv().expect_err("no reply without a client certificate");
            assert!(err.to_string().contains("CertificateRequired") || err.to_string().contains("certificate"), "{err}");
        }
    }
    let mut c = tls_client(&worker, &client_tls(&pki, true));
    greet(&mut c);
    c.round_trip_of(1 << 20, 7);
    worker.shutdown();
}

/// A TLS worker with a short pre-authentication deadline and at most `max_connections`.
fn tls_worker_with_deadline(pki: &TestPki, deadline: Duration, max_connections: usize) -> TlsWorker {
    let tls = server_config(&pki.path("server.pem"), &pki.path("server.key"), None).expect("server config");
    let mut config = worker_config();
    config.limits = ConnectionLimits { max_connections, preauth_deadline: deadline, ..config.limits };
    TlsWorker::start_tls("127.0.0.1:0", backend(), config, tls).expect("start TLS worker")
}

/// A real ClientHello's bytes (what a TLS client sends first).
fn client_hello(pki: &TestPki) -> Vec<u8> {
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("server name");
    let mut conn = rustls::ClientConnection::new(client_tls(pki, false).config, name).expect("client connection");
    let mut hello = Vec::new();
    while conn.wants_write() {
        conn.write_tls(&mut hello).expect("ClientHello");
    }
    hello
}

/// A peer that sends `hello` one byte every `pace` (not waiting for an answer) and notes when
/// the worker closed the connection.
struct Slowloris {
    closed_after: std::sync::mpsc::Receiver<Duration>,
}

impl Slowloris {
    fn start(worker: &TlsWorker, hello: &[u8], pace: Duration) -> Self {
        use std::io::{Read, Write};
        let stream = std::net::TcpStream::connect(worker.local_addr()).expect("connect");
        let start = std::time::Instant::now();
        let mut writer = stream.try_clone().expect("clone");
        let hello = hello.to_vec();
        std::thread::spawn(move || {
            for byte in hello {
                if writer.write_all(&[byte]).is_err() {
                    break;
                }
                std::thread::sleep(pace);
            }
        });
        let (tx, closed_after) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = stream;
            let mut scratch = [0u8; 4096];
            // The worker answers nothing before the hello is whole: the first read that ends is
            // the close (end of stream, or a reset).
            while let Ok(n) = reader.read(&mut scratch) {
                if n == 0 {
                    break;
                }
            }
            let _ = tx.send(start.elapsed());
        });
        Self { closed_after }
    }

    /// When the worker closed the connection (waiting up to `limit`): `None` if it kept it.
    fn closed_within(&self, limit: Duration) -> Option<Duration> {
        self.closed_after.recv_timeout(limit).ok()
    }
}

/// A TLS connection that says nothing is closed at the pre-authentication deadline (it was
/// twice that: once waiting for its first bytes, once more for the handshake).
#[test]
fn a_silent_tls_connection_is_closed_at_the_preauth_deadline() {
    let deadline = Duration::from_millis(1000);
    let pki = TestPki::new("tls-silent");
    let worker = tls_worker_with_deadline(&pki, deadline, 16);
    let silent = Slowloris::start(&worker, &[], deadline);
    let closed = silent.closed_within(deadline * 10).expect("the silent connection was never closed");
    assert!(closed >= deadline * 3 / 4, "closed after {closed:?}, before the deadline of {deadline:?}");
    assert!(closed < deadline * 7 / 4, "closed after {closed:?}: the deadline is {deadline:?}");
    worker.shutdown();
}

/// A ClientHello sent a byte every 200 ms is closed at the deadline: the deadline is for the
/// whole handshake, not for each read.
#[test]
fn a_slowloris_client_hello_is_closed_at_the_preauth_deadline() {
    let deadline = Duration::from_millis(800);
    let pki = TestPki::new("tls-slowloris");
    let worker = tls_worker_with_deadline(&pki, deadline, 16);
    let hello = client_hello(&pki);
    let pace = Duration::from_millis(200);
    assert!(pace * hello.len() as u32 > deadline * 10, "the hello ({} bytes) must outlast the test's bound", hello.len());
    let slow = Slowloris::start(&worker, &hello, pace);
    let closed = slow.closed_within(deadline * 5).expect("the slowloris connection was kept past five deadlines");
    assert!(closed >= deadline * 3 / 4, "closed after {closed:?}, before the deadline of {deadline:?}");
    worker.shutdown();
}

/// With `--max-connections 2`, two slowloris handshakes hold both slots only until the
/// deadline: then a real TLS client gets in.
#[test]
fn slowloris_handshakes_do_not_keep_tls_clients_out_past_the_deadline() {
    // Long enough that the refused client below is answered well before it.
    let deadline = Duration::from_millis(1500);
    let pki = TestPki::new("tls-lockout");
    let worker = tls_worker_with_deadline(&pki, deadline, 2);
    let hello = client_hello(&pki);
    let pace = Duration::from_millis(200);
    let attackers: Vec<Slowloris> = (0..2).map(|_| Slowloris::start(&worker, &hello, pace)).collect();
    // While they hold both slots, a real client is refused (inside TLS, saying why).
    std::thread::sleep(deadline / 5);
    let mut refused = tls_client(&worker, &client_tls(&pki, false));
    refused.send(&ping_request(), Flags::empty());
    let (status, message) = refused.try_recv().expect("an error frame inside TLS").error();
    assert_eq!(status, Status::TOO_MANY_CONNECTIONS, "{message}");
    for attacker in &attackers {
        attacker.closed_within(deadline * 5).expect("a slowloris connection was kept past five deadlines");
    }
    let mut client = tls_client(&worker, &client_tls(&pki, false));
    greet(&mut client);
    client.ping(7);
    worker.shutdown();
}

/// The C programs through the real client library over `tls://`.
#[test]
fn c_programs_run_over_tls() {
    let pki = TestPki::new("tls-c");
    let sandbox = Sandbox::new("tls_c_programs");
    let mut worker = sandbox.start_worker_args(&pki.worker_args(true));
    assert!(worker.addr().starts_with("tls://"), "{}", worker.addr());
    for name in ["memory", "streams_events"] {
        let exe = sandbox.compile(name);
        let mut cmd = worker.command(&exe);
        cmd.env("HIP_REMOTE_TLS_CA", pki.path("ca.pem"))
            .env("HIP_REMOTE_TLS_CERT", pki.path("client.pem"))
            .env("HIP_REMOTE_TLS_KEY", pki.path("client.key"));
        let out = run_with_timeout(cmd, hip_remote_tests::RUN_TIMEOUT);
        out.assert_success();
        assert!(out.stdout.contains(&format!("PASS {name}")), "no PASS line: {}", out.report());
    }
    worker.assert_alive();
    // TLS state cannot move to a session process: the worker relays these connections.
    if !hip_remote_tests::chain_requested() {
        let log = worker.log_text();
        assert!(log.contains("the connection is relayed") && !log.contains("the connection is handed over"), "{log}");
    }
}

/// Striped copies over TLS: the stripes connect with the client's TLS settings and carry
/// `stripes.c`'s copies (sessions in the worker's process, which grants stripes).
#[test]
fn striped_copies_run_over_tls() {
    let pki = TestPki::new("tls-stripes");
    let sandbox = Sandbox::new("tls_stripes");
    let mut worker = sandbox.start_worker_in_one_process_args(&pki.worker_args(true));
    assert!(worker.addr().starts_with("tls://"), "{}", worker.addr());
    let exe = sandbox.compile("stripes");
    let mut cmd = worker.command(&exe);
    cmd.env("HIP_REMOTE_STRIPES", "3")
        .env("HIP_REMOTE_TLS_CA", pki.path("ca.pem"))
        .env("HIP_REMOTE_TLS_CERT", pki.path("client.pem"))
        .env("HIP_REMOTE_TLS_KEY", pki.path("client.key"));
    let out = run_with_timeout(cmd, hip_remote_tests::RUN_TIMEOUT);
    out.assert_success();
    assert!(out.stdout.contains("PASS stripes"), "no PASS line: {}", out.report());
    worker.assert_alive();
    assert_eq!(worker.log_text().matches("stripe joined").count(), 3, "three stripes joined over TLS");
}

/// A TLS worker SIGKILLed in the middle of a striped 256 MiB upload: the copy fails with
/// hipErrorNotInitialized and the application lives on, SIGPIPE at its default disposition
/// (rustls' writes to the dead worker raise no signal).
#[test]
fn a_tls_worker_killed_midcopy_fails_the_copy_not_the_application() {
    let pki = TestPki::new("tls-killed");
    let sandbox = Sandbox::new("tls_worker_dies");
    let exe = sandbox.compile("worker_dies_midcopy");
    let mut worker = sandbox.start_worker_in_one_process_args(&pki.worker_args(false));
    let mut cmd = worker.command(&exe);
    cmd.env("HIP_REMOTE_STRIPES", "2").env("HIP_REMOTE_TLS_CA", pki.path("ca.pem"));
    let out = kill_worker_midcopy(&mut worker, cmd);
    assert_lost_worker_cleanly(&out);
}

/// A client library that does not trust the worker fails every call with
/// hipErrorNotInitialized, saying why on stderr in one line.
#[test]
fn an_untrusted_worker_fails_calls_with_the_reason() {
    let (pki, other) = (TestPki::new("tls-lib"), TestPki::new("tls-lib-other"));
    let sandbox = Sandbox::new("tls_untrusted");
    let mut worker = sandbox.start_worker_args(&pki.worker_args(false));
    let exe = sandbox.compile("worker_down");
    let mut cmd = client_command(&exe, worker.addr());
    cmd.env_remove("HIP_REMOTE_DEBUG").env("HIP_REMOTE_TLS_CA", other.path("ca.pem"));
    let out = run_with_timeout(cmd, Duration::from_secs(60));
    out.assert_success();
    let reasons: Vec<&str> = out.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(reasons.len(), 1, "one line of explanation: {}", out.report());
    assert!(reasons[0].contains("TLS handshake") && reasons[0].contains("invalid peer certificate"), "{}", reasons[0]);
    // A plain client library is told to use TLS.
    let mut cmd = client_command(&exe, worker.addr().trim_start_matches("tls://"));
    cmd.env_remove("HIP_REMOTE_DEBUG");
    let out = run_with_timeout(cmd, Duration::from_secs(60));
    out.assert_success();
    assert!(out.stderr.contains("tls://"), "the refusal should say to use TLS: {}", out.report());
    worker.assert_alive();
    assert!(worker.log_text().contains("TLS handshake failed"), "the worker should log the refused handshake: {}", worker.log_text());
}
