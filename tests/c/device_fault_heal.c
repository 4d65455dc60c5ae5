/*
 * A GPU fault in shared mode (`hip-worker --isolation shared`, docs/ISOLATION.md "Faults in
 * shared mode"), one role per process (each process is one session of the worker), driven by
 * scripts/device-fault-heal.sh:
 *
 *   device_fault_heal hold    allocates and fills a buffer, prints "READY", waits for a line on
 *                             stdin, then copies the buffer back: the copy must fail with
 *                             hipErrorIllegalAddress (another session's kernel poisoned the
 *                             context they share), and so must the next synchronising calls;
 *                             prints "STICKY <code>";
 *   device_fault_heal fault   a kernel writes through a wild pointer: hipDeviceSynchronize and
 *                             every later synchronising call fail with hipErrorIllegalAddress;
 *                             "FAULTED";
 *   device_fault_heal fresh   a session opened after the fault (served by a new shared process):
 *                             compiles and loads a module, runs a kernel, checks its result:
 *                             "SERVED".
 *
 * Only calls that wait for the worker's answer are checked for the sticky code: hipMalloc with
 * client-placed allocation (the default) is answered by the client library without a round
 * trip, and posted calls report a deferred error at the next synchronising call, as HIP's
 * asynchronous calls do.
 *
 * Without an argument it prints "SKIP" and succeeds (device-test.sh runs every program; this
 * one needs a worker of its own).
 */
#include "rtc_module.h"

static const char* SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void wild(int* unused) {\n"
    "  *(volatile int*)(0x10 + (unsigned long long)threadIdx.x * 0x100000000ULL) = 1;\n"
    "}\n"
    "extern \"C\" __global__ void add_one(int* data, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) data[i] += 1;\n"
    "}\n";

#define N 4096

static int hold(void) {
  int host[N];
  for (int i = 0; i < N; i++) host[i] = i;
  int* data;
  CHECK(hipMalloc((void**)&data, sizeof host));
  CHECK(hipMemcpy(data, host, sizeof host, hipMemcpyHostToDevice));
  CHECK(hipDeviceSynchronize());
  printf("READY\n");
  char line[16];
  if (fgets(line, sizeof line, stdin) == NULL) return 1;
  EXPECT_ERR(hipMemcpy(host, data, sizeof host, hipMemcpyDeviceToHost), hipErrorIllegalAddress);
  EXPECT_ERR(hipDeviceSynchronize(), hipErrorIllegalAddress);
  EXPECT_ERR(hipMemcpy(host, data, sizeof host, hipMemcpyDeviceToHost), hipErrorIllegalAddress);
  printf("STICKY %d\n", (int)hipErrorIllegalAddress);
  return 0;
}

static int fault(void) {
  hipModule_t module = rtc_module(SOURCE, "fault.hip", NULL);
  hipFunction_t f;
  CHECK(hipModuleGetFunction(&f, module, "wild"));
  int host[64] = {0};
  int* data;
  CHECK(hipMalloc((void**)&data, sizeof host));
  CHECK(hipMemcpy(data, host, sizeof host, hipMemcpyHostToDevice));
  CHECK(hipDeviceSynchronize());
  int* unused = NULL;
  void* args[] = {&unused};
  CHECK(hipModuleLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
  EXPECT_ERR(hipDeviceSynchronize(), hipErrorIllegalAddress);
  EXPECT_ERR(hipMemcpy(host, data, sizeof host, hipMemcpyDeviceToHost), hipErrorIllegalAddress);
  EXPECT_ERR(hipDeviceSynchronize(), hipErrorIllegalAddress);
  printf("FAULTED\n");
  return 0;
}

static int fresh(void) {
  hipModule_t module = rtc_module(SOURCE, "fresh.hip", NULL);
  hipFunction_t f;
  CHECK(hipModuleGetFunction(&f, module, "add_one"));
  int host[N];
  for (int i = 0; i < N; i++) host[i] = 3 * i;
  int* data;
  CHECK(hipMalloc((void**)&data, sizeof host));
  CHECK(hipMemcpy(data, host, sizeof host, hipMemcpyHostToDevice));
  int n = N;
  void* args[] = {&data, &n};
  CHECK(hipModuleLaunchKernel(f, N / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
  CHECK(hipMemcpy(host, data, sizeof host, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(host[i] == 3 * i + 1, "element %d is %d", i, host[i]);
  CHECK(hipFree(data));
  printf("SERVED\n");
  return 0;
}

int main(int argc, char** argv) {
  begin("device_fault_heal");
  if (argc < 2) {
    printf("SKIP: run by scripts/device-fault-heal.sh against a --isolation shared worker\n");
    return 0;
  }
  if (strcmp(argv[1], "hold") == 0) return hold();
  if (strcmp(argv[1], "fault") == 0) return fault();
  if (strcmp(argv[1], "fresh") == 0) return fresh();
  REQUIRE(0, "unknown mode %s", argv[1]);
  return 1;
}
