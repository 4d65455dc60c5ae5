//! TCP implementation of [`FrameSink`]/[`FrameSource`].

use crate::config::{TcpConfig, COALESCE_BYTES, COPY_BULK_BELOW, KEEPALIVE_IDLE, RECV_BUFFER_BYTES, SOCKET_BUFFER_BYTES};
use crate::nosigpipe::NoSigpipe;
use proto_core::header::HEADER_LEN;
use proto_core::limits::MAX_CONTROL_LEN;
use proto_core::{DeframedHead, FrameDecoder};
use socket2::{Domain, Protocol, SockAddr, Socket, TcpKeepalive, Type};
use std::io::{self, IoSlice, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::Duration;
use transport_core::{Connected, Connector, FrameSink, FrameSource, Received, TransportError};

/// Applies hip-remote's socket options: no Nagle delay (small synchronous calls dominate),
/// keepalive (a dead peer is noticed even while idle), large buffers, I/O timeouts.
pub fn configure(stream: &TcpStream, cfg: &TcpConfig) -> io::Result<()> {
    let sock = socket2::SockRef::from(stream);
    crate::nosigpipe::suppress_on_socket(stream)?;
    sock.set_nodelay(true)?;
    sock.set_keepalive(true)?;
    // Not every platform supports setting the timing; keepalive itself is what matters.
    let keepalive = TcpKeepalive::new().with_time(KEEPALIVE_IDLE);
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "macos", target_os = "freebsd"))]
    let keepalive = keepalive.with_interval(crate::config::KEEPALIVE_INTERVAL).with_retries(crate::config::KEEPALIVE_PROBES);
    let _ = sock.set_tcp_keepalive(&keepalive);
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let _ = sock.set_tcp_user_timeout(Some(crate::config::USER_TIMEOUT));
    let _ = sock.set_send_buffer_size(SOCKET_BUFFER_BYTES);
    let _ = sock.set_recv_buffer_size(SOCKET_BUFFER_BYTES);
    stream.set_read_timeout(cfg.read_timeout())?;
    stream.set_write_timeout(cfg.io_timeout)?;
    Ok(())
}

/// Connects to `addr` ("host:port") within the configured timeout, trying every address the
/// name resolves to, and returns the two halves of the connection.
pub fn connect(addr: &str, cfg: &TcpConfig) -> io::Result<(TcpSink, TcpSource)> {
    let mut last_err = None;
    for sa in addr.to_socket_addrs()? {
        match connect_one(sa, cfg) {
            Ok(stream) => return split(stream, cfg),
            Err(e) => last_err = Some(e),
        }
    }
    Err(last_err.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("{addr}: no address"))))
}

/// Plain TCP as a [`Connector`]: `host:port` addresses.
pub struct TcpConnector<'a>(pub &'a TcpConfig);

impl<D> Connector<D> for TcpConnector<'_> {
    fn name(&self) -> &'static str {
        "TCP"
    }

    fn connect(&self, target: &str) -> io::Result<Connected<D>> {
        let (sink, source) = connect(target, self.0)?;
        Ok(Connected::new(sink, source))
    }
}

fn connect_one(sa: SocketAddr, cfg: &TcpConfig) -> io::Result<TcpStream> {
    let sock = Socket::new(Domain::for_address(sa), Type::STREAM, Some(Protocol::TCP))?;
    sock.connect_timeout(&SockAddr::from(sa), cfg.connect_timeout)?;
    Ok(sock.into())
}

/// Binds a listening socket (with `SO_REUSEADDR`, so a restarted worker can rebind at once).
pub fn listen(addr: &str) -> io::Result<TcpListener> {
    let sa = addr.to_socket_addrs()?.next().ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("{addr}: no address")))?;
    let sock = Socket::new(Domain::for_address(sa), Type::STREAM, Some(Protocol::TCP))?;
    sock.set_reuse_address(true)?;
    sock.bind(&SockAddr::from(sa))?;
    sock.listen(128)?;
    Ok(sock.into())
}

/// Configures an accepted or connected stream and splits it into sink and source.
pub fn split(stream: TcpStream, cfg: &TcpConfig) -> io::Result<(TcpSink, TcpSource)> {
    configure(&stream, cfg)?;
    let reader = stream.try_clone()?;
    Ok((TcpSink::new(NoSigpipe::new(stream)?), TcpSource::new(reader, cfg.spin)))
}

/// Sending half: a coalescing buffer for fire-and-forget frames, vectored writes for the rest.
#[derive(Debug)]
pub struct TcpSink {
    stream: NoSigpipe,
    batch: Vec<u8>,
}

impl TcpSink {
    fn new(stream: NoSigpipe) -> Self {
        Self { stream, batch: Vec::with_capacity(COALESCE_BYTES) }
    }

    /// The underlying stream (for shutdown).
    pub fn stream(&self) -> &TcpStream {
        self.stream.get_ref()
    }

    /// Writes the batch, then `head`, then `bulk`, in as few system calls as the kernel allows.
    fn write_with_batch(&mut self, head: &[u8], bulk: &[u8]) -> Result<(), TransportError> {
        let mut slices = [IoSlice::new(&self.batch), IoSlice::new(head), IoSlice::new(bulk)];
        let result = write_all_vectored(&mut self.stream, &mut slices);
        self.batch.clear();
        result.map_err(TransportError::Io)
    }
}

/// `Write::write_all_vectored` (unstable in std) for our three-slice frames.
fn write_all_vectored(w: &mut impl Write, mut slices: &mut [IoSlice<'_>]) -> io::Result<()> {
    IoSlice::advance_slices(&mut slices, 0);
    while !slices.is_empty() {
        match w.write_vectored(slices) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "peer stopped accepting data")),
            Ok(n) => IoSlice::advance_slices(&mut slices, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl FrameSink for TcpSink {
    fn send(&mut self, head: &[u8], bulk: &[u8]) -> Result<(), TransportError> {
        self.write_with_batch(head, bulk)
    }

    fn queue(&mut self, head: &[u8], bulk: &[u8]) -> Result<(), TransportError> {
        if bulk.len() > COPY_BULK_BELOW {
            return self.write_with_batch(head, bulk);
        }
        if self.batch.len() + head.len() + bulk.len() > COALESCE_BYTES {
            self.flush()?;
        }
        self.batch.extend_from_slice(head);
        self.batch.extend_from_slice(bulk);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), TransportError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        self.write_with_batch(&[], &[])
    }

    fn pending(&self) -> usize {
        self.batch.len()
    }
}

/// Receiving half: buffers headers and control parts, reads large bulk sections straight
/// into the caller's destination.
#[derive(Debug)]
pub struct TcpSource {
    stream: TcpStream,
    buf: Vec<u8>,
    /// Unconsumed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    bulk_remaining: usize,
    /// Largest control part accepted ([`FrameSource::limit_control`]).
    max_control: usize,
    /// Polling time before a read blocks.
    spin: Duration,
}

impl TcpSource {
    fn new(stream: TcpStream, spin: Duration) -> Self {
        Self { stream, buf: vec![0; RECV_BUFFER_BYTES], start: 0, end: 0, bulk_remaining: 0, max_control: proto_core::limits::MAX_CONTROL_LEN, spin }
    }

    /// Makes at least `n` unconsumed bytes available in `buf` (`n` ≤ header + control limit,
    /// checked by the caller before asking). `at_boundary`: EOF before any byte is a clean close.
    fn fill(&mut self, n: usize, at_boundary: bool) -> Result<(), TransportError> {
        if self.end - self.start >= n {
            return Ok(());
        }
        if self.buf.len() - self.start < n {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.buf.len() < n {
                self.buf.resize(n, 0);
            }
        }
        while self.end - self.start < n {
            crate::spin::until_readable(&self.stream, self.spin);
            match self.stream.read(&mut self.buf[self.end..]) {
                Ok(0) if at_boundary && self.end == self.start => return Err(TransportError::Closed),
                Ok(0) => return Err(TransportError::Io(io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed mid-frame"))),
                Ok(read) => self.end += read,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TransportError::Io(e)),
            }
        }
        Ok(())
    }
}

impl TcpSource {
    /// Takes the source apart between frames, to hand the connection to another process:
    /// its socket and the bytes it has read ahead that no frame has consumed yet.
    /// `Err` gives the source back in the middle of a frame's bulk section.
    pub fn into_parts(self) -> Result<(TcpStream, Vec<u8>), Self> {
        if self.bulk_remaining > 0 {
            return Err(self);
        }
        let unread = self.buf[self.start..self.end].to_vec();
        Ok((self.stream, unread))
    }

    /// The other end of [`into_parts`](Self::into_parts): a configured stream (see
    /// [`configure`]) whose next bytes are `unread`, then what the socket holds.
    pub fn from_parts(stream: TcpStream, unread: &[u8], spin: Duration) -> Self {
        let mut source = Self::new(stream, spin);
        if source.buf.len() < unread.len() {
            source.buf.resize(unread.len(), 0);
        }
        source.buf[..unread.len()].copy_from_slice(unread);
        source.end = unread.len();
        source
    }
}

/// A sink and source over an already configured stream that another process set up
/// ([`TcpSource::into_parts`]); the source reads `unread` first.
pub fn from_parts(stream: TcpStream, unread: &[u8], spin: Duration) -> io::Result<(TcpSink, TcpSource)> {
    let reader = stream.try_clone()?;
    Ok((TcpSink::new(NoSigpipe::new(stream)?), TcpSource::from_parts(reader, unread, spin)))
}

impl FrameSource for TcpSource {
    fn recv_head(&mut self) -> Result<Received<'_>, TransportError> {
        self.skip_bulk()?;
        // The decoder validates magic, version, flags and both lengths against their limits
        // as soon as the header is complete, before a byte of payload is read or buffered.
        let mut at_boundary = true;
        let (consumed, header) = loop {
            match FrameDecoder::decode_head_within(&self.buf[self.start..self.end], self.max_control)? {
                DeframedHead::Head { consumed, header, .. } => break (consumed, header),
                DeframedHead::NeedMore { needed } => {
                    self.fill(needed, at_boundary)?;
                    at_boundary = false;
                }
            }
        };
        debug_assert!(header.control_len as usize <= MAX_CONTROL_LEN);
        let control_start = self.start + HEADER_LEN;
        self.start += consumed;
        self.bulk_remaining = header.bulk_len as usize;
        Ok(Received { header, control: &self.buf[control_start..self.start] })
    }

    fn limit_control(&mut self, max: usize) {
        self.max_control = max.min(proto_core::limits::MAX_CONTROL_LEN);
    }

    fn recv_bulk(&mut self, dst: &mut [u8]) -> Result<(), TransportError> {
        if dst.len() > self.bulk_remaining {
            return Err(TransportError::Io(io::Error::new(io::ErrorKind::InvalidInput, "read past the frame's bulk section")));
        }
        let buffered = (self.end - self.start).min(dst.len());
        dst[..buffered].copy_from_slice(&self.buf[self.start..self.start + buffered]);
        self.start += buffered;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        let rest = &mut dst[buffered..];
        if !rest.is_empty() {
            self.stream.read_exact(rest).map_err(|e| {
                if e.kind() == io::ErrorKind::UnexpectedEof {
                    TransportError::Io(io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed mid-bulk"))
                } else {
                    TransportError::Io(e)
                }
            })?;
        }
        self.bulk_remaining -= dst.len();
        Ok(())
    }

    fn set_wait_spin(&mut self, spin: Duration) {
        self.spin = spin;
    }

    fn wait_readable(&mut self, timeout: Duration) -> Result<bool, TransportError> {
        self.skip_bulk()?;
        if self.end > self.start {
            return Ok(true);
        }
        crate::spin::until_readable(&self.stream, self.spin.min(timeout));
        crate::spin::wait_readable(&self.stream, timeout).map_err(TransportError::Io)
    }

    fn bulk_remaining(&self) -> usize {
        self.bulk_remaining
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use proto_core::wire::{Empty, MemcpyHtoD, Ping};
    use proto_core::{Bulk, Flags, Request};

    fn pair() -> ((TcpSink, TcpSource), (TcpSink, TcpSource)) {
        pair_with(TcpConfig::default())
    }

    /// A connected pair whose accepting side uses `accepted`.
    fn pair_with(accepted: TcpConfig) -> ((TcpSink, TcpSource), (TcpSink, TcpSource)) {
        let l = listen("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        let t = std::thread::spawn(move || split(l.accept().unwrap().0, &accepted).unwrap());
        let c = connect(&addr, &TcpConfig::default()).unwrap();
        (c, t.join().unwrap())
    }

    /// The time `recv_head` takes for a ping sent `delay` after it starts, with `spin`.
    fn receive_after(spin: Duration, delay: Duration) -> Duration {
        let (client, (_tx_b, mut rx)) = pair_with(TcpConfig { spin, ..TcpConfig::default() });
        let sender = std::thread::spawn(move || {
            let (mut tx, _rx_a) = client;
            std::thread::sleep(delay);
            let mut buf = [0u8; 128];
            let f = Request::Ping(Ping { nonce: 1, payload: b"x"[..].into() }).encode_frame(&mut buf, Flags::empty(), 5).unwrap();
            tx.send(&buf[..f.head_len], f.bulk).unwrap();
            // Both halves go here: the socket closes.
        });
        let started = std::time::Instant::now();
        assert_eq!(rx.recv_head().unwrap().header.request_id, 5);
        let took = started.elapsed();
        sender.join().unwrap();
        // Whatever the spin, the end of the stream is still seen.
        assert!(matches!(rx.recv_head(), Err(TransportError::Closed)));
        took
    }

    #[test]
    fn a_spinning_reader_takes_the_reply_when_it_comes_and_blocks_after_its_spin() {
        // A spin far longer than the delay ends as soon as the bytes are there.
        assert!(receive_after(Duration::from_secs(20), Duration::from_millis(30)) < Duration::from_secs(10));
        // A spin shorter than the delay falls back to the blocking read, which gets them.
        assert!(receive_after(Duration::from_micros(100), Duration::from_millis(30)) >= Duration::from_millis(30));
        // No spin at all.
        receive_after(Duration::ZERO, Duration::from_millis(5));
    }

    #[test]
    fn frames_cross_with_bulk_placed_by_receiver() {
        let ((mut tx, _), (_, mut rx)) = pair();
        let data: Vec<u8> = (0..3_000_000u32).map(|i| i as u8).collect();
        let mut buf = [0u8; 256];
        let req = Request::MemcpyHtoD(MemcpyHtoD { dst: 0x1000, stream: 0, sync: true, data: Bulk(&data) });
        let f = req.encode_frame(&mut buf, Flags::empty(), 7).unwrap();
        tx.send(&buf[..f.head_len], f.bulk).unwrap();
        let ping = Request::Ping(Ping { nonce: 9, payload: b"x"[..].into() });
        let f2 = ping.encode_frame(&mut buf, Flags::NO_REPLY, 8).unwrap();
        tx.queue(&buf[..f2.head_len], f2.bulk).unwrap();
        assert!(tx.pending() > 0);
        tx.flush().unwrap();

        let head = rx.recv_head().unwrap();
        assert_eq!(head.header.request_id, 7);
        // The control part parses on its own; the bulk stays in the socket for the receiver.
        let Request::MemcpyHtoD(m) = Request::parse(head.header.opcode, head.control, &[]).unwrap() else { panic!() };
        assert_eq!(m.dst, 0x1000);
        let mut placed = vec![0u8; rx.bulk_remaining()];
        rx.recv_bulk(&mut placed).unwrap();
        assert_eq!(placed, data);
        let head = rx.recv_head().unwrap();
        assert_eq!(head.header.request_id, 8);
        assert!(head.header.flags.contains(Flags::NO_REPLY));
    }

    #[test]
    fn unread_bulk_is_skipped_and_close_is_clean() {
        let ((mut tx, _), (_, mut rx)) = pair();
        let data = vec![5u8; 100_000];
        let mut buf = [0u8; 256];
        let f =
            Request::MemcpyHtoD(MemcpyHtoD { dst: 1, stream: 0, sync: false, data: Bulk(&data) }).encode_frame(&mut buf, Flags::empty(), 1).unwrap();
        tx.send(&buf[..f.head_len], f.bulk).unwrap();
        let f = Request::Goodbye(Empty {}).encode_frame(&mut buf, Flags::empty(), 2).unwrap();
        tx.send(&buf[..f.head_len], f.bulk).unwrap();
        drop(tx);
        assert_eq!(rx.recv_head().unwrap().header.request_id, 1);
        assert_eq!(rx.recv_head().unwrap().header.request_id, 2);
        assert!(matches!(rx.recv_head(), Err(TransportError::Closed)));
    }

    #[test]
    fn unread_bytes_survive_a_handover_between_frames() {
        let ((mut tx, _), (_, mut rx)) = pair();
        let mut buf = [0u8; 128];
        for id in 1..=3 {
            let f = Request::Ping(Ping { nonce: id, payload: b"x"[..].into() }).encode_frame(&mut buf, Flags::empty(), id).unwrap();
            tx.queue(&buf[..f.head_len], f.bulk).unwrap();
        }
        tx.flush().unwrap();
        // The first read takes all three frames into the buffer; one is consumed.
        assert_eq!(rx.recv_head().unwrap().header.request_id, 1);
        let (stream, unread) = rx.into_parts().expect("between frames");
        assert!(!unread.is_empty());
        let (_, mut resumed) = from_parts(stream, &unread, Duration::ZERO).unwrap();
        assert_eq!(resumed.recv_head().unwrap().header.request_id, 2);
        assert_eq!(resumed.recv_head().unwrap().header.request_id, 3);
        drop(tx);
        assert!(matches!(resumed.recv_head(), Err(TransportError::Closed)));
    }

    #[test]
    fn hostile_length_is_refused_before_reading() {
        let ((_, _), (_, mut rx)) = {
            let l = listen("127.0.0.1:0").unwrap();
            let addr = l.local_addr().unwrap();
            let mut raw = TcpStream::connect(addr).unwrap();
            let server = split(l.accept().unwrap().0, &TcpConfig::default()).unwrap();
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
            raw.write_all(&header).unwrap();
            std::mem::forget(raw);
            (connect(&addr.to_string(), &TcpConfig::default()).unwrap(), server)
        };
        assert!(matches!(rx.recv_head(), Err(TransportError::Malformed(proto_core::DecodeError::TooLarge { .. }))));
    }
}
