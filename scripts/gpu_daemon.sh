# Sourced by the GPU benchmark scripts (pytorch_dropin.sh,
# varying_shapes.sh): start_gpu_daemon DB SOCKET LOG starts the bundle's
# tunedbd ($B) with the cuDNN finder on PyTorch's cuDNN ($PIP_CUDNN, with
# $EXTRA's libraries; cudnn_env.sh sets both), stops it when the script
# exits, and waits up to 30 s for its socket. Sets DAEMON to its pid.
start_gpu_daemon() {
  local db=$1 sock=$2 log=$3
  LD_LIBRARY_PATH="$B/lib${EXTRA:+:$EXTRA}" "$B/bin/tunedbd" --db "$db" \
    --socket "$sock" --finder cudnn --cudnn-lib-dir "$PIP_CUDNN" \
    --worker "$B/bin/tunedb-worker" --log-level info > "$log" 2>&1 &
  DAEMON=$!
  trap 'kill -TERM $DAEMON 2>/dev/null; wait $DAEMON 2>/dev/null' EXIT
  for _ in $(seq 1 300); do [[ -S "$sock" ]] && break; sleep 0.1; done
}
