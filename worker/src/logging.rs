//! Log output shared by `hip-worker` and `hip-remote`: to stderr, with colour codes only
//! when stderr is a terminal (under systemd, in a container or redirected to a file, escape
//! sequences would be noise in the journal).

use std::io::IsTerminal;

/// Installs the global subscriber with `filter` (tracing's `EnvFilter` syntax). A filter that
/// does not parse is refused, naming where it came from (`source`), rather than silently
/// replaced.
pub fn init(filter: &str, source: &str) -> Result<(), String> {
    let env_filter = tracing_subscriber::EnvFilter::try_new(filter).map_err(|e| format!("log filter {filter:?} ({source}) is refused: {e}"))?;
    // A second install (tests, embedding) keeps the first subscriber.
    let _ = tracing_subscriber::fmt().with_env_filter(env_filter).with_writer(std::io::stderr).with_ansi(std::io::stderr().is_terminal()).try_init();
    Ok(())
}
