/*
 * Helpers of the hipBLAS C test programs: status checks and column-major CPU references.
 */
#ifndef HIP_REMOTE_TEST_HIPBLAS_CHECK_H
#define HIP_REMOTE_TEST_HIPBLAS_CHECK_H

#include "check.h"
#include <hipblas/hipblas.h>
#include <math.h>

/* A hipBLAS call that must return `want`. */
#define EXPECT_BLAS(expr, want)                                                              \
  do {                                                                                       \
    hipblasStatus_t blas_st_ = (expr);                                                       \
    if (blas_st_ != (want)) {                                                                \
      printf("FAIL %s:%d: %s returned hipblasStatus_t %d, expected %d\n", __FILE__, __LINE__, \
             #expr, (int)blas_st_, (int)(want));                                             \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)

#define BLAS_OK(expr) EXPECT_BLAS(expr, HIPBLAS_STATUS_SUCCESS)

/* Deterministic test values in [-1, 1). */
static inline double test_value(unsigned i, unsigned salt) {
  unsigned x = i * 2654435761u ^ (salt * 40503u + 17u);
  x ^= x >> 13;
  x *= 0x5bd1e995u;
  x ^= x >> 15;
  return (double)(x % 2000u) / 1000.0 - 1.0;
}

static inline void fill_f(float* v, size_t n, unsigned salt) {
  for (size_t i = 0; i < n; i++) v[i] = (float)test_value((unsigned)i, salt);
}

static inline void fill_d(double* v, size_t n, unsigned salt) {
  for (size_t i = 0; i < n; i++) v[i] = test_value((unsigned)i, salt);
}

/* Element (i, j) of op(X) where X is column-major with leading dimension ld. */
static inline size_t op_index(hipblasOperation_t t, size_t i, size_t j, size_t ld) {
  return t == HIPBLAS_OP_N ? i + j * ld : j + i * ld;
}

/* C = alpha op(A) op(B) + beta C in double precision (reference for s and d). */
static inline void ref_gemm(hipblasOperation_t ta, hipblasOperation_t tb, int m, int n, int k, double alpha,
                            const double* a, int lda, const double* b, int ldb, double beta, double* c, int ldc) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double s = 0;
      for (int l = 0; l < k; l++) s += a[op_index(ta, i, l, lda)] * b[op_index(tb, l, j, ldb)];
      c[i + (size_t)j * ldc] = alpha * s + beta * c[i + (size_t)j * ldc];
    }
}

/* Largest |got - want| relative to max(1, |want|). */
static inline double max_rel_err_f(const float* got, const double* want, size_t n) {
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double e = fabs((double)got[i] - want[i]) / fmax(1.0, fabs(want[i]));
    if (e > worst || isnan(e)) worst = isnan(e) ? INFINITY : e;
  }
  return worst;
}

static inline double max_rel_err_d(const double* got, const double* want, size_t n) {
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double e = fabs(got[i] - want[i]) / fmax(1.0, fabs(want[i]));
    if (e > worst || isnan(e)) worst = isnan(e) ? INFINITY : e;
  }
  return worst;
}

#endif
