/*
 * Executable graphs after instantiation: memset -> scale -> memcpy -> accumulate, launched,
 * then each node's parameters changed in the executable graph (kernel, memset, 1D and 3D
 * memcpy, host, the generic setter) and launched again, the sums checked after every launch;
 * nodes disabled and enabled; hipGraphExecUpdate from a changed clone (and its refusals:
 * topology and node type changed); upload, instantiate with params, flags, hipGraphLaunch_spt;
 * user objects and their references; HIP's errors for wrong kinds, foreign nodes and NULLs.
 */
#include "check.h"
#include <hip/hiprtc.h>

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

static hipModule_t load_module(void) {
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  hiprtcProgram prog;
  REQUIRE(hiprtcCreateProgram(&prog, SOURCE, "graph_exec.hip", 0, NULL, NULL) == HIPRTC_SUCCESS, "create");
  char arch[300];
  snprintf(arch, sizeof arch, "--offload-arch=%s", props.gcnArchName);
  const char* opts[] = {arch};
  if (hiprtcCompileProgram(prog, 1, opts) != HIPRTC_SUCCESS) {
    size_t n = 0;
    hiprtcGetProgramLogSize(prog, &n);
    char* log = malloc(n + 1);
    hiprtcGetProgramLog(prog, log);
    printf("FAIL compile:\n%s\n", log);
    exit(1);
  }
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

static float* sum;
static float expected;

/* Launches `exec` once on `stream` and checks that every element of the sum grew by `by`. */
static void launch_adds(hipGraphExec_t exec, hipStream_t stream, float by, const char* what) {
  CHECK(hipGraphLaunch(exec, stream));
  CHECK(hipStreamSynchronize(stream));
  expected += by;
  float host[N];
  CHECK(hipMemcpy(host, sum, sizeof host, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) {
    REQUIRE(host[i] == expected, "%s: sum[%d] = %f, expected %f", what, i, host[i], expected);
  }
}

static int first_calls, second_calls;
static void count_call(void* user) { __atomic_add_fetch((int*)user, 1, __ATOMIC_SEQ_CST); }

static int destroyed_a, destroyed_b;

static void user_objects(hipGraph_t graph_template) {
  step("user objects: references of the caller, graphs, clones and executable graphs");
  hipUserObject_t a, b;
  CHECK(hipUserObjectCreate(&a, &destroyed_a, count_call, 1, hipUserObjectNoDestructorSync));
  CHECK(hipUserObjectRetain(a, 2));  /* 3 */
  CHECK(hipUserObjectRelease(a, 2)); /* 1 */
  REQUIRE(destroyed_a == 0, "destroyed early");
  CHECK(hipUserObjectRelease(a, 5)); /* more than it has: ignored, as HIP does */
  REQUIRE(destroyed_a == 0, "an over-release destroyed the object");
  hipGraph_t g;
  CHECK(hipGraphClone(&g, graph_template));
  CHECK(hipGraphRetainUserObject(g, a, 1, 0)); /* 2: the graph holds one */
  CHECK(hipUserObjectRelease(a, 1));           /* 1: only the graph's */
  REQUIRE(destroyed_a == 0, "the graph's reference did not keep the object");
  hipGraphExec_t e;
  CHECK(hipGraphInstantiate(&e, g, NULL, NULL, 0)); /* the executable graph holds one too */
  CHECK(hipGraphDestroy(g));
  REQUIRE(destroyed_a == 0, "the executable graph's reference did not keep the object");
  CHECK(hipGraphExecDestroy(e));
  REQUIRE(destroyed_a == 1, "destructor ran %d times after the last reference", destroyed_a);

  CHECK(hipUserObjectCreate(&b, &destroyed_b, count_call, 1, hipUserObjectNoDestructorSync));
  CHECK(hipGraphCreate(&g, 0));
  CHECK(hipGraphRetainUserObject(g, b, 1, hipGraphUserObjectMove)); /* the caller's reference moves */
  hipGraph_t c;
  CHECK(hipGraphClone(&c, g));
  CHECK(hipGraphReleaseUserObject(g, b, 2)); /* more than the graph holds: ignored */
  CHECK(hipGraphDestroy(g));
  REQUIRE(destroyed_b == 0, "the clone's reference did not keep the object");
  CHECK(hipGraphReleaseUserObject(c, b, 1));
  REQUIRE(destroyed_b == 1, "destructor ran %d times", destroyed_b);
  CHECK(hipGraphDestroy(c));
  REQUIRE(destroyed_b == 1, "destructor ran %d times", destroyed_b);

  hipUserObject_t bad;
  EXPECT_ERR(hipUserObjectCreate(&bad, NULL, count_call, 1, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipUserObjectCreate(&bad, NULL, count_call, 0, hipUserObjectNoDestructorSync), hipErrorInvalidValue);
  EXPECT_ERR(hipUserObjectCreate(&bad, NULL, NULL, 1, hipUserObjectNoDestructorSync), hipErrorInvalidValue);
  EXPECT_ERR(hipUserObjectCreate(NULL, NULL, count_call, 1, hipUserObjectNoDestructorSync), hipErrorInvalidValue);
  EXPECT_ERR(hipUserObjectRetain(NULL, 1), hipErrorInvalidValue);
  EXPECT_ERR(hipUserObjectRelease(a, 0), hipErrorInvalidValue);
  CHECK(hipGraphCreate(&g, 0));
  EXPECT_ERR(hipGraphRetainUserObject(g, a, 1, 2), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphRetainUserObject(g, NULL, 1, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphReleaseUserObject(g, a, 0), hipErrorInvalidValue);
  CHECK(hipGraphDestroy(g));
}

static hipMemsetParams memset_of(float* dst, float value) {
  hipMemsetParams ms = {0};
  ms.dst = dst;
  ms.elementSize = 4;
  memcpy(&ms.value, &value, 4);
  ms.width = N;
  ms.height = 1;
  return ms;
}

int main(void) {
  begin("graph_exec");
  hipModule_t module = load_module();
  hipFunction_t scale, accumulate;
  CHECK(hipModuleGetFunction(&scale, module, "scale"));
  CHECK(hipModuleGetFunction(&accumulate, module, "accumulate"));

  float *x, *y, *w;
  CHECK(hipMalloc((void**)&x, N * sizeof(float)));
  CHECK(hipMalloc((void**)&y, N * sizeof(float)));
  CHECK(hipMalloc((void**)&w, N * sizeof(float)));
  CHECK(hipMalloc((void**)&sum, N * sizeof(float)));
  CHECK(hipMemset(sum, 0, N * sizeof(float)));
  float tens[N];
  for (int i = 0; i < N; i++) tens[i] = 10.0f;
  CHECK(hipMemcpy(w, tens, sizeof tens, hipMemcpyHostToDevice));
  hipStream_t stream;
  CHECK(hipStreamCreate(&stream));

  /* No host node here: backends with graphs of their own run this one natively. */
  step("build memset(1) -> scale(2, 1) -> memcpy -> accumulate, plus an empty node");
  hipGraph_t graph;
  CHECK(hipGraphCreate(&graph, 0));
  hipGraphNode_t set, scaled, copied, summed, empty;
  hipMemsetParams ms = memset_of(x, 1.0f);
  CHECK(hipGraphAddMemsetNode(&set, graph, NULL, 0, &ms));
  float a = 2.0f, b = 1.0f;
  int n = N;
  void* scale_args[] = {&x, &a, &b, &n};
  hipKernelNodeParams kp = {0};
  kp.func = (void*)scale;
  kp.gridDim = (dim3){N / 64, 1, 1};
  kp.blockDim = (dim3){64, 1, 1};
  kp.kernelParams = scale_args;
  CHECK(hipGraphAddKernelNode(&scaled, graph, &set, 1, &kp));
  CHECK(hipGraphAddMemcpyNode1D(&copied, graph, &scaled, 1, y, x, N * sizeof(float), hipMemcpyDeviceToDevice));
  void* acc_args[] = {&y, &sum, &n};
  hipKernelNodeParams ap = kp;
  ap.func = (void*)accumulate;
  ap.kernelParams = acc_args;
  CHECK(hipGraphAddKernelNode(&summed, graph, &copied, 1, &ap));
  CHECK(hipGraphAddEmptyNode(&empty, graph, NULL, 0));

  hipGraphExec_t exec;
  CHECK(hipGraphInstantiate(&exec, graph, NULL, NULL, 0));
  launch_adds(exec, stream, 3.0f, "as built");

  step("kernel node: scale(3, 0) in the executable graph only");
  a = 3.0f;
  b = 0.0f;
  CHECK(hipGraphExecKernelNodeSetParams(exec, scaled, &kp));
  launch_adds(exec, stream, 3.0f, "kernel parameters changed");
  hipKernelNodeParams got = {0};
  CHECK(hipGraphKernelNodeGetParams(scaled, &got));
  REQUIRE(*(float*)got.kernelParams[1] == 2.0f, "the graph's own node keeps a = 2 (%f)", *(float*)got.kernelParams[1]);

  step("memset node: 2.0");
  ms = memset_of(x, 2.0f);
  CHECK(hipGraphExecMemsetNodeSetParams(exec, set, &ms));
  launch_adds(exec, stream, 6.0f, "memset value changed");

  step("1D memcpy node: y <- w (10)");
  CHECK(hipGraphExecMemcpyNodeSetParams1D(exec, copied, y, w, N * sizeof(float), hipMemcpyDeviceToDevice));
  launch_adds(exec, stream, 10.0f, "memcpy source changed");

  step("3D memcpy node: y <- x again");
  hipMemcpy3DParms cp = {0};
  cp.srcPtr = (hipPitchedPtr){x, N * sizeof(float), N * sizeof(float), 1};
  cp.dstPtr = (hipPitchedPtr){y, N * sizeof(float), N * sizeof(float), 1};
  cp.extent = (hipExtent){N * sizeof(float), 1, 1};
  cp.kind = hipMemcpyDeviceToDevice;
  CHECK(hipGraphExecMemcpyNodeSetParams(exec, copied, &cp));
  launch_adds(exec, stream, 6.0f, "3D copy");
  /* Back to a 1D copy (3D copies are replayed, 1D ones run in a native graph). */
  CHECK(hipGraphExecMemcpyNodeSetParams1D(exec, copied, y, x, N * sizeof(float), hipMemcpyDeviceToDevice));
  launch_adds(exec, stream, 6.0f, "1D copy again");

  step("host node: another callback");
  hipGraph_t hg;
  hipGraphNode_t host;
  CHECK(hipGraphCreate(&hg, 0));
  hipHostNodeParams hp = {count_call, &first_calls};
  CHECK(hipGraphAddHostNode(&host, hg, NULL, 0, &hp));
  hipGraphExec_t hexec;
  CHECK(hipGraphInstantiate(&hexec, hg, NULL, NULL, 0));
  CHECK(hipGraphLaunch(hexec, stream));
  CHECK(hipStreamSynchronize(stream));
  hipHostNodeParams hp2 = {count_call, &second_calls};
  CHECK(hipGraphExecHostNodeSetParams(hexec, host, &hp2));
  CHECK(hipGraphLaunch(hexec, stream));
  CHECK(hipStreamSynchronize(stream));
  REQUIRE(first_calls == 1 && second_calls == 1, "callbacks ran %d and %d times", first_calls, second_calls);
  hipHostNodeParams no_fn = {NULL, NULL};
  EXPECT_ERR(hipGraphExecHostNodeSetParams(hexec, host, &no_fn), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphExecHostNodeSetParams(exec, scaled, &hp2), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphNodeSetEnabled(hexec, host, 0), hipErrorInvalidValue);
  CHECK(hipGraphExecDestroy(hexec));
  CHECK(hipGraphDestroy(hg));

  step("generic setter: scale(1, 1)");
  a = 1.0f;
  b = 1.0f;
  hipGraphNodeParams np;
  memset(&np, 0, sizeof np);
  np.type = hipGraphNodeTypeKernel;
  np.kernel = kp;
  CHECK(hipGraphExecNodeSetParams(exec, scaled, &np));
  launch_adds(exec, stream, 3.0f, "generic kernel setter");
  np.type = hipGraphNodeTypeMemset;
  np.memset = memset_of(x, 5.0f);
  CHECK(hipGraphExecNodeSetParams(exec, set, &np));
  launch_adds(exec, stream, 6.0f, "generic memset setter");
  np.type = hipGraphNodeTypeEmpty;
  EXPECT_ERR(hipGraphExecNodeSetParams(exec, empty, &np), hipErrorInvalidValue);

  step("setter errors");
  EXPECT_ERR(hipGraphExecKernelNodeSetParams(exec, set, &kp), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphExecMemsetNodeSetParams(exec, scaled, &ms), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphExecKernelNodeSetParams(NULL, scaled, &kp), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphExecKernelNodeSetParams(exec, scaled, NULL), hipErrorInvalidValue);
  hipKernelNodeParams no_func = kp;
  no_func.func = NULL;
  EXPECT_ERR(hipGraphExecKernelNodeSetParams(exec, scaled, &no_func), hipErrorInvalidValue);
  hipKernelNodeParams zero_grid = kp;
  zero_grid.gridDim.x = 0;
  EXPECT_ERR(hipGraphExecKernelNodeSetParams(exec, scaled, &zero_grid), hipErrorInvalidConfiguration);
  EXPECT_ERR(hipGraphExecMemcpyNodeSetParams1D(exec, copied, y, w, 0, hipMemcpyDeviceToDevice), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphExecMemcpyNodeSetParams1D(exec, copied, y, y, 64, hipMemcpyDeviceToDevice), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphExecMemcpyNodeSetParams1D(exec, copied, y, w, (N + 1) * sizeof(float), hipMemcpyDeviceToDevice), hipErrorInvalidValue);
  hipGraph_t other;
  hipGraphNode_t foreign;
  CHECK(hipGraphCreate(&other, 0));
  CHECK(hipGraphAddKernelNode(&foreign, other, NULL, 0, &kp));
  EXPECT_ERR(hipGraphExecKernelNodeSetParams(exec, foreign, &kp), hipErrorInvalidValue);
  /* Refused changes left the executable graph as it was. */
  launch_adds(exec, stream, 6.0f, "after refused changes");

  step("disable and enable nodes");
  unsigned int enabled = 7;
  CHECK(hipGraphNodeGetEnabled(exec, summed, &enabled));
  REQUIRE(enabled == 1, "enabled %u", enabled);
  CHECK(hipGraphNodeSetEnabled(exec, summed, 0));
  CHECK(hipGraphNodeGetEnabled(exec, summed, &enabled));
  REQUIRE(enabled == 0, "disabled %u", enabled);
  launch_adds(exec, stream, 0.0f, "accumulate disabled");
  CHECK(hipGraphNodeSetEnabled(exec, summed, 1));
  launch_adds(exec, stream, 6.0f, "accumulate enabled again");
  EXPECT_ERR(hipGraphNodeSetEnabled(exec, empty, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphNodeGetEnabled(exec, summed, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphNodeSetEnabled(exec, foreign, 0), hipErrorInvalidValue);

  step("hipGraphExecUpdate from a clone with scale(4, 0) and memset 1");
  hipGraph_t clone;
  CHECK(hipGraphClone(&clone, graph));
  hipGraphNode_t cnodes[5];
  size_t count = 5;
  CHECK(hipGraphGetNodes(clone, cnodes, &count));
  REQUIRE(count == 5, "clone has %zu nodes", count);
  a = 4.0f;
  b = 0.0f;
  CHECK(hipGraphKernelNodeSetParams(cnodes[1], &kp));
  hipGraphNode_t error_node = (hipGraphNode_t)1;
  hipGraphExecUpdateResult result = hipGraphExecUpdateError;
  CHECK(hipGraphExecUpdate(exec, clone, &error_node, &result));
  REQUIRE(result == hipGraphExecUpdateSuccess, "update result %d", result);
  launch_adds(exec, stream, 4.0f, "updated from the clone");

  step("hipGraphExecUpdate refusals");
  hipGraph_t bigger;
  CHECK(hipGraphClone(&bigger, graph));
  hipGraphNode_t extra;
  CHECK(hipGraphAddEmptyNode(&extra, bigger, NULL, 0));
  EXPECT_ERR(hipGraphExecUpdate(exec, bigger, &error_node, &result), hipErrorGraphExecUpdateFailure);
  REQUIRE(result == hipGraphExecUpdateErrorTopologyChanged && error_node == NULL, "more nodes: result %d", result);

  hipGraph_t retyped;
  CHECK(hipGraphCreate(&retyped, 0));
  hipGraphNode_t r[5];
  CHECK(hipGraphAddEmptyNode(&r[0], retyped, NULL, 0)); /* was the memset */
  CHECK(hipGraphAddKernelNode(&r[1], retyped, &r[0], 1, &kp));
  CHECK(hipGraphAddMemcpyNode1D(&r[2], retyped, &r[1], 1, y, x, N * sizeof(float), hipMemcpyDeviceToDevice));
  CHECK(hipGraphAddKernelNode(&r[3], retyped, &r[2], 1, &ap));
  CHECK(hipGraphAddEmptyNode(&r[4], retyped, NULL, 0));
  EXPECT_ERR(hipGraphExecUpdate(exec, retyped, &error_node, &result), hipErrorGraphExecUpdateFailure);
  REQUIRE(result == hipGraphExecUpdateErrorNodeTypeChanged && error_node == r[0], "node type: result %d node %p", result, (void*)error_node);

  hipGraph_t rewired;
  CHECK(hipGraphClone(&rewired, graph));
  hipGraphNode_t wn[5];
  count = 5;
  CHECK(hipGraphGetNodes(rewired, wn, &count));
  CHECK(hipGraphAddDependencies(rewired, &wn[4], &wn[3], 1)); /* the empty node now precedes accumulate */
  EXPECT_ERR(hipGraphExecUpdate(exec, rewired, &error_node, &result), hipErrorGraphExecUpdateFailure);
  REQUIRE(result == hipGraphExecUpdateErrorTopologyChanged, "edges: result %d", result);
  /* A graph whose copy reads memory freed since: its parameters are refused. */
  float* gone;
  CHECK(hipMalloc((void**)&gone, N * sizeof(float)));
  hipGraph_t stale;
  CHECK(hipGraphCreate(&stale, 0));
  hipGraphNode_t s[5];
  CHECK(hipGraphAddMemsetNode(&s[0], stale, NULL, 0, &ms));
  CHECK(hipGraphAddKernelNode(&s[1], stale, &s[0], 1, &kp));
  CHECK(hipGraphAddMemcpyNode1D(&s[2], stale, &s[1], 1, y, gone, N * sizeof(float), hipMemcpyDeviceToDevice));
  CHECK(hipGraphAddKernelNode(&s[3], stale, &s[2], 1, &ap));
  CHECK(hipGraphAddEmptyNode(&s[4], stale, NULL, 0));
  CHECK(hipFree(gone));
  EXPECT_ERR(hipGraphExecUpdate(exec, stale, &error_node, &result), hipErrorGraphExecUpdateFailure);
  REQUIRE(result == hipGraphExecUpdateErrorParametersChanged && error_node == s[2], "freed memory: result %d node %p", result, (void*)error_node);
  CHECK(hipGraphDestroy(stale));
  EXPECT_ERR(hipGraphExecUpdate(exec, clone, NULL, &result), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphExecUpdate(NULL, clone, &error_node, &result), hipErrorInvalidValue);
  /* The refused updates changed nothing. */
  launch_adds(exec, stream, 4.0f, "after refused updates");

  step("upload, flags, instantiate with params, hipGraphLaunch_spt");
  CHECK(hipGraphUpload(exec, stream));
  EXPECT_ERR(hipGraphUpload(NULL, stream), hipErrorInvalidValue);
  unsigned long long flags = 99;
  CHECK(hipGraphExecGetFlags(exec, &flags));
  REQUIRE(flags == 0, "flags %llu", flags);
  hipGraphExec_t auto_free;
  CHECK(hipGraphInstantiateWithFlags(&auto_free, graph, hipGraphInstantiateFlagAutoFreeOnLaunch));
  CHECK(hipGraphExecGetFlags(auto_free, &flags));
  REQUIRE(flags == hipGraphInstantiateFlagAutoFreeOnLaunch, "flags %llu", flags);
  EXPECT_ERR(hipGraphExecGetFlags(auto_free, NULL), hipErrorInvalidValue);
  CHECK(hipGraphExecDestroy(auto_free));

  hipGraphInstantiateParams ip = {0};
  ip.flags = hipGraphInstantiateFlagUpload;
  ip.uploadStream = stream;
  ip.result_out = hipGraphInstantiateError;
  hipGraphExec_t uploaded;
  CHECK(hipGraphInstantiateWithParams(&uploaded, clone, &ip));
  REQUIRE(ip.result_out == hipGraphInstantiateSuccess && ip.errNode_out == NULL, "instantiate result %d", ip.result_out);
  launch_adds(uploaded, stream, 4.0f, "instantiated with params");
  ip.flags = 3;
  EXPECT_ERR(hipGraphInstantiateWithParams(&uploaded, clone, &ip), hipErrorInvalidValue);
  REQUIRE(ip.result_out == hipGraphInstantiateError, "bad flags result %d", ip.result_out);
  EXPECT_ERR(hipGraphInstantiateWithParams(&uploaded, clone, NULL), hipErrorInvalidValue);
  CHECK(hipGraphExecDestroy(uploaded));

  CHECK(hipGraphLaunch_spt(exec, NULL));
  CHECK(hipStreamSynchronize(hipStreamPerThread));
  expected += 4.0f;
  float host_sum[N];
  CHECK(hipMemcpy(host_sum, sum, sizeof host_sum, hipMemcpyDeviceToHost));
  REQUIRE(host_sum[0] == expected && host_sum[N - 1] == expected, "hipGraphLaunch_spt: %f, expected %f", host_sum[0], expected);

  user_objects(graph);

  step("an executable graph outlives its graph; destroying it frees it");
  CHECK(hipGraphDestroy(graph));
  launch_adds(exec, stream, 4.0f, "after hipGraphDestroy");
  CHECK(hipGraphExecDestroy(exec));
  EXPECT_ERR(hipGraphExecKernelNodeSetParams(exec, scaled, &kp), hipErrorInvalidValue);

  CHECK(hipGraphDestroy(clone));
  CHECK(hipGraphDestroy(bigger));
  CHECK(hipGraphDestroy(retyped));
  CHECK(hipGraphDestroy(rewired));
  CHECK(hipGraphDestroy(other));
  CHECK(hipStreamDestroy(stream));
  CHECK(hipFree(x));
  CHECK(hipFree(y));
  CHECK(hipFree(w));
  CHECK(hipFree(sum));
  CHECK(hipModuleUnload(module));
  printf("PASS graph_exec\n");
  return 0;
}
