//! TCP tuning, from the environment where the user may want to override it. The timeouts and
//! spin limits every transport shares are in [`transport_core::config`].

use std::time::Duration;
use transport_core::config::{self, EnvError, Lookup, Timeouts, DEFAULT_SPIN};

/// Socket send/receive buffer size requested from the kernel.
pub const SOCKET_BUFFER_BYTES: usize = 8 << 20;
/// Size of the coalescing buffer for fire-and-forget frames (at least 64 KiB).
pub const COALESCE_BYTES: usize = 256 << 10;
/// Bulk sections at most this large are copied into the coalescing buffer; larger ones are
/// written straight from the caller's memory.
pub const COPY_BULK_BELOW: usize = 16 << 10;
/// Receive buffer for headers and control parts (grown up to the protocol's control limit).
pub const RECV_BUFFER_BYTES: usize = 256 << 10;
/// Keepalive idle time before probes. With [`KEEPALIVE_INTERVAL`] and [`KEEPALIVE_PROBES`],
/// a dead or unreachable peer of an idle connection is noticed within
/// 10 + 4 × 5 = 30 s (the liveness bound, see [`transport_core::config::Liveness`]).
pub const KEEPALIVE_IDLE: Duration = Duration::from_secs(10);
/// Time between unanswered keepalive probes.
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
/// Unanswered probes after which the connection is dropped.
pub const KEEPALIVE_PROBES: u32 = 4;
/// Longest time sent data may stay unacknowledged before the kernel drops the connection
/// (`TCP_USER_TIMEOUT`, Linux): keepalive does not probe while data is in flight.
pub const USER_TIMEOUT: Duration = Duration::from_secs(30);

/// Settings of one TCP connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpConfig {
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// Per-operation read/write timeout of the socket (`None` = block forever). A client
    /// keeps the whole call's deadline itself (`HIP_REMOTE_IO_TIMEOUT` bounds a call, not a
    /// read).
    pub io_timeout: Option<Duration>,
    /// Reads only: the longest silence accepted in the middle of a frame, when shorter than
    /// `io_timeout` (a client sets its liveness timeout; `None`: `io_timeout` alone).
    pub stall_timeout: Option<Duration>,
    /// How long a reader polls its socket before blocking in `read` (`HIP_REMOTE_TCP_SPIN_US`,
    /// at most [`MAX_SPIN`](transport_core::config::MAX_SPIN); 0: block at once; ignored
    /// where the platform lacks a non-blocking peek).
    pub spin: Duration,
}

impl Default for TcpConfig {
    fn default() -> Self {
        let timeouts = Timeouts::default();
        Self { connect_timeout: timeouts.connect, io_timeout: timeouts.io, stall_timeout: None, spin: DEFAULT_SPIN }
    }
}

impl TcpConfig {
    /// The socket's read timeout: the shorter of `io_timeout` and `stall_timeout`.
    pub fn read_timeout(&self) -> Option<Duration> {
        match (self.io_timeout, self.stall_timeout) {
            (Some(io), Some(stall)) => Some(io.min(stall)),
            (io, stall) => io.or(stall),
        }
    }

    /// Defaults overridden by `HIP_REMOTE_CONNECT_TIMEOUT` and `HIP_REMOTE_IO_TIMEOUT`
    /// (seconds, fractional allowed) and `HIP_REMOTE_TCP_SPIN_US` (microseconds); a bad value
    /// is refused.
    pub fn from_env() -> Result<Self, EnvError> {
        Self::from_lookup(&config::env_lookup)
    }

    /// As [`from_env`](Self::from_env), reading variables through `lookup`.
    pub fn from_lookup(lookup: &Lookup<'_>) -> Result<Self, EnvError> {
        let timeouts = Timeouts::from_lookup(lookup)?;
        let mut cfg = Self { connect_timeout: timeouts.connect, io_timeout: timeouts.io, ..Self::default() };
        if let Some(spin) = config::spin(lookup, "HIP_REMOTE_TCP_SPIN_US")? {
            cfg.spin = spin;
        }
        Ok(cfg)
    }
}
