/*
 * Arrays and mipmapped arrays: creation from channel descriptions and driver descriptors,
 * every descriptor query, every copy naming an array (2D, 1D, driver forms, sync, async and
 * _spt) checked byte for byte including offsets and the bytes around the copied box, mipmap
 * levels, and ROCm's error codes for bad arguments.
 */
#include "check.h"

static hipStream_t stream;

/* Value of element (x, y, z) of a test volume. */
static uint32_t val(uint32_t seed, size_t x, size_t y, size_t z) {
  return seed * 1000003u + (uint32_t)(z * 65536 + y * 256 + x);
}

static void create_and_describe(void) {
  step("create and describe");
  hipChannelFormatDesc f = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
  hipArray_t a = NULL;
  CHECK(hipMallocArray(&a, &f, 64, 32, hipArrayDefault));
  REQUIRE(a != NULL, "array handle");
  hipChannelFormatDesc d;
  hipExtent e;
  unsigned int flags = 99;
  CHECK(hipArrayGetInfo(&d, &e, &flags, a));
  REQUIRE(d.x == 32 && d.y == 0 && d.z == 0 && d.w == 0 && d.f == hipChannelFormatKindFloat,
          "desc %d %d %d %d kind %d", d.x, d.y, d.z, d.w, (int)d.f);
  REQUIRE(e.width == 64 && e.height == 32 && e.depth == 0 && flags == 0, "extent %zu %zu %zu",
          e.width, e.height, e.depth);
  CHECK(hipArrayGetInfo(NULL, NULL, NULL, a)); /* every output optional */
  HIP_ARRAY_DESCRIPTOR ad;
  CHECK(hipArrayGetDescriptor(&ad, a));
  REQUIRE(ad.Width == 64 && ad.Height == 32 && ad.Format == HIP_AD_FORMAT_FLOAT &&
              ad.NumChannels == 1,
          "descriptor");
  hipChannelFormatDesc g;
  CHECK(hipGetChannelDesc(&g, a));
  REQUIRE(g.x == 32 && g.f == hipChannelFormatKindFloat, "channel desc");
  CHECK(hipFreeArray(a));
  EXPECT_ERR(hipFreeArray(a), hipErrorInvalidValue);

  HIP_ARRAY_DESCRIPTOR cd = {16, 8, HIP_AD_FORMAT_UNSIGNED_INT8, 4};
  CHECK(hipArrayCreate(&a, &cd));
  CHECK(hipGetChannelDesc(&g, a));
  REQUIRE(g.x == 8 && g.y == 8 && g.z == 8 && g.w == 8 && g.f == hipChannelFormatKindUnsigned,
          "uchar4 desc");
  CHECK(hipArrayDestroy(a));

  HIP_ARRAY3D_DESCRIPTOR d3 = {8, 4, 3, HIP_AD_FORMAT_SIGNED_INT16, 2, hipArraySurfaceLoadStore};
  CHECK(hipArray3DCreate(&a, &d3));
  HIP_ARRAY3D_DESCRIPTOR back;
  CHECK(hipArray3DGetDescriptor(&back, a));
  REQUIRE(back.Width == 8 && back.Height == 4 && back.Depth == 3 &&
              back.Format == HIP_AD_FORMAT_SIGNED_INT16 && back.NumChannels == 2 &&
              back.Flags == hipArraySurfaceLoadStore,
          "3D descriptor");
  EXPECT_ERR(hipArrayGetDescriptor(&ad, a), hipErrorInvalidValue); /* 3D has no 2D descriptor */
  CHECK(hipArrayDestroy(a));

  hipChannelFormatDesc h2 = hipCreateChannelDesc(16, 16, 0, 0, hipChannelFormatKindFloat);
  CHECK(hipMalloc3DArray(&a, &h2, make_hipExtent(5, 6, 7), 0));
  CHECK(hipArrayGetInfo(&d, &e, NULL, a));
  REQUIRE(d.x == 16 && d.y == 16 && d.z == 0 && e.width == 5 && e.height == 6 && e.depth == 7,
          "half2 3D array");
  CHECK(hipFreeArray(a));
}

static void creation_errors(void) {
  step("creation errors");
  hipChannelFormatDesc f = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
  hipArray_t a;
  EXPECT_ERR(hipMallocArray(NULL, &f, 4, 4, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMallocArray(&a, NULL, 4, 4, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMallocArray(&a, &f, 0, 4, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMallocArray(&a, &f, 4, 4, 0x100), hipErrorInvalidValue);
  /* The limits the device reports are the limits enforced. */
  hipDeviceProp_t prop;
  CHECK(hipGetDeviceProperties(&prop, 0));
  REQUIRE(prop.maxTexture1D > 0 && prop.maxTexture2D[1] > 0 && prop.maxTexture3D[2] > 0,
          "texture limits %d %d %d", prop.maxTexture1D, prop.maxTexture2D[1], prop.maxTexture3D[2]);
  CHECK(hipMallocArray(&a, &f, (size_t)prop.maxTexture1D, 0, 0));
  CHECK(hipFreeArray(a));
  EXPECT_ERR(hipMallocArray(&a, &f, (size_t)prop.maxTexture1D + 1, 0, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMallocArray(&a, &f, 16, (size_t)prop.maxTexture2D[1] + 1, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMalloc3DArray(&a, &f, make_hipExtent(4, 4, (size_t)prop.maxTexture3D[2] + 1), 0),
             hipErrorInvalidValue);
  hipChannelFormatDesc mixed = hipCreateChannelDesc(8, 16, 0, 0, hipChannelFormatKindUnsigned);
  EXPECT_ERR(hipMallocArray(&a, &mixed, 4, 4, 0), hipErrorInvalidValue);
  hipChannelFormatDesc three = hipCreateChannelDesc(8, 8, 8, 0, hipChannelFormatKindSigned);
  EXPECT_ERR(hipMallocArray(&a, &three, 4, 4, 0), hipErrorInvalidValue);
  hipChannelFormatDesc float8 = hipCreateChannelDesc(8, 0, 0, 0, hipChannelFormatKindFloat);
  EXPECT_ERR(hipMallocArray(&a, &float8, 4, 4, 0), hipErrorInvalidValue);
  HIP_ARRAY_DESCRIPTOR bad = {4, 4, HIP_AD_FORMAT_FLOAT, 3};
  EXPECT_ERR(hipArrayCreate(&a, &bad), hipErrorInvalidValue);
  bad.NumChannels = 1;
  bad.Format = (hipArray_Format)0x55;
  EXPECT_ERR(hipArrayCreate(&a, &bad), hipErrorInvalidValue);
  EXPECT_ERR(hipArrayCreate(&a, NULL), hipErrorInvalidValue);
  HIP_ARRAY3D_DESCRIPTOR no_height = {4, 0, 2, HIP_AD_FORMAT_FLOAT, 1, 0};
  EXPECT_ERR(hipArray3DCreate(&a, &no_height), hipErrorInvalidValue);
  EXPECT_ERR(hipArrayDestroy(NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipFreeArray((hipArray_t)(uintptr_t)0x1234), hipErrorInvalidValue);
  EXPECT_ERR(hipGetChannelDesc(NULL, NULL), hipErrorInvalidValue);
  hipChannelFormatDesc d;
  EXPECT_ERR(hipGetChannelDesc(&d, (hipArray_const_t)(uintptr_t)0x1234), hipErrorInvalidValue);
}

/* A host image of a width x height uint32 array with rows `pitch` bytes apart, gaps 0xee. */
static uint32_t* host_image(size_t pitch, size_t w, size_t h, uint32_t seed) {
  uint8_t* buf = xmalloc(pitch * h);
  memset(buf, 0xee, pitch * h);
  for (size_t y = 0; y < h; y++)
    for (size_t x = 0; x < w; x++) ((uint32_t*)(buf + y * pitch))[x] = val(seed, x, y, 0);
  return (uint32_t*)buf;
}

static void expect_image(const void* buf, size_t pitch, size_t w, size_t h, uint32_t seed,
                         const char* what) {
  for (size_t y = 0; y < h; y++)
    for (size_t x = 0; x < w; x++) {
      uint32_t got = ((const uint32_t*)((const uint8_t*)buf + y * pitch))[x];
      REQUIRE(got == val(seed, x, y, 0), "%s: (%zu, %zu) is %u, expected %u", what, x, y, got,
              val(seed, x, y, 0));
    }
}

static void copies_2d(void) {
  step("2D copies to, from and between arrays");
  const size_t w = 64, h = 32, row = w * 4, pitch = 300;
  hipChannelFormatDesc f = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindUnsigned);
  hipArray_t a, b;
  CHECK(hipMallocArray(&a, &f, w, h, 0));
  CHECK(hipMallocArray(&b, &f, w, h, 0));
  uint32_t* src = host_image(pitch, w, h, 1);
  CHECK(hipMemcpy2DToArray(a, 0, 0, src, pitch, row, h, hipMemcpyHostToDevice));
  uint8_t* out = xmalloc(pitch * h);
  memset(out, 0xee, pitch * h);
  CHECK(hipMemcpy2DFromArray(out, pitch, a, 0, 0, row, h, hipMemcpyDeviceToHost));
  expect_image(out, pitch, w, h, 1, "H2A then A2H");
  for (size_t y = 0; y + 1 < h; y++)
    REQUIRE(out[y * pitch + row] == 0xee, "gap after row %zu written", y);

  /* A box at an offset: elements 4..11 of rows 5..7 overwritten, the rest kept. */
  uint32_t patch[3][8];
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 8; x++) patch[y][x] = 0xabc00000u + (uint32_t)(y * 8 + x);
  CHECK(hipMemcpy2DToArray(a, 4 * 4, 5, patch, sizeof patch[0], sizeof patch[0], 3,
                           hipMemcpyHostToDevice));
  uint32_t* whole = xmalloc(row * h);
  CHECK(hipMemcpy2DFromArray(whole, row, a, 0, 0, row, h, hipMemcpyDefault));
  for (size_t y = 0; y < h; y++)
    for (size_t x = 0; x < w; x++) {
      int inside = y >= 5 && y < 8 && x >= 4 && x < 12;
      uint32_t want = inside ? patch[y - 5][x - 4] : val(1, x, y, 0);
      REQUIRE(whole[y * w + x] == want, "offset box: (%zu, %zu) is %#x, expected %#x", x, y,
              whole[y * w + x], want);
    }
  /* Reading a box at an offset. */
  uint32_t got[3][8];
  CHECK(hipMemcpy2DFromArray(got, sizeof got[0], a, 4 * 4, 5, sizeof got[0], 3,
                             hipMemcpyDeviceToHost));
  REQUIRE(memcmp(got, patch, sizeof got) == 0, "offset read-back");

  /* Device memory to and from arrays, array to array, async and _spt forms. */
  size_t dpitch;
  void* dev;
  CHECK(hipMallocPitch(&dev, &dpitch, row, h));
  uint32_t* src2 = host_image(pitch, w, h, 2);
  CHECK(hipMemcpy2D(dev, dpitch, src2, pitch, row, h, hipMemcpyHostToDevice));
  CHECK(hipMemcpy2DToArrayAsync(b, 0, 0, dev, dpitch, row, h, hipMemcpyDeviceToDevice, stream));
  CHECK(hipStreamSynchronize(stream));
  CHECK(hipMemcpy2DArrayToArray(a, 0, 0, b, 0, 0, row, h, hipMemcpyDeviceToDevice));
  CHECK(hipMemset(dev, 0, dpitch * h));
  CHECK(hipMemcpy2DFromArrayAsync(dev, dpitch, a, 0, 0, row, h, hipMemcpyDeviceToDevice, stream));
  memset(out, 0xee, pitch * h);
  CHECK(hipMemcpy2DAsync(out, pitch, dev, dpitch, row, h, hipMemcpyDeviceToHost, stream));
  CHECK(hipStreamSynchronize(stream));
  expect_image(out, pitch, w, h, 2, "D2A, A2A, A2D");

  uint32_t* src3 = host_image(row, w, h, 3);
  CHECK(hipMemcpy2DToArray_spt(b, 0, 0, src3, row, row, h, hipMemcpyHostToDevice));
  memset(out, 0, pitch * h);
  CHECK(hipMemcpy2DFromArray_spt(out, pitch, b, 0, 0, row, h, hipMemcpyDeviceToHost));
  expect_image(out, pitch, w, h, 3, "_spt");
  uint32_t* src4 = host_image(row, w, h, 4);
  CHECK(hipMemcpy2DToArrayAsync_spt(b, 0, 0, src4, row, row, h, hipMemcpyHostToDevice, NULL));
  memset(out, 0, pitch * h);
  CHECK(hipMemcpy2DFromArrayAsync_spt(out, pitch, b, 0, 0, row, h, hipMemcpyDeviceToHost, NULL));
  CHECK(hipStreamSynchronize(hipStreamPerThread));
  expect_image(out, pitch, w, h, 4, "async _spt");

  /* Errors: boxes outside the array, pitch, kind, nulls, unknown arrays. */
  EXPECT_ERR(hipMemcpy2DToArray(a, 4, 0, src, pitch, row, h, hipMemcpyHostToDevice),
             hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpy2DToArray(a, 0, 1, src, pitch, row, h, hipMemcpyHostToDevice),
             hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpy2DFromArray(out, pitch, a, 0, 0, row + 4, 1, hipMemcpyDeviceToHost),
             hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpy2DToArray(a, 0, 0, src, row - 1, row, h, hipMemcpyHostToDevice),
             hipErrorInvalidPitchValue);
  EXPECT_ERR(hipMemcpy2DFromArray(out, row - 4, a, 0, 0, row, h, hipMemcpyDeviceToHost),
             hipErrorInvalidPitchValue);
  EXPECT_ERR(hipMemcpy2DToArray(a, 0, 0, src, pitch, row, h, (hipMemcpyKind)7),
             hipErrorInvalidMemcpyDirection);
  EXPECT_ERR(hipMemcpy2DToArray(a, 0, 0, NULL, pitch, row, h, hipMemcpyHostToDevice),
             hipErrorInvalidValue);
  /* A NULL array is an invalid handle to ROCm (hip-tests hipMemcpy2DToArray/FromArray[Async]). */
  EXPECT_ERR(hipMemcpy2DToArray(NULL, 0, 0, src, pitch, row, h, hipMemcpyHostToDevice),
             hipErrorInvalidHandle);
  EXPECT_ERR(hipMemcpy2DToArrayAsync(NULL, 0, 0, src, pitch, row, h, hipMemcpyHostToDevice, NULL),
             hipErrorInvalidHandle);
  EXPECT_ERR(hipMemcpy2DFromArray(out, pitch, NULL, 0, 0, row, h, hipMemcpyDeviceToHost),
             hipErrorInvalidHandle);
  EXPECT_ERR(hipMemcpy2DFromArrayAsync(out, pitch, NULL, 0, 0, row, h, hipMemcpyDeviceToHost, NULL),
             hipErrorInvalidHandle);
  EXPECT_ERR(hipMemcpy2DArrayToArray(a, 0, 0, (hipArray_t)(uintptr_t)0x99, 0, 0, 4, 1,
                                     hipMemcpyDeviceToDevice),
             hipErrorInvalidValue);
  /* A device source that does not hold the box. */
  EXPECT_ERR(hipMemcpy2DToArray(a, 0, 0, dev, dpitch, row, h + 1, hipMemcpyDeviceToDevice),
             hipErrorInvalidValue);
  /* An empty copy succeeds. */
  CHECK(hipMemcpy2DToArray(a, 0, 0, src, pitch, 0, h, hipMemcpyHostToDevice));

  CHECK(hipFree(dev));
  CHECK(hipFreeArray(a));
  CHECK(hipFreeArray(b));
  free(src), free(src2), free(src3), free(src4), free(out), free(whole);
}

static void copies_1d(void) {
  step("1D copies (driver forms, ToArray/FromArray)");
  const size_t n = 1000;
  hipChannelFormatDesc f = hipCreateChannelDesc(8, 0, 0, 0, hipChannelFormatKindUnsigned);
  hipArray_t a, b;
  CHECK(hipMallocArray(&a, &f, n, 0, 0));
  CHECK(hipMallocArray(&b, &f, n, 0, 0));
  uint8_t* src = xmalloc(n);
  uint8_t* out = xmalloc(n);
  fill_pattern(src, n, 11);
  CHECK(hipMemcpyHtoA(a, 0, src, n));
  memset(out, 0, n);
  CHECK(hipMemcpyAtoH(out, a, 0, n));
  EXPECT_PATTERN(out, n, 11);
  /* Offsets: bytes 100..399 of a into b at 500. */
  CHECK(hipMemcpyHtoA(b, 0, src, n));
  CHECK(hipMemcpyAtoA(b, 500, a, 100, 300));
  CHECK(hipMemcpyAtoH(out, b, 0, n));
  for (size_t i = 0; i < n; i++) {
    uint8_t want = (i >= 500 && i < 800) ? src[i - 400] : src[i];
    REQUIRE(out[i] == want, "AtoA byte %zu is %u, expected %u", i, out[i], want);
  }
  void* dev;
  CHECK(hipMalloc(&dev, n));
  CHECK(hipMemset(dev, 0, n));
  CHECK(hipMemcpyAtoD(dev, a, 10, n - 10));
  CHECK(hipMemcpyDtoH(out, dev, n - 10));
  REQUIRE(memcmp(out, src + 10, n - 10) == 0, "AtoD");
  CHECK(hipMemcpyDtoA(b, 1, dev, n - 10));
  memset(out, 0, n);
  CHECK(hipMemcpyAtoH(out, b, 1, n - 10));
  REQUIRE(memcmp(out, src + 10, n - 10) == 0, "DtoA");
  fill_pattern(src, n, 12);
  CHECK(hipMemcpyHtoAAsync(a, 0, src, n, stream));
  memset(out, 0, n);
  CHECK(hipMemcpyAtoHAsync(out, a, 0, n, stream));
  CHECK(hipStreamSynchronize(stream));
  EXPECT_PATTERN(out, n, 12);
  EXPECT_ERR(hipMemcpyHtoA(a, 1, src, n), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpyAtoH(out, a, n, 1), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpyAtoH(NULL, a, 0, 1), hipErrorInvalidValue);
  EXPECT_ERR(hipMemcpyAtoD(NULL, a, 0, 1), hipErrorInvalidValue);

  /* hipMemcpyToArray / FromArray on a 2D array: a run inside a row, then whole rows. */
  hipArray_t c;
  CHECK(hipMallocArray(&c, &f, 100, 10, 0));
  fill_pattern(src, n, 13);
  CHECK(hipMemcpyToArray(c, 0, 0, src, n, hipMemcpyHostToDevice));
  CHECK(hipMemcpyToArray(c, 20, 3, src, 50, hipMemcpyHostToDevice));
  memset(out, 0, n);
  CHECK(hipMemcpyFromArray(out, c, 0, 0, n, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < n; i++) {
    uint8_t want = (i >= 320 && i < 370) ? src[i - 320] : src[i];
    REQUIRE(out[i] == want, "ToArray byte %zu is %u, expected %u", i, out[i], want);
  }
  uint8_t part[50];
  CHECK(hipMemcpyFromArray_spt(part, c, 20, 3, 50, hipMemcpyDeviceToHost));
  REQUIRE(memcmp(part, src, 50) == 0, "FromArray_spt");
  EXPECT_ERR(hipMemcpyToArray(c, 90, 0, src, 20, hipMemcpyHostToDevice), hipErrorInvalidValue);
  CHECK(hipFree(dev));
  CHECK(hipFreeArray(a));
  CHECK(hipFreeArray(b));
  CHECK(hipFreeArray(c));
  free(src), free(out);
}

static void copies_3d(void) {
  step("3D arrays: hipMemcpy3D, hipDrvMemcpy3D, hipMemcpyParam2D");
  const size_t w = 12, h = 7, d = 5;
  hipChannelFormatDesc f = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindSigned);
  hipArray_t a;
  CHECK(hipMalloc3DArray(&a, &f, make_hipExtent(w, h, d), 0));
  uint32_t* vol = xmalloc(w * h * d * 4);
  for (size_t z = 0; z < d; z++)
    for (size_t y = 0; y < h; y++)
      for (size_t x = 0; x < w; x++) vol[(z * h + y) * w + x] = val(5, x, y, z);
  hipMemcpy3DParms p = {0};
  p.srcPtr = make_hipPitchedPtr(vol, w * 4, w, h);
  p.dstArray = a;
  p.extent = make_hipExtent(w, h, d); /* elements: an array takes part */
  p.kind = hipMemcpyHostToDevice;
  CHECK(hipMemcpy3D(&p));
  uint32_t* back = xmalloc(w * h * d * 4);
  memset(back, 0, w * h * d * 4);
  memset(&p, 0, sizeof p);
  p.srcArray = a;
  p.dstPtr = make_hipPitchedPtr(back, w * 4, w, h);
  p.extent = make_hipExtent(w, h, d);
  p.kind = hipMemcpyDeviceToHost;
  CHECK(hipMemcpy3D(&p));
  REQUIRE(memcmp(back, vol, w * h * d * 4) == 0, "3D array round trip");

  /* A 2x3x2 box from array position (3, 2, 1) into host position (1, 1, 1) of a 4x5x3 volume. */
  uint32_t small[3][5][4];
  memset(small, 0, sizeof small);
  memset(&p, 0, sizeof p);
  p.srcArray = a;
  p.srcPos = make_hipPos(3, 2, 1); /* x in elements for arrays */
  p.dstPtr = make_hipPitchedPtr(small, sizeof small[0][0], 4, 5);
  p.dstPos = make_hipPos(1 * 4, 1, 1); /* x in bytes for pitched memory */
  p.extent = make_hipExtent(2, 3, 2);
  p.kind = hipMemcpyDeviceToHost;
  CHECK(hipMemcpy3DAsync(&p, stream));
  CHECK(hipStreamSynchronize(stream));
  for (size_t z = 0; z < 3; z++)
    for (size_t y = 0; y < 5; y++)
      for (size_t x = 0; x < 4; x++) {
        int inside = z >= 1 && z < 3 && y >= 1 && y < 4 && x >= 1 && x < 3;
        uint32_t want = inside ? val(5, x - 1 + 3, y - 1 + 2, z - 1 + 1) : 0;
        REQUIRE(small[z][y][x] == want, "box (%zu,%zu,%zu) is %u, expected %u", x, y, z,
                small[z][y][x], want);
      }

  /* Array to pitched device memory and back through the driver form. */
  hipPitchedPtr dev;
  CHECK(hipMalloc3D(&dev, make_hipExtent(w * 4, h, d)));
  memset(&p, 0, sizeof p);
  p.srcArray = a;
  p.dstPtr = dev;
  p.extent = make_hipExtent(w, h, d);
  p.kind = hipMemcpyDeviceToDevice;
  CHECK(hipMemcpy3D_spt(&p));
  HIP_MEMCPY3D dp;
  memset(&dp, 0, sizeof dp);
  dp.srcMemoryType = hipMemoryTypeDevice;
  dp.srcDevice = dev.ptr;
  dp.srcPitch = dev.pitch;
  dp.srcHeight = h;
  dp.dstMemoryType = hipMemoryTypeHost;
  dp.dstHost = back;
  dp.dstPitch = w * 4;
  dp.dstHeight = h;
  dp.WidthInBytes = w * 4;
  dp.Height = h;
  dp.Depth = d;
  memset(back, 0, w * h * d * 4);
  CHECK(hipDrvMemcpy3D(&dp));
  REQUIRE(memcmp(back, vol, w * h * d * 4) == 0, "array -> device -> host");
  dp.srcMemoryType = hipMemoryTypeArray;
  dp.srcArray = a;
  dp.srcXInBytes = 4 * 4;
  dp.srcY = 1;
  dp.srcZ = 2;
  dp.WidthInBytes = 4;
  dp.Height = 1;
  dp.Depth = 1;
  uint32_t one = 0;
  dp.dstHost = &one;
  CHECK(hipDrvMemcpy3DAsync(&dp, stream));
  CHECK(hipStreamSynchronize(stream));
  REQUIRE(one == val(5, 4, 1, 2), "single element %u", one);
  dp.srcLOD = 1;
  EXPECT_ERR(hipDrvMemcpy3D(&dp), hipErrorInvalidValue);

  /* hipMemcpyParam2D: a row of slice 0 of the 3D array to host. */
  uint32_t rowbuf[12] = {0};
  hip_Memcpy2D p2;
  memset(&p2, 0, sizeof p2);
  p2.srcMemoryType = hipMemoryTypeArray;
  p2.srcArray = a;
  p2.srcY = 6;
  p2.dstMemoryType = hipMemoryTypeHost;
  p2.dstHost = rowbuf;
  p2.dstPitch = sizeof rowbuf;
  p2.WidthInBytes = sizeof rowbuf;
  p2.Height = 1;
  CHECK(hipMemcpyParam2D(&p2));
  for (size_t x = 0; x < w; x++) REQUIRE(rowbuf[x] == val(5, x, 6, 0), "Param2D element %zu", x);

  /* Errors: both array and pointer, element sizes, boxes outside, kind. */
  memset(&p, 0, sizeof p);
  p.srcArray = a;
  p.srcPtr = make_hipPitchedPtr(vol, w * 4, w, h);
  p.dstPtr = make_hipPitchedPtr(back, w * 4, w, h);
  p.extent = make_hipExtent(w, h, d);
  p.kind = hipMemcpyDeviceToHost;
  EXPECT_ERR(hipMemcpy3D(&p), hipErrorInvalidValue);
  p.srcPtr.ptr = NULL;
  p.extent = make_hipExtent(w, h, d + 1);
  EXPECT_ERR(hipMemcpy3D(&p), hipErrorInvalidValue);
  p.extent = make_hipExtent(w, h, d);
  p.srcPos = make_hipPos(1, 0, 0);
  EXPECT_ERR(hipMemcpy3D(&p), hipErrorInvalidValue);
  p.srcPos = make_hipPos(0, 0, 0);
  p.kind = (hipMemcpyKind)9;
  EXPECT_ERR(hipMemcpy3D(&p), hipErrorInvalidMemcpyDirection);
  EXPECT_ERR(hipMemcpy3D(NULL), hipErrorInvalidValue);
  hipChannelFormatDesc f8 = hipCreateChannelDesc(8, 0, 0, 0, hipChannelFormatKindUnsigned);
  hipArray_t bytes;
  CHECK(hipMalloc3DArray(&bytes, &f8, make_hipExtent(w, h, d), 0));
  memset(&p, 0, sizeof p);
  p.srcArray = a;
  p.dstArray = bytes;
  p.extent = make_hipExtent(1, 1, 1);
  p.kind = hipMemcpyDeviceToDevice;
  EXPECT_ERR(hipMemcpy3D(&p), hipErrorInvalidValue); /* element sizes differ */

  CHECK(hipFree(dev.ptr));
  CHECK(hipFreeArray(a));
  CHECK(hipFreeArray(bytes));
  free(vol), free(back);
}

static void mipmaps(void) {
  step("mipmapped arrays");
  hipChannelFormatDesc f = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
  hipMipmappedArray_t m;
  CHECK(hipMallocMipmappedArray(&m, &f, make_hipExtent(64, 32, 0), 4, 0));
  REQUIRE(m->width == 64 && m->height == 32 && m->depth == 0 && m->max_mipmap_level == 3 &&
              m->min_mipmap_level == 0 && m->format == HIP_AD_FORMAT_FLOAT &&
              m->num_channels == 1 && m->desc.x == 32,
          "mipmapped array fields");
  hipArray_t levels[4];
  for (unsigned l = 0; l < 4; l++) {
    CHECK(hipGetMipmappedArrayLevel(&levels[l], m, l));
    hipExtent e;
    CHECK(hipArrayGetInfo(NULL, &e, NULL, levels[l]));
    REQUIRE(e.width == (size_t)(64 >> l) && e.height == (size_t)(32 >> l), "level %u is %zux%zu",
            l, e.width, e.height);
  }
  hipArray_t past;
  EXPECT_ERR(hipGetMipmappedArrayLevel(&past, m, 4), hipErrorInvalidValue);
  EXPECT_ERR(hipGetMipmappedArrayLevel(NULL, m, 0), hipErrorInvalidValue);
  /* Each level holds its own data. */
  for (unsigned l = 0; l < 4; l++) {
    size_t w = 64 >> l, h = 32 >> l;
    uint32_t* img = host_image(w * 4, w, h, 20 + l);
    CHECK(hipMemcpy2DToArray(levels[l], 0, 0, img, w * 4, w * 4, h, hipMemcpyHostToDevice));
    free(img);
  }
  for (unsigned l = 0; l < 4; l++) {
    size_t w = 64 >> l, h = 32 >> l;
    uint32_t* img = xmalloc(w * 4 * h);
    CHECK(hipMemcpy2DFromArray(img, w * 4, levels[l], 0, 0, w * 4, h, hipMemcpyDeviceToHost));
    expect_image(img, w * 4, w, h, 20 + l, "mipmap level");
    free(img);
  }
  EXPECT_ERR(hipFreeArray(levels[1]), hipErrorInvalidValue); /* levels belong to the mipmap */
  CHECK(hipFreeMipmappedArray(m));
  hipChannelFormatDesc g;
  EXPECT_ERR(hipGetChannelDesc(&g, levels[0]), hipErrorInvalidValue); /* gone with it */

  HIP_ARRAY3D_DESCRIPTOR d = {16, 16, 16, HIP_AD_FORMAT_UNSIGNED_INT16, 4, 0};
  CHECK(hipMipmappedArrayCreate(&m, &d, 5));
  hipArray_t last;
  CHECK(hipMipmappedArrayGetLevel(&last, m, 4));
  HIP_ARRAY3D_DESCRIPTOR ld;
  CHECK(hipArray3DGetDescriptor(&ld, last));
  REQUIRE(ld.Width == 1 && ld.Height == 1 && ld.Depth == 1 && ld.NumChannels == 4, "last level");
  CHECK(hipMipmappedArrayDestroy(m));
  EXPECT_ERR(hipMipmappedArrayCreate(&m, &d, 6), hipErrorInvalidValue); /* 16 has 5 levels */
  EXPECT_ERR(hipMipmappedArrayCreate(&m, &d, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMallocMipmappedArray(NULL, &f, make_hipExtent(4, 4, 0), 1, 0),
             hipErrorInvalidValue);
  EXPECT_ERR(hipFreeMipmappedArray((hipMipmappedArray_t)(uintptr_t)0x40), hipErrorInvalidValue);
}

static void sparse(void) {
  step("hipMemMapArrayAsync (no sparse arrays: not supported, see not_supported_reasons.txt)");
  hipArrayMapInfo info;
  memset(&info, 0, sizeof info);
  EXPECT_ERR(hipMemMapArrayAsync(&info, 1, NULL), hipErrorNotSupported);
}

int main(void) {
  begin("arrays");
  CHECK(hipStreamCreate(&stream));
  create_and_describe();
  creation_errors();
  copies_2d();
  copies_1d();
  copies_3d();
  mipmaps();
  sparse();
  CHECK(hipStreamDestroy(stream));

  step("hipDeviceReset frees arrays");
  hipChannelFormatDesc f = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
  hipArray_t a;
  CHECK(hipMallocArray(&a, &f, 8, 8, 0));
  CHECK(hipDeviceReset());
  hipExtent e;
  EXPECT_ERR(hipArrayGetInfo(NULL, &e, NULL, a), hipErrorInvalidValue);
  EXPECT_ERR(hipFreeArray(a), hipErrorInvalidValue);
  printf("PASS arrays\n");
  return 0;
}
