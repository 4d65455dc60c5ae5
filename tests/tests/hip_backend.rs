//! `hip-worker --backend hip` where it cannot run: one clear line on stderr and exit status 2,
//! naming what was missing. (The backend itself runs in the chained suites:
//! `HIP_REMOTE_TEST_CHAIN=1`, see tests/src/lib.rs and scripts/test.sh.)

use std::process::{Command, Stdio};

/// Runs the worker with `--backend hip` and `args`; returns (exit code, stderr).
fn refused(args: &[&str]) -> (Option<i32>, String) {
    let worker = hip_remote_tests::target_debug_dir().join("hip-worker");
    assert!(worker.is_file(), "{} is missing: run `cargo build --workspace` first", worker.display());
    let out = Command::new(&worker)
        .args(["--listen", "127.0.0.1:0", "--backend", "hip", "--token", hip_remote_tests::TEST_TOKEN])
        .args(args)
        .env_remove("HIP_REMOTE_HIP_LIBRARY")
        .env_remove("HIP_REMOTE_WORKER")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run hip-worker");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn assert_one_line(stderr: &str) {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "expected one line on stderr, got:\n{stderr}");
    assert!(lines[0].starts_with("hip-worker: the hip backend is unavailable: "), "{stderr}");
}

#[test]
fn a_missing_library_is_one_clear_line() {
    let (code, stderr) = refused(&["--hip-library", "/nonexistent/rocm/lib/libamdhip64.so"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_one_line(&stderr);
    assert!(stderr.contains("cannot load /nonexistent/rocm/lib/libamdhip64.so"), "{stderr}");
}

#[test]
fn a_library_without_the_hip_api_names_the_missing_symbols() {
    // libc has none of them: every required entry point is named, on the one line.
    let (code, stderr) = refused(&["--hip-library", "libc.so.6"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_one_line(&stderr);
    for symbol in ["hipGetDeviceCount", "hipGetDevicePropertiesR0600", "hipModuleLaunchKernel", "hipMemcpyPeerAsync"] {
        assert!(stderr.contains(symbol), "{symbol} not named:\n{stderr}");
    }
    // Optional entry points are never reported missing.
    assert!(!stderr.contains("hipMemGetHandleForAddressRange") && !stderr.contains("hipRemoteFunctionParamLayout"), "{stderr}");
}

#[test]
fn auto_says_why_it_skipped_hip() {
    let worker = hip_remote_tests::target_debug_dir().join("hip-worker");
    let mut child = Command::new(&worker)
        .args(["--listen", "127.0.0.1:0", "--backend", "auto", "--host-memory-mib", "64", "--token", hip_remote_tests::TEST_TOKEN])
        .env("HIP_REMOTE_HIP_LIBRARY", "/nonexistent/libamdhip64.so")
        .env("NO_COLOR", "1")
        .env_remove("HIP_REMOTE_WORKER")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start hip-worker");
    // Read stderr until the worker says which backend it took, then stop it.
    use std::io::{BufRead, BufReader};
    let stderr = child.stderr.take().expect("piped stderr");
    let mut seen = String::new();
    for line in BufReader::new(stderr).lines() {
        let line = line.expect("read stderr");
        seen.push_str(&line);
        seen.push('\n');
        if line.contains("listening") || seen.lines().count() > 50 {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    if !seen.contains("backend auto: cuda skipped") {
        eprintln!("a CUDA device answered first: auto never tried hip here");
        return;
    }
    let hip_line = seen.lines().find(|l| l.contains("backend auto: hip skipped")).unwrap_or_else(|| panic!("no hip skip line:\n{seen}"));
    assert!(hip_line.contains("cannot load /nonexistent/libamdhip64.so") && hip_line.contains("using host emulation"), "{seen}");
}
