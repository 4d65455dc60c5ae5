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

use client_core::{resume_failed, CallError, ClientSession, Expect, Flush, HipError, Inbound, Landing, SessionConfig, Ticket, FIRST_BATCH_BYTES};
use hip_worker::backend::{HostBackend, HostConfig};
use hip_worker::resume::{Refused, ResumeHub};
use hip_worker::session::{BulkDestination, CallCx, Failure, LateReplies, PlacedBulk, Session, SessionConfig as WorkerSessionConfig};
use proto_core::frame::FrameMeta;
use proto_core::opcode::dispatch;
use proto_core::wire::{self, ErrorReply};
use proto_core::{
    calls, encode_frame, Bulk, BulkWay, Call, DeframedHead, Flags, FrameDecoder, FrameHeader, Opcode, Outcome, Request, Response, Status,
};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The client's defaults: a PING after each heartbeat of silence, given up after the timeout.
const HEARTBEAT: Duration = transport_core::config::DEFAULT_HEARTBEAT;
const LIVENESS_TIMEOUT: Duration = transport_core::config::DEFAULT_LIVENESS_TIMEOUT;
/// The worker's heartbeat while it handles a request.
const WORKER_HEARTBEAT: Duration = transport_core::config::WORKER_HEARTBEAT;
const LATENCY: Duration = Duration::from_millis(1);
/// Longest real wait for the backend's stream threads.
const STREAM_WORK_BOUND: Duration = Duration::from_secs(20);

/// A frame on the wire: head and bulk, and when it arrives.
struct InFlight {
    bytes: Vec<u8>,
    at: Instant,
}

fn split(bytes: &[u8]) -> (FrameHeader, &[u8], &[u8]) {
    match FrameDecoder::decode_head(bytes).expect("a valid frame") {
        DeframedHead::Head { header, control, consumed } => (header, control, &bytes[consumed..]),
        DeframedHead::NeedMore { .. } => panic!("a frame cut short"),
    }
}

fn push_sorted(queue: &mut VecDeque<InFlight>, frame: InFlight) {
    let at = queue.iter().rposition(|f| f.at <= frame.at).map_or(0, |i| i + 1);
    queue.insert(at, frame);
}

struct WorkerEnd {
    session: Session,
    late: Arc<LateReplies>,
    inbound: VecDeque<InFlight>,
    /// Reads nothing, answers nothing (a frozen process whose kernel still ACKs).
    frozen: bool,
    /// The next request that wants a reply takes this long (heartbeats meanwhile).
    busy_next: Option<Duration>,
    /// Until then it handles one request and reads nothing else.
    busy_until: Option<Instant>,
    /// Replies that stream work will queue in `late`.
    outstanding: usize,
    /// Opcodes and flags of every frame it read.
    received: Vec<(Opcode, Flags)>,
    /// How many times each request id was executed (a resumed session runs each once).
    executions: HashMap<u64, usize>,
    started: Instant,
}

/// The link between the ends: frames that cross it, and a break after a given count.
#[derive(Default)]
struct Link {
    /// Frames that crossed so far, both ways.
    crossed: usize,
    /// The link breaks when this many frames have crossed: that frame and every one in
    /// flight are lost.
    break_at: Option<usize>,
    broken: bool,
    /// Times the client resumed the session.
    resumes: usize,
    /// Real time between the break and the client's `Resume` (the worker's grace period
    /// runs on the real clock).
    resume_after: Duration,
    /// The client presents a secret other than its WELCOME's.
    wrong_secret: bool,
}

struct ClientEnd {
    session: ClientSession,
    /// The transport's coalescing buffer: posted frames not sent yet.
    queued: Vec<Vec<u8>>,
    inbound: VecDeque<InFlight>,
    /// Application memory copies land in (`Landing::dst` is an offset into it).
    memory: Vec<u8>,
    /// The control part of the awaited reply just read, and its bulk.
    control: Vec<u8>,
    bulk: Vec<u8>,
}

struct Pair {
    client: ClientEnd,
    worker: WorkerEnd,
    link: Link,
    /// Where the worker keeps a session whose connection broke (`hip_worker::resume`).
    hub: Arc<ResumeHub>,
    backend: Arc<HostBackend>,
    worker_config: Arc<WorkerSessionConfig>,
    now: Instant,
}

impl Pair {
    fn new(call_timeout: Option<Duration>) -> Self {
        Self::with_grace(call_timeout, hip_worker::resume::DEFAULT_RESUME_GRACE)
    }

    fn with_grace(call_timeout: Option<Duration>, grace: Duration) -> Self {
        let backend = Arc::new(HostBackend::new(HostConfig { devices: 1, memory_per_device: 64 << 20, ..HostConfig::default() }));
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
                memory: vec![0; 1 << 20],
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
    fn greeted(call_timeout: Option<Duration>) -> Self {
        let mut pair = Self::new(call_timeout);
        pair.hello(wire::features::FIRE_AND_FORGET);
        pair
    }

    /// A pair past HELLO/WELCOME whose session outlives its connection (`RESUME`).
    fn resumable(grace: Duration) -> Self {
        // A call deadline: a reply that never comes fails the test instead of hanging it.
        let mut pair = Self::with_grace(Some(Duration::from_secs(600)), grace);
        pair.hello(wire::features::FIRE_AND_FORGET | wire::features::RESUME);
        assert!(pair.client.session.resumable(), "the worker offered RESUME and gave a secret");
        pair
    }

    fn hello(&mut self, features: u64) {
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
    fn crosses(&mut self) -> bool {
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
    fn resume(&mut self) -> Result<(), CallError> {
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

    fn wire_to_worker(&mut self, bytes: Vec<u8>) {
        if !self.crosses() {
            return;
        }
        let at = self.now + LATENCY;
        push_sorted(&mut self.worker.inbound, InFlight { bytes, at });
    }

    /// Sends the transport's queue.
    fn flush(&mut self) {
        for frame in std::mem::take(&mut self.client.queued) {
            self.wire_to_worker(frame);
        }
    }

    /// Submits `req`; `send_now`: sent at once behind whatever is queued (as `FrameSink::send`
    /// does), else queued and flushed as the batching policy says.
    fn submit(&mut self, req: &Request<'_>, expect: Expect, send_now: bool) -> Ticket {
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

    fn post(&mut self, req: &Request<'_>) {
        self.submit(req, Expect::NoReply, false);
    }

    /// Reads frames until `ticket`'s reply; virtual time jumps to the next event whenever
    /// nothing is to be read.
    fn wait_reply(&mut self, ticket: Ticket) -> Result<(), CallError> {
        self.client.session.arm_deadline(self.now);
        loop {
            match self.receive_one()? {
                Inbound::Reply(t, outcome) if t == ticket => return outcome,
                Inbound::Failed(_, e) | Inbound::Reply(_, Err(e)) => self.client.session.defer(e.code),
                _ => {}
            }
        }
    }

    fn wait_landings(&mut self, tickets: &[Ticket]) -> Result<(), CallError> {
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

    fn receive_one(&mut self) -> Result<Inbound, CallError> {
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
    fn reply<C: Call>(&self) -> Response<'_> {
        Response::parse(C::OPCODE.raw(), &self.client.control, &self.client.bulk).expect("a well-formed reply")
    }

    fn call<C: Call>(&mut self, req: C::Request<'_>) -> Result<Response<'_>, CallError> {
        let ticket = self.submit(&C::wrap(req), Expect::Reply, true);
        self.wait_reply(ticket)?;
        Ok(self.reply::<C>())
    }

    // ---- the worker's driver ------------------------------------------------------------

    fn worker_next_event(&self) -> Option<Instant> {
        if self.worker.frozen {
            return None;
        }
        let front = self.worker.inbound.front()?.at;
        Some(self.worker.busy_until.map_or(front, |busy| front.max(busy)))
    }

    fn wire_to_client(&mut self, bytes: Vec<u8>, at: Instant) {
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
    fn run_worker(&mut self) {
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
    fn handle_request(&mut self, bytes: &[u8]) -> Instant {
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

    fn send_all(&mut self, frames: Vec<Vec<u8>>, at: Instant) {
        for frame in frames {
            self.wire_to_client(frame, at);
        }
    }

    fn drain_late(&mut self) {
        loop {
            while let Some((frame, _)) = self.worker.late.pop() {
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
    fn worker_dies(&mut self) {
        let frame = error_frame(0, 0, Status::LAUNCH_FAILURE, "the session's process died (killed by signal 9): the session has ended", 0);
        self.wire_to_client(frame, self.now);
        self.worker.frozen = true;
    }
}

fn response_frame(id: u64, response: &Response<'_>, aux: i32) -> Vec<u8> {
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

fn error_frame(id: u64, opcode: u16, status: Status, message: &str, aux: i32) -> Vec<u8> {
    let mut buf = vec![0; 1024];
    let meta = FrameMeta { opcode, flags: Flags::RESPONSE | Flags::ERROR, request_id: id, credits: 0, aux };
    let frame = encode_frame(&mut buf, meta, &ErrorReply { status, message: message.into() }).expect("encode");
    buf[..frame.head_len].to_vec()
}

fn heartbeat() -> Vec<u8> {
    response_frame(0, &Response::Ping(wire::Pong { nonce: 0, worker_time_ns: 0, payload: Default::default() }), 0)
}

fn malloc(pair: &mut Pair, size: u64) -> u64 {
    match pair.call::<calls::Malloc>(wire::Malloc { device: 0, size, flags: 0 }).expect("hipMalloc") {
        Response::Malloc(a) => a.ptr,
        other => panic!("{other:?}"),
    }
}

fn device_count(pair: &mut Pair) -> Result<u32, CallError> {
    match pair.call::<calls::GetDeviceCount>(wire::Empty {})? {
        Response::GetDeviceCount(c) => Ok(c.count),
        other => panic!("{other:?}"),
    }
}

fn memset(dst: u64, value: u32, count: u64) -> Request<'static> {
    calls::Memset::wrap(wire::Memset { dst, value, width: wire::MemsetWidth::Byte, count, stream: 0, sync: false })
}

/// Reads `len` bytes of device memory at `src` into the client's memory at offset 0.
fn download(pair: &mut Pair, src: u64, len: usize) -> Result<Vec<u8>, CallError> {
    let req = calls::MemcpyDtoH::wrap(wire::MemcpyDtoH { src, len: len as u64, stream: 0 });
    let ticket = pair.submit(&req, Expect::Landing { landing: Landing { dst: 0, len, rows: None }, awaited: true }, true);
    pair.wait_landings(&[ticket])?;
    Ok(pair.client.memory[..len].to_vec())
}

#[test]
fn posted_uploads_and_a_landed_download_carry_the_bytes_both_ways() {
    let mut pair = Pair::greeted(None);
    let ptr = malloc(&mut pair, 4096);
    let data: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 251) as u8).collect();
    pair.post(&calls::MemcpyHtoD::wrap(wire::MemcpyHtoD { dst: ptr, stream: 0, sync: false, data: Bulk(&data) }));
    assert_eq!(download(&mut pair, ptr, data.len()).expect("download"), data);
    assert!(!pair.client.session.has_pending_landings());
    assert_eq!(pair.client.session.take_deferred(), None);
}

#[test]
fn a_failed_posted_request_is_reported_by_the_next_reply_with_the_workers_own_status() {
    let mut pair = Pair::greeted(None);
    let ptr = malloc(&mut pair, 4096);
    pair.call::<calls::Free>(wire::Free { ptr }).expect("hipFree");
    // The oracle: the worker's answer to the same request as a call.
    let ticket = pair.submit(&memset(ptr, 1, 16), Expect::Reply, true);
    let refused = pair.wait_reply(ticket).expect_err("memset of freed memory");
    assert_ne!(refused.code, HipError::SUCCESS);
    pair.post(&memset(ptr, 1, 16));
    assert_eq!(pair.client.session.take_deferred(), None, "nothing known before a reply");
    assert_eq!(device_count(&mut pair).expect("the call itself succeeds"), 1);
    assert_eq!(pair.client.session.take_deferred(), Some(refused.code), "{}", refused.message);
    assert_eq!(pair.client.session.take_deferred(), None, "reported once");
}

#[test]
fn a_frozen_worker_is_pinged_each_heartbeat_and_given_up_after_the_liveness_timeout() {
    let mut pair = Pair::greeted(Some(Duration::from_secs(600)));
    pair.worker.frozen = true;
    let started = pair.now;
    let sent_before = pair.worker.inbound.len();
    let e = device_count(&mut pair).expect_err("a frozen worker cannot answer");
    assert!(e.is_lost() && e.message.contains(&format!("no answer within {} s", LIVENESS_TIMEOUT.as_secs())), "{}", e.message);
    assert_eq!(pair.now - started, LIVENESS_TIMEOUT, "given up at the timeout, in virtual time");
    let pings = pair.worker.inbound.iter().skip(sent_before + 1).filter(|f| split(&f.bytes).0.opcode == Opcode::Ping.raw()).count();
    assert_eq!(pings, (LIVENESS_TIMEOUT.as_secs() / HEARTBEAT.as_secs() - 1) as usize, "a PING after each heartbeat of silence");
}

#[test]
fn a_busy_worker_that_sends_heartbeats_is_waited_for_until_the_call_deadline() {
    // Three liveness timeouts of work: its heartbeats keep the call alive.
    let mut pair = Pair::greeted(Some(Duration::from_secs(600)));
    pair.worker.busy_next = Some(3 * LIVENESS_TIMEOUT);
    let started = pair.now;
    assert_eq!(device_count(&mut pair).expect("heartbeats keep the call alive"), 1);
    assert!(pair.now - started >= 3 * LIVENESS_TIMEOUT);
    // The same with a 60 s call deadline: it ends the call.
    let mut pair = Pair::greeted(Some(Duration::from_secs(60)));
    pair.worker.busy_next = Some(3 * LIVENESS_TIMEOUT);
    let started = pair.now;
    let e = device_count(&mut pair).expect_err("the deadline passes");
    assert!(e.is_lost() && e.message.contains("HIP_REMOTE_IO_TIMEOUT"), "{}", e.message);
    assert_eq!(pair.now - started, Duration::from_secs(60));
}

#[test]
fn the_first_batch_after_a_reply_reaches_the_worker_early_and_runs() {
    let mut pair = Pair::greeted(None);
    let ptr = malloc(&mut pair, 1 << 16);
    let before = pair.worker.received.len();
    let mut sent_at = None;
    for i in 0..200u64 {
        pair.post(&memset(ptr + i * 256, (i % 255) as u32 + 1, 256));
        if sent_at.is_none() && pair.client.queued.is_empty() {
            sent_at = Some(i + 1);
        }
    }
    let first = sent_at.expect("a first batch went before 200 memsets were queued") as usize;
    let frame_len = proto_core::HEADER_LEN + 40;
    assert!(first * frame_len >= FIRST_BATCH_BYTES / 2 && first < 200, "first batch after {first} memsets");
    assert!(!pair.client.queued.is_empty(), "the rest wait in the transport's queue");
    pair.now += LATENCY;
    pair.run_worker();
    assert_eq!(pair.worker.received.len() - before, first, "the worker has the first batch while the rest are queued");
    // A call sends the rest first; every memset has run when its reply comes.
    assert_eq!(device_count(&mut pair).expect("call"), 1);
    assert_eq!(pair.worker.received.len() - before, 201);
    let bytes = download(&mut pair, ptr, 200 * 256).expect("download");
    assert!(bytes.chunks(256).enumerate().all(|(i, c)| c.iter().all(|&b| b == (i % 255) as u8 + 1)));
}

#[test]
fn a_session_ended_by_the_worker_fails_the_waiting_call_and_every_later_one() {
    let mut pair = Pair::greeted(None);
    let ticket = pair.submit(&calls::GetDeviceCount::wrap(wire::Empty {}), Expect::Reply, true);
    pair.worker_dies();
    let e = pair.wait_reply(ticket).expect_err("the session is over");
    assert_eq!(e.code, HipError(Status::LAUNCH_FAILURE.0), "the worker's status, as HIP reports a device fault");
    assert!(e.message.contains("process died"), "{}", e.message);
    let later = pair.client.session.submit(&calls::GetDeviceCount::wrap(wire::Empty {}), Expect::Reply).map(|o| o.ticket).unwrap_err();
    assert_eq!(later, e, "sticky");
    let posted = pair.client.session.submit(&memset(0, 0, 1), Expect::NoReply).map(|o| o.ticket).unwrap_err();
    assert_eq!(posted, e);
}

// ---- resume ---------------------------------------------------------------------------------

/// Bytes of the workload's source buffer and of each slot of its result buffer.
const SLOT: usize = 4096;
const SLOTS: usize = 8;
/// Where the workload's downloads land in the client's memory.
const B_AT: usize = 0;
const A_AT: usize = SLOTS * SLOT;

fn source_bytes() -> Vec<u8> {
    (0..4 * SLOT).map(|i| (i * 31 % 253) as u8).collect()
}

fn try_malloc(pair: &mut Pair, size: u64) -> Result<u64, CallError> {
    match pair.call::<calls::Malloc>(wire::Malloc { device: 0, size, flags: 0 })? {
        Response::Malloc(a) => Ok(a.ptr),
        other => panic!("{other:?}"),
    }
}

/// A device-to-host copy of `len` bytes at `src` in chunks whose replies land at `at`.
fn download_at(pair: &mut Pair, src: u64, len: usize, at: usize, chunk: usize) -> Result<(), CallError> {
    let mut tickets = Vec::new();
    for offset in (0..len).step_by(chunk) {
        let n = chunk.min(len - offset);
        let req = calls::MemcpyDtoH::wrap(wire::MemcpyDtoH { src: src + offset as u64, len: n as u64, stream: 0 });
        let landing = Landing { dst: at + offset, len: n, rows: None };
        tickets.push(pair.submit(&req, Expect::Landing { landing, awaited: true }, false));
    }
    pair.flush();
    pair.wait_landings(&tickets)
}

/// Allocates, uploads, then eight times sets the source's first slot to a new value and
/// copies it to the next slot of the result (a memset or copy run again later would leave
/// a later value in an earlier slot), downloads the result, synchronizes, downloads the
/// source. Its results land in the client's memory at `B_AT` and `A_AT`.
fn workload(pair: &mut Pair) -> Result<(), CallError> {
    let a = try_malloc(pair, (4 * SLOT) as u64)?;
    let b = try_malloc(pair, (SLOTS * SLOT) as u64)?;
    let data = source_bytes();
    for (i, half) in data.chunks(2 * SLOT).enumerate() {
        let dst = a + (i * 2 * SLOT) as u64;
        pair.post(&calls::MemcpyHtoD::wrap(wire::MemcpyHtoD { dst, stream: 0, sync: false, data: Bulk(half) }));
    }
    for slot in 0..SLOTS {
        pair.post(&memset(a, slot as u32 + 1, SLOT as u64));
        let dst = b + (slot * SLOT) as u64;
        pair.post(&calls::MemcpyDtoD::wrap(wire::MemcpyDtoD { dst, src: a, len: SLOT as u64, stream: 0, sync: false }));
    }
    download_at(pair, b, SLOTS * SLOT, B_AT, 2 * SLOT)?;
    pair.call::<calls::DeviceSynchronize>(wire::DeviceRef { device: 0 })?;
    download_at(pair, a, 4 * SLOT, A_AT, 4 * SLOT)
}

/// What the workload must leave, computed on the host.
fn workload_oracle() -> (Vec<u8>, Vec<u8>) {
    let b: Vec<u8> = (0..SLOTS).flat_map(|slot| std::iter::repeat_n(slot as u8 + 1, SLOT)).collect();
    let mut a = source_bytes();
    a[..SLOT].fill(SLOTS as u8);
    (b, a)
}

fn check_workload(pair: &mut Pair, what: &str) {
    let (b, a) = workload_oracle();
    let memory = &pair.client.memory;
    assert!(memory[B_AT..B_AT + b.len()] == b[..], "{what}: the result slots differ from the oracle");
    assert!(memory[A_AT..A_AT + a.len()] == a[..], "{what}: the source buffer differs from the oracle");
    assert_eq!(pair.client.session.take_deferred(), None, "{what}: no failure was deferred");
}

/// The connection breaks at every frame of a workload in turn (requests lost before the
/// worker read them, replies lost after it executed their requests, landings): each time
/// the client resumes the session, gets the lost replies from the worker's record, sends
/// again only what the worker never executed, and the workload's results match the oracle;
/// every request was executed exactly once.
#[test]
fn a_connection_broken_at_any_frame_is_resumed_and_nothing_runs_twice() {
    // The clean run: how many frames the workload sends and receives, which requests run.
    let mut clean = Pair::resumable(hip_worker::resume::DEFAULT_RESUME_GRACE);
    let (crossed_before, executed_before) = (clean.link.crossed, clean.worker.executions.len());
    workload(&mut clean).expect("the workload without a break");
    check_workload(&mut clean, "without a break");
    let frames = clean.link.crossed - crossed_before;
    let requests = clean.worker.executions.len() - executed_before;
    assert!(frames > 2 * requests / 2 && requests > 2 * SLOTS, "{frames} frames, {requests} requests");
    assert_eq!(clean.link.resumes, 0);
    for at in 1..=frames {
        let mut pair = Pair::resumable(hip_worker::resume::DEFAULT_RESUME_GRACE);
        pair.link.break_at = Some(pair.link.crossed + at);
        let what = format!("broken at frame {at} of {frames}");
        workload(&mut pair).unwrap_or_else(|e| panic!("{what}: {}", e.message));
        check_workload(&mut pair, &what);
        assert_eq!(pair.link.resumes, 1, "{what}: resumed once");
        let twice: Vec<_> = pair.worker.executions.iter().filter(|(_, &n)| n != 1).collect();
        assert!(twice.is_empty(), "{what}: requests executed more than once: {twice:?}");
        assert_eq!(pair.worker.executions.len() - executed_before, requests, "{what}: every request executed");
        assert_eq!(pair.client.session.unacked_bytes(), 0, "{what}: every request acknowledged, none kept");
        assert_eq!(pair.hub.parked_count(), 0, "{what}: the session was taken back");
    }
}

/// Past the worker's grace period the session is gone: the waiting call fails with the
/// lost connection's error (hipErrorNotInitialized) instead of hanging, and so does a
/// resume with a wrong secret.
#[test]
fn a_resume_after_the_grace_period_or_with_a_wrong_secret_gets_the_lost_connection_error() {
    for (grace, resume_after, wrong_secret) in
        [(Duration::from_millis(20), Duration::from_millis(200), false), (Duration::from_secs(60), Duration::ZERO, true)]
    {
        let mut pair = Pair::resumable(grace);
        let ptr = try_malloc(&mut pair, 4096).expect("hipMalloc");
        pair.link.resume_after = resume_after;
        pair.link.wrong_secret = wrong_secret;
        // The memset reaches the worker; its reply is lost.
        pair.link.break_at = Some(pair.link.crossed + 2);
        let ticket = pair.submit(&memset(ptr, 1, 16), Expect::Reply, true);
        let e = pair.wait_reply(ticket).expect_err("nothing to resume");
        assert_eq!(e.code, HipError::NOT_INITIALIZED, "{}", e.message);
        assert!(e.is_lost() && e.message.contains("could not be resumed"), "{}", e.message);
        assert_eq!(pair.link.resumes, 1);
    }
}

// ---- managed mirrors ------------------------------------------------------------------------

const PAGE: usize = wire::MANAGED_PAGE as usize;
/// Where the mirror's application memory "is" (an address the session only records).
const MIRROR_BASE: usize = 0x7000_0000;
const MIRROR_PAGES: usize = 4;

/// The application's side of one managed range, and the driver's part of the coherence
/// engine as `client-capi`'s `conn/mirrors.rs` does it, on a buffer instead of raw memory.
struct ManagedHost {
    bytes: Vec<u8>,
}

impl ManagedHost {
    /// Before a request: pushes every page that changed when the session's book asks.
    fn before(&self, pair: &mut Pair, op: Opcode) {
        if !pair.client.session.managed().before_request(op) {
            return;
        }
        let mut book = std::mem::take(pair.client.session.managed());
        let mut pushed = 0;
        for mirror in book.iter_mut() {
            let (mut pages, mut data) = (Vec::new(), Vec::new());
            for (i, page) in self.bytes.chunks_exact(PAGE).enumerate() {
                if mirror.note_local(i, wire::page_hash(page)) {
                    pages.push(zerocopy::byteorder::little_endian::U32::new(i as u32));
                    data.extend_from_slice(page);
                }
            }
            if !pages.is_empty() {
                pushed += data.len();
                let push = wire::ManagedPush { ptr: mirror.device_base, pages: proto_core::List(&pages), data: Bulk(&data) };
                pair.post(&calls::ManagedPush::wrap(push));
            }
        }
        book.note_pushed_bytes(pushed);
        *pair.client.session.managed() = book;
    }

    /// After a synchronising call: pulls the device's changes when the book says they may exist.
    fn after_sync(&mut self, pair: &mut Pair) {
        let Some(due) = pair.client.session.managed().pull_due() else { return };
        let mut book = std::mem::take(pair.client.session.managed());
        let mut pulled = 0;
        for mirror in book.iter_mut() {
            let reply = pair.call::<calls::ManagedPull>(wire::ManagedPull { ptr: mirror.device_base, from: 0 }).expect("ManagedPull");
            let Response::ManagedPull(p) = reply else { panic!("{reply:?}") };
            assert_eq!(p.next as usize, MIRROR_PAGES, "one reply holds the whole range");
            for (index, page) in p.pages.0.iter().zip(p.data.0.chunks_exact(PAGE)) {
                let i = index.get() as usize;
                self.bytes[i * PAGE..(i + 1) * PAGE].copy_from_slice(page);
                mirror.note_pulled(i, wire::page_hash(page));
                pulled += PAGE;
            }
        }
        book.note_pulled_bytes(pulled);
        book.pulled(due);
        *pair.client.session.managed() = book;
    }

    fn post(&self, pair: &mut Pair, req: &Request<'_>) {
        self.before(pair, req.opcode());
        pair.post(req);
    }

    fn device_synchronize(&mut self, pair: &mut Pair) {
        self.before(pair, Opcode::DeviceSynchronize);
        pair.call::<calls::DeviceSynchronize>(wire::DeviceRef { device: 0 }).expect("hipDeviceSynchronize");
        self.after_sync(pair);
    }
}

/// Managed memory through the session's book of mirrors against the host backend: the CPU's
/// writes reach the device before the work that reads them, the device's come back after a
/// synchronisation, only changed pages move (counted both ways), and a device-wide
/// synchronisation that pulled everything leaves nothing to pull until new device work.
#[test]
fn managed_mirrors_move_only_changed_pages_and_match_the_host_oracle() {
    let mut pair = Pair::greeted(None);
    let size = (MIRROR_PAGES * PAGE) as u64;
    let device_base = match pair.call::<calls::ManagedAlloc>(wire::ManagedAlloc { device: 0, size, hint: 0 }).expect("ManagedAlloc") {
        Response::ManagedAlloc(a) => a.ptr,
        other => panic!("{other:?}"),
    };
    let end = MIRROR_BASE + MIRROR_PAGES * PAGE;
    let mirror = client_core::managed::Mirror::new(
        client_core::managed::MirrorKind::Managed,
        MIRROR_BASE,
        MIRROR_PAGES * PAGE,
        (MIRROR_BASE, end),
        device_base,
        0,
        0,
    );
    pair.client.session.managed().insert(mirror);
    let mut host = ManagedHost { bytes: vec![0; MIRROR_PAGES * PAGE] };
    let mut oracle = vec![0u8; MIRROR_PAGES * PAGE];

    // The CPU writes page 0 and ten bytes of page 3; the device sets page 1 and reads page 0
    // (a device-to-device copy of it into page 2).
    host.bytes[..PAGE].fill(0x11);
    host.bytes[3 * PAGE..3 * PAGE + 10].fill(0x33);
    oracle.clone_from(&host.bytes);
    host.post(&mut pair, &memset(device_base + PAGE as u64, 0x22, PAGE as u64));
    oracle[PAGE..2 * PAGE].fill(0x22);
    let copy = wire::MemcpyDtoD { dst: device_base + 2 * PAGE as u64, src: device_base, len: 64, stream: 0, sync: false };
    host.post(&mut pair, &calls::MemcpyDtoD::wrap(copy));
    oracle[2 * PAGE..2 * PAGE + 64].fill(0x11);
    host.device_synchronize(&mut pair);

    assert!(host.bytes == oracle, "the application's memory differs from the host oracle");
    let (pushed, pulled) = pair.client.session.managed().stats();
    assert_eq!(pushed, 2 * PAGE as u64, "pages 0 and 3 changed on the CPU, pushed once");
    assert_eq!(pulled, 2 * PAGE as u64, "pages 1 and 2 changed on the device, pulled once");

    // Covered by the device-wide synchronisation: nothing moves, nor is asked for, until new
    // device work.
    let pulls = |pair: &Pair| pair.worker.received.iter().filter(|(op, _)| *op == Opcode::ManagedPull).count();
    let pulls_before = pulls(&pair);
    host.device_synchronize(&mut pair);
    assert_eq!(pair.client.session.managed().stats(), (pushed, pulled));
    assert_eq!(pulls(&pair), pulls_before, "a covered synchronisation asks the worker for nothing");
    host.bytes[PAGE] = 0x44;
    oracle[PAGE] = 0x44;
    host.post(&mut pair, &memset(device_base + 3 * PAGE as u64, 0x55, 4));
    oracle[3 * PAGE..3 * PAGE + 4].fill(0x55);
    host.device_synchronize(&mut pair);
    assert!(host.bytes == oracle, "after the second round the application's memory differs from the oracle");
    assert_eq!(pair.client.session.managed().stats(), (pushed + PAGE as u64, pulled + PAGE as u64));
    assert_eq!(download(&mut pair, device_base, 4 * PAGE).expect("download"), oracle, "the device twin matches too");
    assert_eq!(pair.client.session.take_deferred(), None);
}
