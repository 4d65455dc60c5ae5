//! Graphs as real CUDA graphs: the plan becomes a `CUgraph` (kernel, memset, memcpy, event
//! record, event wait and empty nodes with the plan's dependencies), instantiated once into a `CUgraphExec` that
//! `cuGraphLaunch` replays; the `CUgraph` itself is destroyed right after instantiation (the
//! executable graph does not need it).

use super::array::{memcpy_3d, Side};
use super::error::Check;
use super::CudaBackend;
use crate::backend::{BackendError, ExecGraph, Extent, GraphBackend, GraphOp, GraphPlan, Place, StreamHandle};
use cudarc::driver::sys::{self, CUgraph, CUgraphExec, CUgraphNode};
use std::ffi::c_void;
use std::sync::Arc;

/// Destroys a `CUgraph` when dropped (instantiation is done or failed).
struct OwnedGraph(CUgraph);

impl Drop for OwnedGraph {
    fn drop(&mut self) {
        // SAFETY: a graph this module created and nothing else holds.
        unsafe { sys::cuGraphDestroy(self.0) };
    }
}

impl CudaBackend {
    /// Adds `op` to `graph` after `deps`.
    fn add_graph_node(&self, graph: CUgraph, op: &GraphOp, deps: &[CUgraphNode], ctx: sys::CUcontext) -> Result<CUgraphNode, BackendError> {
        let mut node: CUgraphNode = std::ptr::null_mut();
        match op {
            GraphOp::Kernel { function, config, args } => {
                let f = self.function_entry(*function, |e| e.raw.0)?;
                let mut buffer = args.to_vec();
                let mut size = buffer.len();
                let mut extra: [*mut c_void; 5] = [
                    std::ptr::dangling_mut::<c_void>(), // CU_LAUNCH_PARAM_BUFFER_POINTER
                    buffer.as_mut_ptr().cast(),
                    2 as *mut c_void, // CU_LAUNCH_PARAM_BUFFER_SIZE
                    (&mut size as *mut usize).cast(),
                    std::ptr::null_mut(), // CU_LAUNCH_PARAM_END
                ];
                // SAFETY: a C struct of integers and pointers, for which all zeros is the
                // "not given" value of every optional field (kern, ctx).
                let mut params: sys::CUDA_KERNEL_NODE_PARAMS = unsafe { std::mem::zeroed() };
                params.func = f;
                [params.gridDimX, params.gridDimY, params.gridDimZ] = config.grid;
                [params.blockDimX, params.blockDimY, params.blockDimZ] = config.block;
                params.sharedMemBytes = config.shared_mem;
                params.extra = extra.as_mut_ptr();
                // SAFETY: a live function; `extra` describes a buffer alive for the call (the
                // driver copies the arguments into the node).
                unsafe { sys::cuGraphAddKernelNode_v2(&mut node, graph, deps.as_ptr(), deps.len(), &params) }.check("cuGraphAddKernelNode")?;
            }
            GraphOp::Memset { fill, pattern } => {
                // SAFETY: plain C struct; every field is set below or zero by design.
                let mut params: sys::CUDA_MEMSET_NODE_PARAMS = unsafe { std::mem::zeroed() };
                params.dst = fill.ptr.0;
                params.pitch = fill.pitch as usize;
                params.elementSize = pattern.elem_size() as u32;
                params.value = match *pattern {
                    crate::backend::MemsetPattern::U8(v) => u32::from(v),
                    crate::backend::MemsetPattern::U16(v) => u32::from(v),
                    crate::backend::MemsetPattern::U32(v) => v,
                };
                params.width = fill.width as usize;
                params.height = fill.height as usize;
                // SAFETY: the range was validated by the session; `ctx` is the device's
                // retained primary context.
                unsafe { sys::cuGraphAddMemsetNode(&mut node, graph, deps.as_ptr(), deps.len(), &params, ctx) }.check("cuGraphAddMemsetNode")?;
            }
            GraphOp::Memcpy { dst, src, len } => {
                // Every field written out: all-zero is not a valid CUDA_MEMCPY3D (its memory
                // types have no zero value), and zero-initialising it aborts the worker.
                let row = |ptr: crate::backend::DevicePtr| Place::Device { ptr, pitch: *len, height: 1, x: 0, y: 0, z: 0 };
                let copy = memcpy_3d(&Side::of(&row(*dst)), &Side::of(&row(*src)), Extent { width: *len, height: 1, depth: 1 });
                // SAFETY: both ranges were validated by the session; `ctx` is retained.
                unsafe { sys::cuGraphAddMemcpyNode(&mut node, graph, deps.as_ptr(), deps.len(), &copy, ctx) }.check("cuGraphAddMemcpyNode")?;
            }
            GraphOp::Host(_) | GraphOp::Copy3D { .. } | GraphOp::MemOps(_) => {
                return Err(BackendError::NotSupported("host steps and 3D copies are replayed, not put in a CUDA graph".into()))
            }
            GraphOp::Empty => {
                // SAFETY: a live graph; `deps` are nodes of it.
                unsafe { sys::cuGraphAddEmptyNode(&mut node, graph, deps.as_ptr(), deps.len()) }.check("cuGraphAddEmptyNode")?;
            }
            GraphOp::EventRecord { event } => {
                let (raw, _, _) = self.event_entry(*event)?;
                // SAFETY: a live graph and event; `deps` are nodes of the graph.
                unsafe { sys::cuGraphAddEventRecordNode(&mut node, graph, deps.as_ptr(), deps.len(), raw.0) }.check("cuGraphAddEventRecordNode")?;
                // The event counts as recorded from now on: CUDA treats an event no launch has
                // recorded yet as complete for waits, queries and synchronisation, which is
                // what this backend's "never recorded" shortcuts answer too.
                if let Some(e) = super::lock(&self.events).get_mut(&event.as_raw()) {
                    e.recorded = true;
                }
            }
            GraphOp::EventWait { event } => {
                let (raw, _, _) = self.event_entry(*event)?;
                // SAFETY: a live graph and event; `deps` are nodes of the graph.
                unsafe { sys::cuGraphAddEventWaitNode(&mut node, graph, deps.as_ptr(), deps.len(), raw.0) }.check("cuGraphAddEventWaitNode")?;
            }
        }
        Ok(node)
    }
}

impl CudaBackend {
    /// `plan` as a `CUgraph` of the current context (the caller entered `plan.device`).
    fn build_graph(&self, plan: &GraphPlan) -> Result<OwnedGraph, BackendError> {
        let ctx = self.device(plan.device)?.ctx.0;
        let mut raw: CUgraph = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; flags must be 0.
        unsafe { sys::cuGraphCreate(&mut raw, 0) }.check("cuGraphCreate")?;
        let graph = OwnedGraph(raw);
        let mut nodes: Vec<CUgraphNode> = Vec::with_capacity(plan.ops.len());
        for (op, deps) in plan.ops.iter().zip(&plan.dependencies) {
            let deps: Vec<CUgraphNode> = deps.iter().map(|&i| nodes[i]).collect();
            nodes.push(self.add_graph_node(graph.0, op, &deps, ctx)?);
        }
        Ok(graph)
    }

    /// The modules of `plan`'s kernels, for the device log reads after its launches.
    fn plan_modules(&self, plan: &GraphPlan) -> Vec<u64> {
        plan.ops
            .iter()
            .filter_map(|op| match op {
                GraphOp::Kernel { function, .. } => self.function_entry(*function, |e| e.module).ok(),
                _ => None,
            })
            .collect()
    }
}

impl GraphBackend for CudaBackend {
    fn graph_instantiate(&self, plan: Arc<GraphPlan>) -> Result<ExecGraph, BackendError> {
        if plan.needs_replay() {
            return Ok(ExecGraph::Replay(plan));
        }
        self.enter(plan.device)?;
        let graph = self.build_graph(&plan)?;
        let mut exec: CUgraphExec = std::ptr::null_mut();
        // SAFETY: a complete graph of the current context; a valid out-pointer.
        unsafe { sys::cuGraphInstantiateWithFlags(&mut exec, graph.0, 0) }.check("cuGraphInstantiate")?;
        let modules = self.plan_modules(&plan);
        super::lock(&self.logs).graph_instantiated(exec as u64, modules);
        Ok(ExecGraph::Native { exec: exec as u64, device: plan.device })
    }

    fn graph_launch(&self, stream: Option<StreamHandle>, exec: &ExecGraph) -> Result<(), BackendError> {
        let (exec, device) = match exec {
            ExecGraph::Native { exec, device } => (*exec, *device),
            ExecGraph::Replay(plan) => return crate::backend::replay_graph(self, stream, plan),
        };
        let s = self.work_stream(stream, device)?;
        self.graph_launch_logged(exec, stream, || {
            // SAFETY: `exec` is a live executable graph made by `graph_instantiate` (the
            // session destroys it only through `graph_exec_destroy`).
            unsafe { sys::cuGraphLaunch(exec as CUgraphExec, s) }.check("cuGraphLaunch")
        })
    }

    fn graph_exec_update(&self, exec: &mut ExecGraph, plan: Arc<GraphPlan>) -> Result<(), BackendError> {
        // Same topology and node kinds: the driver updates the executable graph in place,
        // which costs far less than instantiating it again. Anything it refuses (a node
        // disabled into an empty one changes its kind) is instantiated anew.
        if let (&mut ExecGraph::Native { exec: raw, device }, false) = (&mut *exec, plan.needs_replay()) {
            if device == plan.device {
                self.enter(device)?;
                let graph = self.build_graph(&plan)?;
                let mut info = std::mem::MaybeUninit::<sys::CUgraphExecUpdateResultInfo>::uninit();
                // SAFETY: a live executable graph made by `graph_instantiate` and a complete
                // graph of the same context; `info` is an out-parameter never read.
                let updated = unsafe { sys::cuGraphExecUpdate_v2(raw as CUgraphExec, graph.0, info.as_mut_ptr()) };
                if updated == sys::CUresult::CUDA_SUCCESS {
                    let modules = self.plan_modules(&plan);
                    super::lock(&self.logs).graph_instantiated(raw, modules);
                    return Ok(());
                }
            }
        }
        crate::backend::replace_exec_graph(self, exec, plan)
    }

    fn graph_upload(&self, stream: Option<StreamHandle>, exec: &ExecGraph) -> Result<(), BackendError> {
        let &ExecGraph::Native { exec, device } = exec else {
            return Ok(());
        };
        let s = self.stream(stream, device)?;
        // SAFETY: a live executable graph made by `graph_instantiate`, and a live stream.
        unsafe { sys::cuGraphUpload(exec as CUgraphExec, s) }.check("cuGraphUpload")
    }

    fn graph_exec_destroy(&self, exec: ExecGraph) -> Result<(), BackendError> {
        let ExecGraph::Native { exec, device } = exec else {
            return Ok(());
        };
        super::lock(&self.logs).graph_destroyed(exec);
        self.enter(device)?;
        // SAFETY: a live executable graph, destroyed once (the session gives it up here).
        unsafe { sys::cuGraphExecDestroy(exec as CUgraphExec) }.check("cuGraphExecDestroy")
    }
}
