//! The RDMA accept loop (feature `rdma`): the same driver loop ([`serve_session`]) as TCP,
//! over `transport-rdma`'s sink and source.

use crate::backend::Backend;
use crate::server::{serve_session, WorkerConfig, MAX_CONNECTIONS};
use crate::session::{ReplySender, Session, WorkerIo};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;
use transport_rdma::engine::Closer;
use transport_rdma::{RdmaConfig, RdmaListener, VerbsFabric};

/// How often the accept loop checks for shutdown.
const ACCEPT_POLL: Duration = Duration::from_millis(100);
/// How long an accepted connection may take to become established.
const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(10);

type Live = Arc<Mutex<HashMap<u64, Closer<VerbsFabric>>>>;

/// A running RDMA listener and its sessions.
pub struct RdmaWorker {
    local_addr: SocketAddr,
    shutdown: Arc<AtomicBool>,
    live: Live,
    accept_thread: Option<JoinHandle<()>>,
    conn_threads: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl RdmaWorker {
    /// Listens on `addr` (an address of an RDMA device's interface) and serves in
    /// background threads, one per connection, like the TCP worker.
    pub fn start(addr: &str, backend: Arc<dyn Backend>, config: WorkerConfig) -> std::io::Result<Self> {
        // The worker waits for requests without a deadline (as on TCP); dead peers are found
        // by DISCONNECTED events, failed completions and keepalive probes.
        let rdma = RdmaConfig { io_timeout: None, ..RdmaConfig::from_env() };
        let listener = RdmaListener::bind(addr, &rdma)?;
        let local_addr = listener.local_addr()?;
        let shutdown = Arc::new(AtomicBool::new(false));
        let live: Live = Arc::default();
        let conn_threads: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let accept_thread = {
            let (shutdown, live, conn_threads) = (shutdown.clone(), live.clone(), conn_threads.clone());
            let config = Arc::new(config);
            std::thread::Builder::new()
                .name("hip-worker-rdma-accept".into())
                .spawn(move || accept_loop(listener, rdma, backend, config, shutdown, live, conn_threads))?
        };
        tracing::info!(%local_addr, "hip-worker listening for RDMA");
        Ok(Self { local_addr, shutdown, live, accept_thread: Some(accept_thread), conn_threads })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Live RDMA connections.
    pub fn connection_count(&self) -> usize {
        self.live.lock().map(|l| l.len()).unwrap_or(0)
    }

    /// Stops accepting, ends every connection (freeing its session) and waits for the threads.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.shutdown.store(true, Ordering::SeqCst);
        if let Some(t) = self.accept_thread.take() {
            let _ = t.join();
        }
        for closer in self.live.lock().unwrap_or_else(|p| p.into_inner()).values() {
            closer.shutdown();
        }
        let threads = std::mem::take(&mut *self.conn_threads.lock().unwrap_or_else(|p| p.into_inner()));
        for t in threads {
            let _ = t.join();
        }
    }
}

impl Drop for RdmaWorker {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(
    listener: RdmaListener,
    rdma: RdmaConfig,
    backend: Arc<dyn Backend>,
    config: Arc<WorkerConfig>,
    shutdown: Arc<AtomicBool>,
    live: Live,
    conn_threads: Arc<Mutex<Vec<JoinHandle<()>>>>,
) {
    static NEXT_CONN: AtomicU64 = AtomicU64::new(1);
    while !shutdown.load(Ordering::SeqCst) {
        let incoming = match listener.accept(ACCEPT_POLL) {
            Ok(Some(incoming)) => incoming,
            Ok(None) => continue,
            Err(e) => {
                tracing::warn!(%e, "RDMA accept failed");
                continue;
            }
        };
        if live.lock().map(|l| l.len()).unwrap_or(0) >= MAX_CONNECTIONS {
            tracing::warn!("RDMA connection refused: {MAX_CONNECTIONS} connections already");
            drop(incoming);
            continue;
        }
        let conn_id = NEXT_CONN.fetch_add(1, Ordering::Relaxed);
        let (backend, config, live) = (backend.clone(), config.clone(), live.clone());
        let spawned = std::thread::Builder::new().name(format!("hip-rdma-session-{conn_id}")).spawn(move || {
            let (sink, source) = match incoming.establish(&rdma, ESTABLISH_TIMEOUT) {
                Ok(halves) => halves,
                Err(e) => {
                    tracing::info!(conn_id, %e, "RDMA connection not established");
                    return;
                }
            };
            let peer = source.fabric().peer_addr();
            live.lock().unwrap_or_else(|p| p.into_inner()).insert(conn_id, source.closer());
            tracing::debug!(?peer, conn_id, "RDMA connection accepted");
            let replies = ReplySender::new(Box::new(sink));
            let mut io = WorkerIo::new(Box::new(source), replies.clone());
            let mut session = Session::new(backend, Arc::new(config.session.clone()));
            let result = serve_session(&mut session, &mut io);
            let id = session.id();
            drop(session);
            replies.close();
            match result {
                Ok(()) => tracing::info!(?peer, conn_id, session = id, "RDMA connection ended; session freed"),
                Err(e) => tracing::info!(?peer, conn_id, session = id, %e, "RDMA connection ended; session freed"),
            }
            live.lock().unwrap_or_else(|p| p.into_inner()).remove(&conn_id);
        });
        match spawned {
            Ok(handle) => {
                let mut threads = conn_threads.lock().unwrap_or_else(|p| p.into_inner());
                threads.retain(|t| !t.is_finished());
                threads.push(handle);
            }
            Err(e) => tracing::error!(%e, "could not spawn an RDMA session thread"),
        }
    }
}
