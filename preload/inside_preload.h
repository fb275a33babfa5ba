// InsidePreload: marks the current thread as inside one of the shim's entry
// points, so that a cuDNN call made while it answers (cuDNN's own heuristic
// behind a legacy answer, or cuDNN calling its own exported functions) goes
// straight to cuDNN instead of being answered again.
//
// Thread safety: per thread.
#ifndef TUNEDB_PRELOAD_INSIDE_PRELOAD_H_
#define TUNEDB_PRELOAD_INSIDE_PRELOAD_H_

namespace tunedb::preload {

inline thread_local bool inside_preload = false;

struct InsidePreload {
  InsidePreload() { inside_preload = true; }
  ~InsidePreload() { inside_preload = false; }
  InsidePreload(const InsidePreload&) = delete;
  InsidePreload& operator=(const InsidePreload&) = delete;
};

}  // namespace tunedb::preload

#endif  // TUNEDB_PRELOAD_INSIDE_PRELOAD_H_
