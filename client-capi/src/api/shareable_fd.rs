//! Shareable handles as the application sees them: a file descriptor of this process whose
//! file holds the worker's 64-bit token (what `hipMemHandleTypePosixFileDescriptor` promises:
//! an fd the application may pass to another process with SCM_RIGHTS). Linux: a sealed memfd;
//! other Unix: an unlinked temporary file; Windows has no POSIX descriptors (the export is
//! refused with `hipErrorNotSupported`).

use crate::abi::HipError;
use client_core::CallError;
use std::ffi::c_int;

#[cfg(unix)]
fn os_error(what: &str) -> CallError {
    CallError::new(HipError::OUT_OF_MEMORY, format!("{what}: {}", std::io::Error::last_os_error()))
}

/// A new descriptor of a file holding `token`, owned by the caller.
#[cfg(target_os = "linux")]
pub fn create(token: u64) -> Result<c_int, CallError> {
    use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};
    // SAFETY: a NUL-terminated name; the descriptor returned is owned below.
    let fd = unsafe { libc::memfd_create(c"hip-remote-shareable-handle".as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) };
    if fd < 0 {
        return Err(os_error("memfd_create"));
    }
    // SAFETY: a descriptor just created and owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    write_token(fd.as_raw_fd(), token)?;
    let seals = libc::F_SEAL_SEAL | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE;
    // SAFETY: fcntl on a live memfd created with sealing allowed.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
        return Err(os_error("sealing the shareable handle"));
    }
    Ok(fd.into_raw_fd())
}

/// A new descriptor of a file holding `token`, owned by the caller.
#[cfg(all(unix, not(target_os = "linux")))]
pub fn create(token: u64) -> Result<c_int, CallError> {
    use std::os::fd::{AsRawFd, IntoRawFd};
    // An unlinked temporary file: nothing is left behind, the descriptor alone names it.
    let dir = std::env::temp_dir();
    let name = dir.join(format!("hip-remote-handle-{}-{token:016x}", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&name)
        .map_err(|e| CallError::new(HipError::OUT_OF_MEMORY, format!("creating {}: {e}", name.display())))?;
    let _ = std::fs::remove_file(&name);
    write_token(file.as_raw_fd(), token)?;
    Ok(file.into_raw_fd())
}

/// Windows has no POSIX file descriptors to hand out.
#[cfg(not(unix))]
pub fn create(_token: u64) -> Result<c_int, CallError> {
    Err(CallError::new(HipError::NOT_SUPPORTED, "POSIX file-descriptor handles do not exist on this platform"))
}

#[cfg(unix)]
fn write_token(fd: c_int, token: u64) -> Result<(), CallError> {
    let bytes = token.to_le_bytes();
    // SAFETY: writes 8 bytes from a live buffer to a live descriptor.
    if unsafe { libc::pwrite(fd, bytes.as_ptr().cast(), bytes.len(), 0) } != bytes.len() as isize {
        return Err(os_error("writing the shareable handle"));
    }
    Ok(())
}

/// The token in the file `fd` names, if it is one of [`create`]'s.
#[cfg(unix)]
pub fn read(fd: c_int) -> Option<u64> {
    let mut bytes = [0u8; 8];
    // SAFETY: reads at most 8 bytes into a live buffer; a bad descriptor fails with EBADF.
    let n = unsafe { libc::pread(fd, bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    (n == bytes.len() as isize).then(|| u64::from_le_bytes(bytes))
}

#[cfg(not(unix))]
pub fn read(_fd: c_int) -> Option<u64> {
    None
}
