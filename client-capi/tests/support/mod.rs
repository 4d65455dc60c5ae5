//! Shared by client-capi's and client-hiprtc's end-to-end tests: the built artifacts, a
//! host-backend `hip-worker` on an ephemeral port, bounded program runs.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// `target/<profile>` (the test binary lives in its `deps/`).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent().and_then(Path::parent).expect("target/<profile>/deps").to_path_buf()
}

/// A built artifact of the workspace, or a panic saying how to build it.
pub fn artifact(name: &str) -> PathBuf {
    let path = profile_dir().join(name);
    assert!(path.is_file(), "{} is missing; run `cargo build --workspace` before these tests", path.display());
    path
}

/// The worker binary: `$HIP_REMOTE_TEST_WORKER`, else the workspace's `hip-worker`.
pub fn worker_binary() -> PathBuf {
    match std::env::var_os("HIP_REMOTE_TEST_WORKER") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => artifact("hip-worker"),
    }
}

/// A fresh empty directory under the system temp dir.
pub fn temp_dir(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hip-remote-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

/// A `hip-worker --backend host --allow-host-code` child (these tests load host modules), killed on drop.
pub struct Worker {
    child: Child,
    /// `host:port` it listens on.
    pub addr: String,
    log: PathBuf,
}

impl Worker {
    /// Starts one and waits (30 s at most) for its `hip-worker listening on ADDR` line.
    pub fn start(dir: &Path) -> Self {
        let log = dir.join("worker.log");
        let mut child = Command::new(worker_binary())
            .args(["--listen", "127.0.0.1:0", "--backend", "host", "--host-memory-mib", "256", "--allow-host-code"])
            .env_remove("HIP_REMOTE_TOKEN")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("worker log"))
            .spawn()
            .expect("start hip-worker");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(addr) = line.strip_prefix("hip-worker listening on ") {
                    let _ = tx.send(addr.trim().to_string());
                }
            }
        });
        let addr = rx.recv_timeout(Duration::from_secs(30)).unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("hip-worker printed no ready line; log:\n{}", std::fs::read_to_string(&log).unwrap_or_default())
        });
        Self { child, addr, log }
    }

    /// Its log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `cmd` to completion within `limit`, killing it past that.
pub fn run_bounded(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn test program");
    let deadline = Instant::now() + limit;
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("collect output");
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().expect("collect output");
            panic!("{cmd:?} ran past {limit:?}; stdout:\n{}", String::from_utf8_lossy(&out.stdout));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
