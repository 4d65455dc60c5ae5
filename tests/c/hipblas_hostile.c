/*
 * hipBLAS inputs a careless or hostile client sends: bad handles, bad sizes and leading
 * dimensions (refused at once with hipBLAS's status), operands outside the session's
 * allocations, huge dimensions over small buffers, host addresses and pointer arrays naming
 * foreign memory (refused by the worker before anything runs: the launch's deferred error is
 * hipErrorInvalidValue at the next synchronisation), and the session still works afterwards.
 */
#include "hipblas_check.h"

/* The deferred error of a refused launch, reported by the next synchronisation. */
static void expect_refused(const char* what) {
  hipError_t e = hipDeviceSynchronize();
  REQUIRE(e == hipErrorInvalidValue, "%s: hipDeviceSynchronize returned %s, expected hipErrorInvalidValue", what, hipGetErrorName(e));
  (void)hipGetLastError();
  CHECK(hipDeviceSynchronize());
}

int main(void) {
  begin("hipblas_hostile");
  hipblasHandle_t h;
  float one = 1.0f, zero = 0.0f, r;
  enum { n = 16 };
  float host[n * n];
  fill_f(host, n * n, 1);
  float *a, *b, *c;
  CHECK(hipMalloc((void**)&a, sizeof host));
  CHECK(hipMalloc((void**)&b, sizeof host));
  CHECK(hipMalloc((void**)&c, sizeof host));
  CHECK(hipMemcpy(a, host, sizeof host, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(b, host, sizeof host, hipMemcpyHostToDevice));

  step("handles");
  EXPECT_BLAS(hipblasCreate(NULL), HIPBLAS_STATUS_INVALID_VALUE);
  EXPECT_BLAS(hipblasSgemm(NULL, HIPBLAS_OP_N, HIPBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n), HIPBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_BLAS(hipblasSgemm((hipblasHandle_t)0x1234, HIPBLAS_OP_N, HIPBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n),
              HIPBLAS_STATUS_NOT_INITIALIZED);
  BLAS_OK(hipblasCreate(&h));
  hipblasHandle_t gone;
  BLAS_OK(hipblasCreate(&gone));
  BLAS_OK(hipblasDestroy(gone));
  EXPECT_BLAS(hipblasDestroy(gone), HIPBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_BLAS(hipblasSdot(gone, n, a, 1, b, 1, &r), HIPBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_BLAS(hipblasSetPointerMode(h, (hipblasPointerMode_t)7), HIPBLAS_STATUS_INVALID_ENUM);

  step("sizes, leading dimensions, enums");
  EXPECT_BLAS(hipblasSgemm(h, HIPBLAS_OP_N, HIPBLAS_OP_N, -1, n, n, &one, a, n, b, n, &zero, c, n), HIPBLAS_STATUS_INVALID_VALUE);
  EXPECT_BLAS(hipblasSgemm(h, HIPBLAS_OP_N, HIPBLAS_OP_N, n, n, n, &one, a, n - 1, b, n, &zero, c, n), HIPBLAS_STATUS_INVALID_VALUE);
  EXPECT_BLAS(hipblasSgemm(h, HIPBLAS_OP_T, HIPBLAS_OP_N, n, n, n + 1, &one, a, n, b, n + 1, &zero, c, n), HIPBLAS_STATUS_INVALID_VALUE);
  EXPECT_BLAS(hipblasSgemm(h, HIPBLAS_OP_N, HIPBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, 0), HIPBLAS_STATUS_INVALID_VALUE);
  EXPECT_BLAS(hipblasSgemm(h, (hipblasOperation_t)0, HIPBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n), HIPBLAS_STATUS_INVALID_ENUM);
  EXPECT_BLAS(hipblasSgemm(h, HIPBLAS_OP_N, HIPBLAS_OP_N, n, n, n, NULL, a, n, b, n, &zero, c, n), HIPBLAS_STATUS_INVALID_VALUE);
  EXPECT_BLAS(hipblasSgemv(h, HIPBLAS_OP_N, n, n, &one, a, n - 1, b, 1, &zero, c, 1), HIPBLAS_STATUS_INVALID_VALUE);
  EXPECT_BLAS(hipblasSgemmStridedBatched(h, HIPBLAS_OP_N, HIPBLAS_OP_N, n, n, n, &one, a, n, 0, b, n, 0, &zero, c, n, 0, -1),
              HIPBLAS_STATUS_INVALID_VALUE);
  EXPECT_BLAS(hipblasSdot(h, n, a, 1, b, 1, NULL), HIPBLAS_STATUS_INVALID_VALUE);
  CHECK(hipDeviceSynchronize());

  step("operands outside the session's allocations");
  /* A huge k over 16x16 buffers. */
  BLAS_OK(hipblasSgemm(h, HIPBLAS_OP_N, HIPBLAS_OP_N, n, n, 1 << 20, &one, a, n, b, 1 << 20, &zero, c, n));
  expect_refused("huge k");
  /* Huge m and n with matching leading dimensions. */
  BLAS_OK(hipblasSgemm(h, HIPBLAS_OP_N, HIPBLAS_OP_N, 1 << 30, 1 << 30, 1, &one, a, 1 << 30, b, 1, &zero, c, 1 << 30));
  expect_refused("huge m and n");
  /* C one element past its allocation's end. */
  BLAS_OK(hipblasSgemm(h, HIPBLAS_OP_N, HIPBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c + 1, n));
  expect_refused("C past the end");
  /* A strided batch running past B's allocation. */
  BLAS_OK(hipblasSgemmStridedBatched(h, HIPBLAS_OP_N, HIPBLAS_OP_N, n, n, n, &one, a, n, 0, b, n, n * n, &zero, c, n, 0, 2));
  expect_refused("strided batch past B");
  /* Host memory passed as a device matrix. */
  BLAS_OK(hipblasSgemm(h, HIPBLAS_OP_N, HIPBLAS_OP_N, n, n, n, &one, host, n, b, n, &zero, c, n));
  expect_refused("host address as A");
  /* Vectors past their end, a device-mode result outside any allocation. */
  BLAS_OK(hipblasSaxpy(h, n * n, &one, a, 2, c, 1));
  expect_refused("saxpy x past the end");
  EXPECT_BLAS(hipblasSdot(h, n * n + 1, a, 1, b, 1, &r), HIPBLAS_STATUS_INVALID_VALUE);
  CHECK(hipDeviceSynchronize());
  BLAS_OK(hipblasSetPointerMode(h, HIPBLAS_POINTER_MODE_DEVICE));
  BLAS_OK(hipblasSdot(h, n, a, 1, b, 1, (float*)host));
  expect_refused("device-mode result in host memory");
  BLAS_OK(hipblasSaxpy(h, n, (const float*)(uintptr_t)0x10, a, 1, c, 1));
  expect_refused("device-mode alpha at a made-up address");
  BLAS_OK(hipblasSetPointerMode(h, HIPBLAS_POINTER_MODE_HOST));

  step("pointer arrays naming memory outside the session");
  const float* pa[2] = {a, a + n * n - 1}; /* the second runs past a's end */
  const float* pb[2] = {b, b};
  float* pc[2] = {c, c};
  void *dpa, *dpb, *dpc;
  CHECK(hipMalloc(&dpa, sizeof pa));
  CHECK(hipMalloc(&dpb, sizeof pb));
  CHECK(hipMalloc(&dpc, sizeof pc));
  CHECK(hipMemcpy(dpa, pa, sizeof pa, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dpb, pb, sizeof pb, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dpc, pc, sizeof pc, hipMemcpyHostToDevice));
  BLAS_OK(hipblasSgemmBatched(h, HIPBLAS_OP_N, HIPBLAS_OP_N, n, n, n, &one, dpa, n, dpb, n, &zero, dpc, n, 2));
  expect_refused("pointer array entry past its allocation");
  /* The array itself shorter than the batch count. */
  BLAS_OK(hipblasSgemmBatched(h, HIPBLAS_OP_N, HIPBLAS_OP_N, n, n, n, &one, dpa, n, dpb, n, &zero, dpc, n, 3));
  expect_refused("pointer array shorter than the batch");

  step("the session still computes");
  BLAS_OK(hipblasSgemm(h, HIPBLAS_OP_N, HIPBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n));
  float got[n * n];
  CHECK(hipMemcpy(got, c, sizeof got, hipMemcpyDeviceToHost));
  double want[n * n], ad[n * n];
  for (int i = 0; i < n * n; i++) ad[i] = host[i], want[i] = 0;
  ref_gemm(HIPBLAS_OP_N, HIPBLAS_OP_N, n, n, n, 1.0, ad, n, ad, n, 0.0, want, n);
  REQUIRE(max_rel_err_f(got, want, n * n) < 1e-5, "sgemm after the refusals");
  BLAS_OK(hipblasDestroy(h));
  CHECK(hipFree(a));
  CHECK(hipFree(b));
  CHECK(hipFree(c));
  CHECK(hipFree(dpa));
  CHECK(hipFree(dpb));
  CHECK(hipFree(dpc));
  printf("PASS hipblas_hostile\n");
  return 0;
}
