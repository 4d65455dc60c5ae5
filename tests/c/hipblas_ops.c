/*
 * hipBLAS through hip-remote: handles, streams and pointer modes; level 1, 2 and 3 routines in
 * s/d/c/z and the gemmEx / strided-batched / batched forms, each checked against a CPU
 * reference computed here.
 */
#include "hipblas_check.h"
#include <string.h>

#define M 37
#define N 23
#define K 19
#define LDA 41 /* > every row count: the gap below the rows must stay untouched */

static void* dev_upload(const void* host, size_t bytes) {
  void* d = NULL;
  CHECK(hipMalloc(&d, bytes));
  CHECK(hipMemcpy(d, host, bytes, hipMemcpyHostToDevice));
  return d;
}

static void download(void* host, const void* dev, size_t bytes) { CHECK(hipMemcpy(host, dev, bytes, hipMemcpyDeviceToHost)); }

/* sgemm / dgemm with every transpose pair, on a stream, gaps checked. */
static void gemm_real(hipblasHandle_t h) {
  const hipblasOperation_t ops[] = {HIPBLAS_OP_N, HIPBLAS_OP_T, HIPBLAS_OP_C};
  size_t elems = (size_t)LDA * 64;
  float *a = malloc(elems * sizeof(float)), *b = malloc(elems * sizeof(float)), *c = malloc(elems * sizeof(float));
  double *ad = malloc(elems * sizeof(double)), *bd = malloc(elems * sizeof(double)), *cd = malloc(elems * sizeof(double));
  double *want = malloc(elems * sizeof(double));
  fill_f(a, elems, 1);
  fill_f(b, elems, 2);
  fill_f(c, elems, 3);
  for (size_t i = 0; i < elems; i++) ad[i] = a[i], bd[i] = b[i], cd[i] = c[i];
  float *da = dev_upload(a, elems * sizeof(float)), *db = dev_upload(b, elems * sizeof(float));
  double *dad = dev_upload(ad, elems * sizeof(double)), *dbd = dev_upload(bd, elems * sizeof(double));
  for (int ia = 0; ia < 3; ia++)
    for (int ib = 0; ib < 3; ib++) {
      hipblasOperation_t ta = ops[ia], tb = ops[ib];
      float alpha = 1.5f, beta = -0.5f;
      float* dc = dev_upload(c, elems * sizeof(float));
      BLAS_OK(hipblasSgemm(h, ta, tb, M, N, K, &alpha, da, LDA, db, LDA, &beta, dc, LDA));
      float* got = malloc(elems * sizeof(float));
      download(got, dc, elems * sizeof(float));
      for (size_t i = 0; i < elems; i++) want[i] = c[i];
      ref_gemm(ta, tb, M, N, K, alpha, ad, LDA, bd, LDA, beta, want, LDA);
      double err = max_rel_err_f(got, want, elems);
      REQUIRE(err < 1e-5, "sgemm %d/%d: error %g", ta, tb, err);
      CHECK(hipFree(dc));
      free(got);

      double alphad = 0.75, betad = 2.0;
      double* dcd = dev_upload(cd, elems * sizeof(double));
      BLAS_OK(hipblasDgemm(h, ta, tb, M, N, K, &alphad, dad, LDA, dbd, LDA, &betad, dcd, LDA));
      double* gotd = malloc(elems * sizeof(double));
      download(gotd, dcd, elems * sizeof(double));
      for (size_t i = 0; i < elems; i++) want[i] = cd[i];
      ref_gemm(ta, tb, M, N, K, alphad, ad, LDA, bd, LDA, betad, want, LDA);
      err = max_rel_err_d(gotd, want, elems);
      REQUIRE(err < 1e-12, "dgemm %d/%d: error %g", ta, tb, err);
      CHECK(hipFree(dcd));
      free(gotd);
    }
  /* beta = 0: C's old contents (NaN here) are not read. */
  float* nan_c = malloc(elems * sizeof(float));
  for (size_t i = 0; i < elems; i++) nan_c[i] = NAN;
  float* dc = dev_upload(nan_c, elems * sizeof(float));
  float one = 1.0f, zero = 0.0f;
  BLAS_OK(hipblasSgemm(h, HIPBLAS_OP_N, HIPBLAS_OP_N, M, N, K, &one, da, LDA, db, LDA, &zero, dc, LDA));
  download(nan_c, dc, elems * sizeof(float));
  for (size_t i = 0; i < elems; i++) want[i] = 0;
  ref_gemm(HIPBLAS_OP_N, HIPBLAS_OP_N, M, N, K, 1.0, ad, LDA, bd, LDA, 0.0, want, LDA);
  for (int j = 0; j < N; j++)
    for (int i = 0; i < M; i++) {
      size_t at = i + (size_t)j * LDA;
      REQUIRE(fabs(nan_c[at] - want[at]) < 1e-4, "sgemm beta=0 (%d,%d): %g vs %g", i, j, nan_c[at], want[at]);
    }
  REQUIRE(isnan(nan_c[M]), "the gap below the rows of C was written");
  CHECK(hipFree(dc));
  CHECK(hipFree(da));
  CHECK(hipFree(db));
  CHECK(hipFree(dad));
  CHECK(hipFree(dbd));
  free(a), free(b), free(c), free(ad), free(bd), free(cd), free(want), free(nan_c);
}

/* cgemm with conjugate-transposed A, zgemm plain: complex products checked in double. */
static void gemm_complex(hipblasHandle_t h) {
  enum { m = 9, n = 7, k = 5, ld = 11 };
  hipblasComplex a[ld * 16], b[ld * 16], c[ld * 16];
  for (int i = 0; i < ld * 16; i++) {
    a[i].x = (float)test_value(i, 4), a[i].y = (float)test_value(i, 5);
    b[i].x = (float)test_value(i, 6), b[i].y = (float)test_value(i, 7);
    c[i].x = (float)test_value(i, 8), c[i].y = (float)test_value(i, 9);
  }
  hipblasComplex alpha = {0.5f, -1.0f}, beta = {1.0f, 0.25f};
  void *da = dev_upload(a, sizeof a), *db = dev_upload(b, sizeof b), *dc = dev_upload(c, sizeof c);
  BLAS_OK(hipblasCgemm(h, HIPBLAS_OP_C, HIPBLAS_OP_N, m, n, k, &alpha, da, ld, db, ld, &beta, dc, ld));
  hipblasComplex got[ld * 16];
  download(got, dc, sizeof got);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double sr = 0, si = 0;
      for (int l = 0; l < k; l++) {
        hipblasComplex x = a[l + i * ld], y = b[l + j * ld];
        double xr = x.x, xi = -x.y; /* conjugate */
        sr += xr * y.x - xi * y.y;
        si += xr * y.y + xi * y.x;
      }
      hipblasComplex old = c[i + j * ld];
      double wr = alpha.x * sr - alpha.y * si + beta.x * old.x - beta.y * old.y;
      double wi = alpha.x * si + alpha.y * sr + beta.x * old.y + beta.y * old.x;
      REQUIRE(fabs(got[i + j * ld].x - wr) < 1e-4 && fabs(got[i + j * ld].y - wi) < 1e-4, "cgemm (%d,%d): (%g,%g) vs (%g,%g)", i, j,
              got[i + j * ld].x, got[i + j * ld].y, wr, wi);
    }
  CHECK(hipFree(da));
  CHECK(hipFree(db));
  CHECK(hipFree(dc));

  hipblasDoubleComplex za[ld * 16], zb[ld * 16], zc[ld * 16];
  for (int i = 0; i < ld * 16; i++) {
    za[i].x = test_value(i, 10), za[i].y = test_value(i, 11);
    zb[i].x = test_value(i, 12), zb[i].y = test_value(i, 13);
    zc[i].x = zc[i].y = 0;
  }
  hipblasDoubleComplex zalpha = {1.0, 1.0}, zbeta = {0, 0};
  da = dev_upload(za, sizeof za), db = dev_upload(zb, sizeof zb), dc = dev_upload(zc, sizeof zc);
  BLAS_OK(hipblasZgemm(h, HIPBLAS_OP_N, HIPBLAS_OP_T, m, n, k, &zalpha, da, ld, db, ld, &zbeta, dc, ld));
  hipblasDoubleComplex zgot[ld * 16];
  download(zgot, dc, sizeof zgot);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double sr = 0, si = 0;
      for (int l = 0; l < k; l++) {
        hipblasDoubleComplex x = za[i + l * ld], y = zb[j + l * ld];
        sr += x.x * y.x - x.y * y.y;
        si += x.x * y.y + x.y * y.x;
      }
      double wr = sr - si, wi = si + sr; /* (1 + i) * s */
      REQUIRE(fabs(zgot[i + j * ld].x - wr) < 1e-12 && fabs(zgot[i + j * ld].y - wi) < 1e-12, "zgemm (%d,%d)", i, j);
    }
  CHECK(hipFree(da));
  CHECK(hipFree(db));
  CHECK(hipFree(dc));
}

/* Strided batched, batched (device arrays of device pointers), GemmEx and its strided form. */
static void gemm_forms(hipblasHandle_t h) {
  enum { m = 8, n = 6, k = 4, batch = 3 };
  const long long sa = m * k + 5, sb = k * n + 3, sc = m * n + 7;
  float a[batch * 64], b[batch * 64], c[batch * 64];
  fill_f(a, batch * 64, 20);
  fill_f(b, batch * 64, 21);
  fill_f(c, batch * 64, 22);
  double ad[batch * 64], bd[batch * 64], want[batch * 64];
  for (int i = 0; i < batch * 64; i++) ad[i] = a[i], bd[i] = b[i], want[i] = c[i];
  for (int i = 0; i < batch; i++) ref_gemm(HIPBLAS_OP_N, HIPBLAS_OP_N, m, n, k, 2.0, ad + i * sa, m, bd + i * sb, k, 1.0, want + i * sc, m);
  float alpha = 2.0f, beta = 1.0f, got[batch * 64];
  float *da = dev_upload(a, sizeof a), *db = dev_upload(b, sizeof b);

  float* dc = dev_upload(c, sizeof c);
  BLAS_OK(hipblasSgemmStridedBatched(h, HIPBLAS_OP_N, HIPBLAS_OP_N, m, n, k, &alpha, da, m, sa, db, k, sb, &beta, dc, m, sc, batch));
  download(got, dc, sizeof got);
  REQUIRE(max_rel_err_f(got, want, batch * 64) < 1e-5, "sgemmStridedBatched");
  CHECK(hipFree(dc));

  dc = dev_upload(c, sizeof c);
  BLAS_OK(hipblasGemmStridedBatchedEx(h, HIPBLAS_OP_N, HIPBLAS_OP_N, m, n, k, &alpha, da, HIP_R_32F, m, sa, db, HIP_R_32F, k, sb, &beta, dc,
                                      HIP_R_32F, m, sc, batch, HIPBLAS_COMPUTE_32F, HIPBLAS_GEMM_DEFAULT));
  download(got, dc, sizeof got);
  REQUIRE(max_rel_err_f(got, want, batch * 64) < 1e-5, "gemmStridedBatchedEx");
  CHECK(hipFree(dc));

  dc = dev_upload(c, sizeof c);
  const float *pa[batch], *pb[batch];
  float* pc[batch];
  for (int i = 0; i < batch; i++) pa[i] = da + i * sa, pb[i] = db + i * sb, pc[i] = dc + i * sc;
  void *dpa = dev_upload(pa, sizeof pa), *dpb = dev_upload(pb, sizeof pb), *dpc = dev_upload(pc, sizeof pc);
  BLAS_OK(hipblasSgemmBatched(h, HIPBLAS_OP_N, HIPBLAS_OP_N, m, n, k, &alpha, dpa, m, dpb, k, &beta, dpc, m, batch));
  download(got, dc, sizeof got);
  REQUIRE(max_rel_err_f(got, want, batch * 64) < 1e-5, "sgemmBatched");
  CHECK(hipFree(dc));

  dc = dev_upload(c, sizeof c);
  BLAS_OK(hipblasGemmEx(h, HIPBLAS_OP_N, HIPBLAS_OP_N, m, n, k, &alpha, da, HIP_R_32F, m, db, HIP_R_32F, k, &beta, dc, HIP_R_32F, m,
                        HIPBLAS_COMPUTE_32F, HIPBLAS_GEMM_DEFAULT));
  download(got, dc, sizeof got);
  REQUIRE(max_rel_err_f(got, want, m * n) < 1e-5, "gemmEx");
  CHECK(hipFree(dc));
  CHECK(hipFree(da));
  CHECK(hipFree(db));
  CHECK(hipFree(dpa));
  CHECK(hipFree(dpb));
  CHECK(hipFree(dpc));
}

/* GemmEx with half and bfloat16 operands, as ggml calls it: A transposed, f16 A/B into f32 C
 * (compute 32F), all f16 (compute 16F, half scalars), bf16 A/B strided batched into f32 C.
 * The values are multiples of 1/4 below 2, exact in every type, so the products are too. */
static float quarter(int i) { return (float)((i * 5 + 3) % 8 - 4) * 0.25f; }
static unsigned short bf16_bits(float v) { /* exact for these values: the low 16 bits are 0 */
  unsigned int u;
  memcpy(&u, &v, 4);
  return (unsigned short)(u >> 16);
}
static void gemm_half(hipblasHandle_t h) {
  enum { m = 8, n = 6, k = 5, batch = 2 };
  _Float16 a16[batch * k * m], b16[batch * k * n], c16[m * n];
  unsigned short a_bf[batch * k * m], b_bf[batch * k * n];
  double ad[batch * k * m], bd[batch * k * n], cd[batch * m * n];
  float c32[batch * m * n];
  for (int i = 0; i < batch * k * m; i++) ad[i] = quarter(i), a16[i] = (_Float16)quarter(i), a_bf[i] = bf16_bits(quarter(i));
  for (int i = 0; i < batch * k * n; i++) bd[i] = quarter(i + 7), b16[i] = (_Float16)quarter(i + 7), b_bf[i] = bf16_bits(quarter(i + 7));
  for (int i = 0; i < batch * m * n; i++) c32[i] = quarter(i + 3);
  for (int i = 0; i < m * n; i++) c16[i] = (_Float16)c32[i];
  void *da16 = dev_upload(a16, sizeof a16), *db16 = dev_upload(b16, sizeof b16);
  void *da_bf = dev_upload(a_bf, sizeof a_bf), *db_bf = dev_upload(b_bf, sizeof b_bf);
  float got[batch * m * n];

  /* f16 A (k x m, transposed) and B (k x n) into f32 C. */
  for (int i = 0; i < m * n; i++) cd[i] = c32[i];
  ref_gemm(HIPBLAS_OP_T, HIPBLAS_OP_N, m, n, k, 2.0, ad, k, bd, k, 1.0, cd, m);
  float alpha = 2.0f, beta = 1.0f;
  float* dc = dev_upload(c32, m * n * sizeof(float));
  BLAS_OK(hipblasGemmEx(h, HIPBLAS_OP_T, HIPBLAS_OP_N, m, n, k, &alpha, da16, HIP_R_16F, k, db16, HIP_R_16F, k, &beta, dc, HIP_R_32F, m,
                        HIPBLAS_COMPUTE_32F, HIPBLAS_GEMM_DEFAULT));
  download(got, dc, m * n * sizeof(float));
  REQUIRE(max_rel_err_f(got, cd, m * n) < 1e-6, "gemmEx f16 x f16 -> f32");
  CHECK(hipFree(dc));

  /* All f16, half scalars (compute 16F). */
  for (int i = 0; i < m * n; i++) cd[i] = c32[i];
  ref_gemm(HIPBLAS_OP_T, HIPBLAS_OP_N, m, n, k, 2.0, ad, k, bd, k, 1.0, cd, m);
  _Float16 alpha16 = 2.0f16, beta16 = 1.0f16, got16[m * n];
  void* dc16 = dev_upload(c16, sizeof c16);
  BLAS_OK(hipblasGemmEx(h, HIPBLAS_OP_T, HIPBLAS_OP_N, m, n, k, &alpha16, da16, HIP_R_16F, k, db16, HIP_R_16F, k, &beta16, dc16, HIP_R_16F, m,
                        HIPBLAS_COMPUTE_16F, HIPBLAS_GEMM_DEFAULT));
  download(got16, dc16, sizeof got16);
  for (int i = 0; i < m * n; i++) got[i] = (float)got16[i];
  REQUIRE(max_rel_err_f(got, cd, m * n) < 1e-3, "gemmEx f16 x f16 -> f16");
  CHECK(hipFree(dc16));

  /* bf16 A (m x k) and B (k x n), strided batched into f32 C. */
  for (int i = 0; i < batch * m * n; i++) cd[i] = c32[i];
  for (int j = 0; j < batch; j++) ref_gemm(HIPBLAS_OP_N, HIPBLAS_OP_N, m, n, k, 2.0, ad + j * m * k, m, bd + j * k * n, k, 1.0, cd + j * m * n, m);
  dc = dev_upload(c32, sizeof c32);
  BLAS_OK(hipblasGemmStridedBatchedEx(h, HIPBLAS_OP_N, HIPBLAS_OP_N, m, n, k, &alpha, da_bf, HIP_R_16BF, m, m * k, db_bf, HIP_R_16BF, k, k * n,
                                      &beta, dc, HIP_R_32F, m, m * n, batch, HIPBLAS_COMPUTE_32F, HIPBLAS_GEMM_DEFAULT));
  download(got, dc, sizeof got);
  REQUIRE(max_rel_err_f(got, cd, batch * m * n) < 1e-6, "gemmStridedBatchedEx bf16 x bf16 -> f32");
  CHECK(hipFree(dc));
  CHECK(hipFree(da16));
  CHECK(hipFree(db16));
  CHECK(hipFree(da_bf));
  CHECK(hipFree(db_bf));
}

/* Level 1 with increments, host and device pointer modes. */
static void level1(hipblasHandle_t h) {
  enum { n = 50, inc = 2, len = n * inc };
  float x[len], y[len];
  fill_f(x, len, 30);
  fill_f(y, len, 31);
  x[17 * inc] = 5.0f;  /* the largest |x| */
  x[23 * inc] = 0.0f;  /* the smallest */
  float *dx = dev_upload(x, sizeof x), *dy = dev_upload(y, sizeof y);
  double dot = 0, nrm = 0, asum = 0;
  for (int i = 0; i < n; i++) dot += (double)x[i * inc] * y[i * inc], nrm += (double)x[i * inc] * x[i * inc], asum += fabs(x[i * inc]);
  float r;
  BLAS_OK(hipblasSdot(h, n, dx, inc, dy, inc, &r));
  REQUIRE(fabs(r - dot) < 1e-4, "sdot %g vs %g", r, dot);
  BLAS_OK(hipblasSnrm2(h, n, dx, inc, &r));
  REQUIRE(fabs(r - sqrt(nrm)) < 1e-4, "snrm2 %g vs %g", r, sqrt(nrm));
  BLAS_OK(hipblasSasum(h, n, dx, inc, &r));
  REQUIRE(fabs(r - asum) < 1e-4, "sasum %g vs %g", r, asum);
  int idx;
  BLAS_OK(hipblasIsamax(h, n, dx, inc, &idx));
  REQUIRE(idx == 18, "isamax %d (1-based, want 18)", idx);
  BLAS_OK(hipblasIsamin(h, n, dx, inc, &idx));
  REQUIRE(idx == 24, "isamin %d (1-based, want 24)", idx);
  BLAS_OK(hipblasSdot(h, 0, dx, inc, dy, inc, &r));
  REQUIRE(r == 0.0f, "sdot of n = 0 is %g", r);

  float alpha = -2.0f, got[len];
  BLAS_OK(hipblasSaxpy(h, n, &alpha, dx, inc, dy, inc));
  download(got, dy, sizeof got);
  for (int i = 0; i < len; i++) {
    float want = i % inc ? y[i] : alpha * x[i] + y[i];
    REQUIRE(fabs(got[i] - want) < 1e-5, "saxpy [%d] %g vs %g", i, got[i], want);
  }
  BLAS_OK(hipblasSscal(h, n, &alpha, dx, inc));
  download(got, dx, sizeof got);
  for (int i = 0; i < len; i++) REQUIRE(got[i] == (i % inc ? x[i] : alpha * x[i]), "sscal [%d]", i);
  CHECK(hipMemcpy(dx, x, sizeof x, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dy, y, sizeof y, hipMemcpyHostToDevice));
  BLAS_OK(hipblasSswap(h, n, dx, inc, dy, inc));
  download(got, dx, sizeof got);
  for (int i = 0; i < len; i++) REQUIRE(got[i] == (i % inc ? x[i] : y[i]), "sswap x [%d]", i);
  download(got, dy, sizeof got);
  for (int i = 0; i < len; i++) REQUIRE(got[i] == (i % inc ? y[i] : x[i]), "sswap y [%d]", i);
  BLAS_OK(hipblasScopy(h, n, dy, inc, dx, inc)); /* x = y (which now holds x) */
  download(got, dx, sizeof got);
  for (int i = 0; i < len; i += inc) REQUIRE(got[i] == x[i], "scopy [%d]", i);

  /* Device pointer mode: alpha read from device memory, the dot product written there. */
  step("device pointer mode");
  BLAS_OK(hipblasSetPointerMode(h, HIPBLAS_POINTER_MODE_DEVICE));
  hipblasPointerMode_t mode;
  BLAS_OK(hipblasGetPointerMode(h, &mode));
  REQUIRE(mode == HIPBLAS_POINTER_MODE_DEVICE, "pointer mode %d", mode);
  CHECK(hipMemcpy(dy, y, sizeof y, hipMemcpyHostToDevice));
  float scalars[2] = {alpha, 0};
  float* dscalars = dev_upload(scalars, sizeof scalars);
  BLAS_OK(hipblasSaxpy(h, n, dscalars, dx, inc, dy, inc));
  BLAS_OK(hipblasSdot(h, n, dx, inc, dx, inc, dscalars + 1));
  float dev_dot;
  download(&dev_dot, dscalars + 1, sizeof dev_dot);
  REQUIRE(fabs(dev_dot - nrm) < 1e-3, "sdot into device memory %g vs %g", dev_dot, nrm);
  download(got, dy, sizeof got);
  for (int i = 0; i < len; i += inc) REQUIRE(fabs(got[i] - (alpha * x[i] + y[i])) < 1e-5, "saxpy (device alpha) [%d]", i);
  BLAS_OK(hipblasSetPointerMode(h, HIPBLAS_POINTER_MODE_HOST));
  CHECK(hipFree(dscalars));
  CHECK(hipFree(dx));
  CHECK(hipFree(dy));

  /* Complex dot products: dotc conjugates x, dotu does not; Dznrm2. */
  hipblasDoubleComplex zx[n], zy[n];
  for (int i = 0; i < n; i++) zx[i].x = test_value(i, 32), zx[i].y = test_value(i, 33), zy[i].x = test_value(i, 34), zy[i].y = test_value(i, 35);
  double ur = 0, ui = 0, cr = 0, ci = 0, zn = 0;
  for (int i = 0; i < n; i++) {
    ur += zx[i].x * zy[i].x - zx[i].y * zy[i].y, ui += zx[i].x * zy[i].y + zx[i].y * zy[i].x;
    cr += zx[i].x * zy[i].x + zx[i].y * zy[i].y, ci += zx[i].x * zy[i].y - zx[i].y * zy[i].x;
    zn += zx[i].x * zx[i].x + zx[i].y * zx[i].y;
  }
  void *dzx = dev_upload(zx, sizeof zx), *dzy = dev_upload(zy, sizeof zy);
  hipblasDoubleComplex zr;
  BLAS_OK(hipblasZdotu(h, n, dzx, 1, dzy, 1, &zr));
  REQUIRE(fabs(zr.x - ur) < 1e-12 && fabs(zr.y - ui) < 1e-12, "zdotu (%g,%g) vs (%g,%g)", zr.x, zr.y, ur, ui);
  BLAS_OK(hipblasZdotc(h, n, dzx, 1, dzy, 1, &zr));
  REQUIRE(fabs(zr.x - cr) < 1e-12 && fabs(zr.y - ci) < 1e-12, "zdotc (%g,%g) vs (%g,%g)", zr.x, zr.y, cr, ci);
  double dn;
  BLAS_OK(hipblasDznrm2(h, n, dzx, 1, &dn));
  REQUIRE(fabs(dn - sqrt(zn)) < 1e-12, "dznrm2 %g vs %g", dn, sqrt(zn));
  double two = 2.0;
  BLAS_OK(hipblasZdscal(h, n, &two, dzx, 1));
  hipblasDoubleComplex zgot[n];
  download(zgot, dzx, sizeof zgot);
  for (int i = 0; i < n; i++) REQUIRE(zgot[i].x == 2 * zx[i].x && zgot[i].y == 2 * zx[i].y, "zdscal [%d]", i);
  CHECK(hipFree(dzx));
  CHECK(hipFree(dzy));
}

/* gemv (N and T) and ger in double; cgerc. */
static void level2(hipblasHandle_t h) {
  enum { m = 13, n = 9, lda = 16 };
  double a[lda * n], x[2 * 16], y[2 * 16];
  fill_d(a, lda * n, 40);
  fill_d(x, 32, 41);
  fill_d(y, 32, 42);
  double *da = dev_upload(a, sizeof a), *dx = dev_upload(x, sizeof x);
  double alpha = 1.25, beta = -1.0, got[32];
  for (int t = 0; t < 2; t++) {
    hipblasOperation_t op = t ? HIPBLAS_OP_T : HIPBLAS_OP_N;
    int ylen = t ? n : m, xlen = t ? m : n;
    double* dy = dev_upload(y, sizeof y);
    BLAS_OK(hipblasDgemv(h, op, m, n, &alpha, da, lda, dx, 2, &beta, dy, 1));
    download(got, dy, sizeof got);
    for (int r = 0; r < ylen; r++) {
      double s = 0;
      for (int l = 0; l < xlen; l++) s += (t ? a[l + r * lda] : a[r + l * lda]) * x[l * 2];
      double want = alpha * s + beta * y[r];
      REQUIRE(fabs(got[r] - want) < 1e-12, "dgemv op %d [%d]: %g vs %g", op, r, got[r], want);
    }
    REQUIRE(got[ylen] == y[ylen], "dgemv wrote past y");
    CHECK(hipFree(dy));
  }
  double* dy = dev_upload(y, sizeof y);
  BLAS_OK(hipblasDger(h, m, n, &alpha, dx, 1, dy, 2, da, lda));
  double ga[lda * n];
  download(ga, da, sizeof ga);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < lda; i++) {
      double want = i < m ? a[i + j * lda] + alpha * x[i] * y[j * 2] : a[i + j * lda];
      REQUIRE(fabs(ga[i + j * lda] - want) < 1e-12, "dger (%d,%d)", i, j);
    }
  CHECK(hipFree(da));
  CHECK(hipFree(dx));
  CHECK(hipFree(dy));

  hipblasComplex ca[4 * 3] = {{0}}, cx[4], cy[3], calpha = {0, 1};
  for (int i = 0; i < 4; i++) cx[i].x = (float)i, cx[i].y = 1;
  for (int j = 0; j < 3; j++) cy[j].x = 1, cy[j].y = (float)j;
  void *dca = dev_upload(ca, sizeof ca), *dcx = dev_upload(cx, sizeof cx), *dcy = dev_upload(cy, sizeof cy);
  BLAS_OK(hipblasCgerc(h, 4, 3, &calpha, dcx, 1, dcy, 1, dca, 4));
  hipblasComplex cg[12];
  download(cg, dca, sizeof cg);
  for (int j = 0; j < 3; j++)
    for (int i = 0; i < 4; i++) {
      /* alpha * x_i * conj(y_j) = i * (i + 1i) * (1 - j i) */
      double pr = cx[i].x * cy[j].x + cx[i].y * cy[j].y, pi = cx[i].y * cy[j].x - cx[i].x * cy[j].y;
      double wr = -pi, wi = pr;
      REQUIRE(fabs(cg[i + 4 * j].x - wr) < 1e-5 && fabs(cg[i + 4 * j].y - wi) < 1e-5, "cgerc (%d,%d)", i, j);
    }
  CHECK(hipFree(dca));
  CHECK(hipFree(dcx));
  CHECK(hipFree(dcy));
}

int main(void) {
  begin("hipblas_ops");
  hipblasHandle_t h;
  BLAS_OK(hipblasCreate(&h));
  hipStream_t s, got;
  CHECK(hipStreamCreate(&s));
  BLAS_OK(hipblasGetStream(h, &got));
  REQUIRE(got == NULL, "a new handle's stream is the null stream");
  BLAS_OK(hipblasSetStream(h, s));
  BLAS_OK(hipblasGetStream(h, &got));
  REQUIRE(got == s, "hipblasGetStream");
  hipblasAtomicsMode_t atomics;
  BLAS_OK(hipblasSetAtomicsMode(h, HIPBLAS_ATOMICS_ALLOWED));
  BLAS_OK(hipblasGetAtomicsMode(h, &atomics));
  REQUIRE(atomics == HIPBLAS_ATOMICS_ALLOWED, "atomics mode");
  step("gemm s/d, every transpose pair");
  gemm_real(h);
  step("gemm c/z");
  gemm_complex(h);
  step("gemm forms");
  gemm_forms(h);
  step("gemmEx with half and bfloat16 operands");
  gemm_half(h);
  step("level 1");
  level1(h);
  step("level 2");
  level2(h);
  step("null stream");
  BLAS_OK(hipblasSetStream(h, NULL));
  gemm_forms(h);
  BLAS_OK(hipblasDestroy(h));
  CHECK(hipStreamDestroy(s));
  CHECK(hipDeviceSynchronize());
  printf("PASS hipblas_ops\n");
  return 0;
}
