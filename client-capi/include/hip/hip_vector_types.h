/*
 * hip-remote: hip/hip_vector_types.h: host-side vector types (plain C structs)
 *
 * Part of hip-remote's own HIP headers (host API only). Types, enum values, struct layouts and
 * prototypes mirror the ROCm 7.2 (HIP 7.2.53211) C ABI exactly so that programs built against
 * these headers run unchanged against a real libamdhip64.so.7 and vice versa. Facts were taken
 * from bindgen output of ROCm 7.2's headers (crate cubecl-hip-sys, bindings_53211.rs), the
 * hip-python 7.x .pxd files, and ROCm 5.2 headers (C++ default arguments).
 * Generated, then reviewed; see client-capi/src/abi/ for the Rust mirror.
 */

#ifndef HIP_INCLUDE_HIP_HIP_VECTOR_TYPES_H
#define HIP_INCLUDE_HIP_HIP_VECTOR_TYPES_H

/* These are the C-language layouts of ROCm's vector types (no over-alignment, no operators).
 * dim3 lives in hip_runtime_api.h, as in ROCm. */
/* Under hip-remote's hipcc the make_* helpers are host and device functions, as in HIP. */
#if defined(__cplusplus) && defined(__HIP_REMOTE_HIPCC__) && defined(__clang__)
#define __HIP_REMOTE_VECTOR_FN static inline __attribute__((host, device))
#else
#define __HIP_REMOTE_VECTOR_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct uchar1 {
  unsigned char x;
} uchar1;

typedef struct uchar2 {
  unsigned char x;
  unsigned char y;
} uchar2;

typedef struct uchar3 {
  unsigned char x;
  unsigned char y;
  unsigned char z;
} uchar3;

typedef struct uchar4 {
  unsigned char x;
  unsigned char y;
  unsigned char z;
  unsigned char w;
} uchar4;

typedef struct char1 {
  char x;
} char1;

typedef struct char2 {
  char x;
  char y;
} char2;

typedef struct char3 {
  char x;
  char y;
  char z;
} char3;

typedef struct char4 {
  char x;
  char y;
  char z;
  char w;
} char4;

typedef struct ushort1 {
  unsigned short x;
} ushort1;

typedef struct ushort2 {
  unsigned short x;
  unsigned short y;
} ushort2;

typedef struct ushort3 {
  unsigned short x;
  unsigned short y;
  unsigned short z;
} ushort3;

typedef struct ushort4 {
  unsigned short x;
  unsigned short y;
  unsigned short z;
  unsigned short w;
} ushort4;

typedef struct short1 {
  short x;
} short1;

typedef struct short2 {
  short x;
  short y;
} short2;

typedef struct short3 {
  short x;
  short y;
  short z;
} short3;

typedef struct short4 {
  short x;
  short y;
  short z;
  short w;
} short4;

typedef struct uint1 {
  unsigned int x;
} uint1;

typedef struct uint2 {
  unsigned int x;
  unsigned int y;
} uint2;

typedef struct uint3 {
  unsigned int x;
  unsigned int y;
  unsigned int z;
} uint3;

typedef struct uint4 {
  unsigned int x;
  unsigned int y;
  unsigned int z;
  unsigned int w;
} uint4;

typedef struct int1 {
  int x;
} int1;

typedef struct int2 {
  int x;
  int y;
} int2;

typedef struct int3 {
  int x;
  int y;
  int z;
} int3;

typedef struct int4 {
  int x;
  int y;
  int z;
  int w;
} int4;

typedef struct ulong1 {
  unsigned long x;
} ulong1;

typedef struct ulong2 {
  unsigned long x;
  unsigned long y;
} ulong2;

typedef struct ulong3 {
  unsigned long x;
  unsigned long y;
  unsigned long z;
} ulong3;

typedef struct ulong4 {
  unsigned long x;
  unsigned long y;
  unsigned long z;
  unsigned long w;
} ulong4;

typedef struct long1 {
  long x;
} long1;

typedef struct long2 {
  long x;
  long y;
} long2;

typedef struct long3 {
  long x;
  long y;
  long z;
} long3;

typedef struct long4 {
  long x;
  long y;
  long z;
  long w;
} long4;

typedef struct ulonglong1 {
  unsigned long long x;
} ulonglong1;

typedef struct ulonglong2 {
  unsigned long long x;
  unsigned long long y;
} ulonglong2;

typedef struct ulonglong3 {
  unsigned long long x;
  unsigned long long y;
  unsigned long long z;
} ulonglong3;

typedef struct ulonglong4 {
  unsigned long long x;
  unsigned long long y;
  unsigned long long z;
  unsigned long long w;
} ulonglong4;

typedef struct longlong1 {
  long long x;
} longlong1;

typedef struct longlong2 {
  long long x;
  long long y;
} longlong2;

typedef struct longlong3 {
  long long x;
  long long y;
  long long z;
} longlong3;

typedef struct longlong4 {
  long long x;
  long long y;
  long long z;
  long long w;
} longlong4;

typedef struct float1 {
  float x;
} float1;

typedef struct float2 {
  float x;
  float y;
} float2;

typedef struct float3 {
  float x;
  float y;
  float z;
} float3;

typedef struct float4 {
  float x;
  float y;
  float z;
  float w;
} float4;

typedef struct double1 {
  double x;
} double1;

typedef struct double2 {
  double x;
  double y;
} double2;

typedef struct double3 {
  double x;
  double y;
  double z;
} double3;

typedef struct double4 {
  double x;
  double y;
  double z;
  double w;
} double4;


__HIP_REMOTE_VECTOR_FN uchar1 make_uchar1(unsigned char x) {
  uchar1 r; r.x = x; return r;
}
__HIP_REMOTE_VECTOR_FN uchar2 make_uchar2(unsigned char x, unsigned char y) {
  uchar2 r; r.x = x; r.y = y; return r;
}
__HIP_REMOTE_VECTOR_FN uchar3 make_uchar3(unsigned char x, unsigned char y, unsigned char z) {
  uchar3 r; r.x = x; r.y = y; r.z = z; return r;
}
__HIP_REMOTE_VECTOR_FN uchar4 make_uchar4(unsigned char x, unsigned char y, unsigned char z, unsigned char w) {
  uchar4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r;
}
__HIP_REMOTE_VECTOR_FN char1 make_char1(signed char x) {
  char1 r; r.x = x; return r;
}
__HIP_REMOTE_VECTOR_FN char2 make_char2(signed char x, signed char y) {
  char2 r; r.x = x; r.y = y; return r;
}
__HIP_REMOTE_VECTOR_FN char3 make_char3(signed char x, signed char y, signed char z) {
  char3 r; r.x = x; r.y = y; r.z = z; return r;
}
__HIP_REMOTE_VECTOR_FN char4 make_char4(signed char x, signed char y, signed char z, signed char w) {
  char4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r;
}
__HIP_REMOTE_VECTOR_FN ushort1 make_ushort1(unsigned short x) {
  ushort1 r; r.x = x; return r;
}
__HIP_REMOTE_VECTOR_FN ushort2 make_ushort2(unsigned short x, unsigned short y) {
  ushort2 r; r.x = x; r.y = y; return r;
}
__HIP_REMOTE_VECTOR_FN ushort3 make_ushort3(unsigned short x, unsigned short y, unsigned short z) {
  ushort3 r; r.x = x; r.y = y; r.z = z; return r;
}
__HIP_REMOTE_VECTOR_FN ushort4 make_ushort4(unsigned short x, unsigned short y, unsigned short z, unsigned short w) {
  ushort4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r;
}
__HIP_REMOTE_VECTOR_FN short1 make_short1(short x) {
  short1 r; r.x = x; return r;
}
__HIP_REMOTE_VECTOR_FN short2 make_short2(short x, short y) {
  short2 r; r.x = x; r.y = y; return r;
}
__HIP_REMOTE_VECTOR_FN short3 make_short3(short x, short y, short z) {
  short3 r; r.x = x; r.y = y; r.z = z; return r;
}
__HIP_REMOTE_VECTOR_FN short4 make_short4(short x, short y, short z, short w) {
  short4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r;
}
__HIP_REMOTE_VECTOR_FN uint1 make_uint1(unsigned int x) {
  uint1 r; r.x = x; return r;
}
__HIP_REMOTE_VECTOR_FN uint2 make_uint2(unsigned int x, unsigned int y) {
  uint2 r; r.x = x; r.y = y; return r;
}
__HIP_REMOTE_VECTOR_FN uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) {
  uint3 r; r.x = x; r.y = y; r.z = z; return r;
}
__HIP_REMOTE_VECTOR_FN uint4 make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w) {
  uint4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r;
}
__HIP_REMOTE_VECTOR_FN int1 make_int1(int x) {
  int1 r; r.x = x; return r;
}
__HIP_REMOTE_VECTOR_FN int2 make_int2(int x, int y) {
  int2 r; r.x = x; r.y = y; return r;
}
__HIP_REMOTE_VECTOR_FN int3 make_int3(int x, int y, int z) {
  int3 r; r.x = x; r.y = y; r.z = z; return r;
}
__HIP_REMOTE_VECTOR_FN int4 make_int4(int x, int y, int z, int w) {
  int4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r;
}
__HIP_REMOTE_VECTOR_FN ulong1 make_ulong1(unsigned long x) {
  ulong1 r; r.x = x; return r;
}
__HIP_REMOTE_VECTOR_FN ulong2 make_ulong2(unsigned long x, unsigned long y) {
  ulong2 r; r.x = x; r.y = y; return r;
}
__HIP_REMOTE_VECTOR_FN ulong3 make_ulong3(unsigned long x, unsigned long y, unsigned long z) {
  ulong3 r; r.x = x; r.y = y; r.z = z; return r;
}
__HIP_REMOTE_VECTOR_FN ulong4 make_ulong4(unsigned long x, unsigned long y, unsigned long z, unsigned long w) {
  ulong4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r;
}
__HIP_REMOTE_VECTOR_FN long1 make_long1(long x) {
  long1 r; r.x = x; return r;
}
__HIP_REMOTE_VECTOR_FN long2 make_long2(long x, long y) {
  long2 r; r.x = x; r.y = y; return r;
}
__HIP_REMOTE_VECTOR_FN long3 make_long3(long x, long y, long z) {
  long3 r; r.x = x; r.y = y; r.z = z; return r;
}
__HIP_REMOTE_VECTOR_FN long4 make_long4(long x, long y, long z, long w) {
  long4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r;
}
__HIP_REMOTE_VECTOR_FN ulonglong1 make_ulonglong1(unsigned long long x) {
  ulonglong1 r; r.x = x; return r;
}
__HIP_REMOTE_VECTOR_FN ulonglong2 make_ulonglong2(unsigned long long x, unsigned long long y) {
  ulonglong2 r; r.x = x; r.y = y; return r;
}
__HIP_REMOTE_VECTOR_FN ulonglong3 make_ulonglong3(unsigned long long x, unsigned long long y, unsigned long long z) {
  ulonglong3 r; r.x = x; r.y = y; r.z = z; return r;
}
__HIP_REMOTE_VECTOR_FN ulonglong4 make_ulonglong4(unsigned long long x, unsigned long long y, unsigned long long z, unsigned long long w) {
  ulonglong4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r;
}
__HIP_REMOTE_VECTOR_FN longlong1 make_longlong1(long long x) {
  longlong1 r; r.x = x; return r;
}
__HIP_REMOTE_VECTOR_FN longlong2 make_longlong2(long long x, long long y) {
  longlong2 r; r.x = x; r.y = y; return r;
}
__HIP_REMOTE_VECTOR_FN longlong3 make_longlong3(long long x, long long y, long long z) {
  longlong3 r; r.x = x; r.y = y; r.z = z; return r;
}
__HIP_REMOTE_VECTOR_FN longlong4 make_longlong4(long long x, long long y, long long z, long long w) {
  longlong4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r;
}
__HIP_REMOTE_VECTOR_FN float1 make_float1(float x) {
  float1 r; r.x = x; return r;
}
__HIP_REMOTE_VECTOR_FN float2 make_float2(float x, float y) {
  float2 r; r.x = x; r.y = y; return r;
}
__HIP_REMOTE_VECTOR_FN float3 make_float3(float x, float y, float z) {
  float3 r; r.x = x; r.y = y; r.z = z; return r;
}
__HIP_REMOTE_VECTOR_FN float4 make_float4(float x, float y, float z, float w) {
  float4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r;
}
__HIP_REMOTE_VECTOR_FN double1 make_double1(double x) {
  double1 r; r.x = x; return r;
}
__HIP_REMOTE_VECTOR_FN double2 make_double2(double x, double y) {
  double2 r; r.x = x; r.y = y; return r;
}
__HIP_REMOTE_VECTOR_FN double3 make_double3(double x, double y, double z) {
  double3 r; r.x = x; r.y = y; r.z = z; return r;
}
__HIP_REMOTE_VECTOR_FN double4 make_double4(double x, double y, double z, double w) {
  double4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HIP_INCLUDE_HIP_HIP_VECTOR_TYPES_H */
