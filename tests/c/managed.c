/*
 * Managed memory the way AMD's and CUDA's samples use it: allocate with hipMallocManaged,
 * initialise on the CPU, let a kernel (built with hiprtc on the worker) work on it,
 * synchronise, check on the CPU, write on the CPU again, launch again; copies and memsets on
 * managed pointers, a pointer inside a struct argument, streams, events and queries as
 * synchronisation points; prefetch, advice and range attributes; argument errors. Through
 * hipRemoteManagedStats it also proves that only the pages that changed cross the
 * connection, in both directions.
 */
#include "check.h"
#include <hip/hiprtc.h>

hipError_t hipRemoteManagedStats(unsigned long long* pushed, unsigned long long* pulled);

static const char* SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "struct Holder { int* data; int n; };\n"
    "extern \"C\" __global__ void scale(int* a, int n, int factor) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) a[i] *= factor;\n"
    "}\n"
    "extern \"C\" __global__ void bump(int* a, int index) {\n"
    "  if (blockIdx.x == 0 && threadIdx.x == 0) a[index] += 1;\n"
    "}\n"
    "extern \"C\" __global__ void through_struct(struct Holder h) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < h.n) h.data[i] += 1000;\n"
    "}\n";

struct Holder { int* data; int n; };

#define PAGE_INTS 1024 /* ints per 4096-byte page */
#define PAGES 64
#define N (PAGES * PAGE_INTS)

static hipFunction_t scale_fn, bump_fn, struct_fn;

static void build_kernels(void) {
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  hiprtcProgram prog;
  if (hiprtcCreateProgram(&prog, SOURCE, "managed.hip", 0, NULL, NULL) != HIPRTC_SUCCESS) { printf("FAIL hiprtcCreateProgram\n"); exit(1); }
  char arch[300];
  snprintf(arch, sizeof arch, "--offload-arch=%s", props.gcnArchName);
  const char* opts[] = {arch};
  if (hiprtcCompileProgram(prog, 1, opts) != HIPRTC_SUCCESS) { printf("FAIL compile\n"); exit(1); }
  size_t size = 0;
  hiprtcGetCodeSize(prog, &size);
  char* code = malloc(size);
  hiprtcGetCode(prog, code);
  hiprtcDestroyProgram(&prog);
  hipModule_t module;
  CHECK(hipModuleLoadData(&module, code));
  CHECK(hipModuleGetFunction(&scale_fn, module, "scale"));
  CHECK(hipModuleGetFunction(&bump_fn, module, "bump"));
  CHECK(hipModuleGetFunction(&struct_fn, module, "through_struct"));
}

static void launch_scale(int* a, int n, int factor, hipStream_t stream) {
  void* params[] = {&a, &n, &factor};
  CHECK(hipModuleLaunchKernel(scale_fn, (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, params, NULL));
}

static void launch_bump(int* a, int index, hipStream_t stream) {
  void* params[] = {&a, &index};
  CHECK(hipModuleLaunchKernel(bump_fn, 1, 1, 1, 32, 1, 1, 0, stream, params, NULL));
}

static void stats(unsigned long long* pushed, unsigned long long* pulled) { CHECK(hipRemoteManagedStats(pushed, pulled)); }

int main(void) {
  int managed = 0, concurrent = 1;
  CHECK(hipDeviceGetAttribute(&managed, hipDeviceAttributeManagedMemory, 0));
  CHECK(hipDeviceGetAttribute(&concurrent, hipDeviceAttributeConcurrentManagedAccess, 0));
  REQUIRE(managed == 1 && concurrent == 0, "managed %d concurrent %d", managed, concurrent);
  build_kernels();

  /* Allocate, initialise on the CPU, double on the device, check on the CPU. */
  int* a = NULL;
  CHECK(hipMallocManaged((void**)&a, N * sizeof(int), hipMemAttachGlobal));
  REQUIRE(a != NULL, "no pointer");
  for (int i = 0; i < N; i++) a[i] = i;
  unsigned long long p0, q0, p1, q1;
  stats(&p0, &q0);
  launch_scale(a, N, 2, NULL);
  CHECK(hipDeviceSynchronize());
  for (int i = 0; i < N; i++) REQUIRE(a[i] == 2 * i, "a[%d] = %d after doubling", i, a[i]);
  stats(&p1, &q1);
  REQUIRE(p1 - p0 == N * sizeof(int) && q1 - q0 == N * sizeof(int), "first round moved %llu up, %llu down", p1 - p0, q1 - q0);
  printf("doubled %d ints initialised on the CPU; every page moved once each way\n", N);

  /* One CPU write in page 5, the kernel changes one int of page 10: one page each way. */
  a[5 * PAGE_INTS + 3] = 7;
  launch_bump(a, 10 * PAGE_INTS, NULL);
  CHECK(hipStreamSynchronize(NULL));
  REQUIRE(a[5 * PAGE_INTS + 3] == 7, "CPU write lost: %d", a[5 * PAGE_INTS + 3]);
  REQUIRE(a[10 * PAGE_INTS] == 2 * 10 * PAGE_INTS + 1, "device write not seen: %d", a[10 * PAGE_INTS]);
  stats(&p0, &q0);
  REQUIRE(p0 - p1 == 4096 && q0 - q1 == 4096, "one changed page each way, moved %llu up, %llu down", p0 - p1, q0 - q1);
  printf("a one-int change moved one page each way\n");

  /* Nothing changed on either side: nothing moves. */
  launch_scale(a, 1, 1, NULL); /* multiplies a[0] by 1: no change */
  CHECK(hipDeviceSynchronize());
  stats(&p1, &q1);
  REQUIRE(p1 == p0 && q1 == q0, "idle round moved %llu up, %llu down", p1 - p0, q1 - q0);

  /* A managed pointer inside a struct argument needs no translation. */
  struct Holder h = {a, 16};
  void* sparams[] = {&h};
  CHECK(hipModuleLaunchKernel(struct_fn, 1, 1, 1, 32, 1, 1, 0, NULL, sparams, NULL));
  CHECK(hipDeviceSynchronize());
  for (int i = 0; i < 16; i++) REQUIRE(a[i] == 2 * i + 1000, "struct kernel: a[%d] = %d", i, a[i]);

  /* Streams, events and queries synchronise too. */
  hipStream_t stream;
  CHECK(hipStreamCreate(&stream));
  launch_scale(a, N, -1, stream);
  CHECK(hipStreamSynchronize(stream));
  REQUIRE(a[100] == -200 && a[20000] == -40000, "stream: %d %d", a[100], a[20000]);
  hipEvent_t done;
  CHECK(hipEventCreate(&done));
  launch_scale(a, N, -1, stream);
  CHECK(hipEventRecord(done, stream));
  CHECK(hipEventSynchronize(done));
  REQUIRE(a[100] == 200, "event: %d", a[100]);
  launch_bump(a, 100, stream);
  hipError_t q;
  while ((q = hipStreamQuery(stream)) == hipErrorNotReady) {}
  CHECK(q);
  REQUIRE(a[100] == 201, "query: %d", a[100]);

  /* Copies and memsets see the CPU's writes and the CPU sees theirs. */
  a[0] = 99;
  int x = 0;
  CHECK(hipMemcpy(&x, a, sizeof x, hipMemcpyDefault));
  REQUIRE(x == 99, "copy from managed read %d", x);
  CHECK(hipMemset(a, 0, 4096));
  for (int i = 0; i < PAGE_INTS; i++) REQUIRE(a[i] == 0, "memset: a[%d] = %d", i, a[i]);
  int y = 4242;
  CHECK(hipMemcpy(a + 1, &y, sizeof y, hipMemcpyHostToDevice));
  REQUIRE(a[1] == 4242, "copy into managed: %d", a[1]);
  int* d;
  CHECK(hipMalloc((void**)&d, 4096));
  CHECK(hipMemcpy(d, a, 4096, hipMemcpyDeviceToDevice));
  a[1] = 0;
  CHECK(hipMemcpy(a, d, 4096, hipMemcpyDefault));
  REQUIRE(a[1] == 4242, "device to managed: %d", a[1]);
  printf("copies and memsets on managed memory stay coherent with the CPU\n");

  /* Prefetch, advice, range attributes. */
  size_t bytes = N * sizeof(int);
  int value = -5;
  CHECK(hipMemPrefetchAsync(a, bytes, 0, stream));
  CHECK(hipMemRangeGetAttribute(&value, sizeof value, hipMemRangeAttributeLastPrefetchLocation, a, bytes));
  REQUIRE(value == 0, "last prefetch %d", value);
  CHECK(hipMemPrefetchAsync(a, 4096, hipCpuDeviceId, stream));
  CHECK(hipMemRangeGetAttribute(&value, sizeof value, hipMemRangeAttributeLastPrefetchLocation, a, 4096));
  REQUIRE(value == hipCpuDeviceId, "last prefetch %d", value);
  CHECK(hipMemRangeGetAttribute(&value, sizeof value, hipMemRangeAttributeLastPrefetchLocation, a, bytes));
  REQUIRE(value == hipInvalidDeviceId, "mixed last prefetch %d", value);
  CHECK(hipStreamSynchronize(stream));
  hipMemLocation device0 = {hipMemLocationTypeDevice, 0};
  CHECK(hipMemPrefetchAsync_v2(a, bytes, device0, 0, stream));

  /* Batch prefetch: page 0 to device 0, pages 1-2 to the CPU. */
  void* batch_ptrs[] = {a, a + PAGE_INTS};
  size_t batch_sizes[] = {4096, 8192};
  hipMemLocation batch_locs[] = {{hipMemLocationTypeDevice, 0}, {hipMemLocationTypeHost, hipCpuDeviceId}};
  size_t batch_starts[] = {0, 1};
  CHECK(hipMemPrefetchBatchAsync(batch_ptrs, batch_sizes, 2, batch_locs, batch_starts, 2, 0, stream));
  CHECK(hipMemRangeGetAttribute(&value, sizeof value, hipMemRangeAttributeLastPrefetchLocation, a, 4096));
  REQUIRE(value == 0, "batch page 0 prefetched to %d", value);
  CHECK(hipMemRangeGetAttribute(&value, sizeof value, hipMemRangeAttributeLastPrefetchLocation, a + PAGE_INTS, 8192));
  REQUIRE(value == hipCpuDeviceId, "batch pages 1-2 prefetched to %d", value);
  EXPECT_ERR(hipMemPrefetchBatchAsync(NULL, batch_sizes, 2, batch_locs, batch_starts, 2, 0, stream), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPrefetchBatchAsync(batch_ptrs, batch_sizes, 2, batch_locs, batch_starts, 2, 0, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPrefetchBatchAsync(batch_ptrs, batch_sizes, 2, batch_locs, batch_starts, 2, 1, stream), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPrefetchBatchAsync(batch_ptrs, batch_sizes, 2, batch_locs, batch_starts, 3, 0, stream), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPrefetchBatchAsync(batch_ptrs, batch_sizes, 0, batch_locs, batch_starts, 1, 0, stream), hipErrorInvalidValue);
  size_t bad_starts[] = {1, 0};
  EXPECT_ERR(hipMemPrefetchBatchAsync(batch_ptrs, batch_sizes, 2, batch_locs, bad_starts, 2, 0, stream), hipErrorInvalidValue);
  size_t repeated_starts[] = {0, 0};
  EXPECT_ERR(hipMemPrefetchBatchAsync(batch_ptrs, batch_sizes, 2, batch_locs, repeated_starts, 2, 0, stream), hipErrorInvalidValue);
  size_t zero_sizes[] = {4096, 0};
  EXPECT_ERR(hipMemPrefetchBatchAsync(batch_ptrs, zero_sizes, 2, batch_locs, batch_starts, 2, 0, stream), hipErrorInvalidValue);

  CHECK(hipMemRangeGetAttribute(&value, sizeof value, hipMemRangeAttributeReadMostly, a, bytes));
  REQUIRE(value == 0, "read mostly before advice: %d", value);
  CHECK(hipMemAdvise(a, bytes, hipMemAdviseSetReadMostly, 0));
  CHECK(hipMemAdvise(a, bytes, hipMemAdviseSetPreferredLocation, 0));
  CHECK(hipMemAdvise(a, bytes, hipMemAdviseSetAccessedBy, 0));
  CHECK(hipMemAdvise_v2(a, 4096, hipMemAdviseSetCoarseGrain, device0));
  int read_mostly = 0, preferred = -5, accessed[3] = {-5, -5, -5}, coherency = -5;
  void* data[] = {&read_mostly, &preferred, accessed};
  size_t sizes[] = {sizeof read_mostly, sizeof preferred, sizeof accessed};
  hipMemRangeAttribute attrs[] = {hipMemRangeAttributeReadMostly, hipMemRangeAttributePreferredLocation, hipMemRangeAttributeAccessedBy};
  CHECK(hipMemRangeGetAttributes(data, sizes, attrs, 3, a, bytes));
  REQUIRE(read_mostly == 1 && preferred == 0, "read mostly %d preferred %d", read_mostly, preferred);
  REQUIRE(accessed[0] == 0 && accessed[1] == hipInvalidDeviceId && accessed[2] == hipInvalidDeviceId, "accessed by %d %d %d", accessed[0], accessed[1], accessed[2]);
  CHECK(hipMemRangeGetAttribute(&coherency, sizeof coherency, hipMemRangeAttributeCoherencyMode, a, 4096));
  REQUIRE(coherency == 1, "coarse-grained page reports %d", coherency);
  CHECK(hipMemRangeGetAttribute(&coherency, sizeof coherency, hipMemRangeAttributeCoherencyMode, a, bytes));
  REQUIRE(coherency == 2, "mixed range reports %d", coherency);
  CHECK(hipMemAdvise(a, bytes, hipMemAdviseUnsetReadMostly, 0));
  CHECK(hipMemAdvise(a, bytes, hipMemAdviseUnsetPreferredLocation, 0));
  CHECK(hipMemRangeGetAttributes(data, sizes, attrs, 2, a, bytes));
  REQUIRE(read_mostly == 0 && preferred == hipInvalidDeviceId, "after unset: %d %d", read_mostly, preferred);
  printf("prefetch and advice are reported by the range attributes\n");

  /* Stream attachment. */
  CHECK(hipStreamAttachMemAsync(stream, a, 0, hipMemAttachSingle));
  CHECK(hipStreamAttachMemAsync(stream, a, bytes, hipMemAttachGlobal));
  EXPECT_ERR(hipStreamAttachMemAsync(NULL, a, 0, hipMemAttachSingle), hipErrorInvalidValue);
  EXPECT_ERR(hipStreamAttachMemAsync(stream, a, 0, 7), hipErrorInvalidValue);
  EXPECT_ERR(hipStreamAttachMemAsync(stream, a, 12, hipMemAttachGlobal), hipErrorInvalidValue);
  EXPECT_ERR(hipStreamAttachMemAsync(stream, NULL, 0, hipMemAttachGlobal), hipErrorInvalidValue);
  int local = 0;
  EXPECT_ERR(hipStreamAttachMemAsync(stream, &local, sizeof local, hipMemAttachGlobal), hipErrorInvalidValue);

  /* Argument errors. */
  void* p = NULL;
  EXPECT_ERR(hipMallocManaged(NULL, 10, hipMemAttachGlobal), hipErrorInvalidValue);
  EXPECT_ERR(hipMallocManaged(&p, 0, hipMemAttachGlobal), hipErrorInvalidValue);
  EXPECT_ERR(hipMallocManaged(&p, 10, 0xFFFF), hipErrorInvalidValue);
  EXPECT_ERR(hipMallocManaged(&p, 10, hipMemAttachSingle), hipErrorInvalidValue);
  EXPECT_ERR(hipMemAdvise(NULL, 10, hipMemAdviseSetReadMostly, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMemAdvise(a, 0, hipMemAdviseSetReadMostly, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMemAdvise(a, bytes, (hipMemoryAdvise)999, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMemAdvise(a, bytes, hipMemAdviseSetPreferredLocation, 99), hipErrorInvalidDevice);
  EXPECT_ERR(hipMemAdvise(a, bytes + 4096, hipMemAdviseSetReadMostly, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMemAdvise(d, 4096, hipMemAdviseSetReadMostly, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPrefetchAsync(NULL, 10, 0, stream), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPrefetchAsync(a, 0, 0, stream), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPrefetchAsync(a, bytes + 4096, 0, stream), hipErrorInvalidValue);
  EXPECT_ERR(hipMemPrefetchAsync(a, bytes, 99, stream), hipErrorInvalidDevice);
  EXPECT_ERR(hipMemPrefetchAsync_v2(a, bytes, device0, 1, stream), hipErrorInvalidValue);
  CHECK(hipMemPrefetchAsync(d, 4096, 0, stream));
  EXPECT_ERR(hipMemRangeGetAttribute(NULL, 4, hipMemRangeAttributeReadMostly, a, bytes), hipErrorInvalidValue);
  EXPECT_ERR(hipMemRangeGetAttribute(&value, 0, hipMemRangeAttributeReadMostly, a, bytes), hipErrorInvalidValue);
  EXPECT_ERR(hipMemRangeGetAttribute(&value, sizeof value, hipMemRangeAttributeReadMostly, a, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMemRangeGetAttribute(&value, sizeof value, hipMemRangeAttributeReadMostly, NULL, 4), hipErrorInvalidValue);
  EXPECT_ERR(hipMemRangeGetAttribute(&value, sizeof value, (hipMemRangeAttribute)77, a, bytes), hipErrorInvalidValue);
  EXPECT_ERR(hipMemRangeGetAttribute(&value, sizeof value, hipMemRangeAttributeReadMostly, d, 4096), hipErrorInvalidValue);
  EXPECT_ERR(hipMemRangeGetAttributes(data, sizes, attrs, 0, a, bytes), hipErrorInvalidValue);
  void* holes[] = {&read_mostly, NULL};
  EXPECT_ERR(hipMemRangeGetAttributes(holes, sizes, attrs, 2, a, bytes), hipErrorInvalidValue);

  /* A second allocation (attached to the host) works alongside; free both. */
  float* b;
  CHECK(hipMallocManaged((void**)&b, 3 * sizeof(float), hipMemAttachHost));
  b[2] = 1.5f;
  CHECK(hipMemcpy(&value, b + 2, sizeof(float), hipMemcpyDefault));
  float got;
  memcpy(&got, &value, sizeof got);
  REQUIRE(got == 1.5f, "second allocation read %f", got);
  CHECK(hipFree(b));
  CHECK(hipFree(a));
  EXPECT_ERR(hipFree(a), hipErrorInvalidValue);
  CHECK(hipFree(d));
  CHECK(hipEventDestroy(done));
  CHECK(hipStreamDestroy(stream));
  unsigned long long pushed_total, pulled_total;
  stats(&pushed_total, &pulled_total);
  printf("moved %llu bytes up, %llu down in all\n", pushed_total, pulled_total);
  printf("PASS managed\n");
  return 0;
}
