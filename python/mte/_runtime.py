"""ctypes binding of libmte_runtime (include/mte-c/Runtime.h)."""

import ctypes
import ctypes.util
import os
import sys
import sysconfig
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple, Tuple

import numpy as np


class Error(Exception):
    """A failure reported by the mte runtime, the compiler or this package.

    ``status`` is the runtime's ``mte_status`` code when the runtime reported
    the failure, and None otherwise.
    """

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


# mte_dtype (ModelABI.h): code -> (name, numpy storage type). numpy has no
# bfloat16 or float8, so those tensors travel as their bit patterns.
_DTYPES = {
    1: ("f32", np.float32),
    2: ("f16", np.float16),
    3: ("bf16", np.uint16),
    4: ("f64", np.float64),
    5: ("i64", np.int64),
    6: ("i32", np.int32),
    7: ("i16", np.int16),
    8: ("i8", np.int8),
    9: ("u8", np.uint8),
    10: ("bool", np.bool_),
    11: ("f8e4m3fn", np.uint8),
    12: ("f8e5m2", np.uint8),
    13: ("u16", np.uint16),
    14: ("u32", np.uint32),
    15: ("u64", np.uint64),
}
_CODES = {name: code for code, (name, _) in _DTYPES.items()}
# The mte type of a numpy array; bf16 and f8 inputs are recognised by the
# model's expectation (see _input_code).
_CODE_OF_NUMPY = {
    np.dtype(numpy_type): code
    for code, (name, numpy_type) in _DTYPES.items()
    if name not in ("bf16", "f8e4m3fn", "f8e5m2")
}
_BIT_PATTERN_TYPES = {"bf16": np.dtype(np.uint16),
                      "f8e4m3fn": np.dtype(np.uint8),
                      "f8e5m2": np.dtype(np.uint8)}


class _TensorInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
    ]


class _OpenOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("device", ctypes.c_int32),
        ("rank", ctypes.c_int32),
        ("world_size", ctypes.c_int32),
        ("comm_id", ctypes.c_char_p),
        ("nccl_unique_id", ctypes.c_void_p),
    ]


# mte_open_options' "the runtime's choice" values (Runtime.h).
_DEVICE_DEFAULT = -1
_RANK_DEFAULT = -1
_WORLD_SIZE_DEFAULT = 0
# MTE_NCCL_UNIQUE_ID_BYTES
_NCCL_UNIQUE_ID_BYTES = 128


class _Tensor(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("data", ctypes.c_void_p),
    ]


_LIBRARY_NAME = "libmte_runtime.so"


def _library_candidates():
    """Yields the paths where libmte_runtime may be, in search order."""
    package = Path(__file__).resolve().parent
    # The build tree: <repo>/python/mte next to <repo>/build/lib.
    yield package.parent.parent / "build" / "lib" / _LIBRARY_NAME
    # An installation: <prefix>/lib/pythonX.Y/site-packages/mte (or
    # dist-packages, or lib/python3/dist-packages) next to <prefix>/lib.
    # Debian's pip installs "--prefix P" into P/local/lib/..., so P counts too.
    site = package.parent
    if site.name not in ("site-packages", "dist-packages"):
        return
    prefixes = [site.parent.parent.parent]
    if prefixes[0].name == "local":
        prefixes.append(prefixes[0].parent)
    libdirs = ["lib", "lib64"]
    multiarch = sysconfig.get_config_var("MULTIARCH")
    if multiarch:
        libdirs.append("lib/" + multiarch)
    for prefix in prefixes:
        for libdir in libdirs:
            yield prefix / libdir / _LIBRARY_NAME


def library_path():
    """Returns the path of the libmte_runtime this package uses.

    The search order is: the environment variable MTE_RUNTIME_LIBRARY, the
    build tree the package sits in (<repo>/build/lib), the lib directories
    (lib, lib64, lib/<multiarch>) of the prefix the package is installed in,
    and the dynamic loader's search path (ctypes.util.find_library), whose
    answer is a library name rather than a path. Raises Error when none has
    the library.
    """
    configured = os.environ.get("MTE_RUNTIME_LIBRARY")
    if configured:
        if not os.path.isfile(configured):
            raise Error(
                f"MTE_RUNTIME_LIBRARY is '{configured}', which is not a file"
            )
        return configured
    for candidate in _library_candidates():
        if candidate.is_file():
            return str(candidate)
    found = ctypes.util.find_library("mte_runtime")
    if found:
        return found
    raise Error(
        f"cannot find {_LIBRARY_NAME}: set MTE_RUNTIME_LIBRARY to its path, "
        "or install mte's runtime where the dynamic loader finds it"
    )


_library = None


def _runtime():
    """Loads libmte_runtime on first use and declares its functions."""
    global _library
    if _library is not None:
        return _library
    path = library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as error:
        raise Error(f"cannot load '{path}': {error}") from None
    c_model = ctypes.c_void_p
    c_size = ctypes.c_size_t
    signatures = {
        "mte_runtime_version": (ctypes.c_char_p, []),
        "mte_last_error": (ctypes.c_char_p, []),
        "mte_nccl_get_unique_id": (ctypes.c_int, [ctypes.c_void_p]),
        "mte_model_open_with_options": (
            ctypes.c_int,
            [ctypes.c_char_p, ctypes.POINTER(_OpenOptions), ctypes.POINTER(c_model)],
        ),
        "mte_model_close": (None, [c_model]),
        "mte_model_target": (ctypes.c_char_p, [c_model]),
        "mte_model_rank": (ctypes.c_int32, [c_model]),
        "mte_model_world_size": (ctypes.c_int32, [c_model]),
        "mte_model_num_grid_axes": (c_size, [c_model]),
        "mte_model_grid_axis": (ctypes.c_int64, [c_model, c_size]),
        "mte_model_num_inputs": (c_size, [c_model]),
        "mte_model_num_outputs": (c_size, [c_model]),
        "mte_model_input": (ctypes.POINTER(_TensorInfo), [c_model, c_size]),
        "mte_model_output": (ctypes.POINTER(_TensorInfo), [c_model, c_size]),
        "mte_model_run_device": (
            ctypes.c_int,
            [c_model, c_size, ctypes.POINTER(ctypes.c_void_p), c_size,
             ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p],
        ),
        "mte_model_num_states": (c_size, [c_model]),
        "mte_model_state": (ctypes.POINTER(_TensorInfo), [c_model, c_size]),
        "mte_model_state_num_labels": (c_size, [c_model, c_size]),
        "mte_model_state_label": (ctypes.c_char_p, [c_model, c_size, c_size]),
        "mte_model_get_state": (
            ctypes.c_int, [c_model, c_size, ctypes.c_void_p, c_size]),
        "mte_model_set_state": (
            ctypes.c_int, [c_model, c_size, ctypes.c_void_p, c_size]),
        "mte_model_reset_state": (ctypes.c_int, [c_model]),
        "mte_model_freeze_state": (ctypes.c_int, [c_model, ctypes.c_int]),
        "mte_model_state_frozen": (ctypes.c_int, [c_model]),
        "mte_model_run_tensors": (
            ctypes.c_int,
            [c_model, c_size, ctypes.POINTER(_Tensor), c_size, ctypes.POINTER(_Tensor)],
        ),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    _library = lib
    return lib


def _check(lib, status):
    if status != 0:
        raise Error(lib.mte_last_error().decode("utf-8", "replace"), status)


def runtime_version():
    """Returns the version of the loaded libmte_runtime, "MAJOR.MINOR.PATCH"."""
    return _runtime().mte_runtime_version().decode()


class TensorInfo(NamedTuple):
    """A model input or output.

    ``dtype`` is the mte element type name ("f32", "i64", "bf16", ...);
    ``numpy_dtype`` is the numpy type of its arrays, which for bf16 and the
    f8 types is the unsigned integer type that holds their bit patterns.
    """

    name: str
    dtype: str
    shape: Tuple[int, ...]

    @property
    def numpy_dtype(self):
        return np.dtype(_DTYPES[_CODES[self.dtype]][1])


def _tensor_info(info):
    code = info.dtype
    if code not in _DTYPES:
        raise Error(
            f"element type {code} is unknown to this version of the mte package"
        )
    shape = tuple(info.shape[i] for i in range(info.rank))
    return TensorInfo(info.name.decode("utf-8"), _DTYPES[code][0], shape)


def _contiguous(value):
    """Returns `value` as a C-ordered, native-endian numpy array: torch
    tensors through .detach().cpu().numpy(), anything else through
    numpy.asarray. Copies only when it must."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        array = value.detach().cpu().numpy()
    else:
        array = np.asarray(value)
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    return np.ascontiguousarray(array)


def _set_int32(options, field, value):
    """Sets the int32 field `field` of `options` to `value`, checked."""
    try:
        setattr(options, field, value)
    except TypeError:
        raise Error(f"{field} must be an int, not {type(value).__name__}") from None
    if getattr(options, field) != value:
        raise Error(f"{field} {value} is outside the range of int32")


def nccl_unique_id():
    """Returns a new NCCL unique id (ncclGetUniqueId: 128 bytes naming this
    process's address), for a launcher to hand every rank of a sharded CUDA
    model: ``mte.load(path, rank=r, world_size=n, nccl_unique_id=id)``.
    Loads NCCL; raises Error when it cannot."""
    lib = _runtime()
    buffer = ctypes.create_string_buffer(_NCCL_UNIQUE_ID_BYTES)
    _check(lib, lib.mte_nccl_get_unique_id(buffer))
    return buffer.raw


def _global_rank(distributed, group, group_rank):
    """The global rank of `group`'s rank `group_rank` (torch.distributed)."""
    if hasattr(distributed, "get_global_rank"):
        return distributed.get_global_rank(group, group_rank)
    from torch.distributed import distributed_c10d

    return distributed_c10d._get_global_rank(group, group_rank)


def _ranks_of_group(group, rank, world_size, unique_id):
    """rank, world_size and nccl_unique_id from torch.distributed's process
    group `group`: its rank and size unless given, and the NCCL unique id
    its rank 0 makes, broadcast to the group (None when rank 0 has no
    NCCL: a host or unsharded model does not need it)."""
    import torch.distributed as distributed

    group_rank = distributed.get_rank(group)
    if rank is None:
        rank = group_rank
    if world_size is None:
        world_size = distributed.get_world_size(group)
    if unique_id is None:
        message = [None]
        if group_rank == 0:
            try:
                message = [nccl_unique_id()]
            except Error:
                pass
        distributed.broadcast_object_list(
            message, src=_global_rank(distributed, group, 0), group=group)
        unique_id = message[0]
    return rank, world_size, unique_id


def _open_options(device, rank, world_size, comm_id, unique_id=None):
    """The mte_open_options of these arguments, or None for the defaults."""
    if (device is None and rank is None and world_size is None
            and comm_id is None and unique_id is None):
        return None
    if rank is not None and world_size is None:
        raise Error(f"rank {rank} given without world_size")
    options = _OpenOptions(ctypes.sizeof(_OpenOptions), _DEVICE_DEFAULT,
                           _RANK_DEFAULT, _WORLD_SIZE_DEFAULT, None)
    for field, value in (("device", device), ("rank", rank),
                         ("world_size", world_size)):
        if value is not None:
            _set_int32(options, field, value)
    if comm_id is not None:
        if not isinstance(comm_id, str):
            raise Error(f"comm_id must be a str, not {type(comm_id).__name__}")
        options.comm_id = comm_id.encode("utf-8")
    if unique_id is not None:
        if (not isinstance(unique_id, (bytes, bytearray))
                or len(unique_id) != _NCCL_UNIQUE_ID_BYTES):
            raise Error(f"nccl_unique_id must be {_NCCL_UNIQUE_ID_BYTES} "
                        "bytes (mte.nccl_unique_id())")
        # Held by the options, which the byref holds, until the open.
        options.id_buffer = ctypes.create_string_buffer(bytes(unique_id),
                                                        len(unique_id))
        options.nccl_unique_id = ctypes.addressof(options.id_buffer)
    return ctypes.byref(options)


class Model:
    """A loaded model.so.

    Call it with numpy arrays (or torch tensors, or anything numpy.asarray
    takes), positionally in the order of ``inputs`` or by name, to run it
    once; it returns a dict from output name to a new numpy array, in the
    order of ``outputs``. Arrays must have the exact element type and shape
    of their input; the runtime reports a mismatch as Error. Inputs of type
    bf16, f8e4m3fn and f8e5m2 take, and such outputs are returned as, their
    bit patterns in uint16 or uint8 arrays.

    A model may be called from several threads; the runtime runs one call
    at a time. ``close()`` (or leaving a ``with`` block) unloads it: it
    waits for the calls in progress on other threads to finish, and later
    calls raise Error.

    ``device`` is the CUDA device a CUDA model runs on (None: the runtime's
    default, device 0); host models take only 0.

    A sharded model (``grid``, the extents of the device grid it was
    compiled for, is not empty) runs as rank ``rank`` of ``world_size``
    processes, one per rank, which meet under ``comm_id``: None takes each
    from the launcher's environment (torchrun's RANK and WORLD_SIZE, Open
    MPI's, MPICH's; MTE_COMM_ID or MASTER_ADDR:MASTER_PORT), and opening
    waits until every rank has opened the model. A rank needs a
    world_size; a world_size without a rank takes the rank from there.

    A sharded CUDA model's ranks run its collectives on NCCL, each on a GPU
    of its own (``device`` None: the launcher's LOCAL_RANK), and meet
    through an NCCL unique id: ``nccl_unique_id`` (bytes that
    ``mte.nccl_unique_id()`` made on one rank and every rank is given),
    else NCCL's from $NCCL_COMM_ID, else one that rank 0 sends the others
    through shared memory (ranks on one machine). ``group``, a
    torch.distributed process group, gives the rank and world size (unless
    given) and sends rank 0's unique id to the group
    (``broadcast_object_list``), which works across machines; torch is
    imported only then.

    ``states`` describes what the model carries from run to run (FP8
    delayed scaling's ``fp8.amax_history`` and ``fp8.scale``);
    ``get_state``, ``set_state``, ``reset_state`` and ``freeze_state`` read
    and write it, ``state_labels`` names its columns (the quantised
    tensors).
    """

    def __init__(self, path, device=None, rank=None, world_size=None,
                 comm_id=None, nccl_unique_id=None, group=None):
        self._handle = None
        # Calls in progress, counted under the condition: close() waits for
        # none before it unloads, so no call uses a freed handle.
        self._state = threading.Condition()
        self._calls = 0
        self._lib = lib = _runtime()
        self.path = os.fspath(path)
        if group is not None:
            rank, world_size, nccl_unique_id = _ranks_of_group(
                group, rank, world_size, nccl_unique_id)
        handle = ctypes.c_void_p()
        _check(lib, lib.mte_model_open_with_options(
            os.fsencode(self.path),
            _open_options(device, rank, world_size, comm_id, nccl_unique_id),
            ctypes.byref(handle)))
        self._handle = handle
        self.target = lib.mte_model_target(handle).decode()
        self.rank = lib.mte_model_rank(handle)
        self.world_size = lib.mte_model_world_size(handle)
        self.grid = tuple(
            lib.mte_model_grid_axis(handle, axis)
            for axis in range(lib.mte_model_num_grid_axes(handle))
        )
        self.inputs = tuple(
            _tensor_info(lib.mte_model_input(handle, i).contents)
            for i in range(lib.mte_model_num_inputs(handle))
        )
        self.outputs = tuple(
            _tensor_info(lib.mte_model_output(handle, i).contents)
            for i in range(lib.mte_model_num_outputs(handle))
        )
        self._inputs_by_name = {info.name: info for info in self.inputs}
        self.states = tuple(
            _tensor_info(lib.mte_model_state(handle, i).contents)
            for i in range(lib.mte_model_num_states(handle))
        )
        self._state_labels = {
            info.name: tuple(
                lib.mte_model_state_label(handle, i, j).decode("utf-8")
                for j in range(lib.mte_model_state_num_labels(handle, i))
            )
            for i, info in enumerate(self.states)
        }

    def close(self):
        """Unloads the model once the calls in progress on other threads
        have finished; later calls raise Error. Closing twice is fine."""
        with self._state:
            handle, self._handle = self._handle, None
            self._state.wait_for(lambda: self._calls == 0)
        if handle is not None:
            self._lib.mte_model_close(handle)

    def _acquire(self):
        """The handle for one call, counted until _release()."""
        with self._state:
            if self._handle is None:
                raise Error(f"'{self.path}' is closed")
            self._calls += 1
            return self._handle

    def _release(self):
        with self._state:
            self._calls -= 1
            self._state.notify_all()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __del__(self):
        if getattr(self, "_handle", None) is not None:
            self.close()

    def __repr__(self):
        inputs = ", ".join(f"{i.name}: {i.dtype}{list(i.shape)}" for i in self.inputs)
        outputs = ", ".join(f"{o.name}: {o.dtype}{list(o.shape)}" for o in self.outputs)
        return f"<mte.Model '{self.path}' ({inputs}) -> ({outputs})>"

    def __call__(self, *args, **kwargs):
        if len(args) > len(self.inputs):
            raise Error(
                f"'{self.path}' takes {len(self.inputs)} inputs, "
                f"{len(args)} given positionally"
            )
        feeds = {info.name: value for info, value in zip(self.inputs, args)}
        for name, value in kwargs.items():
            if name in feeds:
                raise Error(f"input '{name}' given twice")
            feeds[name] = value
        return self.run(feeds)

    def run_device(self, inputs, outputs, stream=0):
        """Enqueues a run of a CUDA model on device buffers: `inputs` and
        `outputs` are device addresses (ints, e.g. ``tensor.data_ptr()``) in
        the order of ``inputs`` and ``outputs``, dense, of the model's types
        and shapes; `stream` is a CUstream handle (``torch.cuda.Stream``'s
        ``cuda_stream``; 0 for the legacy default stream). The run is
        ordered on that stream and this returns without waiting for it."""
        c_inputs = (ctypes.c_void_p * max(len(inputs), 1))(*inputs)
        c_outputs = (ctypes.c_void_p * max(len(outputs), 1))(*outputs)
        handle = self._acquire()
        try:
            _check(self._lib, self._lib.mte_model_run_device(
                handle, len(inputs), c_inputs, len(outputs), c_outputs,
                ctypes.c_void_p(stream or None)))
        finally:
            self._release()

    def _state_index(self, name):
        for index, info in enumerate(self.states):
            if info.name == name:
                return index, info
        known = ", ".join(f"'{info.name}'" for info in self.states) or "none"
        raise Error(f"'{self.path}' has no state named '{name}' (states: {known})")

    def state_labels(self, name):
        """What each index of state `name`'s last dimension holds."""
        self._state_index(name)
        return self._state_labels[name]

    def get_state(self, name):
        """The current value of state `name`, as a new numpy array (after
        the runs enqueued before have finished)."""
        index, info = self._state_index(name)
        array = np.empty(info.shape, dtype=info.numpy_dtype)
        handle = self._acquire()
        try:
            _check(self._lib, self._lib.mte_model_get_state(
                handle, index, array.ctypes.data, array.nbytes))
        finally:
            self._release()
        return array

    def set_state(self, name, value):
        """Sets state `name` to `value` (an array of its type and shape) for
        the runs after; the runtime checks the values (an FP8 scale finite
        and >= 0, an amax >= 0 or NaN)."""
        index, info = self._state_index(name)
        array = _contiguous(value)
        if array.dtype != info.numpy_dtype or array.shape != info.shape:
            raise Error(
                f"state '{name}' is {info.dtype}{list(info.shape)}, given "
                f"{array.dtype}{list(array.shape)}"
            )
        handle = self._acquire()
        try:
            _check(self._lib, self._lib.mte_model_set_state(
                handle, index, array.ctypes.data, array.nbytes))
        finally:
            self._release()

    def reset_state(self):
        """Sets every state back to the values compiled into the model."""
        handle = self._acquire()
        try:
            _check(self._lib, self._lib.mte_model_reset_state(handle))
        finally:
            self._release()

    def freeze_state(self, frozen=True):
        """Stops (or, with False, resumes) the state updates of runs."""
        handle = self._acquire()
        try:
            _check(self._lib, self._lib.mte_model_freeze_state(handle, int(frozen)))
        finally:
            self._release()

    @property
    def state_frozen(self):
        handle = self._acquire()
        try:
            return bool(self._lib.mte_model_state_frozen(handle))
        finally:
            self._release()

    def run(self, feeds):
        """Runs the model on `feeds`, a mapping from input name to array
        (for names that are not Python identifiers), and returns the outputs
        like a call does."""
        if not isinstance(feeds, Mapping):
            raise Error("run() takes a mapping from input name to array")
        # tensor.data holds bare addresses: converted arrays must outlive the
        # run. (ctypes keeps the names and shapes alive by itself.)
        arrays = []
        inputs = (_Tensor * len(feeds))()
        for tensor, (name, value) in zip(inputs, feeds.items()):
            if not isinstance(name, str):
                raise Error(f"input names are strings, not {type(name).__name__}")
            array = _contiguous(value)
            arrays.append(array)
            tensor.name = name.encode("utf-8")
            tensor.dtype = self._input_code(name, array)
            tensor.rank = array.ndim
            tensor.shape = (ctypes.c_int64 * array.ndim)(*array.shape)
            tensor.data = array.ctypes.data

        results = {}
        outputs = (_Tensor * len(self.outputs))()
        for tensor, info in zip(outputs, self.outputs):
            array = np.empty(info.shape, dtype=info.numpy_dtype)
            results[info.name] = array
            tensor.name = info.name.encode("utf-8")
            tensor.dtype = _CODES[info.dtype]
            tensor.rank = array.ndim
            tensor.shape = (ctypes.c_int64 * array.ndim)(*array.shape)
            tensor.data = array.ctypes.data

        handle = self._acquire()
        try:
            _check(
                self._lib,
                self._lib.mte_model_run_tensors(
                    handle, len(feeds), inputs, len(self.outputs), outputs
                ),
            )
        finally:
            self._release()
        return results

    def _input_code(self, name, array):
        """Returns the mte dtype code of `array`, the value of input `name`:
        uint16/uint8 arrays fed to bf16/f8 inputs are their bit patterns."""
        expected = self._inputs_by_name.get(name)
        # Not .get(): numpy compares None equal to float64.
        if (
            expected is not None
            and expected.dtype in _BIT_PATTERN_TYPES
            and array.dtype == _BIT_PATTERN_TYPES[expected.dtype]
        ):
            return _CODES[expected.dtype]
        code = _CODE_OF_NUMPY.get(array.dtype)
        if code is None:
            raise Error(
                f"input '{name}': numpy type {array.dtype} has no mte element type"
            )
        return code


def load(path, device=None, rank=None, world_size=None, comm_id=None,
         nccl_unique_id=None, group=None):
    """Opens the model.so at `path` (a CUDA model on `device`, None for the
    default; a sharded model as rank `rank` of `world_size`, meeting the
    other ranks under `comm_id`, None for the launcher's; a sharded CUDA
    model's NCCL ranks through `nccl_unique_id`, or those of the
    torch.distributed process group `group`) and returns a Model."""
    return Model(path, device, rank, world_size, comm_id, nccl_unique_id,
                 group)
