/* A hip-remote host module (worker/include/hip_remote/host_module.h) for the client's
 * argument-packing test (client-capi/tests/module_launch.rs): one kernel taking char, short,
 * int, float, double, pointer and a struct by value at the offsets clang gives them, and one
 * global. Built by the test with the system C compiler. */
#include <stdint.h>
#include <string.h>
#include "hip_remote/host_module.h"

struct Pair { char c; double d; };

int counter[4];

/* mixed(char c, short s, int i, float f, double d, double *out, struct Pair p) */
static void mixed_block(const void *args, const hip_remote_block_ctx *ctx) {
    const char *a = (const char *)args;
    char c; short s; int i; float f; double d; double *out; struct Pair p;
    memcpy(&c, a + 0, 1); memcpy(&s, a + 2, 2); memcpy(&i, a + 4, 4); memcpy(&f, a + 8, 4);
    memcpy(&d, a + 16, 8); memcpy(&out, a + 24, 8); memcpy(&p, a + 32, 16);
    for (uint32_t t = 0; t < ctx->block[0]; t++) {
        uint32_t idx = ctx->block_idx[0] * ctx->block[0] + t;
        out[idx] = c + s + i + f + d + p.c + p.d + counter[0] + idx * 1000.0;
    }
}

static const hip_remote_param mixed_params[] = {{0, 1}, {2, 2}, {4, 4}, {8, 4}, {16, 8}, {24, 8}, {32, 16}};
static const hip_remote_kernel kernels[] = {{"mixed", mixed_block, 7, mixed_params, 0, 0}};
static const hip_remote_global globals[] = {{"counter", counter, sizeof counter}};
const hip_remote_host_module hip_remote_host_module_v1 = {HIP_REMOTE_HOST_MODULE_MAGIC, HIP_REMOTE_HOST_MODULE_VERSION, 1, kernels, 1, globals};
