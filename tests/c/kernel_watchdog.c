/*
 * The kernel watchdog (`hip-worker --max-kernel-ms N`, docs/ISOLATION.md):
 *
 *   kernel_watchdog spin    launches a kernel that never returns and synchronizes: the call
 *                           must fail with hipErrorLaunchTimeOut; prints "TIMEOUT <ms>" with
 *                           the time the synchronize took;
 *   kernel_watchdog serve   a kernel that adds 1 to every element, checked: "SERVED".
 *   kernel_watchdog held MS stream waits (a masked GTE, an unmasked EQ) held MS milliseconds
 *                           (past the limit) with that kernel queued behind them: a wait
 *                           lasts as long as the application holds it and is no runaway
 *                           kernel, so nothing times out; the kernel runs after the release,
 *                           checked: "HELD".
 */
#include "rtc_module.h"

static const char* SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void spin(volatile int* flag) {\n"
    "  while (*flag == 0) { }\n"
    "}\n"
    "extern \"C\" __global__ void add_one(int* data, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) data[i] += 1;\n"
    "}\n";

#define N 1024

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int spin(hipModule_t module) {
  hipFunction_t f;
  CHECK(hipModuleGetFunction(&f, module, "spin"));
  int* flag;
  CHECK(hipMalloc((void**)&flag, sizeof(int)));
  CHECK(hipMemset(flag, 0, sizeof(int)));
  void* args[] = {&flag};
  double start = now_ms();
  CHECK(hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
  hipError_t err = hipDeviceSynchronize();
  double took = now_ms() - start;
  REQUIRE(err == hipErrorLaunchTimeOut, "hipDeviceSynchronize returned %s (%d), expected hipErrorLaunchTimeOut", hipGetErrorName(err), (int)err);
  printf("TIMEOUT %.0f %s\n", took, hipGetErrorString(err));
  return 0;
}

static int serve(hipModule_t module) {
  hipFunction_t f;
  CHECK(hipModuleGetFunction(&f, module, "add_one"));
  int host[N];
  for (int i = 0; i < N; i++) host[i] = i;
  int* data;
  CHECK(hipMalloc((void**)&data, sizeof host));
  CHECK(hipMemcpy(data, host, sizeof host, hipMemcpyHostToDevice));
  int n = N;
  void* args[] = {&data, &n};
  CHECK(hipModuleLaunchKernel(f, N / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
  CHECK(hipMemcpy(host, data, sizeof host, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(host[i] == i + 1, "element %d is %d", i, host[i]);
  CHECK(hipFree(data));
  printf("SERVED\n");
  return 0;
}

static int held(hipModule_t module, int hold_ms) {
  hipFunction_t f;
  CHECK(hipModuleGetFunction(&f, module, "add_one"));
  hipStream_t s, releaser;
  CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  CHECK(hipStreamCreateWithFlags(&releaser, hipStreamNonBlocking));
  int host[N];
  for (int i = 0; i < N; i++) host[i] = i;
  int* data;
  uint32_t* words;
  CHECK(hipMalloc((void**)&data, sizeof host));
  CHECK(hipMalloc((void**)&words, 2 * sizeof(uint32_t)));
  CHECK(hipMemcpy(data, host, sizeof host, hipMemcpyHostToDevice));
  CHECK(hipMemset(words, 0, 2 * sizeof(uint32_t)));
  /* A partial mask (the cuda backend's wait kernel) and a full one (CUDA's own wait). */
  CHECK(hipStreamWaitValue32(s, &words[0], 0x4, hipStreamWaitValueGte, 0xf));
  CHECK(hipStreamWaitValue32(s, &words[1], 0x7, hipStreamWaitValueEq, 0xffffffff));
  int n = N;
  void* args[] = {&data, &n};
  CHECK(hipModuleLaunchKernel(f, N / 256, 1, 1, 256, 1, 1, 0, s, args, NULL));
  struct timespec pause = {hold_ms / 1000, (hold_ms % 1000) * 1000000L};
  nanosleep(&pause, NULL);
  EXPECT_ERR(hipStreamQuery(s), hipErrorNotReady);
  CHECK(hipStreamWriteValue32(releaser, &words[0], 0x16, 0));
  CHECK(hipStreamWriteValue32(releaser, &words[1], 0x7, 0));
  CHECK(hipStreamSynchronize(releaser));
  CHECK(hipStreamSynchronize(s));
  CHECK(hipMemcpy(host, data, sizeof host, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(host[i] == i + 1, "element %d is %d after the held waits", i, host[i]);
  CHECK(hipFree(data));
  CHECK(hipFree(words));
  CHECK(hipStreamDestroy(s));
  CHECK(hipStreamDestroy(releaser));
  printf("HELD\n");
  return 0;
}

int main(int argc, char** argv) {
  begin("kernel_watchdog");
  REQUIRE(argc == 2 || (argc == 3 && strcmp(argv[1], "held") == 0), "usage: kernel_watchdog spin|serve|held MS");
  hipModule_t module = rtc_module(SOURCE, "watchdog.hip", NULL);
  if (strcmp(argv[1], "spin") == 0) return spin(module);
  if (strcmp(argv[1], "serve") == 0) return serve(module);
  if (strcmp(argv[1], "held") == 0) return held(module, atoi(argv[2]));
  REQUIRE(0, "unknown mode %s", argv[1]);
  return 1;
}
