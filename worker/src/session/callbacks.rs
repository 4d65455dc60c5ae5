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
use std::io::{Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
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
    /// Set once a connection attached (one attach per ticket).
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
///
/// A session in a session process (host code allowed) cannot meet the client's second
/// connection, which the worker serves itself. Its channel is *bridged*: the worker passes
/// the process one end of a socket pair (descriptor [`CALLBACK_FD`](crate::sandbox::CALLBACK_FD)),
/// first writes the ticket it registered (so the secret never appears on a command line),
/// then relays: the process announces each reached callback as 16 bytes (`seq`, `token`,
/// little-endian), the worker returns each answer as 8 bytes (`seq`). Either end closing
/// closes the other's channel.
#[derive(Default)]
pub struct CallbackChannel {
    state: Mutex<ChannelState>,
    changed: Condvar,
    /// Session process: where reached callbacks are announced to the worker.
    announce: Mutex<Option<UnixStream>>,
    /// Worker, for a session process's channel: where the client's answers go.
    answers: Mutex<Option<UnixStream>>,
    /// The ticket of this channel (in a session process: the one the worker registered);
    /// one per session, valid for one attach.
    issued: Mutex<Option<(u64, u64)>>,
}

/// Tickets issued and not yet presented: secret → channel.
type Tickets = Mutex<HashMap<(u64, u64), Weak<CallbackChannel>>>;

fn tickets() -> &'static Tickets {
    static TICKETS: OnceLock<Tickets> = OnceLock::new();
    TICKETS.get_or_init(Mutex::default)
}

/// A fresh ticket for `channel`, registered until presented (or the channel is gone).
fn register_ticket(channel: &Arc<CallbackChannel>) -> Result<(u64, u64), String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for the callback ticket: {e}"))?;
    let mut halves = [0u64; 2];
    for (half, chunk) in halves.iter_mut().zip(bytes.chunks_exact(8)) {
        *half = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
    }
    let secret = (halves[0], halves[1]);
    let mut tickets = lock(tickets());
    tickets.retain(|_, c| c.strong_count() > 0);
    tickets.insert(secret, Arc::downgrade(channel));
    Ok(secret)
}

fn read_u64s<const N: usize>(from: &mut impl Read) -> std::io::Result<[u64; N]> {
    let mut buf = [0u8; 16];
    from.read_exact(&mut buf[..N * 8])?;
    let mut out = [0u64; N];
    for (value, chunk) in out.iter_mut().zip(buf.chunks_exact(8)) {
        *value = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
    }
    Ok(out)
}

fn write_u64s(to: &mut impl Write, values: &[u64]) -> std::io::Result<()> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    to.write_all(&bytes)
}

impl CallbackChannel {
    /// Ends the channel: every waiting stream goes on with an error latched, the client's
    /// fetch fails, and a bridge's other end is told (its channel closes too).
    pub fn close(&self) {
        lock(&self.state).closed = true;
        self.changed.notify_all();
        for end in [&self.announce, &self.answers] {
            if let Some(stream) = lock(end).as_ref() {
                let _ = stream.shutdown(Shutdown::Both);
            }
        }
    }

    /// Worker side of a session process's channel: registers a ticket, hands it to the
    /// process over `bridge`, and relays the process's reached callbacks into the returned
    /// channel (served to the client's callback connection like any other) until either
    /// end closes.
    pub fn bridge_worker(bridge: UnixStream) -> std::io::Result<Arc<Self>> {
        let channel = Arc::new(Self::default());
        let secret = register_ticket(&channel).map_err(std::io::Error::other)?;
        let mut writer = bridge.try_clone()?;
        write_u64s(&mut writer, &[secret.0, secret.1])?;
        *lock(&channel.answers) = Some(writer);
        let relay = Arc::clone(&channel);
        let mut reader = bridge;
        std::thread::Builder::new().name("hip-callback-bridge".into()).spawn(move || {
            while let Ok([seq, token]) = read_u64s::<2>(&mut reader) {
                let mut state = lock(&relay.state);
                if state.closed {
                    break;
                }
                state.reached.push_back((seq, token));
                drop(state);
                relay.changed.notify_all();
            }
            relay.close();
        })?;
        Ok(channel)
    }

    /// Session-process side: reads the ticket the worker registered, then announces reached
    /// callbacks over `bridge` and takes the answers from it.
    pub fn bridge_session_process(channel: &Arc<Self>, bridge: UnixStream) -> std::io::Result<()> {
        let mut reader = bridge.try_clone()?;
        let [hi, lo] = read_u64s::<2>(&mut reader)?;
        *lock(&channel.issued) = Some((hi, lo));
        *lock(&channel.announce) = Some(bridge);
        let answers = Arc::downgrade(channel);
        std::thread::Builder::new().name("hip-callback-answers".into()).spawn(move || {
            while let Ok([seq]) = read_u64s::<1>(&mut reader) {
                let Some(channel) = answers.upgrade() else { return };
                lock(&channel.state).answered.insert(seq);
                channel.changed.notify_all();
            }
            if let Some(channel) = answers.upgrade() {
                channel.close();
            }
        })?;
        Ok(())
    }

    fn bridged(&self) -> bool {
        lock(&self.announce).is_some()
    }

    /// Takes a slot for one more callback.
    pub(super) fn reserve(&self) -> Result<(), Failure> {
        let bridged = self.bridged();
        let mut state = lock(&self.state);
        if !(state.attached || bridged) || state.closed {
            return Err(Failure::new(Status::ILLEGAL_STATE, "the session has no callback channel (CALLBACK_CHANNEL_ATTACH on a second connection)"));
        }
        if state.outstanding >= MAX_OUTSTANDING_CALLBACKS {
            return Err(Failure::new(Status::OUT_OF_MEMORY, format!("the session has its most ({MAX_OUTSTANDING_CALLBACKS}) callbacks outstanding")));
        }
        state.outstanding += 1;
        Ok(())
    }

    pub(super) fn unreserve(&self) {
        let mut state = lock(&self.state);
        state.outstanding = state.outstanding.saturating_sub(1);
    }

    /// The host step a stream runs at the callback: publish it, wait for the answer.
    pub(super) fn run_on_stream(&self, token: u64) -> Result<(), BackendError> {
        let closed = || BackendError::LaunchFailure("the client's callback channel closed before the callback ran".into());
        let mut state = lock(&self.state);
        state.next_seq += 1;
        let seq = state.next_seq;
        let announced = lock(&self.announce).as_mut().map(|bridge| write_u64s(bridge, &[seq, token]));
        match announced {
            Some(Err(_)) => state.closed = true,
            Some(Ok(())) => {}
            None => state.reached.push_back((seq, token)),
        }
        self.changed.notify_all();
        while !state.answered.remove(&seq) {
            if state.closed {
                state.outstanding = state.outstanding.saturating_sub(1);
                return Err(closed());
            }
            state = self.changed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        state.outstanding = state.outstanding.saturating_sub(1);
        Ok(())
    }

    /// The client's fetch: records `done`'s answer, waits up to [`CALLBACK_POLL`] for the
    /// next reached callback.
    fn next(&self, done: u64) -> Result<wire::CallbackRun, Failure> {
        if done != 0 {
            let forwarded = lock(&self.answers).as_mut().map(|bridge| write_u64s(bridge, &[done]));
            match forwarded {
                Some(Ok(())) => {}
                Some(Err(_)) => self.close(),
                None => {
                    lock(&self.state).answered.insert(done);
                    self.changed.notify_all();
                }
            }
        }
        let state = lock(&self.state);
        let (mut state, _) =
            self.changed.wait_timeout_while(state, CALLBACK_POLL, |s| s.reached.is_empty() && !s.closed).unwrap_or_else(|p| p.into_inner());
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
        // In a session process, the ticket the worker registered; else a fresh one here.
        // One ticket per session, so asking again registers nothing more.
        let mut issued = lock(&self.callbacks.issued);
        let secret = match *issued {
            Some(secret) => secret,
            None => *issued.insert(register_ticket(&self.callbacks).map_err(|e| Failure::new(Status::UNKNOWN, e))?),
        };
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
        let channel =
            self.serves_callbacks_of.clone().ok_or_else(|| Failure::new(Status::ILLEGAL_STATE, "this connection is not a callback channel"))?;
        channel.next(req.done)
    }

    pub(super) fn add_callback(&mut self, req: wire::StreamAddCallback) -> Result<wire::Empty, Failure> {
        let device = self.device(req.device)?;
        if self.capture_host(req.stream, req.token)? {
            return Ok(wire::Empty {});
        }
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
        let (op, device) = self.check_mem_op(&req)?;
        let stream = self.stream_for_work(req.stream, device)?;
        self.backend.stream_mem_op(stream, op)?;
        Ok(wire::Empty {})
    }

    /// A stream memory operation checked against the session's memory, and its device.
    pub(super) fn check_mem_op(&self, req: &wire::StreamMemOp) -> Result<(MemOp, u32), Failure> {
        let width = match req.op {
            stream_mem_op::WAIT32 | stream_mem_op::WRITE32 => Width::W32,
            stream_mem_op::WAIT64 | stream_mem_op::WRITE64 => Width::W64,
            op => return Err(Failure::new(Status::INVALID_VALUE, format!("unknown stream memory operation {op}"))),
        };
        let len = if width == Width::W32 { 4 } else { 8 };
        if !req.ptr.is_multiple_of(len) {
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
        Ok((op, info.device))
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
        let handle = self.create_backend_stream(device, 0, 0).inspect_err(|_| self.release_worker_stream())?;
        self.streams.insert_at(id, (handle, device, true));
        Ok(())
    }
}
