//! The host backend's BLAS: level 1 and 2 as plain loops, GEMM by `matrixmultiply` (s/d/c/z).
//!
//! A routine is one stream operation. Every operand is resolved (bounds-checked against the
//! worker's allocations) when the call is queued; pointer arrays (`gemmBatched`) are read then
//! too, after the stream has drained, so each pointed-to matrix is resolved the same way. At
//! run time the inputs are copied out, the result computed, and only the elements the routine
//! writes are stored back (under the allocation's write lock). `gemmEx` with half or bfloat16
//! operands (ggml's products) is widened: A, B and C read as f32, the product in f32 (what
//! rocBLAS and cuBLAS accumulate in for 32F compute, and at least as precise for 16F), C
//! rounded back to its type. Other routines run s/d/c/z only: `hipErrorNotSupported`.

use super::memory::Region;
use super::stream::StreamOp;
use super::HostBackend;
use crate::backend::blas::{blas_op, BlasBackend, BlasCall, BlasHandle, ElemType, Routine, Scalar, Shape};
use crate::backend::{BackendError, DeviceBackend, DevicePtr, StreamBackend, StreamHandle};
use std::sync::atomic::{AtomicU64, Ordering};

/// A complex number as hipBLAS stores it (`hipFloatComplex`, `hipDoubleComplex`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Cx<T> {
    pub re: T,
    pub im: T,
}

/// What the routines need of an element type.
pub(crate) trait Elem: Copy + Default + PartialEq + Send + 'static {
    const SIZE: usize;
    fn read(b: &[u8]) -> Self;
    fn write(self, b: &mut [u8]);
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn conj(self) -> Self;
    /// `|re| + |im|` (BLAS's `asum`/`iamax` measure).
    fn abs1(self) -> f64;
    /// `|x|²`.
    fn abs2(self) -> f64;
    /// `C ← alpha op(A) op(B) + beta C` over strided slices (`matrixmultiply`).
    ///
    /// # Safety
    /// Every index the strides reach for `m × k`, `k × n` and `m × n` lies in the slices.
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm(
        dims: (usize, usize, usize),
        alpha: Self,
        a: &[Self],
        sa: (isize, isize),
        b: &[Self],
        sb: (isize, isize),
        beta: Self,
        c: &mut [Self],
        sc: (isize, isize),
    );
}

macro_rules! real_elem {
    ($t:ty, $gemm:path) => {
        impl Elem for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn read(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().expect("element size"))
            }
            fn write(self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_le_bytes());
            }
            fn add(self, o: Self) -> Self {
                self + o
            }
            fn mul(self, o: Self) -> Self {
                self * o
            }
            fn conj(self) -> Self {
                self
            }
            fn abs1(self) -> f64 {
                f64::from(self.abs())
            }
            fn abs2(self) -> f64 {
                f64::from(self) * f64::from(self)
            }
            unsafe fn gemm(
                (m, k, n): (usize, usize, usize),
                alpha: Self,
                a: &[Self],
                sa: (isize, isize),
                b: &[Self],
                sb: (isize, isize),
                beta: Self,
                c: &mut [Self],
                sc: (isize, isize),
            ) {
                // SAFETY: caller contract (every strided index lies in its slice).
                unsafe { $gemm(m, k, n, alpha, a.as_ptr(), sa.0, sa.1, b.as_ptr(), sb.0, sb.1, beta, c.as_mut_ptr(), sc.0, sc.1) }
            }
        }
    };
}

real_elem!(f32, matrixmultiply::sgemm);
real_elem!(f64, matrixmultiply::dgemm);

macro_rules! complex_elem {
    ($t:ty, $gemm:path) => {
        impl Elem for Cx<$t> {
            const SIZE: usize = 2 * std::mem::size_of::<$t>();
            fn read(b: &[u8]) -> Self {
                let half = Self::SIZE / 2;
                Cx { re: <$t>::read(&b[..half]), im: <$t>::read(&b[half..]) }
            }
            fn write(self, b: &mut [u8]) {
                let half = Self::SIZE / 2;
                self.re.write(&mut b[..half]);
                self.im.write(&mut b[half..]);
            }
            fn add(self, o: Self) -> Self {
                Cx { re: self.re + o.re, im: self.im + o.im }
            }
            fn mul(self, o: Self) -> Self {
                Cx { re: self.re * o.re - self.im * o.im, im: self.re * o.im + self.im * o.re }
            }
            fn conj(self) -> Self {
                Cx { re: self.re, im: -self.im }
            }
            fn abs1(self) -> f64 {
                f64::from(self.re.abs()) + f64::from(self.im.abs())
            }
            fn abs2(self) -> f64 {
                f64::from(self.re) * f64::from(self.re) + f64::from(self.im) * f64::from(self.im)
            }
            unsafe fn gemm(
                (m, k, n): (usize, usize, usize),
                alpha: Self,
                a: &[Self],
                sa: (isize, isize),
                b: &[Self],
                sb: (isize, isize),
                beta: Self,
                c: &mut [Self],
                sc: (isize, isize),
            ) {
                use matrixmultiply::CGemmOption::Standard;
                let (alpha, beta) = ([alpha.re, alpha.im], [beta.re, beta.im]);
                // SAFETY: `Cx<T>` is `repr(C)` `{re, im}`, the layout of matrixmultiply's
                // `[T; 2]`; every strided index lies in its slice (caller contract).
                unsafe {
                    $gemm(
                        Standard,
                        Standard,
                        m,
                        k,
                        n,
                        alpha,
                        a.as_ptr().cast(),
                        sa.0,
                        sa.1,
                        b.as_ptr().cast(),
                        sb.0,
                        sb.1,
                        beta,
                        c.as_mut_ptr().cast(),
                        sc.0,
                        sc.1,
                    )
                }
            }
        }
    };
}

complex_elem!(f32, matrixmultiply::cgemm);
complex_elem!(f64, matrixmultiply::zgemm);

fn to_elems<T: Elem>(bytes: &[u8]) -> Vec<T> {
    bytes.chunks_exact(T::SIZE).map(T::read).collect()
}

/// The indices (in elements from the operand's start) a routine writes or reads of one
/// batch member.
fn indices(shape: Shape, ld: i64) -> impl Iterator<Item = usize> {
    let (rows, cols, step) = match shape {
        Shape::Vector(n) => (1, n, ld),
        Shape::Matrix(r, c) => (r, c, ld),
    };
    (0..cols).flat_map(move |j| (0..rows).map(move |i| (j * step + i) as usize))
}

/// One batch member's operand, resolved.
#[derive(Debug, Clone)]
struct Member {
    region: Region,
    shape: Shape,
    ld: i64,
}

impl Member {
    fn load<T: Elem>(&self) -> Vec<T> {
        self.region.with_bytes(|b| to_elems(b))
    }

    fn load_widened(&self, ty: ElemType) -> Vec<f32> {
        self.region.with_bytes(|b| widen(b, ty))
    }
}

/// Real elements of type `ty` (f32, half, bfloat16) as f32.
fn widen(bytes: &[u8], ty: ElemType) -> Vec<f32> {
    let pair = |b: &[u8]| u16::from_le_bytes([b[0], b[1]]);
    match ty {
        ElemType::R16F => bytes.chunks_exact(2).map(|b| half::f16::from_bits(pair(b)).to_f32()).collect(),
        ElemType::R16BF => bytes.chunks_exact(2).map(|b| half::bf16::from_bits(pair(b)).to_f32()).collect(),
        _ => to_elems::<f32>(bytes),
    }
}

/// `v` stored as one element of type `ty` (f32, half, bfloat16; rounded to nearest even).
fn narrow(v: f32, ty: ElemType, out: &mut [u8]) {
    match ty {
        ElemType::R16F => out.copy_from_slice(&half::f16::from_f32(v).to_bits().to_le_bytes()),
        ElemType::R16BF => out.copy_from_slice(&half::bf16::from_f32(v).to_bits().to_le_bytes()),
        _ => out.copy_from_slice(&v.to_le_bytes()),
    }
}

/// Everything a queued routine needs: resolved operands per batch member and scalars.
struct Plan {
    call: BlasCall,
    /// Per batch member: the operands of `call.operands()`, in order.
    members: Vec<Vec<Member>>,
    alpha: ScalarSource,
    beta: ScalarSource,
    result: Option<Region>,
}

enum ScalarSource {
    Value([u8; 16]),
    Device(Region),
}

impl ScalarSource {
    fn get<T: Elem>(&self) -> T {
        match self {
            Self::Value(b) => T::read(&b[..T::SIZE]),
            Self::Device(r) => r.with_bytes(|b| T::read(&b[..T::SIZE])),
        }
    }

    /// A real scalar of type `ty` (f32 or half) as f32.
    fn get_widened(&self, ty: ElemType) -> f32 {
        let len = ty.size() as usize;
        let read = |b: &[u8]| widen(&b[..len], ty)[0];
        match self {
            Self::Value(b) => read(b),
            Self::Device(r) => r.with_bytes(read),
        }
    }
}

fn not_supported(call: &BlasCall) -> BackendError {
    BackendError::NotSupported(format!(
        "the host backend's BLAS does not run {:?} with A/B {:?}, C {:?}, scalars {:?}",
        call.routine, call.ab_type, call.c_type, call.scalar_type
    ))
}

/// Most batch members one routine may have on the host backend: each is resolved up front,
/// and a zero stride lets a tiny buffer stand for any batch count.
const MAX_HOST_BATCH: i64 = 1 << 16;

static NEXT_HANDLE: AtomicU64 = AtomicU64::new(1);

impl BlasCall {
    /// A gemm the host backend runs widened to f32: half or bfloat16 among A/B and C (each of
    /// f32, half, bfloat16), real scalars of f32 or half (`HIPBLAS_COMPUTE_16F`).
    fn is_widened_gemm(&self) -> bool {
        use ElemType::*;
        let real = |t| matches!(t, R32F | R16F | R16BF);
        self.routine == Routine::Gemm
            && real(self.ab_type)
            && real(self.c_type)
            && matches!(self.scalar_type, R32F | R16F)
            && (self.ab_type != R32F || self.c_type != R32F)
    }
}

impl HostBackend {
    fn blas_plan(&self, stream: Option<StreamHandle>, call: &BlasCall) -> Result<Plan, BackendError> {
        let real_result = matches!(call.routine, Routine::Nrm2 | Routine::Asum);
        let types_ok = call.is_widened_gemm()
            || match call.ab_type {
                ElemType::R32F | ElemType::R64F | ElemType::C32F | ElemType::C64F => {
                    if real_result {
                        call.c_type.size() * if call.ab_type.is_complex() { 2 } else { 1 } == call.ab_type.size() && !call.c_type.is_complex()
                    } else {
                        call.c_type == call.ab_type && (call.scalar_type == call.ab_type || call.is_reduction())
                    }
                }
                _ => false,
            };
        if !types_ok {
            return Err(not_supported(call));
        }
        let operands = call.operands()?;
        if call.batch > MAX_HOST_BATCH {
            return Err(BackendError::NotSupported(format!("a batch of {} (the host backend's BLAS runs at most {MAX_HOST_BATCH})", call.batch)));
        }
        let resolve = |ptr: u64, len: u64, what: &str| {
            self.resolve(DevicePtr(ptr), len).map_err(|e| BackendError::InvalidValue(format!("BLAS operand {what}: {e}")))
        };
        if call.pointer_arrays {
            if let Some(stream) = stream {
                // The arrays are read now: earlier work of the stream may still write them.
                self.stream_synchronize(stream)?;
            }
        }
        let mut members = Vec::new();
        for i in 0..call.batch.max(0) as u64 {
            let mut member = Vec::with_capacity(operands.len());
            for &(name, op, shape, ty) in &operands {
                let span = u64::try_from(BlasCall::span(shape, op, ty))
                    .map_err(|_| BackendError::InvalidValue(format!("BLAS operand {name} spans more than 2^64 bytes")))?;
                let overflow = || BackendError::InvalidValue(format!("BLAS operand {name}: batch member {i} overflows the address space"));
                let ptr = if call.pointer_arrays {
                    let slot = resolve(op.ptr.checked_add(8 * i).ok_or_else(overflow)?, 8, name)?;
                    slot.with_bytes(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
                } else {
                    (op.stride as u64).checked_mul(i * ty.size()).and_then(|off| op.ptr.checked_add(off)).ok_or_else(overflow)?
                };
                member.push(Member { region: resolve(ptr, span, name)?, shape, ld: op.ld });
            }
            members.push(member);
        }
        let scalar = |s: Scalar, what| -> Result<ScalarSource, BackendError> {
            Ok(match s {
                Scalar::Value(b) => ScalarSource::Value(b),
                Scalar::Device(ptr) => ScalarSource::Device(resolve(ptr, call.scalar_type.size(), what)?),
            })
        };
        let result = call.result.map(|ptr| resolve(ptr, call.result_size(), "result")).transpose()?;
        Ok(Plan { call: *call, members, alpha: scalar(call.alpha, "alpha")?, beta: scalar(call.beta, "beta")?, result })
    }
}

impl Plan {
    /// Runs the routine; a reduction's result bytes are returned (and stored at `result`).
    fn run(self) -> Result<[u8; 16], BackendError> {
        if self.call.is_widened_gemm() {
            let (alpha, beta) = (self.alpha.get_widened(self.call.scalar_type), self.beta.get_widened(self.call.scalar_type));
            for member in self.members.iter().filter(|m| !m.is_empty()) {
                self.run_widened_gemm(member, alpha, beta);
            }
            return Ok([0; 16]);
        }
        match self.call.ab_type {
            ElemType::R32F => self.run_as::<f32>(),
            ElemType::R64F => self.run_as::<f64>(),
            ElemType::C32F => self.run_as::<Cx<f32>>(),
            ElemType::C64F => self.run_as::<Cx<f64>>(),
            _ => Err(not_supported(&self.call)),
        }
    }

    fn run_as<T: Elem>(self) -> Result<[u8; 16], BackendError> {
        let call = &self.call;
        let n = call.dims[0].max(0) as usize;
        let mut out = [0u8; 16];
        if call.is_reduction() {
            let value = match self.members.first().and_then(|m| m.first()) {
                None => Reduced::Zero,
                Some(x) => {
                    let inc = x.ld as usize;
                    let xs: Vec<T> = x.load();
                    let at = |i: usize| xs[i * inc];
                    match call.routine {
                        Routine::Dot | Routine::Dotc => {
                            let y = &self.members[0][1];
                            let ys: Vec<T> = y.load();
                            let conj = call.routine == Routine::Dotc;
                            let sum = (0..n).fold(T::default(), |acc, i| {
                                let xi = if conj { at(i).conj() } else { at(i) };
                                acc.add(xi.mul(ys[i * y.ld as usize]))
                            });
                            Reduced::Elem(sum)
                        }
                        Routine::Nrm2 => Reduced::Real((0..n).map(|i| at(i).abs2()).sum::<f64>().sqrt()),
                        Routine::Asum => Reduced::Real((0..n).map(|i| at(i).abs1()).sum()),
                        Routine::Iamax | Routine::Iamin => {
                            let max = call.routine == Routine::Iamax;
                            let mut best = 0;
                            for i in 1..n {
                                let (v, b) = (at(i).abs1(), at(best).abs1());
                                if (max && v > b) || (!max && v < b) {
                                    best = i;
                                }
                            }
                            Reduced::Index(if n == 0 { 0 } else { best as i32 + 1 })
                        }
                        _ => unreachable!("not a reduction"),
                    }
                }
            };
            match value {
                Reduced::Zero if matches!(call.routine, Routine::Iamax | Routine::Iamin) => out[..4].copy_from_slice(&0i32.to_le_bytes()),
                Reduced::Zero if matches!(call.routine, Routine::Nrm2 | Routine::Asum) => {}
                Reduced::Zero => T::default().write(&mut out[..T::SIZE]),
                Reduced::Elem(v) => v.write(&mut out[..T::SIZE]),
                Reduced::Index(i) => out[..4].copy_from_slice(&i.to_le_bytes()),
                Reduced::Real(v) => match call.c_type {
                    ElemType::R32F => out[..4].copy_from_slice(&(v as f32).to_le_bytes()),
                    _ => out[..8].copy_from_slice(&v.to_le_bytes()),
                },
            }
            if let Some(region) = &self.result {
                let len = call.result_size() as usize;
                region.write(&out[..len]);
            }
            return Ok(out);
        }
        let alpha: T = self.alpha.get();
        let beta: T = self.beta.get();
        // A quick return (nothing to do) has no operands.
        for member in self.members.iter().filter(|m| !m.is_empty()) {
            self.run_member(member, n, alpha, beta);
        }
        Ok(out)
    }

    /// One batch member of a gemm with half or bfloat16 operands: computed in f32, C stored
    /// back in its own type.
    fn run_widened_gemm(&self, ops: &[Member], alpha: f32, beta: f32) {
        let call = &self.call;
        let (a, b) = (ops[0].load_widened(call.ab_type), ops[1].load_widened(call.ab_type));
        let written = &ops[2];
        written.region.with_bytes_mut(|bytes| {
            let mut c = widen(bytes, call.c_type);
            gemm_member(call, (&a, ops[0].ld), (&b, ops[1].ld), (&mut c, written.ld), alpha, beta);
            for i in indices(written.shape, written.ld) {
                narrow(c[i], call.c_type, &mut bytes[i * call.c_type.size() as usize..(i + 1) * call.c_type.size() as usize]);
            }
        });
    }

    /// One batch member of a non-reduction routine.
    fn run_member<T: Elem>(&self, ops: &[Member], n: usize, alpha: T, beta: T) {
        let call = &self.call;
        // The operand written is the last one `operands()` lists, or the only one.
        let written = ops.last().expect("operands");
        let inputs: Vec<Vec<T>> = ops[..ops.len() - 1].iter().map(Member::load).collect();
        let old_y = written.region.with_bytes_mut(|bytes| {
            let mut c: Vec<T> = to_elems(bytes);
            let mut old_y = Vec::new();
            match call.routine {
                Routine::Axpy | Routine::Copy | Routine::Swap => {
                    let (x, incx, incy) = (&inputs[0], ops[0].ld as usize, written.ld as usize);
                    match call.routine {
                        Routine::Axpy => (0..n).for_each(|i| c[i * incy] = alpha.mul(x[i * incx]).add(c[i * incy])),
                        Routine::Copy => (0..n).for_each(|i| c[i * incy] = x[i * incx]),
                        _ => {
                            // x gets y's old values (stored below, outside y's lock: x may share
                            // y's allocation).
                            old_y = (0..n).map(|i| c[i * incy]).collect();
                            (0..n).for_each(|i| c[i * incy] = x[i * incx]);
                        }
                    }
                }
                Routine::Scal => {
                    let inc = written.ld as usize;
                    (0..n).for_each(|i| c[i * inc] = alpha.mul(c[i * inc]));
                }
                Routine::Gemv => {
                    let (m, cols) = (call.dims[0] as usize, call.dims[1] as usize);
                    let (x, incx) = (&inputs[0], ops[0].ld as usize);
                    let (a, lda, incy) = (&inputs[1], ops[1].ld as usize, written.ld as usize);
                    let trans = call.trans[0];
                    let y_len = if trans == blas_op::N { m } else { cols };
                    let x_len = if trans == blas_op::N { cols } else { m };
                    for r in 0..y_len {
                        let mut sum = T::default();
                        for l in 0..x_len {
                            let e = match trans {
                                blas_op::N => a[l * lda + r],
                                blas_op::T => a[r * lda + l],
                                _ => a[r * lda + l].conj(),
                            };
                            sum = sum.add(e.mul(x[l * incx]));
                        }
                        let old = if beta == T::default() { T::default() } else { beta.mul(c[r * incy]) };
                        c[r * incy] = alpha.mul(sum).add(old);
                    }
                }
                Routine::Ger | Routine::Gerc => {
                    let (m, cols) = (call.dims[0] as usize, call.dims[1] as usize);
                    let (x, incx, y, incy, lda) = (&inputs[0], ops[0].ld as usize, &inputs[1], ops[1].ld as usize, written.ld as usize);
                    for j in 0..cols {
                        let yj = if call.routine == Routine::Gerc { y[j * incy].conj() } else { y[j * incy] };
                        let ay = alpha.mul(yj);
                        for i in 0..m {
                            c[j * lda + i] = x[i * incx].mul(ay).add(c[j * lda + i]);
                        }
                    }
                }
                Routine::Gemm => gemm_member(call, (&inputs[0], ops[0].ld), (&inputs[1], ops[1].ld), (&mut c, written.ld), alpha, beta),
                _ => {}
            }
            for i in indices(written.shape, written.ld) {
                c[i].write(&mut bytes[i * T::SIZE..(i + 1) * T::SIZE]);
            }
            old_y
        });
        if call.routine == Routine::Swap {
            let x = &ops[0];
            let inc = x.ld as usize;
            x.region.with_bytes_mut(|bytes| {
                for (i, v) in old_y.iter().enumerate() {
                    v.write(&mut bytes[i * inc * T::SIZE..(i * inc + 1) * T::SIZE]);
                }
            });
        }
    }
}

/// `C ← alpha op(A) op(B) + beta C` of one batch member, each operand with its leading
/// dimension (column-major, as resolved by `blas_plan`).
fn gemm_member<T: Elem>(call: &BlasCall, (a, lda): (&[T], i64), (b, ldb): (&[T], i64), (c, ldc): (&mut [T], i64), alpha: T, beta: T) {
    let (m, cols, k) = (call.dims[0] as usize, call.dims[1] as usize, call.dims[2] as usize);
    if k == 0 || alpha == T::default() {
        for j in 0..cols {
            for i in 0..m {
                let e = &mut c[j * ldc as usize + i];
                *e = if beta == T::default() { T::default() } else { beta.mul(*e) };
            }
        }
        return;
    }
    let strides = |t: u32, ld: i64| if t == blas_op::N { (1, ld as isize) } else { (ld as isize, 1) };
    let conj = |t: u32, v: &[T]| -> Vec<T> {
        if t == blas_op::C {
            v.iter().map(|e| e.conj()).collect()
        } else {
            v.to_vec()
        }
    };
    let (a, b) = (conj(call.trans[0], a), conj(call.trans[1], b));
    // SAFETY: the operands were resolved with the spans of these shapes and leading dimensions
    // (`BlasCall::operands` checked ld >= rows; widening keeps the element count), so every
    // strided index lies in its slice.
    unsafe { T::gemm((m, k, cols), alpha, &a, strides(call.trans[0], lda), &b, strides(call.trans[1], ldb), beta, c, (1, ldc as isize)) };
}

enum Reduced<T> {
    Zero,
    Elem(T),
    Real(f64),
    Index(i32),
}

impl BlasBackend for HostBackend {
    fn blas_create(&self, dev: u32) -> Result<BlasHandle, BackendError> {
        let count = self.device_count()?;
        if dev >= count {
            return Err(BackendError::InvalidDevice(format!("device {dev} (the worker has {count})")));
        }
        Ok(BlasHandle(NEXT_HANDLE.fetch_add(1, Ordering::Relaxed)))
    }

    fn blas_destroy(&self, _handle: BlasHandle) -> Result<(), BackendError> {
        // A host handle holds nothing: queued routines own their plans.
        Ok(())
    }

    fn blas_launch(&self, _handle: BlasHandle, stream: Option<StreamHandle>, call: &BlasCall) -> Result<(), BackendError> {
        let plan = self.blas_plan(stream, call)?;
        let devices: Vec<_> = plan.members.iter().flatten().map(|m| m.region.device()).take(1).collect();
        self.enqueue(stream, &devices, StreamOp::Checked(Box::new(move || plan.run().map(drop))))
    }

    fn blas_reduce(&self, _handle: BlasHandle, stream: Option<StreamHandle>, call: &BlasCall) -> Result<[u8; 16], BackendError> {
        let plan = self.blas_plan(stream, call)?;
        let devices: Vec<_> = plan.members.iter().flatten().map(|m| m.region.device()).take(1).collect();
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.enqueue(
            stream,
            &devices,
            StreamOp::Checked(Box::new(move || {
                let out = plan.run();
                let status = out.as_ref().map(drop).map_err(Clone::clone);
                let _ = tx.send(out);
                status
            })),
        )?;
        rx.recv().map_err(|_| BackendError::Unknown("the BLAS reduction was dropped before it ran".into()))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elem_bytes<T: Elem>(v: T) -> Vec<u8> {
        let mut b = vec![0; T::SIZE];
        v.write(&mut b);
        b
    }

    #[test]
    fn complex_arithmetic() {
        let a = Cx { re: 1.0f32, im: 2.0 };
        let b = Cx { re: 3.0f32, im: -1.0 };
        assert_eq!(a.mul(b), Cx { re: 5.0, im: 5.0 });
        assert_eq!(a.conj().mul(b), Cx { re: 1.0, im: -7.0 });
        assert_eq!(a.abs1(), 3.0);
        assert_eq!(Cx::<f64>::read(&elem_bytes(Cx { re: 1.5f64, im: -2.0 })), Cx { re: 1.5, im: -2.0 });
    }

    #[test]
    fn gemm_transposes_by_strides() {
        // A = [[1, 2], [3, 4]] column-major: [1, 3, 2, 4]; B = I.
        let a = [1.0f32, 3.0, 2.0, 4.0];
        let b = [1.0f32, 0.0, 0.0, 1.0];
        let mut c = [0.0f32; 4];
        // SAFETY: 2×2 operands with leading dimension 2.
        unsafe { f32::gemm((2, 2, 2), 1.0, &a, (2, 1), &b, (1, 2), 0.0, &mut c, (1, 2)) };
        assert_eq!(c, [1.0, 2.0, 3.0, 4.0], "C = A^T");
    }

    #[test]
    fn matrix_indices_skip_the_gap_below_m() {
        let got: Vec<usize> = indices(Shape::Matrix(2, 2), 3).collect();
        assert_eq!(got, [0, 1, 3, 4]);
        let got: Vec<usize> = indices(Shape::Vector(3), 2).collect();
        assert_eq!(got, [0, 2, 4]);
    }
}
