/*
 * Texture objects: created over an array, a mipmapped array, linear and pitched device
 * memory with the runtime (hipCreateTextureObject) and driver (hipTexObjectCreate) forms,
 * every descriptor query answered in both forms, destruction, and ROCm's error codes.
 */
#include "check.h"

static hipTextureDesc tex_desc(void) {
  hipTextureDesc t;
  memset(&t, 0, sizeof t);
  t.addressMode[0] = hipAddressModeClamp;
  t.addressMode[1] = hipAddressModeWrap;
  t.addressMode[2] = hipAddressModeBorder;
  t.filterMode = hipFilterModePoint;
  t.readMode = hipReadModeElementType;
  t.normalizedCoords = 1;
  t.borderColor[2] = 0.5f;
  t.maxAnisotropy = 4;
  t.mipmapLevelBias = 0.25f;
  t.maxMipmapLevelClamp = 3.0f;
  return t;
}

static void runtime_form(void) {
  step("hipCreateTextureObject over an array, queried back");
  hipChannelFormatDesc f = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
  hipArray_t a;
  CHECK(hipMallocArray(&a, &f, 16, 8, 0));
  hipResourceDesc r;
  memset(&r, 0, sizeof r);
  r.resType = hipResourceTypeArray;
  r.res.array.array = a;
  hipTextureDesc t = tex_desc();
  hipTextureObject_t tex = 0;
  CHECK(hipCreateTextureObject(&tex, &r, &t, NULL));
  REQUIRE(tex != 0, "texture object");
  hipResourceDesc rb;
  CHECK(hipGetTextureObjectResourceDesc(&rb, tex));
  REQUIRE(rb.resType == hipResourceTypeArray && rb.res.array.array == a, "resource back");
  hipTextureDesc tb;
  CHECK(hipGetTextureObjectTextureDesc(&tb, tex));
  REQUIRE(tb.addressMode[0] == hipAddressModeClamp && tb.addressMode[1] == hipAddressModeWrap &&
              tb.addressMode[2] == hipAddressModeBorder && tb.readMode == hipReadModeElementType &&
              tb.normalizedCoords == 1 && tb.borderColor[2] == 0.5f && tb.maxAnisotropy == 4 &&
              tb.mipmapLevelBias == 0.25f && tb.maxMipmapLevelClamp == 3.0f && tb.sRGB == 0,
          "texture desc back");
  HIP_TEXTURE_DESC dt;
  CHECK(hipTexObjectGetTextureDesc(&dt, tex));
  REQUIRE(dt.flags == (HIP_TRSF_READ_AS_INTEGER | HIP_TRSF_NORMALIZED_COORDINATES) &&
              dt.addressMode[2] == HIP_TR_ADDRESS_MODE_BORDER,
          "driver form flags %#x", dt.flags);
  HIP_RESOURCE_DESC dr;
  CHECK(hipTexObjectGetResourceDesc(&dr, tex));
  REQUIRE(dr.resType == HIP_RESOURCE_TYPE_ARRAY && dr.res.array.hArray == a, "driver resource");
  hipResourceViewDesc v;
  memset(&v, 0x7f, sizeof v);
  CHECK(hipGetTextureObjectResourceViewDesc(&v, tex));
  REQUIRE(v.format == hipResViewFormatNone && v.width == 0, "no view: zeroed");
  CHECK(hipDestroyTextureObject(tex));
  EXPECT_ERR(hipDestroyTextureObject(tex), hipErrorInvalidValue);
  EXPECT_ERR(hipGetTextureObjectTextureDesc(&tb, tex), hipErrorInvalidValue);

  step("over linear and pitched memory, with a view");
  void* lin;
  CHECK(hipMalloc(&lin, 1024));
  memset(&r, 0, sizeof r);
  r.resType = hipResourceTypeLinear;
  r.res.linear.devPtr = lin;
  r.res.linear.desc = hipCreateChannelDesc(8, 8, 8, 8, hipChannelFormatKindUnsigned);
  r.res.linear.sizeInBytes = 1024;
  t.readMode = hipReadModeNormalizedFloat;
  t.normalizedCoords = 0;
  CHECK(hipCreateTextureObject(&tex, &r, &t, NULL));
  CHECK(hipGetTextureObjectResourceDesc(&rb, tex));
  REQUIRE(rb.resType == hipResourceTypeLinear && rb.res.linear.devPtr == lin &&
              rb.res.linear.sizeInBytes == 1024 && rb.res.linear.desc.x == 8 &&
              rb.res.linear.desc.w == 8 && rb.res.linear.desc.f == hipChannelFormatKindUnsigned,
          "linear back");
  CHECK(hipGetTextureObjectTextureDesc(&tb, tex));
  REQUIRE(tb.readMode == hipReadModeNormalizedFloat && tb.normalizedCoords == 0, "read mode");
  CHECK(hipDestroyTextureObject(tex));
  r.res.linear.sizeInBytes = 1025; /* past the allocation */
  EXPECT_ERR(hipCreateTextureObject(&tex, &r, &t, NULL), hipErrorInvalidValue);
  r.res.linear.sizeInBytes = 1024;
  r.res.linear.desc = hipCreateChannelDesc(8, 8, 8, 0, hipChannelFormatKindUnsigned);
  EXPECT_ERR(hipCreateTextureObject(&tex, &r, &t, NULL), hipErrorInvalidValue); /* 3 channels */

  size_t pitch;
  void* pitched;
  CHECK(hipMallocPitch(&pitched, &pitch, 32 * 4, 16));
  memset(&r, 0, sizeof r);
  r.resType = hipResourceTypePitch2D;
  r.res.pitch2D.devPtr = pitched;
  r.res.pitch2D.desc = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindSigned);
  r.res.pitch2D.width = 32;
  r.res.pitch2D.height = 16;
  r.res.pitch2D.pitchInBytes = pitch;
  hipResourceViewDesc view;
  memset(&view, 0, sizeof view);
  view.format = hipResViewFormatSignedInt1;
  view.width = 32;
  view.height = 16;
  /* A view applies to arrays only (ROCm). */
  EXPECT_ERR(hipCreateTextureObject(&tex, &r, &t, &view), hipErrorInvalidValue);
  CHECK(hipCreateTextureObject(&tex, &r, &t, NULL));
  CHECK(hipGetTextureObjectResourceDesc(&rb, tex));
  REQUIRE(rb.res.pitch2D.pitchInBytes == pitch && rb.res.pitch2D.height == 16, "pitch back");
  CHECK(hipDestroyTextureObject(tex));
  r.res.pitch2D.height = 17; /* past the allocation */
  EXPECT_ERR(hipCreateTextureObject(&tex, &r, &t, NULL), hipErrorInvalidValue);
  r.res.pitch2D.height = 16;
  r.res.pitch2D.pitchInBytes = 4; /* less than a row */
  EXPECT_ERR(hipCreateTextureObject(&tex, &r, &t, NULL), hipErrorInvalidValue);
  r.res.pitch2D.pitchInBytes = pitch;
  r.res.pitch2D.devPtr = (char*)pitched + 4; /* not aligned to textureAlignment */
  r.res.pitch2D.height = 15;
  EXPECT_ERR(hipCreateTextureObject(&tex, &r, &t, NULL), hipErrorInvalidValue);

  step("a view of an array");
  hipArray_t ia;
  hipChannelFormatDesc fi = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindSigned);
  CHECK(hipMallocArray(&ia, &fi, 32, 16, 0));
  memset(&r, 0, sizeof r);
  r.resType = hipResourceTypeArray;
  r.res.array.array = ia;
  CHECK(hipCreateTextureObject(&tex, &r, &t, &view));
  CHECK(hipGetTextureObjectResourceViewDesc(&v, tex));
  REQUIRE(v.format == hipResViewFormatSignedInt1 && v.width == 32 && v.height == 16, "view back");
  HIP_RESOURCE_VIEW_DESC dv;
  CHECK(hipTexObjectGetResourceViewDesc(&dv, tex));
  REQUIRE(dv.format == HIP_RES_VIEW_FORMAT_SINT_1X32 && dv.width == 32, "driver view");
  CHECK(hipDestroyTextureObject(tex));
  CHECK(hipFreeArray(ia));

  /* Errors. */
  memset(&r, 0, sizeof r);
  r.resType = hipResourceTypeArray;
  r.res.array.array = a;
  EXPECT_ERR(hipCreateTextureObject(NULL, &r, &t, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipCreateTextureObject(&tex, NULL, &t, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipCreateTextureObject(&tex, &r, NULL, NULL), hipErrorInvalidValue);
  t.addressMode[0] = (hipTextureAddressMode)9;
  EXPECT_ERR(hipCreateTextureObject(&tex, &r, &t, NULL), hipErrorInvalidValue);
  t = tex_desc();
  r.res.array.array = (hipArray_t)(uintptr_t)0x55;
  EXPECT_ERR(hipCreateTextureObject(&tex, &r, &t, NULL), hipErrorInvalidValue);
  r.resType = (hipResourceType)7;
  EXPECT_ERR(hipCreateTextureObject(&tex, &r, &t, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipDestroyTextureObject(NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipGetTextureObjectResourceDesc(NULL, (hipTextureObject_t)(uintptr_t)1),
             hipErrorInvalidValue);

  CHECK(hipFree(lin));
  CHECK(hipFree(pitched));
  CHECK(hipFreeArray(a));
}

static void driver_form(void) {
  step("hipTexObjectCreate over a mipmapped array");
  HIP_ARRAY3D_DESCRIPTOR d = {32, 32, 0, HIP_AD_FORMAT_HALF, 2, 0};
  hipMipmappedArray_t m;
  CHECK(hipMipmappedArrayCreate(&m, &d, 3));
  HIP_RESOURCE_DESC r;
  memset(&r, 0, sizeof r);
  r.resType = HIP_RESOURCE_TYPE_MIPMAPPED_ARRAY;
  r.res.mipmap.hMipmappedArray = m;
  HIP_TEXTURE_DESC t;
  memset(&t, 0, sizeof t);
  t.addressMode[0] = HIP_TR_ADDRESS_MODE_MIRROR;
  t.filterMode = HIP_TR_FILTER_MODE_LINEAR;
  t.mipmapFilterMode = HIP_TR_FILTER_MODE_LINEAR;
  t.flags = HIP_TRSF_NORMALIZED_COORDINATES | HIP_TRSF_SRGB;
  t.maxMipmapLevelClamp = 2.0f;
  hipTextureObject_t tex;
  CHECK(hipTexObjectCreate(&tex, &r, &t, NULL));
  HIP_RESOURCE_DESC rb;
  CHECK(hipTexObjectGetResourceDesc(&rb, tex));
  REQUIRE(rb.resType == HIP_RESOURCE_TYPE_MIPMAPPED_ARRAY && rb.res.mipmap.hMipmappedArray == m,
          "mipmap resource back");
  hipResourceDesc rr;
  CHECK(hipGetTextureObjectResourceDesc(&rr, tex));
  REQUIRE(rr.resType == hipResourceTypeMipmappedArray && rr.res.mipmap.mipmap == m, "runtime");
  hipTextureDesc tb;
  CHECK(hipGetTextureObjectTextureDesc(&tb, tex));
  REQUIRE(tb.sRGB == 1 && tb.normalizedCoords == 1 && tb.readMode == hipReadModeNormalizedFloat &&
              tb.filterMode == hipFilterModeLinear && tb.addressMode[0] == hipAddressModeMirror &&
              tb.maxMipmapLevelClamp == 2.0f,
          "runtime texture desc");
  CHECK(hipTexObjectDestroy(tex));
  EXPECT_ERR(hipTexObjectDestroy(tex), hipErrorInvalidValue);
  t.flags = HIP_TRSF_SRGB; /* mipmaps need normalized coordinates (ROCm) */
  EXPECT_ERR(hipTexObjectCreate(&tex, &r, &t, NULL), hipErrorInvalidValue);
  t.flags = HIP_TRSF_NORMALIZED_COORDINATES;
  r.flags = 1;
  EXPECT_ERR(hipTexObjectCreate(&tex, &r, &t, NULL), hipErrorInvalidValue);
  r.flags = 0;
  t.flags = 0x100;
  EXPECT_ERR(hipTexObjectCreate(&tex, &r, &t, NULL), hipErrorInvalidValue);
  t.flags = HIP_TRSF_NORMALIZED_COORDINATES;
  /* A texture object survives until destroyed; many can share an array. */
  hipTextureObject_t many[8];
  for (int i = 0; i < 8; i++) CHECK(hipTexObjectCreate(&many[i], &r, &t, NULL));
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < i; j++) REQUIRE(many[i] != many[j], "distinct texture objects");
  for (int i = 0; i < 8; i++) CHECK(hipTexObjectDestroy(many[i]));
  CHECK(hipMipmappedArrayDestroy(m));
}

int main(void) {
  begin("textures");
  runtime_form();
  driver_form();
  printf("PASS textures\n");
  return 0;
}
