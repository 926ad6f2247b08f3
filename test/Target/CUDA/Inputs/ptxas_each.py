#!/usr/bin/env python3
"""Assembles every kernel module of `mte-compile --emit=ptx` output with
ptxas for one architecture; exits non-zero if ptxas rejects any.

Usage: ptxas_each.py PTXAS ARCH FILE.ptx
"""
import os
import subprocess
import sys
import tempfile


def main():
    ptxas, arch, path = sys.argv[1:4]
    modules, current = [], None
    with open(path) as f:
        for line in f:
            if line.startswith("// kernel module "):
                current = [line]
                modules.append(current)
            elif current is not None:
                current.append(line)
    if not modules:
        print("no kernel modules found")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        for i, module in enumerate(modules):
            source = os.path.join(tmp, f"k{i}.ptx")
            with open(source, "w") as out:
                out.writelines(module)
            result = subprocess.run(
                [ptxas, f"-arch={arch}", source, "-o",
                 os.path.join(tmp, f"k{i}.cubin")],
                capture_output=True, text=True)
            if result.returncode != 0:
                print(f"ptxas rejected {module[0].strip()}:\n{result.stderr}")
                return 1
    print(f"ptxas accepted {len(modules)} kernel modules for {arch}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
