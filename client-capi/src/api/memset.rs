//! Pitched memsets: `hipMemset2D*`, `hipMemset3D*`, `hipMemsetD2D{8,16,32}*` and their `_spt`
//! forms. Each call is one `MemsetPitched` request however many rows it covers; the worker
//! checks the whole extent against the session's allocations.

use super::copy_streams::{per_thread_stream, synchronously_on};
use crate::abi::*;
use crate::api::memory::{fill_host, fill_target, FillTarget};
use crate::handle::{spt, stream_id};
use crate::remote::with_conn;
use crate::state::sync::call_sync;
use client_core::CallError;
use proto_core::wire::{self, MemsetWidth};
use proto_core::{calls, Caller, Calls};
use std::ffi::{c_int, c_uchar, c_uint, c_ushort, c_void};

/// Where and how much a pitched memset fills: `depth` slices of `height` rows of `width`
/// elements.
struct Extent {
    pitch: usize,
    slice_pitch: usize,
    width: usize,
    height: usize,
    depth: usize,
}

/// One pitched fill; `stream` is `None` for the synchronous API. ROCm's order: an empty
/// extent succeeds before anything is checked, then the pointer.
fn memset_pitched(dst: *mut c_void, value: u32, elem: MemsetWidth, e: Extent, stream: Option<u64>) -> Result<(), CallError> {
    if e.width == 0 || e.height == 0 || e.depth == 0 {
        return Ok(());
    }
    non_null!(dst);
    // The last byte the fill touches, from `dst`.
    let span = (e.depth as u64 - 1)
        .checked_mul(e.slice_pitch as u64)
        .and_then(|s| s.checked_add((e.height as u64 - 1).checked_mul(e.pitch as u64)?))
        .and_then(|s| s.checked_add((e.width as u64).checked_mul(u64::from(elem.raw()))?))
        .ok_or_else(|| CallError::new(HipError::INVALID_VALUE, "the memset's extent overflows"))?;
    if let FillTarget::Host = fill_target(dst as u64, span)? {
        // One row per slice and row; the record showed the whole extent is host memory here.
        for slice in 0..e.depth as u64 {
            let slice_start = dst as u64 + slice * e.slice_pitch as u64;
            // SAFETY: `fill_target` found every row of the extent in host memory of this process.
            unsafe { fill_host(slice_start, value, elem, e.pitch as u64, e.width as u64, e.height as u64, stream) }?;
        }
        return Ok(());
    }
    let req = wire::MemsetPitched {
        dst: dst as u64,
        pitch: e.pitch as u64,
        slice_pitch: e.slice_pitch as u64,
        value,
        elem,
        width: e.width as u64,
        height: e.height as u64,
        depth: e.depth as u64,
        stream: stream.unwrap_or(0),
        sync: stream.is_none(),
    };
    crate::state::allocations::on_pointer(dst as u64, || match stream {
        None => call_sync(|c| c.memset_pitched(req)),
        Some(_) => with_conn(|c| c.post::<calls::MemsetPitched>(req)),
    })
}

fn extent_2d(pitch: usize, width: usize, height: usize) -> Extent {
    Extent { pitch, slice_pitch: pitch.saturating_mul(height), width, height, depth: 1 }
}

/// `hipMemset3D`'s extent: `extent.width` bytes per row, slices `pitch * ysize` bytes apart.
fn extent_3d(p: &hipPitchedPtr, extent: &hipExtent) -> Extent {
    Extent { pitch: p.pitch, slice_pitch: p.pitch.saturating_mul(p.ysize), width: extent.width, height: extent.height, depth: extent.depth }
}

/// The synchronous `_spt` form: the fill on the thread's default stream, waited for.
fn on_per_thread_stream(f: impl FnOnce(u64) -> Result<(), CallError>) -> Result<(), CallError> {
    synchronously_on(per_thread_stream(), f)
}

#[no_mangle]
pub unsafe extern "C" fn hipMemset2D(dst: *mut c_void, pitch: usize, value: c_int, width: usize, height: usize) -> hipError_t {
    hip_boundary!("hipMemset2D", { memset_pitched(dst, value as u32, MemsetWidth::Byte, extent_2d(pitch, width, height), None) })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemset2DAsync(
    dst: *mut c_void,
    pitch: usize,
    value: c_int,
    width: usize,
    height: usize,
    stream: hipStream_t,
) -> hipError_t {
    hip_boundary!("hipMemset2DAsync", {
        memset_pitched(dst, value as u32, MemsetWidth::Byte, extent_2d(pitch, width, height), Some(stream_id(stream)))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemset2D_spt(dst: *mut c_void, pitch: usize, value: c_int, width: usize, height: usize) -> hipError_t {
    hip_boundary!("hipMemset2D_spt", {
        on_per_thread_stream(|s| memset_pitched(dst, value as u32, MemsetWidth::Byte, extent_2d(pitch, width, height), Some(s)))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemset2DAsync_spt(
    dst: *mut c_void,
    pitch: usize,
    value: c_int,
    width: usize,
    height: usize,
    stream: hipStream_t,
) -> hipError_t {
    hip_boundary!("hipMemset2DAsync_spt", {
        memset_pitched(dst, value as u32, MemsetWidth::Byte, extent_2d(pitch, width, height), Some(stream_id(spt(stream))))
    })
}

#[no_mangle]
pub extern "C" fn hipMemset3D(pitchedDevPtr: hipPitchedPtr, value: c_int, extent: hipExtent) -> hipError_t {
    hip_boundary!("hipMemset3D", { memset_pitched(pitchedDevPtr.ptr, value as u32, MemsetWidth::Byte, extent_3d(&pitchedDevPtr, &extent), None) })
}

#[no_mangle]
pub extern "C" fn hipMemset3DAsync(pitchedDevPtr: hipPitchedPtr, value: c_int, extent: hipExtent, stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipMemset3DAsync", {
        memset_pitched(pitchedDevPtr.ptr, value as u32, MemsetWidth::Byte, extent_3d(&pitchedDevPtr, &extent), Some(stream_id(stream)))
    })
}

#[no_mangle]
pub extern "C" fn hipMemset3D_spt(pitchedDevPtr: hipPitchedPtr, value: c_int, extent: hipExtent) -> hipError_t {
    hip_boundary!("hipMemset3D_spt", {
        on_per_thread_stream(|s| memset_pitched(pitchedDevPtr.ptr, value as u32, MemsetWidth::Byte, extent_3d(&pitchedDevPtr, &extent), Some(s)))
    })
}

#[no_mangle]
pub extern "C" fn hipMemset3DAsync_spt(pitchedDevPtr: hipPitchedPtr, value: c_int, extent: hipExtent, stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipMemset3DAsync_spt", {
        memset_pitched(pitchedDevPtr.ptr, value as u32, MemsetWidth::Byte, extent_3d(&pitchedDevPtr, &extent), Some(stream_id(spt(stream))))
    })
}

#[no_mangle]
pub extern "C" fn hipMemsetD2D8(dst: hipDeviceptr_t, dstPitch: usize, value: c_uchar, width: usize, height: usize) -> hipError_t {
    hip_boundary!("hipMemsetD2D8", { memset_pitched(dst, value.into(), MemsetWidth::Byte, extent_2d(dstPitch, width, height), None) })
}

#[no_mangle]
pub extern "C" fn hipMemsetD2D8Async(
    dst: hipDeviceptr_t,
    dstPitch: usize,
    value: c_uchar,
    width: usize,
    height: usize,
    stream: hipStream_t,
) -> hipError_t {
    hip_boundary!("hipMemsetD2D8Async", {
        memset_pitched(dst, value.into(), MemsetWidth::Byte, extent_2d(dstPitch, width, height), Some(stream_id(stream)))
    })
}

#[no_mangle]
pub extern "C" fn hipMemsetD2D16(dst: hipDeviceptr_t, dstPitch: usize, value: c_ushort, width: usize, height: usize) -> hipError_t {
    hip_boundary!("hipMemsetD2D16", { memset_pitched(dst, value.into(), MemsetWidth::Half, extent_2d(dstPitch, width, height), None) })
}

#[no_mangle]
pub extern "C" fn hipMemsetD2D16Async(
    dst: hipDeviceptr_t,
    dstPitch: usize,
    value: c_ushort,
    width: usize,
    height: usize,
    stream: hipStream_t,
) -> hipError_t {
    hip_boundary!("hipMemsetD2D16Async", {
        memset_pitched(dst, value.into(), MemsetWidth::Half, extent_2d(dstPitch, width, height), Some(stream_id(stream)))
    })
}

#[no_mangle]
pub extern "C" fn hipMemsetD2D32(dst: hipDeviceptr_t, dstPitch: usize, value: c_uint, width: usize, height: usize) -> hipError_t {
    hip_boundary!("hipMemsetD2D32", { memset_pitched(dst, value, MemsetWidth::Word, extent_2d(dstPitch, width, height), None) })
}

#[no_mangle]
pub extern "C" fn hipMemsetD2D32Async(
    dst: hipDeviceptr_t,
    dstPitch: usize,
    value: c_uint,
    width: usize,
    height: usize,
    stream: hipStream_t,
) -> hipError_t {
    hip_boundary!("hipMemsetD2D32Async", {
        memset_pitched(dst, value, MemsetWidth::Word, extent_2d(dstPitch, width, height), Some(stream_id(stream)))
    })
}
