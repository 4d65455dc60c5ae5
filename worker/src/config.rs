//! Worker-wide configuration: what the accept loop ([`server`](crate::server)) and the
//! transports' listeners ([`listener`](crate::listener)) both read, so neither imports the
//! other for it.

use crate::session::SessionConfig;
use transport_tcp::TcpConfig;

/// Worker-wide configuration.
#[derive(Debug, Clone, Default)]
pub struct WorkerConfig {
    /// Session settings.
    pub session: SessionConfig,
    /// Socket settings for accepted connections.
    pub tcp: TcpConfig,
}

/// Settings for the connections a worker accepts: no I/O timeout (a client may idle between
/// calls for as long as it likes), the rest from the environment (`HIP_REMOTE_TCP_SPIN_US`);
/// a bad value is refused (the worker does not start).
pub fn accepted_tcp_config() -> Result<TcpConfig, transport_core::EnvError> {
    Ok(TcpConfig { io_timeout: None, ..TcpConfig::from_env()? })
}
