//! What handlers may use of the connection: the bulk section of the current request, the
//! reply path (shared with stream executors that answer asynchronous copies later), and the
//! deferred-error slot of fire-and-forget requests.

use proto_core::frame::{encode_frame, FrameMeta};
use proto_core::wire::ErrorReply;
use proto_core::{EncodeError, Flags, Opcode, Response, Status};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use transport_tcp::{FrameSink, FrameSource, TransportError};

/// The reply path of one connection. Cloned (via `Arc`) into completion callbacks that run on
/// stream executors, so a reply can be sent from any thread; one lock keeps frames whole.
pub struct ReplySender {
    inner: Mutex<ReplyInner>,
    /// First failure of a fire-and-forget request since the last response, as a HIP status.
    deferred: AtomicI32,
}

struct ReplyInner {
    sink: Box<dyn FrameSink>,
    buf: Vec<u8>,
    broken: bool,
}

impl ReplySender {
    /// Wraps the connection's sending half.
    pub fn new(sink: Box<dyn FrameSink>) -> Arc<Self> {
        Arc::new(Self {
            inner: Mutex::new(ReplyInner { sink, buf: vec![0; 4096], broken: false }),
            deferred: AtomicI32::new(0),
        })
    }

    /// Records the failure of a request that wanted no reply; the first one wins until the
    /// next response carries it to the client.
    pub fn defer(&self, status: Status) {
        let _ = self.deferred.compare_exchange(0, status.0, Ordering::AcqRel, Ordering::Acquire);
    }

    /// Sends a success response.
    pub fn send_response(&self, request_id: u64, response: &Response<'_>) -> Result<(), TransportError> {
        self.send_with(|buf, aux| response.encode_frame(buf, request_id, aux))
    }

    /// Sends an error response for a request of raw opcode `opcode`.
    pub fn send_error(&self, request_id: u64, opcode: u16, status: Status, message: &str) -> Result<(), TransportError> {
        let message = truncate_utf8(message, proto_core::limits::MAX_NAME_LEN);
        let reply = ErrorReply { status, message: message.into() };
        self.send_with(|buf, aux| {
            let meta = FrameMeta { opcode, flags: Flags::RESPONSE | Flags::ERROR, request_id, credits: 0, aux };
            encode_frame(buf, meta, &reply)
        })
    }

    fn send_with<'b>(
        &self,
        encode: impl Fn(&mut [u8], i32) -> Result<proto_core::EncodedFrame<'b>, EncodeError>,
    ) -> Result<(), TransportError> {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.broken {
            return Err(TransportError::Closed);
        }
        let aux = self.deferred.swap(0, Ordering::AcqRel);
        let inner = &mut *inner;
        let frame = loop {
            match encode(&mut inner.buf, aux) {
                Ok(frame) => break frame,
                Err(EncodeError::BufferTooSmall { required }) => inner.buf.resize(required, 0),
                Err(EncodeError::InvalidValue { what }) => {
                    tracing::error!(what, "response could not be encoded");
                    return Err(TransportError::Io(std::io::Error::other(format!("unencodable response: {what}"))));
                }
            }
        };
        let result = inner.sink.send(&inner.buf[..frame.head_len], frame.bulk);
        if result.is_err() {
            inner.broken = true;
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
