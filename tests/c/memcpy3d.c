/*
 * Pitched 3D memory and 3D copies: hipMalloc3D (ROCm's pitch, empty extents), hipMemcpy3D
 * and its async/_spt forms between host, pitched device memory and back with positions, the
 * bytes outside the box checked untouched, a copy large enough to be split into several
 * requests, hipMemcpy3DPeer(+Async), hipMemcpy3DBatchAsync, hipMemcpyParam2D(+Async),
 * hipDrvMemcpy2DUnaligned, and ROCm's error codes.
 */
#include "check.h"

static hipStream_t stream;

static uint8_t byte_at(uint32_t seed, size_t x, size_t y, size_t z) {
  return (uint8_t)(seed * 131u + x * 7u + y * 13u + z * 29u);
}

/* A packed host volume of w x h x d bytes. */
static uint8_t* volume(size_t w, size_t h, size_t d, uint32_t seed) {
  uint8_t* v = xmalloc(w * h * d);
  for (size_t z = 0; z < d; z++)
    for (size_t y = 0; y < h; y++)
      for (size_t x = 0; x < w; x++) v[(z * h + y) * w + x] = byte_at(seed, x, y, z);
  return v;
}

static void expect_volume(const uint8_t* v, size_t w, size_t h, size_t d, uint32_t seed,
                          const char* what) {
  for (size_t z = 0; z < d; z++)
    for (size_t y = 0; y < h; y++)
      for (size_t x = 0; x < w; x++) {
        uint8_t got = v[(z * h + y) * w + x];
        REQUIRE(got == byte_at(seed, x, y, z), "%s: (%zu,%zu,%zu) is %u, expected %u", what, x,
                y, z, got, byte_at(seed, x, y, z));
      }
}

static hipMemcpy3DParms params(hipPitchedPtr dst, hipPitchedPtr src, hipExtent e,
                               hipMemcpyKind kind) {
  hipMemcpy3DParms p;
  memset(&p, 0, sizeof p);
  p.dstPtr = dst;
  p.srcPtr = src;
  p.extent = e;
  p.kind = kind;
  return p;
}

static void malloc_3d(void) {
  step("hipMalloc3D");
  hipPitchedPtr p;
  CHECK(hipMalloc3D(&p, make_hipExtent(100, 7, 3)));
  REQUIRE(p.ptr != NULL && p.pitch == 256 && p.xsize == 100 && p.ysize == 7, "pitch %zu", p.pitch);
  size_t size = 0;
  CHECK(hipMemPtrGetInfo(p.ptr, &size));
  REQUIRE(size == 256 * 7 * 3, "allocation of %zu bytes", size);
  CHECK(hipFree(p.ptr));
  CHECK(hipMalloc3D(&p, make_hipExtent(0, 7, 3)));
  REQUIRE(p.ptr == NULL, "empty extent gives NULL");
  EXPECT_ERR(hipMalloc3D(NULL, make_hipExtent(1, 1, 1)), hipErrorInvalidValue);
}

static void pitched_copies(void) {
  step("host <-> pitched device <-> device, with positions");
  const size_t w = 100, h = 9, d = 4;
  uint8_t* vol = volume(w, h, d, 1);
  hipPitchedPtr a, b;
  CHECK(hipMalloc3D(&a, make_hipExtent(w, h, d)));
  CHECK(hipMalloc3D(&b, make_hipExtent(w, h, d)));
  hipPitchedPtr host = make_hipPitchedPtr(vol, w, w, h);
  hipMemcpy3DParms p = params(a, host, make_hipExtent(w, h, d), hipMemcpyHostToDevice);
  CHECK(hipMemcpy3D(&p));
  p = params(b, a, make_hipExtent(w, h, d), hipMemcpyDeviceToDevice);
  CHECK(hipMemcpy3DAsync(&p, stream));
  uint8_t* back = xmalloc(w * h * d);
  memset(back, 0, w * h * d);
  p = params(make_hipPitchedPtr(back, w, w, h), b, make_hipExtent(w, h, d), hipMemcpyDeviceToHost);
  CHECK(hipMemcpy3DAsync(&p, stream));
  CHECK(hipStreamSynchronize(stream));
  expect_volume(back, w, h, d, 1, "H2D, D2D, D2H");

  /* The pitch gaps of the device volume are untouched (hipMemset'd 0x5a first). */
  CHECK(hipMemset(b.ptr, 0x5a, b.pitch * h * d));
  p = params(b, host, make_hipExtent(w, h, d), hipMemcpyDefault);
  CHECK(hipMemcpy3D_spt(&p));
  uint8_t* raw = xmalloc(b.pitch * h * d);
  CHECK(hipMemcpy(raw, b.ptr, b.pitch * h * d, hipMemcpyDeviceToHost));
  for (size_t z = 0; z < d; z++)
    for (size_t y = 0; y < h; y++)
      for (size_t x = 0; x < b.pitch; x++) {
        uint8_t want = x < w ? byte_at(1, x, y, z) : 0x5a;
        REQUIRE(raw[(z * h + y) * b.pitch + x] == want, "raw (%zu,%zu,%zu)", x, y, z);
      }

  /* A 10x3x2 box from (5, 4, 1) of the device volume into (2, 1, 0) of a 16x5x2 host box. */
  uint8_t small[2][5][16];
  memset(small, 0xcc, sizeof small);
  p = params(make_hipPitchedPtr(small, 16, 16, 5), a, make_hipExtent(10, 3, 2),
             hipMemcpyDeviceToHost);
  p.srcPos = make_hipPos(5, 4, 1);
  p.dstPos = make_hipPos(2, 1, 0);
  CHECK(hipMemcpy3DAsync_spt(&p, NULL));
  CHECK(hipStreamSynchronize(hipStreamPerThread));
  for (size_t z = 0; z < 2; z++)
    for (size_t y = 0; y < 5; y++)
      for (size_t x = 0; x < 16; x++) {
        int inside = y >= 1 && y < 4 && x >= 2 && x < 12;
        uint8_t want = inside ? byte_at(1, x - 2 + 5, y - 1 + 4, z + 1) : 0xcc;
        REQUIRE(small[z][y][x] == want, "box (%zu,%zu,%zu) is %u, expected %u", x, y, z,
                small[z][y][x], want);
      }

  /* Host to host. */
  uint8_t* copy = xmalloc(w * h * d);
  p = params(make_hipPitchedPtr(copy, w, w, h), host, make_hipExtent(w, h, d), hipMemcpyHostToHost);
  CHECK(hipMemcpy3D(&p));
  expect_volume(copy, w, h, d, 1, "H2H");

  /* Errors. */
  p = params(a, host, make_hipExtent(w, h, d), hipMemcpyHostToDevice);
  p.dstPtr.pitch = w - 1;
  EXPECT_ERR(hipMemcpy3D(&p), hipErrorInvalidPitchValue);
  p = params(a, host, make_hipExtent(w, h, d + 1), hipMemcpyHostToDevice);
  EXPECT_ERR(hipMemcpy3D(&p), hipErrorInvalidValue); /* past the allocation */
  p = params(a, host, make_hipExtent(w, h, d), hipMemcpyHostToDevice);
  p.dstPos = make_hipPos(0, 1, 0);
  EXPECT_ERR(hipMemcpy3D(&p), hipErrorInvalidValue); /* rows past the slice */
  p = params(a, host, make_hipExtent(w, h, d), (hipMemcpyKind)5);
  EXPECT_ERR(hipMemcpy3D(&p), hipErrorInvalidMemcpyDirection);
  p = params(a, make_hipPitchedPtr(NULL, w, w, h), make_hipExtent(w, h, d), hipMemcpyHostToDevice);
  EXPECT_ERR(hipMemcpy3D(&p), hipErrorInvalidValue);
  p = params(a, host, make_hipExtent(0, h, d), hipMemcpyHostToDevice);
  CHECK(hipMemcpy3D(&p)); /* empty */
  int local = 0;
  p = params(make_hipPitchedPtr(&local, 4, 4, 1), host, make_hipExtent(4, 1, 1),
             hipMemcpyHostToDevice);
  EXPECT_ERR(hipMemcpy3D(&p), hipErrorInvalidValue); /* not a device allocation */

  CHECK(hipFree(a.ptr));
  CHECK(hipFree(b.ptr));
  free(vol), free(back), free(raw), free(copy);
}

static void large_copy(void) {
  step("a 3D copy split into several requests");
  const size_t w = 3000, h = 700, d = 3; /* 6.3 MB packed; slices wider than a chunk part */
  uint8_t* vol = volume(w, h, d, 7);
  hipPitchedPtr dev;
  CHECK(hipMalloc3D(&dev, make_hipExtent(w, h, d)));
  hipMemcpy3DParms p = params(dev, make_hipPitchedPtr(vol, w, w, h), make_hipExtent(w, h, d),
                              hipMemcpyHostToDevice);
  CHECK(hipMemcpy3D(&p));
  uint8_t* back = xmalloc(w * h * d);
  memset(back, 0, w * h * d);
  p = params(make_hipPitchedPtr(back, w, w, h), dev, make_hipExtent(w, h, d), hipMemcpyDeviceToHost);
  CHECK(hipMemcpy3D(&p));
  expect_volume(back, w, h, d, 7, "large");
  CHECK(hipFree(dev.ptr));
  free(vol), free(back);
}

static void peer_and_batch(void) {
  step("hipMemcpy3DPeer, hipMemcpy3DBatchAsync");
  const size_t w = 40, h = 6, d = 3;
  uint8_t* vol = volume(w, h, d, 3);
  hipPitchedPtr a, b;
  CHECK(hipMalloc3D(&a, make_hipExtent(w, h, d)));
  CHECK(hipMalloc3D(&b, make_hipExtent(w, h, d)));
  hipMemcpy3DParms p = params(a, make_hipPitchedPtr(vol, w, w, h), make_hipExtent(w, h, d),
                              hipMemcpyHostToDevice);
  CHECK(hipMemcpy3D(&p));
  hipMemcpy3DPeerParms q;
  memset(&q, 0, sizeof q);
  q.srcPtr = a;
  q.srcDevice = 0;
  q.dstPtr = b;
  q.dstDevice = 0;
  q.extent = make_hipExtent(w, h, d);
  CHECK(hipMemcpy3DPeer(&q));
  uint8_t* back = xmalloc(w * h * d);
  memset(back, 0, w * h * d);
  p = params(make_hipPitchedPtr(back, w, w, h), b, make_hipExtent(w, h, d), hipMemcpyDeviceToHost);
  CHECK(hipMemcpy3D(&p));
  expect_volume(back, w, h, d, 3, "peer");
  CHECK(hipMemset(b.ptr, 0, b.pitch * h * d));
  CHECK(hipMemcpy3DPeerAsync(&q, stream));
  CHECK(hipStreamSynchronize(stream));
  memset(back, 0, w * h * d);
  CHECK(hipMemcpy3D(&p));
  expect_volume(back, w, h, d, 3, "peer async");
  q.dstDevice = 99;
  EXPECT_ERR(hipMemcpy3DPeer(&q), hipErrorInvalidDevice);
  EXPECT_ERR(hipMemcpy3DPeer(NULL), hipErrorInvalidValue);

  /* Batch: device a -> device b with a row length (pitch in elements), then b -> host. */
  CHECK(hipMemset(b.ptr, 0, b.pitch * h * d));
  hipMemcpy3DBatchOp ops[2];
  memset(ops, 0, sizeof ops);
  ops[0].src.type = hipMemcpyOperandTypePointer;
  ops[0].src.op.ptr.ptr = a.ptr;
  ops[0].src.op.ptr.rowLength = a.pitch;
  ops[0].src.op.ptr.layerHeight = h;
  ops[0].dst.type = hipMemcpyOperandTypePointer;
  ops[0].dst.op.ptr.ptr = b.ptr;
  ops[0].dst.op.ptr.rowLength = b.pitch;
  ops[0].dst.op.ptr.layerHeight = h;
  ops[0].extent = make_hipExtent(w, h, d);
  ops[0].srcAccessOrder = hipMemcpySrcAccessOrderStream;
  ops[1] = ops[0];
  ops[1].src.op.ptr.ptr = b.ptr;
  ops[1].dst.op.ptr.ptr = back;
  ops[1].dst.op.ptr.rowLength = 0; /* packed */
  ops[1].dst.op.ptr.layerHeight = 0;
  memset(back, 0, w * h * d);
  size_t fail = 77;
  CHECK(hipMemcpy3DBatchAsync(2, ops, &fail, 0, stream));
  CHECK(hipStreamSynchronize(stream));
  expect_volume(back, w, h, d, 3, "batch");
  EXPECT_ERR(hipMemcpy3DBatchAsync(0, ops, &fail, 0, stream), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpy3DBatchAsync(2, ops, &fail, 1, stream), hipErrorInvalidValue);
  ops[1].srcAccessOrder = hipMemcpySrcAccessOrderInvalid;
  EXPECT_ERR(hipMemcpy3DBatchAsync(2, ops, &fail, 0, stream), hipErrorInvalidValue);
  REQUIRE(fail == 1, "failIdx %zu", fail);
  CHECK(hipStreamSynchronize(stream));

  CHECK(hipFree(a.ptr));
  CHECK(hipFree(b.ptr));
  free(vol), free(back);
}

static void param_2d(void) {
  step("hipMemcpyParam2D(+Async), hipDrvMemcpy2DUnaligned");
  const size_t w = 33, h = 5;
  size_t pitch;
  void* dev;
  CHECK(hipMallocPitch(&dev, &pitch, w, h));
  uint8_t* img = volume(w, h, 1, 9);
  hip_Memcpy2D p;
  memset(&p, 0, sizeof p);
  p.srcMemoryType = hipMemoryTypeHost;
  p.srcHost = img;
  p.srcPitch = w;
  p.dstMemoryType = hipMemoryTypeDevice;
  p.dstDevice = dev;
  p.dstPitch = pitch;
  p.WidthInBytes = w;
  p.Height = h;
  CHECK(hipMemcpyParam2D(&p));
  uint8_t* back = xmalloc(w * h);
  memset(back, 0, w * h);
  hip_Memcpy2D r;
  memset(&r, 0, sizeof r);
  r.srcMemoryType = hipMemoryTypeUnified;
  r.srcDevice = dev;
  r.srcPitch = pitch;
  r.dstMemoryType = hipMemoryTypeHost;
  r.dstHost = back;
  r.dstPitch = w;
  r.WidthInBytes = w;
  r.Height = h;
  CHECK(hipMemcpyParam2DAsync(&r, stream));
  CHECK(hipStreamSynchronize(stream));
  expect_volume(back, w, h, 1, 9, "Param2D");
  /* Offsets: bytes 3.. of rows 1.. into the start of the host image. */
  memset(back, 0, w * h);
  r.srcXInBytes = 3;
  r.srcY = 1;
  r.WidthInBytes = w - 3;
  r.Height = h - 1;
  CHECK(hipDrvMemcpy2DUnaligned(&r));
  for (size_t y = 0; y < h - 1; y++)
    for (size_t x = 0; x < w - 3; x++)
      REQUIRE(back[y * w + x] == byte_at(9, x + 3, y + 1, 0), "offset (%zu, %zu)", x, y);
  r.srcMemoryType = (hipMemoryType)77;
  EXPECT_ERR(hipMemcpyParam2D(&r), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpyParam2D(NULL), hipErrorInvalidValue);
  r.srcMemoryType = hipMemoryTypeDevice;
  /* The driver descriptor's rows are checked as memory regions: a row wider than its pitch
   * is an invalid value (clr validateMemoryObject; hip-tests' hipMemcpyParam2D negatives),
   * not hipMemcpy2D's invalid pitch. */
  r.srcPitch = w - 4;
  EXPECT_ERR(hipMemcpyParam2D(&r), hipErrorInvalidValue);
  CHECK(hipFree(dev));
  free(img), free(back);
}

int main(void) {
  begin("memcpy3d");
  CHECK(hipStreamCreate(&stream));
  malloc_3d();
  pitched_copies();
  large_copy();
  peer_and_batch();
  param_2d();
  CHECK(hipStreamDestroy(stream));
  printf("PASS memcpy3d\n");
  return 0;
}
