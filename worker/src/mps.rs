//! CUDA MPS for session processes (`hip-worker --mps`; `docs/ISOLATION.md`, "MPS").
//!
//! Without MPS, session processes with contexts of their own time-slice the GPU: one
//! context's kernels at a time. Under MPS their work goes through one server and runs
//! concurrently, as one context's streams do. The worker starts a control daemon of its own,
//! `nvidia-cuda-mps-control -d`, with private pipe and log directories (in a 0700 directory,
//! owned by the user session processes run as), gives session processes those directories
//! ([`MpsDaemon::child_env`]), and stops the daemon (`quit`) when it exits. Where MPS cannot
//! start, the worker refuses to start with the reason: it does not silently run without it.
//!
//! AMD GPUs need nothing of the kind: their hardware schedules the queues of several processes
//! concurrently, so ROCm has no MPS and `--mps` is refused on the hip backend.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The control program (shipped with the NVIDIA driver).
pub const MPS_CONTROL: &str = "nvidia-cuda-mps-control";
/// How long the daemon may take to create its control pipe.
pub const MPS_START_TIMEOUT: Duration = Duration::from_secs(10);
/// How long `quit` may take before the worker gives up waiting.
pub const MPS_STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// A running MPS control daemon of this worker; stopped when dropped.
#[derive(Debug)]
pub struct MpsDaemon {
    control: PathBuf,
    root: PathBuf,
    pipes: PathBuf,
    logs: PathBuf,
}

fn find_in_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| std::env::split_paths(&paths).map(|dir| dir.join(name)).find(|p| p.is_file()))
}

impl MpsDaemon {
    /// Starts a daemon whose directories `owner` (the session processes' user and group, when
    /// the worker switches to one) can use.
    pub fn start(owner: Option<(u32, u32)>) -> Result<Self, String> {
        let control = find_in_path(MPS_CONTROL).ok_or_else(|| {
            format!("--mps: CUDA MPS is not available here: {MPS_CONTROL} is not on PATH (it ships with the NVIDIA driver); run without --mps")
        })?;
        let base = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from).filter(|d| d.is_dir()).unwrap_or_else(std::env::temp_dir);
        let root = base.join(format!("hip-worker-mps-{}", std::process::id()));
        let daemon = Self { control, pipes: root.join("pipe"), logs: root.join("log"), root };
        daemon.make_dirs(owner).map_err(|e| format!("--mps: cannot create {}: {e}", daemon.root.display()))?;
        let status = Command::new(&daemon.control)
            .arg("-d")
            .envs(daemon.child_env())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("--mps: cannot run {}: {e}", daemon.control.display()))?;
        if !status.status.success() {
            return Err(format!(
                "--mps: {} -d failed ({}): {}{}",
                daemon.control.display(),
                status.status,
                String::from_utf8_lossy(&status.stderr).trim(),
                daemon.log_tail()
            ));
        }
        let deadline = Instant::now() + MPS_START_TIMEOUT;
        while !daemon.pipes.join("control").exists() {
            if Instant::now() >= deadline {
                return Err(format!("--mps: the MPS control daemon made no control pipe in {MPS_START_TIMEOUT:?}{}", daemon.log_tail()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        tracing::info!(dir = %daemon.root.display(), "CUDA MPS control daemon started for session processes");
        Ok(daemon)
    }

    fn make_dirs(&self, owner: Option<(u32, u32)>) -> std::io::Result<()> {
        use std::os::unix::fs::DirBuilderExt;
        for dir in [&self.root, &self.pipes, &self.logs] {
            std::fs::DirBuilder::new().mode(0o700).create(dir)?;
            if let Some((uid, gid)) = owner {
                std::os::unix::fs::chown(dir, Some(uid), Some(gid))?;
            }
        }
        Ok(())
    }

    /// The environment a session process needs to reach this daemon.
    pub fn child_env(&self) -> Vec<(OsString, OsString)> {
        vec![
            ("CUDA_MPS_PIPE_DIRECTORY".into(), self.pipes.clone().into_os_string()),
            ("CUDA_MPS_LOG_DIRECTORY".into(), self.logs.clone().into_os_string()),
        ]
    }

    /// The daemon's directory (pipes and logs).
    pub fn dir(&self) -> &Path {
        &self.root
    }

    /// The end of the control log, for an error message.
    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.logs.join("control.log")).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(5).collect();
        if tail.is_empty() {
            return String::new();
        }
        format!("; its log ends: {}", tail.into_iter().rev().collect::<Vec<_>>().join(" | "))
    }
}

impl Drop for MpsDaemon {
    fn drop(&mut self) {
        let quit = Command::new(&self.control).envs(self.child_env()).stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::null()).spawn();
        match quit {
            Ok(mut child) => {
                if let Some(mut stdin) = child.stdin.take() {
                    use std::io::Write;
                    let _ = stdin.write_all(b"quit\n");
                }
                let deadline = Instant::now() + MPS_STOP_TIMEOUT;
                loop {
                    match child.try_wait() {
                        Ok(Some(_)) => break,
                        Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                        _ => {
                            let _ = child.kill();
                            let _ = child.wait();
                            tracing::warn!("the MPS control daemon did not take `quit` in time");
                            break;
                        }
                    }
                }
                // The daemon removes its pipes as it exits.
                let deadline = Instant::now() + MPS_STOP_TIMEOUT;
                while self.pipes.join("control").exists() && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            Err(e) => tracing::warn!(%e, "cannot stop the MPS control daemon"),
        }
        if let Err(e) = std::fs::remove_dir_all(&self.root) {
            tracing::debug!(%e, dir = %self.root.display(), "MPS directory not removed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_the_control_program_mps_is_refused_with_the_reason() {
        if find_in_path(MPS_CONTROL).is_some() {
            return; // a machine with the NVIDIA driver: the GPU check covers it
        }
        let e = MpsDaemon::start(None).unwrap_err();
        assert!(e.contains("not available") && e.contains(MPS_CONTROL), "{e}");
    }
}
