//! hiprtc: kernel source compiled by the worker for its own device.

use crate::field::{Bulk, Name, StrList, Text};

message! {
    /// `hiprtcCompileProgram` with everything `hiprtcCreateProgram` collected.
    pub struct RtcCompile<'a> {
        /// Device to compile for: the client's current device (its architecture).
        pub device: u32,
        /// Program name (as in diagnostics).
        pub name: Name<'a>,
        /// Kernel source.
        pub source: Text<'a>,
        /// Names of the embedded headers.
        pub header_names: StrList<'a>,
        /// Contents of the embedded headers, same order as `header_names`.
        pub header_sources: StrList<'a>,
        /// Compiler options (`-O3`, `--offload-arch=…`).
        pub options: StrList<'a>,
        /// Name expressions registered with `hiprtcAddNameExpression`.
        pub name_expressions: StrList<'a>,
    }
}

message! {
    /// Compilation outcome; a failed compile is a normal answer with `success == false` and
    /// the compiler's log, as `hiprtcCompileProgram` reports it.
    pub struct RtcCompiled<'a> {
        /// Whether code was produced.
        pub success: bool,
        /// The compiler's log, verbatim.
        pub log: Text<'a>,
        /// Lowered (mangled) names, one per name expression.
        pub lowered_names: StrList<'a>,
        /// The code object, as the frame's bulk section.
        pub code: Bulk<'a>,
    }
}
