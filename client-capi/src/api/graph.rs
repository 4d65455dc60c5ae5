//! Graphs: `hipGraph*`. Graphs, nodes and executable graphs live on the worker (session
//! objects); a `hipGraph_t`, `hipGraphNode_t` or `hipGraphExec_t` carries the worker's handle.
//! Kernel nodes pack their arguments once, as a launch does; `hipGraphLaunch` is one
//! fire-and-forget message whatever the graph's size. `hipGraphDebugDotPrint` writes its DOT
//! file here, from the worker's nodes and edges. Argument checks and error codes follow
//! ROCm's `hip_graph.cpp`.

use crate::abi::*;
use crate::api::module::{self, register::resolve_function, Function};
use crate::handle::stream_id;
use crate::remote::with_conn;
use crate::state::allocations::find_device_range;
use crate::state::copy::Direction;
use crate::state::devices::current_device;
use crate::state::families::Family;
use client_core::published::FamilyTable;
use client_core::CallError;
use proto_core::wire::{self, GraphNodeKind};
use proto_core::{calls, Caller, Calls};
use std::collections::HashMap;
use std::ffi::{c_char, c_uint, c_ulonglong, c_void, CStr};
use std::io::Write as _;
use std::sync::{Arc, MutexGuard};
use zerocopy::byteorder::little_endian::U64;

#[path = "graph_exec.rs"]
mod graph_exec;
#[path = "user_object.rs"]
mod user_object;

pub(super) fn invalid(message: impl Into<String>) -> CallError {
    CallError::new(HipError::INVALID_VALUE, message)
}

/// A worker handle as the opaque pointer HIP hands out (never dereferenced).
pub(super) use crate::handle::{from_id as as_handle, id};

/// What the client remembers of a kernel node: the `func` it was given (HIP returns that one)
/// and the storage that `hipGraphKernelNodeGetParams`'s `kernelParams` point into.
#[derive(Default)]
pub(super) struct KernelNodeLocal {
    func: usize,
    args: Vec<u8>,
    /// Addresses into `args`, one per parameter (kept as integers: the table is shared).
    pointers: Vec<usize>,
}

const KERNEL_NODES: FamilyTable<HashMap<u64, KernelNodeLocal>> = FamilyTable::new(Family::KernelNodes.slot());

/// The kernel nodes of the worker that issued `handle` (a node, or its graph), kept by its
/// session.
pub(super) fn kernel_nodes(handle: u64) -> MutexGuard<'static, HashMap<u64, KernelNodeLocal>> {
    crate::remote::published_for_handle(handle).family(&KERNEL_NODES)
}

/// Graph, kernel node geometry and packed arguments of `params`.
///
/// # Safety
/// `params` must follow HIP's contract for `hipKernelNodeParams`.
unsafe fn kernel_launch(params: *const hipKernelNodeParams) -> Result<(Arc<Function>, hipKernelNodeParams, Vec<u8>), CallError> {
    non_null!(params);
    // SAFETY: non-null, and HIP's contract says it points at a hipKernelNodeParams.
    let p = unsafe { params.read() };
    if p.func.is_null() {
        return Err(CallError::new(HipError::INVALID_DEVICE_FUNCTION, "the kernel node's func is NULL"));
    }
    let f = resolve_function(p.func)?;
    let args = match (p.kernelParams.is_null(), p.extra.is_null()) {
        (false, false) => return Err(invalid("kernelParams and extra are both given; pass one")),
        // SAFETY: HIP's contract for `extra`.
        (true, false) => f.layout()?.check_buffer(unsafe { module::extra_buffer(p.extra)? })?.to_vec(),
        // SAFETY: HIP's contract for `kernelParams` (one pointer per parameter).
        _ => unsafe { f.layout()?.pack_pointers(p.kernelParams)? },
    };
    Ok((f, p, args))
}

/// The dependency list of an add call.
///
/// # Safety
/// `deps` must point at `count` node handles when `count > 0`.
pub(super) unsafe fn dependencies(deps: *const hipGraphNode_t, count: usize) -> Result<Vec<U64>, CallError> {
    if count == 0 {
        return Ok(Vec::new());
    }
    non_null!(deps);
    // SAFETY: caller contract.
    let deps = unsafe { std::slice::from_raw_parts(deps, count) };
    if deps.iter().any(|d| d.is_null()) {
        return Err(invalid("a dependency is NULL"));
    }
    Ok(deps.iter().map(|&d| U64::new(id(d))).collect())
}

/// A blank node of `kind` for `graph` (the kind's fields are filled by the caller).
fn node_request<'a>(graph: hipGraph_t, kind: GraphNodeKind, deps: &'a [U64]) -> wire::GraphAddNode<'a> {
    wire::GraphAddNode {
        graph: id(graph),
        kind,
        dependencies: proto_core::field::List(deps),
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
        host_token: 0,
        args: Default::default(),
    }
}

/// Adds one node and stores its handle.
///
/// # Safety
/// As the `hipGraphAdd*Node` functions: `deps` holds `count` handles.
unsafe fn add_node(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    deps: *const hipGraphNode_t,
    count: usize,
    kind: GraphNodeKind,
    args: &[u8],
    fill: impl FnOnce(&mut wire::GraphAddNode<'_>),
) -> Result<u64, CallError> {
    non_null!(out);
    non_null!(graph);
    // SAFETY: forwarded caller contract.
    let deps = unsafe { dependencies(deps, count)? };
    let mut req = node_request(graph, kind, &deps);
    req.args = args.into();
    fill(&mut req);
    let node = with_conn(|c| c.graph_add_node(req))?.node;
    try_out!(out, as_handle(node)?);
    Ok(node)
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphCreate(pGraph: *mut hipGraph_t, flags: c_uint) -> hipError_t {
    hip_boundary!("hipGraphCreate", {
        non_null!(pGraph);
        let graph = with_conn(|c| c.graph_create(wire::GraphCreate { flags }))?.graph;
        try_out!(pGraph, as_handle(graph)?);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphDestroy(graph: hipGraph_t) -> hipError_t {
    hip_boundary!("hipGraphDestroy", {
        non_null!(graph);
        let nodes = graph_nodes(graph, false)?;
        with_conn(|c| c.graph_destroy(wire::GraphRef { graph: id(graph) }))?;
        let mut local = kernel_nodes(id(graph));
        for node in nodes {
            local.remove(&node);
        }
        drop(local);
        user_object::graph_destroyed(id(graph));
        crate::state::allocations::graph_memory_graph_destroyed(id(graph));
        crate::state::graph_host::graph_destroyed(id(graph))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddEmptyNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
) -> hipError_t {
    hip_boundary!("hipGraphAddEmptyNode", {
        // SAFETY: HIP's contract for the dependency array.
        unsafe { add_node(pGraphNode, graph, pDependencies, numDependencies, GraphNodeKind::Empty, &[], |_| {}) }.map(drop)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddKernelNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    pNodeParams: *const hipKernelNodeParams,
) -> hipError_t {
    hip_boundary!("hipGraphAddKernelNode", {
        non_null!(pGraphNode);
        non_null!(graph);
        // SAFETY: HIP's contract for the node parameters.
        let (f, p, args) = unsafe { kernel_launch(pNodeParams)? };
        // SAFETY: HIP's contract for the dependency array.
        let node = unsafe {
            add_node(pGraphNode, graph, pDependencies, numDependencies, GraphNodeKind::Kernel, &args, |req| {
                req.function = f.worker;
                req.grid = [p.gridDim.x, p.gridDim.y, p.gridDim.z];
                req.block = [p.blockDim.x, p.blockDim.y, p.blockDim.z];
                req.shared_mem = p.sharedMemBytes;
            })?
        };
        kernel_nodes(node).insert(node, KernelNodeLocal { func: p.func as usize, ..Default::default() });
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddMemsetNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    pMemsetParams: *const hipMemsetParams,
) -> hipError_t {
    hip_boundary!("hipGraphAddMemsetNode", {
        non_null!(pMemsetParams);
        // SAFETY: non-null; HIP's contract says it points at a hipMemsetParams.
        let p = unsafe { pMemsetParams.read() };
        non_null!(p.dst);
        // SAFETY: HIP's contract for the dependency array.
        unsafe {
            add_node(pGraphNode, graph, pDependencies, numDependencies, GraphNodeKind::Memset, &[], |req| {
                req.dst = p.dst as u64;
                req.value = p.value;
                req.element_size = p.elementSize;
                req.width = p.width as u64;
                req.height = p.height as u64;
                req.pitch = p.pitch as u64;
            })
        }
        .map(drop)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddMemcpyNode1D(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    hip_boundary!("hipGraphAddMemcpyNode1D", {
        non_null!(dst);
        non_null!(src);
        non_null!(graph);
        // A node of host memory copies through a staging buffer whose host side every launch
        // moves (`state::graph_host`), as ROCm's node reads host memory when it runs.
        let (dst, src) = match crate::state::copy::direction(dst, src, kind)? {
            Direction::DeviceToDevice => (dst as u64, src as u64),
            Direction::HostToDevice => (dst as u64, stage_for(graph, dst as u64, src as usize, count, true)?),
            Direction::DeviceToHost => (stage_for(graph, src as u64, dst as usize, count, false)?, src as u64),
            Direction::HostToHost => {
                return Err(CallError::new(HipError::INVALID_VALUE, format!("a memcpy node between two host buffers ({dst:p}, {src:p})")))
            }
        };
        // SAFETY: HIP's contract for the dependency array.
        unsafe {
            add_node(pGraphNode, graph, pDependencies, numDependencies, GraphNodeKind::Memcpy, &[], |req| {
                req.dst = dst;
                req.src = src;
                req.width = count as u64;
            })
        }
        .map(drop)
    })
}

/// The staging buffer of a memcpy node between `host` and the device memory at `device_side`.
fn stage_for(graph: hipGraph_t, device_side: u64, host: usize, len: usize, to_device: bool) -> Result<u64, CallError> {
    let device = find_device_range(device_side).map_or_else(current_device, |(_, r)| r.device);
    crate::state::graph_host::stage(id(graph), device, host, len, to_device)
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddHostNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    pNodeParams: *const hipHostNodeParams,
) -> hipError_t {
    hip_boundary!("hipGraphAddHostNode", {
        non_null!(pGraphNode);
        non_null!(graph);
        non_null!(pNodeParams);
        // SAFETY: non-null; HIP's contract says it points at a hipHostNodeParams.
        let p = unsafe { pNodeParams.read() };
        let f = p.fn_.ok_or_else(|| invalid("the host node's fn is NULL"))?;
        let token = crate::callbacks::register_persistent(crate::callbacks::Callback::Host { f, user: p.userData as usize })?;
        // SAFETY: HIP's contract for the dependency array.
        unsafe { add_node(pGraphNode, graph, pDependencies, numDependencies, GraphNodeKind::Host, &[], |req| req.host_token = token) }.map(drop)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddMemcpyNode(
    pGraphNode: *mut hipGraphNode_t,
    graph: hipGraph_t,
    pDependencies: *const hipGraphNode_t,
    numDependencies: usize,
    pCopyParams: *const hipMemcpy3DParms,
) -> hipError_t {
    hip_boundary!("hipGraphAddMemcpyNode", {
        non_null!(pGraphNode);
        non_null!(graph);
        // SAFETY: HIP's contract for the copy parameters.
        let c = unsafe { crate::api::array::graph_copy_3d(pCopyParams)? };
        // SAFETY: HIP's contract for the dependency array.
        let deps = unsafe { dependencies(pDependencies, numDependencies)? };
        let req = wire::GraphAddCopyNode { graph: id(graph), dependencies: proto_core::field::List(&deps), copy: c.copy };
        let node = with_conn(|c| c.graph_add_copy_node(req))?.node;
        try_out!(pGraphNode, as_handle(node)?);
        Ok(())
    })
}

/// Sends one edge list to the worker.
///
/// # Safety
/// `from` and `to` hold `count` handles each when `count > 0`.
unsafe fn edges(graph: hipGraph_t, from: *const hipGraphNode_t, to: *const hipGraphNode_t, count: usize, add: bool) -> Result<(), CallError> {
    non_null!(graph);
    if count == 0 {
        return Ok(());
    }
    non_null!(from);
    non_null!(to);
    // SAFETY: caller contract.
    let (from, to) = unsafe { (dependencies(from, count)?, dependencies(to, count)?) };
    let req = wire::GraphEdges { graph: id(graph), from: proto_core::field::List(&from), to: proto_core::field::List(&to) };
    if add {
        with_conn(|c| c.graph_add_dependencies(req))?;
    } else {
        with_conn(|c| c.graph_remove_dependencies(req))?;
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddDependencies(
    graph: hipGraph_t,
    from: *const hipGraphNode_t,
    to: *const hipGraphNode_t,
    numDependencies: usize,
) -> hipError_t {
    // SAFETY: HIP's contract for the edge arrays.
    hip_boundary!("hipGraphAddDependencies", { unsafe { edges(graph, from, to, numDependencies, true) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphRemoveDependencies(
    graph: hipGraph_t,
    from: *const hipGraphNode_t,
    to: *const hipGraphNode_t,
    numDependencies: usize,
) -> hipError_t {
    // SAFETY: HIP's contract for the edge arrays.
    hip_boundary!("hipGraphRemoveDependencies", { unsafe { edges(graph, from, to, numDependencies, false) } })
}

/// The graph's nodes (all, or its roots), in creation order.
fn graph_nodes(graph: hipGraph_t, roots: bool) -> Result<Vec<u64>, CallError> {
    let req = wire::GraphRef { graph: id(graph) };
    with_conn(|c| {
        let list = if roots { c.graph_get_root_nodes(req)? } else { c.graph_get_nodes(req)? };
        Ok(list.nodes.0.iter().map(|n| n.get()).collect())
    })
}

/// HIP's list-out convention: with `out` NULL, `*count` becomes the total; otherwise the
/// first `*count` items are written, slots past the total are set to NULL and `*count`
/// becomes the number written.
///
/// # Safety
/// `count` points at a `usize`; a non-null `out` at `*count` slots.
unsafe fn write_list(items: &[u64], out: *mut hipGraphNode_t, count: *mut usize) -> Result<(), CallError> {
    non_null!(count);
    if out.is_null() {
        // SAFETY: checked non-null; caller contract.
        unsafe { count.write(items.len()) };
        return Ok(());
    }
    // SAFETY: caller contract.
    let room = unsafe { count.read() };
    // SAFETY: the caller's array holds `room` slots.
    let slots = unsafe { std::slice::from_raw_parts_mut(out, room) };
    for (i, slot) in slots.iter_mut().enumerate() {
        *slot = match items.get(i) {
            Some(&n) => as_handle(n)?,
            None => std::ptr::null_mut(),
        };
    }
    // SAFETY: checked non-null; caller contract.
    unsafe { count.write(room.min(items.len())) };
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphGetNodes(graph: hipGraph_t, nodes: *mut hipGraphNode_t, numNodes: *mut usize) -> hipError_t {
    hip_boundary!("hipGraphGetNodes", {
        non_null!(graph);
        non_null!(numNodes);
        let list = graph_nodes(graph, false)?;
        // SAFETY: HIP's contract for the output array.
        unsafe { write_list(&list, nodes, numNodes) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphGetRootNodes(graph: hipGraph_t, pRootNodes: *mut hipGraphNode_t, pNumRootNodes: *mut usize) -> hipError_t {
    hip_boundary!("hipGraphGetRootNodes", {
        non_null!(graph);
        non_null!(pNumRootNodes);
        let list = graph_nodes(graph, true)?;
        // SAFETY: HIP's contract for the output array.
        unsafe { write_list(&list, pRootNodes, pNumRootNodes) }
    })
}

fn graph_edges(graph: hipGraph_t) -> Result<(Vec<u64>, Vec<u64>), CallError> {
    with_conn(|c| {
        let e = c.graph_get_edges(wire::GraphRef { graph: id(graph) })?;
        Ok((e.from.0.iter().map(|n| n.get()).collect(), e.to.0.iter().map(|n| n.get()).collect()))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphGetEdges(graph: hipGraph_t, from: *mut hipGraphNode_t, to: *mut hipGraphNode_t, numEdges: *mut usize) -> hipError_t {
    hip_boundary!("hipGraphGetEdges", {
        non_null!(graph);
        non_null!(numEdges);
        if from.is_null() != to.is_null() {
            return Err(invalid("from and to must both be NULL or both be arrays"));
        }
        let (sources, targets) = graph_edges(graph)?;
        // SAFETY: HIP's contract for the output arrays (`*numEdges` slots each).
        unsafe {
            let room = numEdges.read();
            write_list(&sources, from, numEdges)?;
            numEdges.write(room);
            write_list(&targets, to, numEdges)
        }
    })
}

/// A node's dependencies or dependents, in HIP's list-out convention.
///
/// # Safety
/// As [`write_list`].
unsafe fn neighbours(node: hipGraphNode_t, out: *mut hipGraphNode_t, count: *mut usize, dependents: bool) -> Result<(), CallError> {
    non_null!(node);
    non_null!(count);
    let list: Vec<u64> = with_conn(|c| {
        let l = c.graph_node_neighbours(wire::GraphNodeNeighbours { node: id(node), dependents })?;
        Ok(l.nodes.0.iter().map(|n| n.get()).collect())
    })?;
    // SAFETY: forwarded caller contract.
    unsafe { write_list(&list, out, count) }
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphNodeGetDependencies(
    node: hipGraphNode_t,
    pDependencies: *mut hipGraphNode_t,
    pNumDependencies: *mut usize,
) -> hipError_t {
    // SAFETY: HIP's contract for the output array.
    hip_boundary!("hipGraphNodeGetDependencies", { unsafe { neighbours(node, pDependencies, pNumDependencies, false) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphNodeGetDependentNodes(
    node: hipGraphNode_t,
    pDependentNodes: *mut hipGraphNode_t,
    pNumDependentNodes: *mut usize,
) -> hipError_t {
    // SAFETY: HIP's contract for the output array.
    hip_boundary!("hipGraphNodeGetDependentNodes", { unsafe { neighbours(node, pDependentNodes, pNumDependentNodes, true) } })
}

fn node_kind(node: hipGraphNode_t) -> Result<GraphNodeKind, CallError> {
    Ok(with_conn(|c| c.graph_node_get_type(wire::GraphNodeRef { node: id(node) }))?.kind)
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphNodeGetType(node: hipGraphNode_t, pType: *mut hipGraphNodeType) -> hipError_t {
    hip_boundary!("hipGraphNodeGetType", {
        non_null!(node);
        non_null!(pType);
        let kind = node_kind(node)?;
        try_out!(pType, kind as u32);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphKernelNodeGetParams(node: hipGraphNode_t, pNodeParams: *mut hipKernelNodeParams) -> hipError_t {
    hip_boundary!("hipGraphKernelNodeGetParams", {
        non_null!(node);
        non_null!(pNodeParams);
        let (function, grid, block, shared_mem, args) = with_conn(|c| {
            let p = c.graph_kernel_node_get_params(wire::GraphNodeRef { node: id(node) })?;
            Ok((p.function, p.grid, p.block, p.shared_mem, p.args.0.to_vec()))
        })?;
        let mut local = kernel_nodes(id(node));
        let entry = local.entry(id(node)).or_default();
        if entry.func == 0 {
            // A node this process did not add (a clone): the hipFunction_t of its function.
            entry.func = module::function_by_worker(function).unwrap_or(0) as usize;
        }
        let layout = module::function(entry.func as u64).or_else(|_| resolve_function(entry.func as *const c_void))?.layout()?.clone();
        entry.args = args;
        let base = entry.args.as_ptr() as usize;
        entry.pointers = layout.params().iter().map(|p| base + p.offset).collect();
        let params = hipKernelNodeParams {
            blockDim: dim3 { x: block[0], y: block[1], z: block[2] },
            extra: std::ptr::null_mut(),
            func: entry.func as *mut c_void,
            gridDim: dim3 { x: grid[0], y: grid[1], z: grid[2] },
            kernelParams: entry.pointers.as_mut_ptr().cast(),
            sharedMemBytes: shared_mem,
        };
        try_out!(pNodeParams, params);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphKernelNodeSetParams(node: hipGraphNode_t, pNodeParams: *const hipKernelNodeParams) -> hipError_t {
    hip_boundary!("hipGraphKernelNodeSetParams", {
        non_null!(node);
        // SAFETY: HIP's contract for the node parameters.
        let (f, p, args) = unsafe { kernel_launch(pNodeParams)? };
        let req = wire::GraphKernelSetParams {
            node: id(node),
            function: f.worker,
            grid: [p.gridDim.x, p.gridDim.y, p.gridDim.z],
            block: [p.blockDim.x, p.blockDim.y, p.blockDim.z],
            shared_mem: p.sharedMemBytes,
            args: args.as_slice().into(),
        };
        with_conn(|c| c.graph_kernel_node_set_params(req))?;
        kernel_nodes(id(node)).insert(id(node), KernelNodeLocal { func: p.func as usize, ..Default::default() });
        Ok(())
    })
}

fn instantiate(out: *mut hipGraphExec_t, graph: hipGraph_t, flags: u64) -> Result<(), CallError> {
    non_null!(out);
    non_null!(graph);
    let exec = with_conn(|c| c.graph_instantiate(wire::GraphInstantiate { graph: id(graph), flags }))?.exec;
    user_object::exec_instantiated(id(graph), exec);
    crate::state::graph_host::exec_instantiated(id(graph), exec);
    try_out!(out, as_handle(exec)?);
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphInstantiate(
    pGraphExec: *mut hipGraphExec_t,
    graph: hipGraph_t,
    pErrorNode: *mut hipGraphNode_t,
    pLogBuffer: *mut c_char,
    bufferSize: usize,
) -> hipError_t {
    hip_boundary!("hipGraphInstantiate", {
        let result = instantiate(pGraphExec, graph, 0);
        if !pErrorNode.is_null() {
            // SAFETY: non-null; HIP's contract for the out-parameter. No single node is blamed.
            unsafe { pErrorNode.write(std::ptr::null_mut()) };
        }
        if let (Err(e), false) = (&result, pLogBuffer.is_null() || bufferSize == 0) {
            let text = &e.message;
            let n = text.len().min(bufferSize - 1);
            // SAFETY: the caller's buffer holds `bufferSize` bytes; `n + 1` of them are written.
            unsafe {
                std::ptr::copy_nonoverlapping(text.as_ptr(), pLogBuffer.cast::<u8>(), n);
                pLogBuffer.add(n).write(0);
            }
        }
        result
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphInstantiateWithFlags(pGraphExec: *mut hipGraphExec_t, graph: hipGraph_t, flags: c_ulonglong) -> hipError_t {
    hip_boundary!("hipGraphInstantiateWithFlags", { instantiate(pGraphExec, graph, flags) })
}

/// Before `exec` is launched on `stream`: its uploads' host bytes into their staging buffers.
fn before_launch(exec: u64, stream: u64) -> Result<(), CallError> {
    for copy in crate::state::graph_host::exec_copies(exec).iter().filter(|c| c.to_device) {
        // SAFETY: the node's host memory, `len` bytes, which HIP's contract keeps valid while
        // the graph holding the node may run.
        unsafe { crate::state::copy::copy(copy.staging as *mut c_void, copy.host as *const c_void, copy.len, hipMemcpyHostToDevice, Some(stream)) }?;
    }
    Ok(())
}

/// After `exec` was launched on `stream`: its downloads' staging buffers into host memory,
/// there once the stream is synchronised.
fn after_launch(exec: u64, stream: u64) -> Result<(), CallError> {
    for copy in crate::state::graph_host::exec_copies(exec).iter().filter(|c| !c.to_device) {
        // SAFETY: as in `before_launch`; HIP's contract keeps the destination valid until the
        // launch stream is synchronised.
        unsafe { crate::state::copy::copy(copy.host as *mut c_void, copy.staging as *const c_void, copy.len, hipMemcpyDeviceToHost, Some(stream)) }?;
    }
    Ok(())
}

/// One launch of `exec` on the wire stream `stream`, with the host side of its memcpy nodes of
/// host memory moved before and after it ([`crate::state::graph_host`]).
pub(super) fn launch(exec: hipGraphExec_t, stream: u64) -> Result<(), CallError> {
    before_launch(id(exec), stream)?;
    with_conn(|c| c.post::<calls::GraphLaunch>(wire::GraphLaunch { exec: id(exec), stream }))?;
    after_launch(id(exec), stream)
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphLaunch(graphExec: hipGraphExec_t, stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipGraphLaunch", {
        non_null!(graphExec);
        launch(graphExec, stream_id(stream))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecDestroy(graphExec: hipGraphExec_t) -> hipError_t {
    hip_boundary!("hipGraphExecDestroy", {
        non_null!(graphExec);
        with_conn(|c| c.graph_exec_destroy(wire::GraphExecRef { exec: id(graphExec) }))?;
        user_object::exec_destroyed(id(graphExec));
        crate::state::graph_host::exec_destroyed(id(graphExec))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphClone(pGraphClone: *mut hipGraph_t, originalGraph: hipGraph_t) -> hipError_t {
    hip_boundary!("hipGraphClone", {
        non_null!(pGraphClone);
        non_null!(originalGraph);
        let clone = with_conn(|c| c.graph_clone(wire::GraphRef { graph: id(originalGraph) }))?.graph;
        user_object::graph_cloned(id(originalGraph), clone);
        crate::state::graph_host::graph_cloned(id(originalGraph), clone);
        try_out!(pGraphClone, as_handle(clone)?);
        Ok(())
    })
}

/// The DOT text of `graph`: one vertex per node (labelled with its kind, and a kernel node
/// with its kernel's name and geometry), one arrow per edge.
fn dot_text(graph: hipGraph_t) -> Result<String, CallError> {
    let nodes = graph_nodes(graph, false)?;
    let (from, to) = graph_edges(graph)?;
    let mut dot = format!("digraph hipGraph_{:x} {{\n  compound=true;\n  node [shape=record];\n", id(graph));
    for (i, &node) in nodes.iter().enumerate() {
        let label = match node_kind(as_handle(node)?)? {
            GraphNodeKind::Kernel => {
                let (function, grid, block) = with_conn(|c| {
                    let p = c.graph_kernel_node_get_params(wire::GraphNodeRef { node })?;
                    Ok((p.function, p.grid, p.block))
                })?;
                let name =
                    module::function_by_worker(function).and_then(|h| module::function(h).ok()).map_or_else(|| "?".to_string(), |f| f.name.clone());
                format!("KERNEL | {{{name} | grid ({},{},{}) | block ({},{},{})}}", grid[0], grid[1], grid[2], block[0], block[1], block[2])
            }
            GraphNodeKind::Memset => "MEMSET".to_string(),
            GraphNodeKind::Memcpy => "MEMCPY".to_string(),
            GraphNodeKind::Host => "HOST".to_string(),
            GraphNodeKind::Empty => "EMPTY".to_string(),
            GraphNodeKind::Graph => "GRAPH".to_string(),
            GraphNodeKind::WaitEvent => "WAIT_EVENT".to_string(),
            GraphNodeKind::EventRecord => "EVENT_RECORD".to_string(),
            GraphNodeKind::MemAlloc => "MEM_ALLOC".to_string(),
            GraphNodeKind::MemFree => "MEM_FREE".to_string(),
            GraphNodeKind::BatchMemOp => "BATCH_MEM_OP".to_string(),
        };
        dot.push_str(&format!("  node{i} [label=\"{{{label} | node {node:#x}}}\"];\n"));
    }
    let index: HashMap<u64, usize> = nodes.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    for (f, t) in from.iter().zip(&to) {
        if let (Some(f), Some(t)) = (index.get(f), index.get(t)) {
            dot.push_str(&format!("  node{f} -> node{t};\n"));
        }
    }
    dot.push_str("}\n");
    Ok(dot)
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphDebugDotPrint(graph: hipGraph_t, path: *const c_char, _flags: c_uint) -> hipError_t {
    hip_boundary!("hipGraphDebugDotPrint", {
        non_null!(graph);
        non_null!(path);
        // SAFETY: non-null; HIP's contract says it is a NUL-terminated path.
        let path = unsafe { CStr::from_ptr(path) }.to_string_lossy().into_owned();
        let dot = dot_text(graph)?;
        let written = std::fs::File::create(&path).and_then(|mut f| f.write_all(dot.as_bytes()));
        written.map_err(|e| CallError::new(HipError::OPERATING_SYSTEM, format!("writing {path}: {e}")))
    })
}
