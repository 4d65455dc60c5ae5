/*
 * hip-remote: hip/hip_cooperative_groups.h: HIP's cooperative groups (namespace
 * `cooperative_groups`) for kernels on every hip-remote device: NVIDIA (hipcc's PTX) and the
 * host backend (the worker's C++ compiler; its blocks then run their threads as fibers).
 *
 * Written for hip-remote (not AMD's header), on HIP's own kernel functions (__syncthreads,
 * __syncwarp, __shfl*_sync, __ballot_sync), so it means the same everywhere:
 *  - thread_block: this_thread_block(); sync, thread_rank, size/num_threads, group_index,
 *    thread_index, group_dim/dim_threads;
 *  - thread_block_tile<N> (N a power of two up to the warp size, 32 on NVIDIA and the host
 *    backend): tiled_partition<N>(); shfl, shfl_up, shfl_down, shfl_xor, ballot, any, all,
 *    sync, thread_rank, size, meta_group_rank, meta_group_size; reduce() with plus, less,
 *    greater, bit_and, bit_or, bit_xor;
 *  - thread_group from tiled_partition(parent, size) (a tile of a size known at run time; one
 *    larger than a warp synchronizes the whole block) and coalesced_threads();
 *  - grid_group: this_grid(); sync across all blocks of a cooperative launch
 *    (hipLaunchCooperativeKernel), thread_rank, size, num_blocks, block_rank.
 * Limits: grid sync needs a cooperative launch (as in HIP; elsewhere it may wait forever) and
 * uses one barrier per module, so two cooperative launches of the same module must not run at
 * once; is_valid() cannot tell a cooperative launch from another and answers true;
 * multi-device groups (this_multi_grid) are not provided.
 * C++ only, and only for a HIP compiler (a plain host compiler sees nothing, as with ROCm's).
 */
#ifndef HIP_REMOTE_HIP_COOPERATIVE_GROUPS_H
#define HIP_REMOTE_HIP_COOPERATIVE_GROUPS_H

/* Device code only: a plain host compiler sees nothing, as with ROCm's header. */
#if defined(__cplusplus) && (defined(__HIP__) || defined(__CUDA__) || defined(__HIP_REMOTE_HOST__))

#if !defined(__HIP_REMOTE_HOST__)
#include <hip/hip_runtime.h>
#else
#include <sched.h>
#endif

#define HIP_REMOTE_CG_FN __device__ inline

namespace cooperative_groups {

namespace __hip_remote_cg {
HIP_REMOTE_CG_FN unsigned int block_rank() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
HIP_REMOTE_CG_FN unsigned int block_size() { return blockDim.x * blockDim.y * blockDim.z; }
HIP_REMOTE_CG_FN unsigned int grid_block_rank() { return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); }
HIP_REMOTE_CG_FN unsigned int grid_blocks() { return gridDim.x * gridDim.y * gridDim.z; }
/* The lanes of the warp-sized segment of `size` lanes that holds this thread. */
HIP_REMOTE_CG_FN unsigned long long segment_mask(unsigned int size) {
  if (size >= (unsigned int)warpSize) return (unsigned long long)__activemask();
  unsigned int base = (__lane_id() / size) * size;
  return (((1ull << size) - 1ull) << base) & (unsigned long long)__activemask();
}
/* One barrier per module for grid sync: blocks count in; the last one resets the count and
 * moves the generation on, which releases the others. */
HIP_REMOTE_CG_FN unsigned int* grid_barrier() {
  static unsigned int state[2]; /* count, generation */
  return state;
}
HIP_REMOTE_CG_FN void grid_sync() {
  __syncthreads();
  if (block_rank() == 0) {
    unsigned int* state = grid_barrier();
    unsigned int generation = atomicAdd(&state[1], 0u);
    __threadfence();
    if (atomicAdd(&state[0], 1u) + 1u == grid_blocks()) {
      atomicExch(&state[0], 0u);
      __threadfence();
      atomicAdd(&state[1], 1u);
    } else {
      while (atomicAdd(&state[1], 0u) == generation) {
#if defined(__HIP_REMOTE_HOST__)
        sched_yield(); /* blocks are threads of the worker: let the late ones run */
#endif
      }
    }
    __threadfence();
  }
  __syncthreads();
}
}  // namespace __hip_remote_cg

/* A group known at run time: a block, a tile of a block, the coalesced threads, the grid. */
class thread_group {
 public:
  enum kind { block_kind, tile_kind, coalesced_kind, grid_kind };
  HIP_REMOTE_CG_FN thread_group(kind k, unsigned int size, unsigned long long mask = 0) : kind_(k), size_(size), mask_(mask) {}
  HIP_REMOTE_CG_FN unsigned int size() const {
    return kind_ == grid_kind ? __hip_remote_cg::grid_blocks() * __hip_remote_cg::block_size() : size_;
  }
  HIP_REMOTE_CG_FN unsigned int num_threads() const { return size(); }
  HIP_REMOTE_CG_FN unsigned int thread_rank() const {
    switch (kind_) {
      case block_kind: return __hip_remote_cg::block_rank();
      case tile_kind: return __hip_remote_cg::block_rank() % size_;
      case coalesced_kind: {
        unsigned int lane = __lane_id();
        return (unsigned int)__popcll(mask_ & ((1ull << lane) - 1ull));
      }
      default: return __hip_remote_cg::grid_block_rank() * __hip_remote_cg::block_size() + __hip_remote_cg::block_rank();
    }
  }
  HIP_REMOTE_CG_FN bool is_valid() const { return true; }
  HIP_REMOTE_CG_FN void sync() const {
    switch (kind_) {
      case tile_kind:
        if (size_ <= (unsigned int)warpSize) {
          __syncwarp(__hip_remote_cg::segment_mask(size_));
        } else {
          __syncthreads();
        }
        break;
      case coalesced_kind: __syncwarp(mask_); break;
      case grid_kind: __hip_remote_cg::grid_sync(); break;
      default: __syncthreads();
    }
  }

 protected:
  kind kind_;
  unsigned int size_;
  unsigned long long mask_;
};

class thread_block : public thread_group {
 public:
  HIP_REMOTE_CG_FN thread_block() : thread_group(block_kind, __hip_remote_cg::block_size()) {}
  HIP_REMOTE_CG_FN dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  HIP_REMOTE_CG_FN dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
  HIP_REMOTE_CG_FN dim3 group_dim() const { return dim3(blockDim.x, blockDim.y, blockDim.z); }
  HIP_REMOTE_CG_FN dim3 dim_threads() const { return group_dim(); }
  HIP_REMOTE_CG_FN unsigned int thread_rank() const { return __hip_remote_cg::block_rank(); }
  HIP_REMOTE_CG_FN void sync() const { __syncthreads(); }
};

class grid_group : public thread_group {
 public:
  HIP_REMOTE_CG_FN grid_group() : thread_group(grid_kind, 0) {}
  HIP_REMOTE_CG_FN unsigned int num_blocks() const { return __hip_remote_cg::grid_blocks(); }
  HIP_REMOTE_CG_FN unsigned int block_rank() const { return __hip_remote_cg::grid_block_rank(); }
  HIP_REMOTE_CG_FN dim3 group_dim() const { return dim3(gridDim.x, gridDim.y, gridDim.z); }
  HIP_REMOTE_CG_FN void sync() const { __hip_remote_cg::grid_sync(); }
};

/* The threads active at the call, as CUDA's and HIP's coalesced_threads(). */
class coalesced_group : public thread_group {
 public:
  HIP_REMOTE_CG_FN explicit coalesced_group(unsigned long long mask)
      : thread_group(coalesced_kind, (unsigned int)__popcll(mask), mask) {}
  /* The value of the thread whose rank in the group is `rank`. */
  template <typename T>
  HIP_REMOTE_CG_FN T shfl(T var, unsigned int rank) const {
    unsigned long long m = mask_;
    for (unsigned int i = 0; i < rank % size_; ++i) m &= m - 1ull;
    /* Every argument spelled out: code that defines __shfl_sync as a 4-argument macro (ggml)
     * still reads it. */
    return __shfl_sync(mask_, var, __ffsll((long long)m) - 1, warpSize);
  }
  HIP_REMOTE_CG_FN unsigned long long ballot(int predicate) const {
    unsigned long long lanes = __ballot_sync(mask_, predicate), out = 0;
    unsigned int rank = 0;
    for (unsigned long long m = mask_; m; m &= m - 1ull, ++rank)
      if (lanes & (m & (~m + 1ull))) out |= 1ull << rank;
    return out;
  }
  HIP_REMOTE_CG_FN int any(int predicate) const { return __ballot_sync(mask_, predicate) != 0; }
  HIP_REMOTE_CG_FN int all(int predicate) const { return (__ballot_sync(mask_, predicate) & mask_) == mask_; }
};

/* A tile of N consecutive threads (by rank in the block); N a power of two <= the warp size. */
template <unsigned int N>
class thread_block_tile : public thread_group {
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "thread_block_tile<N>: N must be a power of two up to the warp size (32 on hip-remote's devices)");

 public:
  HIP_REMOTE_CG_FN thread_block_tile() : thread_group(tile_kind, N) {}
  HIP_REMOTE_CG_FN unsigned int thread_rank() const { return __hip_remote_cg::block_rank() % N; }
  HIP_REMOTE_CG_FN unsigned int size() const { return N; }
  HIP_REMOTE_CG_FN unsigned int num_threads() const { return N; }
  HIP_REMOTE_CG_FN unsigned int meta_group_rank() const { return __hip_remote_cg::block_rank() / N; }
  HIP_REMOTE_CG_FN unsigned int meta_group_size() const { return (__hip_remote_cg::block_size() + N - 1) / N; }
  HIP_REMOTE_CG_FN void sync() const { __syncwarp(__hip_remote_cg::segment_mask(N)); }
  template <typename T>
  HIP_REMOTE_CG_FN T shfl(T var, int src_rank) const {
    return __shfl_sync(__hip_remote_cg::segment_mask(N), var, src_rank, (int)N);
  }
  template <typename T>
  HIP_REMOTE_CG_FN T shfl_up(T var, unsigned int delta) const {
    return __shfl_up_sync(__hip_remote_cg::segment_mask(N), var, delta, (int)N);
  }
  template <typename T>
  HIP_REMOTE_CG_FN T shfl_down(T var, unsigned int delta) const {
    return __shfl_down_sync(__hip_remote_cg::segment_mask(N), var, delta, (int)N);
  }
  template <typename T>
  HIP_REMOTE_CG_FN T shfl_xor(T var, unsigned int lane_mask) const {
    return __shfl_xor_sync(__hip_remote_cg::segment_mask(N), var, (int)lane_mask, (int)N);
  }
  /* Bit r is the predicate of the tile's thread of rank r. */
  HIP_REMOTE_CG_FN unsigned long long ballot(int predicate) const {
    unsigned long long lanes = __ballot_sync(__hip_remote_cg::segment_mask(N), predicate);
    unsigned int base = (__lane_id() / N) * N;
    return N >= 64 ? lanes : (lanes >> base) & ((1ull << N) - 1ull);
  }
  HIP_REMOTE_CG_FN int any(int predicate) const { return ballot(predicate) != 0; }
  HIP_REMOTE_CG_FN int all(int predicate) const {
    unsigned int base = (__lane_id() / N) * N;
    unsigned long long present = (__hip_remote_cg::segment_mask(N) >> base) & (N >= 64 ? ~0ull : ((1ull << N) - 1ull));
    return ballot(predicate) == present;
  }
};

HIP_REMOTE_CG_FN thread_block this_thread_block() { return thread_block(); }
HIP_REMOTE_CG_FN grid_group this_grid() { return grid_group(); }
HIP_REMOTE_CG_FN coalesced_group coalesced_threads() { return coalesced_group((unsigned long long)__activemask()); }
template <unsigned int N, typename Parent>
HIP_REMOTE_CG_FN thread_block_tile<N> tiled_partition(const Parent&) {
  return thread_block_tile<N>();
}
HIP_REMOTE_CG_FN thread_group tiled_partition(const thread_group& parent, unsigned int tile_size) {
  (void)parent;
  return thread_group(thread_group::tile_kind, tile_size);
}

template <typename Group>
HIP_REMOTE_CG_FN void sync(const Group& g) {
  g.sync();
}
template <typename Group>
HIP_REMOTE_CG_FN unsigned int group_size(const Group& g) {
  return g.size();
}
template <typename Group>
HIP_REMOTE_CG_FN unsigned int thread_rank(const Group& g) {
  return g.thread_rank();
}

/* reduce(tile, value, op): op folded over the tile's values, the result in every thread. */
template <typename T>
struct plus {
  HIP_REMOTE_CG_FN T operator()(T a, T b) const { return a + b; }
};
template <typename T>
struct less {
  HIP_REMOTE_CG_FN T operator()(T a, T b) const { return b < a ? b : a; }
};
template <typename T>
struct greater {
  HIP_REMOTE_CG_FN T operator()(T a, T b) const { return a < b ? b : a; }
};
template <typename T>
struct bit_and {
  HIP_REMOTE_CG_FN T operator()(T a, T b) const { return a & b; }
};
template <typename T>
struct bit_or {
  HIP_REMOTE_CG_FN T operator()(T a, T b) const { return a | b; }
};
template <typename T>
struct bit_xor {
  HIP_REMOTE_CG_FN T operator()(T a, T b) const { return a ^ b; }
};
template <unsigned int N, typename T, typename Op>
HIP_REMOTE_CG_FN T reduce(const thread_block_tile<N>& tile, T value, Op op) {
  for (unsigned int offset = N / 2; offset > 0; offset /= 2) value = op(value, tile.shfl_xor(value, offset));
  return value;
}

}  // namespace cooperative_groups

#undef HIP_REMOTE_CG_FN
#endif /* device code */
#endif /* HIP_REMOTE_HIP_COOPERATIVE_GROUPS_H */
