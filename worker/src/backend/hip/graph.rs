//! Graphs as the loaded runtime's own `hipGraph_t`: the plan becomes a graph of kernel,
//! memset, memcpy and empty nodes with the plan's dependencies, instantiated once and
//! replayed with `hipGraphLaunch`. A runtime without the graph entry points gets the recorded
//! node list replayed on the stream instead (the trait's defaults).

use super::api::{Graph, GraphExec, GraphNode};
use super::error::Check;
use super::result::{LAUNCH_PARAM_BUFFER_POINTER, LAUNCH_PARAM_BUFFER_SIZE, LAUNCH_PARAM_END};
use super::HipBackend;
use crate::backend::{BackendError, ExecGraph, GraphBackend, GraphOp, GraphPlan, MemsetPattern, StreamHandle};
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

/// `hipMemcpyDeviceToDevice`.
const MEMCPY_DEVICE_TO_DEVICE: i32 = 3;

/// The entry points a native graph needs, when the runtime has all of them.
struct GraphApi {
    create: unsafe extern "C" fn(*mut Graph, c_uint) -> i32,
    destroy: unsafe extern "C" fn(Graph) -> i32,
    kernel: unsafe extern "C" fn(*mut GraphNode, Graph, *const GraphNode, usize, *const KernelNodeParams) -> i32,
    memset: unsafe extern "C" fn(*mut GraphNode, Graph, *const GraphNode, usize, *const MemsetParams) -> i32,
    memcpy: unsafe extern "C" fn(*mut GraphNode, Graph, *const GraphNode, usize, *mut c_void, *const c_void, usize, i32) -> i32,
    empty: unsafe extern "C" fn(*mut GraphNode, Graph, *const GraphNode, usize) -> i32,
    instantiate: unsafe extern "C" fn(*mut GraphExec, Graph, u64) -> i32,
    launch: unsafe extern "C" fn(GraphExec, super::api::Stream) -> i32,
    exec_destroy: unsafe extern "C" fn(GraphExec) -> i32,
}

impl HipBackend {
    fn graph_api(&self) -> Option<GraphApi> {
        let a = &self.api;
        Some(GraphApi {
            create: a.hipGraphCreate?,
            destroy: a.hipGraphDestroy?,
            kernel: a.hipGraphAddKernelNode?,
            memset: a.hipGraphAddMemsetNode?,
            memcpy: a.hipGraphAddMemcpyNode1D?,
            empty: a.hipGraphAddEmptyNode?,
            instantiate: a.hipGraphInstantiateWithFlags?,
            launch: a.hipGraphLaunch?,
            exec_destroy: a.hipGraphExecDestroy?,
        })
    }

    /// Adds `op` to `graph` after `deps`.
    fn add_graph_node(&self, api: &GraphApi, graph: Graph, op: &GraphOp, deps: &[GraphNode]) -> Result<GraphNode, BackendError> {
        let mut node: GraphNode = std::ptr::null_mut();
        let (d, n) = (deps.as_ptr(), deps.len());
        match op {
            GraphOp::Kernel { function, config, args } => {
                let f = self.function_entry(*function, |e| e.raw.0)?;
                let mut buffer = args.to_vec();
                let mut size = buffer.len();
                let mut extra: [*mut c_void; 5] = [
                    LAUNCH_PARAM_BUFFER_POINTER as *mut c_void,
                    buffer.as_mut_ptr().cast(),
                    LAUNCH_PARAM_BUFFER_SIZE as *mut c_void,
                    (&mut size as *mut usize).cast(),
                    LAUNCH_PARAM_END as *mut c_void,
                ];
                let [gx, gy, gz] = config.grid;
                let [bx, by, bz] = config.block;
                let params = KernelNodeParams {
                    block_dim: Dim3 { x: bx, y: by, z: bz },
                    extra: extra.as_mut_ptr(),
                    func: f,
                    grid_dim: Dim3 { x: gx, y: gy, z: gz },
                    kernel_params: std::ptr::null_mut(),
                    shared_mem_bytes: config.shared_mem,
                };
                // SAFETY: a live function of the current device; `extra` describes a buffer
                // alive for the call (the runtime copies the arguments into the node).
                unsafe { (api.kernel)(&mut node, graph, d, n, &params) }.check("hipGraphAddKernelNode")?;
            }
            GraphOp::Memset { fill, pattern } => {
                let value = match *pattern {
                    MemsetPattern::U8(v) => u32::from(v),
                    MemsetPattern::U16(v) => u32::from(v),
                    MemsetPattern::U32(v) => v,
                };
                let params = MemsetParams {
                    dst: fill.ptr.0 as *mut c_void,
                    element_size: pattern.elem_size() as c_uint,
                    height: fill.height as usize,
                    pitch: fill.pitch as usize,
                    value,
                    width: fill.width as usize,
                };
                // SAFETY: the range was validated by the session.
                unsafe { (api.memset)(&mut node, graph, d, n, &params) }.check("hipGraphAddMemsetNode")?;
            }
            GraphOp::Memcpy { dst, src, len } => {
                // SAFETY: both ranges were validated by the session.
                unsafe { (api.memcpy)(&mut node, graph, d, n, dst.0 as *mut c_void, src.0 as *const c_void, *len as usize, MEMCPY_DEVICE_TO_DEVICE) }
                    .check("hipGraphAddMemcpyNode1D")?;
            }
            GraphOp::Host(_) | GraphOp::Copy3D { .. } | GraphOp::EventRecord { .. } | GraphOp::EventWait { .. } | GraphOp::MemOps(_) => {
                return Err(BackendError::NotSupported("host steps, 3D copies and event nodes are replayed, not put in a HIP graph".into()))
            }
            GraphOp::Empty => {
                // SAFETY: a live graph; `deps` are nodes of it.
                unsafe { (api.empty)(&mut node, graph, d, n) }.check("hipGraphAddEmptyNode")?;
            }
        }
        Ok(node)
    }
}

impl HipBackend {
    /// Builds `plan` as a `hipGraph_t` of the current device, runs `f` on it and destroys it.
    fn with_graph<T>(&self, api: &GraphApi, plan: &GraphPlan, f: impl FnOnce(Graph) -> Result<T, BackendError>) -> Result<T, BackendError> {
        let mut graph: Graph = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; flags must be 0.
        unsafe { (api.create)(&mut graph, 0) }.check("hipGraphCreate")?;
        let result = (|| {
            let mut nodes: Vec<GraphNode> = Vec::with_capacity(plan.ops.len());
            for (op, deps) in plan.ops.iter().zip(&plan.dependencies) {
                let deps: Vec<GraphNode> = deps.iter().map(|&i| nodes[i]).collect();
                nodes.push(self.add_graph_node(api, graph, op, &deps)?);
            }
            f(graph)
        })();
        // SAFETY: the graph this call created; nothing made from it needs it.
        unsafe { (api.destroy)(graph) };
        result
    }
}

impl GraphBackend for HipBackend {
    fn graph_instantiate(&self, plan: Arc<GraphPlan>) -> Result<ExecGraph, BackendError> {
        // Event nodes are replayed: this backend's events carry completion bookkeeping that
        // only its own record and wait paths keep (a runtime's record node would bypass it).
        let has_events = plan.ops.iter().any(|op| matches!(op, GraphOp::EventRecord { .. } | GraphOp::EventWait { .. }));
        let Some(api) = self.graph_api().filter(|_| !plan.needs_replay() && !has_events) else {
            return Ok(ExecGraph::Replay(plan));
        };
        self.enter(plan.device)?;
        let built = self.with_graph(&api, &plan, |graph| {
            let mut exec: GraphExec = std::ptr::null_mut();
            // SAFETY: a complete graph; a valid out-pointer.
            unsafe { (api.instantiate)(&mut exec, graph, 0) }.check("hipGraphInstantiateWithFlags")?;
            Ok(exec)
        });
        Ok(ExecGraph::Native { exec: built? as u64, device: plan.device })
    }

    fn graph_exec_update(&self, exec: &mut ExecGraph, plan: Arc<GraphPlan>) -> Result<(), BackendError> {
        // Same topology and node kinds: the runtime updates the executable graph in place;
        // what it refuses (a node disabled into an empty one) is instantiated anew.
        let api = self.graph_api().filter(|_| !plan.needs_replay());
        if let (&mut ExecGraph::Native { exec: raw, device }, Some(api), Some(update)) = (&mut *exec, api, self.api.hipGraphExecUpdate) {
            if device == plan.device {
                self.enter(device)?;
                let updated = self.with_graph(&api, &plan, |graph| {
                    let (mut error_node, mut result): (GraphNode, c_uint) = (std::ptr::null_mut(), 0);
                    // SAFETY: a live executable graph made by `graph_instantiate`, a complete
                    // graph, valid out-pointers.
                    Ok(unsafe { update(raw as GraphExec, graph, &mut error_node, &mut result) } == 0)
                })?;
                if updated {
                    return Ok(());
                }
            }
        }
        crate::backend::replace_exec_graph(self, exec, plan)
    }

    fn graph_launch(&self, stream: Option<StreamHandle>, exec: &ExecGraph) -> Result<(), BackendError> {
        let (&ExecGraph::Native { exec, device }, Some(api)) = (exec, self.graph_api()) else {
            let ExecGraph::Replay(plan) = exec else {
                return Err(BackendError::InvalidValue("a native graph without the runtime's graph entry points".into()));
            };
            return crate::backend::replay_graph(self, stream, plan);
        };
        let s = self.stream(stream, device)?;
        // SAFETY: a live executable graph made by `graph_instantiate`.
        unsafe { (api.launch)(exec as GraphExec, s) }.check("hipGraphLaunch")
    }

    fn graph_upload(&self, stream: Option<StreamHandle>, exec: &ExecGraph) -> Result<(), BackendError> {
        let (&ExecGraph::Native { exec, device }, Some(upload)) = (exec, self.api.hipGraphUpload) else {
            return Ok(());
        };
        let s = self.stream(stream, device)?;
        // SAFETY: a live executable graph made by `graph_instantiate`, and a live stream.
        unsafe { upload(exec as GraphExec, s) }.check("hipGraphUpload")
    }

    fn graph_exec_destroy(&self, exec: ExecGraph) -> Result<(), BackendError> {
        let (ExecGraph::Native { exec, device }, Some(api)) = (exec, self.graph_api()) else {
            return Ok(());
        };
        self.enter(device)?;
        // SAFETY: a live executable graph, destroyed once.
        unsafe { (api.exec_destroy)(exec as GraphExec) }.check("hipGraphExecDestroy")
    }
}
