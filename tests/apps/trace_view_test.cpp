// `tinyddp trace-view`: the SVG's structure (well-formed, one row per rank, lanes, legend, the error marked
// and explained), iteration selection, and traces without iterations.
#include <gtest/gtest.h>

#include <regex>

#include "apps/tinyddp/repro/scenarios.h"
#include "apps/tinyddp/trace/trace_view.h"
#include "trace_test_util.h"

namespace tinyddp::app {
namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + what.size())) ++n;
  return n;
}

// Well-formed XML, as far as an SVG needs: every element closed in order, attributes quoted, entities valid.
void expect_well_formed(const std::string& svg) {
  std::vector<std::string> open;
  size_t pos = 0;
  while ((pos = svg.find('<', pos)) != std::string::npos) {
    const size_t end = svg.find('>', pos);
    ASSERT_NE(end, std::string::npos) << "unterminated tag at " << pos;
    const std::string tag = svg.substr(pos + 1, end - pos - 1);
    ASSERT_FALSE(tag.empty());
    if (tag[0] == '/') {
      ASSERT_FALSE(open.empty()) << "</" << tag << "> closes nothing";
      EXPECT_EQ(tag.substr(1), open.back());
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(tag.substr(0, tag.find(' ')));
    }
    EXPECT_EQ(count(tag, "\"") % 2, 0u) << tag;
    pos = end + 1;
  }
  EXPECT_TRUE(open.empty()) << open.size() << " elements left open, the first " << (open.empty() ? "" : open[0]);
  EXPECT_FALSE(std::regex_search(svg, std::regex("&(?!(amp|lt|gt|quot|apos);)"))) << "a bare & in the SVG";
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf\""), std::string::npos);
}

TEST(TraceView, DrawsOneRowPerRankWithLanesAndALegend) {
  const Scenario& s = *find_scenario("two-backward");
  ReproResult result;
  ReproOptions o;
  o.ranks = 3;
  const nlohmann::json t = testing::traced_repro(s.name, s.plan, o, &result);
  const std::string svg = render_trace_svg(t, {.iteration = 1});
  ASSERT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  expect_well_formed(svg);
  EXPECT_EQ(count(svg, "<g class=\"rank-row\""), 3u);
  for (int r = 0; r < 3; ++r) EXPECT_NE(svg.find("data-rank=\"" + std::to_string(r) + "\""), std::string::npos);
  for (const char* lane : {">calls<", ">autograd<", ">reducer hooks<", ">reducer<", ">comm<"})
    EXPECT_EQ(count(svg, lane), 3u) << lane;
  EXPECT_EQ(count(svg, "<g class=\"legend\""), 1u);
  EXPECT_NE(svg.find("two-backward · iteration 1"), std::string::npos);
  // The error: a numbered marker per rank, and one note naming the parameter marked twice.
  EXPECT_NE(svg.find("ranks 0, 1, 2: RuntimeError at backward #2 of iteration 1"), std::string::npos);
  EXPECT_NE(svg.find("Parameter at index 3 has been marked as ready twice"), std::string::npos);
  EXPECT_NE(svg.find("allreduce bucket 0"), std::string::npos);
}

TEST(TraceView, SelectsTheIteration) {
  const Scenario& s = *find_scenario("combined-loss");
  ReproResult result;
  const nlohmann::json t = testing::traced_repro(s.name, s.plan, ReproOptions{}, &result);
  const std::string second = render_trace_svg(t, {.iteration = 2});
  expect_well_formed(second);
  EXPECT_NE(second.find("iteration 2"), std::string::npos);
  EXPECT_NE(second.find("rebuilt"), std::string::npos);   // the buckets are rebuilt at iteration 2's forward
  EXPECT_EQ(render_trace_svg(t, {.iteration = 1}).find("rebuilt"), std::string::npos);
  try {
    render_trace_svg(t, {.iteration = 7});
    FAIL() << "iteration 7 does not exist";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("it has iterations 1, 2, 3"), std::string::npos) << e.what();
  }
}

TEST(TraceView, DrawsATraceWithoutIterationsWhole) {
  trace::Event fwd{'X', {"call", "forward", {}}, 0, trace::kComputeTrack, 10, 30};
  trace::Event comm{'X', {"comm", "allreduce", {{"bytes", int64_t{64}}}}, 0, trace::kCommTrack, 20, 50};
  const std::string svg = render_trace_svg(dist::chrome_trace({fwd, comm}, {}), {});
  expect_well_formed(svg);
  EXPECT_NE(svg.find("whole trace"), std::string::npos);
  EXPECT_EQ(count(svg, "<g class=\"rank-row\""), 1u);
}

}  // namespace
}  // namespace tinyddp::app
