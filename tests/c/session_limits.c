/*
 * A session process's file-size limit (docs/HOST_MODULES.md), against a worker started with
 * `--allow-host-code --host-memory-mib 16 --session-max-file-mib 2`. Each mode prints what
 * happened and exits 0 when the worker behaved as documented:
 *
 *   session_limits filesize   a 12 MiB hipMalloc (its memory file; more than half the free
 *                             memory, so the library waits for the worker's answer) and a
 *                             hiprtc program with a 4 MiB initialized array (the compiler's
 *                             output) are beyond the
 *                             limit: both fail with errors naming it (the malloc's on stderr,
 *                             with HIP_REMOTE_DEBUG=1; the compile's in its log, printed
 *                             here), and the same session then still allocates, copies,
 *                             compiles and launches;
 *   session_limits sigxfsz    a kernel restores SIGXFSZ's default and writes 4 MiB to a file:
 *                             its session process dies of SIGXFSZ, the call fails with
 *                             hipErrorLaunchFailure, and the reason (on stderr) names the limit;
 *   session_limits small      allocates, copies, compiles and launches within the limit;
 *   session_limits big <MiB>  (any worker) allocates <MiB> MiB in one hipMalloc, sets its first
 *                             and last MiB and reads them back.
 */
#include "rtc_module.h"

static const char* BIG_SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "__device__ unsigned char big[4 << 20] = {1};\n"
    "extern \"C\" __global__ void touch(unsigned char* out) { out[0] = big[0]; }\n";

static const char* SMALL_SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "#include <fcntl.h>\n"
    "#include <signal.h>\n"
    "#include <string.h>\n"
    "#include <unistd.h>\n"
    "extern \"C\" __global__ void add_one(int* v, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) v[i] += 1;\n"
    "}\n"
    "extern \"C\" __global__ void write_big_file(long long* out) {\n"
    "  signal(SIGXFSZ, SIG_DFL);\n"
    "  static char chunk[1 << 16];\n"
    "  memset(chunk, 7, sizeof chunk);\n"
    "  int fd = open(\"big.bin\", O_CREAT | O_WRONLY | O_TRUNC, 0600);\n"
    "  long long written = 0;\n"
    "  for (int i = 0; fd >= 0 && i < 64; i++) {\n"
    "    ssize_t n = write(fd, chunk, sizeof chunk);\n"
    "    if (n <= 0) break;\n"
    "    written += n;\n"
    "  }\n"
    "  out[0] = written;\n"
    "}\n";


/* Compiles `source`: the module on success; NULL with the log in `log_out` on failure. */
static hipModule_t compile(const char* source, char** log_out) {
  hiprtcProgram prog;
  RTC_CHECK(hiprtcCreateProgram(&prog, source, "limits.hip", 0, NULL, NULL));
  hiprtcResult compiled = hiprtcCompileProgram(prog, 0, NULL);
  if (compiled != HIPRTC_SUCCESS) {
    size_t log_size = 0;
    RTC_CHECK(hiprtcGetProgramLogSize(prog, &log_size));
    char* log = xmalloc(log_size + 1);
    RTC_CHECK(hiprtcGetProgramLog(prog, log));
    log[log_size] = 0;
    printf("COMPILE %s\n%s\n", hiprtcGetErrorString(compiled), log);
    *log_out = log;
    RTC_CHECK(hiprtcDestroyProgram(&prog));
    return NULL;
  }
  size_t code_size = 0;
  RTC_CHECK(hiprtcGetCodeSize(prog, &code_size));
  char* code = xmalloc(code_size);
  RTC_CHECK(hiprtcGetCode(prog, code));
  RTC_CHECK(hiprtcDestroyProgram(&prog));
  hipModule_t module;
  CHECK(hipModuleLoadData(&module, code));
  free(code);
  return module;
}

/* Allocates, copies, compiles and launches within the limit. */
static void small_work(void) {
  enum { N = 16384 };
  int* d = NULL;
  CHECK(hipMalloc((void**)&d, N * sizeof(int)));
  int* h = xmalloc(N * sizeof(int));
  for (int i = 0; i < N; i++) h[i] = i;
  CHECK(hipMemcpy(d, h, N * sizeof(int), hipMemcpyHostToDevice));
  char* log = NULL;
  hipModule_t module = compile(SMALL_SOURCE, &log);
  REQUIRE(module != NULL, "the small program did not compile: %s", log);
  hipFunction_t fn;
  CHECK(hipModuleGetFunction(&fn, module, "add_one"));
  int n = N;
  void* params[] = {&d, &n};
  CHECK(hipModuleLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
  CHECK(hipMemcpy(h, d, N * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(h[i] == i + 1, "element %d is %d", i, h[i]);
  CHECK(hipModuleUnload(module));
  CHECK(hipFree(d));
  free(h);
  printf("SMALL WORK DONE\n");
}

static int filesize(void) {
  void* p = NULL;
  hipError_t err = hipMalloc(&p, (size_t)12 << 20);
  /* The library may place the allocation itself and post it: its refusal then comes with
     the next call that waits for the worker. */
  if (err == hipSuccess) err = hipDeviceSynchronize();
  printf("MALLOC %s\n", hipGetErrorName(err));
  REQUIRE(err == hipErrorOutOfMemory, "a 12 MiB allocation beyond a 2 MiB file-size limit returned %s", hipGetErrorName(err));
  char* log = NULL;
  hipModule_t module = compile(BIG_SOURCE, &log);
  REQUIRE(module == NULL, "a program with a 4 MiB array compiled under a 2 MiB file-size limit");
  REQUIRE(strstr(log, "--session-max-file-mib") != NULL, "the compile log does not name the limit's flag");
  small_work();
  printf("PASS session_limits filesize\n");
  return 0;
}

static int sigxfsz(void) {
  char* log = NULL;
  hipModule_t module = compile(SMALL_SOURCE, &log);
  REQUIRE(module != NULL, "the small program did not compile: %s", log);
  long long* d_out = NULL;
  CHECK(hipMalloc((void**)&d_out, sizeof(long long)));
  hipFunction_t fn;
  CHECK(hipModuleGetFunction(&fn, module, "write_big_file"));
  void* params[] = {&d_out};
  CHECK(hipModuleLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
  long long written = -1;
  hipError_t err = hipMemcpy(&written, d_out, sizeof written, hipMemcpyDeviceToHost);
  printf("DIED %s (wrote %lld)\n", hipGetErrorName(err), written);
  REQUIRE(err == hipErrorLaunchFailure, "the copy after the kernel returned %s", hipGetErrorName(err));
  printf("PASS session_limits sigxfsz\n");
  return 0;
}

static int big(size_t mib) {
  uint8_t* d = NULL;
  size_t size = mib << 20, tail = size - ((size_t)1 << 20);
  CHECK(hipMalloc((void**)&d, size));
  CHECK(hipMemset(d, 0x11, (size_t)1 << 20));
  CHECK(hipMemset(d + tail, 0x22, (size_t)1 << 20));
  uint8_t first = 0, last = 0;
  CHECK(hipMemcpy(&first, d, 1, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&last, d + size - 1, 1, hipMemcpyDeviceToHost));
  REQUIRE(first == 0x11 && last == 0x22, "read back 0x%02x and 0x%02x", first, last);
  CHECK(hipFree(d));
  printf("PASS session_limits big %zu\n", mib);
  return 0;
}

int main(int argc, char** argv) {
  begin("session_limits");
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "filesize") == 0) return filesize();
  if (strcmp(mode, "sigxfsz") == 0) return sigxfsz();
  if (strcmp(mode, "big") == 0 && argc > 2) return big(strtoull(argv[2], NULL, 10));
  if (strcmp(mode, "small") == 0) {
    small_work();
    printf("PASS session_limits small\n");
    return 0;
  }
  printf("usage: session_limits filesize|sigxfsz|small|big MIB\n");
  return 2;
}
