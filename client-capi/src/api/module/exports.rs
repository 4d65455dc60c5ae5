//! The module family's C exports.

use super::*;

// ------------------------------------------------------------------------------------------------
// Exports
// ------------------------------------------------------------------------------------------------

pub(super) fn load_file(module: *mut hipModule_t, fname: *const c_char) -> Result<(), CallError> {
    non_null!(module);
    // SAFETY: a NUL-terminated path (HIP's contract).
    let name = unsafe { c_str(fname, "fname")? };
    let image = std::fs::read(name).map_err(|e| CallError::new(HipError::FILE_NOT_FOUND, format!("{name}: {e}")))?;
    let handle = load_image(&image, name)?;
    try_out!(module, hipModule_t::from_id(handle)?);
    Ok(())
}

/// # Safety
/// `image` must be a code object, offload bundle or host module valid for the length its
/// headers declare.
pub(super) unsafe fn load_data(module: *mut hipModule_t, image: *const c_void) -> Result<(), CallError> {
    non_null!(module);
    non_null!(image);
    let origin = format!("image@{image:p}");
    // SAFETY: forwarded caller contract.
    let bytes = unsafe { image_at(image as *const u8, &origin)? };
    let handle = load_image(bytes, &origin)?;
    try_out!(module, hipModule_t::from_id(handle)?);
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleLoad(module: *mut hipModule_t, fname: *const c_char) -> hipError_t {
    hip_boundary!("hipModuleLoad", { load_file(module, fname) })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleLoadData(module: *mut hipModule_t, image: *const c_void) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipModuleLoadData", { unsafe { load_data(module, image) } })
}

/// The JIT options (`hipJitOption*`) are accepted and ignored, as ROCm does: the worker's
/// runtime loads finished code objects and has nothing to JIT.
#[no_mangle]
pub unsafe extern "C" fn hipModuleLoadDataEx(
    module: *mut hipModule_t,
    image: *const c_void,
    _numOptions: c_uint,
    _options: *mut hipJitOption,
    _optionValues: *mut *mut c_void,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipModuleLoadDataEx", { unsafe { load_data(module, image) } })
}

/// A fat binary (offload bundle, plain or compressed) is one of the images `hipModuleLoadData`
/// takes anyway.
#[no_mangle]
pub unsafe extern "C" fn hipModuleLoadFatBinary(module: *mut hipModule_t, fatbin: *const c_void) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipModuleLoadFatBinary", { unsafe { load_data(module, fatbin) } })
}

#[no_mangle]
pub extern "C" fn hipModuleUnload(module: hipModule_t) -> hipError_t {
    hip_boundary!("hipModuleUnload", {
        crate::api::capture::check_call_permitted()?;
        let worker =
            forget_module(module.id()).ok_or_else(|| CallError::new(HipError::INVALID_HANDLE, format!("{module:p} is not a loaded hipModule_t")))?;
        crate::remote::on_handle(worker, || call_sync(|c| c.module_unload(wire::ModuleRef { module: worker })))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleGetFunction(function: *mut hipFunction_t, module: hipModule_t, kname: *const c_char) -> hipError_t {
    hip_boundary!("hipModuleGetFunction", {
        non_null!(function);
        // SAFETY: a NUL-terminated name (HIP's contract).
        let name = unsafe { c_str(kname, "kname")? };
        let handle = get_function(module.id(), name)?;
        try_out!(function, hipFunction_t::from_id(handle)?);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleGetGlobal(dptr: *mut hipDeviceptr_t, bytes: *mut usize, hmod: hipModule_t, name: *const c_char) -> hipError_t {
    hip_boundary!("hipModuleGetGlobal", {
        // SAFETY: a NUL-terminated name (HIP's contract).
        let name = unsafe { c_str(name, "name")? };
        let (ptr, size) = get_global(hmod.id(), name)?;
        // SAFETY: each output is optional; written only when non-null.
        unsafe {
            if !dptr.is_null() {
                *dptr = ptr as hipDeviceptr_t;
            }
            if !bytes.is_null() {
                *bytes = size as usize;
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleLaunchKernel(
    f: hipFunction_t,
    gridDimX: c_uint,
    gridDimY: c_uint,
    gridDimZ: c_uint,
    blockDimX: c_uint,
    blockDimY: c_uint,
    blockDimZ: c_uint,
    sharedMemBytes: c_uint,
    stream: hipStream_t,
    kernelParams: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> hipError_t {
    hip_boundary!("hipModuleLaunchKernel", {
        let f = function(f.id())?;
        let g =
            Geometry { grid: [gridDimX, gridDimY, gridDimZ], block: [blockDimX, blockDimY, blockDimZ], shared_mem: sharedMemBytes as usize, stream };
        // SAFETY: forwarded caller contract.
        unsafe { launch(&f, g, kernelParams, extra, HipError::INVALID_VALUE) }
    })
}

/// `hipFunction_attribute` values past `HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA` (ROCm's enum).
pub(super) const HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: hipFunction_attribute = 8;
pub(super) const HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: hipFunction_attribute = 9;

#[no_mangle]
pub unsafe extern "C" fn hipFuncGetAttribute(value: *mut c_int, attrib: hipFunction_attribute, hfunc: hipFunction_t) -> hipError_t {
    hip_boundary!("hipFuncGetAttribute", {
        non_null!(value);
        let a = attributes(&*function(hfunc.id())?)?;
        let sat = |v: u64| c_int::try_from(v).unwrap_or(c_int::MAX);
        let v = match attrib {
            HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK => a.max_threads_per_block,
            HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES => sat(a.shared_size),
            HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES => sat(a.const_size),
            HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES => sat(a.local_size),
            HIP_FUNC_ATTRIBUTE_NUM_REGS => a.num_regs,
            HIP_FUNC_ATTRIBUTE_PTX_VERSION => a.ptx_version,
            HIP_FUNC_ATTRIBUTE_BINARY_VERSION => a.binary_version,
            HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA => a.cache_mode_ca,
            HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES => a.max_dynamic_shared_size,
            HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT => a.preferred_shmem_carveout,
            other => return Err(CallError::new(HipError::INVALID_VALUE, format!("unknown hipFunction_attribute {other}"))),
        };
        try_out!(value, v);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(
    numBlocks: *mut c_int,
    f: hipFunction_t,
    blockSize: c_int,
    dynSharedMemPerBlk: usize,
) -> hipError_t {
    hip_boundary!("hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", {
        non_null!(numBlocks);
        let n = occupancy_blocks(&*function(f.id())?, blockSize, dynSharedMemPerBlk, 0)?;
        try_out!(numBlocks, n);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    numBlocks: *mut c_int,
    f: hipFunction_t,
    blockSize: c_int,
    dynSharedMemPerBlk: usize,
    flags: c_uint,
) -> hipError_t {
    hip_boundary!("hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", {
        non_null!(numBlocks);
        let n = occupancy_blocks(&*function(f.id())?, blockSize, dynSharedMemPerBlk, flags)?;
        try_out!(numBlocks, n);
        Ok(())
    })
}

pub(crate) fn potential_block_size(
    grid: *mut c_int,
    block: *mut c_int,
    f: &Function,
    dyn_shared: usize,
    limit: c_int,
    flags: c_uint,
) -> Result<(), CallError> {
    non_null!(grid);
    non_null!(block);
    let (g, b) = occupancy_block_size(f, dyn_shared, limit, flags)?;
    // SAFETY: checked non-null.
    unsafe {
        *grid = g;
        *block = b;
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleOccupancyMaxPotentialBlockSize(
    gridSize: *mut c_int,
    blockSize: *mut c_int,
    f: hipFunction_t,
    dynSharedMemPerBlk: usize,
    blockSizeLimit: c_int,
) -> hipError_t {
    hip_boundary!("hipModuleOccupancyMaxPotentialBlockSize", {
        potential_block_size(gridSize, blockSize, &*function(f.id())?, dynSharedMemPerBlk, blockSizeLimit, 0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleOccupancyMaxPotentialBlockSizeWithFlags(
    gridSize: *mut c_int,
    blockSize: *mut c_int,
    f: hipFunction_t,
    dynSharedMemPerBlk: usize,
    blockSizeLimit: c_int,
    flags: c_uint,
) -> hipError_t {
    hip_boundary!("hipModuleOccupancyMaxPotentialBlockSizeWithFlags", {
        potential_block_size(gridSize, blockSize, &*function(f.id())?, dynSharedMemPerBlk, blockSizeLimit, flags)
    })
}

/// hip-remote extension (not in ROCm): the parameter layout the worker reported for `f`.
/// Writes the parameter count to `count` and the first `min(count, capacity)` offsets and
/// sizes (bytes, declaration order) to `offsets` and `sizes`. A worker running the `hip`
/// backend on this library (a chained worker) uses it to learn layouts without parsing
/// code-object metadata; `offsets`/`sizes` may be null when `capacity` is 0.
#[no_mangle]
pub unsafe extern "C" fn hipRemoteFunctionParamLayout(
    f: hipFunction_t,
    count: *mut u32,
    offsets: *mut u32,
    sizes: *mut u32,
    capacity: u32,
) -> hipError_t {
    hip_boundary!("hipRemoteFunctionParamLayout", {
        non_null!(count);
        let f = function(f.id())?;
        let params = f.layout()?.params();
        if capacity > 0 && (offsets.is_null() || sizes.is_null()) {
            return Err(CallError::new(HipError::INVALID_VALUE, "offsets and sizes must not be NULL when capacity > 0"));
        }
        for (i, p) in params.iter().take(capacity as usize).enumerate() {
            // SAFETY: the caller provides `capacity` writable elements in each array (checked
            // non-null above); `i < capacity`. Layout values fit u32 (ArgLayout's limits).
            unsafe {
                *offsets.add(i) = p.offset as u32;
                *sizes.add(i) = p.size as u32;
            }
        }
        try_out!(count, params.len() as u32);
        Ok(())
    })
}

/// hip-remote extension (not in ROCm): a worker running its `hip` backend on this library (a
/// chained worker) calls this with 1 so that what kernels print is held for
/// [`hipRemoteTakeKernelOutput`] instead of going to this process's stdout: the worker then
/// forwards it to its own client, whose program printed it.
#[no_mangle]
pub extern "C" fn hipRemoteCaptureKernelOutput(on: c_int) -> hipError_t {
    hip_boundary!("hipRemoteCaptureKernelOutput", {
        crate::conn::capture_kernel_output(on != 0);
        Ok(())
    })
}

/// hip-remote extension: hands what kernels printed since the last call (see
/// [`hipRemoteCaptureKernelOutput`]) to `sink(ctx, text, len)`, once, when there is any.
///
/// # Safety
/// `sink` must be callable with `ctx`; it must copy what it keeps.
#[no_mangle]
pub unsafe extern "C" fn hipRemoteTakeKernelOutput(
    sink: Option<unsafe extern "C" fn(*mut c_void, *const c_char, usize)>,
    ctx: *mut c_void,
) -> hipError_t {
    hip_boundary!("hipRemoteTakeKernelOutput", {
        let Some(sink) = sink else {
            return Err(CallError::new(HipError::INVALID_VALUE, "sink is NULL"));
        };
        let text = crate::conn::take_kernel_output();
        if !text.is_empty() {
            // SAFETY: caller contract; the text lives until the call returns.
            unsafe { sink(ctx, text.as_ptr() as *const c_char, text.len()) };
        }
        Ok(())
    })
}
