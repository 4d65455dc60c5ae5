//! The operator's HTTP endpoint (`hip-worker --metrics ADDR:PORT`): `GET /metrics`
//! (Prometheus text format, see [`crate::metrics`]) and `GET /healthz` (200 `ok` when the
//! backend answers `device_count`, else 503).
//!
//! A minimal HTTP/1.1 responder on its own thread over a std `TcpListener`: one request per
//! connection, answered and closed. Meant for a scraper on the operator's network, but it
//! must survive anyone who reaches it: a request head is bounded ([`MAX_REQUEST_BYTES`]),
//! and a connection gets [`REQUEST_DEADLINE`] in all to send it, so a silent or trickling peer
//! holds the endpoint up for at most that long and never touches the protocol port.
//!
//! The loop is ours, the parsing `httparse`'s (hyper's parser), the text `prometheus-client`'s.
//! Not `tiny_http`: that server bounds neither the size of a request head nor the time a peer may
//! take to send it, the two limits this endpoint exists to keep; not hyper or axum: they need an
//! async runtime, which this synchronous worker has nowhere else, for two fixed pages.

use crate::backend::Backend;
use crate::metrics::Metrics;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Largest request head (request line and headers) accepted.
pub const MAX_REQUEST_BYTES: usize = 8 << 10;
/// How long a connection may take to send its request head.
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(5);
/// The port `hip-remote smi` looks at by default (the one the deploy files give `--metrics`).
pub const DEFAULT_METRICS_PORT: u16 = 18516;

/// Parses `--metrics`: `ADDR:PORT`, or a bare `PORT` on loopback.
pub fn metrics_addr(spec: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = spec.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    use std::net::ToSocketAddrs;
    spec.to_socket_addrs()
        .map_err(|e| format!("--metrics {spec:?}: {e} (expected ADDR:PORT or PORT)"))?
        .next()
        .ok_or_else(|| format!("--metrics {spec:?}: no address"))
}

/// The running endpoint; stops when dropped.
pub struct MetricsServer {
    local_addr: SocketAddr,
    stopping: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsServer {
    /// Binds `addr` and serves `metrics` and `backend`'s health on a thread of its own.
    pub fn start(addr: SocketAddr, backend: Arc<dyn Backend>, metrics: Arc<Metrics>) -> std::io::Result<Self> {
        let listener = TcpListener::bind(addr)?;
        let local_addr = listener.local_addr()?;
        let stopping = Arc::new(AtomicBool::new(false));
        let thread = {
            let stopping = Arc::clone(&stopping);
            std::thread::Builder::new().name("hip-metrics-http".into()).spawn(move || {
                for stream in listener.incoming() {
                    if stopping.load(Ordering::SeqCst) {
                        break;
                    }
                    match stream {
                        Ok(stream) => {
                            if let Err(e) = answer(stream, &*backend, &metrics) {
                                tracing::debug!(%e, "metrics request dropped");
                            }
                        }
                        // Out of descriptors and the like: do not spin.
                        Err(_) => std::thread::sleep(Duration::from_millis(50)),
                    }
                }
            })?
        };
        tracing::info!(%local_addr, "metrics endpoint listening (/metrics, /healthz)");
        Ok(Self { local_addr, stopping, thread: Some(thread) })
    }

    /// The bound address (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::SeqCst);
        // Wake the blocking accept; it sees the flag and ends.
        let _ = TcpStream::connect_timeout(&self.local_addr, Duration::from_secs(1));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Reads one request head and answers it.
fn answer(mut stream: TcpStream, backend: &dyn Backend, metrics: &Metrics) -> std::io::Result<()> {
    stream.set_write_timeout(Some(REQUEST_DEADLINE))?;
    let head = read_head(&mut stream)?;
    let refused = head.is_err();
    let (status, content_type, body) = match head {
        Err(status) => (status, "text/plain; charset=utf-8", format!("{status}\n")),
        Ok(head) => route(&head, backend, metrics),
    };
    let response = format!("HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
    stream.write_all(response.as_bytes())?;
    stream.flush()?;
    if refused {
        linger(&mut stream);
    }
    Ok(())
}

/// Closing with unread bytes makes the kernel send a reset, which can destroy the refusal
/// before the peer reads it: stop writing, then discard what the peer still sends, within
/// bounds (bytes and time).
fn linger(stream: &mut TcpStream) {
    const DRAIN_BYTES: usize = 64 << 10;
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let mut sink = [0u8; 4096];
    let mut drained = 0;
    while drained < DRAIN_BYTES {
        match stream.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(n) => drained += n,
        }
    }
}

/// The request's method and path, or the status line refusing it. The head is parsed by
/// `httparse` once its blank line has arrived, within [`MAX_REQUEST_BYTES`] and
/// [`REQUEST_DEADLINE`].
fn read_head(stream: &mut TcpStream) -> std::io::Result<Result<(String, String), &'static str>> {
    /// Header lines parsed; a scraper sends a handful.
    const MAX_HEADERS: usize = 64;
    let deadline = Instant::now() + REQUEST_DEADLINE;
    let mut head = Vec::with_capacity(512);
    let mut chunk = [0u8; 1024];
    loop {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut request = httparse::Request::new(&mut headers);
        match request.parse(&head) {
            Ok(httparse::Status::Complete(_)) => {
                let method = request.method.unwrap_or_default().to_string();
                let path = request.path.unwrap_or_default();
                return Ok(Ok((method, path.split('?').next().unwrap_or_default().to_string())));
            }
            Ok(httparse::Status::Partial) => {}
            Err(httparse::Error::TooManyHeaders) => return Ok(Err("431 Request Header Fields Too Large")),
            Err(_) => return Ok(Err("400 Bad Request")),
        }
        if head.len() > MAX_REQUEST_BYTES {
            return Ok(Err("431 Request Header Fields Too Large"));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(Err("408 Request Timeout"));
        }
        stream.set_read_timeout(Some(left))?;
        let n = match stream.read(&mut chunk) {
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => n,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => return Ok(Err("408 Request Timeout")),
            Err(e) => return Err(e),
        };
        head.extend_from_slice(&chunk[..n]);
    }
}

fn route((method, path): &(String, String), backend: &dyn Backend, metrics: &Metrics) -> (&'static str, &'static str, String) {
    const TEXT: &str = "text/plain; charset=utf-8";
    if method != "GET" {
        return ("405 Method Not Allowed", TEXT, "only GET\n".into());
    }
    match path.as_str() {
        "/metrics" => ("200 OK", prometheus_client::encoding::prometheus_text::CONTENT_TYPE, metrics.render(backend)),
        "/healthz" => match backend.device_count() {
            Ok(_) => ("200 OK", TEXT, "ok\n".into()),
            Err(e) => ("503 Service Unavailable", TEXT, format!("backend not answering: {e}\n")),
        },
        _ => ("404 Not Found", TEXT, "try /metrics or /healthz\n".into()),
    }
}
