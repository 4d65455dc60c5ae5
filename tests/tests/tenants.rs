//! Tenants sharing one worker (`docs/ISOLATION.md`): a client whose kernel faults gets a clear,
//! sticky error while another client's verified work goes on and a later client is served;
//! equal clients get equal shares of the device, and each tenant's device time in `/metrics`
//! accounts for the work it did.
//!
//! The worker runs with host code allowed, so every session is a session process of its own.

use hip_remote_tests::{target_debug_dir, workspace_root, Interactive, RunOutput, Sandbox, WorkerProcess, DEFAULT_WORKER_MIB};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Clients of the fairness test.
const CLIENTS: usize = 8;
/// How long each of them launches kernels.
const WINDOW: Duration = Duration::from_secs(5);
/// How long each of their kernels spins (CPU work of the host backend's "device").
const SPIN_US: u64 = 20;
/// The widest slowest/fastest spread tolerated between equal clients.
const MAX_SPREAD: f64 = 1.1;

/// Held by each test: the fairness test measures shares of a 2-core machine, which another
/// test's clients running at the same time would skew.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

/// A worker whose token file names `tenants` (token of each: `token-<tenant>`), serving
/// metrics on a port of its own.
struct Scene {
    sandbox: Sandbox,
    worker: WorkerProcess,
    metrics_port: u16,
    /// The kernels, compiled once (`tenant_share compile`), for every client to load.
    code: PathBuf,
    exe: PathBuf,
}

impl Scene {
    fn new(label: &str, tenants: &[String]) -> Self {
        let sandbox = Sandbox::new(label);
        let exe = sandbox.compile("tenant_share");
        let token_file = sandbox.path().join("tokens");
        let lines: String = tenants.iter().map(|t| format!("{t}:token-{t}\n")).collect();
        std::fs::write(&token_file, lines).unwrap();
        std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let metrics_port = hip_remote_tests::closed_port();
        let (token_arg, metrics_arg) = (token_file.display().to_string(), format!("127.0.0.1:{metrics_port}"));
        let worker = WorkerProcess::start_with_args(
            &sandbox.artifacts.worker,
            DEFAULT_WORKER_MIB,
            &sandbox.path().join("worker.log"),
            &["--token-file", &token_arg, "--metrics", &metrics_arg],
        );
        let code = sandbox.path().join("tenant_share.code");
        let code_arg = code.display().to_string();
        let compiled = worker.run(&exe, &["compile", &code_arg]);
        compiled.assert_success();
        Self { sandbox, worker, metrics_port, code, exe }
    }

    /// A command for `exe` as `tenant`.
    fn command(&self, exe: &Path, tenant: &str) -> Command {
        let mut cmd = self.worker.command(exe);
        cmd.env("HIP_REMOTE_TOKEN", format!("token-{tenant}"));
        cmd
    }

    /// The `/metrics` text.
    fn metrics(&self) -> String {
        use std::io::{Read, Write};
        let mut conn = std::net::TcpStream::connect(("127.0.0.1", self.metrics_port)).expect("metrics endpoint");
        conn.write_all(b"GET /metrics HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").unwrap();
        let mut body = String::new();
        conn.read_to_string(&mut body).unwrap();
        body
    }

    /// One sample's value (`name` with its labels, as exposed).
    fn metric(&self, series: &str) -> Option<f64> {
        let text = self.metrics();
        text.lines().find_map(|l| l.strip_prefix(series).and_then(|rest| rest.strip_prefix(' '))).map(|v| v.trim().parse().unwrap())
    }

    /// Waits until no session is open (every session process has ended and been counted).
    fn wait_for_no_sessions(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.metric("hip_worker_sessions_open") != Some(0.0) {
            assert!(Instant::now() < deadline, "sessions still open:\n{}", self.metrics());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Starts `tenant_share verify` as `tenant`, running until `stop` exists and `min`
    /// rounds are done.
    fn verifier(&self, tenant: &str, stop: &Path, min: u32) -> Interactive {
        let mut cmd = self.command(&self.exe, tenant);
        cmd.args(["verify", &self.code.display().to_string(), &stop.display().to_string(), &min.to_string()]);
        Interactive::spawn(cmd)
    }
}

/// Our hipcc's build of `tests/hip/tenants/<name>.hip`, or why it cannot be built here.
fn hipcc_build(name: &str, out_dir: &Path) -> Result<PathBuf, String> {
    let hipcc = target_debug_dir().join("hipcc");
    if !hipcc.is_file() {
        return Err(format!("our hipcc is not built ({} is missing)", hipcc.display()));
    }
    let version = Command::new(&hipcc).arg("--version").output().map_err(|e| format!("cannot run {}: {e}", hipcc.display()))?;
    if !String::from_utf8_lossy(&version.stdout).lines().any(|l| l.starts_with("Compiler: ")) {
        return Err(format!("our hipcc finds no clang here ({})", String::from_utf8_lossy(&version.stderr).trim()));
    }
    let src = workspace_root().join(format!("tests/hip/tenants/{name}.hip"));
    let exe = out_dir.join(name);
    let out = Command::new(&hipcc).arg("-O2").arg("-o").arg(&exe).arg(&src).output().expect("run hipcc");
    assert!(
        out.status.success(),
        "hipcc {} failed:\n{}{}",
        src.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(exe)
}

fn finished(client: Interactive, what: &str) -> RunOutput {
    let out = client.finish(Duration::from_secs(120));
    assert!(out.success(), "{what}: {}", out.report());
    out
}

#[test]
fn a_wild_pointer_kernel_fails_its_client_only() {
    let _alone = one_at_a_time();
    let tenants = ["faulty", "steady", "later"].map(String::from);
    let scene = Scene::new("tenants_wild_pointer", &tenants);
    let wild = match hipcc_build("wild_pointer", scene.sandbox.path()) {
        Ok(exe) => exe,
        Err(why) => {
            transport_core::test_skip::skip(&format!("wild pointer through a hipcc-built program: {why}"));
            return;
        }
    };
    let stop = scene.sandbox.path().join("stop");
    // The steady client's kernels and copies run, checked, while the other one faults.
    let mut steady = scene.verifier("steady", &stop, 3);
    steady.expect_line("RUNNING", Duration::from_secs(60));
    let mut cmd = scene.command(&wild, "faulty");
    let faulty = hip_remote_tests::run_with_timeout(
        {
            cmd.env_remove("HIP_REMOTE_DEBUG");
            cmd
        },
        Duration::from_secs(60),
    );
    let report = faulty.report();
    // The program exits 0 only when the fault and every call after it reported an error.
    assert!(faulty.success(), "{report}");
    let fault = faulty.stdout.lines().find_map(|l| l.strip_prefix("FAULT ")).unwrap_or_else(|| panic!("no FAULT line: {report}"));
    let sticky = faulty.stdout.lines().find_map(|l| l.strip_prefix("STICKY ")).unwrap_or_else(|| panic!("no STICKY line: {report}"));
    assert!(!fault.starts_with("hipSuccess") && !sticky.contains("hipSuccess"), "{report}");
    eprintln!("the faulting client saw: FAULT {fault}; later calls: {sticky}");
    // The host backend runs the kernel in the session's process: the fault ended it.
    let log = scene.worker.log_text();
    assert!(log.contains("session process died"), "the worker did not see the session process die:\n{log}");
    std::fs::write(&stop, b"").unwrap();
    let steady_out = finished(steady, "the steady client beside the faulting one");
    let rounds: u32 = steady_out.stdout.lines().find_map(|l| l.strip_prefix("VERIFIED ")).and_then(|n| n.trim().parse().ok()).unwrap_or(0);
    assert!(rounds >= 3, "{}", steady_out.report());
    // A client that comes afterwards is served correctly.
    let later = scene.verifier("later", &stop, 5);
    let later_out = finished(later, "a client started after the fault");
    assert!(later_out.stdout.contains("VERIFIED 5"), "{}", later_out.report());
    let Scene { mut worker, .. } = scene;
    worker.assert_alive();
}

#[test]
fn equal_tenants_get_equal_shares_and_their_device_time_is_accounted() {
    let _alone = one_at_a_time();
    let tenants: Vec<String> = (0..CLIENTS).map(|i| format!("tenant-{i}")).collect();
    let scene = Scene::new("tenants_fair", &tenants);
    let code = scene.code.display().to_string();
    let mut clients: Vec<(Interactive, Instant)> = tenants
        .iter()
        .map(|tenant| {
            let mut cmd = scene.command(&scene.exe, tenant);
            cmd.args(["loop", &code, &SPIN_US.to_string()]);
            (Interactive::spawn(cmd), Instant::now())
        })
        .collect();
    for (client, _) in &mut clients {
        client.expect_line("READY", Duration::from_secs(60));
    }
    // One window for all: it opens once every client has its start line.
    let start = hip_worker::backend::host::usage::monotonic_nanos() + 200_000_000;
    let go = format!("go {start} {}", start + WINDOW.as_nanos() as u64);
    for (client, _) in &mut clients {
        client.send_line(&go);
    }
    let mut counts = Vec::new();
    for (i, (client, started)) in clients.into_iter().enumerate() {
        let out = finished(client, &format!("client {i}"));
        let line = out.stdout.lines().find_map(|l| l.strip_prefix("COUNT ")).unwrap_or_else(|| panic!("no COUNT line: {}", out.report()));
        let count: u64 = line.split_whitespace().next().unwrap().parse().unwrap();
        counts.push((count, started.elapsed()));
    }
    // Device time: each launch spun SPIN_US (plus the one before the window); no tenant used
    // more than its client's whole life.
    scene.wait_for_no_sessions();
    let text = scene.metrics();
    for (tenant, (count, lifetime)) in tenants.iter().zip(&counts) {
        let series = format!("hip_worker_tenant_device_seconds_total{{tenant=\"{tenant}\"}}");
        let seconds = scene.metric(&series).unwrap_or_else(|| panic!("no {series} in:\n{text}"));
        let least = (count + 1) as f64 * SPIN_US as f64 * 1e-6;
        assert!(seconds >= least, "{tenant}: {seconds} s of device time for {count} launches of {SPIN_US} µs each (at least {least} s)");
        assert!(seconds <= lifetime.as_secs_f64(), "{tenant}: {seconds} s of device time within a client life of {lifetime:?}");
        eprintln!("{tenant}: {count} launches, {seconds:.3} s of device time");
    }
    let (fastest, slowest) = (counts.iter().map(|c| c.0).max().unwrap(), counts.iter().map(|c| c.0).min().unwrap());
    let spread = fastest as f64 / slowest.max(1) as f64;
    eprintln!("launches per client in {WINDOW:?}: {:?}; slowest/fastest spread {spread:.3}", counts.iter().map(|c| c.0).collect::<Vec<_>>());
    assert!(slowest > 0, "a client got nothing done: {counts:?}");
    assert!(spread <= MAX_SPREAD, "equal clients got unequal shares: {counts:?} (fastest/slowest {spread:.3} > {MAX_SPREAD})");
    let Scene { mut worker, .. } = scene;
    worker.assert_alive();
}
