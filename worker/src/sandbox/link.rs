//! The link between the worker and a session process: frames in the wire format over a Unix
//! socket pair. Both ends are the worker's own code, so no spinning or coalescing is needed;
//! the session process still gets every header validated as a client's would be.

use proto_core::header::HEADER_LEN;
use proto_core::limits::MAX_CONTROL_LEN;
use proto_core::FrameHeader;
use std::io::{self, BufReader, IoSlice, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};
use transport_core::{FrameSink, FrameSource, Received, TransportError};

/// Read buffer of the link (frames' heads and small bulk sections come through it).
const LINK_BUFFER_BYTES: usize = 256 << 10;

/// Sending half of a link.
#[derive(Debug)]
pub struct LinkSink {
    stream: UnixStream,
}

impl LinkSink {
    /// Sends over `stream`.
    pub fn new(stream: UnixStream) -> Self {
        Self { stream }
    }

    /// The underlying socket (for shutdown).
    pub fn stream(&self) -> &UnixStream {
        &self.stream
    }
}

impl FrameSink for LinkSink {
    fn send(&mut self, head: &[u8], bulk: &[u8]) -> Result<(), TransportError> {
        let mut slices = [IoSlice::new(head), IoSlice::new(bulk)];
        let mut slices = &mut slices[..];
        IoSlice::advance_slices(&mut slices, 0);
        while !slices.is_empty() {
            match self.stream.write_vectored(slices) {
                Ok(0) => return Err(TransportError::Io(io::Error::new(io::ErrorKind::WriteZero, "link closed"))),
                Ok(n) => IoSlice::advance_slices(&mut slices, n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TransportError::Io(e)),
            }
        }
        Ok(())
    }

    fn queue(&mut self, head: &[u8], bulk: &[u8]) -> Result<(), TransportError> {
        self.send(head, bulk)
    }

    fn flush(&mut self) -> Result<(), TransportError> {
        Ok(())
    }

    fn pending(&self) -> usize {
        0
    }
}

/// Receiving half of a link.
#[derive(Debug)]
pub struct LinkSource {
    reader: BufReader<UnixStream>,
    /// The current frame's header and control part.
    head: Vec<u8>,
    bulk_remaining: usize,
    max_control: usize,
    /// How long to poll for the next frame before blocking (as TCP's `HIP_REMOTE_TCP_SPIN_US`):
    /// a reply that comes within it is taken without a sleep and wake-up.
    spin: Duration,
}

impl LinkSource {
    /// Receives from `stream`, polling up to `spin` for each frame before blocking.
    pub fn new(stream: UnixStream, spin: Duration) -> Self {
        Self { reader: BufReader::with_capacity(LINK_BUFFER_BYTES, stream), head: Vec::new(), bulk_remaining: 0, max_control: MAX_CONTROL_LEN, spin }
    }

    /// Returns when the link has bytes (or EOF, or an error) to read, or after `spin`.
    fn until_readable(&self) {
        if self.spin.is_zero() || !self.reader.buffer().is_empty() {
            return;
        }
        let fd = self.reader.get_ref().as_raw_fd();
        let until = Instant::now() + self.spin;
        let mut probe = 0u8;
        loop {
            // SAFETY: a one-byte non-blocking peek into a local; it consumes nothing.
            let n = unsafe { libc::recv(fd, (&mut probe as *mut u8).cast(), 1, libc::MSG_PEEK | libc::MSG_DONTWAIT) };
            let would_block = n < 0 && matches!(io::Error::last_os_error().kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted);
            if !would_block || Instant::now() >= until {
                return;
            }
            std::thread::yield_now();
        }
    }
}

fn mid_frame(e: io::Error) -> TransportError {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        TransportError::Io(io::Error::new(io::ErrorKind::UnexpectedEof, "link closed mid-frame"))
    } else {
        TransportError::Io(e)
    }
}

impl FrameSource for LinkSource {
    fn recv_head(&mut self) -> Result<Received<'_>, TransportError> {
        self.skip_bulk()?;
        self.head.resize(HEADER_LEN, 0);
        self.until_readable();
        // A close before the first byte of a frame is a clean end.
        let first = loop {
            match self.reader.read(&mut self.head[..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TransportError::Io(e)),
            }
        };
        if first == 0 {
            return Err(TransportError::Closed);
        }
        self.reader.read_exact(&mut self.head[first..]).map_err(mid_frame)?;
        let header = FrameHeader::parse(&self.head)?;
        let control_len = header.control_len as usize;
        if control_len > self.max_control {
            return Err(proto_core::DecodeError::TooLarge { what: "control part", len: control_len as u64, max: self.max_control as u64 }.into());
        }
        self.head.resize(HEADER_LEN + control_len, 0);
        self.reader.read_exact(&mut self.head[HEADER_LEN..]).map_err(mid_frame)?;
        self.bulk_remaining = header.bulk_len as usize;
        Ok(Received { header, control: &self.head[HEADER_LEN..] })
    }

    fn limit_control(&mut self, max: usize) {
        self.max_control = max.min(MAX_CONTROL_LEN);
    }

    fn recv_bulk(&mut self, dst: &mut [u8]) -> Result<(), TransportError> {
        if dst.len() > self.bulk_remaining {
            return Err(TransportError::Io(io::Error::new(io::ErrorKind::InvalidInput, "read past the frame's bulk section")));
        }
        self.reader.read_exact(dst).map_err(mid_frame)?;
        self.bulk_remaining -= dst.len();
        Ok(())
    }

    fn bulk_remaining(&self) -> usize {
        self.bulk_remaining
    }
}

/// The wire bytes of a received head (header and control part), to pass a frame on.
pub fn head_bytes(received: &Received<'_>) -> Vec<u8> {
    let mut head = Vec::with_capacity(HEADER_LEN + received.control.len());
    head.extend_from_slice(&received.header.emit());
    head.extend_from_slice(received.control);
    head
}
