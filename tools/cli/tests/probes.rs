//! `rocminfo`, `rocm_agent_enumerator` and `amd-smi` — `hip-remote` started under those names,
//! as the installed links start it — against a live host-backend worker (protocol port for
//! the first two, metrics endpoint for amd-smi), parsed as their consumers parse them.

use hip_worker::backend::{Backend, DeviceBackend, HostBackend, HostConfig, MemoryBackend};
use hip_worker::http::MetricsServer;
use hip_worker::metrics::Metrics;
use hip_worker::{Worker, WorkerConfig};
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::Arc;

/// A link named `name` to hip-remote in a fresh directory.
fn tool(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    let link = dir.path().join(name);
    if !link.exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_hip-remote"), &link).unwrap();
    }
    link
}

fn run(program: &PathBuf, args: &[&str], env: &[(&str, &str)]) -> Output {
    let out = Command::new(program).args(args).envs(env.iter().copied()).env_remove("HIP_REMOTE_TOKEN").output().unwrap();
    assert!(out.status.success(), "{program:?} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

#[test]
fn probe_tools_show_the_workers_devices() {
    let backend = Arc::new(HostBackend::new(HostConfig { devices: 2, memory_per_device: 64 << 20, ..HostConfig::default() }));
    let worker = Worker::start("127.0.0.1:0", backend.clone() as Arc<dyn Backend>, WorkerConfig::default()).unwrap();
    let metrics = MetricsServer::start("127.0.0.1:0".parse().unwrap(), backend.clone(), Arc::new(Metrics::default())).unwrap();
    let (addr, metrics_addr) = (worker.local_addr().to_string(), metrics.local_addr().to_string());
    let dir = tempfile::tempdir().unwrap();
    let env = [("HIP_REMOTE_WORKER", addr.as_str()), ("HIP_REMOTE_METRICS", metrics_addr.as_str())];
    let arch = backend.device_properties(0).unwrap().gcn_arch_name;

    // rocm_agent_enumerator: gfx000 for the CPU, then each device's gcnArchName, one a line.
    let out = run(&tool(&dir, "rocm_agent_enumerator"), &[], &env);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), format!("gfx000\n{arch}\n{arch}\n"));

    // rocminfo: one CPU and two GPU agents; each GPU's pool is its memory, in KiB.
    let out = run(&tool(&dir, "rocminfo"), &[], &env);
    let text = String::from_utf8(out.stdout).unwrap();
    let names: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("  Name:")).map(str::trim).collect();
    assert_eq!(&names[1..], [arch.as_str(), arch.as_str()], "{text}");
    assert_eq!(text.matches("  Device Type:             GPU").count(), 2, "{text}");
    let kib = backend.mem_get_info(1).unwrap().total / 1024;
    assert!(text.contains(&format!("Size:                    {kib}({kib:#x})KB")), "{text}");

    // amd-smi metric --json: memory in use as the backend counts it, in MB.
    let ptr = backend.malloc(1, 7 << 20).unwrap();
    let out = run(&tool(&dir, "amd-smi"), &["metric", "--json", "-g", "1"], &env);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json[0]["gpu"], 1);
    assert_eq!(json[0]["mem_usage"]["used_vram"], serde_json::json!({"value": 7, "unit": "MB"}));
    assert_eq!(json[0]["mem_usage"]["total_vram"], serde_json::json!({"value": 64, "unit": "MB"}));
    assert_eq!(json[0]["power"]["socket_power"], "N/A", "the host backend has no power sensor");
    backend.free(ptr).unwrap();
    let out = run(&tool(&dir, "amd-smi"), &["list"], &env);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("GPU: 0\n    BDF: ") && text.contains("\nGPU: 1\n"), "{text}");

    // No worker: a clear error and a failing status, not an empty list.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let out = Command::new(dir.path().join("rocminfo")).env("HIP_REMOTE_WORKER", &dead).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains(&dead), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn version_names_the_commit() {
    let out = Command::new(env!("CARGO_BIN_EXE_hip-remote")).arg("--version").output().unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), format!("hip-remote {}\n", hip_remote_build_info::VERSION));
}

/// A worker of a newer protocol: rocminfo says both sides' versions and what to do.
#[test]
fn a_newer_worker_is_named_as_such() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let newer = proto_core::PROTOCOL_VERSION + 1;
    let worker = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut hello = [0u8; 64];
        let _ = stream.read(&mut hello).unwrap();
        let reply = proto_core::wire::ErrorReply { status: proto_core::Status::UNSUPPORTED_VERSION, message: "frame refused".into() };
        let meta = proto_core::frame::FrameMeta {
            opcode: proto_core::Opcode::Hello.raw(),
            flags: proto_core::Flags::RESPONSE | proto_core::Flags::ERROR,
            request_id: 0,
            credits: 0,
            aux: 0,
        };
        let mut buf = vec![0u8; 512];
        let len = proto_core::frame::encode_frame(&mut buf, meta, &reply).unwrap().head_len;
        buf[4..6].copy_from_slice(&newer.to_le_bytes());
        stream.write_all(&buf[..len]).unwrap();
        let _ = stream.read(&mut hello);
    });
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(tool(&dir, "rocminfo")).env("HIP_REMOTE_WORKER", &addr).env_remove("HIP_REMOTE_TOKEN").output().unwrap();
    worker.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains(&format!("rocminfo (hip-remote {})", hip_remote_build_info::VERSION)), "{stderr}");
    assert!(stderr.contains(&format!("worker speaks protocol {newer} ")) && stderr.contains("upgrade the older side"), "{stderr}");
}
