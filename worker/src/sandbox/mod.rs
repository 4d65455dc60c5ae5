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

use crate::backend::host::usage::SharedUsage;
use crate::backend::HostConfig;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The argument that makes `hip-worker` a session process.
pub const CHILD_ARG: &str = "--session-child";
/// The descriptor by which a session process inherits the shared memory-usage table.
pub const USAGE_FD: i32 = 3;

/// How the worker starts session processes.
#[derive(Debug)]
pub struct SessionProcess {
    /// The `hip-worker` executable (the running one).
    pub exe: PathBuf,
    /// Devices and memory of each session's host backend.
    pub host: HostConfig,
    /// User and group a session process switches to when the worker runs as root.
    pub run_as: Option<(u32, u32)>,
    /// Where session processes get their scratch directories.
    pub scratch_root: PathBuf,
    /// Log filter of the session processes.
    pub log_filter: String,
    /// Device memory in use, worker-wide, counted by every session process.
    pub usage: Arc<SharedUsage>,
    /// Which rows of `usage` live session processes hold.
    rows: Mutex<Vec<bool>>,
}

impl SessionProcess {
    /// Session processes of the running executable for at most `max_sessions` sessions at
    /// once, switching to `user` (a name) when the worker runs as root.
    pub fn new(host: HostConfig, user: &str, log_filter: &str, max_sessions: usize) -> std::io::Result<Self> {
        // SAFETY: getuid has no preconditions.
        let root = unsafe { libc::getuid() } == 0;
        let run_as = if root { Some(confine::lookup_user(user)?) } else { None };
        if run_as.is_some_and(|(uid, _)| uid == 0) {
            return Err(std::io::Error::other(format!("--host-code-user {user} is root: session processes must not run as root")));
        }
        let usage = Arc::new(SharedUsage::create(host.devices as usize, max_sessions)?);
        Ok(Self {
            exe: std::env::current_exe()?,
            host,
            run_as,
            scratch_root: std::env::temp_dir(),
            log_filter: log_filter.to_owned(),
            usage,
            rows: Mutex::new(vec![false; max_sessions]),
        })
    }

    /// Takes a free row of the usage table for a new session process.
    fn claim_row(&self) -> Option<UsageRow<'_>> {
        let mut rows = self.rows.lock().unwrap_or_else(|p| p.into_inner());
        let free = rows.iter().position(|used| !used)?;
        rows[free] = true;
        Some(UsageRow { process: self, row: free + 1 })
    }
}

/// A session process's row of the usage table; what it still holds is given back, and the
/// row freed, when this drops (after the process has ended).
struct UsageRow<'p> {
    process: &'p SessionProcess,
    row: usize,
}

impl Drop for UsageRow<'_> {
    fn drop(&mut self) {
        self.process.usage.release_slot(self.row);
        let mut rows = self.process.rows.lock().unwrap_or_else(|p| p.into_inner());
        rows[self.row - 1] = false;
    }
}
