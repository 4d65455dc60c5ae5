//! Kernel enumeration and libraries: `hipModuleGetFunctionCount`, `hipLibrary*`,
//! `hipKernelGetName` / `hipKernelGetLibrary`.
//!
//! A library is a module loaded the same way (`hipLibraryLoadData` takes every image
//! `hipModuleLoadData` takes) and remembered as a library: `hipLibrary_t` is its module id and
//! `hipKernel_t` a function id, so a kernel can also be launched as a `hipFunction_t`, as
//! CUDA's `CUkernel` can. The kernel list comes from the worker in one round trip
//! (`ModuleFunctionNames`); enumerating resolves every kernel in one pipelined batch.

use super::*;
use std::ffi::CString;

/// The ids `hipLibrary_t` and `hipKernel_t` carry (never dereferenced).
fn library_id(library: hipLibrary_t) -> u64 {
    library.id()
}

fn kernel_id(kernel: hipKernel_t) -> u64 {
    kernel.id()
}

/// Whether `module` is loaded, as a library.
fn is_library(module: u64) -> bool {
    module & LOCAL_HANDLE_TAG_MASK == MODULE_HANDLE_TAG && tables_of(module).modules.get(&module).is_some_and(|m| m.library)
}

/// The module of a loaded library.
fn library_module(library: hipLibrary_t) -> Result<u64, CallError> {
    let id = library_id(library);
    if is_library(id) {
        Ok(id)
    } else {
        Err(CallError::new(HipError::INVALID_HANDLE, format!("{library:p} is not a loaded hipLibrary_t")))
    }
}

/// The kernel names of a module, asked of the worker.
fn kernel_names(module: u64) -> Result<Vec<String>, CallError> {
    let (worker, _) = module_worker(module)?;
    crate::remote::on_handle(worker, || {
        with_conn(|c| c.module_function_names(wire::ModuleRef { module: worker }).map(|r| r.names.iter().map(str::to_string).collect()))
    })
}

/// Refuses JIT or library options given as a count without their arrays.
fn check_options(count: c_uint, keys: *const c_void, values: *const c_void, what: &str) -> Result<(), CallError> {
    if count > 0 && (keys.is_null() || values.is_null()) {
        return Err(CallError::new(HipError::INVALID_VALUE, format!("{count} {what} options but a NULL option array")));
    }
    Ok(())
}

fn register_library(library: *mut hipLibrary_t, module: u64) -> Result<(), CallError> {
    if let Some(m) = tables_of(module).modules.get_mut(&module) {
        m.library = true;
    }
    try_out!(library, crate::handle::from_id(module)?);
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleGetFunctionCount(count: *mut c_uint, module: hipModule_t) -> hipError_t {
    hip_boundary!("hipModuleGetFunctionCount", {
        non_null!(count);
        let n = kernel_names(module.id())?.len();
        try_out!(count, c_uint::try_from(n).unwrap_or(c_uint::MAX));
        Ok(())
    })
}

/// The JIT options are accepted and ignored, as for `hipModuleLoadDataEx`: the worker loads
/// finished code objects. Of the library options only their presence is checked.
#[no_mangle]
pub unsafe extern "C" fn hipLibraryLoadData(
    library: *mut hipLibrary_t,
    code: *const c_void,
    jitOptions: *mut hipJitOption,
    jitOptionsValues: *mut *mut c_void,
    numJitOptions: c_uint,
    libraryOptions: *mut hipLibraryOption,
    libraryOptionValues: *mut *mut c_void,
    numLibraryOptions: c_uint,
) -> hipError_t {
    hip_boundary!("hipLibraryLoadData", {
        non_null!(library);
        non_null!(code);
        check_options(numJitOptions, jitOptions.cast(), jitOptionsValues.cast(), "JIT")?;
        check_options(numLibraryOptions, libraryOptions.cast(), libraryOptionValues.cast(), "library")?;
        let origin = format!("library@{code:p}");
        // SAFETY: `code` is an image valid for the length its headers declare (HIP's contract).
        let bytes = unsafe { image_at(code as *const u8, &origin)? };
        let module = load_image(bytes, &origin)?;
        register_library(library, module)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipLibraryLoadFromFile(
    library: *mut hipLibrary_t,
    fileName: *const c_char,
    jitOptions: *mut hipJitOption,
    jitOptionsValues: *mut *mut c_void,
    numJitOptions: c_uint,
    libraryOptions: *mut hipLibraryOption,
    libraryOptionValues: *mut *mut c_void,
    numLibraryOptions: c_uint,
) -> hipError_t {
    hip_boundary!("hipLibraryLoadFromFile", {
        non_null!(library);
        // SAFETY: a NUL-terminated path (HIP's contract).
        let name = unsafe { c_str(fileName, "fileName")? };
        check_options(numJitOptions, jitOptions.cast(), jitOptionsValues.cast(), "JIT")?;
        check_options(numLibraryOptions, libraryOptions.cast(), libraryOptionValues.cast(), "library")?;
        let image = std::fs::read(name).map_err(|e| CallError::new(HipError::FILE_NOT_FOUND, format!("{name}: {e}")))?;
        let module = load_image(&image, name)?;
        register_library(library, module)
    })
}

#[no_mangle]
pub extern "C" fn hipLibraryUnload(library: hipLibrary_t) -> hipError_t {
    hip_boundary!("hipLibraryUnload", {
        let module = library_module(library)?;
        let worker = forget_module(module).ok_or_else(|| CallError::new(HipError::INVALID_HANDLE, format!("{library:p} was already unloaded")))?;
        crate::remote::on_handle(worker, || call_sync(|c| c.module_unload(wire::ModuleRef { module: worker })))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipLibraryGetKernel(pKernel: *mut hipKernel_t, library: hipLibrary_t, name: *const c_char) -> hipError_t {
    hip_boundary!("hipLibraryGetKernel", {
        non_null!(pKernel);
        // SAFETY: a NUL-terminated name (HIP's contract).
        let name = unsafe { c_str(name, "name")? };
        let module = library_module(library)?;
        let handle = get_function(module, name)?;
        // A lookup posted without a round trip has not shown yet that the kernel exists: its
        // layout, asked now, does (hipErrorNotFound as HIP answers here).
        if let Err(e) = function(handle)?.layout() {
            forget_function(handle);
            return Err(e);
        }
        try_out!(pKernel, crate::handle::from_id(handle)?);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipLibraryGetKernelCount(count: *mut c_uint, library: hipLibrary_t) -> hipError_t {
    hip_boundary!("hipLibraryGetKernelCount", {
        non_null!(count);
        let n = kernel_names(library_module(library)?)?.len();
        try_out!(count, c_uint::try_from(n).unwrap_or(c_uint::MAX));
        Ok(())
    })
}

/// Fills `kernels` with the first `numKernels` kernels (all of them when the array is larger).
#[no_mangle]
pub unsafe extern "C" fn hipLibraryEnumerateKernels(kernels: *mut hipKernel_t, numKernels: c_uint, library: hipLibrary_t) -> hipError_t {
    hip_boundary!("hipLibraryEnumerateKernels", {
        non_null!(kernels);
        if numKernels == 0 {
            return Err(CallError::new(HipError::INVALID_VALUE, "numKernels is 0"));
        }
        let module = library_module(library)?;
        let names = kernel_names(module)?;
        let wanted: Vec<&str> = names.iter().map(String::as_str).take(numKernels as usize).collect();
        for (i, handle) in get_functions(module, &wanted)?.into_iter().enumerate() {
            let handle: hipKernel_t = crate::handle::from_id(handle?)?;
            // SAFETY: the array holds `numKernels` entries (HIP's contract); i < numKernels.
            unsafe { kernels.add(i).write(handle) };
        }
        Ok(())
    })
}

/// The name of function `id` as a C string kept until its module is unloaded.
fn function_c_name(id: u64) -> Result<*const c_char, CallError> {
    let f = function(id)?;
    if f.name.contains('\0') {
        return Err(CallError::new(HipError::UNKNOWN, "kernel name with a NUL byte"));
    }
    // The pointer stays valid while the function is in its table (until its library or
    // module is unloaded), as HIP promises.
    Ok(f.c_name.get_or_init(|| CString::new(f.name.as_str()).unwrap_or_default()).as_ptr())
}

/// The name stays valid until the kernel's library (or module) is unloaded.
#[no_mangle]
pub unsafe extern "C" fn hipKernelGetName(name: *mut *const c_char, kernel: hipKernel_t) -> hipError_t {
    hip_boundary!("hipKernelGetName", {
        non_null!(name);
        try_out!(name, function_c_name(kernel_id(kernel))?);
        Ok(())
    })
}

/// AMD's `hipKernelNameRef`: the device name of a module function, as ROCm's clr answers it
/// (NULL for a NULL or unknown function; no error recorded). The name stays valid until the
/// function's module is unloaded.
#[no_mangle]
pub extern "C" fn hipKernelNameRef(f: hipFunction_t) -> *const c_char {
    // No hip_boundary (the answer is a name, not an error to record): panics are caught here.
    std::panic::catch_unwind(|| {
        if f.is_null() {
            return std::ptr::null();
        }
        function_c_name(f.id()).unwrap_or(std::ptr::null())
    })
    .unwrap_or(std::ptr::null())
}

#[no_mangle]
pub unsafe extern "C" fn hipKernelGetLibrary(library: *mut hipLibrary_t, kernel: hipKernel_t) -> hipError_t {
    hip_boundary!("hipKernelGetLibrary", {
        non_null!(library);
        let f = function(kernel_id(kernel))?;
        if !is_library(f.module) {
            return Err(CallError::new(HipError::INVALID_HANDLE, format!("{kernel:p} belongs to a module, not a library")));
        }
        try_out!(library, crate::handle::from_id(f.module)?);
        Ok(())
    })
}
