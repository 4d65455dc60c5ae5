/*
 * IPC between two client processes of one worker, the way AMD's samples do it: the parent
 * exports device memory and an interprocess event, passes the 64-byte handles to a child
 * over a pipe; the child opens them, reads what the parent wrote, writes back, records the
 * event; the parent waits on its event and sees the child's writes. Also: the exporter frees
 * while the child still has the memory open (the child's view stays valid), own handles,
 * forged handles and argument errors with ROCm's codes.
 *
 *   ipc                     the two-process test (forks before any HIP call)
 *   ipc export              prints "HANDLE <hex>" of a fresh allocation, waits for a line
 *   ipc open <hex> <want>   opens the handle; <want> "ok" or a hipError_t number
 */
#include "check.h"

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 4096           /* ints in the shared buffer */
#define INTERIOR 1024    /* ints into it: the second, interior handle */

static void write_all(int fd, const void* buf, size_t len) {
  const char* p = (const char*)buf;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    REQUIRE(n > 0, "pipe write failed");
    p += n;
    len -= (size_t)n;
  }
}

static void read_all(int fd, void* buf, size_t len) {
  char* p = (char*)buf;
  while (len > 0) {
    ssize_t n = read(fd, p, len);
    REQUIRE(n > 0, "pipe read failed (peer gone)");
    p += n;
    len -= (size_t)n;
  }
}

static void send_word(int fd, char c) { write_all(fd, &c, 1); }

static void expect_word(int fd, char want) {
  char c = 0;
  read_all(fd, &c, 1);
  REQUIRE(c == want, "expected '%c' from the other process, got '%c'", want, c);
}

struct handles {
  hipIpcMemHandle_t mem;
  hipIpcMemHandle_t interior;
  hipIpcEventHandle_t event;
};

static int child(int from_parent, int to_parent) {
  struct handles h;
  read_all(from_parent, &h, sizeof h);
  printf("-- child: handles received\n");

  int* shared = NULL;
  EXPECT_ERR(hipIpcOpenMemHandle((void**)&shared, h.mem, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipIpcOpenMemHandle(NULL, h.mem, hipIpcMemLazyEnablePeerAccess), hipErrorInvalidValue);
  CHECK(hipIpcOpenMemHandle((void**)&shared, h.mem, hipIpcMemLazyEnablePeerAccess));
  REQUIRE(shared != NULL, "opened pointer is NULL");

  /* It is device memory of device 0 in this process, with its own address range. */
  hipPointerAttribute_t attrs;
  CHECK(hipPointerGetAttributes(&attrs, shared));
  REQUIRE(attrs.type == hipMemoryTypeDevice && attrs.device == 0, "opened memory: type %d device %d", (int)attrs.type, attrs.device);
  hipDeviceptr_t base = NULL;
  size_t size = 0;
  CHECK(hipMemGetAddressRange(&base, &size, (hipDeviceptr_t)(shared + 10)));
  REQUIRE(base == (hipDeviceptr_t)shared && size == N * sizeof(int), "opened range %p+%zu", base, size);

  /* The parent recorded its event after writing: once it completes, the data is there. */
  hipEvent_t event = NULL;
  EXPECT_ERR(hipIpcOpenEventHandle(NULL, h.event), hipErrorInvalidValue);
  CHECK(hipIpcOpenEventHandle(&event, h.event));
  CHECK(hipEventSynchronize(event));
  CHECK(hipEventQuery(event));
  float ms = 0;
  EXPECT_ERR(hipEventElapsedTime(&ms, event, event), hipErrorInvalidHandle);

  static int host[N];
  CHECK(hipMemcpy(host, shared, sizeof host, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(host[i] == 3 * i + 1, "child read shared[%d] = %d, want %d", i, host[i], 3 * i + 1);
  printf("-- child: read the parent's data\n");

  /* Write back on a stream of the child's and record the parent's event behind it. */
  for (int i = 0; i < N; i++) host[i] = 5 * i + 2;
  hipStream_t stream;
  CHECK(hipStreamCreate(&stream));
  CHECK(hipMemcpyAsync(shared, host, sizeof host, hipMemcpyHostToDevice, stream));
  CHECK(hipMemsetAsync(shared + N - 1, 0x7f, sizeof(int), stream));
  CHECK(hipEventRecord(event, stream));
  CHECK(hipStreamSynchronize(stream));
  send_word(to_parent, 'W');

  /* Closing: the pointer may be used no more; hipFree is not how it goes. */
  EXPECT_ERR(hipFree(shared), hipErrorInvalidValue);
  CHECK(hipIpcCloseMemHandle(shared));
  EXPECT_ERR(hipIpcCloseMemHandle(shared), hipErrorInvalidValue);
  EXPECT_ERR(hipIpcCloseMemHandle(NULL), hipErrorInvalidValue);
  CHECK(hipPointerGetAttributes(&attrs, shared));
  REQUIRE(attrs.type == hipMemoryTypeUnregistered, "closed memory is unknown (type %d)", (int)attrs.type);

  /* The interior handle answers a pointer at the same offset. */
  int* interior = NULL;
  CHECK(hipIpcOpenMemHandle((void**)&interior, h.interior, hipIpcMemLazyEnablePeerAccess));
  int first = 0;
  CHECK(hipMemcpy(&first, interior, sizeof first, hipMemcpyDeviceToHost));
  REQUIRE(first == 5 * INTERIOR + 2, "interior handle reads %d, want %d", first, 5 * INTERIOR + 2);
  send_word(to_parent, 'I');

  /* The parent frees its allocation now; the memory stays valid here until closed. */
  expect_word(from_parent, 'F');
  CHECK(hipMemcpy(&first, interior, sizeof first, hipMemcpyDeviceToHost));
  REQUIRE(first == 5 * INTERIOR + 2, "after the exporter's free: %d", first);
  int seven = 7;
  CHECK(hipMemcpy(interior + 1, &seven, sizeof seven, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(&first, interior + 1, sizeof first, hipMemcpyDeviceToHost));
  REQUIRE(first == 7, "write after the exporter's free: %d", first);
  CHECK(hipIpcCloseMemHandle(interior));
  /* A freed allocation's handle opens no more. */
  EXPECT_ERR(hipIpcOpenMemHandle((void**)&interior, h.interior, hipIpcMemLazyEnablePeerAccess), hipErrorInvalidDevicePointer);

  CHECK(hipEventDestroy(event));
  CHECK(hipStreamDestroy(stream));
  send_word(to_parent, 'D');
  printf("-- child: done\n");
  return 0;
}

static void forged_handles(void) {
  step("forged and own handles");
  hipIpcMemHandle_t zero;
  memset(&zero, 0, sizeof zero);
  void* p = NULL;
  EXPECT_ERR(hipIpcOpenMemHandle(&p, zero, hipIpcMemLazyEnablePeerAccess), hipErrorInvalidValue);
  hipIpcEventHandle_t zero_event;
  memset(&zero_event, 0, sizeof zero_event);
  hipEvent_t e = NULL;
  EXPECT_ERR(hipIpcOpenEventHandle(&e, zero_event), hipErrorInvalidValue);
}

/* A handle of the right shape from "another process" whose token the worker never drew. */
static void made_up_handles(hipIpcMemHandle_t mem, hipIpcEventHandle_t event) {
  for (int i = 8; i < 32; i++) {
    mem.reserved[i] ^= 0x5a;
    event.reserved[i] ^= 0x5a;
  }
  void* p = NULL;
  EXPECT_ERR(hipIpcOpenMemHandle(&p, mem, hipIpcMemLazyEnablePeerAccess), hipErrorInvalidDevicePointer);
  hipEvent_t e = NULL;
  EXPECT_ERR(hipIpcOpenEventHandle(&e, event), hipErrorInvalidValue);
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "export") == 0) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    int* mem = NULL;
    CHECK(hipMalloc((void**)&mem, 4096));
    hipIpcMemHandle_t h;
    CHECK(hipIpcGetMemHandle(&h, mem));
    printf("HANDLE ");
    for (size_t i = 0; i < sizeof h; i++) printf("%02x", (unsigned char)h.reserved[i]);
    printf("\n");
    char line[16];
    REQUIRE(fgets(line, sizeof line, stdin) != NULL, "no go line");
    CHECK(hipFree(mem));
    printf("PASS ipc export\n");
    return 0;
  }
  if (argc == 4 && strcmp(argv[1], "open") == 0) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    hipIpcMemHandle_t h;
    REQUIRE(strlen(argv[2]) == 2 * sizeof h, "handle hex of %zu chars", strlen(argv[2]));
    for (size_t i = 0; i < sizeof h; i++) {
      unsigned byte = 0;
      REQUIRE(sscanf(argv[2] + 2 * i, "%2x", &byte) == 1, "bad hex");
      h.reserved[i] = (char)byte;
    }
    void* p = NULL;
    hipError_t e = hipIpcOpenMemHandle(&p, h, hipIpcMemLazyEnablePeerAccess);
    if (strcmp(argv[3], "ok") == 0) {
      REQUIRE(e == hipSuccess, "open: %s", hipGetErrorName(e));
      CHECK(hipIpcCloseMemHandle(p));
    } else {
      REQUIRE(e == (hipError_t)atoi(argv[3]), "open answered %s (%d), want %s", hipGetErrorName(e), (int)e, argv[3]);
    }
    printf("PASS ipc open\n");
    return 0;
  }

  begin("ipc");
  int to_child[2], to_parent[2];
  REQUIRE(pipe(to_child) == 0 && pipe(to_parent) == 0, "pipe");
  /* Fork before any HIP call: the child opens its own connection (its own session). */
  pid_t pid = fork();
  REQUIRE(pid >= 0, "fork");
  if (pid == 0) {
    close(to_child[1]);
    close(to_parent[0]);
    exit(child(to_child[0], to_parent[1]));
  }
  close(to_child[0]);
  close(to_parent[1]);

  step("export memory and an event");
  int* shared = NULL;
  CHECK(hipMalloc((void**)&shared, N * sizeof(int)));
  static int host[N];
  for (int i = 0; i < N; i++) host[i] = 3 * i + 1;
  hipStream_t stream;
  CHECK(hipStreamCreate(&stream));
  CHECK(hipMemcpyAsync(shared, host, sizeof host, hipMemcpyHostToDevice, stream));
  hipEvent_t event;
  CHECK(hipEventCreateWithFlags(&event, hipEventInterprocess | hipEventDisableTiming));
  EXPECT_ERR(hipEventCreateWithFlags(&event, hipEventInterprocess), hipErrorInvalidValue);
  CHECK(hipEventRecord(event, stream));

  struct handles h;
  CHECK(hipIpcGetMemHandle(&h.mem, shared));
  hipIpcMemHandle_t again;
  CHECK(hipIpcGetMemHandle(&again, shared));
  REQUIRE(memcmp(&again, &h.mem, sizeof again) == 0, "one allocation, one handle");
  CHECK(hipIpcGetMemHandle(&h.interior, shared + INTERIOR));
  CHECK(hipIpcGetEventHandle(&h.event, event));

  step("argument errors and own handles");
  EXPECT_ERR(hipIpcGetMemHandle(NULL, shared), hipErrorInvalidValue);
  EXPECT_ERR(hipIpcGetMemHandle(&again, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipIpcGetMemHandle(&again, host), hipErrorInvalidValue);
  EXPECT_ERR(hipIpcGetEventHandle(NULL, event), hipErrorInvalidValue);
  EXPECT_ERR(hipIpcGetEventHandle(&h.event, NULL), hipErrorInvalidValue);
  hipEvent_t plain;
  CHECK(hipEventCreateWithFlags(&plain, hipEventDisableTiming));
  hipIpcEventHandle_t plain_handle;
  EXPECT_ERR(hipIpcGetEventHandle(&plain_handle, plain), hipErrorInvalidConfiguration);
  CHECK(hipEventDestroy(plain));
  void* own = NULL;
  EXPECT_ERR(hipIpcOpenMemHandle(&own, h.mem, hipIpcMemLazyEnablePeerAccess), hipErrorInvalidContext);
  hipEvent_t own_event = NULL;
  EXPECT_ERR(hipIpcOpenEventHandle(&own_event, h.event), hipErrorInvalidContext);
  forged_handles();
  made_up_handles(h.mem, h.event);

  step("the child opens, reads, writes back, records");
  write_all(to_child[1], &h, sizeof h);
  expect_word(to_parent[0], 'W');
  CHECK(hipEventSynchronize(event));
  CHECK(hipEventQuery(event));
  CHECK(hipMemcpy(host, shared, sizeof host, hipMemcpyDeviceToHost));
  for (int i = 0; i < N - 1; i++) REQUIRE(host[i] == 5 * i + 2, "parent read shared[%d] = %d, want %d", i, host[i], 5 * i + 2);
  REQUIRE(host[N - 1] == 0x7f7f7f7f, "the child's memset: %#x", host[N - 1]);

  step("free while the child holds it open");
  expect_word(to_parent[0], 'I');
  CHECK(hipFree(shared));
  send_word(to_child[1], 'F');
  expect_word(to_parent[0], 'D');

  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid");
  REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed (status %#x)", status);
  CHECK(hipEventDestroy(event));
  CHECK(hipStreamDestroy(stream));
  printf("PASS ipc\n");
  return 0;
}
