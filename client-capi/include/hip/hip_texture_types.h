/*
 * hip-remote: hip/hip_texture_types.h: texture types under ROCm's older name (texture_types.h).
 */
#ifndef HIP_REMOTE_HIP_TEXTURE_TYPES_H
#define HIP_REMOTE_HIP_TEXTURE_TYPES_H

#include <hip/texture_types.h>

#endif /* HIP_REMOTE_HIP_TEXTURE_TYPES_H */
