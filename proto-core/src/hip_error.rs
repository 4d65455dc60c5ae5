//! The one table of `hipError_t` and `hiprtcResult`: value, C name and message, as ROCm 7.2
//! defines them (`hip_runtime_api.h`, `hiprtc.h`; messages from ROCm's `hip_error.cpp`).
//!
//! Every crate builds its view from here: [`code`] (plain `i32` values, the worker's
//! `hip_code`), [`HIP_ERRORS`] and [`name`]/[`message`] (the client's `hipGetErrorName` /
//! `hipGetErrorString`), [`crate::Status`]'s names. Crates that want typed constants of their
//! own (`HipError::INVALID_VALUE`, `hipErrorInvalidValue`) pass a macro of theirs to
//! [`hip_error_table!`] / [`hiprtc_result_table!`], which calls it with the whole table — so no
//! value or name is written twice.

use core::ffi::CStr;

/// Calls `$callback! { errors { KONST = value, cName, "message"; … } aliases { ALIAS = KONST,
/// cName; … } }` with every distinct `hipError_t` of ROCm 7.2 in ascending order, then the
/// aliases (names that share a value).
#[macro_export]
macro_rules! hip_error_table {
    ($callback:ident) => {
        $callback! {
            errors {
                SUCCESS = 0, hipSuccess, "no error";
                INVALID_VALUE = 1, hipErrorInvalidValue, "invalid argument";
                OUT_OF_MEMORY = 2, hipErrorOutOfMemory, "out of memory";
                NOT_INITIALIZED = 3, hipErrorNotInitialized, "initialization error";
                DEINITIALIZED = 4, hipErrorDeinitialized, "driver shutting down";
                PROFILER_DISABLED = 5, hipErrorProfilerDisabled, "profiler disabled while using external profiling tool";
                PROFILER_NOT_INITIALIZED = 6, hipErrorProfilerNotInitialized, "profiler is not initialized";
                PROFILER_ALREADY_STARTED = 7, hipErrorProfilerAlreadyStarted, "profiler already started";
                PROFILER_ALREADY_STOPPED = 8, hipErrorProfilerAlreadyStopped, "profiler already stopped";
                INVALID_CONFIGURATION = 9, hipErrorInvalidConfiguration, "invalid configuration argument";
                INVALID_PITCH_VALUE = 12, hipErrorInvalidPitchValue, "invalid pitch argument";
                INVALID_SYMBOL = 13, hipErrorInvalidSymbol, "invalid device symbol";
                INVALID_DEVICE_POINTER = 17, hipErrorInvalidDevicePointer, "invalid device pointer";
                INVALID_MEMCPY_DIRECTION = 21, hipErrorInvalidMemcpyDirection, "invalid copy direction for memcpy";
                INSUFFICIENT_DRIVER = 35, hipErrorInsufficientDriver, "driver version is insufficient for runtime version";
                MISSING_CONFIGURATION = 52, hipErrorMissingConfiguration, "__global__ function call is not configured";
                PRIOR_LAUNCH_FAILURE = 53, hipErrorPriorLaunchFailure, "unspecified launch failure in prior launch";
                INVALID_DEVICE_FUNCTION = 98, hipErrorInvalidDeviceFunction, "invalid device function";
                NO_DEVICE = 100, hipErrorNoDevice, "no ROCm-capable device is detected";
                INVALID_DEVICE = 101, hipErrorInvalidDevice, "invalid device ordinal";
                INVALID_IMAGE = 200, hipErrorInvalidImage, "device kernel image is invalid";
                INVALID_CONTEXT = 201, hipErrorInvalidContext, "invalid device context";
                CONTEXT_ALREADY_CURRENT = 202, hipErrorContextAlreadyCurrent, "context is already current context";
                MAP_FAILED = 205, hipErrorMapFailed, "mapping of buffer object failed";
                UNMAP_FAILED = 206, hipErrorUnmapFailed, "unmapping of buffer object failed";
                ARRAY_IS_MAPPED = 207, hipErrorArrayIsMapped, "array is mapped";
                ALREADY_MAPPED = 208, hipErrorAlreadyMapped, "resource already mapped";
                NO_BINARY_FOR_GPU = 209, hipErrorNoBinaryForGpu, "no kernel image is available for execution on the device";
                ALREADY_ACQUIRED = 210, hipErrorAlreadyAcquired, "resource already acquired";
                NOT_MAPPED = 211, hipErrorNotMapped, "resource not mapped";
                NOT_MAPPED_AS_ARRAY = 212, hipErrorNotMappedAsArray, "resource not mapped as array";
                NOT_MAPPED_AS_POINTER = 213, hipErrorNotMappedAsPointer, "resource not mapped as pointer";
                ECC_NOT_CORRECTABLE = 214, hipErrorECCNotCorrectable, "uncorrectable ECC error encountered";
                UNSUPPORTED_LIMIT = 215, hipErrorUnsupportedLimit, "limit is not supported on this architecture";
                CONTEXT_ALREADY_IN_USE = 216, hipErrorContextAlreadyInUse, "exclusive-thread device already in use by a different thread";
                PEER_ACCESS_UNSUPPORTED = 217, hipErrorPeerAccessUnsupported, "peer access is not supported between these two devices";
                INVALID_KERNEL_FILE = 218, hipErrorInvalidKernelFile, "invalid kernel file";
                INVALID_GRAPHICS_CONTEXT = 219, hipErrorInvalidGraphicsContext, "invalid OpenGL or DirectX context";
                INVALID_SOURCE = 300, hipErrorInvalidSource, "device kernel image is invalid";
                FILE_NOT_FOUND = 301, hipErrorFileNotFound, "file not found";
                SHARED_OBJECT_SYMBOL_NOT_FOUND = 302, hipErrorSharedObjectSymbolNotFound, "shared object symbol not found";
                SHARED_OBJECT_INIT_FAILED = 303, hipErrorSharedObjectInitFailed, "shared object initialization failed";
                OPERATING_SYSTEM = 304, hipErrorOperatingSystem, "OS call failed or operation not supported on this OS";
                INVALID_HANDLE = 400, hipErrorInvalidHandle, "invalid resource handle";
                ILLEGAL_STATE = 401, hipErrorIllegalState, "the operation cannot be performed in the present state";
                NOT_FOUND = 500, hipErrorNotFound, "named symbol not found";
                NOT_READY = 600, hipErrorNotReady, "device not ready";
                ILLEGAL_ADDRESS = 700, hipErrorIllegalAddress, "an illegal memory access was encountered";
                LAUNCH_OUT_OF_RESOURCES = 701, hipErrorLaunchOutOfResources, "too many resources requested for launch";
                LAUNCH_TIME_OUT = 702, hipErrorLaunchTimeOut, "the launch timed out and was terminated";
                PEER_ACCESS_ALREADY_ENABLED = 704, hipErrorPeerAccessAlreadyEnabled, "peer access is already enabled";
                PEER_ACCESS_NOT_ENABLED = 705, hipErrorPeerAccessNotEnabled, "peer access has not been enabled";
                SET_ON_ACTIVE_PROCESS = 708, hipErrorSetOnActiveProcess, "cannot set while device is active in this process";
                CONTEXT_IS_DESTROYED = 709, hipErrorContextIsDestroyed, "context is destroyed";
                ASSERT = 710, hipErrorAssert, "device-side assert triggered";
                HOST_MEMORY_ALREADY_REGISTERED = 712, hipErrorHostMemoryAlreadyRegistered, "part or all of the requested memory range is already mapped";
                HOST_MEMORY_NOT_REGISTERED = 713, hipErrorHostMemoryNotRegistered, "pointer does not correspond to a registered memory region";
                LAUNCH_FAILURE = 719, hipErrorLaunchFailure, "unspecified launch failure";
                COOPERATIVE_LAUNCH_TOO_LARGE = 720, hipErrorCooperativeLaunchTooLarge, "too many blocks in cooperative launch";
                NOT_SUPPORTED = 801, hipErrorNotSupported, "operation not supported";
                STREAM_CAPTURE_UNSUPPORTED = 900, hipErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing";
                STREAM_CAPTURE_INVALIDATED = 901, hipErrorStreamCaptureInvalidated, "operation failed due to a previous error during capture";
                STREAM_CAPTURE_MERGE = 902, hipErrorStreamCaptureMerge, "operation would result in a merge of separate capture sequences";
                STREAM_CAPTURE_UNMATCHED = 903, hipErrorStreamCaptureUnmatched, "capture was not ended in the same stream as it began";
                STREAM_CAPTURE_UNJOINED = 904, hipErrorStreamCaptureUnjoined, "capturing stream has unjoined work";
                STREAM_CAPTURE_ISOLATION = 905, hipErrorStreamCaptureIsolation, "dependency created on uncaptured work in another stream";
                STREAM_CAPTURE_IMPLICIT = 906, hipErrorStreamCaptureImplicit, "operation would make the legacy stream depend on a capturing blocking stream";
                CAPTURED_EVENT = 907, hipErrorCapturedEvent, "operation not permitted on an event last recorded in a capturing stream";
                STREAM_CAPTURE_WRONG_THREAD = 908, hipErrorStreamCaptureWrongThread, "attempt to terminate a thread-local capture sequence from another thread";
                GRAPH_EXEC_UPDATE_FAILURE = 910, hipErrorGraphExecUpdateFailure, "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update";
                INVALID_CHANNEL_DESCRIPTOR = 911, hipErrorInvalidChannelDescriptor, "invalid resource description of texture passed to the api";
                INVALID_TEXTURE = 912, hipErrorInvalidTexture, "invalid texture object passed to the api";
                UNKNOWN = 999, hipErrorUnknown, "unknown error";
                RUNTIME_MEMORY = 1052, hipErrorRuntimeMemory, "runtime memory call returned error";
                RUNTIME_OTHER = 1053, hipErrorRuntimeOther, "runtime call other than memory returned error";
                TBD = 1054, hipErrorTbd, "unknown error";
            }
            aliases {
                MEMORY_ALLOCATION = OUT_OF_MEMORY, hipErrorMemoryAllocation;
                INITIALIZATION_ERROR = NOT_INITIALIZED, hipErrorInitializationError;
                MAP_BUFFER_OBJECT_FAILED = MAP_FAILED, hipErrorMapBufferObjectFailed;
                INVALID_RESOURCE_HANDLE = INVALID_HANDLE, hipErrorInvalidResourceHandle;
            }
        }
    };
}

/// Calls `$callback! { KONST = value, C_NAME; … }` with every `hiprtcResult` of ROCm 7.2.
/// (`hiprtcGetErrorString` answers with the enumerator's own name: there is no other message.)
#[macro_export]
macro_rules! hiprtc_result_table {
    ($callback:ident) => {
        $callback! {
            SUCCESS = 0, HIPRTC_SUCCESS;
            ERROR_OUT_OF_MEMORY = 1, HIPRTC_ERROR_OUT_OF_MEMORY;
            ERROR_PROGRAM_CREATION_FAILURE = 2, HIPRTC_ERROR_PROGRAM_CREATION_FAILURE;
            ERROR_INVALID_INPUT = 3, HIPRTC_ERROR_INVALID_INPUT;
            ERROR_INVALID_PROGRAM = 4, HIPRTC_ERROR_INVALID_PROGRAM;
            ERROR_INVALID_OPTION = 5, HIPRTC_ERROR_INVALID_OPTION;
            ERROR_COMPILATION = 6, HIPRTC_ERROR_COMPILATION;
            ERROR_BUILTIN_OPERATION_FAILURE = 7, HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE;
            ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION = 8, HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION;
            ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION = 9, HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION;
            ERROR_NAME_EXPRESSION_NOT_VALID = 10, HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID;
            ERROR_INTERNAL_ERROR = 11, HIPRTC_ERROR_INTERNAL_ERROR;
            ERROR_LINKING = 100, HIPRTC_ERROR_LINKING;
        }
    };
}

/// One `hipError_t`: its value, C name (`hipGetErrorName`) and message (`hipGetErrorString`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HipErrorInfo {
    /// The ABI value.
    pub value: i32,
    /// The enumerator's name, e.g. `hipErrorInvalidValue`.
    pub name: &'static CStr,
    /// ROCm's description, e.g. `invalid argument`.
    pub message: &'static CStr,
}

/// One `hiprtcResult`: its value and C name (also its message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HiprtcResultInfo {
    /// The ABI value.
    pub value: i32,
    /// The enumerator's name, e.g. `HIPRTC_ERROR_COMPILATION`.
    pub name: &'static CStr,
}

/// A NUL-terminated literal as a `CStr`, at compile time.
const fn c(bytes: &'static [u8]) -> &'static CStr {
    match CStr::from_bytes_with_nul(bytes) {
        Ok(s) => s,
        Err(_) => panic!("table strings are NUL-terminated"),
    }
}

macro_rules! define_hip_errors {
    (errors { $( $konst:ident = $value:literal, $cname:ident, $message:literal; )* }
     aliases { $( $alias:ident = $target:ident, $acname:ident; )* }) => {
        /// `hipError_t` values by name, as plain `i32`.
        pub mod code {
            $( #[doc = concat!("`", stringify!($cname), "`: ", $message, ".")]
               pub const $konst: i32 = $value; )*
            $( #[doc = concat!("`", stringify!($acname), "`, an alias of [`", stringify!($target), "`].")]
               pub const $alias: i32 = $target; )*
        }

        /// Every distinct `hipError_t`, ascending by value.
        pub const HIP_ERRORS: &[HipErrorInfo] = &[
            $( HipErrorInfo {
                value: $value,
                name: c(concat!(stringify!($cname), "\0").as_bytes()),
                message: c(concat!($message, "\0").as_bytes()),
            }, )*
        ];
    };
}
hip_error_table!(define_hip_errors);

macro_rules! define_hiprtc_results {
    ($( $konst:ident = $value:literal, $cname:ident; )*) => {
        /// `hiprtcResult` values by name, as plain `i32`.
        pub mod rtc_code {
            $( #[doc = concat!("`", stringify!($cname), "`.")] pub const $konst: i32 = $value; )*
        }

        /// Every `hiprtcResult`, ascending by value.
        pub const HIPRTC_RESULTS: &[HiprtcResultInfo] = &[
            $( HiprtcResultInfo { value: $value, name: c(concat!(stringify!($cname), "\0").as_bytes()) }, )*
        ];
    };
}
hiprtc_result_table!(define_hiprtc_results);

/// The entry for `value`, if ROCm 7.2 defines it.
pub fn info(value: i32) -> Option<&'static HipErrorInfo> {
    HIP_ERRORS.binary_search_by_key(&value, |e| e.value).ok().map(|i| &HIP_ERRORS[i])
}

/// What ROCm's `hipGetErrorName` returns: `hipErrorUnknown` for values it does not know.
pub fn name(value: i32) -> &'static CStr {
    info(value).map_or(c"hipErrorUnknown", |e| e.name)
}

/// What ROCm's `hipGetErrorString` returns: `unknown error` for values it does not describe.
pub fn message(value: i32) -> &'static CStr {
    info(value).map_or(c"unknown error", |e| e.message)
}

/// What ROCm's `hiprtcGetErrorString` returns: the enumerator's name, or `None` (a null
/// pointer in C) for a value that is not a `hiprtcResult`.
pub fn rtc_name(value: i32) -> Option<&'static CStr> {
    HIPRTC_RESULTS.iter().find(|r| r.value == value).map(|r| r.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_ascend_without_duplicates() {
        assert!(HIP_ERRORS.windows(2).all(|w| w[0].value < w[1].value));
        assert!(HIPRTC_RESULTS.windows(2).all(|w| w[0].value < w[1].value));
    }

    #[test]
    fn lookups_follow_rocm() {
        assert_eq!(name(code::INVALID_VALUE), c"hipErrorInvalidValue");
        assert_eq!(message(code::INVALID_VALUE), c"invalid argument");
        assert_eq!(name(code::INVALID_RESOURCE_HANDLE), c"hipErrorInvalidHandle");
        assert_eq!(code::INVALID_KERNEL_FILE, 218);
        assert_eq!(name(3), c"hipErrorNotInitialized");
        assert_eq!(name(11), c"hipErrorUnknown");
        assert_eq!(message(11), c"unknown error");
        assert_eq!(rtc_name(rtc_code::ERROR_LINKING), Some(c"HIPRTC_ERROR_LINKING"));
        assert_eq!(rtc_name(12), None);
    }
}
