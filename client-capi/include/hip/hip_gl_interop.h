/*
 * hip-remote: hip/hip_gl_interop.h: OpenGL interoperability, as ROCm declares it.
 *
 * A hip-remote device is on another machine than the program's OpenGL context, so no GL
 * object can be shared with it: each call answers hipErrorNotSupported (and hipGLGetDevices
 * finds no device), which programs that probe for interop already handle.
 */
#ifndef HIP_REMOTE_HIP_GL_INTEROP_H
#define HIP_REMOTE_HIP_GL_INTEROP_H

#include <hip/hip_runtime_api.h>

typedef unsigned int GLuint;
typedef unsigned int GLenum;

typedef enum hipGLDeviceList {
  hipGLDeviceListAll = 1,
  hipGLDeviceListCurrentFrame = 2,
  hipGLDeviceListNextFrame = 3,
} hipGLDeviceList;

static inline hipError_t hipGLGetDevices(unsigned int* pHipDeviceCount, int* pHipDevices, unsigned int hipDeviceCount,
                                         hipGLDeviceList deviceList) {
  (void)pHipDevices;
  (void)hipDeviceCount;
  (void)deviceList;
  if (pHipDeviceCount) *pHipDeviceCount = 0;
  return hipErrorNotSupported;
}
static inline hipError_t hipGraphicsGLRegisterBuffer(hipGraphicsResource** resource, GLuint buffer, unsigned int flags) {
  (void)resource;
  (void)buffer;
  (void)flags;
  return hipErrorNotSupported;
}
static inline hipError_t hipGraphicsGLRegisterImage(hipGraphicsResource** resource, GLuint image, GLenum target,
                                                    unsigned int flags) {
  (void)resource;
  (void)image;
  (void)target;
  (void)flags;
  return hipErrorNotSupported;
}

#endif /* HIP_REMOTE_HIP_GL_INTEROP_H */
