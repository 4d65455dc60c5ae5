//! Copies and memsets that name their stream in other ways: the per-thread default stream
//! (`_spt` entry points), `hipMemcpyWithStream` (synchronous, on a given stream) and batches
//! (`hipMemcpyBatchAsync`). Each is the ordinary copy on the stream it means.

use super::memory::{copy_2d, memset};
use super::module::register::{from_symbol, to_symbol};
use crate::abi::*;
use crate::handle::{spt, stream_id};
use crate::state::copy::copy;
use crate::state::sync::call_sync;
use client_core::CallError;
use proto_core::wire::{self, MemsetWidth};
use proto_core::Calls;
use std::ffi::{c_int, c_void};

/// Runs `f` on the worker stream `stream` and waits for it: the synchronous forms that name a
/// stream (`hipMemcpyWithStream`, and every synchronous `_spt` call on the thread's default
/// stream).
pub(crate) fn synchronously_on(stream: u64, f: impl FnOnce(u64) -> Result<(), CallError>) -> Result<(), CallError> {
    f(stream)?;
    call_sync(|c| c.stream_synchronize(wire::StreamRef { stream }))
}

/// The worker stream a synchronous `_spt` call runs on.
pub(crate) fn per_thread_stream() -> u64 {
    stream_id(spt(std::ptr::null_mut()))
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyWithStream(
    dst: *mut c_void,
    src: *const c_void,
    sizeBytes: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpyWithStream", { synchronously_on(stream_id(stream), |s| unsafe { copy(dst, src, sizeBytes, kind, Some(s)) }) })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy_spt(dst: *mut c_void, src: *const c_void, sizeBytes: usize, kind: hipMemcpyKind) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpy_spt", { synchronously_on(per_thread_stream(), |s| unsafe { copy(dst, src, sizeBytes, kind, Some(s)) }) })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyAsync_spt(
    dst: *mut c_void,
    src: *const c_void,
    sizeBytes: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpyAsync_spt", { unsafe { copy(dst, src, sizeBytes, kind, Some(stream_id(spt(stream)))) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemset_spt(dst: *mut c_void, value: c_int, sizeBytes: usize) -> hipError_t {
    hip_boundary!("hipMemset_spt", { synchronously_on(per_thread_stream(), |s| memset(dst, value as u32, MemsetWidth::Byte, sizeBytes, Some(s))) })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemsetAsync_spt(dst: *mut c_void, value: c_int, sizeBytes: usize, stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipMemsetAsync_spt", { memset(dst, value as u32, MemsetWidth::Byte, sizeBytes, Some(stream_id(spt(stream)))) })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2D_spt(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    hip_boundary!("hipMemcpy2D_spt", {
        // SAFETY: forwarded caller contract.
        synchronously_on(per_thread_stream(), |s| unsafe { copy_2d(dst, dpitch, src, spitch, width, height, kind, Some(s)) })
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)] // hipMemcpy2DAsync_spt's own parameters
pub unsafe extern "C" fn hipMemcpy2DAsync_spt(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpy2DAsync_spt", { unsafe { copy_2d(dst, dpitch, src, spitch, width, height, kind, Some(stream_id(spt(stream)))) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyToSymbol_spt(
    symbol: *const c_void,
    src: *const c_void,
    sizeBytes: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    hip_boundary!("hipMemcpyToSymbol_spt", {
        // SAFETY: forwarded caller contract.
        unsafe { to_symbol(symbol, src, sizeBytes, offset, kind, Some(hipStreamPerThread)) }?;
        call_sync(|c| c.stream_synchronize(wire::StreamRef { stream: per_thread_stream() }))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyFromSymbol_spt(
    dst: *mut c_void,
    symbol: *const c_void,
    sizeBytes: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    hip_boundary!("hipMemcpyFromSymbol_spt", {
        // SAFETY: forwarded caller contract.
        unsafe { from_symbol(dst, symbol, sizeBytes, offset, kind, Some(hipStreamPerThread)) }?;
        call_sync(|c| c.stream_synchronize(wire::StreamRef { stream: per_thread_stream() }))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyToSymbolAsync_spt(
    symbol: *const c_void,
    src: *const c_void,
    sizeBytes: usize,
    offset: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpyToSymbolAsync_spt", { unsafe { to_symbol(symbol, src, sizeBytes, offset, kind, Some(spt(stream))) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyFromSymbolAsync_spt(
    dst: *mut c_void,
    symbol: *const c_void,
    sizeBytes: usize,
    offset: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpyFromSymbolAsync_spt", { unsafe { from_symbol(dst, symbol, sizeBytes, offset, kind, Some(spt(stream))) } })
}

/// `*failIdx` when the failure is not one copy's (CUDA's and ROCm's `SIZE_MAX`).
const NO_FAILED_COPY: usize = usize::MAX;

/// Checks a batch's attribute list: at least one entry, no more than copies, the first
/// applying from copy 0 and each later one from a strictly later copy inside the batch; each
/// naming a defined source access order and only defined flags.
fn check_batch_attributes(attrs: &[hipMemcpyAttributes], starts: &[usize], count: usize) -> Result<(), CallError> {
    let invalid = |why: String| CallError::new(HipError::INVALID_VALUE, why);
    if attrs.is_empty() || attrs.len() > count {
        return Err(invalid(format!("{} attribute entries for {count} copies", attrs.len())));
    }
    if starts[0] != 0 {
        return Err(invalid(format!("the first attribute entry applies from copy {}, not 0", starts[0])));
    }
    if let Some(w) = starts.windows(2).find(|w| w[1] <= w[0] || w[1] >= count) {
        return Err(invalid(format!("attribute indices {} then {} are not increasing inside the batch of {count}", w[0], w[1])));
    }
    for a in attrs {
        if !(hipMemcpySrcAccessOrderStream..=hipMemcpySrcAccessOrderAny).contains(&a.srcAccessOrder) {
            return Err(invalid(format!("source access order {} is not defined", a.srcAccessOrder)));
        }
        if a.flags & !hipMemcpyFlagPreferOverlapWithCompute != 0 {
            return Err(invalid(format!("memcpy attribute flags {:#x} are not defined", a.flags)));
        }
    }
    Ok(())
}

/// `hipMemcpyBatchAsync`: `count` copies queued on `stream` in order (the batch's own order is
/// unspecified, in-order is one valid order). Directions come from the pointers, as
/// `hipMemcpyDefault`. On a copy's failure `*failIdx` names it; on an argument error it is
/// `SIZE_MAX`.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // hipMemcpyBatchAsync's own parameters
pub unsafe extern "C" fn hipMemcpyBatchAsync(
    dsts: *mut *mut c_void,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    count: usize,
    attrs: *mut hipMemcpyAttributes,
    attrsIdxs: *mut usize,
    numAttrs: usize,
    failIdx: *mut usize,
    stream: hipStream_t,
) -> hipError_t {
    hip_boundary!("hipMemcpyBatchAsync", {
        let fail_at = |i: usize| {
            if !failIdx.is_null() {
                // SAFETY: checked non-null; the caller passes a writable size_t.
                unsafe { *failIdx = i };
            }
        };
        fail_at(NO_FAILED_COPY);
        non_null!(dsts);
        non_null!(srcs);
        non_null!(sizes);
        non_null!(attrs);
        non_null!(attrsIdxs);
        if count == 0 {
            return Err(CallError::new(HipError::INVALID_VALUE, "a batch of 0 copies"));
        }
        // SAFETY: checked non-null; the caller provides `count` and `numAttrs` elements.
        let (dsts, srcs, sizes, attrs, starts) = unsafe {
            (
                std::slice::from_raw_parts(dsts, count),
                std::slice::from_raw_parts(srcs, count),
                std::slice::from_raw_parts(sizes, count),
                std::slice::from_raw_parts(attrs, numAttrs),
                std::slice::from_raw_parts(attrsIdxs, numAttrs),
            )
        };
        check_batch_attributes(attrs, starts, count)?;
        let stream = stream_id(stream);
        for i in 0..count {
            // SAFETY: each copy's pointers are valid for its size (caller contract).
            if let Err(e) = unsafe { copy(dsts[i], srcs[i], sizes[i], hipMemcpyDefault, Some(stream)) } {
                fail_at(i);
                return Err(e);
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(order: hipMemcpySrcAccessOrder, flags: u32) -> hipMemcpyAttributes {
        // SAFETY: a plain C struct of integers: all-zero is valid.
        let mut a: hipMemcpyAttributes = unsafe { std::mem::zeroed() };
        a.srcAccessOrder = order;
        a.flags = flags;
        a
    }

    #[test]
    fn batch_attributes_are_checked_like_rocm() {
        let ok = attr(hipMemcpySrcAccessOrderStream, 0);
        assert!(check_batch_attributes(&[ok], &[0], 3).is_ok());
        assert!(check_batch_attributes(&[ok, ok], &[0, 2], 3).is_ok());
        assert!(check_batch_attributes(&[], &[], 3).is_err());
        assert!(check_batch_attributes(&[ok], &[1], 3).is_err());
        assert!(check_batch_attributes(&[ok, ok], &[0, 0], 3).is_err());
        assert!(check_batch_attributes(&[ok, ok], &[0, 3], 3).is_err());
        assert!(check_batch_attributes(&[ok, ok, ok], &[0, 1, 2], 2).is_err());
        assert!(check_batch_attributes(&[attr(hipMemcpySrcAccessOrderInvalid, 0)], &[0], 1).is_err());
        assert!(check_batch_attributes(&[attr(hipMemcpySrcAccessOrderAny, 2)], &[0], 1).is_err());
    }
}
