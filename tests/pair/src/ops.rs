//! Operation sequences driven through a [`Pair`] and checked against a model: the `session_ops`
//! fuzz target, its seeds and its regressions.
//!
//! An input is a list of [`Op`]s in a small byte format ([`Op::decode`], [`Op::encode`]): one
//! tag byte, then fixed little-endian arguments. Indices pick among what the sequence made so
//! far (buffers, streams, events), freed and destroyed ones included, so stale handles and
//! use-after-free come up by themselves.
//!
//! The model ([`Model`]) keeps a shadow of every live buffer's bytes (with a mask of those it
//! knows: not a fresh allocation's, nor racing writes') and the ordering HIP guarantees between
//! blocking streams (the legacy null stream waits for and is waited for by every stream;
//! events order one stream after another; a synchronize or an awaited download completes a
//! stream's earlier work). What it asserts:
//! - a download reads back exactly what the model says was written (known bytes only);
//! - a valid operation never fails, and never defers an error to a later call;
//! - an operation on freed memory, out of bounds, or on a destroyed stream or event fails with
//!   a known HIP error (never a success, never a panic), and the session serves on;
//! - a broken connection is resumed (when the session offered `RESUME`) with the results above
//!   unchanged, or (when it did not) fails every later call with the lost connection's error;
//! - when the pair is dropped the worker frees everything the session held.

use crate::{Pair, CLIENT_MEMORY};
use client_core::{CallError, Expect, HipError, Landing};
use hip_worker::backend::{HostBackend, MemoryBackend};
use proto_core::wire::{self, GraphNodeKind, MemsetWidth};
use proto_core::{calls, Bulk, Call, Request, Response};
use std::sync::Arc;
use std::time::Duration;

/// Most operations run from one input (the rest is ignored): bounds a run's time.
pub const MAX_OPS: usize = 96;
/// Most buffers, streams and events one input makes (later creations are skipped).
pub const MAX_OBJECTS: usize = 16;
/// Bytes past a buffer's end an unchecked range can reach.
const SLACK: u64 = 256;
/// A call deadline, so a reply that never comes fails the run instead of hanging it.
const CALL_DEADLINE: Duration = Duration::from_secs(600);
/// The worker keeps a broken connection's session this long (real time).
const RESUME_GRACE: Duration = Duration::from_secs(60);

/// A byte range: `offset` within a buffer; `len`'s top bit set means "unchecked" (the range
/// may run past the buffer's end), else it is clamped into the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub buf: u8,
    pub offset: u16,
    pub len: u16,
}

/// One step of a sequence. Stream and event indices: 0 is the null stream; `n` the
/// `(n - 1) % made`-th made so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `hipMalloc` of `size` bytes (at least 1).
    Malloc {
        size: u16,
    },
    Free {
        buf: u8,
    },
    /// Posted host-to-device copy of bytes made from `seed`.
    Upload {
        span: Span,
        seed: u8,
        stream: u8,
    },
    /// Device-to-host copy, awaited.
    Download {
        span: Span,
        stream: u8,
    },
    /// Device-to-device copy of `src.len` bytes (`dst.len` is ignored).
    Copy {
        dst: Span,
        src: Span,
        stream: u8,
    },
    Memset {
        span: Span,
        value: u8,
        stream: u8,
    },
    StreamCreate,
    StreamDestroy {
        stream: u8,
    },
    StreamSynchronize {
        stream: u8,
    },
    EventCreate,
    EventRecord {
        event: u8,
        stream: u8,
    },
    EventSynchronize {
        event: u8,
    },
    EventQuery {
        event: u8,
    },
    StreamWaitEvent {
        stream: u8,
        event: u8,
    },
    EventDestroy {
        event: u8,
    },
    /// A graph of one memset node, instantiated and launched on `stream`.
    GraphMemset {
        span: Span,
        value: u8,
        stream: u8,
    },
    DeviceSynchronize,
    /// The connection breaks after `after` more frames cross it.
    Break {
        after: u8,
    },
    /// Virtual time moves on while the application does nothing.
    Idle {
        millis: u16,
    },
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn u8(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes([self.u8()?, self.u8()?]))
    }
    fn span(&mut self) -> Option<Span> {
        Some(Span { buf: self.u8()?, offset: self.u16()?, len: self.u16()? })
    }
}

const TAGS: u8 = 19;

impl Op {
    /// Reads one operation from the front of `input`; `None` at the end (or a cut-off one).
    pub fn decode(input: &mut &[u8]) -> Option<Op> {
        let mut r = Reader(input);
        let op = match r.u8()? % TAGS {
            0 => Op::Malloc { size: r.u16()? },
            1 => Op::Free { buf: r.u8()? },
            2 => Op::Upload { span: r.span()?, seed: r.u8()?, stream: r.u8()? },
            3 => Op::Download { span: r.span()?, stream: r.u8()? },
            4 => Op::Copy { dst: r.span()?, src: r.span()?, stream: r.u8()? },
            5 => Op::Memset { span: r.span()?, value: r.u8()?, stream: r.u8()? },
            6 => Op::StreamCreate,
            7 => Op::StreamDestroy { stream: r.u8()? },
            8 => Op::StreamSynchronize { stream: r.u8()? },
            9 => Op::EventCreate,
            10 => Op::EventRecord { event: r.u8()?, stream: r.u8()? },
            11 => Op::EventSynchronize { event: r.u8()? },
            12 => Op::EventQuery { event: r.u8()? },
            13 => Op::StreamWaitEvent { stream: r.u8()?, event: r.u8()? },
            14 => Op::EventDestroy { event: r.u8()? },
            15 => Op::GraphMemset { span: r.span()?, value: r.u8()?, stream: r.u8()? },
            16 => Op::DeviceSynchronize,
            17 => Op::Break { after: r.u8()? },
            _ => Op::Idle { millis: r.u16()? },
        };
        *input = r.0;
        Some(op)
    }

    /// Appends the operation's bytes; [`Op::decode`] reads it back.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let span = |out: &mut Vec<u8>, s: &Span| {
            out.push(s.buf);
            out.extend_from_slice(&s.offset.to_le_bytes());
            out.extend_from_slice(&s.len.to_le_bytes());
        };
        match self {
            Op::Malloc { size } => {
                out.push(0);
                out.extend_from_slice(&size.to_le_bytes());
            }
            Op::Free { buf } => out.extend_from_slice(&[1, *buf]),
            Op::Upload { span: s, seed, stream } => {
                out.push(2);
                span(out, s);
                out.extend_from_slice(&[*seed, *stream]);
            }
            Op::Download { span: s, stream } => {
                out.push(3);
                span(out, s);
                out.push(*stream);
            }
            Op::Copy { dst, src, stream } => {
                out.push(4);
                span(out, dst);
                span(out, src);
                out.push(*stream);
            }
            Op::Memset { span: s, value, stream } => {
                out.push(5);
                span(out, s);
                out.extend_from_slice(&[*value, *stream]);
            }
            Op::StreamCreate => out.push(6),
            Op::StreamDestroy { stream } => out.extend_from_slice(&[7, *stream]),
            Op::StreamSynchronize { stream } => out.extend_from_slice(&[8, *stream]),
            Op::EventCreate => out.push(9),
            Op::EventRecord { event, stream } => out.extend_from_slice(&[10, *event, *stream]),
            Op::EventSynchronize { event } => out.extend_from_slice(&[11, *event]),
            Op::EventQuery { event } => out.extend_from_slice(&[12, *event]),
            Op::StreamWaitEvent { stream, event } => out.extend_from_slice(&[13, *stream, *event]),
            Op::EventDestroy { event } => out.extend_from_slice(&[14, *event]),
            Op::GraphMemset { span: s, value, stream } => {
                out.push(15);
                span(out, s);
                out.extend_from_slice(&[*value, *stream]);
            }
            Op::DeviceSynchronize => out.push(16),
            Op::Break { after } => out.extend_from_slice(&[17, *after]),
            Op::Idle { millis } => {
                out.push(18);
                out.extend_from_slice(&millis.to_le_bytes());
            }
        }
    }
}

/// An input's bytes: a flags byte (bit 0: the session offers `RESUME`), then operations.
pub fn encode_input(resumable: bool, ops: &[Op]) -> Vec<u8> {
    let mut out = vec![u8::from(resumable)];
    for op in ops {
        op.encode(&mut out);
    }
    out
}

/// Device bytes as the model knows them: `bytes`, except in the ranges of `unknown` (sorted,
/// disjoint, not touching). Ranges rather than a flag per byte, so that writes, copies and
/// checks are `memcpy`s and one `memcmp` plus work per range: the fuzz build traces every
/// comparison and loop test, which per byte cost more than the session under test.
#[derive(Clone)]
struct Shadow {
    bytes: Vec<u8>,
    unknown: Vec<(usize, usize)>,
}

impl Shadow {
    /// `len` bytes nobody knows (a fresh allocation).
    fn unknown(len: usize) -> Self {
        let mut s = Self { bytes: vec![0; len], unknown: Vec::new() };
        s.forget_all();
        s
    }

    fn known(bytes: Vec<u8>) -> Self {
        Self { bytes, unknown: Vec::new() }
    }

    fn filled(value: u8, len: usize) -> Self {
        Self::known(vec![value; len])
    }

    #[cfg(test)]
    fn is_known(&self, i: usize) -> bool {
        !self.unknown.iter().any(|&(s, e)| s <= i && i < e)
    }

    fn range(&self, start: u64, end: u64) -> Self {
        let (start, end) = (start as usize, end as usize);
        let unknown = self.unknown.iter().filter(|&&(s, e)| s < end && start < e).map(|&(s, e)| (s.max(start) - start, e.min(end) - start)).collect();
        Self { bytes: self.bytes[start..end].to_vec(), unknown }
    }

    /// `src` replaces the bytes from `start` on (what it does not know becomes unknown).
    fn write(&mut self, start: u64, src: &Shadow) {
        let start = start as usize;
        let end = start + src.bytes.len();
        self.bytes[start..end].copy_from_slice(&src.bytes);
        self.cut(start, end);
        for &(s, e) in &src.unknown {
            self.add(start + s, start + e);
        }
    }

    fn forget(&mut self, start: u64, end: u64) {
        self.add(start as usize, end as usize);
    }

    fn forget_all(&mut self) {
        self.unknown.clear();
        self.add(0, self.bytes.len());
    }

    /// Takes `start..end` out of the unknown ranges.
    fn cut(&mut self, start: usize, end: usize) {
        let mut kept = Vec::with_capacity(self.unknown.len() + 1);
        for &(s, e) in &self.unknown {
            if e <= start || end <= s {
                kept.push((s, e));
                continue;
            }
            if s < start {
                kept.push((s, start));
            }
            if end < e {
                kept.push((end, e));
            }
        }
        self.unknown = kept;
    }

    /// Adds `start..end` to the unknown ranges, merging those it touches.
    fn add(&mut self, start: usize, end: usize) {
        if start == end {
            return;
        }
        self.cut(start, end);
        let at = self.unknown.partition_point(|&(s, _)| s < start);
        self.unknown.insert(at, (start, end));
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(self.unknown.len());
        for &(s, e) in &self.unknown {
            match merged.last_mut() {
                Some(last) if last.1 == s => last.1 = e,
                _ => merged.push((s, e)),
            }
        }
        self.unknown = merged;
    }
}

/// Asserts that `got` holds every known byte of `want`; returns how many were known. Takes
/// `got`'s bytes where `want` knows nothing, compares the whole with one `memcmp`, and looks
/// for the first difference only when there is one.
fn check_bytes(want: &Shadow, got: &[u8], what: impl FnOnce() -> String) -> usize {
    assert_eq!(want.bytes.len(), got.len(), "{}: length", what());
    let mut expected = want.bytes.clone();
    let mut unknown = 0;
    for &(s, e) in &want.unknown {
        expected[s..e].copy_from_slice(&got[s..e]);
        unknown += e - s;
    }
    if expected != got {
        let i = expected.iter().zip(got).position(|(e, g)| e != g).expect("a difference");
        panic!("byte {i} of {}: expected {:#04x}, read {:#04x}", what(), expected[i], got[i]);
    }
    got.len() - unknown
}

/// The bytes a seeded upload carries.
fn upload_bytes(seed: u8, len: usize) -> Vec<u8> {
    (0..len).map(|i| seed.wrapping_add((i as u8).wrapping_mul(37)) ^ (i >> 8) as u8).collect()
}

// ---- the model ----------------------------------------------------------------------------

/// A stream's place in the ordering: index 0 is the null stream.
type StreamId = usize;

/// An access by a created stream that no synchronization has ordered yet.
#[derive(Debug, Clone)]
struct Access {
    stream: StreamId,
    /// The stream's operation number.
    seq: u64,
    /// Global operation number.
    global: u64,
    start: u64,
    end: u64,
    write: bool,
    /// For a device-side read: where its bytes went (a later racing write makes them unknown).
    feeds: Option<(usize, u64, u64)>,
}

struct Buffer {
    ptr: u64,
    size: u64,
    live: bool,
    /// What the device holds, where known.
    shadow: Shadow,
    pending: Vec<Access>,
}

#[derive(Clone, Default)]
struct Order {
    /// Per stream: through which operation number this one is ordered after it.
    knows: Vec<u64>,
    /// Ordered after every operation up to this global number.
    knows_global: u64,
}

impl Order {
    fn knows(&self, a: &Access) -> bool {
        a.global <= self.knows_global || self.knows.get(a.stream).is_some_and(|&s| a.seq <= s)
    }
    fn join(&mut self, other: &Order) {
        if self.knows.len() < other.knows.len() {
            self.knows.resize(other.knows.len(), 0);
        }
        for (mine, theirs) in self.knows.iter_mut().zip(&other.knows) {
            *mine = (*mine).max(*theirs);
        }
        self.knows_global = self.knows_global.max(other.knows_global);
    }
}

struct StreamSlot {
    handle: u64,
    live: bool,
    seq: u64,
    order: Order,
}

struct EventSlot {
    handle: u64,
    live: bool,
    /// What a wait on it orders after (`None`: never recorded, a wait is a no-op).
    recorded: Option<(StreamId, Order)>,
}

/// The model of one session's device state and ordering.
#[derive(Default)]
pub struct Model {
    buffers: Vec<Buffer>,
    /// Created streams; `StreamId` n is `streams[n - 1]`.
    streams: Vec<StreamSlot>,
    events: Vec<EventSlot>,
    global: u64,
    /// Graphs and executable graphs to destroy at the end.
    graphs: Vec<(u64, u64)>,
}

/// Where a range of device addresses falls.
enum Target {
    /// Inside live buffer `buf` from `offset`.
    Live { buf: usize, offset: u64 },
    /// Not inside one live buffer (freed, or running past an allocation's end): ROCm checks
    /// a copy's or memset's range against its allocation, so the worker must refuse it.
    Dead,
}

impl Model {
    fn resolve(&self, ptr: u64, len: u64) -> Target {
        let end = ptr + len;
        self.buffers
            .iter()
            .enumerate()
            .find(|(_, b)| b.live && ptr >= b.ptr && ptr < b.ptr + b.size)
            .filter(|(_, b)| end <= b.ptr + b.size)
            .map_or(Target::Dead, |(buf, b)| Target::Live { buf, offset: ptr - b.ptr })
    }

    /// The address range a span names (`None`: no buffer was made yet).
    fn address(&self, span: &Span, fixed_len: Option<u64>) -> Option<(u64, u64)> {
        if self.buffers.is_empty() {
            return None;
        }
        let b = &self.buffers[usize::from(span.buf) % self.buffers.len()];
        let raw = fixed_len.unwrap_or(u64::from(span.len & 0x7fff));
        if span.len & 0x8000 != 0 {
            let offset = u64::from(span.offset) % (b.size + SLACK);
            return Some((b.ptr + offset, raw % (b.size + SLACK)));
        }
        let offset = u64::from(span.offset) % b.size;
        Some((b.ptr + offset, raw.min(b.size - offset)))
    }

    /// A stream index: the null stream, or a made one (live or not).
    fn stream(&self, index: u8) -> Option<StreamId> {
        match index {
            0 => Some(0),
            _ if self.streams.is_empty() => None,
            n => Some(usize::from(n - 1) % self.streams.len() + 1),
        }
    }

    fn stream_handle(&self, id: StreamId) -> u64 {
        if id == 0 {
            0
        } else {
            self.streams[id - 1].handle
        }
    }

    fn stream_live(&self, id: StreamId) -> bool {
        id == 0 || self.streams[id - 1].live
    }

    fn event(&self, index: u8) -> Option<usize> {
        (!self.events.is_empty()).then(|| usize::from(index) % self.events.len())
    }

    /// Everything issued so far is complete or ordered before what comes next (the null
    /// stream's work, a device synchronize).
    fn barrier(&mut self) {
        for b in &mut self.buffers {
            b.pending.clear();
        }
        let global = self.global;
        for s in &mut self.streams {
            s.order.knows_global = global;
        }
    }

    /// Stream `id`'s work issued so far has completed (synchronized, or an awaited download
    /// on it returned).
    fn completed(&mut self, id: StreamId) {
        if id == 0 {
            return self.barrier();
        }
        let upto = Order {
            knows: {
                let mut k = vec![0; id + 1];
                k[id] = u64::MAX;
                k
            },
            knows_global: 0,
        };
        self.completed_upto(&upto);
    }

    fn completed_upto(&mut self, order: &Order) {
        for b in &mut self.buffers {
            b.pending.retain(|a| !order.knows(a));
        }
    }

    /// Records an access by stream `id` to `buf[start..end]` and applies `write`'s bytes to
    /// the shadow; returns whether an earlier unordered access conflicts.
    fn access(&mut self, id: StreamId, buf: usize, start: u64, end: u64, write: Option<Shadow>, feeds: Option<(usize, u64, u64)>) -> bool {
        if start == end {
            // HIP returns at once from a zero-length copy or memset: it orders nothing, not
            // even on the null stream.
            return false;
        }
        self.global += 1;
        if id == 0 {
            // The legacy null stream waits for every blocking stream first.
            self.barrier();
            if let Some(bytes) = write {
                self.buffers[buf].shadow.write(start, &bytes);
            }
            return false;
        }
        let slot = &mut self.streams[id - 1];
        slot.seq += 1;
        let (seq, order) = (slot.seq, slot.order.clone());
        let is_write = write.is_some();
        let mut conflict = false;
        let mut poison = Vec::new();
        for a in &self.buffers[buf].pending {
            let overlap = a.start < end && start < a.end;
            if overlap && a.stream != id && !order.knows(a) && (a.write || is_write) {
                conflict = true;
                if let (Some(fed), true) = (a.feeds, is_write && !a.write) {
                    poison.push(fed);
                }
            }
        }
        for (b, s, e) in poison {
            self.buffers[b].shadow.forget(s, e);
        }
        if let Some(bytes) = write {
            let shadow = &mut self.buffers[buf].shadow;
            if conflict {
                shadow.forget(start, end);
            } else {
                shadow.write(start, &bytes);
            }
        }
        let global = self.global;
        self.buffers[buf].pending.push(Access { stream: id, seq, global, start, end, write: is_write, feeds });
        conflict
    }
}

// ---- running a sequence -------------------------------------------------------------------

/// What one run did, for tests that a sequence reached what it was written for.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    /// Operations decoded and run.
    pub ops: usize,
    /// Downloaded bytes compared with a known value of the model.
    pub bytes_checked: usize,
    /// Requests the worker refused, as the model said it must.
    pub refused: usize,
    /// Times the client resumed the session.
    pub resumes: usize,
    /// The connection was lost for good (a session without `RESUME`).
    pub lost: bool,
}

/// Runs `input` (see [`encode_input`]) on a fresh pair over `backend`, asserting the model's
/// properties; panics on a violation.
pub fn run(backend: &Arc<HostBackend>, input: &[u8]) -> Stats {
    let Some((&flags, mut rest)) = input.split_first() else { return Stats::default() };
    let resumable = flags & 1 != 0;
    let free_before = backend.mem_get_info(0).expect("device 0").free;
    let stats = {
        let mut run = Run {
            pair: Pair::on_backend(backend.clone(), Some(CALL_DEADLINE), RESUME_GRACE),
            model: Model::default(),
            lost: false,
            stats: Stats::default(),
        };
        if resumable {
            run.pair.greet_resumable();
        } else {
            run.pair.hello(wire::features::FIRE_AND_FORGET);
        }
        let mut ops = 0;
        while let Some(op) = Op::decode(&mut rest) {
            if ops == MAX_OPS || run.lost {
                break;
            }
            ops += 1;
            run.step(op);
        }
        run.finish();
        run.stats.ops = ops;
        run.stats.lost = run.lost;
        run.stats.resumes = run.pair.link.resumes;
        run.stats
    };
    let free_after = backend.mem_get_info(0).expect("device 0").free;
    assert_eq!(free_after, free_before, "the worker freed every allocation of the ended session");
    stats
}

struct Run {
    pair: Pair,
    model: Model,
    /// The connection broke in a session that cannot resume: every call failed since.
    lost: bool,
    stats: Stats,
}

/// A known HIP error, or the panic that says what should have failed.
fn assert_hip_error(result: Result<(), CallError>, what: &str) {
    match result {
        Ok(()) => panic!("{what}: succeeded, but HIP refuses it"),
        Err(e) => {
            assert_ne!(e.code, HipError::SUCCESS, "{what}");
            assert!(e.code.is_known(), "{what}: error code {} is not a hipError_t ({})", e.code.0, e.message);
            assert!(!e.is_lost(), "{what}: a refused call ended the session: {}", e.message);
        }
    }
}

impl Run {
    /// A call that must succeed; a lost connection in a session that cannot resume ends the
    /// run (the failure itself is checked).
    fn ok(&mut self, result: Result<(), CallError>, what: &str) -> bool {
        match result {
            Ok(()) => {
                if let Some(code) = self.pair.client.session.take_deferred() {
                    panic!("{what}: an earlier valid operation failed ({})", code.0);
                }
                true
            }
            Err(e) if e.is_lost() && self.pair.link.broken && !self.pair.client.session.resumable() => {
                assert_eq!(e.code, HipError::NOT_INITIALIZED, "{what}: a lost connection's error: {}", e.message);
                self.lost = true;
                false
            }
            Err(e) => panic!("{what}: a valid operation failed: {} ({})", e.message, e.code.0),
        }
    }

    fn call(&mut self, req: &Request<'_>) -> Result<(), CallError> {
        let ticket = self.pair.submit(req, Expect::Reply, true);
        self.pair.wait_reply(ticket)
    }

    fn call_for<C: Call>(&mut self, req: C::Request<'_>) -> Option<Response<'_>> {
        let result = self.call(&C::wrap(req));
        if !self.ok(result, C::OPCODE.name()) {
            return None;
        }
        Some(self.pair.reply::<C>())
    }

    /// A request that must be refused: sent as a call, so its own reply carries the error.
    fn refused(&mut self, req: &Request<'_>, what: &str) {
        let result = self.call(req);
        if matches!(&result, Err(e) if e.is_lost() && self.pair.link.broken && !self.pair.client.session.resumable()) {
            self.lost = true;
            return;
        }
        assert_hip_error(result, what);
        self.stats.refused += 1;
    }

    fn download(&mut self, ptr: u64, len: u64, stream: u64) -> Result<Vec<u8>, CallError> {
        let req = calls::MemcpyDtoH::wrap(wire::MemcpyDtoH { src: ptr, len, stream });
        let landing = Landing { dst: 0, len: len as usize, rows: None };
        let ticket = self.pair.submit(&req, Expect::Landing { landing, awaited: true }, true);
        self.pair.wait_landings(&[ticket])?;
        Ok(self.pair.client.memory[..len as usize].to_vec())
    }

    fn step(&mut self, op: Op) {
        let m = &mut self.model;
        match op {
            Op::Malloc { size } => {
                if m.buffers.iter().filter(|b| b.live).count() >= MAX_OBJECTS {
                    return;
                }
                let size = u64::from(size.max(1));
                let Some(Response::Malloc(a)) = self.call_for::<calls::Malloc>(wire::Malloc { device: 0, size, flags: 0 }) else { return };
                let ptr = a.ptr;
                assert_ne!(ptr, 0, "hipMalloc gave a null pointer");
                let m = &mut self.model;
                let overlaps = m.buffers.iter().any(|b| b.live && b.ptr < ptr + size && ptr < b.ptr + b.size);
                assert!(!overlaps, "hipMalloc gave {ptr:#x}+{size}, which overlaps a live allocation");
                // A freed buffer whose memory this one reuses stays in the list: an index that
                // picks it names addresses that [`Model::resolve`] finds live again.
                m.buffers.push(Buffer { ptr, size, live: true, shadow: Shadow::unknown(size as usize), pending: Vec::new() });
            }
            Op::Free { buf } => {
                if m.buffers.is_empty() {
                    return;
                }
                let ptr = m.buffers[usize::from(buf) % m.buffers.len()].ptr;
                let req = calls::Free::wrap(wire::Free { ptr });
                // A freed buffer's address may belong to a later allocation again.
                if let Some(i) = m.buffers.iter().position(|b| b.live && b.ptr == ptr) {
                    let result = self.call(&req);
                    if self.ok(result, "hipFree") {
                        // hipFree synchronizes the device first.
                        self.model.barrier();
                        self.model.buffers[i].live = false;
                    }
                } else {
                    self.refused(&req, "hipFree of freed memory");
                }
            }
            Op::Upload { span, seed, stream } => {
                let (Some((ptr, len)), Some(s)) = (m.address(&span, None), m.stream(stream)) else { return };
                let data = upload_bytes(seed, len as usize);
                let handle = m.stream_handle(s);
                let req = calls::MemcpyHtoD::wrap(wire::MemcpyHtoD { dst: ptr, stream: handle, sync: false, data: Bulk(&data) });
                match (m.resolve(ptr, len), m.stream_live(s)) {
                    (Target::Live { buf, offset }, true) => {
                        m.access(s, buf, offset, offset + len, Some(Shadow::known(data.clone())), None);
                        self.pair.post(&req);
                    }
                    (_, _) if len > 0 => self.refused(&req, "an upload to freed memory, out of bounds or on a destroyed stream"),
                    _ => {}
                }
            }
            Op::Download { span, stream } => {
                let (Some((ptr, len)), Some(s)) = (m.address(&span, None), m.stream(stream)) else { return };
                let handle = m.stream_handle(s);
                match (m.resolve(ptr, len), m.stream_live(s)) {
                    (Target::Live { buf, offset }, true) => {
                        let racing = m.access(s, buf, offset, offset + len, None, None);
                        let expect = m.buffers[buf].shadow.range(offset, offset + len);
                        let result = self.download(ptr, len, handle);
                        let got = match result {
                            Ok(got) => got,
                            Err(e) => {
                                self.ok(Err(e), "hipMemcpyDtoH");
                                return;
                            }
                        };
                        if !self.ok(Ok(()), "hipMemcpyDtoH") {
                            return;
                        }
                        if len > 0 {
                            // A zero-length download returns at once, without waiting.
                            self.model.completed(s);
                        }
                        if racing {
                            return;
                        }
                        self.stats.bytes_checked +=
                            check_bytes(&expect, &got, || format!("a {len}-byte download at offset {offset} of buffer {buf} on stream {s}"));
                    }
                    (_, _) if len > 0 => {
                        let result = self.download(ptr, len, handle);
                        if matches!(&result, Err(e) if e.is_lost() && self.pair.link.broken && !self.pair.client.session.resumable()) {
                            self.lost = true;
                            return;
                        }
                        assert_hip_error(result.map(drop), "a download of freed memory, out of bounds or on a destroyed stream");
                        self.stats.refused += 1;
                    }
                    _ => {}
                }
            }
            Op::Copy { dst, src, stream } => {
                let (Some((src_ptr, len)), Some(s)) = (m.address(&src, None), m.stream(stream)) else { return };
                let Some((dst_ptr, len)) = m.address(&dst, Some(len)).map(|(p, l)| (p, if dst.len & 0x8000 != 0 { len } else { l.min(len) })) else {
                    return;
                };
                let handle = m.stream_handle(s);
                let req = calls::MemcpyDtoD::wrap(wire::MemcpyDtoD { dst: dst_ptr, src: src_ptr, len, stream: handle, sync: false });
                match (m.resolve(src_ptr, len), m.resolve(dst_ptr, len), m.stream_live(s)) {
                    (Target::Live { buf: sb, offset: so }, Target::Live { buf: db, offset: d_o }, true) => {
                        if sb == db && so < d_o + len && d_o < so + len {
                            return; // overlapping: undefined in HIP
                        }
                        let racing_read = m.access(s, sb, so, so + len, None, Some((db, d_o, d_o + len)));
                        let mut bytes = m.buffers[sb].shadow.range(so, so + len);
                        if racing_read {
                            bytes.forget_all();
                        }
                        m.access(s, db, d_o, d_o + len, Some(bytes), None);
                        self.pair.post(&req);
                    }
                    _ if len > 0 => self.refused(&req, "a device copy from or to freed memory, out of bounds or on a destroyed stream"),
                    _ => {}
                }
            }
            Op::Memset { span, value, stream } | Op::GraphMemset { span, value, stream } => {
                let (Some((ptr, len)), Some(s)) = (m.address(&span, None), m.stream(stream)) else { return };
                let handle = m.stream_handle(s);
                let target = m.resolve(ptr, len);
                if let Op::GraphMemset { .. } = op {
                    // Graph nodes are checked when the graph runs: only valid ones here.
                    let (Target::Live { buf, offset }, true, true) = (target, m.stream_live(s), len > 0) else { return };
                    self.graph_memset(ptr, len, value, handle);
                    if !self.lost {
                        self.model.access(s, buf, offset, offset + len, Some(Shadow::filled(value, len as usize)), None);
                    }
                    return;
                }
                let req = calls::Memset::wrap(wire::Memset {
                    dst: ptr,
                    value: u32::from(value),
                    width: MemsetWidth::Byte,
                    count: len,
                    stream: handle,
                    sync: false,
                });
                match (target, m.stream_live(s)) {
                    (Target::Live { buf, offset }, true) => {
                        m.access(s, buf, offset, offset + len, Some(Shadow::filled(value, len as usize)), None);
                        self.pair.post(&req);
                    }
                    _ if len > 0 => self.refused(&req, "a memset of freed memory, out of bounds or on a destroyed stream"),
                    _ => {}
                }
            }
            Op::StreamCreate => {
                if m.streams.len() >= MAX_OBJECTS {
                    return;
                }
                let Some(Response::StreamCreate(c)) = self.call_for::<calls::StreamCreate>(wire::StreamCreate { device: 0, flags: 0, priority: 0 })
                else {
                    return;
                };
                let handle = c.stream;
                self.model.streams.push(StreamSlot { handle, live: true, seq: 0, order: Order::default() });
            }
            Op::StreamDestroy { stream } => {
                let Some(s @ 1..) = m.stream(stream) else { return };
                let req = calls::StreamDestroy::wrap(wire::StreamRef { stream: m.stream_handle(s) });
                if m.stream_live(s) {
                    // Posted; its work still completes.
                    m.streams[s - 1].live = false;
                    self.pair.post(&req);
                } else {
                    self.refused(&req, "hipStreamDestroy of a destroyed stream");
                }
            }
            Op::StreamSynchronize { stream } => {
                let Some(s) = m.stream(stream) else { return };
                let req = calls::StreamSynchronize::wrap(wire::StreamRef { stream: m.stream_handle(s) });
                if m.stream_live(s) {
                    let result = self.call(&req);
                    if self.ok(result, "hipStreamSynchronize") {
                        self.model.completed(s);
                    }
                } else {
                    self.refused(&req, "hipStreamSynchronize of a destroyed stream");
                }
            }
            Op::EventCreate => {
                if m.events.len() >= MAX_OBJECTS {
                    return;
                }
                let Some(Response::EventCreate(c)) = self.call_for::<calls::EventCreate>(wire::EventCreate { device: 0, flags: 0 }) else { return };
                let handle = c.event;
                self.model.events.push(EventSlot { handle, live: true, recorded: None });
            }
            Op::EventRecord { event, stream } => {
                let (Some(e), Some(s)) = (m.event(event), m.stream(stream)) else { return };
                let req = calls::EventRecord::wrap(wire::EventRecord { event: m.events[e].handle, stream: m.stream_handle(s) });
                if m.events[e].live && m.stream_live(s) {
                    m.global += 1;
                    let order = if s == 0 {
                        m.barrier();
                        Order { knows: Vec::new(), knows_global: m.global }
                    } else {
                        let slot = &m.streams[s - 1];
                        let mut order = slot.order.clone();
                        order.knows.resize(m.streams.len() + 1, 0);
                        order.knows[s] = slot.seq;
                        order
                    };
                    m.events[e].recorded = Some((s, order));
                    self.pair.post(&req);
                } else {
                    self.refused(&req, "hipEventRecord of a destroyed event or on a destroyed stream");
                }
            }
            Op::EventSynchronize { event } | Op::EventQuery { event } => {
                let Some(e) = m.event(event) else { return };
                let r = wire::EventRef { event: m.events[e].handle };
                let sync = matches!(op, Op::EventSynchronize { .. });
                let req = if sync { calls::EventSynchronize::wrap(r) } else { calls::EventQuery::wrap(r) };
                if m.events[e].live {
                    let result = self.call(&req);
                    if self.ok(result, "hipEventSynchronize/Query") && sync {
                        if let Some((_, order)) = self.model.events[e].recorded.clone() {
                            self.model.completed_upto(&order);
                        }
                    }
                } else {
                    self.refused(&req, "hipEventSynchronize/Query of a destroyed event");
                }
            }
            Op::StreamWaitEvent { stream, event } => {
                let (Some(e), Some(s)) = (m.event(event), m.stream(stream)) else { return };
                let req = calls::StreamWaitEvent::wrap(wire::StreamWaitEvent { stream: m.stream_handle(s), event: m.events[e].handle, flags: 0 });
                if m.events[e].live && m.stream_live(s) {
                    if let (Some((_, order)), 1..) = (m.events[e].recorded.clone(), s) {
                        m.streams[s - 1].order.join(&order);
                    }
                    self.pair.post(&req);
                } else {
                    self.refused(&req, "hipStreamWaitEvent with a destroyed stream or event");
                }
            }
            Op::EventDestroy { event } => {
                let Some(e) = m.event(event) else { return };
                let req = calls::EventDestroy::wrap(wire::EventRef { event: m.events[e].handle });
                if m.events[e].live {
                    m.events[e].live = false;
                    self.pair.post(&req);
                } else {
                    self.refused(&req, "hipEventDestroy of a destroyed event");
                }
            }
            Op::DeviceSynchronize => {
                let result = self.call(&calls::DeviceSynchronize::wrap(wire::DeviceRef { device: 0 }));
                if self.ok(result, "hipDeviceSynchronize") {
                    self.model.barrier();
                }
            }
            Op::Break { after } => {
                if !self.pair.link.broken && self.pair.link.break_at.is_none() {
                    self.pair.link.break_at = Some(self.pair.link.crossed + usize::from(after) + 1);
                }
            }
            Op::Idle { millis } => self.pair.now += Duration::from_millis(u64::from(millis)),
        }
    }

    fn graph_memset(&mut self, ptr: u64, len: u64, value: u8, stream: u64) {
        let Some(Response::GraphCreate(g)) = self.call_for::<calls::GraphCreate>(wire::GraphCreate { flags: 0 }) else { return };
        let graph = g.graph;
        let node = wire::GraphAddNode {
            graph,
            kind: GraphNodeKind::Memset,
            dst: ptr,
            value: u32::from(value),
            element_size: 1,
            width: len,
            height: 1,
            pitch: len,
            ..Default::default()
        };
        if self.call_for::<calls::GraphAddNode>(node).is_none() {
            return;
        }
        let Some(Response::GraphInstantiate(x)) = self.call_for::<calls::GraphInstantiate>(wire::GraphInstantiate { graph, flags: 0 }) else {
            return;
        };
        let exec = x.exec;
        self.model.graphs.push((graph, exec));
        self.pair.post(&calls::GraphLaunch::wrap(wire::GraphLaunch { exec, stream }));
    }

    /// Every live buffer reads back as the model says; nothing failed on the way.
    fn finish(&mut self) {
        if self.lost {
            // Every later call fails the same way, and nothing hangs.
            let result = self.call(&calls::DeviceSynchronize::wrap(wire::DeviceRef { device: 0 }));
            let e = result.expect_err("a call after the connection was lost");
            assert_eq!(e.code, HipError::NOT_INITIALIZED, "{}", e.message);
            return;
        }
        let result = self.call(&calls::DeviceSynchronize::wrap(wire::DeviceRef { device: 0 }));
        if !self.ok(result, "the final hipDeviceSynchronize") {
            return self.finish();
        }
        self.model.barrier();
        for (graph, exec) in std::mem::take(&mut self.model.graphs) {
            let result = self.call(&calls::GraphExecDestroy::wrap(wire::GraphExecRef { exec }));
            if !self.ok(result, "hipGraphExecDestroy") {
                return self.finish();
            }
            let result = self.call(&calls::GraphDestroy::wrap(wire::GraphRef { graph }));
            if !self.ok(result, "hipGraphDestroy") {
                return self.finish();
            }
        }
        let live: Vec<(u64, u64, Shadow)> = self.model.buffers.iter().filter(|b| b.live).map(|b| (b.ptr, b.size, b.shadow.clone())).collect();
        for (ptr, size, shadow) in live {
            assert!(size as usize <= CLIENT_MEMORY);
            let got = match self.download(ptr, size, 0) {
                Ok(got) => got,
                Err(e) => {
                    self.ok(Err(e), "the final download");
                    return self.finish();
                }
            };
            self.stats.bytes_checked += check_bytes(&shadow, &got, || format!("the {size}-byte buffer at {ptr:#x} at the end"));
        }
        if !self.ok(Ok(()), "the final downloads") {
            return self.finish();
        }
        assert!(!self.pair.client.session.has_pending_landings(), "every landing arrived");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shadow against a byte-wise oracle (`Option<u8>` per byte) over a scripted mix of
    /// writes, copies and forgetting, and `check_bytes` against it with a difference at every
    /// position, known or not.
    #[test]
    fn shadow_and_check_bytes_agree_with_a_byte_wise_model() {
        let len = 40;
        let mut shadow = Shadow::unknown(len);
        let mut oracle: Vec<Option<u8>> = vec![None; len];
        let steps: [(u8, usize, usize, u8); 9] =
            [(0, 3, 20, 7), (1, 10, 12, 0), (0, 0, 2, 9), (2, 5, 30, 0), (1, 19, 25, 0), (0, 24, 40, 3), (1, 0, 40, 0), (0, 8, 9, 1), (3, 0, 0, 0)];
        for (kind, start, end, seed) in steps {
            match kind {
                0 => {
                    let data = upload_bytes(seed, end - start);
                    shadow.write(start as u64, &Shadow::known(data.clone()));
                    oracle[start..end].iter_mut().zip(&data).for_each(|(o, d)| *o = Some(*d));
                }
                1 => {
                    shadow.forget(start as u64, end as u64);
                    oracle[start..end].fill(None);
                }
                2 => {
                    // Copy `start..start + 8` over `end - 8..end` (bytes known or not).
                    let src = shadow.range(start as u64, start as u64 + 8);
                    shadow.write(end as u64 - 8, &src);
                    let from = oracle[start..start + 8].to_vec();
                    oracle[end - 8..end].copy_from_slice(&from);
                }
                _ => {
                    let mut all = shadow.range(0, len as u64);
                    all.forget_all();
                    assert!((0..len).all(|i| !all.is_known(i)));
                }
            }
            for (i, want) in oracle.iter().enumerate() {
                assert_eq!(shadow.is_known(i), want.is_some(), "byte {i}");
                if let Some(b) = *want {
                    assert_eq!(shadow.bytes[i], b, "byte {i}");
                }
            }
            let got: Vec<u8> = shadow.bytes.clone();
            let known = oracle.iter().filter(|b| b.is_some()).count();
            assert_eq!(check_bytes(&shadow, &got, String::new), known);
            for (i, want) in oracle.iter().enumerate() {
                let mut bad = got.clone();
                bad[i] ^= 0x40;
                let caught = std::panic::catch_unwind(|| check_bytes(&shadow, &bad, String::new)).is_err();
                assert_eq!(caught, want.is_some(), "byte {i}");
            }
        }
        assert!(shadow.unknown.windows(2).all(|w| w[0].1 < w[1].0), "ranges sorted, disjoint, not touching: {:?}", shadow.unknown);
    }
}
