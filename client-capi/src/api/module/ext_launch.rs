//! The other launch entry points, all on the one launch path ([`launch_as`]): AMD's
//! extensions (`hipExtLaunchKernel`, `hipExtModuleLaunchKernel` / `hipHccModuleLaunchKernel`
//! with global work sizes and start/stop events), cooperative launches (single and
//! multi-device), launches with attributes (`hipLaunchKernelExC`, `hipDrvLaunchKernelEx`), the
//! old configuration stack (`hipConfigureCall`, `hipSetupArgument`, `hipLaunchByPtr`), the
//! `_spt` forms and `hipOccupancyAvailableDynamicSMemPerBlock`.

use super::register::resolve_function;
use super::*;
use crate::handle::spt;
use crate::state::devices::{check_device, device_count, with_current_device};
use std::cell::RefCell;

/// `hipLaunchAttributeID` values this library acts on.
const ATTRIBUTE_COOPERATIVE: hipLaunchAttributeID = 2;
const ATTRIBUTE_PRIORITY: hipLaunchAttributeID = 8;
/// Most attributes read from one launch configuration.
const MAX_LAUNCH_ATTRIBUTES: usize = 64;
/// The multi-device launch flags AMD's runtime knows
/// (`hipCooperativeLaunchMultiDeviceNoPreSync | NoPostSync`).
const MULTI_DEVICE_FLAGS: c_uint = 0x3;
/// Most bytes `hipSetupArgument` may place (the protocol's argument limit).
const MAX_SETUP_ARGS: usize = MAX_KERNEL_ARGS_LEN;

/// Records `event` on `stream` when it is given (the start and stop events of the `hipExt`
/// launches), in the stream's order.
fn record(event: hipEvent_t, stream: hipStream_t) -> Result<(), CallError> {
    if event.is_null() {
        return Ok(());
    }
    let req = wire::EventRecord { event: event.id(), stream: stream_id(stream) };
    with_conn(|c| c.post::<calls::EventRecord>(req))
}

/// The block count along one axis for a global work size in threads: AMD's hardware can run
/// a last, partial work-group, which a CUDA device cannot; so a size that is not a multiple
/// of the block is refused rather than run with threads the caller never asked for.
fn blocks_for(global: u32, local: u32, axis: char) -> Result<u32, CallError> {
    if global == 0 || local == 0 || global < local || !global.is_multiple_of(local) {
        return Err(CallError::new(
            HipError::INVALID_VALUE,
            format!("global work size {global} along {axis} must be a non-zero multiple of the block size {local}"),
        ));
    }
    Ok(global / local)
}

/// `hipExtModuleLaunchKernel` / `hipHccModuleLaunchKernel`.
///
/// # Safety
/// As `hipModuleLaunchKernel`.
#[allow(clippy::too_many_arguments)]
unsafe fn ext_module_launch(
    f: hipFunction_t,
    global: [u32; 3],
    local: [u32; 3],
    shared_mem: usize,
    stream: hipStream_t,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
    start: hipEvent_t,
    stop: hipEvent_t,
) -> Result<(), CallError> {
    let f = function(f.id())?;
    let grid = [blocks_for(global[0], local[0], 'x')?, blocks_for(global[1], local[1], 'y')?, blocks_for(global[2], local[2], 'z')?];
    let g = Geometry { grid, block: local, shared_mem, stream };
    record(start, stream)?;
    // SAFETY: forwarded caller contract.
    unsafe { launch(&f, g, kernel_params, extra, HipError::INVALID_VALUE)? };
    record(stop, stream)
}

#[no_mangle]
pub unsafe extern "C" fn hipExtModuleLaunchKernel(
    f: hipFunction_t,
    globalWorkSizeX: u32,
    globalWorkSizeY: u32,
    globalWorkSizeZ: u32,
    localWorkSizeX: u32,
    localWorkSizeY: u32,
    localWorkSizeZ: u32,
    sharedMemBytes: usize,
    hStream: hipStream_t,
    kernelParams: *mut *mut c_void,
    extra: *mut *mut c_void,
    startEvent: hipEvent_t,
    stopEvent: hipEvent_t,
    flags: u32,
) -> hipError_t {
    hip_boundary!("hipExtModuleLaunchKernel", {
        // hipExtAnyOrderLaunch lets the runtime reorder launches; in-order is a valid answer.
        if flags & !hipExtAnyOrderLaunch != 0 {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("unknown launch flags {flags:#x}")));
        }
        let (global, local) = ([globalWorkSizeX, globalWorkSizeY, globalWorkSizeZ], [localWorkSizeX, localWorkSizeY, localWorkSizeZ]);
        // SAFETY: forwarded caller contract.
        unsafe { ext_module_launch(f, global, local, sharedMemBytes, hStream, kernelParams, extra, startEvent, stopEvent) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipHccModuleLaunchKernel(
    f: hipFunction_t,
    globalWorkSizeX: u32,
    globalWorkSizeY: u32,
    globalWorkSizeZ: u32,
    localWorkSizeX: u32,
    localWorkSizeY: u32,
    localWorkSizeZ: u32,
    sharedMemBytes: usize,
    hStream: hipStream_t,
    kernelParams: *mut *mut c_void,
    extra: *mut *mut c_void,
    startEvent: hipEvent_t,
    stopEvent: hipEvent_t,
) -> hipError_t {
    hip_boundary!("hipHccModuleLaunchKernel", {
        let (global, local) = ([globalWorkSizeX, globalWorkSizeY, globalWorkSizeZ], [localWorkSizeX, localWorkSizeY, localWorkSizeZ]);
        // SAFETY: forwarded caller contract.
        unsafe { ext_module_launch(f, global, local, sharedMemBytes, hStream, kernelParams, extra, startEvent, stopEvent) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipExtLaunchKernel(
    function_address: *const c_void,
    numBlocks: dim3,
    dimBlocks: dim3,
    args: *mut *mut c_void,
    sharedMemBytes: usize,
    stream: hipStream_t,
    startEvent: hipEvent_t,
    stopEvent: hipEvent_t,
    flags: c_int,
) -> hipError_t {
    hip_boundary!("hipExtLaunchKernel", {
        if flags as u32 & !hipExtAnyOrderLaunch != 0 {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("unknown launch flags {flags:#x}")));
        }
        let f = resolve_function(function_address)?;
        let g = Geometry { grid: dims(numBlocks), block: dims(dimBlocks), shared_mem: sharedMemBytes, stream };
        record(startEvent, stream)?;
        // SAFETY: `args` holds one pointer per kernel parameter (HIP's contract).
        unsafe { launch(&f, g, args, std::ptr::null_mut(), HipError::INVALID_CONFIGURATION)? };
        record(stopEvent, stream)
    })
}

fn dims(d: dim3) -> [u32; 3] {
    [d.x, d.y, d.z]
}

#[no_mangle]
pub unsafe extern "C" fn hipLaunchKernel_spt(
    function_address: *const c_void,
    numBlocks: dim3,
    dimBlocks: dim3,
    args: *mut *mut c_void,
    sharedMemBytes: usize,
    stream: hipStream_t,
) -> hipError_t {
    hip_boundary!("hipLaunchKernel_spt", {
        let f = resolve_function(function_address)?;
        let g = Geometry { grid: dims(numBlocks), block: dims(dimBlocks), shared_mem: sharedMemBytes, stream: spt(stream) };
        // SAFETY: `args` holds one pointer per kernel parameter (HIP's contract).
        unsafe { launch(&f, g, args, std::ptr::null_mut(), HipError::INVALID_CONFIGURATION) }
    })
}

// ------------------------------------------------------------------------------------------------
// Cooperative launches
// ------------------------------------------------------------------------------------------------

/// `hipLaunchCooperativeKernel` and its `_spt` form.
///
/// # Safety
/// `kernel_params` holds one pointer per kernel parameter.
unsafe fn cooperative(
    f: *const c_void,
    grid: dim3,
    block: dim3,
    kernel_params: *mut *mut c_void,
    shared: u32,
    stream: hipStream_t,
) -> Result<(), CallError> {
    let f = resolve_function(f)?;
    let g = Geometry { grid: dims(grid), block: dims(block), shared_mem: shared as usize, stream };
    // SAFETY: forwarded caller contract.
    unsafe { launch_as(&f, g, kernel_params, std::ptr::null_mut(), HipError::INVALID_CONFIGURATION, LaunchKind::Cooperative) }
}

#[no_mangle]
pub unsafe extern "C" fn hipLaunchCooperativeKernel(
    f: *const c_void,
    gridDim: dim3,
    blockDimX: dim3,
    kernelParams: *mut *mut c_void,
    sharedMemBytes: c_uint,
    stream: hipStream_t,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipLaunchCooperativeKernel", { unsafe { cooperative(f, gridDim, blockDimX, kernelParams, sharedMemBytes, stream) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipLaunchCooperativeKernel_spt(
    f: *const c_void,
    gridDim: dim3,
    blockDim: dim3,
    kernelParams: *mut *mut c_void,
    sharedMemBytes: u32,
    hStream: hipStream_t,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipLaunchCooperativeKernel_spt", { unsafe { cooperative(f, gridDim, blockDim, kernelParams, sharedMemBytes, spt(hStream)) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleLaunchCooperativeKernel(
    f: hipFunction_t,
    gridDimX: c_uint,
    gridDimY: c_uint,
    gridDimZ: c_uint,
    blockDimX: c_uint,
    blockDimY: c_uint,
    blockDimZ: c_uint,
    sharedMemBytes: c_uint,
    stream: hipStream_t,
    kernelParams: *mut *mut c_void,
) -> hipError_t {
    hip_boundary!("hipModuleLaunchCooperativeKernel", {
        let f = function(f.id())?;
        let g =
            Geometry { grid: [gridDimX, gridDimY, gridDimZ], block: [blockDimX, blockDimY, blockDimZ], shared_mem: sharedMemBytes as usize, stream };
        // SAFETY: forwarded caller contract.
        unsafe { launch_as(&f, g, kernelParams, std::ptr::null_mut(), HipError::INVALID_VALUE, LaunchKind::Cooperative) }
    })
}

/// The device a launch list entry's stream belongs to.
fn stream_device(stream: hipStream_t) -> Result<u32, CallError> {
    let mut device = 0;
    // SAFETY: a valid out-pointer; the stream is checked by the callee.
    let code = unsafe { crate::api::stream::hipStreamGetDevice(stream, &mut device) };
    if code != HipError::SUCCESS {
        return Err(CallError::new(code, format!("stream {stream:p} of a multi-device launch")));
    }
    check_device(device)
}

/// Checks a multi-device launch list: its length against the devices, the flags, and that
/// no two entries share a device (AMD's runtime refuses that with `hipErrorInvalidDevice`).
fn check_multi_device(count: usize, flags: c_uint, streams: impl Iterator<Item = hipStream_t>) -> Result<Vec<u32>, CallError> {
    if count == 0 || count > device_count()? as usize {
        return Err(CallError::new(HipError::INVALID_VALUE, format!("{count} devices in a multi-device launch")));
    }
    if flags & !MULTI_DEVICE_FLAGS != 0 {
        return Err(CallError::new(HipError::INVALID_VALUE, format!("unknown multi-device launch flags {flags:#x}")));
    }
    let mut devices = Vec::with_capacity(count);
    for stream in streams {
        let device = stream_device(stream)?;
        if devices.contains(&device) {
            return Err(CallError::new(HipError::INVALID_DEVICE, format!("two launches of one multi-device launch on device {device}")));
        }
        devices.push(device);
    }
    Ok(devices)
}

/// `hipLaunchCooperativeKernelMultiDevice` and `hipExtLaunchMultiKernelMultiDevice`: each
/// entry launched on its stream's device, in list order. Each launch is resident on its own
/// device; the devices' grids do not share a barrier across devices.
///
/// # Safety
/// `list` holds `count` entries, each following `hipLaunchKernel`'s contract.
unsafe fn launch_multi_device(list: *mut hipLaunchParams, count: c_int, flags: c_uint, kind: LaunchKind) -> Result<(), CallError> {
    non_null!(list);
    let count = usize::try_from(count).map_err(|_| CallError::new(HipError::INVALID_VALUE, format!("{count} devices")))?;
    if count > MAX_LIST_ITEMS_MULTI {
        return Err(CallError::new(HipError::INVALID_VALUE, format!("{count} devices in a multi-device launch")));
    }
    // SAFETY: the list holds `count` entries (caller contract).
    let entries = unsafe { std::slice::from_raw_parts(list, count) };
    let devices = check_multi_device(count, flags, entries.iter().map(|e| e.stream))?;
    for (e, &device) in entries.iter().zip(&devices) {
        with_current_device(device, || {
            let f = resolve_function(e.func)?;
            let g = Geometry { grid: dims(e.gridDim), block: dims(e.blockDim), shared_mem: e.sharedMem, stream: e.stream };
            // SAFETY: each entry's `args` holds one pointer per parameter (caller contract).
            unsafe { launch_as(&f, g, e.args, std::ptr::null_mut(), HipError::INVALID_CONFIGURATION, kind) }
        })?;
    }
    Ok(())
}

/// Most entries of one multi-device launch list read (far above any worker's devices).
const MAX_LIST_ITEMS_MULTI: usize = 1024;

#[no_mangle]
pub unsafe extern "C" fn hipLaunchCooperativeKernelMultiDevice(
    launchParamsList: *mut hipLaunchParams,
    numDevices: c_int,
    flags: c_uint,
) -> hipError_t {
    hip_boundary!("hipLaunchCooperativeKernelMultiDevice", {
        // SAFETY: forwarded caller contract.
        unsafe { launch_multi_device(launchParamsList, numDevices, flags, LaunchKind::Cooperative) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipExtLaunchMultiKernelMultiDevice(launchParamsList: *mut hipLaunchParams, numDevices: c_int, flags: c_uint) -> hipError_t {
    hip_boundary!("hipExtLaunchMultiKernelMultiDevice", {
        // SAFETY: forwarded caller contract.
        unsafe { launch_multi_device(launchParamsList, numDevices, flags, LaunchKind::Plain) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleLaunchCooperativeKernelMultiDevice(
    launchParamsList: *mut hipFunctionLaunchParams,
    numDevices: c_uint,
    flags: c_uint,
) -> hipError_t {
    hip_boundary!("hipModuleLaunchCooperativeKernelMultiDevice", {
        non_null!(launchParamsList);
        let count = numDevices as usize;
        if count > MAX_LIST_ITEMS_MULTI {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("{count} devices in a multi-device launch")));
        }
        // SAFETY: the list holds `numDevices` entries (HIP's contract).
        let entries = unsafe { std::slice::from_raw_parts(launchParamsList, count) };
        check_multi_device(count, flags, entries.iter().map(|e| e.hStream))?;
        for e in entries {
            let f = function(e.function.id())?;
            let g = Geometry {
                grid: [e.gridDimX, e.gridDimY, e.gridDimZ],
                block: [e.blockDimX, e.blockDimY, e.blockDimZ],
                shared_mem: e.sharedMemBytes as usize,
                stream: e.hStream,
            };
            // SAFETY: each entry's kernelParams holds one pointer per parameter (HIP's contract).
            unsafe { launch_as(&f, g, e.kernelParams, std::ptr::null_mut(), HipError::INVALID_VALUE, LaunchKind::Cooperative)? };
        }
        Ok(())
    })
}

// ------------------------------------------------------------------------------------------------
// Launches with attributes
// ------------------------------------------------------------------------------------------------

/// The launch kind a `hipLaunchAttribute` list asks for. Cooperative is honoured; a priority
/// is a scheduling hint, accepted (the stream's own priority orders the work); the others
/// (access policy windows, synchronization policy, memory sync domains) are refused with
/// `hipErrorNotSupported`, as AMD's runtime refuses them.
///
/// # Safety
/// `attrs` holds `count` attributes (or is null with `count` 0).
unsafe fn launch_kind(attrs: *const hipLaunchAttribute, count: c_uint) -> Result<LaunchKind, CallError> {
    if count == 0 {
        return Ok(LaunchKind::Plain);
    }
    non_null!(attrs);
    if count as usize > MAX_LAUNCH_ATTRIBUTES {
        return Err(CallError::new(HipError::INVALID_VALUE, format!("{count} launch attributes")));
    }
    // SAFETY: `count` attributes (caller contract).
    let attrs = unsafe { std::slice::from_raw_parts(attrs, count as usize) };
    let mut kind = LaunchKind::Plain;
    for a in attrs {
        match a.id {
            ATTRIBUTE_COOPERATIVE => {
                // SAFETY: every member of the value union is plain data; `cooperative` is an int.
                if unsafe { a.__bindgen_anon_1.val.cooperative } != 0 {
                    kind = LaunchKind::Cooperative;
                }
            }
            ATTRIBUTE_PRIORITY => {}
            other => return Err(CallError::new(HipError::NOT_SUPPORTED, format!("launch attribute {other} is not supported"))),
        }
    }
    Ok(kind)
}

#[no_mangle]
pub unsafe extern "C" fn hipLaunchKernelExC(config: *const hipLaunchConfig_t, fPtr: *const c_void, args: *mut *mut c_void) -> hipError_t {
    hip_boundary!("hipLaunchKernelExC", {
        non_null!(config);
        // SAFETY: a valid configuration (HIP's contract).
        let config = unsafe { &*config };
        // SAFETY: `attrs` holds `numAttrs` entries (HIP's contract).
        let kind = unsafe { launch_kind(config.attrs, config.numAttrs)? };
        let f = resolve_function(fPtr)?;
        let g = Geometry { grid: dims(config.gridDim), block: dims(config.blockDim), shared_mem: config.dynamicSmemBytes, stream: config.stream };
        // SAFETY: `args` holds one pointer per kernel parameter (HIP's contract).
        unsafe { launch_as(&f, g, args, std::ptr::null_mut(), HipError::INVALID_CONFIGURATION, kind) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDrvLaunchKernelEx(
    config: *const HIP_LAUNCH_CONFIG,
    f: hipFunction_t,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> hipError_t {
    hip_boundary!("hipDrvLaunchKernelEx", {
        non_null!(config);
        // SAFETY: a valid configuration (HIP's contract).
        let config = unsafe { &*config };
        // SAFETY: `attrs` holds `numAttrs` entries (HIP's contract).
        let kind = unsafe { launch_kind(config.attrs, config.numAttrs)? };
        let f = function(f.id())?;
        let g = Geometry {
            grid: [config.gridDimX, config.gridDimY, config.gridDimZ],
            block: [config.blockDimX, config.blockDimY, config.blockDimZ],
            shared_mem: config.sharedMemBytes as usize,
            stream: config.hStream,
        };
        if kind == LaunchKind::Cooperative && !extra.is_null() {
            return Err(CallError::new(HipError::INVALID_VALUE, "a cooperative launch takes kernelParams, not extra"));
        }
        // SAFETY: forwarded caller contract.
        unsafe { launch_as(&f, g, params, extra, HipError::INVALID_VALUE, kind) }
    })
}

// ------------------------------------------------------------------------------------------------
// hipConfigureCall / hipSetupArgument / hipLaunchByPtr
// ------------------------------------------------------------------------------------------------

/// One `hipConfigureCall` (or `__hipPushCallConfiguration`): the launch shape and the
/// argument bytes placed so far.
pub(super) struct PendingCall {
    pub(super) grid: dim3,
    pub(super) block: dim3,
    pub(super) shared_mem: usize,
    pub(super) stream: hipStream_t,
    args: Vec<u8>,
}

thread_local! {
    /// The calling thread's configured calls, innermost last: one stack for
    /// `hipConfigureCall` and `__hipPushCallConfiguration`, as ROCm's per-thread exec stack,
    /// so `hipLaunchByPtr` launches what either configured.
    static PENDING_CALLS: RefCell<Vec<PendingCall>> = const { RefCell::new(Vec::new()) };
}

/// Most nested configured calls without a launch.
const MAX_PENDING_CALLS: usize = 64;

/// Pushes a launch configuration on the calling thread's stack.
pub(super) fn push_call(grid: dim3, block: dim3, shared_mem: usize, stream: hipStream_t) -> Result<(), CallError> {
    PENDING_CALLS.with(|calls| {
        let mut calls = calls.borrow_mut();
        if calls.len() >= MAX_PENDING_CALLS {
            return Err(CallError::new(HipError::INVALID_CONFIGURATION, format!("{MAX_PENDING_CALLS} configured calls without a launch")));
        }
        calls.push(PendingCall { grid, block, shared_mem, stream, args: Vec::new() });
        Ok(())
    })
}

/// Takes the innermost launch configuration of the calling thread.
pub(super) fn pop_call() -> Option<PendingCall> {
    PENDING_CALLS.with(|calls| calls.borrow_mut().pop())
}

#[no_mangle]
pub extern "C" fn hipConfigureCall(gridDim: dim3, blockDim: dim3, sharedMem: usize, stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipConfigureCall", { push_call(gridDim, blockDim, sharedMem, stream) })
}

#[no_mangle]
pub unsafe extern "C" fn hipSetupArgument(arg: *const c_void, size: usize, offset: usize) -> hipError_t {
    hip_boundary!("hipSetupArgument", {
        if size > 0 {
            non_null!(arg);
        }
        let end = offset
            .checked_add(size)
            .filter(|&end| end <= MAX_SETUP_ARGS)
            .ok_or_else(|| CallError::new(HipError::INVALID_VALUE, format!("argument at {offset} of {size} bytes exceeds {MAX_SETUP_ARGS}")))?;
        PENDING_CALLS.with(|calls| {
            let mut calls = calls.borrow_mut();
            let call =
                calls.last_mut().ok_or_else(|| CallError::new(HipError::MISSING_CONFIGURATION, "hipSetupArgument without hipConfigureCall"))?;
            if call.args.len() < end {
                call.args.resize(end, 0);
            }
            if size > 0 {
                // SAFETY: `arg` points at `size` readable bytes (HIP's contract).
                call.args[offset..end].copy_from_slice(unsafe { std::slice::from_raw_parts(arg as *const u8, size) });
            }
            Ok(())
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipLaunchByPtr(func: *const c_void) -> hipError_t {
    hip_boundary!("hipLaunchByPtr", {
        let call = pop_call().ok_or_else(|| CallError::new(HipError::MISSING_CONFIGURATION, "hipLaunchByPtr without hipConfigureCall"))?;
        let f = resolve_function(func)?;
        let g = Geometry { grid: dims(call.grid), block: dims(call.block), shared_mem: call.shared_mem, stream: call.stream };
        let mut args = call.args;
        // The kernel's layout may end past the last argument placed (tail padding).
        if args.len() < f.layout()?.len() {
            args.resize(f.layout()?.len(), 0);
        }
        let mut size = args.len();
        let mut extra: [*mut c_void; 5] = [
            HIP_LAUNCH_PARAM_BUFFER_POINTER,
            args.as_mut_ptr().cast(),
            HIP_LAUNCH_PARAM_BUFFER_SIZE,
            (&mut size as *mut usize).cast(),
            HIP_LAUNCH_PARAM_END,
        ];
        // SAFETY: `extra` describes `args`, which outlives the call.
        unsafe { launch(&f, g, std::ptr::null_mut(), extra.as_mut_ptr(), HipError::INVALID_CONFIGURATION) }
    })
}

// ------------------------------------------------------------------------------------------------
// Occupancy
// ------------------------------------------------------------------------------------------------

/// The dynamic shared memory each of `numBlocks` blocks can have on one multiprocessor:
/// the multiprocessor's shared memory split evenly, less the kernel's static shared memory,
/// at most what the kernel allows (`maxDynamicSharedSizeBytes`).
#[no_mangle]
pub unsafe extern "C" fn hipOccupancyAvailableDynamicSMemPerBlock(
    dynamicSmemSize: *mut usize,
    f: *const c_void,
    numBlocks: c_int,
    blockSize: c_int,
) -> hipError_t {
    hip_boundary!("hipOccupancyAvailableDynamicSMemPerBlock", {
        non_null!(dynamicSmemSize);
        let f = resolve_function(f)?;
        if numBlocks <= 0 || blockSize <= 0 {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("numBlocks {numBlocks}, blockSize {blockSize}")));
        }
        let a = attributes(&f)?;
        if blockSize > a.max_threads_per_block {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("block size {blockSize} exceeds the kernel's {}", a.max_threads_per_block)));
        }
        let device = tables_of(f.module).modules.get(&f.module).map_or_else(current_device, |m| m.device);
        let per_mp = properties(device)?.shared_mem_per_multiprocessor;
        let available = (per_mp / numBlocks as u64).saturating_sub(a.shared_size).min(a.max_dynamic_shared_size.max(0) as u64);
        try_out!(dynamicSmemSize, usize::try_from(available).unwrap_or(usize::MAX));
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_work_sizes_divide_into_blocks() {
        assert_eq!(blocks_for(256, 64, 'x').unwrap(), 4);
        assert_eq!(blocks_for(64, 64, 'x').unwrap(), 1);
        for (global, local) in [(250, 64), (32, 64), (0, 64), (64, 0)] {
            assert_eq!(blocks_for(global, local, 'x').unwrap_err().code, HipError::INVALID_VALUE, "{global}/{local}");
        }
    }

    fn attribute(id: hipLaunchAttributeID, value: c_int) -> hipLaunchAttribute {
        // SAFETY: plain data; all-zero is a valid attribute.
        let mut a: hipLaunchAttribute = unsafe { std::mem::zeroed() };
        a.id = id;
        a.__bindgen_anon_1.val.cooperative = value;
        a
    }

    #[test]
    fn launch_attributes() {
        // SAFETY: no attributes are read.
        assert_eq!(unsafe { launch_kind(std::ptr::null(), 0) }.unwrap(), LaunchKind::Plain);
        // SAFETY: a null array with a count is refused before any read.
        assert_eq!(unsafe { launch_kind(std::ptr::null(), 1) }.unwrap_err().code, HipError::INVALID_VALUE);
        let attrs = [attribute(ATTRIBUTE_PRIORITY, 3), attribute(ATTRIBUTE_COOPERATIVE, 1)];
        // SAFETY: two attributes, as passed.
        assert_eq!(unsafe { launch_kind(attrs.as_ptr(), 2) }.unwrap(), LaunchKind::Cooperative);
        let off = [attribute(ATTRIBUTE_COOPERATIVE, 0)];
        // SAFETY: one attribute.
        assert_eq!(unsafe { launch_kind(off.as_ptr(), 1) }.unwrap(), LaunchKind::Plain);
        // Access policy windows, synchronization policy and memory sync domains are refused.
        for id in [1, 3, 9, 10] {
            let a = [attribute(id, 0)];
            // SAFETY: one attribute.
            assert_eq!(unsafe { launch_kind(a.as_ptr(), 1) }.unwrap_err().code, HipError::NOT_SUPPORTED, "attribute {id}");
        }
    }
}
