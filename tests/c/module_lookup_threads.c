/*
 * Kernel lookups from many threads at once: 8 threads look up the same two kernels of one
 * module (loaded and looked up without waiting for the worker), each gets the same handle, and
 * each kernel then runs with its results checked; nothing fails later at an unrelated call.
 */
#include "rtc_module.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#define THREADS 8
#define N 4096

static const char* source =
    "extern \"C\" __global__ void add_one(int* p, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] += 1; }\n"
    "extern \"C\" __global__ void twice(int* p, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= 2; }\n";

static hipModule_t module;
static hipFunction_t found[THREADS][2];
/* A start line (macOS has no pthread barriers): every thread waits for it, then all look up. */
static atomic_int waiting;
static atomic_int go;

static void* look_up(void* arg) {
  size_t id = (size_t)arg;
  atomic_fetch_add(&waiting, 1);
  while (!atomic_load(&go)) sched_yield();
  const char* first = id % 2 ? "twice" : "add_one";
  const char* second = id % 2 ? "add_one" : "twice";
  CHECK(hipModuleGetFunction(&found[id][id % 2], module, first));
  CHECK(hipModuleGetFunction(&found[id][1 - id % 2], module, second));
  return NULL;
}

int main(void) {
  begin("module_lookup_threads");
  module = rtc_module(source, "lookup_threads.hip", NULL);
  pthread_t threads[THREADS];
  for (size_t i = 0; i < THREADS; i++)
    REQUIRE(pthread_create(&threads[i], NULL, look_up, (void*)i) == 0, "pthread_create %zu", i);
  while (atomic_load(&waiting) < THREADS) sched_yield();
  atomic_store(&go, 1);
  for (int i = 0; i < THREADS; i++) REQUIRE(pthread_join(threads[i], NULL) == 0, "pthread_join %d", i);
  for (int i = 1; i < THREADS; i++)
    for (int k = 0; k < 2; k++)
      REQUIRE(found[i][k] == found[0][k], "thread %d got another handle for kernel %d (%p, not %p)", i, k,
              (void*)found[i][k], (void*)found[0][k]);
  REQUIRE(found[0][0] != found[0][1], "two kernels, one handle");

  int host[N];
  for (int i = 0; i < N; i++) host[i] = i;
  int* d = NULL;
  CHECK(hipMalloc((void**)&d, sizeof host));
  CHECK(hipMemcpy(d, host, sizeof host, hipMemcpyHostToDevice));
  int n = N;
  void* params[] = {&d, &n};
  CHECK(hipModuleLaunchKernel(found[0][0], N / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
  CHECK(hipModuleLaunchKernel(found[0][1], N / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
  CHECK(hipDeviceSynchronize());
  CHECK(hipMemcpy(host, d, sizeof host, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) REQUIRE(host[i] == (i + 1) * 2, "element %d is %d, expected %d", i, host[i], (i + 1) * 2);
  CHECK(hipFree(d));
  CHECK(hipModuleUnload(module));
  REQUIRE(hipGetLastError() == hipSuccess, "an error was recorded");
  printf("   %d threads looked up 2 kernels: one handle each, results verified\n", THREADS);
  printf("PASS module_lookup_threads\n");
  return 0;
}
