//! HIP runtime results → [`BackendError`]: the codes are the wire's own, so each maps to the
//! variant reporting the same `hipError_t`; the message names the call and the code.

use crate::backend::{hip_code, BackendError};
use std::ffi::c_int;

/// Converts a non-success `hipError_t` from `call`.
pub fn map(call: &str, code: c_int) -> BackendError {
    let name = proto_core::hip_error::name(code).to_string_lossy();
    let msg = format!("{call}: {name} ({code})");
    match code {
        hip_code::INVALID_VALUE => BackendError::InvalidValue(msg),
        hip_code::OUT_OF_MEMORY => BackendError::OutOfMemory(msg),
        hip_code::NOT_INITIALIZED => BackendError::NotInitialized(msg),
        hip_code::INVALID_CONFIGURATION => BackendError::InvalidConfiguration(msg),
        hip_code::INVALID_DEVICE_POINTER => BackendError::InvalidDevicePointer(msg),
        hip_code::NO_DEVICE => BackendError::NoDevice(msg),
        hip_code::INVALID_DEVICE => BackendError::InvalidDevice(msg),
        hip_code::INVALID_IMAGE => BackendError::InvalidImage(msg),
        hip_code::NO_BINARY_FOR_GPU => BackendError::NoBinaryForGpu(msg),
        hip_code::INVALID_KERNEL_FILE => BackendError::InvalidKernelFile(msg),
        hip_code::SHARED_OBJECT_INIT_FAILED => BackendError::SharedObjectInitFailed(msg),
        hip_code::INVALID_HANDLE => BackendError::InvalidHandle(msg),
        hip_code::NOT_FOUND => BackendError::NotFound(msg),
        hip_code::NOT_READY => BackendError::NotReady(msg),
        hip_code::ILLEGAL_ADDRESS => BackendError::IllegalAddress(msg),
        hip_code::LAUNCH_FAILURE => BackendError::LaunchFailure(msg),
        hip_code::LAUNCH_OUT_OF_RESOURCES => BackendError::LaunchOutOfResources(msg),
        hip_code::LAUNCH_TIME_OUT => BackendError::LaunchTimeOut(msg),
        hip_code::ASSERT => BackendError::Assert(msg),
        hip_code::NOT_SUPPORTED => BackendError::NotSupported(msg),
        // A limit the device does not have (the session answers hipErrorUnsupportedLimit).
        hip_code::UNSUPPORTED_LIMIT => BackendError::NotSupported(msg),
        _ => BackendError::Unknown(msg),
    }
}

/// `hipError_t` → `Result`, mapped.
pub trait Check {
    /// Maps a non-success result, naming `call`.
    fn check(self, call: &str) -> Result<(), BackendError>;
}

impl Check for c_int {
    fn check(self, call: &str) -> Result<(), BackendError> {
        if self == 0 {
            Ok(())
        } else {
            Err(map(call, self))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mapped_code_round_trips() {
        for code in [1, 2, 3, 9, 17, 100, 101, 200, 209, 218, 303, 400, 500, 600, 700, 701, 702, 719, 801] {
            assert_eq!(map("hipX", code).hip_code(), code, "{code}");
        }
        let e = map("hipMalloc", 2);
        assert!(e.message().contains("hipMalloc") && e.message().contains("hipErrorOutOfMemory"), "{e}");
        assert_eq!(0.check("hipX"), Ok(()));
    }
}
