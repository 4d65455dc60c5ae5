//! [`BackendError`]: what a backend call can fail with, and the `hipError_t` it becomes.

/// `hipError_t` values by name (aliases included), from proto-core's one table.
pub use proto_core::hip_error::code as hip_code;

/// A failed backend call: one variant per `hipError_t` a backend can produce, each with a
/// message for logs and for the client's `hipGetErrorString`-adjacent diagnostics.
///
/// `Clone` because a stream's latched error is reported by every later synchronize/query.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// A parameter is out of range (flags, sizes, a range running past its allocation).
    #[error("invalid value: {0}")]
    InvalidValue(String),
    /// Device memory (or the host memory emulating it) is exhausted.
    #[error("out of memory: {0}")]
    OutOfMemory(String),
    /// The backend's runtime or driver could not be brought up.
    #[error("backend not initialized: {0}")]
    NotInitialized(String),
    /// A launch shape the device or kernel cannot run (grid, block, shared memory).
    #[error("invalid configuration: {0}")]
    InvalidConfiguration(String),
    /// An address that lies in no live allocation.
    #[error("invalid device pointer: {0}")]
    InvalidDevicePointer(String),
    /// The backend has no devices at all.
    #[error("no device: {0}")]
    NoDevice(String),
    /// A device ordinal outside `0..device_count()`.
    #[error("invalid device: {0}")]
    InvalidDevice(String),
    /// A code object that is not a loadable image.
    #[error("invalid image: {0}")]
    InvalidImage(String),
    /// A code object without code for this device's architecture.
    #[error("no binary for GPU: {0}")]
    NoBinaryForGpu(String),
    /// A kernel file that could not be read or parsed.
    #[error("invalid kernel file: {0}")]
    InvalidKernelFile(String),
    /// A runtime library was found but failed to initialize.
    #[error("shared object init failed: {0}")]
    SharedObjectInitFailed(String),
    /// A stream or event handle that is not live, or used with the wrong device.
    #[error("invalid handle: {0}")]
    InvalidHandle(String),
    /// A named symbol or function that does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// Work is still pending (`hipEventElapsedTime` on an event not yet reached).
    #[error("not ready: {0}")]
    NotReady(String),
    /// A kernel touched memory outside its allocations.
    #[error("illegal address: {0}")]
    IllegalAddress(String),
    /// A kernel failed while running.
    #[error("launch failure: {0}")]
    LaunchFailure(String),
    /// A launch asked for more registers, shared memory or threads than the device has
    /// (`hipErrorLaunchOutOfResources`; the device stays usable).
    #[error("launch out of resources: {0}")]
    LaunchOutOfResources(String),
    /// A kernel ran longer than allowed and was stopped (`hipErrorLaunchTimeOut`).
    #[error("launch timed out: {0}")]
    LaunchTimeOut(String),
    /// A device-side assert failed in a kernel (`hipErrorAssert`).
    #[error("device-side assert: {0}")]
    Assert(String),
    /// This backend does not implement the operation.
    #[error("not supported: {0}")]
    NotSupported(String),
    /// Anything else, including a panic caught on a stream's executor.
    #[error("unknown error: {0}")]
    Unknown(String),
}

impl BackendError {
    /// The `hipError_t` this error is reported to the client as.
    pub fn hip_code(&self) -> i32 {
        match self {
            Self::InvalidValue(_) => hip_code::INVALID_VALUE,
            Self::OutOfMemory(_) => hip_code::OUT_OF_MEMORY,
            Self::NotInitialized(_) => hip_code::NOT_INITIALIZED,
            Self::InvalidConfiguration(_) => hip_code::INVALID_CONFIGURATION,
            Self::InvalidDevicePointer(_) => hip_code::INVALID_DEVICE_POINTER,
            Self::NoDevice(_) => hip_code::NO_DEVICE,
            Self::InvalidDevice(_) => hip_code::INVALID_DEVICE,
            Self::InvalidImage(_) => hip_code::INVALID_IMAGE,
            Self::NoBinaryForGpu(_) => hip_code::NO_BINARY_FOR_GPU,
            Self::InvalidKernelFile(_) => hip_code::INVALID_KERNEL_FILE,
            Self::SharedObjectInitFailed(_) => hip_code::SHARED_OBJECT_INIT_FAILED,
            Self::InvalidHandle(_) => hip_code::INVALID_HANDLE,
            Self::NotFound(_) => hip_code::NOT_FOUND,
            Self::NotReady(_) => hip_code::NOT_READY,
            Self::IllegalAddress(_) => hip_code::ILLEGAL_ADDRESS,
            Self::LaunchFailure(_) => hip_code::LAUNCH_FAILURE,
            Self::LaunchOutOfResources(_) => hip_code::LAUNCH_OUT_OF_RESOURCES,
            Self::LaunchTimeOut(_) => hip_code::LAUNCH_TIME_OUT,
            Self::Assert(_) => hip_code::ASSERT,
            Self::NotSupported(_) => hip_code::NOT_SUPPORTED,
            Self::Unknown(_) => hip_code::UNKNOWN,
        }
    }

    /// The human-readable part, without the variant's prefix.
    pub fn message(&self) -> &str {
        match self {
            Self::InvalidValue(m)
            | Self::OutOfMemory(m)
            | Self::NotInitialized(m)
            | Self::InvalidConfiguration(m)
            | Self::InvalidDevicePointer(m)
            | Self::NoDevice(m)
            | Self::InvalidDevice(m)
            | Self::InvalidImage(m)
            | Self::NoBinaryForGpu(m)
            | Self::InvalidKernelFile(m)
            | Self::SharedObjectInitFailed(m)
            | Self::InvalidHandle(m)
            | Self::NotFound(m)
            | Self::NotReady(m)
            | Self::IllegalAddress(m)
            | Self::LaunchFailure(m)
            | Self::LaunchOutOfResources(m)
            | Self::LaunchTimeOut(m)
            | Self::Assert(m)
            | Self::NotSupported(m)
            | Self::Unknown(m) => m,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_rocm() {
        let cases = [
            (BackendError::InvalidValue(String::new()), 1),
            (BackendError::OutOfMemory(String::new()), 2),
            (BackendError::NotInitialized(String::new()), 3),
            (BackendError::InvalidConfiguration(String::new()), 9),
            (BackendError::InvalidDevicePointer(String::new()), 17),
            (BackendError::NoDevice(String::new()), 100),
            (BackendError::InvalidDevice(String::new()), 101),
            (BackendError::InvalidImage(String::new()), 200),
            (BackendError::NoBinaryForGpu(String::new()), 209),
            (BackendError::InvalidKernelFile(String::new()), 218),
            (BackendError::SharedObjectInitFailed(String::new()), 303),
            (BackendError::InvalidHandle(String::new()), 400),
            (BackendError::NotFound(String::new()), 500),
            (BackendError::NotReady(String::new()), 600),
            (BackendError::IllegalAddress(String::new()), 700),
            (BackendError::LaunchFailure(String::new()), 719),
            (BackendError::LaunchOutOfResources(String::new()), 701),
            (BackendError::LaunchTimeOut(String::new()), 702),
            (BackendError::Assert(String::new()), 710),
            (BackendError::NotSupported(String::new()), 801),
            (BackendError::Unknown(String::new()), 999),
        ];
        for (error, code) in cases {
            assert_eq!(error.hip_code(), code, "{error:?}");
        }
    }

    #[test]
    fn message_is_carried() {
        let error = BackendError::InvalidValue("count 3 is not 1, 2 or 4".into());
        assert_eq!(error.message(), "count 3 is not 1, 2 or 4");
        assert_eq!(error.to_string(), "invalid value: count 3 is not 1, 2 or 4");
    }
}
