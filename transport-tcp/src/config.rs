//! TCP tuning, from the environment where the user may want to override it.

use std::time::Duration;

/// Default connect timeout (`HIP_REMOTE_CONNECT_TIMEOUT`, seconds).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default I/O timeout for one blocking read or write (`HIP_REMOTE_IO_TIMEOUT`, seconds; 0 = none).
/// Long kernels make a worker's reply legitimately slow, so the default is generous.
pub const DEFAULT_IO_TIMEOUT: Duration = Duration::from_secs(600);
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

/// Default time a reader polls its socket before it blocks in `read` (unix). A reply that
/// arrives within it is taken without the sleep and scheduler wake-up of a blocked reader.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(50);
/// Longest spin accepted (`HIP_REMOTE_TCP_SPIN_US`).
pub const MAX_SPIN: Duration = Duration::from_millis(10);

/// Settings of one TCP connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpConfig {
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// Per-operation read/write timeout (`None` = block forever).
    pub io_timeout: Option<Duration>,
    /// How long a reader polls before blocking (`HIP_REMOTE_TCP_SPIN_US`, at most
    /// [`MAX_SPIN`]; 0: block at once; ignored where the platform lacks a non-blocking peek).
    pub spin: Duration,
}

impl Default for TcpConfig {
    fn default() -> Self {
        Self { connect_timeout: DEFAULT_CONNECT_TIMEOUT, io_timeout: Some(DEFAULT_IO_TIMEOUT), spin: DEFAULT_SPIN }
    }
}

impl TcpConfig {
    /// Defaults overridden by `HIP_REMOTE_CONNECT_TIMEOUT` and `HIP_REMOTE_IO_TIMEOUT`
    /// (seconds, fractional allowed; an unparsable value keeps the default) and
    /// `HIP_REMOTE_TCP_SPIN_US` (microseconds).
    pub fn from_env() -> Self {
        let secs = |name: &str| {
            std::env::var(name).ok().and_then(|v| v.trim().parse::<f64>().ok()).filter(|s| s.is_finite() && *s >= 0.0)
        };
        let mut cfg = Self::default();
        if let Some(s) = secs("HIP_REMOTE_CONNECT_TIMEOUT") {
            cfg.connect_timeout = Duration::from_secs_f64(s.max(0.001));
        }
        if let Some(s) = secs("HIP_REMOTE_IO_TIMEOUT") {
            cfg.io_timeout = (s > 0.0).then(|| Duration::from_secs_f64(s));
        }
        if let Some(us) = std::env::var("HIP_REMOTE_TCP_SPIN_US").ok().and_then(|v| v.trim().parse::<u64>().ok()) {
            cfg.spin = Duration::from_micros(us).min(MAX_SPIN);
        }
        cfg
    }
}
