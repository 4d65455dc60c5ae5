//! Array family handlers (see `proto_core::opcode`, family `Array`): arrays and mipmapped
//! arrays as session objects, and the general 3D copy every copy naming an array is. Every
//! place and box is checked against the array's dimensions or the session's allocation table
//! before the backend moves a byte.

use super::memory::{deferred_data_reply, PendingUpload};
use super::{CallCx, Failure, Handles, Session};
use crate::backend::{
    format_channel_size, ArrayDesc, ArrayHandle, DeviceIndex, DevicePtr, Extent, HostData, MipmapHandle, Place, ResourceViewDesc, TextureDesc,
    TextureResource, TextureSpec,
};
use proto_core::limits::MAX_BULK_LEN;
use proto_core::opcode::{calls, ArrayHandler};
use proto_core::wire::{self, MAX_ARRAY_1D_WIDTH, MAX_ARRAY_2D, MAX_ARRAY_3D};
use proto_core::{Outcome, Status};
use std::collections::HashMap;
use std::sync::atomic::Ordering;

/// Most live arrays and mipmapped arrays one session may hold.
pub const MAX_ARRAYS_PER_SESSION: usize = 1 << 16;
/// Most live texture objects one session may hold.
pub const MAX_TEXTURES_PER_SESSION: usize = 1 << 16;

/// `HIP_TRSF_*` texture flags: read as integer, normalized coordinates, sRGB, no trilinear
/// optimisation, seamless cubemap.
const TEXTURE_FLAGS: u32 = 0x1 | 0x2 | 0x10 | 0x20 | 0x40;
/// `HIP_TRSF_NORMALIZED_COORDINATES`.
const TEXTURE_NORMALIZED_COORDINATES: u32 = 0x2;
/// Highest `HIPaddress_mode` (border).
const MAX_ADDRESS_MODE: u32 = 3;
/// Highest `HIPfilter_mode` (linear).
const MAX_FILTER_MODE: u32 = 1;
/// Highest `HIPresourceViewFormat` (`HIP_RES_VIEW_FORMAT_UNSIGNED_BC7`).
const MAX_VIEW_FORMAT: u32 = 0x22;

/// `hipArrayLayered`, `hipArraySurfaceLoadStore`, `hipArrayCubemap`, `hipArrayTextureGather`.
const ARRAY_FLAGS: u32 = 0x1 | 0x2 | 0x4 | 0x8;

/// A session's array: the backend's handle, its device and what it holds.
#[derive(Debug, Clone, Copy)]
pub struct ArrayEntry {
    handle: ArrayHandle,
    device: DeviceIndex,
    desc: ArrayDesc,
    /// The mipmapped array this is a level of (destroyed with it, not alone).
    mipmap: Option<u64>,
}

/// A session's mipmapped array: the backend's handle and its levels' array handles (in the
/// session's array table).
#[derive(Debug, Clone)]
pub struct MipmapEntry {
    handle: MipmapHandle,
    device: DeviceIndex,
    levels: Vec<u64>,
}

/// A session's texture object: the backend's (if it has its own) and its device.
#[derive(Debug, Clone, Copy)]
pub struct TextureEntry {
    backend: Option<u64>,
    device: DeviceIndex,
}

/// The session's arrays, mipmapped arrays and texture objects.
#[derive(Debug)]
pub struct Arrays {
    pub(super) arrays: Handles<ArrayEntry>,
    pub(super) mipmaps: Handles<MipmapEntry>,
    /// By the value the client holds: the backend's texture object, or a handle of `ids`.
    textures: HashMap<u64, TextureEntry>,
    /// Handles for texture objects of backends without their own.
    pub(super) texture_ids: Handles<()>,
}

impl Default for Arrays {
    fn default() -> Self {
        Self {
            arrays: Handles::new("array", 0x4152_0000_0000_0000, MAX_ARRAYS_PER_SESSION),
            mipmaps: Handles::new("mipmapped array", 0x4d49_0000_0000_0000, MAX_ARRAYS_PER_SESSION),
            textures: HashMap::new(),
            texture_ids: Handles::new("texture object", 0x5458_0000_0000_0000, MAX_TEXTURES_PER_SESSION),
        }
    }
}

impl Arrays {
    /// Device bytes the session's arrays hold.
    pub fn total_bytes(&self) -> u64 {
        self.arrays.values().map(|a| a.desc.byte_len().unwrap_or(0)).sum()
    }
}

fn invalid(message: impl Into<String>) -> Failure {
    Failure::new(Status::INVALID_VALUE, message)
}

/// Checks a descriptor as ROCm does: a known format, 1, 2 or 4 channels, a non-zero width,
/// known flags, dimensions within the device's array limits.
fn check_desc(desc: &ArrayDesc) -> Result<(), Failure> {
    if format_channel_size(desc.format).is_none() {
        return Err(invalid(format!("hipArray_Format {:#x} is not a format", desc.format)));
    }
    if !matches!(desc.channels, 1 | 2 | 4) {
        return Err(invalid(format!("{} channels: arrays have 1, 2 or 4", desc.channels)));
    }
    if desc.flags & !ARRAY_FLAGS != 0 {
        return Err(invalid(format!("array flags {:#x} unknown", desc.flags)));
    }
    if desc.width == 0 || (desc.depth != 0 && desc.height == 0) {
        return Err(invalid(format!("array of {}x{}x{} elements", desc.width, desc.height, desc.depth)));
    }
    let fits = match (desc.height, desc.depth) {
        (0, _) => desc.width <= MAX_ARRAY_1D_WIDTH,
        (h, 0) => desc.width <= MAX_ARRAY_2D[0] && h <= MAX_ARRAY_2D[1],
        (h, d) => desc.width <= MAX_ARRAY_3D[0] && h <= MAX_ARRAY_3D[1] && d <= MAX_ARRAY_3D[2],
    };
    if !fits {
        return Err(invalid(format!(
            "array of {}x{}x{} elements exceeds the device's array limits (1D {MAX_ARRAY_1D_WIDTH}, 2D {MAX_ARRAY_2D:?}, 3D {MAX_ARRAY_3D:?})",
            desc.width, desc.height, desc.depth
        )));
    }
    Ok(())
}

impl ArrayHandler for Session {
    fn array_create(&mut self, _cx: &mut CallCx, req: wire::ArrayCreate) -> Result<wire::ArrayCreated, Failure> {
        let dev = self.device(req.device)?;
        let desc = ArrayDesc { format: req.format, channels: req.channels, width: req.width, height: req.height, depth: req.depth, flags: req.flags };
        check_desc(&desc)?;
        if req.levels == 0 {
            let handle = self.create_array(dev, desc)?;
            return Ok(wire::ArrayCreated { handle });
        }
        let largest = desc.width.max(desc.height).max(desc.depth);
        let most_levels = 64 - largest.leading_zeros();
        if req.levels > most_levels {
            return Err(invalid(format!("{} mipmap levels for a largest dimension of {largest} (at most {most_levels})", req.levels)));
        }
        self.arrays.mipmaps.check_capacity()?;
        if self.arrays.arrays.len() + req.levels as usize > MAX_ARRAYS_PER_SESSION {
            return Err(Failure::new(Status::OUT_OF_MEMORY, format!("session holds the maximum of {MAX_ARRAYS_PER_SESSION} arrays")));
        }
        let bytes =
            (0..req.levels).try_fold(0u64, |sum, l| sum.checked_add(desc.level(l).byte_len()?)).ok_or_else(|| invalid("mipmap size overflows"))?;
        self.check_session_memory(bytes, "mipmapped array")?;
        let (handle, levels) = self.backend.mipmap_create(dev, &desc, req.levels)?;
        let mipmap = self.arrays.mipmaps.insert(MipmapEntry { handle, device: dev, levels: Vec::new() });
        let ids = levels
            .into_iter()
            .enumerate()
            .map(|(l, array)| self.arrays.arrays.insert(ArrayEntry { handle: array, device: dev, desc: desc.level(l as u32), mipmap: Some(mipmap) }))
            .collect();
        self.arrays.mipmaps.get_mut(mipmap)?.levels = ids;
        Ok(wire::ArrayCreated { handle: mipmap })
    }

    fn array_destroy(&mut self, _cx: &mut CallCx, req: wire::ArrayRef) -> Result<wire::Empty, Failure> {
        let entry = *self.array(req.handle)?;
        if entry.mipmap.is_some() {
            return Err(invalid(format!("array {:#x} is a mipmap level: destroy its mipmapped array", req.handle)));
        }
        self.synchronize_session(Some(entry.device))?;
        self.arrays.arrays.remove(req.handle)?;
        self.backend.array_destroy(entry.handle)?;
        Ok(wire::Empty {})
    }

    fn mipmap_destroy(&mut self, _cx: &mut CallCx, req: wire::ArrayRef) -> Result<wire::Empty, Failure> {
        let device =
            self.arrays.mipmaps.get(req.handle).map_err(|_| invalid(format!("{:#x} is no mipmapped array of this session", req.handle)))?.device;
        self.synchronize_session(Some(device))?;
        self.destroy_mipmap(req.handle);
        Ok(wire::Empty {})
    }

    fn mipmap_get_level(&mut self, _cx: &mut CallCx, req: wire::MipmapLevel) -> Result<wire::ArrayCreated, Failure> {
        let mipmap = self.arrays.mipmaps.get(req.mipmap).map_err(|_| invalid(format!("{:#x} is no mipmapped array of this session", req.mipmap)))?;
        let handle = *mipmap
            .levels
            .get(req.level as usize)
            .ok_or_else(|| invalid(format!("level {} of a mipmapped array of {} levels", req.level, mipmap.levels.len())))?;
        Ok(wire::ArrayCreated { handle })
    }

    fn copy_3d_from_host(&mut self, _cx: &mut CallCx, req: wire::Copy3DFromHost<'_>) -> Result<wire::Empty, Failure> {
        let extent = extent(&req.extent);
        let len = extent.packed_len().ok_or_else(|| invalid("3D copy size overflows"))?;
        if len != req.data.0.len() as u64 {
            return Err(invalid(format!("3D copy of {}x{}x{} bytes carries {} bytes", extent.width, extent.height, extent.depth, req.data.0.len())));
        }
        if len == 0 {
            return Ok(wire::Empty {});
        }
        let (dst, dev) = self.place(&req.dst, extent, "destination")?;
        let stream = self.stream(req.stream, dev)?;
        let data = if req.sync || req.stream == 0 {
            req.data.0.to_vec().into()
        } else {
            // Held until the stream runs the copy: bounded per session, as 1D uploads are.
            let (pending, max) = (self.pending_bytes.load(Ordering::Acquire), self.config.limits.max_pending_bytes);
            if pending.saturating_add(len as usize) > max {
                return Err(Failure::new(
                    Status::OUT_OF_MEMORY,
                    format!("{len}-byte upload refused: the session's queued uploads would pass {max} bytes (--max-pending-mib); synchronize first"),
                ));
            }
            self.check_session_memory(len, "buffered upload")?;
            HostData::from_buffer(PendingUpload::new(req.data.0.to_vec(), &self.pending_bytes))
        };
        self.backend.copy_3d_from_host(stream, dev, &dst, extent, data)?;
        if req.sync {
            self.sync_stream(stream)?;
        }
        Ok(wire::Empty {})
    }

    fn copy_3d_to_host<'a>(&'a mut self, cx: &mut CallCx, req: wire::Copy3DToHost) -> Result<Outcome<wire::MemcpyData<'a>>, Failure> {
        let extent = extent(&req.extent);
        let len = extent.packed_len().filter(|&n| n as usize <= MAX_BULK_LEN).ok_or_else(|| {
            invalid(format!(
                "3D copy of {}x{}x{} bytes exceeds the per-frame limit {MAX_BULK_LEN}; split it",
                extent.width, extent.height, extent.depth
            ))
        })?;
        if len == 0 {
            return Ok(wire::MemcpyData { data: Default::default() }.into());
        }
        let (src, dev) = self.place(&req.src, extent, "source")?;
        let stream = self.stream(req.stream, dev)?;
        self.check_session_memory(if cx.no_reply { 0 } else { len }, "device-to-host reply")?;
        let done = deferred_data_reply::<calls::Copy3DToHost>(&self.late, cx, len as usize)?;
        self.backend.copy_3d_to_host(stream, dev, &src, extent, done)?;
        Ok(Outcome::Later)
    }

    fn texture_create(&mut self, _cx: &mut CallCx, req: wire::TextureCreate) -> Result<wire::TextureCreated, Failure> {
        self.device(req.device)?;
        if self.arrays.textures.len() >= MAX_TEXTURES_PER_SESSION {
            return Err(Failure::new(Status::OUT_OF_MEMORY, format!("session holds the maximum of {MAX_TEXTURES_PER_SESSION} texture objects")));
        }
        let (resource, device) = self.texture_resource(&req)?;
        if req.address_mode.iter().any(|&m| m > MAX_ADDRESS_MODE) || req.filter_mode > MAX_FILTER_MODE || req.mipmap_filter_mode > MAX_FILTER_MODE {
            return Err(invalid(format!(
                "texture address modes {:?} / filter modes {}, {}",
                req.address_mode, req.filter_mode, req.mipmap_filter_mode
            )));
        }
        if req.flags & !TEXTURE_FLAGS != 0 {
            return Err(invalid(format!("texture flags {:#x} unknown", req.flags)));
        }
        // As ROCm: a view only of arrays, mipmaps only with normalized coordinates.
        if req.has_view && !matches!(resource, TextureResource::Array(_) | TextureResource::Mipmap(_)) {
            return Err(invalid("a resource view applies to arrays and mipmapped arrays only"));
        }
        if matches!(resource, TextureResource::Mipmap(_)) && req.flags & TEXTURE_NORMALIZED_COORDINATES == 0 {
            return Err(invalid("a texture over a mipmapped array needs normalized coordinates"));
        }
        if let TextureResource::Linear { ptr, .. } | TextureResource::Pitch2D { ptr, .. } = resource {
            let alignment = self.backend.device_properties(device)?.texture_alignment.max(1);
            if !ptr.0.is_multiple_of(alignment) {
                return Err(invalid(format!("texture memory {ptr} is not aligned to the device's texture alignment {alignment}")));
            }
        }
        if req.has_view && req.view_format > MAX_VIEW_FORMAT {
            return Err(invalid(format!("resource view format {:#x}", req.view_format)));
        }
        let texture = TextureDesc {
            address_mode: req.address_mode,
            filter_mode: req.filter_mode,
            flags: req.flags,
            max_anisotropy: req.max_anisotropy,
            mipmap_filter_mode: req.mipmap_filter_mode,
            mipmap_level_bias: req.mipmap_level_bias,
            min_mipmap_level_clamp: req.min_mipmap_level_clamp,
            max_mipmap_level_clamp: req.max_mipmap_level_clamp,
            border_color: req.border_color,
            reserved: [0; 12],
        };
        let view = req.has_view.then_some(ResourceViewDesc {
            format: req.view_format,
            width: req.view_width as usize,
            height: req.view_height as usize,
            depth: req.view_depth as usize,
            first_mipmap_level: req.view_first_mipmap_level,
            last_mipmap_level: req.view_last_mipmap_level,
            first_layer: req.view_first_layer,
            last_layer: req.view_last_layer,
            reserved: [0; 16],
        });
        let backend = self.backend.texture_create(device, &TextureSpec { resource, texture, view })?;
        let value = match backend {
            Some(value) => value,
            None => {
                self.arrays.texture_ids.check_capacity()?;
                self.arrays.texture_ids.insert(())
            }
        };
        self.arrays.textures.insert(value, TextureEntry { backend, device });
        Ok(wire::TextureCreated { texture: value })
    }

    fn texture_destroy(&mut self, _cx: &mut CallCx, req: wire::ArrayRef) -> Result<wire::Empty, Failure> {
        let entry =
            self.arrays.textures.remove(&req.handle).ok_or_else(|| invalid(format!("{:#x} is no texture object of this session", req.handle)))?;
        match entry.backend {
            Some(texture) => self.backend.texture_destroy(texture)?,
            None => drop(self.arrays.texture_ids.remove(req.handle)),
        }
        Ok(wire::Empty {})
    }

    fn copy_3d(&mut self, _cx: &mut CallCx, req: wire::Copy3D) -> Result<wire::Empty, Failure> {
        let Some((dst, src, extent, dev)) = self.copy_3d_places(&req)? else {
            return Ok(wire::Empty {});
        };
        if !req.sync && self.capture_copy_3d(req.stream, &req)? {
            return Ok(wire::Empty {});
        }
        let stream = self.stream(req.stream, dev)?;
        self.backend.copy_3d(stream, dev, &dst, &src, extent)?;
        if req.sync {
            self.sync_stream(stream)?;
        }
        Ok(wire::Empty {})
    }
}

impl Session {
    /// Both sides of a device/array 3D copy checked against the session's tables, with the
    /// destination's device; `None` for an empty box. (Also a graph's copy nodes, at every
    /// launch.)
    pub(super) fn copy_3d_places(&self, req: &wire::Copy3D) -> Result<Option<(Place, Place, Extent, DeviceIndex)>, Failure> {
        let extent = extent(&req.copy.extent);
        if extent.packed_len().ok_or_else(|| invalid("3D copy size overflows"))? == 0 {
            return Ok(None);
        }
        let (dst, dev) = self.place(&req.copy.dst, extent, "destination")?;
        let (src, _) = self.place(&req.copy.src, extent, "source")?;
        Ok(Some((dst, src, extent, dev)))
    }
}

/// A copy's box as the backends take it.
fn extent(e: &wire::CopyExtent) -> Extent {
    Extent { width: e.width, height: e.height, depth: e.depth }
}

impl Session {
    fn array(&self, handle: u64) -> Result<&ArrayEntry, Failure> {
        self.arrays.arrays.get(handle).map_err(|_| invalid(format!("{handle:#x} is no array of this session")))
    }

    fn create_array(&mut self, dev: DeviceIndex, desc: ArrayDesc) -> Result<u64, Failure> {
        self.arrays.arrays.check_capacity()?;
        let bytes = desc.byte_len().ok_or_else(|| invalid("array size overflows"))?;
        self.check_session_memory(bytes, "array")?;
        let handle = self.backend.array_create(dev, &desc)?;
        tracing::debug!(session = self.id, ?desc, "array created");
        Ok(self.arrays.arrays.insert(ArrayEntry { handle, device: dev, desc, mipmap: None }))
    }

    /// Frees a mipmapped array and its levels (already synchronised).
    fn destroy_mipmap(&mut self, mipmap: u64) {
        let Ok(entry) = self.arrays.mipmaps.remove(mipmap) else { return };
        let levels: Vec<ArrayHandle> = entry.levels.iter().filter_map(|&level| self.arrays.arrays.remove(level).ok()).map(|a| a.handle).collect();
        if let Err(e) = self.backend.mipmap_destroy(entry.handle, &levels) {
            tracing::warn!(session = self.id, %e, "freeing a mipmapped array failed");
        }
    }

    /// Resolves one side of a copy, checking that the box lies inside the array or inside
    /// one allocation of the session; answers the place and its device.
    fn place(&self, side: &wire::CopyPlace, extent: Extent, what: &str) -> Result<(Place, DeviceIndex), Failure> {
        let (x, y, z) = (side.x, side.y, side.z);
        let ends = |start: u64, len: u64| start.checked_add(len);
        if side.array != 0 {
            let entry = self.array(side.array)?;
            let desc = entry.desc;
            let inside = ends(x, extent.width).is_some_and(|e| e <= desc.row_bytes())
                && ends(y, extent.height).is_some_and(|e| e <= desc.rows())
                && ends(z, extent.depth).is_some_and(|e| e <= desc.slices());
            if !inside {
                return Err(invalid(format!(
                    "copy {what}: {}x{}x{} bytes at ({x}, {y}, {z}) do not fit an array of {}x{}x{} bytes",
                    extent.width,
                    extent.height,
                    extent.depth,
                    desc.row_bytes(),
                    desc.rows(),
                    desc.slices()
                )));
            }
            return Ok((Place::Array { array: entry.handle, desc, x, y, z }, entry.device));
        }
        if side.pitch < extent.width.saturating_add(x) {
            return Err(Failure::new(
                Status::INVALID_PITCH_VALUE,
                format!("copy {what}: pitch {} is less than {x} + {} bytes", side.pitch, extent.width),
            ));
        }
        // One slice at z = 0 does not depend on the slice height: at least the rows copied
        // (what CUDA's cuMemcpy3D asks of srcHeight/dstHeight).
        let height = if extent.depth == 1 && z == 0 { side.height.max(y.saturating_add(extent.height)) } else { side.height.max(1) };
        if extent.depth > 1 && side.height < extent.height.saturating_add(y) {
            return Err(invalid(format!("copy {what}: slices of {} rows cannot hold {y} + {} rows", side.height, extent.height)));
        }
        let overflow = || invalid(format!("copy {what}: offsets and pitch overflow"));
        let slice = side.pitch.checked_mul(height).ok_or_else(overflow)?;
        let start = z
            .checked_mul(slice)
            .and_then(|s| s.checked_add(y.checked_mul(side.pitch)?))
            .and_then(|s| s.checked_add(x))
            .and_then(|s| s.checked_add(side.ptr))
            .ok_or_else(overflow)?;
        let span = (extent.depth - 1)
            .checked_mul(slice)
            .and_then(|s| s.checked_add((extent.height - 1).checked_mul(side.pitch)?))
            .and_then(|s| s.checked_add(extent.width))
            .ok_or_else(overflow)?;
        let (_, info) = self.allocations.resolve(start, span, &format!("copy {what}"))?;
        Ok((Place::Device { ptr: DevicePtr(side.ptr), pitch: side.pitch, height, x, y, z }, info.device))
    }

    /// The resource a texture object reads, checked: an array or mipmapped array of this
    /// session, or memory inside one of its allocations; and the device it is on.
    fn texture_resource(&self, req: &wire::TextureCreate) -> Result<(TextureResource, DeviceIndex), Failure> {
        let element = || -> Result<u64, Failure> {
            let channel = format_channel_size(req.format).ok_or_else(|| invalid(format!("hipArray_Format {:#x}", req.format)))?;
            if !matches!(req.channels, 1 | 2 | 4) {
                return Err(invalid(format!("{} channels", req.channels)));
            }
            Ok(channel * u64::from(req.channels))
        };
        let ptr = DevicePtr(req.resource);
        match req.res_type {
            0 => {
                let entry = self.array(req.resource)?;
                Ok((TextureResource::Array(entry.handle), entry.device))
            }
            1 => {
                let entry = self
                    .arrays
                    .mipmaps
                    .get(req.resource)
                    .map_err(|_| invalid(format!("{:#x} is no mipmapped array of this session", req.resource)))?;
                Ok((TextureResource::Mipmap(entry.handle), entry.device))
            }
            2 => {
                element()?;
                if req.width == 0 {
                    return Err(invalid("a texture over 0 bytes"));
                }
                let (_, info) = self.allocations.resolve(req.resource, req.width, "texture memory")?;
                Ok((TextureResource::Linear { ptr, format: req.format, channels: req.channels, size: req.width }, info.device))
            }
            3 => {
                let row = req.width.checked_mul(element()?).ok_or_else(|| invalid("texture row overflows"))?;
                if row == 0 || req.height == 0 || req.pitch < row {
                    return Err(invalid(format!("pitched texture of {} x {} elements, pitch {}", req.width, req.height, req.pitch)));
                }
                let span =
                    (req.height - 1).checked_mul(req.pitch).and_then(|s| s.checked_add(row)).ok_or_else(|| invalid("texture size overflows"))?;
                let (_, info) = self.allocations.resolve(req.resource, span, "texture memory")?;
                let resource = TextureResource::Pitch2D {
                    ptr,
                    format: req.format,
                    channels: req.channels,
                    width: req.width,
                    height: req.height,
                    pitch: req.pitch,
                };
                Ok((resource, info.device))
            }
            other => Err(invalid(format!("resource type {other}"))),
        }
    }

    /// Frees the session's arrays on `device` (every device: `None`), for hipDeviceReset
    /// and the end of the session; texture objects over them first.
    pub(super) fn release_arrays(&mut self, device: Option<DeviceIndex>) {
        let on_device = |d: DeviceIndex| device.is_none_or(|want| want == d);
        let gone: Vec<u64> = self.arrays.textures.iter().filter(|(_, t)| on_device(t.device)).map(|(&v, _)| v).collect();
        for value in gone {
            if let Some(TextureEntry { backend: Some(texture), .. }) = self.arrays.textures.remove(&value) {
                if let Err(e) = self.backend.texture_destroy(texture) {
                    tracing::warn!(session = self.id, %e, "destroying a texture object during cleanup failed");
                }
            }
            let _ = self.arrays.texture_ids.remove(value);
        }
        // Mipmapped arrays first: their levels go with them, not one by one.
        for (mipmap, entry) in self.arrays.mipmaps.drain_where(|m| on_device(m.device)) {
            let levels: Vec<ArrayHandle> = self.arrays.arrays.drain_where(|a| a.mipmap == Some(mipmap)).into_iter().map(|(_, a)| a.handle).collect();
            if let Err(e) = self.backend.mipmap_destroy(entry.handle, &levels) {
                tracing::warn!(session = self.id, %e, "freeing a mipmapped array during cleanup failed");
            }
        }
        for (_, array) in self.arrays.arrays.drain_where(|a| on_device(a.device)) {
            if let Err(e) = self.backend.array_destroy(array.handle) {
                tracing::warn!(session = self.id, %e, "freeing an array during cleanup failed");
            }
        }
    }
}
