//! `hipLink*` on the host backend: relocatable objects from this backend's hiprtc
//! (`-fgpu-rdc`) linked with the worker's C++ toolchain into one host module.
//!
//! Each object's constructor hands its kernels and globals to `hip_remote_rdc_add` (see
//! `generate` in the parent); the linked module's stub defines that function, collects every
//! object's entries and, from a later constructor (`.init_array` priorities 200 < 300), fills
//! the one `hip_remote_host_module_v1` descriptor. `__device__` functions and variables
//! declared `extern` in one object and defined in another resolve as ordinary C++ symbols;
//! a missing or duplicate definition is the linker's error, in the log. The result is
//! validated by loading it, as a compile's is.

use std::fmt::Write as _;

use super::{
    clean_log, compiler_flags, failure, read_bounded, run_compiler, write_file, CompileSlot, CompilerStatus, TempDir, BASE_FLAGS, CXX_ENV,
    DEFAULT_CXX, HOST_MODULE_H, MAX_CODE_LEN, PRELUDE, RDC_ADD_SYMBOL, STUB_HEADERS,
};
use crate::backend::host::module::{HostModule, ModuleLimits};
use crate::backend::{BackendError, LinkInput, RtcOutput};

/// `ET_REL`: the ELF type of a relocatable object.
const ELF_RELOCATABLE: u16 = 1;

/// Whether `data` is a relocatable ELF object (what `-fgpu-rdc` compiles produce here).
fn is_relocatable_object(data: &[u8]) -> bool {
    data.len() > 18 && data.starts_with(b"\x7fELF") && u16::from_le_bytes([data[16], data[17]]) == ELF_RELOCATABLE
}

/// The stub linked with the objects: the descriptor, `hip_remote_rdc_add`, and the
/// constructor that builds the tables once every object registered.
fn stub_source() -> String {
    let mut s = String::new();
    s.push_str("#include <vector>\nnamespace {\n");
    s.push_str("std::vector<::__hip_remote::candidate>& all_candidates() {\n  static std::vector<::__hip_remote::candidate> all;\n  return all;\n}\n}  // namespace\n");
    s.push_str(
        "extern \"C\" {\nhip_remote_host_module hip_remote_host_module_v1 = {HIP_REMOTE_HOST_MODULE_MAGIC, \
         HIP_REMOTE_HOST_MODULE_VERSION, 0, nullptr, 0, nullptr};\n",
    );
    let _ = writeln!(
        s,
        "void {RDC_ADD_SYMBOL}(const void* candidates, unsigned long count) {{\n  \
         const auto* c = static_cast<const ::__hip_remote::candidate*>(candidates);\n  \
         all_candidates().insert(all_candidates().end(), c, c + count);\n}}\n}}"
    );
    s.push_str(
        "namespace {\n__attribute__((constructor(300))) void __hip_remote_link_init() {\n  \
         auto& all = all_candidates();\n  \
         static std::vector<hip_remote_kernel> kernels(all.size() + 1);\n  \
         static std::vector<hip_remote_global> globals(all.size() + 1);\n  \
         ::__hip_remote::build(all.data(), all.size(), kernels.data(), globals.data(), &hip_remote_host_module_v1, nullptr);\n  \
         hip_remote_host_module_v1.kernels = kernels.data();\n  \
         hip_remote_host_module_v1.globals = globals.data();\n}\n}  // namespace\n",
    );
    s
}

/// Links `inputs` into one host module.
pub(in crate::backend::host) fn link(inputs: &[LinkInput<'_>], limits: &ModuleLimits) -> Result<RtcOutput, BackendError> {
    if inputs.is_empty() {
        return Ok(failure("hip-remote: nothing to link: no input was added\n".into()));
    }
    let mut refusals = String::new();
    for input in inputs {
        if !is_relocatable_object(input.data) {
            let _ = writeln!(
                refusals,
                "hip-remote: input `{}` is not a relocatable object: the host backend links the \
                 objects its hiprtc produces with -fgpu-rdc",
                input.name
            );
        }
    }
    if !refusals.is_empty() {
        return Ok(failure(refusals));
    }

    let _slot = CompileSlot::acquire();
    let dir = TempDir::create()?;
    let io = |e: std::io::Error| BackendError::Unknown(format!("link scratch files: {}", crate::sandbox::confine::explain_limit(e)));
    write_file(&dir.path.join("sys/hip_remote/host_module.h"), HOST_MODULE_H).map_err(io)?;
    write_file(&dir.path.join("sys/hip_remote_prelude.hpp"), PRELUDE).map_err(io)?;
    for (stub, text) in STUB_HEADERS {
        write_file(&dir.path.join("sys").join(stub), text).map_err(io)?;
    }
    // The prelude includes some of the client's headers (AMD's device functions).
    for (header, text) in super::CLIENT_HEADERS {
        write_file(&dir.path.join("sys").join(header), text).map_err(io)?;
    }
    write_file(&dir.path.join("__hip_remote_link.cpp"), &stub_source()).map_err(io)?;
    let mut objects = Vec::with_capacity(inputs.len());
    for (i, input) in inputs.iter().enumerate() {
        let path = dir.path.join(format!("input{i}.o"));
        std::fs::write(&path, input.data).map_err(io)?;
        objects.push(path);
    }

    let cxx = std::env::var(CXX_ENV).unwrap_or_else(|_| DEFAULT_CXX.to_string());
    let output = dir.path.join("linked.so");
    let mut command = std::process::Command::new(&cxx);
    command
        .current_dir(&dir.path)
        .args(compiler_flags(&cxx, BASE_FLAGS))
        .arg("-I")
        .arg(dir.path.join("sys"))
        .arg("-include")
        .arg(dir.path.join("sys/hip_remote_prelude.hpp"))
        .arg("-o")
        .arg(&output)
        .arg("__hip_remote_link.cpp")
        .args(&objects)
        .arg("-ldl");
    let mut log = String::new();
    let (status, linker_log) = match run_compiler(command, &dir.path.join("linker.log")) {
        Ok(result) => result,
        Err(e) => return Ok(failure(format!("hip-remote: cannot run the C++ toolchain `{cxx}` ({e}); set {CXX_ENV} to choose it\n"))),
    };
    log.push_str(&linker_log);
    match status {
        CompilerStatus::TimedOut => {
            let _ = writeln!(log, "hip-remote: the linker was stopped after {} s", super::compile_timeout().as_secs());
            return Ok(failure(log));
        }
        CompilerStatus::Failed => {
            super::note_file_limit(&mut log);
            return Ok(failure(log));
        }
        CompilerStatus::Succeeded => {}
    }
    let code = match read_bounded(&output, MAX_CODE_LEN) {
        Ok(Some(code)) => code,
        Ok(None) => {
            let _ = writeln!(log, "hip-remote: the linked module exceeds {MAX_CODE_LEN} bytes");
            return Ok(failure(log));
        }
        Err(e) => return Err(io(e)),
    };
    let names: Vec<&str> = inputs.iter().map(|i| i.name).collect();
    let origin = format!("linked module of {}", names.join(", "));
    let code = match HostModule::load_path(&output, &origin, limits) {
        Ok(module) => super::with_kernel_note(code, &module),
        Err(e) => {
            let _ = writeln!(log, "hip-remote: the linked module does not load: {e}");
            return Ok(failure(log));
        }
    };
    Ok(RtcOutput { success: true, log: clean_log(log), code, lowered_names: Vec::new() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_relocatable_objects_link() {
        let mut elf = vec![0u8; 64];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[16] = 1;
        assert!(is_relocatable_object(&elf));
        elf[16] = 3; // ET_DYN: a shared object
        assert!(!is_relocatable_object(&elf));
        assert!(!is_relocatable_object(b"\x7fELF"));
        assert!(!is_relocatable_object(b".version 8.0\n.target sm_90\n"));
    }
}
