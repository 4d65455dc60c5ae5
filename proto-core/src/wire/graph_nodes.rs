//! Graph node kinds beyond the first family: event record and wait nodes, child graph nodes
//! (the child is cloned into the node, which owns the copy), and whole-node operations
//! (destroying a node, finding a node's counterpart in a clone).

use super::graph::MAX_GRAPH_NODES;
use crate::field::List;
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
