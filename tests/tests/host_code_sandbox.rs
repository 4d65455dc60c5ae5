//! Host code runs in a confined process per session (`docs/HOST_MODULES.md`): kernels that
//! try to read the worker's files, open sockets, read another session's memory or crash are
//! refused or contained, while another client keeps being served.
//!
//! What the kernel cannot enforce is skipped by name (the worker logs what it enforced; any
//! other reason for a layer not being enforced fails).

use hip_remote_tests::{Interactive, Sandbox, WorkerProcess, DEFAULT_WORKER_MIB};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::Duration;

/// A worker with a token file, a client holding a buffer in another session, and the
/// attacking program.
struct Scene {
    sandbox: Sandbox,
    worker: WorkerProcess,
    holder: Interactive,
    holder_ptr: String,
    exe: PathBuf,
    token_file: PathBuf,
}

impl Scene {
    fn new(label: &str) -> Self {
        Self::with_args(label, &[])
    }

    /// [`Scene::new`] with more worker arguments.
    fn with_args(label: &str, extra: &[&str]) -> Self {
        let sandbox = Sandbox::new(label);
        let exe = sandbox.compile("host_code_sandbox");
        let token_file = sandbox.path().join("tokens");
        std::fs::write(&token_file, "tenant-b:a-secret-token-host-code-must-not-read\n").unwrap();
        std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let token_arg = token_file.to_str().unwrap().to_owned();
        let worker = WorkerProcess::start_with_args(
            &sandbox.artifacts.worker,
            DEFAULT_WORKER_MIB,
            &sandbox.path().join("worker.log"),
            &[&["--token-file", token_arg.as_str()][..], extra].concat(),
        );
        let mut cmd = worker.command(&exe);
        cmd.arg("hold");
        let mut holder = Interactive::spawn(cmd);
        let holder_ptr = holder.expect_line("PTR ", Duration::from_secs(60));
        Self { sandbox, worker, holder, holder_ptr, exe, token_file }
    }

    /// Runs the attack `args`, requiring it to report its verdict and succeed (refused or
    /// contained); returns its output.
    fn attack(&self, args: &[&str]) -> String {
        let out = self.worker.run(&self.exe, args);
        eprintln!("host_code_sandbox {}: {}", args.join(" "), out.stdout.trim());
        out.assert_success();
        out.stdout
    }

    /// What the session processes enforced (from the worker's log): `(landlock, seccomp)`.
    fn enforced(&self) -> (String, String) {
        let log = self.worker.log_text();
        let line = log.lines().find(|l| l.contains("session process confined")).unwrap_or_else(|| panic!("no session process was confined:\n{log}"));
        let field = |name: &str| {
            let start = line.find(&format!("{name}=")).map(|i| i + name.len() + 1).unwrap_or_else(|| panic!("no {name}= in {line}"));
            let rest = &line[start..];
            // Values with spaces are logged up to the next field.
            let end = [" seccomp=", " landlock="].iter().filter_map(|f| rest.find(f)).min().unwrap_or(rest.len());
            rest[..end].to_owned()
        };
        (field("landlock"), field("seccomp"))
    }

    /// The other client is still served and its data intact; the worker lives.
    fn finish(self) {
        let (mut worker, sandbox) = self.release_holder();
        worker.assert_alive();
        drop(sandbox);
    }

    /// Lets the holder check its data and leave; the worker goes on.
    fn release_holder(mut self) -> (WorkerProcess, Sandbox) {
        self.holder.send_line("go");
        let held = self.holder.finish(Duration::from_secs(60));
        held.assert_success();
        assert!(held.stdout.contains("data intact"), "{}", held.report());
        (self.worker, self.sandbox)
    }
}

#[test]
fn host_code_cannot_read_the_token_file() {
    let scene = Scene::new("sandbox_token_file");
    let out = scene.attack(&["file", scene.token_file.to_str().unwrap()]);
    assert!(out.contains("REFUSED"), "{out}");
    scene.finish();
}

#[test]
fn host_code_cannot_read_a_world_readable_file_outside_its_sandbox() {
    let scene = Scene::new("sandbox_readable_file");
    // Readable by any user: only Landlock keeps the session process out.
    std::fs::set_permissions(scene.sandbox.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let decoy = scene.sandbox.path().join("readable.txt");
    std::fs::write(&decoy, "world-readable, outside the sandbox\n").unwrap();
    std::fs::set_permissions(&decoy, std::fs::Permissions::from_mode(0o644)).unwrap();
    // The holder's session process has logged what it enforced.
    let (landlock, _) = scene.enforced();
    if landlock.contains("the kernel has no Landlock") {
        transport_core::test_skip::skip(&format!(
            "Landlock is not enforced on this kernel ({landlock}): a world-readable file is not kept from host code"
        ));
        scene.finish();
        return;
    }
    let out = scene.attack(&["file", decoy.to_str().unwrap()]);
    assert!(out.contains("REFUSED"), "{out}");
    scene.finish();
}

#[test]
fn host_code_cannot_open_a_socket() {
    let scene = Scene::new("sandbox_socket");
    let (_, seccomp) = scene.enforced();
    if seccomp.contains("the kernel has no seccomp") {
        transport_core::test_skip::skip(&format!("seccomp is not enforced on this kernel ({seccomp}): new sockets are not refused"));
        scene.finish();
        return;
    }
    let out = scene.attack(&["socket"]);
    assert!(out.contains("REFUSED"), "{out}");
    scene.finish();
}

#[test]
fn host_code_cannot_read_another_sessions_memory_by_address() {
    let scene = Scene::new("sandbox_peek");
    let ptr = scene.holder_ptr.clone();
    let out = scene.attack(&["peek", &ptr]);
    assert!(out.contains("CONTAINED") || out.contains("NOT LEAKED"), "{out}");
    scene.finish();
}

#[test]
fn a_crashing_kernel_ends_only_its_session() {
    let scene = Scene::new("sandbox_crash");
    let out = scene.attack(&["crash"]);
    assert!(out.contains("CONTAINED"), "{out}");
    let log = scene.worker.log_text();
    assert!(log.contains("session process died") && log.contains("SIGSEGV"), "the worker did not log the crash:\n{log}");
    // A fresh client is served after the crash.
    let again = scene.attack(&["socket"]);
    assert!(again.contains("REFUSED"), "{again}");
    scene.finish();
}

/// The session processes the worker `worker` has started (its children) now.
fn session_processes(worker: u32) -> Vec<u32> {
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // The fields after the command name (which may hold spaces) close with ')'.
        let after = &stat[stat.rfind(')').map_or(0, |i| i + 2)..];
        let parent = after.split(' ').nth(1).and_then(|p| p.parse::<u32>().ok());
        if parent == Some(worker) && !after.starts_with('Z') {
            children.push(pid);
        }
    }
    children
}

/// A session process killed with SIGKILL mid-session: its client's calls, pending and later,
/// all fail with the error that names the death (sticky, as HIP after a fault), logged once
/// by the client; the other client is served on and the worker lives.
#[test]
fn a_killed_session_process_gives_its_client_a_sticky_error_naming_the_death() {
    if hip_remote_tests::chain_requested() {
        // A chain's first worker serves its sessions itself: no session process to kill.
        return;
    }
    let scene = Scene::new("sandbox_sigkill");
    let worker_pid = scene.worker.pid();
    let before = session_processes(worker_pid);
    let mut victim = Interactive::spawn({
        let mut cmd = scene.worker.command(&scene.exe);
        cmd.arg("killed");
        cmd
    });
    victim.expect_line("READY", Duration::from_secs(60));
    let started: Vec<u32> = session_processes(worker_pid).into_iter().filter(|p| !before.contains(p)).collect();
    let [process] = started[..] else { panic!("expected the victim's one session process, found {started:?} (before: {before:?})") };
    let kill = std::process::Command::new("kill").args(["-KILL", &process.to_string()]).status().expect("kill");
    assert!(kill.success(), "cannot kill session process {process}");
    victim.send_line("go");
    let out = victim.finish(Duration::from_secs(60));
    eprintln!("victim: {}", out.report());
    out.assert_success();
    assert!(out.stdout.contains("STICKY"), "the calls after the death did not all fail alike: {}", out.report());
    // Over TCP and the same-host rings alike (HIP_REMOTE_TEST_SHM=1): the process was killed
    // between replies, so the notice arrives whole.
    assert!(out.stdout.contains("CALL 1 hipErrorLaunchFailure"), "{}", out.report());
    let notices = out.stderr.matches("the worker ended the session: the session's process died (signal 9: SIGKILL").count();
    assert_eq!(notices, 1, "the client should log the death once: {}", out.report());
    let log = scene.worker.log_text();
    assert!(log.contains("session process died") && log.contains("SIGKILL"), "the worker did not log the death:\n{log}");
    // A fresh client is served after the death, and the holder's data is intact.
    let again = scene.attack(&["socket"]);
    assert!(again.contains("REFUSED"), "{again}");
    scene.finish();
}

#[test]
fn programs_host_code_starts_end_with_its_session() {
    let scene = Scene::new("sandbox_spawn");
    let out = scene.attack(&["spawn"]);
    let pid = out.lines().find_map(|l| l.strip_prefix("SPAWNED ")).unwrap_or_else(|| panic!("no SPAWNED line: {out}")).trim().to_owned();
    // The session ended when the program exited; its process group goes with it.
    let proc_dir = PathBuf::from(format!("/proc/{pid}"));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while proc_dir.exists() && std::fs::read_to_string(proc_dir.join("stat")).is_ok_and(|stat| !stat.contains(") Z ")) {
        assert!(std::time::Instant::now() < deadline, "process {pid} started by host code outlived its session");
        std::thread::sleep(Duration::from_millis(20));
    }
    scene.finish();
}

/// One value of the worker's `/metrics` at `port`.
fn metric(port: u16, name: &str) -> u64 {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", port)).expect("metrics endpoint");
    conn.write_all(b"GET /metrics HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").unwrap();
    let mut body = String::new();
    conn.read_to_string(&mut body).unwrap();
    let line = body.lines().find(|l| l.starts_with(name) && !l.starts_with('#')).unwrap_or_else(|| panic!("no {name} in:\n{body}"));
    line.rsplit(' ').next().unwrap().parse().unwrap_or_else(|e| panic!("{line}: {e}"))
}

#[test]
fn metrics_see_sessions_and_device_memory_of_session_processes() {
    let port = hip_remote_tests::closed_port();
    let port_arg = format!("127.0.0.1:{port}");
    let scene = Scene::with_args("sandbox_metrics", &["--metrics", &port_arg]);
    // The holder's session process holds its buffer: the worker counts the session and
    // the memory, though neither is in its own process.
    assert_eq!(metric(port, "hip_worker_sessions_open"), 1);
    assert!(metric(port, "hip_worker_device_memory_used_bytes") >= 4096);
    // The process serves its connection itself (handed over, not relayed): the worker sees
    // none of its requests, so it counts no calls for it.
    assert_eq!(metric(port, "hip_worker_session_processes_total{connection=\"handed_over\"}"), 1);
    assert_eq!(metric(port, "hip_worker_session_processes_total{connection=\"relayed\"}"), 0);
    assert_eq!(metric(port, "hip_worker_calls_total{family=\"memory\"}"), 0);
    let (mut worker, _sandbox) = scene.release_holder();
    // Its process ended: everything it held is given back.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while metric(port, "hip_worker_device_memory_used_bytes") != 0 || metric(port, "hip_worker_sessions_open") != 0 {
        assert!(std::time::Instant::now() < deadline, "the session's memory or count was not given back");
        std::thread::sleep(Duration::from_millis(20));
    }
    worker.assert_alive();
}

/// A session process's file-size limit (`--session-max-file-mib`, 2 MiB here): an allocation
/// whose memory file and a compile whose output would pass it fail with errors naming the
/// limit and its flag, and the session goes on serving. Host code that restores SIGXFSZ's
/// default and writes past it kills only its session process, and the client is told which
/// limit. The worker then serves a new session.
#[test]
fn the_file_size_limit_fails_the_call_naming_it_and_the_session_goes_on() {
    let sandbox = Sandbox::new("session_file_limit");
    let exe = sandbox.compile("session_limits");
    let log = sandbox.path().join("worker.log");
    let mut worker = WorkerProcess::start_with_args(&sandbox.artifacts.worker, 16, &log, &["--session-max-file-mib", "2"]);
    let limit = "file-size limit (2 MiB, RLIMIT_FSIZE; the worker's --session-max-file-mib raises it)";

    let out = worker.run(&exe, &["filesize"]);
    out.assert_success();
    assert!(out.stdout.contains("PASS session_limits filesize"), "{}", out.report());
    assert!(out.stderr.contains(limit), "the allocation's error does not name the limit: {}", out.report());
    assert!(out.stdout.contains(limit), "the compile log does not name the limit: {}", out.report());
    assert!(!worker.log_text().contains("session process died"), "a session process died:\n{}", worker.log_text());

    let out = worker.run(&exe, &["sigxfsz"]);
    out.assert_success();
    assert!(out.stdout.contains("PASS session_limits sigxfsz"), "{}", out.report());
    assert!(out.stderr.contains("SIGXFSZ") && out.stderr.contains(limit), "the client was not told which limit: {}", out.report());

    let out = worker.run(&exe, &["small"]);
    out.assert_success();
    assert!(out.stdout.contains("PASS session_limits small"), "{}", out.report());
    worker.assert_alive();
}

/// Device memory of the host backend lives in memory files, which the kernel counts against a
/// session process's file-size limit: by default that limit is never below the memory per
/// device, so one allocation larger than 1 GiB works (its session process was killed by
/// SIGXFSZ when the limit was a fixed 1 GiB). The memory is not touched beyond two MiB.
#[test]
fn an_allocation_beyond_a_gibibyte_fits_the_default_file_size_limit() {
    let sandbox = Sandbox::new("session_big_allocation");
    let exe = sandbox.compile("session_limits");
    let log = sandbox.path().join("worker.log");
    let mut worker = WorkerProcess::start_with_args(&sandbox.artifacts.worker, 1536, &log, &[]);
    let out = worker.run(&exe, &["big", "1200"]);
    out.assert_success();
    assert!(out.stdout.contains("PASS session_limits big 1200"), "{}", out.report());
    assert!(!worker.log_text().contains("session process died"), "a session process died:\n{}", worker.log_text());
    worker.assert_alive();
}

/// A session process SIGKILLed by someone other than the worker (what the kernel's
/// out-of-memory killer does) is reported to its client as such: its waiting call fails with
/// hipErrorLaunchFailure, the reason naming the likely out-of-memory kill.
#[test]
fn a_session_process_killed_from_outside_is_reported_as_a_likely_out_of_memory_kill() {
    let sandbox = Sandbox::new("session_oom_kill");
    let exe = sandbox.compile("host_code_sandbox");
    let mut worker = sandbox.start_worker();
    let mut cmd = worker.command(&exe);
    cmd.arg("hold");
    let mut holder = Interactive::spawn(cmd);
    holder.expect_line("PTR ", Duration::from_secs(60));
    // In a chain the session processes are the host-backend worker's.
    let log = worker.upstream().unwrap_or(&worker).log_text();
    let pid = log
        .lines()
        .find(|l| l.contains("session process started"))
        .and_then(|l| l.split("pid=").nth(1))
        .map(|p| p.trim().to_owned())
        .unwrap_or_else(|| panic!("no session process in the log:\n{log}"));
    let killed = std::process::Command::new("kill").args(["-KILL", &pid]).status().expect("run kill");
    assert!(killed.success(), "kill -KILL {pid} failed");
    holder.send_line("go");
    let out = holder.finish(Duration::from_secs(60));
    assert!(out.stdout.contains("hipErrorLaunchFailure"), "the waiting call did not fail with hipErrorLaunchFailure: {}", out.report());
    assert!(out.stderr.contains("SIGKILL, killed by the system") && out.stderr.contains("out-of-memory killer"), "{}", out.report());
    worker.assert_alive();
}
