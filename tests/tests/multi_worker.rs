//! Several workers as one device list (`HIP_REMOTE_WORKER=a,b`, `dns:///name:port`): device
//! count and properties, memory, kernels, streams and events on each worker's devices,
//! cross-worker event waits and peer answers (`tests/c/multi_worker.c`), and one worker's
//! loss leaving the other's devices working.

use hip_remote_tests::{artifacts, client_command, run_with_timeout, Interactive, Sandbox, WorkerProcess, RUN_TIMEOUT};
use std::time::Duration;

/// Emulated memory per device of worker A (two devices) and worker B (one): each device's
/// total memory tells which worker answered for it.
const A_MIB: u64 = 96;
const B_MIB: u64 = 64;

fn two_workers(sandbox: &Sandbox) -> (WorkerProcess, WorkerProcess) {
    let worker = artifacts().worker;
    let a = WorkerProcess::start_with_args(&worker, A_MIB, &sandbox.path().join("worker-a.log"), &["--host-devices", "2"]);
    let b = WorkerProcess::start_with_args(&worker, B_MIB, &sandbox.path().join("worker-b.log"), &[]);
    (a, b)
}

/// The program's arguments for the list `A,B`: each device's worker and memory size.
fn device_sizes() -> [String; 3] {
    [format!("a:{A_MIB}"), format!("a:{A_MIB}"), format!("b:{B_MIB}")]
}

/// `A,B` as one list of three devices: A's two, then B's.
#[test]
fn two_workers_are_one_device_list() {
    let sandbox = Sandbox::new("multi_worker");
    let exe = sandbox.compile("multi_worker");
    let (mut a, mut b) = two_workers(&sandbox);
    let mut cmd = client_command(&exe, &format!("{},{}", a.addr(), b.addr()));
    cmd.args(device_sizes());
    let out = run_with_timeout(cmd, RUN_TIMEOUT);
    out.assert_success();
    assert!(out.stdout.contains("PASS multi_worker"), "no PASS line: {}", out.report());
    a.assert_alive();
    b.assert_alive();
}

/// The list's order is the device order: `B,A` puts B's device first.
#[test]
fn the_list_order_is_the_device_order() {
    let sandbox = Sandbox::new("multi_worker_order");
    let exe = sandbox.compile("multi_worker");
    let (a, b) = two_workers(&sandbox);
    let mut cmd = client_command(&exe, &format!("{},{}", b.addr(), a.addr()));
    cmd.args([format!("b:{B_MIB}"), format!("a:{A_MIB}"), format!("a:{A_MIB}")]);
    let out = run_with_timeout(cmd, RUN_TIMEOUT);
    out.assert_success();
}

/// `dns:///localhost:PORT` resolves to the loopback address(es) the first worker listens on.
#[test]
fn a_dns_name_expands_into_the_list() {
    let sandbox = Sandbox::new("multi_worker_dns");
    let exe = sandbox.compile("multi_worker");
    let (a, b) = two_workers(&sandbox);
    let port = a.addr().rsplit_once(':').expect("host:port").1;
    let resolved: Vec<std::net::SocketAddr> =
        std::net::ToSocketAddrs::to_socket_addrs(&("localhost", port.parse::<u16>().expect("a port"))).expect("localhost resolves").collect();
    if resolved.iter().any(|addr| addr.ip().to_string() != "127.0.0.1") {
        // Another address of localhost (::1) would be a worker the test did not start there.
        transport_core::test_skip::skip("dns list: localhost resolves to more than 127.0.0.1 here");
        return;
    }
    let mut cmd = client_command(&exe, &format!("dns:///localhost:{port},{}", b.addr()));
    cmd.args(device_sizes());
    let out = run_with_timeout(cmd, RUN_TIMEOUT);
    out.assert_success();
}

/// `HIP_VISIBLE_DEVICES` over the list `A,B` (A's devices 0 and 1, then B's 0): the visible
/// devices may come from both workers in any order, or leave one worker with none; memory,
/// streams and queries reach the right worker under the visible numbering.
#[test]
fn visible_devices_choose_across_workers() {
    let sandbox = Sandbox::new("multi_worker_visible");
    let exe = sandbox.compile("visible_devices");
    let (mut a, mut b) = two_workers(&sandbox);
    let (a0, a1, b0) = (format!("0:{A_MIB}"), format!("1:{A_MIB}"), format!("0:{B_MIB}"));
    let cases: [(&str, Vec<&String>); 4] = [("2,1", vec![&b0, &a1]), ("1,2,0", vec![&a1, &b0, &a0]), ("2", vec![&b0]), ("0,1,3", vec![&a0, &a1])];
    for (visible, seen) in cases {
        let mut cmd = client_command(&exe, &format!("{},{}", a.addr(), b.addr()));
        cmd.env("HIP_VISIBLE_DEVICES", visible).args(seen);
        let out = run_with_timeout(cmd, RUN_TIMEOUT);
        assert!(out.success() && out.stdout.contains("PASS visible_devices"), "HIP_VISIBLE_DEVICES={visible}: {}", out.report());
    }
    a.assert_alive();
    b.assert_alive();
}

/// A worker of the list that dies fails only the calls to its devices.
#[test]
fn one_workers_loss_leaves_the_others_devices_working() {
    let sandbox = Sandbox::new("multi_worker_loss");
    let exe = sandbox.compile("multi_worker");
    let worker = artifacts().worker;
    let mut a = WorkerProcess::start_with_args(&worker, A_MIB, &sandbox.path().join("worker-a.log"), &["--host-devices", "2"]);
    // Sessions in the worker's own process: killing it ends the session too.
    let mut b = WorkerProcess::start_in_one_process(&worker, B_MIB, &sandbox.path().join("worker-b.log"));
    let mut cmd = client_command(&exe, &format!("{},{}", a.addr(), b.addr()));
    cmd.args(["hold", "2"]);
    let mut client = Interactive::spawn(cmd);
    client.expect_line("READY", Duration::from_secs(30));
    b.kill();
    client.send_line("go");
    let out = client.finish(RUN_TIMEOUT);
    out.assert_success();
    assert!(out.stdout.contains("PASS multi_worker hold"), "{}", out.report());
    a.assert_alive();
}

/// A list naming an unreachable worker fails every call at once, naming that worker (the
/// numbering of the others would otherwise shift).
#[test]
fn an_unreachable_worker_fails_the_list_by_name() {
    let sandbox = Sandbox::new("multi_worker_unreachable");
    let exe = sandbox.compile("multi_worker");
    let a = sandbox.start_worker();
    let gone = format!("127.0.0.1:{}", hip_remote_tests::closed_port());
    let mut cmd = client_command(&exe, &format!("{},{gone}", a.addr()));
    cmd.args(["a:64", "b:64"]);
    let out = run_with_timeout(cmd, RUN_TIMEOUT);
    assert!(!out.success(), "{}", out.report());
    assert!(out.stderr.contains(&format!("worker 1 of the device list ({gone})")), "{}", out.report());
}

/// One counter of a worker's `/metrics` text.
fn metric(addr: &str, name: &str) -> u64 {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(addr).expect("metrics endpoint");
    conn.write_all(b"GET /metrics HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").unwrap();
    let mut text = String::new();
    conn.read_to_string(&mut text).unwrap();
    let line = text.lines().find(|l| l.starts_with(name) && l[name.len()..].starts_with(' ')).unwrap_or_else(|| panic!("no {name} in:\n{text}"));
    line.rsplit(' ').next().unwrap().parse().unwrap_or_else(|e| panic!("{line}: {e}"))
}

/// `NAME a:N b:M` from the program's output.
fn pair(stdout: &str, name: &str) -> (u64, u64) {
    let line = stdout.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("no {name} line"));
    let value = |w: &str| line.split_whitespace().find_map(|p| p.strip_prefix(w)).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{line}"));
    (value("a:"), value("b:"))
}

/// Where the two workers of a copy test serve their sessions.
#[derive(Clone, Copy, Debug)]
enum Serving {
    /// In the worker's own process (the host backend without host code).
    InWorker,
    /// Each session in a confined process of its own (`--allow-host-code`, as GPU workers'
    /// `--isolation process`).
    SessionProcesses,
    /// Every session in one confined shared process (`--shared-process`, as GPU workers'
    /// `--isolation shared`).
    SharedProcess,
}

/// Two workers that may dial each other (`--dial-workers` naming the other's address, so
/// their ports are chosen first), serving as `serving`, each with a metrics endpoint.
fn dialling_workers(sandbox: &Sandbox, serving: Serving) -> ([WorkerProcess; 2], [String; 2]) {
    let worker = artifacts().worker;
    let listen = [hip_remote_tests::closed_port(), hip_remote_tests::closed_port()].map(|port| format!("127.0.0.1:{port}"));
    let metrics = [hip_remote_tests::closed_port(), hip_remote_tests::closed_port()].map(|port| format!("127.0.0.1:{port}"));
    let start = |me: usize| {
        let mib = A_MIB.to_string();
        let mut args = vec!["--listen", &listen[me], "--backend", "host", "--host-memory-mib", &mib];
        args.extend(["--dial-workers", &listen[1 - me], "--metrics", &metrics[me]]);
        match serving {
            Serving::InWorker => {}
            Serving::SessionProcesses => args.push("--allow-host-code"),
            Serving::SharedProcess => args.push("--shared-process"),
        }
        WorkerProcess::start_exactly(&worker, &args, &[], &sandbox.path().join(format!("worker-{me}.log")))
    };
    ([start(0), start(1)], metrics)
}

/// Copies between devices of two workers go worker to worker, both ways, synchronous and
/// asynchronous, ordered in the streams of either side and after another worker's event;
/// the workers' counters show the bytes crossed between them, and what the client wrote
/// shows they did not pass through it.
fn copies_go_worker_to_worker(serving: Serving) {
    copies_between(serving, false);
}

/// `same_host`: the client reaches both workers over the same-host transport (it moves there
/// from the TCP address it was given, which is the source address the destination dials).
fn copies_between(serving: Serving, same_host: bool) {
    if hip_remote_tests::chain_requested() {
        transport_core::test_skip::skip("copies between workers: a chained run starts its workers itself");
        return;
    }
    let sandbox = Sandbox::new(&format!("multi_worker_copies_{serving:?}"));
    let exe = sandbox.compile("multi_worker");
    let ([mut a, mut b], metrics) = dialling_workers(&sandbox, serving);
    let received = |m: &str| metric(m, "hip_worker_received_bytes_total");
    let fetched = |m: &str| metric(m, "hip_worker_transfer_received_bytes_total");
    let answered = |m: &str| metric(m, "hip_worker_transfer_sent_bytes_total");
    let before = [received(&metrics[0]), received(&metrics[1])];
    let mut cmd = client_command(&exe, &format!("{},{}", a.addr(), b.addr()));
    cmd.arg("copies");
    if same_host {
        cmd.env("HIP_REMOTE_SHM", "auto");
    }
    let out = run_with_timeout(cmd, RUN_TIMEOUT);
    out.assert_success();
    assert!(out.stdout.contains("PASS multi_worker copies"), "{}", out.report());
    let (to_a, to_b) = pair(&out.stdout, "TRANSFERRED");
    let (uploaded_a, uploaded_b) = pair(&out.stdout, "UPLOADED");
    // Every byte copied into a worker came from the other worker, which answered it (a
    // session process tells its worker what it moved).
    // (Read again a moment later when short: a process's notes reach its worker just after.)
    let settled = |read: &dyn Fn() -> (u64, u64), want: (u64, u64)| {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let mut got = read();
        while got != want && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            got = read();
        }
        got
    };
    settled(&|| (fetched(&metrics[0]), fetched(&metrics[1])), (to_a, to_b));
    settled(&|| (answered(&metrics[0]), answered(&metrics[1])), (to_b, to_a));
    assert_eq!((fetched(&metrics[0]), fetched(&metrics[1])), (to_a, to_b), "bytes fetched from the other worker");
    assert_eq!((answered(&metrics[0]), answered(&metrics[1])), (to_b, to_a), "bytes answered to the other worker");
    assert!(to_a >= 2 * (4 << 20) && to_b >= 2 * (4 << 20), "{}", out.report());
    if same_host {
        // Over shared memory the client's TCP counters see nothing: the workers' say enough.
        a.assert_alive();
        b.assert_alive();
        return;
    }
    // The client sent its uploads and small requests, not the copies (at least 2 copies of
    // 4 MiB each way would show): what its TCP connections had acknowledged.
    let slack = 1 << 20;
    let sent: u64 = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("CLIENT_SENT "))
        .unwrap_or_else(|| panic!("no CLIENT_SENT line: {}", out.report()))
        .trim()
        .parse()
        .expect("a byte count");
    let uploaded = uploaded_a + uploaded_b;
    eprintln!("{serving:?}: the client sent {sent} bytes over TCP, uploaded {uploaded}, copied {}", to_a + to_b);
    assert!(sent >= uploaded / 2, "the client's TCP counters show {sent} bytes sent, less than its uploads ({uploaded}) could compress to");
    assert!(sent < uploaded + slack, "the client sent {sent} bytes; it uploaded {uploaded}: copies went through it");
    // Sessions in the worker's process: what each received on its connections is the
    // client's uploads and control frames, not the copies.
    let got = [received(&metrics[0]) - before[0], received(&metrics[1]) - before[1]];
    assert!(got[0] < uploaded_a + slack, "worker a received {} bytes; the client uploaded {uploaded_a}, {to_a} were copied in", got[0]);
    assert!(got[1] < uploaded_b + slack, "worker b received {} bytes; the client uploaded {uploaded_b}, {to_b} were copied in", got[1]);
    // The bench line (no bound on the figures: a shared CI machine's timing says little).
    let mut cmd = client_command(&exe, &format!("{},{}", a.addr(), b.addr()));
    cmd.args(["bench", "16", "4"]);
    let out = run_with_timeout(cmd, RUN_TIMEOUT);
    out.assert_success();
    let line = out.stdout.lines().find(|l| l.starts_with("BENCH")).unwrap_or_else(|| panic!("no BENCH line: {}", out.report()));
    eprintln!("{serving:?}: {line}");
    a.assert_alive();
    b.assert_alive();
}

#[test]
fn copies_between_workers_go_worker_to_worker() {
    copies_go_worker_to_worker(Serving::InWorker);
}

/// As GPU workers serve sessions (`--isolation process`): the worker dials for the
/// destination's process and hands the source's process the fetch.
#[test]
fn copies_between_workers_in_session_processes_go_worker_to_worker() {
    copies_go_worker_to_worker(Serving::SessionProcesses);
}

/// A client on the workers' machine reaches them over shared memory: the source session's
/// process (dedicated or shared) still takes other workers' fetches.
#[test]
fn copies_between_workers_in_session_processes_reached_over_shared_memory() {
    copies_between(Serving::SessionProcesses, true);
    copies_between(Serving::SharedProcess, true);
}

/// As GPU workers with `--isolation shared` serve sessions.
#[test]
fn copies_between_workers_in_shared_session_processes_go_worker_to_worker() {
    copies_go_worker_to_worker(Serving::SharedProcess);
}

/// Without `--dial-workers` the destination worker refuses to fetch: the copy fails with
/// `hipErrorNotSupported` and says which flag allows it.
#[test]
fn a_worker_that_may_not_dial_refuses_copies_between_workers() {
    if hip_remote_tests::chain_requested() {
        transport_core::test_skip::skip("copies between workers: a chained run serves sessions in session processes");
        return;
    }
    let sandbox = Sandbox::new("multi_worker_no_dial");
    let exe = sandbox.compile("multi_worker");
    let worker = artifacts().worker;
    let a = WorkerProcess::start_in_one_process(&worker, A_MIB, &sandbox.path().join("worker-a.log"));
    let b = WorkerProcess::start_in_one_process(&worker, A_MIB, &sandbox.path().join("worker-b.log"));
    let mut cmd = client_command(&exe, &format!("{},{}", a.addr(), b.addr()));
    cmd.arg("copies");
    let out = run_with_timeout(cmd, RUN_TIMEOUT);
    assert!(!out.success(), "{}", out.report());
    assert!(out.stdout.contains("hipErrorNotSupported"), "{}", out.report());
}

/// Two workers reached over TLS (`HIP_REMOTE_WORKER=tls://a,tls://b`) that may dial each
/// other over TLS (`--dial-workers tls://...`, `--dial-workers-ca`): the client names each
/// source with `tls://`, the copies go worker to worker over TLS, both ways, in the worker's
/// process and in dedicated session processes (relayed sessions); the workers' counters show
/// the bytes.
fn copies_over_tls(serving: Serving) {
    if hip_remote_tests::chain_requested() {
        transport_core::test_skip::skip("copies between workers: a chained run starts its workers itself");
        return;
    }
    let sandbox = Sandbox::new(&format!("multi_worker_tls_copies_{serving:?}"));
    let exe = sandbox.compile("multi_worker");
    let pki = hip_remote_tests::TestPki::new("multi-worker-tls");
    let worker = artifacts().worker;
    let listen = [hip_remote_tests::closed_port(), hip_remote_tests::closed_port()].map(|port| format!("127.0.0.1:{port}"));
    let metrics = [hip_remote_tests::closed_port(), hip_remote_tests::closed_port()].map(|port| format!("127.0.0.1:{port}"));
    let ca = pki.path("ca.pem").display().to_string();
    let start = |me: usize| {
        let mib = A_MIB.to_string();
        let dial = format!("tls://{}", listen[1 - me]);
        let mut args: Vec<String> = ["--listen", &listen[me], "--backend", "host", "--host-memory-mib", &mib].map(String::from).into();
        args.extend(["--dial-workers".into(), dial, "--dial-workers-ca".into(), ca.clone(), "--metrics".into(), metrics[me].clone()]);
        args.extend(pki.worker_args(false));
        match serving {
            Serving::InWorker => {}
            Serving::SessionProcesses => args.push("--allow-host-code".into()),
            Serving::SharedProcess => args.push("--shared-process".into()),
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        WorkerProcess::start_exactly(&worker, &args, &[], &sandbox.path().join(format!("worker-{me}.log")))
    };
    let (mut a, mut b) = (start(0), start(1));
    assert!(a.addr().starts_with("tls://") && b.addr().starts_with("tls://"), "{} {}", a.addr(), b.addr());
    let mut cmd = client_command(&exe, &format!("{},{}", a.addr(), b.addr()));
    cmd.env("HIP_REMOTE_TLS_CA", &ca).arg("copies");
    let out = run_with_timeout(cmd, RUN_TIMEOUT);
    out.assert_success();
    assert!(out.stdout.contains("PASS multi_worker copies"), "{}", out.report());
    let (to_a, to_b) = pair(&out.stdout, "TRANSFERRED");
    let fetched = |m: &str| metric(m, "hip_worker_transfer_received_bytes_total");
    let answered = |m: &str| metric(m, "hip_worker_transfer_sent_bytes_total");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let read = || (fetched(&metrics[0]), fetched(&metrics[1]), answered(&metrics[0]), answered(&metrics[1]));
    let mut got = read();
    while got != (to_a, to_b, to_b, to_a) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        got = read();
    }
    assert_eq!(got, (to_a, to_b, to_b, to_a), "bytes fetched by a, by b; answered by a, by b");
    assert!(to_a >= 2 * (4 << 20) && to_b >= 2 * (4 << 20), "{}", out.report());
    a.assert_alive();
    b.assert_alive();
}

#[test]
fn copies_between_workers_go_worker_to_worker_over_tls() {
    copies_over_tls(Serving::InWorker);
}

#[test]
fn copies_between_workers_in_session_processes_go_worker_to_worker_over_tls() {
    copies_over_tls(Serving::SessionProcesses);
}
