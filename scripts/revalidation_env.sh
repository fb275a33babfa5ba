# Sourced by the revalidation scripts on a GPU machine with cuDNN 9.14 and
# 9.19 (revalidate_run.sh, revalidation_agree.sh, revalidate_on_start_run.sh)
# after they set PY and WORK: sets OUT (default ./out) and HERE (the scripts
# folder), makes both folders, finds the cuDNN folders (cudnn_env.sh: PIP_CUDNN,
# SYS_CUDNN, EXTRA) and exits unless both exist. Defines
#   plain DIR NAME AS   DIR/NAME.jsonl or DIR/NAME.jsonl.xz as the plain file
#                       $WORK/AS.jsonl; prints its path (fails where neither is)
OUT=${OUT:-$PWD/out}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT" "$WORK"
PATH="$(dirname "$PY"):$PATH" source "$HERE/cudnn_env.sh"
[[ -n "$PIP_CUDNN" && -n "$SYS_CUDNN" ]] ||
  { echo "needs both PyTorch's cuDNN and the system's"; exit 1; }
plain() {
  local to="$WORK/$3.jsonl"
  if [[ -f "$1/$2.jsonl" ]]; then cp "$1/$2.jsonl" "$to"
  elif [[ -f "$1/$2.jsonl.xz" ]]; then xz -dc "$1/$2.jsonl.xz" > "$to"
  else return 1; fi
  echo "$to"
}
