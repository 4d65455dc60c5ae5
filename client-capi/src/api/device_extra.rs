//! Device, error and profiler calls beyond the basics: compute capability, cache and
//! shared-memory configuration, device flags, UUIDs, peer and link attributes, the
//! attributes the cached properties do not carry, `hipDrvGetError*`, `hipExtGetLastError`,
//! `hipProfilerStart/Stop`. Argument checks and answers follow ROCm's runtime (clr
//! `hip_device_runtime.cpp`, `hip_peer.cpp`, `hip_error.cpp`, `hip_profile.cpp`).

use crate::abi::*;
use crate::boundary::take_last_command_result;
use crate::remote::with_conn;
use crate::state::devices::{check_device, current_device, device_count, properties, schedule_flag, set_schedule_flag};
use client_core::CallError;
use proto_core::wire;
use proto_core::Calls;
use std::ffi::{c_char, c_int, c_uint};

/// `hipDeviceAttributeMaxTexture1DLinear`.
const ATTR_MAX_TEXTURE_1D_LINEAR: u32 = 41;
/// `hipExtGetLinkTypeAndHopCount` on the wire (`PeerAttributeQuery::attr`).
const PEER_LINK_TYPE: u32 = 0x100;
const PEER_HOP_COUNT: u32 = 0x101;

fn invalid(why: impl Into<String>) -> CallError {
    CallError::new(HipError::INVALID_VALUE, why)
}

/// An attribute the cached properties do not carry, asked of the worker once per device (kept
/// by the session of the device's worker, read without its connection's lock).
pub(crate) fn remote_attribute(device: u32, attr: hipDeviceAttribute_t) -> Result<c_int, CallError> {
    let published = crate::remote::published_for_device(device)?;
    let cached = published.devices().attribute(device, attr);
    let value = match cached {
        Some(v) => v,
        None => {
            let reply = crate::remote::on_device(device, || with_conn(|c| c.device_get_attribute(wire::AttributeQuery { device, attr })))?;
            if !reply.known {
                return Err(invalid(format!("device attribute {attr} is not reported by device {device}")));
            }
            published.devices().remember_attribute(device, attr, reply.value);
            reply.value
        }
    };
    // ROCm clamps size_t attributes to INT_MAX.
    Ok(c_int::try_from(value).unwrap_or(if value < 0 { c_int::MIN } else { c_int::MAX }))
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceComputeCapability(major: *mut c_int, minor: *mut c_int, device: hipDevice_t) -> hipError_t {
    hip_boundary!("hipDeviceComputeCapability", {
        non_null!(major);
        non_null!(minor);
        let p = properties(check_device(device)?)?;
        // SAFETY: both checked non-null.
        unsafe {
            *major = c_int::try_from(p.major).unwrap_or(c_int::MAX);
            *minor = c_int::try_from(p.minor).unwrap_or(c_int::MAX);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetUuid(uuid: *mut hipUUID, device: hipDevice_t) -> hipError_t {
    hip_boundary!("hipDeviceGetUuid", {
        non_null!(uuid);
        let p = properties(check_device(device)?)?;
        try_out!(uuid, hipUUID { bytes: p.uuid.map(|b| b as c_char) });
        Ok(())
    })
}

/// ROCm has no cache configuration to report: `hipFuncCachePreferNone`.
#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetCacheConfig(cacheConfig: *mut hipFuncCache_t) -> hipError_t {
    hip_boundary!("hipDeviceGetCacheConfig", {
        try_out!(cacheConfig, hipFuncCachePreferNone);
        Ok(())
    })
}

/// ROCm validates the preference and keeps nothing (AMD GPUs have no L1/shared split to
/// choose); so does this.
#[no_mangle]
pub extern "C" fn hipDeviceSetCacheConfig(cacheConfig: hipFuncCache_t) -> hipError_t {
    hip_boundary!("hipDeviceSetCacheConfig", {
        if cacheConfig > hipFuncCachePreferEqual {
            return Err(invalid(format!("hipFuncCache_t {cacheConfig} is not defined")));
        }
        Ok(())
    })
}

/// ROCm reports four-byte banks whatever was set.
#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetSharedMemConfig(pConfig: *mut hipSharedMemConfig) -> hipError_t {
    hip_boundary!("hipDeviceGetSharedMemConfig", {
        try_out!(pConfig, hipSharedMemBankSizeFourByte);
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hipDeviceSetSharedMemConfig(config: hipSharedMemConfig) -> hipError_t {
    hip_boundary!("hipDeviceSetSharedMemConfig", {
        if config > hipSharedMemBankSizeEightByte {
            return Err(invalid(format!("hipSharedMemConfig {config} is not defined")));
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetDeviceFlags(flags: *mut c_uint) -> hipError_t {
    hip_boundary!("hipGetDeviceFlags", {
        non_null!(flags);
        let device = current_device();
        let value = schedule_flag(device);
        try_out!(flags, value);
        Ok(())
    })
}

/// ROCm's checks: at most one scheduling flag, nothing outside schedule/map-host/lmem-resize;
/// only the scheduling part is kept (map-host is always on, lmem-resize ignored).
#[no_mangle]
pub extern "C" fn hipSetDeviceFlags(flags: c_uint) -> hipError_t {
    hip_boundary!("hipSetDeviceFlags", {
        if device_count()? == 0 {
            return Err(CallError::new(HipError::NO_DEVICE, "the worker exposes no device"));
        }
        let schedule = flags & hipDeviceScheduleMask;
        if schedule.count_ones() > 1 {
            return Err(invalid(format!("device flags {flags:#x} name more than one scheduling mode")));
        }
        if flags & !(hipDeviceScheduleMask | hipDeviceMapHost | hipDeviceLmemResizeToMax) != 0 {
            return Err(invalid(format!("device flags {flags:#x} include undefined bits")));
        }
        set_schedule_flag(current_device(), schedule)?;
        Ok(())
    })
}

fn peer_attribute(device: c_int, peer: c_int, attr: u32) -> Result<i64, CallError> {
    let (device, peer) = (check_device(device)?, check_device(peer)?);
    if !crate::remote::same_worker(device, peer)? {
        // No link between workers' devices: no access, no atomics, no rank, no hops.
        return Ok(0);
    }
    Ok(crate::remote::on_device(device, || with_conn(|c| c.device_get_peer_attribute(wire::PeerAttributeQuery { device, peer, attr })))?.value)
}

/// ROCm's order: the value pointer, then the devices (a device and itself is
/// `hipErrorInvalidDevice`), then the attribute.
#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetP2PAttribute(value: *mut c_int, attr: hipDeviceP2PAttr, srcDevice: c_int, dstDevice: c_int) -> hipError_t {
    hip_boundary!("hipDeviceGetP2PAttribute", {
        non_null!(value);
        if srcDevice == dstDevice {
            return Err(CallError::new(HipError::INVALID_DEVICE, format!("device {srcDevice} has no link to itself")));
        }
        let (src, dst) = (check_device(srcDevice)?, check_device(dstDevice)?);
        if attr > hipDevP2PAttrHipArrayAccessSupported {
            return Err(invalid(format!("hipDeviceP2PAttr {attr} is not defined")));
        }
        let v = peer_attribute(src as c_int, dst as c_int, attr)?;
        try_out!(value, c_int::try_from(v).unwrap_or(c_int::MAX));
        Ok(())
    })
}

/// ROCm's order: null outputs, the same device twice and negative ordinals are
/// `hipErrorInvalidValue`; ordinals past the last device `hipErrorInvalidDevice`.
#[no_mangle]
pub unsafe extern "C" fn hipExtGetLinkTypeAndHopCount(device1: c_int, device2: c_int, linktype: *mut u32, hopcount: *mut u32) -> hipError_t {
    hip_boundary!("hipExtGetLinkTypeAndHopCount", {
        non_null!(linktype);
        non_null!(hopcount);
        if device1 == device2 || device1 < 0 || device2 < 0 {
            return Err(invalid(format!("no link between devices {device1} and {device2}")));
        }
        let link = peer_attribute(device1, device2, PEER_LINK_TYPE)?;
        let hops = peer_attribute(device1, device2, PEER_HOP_COUNT)?;
        // SAFETY: both checked non-null.
        unsafe {
            *linktype = u32::try_from(link).unwrap_or(0);
            *hopcount = u32::try_from(hops).unwrap_or(0);
        }
        Ok(())
    })
}

/// The device's 1D linear texture limit in elements of `desc`'s size (ROCm: the limit in
/// bytes over the element's bytes).
#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetTexture1DLinearMaxWidth(max_width: *mut usize, desc: *const hipChannelFormatDesc, device: c_int) -> hipError_t {
    hip_boundary!("hipDeviceGetTexture1DLinearMaxWidth", {
        non_null!(max_width);
        non_null!(desc);
        let device = check_device(device)?;
        // SAFETY: checked non-null.
        let d = unsafe { *desc };
        let bits = i64::from(d.x) + i64::from(d.y) + i64::from(d.z) + i64::from(d.w);
        let element_bytes = usize::try_from(bits / 8).unwrap_or(0);
        if element_bytes == 0 {
            return Err(invalid(format!("a channel format of {bits} bits has no whole byte")));
        }
        let limit = usize::try_from(remote_attribute(device, ATTR_MAX_TEXTURE_1D_LINEAR)?).unwrap_or(0);
        try_out!(max_width, limit / element_bytes);
        Ok(())
    })
}

/// The result of the thread's previous HIP call, reset to success (ROCm's
/// `last_command_error_`; unlike `hipGetLastError` it reports successes too).
#[no_mangle]
pub extern "C" fn hipExtGetLastError() -> hipError_t {
    take_last_command_result()
}

/// ROCm's `hipDrvGetErrorName`: the name for any code; codes it does not know read
/// `hipErrorUnknown` and fail with `hipErrorInvalidValue`.
#[no_mangle]
pub unsafe extern "C" fn hipDrvGetErrorName(hipError: hipError_t, errorString: *mut *const c_char) -> hipError_t {
    drv_error_text(hipError, errorString, hipError.name().as_ptr())
}

/// ROCm's `hipDrvGetErrorString`, likewise with the description.
#[no_mangle]
pub unsafe extern "C" fn hipDrvGetErrorString(hipError: hipError_t, errorString: *mut *const c_char) -> hipError_t {
    drv_error_text(hipError, errorString, hipError.description().as_ptr())
}

fn drv_error_text(code: hipError_t, out: *mut *const c_char, text: *const c_char) -> hipError_t {
    if out.is_null() {
        return HipError::INVALID_VALUE;
    }
    // SAFETY: checked non-null; the caller passes a writable `const char*`.
    unsafe { *out = text };
    if code == HipError::UNKNOWN || code.is_known() {
        HipError::SUCCESS
    } else {
        HipError::INVALID_VALUE
    }
}

/// ROCm 7's runtime turns its own API-trace collection on here and answers `hipSuccess`;
/// hip-remote's client has no such collector (the worker's `--metrics` counts calls
/// whatever the program says), so there is nothing to switch: success, as ROCm answers.
#[no_mangle]
pub extern "C" fn hipProfilerStart() -> hipError_t {
    hip_boundary!("hipProfilerStart", { Ok(()) })
}

/// See [`hipProfilerStart`].
#[no_mangle]
pub extern "C" fn hipProfilerStop() -> hipError_t {
    hip_boundary!("hipProfilerStop", { Ok(()) })
}
