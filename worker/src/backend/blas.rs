//! BLAS (hipBLAS calls forwarded by `libhipblas.so.3`): one routine description, its operands'
//! extents, and the trait each backend implements with its device's BLAS.
//!
//! The session checks every operand against its allocations (with [`BlasCall::operands`])
//! before the backend runs anything; a backend still resolves what it dereferences.

use super::{BackendError, DeviceIndex, StreamHandle};
pub use proto_core::wire::{blas_op, BlasRoutine as Routine, BlasType as ElemType};

/// A backend's BLAS handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlasHandle(pub u64);

/// One operand: address, leading dimension (vectors: increment), batch stride (elements).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Operand {
    /// Device address (of the operand, or of its array of pointers).
    pub ptr: u64,
    /// Leading dimension, or increment for a vector.
    pub ld: i64,
    /// Elements between consecutive batch members.
    pub stride: i64,
}

/// A scalar (`alpha`, `beta`): by value or at a device address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    /// The value's bytes (of the call's scalar type), zero-padded.
    Value([u8; 16]),
    /// A device address holding it.
    Device(u64),
}

/// One BLAS routine, as the protocol's `BlasOp` carries it (see `docs/PROTOCOL.md`, BLAS):
/// the operand a routine writes is always `c`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlasCall {
    /// The routine.
    pub routine: Routine,
    /// Element type of A and B.
    pub ab_type: ElemType,
    /// Element type of C (real result type of `nrm2`/`asum`).
    pub c_type: ElemType,
    /// Type of `alpha` and `beta`.
    pub scalar_type: ElemType,
    /// `hipblasComputeType_t`.
    pub compute: u32,
    /// `hipblasOperation_t` of A and B.
    pub trans: [u32; 2],
    /// `m`, `n`, `k` (level 1: `n` is `dims[0]`).
    pub dims: [i64; 3],
    /// `alpha`.
    pub alpha: Scalar,
    /// `beta`.
    pub beta: Scalar,
    /// Operand A.
    pub a: Operand,
    /// Operand B.
    pub b: Operand,
    /// Operand C.
    pub c: Operand,
    /// Batch count.
    pub batch: i64,
    /// Whether `a`, `b`, `c` are device arrays of `batch` device pointers.
    pub pointer_arrays: bool,
    /// Where a reduction's result goes on the device (`None`: answered to the host).
    pub result: Option<u64>,
}

/// Which operands a routine reads or writes, and their shapes: `(rows, cols)` for matrices,
/// `(n, 1)` for vectors (whose `ld` is the increment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A vector of `n` elements.
    Vector(i64),
    /// A column-major `rows × cols` matrix.
    Matrix(i64, i64),
}

/// The largest dimension, leading dimension, increment, stride or batch count accepted:
/// beyond it, products of them could overflow the extent arithmetic.
pub const MAX_BLAS_DIM: i64 = 1 << 31;

fn invalid(msg: String) -> BackendError {
    BackendError::InvalidValue(msg)
}

impl BlasCall {
    /// `(m, n, k)`.
    pub fn mnk(&self) -> (i64, i64, i64) {
        (self.dims[0], self.dims[1], self.dims[2])
    }

    /// Whether the routine is a reduction (`dot`, `nrm2`, `asum`, `iamax`, `iamin`).
    pub fn is_reduction(&self) -> bool {
        matches!(self.routine, Routine::Dot | Routine::Dotc | Routine::Nrm2 | Routine::Asum | Routine::Iamax | Routine::Iamin)
    }

    /// Bytes of a reduction's result (an `i32` index, or a value of `c_type`).
    pub fn result_size(&self) -> u64 {
        match self.routine {
            Routine::Iamax | Routine::Iamin => 4,
            _ => self.c_type.size(),
        }
    }

    /// Operands `(name, operand, shape, element type)` the routine touches (the one it writes
    /// last), after checking
    /// the dimensions as hipBLAS does (negative sizes, leading dimensions smaller than the
    /// rows, zero increments where they are meaningless are `InvalidValue`). Empty when the
    /// routine has nothing to do (a quick return).
    pub fn operands(&self) -> Result<Vec<(&'static str, Operand, Shape, ElemType)>, BackendError> {
        for (i, &d) in self.dims.iter().enumerate() {
            if !(0..=MAX_BLAS_DIM).contains(&d) {
                return Err(invalid(format!("dimension {i} is {d} (must be 0..={MAX_BLAS_DIM})")));
            }
        }
        if !(0..=MAX_BLAS_DIM).contains(&self.batch) {
            return Err(invalid(format!("batch count {} (must be 0..={MAX_BLAS_DIM})", self.batch)));
        }
        for t in self.trans {
            if !(blas_op::N..=blas_op::C).contains(&t) {
                return Err(invalid(format!("hipblasOperation_t {t}")));
            }
        }
        let (m, n, k) = self.mnk();
        let (ab, c) = (self.ab_type, self.c_type);
        let vec_len = self.dims[0];
        let mut ops = Vec::new();
        let mut vector = |name, op: Operand, ty| {
            if op.ld <= 0 {
                return Err(BackendError::NotSupported(format!("{name}: increment {} (only positive increments are supported)", op.ld)));
            }
            ops.push((name, op, Shape::Vector(vec_len), ty));
            Ok(())
        };
        if self.batch == 0 {
            return Ok(Vec::new());
        }
        match self.routine {
            Routine::Axpy | Routine::Copy | Routine::Swap => {
                if vec_len == 0 {
                    return Ok(Vec::new());
                }
                vector("x", self.a, ab)?;
                vector("y", self.c, c)?;
            }
            Routine::Scal => {
                if vec_len == 0 {
                    return Ok(Vec::new());
                }
                vector("x", self.c, c)?;
            }
            Routine::Dot | Routine::Dotc => {
                if vec_len > 0 {
                    vector("x", self.a, ab)?;
                    vector("y", self.b, ab)?;
                }
            }
            Routine::Nrm2 | Routine::Asum | Routine::Iamax | Routine::Iamin => {
                if vec_len > 0 {
                    vector("x", self.a, ab)?;
                }
            }
            Routine::Gemv => {
                let ld_min = m.max(1);
                if self.a.ld < ld_min {
                    return Err(invalid(format!("lda {} < max(1, m = {m})", self.a.ld)));
                }
                if m == 0 || n == 0 {
                    return Ok(Vec::new());
                }
                let (x_len, y_len) = if self.trans[0] == blas_op::N { (n, m) } else { (m, n) };
                for (name, op) in [("x", self.b), ("y", self.c)] {
                    if op.ld <= 0 {
                        return Err(BackendError::NotSupported(format!("{name}: increment {} (only positive increments are supported)", op.ld)));
                    }
                }
                ops.push(("x", self.b, Shape::Vector(x_len), ab));
                ops.push(("A", self.a, Shape::Matrix(m, n), ab));
                ops.push(("y", self.c, Shape::Vector(y_len), c));
            }
            Routine::Ger | Routine::Gerc => {
                if self.c.ld < m.max(1) {
                    return Err(invalid(format!("lda {} < max(1, m = {m})", self.c.ld)));
                }
                if m == 0 || n == 0 {
                    return Ok(Vec::new());
                }
                for (name, op, len) in [("x", self.a, m), ("y", self.b, n)] {
                    if op.ld <= 0 {
                        return Err(BackendError::NotSupported(format!("{name}: increment {} (only positive increments are supported)", op.ld)));
                    }
                    ops.push((name, op, Shape::Vector(len), ab));
                }
                ops.push(("A", self.c, Shape::Matrix(m, n), ab));
            }
            Routine::Gemm => {
                let (a_rows, a_cols) = if self.trans[0] == blas_op::N { (m, k) } else { (k, m) };
                let (b_rows, b_cols) = if self.trans[1] == blas_op::N { (k, n) } else { (n, k) };
                for (name, op, rows) in [("A", self.a, a_rows), ("B", self.b, b_rows), ("C", self.c, m)] {
                    if op.ld < rows.max(1) {
                        return Err(invalid(format!("leading dimension of {name} {} < max(1, {rows})", op.ld)));
                    }
                }
                if m == 0 || n == 0 {
                    return Ok(Vec::new());
                }
                if k > 0 {
                    ops.push(("A", self.a, Shape::Matrix(a_rows, a_cols), ab));
                    ops.push(("B", self.b, Shape::Matrix(b_rows, b_cols), ab));
                }
                ops.push(("C", self.c, Shape::Matrix(m, n), c));
            }
        }
        for (name, op, _, _) in &ops {
            if !(0..=MAX_BLAS_DIM).contains(&op.ld) || !(0..=MAX_BLAS_DIM * MAX_BLAS_DIM).contains(&op.stride) {
                return Err(invalid(format!("{name}: leading dimension {} or stride {} out of range", op.ld, op.stride)));
            }
        }
        Ok(ops)
    }

    /// Bytes one batch member of an operand spans from its first element (computed wide:
    /// the dimensions' products may exceed 64 bits, and are refused then).
    pub fn span(shape: Shape, op: Operand, ty: ElemType) -> u128 {
        let ld = op.ld.max(0) as u128;
        let elems = match shape {
            Shape::Vector(n) => (n.max(1) - 1) as u128 * ld + 1,
            Shape::Matrix(rows, cols) => (cols.max(1) - 1) as u128 * ld + rows.max(1) as u128,
        };
        elems * u128::from(ty.size())
    }

    /// `(address, bytes)` of every strided operand's whole extent over the batch (for
    /// pointer arrays: the arrays themselves, `batch` pointers each), and of the device
    /// scalars and result.
    pub fn extents(&self) -> Result<Vec<(&'static str, u64, u64)>, BackendError> {
        let mut out = Vec::new();
        for (name, op, shape, ty) in self.operands()? {
            let bytes = if self.pointer_arrays {
                self.batch as u128 * 8
            } else {
                Self::span(shape, op, ty) + (self.batch as u128 - 1) * op.stride as u128 * u128::from(ty.size())
            };
            let bytes = u64::try_from(bytes).map_err(|_| invalid(format!("operand {name} spans {bytes} bytes")))?;
            out.push((name, op.ptr, bytes));
        }
        for (name, scalar) in [("alpha", self.alpha), ("beta", self.beta)] {
            if let Scalar::Device(ptr) = scalar {
                out.push((name, ptr, self.scalar_type.size()));
            }
        }
        if let Some(ptr) = self.result {
            out.push(("result", ptr, self.result_size()));
        }
        Ok(out)
    }
}

/// BLAS run by the backend's device library.
pub trait BlasBackend {
    /// `hipblasCreate` on `dev`.
    fn blas_create(&self, dev: DeviceIndex) -> Result<BlasHandle, BackendError> {
        let _ = dev;
        Err(BackendError::NotSupported("this backend has no BLAS".into()))
    }

    /// `hipblasDestroy` (after the handle's queued work).
    fn blas_destroy(&self, handle: BlasHandle) -> Result<(), BackendError> {
        let _ = handle;
        Err(BackendError::NotSupported("this backend has no BLAS".into()))
    }

    /// Queues `call` on `stream` (its failure latched on the stream, as a kernel's). The
    /// session has checked every operand's extent.
    fn blas_launch(&self, handle: BlasHandle, stream: Option<StreamHandle>, call: &BlasCall) -> Result<(), BackendError> {
        let _ = (handle, stream, call);
        Err(BackendError::NotSupported("this backend has no BLAS".into()))
    }

    /// Whether a graph may hold a routine whose device arrays of pointers are read only at
    /// replay (`gemmBatched`), when no session check can see the matrices they name. True
    /// where the library reads them on the GPU, inside the session's own context: they reach
    /// no further than the session's own kernels (docs/ISOLATION.md). False where the
    /// worker's own code would follow them (the host backend's BLAS runs in the worker).
    fn blas_pointer_arrays_in_graphs(&self) -> bool {
        false
    }

    /// Runs a reduction on `stream` and waits for its result (`result_size` bytes).
    fn blas_reduce(&self, handle: BlasHandle, stream: Option<StreamHandle>, call: &BlasCall) -> Result<[u8; 16], BackendError> {
        let _ = (handle, stream, call);
        Err(BackendError::NotSupported("this backend has no BLAS".into()))
    }
}

/// 16 bytes at a 16-byte boundary: a host scalar or reduction result as GPU BLAS libraries
/// read and write it (a complex double with one aligned 16-byte access; a misaligned one
/// faults the whole worker).
#[repr(C, align(16))]
#[cfg_attr(not(feature = "hip"), allow(dead_code))]
pub(crate) struct Aligned16(pub(crate) [u8; 16]);

#[cfg(test)]
mod tests {
    use super::*;

    fn gemm(m: i64, n: i64, k: i64, ld: [i64; 3]) -> BlasCall {
        let op = |ptr, ld| Operand { ptr, ld, stride: 0 };
        BlasCall {
            routine: Routine::Gemm,
            ab_type: ElemType::R32F,
            c_type: ElemType::R32F,
            scalar_type: ElemType::R32F,
            compute: 2,
            trans: [blas_op::N, blas_op::T],
            dims: [m, n, k],
            alpha: Scalar::Value([0; 16]),
            beta: Scalar::Device(0x9000),
            a: op(0x1000, ld[0]),
            b: op(0x2000, ld[1]),
            c: op(0x3000, ld[2]),
            batch: 1,
            pointer_arrays: false,
            result: None,
        }
    }

    #[test]
    fn gemm_extents_follow_shapes_and_transposes() {
        // A: 5×3 (ld 7), op(B) = B^T with B 4×3 (ld 4), C: 5×4 (ld 6).
        let e = gemm(5, 4, 3, [7, 4, 6]).extents().unwrap();
        assert_eq!(e, [("A", 0x1000, (2 * 7 + 5) * 4), ("B", 0x2000, (2 * 4 + 4) * 4), ("C", 0x3000, (3 * 6 + 5) * 4), ("beta", 0x9000, 4)]);
    }

    #[test]
    fn bad_sizes_are_refused_and_empty_products_do_nothing() {
        assert!(matches!(gemm(-1, 4, 3, [7, 4, 6]).operands(), Err(BackendError::InvalidValue(_))));
        assert!(matches!(gemm(5, 4, 3, [4, 4, 6]).operands(), Err(BackendError::InvalidValue(_))), "lda < m");
        assert!(matches!(gemm(5, 4, 3, [7, 3, 6]).operands(), Err(BackendError::InvalidValue(_))), "ldb < n for op(B) = B^T");
        assert!(gemm(0, 4, 3, [7, 4, 6]).operands().unwrap().is_empty());
        let k0 = gemm(5, 4, 0, [7, 4, 6]).operands().unwrap();
        assert_eq!(k0.len(), 1, "k = 0 only scales C");
    }

    #[test]
    fn huge_extents_are_refused_without_overflow() {
        let mut call = gemm(1 << 30, 1 << 30, 1 << 30, [1 << 30; 3]);
        call.batch = 1 << 30;
        call.c.stride = 1 << 60;
        assert!(matches!(call.extents(), Err(BackendError::InvalidValue(_))));
        call.batch = 1 << 40;
        assert!(matches!(call.operands(), Err(BackendError::InvalidValue(_))));
    }

    #[test]
    fn pointer_arrays_span_batch_pointers() {
        let mut call = gemm(5, 4, 3, [7, 4, 6]);
        (call.batch, call.pointer_arrays) = (3, true);
        let e = call.extents().unwrap();
        assert!(e.iter().take(3).all(|&(_, _, len)| len == 24), "{e:?}");
    }
}
