//! The version every hip-remote program and library reports (`hip-remote --version`,
//! `hip-worker --version`, the worker's WELCOME log and `hip_worker_info`, version-mismatch
//! errors): the workspace version and the git commit built, e.g. `0.1.0 (1a2b3c4)`.
#![no_std]

/// The git commit built (`git rev-parse --short HEAD`; `HIP_REMOTE_GIT_COMMIT` overrides it,
/// for builds from a source archive), "unknown" when neither is there.
pub const COMMIT: &str = env!("HIP_REMOTE_GIT_COMMIT");

/// `VERSION (COMMIT)`.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("HIP_REMOTE_GIT_COMMIT"), ")");

#[cfg(test)]
mod tests {
    extern crate std;

    #[test]
    fn version_names_the_commit() {
        assert_eq!(super::VERSION, std::format!("{} ({})", env!("CARGO_PKG_VERSION"), super::COMMIT));
        let looks_like_a_commit = super::COMMIT.len() >= 7 && super::COMMIT.chars().all(|c| c.is_ascii_hexdigit());
        assert!(looks_like_a_commit || super::COMMIT == "unknown", "{}", super::COMMIT);
    }
}
