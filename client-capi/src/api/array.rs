//! Arrays, mipmapped arrays, every copy that names an array, and every 3D copy.
//!
//! An array lives on the worker (a session object); `hipArray_t` is its worker handle dressed
//! as a pointer (the header declares `hipArray` opaque, so no program reads through it). Its
//! descriptor is kept here too, so descriptor queries need no round trip. A mipmapped array
//! is a `hipMipmappedArray` in this process (the header declares its fields, so programs may
//! read them) whose `data` carries the worker handle.
//!
//! Every copy is one general 3D copy ([`copy_3d`]): a box of `depth` slices of `height` rows
//! of `width` bytes between two places, each host memory, pitched device memory or an array.
//! Host boxes travel packed (gathered here, scattered on the worker, and the reverse), split
//! into boxes that fit a copy chunk.

// Matches on the C ABI's enum constants, named as in C.
#![allow(non_upper_case_globals)]

use crate::abi::*;
use crate::handle::{spt, stream_id};
use crate::remote::with_conn;
use crate::state::allocations::is_device_pointer;
use crate::state::devices::{check_device, current_device};
use crate::state::families::Family;
use crate::state::sync::call_sync;
use client_core::published::FamilyTable;
use client_core::CallError;
use proto_core::limits::DEFAULT_COPY_CHUNK;
use proto_core::wire;
use proto_core::{calls, Bulk, Caller, Calls};
use std::collections::HashMap;
use std::ffi::{c_uint, c_ulonglong, c_void};
use std::sync::MutexGuard;

/// What this process knows of an array: its descriptor (the worker holds the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ArrayDesc {
    format: hipArray_Format,
    channels: u32,
    width: u64,
    height: u64,
    depth: u64,
    flags: u32,
}

impl ArrayDesc {
    fn element_size(&self) -> u64 {
        let channel = match self.format {
            HIP_AD_FORMAT_UNSIGNED_INT8 | HIP_AD_FORMAT_SIGNED_INT8 => 1,
            HIP_AD_FORMAT_UNSIGNED_INT16 | HIP_AD_FORMAT_SIGNED_INT16 | HIP_AD_FORMAT_HALF => 2,
            _ => 4,
        };
        channel * u64::from(self.channels)
    }

    fn level(&self, level: u32) -> Self {
        let shrink = |d: u64| if d == 0 { 0 } else { (d >> level.min(63)).max(1) };
        Self { width: shrink(self.width), height: shrink(self.height), depth: shrink(self.depth), ..*self }
    }

    /// The channel description of the format (`hipGetChannelDesc`).
    fn channel_desc(&self) -> hipChannelFormatDesc {
        let (bits, kind) = match self.format {
            HIP_AD_FORMAT_UNSIGNED_INT8 => (8, hipChannelFormatKindUnsigned),
            HIP_AD_FORMAT_UNSIGNED_INT16 => (16, hipChannelFormatKindUnsigned),
            HIP_AD_FORMAT_UNSIGNED_INT32 => (32, hipChannelFormatKindUnsigned),
            HIP_AD_FORMAT_SIGNED_INT8 => (8, hipChannelFormatKindSigned),
            HIP_AD_FORMAT_SIGNED_INT16 => (16, hipChannelFormatKindSigned),
            HIP_AD_FORMAT_SIGNED_INT32 => (32, hipChannelFormatKindSigned),
            HIP_AD_FORMAT_HALF => (16, hipChannelFormatKindFloat),
            _ => (32, hipChannelFormatKindFloat),
        };
        let channel = |i: u32| if i < self.channels { bits } else { 0 };
        hipChannelFormatDesc { x: channel(0), y: channel(1), z: channel(2), w: channel(3), f: kind }
    }
}

/// The array format of a channel description, as ROCm maps it: equal channel sizes from `x`
/// on (1, 2 or 4 channels) of 8, 16 or 32 bits; float only 16 or 32.
pub(crate) fn format_of(desc: &hipChannelFormatDesc) -> Result<(hipArray_Format, u32), CallError> {
    let bad = || {
        CallError::new(
            HipError::INVALID_VALUE,
            format!("channel format ({}, {}, {}, {}) kind {} has no array format", desc.x, desc.y, desc.z, desc.w, desc.f),
        )
    };
    let sizes = [desc.x, desc.y, desc.z, desc.w];
    let channels = sizes.iter().take_while(|&&s| s != 0).count();
    if channels == 0 || channels == 3 || sizes[channels..].iter().any(|&s| s != 0) || sizes[..channels].iter().any(|&s| s != desc.x) {
        return Err(bad());
    }
    let format = match (desc.f, desc.x) {
        (hipChannelFormatKindUnsigned, 8) => HIP_AD_FORMAT_UNSIGNED_INT8,
        (hipChannelFormatKindUnsigned, 16) => HIP_AD_FORMAT_UNSIGNED_INT16,
        (hipChannelFormatKindUnsigned, 32) => HIP_AD_FORMAT_UNSIGNED_INT32,
        (hipChannelFormatKindSigned, 8) => HIP_AD_FORMAT_SIGNED_INT8,
        (hipChannelFormatKindSigned, 16) => HIP_AD_FORMAT_SIGNED_INT16,
        (hipChannelFormatKindSigned, 32) => HIP_AD_FORMAT_SIGNED_INT32,
        (hipChannelFormatKindFloat, 16) => HIP_AD_FORMAT_HALF,
        (hipChannelFormatKindFloat, 32) => HIP_AD_FORMAT_FLOAT,
        _ => return Err(bad()),
    };
    Ok((format, channels as u32))
}

/// The arrays of this process (worker handle → descriptor, device) and its mipmapped arrays
/// (address of the `hipMipmappedArray` → worker handle, levels).
#[derive(Default)]
struct Tables {
    arrays: HashMap<u64, (ArrayDesc, u32)>,
    mipmaps: HashMap<usize, Mipmap>,
}

struct Mipmap {
    handle: u64,
    device: u32,
    desc: ArrayDesc,
    levels: u32,
    /// Level arrays handed out, forgotten with the mipmapped array.
    level_arrays: Vec<u64>,
}

const TABLES: FamilyTable<Tables> = FamilyTable::new(Family::Arrays.slot());

/// The arrays and mipmapped arrays of the worker that issued `handle`, kept by its session.
fn tables(handle: u64) -> MutexGuard<'static, Tables> {
    crate::remote::published_for_handle(handle).family(&TABLES)
}

/// The tables holding the mipmapped array at `mipmap` (an address this library handed out:
/// it names no worker, so each session is asked in turn).
fn tables_of_mipmap(mipmap: usize) -> Option<MutexGuard<'static, Tables>> {
    crate::remote::every_published().map(|p| p.family(&TABLES)).find(|t| t.mipmaps.contains_key(&mipmap))
}

/// Forgets the arrays of `device` (`hipDeviceReset` frees them on the worker). Mipmapped
/// arrays stay readable (programs may still look at them) but name nothing any more.
pub fn forget_device_arrays(device: u32) {
    if let Some(published) = crate::remote::published_if_known(device) {
        let mut t = published.family(&TABLES);
        t.arrays.retain(|_, (_, d)| *d != device);
        t.mipmaps.retain(|_, m| m.device != device);
    }
}

/// The channel description of `channels` channels of `format` (texture queries).
pub(crate) fn channel_desc_of(format: hipArray_Format, channels: u32) -> hipChannelFormatDesc {
    ArrayDesc { format, channels, width: 0, height: 0, depth: 0, flags: 0 }.channel_desc()
}

/// Whether `array` is an array of this process.
pub(crate) fn is_array(array: hipArray_const_t) -> bool {
    array_desc(array).is_ok()
}

/// The worker handle of a mipmapped array of this process.
pub(crate) fn mipmap_handle(mipmap: hipMipmappedArray_const_t) -> Option<u64> {
    tables_of_mipmap(mipmap as usize).and_then(|t| t.mipmaps.get(&(mipmap as usize)).map(|m| m.handle))
}

fn invalid(message: impl Into<String>) -> CallError {
    CallError::new(HipError::INVALID_VALUE, message)
}

fn array_desc(array: hipArray_const_t) -> Result<ArrayDesc, CallError> {
    if array.is_null() {
        return Err(invalid("array is NULL"));
    }
    tables(array as u64).arrays.get(&(array as u64)).map(|&(desc, _)| desc).ok_or_else(|| invalid(format!("{array:?} is no array of this process")))
}

fn create_array(out: *mut hipArray_t, desc: ArrayDesc) -> Result<(), CallError> {
    non_null!(out);
    let device = current_device();
    let req = wire::ArrayCreate {
        device,
        format: desc.format,
        channels: desc.channels,
        width: desc.width,
        height: desc.height,
        depth: desc.depth,
        flags: desc.flags,
        levels: 0,
    };
    let handle = with_conn(|c| c.array_create(req).map(|a| a.handle))?;
    tables(handle).arrays.insert(handle, (desc, device));
    try_out!(out, crate::handle::from_id(handle)?);
    Ok(())
}

fn destroy_array(array: hipArray_t) -> Result<(), CallError> {
    array_desc(array)?;
    call_sync(|c| c.array_destroy(wire::ArrayRef { handle: array as u64 }))?;
    tables(array as u64).arrays.remove(&(array as u64));
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipMallocArray(
    array: *mut hipArray_t,
    desc: *const hipChannelFormatDesc,
    width: usize,
    height: usize,
    flags: c_uint,
) -> hipError_t {
    hip_boundary!("hipMallocArray", {
        non_null!(array);
        non_null!(desc);
        // SAFETY: checked non-null; the caller passes a channel description.
        let (format, channels) = format_of(unsafe { &*desc })?;
        create_array(array, ArrayDesc { format, channels, width: width as u64, height: height as u64, depth: 0, flags })
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMalloc3DArray(array: *mut hipArray_t, desc: *const hipChannelFormatDesc, extent: hipExtent, flags: c_uint) -> hipError_t {
    hip_boundary!("hipMalloc3DArray", {
        non_null!(array);
        non_null!(desc);
        // SAFETY: checked non-null; the caller passes a channel description.
        let (format, channels) = format_of(unsafe { &*desc })?;
        let desc = ArrayDesc { format, channels, width: extent.width as u64, height: extent.height as u64, depth: extent.depth as u64, flags };
        create_array(array, desc)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipArrayCreate(array: *mut hipArray_t, desc: *const HIP_ARRAY_DESCRIPTOR) -> hipError_t {
    hip_boundary!("hipArrayCreate", {
        non_null!(array);
        non_null!(desc);
        // SAFETY: checked non-null; the caller passes a descriptor.
        let d = unsafe { *desc };
        create_array(
            array,
            ArrayDesc { format: d.Format, channels: d.NumChannels, width: d.Width as u64, height: d.Height as u64, depth: 0, flags: 0 },
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipArray3DCreate(array: *mut hipArray_t, desc: *const HIP_ARRAY3D_DESCRIPTOR) -> hipError_t {
    hip_boundary!("hipArray3DCreate", {
        non_null!(array);
        non_null!(desc);
        // SAFETY: checked non-null; the caller passes a descriptor.
        let d = unsafe { *desc };
        let desc = ArrayDesc {
            format: d.Format,
            channels: d.NumChannels,
            width: d.Width as u64,
            height: d.Height as u64,
            depth: d.Depth as u64,
            flags: d.Flags,
        };
        create_array(array, desc)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipArrayDestroy(array: hipArray_t) -> hipError_t {
    hip_boundary!("hipArrayDestroy", { destroy_array(array) })
}

#[no_mangle]
pub unsafe extern "C" fn hipFreeArray(array: hipArray_t) -> hipError_t {
    hip_boundary!("hipFreeArray", { destroy_array(array) })
}

#[no_mangle]
pub unsafe extern "C" fn hipArrayGetDescriptor(out: *mut HIP_ARRAY_DESCRIPTOR, array: hipArray_t) -> hipError_t {
    hip_boundary!("hipArrayGetDescriptor", {
        non_null!(out);
        let d = array_desc(array)?;
        if d.depth != 0 {
            // A 3D array has no 2D descriptor (as in CUDA and ROCm).
            return Err(invalid("hipArrayGetDescriptor of a 3D array"));
        }
        let desc = HIP_ARRAY_DESCRIPTOR { Width: d.width as usize, Height: d.height as usize, Format: d.format, NumChannels: d.channels };
        try_out!(out, desc);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipArray3DGetDescriptor(out: *mut HIP_ARRAY3D_DESCRIPTOR, array: hipArray_t) -> hipError_t {
    hip_boundary!("hipArray3DGetDescriptor", {
        non_null!(out);
        let d = array_desc(array)?;
        let desc = HIP_ARRAY3D_DESCRIPTOR {
            Width: d.width as usize,
            Height: d.height as usize,
            Depth: d.depth as usize,
            Format: d.format,
            NumChannels: d.channels,
            Flags: d.flags,
        };
        try_out!(out, desc);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipArrayGetInfo(
    desc: *mut hipChannelFormatDesc,
    extent: *mut hipExtent,
    flags: *mut c_uint,
    array: hipArray_t,
) -> hipError_t {
    hip_boundary!("hipArrayGetInfo", {
        let d = array_desc(array)?;
        // Each output is optional.
        // SAFETY: non-null outputs are writable (caller contract).
        unsafe {
            if !desc.is_null() {
                *desc = d.channel_desc();
            }
            if !extent.is_null() {
                *extent = hipExtent { width: d.width as usize, height: d.height as usize, depth: d.depth as usize };
            }
            if !flags.is_null() {
                *flags = d.flags;
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetChannelDesc(desc: *mut hipChannelFormatDesc, array: hipArray_const_t) -> hipError_t {
    hip_boundary!("hipGetChannelDesc", {
        non_null!(desc);
        let d = array_desc(array)?;
        try_out!(desc, d.channel_desc());
        Ok(())
    })
}

// ---- mipmapped arrays ---------------------------------------------------------------------

fn create_mipmap(out: *mut hipMipmappedArray_t, desc: ArrayDesc, levels: u32) -> Result<(), CallError> {
    non_null!(out);
    if levels == 0 {
        return Err(invalid("a mipmapped array of 0 levels"));
    }
    let device = current_device();
    let req = wire::ArrayCreate {
        device,
        format: desc.format,
        channels: desc.channels,
        width: desc.width,
        height: desc.height,
        depth: desc.depth,
        flags: desc.flags,
        levels,
    };
    let handle = with_conn(|c| c.array_create(req).map(|a| a.handle))?;
    let dim = |d: u64| d as c_uint;
    let mipmap = Box::into_raw(Box::new(hipMipmappedArray {
        data: handle as usize as *mut c_void,
        desc: desc.channel_desc(),
        type_: if desc.depth != 0 { hipResourceTypeArray } else { 0 },
        width: dim(desc.width),
        height: dim(desc.height),
        depth: dim(desc.depth),
        min_mipmap_level: 0,
        max_mipmap_level: levels - 1,
        flags: desc.flags,
        format: desc.format,
        num_channels: desc.channels,
    }));
    tables(handle).mipmaps.insert(mipmap as usize, Mipmap { handle, desc, device, levels, level_arrays: Vec::new() });
    try_out!(out, mipmap);
    Ok(())
}

fn destroy_mipmap(mipmap: hipMipmappedArray_t) -> Result<(), CallError> {
    let handle = tables_of_mipmap(mipmap as usize)
        .and_then(|t| t.mipmaps.get(&(mipmap as usize)).map(|m| m.handle))
        .ok_or_else(|| invalid(format!("{mipmap:?} is no mipmapped array of this process")))?;
    call_sync(|c| c.mipmap_destroy(wire::ArrayRef { handle }))?;
    let mut t = tables(handle);
    if let Some(m) = t.mipmaps.remove(&(mipmap as usize)) {
        for level in m.level_arrays {
            t.arrays.remove(&level);
        }
    }
    // SAFETY: `mipmap` came from Box::into_raw in create_mipmap and was in the table once.
    drop(unsafe { Box::from_raw(mipmap) });
    Ok(())
}

fn mipmap_level(out: *mut hipArray_t, mipmap: hipMipmappedArray_const_t, level: u32) -> Result<(), CallError> {
    non_null!(out);
    let (handle, desc, levels, device) = tables_of_mipmap(mipmap as usize)
        .and_then(|t| t.mipmaps.get(&(mipmap as usize)).map(|m| (m.handle, m.desc, m.levels, m.device)))
        .ok_or_else(|| invalid(format!("{mipmap:?} is no mipmapped array of this process")))?;
    if level >= levels {
        return Err(invalid(format!("level {level} of a mipmapped array of {levels} levels")));
    }
    let array = with_conn(|c| c.mipmap_get_level(wire::MipmapLevel { mipmap: handle, level }).map(|a| a.handle))?;
    let mut t = tables(handle);
    t.arrays.insert(array, (desc.level(level), device));
    if let Some(m) = t.mipmaps.get_mut(&(mipmap as usize)) {
        m.level_arrays.push(array);
    }
    drop(t);
    try_out!(out, crate::handle::from_id(array)?);
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipMallocMipmappedArray(
    mipmap: *mut hipMipmappedArray_t,
    desc: *const hipChannelFormatDesc,
    extent: hipExtent,
    levels: c_uint,
    flags: c_uint,
) -> hipError_t {
    hip_boundary!("hipMallocMipmappedArray", {
        non_null!(mipmap);
        non_null!(desc);
        // SAFETY: checked non-null; the caller passes a channel description.
        let (format, channels) = format_of(unsafe { &*desc })?;
        let desc = ArrayDesc { format, channels, width: extent.width as u64, height: extent.height as u64, depth: extent.depth as u64, flags };
        create_mipmap(mipmap, desc, levels)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMipmappedArrayCreate(mipmap: *mut hipMipmappedArray_t, desc: *mut HIP_ARRAY3D_DESCRIPTOR, levels: c_uint) -> hipError_t {
    hip_boundary!("hipMipmappedArrayCreate", {
        non_null!(mipmap);
        non_null!(desc);
        // SAFETY: checked non-null; the caller passes a descriptor.
        let d = unsafe { *desc };
        let desc = ArrayDesc {
            format: d.Format,
            channels: d.NumChannels,
            width: d.Width as u64,
            height: d.Height as u64,
            depth: d.Depth as u64,
            flags: d.Flags,
        };
        create_mipmap(mipmap, desc, levels)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMipmappedArrayDestroy(mipmap: hipMipmappedArray_t) -> hipError_t {
    hip_boundary!("hipMipmappedArrayDestroy", { destroy_mipmap(mipmap) })
}

#[no_mangle]
pub unsafe extern "C" fn hipFreeMipmappedArray(mipmap: hipMipmappedArray_t) -> hipError_t {
    hip_boundary!("hipFreeMipmappedArray", { destroy_mipmap(mipmap) })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetMipmappedArrayLevel(level_array: *mut hipArray_t, mipmap: hipMipmappedArray_const_t, level: c_uint) -> hipError_t {
    hip_boundary!("hipGetMipmappedArrayLevel", { mipmap_level(level_array, mipmap, level) })
}

#[no_mangle]
pub unsafe extern "C" fn hipMipmappedArrayGetLevel(level_array: *mut hipArray_t, mipmap: hipMipmappedArray_t, level: c_uint) -> hipError_t {
    hip_boundary!("hipMipmappedArrayGetLevel", { mipmap_level(level_array, mipmap, level) })
}

// ---- the general 3D copy ------------------------------------------------------------------

/// One side of a copy.
#[derive(Debug, Clone, Copy)]
enum Place {
    /// Host memory: rows `pitch` bytes apart, slices `pitch * height` apart from `ptr`.
    Host { ptr: *mut u8, pitch: u64, height: u64 },
    /// Device memory, laid out likewise.
    Device { ptr: u64, pitch: u64, height: u64 },
    /// An array.
    Array { handle: u64 },
}

/// A place and the offset of the box in it (`x` in bytes).
#[derive(Debug, Clone, Copy)]
struct At {
    place: Place,
    x: u64,
    y: u64,
    z: u64,
}

impl At {
    fn array(array: hipArray_const_t, x: u64, y: u64, z: u64) -> Result<Self, CallError> {
        array_desc(array)?;
        Ok(Self { place: Place::Array { handle: array as u64 }, x, y, z })
    }

    fn pointer(ptr: *const c_void, pitch: u64, height: u64, device: bool, x: u64, y: u64, z: u64) -> Self {
        let place = if device { Place::Device { ptr: ptr as u64, pitch, height } } else { Place::Host { ptr: ptr as *mut u8, pitch, height } };
        Self { place, x, y, z }
    }

    fn is_host(&self) -> bool {
        matches!(self.place, Place::Host { .. })
    }

    /// The wire fields of a non-host side, offset by `(dx, dy, dz)` more (a piece of the box).
    fn wire(&self, dx: u64, dy: u64, dz: u64) -> wire::CopyPlace {
        let (x, y, z) = (self.x + dx, self.y + dy, self.z + dz);
        match self.place {
            Place::Array { handle } => wire::CopyPlace { array: handle, x, y, z, ..Default::default() },
            Place::Device { ptr, pitch, height } => wire::CopyPlace { array: 0, ptr, pitch, height, x, y, z },
            Place::Host { .. } => unreachable!("host sides travel as bulk"),
        }
    }

    /// Address of byte `(dx, dy, dz)` of the box in a host side.
    fn host_byte(&self, dx: u64, dy: u64, dz: u64) -> *mut u8 {
        let Place::Host { ptr, pitch, height } = self.place else { unreachable!("not a host side") };
        let offset = (self.z + dz) * pitch * height.max(1) + (self.y + dy) * pitch + self.x + dx;
        ptr.wrapping_add(offset as usize)
    }
}

/// A piece of a copy's box: offset and size, in (bytes, rows, slices).
#[derive(Debug, Clone, Copy)]
struct Piece {
    dx: u64,
    dy: u64,
    dz: u64,
    width: u64,
    height: u64,
    depth: u64,
}

impl Piece {
    fn len(&self) -> usize {
        (self.width * self.height * self.depth) as usize
    }
}

/// Splits the box into pieces of at most `chunk` packed bytes: whole slices, else whole rows
/// of one slice, else parts of one row.
fn pieces(width: u64, height: u64, depth: u64, chunk: u64) -> Vec<Piece> {
    let mut out = Vec::new();
    if width * height <= chunk {
        let per = (chunk / (width * height)).max(1);
        let mut z = 0;
        while z < depth {
            let n = per.min(depth - z);
            out.push(Piece { dx: 0, dy: 0, dz: z, width, height, depth: n });
            z += n;
        }
    } else if width <= chunk {
        let per = chunk / width;
        for z in 0..depth {
            let mut y = 0;
            while y < height {
                let n = per.min(height - y);
                out.push(Piece { dx: 0, dy: y, dz: z, width, height: n, depth: 1 });
                y += n;
            }
        }
    } else {
        for z in 0..depth {
            for y in 0..height {
                let mut x = 0;
                while x < width {
                    let n = chunk.min(width - x);
                    out.push(Piece { dx: x, dy: y, dz: z, width: n, height: 1, depth: 1 });
                    x += n;
                }
            }
        }
    }
    out
}

/// HIP's checks of both sides of a 3D copy (pitches, slice heights, NULL host pointers).
fn check_sides(dst: &At, src: &At, width: u64, height: u64, depth: u64) -> Result<(), CallError> {
    check_sides_with(dst, src, width, height, depth, HipError::INVALID_PITCH_VALUE)
}

/// [`check_sides`] for the driver API's descriptors (`hip_Memcpy2D`, `HIP_MEMCPY3D`): ROCm
/// checks their rows against the pitches as memory regions (`validateMemoryObject`), so a row
/// wider than its pitch is `hipErrorInvalidValue` there, where the runtime API's
/// `hipMemcpy2D*` answer `hipErrorInvalidPitchValue`.
fn check_driver_sides(dst: &At, src: &At, width: u64, height: u64, depth: u64) -> Result<(), CallError> {
    if width == 0 || height == 0 || depth == 0 {
        return Ok(());
    }
    check_sides_with(dst, src, width, height, depth, HipError::INVALID_VALUE)
}

/// The box must fit each side: rows within the pitch (`pitch_code` otherwise), slices within
/// their rows, and an array's extent; ROCm refuses a box past an array's end at the call
/// (`validateImageObject`, `hipMemcpy2DValidateArray`: `hipErrorInvalidValue`), where a
/// posted copy would fail only at a later, unrelated call.
fn check_sides_with(dst: &At, src: &At, width: u64, height: u64, depth: u64, pitch_code: HipError) -> Result<(), CallError> {
    for (at, what) in [(dst, "destination"), (src, "source")] {
        if let Place::Array { handle } = at.place {
            check_array_box(handle, at, width, height, depth, what)?;
        }
        if let Place::Host { pitch, height: rows, .. } | Place::Device { pitch, height: rows, .. } = at.place {
            if pitch < at.x + width {
                return Err(CallError::new(pitch_code, format!("{what} pitch {pitch} is less than {} + {width} bytes", at.x)));
            }
            if depth > 1 && rows < at.y + height {
                return Err(invalid(format!("{what} slices of {rows} rows cannot hold {} + {height} rows", at.y)));
            }
        }
        if let Place::Host { ptr, .. } = at.place {
            if ptr.is_null() {
                return Err(invalid(format!("{what} is NULL")));
            }
        }
    }
    Ok(())
}

/// Refuses a box (`width` in bytes) that does not fit the array `handle` from `at`'s offset.
/// A 1D array has one row, a 2D array one slice; a layered 1D array's layers are its
/// slices and its rows are not counted (as ROCm's `isLayered1D`).
fn check_array_box(handle: u64, at: &At, width: u64, height: u64, depth: u64, what: &str) -> Result<(), CallError> {
    let desc = array_desc(crate::handle::from_id::<hipArray_const_t>(handle)?)?;
    let row_bytes = desc.width.saturating_mul(desc.element_size());
    let layered_1d = desc.flags & hipArrayLayered != 0 && desc.height == 0;
    let fits = |offset: u64, len: u64, size: u64| offset.checked_add(len).is_some_and(|end| end <= size);
    let rows_fit = layered_1d || fits(at.y, height, desc.height.max(1));
    if !fits(at.x, width, row_bytes) || !rows_fit || !fits(at.z, depth, desc.depth.max(1)) {
        return Err(invalid(format!(
            "the {what} box of {width} bytes x {height} rows x {depth} slices at ({} bytes, {}, {}) runs past the end of its {}x{}x{} array of {}-byte elements",
            at.x,
            at.y,
            at.z,
            desc.width,
            desc.height,
            desc.depth,
            desc.element_size()
        )));
    }
    Ok(())
}

/// Copies a box of `depth` slices of `height` rows of `width` bytes from `src` to `dst`;
/// `stream` is `None` for the synchronous API.
///
/// # Safety
/// Host sides must be valid for the box (reads from `src`, writes to `dst`).
unsafe fn copy_3d(dst: At, src: At, width: u64, height: u64, depth: u64, stream: Option<u64>) -> Result<(), CallError> {
    if width == 0 || height == 0 || depth == 0 {
        return Ok(());
    }
    check_sides(&dst, &src, width, height, depth)?;
    let sync = stream.is_none();
    let stream = stream.unwrap_or(0);
    match (dst.is_host(), src.is_host()) {
        (true, true) => {
            for z in 0..depth {
                for y in 0..height {
                    // SAFETY: both rows are `width` bytes of host memory (caller contract);
                    // they may overlap.
                    unsafe { std::ptr::copy(src.host_byte(0, y, z), dst.host_byte(0, y, z), width as usize) };
                }
            }
            Ok(())
        }
        (false, true) => {
            let pieces = pieces(width, height, depth, DEFAULT_COPY_CHUNK as u64);
            let last = pieces.len() - 1;
            let mut packed = Vec::new();
            for (i, p) in pieces.iter().enumerate() {
                packed.clear();
                for z in 0..p.depth {
                    for y in 0..p.height {
                        // SAFETY: the row lies in the source box (caller contract).
                        let row = unsafe { std::slice::from_raw_parts(src.host_byte(p.dx, p.dy + y, p.dz + z), p.width as usize) };
                        packed.extend_from_slice(row);
                    }
                }
                let req = wire::Copy3DFromHost {
                    dst: dst.wire(p.dx, p.dy, p.dz),
                    extent: wire::CopyExtent { width: p.width, height: p.height, depth: p.depth },
                    stream,
                    sync,
                    data: Bulk(&packed),
                };
                if sync && i == last {
                    call_sync(|c| c.copy_3d_from_host(req))?;
                } else {
                    with_conn(|c| c.post::<calls::Copy3DFromHost>(req))?;
                }
            }
            Ok(())
        }
        (true, false) => {
            for p in pieces(width, height, depth, DEFAULT_COPY_CHUNK as u64) {
                let req = wire::Copy3DToHost {
                    src: src.wire(p.dx, p.dy, p.dz),
                    extent: wire::CopyExtent { width: p.width, height: p.height, depth: p.depth },
                    stream,
                };
                with_conn(|c| {
                    let data = c.copy_3d_to_host(req)?;
                    let bytes = data.data.0;
                    if bytes.len() != p.len() {
                        return Err(CallError::new(HipError::UNKNOWN, format!("worker answered {} bytes for a {}-byte box", bytes.len(), p.len())));
                    }
                    for (i, row) in bytes.chunks(p.width as usize).enumerate() {
                        let (yy, zz) = (i as u64 % p.height, i as u64 / p.height);
                        // SAFETY: the row lies in the destination box (caller contract).
                        unsafe { std::ptr::copy_nonoverlapping(row.as_ptr(), dst.host_byte(p.dx, p.dy + yy, p.dz + zz), row.len()) };
                    }
                    Ok(())
                })?;
            }
            if sync {
                call_sync(|_| Ok(()))?;
            }
            Ok(())
        }
        (false, false) => {
            let req = device_copy(&dst, &src, [width, height, depth], stream, sync);
            if sync {
                call_sync(|c| c.copy_3d(req))
            } else {
                with_conn(|c| c.post::<calls::Copy3D>(req))
            }
        }
    }
}

/// `hipMemcpyDeviceToDeviceNoCU`, a device-to-device copy to ROCm.
const MEMCPY_DEVICE_TO_DEVICE_NO_CU: hipMemcpyKind = 1024;

/// Checks a copy kind (ROCm's order: before anything else).
fn check_kind(kind: hipMemcpyKind) -> Result<hipMemcpyKind, CallError> {
    let kind = if kind == MEMCPY_DEVICE_TO_DEVICE_NO_CU { hipMemcpyDeviceToDevice } else { kind };
    if kind > hipMemcpyDefault {
        return Err(CallError::new(HipError::INVALID_MEMCPY_DIRECTION, format!("hipMemcpyKind {kind} is not a copy direction")));
    }
    Ok(kind)
}

/// Whether the pointer side of a copy of `kind` is device memory: a known device pointer
/// always is (it cannot be read here); otherwise the kind says, or for `hipMemcpyDefault`
/// the pointer.
fn pointer_is_device(ptr: *const c_void, kind: hipMemcpyKind, is_source: bool) -> bool {
    if is_device_pointer(ptr as u64) {
        return true;
    }
    match kind {
        hipMemcpyDeviceToDevice => true,
        hipMemcpyDeviceToHost => is_source,
        hipMemcpyHostToDevice => !is_source,
        _ => false,
    }
}

fn stream_of(stream: Option<hipStream_t>) -> Option<u64> {
    stream.map(stream_id)
}

// ---- 2D and 1D copies naming an array -----------------------------------------------------

#[allow(clippy::too_many_arguments)] // hipMemcpy2DToArray's own parameters
unsafe fn copy_2d_to_array(
    dst: hipArray_t,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
    stream: Option<hipStream_t>,
) -> Result<(), CallError> {
    null_array_is_invalid_handle(dst)?;
    let kind = check_kind(kind)?;
    non_null!(src);
    let dst = At::array(dst, w_offset as u64, h_offset as u64, 0)?;
    if spitch < width {
        return Err(CallError::new(HipError::INVALID_PITCH_VALUE, format!("source pitch {spitch} is less than the row width {width}")));
    }
    let src = At::pointer(src, spitch as u64, height as u64, pointer_is_device(src, kind, true), 0, 0, 0);
    // SAFETY: forwarded caller contract.
    unsafe { copy_3d(dst, src, width as u64, height as u64, 1, stream_of(stream)) }
}

/// ROCm's 2D copies to and from arrays answer a NULL array with `hipErrorInvalidHandle`.
fn null_array_is_invalid_handle(array: hipArray_const_t) -> Result<(), CallError> {
    if array.is_null() {
        return Err(CallError::new(HipError::INVALID_HANDLE, "the array is NULL"));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)] // hipMemcpy2DFromArray's own parameters
unsafe fn copy_2d_from_array(
    dst: *mut c_void,
    dpitch: usize,
    src: hipArray_const_t,
    w_offset: usize,
    h_offset: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
    stream: Option<hipStream_t>,
) -> Result<(), CallError> {
    null_array_is_invalid_handle(src)?;
    let kind = check_kind(kind)?;
    non_null!(dst);
    let src = At::array(src, w_offset as u64, h_offset as u64, 0)?;
    if dpitch < width {
        return Err(CallError::new(HipError::INVALID_PITCH_VALUE, format!("destination pitch {dpitch} is less than the row width {width}")));
    }
    let dst = At::pointer(dst, dpitch as u64, height as u64, pointer_is_device(dst, kind, false), 0, 0, 0);
    // SAFETY: forwarded caller contract.
    unsafe { copy_3d(dst, src, width as u64, height as u64, 1, stream_of(stream)) }
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2DToArray(
    dst: hipArray_t,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpy2DToArray", { unsafe { copy_2d_to_array(dst, w_offset, h_offset, src, spitch, width, height, kind, None) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2DToArray_spt(
    dst: hipArray_t,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    // SAFETY: forwarded caller contract. Synchronous on the per-thread default stream, which
    // is the device's default stream here.
    hip_boundary!("hipMemcpy2DToArray_spt", { unsafe { copy_2d_to_array(dst, w_offset, h_offset, src, spitch, width, height, kind, None) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2DToArrayAsync(
    dst: hipArray_t,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    hip_boundary!("hipMemcpy2DToArrayAsync", {
        // SAFETY: forwarded caller contract.
        unsafe { copy_2d_to_array(dst, w_offset, h_offset, src, spitch, width, height, kind, Some(stream)) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2DToArrayAsync_spt(
    dst: hipArray_t,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    hip_boundary!("hipMemcpy2DToArrayAsync_spt", {
        // SAFETY: forwarded caller contract.
        unsafe { copy_2d_to_array(dst, w_offset, h_offset, src, spitch, width, height, kind, Some(spt(stream))) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2DFromArray(
    dst: *mut c_void,
    dpitch: usize,
    src: hipArray_const_t,
    w_offset: usize,
    h_offset: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpy2DFromArray", { unsafe { copy_2d_from_array(dst, dpitch, src, w_offset, h_offset, width, height, kind, None) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2DFromArray_spt(
    dst: *mut c_void,
    dpitch: usize,
    src: hipArray_const_t,
    w_offset: usize,
    h_offset: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpy2DFromArray_spt", { unsafe { copy_2d_from_array(dst, dpitch, src, w_offset, h_offset, width, height, kind, None) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2DFromArrayAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: hipArray_const_t,
    w_offset: usize,
    h_offset: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    hip_boundary!("hipMemcpy2DFromArrayAsync", {
        // SAFETY: forwarded caller contract.
        unsafe { copy_2d_from_array(dst, dpitch, src, w_offset, h_offset, width, height, kind, Some(stream)) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2DFromArrayAsync_spt(
    dst: *mut c_void,
    dpitch: usize,
    src: hipArray_const_t,
    w_offset: usize,
    h_offset: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    hip_boundary!("hipMemcpy2DFromArrayAsync_spt", {
        // SAFETY: forwarded caller contract.
        unsafe { copy_2d_from_array(dst, dpitch, src, w_offset, h_offset, width, height, kind, Some(spt(stream))) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy2DArrayToArray(
    dst: hipArray_t,
    w_offset_dst: usize,
    h_offset_dst: usize,
    src: hipArray_const_t,
    w_offset_src: usize,
    h_offset_src: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    hip_boundary!("hipMemcpy2DArrayToArray", {
        check_kind(kind)?;
        let dst = At::array(dst, w_offset_dst as u64, h_offset_dst as u64, 0)?;
        let src = At::array(src, w_offset_src as u64, h_offset_src as u64, 0)?;
        // SAFETY: no host side.
        unsafe { copy_3d(dst, src, width as u64, height as u64, 1, None) }
    })
}

/// The box of a linear run of `count` bytes at `(w_offset, h_offset)` of an array (the
/// deprecated `hipMemcpyToArray`/`hipMemcpyFromArray`): inside the row, or whole rows from
/// the row's start.
fn linear_run(array: hipArray_const_t, w_offset: usize, count: usize) -> Result<(u64, u64), CallError> {
    let d = array_desc(array)?;
    let row = d.width * d.element_size();
    let (w_offset, count) = (w_offset as u64, count as u64);
    if w_offset + count <= row {
        Ok((count, 1))
    } else if w_offset == 0 && count.is_multiple_of(row) {
        Ok((row, count / row))
    } else {
        Err(invalid(format!("{count} bytes at byte {w_offset} of {row}-byte rows are not a row part or whole rows")))
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyToArray(
    dst: hipArray_t,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    count: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    hip_boundary!("hipMemcpyToArray", {
        let (width, rows) = linear_run(dst, w_offset, count)?;
        // SAFETY: forwarded caller contract.
        unsafe { copy_2d_to_array(dst, w_offset, h_offset, src, width as usize, width as usize, rows as usize, kind, None) }
    })
}

unsafe fn memcpy_from_array(
    dst: *mut c_void,
    src: hipArray_const_t,
    w_offset: usize,
    h_offset: usize,
    count: usize,
    kind: hipMemcpyKind,
) -> Result<(), CallError> {
    let (width, rows) = linear_run(src, w_offset, count)?;
    // SAFETY: forwarded caller contract.
    unsafe { copy_2d_from_array(dst, width as usize, src, w_offset, h_offset, width as usize, rows as usize, kind, None) }
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyFromArray(
    dst: *mut c_void,
    src: hipArray_const_t,
    w_offset: usize,
    h_offset: usize,
    count: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpyFromArray", { unsafe { memcpy_from_array(dst, src, w_offset, h_offset, count, kind) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyFromArray_spt(
    dst: *mut c_void,
    src: hipArray_const_t,
    w_offset: usize,
    h_offset: usize,
    count: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpyFromArray_spt", { unsafe { memcpy_from_array(dst, src, w_offset, h_offset, count, kind) } })
}

/// A 1D copy at byte offsets of arrays (the driver API's `AtoX`/`XtoA`): the run must lie in
/// the array's first row, as in ROCm.
unsafe fn copy_1d(dst: At, src: At, count: usize, stream: Option<hipStream_t>) -> Result<(), CallError> {
    // SAFETY: forwarded caller contract.
    unsafe { copy_3d(dst, src, count as u64, 1, 1, stream_of(stream)) }
}

fn host(ptr: *const c_void) -> Result<At, CallError> {
    non_null!(ptr);
    Ok(At::pointer(ptr, u64::MAX, 1, false, 0, 0, 0))
}

fn device(ptr: hipDeviceptr_t) -> Result<At, CallError> {
    non_null!(ptr);
    Ok(At::pointer(ptr, u64::MAX, 1, true, 0, 0, 0))
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyAtoA(dst: hipArray_t, dst_offset: usize, src: hipArray_t, src_offset: usize, count: usize) -> hipError_t {
    hip_boundary!("hipMemcpyAtoA", {
        let (dst, src) = (At::array(dst, dst_offset as u64, 0, 0)?, At::array(src, src_offset as u64, 0, 0)?);
        // SAFETY: no host side.
        unsafe { copy_1d(dst, src, count, None) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyAtoD(dst: hipDeviceptr_t, src: hipArray_t, src_offset: usize, count: usize) -> hipError_t {
    hip_boundary!("hipMemcpyAtoD", {
        let (dst, src) = (device(dst)?, At::array(src, src_offset as u64, 0, 0)?);
        // SAFETY: no host side.
        unsafe { copy_1d(dst, src, count, None) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyDtoA(dst: hipArray_t, dst_offset: usize, src: hipDeviceptr_t, count: usize) -> hipError_t {
    hip_boundary!("hipMemcpyDtoA", {
        let (dst, src) = (At::array(dst, dst_offset as u64, 0, 0)?, device(src)?);
        // SAFETY: no host side.
        unsafe { copy_1d(dst, src, count, None) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyAtoH(dst: *mut c_void, src: hipArray_t, src_offset: usize, count: usize) -> hipError_t {
    hip_boundary!("hipMemcpyAtoH", {
        let (dst, src) = (host(dst)?, At::array(src, src_offset as u64, 0, 0)?);
        // SAFETY: `dst` holds `count` writable bytes (caller contract).
        unsafe { copy_1d(dst, src, count, None) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyAtoHAsync(dst: *mut c_void, src: hipArray_t, src_offset: usize, count: usize, stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipMemcpyAtoHAsync", {
        let (dst, src) = (host(dst)?, At::array(src, src_offset as u64, 0, 0)?);
        // SAFETY: `dst` holds `count` writable bytes (caller contract).
        unsafe { copy_1d(dst, src, count, Some(stream)) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyHtoA(dst: hipArray_t, dst_offset: usize, src: *const c_void, count: usize) -> hipError_t {
    hip_boundary!("hipMemcpyHtoA", {
        let (dst, src) = (At::array(dst, dst_offset as u64, 0, 0)?, host(src)?);
        // SAFETY: `src` holds `count` readable bytes (caller contract).
        unsafe { copy_1d(dst, src, count, None) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyHtoAAsync(dst: hipArray_t, dst_offset: usize, src: *const c_void, count: usize, stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipMemcpyHtoAAsync", {
        let (dst, src) = (At::array(dst, dst_offset as u64, 0, 0)?, host(src)?);
        // SAFETY: `src` holds `count` readable bytes (caller contract).
        unsafe { copy_1d(dst, src, count, Some(stream)) }
    })
}

// ---- hipMemcpy3D and the driver's parameter blocks ----------------------------------------

/// The two sides and the box (width in bytes) of a `hipMemcpy3DParms`, checked as ROCm
/// checks them: extent in elements where an array takes part (the destination's element
/// size when both are arrays), else in bytes; positions in elements for arrays, bytes for
/// pitched memory.
///
/// # Safety
/// `p` must follow HIP's contract for `hipMemcpy3DParms`.
unsafe fn parse_3d(p: *const hipMemcpy3DParms) -> Result<(At, At, u64, u64, u64), CallError> {
    non_null!(p);
    // SAFETY: checked non-null; the caller passes the parameters.
    let p = unsafe { *p };
    let kind = check_kind(p.kind)?;
    if (!p.srcArray.is_null() && !p.srcPtr.ptr.is_null()) || (!p.dstArray.is_null() && !p.dstPtr.ptr.is_null()) {
        return Err(invalid("hipMemcpy3D names both an array and a pointer for one side"));
    }
    if (p.srcArray.is_null() && p.srcPtr.ptr.is_null()) || (p.dstArray.is_null() && p.dstPtr.ptr.is_null()) {
        return Err(invalid("hipMemcpy3D names neither an array nor a pointer for one side"));
    }
    let src_elem = (!p.srcArray.is_null()).then(|| array_desc(p.srcArray).map(|d| d.element_size())).transpose()?;
    let dst_elem = (!p.dstArray.is_null()).then(|| array_desc(p.dstArray).map(|d| d.element_size())).transpose()?;
    if let (Some(s), Some(d)) = (src_elem, dst_elem) {
        if s != d {
            return Err(invalid(format!("arrays of {s}- and {d}-byte elements")));
        }
    }
    let width = p.extent.width as u64 * dst_elem.or(src_elem).unwrap_or(1);
    let side = |array: hipArray_t, pos: hipPos, ptr: hipPitchedPtr, elem: Option<u64>, is_source: bool| -> Result<At, CallError> {
        match elem {
            Some(elem) => At::array(array, pos.x as u64 * elem, pos.y as u64, pos.z as u64),
            None => {
                let device = pointer_is_device(ptr.ptr, kind, is_source);
                Ok(At::pointer(ptr.ptr, ptr.pitch as u64, ptr.ysize as u64, device, pos.x as u64, pos.y as u64, pos.z as u64))
            }
        }
    };
    let dst = side(p.dstArray, p.dstPos, p.dstPtr, dst_elem, false)?;
    let src = side(p.srcArray, p.srcPos, p.srcPtr, src_elem, true)?;
    Ok((dst, src, width, p.extent.height as u64, p.extent.depth as u64))
}

/// `hipMemcpy3D*`.
///
/// # Safety
/// `p` must follow HIP's contract for `hipMemcpy3DParms`.
unsafe fn memcpy_3d(p: *const hipMemcpy3DParms, stream: Option<hipStream_t>) -> Result<(), CallError> {
    // SAFETY: forwarded caller contract.
    let (dst, src, width, height, depth) = unsafe { parse_3d(p)? };
    // SAFETY: forwarded caller contract.
    unsafe { copy_3d(dst, src, width, height, depth, stream_of(stream)) }
}

/// A graph's copy node (`hipGraphAddMemcpyNode`): the checked copy between device memory
/// and arrays as the worker's 3D copy has it (stream 0). A side in host memory is
/// `hipErrorNotSupported`: the bytes would have to cross at every launch.
///
/// # Safety
/// `p` must follow HIP's contract for `hipMemcpy3DParms`.
pub(crate) unsafe fn graph_copy_3d(p: *const hipMemcpy3DParms) -> Result<wire::Copy3D, CallError> {
    // SAFETY: forwarded caller contract.
    let (dst, src, width, height, depth) = unsafe { parse_3d(p)? };
    graph_copy(dst, src, width, height, depth)
}

/// A graph's copy node from a driver-API descriptor (`hipDrvGraphAddMemcpyNode`), checked
/// as [`graph_copy_3d`].
///
/// # Safety
/// `p` must follow HIP's contract for `HIP_MEMCPY3D`.
pub(crate) unsafe fn graph_copy_drv(p: *const HIP_MEMCPY3D) -> Result<wire::Copy3D, CallError> {
    non_null!(p);
    // SAFETY: checked non-null; the caller passes the parameters.
    let p = unsafe { *p };
    if p.srcLOD != 0 || p.dstLOD != 0 {
        return Err(invalid("HIP_MEMCPY3D level of detail must be 0"));
    }
    let src = driver_side(p.srcMemoryType, p.srcHost, p.srcDevice, p.srcArray, p.srcPitch, p.srcHeight, p.srcXInBytes, p.srcY, p.srcZ)?;
    let dst = driver_side(p.dstMemoryType, p.dstHost, p.dstDevice, p.dstArray, p.dstPitch, p.dstHeight, p.dstXInBytes, p.dstY, p.dstZ)?;
    graph_copy(dst, src, p.WidthInBytes as u64, p.Height as u64, p.Depth as u64)
}

/// Bytes per element of an array of this process.
pub(crate) fn array_element_size(array: hipArray_const_t) -> Result<u64, CallError> {
    array_desc(array).map(|d| d.element_size())
}

fn graph_copy(dst: At, src: At, width: u64, height: u64, depth: u64) -> Result<wire::Copy3D, CallError> {
    if width == 0 || height == 0 || depth == 0 {
        return Err(invalid(format!("copy node of an empty box ({width} x {height} x {depth})")));
    }
    check_sides(&dst, &src, width, height, depth)?;
    if dst.is_host() || src.is_host() {
        return Err(CallError::new(HipError::NOT_SUPPORTED, "graph copy nodes copy between device memory and arrays only for now"));
    }
    Ok(device_copy(&dst, &src, [width, height, depth], 0, false))
}

/// The worker-side copy of a box (width in bytes, height, depth) between device memory and arrays.
fn device_copy(dst: &At, src: &At, [width, height, depth]: [u64; 3], stream: u64, sync: bool) -> wire::Copy3D {
    let extent = wire::CopyExtent { width, height, depth };
    wire::Copy3D { copy: wire::CopyBox { dst: dst.wire(0, 0, 0), src: src.wire(0, 0, 0), extent }, stream, sync }
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy3D(p: *const hipMemcpy3DParms) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpy3D", { unsafe { memcpy_3d(p, None) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy3D_spt(p: *const hipMemcpy3DParms) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpy3D_spt", { unsafe { memcpy_3d(p, None) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy3DAsync(p: *const hipMemcpy3DParms, stream: hipStream_t) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpy3DAsync", { unsafe { memcpy_3d(p, Some(stream)) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy3DAsync_spt(p: *const hipMemcpy3DParms, stream: hipStream_t) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpy3DAsync_spt", { unsafe { memcpy_3d(p, Some(spt(stream))) } })
}

/// One side of a driver-API copy (`hip_Memcpy2D`, `HIP_MEMCPY3D`) by its memory type.
#[allow(clippy::too_many_arguments)] // the descriptor's fields of one side
fn driver_side(
    memory_type: hipMemoryType,
    host: *const c_void,
    device: hipDeviceptr_t,
    array: hipArray_t,
    pitch: usize,
    height: usize,
    x: usize,
    y: usize,
    z: usize,
) -> Result<At, CallError> {
    let (x, y, z) = (x as u64, y as u64, z as u64);
    match memory_type {
        hipMemoryTypeHost => {
            non_null!(host);
            Ok(At::pointer(host, pitch as u64, height as u64, false, x, y, z))
        }
        hipMemoryTypeDevice => {
            non_null!(device);
            Ok(At::pointer(device, pitch as u64, height as u64, true, x, y, z))
        }
        hipMemoryTypeArray => At::array(array, x, y, z),
        hipMemoryTypeUnified => {
            let ptr = if device.is_null() { host } else { device as *const c_void };
            non_null!(ptr);
            Ok(At::pointer(ptr, pitch as u64, height as u64, is_device_pointer(ptr as u64), x, y, z))
        }
        other => Err(invalid(format!("hipMemoryType {other} is not a copy operand"))),
    }
}

unsafe fn memcpy_param_2d(p: *const hip_Memcpy2D, stream: Option<hipStream_t>) -> Result<(), CallError> {
    non_null!(p);
    // SAFETY: checked non-null; the caller passes the parameters.
    let p = unsafe { *p };
    let src = driver_side(p.srcMemoryType, p.srcHost, p.srcDevice, p.srcArray, p.srcPitch, p.Height, p.srcXInBytes, p.srcY, 0)?;
    let dst = driver_side(p.dstMemoryType, p.dstHost, p.dstDevice, p.dstArray, p.dstPitch, p.Height, p.dstXInBytes, p.dstY, 0)?;
    check_driver_sides(&dst, &src, p.WidthInBytes as u64, p.Height as u64, 1)?;
    // SAFETY: forwarded caller contract.
    unsafe { copy_3d(dst, src, p.WidthInBytes as u64, p.Height as u64, 1, stream_of(stream)) }
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyParam2D(p: *const hip_Memcpy2D) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpyParam2D", { unsafe { memcpy_param_2d(p, None) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyParam2DAsync(p: *const hip_Memcpy2D, stream: hipStream_t) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpyParam2DAsync", { unsafe { memcpy_param_2d(p, Some(stream)) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipDrvMemcpy2DUnaligned(p: *const hip_Memcpy2D) -> hipError_t {
    // SAFETY: forwarded caller contract. Alignment never restricts copies here.
    hip_boundary!("hipDrvMemcpy2DUnaligned", { unsafe { memcpy_param_2d(p, None) } })
}

unsafe fn drv_memcpy_3d(p: *const HIP_MEMCPY3D, stream: Option<hipStream_t>) -> Result<(), CallError> {
    non_null!(p);
    // SAFETY: checked non-null; the caller passes the parameters.
    let p = unsafe { *p };
    if p.srcLOD != 0 || p.dstLOD != 0 {
        return Err(invalid("HIP_MEMCPY3D level of detail must be 0"));
    }
    let src = driver_side(p.srcMemoryType, p.srcHost, p.srcDevice, p.srcArray, p.srcPitch, p.srcHeight, p.srcXInBytes, p.srcY, p.srcZ)?;
    let dst = driver_side(p.dstMemoryType, p.dstHost, p.dstDevice, p.dstArray, p.dstPitch, p.dstHeight, p.dstXInBytes, p.dstY, p.dstZ)?;
    check_driver_sides(&dst, &src, p.WidthInBytes as u64, p.Height as u64, p.Depth as u64)?;
    // SAFETY: forwarded caller contract.
    unsafe { copy_3d(dst, src, p.WidthInBytes as u64, p.Height as u64, p.Depth as u64, stream_of(stream)) }
}

#[no_mangle]
pub unsafe extern "C" fn hipDrvMemcpy3D(p: *const HIP_MEMCPY3D) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipDrvMemcpy3D", { unsafe { drv_memcpy_3d(p, None) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipDrvMemcpy3DAsync(p: *const HIP_MEMCPY3D, stream: hipStream_t) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipDrvMemcpy3DAsync", { unsafe { drv_memcpy_3d(p, Some(stream)) } })
}

unsafe fn memcpy_3d_peer(p: *const hipMemcpy3DPeerParms, stream: Option<hipStream_t>) -> Result<(), CallError> {
    non_null!(p);
    // SAFETY: checked non-null; the caller passes the parameters.
    let q = unsafe { *p };
    check_device(q.srcDevice)?;
    check_device(q.dstDevice)?;
    let params = hipMemcpy3DParms {
        srcArray: q.srcArray,
        srcPos: q.srcPos,
        srcPtr: q.srcPtr,
        dstArray: q.dstArray,
        dstPos: q.dstPos,
        dstPtr: q.dstPtr,
        extent: q.extent,
        kind: hipMemcpyDeviceToDevice,
    };
    // SAFETY: both sides are device memory or arrays.
    unsafe { memcpy_3d(&params, stream) }
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy3DPeer(p: *mut hipMemcpy3DPeerParms) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpy3DPeer", { unsafe { memcpy_3d_peer(p, None) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy3DPeerAsync(p: *mut hipMemcpy3DPeerParms, stream: hipStream_t) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpy3DPeerAsync", { unsafe { memcpy_3d_peer(p, Some(stream)) } })
}

/// `hipMemcpy3DBatchOp` flags: default and `hipMemcpyFlagPreferOverlapWithCompute`.
const BATCH_OP_FLAGS: c_uint = 0x1;

/// One operation of `hipMemcpy3DBatchAsync` as `hipMemcpy3DParms` (ROCm's mapping): the
/// extent in elements of the array taking part (bytes between pointers); a pointer operand's
/// rows are `rowLength` elements (the extent's width when 0), its layers `layerHeight` rows.
fn batch_params(op: &hipMemcpy3DBatchOp) -> Result<hipMemcpy3DParms, CallError> {
    if !(hipMemcpySrcAccessOrderStream..=hipMemcpySrcAccessOrderAny).contains(&op.srcAccessOrder) || op.flags & !BATCH_OP_FLAGS != 0 {
        return Err(invalid(format!("batch operation access order {} / flags {:#x}", op.srcAccessOrder, op.flags)));
    }
    let array_of = |o: &hipMemcpy3DOperand| -> Option<hipArray_t> {
        if o.type_ == hipMemcpyOperandTypeArray {
            // SAFETY: the union member the type names.
            Some(unsafe { o.op.array.array })
        } else {
            None
        }
    };
    let elem = match array_of(&op.dst).or(array_of(&op.src)) {
        Some(array) => array_desc(array)?.element_size() as usize,
        None => 1,
    };
    let mut params = hipMemcpy3DParms {
        srcArray: std::ptr::null_mut(),
        srcPos: hipPos { x: 0, y: 0, z: 0 },
        srcPtr: hipPitchedPtr { ptr: std::ptr::null_mut(), pitch: 0, xsize: 0, ysize: 0 },
        dstArray: std::ptr::null_mut(),
        dstPos: hipPos { x: 0, y: 0, z: 0 },
        dstPtr: hipPitchedPtr { ptr: std::ptr::null_mut(), pitch: 0, xsize: 0, ysize: 0 },
        extent: op.extent,
        kind: hipMemcpyDefault,
    };
    for (operand, is_source) in [(&op.src, true), (&op.dst, false)] {
        let (array, pos, ptr) = match operand.type_ {
            hipMemcpyOperandTypeArray => {
                // SAFETY: the union member the type names.
                let a = unsafe { operand.op.array };
                (a.array, hipPos { x: a.offset.x, y: a.offset.y, z: a.offset.z }, None)
            }
            hipMemcpyOperandTypePointer => {
                // SAFETY: the union member the type names.
                let p = unsafe { operand.op.ptr };
                let row = if p.rowLength == 0 { op.extent.width } else { p.rowLength };
                let layer = if p.layerHeight == 0 { op.extent.height } else { p.layerHeight };
                let pitched = hipPitchedPtr { ptr: p.ptr, pitch: row * elem, xsize: row, ysize: layer };
                (std::ptr::null_mut(), hipPos { x: 0, y: 0, z: 0 }, Some(pitched))
            }
            other => return Err(invalid(format!("hipMemcpy3DOperandType {other}"))),
        };
        let pitched = ptr.unwrap_or(params.srcPtr);
        if is_source {
            (params.srcArray, params.srcPos, params.srcPtr) = (array, pos, pitched);
        } else {
            (params.dstArray, params.dstPos, params.dstPtr) = (array, pos, pitched);
        }
    }
    Ok(params)
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy3DBatchAsync(
    count: usize,
    ops: *mut hipMemcpy3DBatchOp,
    fail_index: *mut usize,
    flags: c_ulonglong,
    stream: hipStream_t,
) -> hipError_t {
    hip_boundary!("hipMemcpy3DBatchAsync", {
        if count == 0 || flags != 0 || ops.is_null() {
            return Err(invalid("hipMemcpy3DBatchAsync needs operations and flags 0"));
        }
        for i in 0..count {
            // SAFETY: `ops` holds `count` operations (caller contract).
            let op = unsafe { &*ops.add(i) };
            // SAFETY: forwarded caller contract.
            let result = batch_params(op).and_then(|params| unsafe { memcpy_3d(&params, Some(stream)) });
            if let Err(e) = result {
                if !fail_index.is_null() {
                    // SAFETY: checked non-null; the caller provides the slot.
                    unsafe { *fail_index = i };
                }
                return Err(e);
            }
        }
        Ok(())
    })
}

// ---- pitched 3D allocation and sparse arrays ----------------------------------------------

/// Row alignment of `hipMalloc3D`, as `hipMallocPitch`'s.
const PITCH_ALIGNMENT: usize = 256;

#[no_mangle]
pub unsafe extern "C" fn hipMalloc3D(pitched: *mut hipPitchedPtr, extent: hipExtent) -> hipError_t {
    hip_boundary!("hipMalloc3D", {
        non_null!(pitched);
        let (width, height, depth) = (extent.width, extent.height, extent.depth);
        let pitch = width.checked_next_multiple_of(PITCH_ALIGNMENT).ok_or_else(|| invalid(format!("row width {width} overflows")))?;
        let size = pitch
            .checked_mul(height)
            .and_then(|s| s.checked_mul(depth))
            .ok_or_else(|| CallError::new(HipError::OUT_OF_MEMORY, format!("{pitch} x {height} x {depth} bytes overflows")))?;
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // ROCm answers an empty extent with a null pointer.
        if size != 0 {
            // SAFETY: `ptr` is a local out-parameter.
            let status = unsafe { crate::api::memory::hipMalloc(&mut ptr, size) };
            if status != hipSuccess {
                return Err(CallError::new(status, "hipMalloc3D allocation failed"));
            }
        }
        try_out!(pitched, hipPitchedPtr { ptr, pitch, xsize: width, ysize: height });
        Ok(())
    })
}
