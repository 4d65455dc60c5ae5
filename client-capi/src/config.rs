//! Client configuration from the environment.
//!
//! - `HIP_REMOTE_WORKER=host:port` (also the seed's `TF_WORKER_HOST` / `TF_WORKER_PORT`);
//!   default `127.0.0.1:18515`.
//! - `HIP_REMOTE_TOKEN`: authentication token for workers started with `--token`.
//! - `HIP_REMOTE_CONNECT_TIMEOUT`, `HIP_REMOTE_IO_TIMEOUT`: seconds (see `transport-tcp`).
//! - `HIP_REMOTE_DEBUG=1` (or the seed's `TF_DEBUG=1`): explain every failed call on stderr.
//! - `HIP_REMOTE_PREFER_RDMA=1`: connect over TCP, then move to the RDMA listener the worker
//!   advertises in WELCOME (staying on TCP, with a note on stderr, if that fails).
//! - `HIP_REMOTE_LOG=FILTER` (tracing syntax, e.g. `transport_rdma=debug`): the library's own
//!   log on stderr.

use transport_tcp::TcpConfig;

/// Default worker port (the seed prototype's).
pub const DEFAULT_PORT: u16 = 18515;

/// Where and how to reach the worker.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// `host:port`.
    pub worker: String,
    /// Token presented in HELLO.
    pub token: Option<String>,
    /// Socket settings.
    pub tcp: TcpConfig,
    /// Print the reason of every failed call.
    pub debug: bool,
    /// Move to the worker's RDMA listener when WELCOME advertises one
    /// (`HIP_REMOTE_PREFER_RDMA=1`; needs a library built with the `rdma` feature).
    pub prefer_rdma: bool,
}

impl ClientConfig {
    /// Reads the environment.
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let worker = var("HIP_REMOTE_WORKER").map(|w| w.trim().trim_start_matches("tcp://").to_string()).unwrap_or_else(|| {
            let host = var("TF_WORKER_HOST").unwrap_or_else(|| "127.0.0.1".into());
            let port = var("TF_WORKER_PORT").and_then(|p| p.parse::<u16>().ok()).unwrap_or(DEFAULT_PORT);
            format!("{host}:{port}")
        });
        let worker = if worker.contains(':') { worker } else { format!("{worker}:{DEFAULT_PORT}") };
        let debug = ["HIP_REMOTE_DEBUG", "TF_DEBUG"].iter().any(|v| var(v).is_some_and(|v| v != "0"));
        if let Some(filter) = var("HIP_REMOTE_LOG") {
            // The library's own log (transports, connection) on stderr, e.g.
            // `HIP_REMOTE_LOG=transport_rdma=debug`; left alone if the host process installed
            // a subscriber already.
            if let Ok(filter) = tracing_subscriber::EnvFilter::try_new(&filter) {
                let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
            }
        }
        let prefer_rdma = var("HIP_REMOTE_PREFER_RDMA").is_some_and(|v| v != "0");
        Self { worker, token: var("HIP_REMOTE_TOKEN"), tcp: TcpConfig::from_env(), debug, prefer_rdma }
    }
}
