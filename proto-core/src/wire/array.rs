//! Arrays, mipmapped arrays and 3D copies.
//!
//! An array is a session-scoped worker object named by a handle (like streams). Every copy
//! that names an array, and every 3D copy, is one general copy: a box of `height` rows of
//! `width` bytes in each of `depth` slices, from a source place to a destination place. A
//! place is an array (`array` non-zero; `x` in bytes, `y`, `z` its offset) or pitched device
//! memory (`array` 0: rows `pitch` bytes apart, slices `pitch * height` bytes apart from
//! `ptr`, offset by `x` bytes, `y` rows and `z` slices). Host places travel as the frame's
//! bulk section, packed (`width * height * depth` bytes).

use crate::field::Bulk;

/// Widest 1D array in elements: the worker refuses wider ones, the client reports it as
/// `maxTexture1D` (AMD's value).
pub const MAX_ARRAY_1D_WIDTH: u64 = 16384;
/// Largest 2D array (elements × rows), `maxTexture2D`.
pub const MAX_ARRAY_2D: [u64; 2] = [16384, 16384];
/// Largest 3D array (elements × rows × slices), `maxTexture3D`.
pub const MAX_ARRAY_3D: [u64; 3] = [16384, 16384, 8192];

message! {
    /// `hipArray3DCreate` and the other array constructors; `levels > 0` makes a mipmapped
    /// array of that many levels. Answered by [`ArrayCreated`].
    pub struct ArrayCreate {
        /// Device ordinal.
        pub device: u32,
        /// `hipArray_Format`.
        pub format: u32,
        /// Channels per element (1, 2 or 4).
        pub channels: u32,
        /// Width in elements.
        pub width: u64,
        /// Height in rows (0 for a 1D array).
        pub height: u64,
        /// Depth in slices (0 for a 1D or 2D array).
        pub depth: u64,
        /// `hipArray*` flags.
        pub flags: u32,
        /// Mipmap levels; 0 for a plain array.
        pub levels: u32,
    }
}

message! {
    /// A new array or mipmapped array.
    pub struct ArrayCreated {
        /// Its handle (non-zero).
        pub handle: u64,
    }
}

message! {
    /// An array or mipmapped array (`hipArrayDestroy`, `hipMipmappedArrayDestroy`).
    pub struct ArrayRef {
        /// Handle from [`ArrayCreated`].
        pub handle: u64,
    }
}

message! {
    /// `hipMipmappedArrayGetLevel`: the array of one level; answered by [`ArrayCreated`]
    /// (the level belongs to the mipmapped array and cannot be destroyed alone).
    pub struct MipmapLevel {
        /// Mipmapped array handle.
        pub mipmap: u64,
        /// Level (0 = the largest).
        pub level: u32,
    }
}

message! {
    /// One side of a 3D copy: an array (`array` non-zero; `x` in bytes, `y`, `z` its offset)
    /// or pitched device memory (`array` 0: rows `pitch` bytes apart, slices `pitch * height`
    /// bytes apart from `ptr`, offset by `x` bytes, `y` rows and `z` slices).
    pub struct CopyPlace {
        /// Array handle, or 0 for pitched device memory.
        pub array: u64,
        /// Device address (pitched memory; 0 for an array).
        pub ptr: u64,
        /// Bytes between rows (pitched memory).
        pub pitch: u64,
        /// Rows between slices (pitched memory).
        pub height: u64,
        /// Offset in bytes within a row.
        pub x: u64,
        /// Offset in rows.
        pub y: u64,
        /// Offset in slices.
        pub z: u64,
    }
}

message! {
    /// The box a 3D copy moves.
    pub struct CopyExtent {
        /// Bytes per row.
        pub width: u64,
        /// Rows per slice.
        pub height: u64,
        /// Slices.
        pub depth: u64,
    }
}

message! {
    /// A 3D copy between device memory and arrays: both sides and the box. Nested in every
    /// message that carries such a copy ([`Copy3D`] and the graph copy messages).
    pub struct CopyBox {
        /// Destination.
        pub dst: CopyPlace,
        /// Source.
        pub src: CopyPlace,
        /// The box.
        pub extent: CopyExtent,
    }
}

message! {
    /// Host-to-array/device 3D copy: `data` is the box packed (`width * height * depth`
    /// bytes); the worker scatters it into the destination.
    pub struct Copy3DFromHost<'a> {
        /// Destination.
        pub dst: CopyPlace,
        /// The box.
        pub extent: CopyExtent,
        /// Stream (0 = null stream).
        pub stream: u64,
        /// Complete the copy before responding.
        pub sync: bool,
        /// The packed box, as the frame's bulk section.
        pub data: Bulk<'a>,
    }
}

message! {
    /// Array/device-to-host 3D copy: the worker gathers the box and answers it packed in one
    /// `MemcpyData` (at most one frame's bulk limit), when the stream reaches the copy.
    pub struct Copy3DToHost {
        /// Source.
        pub src: CopyPlace,
        /// The box.
        pub extent: CopyExtent,
        /// Stream (0 = null stream).
        pub stream: u64,
    }
}

message! {
    /// Array/device-to-array/device 3D copy, done on the worker.
    pub struct Copy3D {
        /// Both sides and the box.
        pub copy: CopyBox,
        /// Stream (0 = null stream).
        pub stream: u64,
        /// Complete the copy before responding.
        pub sync: bool,
    }
}

message! {
    /// `hipCreateTextureObject` / `hipTexObjectCreate` (in the driver API's terms): a texture
    /// object over an array, a mipmapped array, or linear or pitched device memory. Answered
    /// by [`TextureCreated`].
    pub struct TextureCreate {
        /// Device ordinal.
        pub device: u32,
        /// `HIPresourcetype`: 0 array, 1 mipmapped array, 2 linear, 3 pitch 2D.
        pub res_type: u32,
        /// Array or mipmapped array handle, or device address (linear, pitch 2D).
        pub resource: u64,
        /// `hipArray_Format` of linear and pitch 2D memory.
        pub format: u32,
        /// Channels of linear and pitch 2D memory.
        pub channels: u32,
        /// Bytes (linear) or elements per row (pitch 2D).
        pub width: u64,
        /// Rows (pitch 2D).
        pub height: u64,
        /// Bytes between rows (pitch 2D).
        pub pitch: u64,
        /// `HIPaddress_mode` per dimension.
        pub address_mode: [u32; 3],
        /// `HIPfilter_mode`.
        pub filter_mode: u32,
        /// `HIP_TRSF_*` flags (read as integer, normalized coordinates, sRGB...).
        pub flags: u32,
        /// Maximum anisotropy.
        pub max_anisotropy: u32,
        /// `HIPfilter_mode` between mipmap levels.
        pub mipmap_filter_mode: u32,
        /// Mipmap level bias.
        pub mipmap_level_bias: f32,
        /// Lowest mipmap level clamp.
        pub min_mipmap_level_clamp: f32,
        /// Highest mipmap level clamp.
        pub max_mipmap_level_clamp: f32,
        /// Border color.
        pub border_color: [f32; 4],
        /// Whether a resource view follows.
        pub has_view: bool,
        /// View: `HIPresourceViewFormat`.
        pub view_format: u32,
        /// View: width.
        pub view_width: u64,
        /// View: height.
        pub view_height: u64,
        /// View: depth.
        pub view_depth: u64,
        /// View: first mipmap level.
        pub view_first_mipmap_level: u32,
        /// View: last mipmap level.
        pub view_last_mipmap_level: u32,
        /// View: first layer.
        pub view_first_layer: u32,
        /// View: last layer.
        pub view_last_layer: u32,
    }
}

message! {
    /// A new texture object: the value kernels receive.
    pub struct TextureCreated {
        /// The texture object (non-zero).
        pub texture: u64,
    }
}
