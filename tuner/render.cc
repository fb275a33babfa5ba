#include "tuner/render.h"

namespace tunedb::tuner {

OutputForm FormOf(const CliContext& ctx, bool csv) {
  if (ctx.json()) return OutputForm::kJson;
  return csv ? OutputForm::kCsv : OutputForm::kText;
}

void PrintJson(std::ostream& out, const nlohmann::json& j) {
  out << j.dump(2) << "\n";
}

}  // namespace tunedb::tuner
