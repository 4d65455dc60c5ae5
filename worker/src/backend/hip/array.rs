//! Arrays on HIP: the runtime's own arrays (`hipArray3DCreate`, `hipArrayDestroy`) and 3D
//! copies (`hipDrvMemcpy3DAsync`) between them, pitched device memory and host buffers kept
//! alive until the stream reaches the copy. A runtime without these entry points gets the
//! linear arrays of [`crate::backend::linear_arrays`].

use super::HipBackend;
use crate::backend::{
    linear_arrays, zeroed_buffer, ArrayBackend, ArrayDesc, ArrayHandle, BackendError, DeviceIndex, DtohDone, Extent, HostData, MipmapHandle, Place,
    StreamHandle,
};
use crate::backend::{ResourceDesc, TextureSpec};
use std::ffi::c_void;

/// `HIP_ARRAY3D_DESCRIPTOR`.
#[repr(C)]
pub struct Array3DDescriptor {
    width: usize,
    height: usize,
    depth: usize,
    format: u32,
    channels: u32,
    flags: u32,
}

/// `HIP_MEMCPY3D`.
#[repr(C)]
pub struct Memcpy3D {
    src_x_in_bytes: usize,
    src_y: usize,
    src_z: usize,
    src_lod: usize,
    src_memory_type: u32,
    src_host: *const c_void,
    src_device: *mut c_void,
    src_array: *mut c_void,
    src_pitch: usize,
    src_height: usize,
    dst_x_in_bytes: usize,
    dst_y: usize,
    dst_z: usize,
    dst_lod: usize,
    dst_memory_type: u32,
    dst_host: *mut c_void,
    dst_device: *mut c_void,
    dst_array: *mut c_void,
    dst_pitch: usize,
    dst_height: usize,
    width_in_bytes: usize,
    height: usize,
    depth: usize,
}

/// `hipMemoryType` values of `HIP_MEMCPY3D`.
const MEMORY_HOST: u32 = 1;
const MEMORY_DEVICE: u32 = 2;
const MEMORY_ARRAY: u32 = 10;

/// One side of a copy in `HIP_MEMCPY3D` terms: memory type, host, device, array, pitch,
/// height, offsets.
struct Side {
    memory_type: u32,
    host: *mut c_void,
    device: *mut c_void,
    array: *mut c_void,
    pitch: usize,
    height: usize,
    at: [usize; 3],
}

impl Side {
    fn of(place: &Place) -> Self {
        match *place {
            Place::Array { array, x, y, z, .. } => Self {
                memory_type: MEMORY_ARRAY,
                host: std::ptr::null_mut(),
                device: std::ptr::null_mut(),
                array: array.0 as *mut c_void,
                pitch: 0,
                height: 0,
                at: [x as usize, y as usize, z as usize],
            },
            Place::Device { ptr, pitch, height, x, y, z } => Self {
                memory_type: MEMORY_DEVICE,
                host: std::ptr::null_mut(),
                device: ptr.0 as *mut c_void,
                array: std::ptr::null_mut(),
                pitch: pitch as usize,
                height: height as usize,
                at: [x as usize, y as usize, z as usize],
            },
        }
    }

    /// A packed host box.
    fn host(ptr: *mut c_void, extent: Extent) -> Self {
        Self {
            memory_type: MEMORY_HOST,
            host: ptr,
            device: std::ptr::null_mut(),
            array: std::ptr::null_mut(),
            pitch: extent.width as usize,
            height: extent.height as usize,
            at: [0; 3],
        }
    }
}

fn memcpy_3d(dst: &Side, src: &Side, extent: Extent) -> Memcpy3D {
    Memcpy3D {
        src_x_in_bytes: src.at[0],
        src_y: src.at[1],
        src_z: src.at[2],
        src_lod: 0,
        src_memory_type: src.memory_type,
        src_host: src.host,
        src_device: src.device,
        src_array: src.array,
        src_pitch: src.pitch,
        src_height: src.height,
        dst_x_in_bytes: dst.at[0],
        dst_y: dst.at[1],
        dst_z: dst.at[2],
        dst_lod: 0,
        dst_memory_type: dst.memory_type,
        dst_host: dst.host,
        dst_device: dst.device,
        dst_array: dst.array,
        dst_pitch: dst.pitch,
        dst_height: dst.height,
        width_in_bytes: extent.width as usize,
        height: extent.height as usize,
        depth: extent.depth as usize,
    }
}

impl HipBackend {
    /// Whether the runtime has arrays (else arrays are linear allocations).
    fn has_arrays(&self) -> bool {
        self.api.hipArray3DCreate.is_some() && self.api.hipArrayDestroy.is_some() && self.api.hipDrvMemcpy3DAsync.is_some()
    }

    /// Queues one `hipDrvMemcpy3DAsync` on `stream` (the null stream of `dev` for `None`).
    ///
    /// # Safety
    /// As [`super::api::HipApi::drv_memcpy_3d_async`]: every host box `copy` names stays
    /// alive, and a host destination untouched, until the stream has passed the copy.
    unsafe fn queue_memcpy_3d(
        &self,
        stream: Option<StreamHandle>,
        dev: DeviceIndex,
        copy: &Memcpy3D,
    ) -> Result<(super::Stream, DeviceIndex), BackendError> {
        if self.api.hipDrvMemcpy3DAsync.is_none() {
            return Err(BackendError::NotSupported("hipDrvMemcpy3DAsync".into()));
        }
        let (s, dev) = self.stream_and_device(stream, dev)?;
        // SAFETY: host boxes are the caller's contract; the places were checked by the
        // session (arrays of this backend, device memory inside allocations).
        unsafe { self.api.drv_memcpy_3d_async(copy, s) }?;
        Ok((s, dev))
    }
}

fn descriptor(desc: &ArrayDesc) -> Array3DDescriptor {
    Array3DDescriptor {
        width: desc.width as usize,
        height: desc.height as usize,
        depth: desc.depth as usize,
        format: desc.format,
        channels: desc.channels,
        flags: desc.flags,
    }
}

impl ArrayBackend for HipBackend {
    fn array_create(&self, dev: DeviceIndex, desc: &ArrayDesc) -> Result<ArrayHandle, BackendError> {
        if !self.has_arrays() {
            return linear_arrays::array_create(self, dev, desc);
        }
        self.enter(dev)?;
        let array = self.api.array_3d_create(&descriptor(desc))?;
        Ok(ArrayHandle(array as u64))
    }

    fn array_destroy(&self, array: ArrayHandle) -> Result<(), BackendError> {
        if !self.has_arrays() {
            return crate::backend::MemoryBackend::free(self, crate::backend::DevicePtr(array.0));
        }
        // An array from array_create, destroyed once (the session forgets it).
        Ok(self.api.array_destroy(array.0 as *mut c_void)?)
    }

    fn mipmap_create(&self, dev: DeviceIndex, desc: &ArrayDesc, levels: u32) -> Result<(MipmapHandle, Vec<ArrayHandle>), BackendError> {
        let api = &self.api;
        // Levels are runtime arrays, so copies must go through the runtime's arrays too.
        let has_mipmaps = api.hipMipmappedArrayCreate.is_some() && api.hipMipmappedArrayGetLevel.is_some() && api.hipMipmappedArrayDestroy.is_some();
        if !has_mipmaps || !self.has_arrays() {
            return linear_arrays::mipmap_create(self, dev, desc, levels);
        }
        self.enter(dev)?;
        let mipmap = api.mipmapped_array_create(&descriptor(desc), levels)?;
        let mut arrays = Vec::with_capacity(levels as usize);
        for level in 0..levels {
            match api.mipmapped_array_get_level(mipmap, level) {
                Ok(array) => arrays.push(ArrayHandle(array as u64)),
                Err(e) => {
                    // Ours, not handed out.
                    let _ = api.mipmapped_array_destroy(mipmap);
                    return Err(e.into());
                }
            }
        }
        Ok((MipmapHandle(mipmap as u64), arrays))
    }

    fn mipmap_destroy(&self, mipmap: MipmapHandle, levels: &[ArrayHandle]) -> Result<(), BackendError> {
        if self.api.hipMipmappedArrayDestroy.is_none() || mipmap.0 == 0 {
            return linear_arrays::mipmap_destroy(self, levels);
        }
        // A mipmapped array from mipmap_create, destroyed once with its levels.
        Ok(self.api.mipmapped_array_destroy(mipmap.0 as *mut c_void)?)
    }

    fn texture_create(&self, dev: DeviceIndex, spec: &TextureSpec) -> Result<Option<u64>, BackendError> {
        if self.api.hipTexObjectCreate.is_none() || self.api.hipTexObjectDestroy.is_none() {
            return Err(BackendError::NotSupported("the HIP runtime has no hipTexObjectCreate".into()));
        }
        self.enter(dev)?;
        let resource = ResourceDesc::of(&spec.resource);
        // Values the session checked.
        Ok(Some(self.api.tex_object_create(&resource, &spec.texture, spec.view.as_ref())?))
    }

    fn texture_destroy(&self, texture: u64) -> Result<(), BackendError> {
        if self.api.hipTexObjectDestroy.is_none() {
            return Err(BackendError::NotSupported("hipTexObjectDestroy".into()));
        }
        // A texture object from texture_create, destroyed once.
        Ok(self.api.tex_object_destroy(texture)?)
    }

    fn copy_3d_from_host(
        &self,
        stream: Option<StreamHandle>,
        dev: DeviceIndex,
        dst: &Place,
        extent: Extent,
        data: HostData,
    ) -> Result<(), BackendError> {
        if !self.has_arrays() {
            return linear_arrays::copy_3d_from_host(self, stream, dst, extent, data);
        }
        let src = Side::host(data.as_bytes().as_ptr() as *mut c_void, extent);
        // SAFETY: `data` stays alive until the stream reaches the copy (kept below, or waited
        // for).
        let (s, dev) = unsafe { self.queue_memcpy_3d(stream, dev, &memcpy_3d(&Side::of(dst), &src, extent)) }?;
        if self.when_reached(s, dev, Box::new(move |_| drop(data))).is_err() {
            self.api.stream_synchronize(s)?;
        }
        Ok(())
    }

    fn copy_3d_to_host(
        &self,
        stream: Option<StreamHandle>,
        dev: DeviceIndex,
        src: &Place,
        extent: Extent,
        done: DtohDone,
    ) -> Result<(), BackendError> {
        if !self.has_arrays() {
            return linear_arrays::copy_3d_to_host(self, stream, src, extent, done);
        }
        let len = extent.packed_len().ok_or_else(|| BackendError::InvalidValue("3D copy size overflows".into()))?;
        let mut out = zeroed_buffer(len)?;
        let dst = Side::host(out.as_mut_ptr().cast(), extent);
        // SAFETY: `out`'s heap buffer does not move when `out` moves into the completion,
        // which keeps it, untouched, until the stream has reached the copy.
        let (s, dev) = unsafe { self.queue_memcpy_3d(stream, dev, &memcpy_3d(&dst, &Side::of(src), extent)) }?;
        self.when_reached(s, dev, Box::new(move |reached| done(reached.map(|()| out))))
    }

    fn copy_3d(&self, stream: Option<StreamHandle>, dev: DeviceIndex, dst: &Place, src: &Place, extent: Extent) -> Result<(), BackendError> {
        if !self.has_arrays() {
            return linear_arrays::copy_3d(self, stream, dst, src, extent);
        }
        // SAFETY: arrays and device memory only (`Side::of`): no host box.
        unsafe { self.queue_memcpy_3d(stream, dev, &memcpy_3d(&Side::of(dst), &Side::of(src), extent)) }?;
        Ok(())
    }
}
