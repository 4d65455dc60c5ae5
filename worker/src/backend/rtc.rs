//! Runtime compilation (hiprtc), run on the worker for its device.

use super::{BackendError, DeviceIndex};

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

/// The runtime-compilation family (`hiprtcCompileProgram`).
pub trait RtcBackend {
    /// `hiprtcCompileProgram` for `dev`, run on the worker. The output's `code` is an image
    /// [`ModuleBackend::module_load`] accepts.
    ///
    /// [`ModuleBackend::module_load`]: crate::backend::ModuleBackend::module_load
    fn rtc_compile(&self, dev: DeviceIndex, request: &RtcRequest<'_>) -> Result<RtcOutput, BackendError>;
}
