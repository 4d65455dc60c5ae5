//! CUDA driver results → [`BackendError`]. CUDA's error numbers were HIP's model, so most
//! map one to one; the message keeps CUDA's own name and description.

use crate::backend::BackendError;
use cudarc::driver::sys::CUresult;
use cudarc::driver::DriverError;

/// Converts a driver error, naming the call that failed.
pub fn map(call: &str, e: DriverError) -> BackendError {
    let code = e.0 as i32;
    let name = e.error_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|_| format!("CUDA error {code}"));
    let text = e.error_string().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    classify(code, format!("{call}: {name}: {text}"))
}

/// The [`BackendError`] variant a CUDA driver error number is reported as, carrying `msg`.
fn classify(code: i32, msg: String) -> BackendError {
    match code {
        1 => BackendError::InvalidValue(msg),
        2 => BackendError::OutOfMemory(msg),
        3 | 4 => BackendError::NotInitialized(msg),
        100 => BackendError::NoDevice(msg),
        101 => BackendError::InvalidDevice(msg),
        200 | 218 | 222 => BackendError::InvalidImage(msg),
        209 => BackendError::NoBinaryForGpu(msg),
        400 => BackendError::InvalidHandle(msg),
        500 => BackendError::NotFound(msg),
        600 => BackendError::NotReady(msg),
        700 | 716 | 717 | 718 => BackendError::IllegalAddress(msg),
        701 => BackendError::LaunchOutOfResources(msg),
        702 => BackendError::LaunchTimeOut(msg),
        // Sticky faults HIP has no number for (hardware stack error, illegal instruction).
        714 | 715 | 719 => BackendError::LaunchFailure(msg),
        710 => BackendError::Assert(msg),
        801 => BackendError::NotSupported(msg),
        _ => BackendError::Unknown(msg),
    }
}

/// `CUresult` → `Result`, mapped.
pub trait Check {
    /// Maps a non-success result, naming `call`.
    fn check(self, call: &str) -> Result<(), BackendError>;
}

impl Check for CUresult {
    fn check(self, call: &str) -> Result<(), BackendError> {
        self.result().map_err(|e| map(call, e))
    }
}

impl<T> Check for Result<T, DriverError> {
    fn check(self, call: &str) -> Result<(), BackendError> {
        self.map(|_| ()).map_err(|e| map(call, e))
    }
}

#[cfg(test)]
mod tests {
    use super::classify;
    use cudarc::driver::sys::CUresult as R;

    /// Every driver error the table names, by cudarc's constant, and the HIP error it must
    /// reach the client as (the names of ROCm's `hipError_t`, from proto-core's table); the
    /// driver is not needed (no GPU in CI), so the message part is not exercised here.
    #[test]
    fn driver_errors_reach_the_client_as_hip_errors() {
        let table = [
            (R::CUDA_ERROR_INVALID_VALUE, "hipErrorInvalidValue"),
            (R::CUDA_ERROR_OUT_OF_MEMORY, "hipErrorOutOfMemory"),
            (R::CUDA_ERROR_NOT_INITIALIZED, "hipErrorNotInitialized"),
            (R::CUDA_ERROR_DEINITIALIZED, "hipErrorNotInitialized"),
            (R::CUDA_ERROR_NO_DEVICE, "hipErrorNoDevice"),
            (R::CUDA_ERROR_INVALID_DEVICE, "hipErrorInvalidDevice"),
            (R::CUDA_ERROR_INVALID_IMAGE, "hipErrorInvalidImage"),
            (R::CUDA_ERROR_INVALID_PTX, "hipErrorInvalidImage"),
            (R::CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "hipErrorInvalidImage"),
            (R::CUDA_ERROR_NO_BINARY_FOR_GPU, "hipErrorNoBinaryForGpu"),
            (R::CUDA_ERROR_INVALID_HANDLE, "hipErrorInvalidHandle"),
            (R::CUDA_ERROR_NOT_FOUND, "hipErrorNotFound"),
            (R::CUDA_ERROR_NOT_READY, "hipErrorNotReady"),
            (R::CUDA_ERROR_ILLEGAL_ADDRESS, "hipErrorIllegalAddress"),
            (R::CUDA_ERROR_MISALIGNED_ADDRESS, "hipErrorIllegalAddress"),
            (R::CUDA_ERROR_INVALID_ADDRESS_SPACE, "hipErrorIllegalAddress"),
            (R::CUDA_ERROR_INVALID_PC, "hipErrorIllegalAddress"),
            (R::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "hipErrorLaunchOutOfResources"),
            (R::CUDA_ERROR_LAUNCH_TIMEOUT, "hipErrorLaunchTimeOut"),
            (R::CUDA_ERROR_HARDWARE_STACK_ERROR, "hipErrorLaunchFailure"),
            (R::CUDA_ERROR_ILLEGAL_INSTRUCTION, "hipErrorLaunchFailure"),
            (R::CUDA_ERROR_LAUNCH_FAILED, "hipErrorLaunchFailure"),
            (R::CUDA_ERROR_ASSERT, "hipErrorAssert"),
            (R::CUDA_ERROR_NOT_SUPPORTED, "hipErrorNotSupported"),
            // Everything else: hipErrorUnknown.
            (R::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "hipErrorUnknown"),
            (R::CUDA_ERROR_UNKNOWN, "hipErrorUnknown"),
        ];
        for (result, expected) in table {
            let e = classify(result as i32, format!("cuX: {result:?}"));
            let name = proto_core::hip_error::name(e.hip_code());
            assert_eq!(name.to_str().unwrap(), expected, "{result:?}");
            assert_eq!(e.message(), format!("cuX: {result:?}"));
        }
    }
}
