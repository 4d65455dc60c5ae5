//! `amd-smi` (`list`, `static`, `metric`, `process`; each with `--json` and `-g GPU`) for a
//! worker's devices, in the layout of AMD's `amdsmi_cli`: human output is `GPU: N` then
//! upper-case keys indented by four per level, values with their unit (`550 W`); JSON is a
//! list of one object per GPU, lower-case keys, figures as `{"value": V, "unit": U}`, and
//! `"N/A"` for what the device does not report. The figures are those of `libamd_smi.so`
//! (`client_amdsmi::snapshot`, the worker's metrics endpoint: `HIP_REMOTE_METRICS`, else
//! `HIP_REMOTE_WORKER`'s host on port 18516).

use amd_smi::snapshot::{Device, Snapshot};
use serde_json::{json, Map, Value};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Command {
    List,
    Static,
    Metric,
    Process,
}

const USAGE: &str = "usage: amd-smi {list,static,metric,process} [--json] [-g GPU ...]\n\
    (devices of the hip-remote worker whose metrics endpoint is HIP_REMOTE_METRICS, or HIP_REMOTE_WORKER's host on port 18516)";

fn na() -> Value {
    Value::from("N/A")
}

/// A figure with its unit, as amd-smi shows it in `json` or human form.
fn unit(value: Option<impl Into<Value>>, unit: &str, as_json: bool) -> Value {
    match value {
        None => na(),
        Some(v) if as_json => json!({ "value": v.into(), "unit": unit }),
        Some(v) => Value::from(format!("{} {unit}", v.into()).trim_end().to_string()),
    }
}

/// `0000:1b:00.0`, amd-smi's BDF (a four-digit domain).
fn bdf(device: &Device) -> Value {
    device.pci_address.as_deref().and_then(|a| a.split_once(':')).map_or_else(na, |(domain, rest)| {
        let domain = u32::from_str_radix(domain, 16).unwrap_or(0);
        Value::from(format!("{domain:04x}:{rest}"))
    })
}

fn mib(bytes: Option<u64>) -> Option<u64> {
    bytes.map(|b| b >> 20)
}

fn device_object(command: Command, device: &Device, snapshot: &Snapshot, as_json: bool) -> Value {
    let mut o = Map::new();
    o.insert("gpu".into(), device.index.into());
    match command {
        Command::List => {
            o.insert("bdf".into(), bdf(device));
            o.insert("uuid".into(), na());
            o.insert("kfd_id".into(), na());
            o.insert("node_id".into(), na());
            o.insert("partition_id".into(), 0.into());
        }
        Command::Static => {
            let arch = device.arch.split(':').next().unwrap_or_default();
            let (vendor_id, vendor_name) = match arch {
                a if a.starts_with("gfx") => ("0x1002", "Advanced Micro Devices Inc. [AMD/ATI]"),
                a if a.starts_with("sm_") => ("0x10de", "NVIDIA Corporation"),
                _ => ("N/A", "hip-remote host"),
            };
            o.insert(
                "asic".into(),
                json!({
                    "market_name": device.name,
                    "vendor_id": vendor_id,
                    "vendor_name": vendor_name,
                    "subvendor_id": vendor_id,
                    "device_id": "N/A",
                    "rev_id": "N/A",
                    "asic_serial": "N/A",
                    "oam_id": "N/A",
                    "num_compute_units": device.compute_units.map_or_else(na, Value::from),
                    "target_graphics_version": arch,
                }),
            );
            o.insert("bus".into(), json!({ "bdf": bdf(device) }));
            o.insert("limit".into(), json!({ "max_power": unit(device.power_limit_watts.map(|w| w.round() as u64), "W", as_json) }));
            o.insert(
                "driver".into(),
                json!({ "name": format!("hip-remote ({})", snapshot.backend.as_deref().unwrap_or("N/A")), "version": snapshot.version.as_deref().unwrap_or("N/A") }),
            );
            o.insert(
                "vram".into(),
                json!({ "type": "N/A", "vendor": "N/A", "size": unit(mib(device.memory_total_bytes), "MB", as_json), "bit_width": "N/A" }),
            );
        }
        Command::Metric => {
            let activity = device.utilization.map(|u| (u * 100.0).round() as u64);
            o.insert("usage".into(), json!({ "gfx_activity": unit(activity, "%", as_json), "umc_activity": "N/A", "mm_activity": "N/A" }));
            o.insert(
                "power".into(),
                json!({
                    "socket_power": unit(device.power_watts.map(|w| w.round() as u64), "W", as_json),
                    "gfx_voltage": "N/A",
                    "soc_voltage": "N/A",
                    "mem_voltage": "N/A",
                    "throttle_status": "N/A",
                    "power_management": "N/A",
                }),
            );
            let clock = |now: Option<u32>, max: Option<u32>| json!({ "clk": unit(now, "MHz", as_json), "min_clk": "N/A", "max_clk": unit(max, "MHz", as_json), "clk_locked": "N/A", "deep_sleep": "N/A" });
            o.insert(
                "clock".into(),
                json!({ "gfx_0": clock(device.gfx_clock_mhz, device.gfx_clock_max_mhz), "mem_0": clock(device.mem_clock_mhz, device.mem_clock_max_mhz) }),
            );
            let celsius = device.temperature_celsius.map(|t| t.round() as i64);
            o.insert(
                "temperature".into(),
                json!({ "edge": unit(celsius, if as_json { "C" } else { "\u{b0}C" }, as_json), "hotspot": "N/A", "mem": "N/A" }),
            );
            let (total, used) = (mib(device.memory_total_bytes), mib(device.memory_used_bytes));
            let free = total.zip(used).map(|(t, u)| t.saturating_sub(u));
            o.insert(
                "mem_usage".into(),
                json!({
                    "total_vram": unit(total, "MB", as_json),
                    "used_vram": unit(used, "MB", as_json),
                    "free_vram": unit(free, "MB", as_json),
                    "total_visible_vram": unit(total, "MB", as_json),
                    "used_visible_vram": unit(used, "MB", as_json),
                    "free_visible_vram": unit(free, "MB", as_json),
                    "total_gtt": "N/A",
                    "used_gtt": "N/A",
                    "free_gtt": "N/A",
                }),
            );
        }
        Command::Process => {
            // Which client holds which memory is not on the worker's endpoint.
            o.insert("process_list".into(), na());
        }
    }
    Value::Object(o)
}

/// amd-smi's human layout of one device object.
fn human(value: &Value, level: usize, out: &mut String) {
    let Value::Object(map) = value else { return };
    for (key, v) in map {
        if level == 0 && key == "gpu" {
            continue;
        }
        let indent = " ".repeat(4 * (level + 1));
        match v {
            Value::Object(_) => {
                out.push_str(&format!("{indent}{}:\n", key.to_uppercase()));
                human(v, level + 1, out);
            }
            Value::String(s) => out.push_str(&format!("{indent}{}: {s}\n", key.to_uppercase())),
            other => out.push_str(&format!("{indent}{}: {other}\n", key.to_uppercase())),
        }
    }
}

/// The whole output for `command` over `snapshot`'s devices (`gpus`: those asked for, all
/// when empty).
fn render(command: Command, snapshot: &Snapshot, gpus: &[u32], as_json: bool) -> Result<String, String> {
    if let Some(missing) = gpus.iter().find(|g| !snapshot.devices.iter().any(|d| d.index == **g)) {
        return Err(format!(
            "GPU {missing} does not exist: the worker has {} (0 to {})",
            snapshot.devices.len(),
            snapshot.devices.len().saturating_sub(1)
        ));
    }
    let objects: Vec<Value> = snapshot
        .devices
        .iter()
        .filter(|d| gpus.is_empty() || gpus.contains(&d.index))
        .map(|d| device_object(command, d, snapshot, as_json))
        .collect();
    if as_json {
        // amdsmi_cli writes json.dumps(..., indent=4).
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
        serde::Serialize::serialize(&objects, &mut serde_json::Serializer::with_formatter(&mut out, formatter)).map_err(|e| e.to_string())?;
        return String::from_utf8(out).map(|s| s + "\n").map_err(|e| e.to_string());
    }
    let mut out = String::new();
    for object in &objects {
        out.push_str(&format!("GPU: {}\n", object["gpu"]));
        human(object, 0, &mut out);
        out.push('\n');
    }
    Ok(out)
}

/// `amd-smi ARGS...`.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut command = None;
    let mut as_json = false;
    let mut gpus = Vec::new();
    let mut args = args.iter().peekable();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "list" => command = Some(Command::List),
            "static" => command = Some(Command::Static),
            "metric" => command = Some(Command::Metric),
            "process" => command = Some(Command::Process),
            "--json" => as_json = true,
            "-g" | "--gpu" => {
                while let Some(gpu) = args.peek().and_then(|a| a.parse::<u32>().ok()) {
                    gpus.push(gpu);
                    args.next();
                }
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    let command = command.ok_or(USAGE)?;
    let endpoint = amd_smi::snapshot::endpoint_from_env();
    let snapshot = Snapshot::fetch(&endpoint).map_err(|e| {
        format!("cannot read the worker's metrics at {endpoint}: {e} (start hip-worker with --metrics; set HIP_REMOTE_METRICS=HOST:PORT)")
    })?;
    print!("{}", render(command, &snapshot, &gpus, as_json)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot() -> Snapshot {
        Snapshot {
            version: Some("0.1.0 (abc1234)".into()),
            backend: Some("cuda".into()),
            sessions_open: Some(1),
            devices: vec![
                Device {
                    index: 0,
                    name: "NVIDIA H200".into(),
                    arch: "sm_90".into(),
                    pci_address: Some("00000000:1b:00.0".into()),
                    compute_units: Some(132),
                    memory_used_bytes: Some(3 << 20),
                    memory_total_bytes: Some(143_771 << 20),
                    utilization: Some(0.42),
                    power_watts: Some(117.4),
                    temperature_celsius: Some(35.0),
                    ..Device::default()
                },
                Device { index: 1, name: "B".into(), arch: "gfx942:sramecc+:xnack-".into(), ..Device::default() },
            ],
            ..Snapshot::default()
        }
    }

    #[test]
    fn metric_json_as_amd_smi_writes_it() {
        let text = render(Command::Metric, &snapshot(), &[0], true).unwrap();
        assert!(text.starts_with("[\n    {\n        \"gpu\": 0,\n"), "{text}");
        let parsed: Value = serde_json::from_str(&text).unwrap();
        let gpu = &parsed[0];
        assert_eq!(parsed.as_array().unwrap().len(), 1);
        assert_eq!(gpu["gpu"], 0);
        assert_eq!(gpu["usage"]["gfx_activity"], json!({"value": 42, "unit": "%"}));
        assert_eq!(gpu["power"]["socket_power"], json!({"value": 117, "unit": "W"}));
        assert_eq!(gpu["mem_usage"]["used_vram"], json!({"value": 3, "unit": "MB"}));
        assert_eq!(gpu["mem_usage"]["free_vram"], json!({"value": 143_768, "unit": "MB"}));
        assert_eq!(gpu["temperature"]["edge"], json!({"value": 35, "unit": "C"}));
        assert_eq!(gpu["clock"]["gfx_0"]["clk"], "N/A");
    }

    #[test]
    fn human_layout() {
        let text = render(Command::List, &snapshot(), &[], false).unwrap();
        assert!(text.starts_with("GPU: 0\n    BDF: 0000:1b:00.0\n    UUID: N/A\n"), "{text}");
        assert!(text.contains("\nGPU: 1\n    BDF: N/A\n"), "{text}");
        let text = render(Command::Static, &snapshot(), &[1], false).unwrap();
        assert!(text.contains("    ASIC:\n        MARKET_NAME: B\n        VENDOR_ID: 0x1002\n"), "{text}");
        assert!(text.contains("        TARGET_GRAPHICS_VERSION: gfx942\n"), "{text}");
        let text = render(Command::Metric, &snapshot(), &[0], false).unwrap();
        assert!(text.contains("        SOCKET_POWER: 117 W\n"), "{text}");
        assert!(text.contains("        EDGE: 35 \u{b0}C\n"), "{text}");
        assert!(render(Command::List, &snapshot(), &[5], false).unwrap_err().contains("GPU 5 does not exist"));
    }
}
