//! The process-wide connection: opened lazily on first use, shared by all threads.
//!
//! A worker that cannot be reached, or an environment that is refused (a bad `HIP_REMOTE_*`
//! value), is reported once on stderr with the reason and every call then fails fast with
//! `hipErrorNotInitialized` (no hang, no abort).

use crate::abi::HipError;
use crate::config::ClientConfig;
use crate::conn::Conn;
use client_core::CallError;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};
use transport_core::MemoryRegistry;

/// Pinned host memory (`hipHostMalloc`) as the transport sees it. Kept outside the
/// connection's lock so `hipHostMalloc`/`hipHostFree` never wait for a copy in progress.
enum HostMemory {
    /// No connection yet: the ranges `(address → bytes)` to announce when one opens (RDMA
    /// registers each once and reuses it for every copy).
    Pending(BTreeMap<usize, usize>),
    /// The open connection's registry.
    Registry(Arc<dyn MemoryRegistry>),
    /// The transport keeps no registry, or the connection failed: nothing to announce.
    Unregistered,
}

static HOST_MEMORY: Mutex<HostMemory> = Mutex::new(HostMemory::Pending(BTreeMap::new()));

fn host_memory() -> std::sync::MutexGuard<'static, HostMemory> {
    HOST_MEMORY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Announces pinned host memory (`hipHostMalloc`) to the connection's transport (now, or when
/// the connection opens).
pub fn remember_host_memory(addr: usize, len: usize) {
    let registry = match &mut *host_memory() {
        HostMemory::Pending(ranges) => {
            ranges.insert(addr, len);
            return;
        }
        HostMemory::Registry(r) => r.clone(),
        HostMemory::Unregistered => return,
    };
    registry.remember(addr, len);
}

/// Withdraws pinned host memory from the transport before it is freed.
pub fn forget_host_memory(addr: usize) {
    let registry = match &mut *host_memory() {
        HostMemory::Pending(ranges) => {
            ranges.remove(&addr);
            return;
        }
        HostMemory::Registry(r) => r.clone(),
        HostMemory::Unregistered => return,
    };
    registry.forget(addr);
}

/// Hands the memory announced so far to the new connection's registry (if it has one).
fn open_host_memory(registry: Option<Arc<dyn MemoryRegistry>>) {
    let mut memory = host_memory();
    let pending = match std::mem::replace(&mut *memory, HostMemory::Unregistered) {
        HostMemory::Pending(ranges) => ranges,
        _ => BTreeMap::new(),
    };
    if let Some(registry) = registry {
        // Under the lock, so a concurrent forget cannot overtake the announcement.
        for (addr, len) in pending {
            registry.remember(addr, len);
        }
        *memory = HostMemory::Registry(registry);
    }
}

enum State {
    Unopened,
    Open(Box<Conn>),
    Failed(CallError),
}

struct Remote {
    config: ClientConfig,
    state: Mutex<State>,
}

fn remote() -> &'static Remote {
    static REMOTE: OnceLock<Remote> = OnceLock::new();
    REMOTE.get_or_init(|| match ClientConfig::from_env() {
        Ok(config) => Remote { config, state: Mutex::new(State::Unopened) },
        Err(e) => {
            let error = CallError::new(HipError::NOT_INITIALIZED, format!("environment refused: {e}; no HIP call will run"));
            eprintln!("hip-remote: {}", error.message);
            open_host_memory(None);
            Remote { config: ClientConfig::defaults(), state: Mutex::new(State::Failed(error)) }
        }
    })
}

thread_local! {
    static IN_CALLBACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks the calling thread as the one that runs stream callbacks ([`crate::callbacks`]):
/// HIP calls from it are refused.
pub(crate) fn mark_callback_thread() {
    IN_CALLBACK.with(|c| c.set(true));
}

/// Whether the calling thread is running a stream callback (HIP calls are refused there).
pub fn in_callback() -> bool {
    // `try_with`: a thread-exit destructor may ask after this thread's slot is gone.
    IN_CALLBACK.try_with(|c| c.get()).unwrap_or(false)
}

/// The client configuration.
pub fn config() -> &'static ClientConfig {
    &remote().config
}

/// Runs `f` with the connection, opening it first if needed. A connection that failed in
/// the middle of an exchange is closed and stays failed: its session (and every allocation)
/// is gone on the worker, so silently reconnecting would hand out dangling pointers.
///
/// A stream callback calling HIP fails with `hipErrorIllegalState`: the thread that waits for
/// the callback may hold the connection (CUDA and HIP forbid such calls too).
pub fn with_conn<R>(f: impl FnOnce(&mut Conn) -> Result<R, CallError>) -> Result<R, CallError> {
    if in_callback() {
        return Err(CallError::new(HipError::ILLEGAL_STATE, "a stream callback must not call HIP"));
    }
    let r = remote();
    let mut state = r.state.lock().unwrap_or_else(|p| p.into_inner());
    if let State::Unopened = *state {
        *state = match Conn::open(&r.config) {
            Ok(conn) => {
                open_host_memory(conn.memory_registry());
                State::Open(Box::new(conn))
            }
            Err(e) => {
                eprintln!("hip-remote: {}", e.message);
                open_host_memory(None);
                State::Failed(e)
            }
        };
    }
    match &mut *state {
        State::Open(conn) => {
            let result = f(conn);
            if let Some(notice) = conn.ended_by_worker() {
                // Whatever this call saw after it (the connection closing), the worker's
                // reason is what every call reports from now on, as HIP does after a fault.
                let notice = notice.clone();
                eprintln!("hip-remote: the worker ended the session: {}", notice.message);
                *state = State::Failed(notice.clone());
                return Err(notice);
            }
            if let Err(e) = &result {
                if e.is_lost() {
                    eprintln!("hip-remote: {}", e.message);
                    *state = State::Failed(e.clone());
                }
            }
            result
        }
        State::Failed(e) => Err(e.clone()),
        State::Unopened => unreachable!("opened above"),
    }
}

/// Whether a connection has been opened (used by calls that must not connect, e.g. at exit).
pub fn is_open() -> bool {
    matches!(*remote().state.lock().unwrap_or_else(|p| p.into_inner()), State::Open(_))
}
