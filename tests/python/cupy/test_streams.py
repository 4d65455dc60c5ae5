"""Streams and events, the memory pool and graph capture (CuPy's "Streams and Events" and
"Memory Management" guides; cupy.cuda.Graph via Stream.begin_capture/end_capture)."""
import gc

import cupy
import numpy as np

SCALE_SOURCE = r"""
extern "C" __global__ void scale_add(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


def test_stream_context_and_events():
    host = np.arange(1 << 18, dtype=np.float32)
    stream = cupy.cuda.Stream(non_blocking=True)
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    with stream:
        assert cupy.cuda.get_current_stream() == stream
        start.record()
        dev = cupy.asarray(host)
        dev *= 2
        end.record()
    end.synchronize()
    assert end.done
    assert cupy.cuda.get_elapsed_time(start, end) >= 0.0
    stream.synchronize()
    np.testing.assert_array_equal(dev.get(), host * 2)


def test_event_orders_two_streams():
    producer, consumer = cupy.cuda.Stream(non_blocking=True), cupy.cuda.Stream(non_blocking=True)
    with producer:
        a = cupy.asarray(np.full(1 << 16, 3, dtype=np.int32))
        b = a * 7
        ready = producer.record()
    consumer.wait_event(ready)
    with consumer:
        c = b + 1
    consumer.synchronize()
    np.testing.assert_array_equal(c.get(), np.full(1 << 16, 22))


def test_async_copy_with_pinned_memory():
    n = 1 << 16
    pinned = cupy.cuda.alloc_pinned_memory(n * 4)
    host = np.frombuffer(pinned, np.float32, n)
    host[:] = np.arange(n, dtype=np.float32)
    stream = cupy.cuda.Stream()
    dev = cupy.empty(n, dtype=np.float32)
    dev.set(host, stream=stream)
    out = dev.get(stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(out, host)


def test_memory_pool_reuses_blocks():
    pool = cupy.get_default_memory_pool()
    # Arrays of an earlier failed test live on in its traceback until a collection; CuPy
    # collects when an allocation would pass the limit, which would then fit.
    gc.collect()
    pool.free_all_blocks()
    before = pool.used_bytes()
    a = cupy.empty(1 << 20, dtype=np.uint8)
    assert pool.used_bytes() == before + (1 << 20)
    ptr = a.data.ptr
    del a
    assert pool.used_bytes() == before
    assert pool.total_bytes() >= before + (1 << 20)  # held for reuse, not freed
    b = cupy.empty(1 << 20, dtype=np.uint8)
    assert b.data.ptr == ptr  # the freed block came back
    del b
    pool.free_all_blocks()
    assert pool.total_bytes() == pool.used_bytes() == before
    pool.set_limit(size=before + (1 << 22))
    try:
        try:
            cupy.empty(1 << 23, dtype=np.uint8)
            raise AssertionError("an allocation over the pool's limit succeeded")
        except cupy.cuda.memory.OutOfMemoryError:
            pass
    finally:
        pool.set_limit(size=0)


def test_custom_allocator_managed_memory():
    # cupy.cuda.malloc_managed: hipMallocManaged through the allocator hook.
    cupy.cuda.set_allocator(cupy.cuda.MemoryPool(cupy.cuda.malloc_managed).malloc)
    try:
        x = cupy.asarray(np.arange(1000, dtype=np.float64))
        np.testing.assert_array_equal((x + 1).get(), np.arange(1000) + 1)
    finally:
        cupy.cuda.set_allocator(cupy.get_default_memory_pool().malloc)


def test_graph_capture_and_replay():
    kernel = cupy.RawKernel(SCALE_SOURCE, "scale_add")
    n = 4096
    x = cupy.asarray(np.arange(n, dtype=np.float32))
    y = cupy.zeros(n, dtype=np.float32)
    stream = cupy.cuda.Stream(non_blocking=True)
    # Compile and load both kernels first: a capture records launches, not compiles.
    warm = cupy.zeros(n, dtype=np.float32)
    kernel(((n + 255) // 256,), (256,), (x, warm, np.float32(0.0), np.int32(n)))
    warm += 1
    cupy.cuda.Device().synchronize()
    with stream:
        stream.begin_capture()
        kernel(((n + 255) // 256,), (256,), (x, y, np.float32(2.0), np.int32(n)))
        y += 1  # a CuPy elementwise kernel captured too
        graph = stream.end_capture()
    assert isinstance(graph, cupy.cuda.graph.Graph)
    np.testing.assert_array_equal(y.get(), np.zeros(n))  # captured, not run
    for _ in range(3):
        graph.launch(stream)
    stream.synchronize()
    np.testing.assert_array_equal(y.get(), 3 * (2 * np.arange(n, dtype=np.float32) + 1))
