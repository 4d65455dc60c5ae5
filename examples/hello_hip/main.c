/* hello_hip: the seed's vector add through the module API, with the code object chosen for
 * the worker's device: the host module on a host-backend worker, PTX on an NVIDIA worker.
 *   usage: hello_hip <directory holding vadd.host.so and vadd.sm_80.ptx>            */
#include <hip/hip_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
  fprintf(stderr, "%s failed: %s\n", #x, hipGetErrorString(e_)); return 1; } } while (0)

int main(int argc, char** argv) {
  const char* dir = argc > 1 ? argv[1] : ".";
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  char path[4096];
  if (strcmp(props.gcnArchName, "host") == 0)
    snprintf(path, sizeof path, "%s/vadd.host.so", dir);
  else if (strncmp(props.gcnArchName, "sm_", 3) == 0)
    snprintf(path, sizeof path, "%s/vadd.sm_80.ptx", dir); /* the driver JITs it for newer GPUs */
  else {
    fprintf(stderr, "no vadd code object for %s in this example\n", props.gcnArchName);
    return 1;
  }
  printf("device %s (%s): loading %s\n", props.name, props.gcnArchName, path);

  hipModule_t module;
  hipFunction_t vadd;
  CHECK(hipModuleLoad(&module, path));
  CHECK(hipModuleGetFunction(&vadd, module, "vadd"));

  enum { N = 1 << 20 };
  size_t bytes = N * sizeof(float);
  float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
  for (int i = 0; i < N; i++) { a[i] = (float)i; b[i] = 2.0f * (float)i; }
  float *da, *db, *dc;
  CHECK(hipMalloc((void**)&da, bytes));
  CHECK(hipMalloc((void**)&db, bytes));
  CHECK(hipMalloc((void**)&dc, bytes));
  CHECK(hipMemcpy(da, a, bytes, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(db, b, bytes, hipMemcpyHostToDevice));
  int n = N;
  void* args[] = {&da, &db, &dc, &n};
  CHECK(hipModuleLaunchKernel(vadd, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
  CHECK(hipMemcpy(c, dc, bytes, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) {
    if (c[i] != a[i] + b[i]) { fprintf(stderr, "c[%d] = %f, want %f\n", i, c[i], a[i] + b[i]); return 1; }
  }
  printf("vadd of %d elements: correct\n", N);
  CHECK(hipFree(da)); CHECK(hipFree(db)); CHECK(hipFree(dc));
  CHECK(hipModuleUnload(module));
  return 0;
}
