/*
 * hip_remote/host_module.h - the hip-remote host module ABI, version 1.
 *
 * (Version 2 adds `ctx->services`: assert and printf reporting; the worker loads both.)
 *
 * A host module is an ELF shared object for the worker's own CPU architecture that exports
 * one data symbol, `hip_remote_host_module_v1`, describing its kernels and globals. The
 * worker's host backend loads it (hipModuleLoadData with ModuleFormat::HostModule, or Auto)
 * and runs a kernel launch by calling `run_block` once per block of the grid.
 * hiprtc on the host backend produces such modules; they can also be written by hand.
 *
 * Contract (see docs/HOST_MODULES.md for the full text):
 *  - run_block runs every thread of one block. Blocks of one launch may run concurrently on
 *    different OS threads, in any order; run_block must be thread-safe and must not unwind
 *    (no C++ exception or longjmp may leave it).
 *  - `args` points to the launch's packed argument blob, aligned to at least
 *    HIP_REMOTE_HOST_ARGS_ALIGN bytes; parameter i occupies params[i].size bytes at
 *    params[i].offset. The blob is at least as long as the end of the last parameter.
 *  - `ctx->dynamic_shared` points to `ctx->dynamic_shared_size` bytes private to the block
 *    (NULL when the size is 0), aligned to HIP_REMOTE_HOST_ARGS_ALIGN, not zeroed.
 *  - Version 2 modules may call `ctx->services` (never NULL for them) from the thread that
 *    runs the block, while run_block runs: fault() ends the launch with an error after the
 *    blocks already started; print() appends kernel output to the launch's buffer.
 *  - Device pointers are host addresses: a kernel dereferences them directly.
 *  - The descriptor and everything it points to must stay valid and unchanged from the
 *    moment dlopen() returns until the module is unloaded. It may be filled in by a
 *    constructor (__attribute__((constructor))); the worker reads it after dlopen() returns.
 *  - Names are NUL-terminated, at most HIP_REMOTE_HOST_MAX_NAME_LEN bytes, unique per table.
 *  - Globals must lie inside the module's own mapped image (its .data/.bss).
 */
#ifndef HIP_REMOTE_HOST_MODULE_H
#define HIP_REMOTE_HOST_MODULE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HIP_REMOTE_HOST_MODULE_MAGIC 0x4D485248u /* "HRHM" little-endian */
#define HIP_REMOTE_HOST_MODULE_VERSION 2u
/* The oldest version the worker still loads (no `services` in the block context). */
#define HIP_REMOTE_HOST_MODULE_MIN_VERSION 1u

/* Name of the exported descriptor symbol. */
#define HIP_REMOTE_HOST_MODULE_SYMBOL "hip_remote_host_module_v1"

/* Alignment the worker guarantees for `args` and `dynamic_shared`. */
#define HIP_REMOTE_HOST_ARGS_ALIGN 64u

/* Limits the worker enforces when it loads a module (mirroring proto-core's limits). */
#define HIP_REMOTE_HOST_MAX_NAME_LEN 4096u     /* MAX_NAME_LEN */
#define HIP_REMOTE_HOST_MAX_PARAMS 1024u       /* MAX_KERNEL_PARAMS */
#define HIP_REMOTE_HOST_MAX_ARGS_SIZE 32768u   /* MAX_KERNEL_ARGS_LEN */
#define HIP_REMOTE_HOST_MAX_KERNELS 4096u
#define HIP_REMOTE_HOST_MAX_GLOBALS 4096u
#define HIP_REMOTE_HOST_MAX_THREADS_PER_BLOCK 1024u

/* fault() kinds. */
#define HIP_REMOTE_FAULT_ASSERT 1u /* a device-side assert failed: hipErrorAssert */
#define HIP_REMOTE_FAULT_LAUNCH 2u /* the kernel cannot go on: hipErrorLaunchFailure */

/* What the worker offers a running block (version 2). The first fault of a launch is
 * reported; the worker starts no further block after it. */
typedef struct hip_remote_launch_services {
    void *launch;  /* the worker's, opaque */
    uint64_t block; /* linear index of the block being run */
    void (*fault)(const struct hip_remote_launch_services *self, uint32_t kind, const char *message);
    void (*print)(const struct hip_remote_launch_services *self, const char *text, uint32_t len);
} hip_remote_launch_services;

typedef struct {
    uint32_t grid[3], block[3], block_idx[3];
    uint32_t dynamic_shared_size;
    void *dynamic_shared;
    const hip_remote_launch_services *services; /* version 2; present for version 1 modules too */
} hip_remote_block_ctx;

/* Runs every thread of one block. */
typedef void (*hip_remote_block_fn)(const void *args, const hip_remote_block_ctx *ctx);

typedef struct {
    uint32_t offset, size;
} hip_remote_param;

typedef struct {
    const char *name;                /* as hipModuleGetFunction looks it up */
    hip_remote_block_fn run_block;
    uint32_t num_params;
    const hip_remote_param *params;  /* num_params entries, declaration order */
    uint32_t static_shared_size;     /* reported by hipFuncGetAttributes */
    uint32_t max_threads_per_block;  /* 0: the device maximum (1024) */
} hip_remote_kernel;

typedef struct {
    const char *name;                /* as hipModuleGetGlobal looks it up */
    void *address;
    uint64_t size;                   /* bytes, > 0 */
} hip_remote_global;

typedef struct {
    uint32_t magic, version, num_kernels;
    const hip_remote_kernel *kernels;
    uint32_t num_globals;
    const hip_remote_global *globals;
} hip_remote_host_module;

#ifndef HIP_REMOTE_HOST_MODULE_NO_DECLARATION
/* exported data symbol: */ extern const hip_remote_host_module hip_remote_host_module_v1;
#endif

#if defined(__cplusplus) && __cplusplus >= 201103L
#define HIP_REMOTE_STATIC_ASSERT(c, m) static_assert(c, m)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define HIP_REMOTE_STATIC_ASSERT(c, m) _Static_assert(c, m)
#else
#define HIP_REMOTE_STATIC_ASSERT(c, m)
#endif
#if UINTPTR_MAX == 0xffffffffffffffffu
HIP_REMOTE_STATIC_ASSERT(sizeof(hip_remote_launch_services) == 32, "hip_remote_launch_services layout");
HIP_REMOTE_STATIC_ASSERT(sizeof(hip_remote_block_ctx) == 56, "hip_remote_block_ctx layout");
HIP_REMOTE_STATIC_ASSERT(sizeof(hip_remote_param) == 8, "hip_remote_param layout");
HIP_REMOTE_STATIC_ASSERT(sizeof(hip_remote_kernel) == 40, "hip_remote_kernel layout");
HIP_REMOTE_STATIC_ASSERT(sizeof(hip_remote_global) == 24, "hip_remote_global layout");
HIP_REMOTE_STATIC_ASSERT(sizeof(hip_remote_host_module) == 40, "hip_remote_host_module layout");
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HIP_REMOTE_HOST_MODULE_H */
