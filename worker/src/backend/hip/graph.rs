//! Graphs as the loaded runtime's own `hipGraph_t`: the plan becomes a graph of kernel,
//! memset, memcpy and empty nodes with the plan's dependencies, instantiated once and
//! replayed with `hipGraphLaunch`. A runtime without the graph entry points gets the recorded
//! node list replayed on the stream instead (the trait's defaults).

use super::api::{Function, Graph, GraphExec, GraphNode};
use super::HipBackend;
use crate::backend::{BackendError, ExecGraph, GraphBackend, GraphOp, GraphPlan, LaunchConfig, MemsetPattern, StreamHandle};
use std::ffi::{c_uint, c_void};
use std::sync::Arc;

/// `dim3`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Dim3 {
    x: u32,
    y: u32,
    z: u32,
}

/// `hipKernelNodeParams` (ROCm 7 layout).
#[repr(C)]
#[derive(Debug)]
pub struct KernelNodeParams {
    block_dim: Dim3,
    extra: *mut *mut c_void,
    func: *mut c_void,
    grid_dim: Dim3,
    kernel_params: *mut *mut c_void,
    shared_mem_bytes: c_uint,
}

impl KernelNodeParams {
    /// A kernel node launching `func` as `config` says, its arguments given by `extra`.
    pub(super) fn new(func: Function, config: &LaunchConfig, extra: *mut *mut c_void) -> Self {
        let [gx, gy, gz] = config.grid;
        let [bx, by, bz] = config.block;
        Self {
            block_dim: Dim3 { x: bx, y: by, z: bz },
            extra,
            func,
            grid_dim: Dim3 { x: gx, y: gy, z: gz },
            kernel_params: std::ptr::null_mut(),
            shared_mem_bytes: config.shared_mem,
        }
    }
}

/// `hipMemsetParams`.
#[repr(C)]
#[derive(Debug)]
pub struct MemsetParams {
    dst: *mut c_void,
    element_size: c_uint,
    height: usize,
    pitch: usize,
    value: c_uint,
    width: usize,
}

impl MemsetParams {
    /// `height` rows of `width` elements of `element_size` bytes at `dst`, `pitch` apart.
    pub(super) fn new(dst: u64, pitch: usize, element_size: u32, value: u32, width: usize, height: usize) -> Self {
        Self { dst: dst as *mut c_void, element_size, height, pitch, value, width }
    }
}

impl HipBackend {
    /// Adds `op` to `graph` after `deps`.
    fn add_graph_node(&self, graph: Graph, op: &GraphOp, deps: &[GraphNode]) -> Result<GraphNode, BackendError> {
        let api = &self.api;
        Ok(match op {
            GraphOp::Kernel { function, config, args } => {
                let f = self.function_entry(*function, |e| e.raw.0)?;
                api.graph_add_kernel_node(graph, deps, f, config, args)?
            }
            GraphOp::Memset { fill, pattern } => {
                let value = match *pattern {
                    MemsetPattern::U8(v) => u32::from(v),
                    MemsetPattern::U16(v) => u32::from(v),
                    MemsetPattern::U32(v) => v,
                };
                // The range was validated by the session.
                let (pitch, width, height) = (fill.pitch as usize, fill.width as usize, fill.height as usize);
                api.graph_add_memset_node(graph, deps, fill.ptr.0, pitch, pattern.elem_size() as u32, value, width, height)?
            }
            GraphOp::Memcpy { dst, src, len } => api.graph_add_memcpy_dtod_node(graph, deps, dst.0, src.0, *len as usize)?,
            GraphOp::Host(_)
            | GraphOp::Copy3D { .. }
            | GraphOp::EventRecord { .. }
            | GraphOp::EventWait { .. }
            | GraphOp::MemOps(_)
            | GraphOp::Blas { .. } => {
                return Err(BackendError::NotSupported(
                    "host steps, 3D copies, event nodes and BLAS routines are replayed, not put in a HIP graph".into(),
                ))
            }
            GraphOp::Empty => api.graph_add_empty_node(graph, deps)?,
        })
    }

    /// Builds `plan` as a `hipGraph_t` of the current device, runs `f` on it and destroys it.
    fn with_graph<T>(&self, plan: &GraphPlan, f: impl FnOnce(Graph) -> Result<T, BackendError>) -> Result<T, BackendError> {
        let graph = self.api.graph_create()?;
        let result = (|| {
            let mut nodes: Vec<GraphNode> = Vec::with_capacity(plan.ops.len());
            for (op, deps) in plan.ops.iter().zip(&plan.dependencies) {
                let deps: Vec<GraphNode> = deps.iter().map(|&i| nodes[i]).collect();
                nodes.push(self.add_graph_node(graph, op, &deps)?);
            }
            f(graph)
        })();
        // The graph this call created; nothing made from it needs it.
        let _ = self.api.graph_destroy(graph);
        result
    }
}

impl GraphBackend for HipBackend {
    fn graph_instantiate(&self, plan: Arc<GraphPlan>) -> Result<ExecGraph, BackendError> {
        // Event nodes are replayed: this backend's events carry completion bookkeeping that
        // only its own record and wait paths keep (a runtime's record node would bypass it).
        let has_events = plan.ops.iter().any(|op| matches!(op, GraphOp::EventRecord { .. } | GraphOp::EventWait { .. }));
        // BLAS routines too: this backend does not capture hipBLAS calls into its graphs.
        if !self.api.has_graphs() || plan.needs_replay() || has_events || plan.has_blas() {
            return Ok(ExecGraph::Replay(plan));
        }
        self.enter(plan.device)?;
        let built = self.with_graph(&plan, |graph| Ok(self.api.graph_instantiate(graph)?));
        Ok(ExecGraph::Native { exec: built? as u64, device: plan.device })
    }

    fn graph_exec_update(&self, exec: &mut ExecGraph, plan: Arc<GraphPlan>) -> Result<(), BackendError> {
        // Same topology and node kinds: the runtime updates the executable graph in place;
        // what it refuses (a node disabled into an empty one) is instantiated anew.
        let native = self.api.has_graphs() && !plan.needs_replay() && !plan.has_blas() && self.api.hipGraphExecUpdate.is_some();
        if let (&mut ExecGraph::Native { exec: raw, device }, true) = (&mut *exec, native) {
            if device == plan.device {
                self.enter(device)?;
                // A live executable graph made by `graph_instantiate`.
                let updated = self.with_graph(&plan, |graph| Ok(self.api.graph_exec_update(raw as GraphExec, graph).is_ok()))?;
                if updated {
                    return Ok(());
                }
            }
        }
        crate::backend::replace_exec_graph(self, exec, plan)
    }

    fn graph_launch(&self, stream: Option<StreamHandle>, exec: &ExecGraph) -> Result<(), BackendError> {
        let (&ExecGraph::Native { exec, device }, true) = (exec, self.api.has_graphs()) else {
            let ExecGraph::Replay(plan) = exec else {
                return Err(BackendError::InvalidValue("a native graph without the runtime's graph entry points".into()));
            };
            return crate::backend::replay_graph(self, stream, plan);
        };
        let s = self.stream(stream, device)?;
        // A live executable graph made by `graph_instantiate`.
        Ok(self.api.graph_launch(exec as GraphExec, s)?)
    }

    fn graph_upload(&self, stream: Option<StreamHandle>, exec: &ExecGraph) -> Result<(), BackendError> {
        let (&ExecGraph::Native { exec, device }, true) = (exec, self.api.hipGraphUpload.is_some()) else {
            return Ok(());
        };
        let s = self.stream(stream, device)?;
        // A live executable graph made by `graph_instantiate`, and a live stream.
        Ok(self.api.graph_upload(exec as GraphExec, s)?)
    }

    fn graph_exec_destroy(&self, exec: ExecGraph) -> Result<(), BackendError> {
        let (ExecGraph::Native { exec, device }, true) = (exec, self.api.has_graphs()) else {
            return Ok(());
        };
        self.enter(device)?;
        // A live executable graph, destroyed once.
        Ok(self.api.graph_exec_destroy(exec as GraphExec)?)
    }
}
