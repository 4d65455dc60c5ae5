/*
 * Memory: round trips at several sizes through every copy kind and API (sync and async) at an
 * unaligned offset inside a larger allocation, with the bytes around the target checked
 * untouched; every memset variant verified byte for byte; pinned host buffers.
 */
#include "check.h"

#define PAD 64   /* extra bytes allocated around the target range */
#define OFFSET 13 /* the target range starts this far into the allocation */
#define GUARD 0xee

static hipStream_t stream;

/* Reads the whole allocation back and checks it against `shadow`. */
static void expect_device(const uint8_t* dev_alloc, const uint8_t* shadow, size_t alloc_len,
                          const char* what) {
  uint8_t* back = xmalloc(alloc_len);
  memset(back, 0, alloc_len);
  CHECK(hipMemcpy(back, dev_alloc, alloc_len, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < alloc_len; i++) {
    REQUIRE(back[i] == shadow[i], "%s: device byte %zu of %zu is 0x%02x, expected 0x%02x", what, i,
            alloc_len, back[i], shadow[i]);
  }
  free(back);
}

/* Checks the target range holds pattern `seed` and the bytes around it are still GUARD. */
static void expect_target(const uint8_t* dev_alloc, size_t size, uint32_t seed, const char* what) {
  size_t alloc_len = size + PAD;
  uint8_t* shadow = xmalloc(alloc_len);
  memset(shadow, GUARD, alloc_len);
  fill_pattern(shadow + OFFSET, size, seed);
  expect_device(dev_alloc, shadow, alloc_len, what);
  free(shadow);
}

static void expect_host(const uint8_t* buf, size_t size, uint32_t seed, const char* what) {
  size_t at = find_mismatch(buf, size, seed);
  REQUIRE(at == (size_t)-1, "%s: host byte %zu of %zu is 0x%02x, expected 0x%02x", what, at, size,
          buf[at], pattern_byte(seed, at));
}

static void round_trip(size_t size) {
  printf("-- round trips of %zu bytes at offset %d\n", size, OFFSET);
  size_t alloc_len = size + PAD;
  uint8_t *a = NULL, *b = NULL;
  CHECK(hipMalloc((void**)&a, alloc_len));
  CHECK(hipMalloc((void**)&b, alloc_len));
  CHECK(hipMemset(a, GUARD, alloc_len));
  CHECK(hipMemset(b, GUARD, alloc_len));
  uint8_t* da = a + OFFSET;
  uint8_t* db = b + OFFSET;
  uint8_t* src = xmalloc(size);
  uint8_t* dst = xmalloc(size);
  uint32_t seed = (uint32_t)size;

  /* Explicit kinds, hipMemcpy. */
  fill_pattern(src, size, ++seed);
  CHECK(hipMemcpy(da, src, size, hipMemcpyHostToDevice));
  expect_target(a, size, seed, "hipMemcpy HostToDevice");
  memset(dst, 0, size);
  CHECK(hipMemcpy(dst, da, size, hipMemcpyDeviceToHost));
  expect_host(dst, size, seed, "hipMemcpy DeviceToHost");
  CHECK(hipMemcpy(db, da, size, hipMemcpyDeviceToDevice));
  expect_target(b, size, seed, "hipMemcpy DeviceToDevice");
  memset(dst, 0, size);
  CHECK(hipMemcpy(dst, src, size, hipMemcpyHostToHost));
  expect_host(dst, size, seed, "hipMemcpy HostToHost");

  /* hipMemcpyDefault in each direction (the library tells device pointers apart). */
  fill_pattern(src, size, ++seed);
  CHECK(hipMemcpy(da, src, size, hipMemcpyDefault));
  expect_target(a, size, seed, "hipMemcpy Default host->device");
  CHECK(hipMemcpy(db, da, size, hipMemcpyDefault));
  expect_target(b, size, seed, "hipMemcpy Default device->device");
  memset(dst, 0, size);
  CHECK(hipMemcpy(dst, db, size, hipMemcpyDefault));
  expect_host(dst, size, seed, "hipMemcpy Default device->host");
  memset(dst, 0, size);
  CHECK(hipMemcpy(dst, src, size, hipMemcpyDefault));
  expect_host(dst, size, seed, "hipMemcpy Default host->host");

  /* Named synchronous APIs. */
  fill_pattern(src, size, ++seed);
  CHECK(hipMemcpyHtoD(da, src, size));
  expect_target(a, size, seed, "hipMemcpyHtoD");
  CHECK(hipMemcpyDtoD(db, da, size));
  expect_target(b, size, seed, "hipMemcpyDtoD");
  memset(dst, 0, size);
  CHECK(hipMemcpyDtoH(dst, db, size));
  expect_host(dst, size, seed, "hipMemcpyDtoH");

  /* hipMemcpyAsync with every kind on a stream. */
  fill_pattern(src, size, ++seed);
  memset(dst, 0, size);
  CHECK(hipMemcpyAsync(da, src, size, hipMemcpyHostToDevice, stream));
  CHECK(hipMemcpyAsync(db, da, size, hipMemcpyDeviceToDevice, stream));
  CHECK(hipMemcpyAsync(dst, db, size, hipMemcpyDeviceToHost, stream));
  CHECK(hipStreamSynchronize(stream));
  expect_host(dst, size, seed, "hipMemcpyAsync H2D->D2D->D2H");
  expect_target(a, size, seed, "hipMemcpyAsync HostToDevice");
  expect_target(b, size, seed, "hipMemcpyAsync DeviceToDevice");
  memset(dst, 0, size);
  CHECK(hipMemcpyAsync(dst, src, size, hipMemcpyHostToHost, stream));
  CHECK(hipStreamSynchronize(stream));
  expect_host(dst, size, seed, "hipMemcpyAsync HostToHost");
  fill_pattern(src, size, ++seed);
  memset(dst, 0, size);
  CHECK(hipMemcpyAsync(da, src, size, hipMemcpyDefault, stream));
  CHECK(hipMemcpyAsync(db, da, size, hipMemcpyDefault, stream));
  CHECK(hipMemcpyAsync(dst, db, size, hipMemcpyDefault, stream));
  CHECK(hipStreamSynchronize(stream));
  expect_host(dst, size, seed, "hipMemcpyAsync Default H2D->D2D->D2H");

  /* Named asynchronous APIs, on the stream and on the null stream. */
  fill_pattern(src, size, ++seed);
  memset(dst, 0, size);
  CHECK(hipMemcpyHtoDAsync(da, src, size, stream));
  CHECK(hipMemcpyDtoDAsync(db, da, size, stream));
  CHECK(hipMemcpyDtoHAsync(dst, db, size, stream));
  CHECK(hipStreamSynchronize(stream));
  expect_host(dst, size, seed, "hipMemcpy{HtoD,DtoD,DtoH}Async");
  expect_target(b, size, seed, "hipMemcpyDtoDAsync");
  fill_pattern(src, size, ++seed);
  memset(dst, 0, size);
  CHECK(hipMemcpyHtoDAsync(da, src, size, NULL));
  CHECK(hipMemcpyDtoDAsync(db, da, size, NULL));
  CHECK(hipMemcpyDtoHAsync(dst, db, size, NULL));
  CHECK(hipStreamSynchronize(NULL));
  expect_host(dst, size, seed, "null-stream {HtoD,DtoD,DtoH}Async");

  free(src);
  free(dst);
  CHECK(hipFree(a));
  CHECK(hipFree(b));
}

/* Every memset variant, applied to a shadow copy too and compared byte for byte. */
static void memsets(size_t n) {
  printf("-- memset variants over %zu bytes\n", n);
  size_t alloc_len = n + PAD;
  uint8_t* a = NULL;
  CHECK(hipMalloc((void**)&a, alloc_len));
  uint8_t* shadow = xmalloc(alloc_len);
  memset(shadow, 0, alloc_len);
  CHECK(hipMemset(a, 0, alloc_len));
  expect_device(a, shadow, alloc_len, "hipMemset 0 of the whole allocation");

  /* Byte-wide at an odd offset. */
  CHECK(hipMemset(a + OFFSET, 0x5a, n));
  memset(shadow + OFFSET, 0x5a, n);
  expect_device(a, shadow, alloc_len, "hipMemset");
  CHECK(hipMemset(a + OFFSET + 1, 0x1234, n / 2)); /* only the low byte counts */
  memset(shadow + OFFSET + 1, 0x34, n / 2);
  expect_device(a, shadow, alloc_len, "hipMemset with value > 0xff");
  CHECK(hipMemsetAsync(a + OFFSET, 0x3c, n - 1, stream));
  CHECK(hipStreamSynchronize(stream));
  memset(shadow + OFFSET, 0x3c, n - 1);
  expect_device(a, shadow, alloc_len, "hipMemsetAsync");
  CHECK(hipMemsetD8(a + OFFSET + 2, 0x7e, n - 2));
  memset(shadow + OFFSET + 2, 0x7e, n - 2);
  expect_device(a, shadow, alloc_len, "hipMemsetD8");
  CHECK(hipMemsetD8Async(a + 3, 0x81, n / 3, stream));
  CHECK(hipStreamSynchronize(stream));
  memset(shadow + 3, 0x81, n / 3);
  expect_device(a, shadow, alloc_len, "hipMemsetD8Async");

  /* 16-bit elements (little endian), count in elements, at an even offset. */
  size_t n16 = n / 2;
  CHECK(hipMemsetD16(a + 14, 0xbeef, n16));
  for (size_t i = 0; i < n16; i++) {
    shadow[14 + 2 * i] = 0xef;
    shadow[14 + 2 * i + 1] = 0xbe;
  }
  expect_device(a, shadow, alloc_len, "hipMemsetD16");
  CHECK(hipMemsetD16Async(a + 2, 0x0102, n16 / 2 + 1, stream));
  CHECK(hipStreamSynchronize(stream));
  for (size_t i = 0; i < n16 / 2 + 1; i++) {
    shadow[2 + 2 * i] = 0x02;
    shadow[2 + 2 * i + 1] = 0x01;
  }
  expect_device(a, shadow, alloc_len, "hipMemsetD16Async");

  /* 32-bit elements. */
  size_t n32 = n / 4;
  CHECK(hipMemsetD32(a + 16, (int)0xdeadbeef, n32));
  for (size_t i = 0; i < n32; i++) {
    shadow[16 + 4 * i] = 0xef;
    shadow[16 + 4 * i + 1] = 0xbe;
    shadow[16 + 4 * i + 2] = 0xad;
    shadow[16 + 4 * i + 3] = 0xde;
  }
  expect_device(a, shadow, alloc_len, "hipMemsetD32");
  CHECK(hipMemsetD32Async(a + 8, 0x11223344, n32 / 2 + 1, stream));
  CHECK(hipStreamSynchronize(stream));
  for (size_t i = 0; i < n32 / 2 + 1; i++) {
    shadow[8 + 4 * i] = 0x44;
    shadow[8 + 4 * i + 1] = 0x33;
    shadow[8 + 4 * i + 2] = 0x22;
    shadow[8 + 4 * i + 3] = 0x11;
  }
  expect_device(a, shadow, alloc_len, "hipMemsetD32Async");

  /* Async memsets queue in order behind each other on one stream. */
  CHECK(hipMemsetD8Async(a, 0x01, alloc_len, stream));
  CHECK(hipMemsetD32Async(a + 4, 0x02020202, 4, stream));
  CHECK(hipMemsetAsync(a + 8, 0x03, 4, stream));
  CHECK(hipStreamSynchronize(stream));
  memset(shadow, 0x01, alloc_len);
  memset(shadow + 4, 0x02, 16);
  memset(shadow + 8, 0x03, 4);
  expect_device(a, shadow, alloc_len, "ordered async memsets");

  /* Zero counts change nothing. */
  CHECK(hipMemset(a, 0x99, 0));
  CHECK(hipMemsetD16(a, 0x9999, 0));
  CHECK(hipMemsetD32Async(a, 0x9999, 0, stream));
  CHECK(hipStreamSynchronize(stream));
  expect_device(a, shadow, alloc_len, "zero-length memsets");

  free(shadow);
  CHECK(hipFree(a));
}

/* Pinned host buffers from both allocation APIs as copy sources and destinations. */
static void pinned(size_t size) {
  printf("-- pinned host buffers of %zu bytes\n", size);
  uint8_t *h1 = NULL, *h2 = NULL, *d = NULL;
  CHECK(hipHostMalloc((void**)&h1, size, hipHostMallocDefault));
  CHECK(hipMallocHost((void**)&h2, size));
  REQUIRE(h1 != NULL && h2 != NULL, "pinned allocation returned NULL");
  REQUIRE(h1 != h2, "two pinned allocations share an address");
  CHECK(hipMalloc((void**)&d, size + PAD));

  fill_pattern(h1, size, 4242);
  memset(h2, 0, size);
  CHECK(hipMemcpy(d + OFFSET, h1, size, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(h2, d + OFFSET, size, hipMemcpyDeviceToHost));
  expect_host(h2, size, 4242, "pinned hipMemcpy round trip");

  fill_pattern(h2, size, 4343);
  memset(h1, 0, size);
  CHECK(hipMemcpyAsync(d + OFFSET, h2, size, hipMemcpyDefault, stream));
  CHECK(hipMemcpyAsync(h1, d + OFFSET, size, hipMemcpyDefault, stream));
  CHECK(hipStreamSynchronize(stream));
  expect_host(h1, size, 4343, "pinned hipMemcpyAsync Default round trip");

  memset(h2, 0, size);
  CHECK(hipMemcpy(h2, h1, size, hipMemcpyDefault));
  expect_host(h2, size, 4343, "pinned host-to-host");

  CHECK(hipHostFree(h1));
  CHECK(hipFreeHost(h2));
  CHECK(hipHostFree(NULL));
  CHECK(hipFree(d));
}

int main(void) {
  begin("memory");
  CHECK(hipStreamCreate(&stream));

  size_t sizes[] = {0, 1, 4097, (1u << 20) + 3, (size_t)64 << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) round_trip(sizes[i]);

  memsets(7);
  memsets(4097);
  memsets((1u << 20) + 3);

  pinned(1);
  pinned(4097);
  pinned((size_t)8 << 20);

  /* Size 0 and NULL frees are no-ops. */
  void* p = (void*)0x1;
  CHECK(hipMalloc(&p, 0));
  REQUIRE(p == NULL, "hipMalloc(0) returned %p, expected NULL", p);
  CHECK(hipFree(NULL));

  CHECK(hipStreamDestroy(stream));
  CHECK(hipDeviceSynchronize());
  printf("PASS memory\n");
  return 0;
}
