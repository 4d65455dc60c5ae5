//! Texture objects over arrays, mipmapped arrays and device memory, in the driver API's
//! terms. CUDA's `CUDA_RESOURCE_DESC`/`CUDA_TEXTURE_DESC`/`CUDA_RESOURCE_VIEW_DESC` and
//! HIP's `HIP_RESOURCE_DESC`/`HIP_TEXTURE_DESC`/`HIP_RESOURCE_VIEW_DESC` share one layout,
//! mirrored here with plain integers (the bindings' Rust enums cannot hold a value the
//! session has not checked), so both GPU backends hand the same structs to their runtime.

use super::{ArrayHandle, DevicePtr, MipmapHandle};

/// What a texture object reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TextureResource {
    /// An array.
    Array(ArrayHandle),
    /// A mipmapped array.
    Mipmap(MipmapHandle),
    /// `size` bytes of device memory of `format` × `channels` elements.
    Linear { ptr: DevicePtr, format: u32, channels: u32, size: u64 },
    /// `height` rows of `width` elements, `pitch` bytes apart.
    Pitch2D { ptr: DevicePtr, format: u32, channels: u32, width: u64, height: u64, pitch: u64 },
}

/// A texture object to create: the resource and the driver-form descriptors.
#[derive(Debug, Clone, Copy)]
pub struct TextureSpec {
    /// What it reads.
    pub resource: TextureResource,
    /// How it samples.
    pub texture: TextureDesc,
    /// How it views the resource, if given.
    pub view: Option<ResourceViewDesc>,
}

/// `CUDA_RESOURCE_DESC` / `HIP_RESOURCE_DESC`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ResourceDesc {
    /// `resType`.
    pub res_type: u32,
    /// The `res` union (128 bytes, pointer-aligned), filled by [`ResourceDesc::of`].
    pub res: [u64; 16],
    /// `flags` (must be 0).
    pub flags: u32,
}

impl ResourceDesc {
    /// The descriptor of `resource`.
    pub fn of(resource: &TextureResource) -> Self {
        let mut res = [0u64; 16];
        let element = |format: u32, channels: u32| u64::from(format) | (u64::from(channels) << 32);
        let res_type = match *resource {
            TextureResource::Array(array) => {
                res[0] = array.0;
                0
            }
            TextureResource::Mipmap(mipmap) => {
                res[0] = mipmap.0;
                1
            }
            TextureResource::Linear { ptr, format, channels, size } => {
                res[..3].copy_from_slice(&[ptr.0, element(format, channels), size]);
                2
            }
            TextureResource::Pitch2D { ptr, format, channels, width, height, pitch } => {
                res[..5].copy_from_slice(&[ptr.0, element(format, channels), width, height, pitch]);
                3
            }
        };
        Self { res_type, res, flags: 0 }
    }
}

/// `CUDA_TEXTURE_DESC` / `HIP_TEXTURE_DESC`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct TextureDesc {
    /// Address mode per dimension.
    pub address_mode: [u32; 3],
    /// Filter mode.
    pub filter_mode: u32,
    /// `*_TRSF_*` flags.
    pub flags: u32,
    /// Maximum anisotropy.
    pub max_anisotropy: u32,
    /// Filter mode between mipmap levels.
    pub mipmap_filter_mode: u32,
    /// Mipmap level bias.
    pub mipmap_level_bias: f32,
    /// Lowest mipmap level clamp.
    pub min_mipmap_level_clamp: f32,
    /// Highest mipmap level clamp.
    pub max_mipmap_level_clamp: f32,
    /// Border color.
    pub border_color: [f32; 4],
    /// Reserved, zero.
    pub reserved: [i32; 12],
}

/// `CUDA_RESOURCE_VIEW_DESC` / `HIP_RESOURCE_VIEW_DESC`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ResourceViewDesc {
    /// View format.
    pub format: u32,
    /// Width.
    pub width: usize,
    /// Height.
    pub height: usize,
    /// Depth.
    pub depth: usize,
    /// First mipmap level.
    pub first_mipmap_level: u32,
    /// Last mipmap level.
    pub last_mipmap_level: u32,
    /// First layer.
    pub first_layer: u32,
    /// Last layer.
    pub last_layer: u32,
    /// Reserved, zero.
    pub reserved: [u32; 16],
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// The sizes and offsets of ROCm's `HIP_RESOURCE_DESC`, `HIP_TEXTURE_DESC` and
    /// `HIP_RESOURCE_VIEW_DESC` (x86-64), which CUDA's share.
    #[test]
    fn driver_layouts() {
        assert_eq!((size_of::<ResourceDesc>(), offset_of!(ResourceDesc, res), offset_of!(ResourceDesc, flags)), (144, 8, 136));
        assert_eq!((size_of::<TextureDesc>(), offset_of!(TextureDesc, border_color)), (104, 40));
        assert_eq!((size_of::<ResourceViewDesc>(), offset_of!(ResourceViewDesc, first_mipmap_level)), (112, 32));
        let linear = ResourceDesc::of(&TextureResource::Linear { ptr: DevicePtr(0x1000), format: 0x20, channels: 4, size: 64 });
        assert_eq!((linear.res_type, linear.res[0], linear.res[1], linear.res[2]), (2, 0x1000, 0x4_0000_0020, 64));
    }
}
