//! Device family: initialisation, versions, device selection, properties and attributes,
//! synchronisation, memory information, errors.
//!
//! What cannot change during a process — device count, properties — is fetched once and
//! cached; `hipGetDevice`, `hipSetDevice` (after the count is known) and the error calls never
//! cross the network.

use crate::abi::*;
use crate::boundary::{peek_last_error, take_last_error};
use crate::remote::with_conn;
use crate::state::allocations::forget_device_allocations;
use crate::state::devices::{check_device, current_device, device_count, prefer_device, properties, set_current_device};
use crate::state::sync::call_sync;
use client_core::CallError;
use proto_core::wire;
use proto_core::Calls;
use std::ffi::{c_char, c_int, c_uint};

/// HIP version this library reports for itself (`hipRuntimeGetVersion`).
pub const RUNTIME_VERSION: c_int = HIP_VERSION as c_int;

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
/// The array limits the worker enforces (`proto_core::wire::MAX_ARRAY_*`), as the texture
/// maxima of the device properties.
fn fill_array_limits(one: &mut c_int, two: &mut [c_int; 2], three: &mut [c_int; 3]) {
    *one = wire::MAX_ARRAY_1D_WIDTH as c_int;
    *two = wire::MAX_ARRAY_2D.map(|d| d as c_int);
    *three = wire::MAX_ARRAY_3D.map(|d| d as c_int);
}

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
    out.memPitch = max_pitch(p.mem_pitch);
    out.maxThreadsPerBlock = int(p.max_threads_per_block);
    out.maxThreadsDim = p.max_threads_dim.map(int);
    out.maxGridSize = p.max_grid_size.map(int);
    out.clockRate = int(p.clock_rate_khz);
    out.totalConstMem = p.total_const_mem as usize;
    out.major = int(p.major);
    out.minor = int(p.minor);
    out.textureAlignment = p.texture_alignment as usize;
    fill_array_limits(&mut out.maxTexture1D, &mut out.maxTexture2D, &mut out.maxTexture3D);
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
    out.memPitch = max_pitch(p.mem_pitch);
    out.textureAlignment = p.texture_alignment as usize;
    fill_array_limits(&mut out.maxTexture1D, &mut out.maxTexture2D, &mut out.maxTexture3D);
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
        let v = with_conn(|c| c.get_versions(wire::Empty {}).map(|v| v.driver_version))?;
        try_out!(version, v);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipRuntimeGetVersion(version: *mut c_int) -> hipError_t {
    hip_boundary!("hipRuntimeGetVersion", {
        non_null!(version);
        try_out!(version, RUNTIME_VERSION);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetDeviceCount(count: *mut c_int) -> hipError_t {
    hip_boundary!("hipGetDeviceCount", {
        non_null!(count);
        let n = device_count()?;
        if n == 0 {
            // ROCm writes the count before it answers hipErrorNoDevice.
            try_out!(count, 0);
            return Err(CallError::new(
                HipError::NO_DEVICE,
                "no device: the worker exposes none, or HIP_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES hide them all",
            ));
        }
        try_out!(count, int(n));
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
        try_out!(device, current_device() as c_int);
        Ok(())
    })
}

/// `texturePitchAlignment`: what `hipDeviceGetAttribute(hipDeviceAttributeTexturePitchAlignment)`
/// answers (ROCm fills both from one value; on CUDA it is `CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT`),
/// asked of the worker once per device. A worker that does not report it leaves 0.
fn texture_pitch_alignment(device: u32) -> Result<usize, CallError> {
    match super::device_extra::remote_attribute(device, hipDeviceAttributeTexturePitchAlignment) {
        Ok(v) => Ok(usize::try_from(v).unwrap_or(0)),
        Err(e) if e.code == HipError::INVALID_VALUE => Ok(0),
        Err(e) => Err(e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipGetDevicePropertiesR0600(prop: *mut hipDeviceProp_tR0600, device: c_int) -> hipError_t {
    hip_boundary!("hipGetDevicePropertiesR0600", {
        non_null!(prop);
        let device = check_device(device)?;
        let p = properties(device)?;
        let pitch_alignment = texture_pitch_alignment(device)?;
        // SAFETY: checked non-null; the caller passes a hipDeviceProp_tR0600 (our header maps
        // hipGetDeviceProperties to this name exactly as ROCm's does). Zeroing first: every
        // field we do not know reads 0, as on a device without that feature.
        unsafe {
            std::ptr::write_bytes(prop, 0, 1);
            fill_r0600(&mut *prop, &p);
            (*prop).texturePitchAlignment = pitch_alignment;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetDevicePropertiesR0000(prop: *mut hipDeviceProp_tR0000, device: c_int) -> hipError_t {
    hip_boundary!("hipGetDevicePropertiesR0000", {
        non_null!(prop);
        let device = check_device(device)?;
        let p = properties(device)?;
        let pitch_alignment = texture_pitch_alignment(device)?;
        // SAFETY: checked non-null; legacy callers pass the pre-ROCm-6 layout.
        unsafe {
            std::ptr::write_bytes(prop, 0, 1);
            fill_r0000(&mut *prop, &p);
            (*prop).texturePitchAlignment = pitch_alignment;
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
        if attr == hipDeviceAttributeHdpMemFlushCntl || attr == hipDeviceAttributeHdpRegFlushCntl {
            // ROCm writes a pointer through `value` here (the device's HDP flush register, as
            // in hipDeviceProp_t), so the caller's storage holds one. A remote device's
            // registers are not mapped into this process: NULL, as the properties report it.
            // SAFETY: checked non-null; for these attributes HIP's caller passes
            // pointer-sized storage (hip-tests pass a `uint32_t*` variable).
            unsafe { value.cast::<*mut c_uint>().write_unaligned(std::ptr::null_mut()) };
            return Ok(());
        }
        // What the properties do not carry, the worker's backend answers.
        let v = match attribute(&p, attr) {
            Some(v) => v,
            None => super::device_extra::remote_attribute(check_device(device)?, attr)?,
        };
        try_out!(value, v);
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
        try_out!(bytes, p.total_global_mem as usize);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int) -> hipError_t {
    hip_boundary!("hipDeviceGetStreamPriorityRange", {
        let device = current_device();
        let range = with_conn(|c| c.stream_priority_range(wire::DeviceRef { device }))?;
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
    hip_boundary!("hipDeviceSynchronize", { crate::state::sync::synchronize_device(current_device()) })
}

#[no_mangle]
pub extern "C" fn hipDeviceReset() -> hipError_t {
    hip_boundary!("hipDeviceReset", {
        let device = current_device();
        forget_device_allocations(device)?;
        crate::api::array::forget_device_arrays(device);
        crate::api::texture::forget_device_textures(device);
        call_sync(|c| {
            c.client_handles().forget_device(device);
            c.client_memory().forget_device(device);
            c.device_reset(wire::DeviceRef { device })
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemGetInfo(free: *mut usize, total: *mut usize) -> hipError_t {
    hip_boundary!("hipMemGetInfo", {
        non_null!(free);
        non_null!(total);
        let info = with_conn(|c| c.mem_get_info(wire::DeviceRef { device: current_device() }))?;
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

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGet(device: *mut hipDevice_t, ordinal: c_int) -> hipError_t {
    hip_boundary!("hipDeviceGet", {
        non_null!(device);
        let d = check_device(ordinal)?;
        try_out!(device, int(d));
        Ok(())
    })
}

/// `hipSetValidDevices` as ROCm does it: the list is validated, and its first device becomes
/// the thread's current one unless `hipSetDevice` already chose one; an empty list changes
/// nothing.
#[no_mangle]
pub unsafe extern "C" fn hipSetValidDevices(device_arr: *mut c_int, len: c_int) -> hipError_t {
    hip_boundary!("hipSetValidDevices", {
        if len == 0 {
            return Ok(());
        }
        let count = device_count()?;
        non_null!(device_arr);
        let len = match usize::try_from(len) {
            Ok(n) if n as u64 <= u64::from(count) => n,
            _ => return Err(CallError::new(HipError::INVALID_VALUE, format!("{len} devices listed, the worker has {count}"))),
        };
        // SAFETY: checked non-null; the caller provides `len` ints.
        let devices = unsafe { std::slice::from_raw_parts(device_arr, len) };
        for &d in devices {
            check_device(d)?;
        }
        prefer_device(devices[0] as u32);
        Ok(())
    })
}

/// `hipDeviceCanAccessPeer`, with ROCm's order of checks: a device is never its own peer,
/// even an out-of-range one.
#[no_mangle]
pub unsafe extern "C" fn hipDeviceCanAccessPeer(canAccessPeer: *mut c_int, deviceId: c_int, peerDeviceId: c_int) -> hipError_t {
    hip_boundary!("hipDeviceCanAccessPeer", {
        non_null!(canAccessPeer);
        if deviceId == peerDeviceId {
            try_out!(canAccessPeer, 0);
            return Ok(());
        }
        let (device, peer) = (check_device(deviceId)?, check_device(peerDeviceId)?);
        // Devices of two workers of a device list never reach each other's memory.
        let can = crate::remote::same_worker(device, peer)?
            && crate::remote::on_device(device, || with_conn(|c| c.device_can_access_peer(wire::PeerQuery { device, peer })))?.can_access;
        try_out!(canAccessPeer, c_int::from(can));
        Ok(())
    })
}

/// `hipDeviceEnablePeerAccess`: kernels on the current device may access `peerDeviceId`'s
/// memory. ROCm's answers: flags other than 0 are `hipErrorInvalidValue`; a peer the current
/// device cannot access (itself included) `hipErrorInvalidDevice`; a second enable
/// `hipErrorPeerAccessAlreadyEnabled` (the worker keeps the session's pairs).
#[no_mangle]
pub extern "C" fn hipDeviceEnablePeerAccess(peerDeviceId: c_int, flags: c_uint) -> hipError_t {
    hip_boundary!("hipDeviceEnablePeerAccess", {
        if flags != 0 {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("hipDeviceEnablePeerAccess flags {flags:#x}: only 0 is defined")));
        }
        set_peer_access(peerDeviceId, true)
    })
}

/// `hipDeviceDisablePeerAccess`: undoes [`hipDeviceEnablePeerAccess`] for the current device;
/// a pair never enabled is `hipErrorPeerAccessNotEnabled`.
#[no_mangle]
pub extern "C" fn hipDeviceDisablePeerAccess(peerDeviceId: c_int) -> hipError_t {
    hip_boundary!("hipDeviceDisablePeerAccess", { set_peer_access(peerDeviceId, false) })
}

fn set_peer_access(peer: c_int, enable: bool) -> Result<(), CallError> {
    let peer = check_device(peer)?;
    if !crate::remote::same_worker(current_device(), peer)? {
        // ROCm's answer for a device that cannot access the peer (hipDeviceCanAccessPeer 0).
        return Err(CallError::new(
            HipError::INVALID_DEVICE,
            format!("device {} cannot access device {peer}'s memory: they are on different workers", current_device()),
        ));
    }
    let req = wire::PeerAccessChange { device: current_device(), peer, enable };
    with_conn(|c| c.device_set_peer_access(req)).map(drop)
}

/// The PCI function of every device: ROCm prints the real one, the properties carry none.
const PCI_FUNCTION: u32 = 0;

/// `domain:bus:device.function` as ROCm prints it (`%04x:%02x:%02x.%01x`).
fn pci_bus_id(p: &wire::DeviceProperties) -> String {
    format!("{:04x}:{:02x}:{:02x}.{:01x}", p.pci_domain_id, p.pci_bus_id, p.pci_device_id, PCI_FUNCTION)
}

/// Parses what `sscanf("%04x:%02x:%02x.%01x")` accepts in full: `(domain, bus, device,
/// function)`, each 1 to its width of hex digits; whatever follows is ignored, as there.
fn parse_pci_bus_id(s: &[u8]) -> Option<[u32; 4]> {
    let mut rest = s;
    let mut out = [0u32; 4];
    for (i, (width, sep)) in [(4, Some(b':')), (2, Some(b':')), (2, Some(b'.')), (1, None)].into_iter().enumerate() {
        let digits = rest.iter().take(width).take_while(|b| b.is_ascii_hexdigit()).count();
        if digits == 0 {
            return None;
        }
        let text = std::str::from_utf8(&rest[..digits]).ok()?;
        out[i] = u32::from_str_radix(text, 16).ok()?;
        rest = &rest[digits..];
        if let Some(sep) = sep {
            rest = rest.strip_prefix(&[sep])?;
        }
    }
    Some(out)
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetPCIBusId(pciBusId: *mut c_char, len: c_int, device: c_int) -> hipError_t {
    hip_boundary!("hipDeviceGetPCIBusId", {
        let d = check_device(device)?;
        non_null!(pciBusId);
        let id = pci_bus_id(&properties(d)?);
        if let Ok(n @ 1..) = usize::try_from(len) {
            // SAFETY: the caller provides `len` writable bytes at `pciBusId`.
            copy_c_string(unsafe { std::slice::from_raw_parts_mut(pciBusId, n) }, &id);
        }
        // ROCm writes what fits (like snprintf) and fails unless all 12 characters and the NUL did.
        if len <= id.len() as c_int {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("a PCI bus id needs {} bytes, the buffer has {len}", id.len() + 1)));
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetByPCIBusId(device: *mut c_int, pciBusId: *const c_char) -> hipError_t {
    hip_boundary!("hipDeviceGetByPCIBusId", {
        non_null!(device);
        non_null!(pciBusId);
        // SAFETY: checked non-null; the caller passes a NUL-terminated string.
        let text = unsafe { std::ffi::CStr::from_ptr(pciBusId) }.to_bytes();
        let not_found = || CallError::new(HipError::INVALID_VALUE, format!("no device has PCI bus id {:?}", String::from_utf8_lossy(text)));
        let [domain, bus, dev, function] = parse_pci_bus_id(text).ok_or_else(not_found)?;
        for i in 0..device_count()? {
            let p = properties(i)?;
            if (p.pci_domain_id, p.pci_bus_id, p.pci_device_id, PCI_FUNCTION) == (domain, bus, dev, function) {
                try_out!(device, int(i));
                return Ok(());
            }
        }
        Err(not_found())
    })
}

/// ROCm's `memPitch`: the largest allocation, at most `INT32_MAX` (clr's `ihipGetDeviceProperties`),
/// so the property and `hipDeviceAttributeMaxPitch` agree (hip-tests compare them as `int`).
fn max_pitch(mem_pitch: u64) -> usize {
    mem_pitch.min(i32::MAX as u64) as usize
}

fn limit_value(reply: Result<wire::LimitValue, CallError>) -> Result<usize, CallError> {
    let value = reply?.value;
    usize::try_from(value).map_err(|_| CallError::new(HipError::UNKNOWN, format!("limit {value} does not fit size_t")))
}

/// `hipDeviceGetLimit` of the current device: stack and heap sizes, and AMD's scratch limits;
/// the worker answers `hipErrorUnsupportedLimit` for the others, as ROCm 7 does (the printf
/// FIFO size included).
#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetLimit(pValue: *mut usize, limit: hipLimit_t) -> hipError_t {
    hip_boundary!("hipDeviceGetLimit", {
        non_null!(pValue);
        if limit >= hipLimitRange {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("hipLimit_t {limit} out of range")));
        }
        let device = check_device(current_device() as c_int)?;
        let value = limit_value(with_conn(|c| c.device_get_limit(wire::LimitRef { device, limit })))?;
        try_out!(pValue, value);
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hipDeviceSetLimit(limit: hipLimit_t, value: usize) -> hipError_t {
    hip_boundary!("hipDeviceSetLimit", {
        if limit >= hipLimitRange {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("hipLimit_t {limit} out of range")));
        }
        let device = check_device(current_device() as c_int)?;
        limit_value(with_conn(|c| c.device_set_limit(wire::SetLimit { device, limit, value: value as u64 }))).map(drop)
    })
}

/// `(requested, actual)` of each named field, widened so every field type compares.
macro_rules! field_pairs {
    ($want:ident, $have:ident; $($field:ident),*) => {
        [$(($want.$field as i128, $have.$field as i128)),*]
    };
}

/// ROCm's `ihipChooseDevice`: the device meeting every nonzero field of the request (each at
/// least as large) and the most of them wins, the first on a tie; device 0 when none meets
/// them all. `$fill` fills the layout `$ty` from the cached properties.
macro_rules! choose_device {
    ($ty:ty, $fill:ident, $device:expr, $want:expr) => {{
        non_null!($device);
        non_null!($want);
        // SAFETY: checked non-null; the caller passes the layout the exported name stands for.
        let want: &$ty = unsafe { &*$want };
        let (mut best, mut best_matched) = (0u32, 0u32);
        for i in 0..device_count()? {
            // SAFETY: a plain C struct of integers, arrays and pointers: all-zero is valid.
            let mut have: $ty = unsafe { std::mem::zeroed() };
            $fill(&mut have, &properties(i)?);
            let (mut wanted, mut matched) = (0u32, 0u32);
            for (w, h) in field_pairs!(want, have;
                major, minor, totalGlobalMem, sharedMemPerBlock, maxThreadsPerBlock, totalConstMem,
                multiProcessorCount, maxThreadsPerMultiProcessor, memoryClockRate, memoryBusWidth,
                l2CacheSize, regsPerBlock, maxSharedMemoryPerMultiProcessor, warpSize)
            {
                if w != 0 {
                    wanted += 1;
                    matched += u32::from(h >= w);
                }
            }
            if wanted == matched && matched > best_matched {
                best = i;
                best_matched = matched;
            }
        }
        try_out!($device, int(best));
        Ok(())
    }};
}

#[no_mangle]
pub unsafe extern "C" fn hipChooseDeviceR0600(device: *mut c_int, prop: *const hipDeviceProp_tR0600) -> hipError_t {
    hip_boundary!("hipChooseDeviceR0600", { choose_device!(hipDeviceProp_tR0600, fill_r0600, device, prop) })
}

#[no_mangle]
pub unsafe extern "C" fn hipChooseDeviceR0000(device: *mut c_int, prop: *const hipDeviceProp_tR0000) -> hipError_t {
    hip_boundary!("hipChooseDeviceR0000", { choose_device!(hipDeviceProp_tR0000, fill_r0000, device, prop) })
}

/// The unversioned name takes the legacy layout, as ROCm 6+'s libamdhip64 exports it (ROCm 7
/// headers map `hipChooseDevice` to `hipChooseDeviceR0600`).
#[no_mangle]
pub unsafe extern "C" fn hipChooseDevice(device: *mut c_int, prop: *const hipDeviceProp_tR0000) -> hipError_t {
    // SAFETY: same contract as hipChooseDeviceR0000.
    unsafe { hipChooseDeviceR0000(device, prop) }
}

/// `hipCreateChannelDesc`: the bits per component and their kind, returned by value.
#[no_mangle]
pub extern "C" fn hipCreateChannelDesc(x: c_int, y: c_int, z: c_int, w: c_int, f: hipChannelFormatKind) -> hipChannelFormatDesc {
    hipChannelFormatDesc { x, y, z, w, f }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pci_bus_ids_parse_like_sscanf() {
        assert_eq!(parse_pci_bus_id(b"0000:03:00.0"), Some([0, 3, 0, 0]));
        assert_eq!(parse_pci_bus_id(b"00ab:c1:1f.7 trailing"), Some([0xab, 0xc1, 0x1f, 7]));
        assert_eq!(parse_pci_bus_id(b"0:3:0.0"), Some([0, 3, 0, 0]));
        assert_eq!(parse_pci_bus_id(b"0000:03:00"), None);
        assert_eq!(parse_pci_bus_id(b"00000:03:00.0"), None);
        assert_eq!(parse_pci_bus_id(b"xyz"), None);
        assert_eq!(parse_pci_bus_id(b""), None);
    }

    #[test]
    fn pci_bus_id_format_is_rocms() {
        let p = wire::DeviceProperties { pci_domain_id: 0x1, pci_bus_id: 0xc1, pci_device_id: 0x2, ..Default::default() };
        assert_eq!(pci_bus_id(&p), "0001:c1:02.0");
    }
}
