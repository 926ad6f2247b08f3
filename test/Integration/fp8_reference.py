"""A numpy model of the FP8 formats and of mte's FP8 quantisation, written
from the format definitions (not from mte's code), for the tests to compare
against.

* decode_table: the value of each of the 256 codes of E4M3 (FN: no
  infinities, one NaN code per sign) or E5M2 (IEEE-like), in float64.
* encode_e4m3: round to the nearest E4M3 code, ties to the even code,
  saturating at +-448 (ONNX Cast/QuantizeLinear with saturate=1, PTX
  cvt.rn.satfinite); NaN gives a NaN code.
* quantize / dequantize: x / scale encoded (ONNX QuantizeLinear, and
  mte's weights at compile time); codes decoded times scale.
* current_scales / cast_to_fp8: an activation as mte quantizes it,
  TransformerEngine's way: scale = 448 / amax, codes of x * scale, the GEMM
  reading scale_inv = 1 / scale.
* block_scales / block_quantize_rows / block_quantize_weight: block
  scaling (TransformerEngine's Float8BlockScaling): a power-of-two scale
  per 1 x 128 block of an activation's rows or 128 x 128 block of a weight,
  448 / amax with its mantissa dropped (1 for an amax of 0, inf or NaN).
* bf16 / weight_scale / current_scaling_operands: the two operands of a
  linear as `--precision=fp8` quantizes them by default (docs/fp8.md):
  both stored bf16, the weight quantized once by division by amax / 448,
  the activation cast by current scaling; for models.py's float64
  reference to run the recipe with nothing else rounded.
* fp8_tensor: an ONNX TensorProto of E4M3 codes (onnx 1.12's helper predates
  the FP8 types).
"""
import numpy as np

E4M3FN = 17  # onnx.TensorProto.FLOAT8E4M3FN (onnx 1.14+)
E4M3_MAX = 448.0


def decode_table(exp_bits, man_bits, bias, ieee):
    """The value of every code, in float64."""
    values = np.empty(256)
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        exp = (code >> man_bits) & ((1 << exp_bits) - 1)
        man = code & ((1 << man_bits) - 1)
        if ieee and exp == (1 << exp_bits) - 1:
            values[code] = sign * np.inf if man == 0 else np.nan
        elif not ieee and exp == (1 << exp_bits) - 1 and man == (1 << man_bits) - 1:
            values[code] = np.nan
        elif exp == 0:
            values[code] = sign * man * 2.0 ** (1 - bias - man_bits)
        else:
            values[code] = sign * (1 + man / 2 ** man_bits) * 2.0 ** (exp - bias)
    return values


E4M3_TABLE = decode_table(4, 3, 7, False)
# Codes 0..126 are the non-negative finite values in increasing order.
_POSITIVE = E4M3_TABLE[:127]


def encode_e4m3(x):
    """E4M3 codes (uint8) of x: nearest, ties to even, saturated."""
    v = np.asarray(x, np.float64)
    mag = np.minimum(np.abs(v), E4M3_MAX)
    hi = np.clip(np.searchsorted(_POSITIVE, mag), 0, 126)
    lo = np.maximum(hi - 1, 0)
    dlo, dhi = mag - _POSITIVE[lo], _POSITIVE[hi] - mag
    pick_hi = (dhi < dlo) | ((dhi == dlo) & (hi % 2 == 0))
    codes = np.where(pick_hi, hi, lo).astype(np.uint8)
    codes = np.where(np.signbit(v), codes | 0x80, codes).astype(np.uint8)
    return np.where(np.isnan(v), np.uint8(0x7F), codes).astype(np.uint8)


def decode_e4m3(codes):
    return E4M3_TABLE[np.asarray(codes, np.uint8)]


def quantize(x, scale):
    """E4M3 codes of x / scale, the division in float32 as mte's is."""
    return encode_e4m3(np.float32(x) / np.float32(scale))


def current_scales(amax):
    """(scale, scale_inv) of current scaling for `amax`, in float32: 448 /
    amax (the largest float32 if that overflows), or 1 when the amax is 0
    or not finite; scale_inv = 1 / scale."""
    amax = np.float32(amax)
    scale = np.float32(1)
    if np.isfinite(amax) and amax > 0:
        with np.errstate(over="ignore"):
            scale = np.minimum(np.float32(E4M3_MAX) / amax,
                               np.float32(np.finfo(np.float32).max))
    scale = np.float32(scale)
    return scale, np.float32(np.float32(1) / scale)


def delayed_scales(state_scale):
    """(scale, scale_inv) under delayed scaling: the state's scale while it
    is finite and positive (what the model's state holds), else 1."""
    scale = np.float32(state_scale)
    if not (np.isfinite(scale) and scale > 0):
        scale = np.float32(1)
    return scale, np.float32(np.float32(1) / scale)


def cast_to_fp8(x, scale):
    """E4M3 codes of x * scale, the product in float32 as mte's is."""
    return encode_e4m3(np.asarray(x, np.float32) * np.float32(scale))


def dequantize(codes, scale):
    return decode_e4m3(codes) * np.float64(np.float32(scale))


def bf16(x):
    """float32 values rounded to bf16 (nearest even), as float32."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32).view(np.float32)


def weight_scale(w):
    """A weight's dequantisation factor: amax / 448 (1 if 0 or not finite)."""
    amax = np.float32(np.abs(w).max())
    ok = np.isfinite(amax) and amax > 0
    return np.float32(amax / np.float32(448.0)) if ok else np.float32(1.0)


def current_scaling_operands(x, w):
    """The values a linear reads from activation x [..., K] and weight w
    (any layout; one scale for all of it) under --precision=fp8's current
    scaling, in float64: each rounded to bf16, then w's codes of w /
    weight_scale(w) and x's of x * 448 / amax(x), times their
    dequantisation factors."""
    xb, wb = bf16(x), bf16(w)
    sw = weight_scale(wb)
    scale, scale_inv = current_scales(np.abs(xb).max())
    return (decode_e4m3(cast_to_fp8(xb, scale)) * np.float64(scale_inv),
            decode_e4m3(quantize(wb, sw)) * np.float64(sw))


def rowwise_scaling_operands(x, w_t):
    """The values a linear reads from activation x [..., K] and weight w_t
    [K, N] (in any view of it) under --fp8-recipe=rowwise, in float64: each
    rounded to bf16, then x's codes with one power-of-two scale per row and
    w_t's with one per output channel (column), times their scale_inv."""
    xb, wb = bf16(x), bf16(w_t)
    rows = xb.reshape(-1, xb.shape[-1])
    x_codes, x_scale_inv = rowwise_quantize(rows)
    w_codes, w_scale_inv = rowwise_quantize(wb.T)
    xq = decode_e4m3(x_codes) * x_scale_inv.astype(np.float64)[:, None]
    wq = decode_e4m3(w_codes) * w_scale_inv.astype(np.float64)[:, None]
    return xq.reshape(xb.shape), wq.T


def fp8_tensor(name, codes, dims):
    """A FLOAT8E4M3FN initializer holding `codes`."""
    from onnx import TensorProto
    t = TensorProto()
    t.name = name
    t.data_type = E4M3FN
    t.dims.extend(dims)
    t.raw_data = np.ascontiguousarray(codes, np.uint8).tobytes()
    return t


BLOCK = 128


def block_scales(amax):
    """Block scaling's (scale, scale_inv) per element of `amax` (float32):
    current scaling's 448 / amax rounded down to a power of two."""
    amax = np.asarray(amax, np.float32)
    usable = np.isfinite(amax) & (amax > 0)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        quotient = np.minimum(np.float32(E4M3_MAX) / amax,
                              np.float32(np.finfo(np.float32).max))
    scale = np.where(usable, quotient, np.float32(1)).astype(np.float32)
    scale = (scale.view(np.uint32) & np.uint32(0xFF800000)).view(np.float32)
    return scale, (np.float32(1) / scale).astype(np.float32)


def block_quantize_rows(x):
    """x [M, K] (K a multiple of 128) as block scaling casts it: codes of
    x * scale per 1 x 128 block, and scale_inv [M, K / 128]."""
    x = np.asarray(x, np.float32)
    m, k = x.shape
    blocks = x.reshape(m, k // BLOCK, BLOCK)
    scale, scale_inv = block_scales(np.abs(blocks).max(axis=-1))
    codes = encode_e4m3(blocks * scale[..., None])
    return codes.reshape(m, k), scale_inv


def block_quantize_weight(w):
    """w [N, K] with one scale per 128 x 128 block: codes and scale_inv
    [ceil(N / 128), K / 128]."""
    w = np.asarray(w, np.float32)
    n, k = w.shape
    rows = -(-n // BLOCK)
    padded = np.zeros((rows * BLOCK, k), np.float32)
    padded[:n] = w
    tiles = padded.reshape(rows, BLOCK, k // BLOCK, BLOCK)
    scale, scale_inv = block_scales(np.abs(tiles).max(axis=(1, 3)))
    codes = encode_e4m3(tiles * scale[:, None, :, None])
    return codes.reshape(rows * BLOCK, k)[:n], scale_inv


def block_product(x_codes, x_scale_inv, w_codes, w_scale_inv):
    """sum_k x[m, k] w[n, k] * x_scale_inv[m, k / 128] *
    w_scale_inv[n / 128, k / 128], in float64 (exact per term)."""
    k = x_codes.shape[1]
    xs = np.repeat(x_scale_inv.astype(np.float64), BLOCK, axis=1)[:, :k]
    ws = np.repeat(np.repeat(w_scale_inv.astype(np.float64), BLOCK, axis=0),
                   BLOCK, axis=1)[:w_codes.shape[0], :k]
    return (decode_e4m3(x_codes) * xs) @ (decode_e4m3(w_codes) * ws).T


def rowwise_quantize(x):
    """x [R, K] as rowwise scaling casts it (an activation's rows, or a
    weight's output channels): codes of x * scale with one power-of-two
    scale per row (block scaling's rule), and scale_inv [R]."""
    x = np.asarray(x, np.float32)
    scale, scale_inv = block_scales(np.abs(x).max(axis=-1))
    return encode_e4m3(x * scale[:, None]), scale_inv


def rowwise_product(x_codes, x_scale_inv, w_codes, w_scale_inv):
    """(x . w^T)[m, n] * x_scale_inv[m] * w_scale_inv[n] in float64 (exact
    products, power-of-two scales)."""
    product = decode_e4m3(x_codes) @ decode_e4m3(w_codes).T
    return (product * x_scale_inv.astype(np.float64)[:, None] *
            w_scale_inv.astype(np.float64)[None, :])
