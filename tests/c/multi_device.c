/*
 * Several devices of one worker (run against a host worker with `--host-devices 2`):
 * hipSetDevice is per thread and chooses the worker device; hiprtc compiles, and modules load,
 * for the calling thread's current device, and their kernels run there, leaving device 0's
 * memory alone; hipMemcpyPeer / hipMemcpyPeerAsync copy both ways; hipDeviceCanAccessPeer,
 * hipDeviceEnablePeerAccess and hipDeviceDisablePeerAccess answer with ROCm's codes.
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

/* On its own thread: device 1 chosen here only. */
static void* on_device_1(void* arg) {
  int* dev0_buffer = arg;
  int cur = -1;
  CHECK(hipGetDevice(&cur));
  REQUIRE(cur == 0, "a new thread starts on device %d, expected 0", cur);
  CHECK(hipSetDevice(1));

  char* code = compile();
  hipModule_t module;
  hipFunction_t fill;
  CHECK(hipModuleLoadData(&module, code));
  free(code);
  CHECK(hipModuleGetFunction(&fill, module, "fill"));
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
  per_device_modules();
  printf("PASS multi_device\n");
  return 0;
}
