// Host code of the kinds a test framework's headers hold (Catch2, hip-tests' hip_test_context.hh),
// which the device source hipcc embeds must leave out without breaking what it keeps: a class
// template (kept whole) that calls host functions and names host variables, a registration macro
// that defines a function and a registrar object, a context class with HIP host types and a
// constructor with member initialisers, `using` declarations of host variables.
#pragma once

#include <hip/hip_runtime.h>
#include <hip/hiprtc.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#if defined(__HIP_PLATFORM_AMD__)
#define HOST_PATTERNS_PLATFORM "amd"
#elif defined(__HIP_PLATFORM_NVIDIA__)
#define HOST_PATTERNS_PLATFORM "nvidia"
#else
#error "Platform not recognized"
#endif

namespace host_patterns {

// Host functions and a host function template whose declarations kept code needs.
std::string describe(int value);
inline std::string describe(double value) { return "double " + std::to_string(value); }
template <typename T>
std::string describe_all(const std::vector<T>& values) {
    std::string out;
    for (const T& v : values) out += describe(v) + ";";
    return out;
}

// A host variable with an initialiser that runs host code, named by a class template below and
// by a `using` declaration in the program.
struct Registry {
    std::vector<std::string> names;
    Registry();
    void add(const char* name) { names.emplace_back(name); }
};
Registry registry;
int registrations = 0;
#define HOST_PATTERNS_MIB (1u << 20)
size_t buffer_bytes = 4 * HOST_PATTERNS_MIB;
static const char* const registry_label = "tests";

// A class template, kept whole in the device source: its members name the host function, the
// function template and the variables above without depending on T.
template <typename T>
struct Reporter {
    static std::string report(const T& value) {
        ++registrations;
        return describe(3) + describe_all(std::vector<double>{1.0}) + registry_label + std::to_string(value);
    }
    static hipChannelFormatDesc channel() { return hipCreateChannelDesc<float>(); }
};

// A context class in the manner of hip-tests' TestContext: HIP host types as members, a
// constructor with member initialisers, an out-of-line member definition.
class Context {
  public:
    static Context& get() {
        static Context instance;
        return instance;
    }
    Context() : last_error(hipSuccess), module(nullptr), function(nullptr), stream(nullptr) { registry.add("context"); }
    hipError_t check(hipError_t error);
    bool ok() const { return last_error == hipSuccess; }

  private:
    hipError_t last_error;
    hipModule_t module;
    hipFunction_t function;
    hipStream_t stream;
    hiprtcProgram program{};
};

inline hipError_t Context::check(hipError_t error) {
    if (error != hipSuccess) last_error = error;
    return error;
}

// A registration macro in the manner of Catch's TEST_CASE: a function and a registrar object
// whose constructor runs host code.
struct AutoRegister {
    AutoRegister(void (*function)(), const char* name) {
        registry.add(name);
        ++registrations;
        (void)function;
    }
};
#define HOST_PATTERNS_CAT2(a, b) a##b
#define HOST_PATTERNS_CAT(a, b) HOST_PATTERNS_CAT2(a, b)
#define HOST_PATTERNS_TEST(name)                                                                 \
    static void HOST_PATTERNS_CAT(host_test_, __LINE__)();                                       \
    static host_patterns::AutoRegister HOST_PATTERNS_CAT(registrar_, __LINE__)(&HOST_PATTERNS_CAT(host_test_, __LINE__), name); \
    static void HOST_PATTERNS_CAT(host_test_, __LINE__)()

// Device code the kernels use: a constexpr function and constants at namespace scope.
constexpr int scaled(int x) { return 3 * x + 1; }
const int offset = 5;
constexpr float half_step = 0.5f;

}  // namespace host_patterns

__device__ inline int device_step(int x) { return host_patterns::scaled(x) + host_patterns::offset; }
