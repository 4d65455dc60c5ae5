/*
 * Explicit graphs: memset -> kernel -> memcpy -> kernel built with dependencies, instantiated
 * once and launched 100 times (an accumulating kernel proves every replay ran); node and edge
 * queries; kernel node parameters read back and changed; clones; HIP's errors (bad handles,
 * cycles and duplicate edges refused, a graph whose memory was freed fails its launch without
 * harming the session); the DOT file of hipGraphDebugDotPrint.
 */
#include "check.h"
#include <hip/hiprtc.h>
#include <unistd.h>

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
  REQUIRE(hiprtcCreateProgram(&prog, SOURCE, "graphs.hip", 0, NULL, NULL) == HIPRTC_SUCCESS, "create");
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

static void expect_all(const float* d_sum, float want, const char* what) {
  float host[N];
  CHECK(hipMemcpy(host, d_sum, sizeof host, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) {
    REQUIRE(host[i] == want, "%s: sum[%d] = %f, expected %f", what, i, host[i], want);
  }
}

static int host_calls;
static void count_call(void* user) { __atomic_add_fetch((int*)user, 1, __ATOMIC_SEQ_CST); }

static size_t count_of(const char* text, const char* word) {
  size_t n = 0;
  for (const char* p = strstr(text, word); p; p = strstr(p + 1, word)) n++;
  return n;
}

int main(void) {
  begin("graphs");
  hipModule_t module = load_module();
  hipFunction_t scale, accumulate;
  CHECK(hipModuleGetFunction(&scale, module, "scale"));
  CHECK(hipModuleGetFunction(&accumulate, module, "accumulate"));

  float *x, *y, *sum;
  CHECK(hipMalloc((void**)&x, N * sizeof(float)));
  CHECK(hipMalloc((void**)&y, N * sizeof(float)));
  CHECK(hipMalloc((void**)&sum, N * sizeof(float)));
  CHECK(hipMemset(sum, 0, N * sizeof(float)));
  hipStream_t stream;
  CHECK(hipStreamCreate(&stream));

  step("build memset -> scale -> memcpy -> accumulate");
  hipGraph_t graph;
  CHECK(hipGraphCreate(&graph, 0));
  hipGraphNode_t set, scaled, copied, summed, empty_unused;
  hipMemsetParams ms = {0};
  ms.dst = x;
  ms.elementSize = 4;
  ms.value = 0x3f800000; /* 1.0f */
  ms.width = N;
  ms.height = 1;
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
  CHECK(hipGraphAddKernelNode(&summed, graph, NULL, 0, &ap));
  CHECK(hipGraphAddDependencies(graph, &copied, &summed, 1));

  step("instantiate, launch 100 times");
  hipGraphExec_t exec;
  CHECK(hipGraphInstantiate(&exec, graph, NULL, NULL, 0));
  for (int i = 0; i < LAUNCHES; i++) CHECK(hipGraphLaunch(exec, stream));
  CHECK(hipStreamSynchronize(stream));
  expect_all(sum, 3.0f * LAUNCHES, "after 100 launches");
  /* The null stream too. */
  CHECK(hipGraphLaunch(exec, NULL));
  CHECK(hipDeviceSynchronize());
  expect_all(sum, 3.0f * (LAUNCHES + 1), "after a null-stream launch");

  step("node and edge queries");
  size_t count = 0;
  CHECK(hipGraphGetNodes(graph, NULL, &count));
  REQUIRE(count == 4, "%zu nodes", count);
  hipGraphNode_t nodes[6];
  count = 6;
  CHECK(hipGraphGetNodes(graph, nodes, &count));
  REQUIRE(count == 4 && nodes[0] == set && nodes[1] == scaled && nodes[2] == copied && nodes[3] == summed && nodes[4] == NULL && nodes[5] == NULL,
          "nodes in creation order (%zu)", count);
  count = 2;
  CHECK(hipGraphGetNodes(graph, nodes, &count));
  REQUIRE(count == 2 && nodes[0] == set && nodes[1] == scaled, "a short array gets the first nodes");
  count = 0;
  CHECK(hipGraphGetRootNodes(graph, NULL, &count));
  REQUIRE(count == 1, "%zu roots", count);
  CHECK(hipGraphGetRootNodes(graph, nodes, &count));
  REQUIRE(nodes[0] == set, "the memset is the root");
  hipGraphNode_t from[3], to[3];
  count = 0;
  CHECK(hipGraphGetEdges(graph, NULL, NULL, &count));
  REQUIRE(count == 3, "%zu edges", count);
  CHECK(hipGraphGetEdges(graph, from, to, &count));
  REQUIRE(from[0] == set && to[0] == scaled && from[1] == scaled && to[1] == copied && from[2] == copied && to[2] == summed, "edges");
  count = 0;
  CHECK(hipGraphNodeGetDependencies(scaled, NULL, &count));
  REQUIRE(count == 1, "scale has %zu dependencies", count);
  CHECK(hipGraphNodeGetDependencies(scaled, from, &count));
  REQUIRE(from[0] == set, "scale depends on the memset");
  count = 3;
  CHECK(hipGraphNodeGetDependentNodes(copied, to, &count));
  REQUIRE(count == 1 && to[0] == summed && to[1] == NULL, "the copy's dependent is the accumulation (%zu)", count);
  count = 0;
  CHECK(hipGraphNodeGetDependencies(set, NULL, &count));
  REQUIRE(count == 0, "the root has %zu dependencies", count);
  EXPECT_ERR(hipGraphNodeGetDependencies(NULL, NULL, &count), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphNodeGetDependentNodes(set, NULL, NULL), hipErrorInvalidValue);
  hipGraphNodeType type;
  CHECK(hipGraphNodeGetType(set, &type));
  REQUIRE(type == hipGraphNodeTypeMemset, "memset type %d", type);
  CHECK(hipGraphNodeGetType(scaled, &type));
  REQUIRE(type == hipGraphNodeTypeKernel, "kernel type %d", type);
  CHECK(hipGraphNodeGetType(copied, &type));
  REQUIRE(type == hipGraphNodeTypeMemcpy, "memcpy type %d", type);

  step("kernel node parameters");
  hipKernelNodeParams got;
  CHECK(hipGraphKernelNodeGetParams(scaled, &got));
  REQUIRE(got.func == (void*)scale && got.gridDim.x == N / 64 && got.blockDim.x == 64 && got.sharedMemBytes == 0, "geometry");
  REQUIRE(*(float**)got.kernelParams[0] == x && *(float*)got.kernelParams[1] == 2.0f && *(float*)got.kernelParams[2] == 1.0f &&
              *(int*)got.kernelParams[3] == N,
          "arguments read back");
  a = 3.0f; /* 1 * 3 + 1 = 4 per launch from now on */
  CHECK(hipGraphKernelNodeSetParams(scaled, &kp));
  EXPECT_ERR(hipGraphKernelNodeGetParams(set, &got), hipErrorInvalidValue);
  /* An executable graph keeps the parameters it was made with. */
  CHECK(hipGraphLaunch(exec, stream));
  CHECK(hipStreamSynchronize(stream));
  expect_all(sum, 3.0f * (LAUNCHES + 2), "the old executable graph");
  hipGraphExec_t exec2;
  CHECK(hipGraphInstantiateWithFlags(&exec2, graph, 0));
  CHECK(hipGraphLaunch(exec2, stream));
  CHECK(hipStreamSynchronize(stream));
  float total = 3.0f * (LAUNCHES + 2) + 4.0f;
  expect_all(sum, total, "after set params");

  step("clone");
  hipGraph_t clone;
  CHECK(hipGraphClone(&clone, graph));
  count = 6;
  CHECK(hipGraphGetNodes(clone, nodes, &count));
  REQUIRE(count == 4 && nodes[0] != set, "the clone has its own 4 nodes");
  CHECK(hipGraphNodeGetType(nodes[1], &type));
  REQUIRE(type == hipGraphNodeTypeKernel, "cloned kernel");
  CHECK(hipGraphKernelNodeGetParams(nodes[1], &got));
  REQUIRE(got.func == (void*)scale && *(float*)got.kernelParams[1] == 3.0f, "cloned kernel parameters");
  count = 0;
  CHECK(hipGraphGetEdges(clone, NULL, NULL, &count));
  REQUIRE(count == 3, "clone edges %zu", count);
  hipGraphExec_t clone_exec;
  CHECK(hipGraphInstantiate(&clone_exec, clone, NULL, NULL, 0));
  CHECK(hipGraphDestroy(clone)); /* its executable graph lives on */
  CHECK(hipGraphLaunch(clone_exec, stream));
  CHECK(hipStreamSynchronize(stream));
  total += 4.0f;
  expect_all(sum, total, "the clone's executable graph");
  CHECK(hipGraphExecDestroy(clone_exec));

  step("host nodes: the client runs the callback at every launch");
  hipGraph_t hg;
  CHECK(hipGraphCreate(&hg, 0));
  hipGraphNode_t hset, hcall;
  CHECK(hipGraphAddMemsetNode(&hset, hg, NULL, 0, &ms));
  hipHostNodeParams hp = {count_call, &host_calls};
  CHECK(hipGraphAddHostNode(&hcall, hg, &hset, 1, &hp));
  CHECK(hipGraphNodeGetType(hcall, &type));
  REQUIRE(type == hipGraphNodeTypeHost, "host type %d", type);
  hipHostNodeParams no_fn = {NULL, NULL};
  EXPECT_ERR(hipGraphAddHostNode(&empty_unused, hg, NULL, 0, &no_fn), hipErrorInvalidValue);
  hipGraphExec_t hexec;
  CHECK(hipGraphInstantiate(&hexec, hg, NULL, NULL, 0));
  for (int i = 0; i < 10; i++) CHECK(hipGraphLaunch(hexec, stream));
  CHECK(hipStreamSynchronize(stream));
  REQUIRE(__atomic_load_n(&host_calls, __ATOMIC_SEQ_CST) == 10, "host node ran %d times", host_calls);
  CHECK(hipGraphExecDestroy(hexec));
  CHECK(hipGraphDestroy(hg));

  step("copy nodes: a pitched box, device to device");
  {
    enum { PITCH = 128, ROWS = 16 };
    unsigned char host[PITCH * ROWS], back[PITCH * ROWS];
    for (int i = 0; i < PITCH * ROWS; i++) host[i] = (unsigned char)(i * 7 + 3);
    unsigned char *from, *into;
    CHECK(hipMalloc((void**)&from, sizeof host));
    CHECK(hipMalloc((void**)&into, sizeof host));
    CHECK(hipMemcpy(from, host, sizeof host, hipMemcpyHostToDevice));
    CHECK(hipMemset(into, 0, sizeof host));
    hipMemcpy3DParms cp;
    memset(&cp, 0, sizeof cp);
    cp.srcPtr = (hipPitchedPtr){from, PITCH, 64, ROWS};
    cp.srcPos = (hipPos){8, 2, 0};
    cp.dstPtr = (hipPitchedPtr){into, PITCH, 64, ROWS};
    cp.dstPos = (hipPos){4, 1, 0};
    cp.extent = (hipExtent){32, 5, 1};
    cp.kind = hipMemcpyDeviceToDevice;
    hipGraph_t cg;
    CHECK(hipGraphCreate(&cg, 0));
    hipGraphNode_t copy_node;
    CHECK(hipGraphAddMemcpyNode(&copy_node, cg, NULL, 0, &cp));
    CHECK(hipGraphNodeGetType(copy_node, &type));
    REQUIRE(type == hipGraphNodeTypeMemcpy, "copy node type %d", type);
    hipMemcpy3DParms too_wide = cp;
    too_wide.extent.width = PITCH; /* 4 + 128 bytes do not fit a 128-byte pitch */
    EXPECT_ERR(hipGraphAddMemcpyNode(&empty_unused, cg, NULL, 0, &too_wide), hipErrorInvalidPitchValue);
    EXPECT_ERR(hipGraphAddMemcpyNode(&empty_unused, cg, NULL, 0, NULL), hipErrorInvalidValue);
    hipGraphExec_t cexec;
    CHECK(hipGraphInstantiate(&cexec, cg, NULL, NULL, 0));
    CHECK(hipGraphLaunch(cexec, stream));
    CHECK(hipStreamSynchronize(stream));
    CHECK(hipMemcpy(back, into, sizeof back, hipMemcpyDeviceToHost));
    for (int r = 0; r < ROWS; r++) {
      for (int c = 0; c < PITCH; c++) {
        int inside = r >= 1 && r < 6 && c >= 4 && c < 36;
        unsigned char want = inside ? host[(r - 1 + 2) * PITCH + (c - 4 + 8)] : 0;
        REQUIRE(back[r * PITCH + c] == want, "copied box at row %d byte %d: %u, expected %u", r, c, back[r * PITCH + c], want);
      }
    }
    CHECK(hipGraphExecDestroy(cexec));
    CHECK(hipGraphDestroy(cg));
    CHECK(hipFree(from));
    CHECK(hipFree(into));
  }

  step("DOT file");
  char path[128];
  snprintf(path, sizeof path, "/tmp/hip_remote_graph_%d.dot", (int)getpid());
  CHECK(hipGraphDebugDotPrint(graph, path, 0));
  FILE* f = fopen(path, "r");
  REQUIRE(f != NULL, "%s exists", path);
  char dot[8192] = {0};
  size_t len = fread(dot, 1, sizeof dot - 1, f);
  fclose(f);
  unlink(path);
  REQUIRE(len > 0 && strncmp(dot, "digraph", 7) == 0, "DOT text: %s", dot);
  REQUIRE(count_of(dot, "->") == 3 && count_of(dot, "KERNEL") == 2 && strstr(dot, "MEMSET") && strstr(dot, "MEMCPY") &&
              strstr(dot, "scale") && strstr(dot, "accumulate"),
          "DOT content: %s", dot);
  EXPECT_ERR(hipGraphDebugDotPrint(graph, "/nonexistent-dir/x.dot", 0), hipErrorOperatingSystem);

  step("errors");
  EXPECT_ERR(hipGraphCreate(NULL, 0), hipErrorInvalidValue);
  hipGraph_t bad;
  EXPECT_ERR(hipGraphCreate(&bad, 1), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphDestroy(NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphGetNodes((hipGraph_t)(uintptr_t)0x1234, NULL, &count), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphGetNodes(graph, NULL, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphNodeGetType(NULL, &type), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphNodeGetType((hipGraphNode_t)(uintptr_t)0x1234, &type), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphInstantiate(NULL, graph, NULL, NULL, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphInstantiate(&exec2, NULL, NULL, NULL, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphLaunch(NULL, stream), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphExecDestroy(NULL), hipErrorInvalidValue);
  /* A cycle, a duplicate edge and a self edge are refused; the graph is unchanged. */
  EXPECT_ERR(hipGraphAddDependencies(graph, &summed, &set, 1), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphAddDependencies(graph, &set, &scaled, 1), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphAddDependencies(graph, &set, &set, 1), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphRemoveDependencies(graph, &set, &summed, 1), hipErrorInvalidValue);
  count = 0;
  CHECK(hipGraphGetEdges(graph, NULL, NULL, &count));
  REQUIRE(count == 3, "edges after refusals: %zu", count);
  /* Removing and re-adding an edge. */
  CHECK(hipGraphRemoveDependencies(graph, &copied, &summed, 1));
  CHECK(hipGraphGetRootNodes(graph, NULL, &count));
  REQUIRE(count == 2, "roots after removal: %zu", count);
  CHECK(hipGraphAddDependencies(graph, &copied, &summed, 1));
  /* A node of another graph is not a dependency. */
  hipGraph_t other;
  CHECK(hipGraphCreate(&other, 0));
  hipGraphNode_t empty;
  EXPECT_ERR(hipGraphAddEmptyNode(&empty, other, &set, 1), hipErrorInvalidValue);
  CHECK(hipGraphAddEmptyNode(&empty, other, NULL, 0));
  CHECK(hipGraphNodeGetType(empty, &type));
  REQUIRE(type == hipGraphNodeTypeEmpty, "empty type %d", type);
  EXPECT_ERR(hipGraphAddDependencies(graph, &set, &empty, 1), hipErrorInvalidValue);
  /* Bad node parameters. */
  hipMemsetParams bad_ms = ms;
  bad_ms.elementSize = 3;
  EXPECT_ERR(hipGraphAddMemsetNode(&empty, other, NULL, 0, &bad_ms), hipErrorInvalidValue);
  bad_ms = ms;
  bad_ms.width = N * 2; /* runs past the allocation */
  EXPECT_ERR(hipGraphAddMemsetNode(&empty, other, NULL, 0, &bad_ms), hipErrorInvalidValue);
  hipKernelNodeParams bad_kp = kp;
  bad_kp.func = NULL;
  EXPECT_ERR(hipGraphAddKernelNode(&empty, other, NULL, 0, &bad_kp), hipErrorInvalidDeviceFunction);
  bad_kp = kp;
  bad_kp.blockDim = (dim3){0, 1, 1};
  EXPECT_ERR(hipGraphAddKernelNode(&empty, other, NULL, 0, &bad_kp), hipErrorInvalidConfiguration);
  EXPECT_ERR(hipGraphAddMemsetNode(&empty, other, NULL, 0, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphAddEmptyNode(&empty, other, NULL, 1), hipErrorInvalidValue);

  step("a graph whose memory was freed");
  float* z;
  CHECK(hipMalloc((void**)&z, N * sizeof(float)));
  hipMemsetParams zs = ms;
  zs.dst = z;
  hipGraphNode_t zset;
  CHECK(hipGraphAddMemsetNode(&zset, other, &empty, 1, &zs));
  hipGraphExec_t stale;
  CHECK(hipGraphInstantiate(&stale, other, NULL, NULL, 0));
  CHECK(hipFree(z));
  hipError_t launched = hipGraphLaunch(stale, stream);
  hipError_t synced = hipStreamSynchronize(stream);
  REQUIRE(launched == hipErrorInvalidValue || (launched == hipSuccess && synced == hipErrorInvalidValue),
          "stale launch: launch %s, sync %s", hipGetErrorName(launched), hipGetErrorName(synced));
  hipGetLastError();
  /* Instantiating it now is refused too; the session goes on. */
  EXPECT_ERR(hipGraphInstantiate(&exec2, other, NULL, NULL, 0), hipErrorInvalidValue);
  CHECK(hipGraphExecDestroy(stale));
  CHECK(hipGraphLaunch(exec, stream));
  CHECK(hipStreamSynchronize(stream));
  expect_all(sum, total + 3.0f, "the session after the stale launch");

  step("destroy");
  CHECK(hipGraphDestroy(graph));
  /* The executable graph outlives its graph. */
  CHECK(hipGraphLaunch(exec, stream));
  CHECK(hipStreamSynchronize(stream));
  expect_all(sum, total + 6.0f, "after the graph's destruction");
  EXPECT_ERR(hipGraphNodeGetType(set, &type), hipErrorInvalidValue);
  EXPECT_ERR(hipGraphDestroy(graph), hipErrorInvalidValue);
  CHECK(hipGraphExecDestroy(exec));
  CHECK(hipGraphExecDestroy(exec2));
  launched = hipGraphLaunch(exec, stream); /* fire-and-forget: the error may come with the next call */
  synced = hipStreamSynchronize(stream);
  REQUIRE(launched == hipErrorInvalidValue || (launched == hipSuccess && synced == hipErrorInvalidValue),
          "destroyed launch: launch %s, sync %s", hipGetErrorName(launched), hipGetErrorName(synced));
  hipGetLastError();
  CHECK(hipGraphDestroy(other));
  CHECK(hipStreamDestroy(stream));
  CHECK(hipFree(x));
  CHECK(hipFree(y));
  CHECK(hipFree(sum));

  step("a graph whose module was unloaded");
  {
    /* Many kernel nodes of one function: every launch must still notice the unload. */
    hipGraph_t many;
    hipGraphExec_t many_exec;
    hipGraphNode_t prev = NULL, node;
    float* z;
    hipStream_t zs;
    CHECK(hipStreamCreate(&zs));
    CHECK(hipMalloc((void**)&z, N * sizeof(float)));
    void* z_args[] = {&z, &a, &b, &n};
    hipKernelNodeParams zp = kp;
    zp.kernelParams = z_args;
    CHECK(hipGraphCreate(&many, 0));
    for (int i = 0; i < 16; ++i) {
      CHECK(hipGraphAddKernelNode(&node, many, prev ? &prev : NULL, prev ? 1 : 0, &zp));
      prev = node;
    }
    CHECK(hipGraphInstantiate(&many_exec, many, NULL, NULL, 0));
    CHECK(hipGraphLaunch(many_exec, zs));
    CHECK(hipStreamSynchronize(zs));
    CHECK(hipModuleUnload(module));
    launched = hipGraphLaunch(many_exec, zs);
    synced = hipStreamSynchronize(zs);
    REQUIRE(launched != hipSuccess || synced != hipSuccess, "a launch after the module's unload: launch %s, sync %s",
            hipGetErrorName(launched), hipGetErrorName(synced));
    hipGetLastError();
    CHECK(hipGraphExecDestroy(many_exec));
    CHECK(hipGraphDestroy(many));
    CHECK(hipFree(z));
    CHECK(hipStreamDestroy(zs));
  }
  printf("PASS graphs\n");
  return 0;
}
