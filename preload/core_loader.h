// LoadedCore: the shim's handle on libtunedb_preload_core.so, loaded from
// the shim's own folder with dlopen(RTLD_NOW | RTLD_LOCAL) on first use.
// When it cannot be loaded (missing, another build), every call passes
// through and one line on stderr says why (unless TUNEDB_PRELOAD_LOG=off).
//
// Thread safety: thread-safe; loads once.
#ifndef TUNEDB_PRELOAD_CORE_LOADER_H_
#define TUNEDB_PRELOAD_CORE_LOADER_H_

#include "preload/core_api.h"

namespace tunedb::preload {

// The core's table, or nullptr.
const CoreApi* LoadedCore();

}  // namespace tunedb::preload

#endif  // TUNEDB_PRELOAD_CORE_LOADER_H_
