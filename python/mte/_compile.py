"""mte.compile: runs the mte-compile executable."""

import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from ._runtime import Error, library_path


def _find_compiler():
    """Returns the mte-compile to run: the environment variable MTE_COMPILE,
    else the one in the bin directory beside the runtime library's lib
    directory, else the one on PATH."""
    configured = os.environ.get("MTE_COMPILE")
    if configured:
        return configured
    try:
        beside = Path(library_path()).resolve().parent.parent / "bin" / "mte-compile"
        if beside.is_file():
            return str(beside)
    except Error:
        pass
    on_path = shutil.which("mte-compile")
    if on_path:
        return on_path
    raise Error(
        "cannot find mte-compile: set MTE_COMPILE to its path or put it on PATH"
    )


def _format_value(value):
    """Formats an option value: shapes (sequences of ints) as 1x128."""
    if isinstance(value, (list, tuple)):
        return "x".join(str(int(dim)) for dim in value)
    return str(value)


def _flags(options):
    """Turns keyword options into mte-compile flags.

    A name's underscores become dashes. True gives a bare flag (--name);
    False and None give nothing; a mapping gives one "--name key=value" pair
    per entry, with sequences as shapes (input_shape={'ids': (1, 128)} is
    "--input-shape ids=1x128"); a list gives --name=value per element;
    anything else gives --name=value.
    """
    flags = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            flags.append(flag)
        elif isinstance(value, Mapping):
            for name, entry in value.items():
                flags += [flag, f"{name}={_format_value(entry)}"]
        elif isinstance(value, list):
            flags += [f"{flag}={_format_value(entry)}" for entry in value]
        else:
            flags.append(f"{flag}={_format_value(value)}")
    return flags


def compile(onnx_path, output=None, **options):
    """Compiles the ONNX model at `onnx_path` into a model.so and returns its
    path: `output`, or by default `onnx_path` with the suffix .so.

    Keyword options become mte-compile flags (see _flags), for example
    ``target="host"`` is ``--target=host``. Raises Error with the compiler's
    stderr when it fails.
    """
    onnx_path = os.fspath(onnx_path)
    if output is None:
        output = str(Path(onnx_path).with_suffix(".so"))
    output = os.fspath(output)
    command = [_find_compiler(), onnx_path, "-o", output] + _flags(options)
    try:
        result = subprocess.run(command, capture_output=True, text=True)
    except OSError as error:
        raise Error(f"cannot run '{command[0]}': {error.strerror}") from None
    if result.returncode != 0:
        raise Error(
            f"mte-compile failed (exit status {result.returncode}) on '{onnx_path}':\n"
            + result.stderr.rstrip()
        )
    return output
