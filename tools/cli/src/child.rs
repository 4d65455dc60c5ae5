//! Parallel copies from K *processes*: the bench re-executes itself as `hip-remote
//! bench-child` (hidden), once per process. The client library keeps one connection per
//! process, so K processes give K connections (K threads of one process share one).
//!
//! Protocol on the child's stdin/stdout, one word a line: the child sets up (stream, device
//! buffer, pinned host buffer, one warm-up copy each way) and prints `ready`; the parent then
//! sends `h2d` or `d2h` to every child at once, each child does its copies and prints `done`;
//! `exit` (or end of input) ends it. The parent times from its first command to the last
//! `done`. Other output lines are ignored.

use crate::hip::Hip;
use std::ffi::c_void;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

/// The child's side.
pub fn child_main(lib: &PathBuf, bytes: usize, reps: usize) -> Result<(), String> {
    if std::env::var_os("HIP_REMOTE_WORKER").is_none() {
        return Err("bench-child needs HIP_REMOTE_WORKER".into());
    }
    let hip = Hip::load(lib)?;
    let (mut stream, mut dev, mut host) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut::<c_void>());
    // SAFETY: HIP API contracts: valid out-pointers, buffers of `bytes`.
    unsafe {
        hip.check("hipStreamCreate", (hip.stream_create)(&mut stream))?;
        hip.check("hipMalloc", (hip.malloc)(&mut dev, bytes))?;
        hip.check("hipHostMalloc", (hip.host_malloc)(&mut host, bytes, 0))?;
        std::ptr::write_bytes(host as *mut u8, 7, bytes);
    }
    let copy = |h2d: bool, n: usize| -> Result<(), String> {
        let (dst, src, kind) = if h2d { (dev, host, 1) } else { (host, dev, 2) };
        for _ in 0..n {
            // SAFETY: both buffers hold `bytes`; the stream is ours.
            unsafe {
                hip.check("hipMemcpyAsync", (hip.memcpy_async)(dst, src, bytes, kind, stream))?;
                hip.check("hipStreamSynchronize", (hip.stream_synchronize)(stream))?;
            }
        }
        Ok(())
    };
    copy(true, 1)?;
    copy(false, 1)?;
    let mut out = std::io::stdout().lock();
    let say = |out: &mut std::io::StdoutLock<'_>, what: &str| writeln!(out, "{what}").and_then(|_| out.flush()).map_err(|e| e.to_string());
    say(&mut out, "ready")?;
    for line in std::io::stdin().lock().lines() {
        match line.map_err(|e| e.to_string())?.trim() {
            "h2d" => copy(true, reps)?,
            "d2h" => copy(false, reps)?,
            "exit" => break,
            other => return Err(format!("unknown command {other:?}")),
        }
        say(&mut out, "done")?;
    }
    // SAFETY: allocated above, released once.
    unsafe {
        let _ = (hip.stream_destroy)(stream);
        let _ = (hip.free)(dev);
        let _ = (hip.host_free)(host);
    }
    Ok(())
}

/// How long a child may take to leave after `exit` before it is killed.
const EXIT_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// A child process driven one line at a time on its stdin and stdout: `bench-child` here,
/// `tenants-child` (`crate::tenants`). Dropped, it is sent `exit` and given [`EXIT_GRACE`] to
/// release its HIP resources, then killed.
pub struct LineChild {
    /// The child's subcommand, for errors.
    name: &'static str,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl LineChild {
    /// Starts `command` (this executable's `name` subcommand) with piped stdin and stdout; its
    /// stderr is ours.
    pub fn spawn(mut command: Command, name: &'static str) -> Result<Self, String> {
        let mut child =
            command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().map_err(|e| format!("cannot start {name}: {e}"))?;
        let stdin = child.stdin.take().ok_or("no child stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no child stdout")?);
        Ok(Self { name, child, stdin, stdout })
    }

    /// The rest of the next line that starts with `word` (other lines are skipped); an early
    /// end of output is the child's failure.
    pub fn expect(&mut self, word: &str) -> Result<String, String> {
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
                let status = self.child.wait().map(|s| s.to_string()).unwrap_or_default();
                return Err(format!("a {} ended before `{word}` ({status}; its stderr is above)", self.name));
            }
            if let Some(rest) = line.trim().strip_prefix(word) {
                return Ok(rest.trim().to_owned());
            }
        }
    }

    /// Sends one line.
    pub fn send(&mut self, line: &str) -> Result<(), String> {
        writeln!(self.stdin, "{line}").and_then(|_| self.stdin.flush()).map_err(|e| e.to_string())
    }
}

impl Drop for LineChild {
    fn drop(&mut self) {
        let _ = self.send("exit");
        let deadline = Instant::now() + EXIT_GRACE;
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(None) => std::thread::sleep(std::time::Duration::from_millis(10)),
                _ => return,
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Aggregate `(h2d, d2h)` GB/s of `k` child processes, each copying `bytes` `reps` times.
pub fn processes_gbps(lib: &Path, k: usize, bytes: usize, reps: usize) -> Result<(f64, f64), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut kids = Vec::new();
    for _ in 0..k {
        let mut command = Command::new(&exe);
        command.args(["bench-child", "--lib"]).arg(lib).args(["--bytes", &bytes.to_string(), "--reps", &reps.to_string()]);
        kids.push(LineChild::spawn(command, "bench-child")?);
    }
    for kid in &mut kids {
        kid.expect("ready")?;
    }
    let mut phase = |word: &str| -> Result<f64, String> {
        let t = Instant::now();
        for kid in &mut kids {
            kid.send(word)?;
        }
        for kid in &mut kids {
            kid.expect("done")?;
        }
        Ok((k * reps * bytes) as f64 / t.elapsed().as_secs_f64() / 1e9)
    };
    let h2d = phase("h2d")?;
    let d2h = phase("d2h")?;
    Ok((h2d, d2h))
}
