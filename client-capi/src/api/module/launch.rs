//! Launches: the parameter layout the worker reported and the exact packing of
//! `kernelParams` / `extra` by it; launch geometry checks and occupancy.

use super::*;

// ------------------------------------------------------------------------------------------------
// Argument layout and packing
// ------------------------------------------------------------------------------------------------

/// Where one kernel parameter goes in the packed argument blob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    /// Byte offset in the blob.
    pub offset: usize,
    /// Size in bytes.
    pub size: usize,
}

/// A kernel's parameter layout, as the worker reported it, validated once.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ArgLayout {
    params: Vec<Param>,
    len: usize,
}

/// Most `extra` entries read before `HIP_LAUNCH_PARAM_END` must have appeared.
pub(super) const MAX_EXTRA_ENTRIES: usize = 64;

impl ArgLayout {
    /// Builds a layout from `(offset, size)` pairs in declaration order; refuses one whose
    /// blob would exceed the protocol's argument limit.
    pub fn new(params: impl IntoIterator<Item = (u32, u32)>) -> Result<Self, CallError> {
        let mut out = Vec::new();
        let mut len = 0usize;
        for (offset, size) in params {
            let end = offset as usize + size as usize;
            if end > MAX_KERNEL_ARGS_LEN || out.len() >= MAX_KERNEL_PARAMS {
                return Err(CallError::new(
                    HipError::INVALID_IMAGE,
                    format!("kernel parameter layout ends at byte {end} (limit {MAX_KERNEL_ARGS_LEN}, {MAX_KERNEL_PARAMS} parameters)"),
                ));
            }
            len = len.max(end);
            out.push(Param { offset: offset as usize, size: size as usize });
        }
        Ok(Self { params: out, len })
    }

    /// The parameters, in declaration order.
    pub fn params(&self) -> &[Param] {
        &self.params
    }

    /// Size of the packed blob: the end of the last-placed parameter.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the kernel takes no arguments.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Packs parameter `i`'s bytes (`arg(i)`, exactly `size` of them) at their offsets;
    /// bytes no parameter covers (alignment padding) are zero.
    pub fn pack<'a>(&self, arg: impl FnMut(usize, usize) -> Result<&'a [u8], CallError>) -> Result<Vec<u8>, CallError> {
        let mut blob = Vec::new();
        self.pack_into(&mut blob, arg)?;
        Ok(blob)
    }

    /// [`ArgLayout::pack`] into `blob` (cleared first), reusing its allocation.
    pub fn pack_into<'a>(&self, blob: &mut Vec<u8>, mut arg: impl FnMut(usize, usize) -> Result<&'a [u8], CallError>) -> Result<(), CallError> {
        blob.clear();
        blob.resize(self.len, 0);
        for (i, p) in self.params.iter().enumerate() {
            let bytes = arg(i, p.size)?;
            if bytes.len() != p.size {
                return Err(CallError::new(
                    HipError::INVALID_VALUE,
                    format!("kernel argument {i}: {} bytes for a {}-byte parameter", bytes.len(), p.size),
                ));
            }
            blob[p.offset..p.offset + p.size].copy_from_slice(bytes);
        }
        Ok(())
    }

    /// Packs HIP's `kernelParams` / `hipLaunchKernel` `args`: an array with one pointer per
    /// parameter, each pointing at the argument's value.
    ///
    /// # Safety
    /// `kernel_params` must hold one pointer per parameter, each valid for that parameter's
    /// size (HIP's contract); null pointers are refused.
    pub unsafe fn pack_pointers(&self, kernel_params: *const *mut c_void) -> Result<Vec<u8>, CallError> {
        let mut blob = Vec::new();
        // SAFETY: forwarded caller contract.
        unsafe { self.pack_pointers_into(&mut blob, kernel_params)? };
        Ok(blob)
    }

    /// [`ArgLayout::pack_pointers`] into `blob` (cleared first), reusing its allocation: the
    /// launch path packs into one buffer per thread instead of allocating per launch.
    ///
    /// # Safety
    /// As [`ArgLayout::pack_pointers`].
    pub unsafe fn pack_pointers_into(&self, blob: &mut Vec<u8>, kernel_params: *const *mut c_void) -> Result<(), CallError> {
        if self.params.is_empty() {
            blob.clear();
            return Ok(());
        }
        if kernel_params.is_null() {
            return Err(CallError::new(
                HipError::INVALID_VALUE,
                format!("the kernel takes {} arguments but kernelParams is NULL", self.params.len()),
            ));
        }
        self.pack_into(blob, |i, size| {
            // SAFETY: the array has one entry per parameter (caller contract).
            let ptr = unsafe { *kernel_params.add(i) } as *const u8;
            if ptr.is_null() {
                return Err(CallError::new(HipError::INVALID_VALUE, format!("kernelParams[{i}] is NULL")));
            }
            // SAFETY: the entry points at the argument, `size` bytes (caller contract).
            Ok(unsafe { std::slice::from_raw_parts(ptr, size) })
        })
    }

    /// The part of an already packed buffer to send: refused when shorter than the layout,
    /// cut at the layout's end when longer (the rest is padding).
    pub fn check_buffer<'b>(&self, buffer: &'b [u8]) -> Result<&'b [u8], CallError> {
        if buffer.len() < self.len {
            return Err(CallError::new(
                HipError::INVALID_VALUE,
                format!("HIP_LAUNCH_PARAM_BUFFER_SIZE is {} bytes but the kernel's parameters end at byte {}", buffer.len(), self.len),
            ));
        }
        Ok(&buffer[..self.len])
    }
}

/// The buffer an `extra` array (`HIP_LAUNCH_PARAM_BUFFER_POINTER, p, HIP_LAUNCH_PARAM_BUFFER_SIZE,
/// &size, HIP_LAUNCH_PARAM_END`, in any order) describes.
///
/// # Safety
/// `extra` must be such an array; the buffer must be valid for `size` bytes.
pub unsafe fn extra_buffer<'b>(extra: *const *mut c_void) -> Result<&'b [u8], CallError> {
    let bad = |why: String| CallError::new(HipError::INVALID_VALUE, format!("extra: {why}"));
    let (mut buffer, mut size): (Option<*const u8>, Option<usize>) = (None, None);
    let mut i = 0;
    loop {
        if i >= MAX_EXTRA_ENTRIES {
            return Err(bad(format!("no HIP_LAUNCH_PARAM_END within {MAX_EXTRA_ENTRIES} entries")));
        }
        // SAFETY: the array runs until HIP_LAUNCH_PARAM_END (caller contract).
        let key = unsafe { *extra.add(i) };
        if key == HIP_LAUNCH_PARAM_END {
            break;
        }
        // SAFETY: every key but END is followed by its value.
        let value = unsafe { *extra.add(i + 1) };
        if key == HIP_LAUNCH_PARAM_BUFFER_POINTER {
            buffer = Some(value as *const u8);
        } else if key == HIP_LAUNCH_PARAM_BUFFER_SIZE {
            if value.is_null() {
                return Err(bad("HIP_LAUNCH_PARAM_BUFFER_SIZE points at NULL".into()));
            }
            // SAFETY: the value points at a size_t (HIP's contract).
            size = Some(unsafe { *(value as *const usize) });
        } else {
            return Err(bad(format!("unknown key {key:?}")));
        }
        i += 2;
    }
    match (buffer, size) {
        (_, Some(0)) => Ok(&[]),
        (Some(p), Some(n)) if !p.is_null() => {
            if n > MAX_KERNEL_ARGS_LEN {
                return Err(bad(format!("argument buffer of {n} bytes exceeds {MAX_KERNEL_ARGS_LEN}")));
            }
            // SAFETY: the buffer holds `n` bytes (caller contract).
            Ok(unsafe { std::slice::from_raw_parts(p, n) })
        }
        (p, n) => Err(bad(format!("needs HIP_LAUNCH_PARAM_BUFFER_POINTER (non-NULL) and _SIZE (got {p:?}, {n:?})"))),
    }
}

// ------------------------------------------------------------------------------------------------
// Launch and occupancy
// ------------------------------------------------------------------------------------------------

/// A launch's geometry.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Geometry {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem: usize,
    pub stream: hipStream_t,
}

/// Launches `f` fire-and-forget. Zero or oversized dimensions fail now with `bad_dims`
/// (`hipErrorInvalidValue` for the module API, `hipErrorInvalidConfiguration` for
/// `hipLaunchKernel`, as ROCm answers).
///
/// # Safety
/// `kernel_params` / `extra` must follow HIP's contract for `hipModuleLaunchKernel`.
pub(crate) unsafe fn launch(
    f: &Function,
    g: Geometry,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
    bad_dims: HipError,
) -> Result<(), CallError> {
    // SAFETY: forwarded caller contract.
    unsafe { launch_as(f, g, kernel_params, extra, bad_dims, LaunchKind::Plain) }
}

/// How a launch runs on the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LaunchKind {
    /// Fire-and-forget (`LaunchKernel`).
    Plain,
    /// Every block resident at once (`LaunchCooperative`): one round trip, so that a grid
    /// too large to be co-resident fails the call itself.
    Cooperative,
}

/// [`launch`] of either kind.
///
/// # Safety
/// As [`launch`].
pub(crate) unsafe fn launch_as(
    f: &Function,
    g: Geometry,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
    bad_dims: HipError,
    kind: LaunchKind,
) -> Result<(), CallError> {
    if g.grid.contains(&0) || g.block.contains(&0) {
        return Err(CallError::new(
            bad_dims,
            format!("launch of {} with grid {:?} block {:?}: every dimension must be at least 1", f.name, g.grid, g.block),
        ));
    }
    let threads = g.block.iter().map(|&d| u64::from(d)).product::<u64>();
    let limits = launch_limits(current_device())?;
    let max = u64::from(limits.max_threads_per_block);
    if max > 0 && threads > max {
        return Err(CallError::new(bad_dims, format!("launch of {} with {threads} threads per block (device maximum {max})", f.name)));
    }
    let shared_mem = u32::try_from(g.shared_mem).map_err(|_| CallError::new(bad_dims, format!("{} bytes of dynamic shared memory", g.shared_mem)))?;
    // At the call, as ROCm's launch check: the launch is posted, its worker-side failure would
    // come only at a later call.
    let per_block = limits.shared_mem_per_block;
    if per_block > 0 && u64::from(shared_mem) > per_block {
        return Err(CallError::new(
            HipError::OUT_OF_MEMORY,
            format!("launch of {} with {shared_mem} bytes of dynamic shared memory (the device has {per_block} per block)", f.name),
        ));
    }
    if kernel_params.is_null() && !extra.is_null() {
        // SAFETY: forwarded caller contract.
        let args = f.layout()?.check_buffer(unsafe { extra_buffer(extra)? })?;
        return send_launch(f, g, shared_mem, args, kind);
    }
    if !extra.is_null() {
        return Err(CallError::new(HipError::INVALID_VALUE, "kernelParams and extra are both given; pass one"));
    }
    thread_local! {
        /// This thread's packing buffer: no allocation per launch.
        static PACKED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    PACKED.with(|packed| {
        // A launch from inside a launch (a callback of this thread) packs into its own buffer.
        let (mut own, mut borrowed);
        let blob: &mut Vec<u8> = match packed.try_borrow_mut() {
            Ok(b) => {
                borrowed = b;
                &mut borrowed
            }
            Err(_) => {
                own = Vec::new();
                &mut own
            }
        };
        if kernel_params.is_null() && !f.layout_known() {
            // No arguments, and the layout not read yet: the worker checks the (empty) blob
            // against it, a kernel that has parameters then failing as a deferred error.
            blob.clear();
        } else {
            // SAFETY: forwarded caller contract (a null array is refused when the kernel has parameters).
            unsafe { f.layout()?.pack_pointers_into(blob, kernel_params)? };
        }
        send_launch(f, g, shared_mem, blob, kind)
    })
}

fn send_launch(f: &Function, g: Geometry, shared_mem: u32, args: &[u8], kind: LaunchKind) -> Result<(), CallError> {
    let req = wire::LaunchKernel { function: f.worker, grid: g.grid, block: g.block, shared_mem, stream: stream_id(g.stream), args: args.into() };
    crate::remote::on_handle(f.worker, || match kind {
        LaunchKind::Plain => with_conn(|c| c.post::<calls::LaunchKernel>(req)),
        LaunchKind::Cooperative => call_sync(|c| c.launch_cooperative(req)),
    })
}

/// `hipModuleOccupancyMaxActiveBlocksPerMultiprocessor`.
pub(crate) fn occupancy_blocks(f: &Function, block_size: c_int, dynamic_shared: usize, flags: c_uint) -> Result<c_int, CallError> {
    let block_size = u32::try_from(block_size)
        .ok()
        .filter(|&b| b > 0)
        .ok_or_else(|| CallError::new(HipError::INVALID_VALUE, format!("block size {block_size}")))?;
    let req = wire::OccupancyQuery { function: f.worker, block_size, dynamic_shared: dynamic_shared as u64, flags };
    let blocks = crate::remote::on_handle(f.worker, || with_conn(|c| c.occupancy_max_active_blocks(req)))?.blocks;
    Ok(c_int::try_from(blocks).unwrap_or(c_int::MAX))
}

/// `hipModuleOccupancyMaxPotentialBlockSize`: (grid size, block size).
pub(crate) fn occupancy_block_size(f: &Function, dynamic_shared: usize, limit: c_int, flags: c_uint) -> Result<(c_int, c_int), CallError> {
    let limit = u32::try_from(limit).map_err(|_| CallError::new(HipError::INVALID_VALUE, format!("block size limit {limit}")))?;
    let req = wire::BlockSizeQuery { function: f.worker, dynamic_shared: dynamic_shared as u64, block_size_limit: limit, flags };
    let b = crate::remote::on_handle(f.worker, || with_conn(|c| c.occupancy_max_potential_block_size(req)))?;
    Ok((c_int::try_from(b.min_grid_size).unwrap_or(c_int::MAX), c_int::try_from(b.block_size).unwrap_or(c_int::MAX)))
}
