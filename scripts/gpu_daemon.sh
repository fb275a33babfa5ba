# Sourced by the GPU benchmark scripts (pytorch_dropin.sh,
# varying_shapes.sh, unseen_sizes.sh, model_table.sh, warm_ab.sh):
# start_gpu_daemon DB SOCKET LOG [FLAGS...] starts the bundle's tunedbd ($B)
# with the cuDNN finder on PyTorch's cuDNN ($PIP_CUDNN, with $EXTRA's
# libraries; cudnn_env.sh sets both) and FLAGS, stops it when the script
# exits, and waits up to 30 s for its socket (appending to LOG). Sets DAEMON
# to its pid; stop_gpu_daemon stops it and waits.
start_gpu_daemon() {
  local db=$1 sock=$2 log=$3
  shift 3
  LD_LIBRARY_PATH="$B/lib${EXTRA:+:$EXTRA}" "$B/bin/tunedbd" --db "$db" \
    --socket "$sock" --finder cudnn --cudnn-lib-dir "$PIP_CUDNN" \
    --worker "$B/bin/tunedb-worker" --log-level info "$@" >> "$log" 2>&1 &
  DAEMON=$!
  trap 'kill -TERM $DAEMON 2>/dev/null; wait $DAEMON 2>/dev/null' EXIT
  for _ in $(seq 1 300); do [[ -S "$sock" ]] && break; sleep 0.1; done
}

stop_gpu_daemon() {
  kill -TERM "$DAEMON" 2>/dev/null
  wait "$DAEMON" 2>/dev/null
}

# use_pytorch_cudnn: PyTorch's cuDNN found from $PY's folder (cudnn_env.sh,
# in $HERE); ends the script when PyTorch has no cuDNN package.
use_pytorch_cudnn() {
  PATH="$(dirname "$PY"):$PATH" source "$HERE/cudnn_env.sh"
  [[ -n "$PIP_CUDNN" ]] || { echo "no nvidia.cudnn package next to PyTorch"; exit 1; }
}

# start_bench_daemon NAME: PyTorch's cuDNN found from $PY's folder
# (cudnn_env.sh, in $HERE), then a daemon on $WORK/NAME.db (emptied first)
# at $WORK/d.sock, logging to $OUT/tunedbd.log. Sets SOCK and ADDR; ends the
# script when PyTorch has no cuDNN package or the daemon does not answer.
start_bench_daemon() {
  use_pytorch_cudnn
  SOCK="$WORK/d.sock"
  ADDR="unix:$SOCK"
  rm -f "$SOCK" "$WORK/$1".db*
  start_gpu_daemon "$WORK/$1.db" "$SOCK" "$OUT/tunedbd.log"
  "$B/bin/tunedb" --address "$ADDR" devices > /dev/null ||
    { echo "daemon did not come up"; exit 1; }
}
