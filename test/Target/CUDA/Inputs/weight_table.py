#!/usr/bin/env python3
"""Reads the weight table of a CUDA model.so without a GPU (the library's
mte_model_get_abi only reads constant data) and prints its external weights;
checks every source against the data file (bounds and zlib CRC-32).

Usage: weight_table.py EXTERNAL.so EMBEDDED.so DATAFILE
       weight_table.py --slices MODEL.so
       weight_table.py --parts EXTERNAL.so EMBEDDED.so DATAFILE
       weight_table.py --quantized EXTERNAL.so EMBEDDED.so DATAFILE
With --slices, prints each weight of a sharded model: its bytes, the part
one rank holds, and the bytes every rank's device holds in all. With
--parts, rebuilds in numpy every rank's part of each sliced external weight
of a sharded model from its sources (strided chunks, f32 to bf16 rounded to
nearest even; FP8 weights quantized and transposed as below) and checks
it against the same part of the embedded build's weight, and each part's
CRC-32 against the source bytes that part reads.
With --quantized, rebuilds in numpy every external FP8 weight of a
--precision=fp8 model from its sources (f32 rounded to bf16, divided by
the table's scale in float32, encoded to E4M3 by fp8_reference.py,
transposed when the table says so) and checks it against the embedded
build's E4M3 codes.
"""
import ctypes
import os
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "Integration"))
import mte  # noqa: E402
import fp8_reference  # noqa: E402

DTYPES = {1: ("f32", 4), 2: ("f16", 2), 3: ("bf16", 2), 11: ("f8e4m3fn", 1)}


class Source(ctypes.Structure):
    _fields_ = [("location", ctypes.c_char_p), ("offset", ctypes.c_uint64),
                ("chunk_elements", ctypes.c_uint64),
                ("chunk_stride", ctypes.c_uint64), ("dtype", ctypes.c_int32),
                ("crc32", ctypes.c_uint32),
                ("part_crc32", ctypes.POINTER(ctypes.c_uint32))]


class Weight(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("num_bytes", ctypes.c_uint64),
                ("dtype", ctypes.c_int32), ("num_sources", ctypes.c_uint32),
                ("outer", ctypes.c_uint64), ("sources", ctypes.POINTER(Source)),
                ("slice_outer", ctypes.c_uint64),
                ("slice_parts", ctypes.c_uint32),
                ("slice_grid_axes", ctypes.c_uint32),
                ("quantize_scale", ctypes.c_float),
                ("quantize_from", ctypes.c_int32),
                ("transpose_rows", ctypes.c_uint64),
                ("quantize_blocks", ctypes.POINTER(ctypes.c_float)),
                ("quantize_block_k", ctypes.c_uint64),
                ("quantize_block_rows", ctypes.c_uint64),
                ("quantize_block_cols", ctypes.c_uint64),
                ("pipeline_stage", ctypes.c_uint32)]


class ABI(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_uint32), ("target", ctypes.c_char_p),
                ("gpu_arch", ctypes.c_char_p), ("num_inputs", ctypes.c_uint32),
                ("num_outputs", ctypes.c_uint32), ("num_weights", ctypes.c_uint32),
                ("inputs", ctypes.c_void_p), ("outputs", ctypes.c_void_p),
                ("weights", ctypes.POINTER(Weight)),
                ("arena_bytes", ctypes.c_uint64), ("run", ctypes.c_void_p)]


def load_table(path):
    """The model table of the CUDA model.so at `path`."""
    # The model's kernels load when the library does; without a driver the
    # failure is recorded, not raised, so the table stays readable.
    # model.so needs libmte_runtime.so.0: load the one mte finds first.
    ctypes.CDLL(mte.library_path(), mode=ctypes.RTLD_GLOBAL)
    lib = ctypes.CDLL(os.path.abspath(path))
    lib.mte_model_get_abi.restype = ctypes.POINTER(ABI)
    return lib.mte_model_get_abi().contents


def print_slices(path):
    """Each weight's part per rank, and the bytes a rank uploads: per
    pipeline stage when weights belong to stages."""
    abi = load_table(path)
    device = {}  # by stage + 1; 0: every rank's
    for i in range(abi.num_weights):
        w = abi.weights[i]
        parts = max(w.slice_parts, 1)
        device[w.pipeline_stage] = (device.get(w.pipeline_stage, 0)
                                    + w.num_bytes // parts)
        where = (f"part of {parts} over grid axes {w.slice_grid_axes:#x}, "
                 f"{w.slice_outer} chunks" if parts > 1 else "whole")
        stage = (f", stage {w.pipeline_stage - 1}" if w.pipeline_stage
                 else "")
        print(f"weight {i}: {w.num_bytes} bytes, {where}{stage}")
    stages = sorted(s for s in device if s)
    if not stages:
        print(f"device bytes per rank: {device.get(0, 0)}")
    for s in stages:
        print(f"device bytes per rank of stage {s - 1}: "
              f"{device[s] + device.get(0, 0)}")
    return 0


def to_bf16(values):
    """f32 values rounded to nearest even bf16, as uint16 bits."""
    bits = values.view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def part_elements(w, group):
    """The whole weight's element indices that part `group` holds."""
    total = w.num_bytes // DTYPES[w.dtype][1]
    span = total // w.slice_outer
    length = span // w.slice_parts
    starts = np.arange(w.slice_outer) * span + group * length
    return (starts[:, None] + np.arange(length)[None, :]).reshape(-1)


def block_factors(w, count):
    """Under block or rowwise scaling, each built element's factor: the
    stored weight is [N, K] (K = quantize_block_k) in blocks of
    quantize_block_rows x quantize_block_cols, built [K, N] when
    transposed."""
    k, rows, cols = w.quantize_block_k, w.quantize_block_rows, w.quantize_block_cols
    n = count // k
    blocks = np.ctypeslib.as_array(w.quantize_blocks,
                                   shape=(-(-n // rows) * (k // cols),))
    index = np.arange(count)
    row, col = ((index % n, index // n) if w.transpose_rows
                else (index // k, index % k))
    return blocks[(row // rows) * (k // cols) + col // cols]


def quantize(values, w):
    """f32 (or bf16 bits) source values as an FP8 weight's codes."""
    if values.dtype == np.float32 and DTYPES[w.quantize_from][0] == "bf16":
        values = (to_bf16(values.copy()).astype(np.uint32) << 16).view(
            np.float32)
    elif values.dtype == np.uint16:
        values = (values.astype(np.uint32) << 16).view(np.float32)
    scale = (block_factors(w, values.size) if w.quantize_blocks
             else w.quantize_scale)
    return fp8_reference.quantize(values, scale)


def check_parts(external_so, embedded_so, data_path):
    abi = load_table(external_so)
    twin = load_table(embedded_so)
    data = np.frombuffer(open(data_path, "rb").read(), np.uint8)
    bad = checked = read = whole = 0
    for i in range(abi.num_weights):
        w, e = abi.weights[i], twin.weights[i]
        if w.data or w.slice_parts <= 1:
            continue
        name, size = DTYPES[w.dtype]
        embedded = np.frombuffer(ctypes.string_at(e.data, e.num_bytes),
                                 np.uint8)
        chunk = sum(w.sources[s].chunk_elements for s in range(w.num_sources))
        begins = np.cumsum([0] + [w.sources[s].chunk_elements
                                  for s in range(w.num_sources)])
        for group in range(w.slice_parts):
            elements = part_elements(w, group)
            if w.transpose_rows:
                # Stored [cols, rows], built [rows, cols]: stored element
                # (c, r) is built element (r, c).
                rows = w.transpose_rows
                cols = w.num_bytes // size // rows
                elements = (elements % rows) * cols + elements // rows
            outer, within = elements // chunk, elements % chunk
            source = np.searchsorted(begins, within, side="right") - 1
            built = np.zeros(len(elements) * size, np.uint8)
            for s in range(w.num_sources):
                src = w.sources[s]
                name_s, size_s = DTYPES[src.dtype]
                mine = np.nonzero(source == s)[0]
                file_elements = (outer[mine] * src.chunk_stride
                                 + within[mine] - begins[s])
                order = np.argsort(file_elements, kind="stable")
                byte_index = (src.offset + file_elements[order, None] * size_s
                              + np.arange(size_s)[None, :]).reshape(-1)
                raw = data[byte_index]
                if zlib.crc32(raw.tobytes()) != src.part_crc32[group]:
                    print(f"weight {i} part {group} source {s}: CRC-32 "
                          f"{zlib.crc32(raw.tobytes()):08x}, table says "
                          f"{src.part_crc32[group]:08x}")
                    bad += 1
                values = raw.view(np.float32 if name_s == "f32" else np.uint16)
                values = values[np.argsort(order, kind="stable")]
                if w.quantize_scale:
                    values = quantize(values, w)
                elif name == "bf16" and name_s == "f32":
                    values = to_bf16(values.copy())
                target = (mine[:, None] * size + np.arange(size)[None, :])
                built[target.reshape(-1)] = values.view(np.uint8)
                read += len(raw)
            want = embedded.reshape(w.slice_outer, w.slice_parts, -1)[:, group]
            if not np.array_equal(built, want.reshape(-1)):
                print(f"weight {i} part {group}: differs from the embedded "
                      f"build's")
                bad += 1
            checked += 1
        whole += sum(w.outer * w.sources[s].chunk_elements
                     * DTYPES[w.sources[s].dtype][1]
                     for s in range(w.num_sources)) * w.slice_parts
    print(f"{checked} parts of sliced external weights "
          + ("match" if not bad else f"checked, {bad} wrong")
          + f"; the parts take {read} of {whole} source bytes "
          f"({read / max(whole, 1):.3f}) between them")
    return 1 if bad or not checked else 0


def whole_weight(w, data):
    """The elements of external weight `w` as its sources give them (its
    chunks in order), in the sources' type (all sources of one type)."""
    chunks = []
    for o in range(w.outer):
        for s in range(w.num_sources):
            src = w.sources[s]
            name, size = DTYPES[src.dtype]
            start = src.offset + o * src.chunk_stride * size
            chunks.append(np.frombuffer(
                data[start:start + src.chunk_elements * size],
                np.float32 if name == "f32" else np.uint16))
    return np.concatenate(chunks)


def check_quantized(external_so, embedded_so, data_path):
    abi = load_table(external_so)
    twin = load_table(embedded_so)
    data = open(data_path, "rb").read()
    checked = bad = transposed = blocked = 0
    for i in range(abi.num_weights):
        w, e = abi.weights[i], twin.weights[i]
        if w.data or w.quantize_scale == 0:
            continue
        if w.slice_parts > 1:
            continue  # --parts checks those
        codes = quantize(whole_weight(w, data), w)
        if w.transpose_rows:
            codes = codes.reshape(w.transpose_rows, -1).T.reshape(-1)
            transposed += 1
        blocked += bool(w.quantize_blocks)
        embedded = np.frombuffer(ctypes.string_at(e.data, e.num_bytes),
                                 np.uint8)
        if not np.array_equal(codes, embedded):
            print(f"weight {i}: {np.count_nonzero(codes != embedded)} of "
                  f"{codes.size} codes differ from the embedded build's")
            bad += 1
        checked += 1
    print(f"{checked} external FP8 weights ({transposed} transposed, "
          f"{blocked} block-scaled) "
          + ("equal the embedded build's codes" if not bad
             else f"checked, {bad} wrong"))
    return 1 if bad or not checked else 0


def main():
    if sys.argv[1] == "--quantized":
        return check_quantized(*sys.argv[2:5])
    if sys.argv[1] == "--slices":
        return print_slices(sys.argv[2])
    if sys.argv[1] == "--parts":
        return check_parts(*sys.argv[2:5])
    external_so, embedded_so, data_path = sys.argv[1:4]
    abi = load_table(external_so)
    data = open(data_path, "rb").read()
    external = [abi.weights[i] for i in range(abi.num_weights)
                if not abi.weights[i].data]
    locations = {w.sources[s].location.decode()
                 for w in external for s in range(w.num_sources)}
    print(f"external weights: {len(external)} location "
          f"{', '.join(sorted(locations))}")
    bad = 0
    for i in range(abi.num_weights):
        w = abi.weights[i]
        if w.data:
            continue
        parts = []
        chunk = 0
        for s in range(w.num_sources):
            src = w.sources[s]
            name, size = DTYPES[src.dtype]
            parts.append(f"{name} x {src.chunk_elements}"
                         + (f" every {src.chunk_stride}"
                            if w.outer > 1 and src.chunk_stride != src.chunk_elements
                            else ""))
            raw = b"".join(
                data[src.offset + o * src.chunk_stride * size:][:src.chunk_elements * size]
                for o in range(w.outer))
            if len(raw) != w.outer * src.chunk_elements * size or \
                    zlib.crc32(raw) != src.crc32:
                bad += 1
            chunk += src.chunk_elements
        name, size = DTYPES[w.dtype]
        if w.outer * chunk * size != w.num_bytes:
            bad += 1
        how = ""
        if w.quantize_scale:
            how = (f", quantized from {DTYPES[w.quantize_from][0]}"
                   + (f", transposed from {w.transpose_rows} rows"
                      if w.transpose_rows else "")
                   + (f", {w.quantize_block_rows}x{w.quantize_block_cols} "
                      f"blocks of K {w.quantize_block_k}"
                      if w.quantize_blocks else ""))
        print(f"weight {i}: {name}, {w.num_bytes} bytes, outer {w.outer}, "
              f"sources {w.num_sources}: {', '.join(parts)}{how}")
    if bad:
        print(f"{bad} sources out of bounds or with a wrong CRC-32")
    else:
        print(f"every external weight's sources lie inside "
              f"{os.path.basename(data_path)} and their CRC-32s match")
    saved = os.path.getsize(embedded_so) - os.path.getsize(external_so)
    print(f"external model.so is smaller by {saved} bytes")
    return 1 if bad or saved <= 0 else 0


if __name__ == "__main__":
    sys.exit(main())
