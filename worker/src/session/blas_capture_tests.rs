//! hipBLAS routines captured from a stream, through the session's handler methods on the host
//! backend: recorded not run, replayed at every launch, checked again at launch, and the
//! backend's handle kept while a graph holds it.

use super::*;
use crate::backend::{DevicePtr, HostBackend, HostConfig, MemoryBackend};
use proto_core::opcode::{BlasHandler, GraphHandler, MemoryHandler, StreamHandler};
use proto_core::{wire, Bulk, Status};

const N: usize = 64;

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes"))).collect()
}

fn upload(session: &mut Session, io: &mut CallCx, ptr: u64, values: &[f32]) {
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    session.memcpy_htod(io, wire::MemcpyHtoD { dst: ptr, stream: 0, sync: true, data: Bulk(&data) }).unwrap();
}

/// `y = alpha x + y` (saxpy) on `stream`, host scalar.
fn saxpy(handle: u64, stream: u64, alpha: f32, x: u64, y: u64) -> wire::BlasOp {
    let mut alpha_bytes = [0u8; 16];
    alpha_bytes[..4].copy_from_slice(&alpha.to_le_bytes());
    wire::BlasOp {
        handle,
        stream,
        routine: wire::BlasRoutine::Axpy,
        ab_type: wire::BlasType::R32F,
        c_type: wire::BlasType::R32F,
        scalar_type: wire::BlasType::R32F,
        compute: 2,
        trans: [wire::blas_op::N, wire::blas_op::N],
        dims: [N as i64, 0, 0],
        device_scalars: false,
        alpha: alpha_bytes,
        beta: [0; 16],
        alpha_ptr: 0,
        beta_ptr: 0,
        a: x,
        a_layout: [1, 0],
        b: 0,
        b_layout: [0, 0],
        c: y,
        c_layout: [1, 0],
        batch: 1,
        pointer_arrays: false,
        result_ptr: 0,
    }
}

#[test]
fn captured_blas_runs_at_every_launch_and_keeps_its_handle() {
    let backend = Arc::new(HostBackend::new(HostConfig { devices: 1, memory_per_device: 16 << 20, ..HostConfig::default() }));
    let mut session = Session::new(backend.clone(), Arc::new(SessionConfig::default()));
    let io = &mut CallCx::new(1, proto_core::Opcode::Ping, false, 0);
    let bytes = (4 * N) as u64;
    let x = session.malloc(io, wire::Malloc { device: 0, size: bytes, flags: 0 }).unwrap().ptr;
    let y = session.malloc(io, wire::Malloc { device: 0, size: bytes, flags: 0 }).unwrap().ptr;
    let xs: Vec<f32> = (0..N).map(|i| i as f32 * 0.5 - 3.0).collect();
    let y0: Vec<f32> = (0..N).map(|i| 10.0 - i as f32).collect();
    upload(&mut session, io, x, &xs);
    upload(&mut session, io, y, &y0);
    let stream = session.stream_create(io, wire::StreamCreate { device: 0, flags: 0, priority: 0 }).unwrap().stream;
    let handle = session.blas_create(io, wire::BlasCreate { device: 0 }).unwrap().handle;

    let begin = wire::StreamBeginCapture { stream, mode: 2, thread: 1, graph: 0, dependencies: Default::default() };
    session.stream_begin_capture(io, begin).unwrap();
    session.blas_launch(io, saxpy(handle, stream, 2.0, x, y)).unwrap();
    let graph = session.stream_end_capture(io, wire::StreamEndCapture { stream, thread: 1 }).unwrap().graph;
    let read_y = |backend: &HostBackend| {
        let mut out = vec![0u8; 4 * N];
        backend.memcpy_dtoh_sync(None, DevicePtr(y), &mut out).unwrap();
        floats(&out)
    };
    assert_eq!(read_y(&backend), y0, "the captured routine ran at capture time");

    let exec = session.graph_instantiate(io, wire::GraphInstantiate { graph, flags: 0 }).unwrap().exec;
    session.blas_destroy(io, wire::BlasHandle { handle }).unwrap();
    assert_eq!(session.blas_retired.len(), 1, "the graph keeps the backend's handle");
    for launch in 1..=2 {
        session.graph_launch(io, wire::GraphLaunch { exec, stream }).unwrap();
        session.stream_synchronize(io, wire::StreamRef { stream }).unwrap();
        let want: Vec<f32> = y0.iter().zip(&xs).map(|(y, x)| y + launch as f32 * 2.0 * x).collect();
        assert_eq!(read_y(&backend), want, "launch {launch}");
    }

    // Freed operand memory: the launch is refused before the backend's BLAS sees it.
    session.free(io, wire::Free { ptr: x }).unwrap();
    let (status, why) = match session.graph_launch(io, wire::GraphLaunch { exec, stream }) {
        Err(Failure::Status(status, why)) => (status, why),
        other => panic!("a launch over freed memory: {other:?}"),
    };
    assert_eq!(status, Status::INVALID_VALUE, "{why}");

    session.graph_exec_destroy(io, wire::GraphExecRef { exec }).unwrap();
    assert_eq!(session.blas_retired.len(), 1, "the graph itself still holds the node");
    session.graph_destroy(io, wire::GraphRef { graph }).unwrap();
    assert!(session.blas_retired.is_empty(), "no graph uses the handle any more");
}
