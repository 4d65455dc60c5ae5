//! Arrays on CUDA: real `CUarray`s (`cuArray3DCreate`, `cuArrayDestroy`), so texture and
//! surface objects can later be made over them, and every 3D copy as one
//! `cuMemcpy3DAsync` between arrays, pitched device memory and host buffers.

use super::{result, sys, CudaBackend};
use crate::backend::{
    ArrayBackend, ArrayDesc, ArrayHandle, BackendError, DeviceIndex, DtohDone, Extent, HostData, MipmapHandle, Place, StreamHandle,
};
use crate::backend::{ResourceDesc, TextureSpec};
use std::ffi::c_void;

fn cu_format(format: u32) -> Result<sys::CUarray_format, BackendError> {
    use sys::CUarray_format::*;
    Ok(match format {
        0x01 => CU_AD_FORMAT_UNSIGNED_INT8,
        0x02 => CU_AD_FORMAT_UNSIGNED_INT16,
        0x03 => CU_AD_FORMAT_UNSIGNED_INT32,
        0x08 => CU_AD_FORMAT_SIGNED_INT8,
        0x09 => CU_AD_FORMAT_SIGNED_INT16,
        0x0a => CU_AD_FORMAT_SIGNED_INT32,
        0x10 => CU_AD_FORMAT_HALF,
        0x20 => CU_AD_FORMAT_FLOAT,
        other => return Err(BackendError::InvalidValue(format!("array format {other:#x}"))),
    })
}

/// One side of a `CUDA_MEMCPY3D`: memory type, host, device, array, pitch, height, offsets.
pub(super) struct Side {
    memory_type: sys::CUmemorytype,
    host: *mut c_void,
    device: sys::CUdeviceptr,
    array: sys::CUarray,
    pitch: usize,
    height: usize,
    at: [usize; 3],
}

impl Side {
    pub(super) fn of(place: &Place) -> Self {
        match *place {
            Place::Array { array, x, y, z, .. } => Self {
                memory_type: sys::CUmemorytype::CU_MEMORYTYPE_ARRAY,
                host: std::ptr::null_mut(),
                device: 0,
                array: array.0 as sys::CUarray,
                pitch: 0,
                height: 0,
                at: [x as usize, y as usize, z as usize],
            },
            Place::Device { ptr, pitch, height, x, y, z } => Self {
                memory_type: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
                host: std::ptr::null_mut(),
                device: ptr.0,
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
            memory_type: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
            host: ptr,
            device: 0,
            array: std::ptr::null_mut(),
            pitch: extent.width as usize,
            height: extent.height as usize,
            at: [0; 3],
        }
    }
}

/// The `CUDA_MEMCPY3D` of a copy, every field written out (`CUmemorytype` has no zero value).
pub(super) fn memcpy_3d(dst: &Side, src: &Side, extent: Extent) -> sys::CUDA_MEMCPY3D {
    sys::CUDA_MEMCPY3D {
        srcXInBytes: src.at[0],
        srcY: src.at[1],
        srcZ: src.at[2],
        srcLOD: 0,
        srcMemoryType: src.memory_type,
        srcHost: src.host,
        srcDevice: src.device,
        srcArray: src.array,
        reserved0: std::ptr::null_mut(),
        srcPitch: src.pitch,
        srcHeight: src.height,
        dstXInBytes: dst.at[0],
        dstY: dst.at[1],
        dstZ: dst.at[2],
        dstLOD: 0,
        dstMemoryType: dst.memory_type,
        dstHost: dst.host,
        dstDevice: dst.device,
        dstArray: dst.array,
        reserved1: std::ptr::null_mut(),
        dstPitch: dst.pitch,
        dstHeight: dst.height,
        WidthInBytes: extent.width as usize,
        Height: extent.height as usize,
        Depth: extent.depth as usize,
    }
}

fn cu_descriptor(desc: &ArrayDesc) -> Result<sys::CUDA_ARRAY3D_DESCRIPTOR, BackendError> {
    Ok(sys::CUDA_ARRAY3D_DESCRIPTOR {
        Width: desc.width as usize,
        Height: desc.height as usize,
        Depth: desc.depth as usize,
        Format: cu_format(desc.format)?,
        NumChannels: desc.channels,
        Flags: desc.flags,
    })
}

impl ArrayBackend for CudaBackend {
    fn array_create(&self, dev: DeviceIndex, desc: &ArrayDesc) -> Result<ArrayHandle, BackendError> {
        self.enter(dev)?;
        let array = result::array::create(&cu_descriptor(desc)?)?;
        Ok(ArrayHandle(array as u64))
    }

    fn array_destroy(&self, array: ArrayHandle) -> Result<(), BackendError> {
        // An array from array_create, destroyed once (the session forgets it).
        Ok(result::array::destroy(array.0 as sys::CUarray)?)
    }

    fn mipmap_create(&self, dev: DeviceIndex, desc: &ArrayDesc, levels: u32) -> Result<(MipmapHandle, Vec<ArrayHandle>), BackendError> {
        self.enter(dev)?;
        let mipmap = result::array::mipmap_create(&cu_descriptor(desc)?, levels)?;
        let mut arrays = Vec::with_capacity(levels as usize);
        for level in 0..levels {
            match result::array::mipmap_level(mipmap, level) {
                Ok(array) => arrays.push(ArrayHandle(array as u64)),
                Err(e) => {
                    // Ours, not handed out.
                    let _ = result::array::mipmap_destroy(mipmap);
                    return Err(e.into());
                }
            }
        }
        Ok((MipmapHandle(mipmap as u64), arrays))
    }

    fn mipmap_destroy(&self, mipmap: MipmapHandle, _levels: &[ArrayHandle]) -> Result<(), BackendError> {
        // A mipmapped array from mipmap_create, destroyed once with its levels.
        Ok(result::array::mipmap_destroy(mipmap.0 as sys::CUmipmappedArray)?)
    }

    fn texture_create(&self, dev: DeviceIndex, spec: &TextureSpec) -> Result<Option<u64>, BackendError> {
        self.enter(dev)?;
        let resource = ResourceDesc::of(&spec.resource);
        // Values the session checked; the resource is an array or memory of this device.
        Ok(Some(result::array::texture_create(&resource, &spec.texture, spec.view.as_ref())?))
    }

    fn texture_destroy(&self, texture: u64) -> Result<(), BackendError> {
        // A texture object from texture_create, destroyed once.
        Ok(result::array::texture_destroy(texture)?)
    }

    fn copy_3d_from_host(
        &self,
        stream: Option<StreamHandle>,
        dev: DeviceIndex,
        dst: &Place,
        extent: Extent,
        data: HostData,
    ) -> Result<(), BackendError> {
        let s = self.work_stream(stream, dev)?;
        let src = Side::host(data.as_bytes().as_ptr().cast_mut().cast(), extent);
        // SAFETY: `data` stays alive until the host function below runs, after the copy.
        unsafe { result::array::copy_3d_async(&memcpy_3d(&Side::of(dst), &src, extent), s) }?;
        self.launch_host(s, Box::new(move || drop(data)))
    }

    fn copy_3d_to_host(
        &self,
        stream: Option<StreamHandle>,
        dev: DeviceIndex,
        src: &Place,
        extent: Extent,
        done: DtohDone,
    ) -> Result<(), BackendError> {
        let s = self.work_stream(stream, dev)?;
        let len = extent.packed_len().ok_or_else(|| BackendError::InvalidValue("3D copy size overflows".into()))?;
        let mut out = crate::backend::zeroed_buffer(len)?;
        let dst = Side::host(out.as_mut_ptr().cast(), extent);
        // SAFETY: `out` holds the packed box and its heap buffer stays put, untouched, until
        // the copy is done (below, or in the host function).
        unsafe { result::array::copy_3d_async(&memcpy_3d(&dst, &Side::of(src), extent), s) }?;
        if stream.is_none() {
            // Null stream: due now, as `memcpy_dtoh_2d` does.
            let r = self.sync_raw(stream, s);
            done(r.map(|_| out));
            return Ok(());
        }
        self.launch_host(s, Box::new(move || done(Ok(out))))
    }

    fn copy_3d(&self, stream: Option<StreamHandle>, dev: DeviceIndex, dst: &Place, src: &Place, extent: Extent) -> Result<(), BackendError> {
        let s = self.work_stream(stream, dev)?;
        Ok(result::array::copy_3d_device_async(&memcpy_3d(&Side::of(dst), &Side::of(src), extent), s)?)
    }
}

// The driver-form structs of backend::texture are CUDA's, field for field.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<ResourceDesc>() == size_of::<sys::CUDA_RESOURCE_DESC>());
    assert!(align_of::<ResourceDesc>() == align_of::<sys::CUDA_RESOURCE_DESC>());
    assert!(offset_of!(ResourceDesc, res) == offset_of!(sys::CUDA_RESOURCE_DESC, res));
    assert!(offset_of!(ResourceDesc, flags) == offset_of!(sys::CUDA_RESOURCE_DESC, flags));
    assert!(size_of::<crate::backend::TextureDesc>() == size_of::<sys::CUDA_TEXTURE_DESC>());
    assert!(size_of::<crate::backend::ResourceViewDesc>() == size_of::<sys::CUDA_RESOURCE_VIEW_DESC>());
};
