/*
 * Operations without a round trip (docs/ALLOCATION.md), through the real libamdhip64:
 * streams and events created and destroyed without waiting, then used; small synchronous
 * host-to-device copies that return once sent, with the source reused at once, ordered
 * before a kernel on a non-blocking stream and a copy back; a bad destination's error
 * deferred to the next synchronising call with HIP's code.
 */
#include "check.h"
#include <hip/hiprtc.h>

static const char* SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void scale(const int* in, int* out, int k, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = in[i] * k;\n"
    "}\n";

static hipFunction_t compile_scale(hipModule_t* module) {
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  hiprtcProgram prog;
  if (hiprtcCreateProgram(&prog, SOURCE, "scale.hip", 0, NULL, NULL) != HIPRTC_SUCCESS) exit(1);
  char arch[300];
  snprintf(arch, sizeof arch, "--offload-arch=%s", props.gcnArchName);
  const char* opts[] = {arch};
  REQUIRE(hiprtcCompileProgram(prog, 1, opts) == HIPRTC_SUCCESS, "compile");
  size_t size = 0;
  REQUIRE(hiprtcGetCodeSize(prog, &size) == HIPRTC_SUCCESS, "code size");
  char* code = malloc(size);
  REQUIRE(hiprtcGetCode(prog, code) == HIPRTC_SUCCESS, "code");
  hiprtcDestroyProgram(&prog);
  CHECK(hipModuleLoadData(module, code));
  free(code);
  hipFunction_t fn;
  CHECK(hipModuleGetFunction(&fn, *module, "scale"));
  return fn;
}

int main(void) {
  begin("no_wait_ops");
  enum { N = 1024 };
  int *d_in, *d_out;
  CHECK(hipMalloc((void**)&d_in, N * sizeof(int)));
  CHECK(hipMalloc((void**)&d_out, N * sizeof(int)));

  step("1000 streams and events created, used and destroyed");
  for (int round = 0; round < 1000; round++) {
    hipStream_t s;
    hipEvent_t e;
    CHECK(hipStreamCreateWithFlags(&s, round % 2 ? hipStreamNonBlocking : hipStreamDefault));
    CHECK(hipEventCreate(&e));
    CHECK(hipMemsetAsync(d_out, round & 0xff, 64, s));
    CHECK(hipEventRecord(e, s));
    if (round % 100 == 0) {
      CHECK(hipEventSynchronize(e));
      unsigned char back[64];
      CHECK(hipMemcpy(back, d_out, sizeof back, hipMemcpyDeviceToHost));
      REQUIRE(back[0] == (round & 0xff) && back[63] == (round & 0xff), "round %d: memset on a new stream", round);
      unsigned int flags = 99;
      CHECK(hipStreamGetFlags(s, &flags));
      REQUIRE(flags == (round % 2 ? hipStreamNonBlocking : hipStreamDefault), "flags %u", flags);
    }
    CHECK(hipEventDestroy(e));
    CHECK(hipStreamDestroy(s));
  }
  CHECK(hipDeviceSynchronize());

  step("small hipMemcpy uploads: source reused on return, ordered before a kernel on a non-blocking stream");
  hipModule_t module;
  hipFunction_t scale = compile_scale(&module);
  hipStream_t other;
  CHECK(hipStreamCreateWithFlags(&other, hipStreamNonBlocking));
  int host[N], result[N];
  for (int round = 0; round < 200; round++) {
    for (int i = 0; i < N; i++) host[i] = i * 3 + round;
    CHECK(hipMemcpy(d_in, host, sizeof host, hipMemcpyHostToDevice));
    memset(host, 0xee, sizeof host); /* HIP allows reusing the source once hipMemcpy returns */
    int k = round % 5 + 1, n = N;
    void* params[] = {&d_in, &d_out, &k, &n};
    CHECK(hipModuleLaunchKernel(scale, N / 256, 1, 1, 256, 1, 1, 0, other, params, NULL));
    CHECK(hipMemcpyAsync(result, d_out, sizeof result, hipMemcpyDeviceToHost, other));
    CHECK(hipStreamSynchronize(other));
    for (int i = 0; i < N; i++) REQUIRE(result[i] == (i * 3 + round) * k, "round %d element %d: %d", round, i, result[i]);
  }
  /* hipMemcpyHtoD and hipMemcpyDefault take the same path; then a copy back on the null stream. */
  for (int i = 0; i < N; i++) host[i] = -i;
  CHECK(hipMemcpyHtoD((hipDeviceptr_t)d_in, host, 512));
  CHECK(hipMemcpy((char*)d_in + 512, (char*)host + 512, sizeof host - 512, hipMemcpyDefault));
  CHECK(hipMemcpy(result, d_in, sizeof result, hipMemcpyDeviceToHost));
  REQUIRE(memcmp(result, host, sizeof host) == 0, "hipMemcpyHtoD + hipMemcpyDefault");

  step("a destination this process did not allocate waits for the worker: HIP's code at once");
  EXPECT_ERR(hipMemcpy((void*)(uintptr_t)0x7e5700000000ull, host, 16, hipMemcpyHostToDevice), hipErrorInvalidValue);
  int* gone;
  CHECK(hipMalloc((void**)&gone, 4096));
  CHECK(hipFree(gone));
  EXPECT_ERR(hipMemcpy(gone, host, 16, hipMemcpyHostToDevice), hipErrorInvalidValue);
  CHECK(hipDeviceSynchronize());

  step("hipMalloc without waiting: 10000 malloc/free pairs, mixed sizes sharing granules, used by copies and memsets");
  for (int round = 0; round < 10000; round++) {
    void* p;
    CHECK(hipMalloc(&p, 1 << 20));
    CHECK(hipFree(p));
  }
  enum { MIXED = 64 };
  char* blocks[MIXED];
  size_t sizes[MIXED];
  for (int i = 0; i < MIXED; i++) {
    sizes[i] = (size_t)(i % 7 == 0 ? (3u << 20) + 17 * i : 100 + 997 * i);
    CHECK(hipMalloc((void**)&blocks[i], sizes[i]));
    REQUIRE(((uintptr_t)blocks[i] & 255) == 0, "block %d at %p: 256-byte alignment", i, (void*)blocks[i]);
    CHECK(hipMemset(blocks[i], i + 1, sizes[i]));
  }
  for (int i = 0; i < MIXED; i++) {
    for (int j = 0; j < MIXED; j++) {
      if (i != j) {
        REQUIRE(blocks[i] + sizes[i] <= blocks[j] || blocks[j] + sizes[j] <= blocks[i], "blocks %d and %d overlap", i, j);
      }
    }
    unsigned char ends[2];
    CHECK(hipMemcpy(&ends[0], blocks[i], 1, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(&ends[1], blocks[i] + sizes[i] - 1, 1, hipMemcpyDeviceToHost));
    REQUIRE(ends[0] == i + 1 && ends[1] == i + 1, "block %d holds %d/%d", i, ends[0], ends[1]);
    hipPointerAttribute_t attrs;
    CHECK(hipPointerGetAttributes(&attrs, blocks[i] + 5));
    REQUIRE(attrs.type == hipMemoryTypeDevice && attrs.devicePointer == blocks[i] + 5, "pointer attributes of block %d", i);
  }
  for (int i = 0; i < MIXED; i += 2) CHECK(hipFree(blocks[i]));
  for (int i = 1; i < MIXED; i += 2) {
    unsigned char first;
    CHECK(hipMemcpy(&first, blocks[i], 1, hipMemcpyDeviceToHost));
    REQUIRE(first == i + 1, "block %d survived its neighbours' frees", i);
    CHECK(hipFree(blocks[i]));
  }
  EXPECT_ERR(hipFree(blocks[1]), hipErrorInvalidValue);

  step("hipMemGetInfo counts what is allocated");
  size_t free_before, total, free_after;
  CHECK(hipMemGetInfo(&free_before, &total));
  void* big;
  CHECK(hipMalloc(&big, 64 << 20));
  CHECK(hipMemGetInfo(&free_after, &total));
  REQUIRE(free_before - free_after >= (64u << 20), "free %zu -> %zu", free_before, free_after);
  CHECK(hipFree(big));
  EXPECT_ERR(hipMalloc(&big, total + 1), hipErrorOutOfMemory);

  step("running out of memory is reported by hipMalloc itself, never deferred");
  /* Blocks of 4 MiB, or larger on a device whose memory 4096 of them would not fill. */
  enum { MAX_BLOCKS = 4096 };
  static void* filled[MAX_BLOCKS];
  size_t block = (size_t)4 << 20;
  while (block * (MAX_BLOCKS / 2) < total) block *= 2;
  int n = 0;
  hipError_t e = hipSuccess;
  while (n < MAX_BLOCKS && (e = hipMalloc(&filled[n], block)) == hipSuccess) n++;
  REQUIRE(e == hipErrorOutOfMemory, "the %d-th hipMalloc of %zu MiB answered %s", n, block >> 20, hipGetErrorName(e));
  CHECK(hipDeviceSynchronize()); /* nothing deferred: every posted allocation had memory */
  CHECK(hipMemset(filled[n - 1], 1, block));
  for (int i = 0; i < n; i++) CHECK(hipFree(filled[i]));
  CHECK(hipMalloc(&big, 64 << 20));
  CHECK(hipFree(big));
  CHECK(hipDeviceSynchronize());
  printf("%d blocks of %zu MiB before hipErrorOutOfMemory\n", n, block >> 20);

  CHECK(hipStreamDestroy(other));
  CHECK(hipModuleUnload(module));
  CHECK(hipFree(d_in));
  CHECK(hipFree(d_out));
  printf("PASS no_wait_ops\n");
  return 0;
}
