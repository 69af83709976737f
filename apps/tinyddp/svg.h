// SVG text for the pictures the commands draw (train's plot, trace-view's timeline): the one escaper, and a
// small writer of the elements trace-view uses. Coordinates print with one decimal (num), which keeps the
// files short and byte-stable across runs.
//
//   Svg svg;
//   svg.rect(10, 20, 100, 12, "#9ecae1", "none", 1, "", "tooltip text");
//   svg.text(10, 40, "a < b", " fill=\"#444\"");   // text and tooltips are escaped; `extra` attributes are not
//   std::string body = svg.out.str();
#pragma once

#include <sstream>
#include <string>

namespace tinyddp::app {

// `s` with XML's five special characters as entities (& < > " '), so that it is safe both as element text
// and inside a quoted attribute.
std::string xml_escape(const std::string& s);

// A coordinate or length: fixed, one decimal.
std::string num(double v);

class Svg {
 public:
  std::ostringstream out;
  void rect(double x, double y, double w, double h, const std::string& fill, const std::string& stroke = "none",
            double stroke_w = 1, const std::string& extra = "", const std::string& tooltip = "");
  void text(double x, double y, const std::string& s, const std::string& extra = "");
  void line(double x1, double y1, double x2, double y2, const std::string& stroke, double w = 1,
            const std::string& extra = "");
  void path(const std::string& d, const std::string& fill, const std::string& stroke, const std::string& tooltip);
};

}  // namespace tinyddp::app
