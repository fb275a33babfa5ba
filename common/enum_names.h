// EnumNames: the one idiom for an enum's text names — a constant table of
// (value, name) pairs with Name and Parse over it. A value may have several
// names (aliases accepted by Parse); its first name in the table is the one
// Name returns.
//
//   constexpr EnumNames<ConvOp, 3> kOps("op", {{{ConvOp::kForward, "fwd"},
//                                               ...}});
//   kOps.Name(ConvOp::kForward)  // "fwd"
//   kOps.Parse("fwd")            // ConvOp::kForward, or INVALID_ARGUMENT
//
// Thread safety: immutable constants; every method is const.
#ifndef TUNEDB_COMMON_ENUM_NAMES_H_
#define TUNEDB_COMMON_ENUM_NAMES_H_

#include <array>
#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace tunedb {

template <typename E>
struct EnumName {
  E value;
  absl::string_view name;
};

template <typename E, size_t N>
class EnumNames {
 public:
  // `what` names the enum in error messages ("op", "data type").
  constexpr EnumNames(absl::string_view what,
                      const std::array<EnumName<E>, N>& names)
      : what_(what), names_(names) {}

  // The first name of `value`; "?" for a value outside the table.
  absl::string_view Name(E value) const {
    for (const EnumName<E>& e : names_) {
      if (e.value == value) return e.name;
    }
    return "?";
  }

  // The value with exactly this name (or alias), or nullopt.
  std::optional<E> Find(absl::string_view name) const {
    for (const EnumName<E>& e : names_) {
      if (e.name == name) return e.value;
    }
    return std::nullopt;
  }

  // Whether `value` is in the table (a cast from a number may not be).
  bool Contains(E value) const {
    for (const EnumName<E>& e : names_) {
      if (e.value == value) return true;
    }
    return false;
  }

  // The first name of every value, in table order: "fwd, bwd_data, ...".
  std::string NameList() const {
    std::string out;
    for (size_t i = 0; i < N; ++i) {
      if (Name(names_[i].value) != names_[i].name) continue;  // an alias
      absl::StrAppend(&out, out.empty() ? "" : ", ", names_[i].name);
    }
    return out;
  }

  // Find, or INVALID_ARGUMENT "unknown <what> '<name>' (expected one of
  // <NameList()>)".
  absl::StatusOr<E> Parse(absl::string_view name) const {
    if (std::optional<E> value = Find(name)) return *value;
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown ", what_, " '", name, "' (expected one of ", NameList(), ")"));
  }

 private:
  absl::string_view what_;
  std::array<EnumName<E>, N> names_;
};

}  // namespace tunedb

#endif  // TUNEDB_COMMON_ENUM_NAMES_H_
