//! Accepting connections and driving sessions.
//!
//! One thread per connection runs [`serve_connection`]: it reads a frame head, places the
//! bulk section (straight into device memory for host-to-device copies, into a reusable
//! buffer otherwise), parses the request, dispatches it to the session and sends the reply.
//! A malformed frame gets an error reply; a frame whose header cannot be trusted also ends
//! the connection, since the byte stream cannot be resynchronised. Nothing a client sends
//! can take down the worker or another session.

use crate::backend::Backend;
use crate::session::{Failure, ReplySender, Session, SessionConfig, WorkerIo};
use proto_core::opcode::dispatch;
use proto_core::{DecodeError, Flags, Opcode, Request, Status};
use std::collections::HashMap;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;
use transport_tcp::{TcpConfig, TransportError};

/// How often the accept loop checks for shutdown.
const ACCEPT_POLL: Duration = Duration::from_millis(50);
/// Most concurrent connections; more are refused with an error reply.
pub const MAX_CONNECTIONS: usize = 1024;

/// Worker-wide configuration.
#[derive(Debug, Clone, Default)]
pub struct WorkerConfig {
    /// Session settings.
    pub session: SessionConfig,
    /// Socket settings for accepted connections.
    pub tcp: TcpConfig,
}

/// A running worker: its listener thread and live connections.
pub struct Worker {
    local_addr: SocketAddr,
    shutdown: Arc<AtomicBool>,
    connections: Arc<Mutex<HashMap<u64, TcpStream>>>,
    accept_thread: Option<JoinHandle<()>>,
    conn_threads: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Worker {
    /// Binds `addr` and starts serving in background threads.
    pub fn start(addr: &str, backend: Arc<dyn Backend>, config: WorkerConfig) -> std::io::Result<Self> {
        let listener = transport_tcp::listen(addr)?;
        Self::start_on(listener, backend, config)
    }

    /// Serves on an already bound listener.
    pub fn start_on(listener: TcpListener, backend: Arc<dyn Backend>, config: WorkerConfig) -> std::io::Result<Self> {
        listener.set_nonblocking(true)?;
        let local_addr = listener.local_addr()?;
        let shutdown = Arc::new(AtomicBool::new(false));
        let connections: Arc<Mutex<HashMap<u64, TcpStream>>> = Arc::default();
        let conn_threads: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let accept_thread = {
            let (shutdown, connections, conn_threads) = (shutdown.clone(), connections.clone(), conn_threads.clone());
            let config = Arc::new(config);
            std::thread::Builder::new().name("hip-worker-accept".into()).spawn(move || {
                accept_loop(listener, backend, config, shutdown, connections, conn_threads)
            })?
        };
        tracing::info!(%local_addr, "hip-worker listening");
        Ok(Self { local_addr, shutdown, connections, accept_thread: Some(accept_thread), conn_threads })
    }

    /// The bound address (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Number of live connections.
    pub fn connection_count(&self) -> usize {
        self.connections.lock().map(|c| c.len()).unwrap_or(0)
    }

    /// Stops accepting, lets every session finish the request it is executing, closes the
    /// connections (freeing each session's resources) and waits for all threads.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.shutdown.store(true, Ordering::SeqCst);
        if let Some(t) = self.accept_thread.take() {
            let _ = t.join();
        }
        // Reading stops at the next frame boundary; requests in flight complete first.
        if let Ok(conns) = self.connections.lock() {
            for stream in conns.values() {
                let _ = stream.shutdown(Shutdown::Read);
            }
        }
        let threads = std::mem::take(&mut *self.conn_threads.lock().unwrap_or_else(|p| p.into_inner()));
        for t in threads {
            let _ = t.join();
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(
    listener: TcpListener,
    backend: Arc<dyn Backend>,
    config: Arc<WorkerConfig>,
    shutdown: Arc<AtomicBool>,
    connections: Arc<Mutex<HashMap<u64, TcpStream>>>,
    conn_threads: Arc<Mutex<Vec<JoinHandle<()>>>>,
) {
    static NEXT_CONN: AtomicU64 = AtomicU64::new(1);
    while !shutdown.load(Ordering::SeqCst) {
        let (stream, peer) = match listener.accept() {
            Ok(conn) => conn,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(ACCEPT_POLL);
                continue;
            }
            Err(e) => {
                tracing::warn!(%e, "accept failed");
                std::thread::sleep(ACCEPT_POLL);
                continue;
            }
        };
        let _ = stream.set_nonblocking(false);
        let conn_id = NEXT_CONN.fetch_add(1, Ordering::Relaxed);
        {
            let mut conns = connections.lock().unwrap_or_else(|p| p.into_inner());
            if conns.len() >= MAX_CONNECTIONS {
                tracing::warn!(%peer, "connection refused: {MAX_CONNECTIONS} connections already");
                drop(stream);
                continue;
            }
            if let Ok(clone) = stream.try_clone() {
                conns.insert(conn_id, clone);
            }
        }
        let (backend, config, connections) = (backend.clone(), config.clone(), connections.clone());
        let spawned = std::thread::Builder::new().name(format!("hip-session-{conn_id}")).spawn(move || {
            tracing::debug!(%peer, conn_id, "connection accepted");
            if let Err(e) = serve_connection(stream, backend, &config) {
                tracing::info!(%peer, conn_id, %e, "connection ended");
            }
            connections.lock().unwrap_or_else(|p| p.into_inner()).remove(&conn_id);
        });
        match spawned {
            Ok(handle) => {
                let mut threads = conn_threads.lock().unwrap_or_else(|p| p.into_inner());
                threads.retain(|t| !t.is_finished());
                threads.push(handle);
            }
            Err(e) => tracing::error!(%e, "could not spawn a session thread"),
        }
    }
}

/// Serves one connection until the client leaves, the connection fails, or the worker stops.
/// The session (and everything it allocated) is dropped on return, whatever the reason.
pub fn serve_connection(stream: TcpStream, backend: Arc<dyn Backend>, config: &WorkerConfig) -> Result<(), TransportError> {
    let (sink, source) = transport_tcp::tcp::split(stream, &config.tcp)?;
    let replies = ReplySender::new(Box::new(sink));
    let mut io = WorkerIo::new(Box::new(source), replies.clone());
    let mut session = Session::new(backend, Arc::new(config.session.clone()));
    let result = serve_session(&mut session, &mut io);
    // Free the session's resources (draining its streams, whose callbacks may still queue
    // replies) before the writer is told to finish.
    drop(session);
    replies.close();
    result
}

/// The request loop over any transport.
pub fn serve_session(session: &mut Session, io: &mut WorkerIo) -> Result<(), TransportError> {
    let mut control = Vec::new();
    let mut bulk = Vec::new();
    loop {
        let (header, opcode) = match io.source.recv_head() {
            Ok(head) => {
                control.clear();
                control.extend_from_slice(head.control);
                (head.header, Opcode::from_u16(head.header.opcode))
            }
            Err(TransportError::Closed) => return Ok(()),
            Err(TransportError::Malformed(e)) => {
                // The header itself is untrustworthy: say why, then close.
                let status = match e {
                    DecodeError::UnsupportedVersion { .. } => Status::UNSUPPORTED_VERSION,
                    DecodeError::TooLarge { .. } => Status::TOO_LARGE,
                    _ => Status::MALFORMED_FRAME,
                };
                let _ = io.replies.send_error(0, 0, status, &format!("frame refused: {e}"));
                return Err(TransportError::Malformed(e));
            }
            Err(e) => return Err(e),
        };
        let request_id = header.request_id;
        let no_reply = header.flags.contains(Flags::NO_REPLY);
        let reply_error = |io: &mut WorkerIo, status: Status, message: &str| -> Result<(), TransportError> {
            if no_reply {
                io.replies.defer(status);
                Ok(())
            } else {
                io.replies.send_error(request_id, header.opcode, status, message)
            }
        };
        let Some(opcode) = opcode else {
            reply_error(io, Status::UNKNOWN_OPCODE, &format!("unknown opcode {:#06x}", header.opcode))?;
            continue;
        };
        if header.flags.contains(Flags::RESPONSE) || header.flags.contains(Flags::ERROR) {
            reply_error(io, Status::MALFORMED_FRAME, "a response frame was sent to the worker")?;
            continue;
        }
        if !session.greeted() && opcode != Opcode::Hello {
            io.replies.send_error(request_id, header.opcode, Status::HELLO_REQUIRED, "the first request must be HELLO")?;
            return Ok(());
        }
        // Bulk placement: copies to the device read their bulk in the handler (straight into
        // device memory); any other bulk section is buffered here.
        let streamed = opcode == Opcode::MemcpyHtoD;
        bulk.clear();
        if !streamed && header.bulk_len > 0 {
            bulk.resize(header.bulk_len as usize, 0);
            io.source.recv_bulk(&mut bulk)?;
        }
        let request = match Request::parse(header.opcode, &control, &bulk) {
            Ok(request) => request,
            Err(e) => {
                tracing::debug!(%opcode, %e, "malformed request");
                reply_error(io, Status::MALFORMED_FRAME, &format!("{opcode}: {e}"))?;
                continue;
            }
        };
        io.request_id = request_id;
        io.opcode = opcode;
        io.no_reply = no_reply;
        tracing::trace!(session = session.id(), request_id, %opcode, no_reply, "request");
        match dispatch(session, io, request) {
            Ok(response) if !no_reply => io.replies.send_response(request_id, &response)?,
            Ok(_) | Err(Failure::ReplyDeferred) => {}
            Err(Failure::Status(status, message)) => {
                tracing::debug!(session = session.id(), %opcode, ?status, %message, "request failed");
                if opcode == Opcode::Hello && !session.greeted() {
                    // No session was established (version, authentication): refuse and close.
                    io.replies.send_error(request_id, header.opcode, status, &message)?;
                    return Ok(());
                }
                reply_error(io, status, &message)?;
            }
        }
        if io.close_after_reply {
            return Ok(());
        }
    }
}
