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
    /// Host-to-array/device 3D copy: `data` is the box packed (`width * height * depth`
    /// bytes); the worker scatters it into the destination.
    pub struct Copy3DFromHost<'a> {
        /// Destination: array handle, or 0 for pitched device memory.
        pub dst_array: u64,
        /// Destination: device address (pitched memory; 0 for an array).
        pub dst_ptr: u64,
        /// Destination: bytes between rows (pitched memory).
        pub dst_pitch: u64,
        /// Destination: rows between slices (pitched memory).
        pub dst_height: u64,
        /// Destination: offset in bytes within a row.
        pub dst_x: u64,
        /// Destination: offset in rows.
        pub dst_y: u64,
        /// Destination: offset in slices.
        pub dst_z: u64,
        /// Bytes per row of the box.
        pub width: u64,
        /// Rows per slice of the box.
        pub height: u64,
        /// Slices of the box.
        pub depth: u64,
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
        /// Source: array handle, or 0 for pitched device memory.
        pub src_array: u64,
        /// Source: device address (pitched memory; 0 for an array).
        pub src_ptr: u64,
        /// Source: bytes between rows (pitched memory).
        pub src_pitch: u64,
        /// Source: rows between slices (pitched memory).
        pub src_height: u64,
        /// Source: offset in bytes within a row.
        pub src_x: u64,
        /// Source: offset in rows.
        pub src_y: u64,
        /// Source: offset in slices.
        pub src_z: u64,
        /// Bytes per row of the box.
        pub width: u64,
        /// Rows per slice of the box.
        pub height: u64,
        /// Slices of the box.
        pub depth: u64,
        /// Stream (0 = null stream).
        pub stream: u64,
    }
}

/// A message carrying a 3D copy's two sides and box (the 17 fields of [`Copy3D`] without its
/// stream), built from another that carries them: `copy_box!(GraphAddCopyNode { graph, ..
/// } from copy)` fills in the copy's fields and takes the others as given. The graph copy
/// messages all repeat those fields, so they convert through this one list.
#[macro_export]
macro_rules! copy_box {
    ($target:path { $($field:ident: $value:expr),* $(,)? } from $source:expr) => {{
        let c = &$source;
        $target {
            dst_array: c.dst_array,
            dst_ptr: c.dst_ptr,
            dst_pitch: c.dst_pitch,
            dst_height: c.dst_height,
            dst_x: c.dst_x,
            dst_y: c.dst_y,
            dst_z: c.dst_z,
            src_array: c.src_array,
            src_ptr: c.src_ptr,
            src_pitch: c.src_pitch,
            src_height: c.src_height,
            src_x: c.src_x,
            src_y: c.src_y,
            src_z: c.src_z,
            width: c.width,
            height: c.height,
            depth: c.depth,
            $($field: $value),*
        }
    }};
}

message! {
    /// Array/device-to-array/device 3D copy, done on the worker.
    pub struct Copy3D {
        /// Destination: array handle, or 0 for pitched device memory.
        pub dst_array: u64,
        /// Destination: device address (pitched memory; 0 for an array).
        pub dst_ptr: u64,
        /// Destination: bytes between rows (pitched memory).
        pub dst_pitch: u64,
        /// Destination: rows between slices (pitched memory).
        pub dst_height: u64,
        /// Destination: offset in bytes within a row.
        pub dst_x: u64,
        /// Destination: offset in rows.
        pub dst_y: u64,
        /// Destination: offset in slices.
        pub dst_z: u64,
        /// Source: array handle, or 0 for pitched device memory.
        pub src_array: u64,
        /// Source: device address (pitched memory; 0 for an array).
        pub src_ptr: u64,
        /// Source: bytes between rows (pitched memory).
        pub src_pitch: u64,
        /// Source: rows between slices (pitched memory).
        pub src_height: u64,
        /// Source: offset in bytes within a row.
        pub src_x: u64,
        /// Source: offset in rows.
        pub src_y: u64,
        /// Source: offset in slices.
        pub src_z: u64,
        /// Bytes per row of the box.
        pub width: u64,
        /// Rows per slice of the box.
        pub height: u64,
        /// Slices of the box.
        pub depth: u64,
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
