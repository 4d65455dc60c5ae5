//! `hip-worker --isolation process|shared` (docs/ISOLATION.md): the flag and its variable
//! parse, a GPU backend in process mode where no driver is says so in one line, and the
//! host backend's rule — host code always runs in session processes — holds whatever the
//! flag says. (Process isolation on a GPU: `scripts/device-isolation.sh` on the GPU machine.)

use hip_remote_tests::{target_debug_dir, TEST_TOKEN};
use std::process::{Command, Stdio};

/// Runs the worker with `args` (and `env`) until it exits; returns (exit code, stderr).
fn worker_exit(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let worker = target_debug_dir().join("hip-worker");
    assert!(worker.is_file(), "{} is missing: run `cargo build --workspace` first", worker.display());
    let mut command = Command::new(&worker);
    command
        .args(["--listen", "127.0.0.1:0", "--token", TEST_TOKEN, "--shm-socket", "none"])
        .args(args)
        .env_remove("HIP_REMOTE_ISOLATION")
        .env_remove("HIP_REMOTE_BACKEND")
        .env_remove("HIP_REMOTE_HIP_LIBRARY")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("run hip-worker");
    // A worker that found what it needs serves on: stopped here, it reports no exit code.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let code = loop {
        match child.try_wait().expect("wait for hip-worker") {
            Some(status) => break status.code(),
            None if std::time::Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            None => std::thread::sleep(std::time::Duration::from_millis(20)),
        }
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    (code, stderr)
}

fn one_line(stderr: &str) -> &str {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "expected one line on stderr, got:\n{stderr}");
    lines[0]
}

#[test]
fn a_bad_isolation_is_refused_naming_the_values() {
    for (args, env) in [(&["--isolation", "separate"][..], &[][..]), (&[][..], &[("HIP_REMOTE_ISOLATION", "separate")][..])] {
        let (code, stderr) = worker_exit(&[&["--backend", "host"][..], args].concat(), env);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains("separate") && stderr.contains("process") && stderr.contains("shared"), "{stderr}");
    }
}

#[test]
fn cuda_in_process_mode_without_a_driver_is_one_clear_line() {
    let (code, stderr) = worker_exit(&["--backend", "cuda", "--isolation", "process"], &[]);
    if code.is_none() {
        eprintln!("a CUDA driver and device answered here: nothing to refuse");
        return;
    }
    assert_eq!(code, Some(2), "{stderr}");
    let line = one_line(&stderr);
    assert!(line.starts_with("hip-worker: the cuda backend is unavailable: "), "{line}");
    assert!(line.contains("libcuda.so") || line.contains("without the `cuda` feature") || line.contains("no device"), "{line}");
}

#[test]
fn hip_in_process_mode_with_a_missing_library_is_one_clear_line() {
    let missing = "/nonexistent/rocm/lib/libamdhip64.so";
    let (code, stderr) = worker_exit(&["--backend", "hip", "--hip-library", missing], &[("HIP_REMOTE_ISOLATION", "process")]);
    assert_eq!(code, Some(2), "{stderr}");
    let line = one_line(&stderr);
    assert!(line.starts_with("hip-worker: the hip backend is unavailable: ") && line.contains(missing), "{line}");
}

/// Starts a host worker with `extra`, runs one client session (`hip-remote ping`) and
/// returns the worker's log.
fn log_after_one_session(label: &str, extra: &[&str]) -> String {
    use std::io::{BufRead, BufReader};
    let log = std::env::temp_dir().join(format!("hip-remote-isolation-{label}-{}.log", std::process::id()));
    let mut worker = Command::new(target_debug_dir().join("hip-worker"))
        .args(["--listen", "127.0.0.1:0", "--backend", "host", "--host-memory-mib", "64", "--token", TEST_TOKEN, "--shm-socket", "none"])
        .args(extra)
        .env_remove("HIP_REMOTE_ISOLATION")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("start hip-worker");
    let stdout = BufReader::new(worker.stdout.take().unwrap());
    let addr = stdout.lines().map_while(Result::ok).find_map(|l| l.strip_prefix("hip-worker listening on ").map(str::to_owned));
    let Some(addr) = addr else {
        let _ = worker.kill();
        panic!("the worker printed no ready line; log:\n{}", std::fs::read_to_string(&log).unwrap_or_default());
    };
    let mut ping = hip_remote_tests::client_command(&target_debug_dir().join("hip-remote"), &addr);
    ping.args(["ping", "--count", "3"]).arg("--worker").arg(&addr);
    let out = ping.output().expect("run hip-remote ping");
    let alive = worker.try_wait().unwrap().is_none();
    let _ = worker.kill();
    let _ = worker.wait();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    assert!(
        out.status.success(),
        "ping failed: {}{}\nworker log:\n{text}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(alive, "the worker exited; log:\n{text}");
    text
}

#[test]
fn host_code_runs_in_session_processes_whatever_the_isolation_says() {
    for isolation in ["shared", "process"] {
        let log = log_after_one_session(&format!("host-code-{isolation}"), &["--allow-host-code", "--isolation", isolation]);
        assert!(log.contains("session process started"), "--isolation {isolation}: the session did not get a process:\n{log}");
    }
    // Without host code, the host backend runs no client code: its sessions stay in the
    // worker, whatever the flag says.
    let log = log_after_one_session("no-host-code", &["--isolation", "process"]);
    assert!(!log.contains("session process started"), "a host session without host code got a process:\n{log}");
    assert!(log.contains("no client code runs"), "{log}");
}

/// Runs `hip-worker --session-child` for `backend` the way the worker starts one (its link as
/// stdin, the usage table as descriptor 3), as the user session processes switch to when run
/// as root; returns (exit code, stderr).
fn session_process(backend: hip_worker::sandbox::BackendSpec, label: &str, env: &[(&str, &str)]) -> (Option<i32>, String) {
    use hip_worker::backend::host::usage::SharedUsage;
    use hip_worker::sandbox::child::{ChildArgs, ChildLimits};
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::os::unix::process::CommandExt;
    let scratch = std::env::temp_dir().join(format!("hip-remote-isolation-{label}-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    // SAFETY: getuid has no preconditions.
    let root = unsafe { libc::getuid() } == 0;
    let args = ChildArgs {
        session_id: 1,
        client_name: "isolation test".into(),
        tenant: None,
        backend,
        max_queued_reply_bytes: 1 << 20,
        limits: ChildLimits { max_streams: 8, max_events: 8, max_modules: 8, max_memory: None, max_pending_bytes: 1 << 20 },
        max_file_bytes: 1 << 30,
        max_kernel_ms: None,
        shared: false,
        run_as: root.then_some((65534, 65534)),
        scratch: scratch.clone(),
        rtc_cache: None,
        log_filter: "info".into(),
        spin: std::time::Duration::ZERO,
        usage_row: 1,
        usage_rows: 1,
        usage_devices: 4,
    };
    let usage = SharedUsage::create(4, 1).unwrap();
    let usage_fd = usage.fd().as_raw_fd();
    let (_link, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    let mut command = Command::new(target_debug_dir().join("hip-worker"));
    command
        .arg(hip_worker::sandbox::CHILD_ARG)
        .args(args.to_args())
        .env_clear()
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .current_dir(&scratch)
        .stdin(Stdio::from(OwnedFd::from(theirs)))
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: dup2 and fcntl only, async-signal-safe, between fork and exec.
    unsafe {
        command.pre_exec(move || {
            let placed = if usage_fd == hip_worker::sandbox::USAGE_FD {
                libc::fcntl(usage_fd, libc::F_SETFD, 0)
            } else {
                libc::dup2(usage_fd, hip_worker::sandbox::USAGE_FD)
            };
            if placed < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
    let out = command.output().expect("run the session process");
    let _ = std::fs::remove_dir_all(&scratch);
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_gpu_session_process_confines_itself_then_says_why_its_driver_did_not_open() {
    use hip_worker::sandbox::{child::EXIT_SETUP_FAILED, BackendSpec};
    // No library at all: confined as a GPU process first, then the load fails, by name.
    let missing = "/nonexistent/rocm/lib/libamdhip64.so";
    let (code, stderr) = session_process(BackendSpec::Hip { library: missing.into(), selection: None }, "missing", &[]);
    assert_eq!(code, Some(i32::from(EXIT_SETUP_FAILED)), "{stderr}");
    assert!(stderr.contains("session process confined backend=\"hip\""), "{stderr}");
    assert!(stderr.contains("cannot open the hip backend the worker opened") && stderr.contains(missing), "{stderr}");
    // hip-remote's own HIP library, outside the system's directories: the confined process can
    // still load it (its directory is readable), and fails only where that library needs a
    // worker it may not reach.
    let ours = target_debug_dir().join("libamdhip64.so");
    let ours_spec = || BackendSpec::Hip { library: ours.clone(), selection: None };
    let (code, stderr) = session_process(ours_spec(), "ours", &[]);
    assert_eq!(code, Some(i32::from(EXIT_SETUP_FAILED)), "{stderr}");
    assert!(stderr.contains("session process confined backend=\"hip\""), "{stderr}");
    assert!(!stderr.contains("cannot load"), "the confined process could not load {}:\n{stderr}", ours.display());
    assert!(stderr.contains("hipGetDeviceCount"), "{stderr}");
    // It names its thread through /proc as the CUDA driver does (cuInit fails without it).
    assert!(!stderr.contains("cannot name its threads"), "{stderr}");
    // That library's TCP connection is refused by the GPU process's filter; a Unix socket
    // (what the CUDA driver's MPS client uses) may be made, and fails only on the missing path.
    if stderr.contains("seccomp=on") {
        assert!(stderr.contains("Operation not permitted"), "a TCP socket was not refused:\n{stderr}");
        let socket = std::env::temp_dir().join("hip-remote-isolation-no-such.sock");
        let worker = format!("shm://{}", socket.display());
        let (code, stderr) = session_process(ours_spec(), "unix", &[("HIP_REMOTE_WORKER", worker.as_str())]);
        assert_eq!(code, Some(i32::from(EXIT_SETUP_FAILED)), "{stderr}");
        assert!(stderr.contains("No such file or directory") && !stderr.contains("Operation not permitted"), "{stderr}");
    } else {
        eprintln!("seccomp not enforced here: the socket filter is not checked");
    }
}
