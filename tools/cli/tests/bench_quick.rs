//! `hip-remote bench --quick --backend host` end to end: an embedded host-backend worker, the
//! real client library loaded by the bench, child processes for the parallel copies; checks
//! that the JSON has every section (the graph benchmark's four ways with exactly the expected
//! results included), the markdown every table and both PNGs exist.
//!
//! Needs the client library built next to the bench executable (`cargo build --workspace`
//! before `cargo test`, as CI does).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn library(exe: &Path) -> PathBuf {
    let dir = exe.parent().expect("the bench executable has a directory");
    let name = if cfg!(target_os = "macos") { "libamdhip64.dylib" } else { "libamdhip64.so" };
    let lib = dir.join(name);
    assert!(lib.is_file(), "the client library is missing at {}; run `cargo build --workspace` before `cargo test -p hip-remote`", lib.display());
    lib
}

fn have_cxx() -> bool {
    let cxx = std::env::var("HIP_REMOTE_CXX").unwrap_or_else(|_| "c++".into());
    Command::new(cxx).arg("--version").output().is_ok_and(|o| o.status.success())
}

#[test]
fn bench_quick_host_backend_end_to_end() {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_hip-remote"));
    let lib = library(&exe);
    let dir = std::env::temp_dir().join(format!("hip-remote-bench-quick-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (json_path, md_path) = (dir.join("bench.json"), dir.join("bench.md"));
    let out = Command::new(&exe)
        .args(["bench", "--quick", "--backend", "host", "--lib"])
        .arg(&lib)
        .arg("--json")
        .arg(&json_path)
        .arg("--markdown")
        .arg(&md_path)
        .arg("--plots")
        .arg(&dir)
        .env_remove("HIP_REMOTE_WORKER")
        .output()
        .expect("hip-remote runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let compiler = have_cxx();
    if !compiler {
        eprintln!("no C++ compiler: the kernel section cannot run on the host backend and is expected to fail");
    }
    assert!(out.status.success() || !compiler, "bench failed:\n{stderr}\n{stdout}");

    let json: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).expect("valid JSON");
    assert_eq!(json["setup"]["backend"], "host");
    assert_eq!(json["setup"]["quick"], true);
    for side in ["native", "remote", "raw_tcp"] {
        let rtt = &json["round_trip_us"][side];
        for p in ["p50", "p99", "p999"] {
            assert!(rtt[p].as_f64().is_some_and(|v| v > 0.0), "round_trip_us.{side}.{p} in {rtt}");
        }
    }
    assert!(json["async_ops_per_s"]["native"].as_f64().is_some_and(|v| v > 0.0));
    assert!(json["async_ops_per_s"]["remote"].as_f64().is_some_and(|v| v > 0.0));
    let sgemm = &json["sgemm_gflops"];
    assert_eq!(sgemm["n"], 256, "{sgemm}");
    assert!(sgemm["native"].as_f64().is_some_and(|v| v > 0.0) && sgemm["remote"].as_f64().is_some_and(|v| v > 0.0), "{sgemm}");

    let copies = json["copies"].as_array().expect("copies");
    assert_eq!(copies.iter().map(|c| c["bytes"].as_u64().unwrap()).collect::<Vec<_>>(), [4096, 65536, 1 << 20]);
    for c in copies {
        for key in [
            "native_h2d_gbps",
            "native_d2h_gbps",
            "remote_h2d_pageable_gbps",
            "remote_d2h_pageable_gbps",
            "remote_h2d_pinned_gbps",
            "remote_d2h_pinned_gbps",
            "raw_tcp_gbps",
        ] {
            assert!(c[key].as_f64().is_some_and(|v| v > 0.0), "{key} in {c}");
        }
    }
    let rows = json["parallel"]["rows"].as_array().expect("parallel rows");
    for k in [1, 2, 4] {
        for mode in ["native", "remote: K threads", "remote: K processes", "raw TCP"] {
            assert!(
                rows.iter().any(|r| r["k"] == k && r["mode"].as_str().unwrap().starts_with(mode) && r["h2d_gbps"].as_f64().unwrap() > 0.0),
                "no parallel row for K={k}, {mode}: {rows:?}"
            );
        }
    }
    // The host backend of the bench serves two devices: the peer section runs, both ways.
    let peer = json["peer_copies"]["rows"].as_array().expect("peer_copies rows (two host devices)");
    for (src, dst) in [(0, 1), (1, 0)] {
        assert!(
            peer.iter().any(|r| r["bytes"] == 1 << 20
                && r["src"] == src
                && r["dst"] == dst
                && r["native_gbps"].as_f64().is_some_and(|v| v > 0.0)
                && r["remote_gbps"].as_f64().is_some_and(|v| v > 0.0)
                && r["remote_async_gbps"].as_f64().is_some_and(|v| v > 0.0)),
            "no 1 MiB peer row {src} → {dst}: {peer:?}"
        );
    }
    if compiler {
        let l = &json["launch_rate"];
        assert!(l["native_per_s"].as_f64().unwrap() > 0.0 && l["remote_per_s"].as_f64().unwrap() > 0.0, "{l}");
        let mlp = &json["mlp"];
        assert_eq!(mlp["launches_per_step"], 49, "{mlp}");
        assert_eq!(mlp["losses_identical"], true, "native and remote must train identically: {mlp}");
        let losses = mlp["native"]["losses"].as_array().unwrap();
        assert_eq!(losses.len(), 4);
        assert!(losses.iter().all(|l| l.as_f64().unwrap().is_finite()));
        assert!(mlp["remote"]["step_ms_median"].as_f64().unwrap() > 0.0);
        let graph = &json["graph"];
        assert_eq!(graph["config"]["kernels"], 200, "{graph}");
        assert_eq!(graph["results_correct"], true, "every way must end with the expected y: {graph}");
        for way in ["native_one_by_one", "native_graph", "remote_one_by_one", "remote_graph"] {
            let w = &graph["ways"][way];
            assert_eq!(w["step_ms"].as_array().map(Vec::len), Some(3), "{way}: {w}");
            assert!(w["kernels_per_s"].as_f64().is_some_and(|v| v > 0.0), "{way}: {w}");
            assert_eq!(w["instantiate_ms"].is_f64(), way.ends_with("graph"), "{way}: {w}");
        }
        for ratio in ["remote_over_native_one_by_one", "remote_over_native_graph", "graph_over_one_by_one_native", "graph_over_one_by_one_remote"] {
            assert!(graph["throughput_ratios"][ratio].as_f64().is_some_and(|v| v > 0.0), "{ratio}: {graph}");
        }
        let targets = json["targets"].as_array().unwrap();
        assert_eq!(targets.len(), 7);
        assert!(targets.iter().any(|t| t["name"] == "256² sgemm throughput, remote / native"), "{targets:?}");
        assert!(targets.iter().any(|t| t["name"] == "graph replay throughput, remote / native"), "{targets:?}");
        assert!(json["errors"].as_array().unwrap().is_empty(), "{}", json["errors"]);
    }

    check_link_table(&json, compiler);

    let md = std::fs::read_to_string(&md_path).unwrap();
    let mut headings = vec![
        "## Targets: data at the speed of the link",
        "## Summary",
        "## Copies (GB/s)",
        "## Parallel copies",
        "## Peer copies (devices 0 and 1 of one worker)",
        "## Targets",
    ];
    if compiler {
        headings.push("## Graphs: a step of 200 kernels");
    }
    for heading in headings {
        assert!(md.contains(heading), "markdown lacks {heading}:\n{md}");
    }
    assert!(stdout.contains("## Summary"), "the report goes to stdout too");
    for png in ["bandwidth.png", "latency.png"] {
        let bytes = std::fs::read(dir.join(png)).unwrap_or_else(|e| panic!("{png}: {e}"));
        assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 1000, "{png} is not a PNG");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The link table: every figure for the `tcp`, `tcp-striped` and `shm` variants (child
/// processes with their environment; shm through the embedded worker's same-host listener),
/// and, with kernels, the launch rate and the kernel step.
fn check_link_table(json: &Value, compiler: bool) {
    let rows = json["link"]["rows"].as_array().expect("link rows");
    for variant in ["tcp", "tcp-striped", "shm"] {
        let figures: Vec<&Value> = rows.iter().filter(|r| r["variant"] == variant).collect();
        assert_eq!(figures.len(), 11, "{variant}: {figures:?}");
        for r in &figures {
            assert!(r["native"].as_f64().is_some_and(|v| v > 0.0) && r["remote"].as_f64().is_some_and(|v| v > 0.0), "{r}");
            assert!(r["ratio"].as_f64().is_some_and(|v| v > 0.0), "{r}");
        }
        let pinned_target = if variant == "shm" { "≥ 0.8× native" } else { "≥ 22 GB/s" };
        assert!(figures.iter().any(|r| r["figure"] == "4 MiB pinned H2D" && r["target"] == pinned_target && r["met"].is_boolean()), "{figures:?}");
        assert!(figures.iter().any(|r| r["figure"].as_str().unwrap().starts_with("200 × (hipMalloc 1 MiB + hipFree)")), "{figures:?}");
        // The copy targets of a fast link: 1 MiB pinned both ways, the 4 KiB pinned copy.
        let mid_target = if variant == "shm" { "≥ 0.8× native" } else { "≥ 0.3× native" };
        for way in ["H2D", "D2H"] {
            let figure = format!("1 MiB pinned {way}");
            assert!(figures.iter().any(|r| r["figure"] == figure.as_str() && r["target"] == mid_target && r["met"].is_boolean()), "{figures:?}");
        }
        let small = figures.iter().find(|r| r["figure"].as_str().unwrap().starts_with("4 KiB pinned H2D")).expect("the 4 KiB pinned row");
        assert_eq!(small["met"].is_boolean(), variant == "shm", "{small}");
    }
    assert!(rows.iter().all(|r| r["unavailable"].is_null()), "every variant ran: {rows:?}");
    if compiler {
        assert!(rows.iter().any(|r| r["figure"].as_str().unwrap().starts_with("empty-kernel launch rate") && r["met"].is_boolean()), "{rows:?}");
        assert!(rows.iter().any(|r| r["figure"].as_str().unwrap().starts_with("step of 200 small kernels") && r["met"].is_boolean()), "{rows:?}");
    }
}

/// `--sections` runs only the sections named; `--profile` writes a flamegraph and a top list
/// per section (and per variant child) in a build with the `profiling` feature, and is refused
/// with the build command without it; an unknown section is refused.
#[test]
fn bench_sections_and_profiles() {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_hip-remote"));
    let lib = library(&exe);
    let dir = std::env::temp_dir().join(format!("hip-remote-bench-sections-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let json_path = dir.join("bench.json");
    let profiles = dir.join("profiles");
    let bench = |profile: bool| {
        let mut command = Command::new(&exe);
        command
            .args(["bench", "--quick", "--backend", "host", "--sections", "latency,link", "--variants", "tcp,shm", "--lib"])
            .arg(&lib)
            .arg("--json")
            .arg(&json_path);
        if profile {
            command.arg("--profile").arg(&profiles);
        }
        command.env_remove("HIP_REMOTE_WORKER").output().expect("hip-remote runs")
    };
    if !cfg!(feature = "profiling") {
        let refused = bench(true);
        assert!(!refused.status.success());
        assert!(String::from_utf8_lossy(&refused.stderr).contains("--features profiling"), "{}", String::from_utf8_lossy(&refused.stderr));
    }
    let out = bench(cfg!(feature = "profiling"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench failed:\n{stderr}");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).expect("valid JSON");
    assert!(json["round_trip_us"]["remote"]["p50"].as_f64().is_some_and(|v| v > 0.0), "latency ran");
    assert!(
        json.get("async_ops_per_s").is_none() && json.get("copies").is_none() && json.get("launch_rate").is_none(),
        "only the named sections run"
    );
    let rows = json["link"]["rows"].as_array().expect("link rows");
    assert_eq!(rows.iter().filter(|r| r["variant"] == "tcp").count(), 11, "{rows:?}");
    assert!(rows.iter().all(|r| r["variant"] != "tcp-striped"), "only the named variants: {rows:?}");
    let names = ["latency.svg", "latency.txt", "link.svg", "link.txt", "variant-tcp/client.svg", "variant-tcp/client.txt"];
    for name in names.iter().filter(|_| cfg!(feature = "profiling")) {
        let path = profiles.join(name);
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(!bytes.is_empty(), "{name} is empty");
    }
    if cfg!(feature = "profiling") {
        let svg = std::fs::read_to_string(profiles.join("link.svg")).unwrap();
        assert!(svg.contains("<svg"), "a flamegraph SVG");
        let top = std::fs::read_to_string(profiles.join("link.txt")).unwrap();
        assert!(top.contains("## samples per thread") && top.contains("## top 40 functions by itself"), "{top}");
    }

    let bad = Command::new(&exe)
        .args(["bench", "--quick", "--backend", "host", "--sections", "nope", "--lib"])
        .arg(&lib)
        .env_remove("HIP_REMOTE_WORKER")
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown section \"nope\""), "{}", String::from_utf8_lossy(&bad.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}
