//! Sessions that outlive their connection (`features::RESUME`, `docs/PROTOCOL.md` section 6
//! "Resume", `docs/CLIENT.md` "Resume").
//!
//! A resumable session records the replies it sends ([`ReplayRecord`], bounded) and the
//! highest request id it has executed. When its connection breaks, the server parks it in
//! the [`ResumeHub`] for the grace period instead of freeing it; a client that reconnects,
//! authenticates as the same tenant and presents the session's secret takes it back, gets the
//! recorded replies it may have missed, and re-sends only what the session never executed.

use crate::session::{LateReplies, Session};
use proto_core::limits::RESUME_SECRET_LEN;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a session whose connection broke is kept for its client to resume it, unless
/// `--resume-grace-s` says otherwise.
pub const DEFAULT_RESUME_GRACE: Duration = Duration::from_secs(60);

/// Longest grace period `--resume-grace-s` accepts (a parked session holds its memory).
pub const MAX_RESUME_GRACE: Duration = Duration::from_secs(24 * 3600);

/// Most replies a session's record keeps for re-sending (the oldest go first).
pub const MAX_REPLAY_REPLIES: usize = 4096;

/// Most reply bytes (heads and bulk) a session's record keeps; a larger reply is not kept,
/// and a client that missed it cannot resume.
pub const MAX_REPLAY_BYTES: usize = 64 << 20;

/// Most sessions parked at once (each holds its device memory until it expires).
pub const MAX_PARKED_SESSIONS: usize = 1024;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The replies a resumable session sent, and the highest request id it executed.
#[derive(Debug, Default)]
pub struct ReplayRecord {
    enabled: bool,
    /// `(request id, frame, head length)` in the order they were sent.
    frames: VecDeque<(u64, Vec<u8>, usize)>,
    bytes: usize,
    evicted_through: u64,
    executed_through: u64,
}

impl ReplayRecord {
    /// Starts recording (the session negotiated `RESUME`).
    pub fn enable(&mut self) {
        self.enabled = true;
    }

    /// Whether the session records its replies (and outlives its connection).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Keeps a reply frame (`head` then `bulk`) to request `request_id`; id 0 (heartbeats,
    /// notices) answers nothing and is not kept.
    pub fn record(&mut self, request_id: u64, head: &[u8], bulk: &[u8]) {
        if !self.enabled || request_id == 0 {
            return;
        }
        let len = head.len() + bulk.len();
        if len > MAX_REPLAY_BYTES {
            self.evicted_through = self.evicted_through.max(request_id);
            return;
        }
        while self.frames.len() >= MAX_REPLAY_REPLIES || self.bytes + len > MAX_REPLAY_BYTES {
            let Some((id, frame, _)) = self.frames.pop_front() else { break };
            self.bytes -= frame.len();
            self.evicted_through = self.evicted_through.max(id);
        }
        let mut frame = Vec::with_capacity(len);
        frame.extend_from_slice(head);
        frame.extend_from_slice(bulk);
        self.bytes += len;
        self.frames.push_back((request_id, frame, head.len()));
    }

    /// Request `request_id` has been executed (requests of a connection run in order).
    pub fn executed(&mut self, request_id: u64) {
        self.executed_through = self.executed_through.max(request_id);
    }

    /// Highest request id executed.
    pub fn executed_through(&self) -> u64 {
        self.executed_through
    }

    /// Highest request id whose reply was dropped from the record.
    pub fn evicted_through(&self) -> u64 {
        self.evicted_through
    }

    /// The client has every reply up to `received_through`: those go; the frames (and head
    /// lengths) of the later ones, to re-send in order.
    pub fn replies_after(&mut self, received_through: u64) -> Vec<(Vec<u8>, usize)> {
        let before = self.frames.len();
        self.frames.retain(|(id, _, _)| *id > received_through);
        if self.frames.len() != before {
            self.bytes = self.frames.iter().map(|(_, f, _)| f.len()).sum();
        }
        self.frames.iter().map(|(_, frame, head_len)| (frame.clone(), *head_len)).collect()
    }
}

/// What a client asked for with `Resume` on a fresh connection.
#[derive(Debug, Clone)]
pub struct ResumeAsk {
    /// The `Resume` request's id (its reply goes out under it).
    pub request_id: u64,
    /// The session to continue.
    pub session_id: u64,
    /// The secret the client presented.
    pub secret: Vec<u8>,
    /// The client has every reply up to this id.
    pub received_through: u64,
}

/// A session whose connection broke, waiting for its client.
struct Parked {
    session: Session,
    late: Arc<LateReplies>,
    until: Instant,
}

/// Why a resume was refused (the message the client sees).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// No such session is parked: expired, never resumable, or a wrong secret or tenant
    /// (indistinguishable to the asker, so nobody learns which sessions exist).
    NotFound,
    /// The session still has its old connection (the worker has not seen it break yet):
    /// try again shortly.
    StillAttached,
}

/// The worker's parked sessions and the resumable ones still attached to a connection.
pub struct ResumeHub {
    grace: Duration,
    parked: Mutex<HashMap<u64, Parked>>,
    attached: Mutex<HashSet<u64>>,
}

impl std::fmt::Debug for ResumeHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResumeHub").field("grace", &self.grace).field("parked", &self.parked_count()).finish()
    }
}

impl ResumeHub {
    /// A hub that keeps sessions for `grace` after their connection broke.
    pub fn new(grace: Duration) -> Arc<Self> {
        Arc::new(Self { grace, parked: Mutex::default(), attached: Mutex::default() })
    }

    /// The grace period.
    pub fn grace(&self) -> Duration {
        self.grace
    }

    /// Session `id` is served over a connection and may be resumed once it breaks.
    pub fn attach(&self, id: u64) {
        lock(&self.attached).insert(id);
    }

    /// Session `id`'s connection ended.
    pub fn detach(&self, id: u64) {
        lock(&self.attached).remove(&id);
    }

    /// Keeps `session` (whose connection broke) for the grace period; a thread frees it then
    /// unless a client took it back. A full hub frees it now.
    pub fn park(self: &Arc<Self>, session: Session, late: Arc<LateReplies>) {
        let id = session.id();
        let until = Instant::now() + self.grace;
        let refused = {
            let mut parked = lock(&self.parked);
            if parked.len() >= MAX_PARKED_SESSIONS {
                Some((session, late))
            } else {
                parked.insert(id, Parked { session, late, until });
                None
            }
        };
        self.detach(id);
        if let Some((session, late)) = refused {
            tracing::warn!(session = id, "connection ended; {MAX_PARKED_SESSIONS} sessions wait for resume already: session freed");
            free(session, &late);
            return;
        }
        tracing::info!(session = id, grace_s = self.grace.as_secs_f64(), "connection broke; session kept for its client to resume");
        let hub = Arc::clone(self);
        let spawned = std::thread::Builder::new().name(format!("hip-resume-grace-{id}")).spawn(move || {
            std::thread::sleep(hub.grace);
            hub.expire(id);
        });
        if let Err(e) = spawned {
            tracing::error!(%e, session = id, "cannot start the resume grace timer; freeing the session now");
            self.expire_now(id);
        }
    }

    fn expire(&self, id: u64) {
        let expired = {
            let mut parked = lock(&self.parked);
            match parked.get(&id) {
                Some(p) if p.until <= Instant::now() => parked.remove(&id),
                _ => None,
            }
        };
        if let Some(p) = expired {
            tracing::info!(session = id, "not resumed within the grace period; session freed");
            free(p.session, &p.late);
        }
    }

    fn expire_now(&self, id: u64) {
        if let Some(p) = lock(&self.parked).remove(&id) {
            free(p.session, &p.late);
        }
    }

    /// Takes parked session `ask.session_id` back for a client authenticated as `tenant`
    /// that presented `ask.secret`; compared in constant time.
    pub fn take(&self, ask: &ResumeAsk, tenant: Option<&str>) -> Result<(Session, Arc<LateReplies>), Refused> {
        use subtle::ConstantTimeEq;
        let mut parked = lock(&self.parked);
        let Some(p) = parked.get(&ask.session_id) else {
            return Err(if lock(&self.attached).contains(&ask.session_id) { Refused::StillAttached } else { Refused::NotFound });
        };
        let secret_ok: bool = p.session.resume_secret().ct_eq(&ask.secret[..]).into();
        if !secret_ok || p.session.tenant_name() != tenant || p.until <= Instant::now() {
            return Err(Refused::NotFound);
        }
        let p = parked.remove(&ask.session_id).expect("looked up above");
        Ok((p.session, p.late))
    }

    /// Whether session `id` waits for its client.
    pub fn is_parked(&self, id: u64) -> bool {
        lock(&self.parked).contains_key(&id)
    }

    /// Sessions parked now.
    pub fn parked_count(&self) -> usize {
        lock(&self.parked).len()
    }
}

/// Frees a session, draining its streams before its late-reply queue closes.
fn free(session: Session, late: &LateReplies) {
    drop(session);
    late.close();
}

/// A fresh random resume secret.
pub fn new_secret() -> std::io::Result<[u8; RESUME_SECRET_LEN]> {
    let mut secret = [0; RESUME_SECRET_LEN];
    getrandom::fill(&mut secret).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(id: u64, len: usize) -> Vec<u8> {
        let mut f = vec![id as u8; len];
        f[0] = 0xa5;
        f
    }

    /// Replies are kept only once recording is on, not for id 0, and handed back after the
    /// client's `received_through`, in the order sent.
    #[test]
    fn the_record_keeps_replies_after_what_the_client_received() {
        let mut r = ReplayRecord::default();
        r.record(1, &frame(1, 40), &[]);
        assert!(r.replies_after(0).is_empty(), "nothing recorded before RESUME");
        r.enable();
        r.record(0, &frame(0, 40), &[]);
        for id in [3, 2, 5] {
            r.record(id, &frame(id, 32), &[id as u8; 8]);
        }
        let after = r.replies_after(2);
        let ids: Vec<u8> = after.iter().map(|(f, _)| f[1]).collect();
        assert_eq!(ids, [3, 5], "late replies keep the order they were sent in");
        assert!(after.iter().all(|(f, head)| f.len() == 40 && *head == 32));
        assert_eq!(r.replies_after(0).len(), 2, "what the client received is dropped for good");
        r.executed(7);
        r.executed(4);
        assert_eq!((r.executed_through(), r.evicted_through()), (7, 0));
    }

    /// The oldest replies go past the bounds, and the record says which ids it dropped; a
    /// reply larger than the bound is not kept at all.
    #[test]
    fn the_record_is_bounded_and_says_what_it_dropped() {
        let mut r = ReplayRecord::default();
        r.enable();
        for id in 1..=(MAX_REPLAY_REPLIES as u64 + 10) {
            r.record(id, &frame(id, 16), &[]);
        }
        assert_eq!(r.evicted_through(), 10);
        assert_eq!(r.replies_after(0).len(), MAX_REPLAY_REPLIES);
        let mut r = ReplayRecord::default();
        r.enable();
        let big = vec![0u8; MAX_REPLAY_BYTES / 2];
        r.record(1, &frame(1, 32), &big);
        r.record(2, &frame(2, 32), &big);
        assert_eq!(r.evicted_through(), 1, "bytes bound the record too");
        r.record(3, &frame(3, 32), &vec![0u8; MAX_REPLAY_BYTES]);
        assert_eq!(r.evicted_through(), 3, "a reply over the bound is not kept");
        assert_eq!(r.replies_after(0).len(), 1);
    }
}
