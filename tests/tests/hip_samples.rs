//! The HIP sample programs of `tests/hip/samples/` (`<<<>>>` kernels, written as AMD's
//! HIP-Basic samples are), built with our `hipcc` and run unchanged against a host-backend
//! worker (or, with `HIP_REMOTE_TEST_CHAIN=1`, through the chained hip-backend worker). Each
//! checks its results against a CPU reference and ends with a `PASS` line; the runner checks
//! that line, the exit status and what reaches stdout/stderr (kernel printf, the assert).
//!
//! Also: a program built by AMD's own hipcc (AMD code objects only) fails its
//! first launch on a host worker with `hipErrorNoBinaryForGpu`, and says why on stderr.

use hip_remote_tests::{run_with_timeout, target_debug_dir, workspace_root, RunOutput, Sandbox, WorkerProcess, RUN_TIMEOUT};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The samples, each `tests/hip/samples/<name>.hip`.
const SAMPLES: &[&str] = &[
    "vector_add",
    "matmul_tiled",
    "block_reduce",
    "warp_reduce",
    "histogram",
    "kernel_printf",
    "kernel_assert",
    "template_kernel",
    "dynamic_shared",
    "half_precision",
    "low_precision",
    "cooperative_groups",
    "amd_device_functions",
    "host_code_in_headers",
    "header_patterns",
    "explicit_instances",
];

/// What building the samples gave: each sample's executable or the compiler's complaint.
enum Built {
    /// The tools are missing here; every sample test skips with this reason.
    Skipped(String),
    Programs(HashMap<&'static str, Result<PathBuf, String>>),
}

/// Builds every sample once (the tests share the executables), with
/// `target/debug/hipcc -O2 -o <name> <name>.hip`, as a user would, into
/// `target/debug/hip-samples/`. An executable built from the same inputs (see [`build_key`])
/// is kept, so the chained run of the test command reuses the host run's build.
fn built() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        let hipcc = target_debug_dir().join("hipcc");
        if !hipcc.is_file() {
            return Built::Skipped(format!("HIP samples: our hipcc is not built ({} is missing)", hipcc.display()));
        }
        // Our hipcc drives the system clang (clang++-15 on Debian 12); `hipcc --version` names
        // the one it found on a `Compiler: ` line, or says on stderr why there is none.
        let version = Command::new(&hipcc).arg("--version").output().unwrap_or_else(|e| panic!("cannot run {}: {e}", hipcc.display()));
        if !String::from_utf8_lossy(&version.stdout).lines().any(|line| line.starts_with("Compiler: ")) {
            let why = String::from_utf8_lossy(&version.stderr);
            return Built::Skipped(format!("HIP samples: our hipcc finds no clang here ({})", why.trim()));
        }
        let out_dir = target_debug_dir().join("hip-samples");
        std::fs::create_dir_all(&out_dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", out_dir.display()));
        let src_dir = workspace_root().join("tests/hip/samples");
        // Two at a time: the builds are compiler-bound and CI machines are small.
        let programs = std::thread::scope(|scope| {
            let mut programs = HashMap::new();
            for pair in SAMPLES.chunks(2) {
                let builds: Vec<_> = pair.iter().map(|&name| (name, scope.spawn(|| build_sample(&hipcc, &src_dir, &out_dir, name)))).collect();
                for (name, build) in builds {
                    programs.insert(name, build.join().expect("build thread"));
                }
            }
            programs
        });
        Built::Programs(programs)
    })
}

/// `hipcc -O2 -o <out_dir>/<name> <src_dir>/<name>.hip`, unless an earlier build from the
/// same inputs is there; the executable or why not.
fn build_sample(hipcc: &Path, src_dir: &Path, out_dir: &Path, name: &str) -> Result<PathBuf, String> {
    let src = src_dir.join(format!("{name}.hip"));
    let exe = out_dir.join(name);
    let stamp = out_dir.join(format!("{name}.inputs"));
    let key = build_key(hipcc, src_dir, &src);
    if exe.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|built_from| built_from == key) {
        return Ok(exe);
    }
    let _ = std::fs::remove_file(&stamp);
    let _ = std::fs::remove_file(&exe);
    let mut cmd = Command::new(hipcc);
    cmd.arg("-O2").arg("-o").arg(&exe).arg(&src);
    let out = cmd.output().map_err(|e| format!("cannot run {}: {e}", hipcc.display()))?;
    if !out.status.success() || !exe.is_file() {
        return Err(format!("{cmd:?} failed ({}):\n{}{}", out.status, String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)));
    }
    std::fs::write(&stamp, key).map_err(|e| format!("{}: {e}", stamp.display()))?;
    Ok(exe)
}

/// What a sample's build depends on, hashed: its source and the samples' shared header (by
/// content), hipcc and our headers (by size and modification time), and the variables that
/// steer hipcc.
fn build_key(hipcc: &Path, src_dir: &Path, src: &Path) -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for file in
        [src.to_path_buf(), src_dir.join("sample_utils.hpp"), src_dir.join("host_code_in_headers.hpp"), src_dir.join("explicit_instances.hpp")]
    {
        std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display())).hash(&mut hasher);
    }
    let mut stamped = vec![hipcc.to_path_buf()];
    let mut dirs = vec![workspace_root().join("client-capi/include")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                stamped.push(path);
            }
        }
    }
    stamped.sort();
    for path in stamped {
        let meta = std::fs::metadata(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        (path, meta.len(), meta.modified().ok()).hash(&mut hasher);
    }
    for var in ["HIP_PATH", "ROCM_PATH", "ROCM_HOME", "HIP_CLANG_PATH", "HIP_REMOTE_CLANG", "HIP_REMOTE_LIBDEVICE"] {
        std::env::var_os(var).hash(&mut hasher);
    }
    format!("{:016x}", hasher.finish())
}

/// A finished sample run and the worker it ran against (kept up until the checks are done).
struct SampleRun {
    out: RunOutput,
    _worker: WorkerProcess,
    // Holds the worker's log: dropped after the worker. (A pattern that leaves it out drops
    // it at once: keep the whole run while the worker's logs matter.)
    _sandbox: Sandbox,
}

/// Runs sample `name` against a fresh worker and checks its exit status and final `PASS`
/// line; returns the run for more checks, or `None` when the samples could not be built here.
fn run_sample(name: &str) -> Option<SampleRun> {
    let exe = match built() {
        Built::Skipped(reason) => {
            transport_core::test_skip::skip(reason);
            return None;
        }
        Built::Programs(programs) => match &programs[name] {
            Ok(exe) => exe.clone(),
            Err(complaint) => panic!("building sample {name} failed: {complaint}"),
        },
    };
    let sandbox = Sandbox::new(&format!("hip_sample_{name}"));
    let mut worker = sandbox.start_worker();
    let out = worker.run(&exe, &[]);
    out.assert_success();
    let last = out.stdout.lines().rev().find(|line| !line.trim().is_empty());
    assert_eq!(last, Some("PASS"), "the last line of sample {name} is not PASS: {}", out.report());
    worker.assert_alive();
    Some(SampleRun { out, _worker: worker, _sandbox: sandbox })
}

#[test]
fn vector_add() {
    run_sample("vector_add");
}

/// Shared-memory tiles and `__syncthreads`, matrix sizes that are not multiples of the tile.
#[test]
fn matmul_tiled() {
    run_sample("matmul_tiled");
}

/// A `__syncthreads` tree reduction per block, then a second launch over the partial sums.
#[test]
fn block_reduce() {
    run_sample("block_reduce");
}

/// `__shfl_down` over the device's warp size, read from `hipDeviceProp_t::warpSize`.
#[test]
fn warp_reduce() {
    let Some(SampleRun { out, .. }) = run_sample("warp_reduce") else { return };
    assert!(out.stdout.contains(" lanes."), "the sample names the warp size it used: {}", out.report());
}

/// Shared-memory then global `atomicAdd`.
#[test]
fn histogram() {
    run_sample("histogram");
}

/// A program whose headers hold host code of the kinds test frameworks have (Catch2's, hip-tests'):
/// a kept class template naming host functions and variables, a registration macro, a context
/// class of HIP host types, `using` declarations of host variables, the platform macro and
/// `hip/hiprtc.h`. Its device source compiles on the host worker and its kernel runs.
#[test]
fn host_code_in_headers() {
    let Some(SampleRun { out, .. }) = run_sample("host_code_in_headers") else { return };
    assert!(out.stdout.contains("platform amd, 1000 items: correct"), "{}", out.report());
}

/// Kernels launched from host function templates instantiated explicitly, ggml's way: `extern`
/// instantiations through a macro in the header, their definitions in the source file (an
/// out-of-line member template too). Its device source compiles on the host worker.
#[test]
fn explicit_instances() {
    let Some(SampleRun { out, .. }) = run_sample("explicit_instances") else { return };
    for line in ["scale<float, 3> + 0.25 on 1000 items: correct", "scale<int, 5> on 1000 items: correct"] {
        assert!(out.stdout.contains(line), "no {line:?}: {}", out.report());
    }
}

/// One kernel template launched for `float` and `double`.
#[test]
fn template_kernel() {
    let Some(SampleRun { out, .. }) = run_sample("template_kernel") else { return };
    for line in ["axpy<float> on 5000 items: correct", "axpy<double> on 5000 items: correct"] {
        assert!(out.stdout.contains(line), "no {line:?}: {}", out.report());
    }
}

/// `extern __shared__` and `HIP_DYNAMIC_SHARED`, sized at launch (two sizes each).
#[test]
fn dynamic_shared() {
    let Some(SampleRun { out, .. }) = run_sample("dynamic_shared") else { return };
    assert_eq!(out.stdout.matches(": correct").count(), 4, "four launches checked: {}", out.report());
}

/// What the sample's kernel prints: from 3 blocks of 64 threads, every 20th thread.
fn expected_printf_lines() -> Vec<String> {
    let mut lines = Vec::new();
    for block in 0..3u32 {
        for thread in (0..64u32).step_by(20) {
            let index = block * 64 + thread;
            lines.push(format!("block {block} thread {thread}: tag 7, quarter {:.2}, 0x{:x}", index as f32 * 0.25, index * 17));
        }
    }
    lines
}

/// Device printf reaches the program's stdout by the time `hipDeviceSynchronize` returns:
/// after what the program printed before the launch, before what it prints after; every line
/// exactly once (in any order: lines of a block are not ordered). Through a chain too: the
/// front worker's hip backend takes the output from our library and forwards it.
#[test]
fn kernel_printf() {
    let Some(run) = run_sample("kernel_printf") else { return };
    let out = &run.out;
    let mut expected = expected_printf_lines();
    expected.sort();
    let lines: Vec<&str> = out.stdout.lines().collect();
    let position = |text: &str| lines.iter().position(|line| line.starts_with(text)).unwrap_or_else(|| panic!("no line {text:?}: {}", out.report()));
    let (before, after) = (position("Launching 3 blocks"), position("The kernel's output came first."));
    let mut printed: Vec<String> = lines[before + 1..after].iter().map(|line| line.to_string()).collect();
    printed.sort();
    assert_eq!(printed, expected, "the kernel's lines between the program's own: {}", out.report());
    assert_eq!(out.stdout.matches("block ").count(), expected.len(), "no kernel line elsewhere: {}", out.report());
}

/// A failing device assert: `hipDeviceSynchronize` returns `hipErrorAssert` (710), and the
/// assert's message (expression, block, thread) reaches the program's output with the
/// kernel's, directly and through a chain.
#[test]
fn kernel_assert() {
    let Some(run) = run_sample("kernel_assert") else { return };
    let out = &run.out;
    assert!(out.stdout.contains("hipDeviceSynchronize returned hipErrorAssert (710): "), "{}", out.report());
    let assertion = "Assertion `input[index] >= 0` failed";
    let find = |text: &str| text.lines().find(|line| line.contains(assertion)).map(str::to_string);
    // The message goes out with the kernel's output, to the program's stdout, as a GPU
    // runtime prints it (through a chain too: the front worker forwards it).
    let message = find(&out.stdout).or_else(|| find(&out.stderr));
    let message = message.unwrap_or_else(|| panic!("no assert message: {}", out.report()));
    // Index 613 of blocks of 128 threads: block 4, thread 101.
    assert!(message.contains("block [4,0,0], thread [101,0,0]"), "the message names the failing thread: {message}");
}

/// Where AMD's own `hipcc` is (Debian's package installs it there).
const AMD_HIPCC: &str = "/usr/bin/hipcc";

/// A program built by AMD's hipcc carries AMD code objects only (here for
/// gfx90a and gfx1030). Against a host worker its first launch fails with
/// `hipErrorNoBinaryForGpu`, which `hipGetLastError` returns once with HIP's name and
/// description (the program checks those), and one line on stderr names the architectures
/// the binary carries and the worker's (`host`). Checked twice: the object linked against our
/// library (`-L<lib> -lamdhip64`, so NEEDED `libamdhip64.so.7`), and the executable exactly
/// as AMD's hipcc links it (NEEDED `libamdhip64.so.5`, from /usr/lib), run with
/// `LD_LIBRARY_PATH` at a directory where `libamdhip64.so.5` is our library.
#[test]
fn amd_hipcc_binary_gets_no_binary_for_gpu() {
    if !Path::new(AMD_HIPCC).is_file() {
        transport_core::test_skip::skip("AMD hipcc binaries on a host worker: AMD's hipcc is not installed (/usr/bin/hipcc)");
        return;
    }
    let sandbox = Sandbox::new("amd_hipcc_binary");
    let src = workspace_root().join("tests/hip/no_binary_for_gpu.hip");
    let arch_flags = ["--offload-arch=gfx90a", "--offload-arch=gfx1030", "-O2"];
    let object = sandbox.path().join("no_binary_for_gpu.o");
    let as_amd_links = sandbox.path().join("no_binary_for_gpu_amd_linked");
    let linked_to_ours = sandbox.path().join("no_binary_for_gpu");
    amd_hipcc(amd_hipcc_command().args(arch_flags).arg("-c").arg(&src).arg("-o").arg(&object));
    amd_hipcc(amd_hipcc_command().args(arch_flags).arg(&src).arg("-o").arg(&as_amd_links));
    let lib = sandbox.lib_dir();
    let cxx = std::env::var("CXX").ok().filter(|v| !v.is_empty()).unwrap_or_else(|| "c++".into());
    amd_hipcc(
        Command::new(&cxx)
            .arg(&object)
            .arg("-o")
            .arg(&linked_to_ours)
            .arg(format!("-L{}", lib.display()))
            .arg("-lamdhip64")
            .arg(format!("-Wl,-rpath,{}", lib.display())),
    );
    // AMD's soname, answered by our library.
    let so5_dir = sandbox.path().join("so5");
    std::fs::create_dir_all(&so5_dir).expect("create so5 dir");
    std::os::unix::fs::symlink(&sandbox.artifacts.library, so5_dir.join("libamdhip64.so.5")).expect("symlink libamdhip64.so.5");

    let mut worker = sandbox.start_worker();
    for (exe, library_path) in [(&linked_to_ours, None), (&as_amd_links, Some(&so5_dir))] {
        let mut cmd = worker.command(exe);
        // As a user runs it: the library's debug lines off, so stderr holds what anyone sees.
        cmd.env_remove("HIP_REMOTE_DEBUG");
        if let Some(dir) = library_path {
            cmd.env("LD_LIBRARY_PATH", dir);
        }
        let out = run_with_timeout(cmd, RUN_TIMEOUT);
        out.assert_success();
        assert!(out.stdout.contains("first launch: hipErrorNoBinaryForGpu (209): "), "{}", out.report());
        assert!(out.stdout.lines().last() == Some("PASS"), "{}", out.report());
        let said: Vec<&str> = out.stderr.lines().filter(|line| line.contains("hipErrorNoBinaryForGpu")).collect();
        assert_eq!(said.len(), 1, "one line on stderr says why: {}", out.report());
        for name in ["gfx90a", "gfx1030", "'host'"] {
            assert!(said[0].contains(name), "the reason names {name}: {}", said[0]);
        }
    }
    worker.assert_alive();
}

/// AMD's hipcc, with the variables that might point it at our installation (ROCM_PATH for our
/// hipcc) cleared: it finds ROCm's device libraries where Debian installs them.
fn amd_hipcc_command() -> Command {
    let mut cmd = Command::new(AMD_HIPCC);
    for var in ["HIP_PATH", "ROCM_PATH", "ROCM_HOME", "HIP_CLANG_PATH", "HIP_DEVICE_LIB_PATH"] {
        cmd.env_remove(var);
    }
    cmd
}

/// Runs a build step of the AMD-hipcc test, panicking with its output when it fails.
fn amd_hipcc(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// CuPy's `hipcc --genco` (cupy/cuda/compiler.py `compile_using_hipcc`): `hipcc --genco
/// <options> kern.cpp -o kern.hsaco` with CuPy's options (`-fcuda-flush-denormals-to-zero`,
/// its own `-I` directory and the search list `hipcc -x hip -E -v /dev/null` prints), then
/// the file loaded with `hipModuleLoadData` / `hipModuleLoad` on a host worker and its kernel
/// run (`tests/c/genco_module.c`).
#[test]
fn cupy_style_genco_bundle_loads_and_runs() {
    if let Built::Skipped(reason) = built() {
        transport_core::test_skip::skip(reason);
        return;
    }
    let hipcc = target_debug_dir().join("hipcc");
    let sandbox = Sandbox::new("genco_module");
    let dir = sandbox.path().join("cupy");
    std::fs::create_dir_all(dir.join("include/cupy")).unwrap();
    std::fs::write(dir.join("include/cupy/carray.cuh"), "#pragma once\n#include \"shift.h\"\n").unwrap();
    std::fs::write(dir.join("include/cupy/shift.h"), "#pragma once\n#define CUPY_SHIFT 3.0f\n").unwrap();
    let search = Command::new(&hipcc).args(["-x", "hip", "-E", "-v", "/dev/null"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&search.stderr);
    let list = stderr
        .split("#include <...> search starts here:\n")
        .nth(1)
        .and_then(|rest| rest.split("\nEnd of search list.").next())
        .unwrap_or_else(|| panic!("no include search list from hipcc -E -v:\n{stderr}"));
    let mut options = vec!["-fcuda-flush-denormals-to-zero".to_string(), format!("-I{}", dir.join("include").display())];
    options.extend(list.lines().map(|l| format!("-I{}", l.trim())));
    // CuPy's hipcc source: hip_runtime.h first (`_convert_to_hip_source`), then its preamble.
    let source = dir.join("kern.cpp");
    std::fs::write(
        &source,
        "#include <hip/hip_runtime.h>\n#include <cupy/carray.cuh>\n\
         extern \"C\" __global__ void cupy_shift(float* x, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) x[i] += CUPY_SHIFT;\n}\n",
    )
    .unwrap();
    let hsaco = dir.join("kern.hsaco");
    let out = Command::new(&hipcc).arg("--genco").args(&options).arg(&source).arg("-o").arg(&hsaco).output().unwrap();
    assert!(out.status.success() && hsaco.is_file(), "hipcc --genco failed: {}", String::from_utf8_lossy(&out.stderr));
    // `hipcc --preprocess` as CuPy's `_preprocess_hipcc` calls it (its output is a cache key).
    let pre = Command::new(&hipcc).arg("--preprocess").args(&options).arg(&source).output().unwrap();
    assert!(pre.status.success(), "hipcc --preprocess failed: {}", String::from_utf8_lossy(&pre.stderr));
    assert!(String::from_utf8_lossy(&pre.stdout).contains("x[i] += 3.0f"), "the preprocessed source is on stdout");

    let exe = sandbox.compile("genco_module");
    let mut worker = sandbox.start_worker();
    let run = worker.run(&exe, &[hsaco.to_str().unwrap()]);
    run.assert_success();
    assert!(run.stdout.contains("PASS genco_module"), "no PASS line: {}", run.report());
    worker.assert_alive();
}

/// hip_fp16.h and hip_bf16.h on a host worker: half, half2 and bfloat16 results against a
/// float oracle and known rounding bit patterns (the sample checks and prints PASS).
#[test]
fn half_precision() {
    run_sample("half_precision");
}

/// hip_fp8.h, hip_fp6.h, hip_fp4.h and hip_complex.h on a host worker: every code decoded,
/// every value, tie and out-of-range input encoded, against the sample's own oracle.
#[test]
fn low_precision() {
    run_sample("low_precision");
}

/// hip_cooperative_groups.h on a host worker: blocks, tiles (shuffles, votes, reduce),
/// coalesced groups, and grid sync across the blocks of a cooperative launch.
#[test]
fn cooperative_groups() {
    run_sample("cooperative_groups");
}

/// HIP's AMD-specific device functions (`__builtin_amdgcn_perm` & co, `__bitextract_*`,
/// min/max, ldexpf, tanhf, device memcpy) on a host worker against the sample's oracle.
#[test]
fn amd_device_functions() {
    run_sample("amd_device_functions");
}

/// A kernel file including <hipblas/hipblas.h> (as ggml's HIP backend does in every one) and
/// using its enumerations in device code: the host worker compiles its device source with the
/// header; the transpose and the element sizes are checked against the sample's oracle.
#[test]
fn header_patterns() {
    run_sample("header_patterns");
}

/// Entries of the large sample's device table: about 1.3 MB of source, more than one
/// `RtcCompile` carries (`MAX_TEXT_LEN`, `MAX_CONTROL_LEN`), so its device source reaches the
/// worker as staged bulk (`RtcStage`, `RtcCompileStaged`).
const LARGE_TABLE_ENTRIES: u32 = 140_000;

/// The table's entry `k`, as the generated source spells it and the test expects it.
fn large_table_entry(k: u32) -> u32 {
    k.wrapping_mul(2_654_435_761) >> 8
}

/// A program whose device source is over a megabyte (a `__device__` table the kernel reads),
/// built with our hipcc and run on a host worker: the worker compiles the whole source, and
/// the kernel's reads match the table.
#[test]
fn device_source_beyond_one_frame() {
    let hipcc = target_debug_dir().join("hipcc");
    let version = Command::new(&hipcc).arg("--version").output();
    if !version.is_ok_and(|v| String::from_utf8_lossy(&v.stdout).lines().any(|l| l.starts_with("Compiler: "))) {
        transport_core::test_skip::skip("a device source beyond one frame: our hipcc is not built or finds no clang here");
        return;
    }
    let sandbox = Sandbox::new("large_device_source");
    let entries: Vec<String> = (0..LARGE_TABLE_ENTRIES).map(|k| format!("{}u,", large_table_entry(k))).collect();
    let src = sandbox.path().join("large.hip");
    let samples = 256u32;
    let program = format!(
        r#"#include <hip/hip_runtime.h>
#include <cstdio>
__device__ const unsigned table[{LARGE_TABLE_ENTRIES}] = {{
{}
}};
__global__ void pick(unsigned* out, unsigned stride) {{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = table[(i * stride) % {LARGE_TABLE_ENTRIES}u];
}}
int main() {{
    const unsigned n = {samples};
    unsigned* d = nullptr;
    if (hipMalloc(&d, n * sizeof(unsigned)) != hipSuccess) return 1;
    pick<<<n / 64, 64>>>(d, 547u);
    if (hipGetLastError() != hipSuccess) {{ std::printf("launch failed\n"); return 2; }}
    unsigned h[{samples}];
    if (hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost) != hipSuccess) return 3;
    for (unsigned i = 0; i < n; ++i) std::printf("%u\n", h[i]);
    return 0;
}}
"#,
        entries.join("\n")
    );
    assert!(program.len() > proto_core::limits::MAX_CONTROL_LEN, "the source is {} bytes", program.len());
    std::fs::write(&src, &program).unwrap();
    let exe = sandbox.path().join("large");
    let out = Command::new(&hipcc).arg("-O1").arg("-o").arg(&exe).arg(&src).output().unwrap();
    assert!(out.status.success(), "hipcc:\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let worker = sandbox.start_worker();
    let run = worker.run(&exe, &[]);
    run.assert_success();
    let got: Vec<u32> = run.stdout.lines().map(|l| l.trim().parse().unwrap_or_else(|_| panic!("{}", run.report()))).collect();
    let expected: Vec<u32> = (0..samples).map(|i| large_table_entry((i * 547) % LARGE_TABLE_ENTRIES)).collect();
    assert_eq!(got, expected, "{}", run.report());
}
