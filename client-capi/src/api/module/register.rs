//! `<<<>>>` programs: what hipcc's generated code calls. Its module constructor registers the
//! translation unit's fat binary (`__hipRegisterFatBinary`), then each kernel under the address
//! of its host-side handle (`__hipRegisterFunction`) and each device variable under the address
//! of its host shadow (`__hipRegisterVar`); a launch `k<<<g, b, s, q>>>(args)` pushes the
//! configuration (`__hipPushCallConfiguration`), and the kernel's host stub pops it
//! (`__hipPopCallConfiguration`) and calls `hipLaunchKernel(handle, g, b, args, s, q)`.
//!
//! Registration runs before `main` and never touches the network: it records addresses and
//! names. The fat binary is parsed, reduced to the code object of the worker's device
//! architecture ([`crate::fatbin::select`]) and loaded on the first launch of one of its
//! kernels (or first use of one of its variables) on each device: a fat binary is loaded once
//! per device the program uses, onto the calling thread's current device (`hipSetDevice`),
//! and kernels and variables resolve to that device's copy, as under ROCm. Right after a load,
//! every kernel it registered is resolved in one pipelined round trip. When no code object matches (always
//! on the host backend, whose architecture is `host`), that launch — and every later one of
//! the same fat binary — fails with `hipErrorNoBinaryForGpu` and a message naming the
//! architectures the program carries and the one the worker needs.
//!
//! The handle `__hipRegisterFatBinary` returns is an id of the process's registry (never
//! reused, never dereferenced): registrations are the process's, made before any connection
//! opens. Each load, and what the kernels and variables resolved to on a device, is kept in
//! the session of that device's worker. Device variables are reached through
//! `hipMemcpyToSymbol`/`hipMemcpyFromSymbol` (+`Async`), `hipGetSymbolAddress` and
//! `hipGetSymbolSize`; the copies go through this library's ordinary copy paths.

use super::{self as module, c_str, Function, Geometry};
use crate::abi::*;
use crate::fatbin::{self, Wrapper};
use crate::handle::{stream_id, Handle};
use crate::remote;
use crate::state::allocations::is_device_pointer;
use crate::state::copy::copy;
use crate::state::devices::current_device;
use crate::state::families::Family;
use client_core::published::FamilyTable;
use client_core::CallError;
use proto_core::{calls, wire, Caller};
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// What became of a registered fat binary on one device.
#[derive(Default)]
enum LoadState {
    /// Not needed yet.
    #[default]
    Unloaded,
    /// Loaded as this client module.
    Loaded(u64),
    /// Cannot ever load on the device: bad image, or no code object for it.
    Failed(CallError),
}

/// One `__hipRegisterFatBinary`.
struct FatBinary {
    /// Where the offload bundle lies in this process (0 when the wrapper was unusable).
    bundle: usize,
    /// For messages: the bundle's address and the object file holding it.
    origin: String,
    /// Why the wrapper is unusable, when it is: no device ever loads it.
    unusable: Option<CallError>,
}

struct RegisteredFunction {
    fatbin: u64,
    name: String,
    /// `name` as a C string once `hipKernelNameRefByPtr` asked (valid while registered).
    c_name: Option<std::ffi::CString>,
}

struct RegisteredVar {
    fatbin: u64,
    name: String,
}

/// What the program registered: the process's, made before `main` and before any connection
/// opens, whatever devices it later runs on. Where each fat binary is loaded, and what its
/// kernels and variables resolved to there, is each session's ([`Loads`]).
#[derive(Default)]
struct Registry {
    fatbins: HashMap<u64, Arc<FatBinary>>,
    functions: HashMap<usize, RegisteredFunction>,
    vars: HashMap<usize, RegisteredVar>,
    /// The counter of fat binary handles (never 0, never reused).
    issued: u64,
}

fn registry() -> MutexGuard<'static, Registry> {
    static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
}

/// One session's loads of registered fat binaries, on the devices of its worker.
#[derive(Default)]
struct Loads {
    /// Each fat binary's state on each device, by (fat binary, device). Held during a first
    /// load, so concurrent first launches load once.
    fatbins: HashMap<(u64, u32), Arc<Mutex<LoadState>>>,
    /// The `hipFunction_t` a registered kernel (by its host stub) resolved to on a device.
    functions: HashMap<(usize, u32), u64>,
    /// The device address and size a registered variable (by its shadow) resolved to.
    vars: HashMap<(usize, u32), (u64, u64)>,
}

const LOADS: FamilyTable<Loads> = FamilyTable::new(Family::FatBinaryLoads.slot());

/// The loads of the session serving `device`.
fn loads(device: u32) -> Result<MutexGuard<'static, Loads>, CallError> {
    Ok(remote::published_for_device(device)?.family(&LOADS))
}

fn debug(msg: impl FnOnce() -> String) {
    if remote::config().debug {
        eprintln!("hip-remote: {}", msg());
    }
}

/// The object file (executable or shared library) that holds `addr`, for messages.
#[cfg(target_os = "linux")]
fn object_name(addr: usize) -> Option<String> {
    // SAFETY: Dl_info is plain pointers, valid as zero.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables and fills `info`.
    if unsafe { libc::dladdr(addr as *const c_void, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated path owned by the loader.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned();
    (!name.is_empty()).then_some(name)
}

#[cfg(not(target_os = "linux"))]
fn object_name(_addr: usize) -> Option<String> {
    None
}

/// Reads the wrapper at `data`: the bundle address, or why not.
///
/// # Safety
/// `data` must be null or point at a fat-binary wrapper (24 bytes).
unsafe fn read_wrapper(data: *const c_void) -> Result<usize, CallError> {
    if data.is_null() {
        return Err(CallError::new(HipError::INVALID_IMAGE, "__hipRegisterFatBinary got NULL"));
    }
    // SAFETY: the compiler-generated wrapper is 24 bytes (caller contract).
    let raw = unsafe { std::slice::from_raw_parts(data as *const u8, fatbin::WRAPPER_LEN) };
    let w = Wrapper::parse(raw).map_err(|e| CallError::new(HipError::INVALID_IMAGE, e.to_string()))?;
    usize::try_from(w.binary)
        .ok()
        .filter(|&b| b != 0)
        .ok_or_else(|| CallError::new(HipError::INVALID_IMAGE, "fat binary wrapper points at address 0"))
}

/// `__hipRegisterFatBinary`: records the fat binary; returns its handle (never null, so the
/// generated constructor does not register it again; an unusable wrapper is reported at the
/// first launch).
///
/// # Safety
/// `data` must be the compiler-generated `__hip_fatbin_wrapper`.
#[no_mangle]
pub unsafe extern "C" fn __hipRegisterFatBinary(data: *const c_void) -> *mut *mut c_void {
    let registered = std::panic::catch_unwind(|| {
        let mut r = registry();
        r.issued += 1;
        let handle = r.issued;
        drop(r);
        // SAFETY: forwarded caller contract.
        let (bundle, unusable) = match unsafe { read_wrapper(data) } {
            Ok(b) => (b, None),
            Err(e) => (0, Some(e)),
        };
        let origin = match object_name(data as usize) {
            Some(obj) => format!("fat binary at {bundle:#x} in {obj}"),
            None => format!("fat binary at {bundle:#x}"),
        };
        debug(|| format!("registered {origin} as {handle:#x}"));
        registry().fatbins.insert(handle, Arc::new(FatBinary { bundle, origin, unusable }));
        handle
    });
    // Never null, so the generated constructor does not register it again; a handle no
    // table knows fails its kernels' launches.
    let handle = registered.unwrap_or_else(|_| {
        eprintln!("hip-remote: internal panic in __hipRegisterFatBinary; its kernels will not launch");
        u64::MAX
    });
    handle as *mut *mut c_void
}

/// `__hipRegisterFunction`: `hostFunction` (the kernel's host-side handle) launches device
/// function `deviceName` of the fat binary `modules`.
///
/// # Safety
/// The names must be NUL-terminated strings; the other pointers are not read.
#[no_mangle]
pub unsafe extern "C" fn __hipRegisterFunction(
    modules: *mut *mut c_void,
    hostFunction: *const c_void,
    deviceFunction: *mut c_char,
    deviceName: *const c_char,
    _threadLimit: c_uint,
    _tid: *mut c_void,
    _bid: *mut c_void,
    _blockDim: *mut dim3,
    _gridDim: *mut dim3,
    _wSize: *mut c_int,
) {
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: NUL-terminated names (compiler-generated).
        let name = unsafe { c_str(deviceName, "deviceName").or_else(|_| c_str(deviceFunction, "deviceFunction")) };
        let Ok(name) = name else {
            debug(|| format!("__hipRegisterFunction({hostFunction:p}) without a usable name; ignored"));
            return;
        };
        let mut r = registry();
        if !r.fatbins.contains_key(&(modules as u64)) {
            debug(|| format!("__hipRegisterFunction({name}) for unknown fat binary {modules:p}; ignored"));
            return;
        }
        r.functions.insert(hostFunction as usize, RegisteredFunction { fatbin: modules as u64, name: name.to_string(), c_name: None });
    });
}

/// `__hipRegisterVar`: `var` (the host shadow) stands for device variable `deviceVar` of the fat
/// binary `modules`.
///
/// # Safety
/// The names must be NUL-terminated strings; `var` is not read.
#[no_mangle]
pub unsafe extern "C" fn __hipRegisterVar(
    modules: *mut *mut c_void,
    var: *mut c_void,
    hostVar: *mut c_char,
    deviceVar: *mut c_char,
    _ext: c_int,
    _size: usize,
    _constant: c_int,
    _global: c_int,
) {
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: NUL-terminated names (compiler-generated).
        let name = unsafe { c_str(deviceVar, "deviceVar").or_else(|_| c_str(hostVar, "hostVar")) };
        let Ok(name) = name else { return };
        let mut r = registry();
        if r.fatbins.contains_key(&(modules as u64)) {
            r.vars.insert(var as usize, RegisteredVar { fatbin: modules as u64, name: name.to_string() });
        }
    });
}

/// `__hipUnregisterFatBinary` (at exit, or when a shared library is unloaded): forgets the fat
/// binary, its kernels and variables; a loaded module is unloaded on the worker when a
/// connection is open (fire-and-forget: this may run at exit).
#[no_mangle]
pub unsafe extern "C" fn __hipUnregisterFatBinary(modules: *mut *mut c_void) {
    let _ = std::panic::catch_unwind(|| {
        let id = modules as u64;
        let (functions, vars) = {
            let mut r = registry();
            if r.fatbins.remove(&id).is_none() {
                return;
            }
            let functions: Vec<usize> = r.functions.iter().filter(|(_, f)| f.fatbin == id).map(|(&host, _)| host).collect();
            let vars: Vec<usize> = r.vars.iter().filter(|(_, v)| v.fatbin == id).map(|(&shadow, _)| shadow).collect();
            r.functions.retain(|_, f| f.fatbin != id);
            r.vars.retain(|_, v| v.fatbin != id);
            (functions, vars)
        };
        // Its loads, in every session that made one (none before any call: a program that
        // exits without calling HIP reads no configuration here).
        for published in remote::every_published_if_configured() {
            let states: Vec<Arc<Mutex<LoadState>>> = {
                let mut loads = published.family(&LOADS);
                loads.functions.retain(|(host, _), _| !functions.contains(host));
                loads.vars.retain(|(shadow, _), _| !vars.contains(shadow));
                let mine: Vec<(u64, u32)> = loads.fatbins.keys().filter(|(fatbin, _)| *fatbin == id).copied().collect();
                mine.iter().filter_map(|key| loads.fatbins.remove(key)).collect()
            };
            for state in states {
                if let LoadState::Loaded(m) = *state.lock().unwrap_or_else(|p| p.into_inner()) {
                    if let Some(worker) = module::forget_module(m) {
                        if remote::is_open() {
                            let _ = remote::on_handle(worker, || {
                                remote::with_conn(|c| c.post::<calls::ModuleUnload>(wire::ModuleRef { module: worker }))
                            });
                        }
                    }
                }
            }
        }
    });
}

/// Loads `fatbin` onto `device`, the calling thread's current device, if it is not there yet,
/// resolving all its registered kernels; its module handle there.
fn ensure_loaded(id: u64, fatbin: &FatBinary, device: u32) -> Result<u64, CallError> {
    if let Some(e) = &fatbin.unusable {
        return Err(e.clone());
    }
    let slot = loads(device)?.fatbins.entry((id, device)).or_default().clone();
    let mut state = slot.lock().unwrap_or_else(|p| p.into_inner());
    match &*state {
        LoadState::Loaded(m) => return Ok(*m),
        LoadState::Failed(e) => return Err(e.clone()),
        LoadState::Unloaded => {}
    }
    // Permanent failures are kept (and said once on stderr, as ROCm does for a missing code
    // object); others (a connection not yet up) are retried at the next launch.
    let sticky = |e: CallError, state: &mut LoadState| {
        if e.code == HipError::INVALID_IMAGE || e.code == HipError::NO_BINARY_FOR_GPU {
            eprintln!("hip-remote: {} ({})", e.message, e.code.name().to_string_lossy());
            *state = LoadState::Failed(e.clone());
        }
        e
    };
    // SAFETY: the wrapper pointed here and the bundle stays mapped until the fat binary is
    // unregistered; `image_at` bounds it by the segment holding it.
    let image = match unsafe { module::image_at(fatbin.bundle as *const u8, &fatbin.origin) } {
        Ok(image) => image,
        Err(e) => return Err(sticky(e, &mut state)),
    };
    let m = match module::load_image(image, &fatbin.origin) {
        Ok(m) => m,
        Err(e) => return Err(sticky(e, &mut state)),
    };
    *state = LoadState::Loaded(m);
    drop(state);
    let names: Vec<(usize, String)> = registry().functions.iter().filter(|(_, f)| f.fatbin == id).map(|(&host, f)| (host, f.name.clone())).collect();
    let refs: Vec<&str> = names.iter().map(|(_, n)| n.as_str()).collect();
    // Kernels that fail to resolve here report their error at their own launch.
    if let Ok(results) = module::get_functions(m, &refs) {
        let mut loads = loads(device)?;
        for ((host, _), res) in names.iter().zip(results) {
            if let Ok(h) = res {
                loads.functions.insert((*host, device), h);
            }
        }
    }
    Ok(m)
}

/// The kernel registered under `host_fn`; a `hipFunction_t` is accepted too (HIP programs
/// pass those to `hipLaunchKernel` and friends after `hipGetFuncBySymbol`).
pub(crate) fn resolve_function(host_fn: *const c_void) -> Result<Arc<Function>, CallError> {
    let device = current_device();
    let (fatbin_id, fatbin, name) = {
        let r = registry();
        let Some(reg) = r.functions.get(&(host_fn as usize)) else {
            drop(r);
            return module::function(host_fn as u64).map_err(|_| {
                CallError::new(HipError::INVALID_DEVICE_FUNCTION, format!("{host_fn:p} is not a registered kernel (nor a hipFunction_t)"))
            });
        };
        let fatbin =
            r.fatbins.get(&reg.fatbin).cloned().ok_or_else(|| CallError::new(HipError::INVALID_DEVICE_FUNCTION, "fat binary unregistered"))?;
        (reg.fatbin, fatbin, reg.name.clone())
    };
    let resolved = loads(device)?.functions.get(&(host_fn as usize, device)).copied();
    if let Some(f) = resolved.and_then(|h| module::function(h).ok()) {
        return Ok(f);
    }
    let m = ensure_loaded(fatbin_id, &fatbin, device)?;
    let h = module::get_function(m, &name)?;
    loads(device)?.functions.insert((host_fn as usize, device), h);
    module::function(h)
}

/// The device address and size of the variable registered under `symbol`.
fn resolve_var(symbol: *const c_void) -> Result<(u64, u64), CallError> {
    let device = current_device();
    let (fatbin_id, fatbin, name) = {
        let r = registry();
        let reg = r
            .vars
            .get(&(symbol as usize))
            .ok_or_else(|| CallError::new(HipError::INVALID_SYMBOL, format!("{symbol:p} is not a registered device variable")))?;
        let fatbin = r.fatbins.get(&reg.fatbin).cloned().ok_or_else(|| CallError::new(HipError::INVALID_SYMBOL, "fat binary unregistered"))?;
        (reg.fatbin, fatbin, reg.name.clone())
    };
    if let Some(&g) = loads(device)?.vars.get(&(symbol as usize, device)) {
        return Ok(g);
    }
    let m = ensure_loaded(fatbin_id, &fatbin, device)?;
    let g = module::get_global(m, &name)?;
    loads(device)?.vars.insert((symbol as usize, device), g);
    Ok(g)
}

// ------------------------------------------------------------------------------------------------
// Launch configuration and hipLaunchKernel
// ------------------------------------------------------------------------------------------------

#[no_mangle]
pub extern "C" fn __hipPushCallConfiguration(gridDim: dim3, blockDim: dim3, sharedMem: usize, stream: hipStream_t) -> hipError_t {
    hip_boundary!("__hipPushCallConfiguration", {
        // One stack with hipConfigureCall's, as in ROCm: either may be launched by hipLaunchByPtr.
        super::ext_launch::push_call(gridDim, blockDim, sharedMem, stream)
    })
}

#[no_mangle]
pub unsafe extern "C" fn __hipPopCallConfiguration(
    gridDim: *mut dim3,
    blockDim: *mut dim3,
    sharedMem: *mut usize,
    stream: *mut hipStream_t,
) -> hipError_t {
    hip_boundary!("__hipPopCallConfiguration", {
        let call = super::ext_launch::pop_call().ok_or_else(|| CallError::new(HipError::MISSING_CONFIGURATION, "no pushed launch configuration"))?;
        let (g, b, s, q) = (call.grid, call.block, call.shared_mem, call.stream);
        // SAFETY: each output is written only when non-null (the stub passes all four).
        unsafe {
            if !gridDim.is_null() {
                *gridDim = g;
            }
            if !blockDim.is_null() {
                *blockDim = b;
            }
            if !sharedMem.is_null() {
                *sharedMem = s;
            }
            if !stream.is_null() {
                *stream = q;
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipLaunchKernel(
    function_address: *const c_void,
    numBlocks: dim3,
    dimBlocks: dim3,
    args: *mut *mut c_void,
    sharedMemBytes: usize,
    stream: hipStream_t,
) -> hipError_t {
    hip_boundary!("hipLaunchKernel", {
        let f = resolve_function(function_address)?;
        let g = Geometry {
            grid: [numBlocks.x, numBlocks.y, numBlocks.z],
            block: [dimBlocks.x, dimBlocks.y, dimBlocks.z],
            shared_mem: sharedMemBytes,
            stream,
        };
        // SAFETY: `args` holds one pointer per kernel parameter (HIP's contract).
        unsafe { module::launch(&f, g, args, std::ptr::null_mut(), HipError::INVALID_CONFIGURATION) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetFuncBySymbol(functionPtr: *mut hipFunction_t, symbolPtr: *const c_void) -> hipError_t {
    hip_boundary!("hipGetFuncBySymbol", {
        non_null!(functionPtr);
        let f = resolve_function(symbolPtr)?;
        let handle = module::get_function(f.module, &f.name)?;
        try_out!(functionPtr, hipFunction_t::from_id(handle)?);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipFuncGetAttributes(attr: *mut hipFuncAttributes, func: *const c_void) -> hipError_t {
    hip_boundary!("hipFuncGetAttributes", {
        non_null!(attr);
        let a = module::attributes(&*resolve_function(func)?)?;
        let mut out = hipFuncAttributes::zeroed();
        module::fill_attributes(&mut out, &a);
        try_out!(attr, out);
        Ok(())
    })
}

/// `hipFuncSetAttribute`, with ROCm's checks: a null function is
/// `hipErrorInvalidDeviceFunction`, an attribute beyond `hipFuncAttributeMax` is
/// `hipErrorInvalidValue`; only the two settable attributes reach the worker (ROCm accepts
/// and ignores the other numbers up to `hipFuncAttributeMax`).
#[no_mangle]
pub unsafe extern "C" fn hipFuncSetAttribute(func: *const c_void, attr: hipFuncAttribute, value: c_int) -> hipError_t {
    hip_boundary!("hipFuncSetAttribute", {
        if func.is_null() {
            return Err(CallError::new(HipError::INVALID_DEVICE_FUNCTION, "func is NULL"));
        }
        if attr > hipFuncAttributeMax {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("hipFuncAttribute {attr}")));
        }
        let f = resolve_function(func)?;
        if attr == hipFuncAttributeMaxDynamicSharedMemorySize || attr == hipFuncAttributePreferredSharedMemoryCarveout {
            module::set_attribute(&f, attr, value)
        } else {
            Ok(())
        }
    })
}

/// Cache configuration is a hint that AMD GPUs ignore; ROCm accepts and ignores it too.
#[no_mangle]
pub unsafe extern "C" fn hipFuncSetCacheConfig(func: *const c_void, config: hipFuncCache_t) -> hipError_t {
    hip_boundary!("hipFuncSetCacheConfig", {
        if config > hipFuncCachePreferEqual {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("hipFuncCache_t {config}")));
        }
        resolve_function(func).map(drop)
    })
}

/// Shared-memory bank configuration is a hint AMD GPUs ignore; ROCm accepts and ignores it too.
#[no_mangle]
pub unsafe extern "C" fn hipFuncSetSharedMemConfig(func: *const c_void, config: hipSharedMemConfig) -> hipError_t {
    hip_boundary!("hipFuncSetSharedMemConfig", {
        if config > hipSharedMemBankSizeEightByte {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("hipSharedMemConfig {config}")));
        }
        resolve_function(func).map(drop)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipOccupancyMaxActiveBlocksPerMultiprocessor(
    numBlocks: *mut c_int,
    f: *const c_void,
    blockSize: c_int,
    dynSharedMemPerBlk: usize,
) -> hipError_t {
    hip_boundary!("hipOccupancyMaxActiveBlocksPerMultiprocessor", {
        non_null!(numBlocks);
        let n = module::occupancy_blocks(&*resolve_function(f)?, blockSize, dynSharedMemPerBlk, 0)?;
        try_out!(numBlocks, n);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    numBlocks: *mut c_int,
    f: *const c_void,
    blockSize: c_int,
    dynSharedMemPerBlk: usize,
    flags: c_uint,
) -> hipError_t {
    hip_boundary!("hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", {
        non_null!(numBlocks);
        let n = module::occupancy_blocks(&*resolve_function(f)?, blockSize, dynSharedMemPerBlk, flags)?;
        try_out!(numBlocks, n);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipOccupancyMaxPotentialBlockSize(
    gridSize: *mut c_int,
    blockSize: *mut c_int,
    f: *const c_void,
    dynSharedMemPerBlk: usize,
    blockSizeLimit: c_int,
) -> hipError_t {
    hip_boundary!("hipOccupancyMaxPotentialBlockSize", {
        module::potential_block_size(gridSize, blockSize, &*resolve_function(f)?, dynSharedMemPerBlk, blockSizeLimit, 0)
    })
}

// ------------------------------------------------------------------------------------------------
// Device variables
// ------------------------------------------------------------------------------------------------

/// The device address `offset` bytes into `symbol`, checked for `len` bytes.
pub(crate) fn symbol_range(symbol: *const c_void, offset: usize, len: usize) -> Result<*mut c_void, CallError> {
    let (ptr, size) = resolve_var(symbol)?;
    let end = offset.checked_add(len).filter(|&e| e as u64 <= size);
    if end.is_none() {
        return Err(CallError::new(HipError::INVALID_VALUE, format!("{len} bytes at offset {offset} of a {size}-byte device variable")));
    }
    Ok((ptr + offset as u64) as *mut c_void)
}

/// # Safety
/// `src` must be valid for `len` bytes in the address space `kind` names.
#[allow(non_upper_case_globals)] // hipMemcpyKind constants keep their C names
pub(crate) unsafe fn to_symbol(
    symbol: *const c_void,
    src: *const c_void,
    len: usize,
    offset: usize,
    kind: hipMemcpyKind,
    stream: Option<hipStream_t>,
) -> Result<(), CallError> {
    non_null!(symbol);
    let kind = match kind {
        hipMemcpyHostToDevice | hipMemcpyDeviceToDevice => kind,
        hipMemcpyDefault if is_device_pointer(src as u64) => hipMemcpyDeviceToDevice,
        hipMemcpyDefault => hipMemcpyHostToDevice,
        other => return Err(CallError::new(HipError::INVALID_MEMCPY_DIRECTION, format!("hipMemcpyKind {other} cannot copy to a device variable"))),
    };
    let dst = symbol_range(symbol, offset, len)?;
    // SAFETY: forwarded caller contract; `dst` is inside the variable.
    unsafe { copy(dst, src, len, kind, stream.map(stream_id)) }
}

/// # Safety
/// `dst` must be valid for `len` bytes in the address space `kind` names.
#[allow(non_upper_case_globals)] // hipMemcpyKind constants keep their C names
pub(crate) unsafe fn from_symbol(
    dst: *mut c_void,
    symbol: *const c_void,
    len: usize,
    offset: usize,
    kind: hipMemcpyKind,
    stream: Option<hipStream_t>,
) -> Result<(), CallError> {
    non_null!(symbol);
    let kind = match kind {
        hipMemcpyDeviceToHost | hipMemcpyDeviceToDevice => kind,
        hipMemcpyDefault if is_device_pointer(dst as u64) => hipMemcpyDeviceToDevice,
        hipMemcpyDefault => hipMemcpyDeviceToHost,
        other => return Err(CallError::new(HipError::INVALID_MEMCPY_DIRECTION, format!("hipMemcpyKind {other} cannot copy from a device variable"))),
    };
    let src = symbol_range(symbol, offset, len)?;
    // SAFETY: forwarded caller contract; `src` is inside the variable.
    unsafe { copy(dst, src, len, kind, stream.map(stream_id)) }
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyToSymbol(
    symbol: *const c_void,
    src: *const c_void,
    sizeBytes: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpyToSymbol", { unsafe { to_symbol(symbol, src, sizeBytes, offset, kind, None) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyToSymbolAsync(
    symbol: *const c_void,
    src: *const c_void,
    sizeBytes: usize,
    offset: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpyToSymbolAsync", { unsafe { to_symbol(symbol, src, sizeBytes, offset, kind, Some(stream)) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyFromSymbol(
    dst: *mut c_void,
    symbol: *const c_void,
    sizeBytes: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpyFromSymbol", { unsafe { from_symbol(dst, symbol, sizeBytes, offset, kind, None) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyFromSymbolAsync(
    dst: *mut c_void,
    symbol: *const c_void,
    sizeBytes: usize,
    offset: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    // SAFETY: forwarded caller contract.
    hip_boundary!("hipMemcpyFromSymbolAsync", { unsafe { from_symbol(dst, symbol, sizeBytes, offset, kind, Some(stream)) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetSymbolAddress(devPtr: *mut *mut c_void, symbol: *const c_void) -> hipError_t {
    hip_boundary!("hipGetSymbolAddress", {
        non_null!(devPtr);
        let (ptr, _) = resolve_var(symbol)?;
        try_out!(devPtr, ptr as *mut c_void);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetSymbolSize(size: *mut usize, symbol: *const c_void) -> hipError_t {
    hip_boundary!("hipGetSymbolSize", {
        non_null!(size);
        let (_, bytes) = resolve_var(symbol)?;
        try_out!(size, bytes as usize);
        Ok(())
    })
}

/// The device name registered for the kernel whose host stub is `host_fn` (what the compiler
/// gave `__hipRegisterFunction`), as a C string that lives until its fat binary is
/// unregistered (made once, on first request); NULL for a function no fat binary registered.
fn registered_name(host_fn: *const c_void) -> *const c_char {
    let mut r = registry();
    let Some(f) = r.functions.get_mut(&(host_fn as usize)) else { return std::ptr::null() };
    if f.c_name.is_none() {
        f.c_name = std::ffi::CString::new(f.name.as_str()).ok();
    }
    // The string lives in the registry until the fat binary is unregistered.
    f.c_name.as_ref().map_or(std::ptr::null(), |name| name.as_ptr())
}

/// `hipKernelNameRefByPtr`: the device name of the kernel whose host stub is `hostFunction`,
/// as ROCm's clr answers it: NULL for a NULL function, a stream of no device, or a function
/// no fat binary registered.
#[no_mangle]
pub unsafe extern "C" fn hipKernelNameRefByPtr(hostFunction: *const c_void, stream: hipStream_t) -> *const std::ffi::c_char {
    // No hip_boundary (the answer is a name, not an error to record): panics are caught here.
    std::panic::catch_unwind(|| {
        if hostFunction.is_null() || crate::api::stream::hipGetStreamDeviceId(stream) == -1 {
            return std::ptr::null();
        }
        registered_name(hostFunction)
    })
    .unwrap_or(std::ptr::null())
}

#[cfg(test)]
mod test {
    use super::*;

    fn wrapper(bundle: &[u8]) -> [u8; 24] {
        let mut w = [0u8; 24];
        w[..4].copy_from_slice(&fatbin::WRAPPER_MAGIC.to_le_bytes());
        w[4..8].copy_from_slice(&1u32.to_le_bytes());
        w[8..16].copy_from_slice(&(bundle.as_ptr() as u64).to_le_bytes());
        w
    }

    #[test]
    fn test_register_records_without_network() {
        let bundle = fatbin::test_support::bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", b"code")]);
        let w = wrapper(&bundle);
        // SAFETY: a valid wrapper; registration reads only it.
        let h = unsafe { __hipRegisterFatBinary(w.as_ptr() as *const c_void) };
        assert!(!h.is_null());
        static KERNEL_HANDLE: u8 = 0;
        static mut SHADOW: [u8; 16] = [0; 16];
        let host_fn = &KERNEL_HANDLE as *const u8 as *const c_void;
        let shadow = std::ptr::addr_of_mut!(SHADOW) as *mut c_void;
        // SAFETY: NUL-terminated names; the rest is not read.
        unsafe {
            __hipRegisterFunction(
                h,
                host_fn,
                c"_Z4testv".as_ptr() as *mut c_char,
                c"_Z4testv".as_ptr(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            __hipRegisterVar(h, shadow, c"counter".as_ptr() as *mut c_char, c"counter".as_ptr() as *mut c_char, 0, 16, 0, 0);
        }
        {
            let r = registry();
            assert_eq!(r.functions[&(host_fn as usize)].name, "_Z4testv");
            assert_eq!(r.vars[&(shadow as usize)].name, "counter");
            let fb = &r.fatbins[&(h as u64)];
            assert_eq!(fb.bundle, bundle.as_ptr() as usize);
            assert!(fb.unusable.is_none());
        }
        for published in remote::every_published() {
            assert!(!published.family(&LOADS).fatbins.keys().any(|(fatbin, _)| *fatbin == h as u64), "registration loads nothing");
        }
        // SAFETY: a handle registered above, unregistered once.
        unsafe { __hipUnregisterFatBinary(h) };
        let r = registry();
        assert!(!r.functions.contains_key(&(host_fn as usize)));
        assert!(!r.vars.contains_key(&(shadow as usize)));
        assert!(!r.fatbins.contains_key(&(h as u64)));
    }

    #[test]
    fn test_bad_wrapper_fails_at_launch_not_registration() {
        let junk = [0u8; 24];
        // SAFETY: 24 readable bytes.
        let h = unsafe { __hipRegisterFatBinary(junk.as_ptr() as *const c_void) };
        assert!(!h.is_null());
        static K: u8 = 0;
        let host_fn = &K as *const u8 as *const c_void;
        // SAFETY: as above.
        unsafe {
            __hipRegisterFunction(
                h,
                host_fn,
                std::ptr::null_mut(),
                c"k".as_ptr(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
        }
        let e = resolve_function(host_fn).unwrap_err();
        assert_eq!(e.code, HipError::INVALID_IMAGE);
        assert!(e.message.contains("bad magic"), "{}", e.message);
        // SAFETY: a null wrapper is refused, not read.
        let h2 = unsafe { __hipRegisterFatBinary(std::ptr::null()) };
        assert!(!h2.is_null() && h2 != h);
        // SAFETY: handles registered above, each unregistered once.
        unsafe {
            __hipUnregisterFatBinary(h);
            __hipUnregisterFatBinary(h2);
        }
    }

    #[test]
    fn test_unregistered_pointers() {
        static NOT_A_KERNEL: u8 = 0;
        let e = resolve_function(&NOT_A_KERNEL as *const u8 as *const c_void).unwrap_err();
        assert_eq!(e.code, HipError::INVALID_DEVICE_FUNCTION);
        let e = resolve_var(&NOT_A_KERNEL as *const u8 as *const c_void).unwrap_err();
        assert_eq!(e.code, HipError::INVALID_SYMBOL);
    }

    #[test]
    fn test_call_configuration_stack() {
        let mut g = dim3::new(0, 0, 0);
        let mut b = dim3::new(0, 0, 0);
        let mut s = 0usize;
        let mut q: hipStream_t = std::ptr::null_mut();
        // SAFETY: valid outputs.
        assert_eq!(unsafe { __hipPopCallConfiguration(&mut g, &mut b, &mut s, &mut q) }, HipError::MISSING_CONFIGURATION);
        assert_eq!(__hipPushCallConfiguration(dim3::new(1, 2, 3), dim3::new(4, 5, 6), 7, crate::handle::from_id(8).unwrap()), HipError::SUCCESS);
        assert_eq!(__hipPushCallConfiguration(dim3::new(9, 9, 9), dim3::new(1, 1, 1), 0, std::ptr::null_mut()), HipError::SUCCESS);
        // SAFETY: valid outputs.
        assert_eq!(unsafe { __hipPopCallConfiguration(&mut g, &mut b, &mut s, &mut q) }, HipError::SUCCESS);
        assert_eq!((g.x, b.x, s), (9, 1, 0));
        // SAFETY: valid outputs.
        assert_eq!(unsafe { __hipPopCallConfiguration(&mut g, &mut b, &mut s, &mut q) }, HipError::SUCCESS);
        assert_eq!((g.x, g.y, g.z, b.x, b.y, b.z, s, q as usize), (1, 2, 3, 4, 5, 6, 7, 8));
    }
}
