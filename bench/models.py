"""The benchmark suite as ONNX models: the 11 coverage patterns of
examples/patterns/ (docs/patterns.md) written with onnx.helper the way an
exporter writes them (LayerNormalization and Softmax as ONNX ops, the rest as
primitive ops), their shapes, their inputs, and the BERT layer of
tests/python/transformer_models.py for the compile-time table.

Every runner -- autofuse, ONNX Runtime, and the torch/jax functions that
bench/onnx_interp.py builds from the same nodes -- runs the same file.
Symbols are dim_params with the names of the .af files (B, S, V, N, D), so
`--shape B=4,S=128` means the same thing for both forms.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

OPSET = 17
ONNX_DTYPE = {"f32": TensorProto.FLOAT, "bf16": TensorProto.BFLOAT16}

# name -> (small, medium, large) symbol bindings. Small: at most 64 rows of
# the pattern's token/row axis (the per-call cost dominates); medium: a few
# MiB (L2/L3); large: >= 64 MiB moved in f32 (scripts/bench-patterns.sh's
# shapes). bert_embeddings counts its word table as read whole (as
# `autofuse bench` does), so V stays 4096.
SHAPES = {
    "skip_layernorm": ("B=1,S=64", "B=4,S=128", "B=16,S=512"),
    "rmsnorm": ("B=1,S=64", "B=4,S=128", "B=32,S=512"),
    "softmax_mask": ("B=1,S=16", "B=2,S=128", "B=8,S=384"),
    "swiglu": ("B=1,S=64", "B=4,S=128", "B=16,S=512"),
    "rotary": ("B=1,S=64", "B=4,S=128", "B=16,S=1024"),
    "attention_transpose": ("B=1,S=64", "B=4,S=128", "B=16,S=1024"),
    "bert_embeddings": ("B=1,S=64,V=4096", "B=4,S=128,V=4096", "B=64,S=512,V=4096"),
    "dlrm_concat": ("B=64", "B=2048", "B=32768"),
    "batchnorm_stats": ("N=64", "N=4096", "N=65536"),
    "mse": ("N=64,D=1024", "N=1024,D=1024", "N=16384,D=1024"),
    "chain30": ("N=64,D=1024", "N=1024,D=1024", "N=16384,D=1024"),
}
SIZES = ("small", "medium", "large")

# bf16 where a bf16 model would run it: mixed-precision training keeps
# losses and batch-norm statistics in f32 (torch.autocast runs mse_loss and
# batch_norm in f32), so those two are f32 only.
BF16_SKIPPED = {
    "mse": "a loss: autocast computes it in f32",
    "batchnorm_stats": "batch-norm statistics: autocast keeps them in f32",
}


def parse_shape(text):
    return {k: int(v) for k, v in (item.split("=") for item in text.split(","))}


class Builder:
    def __init__(self, dtype):
        self.dtype = dtype
        self.nodes, self.inputs, self.outputs = [], [], []
        self.count = 0

    def input(self, name, dims, elem=None):
        elem = ONNX_DTYPE[self.dtype] if elem is None else elem
        self.inputs.append(helper.make_tensor_value_info(name, elem, dims))
        return name

    def op(self, op_type, inputs, outputs=1, **attrs):
        self.count += 1
        names = [f"{op_type.lower()}_{self.count}_{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, names, **attrs))
        return names[0] if outputs == 1 else names

    def const(self, value):
        """A scalar of the model's float type."""
        if self.dtype == "bf16":
            t = bf16_tensor_proto("c", np.array(value, np.float32))
        else:
            t = helper.make_tensor("c", TensorProto.FLOAT, [], [float(value)])
        return self.op("Constant", [], value=t)

    def ints(self, values):
        t = helper.make_tensor("c", TensorProto.INT64, [len(values)], list(values))
        return self.op("Constant", [], value=t)

    def rename(self, value, name):
        """Renames a value everywhere (graph outputs get readable names)."""
        for node in self.nodes:
            node.input[:] = [name if v == value else v for v in node.input]
            node.output[:] = [name if v == value else v for v in node.output]
        return name

    def model(self, name):
        graph = helper.make_graph(self.nodes, name, self.inputs, self.outputs)
        model = helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", OPSET)],
            producer_name="autofuse-bench",
        )
        model.ir_version = 8
        onnx.checker.check_model(model, full_check=True)
        return model


def finish(b, name, outs):
    """outs: [(value, output name, dims)]; renames and declares the outputs."""
    for value, out_name, dims in outs:
        b.rename(value, out_name)
        b.outputs.append(helper.make_tensor_value_info(out_name, ONNX_DTYPE[b.dtype], dims))
    return b.model(name)


def skip_layernorm(b):
    x, skip = b.input("x", ["B", "S", 768]), b.input("skip", ["B", "S", 768])
    bias, gamma, beta = (b.input(n, [768]) for n in ("bias", "gamma", "beta"))
    h = b.op("Add", [b.op("Add", [x, skip]), bias])
    y = b.op("LayerNormalization", [h, gamma, beta], axis=-1, epsilon=1e-12)
    return [(y, "y", ["B", "S", 768]), (h, "h", ["B", "S", 768])]


def rmsnorm(b):
    x, gamma = b.input("x", ["B", "S", 1024]), b.input("gamma", [1024])
    ms = b.op("ReduceMean", [b.op("Mul", [x, x])], axes=[2], keepdims=1)
    inv = b.op("Reciprocal", [b.op("Sqrt", [b.op("Add", [ms, b.const(1e-6)])])])
    y = b.op("Mul", [b.op("Mul", [x, inv]), gamma])
    return [(y, "y", ["B", "S", 1024])]


def softmax_mask(b):
    scores, mask = b.input("scores", ["B", 12, "S", "S"]), b.input("mask", ["B", 1, 1, "S"])
    z = b.op("Add", [b.op("Mul", [scores, b.const(0.125)]), mask])
    y = b.op("Softmax", [z], axis=-1)
    return [(y, "y", ["B", 12, "S", "S"])]


def swiglu(b):
    x = b.input("x", ["B", "S", 2048])
    gate, up = b.op("Split", [x, b.ints([1024, 1024])], outputs=2, axis=2)
    y = b.op("Mul", [b.op("Mul", [gate, b.op("Sigmoid", [gate])]), up])
    return [(y, "y", ["B", "S", 1024])]


def rotary(b):
    x = b.input("x", ["B", "S", 12, 64])
    cos, sin = b.input("cos", ["S", 1, 64]), b.input("sin", ["S", 1, 64])
    axis = b.ints([3])
    x1 = b.op("Slice", [x, b.ints([0]), b.ints([32]), axis])
    x2 = b.op("Slice", [x, b.ints([32]), b.ints([64]), axis])
    rot = b.op("Concat", [b.op("Neg", [x2]), x1], axis=3)
    y = b.op("Add", [b.op("Mul", [x, cos]), b.op("Mul", [rot, sin])])
    return [(y, "y", ["B", "S", 12, 64])]


def attention_transpose(b):
    x = b.input("x", ["B", "S", 12, 64])
    y = b.op("Mul", [b.op("Transpose", [x], perm=[0, 2, 1, 3]), b.const(0.125)])
    return [(y, "y", ["B", 12, "S", 64])]


def bert_embeddings(b):
    i64 = TensorProto.INT64
    ids, pos_ids = b.input("ids", ["B", "S"], i64), b.input("pos_ids", ["S"], i64)
    type_ids = b.input("type_ids", ["B", "S"], i64)
    word, pos = b.input("word", ["V", 768]), b.input("pos", [512, 768])
    token_type = b.input("token_type", [2, 768])
    gamma, beta = b.input("gamma", [768]), b.input("beta", [768])
    we = b.op("Gather", [word, ids], axis=0)
    pe = b.op("Gather", [pos, pos_ids], axis=0)
    te = b.op("Gather", [token_type, type_ids], axis=0)
    e = b.op("Add", [b.op("Add", [we, pe]), te])
    y = b.op("LayerNormalization", [e, gamma, beta], axis=-1, epsilon=1e-12)
    return [(y, "y", ["B", "S", 768])]


def dlrm_concat(b):
    es = [b.input(f"e{i}", ["B", 16]) for i in range(26)]
    z = b.op("Relu", [b.op("Mul", [b.op("Concat", es, axis=1), b.const(0.5)])])
    s = b.op("ReduceSum", [z, b.ints([1])], keepdims=0)
    return [(z, "z", ["B", 416]), (s, "s", ["B"])]


def batchnorm_stats(b):
    x, gamma, beta = b.input("x", ["N", 256]), b.input("gamma", [256]), b.input("beta", [256])
    mean = b.op("ReduceMean", [x], axes=[0], keepdims=1)
    xc = b.op("Sub", [x, mean])
    var = b.op("ReduceMean", [b.op("Mul", [xc, xc])], axes=[0], keepdims=1)
    inv = b.op("Reciprocal", [b.op("Sqrt", [b.op("Add", [var, b.const(1e-5)])])])
    y = b.op("Add", [b.op("Mul", [b.op("Mul", [xc, inv]), gamma]), beta])
    return [(y, "y", ["N", 256]), (mean, "mean", [1, 256]), (var, "var", [1, 256])]


def mse(b):
    pred, target = b.input("pred", ["N", "D"]), b.input("target", ["N", "D"])
    d = b.op("Sub", [pred, target])
    loss = b.op("ReduceMean", [b.op("Mul", [d, d])], axes=[0, 1], keepdims=0)
    return [(loss, "loss", [])]


def chain30(b):
    x, bias = b.input("x", ["N", "D"]), b.input("bias", ["D"])
    c1, c2, c4, c05, cm2 = (b.const(v) for v in (1, 2, 4, 0.5, -2))

    def op(name, *args):
        return b.op(name, list(args))

    t = op("Sub", op("Add", op("Mul", x, c2), c1), x)
    t = op("Min", op("Max", op("Abs", t), bias), c4)
    t = op("Relu", op("Neg", op("Sub", op("Mul", t, t), c1)))
    t = op("Abs", op("Sub", op("Mul", op("Add", t, x), c05), bias))
    t = op("Mul", op("Reciprocal", op("Add", t, c1)), x)
    t = op("Min", op("Max", t, cm2), c2)
    t = op("Abs", op("Neg", op("Sub", op("Add", op("Mul", t, t), bias), c05)))
    t = op("Add", op("Mul", op("Sqrt", t), x), c1)
    y = op("Relu", op("Sub", op("Div", t, c2), bias))
    return [(y, "y", ["N", "D"])]


PATTERNS = {
    f.__name__: f
    for f in (
        skip_layernorm,
        rmsnorm,
        softmax_mask,
        swiglu,
        rotary,
        attention_transpose,
        bert_embeddings,
        dlrm_concat,
        batchnorm_stats,
        mse,
        chain30,
    )
}
assert list(PATTERNS) == list(SHAPES)


def build(pattern, dtype):
    b = Builder(dtype)
    return finish(b, pattern, PATTERNS[pattern](b))


def write_model(pattern, dtype, directory):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{pattern}_{dtype}.onnx")
    onnx.save(build(pattern, dtype), path)
    return path


def bert_layer_model(directory):
    """The BERT encoder layer of tests/python/transformer_models.py (dims batch, seq)."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "tests", "python"))
    import transformer_models  # noqa: E402

    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "bert_layer_f32.onnx")
    onnx.save(transformer_models.bert_layer("erf"), path)
    return path


# --- inputs -------------------------------------------------------------------


def _dims(value_info, binding):
    return [
        d.dim_value if d.HasField("dim_value") else binding[d.dim_param]
        for d in value_info.type.tensor_type.shape.dim
    ]


def make_inputs(model, binding, seed=0):
    """Seeded inputs in f32/int64 (bf16 models get their f32 values rounded by
    to_bf16_bits). Integer inputs are indices into the gathered tables: in
    range and non-negative. Float inputs ~ U(-1, 1)."""
    rng = np.random.default_rng(seed)
    tables = {"ids": binding.get("V", 1), "pos_ids": 512, "type_ids": 2}
    out = {}
    for vi in model.graph.input:
        shape = _dims(vi, binding)
        if vi.type.tensor_type.elem_type == TensorProto.INT64:
            out[vi.name] = rng.integers(0, tables.get(vi.name, 1), size=shape, dtype=np.int64)
        else:
            out[vi.name] = rng.uniform(-1, 1, size=shape).astype(np.float32)
    if "mask" in out:  # an additive padding mask: 0 or -10000
        out["mask"] = np.where(out["mask"] > 0.5, -10000.0, 0.0).astype(np.float32)
    return out


def round_to_bf16(a):
    """f32 values rounded to the nearest bf16 (returned as f32)."""
    bits = a.astype(np.float32).view(np.uint32)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def bf16_tensor_proto(name, a):
    """An ONNX TensorProto of bf16 (autofuse reads bf16 inputs from .pb)."""
    bits = (round_to_bf16(a).view(np.uint32) >> 16).astype(np.uint16)
    return helper.make_tensor(name, TensorProto.BFLOAT16, list(a.shape), bits.tobytes(), raw=True)


def bytes_moved(model, binding, dtype):
    """Inputs read once plus outputs written once, as `autofuse bench` counts."""
    size = {"f32": 4, "bf16": 2}[dtype]
    total = 0
    for vi in list(model.graph.input) + list(model.graph.output):
        n = int(np.prod(_dims(vi, binding), dtype=np.int64))
        is_int = vi.type.tensor_type.elem_type == TensorProto.INT64
        total += n * (8 if is_int else size)
    return total
