"""Python bindings of the mte runtime.

    import mte
    path = mte.compile("model.onnx", input_shape={"input_ids": (1, 128)})
    model = mte.load(path)
    outputs = model(input_ids=ids)    # {output name: numpy array}

``mte.load`` opens a model.so through libmte_runtime with ctypes (a
sharded model as one rank: ``mte.load(path, rank=r, world_size=n)``, the
launcher's rank, or a torch.distributed group's: ``mte.load(path,
group=group)``; ``mte.nccl_unique_id()`` makes the id the ranks of a
sharded CUDA model meet through); ``mte.compile`` runs the mte-compile
executable.
Every failure raises ``mte.Error`` with the runtime's or the compiler's
message.
"""

from ._compile import compile
from ._runtime import (Error, Model, TensorInfo, library_path, load,
                       nccl_unique_id, runtime_version)

__version__ = "0.1.0"

__all__ = [
    "Error",
    "Model",
    "TensorInfo",
    "compile",
    "library_path",
    "load",
    "nccl_unique_id",
    "runtime_version",
]
