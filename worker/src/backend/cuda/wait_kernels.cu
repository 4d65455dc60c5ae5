// Wait kernels of the cuda backend: the hipStreamWaitValue32/64 conditions that CUDA's
// cuStreamWaitValue32/64 cannot express (they take no mask, so GTE and EQ under a partial
// mask have no CUDA form). The worker queues one of these on the waiting stream, one block of
// one thread; it polls the word until HIP's condition holds and returns, which releases the
// stream's later work.
//
// The conditions are ROCm's (ROCm/clr, rocclr/device/blitcl.cpp, `__amd_streamOpsWait`: the
// kernel that hipStreamWaitValue* runs on AMD GPUs unless GPU_STREAMOPS_CP_WAIT is set,
// dispatched by VirtualGPU::submitStreamOperation in rocclr/device/rocm/rocvirtual.cpp):
//   GTE (0)  (word & mask) >= value   unsigned and not cyclic: clr's `(int)(w & mask) <
//                                     (uint)value` converts both sides to unsigned
//   EQ  (1)  (word & mask) == value   the value is not masked
//   AND (2)  (word & mask & value) != 0
//   NOR (3)  ((word | value) & mask) != mask
// The condition numbers are HIP's flags (hipStreamWaitValueGte ... Nor), which are clr's
// ROCCLR_STREAM_WAIT_VALUE_* too. A 32-bit wait compares 32-bit words and values.
//
// Loads are `ld.acquire.sys`: the word is written from elsewhere (another stream's
// hipStreamWriteValue, a copy the client's host store became, a memset), so every poll must
// go to memory, and an acquire at system scope never reads a stale cached line. Between polls
// the thread sleeps (`nanosleep`, backing off up to MAX_PAUSE_NS), as clr's kernel does with
// s_sleep.
//
// Regenerate the PTX committed beside this file (wait_kernels.ptx, embedded in the worker)
// with scripts/wait-kernels-ptx.sh; the worker's unit tests check the entries it declares.

#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __forceinline__ __attribute__((always_inline)) inline

typedef unsigned int u32;
typedef unsigned long long u64;

// The first pause between two polls, and the longest (nanoseconds).
#define FIRST_PAUSE_NS 32u
#define MAX_PAUSE_NS 1024u

__device__ __forceinline__ u32 load_acquire32(const u32* word) {
  u32 v;
  asm volatile("ld.acquire.sys.u32 %0, [%1];" : "=r"(v) : "l"(word) : "memory");
  return v;
}

__device__ __forceinline__ u64 load_acquire64(const u64* word) {
  u64 v;
  asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(word) : "memory");
  return v;
}

__device__ __forceinline__ void pause_ns(u32 ns) { asm volatile("nanosleep.u32 %0;" ::"r"(ns)); }

// Whether `word` satisfies HIP's `condition` (see above); an unknown condition holds, so a
// bad launch never holds a stream for ever (the worker sends only the four).
__device__ __forceinline__ bool holds(u64 word, u64 value, u64 mask, u32 condition) {
  switch (condition) {
    case 0:
      return (word & mask) >= value;
    case 1:
      return (word & mask) == value;
    case 2:
      return (word & mask & value) != 0;
    case 3:
      return ((word | value) & mask) != mask;
    default:
      return true;
  }
}

extern "C" __global__ void hip_remote_wait_value32(const u32* word, u32 value, u32 mask, u32 condition) {
  u32 pause = FIRST_PAUSE_NS;
  while (!holds(load_acquire32(word), value, mask, condition)) {
    pause_ns(pause);
    pause = pause < MAX_PAUSE_NS ? pause * 2 : MAX_PAUSE_NS;
  }
}

extern "C" __global__ void hip_remote_wait_value64(const u64* word, u64 value, u64 mask, u32 condition) {
  u32 pause = FIRST_PAUSE_NS;
  while (!holds(load_acquire64(word), value, mask, condition)) {
    pause_ns(pause);
    pause = pause < MAX_PAUSE_NS ? pause * 2 : MAX_PAUSE_NS;
  }
}
