//! Session processes: with host code allowed, each session runs in a process of its own that
//! holds no rights the session lacks (`docs/HOST_MODULES.md`).
//!
//! The worker does the handshake itself — tokens and the token store never reach a session
//! process — then starts `hip-worker --session-child` ([`child::main`]) with one end of a
//! Unix socket pair as its stdin, and relays frames between the client's connection and
//! that link ([`relay::relay`]), over the transport traits, so any transport (TCP, TLS,
//! RDMA) works. The session process confines itself ([`confine`]) before it builds its own
//! host backend and serves the session; a crash in client code ends that process and that
//! session only.

pub mod child;
pub mod confine;
pub mod link;
pub mod relay;

use crate::backend::HostConfig;
use std::path::PathBuf;

/// The argument that makes `hip-worker` a session process.
pub const CHILD_ARG: &str = "--session-child";

/// How the worker starts session processes.
#[derive(Debug, Clone)]
pub struct SessionProcess {
    /// The `hip-worker` executable (the running one).
    pub exe: PathBuf,
    /// Devices and memory of each session's host backend (its memory is the session's own).
    pub host: HostConfig,
    /// User and group a session process switches to when the worker runs as root.
    pub run_as: Option<(u32, u32)>,
    /// Where session processes get their scratch directories.
    pub scratch_root: PathBuf,
    /// Log filter of the session processes.
    pub log_filter: String,
}

impl SessionProcess {
    /// Session processes of the running executable, switching to `user` (a name) when the
    /// worker runs as root.
    pub fn new(host: HostConfig, user: &str, log_filter: &str) -> std::io::Result<Self> {
        // SAFETY: getuid has no preconditions.
        let root = unsafe { libc::getuid() } == 0;
        let run_as = if root { Some(confine::lookup_user(user)?) } else { None };
        if run_as == Some((0, 0)) {
            return Err(std::io::Error::other(format!("--host-code-user {user} is root: session processes must not run as root")));
        }
        Ok(Self { exe: std::env::current_exe()?, host, run_as, scratch_root: std::env::temp_dir(), log_filter: log_filter.to_owned() })
    }
}
