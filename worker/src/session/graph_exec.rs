//! Executable graphs after instantiation (`hipGraphExec*`, `hipGraphNodeSetEnabled`,
//! `hipGraphUpload`): every change goes through one path, [`Session::graph_exec_replace`].
//!
//! An executable graph keeps, per node of the graph it was made from, its position and its
//! [`NodeParams`]; a setter names the original node, its new parameters are checked exactly as
//! adding the node checks them (`graph_node_params`), and the executable graph is rebuilt from
//! the changed list: a replayed plan just changes, a native one is instantiated anew and the
//! old one destroyed (in flight, the runtime frees it when it completes). If any step fails the
//! executable graph is left as it was. New node kinds plug in by extending `NodeParams` only.

use super::{invalid, unknown, Exec, NodeParams};
use crate::backend::{DeviceIndex, ExecGraph, GraphOp, GraphPlan};
use crate::session::{CallCx, Failure, Session};
use proto_core::opcode::GraphExecHandler;
use proto_core::wire::{self, GraphExecUpdateResult, GraphNodeKind};
use proto_core::Status;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

impl Exec {
    /// An executable graph of `nodes` (in launch order, made from the graph nodes `order`),
    /// every node enabled.
    pub(super) fn new(
        exec: ExecGraph,
        device: DeviceIndex,
        nodes: Vec<NodeParams>,
        positions: HashMap<u64, usize>,
        children: HashMap<u64, Vec<usize>>,
        dependencies: Vec<Vec<usize>>,
        flags: u64,
    ) -> Self {
        let enabled = vec![true; nodes.len()];
        Self { exec, device, nodes, positions, children, dependencies, enabled, flags }
    }

    /// The nodes that run at a launch.
    pub(super) fn enabled_nodes(&self) -> impl Iterator<Item = &NodeParams> {
        self.nodes.iter().zip(&self.enabled).filter(|(_, &on)| on).map(|(n, _)| n)
    }

    /// The position of graph node `node`; HIP answers a node the executable graph was not
    /// made from with `hipErrorInvalidValue`.
    fn position(&self, node: u64) -> Result<usize, Failure> {
        self.positions.get(&node).copied().ok_or_else(|| invalid(format!("node {node:#x} is not a node of this executable graph")))
    }
}

/// Whether HIP lets a node of `kind` be disabled (`hipGraphNodeSetEnabled`).
fn can_disable(kind: GraphNodeKind) -> bool {
    matches!(kind, GraphNodeKind::Kernel | GraphNodeKind::Memcpy | GraphNodeKind::Memset)
}

/// The update result HIP gives for a node whose new parameters fail with `status`
/// (`hipGraphExecUpdate` in `hip_graph.cpp`).
fn update_refusal(status: Status) -> GraphExecUpdateResult {
    match status {
        Status::INVALID_DEVICE_FUNCTION => GraphExecUpdateResult::UnsupportedFunctionChange,
        Status::INVALID_VALUE | Status::INVALID_DEVICE_POINTER => GraphExecUpdateResult::ParametersChanged,
        _ => GraphExecUpdateResult::NotSupported,
    }
}

impl Session {
    /// The executable graph `exec` and the position of its node `node`, both checked.
    fn graph_exec_node(&self, exec: u64, node: u64) -> Result<(&Exec, usize), Failure> {
        let e = self.graphs.execs.get(exec).map_err(unknown)?;
        Ok((e, e.position(node)?))
    }

    /// The one path every change takes: rebuilds `exec` from `nodes` and `enabled` (checked
    /// as a launch checks them) and replaces the backend's object; on failure nothing changes.
    fn graph_exec_replace(&mut self, exec: u64, nodes: Vec<NodeParams>, enabled: Vec<bool>) -> Result<(), Failure> {
        let e = self.graphs.execs.get(exec).map_err(unknown)?;
        let mut ops = Vec::with_capacity(nodes.len());
        for (params, &on) in nodes.iter().zip(&enabled) {
            let (device, op) = if on { self.graph_node_op(params)? } else { (None, GraphOp::Empty) };
            if device.is_some_and(|d| d != e.device) {
                return Err(invalid(format!("an executable graph of device {} cannot take a node of device {}", e.device, device.unwrap_or(0))));
            }
            ops.push(op);
        }
        let plan = GraphPlan { device: e.device, ops, dependencies: e.dependencies.clone() };
        let e = self.graphs.execs.get_mut(exec).map_err(unknown)?;
        self.backend.graph_exec_update(&mut e.exec, Arc::new(plan))?;
        e.nodes = nodes;
        e.enabled = enabled;
        Ok(())
    }

    /// Gives node `node` of `exec` the checked parameters `params`, which must be of the
    /// node's kind.
    fn graph_exec_set_params(&mut self, exec: u64, node: u64, params: NodeParams) -> Result<(), Failure> {
        let (e, i) = self.graph_exec_node(exec, node)?;
        if e.nodes[i].kind() != params.kind() {
            return Err(invalid(format!("node {node:#x} is a {:?} node, not a {:?} node", e.nodes[i].kind(), params.kind())));
        }
        let (mut nodes, enabled) = (e.nodes.clone(), e.enabled.clone());
        nodes[i] = params;
        self.graph_exec_replace(exec, nodes, enabled)
    }

    /// `hipGraphExecUpdate`'s checks, node by node in launch order: the refusal and the node
    /// of `graph` it names, or the new parameters.
    fn graph_exec_update_nodes(&self, exec: u64, graph: u64) -> Result<Result<Vec<NodeParams>, (GraphExecUpdateResult, u64)>, Failure> {
        let e = self.graphs.execs.get(exec).map_err(unknown)?;
        // Both sides flattened (child graphs expanded) and in launch order.
        let layout = self.graph_launch_layout(graph)?;
        if layout.nodes.len() != e.nodes.len() {
            return Ok(Err((GraphExecUpdateResult::TopologyChanged, 0)));
        }
        // The node of `graph` a refusal names: the node itself, or the child node holding it.
        let mut owner = vec![0u64; layout.nodes.len()];
        for (&node, &at) in &layout.positions {
            owner[at] = node;
        }
        for (&node, inner) in &layout.children {
            inner.iter().for_each(|&at| owner[at] = node);
        }
        let dependencies = &layout.dependencies;
        let mut nodes = Vec::with_capacity(layout.nodes.len());
        for (i, params) in layout.nodes.iter().enumerate() {
            let (node, params) = (owner[i], params.clone());
            let old = &e.nodes[i];
            if params.kind() != old.kind() {
                return Ok(Err((GraphExecUpdateResult::NodeTypeChanged, node)));
            }
            let (mut new_deps, mut old_deps) = (dependencies[i].clone(), e.dependencies[i].clone());
            new_deps.sort_unstable();
            old_deps.sort_unstable();
            if new_deps != old_deps {
                return Ok(Err((GraphExecUpdateResult::TopologyChanged, node)));
            }
            match self.graph_node_op(&params) {
                Ok((Some(device), _)) if device != e.device => return Ok(Err((GraphExecUpdateResult::UnsupportedFunctionChange, node))),
                Ok(_) => {}
                Err(Failure::Status(status, _)) => return Ok(Err((update_refusal(status), node))),
                Err(other) => return Err(other),
            }
            nodes.push(params);
        }
        Ok(Ok(nodes))
    }
}

impl GraphExecHandler for Session {
    fn graph_exec_set_node(&mut self, _cx: &mut CallCx, req: wire::GraphExecSetNode<'_>) -> Result<wire::Empty, Failure> {
        self.graph_exec_node(req.exec, req.node)?;
        // The same fields as adding the node, so the same checks.
        let as_added = wire::GraphAddNode {
            graph: 0,
            kind: req.kind,
            dependencies: Default::default(),
            function: req.function,
            grid: req.grid,
            block: req.block,
            shared_mem: req.shared_mem,
            dst: req.dst,
            src: req.src,
            value: req.value,
            element_size: req.element_size,
            width: req.width,
            height: req.height,
            pitch: req.pitch,
            host_token: req.host_token,
            args: req.args,
        };
        let params = self.graph_node_params(&as_added)?;
        self.graph_exec_set_params(req.exec, req.node, params)?;
        Ok(wire::Empty {})
    }

    fn graph_exec_set_copy_node(&mut self, _cx: &mut CallCx, req: wire::GraphExecSetCopyNode) -> Result<wire::Empty, Failure> {
        self.graph_exec_node(req.exec, req.node)?;
        let copy = wire::Copy3D { copy: req.copy, stream: 0, sync: false };
        let params = NodeParams::Copy3D(Box::new(copy));
        self.graph_node_op(&params)?;
        self.graph_exec_set_params(req.exec, req.node, params)?;
        Ok(wire::Empty {})
    }

    fn graph_exec_update(&mut self, _cx: &mut CallCx, req: wire::GraphExecUpdate) -> Result<wire::GraphExecUpdated, Failure> {
        let nodes = match self.graph_exec_update_nodes(req.exec, req.graph)? {
            Ok(nodes) => nodes,
            Err((result, error_node)) => return Ok(wire::GraphExecUpdated { result, error_node }),
        };
        let enabled = self.graphs.execs.get(req.exec).map_err(unknown)?.enabled.clone();
        self.graph_exec_replace(req.exec, nodes, enabled)?;
        Ok(wire::GraphExecUpdated { result: GraphExecUpdateResult::Success, error_node: 0 })
    }

    fn graph_node_set_enabled(&mut self, _cx: &mut CallCx, req: wire::GraphNodeSetEnabled) -> Result<wire::Empty, Failure> {
        let (e, i) = self.graph_exec_node(req.exec, req.node)?;
        if !can_disable(e.nodes[i].kind()) {
            return Err(invalid(format!("a {:?} node cannot be disabled", e.nodes[i].kind())));
        }
        if e.enabled[i] != req.enabled {
            let (nodes, mut enabled) = (e.nodes.clone(), e.enabled.clone());
            enabled[i] = req.enabled;
            self.graph_exec_replace(req.exec, nodes, enabled)?;
        }
        Ok(wire::Empty {})
    }

    fn graph_node_get_enabled(&mut self, _cx: &mut CallCx, req: wire::GraphExecNodeRef) -> Result<wire::GraphNodeEnabled, Failure> {
        let (e, i) = self.graph_exec_node(req.exec, req.node)?;
        if !can_disable(e.nodes[i].kind()) {
            return Err(invalid(format!("a {:?} node has no enabled state", e.nodes[i].kind())));
        }
        Ok(wire::GraphNodeEnabled { enabled: e.enabled[i] })
    }

    fn graph_upload(&mut self, _cx: &mut CallCx, req: wire::GraphUpload) -> Result<wire::Empty, Failure> {
        let e = self.graphs.execs.get(req.exec).map_err(unknown)?;
        for params in e.enabled_nodes() {
            self.graph_node_op(params)?;
        }
        let device = e.device;
        let stream = self.stream(req.stream, device)?;
        let e = self.graphs.execs.get(req.exec).map_err(unknown)?;
        self.backend.graph_upload(stream, &e.exec)?;
        Ok(wire::Empty {})
    }

    fn graph_exec_get_flags(&mut self, _cx: &mut CallCx, req: wire::GraphExecRef) -> Result<wire::GraphExecFlags, Failure> {
        Ok(wire::GraphExecFlags { flags: self.graphs.execs.get(req.exec).map_err(unknown)?.flags })
    }

    fn graph_exec_set_event_node(&mut self, _cx: &mut CallCx, req: wire::GraphExecSetEventNode) -> Result<wire::Empty, Failure> {
        self.graph_exec_node(req.exec, req.node)?;
        let params = NodeParams::Event { event: req.event, wait: req.wait };
        // An event the session does not know is refused as HIP refuses a NULL one.
        self.graph_node_op(&params).map_err(unknown)?;
        self.graph_exec_set_params(req.exec, req.node, params)?;
        Ok(wire::Empty {})
    }

    fn graph_exec_set_child_node(&mut self, _cx: &mut CallCx, req: wire::GraphExecSetChildNode) -> Result<wire::Empty, Failure> {
        let (e, _) = self.graph_exec_node(req.exec, req.node)?;
        let inner = e.children.get(&req.node).ok_or_else(|| invalid(format!("node {:#x} is not a child graph node", req.node)))?.clone();
        // HIP: the new child must have the node's nodes (in insertion order) and edges.
        let (flat, params) = self.graph_flatten(req.child)?;
        let e = self.graphs.execs.get(req.exec).map_err(unknown)?;
        if params.len() != inner.len() || params.iter().zip(&inner).any(|(p, &at)| p.kind() != e.nodes[at].kind()) {
            return Err(invalid("the child graph's nodes differ from the child graph node's"));
        }
        let members: HashSet<usize> = inner.iter().copied().collect();
        let mut old_edges: Vec<(usize, usize)> =
            inner.iter().flat_map(|&to| e.dependencies[to].iter().filter(|from| members.contains(from)).map(move |&from| (from, to))).collect();
        let mut new_edges: Vec<(usize, usize)> = flat.edges.iter().map(|&(from, to)| (inner[from as usize], inner[to as usize])).collect();
        old_edges.sort_unstable();
        new_edges.sort_unstable();
        if old_edges != new_edges {
            return Err(invalid("the child graph's edges differ from the child graph node's"));
        }
        let (mut nodes, enabled) = (e.nodes.clone(), e.enabled.clone());
        for (params, &at) in params.into_iter().zip(&inner) {
            nodes[at] = params;
        }
        self.graph_exec_replace(req.exec, nodes, enabled)?;
        Ok(wire::Empty {})
    }

    fn graph_exec_set_batch_mem_op_node(&mut self, _cx: &mut CallCx, req: wire::GraphExecSetBatchMemOpNode<'_>) -> Result<wire::Empty, Failure> {
        self.graph_exec_node(req.exec, req.node)?;
        let params = self.batch_params(req.flags, req.ops.0)?;
        self.graph_exec_set_params(req.exec, req.node, params)?;
        Ok(wire::Empty {})
    }
}
