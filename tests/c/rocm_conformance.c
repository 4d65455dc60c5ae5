/*
 * Where hip-remote once drifted from ROCm 7's runtime (clr hipamd/src), each step a place the
 * answer must be ROCm's: errors at the call that raised them (not on a later, unrelated call),
 * ROCm's codes for NULL and destroyed handles, memsets of pinned host memory.
 */
#include "check.h"

/* The error of `call` must be reported by it, and the next call must not inherit it. */
static void expect_at_call(hipError_t got, hipError_t want, const char* what) {
  REQUIRE(got == want, "%s returned %s, expected %s", what, hipGetErrorName(got), hipGetErrorName(want));
  (void)hipGetLastError();
  hipError_t next = hipDeviceSynchronize();
  REQUIRE(next == hipSuccess, "after %s the next call failed with %s", what, hipGetErrorName(next));
}

static void posted_errors_at_the_call(void) {
  step("a posted call on a destroyed stream fails at the call (clr hipEventRecord_common)");
  hipStream_t s;
  hipEvent_t e;
  CHECK(hipStreamCreate(&s));
  CHECK(hipEventCreate(&e));
  CHECK(hipStreamDestroy(s));
  expect_at_call(hipEventRecord(e, s), hipErrorContextIsDestroyed, "hipEventRecord on a destroyed stream");
  expect_at_call(hipStreamWaitEvent(s, e, 0), hipErrorInvalidHandle, "hipStreamWaitEvent on a destroyed stream");
  CHECK(hipEventRecord(e, NULL));
  CHECK(hipEventSynchronize(e));

  step("hipMemsetAsync of memory HIP did not allocate fails at the call (clr ihipMemset_validate)");
  static uint8_t not_hip[4096];
  expect_at_call(hipMemsetAsync(not_hip, 0, sizeof not_hip, NULL), hipErrorInvalidValue, "hipMemsetAsync of a static array");
  expect_at_call(hipMemsetD32Async((hipDeviceptr_t)not_hip, 0, 16, NULL), hipErrorInvalidValue, "hipMemsetD32Async of a static array");
  expect_at_call(hipMemset2DAsync(not_hip, 64, 0, 64, 4, NULL), hipErrorInvalidValue, "hipMemset2DAsync of a static array");
  uint8_t* d = NULL;
  CHECK(hipMalloc((void**)&d, 4096));
  expect_at_call(hipMemsetAsync(d + 4000, 0, 200, NULL), hipErrorInvalidValue, "hipMemsetAsync past the allocation's end");
  step("an asynchronous copy past a device allocation's end fails at the call (clr ihipMemcpy_validate)");
  static uint8_t host[8192];
  hipStream_t cs;
  CHECK(hipStreamCreate(&cs));
  expect_at_call(hipMemcpyDtoHAsync(host, (hipDeviceptr_t)d, 8192, cs), hipErrorInvalidValue, "hipMemcpyDtoHAsync of twice the allocation");
  expect_at_call(hipMemcpyHtoDAsync((hipDeviceptr_t)(d + 4000), host, 200, cs), hipErrorInvalidValue, "hipMemcpyHtoDAsync past the end");
  expect_at_call(hipMemcpyAsync(host, d + 100, 4096, hipMemcpyDeviceToHost, cs), hipErrorInvalidValue, "hipMemcpyAsync past the end");
  CHECK(hipMemcpyDtoHAsync(host, (hipDeviceptr_t)d, 4096, cs)); /* the whole allocation is fine */
  CHECK(hipStreamSynchronize(cs));
  CHECK(hipStreamDestroy(cs));
  CHECK(hipFree(d));
  expect_at_call(hipMemsetAsync(d, 0, 16, NULL), hipErrorInvalidValue, "hipMemsetAsync of freed memory");
  CHECK(hipEventDestroy(e));
}

static void null_events(void) {
  step("NULL events are hipErrorInvalidHandle (clr hip_event.cpp)");
  EXPECT_ERR(hipEventRecord(NULL, NULL), hipErrorInvalidHandle);
  EXPECT_ERR(hipEventRecordWithFlags(NULL, NULL, 0), hipErrorInvalidHandle);
  EXPECT_ERR(hipEventSynchronize(NULL), hipErrorInvalidHandle);
  EXPECT_ERR(hipEventQuery(NULL), hipErrorInvalidHandle);
  EXPECT_ERR(hipEventDestroy(NULL), hipErrorInvalidHandle);
  float ms;
  EXPECT_ERR(hipEventElapsedTime(&ms, NULL, NULL), hipErrorInvalidHandle);
  /* ROCm's own hip-tests (Unit_hipEventDestroy_Negative, Unit_hipStreamDestroy_Negative_DoubleDestroy)
   * expect this of a second destroy. */
  hipEvent_t twice;
  CHECK(hipEventCreate(&twice));
  CHECK(hipEventDestroy(twice));
  EXPECT_ERR(hipEventDestroy(twice), hipErrorContextIsDestroyed);
  hipStream_t twice_stream;
  CHECK(hipStreamCreate(&twice_stream));
  CHECK(hipStreamDestroy(twice_stream));
  EXPECT_ERR(hipStreamDestroy(twice_stream), hipErrorContextIsDestroyed);
  EXPECT_ERR(hipStreamQuery(twice_stream), hipErrorContextIsDestroyed);
  EXPECT_ERR(hipStreamSynchronize(twice_stream), hipErrorContextIsDestroyed);
  (void)hipGetLastError();
}

/* Fills host memory of this process through HIP and checks each byte against memset. */
static void check_host_fill(uint8_t* p, size_t n, const char* what) {
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  memset(p, 0x11, n);
  CHECK(hipMemset(p, 0x5a, n / 2));
  for (size_t i = 0; i < n; i++) {
    uint8_t want = i < n / 2 ? 0x5a : 0x11;
    REQUIRE(p[i] == want, "%s: byte %zu is %#x after hipMemset, expected %#x", what, i, p[i], want);
  }
  CHECK(hipMemsetD32Async(p, 0xdeadbeef, n / 8, s));
  CHECK(hipStreamSynchronize(s));
  for (size_t i = 0; i < n / 8; i++) {
    uint32_t v;
    memcpy(&v, p + 4 * i, 4);
    REQUIRE(v == 0xdeadbeef, "%s: word %zu is %#x after hipMemsetD32Async", what, i, v);
  }
  CHECK(hipMemset2DAsync(p, 64, 0x77, 16, 4, s));
  CHECK(hipStreamSynchronize(s));
  for (size_t row = 0; row < 4; row++)
    for (size_t i = 0; i < 64; i++) {
      uint8_t got = p[row * 64 + i];
      if (i < 16) REQUIRE(got == 0x77, "%s: row %zu byte %zu is %#x after hipMemset2DAsync", what, row, i, got);
      else REQUIRE(got != 0x77, "%s: hipMemset2DAsync wrote past its width at row %zu byte %zu", what, row, i);
    }
  EXPECT_ERR(hipMemset(p, 0, n + 1), hipErrorInvalidValue);
  CHECK(hipStreamDestroy(s));
}

static void memset_of_pinned_host_memory(void) {
  step("hipMemset* of hipHostMalloc and hipHostRegister memory (ROCm fills pinned host memory)");
  const size_t n = 8192;
  uint8_t* pinned = NULL;
  CHECK(hipHostMalloc((void**)&pinned, n, 0));
  check_host_fill(pinned, n, "hipHostMalloc");
  CHECK(hipHostFree(pinned));
  uint8_t* mapped = NULL;
  CHECK(hipHostMalloc((void**)&mapped, n, hipHostMallocMapped));
  check_host_fill(mapped, n, "hipHostMallocMapped");
  CHECK(hipHostFree(mapped));
  uint8_t* registered = aligned_alloc(4096, n);
  REQUIRE(registered != NULL, "aligned_alloc");
  CHECK(hipHostRegister(registered, n, 0));
  check_host_fill(registered, n, "hipHostRegister");
  CHECK(hipHostUnregister(registered));
  free(registered);
}

/* ROCm (hip_graph.cpp capturehipMemcpyAsync, capturehipMallocAsync): host copies and stream
 * ordered allocations are captured as nodes; a memcpy node reads its host memory each time the
 * graph runs and writes its host destination by the time the launch stream is synchronised. */
static void graphs_with_host_memory(void) {
  step("hipMemcpyAsync of host memory and hipMallocAsync captured into a graph");
  enum { N = 1024 };
  static int in[N], out[N];
  hipStream_t s;
  CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  hipGraph_t graph;
  int* scratch = NULL;
  CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  CHECK(hipMallocAsync((void**)&scratch, sizeof in, s));
  CHECK(hipMemcpyAsync(scratch, in, sizeof in, hipMemcpyHostToDevice, s));
  CHECK(hipMemcpyAsync(out, scratch, sizeof out, hipMemcpyDeviceToHost, s));
  CHECK(hipFreeAsync(scratch, s));
  CHECK(hipStreamEndCapture(s, &graph));
  size_t count = 0;
  CHECK(hipGraphGetNodes(graph, NULL, &count));
  REQUIRE(count == 4, "the capture made %zu nodes, expected alloc, two copies, free", count);
  hipGraphExec_t exec;
  CHECK(hipGraphInstantiate(&exec, graph, NULL, NULL, 0));
  for (int round = 1; round <= 2; round++) {
    for (int i = 0; i < N; i++) in[i] = round * 100000 + i;
    memset(out, 0, sizeof out);
    CHECK(hipGraphLaunch(exec, s));
    CHECK(hipStreamSynchronize(s));
    for (int i = 0; i < N; i++)
      REQUIRE(out[i] == in[i], "launch %d: out[%d] = %d, expected %d (the host source as it was at launch)", round, i, out[i], in[i]);
  }
  CHECK(hipGraphExecDestroy(exec));
  CHECK(hipGraphDestroy(graph));

  step("hipGraphAddMemcpyNode1D with host memory");
  int* d = NULL;
  CHECK(hipMalloc((void**)&d, sizeof in));
  CHECK(hipGraphCreate(&graph, 0));
  hipGraphNode_t up, down;
  CHECK(hipGraphAddMemcpyNode1D(&up, graph, NULL, 0, d, in, sizeof in, hipMemcpyHostToDevice));
  CHECK(hipGraphAddMemcpyNode1D(&down, graph, &up, 1, out, d, sizeof out, hipMemcpyDefault));
  CHECK(hipGraphInstantiate(&exec, graph, NULL, NULL, 0));
  for (int round = 3; round <= 4; round++) {
    for (int i = 0; i < N; i++) in[i] = round * 7 + i;
    memset(out, 0, sizeof out);
    CHECK(hipGraphLaunch(exec, s));
    CHECK(hipStreamSynchronize(s));
    for (int i = 0; i < N; i++) REQUIRE(out[i] == in[i], "node launch %d: out[%d] = %d, expected %d", round, i, out[i], in[i]);
  }
  CHECK(hipGraphExecDestroy(exec));
  CHECK(hipGraphDestroy(graph));
  CHECK(hipFree(d));
  CHECK(hipStreamDestroy(s));
}

static volatile int callback_released; /* set by main once hipStreamAddCallback returned */
static volatile int callback_saw_release = -1;

static void HIPRT_CB wait_for_release(hipStream_t stream, hipError_t status, void* user) {
  (void)stream;
  (void)status;
  (void)user;
  /* At most ~5 s: long enough for main to return from the call, short enough to fail fast. */
  for (int i = 0; i < 5000 && !callback_released; i++) {
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  callback_saw_release = callback_released;
}

static void callback_on_null_stream_does_not_wait(void) {
  step("hipStreamAddCallback on the null stream returns before the callback runs to its end");
  CHECK(hipStreamAddCallback(NULL, wait_for_release, NULL, 0));
  callback_released = 1;
  CHECK(hipStreamSynchronize(NULL));
  REQUIRE(callback_saw_release == 1, "the callback ran to its end before hipStreamAddCallback returned");
}

/* HIP 5.2's hipstream_operations test: signal memory is host-accessible, and a stream waiting
 * on it is released by a host write. */
static void signal_memory_is_host_memory(void) {
  step("hipMallocSignalMemory: written by the host and by hipStreamWriteValue64, waited on");
  int64_t* signal = NULL;
  CHECK(hipExtMallocWithFlags((void**)&signal, 8, hipMallocSignalMemory));
  *signal = 0; /* the host writes it: no SIGSEGV */
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  CHECK(hipStreamWriteValue64(s, signal, 0x7FFF0000FFFF0000LL, 0));
  CHECK(hipStreamSynchronize(s));
  REQUIRE(*signal == 0x7FFF0000FFFF0000LL, "signal reads %#llx after hipStreamWriteValue64", (long long)*signal);
  int64_t* data = aligned_alloc(4096, 4096);
  REQUIRE(data != NULL, "aligned_alloc");
  *data = 0x1234;
  CHECK(hipHostRegister(data, 4096, 0));
  *signal = 3;
  CHECK(hipStreamWaitValue64(s, signal, 4, hipStreamWaitValueGte, ~0ULL));
  CHECK(hipStreamWriteValue64(s, data, 0x4321, 0));
  EXPECT_ERR(hipStreamQuery(s), hipErrorNotReady);
  *signal = 6; /* releases the wait */
  CHECK(hipStreamSynchronize(s));
  REQUIRE(*data == 0x4321, "data reads %#llx after the released wait", (long long)*data);
  CHECK(hipHostUnregister(data));
  free(data);
  CHECK(hipFree(signal));
  CHECK(hipStreamDestroy(s));
}

static void trimmed_graph_memory_is_gone(void) {
  step("graph memory freed by a free node and trimmed is no longer reported live");
  hipGraph_t g;
  CHECK(hipGraphCreate(&g, 0));
  hipMemAllocNodeParams params;
  memset(&params, 0, sizeof params);
  params.poolProps.allocType = hipMemAllocationTypePinned;
  params.poolProps.location.type = hipMemLocationTypeDevice;
  params.poolProps.location.id = 0;
  params.bytesize = 1 << 20;
  hipGraphNode_t alloc, release;
  CHECK(hipGraphAddMemAllocNode(&alloc, g, NULL, 0, &params));
  void* mem = params.dptr;
  CHECK(hipGraphAddMemFreeNode(&release, g, &alloc, 1, mem));
  hipGraphExec_t exec;
  CHECK(hipGraphInstantiate(&exec, g, NULL, NULL, 0));
  CHECK(hipGraphLaunch(exec, NULL));
  CHECK(hipStreamSynchronize(NULL));
  hipPointerAttribute_t attrs;
  CHECK(hipPointerGetAttributes(&attrs, mem));
  REQUIRE(attrs.type == hipMemoryTypeDevice, "graph memory before the trim is type %d", (int)attrs.type);
  CHECK(hipGraphExecDestroy(exec));
  CHECK(hipGraphDestroy(g));
  CHECK(hipDeviceGraphMemTrim(0));
  CHECK(hipPointerGetAttributes(&attrs, mem));
  REQUIRE(attrs.type == hipMemoryTypeUnregistered, "trimmed graph memory is still reported as type %d", (int)attrs.type);
  EXPECT_ERR(hipMemsetAsync(mem, 0, 16, NULL), hipErrorInvalidValue);
  (void)hipGetLastError();
}

int main(void) {
  begin("rocm_conformance");
  CHECK(hipSetDevice(0));
  posted_errors_at_the_call();
  null_events();
  memset_of_pinned_host_memory();
  graphs_with_host_memory();
  callback_on_null_stream_does_not_wait();
  signal_memory_is_host_memory();
  trimmed_graph_memory_is_gone();
  printf("PASS rocm_conformance\n");
  return 0;
}
