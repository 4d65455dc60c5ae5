//! Worker-wide configuration: what the accept loop ([`server`](crate::server)) and the
//! transports' listeners ([`listener`](crate::listener)) both read, so neither imports the
//! other for it.

use crate::session::SessionConfig;
use std::time::Duration;
use transport_tcp::TcpConfig;

/// Most concurrent connections a worker serves; more get a `TOO_MANY_CONNECTIONS` error
/// frame and are closed (`--max-connections`).
pub const MAX_CONNECTIONS: usize = 1024;
/// Most concurrent connections from one IP address (`--max-connections-per-address`), so
/// one host cannot take every slot.
pub const MAX_CONNECTIONS_PER_ADDRESS: usize = 64;
/// How long a connection may take to authenticate (or, without tokens, to say HELLO) before
/// it is closed (`--preauth-timeout-ms`): an idle connection cannot hold a slot for long.
pub const PREAUTH_DEADLINE: Duration = Duration::from_secs(5);

/// Limits on connections, each a named default above with a worker flag.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Most concurrent connections.
    pub max_connections: usize,
    /// Most concurrent connections from one IP address.
    pub max_per_address: usize,
    /// Time from accept to authentication.
    pub preauth_deadline: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self { max_connections: MAX_CONNECTIONS, max_per_address: MAX_CONNECTIONS_PER_ADDRESS, preauth_deadline: PREAUTH_DEADLINE }
    }
}

/// Worker-wide configuration.
#[derive(Debug, Clone, Default)]
pub struct WorkerConfig {
    /// Session settings.
    pub session: SessionConfig,
    /// Socket settings for accepted connections.
    pub tcp: TcpConfig,
    /// Connection limits.
    pub limits: ConnectionLimits,
    /// Runs each session in a process of its own after its handshake (host code allowed:
    /// `crate::sandbox`); `None`: sessions run in the worker.
    pub session_process: Option<std::sync::Arc<crate::sandbox::SessionProcess>>,
    /// Striped TCP bulk (`--max-stripes`).
    pub stripes: crate::stripes::StripeConfig,
}

/// Settings for the connections a worker accepts: no I/O timeout (a client may idle between
/// calls for as long as it likes), the rest from the environment (`HIP_REMOTE_TCP_SPIN_US`);
/// a bad value is refused (the worker does not start).
pub fn accepted_tcp_config() -> Result<TcpConfig, transport_core::EnvError> {
    Ok(TcpConfig { io_timeout: None, ..TcpConfig::from_env()? })
}
