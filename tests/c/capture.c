/*
 * Stream capture: a step of memset + kernels + a device copy + a host function across two
 * streams (forked and joined with events) captured once on the worker, checked to have run
 * nothing, then replayed 100 times with hipGraphLaunch and checked numerically; capture status
 * and info (v1, v2); hipStreamUpdateCaptureDependencies; hipStreamBeginCaptureToGraph; HIP's
 * errors for what is illegal during capture (synchronisation, hipMalloc in global and
 * thread-local modes, the legacy stream, unjoined forks, ending on the wrong stream or thread).
 */
#include "check.h"
#include <hip/hiprtc.h>
#include <pthread.h>

static const char* SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void scale(float* x, float a, float b, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] = x[i] * a + b;\n"
    "}\n"
    "extern \"C\" __global__ void accumulate(const float* y, float* sum, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) sum[i] += y[i];\n"
    "}\n";

#define N 256
#define LAUNCHES 100

static hipModule_t load_module(void) {
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  hiprtcProgram prog;
  REQUIRE(hiprtcCreateProgram(&prog, SOURCE, "capture.hip", 0, NULL, NULL) == HIPRTC_SUCCESS, "create");
  char arch[300];
  snprintf(arch, sizeof arch, "--offload-arch=%s", props.gcnArchName);
  const char* opts[] = {arch};
  REQUIRE(hiprtcCompileProgram(prog, 1, opts) == HIPRTC_SUCCESS, "compile");
  size_t size = 0;
  REQUIRE(hiprtcGetCodeSize(prog, &size) == HIPRTC_SUCCESS, "code size");
  char* code = malloc(size);
  REQUIRE(hiprtcGetCode(prog, code) == HIPRTC_SUCCESS, "code");
  hiprtcDestroyProgram(&prog);
  hipModule_t module;
  CHECK(hipModuleLoadData(&module, code));
  free(code);
  return module;
}

static void expect_all(const float* d, float want, const char* what) {
  float host[N];
  CHECK(hipMemcpy(host, d, sizeof host, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) {
    REQUIRE(host[i] == want, "%s: [%d] = %f, expected %f", what, i, host[i], want);
  }
}

static hipFunction_t scale, accumulate;

static void launch_scale(float* x, float a, float b, hipStream_t s) {
  int n = N;
  void* args[] = {&x, &a, &b, &n};
  CHECK(hipModuleLaunchKernel(scale, N / 64, 1, 1, 64, 1, 1, 0, s, args, NULL));
}

static void launch_accumulate(float* y, float* sum, hipStream_t s) {
  int n = N;
  void* args[] = {&y, &sum, &n};
  CHECK(hipModuleLaunchKernel(accumulate, N / 64, 1, 1, 64, 1, 1, 0, s, args, NULL));
}

static hipStreamCaptureStatus status_of(hipStream_t s) {
  hipStreamCaptureStatus status = (hipStreamCaptureStatus)-1;
  CHECK(hipStreamIsCapturing(s, &status));
  return status;
}

static int host_calls;
static void count_call(void* user) { __atomic_add_fetch((int*)user, 1, __ATOMIC_SEQ_CST); }

static hipStream_t wrong_thread_stream;
static hipError_t wrong_thread_result;
static void* end_from_other_thread(void* unused) {
  (void)unused;
  hipGraph_t g = NULL;
  wrong_thread_result = hipStreamEndCapture(wrong_thread_stream, &g);
  return NULL;
}

int main(void) {
  begin("capture");
  hipModule_t module = load_module();
  CHECK(hipModuleGetFunction(&scale, module, "scale"));
  CHECK(hipModuleGetFunction(&accumulate, module, "accumulate"));
  float *x, *y, *sum;
  CHECK(hipMalloc((void**)&x, N * sizeof(float)));
  CHECK(hipMalloc((void**)&y, N * sizeof(float)));
  CHECK(hipMalloc((void**)&sum, N * sizeof(float)));
  CHECK(hipMemset(x, 0, N * sizeof(float)));
  CHECK(hipMemset(y, 0, N * sizeof(float)));
  CHECK(hipMemset(sum, 0, N * sizeof(float)));
  hipStream_t s1, s2;
  CHECK(hipStreamCreate(&s1));
  CHECK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
  hipEvent_t fork, join;
  CHECK(hipEventCreateWithFlags(&fork, hipEventDisableTiming));
  CHECK(hipEventCreateWithFlags(&join, hipEventDisableTiming));

  step("status outside capture");
  REQUIRE(status_of(s1) == hipStreamCaptureStatusNone, "s1 not capturing");
  REQUIRE(status_of(NULL) == hipStreamCaptureStatusNone, "the null stream not capturing");
  EXPECT_ERR(hipStreamIsCapturing(s1, NULL), hipErrorInvalidValue);

  step("capture a two-stream step");
  CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
  REQUIRE(status_of(s1) == hipStreamCaptureStatusActive, "s1 captures");
  REQUIRE(status_of(s2) == hipStreamCaptureStatusNone, "s2 not yet");
  unsigned long long id1 = 0, id2 = 0;
  hipStreamCaptureStatus st;
  CHECK(hipStreamGetCaptureInfo(s1, &st, &id1));
  REQUIRE(st == hipStreamCaptureStatusActive && id1 != 0, "capture id %llu", id1);
  CHECK(hipMemsetD32Async((hipDeviceptr_t)x, 0x3f800000 /* 1.0f */, N, s1));
  launch_scale(x, 2.0f, 1.0f, s1); /* x = 3 */
  hipGraph_t capturing = NULL;
  const hipGraphNode_t* deps = NULL;
  size_t ndeps = 99;
  CHECK(hipStreamGetCaptureInfo_v2(s1, &st, &id2, &capturing, &deps, &ndeps));
  REQUIRE(st == hipStreamCaptureStatusActive && id2 == id1 && capturing != NULL && ndeps == 1 && deps != NULL, "v2: %llu %zu", id2, ndeps);
  hipGraphNode_t scale_x = deps[0];
  hipGraphNodeType type;
  CHECK(hipGraphNodeGetType(scale_x, &type));
  REQUIRE(type == hipGraphNodeTypeKernel, "the last captured node is the kernel (%d)", type);
  CHECK(hipEventRecord(fork, s1));
  CHECK(hipStreamWaitEvent(s2, fork, 0));
  REQUIRE(status_of(s2) == hipStreamCaptureStatusActive, "s2 joined the capture");
  CHECK(hipStreamGetCaptureInfo(s2, &st, &id2));
  REQUIRE(id2 == id1, "one capture sequence (%llu, %llu)", id1, id2);
  CHECK(hipMemcpyAsync(y, x, N * sizeof(float), hipMemcpyDeviceToDevice, s2)); /* y = 3 */
  launch_scale(y, 1.0f, 1.0f, s2);                                              /* y = 4 */
  CHECK(hipEventRecord(join, s2));
  launch_accumulate(x, sum, s1); /* sum += 3, beside s2's work */
  EXPECT_ERR(hipStreamEndCapture(s2, &capturing), hipErrorStreamCaptureUnmatched);
  CHECK(hipStreamWaitEvent(s1, join, 0));
  launch_accumulate(y, sum, s1); /* sum += 4 */
  CHECK(hipLaunchHostFunc(s1, count_call, &host_calls));
  hipGraph_t graph = NULL;
  CHECK(hipStreamEndCapture(s1, &graph));
  REQUIRE(graph == capturing, "the graph captured into");
  REQUIRE(status_of(s1) == hipStreamCaptureStatusNone && status_of(s2) == hipStreamCaptureStatusNone, "capture over");
  /* Captured, not run. */
  CHECK(hipDeviceSynchronize());
  expect_all(sum, 0.0f, "nothing ran during capture");
  expect_all(x, 0.0f, "x untouched during capture");
  REQUIRE(host_calls == 0, "the host function did not run during capture (%d)", host_calls);

  step("the captured graph");
  size_t count = 0;
  CHECK(hipGraphGetNodes(graph, NULL, &count));
  REQUIRE(count == 7, "%zu nodes", count);
  hipGraphNode_t nodes[7];
  CHECK(hipGraphGetNodes(graph, nodes, &count));
  hipGraphNodeType want[7] = {hipGraphNodeTypeMemset, hipGraphNodeTypeKernel, hipGraphNodeTypeMemcpy, hipGraphNodeTypeKernel,
                              hipGraphNodeTypeKernel, hipGraphNodeTypeKernel, hipGraphNodeTypeHost};
  for (int i = 0; i < 7; i++) {
    CHECK(hipGraphNodeGetType(nodes[i], &type));
    REQUIRE(type == want[i], "node %d type %d", i, type);
  }
  REQUIRE(nodes[1] == scale_x, "the node info reported");
  hipKernelNodeParams kp;
  CHECK(hipGraphKernelNodeGetParams(scale_x, &kp));
  REQUIRE(kp.func == (void*)scale && kp.gridDim.x == N / 64 && kp.blockDim.x == 64 && *(float**)kp.kernelParams[0] == x &&
              *(float*)kp.kernelParams[1] == 2.0f && *(float*)kp.kernelParams[2] == 1.0f,
          "the captured launch's parameters");
  CHECK(hipGraphGetEdges(graph, NULL, NULL, &count));
  REQUIRE(count == 7, "%zu edges", count);
  CHECK(hipGraphGetRootNodes(graph, NULL, &count));
  REQUIRE(count == 1, "%zu roots", count);
  count = 0;
  CHECK(hipGraphNodeGetDependencies(nodes[5], NULL, &count));
  REQUIRE(count == 2, "the join has %zu dependencies", count);

  step("replay 100 times");
  hipGraphExec_t exec;
  CHECK(hipGraphInstantiate(&exec, graph, NULL, NULL, 0));
  for (int i = 0; i < LAUNCHES; i++) CHECK(hipGraphLaunch(exec, s1));
  CHECK(hipStreamSynchronize(s1));
  expect_all(sum, 7.0f * LAUNCHES, "sum after 100 replays");
  expect_all(x, 3.0f, "x");
  expect_all(y, 4.0f, "y");
  REQUIRE(host_calls == LAUNCHES, "the host node ran %d times", host_calls);
  CHECK(hipGraphExecDestroy(exec));
  CHECK(hipGraphDestroy(graph));

  step("begin errors");
  EXPECT_ERR(hipStreamBeginCapture(NULL, hipStreamCaptureModeGlobal), hipErrorStreamCaptureUnsupported);
  EXPECT_ERR(hipStreamBeginCapture(s1, (hipStreamCaptureMode)7), hipErrorInvalidValue);
  EXPECT_ERR(hipStreamEndCapture(s1, &graph), hipErrorIllegalState);
  EXPECT_ERR(hipStreamEndCapture(NULL, &graph), hipErrorIllegalState);
  CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
  EXPECT_ERR(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal), hipErrorIllegalState);
  EXPECT_ERR(hipStreamEndCapture(s1, NULL), hipErrorInvalidValue);
  /* A blocking stream captures: the legacy stream may not be asked. */
  EXPECT_ERR(hipStreamIsCapturing(NULL, &st), hipErrorStreamCaptureImplicit);
  CHECK(hipStreamEndCapture(s1, &graph));
  count = 99;
  CHECK(hipGraphGetNodes(graph, NULL, &count));
  REQUIRE(count == 0, "an empty capture has %zu nodes", count);
  CHECK(hipGraphDestroy(graph));

  step("synchronising a capturing stream invalidates the capture");
  CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
  EXPECT_ERR(hipStreamSynchronize(s1), hipErrorStreamCaptureUnsupported);
  REQUIRE(status_of(s1) == hipStreamCaptureStatusInvalidated, "invalidated");
  graph = (hipGraph_t)0x1;
  EXPECT_ERR(hipStreamEndCapture(s1, &graph), hipErrorStreamCaptureInvalidated);
  REQUIRE(graph == NULL, "no graph from an invalid capture");
  REQUIRE(status_of(s1) == hipStreamCaptureStatusNone, "over");
  CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeRelaxed));
  EXPECT_ERR(hipDeviceSynchronize(), hipErrorStreamCaptureUnsupported);
  EXPECT_ERR(hipStreamEndCapture(s1, &graph), hipErrorStreamCaptureInvalidated);

  /* Copies of host memory are captured as nodes: rocm_conformance.c. */

  step("hipMalloc under the capture modes");
  void* p = NULL;
  CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
  EXPECT_ERR(hipMalloc(&p, 64), hipErrorStreamCaptureUnsupported);
  EXPECT_ERR(hipStreamEndCapture(s1, &graph), hipErrorStreamCaptureInvalidated);
  CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
  EXPECT_ERR(hipHostMalloc(&p, 64, 0), hipErrorStreamCaptureUnsupported);
  EXPECT_ERR(hipStreamEndCapture(s1, &graph), hipErrorStreamCaptureInvalidated);
  CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeRelaxed));
  CHECK(hipMalloc(&p, 64)); /* relaxed captures forbid nothing */
  CHECK(hipFree(p));
  CHECK(hipStreamEndCapture(s1, &graph));
  CHECK(hipGraphDestroy(graph));
  CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeThreadLocal));
  hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
  CHECK(hipThreadExchangeStreamCaptureMode(&mode));
  REQUIRE(mode == hipStreamCaptureModeGlobal, "the old mode");
  CHECK(hipMalloc(&p, 64)); /* this thread is relaxed now */
  CHECK(hipThreadExchangeStreamCaptureMode(&mode));
  EXPECT_ERR(hipFree(p), hipErrorStreamCaptureUnsupported);
  REQUIRE(status_of(s1) == hipStreamCaptureStatusInvalidated, "the thread's capture invalidated");
  EXPECT_ERR(hipStreamEndCapture(s1, &graph), hipErrorStreamCaptureInvalidated);
  CHECK(hipFree(p));

  step("capture ends on the thread that began it");
  CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
  wrong_thread_stream = s1;
  pthread_t t;
  REQUIRE(pthread_create(&t, NULL, end_from_other_thread, NULL) == 0, "pthread_create");
  pthread_join(t, NULL);
  EXPECT_ERR(wrong_thread_result, hipErrorStreamCaptureWrongThread);
  CHECK(hipStreamEndCapture(s1, &graph));
  CHECK(hipGraphDestroy(graph));

  step("an unjoined fork");
  CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
  CHECK(hipEventRecord(fork, s1));
  CHECK(hipStreamWaitEvent(s2, fork, 0));
  CHECK(hipMemsetD32Async((hipDeviceptr_t)y, 0, N, s2));
  EXPECT_ERR(hipStreamEndCapture(s1, &graph), hipErrorStreamCaptureUnjoined);
  REQUIRE(status_of(s2) == hipStreamCaptureStatusNone, "s2 left the capture");

  step("update capture dependencies");
  CHECK(hipStreamBeginCapture(s1, hipStreamCaptureModeGlobal));
  CHECK(hipMemsetD32Async((hipDeviceptr_t)x, 0, N, s1));
  CHECK(hipStreamGetCaptureInfo_v2(s1, &st, NULL, &capturing, &deps, &ndeps));
  hipGraphNode_t first = deps[0];
  CHECK(hipMemsetD32Async((hipDeviceptr_t)y, 0, N, s1));
  CHECK(hipStreamGetCaptureInfo_v2(s1, &st, NULL, NULL, &deps, &ndeps));
  hipGraphNode_t second = deps[0];
  REQUIRE(ndeps == 1 && second != first, "two memsets");
  EXPECT_ERR(hipStreamUpdateCaptureDependencies(s1, &first, 1, 5), hipErrorInvalidValue);
  EXPECT_ERR(hipStreamUpdateCaptureDependencies(s1, NULL, 1, hipStreamAddCaptureDependencies), hipErrorInvalidValue);
  CHECK(hipStreamUpdateCaptureDependencies(s1, &first, 1, hipStreamAddCaptureDependencies));
  CHECK(hipStreamGetCaptureInfo_v2(s1, &st, NULL, NULL, &deps, &ndeps));
  REQUIRE(ndeps == 2 && deps[0] == second && deps[1] == first, "added (%zu)", ndeps);
  CHECK(hipStreamUpdateCaptureDependencies(s1, &first, 1, hipStreamSetCaptureDependencies));
  CHECK(hipStreamGetCaptureInfo_v2(s1, &st, NULL, NULL, &deps, &ndeps));
  REQUIRE(ndeps == 1 && deps[0] == first, "set (%zu)", ndeps);
  launch_scale(x, 1.0f, 1.0f, s1);
  CHECK(hipStreamEndCapture(s1, &graph));
  count = 0;
  CHECK(hipGraphNodeGetDependencies(second, NULL, &count));
  REQUIRE(count == 1, "the second memset after the first");
  hipGraphNode_t after[2];
  count = 2;
  CHECK(hipGraphNodeGetDependentNodes(first, after, &count));
  REQUIRE(count == 2, "the first memset has %zu dependents", count);
  CHECK(hipGraphDestroy(graph));
  EXPECT_ERR(hipStreamUpdateCaptureDependencies(s1, &first, 1, hipStreamAddCaptureDependencies), hipErrorIllegalState);

  step("capture into an existing graph");
  hipGraph_t target;
  CHECK(hipGraphCreate(&target, 0));
  hipGraphNode_t start;
  CHECK(hipGraphAddEmptyNode(&start, target, NULL, 0));
  EXPECT_ERR(hipStreamBeginCaptureToGraph(s1, NULL, NULL, NULL, 0, hipStreamCaptureModeGlobal), hipErrorInvalidValue);
  EXPECT_ERR(hipStreamBeginCaptureToGraph(s1, target, &start, NULL, 0, hipStreamCaptureModeGlobal), hipErrorInvalidValue);
  CHECK(hipStreamBeginCaptureToGraph(s1, target, &start, NULL, 1, hipStreamCaptureModeGlobal));
  CHECK(hipMemsetD32Async((hipDeviceptr_t)sum, 0, N, s1));
  launch_accumulate(x, sum, s1);
  CHECK(hipStreamEndCapture(s1, &graph));
  REQUIRE(graph == target, "the same graph back");
  CHECK(hipGraphGetNodes(target, NULL, &count));
  REQUIRE(count == 3, "%zu nodes", count);
  CHECK(hipGraphGetRootNodes(target, NULL, &count));
  REQUIRE(count == 1, "the empty node is the only root (%zu)", count);
  CHECK(hipGraphInstantiate(&exec, target, NULL, NULL, 0));
  CHECK(hipMemsetD32Async((hipDeviceptr_t)x, 0x40000000 /* 2.0f */, N, s1));
  CHECK(hipGraphLaunch(exec, s1));
  CHECK(hipStreamSynchronize(s1));
  expect_all(sum, 2.0f, "sum = x after the captured reset");
  CHECK(hipGraphExecDestroy(exec));
  CHECK(hipGraphDestroy(target));

  step("the per-thread stream (_spt)");
  CHECK(hipStreamBeginCapture_spt(NULL, hipStreamCaptureModeGlobal));
  CHECK(hipStreamIsCapturing_spt(NULL, &st));
  REQUIRE(st == hipStreamCaptureStatusActive, "the per-thread stream captures");
  REQUIRE(status_of(hipStreamPerThread) == hipStreamCaptureStatusActive, "hipStreamPerThread is the same stream");
  CHECK(hipStreamGetCaptureInfo_spt(NULL, &st, &id2));
  REQUIRE(id2 != 0 && id2 != id1, "a new capture id");
  CHECK(hipMemsetD32Async((hipDeviceptr_t)y, 0x40400000 /* 3.0f */, N, hipStreamPerThread));
  CHECK(hipStreamGetCaptureInfo_v2_spt(NULL, &st, NULL, NULL, NULL, &ndeps));
  REQUIRE(ndeps == 1, "%zu dependencies", ndeps);
  CHECK(hipStreamEndCapture_spt(NULL, &graph));
  CHECK(hipGraphGetNodes(graph, NULL, &count));
  REQUIRE(count == 1, "%zu nodes", count);
  CHECK(hipGraphInstantiate(&exec, graph, NULL, NULL, 0));
  CHECK(hipGraphLaunch(exec, hipStreamPerThread));
  CHECK(hipStreamSynchronize(hipStreamPerThread));
  expect_all(y, 3.0f, "y after the per-thread capture's replay");
  CHECK(hipGraphExecDestroy(exec));
  CHECK(hipGraphDestroy(graph));

  step("a destroyed capturing stream ends its capture");
  hipStream_t s3;
  CHECK(hipStreamCreate(&s3));
  CHECK(hipStreamBeginCapture(s3, hipStreamCaptureModeRelaxed));
  CHECK(hipStreamDestroy(s3));
  CHECK(hipMalloc(&p, 64));
  CHECK(hipFree(p));

  CHECK(hipEventDestroy(fork));
  CHECK(hipEventDestroy(join));
  CHECK(hipStreamDestroy(s1));
  CHECK(hipStreamDestroy(s2));
  CHECK(hipFree(x));
  CHECK(hipFree(y));
  CHECK(hipFree(sum));
  CHECK(hipModuleUnload(module));
  printf("PASS capture\n");
  return 0;
}
