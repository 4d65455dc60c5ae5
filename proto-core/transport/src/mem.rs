//! An in-memory connection: two byte pipes, framed exactly as TCP frames them (the reader
//! finds heads with [`FrameDecoder::decode_head`] and streams bulk sections), so a session
//! and its driver, or a client, can be tested as an in-memory pair without sockets — the way
//! quinn-proto tests its connections as a `Pair`.

use crate::{FrameSink, FrameSource, Received, TransportError};
use proto_core::header::HEADER_LEN;
use proto_core::{DeframedHead, FrameDecoder};
use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a reader waits for bytes before it reports a timeout (a test that would
/// otherwise hang fails instead).
pub const MEM_READ_TIMEOUT: Duration = Duration::from_secs(60);

/// One direction of an in-memory connection.
#[derive(Debug, Default)]
struct Pipe {
    state: Mutex<PipeState>,
    readable: Condvar,
}

#[derive(Debug, Default)]
struct PipeState {
    bytes: VecDeque<u8>,
    /// The writing end is gone (or the reader hung up): no more bytes will come.
    closed: bool,
}

impl Pipe {
    fn lock(&self) -> MutexGuard<'_, PipeState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn close(&self) {
        self.lock().closed = true;
        self.readable.notify_all();
    }
}

/// Both ends of an in-memory connection: `(client_sink, client_source)` and
/// `(worker_sink, worker_source)`. What one end's sink sends, the other end's source reads.
pub fn duplex() -> ((MemSink, MemSource), (MemSink, MemSource)) {
    let (to_worker, to_client) = (Arc::new(Pipe::default()), Arc::new(Pipe::default()));
    let client = (MemSink::new(to_worker.clone()), MemSource::new(to_client.clone()));
    let worker = (MemSink::new(to_client), MemSource::new(to_worker));
    (client, worker)
}

/// The sending half of an in-memory connection. Dropping it ends the peer's reads.
#[derive(Debug)]
pub struct MemSink {
    pipe: Arc<Pipe>,
    /// Frames queued for coalescing, sent at the next `send` or `flush`.
    queued: Vec<u8>,
}

impl MemSink {
    fn new(pipe: Arc<Pipe>) -> Self {
        Self { pipe, queued: Vec::new() }
    }

    fn write(&mut self, parts: &[&[u8]]) -> Result<(), TransportError> {
        let mut state = self.pipe.lock();
        if state.closed {
            return Err(TransportError::Closed);
        }
        for part in parts {
            state.bytes.extend(part.iter());
        }
        self.pipe.readable.notify_all();
        Ok(())
    }
}

impl FrameSink for MemSink {
    fn send(&mut self, head: &[u8], bulk: &[u8]) -> Result<(), TransportError> {
        let queued = std::mem::take(&mut self.queued);
        self.write(&[&queued, head, bulk])
    }

    fn queue(&mut self, head: &[u8], bulk: &[u8]) -> Result<(), TransportError> {
        self.queued.extend_from_slice(head);
        self.queued.extend_from_slice(bulk);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), TransportError> {
        let queued = std::mem::take(&mut self.queued);
        self.write(&[&queued])
    }

    fn pending(&self) -> usize {
        self.queued.len()
    }
}

impl Drop for MemSink {
    fn drop(&mut self) {
        self.pipe.close();
    }
}

/// The receiving half of an in-memory connection.
#[derive(Debug)]
pub struct MemSource {
    pipe: Arc<Pipe>,
    /// Bytes taken from the pipe and not yet consumed.
    buf: Vec<u8>,
    bulk_remaining: usize,
    /// Largest control part accepted ([`FrameSource::limit_control`]).
    max_control: usize,
}

impl MemSource {
    fn new(pipe: Arc<Pipe>) -> Self {
        Self { pipe, buf: Vec::new(), bulk_remaining: 0, max_control: proto_core::limits::MAX_CONTROL_LEN }
    }

    /// Waits until `buf` holds `n` bytes. At a frame boundary with nothing buffered, a
    /// closed pipe is the orderly end of the connection.
    fn fill(&mut self, n: usize, at_boundary: bool) -> Result<(), TransportError> {
        let deadline = Instant::now() + MEM_READ_TIMEOUT;
        let mut state = self.pipe.lock();
        while self.buf.len() < n {
            if !state.bytes.is_empty() {
                let take = (n - self.buf.len()).min(state.bytes.len());
                self.buf.extend(state.bytes.drain(..take));
                continue;
            }
            if state.closed {
                return Err(if at_boundary && self.buf.is_empty() {
                    TransportError::Closed
                } else {
                    TransportError::Io(io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed mid-frame"))
                });
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(TransportError::Io(io::Error::new(io::ErrorKind::TimedOut, "no bytes within the in-memory read timeout")));
            }
            state = self.pipe.readable.wait_timeout(state, left).unwrap_or_else(|p| p.into_inner()).0;
        }
        Ok(())
    }
}

impl FrameSource for MemSource {
    fn recv_head(&mut self) -> Result<Received<'_>, TransportError> {
        self.skip_bulk()?;
        self.buf.clear();
        let mut at_boundary = true;
        let (consumed, header) = loop {
            match FrameDecoder::decode_head_within(&self.buf, self.max_control)? {
                DeframedHead::Head { consumed, header, .. } => break (consumed, header),
                DeframedHead::NeedMore { needed } => {
                    self.fill(needed, at_boundary)?;
                    at_boundary = false;
                }
            }
        };
        self.bulk_remaining = header.bulk_len as usize;
        Ok(Received { header, control: &self.buf[HEADER_LEN..consumed] })
    }

    fn limit_control(&mut self, max: usize) {
        self.max_control = max.min(proto_core::limits::MAX_CONTROL_LEN);
    }

    fn recv_bulk(&mut self, dst: &mut [u8]) -> Result<(), TransportError> {
        if dst.len() > self.bulk_remaining {
            return Err(TransportError::Io(io::Error::new(io::ErrorKind::InvalidInput, "read past the frame's bulk section")));
        }
        self.buf.clear();
        self.fill(dst.len(), false)?;
        dst.copy_from_slice(&self.buf);
        self.buf.clear();
        self.bulk_remaining -= dst.len();
        Ok(())
    }

    fn bulk_remaining(&self) -> usize {
        self.bulk_remaining
    }
}

impl Drop for MemSource {
    fn drop(&mut self) {
        // The peer's writes fail from now on, as on a closed socket.
        self.pipe.close();
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use proto_core::wire::{MemcpyHtoD, Ping};
    use proto_core::{Bulk, Flags, Request};

    fn encode(req: &Request<'_>, id: u64) -> (Vec<u8>, Vec<u8>) {
        let mut buf = vec![0; 4096];
        let frame = req.encode_frame(&mut buf, Flags::empty(), id).unwrap();
        (buf[..frame.head_len].to_vec(), frame.bulk.to_vec())
    }

    #[test]
    fn frames_cross_in_order_with_their_bulk() {
        let ((mut sink, _client_source), (_worker_sink, mut source)) = duplex();
        let data = vec![7u8; 100_000];
        let (h1, b1) = encode(&Request::MemcpyHtoD(MemcpyHtoD { dst: 0x1000, stream: 0, sync: true, data: Bulk(&data) }), 1);
        let (h2, b2) = encode(&Request::Ping(Ping { nonce: 9, payload: Default::default() }), 2);
        sink.queue(&h1, &b1).unwrap();
        assert_eq!(sink.pending(), h1.len() + b1.len());
        sink.send(&h2, &b2).unwrap();
        let head = source.recv_head().unwrap();
        assert_eq!((head.header.request_id, head.header.bulk_len as usize), (1, data.len()));
        let mut got = vec![0; data.len()];
        source.recv_bulk(&mut got).unwrap();
        assert_eq!(got, data);
        // An unread bulk section is skipped by the next head.
        sink.send(&h1, &b1).unwrap();
        assert_eq!(source.recv_head().unwrap().header.request_id, 2);
        assert_eq!(source.recv_head().unwrap().header.request_id, 1);
        assert_eq!(source.bulk_remaining(), data.len());
        sink.send(&h2, &b2).unwrap();
        assert_eq!(source.recv_head().unwrap().header.request_id, 2);
    }

    #[test]
    fn a_dropped_sink_ends_the_stream_cleanly_and_a_bad_header_is_refused() {
        let ((mut sink, _s), (_w, mut source)) = duplex();
        sink.send(&[0xff; HEADER_LEN], &[]).unwrap();
        assert!(matches!(source.recv_head(), Err(TransportError::Malformed(_))));
        let ((sink, _s), (_w, mut source)) = duplex();
        drop(sink);
        assert!(matches!(source.recv_head(), Err(TransportError::Closed)));
    }
}
