//! Graphs as real CUDA graphs: the plan becomes a `CUgraph` (kernel, memset, memcpy, event
//! record, event wait and empty nodes with the plan's dependencies; a BLAS routine as a child
//! graph node holding the cuBLAS call captured on a private stream), instantiated once into a `CUgraphExec` that
//! `cuGraphLaunch` replays; the `CUgraph` itself is destroyed right after instantiation (the
//! executable graph does not need it).

use super::result::graph::{self as cu_graph, Graph};
use super::CudaBackend;
use crate::backend::{BackendError, DeviceIndex, ExecGraph, GraphBackend, GraphOp, GraphPlan, StreamHandle};
use cudarc::driver::sys::{self, CUgraphExec, CUgraphNode};
use std::sync::Arc;

impl CudaBackend {
    /// Adds `op` to `graph` after `deps`.
    fn add_graph_node(
        &self,
        graph: &Graph,
        op: &GraphOp,
        deps: &[CUgraphNode],
        ctx: sys::CUcontext,
        device: DeviceIndex,
    ) -> Result<CUgraphNode, BackendError> {
        Ok(match op {
            GraphOp::Kernel { function, config, args } => {
                let f = self.function_entry(*function, |e| e.raw.0)?;
                self.allow_dynamic_shared(*function, u64::from(config.shared_mem))?;
                graph.add_kernel_node(deps, f, config, args)?
            }
            GraphOp::Memset { fill, pattern } => {
                let value = match *pattern {
                    crate::backend::MemsetPattern::U8(v) => u32::from(v),
                    crate::backend::MemsetPattern::U16(v) => u32::from(v),
                    crate::backend::MemsetPattern::U32(v) => v,
                };
                // The range was validated by the session; `ctx` is the device's retained
                // primary context.
                let (pitch, width, height) = (fill.pitch as usize, fill.width as usize, fill.height as usize);
                graph.add_memset_node(deps, fill.ptr.0, pitch, pattern.elem_size() as u32, value, width, height, ctx)?
            }
            GraphOp::Memcpy { dst, src, len } => graph.add_memcpy_dtod_node(deps, dst.0, src.0, *len as usize, ctx)?,
            GraphOp::Blas { handle, call } => {
                let child = self.blas_capture(*handle, call, device)?;
                graph.add_child_graph_node(deps, &child)?
            }
            GraphOp::Host(_) | GraphOp::Copy3D { .. } | GraphOp::MemOps(_) => {
                return Err(BackendError::NotSupported(
                    "host steps, 3D copies and stream memory operations are replayed, not put in a CUDA graph".into(),
                ))
            }
            GraphOp::Empty => graph.add_empty_node(deps)?,
            GraphOp::EventRecord { event } => {
                let (raw, _, _) = self.event_entry(*event)?;
                let node = graph.add_event_record_node(deps, raw.0)?;
                // The event counts as recorded from now on: CUDA treats an event no launch has
                // recorded yet as complete for waits, queries and synchronisation, which is
                // what this backend's "never recorded" shortcuts answer too.
                if let Some(e) = super::lock(&self.events).get_mut(&event.as_raw()) {
                    e.recorded = true;
                }
                node
            }
            GraphOp::EventWait { event } => {
                let (raw, _, _) = self.event_entry(*event)?;
                graph.add_event_wait_node(deps, raw.0)?
            }
        })
    }
}

impl CudaBackend {
    /// `plan` as a `CUgraph` of the current context (the caller entered `plan.device`).
    fn build_graph(&self, plan: &GraphPlan) -> Result<Graph, BackendError> {
        let ctx = self.device(plan.device)?.ctx.0;
        let graph = Graph::create()?;
        let mut nodes: Vec<CUgraphNode> = Vec::with_capacity(plan.ops.len());
        for (op, deps) in plan.ops.iter().zip(&plan.dependencies) {
            let deps: Vec<CUgraphNode> = deps.iter().map(|&i| nodes[i]).collect();
            nodes.push(self.add_graph_node(&graph, op, &deps, ctx, plan.device)?);
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
        let built = self.build_graph(&plan).and_then(|graph| Ok(graph.instantiate()?));
        let exec = match built {
            Ok(exec) => exec,
            // A BLAS routine cuBLAS could not capture (no cuBLAS workspace call, a routine
            // that allocates, another device's handle): the list is replayed instead.
            Err(e) if plan.has_blas() => {
                tracing::debug!(%e, "a graph with BLAS routines is replayed, not built as a CUDA graph");
                return Ok(ExecGraph::Replay(plan));
            }
            Err(e) => return Err(e),
        };
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
            // `exec` is a live executable graph made by `graph_instantiate` (the session
            // destroys it only through `graph_exec_destroy`).
            Ok(cu_graph::launch(exec as CUgraphExec, s)?)
        })
    }

    fn graph_exec_update(&self, exec: &mut ExecGraph, plan: Arc<GraphPlan>) -> Result<(), BackendError> {
        // Same topology and node kinds: the driver updates the executable graph in place,
        // which costs far less than instantiating it again. Anything it refuses (a node
        // disabled into an empty one changes its kind) is instantiated anew.
        if let (&mut ExecGraph::Native { exec: raw, device }, false) = (&mut *exec, plan.needs_replay()) {
            if device == plan.device {
                self.enter(device)?;
                // What cannot be built natively (a BLAS routine cuBLAS does not capture) is
                // instantiated anew below, which replays it.
                let graph = self.build_graph(&plan);
                // A live executable graph made by `graph_instantiate`.
                if graph.is_ok_and(|graph| graph.update(raw as CUgraphExec).is_ok()) {
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
        // A live executable graph made by `graph_instantiate`, and a live stream.
        Ok(cu_graph::upload(exec as CUgraphExec, s)?)
    }

    fn graph_exec_destroy(&self, exec: ExecGraph) -> Result<(), BackendError> {
        let ExecGraph::Native { exec, device } = exec else {
            return Ok(());
        };
        super::lock(&self.logs).graph_destroyed(exec);
        self.enter(device)?;
        // A live executable graph, destroyed once (the session gives it up here).
        Ok(cu_graph::exec_destroy(exec as CUgraphExec)?)
    }
}
