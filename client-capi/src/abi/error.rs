//! `hipError_t` and `hiprtcResult`: typed views of proto-core's one table
//! (`proto_core::hip_error`), with the names and messages HIP's error calls return.

use super::*;

// ------------------------------------------------------------------------------------------------
// hipError_t
// ------------------------------------------------------------------------------------------------

/// `hipError_t` (defined with the client session, whose calls return it).
pub use client_core::HipError;

/// The C name of [`HipError`].
pub type hipError_t = HipError;

/// The C names of proto-core's one `hipError_t` table (`hipErrorInvalidValue`); the typed
/// constants (`HipError::INVALID_VALUE`) are `client_core`'s.
macro_rules! hip_error_c_names {
    (errors { $( $konst:ident = $value:literal, $cname:ident, $message:literal; )* }
     aliases { $( $alias:ident = $target:ident, $acname:ident; )* }) => {
        $( pub const $cname: hipError_t = HipError::$konst; )*
        $( pub const $acname: hipError_t = HipError::$alias; )*
    };
}
proto_core::hip_error_table!(hip_error_c_names);

// ------------------------------------------------------------------------------------------------
// hiprtcResult
// ------------------------------------------------------------------------------------------------

/// `hiprtcResult`.
#[repr(transparent)]
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Debug)]
pub struct HiprtcResult(pub i32);

/// The C name of [`HiprtcResult`].
pub type hiprtcResult = HiprtcResult;

/// Typed constants from proto-core's one `hiprtcResult` table (`HiprtcResult::ERROR_LINKING`,
/// `HIPRTC_ERROR_LINKING`).
macro_rules! hiprtc_result_constants {
    ($( $konst:ident = $value:literal, $cname:ident; )*) => {
        impl HiprtcResult {
            $( #[doc = concat!("`", stringify!($cname), "`")] pub const $konst: HiprtcResult = HiprtcResult($value); )*
        }
        $( pub const $cname: hiprtcResult = HiprtcResult::$konst; )*
    };
}
proto_core::hiprtc_result_table!(hiprtc_result_constants);

impl HiprtcResult {
    /// What ROCm's `hiprtcGetErrorString` returns: the enumerator's own name, or `None` (a null
    /// pointer in C) for a value that is not a `hiprtcResult`.
    pub fn name(self) -> Option<&'static CStr> {
        proto_core::hip_error::rtc_name(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_tables_match_rocm() {
        assert_eq!(hipErrorNotSupported.0, 801);
        assert_eq!(HipError::NOT_SUPPORTED.name(), c"hipErrorNotSupported");
        assert_eq!(HipError::NOT_SUPPORTED.description(), c"operation not supported");
        assert_eq!(hipErrorMemoryAllocation.name(), c"hipErrorOutOfMemory");
        assert_eq!(hipSuccess.description(), c"no error");
        assert_eq!(hipErrorTbd.name(), c"hipErrorTbd");
        assert_eq!(hipErrorTbd.description(), c"unknown error");
        assert_eq!(HipError(12345).name(), c"hipErrorUnknown");
        assert!(!HipError(12345).is_known() && HipError::UNKNOWN.is_known());
        assert!(HipError::ALL.windows(2).all(|w| w[0] < w[1]));
        for e in HipError::ALL {
            assert!(e.is_known(), "{e:?}");
        }
    }

    #[test]
    fn hiprtc_strings() {
        assert_eq!(HIPRTC_ERROR_LINKING.0, 100);
        assert_eq!(HIPRTC_ERROR_COMPILATION.name(), Some(c"HIPRTC_ERROR_COMPILATION"));
        assert_eq!(HiprtcResult(42).name(), None);
    }
}
