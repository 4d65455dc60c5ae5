//! Connections a session process asks the worker to open: a session process opens no sockets
//! (seccomp refuses `socket`, Landlock TCP connects), yet the destination of a copy between
//! workers must reach the source worker ([`crate::transfer`]). So the process asks the worker
//! over a channel of its own (descriptor [`DIAL_FD`](super::DIAL_FD), a `SOCK_SEQPACKET`
//! pair), the worker checks the address against its `--dial-workers` policy, connects, and
//! passes the connected socket back (`SCM_RIGHTS`). The process only reads and writes it.
//!
//! The same channel carries the process's notes of bytes moved between workers, which the
//! worker counts in its metrics (its own sessions count theirs themselves).
//!
//! Requests: `[kind u8][pad 7][id u64][bytes u64][address]`. Answers: `[ANSWER u8][pad 3]
//! [status i32][id u64][message]`, with the socket when `status` is 0. A dial is answered by
//! a thread of its own, so one slow source does not hold the others'.

use crate::metrics::Metrics;
use crate::session::Failure;
use crate::transfer::{DialPolicy, Moved, SourceConnection, MAX_DIAL_ADDRESS_LEN};
use proto_core::Status;
use std::collections::HashMap;
use std::io;
use std::net::TcpStream;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// Dials of one session process the worker runs at once; more are refused at once.
pub const MAX_DIALS_IN_FLIGHT: usize = 16;
/// Longest message of an answer (why a dial was refused).
pub const MAX_ANSWER_MESSAGE_LEN: usize = 1024;
/// How long a session process waits for the worker's answer: its lookups and connects
/// ([`crate::transfer::TRANSFER_CONNECT_TIMEOUT`] per address tried), and more.
pub const DIAL_ANSWER_WAIT: Duration = Duration::from_secs(60);

const KIND_DIAL: u8 = 1;
const KIND_MOVED_IN: u8 = 2;
const KIND_MOVED_OUT: u8 = 3;
const KIND_ANSWER: u8 = 4;
const REQUEST_HEAD: usize = 24;
const ANSWER_HEAD: usize = 16;

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn answer(channel: &OwnedFd, id: u64, result: Result<OwnedFd, Failure>) -> io::Result<()> {
    let mut message = vec![0u8; ANSWER_HEAD];
    message[0] = KIND_ANSWER;
    message[8..16].copy_from_slice(&id.to_le_bytes());
    match result {
        Ok(socket) => transport_shm::sys::send_fds(channel.as_fd(), &message, &[socket.as_fd()]),
        Err(failure) => {
            let (status, why) = match failure {
                Failure::Status(status, why) => (status, why),
                Failure::ReplyDeferred => (Status::UNKNOWN, "the dial was not answered".to_owned()),
            };
            message[4..8].copy_from_slice(&status.0.to_le_bytes());
            message.extend_from_slice(crate::session::truncate_utf8(&why, MAX_ANSWER_MESSAGE_LEN).as_bytes());
            transport_shm::sys::send_fds(channel.as_fd(), &message, &[])
        }
    }
}

/// The worker's side: answers the dials of the session process at the other end of `channel`
/// within `policy`, and counts the bytes it notes in `metrics`, on a thread of its own until
/// the process closes its end.
pub fn serve(channel: OwnedFd, policy: DialPolicy, metrics: Arc<Metrics>, pid: u32) -> io::Result<()> {
    let span = tracing::Span::current();
    std::thread::Builder::new().name(format!("hip-dial-{pid}")).spawn(move || span.in_scope(|| serve_channel(channel, policy, &metrics))).map(drop)
}

fn serve_channel(channel: OwnedFd, policy: DialPolicy, metrics: &Metrics) {
    let channel = Arc::new(channel);
    let policy = Arc::new(policy);
    let in_flight = Arc::new(AtomicUsize::new(0));
    let mut buf = vec![0u8; REQUEST_HEAD + MAX_DIAL_ADDRESS_LEN + 1];
    loop {
        let n = match transport_shm::sys::recv_fds(channel.as_fd(), &mut buf) {
            // Descriptors sent along are dropped (closed): a request carries none.
            Ok((0, _)) => return,
            Ok((n, _)) => n,
            Err(e) => {
                tracing::warn!(%e, "the dial channel of a session process failed");
                return;
            }
        };
        if !(REQUEST_HEAD..=REQUEST_HEAD + MAX_DIAL_ADDRESS_LEN).contains(&n) {
            tracing::warn!(len = n, "a malformed dial request from a session process; its dials end");
            return;
        }
        let id = u64::from_le_bytes(buf[8..16].try_into().expect("8 bytes"));
        let bytes = u64::from_le_bytes(buf[16..24].try_into().expect("8 bytes"));
        match buf[0] {
            KIND_MOVED_IN => metrics.add_transfer_bytes_in(bytes),
            KIND_MOVED_OUT => metrics.add_transfer_bytes_out(bytes),
            KIND_DIAL => {
                let address = String::from_utf8_lossy(&buf[REQUEST_HEAD..n]).into_owned();
                if in_flight.fetch_add(1, Ordering::AcqRel) >= MAX_DIALS_IN_FLIGHT {
                    in_flight.fetch_sub(1, Ordering::AcqRel);
                    let busy =
                        Failure::new(Status::OUT_OF_MEMORY, format!("{MAX_DIALS_IN_FLIGHT} dials of this session process run already; try again"));
                    if answer(&channel, id, Err(busy)).is_err() {
                        return;
                    }
                    continue;
                }
                let (channel, policy, in_flight) = (Arc::clone(&channel), Arc::clone(&policy), Arc::clone(&in_flight));
                let span = tracing::Span::current();
                let spawned = std::thread::Builder::new().name("hip-dial".into()).spawn(move || {
                    let _in_span = span.enter();
                    let result = policy.connect(&address);
                    if let Err(Failure::Status(status, why)) = &result {
                        tracing::info!(?status, address, reason = %why, "a session process's dial refused or failed");
                    }
                    // A TLS connection's state cannot cross to the process: it gets its end of
                    // a socket pair, and this thread relays the fetch (its slot held meanwhile).
                    let (result, relayed) = match result {
                        Ok(SourceConnection::Tcp(socket)) => (Ok(OwnedFd::from(socket)), None),
                        Ok(tls) => match UnixStream::pair() {
                            Ok((ours, theirs)) => (Ok(OwnedFd::from(theirs)), Some((tls, ours))),
                            Err(e) => {
                                (Err(Failure::new(Status::UNKNOWN, format!("no socket pair to relay the TLS fetch from {address}: {e}"))), None)
                            }
                        },
                        Err(e) => (Err(e), None),
                    };
                    if let Err(e) = answer(&channel, id, result) {
                        tracing::debug!(%e, "a dial's answer not delivered: the session process is gone");
                    } else if let Some((remote, ours)) = relayed {
                        if let Err(e) = crate::transfer::relay_fetch(remote, ours) {
                            tracing::info!(address, %e, "a relayed TLS fetch of a session process ended early");
                        }
                    }
                    in_flight.fetch_sub(1, Ordering::AcqRel);
                });
                if let Err(e) = spawned {
                    tracing::warn!(%e, "no thread for a session process's dial");
                    return;
                }
            }
            other => {
                tracing::warn!(kind = other, "an unknown dial request from a session process; its dials end");
                return;
            }
        }
    }
}

type Waiting = Mutex<HashMap<u64, mpsc::SyncSender<Result<OwnedFd, Failure>>>>;

/// A session process's side: asks the worker to connect for it.
#[derive(Debug)]
pub struct WorkerDialer {
    channel: Arc<OwnedFd>,
    waiting: Arc<Waiting>,
    next_id: AtomicU64,
}

fn lost(e: impl std::fmt::Display) -> Failure {
    Failure::new(Status::UNKNOWN, format!("the worker does not answer this session process's dials: {e}"))
}

impl WorkerDialer {
    /// Asks over `channel` (this process's end of the pair); a thread takes the answers.
    pub fn new(channel: OwnedFd) -> io::Result<Arc<Self>> {
        let channel = Arc::new(channel);
        let waiting: Arc<Waiting> = Arc::default();
        let (reader, answers) = (Arc::clone(&channel), Arc::clone(&waiting));
        std::thread::Builder::new().name("hip-dial-answers".into()).spawn(move || take_answers(&reader, &answers))?;
        Ok(Arc::new(Self { channel, waiting, next_id: AtomicU64::new(1) }))
    }

    /// A socket connected to `source` by the worker, or why the worker did not connect.
    pub fn dial(&self, source: &str) -> Result<TcpStream, Failure> {
        if source.len() > MAX_DIAL_ADDRESS_LEN {
            return Err(Failure::new(Status::INVALID_VALUE, format!("a source worker's address is at most {MAX_DIAL_ADDRESS_LEN} bytes")));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tell, told) = mpsc::sync_channel(1);
        locked(&self.waiting).insert(id, tell);
        let mut request = request(KIND_DIAL, id, 0);
        request.extend_from_slice(source.as_bytes());
        if let Err(e) = transport_shm::sys::send_fds(self.channel.as_fd(), &request, &[]) {
            locked(&self.waiting).remove(&id);
            return Err(lost(e));
        }
        let answer = told.recv_timeout(DIAL_ANSWER_WAIT);
        locked(&self.waiting).remove(&id);
        match answer {
            Ok(result) => result.map(TcpStream::from),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(lost(format!("no answer within {} s", DIAL_ANSWER_WAIT.as_secs()))),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(lost("its channel closed")),
        }
    }

    /// Tells the worker `bytes` moved `way` (for its metrics).
    pub fn note_moved(&self, way: Moved, bytes: u64) {
        let kind = match way {
            Moved::In => KIND_MOVED_IN,
            Moved::Out => KIND_MOVED_OUT,
        };
        if let Err(e) = transport_shm::sys::send_fds(self.channel.as_fd(), &request(kind, 0, bytes), &[]) {
            tracing::debug!(%e, "bytes moved between workers not counted by the worker");
        }
    }
}

fn request(kind: u8, id: u64, bytes: u64) -> Vec<u8> {
    let mut request = vec![0u8; REQUEST_HEAD];
    request[0] = kind;
    request[8..16].copy_from_slice(&id.to_le_bytes());
    request[16..24].copy_from_slice(&bytes.to_le_bytes());
    request
}

/// Hands each answer to the dial waiting for it, until the channel ends; then every waiting
/// dial learns so (its sender dropped).
fn take_answers(channel: &OwnedFd, waiting: &Waiting) {
    let mut buf = vec![0u8; ANSWER_HEAD + MAX_ANSWER_MESSAGE_LEN + 1];
    loop {
        let (n, mut fds) = match transport_shm::sys::recv_fds(channel.as_fd(), &mut buf) {
            Ok((0, _)) => break,
            Ok(received) => received,
            Err(e) => {
                tracing::warn!(%e, "the dial channel to the worker failed");
                break;
            }
        };
        if !(ANSWER_HEAD..=ANSWER_HEAD + MAX_ANSWER_MESSAGE_LEN).contains(&n) || buf[0] != KIND_ANSWER {
            tracing::warn!(len = n, "a malformed answer on the dial channel; dials end");
            break;
        }
        let status = i32::from_le_bytes(buf[4..8].try_into().expect("4 bytes"));
        let id = u64::from_le_bytes(buf[8..16].try_into().expect("8 bytes"));
        let result = match (status, fds.is_empty()) {
            (0, false) => Ok(fds.swap_remove(0)),
            (0, true) => Err(lost("an answer without its socket")),
            _ => Err(Failure::new(Status(status), String::from_utf8_lossy(&buf[ANSWER_HEAD..n]).into_owned())),
        };
        // A dial that gave up waiting is gone: its socket is closed here.
        if let Some(tell) = locked(waiting).remove(&id) {
            let _ = tell.send(result);
        }
    }
    locked(waiting).clear();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn pair() -> (OwnedFd, OwnedFd) {
        crate::ipc::channel_pair().unwrap()
    }

    #[test]
    fn the_worker_dials_only_what_its_policy_names_and_counts_what_moved() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let allowed = listener.local_addr().unwrap().to_string();
        let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let (worker_end, process_end) = pair();
        let metrics = Arc::new(Metrics::default());
        serve(worker_end, DialPolicy::new([allowed.clone()]).unwrap(), Arc::clone(&metrics), 0).unwrap();
        let dialer = WorkerDialer::new(process_end).unwrap();

        // An allowed source: the socket the worker connected works from here.
        let mut socket = dialer.dial(&format!("tcp://{allowed}")).unwrap();
        let (mut accepted, _) = listener.accept().unwrap();
        socket.write_all(b"ping").unwrap();
        let mut got = [0u8; 4];
        accepted.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"ping");

        // Not in the policy, another scheme, too long: refused with a reason, and dials go on.
        let refused = |address: &str| match dialer.dial(address) {
            Err(Failure::Status(status, why)) => (status, why),
            Ok(_) => panic!("{address} was dialled"),
            Err(Failure::ReplyDeferred) => unreachable!(),
        };
        let (status, why) = refused(&other.local_addr().unwrap().to_string());
        assert_eq!(status, Status::NOT_SUPPORTED);
        assert!(why.contains("--dial-workers") && why.contains(&allowed), "{why}");
        assert_eq!(refused(&format!("tls://{allowed}")).0, Status::NOT_SUPPORTED);
        assert_eq!(refused(&"x".repeat(MAX_DIAL_ADDRESS_LEN + 1)).0, Status::INVALID_VALUE);
        dialer.dial(&allowed).unwrap();

        dialer.note_moved(Moved::In, 5);
        dialer.note_moved(Moved::Out, 7);
        dialer.note_moved(Moved::In, 6);
        // The notes cross before the next dial's answer (one channel, in order).
        dialer.dial(&allowed).unwrap();
        assert_eq!((metrics.transfer_bytes_in(), metrics.transfer_bytes_out()), (11, 7));
    }

    #[test]
    fn a_worker_without_a_policy_refuses_naming_the_flag_and_a_gone_worker_is_an_error() {
        let (worker_end, process_end) = pair();
        serve(worker_end, DialPolicy::default(), Arc::default(), 0).unwrap();
        let dialer = WorkerDialer::new(process_end).unwrap();
        match dialer.dial("127.0.0.1:9") {
            Err(Failure::Status(Status::NOT_SUPPORTED, why)) => assert!(why.contains("--dial-workers"), "{why}"),
            other => panic!("{other:?}"),
        }
        // A worker end that is gone: an error, not a hang.
        let (worker_end, process_end) = pair();
        drop(worker_end);
        let dialer = WorkerDialer::new(process_end).unwrap();
        assert!(matches!(dialer.dial("127.0.0.1:9"), Err(Failure::Status(Status::UNKNOWN, _))));
    }

    #[test]
    fn a_malformed_request_ends_that_channel_only() {
        let (worker_end, process_end) = pair();
        serve(worker_end, DialPolicy::default(), Arc::default(), 0).unwrap();
        transport_shm::sys::send_fds(process_end.as_fd(), &[9u8; 3], &[]).unwrap();
        let mut buf = [0u8; 64];
        // The worker closed its end.
        assert_eq!(transport_shm::sys::recv_fds(process_end.as_fd(), &mut buf).unwrap().0, 0);
    }
}
