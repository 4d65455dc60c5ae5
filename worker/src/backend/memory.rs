//! Device memory: allocation, copies in every direction (1D, 2D, peer) and memset.

use std::fmt;
use std::sync::Arc;

use super::host_region::RegionSlice;
use super::{BackendError, DeviceIndex, DevicePtr, StreamHandle};

/// Bytes handed to an asynchronous host-to-device copy. The backend owns them until the
/// stream reaches the copy, then drops them (returning a pooled buffer to its pool, say).
pub struct HostData(HostBytes);

enum HostBytes {
    Vec(Vec<u8>),
    Shared(Arc<[u8]>),
    Lent(Box<dyn AsRef<[u8]> + Send>),
}

impl HostData {
    /// Wraps any owned byte container, e.g. a transport's pooled receive buffer.
    pub fn from_buffer(buffer: impl AsRef<[u8]> + Send + 'static) -> Self {
        Self(HostBytes::Lent(Box::new(buffer)))
    }

    /// The bytes to copy.
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            HostBytes::Vec(bytes) => bytes,
            HostBytes::Shared(bytes) => bytes,
            HostBytes::Lent(buffer) => (**buffer).as_ref(),
        }
    }

    /// Number of bytes to copy.
    pub fn len(&self) -> usize {
        self.as_bytes().len()
    }

    /// Whether there is nothing to copy.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl From<Vec<u8>> for HostData {
    fn from(bytes: Vec<u8>) -> Self {
        Self(HostBytes::Vec(bytes))
    }
}

impl From<Box<[u8]>> for HostData {
    fn from(bytes: Box<[u8]>) -> Self {
        Self(HostBytes::Vec(bytes.into_vec()))
    }
}

impl From<Arc<[u8]>> for HostData {
    fn from(bytes: Arc<[u8]>) -> Self {
        Self(HostBytes::Shared(bytes))
    }
}

impl fmt::Debug for HostData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostData").field("len", &self.len()).finish()
    }
}

/// Called once a copy into registered host memory is done.
pub type RegisteredDone = Box<dyn FnOnce(Result<(), BackendError>) + Send + 'static>;

/// Receives the bytes of an asynchronous device-to-host copy, on the stream's executor.
pub type DtohDone = Box<dyn FnOnce(Result<Vec<u8>, BackendError>) + Send + 'static>;

/// The element a memset repeats: `hipMemset` (bytes), `hipMemsetD16`, `hipMemsetD32`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MemsetPattern {
    /// `hipMemset`/`hipMemsetD8`.
    U8(u8),
    /// `hipMemsetD16`, stored little-endian.
    U16(u16),
    /// `hipMemsetD32`, stored little-endian.
    U32(u32),
}

impl MemsetPattern {
    /// From a wire-level `(value, element size)`: size 1, 2 or 4, value truncated to it as HIP
    /// truncates `int value` in `hipMemset`.
    pub fn from_raw(value: u32, elem_size: u32) -> Result<Self, BackendError> {
        match elem_size {
            1 => Ok(Self::U8(value as u8)),
            2 => Ok(Self::U16(value as u16)),
            4 => Ok(Self::U32(value)),
            other => Err(BackendError::InvalidValue(format!("memset element size {other} is not 1, 2 or 4"))),
        }
    }

    /// Size of one element in bytes.
    pub fn elem_size(self) -> u64 {
        match self {
            Self::U8(_) => 1,
            Self::U16(_) => 2,
            Self::U32(_) => 4,
        }
    }

    /// Bytes covered by `count` elements, or `None` on overflow.
    pub fn byte_len(self, count: u64) -> Option<u64> {
        count.checked_mul(self.elem_size())
    }

    /// Fills `dst` with the pattern; `dst.len()` is a multiple of [`Self::elem_size`].
    pub fn fill(self, dst: &mut [u8]) {
        match self {
            Self::U8(value) => dst.fill(value),
            Self::U16(value) => fill_repeating(dst, &value.to_le_bytes()),
            Self::U32(value) => fill_repeating(dst, &value.to_le_bytes()),
        }
    }
}

fn fill_repeating<const N: usize>(dst: &mut [u8], element: &[u8; N]) {
    for chunk in dst.chunks_exact_mut(N) {
        chunk.copy_from_slice(element);
    }
}

/// Device memory figures (`hipMemGetInfo`), in bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MemInfo {
    /// Bytes still allocatable, counting every session's allocations.
    pub free: u64,
    /// Device capacity.
    pub total: u64,
}

/// A pitched area of device memory: rows start `pitch` bytes apart from `ptr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pitched {
    /// First byte of the first row.
    pub ptr: DevicePtr,
    /// Bytes between the starts of two rows.
    pub pitch: u64,
}

/// The shape of a 2D copy: `height` rows of `width` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rows {
    /// Bytes per row.
    pub width: u64,
    /// Number of rows.
    pub height: u64,
}

impl Rows {
    /// Bytes from the first row's start to the last row's end at `pitch` (0 for an empty
    /// copy); `None` on overflow.
    pub fn span(self, pitch: u64) -> Option<u64> {
        if self.width == 0 || self.height == 0 {
            return Some(0);
        }
        pitch.checked_mul(self.height - 1)?.checked_add(self.width)
    }

    /// Bytes of the rows packed back to back; `None` on overflow.
    pub fn packed_len(self) -> Option<u64> {
        self.width.checked_mul(self.height)
    }
}

/// The memory family: allocations, copies and memset. Methods that take
/// `stream: Option<StreamHandle>` are ordered after earlier work on that stream; `None` is the
/// null stream of the device(s) the operation touches.
pub trait MemoryBackend {
    /// Free and total memory of `dev`, counting every session's allocations.
    fn mem_get_info(&self, dev: DeviceIndex) -> Result<MemInfo, BackendError>;

    /// Bytes of `dev`'s memory this backend's allocations hold, when it counts them (`None`:
    /// it does not). A GPU session process publishes it to the worker
    /// (`SharedUsage::publish`).
    fn allocated_bytes(&self, dev: DeviceIndex) -> Option<u64> {
        let _ = dev;
        None
    }

    /// Allocates `size` bytes on `dev`. `size == 0` yields [`DevicePtr::NULL`] (HIP returns
    /// `hipSuccess` with a null pointer). A request beyond the free capacity fails with
    /// `OutOfMemory` without being attempted.
    fn malloc(&self, dev: DeviceIndex, size: u64) -> Result<DevicePtr, BackendError>;

    /// Frees the allocation starting at `ptr`; null is a no-op. Work already queued that uses
    /// the allocation still completes safely (backend-specific how; see each backend).
    fn free(&self, ptr: DevicePtr) -> Result<(), BackendError>;

    /// Queues a copy of `data` to `dst`; `data` is dropped once copied.
    fn memcpy_htod(&self, stream: Option<StreamHandle>, dst: DevicePtr, data: HostData) -> Result<(), BackendError>;

    /// Waits for `stream`, then copies `data` to `dst`; returns once the copy is done.
    fn memcpy_htod_sync(&self, stream: Option<StreamHandle>, dst: DevicePtr, data: &[u8]) -> Result<(), BackendError>;

    /// Lets `fill` write the `len` bytes at `dst` (e.g. straight from a socket), in `stream`
    /// order. Backends with host-resident memory hand out the device bytes themselves (the
    /// write is complete on return); GPU backends fill a pinned staging buffer and may
    /// return while the DMA still runs, so the next chunk is received meanwhile: call
    /// [`MemoryBackend::finish_device_writes`] before reporting completion to the client. The
    /// default stages through a buffer and [`MemoryBackend::memcpy_htod_sync`].
    fn with_device_bytes_mut(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        len: u64,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), BackendError> {
        let mut staging = zeroed_buffer(len)?;
        fill(&mut staging);
        self.memcpy_htod_sync(stream, dst, &staging)
    }

    /// Waits until every write started by [`MemoryBackend::with_device_bytes_mut`] on `stream`
    /// (the null stream of `near`'s device when `None`) has reached the device.
    fn finish_device_writes(&self, stream: Option<StreamHandle>, near: DevicePtr) -> Result<(), BackendError> {
        let _ = (stream, near);
        Ok(())
    }

    /// Queues a copy of `len` bytes at `src` to the host; `done` receives them on the
    /// stream's executor when the stream reaches the copy (inline for a synchronous null
    /// stream). An `Err` return means nothing was queued and `done` is dropped uncalled.
    fn memcpy_dtoh(&self, stream: Option<StreamHandle>, src: DevicePtr, len: u64, done: DtohDone) -> Result<(), BackendError>;

    /// Host-to-device copy from registered shared host memory, ordered on `stream`; `src`
    /// is held until the copy is done. Default: as any queued upload (host backend: a memcpy
    /// in stream order).
    fn memcpy_htod_registered(&self, stream: Option<StreamHandle>, dst: DevicePtr, src: RegionSlice) -> Result<(), BackendError> {
        self.memcpy_htod(stream, dst, HostData::from_buffer(src))
    }

    /// Device-to-host copy into registered shared host memory, ordered on `stream`; `done`
    /// runs once the bytes are there (or the copy failed), from whichever thread ends it.
    fn memcpy_dtoh_registered(
        &self,
        stream: Option<StreamHandle>,
        src: DevicePtr,
        dst: RegionSlice,
        done: RegisteredDone,
    ) -> Result<(), BackendError> {
        self.memcpy_dtoh(stream, src, dst.len() as u64, Box::new(move |bytes| done(bytes.map(|b| dst.write(&b)))))
    }

    /// [`MemoryBackend::with_device_bytes_mut`] followed by
    /// [`MemoryBackend::finish_device_writes`]: the bytes are in device memory on return. GPU
    /// backends wait for their staging copy here rather than queue a host function to give the
    /// staging buffer back (which the wait would then have to wait for).
    fn with_device_bytes_mut_finished(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        len: u64,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), BackendError> {
        self.with_device_bytes_mut(stream, dst, len, fill)?;
        self.finish_device_writes(stream, dst)
    }

    /// [`MemoryBackend::memcpy_htod_registered`], complete on return (after `stream`'s
    /// earlier work). The caller holds `src` until then, so nothing is queued to hold it:
    /// a host function per copy would put the driver's callback thread, and its wake-up,
    /// into every synchronous copy. Default: [`MemoryBackend::memcpy_htod_sync`].
    fn memcpy_htod_registered_sync(&self, stream: Option<StreamHandle>, dst: DevicePtr, src: &RegionSlice) -> Result<(), BackendError> {
        self.memcpy_htod_sync(stream, dst, src.as_ref())
    }

    /// [`MemoryBackend::memcpy_dtoh_registered`], complete on return, nothing queued to
    /// hold `dst` (as [`MemoryBackend::memcpy_htod_registered_sync`]). Default: through a
    /// buffer and [`MemoryBackend::memcpy_dtoh_sync`].
    fn memcpy_dtoh_registered_sync(&self, stream: Option<StreamHandle>, src: DevicePtr, dst: &RegionSlice) -> Result<(), BackendError> {
        let mut bytes = zeroed_buffer(dst.len() as u64)?;
        self.memcpy_dtoh_sync(stream, src, &mut bytes)?;
        dst.write(&bytes);
        Ok(())
    }

    /// Waits for `stream`, then copies `out.len()` bytes at `src` into `out`.
    fn memcpy_dtoh_sync(&self, stream: Option<StreamHandle>, src: DevicePtr, out: &mut [u8]) -> Result<(), BackendError>;

    /// Waits for `stream`, then lets `read` see the `len` bytes at `src` (e.g. to write them
    /// to a socket). The default stages through a buffer and [`MemoryBackend::memcpy_dtoh_sync`].
    fn with_device_bytes(&self, stream: Option<StreamHandle>, src: DevicePtr, len: u64, read: &mut dyn FnMut(&[u8])) -> Result<(), BackendError> {
        let mut staging = zeroed_buffer(len)?;
        self.memcpy_dtoh_sync(stream, src, &mut staging)?;
        read(&staging);
        Ok(())
    }

    /// Queues a device-to-device copy with `memmove` semantics (overlap allowed).
    fn memcpy_dtod(&self, stream: Option<StreamHandle>, dst: DevicePtr, src: DevicePtr, len: u64) -> Result<(), BackendError>;

    /// Queues filling `count` elements at `dst` with `pattern`.
    fn memset(&self, stream: Option<StreamHandle>, dst: DevicePtr, pattern: MemsetPattern, count: u64) -> Result<(), BackendError>;

    /// Queues a 2D copy of `data` (packed rows of `width` bytes) to the rows of `dst`.
    fn memcpy_htod_2d(&self, stream: Option<StreamHandle>, dst: Pitched, width: u64, data: HostData) -> Result<(), BackendError>;

    /// Queues a 2D copy of the rows of `src` to the host; `done` receives them packed, as
    /// [`MemoryBackend::memcpy_dtoh`] does.
    fn memcpy_dtoh_2d(&self, stream: Option<StreamHandle>, src: Pitched, rows: Rows, done: DtohDone) -> Result<(), BackendError>;

    /// Queues a device-to-device 2D copy (rows of distinct areas; overlapping areas copy
    /// row by row in order).
    fn memcpy_dtod_2d(&self, stream: Option<StreamHandle>, dst: Pitched, src: Pitched, rows: Rows) -> Result<(), BackendError>;

    /// Queues a copy from `src` on `src_dev` to `dst` on `dst_dev` (`hipMemcpyPeer`).
    fn memcpy_peer(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        dst_dev: DeviceIndex,
        src: DevicePtr,
        src_dev: DeviceIndex,
        len: u64,
    ) -> Result<(), BackendError>;

    /// Allocates `size` bytes on `dev` in `stream` order (`hipMallocAsync`): the memory may
    /// be used by work queued on the stream from now on. `size == 0` yields null.
    fn malloc_async(&self, stream: Option<StreamHandle>, dev: DeviceIndex, size: u64) -> Result<DevicePtr, BackendError>;

    /// Frees the allocation starting at `ptr` once `stream` has finished its earlier work
    /// (`hipFreeAsync`); the address is invalid for new work from the call on.
    fn free_async(&self, stream: Option<StreamHandle>, ptr: DevicePtr) -> Result<(), BackendError>;

    /// Gives kernels on `peer` the access `access` to the memory [`malloc_async`] hands out
    /// on `owner` (`hipMemPoolSetAccess` for a pool of `owner`), and answers the access now
    /// in effect, read back from the driver. Called for pairs `peer != owner` that
    /// [`DeviceBackend::can_access_peer`](super::DeviceBackend::can_access_peer) accepts, with
    /// read or read-write access. One driver pool per device backs every session's pools on
    /// it, so the grant is the worker's: ROCm has no revocation through this call either.
    ///
    /// [`malloc_async`]: MemoryBackend::malloc_async
    fn set_pool_access(&self, owner: DeviceIndex, peer: DeviceIndex, access: PoolAccess) -> Result<PoolAccess, BackendError>;
}

/// `hipMemAccessFlags` a pool grants a peer device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PoolAccess {
    /// `hipMemAccessFlagsProtNone`.
    None,
    /// `hipMemAccessFlagsProtRead`.
    Read,
    /// `hipMemAccessFlagsProtReadWrite`.
    ReadWrite,
}

impl PoolAccess {
    /// The `hipMemAccessFlags` value (CUDA's `CUmemAccess_flags` has the same numbers).
    pub fn flags(self) -> u32 {
        match self {
            PoolAccess::None => 0,
            PoolAccess::Read => 1,
            PoolAccess::ReadWrite => 3,
        }
    }

    /// The access of a `hipMemAccessFlags` value; `None` for a value that names none.
    pub fn from_flags(flags: u32) -> Option<Self> {
        match flags {
            0 => Some(PoolAccess::None),
            1 => Some(PoolAccess::Read),
            3 => Some(PoolAccess::ReadWrite),
            _ => None,
        }
    }
}

/// A zero-filled staging buffer of `len` bytes, refusing sizes the host cannot hold instead of
/// aborting.
pub(crate) fn zeroed_buffer(len: u64) -> Result<Vec<u8>, BackendError> {
    let len = usize::try_from(len).map_err(|_| BackendError::OutOfMemory(format!("{len} bytes exceed the address space")))?;
    let mut buffer = Vec::new();
    buffer.try_reserve_exact(len).map_err(|e| BackendError::OutOfMemory(format!("staging buffer of {len} bytes: {e}")))?;
    buffer.resize(len, 0);
    Ok(buffer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::hip_code;

    #[test]
    fn memset_pattern_from_raw() {
        assert_eq!(MemsetPattern::from_raw(0x1ff, 1), Ok(MemsetPattern::U8(0xff)));
        assert_eq!(MemsetPattern::from_raw(0x1_2345, 2), Ok(MemsetPattern::U16(0x2345)));
        assert_eq!(MemsetPattern::from_raw(7, 4), Ok(MemsetPattern::U32(7)));
        assert_eq!(MemsetPattern::from_raw(7, 3).unwrap_err().hip_code(), hip_code::INVALID_VALUE);
        assert_eq!(MemsetPattern::U32(0).byte_len(u64::MAX), None);
    }

    #[test]
    fn memset_pattern_fills_little_endian() {
        let mut bytes = [0xa5u8; 8];
        MemsetPattern::U16(0x0102).fill(&mut bytes);
        assert_eq!(bytes, [2, 1, 2, 1, 2, 1, 2, 1]);
        MemsetPattern::U32(0x0102_0304).fill(&mut bytes);
        assert_eq!(bytes, [4, 3, 2, 1, 4, 3, 2, 1]);
    }

    #[test]
    fn host_data_sources() {
        assert_eq!(HostData::from(vec![1, 2, 3]).as_bytes(), &[1, 2, 3]);
        assert_eq!(HostData::from(vec![4u8].into_boxed_slice()).as_bytes(), &[4]);
        assert_eq!(HostData::from(Arc::<[u8]>::from(&[5u8, 6][..])).len(), 2);
        assert_eq!(HostData::from_buffer([7u8; 4]).as_bytes(), &[7; 4]);
    }
}
