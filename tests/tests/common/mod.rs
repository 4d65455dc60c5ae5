//! What the session and attack tests share: a worker on a host backend (in memory or over
//! TCP), the real client session (`client_core::ClientSession`) driven over a connection to it,
//! a [`hostile_peer`] for frames no real client sends, and the bystander check that a scenario
//! left the worker serving others with its memory back.
#![allow(dead_code)] // each test crate uses a part

pub mod hostile_peer;

#[allow(unused_imports)] // each test crate uses a part
pub use hostile_peer::{raw_header, HostilePeer};

use client_core::{CallError, ClientSession, Expect, Inbound, SessionConfig as ClientConfig};
use hip_worker::auth::TokenStore;
use hip_worker::backend::{HostBackend, HostConfig};
use hip_worker::config::ConnectionLimits;
use hip_worker::session::SessionConfig;
use hip_worker::{Worker, WorkerConfig};
use proto_core::auth::{auth_response, AuthContext, AUTH_NONCE_LEN};
use proto_core::wire::{self, ErrorReply};
use proto_core::PROTOCOL_VERSION;
use proto_core::{Bulk, Flags, FrameHeader, Message, Request, Response, Status};
use std::sync::Arc;
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use transport_core::{FrameSink, FrameSource, TransportError};
use transport_tcp::TcpConfig;

pub const DEVICE_BYTES: u64 = 256 << 20;

/// The worker under test: one backend; each client gets its own session on an in-memory
/// connection, or connects over TCP when the worker has a listener.
pub struct TestWorker {
    pub backend: Arc<HostBackend>,
    pub config: WorkerConfig,
    pub sessions: Mutex<Vec<JoinHandle<()>>>,
    pub tcp: Option<Worker>,
}

impl TestWorker {
    pub fn in_memory(config: WorkerConfig) -> Self {
        Self::in_memory_devices(config, 1)
    }

    /// An in-memory worker emulating `devices` devices.
    pub fn in_memory_devices(config: WorkerConfig, devices: u32) -> Self {
        let backend =
            Arc::new(HostBackend::new(HostConfig { devices, memory_per_device: DEVICE_BYTES, allow_host_code: true, ..HostConfig::default() }));
        Self { backend, config, sessions: Mutex::default(), tcp: None }
    }

    pub fn tcp(config: WorkerConfig) -> Self {
        let mut worker = Self::in_memory(config);
        worker.tcp = Some(Worker::start("127.0.0.1:0", worker.backend.clone(), worker.config.clone()).expect("start worker"));
        worker
    }

    pub fn connect(&self) -> (Box<dyn FrameSink>, Box<dyn FrameSource>) {
        if let Some(tcp) = &self.tcp {
            let cfg = TcpConfig { io_timeout: Some(Duration::from_secs(20)), ..TcpConfig::default() };
            let (sink, source) = transport_tcp::connect(&tcp.local_addr().to_string(), &cfg).expect("connect");
            return (Box::new(sink), Box::new(source));
        }
        let (sink, source, thread) = hip_worker::server::serve_in_memory(self.backend.clone(), self.config.clone()).expect("session thread");
        self.sessions.lock().unwrap().push(thread);
        (Box::new(sink), Box::new(source))
    }

    /// Waits for every session to end (their clients are gone) and stops the listener.
    pub fn shutdown(self) {
        for thread in self.sessions.into_inner().unwrap() {
            thread.join().expect("session thread");
        }
        if let Some(tcp) = self.tcp {
            tcp.shutdown();
        }
    }
}

pub fn config_with(auth_token: Option<&str>) -> WorkerConfig {
    let tokens = auth_token.map(|t| Arc::new(TokenStore::new(Some(t), None).expect("token store")));
    WorkerConfig {
        session: SessionConfig { worker_name: "session-test worker".into(), tokens, ..Default::default() },
        tcp: TcpConfig { io_timeout: Some(Duration::from_secs(30)), ..TcpConfig::default() },
        limits: ConnectionLimits::default(),
        ..Default::default()
    }
}

pub fn start_worker_with(auth_token: Option<&str>) -> TestWorker {
    TestWorker::in_memory(config_with(auth_token))
}

pub fn start_worker() -> TestWorker {
    start_worker_with(None)
}

/// One received frame, owned.
#[derive(Debug)]
pub struct Reply {
    pub header: FrameHeader,
    pub control: Vec<u8>,
    pub bulk: Vec<u8>,
    /// What the real client session made of the frame (`None`: read by a hostile peer).
    pub outcome: Option<Result<Inbound, CallError>>,
}

impl Reply {
    pub fn is_error(&self) -> bool {
        self.header.flags.contains(Flags::ERROR)
    }

    /// The error reply's status and message; panics on a success response.
    pub fn error(&self) -> (Status, String) {
        assert!(self.is_error(), "expected an error reply, got {:?}", self.header);
        assert!(self.header.flags.contains(Flags::RESPONSE), "error reply without RESPONSE: {:?}", self.header);
        assert!(self.bulk.is_empty(), "error reply with bulk data");
        let reply = ErrorReply::parse(&self.control, &[]).expect("ErrorReply parses");
        let (status, message) = (reply.status, reply.message.as_str().to_owned());
        // The client session saw the same error (unless nobody waited for the frame).
        let seen = match &self.outcome {
            Some(Err(e)) | Some(Ok(Inbound::Reply(_, Err(e)))) | Some(Ok(Inbound::Failed(_, e))) => Some(e),
            _ => None,
        };
        if let Some(e) = seen {
            assert_eq!(e.code, client_core::status_to_hip(status), "the client session's code for {status:?}");
            assert_eq!(e.message, message, "the client session's message");
        }
        (status, message)
    }

    /// The success response (as the response to `opcode`); panics on an error reply.
    pub fn response(&self) -> Response<'_> {
        if self.is_error() {
            panic!("expected a success response, got error {:?}", self.error());
        }
        assert!(self.header.flags.contains(Flags::RESPONSE), "not a response: {:?}", self.header);
        Response::parse(self.header.opcode, &self.control, &self.bulk).expect("response parses")
    }
}

/// The real client session ([`ClientSession`]) driven over one connection: it numbers and
/// encodes every request and matches every frame that comes back, as `libamdhip64`'s driver
/// does; this driver only moves the bytes and keeps each frame for the test to inspect.
pub struct SessionDriver {
    pub session: ClientSession,
    peer: HostilePeer,
}

impl SessionDriver {
    pub fn connect(worker: &TestWorker) -> Self {
        let (sink, source) = worker.connect();
        Self::over(sink, source)
    }

    /// Over a connection made elsewhere (TLS, a same-host socket, a worker process).
    pub fn over(sink: Box<dyn FrameSink>, source: Box<dyn FrameSource>) -> Self {
        let config = ClientConfig {
            heartbeat: transport_core::config::DEFAULT_HEARTBEAT,
            liveness_timeout: transport_core::config::DEFAULT_LIVENESS_TIMEOUT,
            call_timeout: None,
        };
        Self { session: ClientSession::new(config), peer: HostilePeer::over(sink, source) }
    }

    /// A connected client that has completed the handshake.
    pub fn greeted(worker: &TestWorker) -> Self {
        let mut c = Self::connect(worker);
        let reply = c.call(&hello(PROTOCOL_VERSION, PROTOCOL_VERSION, ""));
        match reply.response() {
            Response::Hello(w) => {
                assert_eq!(w.version, PROTOCOL_VERSION);
                assert_ne!(w.session_id, 0);
                assert_eq!(w.worker_name.as_str(), "session-test worker");
            }
            other => panic!("HELLO answered with {other:?}"),
        }
        c
    }

    /// This connection as a hostile peer: hand-made frames, ids of the test's choosing.
    pub fn hostile(&mut self) -> &mut HostilePeer {
        &mut self.peer
    }

    /// Submits `req` to the client session (`flags`: empty, or `NO_REPLY` for fire-and-forget)
    /// and sends the frame; returns its request id.
    pub fn send(&mut self, req: &Request<'_>, flags: Flags) -> u64 {
        let expect = match flags {
            f if f == Flags::empty() => Expect::Reply,
            f if f == Flags::NO_REPLY => Expect::NoReply,
            other => panic!("a client sends no {other:?} frame: use hostile()"),
        };
        let submitted = self.session.submit(req, expect).unwrap_or_else(|e| panic!("submit {:?}: {e:?}", req.opcode()));
        self.peer.sink.send(submitted.head, submitted.bulk).expect("send");
        submitted.ticket.request_id()
    }

    /// [`Self::send`] of a frame the worker may refuse while it is still being written: it may
    /// close the connection after the header, and the rest of the write then fails
    /// (`ECONNRESET`, `EPIPE`). The test checks the closure itself.
    pub fn send_may_be_cut(&mut self, req: &Request<'_>, flags: Flags) {
        let expect = if flags == Flags::NO_REPLY { Expect::NoReply } else { Expect::Reply };
        let submitted = self.session.submit(req, expect).unwrap_or_else(|e| panic!("submit {:?}: {e:?}", req.opcode()));
        let _ = self.peer.sink.send(submitted.head, submitted.bulk);
    }

    /// Submits a fire-and-forget request and queues its frame in the sink's coalescing
    /// buffer: the next [`Self::send`] sends it first (as the client library batches).
    pub fn post(&mut self, req: &Request<'_>) -> u64 {
        let submitted = self.session.submit(req, Expect::NoReply).unwrap_or_else(|e| panic!("submit {:?}: {e:?}", req.opcode()));
        self.peer.sink.queue(submitted.head, submitted.bulk).expect("queue");
        submitted.ticket.request_id()
    }

    /// The next frame, handed to the client session first.
    pub fn try_recv(&mut self) -> Result<Reply, TransportError> {
        let mut reply = self.peer.try_recv()?;
        reply.outcome = Some(self.session.handle_frame(Instant::now(), &reply.header, &reply.control));
        Ok(reply)
    }

    pub fn recv(&mut self) -> Reply {
        self.try_recv().expect("receive a frame")
    }

    /// Sends `req` and returns the frame answering it (which must be the next one).
    pub fn call(&mut self, req: &Request<'_>) -> Reply {
        let id = self.send(req, Flags::empty());
        let reply = self.recv();
        assert_eq!(reply.header.request_id, id, "reply to another request: {:?}", reply.header);
        assert_eq!(reply.header.opcode, req.opcode().raw(), "reply with another opcode: {:?}", reply.header);
        match &reply.outcome {
            Some(Ok(Inbound::Reply(ticket, result))) => {
                assert_eq!(ticket.request_id(), id);
                assert_eq!(result.is_err(), reply.is_error(), "the client session read the reply otherwise: {result:?}");
            }
            other => panic!("the client session did not take frame {:?} as the reply: {other:?}", reply.header),
        }
        reply
    }

    /// The worker has closed the connection: the next read ends.
    pub fn expect_closed(&mut self) {
        self.peer.expect_closed()
    }

    pub fn ping(&mut self, nonce: u64) -> Reply {
        let reply = self.call(&Request::Ping(wire::Ping { nonce, payload: b"ping".as_slice().into() }));
        match reply.response() {
            Response::Ping(p) => {
                assert_eq!(p.nonce, nonce);
                assert_eq!(p.payload.0, b"ping");
            }
            other => panic!("PING answered with {other:?}"),
        }
        reply
    }

    pub fn malloc(&mut self, size: u64) -> u64 {
        match self.call(&Request::Malloc(wire::Malloc { device: 0, size, flags: 0 })).response() {
            Response::Malloc(a) => a.ptr,
            other => panic!("Malloc answered with {other:?}"),
        }
    }

    pub fn free_mem(&mut self) -> u64 {
        match self.call(&Request::MemGetInfo(wire::DeviceRef { device: 0 })).response() {
            Response::MemGetInfo(m) => {
                assert_eq!(m.total, DEVICE_BYTES);
                m.free
            }
            other => panic!("MemGetInfo answered with {other:?}"),
        }
    }

    /// A full malloc / upload / download / free round trip of 100 000 bytes.
    pub fn round_trip(&mut self, seed: u8) {
        self.round_trip_of(100_000, seed)
    }

    /// A malloc / upload / download (compared) / free round trip of `len` bytes.
    pub fn round_trip_of(&mut self, len: usize, seed: u8) {
        let data: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect();
        let ptr = self.malloc(data.len() as u64);
        let r = self.call(&Request::MemcpyHtoD(wire::MemcpyHtoD { dst: ptr, stream: 0, sync: true, data: Bulk(&data) }));
        assert!(matches!(r.response(), Response::MemcpyHtoD(_)));
        let r = self.call(&Request::MemcpyDtoH(wire::MemcpyDtoH { src: ptr, len: data.len() as u64, stream: 0 }));
        match r.response() {
            Response::MemcpyDtoH(d) => assert!(d.data.0 == data.as_slice(), "downloaded bytes differ"),
            other => panic!("MemcpyDtoH answered with {other:?}"),
        }
        let r = self.call(&Request::Free(wire::Free { ptr }));
        assert!(matches!(r.response(), Response::Free(_)));
    }
}

pub fn hello<'a>(min_version: u16, max_version: u16, token: &'a str) -> Request<'a> {
    Request::Hello(wire::Hello {
        min_version,
        max_version,
        features: wire::features::FIRE_AND_FORGET | wire::features::BULK_STREAMING,
        client_name: "session.rs".into(),
        resume_session: 0,
        auth_token: token.as_bytes().into(),
    })
}

/// Runs `scenario` on a fresh worker while a bystander session stays connected; checks the
/// bystander is still served afterwards and that the worker's memory is back to where it was
/// once every scenario connection is gone.
pub fn with_bystander(scenario: impl FnOnce(&TestWorker)) {
    with_bystander_on(start_worker(), scenario)
}

pub fn with_bystander_on(worker: TestWorker, scenario: impl FnOnce(&TestWorker)) {
    let mut bystander = SessionDriver::greeted(&worker);
    bystander.round_trip(1);
    let free_before = bystander.free_mem();
    scenario(&worker);
    bystander.ping(99);
    bystander.round_trip(2);
    // Sessions of closed connections are released asynchronously (their threads notice the
    // close); give them a moment.
    let mut free = bystander.free_mem();
    for _ in 0..200 {
        if free == free_before {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
        free = bystander.free_mem();
    }
    assert_eq!(free, free_before, "memory of the scenario's sessions was not released");
    drop(bystander);
    worker.shutdown();
}

/// The HELLO of `greeted`, answered by AUTHENTICATE with `token`'s HMAC over the WELCOME.
pub fn authenticate(c: &mut SessionDriver, token: &[u8]) -> Reply {
    let reply = c.call(&hello(PROTOCOL_VERSION, PROTOCOL_VERSION, ""));
    let response = match reply.response() {
        Response::Hello(w) => {
            assert_ne!(w.features & wire::features::AUTH_REQUIRED, 0, "the worker must ask for authentication");
            assert_eq!(w.auth_challenge.0.len(), AUTH_NONCE_LEN);
            auth_response(
                token,
                &AuthContext {
                    nonce: w.auth_challenge.0,
                    session_id: w.session_id,
                    client_name: "session.rs",
                    version: w.version,
                    features: w.features,
                },
            )
        }
        other => panic!("HELLO answered with {other:?}"),
    };
    c.call(&Request::Authenticate(wire::Authenticate { response: response.as_slice().into() }))
}

/// Bytes each flooding memset writes.
pub const FLOOD_BYTES: u64 = 32 << 20;

impl SessionDriver {
    pub fn stream_create(&mut self, flags: u32) -> u64 {
        match self.call(&Request::StreamCreate(wire::StreamCreate { device: 0, flags, priority: 0 })).response() {
            Response::StreamCreate(s) => s.stream,
            other => panic!("StreamCreate answered with {other:?}"),
        }
    }

    pub fn memset(&mut self, dst: u64, count: u64, stream: u64, flags: Flags) -> u64 {
        self.send(&Request::Memset(wire::Memset { dst, value: 0x5a, width: wire::MemsetWidth::Byte, count, stream, sync: false }), flags)
    }

    /// Queues fire-and-forget memsets of [`FLOOD_BYTES`] at `ptr` on `stream` worth about
    /// `busy` of work (timed from one synchronous memset first).
    pub fn flood(&mut self, ptr: u64, stream: u64, busy: Duration) {
        let mut memset = || {
            let started = std::time::Instant::now();
            let r = self.call(&Request::Memset(wire::Memset {
                dst: ptr,
                value: 1,
                width: wire::MemsetWidth::Byte,
                count: FLOOD_BYTES,
                stream: 0,
                sync: true,
            }));
            assert!(matches!(r.response(), Response::Memset(_)));
            started.elapsed()
        };
        memset(); // the first touches fresh pages: slower than the rest
                  // The fastest of several: a busy machine slows some of them (then too few would be
                  // queued and the work would end early).
        let one = (0..5).map(|_| memset()).min().unwrap_or_default().max(Duration::from_micros(100));
        let count = (busy.as_secs_f64() / one.as_secs_f64()).ceil() as usize;
        for _ in 0..count.min(100_000) {
            self.memset(ptr, FLOOD_BYTES, stream, Flags::NO_REPLY);
        }
    }

    /// A synchronous 4 KiB upload and download on the null stream; returns how long it took.
    pub fn small_sync_copy(&mut self, ptr: u64) -> Duration {
        let started = std::time::Instant::now();
        let data = [7u8; 4096];
        let r = self.call(&Request::MemcpyHtoD(wire::MemcpyHtoD { dst: ptr, stream: 0, sync: true, data: Bulk(&data) }));
        assert!(matches!(r.response(), Response::MemcpyHtoD(_)));
        let r = self.call(&Request::MemcpyDtoH(wire::MemcpyDtoH { src: ptr, len: 4096, stream: 0 }));
        assert!(matches!(r.response(), Response::MemcpyDtoH(d) if d.data.0 == data.as_slice()));
        started.elapsed()
    }
}

/// This process's resident memory (the worker runs in it).
pub fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    kib.unwrap_or(0) * 1024
}
