/*
 * Shared helpers of the hip-remote C test programs.
 *
 * Every check prints what failed (file:line, the expression, the HIP error name) and exits
 * with status 1 on the first failure, so the Rust side only has to look at the exit status
 * and show the output.
 */
#ifndef HIP_REMOTE_TEST_CHECK_H
#define HIP_REMOTE_TEST_CHECK_H

#define _POSIX_C_SOURCE 200809L

#include <hip/hip_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A HIP call that must succeed. */
#define CHECK(expr)                                                                          \
  do {                                                                                       \
    hipError_t check_err_ = (expr);                                                          \
    if (check_err_ != hipSuccess) {                                                          \
      printf("FAIL %s:%d: %s returned %s (%d): %s\n", __FILE__, __LINE__, #expr,             \
             hipGetErrorName(check_err_), (int)check_err_, hipGetErrorString(check_err_));   \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)

/* A HIP call that must fail with exactly `want`. */
#define EXPECT_ERR(expr, want)                                                               \
  do {                                                                                       \
    hipError_t check_err_ = (expr);                                                          \
    if (check_err_ != (want)) {                                                              \
      printf("FAIL %s:%d: %s returned %s (%d), expected %s (%d)\n", __FILE__, __LINE__,      \
             #expr, hipGetErrorName(check_err_), (int)check_err_, hipGetErrorName(want),     \
             (int)(want));                                                                   \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)

/* A plain condition. */
#define REQUIRE(cond, ...)                                                                   \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                 \
      printf(__VA_ARGS__);                                                                   \
      printf("\n");                                                                          \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)

/* Line-buffered output, so progress appears in order and an interactive parent sees lines. */
static inline void begin(const char* name) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("== %s\n", name);
}

static inline void step(const char* what) { printf("-- %s\n", what); }

/* Deterministic pattern: byte i of buffer `seed`. */
static inline uint8_t pattern_byte(uint32_t seed, size_t i) {
  uint32_t x = (uint32_t)i * 2654435761u + seed * 40503u + 0x9e3779b9u;
  x ^= x >> 15;
  return (uint8_t)(x ^ (x >> 8));
}

static inline void fill_pattern(void* buf, size_t len, uint32_t seed) {
  uint8_t* p = (uint8_t*)buf;
  for (size_t i = 0; i < len; i++) p[i] = pattern_byte(seed, i);
}

/* Index of the first byte differing from the pattern, or (size_t)-1. */
static inline size_t find_mismatch(const void* buf, size_t len, uint32_t seed) {
  const uint8_t* p = (const uint8_t*)buf;
  for (size_t i = 0; i < len; i++)
    if (p[i] != pattern_byte(seed, i)) return i;
  return (size_t)-1;
}

#define EXPECT_PATTERN(buf, len, seed)                                                       \
  do {                                                                                       \
    size_t at_ = find_mismatch((buf), (len), (seed));                                        \
    REQUIRE(at_ == (size_t)-1, "byte %zu of %zu is 0x%02x, expected 0x%02x (seed %u)", at_,  \
            (size_t)(len), ((const uint8_t*)(buf))[at_ == (size_t)-1 ? 0 : at_],             \
            pattern_byte((seed), at_), (unsigned)(seed));                                    \
  } while (0)

static inline void* xmalloc(size_t n) {
  void* p = malloc(n ? n : 1);
  REQUIRE(p != NULL, "host malloc(%zu) failed", n);
  return p;
}

static inline double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

#endif
