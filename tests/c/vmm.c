/*
 * Virtual memory management: granularity, address reservations, physical allocations,
 * mappings (two mappings of one allocation share its bytes), access (nothing reaches a range
 * before hipMemSetAccess or after hipMemUnmap), copies and a kernel (hiprtc) writing through
 * a mapped range, retain/release reference counts, shareable handles within one process, and
 * the argument errors ROCm gives.
 *
 * With "export" / "import PATH" it is the two halves of the two-process test: the exporter
 * maps memory, fills it, prints "FD /proc/PID/fd/N" (its shareable handle) and waits for a
 * line on stdin; the importer opens that path, imports, checks the bytes and writes its own;
 * the exporter then checks them.
 */
#include "check.h"
#include <fcntl.h>
#include <hip/hiprtc.h>
#include <unistd.h>

static size_t gran, min_gran;

static hipMemAllocationProp device_prop(int device, hipMemAllocationHandleType type) {
  hipMemAllocationProp prop;
  memset(&prop, 0, sizeof prop);
  prop.type = hipMemAllocationTypePinned;
  prop.requestedHandleType = type;
  prop.location.type = hipMemLocationTypeDevice;
  prop.location.id = device;
  return prop;
}

static void set_rw(void* ptr, size_t size) {
  hipMemAccessDesc desc = {{hipMemLocationTypeDevice, 0}, hipMemAccessFlagsProtReadWrite};
  CHECK(hipMemSetAccess(ptr, size, &desc, 1));
}

static const char* SOURCE =
    "#include <hip/hip_runtime.h>\n"
    "extern \"C\" __global__ void fill(unsigned* out, unsigned n) {\n"
    "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = i * 3u + 1u;\n"
    "}\n";

static hipFunction_t fill_kernel(void) {
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  hiprtcProgram prog;
  REQUIRE(hiprtcCreateProgram(&prog, SOURCE, "vmm.hip", 0, NULL, NULL) == HIPRTC_SUCCESS, "create program");
  char arch[300];
  snprintf(arch, sizeof arch, "--offload-arch=%s", props.gcnArchName);
  const char* opts[] = {arch};
  if (hiprtcCompileProgram(prog, 1, opts) != HIPRTC_SUCCESS) {
    size_t log_size = 0;
    hiprtcGetProgramLogSize(prog, &log_size);
    char* log = malloc(log_size + 1);
    hiprtcGetProgramLog(prog, log);
    printf("FAIL compile:\n%s\n", log);
    exit(1);
  }
  size_t code_size = 0;
  REQUIRE(hiprtcGetCodeSize(prog, &code_size) == HIPRTC_SUCCESS, "code size");
  char* code = malloc(code_size);
  REQUIRE(hiprtcGetCode(prog, code) == HIPRTC_SUCCESS, "code");
  hiprtcDestroyProgram(&prog);
  hipModule_t module;
  CHECK(hipModuleLoadData(&module, code));
  hipFunction_t fn;
  CHECK(hipModuleGetFunction(&fn, module, "fill"));
  return fn;
}

static void granularity(void) {
  step("hipMemGetAllocationGranularity");
  hipMemAllocationProp prop = device_prop(0, hipMemHandleTypeNone);
  size_t minimum = 0;
  CHECK(hipMemGetAllocationGranularity(&minimum, &prop, hipMemAllocationGranularityMinimum));
  CHECK(hipMemGetAllocationGranularity(&gran, &prop, hipMemAllocationGranularityRecommended));
  REQUIRE(minimum > 0 && gran >= minimum && gran % minimum == 0, "granularity %zu, recommended %zu", minimum, gran);
  min_gran = minimum;
  printf("granularity %zu, recommended %zu\n", minimum, gran);
  size_t g;
  EXPECT_ERR(hipMemGetAllocationGranularity(NULL, &prop, hipMemAllocationGranularityMinimum), hipErrorInvalidValue);
  EXPECT_ERR(hipMemGetAllocationGranularity(&g, NULL, hipMemAllocationGranularityMinimum), hipErrorInvalidValue);
  EXPECT_ERR(hipMemGetAllocationGranularity(&g, &prop, (hipMemAllocationGranularity_flags)7), hipErrorInvalidValue);
  prop.location.id = 99;
  EXPECT_ERR(hipMemGetAllocationGranularity(&g, &prop, hipMemAllocationGranularityMinimum), hipErrorInvalidValue);
  prop = device_prop(0, hipMemHandleTypeNone);
  prop.location.type = hipMemLocationTypeHost;
  EXPECT_ERR(hipMemGetAllocationGranularity(&g, &prop, hipMemAllocationGranularityMinimum), hipErrorInvalidValue);
  prop = device_prop(0, hipMemHandleTypeNone);
  prop.type = hipMemAllocationTypeInvalid;
  EXPECT_ERR(hipMemGetAllocationGranularity(&g, &prop, hipMemAllocationGranularityMinimum), hipErrorInvalidValue);
}

static void single_process(void) {
  granularity();

  step("reserve, create, map");
  void* base = NULL;
  EXPECT_ERR(hipMemAddressReserve(NULL, 4 * gran, 0, NULL, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMemAddressReserve(&base, 4 * gran, 0, NULL, 1), hipErrorInvalidValue);
  EXPECT_ERR(hipMemAddressReserve(&base, 0, 0, NULL, 0), hipErrorOutOfMemory);
  EXPECT_ERR(hipMemAddressReserve(&base, 4 * gran, 3, NULL, 0), hipErrorOutOfMemory);
  CHECK(hipMemAddressReserve(&base, 4 * gran, 0, NULL, 0));
  REQUIRE(base != NULL && (uintptr_t)base % min_gran == 0, "reservation at %p", base);
  uint8_t* va = (uint8_t*)base;

  hipMemAllocationProp prop = device_prop(0, hipMemHandleTypeNone);
  hipMemGenericAllocationHandle_t h1 = NULL, h2 = NULL, bad = NULL;
  EXPECT_ERR(hipMemCreate(NULL, gran, &prop, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMemCreate(&bad, 0, &prop, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMemCreate(&bad, gran, &prop, 1), hipErrorInvalidValue);
  EXPECT_ERR(hipMemCreate(&bad, gran, NULL, 0), hipErrorInvalidValue);
  prop.location.id = 99;
  EXPECT_ERR(hipMemCreate(&bad, gran, &prop, 0), hipErrorInvalidValue);
  prop = device_prop(0, hipMemHandleTypeWin32);
  EXPECT_ERR(hipMemCreate(&bad, gran, &prop, 0), hipErrorNotSupported);
  prop = device_prop(0, hipMemHandleTypeNone);
  CHECK(hipMemCreate(&h1, gran, &prop, 0));
  CHECK(hipMemCreate(&h2, gran, &prop, 0));
  REQUIRE(h1 != NULL && h2 != NULL && h1 != h2, "handles %p %p", (void*)h1, (void*)h2);

  hipMemAllocationProp got;
  memset(&got, 0x5a, sizeof got);
  CHECK(hipMemGetAllocationPropertiesFromHandle(&got, h1));
  REQUIRE(got.type == hipMemAllocationTypePinned && got.location.type == hipMemLocationTypeDevice && got.location.id == 0,
          "properties: type %d location %d/%d", (int)got.type, (int)got.location.type, got.location.id);
  EXPECT_ERR(hipMemGetAllocationPropertiesFromHandle(NULL, h1), hipErrorInvalidValue);
  EXPECT_ERR(hipMemGetAllocationPropertiesFromHandle(&got, NULL), hipErrorInvalidValue);

  EXPECT_ERR(hipMemMap(va, gran, 1, h1, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMemMap(va, gran, 0, h1, 1), hipErrorInvalidValue);
  EXPECT_ERR(hipMemMap(va, 0, 0, h1, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMemMap(NULL, gran, 0, h1, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMemMap(va, gran, 0, NULL, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMemMap(va, 2 * gran, 0, h1, 0), hipErrorInvalidValue); /* larger than h1 */
  EXPECT_ERR(hipMemMap(va + 4 * gran, gran, 0, h1, 0), hipErrorInvalidValue); /* outside */
  CHECK(hipMemMap(va, gran, 0, h1, 0));
  CHECK(hipMemMap(va + gran, gran, 0, h2, 0));
  EXPECT_ERR(hipMemMap(va, gran, 0, h2, 0), hipErrorInvalidValue); /* overlaps */

  step("nothing reaches a mapping before hipMemSetAccess");
  static uint8_t data[4 << 20], back[4 << 20];
  REQUIRE(gran <= sizeof data, "granularity %zu exceeds the test buffer", gran);
  fill_pattern(data, gran, 1);
  EXPECT_ERR(hipMemcpy(va, data, gran, hipMemcpyHostToDevice), hipErrorInvalidValue);
  unsigned long long flags = 99;
  hipMemLocation loc = {hipMemLocationTypeDevice, 0};
  CHECK(hipMemGetAccess(&flags, &loc, va));
  REQUIRE(flags == hipMemAccessFlagsProtNone, "access before set: %llu", flags);

  hipMemAccessDesc desc = {{hipMemLocationTypeDevice, 0}, hipMemAccessFlagsProtReadWrite};
  EXPECT_ERR(hipMemSetAccess(NULL, gran, &desc, 1), hipErrorInvalidValue);
  EXPECT_ERR(hipMemSetAccess(va, 0, &desc, 1), hipErrorInvalidValue);
  EXPECT_ERR(hipMemSetAccess(va, gran, NULL, 1), hipErrorInvalidValue);
  EXPECT_ERR(hipMemSetAccess(va, gran, &desc, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMemSetAccess(va + 2 * gran, gran, &desc, 1), hipErrorInvalidValue); /* unmapped */
  desc.location.id = 99;
  EXPECT_ERR(hipMemSetAccess(va, gran, &desc, 1), hipErrorInvalidValue);
  desc.location.id = 0;
  desc.flags = (hipMemAccessFlags)2;
  EXPECT_ERR(hipMemSetAccess(va, gran, &desc, 1), hipErrorInvalidValue);
  set_rw(va, 2 * gran); /* both mappings at once */
  CHECK(hipMemGetAccess(&flags, &loc, va + gran + 5));
  REQUIRE(flags == hipMemAccessFlagsProtReadWrite, "access after set: %llu", flags);
  EXPECT_ERR(hipMemGetAccess(NULL, &loc, va), hipErrorInvalidValue);
  EXPECT_ERR(hipMemGetAccess(&flags, NULL, va), hipErrorInvalidValue);
  EXPECT_ERR(hipMemGetAccess(&flags, &loc, va + 3 * gran), hipErrorInvalidValue);
  loc.id = 99;
  EXPECT_ERR(hipMemGetAccess(&flags, &loc, va), hipErrorInvalidValue);
  loc.id = 0;

  step("copies and a kernel through the mapped range");
  CHECK(hipMemcpy(va, data, gran, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(back, va, gran, hipMemcpyDeviceToHost));
  EXPECT_PATTERN(back, gran, 1);
  CHECK(hipMemcpy(va + gran, va, gran, hipMemcpyDeviceToDevice));
  memset(back, 0, gran);
  CHECK(hipMemcpy(back, va + gran, gran, hipMemcpyDeviceToHost));
  EXPECT_PATTERN(back, gran, 1);
  /* Bounds: a copy past the end of a mapping is refused. */
  EXPECT_ERR(hipMemcpy(back, va + gran, gran + 1, hipMemcpyDeviceToHost), hipErrorInvalidValue);

  hipFunction_t fn = fill_kernel();
  unsigned* words = (unsigned*)(va + gran);
  unsigned n = (unsigned)(gran / sizeof(unsigned));
  void* params[] = {&words, &n};
  CHECK(hipModuleLaunchKernel(fn, (n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
  CHECK(hipDeviceSynchronize());
  CHECK(hipMemcpy(back, words, gran, hipMemcpyDeviceToHost));
  for (unsigned i = 0; i < n; i++) {
    unsigned v;
    memcpy(&v, back + 4 * (size_t)i, 4);
    REQUIRE(v == i * 3u + 1u, "word %u is %u", i, v);
  }

  step("a second mapping of one allocation shares its bytes");
  CHECK(hipMemMap(va + 2 * gran, gran, 0, h1, 0));
  set_rw(va + 2 * gran, gran);
  memset(back, 0, gran);
  CHECK(hipMemcpy(back, va + 2 * gran, gran, hipMemcpyDeviceToHost));
  EXPECT_PATTERN(back, gran, 1);
  CHECK(hipMemset(va + 2 * gran, 0x77, 64));
  CHECK(hipMemcpy(back, va, 64, hipMemcpyDeviceToHost));
  for (int i = 0; i < 64; i++) REQUIRE(back[i] == 0x77, "byte %d through the first mapping is %#x", i, back[i]);

  step("retain and release");
  hipMemGenericAllocationHandle_t again = NULL;
  CHECK(hipMemRetainAllocationHandle(&again, va + 100));
  REQUIRE(again == h1, "retained %p, expected %p", (void*)again, (void*)h1);
  CHECK(hipMemRelease(again));
  EXPECT_ERR(hipMemRetainAllocationHandle(&again, va + 3 * gran), hipErrorInvalidValue);
  EXPECT_ERR(hipMemRetainAllocationHandle(NULL, va), hipErrorInvalidValue);
  /* Released while mapped: the mapping keeps the memory. */
  CHECK(hipMemRelease(h1));
  EXPECT_ERR(hipMemGetAllocationPropertiesFromHandle(&got, h1), hipErrorInvalidValue);
  EXPECT_ERR(hipMemRelease(h1), hipErrorInvalidValue);
  CHECK(hipMemcpy(back, va + 2 * gran, 64, hipMemcpyDeviceToHost));
  for (int i = 0; i < 64; i++) REQUIRE(back[i] == 0x77, "byte %d after release is %#x", i, back[i]);

  step("unmap");
  EXPECT_ERR(hipMemUnmap(va, gran / 2), hipErrorInvalidValue);
  EXPECT_ERR(hipMemUnmap(NULL, gran), hipErrorInvalidValue);
  EXPECT_ERR(hipMemUnmap(va, 0), hipErrorInvalidValue);
  CHECK(hipMemUnmap(va + 2 * gran, gran));
  EXPECT_ERR(hipMemcpy(back, va + 2 * gran, 64, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  EXPECT_ERR(hipMemGetAccess(&flags, &loc, va + 2 * gran), hipErrorInvalidValue);
  /* Taking access away makes the range unreachable too. */
  desc.flags = hipMemAccessFlagsProtNone;
  CHECK(hipMemSetAccess(va + gran, gran, &desc, 1));
  EXPECT_ERR(hipMemcpy(back, va + gran, 64, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  EXPECT_ERR(hipMemAddressFree(va, 4 * gran), hipErrorInvalidValue); /* still mapped */
  CHECK(hipMemUnmap(va, 2 * gran));
  EXPECT_ERR(hipMemRetainAllocationHandle(&again, va), hipErrorInvalidValue);
  CHECK(hipMemRelease(h2));
  EXPECT_ERR(hipMemAddressFree(va, 2 * gran), hipErrorInvalidValue); /* not the whole reservation */
  EXPECT_ERR(hipMemAddressFree(NULL, 4 * gran), hipErrorInvalidValue);
  EXPECT_ERR(hipMemAddressFree(va, 0), hipErrorInvalidValue);
  CHECK(hipMemAddressFree(va, 4 * gran));
  EXPECT_ERR(hipMemAddressFree(va, 4 * gran), hipErrorInvalidValue);

  step("shareable handles within one process");
  prop = device_prop(0, hipMemHandleTypePosixFileDescriptor);
  hipMemGenericAllocationHandle_t shared = NULL, imported = NULL, plain = NULL;
  CHECK(hipMemCreate(&shared, gran, &prop, 0));
  int fd = -1;
  EXPECT_ERR(hipMemExportToShareableHandle(NULL, shared, hipMemHandleTypePosixFileDescriptor, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipMemExportToShareableHandle(&fd, shared, hipMemHandleTypePosixFileDescriptor, 1), hipErrorInvalidValue);
  CHECK(hipMemExportToShareableHandle(&fd, shared, hipMemHandleTypePosixFileDescriptor, 0));
  REQUIRE(fd >= 0, "fd %d", fd);
  CHECK(hipMemImportFromShareableHandle(&imported, (void*)(uintptr_t)fd, hipMemHandleTypePosixFileDescriptor));
  REQUIRE(imported != NULL, "imported handle");
  close(fd);
  CHECK(hipMemAddressReserve(&base, 2 * gran, 0, NULL, 0));
  va = (uint8_t*)base;
  CHECK(hipMemMap(va, gran, 0, shared, 0));
  CHECK(hipMemMap(va + gran, gran, 0, imported, 0));
  set_rw(va, 2 * gran);
  fill_pattern(data, gran, 9);
  CHECK(hipMemcpy(va, data, gran, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(back, va + gran, gran, hipMemcpyDeviceToHost));
  EXPECT_PATTERN(back, gran, 9);
  /* Only allocations created shareable can be exported. */
  prop = device_prop(0, hipMemHandleTypeNone);
  CHECK(hipMemCreate(&plain, gran, &prop, 0));
  EXPECT_ERR(hipMemExportToShareableHandle(&fd, plain, hipMemHandleTypePosixFileDescriptor, 0), hipErrorInvalidValue);
  CHECK(hipMemRelease(plain));
  /* A descriptor that is no shareable handle. */
  int devnull = open("/dev/null", O_RDONLY);
  EXPECT_ERR(hipMemImportFromShareableHandle(&imported, (void*)(uintptr_t)devnull, hipMemHandleTypePosixFileDescriptor), hipErrorInvalidValue);
  close(devnull);
  EXPECT_ERR(hipMemImportFromShareableHandle(NULL, (void*)(uintptr_t)3, hipMemHandleTypePosixFileDescriptor), hipErrorInvalidValue);
  CHECK(hipMemUnmap(va, 2 * gran));
  CHECK(hipMemRelease(shared));
  CHECK(hipMemRelease(imported));
  CHECK(hipMemAddressFree(va, 2 * gran));
}

/* Maps a fresh or imported allocation of `gran` bytes, readable and writable. */
static uint8_t* map_rw(hipMemGenericAllocationHandle_t h) {
  void* base = NULL;
  CHECK(hipMemAddressReserve(&base, gran, 0, NULL, 0));
  CHECK(hipMemMap(base, gran, 0, h, 0));
  set_rw(base, gran);
  return (uint8_t*)base;
}

static int exporter(void) {
  begin("vmm export");
  hipMemAllocationProp prop = device_prop(0, hipMemHandleTypePosixFileDescriptor);
  CHECK(hipMemGetAllocationGranularity(&gran, &prop, hipMemAllocationGranularityRecommended));
  hipMemGenericAllocationHandle_t h = NULL;
  CHECK(hipMemCreate(&h, gran, &prop, 0));
  uint8_t* va = map_rw(h);
  static uint8_t data[4 << 20];
  fill_pattern(data, gran, 21);
  CHECK(hipMemcpy(va, data, gran, hipMemcpyHostToDevice));
  int fd = -1;
  CHECK(hipMemExportToShareableHandle(&fd, h, hipMemHandleTypePosixFileDescriptor, 0));
  /* The allocation stays alive through the mapping and the export while this process runs. */
  CHECK(hipMemRelease(h));
  printf("FD /proc/%d/fd/%d\n", (int)getpid(), fd);
  char line[64];
  REQUIRE(fgets(line, sizeof line, stdin) != NULL, "no go line");
  CHECK(hipMemcpy(data, va, gran, hipMemcpyDeviceToHost));
  EXPECT_PATTERN(data, gran, 22);
  printf("importer's bytes arrived\n");
  return 0;
}

static int importer(const char* path) {
  begin("vmm import");
  int fd = open(path, O_RDONLY);
  REQUIRE(fd >= 0, "open %s", path);
  hipMemAllocationProp prop = device_prop(0, hipMemHandleTypePosixFileDescriptor);
  CHECK(hipMemGetAllocationGranularity(&gran, &prop, hipMemAllocationGranularityRecommended));
  hipMemGenericAllocationHandle_t h = NULL;
  CHECK(hipMemImportFromShareableHandle(&h, (void*)(uintptr_t)fd, hipMemHandleTypePosixFileDescriptor));
  close(fd);
  hipMemAllocationProp got;
  CHECK(hipMemGetAllocationPropertiesFromHandle(&got, h));
  REQUIRE(got.requestedHandleType == hipMemHandleTypePosixFileDescriptor, "handle type %d", (int)got.requestedHandleType);
  uint8_t* va = map_rw(h);
  static uint8_t data[4 << 20];
  CHECK(hipMemcpy(data, va, gran, hipMemcpyDeviceToHost));
  EXPECT_PATTERN(data, gran, 21);
  fill_pattern(data, gran, 22);
  CHECK(hipMemcpy(va, data, gran, hipMemcpyHostToDevice));
  CHECK(hipMemUnmap(va, gran));
  CHECK(hipMemRelease(h));
  CHECK(hipMemAddressFree(va, gran));
  printf("PASS vmm import\n");
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "export") == 0) return exporter();
  if (argc == 3 && strcmp(argv[1], "import") == 0) return importer(argv[2]);
  begin("vmm");
  CHECK(hipSetDevice(0));
  single_process();
  printf("PASS vmm\n");
  return 0;
}
