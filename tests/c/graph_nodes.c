/*
 * Graph node kinds: event record and wait nodes (ordering across streams, elapsed time between
 * two record nodes, get/set, a destroyed event failing the launch), child graph nodes (the
 * child is cloned into the node; the embedded graph is the node's, editable, and expanded
 * with the node's dependencies kept), hipGraphDestroyNode and hipGraphNodeFindInClone; memset,
 * memcpy (1D, 3D, driver and symbol forms) and host node parameters read back and changed;
 * kernel node attributes; hipGraphAddNode / hipGraphNodeSetParams for every kind; graph memory
 * nodes, trimming and the graph memory attributes; batch memory operation nodes; with HIP's
 * errors.
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

/* What hipcc's generated code calls to register a device variable (not in the public headers). */
extern void** __hipRegisterFatBinary(const void* data);
extern void __hipRegisterVar(void** modules, void* var, char* hostVar, char* deviceVar, int ext, size_t size,
                             int constant, int global);
struct FatBinaryWrapper {
  unsigned int magic;
  unsigned int version;
  const void* binary;
  void* unused;
};
static float shadow[N]; /* the host shadow of `table` */

static void register_table(void) {
  hiprtcProgram prog;
  REQUIRE(hiprtcCreateProgram(&prog, "__device__ float table[256];\n", "table.hip", 0, NULL, NULL) == HIPRTC_SUCCESS, "create");
  REQUIRE(hiprtcCompileProgram(prog, 0, NULL) == HIPRTC_SUCCESS, "compile table");
  size_t size = 0;
  REQUIRE(hiprtcGetCodeSize(prog, &size) == HIPRTC_SUCCESS, "code size");
  char* code = malloc(size);
  REQUIRE(hiprtcGetCode(prog, code) == HIPRTC_SUCCESS, "code");
  hiprtcDestroyProgram(&prog);
  static struct FatBinaryWrapper wrapper;
  wrapper = (struct FatBinaryWrapper){0x48495046u, 1, code, NULL};
  void** handle = __hipRegisterFatBinary(&wrapper);
  __hipRegisterVar(handle, shadow, (char*)"table", (char*)"table", 0, sizeof shadow, 0, 0);
}

static hipModule_t load_module(void) {
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  hiprtcProgram prog;
  REQUIRE(hiprtcCreateProgram(&prog, SOURCE, "graph_nodes.hip", 0, NULL, NULL) == HIPRTC_SUCCESS, "create");
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

static hipFunction_t scale, accumulate;
static int n = N;

static void expect_all(const float* d, float want, const char* what) {
  float host[N];
  CHECK(hipMemcpy(host, d, sizeof host, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(host[i] == want, "%s: [%d] = %f, expected %f", what, i, host[i], want);
}

/* x = x * a + b, as a kernel node (the arguments are packed when the node is added). */
static hipGraphNode_t add_scale(hipGraph_t g, const hipGraphNode_t* deps, size_t count, float* x, float a, float b) {
  void* args[] = {&x, &a, &b, &n};
  hipKernelNodeParams kp = {0};
  kp.func = (void*)scale;
  kp.gridDim = (dim3){N / 64, 1, 1};
  kp.blockDim = (dim3){64, 1, 1};
  kp.kernelParams = args;
  hipGraphNode_t node;
  CHECK(hipGraphAddKernelNode(&node, g, deps, count, &kp));
  return node;
}

static hipGraphNode_t add_accumulate(hipGraph_t g, const hipGraphNode_t* deps, size_t count, float* y, float* sum) {
  void* args[] = {&y, &sum, &n};
  hipKernelNodeParams kp = {0};
  kp.func = (void*)accumulate;
  kp.gridDim = (dim3){N / 64, 1, 1};
  kp.blockDim = (dim3){64, 1, 1};
  kp.kernelParams = args;
  hipGraphNode_t node;
  CHECK(hipGraphAddKernelNode(&node, g, deps, count, &kp));
  return node;
}

static hipGraphNode_t add_fill(hipGraph_t g, const hipGraphNode_t* deps, size_t count, float* x, float value) {
  hipMemsetParams ms = {0};
  ms.dst = x;
  ms.elementSize = 4;
  memcpy(&ms.value, &value, 4);
  ms.width = N;
  ms.height = 1;
  hipGraphNode_t node;
  CHECK(hipGraphAddMemsetNode(&node, g, deps, count, &ms));
  return node;
}

static size_t node_count(hipGraph_t g) {
  size_t count = 0;
  CHECK(hipGraphGetNodes(g, NULL, &count));
  return count;
}

static size_t edge_count(hipGraph_t g) {
  size_t count = 0;
  CHECK(hipGraphGetEdges(g, NULL, NULL, &count));
  return count;
}

static void launch_and_wait(hipGraph_t g, hipStream_t s, int times) {
  hipGraphExec_t exec;
  CHECK(hipGraphInstantiate(&exec, g, NULL, NULL, 0));
  for (int i = 0; i < times; i++) CHECK(hipGraphLaunch(exec, s));
  CHECK(hipStreamSynchronize(s));
  CHECK(hipGraphExecDestroy(exec));
}

static void event_nodes(float* x, float* sum, hipStream_t s1, hipStream_t s2) {
  step("event record node: another stream waits for the graph's record");
  hipEvent_t done, start, stop, other;
  CHECK(hipEventCreate(&done));
  CHECK(hipEventCreate(&start));
  CHECK(hipEventCreate(&stop));
  CHECK(hipEventCreate(&other));
  hipGraph_t g;
  CHECK(hipGraphCreate(&g, 0));
  hipGraphNode_t fill = add_fill(g, NULL, 0, x, 1.0f);
  hipGraphNode_t scaled = add_scale(g, &fill, 1, x, 4.0f, 1.0f); /* x = 5 */
  hipGraphNode_t record;
  CHECK(hipGraphAddEventRecordNode(&record, g, &scaled, 1, done));
  hipGraphNodeType type;
  CHECK(hipGraphNodeGetType(record, &type));
  REQUIRE(type == hipGraphNodeTypeEventRecord, "record node type %d", (int)type);
  hipGraphExec_t exec;
  CHECK(hipGraphInstantiate(&exec, g, NULL, NULL, 0));
  CHECK(hipMemset(sum, 0, N * sizeof(float)));
  CHECK(hipDeviceSynchronize());
  CHECK(hipGraphLaunch(exec, s1));
  CHECK(hipStreamWaitEvent(s2, done, 0));
  hipGraph_t acc_graph;
  CHECK(hipGraphCreate(&acc_graph, 0));
  add_accumulate(acc_graph, NULL, 0, x, sum);
  launch_and_wait(acc_graph, s2, 1);
  expect_all(sum, 5.0f, "sum after waiting for the graph's record");
  CHECK(hipEventSynchronize(done));
  CHECK(hipEventQuery(done));

  step("event record nodes time the graph's work");
  hipGraph_t timed;
  CHECK(hipGraphCreate(&timed, 0));
  hipGraphNode_t t0, t1, work;
  CHECK(hipGraphAddEventRecordNode(&t0, timed, NULL, 0, start));
  work = add_scale(timed, &t0, 1, x, 1.0f, 1.0f); /* x += 1 */
  CHECK(hipGraphAddEventRecordNode(&t1, timed, &work, 1, stop));
  launch_and_wait(timed, s1, 3);
  float ms = -1.0f;
  CHECK(hipEventElapsedTime(&ms, start, stop));
  REQUIRE(ms >= 0.0f, "elapsed %f ms", ms);
  expect_all(x, 8.0f, "x after three timed launches");

  step("event wait node: the graph waits for work recorded on another stream");
  CHECK(hipMemset(sum, 0, N * sizeof(float)));
  CHECK(hipDeviceSynchronize());
  hipGraph_t waiting;
  CHECK(hipGraphCreate(&waiting, 0));
  hipGraphNode_t wait;
  CHECK(hipGraphAddEventWaitNode(&wait, waiting, NULL, 0, other));
  add_accumulate(waiting, &wait, 1, x, sum);
  CHECK(hipGraphNodeGetType(wait, &type));
  REQUIRE(type == hipGraphNodeTypeWaitEvent, "wait node type %d", (int)type);
  hipGraphExec_t wexec;
  CHECK(hipGraphInstantiate(&wexec, waiting, NULL, NULL, 0));
  /* s1: x = 10 (slowly: many launches), then the record the graph on s2 waits for. */
  CHECK(hipMemsetAsync(x, 0, N * sizeof(float), s1));
  void* args[] = {&x, &(float){1.0f}, &(float){1.0f}, &n};
  for (int i = 0; i < 10; i++) CHECK(hipModuleLaunchKernel(scale, N / 64, 1, 1, 64, 1, 1, 0, s1, args, NULL));
  CHECK(hipEventRecord(other, s1));
  CHECK(hipGraphLaunch(wexec, s2));
  CHECK(hipStreamSynchronize(s2));
  expect_all(sum, 10.0f, "sum after the graph waited for stream 1");

  step("get and set an event node's event");
  hipEvent_t got = NULL;
  CHECK(hipGraphEventRecordNodeGetEvent(record, &got));
  REQUIRE(got == done, "record node event %p, expected %p", (void*)got, (void*)done);
  CHECK(hipGraphEventWaitNodeGetEvent(wait, &got));
  REQUIRE(got == other, "wait node event %p, expected %p", (void*)got, (void*)other);
  CHECK(hipGraphEventRecordNodeSetEvent(record, start));
  CHECK(hipGraphEventRecordNodeGetEvent(record, &got));
  REQUIRE(got == start, "record node event after set %p", (void*)got);
  CHECK(hipGraphEventWaitNodeSetEvent(wait, done));
  CHECK(hipGraphEventWaitNodeGetEvent(wait, &got));
  REQUIRE(got == done, "wait node event after set %p", (void*)got);

  step("event node errors");
  hipGraphNode_t bad;
  EXPECT_ERR(hipGraphAddEventRecordNode(&bad, g, NULL, 0, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphAddEventRecordNode(NULL, g, NULL, 0, done), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphAddEventRecordNode(&bad, NULL, NULL, 0, done), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphAddEventWaitNode(&bad, g, NULL, 1, done), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphAddEventWaitNode(&bad, g, &wait, 1, done), hipErrorInvalidValue); /* another graph's node */
  EXPECT_ERR(hipGraphEventRecordNodeGetEvent(wait, &got), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphEventWaitNodeGetEvent(record, &got), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphEventRecordNodeGetEvent(scaled, &got), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphEventRecordNodeGetEvent(record, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphEventRecordNodeGetEvent(NULL, &got), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphEventRecordNodeSetEvent(record, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphEventWaitNodeSetEvent(record, done), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphEventWaitNodeSetEvent(NULL, done), hipErrorInvalidValue);

  step("a destroyed event fails the launch, not the worker");
  hipEvent_t doomed;
  CHECK(hipEventCreate(&doomed));
  hipGraph_t stale;
  CHECK(hipGraphCreate(&stale, 0));
  hipGraphNode_t stale_record;
  CHECK(hipGraphAddEventRecordNode(&stale_record, stale, NULL, 0, doomed));
  hipGraphExec_t stale_exec;
  CHECK(hipGraphInstantiate(&stale_exec, stale, NULL, NULL, 0));
  CHECK(hipEventDestroy(doomed));
  hipError_t launched = hipGraphLaunch(stale_exec, s1);
  hipError_t synced = hipStreamSynchronize(s1);
  REQUIRE(launched == hipErrorInvalidHandle || (launched == hipSuccess && synced == hipErrorInvalidHandle),
          "stale event launch: launch %s, sync %s", hipGetErrorName(launched), hipGetErrorName(synced));
  hipGetLastError();
  hipGraphExec_t refused;
  EXPECT_ERR(hipGraphInstantiate(&refused, stale, NULL, NULL, 0), hipErrorInvalidHandle);
  /* The session goes on. */
  launch_and_wait(g, s1, 1);
  expect_all(x, 5.0f, "x after the stale launch");

  CHECK(hipGraphExecDestroy(stale_exec));
  CHECK(hipGraphExecDestroy(wexec));
  CHECK(hipGraphExecDestroy(exec));
  CHECK(hipGraphDestroy(stale));
  CHECK(hipGraphDestroy(waiting));
  CHECK(hipGraphDestroy(timed));
  CHECK(hipGraphDestroy(acc_graph));
  CHECK(hipGraphDestroy(g));
  CHECK(hipEventDestroy(done));
  CHECK(hipEventDestroy(start));
  CHECK(hipEventDestroy(stop));
  CHECK(hipEventDestroy(other));
}

static void child_graphs(float* x, float* sum, hipStream_t s) {
  step("child graph node: a clone, expanded with its dependencies");
  hipGraph_t child, parent;
  CHECK(hipGraphCreate(&child, 0));
  hipGraphNode_t fill = add_fill(child, NULL, 0, x, 1.0f);
  add_scale(child, &fill, 1, x, 2.0f, 1.0f); /* x = 3 */
  CHECK(hipGraphCreate(&parent, 0));
  hipGraphNode_t zero = add_fill(parent, NULL, 0, sum, 0.0f);
  hipGraphNode_t sub;
  CHECK(hipGraphAddChildGraphNode(&sub, parent, &zero, 1, child));
  hipGraphNode_t summed = add_accumulate(parent, &sub, 1, x, sum);
  hipGraphNodeType type;
  CHECK(hipGraphNodeGetType(sub, &type));
  REQUIRE(type == hipGraphNodeTypeGraph, "child node type %d", (int)type);
  /* Changing the child afterwards does not reach the node: it holds a clone. */
  add_scale(child, NULL, 0, x, 100.0f, 0.0f);
  launch_and_wait(parent, s, 1);
  expect_all(sum, 3.0f, "sum after the child graph");

  step("the embedded graph is the node's own, and editing it changes the node");
  hipGraph_t embedded = NULL;
  CHECK(hipGraphChildGraphNodeGetGraph(sub, &embedded));
  REQUIRE(embedded != NULL && embedded != child, "embedded graph %p (child %p)", (void*)embedded, (void*)child);
  REQUIRE(node_count(embedded) == 2, "embedded graph has %zu nodes", node_count(embedded));
  REQUIRE(node_count(child) == 3, "child graph has %zu nodes", node_count(child));
  size_t leaves = 0;
  hipGraphNode_t nodes[2];
  size_t count = 2;
  CHECK(hipGraphGetNodes(embedded, nodes, &count));
  hipGraphNode_t last = nodes[1];
  CHECK(hipGraphNodeGetDependentNodes(last, NULL, &leaves));
  REQUIRE(leaves == 0, "the scale node has %zu dependents", leaves);
  add_scale(embedded, &last, 1, x, 2.0f, 1.0f); /* x = 7 */
  launch_and_wait(parent, s, 1);
  expect_all(sum, 7.0f, "sum after editing the embedded graph");
  EXPECT_ERR(hipGraphDestroy(embedded), hipErrorInvalidValue);

  step("nested child graphs and an empty child");
  hipGraph_t outer, empty_graph;
  CHECK(hipGraphCreate(&outer, 0));
  CHECK(hipGraphCreate(&empty_graph, 0));
  hipGraphNode_t inner, nothing;
  CHECK(hipGraphAddChildGraphNode(&inner, outer, NULL, 0, parent)); /* sum = 7 */
  CHECK(hipGraphAddChildGraphNode(&nothing, outer, &inner, 1, empty_graph));
  add_accumulate(outer, &nothing, 1, x, sum); /* sum = 14 */
  launch_and_wait(outer, s, 1);
  expect_all(sum, 14.0f, "sum after the nested graph");

  step("clones copy child graphs; hipGraphNodeFindInClone");
  hipGraph_t copy;
  CHECK(hipGraphClone(&copy, outer));
  hipGraphNode_t found = NULL;
  CHECK(hipGraphNodeFindInClone(&found, inner, copy));
  REQUIRE(found != NULL && found != inner, "found %p", (void*)found);
  CHECK(hipGraphNodeGetType(found, &type));
  REQUIRE(type == hipGraphNodeTypeGraph, "found node type %d", (int)type);
  hipGraph_t copied_embedded;
  CHECK(hipGraphChildGraphNodeGetGraph(found, &copied_embedded));
  hipGraph_t outer_embedded;
  CHECK(hipGraphChildGraphNodeGetGraph(inner, &outer_embedded));
  REQUIRE(copied_embedded != outer_embedded, "a clone shares its child graph");
  /* A clone of a clone still finds the first original's node. */
  hipGraph_t copy2;
  CHECK(hipGraphClone(&copy2, copy));
  hipGraphNode_t found2;
  CHECK(hipGraphNodeFindInClone(&found2, inner, copy2));
  CHECK(hipGraphNodeFindInClone(&found2, found, copy2));
  CHECK(hipGraphDestroy(outer)); /* the clones do not depend on it */
  launch_and_wait(copy, s, 1);
  expect_all(sum, 14.0f, "sum after the clone");
  hipGraphNode_t later;
  CHECK(hipGraphAddEmptyNode(&later, parent, NULL, 0));
  EXPECT_ERR(hipGraphNodeFindInClone(&found, later, copy), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphNodeFindInClone(&found, sub, parent), hipErrorInvalidValue); /* not a clone */
  EXPECT_ERR(hipGraphNodeFindInClone(NULL, inner, copy), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphNodeFindInClone(&found, NULL, copy), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphNodeFindInClone(&found, inner, NULL), hipErrorInvalidValue);

  step("child graph errors");
  hipGraphNode_t bad;
  hipGraph_t none;
  EXPECT_ERR(hipGraphAddChildGraphNode(&bad, parent, NULL, 0, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphAddChildGraphNode(NULL, parent, NULL, 0, child), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphAddChildGraphNode(&bad, NULL, NULL, 0, child), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphAddChildGraphNode(&bad, parent, &inner, 1, child), hipErrorInvalidValue); /* destroyed graph's node */
  EXPECT_ERR(hipGraphChildGraphNodeGetGraph(summed, &none), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphChildGraphNodeGetGraph(sub, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphChildGraphNodeGetGraph(NULL, &none), hipErrorInvalidValue);

  step("destroying the parent takes the embedded graph with it");
  CHECK(hipGraphDestroy(parent));
  EXPECT_ERR(hipGraphGetNodes(embedded, NULL, &count), hipErrorInvalidValue);
  CHECK(hipGraphDestroy(copy));
  CHECK(hipGraphDestroy(copy2));
  CHECK(hipGraphDestroy(child));
  CHECK(hipGraphDestroy(empty_graph));
}

static void destroy_node(float* x, hipStream_t s) {
  step("hipGraphDestroyNode removes the node and its edges");
  hipGraph_t g;
  CHECK(hipGraphCreate(&g, 0));
  hipGraphNode_t a = add_fill(g, NULL, 0, x, 1.0f);
  hipGraphNode_t b = add_scale(g, &a, 1, x, 10.0f, 0.0f);
  hipGraphNode_t c = add_scale(g, &b, 1, x, 1.0f, 1.0f);
  REQUIRE(edge_count(g) == 2, "edges %zu", edge_count(g));
  CHECK(hipGraphDestroyNode(b));
  REQUIRE(node_count(g) == 2, "nodes after destroy %zu", node_count(g));
  REQUIRE(edge_count(g) == 0, "edges after destroy %zu", edge_count(g));
  hipGraphNodeType type;
  EXPECT_ERR(hipGraphNodeGetType(b, &type), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphDestroyNode(b), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphDestroyNode(NULL), hipErrorInvalidValue);
  CHECK(hipGraphAddDependencies(g, &a, &c, 1));
  launch_and_wait(g, s, 1);
  expect_all(x, 2.0f, "x without the destroyed node");
  CHECK(hipGraphDestroy(g));
}

static int host_runs_a, host_runs_b;
static void bump(void* user) { __atomic_add_fetch((int*)user, 1, __ATOMIC_SEQ_CST); }

static void node_params(float* x, float* y, hipStream_t s) {
  step("memset node parameters");
  hipGraph_t g;
  CHECK(hipGraphCreate(&g, 0));
  hipGraphNode_t fill = add_fill(g, NULL, 0, x, 1.0f);
  hipMemsetParams got;
  memset(&got, 0xa5, sizeof got);
  CHECK(hipGraphMemsetNodeGetParams(fill, &got));
  float one = 1.0f, seven = 7.0f;
  REQUIRE(got.dst == x && got.elementSize == 4 && got.width == N && got.height == 1 && memcmp(&got.value, &one, 4) == 0,
          "memset params dst %p size %u width %zu height %zu", got.dst, got.elementSize, got.width, got.height);
  got.value = 0;
  memcpy(&got.value, &seven, 4);
  CHECK(hipGraphMemsetNodeSetParams(fill, &got));
  launch_and_wait(g, s, 1);
  expect_all(x, 7.0f, "x after the changed memset node");
  hipMemsetParams bad = got;
  bad.elementSize = 3;
  EXPECT_ERR(hipGraphMemsetNodeSetParams(fill, &bad), hipErrorInvalidValue);
  bad = got;
  bad.dst = NULL;
  EXPECT_ERR(hipGraphMemsetNodeSetParams(fill, &bad), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphMemsetNodeSetParams(fill, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphMemsetNodeGetParams(fill, NULL), hipErrorInvalidValue);

  step("memcpy node parameters: 1D, 3D and driver forms");
  hipGraphNode_t copy;
  CHECK(hipGraphAddMemcpyNode1D(&copy, g, &fill, 1, y, x, N * sizeof(float), hipMemcpyDeviceToDevice));
  hipMemcpy3DParms p3;
  memset(&p3, 0xa5, sizeof p3);
  CHECK(hipGraphMemcpyNodeGetParams(copy, &p3));
  REQUIRE(p3.dstPtr.ptr == y && p3.srcPtr.ptr == x && p3.srcArray == NULL && p3.dstArray == NULL &&
              p3.extent.width == N * sizeof(float) && p3.extent.height == 1 && p3.extent.depth == 1,
          "1D copy as 3D: dst %p src %p width %zu", p3.dstPtr.ptr, p3.srcPtr.ptr, p3.extent.width);
  CHECK(hipMemset(y, 0, N * sizeof(float)));
  launch_and_wait(g, s, 1);
  expect_all(y, 7.0f, "y after the copy node");
  /* Half of x into y's second half, then back through the driver form. */
  CHECK(hipMemset(y, 0, N * sizeof(float)));
  CHECK(hipGraphMemcpyNodeSetParams1D(copy, y + N / 2, x, N / 2 * sizeof(float), hipMemcpyDeviceToDevice));
  launch_and_wait(g, s, 1);
  float host[N];
  CHECK(hipMemcpy(host, y, sizeof host, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(host[i] == (i < N / 2 ? 0.0f : 7.0f), "y[%d] = %f after SetParams1D", i, host[i]);
  HIP_MEMCPY3D d3;
  CHECK(hipDrvGraphMemcpyNodeGetParams(copy, &d3));
  REQUIRE(d3.dstMemoryType == hipMemoryTypeDevice && (float*)d3.dstDevice == y + N / 2 && d3.WidthInBytes == N / 2 * sizeof(float) &&
              d3.Height == 1 && d3.Depth == 1,
          "driver params: dst %p width %zu", (void*)d3.dstDevice, d3.WidthInBytes);
  /* A 2D box: 4 rows of 16 floats out of a pitch of 64 floats. */
  memset(&d3, 0, sizeof d3);
  d3.srcMemoryType = hipMemoryTypeDevice;
  d3.srcDevice = (hipDeviceptr_t)x;
  d3.srcPitch = 64 * sizeof(float);
  d3.srcHeight = 4;
  d3.dstMemoryType = hipMemoryTypeDevice;
  d3.dstDevice = (hipDeviceptr_t)y;
  d3.dstPitch = 64 * sizeof(float);
  d3.dstHeight = 4;
  d3.dstXInBytes = 16 * sizeof(float);
  d3.WidthInBytes = 16 * sizeof(float);
  d3.Height = 4;
  d3.Depth = 1;
  CHECK(hipDrvGraphMemcpyNodeSetParams(copy, &d3));
  CHECK(hipMemset(y, 0, N * sizeof(float)));
  launch_and_wait(g, s, 1);
  CHECK(hipMemcpy(host, y, sizeof host, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) {
    int col = i % 64;
    REQUIRE(host[i] == (col >= 16 && col < 32 ? 7.0f : 0.0f), "y[%d] = %f after the 2D copy", i, host[i]);
  }
  CHECK(hipGraphMemcpyNodeGetParams(copy, &p3));
  REQUIRE(p3.dstPos.x == 16 * sizeof(float) && p3.extent.width == 16 * sizeof(float) && p3.extent.height == 4 &&
              p3.dstPtr.pitch == 64 * sizeof(float),
          "2D copy read back: x %zu width %zu height %zu pitch %zu", p3.dstPos.x, p3.extent.width, p3.extent.height,
          p3.dstPtr.pitch);
  hipGraphNode_t drv;
  CHECK(hipDrvGraphAddMemcpyNode(&drv, g, &copy, 1, &d3, NULL));
  hipGraphNodeType type;
  CHECK(hipGraphNodeGetType(drv, &type));
  REQUIRE(type == hipGraphNodeTypeMemcpy, "driver copy node type %d", (int)type);
  /* The whole of x into y through the 3D form. */
  memset(&p3, 0, sizeof p3);
  p3.srcPtr = make_hipPitchedPtr(x, N * sizeof(float), N, 1);
  p3.dstPtr = make_hipPitchedPtr(y, N * sizeof(float), N, 1);
  p3.extent = make_hipExtent(N * sizeof(float), 1, 1);
  p3.kind = hipMemcpyDeviceToDevice;
  CHECK(hipGraphMemcpyNodeSetParams(drv, &p3));
  launch_and_wait(g, s, 1);
  expect_all(y, 7.0f, "y after the 3D set");
  float local[4];
  EXPECT_ERR(hipGraphMemcpyNodeSetParams1D(copy, y, local, sizeof local, hipMemcpyHostToDevice), hipErrorNotSupported);
  EXPECT_ERR(hipGraphMemcpyNodeSetParams1D(copy, y, x, 0, hipMemcpyDeviceToDevice), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphMemcpyNodeSetParams1D(fill, y, x, 16, hipMemcpyDeviceToDevice), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphMemcpyNodeGetParams(fill, &p3), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphMemcpyNodeGetParams(copy, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphMemsetNodeGetParams(copy, &got), hipErrorInvalidValue);
  EXPECT_ERR(hipDrvGraphMemcpyNodeSetParams(copy, NULL), hipErrorInvalidValue);

  step("memcpy nodes to and from a device variable");
  hipGraph_t sg;
  CHECK(hipGraphCreate(&sg, 0));
  hipGraphNode_t to_sym, from_sym;
  CHECK(hipGraphAddMemcpyNodeToSymbol(&to_sym, sg, NULL, 0, shadow, x, N / 2 * sizeof(float), N / 2 * sizeof(float), hipMemcpyDeviceToDevice));
  CHECK(hipGraphAddMemcpyNodeFromSymbol(&from_sym, sg, &to_sym, 1, y, shadow, N * sizeof(float), 0, hipMemcpyDeviceToDevice));
  float zeros[N] = {0};
  CHECK(hipMemcpyToSymbol(shadow, zeros, sizeof zeros, 0, hipMemcpyHostToDevice));
  launch_and_wait(sg, s, 1);
  CHECK(hipMemcpy(host, y, sizeof host, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(host[i] == (i < N / 2 ? 0.0f : 7.0f), "y[%d] = %f via the variable", i, host[i]);
  CHECK(hipGraphMemcpyNodeSetParamsToSymbol(to_sym, shadow, x, N * sizeof(float), 0, hipMemcpyDefault));
  CHECK(hipGraphMemcpyNodeSetParamsFromSymbol(from_sym, y, shadow, N / 4 * sizeof(float), 0, hipMemcpyDeviceToDevice));
  CHECK(hipMemset(y, 0, N * sizeof(float)));
  launch_and_wait(sg, s, 1);
  CHECK(hipMemcpy(host, y, sizeof host, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(host[i] == (i < N / 4 ? 7.0f : 0.0f), "y[%d] = %f via the changed nodes", i, host[i]);
  hipGraphNode_t bad_node;
  static float not_a_variable[4];
  EXPECT_ERR(hipGraphAddMemcpyNodeToSymbol(&bad_node, sg, NULL, 0, not_a_variable, x, 4, 0, hipMemcpyDeviceToDevice), hipErrorInvalidSymbol);
  EXPECT_ERR(hipGraphAddMemcpyNodeToSymbol(&bad_node, sg, NULL, 0, shadow, x, sizeof shadow, 4, hipMemcpyDeviceToDevice), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphAddMemcpyNodeToSymbol(&bad_node, sg, NULL, 0, shadow, x, 4, 0, hipMemcpyDeviceToHost), hipErrorInvalidMemcpyDirection);
  EXPECT_ERR(hipGraphAddMemcpyNodeFromSymbol(&bad_node, sg, NULL, 0, y, shadow, 4, 0, hipMemcpyHostToDevice), hipErrorInvalidMemcpyDirection);
  EXPECT_ERR(hipGraphAddMemcpyNodeFromSymbol(&bad_node, sg, NULL, 0, y, NULL, 4, 0, hipMemcpyDeviceToDevice), hipErrorInvalidValue);

  step("host node parameters");
  hipGraph_t hg;
  CHECK(hipGraphCreate(&hg, 0));
  hipHostNodeParams hp = {bump, &host_runs_a};
  hipGraphNode_t host_node;
  CHECK(hipGraphAddHostNode(&host_node, hg, NULL, 0, &hp));
  hipHostNodeParams hgot = {NULL, NULL};
  CHECK(hipGraphHostNodeGetParams(host_node, &hgot));
  REQUIRE(hgot.fn == bump && hgot.userData == &host_runs_a, "host params %p", hgot.userData);
  launch_and_wait(hg, s, 2);
  hipHostNodeParams hp2 = {bump, &host_runs_b};
  CHECK(hipGraphHostNodeSetParams(host_node, &hp2));
  CHECK(hipGraphHostNodeGetParams(host_node, &hgot));
  REQUIRE(hgot.userData == &host_runs_b, "host params after set %p", hgot.userData);
  launch_and_wait(hg, s, 3);
  REQUIRE(host_runs_a == 2 && host_runs_b == 3, "host runs %d and %d", host_runs_a, host_runs_b);
  hipHostNodeParams no_fn = {NULL, NULL};
  EXPECT_ERR(hipGraphHostNodeSetParams(host_node, &no_fn), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphHostNodeGetParams(fill, &hgot), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphHostNodeGetParams(host_node, NULL), hipErrorInvalidValue);

  CHECK(hipGraphDestroy(hg));
  CHECK(hipGraphDestroy(sg));
  CHECK(hipGraphDestroy(g));
}

static void generic_nodes(float* x, float* sum, hipStream_t s) {
  step("kernel node attributes");
  hipGraph_t g;
  CHECK(hipGraphCreate(&g, 0));
  hipGraphNode_t k1 = add_scale(g, NULL, 0, x, 1.0f, 0.0f);
  hipGraphNode_t k2 = add_scale(g, &k1, 1, x, 1.0f, 0.0f);
  hipLaunchAttributeValue v;
  memset(&v, 0x5a, sizeof v);
  CHECK(hipGraphKernelNodeGetAttribute(k1, hipLaunchAttributePriority, &v));
  REQUIRE(v.priority == 0, "priority before any set %d", v.priority);
  memset(&v, 0, sizeof v);
  v.priority = 1;
  CHECK(hipGraphKernelNodeSetAttribute(k1, hipLaunchAttributePriority, &v));
  v.priority = 5;
  EXPECT_ERR(hipGraphKernelNodeSetAttribute(k1, hipLaunchAttributePriority, &v), hipErrorInvalidValue);
  memset(&v, 0, sizeof v);
  CHECK(hipGraphKernelNodeGetAttribute(k1, hipLaunchAttributePriority, &v));
  REQUIRE(v.priority == 1, "priority %d", v.priority);
  EXPECT_ERR(hipGraphKernelNodeGetAttribute(k1, hipLaunchAttributeCooperative, &v), hipErrorInvalidValue);
  memset(&v, 0, sizeof v);
  v.cooperative = 1;
  CHECK(hipGraphKernelNodeSetAttribute(k2, hipLaunchAttributeCooperative, &v));
  EXPECT_ERR(hipGraphKernelNodeCopyAttributes(k1, k2), hipErrorInvalidContext);
  hipGraphNode_t k3 = add_scale(g, &k2, 1, x, 1.0f, 0.0f);
  CHECK(hipGraphKernelNodeCopyAttributes(k1, k3));
  memset(&v, 0, sizeof v);
  CHECK(hipGraphKernelNodeGetAttribute(k3, hipLaunchAttributePriority, &v));
  REQUIRE(v.priority == 1, "copied priority %d", v.priority);
  memset(&v, 0, sizeof v);
  v.accessPolicyWindow.hitRatio = 2.0f;
  EXPECT_ERR(hipGraphKernelNodeSetAttribute(k3, hipLaunchAttributeAccessPolicyWindow, &v), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphKernelNodeSetAttribute(k3, hipLaunchAttributeSynchronizationPolicy, &v), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphKernelNodeSetAttribute(k3, hipLaunchAttributePriority, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphKernelNodeSetAttribute(NULL, hipLaunchAttributePriority, &v), hipErrorInvalidValue);
  hipGraph_t clone;
  CHECK(hipGraphClone(&clone, g));
  hipGraphNode_t k1c;
  CHECK(hipGraphNodeFindInClone(&k1c, k1, clone));
  memset(&v, 0, sizeof v);
  CHECK(hipGraphKernelNodeGetAttribute(k1c, hipLaunchAttributePriority, &v));
  REQUIRE(v.priority == 1, "cloned priority %d", v.priority);
  CHECK(hipGraphDestroy(clone));
  CHECK(hipGraphDestroy(g));

  step("hipGraphAddNode and hipGraphNodeSetParams for each kind");
  hipEvent_t ev;
  CHECK(hipEventCreate(&ev));
  hipGraph_t inner;
  CHECK(hipGraphCreate(&inner, 0));
  add_scale(inner, NULL, 0, x, 2.0f, 0.0f); /* x *= 2 */
  CHECK(hipGraphCreate(&g, 0));
  hipGraphNodeParams p;
  hipGraphNode_t fill, child, acc, rec, wait, empty, host;
  memset(&p, 0, sizeof p);
  p.type = hipGraphNodeTypeMemset;
  p.memset.dst = x;
  p.memset.elementSize = 4;
  float three = 3.0f;
  memcpy(&p.memset.value, &three, 4);
  p.memset.width = N;
  p.memset.height = 1;
  CHECK(hipGraphAddNode(&fill, g, NULL, 0, &p));
  memset(&p, 0, sizeof p);
  p.type = hipGraphNodeTypeGraph;
  p.graph.graph = inner;
  CHECK(hipGraphAddNode(&child, g, &fill, 1, &p)); /* x = 6 */
  memset(&p, 0, sizeof p);
  p.type = hipGraphNodeTypeMemset;
  p.memset.dst = sum;
  p.memset.elementSize = 4;
  p.memset.width = N;
  p.memset.height = 1;
  hipGraphNode_t zero;
  CHECK(hipGraphAddNode(&zero, g, NULL, 0, &p));
  void* args[] = {&x, &sum, &n};
  memset(&p, 0, sizeof p);
  p.type = hipGraphNodeTypeKernel;
  p.kernel.func = (void*)accumulate;
  p.kernel.gridDim = (dim3){N / 64, 1, 1};
  p.kernel.blockDim = (dim3){64, 1, 1};
  p.kernel.kernelParams = args;
  hipGraphNode_t after[2] = {child, zero};
  CHECK(hipGraphAddNode(&acc, g, after, 2, &p)); /* sum = 6 */
  memset(&p, 0, sizeof p);
  p.type = hipGraphNodeTypeEventRecord;
  p.eventRecord.event = ev;
  CHECK(hipGraphAddNode(&rec, g, &acc, 1, &p));
  p.type = hipGraphNodeTypeWaitEvent;
  p.eventWait.event = ev;
  CHECK(hipGraphAddNode(&wait, g, &rec, 1, &p));
  memset(&p, 0, sizeof p);
  p.type = hipGraphNodeTypeEmpty;
  CHECK(hipGraphAddNode(&empty, g, &wait, 1, &p));
  memset(&p, 0, sizeof p);
  p.type = hipGraphNodeTypeHost;
  p.host.fn = bump;
  p.host.userData = &host_runs_a;
  CHECK(hipGraphAddNode(&host, g, &empty, 1, &p));
  int runs_before = host_runs_a;
  launch_and_wait(g, s, 1);
  expect_all(sum, 6.0f, "sum through hipGraphAddNode");
  REQUIRE(host_runs_a == runs_before + 1, "host node ran %d times", host_runs_a - runs_before);
  hipGraphNodeType type;
  CHECK(hipGraphNodeGetType(child, &type));
  REQUIRE(type == hipGraphNodeTypeGraph, "generic child type %d", (int)type);

  /* Change the fill to 5, the child's scale to x * 3 (from a graph of the same shape), the
   * host node's counter: sum = 15. */
  memset(&p, 0, sizeof p);
  p.type = hipGraphNodeTypeMemset;
  p.memset.dst = x;
  p.memset.elementSize = 4;
  float five = 5.0f;
  memcpy(&p.memset.value, &five, 4);
  p.memset.width = N;
  p.memset.height = 1;
  CHECK(hipGraphNodeSetParams(fill, &p));
  hipGraph_t other;
  CHECK(hipGraphCreate(&other, 0));
  add_scale(other, NULL, 0, x, 3.0f, 0.0f);
  memset(&p, 0, sizeof p);
  p.type = hipGraphNodeTypeGraph;
  p.graph.graph = other;
  CHECK(hipGraphNodeSetParams(child, &p));
  memset(&p, 0, sizeof p);
  p.type = hipGraphNodeTypeHost;
  p.host.fn = bump;
  p.host.userData = &host_runs_b;
  CHECK(hipGraphNodeSetParams(host, &p));
  memset(&p, 0, sizeof p);
  p.type = hipGraphNodeTypeEventRecord;
  p.eventRecord.event = ev;
  CHECK(hipGraphNodeSetParams(rec, &p));
  int b_before = host_runs_b;
  launch_and_wait(g, s, 1);
  expect_all(sum, 15.0f, "sum after hipGraphNodeSetParams");
  REQUIRE(host_runs_b == b_before + 1, "the new host callback ran %d times", host_runs_b - b_before);

  step("generic errors");
  hipGraphNode_t bad;
  add_fill(other, NULL, 0, x, 0.0f); /* now two nodes: another shape */
  memset(&p, 0, sizeof p);
  p.type = hipGraphNodeTypeGraph;
  p.graph.graph = other;
  EXPECT_ERR(hipGraphNodeSetParams(child, &p), hipErrorInvalidValue);
  p.type = hipGraphNodeTypeMemset; /* a memset's parameters for a child node */
  EXPECT_ERR(hipGraphNodeSetParams(child, &p), hipErrorInvalidValue);
  p.type = hipGraphNodeTypeMemAlloc;
  EXPECT_ERR(hipGraphNodeSetParams(child, &p), hipErrorNotSupported);
  p.type = hipGraphNodeTypeExtSemaphoreWait;
  EXPECT_ERR(hipGraphAddNode(&bad, g, NULL, 0, &p), hipErrorNotSupported);
  p.type = hipGraphNodeTypeCount;
  EXPECT_ERR(hipGraphAddNode(&bad, g, NULL, 0, &p), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphNodeSetParams(child, &p), hipErrorInvalidValue);
  p.type = hipGraphNodeTypeEventRecord;
  p.eventRecord.event = NULL;
  EXPECT_ERR(hipGraphAddNode(&bad, g, NULL, 0, &p), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphAddNode(&bad, g, NULL, 0, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphAddNode(NULL, g, NULL, 0, &p), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphAddNode(&bad, g, NULL, 1, &p), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphNodeSetParams(NULL, &p), hipErrorInvalidValue);

  CHECK(hipGraphDestroy(other));
  CHECK(hipGraphDestroy(inner));
  CHECK(hipGraphDestroy(g));
  CHECK(hipEventDestroy(ev));
}

static uint64_t graph_mem(hipGraphMemAttributeType attr) {
  uint64_t value = 12345;
  CHECK(hipDeviceGetGraphMemAttribute(0, attr, &value));
  return value;
}

static void memory_nodes(float* x, hipStream_t s) {
  step("memory allocation and free nodes");
  uint64_t used0 = graph_mem(hipGraphMemAttrUsedMemCurrent);
  uint64_t reserved0 = graph_mem(hipGraphMemAttrReservedMemCurrent);
  hipGraph_t g;
  CHECK(hipGraphCreate(&g, 0));
  hipMemAllocNodeParams ap;
  memset(&ap, 0, sizeof ap);
  ap.poolProps.allocType = hipMemAllocationTypePinned;
  ap.poolProps.location.type = hipMemLocationTypeDevice;
  ap.poolProps.location.id = 0;
  ap.bytesize = N * sizeof(float);
  hipGraphNode_t alloc;
  CHECK(hipGraphAddMemAllocNode(&alloc, g, NULL, 0, &ap));
  float* mem = (float*)ap.dptr;
  REQUIRE(mem != NULL, "no address at add time");
  hipGraphNodeType type;
  CHECK(hipGraphNodeGetType(alloc, &type));
  REQUIRE(type == hipGraphNodeTypeMemAlloc, "alloc node type %d", (int)type);
  REQUIRE(graph_mem(hipGraphMemAttrUsedMemCurrent) == used0 + N * sizeof(float), "used %llu",
          (unsigned long long)graph_mem(hipGraphMemAttrUsedMemCurrent));
  /* alloc -> fill 4 -> copy into x -> free */
  hipGraphNode_t fill = add_fill(g, &alloc, 1, mem, 4.0f);
  hipGraphNode_t copy;
  CHECK(hipGraphAddMemcpyNode1D(&copy, g, &fill, 1, x, mem, N * sizeof(float), hipMemcpyDeviceToDevice));
  hipGraphNode_t release;
  CHECK(hipGraphAddMemFreeNode(&release, g, &copy, 1, mem));
  CHECK(hipGraphNodeGetType(release, &type));
  REQUIRE(type == hipGraphNodeTypeMemFree, "free node type %d", (int)type);
  hipMemAllocNodeParams got;
  memset(&got, 0xa5, sizeof got);
  CHECK(hipGraphMemAllocNodeGetParams(alloc, &got));
  REQUIRE(got.dptr == mem && got.bytesize == N * sizeof(float) && got.poolProps.allocType == hipMemAllocationTypePinned &&
              got.poolProps.location.type == hipMemLocationTypeDevice && got.poolProps.location.id == 0,
          "alloc params %p %zu", got.dptr, got.bytesize);
  void* freed = NULL;
  CHECK(hipGraphMemFreeNodeGetParams(release, &freed));
  REQUIRE(freed == mem, "free node frees %p, expected %p", freed, (void*)mem);
  hipGraphExec_t exec;
  CHECK(hipGraphInstantiate(&exec, g, NULL, NULL, 0));
  CHECK(hipMemset(x, 0, N * sizeof(float)));
  for (int i = 0; i < 3; i++) CHECK(hipGraphLaunch(exec, s));
  CHECK(hipStreamSynchronize(s));
  expect_all(x, 4.0f, "x copied from graph memory");

  step("memory node errors");
  hipGraphNode_t bad;
  hipGraphExec_t again;
  EXPECT_ERR(hipGraphInstantiate(&again, g, NULL, NULL, 0), hipErrorNotSupported);
  hipGraph_t copy_graph;
  EXPECT_ERR(hipGraphClone(&copy_graph, g), hipErrorNotSupported);
  hipGraph_t parent;
  CHECK(hipGraphCreate(&parent, 0));
  EXPECT_ERR(hipGraphAddChildGraphNode(&bad, parent, NULL, 0, g), hipErrorNotSupported);
  EXPECT_ERR(hipGraphDestroyNode(alloc), hipErrorNotSupported);
  EXPECT_ERR(hipGraphDestroyNode(release), hipErrorNotSupported);
  EXPECT_ERR(hipGraphAddMemFreeNode(&bad, parent, NULL, 0, mem), hipErrorInvalidValue); /* freed already */
  EXPECT_ERR(hipGraphAddMemFreeNode(&bad, parent, NULL, 0, x), hipErrorInvalidValue);   /* not graph memory */
  EXPECT_ERR(hipGraphAddMemFreeNode(&bad, parent, NULL, 0, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphAddMemFreeNode(&bad, parent, &alloc, 0, mem), hipErrorInvalidValue);
  hipMemAllocNodeParams wrong = ap;
  wrong.bytesize = 0;
  EXPECT_ERR(hipGraphAddMemAllocNode(&bad, parent, NULL, 0, &wrong), hipErrorInvalidValue);
  REQUIRE(wrong.dptr == NULL, "a refused node's dptr %p", wrong.dptr);
  wrong = ap;
  wrong.poolProps.allocType = hipMemAllocationTypeInvalid;
  EXPECT_ERR(hipGraphAddMemAllocNode(&bad, parent, NULL, 0, &wrong), hipErrorInvalidValue);
  wrong = ap;
  wrong.poolProps.location.id = 99;
  EXPECT_ERR(hipGraphAddMemAllocNode(&bad, parent, NULL, 0, &wrong), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphAddMemAllocNode(&bad, parent, NULL, 0, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphMemAllocNodeGetParams(release, &got), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphMemFreeNodeGetParams(alloc, &freed), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphMemFreeNodeGetParams(release, NULL), hipErrorInvalidValue);
  /* The driver form frees any live allocation. */
  hipGraphNode_t drv_free;
  CHECK(hipDrvGraphAddMemFreeNode(&drv_free, parent, NULL, 0, (hipDeviceptr_t)x));
  EXPECT_ERR(hipDrvGraphAddMemFreeNode(&bad, parent, NULL, 0, (hipDeviceptr_t)(uintptr_t)0x10), hipErrorInvalidValue);

  step("graph memory attributes and trimming");
  uint64_t used = graph_mem(hipGraphMemAttrUsedMemCurrent);
  uint64_t reserved = graph_mem(hipGraphMemAttrReservedMemCurrent);
  REQUIRE(used == used0 + N * sizeof(float) && reserved == reserved0 + N * sizeof(float), "used %llu reserved %llu",
          (unsigned long long)used, (unsigned long long)reserved);
  REQUIRE(graph_mem(hipGraphMemAttrUsedMemHigh) >= used && graph_mem(hipGraphMemAttrReservedMemHigh) >= reserved, "watermarks");
  uint64_t zero = 0, one = 1;
  CHECK(hipDeviceSetGraphMemAttribute(0, hipGraphMemAttrUsedMemHigh, &zero));
  REQUIRE(graph_mem(hipGraphMemAttrUsedMemHigh) == 0, "used high after reset");
  EXPECT_ERR(hipDeviceSetGraphMemAttribute(0, hipGraphMemAttrUsedMemHigh, &one), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceSetGraphMemAttribute(0, hipGraphMemAttrUsedMemCurrent, &zero), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceGetGraphMemAttribute(0, (hipGraphMemAttributeType)7, &zero), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceGetGraphMemAttribute(0, hipGraphMemAttrUsedMemCurrent, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceGetGraphMemAttribute(99, hipGraphMemAttrUsedMemCurrent, &zero), hipErrorInvalidDevice);
  EXPECT_ERR(hipDeviceGraphMemTrim(99), hipErrorInvalidDevice);
  /* Still the graph's: trimming keeps it, and the executable graph still runs. */
  CHECK(hipDeviceGraphMemTrim(0));
  CHECK(hipMemset(x, 0, N * sizeof(float)));
  CHECK(hipGraphLaunch(exec, s));
  CHECK(hipStreamSynchronize(s));
  expect_all(x, 4.0f, "x after a trim that kept the memory");
  /* Graph gone and memory freed by its free node: the reserve, which a trim releases. */
  CHECK(hipGraphDestroy(g));
  REQUIRE(graph_mem(hipGraphMemAttrUsedMemCurrent) == used0, "used after the graph went: %llu",
          (unsigned long long)graph_mem(hipGraphMemAttrUsedMemCurrent));
  REQUIRE(graph_mem(hipGraphMemAttrReservedMemCurrent) == reserved0 + N * sizeof(float), "reserved before the trim");
  CHECK(hipDeviceGraphMemTrim(0));
  REQUIRE(graph_mem(hipGraphMemAttrReservedMemCurrent) == reserved0, "reserved after the trim: %llu",
          (unsigned long long)graph_mem(hipGraphMemAttrReservedMemCurrent));
  /* The executable graph outlived its memory: its launch fails, the session goes on. */
  hipError_t launched = hipGraphLaunch(exec, s);
  hipError_t synced = hipStreamSynchronize(s);
  REQUIRE(launched == hipErrorInvalidValue || (launched == hipSuccess && synced == hipErrorInvalidValue),
          "launch after the trim: launch %s, sync %s", hipGetErrorName(launched), hipGetErrorName(synced));
  hipGetLastError();
  CHECK(hipGraphExecDestroy(exec));

  step("graph memory no free node frees is the user's: hipFree releases it");
  hipGraph_t keep;
  CHECK(hipGraphCreate(&keep, 0));
  CHECK(hipGraphAddMemAllocNode(&alloc, keep, NULL, 0, &ap));
  float* kept = (float*)ap.dptr;
  CHECK(hipGraphDestroy(keep));
  CHECK(hipMemset(kept, 0, N * sizeof(float)));
  REQUIRE(graph_mem(hipGraphMemAttrUsedMemCurrent) == used0 + N * sizeof(float), "kept memory is used");
  CHECK(hipFree(kept));
  REQUIRE(graph_mem(hipGraphMemAttrUsedMemCurrent) == used0, "used after hipFree");

  step("hipGraphAddNode with memory kinds");
  hipGraphNodeParams p;
  memset(&p, 0, sizeof p);
  p.type = hipGraphNodeTypeMemAlloc;
  p.alloc = ap;
  p.alloc.dptr = NULL;
  hipGraphNode_t galloc, gfree;
  CHECK(hipGraphAddNode(&galloc, parent, NULL, 0, &p));
  REQUIRE(p.alloc.dptr != NULL, "hipGraphAddNode gave no address");
  void* gmem = p.alloc.dptr;
  memset(&p, 0, sizeof p);
  p.type = hipGraphNodeTypeMemFree;
  p.free.dptr = gmem;
  CHECK(hipGraphAddNode(&gfree, parent, &galloc, 1, &p));
  CHECK(hipGraphDestroy(parent));
  CHECK(hipDeviceGraphMemTrim(0));
  REQUIRE(graph_mem(hipGraphMemAttrReservedMemCurrent) == reserved0, "reserved at the end");
}

static void batch_nodes(hipStream_t s) {
  step("batch memory operation nodes");
  uint64_t* words;
  CHECK(hipMalloc((void**)&words, 4 * sizeof(uint64_t)));
  CHECK(hipMemset(words, 0, 4 * sizeof(uint64_t)));
  hipGraph_t g;
  CHECK(hipGraphCreate(&g, 0));
  hipStreamBatchMemOpParams ops[3];
  memset(ops, 0, sizeof ops);
  ops[0].writeValue.operation = hipStreamMemOpWriteValue32;
  ops[0].writeValue.address = (hipDeviceptr_t)words;
  ops[0].writeValue.value = 7;
  ops[1].writeValue.operation = hipStreamMemOpWriteValue64;
  ops[1].writeValue.address = (hipDeviceptr_t)(words + 1);
  ops[1].writeValue.value64 = 0x123456789abcull;
  ops[2].memoryBarrier.operation = hipStreamMemOpBarrier;
  hipBatchMemOpNodeParams bp = {NULL, 3, ops, 0};
  hipGraphNode_t writes, waits;
  CHECK(hipGraphAddBatchMemOpNode(&writes, g, NULL, 0, &bp));
  hipStreamBatchMemOpParams wait_ops[1];
  memset(wait_ops, 0, sizeof wait_ops);
  wait_ops[0].waitValue.operation = hipStreamMemOpWaitValue32;
  wait_ops[0].waitValue.address = (hipDeviceptr_t)words;
  wait_ops[0].waitValue.value = 7;
  wait_ops[0].waitValue.flags = hipStreamWaitValueEq;
  hipBatchMemOpNodeParams wp = {NULL, 1, wait_ops, 0};
  CHECK(hipGraphAddBatchMemOpNode(&waits, g, &writes, 1, &wp));
  hipGraphNodeType type;
  CHECK(hipGraphNodeGetType(writes, &type));
  REQUIRE(type == hipGraphNodeTypeBatchMemOp, "batch node type %d", (int)type);
  launch_and_wait(g, s, 1);
  uint64_t host[4];
  CHECK(hipMemcpy(host, words, sizeof host, hipMemcpyDeviceToHost));
  REQUIRE((uint32_t)host[0] == 7 && host[1] == 0x123456789abcull, "words %llx %llx", (unsigned long long)host[0],
          (unsigned long long)host[1]);

  step("batch memory operation node parameters");
  hipBatchMemOpNodeParams got;
  memset(&got, 0, sizeof got);
  CHECK(hipGraphBatchMemOpNodeGetParams(writes, &got));
  REQUIRE(got.count == 3 && got.flags == 0 && got.paramArray != NULL, "count %u", got.count);
  REQUIRE(got.paramArray[0].writeValue.operation == hipStreamMemOpWriteValue32 && got.paramArray[0].writeValue.value == 7 &&
              got.paramArray[0].writeValue.address == (hipDeviceptr_t)words && got.paramArray[1].writeValue.value64 == 0x123456789abcull &&
              got.paramArray[2].operation == hipStreamMemOpBarrier,
          "operations read back");
  ops[0].writeValue.value = 9;
  ops[0].writeValue.address = (hipDeviceptr_t)(words + 3);
  CHECK(hipGraphBatchMemOpNodeSetParams(writes, &bp));
  wait_ops[0].waitValue.address = (hipDeviceptr_t)(words + 3);
  wait_ops[0].waitValue.value = 9;
  CHECK(hipGraphBatchMemOpNodeSetParams(waits, &wp));
  launch_and_wait(g, s, 1);
  CHECK(hipMemcpy(host, words, sizeof host, hipMemcpyDeviceToHost));
  REQUIRE((uint32_t)host[3] == 9, "word 3 = %llx after the set", (unsigned long long)host[3]);

  step("batch memory operation node errors");
  hipGraphNode_t bad;
  ops[0].writeValue.address = (hipDeviceptr_t)((char*)words + 2); /* misaligned */
  EXPECT_ERR(hipGraphAddBatchMemOpNode(&bad, g, NULL, 0, &bp), hipErrorInvalidValue);
  ops[0].writeValue.address = (hipDeviceptr_t)(uintptr_t)0x1000; /* no allocation */
  EXPECT_ERR(hipGraphBatchMemOpNodeSetParams(writes, &bp), hipErrorInvalidValue);
  ops[0].writeValue.address = (hipDeviceptr_t)words;
  ops[0].operation = 99;
  EXPECT_ERR(hipGraphAddBatchMemOpNode(&bad, g, NULL, 0, &bp), hipErrorInvalidValue);
  ops[0].writeValue.operation = hipStreamMemOpWriteValue32;
  hipBatchMemOpNodeParams none = {NULL, 0, ops, 0};
  EXPECT_ERR(hipGraphAddBatchMemOpNode(&bad, g, NULL, 0, &none), hipErrorInvalidValue);
  hipBatchMemOpNodeParams flagged = {NULL, 1, ops, 1};
  EXPECT_ERR(hipGraphAddBatchMemOpNode(&bad, g, NULL, 0, &flagged), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphAddBatchMemOpNode(&bad, g, NULL, 0, NULL), hipErrorInvalidValue);
  hipGraphNode_t empty;
  CHECK(hipGraphAddEmptyNode(&empty, g, NULL, 0));
  EXPECT_ERR(hipGraphBatchMemOpNodeGetParams(empty, &got), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphBatchMemOpNodeGetParams(writes, NULL), hipErrorInvalidValue);
  /* Memory freed after instantiation: the launch fails, the session goes on. */
  hipGraphExec_t exec;
  CHECK(hipGraphInstantiate(&exec, g, NULL, NULL, 0));
  CHECK(hipFree(words));
  hipError_t launched = hipGraphLaunch(exec, s);
  hipError_t synced = hipStreamSynchronize(s);
  REQUIRE(launched == hipErrorInvalidValue || (launched == hipSuccess && synced == hipErrorInvalidValue),
          "launch on freed memory: launch %s, sync %s", hipGetErrorName(launched), hipGetErrorName(synced));
  hipGetLastError();
  CHECK(hipGraphExecDestroy(exec));
  CHECK(hipGraphDestroy(g));
}

/* Executable-graph setters of the node kinds above: child graphs (with a child node in the
 * graph, so the executable graph is flattened), event nodes, batch memory operations, the
 * driver forms; each change takes effect at the next launch, the graph itself unchanged. */
static void exec_setters(float* x, float* sum, hipStream_t s1, hipStream_t s2) {
  step("hipGraphExecChildGraphNodeSetParams: new parameters for the child's nodes");
  hipGraph_t child, parent;
  CHECK(hipGraphCreate(&child, 0));
  hipGraphNode_t fill = add_fill(child, NULL, 0, x, 1.0f);
  add_scale(child, &fill, 1, x, 2.0f, 1.0f); /* x = 3 */
  CHECK(hipGraphCreate(&parent, 0));
  hipGraphNode_t zero = add_fill(parent, NULL, 0, sum, 0.0f);
  hipGraphNode_t sub;
  CHECK(hipGraphAddChildGraphNode(&sub, parent, &zero, 1, child));
  hipGraphNode_t summed = add_accumulate(parent, &sub, 1, x, sum);
  hipGraphExec_t exec;
  CHECK(hipGraphInstantiate(&exec, parent, NULL, NULL, 0));
  CHECK(hipGraphLaunch(exec, s1));
  CHECK(hipStreamSynchronize(s1));
  expect_all(sum, 3.0f, "sum before the child's update");
  /* A node outside the child still takes its own setter in a flattened executable graph. */
  hipMemsetParams ms = {0};
  float five = 5.0f;
  ms.dst = sum;
  ms.elementSize = 4;
  memcpy(&ms.value, &five, 4);
  ms.width = N;
  ms.height = 1;
  CHECK(hipGraphExecMemsetNodeSetParams(exec, zero, &ms));
  hipGraph_t same_shape;
  CHECK(hipGraphCreate(&same_shape, 0));
  hipGraphNode_t fill2 = add_fill(same_shape, NULL, 0, x, 2.0f);
  add_scale(same_shape, &fill2, 1, x, 3.0f, 1.0f); /* x = 7 */
  CHECK(hipGraphExecChildGraphNodeSetParams(exec, sub, same_shape));
  CHECK(hipGraphLaunch(exec, s1));
  CHECK(hipStreamSynchronize(s1));
  expect_all(sum, 12.0f, "sum after the child's and the memset's update (5 + 7)");
  /* The graph itself keeps the old parameters. */
  launch_and_wait(parent, s1, 1);
  expect_all(sum, 3.0f, "the graph after the executable graph's update");

  step("hipGraphExecChildGraphNodeSetParams refusals");
  hipGraph_t other_shape;
  CHECK(hipGraphCreate(&other_shape, 0));
  add_fill(other_shape, NULL, 0, x, 2.0f); /* one node, not two */
  EXPECT_ERR(hipGraphExecChildGraphNodeSetParams(exec, sub, other_shape), hipErrorInvalidValue);
  hipGraph_t other_edges;
  CHECK(hipGraphCreate(&other_edges, 0));
  add_fill(other_edges, NULL, 0, x, 2.0f);
  add_scale(other_edges, NULL, 0, x, 3.0f, 1.0f); /* no edge between them */
  EXPECT_ERR(hipGraphExecChildGraphNodeSetParams(exec, sub, other_edges), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphExecChildGraphNodeSetParams(exec, summed, same_shape), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphExecChildGraphNodeSetParams(exec, sub, NULL), hipErrorInvalidValue);
  CHECK(hipGraphLaunch(exec, s1));
  CHECK(hipStreamSynchronize(s1));
  expect_all(sum, 12.0f, "a refused update changes nothing");
  CHECK(hipGraphExecDestroy(exec));
  CHECK(hipGraphDestroy(parent));
  CHECK(hipGraphDestroy(child));
  CHECK(hipGraphDestroy(same_shape));
  CHECK(hipGraphDestroy(other_shape));
  CHECK(hipGraphDestroy(other_edges));

  step("hipGraphExecEventRecordNodeSetEvent / hipGraphExecEventWaitNodeSetEvent");
  hipEvent_t first, second;
  CHECK(hipEventCreate(&first));
  CHECK(hipEventCreate(&second));
  hipGraph_t g;
  CHECK(hipGraphCreate(&g, 0));
  hipGraphNode_t work = add_fill(g, NULL, 0, x, 4.0f);
  hipGraphNode_t record, wait;
  CHECK(hipGraphAddEventRecordNode(&record, g, &work, 1, first));
  CHECK(hipGraphAddEventWaitNode(&wait, g, NULL, 0, first));
  CHECK(hipGraphInstantiate(&exec, g, NULL, NULL, 0));
  CHECK(hipGraphExecEventRecordNodeSetEvent(exec, record, second));
  CHECK(hipGraphExecEventWaitNodeSetEvent(exec, wait, second));
  CHECK(hipGraphLaunch(exec, s1));
  /* The executable graph records `second` now: another stream waiting for it sees x = 4. */
  CHECK(hipStreamWaitEvent(s2, second, 0));
  CHECK(hipMemsetAsync(sum, 0, N * sizeof(float), s2));
  hipGraph_t acc;
  CHECK(hipGraphCreate(&acc, 0));
  add_accumulate(acc, NULL, 0, x, sum);
  launch_and_wait(acc, s2, 1);
  expect_all(sum, 4.0f, "a stream waiting for the newly set event");
  CHECK(hipStreamSynchronize(s1));
  EXPECT_ERR(hipGraphExecEventRecordNodeSetEvent(exec, wait, first), hipErrorInvalidValue);  /* a wait node */
  EXPECT_ERR(hipGraphExecEventWaitNodeSetEvent(exec, record, first), hipErrorInvalidValue);  /* a record node */
  EXPECT_ERR(hipGraphExecEventRecordNodeSetEvent(exec, work, first), hipErrorInvalidValue);  /* a memset node */
  EXPECT_ERR(hipGraphExecEventRecordNodeSetEvent(exec, record, NULL), hipErrorInvalidValue);
  CHECK(hipGraphExecDestroy(exec));
  CHECK(hipGraphDestroy(g));
  CHECK(hipGraphDestroy(acc));
  CHECK(hipEventDestroy(first));
  CHECK(hipEventDestroy(second));

  step("hipGraphExecBatchMemOpNodeSetParams");
  uint32_t* words;
  CHECK(hipMalloc((void**)&words, 2 * sizeof(uint32_t)));
  CHECK(hipMemset(words, 0, 2 * sizeof(uint32_t)));
  hipStreamBatchMemOpParams op;
  memset(&op, 0, sizeof op);
  op.writeValue.operation = hipStreamMemOpWriteValue32;
  op.writeValue.address = (hipDeviceptr_t)words;
  op.writeValue.value = 11;
  hipBatchMemOpNodeParams bp = {NULL, 1, &op, 0};
  hipGraphNode_t batch;
  CHECK(hipGraphCreate(&g, 0));
  CHECK(hipGraphAddBatchMemOpNode(&batch, g, NULL, 0, &bp));
  CHECK(hipGraphInstantiate(&exec, g, NULL, NULL, 0));
  hipStreamBatchMemOpParams op2 = op;
  op2.writeValue.address = (hipDeviceptr_t)(words + 1);
  op2.writeValue.value = 22;
  hipBatchMemOpNodeParams bp2 = {NULL, 1, &op2, 0};
  CHECK(hipGraphExecBatchMemOpNodeSetParams(exec, batch, &bp2));
  CHECK(hipGraphLaunch(exec, s1));
  CHECK(hipStreamSynchronize(s1));
  uint32_t got[2];
  CHECK(hipMemcpy(got, words, sizeof got, hipMemcpyDeviceToHost));
  REQUIRE(got[0] == 0 && got[1] == 22, "batch words after the update: %u %u", got[0], got[1]);
  EXPECT_ERR(hipGraphExecBatchMemOpNodeSetParams(exec, batch, NULL), hipErrorInvalidValue);
  CHECK(hipGraphExecDestroy(exec));
  CHECK(hipGraphDestroy(g));
  CHECK(hipFree(words));

  step("hipDrvGraphExecMemsetNodeSetParams / hipDrvGraphExecMemcpyNodeSetParams");
  float* y;
  CHECK(hipMalloc((void**)&y, N * sizeof(float)));
  CHECK(hipGraphCreate(&g, 0));
  hipGraphNode_t set = add_fill(g, NULL, 0, x, 1.0f);
  hipGraphNode_t copied;
  CHECK(hipGraphAddMemcpyNode1D(&copied, g, &set, 1, y, x, N * sizeof(float), hipMemcpyDeviceToDevice));
  CHECK(hipGraphInstantiate(&exec, g, NULL, NULL, 0));
  float six = 6.0f;
  memcpy(&ms.value, &six, 4);
  ms.dst = x;
  CHECK(hipDrvGraphExecMemsetNodeSetParams(exec, set, &ms, NULL));
  HIP_MEMCPY3D drv;
  memset(&drv, 0, sizeof drv);
  drv.srcMemoryType = hipMemoryTypeDevice;
  drv.srcDevice = (hipDeviceptr_t)x;
  drv.dstMemoryType = hipMemoryTypeDevice;
  drv.dstDevice = (hipDeviceptr_t)sum;
  drv.srcPitch = drv.dstPitch = N * sizeof(float);
  drv.WidthInBytes = N * sizeof(float);
  drv.Height = 1;
  drv.Depth = 1;
  CHECK(hipDrvGraphExecMemcpyNodeSetParams(exec, copied, &drv, NULL));
  CHECK(hipGraphLaunch(exec, s1));
  CHECK(hipStreamSynchronize(s1));
  expect_all(sum, 6.0f, "the driver-form setters: memset 6, copied into sum");
  EXPECT_ERR(hipDrvGraphExecMemcpyNodeSetParams(exec, set, &drv, NULL), hipErrorInvalidValue); /* a memset node */
  CHECK(hipGraphExecDestroy(exec));
  CHECK(hipGraphDestroy(g));
  CHECK(hipFree(y));

  step("hipDrvGraphAddMemsetNode; executable-graph copies to and from a device variable");
  CHECK(hipGraphCreate(&g, 0));
  hipGraphNode_t drv_set, to_sym, from_sym;
  hipMemsetParams dm = {0};
  float two = 2.0f;
  dm.dst = x;
  dm.elementSize = 4;
  memcpy(&dm.value, &two, 4);
  dm.width = N;
  dm.height = 1;
  CHECK(hipDrvGraphAddMemsetNode(&drv_set, g, NULL, 0, &dm, NULL)); /* x = 2 */
  CHECK(hipGraphAddMemcpyNodeToSymbol(&to_sym, g, &drv_set, 1, shadow, x, N * sizeof(float), 0, hipMemcpyDeviceToDevice));
  CHECK(hipGraphAddMemcpyNodeFromSymbol(&from_sym, g, &to_sym, 1, sum, shadow, N * sizeof(float), 0, hipMemcpyDeviceToDevice));
  CHECK(hipGraphInstantiate(&exec, g, NULL, NULL, 0));
  CHECK(hipGraphLaunch(exec, s1));
  CHECK(hipStreamSynchronize(s1));
  expect_all(sum, 2.0f, "x through the variable into sum");
  /* Now only the variable's second half is written, and all of it read back. */
  CHECK(hipGraphExecMemcpyNodeSetParamsToSymbol(exec, to_sym, shadow, x, N / 2 * sizeof(float), N / 2 * sizeof(float),
                                                hipMemcpyDeviceToDevice));
  CHECK(hipGraphExecMemcpyNodeSetParamsFromSymbol(exec, from_sym, sum, shadow, N * sizeof(float), 0, hipMemcpyDeviceToDevice));
  static float zeros[N];
  CHECK(hipMemcpyToSymbol(shadow, zeros, sizeof zeros, 0, hipMemcpyHostToDevice));
  CHECK(hipMemset(sum, 0, N * sizeof(float)));
  CHECK(hipGraphLaunch(exec, s1));
  CHECK(hipStreamSynchronize(s1));
  float back[N];
  CHECK(hipMemcpy(back, sum, sizeof back, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(back[i] == (i < N / 2 ? 0.0f : 2.0f), "sum[%d] = %f after the symbol setters", i, back[i]);
  static float not_a_variable[4];
  EXPECT_ERR(hipGraphExecMemcpyNodeSetParamsToSymbol(exec, to_sym, not_a_variable, x, 4, 0, hipMemcpyDeviceToDevice), hipErrorInvalidSymbol);
  EXPECT_ERR(hipGraphExecMemcpyNodeSetParamsFromSymbol(exec, from_sym, sum, shadow, sizeof shadow, 4, hipMemcpyDeviceToDevice),
             hipErrorInvalidValue);
  CHECK(hipGraphExecDestroy(exec));
  CHECK(hipGraphDestroy(g));
}

int main(void) {
  begin("graph_nodes");
  hipModule_t module = load_module();
  CHECK(hipModuleGetFunction(&scale, module, "scale"));
  CHECK(hipModuleGetFunction(&accumulate, module, "accumulate"));
  float *x, *sum;
  CHECK(hipMalloc((void**)&x, N * sizeof(float)));
  CHECK(hipMalloc((void**)&sum, N * sizeof(float)));
  hipStream_t s1, s2;
  CHECK(hipStreamCreate(&s1));
  CHECK(hipStreamCreate(&s2));

  event_nodes(x, sum, s1, s2);
  child_graphs(x, sum, s1);
  destroy_node(x, s1);
  register_table();
  node_params(x, sum, s1);
  generic_nodes(x, sum, s1);
  memory_nodes(x, s1);
  batch_nodes(s1);
  exec_setters(x, sum, s1, s2);

  CHECK(hipStreamDestroy(s1));
  CHECK(hipStreamDestroy(s2));
  CHECK(hipFree(x));
  CHECK(hipFree(sum));
  CHECK(hipModuleUnload(module));
  printf("PASS graph_nodes\n");
  return 0;
}
