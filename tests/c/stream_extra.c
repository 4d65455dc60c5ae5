/*
 * Stream breadth: attributes, CU masks, ids, wait/write value (32/64, every condition,
 * masks), batch memory operations, event records with flags, the thread's capture mode, and
 * their argument errors.
 */
#include "check.h"

#include <hip/hip_ext.h>

static uint64_t read64(void* d) {
  uint64_t v = 0;
  CHECK(hipMemcpy(&v, d, sizeof v, hipMemcpyDeviceToHost));
  return v;
}

static uint32_t read32(void* d) {
  uint32_t v = 0;
  CHECK(hipMemcpy(&v, d, sizeof v, hipMemcpyDeviceToHost));
  return v;
}

/* Waits up to 10 s for `s` to finish its work: a wait that is never released fails with a
 * message instead of hanging the program. */
static void released_within_10s(hipStream_t s, unsigned flags, uint64_t mask) {
  hipError_t q = hipStreamQuery(s);
  for (int i = 0; i < 1000 && q == hipErrorNotReady; i++) {
    sleep_ms(10);
    q = hipStreamQuery(s);
  }
  REQUIRE(q == hipSuccess, "the wait (flags %u, mask %#llx) was not released: %s", flags, (unsigned long long)mask, hipGetErrorName(q));
  CHECK(hipStreamSynchronize(s));
}

/* A wait on `s` that `release` satisfies: work queued after the wait must not run before. */
static void wait_then_release(hipStream_t s, hipStream_t other, uint32_t* word, uint32_t* marker, unsigned flags,
                              uint32_t wait_value, uint32_t mask, uint32_t release) {
  CHECK(hipMemset(word, 0, 4));
  CHECK(hipMemset(marker, 0, 4));
  CHECK(hipStreamWaitValue32(s, word, wait_value, flags, mask));
  CHECK(hipStreamWriteValue32(s, marker, 0xabcd, 0));
  sleep_ms(50);
  EXPECT_ERR(hipStreamQuery(s), hipErrorNotReady);
  REQUIRE(read32(marker) == 0, "work after an unsatisfied wait ran (flags %u)", flags);
  CHECK(hipStreamWriteValue32(other, word, release, 0));
  released_within_10s(s, flags, mask);
  REQUIRE(read32(marker) == 0xabcd, "work after the wait did not run (flags %u)", flags);
}

int main(void) {
  begin("stream_extra");
  /* Non-blocking: the checks read results with null-stream copies, which a blocking stream
   * held by a wait would hold too (the legacy null stream waits for blocking streams). */
  hipStream_t s, other;
  CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  CHECK(hipStreamCreateWithFlags(&other, hipStreamNonBlocking));

  step("stream ids");
  unsigned long long id_s = 0, id_other = 0, id_null = 1;
  CHECK(hipStreamGetId(s, &id_s));
  CHECK(hipStreamGetId(other, &id_other));
  CHECK(hipStreamGetId(NULL, &id_null));
  REQUIRE(id_s != id_other, "two streams share id %llu", id_s);
  REQUIRE(id_s != id_null && id_other != id_null, "a created stream has the null stream's id");
  EXPECT_ERR(hipStreamGetId(s, NULL), hipErrorInvalidValue);

  step("attributes");
  hipLaunchAttributeValue v;
  memset(&v, 0, sizeof v);
  CHECK(hipStreamGetAttribute(s, hipLaunchAttributeSynchronizationPolicy, &v));
  REQUIRE(v.syncPolicy == hipSyncPolicyAuto, "default policy %d", (int)v.syncPolicy);
  v.syncPolicy = hipSyncPolicyYield;
  CHECK(hipStreamSetAttribute(s, hipLaunchAttributeSynchronizationPolicy, &v));
  memset(&v, 0, sizeof v);
  CHECK(hipStreamGetAttribute(s, hipLaunchAttributeSynchronizationPolicy, &v));
  REQUIRE(v.syncPolicy == hipSyncPolicyYield, "policy %d after set", (int)v.syncPolicy);
  CHECK(hipStreamCopyAttributes(other, s));
  memset(&v, 0, sizeof v);
  CHECK(hipStreamGetAttribute(other, hipLaunchAttributeSynchronizationPolicy, &v));
  REQUIRE(v.syncPolicy == hipSyncPolicyYield, "copied policy %d", (int)v.syncPolicy);
  int least = 0, greatest = 0;
  CHECK(hipDeviceGetStreamPriorityRange(&least, &greatest));
  hipStream_t prio;
  CHECK(hipStreamCreateWithPriority(&prio, 0, greatest));
  CHECK(hipStreamGetAttribute(prio, hipLaunchAttributePriority, &v));
  REQUIRE(v.priority == greatest, "priority %d, created with %d", v.priority, greatest);
  v.syncPolicy = (hipSynchronizationPolicy)9;
  EXPECT_ERR(hipStreamSetAttribute(s, hipLaunchAttributeSynchronizationPolicy, &v), hipErrorInvalidValue);
  EXPECT_ERR(hipStreamSetAttribute(s, hipLaunchAttributePriority, &v), hipErrorInvalidValue);
  EXPECT_ERR(hipStreamGetAttribute(s, hipLaunchAttributeCooperative, &v), hipErrorInvalidValue);
  EXPECT_ERR(hipStreamGetAttribute(s, hipLaunchAttributeSynchronizationPolicy, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipStreamSetAttribute(s, hipLaunchAttributeSynchronizationPolicy, NULL), hipErrorInvalidValue);
  CHECK(hipStreamDestroy(prio));
  EXPECT_ERR(hipStreamGetAttribute(prio, hipLaunchAttributeSynchronizationPolicy, &v), hipErrorInvalidHandle);
  EXPECT_ERR(hipStreamCopyAttributes(s, prio), hipErrorInvalidHandle);

  step("CU masks");
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  uint32_t cus = (uint32_t)props.multiProcessorCount;
  uint32_t words = (cus + 31) / 32;
  uint32_t got[64];
  REQUIRE(words <= 64, "%u CUs", cus);
  memset(got, 0, sizeof got);
  CHECK(hipExtStreamGetCUMask(NULL, words, got));
  for (uint32_t i = 0; i < cus; i++) REQUIRE(got[i / 32] >> (i % 32) & 1, "CU %u missing from the default mask", i);
  uint32_t mine[64];
  memset(mine, 0, sizeof mine);
  mine[0] = 0x5; /* CUs 0 and 2 */
  hipStream_t masked;
  CHECK(hipExtStreamCreateWithCUMask(&masked, words, mine));
  memset(got, 0, sizeof got);
  CHECK(hipExtStreamGetCUMask(masked, words, got));
  REQUIRE(got[0] == (cus >= 3 ? 0x5u : (0x5u & ((1u << cus) - 1))), "mask word 0 is %#x", got[0]);
  memset(got, 0, sizeof got);
  CHECK(hipExtStreamGetCUMask(s, words, got));
  REQUIRE(got[0] != 0, "an unmasked stream reports no CUs");
  if (words > 0) EXPECT_ERR(hipExtStreamGetCUMask(masked, words - 1, got), hipErrorInvalidValue);
  EXPECT_ERR(hipExtStreamGetCUMask(masked, words, NULL), hipErrorInvalidValue);
  EXPECT_ERR(hipExtStreamCreateWithCUMask(NULL, words, mine), hipErrorInvalidHandle);
  EXPECT_ERR(hipExtStreamCreateWithCUMask(&masked, 0, mine), hipErrorInvalidValue);
  EXPECT_ERR(hipExtStreamCreateWithCUMask(&masked, words, NULL), hipErrorInvalidValue);
  /* Work runs on a masked stream like on any other. */
  uint32_t* word = NULL;
  uint32_t* marker = NULL;
  uint64_t* wide = NULL;
  CHECK(hipMalloc((void**)&word, 64));
  CHECK(hipMalloc((void**)&marker, 64));
  CHECK(hipMalloc((void**)&wide, 64));
  CHECK(hipStreamWriteValue32(masked, word, 99, 0));
  CHECK(hipStreamSynchronize(masked));
  REQUIRE(read32(word) == 99, "write on a masked stream");
  CHECK(hipStreamDestroy(masked));

  step("write value 32/64");
  CHECK(hipStreamWriteValue64(s, wide, 0x1122334455667788ull, 0));
  CHECK(hipStreamSynchronize(s));
  REQUIRE(read64(wide) == 0x1122334455667788ull, "64-bit write: %#llx", (unsigned long long)read64(wide));

  step("wait value 32: every condition, with masks");
  wait_then_release(s, other, word, marker, hipStreamWaitValueGte, 5, 0xffffffff, 7);
  /* Partial masks on GTE and EQ (CUDA's own waits have no mask: the cuda backend runs these
   * as a wait kernel). GTE compares the masked word unsigned, as ROCm does (clr's
   * __amd_streamOpsWait): 0x80000010 is above 0x10, where a signed compare would never
   * release. */
  wait_then_release(s, other, word, marker, hipStreamWaitValueEq, 0x30, 0xf0, 0x3f);
  wait_then_release(s, other, word, marker, hipStreamWaitValueGte, 0x10, 0xf00000ff, 0x8abcde10);
  wait_then_release(s, other, word, marker, hipStreamWaitValueGte, 0x4, 0xf, 0xfff6);
  wait_then_release(s, other, word, marker, hipStreamWaitValueEq, 0x30, 0xffffffff, 0x30);
  wait_then_release(s, other, word, marker, hipStreamWaitValueAnd, 0x4, 0xffffffff, 0x6);
  /* NOR: passes once some masked bit is clear in both the word and the value. */
  CHECK(hipMemset(word, 0xff, 4));
  CHECK(hipMemset(marker, 0, 4));
  CHECK(hipStreamWaitValue32(s, word, 0x0, hipStreamWaitValueNor, 0xff));
  CHECK(hipStreamWriteValue32(s, marker, 1, 0));
  sleep_ms(50);
  REQUIRE(read32(marker) == 0, "NOR wait passed while every masked bit was set");
  CHECK(hipStreamWriteValue32(other, word, 0x0f, 0));
  CHECK(hipStreamSynchronize(s));
  REQUIRE(read32(marker) == 1, "NOR wait not released");

  step("wait value 64");
  CHECK(hipMemset(wide, 0, 8));
  CHECK(hipMemset(marker, 0, 4));
  CHECK(hipStreamWaitValue64(s, wide, 0x100000000ull, hipStreamWaitValueGte, ~0ull));
  CHECK(hipStreamWriteValue32(s, marker, 2, 0));
  sleep_ms(50);
  REQUIRE(read32(marker) == 0, "64-bit wait passed early");
  CHECK(hipStreamWriteValue64(other, wide, 0x100000001ull, 0));
  CHECK(hipStreamSynchronize(s));
  REQUIRE(read32(marker) == 2, "64-bit wait not released");
  /* Masked 64-bit GTE and EQ. The first release satisfies GTE only, and only when compared
   * unsigned (its top bit is set), as ROCm compares. */
  CHECK(hipMemset(wide, 0, 8));
  CHECK(hipMemset(marker, 0, 4));
  CHECK(hipStreamWaitValue64(s, wide, 0x10, hipStreamWaitValueGte, 0xffff0000000000ffull));
  CHECK(hipStreamWaitValue64(s, wide, 0x8000000000000011ull, hipStreamWaitValueEq, 0xf0000000000000ffull));
  CHECK(hipStreamWriteValue32(s, marker, 3, 0));
  CHECK(hipStreamWriteValue64(other, wide, 0x8abc000000000010ull, 0));
  sleep_ms(50);
  REQUIRE(read32(marker) == 0, "masked 64-bit waits passed early");
  CHECK(hipStreamWriteValue64(other, wide, 0x8abc000012345611ull, 0));
  released_within_10s(s, hipStreamWaitValueEq, 0xf0000000000000ffull);
  REQUIRE(read32(marker) == 3, "masked 64-bit waits not released");

  step("wait/write errors");
  EXPECT_ERR(hipStreamWaitValue32(s, NULL, 1, hipStreamWaitValueGte, 0xffffffff), hipErrorInvalidValue);
  EXPECT_ERR(hipStreamWriteValue32(s, NULL, 1, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipStreamWaitValue32(s, word, 1, 7, 0xffffffff), hipErrorInvalidValue);
  uint32_t host_word = 0;
  EXPECT_ERR(hipStreamWriteValue32(s, &host_word, 1, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipStreamWriteValue64(s, (char*)word + 60, 1, 0), hipErrorInvalidValue);
  CHECK(hipStreamSynchronize(s));

  step("batch memory operations");
  hipStreamBatchMemOpParams ops[4];
  memset(ops, 0, sizeof ops);
  ops[0].writeValue.operation = hipStreamMemOpWriteValue32;
  ops[0].writeValue.address = (hipDeviceptr_t)word;
  ops[0].writeValue.value = 11;
  ops[1].memoryBarrier.operation = hipStreamMemOpBarrier;
  ops[2].waitValue.operation = hipStreamMemOpWaitValue32;
  ops[2].waitValue.address = (hipDeviceptr_t)word;
  ops[2].waitValue.value = 11;
  ops[2].waitValue.flags = hipStreamWaitValueEq;
  ops[3].writeValue.operation = hipStreamMemOpWriteValue64;
  ops[3].writeValue.address = (hipDeviceptr_t)wide;
  ops[3].writeValue.value64 = 0xfeedull;
  CHECK(hipStreamBatchMemOp(s, 4, ops, 0));
  CHECK(hipStreamSynchronize(s));
  REQUIRE(read32(word) == 11 && read64(wide) == 0xfeedull, "batch results %u %#llx", read32(word), (unsigned long long)read64(wide));
  EXPECT_ERR(hipStreamBatchMemOp(s, 0, ops, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipStreamBatchMemOp(s, 4, NULL, 0), hipErrorInvalidValue);
  EXPECT_ERR(hipStreamBatchMemOp(s, 4, ops, 1), hipErrorInvalidValue);
  ops[1].operation = (hipStreamBatchMemOpType)99;
  EXPECT_ERR(hipStreamBatchMemOp(s, 4, ops, 0), hipErrorInvalidValue);

  step("event records with flags");
  hipEvent_t e;
  CHECK(hipEventCreate(&e));
  CHECK(hipEventRecordWithFlags(e, s, hipEventRecordDefault));
  CHECK(hipEventSynchronize(e));
  CHECK(hipEventRecordWithFlags(e, s, hipEventRecordExternal));
  CHECK(hipEventSynchronize(e));
  EXPECT_ERR(hipEventRecordWithFlags(e, s, 2), hipErrorInvalidValue);
  EXPECT_ERR(hipEventRecordWithFlags(NULL, s, 0), hipErrorInvalidHandle); /* ROCm 7: a NULL event */
  /* A record after a held wait completes only once the wait is released. */
  CHECK(hipMemset(word, 0, 4));
  CHECK(hipStreamWaitValue32(s, word, 1, hipStreamWaitValueEq, 0xffffffff));
  CHECK(hipEventRecordWithFlags(e, s, 0));
  sleep_ms(30);
  EXPECT_ERR(hipEventQuery(e), hipErrorNotReady);
  CHECK(hipStreamWriteValue32(other, word, 1, 0));
  CHECK(hipEventSynchronize(e));
  CHECK(hipEventDestroy(e));

  step("thread capture mode");
  hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
  CHECK(hipThreadExchangeStreamCaptureMode(&mode));
  REQUIRE(mode == hipStreamCaptureModeGlobal, "initial mode %d", (int)mode);
  mode = hipStreamCaptureModeThreadLocal;
  CHECK(hipThreadExchangeStreamCaptureMode(&mode));
  REQUIRE(mode == hipStreamCaptureModeRelaxed, "mode %d after exchange", (int)mode);
  CHECK(hipThreadExchangeStreamCaptureMode(&mode));
  REQUIRE(mode == hipStreamCaptureModeThreadLocal, "mode %d", (int)mode);
  EXPECT_ERR(hipThreadExchangeStreamCaptureMode(NULL), hipErrorInvalidValue);
  mode = (hipStreamCaptureMode)7;
  EXPECT_ERR(hipThreadExchangeStreamCaptureMode(&mode), hipErrorInvalidValue);

  CHECK(hipFree(word));
  CHECK(hipFree(marker));
  CHECK(hipFree(wide));
  CHECK(hipStreamDestroy(s));
  CHECK(hipStreamDestroy(other));
  printf("PASS stream_extra\n");
  return 0;
}
