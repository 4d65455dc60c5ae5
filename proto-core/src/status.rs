//! Status codes carried by error replies and deferred errors.
//!
//! Numbered blocks, never reused (rustls-ffi style):
//! - `0..=9999`: HIP's own `hipError_t` values, verbatim (the ABI fixes them), so a worker's
//!   failure reaches the application as the exact code a local runtime would return;
//! - `10000..=10099`: protocol errors (malformed frames, versions, limits);
//! - `10100..=10199`: session errors (authentication, resume, quotas).

use core::fmt;

/// A wire status: `hipError_t` values or protocol/session codes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Status(pub i32);

macro_rules! statuses {
    ($( $(#[$m:meta])* $name:ident = $value:literal, $text:literal; )*) => {
        impl Status {
            $( $(#[$m])* pub const $name: Self = Self($value); )*

            /// A short name for logs (`None` for codes this table does not know).
            pub const fn name(self) -> Option<&'static str> {
                match self.0 {
                    $( $value => Some($text), )*
                    _ => None,
                }
            }
        }
    };
}

statuses! {
    /// hipSuccess.
    SUCCESS = 0, "hipSuccess";
    /// hipErrorInvalidValue.
    INVALID_VALUE = 1, "hipErrorInvalidValue";
    /// hipErrorOutOfMemory.
    OUT_OF_MEMORY = 2, "hipErrorOutOfMemory";
    /// hipErrorNotInitialized.
    NOT_INITIALIZED = 3, "hipErrorNotInitialized";
    /// hipErrorInvalidPitchValue.
    INVALID_PITCH_VALUE = 12, "hipErrorInvalidPitchValue";
    /// hipErrorInvalidDevicePointer.
    INVALID_DEVICE_POINTER = 17, "hipErrorInvalidDevicePointer";
    /// hipErrorInvalidMemcpyDirection.
    INVALID_MEMCPY_DIRECTION = 21, "hipErrorInvalidMemcpyDirection";
    /// hipErrorNoDevice.
    NO_DEVICE = 100, "hipErrorNoDevice";
    /// hipErrorInvalidDevice.
    INVALID_DEVICE = 101, "hipErrorInvalidDevice";
    /// hipErrorInvalidImage.
    INVALID_IMAGE = 200, "hipErrorInvalidImage";
    /// hipErrorNoBinaryForGpu.
    NO_BINARY_FOR_GPU = 209, "hipErrorNoBinaryForGpu";
    /// hipErrorUnsupportedLimit.
    UNSUPPORTED_LIMIT = 215, "hipErrorUnsupportedLimit";
    /// hipErrorInvalidKernelFile.
    INVALID_KERNEL_FILE = 218, "hipErrorInvalidKernelFile";
    /// hipErrorSharedObjectInitFailed.
    SHARED_OBJECT_INIT_FAILED = 303, "hipErrorSharedObjectInitFailed";
    /// hipErrorInvalidHandle / hipErrorInvalidResourceHandle.
    INVALID_HANDLE = 400, "hipErrorInvalidHandle";
    /// hipErrorNotFound.
    NOT_FOUND = 500, "hipErrorNotFound";
    /// hipErrorNotReady.
    NOT_READY = 600, "hipErrorNotReady";
    /// hipErrorIllegalAddress.
    ILLEGAL_ADDRESS = 700, "hipErrorIllegalAddress";
    /// hipErrorLaunchOutOfResources.
    LAUNCH_OUT_OF_RESOURCES = 701, "hipErrorLaunchOutOfResources";
    /// hipErrorLaunchFailure.
    LAUNCH_FAILURE = 719, "hipErrorLaunchFailure";
    /// hipErrorNotSupported.
    NOT_SUPPORTED = 801, "hipErrorNotSupported";
    /// hipErrorUnknown.
    UNKNOWN = 999, "hipErrorUnknown";

    /// The frame could not be decoded (the message says why).
    MALFORMED_FRAME = 10000, "MalformedFrame";
    /// No protocol version in common (HELLO's range does not include the worker's).
    UNSUPPORTED_VERSION = 10001, "UnsupportedVersion";
    /// The opcode is not in the worker's table.
    UNKNOWN_OPCODE = 10002, "UnknownOpcode";
    /// A length or count exceeds a limit.
    TOO_LARGE = 10003, "TooLarge";
    /// The first request of a connection must be HELLO.
    HELLO_REQUIRED = 10004, "HelloRequired";

    /// The worker requires authentication and none (or a wrong one) was given.
    AUTH_FAILED = 10100, "AuthFailed";
    /// The session to resume does not exist (any more).
    SESSION_NOT_FOUND = 10101, "SessionNotFound";
    /// A per-session quota (allocations, handles, memory) is exhausted.
    QUOTA_EXCEEDED = 10102, "QuotaExceeded";
    /// The worker is shutting down.
    SHUTTING_DOWN = 10103, "ShuttingDown";
}

impl Status {
    /// Whether this is success.
    pub const fn is_success(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Debug for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name}({})", self.0),
            None => write!(f, "Status({})", self.0),
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl<'a> crate::WireField<'a> for Status {
    const MAX_LEN: usize = 4;
    fn decode(cx: &mut crate::field::DecodeCx<'a>, what: &'static str) -> Result<Self, crate::DecodeError> {
        Ok(Self(i32::decode(cx, what)?))
    }
    fn encode(&self, cx: &mut crate::field::EncodeCx<'_, 'a>, what: &'static str) -> Result<(), crate::EncodeError> {
        self.0.encode(cx, what)
    }
}
