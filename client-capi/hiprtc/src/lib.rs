//! hip-remote's drop-in `libhiprtc.so.7`: ROCm 7's hiprtc C API, with programs compiled by the
//! worker for its own device.
//!
//! **One connection.** This library holds no connection of its own: `hiprtcCompileProgram`
//! calls `__hipRemoteRtcCompile`, an internal export of hip-remote's `libamdhip64.so.7`, which
//! sends the compilation over that library's (process-wide, single) connection. The entry point
//! is found at run time — first in the process's global scope (`dlsym(RTLD_DEFAULT)`: the
//! `libamdhip64` the program is linked with or loaded globally), else by loading
//! `libamdhip64.so.7` (which, when already loaded with `RTLD_LOCAL`, yields that same instance).
//! On Linux this library also carries `NEEDED libamdhip64.so.7` (see `build.rs`), so the
//! loader brings libamdhip64 in even for a program linked `--as-needed` that calls only hiprtc.
//! Linking this crate against the `client-capi` rlib instead would give the process a second
//! copy of its state, hence a second connection and session, whose compiled code the first
//! session could not see coming.
//!
//! **Programs.** A `hiprtcProgram` is an id into this library's table (never dereferenced,
//! never reused): a destroyed or made-up one is `HIPRTC_ERROR_INVALID_PROGRAM`, not a crash.
//! A program keeps what `hiprtcCreateProgram` and `hiprtcAddNameExpression` gave it and, after
//! compiling, the worker's code (a host module on the host backend, a code object on a GPU
//! worker: load it with `hipModuleLoadData`), the compiler's log and the lowered names.
//!
//! **Headers.** The program's `-I` directories are the client's: the headers it includes from
//! them are found here and sent with the compile as extra headers (see [`includes`]).
//!
//! Errors: a compilation the worker's compiler rejects is `HIPRTC_ERROR_COMPILATION` with the
//! compiler's log as the program log; when no compilation could happen (no worker, limits, a
//! worker without hiprtc) the result is `HIPRTC_ERROR_INTERNAL_ERROR` (`_INVALID_INPUT` for
//! inputs the protocol refuses) and the program log says why.
#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]
#![allow(non_snake_case, non_camel_case_types, clippy::missing_safety_doc)]

mod includes;

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// `hiprtcResult` (values from `proto_core::hip_error`'s table, as ROCm's `hiprtc.h`).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct hiprtcResult(pub c_int);

/// `HIPRTC_SUCCESS` and friends, from proto-core's one `hiprtcResult` table.
macro_rules! hiprtc_result_constants {
    ($( $konst:ident = $value:literal, $cname:ident; )*) => {
        $( #[doc = concat!("`", stringify!($cname), "`.")] pub const $cname: hiprtcResult = hiprtcResult($value); )*
    };
}
proto_core::hiprtc_result_table!(hiprtc_result_constants);

/// `hiprtcProgram`: an opaque pointer (here an id).
pub type hiprtcProgram = *mut c_void;
/// `hiprtcLinkState`.
pub type hiprtcLinkState = *mut c_void;
/// `hipJitOption` / `hiprtcJIT_option`.
pub type hipJitOption = c_uint;
/// `hipJitInputType` / `hiprtcJITInputType`.
pub type hipJitInputType = c_uint;

/// What `hiprtcVersion` reports: the HIP version this library mirrors (ROCm 7.2).
pub const VERSION: (c_int, c_int) = (7, 2);
/// Name of a program created without one.
const DEFAULT_PROGRAM_NAME: &str = "default_program";
/// The `hipError_t` `__hipRemoteRtcCompile` may return that gets its own hiprtc code.
const HIP_ERROR_INVALID_VALUE: c_int = proto_core::hip_error::code::INVALID_VALUE;

// ------------------------------------------------------------------------------------------------
// The compile entry point in libamdhip64
// ------------------------------------------------------------------------------------------------

use proto_core::rtc_entry::ENTRY_POINT;
/// The private ABI of `__hipRemoteRtcCompile`, declared once in proto-core.
pub use proto_core::rtc_entry::{RtcCompileFn as CompileFn, RtcResultFn as ResultFn};

#[cfg(target_os = "macos")]
const LIBAMDHIP64: &str = "libamdhip64.dylib";
/// AMD's Windows name (cargo builds `amdhip64.dll`; `scripts/dist.sh` installs it under this one).
#[cfg(windows)]
const LIBAMDHIP64: &str = "amdhip64_7.dll";
#[cfg(not(any(target_os = "macos", windows)))]
const LIBAMDHIP64: &str = "libamdhip64.so.7";

fn find_compile_fn() -> Result<CompileFn, String> {
    #[cfg(unix)]
    {
        let this = libloading::os::unix::Library::this();
        // SAFETY: the symbol, when present, is hip-remote's `__hipRemoteRtcCompile` with this type.
        if let Ok(f) = unsafe { this.get::<CompileFn>(ENTRY_POINT) } {
            return Ok(*f);
        }
    }
    // SAFETY: loading hip-remote's libamdhip64 runs only its (side-effect free) initialisers.
    let lib = unsafe { libloading::Library::new(LIBAMDHIP64) }
        .map_err(|e| format!("hip-remote's {LIBAMDHIP64} is not loaded and cannot be loaded: {e}"))?;
    // SAFETY: as above.
    let f = unsafe { lib.get::<CompileFn>(ENTRY_POINT) }
        .map(|f| *f)
        .map_err(|e| format!("{LIBAMDHIP64} has no __hipRemoteRtcCompile (not hip-remote's, or too old): {e}"))?;
    // The library stays loaded for the life of the process: `f` points into it.
    std::mem::forget(lib);
    Ok(f)
}

/// The entry point, found once (a failure is retried: libamdhip64 may be loaded later).
fn compile_fn() -> Result<CompileFn, String> {
    static FOUND: OnceLock<CompileFn> = OnceLock::new();
    #[cfg(test)]
    if let Some(f) = test_support::fake() {
        return Ok(f);
    }
    if let Some(f) = FOUND.get() {
        return Ok(*f);
    }
    let f = find_compile_fn()?;
    Ok(*FOUND.get_or_init(|| f))
}

// ------------------------------------------------------------------------------------------------
// Programs
// ------------------------------------------------------------------------------------------------

#[derive(Debug, Default)]
struct Program {
    name: String,
    source: String,
    /// Packed NUL-terminated items, as the protocol carries them.
    header_names: String,
    header_sources: String,
    name_expressions: Vec<String>,
    log: Vec<u8>,
    /// Set once a compilation succeeded.
    compiled: Option<Compiled>,
}

#[derive(Debug, Default)]
struct Compiled {
    code: Vec<u8>,
    /// Lowered name per name expression (kept as C strings: `hiprtcGetLoweredName` hands out
    /// pointers that stay valid until the program is destroyed).
    lowered: Vec<(String, CString)>,
}

type Shared = Arc<Mutex<Program>>;

fn programs() -> MutexGuard<'static, HashMap<u64, Shared>> {
    static PROGRAMS: OnceLock<Mutex<HashMap<u64, Shared>>> = OnceLock::new();
    PROGRAMS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
}

fn program(prog: hiprtcProgram) -> Result<Shared, hiprtcResult> {
    programs().get(&(prog as u64)).cloned().ok_or(HIPRTC_ERROR_INVALID_PROGRAM)
}

fn lock(p: &Shared) -> MutexGuard<'_, Program> {
    p.lock().unwrap_or_else(|e| e.into_inner())
}

fn debug() -> bool {
    ["HIP_REMOTE_DEBUG", "TF_DEBUG"].iter().any(|v| std::env::var(v).is_ok_and(|v| !v.trim().is_empty() && v != "0"))
}

/// Runs an export's body; a panic becomes `HIPRTC_ERROR_INTERNAL_ERROR`.
fn boundary(name: &str, body: impl FnOnce() -> Result<(), hiprtcResult>) -> hiprtcResult {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(Ok(())) => HIPRTC_SUCCESS,
        Ok(Err(code)) => {
            if debug() {
                eprintln!("hip-remote: {name}: {}", error_name(code).to_string_lossy());
            }
            code
        }
        Err(_) => {
            eprintln!("hip-remote: internal panic in {name}; returning HIPRTC_ERROR_INTERNAL_ERROR");
            HIPRTC_ERROR_INTERNAL_ERROR
        }
    }
}

/// A C string argument as UTF-8 (`None` for null).
///
/// # Safety
/// `ptr` must be null or NUL-terminated.
unsafe fn text<'a>(ptr: *const c_char) -> Option<Result<&'a str, hiprtcResult>> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: caller contract.
    Some(unsafe { CStr::from_ptr(ptr) }.to_str().map_err(|_| HIPRTC_ERROR_INVALID_INPUT))
}

/// Appends `item` and its terminator to a packed list.
fn push_item(list: &mut String, item: &str) {
    list.push_str(item);
    list.push('\0');
}

/// `count` C strings from `array` as a packed list.
///
/// # Safety
/// `array` must hold `count` pointers to NUL-terminated strings.
unsafe fn packed(array: *const *const c_char, count: usize, bad: hiprtcResult) -> Result<String, hiprtcResult> {
    let mut list = String::new();
    if count == 0 {
        return Ok(list);
    }
    if array.is_null() {
        return Err(bad);
    }
    for i in 0..count {
        // SAFETY: caller contract.
        let item = unsafe { text(*array.add(i)) }.ok_or(bad)?.map_err(|_| bad)?;
        push_item(&mut list, item);
    }
    Ok(list)
}

fn count(n: c_int) -> Result<usize, hiprtcResult> {
    usize::try_from(n).map_err(|_| HIPRTC_ERROR_INVALID_INPUT)
}

// ------------------------------------------------------------------------------------------------
// Exports
// ------------------------------------------------------------------------------------------------

fn error_name(result: hiprtcResult) -> &'static CStr {
    proto_core::hip_error::rtc_name(result.0).unwrap_or(c"Invalid HIPRTC error code")
}

/// The enumerator's name (ROCm's text); "Invalid HIPRTC error code" for other values.
#[no_mangle]
pub extern "C" fn hiprtcGetErrorString(result: hiprtcResult) -> *const c_char {
    error_name(result).as_ptr()
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcVersion(major: *mut c_int, minor: *mut c_int) -> hiprtcResult {
    boundary("hiprtcVersion", || {
        if major.is_null() || minor.is_null() {
            return Err(HIPRTC_ERROR_INVALID_INPUT);
        }
        // SAFETY: checked non-null.
        unsafe {
            *major = VERSION.0;
            *minor = VERSION.1;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcCreateProgram(
    prog: *mut hiprtcProgram,
    src: *const c_char,
    name: *const c_char,
    numHeaders: c_int,
    headers: *const *const c_char,
    includeNames: *const *const c_char,
) -> hiprtcResult {
    boundary("hiprtcCreateProgram", || {
        if prog.is_null() {
            return Err(HIPRTC_ERROR_INVALID_PROGRAM);
        }
        // SAFETY: NUL-terminated strings and arrays of them (hiprtc's contract).
        let program = unsafe {
            let source = text(src).ok_or(HIPRTC_ERROR_INVALID_INPUT)??;
            let name = text(name).transpose()?.filter(|n| !n.is_empty()).unwrap_or(DEFAULT_PROGRAM_NAME);
            let n = count(numHeaders)?;
            Program {
                name: name.to_string(),
                source: source.to_string(),
                header_sources: packed(headers, n, HIPRTC_ERROR_INVALID_INPUT)?,
                header_names: packed(includeNames, n, HIPRTC_ERROR_INVALID_INPUT)?,
                ..Default::default()
            }
        };
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        programs().insert(id, Arc::new(Mutex::new(program)));
        // SAFETY: checked non-null.
        unsafe { *prog = id as hiprtcProgram };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcDestroyProgram(prog: *mut hiprtcProgram) -> hiprtcResult {
    boundary("hiprtcDestroyProgram", || {
        if prog.is_null() {
            return Err(HIPRTC_ERROR_INVALID_INPUT);
        }
        // SAFETY: checked non-null.
        let id = unsafe { *prog } as u64;
        programs().remove(&id).ok_or(HIPRTC_ERROR_INVALID_PROGRAM)?;
        // SAFETY: checked non-null.
        unsafe { *prog = std::ptr::null_mut() };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcAddNameExpression(prog: hiprtcProgram, name_expression: *const c_char) -> hiprtcResult {
    boundary("hiprtcAddNameExpression", || {
        let p = program(prog)?;
        // SAFETY: NUL-terminated (hiprtc's contract).
        let expr = unsafe { text(name_expression) }.ok_or(HIPRTC_ERROR_INVALID_INPUT)??;
        let mut p = lock(&p);
        if p.compiled.is_some() {
            return Err(HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION);
        }
        if !p.name_expressions.iter().any(|e| e == expr) {
            p.name_expressions.push(expr.to_string());
        }
        Ok(())
    })
}

/// What `__hipRemoteRtcCompile` delivered.
#[derive(Default)]
struct Outcome {
    status: Option<c_int>,
    log: Vec<u8>,
    lowered: Vec<u8>,
    code: Vec<u8>,
}

unsafe extern "C" fn collect(
    ctx: *mut c_void,
    success: c_int,
    log: *const c_char,
    log_len: usize,
    lowered: *const c_char,
    lowered_len: usize,
    code: *const c_void,
    code_len: usize,
) {
    // SAFETY: `ctx` is the `Outcome` handed to `__hipRemoteRtcCompile`; the buffers are valid
    // for their lengths during this call.
    unsafe {
        let out = &mut *(ctx as *mut Outcome);
        let bytes = |p: *const u8, n: usize| if n == 0 || p.is_null() { Vec::new() } else { std::slice::from_raw_parts(p, n).to_vec() };
        out.status = Some(success);
        out.log = bytes(log as *const u8, log_len);
        out.lowered = bytes(lowered as *const u8, lowered_len);
        out.code = bytes(code as *const u8, code_len);
    }
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcCompileProgram(prog: hiprtcProgram, numOptions: c_int, options: *const *const c_char) -> hiprtcResult {
    boundary("hiprtcCompileProgram", || {
        let shared = program(prog)?;
        // SAFETY: `numOptions` NUL-terminated strings (hiprtc's contract).
        let options = unsafe { packed(options, count(numOptions)?, HIPRTC_ERROR_INVALID_OPTION)? };
        let mut p = lock(&shared);
        p.compiled = None;
        let mut exprs = String::new();
        for e in &p.name_expressions {
            push_item(&mut exprs, e);
        }
        let compile = match compile_fn() {
            Ok(f) => f,
            Err(why) => {
                p.log = format!("hip-remote: {why}").into_bytes();
                return Err(HIPRTC_ERROR_INTERNAL_ERROR);
            }
        };
        // The headers the program includes from its (client-side) -I directories travel with it.
        let (mut header_names, mut header_sources) = (p.header_names.clone(), p.header_sources.clone());
        let dirs = includes::include_dirs(options.split_terminator('\0'));
        let embedded: Vec<(&str, &str)> = p.header_names.split_terminator('\0').zip(p.header_sources.split_terminator('\0')).collect();
        match includes::resolve(&p.source, &embedded, &dirs) {
            Ok(found) => {
                for (name, text) in found {
                    push_item(&mut header_names, &name);
                    push_item(&mut header_sources, &text);
                }
            }
            Err(why) => {
                p.log = why.into_bytes();
                return Err(HIPRTC_ERROR_INVALID_INPUT);
            }
        }
        let mut out = Outcome::default();
        let s = |v: &str| (v.as_ptr() as *const c_char, v.len());
        let (name, source, hn, hs, opts, ne) = (s(&p.name), s(&p.source), s(&header_names), s(&header_sources), s(&options), s(&exprs));
        // SAFETY: every (pointer, length) pair is a live string; `collect` matches ResultFn and
        // `out` outlives the call.
        let hip_error = unsafe {
            compile(
                name.0,
                name.1,
                source.0,
                source.1,
                hn.0,
                hn.1,
                hs.0,
                hs.1,
                opts.0,
                opts.1,
                ne.0,
                ne.1,
                Some(collect),
                &mut out as *mut Outcome as *mut c_void,
            )
        };
        p.log = out.log;
        match out.status {
            Some(1) if hip_error == 0 => {
                let lowered: Vec<&[u8]> = out.lowered.split(|&b| b == 0).filter(|s| !s.is_empty()).collect();
                let lowered = p.name_expressions.iter().zip(lowered).filter_map(|(e, l)| CString::new(l).ok().map(|l| (e.clone(), l))).collect();
                p.compiled = Some(Compiled { code: out.code, lowered });
                Ok(())
            }
            Some(0) if hip_error == 0 => Err(HIPRTC_ERROR_COMPILATION),
            _ => {
                if p.log.is_empty() {
                    p.log = format!("hip-remote: compilation on the worker failed (hipError_t {hip_error})").into_bytes();
                }
                Err(if hip_error == HIP_ERROR_INVALID_VALUE { HIPRTC_ERROR_INVALID_INPUT } else { HIPRTC_ERROR_INTERNAL_ERROR })
            }
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcGetProgramLogSize(prog: hiprtcProgram, logSizeRet: *mut usize) -> hiprtcResult {
    boundary("hiprtcGetProgramLogSize", || {
        let p = program(prog)?;
        if logSizeRet.is_null() {
            return Err(HIPRTC_ERROR_INVALID_INPUT);
        }
        // SAFETY: checked non-null. The size counts the terminating NUL.
        unsafe { *logSizeRet = lock(&p).log.len() + 1 };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcGetProgramLog(prog: hiprtcProgram, log: *mut c_char) -> hiprtcResult {
    boundary("hiprtcGetProgramLog", || {
        let p = program(prog)?;
        if log.is_null() {
            return Err(HIPRTC_ERROR_INVALID_INPUT);
        }
        let p = lock(&p);
        // SAFETY: the caller sized `log` with hiprtcGetProgramLogSize (log + NUL).
        unsafe {
            std::ptr::copy_nonoverlapping(p.log.as_ptr(), log as *mut u8, p.log.len());
            *log.add(p.log.len()) = 0;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcGetCodeSize(prog: hiprtcProgram, codeSizeRet: *mut usize) -> hiprtcResult {
    boundary("hiprtcGetCodeSize", || {
        let p = program(prog)?;
        if codeSizeRet.is_null() {
            return Err(HIPRTC_ERROR_INVALID_INPUT);
        }
        // SAFETY: checked non-null; 0 before a successful compilation.
        unsafe { *codeSizeRet = lock(&p).compiled.as_ref().map_or(0, |c| c.code.len()) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcGetCode(prog: hiprtcProgram, code: *mut c_char) -> hiprtcResult {
    boundary("hiprtcGetCode", || {
        let p = program(prog)?;
        if code.is_null() {
            return Err(HIPRTC_ERROR_INVALID_INPUT);
        }
        let p = lock(&p);
        let compiled = p.compiled.as_ref().ok_or(HIPRTC_ERROR_INVALID_PROGRAM)?;
        // SAFETY: the caller sized `code` with hiprtcGetCodeSize.
        unsafe { std::ptr::copy_nonoverlapping(compiled.code.as_ptr(), code as *mut u8, compiled.code.len()) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcGetLoweredName(prog: hiprtcProgram, name_expression: *const c_char, lowered_name: *mut *const c_char) -> hiprtcResult {
    boundary("hiprtcGetLoweredName", || {
        let p = program(prog)?;
        if lowered_name.is_null() {
            return Err(HIPRTC_ERROR_INVALID_INPUT);
        }
        // SAFETY: NUL-terminated (hiprtc's contract).
        let expr = unsafe { text(name_expression) }.ok_or(HIPRTC_ERROR_INVALID_INPUT)??;
        let p = lock(&p);
        let compiled = p.compiled.as_ref().ok_or(HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION)?;
        let (_, lowered) = compiled.lowered.iter().find(|(e, _)| e == expr).ok_or(HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID)?;
        // SAFETY: checked non-null; the string lives as long as the program.
        unsafe { *lowered_name = lowered.as_ptr() };
        Ok(())
    })
}

/// hip-remote's workers return finished code (a host module or a code object), never LLVM
/// bitcode, so there is none to give: `HIPRTC_ERROR_INVALID_INPUT`, as ROCm answers for a
/// program that has no bitcode.
#[no_mangle]
pub unsafe extern "C" fn hiprtcGetBitcodeSize(prog: hiprtcProgram, _bitcode_size: *mut usize) -> hiprtcResult {
    boundary("hiprtcGetBitcodeSize", || {
        program(prog)?;
        Err(HIPRTC_ERROR_INVALID_INPUT)
    })
}

/// See [`hiprtcGetBitcodeSize`].
#[no_mangle]
pub unsafe extern "C" fn hiprtcGetBitcode(prog: hiprtcProgram, _bitcode: *mut c_char) -> hiprtcResult {
    boundary("hiprtcGetBitcode", || {
        program(prog)?;
        Err(HIPRTC_ERROR_INVALID_INPUT)
    })
}

fn link_unsupported(name: &str) -> hiprtcResult {
    boundary(name, || {
        if debug() {
            eprintln!("hip-remote: {name}: hiprtc linking is not supported (workers compile whole programs)");
        }
        Err(HIPRTC_ERROR_LINKING)
    })
}

/// hiprtc linking (bitcode into one code object) is not supported: `HIPRTC_ERROR_LINKING`.
#[no_mangle]
pub unsafe extern "C" fn hiprtcLinkCreate(
    _num_options: c_uint,
    _option_ptr: *mut hipJitOption,
    _option_vals_pptr: *mut *mut c_void,
    _hip_link_state_ptr: *mut hiprtcLinkState,
) -> hiprtcResult {
    link_unsupported("hiprtcLinkCreate")
}

/// See [`hiprtcLinkCreate`].
#[no_mangle]
pub unsafe extern "C" fn hiprtcLinkAddFile(
    _hip_link_state: hiprtcLinkState,
    _input_type: hipJitInputType,
    _file_path: *const c_char,
    _num_options: c_uint,
    _options_ptr: *mut hipJitOption,
    _option_values: *mut *mut c_void,
) -> hiprtcResult {
    link_unsupported("hiprtcLinkAddFile")
}

/// See [`hiprtcLinkCreate`].
#[no_mangle]
pub unsafe extern "C" fn hiprtcLinkAddData(
    _hip_link_state: hiprtcLinkState,
    _input_type: hipJitInputType,
    _image: *mut c_void,
    _image_size: usize,
    _name: *const c_char,
    _num_options: c_uint,
    _options_ptr: *mut hipJitOption,
    _option_values: *mut *mut c_void,
) -> hiprtcResult {
    link_unsupported("hiprtcLinkAddData")
}

/// See [`hiprtcLinkCreate`].
#[no_mangle]
pub unsafe extern "C" fn hiprtcLinkComplete(_hip_link_state: hiprtcLinkState, _bin_out: *mut *mut c_void, _size_out: *mut usize) -> hiprtcResult {
    link_unsupported("hiprtcLinkComplete")
}

/// See [`hiprtcLinkCreate`].
#[no_mangle]
pub unsafe extern "C" fn hiprtcLinkDestroy(_hip_link_state: hiprtcLinkState) -> hiprtcResult {
    link_unsupported("hiprtcLinkDestroy")
}

#[cfg(test)]
mod test_support {
    //! A stand-in for `__hipRemoteRtcCompile`, per test thread.
    use super::*;
    use std::cell::Cell;

    thread_local! {
        static FAKE: Cell<Option<CompileFn>> = const { Cell::new(None) };
    }

    pub fn fake() -> Option<CompileFn> {
        FAKE.with(Cell::get)
    }

    pub fn set_fake(f: Option<CompileFn>) {
        FAKE.with(|c| c.set(f));
    }
}

#[cfg(test)]
mod test {
    use super::test_support::set_fake;
    use super::*;
    use std::ptr::{null, null_mut};

    unsafe fn slice<'a>(p: *const c_char, n: usize) -> &'a str {
        if n == 0 {
            return "";
        }
        // SAFETY: the caller passes `n` readable bytes at `p` (a pointer, length pair from
        // `hiprtcCompileProgram`), alive for `'a`.
        unsafe { std::str::from_utf8(std::slice::from_raw_parts(p as *const u8, n)).unwrap() }
    }

    /// Compiles when the source contains "__global__", else fails with a log; lowers each name
    /// expression `f<int>` to `_Z1fIiEvv`-like text; echoes the options in the log.
    unsafe extern "C" fn fake_worker(
        name: *const c_char,
        name_len: usize,
        source: *const c_char,
        source_len: usize,
        hn: *const c_char,
        hn_len: usize,
        hs: *const c_char,
        hs_len: usize,
        opts: *const c_char,
        opts_len: usize,
        ne: *const c_char,
        ne_len: usize,
        on_result: Option<ResultFn>,
        ctx: *mut c_void,
    ) -> c_int {
        // SAFETY: called only by `hiprtcCompileProgram` in place of `__hipRemoteRtcCompile`:
        // every (pointer, length) pair is a live string and `on_result` is its `collect`, which
        // accepts these buffers for the duration of the call.
        unsafe {
            let (name, source, hn, hs, opts, ne) =
                (slice(name, name_len), slice(source, source_len), slice(hn, hn_len), slice(hs, hs_len), slice(opts, opts_len), slice(ne, ne_len));
            let on_result = on_result.unwrap();
            if source.contains("refuse") {
                let why = "worker: hiprtc is not available on this backend";
                on_result(ctx, -1, why.as_ptr() as *const c_char, why.len(), null(), 0, null(), 0);
                return 801;
            }
            let log = format!("{name}: headers [{}] [{}] options [{}]", hn.replace('\0', ","), hs.replace('\0', ","), opts.replace('\0', ","));
            if !source.contains("__global__") {
                let log = format!("{log}\nerror: no kernel");
                on_result(ctx, 0, log.as_ptr() as *const c_char, log.len(), null(), 0, null(), 0);
                return 0;
            }
            let lowered: String = ne.split_terminator('\0').map(|e| format!("_lowered_{e}\0")).collect();
            let code = b"\x7fELF host module";
            on_result(
                ctx,
                1,
                log.as_ptr() as *const c_char,
                log.len(),
                lowered.as_ptr() as *const c_char,
                lowered.len(),
                code.as_ptr() as *const c_void,
                code.len(),
            );
            0
        }
    }

    fn create(src: &CStr, headers: &[(&CStr, &CStr)]) -> hiprtcProgram {
        let sources: Vec<*const c_char> = headers.iter().map(|(_, s)| s.as_ptr()).collect();
        let names: Vec<*const c_char> = headers.iter().map(|(n, _)| n.as_ptr()).collect();
        let mut prog = null_mut();
        // SAFETY: NUL-terminated strings; `sources` and `names` hold `headers.len()` of them.
        let r =
            unsafe { hiprtcCreateProgram(&mut prog, src.as_ptr(), c"prog.hip".as_ptr(), headers.len() as c_int, sources.as_ptr(), names.as_ptr()) };
        assert_eq!(r, HIPRTC_SUCCESS);
        prog
    }

    fn log_of(prog: hiprtcProgram) -> String {
        let mut n = 0;
        // SAFETY: `n` is a valid out-pointer.
        assert_eq!(unsafe { hiprtcGetProgramLogSize(prog, &mut n) }, HIPRTC_SUCCESS);
        let mut buf = vec![0x55u8; n];
        // SAFETY: `buf` holds the `n` bytes hiprtcGetProgramLogSize asked for.
        assert_eq!(unsafe { hiprtcGetProgramLog(prog, buf.as_mut_ptr() as *mut c_char) }, HIPRTC_SUCCESS);
        assert_eq!(buf.pop(), Some(0), "log is NUL-terminated");
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn result_values_match_the_abi() {
        use amdhip64::abi::HiprtcResult as A;
        let pairs = [
            (HIPRTC_SUCCESS, A::SUCCESS),
            (HIPRTC_ERROR_OUT_OF_MEMORY, A::ERROR_OUT_OF_MEMORY),
            (HIPRTC_ERROR_PROGRAM_CREATION_FAILURE, A::ERROR_PROGRAM_CREATION_FAILURE),
            (HIPRTC_ERROR_INVALID_INPUT, A::ERROR_INVALID_INPUT),
            (HIPRTC_ERROR_INVALID_PROGRAM, A::ERROR_INVALID_PROGRAM),
            (HIPRTC_ERROR_INVALID_OPTION, A::ERROR_INVALID_OPTION),
            (HIPRTC_ERROR_COMPILATION, A::ERROR_COMPILATION),
            (HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE, A::ERROR_BUILTIN_OPERATION_FAILURE),
            (HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION, A::ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION),
            (HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION, A::ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION),
            (HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID, A::ERROR_NAME_EXPRESSION_NOT_VALID),
            (HIPRTC_ERROR_INTERNAL_ERROR, A::ERROR_INTERNAL_ERROR),
            (HIPRTC_ERROR_LINKING, A::ERROR_LINKING),
        ];
        for (ours, abi) in pairs {
            assert_eq!(ours.0, abi.0);
            assert_eq!(error_name(ours), abi.name().unwrap());
        }
        // SAFETY: hiprtcGetErrorString returns a static NUL-terminated string for any code.
        let s = unsafe { CStr::from_ptr(hiprtcGetErrorString(hiprtcResult(12345))) };
        assert_eq!(s, c"Invalid HIPRTC error code");
    }

    #[test]
    fn compile_success_code_log_and_lowered_names() {
        set_fake(Some(fake_worker));
        let prog = create(c"#include \"a.h\"\n__global__ void k() {}", &[(c"a.h", c"int x;"), (c"b.h", c"int y;")]);
        // SAFETY: every pointer passed is a live C string, array of them, or out-pointer, and
        // the code buffer is sized by hiprtcGetCodeSize; `lowered` is read while `prog` lives.
        unsafe {
            assert_eq!(hiprtcAddNameExpression(prog, c"k<int>".as_ptr()), HIPRTC_SUCCESS);
            assert_eq!(hiprtcAddNameExpression(prog, c"k<float>".as_ptr()), HIPRTC_SUCCESS);
            let mut lowered = null();
            assert_eq!(hiprtcGetLoweredName(prog, c"k<int>".as_ptr(), &mut lowered), HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION);
            let opts = [c"-O3".as_ptr(), c"--std=c++17".as_ptr()];
            assert_eq!(hiprtcCompileProgram(prog, 2, opts.as_ptr()), HIPRTC_SUCCESS);
            assert_eq!(log_of(prog), "prog.hip: headers [a.h,b.h,] [int x;,int y;,] options [-O3,--std=c++17,]");
            let mut size = 0;
            assert_eq!(hiprtcGetCodeSize(prog, &mut size), HIPRTC_SUCCESS);
            let mut code = vec![0u8; size];
            assert_eq!(hiprtcGetCode(prog, code.as_mut_ptr() as *mut c_char), HIPRTC_SUCCESS);
            assert_eq!(code, b"\x7fELF host module");
            assert_eq!(hiprtcGetLoweredName(prog, c"k<float>".as_ptr(), &mut lowered), HIPRTC_SUCCESS);
            assert_eq!(CStr::from_ptr(lowered), c"_lowered_k<float>");
            assert_eq!(hiprtcGetLoweredName(prog, c"k<char>".as_ptr(), &mut lowered), HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID);
            assert_eq!(hiprtcAddNameExpression(prog, c"k<char>".as_ptr()), HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION);
            let mut p = prog;
            assert_eq!(hiprtcDestroyProgram(&mut p), HIPRTC_SUCCESS);
            assert!(p.is_null());
            assert_eq!(hiprtcGetCodeSize(prog, &mut size), HIPRTC_ERROR_INVALID_PROGRAM);
        }
        set_fake(None);
    }

    #[test]
    fn headers_from_client_include_directories_travel_with_the_compile() {
        set_fake(Some(fake_worker));
        let dir = std::env::temp_dir().join(format!("hiprtc-client-headers-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("lib")).unwrap();
        std::fs::write(dir.join("lib/a.h"), "#include \"b.h\"\n#include <hip/hip_fp16.h>\n").unwrap();
        std::fs::write(dir.join("lib/b.h"), "int b;").unwrap();
        let include = CString::new(format!("-I{}", dir.display())).unwrap();
        let prog = create(c"#include <lib/a.h>\n#include \"mine.h\"\n__global__ void k() {}", &[(c"mine.h", c"int m;")]);
        // SAFETY: a live program, two live option strings, valid out-pointers.
        unsafe {
            let opts = [include.as_ptr(), c"-I/usr/include".as_ptr()];
            assert_eq!(hiprtcCompileProgram(prog, 2, opts.as_ptr()), HIPRTC_SUCCESS);
            let log = log_of(prog);
            assert!(log.contains("headers [mine.h,lib/a.h,lib/b.h,] [int m;,#include \"b.h\"\n#include <hip/hip_fp16.h>\n,int b;,]"), "{log}");

            std::fs::write(dir.join("lib/b.h"), "x".repeat(proto_core::limits::MAX_TEXT_LEN + 1)).unwrap();
            assert_eq!(hiprtcCompileProgram(prog, 1, opts.as_ptr()), HIPRTC_ERROR_INVALID_INPUT);
            assert!(log_of(prog).contains("lib/b.h is"), "{}", log_of(prog));
            let mut p = prog;
            assert_eq!(hiprtcDestroyProgram(&mut p), HIPRTC_SUCCESS);
        }
        std::fs::remove_dir_all(&dir).ok();
        set_fake(None);
    }

    #[test]
    fn compile_error_and_refusal() {
        set_fake(Some(fake_worker));
        let prog = create(c"int nothing;", &[]);
        // SAFETY: valid out-pointers, null option arrays with a count of 0.
        unsafe {
            assert_eq!(hiprtcCompileProgram(prog, 0, null()), HIPRTC_ERROR_COMPILATION);
            assert!(log_of(prog).ends_with("error: no kernel"));
            let mut size = 7;
            assert_eq!(hiprtcGetCodeSize(prog, &mut size), HIPRTC_SUCCESS);
            assert_eq!(size, 0);
            let refused = create(c"refuse __global__", &[]);
            assert_eq!(hiprtcCompileProgram(refused, 0, null()), HIPRTC_ERROR_INTERNAL_ERROR);
            assert_eq!(log_of(refused), "worker: hiprtc is not available on this backend");
        }
        set_fake(None);
    }

    #[test]
    fn invalid_arguments() {
        // SAFETY: every non-null pointer is a live C string or out-pointer; the null and
        // made-up ones are exactly what the functions must reject without dereferencing them
        // (the 4-byte code buffer is never written: the program is not compiled yet).
        unsafe {
            let mut prog = null_mut();
            assert_eq!(hiprtcCreateProgram(null_mut(), c"x".as_ptr(), null(), 0, null(), null()), HIPRTC_ERROR_INVALID_PROGRAM);
            assert_eq!(hiprtcCreateProgram(&mut prog, null(), null(), 0, null(), null()), HIPRTC_ERROR_INVALID_INPUT);
            assert_eq!(hiprtcCreateProgram(&mut prog, c"x".as_ptr(), null(), -1, null(), null()), HIPRTC_ERROR_INVALID_INPUT);
            assert_eq!(hiprtcCreateProgram(&mut prog, c"x".as_ptr(), null(), 1, null(), null()), HIPRTC_ERROR_INVALID_INPUT);
            assert_eq!(hiprtcCreateProgram(&mut prog, c"x".as_ptr(), null(), 0, null(), null()), HIPRTC_SUCCESS);
            assert_eq!(hiprtcAddNameExpression(prog, null()), HIPRTC_ERROR_INVALID_INPUT);
            assert_eq!(hiprtcCompileProgram(prog, 1, null()), HIPRTC_ERROR_INVALID_OPTION);
            assert_eq!(hiprtcCompileProgram(prog, -1, null()), HIPRTC_ERROR_INVALID_INPUT);
            let mut n = 0;
            assert_eq!(hiprtcGetBitcodeSize(prog, &mut n), HIPRTC_ERROR_INVALID_INPUT);
            assert_eq!(hiprtcGetProgramLogSize(prog, null_mut()), HIPRTC_ERROR_INVALID_INPUT);
            assert_eq!(hiprtcGetProgramLogSize(0xbad as hiprtcProgram, &mut n), HIPRTC_ERROR_INVALID_PROGRAM);
            assert_eq!(hiprtcGetCode(prog, [0 as c_char; 4].as_mut_ptr()), HIPRTC_ERROR_INVALID_PROGRAM);
            assert_eq!(hiprtcDestroyProgram(null_mut()), HIPRTC_ERROR_INVALID_INPUT);
            let mut bad = 0xbad as hiprtcProgram;
            assert_eq!(hiprtcDestroyProgram(&mut bad), HIPRTC_ERROR_INVALID_PROGRAM);
            assert_eq!(hiprtcDestroyProgram(&mut prog), HIPRTC_SUCCESS);
            let (mut major, mut minor) = (0, 0);
            assert_eq!(hiprtcVersion(&mut major, &mut minor), HIPRTC_SUCCESS);
            assert_eq!((major, minor), VERSION);
            assert_eq!(hiprtcVersion(null_mut(), &mut minor), HIPRTC_ERROR_INVALID_INPUT);
            assert_eq!(hiprtcLinkCreate(0, null_mut(), null_mut(), null_mut()), HIPRTC_ERROR_LINKING);
        }
    }
}
