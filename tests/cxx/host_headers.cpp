/*
 * hip/hip_runtime.h under a plain C++ compiler (g++, no hipcc), as a host-only translation
 * unit of a HIP program sees it: standard headers included after it still compile, and the
 * C++ forms of ROCm's headers (hipCreateChannelDesc<T>() and the half channels, the kernel-typed occupancy
 * functions, hipChooseDevice on hipDeviceProp_t) compile and answer as their C forms do.
 */
#include <hip/hip_runtime.h>
/* After hip_runtime.h: libstdc++ spells __attribute__((__noinline__)) in these. */
#include <future>
#include <iostream>
#include <memory>
#include <random>
#include <regex>

#define CHECK(expr)                                                                   \
  do {                                                                                \
    hipError_t e_ = (expr);                                                           \
    if (e_ != hipSuccess) {                                                           \
      std::cout << "FAIL " << __LINE__ << ": " #expr " -> " << hipGetErrorName(e_) << "\n"; \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)
#define REQUIRE(cond)                                                                 \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      std::cout << "FAIL " << __LINE__ << ": " #cond "\n";                            \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)

/* Declared as a HIP program declares a kernel; a plain host function to g++. */
__global__ void not_registered(int* out) { (void)out; }

int main() {
  hipChannelFormatDesc f4 = hipCreateChannelDesc<float4>();
  REQUIRE(f4.x == 32 && f4.y == 32 && f4.z == 32 && f4.w == 32 && f4.f == hipChannelFormatKindFloat);
  hipChannelFormatDesc u2 = hipCreateChannelDesc<uchar2>();
  REQUIRE(u2.x == 8 && u2.y == 8 && u2.z == 0 && u2.f == hipChannelFormatKindUnsigned);
  hipChannelFormatDesc i1 = hipCreateChannelDesc<int>();
  REQUIRE(i1.x == 32 && i1.y == 0 && i1.f == hipChannelFormatKindSigned);
  hipChannelFormatDesc none = hipCreateChannelDesc<double>();
  REQUIRE(none.x == 0 && none.f == hipChannelFormatKindNone);
  /* 64-bit longs have no channel layout on LP64 (ROCm's amd_channel_descriptor.h): generic. */
  hipChannelFormatDesc l = hipCreateChannelDesc<long>(), ul2 = hipCreateChannelDesc<ulong2>();
  REQUIRE(l.x == 0 && l.f == hipChannelFormatKindNone && ul2.x == 0 && ul2.y == 0 && ul2.f == hipChannelFormatKindNone);
  /* Half-precision channels (ROCm's hipCreateChannelDescHalf*): 16-bit float components. */
  hipChannelFormatDesc h = hipCreateChannelDescHalf(), h1 = hipCreateChannelDescHalf1(), h2 = hipCreateChannelDescHalf2();
  REQUIRE(h.x == 16 && h.y == 0 && h.f == hipChannelFormatKindFloat);
  REQUIRE(h1.x == 16 && h1.y == 0 && h1.z == 0 && h1.f == hipChannelFormatKindFloat);
  REQUIRE(h2.x == 16 && h2.y == 16 && h2.z == 0 && h2.w == 0 && h2.f == hipChannelFormatKindFloat);

  /* hipChooseDevice maps to hipChooseDeviceR0600 with hipDeviceProp_t (ROCm 7's layout). */
  hipDeviceProp_t want;
  std::memset(&want, 0, sizeof want);
  want.multiProcessorCount = 1;
  int dev = -1;
  CHECK(hipChooseDevice(&dev, &want));
  hipDeviceProp_t have;
  CHECK(hipGetDeviceProperties(&have, dev));
  REQUIRE(dev == 0 && have.multiProcessorCount >= 1);
  want.totalGlobalMem = have.totalGlobalMem + 1; /* more than any device has: device 0 */
  CHECK(hipChooseDeviceR0600(&dev, &want));
  REQUIRE(dev == 0);

  /* The kernel-typed occupancy forms reach the same entry points as the pointer forms. */
  int blocks = -1, blocks_c = -1, grid = -1, block = -1, grid_c = -1, block_c = -1;
  hipError_t typed = hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, not_registered, 64, 0);
  hipError_t plain = hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_c, reinterpret_cast<const void*>(not_registered), 64, 0);
  REQUIRE(typed == plain && blocks == blocks_c);
  typed = hipOccupancyMaxPotentialBlockSize(&grid, &block, not_registered);
  plain = hipOccupancyMaxPotentialBlockSize(&grid_c, &block_c, reinterpret_cast<const void*>(not_registered), 0, 0);
  REQUIRE(typed == plain && grid == grid_c && block == block_c);
  /* The variable-shared-memory search (ROCm's templates): NULL outputs and a NULL kernel are
   * hipErrorInvalidValue; for a kernel no fat binary registered it answers what
   * hipFuncGetAttributes does, before calling the size function. */
  auto per_thread = [](int n) { return static_cast<size_t>(n) * 4; };
  REQUIRE(hipOccupancyMaxPotentialBlockSizeVariableSMem(nullptr, &block, not_registered, per_thread) == hipErrorInvalidValue);
  REQUIRE(hipOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(&grid, nullptr, not_registered, per_thread, 0, 0) ==
          hipErrorInvalidValue);
  typedef size_t (*SizeFunction)(int);
  typedef void (*Kernel)(int*);
  const hipError_t null_kernel =
      hipOccupancyMaxPotentialBlockSizeVariableSMemWithFlags<SizeFunction, Kernel>(&grid, &block, nullptr, nullptr, 0, 0);
  REQUIRE(null_kernel == hipErrorInvalidValue);
  hipFuncAttributes attributes;
  const hipError_t unknown = hipFuncGetAttributes(&attributes, reinterpret_cast<const void*>(not_registered));
  bool size_function_called = false;
  REQUIRE(unknown != hipSuccess);
  REQUIRE(hipOccupancyMaxPotentialBlockSizeVariableSMem(&grid, &block, not_registered, [&](int) {
            size_function_called = true;
            return size_t{0};
          }) == unknown);
  REQUIRE(!size_function_called);
  (void)hipGetLastError();

  std::cout << "PASS host_headers\n";
  return 0;
}
