//! hiprtc on NVIDIA: HIP kernel source compiled by NVRTC against an in-memory HIP
//! compatibility header set (`hip_compat.h`, served as `<hip/hip_runtime.h>`), for the
//! device's own architecture. HIP-only options are translated or dropped with a log line;
//! the compile log is returned verbatim. The result is PTX, which `cuModuleLoadData` JITs.

use std::ffi::CString;

use super::result::link::LinkState;
use super::result::nvrtc::{self, Program};
use super::CudaBackend;
use crate::backend::{jit_input, BackendError, DeviceIndex, LinkInput, RtcBackend, RtcOutput, RtcRequest};

/// The compatibility header served for every HIP header name a kernel may include.
pub const HIP_COMPAT_HEADER: &str = include_str!("hip_compat.h");
/// The device-log writer (kernel printf/assert), shared with hipcc's clang pass; `hip_compat.h`
/// includes it by this name.
pub const DEVICE_LOG_HEADER: (&str, &str) = ("hip_remote/device_log.h", include_str!("../../../../client-capi/include/hip_remote/device_log.h"));
/// HIP header names answered with [`HIP_COMPAT_HEADER`].
const HIP_HEADER_NAMES: &[&str] =
    &["hip/hip_runtime.h", "hip/hip_runtime_api.h", "hip_runtime.h", "hip/hip_common.h", "hip/hip_version.h", "hip/hip_fp16.h"];
/// What every program is preceded by: the compatibility header, as hiprtc's own headers are
/// (hiprtc programs use HIP's built-ins without including anything: CuPy's do), then the
/// program's own line numbering.
const PROGRAM_PREFIX: &str = "#include <hip/hip_runtime.h>\n#line 1\n";
/// The few standard headers hiprtc programs include that NVRTC lacks (served unless the
/// client sent its own): `<cstddef>`'s types; `<cassert>`'s `assert` is the compatibility
/// header's.
const NVRTC_STD_HEADERS: &[(&str, &str)] = &[
    ("cassert", "#pragma once\n// hip-remote: assert comes from the HIP compatibility header.\n"),
    (
        "cstddef",
        "#pragma once\n// hip-remote: <cstddef>'s types for NVRTC.\ntypedef decltype(sizeof(0)) size_t;\ntypedef \
         decltype((char*)0 - (char*)0) ptrdiff_t;\nnamespace std {\ntypedef ::size_t size_t;\ntypedef ::ptrdiff_t \
         ptrdiff_t;\ntypedef decltype(nullptr) nullptr_t;\n}\n",
    ),
];

/// Outcome of one compilation.
#[derive(Debug, Clone, Default)]
pub struct NvrtcOutput {
    /// Whether PTX was produced.
    pub success: bool,
    /// NVRTC's log (plus our notes on translated options).
    pub log: String,
    /// PTX text, NUL-terminated as cuModuleLoadData expects.
    pub ptx: Vec<u8>,
    /// Lowered names, one per name expression.
    pub lowered_names: Vec<String>,
}

/// The CUDA toolkit's include directory on the worker, when it holds `cuda_fp16.h`
/// (`$CUDA_PATH`, `$CUDA_HOME`, else /usr/local/cuda).
fn cuda_include_dir() -> Option<std::path::PathBuf> {
    static DIR: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        ["CUDA_PATH", "CUDA_HOME"]
            .iter()
            .filter_map(std::env::var_os)
            .map(std::path::PathBuf::from)
            .chain([std::path::PathBuf::from("/usr/local/cuda")])
            .map(|root| root.join("include"))
            .find(|dir| dir.join("cuda_fp16.h").is_file())
    })
    .clone()
}

/// Translates hiprtc options for NVRTC: `--offload-arch`/`--gpu-architecture=gfx…` and
/// AMD-only flags are dropped (noted in the log), `-O*` is dropped (NVRTC always optimises),
/// `-fgpu-rdc` becomes `--relocatable-device-code=true`, `-I` directories (the client's) are
/// dropped, the rest passes through; `-arch=<device>` and C++17 are added.
pub fn translate_options(options: &[&str], sm: &str, notes: &mut String) -> Vec<String> {
    // C++17 at least (the device log header needs it, and it is hiprtc's default); a newer
    // standard the client names (`-std=`/`--std=c++20`) is kept.
    let standard = options
        .iter()
        .rev()
        .find_map(|o| o.strip_prefix("--std=").or_else(|| o.strip_prefix("-std=")))
        .filter(|s| ["20", "2a", "23", "2b"].iter().any(|v| s.ends_with(v)))
        .unwrap_or("c++17");
    let mut out = vec![format!("--gpu-architecture=compute_{}", sm.trim_start_matches("sm_")), format!("-std={standard}")];
    let mut client_dirs = 0usize;
    let mut options = options.iter().copied();
    while let Some(o) = options.next() {
        // Include directories are the client's: the headers the program includes from them
        // come with the compile (embedded by name), so none is searched on the worker.
        if matches!(o, "-I" | "-isystem" | "--include-path") {
            options.next();
            client_dirs += 1;
            continue;
        }
        if o.starts_with("-I") || o.starts_with("-isystem") || o.starts_with("--include-path=") {
            client_dirs += 1;
            continue;
        }
        // Relocatable device code (for the linker, `hipLink*`): NVRTC's spelling.
        if o == "-fgpu-rdc" {
            out.push("--relocatable-device-code=true".to_string());
            continue;
        }
        // clang's (hiprtc's) spellings of what NVRTC has under other names (CuPy passes
        // -fcuda-flush-denormals-to-zero).
        let nvrtc = match o {
            "-fcuda-flush-denormals-to-zero" | "-fgpu-flush-denormals-to-zero" => Some("--ftz=true"),
            "-fno-cuda-flush-denormals-to-zero" | "-fno-gpu-flush-denormals-to-zero" => Some("--ftz=false"),
            "-ffast-math" => Some("--use_fast_math"),
            _ => None,
        };
        if let Some(nvrtc) = nvrtc {
            out.push(nvrtc.to_string());
            continue;
        }
        let drop = o.starts_with("--offload-arch")
            || o.starts_with("--gpu-architecture=gfx")
            || o.starts_with("-O")
            || o.starts_with("-std=")
            || o.starts_with("--std=")
            || o.starts_with("-mcumode")
            || o.starts_with("-fgpu-rdc");
        let standard = o.starts_with("-std=") || o.starts_with("--std=");
        if drop && !standard {
            notes.push_str(&format!("hip-remote: option '{o}' does not apply to NVRTC and was ignored\n"));
        } else if !drop {
            out.push(o.to_string());
        }
    }
    if client_dirs > 0 {
        notes.push_str(&format!(
            "hip-remote: {client_dirs} include director{} of the client not searched on the worker (the headers the \
             program includes from them come with the compile)\n",
            if client_dirs == 1 { "y" } else { "ies" }
        ));
    }
    out
}

/// NVRTC finds an in-memory header by its exact name only, so a header `lib/outer.h` that
/// includes `"inner.h"` (meaning `lib/inner.h`, as a preprocessor searches the includer's
/// directory first) would not find it. For each such quoted include whose spelling is not a
/// header name itself, the header it means is registered under that spelling too.
fn relative_aliases<'a>(headers: &[(&'a str, &'a str)]) -> Vec<(String, &'a str)> {
    let mut aliases: Vec<(String, &'a str)> = Vec::new();
    for (name, text) in headers {
        let Some((dir, _)) = name.rsplit_once('/') else { continue };
        for line in text.lines() {
            let Some(rest) = line.trim_start().strip_prefix('#').map(str::trim_start) else { continue };
            let Some(rest) = rest.strip_prefix("include").map(str::trim_start) else { continue };
            let Some(spelled) = rest.strip_prefix('"').and_then(|r| r.split_once('"')).map(|(s, _)| s) else { continue };
            let mut parts: Vec<&str> = dir.split('/').collect();
            for part in spelled.split('/') {
                match part {
                    "." | "" => {}
                    ".." => {
                        parts.pop();
                    }
                    p => parts.push(p),
                }
            }
            let meant = parts.join("/");
            let known = |n: &str| headers.iter().any(|(h, _)| *h == n) || aliases.iter().any(|(a, _)| a == n);
            if meant != spelled && !known(spelled) {
                if let Some((_, target)) = headers.iter().find(|(h, _)| *h == meant) {
                    aliases.push((spelled.to_string(), target));
                }
            }
        }
    }
    aliases
}

/// Compiles `source` for `sm` (e.g. "sm_90").
pub fn compile(
    name: &str,
    source: &str,
    headers: &[(&str, &str)],
    options: &[&str],
    name_expressions: &[&str],
    sm: &str,
) -> Result<NvrtcOutput, BackendError> {
    if !nvrtc::is_available() {
        return Err(BackendError::NotSupported("libnvrtc could not be loaded on the worker".into()));
    }
    let cstr = |s: &str| CString::new(s).map_err(|_| BackendError::InvalidValue("NUL in compile input".into()));
    let src = cstr(&format!("{PROGRAM_PREFIX}{source}"))?;
    let pname = cstr(name)?;
    let mut header_srcs: Vec<CString> = Vec::new();
    let mut header_names: Vec<CString> = Vec::new();
    for &h in HIP_HEADER_NAMES {
        header_names.push(cstr(h)?);
        header_srcs.push(cstr(HIP_COMPAT_HEADER)?);
    }
    header_names.push(cstr(DEVICE_LOG_HEADER.0)?);
    header_srcs.push(cstr(DEVICE_LOG_HEADER.1)?);
    for (n, s) in headers.iter().copied().chain(relative_aliases(headers).iter().map(|(n, s)| (n.as_str(), *s))) {
        header_names.push(cstr(n)?);
        header_srcs.push(cstr(s)?);
    }
    for (n, s) in crate::backend::FALLBACK_HEADERS.iter().chain(NVRTC_STD_HEADERS) {
        if !headers.iter().any(|(h, _)| h == n) {
            header_names.push(cstr(n)?);
            header_srcs.push(cstr(s)?);
        }
    }
    let program = Program::create(&src, &pname, &header_srcs, &header_names)?;
    let exprs: Vec<CString> = name_expressions.iter().map(|e| cstr(e)).collect::<Result<_, _>>()?;
    for e in &exprs {
        program.add_name_expression(e)?;
    }
    let mut notes = String::new();
    let mut opts = translate_options(options, sm, &mut notes);
    if let Some(dir) = cuda_include_dir() {
        // The toolkit's cuda_fp16.h for <hip/hip_fp16.h> (NVRTC has no built-in copy).
        opts.push(format!("--include-path={}", dir.display()));
        opts.push("-DHIP_REMOTE_HAVE_CUDA_FP16=1".to_string());
    }
    let copts: Vec<CString> = opts.iter().map(|o| cstr(o)).collect::<Result<_, _>>()?;
    let compiled = program.compile(&copts);
    let log = program.log()?;
    let log = notes + String::from_utf8_lossy(&log).trim_end_matches('\0');
    if compiled.is_err() {
        return Ok(NvrtcOutput { success: false, log, ..Default::default() });
    }
    let ptx = program.ptx()?;
    let mut lowered_names = Vec::new();
    for e in &exprs {
        let lowered = program.lowered_name(e)?.ok_or_else(|| BackendError::Unknown(format!("nvrtcGetLoweredName gave no name for {e:?}")))?;
        lowered_names.push(lowered);
    }
    Ok(NvrtcOutput { success: true, log, ptx, lowered_names })
}

impl RtcBackend for CudaBackend {
    fn rtc_compile(&self, dev: DeviceIndex, request: &RtcRequest<'_>) -> Result<RtcOutput, BackendError> {
        let sm = self.device(dev)?.props.gcn_arch_name.clone();
        let out = compile(request.name, request.source, &request.headers, &request.options, &request.name_expressions, &sm)?;
        Ok(RtcOutput { success: out.success, log: out.log, code: out.ptx, lowered_names: out.lowered_names })
    }

    /// `cuLinkCreate` / `cuLinkAddData` / `cuLinkComplete` in the device's context: PTX,
    /// cubins, fat binaries, objects and libraries, as the driver links them (NVRTC output
    /// compiled with `-fgpu-rdc`, i.e. `--relocatable-device-code=true`). The error log goes
    /// into the result's log.
    fn rtc_link(&self, dev: DeviceIndex, inputs: &[LinkInput<'_>]) -> Result<RtcOutput, BackendError> {
        use cudarc::driver::sys::CUjitInputType as In;
        self.enter(dev)?;
        let mut state = LinkState::create(LINK_LOG_LEN)?;
        let mut log = String::new();
        let linked = (|| {
            for input in inputs {
                let kind = match input.kind {
                    jit_input::CUBIN => In::CU_JIT_INPUT_CUBIN,
                    jit_input::PTX => In::CU_JIT_INPUT_PTX,
                    jit_input::FATBINARY => In::CU_JIT_INPUT_FATBINARY,
                    jit_input::OBJECT => In::CU_JIT_INPUT_OBJECT,
                    jit_input::LIBRARY => In::CU_JIT_INPUT_LIBRARY,
                    other => {
                        log.push_str(&format!("hip-remote: input `{}` is hipJitInputType {other}, which CUDA cannot link\n", input.name));
                        return None;
                    }
                };
                // PTX must be NUL-terminated.
                let owned;
                let data = if kind == In::CU_JIT_INPUT_PTX && input.data.last() != Some(&0) {
                    owned = [input.data, &[0]].concat();
                    &owned[..]
                } else {
                    input.data
                };
                let name = CString::new(input.name).unwrap_or_default();
                state.add_data(kind, data, &name).ok()?;
            }
            state.complete().ok().flatten()
        })();
        log.push_str(&state.error_log());
        drop(state);
        Ok(match linked {
            Some(code) => RtcOutput { success: true, log, code, lowered_names: Vec::new() },
            None => RtcOutput { success: false, log, code: Vec::new(), lowered_names: Vec::new() },
        })
    }
}

/// Bytes of the driver's error log kept from one link.
const LINK_LOG_LEN: usize = 64 << 10;

#[cfg(test)]
mod tests {
    use super::{relative_aliases, translate_options};

    #[test]
    fn client_include_directories_are_not_searched_on_the_worker() {
        let mut notes = String::new();
        let opts = translate_options(&["-I/site/cupy/_core/include", "-I", "/usr/include", "--include-path=/x", "-DN=2", "-O3"], "sm_90", &mut notes);
        assert_eq!(opts, ["--gpu-architecture=compute_90", "-std=c++17", "-DN=2"]);
        // A header's quoted include of a sibling is registered under its spelling too.
        let headers = [("lib/outer.h", "#include \"inner.h\"\n#include \"../top.h\"\n"), ("lib/inner.h", "int i;"), ("top.h", "int t;")];
        let aliases = relative_aliases(&headers);
        assert_eq!(aliases, [("inner.h".to_string(), "int i;"), ("../top.h".to_string(), "int t;")]);
        // An older standard is raised to C++17.
        let opts = translate_options(&["-std=c++11"], "sm_90", &mut notes);
        assert_eq!(opts, ["--gpu-architecture=compute_90", "-std=c++17"]);
        // CuPy's options: a newer standard kept once, clang's flush-to-zero in NVRTC's spelling.
        let opts = translate_options(&["--std=c++20", "-fcuda-flush-denormals-to-zero", "-ffast-math"], "sm_90", &mut notes);
        assert_eq!(opts, ["--gpu-architecture=compute_90", "-std=c++20", "--ftz=true", "--use_fast_math"]);
        assert!(notes.contains("3 include directories of the client"), "{notes}");
    }
}
