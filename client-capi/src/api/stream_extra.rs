//! Stream and event breadth: callbacks and host functions (run by this library's callback
//! thread, see [`crate::callbacks`]), CU masks, stream attributes and ids, wait/write value
//! and batch memory operations, the per-thread-default-stream (`_spt`) forms, event records
//! with flags, and the thread's stream-capture mode.

use super::event::hipEventRecord;
use super::stream::{hipStreamQuery, hipStreamSynchronize, hipStreamWaitEvent};
use crate::abi::*;
use crate::callbacks::{self, Callback};
use crate::handle::{spt, stream_id, Handle};
use crate::remote::with_conn;
use crate::state::devices::{check_device, current_device, properties};
use crate::state::streams::with_extras;
use client_core::CallError;
use proto_core::wire::{self, stream_mem_op};
use proto_core::Calls;
use std::ffi::{c_int, c_uint, c_ulonglong, c_void};

/// ROCm's synchronization policy of a stream nobody set one on.
const DEFAULT_SYNC_POLICY: hipSynchronizationPolicy = hipSyncPolicyAuto;

/// Fails with `hipErrorInvalidHandle` (HIP's `hipErrorInvalidResourceHandle`) unless
/// `stream` is the null stream, an implicit stream or a live stream of this session; answers
/// its wire id.
fn valid_stream(stream: hipStream_t) -> Result<u64, CallError> {
    let id = stream_id(stream);
    if matches!(stream.id(), 0..=2) {
        return Ok(id);
    }
    with_conn(|c| c.stream_get_info(wire::StreamRef { stream: id }).map(drop))?;
    Ok(id)
}

// ---- callbacks --------------------------------------------------------------------------

fn add_callback(stream: hipStream_t, callback: hipStreamCallback_t, user: *mut c_void, flags: c_uint) -> Result<(), CallError> {
    let (Some(f), 0) = (callback, flags) else {
        return Err(CallError::new(HipError::INVALID_VALUE, "callback is NULL or flags are not 0"));
    };
    let cb = Callback::Stream { f, stream: stream as usize, user: user as usize };
    let stream = stream_id(stream);
    callbacks::enqueue(stream, crate::remote::routed_device(), cb)
}

fn launch_host_func(stream: hipStream_t, f: hipHostFn_t, user: *mut c_void) -> Result<(), CallError> {
    let f = f.ok_or_else(|| CallError::new(HipError::INVALID_VALUE, "host function is NULL"))?;
    let stream = stream_id(stream);
    callbacks::enqueue(stream, crate::remote::routed_device(), Callback::Host { f, user: user as usize })
}

/// # Safety
/// `userData` is the application's, passed back unchanged to the callback (never read here).
#[no_mangle]
pub unsafe extern "C" fn hipStreamAddCallback(
    stream: hipStream_t,
    callback: hipStreamCallback_t,
    userData: *mut c_void,
    flags: c_uint,
) -> hipError_t {
    hip_boundary!("hipStreamAddCallback", { add_callback(stream, callback, userData, flags) })
}

/// # Safety
/// `userData` is the application's, passed back unchanged to the callback (never read here).
#[no_mangle]
pub unsafe extern "C" fn hipStreamAddCallback_spt(
    stream: hipStream_t,
    callback: hipStreamCallback_t,
    userData: *mut c_void,
    flags: c_uint,
) -> hipError_t {
    hip_boundary!("hipStreamAddCallback_spt", { add_callback(spt(stream), callback, userData, flags) })
}

/// # Safety
/// `userData` is the application's, passed back unchanged to the callback (never read here).
#[no_mangle]
pub unsafe extern "C" fn hipLaunchHostFunc(stream: hipStream_t, fn_: hipHostFn_t, userData: *mut c_void) -> hipError_t {
    hip_boundary!("hipLaunchHostFunc", { launch_host_func(stream, fn_, userData) })
}

/// # Safety
/// `userData` is the application's, passed back unchanged to the callback (never read here).
#[no_mangle]
pub unsafe extern "C" fn hipLaunchHostFunc_spt(stream: hipStream_t, fn_: hipHostFn_t, userData: *mut c_void) -> hipError_t {
    hip_boundary!("hipLaunchHostFunc_spt", { launch_host_func(spt(stream), fn_, userData) })
}

// ---- CU masks ---------------------------------------------------------------------------

/// The mask of every CU of the current device, 32 CUs a word.
fn all_cus() -> Result<Vec<u32>, CallError> {
    let cus = properties(check_device(current_device() as c_int)?)?.multi_processor_count.max(1) as usize;
    Ok((0..cus.div_ceil(32)).map(|w| if (w + 1) * 32 <= cus { u32::MAX } else { (1u32 << (cus % 32)) - 1 }).collect())
}

/// A stream of the current device with the default flags, restricted (as AMD's runtime
/// records it) to the CUs of `cuMask`. Accepted and reported; the worker's backends place
/// work on all CUs.
///
/// # Safety
/// `cuMask` is NULL or points to `cuMaskSize` readable words.
#[no_mangle]
pub unsafe extern "C" fn hipExtStreamCreateWithCUMask(stream: *mut hipStream_t, cuMaskSize: u32, cuMask: *const u32) -> hipError_t {
    hip_boundary!("hipExtStreamCreateWithCUMask", {
        if stream.is_null() {
            return Err(CallError::new(HipError::INVALID_HANDLE, "stream is NULL"));
        }
        if cuMaskSize == 0 || cuMask.is_null() {
            return Err(CallError::new(HipError::INVALID_VALUE, "empty CU mask"));
        }
        // SAFETY: non-null, `cuMaskSize` words (the caller's contract).
        let mask = unsafe { std::slice::from_raw_parts(cuMask, cuMaskSize as usize) }.to_vec();
        // SAFETY: `stream` is non-null and writable (the caller's contract).
        let created = unsafe { super::stream::hipStreamCreate(stream) };
        if created != HipError::SUCCESS {
            return Err(CallError::new(created, "stream creation failed"));
        }
        // SAFETY: just written by hipStreamCreate.
        let id = unsafe { *stream }.id();
        with_extras(|t| t.entry(id).cu_mask = mask)?;
        Ok(())
    })
}

/// The CUs `stream` may use: its mask ANDed with the device's CUs (all of them where that
/// leaves none, or for the null and per-thread streams), as AMD's runtime answers.
///
/// # Safety
/// `cuMask` is NULL or points to `cuMaskSize` writable words.
#[no_mangle]
pub unsafe extern "C" fn hipExtStreamGetCUMask(stream: hipStream_t, cuMaskSize: u32, cuMask: *mut u32) -> hipError_t {
    hip_boundary!("hipExtStreamGetCUMask", {
        non_null!(cuMask);
        let all = all_cus()?;
        if (cuMaskSize as usize) < all.len() {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("the device's CU mask needs {} words", all.len())));
        }
        let own = if matches!(stream.id(), 0 | 2) {
            Vec::new()
        } else {
            with_extras(|t| t.get(stream_id(stream)).map(|e| e.cu_mask.clone()))?.unwrap_or_default()
        };
        let mut mask: Vec<u32> = own.iter().zip(&all).map(|(o, a)| o & a).collect();
        if mask.iter().all(|&w| w == 0) {
            mask = all;
        }
        // SAFETY: `cuMaskSize` writable words (the caller's contract), at least `mask.len()`.
        unsafe { std::ptr::copy_nonoverlapping(mask.as_ptr(), cuMask, mask.len()) };
        Ok(())
    })
}

// ---- attributes and ids -----------------------------------------------------------------

/// # Safety
/// `value` is NULL or points to a readable `hipLaunchAttributeValue`.
#[no_mangle]
pub unsafe extern "C" fn hipStreamSetAttribute(stream: hipStream_t, attr: hipLaunchAttributeID, value: *const hipLaunchAttributeValue) -> hipError_t {
    hip_boundary!("hipStreamSetAttribute", {
        non_null!(value);
        let id = valid_stream(stream)?;
        if attr != hipLaunchAttributeSynchronizationPolicy {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("stream attribute {attr} cannot be set")));
        }
        // SAFETY: non-null and readable; the union's syncPolicy member is what this attribute
        // names.
        let policy = unsafe { (*value).syncPolicy };
        if !(hipSyncPolicyAuto..=hipSyncPolicyBlockingSync).contains(&policy) {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("unknown synchronization policy {policy}")));
        }
        with_extras(|t| t.entry(id).sync_policy = Some(policy))?;
        Ok(())
    })
}

/// # Safety
/// `value_out` is NULL or points to a writable `hipLaunchAttributeValue`.
#[allow(non_upper_case_globals)] // HIP's attribute constants keep their C names
#[no_mangle]
pub unsafe extern "C" fn hipStreamGetAttribute(
    stream: hipStream_t,
    attr: hipLaunchAttributeID,
    value_out: *mut hipLaunchAttributeValue,
) -> hipError_t {
    hip_boundary!("hipStreamGetAttribute", {
        non_null!(value_out);
        let id = valid_stream(stream)?;
        match attr {
            hipLaunchAttributeSynchronizationPolicy => {
                let policy = with_extras(|t| t.get(id).and_then(|e| e.sync_policy))?.unwrap_or(DEFAULT_SYNC_POLICY);
                // SAFETY: non-null and writable; writing one member of the union.
                unsafe { (*value_out).syncPolicy = policy };
            }
            hipLaunchAttributePriority => {
                let mut priority = 0;
                // SAFETY: a valid out-pointer.
                let got = unsafe { super::stream::hipStreamGetPriority(stream, &mut priority) };
                if got != HipError::SUCCESS {
                    return Err(CallError::new(got, "stream priority"));
                }
                // SAFETY: as above.
                unsafe { (*value_out).priority = priority };
            }
            _ => return Err(CallError::new(HipError::INVALID_VALUE, format!("stream attribute {attr} is not queryable"))),
        }
        Ok(())
    })
}

/// Copies the attributes a program can set (the synchronization policy, as AMD's runtime).
#[no_mangle]
pub extern "C" fn hipStreamCopyAttributes(dst: hipStream_t, src: hipStream_t) -> hipError_t {
    hip_boundary!("hipStreamCopyAttributes", {
        let src = valid_stream(src)?;
        let dst = valid_stream(dst)?;
        with_extras(|t| {
            let policy = t.get(src).and_then(|e| e.sync_policy);
            t.entry(dst).sync_policy = policy;
        })
    })
}

/// A stream's id, unique among the session's streams: the worker's handle (0 for the
/// legacy null stream, the per-thread id for `hipStreamPerThread`).
///
/// # Safety
/// `streamId` is NULL or points to a writable `unsigned long long`.
#[no_mangle]
pub unsafe extern "C" fn hipStreamGetId(stream: hipStream_t, streamId: *mut c_ulonglong) -> hipError_t {
    hip_boundary!("hipStreamGetId", {
        non_null!(streamId);
        let id = valid_stream(stream)?;
        try_out!(streamId, id as c_ulonglong);
        Ok(())
    })
}

// ---- wait / write value -----------------------------------------------------------------

fn mem_op(stream: hipStream_t, ptr: *mut c_void, op: u32, value: u64, mask: u64, flags: c_uint) -> Result<(), CallError> {
    non_null!(ptr);
    let is_wait = matches!(op, stream_mem_op::WAIT32 | stream_mem_op::WAIT64);
    if is_wait && flags > hipStreamWaitValueNor {
        return Err(CallError::new(HipError::INVALID_VALUE, format!("unknown wait flags {flags:#x}")));
    }
    // AMD's runtime ignores a write's flags.
    let flags = if is_wait { flags } else { 0 };
    // Mapped host memory (signal memory among it) is this process's mirror: the operation
    // reads or writes its device twin, which the mirror is brought level with around
    // requests and synchronisations.
    let ptr = crate::state::managed::find(ptr as usize, |m| m.device_address(ptr as usize))?.unwrap_or(ptr as u64);
    let req = wire::StreamMemOp { stream: stream_id(stream), ptr, value, mask, op, flags };
    let stream = req.stream;
    with_conn(|c| c.stream_mem_op(req).map(drop)).map_err(|e| {
        // ROCm's answers: a stream it cannot find is a destroyed context; memory it does not
        // know is an invalid value.
        match e.code {
            HipError::INVALID_HANDLE => CallError::new(HipError::CONTEXT_IS_DESTROYED, e.message),
            HipError::INVALID_DEVICE_POINTER => CallError::new(HipError::INVALID_VALUE, e.message),
            _ => e,
        }
    })?;
    if is_wait {
        // Synchronising calls poll from now on until the stream is seen complete.
        crate::state::sync::note_stream_wait(stream, crate::remote::routed_device());
    }
    Ok(())
}

/// # Safety
/// `ptr` is a device address, sent to the worker, never dereferenced here.
#[no_mangle]
pub unsafe extern "C" fn hipStreamWaitValue32(stream: hipStream_t, ptr: *mut c_void, value: u32, flags: c_uint, mask: u32) -> hipError_t {
    hip_boundary!("hipStreamWaitValue32", { mem_op(stream, ptr, stream_mem_op::WAIT32, value.into(), mask.into(), flags) })
}

/// # Safety
/// `ptr` is a device address, sent to the worker, never dereferenced here.
#[no_mangle]
pub unsafe extern "C" fn hipStreamWaitValue64(stream: hipStream_t, ptr: *mut c_void, value: u64, flags: c_uint, mask: u64) -> hipError_t {
    hip_boundary!("hipStreamWaitValue64", { mem_op(stream, ptr, stream_mem_op::WAIT64, value, mask, flags) })
}

/// # Safety
/// `ptr` is a device address, sent to the worker, never dereferenced here.
#[no_mangle]
pub unsafe extern "C" fn hipStreamWriteValue32(stream: hipStream_t, ptr: *mut c_void, value: u32, flags: c_uint) -> hipError_t {
    hip_boundary!("hipStreamWriteValue32", { mem_op(stream, ptr, stream_mem_op::WRITE32, value.into(), 0, flags) })
}

/// # Safety
/// `ptr` is a device address, sent to the worker, never dereferenced here.
#[no_mangle]
pub unsafe extern "C" fn hipStreamWriteValue64(stream: hipStream_t, ptr: *mut c_void, value: u64, flags: c_uint) -> hipError_t {
    hip_boundary!("hipStreamWriteValue64", { mem_op(stream, ptr, stream_mem_op::WRITE64, value, 0, flags) })
}

/// Most operations one `hipStreamBatchMemOp` may carry.
pub const MAX_BATCH_MEM_OPS: c_uint = 256;

/// Each operation in order on the stream. Barriers and remote-write flushes order nothing
/// more than the stream's own order already does on the worker, so they are accepted as is.
///
/// # Safety
/// `paramArray` is NULL or points to `count` readable operations.
#[allow(non_upper_case_globals)] // HIP's operation constants keep their C names
#[no_mangle]
pub unsafe extern "C" fn hipStreamBatchMemOp(
    stream: hipStream_t,
    count: c_uint,
    paramArray: *mut hipStreamBatchMemOpParams,
    flags: c_uint,
) -> hipError_t {
    hip_boundary!("hipStreamBatchMemOp", {
        non_null!(paramArray);
        if count == 0 || count > MAX_BATCH_MEM_OPS || flags != 0 {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("{count} operations (1..={MAX_BATCH_MEM_OPS}), flags {flags:#x} (0)")));
        }
        // SAFETY: non-null, `count` operations (the caller's contract).
        let ops = unsafe { std::slice::from_raw_parts(paramArray, count as usize) };
        let mut planned = Vec::with_capacity(ops.len());
        for p in ops {
            // SAFETY: every member starts with `operation`; the member read next is the one it
            // names.
            let planned_op = unsafe {
                match p.operation {
                    hipStreamMemOpWaitValue32 => {
                        Some((stream_mem_op::WAIT32, p.waitValue.address, u64::from(p.waitValue.__bindgen_anon_1.value), p.waitValue.flags))
                    }
                    hipStreamMemOpWaitValue64 => {
                        Some((stream_mem_op::WAIT64, p.waitValue.address, p.waitValue.__bindgen_anon_1.value64, p.waitValue.flags))
                    }
                    hipStreamMemOpWriteValue32 => {
                        Some((stream_mem_op::WRITE32, p.writeValue.address, u64::from(p.writeValue.__bindgen_anon_1.value), 0))
                    }
                    hipStreamMemOpWriteValue64 => Some((stream_mem_op::WRITE64, p.writeValue.address, p.writeValue.__bindgen_anon_1.value64, 0)),
                    hipStreamMemOpBarrier | hipStreamMemOpFlushRemoteWrites => None,
                    other => return Err(CallError::new(HipError::INVALID_VALUE, format!("unknown batch operation {other}"))),
                }
            };
            if let Some((op, address, value, op_flags)) = planned_op {
                if address.is_null() {
                    return Err(CallError::new(HipError::INVALID_VALUE, "batch operation address is NULL"));
                }
                if matches!(op, stream_mem_op::WAIT32 | stream_mem_op::WAIT64) && op_flags > hipStreamWaitValueNor {
                    return Err(CallError::new(HipError::INVALID_VALUE, format!("unknown wait flags {op_flags:#x}")));
                }
                planned.push((op, address, value, op_flags));
            }
        }
        for (op, address, value, op_flags) in planned {
            mem_op(stream, address, op, value, u64::MAX, op_flags)?;
        }
        Ok(())
    })
}

// ---- per-thread default stream forms ----------------------------------------------------

/// The outcome of an export called from another export's boundary.
fn outcome(code: hipError_t) -> Result<(), CallError> {
    if code == HipError::SUCCESS {
        Ok(())
    } else {
        Err(CallError::new(code, "see the call it forwards to"))
    }
}

#[no_mangle]
pub extern "C" fn hipStreamQuery_spt(stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipStreamQuery_spt", { outcome(hipStreamQuery(spt(stream))) })
}

#[no_mangle]
pub extern "C" fn hipStreamSynchronize_spt(stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipStreamSynchronize_spt", { outcome(hipStreamSynchronize(spt(stream))) })
}

#[no_mangle]
pub extern "C" fn hipStreamWaitEvent_spt(stream: hipStream_t, event: hipEvent_t, flags: c_uint) -> hipError_t {
    hip_boundary!("hipStreamWaitEvent_spt", { outcome(hipStreamWaitEvent(spt(stream), event, flags)) })
}

#[no_mangle]
pub extern "C" fn hipEventRecord_spt(event: hipEvent_t, stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipEventRecord_spt", { outcome(hipEventRecord(event, spt(stream))) })
}

/// `hipEventRecordExternal` matters only while a stream is captured into a graph; outside
/// one both flags record alike, as in AMD's runtime.
#[no_mangle]
pub extern "C" fn hipEventRecordWithFlags(event: hipEvent_t, stream: hipStream_t, flags: c_uint) -> hipError_t {
    /// `hipEventRecordDefault | hipEventRecordExternal`.
    const RECORD_FLAGS: c_uint = 0x1;
    hip_boundary!("hipEventRecordWithFlags", {
        if flags & !RECORD_FLAGS != 0 {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("unknown record flags {flags:#x}")));
        }
        outcome(hipEventRecord(event, stream))
    })
}

// ---- external semaphores ----------------------------------------------------------------

/// ROCm's argument checks of `hipSignalExternalSemaphoresAsync` and
/// `hipWaitExternalSemaphoresAsync` (clr `hip_memory.cpp`), each `hipErrorInvalidValue`: NULL
/// arrays, a stream that is not the null stream or a live stream of this session, a NULL
/// semaphore, nonzero flags. What passes them names a semaphore, which only
/// `hipImportExternalSemaphore` makes, and this library imports none (the Vulkan or Direct3D
/// handle belongs to the client's process; a worker on another machine cannot open it).
///
/// # Safety
/// `semaphores` and `flags` are NULL or hold `count` entries (HIP's contract).
unsafe fn external_semaphores_op(
    what: &str,
    semaphores: *const hipExternalSemaphore_t,
    has_params: bool,
    flags: impl Fn(usize) -> c_uint,
    count: c_uint,
    stream: hipStream_t,
) -> Result<(), CallError> {
    if semaphores.is_null() || !has_params {
        return Err(CallError::new(HipError::INVALID_VALUE, "the semaphore or parameter array is NULL"));
    }
    valid_stream(stream).map_err(|e| CallError::new(HipError::INVALID_VALUE, e.message))?;
    for i in 0..count as usize {
        // SAFETY: the array holds `count` entries (HIP's contract); i < count.
        if unsafe { semaphores.add(i).read() }.is_null() {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("semaphore {i} is NULL")));
        }
        if flags(i) != 0 {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("semaphore {i}: flags must be 0 (NvSciSync is NVIDIA's only)")));
        }
    }
    if count == 0 {
        return Ok(());
    }
    Err(CallError::new(
        HipError::NOT_SUPPORTED,
        format!(
            "{what}: external semaphores are not supported by hip-remote (hipImportExternalSemaphore \
             imports none: the worker cannot open the client's Vulkan or Direct3D handle)"
        ),
    ))
}

#[no_mangle]
pub unsafe extern "C" fn hipSignalExternalSemaphoresAsync(
    extSemArray: *const hipExternalSemaphore_t,
    paramsArray: *const hipExternalSemaphoreSignalParams,
    numExtSems: c_uint,
    stream: hipStream_t,
) -> hipError_t {
    hip_boundary!("hipSignalExternalSemaphoresAsync", {
        // SAFETY: the arrays hold `numExtSems` entries (HIP's contract); `paramsArray` is read
        // only when non-null and only below `numExtSems`.
        unsafe {
            external_semaphores_op(
                "hipSignalExternalSemaphoresAsync",
                extSemArray,
                !paramsArray.is_null(),
                |i| (*paramsArray.add(i)).flags,
                numExtSems,
                stream,
            )
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipWaitExternalSemaphoresAsync(
    extSemArray: *const hipExternalSemaphore_t,
    paramsArray: *const hipExternalSemaphoreWaitParams,
    numExtSems: c_uint,
    stream: hipStream_t,
) -> hipError_t {
    hip_boundary!("hipWaitExternalSemaphoresAsync", {
        // SAFETY: as in hipSignalExternalSemaphoresAsync.
        unsafe {
            external_semaphores_op(
                "hipWaitExternalSemaphoresAsync",
                extSemArray,
                !paramsArray.is_null(),
                |i| (*paramsArray.add(i)).flags,
                numExtSems,
                stream,
            )
        }
    })
}
