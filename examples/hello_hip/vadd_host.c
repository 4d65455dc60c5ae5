/* vadd.hip for the host backend, written directly in hip-remote's host module format
 * (worker/include/hip_remote/host_module.h, docs/HOST_MODULES.md): one run_block function
 * per kernel that executes every thread of one block, plus the kernel table. */
#include <hip_remote/host_module.h>
#include <stddef.h>

struct vadd_args { const float* a; const float* b; float* c; int n; };

static void vadd_block(const void* raw, const hip_remote_block_ctx* ctx) {
  const struct vadd_args* args = raw;
  for (uint32_t t = 0; t < ctx->block[0]; t++) {
    int i = (int)(ctx->block_idx[0] * ctx->block[0] + t);
    if (i < args->n) args->c[i] = args->a[i] + args->b[i];
  }
}

static const hip_remote_param vadd_params[] = {
  {offsetof(struct vadd_args, a), sizeof(const float*)},
  {offsetof(struct vadd_args, b), sizeof(const float*)},
  {offsetof(struct vadd_args, c), sizeof(float*)},
  {offsetof(struct vadd_args, n), sizeof(int)},
};

static const hip_remote_kernel kernels[] = {
  {"vadd", vadd_block, 4, vadd_params, 0, 0},
};

const hip_remote_host_module hip_remote_host_module_v1 = {
  HIP_REMOTE_HOST_MODULE_MAGIC, HIP_REMOTE_HOST_MODULE_VERSION, 1, kernels, 0, NULL,
};
