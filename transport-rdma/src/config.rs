//! RDMA tuning, from the environment where the user may want to override it.

use std::time::Duration;
// The waiter's spin has the default and limit of TCP's readers.
use transport_core::config::{self, EnvError, Lookup, Timeouts, DEFAULT_SPIN};

/// Default size of one receive (and send) slot: the largest SEND.
pub const DEFAULT_SLOT_LEN: usize = 64 << 10;
/// Default receive ring depth: the credits the peer starts with.
pub const DEFAULT_RECV_DEPTH: u32 = 64;
/// Default number of send slots (SENDs in flight).
pub const DEFAULT_SEND_DEPTH: u32 = 32;
/// Smallest slot accepted (a frame header plus a useful control part).
pub const MIN_SLOT_LEN: usize = 4 << 10;
/// Largest slot accepted (one SEND; larger messages only add latency per chunk).
pub const MAX_SLOT_LEN: usize = 4 << 20;
/// Smallest data ring accepted.
pub const MIN_RING_DEPTH: u32 = 4;
/// Largest ring (data credits travel in 12 bits of the immediate data).
pub const MAX_RING_DEPTH: u32 = 2048;
/// Bulk sections at most this large are coalesced with queued frames (as on TCP).
pub const COPY_BULK_BELOW: usize = 16 << 10;
/// Default smallest bulk section sent one-sided (the receiver RDMA-READs it from the
/// sender's buffer, registered for the transfer) instead of copied through the rings.
/// Below it registering costs more than copying (see `docs/RDMA.md`).
pub const DEFAULT_ONE_SIDED_MIN: usize = 2 << 20;
/// Smallest bulk sent one-sided when its memory is already registered (a registration-cache
/// hit: no registration cost, only the descriptor round trip), default.
pub const CACHED_ONE_SIDED_MIN: usize = 64 << 10;
/// Bytes the registration cache keeps registered at most, default (least recently used
/// registrations are released beyond it; remembered memory stays known and re-registers on
/// its next use).
pub const DEFAULT_REG_CACHE_BYTES: usize = 4 << 30;
/// Ranges the registration cache remembers at most (more are simply not cached).
pub const MAX_REMEMBERED_RANGES: usize = 1 << 16;
/// Idle time after which a connection sends a zero-length RDMA WRITE to probe its peer.
pub const DEFAULT_KEEPALIVE: Duration = Duration::from_secs(30);
/// How long a waiting thread sleeps at most before it re-checks shutdown, deadlines and
/// keepalive.
pub const WAIT_TICK: Duration = Duration::from_millis(100);
/// Time the address and route resolution of librdmacm may take, each.
pub const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a closing connection waits for its last SENDs to complete before it
/// disconnects.
pub const LINGER: Duration = Duration::from_secs(2);

/// Settings of one RDMA connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RdmaConfig {
    /// Bytes per receive/send slot.
    pub slot_len: usize,
    /// Receive slots (credits granted to the peer at connect).
    pub recv_depth: u32,
    /// Send slots.
    pub send_depth: u32,
    /// Connection establishment timeout.
    pub connect_timeout: Duration,
    /// Longest wait for one operation (credits, a free slot, data); `None` = forever.
    pub io_timeout: Option<Duration>,
    /// Idle time before a keepalive probe.
    pub keepalive: Duration,
    /// One-sided bulk: accept remote bulk sections (announced to the peer at connect) and
    /// send bulk sections of at least `one_sided_min` bytes as remote when the peer accepts
    /// them too (default on; `HIP_REMOTE_RDMA_ONE_SIDED=0`: the two-sided path only).
    pub one_sided: bool,
    /// Smallest bulk section sent one-sided.
    pub one_sided_min: usize,
    /// Landings: the client offers the destination of each large device-to-host reply and
    /// the worker RDMA-WRITEs the bytes straight into it (needs `one_sided`; default on,
    /// `HIP_REMOTE_RDMA_LANDINGS=0` turns it off: the client then RDMA-READs such replies).
    pub landings: bool,
    /// Registration-cache budget in bytes (`HIP_REMOTE_RDMA_REG_CACHE_MIB`).
    pub reg_cache_bytes: usize,
    /// How long a waiter polls the completion queue before sleeping on the completion channel
    /// (`HIP_REMOTE_RDMA_SPIN_US`, at most [`MAX_SPIN`](transport_core::config::MAX_SPIN); 0: sleep at once). A reply that
    /// arrives within it costs no interrupt and no scheduler wake-up (several µs each, on both
    /// sides of every round trip).
    pub spin: Duration,
}

impl Default for RdmaConfig {
    fn default() -> Self {
        let timeouts = Timeouts::default();
        Self {
            slot_len: DEFAULT_SLOT_LEN,
            recv_depth: DEFAULT_RECV_DEPTH,
            send_depth: DEFAULT_SEND_DEPTH,
            connect_timeout: timeouts.connect,
            io_timeout: timeouts.io,
            keepalive: DEFAULT_KEEPALIVE,
            one_sided: true,
            one_sided_min: DEFAULT_ONE_SIDED_MIN,
            landings: true,
            reg_cache_bytes: DEFAULT_REG_CACHE_BYTES,
            spin: DEFAULT_SPIN,
        }
    }
}

impl RdmaConfig {
    /// Defaults overridden by `HIP_REMOTE_CONNECT_TIMEOUT`, `HIP_REMOTE_IO_TIMEOUT` (as for
    /// TCP), `HIP_REMOTE_RDMA_SLOT_KIB`, `HIP_REMOTE_RDMA_RECV_DEPTH`,
    /// `HIP_REMOTE_RDMA_SEND_DEPTH`, `HIP_REMOTE_RDMA_KEEPALIVE` (seconds),
    /// `HIP_REMOTE_RDMA_ONE_SIDED`, `HIP_REMOTE_RDMA_LANDINGS` (booleans),
    /// `HIP_REMOTE_RDMA_REG_CACHE_MIB`, `HIP_REMOTE_RDMA_ONE_SIDED_MIN_KIB` and
    /// `HIP_REMOTE_RDMA_SPIN_US`. A value that is not a number, or out of its range, is
    /// refused with the variable's name and range.
    pub fn from_env() -> Result<Self, EnvError> {
        Self::from_lookup(&config::env_lookup)
    }

    /// As [`from_env`](Self::from_env), reading variables through `lookup`.
    pub fn from_lookup(lookup: &Lookup<'_>) -> Result<Self, EnvError> {
        let timeouts = Timeouts::from_lookup(lookup)?;
        let num = |name: &str, range: std::ops::RangeInclusive<u64>, unit: &str| config::uint(lookup, name, range, unit);
        let mut cfg = Self { connect_timeout: timeouts.connect, io_timeout: timeouts.io, ..Self::default() };
        if let Some(kib) = num("HIP_REMOTE_RDMA_SLOT_KIB", (MIN_SLOT_LEN >> 10) as u64..=(MAX_SLOT_LEN >> 10) as u64, "KiB")? {
            cfg.slot_len = kib as usize * 1024;
        }
        let depths = MIN_RING_DEPTH as u64..=MAX_RING_DEPTH as u64;
        if let Some(d) = num("HIP_REMOTE_RDMA_RECV_DEPTH", depths.clone(), "slots")? {
            cfg.recv_depth = d as u32;
        }
        if let Some(d) = num("HIP_REMOTE_RDMA_SEND_DEPTH", 2..=MAX_RING_DEPTH as u64, "slots")? {
            cfg.send_depth = d as u32;
        }
        if let Some(s) = num("HIP_REMOTE_RDMA_KEEPALIVE", 1..=3600, "seconds")? {
            cfg.keepalive = Duration::from_secs(s);
        }
        if let Some(v) = config::flag(lookup, "HIP_REMOTE_RDMA_ONE_SIDED")? {
            cfg.one_sided = v;
        }
        if let Some(v) = config::flag(lookup, "HIP_REMOTE_RDMA_LANDINGS")? {
            cfg.landings = v;
        }
        if let Some(mib) = num("HIP_REMOTE_RDMA_REG_CACHE_MIB", 0..=1 << 24, "MiB")? {
            cfg.reg_cache_bytes = (mib << 20) as usize;
        }
        let min_kib = (COPY_BULK_BELOW >> 10) as u64 + 1;
        if let Some(kib) = num("HIP_REMOTE_RDMA_ONE_SIDED_MIN_KIB", min_kib..=4 << 20, "KiB")? {
            cfg.one_sided_min = kib as usize * 1024;
        }
        if let Some(spin) = config::spin(lookup, "HIP_REMOTE_RDMA_SPIN_US")? {
            cfg.spin = spin;
        }
        Ok(cfg.clamped())
    }

    /// The configuration with every size inside its accepted range.
    #[must_use]
    pub fn clamped(mut self) -> Self {
        self.slot_len = self.slot_len.clamp(MIN_SLOT_LEN, MAX_SLOT_LEN);
        self.recv_depth = self.recv_depth.clamp(MIN_RING_DEPTH, MAX_RING_DEPTH);
        self.send_depth = self.send_depth.clamp(2, MAX_RING_DEPTH);
        self.one_sided_min = self.one_sided_min.max(COPY_BULK_BELOW + 1);
        self
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn clamps_to_ranges() {
        let c = RdmaConfig { slot_len: 1, recv_depth: 1, send_depth: 0, ..RdmaConfig::default() }.clamped();
        assert_eq!((c.slot_len, c.recv_depth, c.send_depth), (MIN_SLOT_LEN, MIN_RING_DEPTH, 2));
        let c = RdmaConfig { slot_len: usize::MAX, recv_depth: u32::MAX, send_depth: u32::MAX, ..RdmaConfig::default() }.clamped();
        assert_eq!((c.slot_len, c.recv_depth, c.send_depth), (MAX_SLOT_LEN, MAX_RING_DEPTH, MAX_RING_DEPTH));
    }
}
