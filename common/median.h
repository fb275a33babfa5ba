// Median: the median of a set of samples, the one rule for the search's
// timings and the CLI's reports.
//
// Thread safety: a pure function.
#ifndef TUNEDB_COMMON_MEDIAN_H_
#define TUNEDB_COMMON_MEDIAN_H_

#include <vector>

namespace tunedb {

// The median (the mean of the middle two for an even count); 0 if empty.
double Median(std::vector<double> samples);

}  // namespace tunedb

#endif  // TUNEDB_COMMON_MEDIAN_H_
