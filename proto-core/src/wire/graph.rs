//! Graphs: graphs, their nodes and executable graphs are session objects on the worker, named
//! by handle. A graph is built node by node ([`GraphAddNode`] and its kinds), instantiated
//! once ([`GraphInstantiate`]) and replayed with one [`GraphLaunch`] message per launch.
//! Node handles are unique within the session (a node names its graph).

use crate::field::{ArgBlob, List};
use crate::wire::CopyBox;
use zerocopy::byteorder::little_endian::U64;

/// Most nodes one graph may hold (and one node list carries).
pub const MAX_GRAPH_NODES: usize = 16 * 1024;
/// Most dependency edges one graph may hold (and one edge list carries).
pub const MAX_GRAPH_EDGES: usize = 16 * 1024;

wire_enum! {
    /// A node's kind (`hipGraphNodeType`).
    pub enum GraphNodeKind: u32 {
        /// `hipGraphNodeTypeKernel`.
        Kernel = 0,
        /// `hipGraphNodeTypeMemcpy` (device to device).
        Memcpy = 1,
        /// `hipGraphNodeTypeMemset`.
        Memset = 2,
        /// `hipGraphNodeTypeHost`: the client runs a callback (the callback channel).
        Host = 3,
        /// `hipGraphNodeTypeGraph`: a child graph (a clone the node owns).
        Graph = 4,
        /// `hipGraphNodeTypeEmpty`.
        Empty = 5,
        /// `hipGraphNodeTypeWaitEvent`.
        WaitEvent = 6,
        /// `hipGraphNodeTypeEventRecord`.
        EventRecord = 7,
        /// `hipGraphNodeTypeMemAlloc`.
        MemAlloc = 10,
        /// `hipGraphNodeTypeMemFree`.
        MemFree = 11,
        /// `hipGraphNodeTypeBatchMemOp`: stream memory operations (waits and writes of words).
        BatchMemOp = 14,
    }
}

message! {
    /// `hipGraphCreate`; answered by [`GraphRef`].
    pub struct GraphCreate {
        /// Flags (must be 0, as HIP requires).
        pub flags: u32,
    }
}

message! {
    /// A request or reply naming one graph.
    pub struct GraphRef {
        /// Graph handle.
        pub graph: u64,
    }
}

message! {
    /// Adds one node to `graph` after `dependencies` (nodes of the same graph); answered by
    /// [`GraphNodeRef`]. The parameters used are those of `kind`: a kernel node uses
    /// `function`, `grid`, `block`, `shared_mem` and `args`; a memset node `dst`, `value`,
    /// `element_size`, `width`, `height` and `pitch`; a memcpy node `dst`, `src` and `width`
    /// (bytes); a host node `host_token`; an empty node none.
    pub struct GraphAddNode<'a> {
        /// Graph handle.
        pub graph: u64,
        /// `GraphNodeKind`.
        pub kind: GraphNodeKind,
        /// Nodes the new node depends on.
        pub dependencies: List<'a, U64, MAX_GRAPH_NODES>,
        /// Kernel: function handle.
        pub function: u64,
        /// Kernel: grid dimensions (blocks).
        pub grid: [u32; 3],
        /// Kernel: block dimensions (threads).
        pub block: [u32; 3],
        /// Kernel: dynamic shared memory bytes.
        pub shared_mem: u32,
        /// Memset, memcpy: destination device address.
        pub dst: u64,
        /// Memcpy: source device address.
        pub src: u64,
        /// Memset: the value (its low `element_size` bytes).
        pub value: u32,
        /// Memset: bytes per element (1, 2 or 4).
        pub element_size: u32,
        /// Memset: elements per row; memcpy: bytes.
        pub width: u64,
        /// Memset: rows.
        pub height: u64,
        /// Memset: bytes between rows.
        pub pitch: u64,
        /// Host: the client's name for the callback, sent back on the callback channel at
        /// every launch.
        pub host_token: u64,
        /// Kernel: the packed arguments.
        pub args: ArgBlob<'a>,
    }
}

message! {
    /// A request or reply naming one node.
    pub struct GraphNodeRef {
        /// Node handle.
        pub node: u64,
    }
}

message! {
    /// A node's kind (`hipGraphNodeGetType`).
    pub struct GraphNodeType {
        /// `GraphNodeKind`.
        pub kind: GraphNodeKind,
    }
}

message! {
    /// `hipGraphAddDependencies` / `hipGraphRemoveDependencies`: edges `from[i] → to[i]`
    /// of `graph`, all or none.
    pub struct GraphEdges<'a> {
        /// Graph handle.
        pub graph: u64,
        /// Edge sources.
        pub from: List<'a, U64, MAX_GRAPH_EDGES>,
        /// Edge targets (as many as sources).
        pub to: List<'a, U64, MAX_GRAPH_EDGES>,
    }
}

message! {
    /// A graph's edges, in the order they were added (`hipGraphGetEdges`).
    pub struct GraphEdgeList<'a> {
        /// Edge sources.
        pub from: List<'a, U64, MAX_GRAPH_EDGES>,
        /// Edge targets.
        pub to: List<'a, U64, MAX_GRAPH_EDGES>,
    }
}

message! {
    /// A list of nodes (`hipGraphGetNodes`, `hipGraphGetRootNodes`: in creation order).
    pub struct GraphNodeList<'a> {
        /// Node handles.
        pub nodes: List<'a, U64, MAX_GRAPH_NODES>,
    }
}

message! {
    /// A kernel node's parameters (`hipGraphKernelNodeGetParams`).
    pub struct GraphKernelParams<'a> {
        /// Function handle.
        pub function: u64,
        /// Grid dimensions (blocks).
        pub grid: [u32; 3],
        /// Block dimensions (threads).
        pub block: [u32; 3],
        /// Dynamic shared memory bytes.
        pub shared_mem: u32,
        /// The packed arguments.
        pub args: ArgBlob<'a>,
    }
}

message! {
    /// `hipGraphKernelNodeSetParams`: replaces a kernel node's parameters.
    pub struct GraphKernelSetParams<'a> {
        /// Node handle.
        pub node: u64,
        /// Function handle.
        pub function: u64,
        /// Grid dimensions (blocks).
        pub grid: [u32; 3],
        /// Block dimensions (threads).
        pub block: [u32; 3],
        /// Dynamic shared memory bytes.
        pub shared_mem: u32,
        /// The packed arguments.
        pub args: ArgBlob<'a>,
    }
}

message! {
    /// `hipGraphInstantiate` / `hipGraphInstantiateWithFlags`; answered by [`GraphExecRef`].
    pub struct GraphInstantiate {
        /// Graph handle.
        pub graph: u64,
        /// `hipGraphInstantiateFlags`.
        pub flags: u64,
    }
}

message! {
    /// A request or reply naming one executable graph.
    pub struct GraphExecRef {
        /// Executable graph handle.
        pub exec: u64,
    }
}

message! {
    /// `hipGraphLaunch`: the whole executable graph queued on `stream`, one message.
    pub struct GraphLaunch {
        /// Executable graph handle.
        pub exec: u64,
        /// Stream (0 = null stream).
        pub stream: u64,
    }
}

message! {
    /// `hipGraphAddMemcpyNode` between device memory and arrays: a 3D copy (the fields of
    /// [`Copy3D`](crate::wire::Copy3D) without stream) added to `graph` after `dependencies`;
    /// answered by [`GraphNodeRef`].
    pub struct GraphAddCopyNode<'a> {
        /// Graph handle.
        pub graph: u64,
        /// Nodes the new node depends on.
        pub dependencies: List<'a, U64, MAX_GRAPH_NODES>,
        /// Both sides and the box.
        pub copy: CopyBox,
    }
}

message! {
    /// `hipGraphNodeGetDependencies` / `hipGraphNodeGetDependentNodes`; answered by
    /// [`GraphNodeList`] (in the order the edges were added).
    pub struct GraphNodeNeighbours {
        /// Node handle.
        pub node: u64,
        /// The nodes that depend on `node` rather than those it depends on.
        pub dependents: bool,
    }
}
