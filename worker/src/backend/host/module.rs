//! Host modules: ELF shared objects for the worker's own CPU exporting a kernel table, the
//! `hip_remote_host_module_v1` descriptor of `worker/include/hip_remote/host_module.h`
//! (documented in `docs/HOST_MODULES.md`); and the backend's [`ModuleBackend`] impl (loading,
//! kernels, globals, attributes, launches, occupancy).
//!
//! Loading writes the image to a private temporary file, `dlopen`s it (`RTLD_NOW |
//! RTLD_LOCAL`, so a missing symbol fails the load rather than a later launch), unlinks the
//! file, and validates the descriptor before anything of it is used: magic, version, counts
//! bounded by proto-core's limits, names, parameter layouts and global ranges. What passes is
//! copied into Rust-owned tables; afterwards only the `run_block` entry points and the global
//! addresses are used. The library is closed when the last user ([`HostModule`] holder:
//! the registry, a queued launch, a mapped global) is gone.
//!
//! Loading a host module runs its code in the worker (its constructors at load, its kernels
//! at launch): the host backend trusts its clients as a test harness does. See
//! `docs/HOST_MODULES.md` for what this means for deployment.

use std::any::Any;
use std::collections::HashSet;
use std::ffi::{c_char, c_void, CStr};
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
use proto_core::limits::{MAX_KERNEL_ARGS_LEN, MAX_KERNEL_PARAMS, MAX_NAME_LEN};

use super::launch::{self, AlignedBytes, KernelLaunch};
use super::stream::StreamOp;
use super::{lock, read_lock, write_lock, HostBackend, KernelRef, KernelSettings, ModuleEntry};

use crate::backend::{
    args_len, BackendError, DeviceIndex, DevicePtr, FunctionAttribute, FunctionAttributes, FunctionHandle, KernelFunction, LaunchConfig,
    ModuleBackend, ModuleFormat, ModuleHandle, ParamLayout, StreamHandle,
};

/// The descriptor's symbol (`HIP_REMOTE_HOST_MODULE_SYMBOL`).
pub(super) const HOST_MODULE_SYMBOL: &str = "hip_remote_host_module_v1";
/// `HIP_REMOTE_HOST_MODULE_MAGIC`: "HRHM" little-endian.
pub(super) const HOST_MODULE_MAGIC: u32 = 0x4D48_5248;
/// `HIP_REMOTE_HOST_MODULE_VERSION`: 2 added the block context's `services`.
pub(super) const HOST_MODULE_VERSION: u32 = 2;
/// `HIP_REMOTE_HOST_MODULE_MIN_VERSION`: version 1 modules ignore `services`.
pub(super) const HOST_MODULE_MIN_VERSION: u32 = 1;
/// Most kernels one module may declare (`HIP_REMOTE_HOST_MAX_KERNELS`).
pub(super) const MAX_MODULE_KERNELS: usize = 4096;
/// Most globals one module may declare (`HIP_REMOTE_HOST_MAX_GLOBALS`).
pub(super) const MAX_MODULE_GLOBALS: usize = 4096;
/// Most threads per block (`HIP_REMOTE_HOST_MAX_THREADS_PER_BLOCK`), the device maximum.
pub(super) const MAX_THREADS_PER_BLOCK: u32 = 1024;
/// Alignment of the argument blob and the dynamic shared memory (`HIP_REMOTE_HOST_ARGS_ALIGN`).
pub(super) const ARGS_ALIGN: usize = 64;

const ELF_MAGIC: &[u8; 4] = b"\x7fELF";
const ET_DYN: u16 = 3;
const EM_CUDA: u16 = 190;
const EM_AMDGPU: u16 = 224;
const OFFLOAD_BUNDLE_MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";
const COMPRESSED_BUNDLE_MAGIC: &[u8] = b"CCOB";
const FATBIN_MAGIC: &[u8] = &[0x50, 0xed, 0x55, 0xba];

/// The worker's own ELF machine, class and name.
#[cfg(target_arch = "x86_64")]
const HOST_MACHINE: (u16, &str) = (62, "x86_64");
#[cfg(target_arch = "aarch64")]
const HOST_MACHINE: (u16, &str) = (183, "aarch64");
#[cfg(target_arch = "riscv64")]
const HOST_MACHINE: (u16, &str) = (243, "riscv64");
#[cfg(target_arch = "powerpc64")]
const HOST_MACHINE: (u16, &str) = (21, "powerpc64");
#[cfg(target_arch = "s390x")]
const HOST_MACHINE: (u16, &str) = (22, "s390x");
#[cfg(target_arch = "loongarch64")]
const HOST_MACHINE: (u16, &str) = (258, "loongarch64");
const HOST_ELF_CLASS: u8 = if cfg!(target_pointer_width = "64") { 2 } else { 1 };
const HOST_ELF_DATA: u8 = if cfg!(target_endian = "little") { 1 } else { 2 };

/// `hip_remote_block_ctx`.
#[repr(C)]
#[derive(Debug)]
pub(super) struct BlockCtx {
    pub(super) grid: [u32; 3],
    pub(super) block: [u32; 3],
    pub(super) block_idx: [u32; 3],
    pub(super) dynamic_shared_size: u32,
    pub(super) dynamic_shared: *mut c_void,
    pub(super) services: *const LaunchServices,
}

/// `hip_remote_launch_services`: how a running block reports a fault or kernel output.
#[repr(C)]
pub(super) struct LaunchServices {
    pub(super) launch: *const c_void,
    pub(super) block: u64,
    pub(super) fault: unsafe extern "C" fn(services: *const LaunchServices, kind: u32, message: *const c_char),
    pub(super) print: unsafe extern "C" fn(services: *const LaunchServices, text: *const c_char, len: u32),
}

/// `HIP_REMOTE_FAULT_ASSERT`: a device-side assert failed.
pub(super) const FAULT_ASSERT: u32 = 1;

/// `hip_remote_block_fn`. Must not unwind: a C++ exception leaving it aborts the worker.
pub(super) type RunBlockFn = unsafe extern "C" fn(args: *const c_void, ctx: *const BlockCtx);

/// `hip_remote_param`.
#[repr(C)]
struct RawParam {
    offset: u32,
    size: u32,
}

/// `hip_remote_kernel`.
#[repr(C)]
struct RawKernel {
    name: *const c_char,
    run_block: Option<RunBlockFn>,
    num_params: u32,
    params: *const RawParam,
    static_shared_size: u32,
    max_threads_per_block: u32,
}

/// `hip_remote_global`.
#[repr(C)]
struct RawGlobal {
    name: *const c_char,
    address: *mut c_void,
    size: u64,
}

/// `hip_remote_host_module`.
#[repr(C)]
struct RawModule {
    magic: u32,
    version: u32,
    num_kernels: u32,
    kernels: *const RawKernel,
    num_globals: u32,
    globals: *const RawGlobal,
}

// The header asserts the same sizes on 64-bit targets.
#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(std::mem::size_of::<BlockCtx>() == 56);
    assert!(std::mem::size_of::<LaunchServices>() == 32);
    assert!(std::mem::size_of::<RawParam>() == 8);
    assert!(std::mem::size_of::<RawKernel>() == 40);
    assert!(std::mem::size_of::<RawGlobal>() == 24);
    assert!(std::mem::size_of::<RawModule>() == 40);
};

/// One validated kernel of a loaded module.
#[derive(Debug)]
pub(super) struct Kernel {
    pub(super) name: String,
    pub(super) run_block: RunBlockFn,
    pub(super) params: Vec<ParamLayout>,
    /// Shortest argument blob covering every parameter.
    pub(super) args_len: u64,
    pub(super) static_shared: u32,
    /// Already defaulted: 1..=[`MAX_THREADS_PER_BLOCK`].
    pub(super) max_threads_per_block: u32,
}

/// One validated global of a loaded module.
#[derive(Debug)]
pub(super) struct Global {
    pub(super) name: String,
    pub(super) address: u64,
    pub(super) size: u64,
}

/// A loaded, validated host module. Dropping it closes the library, so it must outlive every
/// use of its kernels and globals (holders keep it in an `Arc`).
#[derive(Debug)]
pub(super) struct HostModule {
    origin: String,
    kernels: Vec<Kernel>,
    globals: Vec<Global>,
    /// Declared last: dropped (closed) after the tables that point into it.
    library: Library,
}

// `Kernel::run_block` is a plain function pointer into the library and globals are plain
// addresses; `Library` is `Send + Sync`. The module's code is required to be thread-safe.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<HostModule>();
};

impl HostModule {
    /// Checks that `image` is a host module for this CPU (or names what it is instead), writes
    /// it to a private temporary file in `dir`, loads and validates it.
    pub(super) fn load_image(image: &[u8], format: ModuleFormat, dir: &Path, limits: &ModuleLimits) -> Result<Self, BackendError> {
        classify(image, format)?;
        check_exports(image).map_err(|e| BackendError::InvalidImage(format!("module image: {e}")))?;
        let file = TempImage::write(dir, image)?;
        let loaded = Self::load_path(file.path(), "module image", limits);
        drop(file); // the mapping stays after the file is unlinked
        loaded
    }

    /// Loads and validates the host module at `path` (`origin` names it in messages).
    pub(super) fn load_path(path: &Path, origin: &str, limits: &ModuleLimits) -> Result<Self, BackendError> {
        // SAFETY: loading a shared object runs its initializers. The host backend runs client
        // code by design (see the module documentation); `RTLD_LOCAL` keeps its symbols out
        // of the global namespace, `RTLD_NOW` resolves everything before any of it runs.
        let library = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }
            .map_err(|e| BackendError::SharedObjectInitFailed(format!("{origin}: dlopen failed: {e}")))?;
        let symbol = format!("{HOST_MODULE_SYMBOL}\0");
        // SAFETY: the symbol is looked up as a data address; it is only dereferenced below,
        // as the `hip_remote_host_module` the ABI says it is.
        let descriptor: *const RawModule = match unsafe { library.get::<*const RawModule>(symbol.as_bytes()) } {
            Ok(symbol) => *symbol,
            Err(_) => {
                return Err(BackendError::InvalidImage(format!(
                    "{origin}: the shared object does not export `{HOST_MODULE_SYMBOL}`, so \
                         it is not a hip-remote host module"
                )))
            }
        };
        if descriptor.is_null() {
            return Err(BackendError::InvalidImage(format!("{origin}: `{HOST_MODULE_SYMBOL}` is null")));
        }
        // SAFETY: `descriptor` is the address of the exported descriptor of a library that
        // stays loaded for the rest of this function (and of the returned module).
        let (kernels, globals) = unsafe { validate(descriptor, limits) }.map_err(|e| BackendError::InvalidImage(format!("{origin}: {e}")))?;
        Ok(Self { origin: origin.to_string(), kernels, globals, library })
    }

    pub(super) fn origin(&self) -> &str {
        &self.origin
    }

    pub(super) fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }

    pub(super) fn globals(&self) -> &[Global] {
        &self.globals
    }

    /// The library, for symbols outside the ABI (hiprtc's lowered-name table).
    pub(super) fn library(&self) -> &Library {
        &self.library
    }
}

/// Device limits a module's tables are checked against.
#[derive(Debug, Clone, Copy)]
pub(super) struct ModuleLimits {
    /// `sharedMemPerBlock`: bounds a kernel's static shared size.
    pub(super) shared_mem_per_block: u64,
}

/// Parses the ELF image before anything of it runs (`dlopen` runs its initializers): it must be
/// a shared object whose dynamic symbol table defines the module descriptor
/// [`HOST_MODULE_SYMBOL`] as data, and it may not carry `IFUNC` symbols (their resolvers run
/// during relocation, before any check after `dlopen` could refuse the module).
fn check_exports(image: &[u8]) -> Result<(), String> {
    use object::{Object, ObjectKind, ObjectSymbol, SymbolKind};
    let file = object::File::parse(image).map_err(|e| format!("not a parsable ELF shared object: {e}"))?;
    if file.kind() != ObjectKind::Dynamic {
        return Err(format!("an ELF {:?} object, not a shared object", file.kind()));
    }
    let mut descriptor = false;
    for symbol in file.dynamic_symbols() {
        if let object::SymbolFlags::Elf { st_info, .. } = symbol.flags() {
            if st_info & 0xf == object::elf::STT_GNU_IFUNC {
                return Err(format!("exports the IFUNC symbol `{}`; host modules may not run code at load time", symbol.name().unwrap_or("?")));
            }
        }
        if symbol.name() == Ok(HOST_MODULE_SYMBOL) && symbol.is_definition() && symbol.kind() == SymbolKind::Data {
            descriptor = true;
        }
    }
    if !descriptor {
        return Err(format!("the shared object does not export `{HOST_MODULE_SYMBOL}`, so it is not a hip-remote host module"));
    }
    Ok(())
}

/// Refuses images that are not host modules for this CPU, naming what they are.
fn classify(image: &[u8], format: ModuleFormat) -> Result<(), BackendError> {
    let arch = HOST_MACHINE.1;
    let gpu_image = |what: &str| {
        BackendError::NoBinaryForGpu(format!(
            "{what} carries GPU code, but this worker's device architecture is `host` \
             (the host backend on {arch}); it loads host modules only (ModuleFormat::HostModule, \
             as produced by hiprtc on this worker)"
        ))
    };
    match format {
        ModuleFormat::HostModule | ModuleFormat::Auto => {}
        other => return Err(gpu_image(&format!("a {} image", other.name()))),
    }
    if !image.starts_with(ELF_MAGIC) {
        if format == ModuleFormat::HostModule {
            return Err(BackendError::InvalidImage(format!(
                "a host module must be an ELF shared object for {arch}; this image does not \
                 start with the ELF magic"
            )));
        }
        if image.starts_with(OFFLOAD_BUNDLE_MAGIC) || image.starts_with(COMPRESSED_BUNDLE_MAGIC) {
            return Err(gpu_image("an offload bundle (HIP fat binary)"));
        }
        if image.starts_with(FATBIN_MAGIC) {
            return Err(gpu_image("an NVIDIA fatbin"));
        }
        let head = &image[..image.len().min(4096)];
        if head.windows(8).any(|w| w == b".version") && head.windows(7).any(|w| w == b".target") {
            return Err(gpu_image("PTX"));
        }
        return Err(BackendError::InvalidImage(format!(
            "unrecognised module image ({} bytes): neither an ELF shared object for {arch} nor \
             a known GPU format",
            image.len()
        )));
    }
    if image.len() < 64 {
        return Err(BackendError::InvalidImage(format!("truncated ELF header ({} bytes)", image.len())));
    }
    let (class, data) = (image[4], image[5]);
    let half = |at: usize| {
        let bytes = [image[at], image[at + 1]];
        if data == 2 {
            u16::from_be_bytes(bytes)
        } else {
            u16::from_le_bytes(bytes)
        }
    };
    let (e_type, machine) = (half(16), half(18));
    match machine {
        EM_AMDGPU => return Err(gpu_image("an AMD GPU code object (ELF for amdgcn)")),
        EM_CUDA => return Err(gpu_image("an NVIDIA cubin")),
        _ => {}
    }
    if machine != HOST_MACHINE.0 || class != HOST_ELF_CLASS || data != HOST_ELF_DATA {
        return Err(BackendError::NoBinaryForGpu(format!(
            "ELF image for machine {machine} (class {class}, data {data}), but this worker's \
             device architecture is `host` on {arch}"
        )));
    }
    if e_type != ET_DYN {
        return Err(BackendError::InvalidImage(format!(
            "ELF image of type {e_type} is not a shared object; host modules are built with \
             `-shared -fPIC`"
        )));
    }
    Ok(())
}

/// Reads and checks the descriptor, copying what passes into owned tables.
///
/// # Safety
///
/// `descriptor` points to a `hip_remote_host_module` of a loaded library. Its pointers are
/// followed only after the counts they go with have been bounded; a descriptor whose pointers
/// lie about the memory behind them can still fault, as any native code in the library could.
unsafe fn validate(descriptor: *const RawModule, limits: &ModuleLimits) -> Result<(Vec<Kernel>, Vec<Global>), String> {
    // SAFETY: per the function's contract.
    let raw = unsafe { &*descriptor };
    if raw.magic != HOST_MODULE_MAGIC {
        return Err(format!("bad magic {:#010x} (expected {HOST_MODULE_MAGIC:#010x})", raw.magic));
    }
    if !(HOST_MODULE_MIN_VERSION..=HOST_MODULE_VERSION).contains(&raw.version) {
        return Err(format!("ABI version {} is not supported (this worker speaks {HOST_MODULE_MIN_VERSION} to {HOST_MODULE_VERSION})", raw.version));
    }
    // SAFETY: bounded count, non-null checked by `table`.
    let raw_kernels = unsafe { table(raw.kernels, raw.num_kernels, MAX_MODULE_KERNELS, "kernels") }?;
    // SAFETY: as above.
    let raw_globals = unsafe { table(raw.globals, raw.num_globals, MAX_MODULE_GLOBALS, "globals") }?;

    let mut names = HashSet::new();
    let mut kernels = Vec::with_capacity(raw_kernels.len());
    for (i, k) in raw_kernels.iter().enumerate() {
        // SAFETY: the ABI makes `name` a NUL-terminated string; reading stops at the NUL or
        // after MAX_NAME_LEN + 1 bytes.
        let name = unsafe { c_name(k.name) }.map_err(|e| format!("kernel {i}: name {e}"))?;
        if !names.insert(name.clone()) {
            return Err(format!("kernel `{name}` is declared twice"));
        }
        let run_block = k.run_block.ok_or_else(|| format!("kernel `{name}`: run_block is null"))?;
        // SAFETY: bounded count, non-null checked by `table`.
        let raw_params = unsafe { table(k.params, k.num_params, MAX_KERNEL_PARAMS, "params") }.map_err(|e| format!("kernel `{name}`: {e}"))?;
        let params: Vec<ParamLayout> = raw_params.iter().map(|p| ParamLayout { offset: p.offset, size: p.size }).collect();
        check_params(&params).map_err(|e| format!("kernel `{name}`: {e}"))?;
        let max_threads_per_block = match k.max_threads_per_block {
            0 => MAX_THREADS_PER_BLOCK,
            n if n <= MAX_THREADS_PER_BLOCK => n,
            n => return Err(format!("kernel `{name}`: max_threads_per_block {n} exceeds {MAX_THREADS_PER_BLOCK}")),
        };
        if u64::from(k.static_shared_size) > limits.shared_mem_per_block {
            return Err(format!(
                "kernel `{name}`: static shared size {} exceeds the {} bytes per block",
                k.static_shared_size, limits.shared_mem_per_block
            ));
        }
        kernels.push(Kernel { args_len: args_len(&params), name, run_block, params, static_shared: k.static_shared_size, max_threads_per_block });
    }

    // Globals must lie inside the library's own image, so a copy to one can never land in
    // memory the worker uses for itself.
    // SAFETY: `descriptor` is inside the library (it was found by dlsym).
    let image_base = unsafe { containing_object(descriptor.cast()) }.ok_or("cannot locate the module's own image")?;
    names.clear();
    let mut globals = Vec::with_capacity(raw_globals.len());
    for (i, g) in raw_globals.iter().enumerate() {
        // SAFETY: as for kernel names.
        let name = unsafe { c_name(g.name) }.map_err(|e| format!("global {i}: name {e}"))?;
        if !names.insert(name.clone()) {
            return Err(format!("global `{name}` is declared twice"));
        }
        let address = g.address as u64;
        let last = address
            .checked_add(g.size)
            .and_then(|end| end.checked_sub(1))
            .filter(|_| address != 0 && g.size != 0)
            .ok_or_else(|| format!("global `{name}`: empty, null or wrapping range"))?;
        // SAFETY: `dladdr` only inspects the loader's tables for these addresses.
        let (first_in, last_in) = unsafe { (containing_object(address as *const c_void), containing_object(last as *const c_void)) };
        if first_in != Some(image_base) || last_in != Some(image_base) {
            return Err(format!("global `{name}` ({address:#x}+{}) does not lie inside the module's image", g.size));
        }
        globals.push(Global { name, address, size: g.size });
    }
    let mut ranges: Vec<(u64, u64, &str)> = globals.iter().map(|g| (g.address, g.address + g.size, g.name.as_str())).collect();
    ranges.sort_unstable();
    if let Some(w) = ranges.windows(2).find(|w| w[0].1 > w[1].0) {
        return Err(format!("globals `{}` and `{}` overlap", w[0].2, w[1].2));
    }
    Ok((kernels, globals))
}

/// Parameters must be non-empty, end within [`MAX_KERNEL_ARGS_LEN`] and not overlap.
fn check_params(params: &[ParamLayout]) -> Result<(), String> {
    let mut spans: Vec<(u64, u64, usize)> = Vec::with_capacity(params.len());
    for (i, p) in params.iter().enumerate() {
        let end = u64::from(p.offset) + u64::from(p.size);
        if p.size == 0 {
            return Err(format!("parameter {i} has size 0"));
        }
        if end > MAX_KERNEL_ARGS_LEN as u64 {
            return Err(format!("parameter {i} ({}+{}) ends beyond the {MAX_KERNEL_ARGS_LEN}-byte argument limit", p.offset, p.size));
        }
        spans.push((u64::from(p.offset), end, i));
    }
    spans.sort_unstable();
    if let Some(w) = spans.windows(2).find(|w| w[0].1 > w[1].0) {
        return Err(format!("parameters {} and {} overlap", w[0].2, w[1].2));
    }
    Ok(())
}

/// `count` entries at `ptr`, after bounding `count` by `max`.
///
/// # Safety
///
/// When `count` is within bounds, `ptr` points to `count` initialized `T`s that stay valid
/// for `'a`.
unsafe fn table<'a, T>(ptr: *const T, count: u32, max: usize, what: &str) -> Result<&'a [T], String> {
    let count = count as usize;
    if count > max {
        return Err(format!("{count} {what} exceed the limit of {max}"));
    }
    if count == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(format!("{count} {what} declared but the table is null"));
    }
    if ptr.align_offset(std::mem::align_of::<T>()) != 0 {
        return Err(format!("the {what} table is misaligned"));
    }
    // SAFETY: per the function's contract; non-null and aligned checked above.
    Ok(unsafe { std::slice::from_raw_parts(ptr, count) })
}

/// A name of at most [`MAX_NAME_LEN`] bytes of UTF-8.
///
/// # Safety
///
/// `ptr` is null or points to a NUL-terminated string, or to at least `MAX_NAME_LEN + 1`
/// readable bytes.
unsafe fn c_name(ptr: *const c_char) -> Result<String, String> {
    if ptr.is_null() {
        return Err("is null".into());
    }
    // SAFETY: per the function's contract, `strnlen` reads no further than the NUL or the
    // bound.
    let len = unsafe { libc::strnlen(ptr, MAX_NAME_LEN + 1) };
    if len > MAX_NAME_LEN {
        return Err(format!("is longer than {MAX_NAME_LEN} bytes"));
    }
    if len == 0 {
        return Err("is empty".into());
    }
    // SAFETY: `len` bytes and the NUL after them were just found readable.
    let name = unsafe { CStr::from_ptr(ptr) };
    name.to_str().map(str::to_string).map_err(|_| "is not UTF-8".into())
}

/// Base address of the loaded object containing `addr`, if any.
///
/// # Safety
///
/// None beyond `dladdr`'s: it reads the loader's tables, not `addr`.
unsafe fn containing_object(addr: *const c_void) -> Option<usize> {
    let mut info = std::mem::MaybeUninit::<libc::Dl_info>::zeroed();
    // SAFETY: `info` is a valid out-pointer.
    let found = unsafe { libc::dladdr(addr, info.as_mut_ptr()) };
    if found == 0 {
        return None;
    }
    // SAFETY: `dladdr` filled `info` when it returned non-zero.
    let info = unsafe { info.assume_init() };
    Some(info.dli_fbase as usize)
}

/// An image written to a private file, removed on drop.
struct TempImage {
    path: PathBuf,
}

impl TempImage {
    fn write(dir: &Path, image: &[u8]) -> Result<Self, BackendError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        // The time keeps names of an earlier process with the same pid from colliding.
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let path = dir.join(format!("hip-remote-module-{}-{}-{nanos}.so", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
        let write = || -> std::io::Result<()> {
            // `create_new` (O_EXCL) never follows or reuses an existing path.
            let mut file = OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path)?;
            file.write_all(image)?;
            file.sync_data()
        };
        let result = write();
        let temp = Self { path };
        result.map_err(|e| BackendError::Unknown(format!("cannot write the module image to {}: {e}", temp.path.display())))?;
        Ok(temp)
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempImage {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.path) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(path = %self.path.display(), %e, "cannot remove a module image file");
            }
        }
    }
}

impl ModuleBackend for HostBackend {
    fn module_load(&self, dev: DeviceIndex, format: ModuleFormat, image: &[u8]) -> Result<ModuleHandle, BackendError> {
        let limits = self.module_limits(dev)?;
        // What the image is, first: a GPU image gets its own answer whatever the policy.
        classify(image, format)?;
        self.check_host_code_allowed("loading a host module")?;
        let module = Arc::new(HostModule::load_image(image, format, &std::env::temp_dir(), &limits)?);
        let owner: Arc<dyn Any + Send + Sync> = module.clone();
        let mut globals = Vec::with_capacity(module.globals().len());
        for global in module.globals() {
            match self.address_space.map_external(dev, global.address, global.size, Arc::clone(&owner)) {
                Ok(ptr) => globals.push(ptr),
                Err(e) => {
                    self.unmap_globals(&globals);
                    return Err(BackendError::InvalidImage(format!("{}: global `{}`: {}", module.origin(), global.name, e.message())));
                }
            }
        }
        let handle = ModuleHandle::from_raw(self.next_handle());
        let functions: Vec<FunctionHandle> = module.kernels().iter().map(|_| FunctionHandle::from_raw(self.next_handle())).collect();
        let kernel_by_name = module.kernels().iter().enumerate().map(|(i, k)| (k.name.clone(), i)).collect();
        {
            let block_shared = self.device(dev)?.properties.shared_mem_per_block;
            let mut table = write_lock(&self.functions);
            for (index, &function) in functions.iter().enumerate() {
                let static_shared = u64::from(module.kernels()[index].static_shared);
                let settings = KernelSettings {
                    max_dynamic_shared: u32::try_from(block_shared.saturating_sub(static_shared)).unwrap_or(u32::MAX),
                    preferred_carveout: -1,
                };
                table.insert(function, KernelRef { module: Arc::clone(&module), index, device: dev, settings: Arc::new(Mutex::new(settings)) });
            }
        }
        tracing::debug!(module = handle.as_raw(), kernels = functions.len(), globals = globals.len(), "host module loaded");
        write_lock(&self.modules).insert(handle, ModuleEntry { module, device: dev, functions, kernel_by_name, globals });
        Ok(handle)
    }

    fn module_unload(&self, module: ModuleHandle) -> Result<(), BackendError> {
        let entry = write_lock(&self.modules)
            .remove(&module)
            .ok_or_else(|| BackendError::InvalidHandle(format!("module {} does not exist", module.as_raw())))?;
        {
            let mut table = write_lock(&self.functions);
            for function in &entry.functions {
                table.remove(function);
            }
        }
        self.unmap_globals(&entry.globals);
        // Queued launches hold the module themselves; launches of other modules may still
        // write its globals through pointers, so it is parked like freed memory.
        self.kernels_in_flight.retire(Box::new(entry.module));
        Ok(())
    }

    fn module_function(&self, module: ModuleHandle, name: &str) -> Result<KernelFunction, BackendError> {
        let modules = read_lock(&self.modules);
        let entry = modules.get(&module).ok_or_else(|| BackendError::InvalidHandle(format!("module {} does not exist", module.as_raw())))?;
        let index = *entry.kernel_by_name.get(name).ok_or_else(|| {
            let mut known: Vec<&str> = entry.module.kernels().iter().map(|k| k.name.as_str()).collect();
            known.sort_unstable();
            let shown = known.iter().take(8).copied().collect::<Vec<_>>().join(", ");
            let more = if known.len() > 8 { ", ..." } else { "" };
            BackendError::NotFound(format!("{} has no kernel `{name}` (kernels: {shown}{more})", entry.module.origin()))
        })?;
        let kernel = &entry.module.kernels()[index];
        let props = &self.device(entry.device)?.properties;
        Ok(KernelFunction { handle: entry.functions[index], params: kernel.params.clone(), attributes: launch::attributes(kernel, props) })
    }

    fn module_global(&self, module: ModuleHandle, name: &str) -> Result<(DevicePtr, u64), BackendError> {
        let modules = read_lock(&self.modules);
        let entry = modules.get(&module).ok_or_else(|| BackendError::InvalidHandle(format!("module {} does not exist", module.as_raw())))?;
        entry
            .module
            .globals()
            .iter()
            .zip(&entry.globals)
            .find(|(global, _)| global.name == name)
            .map(|(global, &ptr)| (ptr, global.size))
            .ok_or_else(|| BackendError::NotFound(format!("{} has no global `{name}`", entry.module.origin())))
    }

    fn function_attributes(&self, function: FunctionHandle) -> Result<FunctionAttributes, BackendError> {
        let target = self.function(function)?;
        let props = &self.device(target.device)?.properties;
        let settings = *lock(&target.settings);
        Ok(FunctionAttributes {
            max_dynamic_shared_size: i32::try_from(settings.max_dynamic_shared).unwrap_or(i32::MAX),
            preferred_shmem_carveout: settings.preferred_carveout,
            ..launch::attributes(target.kernel(), props)
        })
    }

    fn function_set_attribute(&self, function: FunctionHandle, attribute: FunctionAttribute, value: i32) -> Result<(), BackendError> {
        let target = self.function(function)?;
        let mut settings = lock(&target.settings);
        match attribute {
            FunctionAttribute::MaxDynamicSharedSize => {
                let props = &self.device(target.device)?.properties;
                let available = props.shared_mem_per_block_optin.saturating_sub(u64::from(target.kernel().static_shared));
                match u32::try_from(value) {
                    Ok(v) if u64::from(v) <= available => settings.max_dynamic_shared = v,
                    _ => {
                        return Err(BackendError::InvalidValue(format!(
                            "maximum dynamic shared memory {value} is outside 0..={available} \
                             bytes for `{}`",
                            target.kernel().name
                        )))
                    }
                }
            }
            FunctionAttribute::PreferredSharedCarveout => {
                if !(-1..=100).contains(&value) {
                    return Err(BackendError::InvalidValue(format!("shared memory carveout {value} is outside -1..=100")));
                }
                settings.preferred_carveout = value;
            }
        }
        Ok(())
    }

    fn launch_kernel(&self, stream: Option<StreamHandle>, function: FunctionHandle, config: LaunchConfig, args: &[u8]) -> Result<(), BackendError> {
        self.launch_on_threads(stream, function, config, args.to_vec(), None)
    }

    fn module_function_names(&self, module: ModuleHandle) -> Result<Vec<String>, BackendError> {
        let modules = read_lock(&self.modules);
        let entry = modules.get(&module).ok_or_else(|| BackendError::InvalidHandle(format!("module {} does not exist", module.as_raw())))?;
        Ok(entry.module.kernels().iter().map(|k| k.name.clone()).collect())
    }

    /// Every block gets an OS thread of its own, so all are resident at once.
    fn launch_cooperative(
        &self,
        stream: Option<StreamHandle>,
        function: FunctionHandle,
        config: LaunchConfig,
        args: Vec<u8>,
    ) -> Result<(), BackendError> {
        let blocks = usize::try_from(config.blocks()).unwrap_or(usize::MAX);
        if blocks > launch::MAX_COOPERATIVE_BLOCKS {
            return Err(BackendError::InvalidConfiguration(format!(
                "cooperative launch of {blocks} blocks; the host backend runs at most {} at once",
                launch::MAX_COOPERATIVE_BLOCKS
            )));
        }
        self.launch_on_threads(stream, function, config, args, Some(blocks))
    }

    fn cooperative_max_blocks(&self, function: FunctionHandle, block_size: u32, dynamic_shared: u64) -> Result<u64, BackendError> {
        let target = self.function(function)?;
        let props = &self.device(target.device)?.properties;
        let per_mp = launch::max_active_blocks(target.kernel(), props, block_size, dynamic_shared)?;
        let resident = u64::from(per_mp) * props.multi_processor_count.max(0) as u64;
        Ok(resident.min(launch::MAX_COOPERATIVE_BLOCKS as u64))
    }

    fn occupancy_max_active_blocks(&self, function: FunctionHandle, block_size: u32, dynamic_shared: u64) -> Result<u32, BackendError> {
        let target = self.function(function)?;
        let props = &self.device(target.device)?.properties;
        launch::max_active_blocks(target.kernel(), props, block_size, dynamic_shared)
    }

    fn occupancy_max_potential_block_size(
        &self,
        function: FunctionHandle,
        dynamic_shared: u64,
        block_size_limit: u32,
    ) -> Result<(u32, u32), BackendError> {
        let target = self.function(function)?;
        let props = &self.device(target.device)?.properties;
        launch::max_potential_block_size(target.kernel(), props, dynamic_shared, block_size_limit)
    }
}

impl HostBackend {
    /// Validates and queues a launch whose blocks run on `threads` OS threads (`None`: the
    /// backend's usual number, blocks taking turns).
    fn launch_on_threads(
        &self,
        stream: Option<StreamHandle>,
        function: FunctionHandle,
        config: LaunchConfig,
        args: Vec<u8>,
        threads: Option<usize>,
    ) -> Result<(), BackendError> {
        let target = self.function(function)?;
        let (queue, device) = match stream {
            Some(handle) => {
                let queue = self.stream(handle)?;
                let device = queue.device();
                (Some(queue), device)
            }
            None => (None, target.device),
        };
        let props = &self.device(device)?.properties;
        launch::validate_launch(target.kernel(), &config, args.len(), props)?;
        let max_dynamic = lock(&target.settings).max_dynamic_shared;
        if config.shared_mem > max_dynamic {
            // hipErrorInvalidValue, as CUDA answers a launch above the attribute and ROCm one
            // above the device's shared memory.
            return Err(BackendError::InvalidValue(format!(
                "launch of `{}`: {} bytes of dynamic shared memory exceed the {max_dynamic} its \
                 hipFuncAttributeMaxDynamicSharedMemorySize allows",
                target.kernel().name,
                config.shared_mem
            )));
        }
        let launch = KernelLaunch {
            args: AlignedBytes::copy_of(&args)?,
            module: Arc::clone(&target.module),
            kernel: target.index,
            config,
            threads: threads.unwrap_or(self.kernel_threads),
            _ticket: self.kernels_in_flight.begin(),
            output: queue.as_ref().map(|q| Arc::clone(q.output())),
        };
        match queue {
            Some(queue) => queue.submit(StreamOp::Kernel(launch)).map(drop),
            None => {
                self.null_stream_barrier(&[device]);
                StreamOp::Kernel(launch).execute()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elf(machine: u16, e_type: u16) -> Vec<u8> {
        let mut image = vec![0u8; 64];
        image[..4].copy_from_slice(ELF_MAGIC);
        image[4] = HOST_ELF_CLASS;
        image[5] = HOST_ELF_DATA;
        image[16..18].copy_from_slice(&e_type.to_le_bytes());
        image[18..20].copy_from_slice(&machine.to_le_bytes());
        image
    }

    #[test]
    fn classify_names_what_an_image_is() {
        let host_so = elf(HOST_MACHINE.0, ET_DYN);
        assert!(classify(&host_so, ModuleFormat::HostModule).is_ok());
        assert!(classify(&host_so, ModuleFormat::Auto).is_ok());
        let cases: [(&[u8], ModuleFormat, &str); 7] = [
            (&elf(EM_AMDGPU, ET_DYN), ModuleFormat::Auto, "amdgcn"),
            (&elf(EM_CUDA, 2), ModuleFormat::Auto, "cubin"),
            (b"__CLANG_OFFLOAD_BUNDLE____", ModuleFormat::Auto, "offload bundle"),
            (b"//\n.version 8.0\n.target sm_90\n", ModuleFormat::Auto, "PTX"),
            (&host_so, ModuleFormat::CodeObject, "AMD code object"),
            (&host_so, ModuleFormat::Ptx, "PTX"),
            (&host_so, ModuleFormat::Fatbin, "fatbin"),
        ];
        for (image, format, what) in cases {
            let err = classify(image, format).unwrap_err();
            assert!(matches!(err, BackendError::NoBinaryForGpu(_)), "{err}");
            assert!(err.message().contains(what), "{err}");
            assert!(err.message().contains("`host`"), "{err}");
        }
        let not_dyn = classify(&elf(HOST_MACHINE.0, 1), ModuleFormat::HostModule).unwrap_err();
        assert!(matches!(not_dyn, BackendError::InvalidImage(_)), "{not_dyn}");
        let garbage = classify(b"garbage", ModuleFormat::Auto).unwrap_err();
        assert!(matches!(garbage, BackendError::InvalidImage(_)), "{garbage}");
        let short = classify(b"\x7fELF", ModuleFormat::HostModule).unwrap_err();
        assert!(matches!(short, BackendError::InvalidImage(_)), "{short}");
    }

    #[test]
    fn params_must_not_overlap_or_overrun() {
        let p = |offset, size| ParamLayout { offset, size };
        assert!(check_params(&[p(0, 4), p(4, 4), p(8, 8)]).is_ok());
        assert!(check_params(&[p(8, 8), p(0, 8)]).is_ok(), "order is free");
        assert!(check_params(&[p(0, 8), p(4, 4)]).is_err());
        assert!(check_params(&[p(0, 0)]).is_err());
        assert!(check_params(&[p(MAX_KERNEL_ARGS_LEN as u32 - 4, 8)]).is_err());
        assert!(check_params(&[p(u32::MAX, u32::MAX)]).is_err());
    }

    /// Builds a shared object from C source with the system compiler (`None`: no compiler).
    fn shared_object(dir: &Path, name: &str, source: &str) -> Option<Vec<u8>> {
        let (c, so) = (dir.join(format!("{name}.c")), dir.join(format!("{name}.so")));
        std::fs::write(&c, source).ok()?;
        let built = std::process::Command::new("cc").args(["-shared", "-fPIC", "-o"]).arg(&so).arg(&c).status().ok()?;
        built.success().then(|| std::fs::read(&so).ok()).flatten()
    }

    /// The export table is read before anything of the image runs: a shared object without
    /// the descriptor, or with an IFUNC (whose resolver runs during relocation), is refused
    /// before `dlopen` — its constructor never runs.
    #[test]
    fn exports_are_checked_before_the_image_runs() {
        let dir = std::env::temp_dir().join(format!("hip-remote-exports-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let marker = dir.join("constructor-ran");
        let constructor = format!(
            "#include <stdio.h>\n__attribute__((constructor)) static void hostile(void) {{ FILE* f = fopen(\"{}\", \"w\"); if (f) fclose(f); }}\n",
            marker.display()
        );
        let Some(plain) = shared_object(&dir, "plain", &format!("{constructor}int not_a_module = 1;\n")) else {
            transport_core::test_skip::skip("host module constructor test: no C compiler");
            return;
        };
        let err = check_exports(&plain).unwrap_err();
        assert!(err.contains(HOST_MODULE_SYMBOL), "{err}");
        let limits = ModuleLimits { shared_mem_per_block: 64 << 10 };
        let refused = match HostModule::load_image(&plain, ModuleFormat::HostModule, &dir, &limits) {
            Ok(_) => panic!("a shared object without the descriptor was loaded"),
            Err(e) => e,
        };
        assert!(matches!(refused, BackendError::InvalidImage(_)), "{refused}");
        assert!(!marker.exists(), "the image's constructor ran before it was refused");

        let ifunc = "static int impl(void) { return 1; }\nstatic void* resolve(void) { return (void*)impl; }\n\
                     int picked(void) __attribute__((ifunc(\"resolve\")));\nint hip_remote_host_module_v1 = 0;\n";
        if let Some(image) = shared_object(&dir, "ifunc", ifunc) {
            let err = check_exports(&image).unwrap_err();
            assert!(err.contains("IFUNC"), "{err}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
