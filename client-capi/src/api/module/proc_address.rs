//! `hipGetProcAddress` and `hipGetDriverEntryPoint`: this library's own exports, found with
//! `dlsym` on this library itself (never another library's symbol of the same name). The
//! per-thread-default-stream flag picks a symbol's `_spt` form where there is one.

use super::*;
use std::ffi::CString;

/// `HIP_GET_PROC_ADDRESS_*` / `hipEnable*` flags: default, legacy stream, per-thread stream.
const PROC_FLAG_DEFAULT: u64 = 0;
const PROC_FLAG_LEGACY_STREAM: u64 = 1;
const PROC_FLAG_PER_THREAD_STREAM: u64 = 2;
/// `hipDriverProcAddressQueryResult` / `hipDriverEntryPointQueryResult` (same numbers).
const STATUS_SUCCESS: c_uint = 0;
const STATUS_SYMBOL_NOT_FOUND: c_uint = 1;
const STATUS_VERSION_NOT_SUFFICIENT: c_uint = 2;
/// The oldest `hipVersion` (`100·major + minor`) whose entry points this library provides:
/// HIP 6.0, the first ROCm with `hipGetProcAddress`'s symbol table.
const MIN_PROC_VERSION: c_int = 600;

/// The `dlopen` handle of this library itself, found through the address of one of its
/// functions.
#[cfg(unix)]
fn own_library() -> Option<usize> {
    static HANDLE: OnceLock<Option<usize>> = OnceLock::new();
    *HANDLE.get_or_init(|| {
        // SAFETY: an all-zero Dl_info is a valid value to be filled.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: dladdr only reads the loader's tables and fills `info`.
        if unsafe { libc::dladdr(hipGetProcAddress as *const c_void, &mut info) } == 0 || info.dli_fname.is_null() {
            return None;
        }
        // SAFETY: `dli_fname` names a library already loaded (RTLD_NOLOAD opens nothing new).
        let handle = unsafe { libc::dlopen(info.dli_fname, libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        (!handle.is_null()).then_some(handle as usize)
    })
}

#[cfg(windows)]
mod win32 {
    use std::ffi::{c_char, c_void};
    /// `GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT`.
    pub const FROM_ADDRESS_UNCHANGED_REFCOUNT: u32 = 0x4 | 0x2;
    #[link(name = "kernel32")]
    extern "system" {
        pub fn GetModuleHandleExW(flags: u32, name: *const u16, module: *mut *mut c_void) -> i32;
        pub fn GetProcAddress(module: *mut c_void, name: *const c_char) -> *mut c_void;
    }
}

/// This DLL's module handle, found through the address of one of its functions.
#[cfg(windows)]
fn own_library() -> Option<usize> {
    static HANDLE: OnceLock<Option<usize>> = OnceLock::new();
    *HANDLE.get_or_init(|| {
        let mut module = std::ptr::null_mut();
        let address = hipGetProcAddress as *const c_void as *const u16;
        // SAFETY: with FROM_ADDRESS the name argument is an address inside this module; the
        // out-parameter is a live local.
        let ok = unsafe { win32::GetModuleHandleExW(win32::FROM_ADDRESS_UNCHANGED_REFCOUNT, address, &mut module) };
        (ok != 0 && !module.is_null()).then_some(module as usize)
    })
}

/// `name`'s address in the module `handle` (`dlsym` / `GetProcAddress`).
fn symbol(handle: usize, name: &std::ffi::CStr) -> *mut c_void {
    // SAFETY: a live handle of this library and a NUL-terminated name.
    #[cfg(unix)]
    let p = unsafe { libc::dlsym(handle as *mut c_void, name.as_ptr()) };
    // SAFETY: as above.
    #[cfg(windows)]
    let p = unsafe { win32::GetProcAddress(handle as *mut c_void, name.as_ptr()) };
    p
}

/// The address of this library's export `name` (only HIP's names: `hip…`).
fn lookup(name: &str) -> Option<*mut c_void> {
    if !name.starts_with("hip") {
        return None;
    }
    let handle = own_library()?;
    let c_name = CString::new(name).ok()?;
    let p = symbol(handle, &c_name);
    (!p.is_null()).then_some(p)
}

/// Entry points whose HIP 6 form is a symbol of its own (`hip_runtime_api.h` defines the plain
/// name to it, for the HIP 6 `hipDeviceProp_t`). Every version `hipGetProcAddress` accepts is
/// HIP 6.0 or later, so the caller's struct is HIP 6's and gets that form, as ROCm's does.
const HIP6_FORMS: &[(&str, &str)] = &[("hipGetDeviceProperties", "hipGetDevicePropertiesR0600"), ("hipChooseDevice", "hipChooseDeviceR0600")];

/// The symbol for `name` under `flags`: the `_spt` form for the per-thread flag when it
/// exists, else the plain one (HIP 6's form where it has one).
fn resolve(name: &str, flags: u64) -> Result<Option<*mut c_void>, CallError> {
    let name = HIP6_FORMS.iter().find(|(plain, _)| *plain == name).map_or(name, |(_, hip6)| *hip6);
    match flags {
        PROC_FLAG_DEFAULT | PROC_FLAG_LEGACY_STREAM => Ok(lookup(name)),
        PROC_FLAG_PER_THREAD_STREAM => Ok(lookup(&format!("{name}_spt")).or_else(|| lookup(name))),
        other => Err(CallError::new(HipError::INVALID_VALUE, format!("unknown flags {other:#x}"))),
    }
}

fn set_status(status: *mut c_uint, value: c_uint) {
    if !status.is_null() {
        // SAFETY: a non-null status points at writable memory (HIP's contract).
        unsafe { status.write(value) };
    }
}

/// Both entry points: `pfn` gets the function or NULL; `status` (optional) says which.
///
/// # Safety
/// `symbol` is NUL-terminated; `pfn` and `status`, when non-null, are writable.
unsafe fn get(symbol: *const c_char, pfn: *mut *mut c_void, version: Option<c_int>, flags: u64, status: *mut c_uint) -> Result<(), CallError> {
    non_null!(pfn);
    // SAFETY: forwarded caller contract.
    let name = unsafe { c_str(symbol, "symbol")? };
    // SAFETY: checked non-null.
    unsafe { pfn.write(std::ptr::null_mut()) };
    let found = resolve(name, flags)?;
    if version.is_some_and(|v| v < MIN_PROC_VERSION) {
        set_status(status, if found.is_some() { STATUS_VERSION_NOT_SUFFICIENT } else { STATUS_SYMBOL_NOT_FOUND });
        return Err(CallError::new(HipError::INVALID_VALUE, format!("{name} for HIP version {}", version.unwrap_or_default())));
    }
    match found {
        Some(p) => {
            // SAFETY: checked non-null.
            unsafe { pfn.write(p) };
            set_status(status, STATUS_SUCCESS);
            Ok(())
        }
        None => {
            set_status(status, STATUS_SYMBOL_NOT_FOUND);
            Err(CallError::new(HipError::INVALID_VALUE, format!("no HIP entry point {name}")))
        }
    }
}

/// `hipVersion` is `100·major + minor`, as CUDA's `cudaVersion` (a `HIP_VERSION`-style
/// number is larger still and accepted too); one below HIP 6.0 is not sufficient.
#[no_mangle]
pub unsafe extern "C" fn hipGetProcAddress(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    hipVersion: c_int,
    flags: u64,
    symbolStatus: *mut hipDriverProcAddressQueryResult,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipGetProcAddress", { unsafe { get(symbol, pfn, Some(hipVersion), flags, symbolStatus) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetDriverEntryPoint(
    symbol: *const c_char,
    funcPtr: *mut *mut c_void,
    flags: std::ffi::c_ulonglong,
    driverStatus: *mut hipDriverEntryPointQueryResult,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipGetDriverEntryPoint", { unsafe { get(symbol, funcPtr, None, flags, driverStatus) } })
}

/// The `_spt` form: its default is the per-thread default stream.
#[no_mangle]
pub unsafe extern "C" fn hipGetDriverEntryPoint_spt(
    symbol: *const c_char,
    funcPtr: *mut *mut c_void,
    flags: std::ffi::c_ulonglong,
    status: *mut hipDriverEntryPointQueryResult,
) -> hipError_t {
    let flags = if flags == PROC_FLAG_DEFAULT { PROC_FLAG_PER_THREAD_STREAM } else { flags };
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipGetDriverEntryPoint_spt", { unsafe { get(symbol, funcPtr, None, flags, status) } })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_pick_the_spt_form_where_there_is_one() {
        // The unit-test binary links this crate statically, so `own_library` finds no shared
        // object of its own; only the flag checks are exercised here (the C test resolves).
        assert!(resolve("hipMalloc", 8).is_err());
        assert!(resolve("hipMalloc", PROC_FLAG_DEFAULT).is_ok());
        assert_eq!(lookup("malloc"), None, "only HIP names are looked up");
    }
}
