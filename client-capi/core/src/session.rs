//! [`ClientSession`]: what one client connection knows, without the connection.

use crate::batching::{Batching, Flush};
use crate::capture::{CaptureCount, DependencyArrays};
use crate::client_handles::ClientHandles;
use crate::client_memory::ClientMemory;
use crate::error::{status_to_hip, CallError, HipError, LOST};
use crate::liveness::{Expired, Timers};
use crate::managed::ManagedMirrors;
use crate::pending::PendingTable;
use crate::published::Published;
use crate::resume::Retention;
use crate::streams::StreamTable;
use crate::welcome::WelcomeInfo;
use proto_core::wire::{self, features, ErrorReply};
use proto_core::{calls, Call, Flags, FrameHeader, Message, Opcode, Request, Status};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The error the application sees when a broken connection could not be resumed (the
/// worker refused, with `why`, or could not be reached again): the lost connection's.
pub fn resume_failed(why: &str) -> CallError {
    CallError::new(HipError::NOT_INITIALIZED, format!("{LOST}: the session could not be resumed: {why}"))
}

/// The settings a session's timers need.
#[derive(Debug, Clone, Copy)]
pub struct SessionConfig {
    /// Silence after which a waiting client sends a PING.
    pub heartbeat: Duration,
    /// Silence after which the worker is given up as frozen or unreachable.
    pub liveness_timeout: Duration,
    /// Longest wait for a call's reply (`HIP_REMOTE_IO_TIMEOUT`; `None`: no deadline).
    pub call_timeout: Option<Duration>,
}

/// A submitted request, by its request id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ticket(u64);

impl Ticket {
    /// The frame's request id.
    pub fn request_id(self) -> u64 {
        self.0
    }
}

/// Where an expected reply's bulk data goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Landing {
    /// Application buffer address (kept as an integer: the session never touches it; the
    /// driver writes it while the application is inside a HIP call that promised the buffer
    /// stays valid).
    pub dst: usize,
    /// Bytes the reply carries.
    pub len: usize,
    /// For a 2D copy whose rows are not adjacent in `dst`: `(width, pitch)`; the reply's
    /// packed rows are scattered `pitch` bytes apart.
    pub rows: Option<(usize, usize)>,
}

/// What the worker is to do about a request's reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// A reply the driver waits for.
    Reply,
    /// Fire-and-forget (`NO_REPLY`): a failure becomes the deferred error.
    NoReply,
    /// A device-to-host copy whose reply's bulk lands in application memory. `awaited`: the
    /// driver waits for it now and reports its failure ([`Inbound::Failed`]); otherwise a
    /// failure becomes the deferred error.
    Landing {
        /// Where the bytes go.
        landing: Landing,
        /// Whether the driver waits for it now.
        awaited: bool,
    },
}

/// A request ready for the transport: `head` (frame header and control part) then `bulk`
/// (the application's bytes, never copied).
#[derive(Debug)]
pub struct Submitted<'s, 'r> {
    /// How its reply is recognised.
    pub ticket: Ticket,
    /// The encoded head.
    pub head: &'s [u8],
    /// The bulk section the opcode table declares it to carry.
    pub bulk: &'r [u8],
}

/// What the driver does with a frame's bulk section, after [`ClientSession::handle_frame`].
#[must_use]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inbound {
    /// The reply to an awaited request: read its bulk (`Ok`), or the worker's error reply.
    Reply(Ticket, Result<(), CallError>),
    /// An asynchronous copy's bytes: read them into the landing.
    Land(Ticket, Landing),
    /// An awaited copy failed; skip the bulk.
    Failed(Ticket, CallError),
    /// Text kernels printed: read the bulk and write it to the program's standard output.
    KernelOutput,
    /// Nothing waits for it (a PONG, a late reply, a recorded failure): skip the bulk.
    Skip,
}

#[derive(Debug, Clone, Copy)]
enum Pending {
    Reply,
    Landing { landing: Landing, awaited: bool },
}

/// One client session: request ids, the replies and landings still expected, the deferred
/// error of fire-and-forget requests, the error with which the worker ended the session, the
/// batching policy and the liveness timers.
pub struct ClientSession {
    next_id: u64,
    encode_buf: Vec<u8>,
    /// Replies and landings expected, by request id.
    pending: PendingTable<Pending>,
    /// First failure of a fire-and-forget request not yet reported to the application.
    deferred: Option<HipError>,
    /// The worker ended the session with an error frame of request id 0 (a refusal, or the
    /// death of the session's process): every call from then on fails with it.
    ended: Option<CallError>,
    batching: Batching,
    timers: Timers,
    /// Stream and event handles chosen here (`CLIENT_ALLOCATION`).
    client_handles: ClientHandles,
    /// Device memory placed here (`hipMalloc` without a round trip).
    client_memory: ClientMemory,
    /// Managed and device-visible host memory mirrored in the application's process.
    managed: ManagedMirrors,
    /// What readers that must not wait for the connection see: the count of running
    /// captures, device properties and flags, known device memory, graph host copies.
    published: Arc<Published>,
    /// Dependency arrays handed to the application by capture queries.
    dependency_arrays: DependencyArrays,
    /// Stream attributes the worker does not hold.
    streams: StreamTable,
    /// What the worker told us in WELCOME.
    welcome: WelcomeInfo,
    /// Whether operations go without a round trip (`CLIENT_ALLOCATION` negotiated and the
    /// client's configuration allowing it): client-chosen handles, posted small uploads.
    without_round_trip: bool,
    /// With `RESUME`: the requests the worker has not shown it executed.
    retention: Option<Retention>,
    /// Highest request id of any reply read.
    received_max: u64,
    /// After a resume: replies up to this id that nobody waits for are ones read before
    /// (the worker re-sends what it recorded): skipped whole, their `aux` already counted.
    replay_skip_through: u64,
    /// The expectation the last frame answered, until its bulk is read (put back if the
    /// connection breaks meanwhile).
    last_taken: Option<(u64, Pending)>,
}

impl ClientSession {
    /// A session whose first request is id 1.
    pub fn new(config: SessionConfig) -> Self {
        Self {
            next_id: 1,
            encode_buf: vec![0; 64 << 10],
            pending: PendingTable::default(),
            deferred: None,
            ended: None,
            batching: Batching::default(),
            timers: Timers::new(config.heartbeat, config.liveness_timeout, config.call_timeout),
            client_handles: ClientHandles::default(),
            client_memory: ClientMemory::default(),
            managed: ManagedMirrors::default(),
            published: Published::new_shared(),
            dependency_arrays: DependencyArrays::default(),
            streams: StreamTable::default(),
            welcome: WelcomeInfo::default(),
            without_round_trip: false,
            retention: None,
            received_max: 0,
            replay_skip_through: 0,
            last_taken: None,
        }
    }

    /// The handshake settled `welcome`; `client_alloc`: whether the client's configuration
    /// lets it place handles and memory itself (`HIP_REMOTE_CLIENT_ALLOC`).
    pub fn handle_welcome(&mut self, welcome: WelcomeInfo, client_alloc: bool) {
        self.without_round_trip = client_alloc && welcome.has(features::CLIENT_ALLOCATION);
        if welcome.has(features::RESUME) && !welcome.resume_secret.is_empty() {
            self.retention = Some(Retention::default());
        }
        self.welcome = welcome;
    }

    /// What the worker told us in WELCOME (default until the handshake).
    pub fn welcome(&self) -> &WelcomeInfo {
        &self.welcome
    }

    /// The worker's shared-memory socket, from its answer to the client's `SameHostOffer`.
    pub fn set_same_host_socket(&mut self, socket: Option<String>) {
        self.welcome.same_host_socket = socket;
    }

    /// Whether streams, events and small uploads go without a round trip: the worker
    /// negotiated `CLIENT_ALLOCATION` and the client's configuration allowed it.
    pub fn without_round_trip(&self) -> bool {
        self.without_round_trip
    }

    /// Encodes `req` as the next request; the returned head and bulk go to the transport
    /// next (in the order of submission). Fails once the worker has ended the session, and
    /// for a request that cannot be encoded (its id is then spent).
    pub fn submit<'s, 'r>(&'s mut self, req: &Request<'r>, delivery: Expect) -> Result<Submitted<'s, 'r>, CallError> {
        if let Some(ended) = &self.ended {
            return Err(ended.clone());
        }
        let id = self.next_id;
        self.next_id += 1;
        let flags = if delivery == Expect::NoReply { Flags::NO_REPLY } else { Flags::empty() };
        let (head_len, bulk) = self.encode(req, flags, id)?;
        if let Some(retention) = &mut self.retention {
            if matches!(req.opcode(), Opcode::MemcpyHtoDStriped | Opcode::MemcpyDtoHStriped) {
                // Its bytes travel on the stripes, which are not resumed.
                retention.unkept_through = id;
            } else {
                retention.keep(id, &self.encode_buf[..head_len], bulk);
            }
        }
        match delivery {
            Expect::Reply => {
                self.pending.insert(id, Pending::Reply);
            }
            Expect::Landing { landing, awaited } => {
                self.pending.insert(id, Pending::Landing { landing, awaited });
            }
            Expect::NoReply => {}
        }
        Ok(Submitted { ticket: Ticket(id), head: &self.encode_buf[..head_len], bulk })
    }

    fn encode<'r>(&mut self, req: &Request<'r>, flags: Flags, id: u64) -> Result<(usize, &'r [u8]), CallError> {
        loop {
            match req.encode_frame(&mut self.encode_buf, flags, id) {
                Ok(frame) => return Ok((frame.head_len, frame.bulk)),
                Err(proto_core::EncodeError::BufferTooSmall { required }) => self.encode_buf.resize(required, 0),
                Err(e) => return Err(CallError::new(HipError::INVALID_VALUE, format!("{}: {e}", req.opcode()))),
            }
        }
    }

    /// The transport holds `queued` bytes after a fire-and-forget frame was queued: whether
    /// to send them now ([`Batching`]).
    pub fn batch_queued(&mut self, queued: usize) -> Flush {
        self.batching.queued(queued)
    }

    /// The batching policy's state.
    pub fn batching(&self) -> &Batching {
        &self.batching
    }

    /// The driver is about to wait for the reply (or landings) of what it just sent: the
    /// call deadline runs from `now`.
    pub fn arm_deadline(&mut self, now: Instant) {
        self.timers.arm_deadline(now);
    }

    /// The driver starts waiting for the next frame at `now` (silence is measured from here).
    pub fn awaiting_frame(&mut self, now: Instant) {
        self.timers.awaiting_frame(now);
    }

    /// When to call [`Self::handle_timeout`] next; `None` while the driver is not waiting.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers.poll_timeout()
    }

    /// Runs the timers due at `now`. Silence for the liveness timeout, or the call's deadline
    /// passing, ends the connection (a reply that came later could land in memory the
    /// application has reused); a heartbeat of silence makes a PING due ([`Self::poll_transmit`]).
    pub fn handle_timeout(&mut self, now: Instant) -> Result<(), CallError> {
        self.timers.handle_timeout(now).map_err(|expired| {
            let msg = match expired {
                Expired::Silent => format!(
                    "{LOST}: no answer within {} s (worker frozen or unreachable; HIP_REMOTE_LIVENESS_TIMEOUT)",
                    self.timers.timeout().as_secs_f64()
                ),
                Expired::Deadline => format!(
                    "{LOST}: the worker answers but gave no reply within {} s (HIP_REMOTE_IO_TIMEOUT)",
                    self.timers.call_timeout().unwrap_or_default().as_secs_f64()
                ),
            };
            CallError::new(HipError::NOT_INITIALIZED, msg)
        })
    }

    /// A frame the session itself sends, encoded at the start of `buf`: its length. Today a
    /// PING after a heartbeat of silence (the PONG, or anything else, ends the silence).
    pub fn poll_transmit(&mut self, _now: Instant, buf: &mut Vec<u8>) -> Option<usize> {
        if !self.timers.take_ping() {
            return None;
        }
        let id = self.next_id;
        self.next_id += 1;
        let req = calls::Ping::wrap(wire::Ping { nonce: id, payload: Default::default() });
        loop {
            match req.encode_frame(buf, Flags::empty(), id) {
                Ok(frame) => return Some(frame.head_len),
                Err(proto_core::EncodeError::BufferTooSmall { required }) => buf.resize(required, 0),
                // A PING has a fixed size; nothing else can go wrong.
                Err(_) => return None,
            }
        }
    }

    /// A frame head arrived at `now` (`control`: its control part): records what it says and
    /// tells the driver where its bulk goes. An error frame of request id 0 means the worker
    /// ended the session: it is returned now and by every later [`Self::submit`].
    pub fn handle_frame(&mut self, _now: Instant, header: &FrameHeader, control: &[u8]) -> Result<Inbound, CallError> {
        self.timers.frame_received();
        let id = header.request_id;
        self.last_taken = None;
        if id != 0 {
            if id <= self.replay_skip_through && !self.pending.contains_key(id) {
                // Re-sent after a resume, and read before it.
                return Ok(Inbound::Skip);
            }
            self.received_max = self.received_max.max(id);
            // The worker reads a connection's requests in order: it executed all up to `id`.
            if let Some(retention) = &mut self.retention {
                retention.acked(id);
            }
        }
        if header.aux != 0 {
            let code = status_to_hip(Status(header.aux));
            self.deferred.get_or_insert(code);
            if code.is_sticky() {
                self.ended.get_or_insert_with(|| CallError::new(code, "an earlier call met a sticky device error"));
            }
        }
        if header.flags.contains(Flags::ERROR) {
            let error = match ErrorReply::parse(control, &[]) {
                Ok(reply) => CallError::new(status_to_hip(reply.status), reply.message.as_str()),
                Err(e) => CallError::new(HipError::UNKNOWN, format!("malformed error reply: {e}")),
            };
            // A sticky device error answers every later call, as HIP's runtime does.
            if error.code.is_sticky() {
                self.ended.get_or_insert_with(|| error.clone());
            }
            if id == 0 {
                // The worker ended the session itself (a bad frame, the version, the death of
                // the session's process): fatal, and sticky.
                self.ended.get_or_insert_with(|| error.clone());
                return Err(error);
            }
            return Ok(match self.pending.remove(id) {
                Some(Pending::Reply) => Inbound::Reply(Ticket(id), Err(error)),
                Some(Pending::Landing { awaited: true, .. }) => Inbound::Failed(Ticket(id), error),
                Some(Pending::Landing { awaited: false, .. }) | None => {
                    self.deferred.get_or_insert(error.code);
                    Inbound::Skip
                }
            });
        }
        if id == 0 && header.opcode == Opcode::KernelOutput.raw() {
            return Ok(Inbound::KernelOutput);
        }
        let taken = self.pending.remove(id);
        if let Some(pending) = taken {
            self.last_taken = Some((id, pending));
        }
        Ok(match taken {
            Some(Pending::Reply) => {
                self.batching.reply_received();
                Inbound::Reply(Ticket(id), Ok(()))
            }
            Some(Pending::Landing { landing, awaited }) if header.bulk_len as usize != landing.len => {
                let msg = format!("worker returned {} bytes for a {}-byte copy", header.bulk_len, landing.len);
                let error = CallError::new(HipError::UNKNOWN, msg);
                if awaited {
                    Inbound::Failed(Ticket(id), error)
                } else {
                    self.deferred.get_or_insert(error.code);
                    Inbound::Skip
                }
            }
            Some(Pending::Landing { landing, .. }) => Inbound::Land(Ticket(id), landing),
            None => Inbound::Skip,
        })
    }

    /// The connection broke while the bulk of the frame [`Self::handle_frame`] handled last was
    /// read: its reply or landing is expected again (a resumed worker re-sends it).
    pub fn restore_last(&mut self) {
        if let Some((id, pending)) = self.last_taken.take() {
            self.pending.insert(id, pending);
        }
    }

    /// Whether the session outlives its connection (`RESUME` negotiated).
    pub fn resumable(&self) -> bool {
        self.retention.is_some()
    }

    /// Whether a request of `len` bytes may be submitted only after the worker acknowledged
    /// earlier ones ([`crate::resume::MAX_UNACKED_BYTES`], [`crate::resume::MAX_UNACKED_REQUESTS`]):
    /// the driver then makes a round trip first.
    pub fn needs_ack_before(&self, len: usize) -> bool {
        self.retention.as_ref().is_some_and(|r| r.full_for(len))
    }

    /// Request bytes kept for a resume.
    pub fn unacked_bytes(&self) -> usize {
        self.retention.as_ref().map_or(0, Retention::bytes)
    }

    /// Highest request id the worker has shown it executed.
    pub fn acked_through(&self) -> u64 {
        self.retention.as_ref().map_or(0, Retention::acked_through)
    }

    /// What to send as `Resume` on a new connection: the session, its secret, and the
    /// highest request id below which every reply has been read.
    pub fn resume_request(&self) -> wire::Resume<'_> {
        let received_through = self.pending.first_id().map_or(self.next_id - 1, |first| first - 1);
        wire::Resume { session_id: self.welcome.session_id, secret: self.welcome.resume_secret.as_slice().into(), received_through }
    }

    /// The worker resumed the session: checks nothing the application waits for is lost and
    /// drops the requests it executed; [`Self::unacked_frames`] are then to be sent again,
    /// in order, before anything new.
    pub fn handle_resumed(&mut self, resumed: &wire::Resumed) -> Result<(), CallError> {
        let lost = |why: String| CallError::new(HipError::NOT_INITIALIZED, format!("{LOST}: the session was resumed, but {why}"));
        let Some(retention) = &mut self.retention else {
            return Err(lost("this session kept nothing to resume with".into()));
        };
        if retention.unkept_through > resumed.executed_through {
            return Err(lost(format!("request {} (a striped copy, or one too large to keep) had not reached the worker", retention.unkept_through)));
        }
        let gone_through = resumed.evicted_through.min(resumed.executed_through);
        if let Some(id) = self.pending.first_id().filter(|&id| id <= gone_through) {
            return Err(lost(format!("the worker no longer holds the reply to request {id} (its record of replies overflowed)")));
        }
        retention.acked(resumed.executed_through);
        self.replay_skip_through = self.received_max;
        Ok(())
    }

    /// The requests to send again after a resume (request id, frame, where its bulk starts),
    /// in the order they were first submitted.
    pub fn unacked_frames(&self) -> impl Iterator<Item = (u64, &[u8], usize)> {
        self.retention.iter().flat_map(Retention::frames)
    }

    /// Whether `ticket`'s reply or landing is still expected.
    pub fn is_pending(&self, ticket: Ticket) -> bool {
        self.pending.contains_key(ticket.0)
    }

    /// Whether a reply (not a landing) is still expected: its waiter reads it.
    pub fn has_pending_replies(&self) -> bool {
        self.pending.values().any(|p| matches!(p, Pending::Reply))
    }

    /// Whether asynchronous copies are still to land.
    pub fn has_pending_landings(&self) -> bool {
        self.pending.values().any(|p| matches!(p, Pending::Landing { .. }))
    }

    /// Records a failure the application is to see at its next synchronising call (the first
    /// one wins).
    pub fn defer(&mut self, code: HipError) {
        self.deferred.get_or_insert(code);
    }

    /// The deferred error of an earlier fire-and-forget request, once.
    pub fn take_deferred(&mut self) -> Option<HipError> {
        self.deferred.take()
    }

    /// The error with which the worker ended the session, if it did: every pending and later
    /// call fails with it.
    pub fn ended(&self) -> Option<&CallError> {
        self.ended.as_ref()
    }

    /// Stream and event handles chosen by the client (`CLIENT_ALLOCATION`).
    pub fn client_handles(&mut self) -> &mut ClientHandles {
        &mut self.client_handles
    }

    /// Device memory placed by the client (`hipMalloc` without a round trip).
    pub fn client_memory(&mut self) -> &mut ClientMemory {
        &mut self.client_memory
    }

    /// Managed and device-visible host memory mirrored in the application's process.
    pub fn managed(&mut self) -> &mut ManagedMirrors {
        &mut self.managed
    }

    /// Stream captures begun and not ended (a clone reads the count without the session).
    pub fn captures(&self) -> &CaptureCount {
        self.published.captures()
    }

    /// The state readers see without the session (a clone of the `Arc` reads it).
    pub fn published(&self) -> &Arc<Published> {
        &self.published
    }

    /// Keeps the [`Published`] state in `published` from now on, which the driver's owner
    /// made before the session existed and reads without it. Call it before the session's
    /// first call: what the session published until then is dropped.
    pub fn publish_to(&mut self, published: Arc<Published>) {
        self.published = published;
    }

    /// Dependency arrays handed to the application by capture queries.
    pub fn dependency_arrays(&mut self) -> &mut DependencyArrays {
        &mut self.dependency_arrays
    }

    /// Stream attributes the worker does not hold (CU masks, synchronization policies).
    pub fn streams(&mut self) -> &mut StreamTable {
        &mut self.streams
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batching::{FIRST_BATCH_BYTES, STREAMING_BATCH_BYTES};
    use proto_core::frame::FrameMeta;
    use proto_core::{encode_frame, Bulk, DeframedHead, FrameDecoder, Response};

    const BEAT: Duration = Duration::from_millis(200);
    const LIVENESS: Duration = Duration::from_secs(1);

    fn session(call_timeout: Option<Duration>) -> ClientSession {
        ClientSession::new(SessionConfig { heartbeat: BEAT, liveness_timeout: LIVENESS, call_timeout })
    }

    /// Operations go without a round trip only where the worker negotiated
    /// `CLIENT_ALLOCATION` and the client's configuration allows it; the WELCOME's facts are
    /// kept as the worker gave them, and the same-host socket is added later.
    #[test]
    fn welcome_decides_operations_without_round_trip() {
        let worker_name = "worker-a".to_owned();
        let welcome = |features| wire::Welcome {
            version: 7,
            features,
            session_id: 42,
            resumed: false,
            worker_name: worker_name.as_str().into(),
            backend: "host".into(),
            auth_challenge: Default::default(),
            rdma_endpoint: "10.0.0.1:7000".into(),
            resume_secret: Default::default(),
        };
        for (negotiated, allowed, expected) in [(true, true, true), (true, false, false), (false, true, false), (false, false, false)] {
            let mut s = session(None);
            assert!(!s.without_round_trip(), "nothing goes without a round trip before the handshake");
            let features = features::FIRE_AND_FORGET | if negotiated { features::CLIENT_ALLOCATION } else { 0 };
            s.handle_welcome(WelcomeInfo::from_wire(&welcome(features)), allowed);
            assert_eq!(s.without_round_trip(), expected, "negotiated {negotiated}, allowed {allowed}");
            assert_eq!((s.welcome().session_id, s.welcome().version, s.welcome().features), (42, 7, features));
            assert_eq!((s.welcome().worker_name.as_str(), s.welcome().backend.as_str()), ("worker-a", "host"));
            assert_eq!((s.welcome().rdma_endpoint.as_str(), s.welcome().same_host_socket.as_deref()), ("10.0.0.1:7000", None));
            s.set_same_host_socket(Some("/run/hip-remote/worker.sock".into()));
            assert_eq!(s.welcome().same_host_socket.as_deref(), Some("/run/hip-remote/worker.sock"));
        }
    }

    /// A frame as the driver reads it: header and control part.
    fn head(bytes: &[u8]) -> (FrameHeader, Vec<u8>) {
        match FrameDecoder::decode_head(bytes).expect("a valid head") {
            DeframedHead::Head { header, control, .. } => (header, control.to_vec()),
            DeframedHead::NeedMore { .. } => panic!("incomplete head"),
        }
    }

    /// The worker's reply to request `id` (its bulk, if any, follows outside the head).
    fn reply(id: u64, response: &Response<'_>, aux: i32) -> (FrameHeader, Vec<u8>) {
        let mut buf = vec![0; 4096];
        let frame = response.encode_frame(&mut buf, id, aux).expect("encode");
        let (mut header, control) = head(&buf[..frame.head_len]);
        header.bulk_len = frame.bulk.len() as u32;
        (header, control)
    }

    /// The worker's error reply to request `id` (0: the session is over).
    fn error(id: u64, status: Status, message: &str) -> (FrameHeader, Vec<u8>) {
        let mut buf = vec![0; 4096];
        let meta = FrameMeta { opcode: Opcode::Ping.raw(), flags: Flags::RESPONSE | Flags::ERROR, request_id: id, credits: 0, aux: 0 };
        let frame = encode_frame(&mut buf, meta, &ErrorReply { status, message: message.into() }).expect("encode");
        head(&buf[..frame.head_len])
    }

    fn device_count(s: &mut ClientSession, expect: Expect) -> Ticket {
        s.submit(&calls::GetDeviceCount::wrap(wire::Empty {}), expect).expect("submit").ticket
    }

    fn launch(s: &mut ClientSession) -> usize {
        let args = [7u8; 32];
        let req = wire::LaunchKernel { function: 1, grid: [1; 3], block: [1; 3], shared_mem: 0, stream: 0, args: args[..].into() };
        let out = s.submit(&calls::LaunchKernel::wrap(req), Expect::NoReply).expect("submit");
        let (header, _) = head(out.head);
        assert!(header.flags.contains(Flags::NO_REPLY), "posted requests ask for no reply");
        out.head.len() + out.bulk.len()
    }

    #[test]
    fn requests_get_consecutive_ids_and_replies_find_their_tickets() {
        let t0 = Instant::now();
        let mut s = session(None);
        let a = device_count(&mut s, Expect::Reply);
        let b = device_count(&mut s, Expect::Reply);
        assert_eq!((a.request_id(), b.request_id()), (1, 2));
        let (h, c) = reply(b.request_id(), &Response::GetDeviceCount(wire::DeviceCount { count: 3 }), 0);
        assert_eq!(s.handle_frame(t0, &h, &c), Ok(Inbound::Reply(b, Ok(()))));
        assert!(s.is_pending(a) && !s.is_pending(b));
        assert_eq!(s.handle_frame(t0, &h, &c), Ok(Inbound::Skip), "a second reply to the same id is nobody's");
    }

    #[test]
    fn posted_requests_are_batched_by_the_policy_and_a_reply_restarts_it() {
        let t0 = Instant::now();
        let mut s = session(None);
        // A model transport: holds what it is not told to send.
        let mut queued = 0;
        let mut first_batch = None;
        for i in 1..=200 {
            queued += launch(&mut s);
            if s.batch_queued(queued) == Flush::Now {
                first_batch.get_or_insert((i, queued));
                queued = 0;
            }
        }
        let (launches, bytes) = first_batch.expect("a batch went out early");
        assert!((FIRST_BATCH_BYTES..FIRST_BATCH_BYTES + 200).contains(&bytes), "first batch of {bytes} bytes after {launches} launches");
        assert!(queued < STREAMING_BATCH_BYTES, "later frames wait for a 32 KiB batch");
        let t = device_count(&mut s, Expect::Reply);
        let (h, c) = reply(t.request_id(), &Response::GetDeviceCount(wire::DeviceCount { count: 1 }), 0);
        assert_eq!(s.handle_frame(t0, &h, &c), Ok(Inbound::Reply(t, Ok(()))));
        assert_eq!(s.batch_queued(FIRST_BATCH_BYTES), Flush::Now, "after a reply the worker is idle again");
    }

    #[test]
    fn a_silent_worker_is_pinged_each_heartbeat_and_given_up_after_the_liveness_timeout() {
        let t0 = Instant::now();
        let mut s = session(None);
        device_count(&mut s, Expect::Reply);
        assert_eq!(s.poll_timeout(), None, "no timer runs while the driver is not waiting");
        s.arm_deadline(t0);
        s.awaiting_frame(t0);
        let mut buf = Vec::new();
        let mut pings = Vec::new();
        let failure = loop {
            let now = s.poll_timeout().expect("waiting");
            if let Err(e) = s.handle_timeout(now) {
                break (now, e);
            }
            while let Some(len) = s.poll_transmit(now, &mut buf) {
                let (header, control) = head(&buf[..len]);
                assert_eq!(header.opcode, Opcode::Ping.raw());
                assert!(Request::parse(header.opcode, &control, &[]).is_ok(), "a well-formed PING");
                pings.push((now - t0, header.request_id));
            }
        };
        let (at, e) = failure;
        assert_eq!(at - t0, LIVENESS);
        assert!(e.is_lost() && e.message.contains("no answer within 1 s"), "{}", e.message);
        let times: Vec<_> = pings.iter().map(|p| p.0.as_millis()).collect();
        assert_eq!(times, [200, 400, 600, 800]);
        assert_eq!(pings[0].1, 2, "PINGs take request ids like any request");
    }

    #[test]
    fn heartbeats_keep_a_busy_worker_alive_until_the_call_deadline() {
        let t0 = Instant::now();
        let mut s = session(Some(Duration::from_millis(1500)));
        let t = device_count(&mut s, Expect::Reply);
        s.arm_deadline(t0);
        let beat = reply(0, &Response::Ping(wire::Pong { nonce: 0, worker_time_ns: 0, payload: Default::default() }), 0);
        let (mut now, mut beats) = (t0, 0);
        let (failed_at, e) = 'waiting: loop {
            s.awaiting_frame(now);
            // The worker's heartbeat comes 300 ms later; the timers due before it run first.
            let next = now + Duration::from_millis(300);
            while let Some(due) = s.poll_timeout().filter(|&due| due <= next) {
                if let Err(e) = s.handle_timeout(due) {
                    break 'waiting (due, e);
                }
                s.poll_transmit(due, &mut Vec::new());
            }
            now = next;
            assert_eq!(s.handle_frame(now, &beat.0, &beat.1), Ok(Inbound::Skip));
            beats += 1;
        };
        assert!(e.is_lost() && e.message.contains("HIP_REMOTE_IO_TIMEOUT"), "{}", e.message);
        assert_eq!((failed_at - t0, beats), (Duration::from_millis(1500), 4), "heartbeats kept it alive past the 1 s liveness timeout");
        assert!(s.is_pending(t));
    }

    #[test]
    fn failed_posted_requests_are_reported_once_by_a_later_call() {
        let t0 = Instant::now();
        let mut s = session(None);
        launch(&mut s);
        launch(&mut s);
        let (h, c) = error(1, Status(1), "bad launch");
        assert_eq!(s.handle_frame(t0, &h, &c), Ok(Inbound::Skip));
        let (h, c) = error(2, Status(2), "also bad");
        assert_eq!(s.handle_frame(t0, &h, &c), Ok(Inbound::Skip));
        assert_eq!(s.take_deferred(), Some(HipError::INVALID_VALUE), "the first failure wins");
        assert_eq!(s.take_deferred(), None, "reported once");
        // A reply's aux field carries a failure of earlier posted work.
        let t = device_count(&mut s, Expect::Reply);
        let (h, c) = reply(t.request_id(), &Response::GetDeviceCount(wire::DeviceCount { count: 1 }), 700);
        assert_eq!(s.handle_frame(t0, &h, &c), Ok(Inbound::Reply(t, Ok(()))));
        assert_eq!(s.take_deferred(), Some(HipError(700)));
    }

    #[test]
    fn landings_land_or_fail_to_their_waiter_or_to_the_deferred_error() {
        let t0 = Instant::now();
        let mut s = session(None);
        let dtoh = |src| calls::MemcpyDtoH::wrap(wire::MemcpyDtoH { src, len: 64, stream: 0 });
        let landing = Landing { dst: 0x1000, len: 64, rows: None };
        let waited = s.submit(&dtoh(1), Expect::Landing { landing, awaited: true }).expect("submit").ticket;
        let later = s.submit(&dtoh(2), Expect::Landing { landing, awaited: false }).expect("submit").ticket;
        let short = s.submit(&dtoh(3), Expect::Landing { landing, awaited: true }).expect("submit").ticket;
        assert!(s.has_pending_landings());
        let data = [5u8; 64];
        let (h, c) = reply(waited.request_id(), &Response::MemcpyDtoH(wire::MemcpyData { data: Bulk(&data) }), 0);
        assert_eq!(s.handle_frame(t0, &h, &c), Ok(Inbound::Land(waited, landing)));
        let (h, c) = reply(short.request_id(), &Response::MemcpyDtoH(wire::MemcpyData { data: Bulk(&data[..10]) }), 0);
        match s.handle_frame(t0, &h, &c) {
            Ok(Inbound::Failed(t, e)) => assert!(t == short && e.message.contains("10 bytes for a 64-byte copy"), "{}", e.message),
            other => panic!("{other:?}"),
        }
        assert_eq!(s.take_deferred(), None, "an awaited landing's failure goes to its waiter");
        let (h, c) = error(later.request_id(), Status(1), "bad source");
        assert_eq!(s.handle_frame(t0, &h, &c), Ok(Inbound::Skip));
        assert!(!s.has_pending_landings());
        assert_eq!(s.take_deferred(), Some(HipError::INVALID_VALUE), "an unawaited landing's failure is deferred");
    }

    #[test]
    fn a_session_ended_by_the_worker_fails_every_pending_and_later_call_with_its_status() {
        let t0 = Instant::now();
        let mut s = session(None);
        let pending = device_count(&mut s, Expect::Reply);
        let (h, c) = error(0, Status(719), "the session's process died");
        let e = s.handle_frame(t0, &h, &c).expect_err("the session is over");
        assert_eq!((e.code, e.message.as_str()), (HipError(719), "the session's process died"));
        assert_eq!(s.ended(), Some(&e));
        assert!(s.is_pending(pending), "its waiter gets the error above, not a reply");
        assert_eq!(s.submit(&calls::GetDeviceCount::wrap(wire::Empty {}), Expect::Reply).map(|o| o.ticket).unwrap_err(), e);
        assert_eq!(s.submit(&calls::GetDeviceCount::wrap(wire::Empty {}), Expect::NoReply).map(|o| o.ticket).unwrap_err(), e);
        // A second notice does not replace the first.
        let (h, c) = error(0, Status(1), "later");
        assert!(s.handle_frame(t0, &h, &c).is_err());
        assert_eq!(s.ended(), Some(&e));
    }

    #[test]
    fn a_sticky_device_error_answers_every_later_call_and_others_do_not() {
        let t0 = Instant::now();
        // A call failing with a non-sticky error leaves the session as it was.
        let mut s = session(None);
        let call = device_count(&mut s, Expect::Reply);
        let (h, c) = error(call.request_id(), Status(1), "bad value");
        assert!(matches!(s.handle_frame(t0, &h, &c), Ok(Inbound::Reply(_, Err(_)))));
        assert_eq!(s.ended(), None);
        assert!(s.submit(&calls::GetDeviceCount::wrap(wire::Empty {}), Expect::NoReply).is_ok());
        // A synchronize answering an illegal address: every later call, even one the client
        // would post without waiting, answers it.
        let call = device_count(&mut s, Expect::Reply);
        let (h, c) = error(call.request_id(), Status(700), "an illegal memory access was encountered");
        assert!(matches!(s.handle_frame(t0, &h, &c), Ok(Inbound::Reply(_, Err(_)))));
        let later = s.submit(&calls::GetDeviceCount::wrap(wire::Empty {}), Expect::NoReply).map(|o| o.ticket).unwrap_err();
        assert_eq!(later.code, HipError::ILLEGAL_ADDRESS);
        // The same from a posted call's deferred status (a kernel the watchdog ended).
        let mut s = session(None);
        let call = device_count(&mut s, Expect::Reply);
        let (h, c) = reply(call.request_id(), &Response::GetDeviceCount(wire::DeviceCount { count: 1 }), 702);
        assert!(s.handle_frame(t0, &h, &c).is_ok());
        let later = s.submit(&calls::GetDeviceCount::wrap(wire::Empty {}), Expect::Reply).map(|o| o.ticket).unwrap_err();
        assert_eq!(later.code, HipError::LAUNCH_TIME_OUT);
    }

    /// A session whose WELCOME offered `RESUME` with a secret.
    fn resumable() -> ClientSession {
        let mut s = session(None);
        let secret = [9u8; 32];
        let w = wire::Welcome {
            version: 2,
            features: features::FIRE_AND_FORGET | features::RESUME,
            session_id: 5,
            resumed: false,
            worker_name: "w".into(),
            backend: "host".into(),
            auth_challenge: Default::default(),
            rdma_endpoint: "".into(),
            resume_secret: secret[..].into(),
        };
        s.handle_welcome(WelcomeInfo::from_wire(&w), true);
        assert!(s.resumable());
        s
    }

    fn memset_req() -> Request<'static> {
        calls::Memset::wrap(wire::Memset { dst: 0x1000, value: 1, width: wire::MemsetWidth::Byte, count: 16, stream: 0, sync: false })
    }

    /// Requests are kept (with their bulk) until a reply shows the worker executed them; a
    /// resume drops what the worker executed and hands back the rest, in order, as sent.
    #[test]
    fn a_resumable_session_keeps_what_the_worker_has_not_acknowledged() {
        let t0 = Instant::now();
        let mut s = session(None);
        s.submit(&memset_req(), Expect::NoReply).expect("submit");
        assert_eq!(s.unacked_bytes(), 0, "nothing is kept without RESUME");
        let mut s = resumable();
        let data = [7u8; 100];
        let upload = calls::MemcpyHtoD::wrap(wire::MemcpyHtoD { dst: 0x2000, stream: 0, sync: false, data: Bulk(&data) });
        let mut sent = Vec::new();
        for req in [&memset_req(), &upload, &memset_req()] {
            let out = s.submit(req, Expect::NoReply).expect("submit");
            sent.push((out.ticket.request_id(), [out.head, out.bulk].concat()));
        }
        let call = device_count(&mut s, Expect::Reply);
        assert_eq!(s.unacked_frames().count(), 4);
        assert!(s.unacked_bytes() > data.len());
        assert_eq!(s.resume_request().received_through, 3, "every reply up to the call's is read");
        // The worker executed up to the upload: the memset after it and the call go again.
        s.handle_resumed(&wire::Resumed { executed_through: 2, evicted_through: 0 }).expect("resumed");
        let again: Vec<_> = s.unacked_frames().map(|(id, frame, _)| (id, frame.to_vec())).collect();
        assert_eq!(again, vec![sent[2].clone(), (call.request_id(), again[1].1.clone())]);
        // The call's reply acknowledges everything.
        let (h, c) = reply(call.request_id(), &Response::GetDeviceCount(wire::DeviceCount { count: 1 }), 0);
        assert_eq!(s.handle_frame(t0, &h, &c), Ok(Inbound::Reply(call, Ok(()))));
        assert_eq!((s.unacked_bytes(), s.acked_through()), (0, call.request_id()));
        // After the resume, a reply read before it comes again: skipped whole, even its aux.
        let (h, c) = reply(call.request_id(), &Response::GetDeviceCount(wire::DeviceCount { count: 1 }), 700);
        s.replay_skip_through = call.request_id();
        assert_eq!(s.handle_frame(t0, &h, &c), Ok(Inbound::Skip));
        assert_eq!(s.take_deferred(), None, "a re-sent reply's deferred status was counted once");
    }

    /// A resume fails with the lost connection's error when the worker no longer holds a
    /// reply the application waits for, or a request that was not kept never reached it.
    #[test]
    fn a_resume_that_would_lose_a_reply_or_a_request_fails_as_a_lost_connection() {
        let mut s = resumable();
        let call = device_count(&mut s, Expect::Reply);
        let e = s.handle_resumed(&wire::Resumed { executed_through: 1, evicted_through: 1 }).expect_err("reply evicted");
        assert!(e.is_lost() && e.message.contains(&format!("reply to request {}", call.request_id())), "{}", e.message);
        let mut s = resumable();
        let striped = calls::MemcpyHtoDStriped::wrap(wire::MemcpyHtoDStriped { dst: 0, len: 1 << 20, stream: 0, sync: true, copy_id: 1, stripes: 2 });
        let id = s.submit(&striped, Expect::Reply).expect("submit").ticket.request_id();
        assert_eq!(s.unacked_bytes(), 0, "a striped copy's bytes are on the stripes: not kept");
        let e = s.handle_resumed(&wire::Resumed { executed_through: id - 1, evicted_through: 0 }).expect_err("not kept");
        assert!(e.is_lost() && e.code == HipError::NOT_INITIALIZED && e.message.contains("striped"), "{}", e.message);
        // Executed, it needs nothing kept: its reply comes from the worker's record.
        assert!(s.handle_resumed(&wire::Resumed { executed_through: id, evicted_through: 0 }).is_ok());
    }

    /// The driver is told to ask for an acknowledgement once the bound is reached.
    #[test]
    fn the_requests_kept_are_bounded() {
        let mut s = resumable();
        let mut n = 0;
        while !s.needs_ack_before(0) {
            s.submit(&memset_req(), Expect::NoReply).expect("submit");
            n += 1;
            assert!(n <= crate::resume::MAX_UNACKED_REQUESTS, "no bound");
        }
        assert_eq!(n, crate::resume::MAX_UNACKED_REQUESTS);
        let t = device_count(&mut s, Expect::Reply);
        let (h, c) = reply(t.request_id(), &Response::GetDeviceCount(wire::DeviceCount { count: 1 }), 0);
        assert!(s.handle_frame(Instant::now(), &h, &c).is_ok());
        assert!(!s.needs_ack_before(0) && s.unacked_bytes() == 0);
    }

    #[test]
    fn kernel_output_is_passed_to_the_driver() {
        let mut s = session(None);
        let text = b"hello from a kernel\n";
        let (h, c) = reply(0, &Response::KernelOutput(wire::KernelOutputText { data: Bulk(text) }), 0);
        assert_eq!(s.handle_frame(Instant::now(), &h, &c), Ok(Inbound::KernelOutput));
    }
}
