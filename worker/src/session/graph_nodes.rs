//! Graph node kinds beyond kernels, copies, memsets and host steps: event record and wait
//! nodes, child graph nodes, and operations on whole nodes (destroy, find in a clone).
//!
//! A child graph node owns a clone of the graph it was given (as HIP and CUDA do): the clone
//! is an ordinary session graph marked embedded, which `hipGraphChildGraphNodeGetGraph`
//! hands out and the client may keep editing; it goes with the node (destroying it directly
//! is refused). Instantiation expands every child node in place ([`Session::graph_flatten`]):
//! an entry and an exit join point around the child's nodes, so every edge into the node
//! reaches the child's roots and every edge out of it leaves from the child's leaves.
//!
//! Clones remember, for each of their nodes, the node it was cloned from (transitively: a
//! clone of a clone names the first original, as HIP's node ids do), which is what
//! `hipGraphNodeFindInClone` looks up.
//!
//! Graph memory (`hipGraphAddMemAllocNode`) follows the simplest model that gives HIP's
//! answers: the session allocates the memory when the allocation node is added (HIP and CUDA
//! hand out the address then too) and the nodes only order the graph's work. The memory is
//! an ordinary allocation of the session: kernels, copies and `hipFree` see it; destroying the
//! graph does not free it (HIP leaves graph memory that no free node freed allocated past the
//! graph, and memory a free node freed stays for the next launch's allocation). Memory whose
//! free node was added and whose allocation node is gone is the graph memory pool's reserve:
//! `hipDeviceGraphMemTrim` releases it. The graph memory attributes sum these allocations per
//! device: used = allocations not yet released to the reserve, reserved = all of them.

use super::graph::{handles, invalid, unknown, Graph, Node, NodeParams, MAX_GRAPH_NODES_PER_SESSION};
use super::{Failure, Session};
use crate::backend::{DeviceIndex, GraphOp, MemsetPattern};
use proto_core::wire::{self, GraphNodeKind, MAX_GRAPH_NODES};
use proto_core::Status;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use zerocopy::byteorder::little_endian::U64;

/// Deepest nesting of child graphs instantiation expands.
pub const MAX_CHILD_GRAPH_DEPTH: usize = 64;

/// Which graphs belong to child graph nodes, and where cloned nodes came from.
#[derive(Debug, Default)]
pub(super) struct GraphLinks {
    /// Graphs owned by a child graph node.
    embedded: HashSet<u64>,
    /// Graphs made by cloning (`hipGraphNodeFindInClone` accepts only those).
    clones: HashSet<u64>,
    /// Cloned node → the original node it stands for.
    origin: HashMap<u64, u64>,
    /// Kernel node → its launch attribute (`hipLaunchAttributeID`) and value: one at a time,
    /// as HIP keeps them.
    kernel_attrs: HashMap<u64, (u32, wire::GraphKernelAttrValue)>,
    /// Graph memory by address.
    memory: HashMap<u64, GraphMemory>,
    /// Per device: the high watermarks of used and reserved graph memory.
    watermarks: HashMap<DeviceIndex, (u64, u64)>,
    /// Graphs instantiated at least once (one holding memory nodes instantiates once).
    instantiated: HashSet<u64>,
}

/// One allocation made by a memory allocation node.
#[derive(Debug, Clone, Copy)]
struct GraphMemory {
    size: u64,
    device: DeviceIndex,
    /// The allocation node, while it exists.
    node: Option<u64>,
    /// A free node frees it.
    freed: bool,
}

impl GraphMemory {
    /// Released to the graph memory pool's reserve: trimmable, no longer used.
    fn in_reserve(&self) -> bool {
        self.node.is_none() && self.freed
    }
}

impl GraphLinks {
    pub(super) fn is_embedded(&self, graph: u64) -> bool {
        self.embedded.contains(&graph)
    }

    /// Drops the graph memory records of `device` (every device: `None`), whose memory the
    /// session's cleanup frees.
    pub(super) fn forget_graph_memory(&mut self, device: Option<DeviceIndex>) {
        self.memory.retain(|_, m| device.is_some_and(|d| d != m.device));
    }

    /// Bytes of graph memory on `device`: (used, reserved).
    fn graph_memory_in_use(&self, device: DeviceIndex) -> (u64, u64) {
        let on_device = self.memory.values().filter(|m| m.device == device);
        on_device.fold((0, 0), |(used, reserved), m| (used + if m.in_reserve() { 0 } else { m.size }, reserved + m.size))
    }

    fn raise_watermarks(&mut self, device: DeviceIndex) {
        let (used, reserved) = self.graph_memory_in_use(device);
        let high = self.watermarks.entry(device).or_default();
        *high = (high.0.max(used), high.1.max(reserved));
    }

    /// The identity a node shares with every clone of it.
    fn identity(&self, node: u64) -> u64 {
        self.origin.get(&node).copied().unwrap_or(node)
    }
}

/// Each node of a graph mapped to its `(entry, exit)` nodes in the flattened graph.
pub(super) type FlatSpans = HashMap<u64, (u64, u64)>;

impl Session {
    /// The backend step of an event node, or the error the same call outside a graph gives
    /// for an event that is gone (checked again at every launch).
    pub(super) fn graph_event_op(&self, event: u64, wait: bool) -> Result<(Option<DeviceIndex>, GraphOp), Failure> {
        let &(handle, device) = self.events.get(event)?;
        Ok(match wait {
            // A wait belongs to the launch stream, whatever device recorded the event.
            true => (None, GraphOp::EventWait { event: handle }),
            false => (Some(device), GraphOp::EventRecord { event: handle }),
        })
    }

    fn graph_node(&self, node: u64) -> Result<&Node, Failure> {
        self.graphs.nodes.get(node).map_err(|_| invalid(format!("{node:#x} is not a graph node")))
    }

    /// Every node of `graph` and of the graphs its child nodes own, recursively; a memory
    /// node anywhere is `NOT_SUPPORTED` (HIP's answer to cloning one: it belongs to one graph).
    fn graph_node_count_deep(&self, graph: u64) -> Result<usize, Failure> {
        let g = self.graphs.graphs.get(graph).map_err(unknown)?;
        let mut count = g.nodes.len();
        for &n in &g.nodes {
            match self.graphs.nodes.get(n)?.params {
                NodeParams::Child { graph: child } => count += self.graph_node_count_deep(child)?,
                NodeParams::MemAlloc { .. } | NodeParams::MemFree { .. } => {
                    return Err(Failure::new(Status::NOT_SUPPORTED, format!("graph {graph:#x} holds memory nodes, which cannot be cloned")))
                }
                _ => {}
            }
        }
        Ok(count)
    }

    /// A clone of `graph` (child graphs cloned too), remembering each new node's original.
    pub(super) fn graph_clone_deep(&mut self, graph: u64) -> Result<u64, Failure> {
        let needed = self.graph_node_count_deep(graph)?;
        if self.graphs.nodes.len() + needed > MAX_GRAPH_NODES_PER_SESSION {
            return Err(Failure::new(Status::OUT_OF_MEMORY, format!("a session holds at most {MAX_GRAPH_NODES_PER_SESSION} graph nodes")));
        }
        self.graph_clone_unchecked(graph)
    }

    fn graph_clone_unchecked(&mut self, graph: u64) -> Result<u64, Failure> {
        self.graphs.graphs.check_capacity()?;
        let original = self.graphs.graphs.get(graph).map_err(unknown)?;
        let (old_nodes, old_edges) = (original.nodes.clone(), original.edges.clone());
        let clone = self.graphs.graphs.insert(Graph::default());
        self.graphs.links.clones.insert(clone);
        let mut renamed = HashMap::with_capacity(old_nodes.len());
        let mut new_nodes = Vec::with_capacity(old_nodes.len());
        for old in old_nodes {
            let mut params = self.graphs.nodes.get(old)?.params.clone();
            if let NodeParams::Child { graph: child } = params {
                let copy = self.graph_clone_unchecked(child)?;
                self.graphs.links.embedded.insert(copy);
                params = NodeParams::Child { graph: copy };
            }
            let new = self.graphs.nodes.insert(Node { graph: clone, params });
            let identity = self.graphs.links.identity(old);
            self.graphs.links.origin.insert(new, identity);
            if let Some(attr) = self.graphs.links.kernel_attrs.get(&old).cloned() {
                self.graphs.links.kernel_attrs.insert(new, attr);
            }
            renamed.insert(old, new);
            new_nodes.push(new);
        }
        let g = self.graphs.graphs.get_mut(clone)?;
        g.nodes = new_nodes;
        g.edges = old_edges.iter().map(|(f, t)| (renamed[f], renamed[t])).collect();
        Ok(clone)
    }

    /// Removes `graph`, its nodes and the graphs its child nodes own.
    pub(super) fn graph_remove(&mut self, graph: u64) {
        let Ok(g) = self.graphs.graphs.remove(graph) else { return };
        self.graphs.links.instantiated.remove(&graph);
        self.graphs.links.embedded.remove(&graph);
        self.graphs.links.clones.remove(&graph);
        for node in g.nodes {
            self.graph_forget_node(node);
        }
    }

    /// Drops one node's record (and the graph it owns), leaving its graph's lists alone.
    fn graph_forget_node(&mut self, node: u64) {
        self.graphs.links.origin.remove(&node);
        self.graphs.links.kernel_attrs.remove(&node);
        match self.graphs.nodes.remove(node) {
            Ok(Node { params: NodeParams::Child { graph }, .. }) => self.graph_remove(graph),
            Ok(Node { params: NodeParams::MemAlloc { ptr, .. }, .. }) => {
                if let Some(m) = self.graphs.links.memory.get_mut(&ptr) {
                    m.node = None;
                }
            }
            _ => {}
        }
    }

    /// `graph` with its child nodes expanded in place: a graph of plain nodes named by their
    /// index into the returned parameters.
    pub(super) fn graph_flatten(&self, graph: u64) -> Result<(Graph, Vec<NodeParams>), Failure> {
        self.graph_flatten_with_spans(graph).map(|(flat, params, _)| (flat, params))
    }

    /// [`Self::graph_flatten`], with each node of `graph` itself mapped to the flat nodes it
    /// became: `(entry, exit)`, the same index for a plain node, a child graph's join points
    /// (its own nodes lie between them) for a child node.
    pub(super) fn graph_flatten_with_spans(&self, graph: u64) -> Result<(Graph, Vec<NodeParams>, FlatSpans), Failure> {
        let mut flat = Graph::default();
        let mut params = Vec::new();
        let spans = self.graph_flatten_into(graph, &mut flat, &mut params, 0)?;
        flat.nodes = (0..params.len() as u64).collect();
        if params.len() > MAX_GRAPH_NODES_PER_SESSION {
            return Err(Failure::new(Status::OUT_OF_MEMORY, format!("the expanded graph has more than {MAX_GRAPH_NODES_PER_SESSION} nodes")));
        }
        Ok((flat, params, spans))
    }

    /// Appends `graph`'s nodes and edges to `flat`; returns each node's (entry, exit) index.
    fn graph_flatten_into(
        &self,
        graph: u64,
        flat: &mut Graph,
        params: &mut Vec<NodeParams>,
        depth: usize,
    ) -> Result<HashMap<u64, (u64, u64)>, Failure> {
        if depth > MAX_CHILD_GRAPH_DEPTH {
            return Err(invalid(format!("child graphs nest deeper than {MAX_CHILD_GRAPH_DEPTH}")));
        }
        let g = self.graphs.graphs.get(graph).map_err(unknown)?;
        let mut ends = HashMap::with_capacity(g.nodes.len());
        for &node in &g.nodes {
            let p = &self.graphs.nodes.get(node)?.params;
            let NodeParams::Child { graph: child } = *p else {
                params.push(p.clone());
                let index = params.len() as u64 - 1;
                ends.insert(node, (index, index));
                continue;
            };
            params.push(NodeParams::Empty);
            let entry = params.len() as u64 - 1;
            let inner = self.graph_flatten_into(child, flat, params, depth + 1)?;
            params.push(NodeParams::Empty);
            let exit = params.len() as u64 - 1;
            let child_graph = self.graphs.graphs.get(child).map_err(unknown)?;
            let has_pred: HashSet<u64> = child_graph.edges.iter().map(|&(_, to)| to).collect();
            let has_succ: HashSet<u64> = child_graph.edges.iter().map(|&(from, _)| from).collect();
            for n in &child_graph.nodes {
                let (n_entry, n_exit) = inner[n];
                if !has_pred.contains(n) {
                    flat.edges.push((entry, n_entry));
                }
                if !has_succ.contains(n) {
                    flat.edges.push((n_exit, exit));
                }
            }
            if child_graph.nodes.is_empty() {
                flat.edges.push((entry, exit));
            }
            ends.insert(node, (entry, exit));
        }
        flat.edges.extend(g.edges.iter().map(|(from, to)| (ends[from].1, ends[to].0)));
        Ok(ends)
    }

    fn graph_event_node(&self, node: u64, wait: bool) -> Result<u64, Failure> {
        match self.graph_node(node)?.params {
            NodeParams::Event { event, wait: w } if w == wait => Ok(event),
            ref other => {
                Err(invalid(format!("node {node:#x} is a {:?} node, not an event {} node", other.kind(), if wait { "wait" } else { "record" })))
            }
        }
    }
}

/// The handlers of this file's opcodes (`GraphHandler` forwards to them).
impl Session {
    pub(super) fn add_event_node(&mut self, req: wire::GraphAddEventNode<'_>) -> Result<wire::GraphNodeRef, Failure> {
        self.graphs.graphs.get(req.graph).map_err(unknown)?;
        let params = NodeParams::Event { event: req.event, wait: req.wait };
        // An event the session does not know is refused as HIP refuses a NULL one.
        self.graph_node_op(&params).map_err(unknown)?;
        self.graph_insert_node(req.graph, req.dependencies.0, params)
    }

    pub(super) fn event_node_get_event(&mut self, req: wire::GraphEventNodeQuery) -> Result<wire::GraphNodeEvent, Failure> {
        Ok(wire::GraphNodeEvent { event: self.graph_event_node(req.node, req.wait)? })
    }

    pub(super) fn event_node_set_event(&mut self, req: wire::GraphEventNodeSet) -> Result<wire::Empty, Failure> {
        self.graph_event_node(req.node, req.wait)?;
        let params = NodeParams::Event { event: req.event, wait: req.wait };
        self.graph_node_op(&params).map_err(unknown)?;
        self.graphs.nodes.get_mut(req.node)?.params = params;
        Ok(wire::Empty {})
    }

    pub(super) fn add_child_node(&mut self, req: wire::GraphAddChildNode<'_>) -> Result<wire::GraphNodeRef, Failure> {
        self.graphs.graphs.get(req.graph).map_err(unknown)?;
        self.graphs.graphs.get(req.child).map_err(unknown)?;
        // Dependencies are checked before the clone is made, so a refused node leaves nothing.
        let deps: Vec<u64> = handles(req.dependencies.0).collect();
        for &dep in &deps {
            self.graph_member(req.graph, dep)?;
        }
        if self.graphs.graphs.get(req.graph).map_err(unknown)?.nodes.len() >= MAX_GRAPH_NODES {
            return Err(Failure::new(Status::OUT_OF_MEMORY, format!("a graph holds at most {MAX_GRAPH_NODES} nodes")));
        }
        let copy = self.graph_clone_deep(req.child)?;
        self.graphs.links.embedded.insert(copy);
        self.graph_insert_node(req.graph, req.dependencies.0, NodeParams::Child { graph: copy }).inspect_err(|_| self.graph_remove(copy))
    }

    pub(super) fn child_node_get_graph(&mut self, req: wire::GraphNodeRef) -> Result<wire::GraphRef, Failure> {
        match self.graph_node(req.node)?.params {
            NodeParams::Child { graph } => Ok(wire::GraphRef { graph }),
            NodeParams::Blas { .. } => Err(invalid(format!("node {:#x} is a captured BLAS routine, which has no child graph to return", req.node))),
            ref other => Err(invalid(format!("node {:#x} is a {:?} node, not a child graph node", req.node, other.kind()))),
        }
    }

    pub(super) fn destroy_graph_node(&mut self, req: wire::GraphNodeRef) -> Result<wire::Empty, Failure> {
        let node = self.graph_node(req.node)?;
        if matches!(node.params, NodeParams::MemAlloc { .. } | NodeParams::MemFree { .. }) {
            // HIP's answer (hipGraphDestroyNode).
            return Err(Failure::new(Status::NOT_SUPPORTED, format!("node {:#x} is a memory node, which cannot be destroyed", req.node)));
        }
        let graph = node.graph;
        let g = self.graphs.graphs.get_mut(graph).map_err(unknown)?;
        g.nodes.retain(|&n| n != req.node);
        g.edges.retain(|&(from, to)| from != req.node && to != req.node);
        self.graph_forget_node(req.node);
        self.blas_release_retired();
        Ok(wire::Empty {})
    }

    pub(super) fn find_node_in_clone(&mut self, req: wire::GraphNodeFindInClone) -> Result<wire::GraphNodeRef, Failure> {
        let clone = self.graphs.graphs.get(req.clone).map_err(unknown)?;
        if !self.graphs.links.clones.contains(&req.clone) {
            return Err(invalid(format!("graph {:#x} is not a clone", req.clone)));
        }
        let wanted = self.graphs.links.identity(req.original);
        let found = clone.nodes.iter().find(|&&n| self.graphs.links.identity(n) == wanted);
        let node = *found.ok_or_else(|| invalid(format!("node {:#x} has no counterpart in graph {:#x}", req.original, req.clone)))?;
        Ok(wire::GraphNodeRef { node })
    }
}

/// The parameters of a memcpy node as one 3D copy (a 1D copy is one row of pitched memory).
fn copy_params(params: &NodeParams) -> Option<wire::GraphCopyParams> {
    Some(match params {
        NodeParams::Memcpy { dst, src, len } => {
            let row = |ptr| wire::CopyPlace { ptr, pitch: *len, height: 1, ..Default::default() };
            let extent = wire::CopyExtent { width: *len, height: 1, depth: 1 };
            wire::GraphCopyParams { copy: wire::CopyBox { dst: row(*dst), src: row(*src), extent } }
        }
        NodeParams::Copy3D(c) => wire::GraphCopyParams { copy: c.copy.clone() },
        _ => return None,
    })
}

/// A memcpy node's parameters from a 3D copy: one row between two device addresses is a
/// plain device-to-device copy (which native graphs take), anything else a 3D copy.
fn copy_node_params(req: &wire::GraphCopyNodeSet) -> Result<NodeParams, Failure> {
    let (dst, src, e) = (&req.copy.dst, &req.copy.src, &req.copy.extent);
    if e.width == 0 || e.height == 0 || e.depth == 0 {
        return Err(invalid(format!("copy node of an empty box ({} x {} x {})", e.width, e.height, e.depth)));
    }
    let one_row = e.height == 1 && e.depth == 1 && dst.y == 0 && dst.z == 0 && src.y == 0 && src.z == 0;
    if one_row && dst.array == 0 && src.array == 0 {
        let dst = dst.ptr.checked_add(dst.x).ok_or_else(|| invalid("copy node destination overflows"))?;
        let src = src.ptr.checked_add(src.x).ok_or_else(|| invalid("copy node source overflows"))?;
        return Ok(NodeParams::Memcpy { dst, src, len: e.width });
    }
    Ok(NodeParams::Copy3D(Box::new(wire::Copy3D { copy: req.copy.clone(), stream: 0, sync: false })))
}

impl Session {
    /// The node's parameters if it is of `kind`, else `INVALID_VALUE` (HIP's answer).
    fn graph_node_of_kind(&self, node: u64, kind: GraphNodeKind) -> Result<&NodeParams, Failure> {
        let params = &self.graph_node(node)?.params;
        if params.kind() != kind {
            return Err(invalid(format!("node {node:#x} is a {:?} node, not a {kind:?} node", params.kind())));
        }
        Ok(params)
    }

    /// Replaces a node's parameters with checked ones of the same kind.
    fn graph_replace_params(&mut self, node: u64, params: NodeParams) -> Result<wire::Empty, Failure> {
        self.graph_node_op(&params)?;
        self.graphs.nodes.get_mut(node)?.params = params;
        Ok(wire::Empty {})
    }

    pub(super) fn memset_node_get_params(&mut self, req: wire::GraphNodeRef) -> Result<wire::GraphMemsetParams, Failure> {
        let NodeParams::Memset { fill, pattern } = self.graph_node_of_kind(req.node, GraphNodeKind::Memset)? else {
            return Err(invalid("not a memset node"));
        };
        let value = match *pattern {
            MemsetPattern::U8(v) => u32::from(v),
            MemsetPattern::U16(v) => u32::from(v),
            MemsetPattern::U32(v) => v,
        };
        let element_size = pattern.elem_size() as u32;
        Ok(wire::GraphMemsetParams { dst: fill.ptr.0, value, element_size, width: fill.width, height: fill.height, pitch: fill.pitch })
    }

    pub(super) fn memset_node_set_params(&mut self, req: wire::GraphMemsetNodeSet) -> Result<wire::Empty, Failure> {
        self.graph_node_of_kind(req.node, GraphNodeKind::Memset)?;
        let add = wire::GraphAddNode {
            graph: 0,
            kind: GraphNodeKind::Memset,
            dependencies: Default::default(),
            function: 0,
            grid: [0; 3],
            block: [0; 3],
            shared_mem: 0,
            dst: req.dst,
            src: 0,
            value: req.value,
            element_size: req.element_size,
            width: req.width,
            height: req.height,
            pitch: req.pitch,
            host_token: 0,
            args: Default::default(),
        };
        let params = self.graph_node_params(&add)?;
        self.graph_replace_params(req.node, params)
    }

    pub(super) fn memcpy_node_get_params(&mut self, req: wire::GraphNodeRef) -> Result<wire::GraphCopyParams, Failure> {
        let params = self.graph_node_of_kind(req.node, GraphNodeKind::Memcpy)?;
        copy_params(params).ok_or_else(|| invalid("not a memcpy node"))
    }

    pub(super) fn memcpy_node_set_params(&mut self, req: wire::GraphCopyNodeSet) -> Result<wire::Empty, Failure> {
        self.graph_node_of_kind(req.node, GraphNodeKind::Memcpy)?;
        let params = copy_node_params(&req)?;
        self.graph_replace_params(req.node, params)
    }

    pub(super) fn host_node_get_params(&mut self, req: wire::GraphNodeRef) -> Result<wire::GraphHostToken, Failure> {
        match self.graph_node_of_kind(req.node, GraphNodeKind::Host)? {
            NodeParams::Host { token } => Ok(wire::GraphHostToken { token: *token }),
            _ => Err(invalid("not a host node")),
        }
    }

    pub(super) fn host_node_set_params(&mut self, req: wire::GraphHostNodeSet) -> Result<wire::Empty, Failure> {
        self.graph_node_of_kind(req.node, GraphNodeKind::Host)?;
        self.graph_replace_params(req.node, NodeParams::Host { token: req.token })
    }
}

/// `hipLaunchAttributeAccessPolicyWindow`, `hipLaunchAttributeCooperative`,
/// `hipLaunchAttributePriority`: the attributes HIP lets a kernel node hold.
const KERNEL_NODE_ATTRS: [u32; 3] = [1, 2, 8];
/// `hipAccessPropertyPersisting`, which HIP refuses for misses.
const ACCESS_PROPERTY_PERSISTING: u32 = 2;

impl Session {
    fn kernel_attr_node(&self, node: u64, attr: u32) -> Result<(), Failure> {
        if !KERNEL_NODE_ATTRS.contains(&attr) {
            return Err(invalid(format!("launch attribute {attr} is not a kernel node attribute")));
        }
        self.graph_node_of_kind(node, GraphNodeKind::Kernel).map(drop)
    }

    pub(super) fn kernel_node_get_attribute(&mut self, req: wire::GraphKernelAttrQuery) -> Result<wire::GraphKernelAttrValue, Failure> {
        self.kernel_attr_node(req.node, req.attr)?;
        match self.graphs.links.kernel_attrs.get(&req.node) {
            // HIP answers the attribute in use, or zeros when none is; another is refused.
            Some((attr, value)) if *attr == req.attr => Ok(value.clone()),
            Some((attr, _)) => Err(invalid(format!("the node holds launch attribute {attr}, not {}", req.attr))),
            None => Ok(wire::GraphKernelAttrValue::default()),
        }
    }

    pub(super) fn kernel_node_set_attribute(&mut self, req: wire::GraphKernelAttrSet) -> Result<wire::Empty, Failure> {
        self.kernel_attr_node(req.node, req.attr)?;
        let value = wire::GraphKernelAttrValue {
            base_ptr: req.base_ptr,
            num_bytes: req.num_bytes,
            hit_ratio: req.hit_ratio,
            hit_prop: req.hit_prop,
            miss_prop: req.miss_prop,
            value: req.value,
        };
        // ROCm's checks (hip_graph_internal.hpp, SetAttrParams). A window of bytes is larger
        // than the device's largest access policy window, which is 0 (as
        // hipGetDeviceProperties reports it).
        let bad = match req.attr {
            1 => !(0.0..=1.0).contains(&value.hit_ratio) || value.miss_prop == ACCESS_PROPERTY_PERSISTING || value.num_bytes > 0,
            // hip::Stream priorities run from High (-1) to Low (1).
            8 => !(-1..=1).contains(&value.value),
            _ => false,
        };
        if bad {
            return Err(invalid(format!("launch attribute {} value {value:?}", req.attr)));
        }
        self.graphs.links.kernel_attrs.insert(req.node, (req.attr, value));
        Ok(wire::Empty {})
    }

    pub(super) fn kernel_node_copy_attributes(&mut self, req: wire::GraphKernelAttrCopy) -> Result<wire::Empty, Failure> {
        self.graph_node_of_kind(req.src, GraphNodeKind::Kernel)?;
        self.graph_node_of_kind(req.dst, GraphNodeKind::Kernel)?;
        let links = &mut self.graphs.links;
        let Some((attr, value)) = links.kernel_attrs.get(&req.src).cloned() else {
            return Ok(wire::Empty {});
        };
        // HIP refuses to replace one attribute by another with hipErrorInvalidContext.
        if let Some(&(held, _)) = links.kernel_attrs.get(&req.dst).filter(|(held, _)| *held != attr) {
            return Err(Failure::new(Status::INVALID_CONTEXT, format!("the node holds launch attribute {held}, the source {attr}")));
        }
        links.kernel_attrs.insert(req.dst, (attr, value));
        Ok(wire::Empty {})
    }
}

impl Session {
    /// Pairs each node of `target` with the node of `source` at the same place, checking
    /// that both graphs have the same shape (recursively through child graph nodes).
    fn graph_param_pairs(&self, target: u64, source: u64, pairs: &mut Vec<(u64, NodeParams)>, depth: usize) -> Result<(), Failure> {
        if depth > MAX_CHILD_GRAPH_DEPTH {
            return Err(invalid(format!("child graphs nest deeper than {MAX_CHILD_GRAPH_DEPTH}")));
        }
        let (t, s) = (self.graphs.graphs.get(target).map_err(unknown)?, self.graphs.graphs.get(source).map_err(unknown)?);
        if t.nodes.len() != s.nodes.len() {
            return Err(invalid(format!("graph {source:#x} has {} nodes, the child graph {}", s.nodes.len(), t.nodes.len())));
        }
        for (&tn, &sn) in t.nodes.iter().zip(&s.nodes) {
            let (tp, sp) = (&self.graphs.nodes.get(tn)?.params, &self.graphs.nodes.get(sn)?.params);
            match (tp, sp) {
                (NodeParams::Child { graph: tg }, NodeParams::Child { graph: sg }) => self.graph_param_pairs(*tg, *sg, pairs, depth + 1)?,
                // A BLAS node answers the child graph kind but is no child graph.
                (NodeParams::Child { .. }, _) | (_, NodeParams::Child { .. }) => {
                    return Err(invalid(format!("node {sn:#x} and the child graph's node differ in kind")))
                }
                _ if tp.kind() == sp.kind() => pairs.push((tn, sp.clone())),
                _ => return Err(invalid(format!("node {sn:#x} is a {:?} node where the child graph has a {:?} node", sp.kind(), tp.kind()))),
            }
        }
        Ok(())
    }

    pub(super) fn child_node_set_params(&mut self, req: wire::GraphChildNodeSet) -> Result<wire::Empty, Failure> {
        let NodeParams::Child { graph } = self.graph_node_of_kind(req.node, GraphNodeKind::Graph)? else {
            return Err(invalid("not a child graph node"));
        };
        let mut pairs = Vec::new();
        self.graph_param_pairs(*graph, req.child, &mut pairs, 0)?;
        for (node, params) in pairs {
            self.graphs.nodes.get_mut(node)?.params = params;
        }
        Ok(wire::Empty {})
    }
}

/// `hipGraphMemAttributeType`: used current, used high, reserved current, reserved high.
const GRAPH_MEM_ATTRS: std::ops::RangeInclusive<u32> = 0..=3;

impl Session {
    /// `hipFree` of graph memory: it is the user's to release, no longer the graph pool's.
    pub(super) fn graph_memory_released(&mut self, ptr: u64) {
        self.graphs.links.memory.remove(&ptr);
    }

    /// A graph holding memory nodes is instantiated once (HIP answers `NOT_SUPPORTED` after).
    pub(super) fn graph_check_reinstantiation(&self, graph: u64) -> Result<(), Failure> {
        if !self.graphs.links.instantiated.contains(&graph) {
            return Ok(());
        }
        let g = self.graphs.graphs.get(graph).map_err(unknown)?;
        let memory_node = g
            .nodes
            .iter()
            .any(|&n| matches!(self.graphs.nodes.get(n).map(|n| n.params.kind()), Ok(GraphNodeKind::MemAlloc | GraphNodeKind::MemFree)));
        if memory_node {
            return Err(Failure::new(Status::NOT_SUPPORTED, format!("graph {graph:#x} holds memory nodes and was instantiated already")));
        }
        Ok(())
    }

    pub(super) fn graph_note_instantiation(&mut self, graph: u64) {
        self.graphs.links.instantiated.insert(graph);
    }

    pub(super) fn add_mem_alloc_node(&mut self, req: wire::GraphAddMemAllocNode<'_>) -> Result<wire::GraphMemAllocNode, Failure> {
        self.graphs.graphs.get(req.graph).map_err(unknown)?;
        // A device out of range is HIP's INVALID_VALUE here (a bad pool location).
        let device = self.device(req.device).map_err(unknown)?;
        if req.size == 0 {
            return Err(invalid("a graph memory allocation of 0 bytes"));
        }
        // Everything that could refuse the node is checked before the memory is taken.
        if self.graphs.graphs.get(req.graph).map_err(unknown)?.nodes.len() >= MAX_GRAPH_NODES {
            return Err(Failure::new(Status::OUT_OF_MEMORY, format!("a graph holds at most {MAX_GRAPH_NODES} nodes")));
        }
        for dep in handles(req.dependencies.0) {
            self.graph_member(req.graph, dep)?;
        }
        self.graphs.nodes.check_capacity()?;
        self.check_allocation_capacity(req.size)?;
        let ptr = self.backend.malloc(device, req.size)?;
        self.record_allocation(ptr, req.size, device);
        let params = NodeParams::MemAlloc { ptr: ptr.0, size: req.size, device };
        let node = match self.graph_insert_node(req.graph, req.dependencies.0, params) {
            Ok(node) => node.node,
            Err(e) => {
                self.allocations.remove(ptr.0);
                self.forget_allocation(ptr.0);
                if let Err(free) = self.backend.free(ptr) {
                    tracing::warn!(session = self.id, %free, "freeing a refused node's graph memory failed");
                }
                return Err(e);
            }
        };
        let memory = GraphMemory { size: req.size, device, node: Some(node), freed: false };
        self.graphs.links.memory.insert(ptr.0, memory);
        self.graphs.links.raise_watermarks(device);
        Ok(wire::GraphMemAllocNode { node, ptr: ptr.0 })
    }

    /// Whether `ptr` is graph memory no free node frees yet.
    pub(super) fn graph_memory_unfreed(&self, ptr: u64) -> bool {
        self.graphs.links.memory.get(&ptr).is_some_and(|m| !m.freed)
    }

    pub(super) fn add_mem_free_node(&mut self, req: wire::GraphAddMemFreeNode<'_>) -> Result<wire::GraphNodeRef, Failure> {
        self.graphs.graphs.get(req.graph).map_err(unknown)?;
        if req.any_memory {
            self.allocations.resolve(req.ptr, 1, "graph memory free").map_err(unknown)?;
        } else if self.graphs.links.memory.get(&req.ptr).is_none_or(|m| m.freed) {
            // HIP: memory of an allocation node that no free node frees yet.
            return Err(invalid(format!("{:#x} is no graph memory allocation left to free", req.ptr)));
        }
        let node = self.graph_insert_node(req.graph, req.dependencies.0, NodeParams::MemFree { ptr: req.ptr })?;
        if let Some(m) = self.graphs.links.memory.get_mut(&req.ptr) {
            m.freed = true;
        }
        Ok(node)
    }

    pub(super) fn mem_alloc_node_get_params(&mut self, req: wire::GraphNodeRef) -> Result<wire::GraphMemAllocParams, Failure> {
        match self.graph_node_of_kind(req.node, GraphNodeKind::MemAlloc)? {
            &NodeParams::MemAlloc { ptr, size, device } => Ok(wire::GraphMemAllocParams { device: self.client_device(device), size, ptr }),
            _ => Err(invalid("not a memory allocation node")),
        }
    }

    pub(super) fn mem_free_node_get_params(&mut self, req: wire::GraphNodeRef) -> Result<wire::GraphMemFreeParams, Failure> {
        match self.graph_node_of_kind(req.node, GraphNodeKind::MemFree)? {
            NodeParams::MemFree { ptr } => Ok(wire::GraphMemFreeParams { ptr: *ptr }),
            _ => Err(invalid("not a memory free node")),
        }
    }

    pub(super) fn graph_memory_trim(&mut self, req: wire::GraphMemDevice) -> Result<wire::Empty, Failure> {
        let device = self.device(req.device)?;
        let reserve: Vec<u64> = self.graphs.links.memory.iter().filter(|(_, m)| m.device == device && m.in_reserve()).map(|(&p, _)| p).collect();
        if reserve.is_empty() {
            return Ok(wire::Empty {});
        }
        // As hipFree: the session's queued work finishes before the memory goes.
        let _ = self.synchronize_session(Some(device));
        for ptr in reserve {
            self.graphs.links.memory.remove(&ptr);
            if self.allocations.remove(ptr).is_some() {
                self.forget_allocation(ptr);
                self.backend.free(crate::backend::DevicePtr(ptr))?;
            }
        }
        Ok(wire::Empty {})
    }

    pub(super) fn graph_memory_attribute(&mut self, req: wire::GraphMemAttrQuery) -> Result<wire::GraphMemAttrValue, Failure> {
        let device = self.device(req.device)?;
        // Only the high watermarks can be reset (ROCm's graph memory pool).
        if !GRAPH_MEM_ATTRS.contains(&req.attr) || (req.reset && req.attr.is_multiple_of(2)) {
            return Err(invalid(format!("graph memory attribute {} ({})", req.attr, if req.reset { "set" } else { "get" })));
        }
        let (used, reserved) = self.graphs.links.graph_memory_in_use(device);
        let high = self.graphs.links.watermarks.entry(device).or_default();
        if req.reset {
            // ROCm sets the watermark to the value given, which must be 0.
            match req.attr {
                1 => high.0 = 0,
                _ => high.1 = 0,
            }
            return Ok(wire::GraphMemAttrValue { value: 0 });
        }
        let value = match req.attr {
            0 => used,
            1 => high.0,
            2 => reserved,
            _ => high.1,
        };
        Ok(wire::GraphMemAttrValue { value })
    }
}

/// `hipStreamBatchMemOpType` values and the stream memory operation each one is
/// (`None`: barriers and remote-write flushes, which order nothing more than the stream's own
/// order already does on the worker, as `hipStreamBatchMemOp` treats them).
fn batch_op_kind(operation: u32) -> Result<Option<u32>, Failure> {
    use proto_core::wire::stream_mem_op::*;
    Ok(match operation {
        1 => Some(WAIT32),
        2 => Some(WRITE32),
        4 => Some(WAIT64),
        5 => Some(WRITE64),
        3 | 6 => None,
        other => return Err(invalid(format!("unknown batch memory operation {other}"))),
    })
}

impl Session {
    /// The backend steps of a batch memory operation node, checked as `hipStreamBatchMemOp`'s
    /// operations are (at add, set and every launch).
    pub(super) fn graph_mem_ops(&self, ops: &[[u64; 4]]) -> Result<(Option<DeviceIndex>, GraphOp), Failure> {
        let mut device = None;
        let mut steps = Vec::with_capacity(ops.len());
        for &[kind_flags, ptr, value, mask] in ops {
            let Some(op) = batch_op_kind(kind_flags as u32)? else { continue };
            let is_wait = matches!(op, wire::stream_mem_op::WAIT32 | wire::stream_mem_op::WAIT64);
            // AMD's runtime ignores a write's flags.
            let flags = if is_wait { (kind_flags >> 32) as u32 } else { 0 };
            let req = wire::StreamMemOp { stream: 0, ptr, value, mask, op, flags };
            let (step, on) = self.check_mem_op(&req).map_err(unknown)?;
            device = device.or(Some(on));
            steps.push(step);
        }
        Ok((device, GraphOp::MemOps(steps.into())))
    }

    pub(super) fn batch_params(&self, flags: u32, words: &[U64]) -> Result<NodeParams, Failure> {
        if flags != 0 {
            return Err(invalid(format!("batch memory operation node flags {flags:#x} (must be 0)")));
        }
        let count = words.len() / wire::GRAPH_BATCH_MEM_OP_WORDS;
        if count == 0 || count > wire::MAX_GRAPH_BATCH_MEM_OPS || !words.len().is_multiple_of(wire::GRAPH_BATCH_MEM_OP_WORDS) {
            return Err(invalid(format!("{} words are not 1 to {} operations", words.len(), wire::MAX_GRAPH_BATCH_MEM_OPS)));
        }
        let ops: Arc<[[u64; 4]]> = words.chunks_exact(4).map(|w| [w[0].get(), w[1].get(), w[2].get(), w[3].get()]).collect();
        let params = NodeParams::BatchMemOp { flags, ops };
        self.graph_node_op(&params)?;
        Ok(params)
    }

    pub(super) fn add_batch_mem_op_node(&mut self, req: wire::GraphAddBatchMemOpNode<'_>) -> Result<wire::GraphNodeRef, Failure> {
        self.graphs.graphs.get(req.graph).map_err(unknown)?;
        let params = self.batch_params(req.flags, req.ops.0)?;
        self.graph_insert_node(req.graph, req.dependencies.0, params)
    }

    /// The node's flags; its operations go to the reply list.
    pub(super) fn batch_mem_op_node_get_params(&mut self, req: wire::GraphNodeRef) -> Result<u32, Failure> {
        let NodeParams::BatchMemOp { flags, ops } = self.graph_node_of_kind(req.node, GraphNodeKind::BatchMemOp)? else {
            return Err(invalid("not a batch memory operation node"));
        };
        let (flags, words) = (*flags, ops.iter().flatten().map(|&w| U64::new(w)).collect());
        self.graphs.reply_a = words;
        Ok(flags)
    }

    pub(super) fn batch_mem_op_node_set_params(&mut self, req: wire::GraphBatchMemOpNodeSet<'_>) -> Result<wire::Empty, Failure> {
        self.graph_node_of_kind(req.node, GraphNodeKind::BatchMemOp)?;
        let params = self.batch_params(req.flags, req.ops.0)?;
        self.graph_replace_params(req.node, params)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{CallCx, SessionConfig};
    use super::*;
    use crate::backend::{HostBackend, HostConfig};
    use proto_core::field::List;
    use proto_core::opcode::GraphHandler;

    fn setup() -> (Session, CallCx) {
        let backend = Arc::new(HostBackend::new(HostConfig { devices: 1, memory_per_device: 64 << 20, ..HostConfig::default() }));
        (Session::new(backend, Arc::new(SessionConfig::default())), CallCx::new(1, proto_core::Opcode::Ping, false, 0))
    }

    /// A host node named by `token` (never run here), so the flattened plan shows which is which.
    fn host(s: &mut Session, io: &mut CallCx, graph: u64, deps: &[u64], token: u64) -> u64 {
        let deps: Vec<U64> = deps.iter().map(|&d| U64::new(d)).collect();
        let req = wire::GraphAddNode {
            graph,
            kind: GraphNodeKind::Host,
            dependencies: List(&deps),
            function: 0,
            grid: [0; 3],
            block: [0; 3],
            shared_mem: 0,
            dst: 0,
            src: 0,
            value: 0,
            element_size: 0,
            width: 0,
            height: 0,
            pitch: 0,
            host_token: token,
            args: Default::default(),
        };
        s.graph_add_node(io, req).unwrap().node
    }

    fn graph(s: &mut Session, io: &mut CallCx) -> u64 {
        s.graph_create(io, wire::GraphCreate { flags: 0 }).unwrap().graph
    }

    #[test]
    fn a_child_graph_runs_between_the_child_nodes_neighbours() {
        let (mut s, mut io) = setup();
        let child = graph(&mut s, &mut io);
        let a = host(&mut s, &mut io, child, &[], 10);
        host(&mut s, &mut io, child, &[a], 11);
        host(&mut s, &mut io, child, &[], 12);
        let parent = graph(&mut s, &mut io);
        let x = host(&mut s, &mut io, parent, &[], 1);
        let deps = [U64::new(x)];
        let sub = s.add_child_node(wire::GraphAddChildNode { graph: parent, dependencies: List(&deps), child }).unwrap().node;
        host(&mut s, &mut io, parent, &[sub], 2);
        let (flat, params) = s.graph_flatten(parent).unwrap();
        let order = flat.topological_order().unwrap();
        let position = |token: u64| order.iter().position(|&n| params[n as usize] == NodeParams::Host { token }).unwrap();
        for inner in [10, 11, 12] {
            assert!(position(1) < position(inner) && position(inner) < position(2), "node {inner} runs between x and y");
        }
        assert!(position(10) < position(11));
        // The child was cloned: changing it afterwards does not reach the node.
        host(&mut s, &mut io, child, &[], 13);
        let (_, params) = s.graph_flatten(parent).unwrap();
        assert!(!params.contains(&NodeParams::Host { token: 13 }));
    }

    #[test]
    fn a_clone_of_a_clone_finds_the_first_original() {
        let (mut s, mut io) = setup();
        let g = graph(&mut s, &mut io);
        let n = host(&mut s, &mut io, g, &[], 1);
        let c1 = s.graph_clone(&mut io, wire::GraphRef { graph: g }).unwrap().graph;
        let c2 = s.graph_clone(&mut io, wire::GraphRef { graph: c1 }).unwrap().graph;
        let in_c1 = s.find_node_in_clone(wire::GraphNodeFindInClone { original: n, clone: c1 }).unwrap().node;
        let in_c2 = s.find_node_in_clone(wire::GraphNodeFindInClone { original: n, clone: c2 }).unwrap().node;
        assert_eq!(s.find_node_in_clone(wire::GraphNodeFindInClone { original: in_c1, clone: c2 }).unwrap().node, in_c2);
        assert!(s.find_node_in_clone(wire::GraphNodeFindInClone { original: n, clone: g }).is_err(), "not a clone");
    }

    #[test]
    fn graph_memory_sums_follow_the_model() {
        let (mut s, mut io) = setup();
        let attr = |s: &mut Session, attr: u32| s.graph_memory_attribute(wire::GraphMemAttrQuery { device: 0, attr, reset: false }).unwrap().value;
        let g = graph(&mut s, &mut io);
        let kept = s.add_mem_alloc_node(wire::GraphAddMemAllocNode { graph: g, dependencies: List(&[]), device: 0, size: 4096 }).unwrap();
        let freed = s.add_mem_alloc_node(wire::GraphAddMemAllocNode { graph: g, dependencies: List(&[]), device: 0, size: 1024 }).unwrap();
        s.add_mem_free_node(wire::GraphAddMemFreeNode { graph: g, dependencies: List(&[]), ptr: freed.ptr, any_memory: false }).unwrap();
        assert_eq!((attr(&mut s, 0), attr(&mut s, 2), attr(&mut s, 1)), (5120, 5120, 5120));
        s.graph_destroy(&mut io, wire::GraphRef { graph: g }).unwrap();
        // The freed allocation is the reserve now; the other is still the user's.
        assert_eq!((attr(&mut s, 0), attr(&mut s, 2)), (4096, 5120));
        s.graph_memory_trim(wire::GraphMemDevice { device: 0 }).unwrap();
        assert_eq!((attr(&mut s, 0), attr(&mut s, 2)), (4096, 4096));
        assert!(s.allocations.resolve(freed.ptr, 1, "").is_err(), "trimmed memory is gone");
        assert!(s.allocations.resolve(kept.ptr, 4096, "").is_ok());
        assert_eq!(attr(&mut s, 3), 5120, "the reserved watermark stays until reset");
    }
}
