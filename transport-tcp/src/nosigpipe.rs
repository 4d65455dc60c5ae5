//! Socket writes that never raise SIGPIPE.
//!
//! The client library lives inside someone else's program, whose SIGPIPE disposition is its
//! own (the default kills the process). A `write` to a TCP connection the peer has reset
//! raises SIGPIPE, so a worker dying in the middle of a copy would kill the application
//! instead of failing its HIP call. Every write to a socket goes through [`NoSigpipe`]:
//! - Linux and the other systems with it: `send`/`sendmsg` with `MSG_NOSIGNAL`;
//! - Apple systems (no `MSG_NOSIGNAL`): the socket carries `SO_NOSIGPIPE`, set by
//!   [`suppress_on_socket`] when it is configured;
//! - Windows has no SIGPIPE.
//!
//! The peer's reset then comes back as `EPIPE`, an error like any other. (std's
//! `TcpStream::write` already sends with `MSG_NOSIGNAL` on Linux, but its `write_vectored`
//! is a plain `writev`: the striped copies died of it.)

use std::ffi::c_int;
use std::io::{self, IoSlice, Read, Write};
use std::net::TcpStream;

/// Flags for every `send` on a socket.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd", target_os = "netbsd", target_os = "openbsd"))]
const SEND_FLAGS: c_int = libc::MSG_NOSIGNAL;
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd", target_os = "netbsd", target_os = "openbsd")))]
const SEND_FLAGS: c_int = 0;

/// Marks the socket so that writes to it never raise SIGPIPE where the flag of each send
/// cannot say so (Apple systems: `SO_NOSIGPIPE`); nothing elsewhere.
pub fn suppress_on_socket(stream: &TcpStream) -> io::Result<()> {
    #[cfg(any(target_os = "macos", target_os = "ios", target_os = "tvos", target_os = "watchos", target_os = "visionos"))]
    socket2::SockRef::from(stream).set_nosigpipe(true)?;
    let _ = stream;
    Ok(())
}

/// A TCP stream whose writes are `send`s with `MSG_NOSIGNAL` (see the module's comment);
/// reads are the stream's own.
#[derive(Debug)]
pub struct NoSigpipe(TcpStream);

impl NoSigpipe {
    /// Wraps `stream`, marking the socket where the platform needs that
    /// ([`suppress_on_socket`]).
    pub fn new(stream: TcpStream) -> io::Result<Self> {
        suppress_on_socket(&stream)?;
        Ok(Self(stream))
    }

    /// The stream itself (for options and shutdown; not for writing).
    pub fn get_ref(&self) -> &TcpStream {
        &self.0
    }
}

impl Write for NoSigpipe {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        socket2::SockRef::from(&self.0).send_with_flags(buf, SEND_FLAGS)
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        socket2::SockRef::from(&self.0).send_vectored_with_flags(bufs, SEND_FLAGS)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Read for NoSigpipe {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// Writing to a connection the peer has reset fails with an error instead of raising
    /// SIGPIPE, with SIGPIPE at its default disposition: were it raised, this test process
    /// would die of it (the child process below keeps the rest of the suite out of harm's way).
    #[test]
    fn a_reset_connection_fails_the_write_without_a_signal() {
        const CHILD: &str = "HIP_REMOTE_NOSIGPIPE_TEST_CHILD";
        if std::env::var_os(CHILD).is_none() {
            let exe = std::env::current_exe().expect("test executable");
            let child = std::process::Command::new(exe)
                .args(["--exact", "nosigpipe::tests::a_reset_connection_fails_the_write_without_a_signal", "--nocapture", "--test-threads=1"])
                .env(CHILD, "1")
                .output()
                .expect("run the test in a child process");
            let output = String::from_utf8_lossy(&child.stdout) + String::from_utf8_lossy(&child.stderr);
            assert!(
                child.status.success(),
                "the child writing to a reset connection ended with {:?} (SIGPIPE is signal 13):\n{output}",
                child.status
            );
            assert!(output.contains("1 passed"), "the child did not run the test:\n{output}");
            return;
        }
        // SAFETY: restores the default disposition (the Rust runtime ignores SIGPIPE), as in a
        // C application; this child process runs this test alone.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        // A zero linger makes the close a reset.
        socket2::SockRef::from(&server).set_linger(Some(std::time::Duration::ZERO)).unwrap();
        drop(server);
        let mut stream = NoSigpipe::new(client).unwrap();
        let chunk = vec![0u8; 1 << 16];
        // The first write after the reset may fail with ECONNRESET; the ones after it fail with
        // EPIPE, which is where the signal would come from. Both kinds of write are tried.
        let broken = (0..1000).find_map(|i| {
            let result = if i % 2 == 0 { stream.write_all(&chunk) } else { stream.write_vectored(&[IoSlice::new(&chunk)]).map(drop) };
            result.err().filter(|e| e.kind() == io::ErrorKind::BrokenPipe)
        });
        assert!(broken.is_some(), "writes to a reset connection never failed with EPIPE");
        assert!(stream.write_vectored(&[IoSlice::new(&chunk)]).is_err(), "a vectored write after EPIPE succeeded");
    }
}
