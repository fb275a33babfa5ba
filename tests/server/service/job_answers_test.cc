// JobAnswers: a job's first answer for a slot is given again to its later
// Lookups, what is kept of an answer, and the bounds on what the answers
// cost.
#include "server/service/job_answers.h"

#include <malloc.h>

#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tunedb {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

v1::AlgoResult Result(int algo, int knobs, size_t plan_bytes) {
  v1::AlgoResult r;
  r.set_algo(algo);
  r.set_median_ms(0.5 + algo);
  r.set_workspace_bytes(int64_t{1} << 20);
  r.mutable_launch()->set_median_ms(0.5 + algo);
  r.mutable_gpu()->set_median_ms(0.4 + algo);
  r.mutable_host()->set_median_ms(0.01);
  for (int i = 0; i < knobs; ++i) {
    v1::Knob* knob = r.add_knobs();
    knob->set_type(i);
    knob->set_value(i * 3);
  }
  r.set_plan(std::string(plan_bytes, 'p'));
  return r;
}

// A graph key's answer: a record of 24 configs with plans and a long key.
v1::LookupResponse GraphAnswer(int algo, int64_t record_id) {
  v1::LookupResponse r;
  *r.mutable_choice()->mutable_algo() = Result(algo, 6, 3000);
  v1::Record* record = r.mutable_record();
  record->set_id(record_id);
  record->set_key_text(std::string(1500, 'k'));
  for (int i = 0; i < 24; ++i) *record->add_results() = Result(i, 6, 800);
  record->set_measured_at_us(record_id * 1000);
  r.set_record_id(record_id);
  r.set_measured_at_us(record_id * 1000);
  return r;
}

v1::LookupResponse Predicted(int first, int candidates) {
  v1::LookupResponse r;
  v1::Prediction* p = r.mutable_prediction();
  for (int i = 0; i < candidates; ++i) {
    *p->add_candidates() = Result(first + i, 6, 0);
  }
  for (int i = 0; i < 3; ++i) p->add_source_keys(std::string(1500, 's'));
  p->set_confidence(0.75);
  p->set_distance(0.5);
  *r.mutable_choice()->mutable_algo() = p->candidates(0);
  return r;
}

TEST(JobAnswersTest, AFreshAnswerThatAgreesIsGivenWhole) {
  JobAnswers answers;
  v1::LookupResponse first = GraphAnswer(7, 11);
  ASSERT_TRUE(answers.Fix("job", "slot", absl::OkStatus(), &first, kT0).ok());
  v1::LookupResponse again = GraphAnswer(7, 11);
  again.mutable_record()->set_served_count(5);
  ASSERT_TRUE(answers.Fix("job", "slot", absl::OkStatus(), &again, kT0).ok());
  EXPECT_EQ(again.record().served_count(), 5);
  EXPECT_EQ(again.record().results_size(), 24);
  EXPECT_EQ(again.choice().algo().plan().size(), 3000u);
}

TEST(JobAnswersTest, AChangedAnswerGivesTheFirstChoiceWithoutTheRecord) {
  JobAnswers answers;
  v1::LookupResponse first = GraphAnswer(7, 11);
  ASSERT_TRUE(answers.Fix("job", "slot", absl::OkStatus(), &first, kT0).ok());
  // A search stored another record, whose choice is algo 3.
  v1::LookupResponse later = GraphAnswer(3, 12);
  ASSERT_TRUE(answers.Fix("job", "slot", absl::OkStatus(), &later, kT0).ok());
  EXPECT_EQ(later.choice().algo().algo(), 7);
  EXPECT_EQ(later.choice().algo().knobs_size(), 6);
  EXPECT_EQ(later.choice().algo().launch().median_ms(), 7.5);
  EXPECT_TRUE(later.choice().algo().plan().empty());
  EXPECT_EQ(later.record_id(), 11);
  EXPECT_EQ(later.measured_at_us(), 11000);
  EXPECT_FALSE(later.has_record());
  // Another job, and another slot of the job, get their own first answers.
  v1::LookupResponse other = GraphAnswer(3, 12);
  ASSERT_TRUE(answers.Fix("job2", "slot", absl::OkStatus(), &other, kT0).ok());
  EXPECT_EQ(other.choice().algo().algo(), 3);
  v1::LookupResponse slot2 = GraphAnswer(3, 12);
  ASSERT_TRUE(answers.Fix("job", "slot2", absl::OkStatus(), &slot2, kT0).ok());
  EXPECT_EQ(slot2.choice().algo().algo(), 3);
  EXPECT_EQ(answers.entries(), 3);
  EXPECT_EQ(answers.jobs(), 2);
}

TEST(JobAnswersTest, NotFoundStaysTheAnswer) {
  JobAnswers answers;
  v1::LookupResponse none;
  EXPECT_TRUE(absl::IsNotFound(answers.Fix(
      "job", "slot", absl::NotFoundError("no record for key 1234"), &none,
      kT0)));
  v1::LookupResponse found = GraphAnswer(7, 11);
  const absl::Status s =
      answers.Fix("job", "slot", absl::OkStatus(), &found, kT0);
  EXPECT_TRUE(absl::IsNotFound(s));
  EXPECT_EQ(s.message(), "no record for key 1234");
  EXPECT_FALSE(found.has_choice());
  EXPECT_FALSE(found.has_record());
}

TEST(JobAnswersTest, APredictionKeepsItsCandidatesConfidenceAndDistance) {
  JobAnswers answers;
  v1::LookupResponse first = Predicted(5, 3);
  ASSERT_TRUE(answers.Fix("job", "slot", absl::OkStatus(), &first, kT0).ok());
  v1::LookupResponse later = Predicted(9, 2);
  ASSERT_TRUE(answers.Fix("job", "slot", absl::OkStatus(), &later, kT0).ok());
  EXPECT_EQ(later.choice().algo().algo(), 5);
  ASSERT_EQ(later.prediction().candidates_size(), 3);
  EXPECT_EQ(later.prediction().candidates(2).algo(), 7);
  EXPECT_EQ(later.prediction().confidence(), 0.75);
  EXPECT_EQ(later.prediction().distance(), 0.5);
  EXPECT_EQ(later.prediction().source_keys_size(), 0);
  // Agreeing, the fresh prediction is given whole, its sources included.
  v1::LookupResponse same = Predicted(5, 3);
  ASSERT_TRUE(answers.Fix("job", "slot", absl::OkStatus(), &same, kT0).ok());
  EXPECT_EQ(same.prediction().source_keys_size(), 3);
}

TEST(JobAnswersTest, AKeptAnswerDropsLastCandidatesPastItsBound) {
  const std::string kept = JobAnswers::KeptAnswer(Predicted(1, 40));
  EXPECT_LE(kept.size(), JobAnswers::kMaxAnswerBytes);
  v1::LookupResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(kept));
  EXPECT_GT(parsed.prediction().candidates_size(), 1);
  EXPECT_LT(parsed.prediction().candidates_size(), 40);
  EXPECT_EQ(parsed.prediction().candidates(0).algo(), 1);
}

// Issue 50: each answer kept the whole LookupResponse, 4.4 KB (5.7 KB for a
// graph key). Target: at most 1 KiB an answer, counted and on the heap.
TEST(JobAnswersTest, AnAnswerCostsAtMostOneKiB) {
  constexpr int kJobs = 20000;
  const std::string slot_text(2000, 'x');  // a graph key and constraints
  const v1::LookupResponse answer = GraphAnswer(7, 11);
  JobAnswers answers;
  const size_t heap_before = mallinfo2().uordblks;
  for (int i = 0; i < kJobs; ++i) {
    v1::LookupResponse response = answer;
    // Job ids at the longest a Lookup accepts (128 characters).
    std::string job = std::to_string(i);
    job.resize(128, 'j');
    ASSERT_TRUE(answers.Fix(job, slot_text + std::to_string(i),
                            absl::OkStatus(), &response, kT0)
                    .ok());
  }
  const size_t heap_after = mallinfo2().uordblks;
  ASSERT_EQ(answers.entries(), kJobs);
  const double counted = static_cast<double>(answers.bytes()) / kJobs;
  const double heap =
      static_cast<double>(heap_after - heap_before) / kJobs;
  RecordProperty("counted_bytes_per_answer", static_cast<int>(counted));
  RecordProperty("heap_bytes_per_answer", static_cast<int>(heap));
  EXPECT_LE(counted, 1024) << counted;
  EXPECT_LE(heap, 1024) << heap;
  EXPECT_LE(counted, heap * 1.5) << "the count is close to the heap's";
}

TEST(JobAnswersTest, PastTheByteBoundAnswersAreGivenButNotFixed) {
  JobAnswers::Options options;
  options.max_bytes = 10 * 1024;
  JobAnswers answers(options);
  for (int i = 0; i < 100; ++i) {
    v1::LookupResponse r = GraphAnswer(7, 11);
    ASSERT_TRUE(answers.Fix("job" + std::to_string(i), "slot",
                            absl::OkStatus(), &r, kT0)
                    .ok());
  }
  EXPECT_LE(answers.bytes(), options.max_bytes);
  EXPECT_GT(answers.entries(), 0);
  EXPECT_EQ(answers.entries() + answers.not_fixed(), 100);
  EXPECT_EQ(answers.jobs(), answers.entries());
  // A job whose answer was not fixed gets the fresh answer.
  v1::LookupResponse r = GraphAnswer(3, 12);
  ASSERT_TRUE(answers.Fix("job99", "slot", absl::OkStatus(), &r, kT0).ok());
  EXPECT_EQ(r.choice().algo().algo(), 3);
}

TEST(JobAnswersTest, IdleJobsAreForgottenWithTheirBytes) {
  JobAnswers::Options options;
  options.idle_ttl = absl::Hours(1);
  JobAnswers answers(options);
  v1::LookupResponse r = GraphAnswer(7, 11);
  ASSERT_TRUE(answers.Fix("old", "slot", absl::OkStatus(), &r, kT0).ok());
  EXPECT_GT(answers.bytes(), 0);
  v1::LookupResponse later = GraphAnswer(3, 12);
  ASSERT_TRUE(answers.Fix("new", "slot", absl::OkStatus(), &later,
                          kT0 + absl::Hours(2))
                  .ok());
  EXPECT_EQ(answers.jobs(), 1);
  EXPECT_EQ(answers.entries(), 1);
  v1::LookupResponse again = GraphAnswer(3, 12);
  ASSERT_TRUE(answers.Fix("old", "slot", absl::OkStatus(), &again,
                          kT0 + absl::Hours(2))
                  .ok());
  EXPECT_EQ(again.choice().algo().algo(), 3);  // forgotten: a new answer
}

}  // namespace
}  // namespace tunedb
