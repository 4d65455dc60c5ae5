//! Striped TCP bulk at the protocol level, over a TCP worker on a host backend: a session's
//! stripes carry large copies both ways (chunk schedule, offsets, sizes that are not a
//! multiple of the chunk); refused grants and joins; and hostile stripes — a wrong key, an
//! unknown session, an index beyond the grant or joined twice, a chunk out of step, a chunk
//! on the main connection — are refused while the worker serves others.

mod common;

use common::{config_with, hello, with_bystander_on, SessionDriver, TestWorker};
use hip_worker::backend::HostConfig;
use hip_worker::sandbox::SessionProcess;
use hip_worker::WorkerConfig;
use proto_core::wire::{self, stripe_chunks};
use proto_core::{Bulk, Flags, Message, Opcode, Request, Response, Status, PROTOCOL_VERSION};
use std::sync::Arc;

/// A session that asked for stripes and joined them.
struct Striped {
    main: SessionDriver,
    stripes: Vec<SessionDriver>,
    chunk_bytes: u64,
    next_copy: u64,
}

/// HELLO with `STRIPED_BULK`: the WELCOME's features and session id.
fn greet_striped(worker: &TestWorker) -> (SessionDriver, u64, u64) {
    let mut main = SessionDriver::connect(worker);
    let mut req = hello(PROTOCOL_VERSION, PROTOCOL_VERSION, "");
    if let Request::Hello(h) = &mut req {
        h.features |= wire::features::STRIPED_BULK;
    }
    let (features, session_id) = match main.call(&req).response() {
        Response::Hello(w) => (w.features, w.session_id),
        other => panic!("HELLO answered with {other:?}"),
    };
    (main, features, session_id)
}

/// `StripesOpen { count }`: granted, chunk size, key.
fn open_stripes(main: &mut SessionDriver, count: u32) -> (u32, u64, Vec<u8>) {
    match main.call(&Request::StripesOpen(wire::StripesOpen { count })).response() {
        Response::StripesOpen(g) => (g.granted, g.chunk_bytes, g.join_key.0.to_vec()),
        other => panic!("StripesOpen answered with {other:?}"),
    }
}

/// A new connection's `StripeJoin`: the reply.
fn join(worker: &TestWorker, session_id: u64, index: u32, key: &[u8]) -> (SessionDriver, common::Reply) {
    let mut c = SessionDriver::connect(worker);
    let reply = c.call(&Request::StripeJoin(wire::StripeJoin { session_id, index, join_key: key.into() }));
    (c, reply)
}

impl Striped {
    fn open(worker: &TestWorker, count: u32) -> Self {
        let (mut main, features, session_id) = greet_striped(worker);
        assert_ne!(features & wire::features::STRIPED_BULK, 0, "the worker offers stripes");
        let (granted, chunk_bytes, key) = open_stripes(&mut main, count);
        assert_eq!(granted, count);
        assert_eq!(key.len(), wire::STRIPE_JOIN_KEY_LEN);
        let stripes = (0..granted)
            .map(|index| {
                let (c, reply) = join(worker, session_id, index, &key);
                assert!(matches!(reply.response(), Response::StripeJoin(_)), "join {index}");
                c
            })
            .collect();
        Self { main, stripes, chunk_bytes, next_copy: 1 }
    }

    fn copy_id(&mut self) -> u64 {
        self.next_copy += 1;
        self.next_copy
    }

    /// Sends the chunks of upload `copy_id` of `data` on every stripe, as the schedule says.
    fn send_chunks(&mut self, copy_id: u64, data: &[u8]) {
        let n = self.stripes.len() as u32;
        for (index, stripe) in (0..n).zip(&mut self.stripes) {
            for (offset, len) in stripe_chunks(data.len() as u64, self.chunk_bytes, n, index) {
                let chunk = &data[offset as usize..(offset + len) as usize];
                stripe.send(&Request::StripeChunk(wire::StripeChunk { copy_id, offset, data: Bulk(chunk) }), Flags::NO_REPLY);
            }
        }
    }

    /// A striped upload of `data` to `dst`: the main connection's reply.
    fn upload(&mut self, dst: u64, data: &[u8]) -> common::Reply {
        let copy_id = self.copy_id();
        let req = wire::MemcpyHtoDStriped { dst, len: data.len() as u64, stream: 0, sync: true, copy_id, stripes: self.stripes.len() as u32 };
        let id = self.main.send(&Request::MemcpyHtoDStriped(req), Flags::empty());
        self.send_chunks(copy_id, data);
        let reply = self.main.recv();
        assert_eq!((reply.header.request_id, reply.header.opcode), (id, Opcode::MemcpyHtoDStriped.raw()));
        reply
    }

    /// A striped download of `len` bytes at `src`: the bytes, or the error the main
    /// connection answered (every chunk then came as an error frame).
    fn download(&mut self, src: u64, len: usize) -> Result<Vec<u8>, (Status, String)> {
        let copy_id = self.copy_id();
        let n = self.stripes.len() as u32;
        let req = wire::MemcpyDtoHStriped { src, len: len as u64, stream: 0, copy_id, stripes: n };
        let id = self.main.send(&Request::MemcpyDtoHStriped(req), Flags::empty());
        let mut out = vec![0u8; len];
        let mut chunk_errors = 0;
        for (index, stripe) in (0..n).zip(&mut self.stripes) {
            for (offset, size) in stripe_chunks(len as u64, self.chunk_bytes, n, index) {
                let frame = stripe.recv();
                assert_eq!((frame.header.opcode, frame.header.request_id), (Opcode::StripeChunk.raw(), copy_id));
                if frame.is_error() {
                    chunk_errors += 1;
                    continue;
                }
                assert!(frame.header.flags.contains(Flags::RESPONSE));
                let c = wire::StripeChunk::parse(&frame.control, &[]).expect("chunk parses");
                assert_eq!((c.copy_id, c.offset), (copy_id, offset));
                assert_eq!(frame.bulk.len() as u64, size);
                out[offset as usize..(offset + size) as usize].copy_from_slice(&frame.bulk);
            }
        }
        let reply = self.main.recv();
        assert_eq!((reply.header.request_id, reply.header.opcode), (id, Opcode::MemcpyDtoHStriped.raw()));
        if reply.is_error() {
            assert!(chunk_errors > 0 || len == 0, "a failed download sends error chunks");
            return Err(reply.error());
        }
        assert_eq!(chunk_errors, 0);
        Ok(out)
    }
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3] ^ seed).collect()
}

/// Uploads and downloads over 3 stripes, sizes around the chunk, at offsets into one
/// allocation; the bytes checked through the main connection's ordinary copy too.
#[test]
fn striped_copies_carry_the_bytes_both_ways() {
    with_bystander_on(TestWorker::tcp(config_with(None)), carry_the_bytes_both_ways);
}

/// The same in session processes: the worker hands each stripe to the session's process.
#[test]
fn striped_copies_carry_the_bytes_both_ways_in_session_processes() {
    with_bystander_on(in_session_processes(), carry_the_bytes_both_ways);
}

/// A TCP worker whose sessions run in session processes (the built `hip-worker`), which are
/// handed their connections and their stripes.
fn in_session_processes() -> TestWorker {
    let host = HostConfig { devices: 1, memory_per_device: common::DEVICE_BYTES, allow_host_code: true, ..HostConfig::default() };
    let mut process =
        SessionProcess::new(hip_worker::sandbox::BackendSpec::Host(host), host.devices, "nobody", "warn", 64).expect("session processes");
    process.exe = hip_remote_tests::artifacts().worker;
    TestWorker::tcp(WorkerConfig { session_process: Some(Arc::new(process)), ..config_with(None) })
}

fn carry_the_bytes_both_ways(worker: &TestWorker) {
    {
        let mut s = Striped::open(worker, 3);
        let chunk = s.chunk_bytes as usize;
        let base = s.main.malloc(48 << 20);
        for (i, (offset, len)) in [(0, chunk), (5, 3 * chunk + 12_345), (1000, 7 * chunk + 1), (3, 100), (0, 0)].into_iter().enumerate() {
            let data = pattern(len, i as u8);
            let reply = s.upload(base + offset, &data);
            assert!(matches!(reply.response(), Response::MemcpyHtoDStriped(_)), "upload of {len}");
            assert_eq!(s.download(base + offset, len).expect("download"), data, "{len} bytes at {offset}");
            if len > 0 {
                let r = s.main.call(&Request::MemcpyDtoH(wire::MemcpyDtoH { src: base + offset, len: len.min(1 << 20) as u64, stream: 0 }));
                match r.response() {
                    Response::MemcpyDtoH(d) => assert!(d.data.0 == &data[..len.min(1 << 20)]),
                    other => panic!("{other:?}"),
                }
            }
        }
    }
}

/// A refused copy (outside the session's memory) is answered with an error; its chunks are
/// consumed or answered with errors, so the stripes stay in step for the next copy.
#[test]
fn a_refused_striped_copy_keeps_the_stripes_in_step() {
    with_bystander_on(TestWorker::tcp(config_with(None)), |worker| {
        let mut s = Striped::open(worker, 2);
        let dst = s.main.malloc(16 << 20);
        let data = pattern(9 << 20, 7);
        let (status, message) = s.upload(0x10, &data).error();
        assert_eq!(status, Status::INVALID_VALUE, "{message}");
        let (status, _) = s.download(dst + (12 << 20), 9 << 20).expect_err("past the allocation");
        assert_eq!(status, Status::INVALID_VALUE);
        assert!(matches!(s.upload(dst, &data).response(), Response::MemcpyHtoDStriped(_)));
        assert_eq!(s.download(dst, data.len()).expect("download"), data);
        // More stripes than joined: refused, the joined ones stay in step.
        let copy_id = s.copy_id();
        let req = wire::MemcpyDtoHStriped { src: dst, len: 1 << 20, stream: 0, copy_id, stripes: 5 };
        let (status, message) = s.main.call(&Request::MemcpyDtoHStriped(req)).error();
        assert_eq!(status, Status::INVALID_VALUE, "{message}");
        for (index, stripe) in (0..).zip(&mut s.stripes) {
            // The schedule of the copy as asked: one chunk, on stripe 0.
            for _ in stripe_chunks(1 << 20, s.chunk_bytes, 5, index) {
                assert!(stripe.recv().is_error(), "error chunk for the refused copy");
            }
        }
        assert_eq!(s.download(dst, 1 << 20).expect("download"), data[..1 << 20]);
    });
}

/// Joins with a wrong key, to an unknown session, beyond the grant or twice are refused
/// and their connections closed; the session's own stripes still work.
#[test]
fn hostile_joins_are_refused() {
    with_bystander_on(TestWorker::tcp(config_with(None)), refuse_hostile_joins);
}

/// The same in session processes: the worker refuses joins to sessions it does not serve in a
/// process, the session's process those with a wrong key, index or a second join.
#[test]
fn hostile_joins_are_refused_in_session_processes() {
    with_bystander_on(in_session_processes(), refuse_hostile_joins);
}

fn refuse_hostile_joins(worker: &TestWorker) {
    {
        let (mut main, _, session_id) = greet_striped(worker);
        let (granted, _, key) = open_stripes(&mut main, 2);
        assert_eq!(granted, 2);
        let mut wrong = key.clone();
        wrong[0] ^= 1;
        for (session, index, key, what) in
            [(session_id, 0, &wrong, "wrong key"), (session_id + 1000, 0, &key, "unknown session"), (session_id, 2, &key, "index beyond the grant")]
        {
            let (mut c, reply) = join(worker, session, index, key);
            let (status, message) = reply.error();
            assert_eq!(status, Status::AUTH_FAILED, "{what}: {message}");
            c.expect_closed();
        }
        let (_first, reply) = join(worker, session_id, 0, &key);
        assert!(!reply.is_error());
        let (mut twice, reply) = join(worker, session_id, 0, &key);
        assert!(reply.error().1.contains("joined already"));
        twice.expect_closed();
        // A second grant for the same session is refused.
        let (status, _) = main.call(&Request::StripesOpen(wire::StripesOpen { count: 2 })).error();
        assert_eq!(status, Status::ILLEGAL_STATE);
        // StripeJoin on a connection that said HELLO is refused too, and it goes on.
        let (status, _) = main.call(&Request::StripeJoin(wire::StripeJoin { session_id, index: 1, join_key: key.as_slice().into() })).error();
        assert_eq!(status, Status::ILLEGAL_STATE);
        main.ping(3);
    }
}

/// A chunk of the wrong copy closes its stripe and fails the copy; the session goes on
/// (without stripes: a later striped copy is refused), and so does the worker.
#[test]
fn a_chunk_out_of_step_closes_the_stripe() {
    with_bystander_on(TestWorker::tcp(config_with(None)), |worker| {
        let mut s = Striped::open(worker, 2);
        let dst = s.main.malloc(16 << 20);
        let copy_id = s.copy_id();
        let len = 2 * s.chunk_bytes;
        let req = wire::MemcpyHtoDStriped { dst, len, stream: 0, sync: true, copy_id, stripes: 2 };
        let id = s.main.send(&Request::MemcpyHtoDStriped(req), Flags::empty());
        let data = pattern(s.chunk_bytes as usize, 1);
        s.stripes[0].send(&Request::StripeChunk(wire::StripeChunk { copy_id, offset: 0, data: Bulk(&data) }), Flags::NO_REPLY);
        // Stripe 1 names another copy (the worker may close the stripe before the chunk's end).
        s.stripes[1].send_may_be_cut(
            &Request::StripeChunk(wire::StripeChunk { copy_id: copy_id + 7, offset: s.chunk_bytes, data: Bulk(&data) }),
            Flags::NO_REPLY,
        );
        let reply = s.main.recv();
        assert_eq!(reply.header.request_id, id);
        let (_, message) = reply.error();
        assert!(message.contains("out of step"), "{message}");
        s.stripes[1].expect_closed();
        s.main.ping(1);
        s.main.round_trip(9);
        let (status, message) = s.upload(dst, &pattern(1 << 20, 2)).error();
        assert_eq!(status, Status::INVALID_VALUE, "{message}");
    });
}

/// A chunk on the main connection, or a striped copy from a session without stripes, is
/// refused with an error reply; the session goes on.
#[test]
fn stripe_frames_elsewhere_are_refused() {
    with_bystander_on(TestWorker::tcp(config_with(None)), |worker| {
        let (mut main, _, _) = greet_striped(worker);
        let data = [1u8; 64];
        let (status, _) = main.call(&Request::StripeChunk(wire::StripeChunk { copy_id: 1, offset: 0, data: Bulk(&data) })).error();
        assert_eq!(status, Status::ILLEGAL_STATE);
        let dst = main.malloc(1 << 20);
        let req = wire::MemcpyHtoDStriped { dst, len: 64, stream: 0, sync: true, copy_id: 1, stripes: 1 };
        let (status, _) = main.call(&Request::MemcpyHtoDStriped(req)).error();
        assert_eq!(status, Status::NOT_SUPPORTED);
        main.round_trip(5);
    });
}

/// Grants are bounded by the worker's `--max-stripes`; with 0 the feature is not offered
/// and nothing is granted (the client keeps the main connection).
#[test]
fn grants_follow_the_worker_limit() {
    let mut config = config_with(None);
    config.stripes.max_stripes = 3;
    with_bystander_on(TestWorker::tcp(config), |worker| {
        let (mut main, _, _) = greet_striped(worker);
        assert_eq!(open_stripes(&mut main, 100).0, 3);
    });
    let mut config = config_with(None);
    config.stripes.max_stripes = 0;
    with_bystander_on(TestWorker::tcp(config), |worker| {
        let (mut main, features, _) = greet_striped(worker);
        assert_eq!(features & wire::features::STRIPED_BULK, 0);
        assert_eq!(open_stripes(&mut main, 4).0, 0);
    });
    // In-memory sessions (no listener to join) grant none either.
    with_bystander_on(TestWorker::in_memory(config_with(None)), |worker| {
        let (mut main, features, _) = greet_striped(worker);
        assert_eq!(features & wire::features::STRIPED_BULK, 0);
        assert_eq!(open_stripes(&mut main, 4).0, 0);
    });
}
