/*
 * hip-remote: HIP kernel built-ins for the two clang passes of hip-remote's hipcc.
 *
 * NVIDIA pass (__NVPTX__): definitions on clang's NVPTX builtins and inline PTX. Warp operations
 * use inline PTX (shfl.sync, vote.sync, bar.warp.sync: PTX ISA 6.0, what clang emits for sm_70
 * without a CUDA installation), so no `+ptxNN` target feature is needed.
 * Host pass: the same functions only declared __device__, so that kernel bodies (parsed there but
 * not emitted) type-check.
 * Included by hipcc_device.h; not meant to be included on its own.
 */
#ifndef HIP_REMOTE_DEVICE_BUILTINS_H
#define HIP_REMOTE_DEVICE_BUILTINS_H

#if defined(__NVPTX__)
#define __HIP_REMOTE_DEVICE_FN static __device__ inline __attribute__((always_inline))
#define __HIP_REMOTE_BODY(...) __VA_ARGS__
#else
#define __HIP_REMOTE_DEVICE_FN __device__
#define __HIP_REMOTE_BODY(...) ;
#endif

/* ---- bit casts (used below and by kernels) */
__HIP_REMOTE_DEVICE_FN float __int_as_float(int x) __HIP_REMOTE_BODY({ return __builtin_bit_cast(float, x); })
__HIP_REMOTE_DEVICE_FN int __float_as_int(float x) __HIP_REMOTE_BODY({ return __builtin_bit_cast(int, x); })
__HIP_REMOTE_DEVICE_FN float __uint_as_float(unsigned int x) __HIP_REMOTE_BODY({ return __builtin_bit_cast(float, x); })
__HIP_REMOTE_DEVICE_FN unsigned int __float_as_uint(float x) __HIP_REMOTE_BODY({ return __builtin_bit_cast(unsigned int, x); })
__HIP_REMOTE_DEVICE_FN double __longlong_as_double(long long x) __HIP_REMOTE_BODY({ return __builtin_bit_cast(double, x); })
__HIP_REMOTE_DEVICE_FN long long __double_as_longlong(double x) __HIP_REMOTE_BODY({ return __builtin_bit_cast(long long, x); })
__HIP_REMOTE_DEVICE_FN int __double2hiint(double x) __HIP_REMOTE_BODY({ return (int)(__double_as_longlong(x) >> 32); })
__HIP_REMOTE_DEVICE_FN int __double2loint(double x) __HIP_REMOTE_BODY({ return (int)__double_as_longlong(x); })
__HIP_REMOTE_DEVICE_FN double __hiloint2double(int hi, int lo)
    __HIP_REMOTE_BODY({ return __longlong_as_double((long long)(((unsigned long long)(unsigned int)hi << 32) | (unsigned int)lo)); })

/* ---- threadIdx, blockIdx, blockDim, gridDim: clang's __declspec(property) scheme (as in
 * __clang_cuda_builtin_vars.h), with getters that are only declared in the host pass. */
#if defined(__NVPTX__)
#define __HIP_REMOTE_SREG(sreg, axis) { return __nvvm_read_ptx_sreg_##sreg##_##axis(); }
#else
#define __HIP_REMOTE_SREG(sreg, axis) ;
#endif
#define __HIP_REMOTE_BUILTIN_VAR(type, sreg)                                                        \
  struct type {                                                                                     \
    __declspec(property(get = __get_x)) unsigned int x;                                             \
    __declspec(property(get = __get_y)) unsigned int y;                                             \
    __declspec(property(get = __get_z)) unsigned int z;                                             \
    static __device__ __attribute__((always_inline)) unsigned int __get_x() __HIP_REMOTE_SREG(sreg, x) \
    static __device__ __attribute__((always_inline)) unsigned int __get_y() __HIP_REMOTE_SREG(sreg, y) \
    static __device__ __attribute__((always_inline)) unsigned int __get_z() __HIP_REMOTE_SREG(sreg, z) \
    __device__ operator dim3() const { return dim3(__get_x(), __get_y(), __get_z()); }              \
    __device__ operator uint3() const {                                                             \
      uint3 r = {__get_x(), __get_y(), __get_z()};                                                  \
      return r;                                                                                     \
    }                                                                                               \
                                                                                                    \
   private:                                                                                         \
    __device__ type() = delete;                                                                     \
    __device__ type(const type&) = delete;                                                          \
    __device__ void operator=(const type&) const = delete;                                          \
    __device__ type* operator&() const = delete;                                                    \
  };
__HIP_REMOTE_BUILTIN_VAR(__hip_remote_threadIdx_t, tid)
__HIP_REMOTE_BUILTIN_VAR(__hip_remote_blockIdx_t, ctaid)
__HIP_REMOTE_BUILTIN_VAR(__hip_remote_blockDim_t, ntid)
__HIP_REMOTE_BUILTIN_VAR(__hip_remote_gridDim_t, nctaid)
#undef __HIP_REMOTE_BUILTIN_VAR
#undef __HIP_REMOTE_SREG
extern const __device__ __attribute__((weak)) __hip_remote_threadIdx_t threadIdx;
extern const __device__ __attribute__((weak)) __hip_remote_blockIdx_t blockIdx;
extern const __device__ __attribute__((weak)) __hip_remote_blockDim_t blockDim;
extern const __device__ __attribute__((weak)) __hip_remote_gridDim_t gridDim;

#define hipThreadIdx_x (threadIdx.x)
#define hipThreadIdx_y (threadIdx.y)
#define hipThreadIdx_z (threadIdx.z)
#define hipBlockIdx_x (blockIdx.x)
#define hipBlockIdx_y (blockIdx.y)
#define hipBlockIdx_z (blockIdx.z)
#define hipBlockDim_x (blockDim.x)
#define hipBlockDim_y (blockDim.y)
#define hipBlockDim_z (blockDim.z)
#define hipGridDim_x (gridDim.x)
#define hipGridDim_y (gridDim.y)
#define hipGridDim_z (gridDim.z)

/* NVIDIA warps are 32 lanes. Not a macro: hipDeviceProp_t has a member of that name. Both passes
 * agree on it, so kernel templates instantiated with it have the same names on both sides. */
static constexpr int warpSize = 32;

/* ---- barriers and fences */
#if !defined(__NVPTX__)
__device__ void __syncthreads();
#endif
__HIP_REMOTE_DEVICE_FN int __syncthreads_count(int predicate) __HIP_REMOTE_BODY({ return __nvvm_bar0_popc(predicate); })
__HIP_REMOTE_DEVICE_FN int __syncthreads_and(int predicate) __HIP_REMOTE_BODY({ return __nvvm_bar0_and(predicate); })
__HIP_REMOTE_DEVICE_FN int __syncthreads_or(int predicate) __HIP_REMOTE_BODY({ return __nvvm_bar0_or(predicate); })
__HIP_REMOTE_DEVICE_FN void __syncwarp(unsigned long long mask = 0xffffffffull)
    __HIP_REMOTE_BODY({ asm volatile("bar.warp.sync %0;" ::"r"((unsigned int)mask) : "memory"); })
__HIP_REMOTE_DEVICE_FN void __threadfence() __HIP_REMOTE_BODY({ __nvvm_membar_gl(); })
__HIP_REMOTE_DEVICE_FN void __threadfence_block() __HIP_REMOTE_BODY({ __nvvm_membar_cta(); })
__HIP_REMOTE_DEVICE_FN void __threadfence_system() __HIP_REMOTE_BODY({ __nvvm_membar_sys(); })

/* ---- atomics (global and shared memory: generic addressing). Relaxed, device scope, as HIP's;
 * the _system and _block forms use PTX's .sys and .cta scopes. */
#define __HIP_REMOTE_ATOMIC_RMW(name, builtin, T) \
  __HIP_REMOTE_DEVICE_FN T name(T* address, T value) __HIP_REMOTE_BODY({ return builtin(address, value, __ATOMIC_RELAXED); })
#define __HIP_REMOTE_ATOMIC_INTEGERS(name, builtin)             \
  __HIP_REMOTE_ATOMIC_RMW(name, builtin, int)                  \
  __HIP_REMOTE_ATOMIC_RMW(name, builtin, unsigned int)         \
  __HIP_REMOTE_ATOMIC_RMW(name, builtin, unsigned long)        \
  __HIP_REMOTE_ATOMIC_RMW(name, builtin, long long)            \
  __HIP_REMOTE_ATOMIC_RMW(name, builtin, unsigned long long)
__HIP_REMOTE_ATOMIC_INTEGERS(atomicAdd, __atomic_fetch_add)
__HIP_REMOTE_ATOMIC_INTEGERS(atomicSub, __atomic_fetch_sub)
__HIP_REMOTE_ATOMIC_INTEGERS(atomicMin, __atomic_fetch_min)
__HIP_REMOTE_ATOMIC_INTEGERS(atomicMax, __atomic_fetch_max)
__HIP_REMOTE_ATOMIC_INTEGERS(atomicAnd, __atomic_fetch_and)
__HIP_REMOTE_ATOMIC_INTEGERS(atomicOr, __atomic_fetch_or)
__HIP_REMOTE_ATOMIC_INTEGERS(atomicXor, __atomic_fetch_xor)
__HIP_REMOTE_ATOMIC_INTEGERS(atomicExch, __atomic_exchange_n)
#undef __HIP_REMOTE_ATOMIC_INTEGERS
#undef __HIP_REMOTE_ATOMIC_RMW

__HIP_REMOTE_DEVICE_FN float atomicAdd(float* address, float value) __HIP_REMOTE_BODY({ return __nvvm_atom_add_gen_f(address, value); })
__HIP_REMOTE_DEVICE_FN double atomicAdd(double* address, double value) __HIP_REMOTE_BODY({ return __nvvm_atom_add_gen_d(address, value); })
__HIP_REMOTE_DEVICE_FN float atomicSub(float* address, float value) __HIP_REMOTE_BODY({ return __nvvm_atom_add_gen_f(address, -value); })
__HIP_REMOTE_DEVICE_FN double atomicSub(double* address, double value) __HIP_REMOTE_BODY({ return __nvvm_atom_add_gen_d(address, -value); })
__HIP_REMOTE_DEVICE_FN float atomicExch(float* address, float value) __HIP_REMOTE_BODY({
  return __int_as_float(atomicExch((int*)address, __float_as_int(value)));
})
__HIP_REMOTE_DEVICE_FN double atomicExch(double* address, double value) __HIP_REMOTE_BODY({
  return __longlong_as_double(atomicExch((long long*)address, __double_as_longlong(value)));
})
__HIP_REMOTE_DEVICE_FN unsigned int atomicInc(unsigned int* address, unsigned int limit)
    __HIP_REMOTE_BODY({ return __nvvm_atom_inc_gen_ui(address, limit); })
__HIP_REMOTE_DEVICE_FN unsigned int atomicDec(unsigned int* address, unsigned int limit)
    __HIP_REMOTE_BODY({ return __nvvm_atom_dec_gen_ui(address, limit); })

#define __HIP_REMOTE_ATOMIC_CAS(T)                                                                   \
  __HIP_REMOTE_DEVICE_FN T atomicCAS(T* address, T compare, T value) __HIP_REMOTE_BODY({              \
    __atomic_compare_exchange_n(address, &compare, value, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED); \
    return compare;                                                                                  \
  })
__HIP_REMOTE_ATOMIC_CAS(int)
__HIP_REMOTE_ATOMIC_CAS(unsigned int)
__HIP_REMOTE_ATOMIC_CAS(unsigned long)
__HIP_REMOTE_ATOMIC_CAS(long long)
__HIP_REMOTE_ATOMIC_CAS(unsigned long long)
#undef __HIP_REMOTE_ATOMIC_CAS
__HIP_REMOTE_DEVICE_FN float atomicCAS(float* address, float compare, float value) __HIP_REMOTE_BODY({
  return __int_as_float(atomicCAS((int*)address, __float_as_int(compare), __float_as_int(value)));
})
__HIP_REMOTE_DEVICE_FN double atomicCAS(double* address, double compare, double value) __HIP_REMOTE_BODY({
  return __longlong_as_double(
      atomicCAS((long long*)address, __double_as_longlong(compare), __double_as_longlong(value)));
})

/* Float min/max: a compare-and-swap loop, as HIP does where the hardware has none. */
#define __HIP_REMOTE_ATOMIC_FLOAT_MINMAX(name, T, Bits, to_bits, from_bits, keep_old)  \
  __HIP_REMOTE_DEVICE_FN T name(T* address, T value) __HIP_REMOTE_BODY({               \
    Bits* word = (Bits*)address;                                                       \
    Bits old = *(volatile Bits*)word;                                                  \
    for (;;) {                                                                         \
      T current = from_bits(old);                                                      \
      if (keep_old) return current;                                                    \
      Bits seen = atomicCAS(word, old, to_bits(value));                                \
      if (seen == old) return current;                                                 \
      old = seen;                                                                      \
    }                                                                                  \
  })
__HIP_REMOTE_ATOMIC_FLOAT_MINMAX(atomicMin, float, int, __float_as_int, __int_as_float, !(value < current))
__HIP_REMOTE_ATOMIC_FLOAT_MINMAX(atomicMax, float, int, __float_as_int, __int_as_float, !(value > current))
__HIP_REMOTE_ATOMIC_FLOAT_MINMAX(atomicMin, double, long long, __double_as_longlong, __longlong_as_double, !(value < current))
__HIP_REMOTE_ATOMIC_FLOAT_MINMAX(atomicMax, double, long long, __double_as_longlong, __longlong_as_double, !(value > current))
#undef __HIP_REMOTE_ATOMIC_FLOAT_MINMAX

/* Scoped forms: PTX atom.sys.* / atom.cta.* (sm_60+). */
#define __HIP_REMOTE_ATOMIC_SCOPED(suffix, scope)                                                                      \
  __HIP_REMOTE_DEVICE_FN int atomicAdd##suffix(int* a, int v) __HIP_REMOTE_BODY({ return __nvvm_atom_##scope##_add_gen_i(a, v); }) \
  __HIP_REMOTE_DEVICE_FN unsigned int atomicAdd##suffix(unsigned int* a, unsigned int v)                              \
      __HIP_REMOTE_BODY({ return (unsigned int)__nvvm_atom_##scope##_add_gen_i((int*)a, (int)v); })                     \
  __HIP_REMOTE_DEVICE_FN unsigned long long atomicAdd##suffix(unsigned long long* a, unsigned long long v)            \
      __HIP_REMOTE_BODY({ return (unsigned long long)__nvvm_atom_##scope##_add_gen_ll((long long*)a, (long long)v); })  \
  __HIP_REMOTE_DEVICE_FN float atomicAdd##suffix(float* a, float v) __HIP_REMOTE_BODY({ return __nvvm_atom_##scope##_add_gen_f(a, v); }) \
  __HIP_REMOTE_DEVICE_FN double atomicAdd##suffix(double* a, double v) __HIP_REMOTE_BODY({ return __nvvm_atom_##scope##_add_gen_d(a, v); }) \
  __HIP_REMOTE_DEVICE_FN int atomicSub##suffix(int* a, int v) __HIP_REMOTE_BODY({ return __nvvm_atom_##scope##_add_gen_i(a, -v); }) \
  __HIP_REMOTE_DEVICE_FN unsigned int atomicSub##suffix(unsigned int* a, unsigned int v)                              \
      __HIP_REMOTE_BODY({ return (unsigned int)__nvvm_atom_##scope##_add_gen_i((int*)a, -(int)v); })                    \
  __HIP_REMOTE_DEVICE_FN int atomicExch##suffix(int* a, int v) __HIP_REMOTE_BODY({ return __nvvm_atom_##scope##_xchg_gen_i(a, v); }) \
  __HIP_REMOTE_DEVICE_FN unsigned int atomicExch##suffix(unsigned int* a, unsigned int v)                             \
      __HIP_REMOTE_BODY({ return (unsigned int)__nvvm_atom_##scope##_xchg_gen_i((int*)a, (int)v); })                    \
  __HIP_REMOTE_DEVICE_FN unsigned long long atomicExch##suffix(unsigned long long* a, unsigned long long v)           \
      __HIP_REMOTE_BODY({ return (unsigned long long)__nvvm_atom_##scope##_xchg_gen_ll((long long*)a, (long long)v); }) \
  __HIP_REMOTE_DEVICE_FN int atomicMin##suffix(int* a, int v) __HIP_REMOTE_BODY({ return __nvvm_atom_##scope##_min_gen_i(a, v); }) \
  __HIP_REMOTE_DEVICE_FN unsigned int atomicMin##suffix(unsigned int* a, unsigned int v)                              \
      __HIP_REMOTE_BODY({ return __nvvm_atom_##scope##_min_gen_ui(a, v); })                                             \
  __HIP_REMOTE_DEVICE_FN int atomicMax##suffix(int* a, int v) __HIP_REMOTE_BODY({ return __nvvm_atom_##scope##_max_gen_i(a, v); }) \
  __HIP_REMOTE_DEVICE_FN unsigned int atomicMax##suffix(unsigned int* a, unsigned int v)                              \
      __HIP_REMOTE_BODY({ return __nvvm_atom_##scope##_max_gen_ui(a, v); })                                             \
  __HIP_REMOTE_DEVICE_FN int atomicAnd##suffix(int* a, int v) __HIP_REMOTE_BODY({ return __nvvm_atom_##scope##_and_gen_i(a, v); }) \
  __HIP_REMOTE_DEVICE_FN int atomicOr##suffix(int* a, int v) __HIP_REMOTE_BODY({ return __nvvm_atom_##scope##_or_gen_i(a, v); }) \
  __HIP_REMOTE_DEVICE_FN int atomicXor##suffix(int* a, int v) __HIP_REMOTE_BODY({ return __nvvm_atom_##scope##_xor_gen_i(a, v); }) \
  __HIP_REMOTE_DEVICE_FN unsigned int atomicAnd##suffix(unsigned int* a, unsigned int v)                              \
      __HIP_REMOTE_BODY({ return (unsigned int)__nvvm_atom_##scope##_and_gen_i((int*)a, (int)v); })                     \
  __HIP_REMOTE_DEVICE_FN unsigned int atomicOr##suffix(unsigned int* a, unsigned int v)                               \
      __HIP_REMOTE_BODY({ return (unsigned int)__nvvm_atom_##scope##_or_gen_i((int*)a, (int)v); })                      \
  __HIP_REMOTE_DEVICE_FN unsigned int atomicXor##suffix(unsigned int* a, unsigned int v)                              \
      __HIP_REMOTE_BODY({ return (unsigned int)__nvvm_atom_##scope##_xor_gen_i((int*)a, (int)v); })                     \
  __HIP_REMOTE_DEVICE_FN int atomicCAS##suffix(int* a, int c, int v) __HIP_REMOTE_BODY({ return __nvvm_atom_##scope##_cas_gen_i(a, c, v); }) \
  __HIP_REMOTE_DEVICE_FN unsigned int atomicCAS##suffix(unsigned int* a, unsigned int c, unsigned int v)              \
      __HIP_REMOTE_BODY({ return (unsigned int)__nvvm_atom_##scope##_cas_gen_i((int*)a, (int)c, (int)v); })             \
  __HIP_REMOTE_DEVICE_FN unsigned long long atomicCAS##suffix(unsigned long long* a, unsigned long long c,            \
                                                              unsigned long long v) __HIP_REMOTE_BODY({             \
    return (unsigned long long)__nvvm_atom_##scope##_cas_gen_ll((long long*)a, (long long)c, (long long)v);           \
  })
__HIP_REMOTE_ATOMIC_SCOPED(_system, sys)
__HIP_REMOTE_ATOMIC_SCOPED(_block, cta)
#undef __HIP_REMOTE_ATOMIC_SCOPED

/* activemask.b32 needs PTX ISA 6.2; clang without CUDA emits 6.0 unless a +ptxNN feature is
 * given (which also makes the sync builtins available: that is how it is detected here). */
__HIP_REMOTE_DEVICE_FN unsigned long long __activemask() __HIP_REMOTE_BODY({
  unsigned int bits;
#if __has_builtin(__nvvm_shfl_sync_idx_i32)
  asm volatile("activemask.b32 %0;" : "=r"(bits));
#else
  asm volatile("{ .reg .pred p; setp.eq.u32 p, 1, 1; vote.ballot.b32 %0, p; }" : "=r"(bits));
#endif
  return bits;
})
/* ---- warp operations, with HIP's signatures: a 64-bit mask in the _sync forms, of which an
 * NVIDIA warp uses the low 32 bits; the forms without a mask act on the lanes active at the call
 * (as on AMD, where they may be called in divergent code: a full-warp mask would hang there).
 * Widths must be powers of two up to 32. */
#if defined(__NVPTX__)
#define __HIP_REMOTE_SHFL32(mode, clamp_bits)                                                              \
  static __device__ inline __attribute__((always_inline)) unsigned int __hip_remote_shfl_##mode(            \
      unsigned int mask, unsigned int value, unsigned int lane_or_delta, int width) {                      \
    unsigned int result;                                                                                   \
    unsigned int control = ((32u - (unsigned int)width) << 8) | (clamp_bits);                              \
    asm volatile("shfl.sync." #mode ".b32 %0, %1, %2, %3, %4;"                                             \
                 : "=r"(result)                                                                            \
                 : "r"(value), "r"(lane_or_delta), "r"(control), "r"(mask));                               \
    return result;                                                                                         \
  }
__HIP_REMOTE_SHFL32(idx, 0x1fu)
__HIP_REMOTE_SHFL32(up, 0u)
__HIP_REMOTE_SHFL32(down, 0x1fu)
__HIP_REMOTE_SHFL32(bfly, 0x1fu)
#undef __HIP_REMOTE_SHFL32
#define __HIP_REMOTE_SHFL_BODY(mode, T)                                                                              \
  {                                                                                                                  \
    unsigned int m = (unsigned int)mask;                                                                             \
    if (sizeof(T) == 4) {                                                                                            \
      unsigned int bits;                                                                                             \
      __builtin_memcpy(&bits, &var, 4);                                                                              \
      bits = __hip_remote_shfl_##mode(m, bits, (unsigned int)arg, width);                                            \
      T out;                                                                                                         \
      __builtin_memcpy(&out, &bits, 4);                                                                              \
      return out;                                                                                                    \
    }                                                                                                                \
    unsigned int halves[2];                                                                                          \
    __builtin_memcpy(halves, &var, 8);                                                                               \
    halves[0] = __hip_remote_shfl_##mode(m, halves[0], (unsigned int)arg, width);                                    \
    halves[1] = __hip_remote_shfl_##mode(m, halves[1], (unsigned int)arg, width);                                    \
    T out;                                                                                                           \
    __builtin_memcpy(&out, halves, 8);                                                                               \
    return out;                                                                                                      \
  }
#else
#define __HIP_REMOTE_SHFL_BODY(mode, T) ;
#endif
#define __HIP_REMOTE_SHFL_TYPE(T)                                                                                    \
  __HIP_REMOTE_DEVICE_FN T __shfl_sync(unsigned long long mask, T var, int arg, int width = warpSize)                \
      __HIP_REMOTE_SHFL_BODY(idx, T)                                                                                 \
  __HIP_REMOTE_DEVICE_FN T __shfl_up_sync(unsigned long long mask, T var, unsigned int arg, int width = warpSize)    \
      __HIP_REMOTE_SHFL_BODY(up, T)                                                                                  \
  __HIP_REMOTE_DEVICE_FN T __shfl_down_sync(unsigned long long mask, T var, unsigned int arg, int width = warpSize)  \
      __HIP_REMOTE_SHFL_BODY(down, T)                                                                                \
  __HIP_REMOTE_DEVICE_FN T __shfl_xor_sync(unsigned long long mask, T var, int arg, int width = warpSize)            \
      __HIP_REMOTE_SHFL_BODY(bfly, T)                                                                                \
  __HIP_REMOTE_DEVICE_FN T __shfl(T var, int src_lane, int width = warpSize)                                         \
      __HIP_REMOTE_BODY({ return __shfl_sync(__activemask(), var, src_lane, width); })                                \
  __HIP_REMOTE_DEVICE_FN T __shfl_up(T var, unsigned int delta, int width = warpSize)                                \
      __HIP_REMOTE_BODY({ return __shfl_up_sync(__activemask(), var, delta, width); })                                \
  __HIP_REMOTE_DEVICE_FN T __shfl_down(T var, unsigned int delta, int width = warpSize)                              \
      __HIP_REMOTE_BODY({ return __shfl_down_sync(__activemask(), var, delta, width); })                              \
  __HIP_REMOTE_DEVICE_FN T __shfl_xor(T var, int lane_mask, int width = warpSize)                                    \
      __HIP_REMOTE_BODY({ return __shfl_xor_sync(__activemask(), var, lane_mask, width); })
__HIP_REMOTE_SHFL_TYPE(int)
__HIP_REMOTE_SHFL_TYPE(unsigned int)
__HIP_REMOTE_SHFL_TYPE(long)
__HIP_REMOTE_SHFL_TYPE(unsigned long)
__HIP_REMOTE_SHFL_TYPE(long long)
__HIP_REMOTE_SHFL_TYPE(unsigned long long)
__HIP_REMOTE_SHFL_TYPE(float)
__HIP_REMOTE_SHFL_TYPE(double)
#undef __HIP_REMOTE_SHFL_TYPE
#undef __HIP_REMOTE_SHFL_BODY

__HIP_REMOTE_DEVICE_FN unsigned long long __ballot_sync(unsigned long long mask, int predicate) __HIP_REMOTE_BODY({
  unsigned int bits;
  asm volatile("{ .reg .pred p; setp.ne.s32 p, %1, 0; vote.sync.ballot.b32 %0, p, %2; }"
               : "=r"(bits)
               : "r"(predicate), "r"((unsigned int)mask));
  return bits;
})
__HIP_REMOTE_DEVICE_FN int __any_sync(unsigned long long mask, int predicate) __HIP_REMOTE_BODY({
  int result;
  asm volatile("{ .reg .pred p, q; setp.ne.s32 p, %1, 0; vote.sync.any.pred q, p, %2; selp.s32 %0, 1, 0, q; }"
               : "=r"(result)
               : "r"(predicate), "r"((unsigned int)mask));
  return result;
})
__HIP_REMOTE_DEVICE_FN int __all_sync(unsigned long long mask, int predicate) __HIP_REMOTE_BODY({
  int result;
  asm volatile("{ .reg .pred p, q; setp.ne.s32 p, %1, 0; vote.sync.all.pred q, p, %2; selp.s32 %0, 1, 0, q; }"
               : "=r"(result)
               : "r"(predicate), "r"((unsigned int)mask));
  return result;
})
__HIP_REMOTE_DEVICE_FN unsigned long long __ballot(int predicate) __HIP_REMOTE_BODY({ return __ballot_sync(__activemask(), predicate); })
__HIP_REMOTE_DEVICE_FN int __any(int predicate) __HIP_REMOTE_BODY({ return __any_sync(__activemask(), predicate); })
__HIP_REMOTE_DEVICE_FN int __all(int predicate) __HIP_REMOTE_BODY({ return __all_sync(__activemask(), predicate); })
__HIP_REMOTE_DEVICE_FN unsigned int __lane_id() __HIP_REMOTE_BODY({ return __nvvm_read_ptx_sreg_laneid(); })

/* ---- bit operations and integer intrinsics */
__HIP_REMOTE_DEVICE_FN int __popc(unsigned int x) __HIP_REMOTE_BODY({ return __builtin_popcount(x); })
__HIP_REMOTE_DEVICE_FN int __popcll(unsigned long long x) __HIP_REMOTE_BODY({ return __builtin_popcountll(x); })
__HIP_REMOTE_DEVICE_FN int __clz(int x) __HIP_REMOTE_BODY({ return x == 0 ? 32 : __builtin_clz((unsigned int)x); })
__HIP_REMOTE_DEVICE_FN int __clzll(long long x) __HIP_REMOTE_BODY({ return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); })
__HIP_REMOTE_DEVICE_FN int __ffs(int x) __HIP_REMOTE_BODY({ return x == 0 ? 0 : __builtin_ctz((unsigned int)x) + 1; })
__HIP_REMOTE_DEVICE_FN int __ffs(unsigned int x) __HIP_REMOTE_BODY({ return x == 0 ? 0 : __builtin_ctz(x) + 1; })
__HIP_REMOTE_DEVICE_FN int __ffsll(long long x)
    __HIP_REMOTE_BODY({ return x == 0 ? 0 : __builtin_ctzll((unsigned long long)x) + 1; })
__HIP_REMOTE_DEVICE_FN int __ffsll(unsigned long long x) __HIP_REMOTE_BODY({ return x == 0 ? 0 : __builtin_ctzll(x) + 1; })
__HIP_REMOTE_DEVICE_FN unsigned int __brev(unsigned int x) __HIP_REMOTE_BODY({ return __builtin_bitreverse32(x); })
__HIP_REMOTE_DEVICE_FN unsigned long long __brevll(unsigned long long x) __HIP_REMOTE_BODY({ return __builtin_bitreverse64(x); })
__HIP_REMOTE_DEVICE_FN int __mulhi(int x, int y) __HIP_REMOTE_BODY({ return __nvvm_mulhi_i(x, y); })
__HIP_REMOTE_DEVICE_FN unsigned int __umulhi(unsigned int x, unsigned int y) __HIP_REMOTE_BODY({ return __nvvm_mulhi_ui(x, y); })
__HIP_REMOTE_DEVICE_FN long long __mul64hi(long long x, long long y) __HIP_REMOTE_BODY({ return __nvvm_mulhi_ll(x, y); })
__HIP_REMOTE_DEVICE_FN unsigned long long __umul64hi(unsigned long long x, unsigned long long y)
    __HIP_REMOTE_BODY({ return __nvvm_mulhi_ull(x, y); })
__HIP_REMOTE_DEVICE_FN int __mul24(int x, int y) __HIP_REMOTE_BODY({ return __nvvm_mul24_i(x, y); })
__HIP_REMOTE_DEVICE_FN unsigned int __umul24(unsigned int x, unsigned int y) __HIP_REMOTE_BODY({ return __nvvm_mul24_ui(x, y); })
__HIP_REMOTE_DEVICE_FN unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s)
    __HIP_REMOTE_BODY({ return __nvvm_prmt(x, y, s & 0x7777u); }) /* HIP and CUDA take the low 3 bits of each nibble; PTX prmt reads bit 3 as sign replication */

/* ---- clocks: the SM cycle counter */
__HIP_REMOTE_DEVICE_FN long long clock64() __HIP_REMOTE_BODY({ return (long long)__nvvm_read_ptx_sreg_clock64(); })
__HIP_REMOTE_DEVICE_FN long long wall_clock64() __HIP_REMOTE_BODY({
  unsigned long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return (long long)ns;
})

/* ---- __ldg: loads through the read-only (non-coherent) cache */
#define __HIP_REMOTE_LDG(T, suffix) __HIP_REMOTE_DEVICE_FN T __ldg(const T* p) __HIP_REMOTE_BODY({ return __nvvm_ldg_##suffix(p); })
__HIP_REMOTE_LDG(char, c)
__HIP_REMOTE_DEVICE_FN signed char __ldg(const signed char* p) __HIP_REMOTE_BODY({ return (signed char)__nvvm_ldg_c((const char*)p); })
__HIP_REMOTE_LDG(short, s)
__HIP_REMOTE_LDG(int, i)
__HIP_REMOTE_LDG(long, l)
__HIP_REMOTE_LDG(long long, ll)
__HIP_REMOTE_LDG(unsigned char, uc)
__HIP_REMOTE_LDG(unsigned short, us)
__HIP_REMOTE_LDG(unsigned int, ui)
__HIP_REMOTE_LDG(unsigned long, ul)
__HIP_REMOTE_LDG(unsigned long long, ull)
__HIP_REMOTE_LDG(float, f)
__HIP_REMOTE_LDG(double, d)
#undef __HIP_REMOTE_LDG
/* Other types (vector structs): an ordinary load. */
template <typename T>
__HIP_REMOTE_DEVICE_FN T __ldg(const T* p) __HIP_REMOTE_BODY({ return *p; })

#endif /* HIP_REMOTE_DEVICE_BUILTINS_H */
