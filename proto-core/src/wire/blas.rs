//! BLAS: hipBLAS calls run by the worker's own BLAS (cuBLAS, hipBLAS, a CPU BLAS).
//!
//! One message ([`BlasOp`]) describes every routine; the operand a routine writes is always C.
//! Level 1: `x` is A and `y` is C (`scal`: `x` is C; `dot`/`dotc`: `y` is B), increments in
//! the operands' leading-dimension slots. Level 2: `gemv` has the matrix in A, `x` in B, `y` in
//! C; `ger`/`gerc` have `x` in A, `y` in B, the matrix in C. Level 3 uses A, B and C as hipBLAS
//! names them. Every address is a device address of the session.

wire_enum! {
    /// The routine a [`BlasOp`] runs.
    pub enum BlasRoutine: u32 {
        /// `y = alpha x + y`.
        Axpy = 1,
        /// `x = alpha x`.
        Scal = 2,
        /// `y = x`.
        Copy = 3,
        /// `x <-> y`.
        Swap = 4,
        /// `x . y` (complex: unconjugated, `dotu`).
        Dot = 5,
        /// `conj(x) . y`.
        Dotc = 6,
        /// Euclidean norm of `x`.
        Nrm2 = 7,
        /// Sum of `|re| + |im|` of `x`.
        Asum = 8,
        /// 1-based index of the first largest `|re| + |im|`.
        Iamax = 9,
        /// 1-based index of the first smallest `|re| + |im|`.
        Iamin = 10,
        /// `y = alpha op(A) x + beta y`.
        Gemv = 20,
        /// `A = alpha x y^T + A`.
        Ger = 21,
        /// `A = alpha x y^H + A`.
        Gerc = 22,
        /// `C = alpha op(A) op(B) + beta C`, batched by `batch` (strided, or arrays of pointers).
        Gemm = 40,
    }
}

wire_enum! {
    /// Element types, numbered as `hipDataType` (and CUDA's `cudaDataType`).
    pub enum BlasType: u32 {
        /// `float`.
        R32F = 0,
        /// `double`.
        R64F = 1,
        /// IEEE half.
        R16F = 2,
        /// `hipFloatComplex`.
        C32F = 4,
        /// `hipDoubleComplex`.
        C64F = 5,
        /// bfloat16.
        R16BF = 14,
    }
}

impl BlasType {
    /// Bytes per element.
    pub const fn size(self) -> u64 {
        match self {
            Self::R16F | Self::R16BF => 2,
            Self::R32F => 4,
            Self::R64F | Self::C32F => 8,
            Self::C64F => 16,
        }
    }

    /// Whether the type is complex.
    pub const fn is_complex(self) -> bool {
        matches!(self, Self::C32F | Self::C64F)
    }
}

/// `hipblasOperation_t` values (as ROCm's `hipblas-common.h`).
pub mod blas_op {
    /// `HIPBLAS_OP_N`.
    pub const N: u32 = 111;
    /// `HIPBLAS_OP_T`.
    pub const T: u32 = 112;
    /// `HIPBLAS_OP_C`.
    pub const C: u32 = 113;
}

message! {
    /// `hipblasCreate` on the client's current device.
    pub struct BlasCreate {
        /// The device the handle's work runs on.
        pub device: u32,
    }
}

message! {
    /// A handle of the session's BLAS (`hipblasHandle_t` on the worker).
    pub struct BlasHandle {
        /// Handle id (never 0).
        pub handle: u64,
    }
}

message! {
    /// One BLAS routine. `BlasLaunch` queues it on `stream` (errors deferred as a kernel
    /// launch's); `BlasReduce` runs a reduction (`dot`, `nrm2`, `asum`, `iamax`, `iamin`)
    /// whose result goes to the client's host memory and answers it.
    pub struct BlasOp {
        /// The handle (from `BlasCreate`).
        pub handle: u64,
        /// Stream the routine is ordered on (0 = null stream), as `LaunchKernel`'s.
        pub stream: u64,
        /// What to run.
        pub routine: BlasRoutine,
        /// Element type of A and B (level 1/2: of every vector).
        pub ab_type: BlasType,
        /// Element type of C (level 1: of the result of `nrm2`/`asum`, real).
        pub c_type: BlasType,
        /// Type of `alpha` and `beta` (the compute precision).
        pub scalar_type: BlasType,
        /// `hipblasComputeType_t` as the client gave it (`gemmEx`), else the one `scalar_type`
        /// implies (`HIPBLAS_COMPUTE_32F` = 2, `_64F` = 7, `_16F` = 0).
        pub compute: u32,
        /// `hipblasOperation_t` of A and B ([`blas_op`]).
        pub trans: [u32; 2],
        /// `m`, `n`, `k` (level 1: `n` is `dims[0]`).
        pub dims: [i64; 3],
        /// Whether `alpha`/`beta` are device addresses (`alpha_ptr`, `beta_ptr`) rather than
        /// values (`alpha`, `beta`): hipBLAS's pointer mode.
        pub device_scalars: bool,
        /// `alpha` by value (its bytes, `scalar_type`), zero-padded.
        pub alpha: [u8; 16],
        /// `beta` by value, zero-padded.
        pub beta: [u8; 16],
        /// `alpha`'s device address when `device_scalars`.
        pub alpha_ptr: u64,
        /// `beta`'s device address when `device_scalars`.
        pub beta_ptr: u64,
        /// Operand A: address, leading dimension (level 1/2 vectors: increment), batch stride.
        pub a: u64,
        /// A's leading dimension or increment, and its batch stride (elements).
        pub a_layout: [i64; 2],
        /// Operand B's address.
        pub b: u64,
        /// B's leading dimension or increment, and its batch stride.
        pub b_layout: [i64; 2],
        /// Operand C's address.
        pub c: u64,
        /// C's leading dimension or increment, and its batch stride.
        pub c_layout: [i64; 2],
        /// Batch count (1 for unbatched routines).
        pub batch: i64,
        /// Whether `a`, `b`, `c` are device arrays of `batch` device pointers (`gemmBatched`).
        pub pointer_arrays: bool,
        /// Where a reduction's result goes in device pointer mode (0 for `BlasReduce`).
        pub result_ptr: u64,
    }
}

message! {
    /// A reduction's result (`BlasReduce`): its bytes (a real of `c_type`, or a 32-bit index).
    pub struct BlasResult {
        /// Result bytes, zero-padded.
        pub value: [u8; 16],
    }
}
