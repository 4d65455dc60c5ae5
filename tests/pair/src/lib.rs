//! Both ends of a session in one thread, in the shape of quinn-proto's `tests/util.rs` `Pair`:
//! the client's [`ClientSession`] and the worker's [`Session`] on the host backend, frame
//! queues between them with a latency, and virtual time that jumps to the next event. The
//! client's timers (heartbeat PINGs, liveness, the call deadline) run on that time, so a
//! 30-second liveness timeout takes microseconds; the worker's stream work still runs on the
//! host backend's own threads (the harness waits for its late replies in real time).
//!
//! Each end's driver here is a small stand-in for the real one: the client's does what
//! `client-capi`'s `conn` does with a transport (queue, flush, land), the worker's what
//! `hip_worker::driver` does with a frame (place the bulk, dispatch, reply with the deferred
//! status in `aux`, heartbeats while busy).

pub mod ops;

use client_core::{resume_failed, CallError, ClientSession, Expect, Flush, Inbound, Landing, SessionConfig, Ticket};
use hip_worker::backend::{HostBackend, HostConfig};
use hip_worker::resume::{Refused, ResumeHub};
use hip_worker::session::{BulkDestination, CallCx, Failure, LateReplies, PlacedBulk, Session, SessionConfig as WorkerSessionConfig};
use proto_core::frame::FrameMeta;
use proto_core::opcode::dispatch;
use proto_core::wire::{self, ErrorReply};
use proto_core::{calls, encode_frame, BulkWay, Call, DeframedHead, Flags, FrameDecoder, FrameHeader, Opcode, Outcome, Request, Response, Status};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The client's defaults: a PING after each heartbeat of silence, given up after the timeout.
pub const HEARTBEAT: Duration = transport_core::config::DEFAULT_HEARTBEAT;
pub const LIVENESS_TIMEOUT: Duration = transport_core::config::DEFAULT_LIVENESS_TIMEOUT;
/// The worker's heartbeat while it handles a request.
pub const WORKER_HEARTBEAT: Duration = transport_core::config::WORKER_HEARTBEAT;
pub const LATENCY: Duration = Duration::from_millis(1);
/// Longest real wait for the backend's stream threads.
pub const STREAM_WORK_BOUND: Duration = Duration::from_secs(20);
/// The worker's one device.
pub const DEVICE_MEMORY: u64 = 64 << 20;
/// The client's application memory that landings copy into.
pub const CLIENT_MEMORY: usize = 1 << 20;

/// A frame on the wire: head and bulk, and when it arrives.
pub struct InFlight {
    pub bytes: Vec<u8>,
    pub at: Instant,
}

pub fn split(bytes: &[u8]) -> (FrameHeader, &[u8], &[u8]) {
    match FrameDecoder::decode_head(bytes).expect("a valid frame") {
        DeframedHead::Head { header, control, consumed } => (header, control, &bytes[consumed..]),
        DeframedHead::NeedMore { .. } => panic!("a frame cut short"),
    }
}

pub fn push_sorted(queue: &mut VecDeque<InFlight>, frame: InFlight) {
    let at = queue.iter().rposition(|f| f.at <= frame.at).map_or(0, |i| i + 1);
    queue.insert(at, frame);
}

pub struct WorkerEnd {
    pub session: Session,
    pub late: Arc<LateReplies>,
    pub inbound: VecDeque<InFlight>,
    /// Reads nothing, answers nothing (a frozen process whose kernel still ACKs).
    pub frozen: bool,
    /// The next request that wants a reply takes this long (heartbeats meanwhile).
    pub busy_next: Option<Duration>,
    /// Until then it handles one request and reads nothing else.
    pub busy_until: Option<Instant>,
    /// Replies that stream work will queue in `late`.
    pub outstanding: usize,
    /// Opcodes and flags of every frame it read.
    pub received: Vec<(Opcode, Flags)>,
    /// How many times each request id was executed (a resumed session runs each once).
    pub executions: HashMap<u64, usize>,
    pub started: Instant,
}

/// The link between the ends: frames that cross it, and a break after a given count.
#[derive(Default)]
pub struct Link {
    /// Frames that crossed so far, both ways.
    pub crossed: usize,
    /// The link breaks when this many frames have crossed: that frame and every one in
    /// flight are lost.
    pub break_at: Option<usize>,
    pub broken: bool,
    /// Times the client resumed the session.
    pub resumes: usize,
    /// Real time between the break and the client's `Resume` (the worker's grace period
    /// runs on the real clock).
    pub resume_after: Duration,
    /// The client presents a secret other than its WELCOME's.
    pub wrong_secret: bool,
}

pub struct ClientEnd {
    pub session: ClientSession,
    /// The transport's coalescing buffer: posted frames not sent yet.
    pub queued: Vec<Vec<u8>>,
    pub inbound: VecDeque<InFlight>,
    /// Application memory copies land in (`Landing::dst` is an offset into it).
    pub memory: Vec<u8>,
    /// The control part of the awaited reply just read, and its bulk.
    pub control: Vec<u8>,
    pub bulk: Vec<u8>,
}

pub struct Pair {
    pub client: ClientEnd,
    pub worker: WorkerEnd,
    pub link: Link,
    /// Where the worker keeps a session whose connection broke (`hip_worker::resume`).
    pub hub: Arc<ResumeHub>,
    pub backend: Arc<HostBackend>,
    pub worker_config: Arc<WorkerSessionConfig>,
    pub now: Instant,
}

impl Pair {
    pub fn new(call_timeout: Option<Duration>) -> Self {
        Self::with_grace(call_timeout, hip_worker::resume::DEFAULT_RESUME_GRACE)
    }

    pub fn with_grace(call_timeout: Option<Duration>, grace: Duration) -> Self {
        Self::on_backend(Self::backend(), call_timeout, grace)
    }

    /// The host backend a pair's worker serves from: one device of [`DEVICE_MEMORY`] bytes.
    pub fn backend() -> Arc<HostBackend> {
        Arc::new(HostBackend::new(HostConfig { devices: 1, memory_per_device: DEVICE_MEMORY, ..HostConfig::default() }))
    }

    /// A pair whose worker serves from `backend`, which may outlive it (a fuzz target makes
    /// one backend per process, not one per input; the worker session frees what it held
    /// when the pair is dropped).
    pub fn on_backend(backend: Arc<HostBackend>, call_timeout: Option<Duration>, grace: Duration) -> Self {
        let hub = ResumeHub::new(grace);
        let worker_config = Arc::new(WorkerSessionConfig { worker_name: "pair".into(), resume: Some(hub.clone()), ..Default::default() });
        let session = Session::new(backend.clone(), worker_config.clone());
        let late = session.late_replies();
        let now = Instant::now();
        let config = SessionConfig { heartbeat: HEARTBEAT, liveness_timeout: LIVENESS_TIMEOUT, call_timeout };
        Self {
            client: ClientEnd {
                session: ClientSession::new(config),
                queued: Vec::new(),
                inbound: VecDeque::new(),
                memory: vec![0; CLIENT_MEMORY],
                control: Vec::new(),
                bulk: Vec::new(),
            },
            worker: WorkerEnd {
                session,
                late,
                inbound: VecDeque::new(),
                frozen: false,
                busy_next: None,
                busy_until: None,
                outstanding: 0,
                received: Vec::new(),
                executions: HashMap::new(),
                started: now,
            },
            link: Link::default(),
            hub,
            backend,
            worker_config,
            now,
        }
    }

    /// A pair past HELLO/WELCOME.
    pub fn greeted(call_timeout: Option<Duration>) -> Self {
        let mut pair = Self::new(call_timeout);
        pair.hello(wire::features::FIRE_AND_FORGET);
        pair
    }

    /// A pair past HELLO/WELCOME whose session outlives its connection (`RESUME`).
    pub fn resumable(grace: Duration) -> Self {
        // A call deadline: a reply that never comes fails the test instead of hanging it.
        let mut pair = Self::with_grace(Some(Duration::from_secs(600)), grace);
        pair.greet_resumable();
        pair
    }

    /// HELLO/WELCOME offering `RESUME`: the session outlives its connection.
    pub fn greet_resumable(&mut self) {
        self.hello(wire::features::FIRE_AND_FORGET | wire::features::RESUME);
        assert!(self.client.session.resumable(), "the worker offered RESUME and gave a secret");
    }

    pub fn hello(&mut self, features: u64) {
        let hello = wire::Hello {
            min_version: proto_core::header::MIN_PROTOCOL_VERSION,
            max_version: proto_core::PROTOCOL_VERSION,
            features,
            client_name: "pair".into(),
            resume_session: 0,
            auth_token: Default::default(),
        };
        let ticket = self.submit(&calls::Hello::wrap(hello), Expect::Reply, true);
        self.wait_reply(ticket).expect("WELCOME");
        let welcome = match self.reply::<calls::Hello>() {
            Response::Hello(w) => {
                assert_eq!(w.worker_name.as_str(), "pair");
                client_core::WelcomeInfo::from_wire(&w)
            }
            other => panic!("{other:?}"),
        };
        self.client.session.handle_welcome(welcome, false);
    }

    // ---- the link -----------------------------------------------------------------------

    /// A frame crosses the link, unless it is broken or breaks now.
    pub fn crosses(&mut self) -> bool {
        if self.link.broken {
            return false;
        }
        self.link.crossed += 1;
        if self.link.break_at == Some(self.link.crossed) {
            self.link.broken = true;
            self.client.inbound.clear();
            self.worker.inbound.clear();
            return false;
        }
        true
    }

    /// What the drivers do when the connection breaks: the worker parks the session, the
    /// client reconnects (a fresh connection and session: HELLO, then `Resume`), the worker
    /// answers with the replies it recorded, the client sends again what was not executed.
    pub fn resume(&mut self) -> Result<(), CallError> {
        self.link.broken = false;
        self.link.resumes += 1;
        self.client.queued.clear();
        self.client.inbound.clear();
        self.worker.inbound.clear();
        self.worker.busy_until = None;
        // The worker: the broken connection's session waits in the hub; a new connection
        // gets a session of its own for its handshake.
        let fresh = Session::new(self.backend.clone(), self.worker_config.clone());
        let fresh_late = fresh.late_replies();
        let old = std::mem::replace(&mut self.worker.session, fresh);
        let old_late = std::mem::replace(&mut self.worker.late, fresh_late);
        self.hub.park(old, old_late);
        std::thread::sleep(self.link.resume_after);
        // The client's handshake on the new connection, straight into the fresh session's
        // handlers (the frames themselves are the end-to-end test's).
        let hello = wire::Hello {
            min_version: proto_core::header::MIN_PROTOCOL_VERSION,
            max_version: proto_core::PROTOCOL_VERSION,
            features: wire::features::FIRE_AND_FORGET | wire::features::RESUME,
            client_name: "pair".into(),
            resume_session: self.client.session.welcome().session_id,
            auth_token: Default::default(),
        };
        let mut cx = CallCx::new(1, Opcode::Hello, false, 0);
        dispatch(&mut self.worker.session, &mut cx, calls::Hello::wrap(hello)).map_err(|e| resume_failed(&format!("{e:?}")))?;
        let ask = self.client.session.resume_request();
        let received_through = ask.received_through;
        let mut secret = ask.secret.0.to_vec();
        if self.link.wrong_secret {
            secret[0] ^= 1;
        }
        let ask = wire::Resume { secret: secret.as_slice().into(), ..ask };
        let mut cx = CallCx::new(2, Opcode::Resume, false, 0);
        match dispatch(&mut self.worker.session, &mut cx, calls::Resume::wrap(ask)) {
            Err(Failure::ReplyDeferred) => {}
            other => panic!("Resume is answered by the driver, not the handler: {:?}", other.map(|_| ())),
        }
        let ask = self.worker.session.take_resume_ask().expect("the handler recorded the ask");
        assert_eq!(ask.received_through, received_through);
        let (resumed, resumed_late) = self.hub.take(&ask, self.worker.session.tenant_name()).map_err(|refused| {
            resume_failed(match refused {
                Refused::NotFound => "no session to resume (grace period passed, or a wrong secret)",
                Refused::StillAttached => "still attached",
            })
        })?;
        self.worker.session = resumed;
        self.worker.late = resumed_late;
        let record = self.worker.session.replay_record();
        let (answer, replays) = {
            let mut record = record.lock().unwrap();
            let replays = record.replies_after(ask.received_through);
            (wire::Resumed { executed_through: record.executed_through(), evicted_through: record.evicted_through() }, replays)
        };
        for (frame, _) in replays {
            self.wire_to_client(frame, self.now);
        }
        self.client.session.handle_resumed(&answer)?;
        let resend: Vec<Vec<u8>> = self.client.session.unacked_frames().map(|(_, frame, _)| frame.to_vec()).collect();
        for frame in resend {
            self.wire_to_worker(frame);
        }
        Ok(())
    }

    // ---- the client's driver ------------------------------------------------------------

    pub fn wire_to_worker(&mut self, bytes: Vec<u8>) {
        if !self.crosses() {
            return;
        }
        let at = self.now + LATENCY;
        push_sorted(&mut self.worker.inbound, InFlight { bytes, at });
    }

    /// Sends the transport's queue.
    pub fn flush(&mut self) {
        for frame in std::mem::take(&mut self.client.queued) {
            self.wire_to_worker(frame);
        }
    }

    /// Submits `req`; `send_now`: sent at once behind whatever is queued (as `FrameSink::send`
    /// does), else queued and flushed as the batching policy says.
    pub fn submit(&mut self, req: &Request<'_>, expect: Expect, send_now: bool) -> Ticket {
        let out = self.client.session.submit(req, expect).expect("submit");
        let mut frame = out.head.to_vec();
        frame.extend_from_slice(out.bulk);
        let ticket = out.ticket;
        self.client.queued.push(frame);
        if send_now {
            self.flush();
        } else {
            let queued = self.client.queued.iter().map(Vec::len).sum();
            if self.client.session.batch_queued(queued) == Flush::Now {
                self.flush();
            }
        }
        ticket
    }

    pub fn post(&mut self, req: &Request<'_>) {
        self.submit(req, Expect::NoReply, false);
    }

    /// Reads frames until `ticket`'s reply; virtual time jumps to the next event whenever
    /// nothing is to be read.
    pub fn wait_reply(&mut self, ticket: Ticket) -> Result<(), CallError> {
        self.client.session.arm_deadline(self.now);
        loop {
            match self.receive_one()? {
                Inbound::Reply(t, outcome) if t == ticket => return outcome,
                Inbound::Failed(_, e) | Inbound::Reply(_, Err(e)) => self.client.session.defer(e.code),
                _ => {}
            }
        }
    }

    pub fn wait_landings(&mut self, tickets: &[Ticket]) -> Result<(), CallError> {
        self.client.session.arm_deadline(self.now);
        let mut first = None;
        for &t in tickets {
            while self.client.session.is_pending(t) {
                if let Inbound::Failed(_, e) = self.receive_one()? {
                    first.get_or_insert(e);
                }
            }
        }
        first.map_or(Ok(()), Err)
    }

    pub fn receive_one(&mut self) -> Result<Inbound, CallError> {
        self.client.session.awaiting_frame(self.now);
        loop {
            if self.link.broken && self.client.session.resumable() {
                self.resume()?;
            }
            self.run_worker();
            if self.client.inbound.front().is_some_and(|f| f.at <= self.now) {
                let frame = self.client.inbound.pop_front().expect("checked");
                let (header, control, bulk) = split(&frame.bytes);
                let inbound = self.client.session.handle_frame(self.now, &header, control)?;
                match &inbound {
                    Inbound::Reply(_, Ok(())) => {
                        self.client.control = control.to_vec();
                        self.client.bulk = bulk.to_vec();
                    }
                    Inbound::Land(_, Landing { dst, len, rows: None }) => self.client.memory[*dst..dst + len].copy_from_slice(bulk),
                    other => assert!(!matches!(other, Inbound::Land(..)), "no 2D copies here"),
                }
                return Ok(inbound);
            }
            let next = [self.client.session.poll_timeout(), self.client.inbound.front().map(|f| f.at), self.worker_next_event()]
                .into_iter()
                .flatten()
                .min()
                .expect("a waiting client always has a timer");
            self.now = self.now.max(next);
            self.client.session.handle_timeout(self.now)?;
            let mut buf = Vec::new();
            while let Some(len) = self.client.session.poll_transmit(self.now, &mut buf) {
                self.wire_to_worker(buf[..len].to_vec());
            }
        }
    }

    /// The reply just read to a call of type `C`.
    pub fn reply<C: Call>(&self) -> Response<'_> {
        Response::parse(C::OPCODE.raw(), &self.client.control, &self.client.bulk).expect("a well-formed reply")
    }

    pub fn call<C: Call>(&mut self, req: C::Request<'_>) -> Result<Response<'_>, CallError> {
        let ticket = self.submit(&C::wrap(req), Expect::Reply, true);
        self.wait_reply(ticket)?;
        Ok(self.reply::<C>())
    }

    // ---- the worker's driver ------------------------------------------------------------

    pub fn worker_next_event(&self) -> Option<Instant> {
        if self.worker.frozen {
            return None;
        }
        let front = self.worker.inbound.front()?.at;
        Some(self.worker.busy_until.map_or(front, |busy| front.max(busy)))
    }

    pub fn wire_to_client(&mut self, bytes: Vec<u8>, at: Instant) {
        // Recorded before it is sent, as `hip_worker::driver`'s reply writer does.
        let id = split(&bytes).0.request_id;
        self.worker.session.replay_record().lock().unwrap().record(id, &bytes, &[]);
        if !self.crosses() {
            return;
        }
        push_sorted(&mut self.client.inbound, InFlight { bytes, at: at + LATENCY });
    }

    /// Handles every frame that has reached the worker, and sends the late replies of its
    /// stream work.
    pub fn run_worker(&mut self) {
        if self.worker.frozen {
            return;
        }
        if self.worker.busy_until.is_some_and(|t| t > self.now) {
            return;
        }
        self.worker.busy_until = None;
        while self.worker.inbound.front().is_some_and(|f| f.at <= self.now) {
            let frame = self.worker.inbound.pop_front().expect("checked");
            let done = self.handle_request(&frame.bytes);
            if done > self.now {
                // A long request: heartbeats until its reply, and nothing else is read.
                let mut beat = self.now + WORKER_HEARTBEAT;
                while beat < done {
                    self.wire_to_client(heartbeat(), beat);
                    beat += WORKER_HEARTBEAT;
                }
                self.worker.busy_until = Some(done);
                break;
            }
        }
        self.drain_late();
    }

    /// Handles one request as `hip_worker::driver` does; when its reply is sent.
    pub fn handle_request(&mut self, bytes: &[u8]) -> Instant {
        let (header, control, bulk) = split(bytes);
        let opcode = Opcode::from_u16(header.opcode).expect("a known opcode");
        let no_reply = header.flags.contains(Flags::NO_REPLY);
        self.worker.received.push((opcode, header.flags));
        let done = match (no_reply, self.worker.busy_next) {
            (false, Some(busy)) if opcode != Opcode::Ping => {
                self.worker.busy_next = None;
                self.now + busy
            }
            _ => self.now,
        };
        let id = header.request_id;
        let w = &mut self.worker;
        let mut cx = CallCx::new(id, opcode, no_reply, (self.now - w.started).as_nanos() as u64);
        let to_device = opcode.bulk() == BulkWay::RequestToDevice && !bulk.is_empty();
        let request = Request::parse(header.opcode, control, if to_device { &[] } else { bulk }).expect("a well-formed request");
        let mut replies = Vec::new();
        let fail = |replies: &mut Vec<Vec<u8>>, status: Status, message: &str| {
            if no_reply {
                w.late.defer(status);
            } else {
                replies.push(error_frame(id, header.opcode, status, message, w.late.take_deferred()));
            }
        };
        if to_device {
            let placed = w.session.bulk_destination(&request, bulk.len()).and_then(|destination| match destination {
                BulkDestination::Device { stream, ptr, .. } => w
                    .session
                    .receive_into_device(stream, ptr, bulk.len() as u64, &mut |dst| dst.copy_from_slice(bulk))
                    .map(|()| PlacedBulk::InDevice { len: bulk.len(), direct: false }),
                BulkDestination::Owned => Ok(PlacedBulk::Owned(bulk.to_vec())),
            });
            match placed {
                Ok(placed) => cx.placed = placed,
                Err(Failure::Status(status, message)) => {
                    // Answered, so executed (as `hip_worker::driver` marks it).
                    if w.session.resumable() {
                        w.session.replay_record().lock().unwrap().executed(id);
                        *w.executions.entry(id).or_default() += 1;
                    }
                    fail(&mut replies, status, &message);
                    self.send_all(replies, done);
                    return done;
                }
                Err(Failure::ReplyDeferred) => return done,
            }
        }
        let record = w.session.resumable().then(|| w.session.replay_record());
        let outcome = dispatch(&mut w.session, &mut cx, request);
        if let Some(record) = record {
            record.lock().unwrap().executed(id);
            *w.executions.entry(id).or_default() += 1;
        }
        match outcome {
            Ok(_) if no_reply => {}
            Ok(Outcome::Reply(response)) => replies.push(response_frame(id, &response, w.late.take_deferred())),
            Ok(Outcome::ReplyFromDevice { reply, ptr, len }) => {
                let mut frame = response_frame(id, &reply, w.late.take_deferred());
                drop(reply);
                let read = w.session.read_device_bytes(ptr, len, &mut |bytes| frame.extend_from_slice(bytes));
                read.map_err(|e| format!("{e:?}")).expect("device bytes");
                let head = split(&frame).0;
                let patched = FrameHeader { bulk_len: len as u32, flags: head.flags | Flags::BULK, ..head };
                frame[..proto_core::HEADER_LEN].copy_from_slice(&patched.emit());
                replies.push(frame);
            }
            Ok(Outcome::Later) | Err(Failure::ReplyDeferred) => w.outstanding += 1,
            Err(Failure::Status(status, message)) => fail(&mut replies, status, &message),
        }
        self.send_all(replies, done);
        done
    }

    pub fn send_all(&mut self, frames: Vec<Vec<u8>>, at: Instant) {
        for frame in frames {
            self.wire_to_client(frame, at);
        }
    }

    pub fn drain_late(&mut self) {
        loop {
            while let Some((mut frame, bulk)) = self.worker.late.pop() {
                frame.extend_from_slice(&bulk);
                if split(&frame).0.request_id != 0 {
                    self.worker.outstanding = self.worker.outstanding.saturating_sub(1);
                }
                self.wire_to_client(frame, self.now);
            }
            if self.worker.outstanding == 0 {
                return;
            }
            assert!(self.worker.late.wait_timeout(STREAM_WORK_BOUND).is_some(), "the backend's stream work did not finish");
        }
    }

    /// The notice a worker sends when the session's process dies (`hip_worker::sandbox`).
    pub fn worker_dies(&mut self) {
        let frame = error_frame(0, 0, Status::LAUNCH_FAILURE, "the session's process died (killed by signal 9): the session has ended", 0);
        self.wire_to_client(frame, self.now);
        self.worker.frozen = true;
    }
}

pub fn response_frame(id: u64, response: &Response<'_>, aux: i32) -> Vec<u8> {
    let mut buf = vec![0; 256];
    loop {
        match response.encode_frame(&mut buf, id, aux) {
            Ok(frame) => {
                let mut bytes = buf[..frame.head_len].to_vec();
                bytes.extend_from_slice(frame.bulk);
                return bytes;
            }
            Err(proto_core::EncodeError::BufferTooSmall { required }) => buf.resize(required, 0),
            Err(e) => panic!("{e}"),
        }
    }
}

pub fn error_frame(id: u64, opcode: u16, status: Status, message: &str, aux: i32) -> Vec<u8> {
    let mut buf = vec![0; 1024];
    let meta = FrameMeta { opcode, flags: Flags::RESPONSE | Flags::ERROR, request_id: id, credits: 0, aux };
    let frame = encode_frame(&mut buf, meta, &ErrorReply { status, message: message.into() }).expect("encode");
    buf[..frame.head_len].to_vec()
}

pub fn heartbeat() -> Vec<u8> {
    response_frame(0, &Response::Ping(wire::Pong { nonce: 0, worker_time_ns: 0, payload: Default::default() }), 0)
}

pub fn malloc(pair: &mut Pair, size: u64) -> u64 {
    match pair.call::<calls::Malloc>(wire::Malloc { device: 0, size, flags: 0 }).expect("hipMalloc") {
        Response::Malloc(a) => a.ptr,
        other => panic!("{other:?}"),
    }
}

pub fn device_count(pair: &mut Pair) -> Result<u32, CallError> {
    match pair.call::<calls::GetDeviceCount>(wire::Empty {})? {
        Response::GetDeviceCount(c) => Ok(c.count),
        other => panic!("{other:?}"),
    }
}

pub fn memset(dst: u64, value: u32, count: u64) -> Request<'static> {
    calls::Memset::wrap(wire::Memset { dst, value, width: wire::MemsetWidth::Byte, count, stream: 0, sync: false })
}

/// Reads `len` bytes of device memory at `src` into the client's memory at offset 0.
pub fn download(pair: &mut Pair, src: u64, len: usize) -> Result<Vec<u8>, CallError> {
    let req = calls::MemcpyDtoH::wrap(wire::MemcpyDtoH { src, len: len as u64, stream: 0 });
    let ticket = pair.submit(&req, Expect::Landing { landing: Landing { dst: 0, len, rows: None }, awaited: true }, true);
    pair.wait_landings(&[ticket])?;
    Ok(pair.client.memory[..len].to_vec())
}
