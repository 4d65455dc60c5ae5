//! The state both halves of a connection share ([`Shared`]: the fabric, a mutex-guarded
//! [`State`] and its condition variable, the registration cache), failure recording, and the
//! orderly close when the last half is dropped.

use super::{Broken, Offered, Role, Stats, CONTROL_SQ_DEPTH};
use crate::config::{LINGER, WAIT_TICK};
use crate::credit::{Credits, SendPurpose};
use crate::fabric::{Completion, Fabric, SendWr};
use crate::regcache::RegCache;
use crate::rx::Reassembly;
use crate::tx::SendSlots;
use crate::wire::{Imm, LandingDesc, SegKind};
use std::collections::HashMap;
use std::io;
use std::sync::atomic::AtomicBool;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use transport_core::TransportError;

pub(super) struct State {
    pub(super) credits: Credits,
    pub(super) slots: SendSlots,
    pub(super) control_in_flight: u32,
    pub(super) rx: Reassembly,
    pub(super) broken: Option<Broken>,
    pub(super) leader: bool,
    pub(super) last_heard: Instant,
    pub(super) probe_in_flight: bool,
    pub(super) scratch: Vec<Completion>,
    pub(super) stats: Stats,
    /// RDMA READs posted and not completed.
    pub(super) reads_in_flight: u32,
    /// Done messages received (one per remote bulk section we sent).
    pub(super) dones_received: u64,
    /// Remote bulk sections announced and not yet answered by a Done.
    pub(super) remote_outstanding: u32,
    /// RDMA WRITEs posted and not completed.
    pub(super) writes_in_flight: u32,
    /// Client: landings offered, by request id.
    pub(super) offered: HashMap<u64, Offered>,
    /// Worker: landings the client offered, by request id.
    pub(super) landings: HashMap<u64, LandingDesc>,
}

/// The state both halves share.
pub struct Shared<F: Fabric> {
    pub(super) fabric: F,
    pub(super) io_timeout: Option<Duration>,
    pub(super) keepalive: Duration,
    /// Polling time before a waiter arms the completion channel and sleeps.
    pub(super) spin: Duration,
    pub(super) st: Mutex<State>,
    pub(super) cv: Condvar,
    /// Long-lived registrations (never locked while `st` is held, so registering, a slow
    /// system call, does not stall progress).
    pub(super) cache: Mutex<RegCache>,
    pub(super) role: Role,
    /// A failed registration was logged (once per connection).
    pub(super) logged_reg_failure: AtomicBool,
    /// The outcome of the first device-memory registration was logged.
    pub(super) logged_device: AtomicBool,
    /// The first RDMA READ of a peer's bulk was logged.
    pub(super) logged_read: AtomicBool,
}

pub(super) type Guard<'a> = MutexGuard<'a, State>;

pub(super) fn timed_out(what: &str) -> TransportError {
    TransportError::Io(io::Error::new(io::ErrorKind::TimedOut, format!("RDMA: timed out waiting for {what}")))
}

impl<F: Fabric> Shared<F> {
    pub(super) fn lock(&self) -> Guard<'_> {
        self.st.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn fail(&self, st: &mut State, why: Broken) {
        // The first cause wins, except that a real failure explains a disconnect better.
        match (&st.broken, &why) {
            (None, _) | (Some(Broken::PeerGone(_)), Broken::Failed(_)) => {
                tracing::debug!(?why, "RDMA connection broken");
                st.broken = Some(why);
            }
            _ => {}
        }
        // Offered landings are released now: nothing may be written into them any more.
        st.offered.clear();
        self.cv.notify_all();
    }

    pub(super) fn check_usable(st: &State) -> Result<(), TransportError> {
        match &st.broken {
            Some(b) => Err(b.to_error()),
            None => Ok(()),
        }
    }

    pub(super) fn stats(&self) -> Stats {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner()).stats();
        Stats { cache, ..self.lock().stats }
    }

    /// Marks the connection closed locally; every waiting and later operation fails.
    pub(super) fn shutdown(&self) {
        let mut st = self.lock();
        self.fail(&mut st, Broken::Shutdown);
    }
}

impl<F: Fabric> Drop for Shared<F> {
    /// Orderly close: a FIN (when a credit allows), then up to [`LINGER`] for the last
    /// SENDs to complete, so the peer holds every byte before it sees the disconnect.
    fn drop(&mut self) {
        let mut st = self.st.lock().unwrap_or_else(|p| p.into_inner());
        if st.broken.is_none() {
            self.progress(&mut st);
        }
        if st.broken.is_none() && st.credits.may_send(SendPurpose::Fin) && st.control_in_flight < CONTROL_SQ_DEPTH {
            let grant = st.credits.on_send(SendPurpose::Fin);
            let imm = Imm { kind: SegKind::Fin, grant }.encode();
            if self.fabric.post_send(SendWr::Control { imm }).is_ok() {
                st.control_in_flight += 1;
            }
        }
        let until = Instant::now() + LINGER;
        while st.broken.is_none() && !(st.slots.all_free() && st.control_in_flight == 0) && Instant::now() < until {
            let _ = self.fabric.arm();
            self.progress(&mut st);
            if st.slots.all_free() && st.control_in_flight == 0 {
                break;
            }
            drop(st);
            let _ = self.fabric.block(WAIT_TICK.min(until.saturating_duration_since(Instant::now())));
            st = self.st.lock().unwrap_or_else(|p| p.into_inner());
        }
        st.offered.clear();
        drop(st);
        // Registrations go before the fabric's protection domain does.
        self.cache.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.fabric.disconnect();
    }
}
