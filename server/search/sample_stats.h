// Summaries of timed samples: the median the search ranks by and the spread
// it stores beside it.
//
// Thread safety: pure functions.
#ifndef TUNEDB_SERVER_SEARCH_SAMPLE_STATS_H_
#define TUNEDB_SERVER_SEARCH_SAMPLE_STATS_H_

#include <vector>

namespace tunedb {

// The median (the mean of the middle two for an even count); 0 if empty.
double Median(std::vector<double> samples);

// max - min; 0 if empty.
double Spread(const std::vector<double>& samples);

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SEARCH_SAMPLE_STATS_H_
