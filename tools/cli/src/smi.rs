//! `hip-remote smi`: each worker's devices, memory in use, sessions and utilisation, like
//! amd-smi's list and metric views.
//!
//! It reads the worker's operator endpoint (`hip-worker --metrics`, `GET /metrics`) rather than
//! speaking the protocol: that endpoint already has everything — device names and
//! architectures, memory in use and total, the sessions of all clients, which no protocol
//! session can see — and it needs no token and takes no session slot of the worker. So a
//! worker must run with `--metrics` for smi to see it.
//!
//! Utilisation is shown where the worker exports `hip_worker_device_utilization_ratio`; no
//! backend reports it today (the cuda backend has no NVML through cudarc, the host backend has
//! nothing to measure), so it reads "n/a" rather than a made-up figure.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// `hip-worker --metrics`' default port (the worker's own constant, kept equal where both are
/// built).
pub const DEFAULT_METRICS_PORT: u16 = 18516;
#[cfg(target_os = "linux")]
const _: () = assert!(DEFAULT_METRICS_PORT == hip_worker::http::DEFAULT_METRICS_PORT);

/// How long one worker may take to connect and answer.
const TIMEOUT: Duration = Duration::from_secs(5);
/// Largest `/metrics` answer read.
const MAX_RESPONSE: u64 = 16 << 20;

/// One sample of the exposition: name, labels, value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

/// Parses Prometheus' text format (comments skipped; lines that do not parse are ignored, as
/// a scraper would rather show what it understood).
pub fn parse_exposition(text: &str) -> Vec<Sample> {
    text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()).filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<Sample> {
    let number = |text: &str| text.split_whitespace().next()?.parse().ok();
    let Some(open) = line.find('{') else {
        let (name, value) = line.split_once(' ')?;
        return Some(Sample { name: name.into(), labels: BTreeMap::new(), value: number(value)? });
    };
    let name = &line[..open];
    let mut rest = &line[open + 1..];
    let mut labels = BTreeMap::new();
    loop {
        rest = rest.trim_start_matches(',');
        if let Some(after) = rest.strip_prefix('}') {
            return Some(Sample { name: name.into(), labels, value: number(after)? });
        }
        let (key, after) = rest.split_once("=\"")?;
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next()? {
                (i, '"') => break i + 1,
                (_, '\\') => match chars.next()?.1 {
                    'n' => value.push('\n'),
                    c => value.push(c),
                },
                (_, c) => value.push(c),
            }
        };
        labels.insert(key.to_string(), value);
        rest = &after[end..];
    }
}

/// The `/metrics` URL for `worker`: `HOST:PORT`, `http://HOST:PORT` or a full URL.
fn split_url(worker: &str) -> Result<(String, String), String> {
    let rest = worker.strip_prefix("http://").unwrap_or(worker);
    if worker.starts_with("https://") {
        return Err(format!("{worker}: the metrics endpoint speaks plain HTTP"));
    }
    let (host, path) = match rest.find('/') {
        Some(slash) => (&rest[..slash], &rest[slash..]),
        None => (rest, "/metrics"),
    };
    Ok((host.to_string(), path.to_string()))
}

/// Fetches a worker's `/metrics`.
pub fn fetch(worker: &str) -> Result<String, String> {
    let (host, path) = split_url(worker)?;
    let addr = host.to_socket_addrs().map_err(|e| format!("{host}: {e}"))?.next().ok_or_else(|| format!("{host}: no address"))?;
    let mut stream = TcpStream::connect_timeout(&addr, TIMEOUT).map_err(|e| format!("{host}: {e}"))?;
    stream.set_read_timeout(Some(TIMEOUT)).and_then(|()| stream.set_write_timeout(Some(TIMEOUT))).map_err(|e| e.to_string())?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").map_err(|e| format!("{host}: {e}"))?;
    let mut response = Vec::new();
    stream.take(MAX_RESPONSE).read_to_end(&mut response).map_err(|e| format!("{host}: {e}"))?;
    let response = String::from_utf8_lossy(&response);
    let (head, body) = response.split_once("\r\n\r\n").ok_or_else(|| format!("{host}: not an HTTP response"))?;
    let status = head.lines().next().unwrap_or_default();
    if !status.contains(" 200 ") {
        return Err(format!("{host}{path}: {status}"));
    }
    Ok(body.to_string())
}

/// What smi shows of one worker, as JSON (the table is printed from it too).
pub fn summarize(worker: &str, samples: &[Sample]) -> Value {
    let get = |name: &str, labels: &[(&str, &str)]| {
        samples.iter().find(|s| s.name == name && labels.iter().all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))).map(|s| s.value)
    };
    let info = samples.iter().find(|s| s.name == "hip_worker_info");
    let label = |key: &str| info.and_then(|s| s.labels.get(key)).cloned();
    let mut devices = Vec::new();
    for sample in samples.iter().filter(|s| s.name == "hip_worker_device_info") {
        let dev = sample.labels.get("device").cloned().unwrap_or_default();
        let dev_label = [("device", dev.as_str())];
        devices.push(json!({
            "device": dev.parse::<u32>().ok(),
            "name": sample.labels.get("name"),
            "arch": sample.labels.get("arch"),
            "memory_used_bytes": get("hip_worker_device_memory_used_bytes", &dev_label).map(|v| v as u64),
            "memory_total_bytes": get("hip_worker_device_memory_total_bytes", &dev_label).map(|v| v as u64),
            "utilization": get("hip_worker_device_utilization_ratio", &dev_label),
        }));
    }
    let tenants: Vec<Value> = samples
        .iter()
        .filter(|s| s.name == "hip_worker_tenant_device_seconds_total")
        .map(|s| json!({ "tenant": s.labels.get("tenant"), "device_seconds": s.value }))
        .collect();
    json!({
        "worker": worker,
        "version": label("version"),
        "backend": label("backend"),
        "sessions_open": get("hip_worker_sessions_open", &[]).map(|v| v as i64),
        "sessions_total": get("hip_worker_sessions_total", &[]).map(|v| v as u64),
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
    println!("{:<4} {:<40} {:<24} {:>12} {:>12} {:>6} {:>6}", "DEV", "NAME", "ARCH", "MEM USED MiB", "TOTAL MiB", "MEM%", "UTIL%");
    for dev in summary["devices"].as_array().into_iter().flatten() {
        let share = match (dev["memory_used_bytes"].as_u64(), dev["memory_total_bytes"].as_u64()) {
            (Some(used), Some(total)) if total > 0 => format!("{:.0}", used as f64 * 100.0 / total as f64),
            _ => "n/a".into(),
        };
        let util = dev["utilization"].as_f64().map_or_else(|| "n/a".into(), |u| format!("{:.0}", u * 100.0));
        println!(
            "{:<4} {:<40} {:<24} {:>12} {:>12} {:>6} {:>6}",
            dev["device"].to_string(),
            text(&dev["name"]),
            text(&dev["arch"]),
            mib(&dev["memory_used_bytes"]),
            mib(&dev["memory_total_bytes"]),
            share,
            util
        );
    }
    let tenants = summary["tenants"].as_array().filter(|t| !t.is_empty());
    if let Some(tenants) = tenants {
        println!("{:<40} {:>16}", "TENANT", "DEVICE SECONDS");
        for tenant in tenants {
            let seconds = tenant["device_seconds"].as_f64().map_or_else(|| "n/a".into(), |s| format!("{s:.3}"));
            println!("{:<40} {:>16}", text(&tenant["tenant"]), seconds);
        }
    }
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
        assert!(devices[1]["utilization"].is_null());
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

    #[test]
    fn escaped_labels_and_bare_samples() {
        let samples = parse_exposition("# HELP x y\nm{a=\"q\\\"uo,te\",b=\"\\\\\"} 2.5\nplain 7\nbroken{a=\"x\" 1\n");
        assert_eq!(samples.len(), 2, "{samples:?}");
        assert_eq!(samples[0].labels["a"], "q\"uo,te");
        assert_eq!(samples[0].labels["b"], "\\");
        assert_eq!(samples[0].value, 2.5);
        assert_eq!(samples[1], Sample { name: "plain".into(), labels: BTreeMap::new(), value: 7.0 });
    }

    #[test]
    fn worker_urls() {
        assert_eq!(split_url("h:1").unwrap(), ("h:1".into(), "/metrics".into()));
        assert_eq!(split_url("http://h:1/x").unwrap(), ("h:1".into(), "/x".into()));
        assert!(split_url("https://h:1").is_err());
    }
}
