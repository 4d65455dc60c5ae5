/*
 * Several workers as one device list (HIP_REMOTE_WORKER=a,b): run by tests/multi_worker.rs
 * against worker A emulating two devices and worker B emulating one, each with its own memory
 * size, so each device's total memory says which worker answered for it.
 *
 *   multi_worker W:MIB ...       the device list: per device, its worker (a letter) and its memory
 *                                size in MiB (0: not checked, as on GPUs; scripts/device-multi-worker.sh)
 *   multi_worker hold DEV        allocates on device 0 and DEV, prints READY, waits for a line
 *                                (the test kills DEV's worker), then checks that device 0
 *                                still works and DEV fails
 *   multi_worker copies          copies between device 0 and the last device, of two workers
 *                                that may dial each other (--dial-workers): both ways, sync
 *                                and async, verified against a pattern; ordered after another
 *                                worker's event; prints what went worker to worker, what was
 *                                uploaded, and what this process sent over TCP
 *   multi_worker bench MIB ROUNDS  the bandwidth of copies between the two workers, both ways,
 *                                against a device-to-device copy within the first worker
 */
#include "check.h"
#include "rtc_module.h"

#include <hip/hiprtc.h>

#ifdef __linux__
#include <linux/tcp.h> /* TCP_INFO's tcpi_bytes_acked: the CLIENT_SENT proof, Linux only */
#endif
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#define N 1024
#define MAX_DEVICES 8

static const char* SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "__device__ int bias;\n"
    "extern \"C\" __global__ void fill(int* out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = i + bias;\n"
    "}\n"
    "extern \"C\" __global__ void spin_then_mark(volatile int* mark, long rounds) {\n"
    "  long acc = 0;\n"
    "  for (long k = 0; k < rounds; k++) acc += k ^ mark[1];\n"
    "  mark[0] = 1 + (int)(acc & 0);\n"
    "}\n";

/* Compiles SOURCE on the worker of the calling thread's current device and loads it there. */
static hipModule_t load_module(void) { return rtc_module(SOURCE, "multi_worker.hip", NULL); }

static int device_of(const void* ptr) {
  hipPointerAttribute_t attr;
  CHECK(hipPointerGetAttributes(&attr, ptr));
  return attr.device;
}

static int count;
static size_t expected_mib[MAX_DEVICES];
/* The worker of each device, as the test says: devices of one worker are peers, others not. */
static char worker_of[MAX_DEVICES];
static int* buffers[MAX_DEVICES];
static int host[MAX_DEVICES][N];

static void device_list(void) {
  step("device count and properties: each device answered by its own worker");
  CHECK(hipGetDeviceCount(&count));
  for (int d = 0; d < count; d++) {
    hipDeviceProp_t prop;
    CHECK(hipGetDeviceProperties(&prop, d));
    size_t want = expected_mib[d] ? expected_mib[d] << 20 : prop.totalGlobalMem;
    REQUIRE(prop.totalGlobalMem == want, "device %d has %zu bytes, expected %zu MiB", d, prop.totalGlobalMem, expected_mib[d]);
    size_t total = 0;
    CHECK(hipDeviceTotalMem(&total, d));
    REQUIRE(total == want, "hipDeviceTotalMem(%d) = %zu", d, total);
    /* hipMemGetInfo asks the current device's worker. */
    CHECK(hipSetDevice(d));
    size_t free_bytes = 0;
    CHECK(hipMemGetInfo(&free_bytes, &total));
    REQUIRE(total == want, "hipMemGetInfo on device %d: total %zu", d, total);
    int cur = -1;
    CHECK(hipGetDevice(&cur));
    REQUIRE(cur == d, "hipGetDevice = %d after hipSetDevice(%d)", cur, d);
  }
  hipDeviceProp_t prop;
  EXPECT_ERR(hipGetDeviceProperties(&prop, count), hipErrorInvalidDevice);
  EXPECT_ERR(hipSetDevice(count), hipErrorInvalidDevice);
}

static void memory(void) {
  step("memory on each device, read back with another device current");
  for (int d = 0; d < count; d++) {
    CHECK(hipSetDevice(d));
    CHECK(hipMalloc((void**)&buffers[d], sizeof host[d]));
    for (int i = 0; i < N; i++) host[d][i] = d * 100000 + i;
    CHECK(hipMemcpy(buffers[d], host[d], sizeof host[d], hipMemcpyHostToDevice));
  }
  for (int d = 0; d < count; d++)
    for (int e = 0; e < d; e++)
      REQUIRE(buffers[d] != buffers[e], "devices %d and %d were given the same address %p", d, e, (void*)buffers[d]);
  /* A pointer names its worker whatever the current device. */
  CHECK(hipSetDevice(0));
  for (int d = count - 1; d >= 0; d--) {
    static int back[N];
    memset(back, 0, sizeof back);
    CHECK(hipMemcpy(back, buffers[d], sizeof back, hipMemcpyDefault));
    REQUIRE(memcmp(back, host[d], sizeof back) == 0, "device %d's buffer differs", d);
    REQUIRE(device_of(buffers[d]) == d, "buffer of device %d reported on device %d", d, device_of(buffers[d]));
  }
  /* 2D copies routed by their device pointer: rows of 16 ints, pitch 32 ints. */
  CHECK(hipMemcpy2D(buffers[count - 1], 32 * sizeof(int), host[0], 16 * sizeof(int), 16 * sizeof(int), 4, hipMemcpyHostToDevice));
  static int rows[4][16];
  CHECK(hipMemcpy2D(rows, 16 * sizeof(int), buffers[count - 1], 32 * sizeof(int), 16 * sizeof(int), 4, hipMemcpyDeviceToHost));
  REQUIRE(memcmp(rows, host[0], sizeof rows) == 0, "2D round trip on the last device differs");
  CHECK(hipMemcpy(buffers[count - 1], host[count - 1], sizeof host[count - 1], hipMemcpyHostToDevice));
  /* A memset routed by its pointer. */
  CHECK(hipMemset(buffers[count - 1], 0x11, 16));
  static int back[N];
  CHECK(hipMemcpy(back, buffers[count - 1], sizeof back, hipMemcpyDeviceToHost));
  REQUIRE(back[0] == 0x11111111 && back[4] == host[count - 1][4], "memset on the last device: %#x %d", back[0], back[4]);
  memcpy(host[count - 1], back, sizeof back);
}

static void kernels(void) {
  step("a kernel on each device, launched with another device current");
  hipModule_t modules[MAX_DEVICES];
  hipFunction_t fills[MAX_DEVICES];
  for (int d = 0; d < count; d++) {
    CHECK(hipSetDevice(d));
    modules[d] = load_module();
    CHECK(hipModuleGetFunction(&fills[d], modules[d], "fill"));
    hipDeviceptr_t bias;
    size_t bias_size = 0;
    CHECK(hipModuleGetGlobal(&bias, &bias_size, modules[d], "bias"));
    REQUIRE(device_of((void*)bias) == d, "device %d's module global is on device %d", d, device_of((void*)bias));
    int value = 1000 * (d + 1);
    CHECK(hipMemcpyHtoD(bias, &value, sizeof value));
  }
  CHECK(hipSetDevice(0));
  for (int d = 0; d < count; d++) {
    int n = N;
    void* params[] = {&buffers[d], &n};
    CHECK(hipModuleLaunchKernel(fills[d], N / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
  }
  for (int d = 0; d < count; d++) {
    CHECK(hipSetDevice(d));
    CHECK(hipDeviceSynchronize());
    static int out[N];
    CHECK(hipMemcpy(out, buffers[d], sizeof out, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) REQUIRE(out[i] == i + 1000 * (d + 1), "device %d: out[%d] = %d", d, i, out[i]);
  }
  for (int d = 0; d < count; d++) CHECK(hipModuleUnload(modules[d]));
}

/* SOURCE compiled on the worker of the current device: its code object (malloc'd). */
static char* compile_code(void) { return rtc_code(SOURCE, "multi_worker_lib.hip", NULL); }

/* Fills the last device's buffer through `f` (launched with device `current` current) and
 * checks it: out[i] = i + bias, bias being what the module's global holds there. */
static void launch_fill(hipFunction_t f, int current, int bias, const char* what) {
  int last = count - 1;
  CHECK(hipSetDevice(current));
  int n = N;
  void* params[] = {&buffers[last], &n};
  CHECK(hipModuleLaunchKernel(f, N / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
  CHECK(hipSetDevice(last));
  CHECK(hipDeviceSynchronize());
  static int out[N];
  CHECK(hipMemcpy(out, buffers[last], sizeof out, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(out[i] == i + bias, "%s: out[%d] = %d, want %d", what, i, out[i], i + bias);
}

static void modules_per_worker(void) {
  step("modules, libraries and link states belong to their worker, whatever the current device");
  int last = count - 1;
  /* A library on the first worker, a module on the other. */
  CHECK(hipSetDevice(0));
  char* code = compile_code();
  hipLibrary_t lib;
  CHECK(hipLibraryLoadData(&lib, code, NULL, NULL, 0, NULL, NULL, 0));
  CHECK(hipSetDevice(last));
  hipModule_t module = load_module();
  REQUIRE((void*)module != (void*)lib, "the two workers' first handles are one value %p", (void*)module);

  /* The other worker's module, named with device 0 current: found in its own worker's tables. */
  CHECK(hipSetDevice(0));
  hipFunction_t fill;
  CHECK(hipModuleGetFunction(&fill, module, "fill"));
  hipDeviceptr_t bias;
  size_t bias_size = 0;
  CHECK(hipModuleGetGlobal(&bias, &bias_size, module, "bias"));
  REQUIRE(device_of((void*)bias) == last, "the last device's module global is on device %d", device_of((void*)bias));
  int value = 7;
  CHECK(hipMemcpyHtoD(bias, &value, sizeof value));
  hipFuncAttributes attr;
  CHECK(hipFuncGetAttributes(&attr, (const void*)fill));
  unsigned kernels = 0;
  CHECK(hipModuleGetFunctionCount(&kernels, module));
  REQUIRE(kernels == 2, "the module has %u kernels, want 2", kernels);
  launch_fill(fill, 0, 7, "the last worker's module launched with device 0 current");

  /* The first worker's library, named with the last device current. */
  hipKernel_t kernel;
  CHECK(hipLibraryGetKernel(&kernel, lib, "fill"));
  hipLibrary_t owner = NULL;
  CHECK(hipKernelGetLibrary(&owner, kernel));
  REQUIRE(owner == lib, "the kernel belongs to %p, not %p", (void*)owner, (void*)lib);
  const char* name = NULL;
  CHECK(hipKernelGetName(&name, kernel));
  REQUIRE(name != NULL && strcmp(name, "fill") == 0, "kernel name %s", name ? name : "(null)");
  /* The other worker's module is not a library; one worker's handle is not the other's. */
  EXPECT_ERR(hipKernelGetLibrary(&owner, (hipKernel_t)fill), hipErrorInvalidHandle);
  EXPECT_ERR(hipLibraryGetKernelCount(&kernels, (hipLibrary_t)module), hipErrorInvalidHandle);

  /* Unloading one worker's module leaves the other's library working. */
  CHECK(hipSetDevice(0));
  CHECK(hipModuleUnload(module));
  EXPECT_ERR(hipModuleUnload(module), hipErrorInvalidHandle);
  EXPECT_ERR(hipModuleGetFunction(&fill, module, "fill"), hipErrorInvalidHandle);
  CHECK(hipSetDevice(last));
  CHECK(hipLibraryGetKernelCount(&kernels, lib));
  REQUIRE(kernels == 2, "the library has %u kernels, want 2", kernels);
  CHECK(hipLibraryUnload(lib));
  EXPECT_ERR(hipLibraryUnload(lib), hipErrorInvalidHandle);

  /* A link state made with one device current, used and destroyed with another. */
  CHECK(hipSetDevice(last));
  hipLinkState_t link;
  CHECK(hipLinkCreate(0, NULL, NULL, &link));
  CHECK(hipSetDevice(0));
  CHECK(hipLinkAddData(link, hipJitInputObject, code, 64, "piece", 0, NULL, NULL));
  CHECK(hipLinkDestroy(link));
  EXPECT_ERR(hipLinkDestroy(link), hipErrorInvalidHandle);
  free(code);
}

static void mark_host(void* flag) { *(volatile int*)flag = 1; }

static void streams_and_events(void) {
  step("streams and events belong to their device's worker");
  hipStream_t streams[MAX_DEVICES];
  hipEvent_t events[MAX_DEVICES];
  for (int d = 0; d < count; d++) {
    CHECK(hipSetDevice(d));
    CHECK(hipStreamCreate(&streams[d]));
    CHECK(hipEventCreate(&events[d]));
  }
  for (int d = 0; d < count; d++)
    for (int e = 0; e < d; e++) {
      REQUIRE(streams[d] != streams[e], "devices %d and %d have the same stream handle", d, e);
      REQUIRE(events[d] != events[e], "devices %d and %d have the same event handle", d, e);
    }
  CHECK(hipSetDevice(0));
  for (int d = 0; d < count; d++) {
    int dev = -1;
    CHECK(hipStreamGetDevice(streams[d], &dev));
    REQUIRE(dev == d, "stream of device %d reports device %d", d, dev);
    CHECK(hipMemsetAsync(buffers[d], 0x22, 8, streams[d]));
    CHECK(hipEventRecord(events[d], streams[d]));
    CHECK(hipStreamSynchronize(streams[d]));
    CHECK(hipEventSynchronize(events[d]));
    CHECK(hipEventQuery(events[d]));
  }

  step("hipStreamWaitEvent on another worker's event orders the stream after it");
  int last = count - 1;
  CHECK(hipSetDevice(0));
  hipModule_t module = load_module();
  hipFunction_t spin;
  CHECK(hipModuleGetFunction(&spin, module, "spin_then_mark"));
  int* mark;
  CHECK(hipMalloc((void**)&mark, 2 * sizeof(int)));
  CHECK(hipMemset(mark, 0, 2 * sizeof(int)));
  long rounds = 20 * 1000 * 1000;
  void* params[] = {&mark, &rounds};
  CHECK(hipModuleLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, streams[0], params, NULL));
  CHECK(hipEventRecord(events[0], streams[0]));
  /* The last device's stream waits for device 0's event (another worker). */
  CHECK(hipStreamWaitEvent(streams[last], events[0], 0));
  /* Whatever is queued after the wait runs after the event: the kernel has marked by then. */
  EXPECT_ERR(hipEventQuery(events[0]), hipSuccess);
  static int observed[2];
  CHECK(hipMemcpy(observed, mark, sizeof observed, hipMemcpyDeviceToHost));
  REQUIRE(observed[0] == 1, "device 0's kernel did not mark (%d)", observed[0]);
  CHECK(hipMemsetAsync(buffers[last], 0x33, 4, streams[last]));
  CHECK(hipStreamSynchronize(streams[last]));

  step("a host function on each worker's stream (each worker's callback channel)");
  for (int d = count - 1; d >= 0; d--) {
    static volatile int ran[MAX_DEVICES];
    CHECK(hipLaunchHostFunc(streams[d], mark_host, (void*)&ran[d]));
    CHECK(hipStreamSynchronize(streams[d]));
    REQUIRE(ran[d] == 1, "the host function on device %d's stream did not run", d);
  }
  /* A wait within one worker stays a device-side wait. */
  if (count >= 2 && worker_of[1] == worker_of[0]) {
    CHECK(hipStreamWaitEvent(streams[1], events[0], 0));
    CHECK(hipStreamSynchronize(streams[1]));
  }
  CHECK(hipFree(mark));
  CHECK(hipModuleUnload(module));
  for (int d = 0; d < count; d++) {
    CHECK(hipStreamDestroy(streams[d]));
    CHECK(hipEventDestroy(events[d]));
  }
}

static void peers(void) {
  step("peers: devices of different workers are not peers");
  int last = count - 1;
  int can = -1;
  CHECK(hipDeviceCanAccessPeer(&can, 0, last));
  REQUIRE(can == 0, "device 0 can access device %d across workers (%d)", last, can);
  CHECK(hipDeviceCanAccessPeer(&can, last, 0));
  REQUIRE(can == 0, "device %d can access device 0 across workers (%d)", last, can);
  CHECK(hipSetDevice(0));
  EXPECT_ERR(hipDeviceEnablePeerAccess(last, 0), hipErrorInvalidDevice);
  EXPECT_ERR(hipDeviceDisablePeerAccess(last), hipErrorInvalidDevice);
  /* Neighbours of one worker are peers there (the host backend's and, on one board, GPUs'). */
  for (int d = 0; d + 1 < count; d++) {
    if (worker_of[d] != worker_of[d + 1]) continue;
    CHECK(hipDeviceCanAccessPeer(&can, d, d + 1));
    REQUIRE(can == 1, "devices %d and %d of one worker are not peers (%d)", d, d + 1, can);
  }
}

static void cross_worker_copies(void) {
  /* The full run's workers may not dial each other (no --dial-workers): a copy between them
   * is refused before anything moves (`copies` runs them between workers that may). */
  step("copies between workers that may not dial each other are refused, clearly");
  int last = count - 1;
  static int before[N], after[N];
  CHECK(hipMemcpy(before, buffers[last], sizeof before, hipMemcpyDeviceToHost));
  EXPECT_ERR(hipMemcpyPeer(buffers[last], last, buffers[0], 0, sizeof before), hipErrorNotSupported);
  EXPECT_ERR(hipMemcpy(buffers[last], buffers[0], sizeof before, hipMemcpyDeviceToDevice), hipErrorNotSupported);
  EXPECT_ERR(hipMemcpy(buffers[last], buffers[0], sizeof before, hipMemcpyDefault), hipErrorNotSupported);
  CHECK(hipMemcpy(after, buffers[last], sizeof after, hipMemcpyDeviceToHost));
  REQUIRE(memcmp(before, after, sizeof after) == 0, "a refused copy changed the destination");
}

/* Bytes of each buffer of the copies mode. */
#define COPY_BYTES (4u << 20)
#define COPY_INTS (COPY_BYTES / sizeof(int))

static unsigned word_at(size_t i, unsigned seed) { return (unsigned)(i * 2654435761u) ^ seed; }

static void fill_words(unsigned* out, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) out[i] = word_at(i, seed);
}

/* Reads `len` bytes at device pointer `src` and compares them with `want`. */
static void expect_device(const void* src, const void* want, size_t len, const char* what) {
  static unsigned back[COPY_INTS];
  memset(back, 0, sizeof back);
  CHECK(hipMemcpy(back, src, len, hipMemcpyDeviceToHost));
  if (memcmp(back, want, len) != 0) {
    size_t i = 0;
    while (i < len / sizeof(unsigned) && back[i] == ((const unsigned*)want)[i]) i++;
    REQUIRE(0, "%s: bytes differ from word %zu (%#x, expected %#x)", what, i, back[i], ((const unsigned*)want)[i]);
  }
}

/* The client allocation windows of a device list (client-capi/src/conn.rs:
 * CLIENT_RANGE_WINDOWS_BASE, CLIENT_RANGE_WINDOW): device d's memory lies in window d. */
#define RANGE_WINDOWS_BASE (32ull << 40)
#define RANGE_WINDOW (256ull << 30)

static int in_window(const void* p, int device) {
  uint64_t at = (uint64_t)(uintptr_t)p, start = RANGE_WINDOWS_BASE + (uint64_t)device * RANGE_WINDOW;
  return at >= start && at < start + RANGE_WINDOW;
}

#ifdef __linux__
/* Bytes this process's open TCP sockets have had acknowledged (Linux TCP_INFO), each socket
 * once however many descriptors name it (the library duplicates them). */
static unsigned long long tcp_bytes_sent(void) {
  unsigned long long sent = 0;
  static ino_t seen[4096];
  int seen_count = 0;
  for (int fd = 0; fd < 4096; fd++) {
    struct stat st;
    if (fstat(fd, &st) != 0) continue;
    int dup = 0;
    for (int i = 0; i < seen_count; i++) dup |= seen[i] == st.st_ino;
    if (dup) continue;
    int type = 0, domain = 0;
    socklen_t len = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) continue;
    struct sockaddr_storage local;
    len = sizeof local;
    if (getsockname(fd, (struct sockaddr*)&local, &len) != 0) continue;
    domain = local.ss_family;
    if (domain != AF_INET && domain != AF_INET6) continue;
    struct tcp_info info;
    memset(&info, 0, sizeof info);
    len = sizeof info;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) continue;
    sent += info.tcpi_bytes_acked;
    seen[seen_count++] = st.st_ino;
  }
  return sent;
}
#endif

static int copies(void) {
  begin("multi_worker copies");
  CHECK(hipGetDeviceCount(&count));
  REQUIRE(count >= 2, "%d devices", count);
  int a = 0, b = count - 1;
  static unsigned p[COPY_INTS], q[COPY_INTS], marks[COPY_INTS];
  fill_words(p, COPY_INTS, 0xa5a5a5a5u);
  fill_words(q, COPY_INTS, 0x3c3c0f0fu);
  unsigned long long to_a = 0, to_b = 0, uploaded_a = 0, uploaded_b = 0;
  void *pa, *pa2, *pb, *pb2;
  CHECK(hipSetDevice(a));
  CHECK(hipMalloc(&pa, COPY_BYTES));
  CHECK(hipMalloc(&pa2, COPY_BYTES));
  CHECK(hipMemcpy(pa, p, COPY_BYTES, hipMemcpyHostToDevice));
  uploaded_a += COPY_BYTES;
  CHECK(hipSetDevice(b));
  CHECK(hipMalloc(&pb, COPY_BYTES));
  CHECK(hipMalloc(&pb2, COPY_BYTES));
  CHECK(hipMemcpy(pb, q, COPY_BYTES, hipMemcpyHostToDevice));
  uploaded_b += COPY_BYTES;

  step("memory the client places lies in its device's window: two workers never share an address");
  const char* client_alloc = getenv("HIP_REMOTE_CLIENT_ALLOC");
  if (!client_alloc || (strcmp(client_alloc, "off") != 0 && strcmp(client_alloc, "0") != 0)) {
    REQUIRE(in_window(pa, a) && in_window(pa2, a), "device %d's memory %p %p lies outside its window", a, pa, pa2);
    REQUIRE(in_window(pb, b) && in_window(pb2, b), "device %d's memory %p %p lies outside its window", b, pb, pb2);
  }

  step("hipMemcpyPeer and hipMemcpy, both ways, synchronous");
  CHECK(hipSetDevice(a));
  CHECK(hipMemcpyPeer(pb2, b, pa, a, COPY_BYTES));
  to_b += COPY_BYTES;
  expect_device(pb2, p, COPY_BYTES, "hipMemcpyPeer a -> b");
  CHECK(hipMemcpy(pa2, pb, COPY_BYTES, hipMemcpyDeviceToDevice));
  to_a += COPY_BYTES;
  expect_device(pa2, q, COPY_BYTES, "hipMemcpy(DeviceToDevice) b -> a");
  /* A part of a buffer, at odd offsets, with hipMemcpyDefault: only that range changes. */
  CHECK(hipMemcpy((char*)pa2 + 4096, (const char*)pb2 + 12, 12345, hipMemcpyDefault));
  to_a += 12345;
  static unsigned want[COPY_INTS];
  memcpy(want, q, COPY_BYTES);
  memcpy((char*)want + 4096, (const char*)p + 12, 12345);
  expect_device(pa2, want, COPY_BYTES, "hipMemcpy(Default) of a range, b -> a");

  step("hipMemcpyPeerAsync and hipMemcpyDtoDAsync, both ways, on either worker's stream");
  hipStream_t sa, sb;
  CHECK(hipSetDevice(a));
  CHECK(hipStreamCreate(&sa));
  CHECK(hipSetDevice(b));
  CHECK(hipStreamCreate(&sb));
  CHECK(hipSetDevice(a));
  /* The destination's stream orders the write: the memset queued before it is overwritten. */
  CHECK(hipMemsetAsync(pb2, 0, COPY_BYTES, sb));
  CHECK(hipMemcpyPeerAsync(pb2, b, pa, a, COPY_BYTES, sb));
  to_b += COPY_BYTES;
  CHECK(hipStreamSynchronize(sb));
  expect_device(pb2, p, COPY_BYTES, "hipMemcpyPeerAsync a -> b on b's stream");
  /* The source's stream orders the read: it sees the memset queued before it. */
  CHECK(hipMemsetAsync(pb, 0x77, COPY_BYTES, sb));
  CHECK(hipStreamSynchronize(sb));
  CHECK(hipMemsetAsync(pa, 0x11, 64, sa));
  CHECK(hipMemcpyDtoDAsync(pb2, pa, COPY_BYTES, sa));
  to_b += COPY_BYTES;
  memcpy(want, p, COPY_BYTES);
  memset(want, 0x11, 64);
  CHECK(hipStreamSynchronize(sa));
  CHECK(hipSetDevice(b));
  CHECK(hipDeviceSynchronize());
  expect_device(pb2, want, COPY_BYTES, "hipMemcpyDtoDAsync a -> b on a's stream");
  CHECK(hipMemcpyAsync(pa2, pb, COPY_BYTES, hipMemcpyDeviceToDevice, NULL));
  to_a += COPY_BYTES;
  memset(want, 0x77, COPY_BYTES);
  CHECK(hipSetDevice(a));
  CHECK(hipDeviceSynchronize());
  expect_device(pa2, want, COPY_BYTES, "hipMemcpyAsync b -> a on the null stream");

  step("a copy on b's stream after b waits for a's event reads what a wrote before it");
  hipStream_t slow;
  hipEvent_t written;
  CHECK(hipSetDevice(a));
  /* Non-blocking: a's null stream, where the copy's read is ordered, does not wait for it. */
  CHECK(hipStreamCreateWithFlags(&slow, hipStreamNonBlocking));
  CHECK(hipEventCreate(&written));
  /* Slow work first (hundreds of MiB of fills), then what the copy must see. */
  void* big;
  CHECK(hipMalloc(&big, 12 * COPY_BYTES));
  for (int round = 0; round < 12; round++) CHECK(hipMemsetAsync(big, round, 12 * COPY_BYTES, slow));
  CHECK(hipMemsetAsync(pa, 0x5a, COPY_BYTES, slow));
  CHECK(hipEventRecord(written, slow));
  CHECK(hipStreamWaitEvent(sb, written, 0));
  CHECK(hipMemcpyPeerAsync(pb2, b, pa, a, COPY_BYTES, sb));
  to_b += COPY_BYTES;
  CHECK(hipStreamSynchronize(sb));
  memset(marks, 0x5a, COPY_BYTES);
  expect_device(pb2, marks, COPY_BYTES, "the copy after the wait");
  CHECK(hipEventSynchronize(written));
  CHECK(hipEventQuery(written));
  CHECK(hipFree(big));
  hipEvent_t on_b;
  CHECK(hipSetDevice(b));
  CHECK(hipEventCreate(&on_b));
  CHECK(hipEventRecord(on_b, sb));
  CHECK(hipEventSynchronize(on_b));
  float ms = 0;
  /* ROCm: events of two devices are an invalid handle here. */
  EXPECT_ERR(hipEventElapsedTime(&ms, written, on_b), hipErrorInvalidHandle);

  step("a 2D copy between workers is refused, clearly");
  EXPECT_ERR(hipMemcpy2D(pb2, 256, pa, 256, 256, 4, hipMemcpyDeviceToDevice), hipErrorNotSupported);

  CHECK(hipEventDestroy(written));
  CHECK(hipEventDestroy(on_b));
  CHECK(hipStreamDestroy(sa));
  CHECK(hipStreamDestroy(sb));
  CHECK(hipStreamDestroy(slow));
  CHECK(hipFree(pa));
  CHECK(hipFree(pa2));
  CHECK(hipFree(pb));
  CHECK(hipFree(pb2));
  printf("TRANSFERRED a:%llu b:%llu\n", to_a, to_b);
  printf("UPLOADED a:%llu b:%llu\n", uploaded_a, uploaded_b);
  /* What this process sent over its open TCP connections (the workers' stay open): had the
   * copies come through the client, their bytes would be in it. */
#ifdef __linux__
  printf("CLIENT_SENT %llu\n", tcp_bytes_sent());
#endif
  printf("PASS multi_worker copies\n");
  return 0;
}

/* Seconds since an arbitrary start. */
static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Bandwidth of `rounds` synchronous copies of `bytes` from `src` to `dst`, in GB/s. */
static double copy_rate(void* dst, int dst_device, const void* src, int src_device, size_t bytes, int rounds) {
  CHECK(hipMemcpyPeer(dst, dst_device, src, src_device, bytes)); /* warm-up */
  double start = now_s();
  for (int i = 0; i < rounds; i++) CHECK(hipMemcpyPeer(dst, dst_device, src, src_device, bytes));
  return (double)bytes * rounds / (now_s() - start) / 1e9;
}

/* multi_worker bench MIB ROUNDS: hipMemcpyPeer between the workers of device 0 and the last
 * device, both ways, against a device-to-device copy within device 0's worker. */
static int bench(size_t mib, int rounds) {
  begin("multi_worker bench");
  CHECK(hipGetDeviceCount(&count));
  size_t bytes = mib << 20;
  int a = 0, b = count - 1;
  void *a1, *a2, *b1;
  CHECK(hipSetDevice(a));
  CHECK(hipMalloc(&a1, bytes));
  CHECK(hipMalloc(&a2, bytes));
  CHECK(hipMemset(a1, 0x42, bytes));
  CHECK(hipSetDevice(b));
  CHECK(hipMalloc(&b1, bytes));
  CHECK(hipMemset(b1, 0x24, bytes));
  double within = copy_rate(a2, a, a1, a, bytes, rounds);
  double a_to_b = copy_rate(b1, b, a1, a, bytes, rounds);
  double b_to_a = copy_rate(a2, a, b1, b, bytes, rounds);
  printf("BENCH copy %zu MiB x %d: within worker a %.2f GB/s; worker a -> b %.2f GB/s; b -> a %.2f GB/s\n", mib, rounds, within, a_to_b,
         b_to_a);
  CHECK(hipFree(a1));
  CHECK(hipFree(a2));
  CHECK(hipFree(b1));
  printf("PASS multi_worker bench\n");
  return 0;
}

static int hold(int dev) {
  begin("multi_worker hold");
  int* on0;
  int* on_dev;
  CHECK(hipSetDevice(0));
  CHECK(hipMalloc((void**)&on0, N * sizeof(int)));
  CHECK(hipSetDevice(dev));
  CHECK(hipMalloc((void**)&on_dev, N * sizeof(int)));
  printf("READY\n");
  char line[64];
  if (!fgets(line, sizeof line, stdin)) return 1;
  /* The other worker is gone: its device fails, device 0 goes on. */
  static int data[N], back[N];
  for (int i = 0; i < N; i++) data[i] = 7 * i;
  /* A download: it needs the worker's answer (a small upload may return once sent). */
  hipError_t lost = hipMemcpy(back, on_dev, sizeof back, hipMemcpyDeviceToHost);
  REQUIRE(lost != hipSuccess, "a copy to the killed worker's device succeeded");
  CHECK(hipSetDevice(0));
  CHECK(hipMemcpy(on0, data, sizeof data, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(back, on0, sizeof back, hipMemcpyDeviceToHost));
  REQUIRE(memcmp(back, data, sizeof back) == 0, "device 0's copy differs after the other worker died");
  CHECK(hipDeviceSynchronize());
  CHECK(hipFree(on0));
  printf("PASS multi_worker hold (lost: %s)\n", hipGetErrorName(lost));
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "hold") == 0) return hold(atoi(argv[2]));
  if (argc == 2 && strcmp(argv[1], "copies") == 0) return copies();
  if (argc == 4 && strcmp(argv[1], "bench") == 0) return bench((size_t)atol(argv[2]), atoi(argv[3]));
  begin("multi_worker");
  REQUIRE(argc >= 3 && argc - 1 <= MAX_DEVICES, "usage: multi_worker W:MIB W:MIB ... (at least two devices)");
  for (int d = 0; d < argc - 1; d++) {
    REQUIRE(strlen(argv[d + 1]) > 2 && argv[d + 1][1] == ':', "device %d: %s is not W:MIB", d, argv[d + 1]);
    worker_of[d] = argv[d + 1][0];
    expected_mib[d] = (size_t)atol(argv[d + 1] + 2);
  }
  REQUIRE(worker_of[0] != worker_of[argc - 2], "the first and last devices must be on different workers");
  device_list();
  REQUIRE(count == argc - 1, "%d devices, expected %d", count, argc - 1);
  memory();
  kernels();
  modules_per_worker();
  streams_and_events();
  peers();
  cross_worker_copies();
  for (int d = 0; d < count; d++) CHECK(hipFree(buffers[d]));
  printf("PASS multi_worker\n");
  return 0;
}
