//! The transport traits, implemented by TCP and RDMA.

use proto_core::{DecodeError, FrameHeader};
use std::io;

/// Why a transport operation failed.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The peer closed the connection cleanly between frames.
    #[error("connection closed by peer")]
    Closed,
    /// An I/O error (including timeouts and resets, or a close in the middle of a frame).
    #[error("i/o error: {0}")]
    Io(#[from] io::Error),
    /// The peer sent bytes that are not a valid frame header.
    #[error("malformed frame: {0}")]
    Malformed(#[from] DecodeError),
}

/// One received frame head: the validated header and its control part. The bulk section
/// (`header.bulk_len` bytes) is still pending in the source until read or skipped.
#[derive(Debug)]
pub struct Received<'b> {
    /// The header.
    pub header: FrameHeader,
    /// The control part, borrowed from the source's buffer.
    pub control: &'b [u8],
}

/// The sending half of a connection.
pub trait FrameSink: Send {
    /// Sends `head` (header and control part) followed by `bulk` now: any coalesced frames
    /// go first, then this one, then everything is flushed.
    fn send(&mut self, head: &[u8], bulk: &[u8]) -> Result<(), TransportError>;

    /// Queues a fire-and-forget frame. Small frames are coalesced and go out at the next
    /// [`send`](Self::send), [`flush`](Self::flush), or when the batch is full; large bulk
    /// sections are written straight from `bulk` after the batch.
    fn queue(&mut self, head: &[u8], bulk: &[u8]) -> Result<(), TransportError>;

    /// Writes out everything queued.
    fn flush(&mut self) -> Result<(), TransportError>;

    /// Bytes queued and not yet written.
    fn pending(&self) -> usize;

    /// Tells the transport that the bulk of the reply to request `request_id` (sent next)
    /// will be read into `[dst, dst + len)`, so a transport that can place it there itself
    /// does (RDMA: the worker RDMA-WRITEs it into the buffer; the source's `recv_bulk` into
    /// the same buffer then copies nothing). Default: ignored (TCP reads it off the socket).
    ///
    /// # Safety
    /// `dst` must stay valid for writes of `len` bytes, and not be read or written by anyone
    /// else, until the reply to `request_id` has been received (its `recv_head`) or the
    /// connection is gone.
    unsafe fn offer_landing(&mut self, request_id: u64, dst: *mut u8, len: usize) -> Result<(), TransportError> {
        let _ = (request_id, dst, len);
        Ok(())
    }

    /// Sends a reply whose bulk (`head`'s bulk length, `len` bytes) is device memory at
    /// `addr` (announced with [`MemoryRegistry::remember_device`]) without staging it in host
    /// memory, if the transport can (RDMA: the client offered a landing and the device memory
    /// is registered through its dma-buf; the NIC writes from the GPU into the landing).
    /// `Ok(false)`: nothing was sent; the caller stages the bytes and sends them. Default:
    /// `Ok(false)`.
    fn send_from_device(&mut self, head: &[u8], addr: u64, len: usize) -> Result<bool, TransportError> {
        let _ = (head, addr, len);
        Ok(false)
    }

    /// The transport's registry of long-lived memory, when it has one (RDMA registers such
    /// memory once instead of per transfer).
    fn memory_registry(&self) -> Option<std::sync::Arc<dyn MemoryRegistry>> {
        None
    }
}

/// Long-lived memory announced to a transport so it can prepare it once (RDMA: register it
/// with the NIC on first use and keep the registration) rather than on every transfer.
pub trait MemoryRegistry: Send + Sync {
    /// `[addr, addr + len)` stays allocated until [`forget`](Self::forget) is called with
    /// `addr`.
    fn remember(&self, addr: usize, len: usize);

    /// The memory remembered at `addr` is about to be freed: whatever the transport holds on
    /// it is released first. Must be called before the memory is freed.
    fn forget(&self, addr: usize);

    /// Device memory `[addr, addr + len)` (not addressable by this process) stays allocated
    /// until [`forget`](Self::forget): a transport that can reach it directly (RDMA through a
    /// dma-buf: GPUDirect) calls `export` on its first use. Default: ignored.
    #[cfg(unix)]
    fn remember_device(&self, addr: u64, len: u64, export: DeviceExport) {
        let _ = (addr, len, export);
    }
}

/// Exports device memory as a dma-buf: `(fd, offset of the range inside it)`.
#[cfg(unix)]
pub type DeviceExport = Box<dyn Fn() -> std::io::Result<(std::os::fd::OwnedFd, u64)> + Send + Sync>;

/// The receiving half of a connection.
pub trait FrameSource: Send {
    /// Receives the next frame's header and control part. Bulk data of the previous frame
    /// that the caller did not read is skipped first.
    fn recv_head(&mut self) -> Result<Received<'_>, TransportError>;

    /// Refuses, from the header alone, later frames whose control part exceeds `max` bytes
    /// (`recv_head` fails with [`DecodeError::TooLarge`](proto_core::DecodeError::TooLarge)
    /// before reading it). The worker narrows it until a connection is authenticated.
    /// Default: ignored (the protocol's own limit applies).
    fn limit_control(&mut self, max: usize) {
        let _ = max;
    }

    /// Reads the current frame's next `dst.len()` bulk bytes straight into `dst` (which may be
    /// device memory on a host backend, or a pinned staging buffer).
    fn recv_bulk(&mut self, dst: &mut [u8]) -> Result<(), TransportError>;

    /// Places the current frame's next `len` bulk bytes at device memory `addr` (announced
    /// with [`MemoryRegistry::remember_device`]) without staging them in host memory, if the
    /// transport can (RDMA: the bulk was announced one-sided and the device memory is
    /// registered through its dma-buf). `Ok(false)`: nothing was read; the caller stages the
    /// bytes with [`recv_bulk`](Self::recv_bulk). Default: `Ok(false)`.
    fn recv_bulk_to_device(&mut self, addr: u64, len: usize) -> Result<bool, TransportError> {
        let _ = (addr, len);
        Ok(false)
    }

    /// Waits up to `timeout` for the next frame to begin: `Ok(true)` when bytes (or the end
    /// of the connection) are there to read, `Ok(false)` when nothing came. A waiting client
    /// uses it to notice silence (to send a heartbeat, or give up a frozen peer) between
    /// frames, never in the middle of one. Call only between frames. Default: `Ok(true)` at
    /// once (the reader then blocks in [`recv_head`](Self::recv_head); such a transport
    /// watches its peer itself, as RDMA does with its keepalive).
    fn wait_readable(&mut self, timeout: std::time::Duration) -> Result<bool, TransportError> {
        let _ = timeout;
        Ok(true)
    }

    /// How long the following waits for a frame poll before they block. A client waiting
    /// for device work (a synchronize) spins longer, as a GPU runtime's own synchronize spins
    /// by default, and returns to its usual spin afterwards. Default: ignored (a transport
    /// without a polling reader).
    fn set_wait_spin(&mut self, spin: std::time::Duration) {
        let _ = spin;
    }

    /// Bulk bytes of the current frame not read yet.
    fn bulk_remaining(&self) -> usize;

    /// Discards the rest of the current frame's bulk section. Default: reads it through
    /// [`recv_bulk`](Self::recv_bulk) into a small scratch buffer; a transport that can drop
    /// bytes without reading them (RDMA) overrides it.
    fn skip_bulk(&mut self) -> Result<(), TransportError> {
        // Every frame's head read starts here: with nothing to skip (the usual case), return
        // before zeroing the scratch buffer.
        if self.bulk_remaining() == 0 {
            return Ok(());
        }
        let mut scratch = [0u8; 8192];
        loop {
            let n = self.bulk_remaining().min(scratch.len());
            if n == 0 {
                return Ok(());
            }
            self.recv_bulk(&mut scratch[..n])?;
        }
    }
}
