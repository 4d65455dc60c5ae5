// hip_cooperative_groups.h on the device: thread blocks, static and dynamic tiles (ranks,
// shuffles, votes, reduce, sync), coalesced groups, and grid-wide sync on a cooperative
// launch; every result checked on the host against values computed here.
#include "sample_utils.hpp"

#include <hip/hip_cooperative_groups.h>

#include <cstdio>
#include <vector>

namespace cg = cooperative_groups;

constexpr unsigned int block = 64;
constexpr unsigned int blocks = 8;
constexpr int per_thread = 12;

// Per thread: block rank and size, tile<8> rank/meta rank/meta size, reduce over tile<8>,
// tile<32> reduce (max), shfl from tile rank 3, shfl_down by 1, shfl_xor 4, ballot of odd
// ranks in tile<8>, any/all, dynamic tile of 4: rank.
__global__ void groups(int* out) {
    cg::thread_block b = cg::this_thread_block();
    int rank = (int)b.thread_rank();
    int* o = out + (blockIdx.x * block + rank) * per_thread;
    cg::thread_block_tile<8> t8 = cg::tiled_partition<8>(b);
    cg::thread_block_tile<32> t32 = cg::tiled_partition<32>(b);
    o[0] = rank + 1000 * (int)b.size();
    o[1] = (int)t8.thread_rank() + 100 * (int)t8.meta_group_rank() + 10000 * (int)t8.meta_group_size();
    o[2] = cg::reduce(t8, rank, cg::plus<int>());
    o[3] = cg::reduce(t32, rank * 7 % 32, cg::greater<int>()) + 100 * cg::reduce(t32, rank, cg::less<int>());
    o[4] = t8.shfl(rank, 3);
    o[5] = t8.shfl_down(rank, 1);
    o[6] = t8.shfl_xor(rank, 4);
    o[7] = (int)t8.ballot(rank & 1);
    o[8] = t8.any(rank == 5) + 2 * t8.all(rank >= 0) + 4 * t8.all(rank < 4);
    cg::thread_group t4 = cg::tiled_partition(b, 4);
    t4.sync();
    t8.sync();
    b.sync();
    o[9] = (int)t4.thread_rank() + 10 * (int)t4.size();
    o[10] = (int)cg::group_size(t32) + (int)cg::thread_rank(t32) * 100;
    cg::coalesced_group active = cg::coalesced_threads();
    o[11] = (int)active.size();
}

// Each block writes its number, the grid syncs, each block reads its neighbour's: without
// the grid barrier a block could read before the neighbour wrote. Twice, so the barrier is
// reused within one launch.
__global__ void grid_exchange(int* slots, int* seen) {
    cg::grid_group grid = cg::this_grid();
    unsigned int me = grid.block_rank(), n = grid.num_blocks();
    for (int round = 0; round < 2; ++round) {
        if (threadIdx.x == 0) slots[round * blocks + me] = (int)(me + 1 + 100 * round);
        grid.sync();
        if (threadIdx.x == 0) seen[round * blocks + me] = slots[round * blocks + (me + 1) % n];
    }
    if (threadIdx.x == 0) seen[2 * blocks + me] = (int)grid.size() + 100000 * (int)grid.thread_rank() / (int)block;
}

int main() {
    int *dout, *dslots, *dseen;
    const size_t count = blocks * block * per_thread;
    HIP_CHECK(hipMalloc(&dout, count * sizeof(int)));
    HIP_CHECK(hipMalloc(&dslots, 2 * blocks * sizeof(int)));
    HIP_CHECK(hipMalloc(&dseen, 3 * blocks * sizeof(int)));
    HIP_CHECK(hipMemset(dslots, 0, 2 * blocks * sizeof(int)));
    groups<<<blocks, block>>>(dout);
    HIP_CHECK(hipGetLastError());
    void* args[] = {&dslots, &dseen};
    HIP_CHECK(hipLaunchCooperativeKernel(reinterpret_cast<const void*>(grid_exchange), dim3(blocks), dim3(block), args, 0, 0));
    std::vector<int> out(count), seen(3 * blocks);
    HIP_CHECK(hipMemcpy(out.data(), dout, count * sizeof(int), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(seen.data(), dseen, seen.size() * sizeof(int), hipMemcpyDeviceToHost));

    int errors = 0;
    for (unsigned int bi = 0; bi < blocks; ++bi) {
        for (int r = 0; r < (int)block; ++r) {
            const int* o = &out[(bi * block + r) * per_thread];
            int base8 = r / 8 * 8, base32 = r / 32 * 32, lane8 = r % 8;
            int sum8 = 0, max32 = 0;
            for (int k = 0; k < 8; ++k) sum8 += base8 + k;
            for (int k = 0; k < 32; ++k) max32 = std::max(max32, (base32 + k) * 7 % 32);
            int odd_ballot = 0;
            for (int k = 0; k < 8; ++k) odd_ballot |= ((base8 + k) & 1) << k;
            const int expected[per_thread] = {
                r + 1000 * (int)block,
                lane8 + 100 * (r / 8) + 10000 * (int)(block / 8),
                sum8,
                max32 + 100 * base32,
                base8 + 3,
                lane8 < 7 ? r + 1 : r,  // the last lane keeps its own value
                base8 + (lane8 ^ 4),
                odd_ballot,
                (base8 == 0 ? 1 : 0) + 2 + (base8 + 7 < 4 ? 4 : 0),
                r % 4 + 40,
                32 + (r % 32) * 100,
                32,  // the whole warp is active
            };
            for (int k = 0; k < per_thread; ++k) {
                if (o[k] != expected[k]) {
                    if (errors < 20) std::printf("block %u thread %d value %d: %d, expected %d\n", bi, r, k, o[k], expected[k]);
                    ++errors;
                }
            }
        }
    }
    for (unsigned int bi = 0; bi < blocks; ++bi) {
        for (int round = 0; round < 2; ++round) {
            int want = (int)((bi + 1) % blocks + 1 + 100 * round);
            if (seen[round * blocks + bi] != want) {
                std::printf("grid sync round %d: block %u saw %d, expected %d\n", round, bi, seen[round * blocks + bi], want);
                ++errors;
            }
        }
        int want = (int)(blocks * block) + 100000 * (int)bi;
        if (seen[2 * blocks + bi] != want) {
            std::printf("grid size/rank: block %u: %d, expected %d\n", bi, seen[2 * blocks + bi], want);
            ++errors;
        }
    }
    HIP_CHECK(hipFree(dout));
    HIP_CHECK(hipFree(dslots));
    HIP_CHECK(hipFree(dseen));
    return report_validation(errors);
}
