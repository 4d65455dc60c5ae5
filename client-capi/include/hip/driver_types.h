/*
 * hip-remote: hip/driver_types.h: memory, array and resource types
 *
 * Part of hip-remote's own HIP headers (host API only). Types, enum values, struct layouts and
 * prototypes mirror the ROCm 7.2 (HIP 7.2.53211) C ABI exactly so that programs built against
 * these headers run unchanged against a real libamdhip64.so.7 and vice versa. Facts were taken
 * from bindgen output of ROCm 7.2's headers (crate cubecl-hip-sys, bindings_53211.rs), the
 * hip-python 7.x .pxd files, and ROCm 5.2 headers (C++ default arguments).
 * Generated, then reviewed; see client-capi/src/abi/ for the Rust mirror.
 */

#ifndef HIP_INCLUDE_HIP_DRIVER_TYPES_H
#define HIP_INCLUDE_HIP_DRIVER_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include <hip/hip_common.h>

typedef enum hipMemoryType {
  hipMemoryTypeUnregistered = 0,
  hipMemoryTypeHost = 1,
  hipMemoryTypeDevice = 2,
  hipMemoryTypeManaged = 3,
  hipMemoryTypeArray = 10,
  hipMemoryTypeUnified = 11,
} hipMemoryType;

#define HIP_TRSA_OVERRIDE_FORMAT 1
#define HIP_TRSF_READ_AS_INTEGER 1
#define HIP_TRSF_NORMALIZED_COORDINATES 2
#define HIP_TRSF_SRGB 16

#ifdef __cplusplus
extern "C" {
#endif

typedef void* hipDeviceptr_t;
typedef enum hipChannelFormatKind {
  hipChannelFormatKindSigned = 0,
  hipChannelFormatKindUnsigned = 1,
  hipChannelFormatKindFloat = 2,
  hipChannelFormatKindNone = 3,
} hipChannelFormatKind;

typedef struct hipChannelFormatDesc {
  int x;
  int y;
  int z;
  int w;
  hipChannelFormatKind f;
} hipChannelFormatDesc;

typedef struct hipArray hipArray;
typedef hipArray* hipArray_t;
typedef const hipArray* hipArray_const_t;
typedef enum hipArray_Format {
  HIP_AD_FORMAT_UNSIGNED_INT8 = 1,
  HIP_AD_FORMAT_UNSIGNED_INT16 = 2,
  HIP_AD_FORMAT_UNSIGNED_INT32 = 3,
  HIP_AD_FORMAT_SIGNED_INT8 = 8,
  HIP_AD_FORMAT_SIGNED_INT16 = 9,
  HIP_AD_FORMAT_SIGNED_INT32 = 10,
  HIP_AD_FORMAT_HALF = 16,
  HIP_AD_FORMAT_FLOAT = 32,
} hipArray_Format;

typedef struct HIP_ARRAY_DESCRIPTOR {
  size_t Width;
  size_t Height;
  hipArray_Format Format;
  unsigned int NumChannels;
} HIP_ARRAY_DESCRIPTOR;

typedef struct HIP_ARRAY3D_DESCRIPTOR {
  size_t Width;
  size_t Height;
  size_t Depth;
  hipArray_Format Format;
  unsigned int NumChannels;
  unsigned int Flags;
} HIP_ARRAY3D_DESCRIPTOR;

typedef struct hip_Memcpy2D {
  size_t srcXInBytes;
  size_t srcY;
  hipMemoryType srcMemoryType;
  const void* srcHost;
  hipDeviceptr_t srcDevice;
  hipArray_t srcArray;
  size_t srcPitch;
  size_t dstXInBytes;
  size_t dstY;
  hipMemoryType dstMemoryType;
  void* dstHost;
  hipDeviceptr_t dstDevice;
  hipArray_t dstArray;
  size_t dstPitch;
  size_t WidthInBytes;
  size_t Height;
} hip_Memcpy2D;

typedef struct hipMipmappedArray {
  void* data;
  hipChannelFormatDesc desc;
  unsigned int type;
  unsigned int width;
  unsigned int height;
  unsigned int depth;
  unsigned int min_mipmap_level;
  unsigned int max_mipmap_level;
  unsigned int flags;
  hipArray_Format format;
  unsigned int num_channels;
} hipMipmappedArray;

typedef hipMipmappedArray* hipMipmappedArray_t;
typedef hipMipmappedArray_t hipmipmappedArray;
typedef const hipMipmappedArray* hipMipmappedArray_const_t;
typedef enum hipResourceType {
  hipResourceTypeArray = 0,
  hipResourceTypeMipmappedArray = 1,
  hipResourceTypeLinear = 2,
  hipResourceTypePitch2D = 3,
} hipResourceType;

typedef enum HIPresourcetype_enum {
  HIP_RESOURCE_TYPE_ARRAY = 0,
  HIP_RESOURCE_TYPE_MIPMAPPED_ARRAY = 1,
  HIP_RESOURCE_TYPE_LINEAR = 2,
  HIP_RESOURCE_TYPE_PITCH2D = 3,
} HIPresourcetype_enum;

typedef HIPresourcetype_enum HIPresourcetype;
typedef HIPresourcetype_enum hipResourcetype;
typedef enum HIPaddress_mode_enum {
  HIP_TR_ADDRESS_MODE_WRAP = 0,
  HIP_TR_ADDRESS_MODE_CLAMP = 1,
  HIP_TR_ADDRESS_MODE_MIRROR = 2,
  HIP_TR_ADDRESS_MODE_BORDER = 3,
} HIPaddress_mode_enum;

typedef HIPaddress_mode_enum HIPaddress_mode;
typedef enum HIPfilter_mode_enum {
  HIP_TR_FILTER_MODE_POINT = 0,
  HIP_TR_FILTER_MODE_LINEAR = 1,
} HIPfilter_mode_enum;

typedef HIPfilter_mode_enum HIPfilter_mode;
typedef struct HIP_TEXTURE_DESC_st {
  HIPaddress_mode addressMode[3];
  HIPfilter_mode filterMode;
  unsigned int flags;
  unsigned int maxAnisotropy;
  HIPfilter_mode mipmapFilterMode;
  float mipmapLevelBias;
  float minMipmapLevelClamp;
  float maxMipmapLevelClamp;
  float borderColor[4];
  int reserved[12];
} HIP_TEXTURE_DESC_st;

typedef HIP_TEXTURE_DESC_st HIP_TEXTURE_DESC;
typedef enum hipResourceViewFormat {
  hipResViewFormatNone = 0,
  hipResViewFormatUnsignedChar1 = 1,
  hipResViewFormatUnsignedChar2 = 2,
  hipResViewFormatUnsignedChar4 = 3,
  hipResViewFormatSignedChar1 = 4,
  hipResViewFormatSignedChar2 = 5,
  hipResViewFormatSignedChar4 = 6,
  hipResViewFormatUnsignedShort1 = 7,
  hipResViewFormatUnsignedShort2 = 8,
  hipResViewFormatUnsignedShort4 = 9,
  hipResViewFormatSignedShort1 = 10,
  hipResViewFormatSignedShort2 = 11,
  hipResViewFormatSignedShort4 = 12,
  hipResViewFormatUnsignedInt1 = 13,
  hipResViewFormatUnsignedInt2 = 14,
  hipResViewFormatUnsignedInt4 = 15,
  hipResViewFormatSignedInt1 = 16,
  hipResViewFormatSignedInt2 = 17,
  hipResViewFormatSignedInt4 = 18,
  hipResViewFormatHalf1 = 19,
  hipResViewFormatHalf2 = 20,
  hipResViewFormatHalf4 = 21,
  hipResViewFormatFloat1 = 22,
  hipResViewFormatFloat2 = 23,
  hipResViewFormatFloat4 = 24,
  hipResViewFormatSignedBlockCompressed4 = 29,
  hipResViewFormatSignedBlockCompressed5 = 31,
  hipResViewFormatSignedBlockCompressed6H = 33,
} hipResourceViewFormat;

typedef enum HIPresourceViewFormat_enum {
  HIP_RES_VIEW_FORMAT_NONE = 0,
  HIP_RES_VIEW_FORMAT_UINT_1X8 = 1,
  HIP_RES_VIEW_FORMAT_UINT_2X8 = 2,
  HIP_RES_VIEW_FORMAT_UINT_4X8 = 3,
  HIP_RES_VIEW_FORMAT_SINT_1X8 = 4,
  HIP_RES_VIEW_FORMAT_SINT_2X8 = 5,
  HIP_RES_VIEW_FORMAT_SINT_4X8 = 6,
  HIP_RES_VIEW_FORMAT_UINT_1X16 = 7,
  HIP_RES_VIEW_FORMAT_UINT_2X16 = 8,
  HIP_RES_VIEW_FORMAT_UINT_4X16 = 9,
  HIP_RES_VIEW_FORMAT_SINT_1X16 = 10,
  HIP_RES_VIEW_FORMAT_SINT_2X16 = 11,
  HIP_RES_VIEW_FORMAT_SINT_4X16 = 12,
  HIP_RES_VIEW_FORMAT_UINT_1X32 = 13,
  HIP_RES_VIEW_FORMAT_UINT_2X32 = 14,
  HIP_RES_VIEW_FORMAT_UINT_4X32 = 15,
  HIP_RES_VIEW_FORMAT_SINT_1X32 = 16,
  HIP_RES_VIEW_FORMAT_SINT_2X32 = 17,
  HIP_RES_VIEW_FORMAT_SINT_4X32 = 18,
} HIPresourceViewFormat_enum;

typedef HIPresourceViewFormat_enum HIPresourceViewFormat;
typedef struct hipResourceDesc {
  hipResourceType resType;
  union {
    struct {
      hipArray_t array;
    } array;
    struct {
      hipMipmappedArray_t mipmap;
    } mipmap;
    struct {
      void* devPtr;
      hipChannelFormatDesc desc;
      size_t sizeInBytes;
    } linear;
    struct {
      void* devPtr;
      hipChannelFormatDesc desc;
      size_t width;
      size_t height;
      size_t pitchInBytes;
    } pitch2D;
  } res;
} hipResourceDesc;

typedef struct HIP_RESOURCE_DESC_st {
  HIPresourcetype resType;
  union {
    struct {
      hipArray_t hArray;
    } array;
    struct {
      hipMipmappedArray_t hMipmappedArray;
    } mipmap;
    struct {
      hipDeviceptr_t devPtr;
      hipArray_Format format;
      unsigned int numChannels;
      size_t sizeInBytes;
    } linear;
    struct {
      hipDeviceptr_t devPtr;
      hipArray_Format format;
      unsigned int numChannels;
      size_t width;
      size_t height;
      size_t pitchInBytes;
    } pitch2D;
    struct {
      int reserved[32];
    } reserved;
  } res;
  unsigned int flags;
} HIP_RESOURCE_DESC_st;

typedef HIP_RESOURCE_DESC_st HIP_RESOURCE_DESC;
typedef struct hipResourceViewDesc {
  hipResourceViewFormat format;
  size_t width;
  size_t height;
  size_t depth;
  unsigned int firstMipmapLevel;
  unsigned int lastMipmapLevel;
  unsigned int firstLayer;
  unsigned int lastLayer;
} hipResourceViewDesc;

typedef struct HIP_RESOURCE_VIEW_DESC_st {
  HIPresourceViewFormat format;
  size_t width;
  size_t height;
  size_t depth;
  unsigned int firstMipmapLevel;
  unsigned int lastMipmapLevel;
  unsigned int firstLayer;
  unsigned int lastLayer;
  unsigned int reserved[16];
} HIP_RESOURCE_VIEW_DESC_st;

typedef HIP_RESOURCE_VIEW_DESC_st HIP_RESOURCE_VIEW_DESC;
typedef enum hipMemcpyKind {
  hipMemcpyHostToHost = 0,
  hipMemcpyHostToDevice = 1,
  hipMemcpyDeviceToHost = 2,
  hipMemcpyDeviceToDevice = 3,
  hipMemcpyDefault = 4,
  hipMemcpyDeviceToDeviceNoCU = 1024,
} hipMemcpyKind;

typedef struct hipPitchedPtr {
  void* ptr;
  size_t pitch;
  size_t xsize;
  size_t ysize;
} hipPitchedPtr;

typedef struct hipExtent {
  size_t width;
  size_t height;
  size_t depth;
} hipExtent;

typedef struct hipPos {
  size_t x;
  size_t y;
  size_t z;
} hipPos;

typedef struct hipMemcpy3DParms {
  hipArray_t srcArray;
  hipPos srcPos;
  hipPitchedPtr srcPtr;
  hipArray_t dstArray;
  hipPos dstPos;
  hipPitchedPtr dstPtr;
  hipExtent extent;
  hipMemcpyKind kind;
} hipMemcpy3DParms;

typedef struct HIP_MEMCPY3D {
  size_t srcXInBytes;
  size_t srcY;
  size_t srcZ;
  size_t srcLOD;
  hipMemoryType srcMemoryType;
  const void* srcHost;
  hipDeviceptr_t srcDevice;
  hipArray_t srcArray;
  size_t srcPitch;
  size_t srcHeight;
  size_t dstXInBytes;
  size_t dstY;
  size_t dstZ;
  size_t dstLOD;
  hipMemoryType dstMemoryType;
  void* dstHost;
  hipDeviceptr_t dstDevice;
  hipArray_t dstArray;
  size_t dstPitch;
  size_t dstHeight;
  size_t WidthInBytes;
  size_t Height;
  size_t Depth;
} HIP_MEMCPY3D;

typedef enum hipMemLocationType {
  hipMemLocationTypeInvalid = 0,
  hipMemLocationTypeNone = 0,
  hipMemLocationTypeDevice = 1,
  hipMemLocationTypeHost = 2,
  hipMemLocationTypeHostNuma = 3,
  hipMemLocationTypeHostNumaCurrent = 4,
} hipMemLocationType;

typedef struct hipMemLocation {
  hipMemLocationType type;
  int id;
} hipMemLocation;

typedef enum hipMemcpyFlags {
  hipMemcpyFlagDefault = 0,
  hipMemcpyFlagPreferOverlapWithCompute = 1,
} hipMemcpyFlags;

typedef enum hipMemcpySrcAccessOrder {
  hipMemcpySrcAccessOrderInvalid = 0,
  hipMemcpySrcAccessOrderStream = 1,
  hipMemcpySrcAccessOrderDuringApiCall = 2,
  hipMemcpySrcAccessOrderAny = 3,
  hipMemcpySrcAccessOrderMax = 2147483647,
} hipMemcpySrcAccessOrder;

typedef struct hipMemcpyAttributes {
  hipMemcpySrcAccessOrder srcAccessOrder;
  hipMemLocation srcLocHint;
  hipMemLocation dstLocHint;
  unsigned int flags;
} hipMemcpyAttributes;

typedef enum hipMemcpy3DOperandType {
  hipMemcpyOperandTypePointer = 1,
  hipMemcpyOperandTypeArray = 2,
  hipMemcpyOperandTypeMax = 2147483647,
} hipMemcpy3DOperandType;

typedef struct hipOffset3D {
  size_t x;
  size_t y;
  size_t z;
} hipOffset3D;

typedef struct hipMemcpy3DOperand {
  hipMemcpy3DOperandType type;
  union {
    struct {
      void* ptr;
      size_t rowLength;
      size_t layerHeight;
      hipMemLocation locHint;
    } ptr;
    struct {
      hipArray_t array;
      hipOffset3D offset;
    } array;
  } op;
} hipMemcpy3DOperand;

typedef struct hipMemcpy3DBatchOp {
  hipMemcpy3DOperand src;
  hipMemcpy3DOperand dst;
  hipExtent extent;
  hipMemcpySrcAccessOrder srcAccessOrder;
  unsigned int flags;
} hipMemcpy3DBatchOp;

typedef struct hipMemcpy3DPeerParms {
  hipArray_t srcArray;
  hipPos srcPos;
  hipPitchedPtr srcPtr;
  int srcDevice;
  hipArray_t dstArray;
  hipPos dstPos;
  hipPitchedPtr dstPtr;
  int dstDevice;
  hipExtent extent;
} hipMemcpy3DPeerParms;

typedef enum hipFunction_attribute {
  HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2,
  HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
  HIP_FUNC_ATTRIBUTE_NUM_REGS = 4,
  HIP_FUNC_ATTRIBUTE_PTX_VERSION = 5,
  HIP_FUNC_ATTRIBUTE_BINARY_VERSION = 6,
  HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA = 7,
  HIP_FUNC_ATTRIBUTE_MAX = 10,
} hipFunction_attribute;

typedef enum hipPointer_attribute {
  HIP_POINTER_ATTRIBUTE_CONTEXT = 1,
  HIP_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
  HIP_POINTER_ATTRIBUTE_DEVICE_POINTER = 3,
  HIP_POINTER_ATTRIBUTE_HOST_POINTER = 4,
  HIP_POINTER_ATTRIBUTE_P2P_TOKENS = 5,
  HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS = 6,
  HIP_POINTER_ATTRIBUTE_BUFFER_ID = 7,
  HIP_POINTER_ATTRIBUTE_IS_MANAGED = 8,
  HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
  HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
  HIP_POINTER_ATTRIBUTE_RANGE_SIZE = 12,
  HIP_POINTER_ATTRIBUTE_MAPPED = 13,
  HIP_POINTER_ATTRIBUTE_ACCESS_FLAGS = 16,
  HIP_POINTER_ATTRIBUTE_MEMPOOL_HANDLE = 17,
} hipPointer_attribute;


static inline struct hipPitchedPtr make_hipPitchedPtr(void* d, size_t p, size_t xsz, size_t ysz) {
  struct hipPitchedPtr s;
  s.ptr = d;
  s.pitch = p;
  s.xsize = xsz;
  s.ysize = ysz;
  return s;
}

static inline struct hipPos make_hipPos(size_t x, size_t y, size_t z) {
  struct hipPos p;
  p.x = x;
  p.y = y;
  p.z = z;
  return p;
}

static inline struct hipExtent make_hipExtent(size_t w, size_t h, size_t d) {
  struct hipExtent e;
  e.width = w;
  e.height = h;
  e.depth = d;
  return e;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HIP_INCLUDE_HIP_DRIVER_TYPES_H */
