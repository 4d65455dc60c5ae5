/*
 * A tour of the HIP runtime the way AMD's HIP-Basic samples use it: managed memory touched by
 * the CPU and a kernel, a pitched 2D buffer filled and read back with hipMemcpy2D, stream
 * callbacks, and a device buffer shared with a second process through an IPC handle.
 *
 * Kernels are compiled at run time with hiprtc (as HIP-Basic/runtime_compilation does), so the
 * same program runs unchanged on any worker. Build:
 *   cc -std=c11 -O2 -I<include> tour.c -o tour -lhiprtc -lamdhip64 -lpthread
 * Prints "tour: correct" and exits 0 when every step checks out.
 */
#include <hip/hip_runtime.h>
#include <hip/hiprtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define HIP_CHECK(expr)                                                                    \
  do {                                                                                     \
    hipError_t e_ = (expr);                                                                \
    if (e_ != hipSuccess) {                                                                \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr,                 \
              hipGetErrorString(e_));                                                      \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

#define RTC_CHECK(expr)                                                                    \
  do {                                                                                     \
    hiprtcResult r_ = (expr);                                                              \
    if (r_ != HIPRTC_SUCCESS) {                                                            \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr,                 \
              hiprtcGetErrorString(r_));                                                   \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

static const char* KERNELS =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void scale(float* data, float factor, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) data[i] *= factor;\n"
    "}\n"
    "extern \"C\" __global__ void add_coordinates(float* image, size_t pitch, int width, int height) {\n"
    "  int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  int y = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  if (x < width && y < height) {\n"
    "    float* row = (float*)((char*)image + y * pitch);\n"
    "    row[x] += x + 1000.0f * y;\n"
    "  }\n"
    "}\n";

static hipModule_t load_kernels(void) {
  hipDeviceProp_t props;
  HIP_CHECK(hipGetDeviceProperties(&props, 0));
  hiprtcProgram prog;
  RTC_CHECK(hiprtcCreateProgram(&prog, KERNELS, "tour.hip", 0, NULL, NULL));
  char arch[300];
  snprintf(arch, sizeof arch, "--offload-arch=%s", props.gcnArchName);
  const char* opts[] = {arch};
  if (hiprtcCompileProgram(prog, 1, opts) != HIPRTC_SUCCESS) {
    size_t n = 0;
    hiprtcGetProgramLogSize(prog, &n);
    char* log = calloc(1, n + 1);
    hiprtcGetProgramLog(prog, log);
    fprintf(stderr, "compile failed:\n%s\n", log);
    exit(1);
  }
  size_t size = 0;
  RTC_CHECK(hiprtcGetCodeSize(prog, &size));
  char* code = malloc(size);
  RTC_CHECK(hiprtcGetCode(prog, code));
  RTC_CHECK(hiprtcDestroyProgram(&prog));
  hipModule_t module;
  HIP_CHECK(hipModuleLoadData(&module, code));
  free(code);
  return module;
}

/* 1. Managed memory: the CPU initialises, a kernel scales, the CPU reads after synchronising,
 * writes again, and a second kernel sees the CPU's new values. */
static void managed_memory(hipFunction_t scale) {
  const int n = 1 << 16;
  float* data;
  HIP_CHECK(hipMallocManaged((void**)&data, n * sizeof(float), hipMemAttachGlobal));
  for (int i = 0; i < n; i++) data[i] = (float)i;
  float factor = 2.0f;
  int count = n;
  void* args[] = {&data, &factor, &count};
  HIP_CHECK(hipModuleLaunchKernel(scale, (n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
  HIP_CHECK(hipDeviceSynchronize());
  for (int i = 0; i < n; i++) {
    if (data[i] != 2.0f * i) {
      fprintf(stderr, "managed[%d] = %g after the kernel, want %g\n", i, data[i], 2.0f * i);
      exit(1);
    }
  }
  for (int i = 0; i < n; i += 7) data[i] = -1.0f; /* a sparse CPU update */
  factor = 3.0f;
  HIP_CHECK(hipModuleLaunchKernel(scale, (n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
  HIP_CHECK(hipDeviceSynchronize());
  for (int i = 0; i < n; i++) {
    float want = (i % 7 == 0) ? -3.0f : 6.0f * i;
    if (data[i] != want) {
      fprintf(stderr, "managed[%d] = %g after the second kernel, want %g\n", i, data[i], want);
      exit(1);
    }
  }
  HIP_CHECK(hipFree(data));
  printf("managed memory: CPU and kernel updates seen on both sides\n");
}

/* 2. A pitched 2D image: host rows copied in with hipMemcpy2D, a 2D kernel, copied back out
 * into a host buffer with a different pitch. */
static void pitched_2d(hipFunction_t add_coordinates) {
  const int width = 333, height = 77;
  float* image;
  size_t pitch;
  HIP_CHECK(hipMallocPitch((void**)&image, &pitch, width * sizeof(float), height));
  float* host = malloc(width * height * sizeof(float));
  for (int i = 0; i < width * height; i++) host[i] = 0.5f;
  HIP_CHECK(hipMemcpy2D(image, pitch, host, width * sizeof(float), width * sizeof(float), height,
                        hipMemcpyHostToDevice));
  int w = width, h = height;
  void* args[] = {&image, &pitch, &w, &h};
  HIP_CHECK(hipModuleLaunchKernel(add_coordinates, (width + 15) / 16, (height + 15) / 16, 1, 16, 16,
                                  1, 0, NULL, args, NULL));
  const size_t out_pitch = (width + 5) * sizeof(float);
  float* out = malloc(out_pitch * height);
  memset(out, 0, out_pitch * height);
  HIP_CHECK(hipMemcpy2D(out, out_pitch, image, pitch, width * sizeof(float), height,
                        hipMemcpyDeviceToHost));
  for (int y = 0; y < height; y++) {
    const float* row = (const float*)((const char*)out + y * out_pitch);
    for (int x = 0; x < width; x++) {
      float want = 0.5f + x + 1000.0f * y;
      if (row[x] != want) {
        fprintf(stderr, "image(%d, %d) = %g, want %g\n", x, y, row[x], want);
        exit(1);
      }
    }
    for (int x = width; x < width + 5; x++) {
      if (row[x] != 0.0f) {
        fprintf(stderr, "padding (%d, %d) was written\n", x, y);
        exit(1);
      }
    }
  }
  HIP_CHECK(hipFree(image));
  free(host);
  free(out);
  printf("2D copies: %dx%d image through a %zu-byte pitch\n", width, height, pitch);
}

/* 3. Stream callbacks run in order, after the work before them, on a thread of the runtime
 * (not the one blocked in hipStreamSynchronize). */
struct callback_log {
  int order[8];
  int count;
  pthread_t caller;
  int on_caller_thread;
};

static void HIPRT_CB on_stream_done(hipStream_t stream, hipError_t status, void* user) {
  struct callback_log* log = user;
  (void)stream;
  int k = ++log->count;
  log->order[k - 1] = status == hipSuccess ? 1 : -100;
  if (pthread_equal(pthread_self(), log->caller)) log->on_caller_thread = 1;
}

static void host_function(void* user) {
  struct callback_log* log = user;
  int k = ++log->count;
  log->order[k - 1] = 2;
  if (pthread_equal(pthread_self(), log->caller)) log->on_caller_thread = 1;
}

static void callbacks(hipFunction_t scale) {
  hipStream_t stream;
  HIP_CHECK(hipStreamCreate(&stream));
  struct callback_log log = {.count = 0, .caller = pthread_self()};
  float* data;
  const int n = 1024;
  HIP_CHECK(hipMalloc((void**)&data, n * sizeof(float)));
  HIP_CHECK(hipMemsetAsync(data, 0, n * sizeof(float), stream));
  float factor = 1.0f;
  int count = n;
  void* args[] = {&data, &factor, &count};
  for (int i = 0; i < 3; i++) {
    HIP_CHECK(hipModuleLaunchKernel(scale, n / 256, 1, 1, 256, 1, 1, 0, stream, args, NULL));
    HIP_CHECK(hipStreamAddCallback(stream, on_stream_done, &log, 0));
    HIP_CHECK(hipLaunchHostFunc(stream, host_function, &log));
  }
  HIP_CHECK(hipStreamSynchronize(stream));
  if (log.count != 6) {
    fprintf(stderr, "%d callbacks ran, want 6\n", log.count);
    exit(1);
  }
  for (int i = 0; i < 6; i++) {
    /* Queued as stream callback (1), host function (2), three times over. */
    if (log.order[i] != 1 + i % 2) {
      fprintf(stderr, "call number %d was kind %d, want %d\n", i + 1, log.order[i], 1 + i % 2);
      exit(1);
    }
  }
  if (log.on_caller_thread) {
    fprintf(stderr, "a callback ran on the application's thread\n");
    exit(1);
  }
  HIP_CHECK(hipFree(data));
  HIP_CHECK(hipStreamDestroy(stream));
  printf("stream callbacks: 6 in order on a runtime thread\n");
}

/* 4. IPC: the parent exports a device buffer; a second process (forked before either touched
 * HIP, as AMD's IPC samples do) opens it, checks the parent's data and writes its own. */
#define IPC_N 4096
static int ipc_child(int from_parent, int to_parent) {
  hipIpcMemHandle_t handle;
  if (read(from_parent, &handle, sizeof handle) != sizeof handle) return 2;
  int* shared;
  HIP_CHECK(hipIpcOpenMemHandle((void**)&shared, handle, hipIpcMemLazyEnablePeerAccess));
  int* host = malloc(IPC_N * sizeof(int));
  HIP_CHECK(hipMemcpy(host, shared, IPC_N * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < IPC_N; i++) {
    if (host[i] != 3 * i) {
      fprintf(stderr, "child: shared[%d] = %d, want %d\n", i, host[i], 3 * i);
      return 1;
    }
    host[i] = -i;
  }
  HIP_CHECK(hipMemcpy(shared, host, IPC_N * sizeof(int), hipMemcpyHostToDevice));
  HIP_CHECK(hipIpcCloseMemHandle(shared));
  char done = 'k';
  if (write(to_parent, &done, 1) != 1) return 2;
  return 0;
}

static void ipc_parent(pid_t child, int to_child, int from_child) {
  int* buffer;
  HIP_CHECK(hipMalloc((void**)&buffer, IPC_N * sizeof(int)));
  int* host = malloc(IPC_N * sizeof(int));
  for (int i = 0; i < IPC_N; i++) host[i] = 3 * i;
  HIP_CHECK(hipMemcpy(buffer, host, IPC_N * sizeof(int), hipMemcpyHostToDevice));
  hipIpcMemHandle_t handle;
  HIP_CHECK(hipIpcGetMemHandle(&handle, buffer));
  if (write(to_child, &handle, sizeof handle) != sizeof handle) exit(1);
  char done = 0;
  if (read(from_child, &done, 1) != 1 || done != 'k') {
    fprintf(stderr, "the IPC child did not finish\n");
    exit(1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "the IPC child failed (status %d)\n", status);
    exit(1);
  }
  HIP_CHECK(hipMemcpy(host, buffer, IPC_N * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < IPC_N; i++) {
    if (host[i] != -i) {
      fprintf(stderr, "parent: buffer[%d] = %d after the child wrote, want %d\n", i, host[i], -i);
      exit(1);
    }
  }
  HIP_CHECK(hipFree(buffer));
  free(host);
  printf("IPC: a second process read and wrote this process's device buffer\n");
}

int main(void) {
  /* Fork first: a process must not inherit another's HIP runtime. */
  int down[2], up[2];
  if (pipe(down) != 0 || pipe(up) != 0) return 1;
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    close(down[1]);
    close(up[0]);
    _exit(ipc_child(down[0], up[1]));
  }
  close(down[0]);
  close(up[1]);

  hipModule_t module = load_kernels();
  hipFunction_t scale, add_coordinates;
  HIP_CHECK(hipModuleGetFunction(&scale, module, "scale"));
  HIP_CHECK(hipModuleGetFunction(&add_coordinates, module, "add_coordinates"));
  managed_memory(scale);
  pitched_2d(add_coordinates);
  callbacks(scale);
  ipc_parent(child, down[1], up[0]);
  HIP_CHECK(hipModuleUnload(module));
  printf("tour: correct\n");
  return 0;
}
