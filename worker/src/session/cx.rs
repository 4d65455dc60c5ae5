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
///
/// The queue is bounded in bytes: a copy whose reply is to come later reserves its bytes
/// first ([`try_reserve`](Self::try_reserve)) and holds them until its frame has been
/// written, so a client that never reads its replies holds at most the bound.
#[derive(Debug)]
pub struct LateReplies {
    queue: Mutex<QueueState>,
    /// Most bytes reserved or queued at once.
    limit: usize,
    queued: Condvar,
    /// Signalled when a frame leaves the queue or the queue is cleared.
    drained: Condvar,
    /// First failure of a fire-and-forget request since the last response, as a HIP status.
    deferred: AtomicI32,
}

#[derive(Debug, Default)]
struct QueueState {
    /// Encoded frames (head and control part, then bulk section) and the bytes reserved for
    /// them.
    frames: VecDeque<(Vec<u8>, Vec<u8>, usize)>,
    /// Bytes reserved by copies in flight and by queued frames.
    charged: usize,
    closed: bool,
}

impl Default for LateReplies {
    fn default() -> Self {
        Self::with_limit(crate::session::DEFAULT_MAX_QUEUED_REPLY_BYTES)
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl LateReplies {
    /// An empty queue that holds at most `limit` reply bytes.
    pub fn with_limit(limit: usize) -> Self {
        Self { queue: Mutex::default(), limit, queued: Condvar::new(), drained: Condvar::new(), deferred: AtomicI32::new(0) }
    }

    /// Reserves `bytes` for a reply to come; `false` (nothing reserved) when the session's
    /// bound would be passed. The reservation is handed to
    /// [`push_reserved`](Self::push_reserved) or given back with [`release`](Self::release).
    pub fn try_reserve(&self, bytes: usize) -> bool {
        let mut q = lock(&self.queue);
        match q.charged.checked_add(bytes) {
            Some(total) if total <= self.limit => {
                q.charged = total;
                true
            }
            _ => false,
        }
    }

    /// Gives back a reservation whose reply will not be queued.
    pub fn release(&self, bytes: usize) {
        let mut q = lock(&self.queue);
        q.charged = q.charged.saturating_sub(bytes);
    }

    /// Bytes reserved or queued now.
    pub fn charged_bytes(&self) -> usize {
        lock(&self.queue).charged
    }

    /// Waits until at most `bytes` are reserved or queued (the writer took the rest), at most
    /// `timeout`; whether they are.
    pub fn wait_charged_at_most(&self, bytes: usize, timeout: std::time::Duration) -> bool {
        let until = std::time::Instant::now() + timeout;
        let mut q = lock(&self.queue);
        loop {
            if q.charged <= bytes {
                return true;
            }
            let left = until.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return false;
            }
            q = self.drained.wait_timeout(q, left).unwrap_or_else(|p| p.into_inner()).0;
        }
    }

    /// The bound on [`charged_bytes`](Self::charged_bytes).
    pub fn limit(&self) -> usize {
        self.limit
    }

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
        self.push_with(0, |buf, aux| response.encode_frame(buf, request_id, aux));
    }

    /// Queues a success response for which `reserved` bytes were reserved; they are given
    /// back once the frame has been taken off the queue.
    pub fn push_reserved(&self, request_id: u64, response: &Response<'_>, reserved: usize) {
        self.push_with(reserved, |buf, aux| response.encode_frame(buf, request_id, aux));
    }

    /// [`push_reserved`](Self::push_reserved) for the response `response(&bulk)` whose bulk
    /// section is `bulk`: the bytes are moved into the queue, not copied.
    pub fn push_reserved_bulk(&self, request_id: u64, bulk: Vec<u8>, reserved: usize, response: impl for<'r> Fn(&'r [u8]) -> Response<'r>) {
        let head = self.encode_head(reserved, |buf, aux| {
            let frame = response(&bulk).encode_frame(buf, request_id, aux)?;
            if frame.bulk.len() != bulk.len() {
                return Err(EncodeError::InvalidValue { what: "a response whose bulk section is not the bytes given" });
            }
            Ok(frame.head_len)
        });
        if let Some(head) = head {
            self.enqueue(head, bulk, reserved);
        }
    }

    /// Queues an error response for a request of raw opcode `opcode`.
    pub fn push_error(&self, request_id: u64, opcode: u16, status: Status, message: &str) {
        let reply = ErrorReply { status, message: truncate_utf8(message, proto_core::limits::MAX_NAME_LEN).into() };
        self.push_with(0, |buf, aux| {
            let meta = FrameMeta { opcode, flags: Flags::RESPONSE | Flags::ERROR, request_id, credits: 0, aux };
            encode_frame(buf, meta, &reply)
        });
    }

    fn push_with<'b>(&self, reserved: usize, encode: impl Fn(&mut [u8], i32) -> Result<proto_core::EncodedFrame<'b>, EncodeError>) {
        let mut bulk = Vec::new();
        let head = self.encode_head(reserved, |buf, aux| {
            let frame = encode(buf, aux)?;
            bulk = frame.bulk.to_vec();
            Ok(frame.head_len)
        });
        if let Some(head) = head {
            self.enqueue(head, bulk, reserved);
        }
    }

    /// The head (and control part) `encode` writes, or `None` when it cannot be encoded (the
    /// reservation is given back).
    fn encode_head(&self, reserved: usize, mut encode: impl FnMut(&mut [u8], i32) -> Result<usize, EncodeError>) -> Option<Vec<u8>> {
        let aux = self.take_deferred();
        let mut buf = vec![0u8; 256];
        let head_len = loop {
            match encode(&mut buf, aux) {
                Ok(head_len) => break head_len,
                Err(EncodeError::BufferTooSmall { required }) => buf.resize(required, 0),
                Err(EncodeError::InvalidValue { what }) => {
                    tracing::error!(what, "response could not be encoded");
                    self.restore_deferred(aux);
                    self.release(reserved);
                    return None;
                }
            }
        };
        buf.truncate(head_len);
        Some(buf)
    }

    fn enqueue(&self, head: Vec<u8>, bulk: Vec<u8>, reserved: usize) {
        let mut q = lock(&self.queue);
        if q.closed {
            q.charged = q.charged.saturating_sub(reserved);
        } else {
            q.frames.push_back((head, bulk, reserved));
            self.queued.notify_one();
        }
    }

    /// The oldest queued frame (its head and control part, and its bulk section), if any. Its
    /// reservation is given back: the frame is the caller's now, about to be written.
    pub fn pop(&self) -> Option<(Vec<u8>, Vec<u8>)> {
        let mut q = lock(&self.queue);
        let (head, bulk, reserved) = q.frames.pop_front()?;
        q.charged = q.charged.saturating_sub(reserved);
        self.drained.notify_all();
        Some((head, bulk))
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
        let mut q = lock(&self.queue);
        let freed: usize = q.frames.drain(..).map(|(_, _, reserved)| reserved).sum();
        q.charged = q.charged.saturating_sub(freed);
        self.drained.notify_all();
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
