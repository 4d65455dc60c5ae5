/*
 * hiprtc with the client's include directories, as CuPy compiles: `-I` names a directory that
 * exists only here, whose headers include one another (quoted, relative with `..`, and
 * angle-bracket forms), `<hip/hip_version.h>` (the worker's) and rocThrust's
 * `<thrust/detail/config/namespace.h>`; the program expects `__HIPCC__` and HIP's version,
 * defines its own `atomicAdd(long long*)` (real HIP has none) and uses `__half`. A system
 * directory on the option list (`-I/usr/include`, as hipcc's search list gives) is not sent.
 * The worker compiles it and the kernel's results are checked.
 */
#include "rtc_module.h"

#include <sys/stat.h>
#include <unistd.h> /* mkdtemp on macOS */

static void write_file(const char* dir, const char* name, const char* text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE* f = fopen(path, "w");
  if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0) {
    printf("FAIL cannot write %s\n", path);
    exit(1);
  }
}

static void make_dir(const char* dir, const char* name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if (mkdir(path, 0700) != 0) {
    printf("FAIL cannot create %s\n", path);
    exit(1);
  }
}

static const char* SOURCE =
    "#include <lib/outer.h>\n"
    "#if !defined(__HIPCC__) || !defined(__HIPCC_RTC__) || !defined(HIP_VERSION) || HIP_VERSION < 70000000\n"
    "#error \"hiprtc's predefined macros are missing\"\n"
    "#endif\n"
    "__device__ long long atomicAdd(long long* address, long long val) {\n"
    "  return (long long)atomicAdd((unsigned long long*)address, (unsigned long long)val);\n"
    "}\n"
    "extern \"C\" __global__ void shifted(long long* total, float* out, const float* in, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) {\n"
    "    __half h = __float2half(in[i]);\n"
    "    out[i] = __half2float(h) + thrust::plus_one(0.0f);\n"
    "    atomicAdd(total, (long long)i);\n"
    "  }\n"
    "}\n";

int main(void) {
  char dir[] = "/tmp/hip-remote-rtc-headers-XXXXXX";
  if (mkdtemp(dir) == NULL) {
    printf("FAIL mkdtemp\n");
    return 1;
  }
  make_dir(dir, "inc");
  make_dir(dir, "inc/lib");
  make_dir(dir, "inc/lib/sub");
  write_file(dir, "inc/lib/outer.h",
             "#pragma once\n"
             "#include \"inner.h\"\n"
             "#include <lib/sub/angle.h>\n"
             "#include <hip/hip_version.h>\n"
             "#include <thrust/detail/config/namespace.h>\n"
             "THRUST_NAMESPACE_BEGIN\n"
             "template <typename T> __device__ T plus_one(T v) { return v + INNER_OFFSET + ANGLE_OFFSET; }\n"
             "THRUST_NAMESPACE_END\n");
  write_file(dir, "inc/lib/inner.h", "#pragma once\n#define INNER_OFFSET 1\n");
  write_file(dir, "inc/lib/sub/angle.h", "#pragma once\n#include \"../deep.h\"\n#define ANGLE_OFFSET DEEP_OFFSET\n");
  write_file(dir, "inc/lib/deep.h", "#pragma once\n#define DEEP_OFFSET 2\n");

  char include_option[600];
  snprintf(include_option, sizeof include_option, "-I%s/inc", dir);
  const char* opts[] = {include_option, "-I/usr/include", "-fcuda-flush-denormals-to-zero"};
  hiprtcProgram prog;
  RTC_CHECK(hiprtcCreateProgram(&prog, SOURCE, "cupy_style.cu", 0, NULL, NULL));
  hiprtcResult compiled = hiprtcCompileProgram(prog, 3, opts);
  size_t log_size = 0;
  RTC_CHECK(hiprtcGetProgramLogSize(prog, &log_size));
  char* log = malloc(log_size + 1);
  RTC_CHECK(hiprtcGetProgramLog(prog, log));
  if (compiled != HIPRTC_SUCCESS) {
    printf("FAIL compile: %s\n%s\n", hiprtcGetErrorString(compiled), log);
    return 1;
  }
  free(log);
  size_t code_size = 0;
  RTC_CHECK(hiprtcGetCodeSize(prog, &code_size));
  char* code = malloc(code_size);
  RTC_CHECK(hiprtcGetCode(prog, code));
  RTC_CHECK(hiprtcDestroyProgram(&prog));
  hipModule_t module;
  CHECK(hipModuleLoadData(&module, code));
  free(code);
  hipFunction_t fn;
  CHECK(hipModuleGetFunction(&fn, module, "shifted"));

  enum { N = 64 };
  float in[N], out[N];
  for (int i = 0; i < N; ++i) in[i] = 0.5f * (float)i;
  float *d_in, *d_out;
  long long* d_total;
  CHECK(hipMalloc((void**)&d_in, sizeof in));
  CHECK(hipMalloc((void**)&d_out, sizeof out));
  CHECK(hipMalloc((void**)&d_total, sizeof(long long)));
  CHECK(hipMemcpy(d_in, in, sizeof in, hipMemcpyHostToDevice));
  CHECK(hipMemset(d_total, 0, sizeof(long long)));
  int n = N;
  void* args[] = {&d_total, &d_out, &d_in, &n};
  CHECK(hipModuleLaunchKernel(fn, 2, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
  CHECK(hipDeviceSynchronize());
  long long total = 0;
  CHECK(hipMemcpy(out, d_out, sizeof out, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&total, d_total, sizeof total, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; ++i) {
    if (out[i] != in[i] + 3.0f) {
      printf("FAIL out[%d] = %g, expected %g\n", i, out[i], in[i] + 3.0f);
      return 1;
    }
  }
  if (total != (long long)N * (N - 1) / 2) {
    printf("FAIL total = %lld, expected %lld\n", total, (long long)N * (N - 1) / 2);
    return 1;
  }
  CHECK(hipModuleUnload(module));
  char cleanup[600];
  snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", dir);
  if (system(cleanup) != 0) printf("note: could not remove %s\n", dir);
  printf("PASS rtc_client_headers\n");
  return 0;
}
