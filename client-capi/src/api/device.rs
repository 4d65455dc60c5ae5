//! Device family: initialisation, versions, device selection, properties and attributes,
//! synchronisation, memory information, errors.
//!
//! What cannot change during a process — device count, properties — is fetched once and
//! cached; `hipGetDevice`, `hipSetDevice` (after the count is known) and the error calls never
//! cross the network.

use crate::abi::*;
use crate::boundary::{current_device, peek_last_error, set_current_device, take_last_error};
use crate::conn::CallError;
use crate::remote::{call_sync, with_conn};
use proto_core::Calls;
use proto_core::wire;
use std::collections::HashMap;
use std::ffi::{c_char, c_int};
use std::sync::{Mutex, OnceLock};

/// HIP version this library reports for itself (`hipRuntimeGetVersion`).
pub const RUNTIME_VERSION: c_int = HIP_VERSION as c_int;

/// Number of devices the worker exposes (cached after the first successful query).
pub fn device_count() -> Result<u32, CallError> {
    static COUNT: OnceLock<u32> = OnceLock::new();
    if let Some(n) = COUNT.get() {
        return Ok(*n);
    }
    let n = with_conn(|c| {
        c.get_device_count(wire::Empty {}).map(|d| d.count)
    })?;
    Ok(*COUNT.get_or_init(|| n))
}

/// Validates a device ordinal against the worker's count.
pub fn check_device(device: c_int) -> Result<u32, CallError> {
    let count = device_count()?;
    match u32::try_from(device) {
        Ok(d) if d < count => Ok(d),
        _ => Err(CallError::new(HipError::INVALID_DEVICE, format!("device {device} out of range (worker has {count})"))),
    }
}

/// Properties of `device` (cached).
pub fn properties(device: u32) -> Result<wire::DeviceProperties, CallError> {
    static CACHE: OnceLock<Mutex<HashMap<u32, wire::DeviceProperties>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(p) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&device) {
        return Ok(p.clone());
    }
    let props = with_conn(|c| {
        c.get_device_properties(wire::DeviceRef { device })
    })?;
    cache.lock().unwrap_or_else(|p| p.into_inner()).insert(device, props.clone());
    Ok(props)
}

/// `maxThreadsPerBlock` of `device`, from a per-thread cache: launches check it every time,
/// and cloning the whole cached property set per launch showed in the launch rate.
pub fn max_threads_per_block(device: u32) -> Result<u32, CallError> {
    thread_local! {
        static CACHED: std::cell::Cell<Option<(u32, u32)>> = const { std::cell::Cell::new(None) };
    }
    if let Some((d, max)) = CACHED.with(|c| c.get()) {
        if d == device {
            return Ok(max);
        }
    }
    let max = properties(device)?.max_threads_per_block;
    CACHED.with(|c| c.set(Some((device, max))));
    Ok(max)
}

fn copy_c_string(dst: &mut [c_char], src: &str) {
    let n = src.len().min(dst.len().saturating_sub(1));
    for (d, s) in dst.iter_mut().zip(&src.as_bytes()[..n]) {
        *d = *s as c_char;
    }
    if let Some(end) = dst.get_mut(n) {
        *end = 0;
    }
}

fn int(v: u32) -> c_int {
    c_int::try_from(v).unwrap_or(c_int::MAX)
}

/// Fills the ROCm 6+ layout.
fn fill_r0600(out: &mut hipDeviceProp_tR0600, p: &wire::DeviceProperties) {
    copy_c_string(&mut out.name, p.name.as_str());
    copy_c_string(&mut out.gcnArchName, p.arch_name.as_str());
    for (d, s) in out.uuid.bytes.iter_mut().zip(p.uuid) {
        *d = s as c_char;
    }
    out.totalGlobalMem = p.total_global_mem as usize;
    out.sharedMemPerBlock = p.shared_mem_per_block as usize;
    out.regsPerBlock = int(p.regs_per_block);
    out.warpSize = int(p.warp_size);
    out.memPitch = p.mem_pitch as usize;
    out.maxThreadsPerBlock = int(p.max_threads_per_block);
    out.maxThreadsDim = p.max_threads_dim.map(int);
    out.maxGridSize = p.max_grid_size.map(int);
    out.clockRate = int(p.clock_rate_khz);
    out.totalConstMem = p.total_const_mem as usize;
    out.major = int(p.major);
    out.minor = int(p.minor);
    out.textureAlignment = p.texture_alignment as usize;
    out.deviceOverlap = c_int::from(p.async_engine_count > 0);
    out.multiProcessorCount = int(p.multi_processor_count);
    out.kernelExecTimeoutEnabled = p.kernel_exec_timeout.into();
    out.integrated = p.integrated.into();
    out.canMapHostMemory = p.can_map_host_memory.into();
    out.computeMode = int(p.compute_mode);
    out.concurrentKernels = p.concurrent_kernels.into();
    out.ECCEnabled = p.ecc_enabled.into();
    out.pciBusID = int(p.pci_bus_id);
    out.pciDeviceID = int(p.pci_device_id);
    out.pciDomainID = int(p.pci_domain_id);
    out.asyncEngineCount = int(p.async_engine_count);
    out.unifiedAddressing = p.unified_addressing.into();
    out.memoryClockRate = int(p.memory_clock_rate_khz);
    out.memoryBusWidth = int(p.memory_bus_width);
    out.l2CacheSize = int(p.l2_cache_size);
    out.persistingL2CacheMaxSize = int(p.persisting_l2_cache_max_size);
    out.maxThreadsPerMultiProcessor = int(p.max_threads_per_multiprocessor);
    out.streamPrioritiesSupported = p.stream_priorities_supported.into();
    out.globalL1CacheSupported = p.global_l1_cache_supported.into();
    out.localL1CacheSupported = p.local_l1_cache_supported.into();
    out.sharedMemPerMultiprocessor = p.shared_mem_per_multiprocessor as usize;
    out.regsPerMultiprocessor = int(p.regs_per_multiprocessor);
    out.managedMemory = p.managed_memory.into();
    out.isMultiGpuBoard = p.is_multi_gpu_board.into();
    out.hostNativeAtomicSupported = p.host_native_atomic_supported.into();
    out.pageableMemoryAccess = p.pageable_memory_access.into();
    out.concurrentManagedAccess = p.concurrent_managed_access.into();
    out.cooperativeLaunch = p.cooperative_launch.into();
    out.cooperativeMultiDeviceLaunch = p.cooperative_multi_device_launch.into();
    out.sharedMemPerBlockOptin = p.shared_mem_per_block_optin as usize;
    out.maxBlocksPerMultiProcessor = int(p.max_blocks_per_multiprocessor);
    out.maxSharedMemoryPerMultiProcessor = p.shared_mem_per_multiprocessor as usize;
    out.clockInstructionRate = int(p.clock_instruction_rate_khz);
}

/// Fills the legacy (pre-ROCm-6) layout.
fn fill_r0000(out: &mut hipDeviceProp_tR0000, p: &wire::DeviceProperties) {
    copy_c_string(&mut out.name, p.name.as_str());
    copy_c_string(&mut out.gcnArchName, p.arch_name.as_str());
    out.totalGlobalMem = p.total_global_mem as usize;
    out.sharedMemPerBlock = p.shared_mem_per_block as usize;
    out.regsPerBlock = int(p.regs_per_block);
    out.warpSize = int(p.warp_size);
    out.maxThreadsPerBlock = int(p.max_threads_per_block);
    out.maxThreadsDim = p.max_threads_dim.map(int);
    out.maxGridSize = p.max_grid_size.map(int);
    out.clockRate = int(p.clock_rate_khz);
    out.memoryClockRate = int(p.memory_clock_rate_khz);
    out.memoryBusWidth = int(p.memory_bus_width);
    out.totalConstMem = p.total_const_mem as usize;
    out.major = int(p.major);
    out.minor = int(p.minor);
    out.multiProcessorCount = int(p.multi_processor_count);
    out.l2CacheSize = int(p.l2_cache_size);
    out.maxThreadsPerMultiProcessor = int(p.max_threads_per_multiprocessor);
    out.computeMode = int(p.compute_mode);
    out.clockInstructionRate = int(p.clock_instruction_rate_khz);
    out.concurrentKernels = p.concurrent_kernels.into();
    out.pciDomainID = int(p.pci_domain_id);
    out.pciBusID = int(p.pci_bus_id);
    out.pciDeviceID = int(p.pci_device_id);
    out.maxSharedMemoryPerMultiProcessor = p.shared_mem_per_multiprocessor as usize;
    out.isMultiGpuBoard = p.is_multi_gpu_board.into();
    out.canMapHostMemory = p.can_map_host_memory.into();
    out.integrated = p.integrated.into();
    out.cooperativeLaunch = p.cooperative_launch.into();
    out.cooperativeMultiDeviceLaunch = p.cooperative_multi_device_launch.into();
    out.memPitch = p.mem_pitch as usize;
    out.textureAlignment = p.texture_alignment as usize;
    out.kernelExecTimeoutEnabled = p.kernel_exec_timeout.into();
    out.ECCEnabled = p.ecc_enabled.into();
}

/// `hipDeviceGetAttribute` from the cached properties. Numbers are ROCm 7's
/// `hipDeviceAttribute_t` values.
fn attribute(p: &wire::DeviceProperties, attr: hipDeviceAttribute_t) -> Option<c_int> {
    let b = |v: bool| c_int::from(v);
    let sz = |v: u64| c_int::try_from(v).unwrap_or(c_int::MAX);
    Some(match attr {
        0 => b(p.ecc_enabled),
        2 => int(p.async_engine_count),
        3 => b(p.can_map_host_memory),
        5 => int(p.clock_rate_khz),
        6 => int(p.compute_mode),
        8 => b(p.concurrent_kernels),
        9 => b(p.concurrent_managed_access),
        10 => b(p.cooperative_launch),
        11 => b(p.cooperative_multi_device_launch),
        12 => b(p.async_engine_count > 0),
        14 => b(p.global_l1_cache_supported),
        15 => b(p.host_native_atomic_supported),
        16 => b(p.integrated),
        17 => b(p.is_multi_gpu_board),
        18 => b(p.kernel_exec_timeout),
        19 => int(p.l2_cache_size),
        20 => b(p.local_l1_cache_supported),
        23 => int(p.major),
        24 => b(p.managed_memory),
        25 => int(p.max_blocks_per_multiprocessor),
        26..=28 => int(p.max_threads_dim[(attr - 26) as usize]),
        29..=31 => int(p.max_grid_size[(attr - 29) as usize]),
        56 => int(p.max_threads_per_block),
        57 => int(p.max_threads_per_multiprocessor),
        58 => sz(p.mem_pitch),
        59 => int(p.memory_bus_width),
        60 => int(p.memory_clock_rate_khz),
        61 => int(p.minor),
        63 => int(p.multi_processor_count),
        65 => b(p.pageable_memory_access),
        67 => int(p.pci_bus_id),
        68 => int(p.pci_device_id),
        69 => int(p.pci_domain_id),
        70 => int(p.persisting_l2_cache_max_size),
        71 => int(p.regs_per_block),
        72 => int(p.regs_per_multiprocessor),
        74 => sz(p.shared_mem_per_block),
        75 => sz(p.shared_mem_per_block_optin),
        76 => sz(p.shared_mem_per_multiprocessor),
        78 => b(p.stream_priorities_supported),
        81 => sz(p.texture_alignment),
        83 => sz(p.total_const_mem),
        84 => sz(p.total_global_mem),
        85 => b(p.unified_addressing),
        87 => int(p.warp_size),
        10000 => int(p.clock_instruction_rate_khz),
        10002 => sz(p.shared_mem_per_multiprocessor),
        _ => return None,
    })
}

#[no_mangle]
pub extern "C" fn hipInit(flags: u32) -> hipError_t {
    hip_boundary!("hipInit", {
        if flags != 0 {
            return Err(CallError::new(HipError::INVALID_VALUE, "hipInit flags must be 0"));
        }
        device_count().map(|_| ())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDriverGetVersion(version: *mut c_int) -> hipError_t {
    hip_boundary!("hipDriverGetVersion", {
        non_null!(version);
        let v = with_conn(|c| {
            c.get_versions(wire::Empty {}).map(|v| v.driver_version)
        })?;
        // SAFETY: checked non-null; the caller provides a writable int.
        unsafe { *version = v };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipRuntimeGetVersion(version: *mut c_int) -> hipError_t {
    hip_boundary!("hipRuntimeGetVersion", {
        non_null!(version);
        // SAFETY: checked non-null; the caller provides a writable int.
        unsafe { *version = RUNTIME_VERSION };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetDeviceCount(count: *mut c_int) -> hipError_t {
    hip_boundary!("hipGetDeviceCount", {
        non_null!(count);
        let n = device_count()?;
        if n == 0 {
            return Err(CallError::new(HipError::NO_DEVICE, "the worker exposes no device"));
        }
        // SAFETY: checked non-null; the caller provides a writable int.
        unsafe { *count = int(n) };
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hipSetDevice(device: c_int) -> hipError_t {
    hip_boundary!("hipSetDevice", {
        set_current_device(check_device(device)?);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetDevice(device: *mut c_int) -> hipError_t {
    hip_boundary!("hipGetDevice", {
        non_null!(device);
        // SAFETY: checked non-null; the caller provides a writable int.
        unsafe { *device = current_device() as c_int };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetDevicePropertiesR0600(prop: *mut hipDeviceProp_tR0600, device: c_int) -> hipError_t {
    hip_boundary!("hipGetDevicePropertiesR0600", {
        non_null!(prop);
        let p = properties(check_device(device)?)?;
        // SAFETY: checked non-null; the caller passes a hipDeviceProp_tR0600 (our header maps
        // hipGetDeviceProperties to this name exactly as ROCm's does). Zeroing first: every
        // field we do not know reads 0, as on a device without that feature.
        unsafe {
            std::ptr::write_bytes(prop, 0, 1);
            fill_r0600(&mut *prop, &p);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetDevicePropertiesR0000(prop: *mut hipDeviceProp_tR0000, device: c_int) -> hipError_t {
    hip_boundary!("hipGetDevicePropertiesR0000", {
        non_null!(prop);
        let p = properties(check_device(device)?)?;
        // SAFETY: checked non-null; legacy callers pass the pre-ROCm-6 layout.
        unsafe {
            std::ptr::write_bytes(prop, 0, 1);
            fill_r0000(&mut *prop, &p);
        }
        Ok(())
    })
}

/// The unversioned name resolves to the legacy layout, as in ROCm 6+'s libamdhip64
/// (binaries built against ROCm 5 headers call it).
#[no_mangle]
pub unsafe extern "C" fn hipGetDeviceProperties(prop: *mut hipDeviceProp_tR0000, device: c_int) -> hipError_t {
    // SAFETY: same contract as hipGetDevicePropertiesR0000.
    unsafe { hipGetDevicePropertiesR0000(prop, device) }
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetAttribute(value: *mut c_int, attr: hipDeviceAttribute_t, device: c_int) -> hipError_t {
    hip_boundary!("hipDeviceGetAttribute", {
        non_null!(value);
        let p = properties(check_device(device)?)?;
        let v = attribute(&p, attr).ok_or_else(|| {
            CallError::new(HipError::INVALID_VALUE, format!("device attribute {attr} is not reported by hip-remote"))
        })?;
        // SAFETY: checked non-null; the caller provides a writable int.
        unsafe { *value = v };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetName(name: *mut c_char, len: c_int, device: c_int) -> hipError_t {
    hip_boundary!("hipDeviceGetName", {
        non_null!(name);
        if len <= 0 {
            return Err(CallError::new(HipError::INVALID_VALUE, "name buffer length must be positive"));
        }
        let p = properties(check_device(device)?)?;
        // SAFETY: the caller provides `len` writable bytes at `name`.
        let out = unsafe { std::slice::from_raw_parts_mut(name, len as usize) };
        copy_c_string(out, p.name.as_str());
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceTotalMem(bytes: *mut usize, device: c_int) -> hipError_t {
    hip_boundary!("hipDeviceTotalMem", {
        non_null!(bytes);
        let p = properties(check_device(device)?)?;
        // SAFETY: checked non-null.
        unsafe { *bytes = p.total_global_mem as usize };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int) -> hipError_t {
    hip_boundary!("hipDeviceGetStreamPriorityRange", {
        let device = current_device();
        let range = with_conn(|c| {
            c.stream_priority_range(wire::DeviceRef { device })
        })?;
        // SAFETY: either pointer may be NULL (HIP allows it); non-null ones are writable ints.
        unsafe {
            if !least.is_null() {
                *least = range.least;
            }
            if !greatest.is_null() {
                *greatest = range.greatest;
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hipDeviceSynchronize() -> hipError_t {
    hip_boundary!("hipDeviceSynchronize", { call_sync(|c| c.device_synchronize(wire::DeviceRef { device: current_device() })) })
}

#[no_mangle]
pub extern "C" fn hipDeviceReset() -> hipError_t {
    hip_boundary!("hipDeviceReset", {
        let device = current_device();
        crate::api::memory::forget_device_allocations(device);
        call_sync(|c| c.device_reset(wire::DeviceRef { device }))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemGetInfo(free: *mut usize, total: *mut usize) -> hipError_t {
    hip_boundary!("hipMemGetInfo", {
        non_null!(free);
        non_null!(total);
        let info = with_conn(|c| {
            c.mem_get_info(wire::DeviceRef { device: current_device() })
        })?;
        // SAFETY: both checked non-null.
        unsafe {
            *free = info.free as usize;
            *total = info.total as usize;
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hipGetLastError() -> hipError_t {
    take_last_error()
}

#[no_mangle]
pub extern "C" fn hipPeekAtLastError() -> hipError_t {
    peek_last_error()
}

#[no_mangle]
pub extern "C" fn hipGetErrorName(error: hipError_t) -> *const c_char {
    error.name().as_ptr()
}

#[no_mangle]
pub extern "C" fn hipGetErrorString(error: hipError_t) -> *const c_char {
    error.description().as_ptr()
}
