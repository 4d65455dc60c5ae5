// hip-remote: what rocThrust's <thrust/detail/config/namespace.h> gives a hiprtc program.
// CuPy's complex-number headers include it for these macros alone; the worker carries no
// Thrust, so every backend serves this file under that name unless the client sent its own.
#pragma once
#ifndef THRUST_NAMESPACE_BEGIN
#define THRUST_NS_PREFIX
#define THRUST_NS_POSTFIX
#define THRUST_NS_QUALIFIER ::thrust
#define THRUST_NAMESPACE_BEGIN namespace thrust {
#define THRUST_NAMESPACE_END }
#endif
