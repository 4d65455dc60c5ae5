//! Stream callbacks over the callback channel (worker/src/session/callbacks.rs): a client
//! that disconnects while a callback holds its stream frees the worker's stream and thread;
//! tickets bind only the session that issued them, once.

mod common;

use common::*;
use proto_core::wire;
use proto_core::{Flags, Request, Response, Status};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Longest any step here may take; a hung worker thread fails the test instead of hanging it.
const BOUND: Duration = Duration::from_secs(10);

/// Runs `scenario` in a thread and fails if it does not finish within [`BOUND`].
fn bounded(scenario: impl FnOnce() + Send + 'static) {
    let (done, finished) = mpsc::channel();
    let thread = std::thread::spawn(move || {
        scenario();
        let _ = done.send(());
    });
    match finished.recv_timeout(BOUND) {
        Ok(()) => thread.join().expect("scenario"),
        Err(mpsc::RecvTimeoutError::Disconnected) => std::panic::resume_unwind(thread.join().expect_err("scenario panicked")),
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("the scenario did not finish within {BOUND:?}: a worker thread hangs"),
    }
}

fn ticket(c: &mut SessionDriver) -> wire::CallbackTicket {
    match c.call(&Request::CallbackChannelOpen(wire::Empty {})).response() {
        Response::CallbackChannelOpen(t) => t,
        other => panic!("CallbackChannelOpen answered with {other:?}"),
    }
}

/// A second connection that declares itself a callback channel at HELLO and attaches with
/// `ticket`; answers the attach's reply.
fn channel(worker: &TestWorker, ticket: wire::CallbackTicket) -> (SessionDriver, Reply) {
    let mut c = SessionDriver::connect(worker);
    let reply = c.call(&Request::Hello(wire::Hello {
        min_version: proto_core::header::MIN_PROTOCOL_VERSION,
        max_version: proto_core::PROTOCOL_VERSION,
        features: wire::features::CALLBACK_CHANNEL,
        client_name: "callbacks.rs channel".into(),
        resume_session: 0,
        auth_token: Default::default(),
    }));
    assert!(!reply.is_error(), "HELLO refused: {:?}", reply.error());
    let attached = c.call(&Request::CallbackChannelAttach(ticket));
    (c, attached)
}

/// Fetches until a callback is handed out; answers `(seq, token)`.
fn next_callback(chan: &mut SessionDriver, done: u64) -> (u64, u64) {
    let started = Instant::now();
    let mut done = done;
    loop {
        match chan.call(&Request::CallbackNext(wire::CallbackNext { done })).response() {
            Response::CallbackNext(run) if run.seq != 0 => return (run.seq, run.token),
            Response::CallbackNext(_) => done = 0,
            other => panic!("CallbackNext answered with {other:?}"),
        }
        assert!(started.elapsed() < BOUND, "no callback handed out");
    }
}

fn add_callback(c: &mut SessionDriver, stream: u64, token: u64) -> Reply {
    c.call(&Request::StreamAddCallback(wire::StreamAddCallback { stream, device: 0, token }))
}

#[test]
fn callbacks_run_in_order_and_release_their_stream() {
    let worker = TestWorker::tcp(config_with(None));
    let mut main = SessionDriver::greeted(&worker);
    let stream = main.stream_create(0);
    let t = ticket(&mut main);
    let (mut chan, attached) = channel(&worker, t);
    assert!(!attached.is_error(), "attach refused: {:?}", attached.error());
    for token in [11, 12, 13] {
        assert!(!add_callback(&mut main, stream, token).is_error());
    }
    let (seq1, tok1) = next_callback(&mut chan, 0);
    assert_eq!(tok1, 11);
    // The stream is held until the answer.
    let query = main.call(&Request::StreamQuery(wire::StreamRef { stream }));
    assert!(matches!(query.response(), Response::StreamQuery(q) if !q.complete), "the stream went on before the callback was answered");
    let (seq2, tok2) = next_callback(&mut chan, seq1);
    let (seq3, tok3) = next_callback(&mut chan, seq2);
    assert_eq!((tok2, tok3), (12, 13), "callbacks out of order");
    chan.send(&Request::CallbackNext(wire::CallbackNext { done: seq3 }), Flags::empty());
    let sync = main.call(&Request::StreamSynchronize(wire::StreamRef { stream }));
    assert!(!sync.is_error(), "synchronize after the answers: {:?}", sync.error());
}

#[test]
fn tickets_bind_once_and_only_their_session() {
    let worker = TestWorker::tcp(config_with(None));
    let mut main = SessionDriver::greeted(&worker);
    let t = ticket(&mut main);
    let forged = wire::CallbackTicket { secret_hi: t.secret_hi ^ 1, secret_lo: t.secret_lo };
    let (_, refused) = channel(&worker, forged);
    assert_eq!(refused.error().0, Status::INVALID_VALUE, "a made-up ticket attached");
    let again_ticket = wire::CallbackTicket { secret_hi: t.secret_hi, secret_lo: t.secret_lo };
    let (_chan, attached) = channel(&worker, t);
    assert!(!attached.is_error(), "attach refused: {:?}", attached.error());
    let (_, again) = channel(&worker, again_ticket);
    assert_eq!(again.error().0, Status::INVALID_VALUE, "a ticket attached twice");
    // Without a channel, a callback is refused at once rather than held forever.
    let mut lonely = SessionDriver::greeted(&worker);
    let stream = lonely.stream_create(0);
    assert_eq!(add_callback(&mut lonely, stream, 1).error().0, Status::ILLEGAL_STATE);
    let fetch = lonely.call(&Request::CallbackNext(wire::CallbackNext { done: 0 }));
    assert_eq!(fetch.error().0, Status::ILLEGAL_STATE, "a plain connection fetched callbacks");
}

/// The client's callback thread dies while its callback holds the stream: the stream goes on
/// with an error latched (no worker thread waits for an answer that cannot come), and the
/// stream can be destroyed.
#[test]
fn channel_that_disconnects_during_a_callback_releases_the_stream() {
    let worker = TestWorker::tcp(config_with(None));
    let streams = worker.config.session.limits.worker_streams.clone();
    let mut main = SessionDriver::greeted(&worker);
    let stream = main.stream_create(0);
    let t = ticket(&mut main);
    let (mut chan, _) = channel(&worker, t);
    bounded(move || {
        assert!(!add_callback(&mut main, stream, 5).is_error());
        let (_, token) = next_callback(&mut chan, 0);
        assert_eq!(token, 5);
        drop(chan);
        let sync = main.call(&Request::StreamSynchronize(wire::StreamRef { stream }));
        assert_eq!(sync.error().0, Status::LAUNCH_FAILURE, "the callback's failure is latched on its stream");
        assert!(!main.call(&Request::StreamDestroy(wire::StreamRef { stream })).is_error());
        drop(main);
    });
    wait_for_zero(&streams, "streams");
}

/// The whole client disconnects while a callback holds its stream: the session ends, its
/// stream is freed, and the callback connection learns the session is gone.
#[test]
fn client_that_disconnects_during_a_callback_frees_the_stream() {
    let worker = TestWorker::tcp(config_with(None));
    let streams = worker.config.session.limits.worker_streams.clone();
    let mut main = SessionDriver::greeted(&worker);
    let stream = main.stream_create(0);
    let t = ticket(&mut main);
    let (mut chan, _) = channel(&worker, t);
    let counted = streams.clone();
    bounded(move || {
        assert!(!add_callback(&mut main, stream, 9).is_error());
        let _ = next_callback(&mut chan, 0);
        assert_eq!(counted.load(Ordering::Acquire), 1);
        drop(main);
        let started = Instant::now();
        loop {
            let fetch = chan.call(&Request::CallbackNext(wire::CallbackNext { done: 0 }));
            if fetch.is_error() {
                assert_eq!(fetch.error().0, Status::ILLEGAL_STATE);
                break;
            }
            assert!(started.elapsed() < BOUND, "the channel never learned its session ended");
        }
    });
    wait_for_zero(&streams, "streams");
}

fn wait_for_zero(count: &std::sync::atomic::AtomicUsize, what: &str) {
    let started = Instant::now();
    while count.load(Ordering::Acquire) != 0 {
        assert!(started.elapsed() < BOUND, "the worker still holds {} {what}", count.load(Ordering::Acquire));
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Asking for a ticket again answers the same one: a session registers at most one.
#[test]
fn one_ticket_per_session() {
    let worker = TestWorker::tcp(config_with(None));
    let mut main = SessionDriver::greeted(&worker);
    let (a, b) = (ticket(&mut main), ticket(&mut main));
    assert_eq!((a.secret_hi, a.secret_lo), (b.secret_hi, b.secret_lo));
    let (_chan, attached) = channel(&worker, a);
    assert!(!attached.is_error());
    let (_, again) = channel(&worker, b);
    assert_eq!(again.error().0, Status::INVALID_VALUE, "the one ticket attached twice");
}
