//! BLAS family: handles (session objects on a device) and routines, every operand checked
//! against the session's allocations before the backend sees it.

use super::{CallCx, Failure, Session};
use crate::backend::blas::{BlasCall, BlasHandle, Operand, Scalar};
use crate::backend::{DeviceIndex, DevicePtr, StreamHandle};
use proto_core::opcode::BlasHandler;
use proto_core::{wire, Status};

/// Most live BLAS handles one session may hold.
pub const MAX_BLAS_HANDLES_PER_SESSION: usize = 1024;

impl Session {
    /// The backend handle and device of a session handle.
    fn blas_handle(&self, handle: u64) -> Result<(BlasHandle, DeviceIndex), Failure> {
        self.blas.get(handle).copied().map_err(|_| Failure::new(Status::INVALID_VALUE, format!("BLAS handle {handle:#x} is not one of this session")))
    }

    /// The request as the backend takes it, each operand's extent checked against this
    /// session's allocations on the handle's device.
    fn blas_call(&self, req: &wire::BlasOp, device: DeviceIndex, to_host: bool) -> Result<BlasCall, Failure> {
        let operand = |ptr, [ld, stride]: [i64; 2]| Operand { ptr, ld, stride };
        use wire::BlasRoutine::*;
        // Only the scalars a routine reads are operands (device mode sends 0 for the others).
        let (uses_alpha, uses_beta) = match req.routine {
            Axpy | Scal | Ger | Gerc => (true, false),
            Gemv | Gemm => (true, true),
            _ => (false, false),
        };
        let scalar = |used: bool, value, ptr| match (used, req.device_scalars) {
            (true, true) => Scalar::Device(ptr),
            (true, false) => Scalar::Value(value),
            (false, _) => Scalar::Value([0; 16]),
        };
        let call = BlasCall {
            routine: req.routine,
            ab_type: req.ab_type,
            c_type: req.c_type,
            scalar_type: req.scalar_type,
            compute: req.compute,
            trans: req.trans,
            dims: req.dims,
            alpha: scalar(uses_alpha, req.alpha, req.alpha_ptr),
            beta: scalar(uses_beta, req.beta, req.beta_ptr),
            a: operand(req.a, req.a_layout),
            b: operand(req.b, req.b_layout),
            c: operand(req.c, req.c_layout),
            batch: req.batch,
            pointer_arrays: req.pointer_arrays,
            result: if to_host || !call_is_reduction(req.routine) { None } else { Some(req.result_ptr) },
        };
        if to_host && !call.is_reduction() {
            return Err(Failure::new(Status::INVALID_VALUE, format!("{:?} has no result to answer", call.routine)));
        }
        self.blas_check_extents(&call, device)?;
        Ok(call)
    }

    /// Checks every operand extent of `call` against this session's allocations on `device`
    /// (a graph's BLAS node again at every launch).
    pub(super) fn blas_check_extents(&self, call: &BlasCall, device: DeviceIndex) -> Result<(), Failure> {
        for (what, ptr, len) in call.extents()? {
            self.blas_operand(call.routine, what, ptr, len, device)?;
        }
        Ok(())
    }

    /// Checks that `[ptr, ptr + len)` lies in one allocation of this session on `device`.
    fn blas_operand(&self, routine: wire::BlasRoutine, what: &str, ptr: u64, len: u64, device: DeviceIndex) -> Result<(), Failure> {
        let (_, info) = self.allocations.resolve(ptr, len, &format!("BLAS {routine:?} operand {what}"))?;
        if info.device != device {
            return Err(Failure::new(
                Status::INVALID_VALUE,
                format!("BLAS operand {what} {ptr:#x} is on device {}, the handle on device {device}", info.device),
            ));
        }
        Ok(())
    }

    /// `gemmBatched`: reads the arrays of pointers (after the stream's earlier work, which may
    /// write them) and checks every matrix they name, so no backend's BLAS reads or writes
    /// outside the session's allocations.
    fn blas_check_pointer_arrays(&self, call: &BlasCall, stream: Option<StreamHandle>, device: DeviceIndex) -> Result<(), Failure> {
        if !call.pointer_arrays {
            return Ok(());
        }
        for (what, op, shape, ty) in call.operands()? {
            let span = u64::try_from(BlasCall::span(shape, op, ty))
                .map_err(|_| Failure::new(Status::INVALID_VALUE, format!("BLAS operand {what} spans more than 2^64 bytes")))?;
            let mut entries = Vec::with_capacity(call.batch as usize);
            self.backend.with_device_bytes(stream, DevicePtr(op.ptr), call.batch as u64 * 8, &mut |bytes| {
                entries.extend(bytes.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))));
            })?;
            for (i, ptr) in entries.into_iter().enumerate() {
                self.blas_operand(call.routine, &format!("{what}[{i}]"), ptr, span, device)?;
            }
        }
        Ok(())
    }

    /// Frees the session's BLAS handles, destroyed ones that graphs still held included (at
    /// session end, after no graph can launch any more).
    pub(super) fn release_blas(&mut self) {
        let live = self.blas.drain_where(|_| true).into_iter().map(|(_, (handle, _))| handle);
        let retired: Vec<BlasHandle> = std::mem::take(&mut self.blas_retired);
        for handle in live.chain(retired) {
            if let Err(e) = self.backend.blas_destroy(handle) {
                tracing::warn!(session = self.id, %e, "destroying a BLAS handle during cleanup failed");
            }
        }
    }

    /// Destroys the backend handles `hipblasDestroy` left to graphs that no graph node or
    /// executable graph uses any more.
    pub(super) fn blas_release_retired(&mut self) {
        if self.blas_retired.is_empty() {
            return;
        }
        let retired = std::mem::take(&mut self.blas_retired);
        for handle in retired {
            if self.graph_uses_blas(handle) {
                self.blas_retired.push(handle);
            } else if let Err(e) = self.backend.blas_destroy(handle) {
                tracing::warn!(session = self.id, %e, "destroying a BLAS handle no graph uses any more failed");
            }
        }
    }
}

fn call_is_reduction(routine: wire::BlasRoutine) -> bool {
    use wire::BlasRoutine::*;
    matches!(routine, Dot | Dotc | Nrm2 | Asum | Iamax | Iamin)
}

impl BlasHandler for Session {
    fn blas_create(&mut self, _cx: &mut CallCx, req: wire::BlasCreate) -> Result<wire::BlasHandle, Failure> {
        self.blas.check_capacity()?;
        // Destroyed handles graphs still hold count too: they keep the backend's handle.
        if self.blas.len() + self.blas_retired.len() >= MAX_BLAS_HANDLES_PER_SESSION {
            return Err(Failure::new(
                Status::OUT_OF_MEMORY,
                format!("session holds the maximum of {MAX_BLAS_HANDLES_PER_SESSION} BLAS handles (destroyed ones that graphs still use count until the graphs go)"),
            ));
        }
        let device = self.device(req.device)?;
        let handle = self.backend.blas_create(device)?;
        Ok(wire::BlasHandle { handle: self.blas.insert((handle, device)) })
    }

    fn blas_destroy(&mut self, _cx: &mut CallCx, req: wire::BlasHandle) -> Result<wire::Empty, Failure> {
        self.blas_handle(req.handle)?;
        let (handle, _) = self.blas.remove(req.handle)?;
        // A graph holding BLAS nodes of this handle keeps the backend's handle until it goes.
        if self.graph_uses_blas(handle) {
            self.blas_retired.push(handle);
        } else {
            self.backend.blas_destroy(handle)?;
        }
        Ok(wire::Empty {})
    }

    fn blas_launch(&mut self, _cx: &mut CallCx, req: wire::BlasOp) -> Result<wire::Empty, Failure> {
        let (handle, device) = self.blas_handle(req.handle)?;
        let call = self.blas_call(&req, device, false)?;
        if self.capture_blas(req.stream, handle, device, call)? {
            return Ok(wire::Empty {});
        }
        let stream = self.stream(req.stream, device)?;
        self.blas_check_pointer_arrays(&call, stream, device)?;
        self.backend.blas_launch(handle, stream, &call)?;
        Ok(wire::Empty {})
    }

    fn blas_reduce(&mut self, _cx: &mut CallCx, req: wire::BlasOp) -> Result<wire::BlasResult, Failure> {
        let (handle, device) = self.blas_handle(req.handle)?;
        let call = self.blas_call(&req, device, true)?;
        // Answering the host means waiting for the stream, which a capture cannot record (as
        // the synchronisation cuBLAS and rocBLAS make there is refused).
        let why = format!("BLAS {:?} answering the host waits for the stream; in captured work use HIPBLAS_POINTER_MODE_DEVICE", call.routine);
        self.capture_refuse(req.stream, &why)?;
        let stream = self.stream(req.stream, device)?;
        let value = self.backend.blas_reduce(handle, stream, &call)?;
        Ok(wire::BlasResult { value })
    }
}
