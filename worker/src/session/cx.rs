//! What a handler knows about the request besides its message ([`CallCx`], plain data), and
//! the session's queue of replies produced later ([`LateReplies`]). Neither touches a socket:
//! the driver ([`crate::driver`]) reads and writes the transport and drains the queue.

use proto_core::frame::{encode_frame, FrameMeta};
use proto_core::wire::ErrorReply;
use proto_core::{EncodeError, Flags, Opcode, Response, Status};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// What the driver did with a request's bulk section before the handler ran (calls the
/// table declares [`proto_core::BulkWay::RequestToDevice`]).
#[derive(Debug, Default)]
pub enum PlacedBulk {
    /// Nothing was placed: the bytes, if any, are in the request message.
    #[default]
    None,
    /// `len` bytes were written into the destination's device memory: by the transport
    /// itself (`direct`, GPUDirect) or through the backend.
    InDevice { len: usize, direct: bool },
    /// The bytes were read into a buffer the handler owns (work queued behind a stream keeps
    /// them until it runs).
    Owned(Vec<u8>),
}

/// The request being handled, as the driver describes it to the handler.
#[derive(Debug)]
pub struct CallCx {
    /// Id of the request.
    pub request_id: u64,
    /// Its opcode.
    pub opcode: Opcode,
    /// Whether the client wants no reply (fire-and-forget).
    pub no_reply: bool,
    /// Worker monotonic time in nanoseconds when the request arrived.
    pub now_ns: u64,
    /// Bulk data the driver placed before the handler ran.
    pub placed: PlacedBulk,
    /// Set by GOODBYE: the driver closes the connection once the reply is out.
    pub close_after_reply: bool,
}

impl CallCx {
    /// A context for request `request_id` of `opcode`.
    pub fn new(request_id: u64, opcode: Opcode, no_reply: bool, now_ns: u64) -> Self {
        Self { request_id, opcode, no_reply, now_ns, placed: PlacedBulk::None, close_after_reply: false }
    }
}

/// Replies produced after their request's handler returned (an asynchronous device-to-host
/// copy answers when its stream reaches it), and the deferred status of failed
/// fire-and-forget requests.
///
/// Stream executors push encoded frames here and never block on a socket: a client that is
/// busy writing a large upload does not read, and an executor stuck in a write would stall
/// the stream — and with it the null-stream barrier the upload waits for. The driver's
/// writer drains the queue, and every direct reply drains it first, so replies leave in the
/// order they were produced.
#[derive(Debug, Default)]
pub struct LateReplies {
    queue: Mutex<QueueState>,
    queued: Condvar,
    /// First failure of a fire-and-forget request since the last response, as a HIP status.
    deferred: AtomicI32,
}

#[derive(Debug, Default)]
struct QueueState {
    /// Encoded frames and where their bulk section starts.
    frames: VecDeque<(Vec<u8>, usize)>,
    closed: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl LateReplies {
    /// Records the failure of a request that wanted no reply; the first one wins until the
    /// next response carries it to the client.
    pub fn defer(&self, status: Status) {
        let _ = self.deferred.compare_exchange(0, status.0, Ordering::AcqRel, Ordering::Acquire);
    }

    /// Takes the deferred status for the response about to be sent (0: none).
    pub fn take_deferred(&self) -> i32 {
        self.deferred.swap(0, Ordering::AcqRel)
    }

    /// Puts a status taken with [`take_deferred`](Self::take_deferred) back, unless a newer
    /// one arrived meanwhile (the response that was to carry it was not sent).
    pub fn restore_deferred(&self, status: i32) {
        if status != 0 {
            let _ = self.deferred.compare_exchange(0, status, Ordering::AcqRel, Ordering::Acquire);
        }
    }

    /// Queues a success response.
    pub fn push_response(&self, request_id: u64, response: &Response<'_>) {
        self.push_with(|buf, aux| response.encode_frame(buf, request_id, aux));
    }

    /// Queues an error response for a request of raw opcode `opcode`.
    pub fn push_error(&self, request_id: u64, opcode: u16, status: Status, message: &str) {
        let reply = ErrorReply { status, message: truncate_utf8(message, proto_core::limits::MAX_NAME_LEN).into() };
        self.push_with(|buf, aux| {
            let meta = FrameMeta { opcode, flags: Flags::RESPONSE | Flags::ERROR, request_id, credits: 0, aux };
            encode_frame(buf, meta, &reply)
        });
    }

    fn push_with<'b>(&self, encode: impl Fn(&mut [u8], i32) -> Result<proto_core::EncodedFrame<'b>, EncodeError>) {
        let aux = self.take_deferred();
        let mut buf = vec![0u8; 256];
        let frame = loop {
            match encode(&mut buf, aux) {
                Ok(frame) => break frame,
                Err(EncodeError::BufferTooSmall { required }) => buf.resize(required, 0),
                Err(EncodeError::InvalidValue { what }) => {
                    tracing::error!(what, "response could not be encoded");
                    self.restore_deferred(aux);
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

    /// The oldest queued frame (encoded, with its head length), if any.
    pub fn pop(&self) -> Option<(Vec<u8>, usize)> {
        lock(&self.queue).frames.pop_front()
    }

    /// Waits until a frame is queued (`true`) or the queue is closed and empty (`false`).
    pub fn wait(&self) -> bool {
        loop {
            if let Some(queued) = self.wait_timeout(std::time::Duration::from_secs(3600)) {
                return queued;
            }
        }
    }

    /// As [`wait`](Self::wait), for at most `timeout`: `None` when it passed with nothing
    /// queued.
    pub fn wait_timeout(&self, timeout: std::time::Duration) -> Option<bool> {
        let until = std::time::Instant::now() + timeout;
        let mut q = lock(&self.queue);
        loop {
            if !q.frames.is_empty() {
                return Some(true);
            }
            if q.closed {
                return Some(false);
            }
            let left = until.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return None;
            }
            q = self.queued.wait_timeout(q, left).unwrap_or_else(|p| p.into_inner()).0;
        }
    }

    /// Drops every queued frame (the link is gone).
    pub fn clear(&self) {
        lock(&self.queue).frames.clear();
    }

    /// No more frames will be queued; [`wait`](Self::wait) returns `false` once empty.
    pub fn close(&self) {
        lock(&self.queue).closed = true;
        self.queued.notify_all();
    }

    /// Frames waiting.
    pub fn len(&self) -> usize {
        lock(&self.queue).frames.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The longest prefix of `s` within `max` bytes that ends on a character boundary.
pub fn truncate_utf8(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}
