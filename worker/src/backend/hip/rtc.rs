//! hiprtc on HIP: the runtime's own `libhiprtc.so` (beside `libamdhip64.so`) compiles for the
//! device's `gcnArchName` (`--offload-arch=` added unless the client chose one). The result
//! is a code object `hipModuleLoadData` accepts.

use super::api::{Program, RtcApi};
use super::error::Check;
use super::HipBackend;
use crate::backend::{BackendError, DeviceIndex, LinkInput, RtcBackend, RtcOutput, RtcRequest, FALLBACK_HEADERS};
use std::ffi::{c_char, c_int, c_void, CStr, CString};

fn rtc(call: &str, result: c_int) -> Result<(), BackendError> {
    match result {
        0 => Ok(()),
        code => {
            let name =
                proto_core::hip_error::rtc_name(code).map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| format!("hiprtcResult {code}"));
            Err(BackendError::Unknown(format!("{call}: {name}")))
        }
    }
}

fn cstring(s: &str) -> Result<CString, BackendError> {
    CString::new(s).map_err(|_| BackendError::InvalidValue("NUL in compile input".into()))
}

/// The options passed to hiprtc: the client's without its include directories (they are the
/// client's paths: libhiprtc sends the headers the program includes from them, embedded by
/// name), plus the device's architecture unless they name one.
fn options_for(options: &[&str], arch: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut iter = options.iter().copied();
    while let Some(o) = iter.next() {
        if matches!(o, "-I" | "-isystem" | "--include-path") {
            iter.next();
        } else if !(o.starts_with("-I") || o.starts_with("-isystem") || o.starts_with("--include-path=")) {
            out.push(o.to_string());
        }
    }
    if !options.iter().any(|o| o.starts_with("--offload-arch") || o.starts_with("--gpu-architecture")) {
        out.push(format!("--offload-arch={arch}"));
    }
    out
}

/// Compiles on a created program; the caller destroys it.
fn compile(api: &RtcApi, prog: Program, request: &RtcRequest<'_>, arch: &str) -> Result<RtcOutput, BackendError> {
    let exprs: Vec<CString> = request.name_expressions.iter().map(|e| cstring(e)).collect::<Result<_, _>>()?;
    for e in &exprs {
        // SAFETY: a live program, a NUL-terminated expression.
        rtc("hiprtcAddNameExpression", unsafe { (api.hiprtcAddNameExpression)(prog, e.as_ptr()) })?;
    }
    let options: Vec<CString> = options_for(&request.options, arch).iter().map(|o| cstring(o)).collect::<Result<_, _>>()?;
    let option_ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
    // SAFETY: a live program; the option strings outlive the call.
    let compiled = unsafe { (api.hiprtcCompileProgram)(prog, option_ptrs.len() as c_int, option_ptrs.as_ptr()) };
    let mut log_len = 0usize;
    // SAFETY: a live program, a valid out-pointer.
    rtc("hiprtcGetProgramLogSize", unsafe { (api.hiprtcGetProgramLogSize)(prog, &mut log_len) })?;
    let mut log = vec![0u8; log_len.max(1)];
    // SAFETY: a buffer of the size hiprtc reported.
    rtc("hiprtcGetProgramLog", unsafe { (api.hiprtcGetProgramLog)(prog, log.as_mut_ptr().cast()) })?;
    let log = String::from_utf8_lossy(&log).trim_end_matches('\0').to_string();
    if compiled != 0 {
        return Ok(RtcOutput { success: false, log, ..Default::default() });
    }
    let mut code_len = 0usize;
    // SAFETY: a compiled program, a valid out-pointer.
    rtc("hiprtcGetCodeSize", unsafe { (api.hiprtcGetCodeSize)(prog, &mut code_len) })?;
    let mut code = vec![0u8; code_len];
    // SAFETY: a buffer of the size hiprtc reported.
    rtc("hiprtcGetCode", unsafe { (api.hiprtcGetCode)(prog, code.as_mut_ptr().cast()) })?;
    let mut lowered_names = Vec::new();
    for e in &exprs {
        let mut lowered: *const c_char = std::ptr::null();
        // SAFETY: a compiled program; the expression was added before compiling.
        rtc("hiprtcGetLoweredName", unsafe { (api.hiprtcGetLoweredName)(prog, e.as_ptr(), &mut lowered) })?;
        if lowered.is_null() {
            return Err(BackendError::Unknown(format!("hiprtcGetLoweredName gave no name for {e:?}")));
        }
        // SAFETY: a NUL-terminated string owned by the program (alive here).
        lowered_names.push(unsafe { CStr::from_ptr(lowered) }.to_string_lossy().into_owned());
    }
    Ok(RtcOutput { success: true, log, code, lowered_names })
}

impl RtcBackend for HipBackend {
    /// The loaded runtime's `hipLinkCreate` / `hipLinkAddData` / `hipLinkComplete` (inputs of
    /// every `hipJitInputType` it takes: LLVM bitcode from hiprtc's `-fgpu-rdc`, objects…);
    /// its error log goes into the result's log.
    fn rtc_link(&self, dev: DeviceIndex, inputs: &[LinkInput<'_>]) -> Result<RtcOutput, BackendError> {
        let missing = || BackendError::NotSupported("the HIP runtime has no hipLink* functions".into());
        let (create, add, complete, destroy) = (
            self.api.hipLinkCreate.ok_or_else(missing)?,
            self.api.hipLinkAddData.ok_or_else(missing)?,
            self.api.hipLinkComplete.ok_or_else(missing)?,
            self.api.hipLinkDestroy.ok_or_else(missing)?,
        );
        self.enter(dev)?;
        let mut error_log = vec![0u8; LINK_LOG_LEN];
        // hipJitOptionErrorLogBuffer, hipJitOptionErrorLogBufferSizeBytes.
        let mut options: [c_int; 2] = [5, 6];
        let mut values: [*mut c_void; 2] = [error_log.as_mut_ptr().cast(), LINK_LOG_LEN as *mut c_void];
        let mut state = std::ptr::null_mut();
        // SAFETY: two options with their values; the log buffer outlives the link state.
        unsafe { create(2, options.as_mut_ptr(), values.as_mut_ptr(), &mut state) }.check("hipLinkCreate")?;
        let mut log = String::new();
        let mut linked = None;
        let mut added_all = true;
        for input in inputs {
            let name = CString::new(input.name).unwrap_or_default();
            // SAFETY: a live link state; the data is valid for its length during the call.
            let r = unsafe {
                add(
                    state,
                    input.kind as c_int,
                    input.data.as_ptr() as *mut c_void,
                    input.data.len(),
                    name.as_ptr(),
                    0,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
            };
            if let Err(e) = r.check("hipLinkAddData") {
                log.push_str(&format!("hip-remote: input `{}`: {e}\n", input.name));
                added_all = false;
                break;
            }
        }
        if added_all {
            let (mut image, mut size) = (std::ptr::null_mut(), 0usize);
            // SAFETY: a live link state; valid out-pointers; the image belongs to the state.
            match unsafe { complete(state, &mut image, &mut size) }.check("hipLinkComplete") {
                // SAFETY: the runtime's image of `size` bytes, copied before the state is destroyed.
                Ok(()) if !image.is_null() => linked = Some(unsafe { std::slice::from_raw_parts(image as *const u8, size) }.to_vec()),
                Ok(()) => log.push_str("hip-remote: hipLinkComplete returned no image\n"),
                Err(e) => log.push_str(&format!("hip-remote: {e}\n")),
            }
        }
        // SAFETY: the state created above, destroyed once.
        let _ = unsafe { destroy(state) };
        let end = error_log.iter().position(|&b| b == 0).unwrap_or(error_log.len());
        log.push_str(&String::from_utf8_lossy(&error_log[..end]));
        Ok(match linked {
            Some(code) => RtcOutput { success: true, log, code, lowered_names: Vec::new() },
            None => RtcOutput { success: false, log, code: Vec::new(), lowered_names: Vec::new() },
        })
    }

    fn rtc_compile(&self, dev: DeviceIndex, request: &RtcRequest<'_>) -> Result<RtcOutput, BackendError> {
        let api = self.rtc.as_ref().map_err(|why| BackendError::NotSupported(format!("hiprtc is unavailable on this worker: {why}")))?;
        let arch = self.device(dev)?.gcn_arch_name.clone();
        // hiprtc compiles for the calling thread's current device where no architecture is named.
        self.enter(dev)?;
        let source = cstring(request.source)?;
        let name = cstring(request.name)?;
        // The client's headers, then the fallbacks it did not send (rocThrust's namespace
        // header: hiprtc does not search ROCm's include directory for it).
        let fallbacks = FALLBACK_HEADERS.iter().filter(|(n, _)| !request.headers.iter().any(|(h, _)| h == n));
        let headers: Vec<(&str, &str)> = request.headers.iter().copied().chain(fallbacks.copied()).collect();
        let header_sources: Vec<CString> = headers.iter().map(|(_, s)| cstring(s)).collect::<Result<_, _>>()?;
        let header_names: Vec<CString> = headers.iter().map(|(n, _)| cstring(n)).collect::<Result<_, _>>()?;
        let source_ptrs: Vec<*const c_char> = header_sources.iter().map(|s| s.as_ptr()).collect();
        let name_ptrs: Vec<*const c_char> = header_names.iter().map(|s| s.as_ptr()).collect();
        let mut prog: Program = std::ptr::null_mut();
        // SAFETY: every string outlives the call; the counts match the arrays.
        rtc("hiprtcCreateProgram", unsafe {
            (api.hiprtcCreateProgram)(&mut prog, source.as_ptr(), name.as_ptr(), source_ptrs.len() as c_int, source_ptrs.as_ptr(), name_ptrs.as_ptr())
        })?;
        let result = compile(api, prog, request, &arch);
        // SAFETY: created above; destroyed once.
        let _ = unsafe { (api.hiprtcDestroyProgram)(&mut prog) };
        result
    }
}

/// Bytes of the runtime's error log kept from one link.
const LINK_LOG_LEN: usize = 64 << 10;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_added_unless_named() {
        assert_eq!(options_for(&["-O3"], "gfx942"), ["-O3", "--offload-arch=gfx942"]);
        assert_eq!(options_for(&["--offload-arch=gfx90a"], "gfx942"), ["--offload-arch=gfx90a"]);
        assert_eq!(
            options_for(&["-I/site/cupy/include", "-I", "/opt/rocm/include", "-isystem/x", "-DN=1"], "gfx942"),
            ["-DN=1", "--offload-arch=gfx942"]
        );
    }
}
