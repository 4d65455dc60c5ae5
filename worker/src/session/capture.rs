//! Stream capture (`hipStreamBeginCapture` ... `hipStreamEndCapture`): while a stream
//! captures, the work queued on it is checked as the same node added explicitly would be and
//! recorded as a node of the capture's graph (the same [`Graph`](super::graph) object explicit
//! graphs use) instead of reaching the backend; the captured step lives on the worker, and
//! instantiating it takes the ordinary graph path (a native CUDA/HIP graph, or a replayed list).
//!
//! A capture sequence starts on its origin stream; other streams join it by waiting on an
//! event recorded in it, and must be joined back (the origin waiting on their events) before
//! it ends. Each capturing stream keeps the nodes its next work depends on. Work that cannot
//! be recorded (host copies, synchronisation, ...) invalidates the capture and fails with
//! HIP's error, as ROCm's `hip_graph.cpp` / `hip_stream.cpp` answer; the client sends its
//! thread id and capture mode where HIP's per-thread rules need them.

use super::graph::{Graph, NodeParams};
use super::{Failure, Session};
use crate::backend::blas::{BlasCall, BlasHandle};
use crate::backend::{LaunchConfig, MemsetPattern, PitchedFill};
use proto_core::wire;
use proto_core::Status;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use zerocopy::byteorder::little_endian::U64;

/// `hipStreamCaptureModeGlobal`.
const MODE_GLOBAL: u32 = 0;
/// `hipStreamCaptureModeRelaxed`.
const MODE_RELAXED: u32 = 2;
/// `hipStreamCaptureStatus` values.
const STATUS_NONE: u32 = 0;
const STATUS_ACTIVE: u32 = 1;
const STATUS_INVALIDATED: u32 = 2;
/// `hipStreamSetCaptureDependencies` (`hipStreamAddCaptureDependencies` is 0).
const SET_DEPENDENCIES: u32 = 1;

/// One capture sequence, from `hipStreamBeginCapture` to `hipStreamEndCapture`.
struct Sequence {
    graph: u64,
    /// The stream that began it (and must end it).
    origin: u64,
    mode: u32,
    /// The client thread that began it (thread-local and global captures end on it).
    thread: u64,
    invalidated: bool,
    /// The capture made its graph (an invalid capture destroys it); a graph given to
    /// `hipStreamBeginCaptureToGraph` stays the caller's.
    owns_graph: bool,
    /// Nodes the graph held before the capture, and nodes dropped from a stream's
    /// dependencies: neither is captured work left unjoined.
    not_captured: HashSet<u64>,
}

/// The session's capture sequences and the streams and events taking part.
#[derive(Default)]
pub(super) struct Captures {
    sequences: HashMap<u64, Sequence>,
    /// Capturing streams: their sequence and the nodes their next work depends on.
    streams: HashMap<u64, (u64, Vec<u64>)>,
    /// Events last recorded on a capturing stream: the sequence and the nodes a stream
    /// waiting on the event continues from.
    events: HashMap<u64, (u64, Vec<u64>)>,
    last_id: u64,
    /// The latest dependency list answered, which the reply borrows.
    reply: Vec<U64>,
}

fn failure(status: Status, why: impl Into<String>) -> Failure {
    Failure::new(status, why)
}

fn invalidated() -> Failure {
    failure(Status::STREAM_CAPTURE_INVALIDATED, "the stream's capture was invalidated by an earlier operation")
}

impl Session {
    /// Records work queued on `stream` as a node when the stream captures (`true`: nothing
    /// more to do), checked as the same explicit node would be; `false`: not capturing.
    fn capture_work(&mut self, stream: u64, params: impl FnOnce() -> NodeParams) -> Result<bool, Failure> {
        let Some((id, tails)) = self.captures.streams.get(&stream) else {
            return Ok(false);
        };
        let id = *id;
        let sequence = &self.captures.sequences[&id];
        if sequence.invalidated {
            return Err(invalidated());
        }
        let graph = sequence.graph;
        let dependencies: Vec<U64> = tails.iter().map(|&n| U64::new(n)).collect();
        let params = params();
        self.graph_node_op(&params)?;
        let node = self.graph_insert_node(graph, &dependencies, params)?.node;
        self.captures.streams.insert(stream, (id, vec![node]));
        Ok(true)
    }

    /// A kernel launch on a capturing stream: a kernel node.
    pub(super) fn capture_kernel(&mut self, stream: u64, function: u64, config: LaunchConfig, args: &[u8]) -> Result<bool, Failure> {
        if !self.captures.streams.contains_key(&stream) {
            return Ok(false);
        }
        if config.grid.contains(&0) || config.block.contains(&0) {
            return Err(failure(Status::INVALID_CONFIGURATION, format!("grid {:?} block {:?}", config.grid, config.block)));
        }
        self.capture_work(stream, || NodeParams::Kernel { function, config, args: Arc::from(args) })
    }

    /// A BLAS routine on a capturing stream: a BLAS node, run through the backend's BLAS at
    /// every launch. Routines reading device arrays of pointers (`gemmBatched`) are recorded
    /// only where the backend's library reads them inside the session's GPU context
    /// (`blas_pointer_arrays_in_graphs`): the captured work before them usually writes those
    /// arrays, so the matrices they name are known only at replay, too late for the session's
    /// operand checks.
    pub(super) fn capture_blas(
        &mut self,
        stream: u64,
        handle: BlasHandle,
        device: crate::backend::DeviceIndex,
        call: BlasCall,
    ) -> Result<bool, Failure> {
        if !self.captures.streams.contains_key(&stream) {
            return Ok(false);
        }
        if call.pointer_arrays && !self.backend.blas_pointer_arrays_in_graphs() {
            let why = format!(
                "BLAS {:?} with device arrays of pointers cannot be captured on the {} backend (the arrays are read only at replay, \
                 so the matrices they name cannot be checked); use the strided-batched form in captured work",
                call.routine,
                self.backend.name()
            );
            return self.capture_refuse(stream, &why).map(|()| false);
        }
        self.capture_work(stream, || NodeParams::Blas { handle, device, call })
    }

    /// Work on a capturing `stream` that cannot be recorded, refused with `why`: the capture is
    /// invalidated (`hipErrorStreamCaptureUnsupported`; after an invalidation
    /// `hipErrorStreamCaptureInvalidated`). `Ok`: the stream does not capture.
    pub(super) fn capture_refuse(&mut self, stream: u64, why: &str) -> Result<(), Failure> {
        let Some((id, _)) = self.captures.streams.get(&stream) else {
            return Ok(());
        };
        let sequence = self.captures.sequences.get_mut(id).expect("a capturing stream's sequence");
        if sequence.invalidated {
            return Err(invalidated());
        }
        sequence.invalidated = true;
        Err(failure(Status::STREAM_CAPTURE_UNSUPPORTED, format!("{why}; the capture is invalidated")))
    }

    /// A memset (1D or pitched) on a capturing stream: a memset node.
    pub(super) fn capture_memset(&mut self, stream: u64, fill: PitchedFill, pattern: MemsetPattern) -> Result<bool, Failure> {
        self.capture_work(stream, || NodeParams::Memset { fill, pattern })
    }

    /// A device-to-device copy on a capturing stream: a memcpy node.
    pub(super) fn capture_copy(&mut self, stream: u64, dst: u64, src: u64, len: u64) -> Result<bool, Failure> {
        self.capture_work(stream, || NodeParams::Memcpy { dst, src, len })
    }

    /// A 2D/3D copy between device memory and arrays on a capturing stream: a memcpy node.
    pub(super) fn capture_copy_3d(&mut self, stream: u64, copy: &wire::Copy3D) -> Result<bool, Failure> {
        self.capture_work(stream, || NodeParams::Copy3D(Box::new(wire::Copy3D { stream: 0, sync: false, ..copy.clone() })))
    }

    /// `hipMallocAsync` on a capturing stream: a memory allocation node, as ROCm captures it
    /// (`capturehipMallocAsync`), the memory the graph's from now on; `None`: not capturing.
    pub(super) fn capture_mem_alloc(
        &mut self,
        stream: u64,
        device: crate::backend::DeviceIndex,
        size: u64,
    ) -> Result<Option<wire::AsyncAllocation>, Failure> {
        let Some((id, tails)) = self.captures.streams.get(&stream) else {
            return Ok(None);
        };
        let id = *id;
        let sequence = &self.captures.sequences[&id];
        if sequence.invalidated {
            return Err(invalidated());
        }
        if size == 0 {
            return Ok(Some(wire::AsyncAllocation { ptr: 0, device }));
        }
        let graph = sequence.graph;
        let dependencies: Vec<U64> = tails.iter().map(|&n| U64::new(n)).collect();
        let req = wire::GraphAddMemAllocNode { graph, dependencies: proto_core::field::List(&dependencies), device, size };
        let added = self.add_mem_alloc_node(req)?;
        self.captures.streams.insert(stream, (id, vec![added.node]));
        Ok(Some(wire::AsyncAllocation { ptr: added.ptr, device }))
    }

    /// `hipFreeAsync` on a capturing stream of memory a capture or an allocation node made: a
    /// memory free node (`capturehipFreeAsync`); `false`: not capturing, or other memory.
    pub(super) fn capture_mem_free(&mut self, stream: u64, ptr: u64) -> Result<bool, Failure> {
        let Some((id, tails)) = self.captures.streams.get(&stream) else {
            return Ok(false);
        };
        if !self.graph_memory_unfreed(ptr) {
            return Ok(false);
        }
        let id = *id;
        let sequence = &self.captures.sequences[&id];
        if sequence.invalidated {
            return Err(invalidated());
        }
        let graph = sequence.graph;
        let dependencies: Vec<U64> = tails.iter().map(|&n| U64::new(n)).collect();
        let req = wire::GraphAddMemFreeNode { graph, dependencies: proto_core::field::List(&dependencies), ptr, any_memory: false };
        let node = self.add_mem_free_node(req)?.node;
        self.captures.streams.insert(stream, (id, vec![node]));
        Ok(true)
    }

    /// A host function (`hipLaunchHostFunc`, `hipStreamAddCallback`) on a capturing stream: a
    /// host node, whose callback the client registered to run at every replay.
    pub(super) fn capture_host(&mut self, stream: u64, token: u64) -> Result<bool, Failure> {
        self.capture_work(stream, || NodeParams::Host { token })
    }

    /// `hipEventRecord` on a capturing stream records no node: the event remembers where the
    /// capture stands, for streams that wait on it. Recorded elsewhere, it forgets (`false`:
    /// record it as usual).
    pub(super) fn capture_event_record(&mut self, event: u64, stream: u64) -> Result<bool, Failure> {
        let Some((id, tails)) = self.captures.streams.get(&stream) else {
            self.captures.events.remove(&event);
            return Ok(false);
        };
        if self.captures.sequences[id].invalidated {
            return Err(invalidated());
        }
        self.captures.events.insert(event, (*id, tails.clone()));
        Ok(true)
    }

    /// `hipStreamWaitEvent` where capture is involved: a stream waiting on an event of a
    /// capture joins it (or, capturing already, adds the event's nodes to its dependencies).
    /// `false`: no capture involved, an ordinary wait.
    pub(super) fn capture_wait_event(&mut self, stream: u64, event: u64) -> Result<bool, Failure> {
        let waiting = self.captures.streams.get(&stream).map(|(id, _)| *id);
        let recorded = self.captures.events.get(&event).filter(|(id, _)| self.captures.sequences.contains_key(id)).cloned();
        match (waiting, recorded) {
            (None, None) => Ok(false),
            (Some(id), _) if self.captures.sequences[&id].invalidated => Err(invalidated()),
            // An event recorded outside the capture: work the graph does not contain, so no
            // dependency to record (ROCm's runtime waits on it at capture time only).
            (Some(_), None) => Ok(true),
            (None, Some(_)) if stream == 0 => Err(failure(Status::STREAM_CAPTURE_IMPLICIT, "the legacy null stream cannot join a capture")),
            (None, Some((id, nodes))) => {
                self.materialize_per_thread(stream)?;
                self.streams.get(stream)?;
                self.captures.streams.insert(stream, (id, nodes));
                Ok(true)
            }
            (Some(id), Some((other, nodes))) if id == other => {
                let tails = &mut self.captures.streams.get_mut(&stream).expect("capturing").1;
                for node in nodes {
                    if !tails.contains(&node) {
                        tails.push(node);
                    }
                }
                Ok(true)
            }
            (Some(_), Some(_)) => Err(failure(Status::STREAM_CAPTURE_MERGE, format!("event {event:#x} belongs to another capture"))),
        }
    }

    /// Whether the legacy null stream may not be used: a blocking stream captures.
    fn capture_blocks_legacy(&self) -> bool {
        self.captures.streams.iter().any(|(&stream, (id, _))| !self.captures.sequences[id].invalidated && self.streams.get(stream).is_ok_and(|s| s.2))
    }

    fn invalidate_all_captures(&mut self) {
        self.captures.sequences.values_mut().for_each(|s| s.invalidated = true);
    }

    /// HIP's rules for work or a wait on `stream` that is not recorded: on a capturing stream
    /// it invalidates the capture (`hipErrorStreamCaptureUnsupported`), after an invalidation
    /// `hipErrorStreamCaptureInvalidated`; the legacy null stream while a blocking stream
    /// captures invalidates every capture (`hipErrorStreamCaptureImplicit`).
    pub(super) fn capture_gate(&mut self, stream: u64) -> Result<(), Failure> {
        if self.captures.sequences.is_empty() {
            return Ok(());
        }
        if stream == 0 {
            if self.capture_blocks_legacy() {
                self.invalidate_all_captures();
                return Err(failure(Status::STREAM_CAPTURE_IMPLICIT, "the legacy null stream was used while a blocking stream captures"));
            }
            return Ok(());
        }
        self.capture_refuse(stream, "this operation cannot be captured")
    }

    /// `hipDeviceSynchronize` during any capture invalidates them all
    /// (`hipErrorStreamCaptureUnsupported`).
    pub(super) fn capture_device_sync_gate(&mut self) -> Result<(), Failure> {
        if self.captures.sequences.is_empty() {
            return Ok(());
        }
        self.invalidate_all_captures();
        Err(failure(Status::STREAM_CAPTURE_UNSUPPORTED, "device synchronisation during stream capture"))
    }

    /// A destroyed stream leaves its capture; the capture it began ends with it.
    pub(super) fn capture_forget_stream(&mut self, stream: u64) {
        let Some((id, _)) = self.captures.streams.remove(&stream) else { return };
        if self.captures.sequences.get(&id).is_some_and(|s| s.origin == stream) {
            self.capture_abandon(id);
        }
    }

    /// Ends sequence `id` without a result: nobody can get its graph any more, so a graph it
    /// created goes too.
    fn capture_abandon(&mut self, id: u64) {
        if let Some(sequence) = self.capture_end_sequence(id).filter(|s| s.owns_graph) {
            self.capture_drop_graph(sequence.graph);
        }
    }

    /// After streams went (`hipDeviceReset`): captures begun on them end, streams gone leave.
    pub(super) fn capture_release(&mut self) {
        let gone: Vec<u64> = self.captures.sequences.iter().filter(|(_, s)| self.streams.get(s.origin).is_err()).map(|(&id, _)| id).collect();
        for id in gone {
            self.capture_abandon(id);
        }
        let streams = &self.streams;
        self.captures.streams.retain(|&stream, _| streams.get(stream).is_ok());
    }

    /// Removes sequence `id` with its streams and events; an invalid capture's own graph goes.
    fn capture_end_sequence(&mut self, id: u64) -> Option<Sequence> {
        let sequence = self.captures.sequences.remove(&id)?;
        self.captures.streams.retain(|_, (s, _)| *s != id);
        self.captures.events.retain(|_, (s, _)| *s != id);
        Some(sequence)
    }

    fn capture_drop_graph(&mut self, graph: u64) {
        if let Ok(graph) = self.graphs.graphs.remove(graph) {
            for node in graph.nodes {
                let _ = self.graphs.nodes.remove(node);
            }
        }
        self.blas_release_retired();
    }

    pub(super) fn stream_begin_capture_request(&mut self, req: wire::StreamBeginCapture<'_>) -> Result<wire::Empty, Failure> {
        if req.stream == 0 {
            return Err(failure(Status::STREAM_CAPTURE_UNSUPPORTED, "capture cannot begin on the legacy null stream"));
        }
        if req.mode > MODE_RELAXED {
            return Err(failure(Status::INVALID_VALUE, format!("unknown capture mode {}", req.mode)));
        }
        self.materialize_per_thread(req.stream)?;
        self.streams.get(req.stream)?;
        if self.captures.streams.contains_key(&req.stream) {
            return Err(failure(Status::ILLEGAL_STATE, "the stream is capturing already"));
        }
        let dependencies: Vec<u64> = req.dependencies.0.iter().map(|d| d.get()).collect();
        let (graph, owns_graph, not_captured) = if req.graph == 0 {
            if !dependencies.is_empty() {
                return Err(failure(Status::INVALID_VALUE, "dependencies need the graph they belong to"));
            }
            self.graphs.graphs.check_capacity()?;
            (self.graphs.graphs.insert(Graph::default()), true, HashSet::new())
        } else {
            let graph = self.graphs.graphs.get(req.graph).map_err(|_| failure(Status::INVALID_VALUE, format!("{:#x} is not a graph", req.graph)))?;
            let existing: HashSet<u64> = graph.nodes.iter().copied().collect();
            if let Some(d) = dependencies.iter().find(|d| !existing.contains(d)) {
                return Err(failure(Status::INVALID_VALUE, format!("dependency {d:#x} is not a node of the graph")));
            }
            (req.graph, false, existing)
        };
        self.captures.last_id += 1;
        let id = self.captures.last_id;
        let sequence = Sequence { graph, origin: req.stream, mode: req.mode, thread: req.thread, invalidated: false, owns_graph, not_captured };
        self.captures.sequences.insert(id, sequence);
        self.captures.streams.insert(req.stream, (id, dependencies));
        Ok(wire::Empty {})
    }

    pub(super) fn stream_end_capture_request(&mut self, req: wire::StreamEndCapture) -> Result<wire::GraphRef, Failure> {
        let Some((id, tails)) = self.captures.streams.get(&req.stream).cloned() else {
            return Err(failure(Status::ILLEGAL_STATE, "the stream is not capturing"));
        };
        let sequence = &self.captures.sequences[&id];
        if sequence.origin != req.stream {
            return Err(failure(Status::STREAM_CAPTURE_UNMATCHED, "capture ends on the stream that began it"));
        }
        if sequence.mode != MODE_RELAXED && sequence.thread != req.thread {
            return Err(failure(Status::STREAM_CAPTURE_WRONG_THREAD, "a global or thread-local capture ends on the thread that began it"));
        }
        let sequence = self.capture_end_sequence(id).expect("present");
        let release = |session: &mut Self, status, why: &str| {
            if sequence.owns_graph {
                session.capture_drop_graph(sequence.graph);
            }
            Err(failure(status, why))
        };
        if sequence.invalidated {
            return release(self, Status::STREAM_CAPTURE_INVALIDATED, "the capture was invalidated by an operation it could not record");
        }
        let Ok(graph) = self.graphs.graphs.get(sequence.graph) else {
            return Err(failure(Status::INVALID_VALUE, "the capture's graph was destroyed"));
        };
        // Captured work that nothing after it depends on must be the origin's own last work:
        // anything else is a forked stream never joined back.
        let sources: HashSet<u64> = graph.edges.iter().map(|&(from, _)| from).collect();
        let unjoined = graph.nodes.iter().any(|n| !sources.contains(n) && !tails.contains(n) && !sequence.not_captured.contains(n));
        if unjoined {
            return release(self, Status::STREAM_CAPTURE_UNJOINED, "a stream forked from the capture was not joined back into its origin");
        }
        Ok(wire::GraphRef { graph: sequence.graph })
    }

    pub(super) fn stream_capture_query_request(&mut self, req: wire::StreamCaptureQuery) -> Result<wire::CaptureInfo<'_>, Failure> {
        let none = || wire::CaptureInfo { status: STATUS_NONE, id: 0, graph: 0, dependencies: proto_core::field::List(&[]) };
        if req.stream == 0 {
            if self.capture_blocks_legacy() {
                return Err(failure(Status::STREAM_CAPTURE_IMPLICIT, "the legacy null stream was queried while a blocking stream captures"));
            }
            return Ok(none());
        }
        self.materialize_per_thread(req.stream)?;
        self.streams.get(req.stream)?;
        let Some((id, tails)) = self.captures.streams.get(&req.stream) else {
            return Ok(none());
        };
        let sequence = &self.captures.sequences[id];
        if sequence.invalidated {
            return Ok(wire::CaptureInfo { status: STATUS_INVALIDATED, ..none() });
        }
        let (id, graph) = (*id, sequence.graph);
        self.captures.reply = tails.iter().map(|&n| U64::new(n)).collect();
        Ok(wire::CaptureInfo { status: STATUS_ACTIVE, id, graph, dependencies: proto_core::field::List(&self.captures.reply) })
    }

    pub(super) fn stream_update_capture_dependencies_request(
        &mut self,
        req: wire::StreamUpdateCaptureDependencies<'_>,
    ) -> Result<wire::Empty, Failure> {
        let Some((id, _)) = self.captures.streams.get(&req.stream) else {
            return Err(failure(Status::ILLEGAL_STATE, "the stream is not capturing"));
        };
        let id = *id;
        if req.flags > SET_DEPENDENCIES {
            return Err(failure(Status::INVALID_VALUE, format!("unknown flags {:#x}", req.flags)));
        }
        let graph = self.captures.sequences[&id].graph;
        let nodes: Vec<u64> = req.dependencies.0.iter().map(|d| d.get()).collect();
        for &node in &nodes {
            self.graph_member(graph, node)?;
        }
        let tails = &mut self.captures.streams.get_mut(&req.stream).expect("capturing").1;
        if req.flags == SET_DEPENDENCIES {
            let dropped: Vec<u64> = tails.iter().copied().filter(|n| !nodes.contains(n)).collect();
            tails.clear();
            self.captures.sequences.get_mut(&id).expect("present").not_captured.extend(dropped);
        }
        let tails = &mut self.captures.streams.get_mut(&req.stream).expect("capturing").1;
        for node in nodes {
            if !tails.contains(&node) {
                tails.push(node);
            }
        }
        Ok(wire::Empty {})
    }

    /// HIP's `CHECK_STREAM_CAPTURE_SUPPORTED`: a thread in global or thread-local mode may not
    /// make such a call while it captures itself (global or thread-local captures), nor in
    /// global mode while any global capture runs; the captures concerned are invalidated.
    pub(super) fn capture_check_request(&mut self, req: wire::CaptureCheck) -> Result<wire::Empty, Failure> {
        if req.mode >= MODE_RELAXED {
            return Ok(wire::Empty {});
        }
        let own = |s: &Sequence| s.thread == req.thread && s.mode != MODE_RELAXED;
        let global = |s: &Sequence| req.mode == MODE_GLOBAL && s.mode == MODE_GLOBAL;
        let mut refused = false;
        for sequence in self.captures.sequences.values_mut().filter(|s| own(s) || global(s)) {
            sequence.invalidated = true;
            refused = true;
        }
        if refused {
            return Err(failure(
                Status::STREAM_CAPTURE_UNSUPPORTED,
                "this call is not permitted during stream capture in this thread's capture mode",
            ));
        }
        Ok(wire::Empty {})
    }
}

/// A pitched device-to-device 2D copy as the 3D copy a memcpy node holds.
pub(super) fn copy_2d(req: &wire::MemcpyDtoD2D) -> wire::Copy3D {
    let side = |ptr, pitch| wire::CopyPlace { ptr, pitch, height: req.height, ..Default::default() };
    let extent = wire::CopyExtent { width: req.width, height: req.height, depth: 1 };
    wire::Copy3D { copy: wire::CopyBox { dst: side(req.dst, req.dst_pitch), src: side(req.src, req.src_pitch), extent }, stream: 0, sync: false }
}
