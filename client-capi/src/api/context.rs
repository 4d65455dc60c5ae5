//! Context family (`hipCtx*`, `hipDevicePrimaryCtx*`), as ROCm's runtime models it: a context
//! is its device (ROCm hands out the device object itself), each thread has a stack of
//! contexts, and making a context current makes its device the thread's current device.
//! Everything lives in the client except peer access, which goes to the worker through the
//! device family's calls. The deprecated calls ROCm 7 does not implement answer its
//! `hipErrorNotSupported`; `hipDevicePrimaryCtxReset` is its no-op.

use crate::abi::*;
use crate::api::device::{hipDeviceDisablePeerAccess, hipDeviceEnablePeerAccess};
use crate::state::devices::{check_device, current_device, device_count, set_current_device};
use crate::state::families::Family;
use client_core::published::FamilyTable;
use client_core::CallError;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_int, c_uint};

/// Most devices a context handle can name (a worker exposes far fewer).
const MAX_CONTEXT_DEVICES: usize = 256;

/// One byte per device: a context handle is the address of its device's byte, so handles are
/// stable, distinct, non-null and checkable (an address outside the table is no context).
static CONTEXT_ANCHORS: [u8; MAX_CONTEXT_DEVICES] = [0; MAX_CONTEXT_DEVICES];

/// `hipDeviceScheduleMask | hipDeviceMapHost | hipDeviceLmemResizeToMax`: the flags a context
/// or primary context may carry.
const CONTEXT_FLAGS: c_uint = 0x7 | 0x8 | 0x10;

thread_local! {
    /// This thread's context stack (device ordinals), top last.
    static CONTEXT_STACK: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// What the process knows of a device's (primary) context.
#[derive(Debug, Clone, Copy, Default)]
struct ContextState {
    /// `hipDevicePrimaryCtxRetain` and `hipCtxCreate` minus releases and destroys.
    retained: u32,
}

const CONTEXTS: FamilyTable<HashMap<u32, ContextState>> = FamilyTable::new(Family::Contexts.slot());

/// Runs `f` on `device`'s context state, kept by the session of its worker (the device was
/// checked, so its worker is known; otherwise `f` sees a fresh state that is not kept).
fn with_state<R>(device: u32, f: impl FnOnce(&mut ContextState) -> R) -> R {
    match crate::remote::published_if_known(device) {
        Some(published) => f(published.family(&CONTEXTS).entry(device).or_default()),
        None => f(&mut ContextState::default()),
    }
}

/// The handle of `device`'s context.
fn handle_of(device: u32) -> hipCtx_t {
    CONTEXT_ANCHORS[device as usize..].as_ptr() as hipCtx_t
}

/// The device a context handle names: a null handle is `null_error`, an address that is no
/// context `hipErrorInvalidContext`.
fn device_of(ctx: hipCtx_t, null_error: HipError) -> Result<u32, CallError> {
    if ctx.is_null() {
        return Err(CallError::new(null_error, "context is NULL"));
    }
    let offset = (ctx as usize).wrapping_sub(CONTEXT_ANCHORS.as_ptr() as usize);
    match u32::try_from(offset) {
        Ok(device) if offset < MAX_CONTEXT_DEVICES && device < device_count()? => Ok(device),
        _ => Err(CallError::new(HipError::INVALID_CONTEXT, format!("{ctx:?} is not a context"))),
    }
}

/// Converts a result of one of our own exported calls back into a `Result`.
fn from_code(code: hipError_t, what: &str) -> Result<(), CallError> {
    if code.is_success() {
        Ok(())
    } else {
        Err(CallError::new(code, what.to_owned()))
    }
}

fn push(device: u32) {
    set_current_device(device);
    CONTEXT_STACK.with(|s| s.borrow_mut().push(device));
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxCreate(ctx: *mut hipCtx_t, flags: c_uint, device: hipDevice_t) -> hipError_t {
    hip_boundary!("hipCtxCreate", {
        // ROCm answers an ordinal out of range with hipErrorInvalidValue here.
        let device = check_device(device).map_err(|e| match e.code {
            HipError::INVALID_DEVICE => CallError { code: HipError::INVALID_VALUE, ..e },
            _ => e,
        })?;
        non_null!(ctx);
        if flags & !CONTEXT_FLAGS != 0 {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("hipCtxCreate flags {flags:#x}")));
        }
        with_state(device, |s| s.retained += 1);
        push(device);
        try_out!(ctx, handle_of(device));
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hipCtxDestroy(ctx: hipCtx_t) -> hipError_t {
    hip_boundary!("hipCtxDestroy", {
        let device = device_of(ctx, HipError::INVALID_VALUE)?;
        // The calling thread's stack loses the context if it is on top, as in ROCm.
        CONTEXT_STACK.with(|s| {
            let mut stack = s.borrow_mut();
            if stack.last() == Some(&device) {
                stack.pop();
                if let Some(&top) = stack.last() {
                    set_current_device(top);
                }
            }
        });
        with_state(device, |s| s.retained = s.retained.saturating_sub(1));
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hipCtxPushCurrent(ctx: hipCtx_t) -> hipError_t {
    hip_boundary!("hipCtxPushCurrent", {
        let device = device_of(ctx, HipError::INVALID_CONTEXT)?;
        push(device);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxPopCurrent(ctx: *mut hipCtx_t) -> hipError_t {
    hip_boundary!("hipCtxPopCurrent", {
        let popped = CONTEXT_STACK.with(|s| {
            let mut stack = s.borrow_mut();
            let popped = stack.pop();
            if let Some(&top) = stack.last() {
                set_current_device(top);
            }
            popped
        });
        let device = popped.ok_or_else(|| CallError::new(HipError::INVALID_CONTEXT, "the context stack is empty"))?;
        // The out-parameter is optional.
        if !ctx.is_null() {
            try_out!(ctx, handle_of(device));
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hipCtxSetCurrent(ctx: hipCtx_t) -> hipError_t {
    hip_boundary!("hipCtxSetCurrent", {
        // NULL unbinds: the top of the stack goes.
        let device = if ctx.is_null() { None } else { Some(device_of(ctx, HipError::INVALID_CONTEXT)?) };
        CONTEXT_STACK.with(|s| {
            let mut stack = s.borrow_mut();
            stack.pop();
            if let Some(device) = device {
                stack.push(device);
                set_current_device(device);
            } else if let Some(&top) = stack.last() {
                set_current_device(top);
            }
        });
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxGetCurrent(ctx: *mut hipCtx_t) -> hipError_t {
    hip_boundary!("hipCtxGetCurrent", {
        non_null!(ctx);
        try_out!(ctx, handle_of(current_device()));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxGetDevice(device: *mut hipDevice_t) -> hipError_t {
    hip_boundary!("hipCtxGetDevice", {
        try_out!(device, current_device() as hipDevice_t);
        Ok(())
    })
}

/// ROCm 7 answers `hipErrorNotSupported` (clr `hip_context.cpp`), as for the other
/// deprecated context queries below.
#[no_mangle]
pub unsafe extern "C" fn hipCtxGetApiVersion(_ctx: hipCtx_t, _apiVersion: *mut c_uint) -> hipError_t {
    hip_boundary!("hipCtxGetApiVersion", { not_supported("hipCtxGetApiVersion") })
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxGetCacheConfig(_cacheConfig: *mut hipFuncCache_t) -> hipError_t {
    hip_boundary!("hipCtxGetCacheConfig", { not_supported("hipCtxGetCacheConfig") })
}

/// A value outside `hipFuncCache_t` is `hipErrorInvalidValue`, any other `hipErrorNotSupported`
/// (ROCm 7).
#[no_mangle]
pub extern "C" fn hipCtxSetCacheConfig(cacheConfig: hipFuncCache_t) -> hipError_t {
    hip_boundary!("hipCtxSetCacheConfig", {
        if cacheConfig > hipFuncCachePreferEqual {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("hipFuncCache_t {cacheConfig}")));
        }
        not_supported("hipCtxSetCacheConfig")
    })
}

/// ROCm 7's answer for the deprecated context calls it does not implement.
fn not_supported(what: &str) -> Result<(), CallError> {
    Err(CallError::new(
        HipError::NOT_SUPPORTED,
        format!("{what} is not supported by ROCm 7's HIP runtime (deprecated context API); use the hipDevice* equivalent"),
    ))
}

/// Shared memory banks are four bytes wide, whatever was asked (ROCm answers the same).
#[no_mangle]
pub unsafe extern "C" fn hipCtxGetSharedMemConfig(pConfig: *mut hipSharedMemConfig) -> hipError_t {
    hip_boundary!("hipCtxGetSharedMemConfig", {
        try_out!(pConfig, hipSharedMemBankSizeFourByte);
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hipCtxSetSharedMemConfig(config: hipSharedMemConfig) -> hipError_t {
    let _ = config;
    hip_boundary!("hipCtxSetSharedMemConfig", { not_supported("hipCtxSetSharedMemConfig") })
}

#[no_mangle]
pub extern "C" fn hipCtxSynchronize() -> hipError_t {
    hip_boundary!("hipCtxSynchronize", { not_supported("hipCtxSynchronize") })
}

#[no_mangle]
pub unsafe extern "C" fn hipCtxGetFlags(_flags: *mut c_uint) -> hipError_t {
    hip_boundary!("hipCtxGetFlags", { not_supported("hipCtxGetFlags") })
}

#[no_mangle]
pub extern "C" fn hipCtxEnablePeerAccess(peerCtx: hipCtx_t, flags: c_uint) -> hipError_t {
    hip_boundary!("hipCtxEnablePeerAccess", {
        let peer = device_of(peerCtx, HipError::INVALID_CONTEXT)?;
        from_code(hipDeviceEnablePeerAccess(peer as c_int, flags), "hipCtxEnablePeerAccess")
    })
}

#[no_mangle]
pub extern "C" fn hipCtxDisablePeerAccess(peerCtx: hipCtx_t) -> hipError_t {
    hip_boundary!("hipCtxDisablePeerAccess", {
        let peer = device_of(peerCtx, HipError::INVALID_CONTEXT)?;
        from_code(hipDeviceDisablePeerAccess(peer as c_int), "hipCtxDisablePeerAccess")
    })
}

// ---- primary contexts ---------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn hipDevicePrimaryCtxGetState(dev: hipDevice_t, flags: *mut c_uint, active: *mut c_int) -> hipError_t {
    hip_boundary!("hipDevicePrimaryCtxGetState", {
        let device = check_device(dev)?;
        let state = with_state(device, |s| *s);
        // Both out-parameters are optional; the flags are always 0 (ROCm 7: its primary
        // context takes none).
        if !flags.is_null() {
            try_out!(flags, 0);
        }
        if !active.is_null() {
            try_out!(active, c_int::from(state.retained > 0));
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDevicePrimaryCtxRetain(pctx: *mut hipCtx_t, dev: hipDevice_t) -> hipError_t {
    hip_boundary!("hipDevicePrimaryCtxRetain", {
        let device = check_device(dev)?;
        non_null!(pctx);
        with_state(device, |s| s.retained += 1);
        try_out!(pctx, handle_of(device));
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hipDevicePrimaryCtxRelease(dev: hipDevice_t) -> hipError_t {
    hip_boundary!("hipDevicePrimaryCtxRelease", {
        let device = check_device(dev)?;
        with_state(device, |s| s.retained = s.retained.saturating_sub(1));
        Ok(())
    })
}

/// A no-op that succeeds, as in ROCm 7 (`hip_context.cpp`): the session's memory, streams and
/// events stay (`hipDeviceReset` is the call that releases them).
#[no_mangle]
pub extern "C" fn hipDevicePrimaryCtxReset(_dev: hipDevice_t) -> hipError_t {
    hip_boundary!("hipDevicePrimaryCtxReset", { Ok(()) })
}

/// ROCm 7's primary context is always in use: a valid device is `hipErrorContextAlreadyInUse`.
#[no_mangle]
pub extern "C" fn hipDevicePrimaryCtxSetFlags(dev: hipDevice_t, _flags: c_uint) -> hipError_t {
    hip_boundary!("hipDevicePrimaryCtxSetFlags", {
        let device = check_device(dev)?;
        Err(CallError::new(
            HipError::CONTEXT_ALREADY_IN_USE,
            format!("the primary context of device {device} is in use (ROCm's answer); set flags with hipSetDeviceFlags"),
        ))
    })
}
