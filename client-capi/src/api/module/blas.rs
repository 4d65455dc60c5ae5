//! libhipblas's entry point: BLAS-family requests sent over this library's connection.

use super::*;
use proto_core::blas_entry::BlasCallFn;
use proto_core::{Message, Opcode};

/// Encodes `msg`'s control part into `reply` (at most `cap` bytes), its length in `*len`.
///
/// # Safety
/// `reply` must be valid for `cap` bytes, `len` for a write.
unsafe fn give_reply<'a, M: Message<'a>>(msg: &M, reply: *mut u8, cap: usize, len: *mut usize) -> Result<(), CallError> {
    let mut buf = [0u8; 64];
    let mut cx = proto_core::field::EncodeCx::new(&mut buf);
    msg.encode(&mut cx).map_err(|e| CallError::new(HipError::UNKNOWN, format!("BLAS reply: {e:?}")))?;
    let n = cx.w.finish().map_err(|e| CallError::new(HipError::UNKNOWN, format!("BLAS reply: {e:?}")))?;
    if n > cap || reply.is_null() || len.is_null() {
        return Err(CallError::new(HipError::INVALID_VALUE, format!("BLAS reply of {n} bytes does not fit {cap}")));
    }
    // SAFETY: `reply` holds `cap >= n` bytes and `len` is writable (caller contract).
    unsafe {
        std::ptr::copy_nonoverlapping(buf.as_ptr(), reply, n);
        *len = n;
    }
    Ok(())
}

/// **hip-remote internal entry point for libhipblas** (not a HIP API): sends one encoded
/// BLAS-family request over this library's connection, so a process that loads both
/// `libhipblas.so.3` and `libamdhip64.so.7` keeps one connection and session, and BLAS
/// routines are ordered with the HIP work of their streams. Signature and contract:
/// [`proto_core::blas_entry::BlasCallFn`].
#[no_mangle]
pub unsafe extern "C" fn __hipRemoteBlasCall(
    opcode: u16,
    request: *const u8,
    request_len: usize,
    stream: *mut c_void,
    reply: *mut u8,
    reply_cap: usize,
    reply_len: *mut usize,
) -> c_int {
    hip_boundary!("__hipRemoteBlasCall", {
        if request.is_null() && request_len != 0 {
            return Err(CallError::new(HipError::INVALID_VALUE, "request is NULL"));
        }
        let bytes: &[u8] = if request_len == 0 {
            &[]
        } else {
            // SAFETY: `request` holds `request_len` bytes (caller contract).
            unsafe { std::slice::from_raw_parts(request, request_len) }
        };
        let malformed = |e: proto_core::DecodeError| CallError::new(HipError::INVALID_VALUE, format!("malformed BLAS request: {e:?}"));
        match Opcode::from_u16(opcode) {
            Some(Opcode::BlasCreate) => {
                let req = wire::BlasCreate::parse(bytes, &[]).map_err(malformed)?;
                let out = with_conn(|c| c.blas_create(req))?;
                // SAFETY: forwarded caller contract.
                unsafe { give_reply(&out, reply, reply_cap, reply_len) }
            }
            Some(Opcode::BlasDestroy) => {
                let req = wire::BlasHandle::parse(bytes, &[]).map_err(malformed)?;
                with_conn(|c| c.blas_destroy(req))?;
                Ok(())
            }
            Some(op @ (Opcode::BlasLaunch | Opcode::BlasReduce)) => {
                let mut req = wire::BlasOp::parse(bytes, &[]).map_err(malformed)?;
                req.stream = stream_id(crate::handle::from_id(stream as u64)?);
                if op == Opcode::BlasLaunch {
                    return with_conn(|c| c.post::<calls::BlasLaunch>(req));
                }
                let out = with_conn(|c| c.blas_reduce(req))?;
                // SAFETY: forwarded caller contract.
                unsafe { give_reply(&out, reply, reply_cap, reply_len) }
            }
            _ => Err(CallError::new(HipError::INVALID_VALUE, format!("opcode {opcode:#06x} is not a BLAS request"))),
        }
    })
    .0
}

/// The definition above is checked against the one declaration of the private ABI.
const _: BlasCallFn = __hipRemoteBlasCall;
