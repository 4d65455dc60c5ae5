//! TCP tuning, from the environment where the user may want to override it. The timeouts and
//! spin limits every transport shares are in [`transport_core::config`].

use std::time::Duration;
use transport_core::config::{Timeouts, DEFAULT_SPIN, MAX_SPIN};

/// Socket send/receive buffer size requested from the kernel.
pub const SOCKET_BUFFER_BYTES: usize = 8 << 20;
/// Size of the coalescing buffer for fire-and-forget frames (at least 64 KiB).
pub const COALESCE_BYTES: usize = 256 << 10;
/// Bulk sections at most this large are copied into the coalescing buffer; larger ones are
/// written straight from the caller's memory.
pub const COPY_BULK_BELOW: usize = 16 << 10;
/// Receive buffer for headers and control parts (grown up to the protocol's control limit).
pub const RECV_BUFFER_BYTES: usize = 256 << 10;
/// Keepalive idle time before probes.
pub const KEEPALIVE_IDLE: Duration = Duration::from_secs(30);

/// Settings of one TCP connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpConfig {
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// Per-operation read/write timeout (`None` = block forever).
    pub io_timeout: Option<Duration>,
    /// How long a reader polls its socket before blocking in `read` (`HIP_REMOTE_TCP_SPIN_US`,
    /// at most [`MAX_SPIN`]; 0: block at once; ignored where the platform lacks a
    /// non-blocking peek).
    pub spin: Duration,
}

impl Default for TcpConfig {
    fn default() -> Self {
        let timeouts = Timeouts::default();
        Self { connect_timeout: timeouts.connect, io_timeout: timeouts.io, spin: DEFAULT_SPIN }
    }
}

impl TcpConfig {
    /// Defaults overridden by `HIP_REMOTE_CONNECT_TIMEOUT` and `HIP_REMOTE_IO_TIMEOUT`
    /// (seconds, fractional allowed; an unparsable value keeps the default) and
    /// `HIP_REMOTE_TCP_SPIN_US` (microseconds).
    pub fn from_env() -> Self {
        let timeouts = Timeouts::from_env();
        let mut cfg = Self { connect_timeout: timeouts.connect, io_timeout: timeouts.io, ..Self::default() };
        if let Some(us) = std::env::var("HIP_REMOTE_TCP_SPIN_US").ok().and_then(|v| v.trim().parse::<u64>().ok()) {
            cfg.spin = Duration::from_micros(us).min(MAX_SPIN);
        }
        cfg
    }
}
