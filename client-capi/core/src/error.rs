//! What a failed call returns: the application's `hipError_t` and why.

use core::ffi::CStr;
use proto_core::Status;

/// `hipError_t`. ABI: a C enum whose values are all non-negative (passed as a 32-bit int).
/// The C names (`hipErrorInvalidValue`) live with the rest of the C ABI in `client-capi`.
#[repr(transparent)]
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct HipError(pub i32);

/// Typed constants from proto-core's one `hipError_t` table: `HipError::INVALID_VALUE` and
/// [`HipError::ALL`].
macro_rules! hip_error_constants {
    (errors { $( $konst:ident = $value:literal, $cname:ident, $message:literal; )* }
     aliases { $( $alias:ident = $target:ident, $acname:ident; )* }) => {
        impl HipError {
            $( #[doc = concat!("`", stringify!($cname), "` = ", stringify!($value))]
               pub const $konst: HipError = HipError($value); )*
            $( #[doc = concat!("`", stringify!($acname), "` (alias of `", stringify!($target), "`)")]
               pub const $alias: HipError = HipError::$target; )*

            /// Every distinct code of ROCm 7.2, in ascending order.
            pub const ALL: &'static [HipError] = &[ $( HipError($value), )* ];
        }
    };
}
proto_core::hip_error_table!(hip_error_constants);

impl HipError {
    /// Whether this is `hipSuccess`.
    #[inline]
    pub const fn is_success(self) -> bool {
        self.0 == 0
    }

    /// What ROCm's `hipGetErrorName` returns for this code (`"hipErrorUnknown"` for codes it does
    /// not know).
    pub fn name(self) -> &'static CStr {
        proto_core::hip_error::name(self.0)
    }

    /// What ROCm's `hipGetErrorString` returns for this code (`"unknown error"` for codes it does
    /// not describe).
    pub fn description(self) -> &'static CStr {
        proto_core::hip_error::message(self.0)
    }

    /// Whether this error poisons the device for the rest of the session, as HIP's runtime
    /// answers it to every later call of the process: a kernel's illegal memory access, or a
    /// kernel ended by the watchdog. The client then answers it itself to every later call,
    /// those it would otherwise answer without the worker (client-placed allocations, posted
    /// copies) included.
    pub const fn is_sticky(self) -> bool {
        matches!(self, HipError::ILLEGAL_ADDRESS | HipError::LAUNCH_TIME_OUT)
    }

    /// Whether ROCm's `hipGetErrorName` knows this code (what `hipDrvGetErrorName` reports as
    /// success rather than `hipErrorInvalidValue`).
    pub fn is_known(self) -> bool {
        proto_core::hip_error::info(self.0).is_some()
    }
}

impl core::fmt::Debug for HipError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}({})", self.name().to_str().unwrap_or("?"), self.0)
    }
}

impl core::fmt::Display for HipError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.description().to_str().unwrap_or("unknown error"))
    }
}

/// A failed exchange: the HIP error the application sees, plus why (for stderr / debugging).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallError {
    /// The code returned to the application.
    pub code: HipError,
    /// What happened.
    pub message: String,
}

impl CallError {
    /// A failure with `code`, explained by `message`.
    pub fn new(code: HipError, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }

    /// Whether this error ended the connection (its message begins with [`LOST`]).
    pub fn is_lost(&self) -> bool {
        self.code == HipError::NOT_INITIALIZED && self.message.starts_with(LOST)
    }
}

/// How every error that ends the connection begins (the driver then fails every call).
pub const LOST: &str = "connection to hip-worker lost";

/// Maps a worker status to the application's `hipError_t`. HIP codes pass through verbatim;
/// protocol failures become the nearest HIP code.
pub fn status_to_hip(status: Status) -> HipError {
    match status {
        s if (0..10_000).contains(&s.0) => HipError(s.0),
        Status::UNSUPPORTED_VERSION
        | Status::HELLO_REQUIRED
        | Status::AUTH_FAILED
        | Status::AUTH_REQUIRED
        | Status::TOO_MANY_CONNECTIONS
        | Status::SESSION_NOT_FOUND
        | Status::SHUTTING_DOWN => HipError::NOT_INITIALIZED,
        Status::QUOTA_EXCEEDED => HipError::OUT_OF_MEMORY,
        Status::UNKNOWN_OPCODE => HipError::NOT_SUPPORTED,
        _ => HipError::INVALID_VALUE,
    }
}

/// A refused handshake whose cause is a protocol version neither side shares, said with both
/// sides' versions and what to do; any other error unchanged. Either the worker could parse
/// HELLO and answered `UnsupportedVersion` (its message names its release and protocols), or
/// its reply's frame header carries a protocol this library cannot read (then only that
/// number is known: the transport reports `unsupported protocol version N`). `client_name`
/// names this side (`client libamdhip64`, `hip-remote ping`).
pub fn version_mismatch(e: CallError, worker: &str, client_name: &str) -> CallError {
    const UNREADABLE: &str = "unsupported protocol version ";
    let (min, max) = (proto_core::header::MIN_PROTOCOL_VERSION, proto_core::PROTOCOL_VERSION);
    let client = format!("{client_name} (hip-remote {}) speaks protocol {min}..={max}", hip_remote_build_info::VERSION);
    let worker_side = if e.message.contains("worker hip-worker ") && e.message.contains(" speaks protocol ") {
        // The worker's own words, which name its release.
        e.message.rsplit_once("worker hip-worker ").map(|(_, rest)| format!("worker hip-worker {rest}"))
    } else {
        e.message.split_once(UNREADABLE).and_then(|(_, rest)| rest.split(|c: char| !c.is_ascii_digit()).next().filter(|v| !v.is_empty())).map(
            |version| format!("worker speaks protocol {version} (its release is unknown: its refusal is in a frame format this client cannot read)"),
        )
    };
    match worker_side {
        Some(worker_side) => CallError::new(
            HipError::NOT_INITIALIZED,
            format!(
                "version mismatch with the hip-worker at {worker}: {client}, {worker_side}: upgrade the older side (the client library or hip-worker) so that both speak one protocol"
            ),
        ),
        None => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_table_matches_rocm() {
        assert_eq!(HipError::NOT_SUPPORTED.0, 801);
        assert_eq!(HipError::NOT_SUPPORTED.name(), c"hipErrorNotSupported");
        assert_eq!(HipError::NOT_SUPPORTED.description(), c"operation not supported");
        assert_eq!(HipError(12345).name(), c"hipErrorUnknown");
        assert!(!HipError(12345).is_known() && HipError::UNKNOWN.is_known());
        assert!(HipError::ALL.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn worker_statuses_map_to_the_nearest_hip_code() {
        assert_eq!(status_to_hip(Status(1)), HipError::INVALID_VALUE);
        assert_eq!(status_to_hip(Status(801)), HipError::NOT_SUPPORTED);
        assert_eq!(status_to_hip(Status::AUTH_FAILED), HipError::NOT_INITIALIZED);
        assert_eq!(status_to_hip(Status::QUOTA_EXCEEDED), HipError::OUT_OF_MEMORY);
        assert_eq!(status_to_hip(Status::UNKNOWN_OPCODE), HipError::NOT_SUPPORTED);
    }
}
