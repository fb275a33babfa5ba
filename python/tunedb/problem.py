"""Convolution problems (tunedb.v1.ConvProblem) from keyword arguments or
from a PyTorch-style description.

    problem(n=64, c=256, k=256, input=(14, 14), filter=(3, 3), padding=1,
            dtype="float16", layout="nhwc")
    conv(N=64, C=256, H=14, W=14, K=256, R=3, S=3, padding=1,
         dtype=torch.float16, memory_format=torch.channels_last)

Both give the same message. dtype and memory_format accept PyTorch's
objects (torch.float16, torch.channels_last) without importing torch.
"""
from tunedb.v1 import tunedb_pb2 as pb

_OPS = {
    "fwd": pb.CONV_OP_FORWARD, "forward": pb.CONV_OP_FORWARD,
    "bwd_data": pb.CONV_OP_BACKWARD_DATA, "bwd-data": pb.CONV_OP_BACKWARD_DATA,
    "backward_data": pb.CONV_OP_BACKWARD_DATA,
    "bwd_filter": pb.CONV_OP_BACKWARD_FILTER,
    "bwd-filter": pb.CONV_OP_BACKWARD_FILTER,
    "backward_filter": pb.CONV_OP_BACKWARD_FILTER,
}
_MODES = {
    "xcorr": pb.CONV_MODE_CROSS_CORRELATION,
    "cross_correlation": pb.CONV_MODE_CROSS_CORRELATION,
    "conv": pb.CONV_MODE_CONVOLUTION, "convolution": pb.CONV_MODE_CONVOLUTION,
}
_TYPES = {
    "float16": pb.DATA_TYPE_HALF, "half": pb.DATA_TYPE_HALF,
    "fp16": pb.DATA_TYPE_HALF, "f16": pb.DATA_TYPE_HALF,
    "bfloat16": pb.DATA_TYPE_BFLOAT16, "bf16": pb.DATA_TYPE_BFLOAT16,
    "float32": pb.DATA_TYPE_FLOAT, "float": pb.DATA_TYPE_FLOAT,
    "fp32": pb.DATA_TYPE_FLOAT, "f32": pb.DATA_TYPE_FLOAT,
    "float64": pb.DATA_TYPE_DOUBLE, "double": pb.DATA_TYPE_DOUBLE,
    "fp64": pb.DATA_TYPE_DOUBLE, "f64": pb.DATA_TYPE_DOUBLE,
}
# Layout names, and PyTorch memory formats -> channels last or not.
_LAYOUTS = {"nchw": pb.LAYOUT_NCHW, "nhwc": pb.LAYOUT_NHWC,
            "ncdhw": pb.LAYOUT_NCDHW, "ndhwc": pb.LAYOUT_NDHWC}
_MEMORY_FORMATS = {"channels_last": True, "channels_last_3d": True,
                   "contiguous_format": False, "contiguous": False,
                   "preserve_format": False}


def _name(value, what):
    """'torch.float16' -> 'float16'; strings are lower-cased."""
    text = str(value).strip().lower()
    if text.startswith("torch."):
        text = text[len("torch."):]
    if not text:
        raise ValueError(f"empty {what}")
    return text


def _pick(table, value, what):
    name = _name(value, what)
    if name not in table:
        raise ValueError(f"unknown {what} {value!r} (expected one of "
                         f"{', '.join(sorted(table))})")
    return table[name]


def _sizes(value, dims, what, minimum):
    """An int (every dimension) or a sequence of `dims` ints."""
    values = [value] * dims if isinstance(value, int) else list(value)
    if len(values) != dims or not all(isinstance(v, int) for v in values):
        raise ValueError(f"{what} must be an int or {dims} ints, got {value!r}")
    if any(v < minimum for v in values):
        raise ValueError(f"{what} must be >= {minimum}, got {value!r}")
    return values


def problem(*, n, c, k, input, filter, padding=0, stride=1, dilation=1,
            groups=1, op="fwd", mode="xcorr", dtype="float16", compute=None,
            layout="nhwc", tensor_cores=True, tf32=False, api="legacy",
            alignment=16):
    """A tunedb.v1.ConvProblem from keyword arguments.

    input and filter are (H, W) or (D, H, W); padding, stride and dilation
    are an int or one int per spatial dimension. op: fwd, bwd_data or
    bwd_filter. dtype: float16, bfloat16, float32 or float64 (x, w and y);
    compute (the accumulation type) defaults to float32, float64 for
    float64. layout: nchw, nhwc, ncdhw or ndhwc. tf32 applies to float32
    only. api: legacy (cuDNN's algorithms) or graph (engine configs and
    plans); alignment: for graph, the operands' pointer alignment in bytes.
    ValueError names the bad argument.
    """
    input_sizes = list(input)
    dims = len(input_sizes)
    if dims not in (2, 3):
        raise ValueError(f"input must have 2 or 3 spatial sizes, got {input!r}")
    for name, value in (("n", n), ("c", c), ("k", k), ("groups", groups)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    io_type = _pick(_TYPES, dtype, "dtype")
    if compute is None:
        compute_type = (pb.DATA_TYPE_DOUBLE if io_type == pb.DATA_TYPE_DOUBLE
                        else pb.DATA_TYPE_FLOAT)
    else:
        compute_type = _pick(_TYPES, compute, "compute type")
    if tf32 and io_type != pb.DATA_TYPE_FLOAT:
        raise ValueError("tf32 applies to float32 problems only")
    if api not in ("legacy", "graph"):
        raise ValueError(f"api must be 'legacy' or 'graph', got {api!r}")
    if api == "graph" and alignment not in (1, 2, 4, 8, 16):
        raise ValueError(f"alignment must be 1, 2, 4, 8 or 16, got {alignment!r}")
    layout_value = _pick(_LAYOUTS, layout, "layout")
    if (layout_value in (pb.LAYOUT_NCDHW, pb.LAYOUT_NDHWC)) != (dims == 3):
        raise ValueError(f"layout {layout!r} does not fit {dims} spatial "
                         "dimensions")
    return pb.ConvProblem(
        op=_pick(_OPS, op, "op"), n=n, c=c, k=k,
        input_spatial=_sizes(input_sizes, dims, "input", 1),
        filter_spatial=_sizes(filter, dims, "filter", 1),
        padding=_sizes(padding, dims, "padding", 0),
        stride=_sizes(stride, dims, "stride", 1),
        dilation=_sizes(dilation, dims, "dilation", 1),
        groups=groups, mode=_pick(_MODES, mode, "mode"),
        input_type=io_type, output_type=io_type, compute_type=compute_type,
        layout=layout_value, allow_tensor_cores=bool(tensor_cores),
        allow_tf32=bool(tf32),
        api=pb.CONV_API_GRAPH if api == "graph" else pb.CONV_API_LEGACY,
        alignment=alignment if api == "graph" else 0)


def conv(*, N, C, H, W, K, R, S, D=None, T=None, stride=1, padding=0,
         dilation=1, groups=1, dtype="float16", memory_format="channels_last",
         op="fwd", **more):
    """A tunedb.v1.ConvProblem from a PyTorch-style description: input
    N x C x H x W (x D first for 3-D), K filters of R x S (T x R x S for
    3-D), as nn.Conv2d/Conv3d and their input tensor describe it.
    memory_format: channels_last (NHWC/NDHWC) or contiguous_format
    (NCHW/NCDHW), as names or torch objects. Other keyword arguments
    (mode, compute, tensor_cores, tf32, api, alignment) go to problem().
    """
    if (D is None) != (T is None):
        raise ValueError("a 3-D convolution needs both D and T")
    channels_last = _pick(_MEMORY_FORMATS, memory_format, "memory_format")
    if D is None:
        spatial, kernel = (H, W), (R, S)
        layout = "nhwc" if channels_last else "nchw"
    else:
        spatial, kernel = (D, H, W), (T, R, S)
        layout = "ndhwc" if channels_last else "ncdhw"
    return problem(n=N, c=C, k=K, input=spatial, filter=kernel,
                   padding=padding, stride=stride, dilation=dilation,
                   groups=groups, op=op, dtype=dtype, layout=layout, **more)


def as_problem(value):
    """A ConvProblem as is; a dict as conv() (upper-case N present) or
    problem() keyword arguments."""
    if isinstance(value, pb.ConvProblem):
        return value
    if isinstance(value, dict):
        return conv(**value) if "N" in value else problem(**value)
    raise TypeError("a problem is a tunedb.v1.ConvProblem or a dict of "
                    f"problem()/conv() arguments, not {type(value).__name__}")
