//! Graphs: a validated node list, in an order that respects every dependency, instantiated
//! once and launched on a stream as a whole.
//!
//! The session owns graphs and their nodes (explicitly built, and later captured ones: both
//! become the same [`GraphPlan`]); a backend only sees what it must execute. Every backend
//! gets the recorded-list implementation by default ([`ExecGraph::Replay`]: the nodes are
//! queued on the launch stream one after another, in order, through the backend's ordinary
//! launch, memset and copy paths, so they run on the stream's executor). A backend with
//! graphs of its own (CUDA's `CUgraph`, HIP's `hipGraph_t`) overrides [`GraphBackend`] to
//! build one at instantiation and launch it natively ([`ExecGraph::Native`]).

use super::blas::{BlasBackend, BlasCall, BlasHandle};
use super::{
    ArrayBackend, BackendError, DeviceIndex, DevicePtr, EventBackend, EventHandle, Extent, FunctionHandle, LaunchConfig, MemOp, MemoryBackend,
    MemsetBackend, MemsetPattern, ModuleBackend, PitchedFill, Place, StreamBackend, StreamHandle, StreamOpsBackend,
};
use std::sync::Arc;

/// What one node does when the graph runs.
#[derive(Debug, Clone, PartialEq)]
pub enum GraphOp {
    /// A kernel launch with its packed arguments.
    Kernel {
        /// The function.
        function: FunctionHandle,
        /// Geometry.
        config: LaunchConfig,
        /// Packed arguments.
        args: Arc<[u8]>,
    },
    /// A pitched fill (one row for a plain memset).
    Memset {
        /// The block to fill.
        fill: PitchedFill,
        /// The element.
        pattern: MemsetPattern,
    },
    /// A device-to-device copy of `len` bytes.
    Memcpy {
        /// Destination.
        dst: DevicePtr,
        /// Source.
        src: DevicePtr,
        /// Bytes.
        len: u64,
    },
    /// A 3D copy between device memory and arrays.
    Copy3D {
        /// Destination.
        dst: Place,
        /// Source.
        src: Place,
        /// The box.
        extent: Extent,
        /// The destination's device.
        device: DeviceIndex,
    },
    /// A host step (the client's callback, run through the session's callback channel):
    /// the stream waits for it.
    Host(HostStep),
    /// Records an event into the launch stream (`hipGraphAddEventRecordNode`).
    EventRecord {
        /// The event.
        event: EventHandle,
    },
    /// Makes the launch stream wait for an event's latest record (`hipGraphAddEventWaitNode`).
    EventWait {
        /// The event.
        event: EventHandle,
    },
    /// Stream memory operations, in order (`hipGraphAddBatchMemOpNode`).
    MemOps(Arc<[MemOp]>),
    /// A BLAS routine captured from a stream: run through the backend's BLAS at every
    /// launch, on the launch stream, with the handle it was captured with.
    Blas {
        /// The backend's handle (kept alive while a graph holds it).
        handle: BlasHandle,
        /// The routine, its operands checked by the session.
        call: BlasCall,
    },
    /// Nothing (a join or fork point).
    Empty,
}

/// A host step a graph runs at every launch; its error is latched on the stream.
#[derive(Clone)]
pub struct HostStep(pub Arc<dyn Fn() -> Result<(), BackendError> + Send + Sync>);

impl std::fmt::Debug for HostStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostStep")
    }
}

impl PartialEq for HostStep {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl GraphPlan {
    /// Whether the plan must be replayed even by a backend with graphs of its own: a host
    /// step waits on the client, which a runtime's host node must not; 3D copies and stream
    /// memory operations go through the backend's own paths (arrays included, and the
    /// backends' emulated waits and writes).
    pub fn needs_replay(&self) -> bool {
        self.ops.iter().any(|op| matches!(op, GraphOp::Host(_) | GraphOp::Copy3D { .. } | GraphOp::MemOps(_)))
    }

    /// Whether the plan runs BLAS routines: a backend builds them into its own graph only if
    /// it can capture its BLAS library's calls (cuda); otherwise the plan is replayed.
    pub fn has_blas(&self) -> bool {
        self.ops.iter().any(|op| matches!(op, GraphOp::Blas { .. }))
    }
}

/// A graph ready to instantiate: its operations, each after every node it depends on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GraphPlan {
    /// The device the graph runs on (its kernels' and memory's).
    pub device: DeviceIndex,
    /// Operations in an order that respects every edge.
    pub ops: Vec<GraphOp>,
    /// For each operation, the indices of the earlier operations it depends on (a backend
    /// with graphs of its own keeps independent branches concurrent).
    pub dependencies: Vec<Vec<usize>>,
}

/// An instantiated graph, as the backend keeps it.
#[derive(Debug)]
pub enum ExecGraph {
    /// The recorded list, replayed node by node on the launch stream.
    Replay(Arc<GraphPlan>),
    /// A graph of the backend's own runtime.
    Native {
        /// The runtime's executable graph handle, as an integer.
        exec: u64,
        /// The device it was instantiated on.
        device: DeviceIndex,
    },
}

/// The graph family: instantiate, launch, destroy. The defaults replay the recorded list.
pub trait GraphBackend:
    ModuleBackend + MemoryBackend + MemsetBackend + StreamOpsBackend + ArrayBackend + EventBackend + StreamBackend + BlasBackend
{
    /// Prepares `plan` for launches.
    fn graph_instantiate(&self, plan: Arc<GraphPlan>) -> Result<ExecGraph, BackendError> {
        Ok(ExecGraph::Replay(plan))
    }

    /// Queues the whole graph on `stream`; a failing node latches its error on the stream
    /// like any queued work.
    fn graph_launch(&self, stream: Option<StreamHandle>, exec: &ExecGraph) -> Result<(), BackendError> {
        let ExecGraph::Replay(plan) = exec else {
            return Err(BackendError::InvalidValue("this backend cannot launch a native graph it did not create".into()));
        };
        replay_graph(self, stream, plan)
    }

    /// Makes `exec` run `plan` from now on (`plan` has the topology `exec` was made with; a
    /// node's parameters, or a node disabled into an empty one, changed). On failure `exec`
    /// is unchanged. The default instantiates `plan` and destroys the old object.
    fn graph_exec_update(&self, exec: &mut ExecGraph, plan: Arc<GraphPlan>) -> Result<(), BackendError> {
        replace_exec_graph(self, exec, plan)
    }

    /// Prepares `exec` for launches on `stream` without running it (`hipGraphUpload`); a
    /// replayed list has nothing to prepare.
    fn graph_upload(&self, stream: Option<StreamHandle>, exec: &ExecGraph) -> Result<(), BackendError> {
        let _ = (stream, exec);
        Ok(())
    }

    /// Releases what [`graph_instantiate`](Self::graph_instantiate) made.
    fn graph_exec_destroy(&self, exec: ExecGraph) -> Result<(), BackendError> {
        drop(exec);
        Ok(())
    }
}

/// Instantiates `plan` in place of `exec` and destroys the old object (in flight, the runtime
/// frees it when its work completes); `exec` is unchanged if instantiation fails.
pub fn replace_exec_graph<B: GraphBackend + ?Sized>(backend: &B, exec: &mut ExecGraph, plan: Arc<GraphPlan>) -> Result<(), BackendError> {
    let rebuilt = backend.graph_instantiate(plan)?;
    let old = std::mem::replace(exec, rebuilt);
    if let Err(e) = backend.graph_exec_destroy(old) {
        // The new graph is in place; the old one is only leaked.
        tracing::warn!(%e, "destroying a replaced executable graph failed");
    }
    Ok(())
}

/// Queues every operation of `plan` on `stream`, in order, through `backend`'s ordinary
/// launch, memset, copy, event record, stream wait and BLAS paths (the recorded-list
/// implementation).
pub fn replay_graph<
    B: ModuleBackend + MemoryBackend + MemsetBackend + StreamOpsBackend + ArrayBackend + EventBackend + StreamBackend + BlasBackend + ?Sized,
>(
    backend: &B,
    stream: Option<StreamHandle>,
    plan: &GraphPlan,
) -> Result<(), BackendError> {
    for op in &plan.ops {
        match op {
            GraphOp::Kernel { function, config, args } => backend.launch_kernel(stream, *function, *config, args)?,
            GraphOp::Memset { fill, pattern } if fill.height == 1 && fill.depth == 1 => backend.memset(stream, fill.ptr, *pattern, fill.width)?,
            GraphOp::Memset { fill, pattern } => backend.memset_pitched(stream, *fill, *pattern)?,
            GraphOp::Memcpy { dst, src, len } => backend.memcpy_dtod(stream, *dst, *src, *len)?,
            GraphOp::Copy3D { dst, src, extent, device } => backend.copy_3d(stream, *device, dst, src, *extent)?,
            GraphOp::Host(step) => {
                let stream = stream.ok_or_else(|| BackendError::InvalidValue("a host step needs a stream".into()))?;
                let step = step.clone();
                backend.launch_checked_host_func(stream, Box::new(move || (step.0)()))?;
            }
            GraphOp::EventRecord { event } => backend.event_record(*event, stream)?,
            GraphOp::EventWait { event } => backend.stream_wait_event(stream, *event)?,
            GraphOp::MemOps(ops) => {
                let stream = stream.ok_or_else(|| BackendError::InvalidValue("stream memory operations need a stream".into()))?;
                for op in ops.iter() {
                    backend.stream_mem_op(stream, *op)?;
                }
            }
            GraphOp::Blas { handle, call } => backend.blas_launch(*handle, stream, call)?,
            GraphOp::Empty => {}
        }
    }
    Ok(())
}
