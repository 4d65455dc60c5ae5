//! The operator's endpoint: a TCP worker with `/metrics` and `/healthz` (as `hip-worker
//! --metrics` starts them), scraped over HTTP while client sessions work.

mod common;

use common::{authenticate, SessionDriver};
use hip_worker::auth::TokenStore;
use hip_worker::backend::{HostBackend, HostConfig};
use hip_worker::config::ConnectionLimits;
use hip_worker::http::{MetricsServer, MAX_REQUEST_BYTES};
use hip_worker::session::SessionConfig;
use hip_worker::{Worker, WorkerConfig};
use proto_core::wire;
use proto_core::{Bulk, Request, Response, Status};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;
use transport_tcp::TcpConfig;

const DEVICE_BYTES: u64 = 256 << 20;

struct Operated {
    worker: Worker,
    metrics: MetricsServer,
}

fn start(auth_token: Option<&str>) -> Operated {
    let backend =
        Arc::new(HostBackend::new(HostConfig { devices: 2, memory_per_device: DEVICE_BYTES, allow_host_code: true, ..HostConfig::default() }));
    let config = WorkerConfig {
        session: SessionConfig {
            worker_name: "operator-test".into(),
            tokens: auth_token.map(|t| Arc::new(TokenStore::new(Some(t), None).expect("token store"))),
            ..Default::default()
        },
        tcp: TcpConfig { io_timeout: Some(Duration::from_secs(30)), ..TcpConfig::default() },
        limits: ConnectionLimits::default(),
        ..Default::default()
    };
    let metrics = MetricsServer::start("127.0.0.1:0".parse().unwrap(), backend.clone(), config.session.metrics.clone()).expect("metrics endpoint");
    let worker = Worker::start("127.0.0.1:0", backend, config).expect("worker");
    Operated { worker, metrics }
}

/// One HTTP exchange: sends `request` as is, returns the status code and the body.
fn http(addr: SocketAddr, request: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).expect("connect to the metrics endpoint");
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    stream.write_all(request).expect("send request");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read response");
    let (head, body) = response.split_once("\r\n\r\n").expect("a response head");
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status code");
    let length: usize = head.lines().find_map(|l| l.strip_prefix("Content-Length: ")).and_then(|v| v.parse().ok()).expect("Content-Length");
    assert_eq!(body.len(), length, "body length");
    (status, body.to_owned())
}

fn scrape(addr: SocketAddr) -> String {
    let (status, body) = http(addr, b"GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n");
    assert_eq!(status, 200, "{body}");
    body
}

/// The value of the series `series` (name and labels exactly as rendered).
fn value(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series).and_then(|rest| rest.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no series {series} in:\n{text}"))
        .parse()
        .expect("a number")
}

/// A client session over TCP to `addr` (the real client core; `common::SessionDriver`).
fn connect(addr: &str) -> SessionDriver {
    let cfg = TcpConfig { io_timeout: Some(Duration::from_secs(20)), ..TcpConfig::default() };
    let (sink, source) = transport_tcp::connect(addr, &cfg).expect("connect");
    SessionDriver::over(Box::new(sink), Box::new(source))
}

/// HELLO presenting `token` (empty: none); whether the worker welcomed it.
fn hello(c: &mut SessionDriver, token: &str) -> Result<(), Status> {
    let reply = c.call(&common::hello(proto_core::header::MIN_PROTOCOL_VERSION, proto_core::PROTOCOL_VERSION, token));
    if reply.is_error() {
        return Err(reply.error().0);
    }
    assert!(matches!(reply.response(), Response::Hello(_)));
    Ok(())
}

/// `Ok` for a success reply, the status of an error reply.
fn outcome(reply: common::Reply) -> Result<(), Status> {
    if reply.is_error() {
        Err(reply.error().0)
    } else {
        Ok(())
    }
}

fn malloc(c: &mut SessionDriver, device: u32, size: u64) -> u64 {
    match c.call(&Request::Malloc(wire::Malloc { device, size, flags: 0 })).response() {
        Response::Malloc(a) => a.ptr,
        other => panic!("{other:?}"),
    }
}

#[test]
fn metrics_move_while_a_client_works() {
    let op = start(None);
    let addr = op.metrics.local_addr();
    let before = scrape(addr);
    assert_eq!(value(&before, "hip_worker_sessions_open"), 0.0);
    assert_eq!(value(&before, "hip_worker_device_memory_total_bytes{device=\"1\"}"), DEVICE_BYTES as f64);
    assert_eq!(value(&before, "hip_worker_device_memory_used_bytes{device=\"1\"}"), 0.0);
    assert!(before.contains("hip_worker_device_info{device=\"0\",name=\""), "{before}");

    let mut client = connect(&op.worker.local_addr().to_string());
    hello(&mut client, "").expect("hello");
    let ptr = malloc(&mut client, 1, 8 << 20);
    let data = vec![7u8; 1 << 20];
    for _ in 0..10 {
        outcome(client.call(&Request::MemcpyHtoD(wire::MemcpyHtoD { dst: ptr, stream: 0, sync: true, data: Bulk(&data) }))).expect("copy");
    }
    // A pointer the session never handed out: an error in the memory family.
    assert_eq!(outcome(client.call(&Request::Free(wire::Free { ptr: 0xdead_0000 }))), Err(Status::INVALID_VALUE));

    let during = scrape(addr);
    assert_eq!(value(&during, "hip_worker_sessions_open"), 1.0, "{during}");
    assert_eq!(value(&during, "hip_worker_device_memory_used_bytes{device=\"1\"}"), (8u64 << 20) as f64);
    assert_eq!(value(&during, "hip_worker_calls_total{family=\"session\"}"), 1.0);
    // Malloc, ten copies, the bad free.
    assert_eq!(value(&during, "hip_worker_calls_total{family=\"memory\"}"), 12.0);
    assert_eq!(value(&during, "hip_worker_call_errors_total{family=\"memory\"}"), 1.0);
    assert_eq!(value(&during, "hip_worker_call_duration_seconds_count{family=\"memory\"}"), 12.0);
    assert_eq!(value(&during, "hip_worker_call_duration_seconds_bucket{family=\"memory\",le=\"+Inf\"}"), 12.0);
    assert!(value(&during, "hip_worker_call_duration_seconds_sum{family=\"memory\"}") > 0.0);
    assert!(value(&during, "hip_worker_received_bytes_total") >= (10u64 << 20) as f64, "{during}");
    assert!(value(&during, "hip_worker_sent_bytes_total") > 0.0);

    outcome(client.call(&Request::Free(wire::Free { ptr }))).expect("free");
    drop(client);
    // The session ends (and frees) once the worker sees the close.
    let mut after = scrape(addr);
    for _ in 0..200 {
        if value(&after, "hip_worker_sessions_open") == 0.0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
        after = scrape(addr);
    }
    assert_eq!(value(&after, "hip_worker_sessions_open"), 0.0);
    assert_eq!(value(&after, "hip_worker_sessions_total"), 1.0);
    assert_eq!(value(&after, "hip_worker_device_memory_used_bytes{device=\"1\"}"), 0.0);
}

#[test]
fn refused_logins_are_counted_by_reason() {
    let op = start(Some("secret"));
    let addr = op.worker.local_addr().to_string();
    let mut wrong = connect(&addr);
    assert_eq!(hello(&mut wrong, "guess"), Err(Status::AUTH_FAILED));
    let mut impatient = connect(&addr);
    assert_eq!(outcome(impatient.call(&Request::GetDeviceCount(wire::Empty {}))), Err(Status::HELLO_REQUIRED));
    let mut good = connect(&addr);
    outcome(authenticate(&mut good, b"secret")).expect("the right token");
    let text = scrape(op.metrics.local_addr());
    assert_eq!(value(&text, "hip_worker_refused_total{reason=\"authentication\"}"), 1.0, "{text}");
    assert_eq!(value(&text, "hip_worker_refused_total{reason=\"handshake\"}"), 1.0, "{text}");
    assert_eq!(value(&text, "hip_worker_refused_total{reason=\"connection_limit\"}"), 0.0, "{text}");
}

#[test]
fn the_endpoint_refuses_what_it_does_not_serve() {
    let op = start(None);
    let addr = op.metrics.local_addr();
    assert_eq!(http(addr, b"GET /healthz HTTP/1.1\r\n\r\n"), (200, "ok\n".into()));
    assert_eq!(http(addr, b"GET /nothing HTTP/1.1\r\n\r\n").0, 404);
    assert_eq!(http(addr, b"POST /metrics HTTP/1.1\r\n\r\n").0, 405);
    // A malformed request line (a control byte in the target) and a head of more header lines
    // than a scraper sends are refused as such (httparse), not routed.
    assert_eq!(http(addr, b"GET /metrics\x01 HTTP/1.1\r\n\r\n").0, 400);
    let many: String = (0..100).map(|i| format!("X-{i}: y\r\n")).collect();
    assert_eq!(http(addr, format!("GET /metrics HTTP/1.1\r\n{many}\r\n").as_bytes()).0, 431);
    // A head that never ends within the bound is refused, not buffered.
    let mut huge = b"GET /metrics HTTP/1.1\r\nX: ".to_vec();
    huge.resize(MAX_REQUEST_BYTES * 4, b'a');
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let _ = stream.write_all(&huge);
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    assert!(response.starts_with(b"HTTP/1.1 431 "), "{}", String::from_utf8_lossy(&response));
    // The endpoint still answers.
    assert!(scrape(addr).contains("hip_worker_sessions_total"));
}

/// The `hip-worker` binary's log, as an operator's journal gets it (stderr a file, no
/// `NO_COLOR` set): no colour codes, and a refused login at WARN naming its peer.
#[test]
fn refused_login_is_logged_plainly_with_its_peer() {
    use std::io::BufRead;
    let worker = hip_remote_tests::target_debug_dir().join("hip-worker");
    assert!(worker.is_file(), "{} is missing: run `cargo build --workspace` first", worker.display());
    let dir = hip_remote_tests::TempDir::new("operator-log");
    let log = dir.path().join("worker.log");
    let mut child = std::process::Command::new(&worker)
        .args(["--listen", "127.0.0.1:0", "--backend", "host", "--host-memory-mib", "64", "--token", "secret"])
        .env_remove("NO_COLOR")
        .env_remove("HIP_REMOTE_LOG")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("start hip-worker");
    let mut ready = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut ready).expect("ready line");
    let addr = ready.trim().strip_prefix("hip-worker listening on ").unwrap_or_else(|| panic!("ready line: {ready:?}"));
    let cfg = TcpConfig { io_timeout: Some(Duration::from_secs(20)), ..TcpConfig::default() };
    let (sink, source) = transport_tcp::connect(addr, &cfg).expect("connect");
    let local = sink.stream().local_addr().unwrap().to_string();
    let mut client = SessionDriver::over(Box::new(sink), Box::new(source));
    assert_eq!(hello(&mut client, "wrong"), Err(Status::AUTH_FAILED));
    let mut text = String::new();
    for _ in 0..500 {
        text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("login refused") {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(!text.contains('\x1b'), "colour codes in a log that is not a terminal:\n{text}");
    let line = text.lines().find(|l| l.contains("login refused")).unwrap_or_else(|| panic!("no refused login in:\n{text}"));
    assert!(line.contains(" WARN "), "{line}");
    assert!(line.contains(&format!("peer={local}")), "the client's address {local} is not in: {line}");
}

/// A worker asked to listen on a public address without any token refuses to start, says
/// why and how to fix it; with `--insecure` it starts.
#[test]
fn public_listener_without_a_token_needs_insecure() {
    let worker = hip_remote_tests::target_debug_dir().join("hip-worker");
    assert!(worker.is_file(), "{} is missing: run `cargo build --workspace` first", worker.display());
    let base = ["--listen", "0.0.0.0:0", "--backend", "host", "--host-memory-mib", "64"];
    let refused = std::process::Command::new(&worker)
        .args(base)
        .env_remove("HIP_REMOTE_TOKEN")
        .env_remove("HIP_REMOTE_TOKEN_FILE")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run hip-worker");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("0.0.0.0:0") && stderr.contains("--token") && stderr.contains("--insecure"), "{stderr}");

    let mut child = std::process::Command::new(&worker)
        .args(base)
        .arg("--insecure")
        .env_remove("HIP_REMOTE_TOKEN")
        .env_remove("HIP_REMOTE_TOKEN_FILE")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start hip-worker");
    let mut ready = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut ready).expect("ready line");
    let _ = child.kill();
    let _ = child.wait();
    assert!(ready.starts_with("hip-worker listening on "), "{ready:?}");
}
