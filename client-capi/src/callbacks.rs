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
use client_core::CallError;
use proto_core::{wire, Calls};
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// A callback the worker may ask for: the function and what it is called with.
#[derive(Clone, Copy)]
pub enum Callback {
    /// `hipStreamAddCallback`: called with the stream (as the application named it), the
    /// stream's status and the user data.
    Stream { f: unsafe extern "C" fn(hipStream_t, hipError_t, *mut c_void), stream: usize, user: usize },
    /// `hipLaunchHostFunc`: called with the user data.
    Host { f: unsafe extern "C" fn(*mut c_void), user: usize },
}

enum Channel {
    Unopened,
    Open,
    Failed(CallError),
}

/// The callback channel of each worker of the device list (by index; one for a single worker).
static CHANNELS: Mutex<BTreeMap<usize, Channel>> = Mutex::new(BTreeMap::new());
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

/// Callbacks queued and not yet run, by token.
fn registered() -> MutexGuard<'static, BTreeMap<u64, Callback>> {
    static REGISTERED: Mutex<BTreeMap<u64, Callback>> = Mutex::new(BTreeMap::new());
    REGISTERED.lock().unwrap_or_else(|p| p.into_inner())
}

/// Callbacks that run at every launch of a graph (host nodes), by token. They stay for the
/// process's life: an executable graph may outlive its graph and is not tracked here.
fn persistent() -> MutexGuard<'static, BTreeMap<u64, Callback>> {
    static PERSISTENT: Mutex<BTreeMap<u64, Callback>> = Mutex::new(BTreeMap::new());
    PERSISTENT.lock().unwrap_or_else(|p| p.into_inner())
}

/// Registers `callback` to run each time the worker names the returned token (a graph's
/// host node), opening the callback channel if need be.
pub fn register_persistent(callback: Callback) -> Result<u64, CallError> {
    ensure_channel()?;
    let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
    persistent().insert(token, callback);
    Ok(token)
}

/// The callback a host node's token names (`hipGraphHostNodeGetParams`).
pub fn persistent_callback(token: u64) -> Option<Callback> {
    persistent().get(&token).copied()
}

/// Queues `callback` on `stream` (a wire stream id; `device` is the calling thread's current
/// device, where null-stream work runs).
pub fn enqueue(stream: u64, device: u32, callback: Callback) -> Result<(), CallError> {
    ensure_channel()?;
    if crate::state::capture::captures(stream)? {
        // Recorded as a graph's host node: it runs at every replay.
        let token = register_persistent(callback)?;
        return with_conn(|c| c.stream_add_callback(wire::StreamAddCallback { stream, device, token }).map(drop));
    }
    let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
    registered().insert(token, callback);
    let added = with_conn(|c| c.stream_add_callback(wire::StreamAddCallback { stream, device, token }).map(drop));
    if added.is_err() {
        registered().remove(&token);
    }
    added
}

/// Opens the callback channel of the worker this call goes to and starts its thread, once
/// per worker.
fn ensure_channel() -> Result<(), CallError> {
    let worker = crate::remote::routed_worker()?;
    let mut channels = CHANNELS.lock().unwrap_or_else(|p| p.into_inner());
    match channels.get(&worker).unwrap_or(&Channel::Unopened) {
        Channel::Open => return Ok(()),
        Channel::Failed(e) => return Err(e.clone()),
        Channel::Unopened => {}
    }
    let opened = open_channel(worker);
    channels.insert(
        worker,
        match &opened {
            Ok(()) => Channel::Open,
            Err(e) => Channel::Failed(e.clone()),
        },
    );
    opened
}

fn open_channel(worker: usize) -> Result<(), CallError> {
    let ticket = crate::remote::with_worker(worker, |c| {
        c.callback_channel_open(wire::Empty {}).map(|t| wire::CallbackTicket { secret_hi: t.secret_hi, secret_lo: t.secret_lo })
    })?;
    let mut conn = Conn::open_callback_channel(crate::remote::worker_config(worker))?;
    conn.callback_channel_attach(ticket)?;
    std::thread::Builder::new()
        .name("hip-remote-callbacks".into())
        .spawn(move || serve(worker, conn))
        .map_err(|e| CallError::new(HipError::OUT_OF_MEMORY, format!("cannot start the callback thread: {e}")))?;
    Ok(())
}

/// The callback thread: fetch, run, answer (with the next fetch), in order, until the
/// channel ends.
fn serve(worker: usize, mut conn: Conn) {
    crate::remote::mark_callback_thread();
    let mut done = 0;
    loop {
        let run = match conn.callback_next(wire::CallbackNext { done }) {
            Ok(run) => (run.seq, run.token, run.status),
            Err(e) => {
                if config().debug {
                    eprintln!("hip-remote: callback channel ended: {}", e.message);
                }
                CHANNELS.lock().unwrap_or_else(|p| p.into_inner()).insert(worker, Channel::Failed(e));
                return;
            }
        };
        let (seq, token, status) = run;
        done = seq;
        if seq == 0 {
            continue;
        }
        let one_shot = registered().remove(&token);
        let Some(callback) = one_shot.or_else(|| persistent().get(&token).copied()) else { continue };
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
