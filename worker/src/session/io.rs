//! What handlers may use of the connection: the bulk section of the current request, the
//! reply path (shared with stream executors that answer asynchronous copies later), and the
//! deferred-error slot of fire-and-forget requests.

use proto_core::frame::{encode_frame, FrameMeta};
use proto_core::wire::ErrorReply;
use proto_core::{EncodeError, Flags, Opcode, Response, Status};
use std::sync::atomic::{AtomicI32, Ordering};
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;
use transport_core::{FrameSink, FrameSource, TransportError};

/// The reply path of one connection.
///
/// Two ways out, one order: the session thread writes its replies directly (zero-copy from
/// device memory where possible), while stream executors answering asynchronous copies only
/// *queue* an owned frame for a writer thread. An executor must never block on the socket:
/// a client that is busy writing a large upload does not read, and an executor stuck in a
/// write would stall the stream — and with it the null-stream barrier the upload waits for
/// (a distributed deadlock). Direct writes first drain the queue, so replies leave in the
/// order they were produced.
pub struct ReplySender {
    sink: Mutex<SinkState>,
    queue: Mutex<QueueState>,
    queued: Condvar,
    /// First failure of a fire-and-forget request since the last response, as a HIP status.
    deferred: AtomicI32,
}

struct SinkState {
    sink: Box<dyn FrameSink>,
    buf: Vec<u8>,
    broken: bool,
}

#[derive(Default)]
struct QueueState {
    /// Encoded frames and where their bulk section starts (sent as head and bulk, so a
    /// transport can place the bulk itself).
    frames: VecDeque<(Vec<u8>, usize)>,
    closed: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ReplySender {
    /// Wraps the connection's sending half and starts its writer thread (which ends after
    /// [`ReplySender::close`] once the queue is empty).
    pub fn new(sink: Box<dyn FrameSink>) -> Arc<Self> {
        let sender = Arc::new(Self {
            sink: Mutex::new(SinkState { sink, buf: vec![0; 4096], broken: false }),
            queue: Mutex::default(),
            queued: Condvar::new(),
            deferred: AtomicI32::new(0),
        });
        let writer = Arc::clone(&sender);
        let spawned = std::thread::Builder::new().name("hip-session-writer".into()).spawn(move || writer.writer_loop());
        if let Err(e) = spawned {
            tracing::error!(%e, "cannot start the reply writer; queued replies will go out with the next direct reply");
        }
        sender
    }

    /// Stops the writer thread once everything queued has been written (or the link died).
    pub fn close(&self) {
        lock(&self.queue).closed = true;
        self.queued.notify_all();
    }

    fn writer_loop(&self) {
        loop {
            {
                let mut q = lock(&self.queue);
                while q.frames.is_empty() && !q.closed {
                    q = self.queued.wait(q).unwrap_or_else(|p| p.into_inner());
                }
                if q.frames.is_empty() && q.closed {
                    return;
                }
            }
            let mut sink = lock(&self.sink);
            if self.drain_queue(&mut sink).is_err() {
                lock(&self.queue).frames.clear();
            }
        }
    }

    /// Writes every queued frame; called with the sink locked.
    fn drain_queue(&self, sink: &mut SinkState) -> Result<(), TransportError> {
        loop {
            let Some((frame, head_len)) = lock(&self.queue).frames.pop_front() else { return Ok(()) };
            if sink.broken {
                return Err(TransportError::Closed);
            }
            if let Err(e) = sink.sink.send(&frame[..head_len], &frame[head_len..]) {
                sink.broken = true;
                return Err(e);
            }
        }
    }

    /// Records the failure of a request that wanted no reply; the first one wins until the
    /// next response carries it to the client.
    pub fn defer(&self, status: Status) {
        let _ = self.deferred.compare_exchange(0, status.0, Ordering::AcqRel, Ordering::Acquire);
    }

    /// Sends a success response now (from the session thread).
    pub fn send_response(&self, request_id: u64, response: &Response<'_>) -> Result<(), TransportError> {
        self.send_with(|buf, aux| response.encode_frame(buf, request_id, aux))
    }

    /// Sends a success response whose bulk is `len` bytes of device memory at `addr` (the
    /// response itself is encoded without bulk) straight from the device, when the transport
    /// can (GPUDirect RDMA into the client's landing). `Ok(false)`: nothing was sent; the
    /// caller stages the bytes and sends them with [`send_response`](Self::send_response).
    pub fn send_response_from_device(&self, request_id: u64, response: &Response<'_>, addr: u64, len: u64) -> Result<bool, TransportError> {
        let mut guard = lock(&self.sink);
        let state = &mut *guard;
        self.drain_queue(state)?;
        if state.broken {
            return Err(TransportError::Closed);
        }
        let frame = loop {
            match response.encode_frame(&mut state.buf, request_id, 0) {
                Ok(frame) => break frame,
                Err(EncodeError::BufferTooSmall { required }) => state.buf.resize(required, 0),
                Err(_) => return Ok(false),
            }
        };
        let head_len = frame.head_len;
        let Ok(mut header) = proto_core::FrameHeader::parse(&state.buf[..proto_core::header::HEADER_LEN]) else { return Ok(false) };
        let Ok(bulk_len) = u32::try_from(len) else { return Ok(false) };
        header.bulk_len = bulk_len;
        header.flags = header.flags | Flags::BULK;
        // The deferred error rides on this response only if it is really sent.
        header.aux = self.deferred.load(Ordering::Acquire);
        state.buf[..proto_core::header::HEADER_LEN].copy_from_slice(&header.emit());
        match state.sink.send_from_device(&state.buf[..head_len], addr, len as usize) {
            Ok(true) => {
                let _ = self.deferred.compare_exchange(header.aux, 0, Ordering::AcqRel, Ordering::Acquire);
                Ok(true)
            }
            Ok(false) => Ok(false),
            Err(e) => {
                state.broken = true;
                Err(e)
            }
        }
    }

    /// Sends an error response for a request of raw opcode `opcode` now.
    pub fn send_error(&self, request_id: u64, opcode: u16, status: Status, message: &str) -> Result<(), TransportError> {
        let message = truncate_utf8(message, proto_core::limits::MAX_NAME_LEN);
        let reply = ErrorReply { status, message: message.into() };
        self.send_with(|buf, aux| {
            let meta = FrameMeta { opcode, flags: Flags::RESPONSE | Flags::ERROR, request_id, credits: 0, aux };
            encode_frame(buf, meta, &reply)
        })
    }

    /// Queues a success response for the writer thread; never blocks on the socket (for
    /// stream executors).
    pub fn queue_response(&self, request_id: u64, response: &Response<'_>) {
        self.queue_with(|buf, aux| response.encode_frame(buf, request_id, aux));
    }

    /// Queues an error response for the writer thread.
    pub fn queue_error(&self, request_id: u64, opcode: u16, status: Status, message: &str) {
        let message = truncate_utf8(message, proto_core::limits::MAX_NAME_LEN);
        let reply = ErrorReply { status, message: message.into() };
        self.queue_with(|buf, aux| {
            let meta = FrameMeta { opcode, flags: Flags::RESPONSE | Flags::ERROR, request_id, credits: 0, aux };
            encode_frame(buf, meta, &reply)
        });
    }

    fn queue_with<'b>(&self, encode: impl Fn(&mut [u8], i32) -> Result<proto_core::EncodedFrame<'b>, EncodeError>) {
        let aux = self.deferred.swap(0, Ordering::AcqRel);
        let mut buf = vec![0u8; 256];
        let frame = loop {
            match encode(&mut buf, aux) {
                Ok(frame) => break frame,
                Err(EncodeError::BufferTooSmall { required }) => buf.resize(required, 0),
                Err(EncodeError::InvalidValue { what }) => {
                    tracing::error!(what, "response could not be encoded");
                    return;
                }
            }
        };
        let head_len = frame.head_len;
        buf.truncate(head_len);
        buf.extend_from_slice(frame.bulk);
        let mut q = lock(&self.queue);
        if !q.closed {
            q.frames.push_back((buf, head_len));
            self.queued.notify_one();
        }
    }

    fn send_with<'b>(
        &self,
        encode: impl Fn(&mut [u8], i32) -> Result<proto_core::EncodedFrame<'b>, EncodeError>,
    ) -> Result<(), TransportError> {
        let mut guard = lock(&self.sink);
        let state = &mut *guard;
        self.drain_queue(state)?;
        if state.broken {
            return Err(TransportError::Closed);
        }
        let aux = self.deferred.swap(0, Ordering::AcqRel);
        let frame = loop {
            match encode(&mut state.buf, aux) {
                Ok(frame) => break frame,
                Err(EncodeError::BufferTooSmall { required }) => state.buf.resize(required, 0),
                Err(EncodeError::InvalidValue { what }) => {
                    tracing::error!(what, "response could not be encoded");
                    return Err(TransportError::Io(std::io::Error::other(format!("unencodable response: {what}"))));
                }
            }
        };
        let result = state.sink.send(&state.buf[..frame.head_len], frame.bulk);
        if result.is_err() {
            state.broken = true;
        }
        result
    }
}

fn truncate_utf8(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Driver services for the request being handled.
pub struct WorkerIo {
    /// The connection's receiving half (positioned at the current frame's bulk section).
    pub source: Box<dyn FrameSource>,
    /// The reply path.
    pub replies: Arc<ReplySender>,
    /// Id of the request being handled.
    pub request_id: u64,
    /// Opcode of the request being handled.
    pub opcode: Opcode,
    /// Whether the client wants no reply (fire-and-forget).
    pub no_reply: bool,
    /// Set by GOODBYE: close the connection once the reply is out.
    pub close_after_reply: bool,
    started: Instant,
}

impl WorkerIo {
    /// Services over a connection's halves.
    pub fn new(source: Box<dyn FrameSource>, replies: Arc<ReplySender>) -> Self {
        Self {
            source,
            replies,
            request_id: 0,
            opcode: Opcode::Ping,
            no_reply: false,
            close_after_reply: false,
            started: Instant::now(),
        }
    }

    /// Worker monotonic time in nanoseconds.
    pub fn now_ns(&self) -> u64 {
        self.started.elapsed().as_nanos() as u64
    }
}
