//! The driver: the only worker code that reads and writes a connection.
//!
//! [`serve`] runs one session over a transport: it reads a frame head, places the request's
//! bulk section where the opcode table says ([`BulkWay`]: buffered for the handler, or into
//! the device memory the session names), parses the request, dispatches it to the session's
//! handlers — which do no I/O — and sends what they return ([`Outcome`]). [`ReplyWriter`]
//! owns the sending half; its writer thread sends the replies the session produces later
//! ([`LateReplies`]).
//!
//! While a request is being handled (a synchronize waiting for a long kernel), the writer
//! thread sends a heartbeat — an unsolicited PONG with request id 0 — every
//! [`WORKER_HEARTBEAT`] in which nothing else went out, so a waiting client can tell a busy
//! worker from a frozen one (`docs/PROTOCOL.md`, section 9).
//!
//! A malformed frame gets an error reply; a frame whose header cannot be trusted also ends
//! the connection, since the byte stream cannot be resynchronised. Nothing a client sends
//! can take down the worker or another session.

use crate::metrics::{Metrics, OpenSession, Refusal};
use crate::resume::ReplayRecord;
use crate::session::{BulkDestination, CallCx, Failure, LateReplies, PlacedBulk, Session};
use crate::stripes::{self, StripeWork, StripedCopy};
use proto_core::frame::{encode_frame, FrameMeta};
use proto_core::limits::{MAX_CONTROL_LEN, MAX_PREAUTH_CONTROL_LEN};
use proto_core::opcode::dispatch;
use proto_core::wire::ErrorReply;
use proto_core::{Admission, BulkWay, DecodeError, Delivery, EncodeError, Flags, FrameHeader, Opcode, Outcome, Request, Response, Status};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::Instant;
use transport_core::config::WORKER_HEARTBEAT;
use transport_core::{FrameSink, FrameSource, TransportError};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The sending half of a connection: direct replies from the request loop, and a writer
/// thread for the session's [`LateReplies`]. Direct replies drain the queue first, so
/// replies leave in the order they were produced.
pub struct ReplyWriter {
    sink: Mutex<SinkState>,
    late: Arc<LateReplies>,
    /// The session's record of the replies it sent (kept only with `RESUME`).
    replay: Arc<Mutex<ReplayRecord>>,
    metrics: Arc<Metrics>,
    /// A request is being handled: heartbeats are due while nothing else is sent.
    busy: AtomicBool,
    started: Instant,
}

struct SinkState {
    sink: Box<dyn FrameSink>,
    buf: Vec<u8>,
    broken: bool,
    /// The session moved on without this connection ([`ReplyWriter::retire`]): nothing more
    /// is taken from its late replies here.
    retired: bool,
    /// When the last frame went out.
    last_sent: Instant,
}

impl ReplyWriter {
    /// Wraps the connection's sending half and starts the writer thread for `late`, which
    /// ends once `late` is closed and empty.
    pub fn start(sink: Box<dyn FrameSink>, late: Arc<LateReplies>, replay: Arc<Mutex<ReplayRecord>>, metrics: Arc<Metrics>) -> Arc<Self> {
        let state = SinkState { sink, buf: vec![0; 4096], broken: false, retired: false, last_sent: Instant::now() };
        let writer = Arc::new(Self { sink: Mutex::new(state), late, replay, metrics, busy: AtomicBool::new(false), started: Instant::now() });
        let thread_writer = Arc::clone(&writer);
        let spawned = std::thread::Builder::new().name("hip-session-writer".into()).spawn(move || thread_writer.writer_loop());
        if let Err(e) = spawned {
            tracing::error!(%e, "cannot start the reply writer; late replies will go out with the next direct reply");
        }
        writer
    }

    fn writer_loop(&self) {
        loop {
            match self.late.wait_timeout(WORKER_HEARTBEAT) {
                Some(false) => return,
                Some(true) => {
                    let mut sink = lock(&self.sink);
                    if sink.retired {
                        return;
                    }
                    if self.drain(&mut sink).is_err() {
                        if lock(&self.replay).enabled() {
                            // A resumable session keeps its late replies for the connection
                            // that resumes it; this writer stops taking them.
                            sink.retired = true;
                            return;
                        }
                        self.late.clear();
                    }
                }
                None => self.heartbeat_if_due(),
            }
        }
    }

    /// Marks the start (`true`) or end of a request's handling: heartbeats go out meanwhile.
    pub fn set_busy(&self, busy: bool) {
        self.busy.store(busy, Ordering::Release);
    }

    /// Sends a heartbeat if a request is being handled and nothing went out for
    /// [`WORKER_HEARTBEAT`]. A sink held by someone else is sending already: nothing to add.
    fn heartbeat_if_due(&self) {
        if !self.busy.load(Ordering::Acquire) {
            return;
        }
        let mut state = match self.sink.try_lock() {
            Ok(state) => state,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return,
        };
        if state.broken || state.last_sent.elapsed() < WORKER_HEARTBEAT {
            return;
        }
        let pong = proto_core::wire::Pong { nonce: 0, worker_time_ns: self.started.elapsed().as_nanos() as u64, payload: (&[][..]).into() };
        let state = &mut *state;
        // Request id 0 and no deferred status: the frame answers nothing and carries nothing.
        let Ok(frame) = Response::Ping(pong).encode_frame(&mut state.buf, 0, 0) else { return };
        let head_len = frame.head_len;
        if state.sink.send(&state.buf[..head_len], &[]).is_err() {
            state.broken = true;
        }
        state.last_sent = Instant::now();
        tracing::trace!("heartbeat sent");
    }

    /// Writes every queued late reply; called with the sink locked.
    fn drain(&self, state: &mut SinkState) -> Result<(), TransportError> {
        loop {
            if state.retired || state.broken {
                return Err(TransportError::Closed);
            }
            let Some((head, bulk)) = self.late.pop() else { return Ok(()) };
            // Recorded before it is sent: a reply lost with the connection is re-sent, never
            // made again.
            self.record_reply(&head, &bulk);
            if let Err(e) = state.sink.send(&head, &bulk) {
                state.broken = true;
                return Err(e);
            }
            self.metrics.add_bytes_out((head.len() + bulk.len()) as u64);
            state.last_sent = Instant::now();
        }
    }

    /// The session goes on without this connection (it broke, or the session moved to a
    /// resumed one): this writer sends nothing more and takes no late reply. The sending
    /// half, for a connection whose session is to be another ([`crate::resume`]).
    pub fn retire(&self) -> Box<dyn FrameSink> {
        let mut state = lock(&self.sink);
        state.retired = true;
        std::mem::replace(&mut state.sink, Box::new(RetiredSink))
    }

    /// Keeps a reply frame (`head`, whose header names its request, then `bulk`) for a resume,
    /// when the session records replies; without `RESUME` (the default) the header is not
    /// even parsed.
    fn record_reply(&self, head: &[u8], bulk: &[u8]) {
        let mut replay = lock(&self.replay);
        if replay.enabled() {
            replay.record(request_id_of(head), head, bulk);
        }
    }

    /// Locks the sink after draining the queue; whether the link is still up.
    fn lock_for_reply(&self) -> (MutexGuard<'_, SinkState>, bool) {
        let mut state = lock(&self.sink);
        let up = self.drain(&mut state).is_ok() && !state.broken;
        (state, up)
    }

    /// Locks the sink after draining the queue; fails if the link is broken.
    fn ready(&self) -> Result<MutexGuard<'_, SinkState>, TransportError> {
        let mut state = lock(&self.sink);
        self.drain(&mut state)?;
        if state.broken {
            return Err(TransportError::Closed);
        }
        Ok(state)
    }

    fn send_encoded<'b>(&self, encode: impl Fn(&mut [u8], i32) -> Result<proto_core::EncodedFrame<'b>, EncodeError>) -> Result<(), TransportError> {
        // A broken link still records the reply: the executed request's answer is re-sent to
        // a client that resumes the session.
        let (mut guard, link_up) = self.lock_for_reply();
        let state = &mut *guard;
        let aux = self.late.take_deferred();
        let frame = loop {
            match encode(&mut state.buf, aux) {
                Ok(frame) => break frame,
                Err(EncodeError::BufferTooSmall { required }) => state.buf.resize(required, 0),
                Err(EncodeError::InvalidValue { what }) => {
                    self.late.restore_deferred(aux);
                    tracing::error!(what, "response could not be encoded");
                    return Err(TransportError::Io(std::io::Error::other(format!("unencodable response: {what}"))));
                }
            }
        };
        self.record_reply(&state.buf[..frame.head_len], frame.bulk);
        if !link_up {
            return Err(TransportError::Closed);
        }
        let result = state.sink.send(&state.buf[..frame.head_len], frame.bulk);
        if result.is_err() {
            state.broken = true;
        }
        self.metrics.add_bytes_out((frame.head_len + frame.bulk.len()) as u64);
        state.last_sent = Instant::now();
        result
    }

    /// Sends a success response now.
    pub fn send_response(&self, request_id: u64, response: &Response<'_>) -> Result<(), TransportError> {
        self.send_encoded(|buf, aux| response.encode_frame(buf, request_id, aux))
    }

    /// Sends an error response for a request of raw opcode `opcode` now.
    pub fn send_error(&self, request_id: u64, opcode: u16, status: Status, message: &str) -> Result<(), TransportError> {
        let reply = ErrorReply { status, message: crate::session::truncate_utf8(message, proto_core::limits::MAX_NAME_LEN).into() };
        self.send_encoded(|buf, aux| {
            let meta = FrameMeta { opcode, flags: Flags::RESPONSE | Flags::ERROR, request_id, credits: 0, aux };
            encode_frame(buf, meta, &reply)
        })
    }

    /// Passes on a frame that a session process produced, as it is (the relay,
    /// [`crate::sandbox::relay`]).
    pub fn forward(&self, head: &[u8], bulk: &[u8]) -> Result<(), TransportError> {
        let mut state = self.ready()?;
        let result = state.sink.send(head, bulk);
        if result.is_err() {
            state.broken = true;
        }
        self.metrics.add_bytes_out((head.len() + bulk.len()) as u64);
        state.last_sent = Instant::now();
        result
    }

    /// Sends a response whose bulk section is `bulk` (the response itself was encoded
    /// without one into `head`, see [`encode_head`]).
    pub fn send_head_with_bulk(&self, head: &mut [u8], bulk: &[u8]) -> Result<(), TransportError> {
        let (mut state, link_up) = self.lock_for_reply();
        let aux = self.late.take_deferred();
        if patch_head(head, bulk.len() as u64, aux).is_none() {
            self.late.restore_deferred(aux);
            return Err(TransportError::Io(std::io::Error::other("reply bulk over the frame limit")));
        }
        self.record_reply(head, bulk);
        if !link_up {
            return Err(TransportError::Closed);
        }
        let result = state.sink.send(head, bulk);
        if result.is_err() {
            state.broken = true;
        }
        self.metrics.add_bytes_out((head.len() + bulk.len()) as u64);
        state.last_sent = Instant::now();
        result
    }

    /// Sends a response whose bulk section is `len` bytes of device memory at `addr`
    /// straight from the device, when the transport can (GPUDirect RDMA into the client's
    /// landing). `Ok(false)`: nothing was sent.
    pub fn send_head_from_device(&self, head: &mut [u8], addr: u64, len: u64) -> Result<bool, TransportError> {
        let mut state = self.ready()?;
        let aux = self.late.take_deferred();
        if patch_head(head, len, aux).is_none() {
            self.late.restore_deferred(aux);
            return Ok(false);
        }
        match state.sink.send_from_device(head, addr, len as usize) {
            Ok(true) => {
                self.metrics.add_bytes_out(head.len() as u64 + len);
                state.last_sent = Instant::now();
                Ok(true)
            }
            Ok(false) => {
                self.late.restore_deferred(aux);
                Ok(false)
            }
            Err(e) => {
                state.broken = true;
                Err(e)
            }
        }
    }
}

/// The request id of an encoded frame (0 when it has none).
fn request_id_of(frame: &[u8]) -> u64 {
    proto_core::FrameHeader::parse(&frame[..proto_core::header::HEADER_LEN.min(frame.len())]).map_or(0, |h| h.request_id)
}

/// The sending half a retired [`ReplyWriter`] keeps: it sends nothing.
pub struct RetiredSink;

impl FrameSink for RetiredSink {
    fn send(&mut self, _head: &[u8], _bulk: &[u8]) -> Result<(), TransportError> {
        Err(TransportError::Closed)
    }
    fn queue(&mut self, _head: &[u8], _bulk: &[u8]) -> Result<(), TransportError> {
        Err(TransportError::Closed)
    }
    fn flush(&mut self) -> Result<(), TransportError> {
        Err(TransportError::Closed)
    }
    fn pending(&self) -> usize {
        0
    }
}

/// Encodes `response` (without bulk) as the head of request `request_id`'s reply.
pub fn encode_head(request_id: u64, response: &Response<'_>) -> Result<Vec<u8>, EncodeError> {
    let mut buf = vec![0u8; 256];
    loop {
        match response.encode_frame(&mut buf, request_id, 0) {
            Ok(frame) => {
                let head_len = frame.head_len;
                buf.truncate(head_len);
                return Ok(buf);
            }
            Err(EncodeError::BufferTooSmall { required }) => buf.resize(required, 0),
            Err(e) => return Err(e),
        }
    }
}

/// Sets a head's bulk length, BULK flag and deferred status. `None`: not a valid head, or
/// a bulk section over the frame limit.
fn patch_head(head: &mut [u8], bulk_len: u64, aux: i32) -> Option<()> {
    use proto_core::header::HEADER_LEN;
    let mut header = proto_core::FrameHeader::parse(head.get(..HEADER_LEN)?).ok()?;
    header.bulk_len = u32::try_from(bulk_len).ok().filter(|&n| n as usize <= proto_core::limits::MAX_BULK_LEN)?;
    header.flags = if bulk_len > 0 { header.flags | Flags::BULK } else { header.flags };
    header.aux = aux;
    head[..HEADER_LEN].copy_from_slice(&header.emit());
    Some(())
}

/// Runs `session` over `source` (requests) and `replies` until the client leaves, the
/// connection fails, or the session asks to close.
pub fn serve(session: &mut Session, source: &mut dyn FrameSource, replies: &ReplyWriter) -> Result<(), TransportError> {
    let open = session.metrics().session_opened();
    serve_until(session, source, replies, &open, false).map(|_| ())
}

/// Runs the handshake of `session` over `source` and `replies`: returns the session's
/// open-session count once the client is trusted (the session goes on elsewhere: a session
/// process), or `None` when the connection ended before.
pub fn serve_handshake(session: &mut Session, source: &mut dyn FrameSource, replies: &ReplyWriter) -> Result<Option<OpenSession>, TransportError> {
    let open = session.metrics().session_opened();
    Ok(serve_until(session, source, replies, &open, true)?.then_some(open))
}

/// Serves the rest of a session whose handshake [`serve_handshake`] did.
pub fn serve_trusted(session: &mut Session, source: &mut dyn FrameSource, replies: &ReplyWriter, open: OpenSession) -> Result<(), TransportError> {
    serve_until(session, source, replies, &open, false).map(drop)
}

/// The request loop; with `until_trusted` it returns `true` as soon as the client is trusted.
fn serve_until(
    session: &mut Session,
    source: &mut dyn FrameSource,
    replies: &ReplyWriter,
    _open: &OpenSession,
    until_trusted: bool,
) -> Result<bool, TransportError> {
    let started = Instant::now();
    let metrics = session.metrics();
    let mut control = Vec::new();
    let mut bulk = Vec::new();
    // Until the client is trusted, its frames are bounded by the header alone.
    let mut trusted = session.trusted();
    if !trusted {
        source.limit_control(MAX_PREAUTH_CONTROL_LEN);
    }
    loop {
        if trusted && until_trusted {
            return Ok(true);
        }
        let head = match source.recv_head() {
            Ok(head) => head,
            Err(TransportError::Closed) => return Ok(false),
            Err(TransportError::Malformed(e)) => {
                // The header itself is untrustworthy: say why, then close.
                let status = match e {
                    DecodeError::UnsupportedVersion { .. } => Status::UNSUPPORTED_VERSION,
                    DecodeError::TooLarge { .. } => Status::TOO_LARGE,
                    _ => Status::MALFORMED_FRAME,
                };
                let message = match e {
                    DecodeError::UnsupportedVersion { .. } => format!(
                        "frame refused: {e}: worker hip-worker {} speaks protocol {}..={}",
                        hip_remote_build_info::VERSION,
                        proto_core::header::MIN_PROTOCOL_VERSION,
                        proto_core::PROTOCOL_VERSION
                    ),
                    _ => format!("frame refused: {e}"),
                };
                let _ = replies.send_error(0, 0, status, &message);
                return Err(TransportError::Malformed(e));
            }
            Err(e) => return Err(e),
        };
        let header = head.header;
        metrics.add_bytes_in((proto_core::header::HEADER_LEN + head.control.len()) as u64 + u64::from(header.bulk_len));
        replies.set_busy(true);
        let handled = if header.bulk_len == 0 && trusted {
            // Nothing more to read for this frame (launches, most calls): its control part is
            // parsed where the transport holds it, not copied. (Before trust the source stays
            // at hand: a StripeJoin turns this connection into a stripe that reads on.)
            handle(session, None, replies, header, head.control, &mut bulk, started)
        } else {
            control.clear();
            control.extend_from_slice(head.control);
            handle(session, Some(source), replies, header, &control, &mut bulk, started)
        };
        replies.set_busy(false);
        match handled? {
            Handled::Next => {}
            Handled::Close => return Ok(false),
        }
        if !trusted && session.trusted() {
            trusted = true;
            source.limit_control(MAX_CONTROL_LEN);
        }
    }
}

/// What the request loop does after one request.
enum Handled {
    Next,
    Close,
}

/// Skips what is left of the frame's bulk section, if any.
fn skip_rest(source: &mut Option<&mut dyn FrameSource>) -> Result<(), TransportError> {
    match source.as_deref_mut() {
        Some(s) if s.bulk_remaining() > 0 => s.skip_bulk(),
        _ => Ok(()),
    }
}

/// Handles one request whose head has been read. `source` is `None` for a frame without a
/// bulk section (then `control` may still borrow the transport's buffer).
fn handle(
    session: &mut Session,
    mut source: Option<&mut dyn FrameSource>,
    replies: &ReplyWriter,
    header: proto_core::FrameHeader,
    control: &[u8],
    bulk: &mut Vec<u8>,
    started: Instant,
) -> Result<Handled, TransportError> {
    {
        // The session's metrics, which the writer records into too: no clone per request.
        let metrics = &*replies.metrics;
        let request_id = header.request_id;
        if !session.trusted() {
            if let Some((status, why)) = refused_before_trust(session, &header) {
                // Nothing of the frame's bulk is read, so nothing is allocated for it.
                metrics.refused(Refusal::Handshake);
                session.log_refused(why);
                replies.send_error(request_id, header.opcode, status, why)?;
                return Ok(Handled::Close);
            }
        }
        let no_reply = header.flags.contains(Flags::NO_REPLY);
        let now = Instant::now();
        let call = metrics.call_started(now);
        let late = session.late_replies();
        let reply_error = |status: Status, message: &str| -> Result<(), TransportError> {
            call.fail();
            if no_reply {
                late.defer(status);
                Ok(())
            } else {
                replies.send_error(request_id, header.opcode, status, message)
            }
        };
        let refuse = |source: &mut Option<&mut dyn FrameSource>, status: Status, message: &str| -> Result<(), TransportError> {
            skip_rest(source)?;
            reply_error(status, message)
        };
        let Some(opcode) = Opcode::from_u16(header.opcode) else {
            refuse(&mut source, Status::UNKNOWN_OPCODE, &format!("unknown opcode {:#06x}", header.opcode))?;
            return Ok(Handled::Next);
        };
        call.set_family(opcode.family());
        if header.flags.contains(Flags::RESPONSE) || header.flags.contains(Flags::ERROR) {
            refuse(&mut source, Status::MALFORMED_FRAME, "a response frame was sent to the worker")?;
            return Ok(Handled::Next);
        }
        if no_reply && opcode.delivery() == Delivery::Call {
            // Its reply is the point of the call (a handle, data): without one the client
            // could never learn it, so the table allows fire-and-forget only where it says so.
            let message = format!("{opcode} cannot be sent without a reply");
            call.fail();
            skip_rest(&mut source)?;
            replies.send_error(request_id, header.opcode, Status::MALFORMED_FRAME, &message)?;
            return Ok(Handled::Next);
        }
        let mut cx = CallCx::new(request_id, opcode, no_reply, now.duration_since(started).as_nanos() as u64);
        bulk.clear();
        let to_device = opcode.bulk() == BulkWay::RequestToDevice && header.bulk_len > 0;
        if let Some(s) = source.as_deref_mut().filter(|_| !to_device && header.bulk_len > 0) {
            bulk.resize(header.bulk_len as usize, 0);
            s.recv_bulk(bulk)?;
        }
        let request = match Request::parse(header.opcode, control, bulk) {
            Ok(request) => request,
            Err(e) => {
                tracing::debug!(%opcode, %e, "malformed request");
                refuse(&mut source, Status::MALFORMED_FRAME, &format!("{opcode}: {e}"))?;
                return Ok(Handled::Next);
            }
        };
        if let Request::StripeJoin(join) = &request {
            if !session.trusted() {
                let Some(source) = source else {
                    // serve_until keeps the source for every frame before trust.
                    replies.send_error(request_id, header.opcode, Status::UNKNOWN, "stripe join without its connection")?;
                    return Ok(Handled::Close);
                };
                if session.stripes_join_elsewhere() {
                    // The session's process joins it: the server hands it this connection,
                    // with the frame, once this loop returns.
                    let mut frame = header.emit().to_vec();
                    frame.extend_from_slice(control);
                    if header.bulk_len > 0 {
                        frame.extend_from_slice(bulk);
                    }
                    session.keep_handoff(crate::session::Handoff::Stripe, join.session_id, frame);
                    return Ok(Handled::Close);
                }
                return join_stripe(session, source, replies, request_id, join);
            }
        }
        if let Request::TransferFetch(fetch) = &request {
            if !session.trusted() && !session.greeted() && session.fetches_elsewhere() {
                // The grant is the source session's process's to check: the server hands it
                // this connection, with the frame, once this loop returns.
                let mut frame = header.emit().to_vec();
                frame.extend_from_slice(control);
                session.keep_handoff(crate::session::Handoff::Fetch, fetch.session_id, frame);
                return Ok(Handled::Close);
            }
        }
        // A request answered without reaching its handler (a refusal, a striped copy) counts as
        // executed too: a client that resumes the session after a break must not send it again
        // (its second answer would reach the client as a stray failure of a later call).
        let answered = |session: &Session| {
            if session.resumable() {
                lock(&session.replay_record()).executed(request_id);
            }
        };
        if session.trusted() {
            // After a sticky fault on one of its devices the session answers only errors.
            if let Err(Failure::Status(status, message)) = session.fault_gate() {
                answered(session);
                refuse(&mut source, status, &message)?;
                return Ok(Handled::Next);
            }
        }
        if let Some(copied) = session.stripe_lease().is_some().then(|| striped_copy(session, &request)).flatten() {
            answered(session);
            match copied {
                Ok(reply) => replies.send_response(request_id, &reply)?,
                Err(Failure::Status(status, message)) => reply_error(status, &message)?,
                Err(Failure::ReplyDeferred) => {}
            }
            return Ok(Handled::Next);
        }
        if to_device {
            // A frame with a bulk section always comes with its source (`serve_until`).
            let placed = match source.as_deref_mut() {
                Some(s) => place_bulk(session, s, &request, header.bulk_len as usize),
                None => Err(Placement::Refused(Failure::Status(Status::MALFORMED_FRAME, "bulk section without a source".into()))),
            };
            match placed {
                Ok(placed) => cx.placed = placed,
                Err(Placement::Refused(Failure::Status(status, message))) => {
                    answered(session);
                    refuse(&mut source, status, &message)?;
                    return Ok(Handled::Next);
                }
                Err(Placement::Refused(Failure::ReplyDeferred)) => return Ok(Handled::Next),
                Err(Placement::LinkFailed(e)) => return Err(e),
            }
        }
        tracing::trace!(session = session.id(), request_id, %opcode, no_reply, "request");
        let record = session.resumable().then(|| session.replay_record());
        let outcome = dispatch(session, &mut cx, request);
        // Executed: a client that resumes the session after a break does not send it again.
        if let Some(record) = &record {
            lock(record).executed(request_id);
        }
        let close = cx.close_after_reply;
        match outcome {
            Ok(_) if no_reply => {}
            Ok(Outcome::Reply(response)) => replies.send_response(request_id, &response)?,
            Ok(Outcome::ReplyFromDevice { reply, ptr, len }) => {
                let head = encode_head(request_id, &reply);
                drop(reply);
                match head {
                    Ok(mut head) => {
                        if let Err(Failure::Status(status, message)) = send_from_device(session, replies, &mut head, ptr, len)? {
                            reply_error(status, &message)?;
                        }
                    }
                    Err(e) => reply_error(Status::UNKNOWN, &format!("{opcode}: reply not encodable: {e}"))?,
                }
            }
            Ok(Outcome::Later) | Err(Failure::ReplyDeferred) => {}
            Err(Failure::Status(status, message)) => {
                tracing::debug!(session = session.id(), %opcode, ?status, %message, "request failed");
                if !session.trusted() {
                    // No session was established (version, authentication): refuse and close.
                    // The peer's address is in the connection's span.
                    call.fail();
                    metrics.refused(if status == Status::AUTH_FAILED { Refusal::Authentication } else { Refusal::Handshake });
                    tracing::warn!(?status, reason = %message, "login refused");
                    replies.send_error(request_id, header.opcode, status, &message)?;
                    return Ok(Handled::Close);
                }
                session.note_failure(status);
                // The device was reset under the call (another session's fault, the kernel
                // watchdog): the fault's error, not what the reset left the call with.
                if let Err(Failure::Status(status, message)) = session.fault_gate() {
                    reply_error(status, &message)?;
                } else {
                    reply_error(status, &message)?;
                }
            }
        }
        if close {
            return Ok(Handled::Close);
        }
        Ok(Handled::Next)
    }
}

/// Why a frame from a connection that is not trusted yet is refused, from its header alone:
/// only HELLO, then AUTHENTICATE (when the worker asked for it), each with a reply, no bulk
/// section and a small control part (the transport enforces [`MAX_PREAUTH_CONTROL_LEN`]).
fn refused_before_trust(session: &Session, header: &FrameHeader) -> Option<(Status, &'static str)> {
    // The opcode table says which calls an untrusted connection may send, and when.
    let admission = Opcode::from_u16(header.opcode).map_or(Admission::Trusted, Opcode::admission);
    let admitted = match admission {
        Admission::Greeting | Admission::StripeGreeting | Admission::PeerGreeting => !session.greeted(),
        Admission::Authentication | Admission::AfterGreeting => session.greeted(),
        Admission::Trusted => false,
    };
    if !admitted {
        return Some(if session.greeted() {
            (Status::AUTH_REQUIRED, "authentication required: the request after WELCOME must be AUTHENTICATE")
        } else {
            (Status::HELLO_REQUIRED, "the first request must be HELLO")
        });
    }
    if header.bulk_len > 0 {
        return Some((Status::AUTH_REQUIRED, "a bulk section before authentication is refused"));
    }
    if header.flags.contains(Flags::NO_REPLY) || header.flags.contains(Flags::RESPONSE) || header.flags.contains(Flags::ERROR) {
        return Some((Status::AUTH_REQUIRED, "before authentication only plain HELLO and AUTHENTICATE requests are accepted"));
    }
    None
}

/// Why a request's bulk section was not placed.
enum Placement {
    /// The session refused the destination (bad pointer, stream): the bytes are still unread.
    Refused(Failure),
    /// The connection failed while the bytes were being read.
    LinkFailed(TransportError),
}

/// Reads the bulk section of a to-device request where the session says.
fn place_bulk(session: &mut Session, source: &mut dyn FrameSource, request: &Request<'_>, len: usize) -> Result<PlacedBulk, Placement> {
    match session.bulk_destination(request, len).map_err(Placement::Refused)? {
        BulkDestination::Device { stream, ptr, direct, finish } => {
            if direct && source.recv_bulk_to_device(ptr.0, len).map_err(Placement::LinkFailed)? {
                return Ok(PlacedBulk::InDevice { len, direct: true });
            }
            let mut received = Ok(());
            let mut fill = |bytes: &mut [u8]| received = source.recv_bulk(bytes);
            if finish {
                session.receive_into_device_finished(stream, ptr, len as u64, &mut fill).map_err(Placement::Refused)?;
            } else {
                session.receive_into_device(stream, ptr, len as u64, &mut fill).map_err(Placement::Refused)?;
            }
            received.map_err(Placement::LinkFailed)?;
            Ok(PlacedBulk::InDevice { len, direct: false })
        }
        BulkDestination::Owned => {
            let mut data = Vec::new();
            if data.try_reserve_exact(len).is_err() {
                return Err(Placement::Refused(Failure::new(Status::OUT_OF_MEMORY, "worker cannot buffer the copy")));
            }
            data.resize(len, 0);
            source.recv_bulk(&mut data).map_err(Placement::LinkFailed)?;
            Ok(PlacedBulk::Owned(data))
        }
    }
}

/// Sends a reply whose bulk is device memory: straight from the device where the transport
/// can, else through the backend (zero-copy on the host backend, staged on GPUs).
fn send_from_device(session: &Session, replies: &ReplyWriter, head: &mut [u8], ptr: u64, len: u64) -> Result<Result<(), Failure>, TransportError> {
    if session.gpu_direct_possible() && replies.send_head_from_device(head, ptr, len)? {
        return Ok(Ok(()));
    }
    let mut sent = Ok(());
    let read = session.read_device_bytes(ptr, len, &mut |bytes| sent = replies.send_head_with_bulk(head, bytes));
    sent?;
    Ok(read)
}

/// Serves a connection whose first request is `StripeJoin`: once joined, it carries its
/// session's striped copies until the session ends ([`stripes::serve_stripe`]); a refused
/// join closes it.
fn join_stripe(
    session: &mut Session,
    source: &mut dyn FrameSource,
    replies: &ReplyWriter,
    request_id: u64,
    join: &proto_core::wire::StripeJoin<'_>,
) -> Result<Handled, TransportError> {
    match session.join_stripe(join) {
        Ok(jobs) => {
            // Joined: the connection is trusted (its pre-authentication deadline is met).
            session.trust_flag().store(true, Ordering::Release);
            replies.send_response(request_id, &Response::StripeJoin(proto_core::wire::Empty {}))?;
            // A stripe answers nothing but its chunks: no heartbeats while it waits for work.
            replies.set_busy(false);
            stripes::serve_stripe(jobs, source, replies);
        }
        Err(failure) => {
            let message = match &failure {
                Failure::Status(_, message) => message.as_str(),
                Failure::ReplyDeferred => "stripe join refused",
            };
            replies.metrics.refused(Refusal::Authentication);
            tracing::warn!(reason = %message, "stripe join refused");
            replies.send_error(request_id, Opcode::StripeJoin.raw(), Status::AUTH_FAILED, message)?;
        }
    }
    Ok(Handled::Close)
}

/// Runs a striped copy of a session that holds stripes: validates it, has every stripe move
/// its chunks (or, refused, consume or answer them) and, for a synchronous upload, waits for
/// the device writes. Answers the copy's reply; `None` when `request` is not a striped copy
/// (the session's handler answers it).
fn striped_copy(session: &mut Session, request: &Request<'_>) -> Option<Result<Response<'static>, Failure>> {
    match request {
        Request::MemcpyHtoDStriped(req) => Some(striped_upload(session, req).map(Response::MemcpyHtoDStriped)),
        Request::MemcpyDtoHStriped(req) => Some(striped_download(session, req).map(Response::MemcpyDtoHStriped)),
        _ => None,
    }
}

fn striped_upload(session: &mut Session, req: &proto_core::wire::MemcpyHtoDStriped) -> Result<proto_core::wire::Empty, Failure> {
    let backend = session.shared_backend();
    let copy = StripedCopy { copy_id: req.copy_id, len: req.len, stripes: req.stripes };
    let checked = session.striped_destination(req);
    let target = checked.as_ref().ok().copied();
    let make = checked.map(|(stream, dst)| move || StripeWork::Receive { dst, stream, backend: Arc::clone(&backend) });
    let lease = session.stripe_lease().ok_or_else(|| Failure::new(Status::NOT_SUPPORTED, "no stripes"))?;
    stripes::run_striped_copy(lease, &copy, true, make.as_ref().map(|f| f as &dyn Fn() -> StripeWork).map_err(stripes::same_failure))?;
    if let Some((stream, dst)) = target.filter(|_| req.sync && req.len > 0) {
        session.finish_striped_upload(stream, dst)?;
    }
    Ok(proto_core::wire::Empty {})
}

fn striped_download(session: &mut Session, req: &proto_core::wire::MemcpyDtoHStriped) -> Result<proto_core::wire::Empty, Failure> {
    let backend = session.shared_backend();
    let copy = StripedCopy { copy_id: req.copy_id, len: req.len, stripes: req.stripes };
    let make = session.striped_source(req).map(|(stream, src)| move || StripeWork::Send { src, stream, backend: Arc::clone(&backend) });
    let lease = session.stripe_lease().ok_or_else(|| Failure::new(Status::NOT_SUPPORTED, "no stripes"))?;
    stripes::run_striped_copy(lease, &copy, false, make.as_ref().map(|f| f as &dyn Fn() -> StripeWork).map_err(stripes::same_failure))?;
    Ok(proto_core::wire::Empty {})
}
