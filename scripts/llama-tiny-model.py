#!/usr/bin/env python3
"""A tiny llama-architecture GGUF model for llama-bench, written with gguf's Python tools.

    python3 scripts/llama-tiny-model.py OUT.gguf [--type q8_0|q4_0|f16] [--seed N]

Needs `pip install gguf` (it brings numpy). The weights are seeded random numbers: llama-bench
measures speed only and feeds random token ids, so the model needs no real vocabulary (the
tokenizer is "none" with a vocabulary size). The shapes (a 4-layer, 256-wide llama with a
4096-token vocabulary, about 4 MB in q8_0) are small enough to travel in the GPU pack and
large enough that every kernel of a llama forward pass runs: embeddings, RMS norm, rope,
attention, SwiGLU feed-forward, quantized matrix products.
"""
import argparse

import numpy as np
import gguf

N_VOCAB = 4096
N_EMBD = 256
N_HEAD = 8
N_HEAD_KV = 4
N_FF = 704  # a multiple of the 32-value quantization block
N_LAYER = 4
N_CTX = 2048


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--type", default="q8_0", choices=["q8_0", "q4_0", "f16"])
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    qtype = {"q8_0": gguf.GGMLQuantizationType.Q8_0, "q4_0": gguf.GGMLQuantizationType.Q4_0,
             "f16": gguf.GGMLQuantizationType.F16}[args.type]
    file_type = {"q8_0": gguf.LlamaFileType.MOSTLY_Q8_0, "q4_0": gguf.LlamaFileType.MOSTLY_Q4_0,
                 "f16": gguf.LlamaFileType.MOSTLY_F16}[args.type]

    writer = gguf.GGUFWriter(args.out, "llama")
    writer.add_name("hip-remote tiny llama")
    writer.add_context_length(N_CTX)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYER)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD_KV)
    writer.add_rope_dimension_count(N_EMBD // N_HEAD)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(N_VOCAB)
    writer.add_tokenizer_model("none")
    writer.add_file_type(file_type)

    def matrix(name: str, rows: int, cols: int) -> None:
        # numpy shape (rows, cols) is ggml's ne = [cols, rows]; scaled so activations stay O(1).
        data = (rng.standard_normal((rows, cols)) / np.sqrt(cols)).astype(np.float32)
        if qtype == gguf.GGMLQuantizationType.F16:
            writer.add_tensor(name, data.astype(np.float16))
        else:
            writer.add_tensor(name, gguf.quants.quantize(data, qtype), raw_dtype=qtype)

    def norm(name: str) -> None:
        writer.add_tensor(name, np.ones(N_EMBD, dtype=np.float32))

    head_dim = N_EMBD // N_HEAD
    matrix("token_embd.weight", N_VOCAB, N_EMBD)
    for i in range(N_LAYER):
        norm(f"blk.{i}.attn_norm.weight")
        matrix(f"blk.{i}.attn_q.weight", N_EMBD, N_EMBD)
        matrix(f"blk.{i}.attn_k.weight", N_HEAD_KV * head_dim, N_EMBD)
        matrix(f"blk.{i}.attn_v.weight", N_HEAD_KV * head_dim, N_EMBD)
        matrix(f"blk.{i}.attn_output.weight", N_EMBD, N_EMBD)
        norm(f"blk.{i}.ffn_norm.weight")
        matrix(f"blk.{i}.ffn_gate.weight", N_FF, N_EMBD)
        matrix(f"blk.{i}.ffn_up.weight", N_FF, N_EMBD)
        matrix(f"blk.{i}.ffn_down.weight", N_EMBD, N_FF)
    norm("output_norm.weight")
    matrix("output.weight", N_VOCAB, N_EMBD)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    main()
