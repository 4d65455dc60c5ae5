//! The descriptor channel of a shared-memory connection: a Unix socket pair made at bootstrap
//! on which the worker passes further shared memory (`hipHostMalloc` regions) to its client,
//! each memfd tagged with the id the reply that announces it names. The worker sends the
//! descriptor before the reply, so the client finds it waiting when it reads the reply.

use crate::sys;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// Most messages the client skips looking for one tag (descriptors of requests it gave up
/// on); each skipped descriptor is closed.
const MAX_SKIPPED: usize = 64;

/// One side of the descriptor channel.
#[derive(Debug)]
pub struct FdChannel {
    socket: UnixStream,
}

impl FdChannel {
    pub(crate) fn new(socket: UnixStream) -> io::Result<Self> {
        // The worker never blocks on a client that does not read: a full socket fails the
        // request that wanted to pass a descriptor.
        socket.set_nonblocking(true)?;
        Ok(Self { socket })
    }

    /// Passes `fd`, tagged `tag`. Fails at once when the peer has not read earlier ones.
    pub fn send(&self, tag: u64, fd: BorrowedFd<'_>) -> io::Result<()> {
        sys::send_fds(self.socket.as_fd(), &tag.to_le_bytes(), &[fd])
    }

    /// Takes the descriptor tagged `tag`, waiting up to `timeout` for it; older messages with
    /// other tags are dropped (their descriptors closed).
    pub fn recv(&self, tag: u64, timeout: Duration) -> io::Result<OwnedFd> {
        for _ in 0..=MAX_SKIPPED {
            if !sys::poll_readable(self.socket.as_fd(), Some(timeout))? {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "the worker passed no shared memory"));
            }
            let mut payload = [0u8; 8];
            let (n, mut fds) = match sys::recv_fds(self.socket.as_fd(), &mut payload) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                other => other?,
            };
            if n == 0 && fds.is_empty() {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the descriptor channel is closed"));
            }
            if n == payload.len() && u64::from_le_bytes(payload) == tag && fds.len() == 1 {
                return Ok(fds.remove(0));
            }
        }
        Err(io::Error::new(io::ErrorKind::InvalidData, format!("no descriptor tagged {tag} on the descriptor channel")))
    }
}

impl AsFd for FdChannel {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.socket.as_fd()
    }
}
