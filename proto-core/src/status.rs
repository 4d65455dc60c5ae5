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

            /// A short name for logs (`None` for codes neither table knows): a `hipError_t`'s
            /// C name, or a protocol/session code's.
            pub fn name(self) -> Option<&'static str> {
                match self.0 {
                    $( $value => Some($text), )*
                    hip => crate::hip_error::info(hip).and_then(|e| e.name.to_str().ok()),
                }
            }
        }
    };
}

statuses! {
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
    /// The connection is not authenticated yet: only HELLO and AUTHENTICATE, small and without bulk, are accepted.
    AUTH_REQUIRED = 10104, "AuthRequired";
    /// The worker serves its most connections already (in all, or from this address).
    TOO_MANY_CONNECTIONS = 10105, "TooManyConnections";
}

/// `Status::INVALID_VALUE` and friends: every `hipError_t` of [`crate::hip_error`]'s table.
macro_rules! hip_statuses {
    (errors { $( $konst:ident = $value:literal, $cname:ident, $message:literal; )* }
     aliases { $( $alias:ident = $target:ident, $acname:ident; )* }) => {
        impl Status {
            $( #[doc = concat!("`", stringify!($cname), "`.")] pub const $konst: Self = Self($value); )*
            $( #[doc = concat!("`", stringify!($acname), "`.")] pub const $alias: Self = Self::$target; )*
        }
    };
}
crate::hip_error_table!(hip_statuses);

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
