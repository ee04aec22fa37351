#!/usr/bin/env python3
"""FLOP oracle for the torch.profiler importer: real models, run on the CPU.

How to run (from the repository root; needs no GPU and no network at run time):

    python3 -m venv /work/venv-oracle
    /work/venv-oracle/bin/pip install torch torchvision transformers   # CPU wheels if reachable:
    #   pip install torch torchvision --index-url https://download.pytorch.org/whl/cpu
    /work/venv-oracle/bin/python scripts/oracle/make_oracle.py            # all models, ~3 min on 2 cores
    /work/venv-oracle/bin/python scripts/oracle/make_oracle.py --self-test  # hand counts only
    /work/venv-oracle/bin/python scripts/oracle/make_oracle.py --models resnet50,lstm_lm

What it writes (default --out tests/fixtures/oracle):

  <model>-<pass>-<precision>.trace.json.gz
      One torch.profiler Chrome trace per run (activities=[CPU], record_shapes=True),
      trimmed to the `cpu_op` events (args kept: Input Dims, Input type, Input Strides,
      Concrete Inputs, Sequence number, Fwd thread id, External id, Record function id)
      plus the trace's top-level keys other than traceEvents. gzip, mtime 0.
  oracle.json
      Per run: versions, inputs, per-operator totals of torch.utils.flop_counter.FlopCounterMode
      (raw) and corrected, the per-call list (op, Input Dims, concrete non-tensor inputs,
      out dims, raw and corrected FLOPs) in dispatch order, the ops the counter saw that
      have no formula, which cpu_op names in the trace are leaves / nested and under what,
      and the call chains that lead to the compute ops.

Traces differ from run to run (timestamps, pids, trace_id); the FLOP figures, call lists
and nesting chains do not.

Models (random weights, built from their architecture; nothing is downloaded):
  resnet50, mobilenet_v3_large, vit_b_16, lraspp_mobilenet_v3_large (torchvision, 1x3x224x224),
  gpt2 (GPT2LMHeadModel, GPT-2 small config, 2x64 tokens), bert (BertForMaskedLM, bert-base
  config, 2x64 tokens), lstm_lm (Embedding 10000x650 + 2-layer LSTM 650 + Linear 650->10000,
  2x64 tokens, batch_first); lstm_proj (nn.LSTM 256 -> 512, proj_size 128, 2 layers,
  batch_first, input 4x32x256 that requires grad); transformer_enc (nn.TransformerEncoder of 6
  nn.TransformerEncoderLayer(512, 8 heads, 2048, batch_first), 2x64x512, the inference fast path:
  eval, no_grad, fp32, forward only).
Passes: fwd (model.eval(), torch.no_grad()) and fwdbwd (model.train(), forward + loss +
backward; cross-entropy loss computed in this script). Precisions: fp32, bf16
(torch.autocast("cpu", dtype=torch.bfloat16) around forward and loss; backward outside it).
torch.backends.mha.set_fastpath_enabled(False) is set: with the fast path, eval-mode
nn.MultiheadAttention (ViT) runs as one aten::_native_multi_head_attention kernel that the
counter does not see into (ViT-B/16 fwd counts 22.5 instead of 35.1 GFLOP). Only the
transformer_enc runs enable it, as their purpose is that path.

Corrections (the "corrected" oracle; the raw one is FlopCounterMode as installed):
  1. aten::convolution_backward, weight-gradient term: the counter uses C_in (not C_in/groups)
     for the weight gradient, so it is `groups` times too large. Correct count:
         F_wgrad = 2 * N * C_out * H_out * W_out * (C_in/groups) * kH * kW
     (transposed conv: 2 * N * C_in * H_in * W_in * (C_out/groups) * kH * kW).
     Hand check (run by --self-test): depthwise 3x3, C=16, groups=16, N=1, 112x112, stride 1:
         correct F_wgrad = 2*1*16*112*112*(16/16)*3*3 = 3,612,672
         counter       = 16 * 3,612,672          = 57,802,752
  2. aten::mkldnn_rnn_layer (the CPU LSTM kernel, one call per layer and direction) has no
     formula and no decomposition, so the counter gives an LSTM 0 FLOPs. Added:
         F_fwd = 2 * T * N * 4H * (I + H)          (x W_ih^T and h W_hh^T, all steps)
     aten::mkldnn_rnn_layer_backward: F_bwd = 2 * F_fwd (dX, dH, dW_ih, dW_hh).
     Element-wise gate math and bias adds are not counted (same convention as the counter).
  3. The inference fast path (aten::_transformer_encoder_layer_fwd, and
     aten::_native_multi_head_attention when called alone) counts 0: the counter runs the op
     whole and never sees the matrix products inside it. Added, one record per matrix product
     the CPU implementation runs (aten/src/ATen/native/transformers/{transformer,attention}.cpp),
     named as the trace records it inside the call; for B x T tokens of width D, h heads,
     feed-forward width F:
         aten::mm           2*B*T*D*3D   (the q, k, v projection, one GEMM for self-attention)
         aten::bmm          2*B*T*T*D    (Q K^T, all heads)
         aten::bmm          2*B*T*T*D    (softmax(Q K^T) V)
         aten::addmm        2*B*T*D*D    (the output projection)
       and for the encoder layer
         aten::_addmm_activation 2*B*T*D*F  (the first feed-forward GEMM, ReLU or GELU fused)
         aten::addmm        2*B*T*F*D    (the second)
     Checked (run by --self-test and for every such run): the same model with the fast path
     disabled, counted by the counter itself (linear and scaled-dot-product attention), gives
     the same total.
"""
from __future__ import annotations

import argparse
import gzip
import io
import json
import math
import os
import platform
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.flop_counter as fc
from torch.profiler import ProfilerActivity, profile
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

import torchvision
import transformers

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEEP_ARGS = ("Input Dims", "Input type", "Input Strides", "Concrete Inputs",
             "Sequence number", "Fwd thread id", "External id", "Record function id")
# cpu_op names treated as "compute-relevant" when summarising nesting chains
INTERESTING = re.compile(r"conv|::mm$|addmm|bmm|attention|rnn|lstm|::linear|matmul|einsum")

VERSIONS = {
    "torch": torch.__version__,
    "torchvision": torchvision.__version__,
    "transformers": transformers.__version__,
    "python": platform.python_version(),
}


# --------------------------------------------------------------------------- models

class LSTMLM(nn.Module):
    """Word-level LSTM language model (Zaremba et al. 'medium' sizes, no dropout)."""

    def __init__(self, vocab=10000, dim=650, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, dim, num_layers=layers, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):
        h, _ = self.lstm(self.embed(ids))
        return self.head(h)


def _image_model(ctor, classes=1000, **kw):
    def build():
        m = ctor(weights=None, **kw)
        x = torch.randn(1, 3, 224, 224)
        tgt = torch.randint(0, classes, (1,))
        return m, (x,), lambda out: F.cross_entropy(out.float(), tgt), {"input": [1, 3, 224, 224]}
    return build


def _seg_model():
    m = torchvision.models.segmentation.lraspp_mobilenet_v3_large(
        weights=None, weights_backbone=None, num_classes=21)
    x = torch.randn(1, 3, 224, 224)
    tgt = torch.randint(0, 21, (1, 224, 224))

    def loss(out):
        return F.cross_entropy(out["out"].float(), tgt)
    return m, (x,), loss, {"input": [1, 3, 224, 224], "num_classes": 21}


def _lm_loss(vocab, tgt):
    def loss(out):
        logits = out.logits if hasattr(out, "logits") else out
        return F.cross_entropy(logits.float().reshape(-1, vocab), tgt.reshape(-1))
    return loss


def _gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12,
                     n_inner=None, activation_function="gelu_new", resid_pdrop=0.1,
                     embd_pdrop=0.1, attn_pdrop=0.1, layer_norm_epsilon=1e-5,
                     attn_implementation="sdpa")
    m = GPT2LMHeadModel(cfg)
    ids = torch.randint(0, cfg.vocab_size, (2, 64))
    tgt = torch.randint(0, cfg.vocab_size, (2, 64))
    return m, (ids,), _lm_loss(cfg.vocab_size, tgt), {
        "input_ids": [2, 64], "config": "GPT-2 small (12 layers, 768, 12 heads, vocab 50257)",
        "attn_implementation": "sdpa"}


def _bert():
    from transformers import BertConfig, BertForMaskedLM
    cfg = BertConfig(vocab_size=30522, hidden_size=768, num_hidden_layers=12,
                     num_attention_heads=12, intermediate_size=3072, hidden_act="gelu",
                     hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
                     max_position_embeddings=512, type_vocab_size=2,
                     attn_implementation="sdpa")
    m = BertForMaskedLM(cfg)
    ids = torch.randint(0, cfg.vocab_size, (2, 64))
    tgt = torch.randint(0, cfg.vocab_size, (2, 64))
    return m, (ids,), _lm_loss(cfg.vocab_size, tgt), {
        "input_ids": [2, 64], "config": "bert-base (12 layers, 768, 12 heads, 3072, vocab 30522)",
        "attn_implementation": "sdpa"}


def _lstm_lm():
    m = LSTMLM()
    ids = torch.randint(0, 10000, (2, 64))
    tgt = torch.randint(0, 10000, (2, 64))
    return m, (ids,), _lm_loss(10000, tgt), {
        "input_ids": [2, 64], "config": "Embedding(10000,650) + LSTM(650,650,2 layers,batch_first) + Linear(650,10000)"}


class LSTMProj(nn.Module):
    """A 2-layer LSTM with projections (proj_size < hidden_size), its output sequence."""

    def __init__(self, inp=256, hidden=512, proj=128, layers=2):
        super().__init__()
        self.lstm = nn.LSTM(inp, hidden, num_layers=layers, proj_size=proj, batch_first=True)

    def forward(self, x):
        # The initial states require their gradient in training, so that the backward computes
        # every gradient (cuDNN's output_mask all true), the first step's included.
        layers, proj, hidden = self.lstm.num_layers, self.lstm.proj_size, self.lstm.hidden_size
        h0 = torch.zeros(layers, x.shape[0], proj, requires_grad=self.training)
        c0 = torch.zeros(layers, x.shape[0], hidden, requires_grad=self.training)
        return self.lstm(x, (h0, c0))[0]


def _lstm_proj():
    m = LSTMProj()
    # The input requires its gradient, so that the backward computes every gradient (as
    # cuDNN's _cudnn_rnn_backward with output_mask all true does).
    x = torch.randn(4, 32, 256, requires_grad=True)
    return m, (x,), lambda out: out.float().pow(2).mean(), {
        "input": [4, 32, 256], "requires_grad": True,
        "config": "LSTM(256, 512, num_layers=2, proj_size=128, batch_first=True)"}


def _transformer_enc():
    layer = nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, dropout=0.1,
                                       batch_first=True)
    m = nn.TransformerEncoder(layer, num_layers=6, enable_nested_tensor=False)
    x = torch.randn(2, 64, 512)
    return m, (x,), lambda out: out.float().pow(2).mean(), {
        "input": [2, 64, 512],
        "config": "TransformerEncoder(6 x TransformerEncoderLayer(512, 8 heads, 2048, relu, "
                  "batch_first)), eval + no_grad: the fast path (_transformer_encoder_layer_fwd)"}


MODELS = {
    "resnet50": _image_model(torchvision.models.resnet50),
    "mobilenet_v3_large": _image_model(torchvision.models.mobilenet_v3_large),
    "vit_b_16": _image_model(torchvision.models.vit_b_16),
    "lraspp_mobilenet_v3_large": _seg_model,
    "gpt2": _gpt2,
    "bert": _bert,
    "lstm_lm": _lstm_lm,
    "lstm_proj": _lstm_proj,
    "transformer_enc": _transformer_enc,
}
PASSES = ("fwd", "fwdbwd")
PRECISIONS = ("fp32", "bf16")
# Models run on fewer passes or precisions: the fast path runs in eval under no_grad only, and
# not under autocast (TransformerEncoderLayer's own conditions).
MODEL_PASSES = {"transformer_enc": ("fwd",)}
MODEL_PRECISIONS = {"transformer_enc": ("fp32",)}
# Models whose runs keep the MHA / transformer fast path enabled.
FASTPATH_MODELS = {"transformer_enc"}


def run_pass(model, inputs, loss_fn, pas, prec):
    """One iteration of the pass. Gradients are reset to None first, so every run is alike."""
    for p in model.parameters():
        p.grad = None
    ac = (torch.autocast("cpu", dtype=torch.bfloat16) if prec == "bf16"
          else torch.autocast("cpu", enabled=False))
    if pas == "fwd":
        model.eval()
        with torch.no_grad(), ac:
            model(*inputs)
    else:
        model.train()
        with ac:
            loss = loss_fn(model(*inputs))
        loss.backward()


# --------------------------------------------------------------------------- counting

REGISTRY = fc.flop_registry  # {OpOverloadPacket | HOP: formula taking shapes (+ out_val)}
REGISTRY_NAMES = {f"aten::{k.__name__}" for k in REGISTRY
                  if isinstance(k, torch._ops.OpOverloadPacket)}
# ops the counter cannot see (no formula, no decomposition) for which the corrected oracle
# adds a hand formula
ADDED = {"aten::mkldnn_rnn_layer", "aten::mkldnn_rnn_layer_backward"}
# the inference fast path, whose matrix products the counter never sees: added by hand, one
# record per product (correction 3 in the module's docstring)
FASTPATH = {"aten::_transformer_encoder_layer_fwd", "aten::_native_multi_head_attention"}
_SKIP = {torch.ops.aten.sym_is_contiguous.default, torch.ops.aten.is_contiguous.default,
         torch.ops.aten.is_contiguous.memory_format,
         torch.ops.aten.is_strides_like_format.default,
         torch.ops.aten.is_non_overlapping_and_dense.default, torch.ops.aten.size.default,
         torch.ops.aten.sym_size.default, torch.ops.aten.stride.default,
         torch.ops.aten.sym_stride.default, torch.ops.aten.storage_offset.default,
         torch.ops.aten.sym_storage_offset.default, torch.ops.aten.numel.default,
         torch.ops.aten.sym_numel.default, torch.ops.aten.dim.default,
         torch.ops.prim.layout.default}


def _dims(a):
    if isinstance(a, torch.Tensor):
        return list(a.shape)
    if isinstance(a, (list, tuple)) and a and all(isinstance(t, torch.Tensor) for t in a):
        return [list(t.shape) for t in a]
    return []


def _concrete(a):
    if isinstance(a, torch.Tensor):
        return None
    if isinstance(a, (list, tuple)):
        if a and all(isinstance(t, torch.Tensor) for t in a):
            return None
        return [_concrete(x) for x in a]
    if a is None or isinstance(a, (bool, int, float, str)):
        return a
    return str(a)


def conv_wgrad_term(grad_out, x, w, transposed, grad_w):
    """The counter's weight-gradient term, exactly as torch/utils/flop_counter.py computes it."""
    def t(s):
        return [s[1], s[0]] + list(s[2:])
    if transposed:
        return fc.conv_flop_count(t(grad_out), t(x), t(grad_w), transposed=False)
    return fc.conv_flop_count(t(x), t(grad_out), t(grad_w), transposed=False)


def rnn_layer_fwd_flops(inp, w_ih, w_hh):
    """2*T*N*4H*(I+H): input and recurrent GEMMs of one LSTM layer/direction over all steps."""
    four_h, i = w_ih
    _, h = w_hh
    tn = math.prod(inp) // i
    return 2 * tn * four_h * (i + h)


def correct(op, args, raw, out):
    """(corrected flops, note) for one call."""
    if op == "aten::convolution_backward":
        grad_out, x, w = (list(a.shape) for a in args[:3])
        transposed, groups, mask = args[7], args[9], args[10]
        if mask[1] and groups > 1:
            term = conv_wgrad_term(grad_out, x, w, transposed, list(out[1].shape))
            assert term % groups == 0
            return raw - term + term // groups, f"wgrad/groups ({term} -> {term // groups})"
        return raw, None
    if op == "aten::mkldnn_rnn_layer":
        f = rnn_layer_fwd_flops(list(args[0].shape), list(args[1].shape), list(args[2].shape))
        return f, "added: 2*T*N*4H*(I+H)"
    if op == "aten::mkldnn_rnn_layer_backward":
        f = 2 * rnn_layer_fwd_flops(list(args[0].shape), list(args[1].shape), list(args[2].shape))
        return f, "added: 2 * 2*T*N*4H*(I+H)"
    return raw, None


def _gemm_record(op, m, k, n, via, what, dtype, batch=None):
    """A hand-counted matrix product inside a fast-path call: F = 2*batch*M*N*K."""
    b = 1 if batch is None else batch
    dims = [[m, k], [k, n]] if batch is None else [[b, m, k], [b, k, n]]
    return {
        "op": op, "overload": "default", "input_dims": dims, "concrete": [None, None],
        "dtype": dtype, "out_dims": [m, n] if batch is None else [b, m, n],
        "flops_raw": 0, "flops_corrected": 2 * b * m * n * k,
        "correction": f"added: {what} inside {via} (fast path; the counter counts 0), "
                      f"2*{b}*{m}*{n}*{k}",
        "via": via,
    }


def mha_records(q, k, v, embed_dim, num_head, via):
    """The matrix products native_multi_head_attention_cpu runs (attention.cpp): the Q/K/V
    projection (one GEMM when query, key and value are one tensor, as in self-attention; else
    one for Q and one for K and V when key is value; else three), Q K^T and softmax(Q K^T) V as
    batched products over B*h, and the output projection (an addmm with its bias)."""
    bsz, t, d = q.shape
    s_len = k.shape[1]
    h, dh = num_head, embed_dim // num_head
    dt = str(q.dtype).replace("torch.", "")
    recs = []
    if q is k and k is v:
        recs.append(_gemm_record("aten::mm", bsz * t, d, 3 * d, via, "the Q/K/V projection", dt))
    elif k is v:
        recs.append(_gemm_record("aten::mm", bsz * t, d, d, via, "the Q projection", dt))
        recs.append(_gemm_record("aten::mm", bsz * s_len, d, 2 * d, via, "the K/V projection", dt))
    else:
        for what, length in (("Q", t), ("K", s_len), ("V", s_len)):
            recs.append(_gemm_record("aten::mm", bsz * length, d, d, via,
                                     f"the {what} projection", dt))
    recs.append(_gemm_record("aten::bmm", t, dh, s_len, via, "Q K^T", dt, batch=bsz * h))
    recs.append(_gemm_record("aten::bmm", t, s_len, dh, via, "softmax(Q K^T) V", dt,
                             batch=bsz * h))
    recs.append(_gemm_record("aten::addmm", bsz * t, d, d, via, "the output projection", dt))
    return recs


def fastpath_records(name, args, kwargs):
    """Hand-counted records for one fast-path call (correction 3)."""
    a = list(args)
    if name == "aten::_native_multi_head_attention":
        return mha_records(a[0], a[1], a[2], a[3], a[4], name)
    # _transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias,
    # proj_weight, proj_bias, use_gelu, norm_first, eps, norm_weight_1, norm_bias_1,
    # norm_weight_2, norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2, mask,
    # mask_type): attention (self-attention: src three times), then the feed-forward network
    # (transformer.cpp's ffn: _addmm_activation, then addmm).
    src, embed_dim, num_heads = a[0], a[1], a[2]
    w1, w2 = a[14], a[16]
    bsz, t, d = src.shape
    ff = w1.shape[0]
    dt = str(src.dtype).replace("torch.", "")
    recs = mha_records(src, src, src, embed_dim, num_heads, name)
    recs.append(_gemm_record("aten::_addmm_activation", bsz * t, d, ff, name,
                             "the first feed-forward GEMM", dt))
    recs.append(_gemm_record("aten::addmm", bsz * t, ff, w2.shape[0], name,
                             "the second feed-forward GEMM", dt))
    return recs


class PerCallFlops(TorchDispatchMode):
    """Mirror of torch.utils.flop_counter._FlopCounterMode that records every counted call.

    Same dispatch logic: ops with a formula in flop_registry are executed and counted;
    others are decomposed if they can be (the pieces come back through this mode);
    the rest execute and count 0 (they are tallied in `unregistered`)."""

    def __init__(self):
        super().__init__()
        self.calls = []
        self.unregistered = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _SKIP:
            return NotImplemented
        packet = func._overloadpacket
        if packet not in REGISTRY and func is not torch.ops.prim.device.default:
            with self:
                r = func.decompose(*args, **kwargs)
                if r is not NotImplemented:
                    return r
        out = func(*args, **kwargs)
        name = func._schema.name
        if packet in REGISTRY:
            raw = REGISTRY[packet](*args, **kwargs, out_val=out)
        elif name in ADDED:
            raw = 0
        elif name in FASTPATH:
            self.unregistered[name] += 1
            self.calls.extend(fastpath_records(name, args, kwargs))
            return out
        else:
            self.unregistered[name] += 1
            return out
        cor, note = correct(name, args, raw, out)
        tensors = [a for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)]
        rec = {
            "op": name,
            "overload": func._overloadname,
            "input_dims": [_dims(a) for a in args],
            "concrete": [_concrete(a) for a in args],
            "dtype": str(tensors[0].dtype).replace("torch.", "") if tensors else None,
            "out_dims": _dims(out) if isinstance(out, torch.Tensor)
            else [list(o.shape) if isinstance(o, torch.Tensor) else [] for o in out],
            "flops_raw": int(raw),
            "flops_corrected": int(cor),
        }
        kw = {k: _concrete(v) for k, v in kwargs.items() if not isinstance(v, torch.Tensor)}
        if kw:
            rec["kwargs"] = kw
        kt = {k: list(v.shape) for k, v in kwargs.items() if isinstance(v, torch.Tensor)}
        if kt:
            rec["kwarg_dims"] = kt
        if note:
            rec["correction"] = note
        self.calls.append(rec)
        return out


# --------------------------------------------------------------------------- traces

def trim_trace(path):
    with open(path) as f:
        d = json.load(f)
    out = {k: v for k, v in d.items() if k != "traceEvents"}
    out.pop("traceName", None)  # a temp-file path; not torch's content
    evs = []
    for e in d["traceEvents"]:
        if e.get("cat") != "cpu_op":
            continue
        e = dict(e)
        e["args"] = {k: v for k, v in e.get("args", {}).items() if k in KEEP_ARGS}
        evs.append(e)
    out["traceEvents"] = evs
    return out


def nesting(events):
    """Per-name leaf/nested stats and the root->op chains of the deepest compute ops."""
    eps = 0.002  # µs; ts and dur are printed to the ns
    by_tid = defaultdict(list)
    for e in events:
        by_tid[(e["pid"], e["tid"])].append(e)
    parent = {}
    children = defaultdict(list)
    for evs in by_tid.values():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"] - eps:
                stack.pop()
            if stack and e["ts"] + e["dur"] > stack[-1]["ts"] + stack[-1]["dur"] + eps:
                # overlaps without nesting: treat as sibling of the enclosing one
                while stack and e["ts"] + e["dur"] > stack[-1]["ts"] + stack[-1]["dur"] + eps:
                    stack.pop()
            p = stack[-1] if stack else None
            parent[id(e)] = p
            if p is not None:
                children[id(p)].append(e)
            stack.append(e)
    stats = {}
    for e in events:
        s = stats.setdefault(e["name"], {"calls": 0, "leaf": 0, "top": 0, "parents": Counter()})
        s["calls"] += 1
        if not children[id(e)]:
            s["leaf"] += 1
        p = parent[id(e)]
        if p is None:
            s["top"] += 1
        else:
            s["parents"][p["name"]] += 1

    def interesting(e):
        return bool(INTERESTING.search(e["name"]))

    def has_interesting_desc(e):
        return any(interesting(c) or has_interesting_desc(c) for c in children[id(e)])

    chains = Counter()
    for e in events:
        if not interesting(e) or has_interesting_desc(e):
            continue
        path = [e["name"]]
        p = parent[id(e)]
        while p is not None:
            path.append(p["name"])
            p = parent[id(p)]
        chains[" > ".join(reversed(path))] += 1

    # counting check: trace events of counted ops that are not inside another counted op
    counted = REGISTRY_NAMES | ADDED
    top_counted = Counter()
    for e in events:
        if e["name"] not in counted:
            continue
        p = parent[id(e)]
        while p is not None and p["name"] not in counted:
            p = parent[id(p)]
        if p is None:
            top_counted[e["name"]] += 1
    for s in stats.values():
        s["parents"] = dict(s["parents"].most_common())
    return stats, dict(chains.most_common()), dict(top_counted)


# --------------------------------------------------------------------------- self test

def self_test(verbose=True):
    """Hand counts for the counter's conv-backward group error and for the added LSTM formula."""
    results = []

    def grads_of(mod, x):
        calls = PerCallFlops()
        with FlopCounterModeQuiet() as fm, calls:
            mod(x).sum().backward()
        return fm, calls

    # 1. depthwise 3x3, C=16, 112x112, N=1 (MobileNetV3's first bneck layer shape)
    conv = nn.Conv2d(16, 16, 3, padding=1, groups=16, bias=False)
    x = torch.randn(1, 16, 112, 112, requires_grad=True)
    fm, calls = grads_of(conv, x)
    n, c, h, w_, k = 1, 16, 112, 112, 3
    fwd = 2 * n * c * h * w_ * (c // 16) * k * k
    dgrad = fwd
    wgrad = 2 * n * c * h * w_ * (c // 16) * k * k
    bwd = [r for r in calls.calls if r["op"] == "aten::convolution_backward"][0]
    assert bwd["flops_corrected"] == dgrad + wgrad, (bwd, dgrad, wgrad)
    assert bwd["flops_raw"] == dgrad + 16 * wgrad, (bwd, dgrad, wgrad)
    results.append({"case": "depthwise conv 3x3 C=16 g=16 N=1 112x112 stride 1",
                    "hand_fwd": fwd, "hand_dgrad": dgrad, "hand_wgrad": wgrad,
                    "counter_bwd": bwd["flops_raw"], "corrected_bwd": bwd["flops_corrected"]})

    # 2. grouped transposed conv: C_in=8, C_out=12, groups=4, k=3, stride 2, 10x10 -> 19x19
    tc = nn.ConvTranspose2d(8, 12, 3, stride=2, padding=1, groups=4, bias=False)
    x = torch.randn(2, 8, 10, 10, requires_grad=True)
    fm, calls = grads_of(tc, x)
    fwd = 2 * 2 * 8 * 10 * 10 * (12 // 4) * 9
    f_rec = [r for r in calls.calls if r["op"] == "aten::convolution"][0]
    b_rec = [r for r in calls.calls if r["op"] == "aten::convolution_backward"][0]
    assert f_rec["flops_raw"] == fwd, (f_rec, fwd)
    assert b_rec["flops_corrected"] == 2 * fwd and b_rec["flops_raw"] == fwd + 4 * fwd, (b_rec, fwd)
    results.append({"case": "ConvTranspose2d 8->12 g=4 k3 s2 N=2 10x10",
                    "hand_fwd": fwd, "hand_dgrad": fwd, "hand_wgrad": fwd,
                    "counter_fwd": f_rec["flops_raw"], "counter_bwd": b_rec["flops_raw"],
                    "corrected_bwd": b_rec["flops_corrected"]})

    # 3. LSTM layer: T=5, N=3, I=7, H=11 -> mkldnn_rnn_layer (counter: 0)
    lstm = nn.LSTM(7, 11, batch_first=True)
    x = torch.randn(3, 5, 7, requires_grad=True)
    calls = PerCallFlops()
    with FlopCounterModeQuiet() as fm, calls:
        lstm(x)[0].sum().backward()
    hand = 2 * 5 * 3 * 44 * (7 + 11)
    recs = {r["op"]: r for r in calls.calls}
    assert fm.get_total_flops() == 0
    assert recs["aten::mkldnn_rnn_layer"]["flops_corrected"] == hand
    assert recs["aten::mkldnn_rnn_layer_backward"]["flops_corrected"] == 2 * hand
    results.append({"case": "LSTM T=5 N=3 I=7 H=11", "hand_fwd": hand, "hand_bwd": 2 * hand,
                    "counter_total": fm.get_total_flops()})

    # 4. SDPA fwd/bwd on CPU: 4*B*H*S*S*D and 10*B*H*S*S*D (mask / causality ignored)
    q, k_, v = (torch.randn(2, 3, 16, 8, requires_grad=True) for _ in range(3))
    calls = PerCallFlops()
    with FlopCounterModeQuiet() as fm, calls:
        F.scaled_dot_product_attention(q, k_, v, is_causal=True).sum().backward()
    recs = {r["op"]: r for r in calls.calls}
    assert recs["aten::_scaled_dot_product_flash_attention_for_cpu"]["flops_raw"] == 4 * 2 * 3 * 16 * 16 * 8
    assert recs["aten::_scaled_dot_product_flash_attention_for_cpu_backward"]["flops_raw"] == 10 * 2 * 3 * 16 * 16 * 8
    results.append({"case": "SDPA causal B=2 H=3 S=16 D=8 (counter ignores is_causal)",
                    "hand_fwd_full": 4 * 2 * 3 * 16 * 16 * 8, "hand_bwd_full": 10 * 2 * 3 * 16 * 16 * 8})
    # 5. LSTM with projections, T=5, N=3, I=7, H=11, P=4, one layer (the CPU runs it step by step
    # with linear and matmul calls, which the counter counts): F_fwd = 2*T*N*4H*(I+P) (the
    # gates) + 2*T*N*H*P (the projection) = 14,520 + 1,320; the backward (input and initial
    # states requiring their gradients) twice that.
    lstm = nn.LSTM(7, 11, proj_size=4, batch_first=True)
    x = torch.randn(3, 5, 7, requires_grad=True)
    h0 = torch.zeros(1, 3, 4, requires_grad=True)
    c0 = torch.zeros(1, 3, 11, requires_grad=True)
    with FlopCounterModeQuiet() as fm:
        lstm(x, (h0, c0))
    fwd_total = fm.get_total_flops()
    with FlopCounterModeQuiet() as fm:
        lstm(x, (h0, c0))[0].sum().backward()
    hand = 2 * 5 * 3 * 44 * (7 + 4) + 2 * 5 * 3 * 11 * 4
    assert hand == 15840 and fwd_total == hand, (fwd_total, hand)
    assert fm.get_total_flops() == 3 * hand, (fm.get_total_flops(), hand)
    results.append({"case": "LSTM proj_size T=5 N=3 I=7 H=11 P=4", "hand_fwd": hand,
                    "hand_bwd": 2 * hand, "counter_fwd": fwd_total,
                    "counter_fwdbwd": fm.get_total_flops()})

    # 6. The transformer fast path: a 2-layer encoder (D=64, 4 heads, F=128, B=2, T=10) in eval
    # under no_grad counts 0; the hand records (correction 3) total what the counter counts on
    # the same model with the fast path disabled: 2*B*T*D*3D + 4*B*T*T*D + 2*B*T*D*D +
    # 4*B*T*D*F per layer.
    layer = nn.TransformerEncoderLayer(64, 4, 128, batch_first=True)
    enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
    x = torch.randn(2, 10, 64)
    was = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(True)
    calls = PerCallFlops()
    with torch.no_grad(), FlopCounterModeQuiet() as fm, calls:
        enc(x)
    fast_counter = fm.get_total_flops()
    torch.backends.mha.set_fastpath_enabled(False)
    with torch.no_grad(), FlopCounterModeQuiet() as fm:
        enc(x)
    slow_counter = fm.get_total_flops()
    torch.backends.mha.set_fastpath_enabled(was)
    b, t, d, f = 2, 10, 64, 128
    per_layer = 2 * b * t * d * 3 * d + 4 * b * t * t * d + 2 * b * t * d * d + 4 * b * t * d * f
    added = sum(r["flops_corrected"] for r in calls.calls)
    assert fast_counter == 0, fast_counter
    assert added == 2 * per_layer == slow_counter, (added, per_layer, slow_counter)
    assert [r["op"] for r in calls.calls[:6]] == ["aten::mm", "aten::bmm", "aten::bmm",
                                                  "aten::addmm", "aten::_addmm_activation",
                                                  "aten::addmm"], calls.calls
    results.append({"case": "TransformerEncoder fast path, 2 layers D=64 h=4 F=128 B=2 T=10",
                    "hand_total": 2 * per_layer, "counter_fast_path": fast_counter,
                    "counter_slow_path": slow_counter})
    if verbose:
        for r in results:
            print("self-test:", json.dumps(r))
    return results


class FlopCounterModeQuiet(fc.FlopCounterMode):
    def __init__(self):
        super().__init__(display=False)


# --------------------------------------------------------------------------- driver

def slow_path_total(model, inputs, loss_fn, pas, prec):
    """The counter's total on the same model and pass with the fast path disabled."""
    was = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with FlopCounterModeQuiet() as fm:
            run_pass(model, inputs, loss_fn, pas, prec)
    finally:
        torch.backends.mha.set_fastpath_enabled(was)
    return fm.get_total_flops()


def one_run(name, builder, pas, prec, outdir, keep_strides):
    torch.manual_seed(0)
    torch.backends.mha.set_fastpath_enabled(name in FASTPATH_MODELS)
    model, inputs, loss_fn, meta = builder()
    run_pass(model, inputs, loss_fn, pas, prec)  # warm-up (lazy init, allocator)

    with FlopCounterModeQuiet() as fm:
        run_pass(model, inputs, loss_fn, pas, prec)
    fm_totals = {f"aten::{k.__name__}" if isinstance(k, torch._ops.OpOverloadPacket) else str(k): int(v)
                 for k, v in fm.get_flop_counts().get("Global", {}).items()}

    pc = PerCallFlops()
    with pc:
        run_pass(model, inputs, loss_fn, pas, prec)
    raw, cor = Counter(), Counter()
    for i, c in enumerate(pc.calls):
        c["i"] = i
        raw[c["op"]] += c["flops_raw"]
        cor[c["op"]] += c["flops_corrected"]
    raw = {k: v for k, v in raw.items() if v or k in REGISTRY_NAMES}
    # Ops the counter saw with no FLOPs (the fast path's, whose products are added by hand)
    # are left out of the comparison on both sides.
    if {k: v for k, v in raw.items() if v} != {k: v for k, v in fm_totals.items() if v}:
        raise SystemExit(f"{name}-{pas}-{prec}: per-call sums {raw} != FlopCounterMode {fm_totals}")

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        run_pass(model, inputs, loss_fn, pas, prec)
    with tempfile.TemporaryDirectory() as td:
        tp = os.path.join(td, "trace.json")
        prof.export_chrome_trace(tp)
        trace = trim_trace(tp)
    if not keep_strides:
        for e in trace["traceEvents"]:
            e["args"].pop("Input Strides", None)
    stats, chains, top_counted = nesting(trace["traceEvents"])
    fname = f"{name}-{pas}-{prec}.trace.json.gz"
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        gz.write(json.dumps(trace, separators=(",", ":")).encode())
    with open(os.path.join(outdir, fname), "wb") as f:
        f.write(buf.getvalue())

    extra = {}
    if name in FASTPATH_MODELS:
        # Correction 3's check: the added records total the counter's own count of the same
        # model with the fast path disabled.
        slow = slow_path_total(model, inputs, loss_fn, pas, prec)
        added = sum(c["flops_corrected"] for c in pc.calls if c.get("via"))
        assert added == slow, (name, added, slow)
        extra["slow_path_counter_total"] = slow
        extra["fast_path_added_total"] = added
    torch.backends.mha.set_fastpath_enabled(False)

    per_call_count = Counter(c["op"] for c in pc.calls)
    check = {op: {"oracle_calls": per_call_count.get(op, 0), "trace_outermost": top_counted.get(op, 0)}
             for op in sorted(set(per_call_count) | set(top_counted))}
    return {
        "id": f"{name}-{pas}-{prec}",
        "model": name, "pass": pas, "precision": prec,
        "versions": VERSIONS,
        "inputs": meta,
        "mode": ("eval, torch.no_grad()" if pas == "fwd" else "train, forward + cross_entropy + backward")
        + ("; autocast cpu bfloat16 (forward+loss)" if prec == "bf16" else ""),
        "trace_file": fname,
        "trace_cpu_ops": len(trace["traceEvents"]),
        "flop_counter_mode_totals": fm_totals,
        "totals_raw": dict(raw),
        "totals_corrected": {k: v for k, v in cor.items()},
        "total_raw": sum(raw.values()),
        "total_corrected": sum(cor.values()),
        "calls_count": len(pc.calls),
        **extra,
        "unregistered_ops_seen_by_counter": dict(pc.unregistered.most_common()),
        "trace_vs_oracle_call_counts": check,
        "trace_op_nesting": stats,
        "compute_chains": chains,
        "calls": pc.calls,
    }


def chain_schemas(runs):
    """Schemas (as torch._C reports them; same text as native_functions.yaml) of every aten op
    that appears on a compute chain in any run."""
    names = set()
    for r in runs:
        for chain in r["compute_chains"]:
            names.update(n for n in chain.split(" > ") if n.startswith("aten::"))
    out = {}
    for n in sorted(names):
        try:
            out[n] = [str(s) for s in torch._C._jit_get_schemas_for_operator(n)
                      if not s.overload_name.endswith("out")]
        except Exception as e:  # noqa: BLE001
            out[n] = [f"<{type(e).__name__}: {e}>"]
    return out


def dump_oracle(doc, path):
    """JSON with one per-call record per line (small diffs, greppable)."""
    runs = doc["runs"]
    head = {k: v for k, v in doc.items() if k != "runs"}
    parts = ["{", ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in head.items()) + ",",
             ' "runs": [']
    rtexts = []
    for r in runs:
        lines = ["  {"]
        items = [(k, v) for k, v in r.items() if k != "calls"]
        for k, v in items:
            lines.append(f"   {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))},")
        lines.append('   "calls": [')
        lines.append(",\n".join("    " + json.dumps(c, separators=(",", ":")) for c in r["calls"]))
        lines.append("   ]")
        lines.append("  }")
        rtexts.append("\n".join(lines))
    parts.append(",\n".join(rtexts))
    parts.append(" ]\n}\n")
    with open(path, "w") as f:
        f.write("\n".join(parts))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "fixtures", "oracle"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--self-test", action="store_true", help="run the hand-count checks only")
    ap.add_argument("--drop-strides", action="store_true",
                    help="drop 'Input Strides' from the stored traces (smaller)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--merge", action="store_true",
                    help="keep the runs of other models already in oracle.json (their traces "
                         "are not rewritten); the models run replace theirs")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.backends.mha.set_fastpath_enabled(False)
    tests = self_test()
    if a.self_test:
        return
    os.makedirs(a.out, exist_ok=True)
    oracle_path = os.path.join(a.out, "oracle.json")
    runs = []
    names = a.models.split(",")
    for name in names:
        for pas in MODEL_PASSES.get(name, PASSES):
            for prec in MODEL_PRECISIONS.get(name, PRECISIONS):
                t0 = time.time()
                r = one_run(name, MODELS[name], pas, prec, a.out, not a.drop_strides)
                runs.append(r)
                print(f"{r['id']:40s} raw {r['total_raw'] / 1e9:9.4f} GF  corrected "
                      f"{r['total_corrected'] / 1e9:9.4f} GF  calls {r['calls_count']:5d}  "
                      f"cpu_ops {r['trace_cpu_ops']:6d}  {time.time() - t0:5.1f}s", flush=True)
    if a.merge and os.path.exists(oracle_path):
        with open(oracle_path) as f:
            old = json.load(f)
        kept = [r for r in old["runs"] if r["model"] not in names]
        order = {m: i for i, m in enumerate(MODELS)}
        runs = sorted(kept + runs, key=lambda r: order.get(r["model"], len(order)))
    doc = {
        "generator": "scripts/oracle/make_oracle.py",
        "versions": VERSIONS,
        "flop_convention": "multiply-add = 2 FLOPs; only ops in torch.utils.flop_counter.flop_registry "
                           "(mm, addmm, bmm, baddbmm, convolution, convolution_backward, SDPA variants, ...) "
                           "count; bias adds, element-wise ops, norms, softmax count 0; SDPA ignores masks "
                           "and is_causal. Corrected = raw with conv weight-grad divided by groups, "
                           "mkldnn_rnn_layer(_backward) added, and the matrix products of the "
                           "inference fast path (_transformer_encoder_layer_fwd, "
                           "_native_multi_head_attention) added by hand.",
        "fastpath": "torch.backends.mha.set_fastpath_enabled(False), except for the "
                    "transformer_enc runs (True)",
        "trace_trim": "cpu_op events only; args kept: " + ", ".join(
            k for k in KEEP_ARGS if not a.drop_strides or k != "Input Strides"),
        "self_test": tests,
        "schemas": chain_schemas(runs),
        "runs": runs,
    }
    dump_oracle(doc, oracle_path)
    print("wrote", oracle_path)


if __name__ == "__main__":
    main()
