//! Accepting connections and driving sessions.
//!
//! [`Server`] runs the accept loop over any [`Listener`] (TCP: [`Worker`]; RDMA:
//! `rdma::RdmaWorker`). One thread per connection runs its session through
//! [`driver::serve`].

use crate::backend::Backend;
use crate::config::WorkerConfig;
use crate::driver::{self, ReplyWriter};
use crate::listener::{Accepted, Connection, Hangup, Listener};
use crate::metrics::Refusal;
use crate::session::Session;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;
use transport_core::mem::{MemSink, MemSource};
use transport_core::{FrameSink, FrameSource, TransportError};

/// How often the accept loop checks for shutdown.
const ACCEPT_POLL: Duration = Duration::from_millis(50);
/// Most concurrent connections; more are refused with an error reply.
pub const MAX_CONNECTIONS: usize = 1024;

/// The TCP worker.
pub type Worker = Server<TcpListener>;

impl Worker {
    /// Binds `addr` and starts serving in background threads.
    pub fn start(addr: &str, backend: Arc<dyn Backend>, config: WorkerConfig) -> std::io::Result<Self> {
        let listener = transport_tcp::listen(addr)?;
        Self::start_on(listener, backend, config)
    }

    /// Serves on an already bound listener.
    pub fn start_on(listener: TcpListener, backend: Arc<dyn Backend>, config: WorkerConfig) -> std::io::Result<Self> {
        listener.set_nonblocking(true)?;
        Self::spawn(listener, backend, config)
    }
}

/// A running worker on one listener: its accept thread and one thread per connection.
pub struct Server<L: Listener> {
    local_addr: SocketAddr,
    connections: Arc<Connections>,
    accept_thread: Option<JoinHandle<()>>,
    _listener: PhantomData<fn() -> L>,
}

impl<L: Listener> Server<L> {
    /// Starts the accept thread on `listener`, which must honour the poll timeout.
    pub(crate) fn spawn(listener: L, backend: Arc<dyn Backend>, config: WorkerConfig) -> std::io::Result<Self> {
        let local_addr = listener.local_addr()?;
        let connections = Arc::new(Connections::default());
        let accept_thread = {
            let connections = connections.clone();
            let config = Arc::new(config);
            std::thread::Builder::new()
                .name(format!("hip-{}-accept", L::TRANSPORT.to_ascii_lowercase()))
                .spawn(move || accept_loop(listener, backend, config, connections))?
        };
        tracing::info!(%local_addr, transport = L::TRANSPORT, "hip-worker listening");
        Ok(Self { local_addr, connections, accept_thread: Some(accept_thread), _listener: PhantomData })
    }

    /// The bound address (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops accepting, lets every session finish the request it is executing, closes the
    /// connections (freeing each session's resources) and waits for all threads.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.connections.stopping.store(true, Ordering::SeqCst);
        if let Some(t) = self.accept_thread.take() {
            let _ = t.join();
        }
        for hangup in self.connections.live().values().flatten() {
            hangup.hang_up();
        }
        let threads = std::mem::take(&mut *self.connections.threads.lock().unwrap_or_else(|p| p.into_inner()));
        for t in threads {
            let _ = t.join();
        }
    }
}

impl<L: Listener> Drop for Server<L> {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Connection bookkeeping shared by the accept loop, the connection threads and `stop`.
#[derive(Default)]
struct Connections {
    stopping: AtomicBool,
    /// Every connection with a thread; `None` until it is established.
    live: Mutex<HashMap<u64, Option<Box<dyn Hangup>>>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Connections {
    fn live(&self) -> MutexGuard<'_, HashMap<u64, Option<Box<dyn Hangup>>>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a slot for a new connection, unless [`MAX_CONNECTIONS`] are live.
    fn reserve(self: &Arc<Self>, conn_id: u64) -> Option<Slot> {
        let mut live = self.live();
        if live.len() >= MAX_CONNECTIONS {
            return None;
        }
        live.insert(conn_id, None);
        Some(Slot { connections: self.clone(), conn_id })
    }

    fn add_thread(&self, handle: JoinHandle<()>) {
        let mut threads = self.threads.lock().unwrap_or_else(|p| p.into_inner());
        threads.retain(|t| !t.is_finished());
        threads.push(handle);
    }
}

/// A connection's place in [`Connections`], given back when dropped.
struct Slot {
    connections: Arc<Connections>,
    conn_id: u64,
}

impl Slot {
    /// Makes the connection reachable by `stop`. False when the worker is already stopping
    /// (`stop` may have hung up the others already, so this one must not start).
    fn register(&self, hangup: Box<dyn Hangup>) -> bool {
        let mut live = self.connections.live();
        if self.connections.stopping.load(Ordering::SeqCst) {
            return false;
        }
        live.insert(self.conn_id, Some(hangup));
        true
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.connections.live().remove(&self.conn_id);
    }
}

fn accept_loop<L: Listener>(listener: L, backend: Arc<dyn Backend>, config: Arc<WorkerConfig>, connections: Arc<Connections>) {
    static NEXT_CONN: AtomicU64 = AtomicU64::new(1);
    let transport = L::TRANSPORT;
    while !connections.stopping.load(Ordering::SeqCst) {
        let accepted = match listener.poll_accept(ACCEPT_POLL) {
            Ok(Some(accepted)) => accepted,
            Ok(None) => continue,
            Err(e) => {
                tracing::warn!(transport, %e, "accept failed");
                // A lasting error (out of descriptors) must not spin.
                std::thread::sleep(ACCEPT_POLL);
                continue;
            }
        };
        let conn_id = NEXT_CONN.fetch_add(1, Ordering::Relaxed);
        let Some(slot) = connections.reserve(conn_id) else {
            config.session.metrics.refused(Refusal::ConnectionLimit);
            tracing::warn!(transport, peer = ?accepted.peer(), "connection refused: {MAX_CONNECTIONS} connections already");
            continue;
        };
        let (backend, config) = (backend.clone(), config.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("hip-{}-session-{conn_id}", transport.to_ascii_lowercase()))
            .spawn(move || serve_accepted::<L>(accepted, slot, backend, &config));
        match spawned {
            Ok(handle) => connections.add_thread(handle),
            Err(e) => tracing::error!(transport, %e, "could not spawn a session thread"),
        }
    }
}

/// A connection thread: establishes the connection, serves its session, frees its slot.
fn serve_accepted<L: Listener>(accepted: L::Accepted, slot: Slot, backend: Arc<dyn Backend>, config: &WorkerConfig) {
    let (transport, conn_id) = (L::TRANSPORT, slot.conn_id);
    let Connection { sink, source, hangup, peer } = match accepted.establish(config) {
        Ok(connection) => connection,
        Err(e) => {
            tracing::info!(transport, conn_id, %e, "connection not established");
            return;
        }
    };
    if !slot.register(hangup) {
        return;
    }
    // Every log line of the session names its peer (refused logins above all).
    let span = tracing::info_span!("session", conn_id, peer = %peer.map_or_else(|| "unknown".to_string(), |p| p.to_string()));
    let _in_span = span.enter();
    tracing::debug!(transport, "connection accepted");
    let (session, result) = run_session(sink, source, backend, config);
    match result {
        Ok(()) => tracing::info!(session, "{transport} connection ended; session freed"),
        Err(e) => tracing::info!(session, %e, "{transport} connection ended; session freed"),
    }
}

/// Runs a session over `sink` and `source` and frees it; returns its id and how it ended.
fn run_session(
    sink: impl FrameSink + 'static,
    mut source: impl FrameSource + 'static,
    backend: Arc<dyn Backend>,
    config: &WorkerConfig,
) -> (u64, Result<(), TransportError>) {
    let registry = sink.memory_registry();
    let mut session = Session::new(backend, Arc::new(config.session.clone()));
    session.set_memory_registry(registry);
    let late = session.late_replies();
    let replies = ReplyWriter::start(Box::new(sink), Arc::clone(&late), session.metrics());
    let result = driver::serve(&mut session, &mut source, &replies);
    let id = session.id();
    // Free the session's resources (draining its streams, whose callbacks may still queue
    // replies) before the writer is told to finish.
    drop(session);
    late.close();
    (id, result)
}

/// Serves one session over an in-memory connection, in a thread of its own: the same driver
/// and session as over TCP, without a socket (tests run client and worker as an in-memory
/// pair). Returns the client's ends; the thread ends, freeing the session, once the client
/// drops them or says GOODBYE.
pub fn serve_in_memory(backend: Arc<dyn Backend>, config: WorkerConfig) -> std::io::Result<(MemSink, MemSource, JoinHandle<()>)> {
    let ((client_sink, client_source), (sink, source)) = transport_core::mem::duplex();
    let thread = std::thread::Builder::new().name("hip-mem-session".into()).spawn(move || {
        let (session, result) = run_session(sink, source, backend, &config);
        match result {
            Ok(()) => tracing::info!(session, "in-memory connection ended; session freed"),
            Err(e) => tracing::info!(session, %e, "in-memory connection ended; session freed"),
        }
    })?;
    Ok((client_sink, client_source, thread))
}
