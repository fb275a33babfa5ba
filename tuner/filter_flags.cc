#include "tuner/filter_flags.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/key_fields.h"
#include "common/status_macros.h"
#include "tunedb/problem.h"
#include "tuner/format.h"
#include "tuner/training_problems.h"

namespace tunedb::tuner {

void AddFilterFlags(CLI::App* cmd, FilterFlags* flags) {
  cmd->add_option("-f,--filter", flags->filters,
                  "Key field=value to match (repeatable); fields: kv gpu cc "
                  "sms cudnn cuda op n c k in filt pad stride dil groups mode "
                  "in_type out_type compute layout tc tf32 api align");
  cmd->add_option("--gpu", flags->gpu, "Same as --filter gpu=MODEL");
  cmd->add_option("--op", flags->op,
                  "Same as --filter op=OP (fwd, bwd_data, bwd_filter)");
  cmd->add_option("--dtype", flags->dtype,
                  "Data type: fp32, fp32-no-tf32, fp16, bf16 (sets in_type, "
                  "and tf32 for the fp32 variants)");
  cmd->add_option("--layout", flags->layout,
                  "Same as --filter layout=L (nchw, nhwc, ncdhw, ndhwc)");
  cmd->add_option(
      "--since", flags->since,
      "Measured at or after: RFC 3339 time, date, or age (24h, 7d)");
  cmd->add_option("--until", flags->until,
                  "Measured before: RFC 3339 time, date, or age (24h, 7d)");
}

absl::StatusOr<absl::Time> ParseTimeBound(const std::string& text,
                                          absl::Time now) {
  absl::Time t;
  std::string err;
  if (absl::ParseTime(absl::RFC3339_full, text, &t, &err)) return t;
  if (absl::ParseTime("%Y-%m-%d", text, absl::UTCTimeZone(), &t, &err))
    return t;
  if (text.size() >= 2) {
    int64_t count = 0;
    const char unit = text.back();
    if (absl::SimpleAtoi(text.substr(0, text.size() - 1), &count) &&
        count >= 0) {
      switch (unit) {
        case 's':
          return now - absl::Seconds(count);
        case 'm':
          return now - absl::Minutes(count);
        case 'h':
          return now - absl::Hours(count);
        case 'd':
          return now - absl::Hours(24 * count);
        case 'w':
          return now - absl::Hours(24 * 7 * count);
        default:
          break;
      }
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("'", text,
                   "' is not a time: use RFC 3339 (2026-11-29T12:00:00Z), a "
                   "date (2026-11-29) or an age (90m, 24h, 7d, 2w)"));
}

namespace {

using FilterFields = google::protobuf::Map<std::string, std::string>;

// Sets `field` to `value` for `flag`: a key field or "hash" (the
// 16-hex-digit key hash, the daemon's key-hash index), not given twice with
// different values.
absl::Status AddField(FilterFields& fields, const std::string& flag,
                      const std::string& field, const std::string& value) {
  const auto& names = KeyFieldNames();
  const bool hash = field == "hash";
  if (!hash && std::find(names.begin(), names.end(), field) == names.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": unknown key field '", field, "'; fields: ",
                     absl::StrJoin(names.begin(), names.end(), " "), " hash"));
  }
  if (hash &&
      (value.size() != 16 ||
       value.find_first_not_of("0123456789abcdef") != std::string::npos)) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": hash '", value,
                     "' is not a key hash (16 lower-case hex digits)"));
  }
  auto it = fields.find(field);
  if (it != fields.end() && it->second != value) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": field '", field, "' given twice ('", it->second,
                     "' and '", value, "')"));
  }
  fields[field] = value;
  return absl::OkStatus();
}

// field=value terms of --filter and the positional ones.
absl::Status AddTerms(FilterFields& fields,
                      const std::vector<std::string>& terms) {
  for (const std::string& term : terms) {
    const size_t eq = term.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--filter '", term, "': expected field=value, e.g. op=fwd"));
    }
    RETURN_IF_ERROR(
        AddField(fields, "--filter", term.substr(0, eq), term.substr(eq + 1)));
  }
  return absl::OkStatus();
}

// --dtype as the key fields its preset sets: in_type, and tf32 for fp32.
absl::Status AddDtype(FilterFields& fields, const std::string& dtype) {
  auto preset = ParseDtypePreset(dtype);
  if (!preset.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dtype: ", preset.status().message()));
  }
  ConvProblem p;
  ApplyDtypePreset(*preset, p);
  RETURN_IF_ERROR(AddField(fields, "--dtype", "in_type",
                           std::string(DataTypeName(p.input_type))));
  if (*preset == DtypePreset::kFp32 || *preset == DtypePreset::kFp32NoTf32) {
    RETURN_IF_ERROR(
        AddField(fields, "--dtype", "tf32", p.allow_tf32 ? "1" : "0"));
  }
  return absl::OkStatus();
}

// --gpu, --op, --dtype and --layout.
absl::Status AddFieldFlags(FilterFields& fields, const FilterFlags& flags) {
  if (!flags.gpu.empty()) {
    RETURN_IF_ERROR(AddField(fields, "--gpu", "gpu", flags.gpu));
  }
  if (!flags.op.empty()) {
    if (!ParseConvOp(flags.op).ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--op '", flags.op, "' is not one of fwd, bwd_data, bwd_filter"));
    }
    RETURN_IF_ERROR(AddField(fields, "--op", "op", flags.op));
  }
  if (!flags.dtype.empty()) RETURN_IF_ERROR(AddDtype(fields, flags.dtype));
  if (!flags.layout.empty()) {
    auto layout = ParseLayout(absl::AsciiStrToLower(flags.layout));
    if (!layout.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--layout '", flags.layout, "' is not nchw, nhwc, ncdhw or ndhwc"));
    }
    RETURN_IF_ERROR(AddField(fields, "--layout", "layout",
                             std::string(LayoutName(*layout))));
  }
  return absl::OkStatus();
}

// --since or --until as µs since the epoch; 0 if not given.
absl::StatusOr<int64_t> TimeBoundUs(const std::string& flag,
                                    const std::string& text, absl::Time now) {
  if (text.empty()) return 0;
  auto t = ParseTimeBound(text, now);
  if (!t.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", t.status().message()));
  }
  return absl::ToUnixMicros(*t);
}

}  // namespace

absl::StatusOr<v1::Filter> BuildFilter(const FilterFlags& flags,
                                       const std::vector<std::string>& extra,
                                       absl::Time now) {
  v1::Filter filter;
  FilterFields& fields = *filter.mutable_fields();
  std::vector<std::string> terms = flags.filters;
  terms.insert(terms.end(), extra.begin(), extra.end());
  RETURN_IF_ERROR(AddTerms(fields, terms));
  RETURN_IF_ERROR(AddFieldFlags(fields, flags));
  ASSIGN_OR_RETURN(const int64_t since_us,
                   TimeBoundUs("--since", flags.since, now));
  if (since_us != 0) filter.set_since_us(since_us);
  ASSIGN_OR_RETURN(const int64_t until_us,
                   TimeBoundUs("--until", flags.until, now));
  if (until_us != 0) filter.set_until_us(until_us);
  return filter;
}

std::string DescribeFilter(const v1::Filter& filter) {
  std::vector<std::string> parts;
  std::map<std::string, std::string> sorted(filter.fields().begin(),
                                            filter.fields().end());
  for (const auto& [k, v] : sorted) parts.push_back(absl::StrCat(k, "=", v));
  if (filter.since_us() != 0) {
    parts.push_back(absl::StrCat("since ", FormatTime(filter.since_us())));
  }
  if (filter.until_us() != 0) {
    parts.push_back(absl::StrCat("until ", FormatTime(filter.until_us())));
  }
  return parts.empty() ? "(everything)" : absl::StrJoin(parts, ", ");
}

}  // namespace tunedb::tuner
