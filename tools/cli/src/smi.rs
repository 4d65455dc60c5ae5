//! `hip-remote smi`: each worker's devices, memory in use, sessions and utilisation, like
//! amd-smi's list and metric views.
//!
//! It reads the worker's operator endpoint (`hip-worker --metrics`, `GET /metrics`) rather than
//! speaking the protocol: that endpoint already has everything — device names and
//! architectures, memory in use and total, the sessions of all clients, which no protocol
//! session can see — and it needs no token and takes no session slot of the worker. So a
//! worker must run with `--metrics` for smi to see it.
//!
//! Utilisation is shown where the worker exports `hip_worker_device_utilization_ratio`
//! (`hip_worker::telemetry`: NVML, AMD SMI, or the CPU's busy share on the host backend), else
//! "n/a" rather than a made-up figure.

use amd_smi::snapshot::{fetch, parse_exposition, Sample, Snapshot};
use serde_json::{json, Value};

/// `hip-worker --metrics`' default port (the worker's own constant, kept equal where both are
/// built).
pub const DEFAULT_METRICS_PORT: u16 = 18516;
#[cfg(target_os = "linux")]
const _: () = assert!(DEFAULT_METRICS_PORT == hip_worker::http::DEFAULT_METRICS_PORT);

/// What smi shows of one worker, as JSON (the table is printed from it too): the figures of
/// [`Snapshot`], which `libamd_smi.so` and `amd-smi` read too.
pub fn summarize(worker: &str, samples: &[Sample]) -> Value {
    let snapshot = Snapshot::from_samples(samples);
    let devices: Vec<Value> = snapshot
        .devices
        .iter()
        .map(|d| {
            json!({
                "device": d.index,
                "name": d.name,
                "arch": d.arch,
                "memory_used_bytes": d.memory_used_bytes,
                "memory_total_bytes": d.memory_total_bytes,
                "utilization": d.utilization,
            })
        })
        .collect();
    let tenants: Vec<Value> = snapshot.tenants.iter().map(|t| json!({ "tenant": t.tenant, "device_seconds": t.device_seconds })).collect();
    json!({
        "worker": worker,
        "version": snapshot.version,
        "backend": snapshot.backend,
        "sessions_open": snapshot.sessions_open,
        "sessions_total": snapshot.sessions_total,
        "devices": devices,
        "tenants": tenants,
    })
}

fn mib(bytes: &Value) -> String {
    bytes.as_u64().map_or_else(|| "n/a".into(), |b| format!("{:.1}", b as f64 / (1u64 << 20) as f64))
}

/// The human view of one worker's summary.
pub fn print_table(summary: &Value) {
    let text = |v: &Value| v.as_str().unwrap_or("n/a").to_string();
    println!(
        "WORKER {}  hip-worker {} (backend {})  sessions: {} open, {} total",
        text(&summary["worker"]),
        text(&summary["version"]),
        text(&summary["backend"]),
        summary["sessions_open"],
        summary["sessions_total"]
    );
    let mut devices = table(&["DEV", "NAME", "ARCH", "MEM USED MiB", "TOTAL MiB", "MEM%", "UTIL%"], &[3, 4, 5, 6]);
    for dev in summary["devices"].as_array().into_iter().flatten() {
        let share = match (dev["memory_used_bytes"].as_u64(), dev["memory_total_bytes"].as_u64()) {
            (Some(used), Some(total)) if total > 0 => format!("{:.0}", used as f64 * 100.0 / total as f64),
            _ => "n/a".into(),
        };
        let util = dev["utilization"].as_f64().map_or_else(|| "n/a".into(), |u| format!("{:.0}", u * 100.0));
        devices.add_row(vec![
            dev["device"].to_string(),
            text(&dev["name"]),
            text(&dev["arch"]),
            mib(&dev["memory_used_bytes"]),
            mib(&dev["memory_total_bytes"]),
            share,
            util,
        ]);
    }
    println!("{devices}");
    let tenants = summary["tenants"].as_array().filter(|t| !t.is_empty());
    if let Some(tenants) = tenants {
        let mut rows = table(&["TENANT", "DEVICE SECONDS"], &[1]);
        for tenant in tenants {
            let seconds = tenant["device_seconds"].as_f64().map_or_else(|| "n/a".into(), |s| format!("{s:.3}"));
            rows.add_row(vec![text(&tenant["tenant"]), seconds]);
        }
        println!("{rows}");
    }
}

/// A borderless table (`comfy-table`) with `header`; the columns in `right` right-aligned.
fn table(header: &[&str], right: &[usize]) -> comfy_table::Table {
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::NOTHING).set_header(header.to_vec());
    for (i, column) in table.column_iter_mut().enumerate() {
        column.set_padding((0, 2));
        if right.contains(&i) {
            column.set_cell_alignment(comfy_table::CellAlignment::Right);
        }
    }
    table
}

/// `hip-remote smi`: every worker in turn; fails (after showing the others) when one cannot be
/// read.
pub fn smi(workers: &[String], as_json: bool) -> Result<(), String> {
    let mut summaries = Vec::new();
    let mut failed = Vec::new();
    for worker in workers {
        match fetch(worker) {
            Ok(body) => summaries.push(summarize(worker, &parse_exposition(&body))),
            Err(e) => {
                failed.push(e.clone());
                summaries.push(json!({ "worker": worker, "error": e }));
            }
        }
    }
    if as_json {
        println!("{}", serde_json::to_string_pretty(&summaries).map_err(|e| e.to_string())?);
    } else {
        for (i, summary) in summaries.iter().enumerate() {
            if i > 0 {
                println!();
            }
            match summary["error"].as_str() {
                Some(e) => println!("WORKER {}  unreachable: {e}", summary["worker"].as_str().unwrap_or_default()),
                None => print_table(summary),
            }
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("{} of {} workers could not be read: {}", failed.len(), workers.len(), failed.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hip_worker::backend::{HostBackend, HostConfig, MemoryBackend};
    use hip_worker::metrics::Metrics;

    #[test]
    fn parses_what_the_worker_renders() {
        let backend = HostBackend::new(HostConfig { devices: 2, memory_per_device: 64 << 20, allow_host_code: true, ..HostConfig::default() });
        let ptr = backend.malloc(1, 3 << 20).unwrap();
        let samples = parse_exposition(&Metrics::default().render(&backend));
        backend.free(ptr).unwrap();
        let summary = summarize("w", &samples);
        assert_eq!(summary["backend"], "host");
        assert_eq!(summary["sessions_open"], 0);
        let devices = summary["devices"].as_array().unwrap();
        assert_eq!(devices.len(), 2);
        assert_eq!(devices[1]["memory_used_bytes"], 3u64 << 20);
        assert_eq!(devices[1]["memory_total_bytes"], 64u64 << 20);
        assert_eq!(devices[1]["arch"], "host");
        // The host backend reports the CPU's busy share (crate::telemetry).
        assert!((0.0..=1.0).contains(&devices[1]["utilization"].as_f64().unwrap()), "{}", devices[1]);
        assert_eq!(summary["tenants"].as_array().unwrap().len(), 0);
    }

    #[test]
    fn tenants_and_their_device_time() {
        let metrics = Metrics::default();
        let session = hip_worker::accounting::DeviceTime::default();
        session.charge(metrics.tenants().get(Some("team \"a\"")));
        session.add(std::time::Duration::from_millis(1500));
        let samples = parse_exposition(&metrics.render(&HostBackend::new(HostConfig::default())));
        let summary = summarize("w", &samples);
        assert_eq!(summary["tenants"], json!([{ "tenant": "team \"a\"", "device_seconds": 1.5 }]));
    }
}
