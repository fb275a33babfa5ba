# Sourced by the GPU scripts that run PyTorch under `tunedb run` as a new
# user does (run_nothing_set_up.sh, warm_program_wait.sh): the clock warm-up
# and the wait for the user's daemon to have searched what it was asked.
# Uses $PY (the python with PyTorch) and $B (the bundle).

# A new user on PyTorch's legacy cuDNN path: no daemon address, empty
# runtime and cache folders; SOCK is where `tunedb run` puts the user's
# daemon. Then names the GPU and warms its clock.
as_new_user() {
  export TORCH_CUDNN_V8_API_DISABLED=1
  unset TUNEDB_ADDRESS
  export XDG_RUNTIME_DIR=$(mktemp -d) XDG_CACHE_HOME=$(mktemp -d)
  chmod 700 "$XDG_RUNTIME_DIR"
  SOCK="$XDG_RUNTIME_DIR/tunedb/tunedbd.sock"
  echo "=== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
  warm_gpu
}

# Five seconds of bf16 matrix products: the GPU's clock ramps from 345 MHz.
warm_gpu() {
  "$PY" - <<'PY'
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
t = time.time()
while time.time() - t < 5:
    a @ a
torch.cuda.synchronize()
PY
}

# idle SOCK [TRIES]: waits (TRIES x 2 s, default 150) until the daemon on
# SOCK has no search queued, then prints its records, searches and queues.
idle() {
  local sock=$1 tries=${2:-150} q
  for _ in $(seq "$tries"); do
    q=$("$B/bin/tunedb" --address "unix:$sock" stats --json 2>/dev/null |
        "$PY" -c 'import json,sys; d=json.load(sys.stdin); print(sum(d.get("queue_depths",{}).values()) if isinstance(d.get("queue_depths"),dict) else d)' 2>/dev/null)
    [[ "$q" == 0 ]] && break
    sleep 2
  done
  "$B/bin/tunedb" --address "unix:$sock" stats | grep -E 'records|searches|queues'
}
