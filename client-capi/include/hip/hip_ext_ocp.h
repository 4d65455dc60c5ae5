/*
 * hip-remote: hip/hip_ext_ocp.h: the OCP microscaling number formats of ROCm 7.
 *
 * hip-remote provides the formats themselves — fp8 (hip_fp8.h), fp6 (hip_fp6.h), fp4
 * (hip_fp4.h) with their conversions — for every device. ROCm's block-scaled `__amd_*`
 * extension functions, which drive gfx950's scaling instructions, are not provided.
 */
#ifndef HIP_REMOTE_HIP_EXT_OCP_H
#define HIP_REMOTE_HIP_EXT_OCP_H

#include <hip/hip_fp4.h>
#include <hip/hip_fp6.h>
#include <hip/hip_fp8.h>

#endif /* HIP_REMOTE_HIP_EXT_OCP_H */
