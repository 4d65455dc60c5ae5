/*
 * hip-remote: hip/hip_profile.h: ROCm's profiling markers. ROCm defines them empty (the
 * markers went with its old profiler); so does hip-remote.
 */
#ifndef HIP_REMOTE_HIP_PROFILE_H
#define HIP_REMOTE_HIP_PROFILE_H

#define HIP_SCOPED_MARKER(markerName, group)
#define HIP_BEGIN_MARKER(markerName, group)
#define HIP_END_MARKER()

#endif /* HIP_REMOTE_HIP_PROFILE_H */
