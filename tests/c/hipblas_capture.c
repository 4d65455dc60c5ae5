/*
 * hipBLAS inside stream capture: a kernel writing A, hipblasSgemm (host scalars),
 * hipblasSgemmStridedBatched (device scalars) and a kernel reading C, captured on one stream.
 * Nothing runs at capture time; the graph replays the routines at every launch, after the
 * kernel before them, with the inputs and device scalars of that launch, checked against a CPU
 * reference — the second launch after hipblasDestroy (the graph keeps the handle). A
 * host-result reduction (hipblasSdot, host pointer mode) and a pointer-array routine
 * (hipblasSgemmBatched) cannot be captured: refused, and the capture is invalidated.
 */
#include "hipblas_check.h"
#include <hip/hiprtc.h>
#include <string.h>

static const char* SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void affine(float* dst, const float* src, float a, float b, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) dst[i] = src[i] * a + b;\n"
    "}\n";

#define M 16
#define N 12
#define K 8
#define BATCH 3
#define A_ELEMS (M * K * BATCH)
#define B_ELEMS (K * N * BATCH)
#define C_ELEMS (M * N)
#define E_ELEMS (M * N * BATCH)
#define SENTINEL 7.0f

static hipFunction_t affine;

static hipModule_t load_module(void) {
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  hiprtcProgram prog;
  REQUIRE(hiprtcCreateProgram(&prog, SOURCE, "hipblas_capture.hip", 0, NULL, NULL) == HIPRTC_SUCCESS, "create");
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

static void launch_affine(float* dst, const float* src, float a, float b, int n, hipStream_t s) {
  void* args[] = {&dst, &src, &a, &b, &n};
  CHECK(hipModuleLaunchKernel(affine, (n + 63) / 64, 1, 1, 64, 1, 1, 0, s, args, NULL));
}

static void* dev_alloc(size_t elems, float value) {
  float* host = malloc(elems * sizeof(float));
  for (size_t i = 0; i < elems; i++) host[i] = value;
  void* d = NULL;
  CHECK(hipMalloc(&d, elems * sizeof(float)));
  CHECK(hipMemcpy(d, host, elems * sizeof(float), hipMemcpyHostToDevice));
  free(host);
  return d;
}

static void expect_all(const float* d, size_t elems, float want, const char* what) {
  float* host = malloc(elems * sizeof(float));
  CHECK(hipMemcpy(host, d, elems * sizeof(float), hipMemcpyDeviceToHost));
  for (size_t i = 0; i < elems; i++) REQUIRE(host[i] == want, "%s: [%zu] = %f, expected %f (work ran at capture time)", what, i, host[i], want);
  free(host);
}

static void expect_close(const float* d, const double* want, size_t elems, const char* what) {
  float* got = malloc(elems * sizeof(float));
  CHECK(hipMemcpy(got, d, elems * sizeof(float), hipMemcpyDeviceToHost));
  double err = max_rel_err_f(got, want, elems);
  REQUIRE(err < 1e-4, "%s: error %g against the CPU reference", what, err);
  free(got);
}

/* The inputs of one launch and the CPU reference of what the graph computes from them. */
struct Inputs {
  float a_src[A_ELEMS], b[B_ELEMS], c[C_ELEMS], scalars[2];
};

static void make_inputs(struct Inputs* in, unsigned salt) {
  fill_f(in->a_src, A_ELEMS, salt);
  fill_f(in->b, B_ELEMS, salt + 1);
  fill_f(in->c, C_ELEMS, salt + 2);
  in->scalars[0] = 0.25f + (float)salt; /* alpha of the strided-batched gemm */
  in->scalars[1] = -0.5f * (float)salt; /* its beta */
}

static const float GEMM_BETA = -0.75f, A_SCALE = 2.0f, OUT_SCALE = 3.0f, OUT_SHIFT = 1.0f;

/* out = 3 * (gemm_alpha * (2 a_src)[0] * b[0] + (-0.75) c) + 1; e_i = alpha (2 a_src)_i b_i + beta e_old_i. */
static void reference(const struct Inputs* in, float gemm_alpha, const double* e_old, double* out, double* e) {
  double a[A_ELEMS], b[B_ELEMS], c[C_ELEMS];
  for (int i = 0; i < A_ELEMS; i++) a[i] = (double)(in->a_src[i] * A_SCALE);
  for (int i = 0; i < B_ELEMS; i++) b[i] = in->b[i];
  for (int i = 0; i < C_ELEMS; i++) c[i] = in->c[i];
  ref_gemm(HIPBLAS_OP_N, HIPBLAS_OP_N, M, N, K, gemm_alpha, a, M, b, K, GEMM_BETA, c, M);
  for (int i = 0; i < C_ELEMS; i++) out[i] = c[i] * OUT_SCALE + OUT_SHIFT;
  for (int i = 0; i < E_ELEMS; i++) e[i] = e_old[i];
  for (int j = 0; j < BATCH; j++)
    ref_gemm(HIPBLAS_OP_N, HIPBLAS_OP_N, M, N, K, in->scalars[0], a + j * M * K, M, b + j * K * N, K, in->scalars[1], e + j * M * N, M);
}

static void upload(void* d, const void* host, size_t bytes) { CHECK(hipMemcpy(d, host, bytes, hipMemcpyHostToDevice)); }

/* The device buffers. */
static struct {
  float *a_src, *a, *b, *c, *out, *e, *scalars;
} g;

/* Captures on `s`: a kernel writing A, sgemm (host scalars, alpha `gemm_alpha`) writing C,
 * sgemm strided batched (device scalars) writing E, a kernel reading C into out. */
static hipGraph_t capture_step(hipblasHandle_t h, hipStream_t s, float gemm_alpha) {
  CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  launch_affine(g.a, g.a_src, A_SCALE, 0.0f, A_ELEMS, s);
  BLAS_OK(hipblasSetPointerMode(h, HIPBLAS_POINTER_MODE_HOST));
  BLAS_OK(hipblasSgemm(h, HIPBLAS_OP_N, HIPBLAS_OP_N, M, N, K, &gemm_alpha, g.a, M, g.b, K, &GEMM_BETA, g.c, M));
  BLAS_OK(hipblasSetPointerMode(h, HIPBLAS_POINTER_MODE_DEVICE));
  BLAS_OK(hipblasSgemmStridedBatched(h, HIPBLAS_OP_N, HIPBLAS_OP_N, M, N, K, g.scalars, g.a, M, M * K, g.b, K, K * N, g.scalars + 1, g.e, M,
                                     M * N, BATCH));
  BLAS_OK(hipblasSetPointerMode(h, HIPBLAS_POINTER_MODE_HOST));
  launch_affine(g.out, g.c, OUT_SCALE, OUT_SHIFT, C_ELEMS, s);
  hipGraph_t graph = NULL;
  CHECK(hipStreamEndCapture(s, &graph));
  return graph;
}

/* Sets new inputs, launches `exec`, checks out and E against the CPU reference. */
static void launch_and_check(hipGraphExec_t exec, hipStream_t s, unsigned salt, float gemm_alpha) {
  static struct Inputs in;
  static double want_out[C_ELEMS], want_e[E_ELEMS], e_old[E_ELEMS];
  static float e_now[E_ELEMS];
  /* This launch's beta scales what E holds now. */
  CHECK(hipMemcpy(e_now, g.e, sizeof e_now, hipMemcpyDeviceToHost));
  for (int i = 0; i < E_ELEMS; i++) e_old[i] = e_now[i];
  make_inputs(&in, salt);
  upload(g.a_src, in.a_src, sizeof in.a_src);
  upload(g.b, in.b, sizeof in.b);
  upload(g.c, in.c, sizeof in.c);
  upload(g.scalars, in.scalars, sizeof in.scalars);
  reference(&in, gemm_alpha, e_old, want_out, want_e);
  CHECK(hipGraphLaunch(exec, s));
  CHECK(hipStreamSynchronize(s));
  expect_close(g.out, want_out, C_ELEMS, "out (kernel after sgemm)");
  expect_close(g.e, want_e, E_ELEMS, "E (sgemm strided batched)");
}

int main(void) {
  begin("hipblas_capture");
  hipModule_t module = load_module();
  CHECK(hipModuleGetFunction(&affine, module, "affine"));
  float *a_src = dev_alloc(A_ELEMS, 1.0f), *a = dev_alloc(A_ELEMS, SENTINEL), *b = dev_alloc(B_ELEMS, 1.0f);
  float *c = dev_alloc(C_ELEMS, SENTINEL), *out = dev_alloc(C_ELEMS, SENTINEL), *e = dev_alloc(E_ELEMS, SENTINEL);
  float* scalars = dev_alloc(2, 0.0f);
  g.a_src = a_src, g.a = a, g.b = b, g.c = c, g.out = out, g.e = e, g.scalars = scalars;
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  hipblasHandle_t h;
  BLAS_OK(hipblasCreate(&h));
  BLAS_OK(hipblasSetStream(h, s));

  step("capture kernel, sgemm, sgemm strided batched, kernel");
  hipGraph_t graph = capture_step(h, s, 1.5f);
  REQUIRE(graph != NULL, "the capture made a graph");

  step("nothing ran at capture time");
  expect_all(a, A_ELEMS, SENTINEL, "A");
  expect_all(c, C_ELEMS, SENTINEL, "C");
  expect_all(e, E_ELEMS, SENTINEL, "E");
  expect_all(out, C_ELEMS, SENTINEL, "out");

  step("the graph's nodes");
  size_t count = 0;
  CHECK(hipGraphGetNodes(graph, NULL, &count));
  REQUIRE(count == 4, "4 captured nodes, got %zu", count);
  hipGraphNode_t nodes[4];
  CHECK(hipGraphGetNodes(graph, nodes, &count));
  const hipGraphNodeType want_types[4] = {hipGraphNodeTypeKernel, hipGraphNodeTypeGraph, hipGraphNodeTypeGraph, hipGraphNodeTypeKernel};
  for (int i = 0; i < 4; i++) {
    hipGraphNodeType type;
    CHECK(hipGraphNodeGetType(nodes[i], &type));
    REQUIRE(type == want_types[i], "node %d has type %d, expected %d", i, type, want_types[i]);
  }

  hipGraphExec_t exec = NULL;
  CHECK(hipGraphInstantiate(&exec, graph, NULL, NULL, 0));
  hipGraph_t copy = NULL;
  CHECK(hipGraphClone(&copy, graph));
  hipGraphExec_t copy_exec = NULL;
  CHECK(hipGraphInstantiate(&copy_exec, copy, NULL, NULL, 0));

  step("launch 1");
  launch_and_check(exec, s, 10, 1.5f);
  step("launch 2, after hipblasDestroy (the graph keeps the handle)");
  BLAS_OK(hipblasDestroy(h));
  launch_and_check(exec, s, 20, 1.5f);
  step("launch 3, the clone");
  launch_and_check(copy_exec, s, 30, 1.5f);

  step("recaptured with another alpha: hipGraphExecUpdate, then launch");
  BLAS_OK(hipblasCreate(&h));
  BLAS_OK(hipblasSetStream(h, s));
  hipGraph_t again = capture_step(h, s, 0.5f);
  hipGraphNode_t error_node = NULL;
  hipGraphExecUpdateResult update = hipGraphExecUpdateError;
  CHECK(hipGraphExecUpdate(exec, again, &error_node, &update));
  REQUIRE(update == hipGraphExecUpdateSuccess, "update result %d", (int)update);
  launch_and_check(exec, s, 40, 0.5f);
  CHECK(hipGraphDestroy(again));
  CHECK(hipGraphExecDestroy(copy_exec));
  CHECK(hipGraphDestroy(copy));
  CHECK(hipGraphExecDestroy(exec));
  CHECK(hipGraphDestroy(graph));

  step("a host-result reduction invalidates the capture");
  CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  launch_affine(a, a_src, 1.0f, 0.0f, A_ELEMS, s);
  float dot = 0;
  hipblasStatus_t st = hipblasSdot(h, K, a, 1, b, 1, &dot);
  REQUIRE(st == HIPBLAS_STATUS_EXECUTION_FAILED, "hipblasSdot to the host during capture: status %d", (int)st);
  hipStreamCaptureStatus status;
  CHECK(hipStreamIsCapturing(s, &status));
  REQUIRE(status == hipStreamCaptureStatusInvalidated, "capture status %d after the reduction", (int)status);
  graph = NULL;
  EXPECT_ERR(hipStreamEndCapture(s, &graph), hipErrorStreamCaptureInvalidated);
  REQUIRE(graph == NULL, "an invalidated capture gives no graph");

  /* Arrays of pointers: read on the GPU at replay, inside the session's own context, so GPU
   * backends record the routine; the host backend's BLAS would follow them in the worker. */
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  /* A chained worker (the hip backend over another worker's host devices, the harness's
   * HIP_REMOTE_TEST_CHAIN=1) records them: its calls reach the next worker, which checks the
   * arrays itself when the graph replays. */
  const char* chain = getenv("HIP_REMOTE_TEST_CHAIN");
  int refuses_pointer_arrays = strcmp(props.gcnArchName, "host") == 0 && !(chain && strcmp(chain, "1") == 0);
  float** ptrs = NULL;
  CHECK(hipMalloc((void**)&ptrs, 3 * BATCH * sizeof(float*)));
  float* host_ptrs[3 * BATCH];
  for (int j = 0; j < BATCH; j++) host_ptrs[j] = a + j * M * K, host_ptrs[BATCH + j] = b + j * K * N, host_ptrs[2 * BATCH + j] = e + j * M * N;
  upload(ptrs, host_ptrs, sizeof host_ptrs);
  float one = 1.0f, zero = 0.0f;
  if (refuses_pointer_arrays) {
    step("a pointer-array routine invalidates the capture (host backend)");
    CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    st = hipblasSgemmBatched(h, HIPBLAS_OP_N, HIPBLAS_OP_N, M, N, K, &one, (const float**)ptrs, M, (const float**)(ptrs + BATCH), K, &zero,
                             ptrs + 2 * BATCH, M, BATCH);
    /* A routine launch is posted (its refusal is not awaited): the capture's state says it. */
    REQUIRE(st == HIPBLAS_STATUS_SUCCESS || st == HIPBLAS_STATUS_EXECUTION_FAILED, "hipblasSgemmBatched during capture: status %d", (int)st);
    CHECK(hipStreamIsCapturing(s, &status));
    REQUIRE(status == hipStreamCaptureStatusInvalidated, "capture status %d after the pointer-array routine", (int)status);
    graph = NULL;
    EXPECT_ERR(hipStreamEndCapture(s, &graph), hipErrorStreamCaptureInvalidated);
    REQUIRE(graph == NULL, "an invalidated capture gives no graph");
    /* The posted routine's own refusal comes with the next synchronisation, once. */
    EXPECT_ERR(hipStreamSynchronize(s), hipErrorStreamCaptureUnsupported);
  } else {
    step("a pointer-array routine is recorded and replayed (GPU backend)");
    /* The graph writes the arrays itself (a copy node), then the batched gemm follows them. */
    float** staged = NULL;
    CHECK(hipMalloc((void**)&staged, 3 * BATCH * sizeof(float*)));
    CHECK(hipMemset(staged, 0, 3 * BATCH * sizeof(float*)));
    CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    CHECK(hipMemcpyAsync(staged, ptrs, 3 * BATCH * sizeof(float*), hipMemcpyDeviceToDevice, s));
    BLAS_OK(hipblasSgemmBatched(h, HIPBLAS_OP_N, HIPBLAS_OP_N, M, N, K, &one, (const float**)staged, M, (const float**)(staged + BATCH), K,
                                &zero, staged + 2 * BATCH, M, BATCH));
    graph = NULL;
    CHECK(hipStreamEndCapture(s, &graph));
    hipGraphExec_t batched_exec;
    CHECK(hipGraphInstantiate(&batched_exec, graph, NULL, NULL, 0));
    float a_host[A_ELEMS], b_host[B_ELEMS];
    CHECK(hipMemcpy(a_host, a, sizeof a_host, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(b_host, b, sizeof b_host, hipMemcpyDeviceToHost));
    double want[E_ELEMS], a_ref[A_ELEMS], b_ref[B_ELEMS];
    for (int i = 0; i < A_ELEMS; i++) a_ref[i] = a_host[i];
    for (int i = 0; i < B_ELEMS; i++) b_ref[i] = b_host[i];
    for (int i = 0; i < E_ELEMS; i++) want[i] = 0.0;
    for (int j = 0; j < BATCH; j++) ref_gemm(HIPBLAS_OP_N, HIPBLAS_OP_N, M, N, K, 1.0, a_ref + j * M * K, M, b_ref + j * K * N, K, 0.0, want + j * M * N, M);
    CHECK(hipMemset(e, 0x7f, E_ELEMS * sizeof(float)));
    CHECK(hipGraphLaunch(batched_exec, s));
    CHECK(hipStreamSynchronize(s));
    expect_close(e, want, E_ELEMS, "E (sgemm batched, replayed)");
    CHECK(hipGraphExecDestroy(batched_exec));
    CHECK(hipGraphDestroy(graph));
    CHECK(hipFree(staged));
  }

  step("outside capture the same calls run");
  BLAS_OK(hipblasSdot(h, K, a, 1, b, 1, &dot));
  BLAS_OK(hipblasSgemmBatched(h, HIPBLAS_OP_N, HIPBLAS_OP_N, M, N, K, &one, (const float**)ptrs, M, (const float**)(ptrs + BATCH), K, &zero,
                              ptrs + 2 * BATCH, M, BATCH));
  CHECK(hipStreamSynchronize(s));
  BLAS_OK(hipblasDestroy(h));
  CHECK(hipFree(ptrs));
  float* bufs[] = {a_src, a, b, c, out, e, scalars};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) CHECK(hipFree(bufs[i]));
  CHECK(hipStreamDestroy(s));
  CHECK(hipModuleUnload(module));
  printf("PASS hipblas_capture\n");
  return 0;
}
