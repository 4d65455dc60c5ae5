//! The same-host transport: C programs through the real `libamdhip64.so.7` against a
//! host-backend worker over `shm://` (and moved there automatically from TCP), with the
//! worker's authentication, and a client killed in the middle of a copy leaving nothing
//! behind in the worker.

#![cfg(target_os = "linux")]

use hip_remote_tests::{client_command, run_with_timeout, Interactive, RunOutput, Sandbox, WorkerProcess, RUN_TIMEOUT};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A client command for `exe` through the worker's shared-memory socket.
fn shm_command(worker: &WorkerProcess, exe: &Path) -> Command {
    let socket = worker.shm_socket().expect("the test worker listens for same-host clients");
    client_command(exe, &format!("shm://{socket}"))
}

fn run_shm(worker: &WorkerProcess, exe: &Path, args: &[&str]) -> RunOutput {
    let mut cmd = shm_command(worker, exe);
    cmd.args(args);
    run_with_timeout(cmd, RUN_TIMEOUT)
}

fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

/// The worker's log once it holds `tcp` ended TCP and `shm` ended SHM connections (a
/// session's end is logged just after its client exits), or after a bound.
fn log_with_ended(worker: &WorkerProcess, tcp: usize, shm: usize) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let log = worker.log_text();
        let ended = (count(&log, "TCP connection ended"), count(&log, "SHM connection ended"));
        if ended == (tcp, shm) || Instant::now() >= deadline {
            return log;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Programs that cover copies both ways (pageable, pinned, 2D, async with data checked),
/// streams, events, kernels, stream callbacks (their channel is a second shm connection) and
/// kernel output pass over shared memory.
#[test]
fn programs_pass_over_shared_memory() {
    let sandbox = Sandbox::new("shm_programs");
    let mut worker = sandbox.start_worker();
    for name in ["memory", "memory2d", "streams_events", "kernels", "callbacks", "kernel_printf"] {
        let exe = sandbox.compile(name);
        let out = run_shm(&worker, &exe, &[]);
        out.assert_success();
        assert!(out.stdout.contains(&format!("PASS {name}")), "no PASS line: {}", out.report());
    }
    worker.assert_alive();
    // Six programs, and the callback channel of `callbacks`.
    let log = log_with_ended(&worker, 0, 7);
    assert!(count(&log, "SHM connection ended") >= 6, "the programs did not run over shared memory:\n{log}");
    assert_eq!(count(&log, "TCP connection ended"), 0, "a program used TCP:\n{log}");
}

/// The worker authenticates a same-host client as a remote one: a wrong token is refused.
#[test]
fn a_wrong_token_is_refused_over_shared_memory() {
    let sandbox = Sandbox::new("shm_auth");
    let exe = sandbox.compile("meminfo");
    let mut worker = sandbox.start_worker();
    let mut cmd = shm_command(&worker, &exe);
    cmd.env("HIP_REMOTE_TOKEN", "not-the-token");
    let out = run_with_timeout(cmd, RUN_TIMEOUT);
    assert!(!out.success(), "a wrong token was accepted: {}", out.report());
    assert!(out.stderr.contains("refused HIP_REMOTE_TOKEN"), "{}", out.report());
    let mut cmd = shm_command(&worker, &exe);
    cmd.env_remove("HIP_REMOTE_TOKEN");
    let out = run_with_timeout(cmd, RUN_TIMEOUT);
    assert!(!out.success() && out.stderr.contains("requires authentication"), "{}", out.report());
    // The right one still works.
    run_shm(&worker, &exe, &[]).assert_success();
    worker.assert_alive();
    assert!(worker.log_text().contains("login refused: wrong authentication response"));
}

/// A TCP client of a worker on its machine moves to shared memory (`HIP_REMOTE_SHM=auto`,
/// the default); `HIP_REMOTE_SHM=off` keeps it on TCP.
#[test]
fn a_local_tcp_client_moves_to_shared_memory_unless_told_not_to() {
    let sandbox = Sandbox::new("shm_auto");
    let exe = sandbox.compile("memory");
    let mut worker = sandbox.start_worker();
    assert!(worker.addr().starts_with("127.0.0.1:"));
    let mut auto = client_command(&exe, worker.addr());
    auto.env_remove("HIP_REMOTE_SHM");
    let out = run_with_timeout(auto, RUN_TIMEOUT);
    out.assert_success();
    assert!(!out.stderr.contains("staying on TCP"), "{}", out.report());
    let log = log_with_ended(&worker, 1, 1);
    // The TCP session ended with the move (GOODBYE) and the program ran on a shm session.
    assert_eq!((count(&log, "TCP connection ended"), count(&log, "SHM connection ended")), (1, 1), "{log}");

    let mut off = client_command(&exe, worker.addr());
    off.env("HIP_REMOTE_SHM", "off");
    run_with_timeout(off, RUN_TIMEOUT).assert_success();
    let log = log_with_ended(&worker, 2, 1);
    assert_eq!((count(&log, "TCP connection ended"), count(&log, "SHM connection ended")), (2, 1), "{log}");
    worker.assert_alive();
}

/// Reads frames until the worker ends the connection; how long that took.
fn until_closed(source: &mut transport_shm::ShmSource) -> Duration {
    use transport_core::FrameSource;
    let started = Instant::now();
    while source.recv_head().is_ok() && started.elapsed() < Duration::from_secs(30) {}
    started.elapsed()
}

/// The worker's limits hold over shared memory: a client that never says HELLO is closed at
/// the pre-authentication deadline, a malformed frame header ends its connection, and the
/// worker goes on serving.
#[test]
fn hostile_same_host_clients_are_closed_and_the_worker_goes_on() {
    use transport_core::FrameSink;
    let sandbox = Sandbox::new("shm_hostile");
    let exe = sandbox.compile("meminfo");
    let mut worker = sandbox.start_worker_args(&["--preauth-timeout-ms".to_string(), "300".to_string()]);
    let socket = worker.shm_socket().expect("same-host socket");
    let config = transport_shm::ShmConfig::default();

    let (_silent_sink, mut silent) = transport_shm::connect(Path::new(&socket), &config).expect("connect");
    let took = until_closed(&mut silent);
    assert!(took >= Duration::from_millis(250) && took < Duration::from_secs(10), "a silent client was closed after {took:?}");

    let (mut sink, mut source) = transport_shm::connect(Path::new(&socket), &config).expect("connect");
    sink.send(&[0xa5; 32], &[]).expect("garbage header");
    let took = until_closed(&mut source);
    assert!(took < Duration::from_secs(10), "a malformed header was not refused ({took:?})");

    run_shm(&worker, &exe, &[]).assert_success();
    worker.assert_alive();
}

/// What a worker process holds that a dead client could leak: shared memory mapped, file
/// descriptors, threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Held {
    /// Mappings of hip-remote's rings.
    ring_mappings: usize,
    /// Mappings of any memfd (the session processes' shared tables too).
    memfd_mappings: usize,
    /// Mappings of shared host memory (`hipHostMalloc` regions, staging regions).
    host_mappings: usize,
    fds: usize,
    threads: usize,
    /// Threads other than the host backend's stream executor pool (`hip-host-stream`, shared
    /// by every session, bounded by the cores, grown on demand and kept for the next).
    session_threads: usize,
}

fn held(pid: u32) -> Held {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).expect("worker maps");
    let entries = |dir: &str| std::fs::read_dir(format!("/proc/{pid}/{dir}")).map(|d| d.count()).expect("worker /proc entries");
    Held {
        ring_mappings: maps.lines().filter(|l| l.contains("memfd:hip-remote-rings")).count(),
        memfd_mappings: maps.lines().filter(|l| l.contains("memfd:")).count(),
        host_mappings: maps.lines().filter(|l| l.contains("memfd:hip-remote-host")).count(),
        fds: entries("fd"),
        threads: entries("task"),
        session_threads: std::fs::read_dir(format!("/proc/{pid}/task"))
            .map(|tasks| {
                tasks
                    .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
                    .filter(|name| !name.starts_with("hip-host-stream"))
                    .count()
            })
            .expect("worker tasks"),
    }
}

/// What the worker holds once two readings 100 ms apart agree.
fn steady(pid: u32) -> Held {
    let mut last = held(pid);
    for _ in 0..50 {
        std::thread::sleep(Duration::from_millis(100));
        let now = held(pid);
        if now == last {
            return now;
        }
        last = now;
    }
    last
}

/// Waits until the worker holds no more than `baseline` (a dead session is cleaned up by the
/// worker's threads, which take a moment); returns what it holds then.
fn settle(pid: u32, baseline: Held) -> Held {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let now = held(pid);
        let back = now.ring_mappings <= baseline.ring_mappings
            && now.host_mappings <= baseline.host_mappings
            && now.memfd_mappings <= baseline.memfd_mappings
            && now.fds <= baseline.fds
            && now.threads <= baseline.threads
            && now.session_threads <= baseline.session_threads;
        if back || Instant::now() >= deadline {
            return now;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A client SIGKILLed in the middle of a 256 MiB upload through the rings: the worker ends
/// the session, frees its device memory, unmaps the rings, closes the descriptors, ends the
/// session's threads, and serves the next client.
#[test]
fn a_client_killed_mid_transfer_leaves_nothing_behind() {
    let sandbox = Sandbox::new("shm_kill");
    let meminfo = sandbox.compile("meminfo");
    let victim = sandbox.compile("kill_midcopy");
    let mut worker = sandbox.start_worker_with(1024);
    let pid = worker.pid();

    let before = run_shm(&worker, &meminfo, &[]);
    before.assert_success();
    let free_before = parse_free(&before.stdout);
    // What the worker holds once that session is gone: its end logged, its rings unmapped,
    // and the counts steady.
    let _ = log_with_ended(&worker, 0, 1);
    settle(
        pid,
        Held { ring_mappings: 0, host_mappings: 0, memfd_mappings: usize::MAX, fds: usize::MAX, threads: usize::MAX, session_threads: usize::MAX },
    );
    let baseline = steady(pid);
    assert_eq!(baseline.ring_mappings, 0, "rings still mapped after a clean session: {baseline:?}");

    let mut client = Interactive::spawn(shm_command(&worker, &victim));
    client.expect_line("READY", Duration::from_secs(60));
    let during = held(pid);
    assert!(
        during.ring_mappings >= 1 && during.memfd_mappings > baseline.memfd_mappings,
        "the live session's rings are not mapped in the worker: {during:?}"
    );
    std::thread::sleep(Duration::from_millis(300));
    client.kill();
    let killed = client.finish(Duration::from_secs(10));
    assert!(!killed.stdout.contains("NOT KILLED"), "the client finished before it was killed");

    let after = settle(pid, baseline);
    assert_eq!(after.ring_mappings, 0, "the dead session's rings are still mapped: {after:?} (baseline {baseline:?})");
    assert!(after.memfd_mappings <= baseline.memfd_mappings, "shared memory left mapped: {after:?} (baseline {baseline:?})");
    assert!(after.fds <= baseline.fds, "descriptors leaked: {after:?} (baseline {baseline:?})");
    assert!(after.threads <= baseline.threads, "threads leaked: {after:?} (baseline {baseline:?})");

    // Its device memory is back, and a new client is served.
    let reclaimed = run_shm(&worker, &meminfo, &["wait", &free_before.to_string(), "10"]);
    reclaimed.assert_success();
    assert_eq!(parse_free(&reclaimed.stdout), free_before);
    worker.assert_alive();
    assert!(worker.log_text().contains("SHM connection ended"), "{}", worker.log_text());
}

/// Shared registered host memory: `hipHostMalloc` regions and staged pageable copies pass
/// over `shm://` (every byte checked), and the same program passes over TCP, where the
/// memory stays local.
#[test]
fn shared_host_memory_copies_pass() {
    let sandbox = Sandbox::new("shm_shared");
    let exe = sandbox.compile("shm_shared");
    // Sessions in the worker's process (`shared_host_memory_copies_pass_in_session_processes`
    // runs them in session processes): the worker's mappings are checked below.
    let mut worker = sandbox.start_worker_in_one_process();
    let out = run_shm(&worker, &exe, &[]);
    out.assert_success();
    assert!(out.stdout.contains("PASS shm_shared"), "{}", out.report());
    let mut tcp = client_command(&exe, worker.addr());
    tcp.env("HIP_REMOTE_SHM", "off");
    let out = run_with_timeout(tcp, RUN_TIMEOUT);
    out.assert_success();
    assert!(out.stdout.contains("PASS shm_shared"), "{}", out.report());
    worker.assert_alive();
    let after = settle(
        worker.pid(),
        Held { ring_mappings: 0, host_mappings: 0, memfd_mappings: usize::MAX, fds: usize::MAX, threads: usize::MAX, session_threads: usize::MAX },
    );
    assert_eq!(after.host_mappings, 0, "shared host memory left mapped after the sessions ended: {after:?}");
}

/// Sessions in processes of their own are handed their same-host connections, descriptor
/// channel included: the session process creates the shared host regions itself and the
/// same program passes (every byte checked), without falling back to local memory.
#[test]
fn shared_host_memory_copies_pass_in_session_processes() {
    if hip_remote_tests::chain_requested() {
        // A chain's first worker serves its sessions itself: nothing handed over.
        return;
    }
    let sandbox = Sandbox::new("shm_shared_process");
    let exe = sandbox.compile("shm_shared");
    let mut worker = sandbox.start_worker_args(&["--log-level".into(), "info,hip_worker::session::shared_host=debug".into()]);
    let out = run_shm(&worker, &exe, &[]);
    out.assert_success();
    assert!(out.stdout.contains("PASS shm_shared"), "{}", out.report());
    assert!(!out.stderr.contains("using local memory"), "the client fell back to local memory: {}", out.report());
    worker.assert_alive();
    let log = log_with_ended(&worker, 0, 1);
    assert!(log.contains("the connection is handed over"), "the connection was not handed to the session process:\n{log}");
    let created = log.lines().filter(|l| l.contains("shared host region created")).collect::<Vec<_>>();
    assert!(!created.is_empty(), "no shared host region was created:\n{log}");
    assert!(created.iter().all(|l| l.contains("session-process{")), "shared regions created outside the session process:\n{log}");
}

/// A client SIGKILLed while it holds shared host memory and copies through it (256 MiB
/// pinned, both ways): the worker unregisters and unmaps every region, closes the
/// descriptors, ends the threads, gives the device memory back and serves the next client.
#[test]
fn a_client_killed_holding_shared_memory_leaves_nothing_behind() {
    let sandbox = Sandbox::new("shm_kill_shared");
    let meminfo = sandbox.compile("meminfo");
    let victim = sandbox.compile("shm_shared");
    let mut worker = sandbox.start_worker_in_one_process();
    let pid = worker.pid();

    // A whole run first: the worker's stream executor threads (shared by all sessions, kept
    // for the next) have grown to what the program needs before the baseline is taken.
    run_shm(&worker, &victim, &[]).assert_success();
    // Its session freed before the free memory is read.
    let _ = log_with_ended(&worker, 0, 1);
    let before = run_shm(&worker, &meminfo, &[]);
    before.assert_success();
    let free_before = parse_free(&before.stdout);
    let _ = log_with_ended(&worker, 0, 2);
    settle(
        pid,
        Held { ring_mappings: 0, host_mappings: 0, memfd_mappings: usize::MAX, fds: usize::MAX, threads: usize::MAX, session_threads: usize::MAX },
    );
    let baseline = steady(pid);

    let mut cmd = shm_command(&worker, &victim);
    cmd.arg("hold");
    let mut client = Interactive::spawn(cmd);
    client.expect_line("READY", Duration::from_secs(120));
    let during = held(pid);
    assert!(during.host_mappings >= 1, "the held pinned buffer is not shared memory of the worker: {during:?}");
    std::thread::sleep(Duration::from_millis(300));
    client.kill();
    let killed = client.finish(Duration::from_secs(10));
    assert!(!killed.stdout.contains("NOT KILLED"), "the client finished before it was killed");

    // The stream executor pool may grow under the victim's load (it is the worker's, not
    // the session's): every other thread must be gone.
    let after = settle(pid, Held { threads: usize::MAX, ..baseline });
    assert_eq!(after.host_mappings, 0, "shared host memory still mapped: {after:?} (baseline {baseline:?})");
    assert_eq!(after.ring_mappings, 0, "the dead session's rings are still mapped: {after:?}");
    assert!(after.memfd_mappings <= baseline.memfd_mappings, "shared memory left mapped: {after:?} (baseline {baseline:?})");
    assert!(after.fds <= baseline.fds, "descriptors leaked: {after:?} (baseline {baseline:?})");
    assert!(after.session_threads <= baseline.session_threads, "threads leaked: {after:?} (baseline {baseline:?})");
    let reclaimed = run_shm(&worker, &meminfo, &["wait", &free_before.to_string(), "10"]);
    reclaimed.assert_success();
    assert_eq!(parse_free(&reclaimed.stdout), free_before);
    worker.assert_alive();
}

fn parse_free(stdout: &str) -> u64 {
    let line = stdout.lines().find(|l| l.starts_with("FREE ")).unwrap_or_else(|| panic!("no FREE line in {stdout:?}"));
    line.split_whitespace().nth(1).and_then(|w| w.parse().ok()).expect("free bytes")
}

/// Waits of `call` for a reply to `opcode` in the `HIP_REMOTE_PROFILE=1` table on `stderr`.
fn profiled_waits(stderr: &str, call: &str, opcode: &str) -> u64 {
    stderr
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            (cells.len() >= 3 && cells[0] == call && cells[1] == opcode).then(|| cells[2].parse::<u64>().unwrap_or(0))
        })
        .sum()
}

/// A small synchronous `hipMemcpy` from `hipHostMalloc` memory over shared memory goes as a
/// TCP client's does: its bytes inline, returning once they are sent, without a round trip
/// that waits for the device to read the shared pages (which cost 3–7× the native copy on a
/// GPU). The program refills the source as soon as each call returns and checks every byte;
/// the worker's profile of waits shows none for those uploads, while the downloads (which
/// must wait) are counted, so the profile is known to be read.
#[test]
fn small_pinned_uploads_over_shared_memory_do_not_wait_for_the_worker() {
    let sandbox = Sandbox::new("shm_small");
    let exe = sandbox.compile("shm_small_copies");
    let mut worker = sandbox.start_worker_in_one_process();
    let mut cmd = shm_command(&worker, &exe);
    cmd.env("HIP_REMOTE_PROFILE", "1");
    let out = run_with_timeout(cmd, RUN_TIMEOUT);
    out.assert_success();
    assert!(out.stdout.contains("PASS shm_small_copies"), "{}", out.report());
    assert!(out.stderr.contains("hip-remote profile"), "no profile table: {}", out.report());
    let uploads = profiled_waits(&out.stderr, "hipMemcpy", "MemcpyHtoDShared");
    assert_eq!(uploads, 0, "256 small uploads from shared host memory waited {uploads} times: {}", out.report());
    let downloads = profiled_waits(&out.stderr, "hipMemcpy", "MemcpyDtoHShared");
    assert_eq!(downloads, 4, "the 4 small downloads into shared host memory each wait for their reply: {}", out.report());
    worker.assert_alive();
}

/// ROCm's hip-tests' blocked streams (a host callback spinning until the program releases
/// it): an asynchronous copy into `hipHostMalloc` memory behind it, on the null stream after
/// a launch and on a created stream, returns at once over `shm://` (shared memory) and over
/// TCP, and brings the kernel's result after the release.
#[test]
fn async_copies_into_pinned_memory_return_while_the_stream_is_blocked() {
    let sandbox = Sandbox::new("blocked_stream_copies");
    let exe = sandbox.compile("blocked_stream_copies");
    let mut worker = sandbox.start_worker();
    let out = run_shm(&worker, &exe, &[]);
    out.assert_success();
    assert!(out.stdout.contains("PASS blocked_stream_copies"), "{}", out.report());
    let mut tcp = client_command(&exe, worker.addr());
    tcp.env("HIP_REMOTE_SHM", "off");
    let out = run_with_timeout(tcp, RUN_TIMEOUT);
    out.assert_success();
    assert!(out.stdout.contains("PASS blocked_stream_copies"), "{}", out.report());
    worker.assert_alive();
}
