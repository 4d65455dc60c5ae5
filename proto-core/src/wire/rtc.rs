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
    /// A piece of a program's text for [`RtcCompileStaged`], in the bulk section: appended to
    /// the session's staged part `part` (0: the source; `1 + i`: the contents of header `i`).
    /// For programs whose text exceeds what one `RtcCompile` carries (`MAX_TEXT_LEN` for the
    /// source, `MAX_RTC_HEADER_BYTES` for the headers); all parts together are bounded by
    /// `MAX_RTC_STAGED_BYTES`.
    pub struct RtcStage<'a> {
        /// Which text: 0 is the source, `1 + i` header `i` (at most `MAX_RTC_HEADERS`).
        pub part: u32,
        /// The bytes (UTF-8 once the part is whole).
        pub text: Bulk<'a>,
    }
}

message! {
    /// [`RtcCompile`] of the text staged by [`RtcStage`] (then cleared, whatever the outcome):
    /// the source is part 0, header `i`'s contents part `1 + i`, one per name in
    /// `header_names`. Answered by [`RtcCompiled`].
    pub struct RtcCompileStaged<'a> {
        /// Device to compile for: the client's current device (its architecture).
        pub device: u32,
        /// Program name (as in diagnostics).
        pub name: Name<'a>,
        /// Names of the embedded headers (their contents are the staged parts `1..`).
        pub header_names: StrList<'a>,
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
