"""Transformer blocks built with onnx.helper in the form exporters write them.

BERT's encoder layer follows HF transformers' BertLayer as torch.onnx.export
(TorchScript, opset 17) writes it: MatMul + Add projections, head split and
merge through Shape -> Gather -> Unsqueeze -> Concat -> Reshape, K^T as a
second Transpose, Div by sqrt(d), an additive mask (1 - mask) * -10000 from
an int64 [batch, seq] mask, LayerNormalization, and GELU either as the erf
chain (Div, Erf, Add, Mul, Mul) or as the Gelu op (opset 20).

GPT-2's block follows HF GPT2Block (eager attention) the same way: Conv1D
layers are Reshape(x, [-1, in]) -> Gemm -> Reshape(x.size()[:-1] + (out,)),
the fused QKV projection is one Gemm to 3*hidden and a Split, the causal mask
is a constant lower-triangular bool buffer sliced by
bias[:, :, k - q : k, :k] with sizes taken from Shape at run time, then
Where(mask, scores, finfo(f32).min), and gelu_new is the tanh chain with Pow.

Every model has dim_params "batch" and "seq"; weights are seeded.
"""

import math

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HIDDEN = 64
HEADS = 4
HEAD_DIM = HIDDEN // HEADS
FFN = 4 * HIDDEN
MAX_POSITIONS = 256  # GPT-2's causal buffer (n_positions); seq must stay <= it


class ModelBuilder:
    """Collects nodes and initializers; names values like the exporter does."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.initializers = []
        self.counter = 0

    def fresh(self, hint):
        self.counter += 1
        return f"/{hint}_{self.counter}"

    def op(self, op_type, inputs, outputs=1, **attrs):
        names = [self.fresh(op_type) for _ in range(outputs)]
        self.nodes.append(
            helper.make_node(op_type, inputs, names, name=self.fresh(op_type + "_node"), **attrs)
        )
        return names[0] if outputs == 1 else names

    def const(self, value, dtype=np.float32):
        """A Constant node, as the exporter writes literals and shape pieces."""
        tensor = numpy_helper.from_array(np.asarray(value, dtype=dtype), self.fresh("const"))
        return self.op("Constant", [], value=tensor)

    def initializer(self, array, hint):
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, shape, hint):
        fan_in = shape[0]
        w = self.rng.standard_normal(shape).astype(np.float32) / math.sqrt(fan_in)
        return self.initializer(w, hint)

    def bias(self, n, hint, scale=0.1):
        return self.initializer((self.rng.standard_normal(n) * scale).astype(np.float32), hint)

    # --- pieces the exporter emits ------------------------------------------

    def dim(self, x, index):
        """x.size(index) as a 1-element int64 list: Shape -> Gather -> Unsqueeze."""
        shape = self.op("Shape", [x])
        scalar = self.op("Gather", [shape, self.const(index, np.int64)], axis=0)
        return self.op("Unsqueeze", [scalar, self.const([0], np.int64)])

    def linear(self, x, n_in, n_out, hint):
        """nn.Linear on [b, s, n_in]: MatMul with W^T stored as [n_in, n_out], Add bias."""
        y = self.op("MatMul", [x, self.weight((n_in, n_out), hint + ".weight")])
        return self.op("Add", [self.bias(n_out, hint + ".bias"), y])

    def conv1d(self, x, n_in, n_out, hint):
        """GPT-2's Conv1D: addmm(bias, x.view(-1, n_in), W).view(x.size()[:-1] + (n_out,))."""
        flat = self.op("Reshape", [x, self.const([-1, n_in], np.int64)])
        y = self.op(
            "Gemm",
            [flat, self.weight((n_in, n_out), hint + ".weight"), self.bias(n_out, hint + ".bias")],
            alpha=1.0,
            beta=1.0,
        )
        leading = self.op(
            "Slice",
            [
                self.op("Shape", [x]),
                self.const([0], np.int64),
                self.const([-1], np.int64),
                self.const([0], np.int64),
            ],
        )
        size_out = self.op("Concat", [leading, self.const([n_out], np.int64)], axis=0)
        return self.op("Reshape", [y, size_out])

    def layer_norm(self, x, eps, hint):
        gamma = self.initializer(
            (1.0 + 0.1 * self.rng.standard_normal(HIDDEN)).astype(np.float32), hint + ".weight"
        )
        beta = self.bias(HIDDEN, hint + ".bias")
        return self.op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=eps)

    def split_heads(self, x, k_transposed=False):
        """[b, s, H] -> [b, heads, s, d] (and -> [b, heads, d, s] for K^T)."""
        shape = self.op(
            "Concat",
            [
                self.dim(x, 0),
                self.dim(x, 1),
                self.const([HEADS], np.int64),
                self.const([HEAD_DIM], np.int64),
            ],
            axis=0,
        )
        y = self.op("Transpose", [self.op("Reshape", [x, shape])], perm=[0, 2, 1, 3])
        return self.op("Transpose", [y], perm=[0, 1, 3, 2]) if k_transposed else y

    def merge_heads(self, x):
        """[b, heads, s, d] -> [b, s, H]."""
        t = self.op("Transpose", [x], perm=[0, 2, 1, 3])
        shape = self.op(
            "Concat",
            [self.dim(t, 0), self.dim(t, 1), self.const([HIDDEN], np.int64)],
            axis=0,
        )
        return self.op("Reshape", [t, shape])

    def gelu_erf(self, x):
        """x * 0.5 * (1 + erf(x / sqrt(2))), as BERT's GELUActivation exports."""
        e = self.op("Erf", [self.op("Div", [x, self.const(1.4142135381698608)])])
        y = self.op("Mul", [x, self.op("Add", [e, self.const(1.0)])])
        return self.op("Mul", [y, self.const(0.5)])

    def gelu_tanh(self, x):
        """0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))): GPT-2's gelu_new."""
        cube = self.op("Pow", [x, self.const(3.0)])
        inner = self.op("Add", [x, self.op("Mul", [self.const(0.044715), cube])])
        t = self.op("Tanh", [self.op("Mul", [self.const(math.sqrt(2.0 / math.pi)), inner])])
        half_x = self.op("Mul", [self.const(0.5), x])
        return self.op("Mul", [half_x, self.op("Add", [self.const(1.0), t])])

    def model(self, name, inputs, outputs, opset):
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.initializers)
        model = helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", opset)],
            producer_name="autofuse-tests",
        )
        model.ir_version = 8 if opset <= 17 else 9
        onnx.checker.check_model(model, full_check=True)
        return model


def hidden_input(name):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", "seq", HIDDEN])


def bert_layer(gelu="erf", seed=1):
    """One BertLayer (post-LN). gelu: "erf" (the Div/Erf chain, opset 17) or "op"
    (the Gelu op, opset 20)."""
    b = ModelBuilder(seed)
    x, mask = "hidden_states", "attention_mask"
    # get_extended_attention_mask: mask[:, None, None, :].to(f32); (1 - m) * -10000
    m = b.op("Unsqueeze", [mask, b.const([1], np.int64)])
    m = b.op("Unsqueeze", [m, b.const([2], np.int64)])
    m = b.op("Cast", [m], to=TensorProto.FLOAT)
    additive = b.op("Mul", [b.op("Sub", [b.const(1.0), m]), b.const(-10000.0)])

    q = b.split_heads(b.linear(x, HIDDEN, HIDDEN, "attention.self.query"))
    k_t = b.split_heads(b.linear(x, HIDDEN, HIDDEN, "attention.self.key"), k_transposed=True)
    v = b.split_heads(b.linear(x, HIDDEN, HIDDEN, "attention.self.value"))
    scores = b.op("Div", [b.op("MatMul", [q, k_t]), b.const(math.sqrt(HEAD_DIM))])
    probs = b.op("Softmax", [b.op("Add", [scores, additive])], axis=-1)
    context = b.merge_heads(b.op("MatMul", [probs, v]))

    attn = b.linear(context, HIDDEN, HIDDEN, "attention.output.dense")
    attn = b.layer_norm(b.op("Add", [attn, x]), 1e-12, "attention.output.LayerNorm")
    h = b.linear(attn, HIDDEN, FFN, "intermediate.dense")
    if gelu == "erf":
        h, opset = b.gelu_erf(h), 17
    else:
        h, opset = b.op("Gelu", [h]), 20
    out = b.linear(h, FFN, HIDDEN, "output.dense")
    out = b.layer_norm(b.op("Add", [out, attn]), 1e-12, "output.LayerNorm")
    b.nodes[-1].output[0] = "last_hidden_state"  # the exporter names graph outputs directly
    return b.model(
        f"bert_layer_{gelu}",
        [
            hidden_input(x),
            helper.make_tensor_value_info(mask, TensorProto.INT64, ["batch", "seq"]),
        ],
        [hidden_input("last_hidden_state")],
        opset,
    )


def causal_mask_sliced_buffer(b, q, k_t, scores):
    """GPT2Attention._attn: bias[:, :, k - q : k, :k] of the registered tril buffer,
    then where(causal_mask, scores, finfo(f32).min)."""
    causal = np.tril(np.ones((MAX_POSITIONS, MAX_POSITIONS), dtype=bool))[None, None]
    buffer = b.initializer(causal, "attn.bias")
    query_length = b.dim(q, 2)
    key_length = b.dim(k_t, 3)
    rows = b.op(
        "Slice",
        [
            buffer,
            b.op("Sub", [key_length, query_length]),
            key_length,
            b.const([2], np.int64),
            b.const([1], np.int64),
        ],
    )
    mask = b.op(
        "Slice",
        [rows, b.const([0], np.int64), key_length, b.const([3], np.int64), b.const([1], np.int64)],
    )
    return b.op("Where", [mask, scores, b.const(np.finfo(np.float32).min)])


def causal_mask_from_range(b, x, scores):
    """AttentionMaskConverter._make_causal_mask (transformers 4.3x, as Llama, OPT and
    BART export): full((seq, seq), finfo.min), masked_fill(arange < (arange + 1).view(seq,
    1), 0), [None, None].expand(batch, 1, seq, seq), added to the scores."""
    seq = b.dim(x, 1)
    seq_scalar = b.op("Gather", [b.op("Shape", [x]), b.const(1, np.int64)], axis=0)
    value = numpy_helper.from_array(np.array([np.finfo(np.float32).min], np.float32))
    full = b.op("ConstantOfShape", [b.op("Concat", [seq, seq], axis=0)], value=value)
    cond = b.op("Range", [b.const(0, np.int64), seq_scalar, b.const(1, np.int64)])
    column = b.op(
        "Reshape",
        [
            b.op("Add", [cond, b.const(1, np.int64)]),
            b.op("Concat", [seq, b.const([1], np.int64)], axis=0),
        ],
    )
    mask = b.op("Where", [b.op("Less", [cond, column]), b.const(0.0), full])
    mask = b.op("Unsqueeze", [mask, b.const([0, 1], np.int64)])
    shape = b.op("Concat", [b.dim(x, 0), b.const([1], np.int64), seq, seq], axis=0)
    return b.op("Add", [scores, b.op("Expand", [mask, shape])])


def gpt2_block(mask="buffer", seed=2):
    """One GPT2Block (pre-LN, eager attention). mask: "buffer" (GPT-2's own sliced
    tril buffer) or "range" (the causal mask built from Range at run time)."""
    b = ModelBuilder(seed)
    x = "hidden_states"
    h = b.layer_norm(x, 1e-5, "ln_1")
    qkv = b.conv1d(h, HIDDEN, 3 * HIDDEN, "attn.c_attn")
    q, k, v = b.op("Split", [qkv, b.const([HIDDEN] * 3, np.int64)], outputs=3, axis=2)
    q, k_t, v = b.split_heads(q), b.split_heads(k, k_transposed=True), b.split_heads(v)
    scores = b.op("MatMul", [q, k_t])
    scores = b.op("Div", [scores, b.const(math.sqrt(HEAD_DIM))])
    if mask == "buffer":
        scores = causal_mask_sliced_buffer(b, q, k_t, scores)
    else:
        scores = causal_mask_from_range(b, x, scores)
    probs = b.op("Softmax", [scores], axis=-1)
    context = b.merge_heads(b.op("MatMul", [probs, v]))
    attn = b.conv1d(context, HIDDEN, HIDDEN, "attn.c_proj")
    x1 = b.op("Add", [attn, x])

    h = b.layer_norm(x1, 1e-5, "ln_2")
    h = b.gelu_tanh(b.conv1d(h, HIDDEN, FFN, "mlp.c_fc"))
    h = b.conv1d(h, FFN, HIDDEN, "mlp.c_proj")
    b.op("Add", [x1, h])
    b.nodes[-1].output[0] = "last_hidden_state"
    name = "gpt2_block" if mask == "buffer" else "gpt2_block_range_mask"
    return b.model(name, [hidden_input(x)], [hidden_input("last_hidden_state")], 17)


def bert_inputs(batch, seq, rng):
    """hidden_states ~ N(0, 1); attention_mask right-padded, every row keeps >= 1 token."""
    hidden = rng.standard_normal((batch, seq, HIDDEN)).astype(np.float32)
    lengths = rng.integers(1, seq + 1, size=batch)
    lengths[0] = seq  # one row unpadded
    mask = (np.arange(seq)[None, :] < lengths[:, None]).astype(np.int64)
    return {"hidden_states": hidden, "attention_mask": mask}


def gpt2_inputs(batch, seq, rng):
    return {"hidden_states": rng.standard_normal((batch, seq, HIDDEN)).astype(np.float32)}


# name -> (builder, input generator)
MODELS = {
    "bert_layer_erf": (lambda: bert_layer("erf"), bert_inputs),
    "bert_layer_gelu_op": (lambda: bert_layer("op"), bert_inputs),
    "gpt2_block": (lambda: gpt2_block("buffer"), gpt2_inputs),
    "gpt2_block_range_mask": (lambda: gpt2_block("range"), gpt2_inputs),
}
