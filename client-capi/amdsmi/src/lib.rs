//! hip-remote's forwarding `libamd_smi.so`: the AMD SMI C API (`amdsmi.h`, ROCm 7.0.2
//! layouts) for the devices of a hip-remote worker, read from the worker's operator endpoint
//! ([`snapshot`]: `HIP_REMOTE_METRICS`, else `HIP_REMOTE_WORKER`'s host on port 18516).
//!
//! Each worker device is one socket with one processor of type `AMDSMI_PROCESSOR_TYPE_AMD_GPU`
//! — hip-remote presents every device as a HIP GPU, whatever the worker's backend. Static
//! figures (names, PCI address, memory size) come from the scrape at `amdsmi_init`; live ones
//! (memory in use, activity, power, temperature, clocks) from a fresh scrape at each call.
//! What the worker does not report is `AMDSMI_STATUS_NOT_SUPPORTED`, as is every entry point
//! this library does not implement ([`unsupported`]); an unreachable worker is
//! `AMDSMI_STATUS_INIT_ERROR` at init and `AMDSMI_STATUS_IO` afterwards.
#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]
#![allow(non_camel_case_types, clippy::missing_safety_doc)]

pub mod snapshot;

use snapshot::{Device, Snapshot};
use std::ffi::{c_char, c_void, CStr};
use std::sync::{Mutex, MutexGuard};

/// `amdsmi_status_t`.
pub type amdsmi_status_t = u32;
pub const AMDSMI_STATUS_SUCCESS: amdsmi_status_t = 0;
pub const AMDSMI_STATUS_INVAL: amdsmi_status_t = 1;
pub const AMDSMI_STATUS_NOT_SUPPORTED: amdsmi_status_t = 2;
pub const AMDSMI_STATUS_IO: amdsmi_status_t = 12;
pub const AMDSMI_STATUS_INIT_ERROR: amdsmi_status_t = 18;
pub const AMDSMI_STATUS_NOT_FOUND: amdsmi_status_t = 31;
pub const AMDSMI_STATUS_NOT_INIT: amdsmi_status_t = 32;
pub const AMDSMI_STATUS_INSUFFICIENT_SIZE: amdsmi_status_t = 41;

pub const AMDSMI_PROCESSOR_TYPE_AMD_GPU: u32 = 1;
pub const AMDSMI_MEM_TYPE_VRAM: u32 = 0;
pub const AMDSMI_MEM_TYPE_VIS_VRAM: u32 = 1;
pub const AMDSMI_CLK_TYPE_GFX: u32 = 0;
pub const AMDSMI_CLK_TYPE_MEM: u32 = 4;
pub const AMDSMI_TEMPERATURE_TYPE_EDGE: u32 = 0;
pub const AMDSMI_TEMPERATURE_TYPE_HOTSPOT: u32 = 1;
pub const AMDSMI_TEMP_CURRENT: u32 = 0;
/// What amdsmi reports for a figure a device lacks inside a supported structure.
const NA32: u32 = u32::MAX;
const NA64: u64 = u64::MAX;

/// Handles are tagged indices, never pointers: a made-up one is `AMDSMI_STATUS_INVAL`.
const SOCKET_TAG: usize = 0x5350_0000;
const PROCESSOR_TAG: usize = 0x4750_0000;
const TAG_MASK: usize = 0xffff_0000;

type Handle = *mut c_void;

#[repr(C)]
pub struct amdsmi_asic_info_t {
    pub market_name: [c_char; 256],
    pub vendor_id: u32,
    pub vendor_name: [c_char; 256],
    pub subvendor_id: u32,
    pub device_id: u64,
    pub rev_id: u32,
    pub asic_serial: [c_char; 256],
    pub oam_id: u32,
    pub num_of_compute_units: u32,
    pub target_graphics_version: u64,
    pub subsystem_id: u32,
    pub reserved: [u32; 21],
}

#[repr(C)]
pub struct amdsmi_vram_info_t {
    pub vram_type: u32,
    pub vram_vendor: [c_char; 256],
    pub vram_size: u64,
    pub vram_bit_width: u32,
    pub vram_max_bandwidth: u64,
    pub reserved: [u64; 37],
}

#[repr(C)]
pub struct amdsmi_vram_usage_t {
    pub vram_total: u32,
    pub vram_used: u32,
    pub reserved: [u32; 2],
}

#[repr(C)]
pub struct amdsmi_engine_usage_t {
    pub gfx_activity: u32,
    pub umc_activity: u32,
    pub mm_activity: u32,
    pub reserved: [u32; 13],
}

#[repr(C)]
pub struct amdsmi_power_info_t {
    pub socket_power: u64,
    pub current_socket_power: u32,
    pub average_socket_power: u32,
    pub gfx_voltage: u64,
    pub soc_voltage: u64,
    pub mem_voltage: u64,
    pub power_limit: u32,
    pub reserved: [u64; 18],
}

#[repr(C)]
pub struct amdsmi_clk_info_t {
    pub clk: u32,
    pub min_clk: u32,
    pub max_clk: u32,
    pub clk_locked: u8,
    pub clk_deep_sleep: u8,
    pub reserved: [u32; 4],
}

#[repr(C)]
pub struct amdsmi_version_t {
    pub major: u32,
    pub minor: u32,
    pub release: u32,
    pub build: *const c_char,
}

// The layouts of the PyPI amdsmi 7.0.2 wrapper (its ctypes structures, with their padding).
const _: () = assert!(std::mem::size_of::<amdsmi_asic_info_t>() == 896);
const _: () = assert!(std::mem::size_of::<amdsmi_vram_info_t>() == 584);
const _: () = assert!(std::mem::size_of::<amdsmi_vram_usage_t>() == 16);
const _: () = assert!(std::mem::size_of::<amdsmi_engine_usage_t>() == 64);
const _: () = assert!(std::mem::size_of::<amdsmi_power_info_t>() == 192);
const _: () = assert!(std::mem::size_of::<amdsmi_clk_info_t>() == 32);
const _: () = assert!(std::mem::size_of::<amdsmi_version_t>() == 24);

struct State {
    endpoint: String,
    devices: Vec<Device>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn state() -> MutexGuard<'static, Option<State>> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `body`, turning a panic into `AMDSMI_STATUS_UNKNOWN_ERROR` (a panic must not unwind
/// into C).
fn boundary(body: impl FnOnce() -> Result<(), amdsmi_status_t>) -> amdsmi_status_t {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(Ok(())) => AMDSMI_STATUS_SUCCESS,
        Ok(Err(status)) => status,
        Err(_) => u32::MAX,
    }
}

/// The device index behind a handle of `tag`.
fn index(handle: Handle, tag: usize) -> Result<usize, amdsmi_status_t> {
    let raw = handle as usize;
    let guard = state();
    let count = guard.as_ref().ok_or(AMDSMI_STATUS_NOT_INIT)?.devices.len();
    if raw & TAG_MASK != tag || raw & !TAG_MASK >= count {
        return Err(AMDSMI_STATUS_INVAL);
    }
    Ok(raw & !TAG_MASK)
}

/// The device at init.
fn known(processor: Handle) -> Result<Device, amdsmi_status_t> {
    let i = index(processor, PROCESSOR_TAG)?;
    Ok(state().as_ref().ok_or(AMDSMI_STATUS_NOT_INIT)?.devices[i].clone())
}

/// The device now (a fresh scrape).
fn live(processor: Handle) -> Result<Device, amdsmi_status_t> {
    let i = index(processor, PROCESSOR_TAG)? as u32;
    let endpoint = state().as_ref().ok_or(AMDSMI_STATUS_NOT_INIT)?.endpoint.clone();
    let snapshot = Snapshot::fetch(&endpoint).map_err(|_| AMDSMI_STATUS_IO)?;
    snapshot.devices.into_iter().find(|d| d.index == i).ok_or(AMDSMI_STATUS_NOT_FOUND)
}

fn out<'a, T>(ptr: *mut T) -> Result<&'a mut T, amdsmi_status_t> {
    // SAFETY: the caller passes a pointer to a live `T` or NULL (amdsmi.h's contract).
    unsafe { ptr.as_mut() }.ok_or(AMDSMI_STATUS_INVAL)
}

/// Copies `text` into `dst` (NUL-terminated, truncated to fit).
fn copy_str(dst: &mut [c_char], text: &str) {
    let n = text.len().min(dst.len().saturating_sub(1));
    for (d, s) in dst.iter_mut().zip(&text.as_bytes()[..n]) {
        *d = *s as c_char;
    }
    if let Some(end) = dst.get_mut(n) {
        *end = 0;
    }
}

/// Writes `text` into a caller buffer of `len` bytes.
fn copy_to_buffer(buf: *mut c_char, len: usize, text: &str) -> Result<(), amdsmi_status_t> {
    if buf.is_null() || len == 0 {
        return Err(AMDSMI_STATUS_INVAL);
    }
    // SAFETY: the caller gives `len` writable bytes at `buf`.
    copy_str(unsafe { std::slice::from_raw_parts_mut(buf, len) }, text);
    Ok(())
}

/// Lists `count` tagged handles into the caller's array: the count when `handles` is NULL,
/// else up to `*capacity` of them and how many were written.
fn list_handles(capacity: *mut u32, handles: *mut Handle, tags: impl ExactSizeIterator<Item = usize>) -> Result<(), amdsmi_status_t> {
    let capacity = out(capacity)?;
    let total = tags.len() as u32;
    if handles.is_null() {
        *capacity = total;
        return Ok(());
    }
    let written = total.min(*capacity);
    for (i, tag) in tags.take(written as usize).enumerate() {
        // SAFETY: the caller gives room for `*capacity` handles, and `i < *capacity`.
        unsafe { *handles.add(i) = tag as Handle };
    }
    *capacity = written;
    if written < total {
        return Err(AMDSMI_STATUS_INSUFFICIENT_SIZE);
    }
    Ok(())
}

fn device_count() -> Result<usize, amdsmi_status_t> {
    Ok(state().as_ref().ok_or(AMDSMI_STATUS_NOT_INIT)?.devices.len())
}

/// `DDDDDDDD:BB:DD.F` as amdsmi's `amdsmi_bdf_t` (function:3 device:5 bus:8 domain:48 bits).
pub fn bdf_bits(address: &str) -> Option<u64> {
    let (domain, rest) = address.split_once(':')?;
    let (bus, rest) = rest.split_once(':')?;
    let (device, function) = rest.split_once('.')?;
    let field = |s: &str, bits: u32| u64::from_str_radix(s, 16).ok().filter(|v| *v < 1 << bits);
    Some(field(function, 3)? | field(device, 5)? << 3 | field(bus, 8)? << 8 | field(domain, 48)? << 16)
}

/// amdsmi's `target_graphics_version`: the gfx name's digits read as hexadecimal (`gfx942` →
/// 0x942, `gfx90a` → 0x90a; amdsmi's Python prints `"gfx" + hex(value)`), 0 for a target that
/// is not a gfx one.
pub fn target_graphics_version(arch: &str) -> u64 {
    let digits = arch.split(':').next().unwrap_or_default().strip_prefix("gfx").unwrap_or_default();
    u64::from_str_radix(digits, 16).unwrap_or(0)
}

fn vendor(device: &Device) -> (u32, &'static str) {
    match device.arch.split(':').next().unwrap_or_default() {
        a if a.starts_with("gfx") => (0x1002, "Advanced Micro Devices Inc. [AMD/ATI]"),
        a if a.starts_with("sm_") => (0x10de, "NVIDIA Corporation"),
        _ => (0, "hip-remote host"),
    }
}

#[no_mangle]
pub extern "C" fn amdsmi_init(_flags: u64) -> amdsmi_status_t {
    boundary(|| {
        let endpoint = snapshot::endpoint_from_env();
        match Snapshot::fetch(&endpoint) {
            Ok(snapshot) => {
                *state() = Some(State { endpoint, devices: snapshot.devices });
                Ok(())
            }
            Err(e) => {
                eprintln!("libamd_smi (hip-remote): cannot read the worker's metrics at {endpoint}: {e} (start hip-worker with --metrics; set HIP_REMOTE_METRICS=HOST:PORT)");
                Err(AMDSMI_STATUS_INIT_ERROR)
            }
        }
    })
}

#[no_mangle]
pub extern "C" fn amdsmi_shut_down() -> amdsmi_status_t {
    boundary(|| state().take().map(|_| ()).ok_or(AMDSMI_STATUS_NOT_INIT))
}

#[no_mangle]
pub extern "C" fn amdsmi_get_socket_handles(count: *mut u32, handles: *mut Handle) -> amdsmi_status_t {
    boundary(|| list_handles(count, handles, (0..device_count()?).map(|i| SOCKET_TAG | i)))
}

#[no_mangle]
pub extern "C" fn amdsmi_get_cpu_handles(count: *mut u32, _handles: *mut Handle) -> amdsmi_status_t {
    boundary(|| {
        device_count()?;
        *out(count)? = 0;
        Err(AMDSMI_STATUS_NOT_SUPPORTED)
    })
}

#[no_mangle]
pub extern "C" fn amdsmi_get_socket_info(socket: Handle, len: usize, name: *mut c_char) -> amdsmi_status_t {
    boundary(|| {
        let i = index(socket, SOCKET_TAG)?;
        let address = state().as_ref().ok_or(AMDSMI_STATUS_NOT_INIT)?.devices[i].pci_address.clone();
        copy_to_buffer(name, len, &address.unwrap_or_else(|| format!("hip-remote device {i}")))
    })
}

#[no_mangle]
pub extern "C" fn amdsmi_get_processor_handles(socket: Handle, count: *mut u32, handles: *mut Handle) -> amdsmi_status_t {
    boundary(|| {
        let i = index(socket, SOCKET_TAG)?;
        list_handles(count, handles, std::iter::once(PROCESSOR_TAG | i))
    })
}

#[no_mangle]
pub extern "C" fn amdsmi_get_processor_handles_by_type(socket: Handle, kind: u32, handles: *mut Handle, count: *mut u32) -> amdsmi_status_t {
    boundary(|| {
        let i = index(socket, SOCKET_TAG)?;
        let mine = (kind == AMDSMI_PROCESSOR_TYPE_AMD_GPU).then_some(PROCESSOR_TAG | i);
        list_handles(count, handles, mine.into_iter())
    })
}

#[no_mangle]
pub extern "C" fn amdsmi_get_processor_type(processor: Handle, kind: *mut u32) -> amdsmi_status_t {
    boundary(|| {
        index(processor, PROCESSOR_TAG)?;
        *out(kind)? = AMDSMI_PROCESSOR_TYPE_AMD_GPU;
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn amdsmi_get_processor_info(processor: Handle, len: usize, name: *mut c_char) -> amdsmi_status_t {
    boundary(|| copy_to_buffer(name, len, &known(processor)?.name))
}

#[no_mangle]
pub extern "C" fn amdsmi_get_processor_handle_from_bdf(bdf: u64, processor: *mut Handle) -> amdsmi_status_t {
    boundary(|| {
        let out = out(processor)?;
        let guard = state();
        let devices = &guard.as_ref().ok_or(AMDSMI_STATUS_NOT_INIT)?.devices;
        let i = devices.iter().position(|d| d.pci_address.as_deref().and_then(bdf_bits) == Some(bdf)).ok_or(AMDSMI_STATUS_NOT_FOUND)?;
        *out = (PROCESSOR_TAG | i) as Handle;
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn amdsmi_get_gpu_device_bdf(processor: Handle, bdf: *mut u64) -> amdsmi_status_t {
    boundary(|| {
        let bits = known(processor)?.pci_address.as_deref().and_then(bdf_bits).ok_or(AMDSMI_STATUS_NOT_SUPPORTED)?;
        *out(bdf)? = bits;
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn amdsmi_get_gpu_vendor_name(processor: Handle, name: *mut c_char, len: usize) -> amdsmi_status_t {
    boundary(|| copy_to_buffer(name, len, vendor(&known(processor)?).1))
}

#[no_mangle]
pub extern "C" fn amdsmi_get_gpu_asic_info(processor: Handle, info: *mut amdsmi_asic_info_t) -> amdsmi_status_t {
    boundary(|| {
        let device = known(processor)?;
        let info = out(info)?;
        let (vendor_id, vendor_name) = vendor(&device);
        copy_str(&mut info.market_name, &device.name);
        info.vendor_id = vendor_id;
        copy_str(&mut info.vendor_name, vendor_name);
        info.subvendor_id = vendor_id;
        // Unknown here: 0 and an empty serial, which amdsmi's Python shows as "N/A".
        info.device_id = 0;
        info.rev_id = 0;
        copy_str(&mut info.asic_serial, "");
        info.oam_id = NA32;
        info.num_of_compute_units = device.compute_units.unwrap_or(NA32);
        info.target_graphics_version = target_graphics_version(&device.arch);
        info.subsystem_id = NA32;
        info.reserved = [0; 21];
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn amdsmi_get_gpu_vram_info(processor: Handle, info: *mut amdsmi_vram_info_t) -> amdsmi_status_t {
    boundary(|| {
        let device = known(processor)?;
        let total = device.memory_total_bytes.ok_or(AMDSMI_STATUS_NOT_SUPPORTED)?;
        let info = out(info)?;
        info.vram_type = 0; // AMDSMI_VRAM_TYPE_UNKNOWN: the worker does not say
        copy_str(&mut info.vram_vendor, "N/A");
        info.vram_size = total >> 20; // MB
        info.vram_bit_width = NA32;
        info.vram_max_bandwidth = NA64;
        info.reserved = [0; 37];
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn amdsmi_get_gpu_vram_usage(processor: Handle, usage: *mut amdsmi_vram_usage_t) -> amdsmi_status_t {
    boundary(|| {
        let device = live(processor)?;
        let (used, total) = device.memory_used_bytes.zip(device.memory_total_bytes).ok_or(AMDSMI_STATUS_NOT_SUPPORTED)?;
        let usage = out(usage)?;
        let mb = |bytes: u64| u32::try_from(bytes >> 20).unwrap_or(u32::MAX);
        (usage.vram_total, usage.vram_used, usage.reserved) = (mb(total), mb(used), [0; 2]);
        Ok(())
    })
}

fn memory(processor: Handle, kind: u32, pick: fn(&Device) -> Option<u64>, bytes: *mut u64) -> Result<(), amdsmi_status_t> {
    if kind != AMDSMI_MEM_TYPE_VRAM && kind != AMDSMI_MEM_TYPE_VIS_VRAM {
        index(processor, PROCESSOR_TAG)?;
        return Err(AMDSMI_STATUS_NOT_SUPPORTED);
    }
    let value = pick(&live(processor)?).ok_or(AMDSMI_STATUS_NOT_SUPPORTED)?;
    *out(bytes)? = value;
    Ok(())
}

#[no_mangle]
pub extern "C" fn amdsmi_get_gpu_memory_total(processor: Handle, kind: u32, total: *mut u64) -> amdsmi_status_t {
    boundary(|| memory(processor, kind, |d| d.memory_total_bytes, total))
}

#[no_mangle]
pub extern "C" fn amdsmi_get_gpu_memory_usage(processor: Handle, kind: u32, used: *mut u64) -> amdsmi_status_t {
    boundary(|| memory(processor, kind, |d| d.memory_used_bytes, used))
}

#[no_mangle]
pub extern "C" fn amdsmi_get_gpu_activity(processor: Handle, usage: *mut amdsmi_engine_usage_t) -> amdsmi_status_t {
    boundary(|| {
        let ratio = live(processor)?.utilization.ok_or(AMDSMI_STATUS_NOT_SUPPORTED)?;
        let usage = out(usage)?;
        usage.gfx_activity = (ratio * 100.0).round().clamp(0.0, 100.0) as u32;
        (usage.umc_activity, usage.mm_activity, usage.reserved) = (NA32, NA32, [0; 13]);
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn amdsmi_get_power_info(processor: Handle, info: *mut amdsmi_power_info_t) -> amdsmi_status_t {
    boundary(|| {
        let device = live(processor)?;
        let watts = device.power_watts.ok_or(AMDSMI_STATUS_NOT_SUPPORTED)?.round() as u32;
        let info = out(info)?;
        info.socket_power = watts.into();
        info.current_socket_power = watts;
        info.average_socket_power = NA32;
        (info.gfx_voltage, info.soc_voltage, info.mem_voltage) = (NA64, NA64, NA64);
        info.power_limit = device.power_limit_watts.map_or(NA32, |w| w.round() as u32);
        info.reserved = [0; 18];
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn amdsmi_get_clock_info(processor: Handle, clock: u32, info: *mut amdsmi_clk_info_t) -> amdsmi_status_t {
    boundary(|| {
        let device = live(processor)?;
        let (now, max) = match clock {
            AMDSMI_CLK_TYPE_GFX => (device.gfx_clock_mhz, device.gfx_clock_max_mhz),
            AMDSMI_CLK_TYPE_MEM => (device.mem_clock_mhz, device.mem_clock_max_mhz),
            _ => (None, None),
        };
        let now = now.ok_or(AMDSMI_STATUS_NOT_SUPPORTED)?;
        let info = out(info)?;
        (info.clk, info.min_clk, info.max_clk) = (now, NA32, max.unwrap_or(NA32));
        (info.clk_locked, info.clk_deep_sleep, info.reserved) = (u8::MAX, u8::MAX, [0; 4]);
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn amdsmi_get_temp_metric(processor: Handle, sensor: u32, metric: u32, value: *mut i64) -> amdsmi_status_t {
    boundary(|| {
        let device = live(processor)?;
        if metric != AMDSMI_TEMP_CURRENT || !matches!(sensor, AMDSMI_TEMPERATURE_TYPE_EDGE | AMDSMI_TEMPERATURE_TYPE_HOTSPOT) {
            return Err(AMDSMI_STATUS_NOT_SUPPORTED);
        }
        *out(value)? = device.temperature_celsius.ok_or(AMDSMI_STATUS_NOT_SUPPORTED)?.round() as i64;
        Ok(())
    })
}

/// The worker's endpoint does not say which client process holds which memory: not supported.
#[no_mangle]
pub extern "C" fn amdsmi_get_gpu_process_list(processor: Handle, max_processes: *mut u32, _list: *mut c_void) -> amdsmi_status_t {
    boundary(|| {
        index(processor, PROCESSOR_TAG)?;
        out(max_processes)?;
        Err(AMDSMI_STATUS_NOT_SUPPORTED)
    })
}

static BUILD: &CStr = c"hip-remote";

#[no_mangle]
pub extern "C" fn amdsmi_get_lib_version(version: *mut amdsmi_version_t) -> amdsmi_status_t {
    boundary(|| {
        let version = out(version)?;
        // The AMD SMI release whose API and layouts this library follows.
        (version.major, version.minor, version.release, version.build) = (7, 0, 2, BUILD.as_ptr());
        Ok(())
    })
}

/// The name of every status this library returns (others: `AMDSMI_STATUS_UNKNOWN_ERROR`'s).
fn status_name(status: amdsmi_status_t) -> &'static CStr {
    match status {
        AMDSMI_STATUS_SUCCESS => c"AMDSMI_STATUS_SUCCESS: Call succeeded",
        AMDSMI_STATUS_INVAL => c"AMDSMI_STATUS_INVAL: Invalid parameters",
        AMDSMI_STATUS_NOT_SUPPORTED => c"AMDSMI_STATUS_NOT_SUPPORTED: Command not supported",
        AMDSMI_STATUS_IO => c"AMDSMI_STATUS_IO: I/O Error (the worker's metrics endpoint could not be read)",
        AMDSMI_STATUS_INIT_ERROR => c"AMDSMI_STATUS_INIT_ERROR: An error occurred when initializing internal data structures",
        AMDSMI_STATUS_NOT_FOUND => c"AMDSMI_STATUS_NOT_FOUND: Device Not found",
        AMDSMI_STATUS_NOT_INIT => c"AMDSMI_STATUS_NOT_INIT: Device not initialized",
        AMDSMI_STATUS_INSUFFICIENT_SIZE => c"AMDSMI_STATUS_INSUFFICIENT_SIZE: Not enough resources were available for the operation",
        _ => c"AMDSMI_STATUS_UNKNOWN_ERROR: An unknown error occurred",
    }
}

#[no_mangle]
pub extern "C" fn amdsmi_status_code_to_string(status: amdsmi_status_t, text: *mut *const c_char) -> amdsmi_status_t {
    boundary(|| {
        *out(text)? = status_name(status).as_ptr();
        Ok(())
    })
}

/// Frees nothing: this library never hands out name/value pairs.
#[no_mangle]
pub extern "C" fn amdsmi_free_name_value_pairs(_pairs: *mut c_void) {}

#[macro_export]
macro_rules! not_supported {
    ($($name:ident,)*) => {
        $(
            #[no_mangle]
            pub extern "C" fn $name() -> $crate::amdsmi_status_t {
                $crate::AMDSMI_STATUS_NOT_SUPPORTED
            }
        )*
        /// The entry points [`unsupported`] answers.
        pub const NOT_SUPPORTED: &[&str] = &[$(stringify!($name)),*];
    };
}

mod unsupported;
pub use unsupported::NOT_SUPPORTED;

#[cfg(test)]
mod tests;
