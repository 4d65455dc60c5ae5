//! The shared session process (`--isolation shared`, `docs/ISOLATION.md`, "Faults in shared
//! mode"), with the host backend standing in for a GPU through the hidden test aid
//! `--shared-process`: two clients are served by one process; a sticky fault (the test
//! trigger `HIP_WORKER_TEST_STICKY_FAULT_SIZE`: a `hipMalloc` of that size) makes both
//! answer `hipErrorIllegalAddress`; a third client is served by a new process, and the
//! poisoned one exits once its clients have left. A process that crashes gives its clients
//! the worker's death notice.

mod common;

use common::{authenticate, SessionDriver};
use hip_remote_tests::{TempDir, WorkerProcess, TEST_TOKEN};
use proto_core::wire;
use proto_core::{Request, Response};
use std::time::{Duration, Instant};
use transport_tcp::TcpConfig;

/// The allocation size that faults the device in the shared process (test aid).
const FAULT_SIZE: u64 = 12_345;
/// `hipErrorIllegalAddress`.
const ILLEGAL_ADDRESS: i32 = 700;
/// `hipErrorLaunchFailure`, the death notice's code.
const LAUNCH_FAILURE: i32 = 719;
/// Longest wait for the poisoned process to exit after its clients left (it exits at once;
/// room for a loaded CI machine).
const EXIT_WAIT: Duration = Duration::from_secs(20);

fn client(worker: &WorkerProcess) -> SessionDriver {
    let cfg = TcpConfig { io_timeout: Some(Duration::from_secs(20)), ..TcpConfig::default() };
    let (sink, source) = transport_tcp::connect(worker.addr(), &cfg).expect("connect");
    let mut c = SessionDriver::over(Box::new(sink), Box::new(source));
    let reply = authenticate(&mut c, TEST_TOKEN.as_bytes());
    assert!(!reply.is_error(), "authentication failed: {:?}", reply.error());
    c
}

/// The worker's count of the session processes it started.
const PROCESSES: &str = "hip_worker_session_processes_total{connection=\"handed_over\"}";

/// One value of the worker's `/metrics` at `port`.
fn metric(port: u16, name: &str) -> u64 {
    let (value, body) = metric_if_reported(port, name);
    value.unwrap_or_else(|| panic!("no {name} in:\n{body}"))
}

/// One value of the worker's `/metrics` at `port`, `None` while the worker has not reported it
/// yet (a labelled counter appears with its first increment), with the whole page.
fn metric_if_reported(port: u16, name: &str) -> (Option<u64>, String) {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", port)).expect("metrics endpoint");
    conn.write_all(b"GET /metrics HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").unwrap();
    let mut body = String::new();
    conn.read_to_string(&mut body).unwrap();
    let value = body
        .lines()
        .find(|l| l.starts_with(name) && !l.starts_with('#'))
        .map(|line| line.rsplit(' ').next().unwrap().parse().unwrap_or_else(|e| panic!("{line}: {e}")));
    (value, body)
}

fn malloc(c: &mut SessionDriver, size: u64) -> Result<u64, (i32, String)> {
    let reply = c.call(&Request::Malloc(wire::Malloc { device: 0, size, flags: 0 }));
    if reply.is_error() {
        let (status, message) = reply.error();
        return Err((status.0, message));
    }
    match reply.response() {
        Response::Malloc(a) => Ok(a.ptr),
        other => panic!("Malloc answered with {other:?}"),
    }
}

/// The pids of the shared processes the worker's log says it started, in order.
fn started_pids(log: &str) -> Vec<u32> {
    log.lines()
        .filter(|l| l.contains("shared session process started"))
        .filter_map(|l| l.split("pid=").nth(1)?.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
        .collect()
}

#[test]
fn a_sticky_fault_fences_the_shared_process_and_a_new_process_serves_the_next_client() {
    fault_then_new_process(false);
}

/// The same with every connection relayed by the worker, as TLS and RDMA connections are.
#[test]
fn relayed_sessions_of_the_shared_process_are_fenced_and_replaced_alike() {
    fault_then_new_process(true);
}

fn fault_then_new_process(relayed: bool) {
    let dir = TempDir::new("shared_process");
    let artifacts = hip_remote_tests::artifacts();
    let port = hip_remote_tests::closed_port();
    let metrics_addr = format!("127.0.0.1:{port}");
    let args = ["--listen", "127.0.0.1:0", "--backend", "host", "--host-memory-mib", "64", "--shared-process", "--metrics", &metrics_addr];
    let mut env = vec![(hip_worker::backend::TEST_STICKY_FAULT_ENV, FAULT_SIZE.to_string())];
    if relayed {
        env.push((hip_worker::server::RELAY_EVERY_SESSION_ENV, "1".to_string()));
    }
    let mut worker = WorkerProcess::start_exactly(&artifacts.worker, &args, &env, &dir.path().join("worker.log"));

    // Two clients, both holding memory on device 0, served by one process.
    let (mut a, mut b) = (client(&worker), client(&worker));
    malloc(&mut a, 4096).expect("A is served");
    malloc(&mut b, 4096).expect("B is served");
    let first = started_pids(&worker.log_text());
    assert_eq!(first.len(), 1, "one shared process serves both clients:\n{}", worker.log_text());
    assert_eq!(metric(port, PROCESSES), 1);
    assert_eq!(metric(port, "hip_worker_sessions_open"), 2);

    // A's call faults the device: A gets the sticky code, on that call and every later one.
    let (code, message) = malloc(&mut a, FAULT_SIZE).expect_err("the fault trigger");
    assert_eq!(code, ILLEGAL_ADDRESS, "{message}");
    // The client session answers every later call itself, as HIP does after a sticky error...
    let small = Request::Malloc(wire::Malloc { device: 0, size: 4096, flags: 0 });
    let local = a.session.submit(&small, client_core::Expect::Reply).expect_err("a sticky error ends the client session");
    assert_eq!(local.code.0, ILLEGAL_ADDRESS, "{}", local.message);
    // ...and the worker, asked anyway (a client that ignores it), answers with the same code.
    a.hostile().send_frame(&small, proto_core::Flags::empty(), 1_000);
    let reply = a.hostile().recv();
    assert_eq!(reply.header.request_id, 1_000);
    assert_eq!(reply.error().0 .0, ILLEGAL_ADDRESS);
    // B held work on the device: it gets the same code.
    let (code, message) = malloc(&mut b, 4096).expect_err("B is fenced");
    assert_eq!(code, ILLEGAL_ADDRESS, "{message}");
    // The worker counts the fault once and both fenced sessions (reported by the process).
    let deadline = Instant::now() + EXIT_WAIT;
    const FENCED: &str = "hip_worker_sessions_ended_by_fault_total{device=\"0\"}";
    loop {
        // The process reports its fenced sessions asynchronously: the counter may not exist yet.
        let (fenced, body) = metric_if_reported(port, FENCED);
        if fenced.unwrap_or(0) >= 2 {
            break;
        }
        assert!(Instant::now() < deadline, "the fenced sessions were not counted ({fenced:?}):\n{body}");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(metric(port, "hip_worker_device_resets_total{device=\"0\"}"), 1);

    // A third client is served by a new process, at once.
    let mut c = client(&worker);
    malloc(&mut c, 4096).expect("a new client is served after the fault");
    let pids = started_pids(&worker.log_text());
    assert_eq!(pids.len(), 2, "a new shared process serves the next client:\n{}", worker.log_text());
    assert_ne!(pids[0], pids[1]);
    assert_eq!(metric(port, PROCESSES), 2);

    // The poisoned process exits once its clients have left; the new one goes on.
    drop((a, b));
    let deadline = Instant::now() + EXIT_WAIT;
    let ended = format!("pid={}", pids[0]);
    while !worker.log_text().lines().any(|l| l.contains("shared session process ended") && l.contains(&ended)) {
        assert!(Instant::now() < deadline, "the poisoned process did not exit after its clients left:\n{}", worker.log_text());
        std::thread::sleep(Duration::from_millis(50));
    }
    malloc(&mut c, 4096).expect("the new process still serves");
    let log = worker.log_text();
    assert_eq!(log.matches("device fault in the shared session process").count(), 1, "one warning:\n{log}");

    // The new process crashes: its client gets the worker's death notice (request id 0,
    // hipErrorLaunchFailure), and the next client a process of its own again.
    let killed = std::process::Command::new("kill").args(["-KILL", &pids[1].to_string()]).status().expect("run kill");
    assert!(killed.success());
    let notice = c.try_recv().expect("the death notice");
    assert_eq!(notice.header.request_id, 0);
    let (status, message) = notice.error();
    assert_eq!(status.0, LAUNCH_FAILURE, "{message}");
    assert!(message.contains("shared session process died"), "{message}");
    let mut d = client(&worker);
    malloc(&mut d, 4096).expect("a client is served after the crash");
    assert_eq!(started_pids(&worker.log_text()).len(), 3, "{}", worker.log_text());
    worker.assert_alive();
}
