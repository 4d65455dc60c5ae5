//! Waiting for progress without a thread of its own: the waiter polls the completion queue
//! for the spin time, then one waiter (the leader) arms the completion channel and sleeps in
//! [`Fabric::block`] while the others wait on the condition variable; every wait wakes at
//! least every [`WAIT_TICK`] for deadlines, shutdown and the keepalive probe.

use super::shared::{timed_out, Guard, Shared, State};
use super::{Broken, CONTROL_SQ_DEPTH};
use crate::config::WAIT_TICK;
use crate::fabric::{Fabric, SendWr, Wake};
use std::time::Instant;
use transport_core::TransportError;

impl<F: Fabric> Shared<F> {
    /// Waits until `ready` yields a value (or an error), driving progress meanwhile.
    pub(super) fn wait<'a, T>(
        &'a self,
        mut st: Guard<'a>,
        what: &str,
        mut ready: impl FnMut(&Self, &mut State) -> Result<Option<T>, TransportError>,
    ) -> Result<(Guard<'a>, T), TransportError> {
        let started = Instant::now();
        let deadline = self.io_timeout.map(|t| started + t);
        let spin_until = started + self.spin;
        let mut armed = false;
        loop {
            self.progress(&mut st);
            if let Some(v) = ready(self, &mut st)? {
                return Ok((st, v));
            }
            let now = Instant::now();
            if now < spin_until && st.broken.is_none() && deadline.is_none_or(|d| now < d) {
                // Poll without sleeping: a completion due within the spin window skips the
                // interrupt and the wake-up. The lock is let go so other threads progress,
                // and the CPU is yielded to any thread that is ready to run (the peer's, the
                // stream executor's) so spinning never delays the reply it waits for.
                drop(st);
                std::thread::yield_now();
                st = self.lock();
                continue;
            }
            let mut tick = WAIT_TICK;
            if let Some(d) = deadline {
                if now >= d {
                    return Err(timed_out(what));
                }
                tick = tick.min(d - now);
            }
            if st.leader {
                st = self.cv.wait_timeout(st, tick).unwrap_or_else(|p| p.into_inner()).0;
                continue;
            }
            if !armed {
                // Arm, then poll once more: a completion that arrived in between is found
                // now, any later one wakes `block`.
                if let Err(e) = self.fabric.arm() {
                    self.fail(&mut st, Broken::Failed(e.to_string()));
                    continue;
                }
                armed = true;
                continue;
            }
            st.leader = true;
            st.stats.sleeps += 1;
            drop(st);
            let woke = self.fabric.block(tick);
            st = self.lock();
            st.leader = false;
            armed = false;
            self.cv.notify_all();
            match woke {
                Ok(Wake::Completions) => {}
                Ok(Wake::Disconnected) => {
                    // Completions that arrived before the disconnect are still processed
                    // (at the top of the loop) before the source sees the end.
                    self.progress(&mut st);
                    self.fail(&mut st, Broken::PeerGone("peer disconnected".into()));
                }
                Ok(Wake::Timeout) => self.maybe_probe(&mut st),
                Err(e) => self.fail(&mut st, Broken::Failed(e.to_string())),
            }
        }
    }

    /// Keepalive: after `keepalive` without hearing from the peer, a zero-length RDMA WRITE.
    /// A vanished peer (no DISCONNECTED ever arrives when its host dies) fails it with a
    /// transport retry error.
    pub(super) fn maybe_probe(&self, st: &mut State) {
        if st.broken.is_some() || st.probe_in_flight || st.control_in_flight >= CONTROL_SQ_DEPTH {
            return;
        }
        if st.last_heard.elapsed() < self.keepalive {
            return;
        }
        match self.fabric.post_send(SendWr::Probe) {
            Ok(()) => {
                st.probe_in_flight = true;
                st.control_in_flight += 1;
                st.stats.probes += 1;
                st.last_heard = Instant::now();
            }
            Err(e) => self.fail(st, Broken::Failed(e.to_string())),
        }
    }
}
