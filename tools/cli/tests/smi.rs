//! `hip-remote smi` against a live metrics endpoint (the one `hip-worker --metrics` starts),
//! in table and JSON form, and with a worker that cannot be reached.

use hip_worker::backend::{HostBackend, HostConfig, MemoryBackend};
use hip_worker::http::MetricsServer;
use hip_worker::metrics::Metrics;
use serde_json::Value;
use std::process::Command;
use std::sync::Arc;

fn smi(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_hip-remote")).arg("smi").args(args).output().expect("run hip-remote smi")
}

#[test]
fn smi_shows_devices_memory_and_sessions() {
    let backend = Arc::new(HostBackend::new(HostConfig { devices: 2, memory_per_device: 64 << 20, allow_host_code: true, ..HostConfig::default() }));
    let metrics = Arc::new(Metrics::default());
    let server = MetricsServer::start("127.0.0.1:0".parse().unwrap(), backend.clone(), metrics.clone()).expect("endpoint");
    let addr = server.local_addr().to_string();
    let ptr = backend.malloc(1, 16 << 20).unwrap();
    let _session = metrics.session_opened();

    let out = smi(&["--worker", &addr, "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let worker = &json[0];
    assert_eq!(worker["worker"], addr.as_str());
    assert_eq!(worker["backend"], "host");
    assert_eq!(worker["sessions_open"], 1);
    assert_eq!(worker["sessions_total"], 1);
    assert_eq!(worker["devices"].as_array().unwrap().len(), 2);
    assert_eq!(worker["devices"][1]["memory_used_bytes"], 16u64 << 20);
    assert_eq!(worker["devices"][1]["memory_total_bytes"], 64u64 << 20);
    // The host backend's utilisation is the CPU's busy share (hip_worker::telemetry).
    let utilization = worker["devices"][1]["utilization"].as_f64().expect("the host backend reports utilisation");
    assert!((0.0..=1.0).contains(&utilization), "{utilization}");

    let out = smi(&["--metrics-url", &format!("http://{addr}/metrics")]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{table}");
    assert!(table.contains("sessions: 1 open, 1 total"), "{table}");
    let dev1 = table.lines().find(|l| l.starts_with("1 ")).unwrap_or_else(|| panic!("no device 1 row:\n{table}"));
    assert!(dev1.contains(" 16.0 ") && dev1.contains(" 64.0 ") && dev1.contains(" 25 "), "{dev1}");
    let util: f64 = dev1.split_whitespace().last().unwrap().parse().unwrap_or_else(|_| panic!("no UTIL% figure: {dev1}"));
    assert!((0.0..=100.0).contains(&util), "{dev1}");
    backend.free(ptr).unwrap();

    // An unreachable worker: the others are still shown, the exit status says it failed.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let out = smi(&["--worker", &addr, "--worker", &dead, "--json"]);
    assert!(!out.status.success());
    let json: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(json[0]["backend"], "host");
    assert!(json[1]["error"].is_string(), "{json}");
}
