//! The host backend's fibers: what one `__syncthreads` costs per thread of a block (the
//! scheduler switching into the thread's fiber and the fiber switching back at the barrier),
//! with the hand-written x86-64 switch and with ucontext. One iteration launches one block of
//! [`THREADS`] threads that passes [`ROUNDS`] barriers; the launch's own cost is amortised over
//! `THREADS · ROUNDS` elements. Figures: `docs/BENCHMARKS.md`.
//!
//! `cargo bench -p hip-remote-benches --bench fiber_switch -- --warm-up-time 1 --measurement-time 3`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hip_worker::backend::{
    stream_flags, FunctionHandle, HostBackend, HostConfig, LaunchConfig, MemoryBackend, ModuleBackend, ModuleFormat, RtcBackend, RtcRequest,
    StreamBackend, StreamHandle,
};

const THREADS: u32 = 256;
const ROUNDS: i32 = 1000;

const SOURCE: &str = r#"
extern "C" __global__ void barriers(int rounds, int* out) {
    int sum = 0;
    for (int i = 0; i < rounds; ++i) { sum += threadIdx.x; __syncthreads(); }
    if (threadIdx.x == 0) out[0] = sum;
}
"#;

fn kernel(backend: &HostBackend, options: &[&str]) -> FunctionHandle {
    let request = RtcRequest { name: "fiber_switch.hip", source: SOURCE, options: options.to_vec(), ..RtcRequest::default() };
    let out = backend.rtc_compile(0, &request).expect("hiprtc runs");
    assert!(out.success, "compile failed (a C++ compiler is needed):\n{}", out.log);
    let module = backend.module_load(0, ModuleFormat::HostModule, &out.code).expect("module loads");
    backend.module_function(module, "barriers").expect("kernel").handle
}

fn launch(backend: &HostBackend, stream: StreamHandle, function: FunctionHandle, out: u64) {
    let mut args = ROUNDS.to_le_bytes().to_vec();
    args.extend_from_slice(&[0; 4]);
    args.extend_from_slice(&out.to_le_bytes());
    let config = LaunchConfig { grid: [1, 1, 1], block: [THREADS, 1, 1], shared_mem: 0 };
    backend.launch_kernel(Some(stream), function, config, &args).expect("launch");
    backend.stream_synchronize(stream).expect("the kernel runs");
}

fn fiber_switch(c: &mut Criterion) {
    let backend = HostBackend::new(HostConfig { devices: 1, memory_per_device: 64 << 20, allow_host_code: true, ..HostConfig::default() });
    let out = backend.malloc(0, 8).expect("malloc").0;
    let stream = backend.stream_create(0, stream_flags::DEFAULT, 0).expect("stream");
    let mut group = c.benchmark_group("fiber_switch");
    group.throughput(Throughput::Elements(u64::from(THREADS) * ROUNDS as u64));
    for (name, options) in [("asm_switch_per_thread_barrier", &[][..]), ("ucontext_per_thread_barrier", &["-DHIP_REMOTE_FIBER_UCONTEXT=1"][..])] {
        let function = kernel(&backend, options);
        group.bench_function(name, |b| b.iter(|| launch(&backend, stream, function, out)));
    }
    group.finish();
}

criterion_group!(benches, fiber_switch);
criterion_main!(benches);
