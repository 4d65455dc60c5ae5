/*
 * The module family beyond load/get/launch: kernel counts, libraries and kernels, AMD's
 * extended launches (global work sizes, start/stop events), cooperative launches (every block
 * resident: a grid-wide count only completes if all blocks run at once; a grid too large is
 * refused), launches with attributes, the old hipConfigureCall stack, hipGetProcAddress /
 * hipGetDriverEntryPoint returning working entry points, the dynamic shared memory occupancy
 * query, and with two devices the multi-device forms. Kernels come from hiprtc on the worker.
 */
#include "check.h"
#include <hip/hip_ext.h>
#include <hip/hiprtc.h>
#include <unistd.h>

static const char* SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void fill(int* out, int base) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  out[i] = base + i;\n"
    "}\n"
    "extern \"C\" __global__ void grid_count(int* counter, int* seen, int nblocks) {\n"
    "  if (threadIdx.x == 0) {\n"
    "    atomicAdd(counter, 1);\n"
    "    long long spins = 0;\n"
    "    while (atomicAdd(counter, 0) < nblocks && spins < (1LL << 24)) spins++;\n"
    "    seen[blockIdx.x] = atomicAdd(counter, 0);\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void mixed(char c, double d, int* out) {\n"
    "  if (threadIdx.x == 0 && blockIdx.x == 0) { out[0] = c; out[1] = (int)(d * 4); }\n"
    "}\n";

#define RTC_CHECK(expr)                                                                       \
  do {                                                                                        \
    hiprtcResult r_ = (expr);                                                                 \
    if (r_ != HIPRTC_SUCCESS) {                                                               \
      printf("FAIL %s:%d: %s returned %s\n", __FILE__, __LINE__, #expr, hiprtcGetErrorString(r_)); \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)

/* ROCm names these as enumerators; the numbers are what the API returns. */
#define PROC_SUCCESS 0u
#define PROC_SYMBOL_NOT_FOUND 1u
#define PROC_VERSION_NOT_SUFFICIENT 2u
#define D3(x) ((dim3){(x), 1, 1})
#define N 256
#define BLOCK 64

static char* compile(size_t* size) {
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  hiprtcProgram prog;
  RTC_CHECK(hiprtcCreateProgram(&prog, SOURCE, "module_extra.hip", 0, NULL, NULL));
  char arch[300];
  snprintf(arch, sizeof arch, "--offload-arch=%s", props.gcnArchName);
  const char* opts[] = {arch, "-O2"};
  if (hiprtcCompileProgram(prog, 2, opts) != HIPRTC_SUCCESS) {
    size_t n = 0;
    hiprtcGetProgramLogSize(prog, &n);
    char* log = malloc(n + 1);
    hiprtcGetProgramLog(prog, log);
    printf("FAIL compile:\n%s\n", log);
    exit(1);
  }
  RTC_CHECK(hiprtcGetCodeSize(prog, size));
  char* code = malloc(*size);
  RTC_CHECK(hiprtcGetCode(prog, code));
  RTC_CHECK(hiprtcDestroyProgram(&prog));
  return code;
}

static void expect_fill(int* d_out, int base, int n) {
  int h[N];
  CHECK(hipMemcpy(h, d_out, n * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) REQUIRE(h[i] == base + i, "out[%d] = %d, want %d", i, h[i], base + i);
  CHECK(hipMemset(d_out, 0, N * sizeof(int)));
}

/* Runs grid_count cooperatively through `launch` and checks that every block saw them all. */
static void expect_all_resident(int* d_counter, int* d_seen, int nblocks) {
  int seen[1024];
  CHECK(hipDeviceSynchronize());
  CHECK(hipMemcpy(seen, d_seen, nblocks * sizeof(int), hipMemcpyDeviceToHost));
  for (int b = 0; b < nblocks; b++) REQUIRE(seen[b] == nblocks, "block %d saw %d of %d blocks", b, seen[b], nblocks);
  CHECK(hipMemset(d_counter, 0, sizeof(int)));
  CHECK(hipMemset(d_seen, 0, 1024 * sizeof(int)));
}

typedef hipError_t (*memset_fn)(void*, int, size_t);
typedef hipError_t (*malloc_fn)(void**, size_t);

int main(void) {
  begin("module_extra");
  size_t code_size = 0;
  char* code = compile(&code_size);
  hipModule_t module;
  CHECK(hipModuleLoadData(&module, code));
  hipFunction_t fill, grid_count, mixed;
  CHECK(hipModuleGetFunction(&fill, module, "fill"));
  CHECK(hipModuleGetFunction(&grid_count, module, "grid_count"));
  CHECK(hipModuleGetFunction(&mixed, module, "mixed"));
  int *d_out, *d_counter, *d_seen;
  CHECK(hipMalloc((void**)&d_out, N * sizeof(int)));
  CHECK(hipMalloc((void**)&d_counter, sizeof(int)));
  CHECK(hipMalloc((void**)&d_seen, 1024 * sizeof(int)));
  CHECK(hipMemset(d_out, 0, N * sizeof(int)));
  CHECK(hipMemset(d_counter, 0, sizeof(int)));
  CHECK(hipMemset(d_seen, 0, 1024 * sizeof(int)));

  step("hipModuleGetFunctionCount");
  unsigned count = 0;
  CHECK(hipModuleGetFunctionCount(&count, module));
  REQUIRE(count == 3, "%u kernels, want 3", count);
  EXPECT_ERR(hipModuleGetFunctionCount(NULL, module), hipErrorInvalidValue);
  EXPECT_ERR(hipModuleGetFunctionCount(&count, (hipModule_t)0x7777), hipErrorInvalidHandle);

  step("libraries and kernels");
  hipLibrary_t lib;
  CHECK(hipLibraryLoadData(&lib, code, NULL, NULL, 0, NULL, NULL, 0));
  CHECK(hipLibraryGetKernelCount(&count, lib));
  REQUIRE(count == 3, "library has %u kernels, want 3", count);
  hipKernel_t kernels[4] = {0};
  CHECK(hipLibraryEnumerateKernels(kernels, 4, lib));
  int found = 0;
  hipKernel_t fill_kernel = NULL;
  for (int k = 0; k < 3; k++) {
    const char* name = NULL;
    CHECK(hipKernelGetName(&name, kernels[k]));
    REQUIRE(name != NULL, "kernel %d has no name", k);
    if (!strcmp(name, "fill")) { found |= 1; fill_kernel = kernels[k]; }
    if (!strcmp(name, "grid_count")) found |= 2;
    if (!strcmp(name, "mixed")) found |= 4;
    hipLibrary_t owner = NULL;
    CHECK(hipKernelGetLibrary(&owner, kernels[k]));
    REQUIRE(owner == lib, "kernel %d belongs to %p, not %p", k, (void*)owner, (void*)lib);
  }
  REQUIRE(found == 7, "enumerated kernel names cover %#x of fill/grid_count/mixed", found);
  REQUIRE(kernels[3] == NULL, "a fourth kernel was written");
  hipKernel_t by_name;
  CHECK(hipLibraryGetKernel(&by_name, lib, "fill"));
  REQUIRE(by_name == fill_kernel, "hipLibraryGetKernel and hipLibraryEnumerateKernels disagree");
  hipKernel_t first_only[1] = {0};
  CHECK(hipLibraryEnumerateKernels(first_only, 1, lib));
  REQUIRE(first_only[0] == kernels[0], "a short array gets the first kernel");
  /* A library kernel launches as a function. */
  int base = 1000;
  void* fill_params[] = {&d_out, &base};
  CHECK(hipModuleLaunchKernel((hipFunction_t)by_name, N / BLOCK, 1, 1, BLOCK, 1, 1, 0, NULL, fill_params, NULL));
  expect_fill(d_out, 1000, N);
  EXPECT_ERR(hipLibraryGetKernel(&by_name, lib, "no_such_kernel"), hipErrorNotFound);
  EXPECT_ERR(hipLibraryGetKernel(NULL, lib, "fill"), hipErrorInvalidValue);
  EXPECT_ERR(hipLibraryGetKernel(&by_name, lib, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipLibraryEnumerateKernels(NULL, 3, lib), hipErrorInvalidValue);
  EXPECT_ERR(hipLibraryEnumerateKernels(kernels, 0, lib), hipErrorInvalidValue);
  EXPECT_ERR(hipLibraryGetKernelCount(NULL, lib), hipErrorInvalidValue);
  EXPECT_ERR(hipKernelGetName(NULL, fill_kernel), hipErrorInvalidValue);
  hipLibrary_t owner;
  EXPECT_ERR(hipKernelGetLibrary(&owner, (hipKernel_t)fill), hipErrorInvalidHandle);
  EXPECT_ERR(hipLibraryLoadData(NULL, code, NULL, NULL, 0, NULL, NULL, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipLibraryLoadData(&lib, NULL, NULL, NULL, 0, NULL, NULL, 0), hipErrorInvalidValue);
  CHECK(hipLibraryUnload(lib));
  EXPECT_ERR(hipLibraryGetKernelCount(&count, lib), hipErrorInvalidHandle);
  EXPECT_ERR(hipLibraryUnload(lib), hipErrorInvalidHandle);
  EXPECT_ERR(hipKernelGetName(&(const char*){NULL}, fill_kernel), hipErrorInvalidHandle);
  /* From a file. */
  char path[] = "/tmp/module_extra_XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0, "mkstemp");
  REQUIRE(write(fd, code, code_size) == (ssize_t)code_size, "write");
  close(fd);
  CHECK(hipLibraryLoadFromFile(&lib, path, NULL, NULL, 0, NULL, NULL, 0));
  unlink(path);
  CHECK(hipLibraryGetKernelCount(&count, lib));
  REQUIRE(count == 3, "library from a file has %u kernels", count);
  CHECK(hipLibraryUnload(lib));
  EXPECT_ERR(hipLibraryLoadFromFile(&lib, "/nonexistent/module_extra.co", NULL, NULL, 0, NULL, NULL, 0), hipErrorFileNotFound);

  step("hipExtModuleLaunchKernel / hipHccModuleLaunchKernel: global work sizes and events");
  hipStream_t stream;
  CHECK(hipStreamCreate(&stream));
  hipEvent_t start, stop;
  CHECK(hipEventCreate(&start));
  CHECK(hipEventCreate(&stop));
  base = 7;
  CHECK(hipExtModuleLaunchKernel(fill, N, 1, 1, BLOCK, 1, 1, 0, stream, fill_params, NULL, start, stop, 0));
  CHECK(hipEventSynchronize(stop));
  float ms = -1;
  CHECK(hipEventElapsedTime(&ms, start, stop));
  REQUIRE(ms >= 0, "elapsed %f ms", ms);
  expect_fill(d_out, 7, N);
  base = 9;
  CHECK(hipHccModuleLaunchKernel(fill, N / 2, 1, 1, BLOCK, 1, 1, 0, stream, fill_params, NULL, NULL, NULL));
  CHECK(hipStreamSynchronize(stream));
  expect_fill(d_out, 9, N / 2);
  EXPECT_ERR(hipExtModuleLaunchKernel(fill, 250, 1, 1, BLOCK, 1, 1, 0, stream, fill_params, NULL, NULL, NULL, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipExtModuleLaunchKernel(fill, 32, 1, 1, BLOCK, 1, 1, 0, stream, fill_params, NULL, NULL, NULL, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipExtModuleLaunchKernel(fill, N, 1, 1, BLOCK, 1, 1, 0, stream, fill_params, NULL, NULL, NULL, 0x10), hipErrorInvalidValue);
  EXPECT_ERR(hipHccModuleLaunchKernel((hipFunction_t)0x4321, N, 1, 1, BLOCK, 1, 1, 0, stream, fill_params, NULL, NULL, NULL), hipErrorInvalidHandle);

  step("hipExtLaunchKernel and hipLaunchKernel_spt");
  base = 11;
  CHECK(hipExtLaunchKernel((const void*)fill, D3(N / BLOCK), D3(BLOCK), fill_params, 0, stream, start, stop, 0));
  CHECK(hipEventSynchronize(stop));
  expect_fill(d_out, 11, N);
  base = 13;
  CHECK(hipLaunchKernel_spt((const void*)fill, D3(N / BLOCK), D3(BLOCK), fill_params, 0, NULL));
  CHECK(hipStreamSynchronize(hipStreamPerThread));
  expect_fill(d_out, 13, N);
  EXPECT_ERR(hipExtLaunchKernel((const void*)fill, D3(0), D3(BLOCK), fill_params, 0, stream, NULL, NULL, 0), hipErrorInvalidConfiguration);
  EXPECT_ERR(hipExtLaunchKernel((const void*)0x1234, D3(1), D3(BLOCK), fill_params, 0, stream, NULL, NULL, 0), hipErrorInvalidDeviceFunction);

  step("cooperative launches");
  int coop = 0;
  CHECK(hipDeviceGetAttribute(&coop, hipDeviceAttributeCooperativeLaunch, 0));
  REQUIRE(coop == 1, "hipDeviceAttributeCooperativeLaunch is %d", coop);
  int per_mp = 0, mps = 0;
  CHECK(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(&per_mp, grid_count, BLOCK, 0));
  CHECK(hipDeviceGetAttribute(&mps, hipDeviceAttributeMultiprocessorCount, 0));
  int capacity = per_mp * mps;
  REQUIRE(capacity > 0, "no resident blocks (%d per multiprocessor, %d multiprocessors)", per_mp, mps);
  int nblocks = capacity < 24 ? capacity : 24;
  printf("cooperative capacity %d blocks; launching %d\n", capacity, nblocks);
  void* coop_params[] = {&d_counter, &d_seen, &nblocks};
  CHECK(hipModuleLaunchCooperativeKernel(grid_count, nblocks, 1, 1, BLOCK, 1, 1, 0, stream, coop_params));
  expect_all_resident(d_counter, d_seen, nblocks);
  CHECK(hipLaunchCooperativeKernel((const void*)grid_count, D3(nblocks), D3(BLOCK), coop_params, 0, stream));
  expect_all_resident(d_counter, d_seen, nblocks);
  CHECK(hipLaunchCooperativeKernel_spt((const void*)grid_count, D3(nblocks), D3(BLOCK), coop_params, 0, NULL));
  expect_all_resident(d_counter, d_seen, nblocks);
  int too_many = capacity + 1;
  EXPECT_ERR(hipModuleLaunchCooperativeKernel(grid_count, too_many, 1, 1, BLOCK, 1, 1, 0, stream, coop_params), hipErrorCooperativeLaunchTooLarge);
  EXPECT_ERR(hipLaunchCooperativeKernel((const void*)grid_count, D3(too_many), D3(BLOCK), coop_params, 0, stream), hipErrorCooperativeLaunchTooLarge);
  EXPECT_ERR(hipModuleLaunchCooperativeKernel(grid_count, 1, 1, 1, 0, 1, 1, 0, stream, coop_params), hipErrorInvalidValue);
  EXPECT_ERR(hipModuleLaunchCooperativeKernel((hipFunction_t)0x4321, 1, 1, 1, 1, 1, 1, 0, stream, coop_params), hipErrorInvalidHandle);

  step("hipLaunchKernelExC / hipDrvLaunchKernelEx with attributes");
  hipLaunchAttribute attr;
  memset(&attr, 0, sizeof attr);
  attr.id = hipLaunchAttributeCooperative;
  attr.val.cooperative = 1;
  hipLaunchConfig_t config;
  memset(&config, 0, sizeof config);
  config.gridDim = D3(nblocks);
  config.blockDim = D3(BLOCK);
  config.stream = stream;
  config.attrs = &attr;
  config.numAttrs = 1;
  CHECK(hipLaunchKernelExC(&config, (const void*)grid_count, coop_params));
  expect_all_resident(d_counter, d_seen, nblocks);
  config.gridDim = D3(too_many);
  EXPECT_ERR(hipLaunchKernelExC(&config, (const void*)grid_count, coop_params), hipErrorCooperativeLaunchTooLarge);
  /* A priority is accepted; the launch runs as an ordinary one. */
  attr.id = hipLaunchAttributePriority;
  attr.val.priority = 0;
  config.gridDim = D3(N / BLOCK);
  base = 17;
  CHECK(hipLaunchKernelExC(&config, (const void*)fill, fill_params));
  CHECK(hipStreamSynchronize(stream));
  expect_fill(d_out, 17, N);
  attr.id = hipLaunchAttributeAccessPolicyWindow;
  EXPECT_ERR(hipLaunchKernelExC(&config, (const void*)fill, fill_params), hipErrorNotSupported);
  EXPECT_ERR(hipLaunchKernelExC(NULL, (const void*)fill, fill_params), hipErrorInvalidValue);
  config.numAttrs = 0;
  base = 19;
  CHECK(hipLaunchKernelExC(&config, (const void*)fill, fill_params));
  CHECK(hipStreamSynchronize(stream));
  expect_fill(d_out, 19, N);

  HIP_LAUNCH_CONFIG drv;
  memset(&drv, 0, sizeof drv);
  drv.gridDimX = nblocks; drv.gridDimY = 1; drv.gridDimZ = 1;
  drv.blockDimX = BLOCK; drv.blockDimY = 1; drv.blockDimZ = 1;
  drv.hStream = stream;
  attr.id = hipLaunchAttributeCooperative;
  attr.val.cooperative = 1;
  drv.attrs = &attr;
  drv.numAttrs = 1;
  CHECK(hipDrvLaunchKernelEx(&drv, grid_count, coop_params, NULL));
  expect_all_resident(d_counter, d_seen, nblocks);
  drv.gridDimX = too_many;
  EXPECT_ERR(hipDrvLaunchKernelEx(&drv, grid_count, coop_params, NULL), hipErrorCooperativeLaunchTooLarge);
  drv.numAttrs = 0;
  drv.gridDimX = N / BLOCK;
  base = 23;
  CHECK(hipDrvLaunchKernelEx(&drv, fill, fill_params, NULL));
  CHECK(hipStreamSynchronize(stream));
  expect_fill(d_out, 23, N);
  EXPECT_ERR(hipDrvLaunchKernelEx(NULL, fill, fill_params, NULL), hipErrorInvalidValue);

  step("hipConfigureCall / hipSetupArgument / hipLaunchByPtr");
  char c = -5;
  double d = 2.75;
  CHECK(hipConfigureCall(D3(1), D3(BLOCK), 0, stream));
  CHECK(hipSetupArgument(&c, 1, 0));
  CHECK(hipSetupArgument(&d, 8, 8));
  CHECK(hipSetupArgument(&d_out, sizeof d_out, 16));
  CHECK(hipLaunchByPtr((const void*)mixed));
  CHECK(hipStreamSynchronize(stream));
  int got[2];
  CHECK(hipMemcpy(got, d_out, sizeof got, hipMemcpyDeviceToHost));
  REQUIRE(got[0] == -5 && got[1] == 11, "mixed wrote %d %d, want -5 11", got[0], got[1]);
  CHECK(hipMemset(d_out, 0, N * sizeof(int)));
  /* ROCm keeps one configuration stack per thread: __hipPushCallConfiguration (what a
   * compiled <<<>>> launch pushes) configures hipLaunchByPtr as hipConfigureCall does, and
   * __hipPopCallConfiguration takes what hipConfigureCall pushed. */
  c = 7;
  CHECK(__hipPushCallConfiguration(D3(1), D3(BLOCK), 0, stream));
  CHECK(hipSetupArgument(&c, 1, 0));
  CHECK(hipSetupArgument(&d, 8, 8));
  CHECK(hipSetupArgument(&d_out, sizeof d_out, 16));
  CHECK(hipLaunchByPtr((const void*)mixed));
  CHECK(hipStreamSynchronize(stream));
  CHECK(hipMemcpy(got, d_out, sizeof got, hipMemcpyDeviceToHost));
  REQUIRE(got[0] == 7 && got[1] == 11, "mixed after __hipPushCallConfiguration wrote %d %d, want 7 11", got[0], got[1]);
  CHECK(hipMemset(d_out, 0, N * sizeof(int)));
  CHECK(hipConfigureCall((dim3){3, 2, 1}, D3(5), 24, stream));
  dim3 popped_grid = D3(0), popped_block = D3(0);
  size_t popped_shared = 0;
  hipStream_t popped_stream = NULL;
  CHECK(__hipPopCallConfiguration(&popped_grid, &popped_block, &popped_shared, &popped_stream));
  REQUIRE(popped_grid.x == 3 && popped_grid.y == 2 && popped_block.x == 5 && popped_shared == 24 && popped_stream == stream,
          "__hipPopCallConfiguration took grid %u,%u block %u shared %zu", popped_grid.x, popped_grid.y, popped_block.x, popped_shared);
  EXPECT_ERR(hipLaunchByPtr((const void*)mixed), hipErrorMissingConfiguration);
  EXPECT_ERR(hipSetupArgument(&c, 1, 0), hipErrorMissingConfiguration);
  CHECK(hipConfigureCall(D3(1), D3(1), 0, stream));
  EXPECT_ERR(hipSetupArgument(NULL, 4, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipLaunchByPtr((const void*)0x1234), hipErrorInvalidDeviceFunction);

  step("hipGetProcAddress / hipGetDriverEntryPoint");
  void* p = NULL;
  hipDriverProcAddressQueryResult status = 99;
  CHECK(hipGetProcAddress("hipMemset", &p, 702, 0, &status));
  REQUIRE(p != NULL && status == PROC_SUCCESS, "hipMemset: %p status %u", p, status);
  CHECK(((memset_fn)p)(d_out, 0x01, 16));
  unsigned char bytes[16];
  CHECK(hipMemcpy(bytes, d_out, 16, hipMemcpyDeviceToHost));
  for (int i = 0; i < 16; i++) REQUIRE(bytes[i] == 1, "byte %d is %d after the looked-up hipMemset", i, bytes[i]);
  p = (void*)1;
  REQUIRE(hipGetProcAddress("hipNoSuchFunction", &p, 702, 0, &status) != hipSuccess, "an unknown symbol resolved");
  REQUIRE(p == NULL && status == PROC_SYMBOL_NOT_FOUND, "unknown symbol: %p status %u", p, status);
  REQUIRE(hipGetProcAddress("hipMemset", &p, 500, 0, &status) != hipSuccess, "HIP 5.0 was sufficient");
  REQUIRE(p == NULL && status == PROC_VERSION_NOT_SUFFICIENT, "old version: %p status %u", p, status);
  EXPECT_ERR(hipGetProcAddress(NULL, &p, 702, 0, &status), hipErrorInvalidValue);
  EXPECT_ERR(hipGetProcAddress("hipMemset", NULL, 702, 0, &status), hipErrorInvalidValue);
  EXPECT_ERR(hipGetProcAddress("hipMemset", &p, 702, 8, &status), hipErrorInvalidValue);
  /* HIP 6's hipDeviceProp_t: the plain name resolves to the R0600 form the headers use. */
  void* props_fn = NULL;
  CHECK(hipGetProcAddress("hipGetDeviceProperties", &props_fn, 702, 0, NULL));
  hipDeviceProp_t direct, looked_up;
  memset(&looked_up, 0, sizeof looked_up);
  CHECK(hipGetDeviceProperties(&direct, 0));
  CHECK(((hipError_t(*)(hipDeviceProp_t*, int))props_fn)(&looked_up, 0));
  REQUIRE(looked_up.major == direct.major && looked_up.minor == direct.minor && strcmp(looked_up.name, direct.name) == 0 &&
              looked_up.totalGlobalMem == direct.totalGlobalMem && looked_up.multiProcessorCount == direct.multiProcessorCount,
          "hipGetProcAddress(hipGetDeviceProperties) fills another layout: major %d/%d, %zu/%zu bytes", looked_up.major, direct.major,
          looked_up.totalGlobalMem, direct.totalGlobalMem);
  void *plain = NULL, *per_thread = NULL, *spt_direct = NULL;
  CHECK(hipGetProcAddress("hipLaunchKernel", &plain, 702, 0, NULL));
  CHECK(hipGetProcAddress("hipLaunchKernel", &per_thread, 702, 2, NULL));
  CHECK(hipGetProcAddress("hipLaunchKernel_spt", &spt_direct, 702, 0, NULL));
  REQUIRE(per_thread == spt_direct && plain != per_thread, "per-thread flag picked %p (plain %p, _spt %p)", per_thread, plain, spt_direct);
  hipDriverEntryPointQueryResult driver_status = 99;
  CHECK(hipGetDriverEntryPoint("hipMalloc", &p, hipEnableDefault, &driver_status));
  REQUIRE(p != NULL && driver_status == PROC_SUCCESS, "hipMalloc: %p status %u", p, driver_status);
  void* fresh = NULL;
  CHECK(((malloc_fn)p)(&fresh, 64));
  REQUIRE(fresh != NULL, "the looked-up hipMalloc returned NULL");
  CHECK(hipFree(fresh));
  REQUIRE(hipGetDriverEntryPoint("hipNoSuchFunction", &p, hipEnableDefault, &driver_status) != hipSuccess, "unknown driver symbol");
  REQUIRE(driver_status == PROC_SYMBOL_NOT_FOUND, "status %u", driver_status);
  CHECK(hipGetDriverEntryPoint_spt("hipLaunchKernel", &p, hipEnableDefault, &driver_status));
  REQUIRE(p == spt_direct, "the _spt entry point picked %p, not hipLaunchKernel_spt %p", p, spt_direct);
  EXPECT_ERR(hipGetDriverEntryPoint("hipMalloc", NULL, 0, NULL), hipErrorInvalidValue);

  step("hipOccupancyAvailableDynamicSMemPerBlock");
  size_t avail1 = 0, avail2 = 0;
  CHECK(hipOccupancyAvailableDynamicSMemPerBlock(&avail1, (const void*)fill, 1, BLOCK));
  CHECK(hipOccupancyAvailableDynamicSMemPerBlock(&avail2, (const void*)fill, 2, BLOCK));
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  size_t smem_per_mp = props.sharedMemPerMultiprocessor;
  printf("dynamic shared memory: %zu bytes for one block, %zu for two (%zu per multiprocessor)\n", avail1, avail2, smem_per_mp);
  REQUIRE(avail1 > 0 && avail1 <= smem_per_mp, "one block: %zu", avail1);
  REQUIRE(avail2 <= smem_per_mp / 2 && avail2 <= avail1, "two blocks: %zu", avail2);
  EXPECT_ERR(hipOccupancyAvailableDynamicSMemPerBlock(NULL, (const void*)fill, 1, BLOCK), hipErrorInvalidValue);
  EXPECT_ERR(hipOccupancyAvailableDynamicSMemPerBlock(&avail1, (const void*)fill, 0, BLOCK), hipErrorInvalidValue);
  EXPECT_ERR(hipOccupancyAvailableDynamicSMemPerBlock(&avail1, (const void*)0x1234, 1, BLOCK), hipErrorInvalidDeviceFunction);

  int devices = 0;
  CHECK(hipGetDeviceCount(&devices));
  if (devices >= 2) {
    step("multi-device launches on two devices");
    hipModule_t mods[2];
    hipFunction_t fills[2], counts[2];
    hipStream_t streams[2];
    int *outs[2], *counters[2], *seens[2];
    int bases[2] = {100, 200};
    for (int dev = 0; dev < 2; dev++) {
      CHECK(hipSetDevice(dev));
      CHECK(hipModuleLoadData(&mods[dev], code));
      CHECK(hipModuleGetFunction(&fills[dev], mods[dev], "fill"));
      CHECK(hipModuleGetFunction(&counts[dev], mods[dev], "grid_count"));
      CHECK(hipStreamCreate(&streams[dev]));
      CHECK(hipMalloc((void**)&outs[dev], N * sizeof(int)));
      CHECK(hipMalloc((void**)&counters[dev], sizeof(int)));
      CHECK(hipMalloc((void**)&seens[dev], 1024 * sizeof(int)));
      CHECK(hipMemset(counters[dev], 0, sizeof(int)));
    }
    CHECK(hipSetDevice(0));
    void* mparams[2][3] = {{&counters[0], &seens[0], &nblocks}, {&counters[1], &seens[1], &nblocks}};
    hipFunctionLaunchParams fl[2];
    for (int dev = 0; dev < 2; dev++) {
      fl[dev].function = counts[dev];
      fl[dev].gridDimX = nblocks; fl[dev].gridDimY = 1; fl[dev].gridDimZ = 1;
      fl[dev].blockDimX = BLOCK; fl[dev].blockDimY = 1; fl[dev].blockDimZ = 1;
      fl[dev].sharedMemBytes = 0;
      fl[dev].hStream = streams[dev];
      fl[dev].kernelParams = mparams[dev];
    }
    CHECK(hipModuleLaunchCooperativeKernelMultiDevice(fl, 2, 0));
    for (int dev = 0; dev < 2; dev++) {
      CHECK(hipSetDevice(dev));
      expect_all_resident(counters[dev], seens[dev], nblocks);
    }
    CHECK(hipSetDevice(0));
    hipLaunchParams lp[2];
    for (int dev = 0; dev < 2; dev++) {
      lp[dev].func = (void*)counts[dev];
      lp[dev].gridDim = D3(nblocks);
      lp[dev].blockDim = D3(BLOCK);
      lp[dev].args = mparams[dev];
      lp[dev].sharedMem = 0;
      lp[dev].stream = streams[dev];
    }
    CHECK(hipLaunchCooperativeKernelMultiDevice(lp, 2, 0));
    for (int dev = 0; dev < 2; dev++) {
      CHECK(hipSetDevice(dev));
      expect_all_resident(counters[dev], seens[dev], nblocks);
    }
    CHECK(hipSetDevice(0));
    void* fparams[2][2] = {{&outs[0], &bases[0]}, {&outs[1], &bases[1]}};
    for (int dev = 0; dev < 2; dev++) {
      lp[dev].func = (void*)fills[dev];
      lp[dev].gridDim = D3(N / BLOCK);
      lp[dev].args = fparams[dev];
    }
    CHECK(hipExtLaunchMultiKernelMultiDevice(lp, 2, 0));
    for (int dev = 0; dev < 2; dev++) {
      CHECK(hipSetDevice(dev));
      CHECK(hipStreamSynchronize(streams[dev]));
      expect_fill(outs[dev], bases[dev], N);
    }
    CHECK(hipSetDevice(0));
    EXPECT_ERR(hipExtLaunchMultiKernelMultiDevice(lp, 0, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipExtLaunchMultiKernelMultiDevice(lp, 3, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipExtLaunchMultiKernelMultiDevice(NULL, 2, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipLaunchCooperativeKernelMultiDevice(lp, 2, 4), hipErrorInvalidValue);
    fl[1].hStream = streams[0];
    fl[1].function = counts[0];
    EXPECT_ERR(hipModuleLaunchCooperativeKernelMultiDevice(fl, 2, 0), hipErrorInvalidDevice);
    for (int dev = 0; dev < 2; dev++) {
      CHECK(hipSetDevice(dev));
      CHECK(hipFree(outs[dev]));
      CHECK(hipFree(counters[dev]));
      CHECK(hipFree(seens[dev]));
      CHECK(hipStreamDestroy(streams[dev]));
      CHECK(hipModuleUnload(mods[dev]));
    }
    CHECK(hipSetDevice(0));
  } else {
    printf("one device: the multi-device launches are not run\n");
  }

  CHECK(hipEventDestroy(start));
  CHECK(hipEventDestroy(stop));
  CHECK(hipStreamDestroy(stream));
  CHECK(hipFree(d_out));
  CHECK(hipFree(d_counter));
  CHECK(hipFree(d_seen));
  CHECK(hipModuleUnload(module));
  free(code);
  printf("PASS module_extra\n");
  return 0;
}
