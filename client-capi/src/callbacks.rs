//! Stream callbacks on the client (`hipStreamAddCallback`, `hipLaunchHostFunc`).
//!
//! A callback is this process's code, so the worker cannot run it: its stream stops at the
//! callback and the worker hands it to this library's callback thread, which runs it and
//! answers; the answer lets the stream go on. The callback thread talks to the worker over a
//! second connection of its own (the callback channel), opened on the first callback and
//! bound to this process's session by a secret the worker issued over the first one. So
//! callbacks run in order, on that thread, while an application thread may be blocked in a
//! HIP call holding the first connection (`hipStreamSynchronize` waiting for the stream the
//! callback holds). A callback must not call HIP (CUDA and HIP forbid it): such a call fails
//! with `hipErrorIllegalState` instead of deadlocking.

use crate::abi::*;
use crate::conn::Conn;
use crate::remote::{config, with_conn};
use crate::state::families::Family;
use client_core::callbacks::{CallbackBook, CallbackChannel};
use client_core::published::{FamilyTable, Published};
use client_core::CallError;
use proto_core::{wire, Calls};
use std::ffi::c_void;
use std::sync::MutexGuard;

/// A callback the worker may ask for: the function and what it is called with.
#[derive(Clone, Copy)]
pub enum Callback {
    /// `hipStreamAddCallback`: called with the stream (as the application named it), the
    /// stream's status and the user data.
    Stream { f: unsafe extern "C" fn(hipStream_t, hipError_t, *mut c_void), stream: usize, user: usize },
    /// `hipLaunchHostFunc`: called with the user data.
    Host { f: unsafe extern "C" fn(*mut c_void), user: usize },
}

const CALLBACKS: FamilyTable<CallbackBook<Callback>> = FamilyTable::new(Family::Callbacks.slot());

/// The callbacks `session`'s worker may ask for. The callback thread takes them from here
/// while an application thread may wait in the connection.
fn book(session: &'static Published) -> MutexGuard<'static, CallbackBook<Callback>> {
    session.family(&CALLBACKS)
}

/// The callbacks of the worker this call goes to are kept by its session.
fn routed_session() -> Result<&'static Published, CallError> {
    Ok(crate::remote::published(crate::remote::routed_worker()?))
}

/// Registers `callback` to run each time the worker names the returned token (a graph's
/// host node), opening the callback channel if need be.
pub fn register_persistent(callback: Callback) -> Result<u64, CallError> {
    let session = ensure_channel()?;
    Ok(book(session).register_persistent(callback))
}

/// The host function and user data a host node's token names (`hipGraphHostNodeGetParams`),
/// on the worker this call goes to.
pub fn persistent_host_function(token: u64) -> Result<Option<(unsafe extern "C" fn(*mut c_void), usize)>, CallError> {
    Ok(match book(routed_session()?).persistent(token) {
        Some(Callback::Host { f, user }) => Some((*f, *user)),
        _ => None,
    })
}

/// Queues `callback` on `stream` (a wire stream id; `device` is the calling thread's current
/// device, where null-stream work runs).
pub fn enqueue(stream: u64, device: u32, callback: Callback) -> Result<(), CallError> {
    let session = ensure_channel()?;
    if crate::state::capture::captures(stream)? {
        // Recorded as a graph's host node: it runs at every replay.
        let token = register_persistent(callback)?;
        return with_conn(|c| c.stream_add_callback(wire::StreamAddCallback { stream, device, token }).map(drop));
    }
    let token = book(session).register_once(callback);
    let added = with_conn(|c| c.stream_add_callback(wire::StreamAddCallback { stream, device, token }).map(drop));
    if added.is_err() {
        book(session).withdraw(token);
    }
    added
}

/// Opens the callback channel of the worker this call goes to and starts its thread, once
/// per worker; answers that worker's session.
fn ensure_channel() -> Result<&'static Published, CallError> {
    let worker = crate::remote::routed_worker()?;
    let session = crate::remote::published(worker);
    let mut channel = session.callback_channel();
    match &*channel {
        CallbackChannel::Open => return Ok(session),
        CallbackChannel::Failed(e) => return Err(e.clone()),
        CallbackChannel::Unopened => {}
    }
    let opened = open_channel(worker);
    *channel = match &opened {
        Ok(()) => CallbackChannel::Open,
        Err(e) => CallbackChannel::Failed(e.clone()),
    };
    opened.map(|()| session)
}

fn open_channel(worker: usize) -> Result<(), CallError> {
    let ticket = crate::remote::with_worker(worker, |c| {
        c.callback_channel_open(wire::Empty {}).map(|t| wire::CallbackTicket { secret_hi: t.secret_hi, secret_lo: t.secret_lo })
    })?;
    let mut conn = Conn::open_callback_channel(crate::remote::worker_config(worker))?;
    conn.callback_channel_attach(ticket)?;
    std::thread::Builder::new()
        .name("hip-remote-callbacks".into())
        .spawn(move || serve(crate::remote::published(worker), conn))
        .map_err(|e| CallError::new(HipError::OUT_OF_MEMORY, format!("cannot start the callback thread: {e}")))?;
    Ok(())
}

/// The callback thread of one worker's session: fetch, run, answer (with the next fetch), in
/// order, until the channel ends. It runs only callbacks that session registered.
fn serve(session: &'static Published, mut conn: Conn) {
    crate::remote::mark_callback_thread();
    let mut done = 0;
    loop {
        let run = match conn.callback_next(wire::CallbackNext { done }) {
            Ok(run) => (run.seq, run.token, run.status),
            Err(e) => {
                if config().debug {
                    eprintln!("hip-remote: callback channel ended: {}", e.message);
                }
                *session.callback_channel() = CallbackChannel::Failed(e);
                return;
            }
        };
        let (seq, token, status) = run;
        done = seq;
        if seq == 0 {
            continue;
        }
        // Taken out of the book before it runs: the callback may take long, and threads
        // registering callbacks must not wait for it.
        let Some(callback) = book(session).take_to_run(token) else { continue };
        match callback {
            // SAFETY: the application's callback, called as HIP calls it, with the arguments it
            // gave with it (the user data is its own pointer, passed back unchanged).
            Callback::Stream { f, stream, user } => unsafe {
                f(crate::handle::from_id(stream as u64).unwrap_or(std::ptr::null_mut()), HipError(status), user as *mut c_void)
            },
            // SAFETY: as above.
            Callback::Host { f, user } => unsafe { f(user as *mut c_void) },
        }
    }
}
