/*
 * CuPy's `hipcc --genco` use (cupy/cuda/compiler.py): the file hipcc wrote is read and loaded
 * with hipModuleLoadData (as CuPy's Module.load does) and with hipModuleLoad (by path), its
 * `extern "C"` kernel found by name and launched. The client picks what the worker's device
 * runs (PTX, or the device source compiled by the worker).
 * Usage: genco_module FILE.hsaco   (a bundle holding `cupy_shift(float* x, int n)`: x[i] += 3)
 */
#include "check.h"

static void run(hipModule_t module) {
  hipFunction_t fn;
  CHECK(hipModuleGetFunction(&fn, module, "cupy_shift"));
  enum { N = 50 };
  float x[N];
  for (int i = 0; i < N; ++i) x[i] = (float)i;
  float* d_x;
  CHECK(hipMalloc((void**)&d_x, sizeof x));
  CHECK(hipMemcpy(d_x, x, sizeof x, hipMemcpyHostToDevice));
  int n = N;
  void* args[] = {&d_x, &n};
  CHECK(hipModuleLaunchKernel(fn, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL));
  CHECK(hipMemcpy(x, d_x, sizeof x, hipMemcpyDeviceToHost));
  for (int i = 0; i < N; ++i) {
    if (x[i] != (float)i + 3.0f) {
      printf("FAIL x[%d] = %g, expected %g\n", i, x[i], (float)i + 3.0f);
      exit(1);
    }
  }
  CHECK(hipFree(d_x));
}

int main(int argc, char** argv) {
  if (argc < 2) {
    printf("FAIL usage: genco_module FILE\n");
    return 1;
  }
  FILE* f = fopen(argv[1], "rb");
  if (f == NULL) {
    printf("FAIL cannot open %s\n", argv[1]);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* image = malloc((size_t)size);
  if (image == NULL || fread(image, 1, (size_t)size, f) != (size_t)size) {
    printf("FAIL cannot read %s\n", argv[1]);
    return 1;
  }
  fclose(f);
  hipModule_t from_data, from_file;
  CHECK(hipModuleLoadData(&from_data, image));
  run(from_data);
  CHECK(hipModuleUnload(from_data));
  free(image);
  CHECK(hipModuleLoad(&from_file, argv[1]));
  run(from_file);
  CHECK(hipModuleUnload(from_file));
  printf("PASS genco_module\n");
  return 0;
}
