// Just enough of CUDA's device built-ins for clang's CUDA mode without a CUDA install
// (-nocudainc): the HIP names used by vadd.hip.
#pragma once
#define __global__ __attribute__((global))
struct __hr_dim { unsigned x, y, z; };
#define __HR_DIM(r) (__hr_dim{(unsigned)__nvvm_read_ptx_sreg_##r##_x(), (unsigned)__nvvm_read_ptx_sreg_##r##_y(), (unsigned)__nvvm_read_ptx_sreg_##r##_z()})
#define threadIdx __HR_DIM(tid)
#define blockIdx __HR_DIM(ctaid)
#define blockDim __HR_DIM(ntid)
