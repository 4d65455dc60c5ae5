//! Connections over the shared rings: the worker's Unix-socket listener, the client's
//! connect, and the frame sink and source both sides use.
//!
//! Bootstrap: the client connects to the worker's Unix socket; the worker creates the sealed
//! memfd holding both rings and a second socket pair, and passes the memfd and one end of the
//! pair with `SCM_RIGHTS`. The first socket then carries "data written" doorbells (each side
//! reads only its peer's), the second "space freed" doorbells: each wait has its own socket,
//! so a reader never swallows a doorbell meant for the writer of the same process.

use crate::fds::FdChannel;
use crate::ring::{self, Consumer, Direction, Producer};
use crate::sys::{self, Mapping};
use proto_core::header::HEADER_LEN;
use proto_core::{DeframedHead, FrameDecoder};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use transport_core::{Connected, Connector, FrameSink, FrameSource, Received, TransportError};

/// What the worker's bootstrap message says (with the memfd and the doorbell socket).
const BOOTSTRAP: &[u8; 8] = b"HIPSHM01";
/// Permissions of the worker's socket: only its own user may connect (the session still
/// authenticates with the token, as over TCP).
pub const SOCKET_MODE: u32 = 0o600;
/// The name of the rings' memfd (seen in `/proc/PID/maps` as `memfd:hip-remote-rings`).
pub const RINGS_MEMFD_NAME: &std::ffi::CStr = c"hip-remote-rings";

/// Settings of one shared-memory connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShmConfig {
    /// How long a waiting side polls the ring before it sleeps on its doorbell socket
    /// (the TCP reader's spin: `HIP_REMOTE_TCP_SPIN_US`).
    pub spin: Duration,
    /// Longest silence accepted in the middle of a frame, or while waiting for ring space
    /// (`None`: no limit; a dead peer is noticed by its socket closing in any case).
    pub stall_timeout: Option<Duration>,
    /// How long the client waits for the worker's bootstrap message.
    pub connect_timeout: Duration,
}

impl Default for ShmConfig {
    fn default() -> Self {
        Self { spin: transport_core::config::DEFAULT_SPIN, stall_timeout: None, connect_timeout: transport_core::config::DEFAULT_CONNECT_TIMEOUT }
    }
}

/// The two doorbell sockets of one side.
#[derive(Debug)]
struct Bells {
    /// Carries "data written" doorbells (and the bootstrap).
    data: UnixStream,
    /// Carries "space freed" doorbells.
    space: UnixStream,
    /// The worker's side: the rings' memfd and its end of the descriptor channel, kept so
    /// the connection can be handed to a session process ([`ShmSource::hand_over`]).
    kept: Option<(OwnedFd, UnixStream)>,
}

/// How a wait ended.
enum Wake {
    Ready,
    TimedOut,
    PeerGone,
}

/// Spins on `ready` for `spin`, then sleeps on `bell` (with `set_sleeping` raised, and
/// `ready` re-checked after raising it, so a doorbell is never missed) until `ready`, the
/// peer closes its end, or `timeout` passes.
fn wait_on(
    bell: BorrowedFd<'_>,
    set_sleeping: &dyn Fn(bool),
    ready: &dyn Fn() -> io::Result<bool>,
    spin: Duration,
    timeout: Option<Duration>,
) -> io::Result<Wake> {
    let started = Instant::now();
    let spin = timeout.map_or(spin, |t| spin.min(t));
    let mut spins = 0u32;
    while started.elapsed() < spin {
        if ready()? {
            return Ok(Wake::Ready);
        }
        spins = spins.wrapping_add(1);
        // Now and then ask the socket too: a peer that died ends even a long spin.
        if spins.is_multiple_of(PEER_CHECK_EVERY) && sys::poll_readable(bell, Some(Duration::ZERO))? && sys::drain_doorbells(bell)? {
            return Ok(if ready()? { Wake::Ready } else { Wake::PeerGone });
        }
        std::hint::spin_loop();
        std::thread::yield_now();
    }
    loop {
        set_sleeping(true);
        if ready()? {
            set_sleeping(false);
            return Ok(Wake::Ready);
        }
        let left = timeout.map(|t| t.saturating_sub(started.elapsed()));
        let woken = sys::poll_readable(bell, left);
        set_sleeping(false);
        if woken? && sys::drain_doorbells(bell)? {
            return Ok(if ready()? { Wake::Ready } else { Wake::PeerGone });
        }
        if ready()? {
            return Ok(Wake::Ready);
        }
        if left.is_some_and(|l| l.is_zero()) {
            return Ok(Wake::TimedOut);
        }
    }
}

/// Spin iterations between two looks at the doorbell socket for a dead peer.
const PEER_CHECK_EVERY: u32 = 64;

fn stalled(what: &str, after: Option<Duration>) -> TransportError {
    TransportError::Io(io::Error::new(io::ErrorKind::TimedOut, format!("shared-memory peer silent for {after:?} {what}")))
}

/// Sending half: writes frames into the outgoing ring.
#[derive(Debug)]
pub struct ShmSink {
    producer: Producer,
    bells: Arc<Bells>,
    config: ShmConfig,
}

impl ShmSink {
    fn write_all(&mut self, mut src: &[u8]) -> Result<(), TransportError> {
        while !src.is_empty() {
            let n = self.producer.write(src)?;
            if n > 0 {
                src = &src[n..];
                if self.producer.consumer_sleeping() {
                    sys::ring_doorbell(self.bells.data.as_fd())?;
                }
                continue;
            }
            let producer = &self.producer;
            match wait_on(
                self.bells.space.as_fd(),
                &|s| producer.set_sleeping(s),
                &|| Ok(producer.free()? > 0),
                self.config.spin,
                self.config.stall_timeout,
            )? {
                Wake::Ready => {}
                Wake::TimedOut => return Err(stalled("while its ring is full", self.config.stall_timeout)),
                Wake::PeerGone => {
                    return Err(TransportError::Io(io::Error::new(io::ErrorKind::BrokenPipe, "shared-memory peer closed the connection")))
                }
            }
        }
        Ok(())
    }
}

impl FrameSink for ShmSink {
    fn send(&mut self, head: &[u8], bulk: &[u8]) -> Result<(), TransportError> {
        self.write_all(head)?;
        self.write_all(bulk)?;
        self.producer.mark_frame_end();
        Ok(())
    }

    /// Written into the ring at once: the ring is the batch (no system call per frame; a
    /// sleeping reader is woken by the first frame it misses).
    fn queue(&mut self, head: &[u8], bulk: &[u8]) -> Result<(), TransportError> {
        self.send(head, bulk)
    }

    fn flush(&mut self) -> Result<(), TransportError> {
        Ok(())
    }

    fn pending(&self) -> usize {
        0
    }
}

/// Receiving half: copies heads out of the incoming ring, bulk straight into the caller's
/// destination.
#[derive(Debug)]
pub struct ShmSource {
    consumer: Consumer,
    bells: Arc<Bells>,
    config: ShmConfig,
    head: Vec<u8>,
    bulk_remaining: usize,
    max_control: usize,
    peer_gone: bool,
}

impl ShmSource {
    /// Fills `dst` from the ring. `at_boundary`: the peer closing before the first byte is a
    /// clean close.
    fn read_exact(&mut self, dst: &mut [u8], at_boundary: bool) -> Result<(), TransportError> {
        let mut done = 0;
        while done < dst.len() {
            let n = self.consumer.read(&mut dst[done..])?;
            if n > 0 {
                done += n;
                if self.consumer.producer_sleeping() {
                    // A peer gone meanwhile is noticed by the next wait.
                    let _ = sys::ring_doorbell(self.bells.space.as_fd());
                }
                continue;
            }
            let between_frames = at_boundary && done == 0;
            match self.wait(if between_frames { None } else { self.config.stall_timeout })? {
                Wake::Ready => {}
                Wake::TimedOut => return Err(stalled("in the middle of a frame", self.config.stall_timeout)),
                Wake::PeerGone if between_frames => return Err(TransportError::Closed),
                Wake::PeerGone => return Err(TransportError::Io(io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed mid-frame"))),
            }
        }
        Ok(())
    }

    /// Waits for data in the ring (or the peer's end).
    fn wait(&mut self, timeout: Option<Duration>) -> Result<Wake, TransportError> {
        if self.peer_gone {
            return Ok(if self.consumer.available()? > 0 { Wake::Ready } else { Wake::PeerGone });
        }
        let consumer = &self.consumer;
        let wake = wait_on(self.bells.data.as_fd(), &|s| consumer.set_sleeping(s), &|| Ok(consumer.available()? > 0), self.config.spin, timeout)?;
        self.peer_gone = matches!(wake, Wake::PeerGone);
        Ok(wake)
    }
}

impl FrameSource for ShmSource {
    fn recv_head(&mut self) -> Result<Received<'_>, TransportError> {
        self.skip_bulk()?;
        let mut head = std::mem::take(&mut self.head);
        head.resize(HEADER_LEN, 0);
        let result: Result<_, TransportError> = (|| {
            self.read_exact(&mut head[..HEADER_LEN], true)?;
            // The header is validated (magic, version, both lengths) before any control byte
            // is read.
            if let DeframedHead::NeedMore { needed } = FrameDecoder::decode_head_within(&head, self.max_control)? {
                head.resize(needed, 0);
                self.read_exact(&mut head[HEADER_LEN..], false)?;
            }
            match FrameDecoder::decode_head_within(&head, self.max_control)? {
                DeframedHead::Head { header, .. } => Ok(header),
                DeframedHead::NeedMore { .. } => unreachable!("the whole head was read"),
            }
        })();
        self.head = head;
        let header = result?;
        self.bulk_remaining = header.bulk_len as usize;
        Ok(Received { header, control: &self.head[HEADER_LEN..] })
    }

    fn limit_control(&mut self, max: usize) {
        self.max_control = max.min(proto_core::limits::MAX_CONTROL_LEN);
    }

    fn recv_bulk(&mut self, dst: &mut [u8]) -> Result<(), TransportError> {
        if dst.len() > self.bulk_remaining {
            return Err(TransportError::Io(io::Error::new(io::ErrorKind::InvalidInput, "read past the frame's bulk section")));
        }
        self.read_exact(dst, false)?;
        self.bulk_remaining -= dst.len();
        Ok(())
    }

    fn wait_readable(&mut self, timeout: Duration) -> Result<bool, TransportError> {
        self.skip_bulk()?;
        Ok(!matches!(self.wait(Some(timeout))?, Wake::TimedOut))
    }

    fn set_wait_spin(&mut self, spin: Duration) {
        self.config.spin = spin;
    }

    fn bulk_remaining(&self) -> usize {
        self.bulk_remaining
    }

    fn skip_bulk(&mut self) -> Result<(), TransportError> {
        // Called before every frame's head: nothing to skip is the usual case, and zeroing the
        // scratch buffer for it would cost more than the rest of the read.
        if self.bulk_remaining == 0 {
            return Ok(());
        }
        let mut scratch = [0u8; 16 << 10];
        while self.bulk_remaining > 0 {
            let n = self.bulk_remaining.min(scratch.len());
            self.recv_bulk(&mut scratch[..n])?;
        }
        Ok(())
    }
}

/// Everything a worker-side connection is made of, to hand it to another process (a session
/// process) that serves it from where the worker stopped: between frames, with the worker's
/// copies of the halves no longer used.
#[derive(Debug)]
pub struct ShmParts {
    /// The rings' sealed memfd.
    pub rings: OwnedFd,
    /// The "data written" doorbell socket (the client's connection).
    pub data: UnixStream,
    /// The "space freed" doorbell socket.
    pub space: UnixStream,
    /// The worker's end of the descriptor channel.
    pub descriptors: UnixStream,
    /// Bytes of the client's ring read so far.
    pub request_tail: u64,
    /// Bytes of the worker's ring written so far.
    pub reply_head: u64,
}

impl ShmSource {
    /// Copies of everything the worker's side of this connection is made of, to hand to a
    /// session process ([`worker_from_parts`]). Between frames only; the worker's halves
    /// must not be used afterwards (its ring index would be stale). The reply ring's index is
    /// the one the worker published (it always publishes what it writes).
    pub fn hand_over(&self) -> io::Result<ShmParts> {
        if self.bulk_remaining > 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "a connection is handed over between frames only"));
        }
        let (rings, descriptors) =
            self.bells.kept.as_ref().ok_or_else(|| io::Error::new(io::ErrorKind::Unsupported, "only the worker's side is handed over"))?;
        Ok(ShmParts {
            rings: rings.try_clone()?,
            data: self.bells.data.try_clone()?,
            space: self.bells.space.try_clone()?,
            descriptors: descriptors.try_clone()?,
            request_tail: self.consumer.tail(),
            reply_head: Consumer::new(self.consumer.mapping().clone(), Direction::WorkerToClient).published_head(),
        })
    }
}

impl ShmParts {
    /// Copies of the parts (each descriptor duplicated).
    pub fn try_clone(&self) -> io::Result<Self> {
        Ok(Self {
            rings: self.rings.try_clone()?,
            data: self.data.try_clone()?,
            space: self.space.try_clone()?,
            descriptors: self.descriptors.try_clone()?,
            request_tail: self.request_tail,
            reply_head: self.reply_head,
        })
    }

    /// A sink on the worker's ring that goes on where the process that served the connection
    /// stopped, once that process is gone — if it stopped between frames (`None` in the middle
    /// of one: a frame written now would land inside it). For the worker's last word.
    pub fn sink_after_peer(&self, config: &ShmConfig) -> io::Result<Option<ShmSink>> {
        let len = sys::sealed_len(self.rings.as_fd())?;
        if len != ring::MAPPING_BYTES {
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("shared rings of {len} bytes, expected {}", ring::MAPPING_BYTES)));
        }
        let map = Arc::new(Mapping::new(self.rings.as_fd(), len)?);
        let Some(producer) = Producer::resume_at_frame_end(map, Direction::WorkerToClient) else { return Ok(None) };
        let bells = Arc::new(Bells { data: self.data.try_clone()?, space: self.space.try_clone()?, kept: None });
        Ok(Some(ShmSink { producer, bells, config: *config }))
    }
}

/// The worker's halves, hangup and descriptor channel rebuilt from [`ShmSource::hand_over`]'s
/// parts in the process that serves the connection from now on. The memfd is checked as a
/// client checks it.
pub fn worker_from_parts(parts: ShmParts, config: &ShmConfig) -> io::Result<(ShmSink, ShmSource, ShmHangup, FdChannel)> {
    let len = sys::sealed_len(parts.rings.as_fd())?;
    if len != ring::MAPPING_BYTES {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("shared rings of {len} bytes, expected {}", ring::MAPPING_BYTES)));
    }
    let map = Arc::new(Mapping::new(parts.rings.as_fd(), len)?);
    ring::check(&map)?;
    let bells = Arc::new(Bells { data: parts.data, space: parts.space, kept: None });
    let sink =
        ShmSink { producer: Producer::resume(map.clone(), Direction::WorkerToClient, parts.reply_head), bells: bells.clone(), config: *config };
    let source = source_half(Consumer::resume(map, Direction::ClientToWorker, parts.request_tail), bells.clone(), *config);
    let hangup = ShmHangup { bells };
    Ok((sink, source, hangup, FdChannel::new(parts.descriptors)?))
}

fn source_half(consumer: Consumer, bells: Arc<Bells>, config: ShmConfig) -> ShmSource {
    ShmSource {
        consumer,
        bells,
        config,
        head: Vec::with_capacity(4096),
        bulk_remaining: 0,
        max_control: proto_core::limits::MAX_CONTROL_LEN,
        peer_gone: false,
    }
}

/// Builds one side's halves over `map`.
fn halves(map: Arc<Mapping>, bells: Bells, outgoing: Direction, config: ShmConfig) -> (ShmSink, ShmSource) {
    let incoming = if outgoing == Direction::ClientToWorker { Direction::WorkerToClient } else { Direction::ClientToWorker };
    let bells = Arc::new(bells);
    let sink = ShmSink { producer: Producer::new(map.clone(), outgoing), bells: bells.clone(), config };
    let source = source_half(Consumer::new(map, incoming), bells, config);
    (sink, source)
}

/// Connects to the worker's socket at `path` and maps the rings it passes.
pub fn connect(path: &Path, config: &ShmConfig) -> io::Result<(ShmSink, ShmSource)> {
    connect_with_fds(path, config).map(|(sink, source, _)| (sink, source))
}

/// [`connect`], keeping the descriptor channel the worker passes shared memory on.
pub fn connect_with_fds(path: &Path, config: &ShmConfig) -> io::Result<(ShmSink, ShmSource, FdChannel)> {
    let data = UnixStream::connect(path)?;
    let ready = sys::poll_readable(data.as_fd(), Some(config.connect_timeout))?;
    if !ready {
        return Err(io::Error::new(io::ErrorKind::TimedOut, format!("{}: no answer from the worker", path.display())));
    }
    let mut greeting = [0u8; BOOTSTRAP.len()];
    let (n, fds) = sys::recv_fds(data.as_fd(), &mut greeting)?;
    if n == 0 && fds.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::ConnectionRefused,
            format!("{}: the worker closed the connection (its connection limit, or it is shutting down)", path.display()),
        ));
    }
    let [rings, space, descriptors]: [OwnedFd; 3] =
        fds.try_into().map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "the worker passed no shared rings"))?;
    if n != BOOTSTRAP.len() || &greeting != BOOTSTRAP {
        // A refused connection gets an error frame instead (TooManyConnections, shutdown).
        return Err(io::Error::new(io::ErrorKind::ConnectionRefused, format!("{}: not a hip-worker's shared-memory socket", path.display())));
    }
    let len = sys::sealed_len(rings.as_fd())?;
    if len != ring::MAPPING_BYTES {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("shared rings of {len} bytes, expected {}", ring::MAPPING_BYTES)));
    }
    let map = Mapping::new(rings.as_fd(), len)?;
    ring::check(&map)?;
    let (sink, source) = halves(Arc::new(map), Bells { data, space: UnixStream::from(space), kept: None }, Direction::ClientToWorker, *config);
    let descriptors = FdChannel::new(UnixStream::from(descriptors))?;
    // The client waits for its descriptors with a timeout (`FdChannel::recv` polls).
    Ok((sink, source, descriptors))
}

/// Shared memory as a [`Connector`]: the worker's socket path; keeps the descriptor channel.
pub struct ShmConnector(pub ShmConfig);

impl Connector<FdChannel> for ShmConnector {
    fn name(&self) -> &'static str {
        "shared memory"
    }

    fn connect(&self, target: &str) -> io::Result<Connected<FdChannel>> {
        let (sink, source, descriptors) = connect_with_fds(Path::new(target), &self.0)?;
        Ok(Connected { sink: Box::new(sink), source: Box::new(source), descriptors: Some(descriptors) })
    }
}

/// The worker's listening socket; the socket file is removed when dropped.
#[derive(Debug)]
pub struct ShmListener {
    listener: UnixListener,
    path: PathBuf,
}

impl ShmListener {
    /// Listens at `path` (mode [`SOCKET_MODE`]). A stale socket file nobody answers on is
    /// replaced; a live one is an error (another worker uses it).
    pub fn bind(path: &Path) -> io::Result<Self> {
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            use std::os::unix::fs::FileTypeExt;
            // Never remove anything but a socket (a mistyped path must not cost a file).
            if !meta.file_type().is_socket() {
                return Err(io::Error::new(io::ErrorKind::AlreadyExists, format!("{}: exists and is not a socket", path.display())));
            }
            if UnixStream::connect(path).is_ok() {
                return Err(io::Error::new(io::ErrorKind::AddrInUse, format!("{}: another worker listens there", path.display())));
            }
            std::fs::remove_file(path)?;
        }
        let listener = UnixListener::bind(path)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(SOCKET_MODE))?;
        Ok(Self { listener, path: path.to_path_buf() })
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Waits for a client (blocking; [`wake`](Self::wake) makes it return).
    pub fn accept(&self) -> io::Result<ShmAccepted> {
        let (stream, _) = self.listener.accept()?;
        Ok(ShmAccepted { stream })
    }

    /// Makes a blocked [`accept`](Self::accept) return (with a connection the caller drops).
    pub fn wake(path: &Path) -> io::Result<()> {
        UnixStream::connect(path).map(drop)
    }
}

impl Drop for ShmListener {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A client that connected, before its rings exist.
#[derive(Debug)]
pub struct ShmAccepted {
    stream: UnixStream,
}

/// Ends a live connection from another thread: the worker's reader sees the end of the
/// connection at the next frame boundary, a writer waiting for space at once.
#[derive(Debug)]
pub struct ShmHangup {
    bells: Arc<Bells>,
}

impl ShmHangup {
    /// Ends the connection.
    pub fn hang_up(&self) {
        let _ = self.bells.data.shutdown(std::net::Shutdown::Read);
        let _ = self.bells.space.shutdown(std::net::Shutdown::Read);
    }
}

impl ShmAccepted {
    /// The connected socket (for the peer's credentials, or an error frame).
    pub fn stream(&self) -> &UnixStream {
        &self.stream
    }

    /// Creates the rings, passes them to the client, and returns the worker's halves.
    pub fn establish(self, config: &ShmConfig) -> io::Result<(ShmSink, ShmSource, ShmHangup)> {
        self.establish_with_fds(config).map(|(sink, source, hangup, _)| (sink, source, hangup))
    }

    /// [`establish`](Self::establish), keeping the worker's end of the descriptor channel.
    pub fn establish_with_fds(self, config: &ShmConfig) -> io::Result<(ShmSink, ShmSource, ShmHangup, FdChannel)> {
        let rings = sys::sealed_memfd(RINGS_MEMFD_NAME, ring::MAPPING_BYTES)?;
        let map = Mapping::new(rings.as_fd(), ring::MAPPING_BYTES)?;
        ring::initialise(&map);
        let (space, client_space) = UnixStream::pair()?;
        let (descriptors, client_descriptors) = UnixStream::pair()?;
        sys::send_fds(self.stream.as_fd(), BOOTSTRAP, &[rings.as_fd(), client_space.as_fd(), client_descriptors.as_fd()])?;
        // The client's are the client's now; the worker keeps the mapping, its own ends and
        // (to hand the connection over) the memfd.
        drop((client_space, client_descriptors));
        let bells = Bells { data: self.stream, space, kept: Some((rings, descriptors.try_clone()?)) };
        let (sink, source) = halves(Arc::new(map), bells, Direction::WorkerToClient, *config);
        let hangup = ShmHangup { bells: sink.bells.clone() };
        Ok((sink, source, hangup, FdChannel::new(descriptors)?))
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use proto_core::wire::{MemcpyHtoD, Ping};
    use proto_core::{Bulk, Flags, Request};

    type Side = (ShmSink, ShmSource);

    fn socket_path(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("hip-shm-test-{}-{name}.sock", std::process::id()))
    }

    /// (client, worker) over a fresh socket; the worker side uses `worker`.
    fn pair_with(name: &str, worker: ShmConfig) -> (Side, Side, ShmHangup) {
        let listener = ShmListener::bind(&socket_path(name)).unwrap();
        let path = listener.path().to_path_buf();
        let t = std::thread::spawn(move || listener.accept().unwrap().establish(&worker).unwrap());
        let client = connect(&path, &ShmConfig::default()).unwrap();
        let (sink, source, hangup) = t.join().unwrap();
        (client, (sink, source), hangup)
    }

    fn ping(id: u64) -> Vec<u8> {
        let mut buf = [0u8; 128];
        let f = Request::Ping(Ping { nonce: id, payload: b"x"[..].into() }).encode_frame(&mut buf, Flags::empty(), id).unwrap();
        buf[..f.head_len].to_vec()
    }

    #[test]
    fn frames_cross_both_ways_with_bulk_far_larger_than_the_ring() {
        let ((mut tx, mut rx_client), (mut tx_worker, mut rx), _) = pair_with("bulk", ShmConfig::default());
        let data: Vec<u8> = (0..5 * ring::RING_BYTES + 12345).map(|i| (i * 7 + i / 4096) as u8).collect();
        let sender = {
            let data = data.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 256];
                let f = Request::MemcpyHtoD(MemcpyHtoD { dst: 0x1000, stream: 0, sync: true, data: Bulk(&data) })
                    .encode_frame(&mut buf, Flags::empty(), 7)
                    .unwrap();
                tx.send(&buf[..f.head_len], f.bulk).unwrap();
                tx.queue(&ping(8), &[]).unwrap();
                tx
            })
        };
        let head = rx.recv_head().unwrap();
        assert_eq!(head.header.request_id, 7);
        let Request::MemcpyHtoD(m) = Request::parse(head.header.opcode, head.control, &[]).unwrap() else { panic!() };
        assert_eq!(m.dst, 0x1000);
        let mut placed = vec![0u8; rx.bulk_remaining()];
        assert_eq!(placed.len(), data.len());
        rx.recv_bulk(&mut placed).unwrap();
        assert!(placed == data, "bulk arrived intact");
        assert_eq!(rx.recv_head().unwrap().header.request_id, 8);
        let _tx = sender.join().unwrap();

        // The other way, with an unread bulk skipped by the next head.
        let replier = std::thread::spawn(move || {
            drop(rx);
            let mut buf = [0u8; 256];
            let f = Request::MemcpyHtoD(MemcpyHtoD { dst: 1, stream: 0, sync: false, data: Bulk(&data) })
                .encode_frame(&mut buf, Flags::empty(), 9)
                .unwrap();
            tx_worker.send(&buf[..f.head_len], f.bulk).unwrap();
            tx_worker.send(&ping(10), &[]).unwrap();
        });
        assert_eq!(rx_client.recv_head().unwrap().header.request_id, 9);
        assert_eq!(rx_client.recv_head().unwrap().header.request_id, 10);
        replier.join().unwrap();
        // The worker's halves are gone: a clean close between frames.
        assert!(matches!(rx_client.recv_head(), Err(TransportError::Closed)));
    }

    /// The time `recv_head` takes for a ping sent `delay` after it starts, with `spin`.
    fn receive_after(name: &str, spin: Duration, delay: Duration) -> Duration {
        let (client, (_sink, mut rx), _) = pair_with(name, ShmConfig { spin, ..ShmConfig::default() });
        let sender = std::thread::spawn(move || {
            let (mut tx, _rx) = client;
            std::thread::sleep(delay);
            tx.send(&ping(5), &[]).unwrap();
        });
        let started = Instant::now();
        assert_eq!(rx.recv_head().unwrap().header.request_id, 5);
        let took = started.elapsed();
        sender.join().unwrap();
        assert!(matches!(rx.recv_head(), Err(TransportError::Closed)));
        took
    }

    #[test]
    fn a_reader_spins_then_sleeps_and_is_woken_by_the_doorbell() {
        assert!(receive_after("spin-long", Duration::from_secs(20), Duration::from_millis(30)) < Duration::from_secs(10));
        let slept = receive_after("spin-short", Duration::from_micros(100), Duration::from_millis(30));
        assert!(slept >= Duration::from_millis(30) && slept < Duration::from_secs(10), "{slept:?}");
        receive_after("spin-none", Duration::ZERO, Duration::from_millis(5));
    }

    #[test]
    fn a_writer_blocked_on_a_full_ring_is_woken_as_the_reader_drains_it() {
        let ((mut tx, _rx_c), (_tx_w, mut rx), _) = pair_with("full", ShmConfig { spin: Duration::ZERO, ..ShmConfig::default() });
        let data = vec![3u8; 3 * ring::RING_BYTES];
        let writer = std::thread::spawn(move || {
            let mut buf = [0u8; 256];
            let f = Request::MemcpyHtoD(MemcpyHtoD { dst: 1, stream: 0, sync: true, data: Bulk(&data) })
                .encode_frame(&mut buf, Flags::empty(), 1)
                .unwrap();
            tx.send(&buf[..f.head_len], f.bulk).unwrap();
            tx
        });
        // Let the writer fill the ring and go to sleep before the reader starts.
        std::thread::sleep(Duration::from_millis(50));
        let _ = rx.recv_head().unwrap();
        let mut got = vec![0u8; rx.bulk_remaining()];
        rx.recv_bulk(&mut got).unwrap();
        assert!(got.iter().all(|&b| b == 3));
        writer.join().unwrap();
    }

    #[test]
    fn a_dead_peer_ends_a_blocked_read_at_once_and_a_blocked_write() {
        let (client, (mut tx_w, mut rx), _) = pair_with("death", ShmConfig { spin: Duration::ZERO, ..ShmConfig::default() });
        let killer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            drop(client);
        });
        let started = Instant::now();
        assert!(matches!(rx.recv_head(), Err(TransportError::Closed)));
        assert!(started.elapsed() < Duration::from_secs(5));
        killer.join().unwrap();
        // Nobody reads the replies any more: the writer fails once the ring is full.
        let data = vec![0u8; 2 * ring::RING_BYTES];
        let err = tx_w.send(&ping(1), &data).unwrap_err();
        assert!(matches!(err, TransportError::Io(ref e) if e.kind() == io::ErrorKind::BrokenPipe), "{err}");
    }

    #[test]
    fn a_peer_dying_mid_frame_is_an_error_not_a_clean_close() {
        let ((mut tx, rx_c), (_tx_w, mut rx), _) = pair_with("midframe", ShmConfig::default());
        // A header announcing 1 MiB of bulk, and only part of it.
        let mut buf = [0u8; 256];
        let data = vec![1u8; 1 << 20];
        let f =
            Request::MemcpyHtoD(MemcpyHtoD { dst: 1, stream: 0, sync: true, data: Bulk(&data) }).encode_frame(&mut buf, Flags::empty(), 1).unwrap();
        tx.write_all(&buf[..f.head_len]).unwrap();
        tx.write_all(&data[..1000]).unwrap();
        drop((tx, rx_c));
        let _ = rx.recv_head().unwrap();
        let mut got = vec![0u8; rx.bulk_remaining()];
        let err = rx.recv_bulk(&mut got).unwrap_err();
        assert!(matches!(err, TransportError::Io(ref e) if e.kind() == io::ErrorKind::UnexpectedEof), "{err}");
    }

    #[test]
    fn a_connection_handed_over_between_frames_goes_on_where_it_stopped() {
        let ((mut tx, mut rx_c), (mut tx_w, mut rx), _) = pair_with("handover", ShmConfig::default());
        tx.send(&ping(1), &[]).unwrap();
        tx.send(&ping(2), &[]).unwrap();
        assert_eq!(rx.recv_head().unwrap().header.request_id, 1);
        tx_w.send(&ping(3), &[]).unwrap();
        assert!(rx_c.hand_over().is_err(), "only the worker's side is handed over");
        let parts = rx.hand_over().unwrap();
        assert_eq!(parts.reply_head, tx_w.producer.head());
        let parts_copy = parts.try_clone().unwrap();
        // The worker's halves go; the parts hold their own descriptors.
        drop((rx, tx_w));
        let (mut sink, mut source, _hangup, _descriptors) = worker_from_parts(parts, &ShmConfig::default()).unwrap();
        assert_eq!(source.recv_head().unwrap().header.request_id, 2);
        sink.send(&ping(4), &[]).unwrap();
        assert_eq!(rx_c.recv_head().unwrap().header.request_id, 3);
        assert_eq!(rx_c.recv_head().unwrap().header.request_id, 4);
        // The new owner is gone between frames: a last frame goes on after its last one.
        let kept = parts_copy;
        drop((sink, source, _hangup, _descriptors));
        let mut last = kept.sink_after_peer(&ShmConfig::default()).unwrap().expect("between frames");
        last.send(&ping(5), &[]).unwrap();
        assert_eq!(rx_c.recv_head().unwrap().header.request_id, 5);
        // Gone in the middle of a frame: no last frame.
        last.write_all(&ping(6)[..10]).unwrap();
        assert!(kept.sink_after_peer(&ShmConfig::default()).unwrap().is_none());
        // The connection ends with the last copies of its descriptors.
        drop((last, kept));
        let err = rx_c.recv_head().unwrap_err();
        assert!(matches!(err, TransportError::Io(ref e) if e.kind() == io::ErrorKind::UnexpectedEof), "{err}");
    }

    #[test]
    fn the_hangup_ends_the_workers_reader() {
        let (_client, (_tx_w, mut rx), hangup) = pair_with("hangup", ShmConfig::default());
        let t = std::thread::spawn(move || rx.recv_head().map(|_| ()));
        std::thread::sleep(Duration::from_millis(30));
        hangup.hang_up();
        assert!(matches!(t.join().unwrap(), Err(TransportError::Closed)));
    }

    #[test]
    fn hostile_lengths_and_broken_indices_are_refused() {
        let ((mut tx, _rx_c), (_tx_w, mut rx), _) = pair_with("hostile", ShmConfig::default());
        let mut header = proto_core::FrameHeader {
            version: proto_core::PROTOCOL_VERSION,
            opcode: 0x0003,
            flags: Flags::empty(),
            credits: 0,
            request_id: 1,
            control_len: 0,
            bulk_len: 0,
            aux: 0,
        }
        .emit();
        header[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
        tx.write_all(&header).unwrap();
        assert!(matches!(rx.recv_head(), Err(TransportError::Malformed(proto_core::DecodeError::TooLarge { .. }))));

        // A control part larger than a narrowed limit is refused from the header alone.
        let ((mut tx, _rx_c), (_tx_w, mut rx), _) = pair_with("narrow", ShmConfig::default());
        rx.limit_control(4);
        tx.send(&ping(2), &[]).unwrap();
        assert!(matches!(rx.recv_head(), Err(TransportError::Malformed(proto_core::DecodeError::TooLarge { .. }))));

        // A producer index beyond the ring's capacity is an error, never a read out of bounds.
        let ((tx, _rx_c), (_tx_w, mut rx), _) = pair_with("indices", ShmConfig::default());
        let map = tx.producer.mapping().clone();
        // SAFETY: the head index of ring 0 in a live mapping (see the ring's layout).
        unsafe { (*map.as_ptr().add(512).cast::<std::sync::atomic::AtomicU64>()).store(u64::MAX / 2, std::sync::atomic::Ordering::SeqCst) };
        let err = rx.recv_head().unwrap_err();
        assert!(matches!(err, TransportError::Io(ref e) if e.kind() == io::ErrorKind::InvalidData), "{err}");
    }

    #[test]
    fn a_live_socket_is_not_taken_over_and_a_stale_one_is_replaced() {
        let path = socket_path("stale");
        let first = ShmListener::bind(&path).unwrap();
        assert_eq!(ShmListener::bind(&path).unwrap_err().kind(), io::ErrorKind::AddrInUse);
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, SOCKET_MODE);
        drop(first);
        assert!(!path.exists(), "the socket file goes with its listener");
        // A socket file left by a worker that died (nobody listens).
        let stale = UnixListener::bind(socket_path("stale2")).unwrap();
        drop(stale);
        let replaced = ShmListener::bind(&socket_path("stale2")).unwrap();
        drop(replaced);
        assert!(!socket_path("stale2").exists());
        // A file that is no socket is left alone.
        let file = socket_path("file");
        std::fs::write(&file, b"keep").unwrap();
        assert_eq!(ShmListener::bind(&file).unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&file).unwrap(), b"keep");
        std::fs::remove_file(&file).unwrap();
    }
}
