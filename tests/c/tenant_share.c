/*
 * Tenants sharing one worker (docs/ISOLATION.md, "Fair sharing and accounting"):
 *
 *   tenant_share compile <file>        compiles the kernels with hiprtc and writes the code
 *                                      object to <file> (the others load it, so N clients do
 *                                      not compile N times);
 *   tenant_share loop <file> <spin_us>
 *                                      prints "READY", waits for a line "go <start> <end>"
 *                                      (CLOCK_MONOTONIC nanoseconds, the same for every
 *                                      client), then from <start> to <end> launches `tick`
 *                                      (one thread that spins <spin_us> µs and counts),
 *                                      synchronizing every BATCH launches; checks the device's
 *                                      count against its own and prints "COUNT <launches>";
 *   tenant_share verify <file> <stop-file> <min>
 *                                      kernels and copies checked against a CPU oracle, round
 *                                      after round, until <stop-file> exists and <min> rounds
 *                                      ran (at most MAX_VERIFY_SECONDS); prints "RUNNING" after
 *                                      the first round and "VERIFIED <rounds>" at the end.
 */
#include "rtc_module.h"
#include <unistd.h>

/* Launches between two synchronizations in `loop`. */
#define BATCH 32
/* Elements of the verified workload. */
#define N 4096
/* Longest a `verify` run waits for its stop file. */
#define MAX_VERIFY_SECONDS 120

static const char* SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "#include <time.h>\n"
    "static long long now_ns() {\n"
    "  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);\n"
    "  return t.tv_sec * 1000000000LL + t.tv_nsec;\n"
    "}\n"
    "extern \"C\" __global__ void tick(unsigned long long* counter, long long spin_ns) {\n"
    "  long long start = now_ns();\n"
    "  while (now_ns() - start < spin_ns) {}\n"
    "  counter[0] += 1;\n"
    "}\n"
    "extern \"C\" __global__ void saxpy(int n, float a, const float* x, float* y) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";


static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int compile(const char* path) {
  hiprtcProgram prog;
  RTC_CHECK(hiprtcCreateProgram(&prog, SOURCE, "tenant_share.hip", 0, NULL, NULL));
  hiprtcResult compiled = hiprtcCompileProgram(prog, 0, NULL);
  if (compiled != HIPRTC_SUCCESS) {
    size_t log_size = 0;
    RTC_CHECK(hiprtcGetProgramLogSize(prog, &log_size));
    char* log = xmalloc(log_size + 1);
    hiprtcGetProgramLog(prog, log);
    printf("FAIL compile: %s\n%s\n", hiprtcGetErrorString(compiled), log);
    return 1;
  }
  size_t size = 0;
  RTC_CHECK(hiprtcGetCodeSize(prog, &size));
  char* code = xmalloc(size);
  RTC_CHECK(hiprtcGetCode(prog, code));
  FILE* f = fopen(path, "wb");
  REQUIRE(f != NULL, "cannot write %s", path);
  REQUIRE(fwrite(code, 1, size, f) == size, "short write to %s", path);
  fclose(f);
  printf("COMPILED %zu bytes\n", size);
  return 0;
}

static hipModule_t load(const char* path) {
  FILE* f = fopen(path, "rb");
  REQUIRE(f != NULL, "cannot read %s", path);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* code = xmalloc((size_t)size);
  REQUIRE(fread(code, 1, (size_t)size, f) == (size_t)size, "short read of %s", path);
  fclose(f);
  hipModule_t module;
  CHECK(hipModuleLoadData(&module, code));
  free(code);
  return module;
}

static int loop(const char* path, long spin_us) {
  hipModule_t module = load(path);
  hipFunction_t tick;
  CHECK(hipModuleGetFunction(&tick, module, "tick"));
  hipStream_t stream;
  CHECK(hipStreamCreate(&stream));
  unsigned long long* d_counter;
  CHECK(hipMalloc((void**)&d_counter, sizeof *d_counter));
  CHECK(hipMemset(d_counter, 0, sizeof *d_counter));
  long long spin_ns = spin_us * 1000;
  void* params[] = {&d_counter, &spin_ns};
  /* One launch before the window: the first launch's setup is not measured. */
  CHECK(hipModuleLaunchKernel(tick, 1, 1, 1, 1, 1, 1, 0, stream, params, NULL));
  CHECK(hipStreamSynchronize(stream));
  printf("READY\n");
  char line[128];
  double start_ns = 0, end_ns = 0;
  REQUIRE(fgets(line, sizeof line, stdin) != NULL, "stdin closed before the start");
  REQUIRE(sscanf(line, "go %lf %lf", &start_ns, &end_ns) == 2, "expected \"go START END\", got %s", line);
  /* Everyone starts and stops at the same moments. */
  while (now_us() * 1e3 < start_ns) {
    struct timespec pause = {0, 100000};
    nanosleep(&pause, NULL);
  }
  unsigned long long launched = 1, counted = 0;
  while (now_us() * 1e3 < end_ns) {
    for (int i = 0; i < BATCH; i++) CHECK(hipModuleLaunchKernel(tick, 1, 1, 1, 1, 1, 1, 0, stream, params, NULL));
    CHECK(hipStreamSynchronize(stream));
    launched += BATCH;
    counted += BATCH;
  }
  unsigned long long on_device = 0;
  CHECK(hipMemcpy(&on_device, d_counter, sizeof on_device, hipMemcpyDeviceToHost));
  REQUIRE(on_device == launched, "the device counted %llu launches, the client made %llu", on_device, launched);
  printf("COUNT %llu\n", counted);
  CHECK(hipFree(d_counter));
  CHECK(hipStreamDestroy(stream));
  CHECK(hipModuleUnload(module));
  return 0;
}

static int verify(const char* path, const char* stop_file, long min_rounds) {
  hipModule_t module = load(path);
  hipFunction_t saxpy;
  CHECK(hipModuleGetFunction(&saxpy, module, "saxpy"));
  hipStream_t stream;
  CHECK(hipStreamCreate(&stream));
  float *x = xmalloc(N * sizeof(float)), *y = xmalloc(N * sizeof(float)), *want = xmalloc(N * sizeof(float));
  float *d_x, *d_y;
  CHECK(hipMalloc((void**)&d_x, N * sizeof(float)));
  CHECK(hipMalloc((void**)&d_y, N * sizeof(float)));
  double deadline = now_us() + MAX_VERIFY_SECONDS * 1e6;
  long rounds = 0;
  for (;;) {
    float a = 0.5f + (float)(rounds % 7);
    for (int i = 0; i < N; i++) {
      x[i] = (float)((i * 7 + rounds) % 101);
      y[i] = (float)((i * 3 + rounds) % 53);
      want[i] = a * x[i] + y[i];
      want[i] = a * x[i] + want[i];
    }
    CHECK(hipMemcpyAsync(d_x, x, N * sizeof(float), hipMemcpyHostToDevice, stream));
    CHECK(hipMemcpyAsync(d_y, y, N * sizeof(float), hipMemcpyHostToDevice, stream));
    int n = N;
    void* params[] = {&n, &a, &d_x, &d_y};
    for (int twice = 0; twice < 2; twice++) CHECK(hipModuleLaunchKernel(saxpy, N / 256, 1, 1, 256, 1, 1, 0, stream, params, NULL));
    memset(y, 0, N * sizeof(float));
    CHECK(hipMemcpyAsync(y, d_y, N * sizeof(float), hipMemcpyDeviceToHost, stream));
    CHECK(hipStreamSynchronize(stream));
    for (int i = 0; i < N; i++) REQUIRE(y[i] == want[i], "round %ld: y[%d] = %g, the CPU says %g", rounds, i, y[i], want[i]);
    rounds++;
    if (rounds == 1) printf("RUNNING\n");
    if (rounds >= min_rounds && access(stop_file, F_OK) == 0) break;
    REQUIRE(now_us() < deadline, "no stop file %s within %d s", stop_file, MAX_VERIFY_SECONDS);
  }
  CHECK(hipFree(d_x));
  CHECK(hipFree(d_y));
  CHECK(hipStreamDestroy(stream));
  CHECK(hipModuleUnload(module));
  printf("VERIFIED %ld\n", rounds);
  return 0;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc == 3 && strcmp(argv[1], "compile") == 0) return compile(argv[2]);
  if (argc == 4 && strcmp(argv[1], "loop") == 0) return loop(argv[2], atol(argv[3]));
  if (argc == 5 && strcmp(argv[1], "verify") == 0) return verify(argv[2], argv[3], atol(argv[4]));
  fprintf(stderr, "usage: tenant_share compile FILE | loop FILE SPIN_US | verify FILE STOP_FILE MIN_ROUNDS\n");
  return 2;
}
