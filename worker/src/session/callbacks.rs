//! Stream callbacks (`hipStreamAddCallback`, `hipLaunchHostFunc`), stream memory operations
//! and per-thread default streams.
//!
//! A callback is client code, so the worker cannot run it. The stream stops at a host step
//! that hands the callback to the session's [`CallbackChannel`] and waits; the client's
//! callback thread, on a second connection of its own bound to this session, fetches it
//! (`CALLBACK_NEXT`), runs it and answers with its next fetch; the answer releases the
//! stream. The channel closing (that connection or the session ending) releases every
//! waiting stream with an error latched, so no worker thread waits on a client that left.
//! The second connection authenticates like any other and then presents the 128-bit secret
//! the session issued over its own authenticated connection (`CALLBACK_CHANNEL_OPEN`); the
//! session id alone binds nothing.

use super::{Failure, Session};
use crate::backend::{BackendError, DevicePtr, MemOp, StreamHandle, WaitCondition, Width};
use proto_core::wire::{self, stream_mem_op};
use proto_core::Status;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, Weak};
use std::time::Duration;

/// Most callbacks a session may have queued and not yet answered; more are
/// `hipErrorOutOfMemory` until earlier ones finish.
pub const MAX_OUTSTANDING_CALLBACKS: usize = 4096;
/// Longest a `CALLBACK_NEXT` waits for a callback before answering "none yet" (the client
/// asks again; the bound keeps the call within the client's I/O deadline).
pub const CALLBACK_POLL: Duration = Duration::from_millis(500);
/// Most per-thread default streams (`hipStreamPerThread`) one session may hold.
pub const MAX_PER_THREAD_STREAMS: usize = 256;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[derive(Default)]
struct ChannelState {
    /// Set once a connection attached; cleared never (one attach per ticket).
    attached: bool,
    /// The session or the channel connection ended: nothing waits any more.
    closed: bool,
    next_seq: u64,
    /// Reached on their stream, not yet fetched by the client: `(seq, token)`.
    reached: VecDeque<(u64, u64)>,
    /// Fetched and answered: the streams waiting on these may go on.
    answered: HashSet<u64>,
    /// Added and not yet finished.
    outstanding: usize,
}

/// One session's callback channel: the meeting point of the streams' waiting host steps and
/// the client's callback thread.
#[derive(Default)]
pub struct CallbackChannel {
    state: Mutex<ChannelState>,
    changed: Condvar,
}

/// Tickets issued and not yet presented: secret → channel.
fn tickets() -> &'static Mutex<HashMap<(u64, u64), Weak<CallbackChannel>>> {
    static TICKETS: OnceLock<Mutex<HashMap<(u64, u64), Weak<CallbackChannel>>>> = OnceLock::new();
    TICKETS.get_or_init(Mutex::default)
}

impl CallbackChannel {
    /// Ends the channel: every waiting stream goes on with an error latched, the client's
    /// fetch fails.
    pub fn close(&self) {
        lock(&self.state).closed = true;
        self.changed.notify_all();
    }

    /// Takes a slot for one more callback.
    fn reserve(&self) -> Result<(), Failure> {
        let mut state = lock(&self.state);
        if !state.attached || state.closed {
            return Err(Failure::new(Status::ILLEGAL_STATE, "the session has no callback channel (CALLBACK_CHANNEL_ATTACH on a second connection)"));
        }
        if state.outstanding >= MAX_OUTSTANDING_CALLBACKS {
            return Err(Failure::new(Status::OUT_OF_MEMORY, format!("the session has its most ({MAX_OUTSTANDING_CALLBACKS}) callbacks outstanding")));
        }
        state.outstanding += 1;
        Ok(())
    }

    fn unreserve(&self) {
        let mut state = lock(&self.state);
        state.outstanding = state.outstanding.saturating_sub(1);
    }

    /// The host step a stream runs at the callback: publish it, wait for the answer.
    fn run_on_stream(&self, token: u64) -> Result<(), BackendError> {
        let mut state = lock(&self.state);
        state.next_seq += 1;
        let seq = state.next_seq;
        state.reached.push_back((seq, token));
        self.changed.notify_all();
        while !state.answered.remove(&seq) {
            if state.closed {
                state.outstanding = state.outstanding.saturating_sub(1);
                return Err(BackendError::LaunchFailure("the client's callback channel closed before the callback ran".into()));
            }
            state = self.changed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        state.outstanding = state.outstanding.saturating_sub(1);
        Ok(())
    }

    /// The client's fetch: records `done`'s answer, waits up to [`CALLBACK_POLL`] for the
    /// next reached callback.
    fn next(&self, done: u64) -> Result<wire::CallbackRun, Failure> {
        let mut state = lock(&self.state);
        if done != 0 && done <= state.next_seq {
            state.answered.insert(done);
            self.changed.notify_all();
        }
        let (mut state, _) = self
            .changed
            .wait_timeout_while(state, CALLBACK_POLL, |s| s.reached.is_empty() && !s.closed)
            .unwrap_or_else(|p| p.into_inner());
        if state.closed {
            return Err(Failure::new(Status::ILLEGAL_STATE, "the session this callback channel served has ended"));
        }
        Ok(match state.reached.pop_front() {
            Some((seq, token)) => wire::CallbackRun { seq, token, status: 0 },
            None => wire::CallbackRun { seq: 0, token: 0, status: 0 },
        })
    }
}

impl Session {
    pub(super) fn open_callback_channel(&mut self) -> Result<wire::CallbackTicket, Failure> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| Failure::new(Status::UNKNOWN, format!("no randomness for the callback ticket: {e}")))?;
        let (hi, lo) = bytes.split_at(8);
        let secret = (u64::from_le_bytes(hi.try_into().unwrap_or_default()), u64::from_le_bytes(lo.try_into().unwrap_or_default()));
        let channel = Arc::clone(&self.callbacks);
        let mut tickets = lock(tickets());
        tickets.retain(|_, c| c.strong_count() > 0);
        tickets.insert(secret, Arc::downgrade(&channel));
        Ok(wire::CallbackTicket { secret_hi: secret.0, secret_lo: secret.1 })
    }

    pub(super) fn attach_callback_channel(&mut self, req: wire::CallbackTicket) -> Result<wire::Empty, Failure> {
        let found = lock(tickets()).remove(&(req.secret_hi, req.secret_lo)).and_then(|c| c.upgrade());
        let channel = found.ok_or_else(|| Failure::new(Status::INVALID_VALUE, "unknown or already used callback ticket"))?;
        lock(&channel.state).attached = true;
        self.serves_callbacks_of = Some(channel);
        Ok(wire::Empty {})
    }

    pub(super) fn next_callback(&mut self, req: wire::CallbackNext) -> Result<wire::CallbackRun, Failure> {
        let channel = self
            .serves_callbacks_of
            .clone()
            .ok_or_else(|| Failure::new(Status::ILLEGAL_STATE, "this connection is not a callback channel"))?;
        channel.next(req.done)
    }

    pub(super) fn add_callback(&mut self, req: wire::StreamAddCallback) -> Result<wire::Empty, Failure> {
        let device = self.device(req.device)?;
        let stream = self.stream_for_work(req.stream, device)?;
        self.callbacks.reserve()?;
        let channel = Arc::clone(&self.callbacks);
        let token = req.token;
        let queued = self.backend.launch_checked_host_func(stream, Box::new(move || channel.run_on_stream(token)));
        if let Err(e) = queued {
            self.callbacks.unreserve();
            return Err(e.into());
        }
        Ok(wire::Empty {})
    }

    pub(super) fn mem_op(&mut self, req: wire::StreamMemOp) -> Result<wire::Empty, Failure> {
        let width = match req.op {
            stream_mem_op::WAIT32 | stream_mem_op::WRITE32 => Width::W32,
            stream_mem_op::WAIT64 | stream_mem_op::WRITE64 => Width::W64,
            op => return Err(Failure::new(Status::INVALID_VALUE, format!("unknown stream memory operation {op}"))),
        };
        let len = if width == Width::W32 { 4 } else { 8 };
        if req.ptr % len != 0 {
            return Err(Failure::new(Status::INVALID_VALUE, format!("{:#x} is not aligned to {len} bytes", req.ptr)));
        }
        let (_, info) = self.allocations.resolve(req.ptr, len, "stream memory operation")?;
        let ptr = DevicePtr(req.ptr);
        let op = match req.op {
            stream_mem_op::WAIT32 | stream_mem_op::WAIT64 => {
                let condition = WaitCondition::from_flags(req.flags)
                    .ok_or_else(|| Failure::new(Status::INVALID_VALUE, format!("unknown wait flags {:#x}", req.flags)))?;
                MemOp::Wait { ptr, width, value: req.value, mask: req.mask, condition }
            }
            _ if req.flags != 0 => return Err(Failure::new(Status::INVALID_VALUE, format!("write flags {:#x} must be 0", req.flags))),
            _ => MemOp::Write { ptr, width, value: req.value },
        };
        let stream = self.stream_for_work(req.stream, info.device)?;
        self.backend.stream_mem_op(stream, op)?;
        Ok(wire::Empty {})
    }

    /// [`Session::stream`] for work that needs a real stream handle (the null stream is the
    /// session's stand-in).
    fn stream_for_work(&mut self, stream: u64, device: u32) -> Result<StreamHandle, Failure> {
        self.stream(stream, device)?.ok_or_else(|| Failure::new(Status::INVALID_HANDLE, "no stream"))
    }

    /// Creates the per-thread default stream `id` names on first sight (ids of
    /// [`wire::PER_THREAD_STREAM_TAG`]: the client's thread and device), a blocking stream of
    /// that device; other ids are left to the handle table.
    pub(super) fn materialize_per_thread(&mut self, id: u64) -> Result<(), Failure> {
        if id & wire::PER_THREAD_STREAM_TAG_MASK != wire::PER_THREAD_STREAM_TAG || self.streams.get(id).is_ok() {
            return Ok(());
        }
        let device = self.device((id & 0xff) as u32)?;
        let per_thread = self.streams.keys().filter(|k| *k & wire::PER_THREAD_STREAM_TAG_MASK == wire::PER_THREAD_STREAM_TAG).count();
        if per_thread >= MAX_PER_THREAD_STREAMS {
            return Err(Failure::new(Status::OUT_OF_MEMORY, format!("session holds the maximum of {MAX_PER_THREAD_STREAMS} per-thread streams")));
        }
        self.streams.check_capacity()?;
        self.reserve_worker_stream()?;
        let handle = self.backend.stream_create(device, 0, 0).inspect_err(|_| self.release_worker_stream())?;
        self.streams.insert_at(id, (handle, device, true));
        Ok(())
    }
}
