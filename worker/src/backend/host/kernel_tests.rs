//! Kernels on the host backend through the [`Backend`] trait: hiprtc, host modules, launches.
//!
//! These tests run the system C++ compiler, as the host backend's hiprtc does; without one
//! they report that and pass vacuously.

use std::process::Command;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use super::*;
use crate::backend::{hip_code, ParamLayout, RtcRequest};
use crate::backend::{
    stream_flags, DeviceBackend, EventBackend, LaunchConfig, MemoryBackend, MemsetPattern, ModuleBackend, ModuleFormat, RtcBackend, RtcOutput,
    StreamBackend,
};

const MIB: u64 = 1 << 20;

fn backend() -> HostBackend {
    HostBackend::new(HostConfig { devices: 1, memory_per_device: 64 * MIB, allow_host_code: true, ..HostConfig::default() })
}

fn have(tool: &str) -> bool {
    let found = Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        transport_core::test_skip::skip(&format!("host kernel tests needing `{tool}`: not on this machine"));
    }
    found
}

fn compile(backend: &HostBackend, source: &str, name_expressions: &[&str]) -> RtcOutput {
    let request = RtcRequest {
        name: "test.hip",
        source,
        name_expressions: name_expressions.to_vec(),
        options: vec!["--offload-arch=gfx942", "-O3", "-DSCALE=3"],
        ..RtcRequest::default()
    };
    backend.rtc_compile(0, &request).unwrap()
}

fn compile_and_load(backend: &HostBackend, source: &str) -> ModuleHandle {
    let out = compile(backend, source, &[]);
    assert!(out.success, "compile failed:\n{}", out.log);
    backend.module_load(0, ModuleFormat::HostModule, &out.code).unwrap()
}

fn upload<T: Copy>(backend: &HostBackend, values: &[T]) -> DevicePtr {
    let bytes = as_bytes(values);
    let ptr = backend.malloc(0, bytes.len() as u64).unwrap();
    backend.memcpy_htod_sync(None, ptr, &bytes).unwrap();
    ptr
}

fn as_bytes<T: Copy>(values: &[T]) -> Vec<u8> {
    let len = std::mem::size_of_val(values);
    // SAFETY: `values` is `len` initialized bytes of plain numbers (the tests only use
    // integer and float types).
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), len) }.to_vec()
}

fn download<T: Copy + Default>(backend: &HostBackend, ptr: DevicePtr, count: usize) -> Vec<T> {
    let mut out = vec![T::default(); count];
    let len = std::mem::size_of_val(&out[..]);
    // SAFETY: `out` is `len` bytes of plain numbers; any bit pattern is valid for them.
    let bytes = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), len) };
    backend.memcpy_dtoh_sync(None, ptr, bytes).unwrap();
    out
}

/// Packs `values` (raw bytes per parameter) by `params`.
fn pack(params: &[ParamLayout], values: &[Vec<u8>]) -> Vec<u8> {
    assert_eq!(params.len(), values.len());
    let mut blob = vec![0u8; crate::backend::args_len(params) as usize];
    for (p, v) in params.iter().zip(values) {
        assert_eq!(p.size as usize, v.len(), "parameter layout");
        blob[p.offset as usize..][..v.len()].copy_from_slice(v);
    }
    blob
}

fn le<T: Copy>(value: T) -> Vec<u8> {
    as_bytes(&[value])
}

#[test]
fn every_argument_kind_arrives_exactly() {
    if !have("c++") {
        return;
    }
    let backend = backend();
    let module = compile_and_load(
        &backend,
        r#"
#include <hip/hip_runtime.h>
struct Pair { int a; double b; char c; };
extern "C" __global__ void echo(char c, short s, int i, float f, double d,
                                long long* out_i, double* out_d, Pair p, unsigned char tail) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    out_i[0] = c; out_i[1] = s; out_i[2] = i; out_i[3] = p.a; out_i[4] = p.c; out_i[5] = tail;
    out_i[6] = SCALE;
    out_d[0] = f; out_d[1] = d; out_d[2] = p.b;
}
"#,
    );
    let echo = backend.module_function(module, "echo").unwrap();
    let expected_layout = [(0, 1), (2, 2), (4, 4), (8, 4), (16, 8), (24, 8), (32, 8), (40, 24), (64, 1)];
    let layout: Vec<(u32, u32)> = echo.params.iter().map(|p| (p.offset, p.size)).collect();
    assert_eq!(layout, expected_layout, "natural C layout, in declaration order");
    assert_eq!(echo.args_len(), 65);

    let out_i = backend.malloc(0, 7 * 8).unwrap();
    let out_d = backend.malloc(0, 3 * 8).unwrap();
    // struct Pair { int a; double b; char c; }: a at 0, b at 8, c at 16, 24 bytes.
    let mut pair = vec![0xa5u8; 24];
    pair[..4].copy_from_slice(&(-7i32).to_le_bytes());
    pair[8..16].copy_from_slice(&3.125f64.to_le_bytes());
    pair[16] = b'z';
    let args =
        pack(&echo.params, &[le(-5i8), le(-1234i16), le(0x1234_5678i32), le(1.5f32), le(-2.25e100f64), le(out_i.0), le(out_d.0), pair, le(200u8)]);
    let config = LaunchConfig { grid: [2, 1, 1], block: [32, 1, 1], shared_mem: 0 };
    backend.launch_kernel(None, echo.handle, config, &args).unwrap();
    assert_eq!(download::<i64>(&backend, out_i, 7), [-5, -1234, 0x1234_5678, -7, i64::from(b'z'), 200, 3]);
    assert_eq!(download::<f64>(&backend, out_d, 3), [1.5, -2.25e100, 3.125]);
}

const VADD: &str = r#"
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) c[y * width + x] = a[y * width + x] + b[y * width + x];
}
"#;

#[test]
fn vector_add_over_a_2d_grid_on_a_stream() {
    if !have("c++") {
        return;
    }
    let backend = backend();
    let module = compile_and_load(&backend, VADD);
    let vadd = backend.module_function(module, "vadd").unwrap();
    let (width, height) = (100usize, 37usize);
    let a: Vec<f32> = (0..width * height).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..width * height).map(|i| (i * 2) as f32 + 0.5).collect();
    let (da, db) = (upload(&backend, &a), upload(&backend, &b));
    let dc = backend.malloc(0, (width * height * 4) as u64).unwrap();
    let stream = backend.stream_create(0, stream_flags::DEFAULT, 0).unwrap();
    let args = pack(&vadd.params, &[le(da.0), le(db.0), le(dc.0), le(width as i32), le(height as i32)]);
    let config = LaunchConfig { grid: [7, 5, 1], block: [16, 8, 1], shared_mem: 0 };
    backend.launch_kernel(Some(stream), vadd.handle, config, &args).unwrap();
    backend.stream_synchronize(stream).unwrap();
    let c: Vec<f32> = download(&backend, dc, width * height);
    for i in 0..width * height {
        assert_eq!(c[i], a[i] + b[i], "element {i}");
    }
}

#[test]
fn compile_errors_return_the_compiler_log() {
    if !have("c++") {
        return;
    }
    let backend = backend();
    let out = compile(&backend, "extern \"C\" __global__ void broken(int* p) {\n  p[0] = undefined_name;\n}\n", &[]);
    assert!(!out.success);
    assert!(out.code.is_empty());
    assert!(out.log.contains("test.hip:2"), "{}", out.log);
    assert!(out.log.contains("undefined_name"), "{}", out.log);
    assert!(out.log.contains("error"), "{}", out.log);
    assert!(out.log.contains("ignored option `--offload-arch=gfx942`"), "{}", out.log);
}

/// Compiles `source`, launches `kernel` once with `args` (one value per parameter) on a
/// stream and synchronises it: the stream's outcome.
fn launch_once(backend: &HostBackend, source: &str, kernel: &str, config: LaunchConfig, args: &[Vec<u8>]) -> Result<(), BackendError> {
    launch_once_with(backend, source, &[], kernel, config, args)
}

/// [`launch_once`] with compile options.
fn launch_once_with(
    backend: &HostBackend,
    source: &str,
    options: &[&str],
    kernel: &str,
    config: LaunchConfig,
    args: &[Vec<u8>],
) -> Result<(), BackendError> {
    let request = RtcRequest { name: "test.hip", source, options: options.to_vec(), ..RtcRequest::default() };
    let out = backend.rtc_compile(0, &request).unwrap();
    assert!(out.success, "compile failed:\n{}", out.log);
    let module = backend.module_load(0, ModuleFormat::HostModule, &out.code).unwrap();
    let function = backend.module_function(module, kernel).unwrap();
    let stream = backend.stream_create(0, stream_flags::DEFAULT, 0).unwrap();
    backend.launch_kernel(Some(stream), function.handle, config, &pack(&function.params, args)).unwrap();
    backend.stream_synchronize(stream)
}

#[test]
fn block_barriers_and_shared_memory_reduce_a_block() {
    if !have("c++") {
        return;
    }
    let backend = backend();
    let source = r#"
extern "C" __global__ void reduce(const int* in, int* sums, int* votes) {
    __shared__ int partial[256];
    unsigned t = threadIdx.x;
    partial[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) partial[t] += partial[t + stride];
        __syncthreads();
    }
    int odd = __syncthreads_count(in[blockIdx.x * blockDim.x + t] & 1);
    int all = __syncthreads_and(t < 1000);
    int any = __syncthreads_or(t == 7);
    int none = __syncthreads_or(0);
    if (t == 0) {
        sums[blockIdx.x] = partial[0];
        votes[blockIdx.x * 4] = odd; votes[blockIdx.x * 4 + 1] = all;
        votes[blockIdx.x * 4 + 2] = any; votes[blockIdx.x * 4 + 3] = none;
    }
}
"#;
    let (blocks, threads) = (6usize, 256usize);
    let input: Vec<i32> = (0..blocks * threads).map(|i| (i as i32 * 7919) % 1000 - 300).collect();
    // The hand-written context switch (x86-64) and the portable ucontext one.
    for options in [&[][..], &["-DHIP_REMOTE_FIBER_UCONTEXT=1"][..]] {
        let (din, sums, votes) = (upload(&backend, &input), upload(&backend, &vec![0i32; blocks]), upload(&backend, &vec![0i32; blocks * 4]));
        let config = LaunchConfig { grid: [blocks as u32, 1, 1], block: [threads as u32, 1, 1], shared_mem: 0 };
        launch_once_with(&backend, source, options, "reduce", config, &[le(din.0), le(sums.0), le(votes.0)]).unwrap();
        let want: Vec<i32> = input.chunks(threads).map(|c| c.iter().sum()).collect();
        assert_eq!(download::<i32>(&backend, sums, blocks), want, "{options:?}");
        let want_votes: Vec<i32> = input.chunks(threads).flat_map(|c| [c.iter().filter(|v| *v & 1 != 0).count() as i32, 1, 1, 0]).collect();
        assert_eq!(download::<i32>(&backend, votes, blocks * 4), want_votes, "{options:?}");
    }
}

#[test]
fn warp_operations_see_their_warp() {
    if !have("c++") {
        return;
    }
    let backend = backend();
    let source = r#"
extern "C" __global__ void warps(const float* in, float* sums, unsigned long long* masks, int* lanes) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[t];
    for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down(v, offset);
    int lane = threadIdx.x % warpSize;
    unsigned long long odd = __ballot(lane & 1);
    int every = __all(lane < warpSize), any = __any(lane == 3), none = __any_sync(~0ull, 0);
    float first = __shfl(in[t], 0);
    int up = __shfl_up_sync(~0ull, lane, 1), xr = __shfl_xor(lane, 1);
    int same_all = 0;
    unsigned long long quarter = __match_any_sync(~0ull, lane / 8), all = __match_all(7, &same_all);
    bool matched = quarter == (0xffull << (lane / 8 * 8)) && all == 0xffffffffull && same_all == 1;
    lanes[t] = matched ? up * 10000 + xr * 100 + (int)__lane_id() : -1;
    if (lane == 0) {
        unsigned w = t / warpSize;
        sums[w] = v;
        masks[w * 2] = odd;
        masks[w * 2 + 1] = every * 100 + any * 10 + none + (first == in[t] ? 1000 : 0) + (__activemask() == 1ull ? 10000 : 0);  // lane 0 alone here
    }
}
"#;
    let (blocks, threads) = (3usize, 128usize);
    let n = blocks * threads;
    let input: Vec<f32> = (0..n).map(|i| (i % 17) as f32 - 4.0).collect();
    let (din, sums, masks, lanes) =
        (upload(&backend, &input), upload(&backend, &vec![0f32; n / 32]), upload(&backend, &vec![0u64; n / 16]), upload(&backend, &vec![0i32; n]));
    let config = LaunchConfig { grid: [blocks as u32, 1, 1], block: [threads as u32, 1, 1], shared_mem: 0 };
    launch_once(&backend, source, "warps", config, &[le(din.0), le(sums.0), le(masks.0), le(lanes.0)]).unwrap();
    let want: Vec<f32> = input.chunks(32).map(|c| c.iter().sum()).collect();
    assert_eq!(download::<f32>(&backend, sums, n / 32), want);
    let want_masks: Vec<u64> = (0..n / 32).flat_map(|_| [0xaaaa_aaaa, 11110]).collect();
    assert_eq!(download::<u64>(&backend, masks, n / 16), want_masks);
    let want_lanes: Vec<i32> = (0..n as i32).map(|t| t % 32).map(|l| (if l == 0 { 0 } else { l - 1 }) * 10000 + (l ^ 1) * 100 + l).collect();
    assert_eq!(download::<i32>(&backend, lanes, n), want_lanes);
}

#[test]
fn shared_atomics_and_dynamic_shared_memory() {
    if !have("c++") {
        return;
    }
    let backend = backend();
    let source = r#"
extern __shared__ unsigned int bins[];
extern "C" __global__ void histogram(const unsigned char* in, int n, unsigned int* out, int nbins) {
    for (int b = threadIdx.x; b < nbins; b += blockDim.x) bins[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) atomicAdd(&bins[in[i] % nbins], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < nbins; b += blockDim.x) atomicAdd(&out[b], bins[b]);
}
extern "C" __global__ void reverse(int* data) {
    HIP_DYNAMIC_SHARED(int, scratch)
    scratch[threadIdx.x] = data[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
    data[blockIdx.x * blockDim.x + threadIdx.x] = scratch[blockDim.x - 1 - threadIdx.x];
}
"#;
    let data: Vec<u8> = (0..10_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    let nbins = 37usize;
    let (din, out) = (upload(&backend, &data), upload(&backend, &vec![0u32; nbins]));
    let config = LaunchConfig { grid: [5, 1, 1], block: [64, 1, 1], shared_mem: (nbins * 4) as u32 };
    launch_once(&backend, source, "histogram", config, &[le(din.0), le(data.len() as i32), le(out.0), le(nbins as i32)]).unwrap();
    let mut want = vec![0u32; nbins];
    for v in &data {
        want[*v as usize % nbins] += 1;
    }
    assert_eq!(download::<u32>(&backend, out, nbins), want);

    let values: Vec<i32> = (0..96).collect();
    let dv = upload(&backend, &values);
    let config = LaunchConfig { grid: [3, 1, 1], block: [32, 1, 1], shared_mem: 32 * 4 };
    launch_once(&backend, source, "reverse", config, &[le(dv.0)]).unwrap();
    let want: Vec<i32> = values.chunks(32).flat_map(|c| c.iter().rev().copied()).collect();
    assert_eq!(download::<i32>(&backend, dv, 96), want);
}

#[test]
fn a_failed_assert_ends_the_launch_with_hip_error_assert() {
    if !have("c++") {
        return;
    }
    let backend = backend();
    let source = r#"
#include <cassert>
extern "C" __global__ void checked(int* seen, int bad_block) {
    atomicAdd(&seen[0], 1);
    assert(blockIdx.x != (unsigned)bad_block || threadIdx.x != 3);
    atomicAdd(&seen[1], 1);
}
extern "C" __global__ void checked_with_barrier(int* seen) {
    assert(threadIdx.x != 5);
    __syncthreads();
    atomicAdd(&seen[0], 1);
}
"#;
    let seen = upload(&backend, &[0i32; 2]);
    let config = LaunchConfig { grid: [1, 1, 1], block: [8, 1, 1], shared_mem: 0 };
    let error = launch_once(&backend, source, "checked", config, &[le(seen.0), le(0i32)]).unwrap_err();
    assert_eq!(error.hip_code(), hip_code::ASSERT, "{error}");
    assert!(error.message().contains("block [0,0,0], thread [3,0,0] Assertion `blockIdx.x"), "{error}");
    assert_eq!(download::<i32>(&backend, seen, 2), [4, 3], "the block ends at the failing thread");

    let barrier = upload(&backend, &[0i32; 1]);
    let error = launch_once(&backend, source, "checked_with_barrier", config, &[le(barrier.0)]).unwrap_err();
    assert_eq!(error.hip_code(), hip_code::ASSERT, "{error}");
    assert_eq!(download::<i32>(&backend, barrier, 1), [0], "no thread passes the barrier");

    // The worker goes on: the same kernel runs cleanly afterwards.
    let clean = upload(&backend, &[0i32; 2]);
    launch_once(&backend, source, "checked", config, &[le(clean.0), le(-1i32)]).unwrap();
    assert_eq!(download::<i32>(&backend, clean, 2), [8, 8]);
}

#[test]
fn kernel_printf_is_collected_in_block_order() {
    if !have("c++") {
        return;
    }
    let backend = backend();
    let source = r#"
#include <cstdio>
extern "C" __global__ void hello(int tag) {
    printf("tag %d block %u thread %u\n", tag, blockIdx.x, threadIdx.x);
    printf("x");
}
"#;
    let tag = 48_151_623;
    let config = LaunchConfig { grid: [4, 1, 1], block: [2, 1, 1], shared_mem: 0 };
    launch_once(&backend, source, "hello", config, &[le(tag)]).unwrap();
    let printed = lock(&super::launch::tests::PRINTED).iter().find(|o| o.contains(&tag.to_string())).cloned().expect("the launch's output");
    let want: String = (0..4).flat_map(|b| (0..2).map(move |t| format!("tag {tag} block {b} thread {t}\nx"))).collect();
    assert_eq!(printed, want);
}

#[test]
fn divergent_warp_operations_go_on_with_the_lanes_that_took_the_branch() {
    if !have("c++") {
        return;
    }
    let backend = backend();
    let source = r#"
extern "C" __global__ void diverge(int* out) {
    unsigned lane = threadIdx.x % warpSize;
    if (lane < 8) {
        int v = __shfl_xor((int)lane, 1);
        out[threadIdx.x] = v * 100 + __popcll(__activemask());
    }
    __syncthreads();
    if (threadIdx.x == 0) out[blockDim.x] = __syncthreads_count(1);
}
"#;
    let out = upload(&backend, &[-1i32; 65]);
    let config = LaunchConfig { grid: [1, 1, 1], block: [64, 1, 1], shared_mem: 0 };
    launch_once(&backend, source, "diverge", config, &[le(out.0)]).unwrap();
    let got = download::<i32>(&backend, out, 65);
    for t in 0..64usize {
        let lane = t % 32;
        let want = if lane < 8 { (lane as i32 ^ 1) * 100 + 8 } else { -1 };
        assert_eq!(got[t], want, "thread {t}: {got:?}");
    }
    // Thread 0 alone reaches the second barrier: the others have returned.
    assert_eq!(got[64], 1);
}

#[test]
fn launches_with_bad_shapes_or_arguments_are_refused() {
    if !have("c++") {
        return;
    }
    let backend = backend();
    let module = compile_and_load(&backend, VADD);
    let vadd = backend.module_function(module, "vadd").unwrap();
    let ok = LaunchConfig { grid: [1, 1, 1], block: [1, 1, 1], shared_mem: 0 };
    assert_eq!(vadd.args_len(), 32);
    let short = backend.launch_kernel(None, vadd.handle, ok, &[0; 31]).unwrap_err();
    assert_eq!(short.hip_code(), hip_code::INVALID_VALUE, "{short}");
    assert!(short.message().contains("need 32"), "{short}");
    let cases = [
        LaunchConfig { grid: [0, 1, 1], ..ok },
        LaunchConfig { block: [1, 0, 1], ..ok },
        LaunchConfig { block: [2048, 1, 1], ..ok },
        LaunchConfig { block: [32, 32, 2], ..ok },
        LaunchConfig { block: [1, 1, 65], ..ok },
        LaunchConfig { grid: [1, 65_536, 1], ..ok },
    ];
    for config in cases {
        let err = backend.launch_kernel(None, vadd.handle, config, &[0; 32]).unwrap_err();
        assert_eq!(err.hip_code(), hip_code::INVALID_CONFIGURATION, "{config:?}: {err}");
    }
    // More dynamic shared memory than a block has: ROCm's hipErrorOutOfMemory.
    let err = backend.launch_kernel(None, vadd.handle, LaunchConfig { shared_mem: 1 << 20, ..ok }, &[0; 32]).unwrap_err();
    assert_eq!(err.hip_code(), hip_code::OUT_OF_MEMORY, "{err}");
    let stale = FunctionHandle::from_raw(u64::MAX);
    let err = backend.launch_kernel(None, stale, ok, &[0; 32]).unwrap_err();
    assert_eq!(err.hip_code(), hip_code::INVALID_HANDLE);
    // Nothing ran: every pointer argument was null.
}

#[test]
fn module_globals_are_readable_and_writable() {
    if !have("c++") {
        return;
    }
    let backend = backend();
    let module = compile_and_load(
        &backend,
        r#"
__device__ int counter;
__device__ float table[4] = {1, 2, 3, 4};
extern "C" __global__ void bump(int by) { atomicAdd(&counter, by); }
extern "C" __global__ void scale(float by) { table[threadIdx.x] *= by; }
"#,
    );
    let (counter, size) = backend.module_global(module, "counter").unwrap();
    assert_eq!(size, 4);
    let (table, size) = backend.module_global(module, "table").unwrap();
    assert_eq!(size, 16);
    assert_eq!(download::<f32>(&backend, table, 4), [1.0, 2.0, 3.0, 4.0]);
    backend.memcpy_htod_sync(None, counter, &10i32.to_le_bytes()).unwrap();

    let bump = backend.module_function(module, "bump").unwrap();
    let config = LaunchConfig { grid: [3, 1, 1], block: [4, 1, 1], shared_mem: 0 };
    backend.launch_kernel(None, bump.handle, config, &le(1i32)).unwrap();
    assert_eq!(download::<i32>(&backend, counter, 1), [22]);
    let scale = backend.module_function(module, "scale").unwrap();
    let config = LaunchConfig { grid: [1, 1, 1], block: [4, 1, 1], shared_mem: 0 };
    backend.launch_kernel(None, scale.handle, config, &le(2.5f32)).unwrap();
    assert_eq!(download::<f32>(&backend, table, 4), [2.5, 5.0, 7.5, 10.0]);

    assert_eq!(backend.free(counter).unwrap_err().hip_code(), hip_code::INVALID_VALUE);
    let missing = backend.module_global(module, "nope").unwrap_err();
    assert_eq!(missing.hip_code(), hip_code::NOT_FOUND);
    let past_end = backend.memcpy_htod_sync(None, counter, &[0; 8]).unwrap_err();
    assert_eq!(past_end.hip_code(), hip_code::INVALID_VALUE);
}

#[test]
fn unloading_closes_the_module_and_invalidates_its_handles() {
    if !have("c++") {
        return;
    }
    let backend = backend();
    // The module's destructor reports through device memory that it ran, i.e. that the
    // library was closed.
    let module = compile_and_load(
        &backend,
        r#"
__device__ int* unload_marker;
__device__ int value = 5;
extern "C" __global__ void arm(int* slot) { unload_marker = slot; }
__attribute__((destructor)) static void on_unload() { if (unload_marker) *unload_marker = 0x600d; }
"#,
    );
    let slot = backend.malloc(0, 4).unwrap();
    let arm = backend.module_function(module, "arm").unwrap();
    let config = LaunchConfig { grid: [1, 1, 1], block: [1, 1, 1], shared_mem: 0 };
    backend.launch_kernel(None, arm.handle, config, &le(slot.0)).unwrap();
    let (global, _) = backend.module_global(module, "value").unwrap();
    assert_eq!(download::<i32>(&backend, global, 1), [5]);
    assert_eq!(download::<i32>(&backend, slot, 1), [0]);

    backend.module_unload(module).unwrap();
    assert_eq!(download::<i32>(&backend, slot, 1), [0x600d], "the library was closed");
    let err = backend.launch_kernel(None, arm.handle, config, &le(slot.0)).unwrap_err();
    assert_eq!(err.hip_code(), hip_code::INVALID_HANDLE);
    let err = backend.memcpy_htod_sync(None, global, &[0; 4]).unwrap_err();
    assert_eq!(err.hip_code(), hip_code::INVALID_DEVICE_POINTER);
    assert_eq!(backend.module_function(module, "arm").unwrap_err().hip_code(), hip_code::INVALID_HANDLE);
    assert_eq!(backend.module_unload(module).unwrap_err().hip_code(), hip_code::INVALID_HANDLE);
}

#[test]
fn memory_and_modules_released_under_a_queued_kernel_stay_until_it_ran() {
    if !have("c++") {
        return;
    }
    let backend = backend();
    let module = compile_and_load(&backend, "extern \"C\" __global__ void fill(int* p, int v) { p[blockIdx.x * blockDim.x + threadIdx.x] = v; }");
    let fill = backend.module_function(module, "fill").unwrap();
    let total = backend.mem_get_info(0).unwrap().total;
    let buffer = backend.malloc(0, MIB).unwrap();
    let stream = backend.stream_create(0, stream_flags::DEFAULT, 0).unwrap();
    let (open, opened) = mpsc::channel::<()>();
    backend
        .launch_host_func(
            stream,
            Box::new(move || {
                let _ = opened.recv();
            }),
        )
        .unwrap();
    let config = LaunchConfig { grid: [256, 1, 1], block: [1024, 1, 1], shared_mem: 0 };
    let args = pack(&fill.params, &[le(buffer.0), le(7i32)]);
    backend.launch_kernel(Some(stream), fill.handle, config, &args).unwrap();
    backend.free(buffer).unwrap();
    backend.module_unload(module).unwrap();
    assert_eq!(backend.mem_get_info(0).unwrap().free, total - MIB, "parked, not freed");
    open.send(()).unwrap();
    backend.stream_synchronize(stream).unwrap();
    assert_eq!(backend.mem_get_info(0).unwrap().free, total, "released after the kernel");
}

#[test]
fn name_expressions_reach_cpp_kernels_and_variables() {
    if !have("c++") {
        return;
    }
    let backend = backend();
    let source = r#"
template <typename T> __global__ void fill(T* out, T value) { out[threadIdx.x] = value; }
namespace ns { __device__ int hidden = 42; }
extern "C" __global__ void plain(int* p) { p[0] = 1; }
__global__ void twice(int* p) { p[0] = 2; }
__global__ void twice(float* p) { p[0] = 2; }
"#;
    let out = compile(&backend, source, &["fill<float>", "&fill<int>", "ns::hidden", "plain", "static_cast<void(*)(float*)>(&twice)"]);
    assert!(out.success, "{}", out.log);
    let lowered = &out.lowered_names;
    assert_eq!(lowered.len(), 5);
    assert_eq!(lowered[4], "_Z5twicePf", "hipcc's form for an overloaded kernel");
    assert!(lowered[0].starts_with("_Z4fillIfE"), "{lowered:?}");
    assert!(lowered[1].starts_with("_Z4fillIiE"), "{lowered:?}");
    assert_eq!(lowered[2], "_ZN2ns6hiddenE");
    assert_eq!(lowered[3], "plain");

    let module = backend.module_load(0, ModuleFormat::Auto, &out.code).unwrap();
    let fill = backend.module_function(module, &lowered[0]).unwrap();
    assert_eq!(fill.params.iter().map(|p| (p.offset, p.size)).collect::<Vec<_>>(), [(0, 8), (8, 4)]);
    let dst = backend.malloc(0, 4 * 8).unwrap();
    let config = LaunchConfig { grid: [1, 1, 1], block: [8, 1, 1], shared_mem: 0 };
    let args = pack(&fill.params, &[le(dst.0), le(0.25f32)]);
    backend.launch_kernel(None, fill.handle, config, &args).unwrap();
    assert_eq!(download::<f32>(&backend, dst, 8), [0.25; 8]);
    let (hidden, size) = backend.module_global(module, &lowered[2]).unwrap();
    assert_eq!((download::<i32>(&backend, hidden, 1)[0], size), (42, 4));
    assert!(backend.module_function(module, "plain").is_ok());
    let missing = backend.module_function(module, "fill").unwrap_err();
    assert_eq!(missing.hip_code(), hip_code::NOT_FOUND);
    assert!(missing.message().contains("plain"), "lists the kernels: {missing}");

    // The code carries the note a client reads its kernels from: exactly the names the loaded
    // table holds (resolved ones included), and no global.
    use hip_code_object::kernel_names::{self, Presence};
    let noted = kernel_names::read(&out.code).expect("hiprtc output carries its kernel note");
    let mut listed: Vec<&str> = noted.names().collect();
    listed.sort_unstable();
    let mut loaded = backend.module_function_names(module).unwrap();
    loaded.sort_unstable();
    assert_eq!(listed, loaded);
    assert_eq!(noted.presence(&lowered[0]), Presence::Present);
    assert_eq!(noted.presence("_Z5twicePf"), Presence::Present);
    assert_eq!(noted.presence("fill"), Presence::Absent);
    assert_eq!(noted.presence(&lowered[2]), Presence::Absent, "a global is no kernel");
    for name in &loaded {
        let layout: Vec<(u32, u32)> = backend.module_function(module, name).unwrap().params.iter().map(|p| (p.offset, p.size)).collect();
        assert_eq!(noted.params(name), Some(&layout[..]), "{name}: the layout a lookup answers");
    }
}

#[test]
fn attributes_and_occupancy_follow_the_documented_formula() {
    if !have("c++") {
        return;
    }
    let backend = backend();
    let module = compile_and_load(&backend, VADD);
    let vadd = backend.module_function(module, "vadd").unwrap();
    let attrs = backend.function_attributes(vadd.handle).unwrap();
    assert_eq!(attrs, vadd.attributes);
    assert_eq!(attrs.max_threads_per_block, 1024);
    assert_eq!(attrs.shared_size, 0);
    assert_eq!(attrs.max_dynamic_shared_size, 64 << 10);
    assert_eq!(attrs.binary_version, 10);
    let f = vadd.handle;
    assert_eq!(backend.occupancy_max_active_blocks(f, 256, 0), Ok(4));
    assert_eq!(backend.occupancy_max_active_blocks(f, 33, 0), Ok(16));
    assert_eq!(backend.occupancy_max_active_blocks(f, 1024, 0), Ok(1));
    assert_eq!(backend.occupancy_max_active_blocks(f, 64, 16 << 10), Ok(4), "shared-bound");
    assert_eq!(backend.occupancy_max_active_blocks(f, 2048, 0), Ok(0));
    assert_eq!(backend.occupancy_max_active_blocks(f, 64, 1 << 20), Ok(0));
    assert!(backend.occupancy_max_active_blocks(f, 0, 0).is_err());
    let sms = backend.device_properties(0).unwrap().multi_processor_count as u32;
    assert_eq!(backend.occupancy_max_potential_block_size(f, 0, 0), Ok((sms, 1024)));
    assert_eq!(backend.occupancy_max_potential_block_size(f, 0, 100), Ok((16 * sms, 64)));
}

/// A host module written by hand in C against `host_module.h`, compiled to bytes.
fn c_module(body: &str) -> Option<Vec<u8>> {
    if !have("cc") {
        return None;
    }
    let dir = std::env::temp_dir().join(format!("hip-remote-test-{}-{}", std::process::id(), NEXT_C_MODULE.fetch_add(1, Ordering::Relaxed)));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("module.c");
    std::fs::write(&source, format!("#include <hip_remote/host_module.h>\n#include <stddef.h>\n{body}")).unwrap();
    let output = dir.join("module.so");
    let include = concat!(env!("CARGO_MANIFEST_DIR"), "/include");
    let status = Command::new("cc").args(["-std=c11", "-shared", "-fPIC", "-O1", "-I", include, "-o"]).arg(&output).arg(&source).status().unwrap();
    assert!(status.success(), "cc failed");
    let bytes = std::fs::read(&output).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    Some(bytes)
}

static NEXT_C_MODULE: AtomicU64 = AtomicU64::new(0);

const C_MODULE_TEMPLATE: &str = r#"
static int storage[4] = {1, 2, 3, 4};
static void run(const void *args, const hip_remote_block_ctx *ctx) {
    int *out = *(int *const *)args;
    unsigned align_ok = ((size_t)args % HIP_REMOTE_HOST_ARGS_ALIGN) == 0
        && ((size_t)ctx->dynamic_shared % HIP_REMOTE_HOST_ARGS_ALIGN) == 0;
    /* Each block records its index, the block size and whether the ABI's alignment holds. */
    out[ctx->block_idx[0]] = (int)(ctx->block[0] * 1000 + ctx->dynamic_shared_size) * (align_ok ? 1 : -1);
}
static const hip_remote_param params[] = { PARAMS };
static const hip_remote_kernel kernels[] = {{ "run", run, NUM_PARAMS, params, 0, 0 }};
static const hip_remote_global globals[] = {{ "storage", GLOBAL_ADDRESS, sizeof storage }};
const hip_remote_host_module hip_remote_host_module_v1 = {
    MAGIC, HIP_REMOTE_HOST_MODULE_VERSION, 1, kernels, 1, globals };
"#;

fn c_module_with(params: &str, num_params: u32, global_address: &str, magic: &str) -> Option<Vec<u8>> {
    let body = C_MODULE_TEMPLATE
        .replace("NUM_PARAMS", &num_params.to_string())
        .replace("PARAMS", params)
        .replace("GLOBAL_ADDRESS", global_address)
        .replace("MAGIC", magic);
    c_module(&body)
}

#[test]
fn hand_written_c_modules_follow_the_abi() {
    let Some(image) = c_module_with("{0, 8}", 1, "storage", "HIP_REMOTE_HOST_MODULE_MAGIC") else {
        return;
    };
    let backend = backend();
    let module = backend.module_load(0, ModuleFormat::HostModule, &image).unwrap();
    let run = backend.module_function(module, "run").unwrap();
    assert_eq!(run.params, [ParamLayout { offset: 0, size: 8 }]);
    let out = backend.malloc(0, 4 * 4).unwrap();
    let config = LaunchConfig { grid: [4, 1, 1], block: [3, 1, 1], shared_mem: 100 };
    backend.launch_kernel(None, run.handle, config, &le(out.0)).unwrap();
    assert_eq!(download::<i32>(&backend, out, 4), [3100; 4]);
    let (storage, size) = backend.module_global(module, "storage").unwrap();
    assert_eq!((download::<i32>(&backend, storage, 4), size), (vec![1, 2, 3, 4], 16));
}

#[test]
fn malformed_host_modules_are_refused_before_use() {
    let cases = [
        ("{0, 8}", 1, "storage", "0x12345678u", "bad magic"),
        ("{0, 8}, {4, 4}", 2, "storage", "HIP_REMOTE_HOST_MODULE_MAGIC", "overlap"),
        ("{32760, 16}", 1, "storage", "HIP_REMOTE_HOST_MODULE_MAGIC", "argument limit"),
        ("{0, 8}", 1, "(void *)0x1000", "HIP_REMOTE_HOST_MODULE_MAGIC", "inside the module"),
    ];
    let backend = backend();
    for (params, count, global, magic, complaint) in cases {
        let Some(image) = c_module_with(params, count, global, magic) else {
            return;
        };
        let err = backend.module_load(0, ModuleFormat::HostModule, &image).unwrap_err();
        assert_eq!(err.hip_code(), hip_code::INVALID_IMAGE, "{err}");
        assert!(err.message().contains(complaint), "{complaint}: {err}");
    }
    let no_table = c_module("int not_a_module;\n").unwrap();
    let err = backend.module_load(0, ModuleFormat::Auto, &no_table).unwrap_err();
    assert!(err.message().contains("hip_remote_host_module_v1"), "{err}");
    let err = backend.module_load(0, ModuleFormat::CodeObject, &no_table).unwrap_err();
    assert_eq!(err.hip_code(), hip_code::NO_BINARY_FOR_GPU);
    assert!(err.message().contains("`host`"), "{err}");
}

#[test]
fn kernels_may_run_for_a_while_without_blocking_other_streams() {
    if !have("c++") {
        return;
    }
    let backend = backend();
    let module = compile_and_load(
        &backend,
        "extern \"C\" __global__ void spin(volatile int* flag, int* out) {\n\
         \x20 for (long i = 0; i < 200000000 && !*flag; ++i) {}\n\
         \x20 out[blockIdx.x] = *flag;\n}\n",
    );
    let spin = backend.module_function(module, "spin").unwrap();
    let flag = backend.malloc(0, 4).unwrap();
    let out = backend.malloc(0, 4 * 4).unwrap();
    let slow = backend.stream_create(0, stream_flags::NON_BLOCKING, 0).unwrap();
    let fast = backend.stream_create(0, stream_flags::NON_BLOCKING, 0).unwrap();
    let config = LaunchConfig { grid: [4, 1, 1], block: [1, 1, 1], shared_mem: 0 };
    let args = pack(&spin.params, &[le(flag.0), le(out.0)]);
    backend.launch_kernel(Some(slow), spin.handle, config, &args).unwrap();
    // Another stream still makes progress and can release the spinning kernel.
    backend.memset(Some(fast), flag, MemsetPattern::U32(1), 1).unwrap();
    backend.stream_synchronize(fast).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !backend.stream_query(slow).unwrap() {
        assert!(std::time::Instant::now() < deadline, "kernel never finished");
        thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(download::<i32>(&backend, out, 4), [1; 4]);
}

/// A session's stand-in for the null stream is asynchronous for its caller, as HIP's null
/// stream is: a launch on it returns at once, and an event record or memset behind the running
/// kernel neither waits for it nor completes early (hip-tests' `hipErrorNotReady` checks).
#[test]
fn the_session_null_stream_queues_behind_a_running_kernel() {
    if !have("c++") {
        return;
    }
    let backend = backend();
    let module = compile_and_load(
        &backend,
        "extern \"C\" __global__ void spin(volatile int* flag, int* out) {\n\
         \x20 for (long i = 0; i < 2000000000 && !*flag; ++i) {}\n\
         \x20 out[0] = *flag;\n}\n",
    );
    let spin = backend.module_function(module, "spin").unwrap();
    let flag = backend.malloc(0, 4).unwrap();
    let out = backend.malloc(0, 8).unwrap();
    let null = backend.stream_create(0, stream_flags::SESSION_DEFAULT, 0).unwrap();
    let event = backend.event_create(0, 0).unwrap();
    let config = LaunchConfig { grid: [1, 1, 1], block: [1, 1, 1], shared_mem: 0 };
    backend.launch_kernel(Some(null), spin.handle, config, &pack(&spin.params, &[le(flag.0), le(out.0)])).unwrap();
    // Queued behind the kernel: these return while it spins.
    backend.event_record(event, Some(null)).unwrap();
    backend.memset(Some(null), DevicePtr(out.0 + 4), MemsetPattern::U32(7), 1).unwrap();
    assert!(!backend.event_query(event).unwrap(), "the event completed before the kernel ahead of it");
    assert!(!backend.stream_query(null).unwrap(), "the stream is idle with a kernel running");
    // The kernel reads the flag the test sets through the device pointer (a host address).
    // SAFETY: `flag` is a live 4-byte allocation of this backend; device pointers are host
    // addresses on it, and the kernel only reads the flag.
    unsafe { std::ptr::write_volatile(flag.0 as *mut i32, 1) };
    backend.stream_synchronize(null).unwrap();
    assert!(backend.event_query(event).unwrap());
    assert_eq!(download::<i32>(&backend, out, 2), [1, 7], "the kernel, then the memset behind it");
}

#[test]
fn the_prelude_covers_common_device_code() {
    if !have("c++") {
        return;
    }
    let backend = backend();
    let source = r#"
#include <hip/hip_runtime.h>
#include "params.h"
__device__ __forceinline__ float twice(float x) { return FACTOR * x; }
extern "C" __global__ void __launch_bounds__(64)
mix(float* f, int* i, unsigned long long* u, double* d, float4 v) {
    const unsigned t = hipThreadIdx_x + hipBlockIdx_x * hipBlockDim_x;
    dim3 grid = gridDim;
    atomicAdd(&f[0], 1.0f);
    atomicAdd(&i[0], 1);
    atomicMax(&i[1], (int)t);
    atomicMin(&i[2], -(int)t);
    atomicAdd(&u[0], 2ull);
    atomicAdd(&d[0], 0.5);
    atomicInc((unsigned*)&i[3], 1000u);
    atomicOr(&i[4], 1 << (t % 8));
    atomicCAS(&i[5], 0, 7);
    if (t == 0) {
        f[1] = twice(sqrtf(16.0f)) + fmaxf(1.0f, 2.0f) + min(3.0f, 4.0f) + __expf(0.0f)
             + rsqrtf(4.0f) + v.x + v.w;
        f[2] = __int_as_float(__float_as_int(1.25f));
        i[6] = max(3, 9) + __popc(0xffu) + warpSize + (int)grid.x;
    }
}
"#;
    let request = RtcRequest { name: "mix.hip", source, headers: vec![("params.h", "#define FACTOR 2\n")], ..RtcRequest::default() };
    let out = backend.rtc_compile(0, &request).unwrap();
    assert!(out.success, "{}", out.log);
    let module = backend.module_load(0, ModuleFormat::HostModule, &out.code).unwrap();
    let mix = backend.module_function(module, "mix").unwrap();
    assert_eq!(mix.params.last(), Some(&ParamLayout { offset: 32, size: 16 }), "float4 is 16-aligned");
    let f = upload(&backend, &[0f32; 3]);
    let i = upload(&backend, &[0i32; 7]);
    let u = upload(&backend, &[0u64; 1]);
    let d = upload(&backend, &[0f64; 1]);
    let v = as_bytes(&[1f32, 2.0, 3.0, 4.0]);
    let args = pack(&mix.params, &[le(f.0), le(i.0), le(u.0), le(d.0), v]);
    let config = LaunchConfig { grid: [4, 1, 1], block: [64, 1, 1], shared_mem: 0 };
    backend.launch_kernel(None, mix.handle, config, &args).unwrap();
    assert_eq!(download::<f32>(&backend, f, 3), [256.0, 19.5, 1.25]);
    assert_eq!(download::<i32>(&backend, i, 7), [256, 255, -255, 256, 0xff, 7, 53]);
    assert_eq!(download::<u64>(&backend, u, 1), [512]);
    assert_eq!(download::<f64>(&backend, d, 1), [128.0]);
}

#[test]
fn fibers_follow_3d_blocks_and_reuse_their_stacks_across_launches() {
    if !have("c++") {
        return;
    }
    let backend = backend();
    let source = r#"
extern "C" __global__ void neighbours(int* out) {
    __shared__ int ids[1024];
    unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned n = blockDim.x * blockDim.y * blockDim.z;
    ids[t] = (int)t;
    __syncthreads();
    int next = ids[(t + 1) % n];  // written by another fiber before the barrier
    int from_lane_0 = __shfl((int)t, 0);
    out[blockIdx.x * n + t] = next * 10000 + from_lane_0;
}
"#;
    let module = compile_and_load(&backend, source);
    let function = backend.module_function(module, "neighbours").unwrap();
    let stream = backend.stream_create(0, stream_flags::DEFAULT, 0).unwrap();
    for (round, block) in [[8u32, 8, 4], [1024, 1, 1], [3, 5, 7]].into_iter().cycle().take(12).enumerate() {
        let n = (block[0] * block[1] * block[2]) as usize;
        let blocks = 9usize;
        let out = backend.malloc(0, (blocks * n * 4) as u64).unwrap();
        let config = LaunchConfig { grid: [blocks as u32, 1, 1], block, shared_mem: 0 };
        backend.launch_kernel(Some(stream), function.handle, config, &pack(&function.params, &[le(out.0)])).unwrap();
        backend.stream_synchronize(stream).unwrap();
        let got = download::<i32>(&backend, out, blocks * n);
        for (i, value) in got.iter().enumerate() {
            let t = i % n;
            let want = ((t + 1) % n) as i32 * 10000 + (t / 32 * 32) as i32;
            assert_eq!(*value, want, "round {round}, block {block:?}, element {i}");
        }
        backend.free(out).unwrap();
    }
}

#[test]
fn module_abi_versions_1_and_2_load_and_version_2_reports_through_its_services() {
    let Some(v1) = c_module(
        &C_MODULE_TEMPLATE
            .replace("HIP_REMOTE_HOST_MODULE_VERSION", "1u")
            .replace("NUM_PARAMS", "1")
            .replace("PARAMS", "{0, 8}")
            .replace("GLOBAL_ADDRESS", "storage")
            .replace("MAGIC", "HIP_REMOTE_HOST_MODULE_MAGIC"),
    ) else {
        return;
    };
    let backend = backend();
    let module = backend.module_load(0, ModuleFormat::HostModule, &v1).unwrap();
    let run = backend.module_function(module, "run").unwrap();
    let out = backend.malloc(0, 4 * 4).unwrap();
    backend.launch_kernel(None, run.handle, LaunchConfig { grid: [4, 1, 1], block: [3, 1, 1], shared_mem: 100 }, &le(out.0)).unwrap();
    assert_eq!(download::<i32>(&backend, out, 4), [3100; 4], "a version 1 module runs as before");
    let v3 = c_module(
        &C_MODULE_TEMPLATE
            .replace("HIP_REMOTE_HOST_MODULE_VERSION", "3u")
            .replace("NUM_PARAMS", "1")
            .replace("PARAMS", "{0, 8}")
            .replace("GLOBAL_ADDRESS", "storage")
            .replace("MAGIC", "HIP_REMOTE_HOST_MODULE_MAGIC"),
    )
    .unwrap();
    let error = backend.module_load(0, ModuleFormat::HostModule, &v3).unwrap_err();
    assert!(error.message().contains("ABI version 3 is not supported"), "{error}");

    // Block 2 faults after printing; blocks print their index. Blocks run in any order and
    // concurrently, so only block 2's own output and the fault are certain.
    let reporting = c_module(
        r#"
static void run(const void *args, const hip_remote_block_ctx *ctx) {
    (void)args;
    char text[32];
    int len = 0;
    unsigned b = ctx->block_idx[0];
    text[len++] = 'b'; text[len++] = (char)('0' + b); text[len++] = ';';
    ctx->services->print(ctx->services, text, (uint32_t)len);
    if (b == 2) ctx->services->fault(ctx->services, HIP_REMOTE_FAULT_ASSERT, "hand-written assert");
}
static const hip_remote_kernel kernels[] = {{ "run", run, 0, NULL, 0, 0 }};
const hip_remote_host_module hip_remote_host_module_v1 = {
    HIP_REMOTE_HOST_MODULE_MAGIC, HIP_REMOTE_HOST_MODULE_VERSION, 1, kernels, 0, NULL };
"#,
    )
    .unwrap();
    let module = backend.module_load(0, ModuleFormat::HostModule, &reporting).unwrap();
    let run = backend.module_function(module, "run").unwrap();
    let stream = backend.stream_create(0, stream_flags::DEFAULT, 0).unwrap();
    backend.launch_kernel(Some(stream), run.handle, LaunchConfig { grid: [3, 1, 1], block: [1, 1, 1], shared_mem: 0 }, &[]).unwrap();
    let error = backend.stream_synchronize(stream).unwrap_err();
    assert_eq!((error.hip_code(), error.message()), (hip_code::ASSERT, "hand-written assert"));
    // Block 2's output ends with its assert's message, as a GPU runtime prints it.
    let printed = lock(&super::launch::tests::PRINTED).clone();
    assert!(printed.iter().any(|o| o.ends_with("b2;hand-written assert\n") && o.starts_with('b')), "block 2 printed last: {printed:?}");
}

#[test]
fn kernel_printf_beyond_the_launch_buffer_is_dropped_with_a_note() {
    if !have("c++") {
        return;
    }
    let backend = backend();
    let source = r#"
extern "C" __global__ void chatty(int tag) {
    printf("%d:%04u:%0580d\n", tag, blockIdx.x * blockDim.x + threadIdx.x, 0);
}
"#;
    let tag = 77_665_544;
    let config = LaunchConfig { grid: [2, 1, 1], block: [1024, 1, 1], shared_mem: 0 };
    launch_once(&backend, source, "chatty", config, &[le(tag)]).unwrap();
    let printed = lock(&super::launch::tests::PRINTED).iter().find(|o| o.starts_with(&format!("{tag}:0000:"))).cloned().expect("the launch's output");
    let line_len = format!("{tag}:0000:{:0580}\n", 0).len();
    let (kept, note) = printed.split_at(super::launch::PRINTF_BUFFER_LEN);
    // Blocks may interleave their output in time, so which lines the full buffer keeps varies;
    // it starts with block 0 (block order) and ends with the note.
    assert!(kept.starts_with(&format!("{tag}:0000:")), "block 0 first");
    let dropped = 2048 * line_len - super::launch::PRINTF_BUFFER_LEN;
    assert_eq!(note, format!("\n[hip-remote: {dropped} bytes of kernel printf output beyond 1048576 dropped]\n"));
}
