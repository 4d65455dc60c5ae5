/*
 * ROCm 7's answers (clr hipamd/src) where ROCm's own hip-tests found hip-remote's differed:
 * the tracer's API names, kernel names of module functions, the external semaphore calls'
 * argument checks, never-created stream handles, and a query of the null stream, which
 * waits for the blocking streams' work.
 */
#include "rtc_module.h"

static const char* const kSource =
    "extern \"C\" __global__ void spin(long long cycles) {\n"
    "  long long start = clock64();\n"
    "  while (clock64() - start < cycles) {}\n"
    "}\n";

/* clock64 cycles the spinning kernel runs: 1 s at the host backend's 1 GHz, less on a
 * faster GPU clock; far longer than a query takes to follow its launch. */
#define SPIN_CYCLES 1000000000LL

static void api_names(void) {
  step("hipApiName: ROCm's tracer ids, \"unknown\" for reserved and unknown ids (clr hip_prof_str.h)");
  const struct {
    uint32_t id;
    const char* name;
  } known[] = {{1, "__hipPopCallConfiguration"}, {104, "hipLaunchByPtr"}, {108, "hipMalloc"},
               {199, "hipStreamSynchronize"}, {337, "hipDeviceSetLimit"}, {460, "hipMemPrefetchBatchAsync"}};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
    const char* got = hipApiName(known[i].id);
    REQUIRE(got != NULL && strcmp(got, known[i].name) == 0, "hipApiName(%u) = %s, want %s", known[i].id, got ? got : "NULL", known[i].name);
  }
  const uint32_t unknown[] = {0, 50, 83, 393, 461, 1023, UINT32_MAX};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    const char* got = hipApiName(unknown[i]);
    REQUIRE(got != NULL && strcmp(got, "unknown") == 0, "hipApiName(%u) = %s, want unknown", unknown[i], got ? got : "NULL");
  }
}

static void kernel_name_ref(hipFunction_t spin) {
  step("hipKernelNameRef: a module function's name; NULL for NULL (clr hip_intercept.cpp)");
  const char* name = hipKernelNameRef(spin);
  REQUIRE(name != NULL && strcmp(name, "spin") == 0, "hipKernelNameRef = %s, want spin", name ? name : "NULL");
  REQUIRE(hipKernelNameRef(NULL) == NULL, "hipKernelNameRef(NULL) is not NULL");
  REQUIRE(hipGetLastError() == hipSuccess, "hipKernelNameRef recorded an error");
}

static void external_semaphores(void) {
  step("hipSignal/WaitExternalSemaphoresAsync check their arguments first (clr hip_memory.cpp)");
  hipExternalSemaphoreSignalParams signal = {0};
  hipExternalSemaphoreWaitParams wait = {0};
  signal.params.fence.value = 1;
  wait.params.fence.value = 1;
  hipExternalSemaphore_t none[1] = {NULL};
  hipExternalSemaphore_t foreign[1] = {(hipExternalSemaphore_t)0x1000};
  (void)hipGetLastError();
  EXPECT_ERR(hipSignalExternalSemaphoresAsync(NULL, &signal, 1, NULL), hipErrorInvalidValue);
  REQUIRE(hipGetLastError() == hipErrorInvalidValue, "the last error is not hipErrorInvalidValue");
  EXPECT_ERR(hipWaitExternalSemaphoresAsync(NULL, &wait, 1, NULL), hipErrorInvalidValue);
  REQUIRE(hipGetLastError() == hipErrorInvalidValue, "the last error is not hipErrorInvalidValue");
  EXPECT_ERR(hipSignalExternalSemaphoresAsync(foreign, NULL, 1, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipWaitExternalSemaphoresAsync(none, &wait, 1, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipWaitExternalSemaphoresAsync(foreign, &wait, 1, (hipStream_t)0xFFFF), hipErrorInvalidValue);
  signal.flags = 1;
  EXPECT_ERR(hipSignalExternalSemaphoresAsync(foreign, &signal, 1, NULL), hipErrorInvalidValue);
  signal.flags = 0;
  /* Nothing to do is done. */
  CHECK(hipSignalExternalSemaphoresAsync(foreign, &signal, 0, NULL));
  /* Valid arguments naming a semaphore: none can be imported here. */
  EXPECT_ERR(hipSignalExternalSemaphoresAsync(foreign, &signal, 1, NULL), hipErrorNotSupported);
  EXPECT_ERR(hipWaitExternalSemaphoresAsync(foreign, &wait, 1, NULL), hipErrorNotSupported);
  (void)hipGetLastError();
}

static void never_created_streams(void) {
  step("a never-created stream handle is a destroyed context to query and synchronize (clr hip::isValid)");
  hipStream_t bogus = (hipStream_t)0xFFFF;
  EXPECT_ERR(hipStreamQuery(bogus), hipErrorContextIsDestroyed);
  EXPECT_ERR(hipStreamSynchronize(bogus), hipErrorContextIsDestroyed);
  (void)hipGetLastError();
  CHECK(hipDeviceSynchronize());
}

static void null_stream_query(hipFunction_t spin) {
  step("a query of the null stream waits for the blocking streams, not the non-blocking ones");
  long long cycles = SPIN_CYCLES;
  void* params[] = {&cycles};
  hipStream_t blocking, non_blocking;
  CHECK(hipStreamCreate(&blocking));
  CHECK(hipStreamCreateWithFlags(&non_blocking, hipStreamNonBlocking));
  CHECK(hipStreamQuery(NULL));

  CHECK(hipModuleLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, non_blocking, params, NULL));
  EXPECT_ERR(hipStreamQuery(non_blocking), hipErrorNotReady);
  CHECK(hipStreamQuery(NULL));
  CHECK(hipStreamSynchronize(non_blocking));

  CHECK(hipModuleLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, blocking, params, NULL));
  EXPECT_ERR(hipStreamQuery(NULL), hipErrorNotReady);
  EXPECT_ERR(hipStreamQuery(blocking), hipErrorNotReady);
  CHECK(hipStreamSynchronize(NULL));
  CHECK(hipStreamQuery(blocking));
  CHECK(hipStreamQuery(NULL));

  /* The per-thread default stream is a blocking stream too. */
  CHECK(hipModuleLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, hipStreamPerThread, params, NULL));
  EXPECT_ERR(hipStreamQuery(NULL), hipErrorNotReady);
  CHECK(hipStreamSynchronize(NULL));
  CHECK(hipStreamQuery(hipStreamPerThread));
  CHECK(hipStreamQuery(NULL));
  CHECK(hipStreamDestroy(blocking));
  CHECK(hipStreamDestroy(non_blocking));
}

int main(void) {
  begin("hip_tests_answers");
  CHECK(hipSetDevice(0));
  hipModule_t module = rtc_module(kSource, "spin.hip", NULL);
  hipFunction_t spin;
  CHECK(hipModuleGetFunction(&spin, module, "spin"));
  api_names();
  kernel_name_ref(spin);
  external_semaphores();
  never_created_streams();
  null_stream_query(spin);
  CHECK(hipModuleUnload(module));
  printf("PASS hip_tests_answers\n");
  return 0;
}
