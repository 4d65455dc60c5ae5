//! `rocminfo` and `rocm_agent_enumerator` for the worker's devices, in ROCm's own output
//! formats, so scripts that parse them (CMake's and PyTorch's GPU target detection, the
//! `rocm_agent_enumerator -name` users) work unchanged. The installed layout has both names
//! as links to `hip-remote` (`install.rs`); `main` dispatches on the name it was started as.
//!
//! The layout follows ROCm's `rocminfo.cc` (`printLabelStr`: a 25-column label, a 35-column
//! value, two spaces per indent level; integers as `N(0xN)`), and `rocm_agent_enumerator`'s
//! one target a line with `gfx000` for the CPU agent.
//!
//! Agent 1 is this machine's CPU (host code runs here, as with a local GPU); the worker's
//! devices follow, one GPU agent each, from the device query of the protocol
//! (`GetDeviceProperties`). Their `Name:` is what `hipDeviceProp_t.gcnArchName` reports
//! through hip-remote, less its feature suffix: `gfx942` on the hip backend, `sm_90` on the
//! cuda backend, `host` on the host backend; the ISA name is `amdgcn-amd-amdhsa--<gcnArchName>`
//! for a gfx target, `nvptx64-nvidia-cuda--sm_NN` for NVIDIA's, `hip-remote--host` for the
//! host backend (docs/PROBES.md).

use proto_core::wire::DeviceProperties;
use std::fmt::Write as _;

const LABEL_WIDTH: usize = 25;
const VALUE_WIDTH: usize = 35;
const INDENT: usize = 2;

/// What rocminfo shows of this machine's CPU agent.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuAgent {
    pub model: String,
    pub cores: u32,
    pub max_clock_mhz: u32,
    pub memory_bytes: u64,
}

impl CpuAgent {
    /// This machine's CPU, from /proc (placeholders where it cannot be read).
    pub fn local() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |name: &str| cpuinfo.lines().find_map(|l| l.split_once(':').filter(|(k, _)| k.trim() == name).map(|(_, v)| v.trim().to_string()));
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let memory_kib: u64 =
            meminfo.lines().find_map(|l| l.strip_prefix("MemTotal:")).and_then(|v| v.split_whitespace().next()?.parse().ok()).unwrap_or(0);
        Self {
            model: field("model name").unwrap_or_else(|| std::env::consts::ARCH.to_string()),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            max_clock_mhz: field("cpu MHz").and_then(|v| v.parse::<f64>().ok()).map_or(0, |mhz| mhz.round() as u32),
            memory_bytes: memory_kib * 1024,
        }
    }
}

/// The target name rocm_agent_enumerator prints: `gcnArchName` without its features
/// (`gfx90a:sramecc+:xnack-` → `gfx90a`).
pub fn target_name(arch_name: &str) -> &str {
    arch_name.split(':').next().unwrap_or(arch_name)
}

/// The ISA name of an agent (what `rocm_agent_enumerator -name` prints).
pub fn isa_name(arch_name: &str) -> String {
    let target = target_name(arch_name);
    if target.starts_with("gfx") {
        format!("amdgcn-amd-amdhsa--{arch_name}")
    } else if target.starts_with("sm_") {
        format!("nvptx64-nvidia-cuda--{target}")
    } else {
        format!("hip-remote--{target}")
    }
}

/// `rocm_agent_enumerator` (targets, `gfx000` first for the CPU) or with `-name` the GPU
/// agents' ISA names.
pub fn agent_enumerator(devices: &[DeviceProperties], names: bool) -> String {
    let mut out = String::new();
    if !names {
        out.push_str("gfx000\n");
    }
    for dev in devices {
        let arch = dev.arch_name.as_str();
        out.push_str(&if names { isa_name(arch) } else { target_name(arch).to_string() });
        out.push('\n');
    }
    out
}

fn int(value: u64) -> String {
    format!("{value}({value:#x})")
}

struct Printer {
    out: String,
}

impl Printer {
    fn label(&mut self, level: usize, label: &str) {
        let _ = writeln!(self.out, "{:ind$}{label:<LABEL_WIDTH$}", "", ind = INDENT * level);
    }
    fn field(&mut self, level: usize, label: &str, value: impl std::fmt::Display) {
        let value = value.to_string();
        let _ = writeln!(self.out, "{:ind$}{label:<LABEL_WIDTH$}{value:<VALUE_WIDTH$}", "", ind = INDENT * level);
    }
}

/// Full `rocminfo` output for this machine's CPU and the worker's devices.
pub fn rocminfo(cpu: &CpuAgent, devices: &[DeviceProperties]) -> String {
    let mut p = Printer { out: String::new() };
    for line in ["=====================", "HSA System Attributes", "====================="] {
        p.label(0, line);
    }
    p.field(0, "Runtime Version:", "1.18");
    p.field(0, "Runtime Ext Version:", "1.11");
    p.field(0, "System Timestamp Freq.:", "1000.000000MHz");
    p.field(0, "Sig. Max Wait Duration:", "18446744073709551615 (0xFFFFFFFFFFFFFFFF) (timestamp count)");
    p.field(0, "Machine Model:", "LARGE");
    p.field(0, "System Endianness:", "LITTLE");
    p.field(0, "Mwaitx:", "DISABLED");
    p.field(0, "XNACK enabled:", "NO");
    p.field(0, "DMAbuf Support:", "NO");
    p.field(0, "VMM Support:", "YES");
    p.out.push('\n');
    for line in ["==========", "HSA Agents", "=========="] {
        p.label(0, line);
    }

    agent_header(&mut p, 1);
    p.field(1, "Name:", &cpu.model);
    p.field(1, "Uuid:", "CPU-XX");
    p.field(1, "Marketing Name:", &cpu.model);
    p.field(1, "Vendor Name:", "CPU");
    p.field(1, "Feature:", "None specified");
    p.field(1, "Profile:", "FULL_PROFILE");
    p.field(1, "Float Round Mode:", "NEAR");
    p.field(1, "Max Queue Number:", int(0));
    p.field(1, "Queue Min Size:", int(0));
    p.field(1, "Queue Max Size:", int(0));
    p.field(1, "Queue Type:", "MULTI");
    p.field(1, "Node:", 0);
    p.field(1, "Device Type:", "CPU");
    p.label(1, "Cache Info:");
    p.field(1, "Chip ID:", int(0));
    p.field(1, "ASIC Revision:", int(0));
    p.field(1, "Cacheline Size:", int(64));
    p.field(1, "Max Clock Freq. (MHz):", cpu.max_clock_mhz);
    p.field(1, "BDFID:", 0);
    p.field(1, "Internal Node ID:", 0);
    p.field(1, "Compute Unit:", cpu.cores);
    p.field(1, "SIMDs per CU:", 0);
    p.field(1, "Shader Engines:", 0);
    p.field(1, "Shader Arrs. per Eng.:", 0);
    p.field(1, "WatchPts on Addr. Ranges:", 1);
    p.field(1, "Memory Properties:", "");
    p.field(1, "Features:", "None");
    p.label(1, "Pool Info:");
    pool(&mut p, 1, "GLOBAL; FLAGS: FINE GRAINED", cpu.memory_bytes, 4);
    p.label(1, "ISA Info:");

    for (i, dev) in devices.iter().enumerate() {
        let node = i + 1;
        let arch = dev.arch_name.as_str();
        agent_header(&mut p, node + 1);
        p.field(1, "Name:", target_name(arch));
        p.field(1, "Uuid:", format!("GPU-{}", dev.uuid.iter().map(|b| format!("{b:02x}")).collect::<String>()));
        p.field(1, "Marketing Name:", dev.name.as_str());
        p.field(1, "Vendor Name:", if target_name(arch).starts_with("sm_") { "NVIDIA" } else { "AMD" });
        p.field(1, "Feature:", "KERNEL_DISPATCH");
        p.field(1, "Profile:", "BASE_PROFILE");
        p.field(1, "Float Round Mode:", "NEAR");
        p.field(1, "Max Queue Number:", int(128));
        p.field(1, "Queue Min Size:", int(64));
        p.field(1, "Queue Max Size:", int(131072));
        p.field(1, "Queue Type:", "MULTI");
        p.field(1, "Node:", node);
        p.field(1, "Device Type:", "GPU");
        p.label(1, "Cache Info:");
        if dev.l2_cache_size > 0 {
            p.field(2, "L2:", format!("{}KB", int(u64::from(dev.l2_cache_size) / 1024)));
        }
        p.field(1, "Chip ID:", int(u64::from(dev.pci_device_id)));
        p.field(1, "ASIC Revision:", int(0));
        p.field(1, "Cacheline Size:", int(128));
        p.field(1, "Max Clock Freq. (MHz):", dev.clock_rate_khz / 1000);
        p.field(1, "BDFID:", (dev.pci_bus_id << 8) | (dev.pci_device_id & 0x1f) << 3);
        p.field(1, "Internal Node ID:", node);
        p.field(1, "Compute Unit:", dev.multi_processor_count);
        p.field(1, "SIMDs per CU:", 4);
        p.field(1, "Shader Engines:", 0);
        p.field(1, "Shader Arrs. per Eng.:", 0);
        p.field(1, "WatchPts on Addr. Ranges:", 4);
        p.field(1, "Coherent Host Access:", "FALSE");
        p.field(1, "Memory Properties:", "");
        p.field(1, "Features:", "KERNEL_DISPATCH ");
        p.field(1, "Fast F16 Operation:", "TRUE");
        p.field(1, "Wavefront Size:", int(dev.warp_size.into()));
        p.field(1, "Workgroup Max Size:", int(dev.max_threads_per_block.into()));
        p.label(1, "Workgroup Max Size per Dimension:");
        for (axis, size) in ["x", "y", "z"].iter().zip(dev.max_threads_dim) {
            p.field(2, axis, int(size.into()));
        }
        let waves = dev.max_threads_per_multiprocessor / dev.warp_size.max(1);
        p.field(1, "Max Waves Per CU:", int(waves.into()));
        p.field(1, "Max Work-item Per CU:", int(u64::from(waves) * u64::from(dev.warp_size)));
        p.field(1, "Grid Max Size:", int(u32::MAX.into()));
        p.label(1, "Grid Max Size per Dimension:");
        for (axis, size) in ["x", "y", "z"].iter().zip(dev.max_grid_size) {
            p.field(2, axis, int(size.into()));
        }
        p.field(1, "Max fbarriers/Workgrp:", 32);
        p.field(1, "Packet Processor uCode::", 0);
        p.field(1, "SDMA engine uCode::", 0);
        p.field(1, "IOMMU Support::", "None");
        p.label(1, "Pool Info:");
        pool(&mut p, 1, "GLOBAL; FLAGS: COARSE GRAINED", dev.total_global_mem, 4);
        p.label(1, "ISA Info:");
        p.label(2, "ISA 1");
        p.field(3, "Name:", isa_name(arch));
        p.field(3, "Machine Models:", "HSA_MACHINE_MODEL_LARGE");
        p.field(3, "Profiles:", "HSA_PROFILE_BASE");
        p.field(3, "Default Rounding Mode:", "NEAR");
        p.field(3, "Default Rounding Mode:", "NEAR");
        p.field(3, "Fast f16:", "TRUE");
        p.field(3, "Workgroup Max Size:", int(dev.max_threads_per_block.into()));
        p.label(3, "Workgroup Max Size per Dimension:");
        for (axis, size) in ["x", "y", "z"].iter().zip(dev.max_threads_dim) {
            p.field(4, axis, int(size.into()));
        }
        p.field(3, "Grid Max Size:", int(u32::MAX.into()));
        p.label(3, "Grid Max Size per Dimension:");
        for (axis, size) in ["x", "y", "z"].iter().zip(dev.max_grid_size) {
            p.field(4, axis, int(size.into()));
        }
        p.field(3, "FBarrier Max Size:", 32);
    }
    p.label(0, "*** Done ***");
    p.out
}

fn agent_header(p: &mut Printer, number: usize) {
    p.label(0, "*******");
    p.label(0, &format!("Agent {number}"));
    p.label(0, "*******");
}

fn pool(p: &mut Printer, number: usize, segment: &str, bytes: u64, granule_kib: u64) {
    p.label(2, &format!("Pool {number}"));
    p.field(3, "Segment:", segment);
    p.field(3, "Size:", format!("{}KB", int(bytes / 1024)));
    p.field(3, "Allocatable:", "TRUE");
    p.field(3, "Alloc Granule:", format!("{granule_kib}KB"));
    p.field(3, "Alloc Recommended Granule:", format!("{}KB", granule_kib * 512));
    p.field(3, "Alloc Alignment:", format!("{granule_kib}KB"));
    p.field(3, "Accessible by all:", "FALSE");
}

/// Runs `rocminfo` or `rocm_agent_enumerator` (by `tool`) against the worker at `addr`.
pub fn run(tool: &str, args: &[String], addr: &str) -> Result<(), String> {
    let names = match (tool, args) {
        ("rocm_agent_enumerator", [flag]) if flag == "-name" => true,
        (_, []) => false,
        ("rocm_agent_enumerator", _) => return Err("usage: rocm_agent_enumerator [-name]".into()),
        _ => return Err(format!("usage: {tool} (the worker is HIP_REMOTE_WORKER, here {addr})")),
    };
    let mut session = crate::probe::WorkerSession::open(addr, tool).map_err(|e| format!("hip-worker at {addr}: {e}"))?;
    let devices = session.devices()?;
    session.close();
    let text = if tool == "rocminfo" { rocminfo(&CpuAgent::local(), &devices) } else { agent_enumerator(&devices, names) };
    print!("{text}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto_core::field::FixedStr;

    fn with_arch(arch: &str) -> DeviceProperties {
        DeviceProperties {
            name: FixedStr::truncated("Test GPU"),
            arch_name: FixedStr::truncated(arch),
            total_global_mem: 3 << 30,
            warp_size: 64,
            max_threads_per_block: 1024,
            max_threads_dim: [1024; 3],
            max_grid_size: [u32::MAX; 3],
            max_threads_per_multiprocessor: 2048,
            multi_processor_count: 104,
            ..DeviceProperties::default()
        }
    }

    /// The lines rocm_agent_enumerator's `readFromROCMINFO` takes from rocminfo: `Name:` at
    /// the start of an indented line, `gfx` and digits (or, with `-name`, the amdgcn ISA name).
    fn rocm_parse(text: &str, isa: bool) -> Vec<String> {
        text.lines()
            .filter_map(|l| {
                let value = l.trim_start().strip_prefix("Name:")?.trim();
                let ok = if isa { value.starts_with("amdgcn-amd-amdhsa--gfx") } else { value.starts_with("gfx") };
                (l.starts_with(' ') && ok).then(|| value.to_string())
            })
            .collect()
    }

    #[test]
    fn enumerator_prints_the_cpu_then_every_device() {
        let devices = [with_arch("gfx942:sramecc+:xnack-"), with_arch("sm_90"), with_arch("host")];
        assert_eq!(agent_enumerator(&devices, false), "gfx000\ngfx942\nsm_90\nhost\n");
        assert_eq!(agent_enumerator(&devices, true), "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-\nnvptx64-nvidia-cuda--sm_90\nhip-remote--host\n");
    }

    #[test]
    fn rocminfo_reads_as_rocm_tools_read_it() {
        let devices = [with_arch("gfx90a:sramecc+:xnack-"), with_arch("gfx1100")];
        let cpu = CpuAgent { model: "Test CPU".into(), cores: 8, max_clock_mhz: 3000, memory_bytes: 16 << 30 };
        let text = rocminfo(&cpu, &devices);
        assert_eq!(rocm_parse(&text, false), ["gfx90a", "gfx1100"]);
        assert_eq!(rocm_parse(&text, true), ["amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", "amdgcn-amd-amdhsa--gfx1100"]);
        assert_eq!(text.matches("Device Type:             GPU").count(), 2);
        assert_eq!(text.matches("Device Type:             CPU").count(), 1);
        assert!(text.contains("  Marketing Name:          Test CPU"), "{text}");
        // The pool is the device's memory, in KiB as rocminfo prints it.
        let kib = devices[0].total_global_mem / 1024;
        assert!(text.contains(&format!("      Size:                    {kib}({kib:#x})KB")), "{text}");
        assert!(text.lines().last().unwrap().starts_with("*** Done ***"));
        // Every label sits in its 25 columns, as rocminfo's printf("%-25s") puts it.
        for line in text.lines().filter(|l| l.contains(':') && !l.starts_with("***")) {
            let body = line.trim_start();
            let label = body.get(..25).unwrap_or(body);
            if label.contains(':') && !body.starts_with("Workgroup") && !body.starts_with("Grid") && !body.starts_with("Alloc Rec") {
                assert!(label.trim_end().ends_with(':') && label.len() == 25, "{line:?}");
            }
        }
    }
}
