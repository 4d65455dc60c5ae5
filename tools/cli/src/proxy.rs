//! `hip-remote proxy`: a user-space WAN between a client and a worker (no netem needed): a
//! one-way delay in each direction, jitter that never reorders bytes, a bandwidth cap, and a
//! count of round trips and bytes.
//!
//! Each accepted connection gets a connection to `--to` and two pumps, one per direction. A
//! pump's reader takes at most [`MAX_CHUNK`] bytes at a time, waits while the link is still
//! serialising earlier bytes (`--bandwidth`: the reader falls behind, so the sender feels the
//! cap as a real link's back-pressure), and stamps the chunk with its delivery time: when it
//! is serialised, plus the delay and a jitter sample, but never before the chunk before it
//! (bytes stay in order). Its
//! writer delivers each chunk at its time. At most [`MAX_IN_FLIGHT_CHUNKS`] chunks wait per
//! direction (as a TCP window bounds what is in flight); a new connection's first bytes are held
//! one extra round trip, what its TCP handshake (SYN, SYN-ACK) would cost.
//!
//! **Round trips**, counted over all connections of one proxy (one client: its main connection
//! and its stripes): client→worker *bursts*. A burst begins with a TCP connect (its SYN,
//! SYN-ACK), with the first client bytes after a connect, and with the first client bytes
//! after bytes were *delivered* to the client; connects back to back (stripes) are one. Posted calls sent back to back are one burst; a call
//! that waits for its reply ends the burst, so the client's next send begins a new one. A phase
//! of a program that sends once and waits once costs one round trip. Bytes that the worker
//! sends unasked (a heartbeat) and that the client answers also count; none occur in the
//! WAN benchmark's phases (the heartbeat is far longer than any phase's wait).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Bytes a pump reads at a time (and so the grain of the bandwidth cap).
pub const MAX_CHUNK: usize = 64 << 10;
/// Chunks waiting for their delivery time per direction of a connection (64 MiB at most).
pub const MAX_IN_FLIGHT_CHUNKS: usize = 1024;
/// Connections one proxy serves at once; more are refused (closed at once).
pub const MAX_CONNECTIONS: usize = 256;
/// Largest delay or jitter accepted, ms.
pub const MAX_DELAY_MS: f64 = 60_000.0;

/// The simulated link, the same in both directions.
#[derive(Clone, Copy, Debug, Default)]
pub struct Link {
    /// One-way delay (the round trip is twice this).
    pub delay: Duration,
    /// Each chunk gets an extra delay drawn uniformly from `0..=jitter` (order kept).
    pub jitter: Duration,
    /// Bytes per second in each direction; `None`: as fast as the host moves them.
    pub bandwidth: Option<f64>,
}

/// What a proxy has counted since it started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Client→worker bursts (see the module's documentation).
    pub round_trips: u64,
    /// Bytes from clients to the worker.
    pub up_bytes: u64,
    /// Bytes from the worker to clients.
    pub down_bytes: u64,
    /// Connections accepted.
    pub connections: u64,
}

impl Counts {
    /// What happened between `earlier` and `self`.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))] // wan-bench's (Linux)
    pub fn since(&self, earlier: &Counts) -> Counts {
        Counts {
            round_trips: self.round_trips - earlier.round_trips,
            up_bytes: self.up_bytes - earlier.up_bytes,
            down_bytes: self.down_bytes - earlier.down_bytes,
            connections: self.connections - earlier.connections,
        }
    }
}

const CLIENT_SENT: u8 = 1;
const CLIENT_RECEIVED: u8 = 2;
const CLIENT_CONNECTED: u8 = 3;

#[derive(Default)]
struct Counters {
    round_trips: AtomicU64,
    up_bytes: AtomicU64,
    down_bytes: AtomicU64,
    connections: AtomicU64,
    open: AtomicU64,
    /// The last event seen from the client's side: it sent, or bytes reached it.
    last: AtomicU8,
    /// When the link has serialised what it was given, per direction: one link for all
    /// connections (stripes share the bandwidth, as on a real network).
    up_free: Mutex<Option<Instant>>,
    down_free: Mutex<Option<Instant>>,
}

impl Counters {
    fn client_sends(&self) {
        if self.last.swap(CLIENT_SENT, Ordering::SeqCst) != CLIENT_SENT {
            self.round_trips.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Connects made together (stripes) are one round trip.
    fn client_connects(&self) {
        if self.last.swap(CLIENT_CONNECTED, Ordering::SeqCst) != CLIENT_CONNECTED {
            self.round_trips.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// A running proxy; stops accepting when dropped (open connections end with their peers).
pub struct Proxy {
    addr: SocketAddr,
    counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
}

impl Proxy {
    /// Listens on `listen` and forwards every connection to `to` over `link`.
    pub fn start(listen: &str, to: &str, link: Link) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind(listen)?;
        let addr = listener.local_addr()?;
        let to: SocketAddr = std::net::ToSocketAddrs::to_socket_addrs(to)?
            .next()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, format!("{to}: no address")))?;
        let counters = Arc::new(Counters::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (c, s) = (counters.clone(), stop.clone());
        std::thread::Builder::new().name("wan-proxy-accept".into()).spawn(move || accept_loop(listener, to, link, c, s))?;
        Ok(Proxy { addr, counters, stop })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn counts(&self) -> Counts {
        let c = &self.counters;
        Counts {
            round_trips: c.round_trips.load(Ordering::SeqCst),
            up_bytes: c.up_bytes.load(Ordering::SeqCst),
            down_bytes: c.down_bytes.load(Ordering::SeqCst),
            connections: c.connections.load(Ordering::SeqCst),
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so it sees the stop.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

fn accept_loop(listener: TcpListener, to: SocketAddr, link: Link, counters: Arc<Counters>, stop: Arc<AtomicBool>) {
    let seed = AtomicU64::new(0x9e37_79b9_7f4a_7c15 ^ u64::from(std::process::id()));
    for client in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        if counters.open.load(Ordering::SeqCst) >= MAX_CONNECTIONS as u64 {
            eprintln!("hip-remote proxy: {MAX_CONNECTIONS} connections open already; refusing one");
            continue;
        }
        let accepted = Instant::now();
        // A TCP connect is a round trip of its own (SYN, SYN-ACK): the client's first bytes
        // on it begin the next one.
        counters.client_connects();
        counters.connections.fetch_add(1, Ordering::SeqCst);
        let worker = match TcpStream::connect(to) {
            Ok(w) => w,
            Err(e) => {
                eprintln!("hip-remote proxy: cannot connect to {to}: {e}");
                continue;
            }
        };
        let _ = client.set_nodelay(true);
        let _ = worker.set_nodelay(true);
        counters.open.fetch_add(1, Ordering::SeqCst);
        let seed = seed.fetch_add(0x2545_f491_4f6c_dd1d, Ordering::SeqCst);
        let started = (|| -> std::io::Result<()> {
            // The TCP handshake's round trip (SYN, SYN-ACK), which the host did at loopback
            // speed: the client's first bytes leave one round trip after its connect.
            let handshake = accepted + 2 * link.delay;
            let open = Arc::new(AtomicU8::new(2));
            pump(client.try_clone()?, worker.try_clone()?, link, Direction::Up, handshake, seed, counters.clone(), open.clone())?;
            pump(worker, client, link, Direction::Down, accepted, seed ^ 1, counters.clone(), open)
        })();
        if let Err(e) = started {
            eprintln!("hip-remote proxy: cannot serve a connection: {e}");
            counters.open.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Direction {
    /// Client to worker.
    Up,
    /// Worker to client.
    Down,
}

/// Starts the reader and writer of one direction. `not_before`: when the first bytes may
/// leave (the client's end of a new connection is up one round trip after its connect).
/// `open`: pumps of the connection still running (the last one closes its count).
#[allow(clippy::too_many_arguments)]
fn pump(
    src: TcpStream,
    dst: TcpStream,
    link: Link,
    dir: Direction,
    not_before: Instant,
    seed: u64,
    counters: Arc<Counters>,
    open: Arc<AtomicU8>,
) -> std::io::Result<()> {
    let (tx, rx) = sync_channel::<(Instant, Vec<u8>)>(MAX_IN_FLIGHT_CHUNKS);
    let src_for_writer = src.try_clone()?;
    let c = counters.clone();
    std::thread::Builder::new().name(format!("wan-proxy-{dir:?}-read")).spawn(move || read_side(src, link, dir, not_before, seed, &c, tx))?;
    std::thread::Builder::new().name(format!("wan-proxy-{dir:?}-write")).spawn(move || {
        write_side(dst, src_for_writer, dir, &counters, rx);
        if open.fetch_sub(1, Ordering::SeqCst) == 1 {
            counters.open.fetch_sub(1, Ordering::SeqCst);
        }
    })?;
    Ok(())
}

fn read_side(
    mut src: TcpStream,
    link: Link,
    dir: Direction,
    not_before: Instant,
    seed: u64,
    counters: &Counters,
    tx: SyncSender<(Instant, Vec<u8>)>,
) {
    let mut rng = seed | 1;
    let mut serialised;
    let mut last_delivery = not_before;
    // At most 2 ms of the link per chunk, so the cap is smooth at low rates.
    let chunk = link.bandwidth.map_or(MAX_CHUNK, |bw| ((bw * 0.002) as usize).clamp(1500, MAX_CHUNK));
    let mut buf = vec![0u8; chunk];
    loop {
        let n = match src.read(&mut buf) {
            Ok(0) | Err(_) => return, // dropping `tx` tells the writer
            Ok(n) => n,
        };
        match dir {
            Direction::Up => {
                counters.client_sends();
                counters.up_bytes.fetch_add(n as u64, Ordering::SeqCst);
            }
            Direction::Down => {
                counters.down_bytes.fetch_add(n as u64, Ordering::SeqCst);
            }
        }
        // Bytes leave no earlier than the (simulated) connection is up.
        let now = Instant::now().max(not_before);
        if let Some(bw) = link.bandwidth {
            let free = if dir == Direction::Up { &counters.up_free } else { &counters.down_free };
            let mut free = free.lock().unwrap_or_else(|p| p.into_inner());
            serialised = free.map_or(now, |f| f.max(now)) + Duration::from_secs_f64(n as f64 / bw);
            *free = Some(serialised);
            drop(free);
            let real_now = Instant::now();
            if serialised > real_now {
                std::thread::sleep(serialised - real_now);
            }
        } else {
            serialised = now;
        }
        let jitter = if link.jitter.is_zero() {
            Duration::ZERO
        } else {
            rng ^= rng >> 12;
            rng ^= rng << 25;
            rng ^= rng >> 27;
            link.jitter.mul_f64((rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64)
        };
        last_delivery = last_delivery.max(serialised + link.delay + jitter);
        if tx.send((last_delivery, buf[..n].to_vec())).is_err() {
            return;
        }
    }
}

fn write_side(mut dst: TcpStream, src: TcpStream, dir: Direction, counters: &Counters, rx: Receiver<(Instant, Vec<u8>)>) {
    while let Ok((at, bytes)) = rx.recv() {
        let now = Instant::now();
        if at > now {
            std::thread::sleep(at - now);
        }
        // Marked before the write: once the bytes are out, the client may already answer, and
        // its send must find them received (marked after, a busy machine lost that round trip).
        if dir == Direction::Down {
            counters.last.store(CLIENT_RECEIVED, Ordering::SeqCst);
        }
        if dst.write_all(&bytes).is_err() {
            // The peer is gone: the other side stops reading too.
            let _ = src.shutdown(Shutdown::Both);
            return;
        }
    }
    let _ = dst.shutdown(Shutdown::Write);
}

/// Parses a rate: a number with `bit`, `kbit`, `mbit`, `gbit` (bits per second) or `B`, `KB`,
/// `MB`, `GB` (bytes per second, decimal; `/s` optional); a bare number is bytes per second.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let t = text.trim().to_ascii_lowercase();
    let t = t.strip_suffix("/s").or_else(|| t.strip_suffix("ps")).unwrap_or(&t);
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number.parse().map_err(|_| format!("{text:?}: want a rate such as 100mbit, 1gbit or 50MB"))?;
    let scale = match unit.trim() {
        "" | "b" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "bit" => 1.0 / 8.0,
        "kbit" => 1e3 / 8.0,
        "mbit" => 1e6 / 8.0,
        "gbit" => 1e9 / 8.0,
        other => return Err(format!("{text:?}: unknown unit {other:?} (bit, kbit, mbit, gbit, B, KB, MB, GB)")),
    };
    let rate = value * scale;
    if !(rate.is_finite() && rate >= 1000.0) {
        return Err(format!("{text:?}: give at least 1000 bytes per second"));
    }
    Ok(rate)
}

/// Milliseconds as a duration, checked against [`MAX_DELAY_MS`].
pub fn millis(what: &str, ms: f64) -> Result<Duration, String> {
    if !(0.0..=MAX_DELAY_MS).contains(&ms) {
        return Err(format!("--{what} {ms}: give 0 to {MAX_DELAY_MS} ms"));
    }
    Ok(Duration::from_secs_f64(ms / 1e3))
}

/// The `proxy` command: serves until killed, printing the counts whenever they change.
pub fn serve(listen: &str, to: &str, link: Link) -> Result<(), String> {
    let proxy = Proxy::start(listen, to, link).map_err(|e| format!("proxy {listen} -> {to}: {e}"))?;
    eprintln!(
        "hip-remote proxy: {} -> {to}, one-way delay {:?} (+0..{:?} jitter), bandwidth {}",
        proxy.local_addr(),
        link.delay,
        link.jitter,
        link.bandwidth.map_or("unlimited".to_string(), |b| format!("{:.1} MB/s", b / 1e6))
    );
    let printed = Mutex::new(Counts::default());
    loop {
        std::thread::sleep(Duration::from_secs(1));
        let now = proxy.counts();
        let mut last = printed.lock().unwrap_or_else(|p| p.into_inner());
        if now != *last {
            eprintln!("round trips {}  up {} B  down {} B  connections {}", now.round_trips, now.up_bytes, now.down_bytes, now.connections);
            *last = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An echo server; its address.
    fn echo() -> SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                std::thread::spawn(move || {
                    let mut s = s;
                    let mut r = s.try_clone().unwrap();
                    let _ = std::io::copy(&mut r, &mut s);
                });
            }
        });
        addr
    }

    fn exchange(s: &mut TcpStream, len: usize) -> Duration {
        let data: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
        let t = Instant::now();
        s.write_all(&data).unwrap();
        let mut back = vec![0u8; len];
        s.read_exact(&mut back).unwrap();
        assert_eq!(back, data, "bytes come back in order and intact");
        t.elapsed()
    }

    #[test]
    fn delay_is_honoured_and_round_trips_counted() {
        let link = Link { delay: Duration::from_millis(20), ..Link::default() };
        let proxy = Proxy::start("127.0.0.1:0", &echo().to_string(), link).unwrap();
        let mut s = TcpStream::connect(proxy.local_addr()).unwrap();
        s.set_nodelay(true).unwrap();
        // The first exchange also pays the simulated TCP handshake.
        let first = exchange(&mut s, 100);
        assert!(first >= Duration::from_millis(80), "connect + exchange took {first:?}, want ≥ 2 round trips of 40 ms");
        let mut times = Vec::new();
        for _ in 0..3 {
            times.push(exchange(&mut s, 100));
        }
        for t in &times {
            assert!(*t >= Duration::from_millis(40) && *t < Duration::from_millis(400), "one exchange took {t:?}, want 40 ms (+ slack)");
        }
        // Connect, then 4 exchanges.
        assert_eq!(proxy.counts().round_trips, 5);
        assert_eq!(proxy.counts().up_bytes, 400);
        assert_eq!(proxy.counts().connections, 1);
    }

    #[test]
    fn jitter_keeps_byte_order() {
        let link = Link { delay: Duration::from_millis(1), jitter: Duration::from_millis(5), bandwidth: Some(20e6) };
        let proxy = Proxy::start("127.0.0.1:0", &echo().to_string(), link).unwrap();
        let mut s = TcpStream::connect(proxy.local_addr()).unwrap();
        // Many small writes, each its own chunk with its own jitter sample.
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let mut w = s.try_clone().unwrap();
        let sent = data.clone();
        let writer = std::thread::spawn(move || {
            for c in sent.chunks(997) {
                w.write_all(c).unwrap();
            }
        });
        let mut back = vec![0u8; data.len()];
        s.read_exact(&mut back).unwrap();
        writer.join().unwrap();
        assert!(back == data, "bytes reordered or changed");
    }

    #[test]
    fn bandwidth_cap_is_honoured() {
        // 2 MB at 10 MB/s each way: ≥ 0.2 s (both directions pipeline), vs milliseconds
        // uncapped.
        let len = 2_000_000;
        let capped = Proxy::start("127.0.0.1:0", &echo().to_string(), Link { bandwidth: Some(10e6), ..Link::default() }).unwrap();
        let mut s = TcpStream::connect(capped.local_addr()).unwrap();
        let mut r = s.try_clone().unwrap();
        let data: Vec<u8> = vec![0x5a; len];
        let t = Instant::now();
        let writer = std::thread::spawn(move || s.write_all(&data).unwrap());
        let mut back = vec![0u8; len];
        r.read_exact(&mut back).unwrap();
        writer.join().unwrap();
        let took = t.elapsed().as_secs_f64();
        let rate = len as f64 / took;
        assert!(rate <= 10e6 * 1.25, "{rate:.0} B/s through a 10 MB/s link");
        assert!(rate >= 10e6 * 0.3, "{rate:.0} B/s through a 10 MB/s link: far below the cap");
    }

    #[test]
    fn rates_parse() {
        assert_eq!(parse_rate("100mbit").unwrap(), 12.5e6);
        assert_eq!(parse_rate("1gbit").unwrap(), 125e6);
        assert_eq!(parse_rate("50MB/s").unwrap(), 50e6);
        assert_eq!(parse_rate("4000").unwrap(), 4000.0);
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("10 furlongs").is_err());
        assert!(parse_rate("1").is_err());
    }
}
