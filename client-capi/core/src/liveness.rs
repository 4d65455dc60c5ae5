//! The timers a waiting client runs: heartbeat PINGs after each heartbeat of silence, the
//! liveness timeout on silence, and the call deadline (`HIP_REMOTE_IO_TIMEOUT`).
//!
//! Silence is measured only while the driver waits for a frame: between calls the
//! application may do anything for as long as it likes.

use std::time::{Duration, Instant};

/// Which timer ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expired {
    /// No frame for the liveness timeout (the worker is frozen or unreachable).
    Silent,
    /// Frames came (heartbeats), but not the reply, before the call's deadline.
    Deadline,
}

/// The liveness timers.
#[derive(Debug, Clone)]
pub struct Timers {
    heartbeat: Duration,
    timeout: Duration,
    call_timeout: Option<Duration>,
    /// While the driver waits for a frame: since when it has heard nothing.
    silent_since: Option<Instant>,
    /// When the next PING is due (while waiting).
    next_ping: Option<Instant>,
    /// A PING is due and not yet handed to the driver.
    ping_due: bool,
    /// The deadline of the call being waited for.
    deadline: Option<Instant>,
}

impl Timers {
    /// PINGs after each `heartbeat` of silence; silence for `timeout` ends the connection,
    /// as does a call's reply later than `call_timeout` (`None`: no deadline).
    pub fn new(heartbeat: Duration, timeout: Duration, call_timeout: Option<Duration>) -> Self {
        Self { heartbeat, timeout, call_timeout, silent_since: None, next_ping: None, ping_due: false, deadline: None }
    }

    /// The call about to be waited for must be answered within the call timeout from `now`.
    pub fn arm_deadline(&mut self, now: Instant) {
        self.deadline = self.call_timeout.map(|t| now + t);
    }

    /// The driver starts waiting for the next frame at `now`: silence is measured from here.
    pub fn awaiting_frame(&mut self, now: Instant) {
        self.silent_since = Some(now);
        self.next_ping = Some(now + self.heartbeat);
    }

    /// A frame began: the wait is over.
    pub fn frame_received(&mut self) {
        self.silent_since = None;
        self.next_ping = None;
    }

    /// When [`Self::handle_timeout`] next has something to do; `None` while not waiting.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let silent_since = self.silent_since?;
        let mut at = silent_since + self.timeout;
        if let Some(ping) = self.next_ping {
            at = at.min(ping);
        }
        if let Some(deadline) = self.deadline {
            at = at.min(deadline);
        }
        Some(at)
    }

    /// Runs the timers due at `now`: a PING becomes due after each heartbeat of silence; the
    /// silence or the deadline running out is fatal.
    pub fn handle_timeout(&mut self, now: Instant) -> Result<(), Expired> {
        let Some(silent_since) = self.silent_since else { return Ok(()) };
        if now.saturating_duration_since(silent_since) >= self.timeout {
            return Err(Expired::Silent);
        }
        if self.deadline.is_some_and(|d| now >= d) {
            return Err(Expired::Deadline);
        }
        if self.next_ping.is_some_and(|p| now >= p) {
            self.ping_due = true;
            self.next_ping = Some(now + self.heartbeat);
        }
        Ok(())
    }

    /// Whether a PING is due; clears it.
    pub fn take_ping(&mut self) -> bool {
        std::mem::take(&mut self.ping_due)
    }

    /// The liveness timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The call timeout.
    pub fn call_timeout(&self) -> Option<Duration> {
        self.call_timeout
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEAT: Duration = Duration::from_millis(200);

    #[test]
    fn silence_sends_a_ping_each_heartbeat_then_expires() {
        let t0 = Instant::now();
        let mut t = Timers::new(BEAT, Duration::from_secs(1), None);
        assert_eq!(t.poll_timeout(), None, "no timers while not waiting");
        t.awaiting_frame(t0);
        let mut pings = 0;
        let (expired, now) = loop {
            let now = t.poll_timeout().expect("waiting");
            match t.handle_timeout(now) {
                Ok(()) => pings += usize::from(t.take_ping()),
                Err(e) => break (e, now),
            }
        };
        assert_eq!(expired, Expired::Silent);
        assert_eq!(now - t0, Duration::from_secs(1));
        assert_eq!(pings, 4, "at 200, 400, 600 and 800 ms");
    }

    #[test]
    fn a_frame_restarts_the_silence() {
        let t0 = Instant::now();
        let mut t = Timers::new(BEAT, Duration::from_secs(1), None);
        for i in 0..10 {
            // A heartbeat from a busy worker every 900 ms: never silent for 1 s.
            let at = t0 + Duration::from_millis(900 * i);
            t.awaiting_frame(at);
            assert_eq!(t.handle_timeout(at + Duration::from_millis(899)), Ok(()));
            t.frame_received();
            assert_eq!(t.poll_timeout(), None);
        }
    }

    #[test]
    fn the_deadline_bounds_the_whole_call_not_each_wait() {
        let t0 = Instant::now();
        let mut t = Timers::new(BEAT, Duration::from_secs(1), Some(Duration::from_millis(1500)));
        t.arm_deadline(t0);
        let mut at = t0;
        let expired = loop {
            t.awaiting_frame(at);
            at += Duration::from_millis(200);
            if let Err(e) = t.handle_timeout(at) {
                break (e, at);
            }
            t.frame_received();
        };
        assert_eq!(expired, (Expired::Deadline, t0 + Duration::from_millis(1600)));
        t.awaiting_frame(t0);
        assert_eq!(t.poll_timeout(), Some(t0 + BEAT), "the first ping comes before the deadline");
        t.arm_deadline(t0 + Duration::from_secs(60));
        t.awaiting_frame(t0 + Duration::from_millis(1500));
        assert_eq!(t.handle_timeout(t0 + Duration::from_millis(1600)), Ok(()), "a new call has a new deadline");
    }
}
