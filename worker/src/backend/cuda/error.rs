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
    let msg = format!("{call}: {name}: {text}");
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
