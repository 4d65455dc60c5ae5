//! Texture objects (`hipCreateTextureObject`, `hipTexObjectCreate` and their queries).
//!
//! A texture object lives on the worker: the value the application gets is the one its
//! kernels receive (the backend's own texture object on GPU backends). Both API forms are
//! sent in the driver API's terms; the descriptors are kept here for the queries, which
//! answer what the object was made with (as ROCm does).

// Matches on the C ABI's enum constants, named as in C.
#![allow(non_upper_case_globals)]

use super::array::{channel_desc_of, format_of, is_array, mipmap_handle};
use crate::abi::*;
use crate::remote::with_conn;
use crate::state::devices::current_device;
use crate::state::families::Family;
use crate::state::sync::call_sync;
use client_core::published::FamilyTable;
use client_core::CallError;
use proto_core::wire;
use proto_core::Calls;
use std::collections::HashMap;
use std::sync::MutexGuard;

/// What a texture object reads, as the application named it.
#[derive(Clone, Copy)]
enum Resource {
    Array(hipArray_t),
    Mipmap(hipMipmappedArray_t),
    Linear { ptr: hipDeviceptr_t, format: hipArray_Format, channels: u32, size: usize },
    Pitch2D { ptr: hipDeviceptr_t, format: hipArray_Format, channels: u32, width: usize, height: usize, pitch: usize },
}

/// A texture object of this process: its resource and descriptors (driver form).
#[derive(Clone, Copy)]
struct Texture {
    device: u32,
    resource: Resource,
    desc: HIP_TEXTURE_DESC,
    view: Option<HIP_RESOURCE_VIEW_DESC>,
}

// SAFETY: the pointers are handles and device addresses, never dereferenced here.
unsafe impl Send for Texture {}

const TEXTURES: FamilyTable<HashMap<u64, Texture>> = FamilyTable::new(Family::Textures.slot());

/// The texture objects of the worker that issued `handle`, kept by its session.
fn textures(handle: u64) -> MutexGuard<'static, HashMap<u64, Texture>> {
    crate::remote::published_for_handle(handle).family(&TEXTURES)
}

/// Forgets the texture objects of `device` (`hipDeviceReset` destroys them on the worker).
pub fn forget_device_textures(device: u32) {
    if let Some(published) = crate::remote::published_if_known(device) {
        published.family(&TEXTURES).retain(|_, t| t.device != device);
    }
}

fn invalid(message: impl Into<String>) -> CallError {
    CallError::new(HipError::INVALID_VALUE, message)
}

fn create(out: *mut hipTextureObject_t, texture: Texture) -> Result<(), CallError> {
    non_null!(out);
    let (res_type, resource, format, channels, width, height, pitch) = match texture.resource {
        Resource::Array(array) => {
            if !is_array(array) {
                return Err(invalid(format!("{array:?} is no array of this process")));
            }
            (HIP_RESOURCE_TYPE_ARRAY, array as u64, 0, 0, 0, 0, 0)
        }
        Resource::Mipmap(mipmap) => {
            let handle = mipmap_handle(mipmap).ok_or_else(|| invalid(format!("{mipmap:?} is no mipmapped array of this process")))?;
            (HIP_RESOURCE_TYPE_MIPMAPPED_ARRAY, handle, 0, 0, 0, 0, 0)
        }
        Resource::Linear { ptr, format, channels, size } => {
            non_null!(ptr);
            (HIP_RESOURCE_TYPE_LINEAR, ptr as u64, format, channels, size as u64, 0, 0)
        }
        Resource::Pitch2D { ptr, format, channels, width, height, pitch } => {
            non_null!(ptr);
            (HIP_RESOURCE_TYPE_PITCH2D, ptr as u64, format, channels, width as u64, height as u64, pitch as u64)
        }
    };
    let d = texture.desc;
    let v = texture.view.unwrap_or(HIP_RESOURCE_VIEW_DESC {
        format: 0,
        width: 0,
        height: 0,
        depth: 0,
        firstMipmapLevel: 0,
        lastMipmapLevel: 0,
        firstLayer: 0,
        lastLayer: 0,
        reserved: [0; 16],
    });
    let req = wire::TextureCreate {
        device: texture.device,
        res_type,
        resource,
        format,
        channels,
        width,
        height,
        pitch,
        address_mode: d.addressMode,
        filter_mode: d.filterMode,
        flags: d.flags,
        max_anisotropy: d.maxAnisotropy,
        mipmap_filter_mode: d.mipmapFilterMode,
        mipmap_level_bias: d.mipmapLevelBias,
        min_mipmap_level_clamp: d.minMipmapLevelClamp,
        max_mipmap_level_clamp: d.maxMipmapLevelClamp,
        border_color: d.borderColor,
        has_view: texture.view.is_some(),
        view_format: v.format,
        view_width: v.width as u64,
        view_height: v.height as u64,
        view_depth: v.depth as u64,
        view_first_mipmap_level: v.firstMipmapLevel,
        view_last_mipmap_level: v.lastMipmapLevel,
        view_first_layer: v.firstLayer,
        view_last_layer: v.lastLayer,
    };
    let value = with_conn(|c| c.texture_create(req).map(|t| t.texture))?;
    textures(value).insert(value, texture);
    try_out!(out, crate::handle::from_id(value)?);
    Ok(())
}

fn destroy(texture: hipTextureObject_t) -> Result<(), CallError> {
    non_null!(texture);
    let value = texture as u64;
    if !textures(value).contains_key(&value) {
        return Err(invalid(format!("{texture:?} is no texture object of this process")));
    }
    call_sync(|c| c.texture_destroy(wire::ArrayRef { handle: value }))?;
    textures(value).remove(&value);
    Ok(())
}

fn texture(texture: hipTextureObject_t) -> Result<Texture, CallError> {
    non_null!(texture);
    textures(texture as u64).get(&(texture as u64)).copied().ok_or_else(|| invalid(format!("{texture:?} is no texture object of this process")))
}

fn view_of(view: &hipResourceViewDesc) -> HIP_RESOURCE_VIEW_DESC {
    HIP_RESOURCE_VIEW_DESC {
        format: view.format,
        width: view.width,
        height: view.height,
        depth: view.depth,
        firstMipmapLevel: view.firstMipmapLevel,
        lastMipmapLevel: view.lastMipmapLevel,
        firstLayer: view.firstLayer,
        lastLayer: view.lastLayer,
        reserved: [0; 16],
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipCreateTextureObject(
    out: *mut hipTextureObject_t,
    res: *const hipResourceDesc,
    desc: *const hipTextureDesc,
    view: *const hipResourceViewDesc,
) -> hipError_t {
    hip_boundary!("hipCreateTextureObject", {
        non_null!(out);
        non_null!(res);
        non_null!(desc);
        // SAFETY: checked non-null; the caller passes the descriptors (the union member
        // read is the one `resType` names).
        let (res, desc, view) = unsafe { (*res, *desc, view.as_ref().copied()) };
        let resource = match res.resType {
            // SAFETY: the union member `resType` names.
            hipResourceTypeArray => Resource::Array(unsafe { res.res.array.array }),
            // SAFETY: the union member `resType` names.
            hipResourceTypeMipmappedArray => Resource::Mipmap(unsafe { res.res.mipmap.mipmap }),
            hipResourceTypeLinear => {
                // SAFETY: the union member `resType` names.
                let l = unsafe { res.res.linear };
                let (format, channels) = format_of(&l.desc)?;
                Resource::Linear { ptr: l.devPtr, format, channels, size: l.sizeInBytes }
            }
            hipResourceTypePitch2D => {
                // SAFETY: the union member `resType` names.
                let p = unsafe { res.res.pitch2D };
                let (format, channels) = format_of(&p.desc)?;
                Resource::Pitch2D { ptr: p.devPtr, format, channels, width: p.width, height: p.height, pitch: p.pitchInBytes }
            }
            other => return Err(invalid(format!("hipResourceType {other}"))),
        };
        let mut flags = 0;
        if desc.readMode == hipReadModeElementType {
            flags |= HIP_TRSF_READ_AS_INTEGER;
        }
        if desc.normalizedCoords != 0 {
            flags |= HIP_TRSF_NORMALIZED_COORDINATES;
        }
        if desc.sRGB != 0 {
            flags |= HIP_TRSF_SRGB;
        }
        let driver = HIP_TEXTURE_DESC {
            addressMode: desc.addressMode,
            filterMode: desc.filterMode,
            flags,
            maxAnisotropy: desc.maxAnisotropy,
            mipmapFilterMode: desc.mipmapFilterMode,
            mipmapLevelBias: desc.mipmapLevelBias,
            minMipmapLevelClamp: desc.minMipmapLevelClamp,
            maxMipmapLevelClamp: desc.maxMipmapLevelClamp,
            borderColor: desc.borderColor,
            reserved: [0; 12],
        };
        create(out, Texture { device: current_device(), resource, desc: driver, view: view.as_ref().map(view_of) })
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipTexObjectCreate(
    out: *mut hipTextureObject_t,
    res: *const HIP_RESOURCE_DESC,
    desc: *const HIP_TEXTURE_DESC,
    view: *const HIP_RESOURCE_VIEW_DESC,
) -> hipError_t {
    hip_boundary!("hipTexObjectCreate", {
        non_null!(out);
        non_null!(res);
        non_null!(desc);
        // SAFETY: checked non-null; the caller passes the descriptors.
        let (res, desc, view) = unsafe { (*res, *desc, view.as_ref().copied()) };
        if res.flags != 0 {
            return Err(invalid(format!("HIP_RESOURCE_DESC flags {:#x} must be 0", res.flags)));
        }
        let resource = match res.resType {
            // SAFETY: the union member `resType` names.
            HIP_RESOURCE_TYPE_ARRAY => Resource::Array(unsafe { res.res.array.hArray }),
            // SAFETY: the union member `resType` names.
            HIP_RESOURCE_TYPE_MIPMAPPED_ARRAY => Resource::Mipmap(unsafe { res.res.mipmap.hMipmappedArray }),
            HIP_RESOURCE_TYPE_LINEAR => {
                // SAFETY: the union member `resType` names.
                let l = unsafe { res.res.linear };
                Resource::Linear { ptr: l.devPtr, format: l.format, channels: l.numChannels, size: l.sizeInBytes }
            }
            HIP_RESOURCE_TYPE_PITCH2D => {
                // SAFETY: the union member `resType` names.
                let p = unsafe { res.res.pitch2D };
                Resource::Pitch2D {
                    ptr: p.devPtr,
                    format: p.format,
                    channels: p.numChannels,
                    width: p.width,
                    height: p.height,
                    pitch: p.pitchInBytes,
                }
            }
            other => return Err(invalid(format!("HIPresourcetype {other}"))),
        };
        create(out, Texture { device: current_device(), resource, desc, view })
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDestroyTextureObject(texture: hipTextureObject_t) -> hipError_t {
    hip_boundary!("hipDestroyTextureObject", { destroy(texture) })
}

#[no_mangle]
pub unsafe extern "C" fn hipTexObjectDestroy(texture: hipTextureObject_t) -> hipError_t {
    hip_boundary!("hipTexObjectDestroy", { destroy(texture) })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetTextureObjectResourceDesc(out: *mut hipResourceDesc, tex: hipTextureObject_t) -> hipError_t {
    hip_boundary!("hipGetTextureObjectResourceDesc", {
        non_null!(out);
        let t = texture(tex)?;
        // SAFETY: checked non-null; the caller provides the struct. Zeroed first: the union's
        // other members read as 0.
        unsafe {
            std::ptr::write_bytes(out, 0, 1);
            let out = &mut *out;
            match t.resource {
                Resource::Array(array) => {
                    out.resType = hipResourceTypeArray;
                    out.res.array.array = array;
                }
                Resource::Mipmap(mipmap) => {
                    out.resType = hipResourceTypeMipmappedArray;
                    out.res.mipmap.mipmap = mipmap;
                }
                Resource::Linear { ptr, format, channels, size } => {
                    out.resType = hipResourceTypeLinear;
                    out.res.linear =
                        hipResourceDesc__bindgen_ty_1__bindgen_ty_3 { devPtr: ptr, desc: channel_desc_of(format, channels), sizeInBytes: size };
                }
                Resource::Pitch2D { ptr, format, channels, width, height, pitch } => {
                    out.resType = hipResourceTypePitch2D;
                    out.res.pitch2D = hipResourceDesc__bindgen_ty_1__bindgen_ty_4 {
                        devPtr: ptr,
                        desc: channel_desc_of(format, channels),
                        width,
                        height,
                        pitchInBytes: pitch,
                    };
                }
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipTexObjectGetResourceDesc(out: *mut HIP_RESOURCE_DESC, tex: hipTextureObject_t) -> hipError_t {
    hip_boundary!("hipTexObjectGetResourceDesc", {
        non_null!(out);
        let t = texture(tex)?;
        // SAFETY: checked non-null; the caller provides the struct. Zeroed first: the union's
        // other members read as 0.
        unsafe {
            std::ptr::write_bytes(out, 0, 1);
            let out = &mut *out;
            match t.resource {
                Resource::Array(array) => {
                    out.resType = HIP_RESOURCE_TYPE_ARRAY;
                    out.res.array.hArray = array;
                }
                Resource::Mipmap(mipmap) => {
                    out.resType = HIP_RESOURCE_TYPE_MIPMAPPED_ARRAY;
                    out.res.mipmap.hMipmappedArray = mipmap;
                }
                Resource::Linear { ptr, format, channels, size } => {
                    out.resType = HIP_RESOURCE_TYPE_LINEAR;
                    out.res.linear =
                        HIP_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_3 { devPtr: ptr, format, numChannels: channels, sizeInBytes: size };
                }
                Resource::Pitch2D { ptr, format, channels, width, height, pitch } => {
                    out.resType = HIP_RESOURCE_TYPE_PITCH2D;
                    out.res.pitch2D = HIP_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_4 {
                        devPtr: ptr,
                        format,
                        numChannels: channels,
                        width,
                        height,
                        pitchInBytes: pitch,
                    };
                }
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetTextureObjectTextureDesc(out: *mut hipTextureDesc, tex: hipTextureObject_t) -> hipError_t {
    hip_boundary!("hipGetTextureObjectTextureDesc", {
        non_null!(out);
        let d = texture(tex)?.desc;
        let desc = hipTextureDesc {
            addressMode: d.addressMode,
            filterMode: d.filterMode,
            readMode: if d.flags & HIP_TRSF_READ_AS_INTEGER != 0 { hipReadModeElementType } else { hipReadModeNormalizedFloat },
            sRGB: i32::from(d.flags & HIP_TRSF_SRGB != 0),
            borderColor: d.borderColor,
            normalizedCoords: i32::from(d.flags & HIP_TRSF_NORMALIZED_COORDINATES != 0),
            maxAnisotropy: d.maxAnisotropy,
            mipmapFilterMode: d.mipmapFilterMode,
            mipmapLevelBias: d.mipmapLevelBias,
            minMipmapLevelClamp: d.minMipmapLevelClamp,
            maxMipmapLevelClamp: d.maxMipmapLevelClamp,
        };
        try_out!(out, desc);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipTexObjectGetTextureDesc(out: *mut HIP_TEXTURE_DESC, tex: hipTextureObject_t) -> hipError_t {
    hip_boundary!("hipTexObjectGetTextureDesc", {
        non_null!(out);
        let d = texture(tex)?.desc;
        try_out!(out, d);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetTextureObjectResourceViewDesc(out: *mut hipResourceViewDesc, tex: hipTextureObject_t) -> hipError_t {
    hip_boundary!("hipGetTextureObjectResourceViewDesc", {
        non_null!(out);
        // Without a view, a zeroed one (as ROCm keeps it).
        let v = texture(tex)?.view;
        let view = hipResourceViewDesc {
            format: v.map_or(0, |v| v.format),
            width: v.map_or(0, |v| v.width),
            height: v.map_or(0, |v| v.height),
            depth: v.map_or(0, |v| v.depth),
            firstMipmapLevel: v.map_or(0, |v| v.firstMipmapLevel),
            lastMipmapLevel: v.map_or(0, |v| v.lastMipmapLevel),
            firstLayer: v.map_or(0, |v| v.firstLayer),
            lastLayer: v.map_or(0, |v| v.lastLayer),
        };
        try_out!(out, view);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipTexObjectGetResourceViewDesc(out: *mut HIP_RESOURCE_VIEW_DESC, tex: hipTextureObject_t) -> hipError_t {
    hip_boundary!("hipTexObjectGetResourceViewDesc", {
        non_null!(out);
        let v = texture(tex)?.view;
        // SAFETY: checked non-null; the caller provides the struct. Zeroed without a view.
        unsafe {
            match v {
                Some(v) => *out = v,
                None => std::ptr::write_bytes(out, 0, 1),
            }
        }
        Ok(())
    })
}
