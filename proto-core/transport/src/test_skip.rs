//! Skips inside test functions, counted by the test command: a test that cannot run here
//! (no compiler, no RDMA device, a kernel without Landlock) calls [`skip`] and returns. The
//! reason goes to stderr and, when `HIP_REMOTE_TEST_SKIPS` names a file (as
//! `scripts/test.sh` sets it), is appended there, so the summary lists it as a skip rather
//! than letting the passing test hide it.

use std::io::Write;

/// Records that the calling test skipped its check, and why.
pub fn skip(reason: &str) {
    eprintln!("SKIP: {reason}");
    if let Some(path) = std::env::var_os("HIP_REMOTE_TEST_SKIPS") {
        let line = format!("{reason}\n");
        let written = std::fs::OpenOptions::new().create(true).append(true).open(&path).and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            eprintln!("cannot record the skip in {}: {e}", path.to_string_lossy());
        }
    }
}
