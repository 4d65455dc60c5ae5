//! Settings shared by every transport, from the environment where the user may want to
//! override them.

use std::time::Duration;

/// Default connect timeout (`HIP_REMOTE_CONNECT_TIMEOUT`, seconds).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default I/O timeout for one blocking operation (`HIP_REMOTE_IO_TIMEOUT`, seconds; 0 = none).
/// Long kernels make a worker's reply legitimately slow, so the default is generous.
pub const DEFAULT_IO_TIMEOUT: Duration = Duration::from_secs(600);

/// Default time a waiting reader polls (its socket, its completion queue) before it blocks.
/// A reply that arrives within it is taken without the sleep and scheduler wake-up of a
/// blocked reader.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(50);
/// Longest spin accepted (`HIP_REMOTE_TCP_SPIN_US`, `HIP_REMOTE_RDMA_SPIN_US`).
pub const MAX_SPIN: Duration = Duration::from_millis(10);

/// Connect and I/O timeouts, the same for TCP and RDMA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Connect timeout.
    pub connect: Duration,
    /// Longest wait for one operation (`None` = forever).
    pub io: Option<Duration>,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self { connect: DEFAULT_CONNECT_TIMEOUT, io: Some(DEFAULT_IO_TIMEOUT) }
    }
}

impl Timeouts {
    /// Defaults overridden by `HIP_REMOTE_CONNECT_TIMEOUT` and `HIP_REMOTE_IO_TIMEOUT`
    /// (seconds, fractional allowed; an unparsable value keeps the default).
    pub fn from_env() -> Self {
        let secs = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse::<f64>().ok()).filter(|s| s.is_finite() && *s >= 0.0);
        let mut timeouts = Self::default();
        if let Some(s) = secs("HIP_REMOTE_CONNECT_TIMEOUT") {
            timeouts.connect = Duration::from_secs_f64(s.max(0.001));
        }
        if let Some(s) = secs("HIP_REMOTE_IO_TIMEOUT") {
            timeouts.io = (s > 0.0).then(|| Duration::from_secs_f64(s));
        }
        timeouts
    }
}
