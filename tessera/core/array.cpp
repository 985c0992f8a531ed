#include "tessera/core/array.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "tessera/core/strided.h"

namespace tessera {

Storage::Storage(size_t nbytes, Device& device) : nbytes_(nbytes), device_(&device) {
  data_ = static_cast<std::byte*>(device.allocate(nbytes));
}

Storage::Storage(std::byte* data, size_t nbytes, std::shared_ptr<const void> owner, Device& device)
    : data_(data), nbytes_(nbytes), device_(&device), owner_(std::move(owner)) {}

Storage::~Storage() {
  if (!owner_) device_->deallocate(data_, nbytes_);
}

namespace {

void require_host(const Array& a, const char* what) {
  TESSERA_CHECK(a.on_host(), "{}: the array's data lives on {}; copy it to the host first (Array::to(host_device()))",
                what, a.device().name());
}

}  // namespace

Device& Array::device() const { return storage_ ? storage_->device() : host_device(); }

void* Array::device_data() const {
  TESSERA_CHECK(storage_ != nullptr, "Array: access to an undefined array");
  return storage_->data() + offset_ * static_cast<int64_t>(dtype_size(dtype_));
}

Array Array::empty(DType dtype, const Shape& shape, Device& device) {
  if (device.is_host()) return empty(dtype, shape);
  uint64_t bytes = dtype_size(dtype);
  for (int64_t d : shape) {
    TESSERA_CHECK(d >= 0, "Array: negative dimension in shape {}", shape_str(shape));
    TESSERA_CHECK(d == 0 || bytes <= (uint64_t{1} << 48) / static_cast<uint64_t>(d),
                  "Array: shape {} of {} is too large to allocate", shape_str(shape), dtype_name(dtype));
    bytes *= static_cast<uint64_t>(d);
  }
  auto storage = std::make_shared<Storage>(static_cast<size_t>(bytes), device);
  return Array(std::move(storage), dtype, shape, contiguous_strides(shape), 0);
}

Array Array::to(Device& target) const {
  TESSERA_CHECK(defined(), "Array::to: undefined array");
  if (&device() == &target) return *this;
  Array out = empty(dtype_, shape_, target);
  out.copy_from(*this);
  return out;
}

Array Array::from_external(void* data, DType dtype, const Shape& shape, std::shared_ptr<const void> owner) {
  const int64_t n = shape_numel(shape);
  auto storage = std::make_shared<Storage>(static_cast<std::byte*>(data),
                                           static_cast<size_t>(n) * dtype_size(dtype),
                                           owner ? std::move(owner) : std::make_shared<int>(0));
  return Array(std::move(storage), dtype, shape, contiguous_strides(shape), 0);
}

Array Array::empty(DType dtype, const Shape& shape) {
  for (int64_t d : shape) {
    TESSERA_CHECK(d >= 0, "Array: negative dimension in shape {}", shape_str(shape));
  }
  // Checked products: a hostile shape must fail cleanly instead of wrapping to a small allocation. The
  // extent multiplies the non-zero dimensions only, so that the strides (which skip zeros) fit too
  // when a zero dimension makes the array empty.
  constexpr uint64_t kMaxBytes = uint64_t{1} << 48;
  uint64_t bytes = dtype_size(dtype), extent = dtype_size(dtype);
  for (int64_t d : shape) {
    const uint64_t dim = static_cast<uint64_t>(d), nonzero = std::max<uint64_t>(dim, 1);
    TESSERA_CHECK(extent <= kMaxBytes / nonzero, "Array: shape {} of {} is too large to allocate", shape_str(shape),
                  dtype_name(dtype));
    extent *= nonzero;
    bytes *= dim;
  }
  auto storage = std::make_shared<Storage>(static_cast<size_t>(bytes));
  return Array(std::move(storage), dtype, shape, contiguous_strides(shape), 0);
}

Array Array::zeros(DType dtype, const Shape& shape) {
  Array a = empty(dtype, shape);
  std::memset(a.raw_data(), 0, a.nbytes());  // all-zero bits are 0 in every supported dtype
  return a;
}

Array Array::full(DType dtype, const Shape& shape, double value) {
  Array a = empty(dtype, shape);
  dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T v = convert_element<T>(value);
    T* p = a.data<T>();
    std::fill(p, p + a.numel(), v);
  });
  return a;
}

Array Array::scalar(double value, DType dtype) { return full(dtype, {}, value); }

void* Array::raw_data() const {
  TESSERA_CHECK(storage_ != nullptr, "Array: access to an undefined array");
  require_host(*this, "Array");
  return storage_->data() + offset_ * static_cast<int64_t>(dtype_size(dtype_));
}

bool Array::is_contiguous() const {
  int64_t expected = 1;
  for (size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] == 1) continue;
    if (strides_[i] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

bool Array::reshape_strides(const Shape& new_shape, Strides* out) const {
  // Works on the non-trivial (size > 1) dimensions: a run of old dimensions that merges into, or
  // splits from, a run of new dimensions must itself be contiguous in memory.
  if (numel() == 0) {
    *out = contiguous_strides(new_shape);
    return true;
  }
  std::vector<int64_t> od, os;
  for (size_t i = 0; i < shape_.size(); ++i) {
    if (shape_[i] != 1) {
      od.push_back(shape_[i]);
      os.push_back(strides_[i]);
    }
  }
  Strides ns(new_shape.size(), 1);
  size_t oi = 0, ni = 0;
  const size_t on = od.size(), nn = new_shape.size();
  while (ni < nn && oi < on) {
    if (new_shape[ni] == 1) {
      ++ni;
      continue;
    }
    size_t oj = oi + 1, nj = ni + 1;
    int64_t np = new_shape[ni], op = od[oi];
    while (np != op) {
      if (np < op) {
        if (nj >= nn) return false;
        np *= new_shape[nj++];
      } else {
        if (oj >= on) return false;
        op *= od[oj++];
      }
    }
    for (size_t k = oi; k + 1 < oj; ++k) {
      if (os[k] != od[k + 1] * os[k + 1]) return false;
    }
    ns[nj - 1] = os[oj - 1];
    for (size_t k = nj - 1; k > ni; --k) ns[k - 1] = ns[k] * new_shape[k];
    ni = nj;
    oi = oj;
  }
  *out = ns;
  return true;
}

Array Array::reshape(const Shape& shape) const {
  Shape resolved = shape;
  int64_t infer_at = -1, known = 1;
  for (size_t i = 0; i < resolved.size(); ++i) {
    if (resolved[i] == -1) {
      TESSERA_CHECK(infer_at < 0, "reshape: more than one -1 in {}", shape_str(shape));
      infer_at = static_cast<int64_t>(i);
    } else {
      TESSERA_CHECK(resolved[i] >= 0, "reshape: negative dimension in {}", shape_str(shape));
      known *= resolved[i];
    }
  }
  if (infer_at >= 0) {
    TESSERA_CHECK(known != 0 && numel() % known == 0, "reshape: cannot infer -1 in {} for {} elements",
                  shape_str(shape), numel());
    resolved[infer_at] = numel() / known;
  }
  TESSERA_CHECK(shape_numel(resolved) == numel(), "reshape: cannot view shape {} ({} elements) as {} ({} elements)",
                shape_str(shape_), numel(), shape_str(resolved), shape_numel(resolved));
  Strides strides;
  if (reshape_strides(resolved, &strides)) return with_layout(resolved, strides, offset_);
  return contiguous().reshape(resolved);
}

Array Array::permute(const std::vector<int64_t>& axes) const {
  TESSERA_CHECK(static_cast<int64_t>(axes.size()) == rank(), "permute: {} axes given for a tensor of rank {}",
                axes.size(), rank());
  Shape shape(axes.size());
  Strides strides(axes.size());
  std::vector<bool> seen(axes.size(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = normalize_axis(axes[i], rank(), "permute");
    TESSERA_CHECK(!seen[a], "permute: axis {} repeated in {}", a, shape_str(axes));
    seen[a] = true;
    shape[i] = shape_[a];
    strides[i] = strides_[a];
  }
  return with_layout(shape, strides, offset_);
}

Array Array::transpose(int64_t a, int64_t b) const {
  std::vector<int64_t> axes(shape_.size());
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  std::swap(axes[normalize_axis(a, rank(), "transpose")], axes[normalize_axis(b, rank(), "transpose")]);
  return permute(axes);
}

Array Array::broadcast_to(const Shape& shape) const {
  TESSERA_CHECK(shape.size() >= shape_.size(), "broadcast_to: cannot broadcast {} to lower rank {}",
                shape_str(shape_), shape_str(shape));
  const size_t lead = shape.size() - shape_.size();
  Strides strides(shape.size(), 0);
  for (size_t i = 0; i < shape_.size(); ++i) {
    const int64_t from = shape_[i], to = shape[lead + i];
    TESSERA_CHECK(from == to || from == 1, "broadcast_to: cannot broadcast {} to {} (axis {}: {} vs {})",
                  shape_str(shape_), shape_str(shape), lead + i, from, to);
    strides[lead + i] = from == to ? strides_[i] : 0;
  }
  return with_layout(shape, strides, offset_);
}

Array Array::slice(int64_t axis, int64_t start, int64_t stop, int64_t step) const {
  const int64_t ax = normalize_axis(axis, rank(), "slice");
  TESSERA_CHECK(step != 0, "slice: step must not be zero");
  const int64_t n = shape_[ax];
  auto clamp_index = [&](int64_t i, bool is_start) {
    if (i < 0) i += n;
    if (step > 0) return std::clamp<int64_t>(i, 0, n);
    (void)is_start;
    return std::clamp<int64_t>(i, -1, n - 1);
  };
  const int64_t s = clamp_index(start, true), e = clamp_index(stop, false);
  int64_t count = 0;
  // Written so that no intermediate overflows, even for a step of INT64_MAX.
  if (step > 0 && e > s) count = (e - s - 1) / step + 1;
  if (step < 0 && s > e) count = (s - e - 1) / (step == INT64_MIN ? INT64_MAX : -step) + 1;
  Shape shape = shape_;
  Strides strides = strides_;
  shape[ax] = count;
  strides[ax] = strides_[ax] * step;
  const int64_t offset = count > 0 ? offset_ + s * strides_[ax] : offset_;
  return with_layout(shape, strides, offset);
}

Array Array::squeeze(const std::vector<int64_t>& axes) const {
  std::vector<bool> drop(shape_.size(), false);
  if (axes.empty()) {
    for (size_t i = 0; i < shape_.size(); ++i) drop[i] = shape_[i] == 1;
  } else {
    for (int64_t a : axes) {
      const int64_t ax = normalize_axis(a, rank(), "squeeze");
      TESSERA_CHECK(shape_[ax] == 1, "squeeze: axis {} of shape {} has size {}, expected 1", a, shape_str(shape_),
                    shape_[ax]);
      drop[ax] = true;
    }
  }
  Shape shape;
  Strides strides;
  for (size_t i = 0; i < shape_.size(); ++i) {
    if (!drop[i]) {
      shape.push_back(shape_[i]);
      strides.push_back(strides_[i]);
    }
  }
  return with_layout(shape, strides, offset_);
}

Array Array::unsqueeze(int64_t axis) const {
  const int64_t ax = normalize_axis(axis, rank() + 1, "unsqueeze");
  Shape shape = shape_;
  Strides strides = strides_;
  const int64_t stride = ax < rank() ? strides_[ax] * shape_[ax] : 1;
  shape.insert(shape.begin() + ax, 1);
  strides.insert(strides.begin() + ax, stride);
  return with_layout(shape, strides, offset_);
}

Array Array::contiguous() const {
  if (is_contiguous()) return *this;
  return copy();
}

Array Array::copy() const { return astype(dtype_); }

Array Array::astype(DType dtype) const {
  TESSERA_CHECK(defined(), "astype: undefined array");
  require_host(*this, "astype");
  if (dtype == dtype_ && is_contiguous()) {
    Array out = empty(dtype, shape_);
    std::memcpy(out.raw_data(), raw_data(), nbytes());
    return out;
  }
  Array out = empty(dtype, shape_);
  const Strides out_strides = contiguous_strides(shape_);
  dispatch_dtype(dtype_, [&](auto src_tag) {
    using S = decltype(src_tag);
    dispatch_dtype(dtype, [&](auto dst_tag) {
      using D = decltype(dst_tag);
      const S* src = reinterpret_cast<const S*>(storage_->data()) + offset_;
      D* dst = out.data<D>();
      for_each_offset<2>(shape_, {&strides_, &out_strides}, {0, 0},
                         [&](const std::array<int64_t, 2>& o) { dst[o[1]] = convert_element<D>(src[o[0]]); });
    });
  });
  return out;
}

void Array::copy_from(const Array& src) {
  TESSERA_CHECK(defined() && src.defined(), "copy_from: undefined array");
  TESSERA_CHECK(src.shape_ == shape_, "copy_from: shape {} does not match the destination's {}", shape_str(src.shape_),
                shape_str(shape_));
  if (numel() == 0) return;  // nothing to move, whatever the layouts and devices
  if (!on_host() || !src.on_host()) {
    // Between devices: whole packed arrays of one dtype go by one device copy; anything else is
    // staged through packed host copies.
    if (src.dtype_ == dtype_ && is_contiguous() && src.is_contiguous()) {
      Device& dst_dev = device();
      Device& src_dev = src.device();
      if (&dst_dev == &src_dev) {
        dst_dev.copy_within(device_data(), src.device_data(), nbytes());
      } else if (src_dev.is_host()) {
        dst_dev.copy_from_host(device_data(), src.device_data(), nbytes());
      } else if (dst_dev.is_host()) {
        src_dev.copy_to_host(device_data(), src.device_data(), nbytes());
      } else {
        copy_from(src.to(host_device()));
      }
      return;
    }
    TESSERA_CHECK(src.is_contiguous() || src.on_host(), "copy_from: a strided view of {} memory cannot be copied; "
                  "copy a packed array", src.device().name());
    TESSERA_CHECK(is_contiguous() || on_host(), "copy_from: cannot write into a strided view of {} memory",
                  device().name());
    const Array staged = (src.on_host() ? src : src.to(host_device())).astype(dtype_);
    if (on_host()) {
      copy_from(staged);
    } else {
      device().copy_from_host(device_data(), staged.device_data(), nbytes());
    }
    return;
  }
  if (src.dtype_ == dtype_ && is_contiguous() && src.is_contiguous()) {
    std::memmove(raw_data(), src.raw_data(), nbytes());
    return;
  }
  dispatch_dtype(src.dtype_, [&](auto src_tag) {
    using S = decltype(src_tag);
    dispatch_dtype(dtype_, [&](auto dst_tag) {
      using D = decltype(dst_tag);
      const S* from = reinterpret_cast<const S*>(src.storage_->data()) + src.offset_;
      D* to = reinterpret_cast<D*>(storage_->data()) + offset_;
      for_each_offset<2>(shape_, {&src.strides_, &strides_}, {0, 0},
                         [&](const std::array<int64_t, 2>& o) { to[o[1]] = convert_element<D>(from[o[0]]); });
    });
  });
}

double Array::item() const {
  TESSERA_CHECK(numel() == 1, "item: expected a one-element array, got shape {}", shape_str(shape_));
  return to_f64()[0];
}

std::vector<double> Array::to_f64() const { return to_vector<double>(); }
std::vector<int64_t> Array::to_i64() const { return to_vector<int64_t>(); }

std::string Array::to_string(int64_t max_elements) const {
  std::ostringstream os;
  os << "array(" << dtype_name(dtype_) << shape_str(shape_) << ", [";
  const std::vector<double> v = to_f64();
  const int64_t n = std::min<int64_t>(max_elements, static_cast<int64_t>(v.size()));
  for (int64_t i = 0; i < n; ++i) os << (i ? ", " : "") << v[i];
  if (n < static_cast<int64_t>(v.size())) os << ", ...";
  os << "])";
  return os.str();
}

}  // namespace tessera
