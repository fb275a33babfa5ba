// GraphShadow: what the program set on its cuDNN backend descriptors, as far
// as the graph half of the preload needs it: tensors, convolution
// descriptors, convolution nodes, operation graphs and engine-heuristics
// descriptors. cuDNN 9 cannot read an operation graph's nodes or a tensor's
// byte alignment back (NOT_SUPPORTED), and frameworks destroy the tensors and
// nodes once the graph is finalized, so the shim records each successful
// cudnnBackendSetAttribute of those attributes here and copies values (not
// pointers) along the links: a node holds copies of its tensors, a graph of
// its nodes, a heuristics descriptor of its graph. A recorded descriptor is
// therefore never read after the program destroyed it, and the shim forgets
// an address whenever cudnnBackendCreateDescriptor returns it again, so a
// new descriptor (of any kind) never inherits an old one's record.
//
// It also knows the engine configs of each lead-only answer (MarkOffer:
// one offer id per answer), so that the shim can tell which offer a plan's
// engine config belongs to (lead_plan_window.h), and the stored plan of each
// answered config that has one (MarkPlans), so that a plan of that config
// loads it instead of compiling (plan_exports.cc). MarksOf tells both. An
// execution plan set to such a config holds it back from cuDNN (cuDNN
// refuses a serialized plan on a plan descriptor that has an engine config)
// until its finalize (HoldConfig, TakeHeld).
//
// Every other attribute costs one switch. The records are bounded
// (kMaxEntries): past that they start over, and a heuristics descriptor
// whose record is gone passes through.
//
// Thread safety: thread-safe (one mutex, taken for recorded attributes,
// once anything was recorded for each descriptor created, and, once an
// offer or a plan was marked, for each execution plan's engine config set).
#ifndef TUNEDB_PRELOAD_GRAPH_SHADOW_H_
#define TUNEDB_PRELOAD_GRAPH_SHADOW_H_

#include <cudnn.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "preload/graph_call.h"
#include "preload/shim_mutex.h"

namespace tunedb::preload {

class GraphShadow {
 public:
  static constexpr size_t kMaxEntries = 1 << 16;

  // One cudnnBackendSetAttribute call's attribute and values.
  struct Attribute {
    cudnnBackendAttributeName_t name;
    cudnnBackendAttributeType_t type;
    int64_t count;
    const void* values;
  };

  static GraphShadow& Instance();

  // Whether `name` is one this records (cheap: no lock).
  static bool Records(cudnnBackendAttributeName_t name);

  // After cudnnBackendSetAttribute(d, name, type, count, values) succeeded:
  // records the attribute if it is one this records (a value of the wrong
  // type or count leaves the record without it).
  void RecordAttribute(cudnnBackendDescriptor_t d,
                       cudnnBackendAttributeName_t name,
                       cudnnBackendAttributeType_t type, int64_t count,
                       const void* values);

  // After cudnnBackendCreateDescriptor returned `d`: whatever was recorded
  // at that address belonged to a destroyed descriptor.
  void Forget(cudnnBackendDescriptor_t d);

  // What was set on heuristics descriptor `d`, if it was recorded, with
  // whether its graph was marked answered.
  std::optional<ShadowHeuristics> Heuristics(cudnnBackendDescriptor_t d) const;

  // An answer for operation graph `graph` held a config every filter keeps
  // (GraphAnswer::universal). Until the address is created again.
  void MarkAnswered(cudnnBackendDescriptor_t graph);

  // The `n` engine configs at `configs` are one lead-only answer (offer);
  // returns its id (never 0). Until their addresses are created again.
  uint64_t MarkOffer(const cudnnBackendDescriptor_t* configs, int64_t n);
  // The same, joining the one offer of operation graph `graph` (made by its
  // first call): every list a caller gets for a graph under a pin or a job
  // (GraphAnswer::one_offer). Without a known graph, a new offer.
  uint64_t MarkGraphOffer(cudnnBackendDescriptor_t graph,
                          const cudnnBackendDescriptor_t* configs, int64_t n);
  // Whether any offer was ever marked (cheap: no lock).
  bool HasOffers() const {
    return offers_marked_.load(std::memory_order_acquire);
  }
  // The `n` engine configs at `configs` were filled with the configs whose
  // stored plans are `plans` (GraphAnswer::plans; null: none). Until their
  // addresses are created again.
  // `handle`: the one set on their operation graph (null if not seen).
  void MarkPlans(const cudnnBackendDescriptor_t* configs,
                 const std::vector<std::shared_ptr<const std::string>>& plans,
                 int64_t n, cudnnHandle_t handle);
  // Whether any plan was ever marked (cheap: no lock).
  bool HasPlans() const {
    return plans_marked_.load(std::memory_order_acquire);
  }

  // What an engine config was marked with: the offer it belongs to (0 if
  // none) and its stored plan (null if none).
  struct ConfigMarks {
    uint64_t offer = 0;
    std::shared_ptr<const std::string> plan;
    cudnnHandle_t graph_handle = nullptr;  // its graph's, with a plan
  };
  ConfigMarks MarksOf(cudnnBackendDescriptor_t config) const;

  // Execution plan `plan` was set to handle `handle` (recorded once any
  // plan was marked).
  void PlanHandleSet(cudnnBackendDescriptor_t plan, cudnnHandle_t handle);
  // Execution plan `plan` is set to engine config `config`, marked `marks`
  // with a stored plan: held here, not set on cuDNN's descriptor.
  void HoldConfig(cudnnBackendDescriptor_t plan,
                  cudnnBackendDescriptor_t config, ConfigMarks marks);
  // What plan `plan` held, once (nullopt if nothing), for its finalize.
  struct HeldPlan {
    cudnnBackendDescriptor_t config = nullptr;
    cudnnHandle_t handle = nullptr;  // the plan's own; null if not seen
    cudnnHandle_t graph_handle = nullptr;  // its config's graph's
    std::shared_ptr<const std::string> stored;
  };
  std::optional<HeldPlan> TakeHeld(cudnnBackendDescriptor_t plan);

 private:
  struct Entry {
    enum Kind {
      kTensor,
      kConvolution,
      kNode,
      kGraph,
      kHeuristics,
      kConfig,  // an engine config of an offer or with a stored plan
      kPlan     // an execution plan (once any plan was marked)
    };
    Kind kind = kTensor;
    uint64_t offer = 0;                       // kConfig; kGraph: its one offer
    std::shared_ptr<const std::string> plan;  // kConfig
    cudnnHandle_t handle = nullptr;           // kConfig, with a plan
    HeldPlan held;                            // kPlan
    ShadowTensor tensor;
    ShadowConvolution conv;
    ShadowNode node;
    ShadowHeuristics heur;  // a graph's nodes and graph_answered too
  };

  // The entry of `d` as `kind`, made (or remade, if it held another kind).
  Entry& EntryOf(cudnnBackendDescriptor_t d, Entry::Kind kind)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // RecordAttribute's steps, by kind of descriptor. The first two return
  // false for an attribute not of their kind.
  bool RecordTensor(cudnnBackendDescriptor_t d, const Attribute& a)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool RecordConvolution(cudnnBackendDescriptor_t d, const Attribute& a)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // An operation graph's nodes: copies of their records.
  void RecordGraphNodes(cudnnBackendDescriptor_t d, const Attribute& a)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A heuristics descriptor's graph: a copy of its nodes, and its address.
  void RecordHeuristicsGraph(cudnnBackendDescriptor_t d, const Attribute& a)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A convolution node's operand or convolution: a copy of its record.
  void RecordNodeOperand(cudnnBackendDescriptor_t d, const Attribute& a)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // A ShimMutex (std::mutex): the shim has no absl::Mutex (shim_mutex.h).
  mutable ShimMutex mu_;
  std::unordered_map<cudnnBackendDescriptor_t, Entry> entries_
      ABSL_GUARDED_BY(mu_);
  // Whether anything was ever recorded: until then Forget takes no lock.
  std::atomic<bool> recorded_{false};
  std::atomic<bool> offers_marked_{false};
  std::atomic<bool> plans_marked_{false};
  uint64_t last_offer_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tunedb::preload

#endif  // TUNEDB_PRELOAD_GRAPH_SHADOW_H_
