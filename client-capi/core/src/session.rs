//! [`ClientSession`]: what one client connection knows, without the connection.

use crate::batching::{Batching, Flush};
use crate::error::{status_to_hip, CallError, HipError, LOST};
use crate::liveness::{Expired, Timers};
use proto_core::wire::{self, ErrorReply};
use proto_core::{calls, Call, Flags, FrameHeader, Message, Opcode, Request, Status};
use std::collections::HashMap;
use std::time::{Duration, Instant};

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
pub enum Delivery {
    /// A reply the driver waits for.
    Reply,
    /// Fire-and-forget (`NO_REPLY`): a failure becomes the deferred error.
    Posted,
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
    pending: HashMap<u64, Pending>,
    /// First failure of a fire-and-forget request not yet reported to the application.
    deferred: Option<HipError>,
    /// The worker ended the session with an error frame of request id 0 (a refusal, or the
    /// death of the session's process): every call from then on fails with it.
    ended: Option<CallError>,
    batching: Batching,
    timers: Timers,
}

impl ClientSession {
    /// A session whose first request is id 1.
    pub fn new(config: SessionConfig) -> Self {
        Self {
            next_id: 1,
            encode_buf: vec![0; 64 << 10],
            pending: HashMap::new(),
            deferred: None,
            ended: None,
            batching: Batching::default(),
            timers: Timers::new(config.heartbeat, config.liveness_timeout, config.call_timeout),
        }
    }

    /// Encodes `req` as the next request; the returned head and bulk go to the transport
    /// next (in the order of submission). Fails once the worker has ended the session, and
    /// for a request that cannot be encoded (its id is then spent).
    pub fn submit<'s, 'r>(&'s mut self, req: &Request<'r>, delivery: Delivery) -> Result<Submitted<'s, 'r>, CallError> {
        if let Some(ended) = &self.ended {
            return Err(ended.clone());
        }
        let id = self.next_id;
        self.next_id += 1;
        let flags = if delivery == Delivery::Posted { Flags::NO_REPLY } else { Flags::empty() };
        let (head_len, bulk) = self.encode(req, flags, id)?;
        match delivery {
            Delivery::Reply => {
                self.pending.insert(id, Pending::Reply);
            }
            Delivery::Landing { landing, awaited } => {
                self.pending.insert(id, Pending::Landing { landing, awaited });
            }
            Delivery::Posted => {}
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
        if header.aux != 0 {
            self.deferred.get_or_insert(status_to_hip(Status(header.aux)));
        }
        if header.flags.contains(Flags::ERROR) {
            let error = match ErrorReply::parse(control, &[]) {
                Ok(reply) => CallError::new(status_to_hip(reply.status), reply.message.as_str()),
                Err(e) => CallError::new(HipError::UNKNOWN, format!("malformed error reply: {e}")),
            };
            if id == 0 {
                // The worker ended the session itself (a bad frame, the version, the death of
                // the session's process): fatal, and sticky.
                self.ended.get_or_insert_with(|| error.clone());
                return Err(error);
            }
            return Ok(match self.pending.remove(&id) {
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
        Ok(match self.pending.remove(&id) {
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

    /// Whether `ticket`'s reply or landing is still expected.
    pub fn is_pending(&self, ticket: Ticket) -> bool {
        self.pending.contains_key(&ticket.0)
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
}
