/*
 * printf from kernels, compiled by hiprtc on the worker: what the kernels print reaches this
 * program's standard output (file descriptor 1) at the next synchronization, in launch order,
 * block by block, as a GPU runtime prints device output. The test points file descriptor 1
 * at a file around the launches and reads it back.
 */
#include "rtc_module.h"
#include <string.h>
#include <unistd.h>

static const char* SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void hello(int tag) {\n"
    "  if (threadIdx.x == 0) printf(\"tag %d block %d\\n\", tag, (int)blockIdx.x);\n"
    "}\n";

/* Runs `work`, with file descriptor 1 pointing at a temporary file; returns what was
 * written there (NUL-terminated, in `out`). */
static void capture_stdout(void (*work)(void*), void* arg, char* out, size_t cap) {
  char path[] = "/tmp/kernel_printf_XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0, "mkstemp");
  fflush(stdout);
  int saved = dup(1);
  REQUIRE(saved >= 0 && dup2(fd, 1) == 1, "redirect stdout");
  work(arg);
  fflush(stdout);
  REQUIRE(dup2(saved, 1) == 1, "restore stdout");
  close(saved);
  ssize_t n = pread(fd, out, cap - 1, 0);
  REQUIRE(n >= 0, "read back");
  out[n] = 0;
  close(fd);
  unlink(path);
}

static hipFunction_t hello;
static hipStream_t stream;

static void launch(int tag, unsigned blocks) {
  void* args[] = {&tag};
  CHECK(hipModuleLaunchKernel(hello, blocks, 1, 1, 32, 1, 1, 0, stream, args, NULL));
}

static void two_launches_then_stream_sync(void* unused) {
  (void)unused;
  launch(1, 3);
  launch(2, 2);
  CHECK(hipStreamSynchronize(stream));
}

static void launch_then_device_sync(void* unused) {
  (void)unused;
  launch(3, 1);
  CHECK(hipDeviceSynchronize());
}

static void launch_without_sync(void* unused) {
  (void)unused;
  launch(4, 1);
}

int main(void) {
  begin("kernel_printf");
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  hipModule_t module = rtc_module(SOURCE, "kernel_printf.hip", props.gcnArchName);
  CHECK(hipModuleGetFunction(&hello, module, "hello"));
  CHECK(hipStreamCreate(&stream));
  char text[4096];

  step("output of two launches reaches stdout at hipStreamSynchronize, in launch order");
  capture_stdout(two_launches_then_stream_sync, NULL, text, sizeof text);
  const char* want = "tag 1 block 0\ntag 1 block 1\ntag 1 block 2\ntag 2 block 0\ntag 2 block 1\n";
  if (strstr(props.gcnArchName, "host") != NULL) {
    /* The host backend runs blocks in any order, but reports their output in block order. */
    REQUIRE(strcmp(text, want) == 0, "stdout was:\n%s", text);
  } else {
    REQUIRE(strstr(text, "tag 1 block 2\n") != NULL && strstr(text, "tag 2 block 1\n") != NULL, "stdout was:\n%s", text);
  }

  step("hipDeviceSynchronize delivers too");
  capture_stdout(launch_then_device_sync, NULL, text, sizeof text);
  REQUIRE(strstr(text, "tag 3 block 0\n") != NULL, "stdout was:\n%s", text);

  step("output waits for the synchronization");
  capture_stdout(launch_without_sync, NULL, text, sizeof text);
  if (strstr(props.gcnArchName, "host") != NULL) {
    REQUIRE(strstr(text, "tag 4") == NULL, "output before any synchronization:\n%s", text);
  }
  capture_stdout(launch_then_device_sync, NULL, text, sizeof text);
  REQUIRE(strstr(text, "tag 4 block 0\n") != NULL && strstr(text, "tag 3 block 0\n") != NULL, "stdout was:\n%s", text);

  CHECK(hipStreamDestroy(stream));
  CHECK(hipModuleUnload(module));
  printf("PASS kernel_printf\n");
  return 0;
}
