//! What a device is doing, for the operator's endpoint and the SMI tools: utilisation,
//! power, temperature, clocks. Read when a scrape asks, from the source that knows:
//!
//! - cuda: NVML (`libnvidia-ml.so.1`, loaded at run time like the driver), device matched by
//!   its PCI address;
//! - hip: AMD SMI (`libamd_smi.so`, loaded at run time), matched by PCI address;
//! - host: the operating system — the CPU's busy share from `/proc/stat` between scrapes.
//!
//! A figure the source lacks stays `None`, rendered as no sample and reported by the SMI
//! library as `AMDSMI_STATUS_NOT_SUPPORTED`, never as a made-up number.

use crate::backend::DeviceProperties;
use std::sync::Mutex;
#[cfg(any(feature = "cuda", feature = "hip"))]
use std::sync::OnceLock;

/// One device's live figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceTelemetry {
    /// Busy share of the compute engine, 0 to 1.
    pub utilization: Option<f64>,
    /// Current board power, watts.
    pub power_watts: Option<f64>,
    /// Enforced power limit, watts.
    pub power_limit_watts: Option<f64>,
    /// Core temperature, °C.
    pub temperature_celsius: Option<f64>,
    /// Graphics (shader) clock now and at most, MHz.
    pub gfx_clock_mhz: Option<u32>,
    pub gfx_clock_max_mhz: Option<u32>,
    /// Memory clock now and at most, MHz.
    pub mem_clock_mhz: Option<u32>,
    pub mem_clock_max_mhz: Option<u32>,
}

/// Telemetry of `props`' device on a backend named `backend`.
pub fn read(backend: &str, props: &DeviceProperties) -> DeviceTelemetry {
    let _ = props; // only the GPU sources match a device
    match backend {
        #[cfg(feature = "cuda")]
        "cuda" => nvml::read(props).unwrap_or_default(),
        #[cfg(feature = "hip")]
        "hip" => amdsmi::read(props).unwrap_or_default(),
        "host" => DeviceTelemetry { utilization: host_cpu_busy(), ..DeviceTelemetry::default() },
        _ => DeviceTelemetry::default(),
    }
}

/// `/proc/stat`'s first line: (busy, total) jiffies.
fn cpu_jiffies(stat: &str) -> Option<(u64, u64)> {
    let fields: Vec<u64> = stat.lines().next()?.strip_prefix("cpu ")?.split_whitespace().filter_map(|f| f.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal (guest time is inside user/nice).
    let total: u64 = fields.iter().take(8).sum();
    let idle = fields.get(3)? + fields.get(4).copied().unwrap_or(0);
    Some((total - idle, total))
}

/// The CPU's busy share since the previous call (since boot on the first).
fn host_cpu_busy() -> Option<f64> {
    static PREVIOUS: Mutex<(u64, u64)> = Mutex::new((0, 0));
    let (busy, total) = cpu_jiffies(&std::fs::read_to_string("/proc/stat").ok()?)?;
    let mut previous = PREVIOUS.lock().unwrap_or_else(|e| e.into_inner());
    let (busy_before, total_before) = if total > previous.1 { *previous } else { (0, 0) };
    *previous = (busy, total);
    let elapsed = total.checked_sub(total_before).filter(|t| *t > 0)?;
    Some((busy.saturating_sub(busy_before) as f64 / elapsed as f64).clamp(0.0, 1.0))
}

/// `DDDDDDDD:BB:DD.0`, as NVML and AMD SMI name a PCI device.
pub fn pci_address(props: &DeviceProperties) -> String {
    format!("{:08x}:{:02x}:{:02x}.0", props.pci_domain_id, props.pci_bus_id, props.pci_device_id)
}

#[cfg(feature = "cuda")]
mod nvml {
    use super::*;
    use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
    use nvml_wrapper::Nvml;

    fn library() -> Option<&'static Nvml> {
        static NVML: OnceLock<Option<Nvml>> = OnceLock::new();
        NVML.get_or_init(|| match Nvml::builder().lib_path("libnvidia-ml.so.1".as_ref()).init() {
            Ok(nvml) => Some(nvml),
            Err(e) => {
                tracing::info!(%e, "NVML not available: no device telemetry");
                None
            }
        })
        .as_ref()
    }

    pub(super) fn read(props: &DeviceProperties) -> Option<DeviceTelemetry> {
        let device = library()?.device_by_pci_bus_id(pci_address(props).to_uppercase()).ok()?;
        let mhz = |clock: Clock, max: bool| if max { device.max_clock_info(clock).ok() } else { device.clock_info(clock).ok() };
        Some(DeviceTelemetry {
            utilization: device.utilization_rates().ok().map(|u| f64::from(u.gpu) / 100.0),
            power_watts: device.power_usage().ok().map(|mw| f64::from(mw) / 1000.0),
            power_limit_watts: device.enforced_power_limit().ok().map(|mw| f64::from(mw) / 1000.0),
            temperature_celsius: device.temperature(TemperatureSensor::Gpu).ok().map(f64::from),
            gfx_clock_mhz: mhz(Clock::Graphics, false),
            gfx_clock_max_mhz: mhz(Clock::Graphics, true),
            mem_clock_mhz: mhz(Clock::Memory, false),
            mem_clock_max_mhz: mhz(Clock::Memory, true),
        })
    }
}

#[cfg(feature = "hip")]
mod amdsmi {
    //! The few AMD SMI calls telemetry needs, by the layouts of amdsmi.h (ROCm 7).
    use super::*;
    use std::ffi::c_void;

    const INIT_AMD_GPUS: u64 = 2;
    const CLK_TYPE_GFX: u32 = 0;
    const CLK_TYPE_MEM: u32 = 4;
    const TEMPERATURE_TYPE_HOTSPOT: u32 = 1;
    const TEMP_CURRENT: u32 = 0;

    #[repr(C)]
    #[derive(Default)]
    struct EngineUsage {
        gfx_activity: u32,
        umc_activity: u32,
        mm_activity: u32,
        reserved: [u32; 13],
    }

    #[repr(C)]
    #[derive(Default)]
    struct PowerInfo {
        socket_power: u64,
        current_socket_power: u32,
        average_socket_power: u32,
        gfx_voltage: u64,
        soc_voltage: u64,
        mem_voltage: u64,
        power_limit: u32,
        reserved: [u64; 18],
    }

    #[repr(C)]
    #[derive(Default)]
    struct ClkInfo {
        clk: u32,
        min_clk: u32,
        max_clk: u32,
        clk_locked: u8,
        clk_deep_sleep: u8,
        reserved: [u32; 4],
    }

    type Handle = *mut c_void;

    struct AmdSmi {
        _lib: libloading::Library,
        get_gpu_activity: unsafe extern "C" fn(Handle, *mut EngineUsage) -> u32,
        get_power_info: unsafe extern "C" fn(Handle, *mut PowerInfo) -> u32,
        get_clock_info: unsafe extern "C" fn(Handle, u32, *mut ClkInfo) -> u32,
        get_temp_metric: unsafe extern "C" fn(Handle, u32, u32, *mut i64) -> u32,
        /// (PCI address, processor handle) of every GPU.
        gpus: Vec<(String, usize)>,
    }

    fn load() -> Result<AmdSmi, String> {
        // SAFETY: loading AMD SMI runs its initialisers, which only set up its own state.
        let lib = unsafe { libloading::Library::new("libamd_smi.so") }.map_err(|e| e.to_string())?;
        // SAFETY: each symbol is declared with amdsmi.h's signature.
        unsafe {
            let init: libloading::Symbol<unsafe extern "C" fn(u64) -> u32> = lib.get(b"amdsmi_init").map_err(|e| e.to_string())?;
            let sockets: libloading::Symbol<unsafe extern "C" fn(*mut u32, *mut Handle) -> u32> =
                lib.get(b"amdsmi_get_socket_handles").map_err(|e| e.to_string())?;
            let processors: libloading::Symbol<unsafe extern "C" fn(Handle, *mut u32, *mut Handle) -> u32> =
                lib.get(b"amdsmi_get_processor_handles").map_err(|e| e.to_string())?;
            let bdf: libloading::Symbol<unsafe extern "C" fn(Handle, *mut u64) -> u32> =
                lib.get(b"amdsmi_get_gpu_device_bdf").map_err(|e| e.to_string())?;
            // hip-remote's own forwarding library (an installed layout on the loader's path)
            // would ask this worker's endpoint about itself: only ROCm's will do.
            #[repr(C)]
            struct Version {
                major: u32,
                minor: u32,
                release: u32,
                build: *const std::ffi::c_char,
            }
            let version: libloading::Symbol<unsafe extern "C" fn(*mut Version) -> u32> =
                lib.get(b"amdsmi_get_lib_version").map_err(|e| e.to_string())?;
            let mut v = Version { major: 0, minor: 0, release: 0, build: std::ptr::null() };
            if version(&mut v) == 0 && !v.build.is_null() && std::ffi::CStr::from_ptr(v.build).to_bytes() == b"hip-remote" {
                return Err("the libamd_smi.so found is hip-remote's forwarding library, not ROCm's: put ROCm's lib directory first on the worker's loader path".into());
            }
            if init(INIT_AMD_GPUS) != 0 {
                return Err("amdsmi_init failed".into());
            }
            let mut gpus = Vec::new();
            let mut socket_count = 0u32;
            sockets(&mut socket_count, std::ptr::null_mut());
            let mut socket_handles = vec![std::ptr::null_mut(); socket_count as usize];
            sockets(&mut socket_count, socket_handles.as_mut_ptr());
            for socket in socket_handles.into_iter().take(socket_count as usize) {
                let mut count = 0u32;
                processors(socket, &mut count, std::ptr::null_mut());
                let mut handles = vec![std::ptr::null_mut(); count as usize];
                processors(socket, &mut count, handles.as_mut_ptr());
                for handle in handles.into_iter().take(count as usize) {
                    let mut raw = 0u64;
                    if bdf(handle, &mut raw) == 0 {
                        // function:3 device:5 bus:8 domain:48, from the low bit up.
                        let address = format!("{:08x}:{:02x}:{:02x}.0", raw >> 16, (raw >> 8) & 0xff, (raw >> 3) & 0x1f);
                        gpus.push((address, handle as usize));
                    }
                }
            }
            Ok(AmdSmi {
                get_gpu_activity: *lib.get(b"amdsmi_get_gpu_activity").map_err(|e| e.to_string())?,
                get_power_info: *lib.get(b"amdsmi_get_power_info").map_err(|e| e.to_string())?,
                get_clock_info: *lib.get(b"amdsmi_get_clock_info").map_err(|e| e.to_string())?,
                get_temp_metric: *lib.get(b"amdsmi_get_temp_metric").map_err(|e| e.to_string())?,
                gpus,
                _lib: lib,
            })
        }
    }

    fn library() -> Option<&'static AmdSmi> {
        static AMDSMI: OnceLock<Option<AmdSmi>> = OnceLock::new();
        AMDSMI.get_or_init(|| load().map_err(|e| tracing::info!(%e, "AMD SMI not available: no device telemetry")).ok()).as_ref()
    }

    pub(super) fn read(props: &DeviceProperties) -> Option<DeviceTelemetry> {
        let smi = library()?;
        let address = pci_address(props);
        let handle = smi.gpus.iter().find(|(a, _)| *a == address)?.1 as Handle;
        let mut t = DeviceTelemetry::default();
        let (mut usage, mut power, mut temp) = (EngineUsage::default(), PowerInfo::default(), 0i64);
        // SAFETY: `handle` came from this library; each output is a live struct of amdsmi.h's
        // layout.
        unsafe {
            if (smi.get_gpu_activity)(handle, &mut usage) == 0 {
                t.utilization = Some(f64::from(usage.gfx_activity.min(100)) / 100.0);
            }
            if (smi.get_power_info)(handle, &mut power) == 0 {
                t.power_watts = Some(f64::from(power.current_socket_power));
                // amdsmi.h: the limit in watts.
                t.power_limit_watts = Some(f64::from(power.power_limit)).filter(|w| *w > 0.0);
            }
            if (smi.get_temp_metric)(handle, TEMPERATURE_TYPE_HOTSPOT, TEMP_CURRENT, &mut temp) == 0 {
                t.temperature_celsius = Some(temp as f64);
            }
            for (clock, now, max) in
                [(CLK_TYPE_GFX, &mut t.gfx_clock_mhz, &mut t.gfx_clock_max_mhz), (CLK_TYPE_MEM, &mut t.mem_clock_mhz, &mut t.mem_clock_max_mhz)]
            {
                let mut info = ClkInfo::default();
                if (smi.get_clock_info)(handle, clock, &mut info) == 0 {
                    (*now, *max) = (Some(info.clk), Some(info.max_clk));
                }
            }
        }
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_busy_share_from_proc_stat() {
        // user nice system idle iowait irq softirq steal guest guest_nice
        let (busy, total) = cpu_jiffies("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4\n").unwrap();
        assert_eq!((busy, total), (150, 1000));
        assert_eq!(cpu_jiffies("intr 1 2 3\n"), None);
        let busy = host_cpu_busy().expect("Linux has /proc/stat");
        assert!((0.0..=1.0).contains(&busy));
    }

    #[test]
    fn pci_addresses_as_the_smi_libraries_write_them() {
        use crate::backend::{DeviceBackend, HostBackend, HostConfig};
        let mut props = HostBackend::new(HostConfig::default()).device_properties(0).unwrap();
        (props.pci_domain_id, props.pci_bus_id, props.pci_device_id) = (0, 0x1b, 3);
        assert_eq!(pci_address(&props), "00000000:1b:03.0");
    }
}
