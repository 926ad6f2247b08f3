#!/usr/bin/env python3
"""A small float64 numpy interpreter for the ONNX operators that models.py
emits, following the ONNX operator semantics (opsets 13-18).

Every floating tensor is held as float64, Cast to FLOAT included, so that a
graph can be compared with a float64 reference to tight tolerances.

    onnx_numpy.py MODEL.onnx REF.npz [--rtol 1e-6]

runs MODEL on the inputs stored in REF.npz and compares its outputs with the
arrays of the same names there.  As a module: run(model, feeds) -> {name: array}.
"""

import argparse
import functools
import math
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FLOATS = {TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16}
CAST = {TensorProto.INT64: np.int64, TensorProto.INT32: np.int32,
        TensorProto.BOOL: np.bool_, TensorProto.UINT8: np.uint8, TensorProto.INT8: np.int8}


def _load(tensor):
    a = numpy_helper.to_array(tensor)
    return a.astype(np.float64) if a.dtype.kind == "f" else a


def _axes(x, axes):
    return [int(a) + x.ndim if a < 0 else int(a) for a in axes]


def _binary(fn):
    return lambda node, a, b: fn(a, b)


def _div(node, a, b):
    if a.dtype.kind in "iu":          # integer Div truncates toward zero
        q = np.abs(a) // np.abs(b)
        return (q * np.sign(a) * np.sign(b)).astype(np.result_type(a, b))
    return a / b


def _gather(node, data, indices, axis=0):
    axis = axis + data.ndim if axis < 0 else axis
    idx = np.where(indices < 0, indices + data.shape[axis], indices)
    return np.take(data, idx, axis=axis)


def _slice(node, data, starts, ends, axes=None, steps=None):
    axes = range(len(starts)) if axes is None else _axes(data, axes)
    steps = [1] * len(starts) if steps is None else steps
    index = [slice(None)] * data.ndim
    for a, s, e, st in zip(axes, starts, ends, steps):
        index[a] = slice(int(s), int(e), int(st))   # Python clamping == ONNX clamping
    return data[tuple(index)]


def _reshape(node, data, shape, allowzero=0):
    shape = [int(d) for d in shape]
    if not allowzero:
        shape = [data.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return data.reshape(shape)


def _shape(node, data, start=0, end=None):
    return np.array(data.shape[start:end], dtype=np.int64)


def _unsqueeze(node, data, axes):
    out_rank = data.ndim + len(axes)
    shape = list(data.shape)
    for a in sorted(int(a) + out_rank if a < 0 else int(a) for a in axes):
        shape.insert(a, 1)
    return data.reshape(shape)


def _squeeze(node, data, axes=None):
    return np.squeeze(data, axis=None if axes is None else tuple(_axes(data, axes)))


def _split(node, data, split=None, axis=0, num_outputs=None):
    n = len(node.output)
    if split is None:
        size = -(-data.shape[axis] // n)
        split = [min(size, data.shape[axis] - i * size) for i in range(n)]
    cuts = np.cumsum(split)[:-1]
    return np.split(data, cuts, axis=axis)


def _reduce_mean(node, data, axes=None, keepdims=1, noop_with_empty_axes=0):
    if axes is None or len(axes) == 0:
        if noop_with_empty_axes:
            return data
        axes = range(data.ndim)
    return data.mean(axis=tuple(_axes(data, axes)), keepdims=bool(keepdims))


def _softmax(node, x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _layer_norm(node, x, scale, bias=None, axis=-1, epsilon=1e-5, stash_type=1):
    axes = tuple(range(axis + x.ndim if axis < 0 else axis, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + epsilon) * scale
    return y if bias is None else y + bias


def _gemm(node, a, b, c=None, alpha=1.0, beta=1.0, transA=0, transB=0):
    y = alpha * ((a.T if transA else a) @ (b.T if transB else b))
    return y if c is None else y + beta * c


def _cast(node, x, to):
    if to in FLOATS:
        return x.astype(np.float64)
    with np.errstate(invalid="ignore"):     # -inf to an integer: unspecified
        return x.astype(CAST[to])


def _constant(node, value=None, value_float=None, value_floats=None, value_int=None,
              value_ints=None):
    if value is not None:
        return _load(value)
    if value_float is not None:
        return np.array(value_float, np.float64)
    if value_floats is not None:
        return np.array(value_floats, np.float64)
    if value_int is not None:
        return np.array(value_int, np.int64)
    return np.array(value_ints, np.int64)


def _constant_of_shape(node, shape, value=None):
    fill = _load(value) if value is not None else np.zeros(1, np.float64)
    return np.full([int(d) for d in shape], fill.reshape(()), dtype=fill.dtype)


def _expand(node, x, shape):
    return np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(int(d) for d in shape))).copy()


def _range(node, start, limit, delta):
    return np.arange(start, limit, delta, dtype=start.dtype)


def _trilu(node, x, k=None, upper=1):
    k = 0 if k is None else int(k)
    return np.triu(x, k) if upper else np.tril(x, k)


def _conv(node, x, w, b=None, strides=None, pads=None, dilations=None, group=1,
          kernel_shape=None, auto_pad="NOTSET"):
    """Conv with explicit pads, group 1, no dilation: one product of every
    kernel tap's strided window."""
    k = w.shape[2:]
    n = len(k)
    strides = strides or [1] * n
    pads = pads or [0] * 2 * n
    if group != 1 or any(d != 1 for d in (dilations or [])) or auto_pad not in (
            "NOTSET", b"NOTSET"):
        raise NotImplementedError(f"Conv ({node.name}): groups, dilations, auto_pad")
    x = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[i + n]) for i in range(n)])
    out = [(x.shape[2 + i] - k[i]) // strides[i] + 1 for i in range(n)]
    y = np.zeros((x.shape[0], w.shape[0], *out))
    for tap in np.ndindex(*k):
        window = x[(slice(None), slice(None)) + tuple(
            slice(tap[i], tap[i] + strides[i] * (out[i] - 1) + 1, strides[i])
            for i in range(n))]
        y += np.einsum("bc...,oc->bo...", window, w[(slice(None), slice(None)) + tap])
    if b is not None:
        y += b.reshape((1, -1) + (1,) * n)
    return y


def _cumsum(node, x, axis, exclusive=0, reverse=0):
    axis = int(np.asarray(axis).reshape(-1)[0])
    if reverse:
        x = np.flip(x, axis)
    y = np.cumsum(x, axis=axis, dtype=x.dtype if x.dtype != np.bool_ else np.int64)
    if exclusive:
        y = y - x
    return np.flip(y, axis) if reverse else y


def _gather_nd(node, data, indices, batch_dims=0):
    if batch_dims:
        raise NotImplementedError(f"GatherND ({node.name}): batch_dims")
    k = indices.shape[-1]
    return data[tuple(np.moveaxis(indices, -1, 0)[i] for i in range(k))]


_erf = np.vectorize(math.erf, otypes=[np.float64])


def _log(x):
    with np.errstate(divide="ignore"):      # log(0) = -inf, as ONNX defines
        return np.log(x)

OPS = {
    "Add": _binary(np.add), "Sub": _binary(np.subtract), "Mul": _binary(np.multiply),
    "Div": _div, "Pow": _binary(np.power),
    "Equal": _binary(np.equal), "Less": _binary(np.less), "LessOrEqual": _binary(np.less_equal),
    "Greater": _binary(np.greater), "GreaterOrEqual": _binary(np.greater_equal),
    "And": _binary(np.logical_and), "Or": _binary(np.logical_or),
    "Not": lambda node, x: np.logical_not(x),
    "Sqrt": lambda node, x: np.sqrt(x), "Reciprocal": lambda node, x: 1.0 / x,
    "Neg": lambda node, x: -x, "Erf": lambda node, x: _erf(x),
    "Tanh": lambda node, x: np.tanh(x), "Sigmoid": lambda node, x: 1.0 / (1.0 + np.exp(-x)),
    "Relu": lambda node, x: np.maximum(x, 0), "Abs": lambda node, x: np.abs(x),
    "Log": lambda node, x: _log(x), "Min": lambda node, *xs: functools.reduce(np.minimum, xs),
    "Cos": lambda node, x: np.cos(x), "Sin": lambda node, x: np.sin(x),
    "IsNaN": lambda node, x: np.isnan(x), "Identity": lambda node, x: x,
    "Where": lambda node, c, a, b: np.where(c, a, b),
    "MatMul": _binary(np.matmul), "Gemm": _gemm, "Softmax": _softmax,
    "LayerNormalization": _layer_norm, "ReduceMean": _reduce_mean,
    "Transpose": lambda node, x, perm=None: np.transpose(x, perm),
    "Reshape": _reshape, "Shape": _shape, "Gather": _gather, "Slice": _slice,
    "Unsqueeze": _unsqueeze, "Squeeze": _squeeze, "Split": _split,
    "Concat": lambda node, *xs, axis: np.concatenate(xs, axis=axis),
    "Cast": _cast, "Constant": _constant, "ConstantOfShape": _constant_of_shape,
    "Expand": _expand, "Range": _range, "Trilu": _trilu, "Conv": _conv,
    "CumSum": _cumsum, "GatherND": _gather_nd,
}

# inputs that older opsets carried as attributes
_ATTR_INPUTS = {"Unsqueeze": "axes", "Squeeze": "axes", "ReduceMean": "axes", "Split": "split"}


def run(model, feeds):
    """Evaluates the graph (nodes in file order, which ONNX requires to be
    topological) and returns its outputs by name."""
    graph = model.graph
    env = {t.name: _load(t) for t in graph.initializer}
    for name, value in feeds.items():
        value = np.asarray(value)
        env[name] = value.astype(np.float64) if value.dtype.kind == "f" else value
    for node in graph.node:
        fn = OPS.get(node.op_type)
        if fn is None or node.domain not in ("", "ai.onnx"):
            raise NotImplementedError(f"{node.op_type} ({node.name})")
        args = [env[i] if i else None for i in node.input]
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type in _ATTR_INPUTS and _ATTR_INPUTS[node.op_type] in attrs:
            args.append(np.array(attrs.pop(_ATTR_INPUTS[node.op_type]), np.int64))
        while args and args[-1] is None:
            args.pop()
        try:
            out = fn(node, *args, **attrs)
        except Exception as exc:
            raise RuntimeError(f"{node.op_type} {node.name}: {exc}") from exc
        outs = out if isinstance(out, (list, tuple)) else [out]
        for name, value in zip(node.output, outs):
            env[name] = np.asarray(value)
    return {o.name: env[o.name] for o in graph.output}


def compare(got, expected, rtol=1e-6, atol=1e-9):
    """max_abs, max_rel (|got - expected| / max(|expected|, 1e-3)), allclose."""
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    diff = np.abs(got - expected)
    return {"max_abs": float(diff.max()),
            "max_rel": float((diff / np.maximum(np.abs(expected), 1e-3)).max()),
            "allclose": bool(got.shape == expected.shape
                             and np.allclose(got, expected, rtol=rtol, atol=atol))}


def main(argv=None):
    ap = argparse.ArgumentParser(description="Run an ONNX model in float64 numpy "
                                             "and compare it with a reference .npz")
    ap.add_argument("model")
    ap.add_argument("reference")
    ap.add_argument("--rtol", type=float, default=1e-6)
    args = ap.parse_args(argv)
    model = onnx.load(args.model)
    ref = np.load(args.reference)
    feeds = {i.name: ref[i.name] for i in model.graph.input}
    outputs = run(model, feeds)
    ok = True
    for name, value in outputs.items():
        err = compare(value, ref[name], rtol=args.rtol)
        ok &= err["allclose"]
        print(f"{name}: shape {value.shape} max_abs {err['max_abs']:.3e} "
              f"max_rel {err['max_rel']:.3e} allclose(rtol={args.rtol}) {err['allclose']}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
