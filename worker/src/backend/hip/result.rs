//! The hip backend's result layer: one safe function per HIP runtime entry point the backend
//! calls (over the tables of `api.rs`), each answering `Result` with the runtime's own error
//! ([`HipCallError`]: the entry point and its `hipError_t`), as cudarc's `driver::result` does
//! for CUDA. An optional entry point the loaded runtime lacks answers
//! `hipErrorNotSupported`, naming it. Families above this file call no raw FFI.
//!
//! Contract of every function: handles (streams, pools) are live ones the backend created or
//! obtained and has not released — its tables guarantee it, and a stale handle is a bug there,
//! not a value the runtime is asked to judge; device addresses are any values (the runtime
//! checks them and answers an error); host memory is passed as Rust references, so what the
//! runtime writes is memory of the right type and size.

use super::api::{HipApi, HipError, Stream};
use super::vmm::{MemAccessDesc, MemLocation, LOCATION_TYPE_DEVICE};
use crate::backend::{hip_code, BackendError};
use std::ffi::{c_int, c_void};

/// A failed runtime call: which entry point, and the `hipError_t` it answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HipCallError {
    /// The entry point that failed.
    pub call: &'static str,
    /// The runtime's `hipError_t`.
    pub code: HipError,
}

impl From<HipCallError> for BackendError {
    fn from(e: HipCallError) -> Self {
        super::error::map(e.call, e.code)
    }
}

impl std::fmt::Display for HipCallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.call, proto_core::hip_error::name(self.code).to_string_lossy())
    }
}

/// `hipError_t` → `Result`, naming the entry point.
fn check(call: &'static str, code: HipError) -> Result<(), HipCallError> {
    if code == 0 {
        Ok(())
    } else {
        Err(HipCallError { call, code })
    }
}

/// An optional entry point the runtime lacks.
fn missing(call: &'static str) -> HipCallError {
    HipCallError { call, code: hip_code::NOT_SUPPORTED }
}

/// `hipMemPool_t`.
pub type MemPool = *mut c_void;

impl HipApi {
    // ---- peers ----------------------------------------------------------------------------

    /// `hipDeviceCanAccessPeer`.
    pub fn device_can_access_peer(&self, dev: c_int, peer: c_int) -> Result<bool, HipCallError> {
        let mut can = 0;
        // SAFETY: a valid out-pointer; the ordinals are checked by the runtime.
        check("hipDeviceCanAccessPeer", unsafe { (self.hipDeviceCanAccessPeer)(&mut can, dev, peer) })?;
        Ok(can != 0)
    }

    /// `hipDeviceEnablePeerAccess` from the current device (flags 0).
    pub fn device_enable_peer_access(&self, peer: c_int) -> Result<(), HipCallError> {
        // SAFETY: plain values; the runtime checks the ordinal.
        check("hipDeviceEnablePeerAccess", unsafe { (self.hipDeviceEnablePeerAccess)(peer, 0) })
    }

    // ---- stream-ordered pools ---------------------------------------------------------------

    /// `hipDeviceGetMemPool`: the pool `hipMallocAsync` allocates from on `dev`.
    pub fn device_mem_pool(&self, dev: c_int) -> Result<MemPool, HipCallError> {
        let f = self.hipDeviceGetMemPool.ok_or(missing("hipDeviceGetMemPool"))?;
        let mut pool = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the runtime checks the ordinal.
        check("hipDeviceGetMemPool", unsafe { f(&mut pool, dev) })?;
        Ok(pool)
    }

    /// `hipMemPoolSetAccess` for one device.
    pub fn mem_pool_set_access(&self, pool: MemPool, dev: c_int, flags: u32) -> Result<(), HipCallError> {
        let f = self.hipMemPoolSetAccess.ok_or(missing("hipMemPoolSetAccess"))?;
        let desc = MemAccessDesc { location: MemLocation { kind: LOCATION_TYPE_DEVICE, id: dev }, flags };
        // SAFETY: one descriptor, count 1; `pool` is live (module contract).
        check("hipMemPoolSetAccess", unsafe { f(pool, &desc, 1) })
    }

    /// `hipMemPoolGetAccess` of one device.
    pub fn mem_pool_access(&self, pool: MemPool, dev: c_int) -> Result<u32, HipCallError> {
        let f = self.hipMemPoolGetAccess.ok_or(missing("hipMemPoolGetAccess"))?;
        let mut flags = 0;
        let mut location = MemLocation { kind: LOCATION_TYPE_DEVICE, id: dev };
        // SAFETY: valid out-pointer and location; `pool` is live (module contract).
        check("hipMemPoolGetAccess", unsafe { f(&mut flags, pool, &mut location) })?;
        Ok(flags)
    }

    // ---- stream memory operations -----------------------------------------------------------

    /// `hipStreamWaitValue32`.
    pub fn stream_wait_value32(&self, stream: Stream, addr: u64, value: u32, flags: u32, mask: u32) -> Result<(), HipCallError> {
        let f = self.hipStreamWaitValue32.ok_or(missing("hipStreamWaitValue32"))?;
        // SAFETY: `stream` is live (module contract); the runtime checks `addr`.
        check("hipStreamWaitValue32", unsafe { f(stream, addr as *mut c_void, value, flags, mask) })
    }

    /// `hipStreamWaitValue64`.
    pub fn stream_wait_value64(&self, stream: Stream, addr: u64, value: u64, flags: u32, mask: u64) -> Result<(), HipCallError> {
        let f = self.hipStreamWaitValue64.ok_or(missing("hipStreamWaitValue64"))?;
        // SAFETY: as in `stream_wait_value32`.
        check("hipStreamWaitValue64", unsafe { f(stream, addr as *mut c_void, value, flags, mask) })
    }

    /// `hipStreamWriteValue32` (flags 0: AMD's runtime ignores them).
    pub fn stream_write_value32(&self, stream: Stream, addr: u64, value: u32) -> Result<(), HipCallError> {
        let f = self.hipStreamWriteValue32.ok_or(missing("hipStreamWriteValue32"))?;
        // SAFETY: as in `stream_wait_value32`.
        check("hipStreamWriteValue32", unsafe { f(stream, addr as *mut c_void, value, 0) })
    }

    /// `hipStreamWriteValue64` (flags 0).
    pub fn stream_write_value64(&self, stream: Stream, addr: u64, value: u64) -> Result<(), HipCallError> {
        let f = self.hipStreamWriteValue64.ok_or(missing("hipStreamWriteValue64"))?;
        // SAFETY: as in `stream_wait_value32`.
        check("hipStreamWriteValue64", unsafe { f(stream, addr as *mut c_void, value, 0) })
    }

    // ---- memory -------------------------------------------------------------------------------

    /// `hipMallocManaged`, attached globally; freed with [`HipApi::free`].
    pub fn malloc_managed(&self, bytes: usize) -> Result<*mut c_void, HipCallError> {
        /// `hipMemAttachGlobal`.
        const ATTACH_GLOBAL: u32 = 0x1;
        let f = self.hipMallocManaged.ok_or(missing("hipMallocManaged"))?;
        let mut ptr = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        check("hipMallocManaged", unsafe { f(&mut ptr, bytes, ATTACH_GLOBAL) })?;
        Ok(ptr)
    }

    /// `hipFree`.
    pub fn free(&self, ptr: *mut c_void) -> Result<(), HipCallError> {
        // SAFETY: the runtime refuses addresses that are not allocation bases; callers free
        // each allocation once, after taking it out of the backend's tables.
        check("hipFree", unsafe { (self.hipFree)(ptr) })
    }

    /// `hipMemsetAsync`.
    pub fn memset_async(&self, ptr: *mut c_void, value: c_int, len: usize, stream: Stream) -> Result<(), HipCallError> {
        // SAFETY: `stream` is live (module contract); the runtime checks the device range.
        check("hipMemsetAsync", unsafe { (self.hipMemsetAsync)(ptr, value, len, stream) })
    }

    // ---- streams ------------------------------------------------------------------------------

    /// `hipStreamCreateWithPriority`.
    pub fn stream_create_with_priority(&self, flags: u32, priority: c_int) -> Result<Stream, HipCallError> {
        let mut raw: Stream = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        check("hipStreamCreateWithPriority", unsafe { (self.hipStreamCreateWithPriority)(&mut raw, flags, priority) })?;
        Ok(raw)
    }

    /// `hipStreamSynchronize`.
    pub fn stream_synchronize(&self, stream: Stream) -> Result<(), HipCallError> {
        // SAFETY: `stream` is live (module contract).
        check("hipStreamSynchronize", unsafe { (self.hipStreamSynchronize)(stream) })
    }
}
