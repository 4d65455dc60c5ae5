//! Managed memory (`hipMallocManaged`) and device-visible host memory (`hipHostRegister`,
//! `hipHostMalloc(hipHostMallocMapped)`) as the layers above see it: the mirrored ranges live
//! in the session of the worker they were made on (`client_core::managed`, reached through
//! the connection), the driver pushes and pulls their pages around requests
//! (`conn/mirrors.rs`), and this module maps this process's side of them. Semantics and
//! limits: docs/MANAGED_MEMORY.md.

use crate::abi::HipError;
use crate::remote::{with_conn, with_open_conn};
use client_core::CallError;

pub use client_core::managed::{ManagedMirrors, Mirror, MirrorKind, PageAdvice};

/// Runs `f` on the mirrors of the worker this call goes to, opening its connection first if
/// needed (to add a range).
pub fn with_mirrors<R>(f: impl FnOnce(&mut ManagedMirrors) -> R) -> Result<R, CallError> {
    with_conn(|c| Ok(f(c.mirrors())))
}

/// Runs `f` on the mirrors of the worker this call goes to if its connection is open; `None`
/// when it is not (then nothing is mirrored there: ranges live as long as their session).
pub fn peek_mirrors<R>(f: impl FnOnce(&mut ManagedMirrors) -> R) -> Result<Option<R>, CallError> {
    with_open_conn(|c| f(c.mirrors()))
}

/// The range whose application part contains `addr`, as `f` sees it (`None`: not mirrored).
pub fn find<R>(addr: usize, f: impl FnOnce(&Mirror) -> R) -> Result<Option<R>, CallError> {
    Ok(peek_mirrors(|m| m.find(addr).map(f))?.flatten())
}

/// Removes the range whose application part starts at `start`, if `keep` agrees.
pub fn remove_if(start: usize, keep: impl FnOnce(&Mirror) -> bool) -> Result<Option<Mirror>, CallError> {
    Ok(peek_mirrors(|m| m.remove_if(start, keep))?.flatten())
}

/// Pushes every page whose contents changed since both sides last agreed on it.
pub fn push_all() -> Result<(), CallError> {
    with_conn(|c| c.push_mirrors())
}

/// Bytes pushed and pulled so far by this process (every worker's session).
pub fn stats() -> (u64, u64) {
    (0..crate::remote::worker_count())
        .filter_map(|index| crate::remote::with_open_worker(index, |c| c.mirrors().stats()))
        .fold((0, 0), |(p, q), (a, b)| (p + a, q + b))
}

/// This process's side of a mirrored range: pages of its own at a chosen address.
#[cfg(unix)]
pub mod os {
    use super::*;

    /// Fresh zeroed read-write pages anywhere.
    pub fn map_anywhere(len: usize) -> Result<usize, CallError> {
        map(0, len, 0)
    }

    /// Fresh zeroed pages exactly at `addr`, or an error if any of the range is taken.
    pub fn map_at(addr: usize, len: usize) -> Result<(), CallError> {
        #[cfg(target_os = "linux")]
        let got = map(addr, len, libc::MAP_FIXED_NOREPLACE)?;
        #[cfg(not(target_os = "linux"))]
        let got = map(addr, len, 0)?;
        if got != addr {
            unmap(got, len);
            return Err(CallError::new(HipError::OUT_OF_MEMORY, format!("{addr:#x} is taken in this process")));
        }
        Ok(())
    }

    fn map(addr: usize, len: usize, extra: libc::c_int) -> Result<usize, CallError> {
        // SAFETY: an anonymous private mapping; MAP_FIXED_NOREPLACE never replaces an
        // existing mapping, and without it `addr` is only a hint.
        let got = unsafe {
            libc::mmap(addr as *mut libc::c_void, len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANON | extra, -1, 0)
        };
        if got == libc::MAP_FAILED {
            let error = std::io::Error::last_os_error();
            return Err(CallError::new(HipError::OUT_OF_MEMORY, format!("mapping {len} bytes at {addr:#x} failed: {error}")));
        }
        Ok(got as usize)
    }

    pub fn unmap(addr: usize, len: usize) {
        // SAFETY: `addr`/`len` name a mapping made by `map` that nothing uses any more.
        unsafe { libc::munmap(addr as *mut libc::c_void, len) };
    }
}

/// Without mmap there is no way to place memory at the device's address: managed and mapped
/// host allocations are refused (registration of the application's memory still works).
#[cfg(not(unix))]
pub mod os {
    use super::*;

    const WHY: &str = "managed and mapped host memory need mmap to place pages at the device's address (Linux and macOS clients)";

    pub fn map_anywhere(_len: usize) -> Result<usize, CallError> {
        Err(CallError::new(HipError::NOT_SUPPORTED, WHY))
    }

    pub fn map_at(_addr: usize, _len: usize) -> Result<(), CallError> {
        Err(CallError::new(HipError::NOT_SUPPORTED, WHY))
    }

    pub fn unmap(_addr: usize, _len: usize) {}
}

/// Drops the ranges of `device` after `hipDeviceReset` (the worker freed their twins): the
/// application's registered memory stays, our own mappings go.
pub fn forget_device(device: u32) -> Result<(), CallError> {
    for mirror in peek_mirrors(|m| m.forget_device(device))?.unwrap_or_default() {
        if mirror.kind != MirrorKind::Registered {
            os::unmap(mirror.base, mirror.len);
        }
    }
    Ok(())
}
