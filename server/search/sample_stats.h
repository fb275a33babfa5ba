// Summaries of timed samples: the median the search ranks by (Median,
// common/median.h) and the spread it stores beside it.
//
// Thread safety: pure functions.
#ifndef TUNEDB_SERVER_SEARCH_SAMPLE_STATS_H_
#define TUNEDB_SERVER_SEARCH_SAMPLE_STATS_H_

#include <vector>

#include "common/median.h"

namespace tunedb {

// max - min; 0 if empty.
double Spread(const std::vector<double>& samples);

// Whether a leader with samples `leader` need not be told apart from a rival
// with samples `rival` any more: the rival is a near-tie (its median within
// `tie_margin` of the leader's, so either is as good a choice) or clearly
// slower (its fastest sample slower than the leader's median). True when
// either has no samples.
bool SettledAgainst(const std::vector<double>& leader,
                    const std::vector<double>& rival, double tie_margin);

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SEARCH_SAMPLE_STATS_H_
