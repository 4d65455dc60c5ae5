//! Integration test harness for hip-remote.
//!
//! The tests drive the real artifacts the way an application would: C programs from
//! `tests/c/` are compiled with the system `cc` against our headers (`client-capi/include`)
//! and linked with the built drop-in `libamdhip64.so.7`; each test starts its own
//! `hip-worker --backend host` on an ephemeral port and runs the programs with
//! `HIP_REMOTE_WORKER` pointing at it.
//!
//! The artifacts come from `cargo build --workspace` (run before `cargo test`); the harness
//! looks for them in the workspace target directory (`CARGO_TARGET_DIR` respected) and fails
//! with a message naming that command when they are missing.
//!
//! Everything is bounded: the worker's ready line, every program run, so a hang fails the test
//! instead of blocking CI.
#![forbid(unsafe_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// Default limit for one C program run.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a worker may take to print its ready line.
pub const WORKER_START_TIMEOUT: Duration = Duration::from_secs(30);
/// Emulated device memory of a test worker, in MiB.
pub const DEFAULT_WORKER_MIB: u64 = 1024;

/// The workspace root (the parent of this crate's manifest directory).
pub fn workspace_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().expect("tests/ has a parent").to_path_buf()
}

/// The directory `cargo build` puts debug artifacts in: `$CARGO_TARGET_DIR/debug` (relative
/// values are relative to the workspace root) or `<workspace>/target/debug`.
pub fn target_debug_dir() -> PathBuf {
    let target = match std::env::var_os("CARGO_TARGET_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() {
                dir
            } else {
                workspace_root().join(dir)
            }
        }
        None => workspace_root().join("target"),
    };
    target.join("debug")
}

/// Paths of the built artifacts the tests need.
#[derive(Debug, Clone)]
pub struct Artifacts {
    /// The drop-in library (`libamdhip64.so`, soname `libamdhip64.so.7`).
    pub library: PathBuf,
    /// The drop-in `libhiprtc.so` (soname `libhiprtc.so.7`).
    pub hiprtc: PathBuf,
    /// The drop-in `libhipblas.so` (soname `libhipblas.so.3`).
    pub hipblas: PathBuf,
    /// The `hip-worker` binary.
    pub worker: PathBuf,
    /// `client-capi/include` (our HIP headers).
    pub include: PathBuf,
    /// `tests/c`.
    pub c_dir: PathBuf,
}

/// Locates the artifacts, panicking with instructions when they have not been built.
pub fn artifacts() -> Artifacts {
    let dir = target_debug_dir();
    let library = dir.join("libamdhip64.so");
    let hiprtc = dir.join("libhiprtc.so");
    let hipblas = dir.join("libhipblas.so");
    let worker = dir.join("hip-worker");
    for (path, what) in [
        (&library, "the drop-in libamdhip64.so"),
        (&hiprtc, "the drop-in libhiprtc.so"),
        (&hipblas, "the drop-in libhipblas.so"),
        (&worker, "the hip-worker binary"),
    ] {
        assert!(path.is_file(), "{what} is missing at {}; run `cargo build --workspace` before `cargo test -p hip-remote-tests`", path.display());
    }
    let root = workspace_root();
    Artifacts { library, hiprtc, hipblas, worker, include: root.join("client-capi/include"), c_dir: root.join("tests/c") }
}

/// A directory removed (with its contents) on drop, unless the test is failing and
/// `HIP_REMOTE_KEEP_TMP` is set.
#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// Creates `$TMPDIR/hip-remote-tests-<pid>-<n>-<label>`.
    pub fn new(label: &str) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let clean: String = label.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        let path = std::env::temp_dir().join(format!("hip-remote-tests-{}-{n}-{clean}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
        Self { path }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::thread::panicking() && std::env::var_os("HIP_REMOTE_KEEP_TMP").is_some() {
            eprintln!("keeping {}", self.path.display());
            return;
        }
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// One test's sandbox: a temp dir holding the library links (`libamdhip64.so.7` and
/// `libamdhip64.so` → the built library) and compiled programs.
#[derive(Debug)]
pub struct Sandbox {
    /// Built artifacts.
    pub artifacts: Artifacts,
    dir: TempDir,
}

impl Sandbox {
    /// A fresh sandbox for the test `label`.
    pub fn new(label: &str) -> Self {
        let artifacts = artifacts();
        let dir = TempDir::new(label);
        let lib = dir.path().join("lib");
        std::fs::create_dir_all(&lib).expect("create lib dir");
        for (name, target) in [
            ("libamdhip64.so.7", &artifacts.library),
            ("libamdhip64.so", &artifacts.library),
            ("libhiprtc.so.7", &artifacts.hiprtc),
            ("libhiprtc.so", &artifacts.hiprtc),
            ("libhipblas.so.3", &artifacts.hipblas),
            ("libhipblas.so", &artifacts.hipblas),
        ] {
            std::os::unix::fs::symlink(target, lib.join(name)).unwrap_or_else(|e| panic!("symlink {name} -> {}: {e}", target.display()));
        }
        Self { artifacts, dir }
    }

    /// The directory holding `libamdhip64.so.7`.
    pub fn lib_dir(&self) -> PathBuf {
        self.dir.path().join("lib")
    }

    /// The sandbox directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Compiles `tests/c/<name>.c` into the sandbox, linked with both drop-in libraries, and
    /// returns the executable's path.
    pub fn compile(&self, name: &str) -> PathBuf {
        self.compile_with(name, &["-lhiprtc", "-lamdhip64"])
    }

    /// Compiles `tests/c/<name>.c` into the sandbox with `link_args` (before `-lpthread`) and
    /// returns the executable's path.
    pub fn compile_with(&self, name: &str, link_args: &[&str]) -> PathBuf {
        let src = self.artifacts.c_dir.join(format!("{name}.c"));
        assert!(src.is_file(), "no C test program {}", src.display());
        let exe = self.dir.path().join(name);
        let lib = self.lib_dir();
        let cc = std::env::var("CC").ok().filter(|v| !v.is_empty()).unwrap_or_else(|| "cc".into());
        let mut cmd = Command::new(&cc);
        cmd.args(["-std=c11", "-Wall", "-Werror", "-g", "-O1"])
            .arg("-I")
            .arg(&self.artifacts.include)
            .arg(&src)
            .arg("-o")
            .arg(&exe)
            .arg(format!("-L{}", lib.display()))
            .args(link_args)
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-lpthread");
        let out = cmd.output().unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}`: {e}"));
        assert!(
            out.status.success(),
            "compiling {} failed ({}):\n{:?}\n{}{}",
            src.display(),
            out.status,
            cmd,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        exe
    }

    /// Starts a host-backend worker with the default memory size.
    pub fn start_worker(&self) -> WorkerProcess {
        self.start_worker_with(DEFAULT_WORKER_MIB)
    }

    /// Starts a host-backend worker with `mib` MiB of emulated device memory.
    pub fn start_worker_with(&self, mib: u64) -> WorkerProcess {
        WorkerProcess::start(&self.artifacts.worker, mib, &self.dir.path().join("worker.log"))
    }

    /// A worker serving every session in its own process ([`WorkerProcess::start_in_one_process`]).
    pub fn start_worker_in_one_process(&self) -> WorkerProcess {
        WorkerProcess::start_in_one_process(&self.artifacts.worker, DEFAULT_WORKER_MIB, &self.dir.path().join("worker.log"))
    }

    /// [`Sandbox::start_worker_in_one_process`] with more command-line arguments (`extra`).
    pub fn start_worker_in_one_process_args(&self, extra: &[String]) -> WorkerProcess {
        if chain_requested() {
            let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
            return WorkerProcess::start_chain(&self.artifacts.worker, DEFAULT_WORKER_MIB, &self.dir.path().join("worker.log"), &extra);
        }
        let mut args =
            ["--listen", "127.0.0.1:0", "--backend", "host", "--host-memory-mib", &DEFAULT_WORKER_MIB.to_string()].map(String::from).to_vec();
        args.extend(extra.iter().cloned());
        WorkerProcess::spawn(&self.artifacts.worker, &args, &[], &self.dir.path().join("worker.log"))
    }

    /// Starts a host-backend worker with more command-line arguments (`extra`).
    pub fn start_worker_args(&self, extra: &[String]) -> WorkerProcess {
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        WorkerProcess::start_with_args(&self.artifacts.worker, DEFAULT_WORKER_MIB, &self.dir.path().join("worker.log"), &extra)
    }

    /// Starts a host-backend worker emulating `devices` devices.
    pub fn start_worker_devices(&self, devices: u32) -> WorkerProcess {
        let devices = devices.to_string();
        WorkerProcess::start_with_args(&self.artifacts.worker, DEFAULT_WORKER_MIB, &self.dir.path().join("worker.log"), &["--host-devices", &devices])
    }
}

/// The token every test worker requires and every client command presents, so the C
/// programs run through challenge-response authentication.
pub const TEST_TOKEN: &str = "hip-remote-test-token";

/// A `hip-worker` child process, killed on drop.
#[derive(Debug)]
pub struct WorkerProcess {
    child: Child,
    addr: String,
    log: PathBuf,
    /// What the worker printed on stdout after its ready line (in a chain, the front worker's
    /// HIP runtime prints device output there, as GPU runtimes do).
    stdout: Arc<Mutex<String>>,
    /// In a chain, the host-backend worker this one's HIP calls go to (stopped after it).
    upstream: Option<Box<WorkerProcess>>,
    /// The same-host listener's socket (`--shm-socket`, one per test worker, removed on drop),
    /// once the worker said it listens there.
    shm_socket: Arc<Mutex<Option<String>>>,
    /// The socket path given to the worker (removed on drop: a killed worker leaves it).
    shm_socket_file: Option<PathBuf>,
}

/// Whether `HIP_REMOTE_TEST_CHAIN=1` asks for chained workers.
pub fn chain_requested() -> bool {
    std::env::var("HIP_REMOTE_TEST_CHAIN").is_ok_and(|v| v == "1")
}

impl WorkerProcess {
    /// Starts `worker --listen 127.0.0.1:0 --backend host --host-memory-mib MIB --token
    /// TEST_TOKEN` and waits for
    /// its `hip-worker listening on ADDR` line. The worker's stderr goes to `log`.
    pub fn start(worker: &Path, mib: u64, log: &Path) -> Self {
        Self::start_with_args(worker, mib, log, &[])
    }

    /// [`WorkerProcess::start`] with more command-line arguments. With
    /// `HIP_REMOTE_TEST_CHAIN=1` in the environment it starts a chain instead
    /// ([`WorkerProcess::start_chain`]): the returned worker is the hip-backend one.
    pub fn start_with_args(worker: &Path, mib: u64, log: &Path, extra: &[&str]) -> Self {
        if chain_requested() {
            return Self::start_chain(worker, mib, log, extra);
        }
        let mut args: Vec<String> =
            ["--listen", "127.0.0.1:0", "--backend", "host", "--allow-host-code", "--host-memory-mib"].map(String::from).to_vec();
        args.push(mib.to_string());
        args.extend(extra.iter().map(|a| a.to_string()));
        Self::spawn(worker, &args, &[], log)
    }

    /// [`WorkerProcess::start`] without `--allow-host-code`: every session in the worker's
    /// own process (what objects shared between sessions of one worker need on the host
    /// backend, whose sessions otherwise run in processes of their own). Chained as
    /// [`WorkerProcess::start_with_args`] with `HIP_REMOTE_TEST_CHAIN=1`.
    pub fn start_in_one_process(worker: &Path, mib: u64, log: &Path) -> Self {
        Self::start_in_one_process_with_args(worker, mib, log, &[])
    }

    /// [`WorkerProcess::start_in_one_process`] with more command-line arguments.
    pub fn start_in_one_process_with_args(worker: &Path, mib: u64, log: &Path, extra: &[&str]) -> Self {
        if chain_requested() {
            return Self::start_chain(worker, mib, log, extra);
        }
        let mut args = ["--listen", "127.0.0.1:0", "--backend", "host", "--host-memory-mib", &mib.to_string()].map(String::from).to_vec();
        args.extend(extra.iter().map(|a| a.to_string()));
        Self::spawn(worker, &args, &[], log)
    }

    /// A chained pair: worker B (`--backend host`, with `extra`, logging to
    /// `<log>.upstream.log`) and worker A (`--backend hip --hip-library <our
    /// libamdhip64.so>`, logging to `log`) whose HIP calls go to B through that library.
    /// Returns A, which owns B: dropping A stops both, and a failing test shows both logs.
    pub fn start_chain(worker: &Path, mib: u64, log: &Path, extra: &[&str]) -> Self {
        let mut upstream_args: Vec<String> =
            ["--listen", "127.0.0.1:0", "--backend", "host", "--allow-host-code", "--host-memory-mib"].map(String::from).to_vec();
        upstream_args.push(mib.to_string());
        upstream_args.extend(extra.iter().map(|a| a.to_string()));
        let upstream = Self::spawn(worker, &upstream_args, &[], &log.with_extension("upstream.log"));
        let library = artifacts().library;
        // Sessions of A end with their connection (no resume grace): tests of killed clients
        // expect their memory back at once; resume has tests of its own.
        let args = [
            "--listen".to_string(),
            "127.0.0.1:0".into(),
            "--backend".into(),
            "hip".into(),
            "--hip-library".into(),
            library.display().to_string(),
            "--resume-grace-s".into(),
            "0".into(),
        ];
        // HIP_REMOTE_DEBUG: the library in A explains each failed call in A's log, with the
        // message B gave (a device assert's text, for one), which HIP's API cannot pass on.
        let env = [("HIP_REMOTE_WORKER", upstream.addr.clone()), ("HIP_REMOTE_TOKEN", TEST_TOKEN.to_string()), ("HIP_REMOTE_DEBUG", "1".to_string())];
        let mut me = Self::spawn(worker, &args, &env, log);
        me.upstream = Some(Box::new(upstream));
        me
    }

    /// Starts `worker args... --token TEST_TOKEN` with `env` (exactly the arguments given,
    /// nothing added but the token and the same-host socket) and waits for its ready line.
    pub fn start_exactly(worker: &Path, args: &[&str], env: &[(&str, String)], log: &Path) -> Self {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        Self::spawn(worker, &args, env, log)
    }

    /// Starts `worker args... --token TEST_TOKEN` with `env` and waits for its ready line.
    /// Unless `args` name one, the worker's same-host socket is a fresh path of its own.
    fn spawn(worker: &Path, args: &[String], env: &[(&str, String)], log: &Path) -> Self {
        static NEXT_SOCKET: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let log_file = std::fs::File::create(log).expect("create worker log");
        let shm_socket_file = (!args.iter().any(|a| a == "--shm-socket")).then(|| {
            let n = NEXT_SOCKET.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            // Short and in the temporary directory: a Unix socket path has at most 107 bytes.
            std::env::temp_dir().join(format!("hip-remote-test-{}-{n}.sock", std::process::id()))
        });
        let shm_args = shm_socket_file.iter().flat_map(|p| ["--shm-socket".to_string(), p.display().to_string()]);
        let mut child = Command::new(worker)
            .args(args)
            .args(shm_args)
            .args(["--token", TEST_TOKEN])
            .env_remove("HIP_REMOTE_TOKEN")
            .env_remove("HIP_REMOTE_LISTEN")
            .env_remove("HIP_REMOTE_WORKER")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log_file))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", worker.display()));
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        let printed = Arc::new(Mutex::new(String::new()));
        let keep = Arc::clone(&printed);
        let shm_socket = Arc::new(Mutex::new(None));
        let shm_seen = Arc::clone(&shm_socket);
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let mut sent = false;
            // Keeps draining so the worker never blocks on a full pipe.
            for line in lines.by_ref() {
                let Ok(line) = line else { break };
                if let Some(path) = line.strip_prefix("hip-worker listening on shm://") {
                    *shm_seen.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(path.trim().to_string());
                } else if sent {
                    let mut kept = keep.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                    kept.push_str(&line);
                    kept.push('\n');
                } else if let Some(addr) = line.strip_prefix("hip-worker listening on ") {
                    let _ = tx.send(addr.trim().to_string());
                    sent = true;
                }
            }
        });
        let mut me = Self { child, addr: String::new(), log: log.to_path_buf(), stdout: printed, upstream: None, shm_socket, shm_socket_file };
        match rx.recv_timeout(WORKER_START_TIMEOUT) {
            Ok(addr) => me.addr = addr,
            Err(_) => {
                let status = me.child.try_wait().ok().flatten();
                panic!("hip-worker printed no ready line within {WORKER_START_TIMEOUT:?} (exit status {status:?}); log:\n{}", me.log_text());
            }
        }
        me
    }

    /// `host:port` the worker listens on.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// The worker's same-host socket (`shm://` + this), waiting up to a few seconds for the
    /// line that says it listens there (printed just after the TCP ready line).
    pub fn shm_socket(&self) -> Option<String> {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let seen = self.shm_socket.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
            if seen.is_some() || std::time::Instant::now() >= deadline {
                return seen;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The worker's process id (to stop and continue it).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The worker's log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// What the worker printed on stdout so far, after its ready line.
    pub fn stdout_text(&self) -> String {
        self.stdout.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    /// In a chain, the host-backend worker behind this one.
    pub fn upstream(&self) -> Option<&WorkerProcess> {
        self.upstream.as_deref()
    }

    /// Panics if the worker process (or, in a chain, the one behind it) has exited.
    pub fn assert_alive(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("hip-worker exited ({status}); log:\n{}", self.log_text());
        }
        if let Some(upstream) = self.upstream.as_deref_mut() {
            upstream.assert_alive();
        }
    }

    /// SIGKILLs the worker (in a chain, the front one) now and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// A command for `exe` with `HIP_REMOTE_WORKER` pointing at this worker.
    pub fn command(&self, exe: &Path) -> Command {
        client_command(exe, &self.addr)
    }

    /// Runs `exe args...` against this worker and waits (bounded by [`RUN_TIMEOUT`]).
    pub fn run(&self, exe: &Path, args: &[&str]) -> RunOutput {
        let mut cmd = self.command(exe);
        cmd.args(args);
        run_with_timeout(cmd, RUN_TIMEOUT)
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(path) = &self.shm_socket_file {
            let _ = std::fs::remove_file(path);
        }
        if std::thread::panicking() {
            let role = if self.upstream.is_some() { "chained hip-backend worker A" } else { "hip-worker" };
            eprintln!("---- {role} log ({}) ----\n{}", self.addr, self.log_text());
        }
        // The upstream worker (B) drops after this, printing its own log on a panic.
    }
}

/// A command for a client program talking to `worker_addr`, with the client's other
/// configuration variables cleared so the developer's environment cannot interfere. It stays
/// on TCP (`HIP_REMOTE_SHM=off`): the same-host transport has its own tests
/// (`tests/shm.rs`); `HIP_REMOTE_TEST_SHM=1` runs every client through it instead (moved
/// there from TCP).
pub fn client_command(exe: &Path, worker_addr: &str) -> Command {
    let mut cmd = Command::new(exe);
    let shm = if std::env::var("HIP_REMOTE_TEST_SHM").is_ok_and(|v| v == "1") { "auto" } else { "off" };
    cmd.env("HIP_REMOTE_WORKER", worker_addr)
        .env("HIP_REMOTE_SHM", shm)
        .env("HIP_REMOTE_DEBUG", "1")
        .env("HIP_REMOTE_TOKEN", TEST_TOKEN)
        .env_remove("TF_WORKER_HOST")
        .env_remove("TF_WORKER_PORT")
        .env_remove("HIP_REMOTE_CONNECT_TIMEOUT")
        .env_remove("HIP_REMOTE_IO_TIMEOUT");
    for tls in ["HIP_REMOTE_TLS", "HIP_REMOTE_TLS_CA", "HIP_REMOTE_TLS_CERT", "HIP_REMOTE_TLS_KEY", "HIP_REMOTE_TLS_SERVER_NAME"] {
        cmd.env_remove(tls);
    }
    // The client applies these as ROCm does: a test sets the ones it means.
    for visibility in ["HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"] {
        cmd.env_remove(visibility);
    }
    cmd
}

/// A certificate authority made for one test, with a worker certificate for `localhost` and
/// `127.0.0.1` and a client certificate, as PEM files: `ca.pem`, `server.pem`/`server.key`,
/// `client.pem`/`client.key`.
#[derive(Debug)]
pub struct TestPki {
    dir: TempDir,
}

impl TestPki {
    /// Generates the CA and both certificates (ECDSA P-256).
    pub fn new(label: &str) -> Self {
        let dir = TempDir::new(&format!("pki-{label}"));
        let ca_key = rcgen::KeyPair::generate().expect("CA key");
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params.distinguished_name.push(rcgen::DnType::CommonName, format!("hip-remote test CA {label}"));
        let ca = ca_params.self_signed(&ca_key).expect("CA certificate");
        let write = |name: &str, text: String| std::fs::write(dir.path().join(name), text).expect("write PEM");
        write("ca.pem", ca.pem());
        for (name, sans) in [("server", vec!["localhost".to_string(), "127.0.0.1".to_string()]), ("client", vec!["hip-remote-client".to_string()])] {
            let key = rcgen::KeyPair::generate().expect("key");
            let cert = rcgen::CertificateParams::new(sans).expect("params").signed_by(&key, &ca, &ca_key).expect("certificate");
            write(&format!("{name}.pem"), cert.pem());
            write(&format!("{name}.key"), key.serialize_pem());
        }
        Self { dir }
    }

    /// One of the PEM files.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The worker's flags serving TLS with this CA's certificate (and requiring client
    /// certificates when `client_ca`).
    pub fn worker_args(&self, client_ca: bool) -> Vec<String> {
        let mut args = vec![
            "--tls-cert".into(),
            self.path("server.pem").display().to_string(),
            "--tls-key".into(),
            self.path("server.key").display().to_string(),
        ];
        if client_ca {
            args.extend(["--tls-client-ca".into(), self.path("ca.pem").display().to_string()]);
        }
        args
    }
}

/// What a finished (or timed-out) program run produced.
#[derive(Debug)]
pub struct RunOutput {
    /// What was run.
    pub what: String,
    /// Exit status (`None` when it timed out and was killed).
    pub status: Option<ExitStatus>,
    /// Whether it ran past its limit.
    pub timed_out: bool,
    /// Wall time.
    pub elapsed: Duration,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl RunOutput {
    /// Whether it exited with status 0.
    pub fn success(&self) -> bool {
        !self.timed_out && self.status.is_some_and(|s| s.success())
    }

    /// A report of the run for failure messages.
    pub fn report(&self) -> String {
        format!(
            "{} — {}, {:.1?}\n---- stdout ----\n{}---- stderr ----\n{}",
            self.what,
            if self.timed_out { "TIMED OUT".to_string() } else { format!("{:?}", self.status) },
            self.elapsed,
            self.stdout,
            self.stderr
        )
    }

    /// Panics with the full output unless the program exited with status 0.
    #[track_caller]
    pub fn assert_success(&self) -> &Self {
        assert!(self.success(), "program failed: {}", self.report());
        self
    }
}

fn spawn_reader(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// Runs `cmd` with piped output; kills it after `limit`.
pub fn run_with_timeout(mut cmd: Command, limit: Duration) -> RunOutput {
    let what = format!("{cmd:?}");
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let out = spawn_reader(child.stdout.take().expect("piped"));
    let err = spawn_reader(child.stderr.take().expect("piped"));
    let (status, timed_out) = wait_bounded(&mut child, limit);
    RunOutput { what, status, timed_out, elapsed: start.elapsed(), stdout: out.join().unwrap_or_default(), stderr: err.join().unwrap_or_default() }
}

/// Waits for `child` up to `limit`; kills it (SIGKILL) when it runs past.
pub fn wait_bounded(child: &mut Child, limit: Duration) -> (Option<ExitStatus>, bool) {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return (Some(status), false),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return (None, true);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => panic!("waiting for a child failed: {e}"),
        }
    }
}

/// A client program kept running while the test talks to it through stdin/stdout (for the
/// cross-session and kill tests). Killed on drop.
#[derive(Debug)]
pub struct Interactive {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
    stderr: Option<std::thread::JoinHandle<String>>,
    what: String,
}

impl Interactive {
    /// Starts `cmd` with piped stdin/stdout/stderr.
    pub fn spawn(mut cmd: Command) -> Self {
        let what = format!("{cmd:?}");
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
        let stdout: ChildStdout = child.stdout.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Some(spawn_reader(child.stderr.take().expect("piped")));
        Self { stdin: child.stdin.take(), child, lines, seen: Vec::new(), stderr, what }
    }

    /// Waits (up to `limit`) for a stdout line starting with `prefix`; returns the rest of it.
    pub fn expect_line(&mut self, prefix: &str, limit: Duration) -> String {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if let Some(rest) = line.strip_prefix(prefix) {
                        return rest.trim().to_string();
                    }
                }
                Err(_) => {
                    let _ = self.child.kill();
                    let status = self.child.wait().ok();
                    let stderr = self.stderr.take().map(|h| h.join().unwrap_or_default()).unwrap_or_default();
                    panic!(
                        "{}: no line starting with {prefix:?} within {limit:?} (status {status:?})\n---- stdout ----\n{}\n---- stderr ----\n{stderr}",
                        self.what,
                        self.seen.join("\n")
                    );
                }
            }
        }
    }

    /// Writes a line to the program's stdin.
    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        writeln!(stdin, "{line}").and_then(|_| stdin.flush()).expect("write to child stdin");
    }

    /// SIGKILLs the program now.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Closes stdin and waits (bounded) for the program to exit; returns its output.
    pub fn finish(mut self, limit: Duration) -> RunOutput {
        drop(self.stdin.take());
        let start = Instant::now();
        let (status, timed_out) = wait_bounded(&mut self.child, limit);
        let mut rest: Vec<String> = std::mem::take(&mut self.seen);
        // The reader thread ends at EOF; collect what it still holds.
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(2)) {
            rest.push(line);
        }
        let stderr = self.stderr.take().map(|h| h.join().unwrap_or_default()).unwrap_or_default();
        RunOutput {
            what: self.what.clone(),
            status,
            timed_out,
            elapsed: start.elapsed(),
            stdout: rest.iter().map(|l| format!("{l}\n")).collect(),
            stderr,
        }
    }
}

impl Drop for Interactive {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `cmd` (the `worker_dies_midcopy` program) against `worker` and SIGKILLs the worker
/// once the program has finished a first whole copy, with the next one under way; returns the
/// program's run. `worker` is dead afterwards.
pub fn kill_worker_midcopy(worker: &mut WorkerProcess, cmd: Command) -> RunOutput {
    let mut client = Interactive::spawn(cmd);
    client.expect_line("READY", Duration::from_secs(60));
    client.expect_line("COPIED 0", Duration::from_secs(60));
    worker.kill();
    client.finish(Duration::from_secs(60))
}

/// Asserts that a `worker_dies_midcopy` run lost its worker the documented way: the copy
/// failed with hipErrorNotInitialized and the program exited normally (a SIGPIPE from the
/// library's writes to the dead worker would have killed it: status signal 13).
#[track_caller]
pub fn assert_lost_worker_cleanly(out: &RunOutput) {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        let signal = out.status.and_then(|s| s.signal());
        assert_ne!(signal, Some(13), "the application was killed by SIGPIPE: {}", out.report());
    }
    out.assert_success();
    assert!(out.stdout.contains("LOST hipErrorNotInitialized"), "no LOST line: {}", out.report());
    assert!(out.stdout.contains("PASS worker_dies_midcopy"), "no PASS line: {}", out.report());
}

/// A TCP port on 127.0.0.1 that nothing listens on (bound, then released).
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    let port = listener.local_addr().expect("local addr").port();
    drop(listener);
    port
}
