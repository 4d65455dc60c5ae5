/*
 * hip-remote: hip/channel_descriptor.h: hipCreateChannelDesc (the C function, and in C++ the
 * hipCreateChannelDesc<T>() templates, which hip_runtime.h defines).
 */
#ifndef HIP_REMOTE_CHANNEL_DESCRIPTOR_H
#define HIP_REMOTE_CHANNEL_DESCRIPTOR_H

#include <hip/hip_runtime.h>

#endif /* HIP_REMOTE_CHANNEL_DESCRIPTOR_H */
