# Sourced by the GPU scripts (gpu_suite.sh, regret_run.sh) on a GPU machine:
# finds the cuDNN folders there and sets
#   PIP_CUDNN  PyTorch's pip package nvidia.cudnn's lib folder (or empty)
#   SYS_CUDNN  the system libcudnn.so.9's folder (or empty)
#   EXTRA      the other pip CUDA library folders cuDNN may load (cuBLAS(Lt),
#              NVRTC), never another cuDNN
#   FIRST      the cuDNN folder tests run with: the pip one, else the system's
#   DIRS       "pip:system" when both exist and differ, else empty
PIP_CUDNN=$(python3 - <<'PY' 2>/dev/null
import os
try:
    import nvidia.cudnn as m
    base = os.path.dirname(m.__file__) if getattr(m, "__file__", None) else list(m.__path__)[0]
    print(os.path.join(base, "lib"))
except Exception:
    pass
PY
)
if [[ -z "$PIP_CUDNN" || ! -e "$PIP_CUDNN/libcudnn.so.9" ]]; then
  PIP_CUDNN=$(dirname "$(ls /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib/libcudnn.so.9 \
    /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib/libcudnn.so.9 2>/dev/null | head -1)" 2>/dev/null)
fi
SYS_CUDNN=$(ldconfig -p | awk '/libcudnn\.so\.9 / {print $NF; exit}')
SYS_CUDNN=${SYS_CUDNN:+$(dirname "$(readlink -f "$SYS_CUDNN")")}
# Other CUDA libraries cuDNN may load (cuBLAS(Lt), NVRTC) from the pip
# packages; never another cuDNN.
EXTRA=$(python3 - <<'PY' 2>/dev/null
import os, glob
try:
    import nvidia
    roots = list(nvidia.__path__)
except Exception:
    roots = []
dirs = []
for r in roots:
    for d in sorted(glob.glob(os.path.join(r, "*", "lib"))):
        if "cudnn" not in d:
            dirs.append(d)
print(":".join(dirs))
PY
)
FIRST=${PIP_CUDNN:-$SYS_CUDNN}
DIRS=""
[[ -n "$PIP_CUDNN" && -n "$SYS_CUDNN" && "$PIP_CUDNN" != "$SYS_CUDNN" ]] && DIRS="$PIP_CUDNN:$SYS_CUDNN"
