//! Graph node kinds beyond the first family: event record and wait nodes, child graph nodes
//! (the child is cloned into the node, which owns the copy), and whole-node operations
//! (destroying a node, finding a node's counterpart in a clone).

use super::graph::MAX_GRAPH_NODES;
use crate::field::List;
use crate::wire::CopyBox;
use zerocopy::byteorder::little_endian::U64;

message! {
    /// `hipGraphAddEventRecordNode` / `hipGraphAddEventWaitNode`: adds a node that records
    /// `event` into, or makes the graph wait for `event` on, the launch stream; answered by
    /// [`GraphNodeRef`](super::GraphNodeRef).
    pub struct GraphAddEventNode<'a> {
        /// Graph handle.
        pub graph: u64,
        /// Nodes the new node depends on.
        pub dependencies: List<'a, U64, MAX_GRAPH_NODES>,
        /// Event handle.
        pub event: u64,
        /// A wait node rather than a record node.
        pub wait: bool,
    }
}

message! {
    /// `hipGraphEventRecordNodeGetEvent` / `hipGraphEventWaitNodeGetEvent`; answered by
    /// [`GraphNodeEvent`].
    pub struct GraphEventNodeQuery {
        /// Node handle.
        pub node: u64,
        /// The node must be a wait node rather than a record node.
        pub wait: bool,
    }
}

message! {
    /// The event of an event record or wait node.
    pub struct GraphNodeEvent {
        /// Event handle.
        pub event: u64,
    }
}

message! {
    /// `hipGraphEventRecordNodeSetEvent` / `hipGraphEventWaitNodeSetEvent`.
    pub struct GraphEventNodeSet {
        /// Node handle.
        pub node: u64,
        /// The new event handle.
        pub event: u64,
        /// The node must be a wait node rather than a record node.
        pub wait: bool,
    }
}

message! {
    /// `hipGraphAddChildGraphNode`: adds a node that runs a clone of `child` (taken now; later
    /// changes to `child` do not reach the node); answered by
    /// [`GraphNodeRef`](super::GraphNodeRef).
    pub struct GraphAddChildNode<'a> {
        /// Graph handle.
        pub graph: u64,
        /// Nodes the new node depends on.
        pub dependencies: List<'a, U64, MAX_GRAPH_NODES>,
        /// The graph to clone into the node.
        pub child: u64,
    }
}

message! {
    /// `hipGraphNodeFindInClone`: the node of `clone` made from `original`; answered by
    /// [`GraphNodeRef`](super::GraphNodeRef).
    pub struct GraphNodeFindInClone {
        /// A node of the graph `clone` was cloned from.
        pub original: u64,
        /// The cloned graph.
        pub clone: u64,
    }
}

message! {
    /// A memset node's parameters (`hipGraphMemsetNodeGetParams`), as `hipMemsetParams` has
    /// them.
    pub struct GraphMemsetParams {
        /// Destination device address.
        pub dst: u64,
        /// The value (its low `element_size` bytes).
        pub value: u32,
        /// Bytes per element (1, 2 or 4).
        pub element_size: u32,
        /// Elements per row.
        pub width: u64,
        /// Rows.
        pub height: u64,
        /// Bytes between rows.
        pub pitch: u64,
    }
}

message! {
    /// `hipGraphMemsetNodeSetParams`: replaces a memset node's parameters.
    pub struct GraphMemsetNodeSet {
        /// Node handle.
        pub node: u64,
        /// Destination device address.
        pub dst: u64,
        /// The value (its low `element_size` bytes).
        pub value: u32,
        /// Bytes per element (1, 2 or 4).
        pub element_size: u32,
        /// Elements per row.
        pub width: u64,
        /// Rows.
        pub height: u64,
        /// Bytes between rows.
        pub pitch: u64,
    }
}

message! {
    /// A memcpy node's copy (`hipGraphMemcpyNodeGetParams`): the fields of
    /// [`Copy3D`](crate::wire::Copy3D) without stream; a 1D copy is one row of pitched memory.
    pub struct GraphCopyParams {
        /// Both sides and the box.
        pub copy: CopyBox,
    }
}

message! {
    /// `hipGraphMemcpyNodeSetParams` and its 1D, symbol and driver forms: replaces a memcpy
    /// node's copy (the fields of [`GraphCopyParams`]).
    pub struct GraphCopyNodeSet {
        /// Node handle.
        pub node: u64,
        /// Both sides and the box.
        pub copy: CopyBox,
    }
}

message! {
    /// A host node's callback, as the client named it (`hipGraphHostNodeGetParams`).
    pub struct GraphHostToken {
        /// The client's name for the callback.
        pub token: u64,
    }
}

message! {
    /// `hipGraphHostNodeSetParams`: the node runs another callback from now on.
    pub struct GraphHostNodeSet {
        /// Node handle.
        pub node: u64,
        /// The client's name for the new callback.
        pub token: u64,
    }
}

message! {
    /// `hipGraphKernelNodeGetAttribute`; answered by [`GraphKernelAttrValue`].
    pub struct GraphKernelAttrQuery {
        /// Node handle.
        pub node: u64,
        /// `hipLaunchAttributeID`.
        pub attr: u32,
    }
}

message! {
    /// A kernel node's launch attribute value (`hipLaunchAttributeValue`, the member `attr`
    /// names).
    pub struct GraphKernelAttrValue {
        /// Access policy window: base address.
        pub base_ptr: u64,
        /// Access policy window: bytes.
        pub num_bytes: u64,
        /// Access policy window: hit ratio (0 to 1).
        pub hit_ratio: f32,
        /// Access policy window: `hipAccessProperty` of hits.
        pub hit_prop: u32,
        /// Access policy window: `hipAccessProperty` of misses.
        pub miss_prop: u32,
        /// Cooperative (0 or not) or priority, by `attr`.
        pub value: i32,
    }
}

message! {
    /// `hipGraphKernelNodeSetAttribute`: a kernel node holds one launch attribute at a time.
    pub struct GraphKernelAttrSet {
        /// Node handle.
        pub node: u64,
        /// `hipLaunchAttributeID`.
        pub attr: u32,
        /// Access policy window: base address.
        pub base_ptr: u64,
        /// Access policy window: bytes.
        pub num_bytes: u64,
        /// Access policy window: hit ratio (0 to 1).
        pub hit_ratio: f32,
        /// Access policy window: `hipAccessProperty` of hits.
        pub hit_prop: u32,
        /// Access policy window: `hipAccessProperty` of misses.
        pub miss_prop: u32,
        /// Cooperative (0 or not) or priority, by `attr`.
        pub value: i32,
    }
}

message! {
    /// `hipGraphKernelNodeCopyAttributes`: `dst` takes `src`'s launch attribute.
    pub struct GraphKernelAttrCopy {
        /// The kernel node copied from.
        pub src: u64,
        /// The kernel node copied to.
        pub dst: u64,
    }
}

message! {
    /// `hipGraphNodeSetParams` of a child graph node: the node's graph takes the parameters
    /// of `child`'s nodes, node for node (same number of nodes, same kinds, in creation order).
    pub struct GraphChildNodeSet {
        /// Node handle.
        pub node: u64,
        /// The graph whose node parameters are copied.
        pub child: u64,
    }
}

message! {
    /// `hipGraphAddMemAllocNode`: allocates `size` bytes on `device` now (the address is known
    /// when the node is added, as in HIP and CUDA); answered by [`GraphMemAllocNode`].
    pub struct GraphAddMemAllocNode<'a> {
        /// Graph handle.
        pub graph: u64,
        /// Nodes the new node depends on.
        pub dependencies: List<'a, U64, MAX_GRAPH_NODES>,
        /// Device ordinal (`poolProps.location.id`).
        pub device: u32,
        /// Bytes.
        pub size: u64,
    }
}

message! {
    /// A new memory allocation node and its memory.
    pub struct GraphMemAllocNode {
        /// Node handle.
        pub node: u64,
        /// Device address of the allocation.
        pub ptr: u64,
    }
}

message! {
    /// `hipGraphAddMemFreeNode` / `hipDrvGraphAddMemFreeNode`; answered by
    /// [`GraphNodeRef`](super::GraphNodeRef).
    pub struct GraphAddMemFreeNode<'a> {
        /// Graph handle.
        pub graph: u64,
        /// Nodes the new node depends on.
        pub dependencies: List<'a, U64, MAX_GRAPH_NODES>,
        /// Device address to free.
        pub ptr: u64,
        /// Any live allocation (the driver form) rather than only memory of an allocation node
        /// no other free node frees.
        pub any_memory: bool,
    }
}

message! {
    /// A memory allocation node's parameters (`hipGraphMemAllocNodeGetParams`).
    pub struct GraphMemAllocParams {
        /// Device ordinal.
        pub device: u32,
        /// Bytes.
        pub size: u64,
        /// Device address of the allocation.
        pub ptr: u64,
    }
}

message! {
    /// A memory free node's address (`hipGraphMemFreeNodeGetParams`).
    pub struct GraphMemFreeParams {
        /// Device address it frees.
        pub ptr: u64,
    }
}

message! {
    /// `hipDeviceGraphMemTrim`: names one device.
    pub struct GraphMemDevice {
        /// Device ordinal.
        pub device: u32,
    }
}

message! {
    /// `hipDeviceGetGraphMemAttribute` / `hipDeviceSetGraphMemAttribute` (`reset`: the high
    /// watermark `attr` names goes back to 0); answered by [`GraphMemAttrValue`].
    pub struct GraphMemAttrQuery {
        /// Device ordinal.
        pub device: u32,
        /// `hipGraphMemAttributeType`.
        pub attr: u32,
        /// Reset the watermark rather than read it.
        pub reset: bool,
    }
}

message! {
    /// A graph memory attribute's value, in bytes.
    pub struct GraphMemAttrValue {
        /// Bytes.
        pub value: u64,
    }
}

/// Most operations one batch memory operation node holds (as `hipStreamBatchMemOp`).
pub const MAX_GRAPH_BATCH_MEM_OPS: usize = 256;
/// Words per operation in a batch memory operation list.
pub const GRAPH_BATCH_MEM_OP_WORDS: usize = 4;

message! {
    /// `hipGraphAddBatchMemOpNode`; answered by [`GraphNodeRef`](super::GraphNodeRef). Each
    /// operation is [`GRAPH_BATCH_MEM_OP_WORDS`] words of `ops`: the `hipStreamBatchMemOpType`
    /// (low 32 bits) and its flags (high 32 bits), the device address, the value, the mask.
    pub struct GraphAddBatchMemOpNode<'a> {
        /// Graph handle.
        pub graph: u64,
        /// Nodes the new node depends on.
        pub dependencies: List<'a, U64, MAX_GRAPH_NODES>,
        /// `hipBatchMemOpNodeParams::flags` (0).
        pub flags: u32,
        /// The operations, four words each.
        pub ops: List<'a, U64, { MAX_GRAPH_BATCH_MEM_OPS * GRAPH_BATCH_MEM_OP_WORDS }>,
    }
}

message! {
    /// A batch memory operation node's operations (`hipGraphBatchMemOpNodeGetParams`), as
    /// [`GraphAddBatchMemOpNode`] has them.
    pub struct GraphBatchMemOps<'a> {
        /// `hipBatchMemOpNodeParams::flags`.
        pub flags: u32,
        /// The operations, four words each.
        pub ops: List<'a, U64, { MAX_GRAPH_BATCH_MEM_OPS * GRAPH_BATCH_MEM_OP_WORDS }>,
    }
}

message! {
    /// `hipGraphBatchMemOpNodeSetParams`: replaces a batch memory operation node's operations.
    pub struct GraphBatchMemOpNodeSet<'a> {
        /// Node handle.
        pub node: u64,
        /// `hipBatchMemOpNodeParams::flags` (0).
        pub flags: u32,
        /// The operations, four words each.
        pub ops: List<'a, U64, { MAX_GRAPH_BATCH_MEM_OPS * GRAPH_BATCH_MEM_OP_WORDS }>,
    }
}
