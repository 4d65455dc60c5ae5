/*
 * Queries do not wait for another thread's synchronising call: while one thread sits in
 * hipStreamSynchronize (which holds the connection while it waits for the worker), another
 * asks for device properties, attributes, flags, the device count and pointer attributes,
 * all answered from what the client already knows. A query that waited for the connection
 * would return only after the synchronisation.
 *
 * Each attempt queues memsets, starts the synchronisation on a second thread, waits until
 * that thread is inside it, then queries. The attempt counts when the synchronisation was
 * still running before the queries began and after they ended; when it ended first, the
 * work was too short to tell, and the next attempt queues twice as much (at most 6).
 */
#include "check.h"

#include <pthread.h>
#include <stdatomic.h>

#define BUFFER_BYTES ((size_t)64 << 20)
#define QUERY_ROUNDS 200
#define ATTEMPTS 6

static hipStream_t stream;
static atomic_int entering, done;

static void* synchronize(void* unused) {
  (void)unused;
  atomic_store(&entering, 1);
  CHECK(hipStreamSynchronize(stream));
  atomic_store(&done, 1);
  return NULL;
}

static void query(void* buffer) {
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  REQUIRE(props.maxThreadsPerBlock > 0, "maxThreadsPerBlock %d", props.maxThreadsPerBlock);
  int value = 0;
  CHECK(hipDeviceGetAttribute(&value, hipDeviceAttributeMaxThreadsPerBlock, 0));
  REQUIRE(value == props.maxThreadsPerBlock, "attribute %d, property %d", value, props.maxThreadsPerBlock);
  CHECK(hipDeviceGetAttribute(&value, hipDeviceAttributeMaxTexture1DLinear, 0));
  unsigned flags = 0;
  CHECK(hipGetDeviceFlags(&flags));
  REQUIRE(flags == hipDeviceScheduleSpin, "device flags %#x", flags);
  int count = 0;
  CHECK(hipGetDeviceCount(&count));
  REQUIRE(count == 1, "device count %d", count);
  hipPointerAttribute_t attributes;
  CHECK(hipPointerGetAttributes(&attributes, (char*)buffer + 1));
  REQUIRE(attributes.type == hipMemoryTypeDevice && attributes.device == 0, "pointer type %d device %d",
          (int)attributes.type, attributes.device);
}

int main(void) {
  begin("queries_during_sync");
  void* buffer = NULL;
  CHECK(hipMalloc(&buffer, BUFFER_BYTES));
  CHECK(hipStreamCreate(&stream));
  /* The first answers come from the worker; from then on they are the client's. */
  query(buffer);

  int fills = 8;
  for (int attempt = 1; attempt <= ATTEMPTS; attempt++, fills *= 2) {
    for (int i = 0; i < fills; i++) CHECK(hipMemsetAsync(buffer, i, BUFFER_BYTES, stream));
    atomic_store(&entering, 0);
    atomic_store(&done, 0);
    pthread_t syncer;
    REQUIRE(pthread_create(&syncer, NULL, synchronize, NULL) == 0, "pthread_create");
    while (!atomic_load(&entering)) sleep_ms(1);
    sleep_ms(20); /* into the synchronisation's wait */
    int before = atomic_load(&done);
    double start = now_seconds();
    for (int i = 0; i < QUERY_ROUNDS; i++) query(buffer);
    double took = now_seconds() - start;
    int after = atomic_load(&done);
    REQUIRE(pthread_join(syncer, NULL) == 0, "pthread_join");
    printf("   attempt %d: %d fills of %zu MiB, %d query rounds in %.1f ms, sync done before %d after %d\n",
           attempt, fills, BUFFER_BYTES >> 20, QUERY_ROUNDS, took * 1e3, before, after);
    if (!before && !after) {
      CHECK(hipFree(buffer));
      CHECK(hipStreamDestroy(stream));
      printf("PASS queries_during_sync\n");
      return 0;
    }
  }
  REQUIRE(0, "in %d attempts the queries never returned while a synchronisation was running", ATTEMPTS);
  return 1;
}
