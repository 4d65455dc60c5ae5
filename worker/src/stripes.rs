//! Striped TCP bulk: a session's extra connections ("stripes") that carry the chunks of its
//! large copies in parallel (`docs/TRANSPORTS.md`, section "Striped TCP").
//!
//! [`StripeHub`] is the worker's registry of granted stripe sets, by session id. A session
//! granted stripes (`StripesOpen`) holds a [`StripeLease`]; each stripe connection, whose
//! first request is `StripeJoin`, takes a free index of its session's set with the grant's
//! key and from then on runs [`serve_stripe`]: it waits for [`StripeJob`]s from its session's
//! request loop and moves the chunks the schedule gives it
//! ([`proto_core::wire::stripe_chunks`]) between its connection and device memory, through
//! the backend (zero-copy on the host backend, pinned staging on GPUs). The session's
//! request loop validates each striped copy first ([`run_striped_copy`]), hands every stripe
//! its part, waits for all and replies once. A refused copy still consumes (uploads) or
//! answers (downloads, an error frame per chunk) every scheduled chunk, so the stripes stay
//! in step; a stripe that breaks the protocol is closed, and the session goes on without
//! stripes.
//!
//! Like [`crate::driver`], this is code that reads and writes connections; the session only
//! validates and names destinations.

use crate::backend::{Backend, DevicePtr, StreamHandle};
use crate::driver::ReplyWriter;
use crate::session::Failure;
use proto_core::frame::{encode_frame, FrameMeta};
use proto_core::header::HEADER_LEN;
use proto_core::wire::{self, stripe_chunks, STRIPE_JOIN_KEY_LEN};
use proto_core::{Flags, Opcode, Request, Status};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use subtle::ConstantTimeEq;
use transport_core::{FrameSource, TransportError};

/// Most stripes one session may have, whatever `--max-stripes` says.
pub const MAX_STRIPES: usize = 16;
/// Stripes a session is granted at most by default (`--max-stripes`). To be measured on the
/// H100 by the lead (8 loopback streams reached 27 GB/s there, one 3.8 GB/s).
pub const DEFAULT_MAX_STRIPES: usize = 8;
/// Bytes per chunk of a striped copy: one staging buffer of the GPU backends.
pub const STRIPE_CHUNK_BYTES: u64 = proto_core::limits::DEFAULT_COPY_CHUNK as u64;
/// Chunks a stripe may have in flight to the device (GPU backends copy each from a pinned
/// staging buffer asynchronously) before it waits for them: bounds the staging memory a
/// striped upload holds to `stripes × window` buffers. To be measured on the H100 by the lead.
pub const STRIPE_DMA_WINDOW: usize = 4;
/// How long after the grant its stripes may join; a later join is refused.
pub const STRIPE_JOIN_TIMEOUT: Duration = Duration::from_secs(10);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Stripe settings of a worker.
#[derive(Debug, Clone, Copy)]
pub struct StripeConfig {
    /// Stripes granted per session at most (`--max-stripes`; 0: striping refused).
    pub max_stripes: usize,
}

impl Default for StripeConfig {
    fn default() -> Self {
        Self { max_stripes: DEFAULT_MAX_STRIPES }
    }
}

/// The worker's registry of granted stripe sets, by session id.
#[derive(Default)]
pub struct StripeHub {
    max_stripes: usize,
    sets: Mutex<HashMap<u64, Arc<StripeSet>>>,
}

/// The stripes granted to one session.
struct StripeSet {
    key: [u8; STRIPE_JOIN_KEY_LEN],
    /// Stripes join only from the main connection's address.
    peer: Option<IpAddr>,
    granted: u32,
    granted_at: Instant,
    /// Per index: the job queue of the stripe that joined there.
    slots: Mutex<Vec<Option<Sender<StripeJob>>>>,
}

/// A session's hold on its stripes: dropping it (the session ends) forgets the grant and
/// ends every stripe connection of the session.
pub struct StripeLease {
    hub: Arc<StripeHub>,
    session_id: u64,
    set: Arc<StripeSet>,
}

impl std::fmt::Debug for StripeLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StripeLease").field("session_id", &self.session_id).field("granted", &self.set.granted).finish()
    }
}

impl Drop for StripeLease {
    fn drop(&mut self) {
        lock(&self.hub.sets).remove(&self.session_id);
        // The stripes' job queues close: each stripe thread returns and its connection ends.
        lock(&self.set.slots).clear();
    }
}

/// A granted set.
pub struct Grant {
    /// The session's hold on the set.
    pub lease: StripeLease,
    /// Stripes granted.
    pub granted: u32,
}

impl StripeHub {
    /// A registry granting at most `config.max_stripes` (and [`MAX_STRIPES`]) per session.
    pub fn new(config: StripeConfig) -> Arc<Self> {
        Arc::new(Self { max_stripes: config.max_stripes.min(MAX_STRIPES), sets: Mutex::default() })
    }

    /// Whether this worker grants stripes at all.
    pub fn enabled(&self) -> bool {
        self.max_stripes > 0
    }

    /// Grants session `session_id`, whose client is at `peer`, up to `count` stripes.
    pub fn grant(self: &Arc<Self>, session_id: u64, peer: Option<IpAddr>, count: u32) -> Result<Option<Grant>, Failure> {
        let granted = (count as usize).min(self.max_stripes) as u32;
        if granted == 0 {
            return Ok(None);
        }
        let mut key = [0u8; STRIPE_JOIN_KEY_LEN];
        getrandom::fill(&mut key).map_err(|e| Failure::new(Status::UNKNOWN, format!("no randomness for a stripe join key: {e}")))?;
        let set = Arc::new(StripeSet { key, peer, granted, granted_at: Instant::now(), slots: Mutex::new(vec![None; granted as usize]) });
        let mut sets = lock(&self.sets);
        if sets.contains_key(&session_id) {
            return Err(Failure::new(Status::ILLEGAL_STATE, "this session holds stripes already"));
        }
        sets.insert(session_id, Arc::clone(&set));
        Ok(Some(Grant { lease: StripeLease { hub: Arc::clone(self), session_id, set }, granted }))
    }

    /// Joins a connection from `peer` as stripe `req.index` of session `req.session_id`: its
    /// job queue, or why not.
    pub fn join(&self, req: &wire::StripeJoin<'_>, peer: Option<IpAddr>) -> Result<Receiver<StripeJob>, &'static str> {
        const REFUSED: &str = "stripe join refused: unknown session, wrong key or address, or expired grant";
        let set = lock(&self.sets).get(&req.session_id).cloned().ok_or(REFUSED)?;
        let key_matches: bool = req.join_key.0.ct_eq(&set.key).into();
        if !key_matches || set.peer != peer || set.granted_at.elapsed() > STRIPE_JOIN_TIMEOUT {
            return Err(REFUSED);
        }
        let mut slots = lock(&set.slots);
        let slot = slots.get_mut(req.index as usize).ok_or("stripe join refused: index beyond the granted stripes")?;
        if slot.is_some() {
            return Err("stripe join refused: that index has joined already");
        }
        let (jobs, queue) = channel();
        *slot = Some(jobs);
        Ok(queue)
    }
}

impl StripeLease {
    /// Stripes granted.
    pub fn granted(&self) -> u32 {
        self.set.granted
    }

    /// The key the stripes present when they join.
    pub fn key(&self) -> &[u8; STRIPE_JOIN_KEY_LEN] {
        &self.set.key
    }

    /// The job queues of the joined stripes among `0..count`, by index, and whether every
    /// one of them has joined (and is still there).
    fn queues(&self, count: u32) -> (Vec<(u32, Sender<StripeJob>)>, bool) {
        let slots = lock(&self.set.slots);
        let joined: Vec<_> = (0..).zip(slots.iter().take(count as usize)).filter_map(|(i, s)| s.clone().map(|s| (i, s))).collect();
        let all = joined.len() == count as usize;
        (joined, all)
    }

    /// Forgets stripe `index` (it broke the protocol or its connection failed).
    fn drop_stripe(&self, index: u32) {
        if let Some(slot) = lock(&self.set.slots).get_mut(index as usize) {
            *slot = None;
        }
    }
}

/// What a stripe does for one copy.
pub enum StripeWork {
    /// Writes its chunks into device memory at `dst` (offsets from there), in `stream` order.
    Receive { dst: DevicePtr, stream: Option<StreamHandle>, backend: Arc<dyn Backend> },
    /// Sends its chunks from device memory at `src` once `stream`'s earlier work is done.
    Send { src: DevicePtr, stream: Option<StreamHandle>, backend: Arc<dyn Backend> },
    /// The copy was refused: reads and drops its chunks (upload).
    Discard,
    /// The copy was refused: answers each of its chunks with this error (download).
    Refuse { status: Status, message: String },
}

/// One copy's part for one stripe.
pub struct StripeJob {
    copy_id: u64,
    len: u64,
    stripes: u32,
    index: u32,
    work: StripeWork,
    /// `(index, outcome)` when the stripe is done with the copy.
    done: Sender<(u32, StripeOutcome)>,
}

/// How a stripe's part of a copy went.
enum StripeOutcome {
    Done,
    /// The copy failed (the backend refused); the stripe stays in step.
    Failed(Failure),
    /// The stripe broke the protocol or its connection failed: it is closed.
    Broken(String),
}

/// Serves a joined stripe connection until its session ends or it breaks the protocol.
pub fn serve_stripe(jobs: Receiver<StripeJob>, source: &mut dyn FrameSource, replies: &ReplyWriter) {
    while let Ok(job) = jobs.recv() {
        let outcome = run_job(&job, source, replies);
        let broken = matches!(outcome, StripeOutcome::Broken(_));
        let _ = job.done.send((job.index, outcome));
        if broken {
            return;
        }
    }
}

fn run_job(job: &StripeJob, source: &mut dyn FrameSource, replies: &ReplyWriter) -> StripeOutcome {
    let mut failure = None;
    for (k, (offset, n)) in stripe_chunks(job.len, STRIPE_CHUNK_BYTES, job.stripes, job.index).enumerate() {
        if let (StripeWork::Receive { dst, stream, backend }, None) = (&job.work, &failure) {
            if k > 0 && k % STRIPE_DMA_WINDOW == 0 {
                failure = backend.finish_device_writes(*stream, *dst).err().map(Failure::from);
            }
        }
        let step = match &job.work {
            StripeWork::Receive { .. } | StripeWork::Discard => receive_chunk(job, offset, n, source, failure.is_some()),
            StripeWork::Send { .. } | StripeWork::Refuse { .. } => send_chunk(job, offset, n, replies, failure.as_ref()),
        };
        match step {
            Ok(Ok(())) => {}
            Ok(Err(f)) => failure = failure.or(Some(f)),
            Err(why) => return StripeOutcome::Broken(why),
        }
    }
    match failure {
        Some(f) => StripeOutcome::Failed(f),
        None => StripeOutcome::Done,
    }
}

/// Reads the chunk at `offset` (`n` bytes) of an upload into device memory (or drops it:
/// the copy was refused, or `failed` already). Outer `Err`: the stripe broke.
fn receive_chunk(job: &StripeJob, offset: u64, n: u64, source: &mut dyn FrameSource, failed: bool) -> Result<Result<(), Failure>, String> {
    let head = source.recv_head().map_err(|e| format!("stripe connection failed: {e}"))?;
    let header = head.header;
    if header.opcode != Opcode::StripeChunk.raw() || header.flags.contains(Flags::RESPONSE) || header.flags.contains(Flags::ERROR) {
        return Err(format!("a stripe carries chunk frames only, not opcode {:#06x}", header.opcode));
    }
    let chunk = match Request::parse(header.opcode, head.control, &[]) {
        Ok(Request::StripeChunk(chunk)) => chunk,
        _ => return Err("malformed stripe chunk".into()),
    };
    if chunk.copy_id != job.copy_id || chunk.offset != offset || u64::from(header.bulk_len) != n {
        return Err(format!(
            "stripe chunk out of step: copy {} offset {} ({} bytes), expected copy {} offset {offset} ({n} bytes)",
            chunk.copy_id, chunk.offset, header.bulk_len, job.copy_id
        ));
    }
    let StripeWork::Receive { dst, stream, backend } = &job.work else {
        source.skip_bulk().map_err(|e| e.to_string())?;
        return Ok(Ok(()));
    };
    if failed {
        source.skip_bulk().map_err(|e| e.to_string())?;
        return Ok(Ok(()));
    }
    let mut received: Result<(), TransportError> = Ok(());
    let mut filled = false;
    let written = backend.with_device_bytes_mut(*stream, DevicePtr(dst.0 + offset), n, &mut |bytes| {
        filled = true;
        received = source.recv_bulk(bytes);
    });
    received.map_err(|e| format!("stripe connection failed: {e}"))?;
    if !filled {
        source.skip_bulk().map_err(|e| e.to_string())?;
    }
    Ok(written.map_err(Failure::from))
}

/// Sends the chunk at `offset` (`n` bytes) of a download from device memory, or an error
/// frame in its place (the copy was refused or has failed). Outer `Err`: the stripe broke.
fn send_chunk(job: &StripeJob, offset: u64, n: u64, replies: &ReplyWriter, failed: Option<&Failure>) -> Result<Result<(), Failure>, String> {
    let link = |e: TransportError| format!("stripe connection failed: {e}");
    let refuse = |status: Status, message: &str| replies.send_error(job.copy_id, Opcode::StripeChunk.raw(), status, message).map_err(link);
    let (src, stream, backend) = match (&job.work, failed) {
        (StripeWork::Refuse { status, message }, _) => return refuse(*status, message).map(Ok),
        (_, Some(Failure::Status(status, message))) => return refuse(*status, message).map(Ok),
        (StripeWork::Send { src, stream, backend }, _) => (src, stream, backend),
        _ => return refuse(Status::UNKNOWN, "striped copy failed").map(Ok),
    };
    let mut head = Vec::new();
    let mut sent: Option<Result<(), TransportError>> = None;
    let read = backend.with_device_bytes(*stream, DevicePtr(src.0 + offset), n, &mut |bytes| {
        sent = Some(send_chunk_frame(replies, &mut head, job.copy_id, offset, bytes));
    });
    match (sent, read) {
        (Some(sent), read) => {
            sent.map_err(link)?;
            Ok(read.map_err(Failure::from))
        }
        (None, Err(e)) => {
            let failure = Failure::from(e);
            let (status, message) = match &failure {
                Failure::Status(status, message) => (*status, message.as_str()),
                Failure::ReplyDeferred => (Status::UNKNOWN, "striped copy failed"),
            };
            refuse(status, message)?;
            Ok(Err(failure))
        }
        (None, Ok(())) => {
            refuse(Status::UNKNOWN, "the backend produced no bytes")?;
            Ok(Err(Failure::new(Status::UNKNOWN, "the backend produced no bytes")))
        }
    }
}

/// A copy of `failure` (to reply with what the stripes are told).
pub fn same_failure(failure: &Failure) -> Failure {
    match failure {
        Failure::Status(status, message) => Failure::Status(*status, message.clone()),
        Failure::ReplyDeferred => Failure::ReplyDeferred,
    }
}

/// Sends one download chunk: a response frame (request id = the copy's id) carrying a
/// [`wire::StripeChunk`] whose bulk section is `bytes`, sent from where they are.
fn send_chunk_frame(replies: &ReplyWriter, head: &mut Vec<u8>, copy_id: u64, offset: u64, bytes: &[u8]) -> Result<(), TransportError> {
    let chunk = wire::StripeChunk { copy_id, offset, data: proto_core::Bulk(bytes) };
    let meta = FrameMeta { opcode: Opcode::StripeChunk.raw(), flags: Flags::RESPONSE, request_id: copy_id, credits: 0, aux: 0 };
    head.resize(HEADER_LEN + 64, 0);
    let frame =
        encode_frame(head, meta, &chunk).map_err(|e| TransportError::Io(std::io::Error::other(format!("stripe chunk not encodable: {e}"))))?;
    let head_len = frame.head_len;
    replies.forward(&head[..head_len], bytes)
}

/// A striped copy as its request names it.
pub struct StripedCopy {
    /// The copy's id.
    pub copy_id: u64,
    /// Bytes.
    pub len: u64,
    /// Stripes the client spreads it over.
    pub stripes: u32,
}

/// Runs a striped copy over the session's stripes: `plan` makes what each stripe does (the
/// session validated the copy), or is the session's refusal, after which the stripes still
/// consume (upload) or answer (download) every scheduled chunk. Returns once every stripe is
/// done with the copy.
pub fn run_striped_copy(
    lease: &StripeLease,
    copy: &StripedCopy,
    upload: bool,
    plan: Result<&dyn Fn() -> StripeWork, Failure>,
) -> Result<(), Failure> {
    let (queues, joined_all) = lease.queues(copy.stripes);
    let plan = match plan {
        _ if copy.stripes == 0 || copy.stripes as usize > MAX_STRIPES => {
            Err(Failure::new(Status::INVALID_VALUE, format!("striped copy over {} stripes (1 to {MAX_STRIPES})", copy.stripes)))
        }
        _ if !joined_all => {
            Err(Failure::new(Status::INVALID_VALUE, format!("striped copy over {} stripes, but not all of them have joined", copy.stripes)))
        }
        plan => plan,
    };
    let refusal = |failure: &Failure| match failure {
        _ if upload => StripeWork::Discard,
        Failure::Status(status, message) => StripeWork::Refuse { status: *status, message: message.clone() },
        Failure::ReplyDeferred => StripeWork::Refuse { status: Status::UNKNOWN, message: "striped copy refused".into() },
    };
    let mut result = plan.as_ref().map(|_| ()).map_err(same_failure);
    let (done, outcomes) = channel();
    let mut waiting = 0;
    for (index, queue) in queues {
        let work = match &plan {
            Ok(make) => make(),
            Err(failure) => refusal(failure),
        };
        let job = StripeJob { copy_id: copy.copy_id, len: copy.len, stripes: copy.stripes, index, work, done: done.clone() };
        if queue.send(job).is_ok() {
            waiting += 1;
        } else {
            lease.drop_stripe(index);
            result = result.and(Err(Failure::new(Status::UNKNOWN, format!("stripe {index} of the session is gone"))));
        }
    }
    drop(done);
    for _ in 0..waiting {
        let Ok((index, outcome)) = outcomes.recv() else {
            result = result.and(Err(Failure::new(Status::UNKNOWN, "a stripe ended during the copy")));
            break;
        };
        match outcome {
            StripeOutcome::Done => {}
            StripeOutcome::Failed(f) => result = result.and(Err(f)),
            StripeOutcome::Broken(why) => {
                tracing::warn!(index, %why, "stripe closed");
                lease.drop_stripe(index);
                result = result.and(Err(Failure::new(Status::UNKNOWN, format!("striped copy failed: stripe {index}: {why}"))));
            }
        }
    }
    result
}

#[cfg(test)]
mod test {
    use super::*;
    use std::net::Ipv4Addr;

    fn join_req(session_id: u64, index: u32, key: &[u8]) -> wire::StripeJoin<'_> {
        wire::StripeJoin { session_id, index, join_key: key.into() }
    }

    #[test]
    fn joins_need_the_key_the_address_and_a_free_index_of_a_live_grant() {
        let hub = StripeHub::new(StripeConfig { max_stripes: 2 });
        let client = Some(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)));
        let grant = hub.grant(7, client, 5).expect("grant").expect("stripes granted");
        assert_eq!(grant.granted, 2, "bounded by --max-stripes");
        let key = *grant.lease.key();
        assert!(hub.grant(7, client, 1).is_err(), "one grant per session");
        assert!(hub.join(&join_req(7, 0, &key), Some(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)))).is_err(), "another address");
        assert!(hub.join(&join_req(7, 0, &key[..31]), client).is_err(), "a shorter key");
        assert!(hub.join(&join_req(8, 0, &key), client).is_err(), "another session");
        assert!(hub.join(&join_req(7, 2, &key), client).is_err(), "beyond the grant");
        let queue = hub.join(&join_req(7, 0, &key), client).expect("join");
        assert!(hub.join(&join_req(7, 0, &key), client).is_err(), "joined twice");
        assert!(!grant.lease.queues(2).1, "stripe 1 has not joined");
        assert!(grant.lease.queues(1).1);
        drop(grant);
        assert!(queue.recv().is_err(), "the session's end closes its stripes' queues");
        assert!(hub.join(&join_req(7, 1, &key), client).is_err(), "the grant ended with its session");
        assert!(StripeHub::new(StripeConfig { max_stripes: 0 }).grant(1, client, 4).expect("no error").is_none());
    }
}
