//! Module family: code objects loaded into the worker, their functions and globals, kernel
//! launches with exactly packed arguments, function attributes and occupancy; and
//! [`__hipRemoteRtcCompile`], libhiprtc's way onto this library's connection.
//!
//! **Handles.** `hipModule_t` and `hipFunction_t` are ids into this library's tables, drawn
//! from one counter and never reused; they are never dereferenced, so a stale (unloaded) or
//! made-up handle is `hipErrorInvalidHandle`, not a crash. A function entry holds everything a
//! launch needs without asking the worker: the worker's handle and the parameter layout that
//! `ModuleGetFunction` returned (and the attributes once asked for).
//!
//! **Round trips.** `hipModuleLoad*` is one round trip (the image travels as the frame's bulk
//! section; a fat binary is reduced to the one code object the worker's device runs before
//! it is sent). `hipModuleGetFunction` is one round trip the first time a module+name is asked
//! for and none after (cached); [`get_functions`] resolves many names in one round trip
//! (pipelined), which the lazy loading of `<<<>>>` fat binaries uses for all their kernels at
//! once. Launches are fire-and-forget (their failures surface at the next synchronising call,
//! as on a GPU).
//!
//! **Arguments.** `kernelParams[i]` points at parameter `i`; exactly `size` bytes of it are
//! copied to `offset` in one blob, by the layout the worker reported (never a guessed 8
//! bytes). An `extra` buffer (`HIP_LAUNCH_PARAM_BUFFER_POINTER/SIZE/END`) is already packed:
//! it is sent as it is, after checking that it covers the layout's end (bytes past the end
//! are padding and are not sent).

pub mod register;

use proto_core::rtc_entry::{RtcCompileFn, RtcResultFn};
use crate::abi::*;
use crate::handle::stream_id;
use crate::state::devices::{current_device, max_threads_per_block, properties};
use crate::conn::CallError;
use crate::fatbin::{self, Bundle, Extent, ImageKind};
use crate::remote::{call_sync, with_conn};
use proto_core::{calls, Caller, Calls};
use proto_core::limits::{MAX_BULK_LEN, MAX_KERNEL_ARGS_LEN, MAX_KERNEL_PARAMS, MAX_NAME_LEN};
use proto_core::wire::{self, ModuleFormat};
use proto_core::{Bulk, StrList};
use std::borrow::Cow;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

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
const MAX_EXTRA_ENTRIES: usize = 64;

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
    pub fn pack<'a>(&self, mut arg: impl FnMut(usize, usize) -> Result<&'a [u8], CallError>) -> Result<Vec<u8>, CallError> {
        let mut blob = vec![0u8; self.len];
        for (i, p) in self.params.iter().enumerate() {
            let bytes = arg(i, p.size)?;
            if bytes.len() != p.size {
                return Err(CallError::new(HipError::INVALID_VALUE, format!("kernel argument {i}: {} bytes for a {}-byte parameter", bytes.len(), p.size)));
            }
            blob[p.offset..p.offset + p.size].copy_from_slice(bytes);
        }
        Ok(blob)
    }

    /// Packs HIP's `kernelParams` / `hipLaunchKernel` `args`: an array with one pointer per
    /// parameter, each pointing at the argument's value.
    ///
    /// # Safety
    /// `kernel_params` must hold one pointer per parameter, each valid for that parameter's
    /// size (HIP's contract); null pointers are refused.
    pub unsafe fn pack_pointers(&self, kernel_params: *const *mut c_void) -> Result<Vec<u8>, CallError> {
        if self.params.is_empty() {
            return Ok(Vec::new());
        }
        if kernel_params.is_null() {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("the kernel takes {} arguments but kernelParams is NULL", self.params.len())));
        }
        self.pack(|i, size| {
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
// Tables
// ------------------------------------------------------------------------------------------------

/// A loaded function.
#[derive(Debug)]
pub struct Function {
    /// The worker's handle.
    pub worker: u64,
    /// The client module handle it belongs to.
    pub module: u64,
    /// Its (mangled) name.
    pub name: String,
    /// Its parameter layout.
    pub layout: ArgLayout,
    /// Cached `hipFuncGetAttributes` answer; `hipFuncSetAttribute` drops it.
    attributes: Mutex<Option<wire::FuncAttributes>>,
}

struct ModuleEntry {
    worker: u64,
    origin: String,
    functions: HashMap<String, u64>,
    globals: HashMap<String, (u64, u64)>,
}

#[derive(Default)]
struct Tables {
    modules: HashMap<u64, ModuleEntry>,
    functions: HashMap<u64, Arc<Function>>,
}

fn tables() -> MutexGuard<'static, Tables> {
    static TABLES: OnceLock<Mutex<Tables>> = OnceLock::new();
    TABLES.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
}

/// A fresh handle value for a module, function or registered fat binary (never 0, never reused).
pub(crate) fn next_handle() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The function behind a `hipFunction_t`.
pub fn function(handle: u64) -> Result<Arc<Function>, CallError> {
    tables().functions.get(&handle).cloned().ok_or_else(|| {
        CallError::new(HipError::INVALID_HANDLE, format!("{handle:#x} is not a hipFunction_t of this process (bad handle, or its module was unloaded)"))
    })
}

fn module_worker(module: u64) -> Result<(u64, String), CallError> {
    tables().modules.get(&module).map(|m| (m.worker, m.origin.clone())).ok_or_else(|| {
        CallError::new(HipError::INVALID_HANDLE, format!("{module:#x} is not a hipModule_t of this process (bad handle, or already unloaded)"))
    })
}

/// A string argument as UTF-8 text.
///
/// # Safety
/// `ptr` must be null or a NUL-terminated string.
pub(crate) unsafe fn c_str<'a>(ptr: *const c_char, what: &str) -> Result<&'a str, CallError> {
    if ptr.is_null() {
        return Err(CallError::new(HipError::INVALID_VALUE, format!("{what} is NULL")));
    }
    // SAFETY: non-null, NUL-terminated (caller contract).
    let s = unsafe { CStr::from_ptr(ptr) };
    s.to_str().map_err(|_| CallError::new(HipError::INVALID_VALUE, format!("{what} is not UTF-8")))
}

/// `s` cut to a wire name's length at a character boundary.
fn wire_name(s: &str) -> &str {
    if s.len() <= MAX_NAME_LEN {
        return s;
    }
    let mut end = MAX_NAME_LEN;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

// ------------------------------------------------------------------------------------------------
// Loading
// ------------------------------------------------------------------------------------------------

/// The architecture (`gcnArchName`) of the calling thread's device.
pub(crate) fn device_arch() -> Result<String, CallError> {
    Ok(properties(current_device())?.arch_name.as_str().to_string())
}

fn invalid_image(origin: &str, e: impl std::fmt::Display) -> CallError {
    CallError::new(HipError::INVALID_IMAGE, format!("{origin}: {e}"))
}

/// What to send for `image`: its format, and the bytes (for a fat binary, just the code
/// object the current device runs).
fn prepare_image<'a>(image: &'a [u8], origin: &str) -> Result<(ModuleFormat, Cow<'a, [u8]>), CallError> {
    match fatbin::classify(image).map_err(|e| invalid_image(origin, e))? {
        ImageKind::Elf { machine: fatbin::EM_AMDGPU } => {
            let arch = device_arch()?;
            if fatbin::Arch::parse(&arch).processor == "host" {
                return Err(CallError::new(
                    HipError::NO_BINARY_FOR_GPU,
                    format!("{origin} is an AMD GPU code object; the worker's device is '{arch}' (host backend), which runs host modules only"),
                ));
            }
            Ok((ModuleFormat::CodeObject, Cow::Borrowed(image)))
        }
        ImageKind::Elf { machine: fatbin::EM_CUDA } => Ok((ModuleFormat::Cubin, Cow::Borrowed(image))),
        ImageKind::Elf { .. } => Ok((ModuleFormat::HostModule, Cow::Borrowed(image))),
        ImageKind::Ptx => Ok((ModuleFormat::Ptx, Cow::Borrowed(image))),
        ImageKind::NvFatbin => Ok((ModuleFormat::Fatbin, Cow::Borrowed(image))),
        ImageKind::Bundle => {
            let bundle = Bundle::parse(image).map_err(|e| invalid_image(origin, e))?;
            Ok((ModuleFormat::CodeObject, Cow::Borrowed(pick(&bundle, origin)?)))
        }
        ImageKind::CompressedBundle => {
            let plain = fatbin::decompress(image).map_err(|e| invalid_image(origin, e))?;
            let bundle = Bundle::parse(&plain).map_err(|e| invalid_image(origin, e))?;
            Ok((ModuleFormat::CodeObject, Cow::Owned(pick(&bundle, origin)?.to_vec())))
        }
    }
}

/// The code object of `bundle` that the current device runs.
fn pick<'b>(bundle: &Bundle<'b>, origin: &str) -> Result<&'b [u8], CallError> {
    let arch = device_arch()?;
    let entry = fatbin::select(bundle, &arch).map_err(|miss| CallError::new(HipError::NO_BINARY_FOR_GPU, format!("{origin}: {miss}")))?;
    Ok(entry.code)
}

/// Loads `image` into the worker; returns the new `hipModule_t` value.
pub(crate) fn load_image(image: &[u8], origin: &str) -> Result<u64, CallError> {
    let (format, code) = prepare_image(image, origin)?;
    if code.len() > MAX_BULK_LEN {
        return Err(CallError::new(HipError::INVALID_IMAGE, format!("{origin}: code object of {} bytes exceeds the protocol's {MAX_BULK_LEN}", code.len())));
    }
    let req = wire::ModuleLoad { format, origin: wire_name(origin).into(), image: Bulk(&code) };
    let worker = with_conn(|c| c.module_load(req))?.module;
    let handle = next_handle();
    let entry = ModuleEntry { worker, origin: origin.to_string(), functions: HashMap::new(), globals: HashMap::new() };
    tables().modules.insert(handle, entry);
    Ok(handle)
}

/// Readable bytes from `addr` to the end of the loaded segment that holds it, when `addr` lies
/// in an executable or shared object of this process (Linux: `dl_iterate_phdr`).
#[cfg(target_os = "linux")]
pub(crate) fn mapped_len(addr: usize) -> Option<usize> {
    struct Search {
        addr: usize,
        found: Option<usize>,
    }
    unsafe extern "C" fn visit(info: *mut libc::dl_phdr_info, _size: libc::size_t, data: *mut c_void) -> c_int {
        // SAFETY: `data` is the `Search` passed below; `info` is valid during the callback.
        let (search, info) = unsafe { (&mut *(data as *mut Search), &*info) };
        for i in 0..usize::from(info.dlpi_phnum) {
            // SAFETY: `dlpi_phdr` has `dlpi_phnum` entries.
            let ph = unsafe { &*info.dlpi_phdr.add(i) };
            if ph.p_type != libc::PT_LOAD {
                continue;
            }
            let start = (info.dlpi_addr as usize).wrapping_add(ph.p_vaddr as usize);
            let end = start.saturating_add(ph.p_memsz as usize);
            if (start..end).contains(&search.addr) {
                search.found = Some(end - search.addr);
                return 1;
            }
        }
        0
    }
    let mut search = Search { addr, found: None };
    // SAFETY: the callback only reads the headers it is handed and writes `search`.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut search as *mut Search as *mut c_void) };
    search.found
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn mapped_len(_addr: usize) -> Option<usize> {
    None
}

/// The image at `ptr`, its length learnt from its own headers ([`fatbin::image_extent`]) and
/// bounded by the loaded segment holding it where that is known.
///
/// # Safety
/// `ptr` must point at an image valid for the length its headers declare.
pub(crate) unsafe fn image_at<'a>(ptr: *const u8, origin: &str) -> Result<&'a [u8], CallError> {
    if ptr.is_null() {
        return Err(CallError::new(HipError::INVALID_VALUE, "image is NULL"));
    }
    // SAFETY: the caller passes an image; its first byte is readable.
    let first = unsafe { *ptr };
    if first == b'/' || first == b'.' || first.is_ascii_whitespace() {
        // PTX is NUL-terminated text (as cuModuleLoadData takes it).
        // SAFETY: text images are NUL-terminated by contract.
        return Ok(unsafe { std::ffi::CStr::from_ptr(ptr.cast()) }.to_bytes_with_nul());
    }
    let bound = mapped_len(ptr as usize);
    let beyond = |n: usize| bound.is_some_and(|b| n > b);
    let mut seen = 0;
    loop {
        // SAFETY: `seen` bytes were promised by the headers read so far (caller contract) and
        // lie within the mapped segment where that is known.
        let view = unsafe { std::slice::from_raw_parts(ptr, seen) };
        match fatbin::image_extent(view).map_err(|e| invalid_image(origin, e))? {
            Extent::NeedMore(n) | Extent::Complete(n) if beyond(n) => {
                return Err(invalid_image(origin, format!("its headers reach byte {n}, past the end of the mapped segment holding it")));
            }
            Extent::NeedMore(n) => seen = n,
            // SAFETY: as above.
            Extent::Complete(n) => return Ok(unsafe { std::slice::from_raw_parts(ptr, n) }),
            Extent::Unsized => match bound {
                // SAFETY: the whole rest of the segment is mapped.
                Some(b) => return Ok(unsafe { std::slice::from_raw_parts(ptr, b.min(fatbin::MAX_IMAGE_LEN)) }),
                None => {
                    return Err(invalid_image(origin, "a version 1 compressed bundle records no size, and this address lies in no loaded object; load it from its file with hipModuleLoad"));
                }
            },
        }
    }
}

fn store_module(module: *mut hipModule_t, handle: u64) {
    // SAFETY: checked non-null by the callers.
    unsafe { *module = handle as hipModule_t };
}

// ------------------------------------------------------------------------------------------------
// Functions and globals
// ------------------------------------------------------------------------------------------------

/// Most function lookups sent before their replies are read.
const LOOKUP_BATCH: usize = 128;

/// Resolves `names` in `module`: cached ones at once, the rest pipelined (one round trip per
/// [`LOOKUP_BATCH`] names).
pub(crate) fn get_functions(module: u64, names: &[&str]) -> Result<Vec<Result<u64, CallError>>, CallError> {
    let (worker, origin) = module_worker(module)?;
    let mut out: Vec<Option<Result<u64, CallError>>> = {
        let t = tables();
        let Some(m) = t.modules.get(&module) else {
            return Err(CallError::new(HipError::INVALID_HANDLE, "module unloaded while its functions were looked up"));
        };
        names.iter().map(|n| m.functions.get(*n).map(|&h| Ok(h))).collect()
    };
    let missing: Vec<usize> = (0..names.len()).filter(|&i| out[i].is_none()).collect();
    if !missing.is_empty() {
        let reqs: Vec<wire::SymbolLookup<'_>> =
            missing.iter().map(|&i| wire::SymbolLookup { module: worker, name: wire_name(names[i]).into() }).collect();
        // Pipelined in bounded batches: both directions' socket buffers hold a whole batch,
        // so neither side blocks writing while the other is not reading.
        let mut replies = Vec::with_capacity(reqs.len());
        for batch in reqs.chunks(LOOKUP_BATCH) {
            replies.extend(with_conn(|c| {
                c.call_batch::<calls::ModuleGetFunction, _>(batch.iter().cloned(), |_, f| {
                    (f.function, f.params.0.iter().map(|p| (p.offset.get(), p.size.get())).collect::<Vec<_>>())
                })
            })?);
        }
        let mut t = tables();
        for (&i, reply) in missing.iter().zip(replies) {
            let resolved = reply.and_then(|(worker_fn, params)| Ok((worker_fn, ArgLayout::new(params)?)));
            out[i] = Some(match resolved {
                Err(e) => Err(CallError::new(e.code, format!("{origin}: kernel {}: {}", names[i], e.message))),
                Ok((worker_fn, layout)) => {
                    let Some(m) = t.modules.get_mut(&module) else {
                        return Err(CallError::new(HipError::INVALID_HANDLE, "module unloaded while its functions were looked up"));
                    };
                    // A concurrent lookup of the same name may have won: keep its handle.
                    let handle = match m.functions.get(names[i]) {
                        Some(&h) => h,
                        None => {
                            let h = next_handle();
                            m.functions.insert(names[i].to_string(), h);
                            let f = Function { worker: worker_fn, module, name: names[i].to_string(), layout, attributes: Mutex::new(None) };
                            t.functions.insert(h, Arc::new(f));
                            h
                        }
                    };
                    Ok(handle)
                }
            });
        }
    }
    Ok(out.into_iter().map(|r| r.expect("every name answered")).collect())
}

/// Resolves one function of `module`.
pub(crate) fn get_function(module: u64, name: &str) -> Result<u64, CallError> {
    get_functions(module, &[name])?.pop().expect("one name, one answer")
}

/// A device global of `module`: its address and size (cached).
pub(crate) fn get_global(module: u64, name: &str) -> Result<(u64, u64), CallError> {
    let (worker, origin) = module_worker(module)?;
    if let Some(&g) = tables().modules.get(&module).and_then(|m| m.globals.get(name)) {
        return Ok(g);
    }
    let req = wire::SymbolLookup { module: worker, name: wire_name(name).into() };
    let global = with_conn(|c| c.module_get_global(req).map(|g| (g.ptr, g.size)))
    .map_err(|e| CallError::new(e.code, format!("{origin}: global {name}: {}", e.message)))?;
    if let Some(m) = tables().modules.get_mut(&module) {
        m.globals.insert(name.to_string(), global);
    }
    // A global is device memory: hipMemcpyDefault must see it as such.
    crate::state::allocations::note_device_range(global.0, global.1, current_device());
    Ok(global)
}

/// Drops `module` and its functions from the tables; returns its worker handle.
pub(crate) fn forget_module(module: u64) -> Option<u64> {
    let mut t = tables();
    let entry = t.modules.remove(&module)?;
    for h in entry.functions.values() {
        t.functions.remove(h);
    }
    Some(entry.worker)
}

/// The attributes of `f` (asked once, then cached until `hipFuncSetAttribute` changes them).
pub(crate) fn attributes(f: &Function) -> Result<wire::FuncAttributes, CallError> {
    if let Some(a) = f.attributes.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
        return Ok(a.clone());
    }
    let a = with_conn(|c| {
        c.func_get_attributes(wire::FunctionRef { function: f.worker })
    })?;
    *f.attributes.lock().unwrap_or_else(|p| p.into_inner()) = Some(a.clone());
    Ok(a)
}

/// `hipFuncSetAttribute` on the worker; the cached attributes are dropped so the next
/// `hipFuncGetAttributes` reports the new value.
pub(crate) fn set_attribute(f: &Function, attribute: u32, value: i32) -> Result<(), CallError> {
    with_conn(|c| c.func_set_attribute(wire::FuncSetAttribute { function: f.worker, attribute, value }))?;
    *f.attributes.lock().unwrap_or_else(|p| p.into_inner()) = None;
    Ok(())
}

/// Fills a `hipFuncAttributes`.
pub(crate) fn fill_attributes(out: &mut hipFuncAttributes, a: &wire::FuncAttributes) {
    out.binaryVersion = a.binary_version;
    out.cacheModeCA = a.cache_mode_ca;
    out.constSizeBytes = a.const_size as usize;
    out.localSizeBytes = a.local_size as usize;
    out.maxDynamicSharedSizeBytes = a.max_dynamic_shared_size;
    out.maxThreadsPerBlock = a.max_threads_per_block;
    out.numRegs = a.num_regs;
    out.preferredShmemCarveout = a.preferred_shmem_carveout;
    out.ptxVersion = a.ptx_version;
    out.sharedSizeBytes = a.shared_size as usize;
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
pub(crate) unsafe fn launch(f: &Function, g: Geometry, kernel_params: *mut *mut c_void, extra: *mut *mut c_void, bad_dims: HipError) -> Result<(), CallError> {
    if g.grid.contains(&0) || g.block.contains(&0) {
        return Err(CallError::new(bad_dims, format!("launch of {} with grid {:?} block {:?}: every dimension must be at least 1", f.name, g.grid, g.block)));
    }
    let threads = g.block.iter().map(|&d| u64::from(d)).product::<u64>();
    let max = u64::from(max_threads_per_block(current_device())?);
    if max > 0 && threads > max {
        return Err(CallError::new(bad_dims, format!("launch of {} with {threads} threads per block (device maximum {max})", f.name)));
    }
    let shared_mem = u32::try_from(g.shared_mem).map_err(|_| CallError::new(bad_dims, format!("{} bytes of dynamic shared memory", g.shared_mem)))?;
    let owned;
    let args: &[u8] = match (kernel_params.is_null(), extra.is_null()) {
        (false, false) => {
            return Err(CallError::new(HipError::INVALID_VALUE, "kernelParams and extra are both given; pass one"));
        }
        // SAFETY: forwarded caller contract.
        (true, false) => f.layout.check_buffer(unsafe { extra_buffer(extra)? })?,
        _ => {
            // SAFETY: forwarded caller contract (a null array is refused when the kernel has parameters).
            owned = unsafe { f.layout.pack_pointers(kernel_params)? };
            &owned
        }
    };
    let req = wire::LaunchKernel {
        function: f.worker,
        grid: g.grid,
        block: g.block,
        shared_mem,
        stream: stream_id(g.stream),
        args: args.into(),
    };
    with_conn(|c| c.post::<calls::LaunchKernel>(req))
}

/// `hipModuleOccupancyMaxActiveBlocksPerMultiprocessor`.
pub(crate) fn occupancy_blocks(f: &Function, block_size: c_int, dynamic_shared: usize, flags: c_uint) -> Result<c_int, CallError> {
    let block_size = u32::try_from(block_size).ok().filter(|&b| b > 0).ok_or_else(|| CallError::new(HipError::INVALID_VALUE, format!("block size {block_size}")))?;
    let req = wire::OccupancyQuery { function: f.worker, block_size, dynamic_shared: dynamic_shared as u64, flags };
    let blocks = with_conn(|c| c.occupancy_max_active_blocks(req))?.blocks;
    Ok(c_int::try_from(blocks).unwrap_or(c_int::MAX))
}

/// `hipModuleOccupancyMaxPotentialBlockSize`: (grid size, block size).
pub(crate) fn occupancy_block_size(f: &Function, dynamic_shared: usize, limit: c_int, flags: c_uint) -> Result<(c_int, c_int), CallError> {
    let limit = u32::try_from(limit).map_err(|_| CallError::new(HipError::INVALID_VALUE, format!("block size limit {limit}")))?;
    let req = wire::BlockSizeQuery { function: f.worker, dynamic_shared: dynamic_shared as u64, block_size_limit: limit, flags };
    let b = with_conn(|c| c.occupancy_max_potential_block_size(req))?;
    Ok((c_int::try_from(b.min_grid_size).unwrap_or(c_int::MAX), c_int::try_from(b.block_size).unwrap_or(c_int::MAX)))
}

// ------------------------------------------------------------------------------------------------
// Exports
// ------------------------------------------------------------------------------------------------

fn load_file(module: *mut hipModule_t, fname: *const c_char) -> Result<(), CallError> {
    non_null!(module);
    // SAFETY: a NUL-terminated path (HIP's contract).
    let name = unsafe { c_str(fname, "fname")? };
    let image = std::fs::read(name).map_err(|e| CallError::new(HipError::FILE_NOT_FOUND, format!("{name}: {e}")))?;
    let handle = load_image(&image, name)?;
    store_module(module, handle);
    Ok(())
}

/// # Safety
/// `image` must be a code object, offload bundle or host module valid for the length its
/// headers declare.
unsafe fn load_data(module: *mut hipModule_t, image: *const c_void) -> Result<(), CallError> {
    non_null!(module);
    non_null!(image);
    let origin = format!("image@{image:p}");
    // SAFETY: forwarded caller contract.
    let bytes = unsafe { image_at(image as *const u8, &origin)? };
    let handle = load_image(bytes, &origin)?;
    store_module(module, handle);
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
        let worker = forget_module(module as u64)
            .ok_or_else(|| CallError::new(HipError::INVALID_HANDLE, format!("{module:p} is not a loaded hipModule_t")))?;
        call_sync(|c| c.module_unload(wire::ModuleRef { module: worker }))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleGetFunction(function: *mut hipFunction_t, module: hipModule_t, kname: *const c_char) -> hipError_t {
    hip_boundary!("hipModuleGetFunction", {
        non_null!(function);
        // SAFETY: a NUL-terminated name (HIP's contract).
        let name = unsafe { c_str(kname, "kname")? };
        let handle = get_function(module as u64, name)?;
        // SAFETY: checked non-null.
        unsafe { *function = handle as hipFunction_t };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleGetGlobal(dptr: *mut hipDeviceptr_t, bytes: *mut usize, hmod: hipModule_t, name: *const c_char) -> hipError_t {
    hip_boundary!("hipModuleGetGlobal", {
        // SAFETY: a NUL-terminated name (HIP's contract).
        let name = unsafe { c_str(name, "name")? };
        let (ptr, size) = get_global(hmod as u64, name)?;
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
        let f = function(f as u64)?;
        let g = Geometry {
            grid: [gridDimX, gridDimY, gridDimZ],
            block: [blockDimX, blockDimY, blockDimZ],
            shared_mem: sharedMemBytes as usize,
            stream,
        };
        // SAFETY: forwarded caller contract.
        unsafe { launch(&f, g, kernelParams, extra, HipError::INVALID_VALUE) }
    })
}

/// `hipFunction_attribute` values past `HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA` (ROCm's enum).
const HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: hipFunction_attribute = 8;
const HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: hipFunction_attribute = 9;

#[no_mangle]
pub unsafe extern "C" fn hipFuncGetAttribute(value: *mut c_int, attrib: hipFunction_attribute, hfunc: hipFunction_t) -> hipError_t {
    hip_boundary!("hipFuncGetAttribute", {
        non_null!(value);
        let a = attributes(&*function(hfunc as u64)?)?;
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
        // SAFETY: checked non-null.
        unsafe { *value = v };
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
        let n = occupancy_blocks(&*function(f as u64)?, blockSize, dynSharedMemPerBlk, 0)?;
        // SAFETY: checked non-null.
        unsafe { *numBlocks = n };
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
        let n = occupancy_blocks(&*function(f as u64)?, blockSize, dynSharedMemPerBlk, flags)?;
        // SAFETY: checked non-null.
        unsafe { *numBlocks = n };
        Ok(())
    })
}

pub(crate) fn potential_block_size(grid: *mut c_int, block: *mut c_int, f: &Function, dyn_shared: usize, limit: c_int, flags: c_uint) -> Result<(), CallError> {
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
        potential_block_size(gridSize, blockSize, &*function(f as u64)?, dynSharedMemPerBlk, blockSizeLimit, 0)
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
        potential_block_size(gridSize, blockSize, &*function(f as u64)?, dynSharedMemPerBlk, blockSizeLimit, flags)
    })
}

// ------------------------------------------------------------------------------------------------
// libhiprtc's entry point
// ------------------------------------------------------------------------------------------------

/// `(ptr, len)` as text.
///
/// # Safety
/// `ptr` must be valid for `len` bytes (or `len` 0).
unsafe fn text<'a>(ptr: *const c_char, len: usize, what: &str) -> Result<&'a str, CallError> {
    if len == 0 {
        return Ok("");
    }
    if ptr.is_null() {
        return Err(CallError::new(HipError::INVALID_VALUE, format!("{what} is NULL")));
    }
    // SAFETY: caller contract.
    let bytes = unsafe { std::slice::from_raw_parts(ptr as *const u8, len) };
    std::str::from_utf8(bytes).map_err(|_| CallError::new(HipError::INVALID_VALUE, format!("{what} is not UTF-8")))
}

/// # Safety
/// As [`text`]; the list is packed NUL-terminated items.
unsafe fn str_list<'a>(ptr: *const c_char, len: usize, what: &str) -> Result<StrList<'a>, CallError> {
    // SAFETY: forwarded caller contract.
    let packed = unsafe { text(ptr, len, what)? };
    StrList::from_packed(packed).ok_or_else(|| {
        CallError::new(HipError::INVALID_VALUE, format!("{what}: not NUL-terminated items, or more than the protocol's limits"))
    })
}

/// **hip-remote internal entry point for libhiprtc** (not a HIP API): compiles a hiprtc program
/// on the worker over this library's connection, so a process that loads both
/// `libhiprtc.so.7` and `libamdhip64.so.7` keeps a single connection and session (and code
/// compiled for the worker's device is loaded by the same session). libhiprtc finds it with
/// `dlsym`.
///
/// Every string is `(pointer, byte length)`, UTF-8 without NUL; the four lists are packed
/// NUL-terminated items (`"a\0b\0"`): `header_names`/`header_sources` (same order), `options`,
/// `name_expressions`. Exactly one call of `on_result(ctx, ...)` happens before this returns:
/// `success` 1 with the code (a host module or code object for the worker's device), the
/// compiler's log and one lowered name per name expression (packed like the inputs); 0 when the
/// compiler failed (its log is `log`); -1 when no compilation happened (connection, limits,
/// worker refusal), with the reason as `log`, and then the result is that `hipError_t`.
/// Signature: [`proto_core::rtc_entry::RtcCompileFn`].
#[no_mangle]
pub unsafe extern "C" fn __hipRemoteRtcCompile(
    name: *const c_char,
    name_len: usize,
    source: *const c_char,
    source_len: usize,
    header_names: *const c_char,
    header_names_len: usize,
    header_sources: *const c_char,
    header_sources_len: usize,
    options: *const c_char,
    options_len: usize,
    name_expressions: *const c_char,
    name_expressions_len: usize,
    on_result: Option<RtcResultFn>,
    ctx: *mut c_void,
) -> c_int {
    let mut delivered = false;
    let mut failure = None;
    let result = hip_boundary!("__hipRemoteRtcCompile", {
        let Some(on_result) = on_result else {
            return Err(CallError::new(HipError::INVALID_VALUE, "on_result is NULL"));
        };
        let deliver = |out: &wire::RtcCompiled<'_>| {
            let (log, lowered, code) = (out.log.as_str(), out.lowered_names.packed(), out.code.0);
            // SAFETY: the callback copies what it keeps; the slices live until it returns.
            unsafe {
                on_result(
                    ctx,
                    c_int::from(out.success),
                    log.as_ptr() as *const c_char,
                    log.len(),
                    lowered.as_ptr() as *const c_char,
                    lowered.len(),
                    code.as_ptr() as *const c_void,
                    code.len(),
                )
            };
            delivered = true;
        };
        // SAFETY: (pointer, length) pairs per this function's contract.
        let compiled = unsafe {
            rtc_compile(
                [(name, name_len), (source, source_len)],
                [(header_names, header_names_len), (header_sources, header_sources_len), (options, options_len), (name_expressions, name_expressions_len)],
                deliver,
            )
        };
        if let Err(e) = &compiled {
            failure = Some(e.message.clone());
        }
        compiled
    });
    if !delivered && result != HipError::SUCCESS {
        if let Some(on_result) = on_result {
            let why = format!(
                "hip-remote: compilation on the worker did not happen: {} ({})",
                failure.as_deref().unwrap_or("internal error"),
                result.name().to_string_lossy()
            );
            // SAFETY: as above; an empty list and no code.
            unsafe { on_result(ctx, -1, why.as_ptr() as *const c_char, why.len(), c"".as_ptr(), 0, std::ptr::null(), 0) };
        }
    }
    result.0
}

/// The definition above is checked against the one declaration of the private ABI.
const _: RtcCompileFn = __hipRemoteRtcCompile;

/// Sends one `RtcCompile` and hands its reply to `deliver`.
///
/// # Safety
/// Every `(pointer, length)` pair must be valid (see [`__hipRemoteRtcCompile`]).
unsafe fn rtc_compile(
    [(name, name_len), (source, source_len)]: [(*const c_char, usize); 2],
    [(hn, hn_len), (hs, hs_len), (opts, opts_len), (ne, ne_len)]: [(*const c_char, usize); 4],
    deliver: impl FnOnce(&wire::RtcCompiled<'_>),
) -> Result<(), CallError> {
    // SAFETY: forwarded caller contract.
    let req = unsafe {
        wire::RtcCompile {
            name: wire_name(text(name, name_len, "name")?).into(),
            source: text(source, source_len, "source")?.into(),
            header_names: str_list(hn, hn_len, "header_names")?,
            header_sources: str_list(hs, hs_len, "header_sources")?,
            options: str_list(opts, opts_len, "options")?,
            name_expressions: str_list(ne, ne_len, "name_expressions")?,
        }
    };
    with_conn(|c| c.rtc_compile(req).map(|out| deliver(&out)))
}

#[cfg(test)]
mod test {
    use super::*;

    /// A `struct Pair { char c; double d; }` argument as a C caller's memory holds it: 16 bytes,
    /// 8-aligned, its 7 padding bytes whatever they happen to be (0xa5 here).
    #[repr(C, align(8))]
    struct PairMem([u8; 16]);

    /// The layout clang gives `mixed(char, short, int, float, double, int*, Pair)` on AMDGPU
    /// (each parameter at its natural alignment).
    fn mixed_layout() -> ArgLayout {
        ArgLayout::new([(0, 1), (2, 2), (4, 4), (8, 4), (16, 8), (24, 8), (32, 16)]).unwrap()
    }

    #[test]
    fn test_pack_pointers_exact_sizes_and_offsets() {
        let c: i8 = -3;
        let s: i16 = 0x1234;
        let i: i32 = -0x0102_0304;
        let f: f32 = 1.5;
        let d: f64 = -2.25;
        let p: *mut i32 = 0x7f00_dead_beef as *mut i32;
        let mut pair = PairMem([0xa5; 16]);
        pair.0[0] = 7;
        pair.0[8..16].copy_from_slice(&6.5f64.to_le_bytes());
        let mut params: [*mut c_void; 7] = [
            &c as *const _ as *mut c_void,
            &s as *const _ as *mut c_void,
            &i as *const _ as *mut c_void,
            &f as *const _ as *mut c_void,
            &d as *const _ as *mut c_void,
            &p as *const _ as *mut c_void,
            &pair as *const _ as *mut c_void,
        ];
        let layout = mixed_layout();
        assert_eq!(layout.len(), 48);
        // SAFETY: one pointer per parameter, each at a value of the parameter's size.
        let blob = unsafe { layout.pack_pointers(params.as_mut_ptr()) }.unwrap();
        let mut want = vec![0u8; 48];
        want[0] = c as u8;
        want[2..4].copy_from_slice(&s.to_le_bytes());
        want[4..8].copy_from_slice(&i.to_le_bytes());
        want[8..12].copy_from_slice(&f.to_le_bytes());
        want[16..24].copy_from_slice(&d.to_le_bytes());
        want[24..32].copy_from_slice(&(p as u64).to_le_bytes());
        // The struct travels whole: all 16 bytes, its padding included, as the caller's memory
        // holds them.
        want[32..48].copy_from_slice(&pair.0);
        assert_eq!(blob, want);
        // Padding between parameters is zero, not whatever followed the smaller values.
        assert_eq!(blob[1], 0);
        assert_eq!(&blob[12..16], &[0; 4]);
    }

    #[test]
    fn test_pack_reads_exactly_size_bytes() {
        // A 1-byte parameter whose pointer sits at the very end of a buffer: reading 8 bytes
        // would run past it (Miri / ASan would flag it; here the value is checked).
        let bytes = [0xa5u8; 9];
        let last = &bytes[8] as *const u8 as *mut c_void;
        let layout = ArgLayout::new([(0, 1)]).unwrap();
        let mut params = [last];
        // SAFETY: one pointer to one byte.
        let blob = unsafe { layout.pack_pointers(params.as_mut_ptr()) }.unwrap();
        assert_eq!(blob, [0xa5]);
    }

    #[test]
    fn test_pack_refuses_null() {
        let layout = mixed_layout();
        // SAFETY: null is checked before any read.
        assert_eq!(unsafe { layout.pack_pointers(std::ptr::null()) }.unwrap_err().code, HipError::INVALID_VALUE);
        let x = 0u64;
        let mut params: [*mut c_void; 7] = [&x as *const _ as *mut c_void; 7];
        params[3] = std::ptr::null_mut();
        // SAFETY: entries 0..3 point at 8 readable bytes, entry 3 is null and refused.
        let e = unsafe { layout.pack_pointers(params.as_mut_ptr()) }.unwrap_err();
        assert!(e.message.contains("kernelParams[3]"), "{}", e.message);
        // A kernel without parameters needs no array.
        // SAFETY: nothing is read.
        assert_eq!(unsafe { ArgLayout::default().pack_pointers(std::ptr::null()) }.unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn test_layout_limits() {
        assert!(ArgLayout::new([(0, 8), (MAX_KERNEL_ARGS_LEN as u32 - 8, 8)]).is_ok());
        assert!(ArgLayout::new([(MAX_KERNEL_ARGS_LEN as u32, 1)]).is_err());
        assert!(ArgLayout::new([(u32::MAX, u32::MAX)]).is_err());
        // Parameters reported out of offset order still give the right end.
        assert_eq!(ArgLayout::new([(8, 8), (0, 4)]).unwrap().len(), 16);
    }

    fn extra_for(buf: &[u8], size: &usize) -> [*mut c_void; 5] {
        [
            HIP_LAUNCH_PARAM_BUFFER_POINTER,
            buf.as_ptr() as *mut c_void,
            HIP_LAUNCH_PARAM_BUFFER_SIZE,
            size as *const usize as *mut c_void,
            HIP_LAUNCH_PARAM_END,
        ]
    }

    #[test]
    fn test_extra_buffer() {
        let layout = mixed_layout();
        let buf: Vec<u8> = (0..64).collect();
        // Exactly the layout's size: sent as it is.
        let size = 48usize;
        let extra = extra_for(&buf, &size);
        // SAFETY: a well-formed extra array over a live buffer.
        let got = unsafe { extra_buffer(extra.as_ptr()) }.unwrap();
        assert_eq!(layout.check_buffer(got).unwrap(), &buf[..48]);
        // Larger (tail padding): cut at the layout's end.
        let size = 64usize;
        let extra = extra_for(&buf, &size);
        // SAFETY: as above.
        let got = unsafe { extra_buffer(extra.as_ptr()) }.unwrap();
        assert_eq!(got.len(), 64);
        assert_eq!(layout.check_buffer(got).unwrap(), &buf[..48]);
        // Smaller than the layout: refused.
        let size = 40usize;
        let extra = extra_for(&buf, &size);
        // SAFETY: as above.
        let got = unsafe { extra_buffer(extra.as_ptr()) }.unwrap();
        let e = layout.check_buffer(got).unwrap_err();
        assert_eq!(e.code, HipError::INVALID_VALUE);
        assert!(e.message.contains("40") && e.message.contains("48"), "{}", e.message);
        // Keys in the other order.
        let size = 48usize;
        let swapped = [
            HIP_LAUNCH_PARAM_BUFFER_SIZE,
            &size as *const usize as *mut c_void,
            HIP_LAUNCH_PARAM_BUFFER_POINTER,
            buf.as_ptr() as *mut c_void,
            HIP_LAUNCH_PARAM_END,
        ];
        // SAFETY: as above.
        assert_eq!(unsafe { extra_buffer(swapped.as_ptr()) }.unwrap().len(), 48);
    }

    #[test]
    fn test_extra_malformed() {
        let buf = [0u8; 8];
        let size = 8usize;
        // Missing size.
        let no_size = [HIP_LAUNCH_PARAM_BUFFER_POINTER, buf.as_ptr() as *mut c_void, HIP_LAUNCH_PARAM_END];
        // SAFETY: END-terminated.
        assert!(unsafe { extra_buffer(no_size.as_ptr()) }.is_err());
        // Unknown key.
        let unknown = [0x42 as *mut c_void, buf.as_ptr() as *mut c_void, HIP_LAUNCH_PARAM_END];
        // SAFETY: END-terminated.
        assert!(unsafe { extra_buffer(unknown.as_ptr()) }.is_err());
        // Oversized buffer.
        let huge = MAX_KERNEL_ARGS_LEN + 1;
        let extra = extra_for(&buf, &huge);
        // SAFETY: refused before the buffer is read.
        assert!(unsafe { extra_buffer(extra.as_ptr()) }.is_err());
        // Null size pointer.
        let null_size = [HIP_LAUNCH_PARAM_BUFFER_SIZE, std::ptr::null_mut(), HIP_LAUNCH_PARAM_END];
        // SAFETY: END-terminated.
        assert!(unsafe { extra_buffer(null_size.as_ptr()) }.is_err());
        // No END within the bound: the scan stops instead of running on.
        let mut endless: Vec<*mut c_void> = Vec::new();
        for _ in 0..MAX_EXTRA_ENTRIES {
            endless.push(HIP_LAUNCH_PARAM_BUFFER_SIZE);
            endless.push(&size as *const usize as *mut c_void);
        }
        // SAFETY: the array has MAX_EXTRA_ENTRIES * 2 entries, more than the scan reads.
        assert!(unsafe { extra_buffer(endless.as_ptr()) }.is_err());
    }

    #[test]
    fn test_bad_handles_are_errors() {
        assert_eq!(function(0xdead_beef).unwrap_err().code, HipError::INVALID_HANDLE);
        assert_eq!(module_worker(0).unwrap_err().code, HipError::INVALID_HANDLE);
        assert_eq!(hipModuleUnload(0x1234 as hipModule_t), HipError::INVALID_HANDLE);
        let mut v = 0;
        // SAFETY: valid output pointer; the handle is checked before use.
        assert_eq!(unsafe { hipFuncGetAttribute(&mut v, 0, 0x4321 as hipFunction_t) }, HipError::INVALID_HANDLE);
        // SAFETY: as above; nothing is dereferenced for a bad handle.
        let r = unsafe {
            hipModuleLaunchKernel(0x4321 as hipFunction_t, 1, 1, 1, 1, 1, 1, 0, std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut())
        };
        assert_eq!(r, HipError::INVALID_HANDLE);
    }

    #[test]
    fn test_image_at_elf_and_bundle() {
        // A bundle in a heap buffer: the extent comes from its headers alone.
        let mut data = crate::fatbin::test_support::bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", b"code")]);
        let len = data.len();
        data.extend_from_slice(&[0xa5; 32]);
        // SAFETY: the buffer holds the whole image.
        let got = unsafe { image_at(data.as_ptr(), "test") }.unwrap();
        assert_eq!(got.len(), len);
        // SAFETY: null is refused before any read.
        assert_eq!(unsafe { image_at(std::ptr::null(), "test") }.unwrap_err().code, HipError::INVALID_VALUE);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn test_mapped_len() {
        static IN_DATA: [u8; 64] = [1; 64];
        let n = mapped_len(IN_DATA.as_ptr() as usize).expect("a static lies in a loaded segment");
        assert!(n >= 64);
        let heap = Box::new([0u8; 16]);
        assert_eq!(mapped_len(heap.as_ptr() as usize), None);
    }
}
