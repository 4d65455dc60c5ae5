//! Executable graphs after instantiation: `hipGraphExec*NodeSetParams*`, `hipGraphExecUpdate`,
//! `hipGraphNodeSetEnabled`/`GetEnabled`, `hipGraphUpload`, `hipGraphInstantiateWithParams`,
//! `hipGraphExecGetFlags`, `hipGraphLaunch_spt`. Every per-node setter sends the one
//! `GraphExecSetNode` message (a 3D copy its `GraphExecSetCopyNode` twin) with the fields an
//! add would send; the worker checks them as adding does. Argument checks and error codes
//! follow ROCm's `hip_graph.cpp`.

use super::{as_handle, id, invalid, kernel_launch};
use crate::abi::*;
use crate::api::module::register::symbol_range;
use crate::handle::{spt, stream_id};
use crate::remote::with_conn;
use crate::state::allocations::is_device_pointer;
use client_core::CallError;
use proto_core::wire::{self, GraphExecUpdateResult, GraphNodeKind};
use proto_core::Calls;
use std::ffi::{c_uint, c_ulonglong, c_void};

/// `hipGraphInstantiateFlag{AutoFreeOnLaunch, Upload, DeviceLaunch, UseNodePriority}`: HIP
/// takes one of them or none.
const INSTANTIATE_FLAGS: [u64; 5] = [0, 1, 2, 4, 8];
const INSTANTIATE_FLAG_UPLOAD: u64 = 2;

/// A blank setter request for `node` of `exec` (the kind's fields are filled by the caller).
fn set_request<'a>(exec: hipGraphExec_t, node: hipGraphNode_t, kind: GraphNodeKind) -> wire::GraphExecSetNode<'a> {
    wire::GraphExecSetNode {
        exec: id(exec),
        node: id(node),
        kind,
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

fn check_exec_node(exec: hipGraphExec_t, node: hipGraphNode_t) -> Result<(), CallError> {
    non_null!(exec);
    non_null!(node);
    Ok(())
}

/// # Safety
/// HIP's contract for `hipKernelNodeParams`.
unsafe fn set_kernel(exec: hipGraphExec_t, node: hipGraphNode_t, params: *const hipKernelNodeParams) -> Result<(), CallError> {
    check_exec_node(exec, node)?;
    non_null!(params);
    // SAFETY: non-null; caller contract.
    if unsafe { (*params).func.is_null() } {
        return Err(invalid("the kernel node's func is NULL"));
    }
    // SAFETY: caller contract.
    let (f, p, args) = unsafe { kernel_launch(params)? };
    let mut req = set_request(exec, node, GraphNodeKind::Kernel);
    req.function = f.worker;
    req.grid = [p.gridDim.x, p.gridDim.y, p.gridDim.z];
    req.block = [p.blockDim.x, p.blockDim.y, p.blockDim.z];
    req.shared_mem = p.sharedMemBytes;
    req.args = args.as_slice().into();
    with_conn(|c| c.graph_exec_set_node(req))?;
    Ok(())
}

/// # Safety
/// HIP's contract for `hipMemsetParams`.
unsafe fn set_memset(exec: hipGraphExec_t, node: hipGraphNode_t, params: *const hipMemsetParams) -> Result<(), CallError> {
    check_exec_node(exec, node)?;
    non_null!(params);
    // SAFETY: non-null; caller contract.
    let p = unsafe { params.read() };
    non_null!(p.dst);
    let mut req = set_request(exec, node, GraphNodeKind::Memset);
    req.dst = p.dst as u64;
    req.value = p.value;
    req.element_size = p.elementSize;
    req.width = p.width as u64;
    req.height = p.height as u64;
    req.pitch = p.pitch as u64;
    with_conn(|c| c.graph_exec_set_node(req))?;
    Ok(())
}

fn set_memcpy_1d(
    exec: hipGraphExec_t,
    node: hipGraphNode_t,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: hipMemcpyKind,
) -> Result<(), CallError> {
    check_exec_node(exec, node)?;
    if dst.is_null() || src.is_null() || count == 0 || std::ptr::eq(dst, src) {
        return Err(invalid(format!("memcpy node of {count} bytes from {src:p} to {dst:p}")));
    }
    if (kind != hipMemcpyDeviceToDevice && kind != hipMemcpyDefault) || !is_device_pointer(dst as u64) || !is_device_pointer(src as u64) {
        // As adding: a node copying the client's host memory at every replay is not supported.
        return Err(CallError::new(
            HipError::NOT_SUPPORTED,
            format!("memcpy nodes copy device to device only for now (kind {kind}, dst {dst:p}, src {src:p})"),
        ));
    }
    let mut req = set_request(exec, node, GraphNodeKind::Memcpy);
    req.dst = dst as u64;
    req.src = src as u64;
    req.width = count as u64;
    with_conn(|c| c.graph_exec_set_node(req))?;
    Ok(())
}

/// # Safety
/// HIP's contract for `hipMemcpy3DParms`.
unsafe fn set_memcpy_3d(exec: hipGraphExec_t, node: hipGraphNode_t, params: *const hipMemcpy3DParms) -> Result<(), CallError> {
    check_exec_node(exec, node)?;
    non_null!(params);
    // SAFETY: caller contract.
    let c = unsafe { crate::api::array::graph_copy_3d(params)? };
    set_copy(exec, node, &c)
}

/// A checked copy as the new parameters of the memcpy node `node` of `exec`.
fn set_copy(exec: hipGraphExec_t, node: hipGraphNode_t, c: &wire::Copy3D) -> Result<(), CallError> {
    let req = wire::GraphExecSetCopyNode { exec: id(exec), node: id(node), copy: c.copy.clone() };
    with_conn(|c| c.graph_exec_set_copy_node(req))?;
    Ok(())
}

/// # Safety
/// HIP's contract for `hipHostNodeParams`.
unsafe fn set_host(exec: hipGraphExec_t, node: hipGraphNode_t, params: *const hipHostNodeParams) -> Result<(), CallError> {
    check_exec_node(exec, node)?;
    non_null!(params);
    // SAFETY: non-null; caller contract.
    let p = unsafe { params.read() };
    let f = p.fn_.ok_or_else(|| invalid("the host node's fn is NULL"))?;
    // The original graph's node keeps its own callback, so this one is registered anew.
    let token = crate::callbacks::register_persistent(crate::callbacks::Callback::Host { f, user: p.userData as usize })?;
    let mut req = set_request(exec, node, GraphNodeKind::Host);
    req.host_token = token;
    with_conn(|c| c.graph_exec_set_node(req))?;
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecKernelNodeSetParams(
    hGraphExec: hipGraphExec_t,
    node: hipGraphNode_t,
    pNodeParams: *const hipKernelNodeParams,
) -> hipError_t {
    // SAFETY: HIP's contract for the parameters.
    hip_boundary!("hipGraphExecKernelNodeSetParams", { unsafe { set_kernel(hGraphExec, node, pNodeParams) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecMemsetNodeSetParams(
    hGraphExec: hipGraphExec_t,
    node: hipGraphNode_t,
    pNodeParams: *const hipMemsetParams,
) -> hipError_t {
    // SAFETY: HIP's contract for the parameters.
    hip_boundary!("hipGraphExecMemsetNodeSetParams", { unsafe { set_memset(hGraphExec, node, pNodeParams) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecMemcpyNodeSetParams1D(
    hGraphExec: hipGraphExec_t,
    node: hipGraphNode_t,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    hip_boundary!("hipGraphExecMemcpyNodeSetParams1D", { set_memcpy_1d(hGraphExec, node, dst, src, count, kind) })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecMemcpyNodeSetParams(
    hGraphExec: hipGraphExec_t,
    node: hipGraphNode_t,
    pNodeParams: *mut hipMemcpy3DParms,
) -> hipError_t {
    // SAFETY: HIP's contract for the parameters.
    hip_boundary!("hipGraphExecMemcpyNodeSetParams", { unsafe { set_memcpy_3d(hGraphExec, node, pNodeParams) } })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecMemcpyNodeSetParamsToSymbol(
    hGraphExec: hipGraphExec_t,
    node: hipGraphNode_t,
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    hip_boundary!("hipGraphExecMemcpyNodeSetParamsToSymbol", {
        non_null!(symbol);
        // The variable's address is known here (the client registered it).
        let dst = symbol_range(symbol, offset, count)?;
        set_memcpy_1d(hGraphExec, node, dst, src, count, kind)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecMemcpyNodeSetParamsFromSymbol(
    hGraphExec: hipGraphExec_t,
    node: hipGraphNode_t,
    dst: *mut c_void,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    hip_boundary!("hipGraphExecMemcpyNodeSetParamsFromSymbol", {
        non_null!(symbol);
        let src = symbol_range(symbol, offset, count)?;
        set_memcpy_1d(hGraphExec, node, dst, src, count, kind)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecHostNodeSetParams(
    hGraphExec: hipGraphExec_t,
    node: hipGraphNode_t,
    pNodeParams: *const hipHostNodeParams,
) -> hipError_t {
    // SAFETY: HIP's contract for the parameters.
    hip_boundary!("hipGraphExecHostNodeSetParams", { unsafe { set_host(hGraphExec, node, pNodeParams) } })
}

#[no_mangle]
#[allow(non_upper_case_globals)] // hipGraphNodeType constants keep their C names
pub unsafe extern "C" fn hipGraphExecNodeSetParams(
    graphExec: hipGraphExec_t,
    node: hipGraphNode_t,
    nodeParams: *mut hipGraphNodeParams,
) -> hipError_t {
    hip_boundary!("hipGraphExecNodeSetParams", {
        check_exec_node(graphExec, node)?;
        non_null!(nodeParams);
        // SAFETY: non-null; HIP's contract says it points at a hipGraphNodeParams whose union
        // member is the one `type` names.
        unsafe {
            let p = &*nodeParams;
            match p.type_ {
                hipGraphNodeTypeKernel => set_kernel(graphExec, node, &p.__bindgen_anon_1.kernel),
                hipGraphNodeTypeMemcpy => set_memcpy_3d(graphExec, node, &p.__bindgen_anon_1.memcpy.copyParams),
                hipGraphNodeTypeMemset => set_memset(graphExec, node, &p.__bindgen_anon_1.memset),
                hipGraphNodeTypeHost => set_host(graphExec, node, &p.__bindgen_anon_1.host),
                hipGraphNodeTypeGraph
                | hipGraphNodeTypeWaitEvent
                | hipGraphNodeTypeEventRecord
                | hipGraphNodeTypeExtSemaphoreSignal
                | hipGraphNodeTypeExtSemaphoreWait
                | hipGraphNodeTypeMemAlloc
                | hipGraphNodeTypeMemFree => {
                    Err(CallError::new(HipError::NOT_SUPPORTED, format!("hipGraphExecNodeSetParams for node type {}", p.type_)))
                }
                other => Err(invalid(format!("hipGraphExecNodeSetParams for node type {other}"))),
            }
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecUpdate(
    hGraphExec: hipGraphExec_t,
    hGraph: hipGraph_t,
    hErrorNode_out: *mut hipGraphNode_t,
    updateResult_out: *mut hipGraphExecUpdateResult,
) -> hipError_t {
    hip_boundary!("hipGraphExecUpdate", {
        non_null!(hGraphExec);
        non_null!(hGraph);
        non_null!(hErrorNode_out);
        non_null!(updateResult_out);
        let reply = with_conn(|c| c.graph_exec_update(wire::GraphExecUpdate { exec: id(hGraphExec), graph: id(hGraph) }))?;
        // SAFETY: both checked non-null; HIP's contract for the out-parameters.
        unsafe {
            hErrorNode_out.write(as_handle(reply.error_node)?);
            updateResult_out.write(reply.result as hipGraphExecUpdateResult);
        }
        match reply.result {
            GraphExecUpdateResult::Success => Ok(()),
            refused => Err(CallError::new(HipError::GRAPH_EXEC_UPDATE_FAILURE, format!("hipGraphExecUpdate refused: {refused:?}"))),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphNodeSetEnabled(hGraphExec: hipGraphExec_t, hNode: hipGraphNode_t, isEnabled: c_uint) -> hipError_t {
    hip_boundary!("hipGraphNodeSetEnabled", {
        check_exec_node(hGraphExec, hNode)?;
        let req = wire::GraphNodeSetEnabled { exec: id(hGraphExec), node: id(hNode), enabled: isEnabled != 0 };
        with_conn(|c| c.graph_node_set_enabled(req))?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphNodeGetEnabled(hGraphExec: hipGraphExec_t, hNode: hipGraphNode_t, isEnabled: *mut c_uint) -> hipError_t {
    hip_boundary!("hipGraphNodeGetEnabled", {
        check_exec_node(hGraphExec, hNode)?;
        non_null!(isEnabled);
        let enabled = with_conn(|c| c.graph_node_get_enabled(wire::GraphExecNodeRef { exec: id(hGraphExec), node: id(hNode) }))?.enabled;
        try_out!(isEnabled, c_uint::from(enabled));
        Ok(())
    })
}

fn upload(exec: hipGraphExec_t, stream: hipStream_t) -> Result<(), CallError> {
    non_null!(exec);
    let req = wire::GraphUpload { exec: id(exec), stream: stream_id(stream) };
    with_conn(|c| c.graph_upload(req))?;
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphUpload(graphExec: hipGraphExec_t, stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipGraphUpload", { upload(graphExec, stream) })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphInstantiateWithParams(
    pGraphExec: *mut hipGraphExec_t,
    graph: hipGraph_t,
    instantiateParams: *mut hipGraphInstantiateParams,
) -> hipError_t {
    hip_boundary!("hipGraphInstantiateWithParams", {
        non_null!(pGraphExec);
        non_null!(graph);
        non_null!(instantiateParams);
        // SAFETY: non-null; HIP's contract says it points at a hipGraphInstantiateParams.
        let params = unsafe { &mut *instantiateParams };
        if !INSTANTIATE_FLAGS.contains(&params.flags) {
            params.result_out = hipGraphInstantiateError;
            return Err(invalid(format!("hipGraphInstantiateWithParams flags {:#x}", params.flags)));
        }
        if let Err(e) = super::instantiate(pGraphExec, graph, params.flags) {
            params.result_out = hipGraphInstantiateError;
            return Err(e);
        }
        params.result_out = hipGraphInstantiateSuccess;
        params.errNode_out = std::ptr::null_mut();
        if params.flags == INSTANTIATE_FLAG_UPLOAD {
            // SAFETY: written by the successful instantiation above.
            upload(unsafe { pGraphExec.read() }, params.uploadStream)?;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecGetFlags(graphExec: hipGraphExec_t, flags: *mut c_ulonglong) -> hipError_t {
    hip_boundary!("hipGraphExecGetFlags", {
        non_null!(graphExec);
        non_null!(flags);
        let value = with_conn(|c| c.graph_exec_get_flags(wire::GraphExecRef { exec: id(graphExec) }))?.flags;
        try_out!(flags, value);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphLaunch_spt(graphExec: hipGraphExec_t, stream: hipStream_t) -> hipError_t {
    hip_boundary!("hipGraphLaunch_spt", {
        non_null!(graphExec);
        super::launch(graphExec, stream_id(spt(stream)))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDrvGraphExecMemcpyNodeSetParams(
    hGraphExec: hipGraphExec_t,
    hNode: hipGraphNode_t,
    copyParams: *const HIP_MEMCPY3D,
    _ctx: hipCtx_t,
) -> hipError_t {
    // The context names the device, which the copy's memory already fixes.
    hip_boundary!("hipDrvGraphExecMemcpyNodeSetParams", {
        check_exec_node(hGraphExec, hNode)?;
        // SAFETY: HIP's contract for the copy parameters.
        let c = unsafe { crate::api::array::graph_copy_drv(copyParams)? };
        set_copy(hGraphExec, hNode, &c)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDrvGraphExecMemsetNodeSetParams(
    hGraphExec: hipGraphExec_t,
    hNode: hipGraphNode_t,
    memsetParams: *const hipMemsetParams,
    _ctx: hipCtx_t,
) -> hipError_t {
    // The context names the device, which the destination's allocation already fixes.
    // SAFETY: HIP's contract for the parameters.
    hip_boundary!("hipDrvGraphExecMemsetNodeSetParams", { unsafe { set_memset(hGraphExec, hNode, memsetParams) } })
}

fn set_event(exec: hipGraphExec_t, node: hipGraphNode_t, event: hipEvent_t, wait: bool) -> Result<(), CallError> {
    check_exec_node(exec, node)?;
    non_null!(event);
    let req = wire::GraphExecSetEventNode { exec: id(exec), node: id(node), event: id(event), wait };
    with_conn(|c| c.graph_exec_set_event_node(req))?;
    Ok(())
}

#[no_mangle]
pub extern "C" fn hipGraphExecEventRecordNodeSetEvent(hGraphExec: hipGraphExec_t, hNode: hipGraphNode_t, event: hipEvent_t) -> hipError_t {
    hip_boundary!("hipGraphExecEventRecordNodeSetEvent", { set_event(hGraphExec, hNode, event, false) })
}

#[no_mangle]
pub extern "C" fn hipGraphExecEventWaitNodeSetEvent(hGraphExec: hipGraphExec_t, hNode: hipGraphNode_t, event: hipEvent_t) -> hipError_t {
    hip_boundary!("hipGraphExecEventWaitNodeSetEvent", { set_event(hGraphExec, hNode, event, true) })
}

#[no_mangle]
pub extern "C" fn hipGraphExecChildGraphNodeSetParams(hGraphExec: hipGraphExec_t, node: hipGraphNode_t, childGraph: hipGraph_t) -> hipError_t {
    hip_boundary!("hipGraphExecChildGraphNodeSetParams", {
        check_exec_node(hGraphExec, node)?;
        non_null!(childGraph);
        let req = wire::GraphExecSetChildNode { exec: id(hGraphExec), node: id(node), child: id(childGraph) };
        with_conn(|c| c.graph_exec_set_child_node(req))?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphExecBatchMemOpNodeSetParams(
    hGraphExec: hipGraphExec_t,
    hNode: hipGraphNode_t,
    nodeParams: *const hipBatchMemOpNodeParams,
) -> hipError_t {
    hip_boundary!("hipGraphExecBatchMemOpNodeSetParams", {
        check_exec_node(hGraphExec, hNode)?;
        // SAFETY: HIP's contract for the node parameters.
        let (flags, ops) = unsafe { crate::api::graph_nodes::batch_words(nodeParams)? };
        let req = wire::GraphExecSetBatchMemOpNode { exec: id(hGraphExec), node: id(hNode), flags, ops: proto_core::field::List(&ops) };
        with_conn(|c| c.graph_exec_set_batch_mem_op_node(req))?;
        Ok(())
    })
}
