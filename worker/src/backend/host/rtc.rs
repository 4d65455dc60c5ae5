//! hiprtc on the host backend: HIP kernel source compiled by the system C++ compiler into a
//! host module (see `docs/HOST_MODULES.md`); and the backend's [`RtcBackend`] impl.
//!
//! A compile runs in a private temporary directory:
//!
//! 1. The source and the embedded headers are scanned ([`scan`]): a program using block
//!    barriers or warp operations is compiled with `HIP_REMOTE_FIBERS=1`, so that its blocks
//!    run their threads as fibers (see `rtc/prelude.hpp`), and `extern __shared__` arrays
//!    are rewritten, on their own lines, into the block's dynamic shared memory.
//! 2. Options are sorted: `-D`/`-U`/`-I` pass through; `--offload-arch=`, `-O*`, `-std=` and
//!    every other option are ignored with a log line (the host backend always compiles with
//!    [`BASE_FLAGS`]).
//! 3. `__hip_remote_main.cpp` holds the program (behind `#line 1 "<name>"`, so diagnostics
//!    name the program) followed by a generated tail: one entry per `extern "C" __global__`
//!    kernel and `__device__` variable [`scan::declarations`] finds and per name expression,
//!    and a constructor that fills the `hip_remote_host_module_v1` descriptor. The prelude
//!    (`rtc/prelude.hpp`) is force-included; `hip/hip_runtime.h` and friends are empty stubs.
//! 4. `c++` (or `$HIP_REMOTE_CXX`) builds a shared object within [`COMPILE_TIMEOUT`]; its
//!    output becomes the log, verbatim (bounded by [`MAX_LOG_LEN`]).
//! 5. The result is loaded once through the ordinary host-module loader, which validates it
//!    and yields the lowered names (read from `hip_remote_rtc_lowered_names`); the shared
//!    object's bytes, with a note listing the kernels its table holds ([`with_kernel_note`]),
//!    are the returned `code`, for a later `ModuleLoad` (format `HostModule`).

mod link;
mod scan;

use std::ffi::{c_char, CStr};
use std::fmt::Write as _;
use std::fs;
use std::io::Read;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::CommandExt;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use proto_core::limits::{MAX_BULK_LEN, MAX_NAME_LEN, MAX_TEXT_LEN};

use super::module::{HostModule, ModuleLimits};
use super::{lock, wait, HostBackend};
use crate::backend::{BackendError, DeviceIndex, LinkInput, RtcBackend, RtcOutput, RtcRequest, FALLBACK_HEADERS};
use crate::sandbox::confine::{explain_limit, file_limit_text, file_size_limit};

/// The prelude force-included into every program.
const PRELUDE: &str = include_str!("rtc/prelude.hpp");
/// The module ABI header the prelude includes.
const HOST_MODULE_H: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/include/hip_remote/host_module.h"));
/// HIP headers a program may include; the prelude already provides what they would.
const STUB_HEADERS: &[(&str, &str)] = &[
    ("hip/hip_runtime.h", HIP_RUNTIME_STUB),
    ("hip/hip_vector_types.h", STUB_TEXT),
    ("hip/math_functions.h", STUB_TEXT),
    ("hip/device_functions.h", STUB_TEXT),
    ("hip/hip_version.h", STUB_TEXT),
];
const STUB_TEXT: &str = "/* hip-remote host backend: provided by the hiprtc prelude. */\n";
/// `hip/hip_runtime.h`: the prelude is the device side. A device source of hipcc (a whole HIP
/// program, which hipcc marks with `hip_code_object::portable::DEVICE_SOURCE_MACRO`) also gets the host API's
/// declarations, as a HIP compile sees them: its host code is left out, but the declarations
/// it keeps name HIP's host types.
const HIP_RUNTIME_STUB: &str = "/* hip-remote host backend: the device side is the hiprtc prelude. */\n\
    #if defined(__HIP_REMOTE_DEVICE_SOURCE__)\n#include <hip/hip_runtime_api.h>\n#include <hip_remote/host_templates.h>\n#endif\n";
/// HIP headers served as the client has them (`client-capi/include`): portable C++ that the
/// prelude does not replace (`hip_fp16.h` adds `__half2` and the rest to the prelude's scalar
/// `__half`).
const CLIENT_HEADERS: &[(&str, &str)] = &[
    // The host API's declarations and types (`hipError_t`, `hipStream_t`, …) and hiprtc's: a
    // program's host-side declarations name them, and nothing of them needs the runtime.
    ("hip/hip_runtime_api.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/hip_runtime_api.h"))),
    ("hip/hip_common.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/hip_common.h"))),
    ("hip/driver_types.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/driver_types.h"))),
    ("hip/linker_types.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/linker_types.h"))),
    ("hip/library_types.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/library_types.h"))),
    ("hip/texture_types.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/texture_types.h"))),
    ("hip/hip_texture_types.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/hip_texture_types.h"))),
    ("hip/surface_types.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/surface_types.h"))),
    ("hip/hip_deprecated.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/hip_deprecated.h"))),
    ("hip/hiprtc.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/hiprtc.h"))),
    ("hip_remote/host_templates.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip_remote/host_templates.h"))),
    ("hip/channel_descriptor.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/channel_descriptor.h"))),
    ("hip/hip_hcc.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/hip_hcc.h"))),
    ("hip/hip_fp16.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/hip_fp16.h"))),
    ("hip/hip_bf16.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/hip_bf16.h"))),
    ("hip/hip_math_constants.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/hip_math_constants.h"))),
    ("hip/hip_fp8.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/hip_fp8.h"))),
    ("hip/hip_fp4.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/hip_fp4.h"))),
    ("hip/hip_fp6.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/hip_fp6.h"))),
    ("hip/hip_bfloat16.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/hip_bfloat16.h"))),
    ("hip/hip_profile.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/hip_profile.h"))),
    ("hip/hip_complex.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/hip_complex.h"))),
    ("hip/hip_cooperative_groups.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/hip_cooperative_groups.h"))),
    // A HIP library's header in a kernel file (ggml's `vendors/hip.h` includes hipBLAS's in
    // every one): its types and enumerations compile in device code; its host functions are
    // only declared (the prelude gives the handle types they take).
    ("hip/library_types.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip/library_types.h"))),
    ("hipblas/hipblas.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hipblas/hipblas.h"))),
    ("hip_remote/small_float.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip_remote/small_float.h"))),
    (
        "hip_remote/amd_device_functions.h",
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../client-capi/include/hip_remote/amd_device_functions.h")),
    ),
];
/// The compile directory's folder of the program's headers (embedded and sent by the client).
const HEADER_DIR: &str = "include";
/// The hiprtc option asking for relocatable device code: the host backend then returns a
/// relocatable object (ELF `ET_REL`) for `hipLink*` instead of a module.
const RDC_OPTION: &str = "-fgpu-rdc";
/// Flags of a relocatable compile.
const RDC_FLAGS: &[&str] = &["-std=c++17", "-O2", "-fPIC", "-fno-gnu-unique", "-U_FORTIFY_SOURCE", "-fno-builtin-printf", "-c"];
/// The function by which a relocatable object's constructor registers its kernels and
/// globals with the linked module.
const RDC_ADD_SYMBOL: &str = "hip_remote_rdc_add";
/// The C++ compiler, unless `$HIP_REMOTE_CXX` names another.
const DEFAULT_CXX: &str = "c++";
/// Environment variable naming the C++ compiler.
const CXX_ENV: &str = "HIP_REMOTE_CXX";
/// Flags every compile uses. `-fno-gnu-unique` keeps template statics local so a module can
/// be unloaded; `--no-undefined` reports a missing definition at link time, in the log;
/// without fortification and the printf builtin, kernel `printf` calls reach the prelude's
/// buffered `printf` (not `__printf_chk` or `puts`).
const BASE_FLAGS: &[&str] =
    &["-std=c++17", "-O2", "-shared", "-fPIC", "-fno-gnu-unique", "-U_FORTIFY_SOURCE", "-fno-builtin-printf", "-Wl,--no-undefined"];
/// Flags of [`BASE_FLAGS`] and [`RDC_FLAGS`] that only GCC knows. clang never makes
/// `STB_GNU_UNIQUE` symbols, so it needs no `-fno-gnu-unique` (and refuses it).
const GCC_ONLY_FLAGS: &[&str] = &["-fno-gnu-unique"];

/// `flags` for the C++ compiler `cxx`: without [`GCC_ONLY_FLAGS`] when it is clang (device code
/// using clang's vector extensions, as ggml's `ext_vector_type` does, needs `HIP_REMOTE_CXX`
/// to name a clang). Whether a compiler is clang is asked once (`--version`) and remembered.
pub(crate) fn compiler_flags(cxx: &str, flags: &[&'static str]) -> Vec<&'static str> {
    static IS_CLANG: Mutex<Vec<(String, bool)>> = Mutex::new(Vec::new());
    let mut known = IS_CLANG.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let is_clang = match known.iter().find(|(name, _)| name == cxx) {
        Some(&(_, is_clang)) => is_clang,
        None => {
            let is_clang = Command::new(cxx)
                .arg("--version")
                .stdin(Stdio::null())
                .output()
                .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("clang version"));
            known.push((cxx.to_string(), is_clang));
            is_clang
        }
    };
    flags.iter().copied().filter(|flag| !(is_clang && GCC_ONLY_FLAGS.contains(flag))).collect()
}

/// The define that makes the prelude run a program's blocks as fibers.
const FIBERS_DEFINE: &str = "-DHIP_REMOTE_FIBERS=1";
/// Longest a compile may run before it is killed.
pub(crate) const COMPILE_TIMEOUT: Duration = Duration::from_secs(60);
/// Environment variable replacing [`COMPILE_TIMEOUT`] (whole seconds, at most
/// [`MAX_COMPILE_TIMEOUT`]): kernel files of megabytes (ggml's) take the C++ compiler minutes.
pub(crate) const COMPILE_TIMEOUT_ENV: &str = "HIP_REMOTE_CXX_TIMEOUT";
/// Upper bound of [`COMPILE_TIMEOUT_ENV`].
pub(crate) const MAX_COMPILE_TIMEOUT: Duration = Duration::from_secs(3600);

/// How long one compile may run: [`COMPILE_TIMEOUT_ENV`] when it holds whole seconds from 1
/// to [`MAX_COMPILE_TIMEOUT`]'s, else [`COMPILE_TIMEOUT`].
pub(crate) fn compile_timeout() -> Duration {
    std::env::var(COMPILE_TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs)
        .filter(|t| !t.is_zero() && *t <= MAX_COMPILE_TIMEOUT)
        .unwrap_or(COMPILE_TIMEOUT)
}
/// Longest log returned; the rest is cut with a note. Well inside the wire's `MAX_TEXT_LEN`.
pub(crate) const MAX_LOG_LEN: usize = 256 << 10;
// The log, with its truncation note, fits the wire's text field.
const _: () = assert!(MAX_LOG_LEN + 64 <= MAX_TEXT_LEN);
/// Largest code object returned (one bulk section).
pub(crate) const MAX_CODE_LEN: usize = MAX_BULK_LEN;
/// Compiles running at once across all sessions; more wait their turn.
pub(crate) const MAX_CONCURRENT_COMPILES: usize = 4;
/// Name used when the program has none.
const DEFAULT_PROGRAM_NAME: &str = "default_program";
/// Symbol of the lowered-name table in generated modules (outside the module ABI).
const LOWERED_NAMES_SYMBOL: &str = "hip_remote_rtc_lowered_names";

/// Compiles `request` for the host. `Err` only when the worker cannot run a compile at all.
pub(super) fn compile(request: &RtcRequest<'_>, limits: &ModuleLimits) -> Result<RtcOutput, BackendError> {
    let name = program_name(request.name);
    for expr in &request.name_expressions {
        if expr.trim().is_empty() || expr.contains(['\n', '\r']) {
            return Err(BackendError::InvalidValue(format!("name expression {expr:?} is empty or spans lines")));
        }
    }
    for (header, _) in &request.headers {
        check_header_name(header)?;
    }

    // 1. Barriers and warp operations; dynamic shared memory.
    let mut log = String::new();
    let source = scan::rewrite_dynamic_shared(request.source).unwrap_or_else(|| request.source.to_string());
    let headers: Vec<(&str, String)> =
        request.headers.iter().map(|(header, text)| (*header, scan::rewrite_dynamic_shared(text).unwrap_or_else(|| text.to_string()))).collect();
    let sources = std::iter::once((name.as_str(), source.as_str())).chain(headers.iter().map(|(h, t)| (*h, t.as_str())));
    let fibers = sources.filter_map(|(file, text)| scan::first_fiber_use(text).map(|u| (file, u))).next();
    if let Some((file, found)) = &fibers {
        tracing::debug!(program = %name, "{file}:{}: `{}`: the blocks run their threads as fibers", found.line, found.ident);
    }

    // 2. Options.
    let mut passed = sort_options(&request.options, &mut log);
    if fibers.is_some() {
        passed.push(FIBERS_DEFINE.to_string());
    }

    // 3. Files.
    let _slot = CompileSlot::acquire();
    let dir = TempDir::create()?;
    let rdc = request.options.iter().any(|o| o.trim() == RDC_OPTION);
    let generated = generate(&name, &source, request, rdc);
    let io = |e: std::io::Error| BackendError::Unknown(format!("hiprtc scratch files: {}", explain_limit(e)));
    write_file(&dir.path.join("sys/hip_remote/host_module.h"), HOST_MODULE_H).map_err(io)?;
    write_file(&dir.path.join("sys/hip_remote_prelude.hpp"), PRELUDE).map_err(io)?;
    for (stub, text) in STUB_HEADERS {
        write_file(&dir.path.join("sys").join(stub), text).map_err(io)?;
    }
    for (header, text) in CLIENT_HEADERS {
        write_file(&dir.path.join("sys").join(header), text).map_err(io)?;
    }
    for (fallback, text) in FALLBACK_HEADERS {
        if !headers.iter().any(|(header, _)| header == fallback) {
            write_file(&dir.path.join("sys").join(fallback), text).map_err(io)?;
        }
    }
    fs::create_dir_all(dir.path.join(HEADER_DIR)).map_err(io)?;
    for (header, text) in &headers {
        write_file(&dir.path.join(HEADER_DIR).join(header), text).map_err(io)?;
    }
    write_file(&dir.path.join("__hip_remote_main.cpp"), &generated.source).map_err(io)?;

    // 4. Compile.
    let cxx = std::env::var(CXX_ENV).unwrap_or_else(|_| DEFAULT_CXX.to_string());
    let output = dir.path.join(if rdc { "program.o" } else { "program.so" });
    let mut command = Command::new(&cxx);
    command
        .current_dir(&dir.path)
        .args(compiler_flags(&cxx, if rdc { RDC_FLAGS } else { BASE_FLAGS }))
        .arg("-I")
        .arg(dir.path.join("sys"))
        .arg("-I")
        .arg(dir.path.join(HEADER_DIR))
        .args(&passed)
        .arg("-include")
        .arg(dir.path.join("sys/hip_remote_prelude.hpp"))
        .arg("-o")
        .arg(&output)
        .arg("__hip_remote_main.cpp");
    if !rdc {
        command.arg("-ldl");
    }
    let outcome = run_compiler(command, &dir.path.join("compiler.log"));
    let (status, compiler_log) = match outcome {
        Ok(result) => result,
        Err(e) => {
            let _ = writeln!(
                log,
                "hip-remote: cannot run the C++ compiler `{cxx}` ({e}); the host backend needs \
                 one on the worker (set {CXX_ENV} to choose it)"
            );
            return Ok(failure(log));
        }
    };
    log.push_str(&compiler_log);
    match status {
        CompilerStatus::TimedOut => {
            let _ = writeln!(
                log,
                "hip-remote: the compiler was stopped after {} s (the worker's {COMPILE_TIMEOUT_ENV} sets the limit)",
                compile_timeout().as_secs()
            );
            return Ok(failure(log));
        }
        CompilerStatus::Failed => {
            note_file_limit(&mut log);
            return Ok(failure(log));
        }
        CompilerStatus::Succeeded => {}
    }

    // 5. The module, validated as a load would, and its lowered names.
    let code = match read_bounded(&output, MAX_CODE_LEN) {
        Ok(Some(code)) => code,
        Ok(None) => {
            let _ = writeln!(log, "hip-remote: the compiled module exceeds {MAX_CODE_LEN} bytes");
            return Ok(failure(log));
        }
        Err(e) => return Err(io(e)),
    };
    if rdc {
        // A relocatable object loads only once linked (`hipLink*`); its lowered names are
        // the ones known without loading it.
        let lowered_names = generated
            .lowered
            .iter()
            .map(|l| match l {
                LoweredName::Known(name) => name.clone(),
                LoweredName::FromModule { fallback, .. } => fallback.clone(),
            })
            .collect();
        return Ok(RtcOutput { success: true, log: clean_log(log), code, lowered_names });
    }
    let origin = format!("hiprtc program `{name}`");
    let module = match HostModule::load_path(&output, &origin, limits) {
        Ok(module) => module,
        Err(e) => {
            let _ = writeln!(log, "hip-remote: the compiled module does not load: {e}");
            return Ok(failure(log));
        }
    };
    let lowered_names = lowered_names(&module, &generated.lowered);
    let code = with_kernel_note(code, &module);
    drop(module);
    Ok(RtcOutput { success: true, log: clean_log(log), code, lowered_names })
}

/// `code` with a note listing `module`'s kernels and their parameter layouts as its table
/// holds them once loaded (`hip_code_object::kernel_names`): a client loading it answers a
/// lookup of a name it lacks itself (`hipErrorNotFound`), posts the others without waiting,
/// and packs the first launch's arguments without asking. As it is where the note does not
/// fit; the client then asks.
pub(super) fn with_kernel_note(code: Vec<u8>, module: &HostModule) -> Vec<u8> {
    let layouts: Vec<Vec<(u32, u32)>> = module.kernels().iter().map(|k| k.params.iter().map(|p| (p.offset, p.size)).collect()).collect();
    let kernels: Vec<(&str, &[(u32, u32)])> = module.kernels().iter().zip(&layouts).map(|(k, l)| (k.name.as_str(), &l[..])).collect();
    match hip_code_object::kernel_names::annotate_host_module(&code, &kernels) {
        Ok(annotated) if annotated.len() <= MAX_CODE_LEN => annotated,
        Ok(annotated) => {
            tracing::debug!(bytes = annotated.len(), "host module left without its kernel note: beyond the code limit");
            code
        }
        Err(e) => {
            tracing::debug!(error = %e, "host module left without its kernel note");
            code
        }
    }
}

/// Adds to a failed compile's log which limit stopped it when the toolchain's messages say
/// it could not write a file that large (EFBIG's "File too large"): a session process's
/// file-size limit, which its compiler shares.
pub(super) fn note_file_limit(log: &mut String) {
    if log.contains("File too large") || log.contains("File size limit exceeded") {
        let _ = writeln!(log, "hip-remote: the compiler could not write a file beyond {}", file_limit_text(file_size_limit()));
    }
}

fn failure(log: String) -> RtcOutput {
    RtcOutput { success: false, log: clean_log(log), code: Vec::new(), lowered_names: Vec::new() }
}

/// Bounds the log and drops NULs (the wire's text fields refuse them).
fn clean_log(mut log: String) -> String {
    if log.len() > MAX_LOG_LEN {
        let mut cut = MAX_LOG_LEN;
        while !log.is_char_boundary(cut) {
            cut -= 1;
        }
        log.truncate(cut);
        let _ = write!(log, "\n[hip-remote: log truncated at {MAX_LOG_LEN} bytes]\n");
    }
    log.replace('\0', "\u{fffd}")
}

/// A program name safe for a `#line` directive and for logs.
fn program_name(name: &str) -> String {
    let name: String = name.chars().map(|c| if c.is_control() || c == '"' || c == '\\' { '_' } else { c }).take(MAX_NAME_LEN).collect();
    if name.trim().is_empty() {
        DEFAULT_PROGRAM_NAME.to_string()
    } else {
        name
    }
}

/// Header names must be relative paths staying inside the include directory.
fn check_header_name(header: &str) -> Result<(), BackendError> {
    let path = Path::new(header);
    let inside = !header.is_empty() && path.components().all(|c| matches!(c, Component::Normal(part) if part.len() <= 255));
    if inside {
        Ok(())
    } else {
        Err(BackendError::InvalidValue(format!("header name {header:?} must be a relative path without `..`")))
    }
}

/// The options passed to the compiler; everything else is noted in `log` and ignored.
///
/// `-I` directories are the client's: libhiprtc sends the headers the program includes from
/// them (named relative to the directory they were found in), so an absolute directory is
/// never searched on the worker, and a relative one is taken inside the compile's header
/// directory.
fn sort_options(options: &[&str], log: &mut String) -> Vec<String> {
    let mut passed = Vec::new();
    let mut client_dirs = 0usize;
    let mut include = |dir: &str, passed: &mut Vec<String>| {
        let inside = !dir.is_empty() && Path::new(dir).components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if inside {
            passed.push(format!("-I{HEADER_DIR}/{dir}"));
        } else {
            client_dirs += 1;
        }
    };
    let mut iter = options.iter().copied();
    while let Some(option) = iter.next() {
        let option = option.trim();
        match option {
            "" | RDC_OPTION => {}
            "-D" | "-U" | "-I" | "-isystem" => match iter.next() {
                Some(value) if option == "-I" || option == "-isystem" => include(value.trim(), &mut passed),
                Some(value) => passed.push(format!("{option}{}", value.trim())),
                None => {
                    let _ = writeln!(log, "hip-remote: ignored option `{option}` without a value");
                }
            },
            _ if option.starts_with("-D") || option.starts_with("-U") => passed.push(option.to_string()),
            _ if option.starts_with("-I") => include(&option[2..], &mut passed),
            _ if option.starts_with("-isystem") => include(&option[8..], &mut passed),
            _ if option.starts_with("--offload-arch=")
                || option.starts_with("--gpu-architecture")
                || option.starts_with("-arch")
                || option.starts_with("-O")
                || option.starts_with("-std=")
                || option.starts_with("--std=") =>
            {
                let _ = writeln!(
                    log,
                    "hip-remote: ignored option `{option}`: the host backend compiles for the \
                     worker's CPU with {}",
                    BASE_FLAGS[..2].join(" ")
                );
            }
            _ => {
                let _ = writeln!(log, "hip-remote: ignored option `{option}`: not supported by the host backend");
            }
        }
    }
    if client_dirs > 0 {
        let _ = writeln!(
            log,
            "hip-remote: {client_dirs} include director{} of the client not searched on the worker (the \
             headers the program includes from them come with the compile)",
            if client_dirs == 1 { "y" } else { "ies" }
        );
    }
    passed
}

/// The main translation unit and where each name expression's lowered name comes from.
struct Generated {
    source: String,
    lowered: Vec<LoweredName>,
}

enum LoweredName {
    /// Known without compiling (an `extern "C"` kernel's own name).
    Known(String),
    /// Read from the compiled module's table, `fallback` if it holds none.
    FromModule { index: usize, fallback: String },
}

/// A C++ string literal of `s`.
fn c_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for b in s.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\{b:03o}");
            }
        }
    }
    out.push('"');
    out
}

/// `ns::k<float>` from `&ns::k<float>` or `::ns::k<float>`, spaces trimmed.
fn normalize_expression(expr: &str) -> &str {
    let expr = expr.trim();
    let expr = expr.strip_prefix('&').unwrap_or(expr).trim_start();
    expr.strip_prefix("::").unwrap_or(expr)
}

/// Whether a name expression is itself a pointer (a cast of `&name`), not a name to take the
/// address of.
fn is_pointer_expression(expr: &str) -> bool {
    ["static_cast<", "reinterpret_cast<", "("].iter().any(|p| expr.starts_with(p)) && expr.contains('&')
}

/// The main translation unit. With `rdc` (`-fgpu-rdc`) it is a relocatable object for the
/// linker: instead of a module descriptor, its constructor hands its kernels and globals to
/// `hip_remote_rdc_add`, which the linked module's stub ([`link`]) defines.
fn generate(name: &str, program: &str, request: &RtcRequest<'_>, rdc: bool) -> Generated {
    let declarations = scan::declarations(program);
    let mut source = String::new();
    let _ = writeln!(source, "#line 1 {}", c_string(name));
    source.push_str(program);
    source.push_str("\n#line 1 \"<hip-remote kernel table>\"\n");
    source.push_str("namespace {\n");
    // (pointer expression, fallback name, resolve through dladdr, name expression index)
    let mut entries: Vec<(String, String, bool, i64)> = Vec::new();
    for (qualified, symbol) in &declarations.kernels {
        entries.push((format!("&{qualified}"), symbol.clone(), false, -1));
    }
    for (qualified, unmangled) in &declarations.variables {
        let plain = qualified.trim_start_matches("::").to_string();
        let fallback = if *unmangled { plain.rsplit("::").next().unwrap_or(&plain).to_string() } else { plain };
        entries.push((format!("&{qualified}"), fallback, !*unmangled, -1));
    }
    let mut lowered = Vec::new();
    for (index, expr) in request.name_expressions.iter().enumerate() {
        let normalized = normalize_expression(expr);
        let known = declarations.kernels.iter().find(|(qualified, symbol)| qualified.trim_start_matches("::") == normalized || symbol == normalized);
        match known {
            Some((_, symbol)) => lowered.push(LoweredName::Known(symbol.clone())),
            None => {
                // A cast (`static_cast<void(*)(int*)>(&k)`, hipcc's form for an overloaded
                // kernel) already is the pointer.
                let pointer = if is_pointer_expression(normalized) { normalized.to_string() } else { format!("&({normalized})") };
                entries.push((pointer, normalized.to_string(), true, index as i64));
                lowered.push(LoweredName::FromModule { index, fallback: normalized.to_string() });
            }
        }
    }
    for (i, (expr, _, _, index)) in entries.iter().enumerate() {
        if *index >= 0 {
            let _ = writeln!(source, "// name expression {index}: {}", request.name_expressions[*index as usize].trim());
        }
        let _ = writeln!(source, "constexpr auto __hip_remote_c{i} = {expr};");
    }
    let n = entries.len();
    let m = request.name_expressions.len();
    if rdc {
        source.push_str("}  // namespace\n");
        let _ = writeln!(source, "extern \"C\" void {RDC_ADD_SYMBOL}(const void* candidates, unsigned long count);");
        source.push_str("namespace {\n__attribute__((constructor(200))) void __hip_remote_init() {\n");
        source.push_str("  static const ::__hip_remote::candidate candidates[] = {\n");
        for (i, (_, fallback, resolve, _)) in entries.iter().enumerate() {
            let _ = writeln!(source, "    ::__hip_remote::candidate_of<__hip_remote_c{i}>({}, {resolve}, -1),", c_string(fallback));
        }
        source.push_str("    ::__hip_remote::candidate{},\n  };\n");
        let _ = writeln!(source, "  {RDC_ADD_SYMBOL}(candidates, {n});\n}}\n}}  // namespace");
        return Generated { source, lowered };
    }
    let _ = writeln!(source, "hip_remote_kernel __hip_remote_kernels[{}];", n + 1);
    let _ = writeln!(source, "hip_remote_global __hip_remote_globals[{}];", n + 1);
    source.push_str("}  // namespace\n");
    let _ = writeln!(
        source,
        "extern \"C\" {{\n\
         hip_remote_host_module hip_remote_host_module_v1 = {{HIP_REMOTE_HOST_MODULE_MAGIC, \
         HIP_REMOTE_HOST_MODULE_VERSION, 0, __hip_remote_kernels, 0, __hip_remote_globals}};\n\
         const char* {LOWERED_NAMES_SYMBOL}[{}];\n\
         }}",
        m + 1
    );
    source.push_str("namespace {\n__attribute__((constructor)) void __hip_remote_init() {\n");
    source.push_str("  const ::__hip_remote::candidate candidates[] = {\n");
    for (i, (_, fallback, resolve, index)) in entries.iter().enumerate() {
        let _ = writeln!(source, "    ::__hip_remote::candidate_of<__hip_remote_c{i}>({}, {resolve}, {index}),", c_string(fallback));
    }
    source.push_str("    ::__hip_remote::candidate{},\n  };\n");
    let _ = writeln!(
        source,
        "  ::__hip_remote::build(candidates, {n}, __hip_remote_kernels, __hip_remote_globals, \
         &hip_remote_host_module_v1, {LOWERED_NAMES_SYMBOL});\n}}\n}}  // namespace"
    );
    Generated { source, lowered }
}

/// The lowered name of every name expression, in order.
fn lowered_names(module: &HostModule, lowered: &[LoweredName]) -> Vec<String> {
    let symbol = format!("{LOWERED_NAMES_SYMBOL}\0");
    // SAFETY: the generated tail defines the symbol as `const char*[m + 1]`, filled by the
    // module's constructor with string pointers into the module (or left null).
    let table: Option<*const *const c_char> = unsafe { module.library().get::<*const *const c_char>(symbol.as_bytes()).ok().map(|s| *s) };
    lowered
        .iter()
        .map(|entry| match entry {
            LoweredName::Known(name) => name.clone(),
            LoweredName::FromModule { index, fallback } => table
                .and_then(|table| {
                    // SAFETY: `index < m`, inside the table the module exports.
                    let ptr = unsafe { *table.add(*index) };
                    // SAFETY: a non-null entry is a NUL-terminated string in the module,
                    // which `module` keeps loaded while the `CStr` is borrowed.
                    (!ptr.is_null()).then(|| unsafe { CStr::from_ptr(ptr) })
                })
                .and_then(|name| name.to_str().ok().map(str::to_string))
                .unwrap_or_else(|| fallback.clone()),
        })
        .collect()
}

fn write_file(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    fs::write(path, text)
}

/// The file's bytes, or `None` when it is larger than `max`.
fn read_bounded(path: &Path, max: usize) -> std::io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    fs::File::open(path)?.take(max as u64 + 1).read_to_end(&mut bytes)?;
    Ok((bytes.len() <= max).then_some(bytes))
}

enum CompilerStatus {
    Succeeded,
    Failed,
    TimedOut,
}

/// Runs the compiler with stdout and stderr in `log_path`, killing its whole process group
/// after [`compile_timeout`]. `Err` when it cannot be started.
fn run_compiler(mut command: Command, log_path: &Path) -> std::io::Result<(CompilerStatus, String)> {
    let log_file = fs::File::create(log_path)?;
    command
        .stdin(Stdio::null())
        .stdout(log_file.try_clone()?)
        .stderr(log_file)
        // Its own process group, so the driver's children (cc1plus, as, ld) go with it.
        .process_group(0);
    let mut child = command.spawn()?;
    let deadline = Instant::now() + compile_timeout();
    let mut pause = Duration::from_millis(5);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break if status.success() { CompilerStatus::Succeeded } else { CompilerStatus::Failed };
        }
        if Instant::now() >= deadline {
            if let Ok(pgid) = i32::try_from(child.id()) {
                // SAFETY: signals the process group this function created (the child's pid is
                // its group id); no memory is involved.
                unsafe { libc::kill(-pgid, libc::SIGKILL) };
            }
            let _ = child.kill();
            let _ = child.wait();
            break CompilerStatus::TimedOut;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(100));
    };
    let mut bytes = Vec::new();
    fs::File::open(log_path)?.take(MAX_LOG_LEN as u64 + 1).read_to_end(&mut bytes)?;
    Ok((status, String::from_utf8_lossy(&bytes).into_owned()))
}

/// A private scratch directory (mode 0700), removed with its contents on drop.
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn create() -> Result<Self, BackendError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let path = std::env::temp_dir().join(format!("hip-remote-rtc-{}-{}-{nanos}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
        fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|e| BackendError::Unknown(format!("cannot create the hiprtc scratch directory {}: {e}", path.display())))?;
        Ok(Self { path })
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if let Err(e) = fs::remove_dir_all(&self.path) {
            tracing::warn!(path = %self.path.display(), %e, "cannot remove a hiprtc scratch directory");
        }
    }
}

/// One of [`MAX_CONCURRENT_COMPILES`] slots, held for the duration of a compile.
struct CompileSlot;

static RUNNING_COMPILES: Mutex<usize> = Mutex::new(0);
static COMPILE_DONE: Condvar = Condvar::new();

impl CompileSlot {
    fn acquire() -> Self {
        let mut running = lock(&RUNNING_COMPILES);
        while *running >= MAX_CONCURRENT_COMPILES {
            running = wait(&COMPILE_DONE, running);
        }
        *running += 1;
        Self
    }
}

impl Drop for CompileSlot {
    fn drop(&mut self) {
        *lock(&RUNNING_COMPILES) -= 1;
        COMPILE_DONE.notify_one();
    }
}

impl RtcBackend for HostBackend {
    fn rtc_compile(&self, dev: DeviceIndex, request: &RtcRequest<'_>) -> Result<RtcOutput, BackendError> {
        let limits = self.module_limits(dev)?;
        self.check_host_code_allowed("hiprtc on the host backend (it builds a host module)")?;
        compile(request, &limits)
    }

    fn rtc_link(&self, dev: DeviceIndex, inputs: &[LinkInput<'_>]) -> Result<RtcOutput, BackendError> {
        let limits = self.module_limits(dev)?;
        self.check_host_code_allowed("hipLink* on the host backend (it builds a host module)")?;
        link::link(inputs, &limits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// clang refuses GCC's `-fno-gnu-unique`; GCC keeps it (template statics stay local).
    #[test]
    fn gcc_only_flags_are_left_out_for_clang() {
        let has = |cxx: &str| Command::new(cxx).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok();
        for clang in ["clang++-15", "clang++"] {
            if has(clang) {
                let flags = compiler_flags(clang, BASE_FLAGS);
                assert!(!flags.contains(&"-fno-gnu-unique") && flags.contains(&"-shared"), "{clang}: {flags:?}");
                break;
            }
        }
        if has("g++") {
            assert!(compiler_flags("g++", BASE_FLAGS).contains(&"-fno-gnu-unique"));
        }
        // A compiler that cannot be run is not taken for clang: its flags stay as they are.
        assert_eq!(compiler_flags("/nonexistent/c++", RDC_FLAGS), RDC_FLAGS.to_vec());
    }

    #[test]
    fn options_are_sorted() {
        let mut log = String::new();
        let passed = sort_options(
            &[
                "--offload-arch=gfx90a",
                "-O3",
                "-DN=4",
                "-D",
                "M",
                "-Iinc",
                "-I/site/cupy/include",
                "-I",
                "/rocm/include",
                "-I../up",
                "-std=c++20",
                "-ffast-math",
                "-I",
            ],
            &mut log,
        );
        assert_eq!(passed, ["-DN=4", "-DM", "-Iinclude/inc"]);
        for ignored in ["--offload-arch=gfx90a", "-O3", "-std=c++20", "-ffast-math", "`-I` without", "3 include directories of the client"] {
            assert!(log.contains(ignored), "{ignored}: {log}");
        }
    }

    #[test]
    fn names_are_made_safe() {
        assert_eq!(program_name(""), DEFAULT_PROGRAM_NAME);
        assert_eq!(program_name("a\"b\\c\n.cu"), "a_b_c_.cu");
        assert!(check_header_name("sub/dir/h.h").is_ok());
        for bad in ["", "/etc/passwd", "../up.h", "a/../../b.h", "./h.h"] {
            assert!(check_header_name(bad).is_err(), "{bad}");
        }
        assert_eq!(c_string("a\"\\\u{e9}"), "\"a\\\"\\\\\\303\\251\"");
        assert_eq!(normalize_expression(" &::ns::k<float> "), "ns::k<float>");
    }

    #[test]
    fn the_prelude_warp_size_is_the_reported_one() {
        let line = format!("static constexpr int warpSize = {};", super::super::properties::HOST_WARP_SIZE);
        assert!(PRELUDE.contains(&line), "{line}");
    }

    #[test]
    fn logs_are_bounded_and_nul_free() {
        let log = clean_log(format!("a\0b{}", "x".repeat(MAX_LOG_LEN)));
        assert!(log.len() <= MAX_LOG_LEN + 64);
        assert!(!log.contains('\0'));
        assert!(log.ends_with("truncated at 262144 bytes]\n"));
    }
}
