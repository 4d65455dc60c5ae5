//! Graph node kinds beyond the first family: event record and wait nodes, child graph nodes,
//! and operations on whole nodes (`hipGraphDestroyNode`, `hipGraphNodeFindInClone`). The
//! nodes live on the worker (see `worker/src/session/graph_nodes.rs`); argument checks and
//! error codes follow ROCm's `hip_graph.cpp`.

use super::array::{array_element_size, graph_copy_3d, graph_copy_drv};
use super::graph::{as_handle, dependencies, id, invalid, kernel_nodes};
use crate::abi::*;
use crate::callbacks::Callback;
use crate::handle::Handle;
use crate::remote::with_conn;
use crate::state::allocations::is_device_pointer;
use crate::state::devices::check_device;
use client_core::CallError;
use proto_core::wire;
use proto_core::Calls;
use std::collections::HashMap;
use std::ffi::{c_int, c_uint, c_void};
use zerocopy::byteorder::little_endian::U64;

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
    try_out!(out, as_handle(node)?);
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
    let req = wire::GraphEventNodeSet { node: id(node), event: event.id(), wait };
    with_conn(|c| c.graph_event_node_set_event(req))?;
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
        try_out!(pGraphNode, as_handle(node)?);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphChildGraphNodeGetGraph(node: hipGraphNode_t, pGraph: *mut hipGraph_t) -> hipError_t {
    hip_boundary!("hipGraphChildGraphNodeGetGraph", {
        non_null!(node);
        non_null!(pGraph);
        let graph = with_conn(|c| c.graph_child_node_get_graph(wire::GraphNodeRef { node: id(node) }))?.graph;
        try_out!(pGraph, as_handle(graph)?);
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
        kernel_nodes(id(node)).remove(&id(node));
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
        try_out!(pNode, as_handle(node)?);
        Ok(())
    })
}

fn memset_request(node: hipGraphNode_t, p: &hipMemsetParams) -> wire::GraphMemsetNodeSet {
    wire::GraphMemsetNodeSet {
        node: id(node),
        dst: p.dst as u64,
        value: p.value,
        element_size: p.elementSize,
        width: p.width as u64,
        height: p.height as u64,
        pitch: p.pitch as u64,
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphMemsetNodeGetParams(node: hipGraphNode_t, pNodeParams: *mut hipMemsetParams) -> hipError_t {
    hip_boundary!("hipGraphMemsetNodeGetParams", {
        non_null!(node);
        non_null!(pNodeParams);
        let p = with_conn(|c| c.graph_memset_node_get_params(wire::GraphNodeRef { node: id(node) }))?;
        let params = hipMemsetParams {
            dst: p.dst as usize as *mut c_void,
            elementSize: p.element_size,
            height: p.height as usize,
            pitch: p.pitch as usize,
            value: p.value,
            width: p.width as usize,
        };
        try_out!(pNodeParams, params);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphMemsetNodeSetParams(node: hipGraphNode_t, pNodeParams: *const hipMemsetParams) -> hipError_t {
    hip_boundary!("hipGraphMemsetNodeSetParams", {
        non_null!(node);
        non_null!(pNodeParams);
        // SAFETY: non-null; HIP's contract says it points at a hipMemsetParams.
        let p = unsafe { pNodeParams.read() };
        non_null!(p.dst);
        with_conn(|c| c.graph_memset_node_set_params(memset_request(node, &p)))?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDrvGraphAddMemsetNode(
    phGraphNode: *mut hipGraphNode_t,
    hGraph: hipGraph_t,
    dependencies: *const hipGraphNode_t,
    numDependencies: usize,
    memsetParams: *const hipMemsetParams,
    _ctx: hipCtx_t,
) -> hipError_t {
    // The context names the device, which the destination's allocation already fixes.
    hip_boundary!("hipDrvGraphAddMemsetNode", {
        // SAFETY: forwarded caller contract.
        forwarded(unsafe { super::graph::hipGraphAddMemsetNode(phGraphNode, hGraph, dependencies, numDependencies, memsetParams) })
    })
}

/// The set request of a copy, from the wire form of a checked copy.
fn copy_request(node: hipGraphNode_t, c: &wire::Copy3D) -> wire::GraphCopyNodeSet {
    wire::GraphCopyNodeSet { node: id(node), copy: c.copy.clone() }
}

/// A device-to-device copy of `count` bytes as one row (1D and symbol nodes); a side in host
/// memory is `hipErrorNotSupported`, as for `hipGraphAddMemcpyNode1D`.
fn copy_1d(dst: *mut c_void, src: *const c_void, count: usize, kind: hipMemcpyKind) -> Result<wire::Copy3D, CallError> {
    non_null!(dst);
    non_null!(src);
    if (kind != hipMemcpyDeviceToDevice && kind != hipMemcpyDefault) || !is_device_pointer(dst as u64) || !is_device_pointer(src as u64) {
        return Err(CallError::new(
            HipError::NOT_SUPPORTED,
            format!("memcpy nodes copy device to device only for now (kind {kind}, dst {dst:p}, src {src:p})"),
        ));
    }
    if count == 0 {
        return Err(invalid("memcpy node of 0 bytes"));
    }
    let len = count as u64;
    let row = |ptr| wire::CopyPlace { ptr, pitch: len, height: 1, ..Default::default() };
    let extent = wire::CopyExtent { width: len, height: 1, depth: 1 };
    Ok(wire::Copy3D { copy: wire::CopyBox { dst: row(dst as u64), src: row(src as u64), extent }, ..Default::default() })
}

/// Adds a checked copy as a memcpy node.
///
/// # Safety
/// As the `hipGraphAdd*Node` functions: `deps` holds `count` handles.
unsafe fn add_copy(out: *mut hipGraphNode_t, graph: hipGraph_t, deps: *const hipGraphNode_t, count: usize, c: wire::Copy3D) -> Result<(), CallError> {
    non_null!(out);
    non_null!(graph);
    // SAFETY: forwarded caller contract.
    let deps = unsafe { dependencies(deps, count)? };
    let req = wire::GraphAddCopyNode { graph: id(graph), dependencies: proto_core::field::List(&deps), copy: c.copy };
    let node = with_conn(|c| c.graph_add_copy_node(req))?.node;
    try_out!(out, as_handle(node)?);
    Ok(())
}

fn set_copy(node: hipGraphNode_t, c: &wire::Copy3D) -> Result<(), CallError> {
    non_null!(node);
    with_conn(|conn| conn.graph_memcpy_node_set_params(copy_request(node, c)))?;
    Ok(())
}

fn get_copy(node: hipGraphNode_t) -> Result<wire::GraphCopyParams, CallError> {
    non_null!(node);
    with_conn(|c| c.graph_memcpy_node_get_params(wire::GraphNodeRef { node: id(node) }))
}

/// The device address of `count` bytes at `offset` in `symbol`, for a copy node of `kind`
/// (resolved here, as `hipMemcpyToSymbol` resolves it).
fn symbol_side(symbol: *const c_void, offset: usize, count: usize, kind: hipMemcpyKind, to_symbol: bool) -> Result<*mut c_void, CallError> {
    non_null!(symbol);
    let allowed = match to_symbol {
        true => [hipMemcpyHostToDevice, hipMemcpyDeviceToDevice, hipMemcpyDefault],
        false => [hipMemcpyDeviceToHost, hipMemcpyDeviceToDevice, hipMemcpyDefault],
    };
    if !allowed.contains(&kind) {
        let way = if to_symbol { "to" } else { "from" };
        return Err(CallError::new(HipError::INVALID_MEMCPY_DIRECTION, format!("hipMemcpyKind {kind} cannot copy {way} a device variable")));
    }
    crate::api::register::symbol_range(symbol, offset, count)
}

/// A copy node's kind as the copy's own check wants it: the symbol side is device memory.
fn device_kind(kind: hipMemcpyKind) -> hipMemcpyKind {
    if kind == hipMemcpyDefault {
        hipMemcpyDefault
    } else {
        hipMemcpyDeviceToDevice
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphMemcpyNodeGetParams(node: hipGraphNode_t, pNodeParams: *mut hipMemcpy3DParms) -> hipError_t {
    hip_boundary!("hipGraphMemcpyNodeGetParams", {
        non_null!(pNodeParams);
        let c = get_copy(node)?;
        let elem = |array: u64| if array == 0 { Ok(1) } else { array_element_size(crate::handle::from_id(array)?) };
        let (dst_elem, src_elem) = (elem(c.copy.dst.array)?, elem(c.copy.src.array)?);
        let width_elem = if c.copy.dst.array != 0 { dst_elem } else { src_elem };
        let pitched = |ptr: u64, pitch: u64, rows: u64| hipPitchedPtr {
            ptr: ptr as usize as *mut c_void,
            pitch: pitch as usize,
            xsize: c.copy.extent.width as usize,
            ysize: rows as usize,
        };
        let params = hipMemcpy3DParms {
            srcArray: crate::handle::from_id(c.copy.src.array)?,
            srcPos: hipPos { x: (c.copy.src.x / src_elem) as usize, y: c.copy.src.y as usize, z: c.copy.src.z as usize },
            srcPtr: pitched(c.copy.src.ptr, c.copy.src.pitch, c.copy.src.height),
            dstArray: crate::handle::from_id(c.copy.dst.array)?,
            dstPos: hipPos { x: (c.copy.dst.x / dst_elem) as usize, y: c.copy.dst.y as usize, z: c.copy.dst.z as usize },
            dstPtr: pitched(c.copy.dst.ptr, c.copy.dst.pitch, c.copy.dst.height),
            extent: hipExtent {
                width: (c.copy.extent.width / width_elem) as usize,
                height: c.copy.extent.height as usize,
                depth: c.copy.extent.depth as usize,
            },
            kind: hipMemcpyDeviceToDevice,
        };
        try_out!(pNodeParams, params);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphMemcpyNodeSetParams(node: hipGraphNode_t, pNodeParams: *const hipMemcpy3DParms) -> hipError_t {
    hip_boundary!("hipGraphMemcpyNodeSetParams", {
        non_null!(node);
        // SAFETY: HIP's contract for the copy parameters.
        let c = unsafe { graph_copy_3d(pNodeParams)? };
        set_copy(node, &c)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphMemcpyNodeSetParams1D(
    node: hipGraphNode_t,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    hip_boundary!("hipGraphMemcpyNodeSetParams1D", {
        non_null!(node);
        set_copy(node, &copy_1d(dst, src, count, kind)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDrvGraphAddMemcpyNode(
    phGraphNode: *mut hipGraphNode_t,
    hGraph: hipGraph_t,
    dependencies: *const hipGraphNode_t,
    numDependencies: usize,
    copyParams: *const HIP_MEMCPY3D,
    _ctx: hipCtx_t,
) -> hipError_t {
    hip_boundary!("hipDrvGraphAddMemcpyNode", {
        non_null!(phGraphNode);
        non_null!(hGraph);
        // SAFETY: HIP's contract for the copy parameters.
        let c = unsafe { graph_copy_drv(copyParams)? };
        // SAFETY: HIP's contract for the dependency array.
        unsafe { add_copy(phGraphNode, hGraph, dependencies, numDependencies, c) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDrvGraphMemcpyNodeGetParams(hNode: hipGraphNode_t, nodeParams: *mut HIP_MEMCPY3D) -> hipError_t {
    hip_boundary!("hipDrvGraphMemcpyNodeGetParams", {
        non_null!(nodeParams);
        let c = get_copy(hNode)?;
        let memory_type = |array: u64| if array == 0 { hipMemoryTypeDevice } else { hipMemoryTypeArray };
        let params = HIP_MEMCPY3D {
            srcXInBytes: c.copy.src.x as usize,
            srcY: c.copy.src.y as usize,
            srcZ: c.copy.src.z as usize,
            srcLOD: 0,
            srcMemoryType: memory_type(c.copy.src.array),
            srcHost: std::ptr::null(),
            srcDevice: c.copy.src.ptr as usize as hipDeviceptr_t,
            srcArray: crate::handle::from_id(c.copy.src.array)?,
            srcPitch: c.copy.src.pitch as usize,
            srcHeight: c.copy.src.height as usize,
            dstXInBytes: c.copy.dst.x as usize,
            dstY: c.copy.dst.y as usize,
            dstZ: c.copy.dst.z as usize,
            dstLOD: 0,
            dstMemoryType: memory_type(c.copy.dst.array),
            dstHost: std::ptr::null_mut(),
            dstDevice: c.copy.dst.ptr as usize as hipDeviceptr_t,
            dstArray: crate::handle::from_id(c.copy.dst.array)?,
            dstPitch: c.copy.dst.pitch as usize,
            dstHeight: c.copy.dst.height as usize,
            WidthInBytes: c.copy.extent.width as usize,
            Height: c.copy.extent.height as usize,
            Depth: c.copy.extent.depth as usize,
        };
        try_out!(nodeParams, params);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDrvGraphMemcpyNodeSetParams(hNode: hipGraphNode_t, nodeParams: *const HIP_MEMCPY3D) -> hipError_t {
    hip_boundary!("hipDrvGraphMemcpyNodeSetParams", {
        non_null!(hNode);
        // SAFETY: HIP's contract for the copy parameters.
        let c = unsafe { graph_copy_drv(nodeParams)? };
        set_copy(hNode, &c)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddMemcpyNodeToSymbol(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    hip_boundary!("hipGraphAddMemcpyNodeToSymbol", {
        non_null!(pGraphNode);
        non_null!(graph);
        let dst = symbol_side(symbol, offset, count, kind, true)?;
        let c = copy_1d(dst, src, count, device_kind(kind))?;
        // SAFETY: HIP's contract for the dependency array.
        unsafe { add_copy(pGraphNode, graph, pDependencies, numDependencies, c) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddMemcpyNodeFromSymbol(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    dst: *mut c_void,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    hip_boundary!("hipGraphAddMemcpyNodeFromSymbol", {
        non_null!(pGraphNode);
        non_null!(graph);
        let src = symbol_side(symbol, offset, count, kind, false)?;
        let c = copy_1d(dst, src, count, device_kind(kind))?;
        // SAFETY: HIP's contract for the dependency array.
        unsafe { add_copy(pGraphNode, graph, pDependencies, numDependencies, c) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphMemcpyNodeSetParamsToSymbol(
    node: hipGraphNode_t,
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    hip_boundary!("hipGraphMemcpyNodeSetParamsToSymbol", {
        non_null!(node);
        let dst = symbol_side(symbol, offset, count, kind, true)?;
        set_copy(node, &copy_1d(dst, src, count, device_kind(kind))?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphMemcpyNodeSetParamsFromSymbol(
    node: hipGraphNode_t,
    dst: *mut c_void,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    hip_boundary!("hipGraphMemcpyNodeSetParamsFromSymbol", {
        non_null!(node);
        let src = symbol_side(symbol, offset, count, kind, false)?;
        set_copy(node, &copy_1d(dst, src, count, device_kind(kind))?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphHostNodeGetParams(node: hipGraphNode_t, pNodeParams: *mut hipHostNodeParams) -> hipError_t {
    hip_boundary!("hipGraphHostNodeGetParams", {
        non_null!(node);
        non_null!(pNodeParams);
        let token = with_conn(|c| c.graph_host_node_get_params(wire::GraphNodeRef { node: id(node) }))?.token;
        let Some((f, user)) = crate::callbacks::persistent_host_function(token)? else {
            return Err(CallError::new(HipError::UNKNOWN, format!("host node callback {token} is unknown to this process")));
        };
        try_out!(pNodeParams, hipHostNodeParams { fn_: Some(f), userData: user as *mut c_void });
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphHostNodeSetParams(node: hipGraphNode_t, pNodeParams: *const hipHostNodeParams) -> hipError_t {
    hip_boundary!("hipGraphHostNodeSetParams", {
        non_null!(node);
        non_null!(pNodeParams);
        // SAFETY: non-null; HIP's contract says it points at a hipHostNodeParams.
        let p = unsafe { pNodeParams.read() };
        let f = p.fn_.ok_or_else(|| invalid("the host node's fn is NULL"))?;
        let token = crate::callbacks::register_persistent(Callback::Host { f, user: p.userData as usize })?;
        with_conn(|c| c.graph_host_node_set_params(wire::GraphHostNodeSet { node: id(node), token }))?;
        Ok(())
    })
}

/// `hipLaunchAttributeAccessPolicyWindow`, `hipLaunchAttributeCooperative`,
/// `hipLaunchAttributePriority`: the attributes a kernel node holds.
const KERNEL_NODE_ATTRS: [hipLaunchAttributeID; 3] =
    [hipLaunchAttributeAccessPolicyWindow, hipLaunchAttributeCooperative, hipLaunchAttributePriority];

#[no_mangle]
pub unsafe extern "C" fn hipGraphKernelNodeSetAttribute(
    hNode: hipGraphNode_t,
    attr: hipLaunchAttributeID,
    value: *const hipLaunchAttributeValue,
) -> hipError_t {
    hip_boundary!("hipGraphKernelNodeSetAttribute", {
        non_null!(hNode);
        non_null!(value);
        if !KERNEL_NODE_ATTRS.contains(&attr) {
            return Err(invalid(format!("launch attribute {attr} is not a kernel node attribute")));
        }
        // SAFETY: non-null; HIP's contract says it points at a hipLaunchAttributeValue, whose
        // members are plain data (every bit pattern is a value).
        let v = unsafe { value.read() };
        // SAFETY: as above: the union's members overlay plain data.
        let (window, scalar) = unsafe { (v.accessPolicyWindow, if attr == hipLaunchAttributePriority { v.priority } else { v.cooperative }) };
        let req = wire::GraphKernelAttrSet {
            node: id(hNode),
            attr,
            base_ptr: window.base_ptr as u64,
            num_bytes: window.num_bytes as u64,
            hit_ratio: window.hitRatio,
            hit_prop: window.hitProp,
            miss_prop: window.missProp,
            value: scalar,
        };
        let req = if attr == hipLaunchAttributeAccessPolicyWindow {
            req
        } else {
            wire::GraphKernelAttrSet { base_ptr: 0, num_bytes: 0, hit_ratio: 0.0, hit_prop: 0, miss_prop: 0, ..req }
        };
        with_conn(|c| c.graph_kernel_node_set_attribute(req))?;
        Ok(())
    })
}

#[allow(non_upper_case_globals)] // HIP's constants keep their C names
#[no_mangle]
pub unsafe extern "C" fn hipGraphKernelNodeGetAttribute(
    hNode: hipGraphNode_t,
    attr: hipLaunchAttributeID,
    value: *mut hipLaunchAttributeValue,
) -> hipError_t {
    hip_boundary!("hipGraphKernelNodeGetAttribute", {
        non_null!(hNode);
        non_null!(value);
        if !KERNEL_NODE_ATTRS.contains(&attr) {
            return Err(invalid(format!("launch attribute {attr} is not a kernel node attribute")));
        }
        let v = with_conn(|c| c.graph_kernel_node_get_attribute(wire::GraphKernelAttrQuery { node: id(hNode), attr }))?;
        // SAFETY: non-null; HIP's contract says it points at a hipLaunchAttributeValue; the
        // member `attr` names is written, as HIP writes it.
        unsafe {
            match attr {
                hipLaunchAttributeAccessPolicyWindow => {
                    (*value).accessPolicyWindow = hipAccessPolicyWindow {
                        base_ptr: v.base_ptr as usize as *mut c_void,
                        hitProp: v.hit_prop,
                        hitRatio: v.hit_ratio,
                        missProp: v.miss_prop,
                        num_bytes: v.num_bytes as usize,
                    }
                }
                hipLaunchAttributePriority => (*value).priority = v.value,
                _ => (*value).cooperative = v.value,
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphKernelNodeCopyAttributes(hSrc: hipGraphNode_t, hDst: hipGraphNode_t) -> hipError_t {
    hip_boundary!("hipGraphKernelNodeCopyAttributes", {
        non_null!(hSrc);
        non_null!(hDst);
        with_conn(|c| c.graph_kernel_node_copy_attributes(wire::GraphKernelAttrCopy { src: id(hSrc), dst: id(hDst) }))?;
        Ok(())
    })
}

/// The outcome of a kind's own entry point, to which a call that dispatches by kind forwards
/// (that entry point has recorded the error and explained it already).
fn forwarded(code: hipError_t) -> Result<(), CallError> {
    if code.is_success() {
        Ok(())
    } else {
        Err(CallError::new(code, "from the node kind's own call"))
    }
}

/// `hipGraphAddNode`: each kind through its own add function (whose checks and errors apply).
///
/// # Safety
/// HIP's contract: `nodeParams` points at a `hipGraphNodeParams` whose member `type` names is
/// filled; `pDependencies` holds `numDependencies` handles.
#[allow(non_upper_case_globals)] // HIP's constants keep their C names
#[no_mangle]
pub unsafe extern "C" fn hipGraphAddNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    nodeParams: *mut hipGraphNodeParams,
) -> hipError_t {
    hip_boundary!("hipGraphAddNode", {
        non_null!(pGraphNode);
        non_null!(graph);
        non_null!(nodeParams);
        if numDependencies > 0 && pDependencies.is_null() {
            return Err(invalid("pDependencies is NULL"));
        }
        let (out, deps, n) = (pGraphNode, pDependencies, numDependencies);
        // SAFETY: non-null; HIP's contract for the parameters (the member of the type is read).
        forwarded(unsafe {
            let p = &*nodeParams;
            let u = &p.__bindgen_anon_1;
            match p.type_ {
                hipGraphNodeTypeKernel => super::graph::hipGraphAddKernelNode(out, graph, deps, n, &u.kernel),
                hipGraphNodeTypeMemcpy => super::graph::hipGraphAddMemcpyNode(out, graph, deps, n, &u.memcpy.copyParams),
                hipGraphNodeTypeMemset => super::graph::hipGraphAddMemsetNode(out, graph, deps, n, &u.memset),
                hipGraphNodeTypeHost => super::graph::hipGraphAddHostNode(out, graph, deps, n, &u.host),
                hipGraphNodeTypeGraph => hipGraphAddChildGraphNode(out, graph, deps, n, u.graph.graph),
                hipGraphNodeTypeEmpty => super::graph::hipGraphAddEmptyNode(out, graph, deps, n),
                hipGraphNodeTypeWaitEvent => hipGraphAddEventWaitNode(out, graph, deps, n, u.eventWait.event),
                hipGraphNodeTypeEventRecord => hipGraphAddEventRecordNode(out, graph, deps, n, u.eventRecord.event),
                hipGraphNodeTypeMemAlloc => {
                    hipGraphAddMemAllocNode(out, graph, deps, n, std::ptr::addr_of_mut!((*nodeParams).__bindgen_anon_1.alloc))
                }
                hipGraphNodeTypeMemFree => hipGraphAddMemFreeNode(out, graph, deps, n, u.free.dptr),
                hipGraphNodeTypeExtSemaphoreSignal | hipGraphNodeTypeExtSemaphoreWait => {
                    return Err(CallError::new(HipError::NOT_SUPPORTED, "external semaphore nodes: no backend imports external semaphores"))
                }
                other => return Err(invalid(format!("hipGraphNodeType {other} cannot be added"))),
            }
        })
    })
}

/// `hipGraphNodeSetParams`: each kind through its own set function.
///
/// # Safety
/// HIP's contract: `nodeParams` points at a `hipGraphNodeParams` whose member `type` names is
/// filled.
#[allow(non_upper_case_globals)] // HIP's constants keep their C names
#[no_mangle]
pub unsafe extern "C" fn hipGraphNodeSetParams(node: hipGraphNode_t, nodeParams: *mut hipGraphNodeParams) -> hipError_t {
    hip_boundary!("hipGraphNodeSetParams", {
        non_null!(node);
        non_null!(nodeParams);
        // SAFETY: non-null; HIP's contract for the parameters (the member of the type is read).
        let (kind, u) = unsafe { ((*nodeParams).type_, &(*nodeParams).__bindgen_anon_1) };
        // SAFETY: as above: the member `kind` names is the one read.
        forwarded(unsafe {
            match kind {
                hipGraphNodeTypeKernel => super::graph::hipGraphKernelNodeSetParams(node, &u.kernel),
                hipGraphNodeTypeMemcpy => hipGraphMemcpyNodeSetParams(node, &u.memcpy.copyParams),
                hipGraphNodeTypeMemset => hipGraphMemsetNodeSetParams(node, &u.memset),
                hipGraphNodeTypeHost => hipGraphHostNodeSetParams(node, &u.host),
                hipGraphNodeTypeGraph => {
                    let child = u.graph.graph;
                    non_null!(child);
                    with_conn(|c| c.graph_child_node_set_params(wire::GraphChildNodeSet { node: id(node), child: id(child) }))?;
                    return Ok(());
                }
                hipGraphNodeTypeWaitEvent => hipGraphEventWaitNodeSetEvent(node, u.eventWait.event),
                hipGraphNodeTypeEventRecord => hipGraphEventRecordNodeSetEvent(node, u.eventRecord.event),
                // HIP's answer for these kinds (`ihipGraphNodeSetParams`).
                hipGraphNodeTypeExtSemaphoreSignal | hipGraphNodeTypeExtSemaphoreWait | hipGraphNodeTypeMemAlloc | hipGraphNodeTypeMemFree => {
                    return Err(CallError::new(HipError::NOT_SUPPORTED, format!("hipGraphNodeType {kind} parameters cannot be changed")))
                }
                other => return Err(invalid(format!("hipGraphNodeType {other} has no parameters to set"))),
            }
        })
    })
}

/// Graph memory: the worker allocates when the node is added (see
/// `worker/src/session/graph_nodes.rs` for the model), so `dptr` is known at once, as in HIP.
///
/// # Safety
/// HIP's contract: `pNodeParams` points at a `hipMemAllocNodeParams`; `pDependencies` holds
/// `numDependencies` handles.
#[no_mangle]
pub unsafe extern "C" fn hipGraphAddMemAllocNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    pNodeParams: *mut hipMemAllocNodeParams,
) -> hipError_t {
    hip_boundary!("hipGraphAddMemAllocNode", {
        non_null!(pGraphNode);
        non_null!(graph);
        non_null!(pNodeParams);
        // SAFETY: non-null; HIP's contract says it points at a hipMemAllocNodeParams, whose
        // `dptr` is written here as HIP writes it.
        let params = unsafe { &mut *pNodeParams };
        let props = params.poolProps;
        if params.bytesize == 0 || props.allocType != hipMemAllocationTypePinned || props.location.type_ != hipMemLocationTypeDevice {
            params.dptr = std::ptr::null_mut();
            return Err(invalid("graph memory must be pinned device memory of at least one byte"));
        }
        let device = u32::try_from(props.location.id).map_err(|_| invalid(format!("device {} in the pool location", props.location.id)))?;
        params.dptr = std::ptr::null_mut();
        // SAFETY: HIP's contract for the dependency array.
        let deps = unsafe { dependencies(pDependencies, numDependencies)? };
        let req = wire::GraphAddMemAllocNode { graph: id(graph), dependencies: proto_core::field::List(&deps), device, size: params.bytesize as u64 };
        let added = with_conn(|c| c.graph_add_mem_alloc_node(req))?;
        crate::state::allocations::record_graph_memory(added.ptr, params.bytesize as u64, device, id(graph));
        params.dptr = added.ptr as usize as *mut c_void;
        try_out!(pGraphNode, as_handle(added.node)?);
        Ok(())
    })
}

/// A memory free node (`any_memory`: the driver form, which takes any live allocation).
///
/// # Safety
/// As the `hipGraphAdd*Node` functions: `deps` holds `count` handles.
unsafe fn add_free_node(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    count: usize,
    ptr: *mut c_void,
    any_memory: bool,
) -> Result<(), CallError> {
    non_null!(out);
    non_null!(graph);
    non_null!(ptr);
    if !deps.is_null() && count == 0 {
        // HIP refuses a dependency array with no dependencies in it.
        return Err(invalid("pDependencies is given with numDependencies 0"));
    }
    // SAFETY: forwarded caller contract.
    let deps = unsafe { dependencies(deps, count)? };
    let req = wire::GraphAddMemFreeNode { graph: id(graph), dependencies: proto_core::field::List(&deps), ptr: ptr as u64, any_memory };
    let node = with_conn(|c| c.graph_add_mem_free_node(req))?.node;
    crate::state::allocations::graph_memory_freed(ptr as u64);
    try_out!(out, as_handle(node)?);
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddMemFreeNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    dev_ptr: *mut c_void,
) -> hipError_t {
    // SAFETY: HIP's contract for the dependency array.
    hip_boundary!("hipGraphAddMemFreeNode", { unsafe { add_free_node(pGraphNode, graph, pDependencies, numDependencies, dev_ptr, false) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipDrvGraphAddMemFreeNode(
    phGraphNode: *mut hipGraphNode_t,
    hGraph: hipGraph_t,
    dependencies: *const hipGraphNode_t,
    numDependencies: usize,
    dptr: hipDeviceptr_t,
) -> hipError_t {
    hip_boundary!("hipDrvGraphAddMemFreeNode", {
        // SAFETY: HIP's contract for the dependency array.
        unsafe { add_free_node(phGraphNode, hGraph, dependencies, numDependencies, dptr, true) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphMemAllocNodeGetParams(node: hipGraphNode_t, pNodeParams: *mut hipMemAllocNodeParams) -> hipError_t {
    hip_boundary!("hipGraphMemAllocNodeGetParams", {
        non_null!(node);
        non_null!(pNodeParams);
        let p = with_conn(|c| c.graph_mem_alloc_node_get_params(wire::GraphNodeRef { node: id(node) }))?;
        // SAFETY: plain C data for which all zeros is "not given" (no handle types, no
        // security attributes, no size limit).
        let mut params: hipMemAllocNodeParams = unsafe { std::mem::zeroed() };
        params.poolProps.allocType = hipMemAllocationTypePinned;
        params.poolProps.location = hipMemLocation { type_: hipMemLocationTypeDevice, id: p.device as i32 };
        params.bytesize = p.size as usize;
        params.dptr = p.ptr as usize as *mut c_void;
        try_out!(pNodeParams, params);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphMemFreeNodeGetParams(node: hipGraphNode_t, dev_ptr: *mut c_void) -> hipError_t {
    hip_boundary!("hipGraphMemFreeNodeGetParams", {
        non_null!(node);
        non_null!(dev_ptr);
        let ptr = with_conn(|c| c.graph_mem_free_node_get_params(wire::GraphNodeRef { node: id(node) }))?.ptr;
        // HIP's contract: `dev_ptr` points at a `void*`.
        try_out!(dev_ptr.cast::<*mut c_void>(), ptr as usize as *mut c_void);
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hipDeviceGraphMemTrim(device: c_int) -> hipError_t {
    hip_boundary!("hipDeviceGraphMemTrim", {
        let device = check_device(device)?;
        with_conn(|c| c.graph_mem_trim(wire::GraphMemDevice { device }))?;
        crate::state::allocations::graph_memory_trimmed(device);
        Ok(())
    })
}

/// Reads or resets one graph memory attribute of `device`.
fn graph_mem_attribute(device: c_int, attr: hipGraphMemAttributeType, reset: bool) -> Result<u64, CallError> {
    let device = check_device(device)?;
    Ok(with_conn(|c| c.graph_mem_attribute(wire::GraphMemAttrQuery { device, attr, reset }))?.value)
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetGraphMemAttribute(device: c_int, attr: hipGraphMemAttributeType, value: *mut c_void) -> hipError_t {
    hip_boundary!("hipDeviceGetGraphMemAttribute", {
        let checked = check_device(device)?;
        non_null!(value);
        let v = graph_mem_attribute(checked as c_int, attr, false)?;
        // HIP's contract: `value` points at a `uint64_t`.
        try_out!(value.cast::<u64>(), v);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceSetGraphMemAttribute(device: c_int, attr: hipGraphMemAttributeType, value: *mut c_void) -> hipError_t {
    hip_boundary!("hipDeviceSetGraphMemAttribute", {
        check_device(device)?;
        non_null!(value);
        // SAFETY: non-null; HIP's contract says it points at a `uint64_t`.
        if unsafe { value.cast::<u64>().read_unaligned() } != 0 {
            return Err(invalid("a graph memory watermark can only be reset to 0"));
        }
        graph_mem_attribute(device, attr, true).map(drop)
    })
}

/// The operations of a batch memory operation node, as the worker keeps them: the type (low
/// 32 bits) and flags (high 32 bits), address, value, mask.
///
/// # Safety
/// HIP's contract: `p` points at a `hipBatchMemOpNodeParams` whose `paramArray` holds
/// `count` operations.
#[allow(non_upper_case_globals)] // HIP's operation constants keep their C names
pub(super) unsafe fn batch_words(p: *const hipBatchMemOpNodeParams) -> Result<(u32, Vec<U64>), CallError> {
    non_null!(p);
    // SAFETY: non-null; the caller's contract.
    let p = unsafe { p.read() };
    non_null!(p.paramArray);
    if p.count == 0 || p.count as usize > wire::MAX_GRAPH_BATCH_MEM_OPS {
        return Err(invalid(format!("{} operations (1..={})", p.count, wire::MAX_GRAPH_BATCH_MEM_OPS)));
    }
    // SAFETY: non-null, `count` operations (the caller's contract).
    let ops = unsafe { std::slice::from_raw_parts(p.paramArray, p.count as usize) };
    let mut words = Vec::with_capacity(ops.len() * wire::GRAPH_BATCH_MEM_OP_WORDS);
    for op in ops {
        // SAFETY: every member starts with `operation`; the member read next is the one it
        // names.
        let (kind, flags, address, value, mask) = unsafe {
            match op.operation {
                hipStreamMemOpWaitValue32 => {
                    let w = op.waitValue;
                    (w.operation, w.flags, w.address as u64, u64::from(w.__bindgen_anon_1.value), u64::from(u32::MAX))
                }
                hipStreamMemOpWaitValue64 => {
                    let w = op.waitValue;
                    (w.operation, w.flags, w.address as u64, w.__bindgen_anon_1.value64, u64::MAX)
                }
                hipStreamMemOpWriteValue32 => {
                    let w = op.writeValue;
                    (w.operation, w.flags, w.address as u64, u64::from(w.__bindgen_anon_1.value), 0)
                }
                hipStreamMemOpWriteValue64 => {
                    let w = op.writeValue;
                    (w.operation, w.flags, w.address as u64, w.__bindgen_anon_1.value64, 0)
                }
                hipStreamMemOpBarrier => (op.memoryBarrier.operation, op.memoryBarrier.flags, 0, 0, 0),
                hipStreamMemOpFlushRemoteWrites => (op.flushRemoteWrites.operation, op.flushRemoteWrites.flags, 0, 0, 0),
                other => return Err(invalid(format!("unknown batch operation {other}"))),
            }
        };
        words.extend([U64::new(u64::from(kind) | u64::from(flags) << 32), U64::new(address), U64::new(value), U64::new(mask)]);
    }
    Ok((p.flags, words))
}

/// Operations handed back by `hipGraphBatchMemOpNodeGetParams`.
#[derive(Default)]
struct OpArray(Vec<hipStreamBatchMemOpParams>);

// SAFETY: the pointers inside are device addresses of the worker, never dereferenced here.
unsafe impl Send for OpArray {}

/// Storage that `hipGraphBatchMemOpNodeGetParams`'s `paramArray` points into, per node.
fn batch_node_arrays(node: u64) -> std::sync::MutexGuard<'static, HashMap<u64, OpArray>> {
    const ARRAYS: client_core::published::FamilyTable<HashMap<u64, OpArray>> =
        client_core::published::FamilyTable::new(crate::state::families::Family::BatchNodeArrays.slot());
    crate::remote::published_for_handle(node).family(&ARRAYS)
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddBatchMemOpNode(
    phGraphNode: *mut hipGraphNode_t,
    hGraph: hipGraph_t,
    dependencies: *const hipGraphNode_t,
    numDependencies: usize,
    nodeParams: *const hipBatchMemOpNodeParams,
) -> hipError_t {
    hip_boundary!("hipGraphAddBatchMemOpNode", {
        non_null!(phGraphNode);
        non_null!(hGraph);
        // SAFETY: HIP's contract for the node parameters.
        let (flags, ops) = unsafe { batch_words(nodeParams)? };
        // SAFETY: HIP's contract for the dependency array.
        let deps = unsafe { super::graph::dependencies(dependencies, numDependencies)? };
        let req = wire::GraphAddBatchMemOpNode {
            graph: id(hGraph),
            dependencies: proto_core::field::List(&deps),
            flags,
            ops: proto_core::field::List(&ops),
        };
        let node = with_conn(|c| c.graph_add_batch_mem_op_node(req))?.node;
        try_out!(phGraphNode, as_handle(node)?);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphBatchMemOpNodeSetParams(hNode: hipGraphNode_t, nodeParams: *mut hipBatchMemOpNodeParams) -> hipError_t {
    hip_boundary!("hipGraphBatchMemOpNodeSetParams", {
        non_null!(hNode);
        // SAFETY: HIP's contract for the node parameters.
        let (flags, ops) = unsafe { batch_words(nodeParams)? };
        let req = wire::GraphBatchMemOpNodeSet { node: id(hNode), flags, ops: proto_core::field::List(&ops) };
        with_conn(|c| c.graph_batch_mem_op_node_set_params(req))?;
        Ok(())
    })
}

#[allow(non_upper_case_globals)] // HIP's operation constants keep their C names
#[no_mangle]
pub unsafe extern "C" fn hipGraphBatchMemOpNodeGetParams(hNode: hipGraphNode_t, nodeParams_out: *mut hipBatchMemOpNodeParams) -> hipError_t {
    hip_boundary!("hipGraphBatchMemOpNodeGetParams", {
        non_null!(hNode);
        non_null!(nodeParams_out);
        let (flags, words) = with_conn(|c| {
            let r = c.graph_batch_mem_op_node_get_params(wire::GraphNodeRef { node: id(hNode) })?;
            Ok((r.flags, r.ops.0.iter().map(|w| w.get()).collect::<Vec<u64>>()))
        })?;
        let ops: Vec<hipStreamBatchMemOpParams> = words
            .chunks_exact(wire::GRAPH_BATCH_MEM_OP_WORDS)
            .map(|w| {
                // SAFETY: plain C data; all zeros is a valid value of every member.
                let mut op: hipStreamBatchMemOpParams = unsafe { std::mem::zeroed() };
                let (kind, op_flags, address) = (w[0] as u32, (w[0] >> 32) as u32, w[1] as usize as hipDeviceptr_t);
                // Wait and write members share their layout up to the value: the member the
                // operation names is the one written.
                match kind {
                    hipStreamMemOpWaitValue32 | hipStreamMemOpWaitValue64 => {
                        op.waitValue.operation = kind;
                        op.waitValue.address = address;
                        op.waitValue.__bindgen_anon_1.value64 = w[2];
                        op.waitValue.flags = op_flags;
                    }
                    hipStreamMemOpWriteValue32 | hipStreamMemOpWriteValue64 => {
                        op.writeValue.operation = kind;
                        op.writeValue.address = address;
                        op.writeValue.__bindgen_anon_1.value64 = w[2];
                        op.writeValue.flags = op_flags;
                    }
                    _ => {
                        op.memoryBarrier.operation = kind;
                        op.memoryBarrier.flags = op_flags;
                    }
                }
                op
            })
            .collect();
        let mut arrays = batch_node_arrays(id(hNode));
        let stored = &mut arrays.entry(id(hNode)).or_default().0;
        *stored = ops;
        let params = hipBatchMemOpNodeParams { ctx: std::ptr::null_mut(), count: stored.len() as c_uint, paramArray: stored.as_mut_ptr(), flags };
        try_out!(nodeParams_out, params);
        Ok(())
    })
}
