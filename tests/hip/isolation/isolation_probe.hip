// Process isolation on a GPU worker (scripts/device-isolation.sh): one program, one role per
// run, each role's verdict in its exit status and its last line.
//
//   normal            a verified vector add                                   -> PASS
//   workload SECONDS  verified vector adds for SECONDS seconds                -> PASS
//   wild              a kernel writes through a wild pointer; the synchronize
//                     and the calls after must all answer hipErrorIllegalAddress -> PASS
//   hold SEED         fills a buffer with pattern(SEED), prints "PTR 0x...",
//                     waits for a line on stdin, checks the buffer again       -> PASS
//   peek PTR SEED     a kernel reads another session's PTR: PASS when it faults
//                     or reads anything but pattern(SEED) (exit 3 when it read it)
#include <hip/hip_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

constexpr unsigned block_size = 256;
// Words of the held buffer (4 MiB): large enough that a stray match cannot happen by chance.
constexpr unsigned held_words = 1u << 20;
// An address no allocation of the session holds: high in the 48-bit space, below the
// canonical hole.
constexpr std::uintptr_t wild_address = 0x7f0000dead000ull;
constexpr int exit_fail = 1;
constexpr int exit_read_other_tenant = 3;

#define CHECK(call)                                                                                   \
    do {                                                                                              \
        const hipError_t e_ = (call);                                                                 \
        if(e_ != hipSuccess) {                                                                        \
            std::printf("FAIL %s: %s (%d) at line %d\n", #call, hipGetErrorName(e_), (int)e_, __LINE__); \
            std::exit(exit_fail);                                                                     \
        }                                                                                             \
    } while(0)

// A pattern no other program writes: a hash of the seed and the index.
static unsigned pattern(unsigned seed, unsigned i) {
    unsigned x = seed ^ (i * 0x9E3779B1u);
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    return x | 1u; // never 0: untouched memory never matches
}

__global__ void add_kernel(unsigned* out, const unsigned* a, const unsigned* b, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i < n) out[i] = a[i] + b[i];
}

__global__ void wild_write_kernel(unsigned* where) {
    if(blockIdx.x == 0 && threadIdx.x == 0) *(volatile unsigned*)where = 0xdeadbeefu;
}

__global__ void copy_kernel(unsigned* out, const unsigned* from, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if(i < n) out[i] = from[i];
}

// One verified vector add of n words; false (after printing why) on a wrong result.
static bool vector_add(unsigned n, unsigned round) {
    std::vector<unsigned> a(n), b(n), out(n);
    for(unsigned i = 0; i < n; ++i) {
        a[i] = i * 3u + round;
        b[i] = pattern(round, i);
    }
    unsigned *da, *db, *dout;
    const size_t bytes = n * sizeof(unsigned);
    CHECK(hipMalloc(&da, bytes));
    CHECK(hipMalloc(&db, bytes));
    CHECK(hipMalloc(&dout, bytes));
    CHECK(hipMemcpy(da, a.data(), bytes, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(db, b.data(), bytes, hipMemcpyHostToDevice));
    add_kernel<<<(n + block_size - 1) / block_size, block_size>>>(dout, da, db, n);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(out.data(), dout, bytes, hipMemcpyDeviceToHost));
    CHECK(hipFree(da));
    CHECK(hipFree(db));
    CHECK(hipFree(dout));
    for(unsigned i = 0; i < n; ++i) {
        if(out[i] != a[i] + b[i]) {
            std::printf("FAIL round %u: out[%u] = %u, expected %u\n", round, i, out[i], a[i] + b[i]);
            return false;
        }
    }
    return true;
}

static int normal() {
    if(!vector_add(100000, 1)) return exit_fail;
    std::printf("PASS\n");
    return 0;
}

static int workload(double seconds) {
    const auto start = std::chrono::steady_clock::now();
    unsigned rounds = 0;
    while(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
        if(!vector_add(1u << 18, rounds)) return exit_fail;
        ++rounds;
    }
    std::printf("%u verified rounds\nPASS\n", rounds);
    return 0;
}

static int wild() {
    unsigned* buffer;
    CHECK(hipMalloc(&buffer, 4096));
    wild_write_kernel<<<1, 1>>>(reinterpret_cast<unsigned*>(wild_address));
    const hipError_t launch = hipGetLastError();
    const hipError_t sync = hipDeviceSynchronize();
    const hipError_t again = hipDeviceSynchronize();
    unsigned word = 7;
    const hipError_t copy = hipMemcpy(buffer, &word, sizeof word, hipMemcpyHostToDevice);
    void* more = nullptr;
    const hipError_t alloc = hipMalloc(&more, 4096);
    std::printf("LAUNCH %d SYNC %d (%s) AGAIN %d COPY %d MALLOC %d\n", (int)launch, (int)sync, hipGetErrorName(sync), (int)again,
                (int)copy, (int)alloc);
    const bool sticky = sync == hipErrorIllegalAddress && again == hipErrorIllegalAddress && copy == hipErrorIllegalAddress;
    std::printf(sticky ? "PASS\n" : "FAIL: expected hipErrorIllegalAddress (700) from the synchronize and every call after\n");
    return sticky ? 0 : exit_fail;
}

static int hold(unsigned seed) {
    std::vector<unsigned> host(held_words), back(held_words);
    for(unsigned i = 0; i < held_words; ++i) host[i] = pattern(seed, i);
    unsigned* held;
    CHECK(hipMalloc(&held, held_words * sizeof(unsigned)));
    CHECK(hipMemcpy(held, host.data(), held_words * sizeof(unsigned), hipMemcpyHostToDevice));
    std::printf("PTR %p\n", (void*)held);
    std::fflush(stdout);
    std::string line;
    std::getline(std::cin, line);
    CHECK(hipMemcpy(back.data(), held, held_words * sizeof(unsigned), hipMemcpyDeviceToHost));
    if(back != host) {
        std::printf("FAIL: the held buffer changed\n");
        return exit_fail;
    }
    CHECK(hipFree(held));
    std::printf("PASS\n");
    return 0;
}

static int peek(std::uintptr_t address, unsigned seed) {
    unsigned* out;
    CHECK(hipMalloc(&out, held_words * sizeof(unsigned)));
    CHECK(hipMemset(out, 0, held_words * sizeof(unsigned)));
    copy_kernel<<<held_words / block_size, block_size>>>(out, reinterpret_cast<const unsigned*>(address), held_words);
    const hipError_t launch = hipGetLastError();
    const hipError_t sync = hipDeviceSynchronize();
    if(launch != hipSuccess || sync != hipSuccess) {
        std::printf("PEEK faulted: launch %d, synchronize %d (%s)\nPASS\n", (int)launch, (int)sync, hipGetErrorName(sync));
        return 0;
    }
    std::vector<unsigned> got(held_words);
    CHECK(hipMemcpy(got.data(), out, held_words * sizeof(unsigned), hipMemcpyDeviceToHost));
    unsigned matches = 0;
    for(unsigned i = 0; i < held_words; ++i) matches += got[i] == pattern(seed, i);
    std::printf("PEEK read %u words, %u of them the other session's pattern\n", held_words, matches);
    if(matches > 0) {
        std::printf("FAIL: this session read another tenant's memory\n");
        return exit_read_other_tenant;
    }
    std::printf("PASS\n");
    return 0;
}

int main(int argc, char** argv) {
    const std::string role = argc > 1 ? argv[1] : "";
    if(role == "normal") return normal();
    if(role == "workload" && argc == 3) return workload(std::atof(argv[2]));
    if(role == "wild") return wild();
    if(role == "hold" && argc == 3) return hold((unsigned)std::strtoul(argv[2], nullptr, 0));
    if(role == "peek" && argc == 4) return peek((std::uintptr_t)std::strtoull(argv[2], nullptr, 0), (unsigned)std::strtoul(argv[3], nullptr, 0));
    std::fprintf(stderr, "usage: %s normal | workload SECONDS | wild | hold SEED | peek PTR SEED\n", argv[0]);
    return 2;
}
