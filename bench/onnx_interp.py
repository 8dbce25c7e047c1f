"""Turns an ONNX graph into a PyTorch or JAX function, node by node, so
torch eager, torch.compile and jax.jit run the very graph autofuse and ONNX
Runtime run. Each ONNX op maps to the framework call a model author writes
(LayerNormalization -> F.layer_norm, Softmax -> softmax, Gather -> indexing),
and torch.compile / jax.jit trace through the interpreter, so they see the
same op graph as a hand-written module.

Shape computations (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as
exporters write them) run on Python tuples: they are static under tracing,
as x.shape is in the hand-written model. Int64 constants of rank <= 1 are
such tuples too.

Only the ops bench/models.py and the BERT layer use are covered; anything
else raises NotImplementedError naming the op.
"""

import numpy as np
from onnx import numpy_helper

ONNX_FLOAT = {1: "float32", 16: "bfloat16", 7: "int64", 9: "bool"}


def _attrs(node):
    from onnx import helper

    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _to_array(tensor):
    """numpy_helper.to_array, with bf16 decoded here as f32 values (onnx
    1.17's to_array gives raw bits, and wrong ones for 0-d raw_data)."""
    if tensor.data_type == 16:  # BFLOAT16
        if tensor.raw_data:
            bits = np.frombuffer(tensor.raw_data, np.uint16)
        else:
            bits = np.asarray(tensor.int32_data, np.uint32).astype(np.uint16)
        wide = bits.astype(np.uint32) << 16
        return wide.view(np.float32).reshape(tuple(tensor.dims))
    return numpy_helper.to_array(tensor)


def _is_shape(v):
    return isinstance(v, tuple)


class Interpreter:
    """ops: TorchOps or JaxOps. __call__(*inputs) in graph-input order returns
    the outputs as a tuple."""

    def __init__(self, model, ops):
        self.graph = model.graph
        self.ops = ops
        self.inputs = [vi.name for vi in self.graph.input]
        self.outputs = [vi.name for vi in self.graph.output]
        arrays = {t.name: _to_array(t) for t in self.graph.initializer}
        # A plan of plain Python values: torch.compile traces __call__, and
        # protobuf objects there would break its graph.
        self.plan = []
        for node in self.graph.node:
            attrs = _attrs(node)
            if node.op_type == "Constant":
                arrays[node.output[0]] = _to_array(attrs["value"])
                continue
            fn = getattr(self, "op_" + node.op_type, None)
            if fn is None:
                raise NotImplementedError(f"onnx_interp: op {node.op_type}")
            attrs = {k: tuple(v) if isinstance(v, list) else v for k, v in attrs.items()}
            self.plan.append((fn, tuple(node.input), attrs, tuple(node.output)))
        self.weights = {}
        for name, array in arrays.items():
            s = self._static(array)
            self.weights[name] = s if s is not None else ops.const(array)

    def _static(self, array):
        """Int constants of rank <= 1 are shape values (tuples / ints)."""
        if array.dtype == np.int64 and array.ndim <= 1:
            return tuple(int(v) for v in array) if array.ndim == 1 else int(array)
        return None

    def __call__(self, *args):
        env = dict(self.weights)
        env.update(zip(self.inputs, args))
        for fn, ins, attrs, outs in self.plan:
            res = fn([env[n] if n else None for n in ins], attrs)
            if not isinstance(res, list):
                res = [res]
            env.update(zip(outs, res))
        return tuple(env[n] for n in self.outputs)

    # --- elementwise -----------------------------------------------------------

    def _bin(f):
        def op(self, ins, attrs):
            a, b = ins
            if _is_shape(a) or _is_shape(b) or isinstance(a, int):
                return self._shape_arith(f, a, b)
            return f(a, b)

        return op

    op_Add = _bin(lambda a, b: a + b)
    op_Sub = _bin(lambda a, b: a - b)
    op_Mul = _bin(lambda a, b: a * b)
    op_Div = _bin(lambda a, b: a / b)

    def _shape_arith(self, f, a, b):
        a = a if _is_shape(a) else (a,)
        b = b if _is_shape(b) else (b,)
        n = max(len(a), len(b))
        a, b = a * (n // len(a)), b * (n // len(b))
        return tuple(int(f(x, y)) for x, y in zip(a, b))

    def op_Max(self, ins, attrs):
        out = ins[0]
        for x in ins[1:]:
            out = self.ops.maximum(out, x)
        return out

    def op_Min(self, ins, attrs):
        out = ins[0]
        for x in ins[1:]:
            out = self.ops.minimum(out, x)
        return out

    def _unary(name):
        return lambda self, ins, attrs: getattr(self.ops, name)(ins[0])

    op_Abs, op_Neg, op_Relu, op_Sigmoid = _unary("abs"), _unary("neg"), _unary("relu"), _unary("sigmoid")
    op_Sqrt, op_Reciprocal, op_Exp, op_Erf = _unary("sqrt"), _unary("reciprocal"), _unary("exp"), _unary("erf")
    op_Tanh = _unary("tanh")

    def op_Pow(self, ins, attrs):
        return ins[0] ** ins[1]

    def op_Cast(self, ins, attrs):
        return self.ops.cast(ins[0], ONNX_FLOAT[attrs["to"]])

    def op_Where(self, ins, attrs):
        return self.ops.where(*ins)

    # --- reductions and normalizations --------------------------------------------

    def _axes(self, ins, attrs, rank):
        axes = attrs.get("axes")
        if axes is None and len(ins) > 1 and ins[1] is not None:
            axes = ins[1]
        axes = tuple(range(rank)) if axes is None else tuple(a % rank for a in axes)
        return axes, bool(attrs.get("keepdims", 1))

    def _reduce(name):
        def op(self, ins, attrs):
            axes, keep = self._axes(ins, attrs, self.ops.rank(ins[0]))
            return getattr(self.ops, name)(ins[0], axes, keep)

        return op

    op_ReduceMean, op_ReduceSum, op_ReduceMax = _reduce("mean"), _reduce("sum"), _reduce("amax")

    def op_Softmax(self, ins, attrs):
        return self.ops.softmax(ins[0], attrs.get("axis", -1))

    def op_LayerNormalization(self, ins, attrs):
        x, gamma, beta = (ins + [None])[:3]
        assert attrs.get("axis", -1) in (-1, self.ops.rank(x) - 1), "last-axis LayerNorm only"
        return self.ops.layer_norm(x, gamma, beta, attrs.get("epsilon", 1e-5))

    # --- data movement and shapes ------------------------------------------------

    def op_Transpose(self, ins, attrs):
        return self.ops.transpose(ins[0], tuple(attrs["perm"]))

    def op_Concat(self, ins, attrs):
        if all(_is_shape(x) or isinstance(x, int) for x in ins):
            return tuple(v for x in ins for v in (x if _is_shape(x) else (x,)))
        return self.ops.concat(ins, attrs["axis"])

    def op_Split(self, ins, attrs):
        x, sizes = ins[0], ins[1]
        axis = attrs.get("axis", 0) % self.ops.rank(x)
        out, start = [], 0
        for n in sizes:
            out.append(self.ops.slice(x, axis, start, start + n))
            start += n
        return out

    def op_Slice(self, ins, attrs):
        x, starts, ends = ins[0], ins[1], ins[2]
        axes = ins[3] if len(ins) > 3 and ins[3] is not None else tuple(range(len(starts)))
        if len(ins) > 4 and ins[4] is not None:
            assert all(s == 1 for s in ins[4]), "unit steps only"
        if _is_shape(x):
            assert tuple(axes) == (0,)
            return x[starts[0] : ends[0]]
        for a, s, e in zip(axes, starts, ends):
            x = self.ops.slice(x, a % self.ops.rank(x), s, e)
        return x

    def op_Gather(self, ins, attrs):
        data, idx = ins
        if _is_shape(data):
            return tuple(data[i] for i in idx) if _is_shape(idx) else data[idx]
        assert attrs.get("axis", 0) == 0, "axis-0 Gather only"
        return self.ops.take_rows(data, idx)

    def op_Shape(self, ins, attrs):
        return tuple(self.ops.shape(ins[0]))

    def op_Unsqueeze(self, ins, attrs):
        x, axes = ins
        if isinstance(x, int):
            return (x,)
        for a in sorted(a % (self.ops.rank(x) + len(axes)) for a in axes):
            x = self.ops.unsqueeze(x, a)
        return x

    def op_Reshape(self, ins, attrs):
        x, shape = ins
        dims = self.ops.shape(x)
        shape = tuple(dims[i] if s == 0 else s for i, s in enumerate(shape))
        return self.ops.reshape(x, shape)

    def op_MatMul(self, ins, attrs):
        return self.ops.matmul(*ins)


class TorchOps:
    def __init__(self, torch, dtype):
        self.t = torch
        self.F = torch.nn.functional
        self.dtype = dtype  # the model's float dtype (constants follow it)

    def const(self, a):
        t = self.t.from_numpy(np.array(a, copy=True))  # (ascontiguousarray makes 0-d 1-d)
        return t.to(self.dtype) if a.dtype.kind == "f" else t

    def rank(self, x):
        return x.dim()

    def shape(self, x):
        return tuple(x.shape)

    maximum = property(lambda s: s.t.maximum)
    minimum = property(lambda s: s.t.minimum)
    abs = property(lambda s: s.t.abs)
    neg = property(lambda s: s.t.neg)
    relu = property(lambda s: s.t.relu)
    sigmoid = property(lambda s: s.t.sigmoid)
    sqrt = property(lambda s: s.t.sqrt)
    reciprocal = property(lambda s: s.t.reciprocal)
    exp = property(lambda s: s.t.exp)
    erf = property(lambda s: s.t.erf)
    tanh = property(lambda s: s.t.tanh)
    where = property(lambda s: s.t.where)
    matmul = property(lambda s: s.t.matmul)

    def cast(self, x, name):
        return x.to(getattr(self.t, {"float32": "float32", "bfloat16": "bfloat16"}.get(name, name)))

    def mean(self, x, axes, keep):
        return x.mean(dim=axes, keepdim=keep)

    def sum(self, x, axes, keep):
        return x.sum(dim=axes, keepdim=keep)

    def amax(self, x, axes, keep):
        return x.amax(dim=axes, keepdim=keep)

    def softmax(self, x, axis):
        return self.t.softmax(x, dim=axis)

    def layer_norm(self, x, gamma, beta, eps):
        return self.F.layer_norm(x, (x.shape[-1],), gamma, beta, eps)

    def transpose(self, x, perm):
        return x.permute(perm)

    def concat(self, xs, axis):
        return self.t.cat(xs, dim=axis)

    def slice(self, x, axis, start, end):
        n = x.shape[axis]
        start, end = max(0, start + n if start < 0 else start), min(n, end + n if end < 0 else end)
        return x.narrow(axis, start, end - start)

    def take_rows(self, data, idx):
        return data[idx]

    def unsqueeze(self, x, axis):
        return x.unsqueeze(axis)

    def reshape(self, x, shape):
        return x.reshape(shape)


class JaxOps:
    def __init__(self, jnp, jax, dtype):
        self.np = jnp
        self.jax = jax
        self.dtype = dtype

    def const(self, a):
        return self.np.asarray(a, dtype=self.dtype) if a.dtype.kind == "f" else self.np.asarray(a)

    def rank(self, x):
        return x.ndim

    def shape(self, x):
        return tuple(x.shape)

    maximum = property(lambda s: s.np.maximum)
    minimum = property(lambda s: s.np.minimum)
    abs = property(lambda s: s.np.abs)
    neg = property(lambda s: s.np.negative)
    sqrt = property(lambda s: s.np.sqrt)
    reciprocal = property(lambda s: s.np.reciprocal)
    exp = property(lambda s: s.np.exp)
    tanh = property(lambda s: s.np.tanh)
    where = property(lambda s: s.np.where)
    matmul = property(lambda s: s.np.matmul)

    def relu(self, x):
        return self.jax.nn.relu(x)

    def sigmoid(self, x):
        return self.jax.nn.sigmoid(x)

    def erf(self, x):
        return self.jax.scipy.special.erf(x)

    def cast(self, x, name):
        return x.astype(name)

    def mean(self, x, axes, keep):
        return self.np.mean(x, axis=axes, keepdims=keep)

    def sum(self, x, axes, keep):
        return self.np.sum(x, axis=axes, keepdims=keep)

    def amax(self, x, axes, keep):
        return self.np.max(x, axis=axes, keepdims=keep)

    def softmax(self, x, axis):
        return self.jax.nn.softmax(x, axis=axis)

    def layer_norm(self, x, gamma, beta, eps):
        # As flax.linen.LayerNorm computes it (statistics in f32 for bf16 inputs).
        xf = x.astype(self.np.float32)
        mean = self.np.mean(xf, axis=-1, keepdims=True)
        var = self.np.mean(self.np.square(xf - mean), axis=-1, keepdims=True)
        y = (xf - mean) * self.jax.lax.rsqrt(var + eps)
        y = y * gamma.astype(self.np.float32) + beta.astype(self.np.float32)
        return y.astype(x.dtype)

    def transpose(self, x, perm):
        return self.np.transpose(x, perm)

    def concat(self, xs, axis):
        return self.np.concatenate(xs, axis=axis)

    def slice(self, x, axis, start, end):
        n = x.shape[axis]
        start, end = max(0, start + n if start < 0 else start), min(n, end + n if end < 0 else end)
        return self.jax.lax.slice_in_dim(x, start, end, axis=axis)

    def take_rows(self, data, idx):
        return self.np.take(data, idx, axis=0, mode="clip")

    def unsqueeze(self, x, axis):
        return self.np.expand_dims(x, axis)

    def reshape(self, x, shape):
        return self.np.reshape(x, shape)
