/*
 * Several devices of one worker (run against a host worker with `--host-devices 2`):
 * hipSetDevice is per thread and chooses the worker device; hiprtc compiles, and modules load,
 * for the calling thread's current device, and their kernels run there, leaving device 0's
 * memory alone; hipMemcpyPeer / hipMemcpyPeerAsync copy both ways; hipDeviceCanAccessPeer,
 * hipDeviceEnablePeerAccess and hipDeviceDisablePeerAccess answer with ROCm's codes;
 * hipMemPoolSetAccess grants device 1 access to a device-0 pool, whose memory a kernel on
 * device 1 then reads; after hipDeviceEnablePeerAccess a kernel on device 1 reads and writes
 * device 0's hipMalloc memory; hipMemcpyAsync (kind Default) between devices on the null stream
 * runs in order with the null streams of both, whichever peer access was enabled (CuPy's copy
 * between devices).
 */
#include "check.h"

#include <hip/hiprtc.h>
#include <pthread.h>

#define N 1024
#define UNTOUCHED 0x5a

static const char* SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "__device__ int bias;\n"
    "extern \"C\" __global__ void fill(int* out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = i + bias;\n"
    "}\n"
    "extern \"C\" __global__ void scaled_copy(int* out, const int* in, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = 2 * in[i] + 1;\n"
    "}\n";

#define RTC_CHECK(expr)                                                                       \
  do {                                                                                        \
    hiprtcResult r_ = (expr);                                                                 \
    if (r_ != HIPRTC_SUCCESS) {                                                               \
      printf("FAIL %s:%d: %s returned %s\n", __FILE__, __LINE__, #expr, hiprtcGetErrorString(r_)); \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)

static int device_of(const void* ptr) {
  hipPointerAttribute_t attr;
  CHECK(hipPointerGetAttributes(&attr, ptr));
  return attr.device;
}

static void peers(void) {
  step("peer queries");
  int can = -1;
  CHECK(hipDeviceCanAccessPeer(&can, 0, 1));
  REQUIRE(can == 1, "device 0 cannot access device 1 (%d)", can);
  CHECK(hipDeviceCanAccessPeer(&can, 1, 0));
  REQUIRE(can == 1, "device 1 cannot access device 0 (%d)", can);
  CHECK(hipDeviceCanAccessPeer(&can, 1, 1));
  REQUIRE(can == 0, "a device is its own peer (%d)", can);
  EXPECT_ERR(hipDeviceCanAccessPeer(&can, 0, 2), hipErrorInvalidDevice);

  step("hipDeviceEnablePeerAccess / hipDeviceDisablePeerAccess");
  CHECK(hipSetDevice(0));
  EXPECT_ERR(hipDeviceEnablePeerAccess(1, 1), hipErrorInvalidValue);
  EXPECT_ERR(hipDeviceEnablePeerAccess(0, 0), hipErrorInvalidDevice);
  EXPECT_ERR(hipDeviceEnablePeerAccess(2, 0), hipErrorInvalidDevice);
  EXPECT_ERR(hipDeviceEnablePeerAccess(-1, 0), hipErrorInvalidDevice);
  EXPECT_ERR(hipDeviceDisablePeerAccess(1), hipErrorPeerAccessNotEnabled);
  CHECK(hipDeviceEnablePeerAccess(1, 0));
  EXPECT_ERR(hipDeviceEnablePeerAccess(1, 0), hipErrorPeerAccessAlreadyEnabled);
  /* Per current device: device 1's access to device 0 is a pair of its own. */
  CHECK(hipSetDevice(1));
  EXPECT_ERR(hipDeviceDisablePeerAccess(0), hipErrorPeerAccessNotEnabled);
  CHECK(hipDeviceEnablePeerAccess(0, 0));
  CHECK(hipDeviceDisablePeerAccess(0));
  CHECK(hipSetDevice(0));
  CHECK(hipDeviceDisablePeerAccess(1));
  EXPECT_ERR(hipDeviceDisablePeerAccess(1), hipErrorPeerAccessNotEnabled);
  EXPECT_ERR(hipDeviceDisablePeerAccess(5), hipErrorInvalidDevice);
}

static void peer_copies(void) {
  step("hipMemcpyPeer / hipMemcpyPeerAsync both ways");
  static int host[N], back[N];
  for (int i = 0; i < N; i++) host[i] = 3 * i + 1;
  int *on0, *on1;
  CHECK(hipSetDevice(0));
  CHECK(hipMalloc((void**)&on0, sizeof host));
  CHECK(hipSetDevice(1));
  CHECK(hipMalloc((void**)&on1, sizeof host));
  REQUIRE(device_of(on0) == 0 && device_of(on1) == 1, "allocations on devices %d and %d", device_of(on0), device_of(on1));

  CHECK(hipMemcpy(on0, host, sizeof host, hipMemcpyHostToDevice));
  CHECK(hipMemset(on1, 0, sizeof host));
  CHECK(hipMemcpyPeer(on1, 1, on0, 0, sizeof host));
  CHECK(hipMemcpy(back, on1, sizeof back, hipMemcpyDeviceToHost));
  REQUIRE(memcmp(back, host, sizeof host) == 0, "device 0 -> 1 copy differs");

  /* Back the other way, on a stream of device 1, half of it. */
  CHECK(hipSetDevice(0));
  CHECK(hipMemset(on0, 0, sizeof host));
  CHECK(hipSetDevice(1));
  hipStream_t stream;
  CHECK(hipStreamCreate(&stream));
  CHECK(hipMemcpyPeerAsync(on0, 0, on1 + N / 2, 1, sizeof host / 2, stream));
  CHECK(hipStreamSynchronize(stream));
  CHECK(hipMemcpy(back, on0, sizeof back, hipMemcpyDeviceToHost));
  REQUIRE(memcmp(back, host + N / 2, sizeof host / 2) == 0, "device 1 -> 0 copy differs");
  for (int i = N / 2; i < N; i++) REQUIRE(back[i] == 0, "byte past the async copy written at %d", i);

  EXPECT_ERR(hipMemcpyPeer(on1, 2, on0, 0, 4), hipErrorInvalidDevice);
  EXPECT_ERR(hipMemcpyPeer(on1, 1, on0, -1, 4), hipErrorInvalidDevice);
  CHECK(hipStreamDestroy(stream));
  CHECK(hipFree(on0));
  CHECK(hipFree(on1));
}

/* Compiles SOURCE with hiprtc, on the worker, for the calling thread's current device. */
static char* compile(void) {
  hiprtcProgram prog;
  RTC_CHECK(hiprtcCreateProgram(&prog, SOURCE, "fill.hip", 0, NULL, NULL));
  hiprtcResult compiled = hiprtcCompileProgram(prog, 0, NULL);
  if (compiled != HIPRTC_SUCCESS) {
    size_t log_size = 0;
    RTC_CHECK(hiprtcGetProgramLogSize(prog, &log_size));
    char* log = malloc(log_size + 1);
    RTC_CHECK(hiprtcGetProgramLog(prog, log));
    printf("FAIL compile: %s\n%s\n", hiprtcGetErrorString(compiled), log);
    exit(1);
  }
  size_t size = 0;
  RTC_CHECK(hiprtcGetCodeSize(prog, &size));
  char* code = malloc(size);
  RTC_CHECK(hiprtcGetCode(prog, code));
  RTC_CHECK(hiprtcDestroyProgram(&prog));
  return code;
}

/* Compiles SOURCE for the calling thread's current device and loads it; `*out` gets the module,
 * the result is its kernel `name`. */
static hipFunction_t load_kernel(hipModule_t* out, const char* name) {
  char* code = compile();
  CHECK(hipModuleLoadData(out, code));
  free(code);
  hipFunction_t kernel;
  CHECK(hipModuleGetFunction(&kernel, *out, name));
  return kernel;
}

/* On its own thread: device 1 chosen here only. */
static void* on_device_1(void* arg) {
  int* dev0_buffer = arg;
  int cur = -1;
  CHECK(hipGetDevice(&cur));
  REQUIRE(cur == 0, "a new thread starts on device %d, expected 0", cur);
  CHECK(hipSetDevice(1));

  hipModule_t module;
  hipFunction_t fill = load_kernel(&module, "fill");
  hipDeviceptr_t bias;
  size_t bias_size = 0;
  CHECK(hipModuleGetGlobal(&bias, &bias_size, module, "bias"));
  REQUIRE(bias_size == sizeof(int), "bias is %zu bytes", bias_size);
  REQUIRE(device_of((void*)bias) == 1, "the module's global is on device %d, expected 1", device_of((void*)bias));
  int seven = 7;
  CHECK(hipMemcpyHtoD(bias, &seven, sizeof seven));

  int* out;
  CHECK(hipMalloc((void**)&out, N * sizeof(int)));
  int n = N;
  void* params[] = {&out, &n};
  /* The null stream: the module's device's. */
  CHECK(hipModuleLaunchKernel(fill, N / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
  CHECK(hipDeviceSynchronize());
  static int result[N];
  CHECK(hipMemcpy(result, out, sizeof result, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(result[i] == i + 7, "out[%d] = %d, expected %d", i, result[i], i + 7);

  /* The kernel wrote device 1's buffer only. */
  static int seen[N];
  CHECK(hipMemcpy(seen, dev0_buffer, sizeof seen, hipMemcpyDeviceToHost));
  const unsigned char* bytes = (const unsigned char*)seen;
  for (size_t i = 0; i < sizeof seen; i++) REQUIRE(bytes[i] == UNTOUCHED, "device 0's byte %zu became %#x", i, bytes[i]);

  CHECK(hipFree(out));
  CHECK(hipModuleUnload(module));
  CHECK(hipGetDevice(&cur));
  REQUIRE(cur == 1, "the thread's device changed to %d", cur);
  return NULL;
}

/* hipMemPoolSetAccess with ROCm 7's answers, then a kernel on device 1 reading memory of a
 * device-0 pool it was granted (on a GPU the grant is what maps it: peer access of the
 * contexts does not cover stream-ordered pools). */
static void pool_access(void) {
  step("hipMemPoolSetAccess / hipMemPoolGetAccess; device 1 reads device 0's pool memory");
  int count = 0;
  CHECK(hipGetDeviceCount(&count));
  CHECK(hipSetDevice(0));
  hipMemPoolProps props;
  memset(&props, 0, sizeof props);
  props.allocType = hipMemAllocationTypePinned;
  props.location.type = hipMemLocationTypeDevice;
  props.location.id = 0;
  hipMemPool_t pool;
  CHECK(hipMemPoolCreate(&pool, &props));

  hipMemLocation own = {hipMemLocationTypeDevice, 0}, peer = {hipMemLocationTypeDevice, 1};
  hipMemAccessFlags flags = (hipMemAccessFlags)-1;
  CHECK(hipMemPoolGetAccess(&flags, pool, &own));
  REQUIRE(flags == hipMemAccessFlagsProtReadWrite, "the pool's own device has access %d", (int)flags);
  CHECK(hipMemPoolGetAccess(&flags, pool, &peer));
  REQUIRE(flags == hipMemAccessFlagsProtNone, "device 1 starts with access %d", (int)flags);
  hipMemLocation beyond = {hipMemLocationTypeDevice, count};
  EXPECT_ERR(hipMemPoolGetAccess(&flags, pool, &beyond), hipErrorInvalidValue);

  /* ROCm 7's refusals (clr hipMemPoolSetAccess): revoking and a device out of range are
   * invalid devices, an unknown flag or a non-device location invalid values, and more
   * descriptors than devices an invalid device. */
  hipMemAccessDesc desc = {peer, hipMemAccessFlagsProtNone};
  EXPECT_ERR(hipMemPoolSetAccess(pool, &desc, 1), hipErrorInvalidDevice);
  desc.flags = (hipMemAccessFlags)4;
  EXPECT_ERR(hipMemPoolSetAccess(pool, &desc, 1), hipErrorInvalidValue);
  desc.location = beyond;
  desc.flags = hipMemAccessFlagsProtReadWrite;
  EXPECT_ERR(hipMemPoolSetAccess(pool, &desc, 1), hipErrorInvalidDevice);
  desc.location.type = hipMemLocationTypeHost;
  desc.location.id = 0;
  EXPECT_ERR(hipMemPoolSetAccess(pool, &desc, 1), hipErrorInvalidValue);
  hipMemAccessDesc too_many[8];
  REQUIRE(count < 8, "%d devices", count);
  for (int i = 0; i <= count; i++) too_many[i] = (hipMemAccessDesc){peer, hipMemAccessFlagsProtReadWrite};
  EXPECT_ERR(hipMemPoolSetAccess(pool, too_many, (size_t)count + 1), hipErrorInvalidDevice);
  CHECK(hipMemPoolGetAccess(&flags, pool, &peer));
  REQUIRE(flags == hipMemAccessFlagsProtNone, "refused calls left device 1 with access %d", (int)flags);
  /* The pool's own device keeps read-write, whatever it is given. */
  desc = (hipMemAccessDesc){own, hipMemAccessFlagsProtRead};
  CHECK(hipMemPoolSetAccess(pool, &desc, 1));
  CHECK(hipMemPoolGetAccess(&flags, pool, &own));
  REQUIRE(flags == hipMemAccessFlagsProtReadWrite, "the pool's own device now has access %d", (int)flags);

  /* Device 0's pool memory, filled on device 0. */
  static int host[N], back[N];
  for (int i = 0; i < N; i++) host[i] = 5 * i - 3;
  hipStream_t s0;
  CHECK(hipStreamCreate(&s0));
  int* pooled = NULL;
  CHECK(hipMallocFromPoolAsync((void**)&pooled, sizeof host, pool, s0));
  CHECK(hipMemcpyAsync(pooled, host, sizeof host, hipMemcpyHostToDevice, s0));
  CHECK(hipStreamSynchronize(s0));

  desc = (hipMemAccessDesc){peer, hipMemAccessFlagsProtReadWrite};
  CHECK(hipMemPoolSetAccess(pool, &desc, 1));
  CHECK(hipMemPoolGetAccess(&flags, pool, &peer));
  REQUIRE(flags == hipMemAccessFlagsProtReadWrite, "device 1's access reads back as %d", (int)flags);

  /* A kernel on device 1 reads it. */
  CHECK(hipSetDevice(1));
  hipModule_t module;
  hipFunction_t scaled_copy = load_kernel(&module, "scaled_copy");
  int* out;
  CHECK(hipMalloc((void**)&out, sizeof back));
  int n = N;
  void* params[] = {&out, &pooled, &n};
  CHECK(hipModuleLaunchKernel(scaled_copy, N / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
  CHECK(hipDeviceSynchronize());
  CHECK(hipMemcpy(back, out, sizeof back, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(back[i] == 2 * host[i] + 1, "device 1 read %d at %d of device 0's pool memory, expected %d", back[i], i, 2 * host[i] + 1);
  CHECK(hipFree(out));
  CHECK(hipModuleUnload(module));

  CHECK(hipSetDevice(0));
  CHECK(hipFreeAsync(pooled, s0));
  CHECK(hipStreamSynchronize(s0));
  CHECK(hipStreamDestroy(s0));
  CHECK(hipMemPoolDestroy(pool));
}

/* hipDeviceEnablePeerAccess, then a kernel on device 1 reading and writing device 0's
 * hipMalloc memory through its device-0 pointer (on a GPU: over the peer mapping that the
 * enable made; without it the access faults). */
static void peer_kernel(void) {
  step("a kernel on device 1 reads and writes device 0's memory after peer access");
  static int host[N], back[N];
  for (int i = 0; i < N; i++) host[i] = 3 * i + 11;
  CHECK(hipSetDevice(0));
  int *in0, *out0;
  CHECK(hipMalloc((void**)&in0, sizeof host));
  CHECK(hipMalloc((void**)&out0, sizeof host));
  CHECK(hipMemcpy(in0, host, sizeof host, hipMemcpyHostToDevice));
  CHECK(hipMemset(out0, 0, sizeof host));

  CHECK(hipSetDevice(1));
  int can = 0;
  CHECK(hipDeviceCanAccessPeer(&can, 1, 0));
  REQUIRE(can == 1, "device 1 cannot access device 0 (%d)", can);
  CHECK(hipDeviceEnablePeerAccess(0, 0));
  hipModule_t module;
  hipFunction_t scaled_copy = load_kernel(&module, "scaled_copy");
  int n = N;
  void* params[] = {&out0, &in0, &n};
  CHECK(hipModuleLaunchKernel(scaled_copy, N / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
  CHECK(hipDeviceSynchronize());
  CHECK(hipModuleUnload(module));
  CHECK(hipDeviceDisablePeerAccess(0));

  CHECK(hipSetDevice(0));
  CHECK(hipMemcpy(back, out0, sizeof back, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++)
    REQUIRE(back[i] == 2 * host[i] + 1, "device 1's kernel left %d at %d of device 0's memory, expected %d", back[i], i, 2 * host[i] + 1);
  CHECK(hipFree(in0));
  CHECK(hipFree(out0));
}

/* CuPy's ndarray.copy() to another device (cupy/_core/core.pyx on HIP): with the source
 * device current, peer access for (source, destination), hipMemcpyAsync kind Default on the
 * null stream, an event recorded there, which the destination device's null stream waits
 * for before a kernel there. Only the source device may access the destination: the copy
 * must not need the reverse. Then back the other way, and the ordering of such a copy with
 * work queued before it on the source's null stream, held by a stream wait. */
static void default_copies_between_devices(void) {
  step("hipMemcpyAsync kind Default between devices on the null stream, as CuPy copies");
  static int host[N], back[N];
  for (int i = 0; i < N; i++) host[i] = 5 * i - 7;
  int *a0, *b1, *c0, *gate0;
  CHECK(hipSetDevice(0));
  CHECK(hipMalloc((void**)&a0, sizeof host));
  CHECK(hipMalloc((void**)&c0, sizeof host));
  CHECK(hipMalloc((void**)&gate0, sizeof(int)));
  CHECK(hipMemcpyAsync(a0, host, sizeof host, hipMemcpyHostToDevice, NULL));
  CHECK(hipSetDevice(1));
  CHECK(hipMalloc((void**)&b1, sizeof host));

  /* Device 0 -> 1, queued on device 0 (CuPy: "a stream attached to the source's device"). */
  CHECK(hipSetDevice(0));
  int can = 0;
  CHECK(hipDeviceCanAccessPeer(&can, 0, 1));
  REQUIRE(can == 1, "device 0 cannot access device 1 (%d)", can);
  hipError_t enabled = hipDeviceEnablePeerAccess(1, 0);
  REQUIRE(enabled == hipSuccess || enabled == hipErrorPeerAccessAlreadyEnabled, "hipDeviceEnablePeerAccess(1) returned %s", hipGetErrorName(enabled));
  (void)hipGetLastError();
  CHECK(hipMemcpyAsync(b1, a0, sizeof host, hipMemcpyDefault, NULL));
  hipEvent_t copied;
  CHECK(hipEventCreateWithFlags(&copied, hipEventDisableTiming));
  CHECK(hipEventRecord(copied, NULL));
  CHECK(hipSetDevice(1));
  CHECK(hipStreamWaitEvent(NULL, copied, 0));
  hipModule_t module;
  hipFunction_t scaled_copy = load_kernel(&module, "scaled_copy");
  int n = N;
  void* params[] = {&b1, &b1, &n};
  CHECK(hipModuleLaunchKernel(scaled_copy, N / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
  CHECK(hipMemcpyAsync(back, b1, sizeof back, hipMemcpyDeviceToHost, NULL));
  CHECK(hipStreamSynchronize(NULL));
  for (int i = 0; i < N; i++) REQUIRE(back[i] == 2 * host[i] + 1, "device 1 holds %d at %d after the copy and kernel, expected %d", back[i], i, 2 * host[i] + 1);

  /* Device 1 -> 0 with device 1 current, its peer access enabled for device 0 only now. */
  enabled = hipDeviceEnablePeerAccess(0, 0);
  REQUIRE(enabled == hipSuccess || enabled == hipErrorPeerAccessAlreadyEnabled, "hipDeviceEnablePeerAccess(0) returned %s", hipGetErrorName(enabled));
  (void)hipGetLastError();
  CHECK(hipMemcpyAsync(c0, b1, sizeof host, hipMemcpyDefault, NULL));
  CHECK(hipSetDevice(0));
  CHECK(hipMemcpy(back, c0, sizeof back, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(back[i] == 2 * host[i] + 1, "device 0 got %d at %d from device 1, expected %d", back[i], i, 2 * host[i] + 1);

  step("a copy between devices on the null stream waits for the source device's null stream");
  /* Device 0's null stream held by a wait on gate0; a memset queued behind it, then the copy
   * to device 1 with device 0 current: in HIP the copy is on device 0's null stream, after
   * the memset. The gate opens from a non-blocking stream (not ordered after the null one). */
  CHECK(hipMemset(gate0, 0, sizeof(int)));
  CHECK(hipDeviceSynchronize());
  CHECK(hipStreamWaitValue32(NULL, gate0, 1, hipStreamWaitValueEq, 0xffffffff));
  CHECK(hipMemsetD32Async((hipDeviceptr_t)a0, 0x1234, N, NULL));
  CHECK(hipMemcpyAsync(b1, a0, sizeof host, hipMemcpyDefault, NULL));
  hipStream_t opener;
  CHECK(hipStreamCreateWithFlags(&opener, hipStreamNonBlocking));
  CHECK(hipMemsetD32Async((hipDeviceptr_t)gate0, 1, 1, opener));
  CHECK(hipStreamSynchronize(opener));
  CHECK(hipStreamSynchronize(NULL));
  CHECK(hipSetDevice(1));
  CHECK(hipMemcpy(back, b1, sizeof back, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(back[i] == 0x1234, "the copy ran before the source's earlier null-stream work: %d at %d", back[i], i);

  step("later work on the source device's null stream waits for a copy between devices");
  /* Device 1's null stream held; the copy from device 0 (current) then a memset of its
   * source on device 0's null stream, which in HIP runs after the copy. */
  int* gate1;
  CHECK(hipSetDevice(1));
  CHECK(hipMalloc((void**)&gate1, sizeof(int)));
  CHECK(hipMemset(gate1, 0, sizeof(int)));
  CHECK(hipDeviceSynchronize());
  CHECK(hipStreamWaitValue32(NULL, gate1, 1, hipStreamWaitValueEq, 0xffffffff));
  CHECK(hipSetDevice(0));
  CHECK(hipMemcpyAsync(b1, a0, sizeof host, hipMemcpyDefault, NULL));
  CHECK(hipMemsetD32Async((hipDeviceptr_t)a0, 0x5678, N, NULL));
  CHECK(hipSetDevice(1));
  hipStream_t opener1;
  CHECK(hipStreamCreateWithFlags(&opener1, hipStreamNonBlocking));
  CHECK(hipMemsetD32Async((hipDeviceptr_t)gate1, 1, 1, opener1));
  CHECK(hipStreamSynchronize(opener1));
  CHECK(hipStreamDestroy(opener1));
  CHECK(hipStreamSynchronize(NULL));
  CHECK(hipMemcpy(back, b1, sizeof back, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(back[i] == 0x1234, "the source's later null-stream work ran before the copy: %#x at %d", back[i], i);
  CHECK(hipFree(gate1));
  CHECK(hipSetDevice(0));

  step("hipMemcpy2DAsync between devices on the null stream, after the source's earlier work");
  /* Rows of 64 ints from device 0 (pitch 256 ints) into device 1 (pitch 128 ints), behind a
   * memset held on device 0's null stream, as in the 1D case above. */
  enum { ROWS = 4, WIDTH = 64, SRC_PITCH = 256, DST_PITCH = 128 };
  REQUIRE(ROWS * SRC_PITCH <= N && ROWS * DST_PITCH <= N, "2D copy larger than the buffers");
  CHECK(hipMemset(gate0, 0, sizeof(int)));
  CHECK(hipSetDevice(1));
  CHECK(hipMemset(b1, 0, sizeof host));
  CHECK(hipSetDevice(0));
  CHECK(hipDeviceSynchronize());
  CHECK(hipStreamWaitValue32(NULL, gate0, 1, hipStreamWaitValueEq, 0xffffffff));
  CHECK(hipMemsetD32Async((hipDeviceptr_t)a0, 0x2d2d, N, NULL));
  CHECK(hipMemcpy2DAsync(b1, DST_PITCH * sizeof(int), a0, SRC_PITCH * sizeof(int), WIDTH * sizeof(int), ROWS, hipMemcpyDefault, NULL));
  CHECK(hipMemsetD32Async((hipDeviceptr_t)gate0, 1, 1, opener));
  CHECK(hipStreamSynchronize(opener));
  CHECK(hipStreamSynchronize(NULL));
  CHECK(hipSetDevice(1));
  CHECK(hipMemcpy(back, b1, sizeof back, hipMemcpyDeviceToHost));
  for (int r = 0; r < ROWS; r++)
    for (int x = 0; x < DST_PITCH; x++) {
      int want = x < WIDTH ? 0x2d2d : 0;
      REQUIRE(back[r * DST_PITCH + x] == want, "2D copy: %#x at row %d, column %d, expected %#x", back[r * DST_PITCH + x], r, x, want);
    }
  CHECK(hipSetDevice(0));

  CHECK(hipStreamDestroy(opener));
  CHECK(hipEventDestroy(copied));
  CHECK(hipModuleUnload(module));
  CHECK(hipDeviceDisablePeerAccess(1));
  CHECK(hipSetDevice(1));
  CHECK(hipDeviceDisablePeerAccess(0));
  CHECK(hipSetDevice(0));
  CHECK(hipFree(a0));
  CHECK(hipFree(c0));
  CHECK(hipFree(gate0));
  CHECK(hipFree(b1));
}

static void per_device_modules(void) {
  step("hiprtc + module + launch on device 1 (its own thread), device 0 untouched");
  CHECK(hipSetDevice(0));
  int* dev0_buffer;
  CHECK(hipMalloc((void**)&dev0_buffer, N * sizeof(int)));
  CHECK(hipMemset(dev0_buffer, UNTOUCHED, N * sizeof(int)));
  CHECK(hipDeviceSynchronize());
  pthread_t thread;
  REQUIRE(pthread_create(&thread, NULL, on_device_1, dev0_buffer) == 0, "pthread_create");
  REQUIRE(pthread_join(thread, NULL) == 0, "pthread_join");
  int cur = -1;
  CHECK(hipGetDevice(&cur));
  REQUIRE(cur == 0, "another thread's hipSetDevice moved this thread to device %d", cur);

  /* A module loaded here, on device 0, has its global on device 0. */
  char* code = compile();
  hipModule_t module;
  CHECK(hipModuleLoadData(&module, code));
  free(code);
  hipDeviceptr_t bias;
  size_t bias_size = 0;
  CHECK(hipModuleGetGlobal(&bias, &bias_size, module, "bias"));
  REQUIRE(device_of((void*)bias) == 0, "device 0's module global is on device %d", device_of((void*)bias));
  CHECK(hipModuleUnload(module));
  CHECK(hipFree(dev0_buffer));
}

int main(void) {
  begin("multi_device");
  int count = 0;
  CHECK(hipGetDeviceCount(&count));
  REQUIRE(count >= 2, "the worker serves %d device(s); this program needs 2", count);
  peers();
  peer_copies();
  pool_access();
  peer_kernel();
  default_copies_between_devices();
  per_device_modules();
  printf("PASS multi_device\n");
  return 0;
}
