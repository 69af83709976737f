#include "apps/tinyddp/svg.h"

#include <algorithm>

namespace tinyddp::app {

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  os << v;
  return os.str();
}

void Svg::rect(double x, double y, double w, double h, const std::string& fill, const std::string& stroke,
               double stroke_w, const std::string& extra, const std::string& tooltip) {
  out << "<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(std::max(w, 1.0)) << "\" height=\""
      << num(h) << "\" fill=\"" << fill << "\" stroke=\"" << stroke << "\" stroke-width=\"" << stroke_w << "\"" << extra;
  if (tooltip.empty()) out << "/>\n";
  else out << "><title>" << xml_escape(tooltip) << "</title></rect>\n";
}

void Svg::text(double x, double y, const std::string& s, const std::string& extra) {
  out << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\"" << extra << ">" << xml_escape(s) << "</text>\n";
}

void Svg::line(double x1, double y1, double x2, double y2, const std::string& stroke, double w,
               const std::string& extra) {
  out << "<line x1=\"" << num(x1) << "\" y1=\"" << num(y1) << "\" x2=\"" << num(x2) << "\" y2=\"" << num(y2)
      << "\" stroke=\"" << stroke << "\" stroke-width=\"" << w << "\"" << extra << "/>\n";
}

void Svg::path(const std::string& d, const std::string& fill, const std::string& stroke, const std::string& tooltip) {
  out << "<path d=\"" << d << "\" fill=\"" << fill << "\" stroke=\"" << stroke << "\"><title>" << xml_escape(tooltip)
      << "</title></path>\n";
}

}  // namespace tinyddp::app
