/*
 * hip-remote: the device log writer: kernel printf and assert on NVIDIA GPUs.
 *
 * Shared by the clang NVPTX pass of hip-remote's hipcc (through hipcc_device.h) and by NVRTC
 * (served by the worker as the in-memory header "hip_remote/device_log.h", included from
 * hip_compat.h), so it uses only what both offer: CUDA's atomicAdd, __threadfence_system and
 * inline PTX. No standard headers.
 *
 * Each module gets one device global, __hip_remote_device_log: a 32-byte header and a ring-less
 * append-only buffer. A writer reserves a record with an atomic add on `head`, writes the record
 * body, fences, and stores the record's size word last; the worker reads the records after a
 * synchronize and prints them (the format is documented in docs/KERNELS.md, "The device log").
 *
 * The global is zero-initialised: an initialised 1 MiB global costs ~3 MB of PTX (clang and NVVM
 * print every byte of an initialiser), so each writer stores `magic` and `capacity` itself (the
 * same values from every writer) before it reserves space. A module whose kernels never printed
 * has magic 0 and nothing to read.
 */
#ifndef HIP_REMOTE_DEVICE_LOG_H
#define HIP_REMOTE_DEVICE_LOG_H

#ifndef HIP_REMOTE_DEVICE_LOG_BYTES
#define HIP_REMOTE_DEVICE_LOG_BYTES (1u << 20)
#endif
#define HIP_REMOTE_DEVICE_LOG_MAGIC 0x31474F4C50494852ull /* b"RHIPLOG1" little-endian */
#define HIP_REMOTE_DEVICE_LOG_MAX_STRING 1024u

#define HIP_REMOTE_LOG_PRINTF 1u
#define HIP_REMOTE_LOG_ASSERT 2u

#define HIP_REMOTE_ARG_SIGNED 1u
#define HIP_REMOTE_ARG_UNSIGNED 2u
#define HIP_REMOTE_ARG_DOUBLE 3u
#define HIP_REMOTE_ARG_POINTER 4u
#define HIP_REMOTE_ARG_STRING 5u
#define HIP_REMOTE_ARG_NULL_STRING 6u

struct __hip_remote_device_log_t {
  unsigned long long magic;
  unsigned long long capacity;
  unsigned long long head;
  unsigned int asserts;
  unsigned int dropped;
  unsigned char data[HIP_REMOTE_DEVICE_LOG_BYTES];
};
static_assert(HIP_REMOTE_DEVICE_LOG_BYTES % 8 == 0, "the device log holds whole 8-byte words");

#if defined(__CUDA_ARCH__)

/* Weak: every translation unit defines it, and relocatable device code linked from several
 * units must still end up with one log per module. NVRTC ignores the weak attribute but makes a
 * C++17 inline variable .weak (the worker compiles hiprtc sources as C++17). */
#if defined(__CUDACC_RTC__)
#define __HIP_REMOTE_DEVICE_LOG_LINKAGE inline
#else
#define __HIP_REMOTE_DEVICE_LOG_LINKAGE __attribute__((weak))
#endif
extern "C" {
__device__ __HIP_REMOTE_DEVICE_LOG_LINKAGE __hip_remote_device_log_t __hip_remote_device_log;
}

/* One printf argument, classified by its C++ type (and, for char pointers, by the conversion
 * that consumes it: %s copies the string, anything else prints the address). */
struct __hip_remote_log_arg {
  unsigned int tag;
  unsigned int len;
  unsigned long long bits;
  const char* str;
};

/* The next conversion of `format` after position `pos`: its conversion character, '*' for a
 * width or precision taken from the arguments, 0 past the end. */
__device__ inline char __hip_remote_next_conversion(const char* format, unsigned int& pos, bool& in_spec) {
  for (;;) {
    if (!in_spec) {
      while (format[pos] != 0 && format[pos] != '%') ++pos;
      if (format[pos] == 0) return 0;
      ++pos;
      if (format[pos] == '%') {
        ++pos;
        continue;
      }
      in_spec = true;
    }
    while (format[pos] != 0) {
      char c = format[pos++];
      if (c == '*') return '*';
      bool modifier = (c >= '0' && c <= '9') || c == '-' || c == '+' || c == ' ' || c == '#' || c == '.' ||
                      c == 'h' || c == 'l' || c == 'z' || c == 'j' || c == 't' || c == 'L' || c == 'q';
      if (!modifier) {
        in_spec = false;
        return c;
      }
    }
    in_spec = false;
    return 0;
  }
}

struct __hip_remote_format_cursor {
  const char* format;
  unsigned int pos;
  bool in_spec;
  __device__ char next() { return __hip_remote_next_conversion(format, pos, in_spec); }
};

__device__ inline __hip_remote_log_arg __hip_remote_log_integer(long long v) {
  __hip_remote_log_arg a = {HIP_REMOTE_ARG_SIGNED, 8u, (unsigned long long)v, 0};
  return a;
}
__device__ inline __hip_remote_log_arg __hip_remote_log_unsigned(unsigned long long v) {
  __hip_remote_log_arg a = {HIP_REMOTE_ARG_UNSIGNED, 8u, v, 0};
  return a;
}
__device__ inline __hip_remote_log_arg __hip_remote_log_double(double v) {
  union {
    double d;
    unsigned long long u;
  } bits;
  bits.d = v;
  __hip_remote_log_arg a = {HIP_REMOTE_ARG_DOUBLE, 8u, bits.u, 0};
  return a;
}
__device__ inline __hip_remote_log_arg __hip_remote_log_chars(const char* s, __hip_remote_format_cursor& cursor) {
  if (cursor.next() != 's') {
    __hip_remote_log_arg a = {HIP_REMOTE_ARG_POINTER, 8u, (unsigned long long)s, 0};
    return a;
  }
  if (s == 0) {
    __hip_remote_log_arg a = {HIP_REMOTE_ARG_NULL_STRING, 0u, 0ull, 0};
    return a;
  }
  unsigned int n = 0;
  while (n < HIP_REMOTE_DEVICE_LOG_MAX_STRING && s[n] != 0) ++n;
  __hip_remote_log_arg a = {HIP_REMOTE_ARG_STRING, n, 0ull, s};
  return a;
}

/* Classification by type; every overload consumes one conversion of the format. */
#define __HIP_REMOTE_LOG_AS(type, how)                                                                  \
  __device__ inline __hip_remote_log_arg __hip_remote_log_classify(type v, __hip_remote_format_cursor& c) { \
    (void)c.next();                                                                                     \
    return how(v);                                                                                      \
  }
__HIP_REMOTE_LOG_AS(bool, __hip_remote_log_integer)
__HIP_REMOTE_LOG_AS(char, __hip_remote_log_integer)
__HIP_REMOTE_LOG_AS(signed char, __hip_remote_log_integer)
__HIP_REMOTE_LOG_AS(short, __hip_remote_log_integer)
__HIP_REMOTE_LOG_AS(int, __hip_remote_log_integer)
__HIP_REMOTE_LOG_AS(long, __hip_remote_log_integer)
__HIP_REMOTE_LOG_AS(long long, __hip_remote_log_integer)
__HIP_REMOTE_LOG_AS(unsigned char, __hip_remote_log_unsigned)
__HIP_REMOTE_LOG_AS(unsigned short, __hip_remote_log_unsigned)
__HIP_REMOTE_LOG_AS(unsigned int, __hip_remote_log_unsigned)
__HIP_REMOTE_LOG_AS(unsigned long, __hip_remote_log_unsigned)
__HIP_REMOTE_LOG_AS(unsigned long long, __hip_remote_log_unsigned)
__HIP_REMOTE_LOG_AS(float, __hip_remote_log_double)
__HIP_REMOTE_LOG_AS(double, __hip_remote_log_double)
#undef __HIP_REMOTE_LOG_AS
__device__ inline __hip_remote_log_arg __hip_remote_log_classify(long double v, __hip_remote_format_cursor& c) {
  (void)c.next();
  return __hip_remote_log_double((double)v);
}
__device__ inline __hip_remote_log_arg __hip_remote_log_classify(const char* v, __hip_remote_format_cursor& c) {
  return __hip_remote_log_chars(v, c);
}
__device__ inline __hip_remote_log_arg __hip_remote_log_classify(char* v, __hip_remote_format_cursor& c) {
  return __hip_remote_log_chars(v, c);
}
template <typename T>
__device__ inline __hip_remote_log_arg __hip_remote_log_classify(T* v, __hip_remote_format_cursor& c) {
  (void)c.next();
  __hip_remote_log_arg a = {HIP_REMOTE_ARG_POINTER, 8u, (unsigned long long)v, 0};
  return a;
}
__device__ inline __hip_remote_log_arg __hip_remote_log_classify(decltype(nullptr), __hip_remote_format_cursor& c) {
  (void)c.next();
  __hip_remote_log_arg a = {HIP_REMOTE_ARG_POINTER, 8u, 0ull, 0};
  return a;
}
/* Enumerations and other integer-like types (a struct argument fails here, at compile time). */
template <typename T>
__device__ inline __hip_remote_log_arg __hip_remote_log_classify(T v, __hip_remote_format_cursor& c) {
  (void)c.next();
  return __hip_remote_log_integer((long long)v);
}

__device__ inline unsigned int __hip_remote_log_pad8(unsigned int n) { return (n + 7u) & ~7u; }

/* Reserves and writes one record; returns false (and counts it in `dropped`) when it does not fit. */
/* Out of line: kernels with many printf calls share one copy. */
__device__ inline __attribute__((noinline)) bool __hip_remote_log_write(unsigned int kind, const char* format, const __hip_remote_log_arg* args,
                                              unsigned int arg_count) {
  __hip_remote_device_log_t* log = &__hip_remote_device_log;
  unsigned int format_len = 0;
  while (format[format_len] != 0) ++format_len;
  unsigned int size = 16u + __hip_remote_log_pad8(format_len);
  for (unsigned int i = 0; i < arg_count; ++i) {
    size += 8u + (args[i].tag == HIP_REMOTE_ARG_STRING ? __hip_remote_log_pad8(args[i].len)
                  : args[i].tag == HIP_REMOTE_ARG_NULL_STRING ? 0u
                                                              : 8u);
  }
  log->magic = HIP_REMOTE_DEVICE_LOG_MAGIC;
  log->capacity = HIP_REMOTE_DEVICE_LOG_BYTES;
  unsigned long long offset = atomicAdd(&log->head, (unsigned long long)size);
  if (offset + size > (unsigned long long)HIP_REMOTE_DEVICE_LOG_BYTES) {
    atomicAdd(&log->dropped, 1u);
    return false;
  }
  unsigned char* record = log->data + offset;
  unsigned int* words = (unsigned int*)record;
  /* The worker resets `head` without clearing the buffer: mark the record unfinished at once. */
  *(volatile unsigned int*)words = 0u;
  words[1] = kind;
  words[2] = format_len;
  words[3] = arg_count;
  unsigned int at = 16u;
  for (unsigned int i = 0; i < format_len; ++i) record[at + i] = (unsigned char)format[i];
  for (unsigned int i = format_len; i < __hip_remote_log_pad8(format_len); ++i) record[at + i] = 0;
  at += __hip_remote_log_pad8(format_len);
  for (unsigned int i = 0; i < arg_count; ++i) {
    unsigned int* arg_words = (unsigned int*)(record + at);
    arg_words[0] = args[i].tag;
    arg_words[1] = args[i].len;
    at += 8u;
    if (args[i].tag == HIP_REMOTE_ARG_STRING) {
      unsigned int padded = __hip_remote_log_pad8(args[i].len);
      for (unsigned int b = 0; b < args[i].len; ++b) record[at + b] = (unsigned char)args[i].str[b];
      for (unsigned int b = args[i].len; b < padded; ++b) record[at + b] = 0;
      at += padded;
    } else if (args[i].tag != HIP_REMOTE_ARG_NULL_STRING) {
      *(unsigned long long*)(record + at) = args[i].bits;
      at += 8u;
    }
  }
  /* The body must be visible (to the host, after the kernel) before the size says it is done. */
  __threadfence_system();
  *(volatile unsigned int*)words = size;
  return true;
}

/* printf for kernels: returns the number of arguments written, or -1 when the log was full. */
template <typename... Args>
__device__ inline int __hip_remote_printf(const char* format, Args... args) {
  __hip_remote_format_cursor cursor = {format, 0u, false};
  /* Braced-list elements are evaluated in order, so the cursor walks the format left to right. */
  __hip_remote_log_arg classified[sizeof...(Args) + 1] = {__hip_remote_log_classify(args, cursor)...};
  bool written = __hip_remote_log_write(HIP_REMOTE_LOG_PRINTF, format, classified, (unsigned int)sizeof...(Args));
  return written ? (int)sizeof...(Args) : -1;
}

/* A failed assert: a kind-2 record, the `asserts` count (the worker turns it into
 * hipErrorAssert), then this thread ends. `exit`, not `trap`: a trap is a sticky error that
 * would poison the worker's CUDA context for every session sharing it. */
__device__ inline __attribute__((noinline)) void __hip_remote_assert_fail(const char* expression, const char* file, unsigned int line,
                                                const char* function) {
  unsigned int bx, by, bz, tx, ty, tz;
  asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(bx));
  asm volatile("mov.u32 %0, %%ctaid.y;" : "=r"(by));
  asm volatile("mov.u32 %0, %%ctaid.z;" : "=r"(bz));
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(tx));
  asm volatile("mov.u32 %0, %%tid.y;" : "=r"(ty));
  asm volatile("mov.u32 %0, %%tid.z;" : "=r"(tz));
  const char* format = "%s:%u: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Device-side assertion `%s' failed.\n";
  __hip_remote_format_cursor cursor = {format, 0u, false};
  __hip_remote_log_arg args[10] = {
      __hip_remote_log_classify(file, cursor),     __hip_remote_log_classify(line, cursor),
      __hip_remote_log_classify(function, cursor), __hip_remote_log_classify(bx, cursor),
      __hip_remote_log_classify(by, cursor),       __hip_remote_log_classify(bz, cursor),
      __hip_remote_log_classify(tx, cursor),       __hip_remote_log_classify(ty, cursor),
      __hip_remote_log_classify(tz, cursor),       __hip_remote_log_classify(expression, cursor)};
  (void)__hip_remote_log_write(HIP_REMOTE_LOG_ASSERT, format, args, 10u);
  atomicAdd(&__hip_remote_device_log.asserts, 1u);
  __threadfence_system();
  asm volatile("exit;" ::: "memory");
  __builtin_unreachable();
}

#endif /* __CUDA_ARCH__ */
#endif /* HIP_REMOTE_DEVICE_LOG_H */
