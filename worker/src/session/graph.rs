//! Graphs (`hipGraph*`): graphs, their nodes and executable graphs are session objects.
//!
//! A graph is a list of nodes in creation order plus its edges; a node names its graph and
//! keeps its parameters as the client gave them (session handles and addresses), checked
//! when added. Instantiation orders the nodes so that every edge is respected and hands the
//! backend a [`GraphPlan`] of backend handles; the executable graph keeps its own copy of the
//! nodes, so it outlives its graph (as in HIP) and is re-checked at every launch: a node
//! whose memory was freed or whose module was unloaded fails the launch with the error the
//! same call would give outside a graph, never reaches the backend. Stream capture
//! (`capture.rs`) records into the same [`Graph`] object.

use super::{CallCx, Failure, Session};
use crate::backend::blas::{BlasCall, BlasHandle};
use crate::backend::{DeviceIndex, DevicePtr, ExecGraph, GraphOp, GraphPlan, HostStep, LaunchConfig, MemsetPattern, PitchedFill};
use proto_core::opcode::GraphHandler;
use proto_core::wire::{self, GraphNodeKind, MAX_GRAPH_EDGES, MAX_GRAPH_NODES};
use proto_core::Status;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use zerocopy::byteorder::little_endian::U64;

#[path = "graph_exec.rs"]
mod graph_exec;

/// Most live graphs one session may hold.
pub const MAX_GRAPHS_PER_SESSION: usize = 4096;
/// Most live executable graphs one session may hold.
pub const MAX_GRAPH_EXECS_PER_SESSION: usize = 4096;
/// Most live graph nodes one session may hold, over all its graphs.
pub const MAX_GRAPH_NODES_PER_SESSION: usize = 1 << 20;

/// A node's parameters, as the client gave them. `Event` is a record (`wait: false`) or wait
/// node naming a session event; `Child` names the session graph the node owns (a clone of the
/// graph given, expanded in place at instantiation); `MemAlloc` is graph memory allocated
/// when the node was added and `MemFree` its release (`graph_nodes.rs` has the model);
/// `BatchMemOp` holds stream memory operations as `wire::GraphAddBatchMemOpNode` has them.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum NodeParams {
    Kernel {
        function: u64,
        config: LaunchConfig,
        args: Arc<[u8]>,
    },
    Memset {
        fill: PitchedFill,
        pattern: MemsetPattern,
    },
    Memcpy {
        dst: u64,
        src: u64,
        len: u64,
    },
    Copy3D(Box<wire::Copy3D>),
    Host {
        token: u64,
    },
    Empty,
    Event {
        event: u64,
        wait: bool,
    },
    Child {
        graph: u64,
    },
    MemAlloc {
        ptr: u64,
        size: u64,
        device: DeviceIndex,
    },
    MemFree {
        ptr: u64,
    },
    BatchMemOp {
        flags: u32,
        ops: Arc<[[u64; 4]]>,
    },
    /// A BLAS routine captured from a stream: the backend's handle (kept alive while a graph
    /// holds it, see `blas.rs`), its device, and the call with its operands.
    Blas {
        handle: BlasHandle,
        device: DeviceIndex,
        call: BlasCall,
    },
}

impl NodeParams {
    pub(super) fn kind(&self) -> GraphNodeKind {
        match self {
            Self::Kernel { .. } => GraphNodeKind::Kernel,
            Self::Memset { .. } => GraphNodeKind::Memset,
            Self::Memcpy { .. } | Self::Copy3D(_) => GraphNodeKind::Memcpy,
            Self::Host { .. } => GraphNodeKind::Host,
            Self::Empty => GraphNodeKind::Empty,
            Self::Event { wait: false, .. } => GraphNodeKind::EventRecord,
            Self::Event { wait: true, .. } => GraphNodeKind::WaitEvent,
            Self::Child { .. } => GraphNodeKind::Graph,
            Self::MemAlloc { .. } => GraphNodeKind::MemAlloc,
            Self::MemFree { .. } => GraphNodeKind::MemFree,
            Self::BatchMemOp { .. } => GraphNodeKind::BatchMemOp,
            // A captured library call, as a captured cuBLAS call added as a child graph looks.
            Self::Blas { .. } => GraphNodeKind::Graph,
        }
    }
}

#[derive(Debug)]
pub(super) struct Node {
    pub(super) graph: u64,
    pub(super) params: NodeParams,
}

/// One graph: its nodes in creation order and its edges in the order they were added.
#[derive(Debug, Default)]
pub(super) struct Graph {
    pub(super) nodes: Vec<u64>,
    pub(super) edges: Vec<(u64, u64)>,
}

impl Graph {
    /// The nodes in an order where every edge's source comes first (creation order among
    /// independent nodes); `None` if the edges form a cycle.
    pub(super) fn topological_order(&self) -> Option<Vec<u64>> {
        let mut indegree: HashMap<u64, usize> = self.nodes.iter().map(|&n| (n, 0)).collect();
        let mut successors: HashMap<u64, Vec<u64>> = HashMap::new();
        for &(from, to) in &self.edges {
            *indegree.get_mut(&to)? += 1;
            successors.entry(from).or_default().push(to);
        }
        let mut ready: VecDeque<u64> = self.nodes.iter().copied().filter(|n| indegree[n] == 0).collect();
        let mut order = Vec::with_capacity(self.nodes.len());
        while let Some(n) = ready.pop_front() {
            order.push(n);
            for next in successors.get(&n).into_iter().flatten() {
                let d = indegree.get_mut(next)?;
                *d -= 1;
                if *d == 0 {
                    ready.push_back(*next);
                }
            }
        }
        (order.len() == self.nodes.len()).then_some(order)
    }
}

/// An executable graph: the backend's object and the nodes it was made from, for the
/// checks every launch repeats and the updates of `graph_exec` (which builds it).
pub(super) struct Exec {
    exec: ExecGraph,
    device: DeviceIndex,
    /// The nodes in launch order.
    nodes: Vec<NodeParams>,
    /// The position in `nodes` of each node of the graph it was instantiated from (a child
    /// graph node: its entry join point).
    positions: HashMap<u64, usize>,
    /// For each child graph node, the positions of the child's own nodes, in the order
    /// [`Session::graph_flatten`] lists a graph's nodes.
    children: HashMap<u64, Vec<usize>>,
    /// For each node, the positions of the nodes it depends on.
    dependencies: Vec<Vec<usize>>,
    /// For each node, whether it runs (a disabled node runs as an empty one).
    enabled: Vec<bool>,
    /// `hipGraphInstantiateFlags`.
    flags: u64,
}

/// A graph as an executable graph runs it: child graphs expanded in place, nodes in launch
/// order.
pub(super) struct GraphLayout {
    /// The nodes in launch order.
    pub(super) nodes: Vec<NodeParams>,
    /// For each node, the positions of the nodes it depends on.
    pub(super) dependencies: Vec<Vec<usize>>,
    /// The position of each node of the graph itself (a child node: its entry join point).
    pub(super) positions: HashMap<u64, usize>,
    /// For each child graph node, the positions of the child's nodes in flattening order.
    pub(super) children: HashMap<u64, Vec<usize>>,
}

impl Session {
    /// Whether a graph node or an executable graph of the session runs BLAS routines with
    /// the backend's `handle`.
    pub(super) fn graph_uses_blas(&self, handle: BlasHandle) -> bool {
        let uses = |params: &NodeParams| matches!(params, NodeParams::Blas { handle: h, .. } if *h == handle);
        self.graphs.nodes.values().any(|node| uses(&node.params)) || self.graphs.execs.values().any(|exec| exec.nodes.iter().any(uses))
    }

    /// `graph` laid out for launches: flattened, ordered so every edge is respected.
    pub(super) fn graph_launch_layout(&self, graph: u64) -> Result<GraphLayout, Failure> {
        let (flat, params, spans) = self.graph_flatten_with_spans(graph)?;
        let order = flat.topological_order().ok_or_else(|| invalid("the graph's edges form a cycle"))?;
        let mut launch_position = vec![0; order.len()];
        for (i, &n) in order.iter().enumerate() {
            launch_position[n as usize] = i;
        }
        let mut dependencies = vec![Vec::new(); order.len()];
        for &(from, to) in &flat.edges {
            dependencies[launch_position[to as usize]].push(launch_position[from as usize]);
        }
        let nodes = order.iter().map(|&n| params[n as usize].clone()).collect();
        let positions = spans.iter().map(|(&node, &(entry, _))| (node, launch_position[entry as usize])).collect();
        let children = spans
            .iter()
            .filter(|&(_, &(entry, exit))| exit > entry)
            .map(|(&node, &(entry, exit))| (node, (entry + 1..exit).map(|k| launch_position[k as usize]).collect()))
            .collect();
        Ok(GraphLayout { nodes, dependencies, positions, children })
    }
}

/// The session's graphs, nodes and executable graphs.
pub(super) struct Graphs {
    pub(super) graphs: super::Handles<Graph>,
    pub(super) nodes: super::Handles<Node>,
    pub(super) execs: super::Handles<Exec>,
    /// Child graph ownership and clone origins (`graph_nodes.rs`).
    pub(super) links: super::graph_nodes::GraphLinks,
    /// The latest node or edge list answered, which the reply borrows.
    pub(super) reply_a: Vec<U64>,
    reply_b: Vec<U64>,
    /// The latest kernel arguments answered, which the reply borrows.
    reply_args: Arc<[u8]>,
}

impl Default for Graphs {
    fn default() -> Self {
        Self {
            graphs: super::Handles::new("graph", 0x4752_0000_0000_0000, MAX_GRAPHS_PER_SESSION),
            nodes: super::Handles::new("graph node", 0x474e_0000_0000_0000, MAX_GRAPH_NODES_PER_SESSION),
            execs: super::Handles::new("executable graph", 0x4745_0000_0000_0000, MAX_GRAPH_EXECS_PER_SESSION),
            reply_a: Vec::new(),
            reply_b: Vec::new(),
            reply_args: Arc::from(&[][..]),
            links: Default::default(),
        }
    }
}

pub(super) fn invalid(why: impl Into<String>) -> Failure {
    Failure::new(Status::INVALID_VALUE, why)
}

/// HIP answers a graph, node or executable graph it does not know with
/// `hipErrorInvalidValue` (`hip_graph.cpp`'s validity checks), not an invalid handle.
pub(super) fn unknown(failure: Failure) -> Failure {
    match failure {
        Failure::Status(_, message) => Failure::Status(Status::INVALID_VALUE, message),
        other => other,
    }
}

pub(super) fn handles(list: &[U64]) -> impl Iterator<Item = u64> + '_ {
    list.iter().map(|h| h.get())
}

impl Session {
    /// Checks a node's parameters against the session's tables (at add, set and every launch)
    /// and returns the device it runs on and what the backend executes.
    pub(super) fn graph_node_op(&self, params: &NodeParams) -> Result<(Option<DeviceIndex>, GraphOp), Failure> {
        Ok(match params {
            NodeParams::Kernel { function, config, args } => {
                let f = self.function(*function)?;
                if (args.len() as u64) < f.args_len {
                    return Err(invalid(format!(
                        "kernel node arguments are {} bytes, but the function's parameters need {}",
                        args.len(),
                        f.args_len
                    )));
                }
                (Some(f.device), GraphOp::Kernel { function: f.handle, config: *config, args: Arc::clone(args) })
            }
            NodeParams::Memset { fill, pattern } => {
                let span = fill.span(pattern.elem_size()).ok_or_else(|| invalid("memset node extent overflows"))?;
                let (_, info) = self.allocations.resolve(fill.ptr.0, span.max(1), "memset node destination")?;
                (Some(info.device), GraphOp::Memset { fill: *fill, pattern: *pattern })
            }
            NodeParams::Memcpy { dst, src, len } => {
                let (_, info) = self.allocations.resolve(*dst, (*len).max(1), "memcpy node destination")?;
                self.allocations.resolve(*src, (*len).max(1), "memcpy node source")?;
                (Some(info.device), GraphOp::Memcpy { dst: DevicePtr(*dst), src: DevicePtr(*src), len: *len })
            }
            NodeParams::Copy3D(copy) => {
                let (dst, src, extent, device) = self.copy_3d_places(copy)?.ok_or_else(|| invalid("copy node of an empty box"))?;
                (Some(device), GraphOp::Copy3D { dst, src, extent, device })
            }
            NodeParams::Host { token } => {
                let (channel, token) = (Arc::clone(&self.callbacks), *token);
                (None, GraphOp::Host(HostStep(Arc::new(move || channel.run_on_stream(token)))))
            }
            NodeParams::Empty => (None, GraphOp::Empty),
            NodeParams::Event { event, wait } => self.graph_event_op(*event, *wait)?,
            // Expanded in place at instantiation (its own nodes were checked when added).
            NodeParams::Child { .. } => (None, GraphOp::Empty),
            // The memory exists from the node's creation on: the node only orders.
            NodeParams::MemAlloc { ptr, size, device } => {
                self.allocations.resolve(*ptr, *size, "graph memory allocation")?;
                (Some(*device), GraphOp::Empty)
            }
            NodeParams::MemFree { ptr } => {
                self.allocations.resolve(*ptr, 1, "graph memory free")?;
                (None, GraphOp::Empty)
            }
            NodeParams::BatchMemOp { ops, .. } => self.graph_mem_ops(ops)?,
            // Every operand again (at add, update and every launch): freed memory is refused
            // before the backend's BLAS sees it, as for memset and memcpy nodes.
            NodeParams::Blas { handle, device, call } => {
                self.blas_check_extents(call, *device)?;
                (Some(*device), GraphOp::Blas { handle: *handle, call: *call })
            }
        })
    }

    /// The checks every launch repeats, at the cost of the distinct things the nodes name:
    /// a step of thousands of kernel nodes uses a few functions, each looked up once here
    /// (their arguments' size was checked when the node was set and cannot change since).
    fn graph_launch_check<'p>(&self, nodes: impl Iterator<Item = &'p NodeParams>) -> Result<(), Failure> {
        /// Functions remembered as checked during one launch check (most recent first).
        const RECENT_FUNCTIONS: usize = 8;
        let mut recent = [u64::MAX; RECENT_FUNCTIONS];
        for params in nodes {
            match params {
                NodeParams::Kernel { function, .. } if recent.contains(function) => {}
                NodeParams::Kernel { function, .. } => {
                    self.function(*function)?;
                    recent.rotate_right(1);
                    recent[0] = *function;
                }
                other => {
                    self.graph_node_op(other)?;
                }
            }
        }
        Ok(())
    }

    fn graph_kernel_params(&self, function: u64, grid: [u32; 3], block: [u32; 3], shared_mem: u32, args: &[u8]) -> Result<NodeParams, Failure> {
        if grid.contains(&0) || block.contains(&0) {
            return Err(Failure::new(Status::INVALID_CONFIGURATION, format!("kernel node grid {grid:?} block {block:?}")));
        }
        let params = NodeParams::Kernel { function, config: LaunchConfig { grid, block, shared_mem }, args: Arc::from(args) };
        self.graph_node_op(&params)?;
        Ok(params)
    }

    pub(super) fn graph_node_params(&self, req: &wire::GraphAddNode<'_>) -> Result<NodeParams, Failure> {
        let params = match req.kind {
            GraphNodeKind::Kernel => return self.graph_kernel_params(req.function, req.grid, req.block, req.shared_mem, req.args.0),
            GraphNodeKind::Memset => {
                let pattern = match req.element_size {
                    1 => MemsetPattern::U8(req.value as u8),
                    2 => MemsetPattern::U16(req.value as u16),
                    4 => MemsetPattern::U32(req.value),
                    n => return Err(invalid(format!("memset node element size {n} (1, 2 or 4)"))),
                };
                if req.width == 0 || req.height == 0 {
                    return Err(invalid(format!("memset node of {} x {} elements", req.width, req.height)));
                }
                let pitch = if req.height == 1 { req.width * pattern.elem_size() } else { req.pitch };
                if req.width.checked_mul(pattern.elem_size()).is_none_or(|row| row > pitch) {
                    return Err(invalid(format!("memset node rows of {} elements are wider than the pitch {pitch}", req.width)));
                }
                let fill = PitchedFill { ptr: DevicePtr(req.dst), pitch, slice_pitch: 0, width: req.width, height: req.height, depth: 1 };
                NodeParams::Memset { fill, pattern }
            }
            GraphNodeKind::Memcpy => {
                if req.width == 0 {
                    return Err(invalid("memcpy node of 0 bytes"));
                }
                NodeParams::Memcpy { dst: req.dst, src: req.src, len: req.width }
            }
            GraphNodeKind::Host => NodeParams::Host { token: req.host_token },
            GraphNodeKind::Empty => NodeParams::Empty,
            kind @ (GraphNodeKind::Graph
            | GraphNodeKind::WaitEvent
            | GraphNodeKind::EventRecord
            | GraphNodeKind::MemAlloc
            | GraphNodeKind::MemFree
            | GraphNodeKind::BatchMemOp) => return Err(invalid(format!("{kind:?} nodes are added with their own message"))),
        };
        self.graph_node_op(&params)?;
        Ok(params)
    }

    /// A node of `graph`, or `INVALID_VALUE` (HIP's answer for a node of another graph).
    pub(super) fn graph_member(&self, graph: u64, node: u64) -> Result<(), Failure> {
        match self.graphs.nodes.get(node) {
            Ok(n) if n.graph == graph => Ok(()),
            Ok(_) => Err(invalid(format!("node {node:#x} belongs to another graph"))),
            Err(_) => Err(invalid(format!("{node:#x} is not a graph node of this session"))),
        }
    }

    fn graph_edge_pairs(&self, req: &wire::GraphEdges<'_>) -> Result<Vec<(u64, u64)>, Failure> {
        if req.from.0.len() != req.to.0.len() {
            return Err(invalid(format!("{} edge sources but {} targets", req.from.0.len(), req.to.0.len())));
        }
        self.graphs.graphs.get(req.graph).map_err(unknown)?;
        let pairs: Vec<(u64, u64)> = handles(req.from.0).zip(handles(req.to.0)).collect();
        for &(from, to) in &pairs {
            self.graph_member(req.graph, from)?;
            self.graph_member(req.graph, to)?;
        }
        Ok(pairs)
    }

    /// Adds a checked node to `graph` after `dependencies`.
    pub(super) fn graph_insert_node(&mut self, graph: u64, dependencies: &[U64], params: NodeParams) -> Result<wire::GraphNodeRef, Failure> {
        let g = self.graphs.graphs.get(graph).map_err(unknown)?;
        if g.nodes.len() >= MAX_GRAPH_NODES {
            return Err(Failure::new(Status::OUT_OF_MEMORY, format!("a graph holds at most {MAX_GRAPH_NODES} nodes")));
        }
        if g.edges.len() + dependencies.len() > MAX_GRAPH_EDGES {
            return Err(Failure::new(Status::OUT_OF_MEMORY, format!("a graph holds at most {MAX_GRAPH_EDGES} edges")));
        }
        let dependencies: Vec<u64> = handles(dependencies).collect();
        let mut seen = HashSet::with_capacity(dependencies.len());
        for &dep in &dependencies {
            self.graph_member(graph, dep)?;
            if !seen.insert(dep) {
                return Err(invalid(format!("dependency {dep:#x} is listed twice")));
            }
        }
        self.graphs.nodes.check_capacity()?;
        let node = self.graphs.nodes.insert(Node { graph, params });
        let g = self.graphs.graphs.get_mut(graph).map_err(unknown)?;
        g.nodes.push(node);
        g.edges.extend(dependencies.into_iter().map(|dep| (dep, node)));
        Ok(wire::GraphNodeRef { node })
    }

    /// Frees every executable graph (on `device`, or all) and, for the whole session, every
    /// graph and node.
    pub(super) fn release_graphs(&mut self, device: Option<DeviceIndex>) {
        let on_device = |d: DeviceIndex| device.is_none_or(|want| want == d);
        for (_, exec) in self.graphs.execs.drain_where(|e| on_device(e.device)) {
            if let Err(e) = self.backend.graph_exec_destroy(exec.exec) {
                tracing::warn!(session = self.id, %e, "destroying an executable graph during cleanup failed");
            }
        }
        self.graphs.links.forget_graph_memory(device);
        if device.is_none() {
            self.graphs.nodes.drain_where(|_| true);
            self.graphs.graphs.drain_where(|_| true);
            self.graphs.links = Default::default();
        }
    }
}

impl GraphHandler for Session {
    fn graph_create(&mut self, _cx: &mut CallCx, req: wire::GraphCreate) -> Result<wire::GraphRef, Failure> {
        if req.flags != 0 {
            return Err(invalid(format!("hipGraphCreate flags {:#x} (must be 0)", req.flags)));
        }
        self.graphs.graphs.check_capacity()?;
        Ok(wire::GraphRef { graph: self.graphs.graphs.insert(Graph::default()) })
    }

    fn graph_destroy(&mut self, _cx: &mut CallCx, req: wire::GraphRef) -> Result<wire::Empty, Failure> {
        self.graphs.graphs.get(req.graph).map_err(unknown)?;
        if self.graphs.links.is_embedded(req.graph) {
            return Err(invalid(format!("graph {:#x} belongs to a child graph node (destroy the node)", req.graph)));
        }
        self.graph_remove(req.graph);
        self.blas_release_retired();
        Ok(wire::Empty {})
    }

    fn graph_add_node(&mut self, _cx: &mut CallCx, req: wire::GraphAddNode<'_>) -> Result<wire::GraphNodeRef, Failure> {
        self.graphs.graphs.get(req.graph).map_err(unknown)?;
        let params = self.graph_node_params(&req)?;
        self.graph_insert_node(req.graph, req.dependencies.0, params)
    }

    fn graph_add_copy_node(&mut self, _cx: &mut CallCx, req: wire::GraphAddCopyNode<'_>) -> Result<wire::GraphNodeRef, Failure> {
        self.graphs.graphs.get(req.graph).map_err(unknown)?;
        let copy = wire::Copy3D { copy: req.copy, stream: 0, sync: false };
        let params = NodeParams::Copy3D(Box::new(copy));
        self.graph_node_op(&params)?;
        self.graph_insert_node(req.graph, req.dependencies.0, params)
    }

    fn graph_add_dependencies(&mut self, _cx: &mut CallCx, req: wire::GraphEdges<'_>) -> Result<wire::Empty, Failure> {
        let pairs = self.graph_edge_pairs(&req)?;
        let graph = self.graphs.graphs.get_mut(req.graph).map_err(unknown)?;
        if graph.edges.len() + pairs.len() > MAX_GRAPH_EDGES {
            return Err(Failure::new(Status::OUT_OF_MEMORY, format!("a graph holds at most {MAX_GRAPH_EDGES} edges")));
        }
        // An edge already there (or twice in the request), a self edge or one that closes a
        // cycle is refused, all or none: checked in one pass over the graph, whatever the
        // number of edges.
        let mut present: HashSet<(u64, u64)> = graph.edges.iter().copied().collect();
        if let Some((from, to)) = pairs.iter().find(|&&(from, to)| from == to || !present.insert((from, to))) {
            return Err(invalid(format!("edge {from:#x} -> {to:#x} already exists or joins a node to itself")));
        }
        let before = graph.edges.len();
        graph.edges.extend_from_slice(&pairs);
        if graph.topological_order().is_none() {
            graph.edges.truncate(before);
            return Err(invalid("the new edges would make a cycle"));
        }
        Ok(wire::Empty {})
    }

    fn graph_remove_dependencies(&mut self, _cx: &mut CallCx, req: wire::GraphEdges<'_>) -> Result<wire::Empty, Failure> {
        let pairs = self.graph_edge_pairs(&req)?;
        let graph = self.graphs.graphs.get_mut(req.graph).map_err(unknown)?;
        let present: HashSet<(u64, u64)> = graph.edges.iter().copied().collect();
        if let Some((from, to)) = pairs.iter().find(|edge| !present.contains(edge)) {
            return Err(invalid(format!("there is no edge {from:#x} -> {to:#x}")));
        }
        let removed: HashSet<(u64, u64)> = pairs.into_iter().collect();
        graph.edges.retain(|edge| !removed.contains(edge));
        Ok(wire::Empty {})
    }

    fn graph_get_nodes<'a>(&'a mut self, _cx: &mut CallCx, req: wire::GraphRef) -> Result<wire::GraphNodeList<'a>, Failure> {
        let graph = self.graphs.graphs.get(req.graph).map_err(unknown)?;
        self.graphs.reply_a = graph.nodes.iter().map(|&n| U64::new(n)).collect();
        Ok(wire::GraphNodeList { nodes: proto_core::field::List(&self.graphs.reply_a) })
    }

    fn graph_get_root_nodes<'a>(&'a mut self, _cx: &mut CallCx, req: wire::GraphRef) -> Result<wire::GraphNodeList<'a>, Failure> {
        let graph = self.graphs.graphs.get(req.graph).map_err(unknown)?;
        let targets: HashSet<u64> = graph.edges.iter().map(|&(_, to)| to).collect();
        let roots = graph.nodes.iter().filter(|n| !targets.contains(n));
        self.graphs.reply_a = roots.map(|&n| U64::new(n)).collect();
        Ok(wire::GraphNodeList { nodes: proto_core::field::List(&self.graphs.reply_a) })
    }

    fn graph_get_edges<'a>(&'a mut self, _cx: &mut CallCx, req: wire::GraphRef) -> Result<wire::GraphEdgeList<'a>, Failure> {
        let graph = self.graphs.graphs.get(req.graph).map_err(unknown)?;
        self.graphs.reply_a = graph.edges.iter().map(|&(from, _)| U64::new(from)).collect();
        self.graphs.reply_b = graph.edges.iter().map(|&(_, to)| U64::new(to)).collect();
        Ok(wire::GraphEdgeList { from: proto_core::field::List(&self.graphs.reply_a), to: proto_core::field::List(&self.graphs.reply_b) })
    }

    fn graph_node_neighbours<'a>(&'a mut self, _cx: &mut CallCx, req: wire::GraphNodeNeighbours) -> Result<wire::GraphNodeList<'a>, Failure> {
        let node = self.graphs.nodes.get(req.node).map_err(|_| invalid(format!("{:#x} is not a graph node", req.node)))?;
        let graph = self.graphs.graphs.get(node.graph).map_err(unknown)?;
        let neighbours = graph.edges.iter().filter_map(|&(from, to)| match req.dependents {
            true => (from == req.node).then_some(to),
            false => (to == req.node).then_some(from),
        });
        self.graphs.reply_a = neighbours.map(U64::new).collect();
        Ok(wire::GraphNodeList { nodes: proto_core::field::List(&self.graphs.reply_a) })
    }

    fn stream_begin_capture(&mut self, _cx: &mut CallCx, req: wire::StreamBeginCapture<'_>) -> Result<wire::Empty, Failure> {
        self.stream_begin_capture_request(req)
    }

    fn stream_end_capture(&mut self, _cx: &mut CallCx, req: wire::StreamEndCapture) -> Result<wire::GraphRef, Failure> {
        self.stream_end_capture_request(req)
    }

    fn stream_capture_query<'a>(&'a mut self, _cx: &mut CallCx, req: wire::StreamCaptureQuery) -> Result<wire::CaptureInfo<'a>, Failure> {
        self.stream_capture_query_request(req)
    }

    fn stream_update_capture_dependencies(
        &mut self,
        _cx: &mut CallCx,
        req: wire::StreamUpdateCaptureDependencies<'_>,
    ) -> Result<wire::Empty, Failure> {
        self.stream_update_capture_dependencies_request(req)
    }

    fn capture_check(&mut self, _cx: &mut CallCx, req: wire::CaptureCheck) -> Result<wire::Empty, Failure> {
        self.capture_check_request(req)
    }

    fn graph_node_get_type(&mut self, _cx: &mut CallCx, req: wire::GraphNodeRef) -> Result<wire::GraphNodeType, Failure> {
        let node = self.graphs.nodes.get(req.node).map_err(|_| invalid(format!("{:#x} is not a graph node", req.node)))?;
        Ok(wire::GraphNodeType { kind: node.params.kind() })
    }

    fn graph_kernel_node_get_params<'a>(&'a mut self, _cx: &mut CallCx, req: wire::GraphNodeRef) -> Result<wire::GraphKernelParams<'a>, Failure> {
        let node = self.graphs.nodes.get(req.node).map_err(|_| invalid(format!("{:#x} is not a graph node", req.node)))?;
        let NodeParams::Kernel { function, config, args } = &node.params else {
            return Err(invalid(format!("node {:#x} is not a kernel node", req.node)));
        };
        let (function, config) = (*function, *config);
        self.graphs.reply_args = Arc::clone(args);
        let args = proto_core::field::Bytes(&self.graphs.reply_args[..]);
        Ok(wire::GraphKernelParams { function, grid: config.grid, block: config.block, shared_mem: config.shared_mem, args })
    }

    fn graph_kernel_node_set_params(&mut self, _cx: &mut CallCx, req: wire::GraphKernelSetParams<'_>) -> Result<wire::Empty, Failure> {
        let node = self.graphs.nodes.get(req.node).map_err(|_| invalid(format!("{:#x} is not a graph node", req.node)))?;
        if !matches!(node.params, NodeParams::Kernel { .. }) {
            return Err(invalid(format!("node {:#x} is not a kernel node", req.node)));
        }
        let params = self.graph_kernel_params(req.function, req.grid, req.block, req.shared_mem, req.args.0)?;
        self.graphs.nodes.get_mut(req.node)?.params = params;
        Ok(wire::Empty {})
    }

    fn graph_instantiate(&mut self, _cx: &mut CallCx, req: wire::GraphInstantiate) -> Result<wire::GraphExecRef, Failure> {
        // hipGraphInstantiateFlagAutoFreeOnLaunch (1), Upload (2), DeviceLaunch (4),
        // UseNodePriority (8): accepted; a replayed list has nothing they change.
        if req.flags & !0xf != 0 {
            return Err(invalid(format!("hipGraphInstantiate flags {:#x}", req.flags)));
        }
        self.graph_check_reinstantiation(req.graph)?;
        let layout = self.graph_launch_layout(req.graph)?;
        let GraphLayout { nodes, dependencies, positions, children } = layout;
        let mut device = None;
        let mut ops = Vec::with_capacity(nodes.len());
        for params in &nodes {
            let (on, op) = self.graph_node_op(params)?;
            device = device.or(on);
            ops.push(op);
        }
        self.graphs.execs.check_capacity()?;
        let device = device.unwrap_or(0);
        let exec = self.backend.graph_instantiate(Arc::new(GraphPlan { device, ops, dependencies: dependencies.clone() }))?;
        self.graph_note_instantiation(req.graph);
        let native = matches!(exec, ExecGraph::Native { .. });
        tracing::debug!(session = self.id, nodes = nodes.len(), native, "graph instantiated");
        let exec = Exec::new(exec, device, nodes, positions, children, dependencies, req.flags);
        Ok(wire::GraphExecRef { exec: self.graphs.execs.insert(exec) })
    }

    fn graph_launch(&mut self, _cx: &mut CallCx, req: wire::GraphLaunch) -> Result<wire::Empty, Failure> {
        let exec = self.graphs.execs.get(req.exec).map_err(unknown)?;
        // Memory freed or modules unloaded since instantiation: refused before the backend
        // sees a stale address or function.
        self.graph_launch_check(exec.enabled_nodes())?;
        let device = exec.device;
        // Each host step of this launch holds a callback slot until the client answers it.
        let host_steps = exec.nodes.iter().filter(|n| matches!(n, NodeParams::Host { .. })).count();
        for reserved in 0..host_steps {
            if let Err(e) = self.callbacks.reserve() {
                (0..reserved).for_each(|_| self.callbacks.unreserve());
                return Err(e);
            }
        }
        let launched = self.stream(req.stream, device).and_then(|stream| {
            let exec = self.graphs.execs.get(req.exec).map_err(unknown)?;
            self.note_launch();
            Ok(self.backend.graph_launch(stream, &exec.exec)?)
        });
        if launched.is_err() {
            (0..host_steps).for_each(|_| self.callbacks.unreserve());
        }
        launched.map(|()| wire::Empty {})
    }

    fn graph_exec_destroy(&mut self, _cx: &mut CallCx, req: wire::GraphExecRef) -> Result<wire::Empty, Failure> {
        let exec = self.graphs.execs.remove(req.exec).map_err(unknown)?;
        self.backend.graph_exec_destroy(exec.exec)?;
        self.blas_release_retired();
        Ok(wire::Empty {})
    }

    fn graph_clone(&mut self, _cx: &mut CallCx, req: wire::GraphRef) -> Result<wire::GraphRef, Failure> {
        Ok(wire::GraphRef { graph: self.graph_clone_deep(req.graph)? })
    }

    // Node kinds and node operations of `graph_nodes.rs`.
    fn graph_add_event_node(&mut self, _cx: &mut CallCx, req: wire::GraphAddEventNode<'_>) -> Result<wire::GraphNodeRef, Failure> {
        self.add_event_node(req)
    }

    fn graph_event_node_get_event(&mut self, _cx: &mut CallCx, req: wire::GraphEventNodeQuery) -> Result<wire::GraphNodeEvent, Failure> {
        self.event_node_get_event(req)
    }

    fn graph_event_node_set_event(&mut self, _cx: &mut CallCx, req: wire::GraphEventNodeSet) -> Result<wire::Empty, Failure> {
        self.event_node_set_event(req)
    }

    fn graph_add_child_node(&mut self, _cx: &mut CallCx, req: wire::GraphAddChildNode<'_>) -> Result<wire::GraphNodeRef, Failure> {
        self.add_child_node(req)
    }

    fn graph_child_node_get_graph(&mut self, _cx: &mut CallCx, req: wire::GraphNodeRef) -> Result<wire::GraphRef, Failure> {
        self.child_node_get_graph(req)
    }

    fn graph_destroy_node(&mut self, _cx: &mut CallCx, req: wire::GraphNodeRef) -> Result<wire::Empty, Failure> {
        self.destroy_graph_node(req)
    }

    fn graph_node_find_in_clone(&mut self, _cx: &mut CallCx, req: wire::GraphNodeFindInClone) -> Result<wire::GraphNodeRef, Failure> {
        self.find_node_in_clone(req)
    }

    fn graph_memset_node_get_params(&mut self, _cx: &mut CallCx, req: wire::GraphNodeRef) -> Result<wire::GraphMemsetParams, Failure> {
        self.memset_node_get_params(req)
    }

    fn graph_memset_node_set_params(&mut self, _cx: &mut CallCx, req: wire::GraphMemsetNodeSet) -> Result<wire::Empty, Failure> {
        self.memset_node_set_params(req)
    }

    fn graph_memcpy_node_get_params(&mut self, _cx: &mut CallCx, req: wire::GraphNodeRef) -> Result<wire::GraphCopyParams, Failure> {
        self.memcpy_node_get_params(req)
    }

    fn graph_memcpy_node_set_params(&mut self, _cx: &mut CallCx, req: wire::GraphCopyNodeSet) -> Result<wire::Empty, Failure> {
        self.memcpy_node_set_params(req)
    }

    fn graph_host_node_get_params(&mut self, _cx: &mut CallCx, req: wire::GraphNodeRef) -> Result<wire::GraphHostToken, Failure> {
        self.host_node_get_params(req)
    }

    fn graph_host_node_set_params(&mut self, _cx: &mut CallCx, req: wire::GraphHostNodeSet) -> Result<wire::Empty, Failure> {
        self.host_node_set_params(req)
    }

    fn graph_kernel_node_get_attribute(&mut self, _cx: &mut CallCx, req: wire::GraphKernelAttrQuery) -> Result<wire::GraphKernelAttrValue, Failure> {
        self.kernel_node_get_attribute(req)
    }

    fn graph_kernel_node_set_attribute(&mut self, _cx: &mut CallCx, req: wire::GraphKernelAttrSet) -> Result<wire::Empty, Failure> {
        self.kernel_node_set_attribute(req)
    }

    fn graph_kernel_node_copy_attributes(&mut self, _cx: &mut CallCx, req: wire::GraphKernelAttrCopy) -> Result<wire::Empty, Failure> {
        self.kernel_node_copy_attributes(req)
    }

    fn graph_child_node_set_params(&mut self, _cx: &mut CallCx, req: wire::GraphChildNodeSet) -> Result<wire::Empty, Failure> {
        self.child_node_set_params(req)
    }

    fn graph_add_mem_alloc_node(&mut self, _cx: &mut CallCx, req: wire::GraphAddMemAllocNode<'_>) -> Result<wire::GraphMemAllocNode, Failure> {
        self.add_mem_alloc_node(req)
    }

    fn graph_add_mem_free_node(&mut self, _cx: &mut CallCx, req: wire::GraphAddMemFreeNode<'_>) -> Result<wire::GraphNodeRef, Failure> {
        self.add_mem_free_node(req)
    }

    fn graph_mem_alloc_node_get_params(&mut self, _cx: &mut CallCx, req: wire::GraphNodeRef) -> Result<wire::GraphMemAllocParams, Failure> {
        self.mem_alloc_node_get_params(req)
    }

    fn graph_mem_free_node_get_params(&mut self, _cx: &mut CallCx, req: wire::GraphNodeRef) -> Result<wire::GraphMemFreeParams, Failure> {
        self.mem_free_node_get_params(req)
    }

    fn graph_mem_trim(&mut self, _cx: &mut CallCx, req: wire::GraphMemDevice) -> Result<wire::Empty, Failure> {
        self.graph_memory_trim(req)
    }

    fn graph_mem_attribute(&mut self, _cx: &mut CallCx, req: wire::GraphMemAttrQuery) -> Result<wire::GraphMemAttrValue, Failure> {
        self.graph_memory_attribute(req)
    }

    fn graph_add_batch_mem_op_node(&mut self, _cx: &mut CallCx, req: wire::GraphAddBatchMemOpNode<'_>) -> Result<wire::GraphNodeRef, Failure> {
        self.add_batch_mem_op_node(req)
    }

    fn graph_batch_mem_op_node_get_params<'a>(
        &'a mut self,
        _cx: &mut CallCx,
        req: wire::GraphNodeRef,
    ) -> Result<wire::GraphBatchMemOps<'a>, Failure> {
        let flags = self.batch_mem_op_node_get_params(req)?;
        Ok(wire::GraphBatchMemOps { flags, ops: proto_core::field::List(&self.graphs.reply_a) })
    }

    fn graph_batch_mem_op_node_set_params(&mut self, _cx: &mut CallCx, req: wire::GraphBatchMemOpNodeSet<'_>) -> Result<wire::Empty, Failure> {
        self.batch_mem_op_node_set_params(req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(nodes: &[u64], edges: &[(u64, u64)]) -> Graph {
        Graph { nodes: nodes.to_vec(), edges: edges.to_vec() }
    }

    #[test]
    fn order_respects_edges_and_keeps_creation_order_otherwise() {
        let g = graph(&[1, 2, 3, 4], &[(3, 1), (1, 2)]);
        assert_eq!(g.topological_order(), Some(vec![3, 4, 1, 2]));
    }

    #[test]
    fn a_cycle_has_no_order() {
        assert_eq!(graph(&[1, 2, 3], &[(1, 2), (2, 3), (3, 1)]).topological_order(), None);
    }
}
