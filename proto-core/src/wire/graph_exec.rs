//! Executable graphs after instantiation: per-node parameter updates, whole-graph updates,
//! enabling and disabling nodes, upload and flags. An executable graph names its nodes by the
//! handles of the graph it was instantiated from (as HIP does); every change is checked as
//! adding the node was, and takes effect at the next launch.

use crate::field::ArgBlob;
use crate::wire::{CopyBox, GraphNodeKind};

wire_enum! {
    /// `hipGraphExecUpdateResult`: why a whole-graph update was refused.
    pub enum GraphExecUpdateResult: u32 {
        /// `hipGraphExecUpdateSuccess`.
        Success = 0,
        /// `hipGraphExecUpdateError`: refused for another reason.
        Error = 1,
        /// `hipGraphExecUpdateErrorTopologyChanged`: nodes or edges differ.
        TopologyChanged = 2,
        /// `hipGraphExecUpdateErrorNodeTypeChanged`: a node is of another kind.
        NodeTypeChanged = 3,
        /// `hipGraphExecUpdateErrorFunctionChanged`: a kernel node's function changed.
        FunctionChanged = 4,
        /// `hipGraphExecUpdateErrorParametersChanged`: parameters that cannot change did.
        ParametersChanged = 5,
        /// `hipGraphExecUpdateErrorNotSupported`: a change this node kind cannot take.
        NotSupported = 6,
        /// `hipGraphExecUpdateErrorUnsupportedFunctionChange`: a kernel node's function
        /// moved to another device or is no longer valid.
        UnsupportedFunctionChange = 7,
    }
}

message! {
    /// `hipGraphExec{Kernel,Memset,Memcpy,Host}NodeSetParams*`, `hipGraphExecNodeSetParams`:
    /// new parameters for `node` (a node of the graph `exec` was instantiated from), with the
    /// fields of [`GraphAddNode`](crate::wire::GraphAddNode) and its checks; `kind` must be the
    /// node's kind.
    pub struct GraphExecSetNode<'a> {
        /// Executable graph handle.
        pub exec: u64,
        /// Node handle (of the original graph).
        pub node: u64,
        /// `GraphNodeKind`.
        pub kind: GraphNodeKind,
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
        /// Host: the client's name for the callback.
        pub host_token: u64,
        /// Kernel: the packed arguments.
        pub args: ArgBlob<'a>,
    }
}

message! {
    /// `hipGraphExecMemcpyNodeSetParams` between device memory and arrays: a new 3D copy
    /// (the fields of [`GraphAddCopyNode`](crate::wire::GraphAddCopyNode)) for a memcpy node.
    pub struct GraphExecSetCopyNode {
        /// Executable graph handle.
        pub exec: u64,
        /// Node handle (of the original graph).
        pub node: u64,
        /// Both sides and the box.
        pub copy: CopyBox,
    }
}

message! {
    /// `hipGraphExecUpdate`: takes every node's parameters from `graph`, whose topology must
    /// be the executable graph's; answered by [`GraphExecUpdated`].
    pub struct GraphExecUpdate {
        /// Executable graph handle.
        pub exec: u64,
        /// The graph to take the parameters from.
        pub graph: u64,
    }
}

message! {
    /// The outcome of [`GraphExecUpdate`]: anything but `Success` left the executable graph
    /// as it was (the client answers `hipErrorGraphExecUpdateFailure`).
    pub struct GraphExecUpdated {
        /// `GraphExecUpdateResult`.
        pub result: GraphExecUpdateResult,
        /// The node of `graph` that was refused, or 0.
        pub error_node: u64,
    }
}

message! {
    /// `hipGraphNodeSetEnabled`: a disabled node runs as an empty node.
    pub struct GraphNodeSetEnabled {
        /// Executable graph handle.
        pub exec: u64,
        /// Node handle (of the original graph).
        pub node: u64,
        /// Whether the node runs.
        pub enabled: bool,
    }
}

message! {
    /// A node of an executable graph (`hipGraphNodeGetEnabled`).
    pub struct GraphExecNodeRef {
        /// Executable graph handle.
        pub exec: u64,
        /// Node handle (of the original graph).
        pub node: u64,
    }
}

message! {
    /// Whether a node of an executable graph runs (`hipGraphNodeGetEnabled`).
    pub struct GraphNodeEnabled {
        /// Whether the node runs.
        pub enabled: bool,
    }
}

message! {
    /// `hipGraphUpload`: checks the executable graph as a launch would, without running it.
    pub struct GraphUpload {
        /// Executable graph handle.
        pub exec: u64,
        /// Stream (0 = null stream).
        pub stream: u64,
    }
}

message! {
    /// The flags an executable graph was instantiated with (`hipGraphExecGetFlags`).
    pub struct GraphExecFlags {
        /// `hipGraphInstantiateFlags`.
        pub flags: u64,
    }
}

message! {
    /// `hipGraphExecEventRecordNodeSetEvent` (`wait` clear) and
    /// `hipGraphExecEventWaitNodeSetEvent` (set): the event of an event node of `exec`.
    pub struct GraphExecSetEventNode {
        /// Executable graph handle.
        pub exec: u64,
        /// Node handle (of the graph `exec` was instantiated from).
        pub node: u64,
        /// The new event handle.
        pub event: u64,
        /// A wait node (else a record node).
        pub wait: bool,
    }
}

message! {
    /// `hipGraphExecChildGraphNodeSetParams`: the child graph node `node` of `exec` takes
    /// the parameters of the nodes of `child`, which must have the same nodes and edges.
    pub struct GraphExecSetChildNode {
        /// Executable graph handle.
        pub exec: u64,
        /// Node handle (a child graph node of the graph `exec` was instantiated from).
        pub node: u64,
        /// Graph handle: the new child graph.
        pub child: u64,
    }
}

message! {
    /// `hipGraphExecBatchMemOpNodeSetParams`: the operations of a batch memory operation
    /// node of `exec`, as [`GraphAddBatchMemOpNode`](crate::wire::GraphAddBatchMemOpNode)
    /// has them.
    pub struct GraphExecSetBatchMemOpNode<'a> {
        /// Executable graph handle.
        pub exec: u64,
        /// Node handle (of the graph `exec` was instantiated from).
        pub node: u64,
        /// `hipBatchMemOpNodeParams::flags` (0).
        pub flags: u32,
        /// The operations, four words each.
        pub ops: crate::field::List<
            'a,
            zerocopy::byteorder::little_endian::U64,
            { crate::wire::MAX_GRAPH_BATCH_MEM_OPS * crate::wire::GRAPH_BATCH_MEM_OP_WORDS },
        >,
    }
}
