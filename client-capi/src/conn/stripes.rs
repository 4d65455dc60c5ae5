//! Striped TCP bulk, the client's side (`docs/TRANSPORTS.md`, section "Striped TCP").
//!
//! When the worker offers `STRIPED_BULK`, the connection asks for stripes (`StripesOpen`)
//! and opens the granted number of extra connections to the same worker (TLS when the
//! main one is), each joining the session with the grant's key (`StripeJoin`). One thread
//! per stripe owns its connection and moves the chunks the schedule gives it
//! ([`stripe_chunks`]) straight between the application's buffer and the socket: nothing is
//! copied on the client. The calling thread blocks until every stripe is done with its
//! copy, so the buffers it lent stay valid while the threads use them.

use crate::config::ClientConfig;
use crate::conn::Conn;
use client_core::CallError;
use proto_core::wire::{self, stripe_chunks, ErrorReply};
use proto_core::{Bulk, Calls, Flags, Message, Opcode, Request, Status};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;
use transport_core::{FrameSink, FrameSource, TransportError};

/// The stripe settings (the configuration's, below this layer).
pub use crate::config::{DEFAULT_STRIPES, DEFAULT_STRIPE_MIN_BYTES, MAX_STRIPES};

/// A session's stripe connections.
pub struct Stripes {
    lanes: Vec<Lane>,
    chunk_bytes: u64,
    next_copy: u64,
}

/// One stripe: its thread's job queue.
struct Lane {
    jobs: Sender<Job>,
    _thread: JoinHandle<()>,
}

/// Which way a striped copy goes, with the application's buffer (an address: the calling
/// thread keeps it valid until every stripe reported the copy done).
#[derive(Clone, Copy)]
enum Way {
    Upload { src: usize },
    Download { dst: usize },
}

struct Job {
    copy_id: u64,
    len: u64,
    chunk_bytes: u64,
    stripes: u32,
    index: u32,
    way: Way,
    done: Sender<Outcome>,
}

/// How a stripe's part of a copy went.
enum Outcome {
    Done,
    /// The worker reported the copy failed (download error frames); the stripe is in step.
    Failed(CallError),
    /// The stripe's connection failed or fell out of step: it is closed.
    Broken(String),
}

/// What the stripes did with one copy.
pub enum StripedResult {
    /// Every stripe did its part.
    Done,
    /// The worker reported a failure of the copy.
    Failed(CallError),
    /// A stripe broke: the copy is incomplete and the stripes are closed.
    Broken(String),
}

/// A striped copy whose parts the stripes are moving.
pub struct Pending {
    outcomes: Receiver<Outcome>,
    parts: usize,
}

impl Pending {
    /// Waits until every stripe is done with the copy (only then may its buffer be released).
    pub fn wait(self) -> StripedResult {
        let mut result = StripedResult::Done;
        for _ in 0..self.parts {
            match self.outcomes.recv() {
                Ok(Outcome::Done) => {}
                Ok(Outcome::Failed(e)) => {
                    if matches!(result, StripedResult::Done) {
                        result = StripedResult::Failed(e);
                    }
                }
                Ok(Outcome::Broken(why)) => result = StripedResult::Broken(why),
                Err(_) => return StripedResult::Broken("a stripe thread ended".into()),
            }
        }
        result
    }
}

impl Stripes {
    /// Asks the worker `conn` is connected to for stripes and joins them; `None` when the
    /// worker grants none (or none could join): copies then all take the main connection.
    pub fn open(conn: &mut Conn, config: &ClientConfig) -> Option<Self> {
        if config.stripes < 2 || conn.welcome().features & wire::features::STRIPED_BULK == 0 {
            return None;
        }
        let grant = match conn.stripes_open(wire::StripesOpen { count: config.stripes.min(MAX_STRIPES) }) {
            Ok(g) if g.granted > 0 && g.chunk_bytes > 0 => (g.granted.min(MAX_STRIPES), g.chunk_bytes, g.join_key.0.to_vec()),
            Ok(_) => return None,
            Err(e) => {
                eprintln!("hip-remote: the worker refused stripes ({}); large copies take the main connection", e.message);
                return None;
            }
        };
        let (granted, chunk_bytes, key) = grant;
        let session_id = conn.welcome().session_id;
        // All stripes connect and join at once: one connect and one join of round trip in
        // all, not two per stripe (which a long link makes seconds).
        let joined: Vec<Result<Lane, String>> = std::thread::scope(|scope| {
            let key = &key;
            let joins: Vec<_> = (0..granted).map(|index| scope.spawn(move || join(config, session_id, index, key))).collect();
            joins.into_iter().map(|j| j.join().unwrap_or_else(|_| Err("the joining thread panicked".into()))).collect()
        });
        let mut lanes = Vec::new();
        for (index, lane) in (0..).zip(joined) {
            match lane {
                Ok(lane) => lanes.push(lane),
                Err(why) => {
                    // The joined ones carry the copies (the worker stripes over as many).
                    eprintln!("hip-remote: stripe {index} of {granted} could not join ({why}); striping over {index}");
                    break;
                }
            }
        }
        (lanes.len() >= 2).then_some(Self { lanes, chunk_bytes, next_copy: 1 })
    }

    /// Stripes in use.
    pub fn count(&self) -> u32 {
        self.lanes.len() as u32
    }

    /// A new copy id.
    pub fn next_copy_id(&mut self) -> u64 {
        let id = self.next_copy;
        self.next_copy += 1;
        id
    }

    /// Has the stripes send `len` bytes at `src` as upload `copy_id`.
    ///
    /// # Safety
    /// `src` must stay valid for `len` bytes of reads until [`Pending::wait`] returned.
    pub unsafe fn start_upload(&self, copy_id: u64, src: *const u8, len: usize) -> Pending {
        self.start(copy_id, len, Way::Upload { src: src as usize })
    }

    /// Has the stripes receive download `copy_id` into the `len` bytes at `dst`.
    ///
    /// # Safety
    /// `dst` must stay valid for `len` bytes of writes until [`Pending::wait`] returned.
    pub unsafe fn start_download(&self, copy_id: u64, dst: *mut u8, len: usize) -> Pending {
        self.start(copy_id, len, Way::Download { dst: dst as usize })
    }

    fn start(&self, copy_id: u64, len: usize, way: Way) -> Pending {
        let (done, outcomes) = channel();
        let mut parts = 0;
        for (index, lane) in (0..).zip(&self.lanes) {
            let job = Job { copy_id, len: len as u64, chunk_bytes: self.chunk_bytes, stripes: self.count(), index, way, done: done.clone() };
            if lane.jobs.send(job).is_ok() {
                parts += 1;
            } else {
                // A stripe that is gone reports itself broken.
                let _ = done.send(Outcome::Broken(format!("stripe {index} is closed")));
                parts += 1;
            }
        }
        Pending { outcomes, parts }
    }
}

/// Opens stripe `index` and joins it to session `session_id`.
fn join(config: &ClientConfig, session_id: u64, index: u32, key: &[u8]) -> Result<Lane, String> {
    let (mut sink, mut source) = crate::conn::connect_transport(&config.worker, config).map_err(|e| e.to_string())?;
    let req = Request::StripeJoin(wire::StripeJoin { session_id, index, join_key: key.into() });
    let mut buf = vec![0u8; 256];
    let frame = req.encode_frame(&mut buf, Flags::empty(), 1).map_err(|e| e.to_string())?;
    sink.send(&buf[..frame.head_len], &[]).map_err(|e| e.to_string())?;
    let head = source.recv_head().map_err(|e| e.to_string())?;
    if head.header.flags.contains(Flags::ERROR) {
        let why = ErrorReply::parse(head.control, &[]).map_or_else(|e| format!("malformed refusal: {e}"), |r| r.message.as_str().to_owned());
        return Err(why);
    }
    if head.header.opcode != Opcode::StripeJoin.raw() || head.header.request_id != 1 {
        return Err(format!("unexpected answer to StripeJoin (opcode {:#06x})", head.header.opcode));
    }
    source.skip_bulk().map_err(|e| e.to_string())?;
    let (jobs, queue) = channel();
    let thread = std::thread::Builder::new()
        .name(format!("hip-stripe-{index}"))
        .spawn(move || run_lane(sink, source, queue))
        .map_err(|e| format!("cannot start the stripe's thread: {e}"))?;
    Ok(Lane { jobs, _thread: thread })
}

/// A stripe's thread: does its part of each copy until the connection closes (its queue is
/// dropped with the [`Stripes`]) or breaks.
fn run_lane(mut sink: Box<dyn FrameSink>, mut source: Box<dyn FrameSource>, jobs: Receiver<Job>) {
    let mut buf = vec![0u8; 256];
    while let Ok(job) = jobs.recv() {
        let outcome = match job.way {
            Way::Upload { src } => send_part(&job, src, &mut *sink, &mut buf),
            Way::Download { dst } => receive_part(&job, dst, &mut *source),
        };
        let broken = matches!(outcome, Outcome::Broken(_));
        let _ = job.done.send(outcome);
        if broken {
            return;
        }
    }
}

fn broken(e: TransportError) -> Outcome {
    Outcome::Broken(format!("stripe connection failed: {e}"))
}

fn send_part(job: &Job, src: usize, sink: &mut dyn FrameSink, buf: &mut [u8]) -> Outcome {
    for (offset, n) in stripe_chunks(job.len, job.chunk_bytes, job.stripes, job.index) {
        // SAFETY: the copy's caller keeps `len` bytes at `src` readable until every stripe
        // has reported the copy done (`Pending::wait`), after this loop; `offset + n <= len`.
        let bytes = unsafe { std::slice::from_raw_parts((src + offset as usize) as *const u8, n as usize) };
        let req = Request::StripeChunk(wire::StripeChunk { copy_id: job.copy_id, offset, data: Bulk(bytes) });
        let frame = match req.encode_frame(buf, Flags::NO_REPLY, job.copy_id) {
            Ok(frame) => frame,
            Err(e) => return Outcome::Broken(format!("stripe chunk not encodable: {e}")),
        };
        // The bytes go from the application's buffer to the socket (no copy here).
        if let Err(e) = sink.send(&buf[..frame.head_len], frame.bulk) {
            return broken(e);
        }
    }
    Outcome::Done
}

fn receive_part(job: &Job, dst: usize, source: &mut dyn FrameSource) -> Outcome {
    let mut failure = None;
    for (offset, n) in stripe_chunks(job.len, job.chunk_bytes, job.stripes, job.index) {
        let head = match source.recv_head() {
            Ok(head) => head,
            Err(e) => return broken(e),
        };
        let header = head.header;
        if header.request_id != job.copy_id || header.opcode != Opcode::StripeChunk.raw() {
            return Outcome::Broken(format!("stripe frame out of step (request {}, opcode {:#06x})", header.request_id, header.opcode));
        }
        if header.flags.contains(Flags::ERROR) {
            let error = match ErrorReply::parse(head.control, &[]) {
                Ok(r) => CallError::new(client_core::status_to_hip(r.status), r.message.as_str()),
                Err(e) => CallError::new(client_core::status_to_hip(Status::MALFORMED_FRAME), format!("malformed stripe error: {e}")),
            };
            failure.get_or_insert(error);
            if let Err(e) = source.skip_bulk() {
                return broken(e);
            }
            continue;
        }
        let chunk = match wire::StripeChunk::parse(head.control, &[]) {
            Ok(chunk) => chunk,
            Err(e) => return Outcome::Broken(format!("malformed stripe chunk: {e}")),
        };
        if chunk.copy_id != job.copy_id || chunk.offset != offset || u64::from(header.bulk_len) != n {
            return Outcome::Broken(format!(
                "stripe chunk out of step: offset {} ({} bytes), expected {offset} ({n})",
                chunk.offset, header.bulk_len
            ));
        }
        // SAFETY: the copy's caller keeps `len` bytes at `dst` writable and unaliased until
        // every stripe has reported the copy done (`Pending::wait`); the stripes write
        // disjoint chunks; `offset + n <= len`.
        let out = unsafe { std::slice::from_raw_parts_mut((dst + offset as usize) as *mut u8, n as usize) };
        if let Err(e) = source.recv_bulk(out) {
            return broken(e);
        }
    }
    match failure {
        Some(e) => Outcome::Failed(e),
        None => Outcome::Done,
    }
}
