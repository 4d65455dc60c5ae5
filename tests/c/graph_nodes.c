/*
 * Graph node kinds: event record and wait nodes (ordering across streams, elapsed time between
 * two record nodes, get/set, a destroyed event failing the launch), child graph nodes (the
 * child is cloned into the node; the embedded graph is the node's, editable, and expanded
 * with the node's dependencies kept), hipGraphDestroyNode and hipGraphNodeFindInClone, with
 * HIP's errors.
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

  CHECK(hipStreamDestroy(s1));
  CHECK(hipStreamDestroy(s2));
  CHECK(hipFree(x));
  CHECK(hipFree(sum));
  CHECK(hipModuleUnload(module));
  printf("PASS graph_nodes\n");
  return 0;
}
