// Kernels in a program whose headers are full of host code (host_code_in_headers.hpp, in the
// manner of Catch2 and hip-tests' headers): the device source hipcc embeds keeps what device
// code and the kept templates need (declarations, constants, HIP's host types) and leaves the
// host code out, so the kernels compile and run on a host worker. The registrations (host
// code) run on the client only.
#include "host_code_in_headers.hpp"
#include "sample_utils.hpp"

#include <iostream>
#include <vector>

using host_patterns::buffer_bytes;
using host_patterns::registrations;
using host_patterns::registry;

host_patterns::Registry::Registry() { names.reserve(4); }

std::string host_patterns::describe(int value) { return "int " + std::to_string(value); }

HOST_PATTERNS_TEST("first") { registry.add("ran first"); }

HOST_PATTERNS_TEST("second") { registry.add("ran second"); }

// A host function with a static local and a lambda: host-only, left out of the device source.
static int host_only_sum(const std::vector<int>& values) {
    static int calls = 0;
    ++calls;
    int sum = 0;
    for (int v : values) sum += [](int x) { return x; }(v);
    return sum;
}

template <typename T>
__global__ void step_kernel(const int* in, T* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int1 wrapped = make_int1(device_step(in[i]));
        out[i] = static_cast<T>(wrapped.x) + static_cast<T>(host_patterns::half_step);
    }
}

int main() {
    host_patterns::Context& context = host_patterns::Context::get();
    constexpr int n = 1000;
    std::vector<int> in(n);
    for (int i = 0; i < n; ++i) in[i] = i - 300;

    int* d_in{};
    float* d_out{};
    HIP_CHECK(context.check(hipMalloc(&d_in, n * sizeof(int))));
    HIP_CHECK(context.check(hipMalloc(&d_out, n * sizeof(float))));
    HIP_CHECK(hipMemcpy(d_in, in.data(), n * sizeof(int), hipMemcpyHostToDevice));
    step_kernel<float><<<dim3(ceiling_div(n, 128)), dim3(128)>>>(d_in, d_out, n);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipDeviceSynchronize());
    std::vector<float> out(n);
    HIP_CHECK(hipMemcpy(out.data(), d_out, n * sizeof(float), hipMemcpyDeviceToHost));
    HIP_CHECK(hipFree(d_in));
    HIP_CHECK(hipFree(d_out));

    int errors = 0;
    for (int i = 0; i < n; ++i) {
        const float expected = static_cast<float>(3 * in[i] + 1 + 5) + 0.5f;
        if (out[i] != expected && errors++ < 10) std::cout << "out[" << i << "] = " << out[i] << ", expected " << expected << std::endl;
    }
    // The host code ran on the client, once: both registrations and the context.
    const std::string report = host_patterns::Reporter<int>::report(7);
    if (registrations != 3 || registry.names.size() != 3 || report != "int 3double 1.000000;tests7") {
        std::cout << "host code: " << registrations << " registrations, " << registry.names.size() << " names, report "
                  << report << std::endl;
        ++errors;
    }
    if (buffer_bytes != 4u << 20 || host_only_sum({1, 2, 3}) != 6 || host_patterns::Reporter<int>::channel().x != 32 || !context.ok()) ++errors;
    // The kernel's device name, as ROCm's hipKernelNameRefByPtr gives it (Itanium mangling of
    // step_kernel<float>(const int*, float*, int)); NULL for a pointer that is no kernel.
    const char* name = hipKernelNameRefByPtr(reinterpret_cast<const void*>(&step_kernel<float>), nullptr);
    if (name == nullptr || std::string(name) != "_Z11step_kernelIfEvPKiPT_i" ||
        hipKernelNameRefByPtr(reinterpret_cast<const void*>(&host_only_sum), nullptr) != nullptr ||
        hipKernelNameRefByPtr(nullptr, nullptr) != nullptr) {
        std::cout << "hipKernelNameRefByPtr: " << (name ? name : "NULL") << std::endl;
        ++errors;
    }
    std::cout << "platform " << HOST_PATTERNS_PLATFORM << ", " << n << " items: " << (errors ? "wrong" : "correct") << std::endl;
    return report_validation(errors);
}
