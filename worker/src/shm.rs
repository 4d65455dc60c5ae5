//! The same-host listener (Linux): the same accept loop ([`Server`]) and driver loop as TCP,
//! over `transport-shm`'s rings. Clients on this machine connect to a Unix socket
//! (`--shm-socket`, mode 0600) and then exchange frames through shared memory; they
//! authenticate as TCP clients do.

use crate::backend::Backend;
use crate::config::WorkerConfig;
use crate::listener::{Accepted, Connection, Hangup, Listener};
use crate::sandbox::handover::{Handed, Terms};
use crate::server::Server;
use crate::session::shared_host::DescriptorSender;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use transport_shm::{FdChannel, ShmAccepted, ShmConfig, ShmHangup, ShmListener, ShmSink, ShmSource};

/// The same-host worker.
pub type ShmWorker = Server<ShmAcceptor>;

impl ShmWorker {
    /// Listens on the Unix socket `path` and serves in background threads, one per
    /// connection, like the TCP worker.
    pub fn start_shm(path: &Path, backend: Arc<dyn Backend>, config: WorkerConfig) -> io::Result<Self> {
        let listener = ShmListener::bind(path)?;
        Self::spawn(ShmAcceptor { listener }, backend, config)
    }
}

/// The default socket of a worker whose TCP listener has port `port`:
/// `$XDG_RUNTIME_DIR/hip-remote-PORT.sock` when that directory is set (private to its user),
/// else `/tmp/hip-remote-PORT.sock` (the socket itself is mode 0600 in either place).
pub fn default_socket_path(port: u16) -> PathBuf {
    let dir = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from).filter(|d| d.is_dir()).unwrap_or_else(std::env::temp_dir);
    dir.join(format!("hip-remote-{port}.sock"))
}

/// A bound Unix socket waiting for same-host clients.
pub struct ShmAcceptor {
    listener: ShmListener,
}

impl Listener for ShmAcceptor {
    const TRANSPORT: &'static str = "SHM";
    const HANDS_OVER: bool = true;
    type Accepted = ShmAccepted;

    /// A Unix socket has no IP address: 127.0.0.1 port 0 stands for "this machine" (the
    /// socket's path is what clients use).
    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
    }

    fn poll_accept(&self, _timeout: Duration) -> io::Result<Option<ShmAccepted>> {
        match self.listener.accept() {
            Ok(accepted) => Ok(Some(accepted)),
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn waker(&self) -> io::Result<Option<Box<dyn Fn() + Send>>> {
        let path = self.listener.path().to_path_buf();
        Ok(Some(Box::new(move || {
            if let Err(e) = ShmListener::wake(&path) {
                tracing::warn!(path = %path.display(), %e, "cannot wake the shared-memory accept loop; it stops at the next connection");
            }
        })))
    }
}

impl Accepted for ShmAccepted {
    type Sink = ShmSink;
    type Source = ShmSource;

    fn establish(self, config: &WorkerConfig) -> io::Result<Connection<ShmSink, ShmSource>> {
        // The worker waits for requests without a deadline (as on TCP): a client that dies
        // closes its socket, which ends a blocked read at once.
        let shm = ShmConfig { spin: config.tcp.spin, stall_timeout: config.tcp.io_timeout, ..ShmConfig::default() };
        let (sink, source, hangup, descriptors) = ShmAccepted::establish_with_fds(self, &shm)?;
        Ok(Connection { sink, source, hangup: Box::new(hangup), peer: None, descriptors: Some(Arc::new(Descriptors(descriptors))) })
    }

    /// Copies of the rings' memfd, both doorbell sockets and the descriptor channel. The
    /// worker keeps its copies of the doorbell sockets (its hangup) until the process ends,
    /// then closes them: the client sees its peer gone.
    fn hand_over(source: ShmSource, _peer: Option<SocketAddr>, terms: Terms) -> Result<Handed, ShmSource> {
        match source.hand_over() {
            Ok(parts) => Ok(Handed::Shm { parts, terms }),
            Err(e) => {
                tracing::warn!(%e, "cannot hand the same-host connection over; relaying it");
                Err(source)
            }
        }
    }
}

/// The connection's descriptor channel, for shared host memory.
pub(crate) struct Descriptors(pub(crate) FdChannel);

impl DescriptorSender for Descriptors {
    fn send_descriptor(&self, tag: u64, fd: std::os::fd::BorrowedFd<'_>) -> io::Result<()> {
        self.0.send(tag, fd)
    }
}

impl Hangup for ShmHangup {
    fn hang_up(&self) {
        ShmHangup::hang_up(self);
    }
}
