//! hiprtc on HIP: the runtime's own `libhiprtc.so` (beside `libamdhip64.so`) compiles for the
//! device's `gcnArchName` (`--offload-arch=` added unless the client chose one). The result
//! is a code object `hipModuleLoadData` accepts.

use super::result::RtcProgram;
use super::HipBackend;
use crate::backend::{BackendError, DeviceIndex, LinkInput, RtcBackend, RtcOutput, RtcRequest, FALLBACK_HEADERS};
use std::ffi::{c_int, CString};

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

/// Compiles on a created program.
fn compile(prog: &RtcProgram<'_>, request: &RtcRequest<'_>, arch: &str) -> Result<RtcOutput, BackendError> {
    let exprs: Vec<CString> = request.name_expressions.iter().map(|e| cstring(e)).collect::<Result<_, _>>()?;
    for e in &exprs {
        prog.add_name_expression(e)?;
    }
    let options: Vec<CString> = options_for(&request.options, arch).iter().map(|o| cstring(o)).collect::<Result<_, _>>()?;
    let compiled = prog.compile(&options);
    let log = prog.log()?;
    let log = String::from_utf8_lossy(&log).trim_end_matches('\0').to_string();
    if compiled.is_err() {
        return Ok(RtcOutput { success: false, log, ..Default::default() });
    }
    let code = prog.code()?;
    let mut lowered_names = Vec::new();
    for e in &exprs {
        let lowered = prog.lowered_name(e)?.ok_or_else(|| BackendError::Unknown(format!("hiprtcGetLoweredName gave no name for {e:?}")))?;
        lowered_names.push(lowered);
    }
    Ok(RtcOutput { success: true, log, code, lowered_names })
}

impl RtcBackend for HipBackend {
    /// The loaded runtime's `hipLinkCreate` / `hipLinkAddData` / `hipLinkComplete` (inputs of
    /// every `hipJitInputType` it takes: LLVM bitcode from hiprtc's `-fgpu-rdc`, objects…);
    /// its error log goes into the result's log.
    fn rtc_link(&self, dev: DeviceIndex, inputs: &[LinkInput<'_>]) -> Result<RtcOutput, BackendError> {
        let api = &self.api;
        if api.hipLinkCreate.is_none() || api.hipLinkAddData.is_none() || api.hipLinkComplete.is_none() || api.hipLinkDestroy.is_none() {
            return Err(BackendError::NotSupported("the HIP runtime has no hipLink* functions".into()));
        }
        self.enter(dev)?;
        let mut state = api.link_create(LINK_LOG_LEN)?;
        let mut log = String::new();
        let mut linked = None;
        let mut added_all = true;
        for input in inputs {
            let name = CString::new(input.name).unwrap_or_default();
            if let Err(e) = state.add_data(input.kind as c_int, input.data, &name) {
                log.push_str(&format!("hip-remote: input `{}`: {}\n", input.name, BackendError::from(e)));
                added_all = false;
                break;
            }
        }
        if added_all {
            match state.complete() {
                Ok(Some(image)) => linked = Some(image),
                Ok(None) => log.push_str("hip-remote: hipLinkComplete returned no image\n"),
                Err(e) => log.push_str(&format!("hip-remote: {}\n", BackendError::from(e))),
            }
        }
        log.push_str(&state.error_log());
        drop(state);
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
        let prog = api.create_program(&source, &name, &header_sources, &header_names)?;
        compile(&prog, request, &arch)
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
