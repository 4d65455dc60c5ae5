/*
 * Pitched memory and 2D copies: hipMallocPitch / hipMemAllocPitch (ROCm's 256-byte pitch,
 * zero sizes, elementSizeBytes), hipMemcpy2D and hipMemcpy2DAsync in every direction
 * (H2D, D2H, D2D, H2H, Default) with the bytes between rows checked untouched, copies large
 * enough to be split into several requests, rows wider than one request, and the error codes
 * ROCm returns (pitch < width, bad kind, null pointers, foreign pointers).
 */
#include "check.h"

#define GUARD 0xee

static hipStream_t stream;

/* A host image of `height` rows `pitch` apart: row r holds pattern (seed + r), the gaps GUARD. */
static uint8_t* host_rows(size_t pitch, size_t width, size_t height, uint32_t seed) {
  uint8_t* buf = xmalloc(pitch * height);
  memset(buf, GUARD, pitch * height);
  for (size_t r = 0; r < height; r++) fill_pattern(buf + r * pitch, width, seed + (uint32_t)r);
  return buf;
}

/* Checks `buf` holds the rows of host_rows(pitch, width, height, seed), gaps GUARD. */
static void expect_rows(const uint8_t* buf, size_t pitch, size_t width, size_t height,
                        uint32_t seed, const char* what) {
  for (size_t r = 0; r < height; r++) {
    size_t at = find_mismatch(buf + r * pitch, width, seed + (uint32_t)r);
    REQUIRE(at == (size_t)-1, "%s: row %zu byte %zu is 0x%02x, expected 0x%02x", what, r, at,
            buf[r * pitch + at], pattern_byte(seed + (uint32_t)r, at));
    for (size_t i = width; i < pitch && r + 1 < height; i++)
      REQUIRE(buf[r * pitch + i] == GUARD, "%s: gap byte %zu of row %zu is 0x%02x", what, i, r,
              buf[r * pitch + i]);
  }
}

/* Reads a device image of pitch*height bytes back whole. */
static uint8_t* device_image(const void* dev, size_t pitch, size_t height) {
  uint8_t* back = xmalloc(pitch * height);
  CHECK(hipMemcpy(back, dev, pitch * height, hipMemcpyDeviceToHost));
  return back;
}

static void pitch_allocations(void) {
  step("hipMallocPitch / hipMemAllocPitch");
  void* p = NULL;
  size_t pitch = 0;
  CHECK(hipMallocPitch(&p, &pitch, 100, 7));
  REQUIRE(p != NULL && pitch == 256, "pitch %zu for 100-byte rows (ROCm aligns to 256)", pitch);
  size_t size = 0;
  CHECK(hipMemPtrGetInfo(p, &size));
  REQUIRE(size == 256 * 7, "pitched allocation is %zu bytes, expected %d", size, 256 * 7);
  CHECK(hipFree(p));
  CHECK(hipMallocPitch(&p, &pitch, 256, 2));
  REQUIRE(pitch == 256, "256-byte rows keep pitch 256, got %zu", pitch);
  CHECK(hipFree(p));
  CHECK(hipMallocPitch(&p, &pitch, 257, 2));
  REQUIRE(pitch == 512, "257-byte rows get pitch 512, got %zu", pitch);
  CHECK(hipFree(p));

  /* Zero sizes: a null pointer, the pitch left alone. */
  p = (void*)0x1;
  pitch = 12345;
  CHECK(hipMallocPitch(&p, &pitch, 0, 5));
  REQUIRE(p == NULL && pitch == 12345, "zero width: ptr %p pitch %zu", p, pitch);
  p = (void*)0x1;
  CHECK(hipMallocPitch(&p, &pitch, 5, 0));
  REQUIRE(p == NULL, "zero height: ptr %p", p);
  EXPECT_ERR(hipMallocPitch(NULL, &pitch, 16, 16), hipErrorInvalidValue);
  EXPECT_ERR(hipMallocPitch(&p, NULL, 16, 16), hipErrorInvalidValue);

  hipDeviceptr_t d = NULL;
  CHECK(hipMemAllocPitch(&d, &pitch, 64, 3, 4));
  REQUIRE(d != NULL && pitch == 256, "hipMemAllocPitch pitch %zu", pitch);
  CHECK(hipFree(d));
  CHECK(hipMemAllocPitch(&d, &pitch, 64, 3, 16));
  CHECK(hipFree(d));
  EXPECT_ERR(hipMemAllocPitch(&d, &pitch, 64, 3, 2), hipErrorInvalidValue);
  EXPECT_ERR(hipMemAllocPitch(&d, &pitch, 64, 3, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMemAllocPitch(&d, &pitch, 0, 3, 4), hipErrorInvalidValue);
  EXPECT_ERR(hipMemAllocPitch(&d, &pitch, 64, 0, 4), hipErrorInvalidValue);
  EXPECT_ERR(hipMemAllocPitch(NULL, &pitch, 64, 3, 4), hipErrorInvalidValue);
}

/* Upload, device-to-device, download and host-to-host of one shape, sync or on `s`. */
static void round_trip(size_t width, size_t height, size_t hpitch, int async, uint32_t seed,
                       hipMemcpyKind h2d, hipMemcpyKind d2d, hipMemcpyKind d2h) {
  char what[160];
  snprintf(what, sizeof what, "%zux%zu host pitch %zu %s kinds %d/%d/%d", width, height, hpitch,
           async ? "async" : "sync", (int)h2d, (int)d2d, (int)d2h);
  step(what);
  void *a = NULL, *b = NULL;
  size_t apitch = 0, bpitch = 0;
  CHECK(hipMallocPitch(&a, &apitch, width, height));
  /* A second area with a different pitch than the first. */
  CHECK(hipMallocPitch(&b, &bpitch, width + 300, height));
  CHECK(hipMemset(a, GUARD, apitch * height));
  CHECK(hipMemset(b, GUARD, bpitch * height));
  uint8_t* src = host_rows(hpitch, width, height, seed);
  uint8_t* dst = xmalloc(hpitch * height);
  memset(dst, GUARD, hpitch * height);

  if (async) {
    CHECK(hipMemcpy2DAsync(a, apitch, src, hpitch, width, height, h2d, stream));
    CHECK(hipMemcpy2DAsync(b, bpitch, a, apitch, width, height, d2d, stream));
    CHECK(hipMemcpy2DAsync(dst, hpitch, b, bpitch, width, height, d2h, stream));
    CHECK(hipStreamSynchronize(stream));
  } else {
    CHECK(hipMemcpy2D(a, apitch, src, hpitch, width, height, h2d));
    CHECK(hipMemcpy2D(b, bpitch, a, apitch, width, height, d2d));
    CHECK(hipMemcpy2D(dst, hpitch, b, bpitch, width, height, d2h));
  }
  expect_rows(dst, hpitch, width, height, seed, what);
  /* The device gaps between rows were not written. */
  uint8_t* image = device_image(a, apitch, height);
  expect_rows(image, apitch, width, height, seed, "device rows of a");
  free(image);
  image = device_image(b, bpitch, height);
  expect_rows(image, bpitch, width, height, seed, "device rows of b");
  free(image);

  /* Host to host through the same API. */
  uint8_t* h2 = xmalloc(hpitch * height);
  memset(h2, GUARD, hpitch * height);
  CHECK(hipMemcpy2D(h2, hpitch, src, hpitch, width, height, async ? hipMemcpyDefault : hipMemcpyHostToHost));
  expect_rows(h2, hpitch, width, height, seed, "host to host");
  free(h2);
  free(src);
  free(dst);
  CHECK(hipFree(a));
  CHECK(hipFree(b));
}

static void copies(void) {
  /* Small, packed host rows (pitch == width) and padded host rows. */
  round_trip(100, 9, 100, 0, 1, hipMemcpyHostToDevice, hipMemcpyDeviceToDevice, hipMemcpyDeviceToHost);
  round_trip(100, 9, 131, 0, 2, hipMemcpyHostToDevice, hipMemcpyDeviceToDevice, hipMemcpyDeviceToHost);
  round_trip(100, 9, 131, 1, 3, hipMemcpyHostToDevice, hipMemcpyDeviceToDevice, hipMemcpyDeviceToHost);
  round_trip(1, 1, 1, 0, 4, hipMemcpyDefault, hipMemcpyDefault, hipMemcpyDefault);
  round_trip(33, 17, 40, 1, 5, hipMemcpyDefault, hipMemcpyDefault, hipMemcpyDefault);
  /* 12 MiB of rows: several requests each way (4 MiB chunks), rows not dividing a chunk. */
  round_trip(3000, 4200, 3001, 0, 6, hipMemcpyHostToDevice, hipMemcpyDeviceToDevice, hipMemcpyDeviceToHost);
  round_trip(3000, 4200, 3000, 1, 7, hipMemcpyDefault, hipMemcpyDefault, hipMemcpyDefault);
  /* Rows wider than one request. */
  round_trip((5u << 20) + 7, 3, (5u << 20) + 100, 0, 8, hipMemcpyHostToDevice, hipMemcpyDeviceToDevice, hipMemcpyDeviceToHost);
  round_trip((5u << 20) + 7, 2, (5u << 20) + 7, 1, 9, hipMemcpyHostToDevice, hipMemcpyDeviceToDevice, hipMemcpyDeviceToHost);
}

static void interior_rows(void) {
  step("2D copy into the middle of an allocation");
  uint8_t* dev = NULL;
  CHECK(hipMalloc((void**)&dev, 4096));
  CHECK(hipMemset(dev, GUARD, 4096));
  uint8_t* src = host_rows(10, 10, 5, 20);
  /* 5 rows of 10 bytes, 64 bytes apart, starting at offset 1000. */
  CHECK(hipMemcpy2D(dev + 1000, 64, src, 10, 10, 5, hipMemcpyHostToDevice));
  uint8_t* back = xmalloc(4096);
  CHECK(hipMemcpy(back, dev, 4096, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < 1000; i++) REQUIRE(back[i] == GUARD, "byte %zu before the rows was written", i);
  expect_rows(back + 1000, 64, 10, 5, 20, "interior rows");
  for (size_t i = 1000 + 4 * 64 + 10; i < 4096; i++) REQUIRE(back[i] == GUARD, "byte %zu after the rows was written", i);

  step("2D copy between interleaved rows of one allocation");
  /* The same rows, 20 bytes further right: no byte is both read and written. */
  CHECK(hipMemcpy2D(dev + 1020, 64, dev + 1000, 64, 10, 5, hipMemcpyDeviceToDevice));
  CHECK(hipMemcpy(back, dev, 4096, hipMemcpyDeviceToHost));
  for (size_t r = 0; r < 5; r++) {
    size_t at = find_mismatch(back + 1020 + r * 64, 10, 20 + (uint32_t)r);
    REQUIRE(at == (size_t)-1, "copied row %zu differs at %zu", r, at);
    REQUIRE(back[1010 + r * 64] == GUARD, "gap after row %zu was written", r);
  }
  free(back);
  free(src);
  CHECK(hipFree(dev));
}

static void errors(void) {
  step("errors");
  void* dev = NULL;
  size_t pitch = 0;
  CHECK(hipMallocPitch(&dev, &pitch, 64, 4));
  uint8_t host[1024];
  /* Pitch smaller than the width. */
  EXPECT_ERR(hipMemcpy2D(dev, pitch, host, 32, 64, 4, hipMemcpyHostToDevice), hipErrorInvalidPitchValue);
  EXPECT_ERR(hipMemcpy2D(dev, 32, host, 64, 64, 4, hipMemcpyHostToDevice), hipErrorInvalidPitchValue);
  EXPECT_ERR(hipMemcpy2DAsync(host, 10, dev, pitch, 64, 4, hipMemcpyDeviceToHost, stream), hipErrorInvalidPitchValue);
  /* A bad kind is reported before anything else. */
  EXPECT_ERR(hipMemcpy2D(dev, 1, host, 1, 64, 4, (hipMemcpyKind)7), hipErrorInvalidMemcpyDirection);
  /* Empty copies succeed, even with pitches that would be wrong. */
  CHECK(hipMemcpy2D(dev, 1, host, 1, 0, 4, hipMemcpyHostToDevice));
  CHECK(hipMemcpy2D(dev, 1, host, 1, 64, 0, hipMemcpyHostToDevice));
  CHECK(hipMemcpy2D(NULL, 64, NULL, 64, 64, 0, hipMemcpyHostToDevice));
  /* Null pointers. */
  EXPECT_ERR(hipMemcpy2D(NULL, pitch, host, 64, 64, 4, hipMemcpyHostToDevice), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpy2D(dev, pitch, NULL, 64, 64, 4, hipMemcpyHostToDevice), hipErrorInvalidValue);
  /* Rows running past the end of the allocation. */
  EXPECT_ERR(hipMemcpy2D(dev, pitch, host, 64, 64, 5, hipMemcpyHostToDevice), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpy2D(host, 64, dev, pitch, 64, 5, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpy2D(dev, pitch, dev, pitch, 64, 5, hipMemcpyDeviceToDevice), hipErrorInvalidValue);
  /* The allocation is intact and usable afterwards. */
  uint8_t* src = host_rows(64, 64, 4, 30);
  CHECK(hipMemcpy2D(dev, pitch, src, 64, 64, 4, hipMemcpyHostToDevice));
  uint8_t back[256];
  CHECK(hipMemcpy2D(back, 64, dev, pitch, 64, 4, hipMemcpyDeviceToHost));
  expect_rows(back, 64, 64, 4, 30, "after errors");
  free(src);
  CHECK(hipFree(dev));
  /* A freed area is refused. */
  EXPECT_ERR(hipMemcpy2D(dev, pitch, host, 64, 64, 1, hipMemcpyHostToDevice), hipErrorInvalidValue);
}

int main(void) {
  begin("memory2d");
  CHECK(hipStreamCreate(&stream));
  pitch_allocations();
  copies();
  interior_rows();
  errors();
  CHECK(hipStreamDestroy(stream));
  printf("PASS memory2d\n");
  return 0;
}
