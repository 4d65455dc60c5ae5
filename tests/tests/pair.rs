//! The pair tests: the client's session and the worker's, in one thread on virtual time
//! ([`hip_remote_pair::Pair`]): liveness, heartbeats, batching, deferred errors and resume.

use client_core::{CallError, Expect, HipError, Landing, FIRST_BATCH_BYTES};
use hip_remote_pair::*;
use proto_core::wire;
use proto_core::{calls, Bulk, Call, Opcode, Request, Response, Status};
use std::time::Duration;

#[test]
fn posted_uploads_and_a_landed_download_carry_the_bytes_both_ways() {
    let mut pair = Pair::greeted(None);
    let ptr = malloc(&mut pair, 4096);
    let data: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 251) as u8).collect();
    pair.post(&calls::MemcpyHtoD::wrap(wire::MemcpyHtoD { dst: ptr, stream: 0, sync: false, data: Bulk(&data) }));
    assert_eq!(download(&mut pair, ptr, data.len()).expect("download"), data);
    assert!(!pair.client.session.has_pending_landings());
    assert_eq!(pair.client.session.take_deferred(), None);
}

#[test]
fn a_failed_posted_request_is_reported_by_the_next_reply_with_the_workers_own_status() {
    let mut pair = Pair::greeted(None);
    let ptr = malloc(&mut pair, 4096);
    pair.call::<calls::Free>(wire::Free { ptr }).expect("hipFree");
    // The oracle: the worker's answer to the same request as a call.
    let ticket = pair.submit(&memset(ptr, 1, 16), Expect::Reply, true);
    let refused = pair.wait_reply(ticket).expect_err("memset of freed memory");
    assert_ne!(refused.code, HipError::SUCCESS);
    pair.post(&memset(ptr, 1, 16));
    assert_eq!(pair.client.session.take_deferred(), None, "nothing known before a reply");
    assert_eq!(device_count(&mut pair).expect("the call itself succeeds"), 1);
    assert_eq!(pair.client.session.take_deferred(), Some(refused.code), "{}", refused.message);
    assert_eq!(pair.client.session.take_deferred(), None, "reported once");
}

#[test]
fn a_frozen_worker_is_pinged_each_heartbeat_and_given_up_after_the_liveness_timeout() {
    let mut pair = Pair::greeted(Some(Duration::from_secs(600)));
    pair.worker.frozen = true;
    let started = pair.now;
    let sent_before = pair.worker.inbound.len();
    let e = device_count(&mut pair).expect_err("a frozen worker cannot answer");
    assert!(e.is_lost() && e.message.contains(&format!("no answer within {} s", LIVENESS_TIMEOUT.as_secs())), "{}", e.message);
    assert_eq!(pair.now - started, LIVENESS_TIMEOUT, "given up at the timeout, in virtual time");
    let pings = pair.worker.inbound.iter().skip(sent_before + 1).filter(|f| split(&f.bytes).0.opcode == Opcode::Ping.raw()).count();
    assert_eq!(pings, (LIVENESS_TIMEOUT.as_secs() / HEARTBEAT.as_secs() - 1) as usize, "a PING after each heartbeat of silence");
}

#[test]
fn a_busy_worker_that_sends_heartbeats_is_waited_for_until_the_call_deadline() {
    // Three liveness timeouts of work: its heartbeats keep the call alive.
    let mut pair = Pair::greeted(Some(Duration::from_secs(600)));
    pair.worker.busy_next = Some(3 * LIVENESS_TIMEOUT);
    let started = pair.now;
    assert_eq!(device_count(&mut pair).expect("heartbeats keep the call alive"), 1);
    assert!(pair.now - started >= 3 * LIVENESS_TIMEOUT);
    // The same with a 60 s call deadline: it ends the call.
    let mut pair = Pair::greeted(Some(Duration::from_secs(60)));
    pair.worker.busy_next = Some(3 * LIVENESS_TIMEOUT);
    let started = pair.now;
    let e = device_count(&mut pair).expect_err("the deadline passes");
    assert!(e.is_lost() && e.message.contains("HIP_REMOTE_IO_TIMEOUT"), "{}", e.message);
    assert_eq!(pair.now - started, Duration::from_secs(60));
}

#[test]
fn the_first_batch_after_a_reply_reaches_the_worker_early_and_runs() {
    let mut pair = Pair::greeted(None);
    let ptr = malloc(&mut pair, 1 << 16);
    let before = pair.worker.received.len();
    let mut sent_at = None;
    for i in 0..200u64 {
        pair.post(&memset(ptr + i * 256, (i % 255) as u32 + 1, 256));
        if sent_at.is_none() && pair.client.queued.is_empty() {
            sent_at = Some(i + 1);
        }
    }
    let first = sent_at.expect("a first batch went before 200 memsets were queued") as usize;
    let frame_len = proto_core::HEADER_LEN + 40;
    assert!(first * frame_len >= FIRST_BATCH_BYTES / 2 && first < 200, "first batch after {first} memsets");
    assert!(!pair.client.queued.is_empty(), "the rest wait in the transport's queue");
    pair.now += LATENCY;
    pair.run_worker();
    assert_eq!(pair.worker.received.len() - before, first, "the worker has the first batch while the rest are queued");
    // A call sends the rest first; every memset has run when its reply comes.
    assert_eq!(device_count(&mut pair).expect("call"), 1);
    assert_eq!(pair.worker.received.len() - before, 201);
    let bytes = download(&mut pair, ptr, 200 * 256).expect("download");
    assert!(bytes.chunks(256).enumerate().all(|(i, c)| c.iter().all(|&b| b == (i % 255) as u8 + 1)));
}

#[test]
fn a_session_ended_by_the_worker_fails_the_waiting_call_and_every_later_one() {
    let mut pair = Pair::greeted(None);
    let ticket = pair.submit(&calls::GetDeviceCount::wrap(wire::Empty {}), Expect::Reply, true);
    pair.worker_dies();
    let e = pair.wait_reply(ticket).expect_err("the session is over");
    assert_eq!(e.code, HipError(Status::LAUNCH_FAILURE.0), "the worker's status, as HIP reports a device fault");
    assert!(e.message.contains("process died"), "{}", e.message);
    let later = pair.client.session.submit(&calls::GetDeviceCount::wrap(wire::Empty {}), Expect::Reply).map(|o| o.ticket).unwrap_err();
    assert_eq!(later, e, "sticky");
    let posted = pair.client.session.submit(&memset(0, 0, 1), Expect::NoReply).map(|o| o.ticket).unwrap_err();
    assert_eq!(posted, e);
}

// ---- resume ---------------------------------------------------------------------------------

/// Bytes of the workload's source buffer and of each slot of its result buffer.
const SLOT: usize = 4096;
const SLOTS: usize = 8;
/// Where the workload's downloads land in the client's memory.
const B_AT: usize = 0;
const A_AT: usize = SLOTS * SLOT;

fn source_bytes() -> Vec<u8> {
    (0..4 * SLOT).map(|i| (i * 31 % 253) as u8).collect()
}

fn try_malloc(pair: &mut Pair, size: u64) -> Result<u64, CallError> {
    match pair.call::<calls::Malloc>(wire::Malloc { device: 0, size, flags: 0 })? {
        Response::Malloc(a) => Ok(a.ptr),
        other => panic!("{other:?}"),
    }
}

/// A device-to-host copy of `len` bytes at `src` in chunks whose replies land at `at`.
fn download_at(pair: &mut Pair, src: u64, len: usize, at: usize, chunk: usize) -> Result<(), CallError> {
    let mut tickets = Vec::new();
    for offset in (0..len).step_by(chunk) {
        let n = chunk.min(len - offset);
        let req = calls::MemcpyDtoH::wrap(wire::MemcpyDtoH { src: src + offset as u64, len: n as u64, stream: 0 });
        let landing = Landing { dst: at + offset, len: n, rows: None };
        tickets.push(pair.submit(&req, Expect::Landing { landing, awaited: true }, false));
    }
    pair.flush();
    pair.wait_landings(&tickets)
}

/// Allocates, uploads, then eight times sets the source's first slot to a new value and
/// copies it to the next slot of the result (a memset or copy run again later would leave
/// a later value in an earlier slot), downloads the result, synchronizes, downloads the
/// source. Its results land in the client's memory at `B_AT` and `A_AT`.
fn workload(pair: &mut Pair) -> Result<(), CallError> {
    let a = try_malloc(pair, (4 * SLOT) as u64)?;
    let b = try_malloc(pair, (SLOTS * SLOT) as u64)?;
    let data = source_bytes();
    for (i, half) in data.chunks(2 * SLOT).enumerate() {
        let dst = a + (i * 2 * SLOT) as u64;
        pair.post(&calls::MemcpyHtoD::wrap(wire::MemcpyHtoD { dst, stream: 0, sync: false, data: Bulk(half) }));
    }
    for slot in 0..SLOTS {
        pair.post(&memset(a, slot as u32 + 1, SLOT as u64));
        let dst = b + (slot * SLOT) as u64;
        pair.post(&calls::MemcpyDtoD::wrap(wire::MemcpyDtoD { dst, src: a, len: SLOT as u64, stream: 0, sync: false }));
    }
    download_at(pair, b, SLOTS * SLOT, B_AT, 2 * SLOT)?;
    pair.call::<calls::DeviceSynchronize>(wire::DeviceRef { device: 0 })?;
    download_at(pair, a, 4 * SLOT, A_AT, 4 * SLOT)
}

/// What the workload must leave, computed on the host.
fn workload_oracle() -> (Vec<u8>, Vec<u8>) {
    let b: Vec<u8> = (0..SLOTS).flat_map(|slot| std::iter::repeat_n(slot as u8 + 1, SLOT)).collect();
    let mut a = source_bytes();
    a[..SLOT].fill(SLOTS as u8);
    (b, a)
}

fn check_workload(pair: &mut Pair, what: &str) {
    let (b, a) = workload_oracle();
    let memory = &pair.client.memory;
    assert!(memory[B_AT..B_AT + b.len()] == b[..], "{what}: the result slots differ from the oracle");
    assert!(memory[A_AT..A_AT + a.len()] == a[..], "{what}: the source buffer differs from the oracle");
    assert_eq!(pair.client.session.take_deferred(), None, "{what}: no failure was deferred");
}

/// The connection breaks at every frame of a workload in turn (requests lost before the
/// worker read them, replies lost after it executed their requests, landings): each time
/// the client resumes the session, gets the lost replies from the worker's record, sends
/// again only what the worker never executed, and the workload's results match the oracle;
/// every request was executed exactly once.
#[test]
fn a_connection_broken_at_any_frame_is_resumed_and_nothing_runs_twice() {
    // The clean run: how many frames the workload sends and receives, which requests run.
    let mut clean = Pair::resumable(hip_worker::resume::DEFAULT_RESUME_GRACE);
    let (crossed_before, executed_before) = (clean.link.crossed, clean.worker.executions.len());
    workload(&mut clean).expect("the workload without a break");
    check_workload(&mut clean, "without a break");
    let frames = clean.link.crossed - crossed_before;
    let requests = clean.worker.executions.len() - executed_before;
    assert!(frames > 2 * requests / 2 && requests > 2 * SLOTS, "{frames} frames, {requests} requests");
    assert_eq!(clean.link.resumes, 0);
    for at in 1..=frames {
        let mut pair = Pair::resumable(hip_worker::resume::DEFAULT_RESUME_GRACE);
        pair.link.break_at = Some(pair.link.crossed + at);
        let what = format!("broken at frame {at} of {frames}");
        workload(&mut pair).unwrap_or_else(|e| panic!("{what}: {}", e.message));
        check_workload(&mut pair, &what);
        assert_eq!(pair.link.resumes, 1, "{what}: resumed once");
        let twice: Vec<_> = pair.worker.executions.iter().filter(|(_, &n)| n != 1).collect();
        assert!(twice.is_empty(), "{what}: requests executed more than once: {twice:?}");
        assert_eq!(pair.worker.executions.len() - executed_before, requests, "{what}: every request executed");
        assert_eq!(pair.client.session.unacked_bytes(), 0, "{what}: every request acknowledged, none kept");
        assert_eq!(pair.hub.parked_count(), 0, "{what}: the session was taken back");
    }
}

/// Past the worker's grace period the session is gone: the waiting call fails with the
/// lost connection's error (hipErrorNotInitialized) instead of hanging, and so does a
/// resume with a wrong secret.
#[test]
fn a_resume_after_the_grace_period_or_with_a_wrong_secret_gets_the_lost_connection_error() {
    for (grace, resume_after, wrong_secret) in
        [(Duration::from_millis(20), Duration::from_millis(200), false), (Duration::from_secs(60), Duration::ZERO, true)]
    {
        let mut pair = Pair::resumable(grace);
        let ptr = try_malloc(&mut pair, 4096).expect("hipMalloc");
        pair.link.resume_after = resume_after;
        pair.link.wrong_secret = wrong_secret;
        // The memset reaches the worker; its reply is lost.
        pair.link.break_at = Some(pair.link.crossed + 2);
        let ticket = pair.submit(&memset(ptr, 1, 16), Expect::Reply, true);
        let e = pair.wait_reply(ticket).expect_err("nothing to resume");
        assert_eq!(e.code, HipError::NOT_INITIALIZED, "{}", e.message);
        assert!(e.is_lost() && e.message.contains("could not be resumed"), "{}", e.message);
        assert_eq!(pair.link.resumes, 1);
    }
}

// ---- managed mirrors ------------------------------------------------------------------------

const PAGE: usize = wire::MANAGED_PAGE as usize;
/// Where the mirror's application memory "is" (an address the session only records).
const MIRROR_BASE: usize = 0x7000_0000;
const MIRROR_PAGES: usize = 4;

/// The application's side of one managed range, and the driver's part of the coherence
/// engine as `client-capi`'s `conn/mirrors.rs` does it, on a buffer instead of raw memory.
struct ManagedHost {
    bytes: Vec<u8>,
}

impl ManagedHost {
    /// Before a request: pushes every page that changed when the session's book asks.
    fn before(&self, pair: &mut Pair, op: Opcode) {
        if !pair.client.session.managed().before_request(op) {
            return;
        }
        let mut book = std::mem::take(pair.client.session.managed());
        let mut pushed = 0;
        for mirror in book.iter_mut() {
            let (mut pages, mut data) = (Vec::new(), Vec::new());
            for (i, page) in self.bytes.chunks_exact(PAGE).enumerate() {
                if mirror.note_local(i, wire::page_hash(page)) {
                    pages.push(zerocopy::byteorder::little_endian::U32::new(i as u32));
                    data.extend_from_slice(page);
                }
            }
            if !pages.is_empty() {
                pushed += data.len();
                let push = wire::ManagedPush { ptr: mirror.device_base, pages: proto_core::List(&pages), data: Bulk(&data) };
                pair.post(&calls::ManagedPush::wrap(push));
            }
        }
        book.note_pushed_bytes(pushed);
        *pair.client.session.managed() = book;
    }

    /// After a synchronising call: pulls the device's changes when the book says they may exist.
    fn after_sync(&mut self, pair: &mut Pair) {
        let Some(due) = pair.client.session.managed().pull_due() else { return };
        let mut book = std::mem::take(pair.client.session.managed());
        let mut pulled = 0;
        for mirror in book.iter_mut() {
            let reply = pair.call::<calls::ManagedPull>(wire::ManagedPull { ptr: mirror.device_base, from: 0 }).expect("ManagedPull");
            let Response::ManagedPull(p) = reply else { panic!("{reply:?}") };
            assert_eq!(p.next as usize, MIRROR_PAGES, "one reply holds the whole range");
            for (index, page) in p.pages.0.iter().zip(p.data.0.chunks_exact(PAGE)) {
                let i = index.get() as usize;
                self.bytes[i * PAGE..(i + 1) * PAGE].copy_from_slice(page);
                mirror.note_pulled(i, wire::page_hash(page));
                pulled += PAGE;
            }
        }
        book.note_pulled_bytes(pulled);
        book.pulled(due);
        *pair.client.session.managed() = book;
    }

    fn post(&self, pair: &mut Pair, req: &Request<'_>) {
        self.before(pair, req.opcode());
        pair.post(req);
    }

    fn device_synchronize(&mut self, pair: &mut Pair) {
        self.before(pair, Opcode::DeviceSynchronize);
        pair.call::<calls::DeviceSynchronize>(wire::DeviceRef { device: 0 }).expect("hipDeviceSynchronize");
        self.after_sync(pair);
    }
}

/// Managed memory through the session's book of mirrors against the host backend: the CPU's
/// writes reach the device before the work that reads them, the device's come back after a
/// synchronisation, only changed pages move (counted both ways), and a device-wide
/// synchronisation that pulled everything leaves nothing to pull until new device work.
#[test]
fn managed_mirrors_move_only_changed_pages_and_match_the_host_oracle() {
    let mut pair = Pair::greeted(None);
    let size = (MIRROR_PAGES * PAGE) as u64;
    let device_base =
        match pair.call::<calls::ManagedAlloc>(wire::ManagedAlloc { device: 0, size, hint: 0, twin: wire::TWIN_MANAGED }).expect("ManagedAlloc") {
            Response::ManagedAlloc(a) => a.ptr,
            other => panic!("{other:?}"),
        };
    let end = MIRROR_BASE + MIRROR_PAGES * PAGE;
    let mirror = client_core::managed::Mirror::new(
        client_core::managed::MirrorKind::Managed,
        MIRROR_BASE,
        MIRROR_PAGES * PAGE,
        (MIRROR_BASE, end),
        device_base,
        0,
        0,
    );
    pair.client.session.managed().insert(mirror);
    let mut host = ManagedHost { bytes: vec![0; MIRROR_PAGES * PAGE] };
    let mut oracle = vec![0u8; MIRROR_PAGES * PAGE];

    // The CPU writes page 0 and ten bytes of page 3; the device sets page 1 and reads page 0
    // (a device-to-device copy of it into page 2).
    host.bytes[..PAGE].fill(0x11);
    host.bytes[3 * PAGE..3 * PAGE + 10].fill(0x33);
    oracle.clone_from(&host.bytes);
    host.post(&mut pair, &memset(device_base + PAGE as u64, 0x22, PAGE as u64));
    oracle[PAGE..2 * PAGE].fill(0x22);
    let copy = wire::MemcpyDtoD { dst: device_base + 2 * PAGE as u64, src: device_base, len: 64, stream: 0, sync: false };
    host.post(&mut pair, &calls::MemcpyDtoD::wrap(copy));
    oracle[2 * PAGE..2 * PAGE + 64].fill(0x11);
    host.device_synchronize(&mut pair);

    assert!(host.bytes == oracle, "the application's memory differs from the host oracle");
    let (pushed, pulled) = pair.client.session.managed().stats();
    assert_eq!(pushed, 2 * PAGE as u64, "pages 0 and 3 changed on the CPU, pushed once");
    assert_eq!(pulled, 2 * PAGE as u64, "pages 1 and 2 changed on the device, pulled once");

    // Covered by the device-wide synchronisation: nothing moves, nor is asked for, until new
    // device work.
    let pulls = |pair: &Pair| pair.worker.received.iter().filter(|(op, _)| *op == Opcode::ManagedPull).count();
    let pulls_before = pulls(&pair);
    host.device_synchronize(&mut pair);
    assert_eq!(pair.client.session.managed().stats(), (pushed, pulled));
    assert_eq!(pulls(&pair), pulls_before, "a covered synchronisation asks the worker for nothing");
    host.bytes[PAGE] = 0x44;
    oracle[PAGE] = 0x44;
    host.post(&mut pair, &memset(device_base + 3 * PAGE as u64, 0x55, 4));
    oracle[3 * PAGE..3 * PAGE + 4].fill(0x55);
    host.device_synchronize(&mut pair);
    assert!(host.bytes == oracle, "after the second round the application's memory differs from the oracle");
    assert_eq!(pair.client.session.managed().stats(), (pushed + PAGE as u64, pulled + PAGE as u64));
    assert_eq!(download(&mut pair, device_base, 4 * PAGE).expect("download"), oracle, "the device twin matches too");
    assert_eq!(pair.client.session.take_deferred(), None);
}
