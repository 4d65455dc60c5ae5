//! Log output shared by `hip-worker` and `hip-remote`: to stderr, with colour codes only
//! when stderr is a terminal (under systemd, in a container or redirected to a file, escape
//! sequences would be noise in the journal).

use std::io::IsTerminal;

/// Installs the global subscriber with `filter` (tracing's `EnvFilter` syntax; an invalid
/// one falls back to `fallback`, and says so).
pub fn init(filter: &str, fallback: &str) {
    let (env_filter, bad) = match tracing_subscriber::EnvFilter::try_new(filter) {
        Ok(f) => (f, None),
        Err(e) => (tracing_subscriber::EnvFilter::new(fallback), Some(e)),
    };
    let installed =
        tracing_subscriber::fmt().with_env_filter(env_filter).with_writer(std::io::stderr).with_ansi(std::io::stderr().is_terminal()).try_init();
    if let (Ok(()), Some(e)) = (installed, bad) {
        tracing::warn!(filter, %e, "invalid log filter; using {fallback:?}");
    }
}
