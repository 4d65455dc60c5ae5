/*
 * Pitched memsets: hipMemset2D/3D (+Async, _spt), hipMemsetD2D8/16/32 (+Async), and the other
 * _spt memory entry points and hipMemcpyWithStream / hipMemcpyBatchAsync. Every fill is read
 * back whole: the rows hold the value, the pitch padding and the bytes past the extent keep
 * what was there. Argument errors: null pointers, a row wider than the pitch, an extent
 * running past its allocation, a pointer that is no allocation; empty extents succeed.
 */
#include "check.h"

#define GUARD 0xa5

/* A device buffer of `len` bytes, every byte GUARD. */
static uint8_t* guarded(size_t len) {
  void* d = NULL;
  CHECK(hipMalloc(&d, len));
  CHECK(hipMemset(d, GUARD, len));
  return (uint8_t*)d;
}

static uint8_t* read_back(const void* d, size_t len) {
  uint8_t* h = xmalloc(len);
  CHECK(hipMemcpy(h, d, len, hipMemcpyDeviceToHost));
  return h;
}

/* Checks `h` (an image of `len` bytes) holds `elem`-byte little-endian `value` in `depth`
 * slices of `height` rows of `width` elements, and GUARD everywhere else. */
static void expect_fill(const uint8_t* h, size_t len, size_t pitch, size_t slice_pitch, size_t width,
                        size_t height, size_t depth, size_t elem, uint32_t value, const char* what) {
  for (size_t at = 0; at < len; at++) {
    size_t z = at / slice_pitch, y = (at % slice_pitch) / pitch, x = (at % slice_pitch) % pitch;
    int inside = z < depth && y < height && x < width * elem;
    uint8_t want = inside ? (uint8_t)(value >> (8 * (x % elem))) : GUARD;
    REQUIRE(h[at] == want, "%s: byte %zu (slice %zu row %zu col %zu) is 0x%02x, expected 0x%02x", what, at, z,
            y, x, h[at], want);
  }
}

static void memset_2d(void) {
  step("hipMemset2D / hipMemset2DAsync / hipMemset2D_spt");
  const size_t pitch = 64, width = 40, height = 5, len = pitch * (height + 1);
  uint8_t* d = guarded(len);
  CHECK(hipMemset2D(d, pitch, 0x3c, width, height));
  uint8_t* h = read_back(d, len);
  expect_fill(h, len, pitch, len, width, height, 1, 1, 0x3c, "hipMemset2D");
  free(h);

  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  CHECK(hipMemset(d, GUARD, len));
  CHECK(hipMemset2DAsync(d + pitch, pitch, 0x1ff /* truncated to a byte */, 7, 3, s));
  CHECK(hipStreamSynchronize(s));
  h = read_back(d, len);
  expect_fill(h + pitch, len - pitch, pitch, len, 7, 3, 1, 1, 0xff, "hipMemset2DAsync");
  REQUIRE(h[0] == GUARD && h[pitch - 1] == GUARD, "row 0 untouched");
  free(h);

  CHECK(hipMemset(d, GUARD, len));
  CHECK(hipMemset2D_spt(d, pitch, 0x11, pitch, height)); /* width == pitch: contiguous */
  h = read_back(d, len);
  expect_fill(h, len, pitch, len, pitch, height, 1, 1, 0x11, "hipMemset2D_spt");
  free(h);
  CHECK(hipMemset(d, GUARD, len));
  CHECK(hipMemset2DAsync_spt(d, pitch, 0x22, 1, height, NULL));
  CHECK(hipStreamSynchronize(hipStreamPerThread));
  h = read_back(d, len);
  expect_fill(h, len, pitch, len, 1, height, 1, 1, 0x22, "hipMemset2DAsync_spt");
  free(h);

  /* Errors, in ROCm's order: empty extents succeed before anything is checked. */
  CHECK(hipMemset2D(NULL, pitch, 1, 0, height));
  CHECK(hipMemset2D(NULL, pitch, 1, width, 0));
  EXPECT_ERR(hipMemset2D(NULL, pitch, 1, width, height), hipErrorInvalidValue);
  EXPECT_ERR(hipMemset2D(d, 16, 1, 17, 2), hipErrorInvalidValue);       /* row wider than pitch */
  EXPECT_ERR(hipMemset2D(d, 0, 1, 1, 1), hipErrorInvalidValue);         /* zero pitch */
  EXPECT_ERR(hipMemset2D(d, pitch, 1, width, height + 2), hipErrorInvalidValue); /* past the end */
  EXPECT_ERR(hipMemset2D(d + pitch, pitch, 1, pitch, height + 1), hipErrorInvalidValue);
  uint8_t local[64];
  EXPECT_ERR(hipMemset2D(local, 8, 1, 8, 2), hipErrorInvalidValue);     /* not device memory */
  /* An asynchronous request is checked on the worker: its refusal may come with the call or,
   * sent without waiting, with the next synchronising call. */
  hipError_t async_err = hipMemset2DAsync(d, pitch, 1, width, height + 2, s);
  if (async_err == hipSuccess) async_err = hipStreamSynchronize(s);
  EXPECT_ERR(async_err, hipErrorInvalidValue);
  (void)hipGetLastError();
  /* Nothing was written by the refused calls. */
  CHECK(hipStreamSynchronize(s));
  h = read_back(d, len);
  expect_fill(h, len, pitch, len, 1, height, 1, 1, 0x22, "after refused memsets");
  free(h);
  CHECK(hipStreamDestroy(s));
  CHECK(hipFree(d));
}

static void memset_3d(void) {
  step("hipMemset3D / hipMemset3DAsync / _spt");
  const size_t pitch = 32, ysize = 6, depth = 3, slice = pitch * ysize, len = slice * (depth + 1);
  uint8_t* d = guarded(len);
  hipPitchedPtr p = make_hipPitchedPtr(d, pitch, 20, ysize);
  CHECK(hipMemset3D(p, 0x5a, make_hipExtent(20, 4, depth)));
  uint8_t* h = read_back(d, len);
  expect_fill(h, len, pitch, slice, 20, 4, depth, 1, 0x5a, "hipMemset3D");
  free(h);

  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  CHECK(hipMemset(d, GUARD, len));
  CHECK(hipMemset3DAsync(p, 0x77, make_hipExtent(pitch, ysize, depth + 1), s)); /* contiguous */
  CHECK(hipStreamSynchronize(s));
  h = read_back(d, len);
  expect_fill(h, len, pitch, slice, pitch, ysize, depth + 1, 1, 0x77, "hipMemset3DAsync");
  free(h);

  CHECK(hipMemset(d, GUARD, len));
  CHECK(hipMemset3D_spt(p, 0x01, make_hipExtent(3, 2, 2)));
  h = read_back(d, len);
  expect_fill(h, len, pitch, slice, 3, 2, 2, 1, 0x01, "hipMemset3D_spt");
  free(h);
  CHECK(hipMemset(d, GUARD, len));
  CHECK(hipMemset3DAsync_spt(p, 0x02, make_hipExtent(5, 1, depth), NULL));
  CHECK(hipStreamSynchronize(hipStreamPerThread));
  h = read_back(d, len);
  expect_fill(h, len, pitch, slice, 5, 1, depth, 1, 0x02, "hipMemset3DAsync_spt");
  free(h);

  CHECK(hipMemset3D(p, 1, make_hipExtent(0, 4, depth)));
  CHECK(hipMemset3D(p, 1, make_hipExtent(20, 4, 0)));
  EXPECT_ERR(hipMemset3D(make_hipPitchedPtr(NULL, pitch, 20, ysize), 1, make_hipExtent(1, 1, 1)), hipErrorInvalidValue);
  EXPECT_ERR(hipMemset3D(p, 1, make_hipExtent(pitch + 1, 1, 1)), hipErrorInvalidValue);
  EXPECT_ERR(hipMemset3D(p, 1, make_hipExtent(pitch, ysize, depth + 2)), hipErrorInvalidValue);
  /* Slices whose rows would run into the next slice. */
  EXPECT_ERR(hipMemset3D(p, 1, make_hipExtent(4, ysize + 1, 2)), hipErrorInvalidValue);
  CHECK(hipStreamDestroy(s));
  CHECK(hipFree(d));
}

static void memset_d2d(void) {
  step("hipMemsetD2D8/16/32 (+Async)");
  const size_t pitch = 48, height = 4, len = pitch * (height + 1);
  uint8_t* d = guarded(len);
  CHECK(hipMemsetD2D8(d, pitch, 0xc3, 33, height));
  uint8_t* h = read_back(d, len);
  expect_fill(h, len, pitch, len, 33, height, 1, 1, 0xc3, "hipMemsetD2D8");
  free(h);

  CHECK(hipMemset(d, GUARD, len));
  CHECK(hipMemsetD2D16(d, pitch, 0xbeef, 20, height));
  h = read_back(d, len);
  expect_fill(h, len, pitch, len, 20, height, 1, 2, 0xbeef, "hipMemsetD2D16");
  free(h);

  CHECK(hipMemset(d, GUARD, len));
  CHECK(hipMemsetD2D32(d, pitch, 0x01020304u, 11, height));
  h = read_back(d, len);
  expect_fill(h, len, pitch, len, 11, height, 1, 4, 0x01020304u, "hipMemsetD2D32");
  free(h);

  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  CHECK(hipMemset(d, GUARD, len));
  CHECK(hipMemsetD2D8Async(d, pitch, 0x44, 2, height, s));
  CHECK(hipStreamSynchronize(s));
  h = read_back(d, len);
  expect_fill(h, len, pitch, len, 2, height, 1, 1, 0x44, "hipMemsetD2D8Async");
  free(h);
  CHECK(hipMemset(d, GUARD, len));
  CHECK(hipMemsetD2D16Async(d, pitch, 0x1234, 24, height, s));
  CHECK(hipStreamSynchronize(s));
  h = read_back(d, len);
  expect_fill(h, len, pitch, len, 24, height, 1, 2, 0x1234, "hipMemsetD2D16Async");
  free(h);
  CHECK(hipMemset(d, GUARD, len));
  CHECK(hipMemsetD2D32Async(d, pitch, 0xdeadbeefu, 12, height + 1, s));
  CHECK(hipStreamSynchronize(s));
  h = read_back(d, len);
  expect_fill(h, len, pitch, len, 12, height + 1, 1, 4, 0xdeadbeefu, "hipMemsetD2D32Async");
  free(h);

  EXPECT_ERR(hipMemsetD2D32(d, pitch, 1, 13, 2), hipErrorInvalidValue); /* 52 bytes > pitch 48 */
  EXPECT_ERR(hipMemsetD2D16(d, pitch, 1, 24, height + 2), hipErrorInvalidValue);
  EXPECT_ERR(hipMemsetD2D8(NULL, pitch, 1, 1, 1), hipErrorInvalidValue);
  CHECK(hipMemsetD2D8(NULL, pitch, 1, 0, 1));
  CHECK(hipStreamDestroy(s));
  CHECK(hipFree(d));
}

static void spt_and_stream_copies(void) {
  step("_spt copies and memsets, hipMemcpyWithStream");
  const size_t n = 4096;
  uint8_t* src = xmalloc(n);
  uint8_t* back = xmalloc(n);
  fill_pattern(src, n, 7);
  void *a = NULL, *b = NULL;
  CHECK(hipMalloc(&a, n));
  CHECK(hipMalloc(&b, n));
  CHECK(hipMemcpy_spt(a, src, n, hipMemcpyHostToDevice));
  CHECK(hipMemcpy_spt(b, a, n, hipMemcpyDefault));
  memset(back, 0, n);
  CHECK(hipMemcpy_spt(back, b, n, hipMemcpyDeviceToHost));
  REQUIRE(find_mismatch(back, n, 7) == (size_t)-1, "hipMemcpy_spt round trip");

  CHECK(hipMemset_spt(a, 0x66, n));
  memset(back, 0, n);
  CHECK(hipMemcpyAsync_spt(back, a, n, hipMemcpyDeviceToHost, NULL));
  CHECK(hipStreamSynchronize(hipStreamPerThread));
  for (size_t i = 0; i < n; i++) REQUIRE(back[i] == 0x66, "hipMemset_spt byte %zu is 0x%02x", i, back[i]);
  CHECK(hipMemsetAsync_spt(a, 0x67, n / 2, hipStreamPerThread));
  CHECK(hipStreamSynchronize(hipStreamPerThread));
  CHECK(hipMemcpy(back, a, n, hipMemcpyDeviceToHost));
  REQUIRE(back[0] == 0x67 && back[n / 2 - 1] == 0x67 && back[n / 2] == 0x66, "hipMemsetAsync_spt covers half");

  /* 2D copies on the per-thread stream: 8 rows of 100 bytes at pitch 128. */
  CHECK(hipMemset(b, 0, n));
  CHECK(hipMemcpy2D_spt(b, 128, src, 100, 100, 8, hipMemcpyHostToDevice));
  memset(back, 0xff, n);
  CHECK(hipMemcpy2DAsync_spt(back, 100, b, 128, 100, 8, hipMemcpyDeviceToHost, NULL));
  CHECK(hipStreamSynchronize(hipStreamPerThread));
  REQUIRE(find_mismatch(back, 800, 7) == (size_t)-1, "hipMemcpy2D_spt round trip");
  EXPECT_ERR(hipMemcpy2D_spt(b, 64, src, 100, 100, 8, hipMemcpyHostToDevice), hipErrorInvalidPitchValue);

  /* Symbol copies on the per-thread stream: the arguments are checked as by the plain forms
   * (a variable nothing registered is hipErrorInvalidSymbol). */
  static int not_a_device_variable;
  EXPECT_ERR(hipMemcpyToSymbol_spt(NULL, src, 4, 0, hipMemcpyHostToDevice), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpyToSymbol_spt(&not_a_device_variable, src, 4, 0, hipMemcpyHostToDevice), hipErrorInvalidSymbol);
  EXPECT_ERR(hipMemcpyToSymbol_spt(&not_a_device_variable, src, 4, 0, hipMemcpyDeviceToHost),
             hipErrorInvalidMemcpyDirection);
  EXPECT_ERR(hipMemcpyFromSymbol_spt(back, &not_a_device_variable, 4, 0, hipMemcpyDeviceToHost), hipErrorInvalidSymbol);
  EXPECT_ERR(hipMemcpyFromSymbol_spt(back, NULL, 4, 0, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpyToSymbolAsync_spt(&not_a_device_variable, src, 4, 0, hipMemcpyHostToDevice, NULL),
             hipErrorInvalidSymbol);
  EXPECT_ERR(hipMemcpyFromSymbolAsync_spt(back, &not_a_device_variable, 4, 0, hipMemcpyHostToDevice, NULL),
             hipErrorInvalidMemcpyDirection);

  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  fill_pattern(src, n, 9);
  CHECK(hipMemcpyWithStream(a, src, n, hipMemcpyHostToDevice, s));
  memset(back, 0, n);
  CHECK(hipMemcpyWithStream(back, a, n, hipMemcpyDeviceToHost, s)); /* synchronous: no sync call */
  REQUIRE(find_mismatch(back, n, 9) == (size_t)-1, "hipMemcpyWithStream round trip");
  EXPECT_ERR(hipMemcpyWithStream(NULL, src, n, hipMemcpyHostToDevice, s), hipErrorInvalidValue);
  CHECK(hipStreamDestroy(s));
  CHECK(hipFree(a));
  CHECK(hipFree(b));
  free(src);
  free(back);
}

static void batch_copies(void) {
  step("hipMemcpyBatchAsync");
  enum { N = 3, LEN = 1000 };
  uint8_t* host[N];
  uint8_t* back[N];
  void* dev[N];
  void* dsts[N];
  void* srcs[N];
  size_t sizes[N];
  for (int i = 0; i < N; i++) {
    host[i] = xmalloc(LEN);
    back[i] = xmalloc(LEN);
    fill_pattern(host[i], LEN, 100 + (uint32_t)i);
    CHECK(hipMalloc(&dev[i], LEN));
    dsts[i] = dev[i];
    srcs[i] = host[i];
    sizes[i] = LEN - (size_t)i; /* distinct sizes */
  }
  hipMemcpyAttributes attr;
  memset(&attr, 0, sizeof attr);
  attr.srcAccessOrder = hipMemcpySrcAccessOrderStream;
  size_t first = 0, fail = 12345;
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  CHECK(hipMemcpyBatchAsync(dsts, srcs, sizes, N, &attr, &first, 1, &fail, s));
  /* Back again, device to host, in a second batch with two attribute ranges. */
  hipMemcpyAttributes attrs[2] = {attr, attr};
  attrs[1].srcAccessOrder = hipMemcpySrcAccessOrderAny;
  size_t starts[2] = {0, 2};
  for (int i = 0; i < N; i++) {
    memset(back[i], 0, LEN);
    dsts[i] = back[i];
    srcs[i] = dev[i];
  }
  CHECK(hipMemcpyBatchAsync(dsts, srcs, sizes, N, attrs, starts, 2, &fail, s));
  CHECK(hipStreamSynchronize(s));
  for (int i = 0; i < N; i++) {
    REQUIRE(find_mismatch(back[i], sizes[i], 100 + (uint32_t)i) == (size_t)-1, "batch copy %d", i);
    REQUIRE(sizes[i] == LEN || back[i][LEN - 1] == 0, "batch copy %d wrote past its size", i);
  }

  /* Argument errors: failIdx is SIZE_MAX for them. */
  fail = 0;
  EXPECT_ERR(hipMemcpyBatchAsync(dsts, srcs, sizes, 0, &attr, &first, 1, &fail, s), hipErrorInvalidValue);
  REQUIRE(fail == SIZE_MAX, "failIdx %zu for a batch of 0", fail);
  EXPECT_ERR(hipMemcpyBatchAsync(NULL, srcs, sizes, N, &attr, &first, 1, &fail, s), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpyBatchAsync(dsts, srcs, sizes, N, &attr, &first, 0, &fail, s), hipErrorInvalidValue);
  size_t bad_first = 1;
  EXPECT_ERR(hipMemcpyBatchAsync(dsts, srcs, sizes, N, &attr, &bad_first, 1, &fail, s), hipErrorInvalidValue);
  size_t bad_starts[2] = {0, N};
  EXPECT_ERR(hipMemcpyBatchAsync(dsts, srcs, sizes, N, attrs, bad_starts, 2, &fail, s), hipErrorInvalidValue);
  hipMemcpyAttributes bad = attr;
  bad.srcAccessOrder = hipMemcpySrcAccessOrderInvalid;
  EXPECT_ERR(hipMemcpyBatchAsync(dsts, srcs, sizes, N, &bad, &first, 1, &fail, s), hipErrorInvalidValue);
  REQUIRE(fail == SIZE_MAX, "failIdx %zu for bad attributes", fail);
  /* A copy that fails names itself: the second copy's destination is null. */
  dsts[1] = NULL;
  EXPECT_ERR(hipMemcpyBatchAsync(dsts, srcs, sizes, N, &attr, &first, 1, &fail, s), hipErrorInvalidValue);
  REQUIRE(fail == 1, "failIdx %zu, expected 1", fail);
  CHECK(hipStreamSynchronize(s));
  CHECK(hipStreamDestroy(s));
  for (int i = 0; i < N; i++) {
    CHECK(hipFree(dev[i]));
    free(host[i]);
    free(back[i]);
  }
}

int main(void) {
  begin("memset2d3d");
  memset_2d();
  memset_3d();
  memset_d2d();
  spt_and_stream_copies();
  batch_copies();
  printf("PASS memset2d3d\n");
  return 0;
}
