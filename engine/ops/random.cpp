// Random numbers: PyTorch 1.13's CPU transforms over the generator of generator.h.
//
// Note [Matching PyTorch's random numbers]
// A seed gives PyTorch 1.13's values bitwise (checked against torch by tests/golden/gen_random.py), because
// every transform below consumes the generator's words in PyTorch's order and rounds as its kernels do:
// - uniform (rand, uniform_): float takes one 32-bit word and keeps 24 bits, u = (w & (2^24 - 1)) * 2^-24;
//   double takes a 64-bit draw and keeps 53 bits. The result is fma(u, to - from, from): PyTorch's kernels are
//   built with FMA contraction (its AVX2 build), and this file is built without contraction
//   (engine/CMakeLists.txt), so every fused step here is an explicit std::fma and every other step rounds.
// - normal (randn, normal_) on a contiguous tensor of >= 16 elements fills every element with a uniform first,
//   then turns each block of 16 into normals by Box-Muller, pairing element j with j + 8; a tail shorter than
//   16 is handled by redrawing the last 16 elements' uniforms and transforming them again. float32 goes through
//   PyTorch's AVX2 kernel, whose log and sincos are Cephes' single-precision polynomials evaluated in float
//   (Cephes' constants; the order and fusions are those of PyTorch's avx_mathfun.h as GCC compiles it),
//   emulated lane by lane by cephes_logf and cephes_sincosf. float64 uses the C library's log, sin and cos.
// - normal on fewer than 16 elements, or a non-contiguous tensor: one double-precision Box-Muller pair per two
//   elements, the second value kept in the generator for the next draw (Generator::standard_normal).
// - randint: w % (high - low) + low, with a 32-bit word when the range fits in 32 bits, else a 64-bit draw.
// - randperm: the Fisher-Yates shuffle with one 32-bit word per swap, swap(r[i], r[i + w % (n - i)]).
// - bernoulli_ (dropout's mask): 1 where a 53-bit uniform double is < p.
// - random_: 64-bit draws mod 2^63 for int64 (the other dtypes as PyTorch's random_ kernel).
#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>
#include <sstream>

#include "engine/ops/generator.h"
#include "engine/ops/op_utils.h"

namespace tinyddp {

// ---- the generator ----

double Generator::standard_normal() {
  if (next_double_normal_) {
    const double cached = *next_double_normal_;
    next_double_normal_.reset();
    return cached;
  }
  const double u1 = static_cast<double>(random64() & ((1ULL << 53) - 1)) * 0x1.0p-53;
  const double u2 = static_cast<double>(random64() & ((1ULL << 53) - 1)) * 0x1.0p-53;
  const double radius = std::sqrt(-2.0 * std::log(1.0 - u2));   // 1 - u2 in (0, 1]: the log is finite
  const double theta = 2.0 * std::numbers::pi * u1;
  next_double_normal_ = radius * std::sin(theta);
  return radius * std::cos(theta);
}

std::string Generator::state() const {
  std::ostringstream os;
  os.precision(17);
  os << initial_seed_ << ' ' << next_double_normal_.has_value() << ' ' << next_double_normal_.value_or(0.0) << ' '
     << engine_;
  return os.str();
}

void Generator::set_state(const std::string& state) {
  std::istringstream is(state);
  uint64_t seed = 0;
  bool has_normal = false;
  double normal = 0.0;
  std::mt19937 engine;
  is >> seed >> has_normal >> normal >> engine;
  TINYDDP_CHECK(!is.fail(), "set_rng_state: expected a state returned by get_rng_state(), but could not read one "
                            "from the ", state.size(), " characters given.");
  initial_seed_ = seed;
  engine_ = engine;
  next_double_normal_ = has_normal ? std::optional<double>(normal) : std::nullopt;
}

Generator& default_generator() {
  thread_local Generator generator;
  return generator;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }
std::string get_rng_state() { return default_generator().state(); }
void set_rng_state(const std::string& state) { default_generator().set_state(state); }

namespace {

Generator& pick(Generator* gen) { return gen != nullptr ? *gen : default_generator(); }

// ---- uniform ----

float uniform_float(Generator& g, float from, float to) {
  const float u = static_cast<float>(g.random() & ((1U << 24) - 1)) * 0x1.0p-24f;
  return std::fma(u, to - from, from);
}

double uniform_double(Generator& g, double from, double to) {
  const double u = static_cast<double>(g.random64() & ((1ULL << 53) - 1)) * 0x1.0p-53;
  return std::fma(u, to - from, from);
}

template <typename T>
T uniform_value(Generator& g, T from, T to) {
  if constexpr (std::is_same_v<T, float>) return uniform_float(g, from, to);
  else return uniform_double(g, from, to);
}

// ---- Cephes' single-precision log and sincos, as PyTorch's AVX2 normal kernel evaluates them ----

// log(x) for x in (0, 1] (randn's 1 - u): x = m 2^e with m in [sqrt(1/2), sqrt(2)), log = log1p(m - 1) + e log 2,
// log1p by Cephes' degree-9 polynomial, e log 2 in two parts (0.693359375 exact in float, -2.12194440e-4).
float cephes_logf(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  float e = static_cast<float>(static_cast<int32_t>(bits >> 23) - 0x7f) + 1.0f;
  float m = std::bit_cast<float>((bits & ~0x7f800000U) | std::bit_cast<uint32_t>(0.5f));   // in [0.5, 1)
  float twice = 0.0f;
  if (m < 0.707106781186547524f) {   // sqrt(1/2): use 2m - 1 and one less in the exponent
    twice = m;
    e -= 1.0f;
  }
  m = (m - 1.0f) + twice;
  const float z = m * m;
  static constexpr float kP[] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                                 -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                                 2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
  float y = kP[0];
  for (int i = 1; i < 9; ++i) y = std::fma(y, m, kP[i]);
  const float ym = y * m;
  y = std::fma(ym, z, e * -2.12194440e-4f);
  y = std::fma(-z, 0.5f, y);
  return std::fma(e, 0.693359375f, m + y);
}

// sin and cos of x >= 0 (randn's theta in [0, 2 pi)): reduce by multiples j of pi/4 (pi/4 in three parts, so
// x - j pi/4 keeps its low bits), evaluate Cephes' sine and cosine polynomials on the reduced argument, and
// let j's bits pick which polynomial is the sine and the signs.
void cephes_sincosf(float x, float* sin_out, float* cos_out) {
  const int32_t j = (static_cast<int32_t>(x * 1.27323954473516f) + 1) & ~1;   // 4 / pi
  const float jf = static_cast<float>(j);
  x = std::fma(jf, -0.78515625f, x);
  x = std::fma(jf, -2.4187564849853515625e-4f, x);
  x = std::fma(jf, -3.77489497744594108e-8f, x);
  const float z = x * x;
  float c = std::fma(2.443315711809948E-005f, z, -1.388731625493765E-003f);
  c = std::fma(c, z, 4.166664568298827E-002f);
  c = std::fma(c * z, z, -(z * 0.5f)) + 1.0f;
  float s = std::fma(-1.9515295891E-4f, z, 8.3321608736E-3f);
  s = std::fma(s, z, -1.6666654611E-1f);
  s = std::fma(s * z, x, x);
  const bool odd_octant_pair = (j & 2) != 0;   // then the cosine polynomial gives the sine, and vice versa
  float sine = odd_octant_pair ? c : s, cosine = odd_octant_pair ? s : c;
  if ((j & 4) != 0) sine = -sine;
  if (((j - 2) & 4) == 0) cosine = -cosine;
  *sin_out = sine;
  *cos_out = cosine;
}

// ---- normal ----

// Turns the uniforms data[0..16) into 16 normals, pairing j with j + 8.
template <typename T>
void box_muller_16(T* data, T mean, T stddev) {
  for (int j = 0; j < 8; ++j) {
    const T u1 = T(1) - data[j], u2 = data[j + 8];
    if constexpr (std::is_same_v<T, float>) {
      const float radius = std::sqrt(-2.0f * cephes_logf(u1));
      float s, c;
      cephes_sincosf(static_cast<float>(2.0 * std::numbers::pi) * u2, &s, &c);
      data[j] = std::fma(radius * c, stddev, mean);
      data[j + 8] = std::fma(radius * s, stddev, mean);
    } else {
      const double radius = std::sqrt(-2.0 * std::log(u1));
      const double theta = 2.0 * std::numbers::pi * u2;
      data[j] = std::fma(radius * std::cos(theta), stddev, mean);
      data[j + 8] = std::fma(radius * std::sin(theta), stddev, mean);
    }
  }
}

// Fills data[0..n) with normals; `blocked` selects the >= 16 contiguous path of the Note.
template <typename T>
void fill_normal(T* data, int64_t n, double mean, double stddev, bool blocked, Generator& g) {
  if (!blocked) {
    for (int64_t i = 0; i < n; ++i) data[i] = static_cast<T>(std::fma(g.standard_normal(), stddev, mean));
    return;
  }
  const T m = static_cast<T>(mean), s = static_cast<T>(stddev);
  for (int64_t i = 0; i < n; ++i) data[i] = uniform_value<T>(g, T(0), T(1));
  for (int64_t i = 0; i + 16 <= n; i += 16) box_muller_16(data + i, m, s);
  if (n % 16 != 0) {
    T* tail = data + n - 16;
    for (int i = 0; i < 16; ++i) tail[i] = uniform_value<T>(g, T(0), T(1));
    box_muller_16(tail, m, s);
  }
}

// The draws, each into a fresh contiguous tensor `out` (the draw order is the element order).
void draw_uniform(Tensor& out, double from, double to, Generator& g) {
  dispatch_floating(out.dtype(), "uniform_", [&]<typename T>() {
    T* p = out.data_ptr<T>();
    for (int64_t i = 0; i < out.numel(); ++i) p[i] = uniform_value<T>(g, static_cast<T>(from), static_cast<T>(to));
  });
}

void draw_normal(Tensor& out, double mean, double stddev, bool blocked, Generator& g) {
  dispatch_floating(out.dtype(), "normal_", [&]<typename T>() {
    fill_normal(out.data_ptr<T>(), out.numel(), mean, stddev, blocked, g);
  });
}

void draw_bernoulli(Tensor& out, double p, Generator& g) {
  dispatch_all(out.dtype(), [&]<typename T>() {
    T* data = out.data_ptr<T>();
    for (int64_t i = 0; i < out.numel(); ++i) data[i] = static_cast<T>(uniform_double(g, 0.0, 1.0) < p);
  });
}

void draw_random(Tensor& out, Generator& g) {
  dispatch_all(out.dtype(), [&]<typename T>() {
    T* data = out.data_ptr<T>();
    for (int64_t i = 0; i < out.numel(); ++i) {
      // [0, 2^mantissa bits] for floating types (every integer there is exact), [0, max] for integers
      if constexpr (std::is_same_v<T, float>) data[i] = static_cast<T>(g.random() % ((1ULL << 24) + 1));
      else if constexpr (std::is_same_v<T, double>) data[i] = static_cast<T>(g.random64() % ((1ULL << 53) + 1));
      else if constexpr (std::is_same_v<T, bool>) data[i] = (g.random() % 2) != 0;
      else data[i] = static_cast<T>(g.random64() % (static_cast<uint64_t>(std::numeric_limits<T>::max()) + 1));
    }
  });
}

// Where the k-th draw goes in a contiguous tensor of self's shape: PyTorch's kernels walk a tensor in memory order
// (TensorIterator puts the dims with the largest strides outermost), so a non-contiguous target, say a transposed
// one, receives the stream in its storage's order, not in row-major order.
std::vector<int64_t> draw_order(const Tensor& self) {
  const Shape& shape = self.shape();
  const int64_t ndim = static_cast<int64_t>(shape.size());
  std::vector<int64_t> dims(ndim), row_major_stride(ndim, 1);
  for (int64_t d = ndim - 1; d >= 0; --d) {
    dims[d] = d;
    if (d + 1 < ndim) row_major_stride[d] = row_major_stride[d + 1] * shape[d + 1];
  }
  std::stable_sort(dims.begin(), dims.end(),
                   [&](int64_t a, int64_t b) { return self.strides()[a] > self.strides()[b]; });
  std::vector<int64_t> order(self.numel()), index(ndim, 0);
  for (int64_t k = 0; k < self.numel(); ++k) {
    int64_t position = 0;
    for (int64_t d = 0; d < ndim; ++d) position += index[d] * row_major_stride[d];
    order[k] = position;
    for (int64_t i = ndim - 1; i >= 0; --i) {   // the next index, the last of `dims` fastest
      const int64_t d = dims[i];
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return order;
}

// An in-place draw: the values go into a fresh tensor first (in self's memory order), then into self with
// overwrite_, which checks (before anything is drawn), bumps the version as every in-place op does (and reaches
// any layout and device), and under autograd records 1.13's node (`node`: UniformBackward0, ...).
template <typename Draw>
Tensor& draw_into(Tensor& self, const char* op, const char* node, Draw draw) {
  detail::check_defined(self, op, "tensor filled in place");
  return overwrite_(self, node, [&] {
    Tensor drawn = empty(self.shape(), self.dtype());
    draw(drawn);
    if (!self.is_contiguous() && self.numel() > 1) {
      Tensor placed = empty(self.shape(), self.dtype());
      const std::vector<int64_t> order = draw_order(self);
      dispatch_all(self.dtype(), [&]<typename T>() {
        const T* from = drawn.data_ptr<T>();
        T* to = placed.data_ptr<T>();
        for (size_t k = 0; k < order.size(); ++k) to[order[k]] = from[k];
      });
      drawn = placed;
    }
    return drawn;
  });
}

}  // namespace

Tensor& uniform_(Tensor& self, double from, double to, Generator* gen) {
  TINYDDP_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  return draw_into(self, "uniform_", "UniformBackward0",
                   [&](Tensor& out) { draw_uniform(out, from, to, pick(gen)); });
}

Tensor& normal_(Tensor& self, double mean, double stddev, Generator* gen) {
  TINYDDP_CHECK(stddev >= 0.0, "normal expects std >= 0.0, but found std ", stddev);
  const bool blocked = self.numel() >= 16 && self.is_contiguous();   // decided by self's layout, as in PyTorch
  return draw_into(self, "normal_", "NormalBackward0",
                   [&](Tensor& out) { draw_normal(out, mean, stddev, blocked, pick(gen)); });
}

Tensor& bernoulli_(Tensor& self, double p, Generator* gen) {
  TINYDDP_CHECK(0.0 <= p && p <= 1.0, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  return draw_into(self, "bernoulli_", "BernoulliBackward2", [&](Tensor& out) { draw_bernoulli(out, p, pick(gen)); });
}

Tensor& random_(Tensor& self, Generator* gen) {
  return draw_into(self, "random_", "RandomBackward2", [&](Tensor& out) { draw_random(out, pick(gen)); });
}

Tensor randn(const Shape& shape, DType dtype, Generator* gen) {
  Tensor out = empty(shape, dtype);
  draw_normal(out, 0.0, 1.0, out.numel() >= 16, pick(gen));
  return out;
}

Tensor rand(const Shape& shape, DType dtype, Generator* gen) {
  Tensor out = empty(shape, dtype);
  draw_uniform(out, 0.0, 1.0, pick(gen));
  return out;
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator* gen) {
  TINYDDP_CHECK(low < high, "random_ expects 'from' to be less than 'to', but got from=", low, " >= to=", high);
  Generator& g = pick(gen);
  Tensor out = empty(shape, DType::i64);
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  int64_t* p = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    const uint64_t word = range >= (1ULL << 32) ? g.random64() : g.random();
    p[i] = static_cast<int64_t>(static_cast<uint64_t>(low) + word % range);
  }
  return out;
}

Tensor randperm(int64_t n, Generator* gen) {
  TINYDDP_CHECK(n >= 0, "n must be non-negative, got", n);
  Generator& g = pick(gen);
  Tensor out = arange(n, DType::i64);
  int64_t* r = out.data_ptr<int64_t>();
  for (int64_t i = 0; i + 1 < n; ++i) std::swap(r[i], r[i + static_cast<int64_t>(g.random() % (n - i))]);
  return out;
}

}  // namespace tinyddp
