#include "apps/tinyddp/repro/plan.h"

#include <cctype>
#include <sstream>

#include "base/error.h"

namespace tinyddp::app {

namespace {

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}

  std::vector<PlanStep> parse() {
    std::vector<PlanStep> steps = parse_steps('\0');
    skip_space();
    if (pos_ < s_.size()) fail("';' or the end of the plan");
    return steps;
  }

 private:
  std::vector<PlanStep> parse_steps(char close) {
    std::vector<PlanStep> steps;
    while (true) {
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] == close) break;
      steps.push_back(parse_step());
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == ';') {
        ++pos_;
        continue;
      }
      break;
    }
    if (steps.empty()) fail("a step (forward, backward(...), no_sync{...} or step)");
    return steps;
  }

  PlanStep parse_step() {
    const std::string word = identifier();
    PlanStep step{};
    if (word == "forward") {
      step.kind = PlanStep::Kind::forward;
      skip_space();
      if (peek('(')) {
        ++pos_;
        const std::string mode = identifier();
        if (mode == "no_text") step.mode = models::TextMode::no_text;
        else if (mode == "drop_text") step.mode = models::TextMode::drop_text;
        else if (mode == "detach") step.mode = models::TextMode::detach;
        else fail("no_text, drop_text or detach inside forward(...)", mode);
        expect(')');
      }
    } else if (word == "backward") {
      step.kind = PlanStep::Kind::backward;
      expect('(');
      do step.terms.push_back(term());
      while (accept('+'));
      if (accept(',')) {
        const std::string opt = identifier();
        if (opt != "retain") fail("'retain' after the loss expression", opt);
        step.retain = true;
      }
      expect(')');
    } else if (word == "no_sync") {
      step.kind = PlanStep::Kind::no_sync;
      expect('{');
      step.body = parse_steps('}');
      for (const PlanStep& inner : step.body)
        if (inner.kind == PlanStep::Kind::no_sync) throw Error("plan: no_sync{...} cannot be nested.");
      expect('}');
    } else if (word == "step") {
      step.kind = PlanStep::Kind::step;
    } else {
      fail("forward, backward(...), no_sync{...} or step", word);
    }
    return step;
  }

  LossTerm term() {
    skip_space();
    LossTerm t;
    if (pos_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.')) {
      size_t used = 0;
      t.scale = std::stod(s_.substr(pos_), &used);
      pos_ += used;
      expect('*');
    }
    t.name = identifier();
    if (t.name != "a" && t.name != "b" && t.name != "t" && t.name != "dummy") fail("a loss term: a, b, t or dummy", t.name);
    return t;
  }

  std::string identifier() {
    skip_space();
    const size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    if (start == pos_) fail("a word");
    return s_.substr(start, pos_ - start);
  }

  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool peek(char c) {
    skip_space();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  bool accept(char c) {
    if (!peek(c)) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!accept(c)) fail(std::string("'") + c + "'");
  }
  [[noreturn]] void fail(const std::string& expected, const std::string& found = "") {
    std::ostringstream os;
    os << "plan: expected " << expected << " at position " << pos_ << " but found "
       << (!found.empty() ? "'" + found + "'" : pos_ < s_.size() ? "'" + s_.substr(pos_, 12) + "'" : "the end")
       << "\n  " << s_ << "\n  " << std::string(pos_, ' ') << "^\nSee `tinyddp repro --help` for the plan language.";
    throw Error(os.str());
  }

  const std::string& s_;
  size_t pos_ = 0;
};

std::string number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

std::string PlanStep::text() const {
  switch (kind) {
    case Kind::forward:
      switch (mode) {
        case models::TextMode::normal: return "forward";
        case models::TextMode::no_text: return "forward(no_text)";
        case models::TextMode::drop_text: return "forward(drop_text)";
        case models::TextMode::detach: return "forward(detach)";
      }
      return "forward";
    case Kind::backward: {
      std::string s = "backward(";
      for (size_t i = 0; i < terms.size(); ++i)
        s += (i ? "+" : "") + (terms[i].scale == 1.0 ? "" : number(terms[i].scale) + "*") + terms[i].name;
      return s + (retain ? ", retain)" : ")");
    }
    case Kind::no_sync: return "no_sync{ " + plan_text(body) + " }";
    case Kind::step: return "step";
  }
  return "?";
}

std::string plan_text(const std::vector<PlanStep>& steps) {
  std::string s;
  for (size_t i = 0; i < steps.size(); ++i) s += (i ? "; " : "") + steps[i].text();
  return s;
}

std::vector<PlanStep> parse_plan(const std::string& plan) { return Parser(plan).parse(); }

}  // namespace tinyddp::app
