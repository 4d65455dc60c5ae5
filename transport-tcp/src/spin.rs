//! Polling a socket for a short while before a blocking read: a reply that comes within the
//! spin time is taken without the blocked reader's sleep and wake-up (several µs on each side
//! of a round trip). Unix only: a non-blocking `MSG_PEEK` of one byte asks without consuming
//! anything and without touching the socket's blocking mode, which the sending half shares.
//! Elsewhere the reader blocks at once.

use std::net::TcpStream;
use std::time::Duration;

/// Returns when `stream` has bytes (or EOF, or an error) to read, or after `spin`.
#[cfg(unix)]
pub fn until_readable(stream: &TcpStream, spin: Duration) {
    use std::io::ErrorKind;
    use std::mem::MaybeUninit;
    use std::time::Instant;
    if spin.is_zero() {
        return;
    }
    let sock = socket2::SockRef::from(stream);
    let mut probe = [MaybeUninit::<u8>::uninit(); 1];
    let until = Instant::now() + spin;
    loop {
        match sock.recv_with_flags(&mut probe, libc::MSG_PEEK | libc::MSG_DONTWAIT) {
            // Bytes, EOF or a real error: the read that follows does not block and reports it.
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {}
            _ => return,
        }
        if Instant::now() >= until {
            return;
        }
        // Let any thread that is ready run (the one producing the reply may share this core).
        std::thread::yield_now();
    }
}

/// No non-blocking peek here: the reader blocks at once.
#[cfg(not(unix))]
pub fn until_readable(_stream: &TcpStream, _spin: Duration) {}

/// Waits up to `timeout` until `stream` has bytes (or EOF, or an error) to read: `Ok(false)`
/// when nothing came. `poll` asks without consuming anything or touching the socket's
/// blocking mode.
#[cfg(unix)]
pub fn wait_readable(stream: &TcpStream, timeout: Duration) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    use std::time::Instant;
    let until = Instant::now() + timeout;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        let mut fd = libc::pollfd { fd: stream.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        let millis = left.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: `fd` is one valid pollfd for the duration of the call; the descriptor is
        // owned by `stream`, which outlives it.
        let ready = unsafe { libc::poll(&mut fd, 1, millis) };
        match ready {
            n if n > 0 => return Ok(true),
            0 if Instant::now() >= until => return Ok(false),
            0 => {}
            _ => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
}

/// No `poll` here: report readable at once (the reader then blocks until its timeout).
#[cfg(not(unix))]
pub fn wait_readable(_stream: &TcpStream, _timeout: Duration) -> std::io::Result<bool> {
    Ok(true)
}
