//! `hip-remote wan-bench` on the host backend through the WAN proxy: round trips of a steady
//! step within the target, the proxy's delay visible in the times, `HIP_REMOTE_PROFILE=1`'s
//! table of waited calls, and a wrong token still refused with a clear message now that
//! AUTHENTICATE is not waited for.
//!
//! Needs the client library built next to the executable (`cargo build --workspace` first, as
//! CI does) and a C++ compiler for the host backend's kernels.

use hip_worker::{Worker, WorkerConfig};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

/// The tests of this file run one at a time: each runs a worker and client processes, and
/// their timings compare phases of one run, which two at once on a 2-core machine distort.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

fn library(exe: &Path) -> PathBuf {
    let name = if cfg!(target_os = "macos") { "libamdhip64.dylib" } else { "libamdhip64.so" };
    let lib = exe.parent().expect("a directory").join(name);
    assert!(lib.is_file(), "the client library is missing at {}; run `cargo build --workspace` first", lib.display());
    lib
}

fn have_cxx() -> bool {
    let cxx = std::env::var("HIP_REMOTE_CXX").unwrap_or_else(|_| "c++".into());
    Command::new(cxx).arg("--version").output().is_ok_and(|o| o.status.success())
}

fn wan_bench(extra_env: &[(&str, &str)], rtts: &str, json: &Path) -> std::process::Output {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_hip-remote"));
    let lib = library(&exe);
    let mut cmd = Command::new(&exe);
    cmd.args(["wan-bench", "--backend", "host", "--rtt", rtts, "--weights-mib", "2", "--steps", "3", "--train-steps", "2", "--lib"])
        .arg(&lib)
        .arg("--json")
        .arg(json)
        .env_remove("HIP_REMOTE_WORKER")
        .env_remove("HIP_REMOTE_PROFILE")
        // The default: lookups of kernels the module's image shows are posted.
        .env_remove("HIP_REMOTE_POSTED_LOOKUPS");
    cmd.envs(extra_env.iter().copied());
    cmd.output().expect("hip-remote runs")
}

#[test]
fn steady_step_is_one_round_trip_and_delay_shows() {
    let _serial = one_at_a_time();
    if !have_cxx() {
        eprintln!("no C++ compiler: the host backend cannot build kernels; skipped");
        return;
    }
    let json_path = std::env::temp_dir().join(format!("hip-remote-wan-{}.json", std::process::id()));
    let out = wan_bench(&[("HIP_REMOTE_PROFILE", "1")], "0,20", &json_path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "wan-bench failed:\n{stderr}\n{}", String::from_utf8_lossy(&out.stdout));
    let rows: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).expect("JSON");
    let _ = std::fs::remove_file(&json_path);
    let rows = rows.as_array().expect("one row per RTT");
    assert_eq!(rows.len(), 2);
    for r in rows {
        // The targets (tools/cli/src/wan.rs): a steady step sends once and waits once.
        let step = r["step"]["round_trips"].as_f64().unwrap();
        assert!(step <= 1.0, "a steady step took {step} round trips: {r}");
        let train = r["train"]["round_trips"].as_f64().unwrap();
        assert!(train <= 1.0, "a training step took {train} round trips: {r}");
        assert!(r["weights"]["up_bytes"].as_u64().unwrap() >= 2 << 20, "{r}");
    }
    // The proxy's delay: every round trip of a 20 ms link costs ≥ 20 ms.
    let slow = &rows[1];
    assert_eq!(slow["rtt_ms"], 20.0);
    // Connect, HELLO, AUTHENTICATE with the device count (and device 0's properties, which
    // the first launch needs) in one burst, then the module load, the function lookup (the
    // hiprtc module lists its kernels, so the lookup is posted), the launch and the
    // synchronize in one more: 4, the target, by default. Only on a real delay: on
    // loopback a reply can reach the client before its next send, which then counts as a
    // round trip of its own.
    let start = slow["start"]["round_trips"].as_u64().unwrap();
    assert!((3..=4).contains(&start), "the start took {start} round trips (target ≤ 4): {slow}");
    let (rt, ms) = (slow["start"]["round_trips"].as_f64().unwrap(), slow["start"]["ms"].as_f64().unwrap());
    assert!(ms >= 20.0 * rt * 0.9, "start: {rt} round trips in {ms} ms over a 20 ms link");
    assert!(slow["step"]["ms"].as_f64().unwrap() >= 18.0, "{slow}");

    // HIP_REMOTE_PROFILE=1: each client process printed which calls waited.
    assert!(stderr.contains("hip-remote profile (HIP_REMOTE_PROFILE=1): calls that waited for the worker"), "{stderr}");
    // A row: the HIP call, then what it waited for.
    let table_has = |call: &str, what: &str| {
        stderr.lines().any(|l| {
            let mut columns = l.split_whitespace();
            columns.next() == Some(call) && columns.next().is_some_and(|w| w.starts_with(what))
        })
    };
    assert!(table_has("hipStreamSynchronize", "StreamSynchronize"), "{stderr}");
    assert!(table_has("hipGetDeviceCount", "Hello"), "{stderr}");
    // Posted calls never wait: the load and the lookup neither.
    assert!(!table_has("hipModuleLoadData", "ModuleLoad"), "{stderr}");
    assert!(!table_has("hipModuleGetFunction", "ModuleGetFunction"), "{stderr}");
    assert!(!table_has("hipModuleLaunchKernel", "ModuleLaunchKernel"), "{stderr}");
}

#[test]
fn a_wrong_token_is_still_refused_clearly() {
    let _serial = one_at_a_time();
    let backend = Arc::new(hip_worker::backend::HostBackend::new(hip_worker::backend::HostConfig::default()));
    let tokens = hip_worker::auth::TokenStore::new(Some("the-right-token"), None).unwrap();
    let session = hip_worker::session::SessionConfig { tokens: Some(Arc::new(tokens)), ..Default::default() };
    let worker = Worker::start("127.0.0.1:0", backend, WorkerConfig { session, ..WorkerConfig::default() }).unwrap();
    let json_path = std::env::temp_dir().join(format!("hip-remote-wan-token-{}.json", std::process::id()));
    let addr = worker.local_addr().to_string();
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_hip-remote"));
    let out = Command::new(&exe)
        .args(["wan-bench", "--rtt", "0", "--weights-mib", "1", "--lib"])
        .arg(library(&exe))
        .arg("--json")
        .arg(&json_path)
        .env("HIP_REMOTE_WORKER", &addr)
        .env("HIP_REMOTE_TOKEN", "a-wrong-token")
        // The library explains failed calls on stderr.
        .env("HIP_REMOTE_DEBUG", "1")
        .output()
        .expect("hip-remote runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("the hip-worker at {addr} refused HIP_REMOTE_TOKEN")), "{stderr}");
}

/// A worker (host backend, kernels allowed) whose tenants are `alice` and `bob`.
fn two_tenant_worker(dir: &Path) -> Worker {
    let file = dir.join("tokens");
    std::fs::write(&file, "alice:alice-token\nbob:bob-token\n").unwrap();
    let tokens = hip_worker::auth::TokenStore::new(None, Some(&file)).unwrap();
    let host = hip_worker::backend::HostConfig { memory_per_device: 256 << 20, allow_host_code: true, ..Default::default() };
    let backend = Arc::new(hip_worker::backend::HostBackend::new(host));
    let session = hip_worker::session::SessionConfig { tokens: Some(Arc::new(tokens)), ..Default::default() };
    Worker::start("127.0.0.1:0", backend, WorkerConfig { session, ..WorkerConfig::default() }).unwrap()
}

/// One `wan-bench` run as `token`'s tenant: the bytes its first weight upload sent and the
/// bytes of the same upload again in that run.
fn weights_run(worker: &str, token: &str, seed: &str, store: &str, json: &Path) -> (u64, u64) {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_hip-remote"));
    let out = Command::new(&exe)
        .args(["wan-bench", "--rtt", "0", "--weights-mib", "4", "--steps", "1", "--train-steps", "2", "--weights-seed", seed])
        .args(["--content-store", store, "--lib"])
        .arg(library(&exe))
        .arg("--json")
        .arg(json)
        .env("HIP_REMOTE_WORKER", worker)
        .env("HIP_REMOTE_TOKEN", token)
        .env_remove("HIP_REMOTE_PROFILE")
        .output()
        .expect("hip-remote runs");
    assert!(out.status.success(), "wan-bench failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let rows: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let r = &rows[0];
    (r["weights"]["up_bytes"].as_u64().unwrap(), r["weights_again"]["up_bytes"].as_u64().unwrap())
}

#[test]
fn a_second_run_sends_the_same_weights_by_hash_and_never_across_tenants() {
    let _serial = one_at_a_time();
    if !have_cxx() {
        eprintln!("no C++ compiler: the host backend cannot build kernels; skipped");
        return;
    }
    let dir = std::env::temp_dir().join(format!("hip-remote-wan-content-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let worker = two_tenant_worker(&dir);
    let addr = worker.local_addr().to_string();
    let json = dir.join("run.json");
    let weights = 4u64 << 20;
    let one_percent = weights / 100;

    // Without the store every upload sends its bytes (the oracle for "sent").
    let (first, again) = weights_run(&addr, "alice-token", "11", "off", &json);
    assert!(first >= weights && again >= weights, "store off: {first} and {again} bytes for {weights}");

    // Alice's first run sends the bytes once; the same bytes again in that run go by hash.
    let (first, again) = weights_run(&addr, "alice-token", "12", "on", &json);
    assert!(first >= weights, "a first upload sent {first} bytes of {weights}");
    assert!(again <= one_percent, "the same bytes again sent {again} bytes");
    // Her next run (a new process, a new session) finds them.
    let (first, again) = weights_run(&addr, "alice-token", "12", "on", &json);
    assert!(first <= one_percent && again <= one_percent, "a second run sent {first} + {again} bytes of {weights}");
    // Bob uploads the very same bytes: he must send them all (he never sees Alice's store).
    let (first, again) = weights_run(&addr, "bob-token", "12", "on", &json);
    assert!(first >= weights, "another tenant's first upload sent only {first} bytes of {weights}");
    assert!(again <= one_percent, "bob's own second upload sent {again} bytes");
    let _ = std::fs::remove_dir_all(&dir);
}

/// One weights run through a 20 MB/s link with the content store off: (first upload bytes,
/// ms; the same upload again: bytes, ms). The child checks both read back exactly.
fn compression_run(compressible: bool, json: &Path) -> (u64, f64, u64, f64) {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_hip-remote"));
    let mut cmd = Command::new(&exe);
    cmd.args(["wan-bench", "--backend", "host", "--rtt", "2", "--bandwidth", "20MB", "--weights-mib", "4", "--steps", "1"])
        .args(["--train-steps", "2", "--content-store", "off", "--lib"])
        .arg(library(&exe))
        .arg("--json")
        .arg(json)
        .env_remove("HIP_REMOTE_WORKER")
        .env_remove("HIP_REMOTE_PROFILE");
    if compressible {
        cmd.arg("--compressible-weights");
    }
    let out = cmd.output().expect("hip-remote runs");
    assert!(out.status.success(), "wan-bench failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let rows: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let (w, a) = (&rows[0]["weights"], &rows[0]["weights_again"]);
    (w["up_bytes"].as_u64().unwrap(), w["ms"].as_f64().unwrap(), a["up_bytes"].as_u64().unwrap(), a["ms"].as_f64().unwrap())
}

#[test]
fn bulk_is_compressed_only_where_that_is_faster() {
    let _serial = one_at_a_time();
    if !have_cxx() {
        eprintln!("no C++ compiler: the host backend cannot build kernels; skipped");
        return;
    }
    let json = std::env::temp_dir().join(format!("hip-remote-wan-compress-{}.json", std::process::id()));
    let weights = 4u64 << 20;
    // The first upload measures the link (uncompressed); the second, of sparse weights over
    // a slow link, goes compressed: fewer bytes, and not more time.
    let (first, first_ms, again, again_ms) = compression_run(true, &json);
    assert!(first >= weights, "the first upload sent {first} bytes");
    assert!(again < weights * 6 / 10, "compressible weights over 20 MB/s sent {again} of {weights} bytes");
    // Never slower (generous: the tests of this file share two cores).
    assert!(again_ms < first_ms * 1.25, "compressed {again_ms:.0} ms, uncompressed {first_ms:.0} ms");
    // Random bytes never shrink: sent as they are.
    let (_, _, again, _) = compression_run(false, &json);
    assert!(again >= weights, "incompressible weights sent {again} of {weights} bytes");
    let _ = std::fs::remove_file(&json);
}
