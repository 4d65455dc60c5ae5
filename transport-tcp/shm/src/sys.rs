//! The system calls behind the shared rings: sealed memfds and their mappings, descriptors
//! passed over a Unix socket (`SCM_RIGHTS`), and the doorbell socket's poll, ring and drain.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// Most descriptors one message carries.
pub const MAX_FDS_PER_MESSAGE: usize = 4;

/// Creates a memfd of `len` bytes named `name` (seen in `/proc/PID/maps` as `memfd:NAME`),
/// sealed against shrinking and growing: a peer that maps it can never make the other's
/// mapping reach past the file's end (which would raise SIGBUS on access).
pub fn sealed_memfd(name: &CStr, len: usize) -> io::Result<OwnedFd> {
    // SAFETY: `name` is a NUL-terminated string; the flags are valid.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by memfd_create and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let len = libc::off_t::try_from(len).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "memfd too large"))?;
    // SAFETY: plain calls on a descriptor we own.
    if unsafe { libc::ftruncate(fd.as_raw_fd(), len) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let seals = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd)
}

/// The size of the file behind `fd`, after checking that it cannot shrink (a received memfd
/// must be sealed as [`sealed_memfd`] seals it before it is mapped).
pub fn sealed_len(fd: BorrowedFd<'_>) -> io::Result<usize> {
    // SAFETY: a plain query on a valid descriptor.
    let seals = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GET_SEALS) };
    if seals < 0 || seals & libc::F_SEAL_SHRINK == 0 {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "shared memory that is not sealed against shrinking"));
    }
    // SAFETY: `stat` is plain data, filled by fstat on a valid descriptor.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut stat) } != 0 {
        return Err(io::Error::last_os_error());
    }
    usize::try_from(stat.st_size).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad shared memory size"))
}

/// A shared, writable mapping of a whole file, unmapped when dropped.
#[derive(Debug)]
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain memory; who reads or writes it when is the users' concern
// (the rings use atomics for their indices and copy their data with raw pointers).
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps the first `len` bytes of `fd` (the file must be at least that long: sealed).
    pub fn new(fd: BorrowedFd<'_>, len: usize) -> io::Result<Self> {
        if len == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty mapping"));
        }
        // SAFETY: a fresh shared mapping chosen by the kernel; nothing else is replaced.
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd.as_raw_fd(), 0) };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Self { ptr: ptr.cast(), len })
    }

    /// The first byte.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Bytes mapped.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Never: a mapping is not empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are exactly the mapping made in `new`, unmapped once here.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// Sends `payload` with `fds` attached (`SCM_RIGHTS`) on a connected Unix socket.
pub fn send_fds(sock: BorrowedFd<'_>, payload: &[u8], fds: &[BorrowedFd<'_>]) -> io::Result<()> {
    assert!(!payload.is_empty() && fds.len() <= MAX_FDS_PER_MESSAGE);
    let raw: Vec<RawFd> = fds.iter().map(|fd| fd.as_raw_fd()).collect();
    let fd_bytes = std::mem::size_of_val(raw.as_slice()) as u32;
    let mut cmsg_buf = [0u64; 16];
    let mut iov = libc::iovec { iov_base: payload.as_ptr() as *mut _, iov_len: payload.len() };
    // SAFETY: msghdr is plain data; every pointer set below stays valid for the sendmsg.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if !raw.is_empty() {
        msg.msg_control = cmsg_buf.as_mut_ptr().cast();
        // SAFETY: CMSG_SPACE is arithmetic.
        msg.msg_controllen = unsafe { libc::CMSG_SPACE(fd_bytes) } as _;
        // SAFETY: the control buffer (128 bytes) holds one header and MAX_FDS_PER_MESSAGE
        // descriptors; CMSG_FIRSTHDR/CMSG_DATA point into it.
        unsafe {
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(fd_bytes) as _;
            std::ptr::copy_nonoverlapping(raw.as_ptr(), libc::CMSG_DATA(cmsg).cast::<RawFd>(), raw.len());
        }
    }
    loop {
        // SAFETY: `msg` and everything it points to are valid for the call.
        let sent = unsafe { libc::sendmsg(sock.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) };
        if sent >= 0 {
            return if sent as usize == payload.len() { Ok(()) } else { Err(io::Error::new(io::ErrorKind::WriteZero, "short send")) };
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Receives one message into `payload` with up to [`MAX_FDS_PER_MESSAGE`] descriptors:
/// the bytes received (0: the peer closed) and the descriptors (close-on-exec).
pub fn recv_fds(sock: BorrowedFd<'_>, payload: &mut [u8]) -> io::Result<(usize, Vec<OwnedFd>)> {
    let mut cmsg_buf = [0u64; 16];
    let mut iov = libc::iovec { iov_base: payload.as_mut_ptr().cast(), iov_len: payload.len() };
    // SAFETY: msghdr is plain data; every pointer set below stays valid for the recvmsg.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cmsg_buf.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&cmsg_buf) as _;
    let received = loop {
        // SAFETY: `msg` and everything it points to are valid for the call.
        let n = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n >= 0 {
            break n as usize;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    };
    let mut fds = Vec::new();
    // SAFETY: the kernel filled `msg_control` with well-formed headers; the CMSG macros walk
    // them within `msg_controllen`, and each SCM_RIGHTS payload is an array of descriptors
    // now owned by this process.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let bytes = (*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
                let data = libc::CMSG_DATA(cmsg).cast::<RawFd>();
                for i in 0..bytes / std::mem::size_of::<RawFd>() {
                    fds.push(OwnedFd::from_raw_fd(data.add(i).read_unaligned()));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    if msg.msg_flags & libc::MSG_CTRUNC != 0 {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "too many descriptors in one message"));
    }
    Ok((received, fds))
}

/// Waits until `fd` is readable (or closed): `Ok(false)` when `timeout` passed first
/// (`None`: no limit).
pub fn poll_readable(fd: BorrowedFd<'_>, timeout: Option<Duration>) -> io::Result<bool> {
    let millis = timeout.map_or(-1, |t| t.as_millis().clamp(if t.is_zero() { 0 } else { 1 }, i32::MAX as u128) as i32);
    let mut pfd = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd for the duration of the call.
    match unsafe { libc::poll(&mut pfd, 1, millis) } {
        n if n > 0 => Ok(true),
        0 => Ok(false),
        _ => {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                Ok(false)
            } else {
                Err(e)
            }
        }
    }
}

/// Sends one doorbell byte without blocking: a full socket buffer already holds doorbells
/// enough. Err only when the peer is gone.
pub fn ring_doorbell(fd: BorrowedFd<'_>) -> io::Result<()> {
    let byte = 1u8;
    // SAFETY: one byte from a valid local.
    let n = unsafe { libc::send(fd.as_raw_fd(), (&byte as *const u8).cast(), 1, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) };
    if n >= 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(()),
        _ => Err(e),
    }
}

/// Reads every doorbell byte waiting, without blocking: `Ok(true)` when the peer has closed
/// its end.
pub fn drain_doorbells(fd: BorrowedFd<'_>) -> io::Result<bool> {
    let mut scratch = [0u8; 256];
    loop {
        // SAFETY: a valid local buffer of the given length.
        let n = unsafe { libc::recv(fd.as_raw_fd(), scratch.as_mut_ptr().cast(), scratch.len(), libc::MSG_DONTWAIT) };
        match n {
            0 => return Ok(true),
            n if n > 0 => continue,
            _ => {
                let e = io::Error::last_os_error();
                match e.kind() {
                    io::ErrorKind::WouldBlock => return Ok(false),
                    io::ErrorKind::Interrupted => continue,
                    io::ErrorKind::ConnectionReset => return Ok(true),
                    _ => return Err(e),
                }
            }
        }
    }
}
