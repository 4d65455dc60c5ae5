//! Device properties of the host backend, built from what `/proc` says about the machine.
//!
//! The values describe an emulator, not a GPU: the name says so, `gcnArchName` is `host`, and
//! figures with no host counterpart (memory clock, bus width) are nominal non-zero values so
//! clients that divide by them keep working.

use std::fs;

use crate::backend::{DeviceIndex, DeviceProperties};

/// Largest name `hipDeviceProp_t::name` (`char[256]`) holds with its terminator.
const MAX_NAME_BYTES: usize = 255;
/// Used when `/proc/meminfo` cannot be read.
const FALLBACK_PHYSICAL_MEMORY: u64 = 4 << 30;
/// Cap of the default emulated capacity.
const DEFAULT_CAPACITY_CAP: u64 = 16 << 30;

/// Warp size the host backend reports: 32, as NVIDIA GPUs and AMD's RDNA (wave32) have, so
/// clients that size blocks or reductions by `warpSize` get the shapes they would on a GPU.
/// hiprtc's prelude (`rtc/prelude.hpp`) defines the same `warpSize` for its warp operations.
pub(super) const HOST_WARP_SIZE: i32 = 32;

/// Blocks the host backend reports resident on one multiprocessor (a core): its most threads
/// per multiprocessor in blocks of one warp, the shape occupancy calculators expect.
pub(super) const HOST_MAX_BLOCKS_PER_MULTIPROCESSOR: i32 = 1024 / HOST_WARP_SIZE;

/// Rate of device `clock64()` in host kernels: it reads `CLOCK_MONOTONIC` in nanoseconds
/// (`rtc/prelude.hpp`), a 1 GHz counter.
pub(super) const HOST_CLOCK64_RATE_KHZ: i32 = 1_000_000;

/// What the host CPU tells about itself.
#[derive(Debug, Clone)]
pub(super) struct CpuInfo {
    model: String,
    clock_khz: i32,
    cache_bytes: i32,
    cores: i32,
}

impl CpuInfo {
    /// Reads `/proc/cpuinfo`; anything missing gets a neutral value.
    pub(super) fn probe() -> Self {
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        Self::parse(&cpuinfo)
    }

    fn parse(cpuinfo: &str) -> Self {
        let field = |key: &str| {
            cpuinfo.lines().find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.trim().eq_ignore_ascii_case(key).then(|| value.trim().to_string())
            })
        };
        let model = field("model name").filter(|m| !m.is_empty()).unwrap_or_else(|| "CPU".into());
        let clock_khz = field("cpu MHz").and_then(|mhz| mhz.parse::<f64>().ok()).map_or(1_000_000, |mhz| (mhz * 1e3) as i32);
        let cache_bytes = field("cache size")
            .and_then(|size| size.trim_end_matches("KB").trim().parse::<i32>().ok())
            .map_or(1 << 20, |kib| kib.saturating_mul(1024));
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as i32);
        Self { model, clock_khz, cache_bytes, cores }
    }
}

/// `min(physical RAM / 2, 16 GiB)`.
pub(super) fn default_capacity() -> u64 {
    (physical_memory() / 2).min(DEFAULT_CAPACITY_CAP)
}

fn physical_memory() -> u64 {
    fs::read_to_string("/proc/meminfo").ok().and_then(|meminfo| parse_mem_total(&meminfo)).unwrap_or(FALLBACK_PHYSICAL_MEMORY)
}

fn parse_mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|line| line.starts_with("MemTotal:"))?;
    let kib: u64 = line.trim_start_matches("MemTotal:").trim().trim_end_matches("kB").trim().parse().ok()?;
    kib.checked_mul(1024)
}

/// Cuts `name` to at most [`MAX_NAME_BYTES`] bytes on a character boundary.
fn truncate_name(mut name: String) -> String {
    if name.len() > MAX_NAME_BYTES {
        let cut = (0..=MAX_NAME_BYTES).rev().find(|&i| name.is_char_boundary(i)).unwrap_or(0);
        name.truncate(cut);
    }
    name
}

pub(super) fn host_properties(dev: DeviceIndex, capacity: u64, cpu: &CpuInfo) -> DeviceProperties {
    DeviceProperties {
        name: truncate_name(format!("hip-remote host emulation ({})", cpu.model)),
        gcn_arch_name: "host".into(),
        total_global_mem: capacity,
        shared_mem_per_block: 64 << 10,
        shared_mem_per_block_optin: 64 << 10,
        regs_per_block: 65_536,
        warp_size: HOST_WARP_SIZE,
        max_threads_per_block: 1024,
        max_threads_dim: [1024, 1024, 64],
        max_grid_size: [i32::MAX, 65_535, 65_535],
        clock_rate_khz: cpu.clock_khz,
        memory_clock_rate_khz: 1_000_000,
        memory_bus_width: 64,
        total_const_mem: 64 << 10,
        // The lowest real version: feature checks fail closed rather than assume a GPU.
        major: 1,
        minor: 0,
        multi_processor_count: cpu.cores,
        l2_cache_size: cpu.cache_bytes,
        max_threads_per_multiprocessor: 1024,
        compute_mode: 0,
        concurrent_kernels: true,
        pci_domain_id: 0,
        // Distinct per device so `hipDeviceGetPCIBusId` strings differ.
        pci_bus_id: i32::try_from(dev).unwrap_or(i32::MAX),
        pci_device_id: 0,
        max_shared_memory_per_multiprocessor: 64 << 10,
        is_multi_gpu_board: false,
        // Client host memory is on another machine: it cannot be mapped.
        can_map_host_memory: false,
        integrated: false,
        ecc_enabled: false,
        unified_addressing: true,
        managed_memory: false,
        concurrent_managed_access: false,
        pageable_memory_access: false,
        cooperative_launch: true,
        kernel_exec_timeout_enabled: false,
        async_engine_count: 1,
        mem_pitch: capacity,
        texture_alignment: 256,
        // One block's worth per core: a core runs the blocks it is given one after another.
        regs_per_multiprocessor: 65_536,
        max_blocks_per_multiprocessor: HOST_MAX_BLOCKS_PER_MULTIPROCESSOR,
        // No L2 set-aside on a CPU.
        persisting_l2_cache_max_size: 0,
        // Cooperative launches span one device only.
        cooperative_multi_device_launch: false,
        clock_instruction_rate_khz: HOST_CLOCK64_RATE_KHZ,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cpuinfo() {
        let cpu = CpuInfo::parse("processor\t: 0\nmodel name\t: Example CPU @ 2.00GHz\ncpu MHz\t\t: 2000.5\ncache size\t: 512 KB\n");
        assert_eq!(cpu.model, "Example CPU @ 2.00GHz");
        assert_eq!(cpu.clock_khz, 2_000_500);
        assert_eq!(cpu.cache_bytes, 512 * 1024);
    }

    #[test]
    fn missing_cpuinfo_says_cpu() {
        let cpu = CpuInfo::parse("");
        assert_eq!(cpu.model, "CPU");
        let props = host_properties(0, 1 << 30, &cpu);
        assert_eq!(props.name, "hip-remote host emulation (CPU)");
        assert_eq!(props.gcn_arch_name, "host");
        assert_eq!(props.total_global_mem, 1 << 30);
    }

    #[test]
    fn parses_meminfo() {
        assert_eq!(parse_mem_total("MemTotal:       16384 kB\nMemFree: 1 kB\n"), Some(16 << 20));
        assert_eq!(parse_mem_total("nothing"), None);
    }

    #[test]
    fn long_names_are_cut_on_char_boundaries() {
        let name = truncate_name("é".repeat(200));
        assert!(name.len() <= MAX_NAME_BYTES);
        assert_eq!(name.len(), 254);
    }
}
