//! Graph node kinds beyond the first family: event record and wait nodes, child graph nodes,
//! and operations on whole nodes (`hipGraphDestroyNode`, `hipGraphNodeFindInClone`). The
//! nodes live on the worker (see `worker/src/session/graph_nodes.rs`); argument checks and
//! error codes follow ROCm's `hip_graph.cpp`.

use super::graph::{as_handle, dependencies, id, invalid, kernel_nodes};
use crate::abi::*;
use crate::conn::CallError;
use crate::handle::Handle;
use crate::remote::with_conn;
use proto_core::wire;
use proto_core::Calls;

/// Adds an event record or wait node.
///
/// # Safety
/// As `hipGraphAddEventRecordNode`: `deps` holds `count` handles.
unsafe fn add_event_node(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    count: usize,
    event: hipEvent_t,
    wait: bool,
) -> Result<(), CallError> {
    non_null!(out);
    non_null!(graph);
    non_null!(event);
    // SAFETY: forwarded caller contract.
    let deps = unsafe { dependencies(deps, count)? };
    let req = wire::GraphAddEventNode { graph: id(graph), dependencies: proto_core::field::List(&deps), event: event.id(), wait };
    let node = with_conn(|c| c.graph_add_event_node(req))?.node;
    try_out!(out, as_handle(node));
    Ok(())
}

fn get_event(node: hipGraphNode_t, out: *mut hipEvent_t, wait: bool) -> Result<(), CallError> {
    non_null!(node);
    non_null!(out);
    let event = with_conn(|c| c.graph_event_node_get_event(wire::GraphEventNodeQuery { node: id(node), wait }))?.event;
    try_out!(out, hipEvent_t::from_id(event)?);
    Ok(())
}

fn set_event(node: hipGraphNode_t, event: hipEvent_t, wait: bool) -> Result<(), CallError> {
    non_null!(node);
    non_null!(event);
    with_conn(|c| c.graph_event_node_set_event(wire::GraphEventNodeSet { node: id(node), event: event.id(), wait }))?;
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddEventRecordNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    event: hipEvent_t,
) -> hipError_t {
    // SAFETY: HIP's contract for the dependency array.
    hip_boundary!("hipGraphAddEventRecordNode", { unsafe { add_event_node(pGraphNode, graph, pDependencies, numDependencies, event, false) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddEventWaitNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    event: hipEvent_t,
) -> hipError_t {
    // SAFETY: HIP's contract for the dependency array.
    hip_boundary!("hipGraphAddEventWaitNode", { unsafe { add_event_node(pGraphNode, graph, pDependencies, numDependencies, event, true) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphEventRecordNodeGetEvent(node: hipGraphNode_t, event_out: *mut hipEvent_t) -> hipError_t {
    hip_boundary!("hipGraphEventRecordNodeGetEvent", { get_event(node, event_out, false) })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphEventRecordNodeSetEvent(node: hipGraphNode_t, event: hipEvent_t) -> hipError_t {
    hip_boundary!("hipGraphEventRecordNodeSetEvent", { set_event(node, event, false) })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphEventWaitNodeGetEvent(node: hipGraphNode_t, event_out: *mut hipEvent_t) -> hipError_t {
    hip_boundary!("hipGraphEventWaitNodeGetEvent", { get_event(node, event_out, true) })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphEventWaitNodeSetEvent(node: hipGraphNode_t, event: hipEvent_t) -> hipError_t {
    hip_boundary!("hipGraphEventWaitNodeSetEvent", { set_event(node, event, true) })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddChildGraphNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    childGraph: hipGraph_t,
) -> hipError_t {
    hip_boundary!("hipGraphAddChildGraphNode", {
        non_null!(pGraphNode);
        non_null!(graph);
        non_null!(childGraph);
        // SAFETY: HIP's contract for the dependency array.
        let deps = unsafe { dependencies(pDependencies, numDependencies)? };
        let req = wire::GraphAddChildNode { graph: id(graph), dependencies: proto_core::field::List(&deps), child: id(childGraph) };
        let node = with_conn(|c| c.graph_add_child_node(req))?.node;
        try_out!(pGraphNode, as_handle(node));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphChildGraphNodeGetGraph(node: hipGraphNode_t, pGraph: *mut hipGraph_t) -> hipError_t {
    hip_boundary!("hipGraphChildGraphNodeGetGraph", {
        non_null!(node);
        non_null!(pGraph);
        let graph = with_conn(|c| c.graph_child_node_get_graph(wire::GraphNodeRef { node: id(node) }))?.graph;
        try_out!(pGraph, as_handle(graph));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphDestroyNode(node: hipGraphNode_t) -> hipError_t {
    hip_boundary!("hipGraphDestroyNode", {
        if node.is_null() {
            return Err(invalid("node is NULL"));
        }
        with_conn(|c| c.graph_destroy_node(wire::GraphNodeRef { node: id(node) }))?;
        kernel_nodes().remove(&id(node));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphNodeFindInClone(pNode: *mut hipGraphNode_t, originalNode: hipGraphNode_t, clonedGraph: hipGraph_t) -> hipError_t {
    hip_boundary!("hipGraphNodeFindInClone", {
        non_null!(pNode);
        non_null!(originalNode);
        non_null!(clonedGraph);
        let req = wire::GraphNodeFindInClone { original: id(originalNode), clone: id(clonedGraph) };
        let node = with_conn(|c| c.graph_node_find_in_clone(req))?.node;
        try_out!(pNode, as_handle(node));
        Ok(())
    })
}
