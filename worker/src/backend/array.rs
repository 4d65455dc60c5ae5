//! Arrays (`hipArray`, mipmapped arrays) and the general 3D copy every array copy and every
//! 3D copy is.
//!
//! The session validates each place and box against the array's descriptor or its
//! allocation table first; the backend moves the bytes. The provided implementation keeps an
//! array as one linear device allocation (rows of `width * element size` bytes, slices of
//! `rows` rows) and copies slice by slice with the memory family's 2D copies, in stream
//! order; a GPU backend may override it with its runtime's own arrays.

use std::sync::{Arc, Mutex};

use super::{BackendError, DeviceIndex, DevicePtr, DtohDone, HostData, MemoryBackend, Pitched, Rows, StreamHandle, TextureSpec};

/// Bytes of one channel of each `hipArray_Format`, `None` for a value that is no format.
pub fn format_channel_size(format: u32) -> Option<u64> {
    match format {
        // UNSIGNED_INT8, SIGNED_INT8
        0x01 | 0x08 => Some(1),
        // UNSIGNED_INT16, SIGNED_INT16, HALF
        0x02 | 0x09 | 0x10 => Some(2),
        // UNSIGNED_INT32, SIGNED_INT32, FLOAT
        0x03 | 0x0a | 0x20 => Some(4),
        _ => None,
    }
}

/// What an array is: element format and dimensions (`height`/`depth` 0 for 1D/2D arrays).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrayDesc {
    /// `hipArray_Format`.
    pub format: u32,
    /// Channels per element (1, 2 or 4).
    pub channels: u32,
    /// Width in elements.
    pub width: u64,
    /// Height in rows (0 for 1D).
    pub height: u64,
    /// Depth in slices (0 for 1D and 2D).
    pub depth: u64,
    /// `hipArray*` flags.
    pub flags: u32,
}

impl ArrayDesc {
    /// Bytes per element.
    pub fn element_size(&self) -> u64 {
        format_channel_size(self.format).unwrap_or(0) * u64::from(self.channels)
    }

    /// Bytes per row.
    pub fn row_bytes(&self) -> u64 {
        self.width.saturating_mul(self.element_size())
    }

    /// Rows per slice (at least 1).
    pub fn rows(&self) -> u64 {
        self.height.max(1)
    }

    /// Slices (at least 1).
    pub fn slices(&self) -> u64 {
        self.depth.max(1)
    }

    /// Bytes of the whole array; `None` on overflow.
    pub fn byte_len(&self) -> Option<u64> {
        self.row_bytes().checked_mul(self.rows())?.checked_mul(self.slices())
    }

    /// The descriptor of mipmap level `level`: each non-zero dimension halved per level,
    /// never below 1.
    pub fn level(&self, level: u32) -> Self {
        let shrink = |d: u64| if d == 0 { 0 } else { (d >> level.min(63)).max(1) };
        Self { width: shrink(self.width), height: shrink(self.height), depth: shrink(self.depth), ..*self }
    }
}

/// A backend array (opaque; for the provided implementation, its allocation's address).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArrayHandle(pub u64);

/// A backend mipmapped array (opaque; 0 for the provided implementation, whose levels are
/// separate arrays).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MipmapHandle(pub u64);

/// The box a 3D copy moves: `depth` slices of `height` rows of `width` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    /// Bytes per row.
    pub width: u64,
    /// Rows per slice.
    pub height: u64,
    /// Slices.
    pub depth: u64,
}

impl Extent {
    /// Bytes of the box packed; `None` on overflow.
    pub fn packed_len(&self) -> Option<u64> {
        self.width.checked_mul(self.height)?.checked_mul(self.depth)
    }
}

/// One side of a 3D copy (validated by the session: the box fits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// An array, at byte offset `x` of row `y` of slice `z`.
    Array { array: ArrayHandle, desc: ArrayDesc, x: u64, y: u64, z: u64 },
    /// Pitched device memory: rows `pitch` bytes apart, slices `pitch * height` bytes apart.
    Device { ptr: DevicePtr, pitch: u64, height: u64, x: u64, y: u64, z: u64 },
}

impl Place {
    /// As linear memory: the first byte of the box, the row pitch and the slice pitch (the
    /// provided implementation's layout of arrays).
    pub fn linear(&self) -> (DevicePtr, u64, u64) {
        match *self {
            Self::Array { array, desc, x, y, z } => {
                let pitch = desc.row_bytes();
                let slice = pitch * desc.rows();
                (DevicePtr(array.0 + z * slice + y * pitch + x), pitch, slice)
            }
            Self::Device { ptr, pitch, height, x, y, z } => {
                let slice = pitch * height;
                (DevicePtr(ptr.0 + z * slice + y * pitch + x), pitch, slice)
            }
        }
    }
}

/// The array family. Every method is provided on top of [`MemoryBackend`] ([`linear`]
/// arrays); `dev` is the device a copy runs on when `stream` is the null stream.
pub trait ArrayBackend: MemoryBackend {
    /// Allocates an array described by `desc` on `dev` (dimensions already checked).
    fn array_create(&self, dev: DeviceIndex, desc: &ArrayDesc) -> Result<ArrayHandle, BackendError> {
        linear::array_create(self, dev, desc)
    }

    /// Frees an array from [`ArrayBackend::array_create`].
    fn array_destroy(&self, array: ArrayHandle) -> Result<(), BackendError> {
        self.free(DevicePtr(array.0))
    }

    /// Allocates a mipmapped array of `levels` levels (level `l` is `desc.level(l)`) and
    /// answers it with the arrays of its levels, which belong to it.
    fn mipmap_create(&self, dev: DeviceIndex, desc: &ArrayDesc, levels: u32) -> Result<(MipmapHandle, Vec<ArrayHandle>), BackendError> {
        linear::mipmap_create(self, dev, desc, levels)
    }

    /// Frees a mipmapped array from [`ArrayBackend::mipmap_create`] and its level arrays.
    fn mipmap_destroy(&self, mipmap: MipmapHandle, levels: &[ArrayHandle]) -> Result<(), BackendError> {
        let _ = mipmap;
        linear::mipmap_destroy(self, levels)
    }

    /// Creates a texture object on `dev` (resource and descriptors checked by the session);
    /// answers the value kernels receive, or `None` where the backend has no texture objects
    /// of its own (the host backend: its kernels cannot sample) and the session's handle
    /// stands for it.
    fn texture_create(&self, dev: DeviceIndex, spec: &TextureSpec) -> Result<Option<u64>, BackendError> {
        let _ = (dev, spec);
        Ok(None)
    }

    /// Destroys a texture object from [`ArrayBackend::texture_create`].
    fn texture_destroy(&self, texture: u64) -> Result<(), BackendError> {
        let _ = texture;
        Ok(())
    }

    /// Queues a copy of `data` (the box packed) into `dst`.
    fn copy_3d_from_host(
        &self,
        stream: Option<StreamHandle>,
        dev: DeviceIndex,
        dst: &Place,
        extent: Extent,
        data: HostData,
    ) -> Result<(), BackendError> {
        let _ = dev;
        linear::copy_3d_from_host(self, stream, dst, extent, data)
    }

    /// Queues a copy of the box at `src` to the host; `done` receives it packed.
    fn copy_3d_to_host(
        &self,
        stream: Option<StreamHandle>,
        dev: DeviceIndex,
        src: &Place,
        extent: Extent,
        done: DtohDone,
    ) -> Result<(), BackendError> {
        let _ = dev;
        linear::copy_3d_to_host(self, stream, src, extent, done)
    }

    /// Queues a copy of the box from `src` to `dst` on the device.
    fn copy_3d(&self, stream: Option<StreamHandle>, dev: DeviceIndex, dst: &Place, src: &Place, extent: Extent) -> Result<(), BackendError> {
        let _ = dev;
        linear::copy_3d(self, stream, dst, src, extent)
    }
}

/// Arrays as linear device allocations, copied slice by slice with the memory family's 2D
/// copies in stream order.
pub mod linear {
    use super::*;

    /// One allocation of the array's bytes.
    pub fn array_create<B: MemoryBackend + ?Sized>(backend: &B, dev: DeviceIndex, desc: &ArrayDesc) -> Result<ArrayHandle, BackendError> {
        let len = desc.byte_len().ok_or_else(|| BackendError::InvalidValue("array size overflows".into()))?;
        Ok(ArrayHandle(backend.malloc(dev, len)?.0))
    }

    /// A mipmapped array as one array per level (handle 0).
    pub fn mipmap_create<B: ArrayBackend + ?Sized>(
        backend: &B,
        dev: DeviceIndex,
        desc: &ArrayDesc,
        levels: u32,
    ) -> Result<(MipmapHandle, Vec<ArrayHandle>), BackendError> {
        let mut made = Vec::with_capacity(levels as usize);
        for level in 0..levels {
            match backend.array_create(dev, &desc.level(level)) {
                Ok(array) => made.push(array),
                Err(e) => {
                    for array in made {
                        let _ = backend.array_destroy(array);
                    }
                    return Err(e);
                }
            }
        }
        Ok((MipmapHandle(0), made))
    }

    /// Frees the level arrays of [`mipmap_create`].
    pub fn mipmap_destroy<B: ArrayBackend + ?Sized>(backend: &B, levels: &[ArrayHandle]) -> Result<(), BackendError> {
        levels.iter().try_for_each(|&array| backend.array_destroy(array))
    }

    /// Host to array/device, one 2D copy per slice.
    pub fn copy_3d_from_host<B: MemoryBackend + ?Sized>(
        backend: &B,
        stream: Option<StreamHandle>,
        dst: &Place,
        extent: Extent,
        data: HostData,
    ) -> Result<(), BackendError> {
        let (ptr, pitch, slice) = dst.linear();
        if extent.depth == 1 {
            return backend.memcpy_htod_2d(stream, Pitched { ptr, pitch }, extent.width, data);
        }
        let slice_len = (extent.width * extent.height) as usize;
        for (k, bytes) in data.as_bytes().chunks(slice_len).enumerate() {
            let at = Pitched { ptr: DevicePtr(ptr.0 + k as u64 * slice), pitch };
            backend.memcpy_htod_2d(stream, at, extent.width, bytes.to_vec().into())?;
        }
        Ok(())
    }

    /// Array/device to host, one 2D copy per slice, answered once all arrived.
    pub fn copy_3d_to_host<B: MemoryBackend + ?Sized>(
        backend: &B,
        stream: Option<StreamHandle>,
        src: &Place,
        extent: Extent,
        done: DtohDone,
    ) -> Result<(), BackendError> {
        let (ptr, pitch, slice) = src.linear();
        let rows = Rows { width: extent.width, height: extent.height };
        if extent.depth == 1 {
            return backend.memcpy_dtoh_2d(stream, Pitched { ptr, pitch }, rows, done);
        }
        let slice_len = (extent.width * extent.height) as usize;
        let gathered = Arc::new(Mutex::new(SliceGather { bytes: Vec::with_capacity(slice_len * extent.depth as usize), done: Some(done) }));
        for k in 0..extent.depth {
            let gathered = Arc::clone(&gathered);
            let last = k + 1 == extent.depth;
            let part: DtohDone = Box::new(move |result| {
                let mut g = gathered.lock().unwrap_or_else(|e| e.into_inner());
                match result {
                    Ok(bytes) => {
                        g.bytes.extend_from_slice(&bytes);
                        if last {
                            let bytes = std::mem::take(&mut g.bytes);
                            if let Some(done) = g.done.take() {
                                done(Ok(bytes));
                            }
                        }
                    }
                    Err(e) => {
                        if let Some(done) = g.done.take() {
                            done(Err(e));
                        }
                    }
                }
            });
            backend.memcpy_dtoh_2d(stream, Pitched { ptr: DevicePtr(ptr.0 + k * slice), pitch }, rows, part)?;
        }
        Ok(())
    }

    /// Array/device to array/device, one 2D copy per slice.
    pub fn copy_3d<B: MemoryBackend + ?Sized>(
        backend: &B,
        stream: Option<StreamHandle>,
        dst: &Place,
        src: &Place,
        extent: Extent,
    ) -> Result<(), BackendError> {
        let (dptr, dpitch, dslice) = dst.linear();
        let (sptr, spitch, sslice) = src.linear();
        let rows = Rows { width: extent.width, height: extent.height };
        for k in 0..extent.depth {
            let d = Pitched { ptr: DevicePtr(dptr.0 + k * dslice), pitch: dpitch };
            let s = Pitched { ptr: DevicePtr(sptr.0 + k * sslice), pitch: spitch };
            backend.memcpy_dtod_2d(stream, d, s, rows)?;
        }
        Ok(())
    }
}

/// The slices of a multi-slice device-to-host copy as they arrive (in stream order).
struct SliceGather {
    bytes: Vec<u8>,
    done: Option<DtohDone>,
}
