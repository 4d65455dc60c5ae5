//! Runtime compilation (hiprtc), run on the worker for its device.

use super::{BackendError, DeviceIndex};

/// Headers every backend serves by name to hiprtc programs, unless the client sent a header
/// of that name: what real HIP installations carry that the worker's compilers lack.
pub const FALLBACK_HEADERS: &[(&str, &str)] =
    &[("thrust/detail/config/namespace.h", include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/include/hip_remote/rtc/thrust_namespace.h")))];

/// A `hiprtcCompileProgram` request: everything `hiprtcCreateProgram` and the options carry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RtcRequest<'a> {
    /// Program name, as in diagnostics.
    pub name: &'a str,
    /// Kernel source.
    pub source: &'a str,
    /// Embedded headers: `(include name, contents)`.
    pub headers: Vec<(&'a str, &'a str)>,
    /// Compiler options.
    pub options: Vec<&'a str>,
    /// `hiprtcAddNameExpression` strings, in order.
    pub name_expressions: Vec<&'a str>,
}

/// What a compile produced. A failed compile is `Ok` with `success == false` and the
/// compiler's log, as `hiprtcCompileProgram` reports it; `Err` is reserved for the worker
/// failing to run the compile at all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RtcOutput {
    /// Whether `code` holds a loadable image.
    pub success: bool,
    /// Compiler log, verbatim (plus the worker's own notes).
    pub log: String,
    /// The image, for [`ModuleBackend::module_load`] (the host backend: a host module).
    ///
    /// [`ModuleBackend::module_load`]: crate::backend::ModuleBackend::module_load
    pub code: Vec<u8>,
    /// Lowered (mangled) name per name expression, same order.
    pub lowered_names: Vec<String>,
}

/// One input of a link (`hipLinkAddData` / `hipLinkAddFile`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkInput<'a> {
    /// `hipJitInputType` ([`jit_input`]).
    pub kind: u32,
    /// Its name, for the log.
    pub name: &'a str,
    /// Its bytes.
    pub data: &'a [u8],
}

/// `hipJitInputType` values.
pub mod jit_input {
    /// A cubin.
    pub const CUBIN: u32 = 0;
    /// PTX text.
    pub const PTX: u32 = 1;
    /// A fat binary.
    pub const FATBINARY: u32 = 2;
    /// A relocatable object.
    pub const OBJECT: u32 = 3;
    /// An archive of objects.
    pub const LIBRARY: u32 = 4;
    /// LLVM bitcode (AMD).
    pub const LLVM_BITCODE: u32 = 100;
    /// Bundled LLVM bitcode (AMD).
    pub const LLVM_BUNDLED_BITCODE: u32 = 101;
    /// An archive of bundled LLVM bitcode (AMD).
    pub const LLVM_ARCHIVES_OF_BUNDLED_BITCODE: u32 = 102;

    /// Whether `kind` is a `hipJitInputType` at all.
    pub fn is_known(kind: u32) -> bool {
        kind <= LIBRARY || (LLVM_BITCODE..=LLVM_ARCHIVES_OF_BUNDLED_BITCODE).contains(&kind)
    }
}

/// The runtime-compilation family (`hiprtcCompileProgram`) and the linker (`hipLink*`).
pub trait RtcBackend {
    /// `hiprtcCompileProgram` for `dev`, run on the worker. The output's `code` is an image
    /// [`ModuleBackend::module_load`] accepts.
    ///
    /// [`ModuleBackend::module_load`]: crate::backend::ModuleBackend::module_load
    fn rtc_compile(&self, dev: DeviceIndex, request: &RtcRequest<'_>) -> Result<RtcOutput, BackendError>;

    /// `hipLinkCreate` … `hipLinkComplete` for `dev`: the inputs linked into one image that
    /// [`ModuleBackend::module_load`] accepts. A failed link (inputs of a kind the backend
    /// cannot link, unresolved symbols) is `Ok` with `success == false` and the log.
    ///
    /// [`ModuleBackend::module_load`]: crate::backend::ModuleBackend::module_load
    fn rtc_link(&self, dev: DeviceIndex, inputs: &[LinkInput<'_>]) -> Result<RtcOutput, BackendError>;
}
