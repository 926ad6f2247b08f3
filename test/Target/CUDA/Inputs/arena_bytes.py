#!/usr/bin/env python3
"""Checks a CUDA model.so's activation arena against the plan mte-compile
--arena-stats printed: the model table records the plan's peak, and reuse
makes the peak smaller than the buffers' sum. The table is read without a
GPU, as weight_table.py reads it.

Usage: arena_bytes.py MODEL.so STATS
"""
import re
import sys

from weight_table import load_table


def main():
    model, stats = sys.argv[1:3]
    line = next(line for line in open(stats)
                if line.startswith("activation arena:"))
    print(line.strip())
    peak, buffers, without_reuse = map(int, re.match(
        r"activation arena: (\d+) bytes \(peak of (\d+) buffers; (\d+) bytes "
        r"without reuse\)", line).groups())
    table = load_table(model).arena_bytes
    print(f"model table: arena_bytes {table}, "
          f"{'as planned' if table == peak else 'not the planned peak'}")
    if peak < without_reuse:
        print(f"reuse saves {without_reuse - peak} of {without_reuse} bytes "
              f"over {buffers} buffers")
    else:
        print("reuse saves nothing")
    return 0 if table == peak and peak < without_reuse else 1


if __name__ == "__main__":
    sys.exit(main())
