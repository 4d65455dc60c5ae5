/*
 * Host code against its sandbox (docs/HOST_MODULES.md): kernels compiled by hiprtc on the
 * worker try what a session process must not be able to do. Each mode prints one verdict
 * line and exits 0 when the attempt was refused or contained, 1 when it got through:
 *
 *   host_code_sandbox hold           allocates and fills a buffer, prints "PTR <address>",
 *                                    waits for a line on stdin, checks the data is intact;
 *   host_code_sandbox file <path>    a kernel opens and reads <path>: "REFUSED ..." expected;
 *   host_code_sandbox socket         a kernel opens a TCP socket: "REFUSED ..." expected;
 *   host_code_sandbox peek <addr>    a kernel reads another session's buffer by address:
 *                                    "CONTAINED ..." (its process died) or "NOT LEAKED ...";
 *   host_code_sandbox spawn          a kernel forks a process that waits forever and prints
 *                                    "SPAWNED <pid>" (the worker must end it with the session);
 *   host_code_sandbox crash          a kernel segfaults: the session ends with an error
 *                                    ("CONTAINED ..."), the worker goes on;
 *   host_code_sandbox killed         holds a buffer, prints "READY", waits for a line on stdin
 *                                    (its session process is killed meanwhile), then makes
 *                                    three calls and prints "CALL <n> <error name>" for each
 *                                    and "STICKY" when all failed with the same error.
 */
#include "check.h"
#include <hip/hiprtc.h>

#define HOLD_SIZE 4096
#define SECRET 0x5A

static const char* SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "#include <errno.h>\n"
    "#include <fcntl.h>\n"
    "#include <unistd.h>\n"
    "#include <sys/socket.h>\n"
    "extern \"C\" __global__ void try_open(const char* path, long long* out) {\n"
    "  int fd = open(path, O_RDONLY);\n"
    "  out[0] = fd; out[1] = fd < 0 ? errno : 0; out[2] = -1;\n"
    "  if (fd >= 0) { char b[64]; out[2] = read(fd, b, sizeof b); close(fd); }\n"
    "}\n"
    "extern \"C\" __global__ void try_socket(long long* out) {\n"
    "  int s = socket(AF_INET, SOCK_STREAM, 0);\n"
    "  out[0] = s; out[1] = s < 0 ? errno : 0;\n"
    "  if (s >= 0) close(s);\n"
    "}\n"
    "extern \"C\" __global__ void peek(unsigned long long addr, unsigned char* out, int n) {\n"
    "  const volatile unsigned char* p = (const volatile unsigned char*)addr;\n"
    "  for (int i = 0; i < n; i++) out[i] = p[i];\n"
    "}\n"
    "extern \"C\" __global__ void spawn(long long* out) {\n"
    "  pid_t p = fork();\n"
    "  if (p == 0) { for (;;) pause(); }\n"
    "  out[0] = p;\n"
    "}\n"
    "extern \"C\" __global__ void crash(int* out) {\n"
    "  *(volatile int*)16 = 1;\n"
    "  out[0] = 1;\n"
    "}\n";

#define RTC_CHECK(expr)                                                                       \
  do {                                                                                        \
    hiprtcResult r_ = (expr);                                                                 \
    if (r_ != HIPRTC_SUCCESS) {                                                               \
      printf("FAIL %s:%d: %s returned %s\n", __FILE__, __LINE__, #expr, hiprtcGetErrorString(r_)); \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)

static hipModule_t load_module(void) {
  hiprtcProgram prog;
  RTC_CHECK(hiprtcCreateProgram(&prog, SOURCE, "sandbox.hip", 0, NULL, NULL));
  hiprtcResult compiled = hiprtcCompileProgram(prog, 0, NULL);
  if (compiled != HIPRTC_SUCCESS) {
    size_t log_size = 0;
    RTC_CHECK(hiprtcGetProgramLogSize(prog, &log_size));
    char* log = xmalloc(log_size + 1);
    hiprtcGetProgramLog(prog, log);
    printf("FAIL compile: %s\n%s\n", hiprtcGetErrorString(compiled), log);
    exit(1);
  }
  size_t code_size = 0;
  RTC_CHECK(hiprtcGetCodeSize(prog, &code_size));
  char* code = xmalloc(code_size);
  RTC_CHECK(hiprtcGetCode(prog, code));
  RTC_CHECK(hiprtcDestroyProgram(&prog));
  hipModule_t module;
  CHECK(hipModuleLoadData(&module, code));
  free(code);
  return module;
}

static void launch(hipModule_t module, const char* name, void** params) {
  hipFunction_t fn;
  CHECK(hipModuleGetFunction(&fn, module, name));
  CHECK(hipModuleLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
}

static int hold(void) {
  uint8_t* d = NULL;
  CHECK(hipMalloc((void**)&d, HOLD_SIZE));
  CHECK(hipMemset(d, SECRET, HOLD_SIZE));
  printf("PTR %p\n", (void*)d);
  char line[64];
  if (fgets(line, sizeof line, stdin) == NULL) printf("   stdin closed\n");
  uint8_t buf[HOLD_SIZE];
  CHECK(hipMemcpy(buf, d, HOLD_SIZE, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < HOLD_SIZE; i++) REQUIRE(buf[i] == SECRET, "byte %zu changed to 0x%02x", i, buf[i]);
  CHECK(hipFree(d));
  printf("data intact\n");
  return 0;
}

static int try_file(const char* path) {
  hipModule_t module = load_module();
  char* d_path;
  long long* d_out;
  CHECK(hipMalloc((void**)&d_path, strlen(path) + 1));
  CHECK(hipMemcpy(d_path, path, strlen(path) + 1, hipMemcpyHostToDevice));
  CHECK(hipMalloc((void**)&d_out, 3 * sizeof(long long)));
  void* params[] = {&d_path, &d_out};
  launch(module, "try_open", params);
  long long out[3];
  CHECK(hipMemcpy(out, d_out, sizeof out, hipMemcpyDeviceToHost));
  if (out[0] >= 0) {
    printf("ESCAPED: host code opened %s and read %lld bytes\n", path, out[2]);
    return 1;
  }
  printf("REFUSED: open(%s) failed with errno %lld (%s)\n", path, out[1], strerror((int)out[1]));
  return 0;
}

static int try_socket(void) {
  hipModule_t module = load_module();
  long long* d_out;
  CHECK(hipMalloc((void**)&d_out, 2 * sizeof(long long)));
  void* params[] = {&d_out};
  launch(module, "try_socket", params);
  long long out[2];
  CHECK(hipMemcpy(out, d_out, sizeof out, hipMemcpyDeviceToHost));
  if (out[0] >= 0) {
    printf("ESCAPED: host code opened a TCP socket\n");
    return 1;
  }
  printf("REFUSED: socket(AF_INET) failed with errno %lld (%s)\n", out[1], strerror((int)out[1]));
  return 0;
}

static int peek(const char* addr_text) {
  unsigned long long addr = strtoull(addr_text, NULL, 0);
  hipModule_t module = load_module();
  unsigned char* d_out;
  CHECK(hipMalloc((void**)&d_out, 64));
  CHECK(hipMemset(d_out, 0, 64));
  int n = 64;
  void* params[] = {&addr, &d_out, &n};
  launch(module, "peek", params);
  unsigned char out[64];
  hipError_t err = hipMemcpy(out, d_out, sizeof out, hipMemcpyDeviceToHost);
  if (err != hipSuccess) {
    printf("CONTAINED: reading %#llx ended this session: %s (%s)\n", addr, hipGetErrorName(err), hipGetErrorString(err));
    return 0;
  }
  int secret = 0;
  for (int i = 0; i < 64; i++) secret += out[i] == SECRET;
  if (secret == 64) {
    printf("LEAKED: host code read another session's buffer at %#llx\n", addr);
    return 1;
  }
  printf("NOT LEAKED: %#llx in this session's process is not the other session's buffer\n", addr);
  return 0;
}

static int spawn(void) {
  hipModule_t module = load_module();
  long long* d_out;
  CHECK(hipMalloc((void**)&d_out, sizeof(long long)));
  void* params[] = {&d_out};
  launch(module, "spawn", params);
  long long pid = 0;
  CHECK(hipMemcpy(&pid, d_out, sizeof pid, hipMemcpyDeviceToHost));
  REQUIRE(pid > 0, "fork in host code failed (%lld)", pid);
  printf("SPAWNED %lld\n", pid);
  return 0;
}

static int crash(void) {
  hipModule_t module = load_module();
  int* d_out;
  CHECK(hipMalloc((void**)&d_out, sizeof(int)));
  void* params[] = {&d_out};
  launch(module, "crash", params);
  hipError_t err = hipDeviceSynchronize();
  if (err == hipSuccess) {
    printf("FAIL: a segfaulting kernel was not reported\n");
    return 1;
  }
  printf("CONTAINED: the crash ended this session: %s (%s)\n", hipGetErrorName(err), hipGetErrorString(err));
  return 0;
}

static int killed(void) {
  uint8_t* d = NULL;
  CHECK(hipMalloc((void**)&d, HOLD_SIZE));
  CHECK(hipMemset(d, SECRET, HOLD_SIZE));
  CHECK(hipDeviceSynchronize());
  printf("READY\n");
  char line[64];
  if (fgets(line, sizeof line, stdin) == NULL) printf("   stdin closed\n");
  uint8_t buf[HOLD_SIZE];
  hipError_t first = hipMemcpy(buf, d, HOLD_SIZE, hipMemcpyDeviceToHost);
  printf("CALL 1 %s\n", hipGetErrorName(first));
  uint8_t* other = NULL;
  hipError_t second = hipMalloc((void**)&other, HOLD_SIZE);
  printf("CALL 2 %s\n", hipGetErrorName(second));
  hipError_t third = hipDeviceSynchronize();
  printf("CALL 3 %s\n", hipGetErrorName(third));
  if (first != hipSuccess && first == second && second == third) printf("STICKY\n");
  return 0;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc >= 2 && strcmp(argv[1], "hold") == 0) return hold();
  if (argc >= 3 && strcmp(argv[1], "file") == 0) return try_file(argv[2]);
  if (argc >= 2 && strcmp(argv[1], "socket") == 0) return try_socket();
  if (argc >= 3 && strcmp(argv[1], "peek") == 0) return peek(argv[2]);
  if (argc >= 2 && strcmp(argv[1], "spawn") == 0) return spawn();
  if (argc >= 2 && strcmp(argv[1], "crash") == 0) return crash();
  if (argc >= 2 && strcmp(argv[1], "killed") == 0) return killed();
  fprintf(stderr, "usage: %s hold | file PATH | socket | peek ADDR | spawn | crash | killed\n", argv[0]);
  return 2;
}
