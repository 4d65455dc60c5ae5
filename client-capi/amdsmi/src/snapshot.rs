//! A worker's operator endpoint (`hip-worker --metrics`, `GET /metrics`, Prometheus' text
//! format) read into typed figures: what `libamd_smi.so`, `amd-smi` and `hip-remote smi` show.
//!
//! Why this endpoint and not a protocol query: an SMI shows every process and the whole
//! device, across tenants, which no protocol session may see; it must take no session slot and
//! need no tenant token, and a monitoring agent polls it on the operator's network anyway.

use std::collections::BTreeMap;
use std::time::Duration;

/// The worker's metrics port when none is given (hip-worker's `DEFAULT_METRICS_PORT`).
pub const DEFAULT_METRICS_PORT: u16 = 18516;

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
pub fn split_url(worker: &str) -> Result<(String, String), String> {
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

/// Fetches a worker's `/metrics` (a plain HTTP GET by `ureq`, bounded in time and size).
pub fn fetch(worker: &str) -> Result<String, String> {
    let (host, path) = split_url(worker)?;
    let url = format!("http://{host}{path}");
    let agent: ureq::Agent = ureq::Agent::config_builder().timeout_global(Some(TIMEOUT)).max_redirects(0).build().into();
    let mut response = agent.get(&url).call().map_err(|e| format!("{url}: {e}"))?;
    response.body_mut().with_config().limit(MAX_RESPONSE).read_to_string().map_err(|e| format!("{url}: {e}"))
}

/// One device as the endpoint shows it; `None` where the worker has no figure.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Device {
    pub index: u32,
    pub name: String,
    /// `hipDeviceProp_t.gcnArchName` (`gfx942:sramecc+:xnack-`, `sm_90`, `host`).
    pub arch: String,
    /// `DDDDDDDD:BB:DD.F`.
    pub pci_address: Option<String>,
    pub compute_units: Option<u32>,
    pub memory_used_bytes: Option<u64>,
    pub memory_total_bytes: Option<u64>,
    /// 0 to 1.
    pub utilization: Option<f64>,
    pub power_watts: Option<f64>,
    pub power_limit_watts: Option<f64>,
    pub temperature_celsius: Option<f64>,
    pub gfx_clock_mhz: Option<u32>,
    pub gfx_clock_max_mhz: Option<u32>,
    pub mem_clock_mhz: Option<u32>,
    pub mem_clock_max_mhz: Option<u32>,
}

/// What one scrape says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    pub version: Option<String>,
    pub backend: Option<String>,
    pub sessions_open: Option<u64>,
    /// Sessions served since the worker started.
    pub sessions_total: Option<u64>,
    pub devices: Vec<Device>,
    /// Device time each tenant's sessions used, in the order the worker lists them.
    pub tenants: Vec<TenantUsage>,
}

/// One tenant's device time (`hip_worker_tenant_device_seconds_total`).
#[derive(Debug, Clone, PartialEq)]
pub struct TenantUsage {
    pub tenant: String,
    pub device_seconds: f64,
}

impl Snapshot {
    pub fn from_samples(samples: &[Sample]) -> Self {
        let get = |name: &str, labels: &[(&str, &str)]| {
            samples.iter().find(|s| s.name == name && labels.iter().all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))).map(|s| s.value)
        };
        let info = samples.iter().find(|s| s.name == "hip_worker_info");
        let label = |key: &str| info.and_then(|s| s.labels.get(key)).cloned();
        let mut devices = Vec::new();
        for sample in samples.iter().filter(|s| s.name == "hip_worker_device_info") {
            let dev = sample.labels.get("device").cloned().unwrap_or_default();
            let Ok(index) = dev.parse::<u32>() else { continue };
            let d = [("device", dev.as_str())];
            let clock = |name: &str, domain: &str| get(name, &[("device", dev.as_str()), ("domain", domain)]).map(|v| v as u32);
            devices.push(Device {
                index,
                name: sample.labels.get("name").cloned().unwrap_or_default(),
                arch: sample.labels.get("arch").cloned().unwrap_or_default(),
                pci_address: sample.labels.get("pci").cloned().filter(|p| !p.is_empty()),
                compute_units: sample.labels.get("compute_units").and_then(|c| c.parse().ok()),
                memory_used_bytes: get("hip_worker_device_memory_used_bytes", &d).map(|v| v as u64),
                memory_total_bytes: get("hip_worker_device_memory_total_bytes", &d).map(|v| v as u64),
                utilization: get("hip_worker_device_utilization_ratio", &d),
                power_watts: get("hip_worker_device_power_watts", &d),
                power_limit_watts: get("hip_worker_device_power_limit_watts", &d),
                temperature_celsius: get("hip_worker_device_temperature_celsius", &d),
                gfx_clock_mhz: clock("hip_worker_device_clock_mhz", "gfx"),
                gfx_clock_max_mhz: clock("hip_worker_device_clock_max_mhz", "gfx"),
                mem_clock_mhz: clock("hip_worker_device_clock_mhz", "mem"),
                mem_clock_max_mhz: clock("hip_worker_device_clock_max_mhz", "mem"),
            });
        }
        devices.sort_by_key(|d| d.index);
        Snapshot {
            version: label("version"),
            backend: label("backend"),
            sessions_open: get("hip_worker_sessions_open", &[]).map(|v| v as u64),
            sessions_total: get("hip_worker_sessions_total", &[]).map(|v| v as u64),
            devices,
            tenants: samples
                .iter()
                .filter(|s| s.name == "hip_worker_tenant_device_seconds_total")
                .map(|s| TenantUsage { tenant: s.labels.get("tenant").cloned().unwrap_or_default(), device_seconds: s.value })
                .collect(),
        }
    }

    /// Scrapes `endpoint` (`HOST:PORT` or `http://HOST:PORT[/PATH]`).
    pub fn fetch(endpoint: &str) -> Result<Self, String> {
        Ok(Self::from_samples(&parse_exposition(&fetch(endpoint)?)))
    }
}

/// The endpoint the SMI tools read: `HIP_REMOTE_METRICS` (`HOST:PORT` or a URL), else the host
/// of `HIP_REMOTE_WORKER` on the default metrics port, else this machine's.
pub fn endpoint_from_env() -> String {
    if let Some(url) = std::env::var("HIP_REMOTE_METRICS").ok().filter(|u| !u.is_empty()) {
        return url;
    }
    let worker = std::env::var("HIP_REMOTE_WORKER").unwrap_or_default();
    let first = worker.split(',').next().unwrap_or_default();
    let host_port = first.trim().trim_start_matches("tcp://").trim_start_matches("tls://");
    let host = match host_port.rsplit_once(':') {
        Some((host, _)) if !host.is_empty() => host,
        _ => "127.0.0.1",
    };
    format!("{host}:{DEFAULT_METRICS_PORT}")
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn typed_figures_from_samples() {
        let text = "hip_worker_info{version=\"1 (abc)\",backend=\"cuda\"} 1\n\
                    hip_worker_device_info{device=\"1\",name=\"B\",arch=\"sm_90\",pci=\"00000000:1b:00.0\",compute_units=\"132\"} 1\n\
                    hip_worker_device_info{device=\"0\",name=\"A\",arch=\"sm_90\"} 1\n\
                    hip_worker_device_memory_used_bytes{device=\"1\"} 1024\n\
                    hip_worker_device_power_watts{device=\"1\"} 70.5\n\
                    hip_worker_device_clock_mhz{device=\"1\",domain=\"mem\"} 2619\n";
        let snap = Snapshot::from_samples(&parse_exposition(text));
        assert_eq!(snap.backend.as_deref(), Some("cuda"));
        assert_eq!(snap.devices.iter().map(|d| d.index).collect::<Vec<_>>(), [0, 1]);
        let b = &snap.devices[1];
        assert_eq!((b.pci_address.as_deref(), b.compute_units, b.memory_used_bytes), (Some("00000000:1b:00.0"), Some(132), Some(1024)));
        assert_eq!((b.power_watts, b.mem_clock_mhz, b.gfx_clock_mhz, b.temperature_celsius), (Some(70.5), Some(2619), None, None));
        assert_eq!(snap.devices[0].memory_used_bytes, None);
    }
}
