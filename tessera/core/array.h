#pragma once
// Array: concrete tensor data. A shared, 64-byte-aligned Storage plus dtype, shape, strides (in
// elements, may be 0 for broadcast or negative for reversed views) and an element offset. The view
// operations below never copy when the strides allow; `contiguous()` copies only when needed.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/convert.h"
#include "tessera/core/device.h"
#include "tessera/core/dtype.h"
#include "tessera/core/error.h"
#include "tessera/core/shape.h"

namespace tessera {

// The aligned bytes behind one or more arrays on one device, owned here or kept alive by an owner.
class Storage {
 public:
  explicit Storage(size_t nbytes, Device& device = host_device());
  // Memory owned elsewhere (an arena, an mmap'd file, a device pool): `owner` keeps it alive; nothing
  // is freed here.
  Storage(std::byte* data, size_t nbytes, std::shared_ptr<const void> owner, Device& device = host_device());
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  std::byte* data() { return data_; }  // the first byte (a device address for device storage)
  const std::byte* data() const { return data_; }  // the first byte (a device address for device storage)
  size_t nbytes() const { return nbytes_; }  // size in bytes, as allocated or as given for external memory
  bool external() const { return owner_ != nullptr; }  // memory owned elsewhere (e.g. an mmap'd file)
  Device& device() const { return *device_; }  // the device whose memory this is

 private:
  std::byte* data_ = nullptr;
  size_t nbytes_ = 0;
  Device* device_ = nullptr;
  std::shared_ptr<const void> owner_;  // set for external memory
};

// Concrete data: dtype, shape and strides over a shared Storage; views share it.
class Array {
 public:
  Array() = default;  // undefined: no storage
  static Array empty(DType dtype, const Shape& shape);  // contiguous, contents unspecified
  static Array empty(DType dtype, const Shape& shape, Device& device);  // on a device
  static Array zeros(DType dtype, const Shape& shape);  // contiguous, on the host, every element 0
  // Contiguous, on the host, every element `value` converted to `dtype` (floats to integers saturate).
  static Array full(DType dtype, const Shape& shape, double value);
  static Array scalar(double value, DType dtype = DType::f32);  // rank 0, one element `value` as `dtype`
  // A contiguous array over memory owned elsewhere (no copy); `owner` keeps that memory alive.
  static Array from_external(void* data, DType dtype, const Shape& shape, std::shared_ptr<const void> owner = {});
  // A contiguous host copy of `values` (row-major) of T's dtype; throws tessera::Error unless
  // values.size() == shape_numel(shape).
  template <class T>
  static Array from_vector(const std::vector<T>& values, const Shape& shape);

  bool defined() const { return storage_ != nullptr; }  // false for a default-constructed array
  DType dtype() const { return dtype_; }  // element type
  const Shape& shape() const { return shape_; }  // dimensions (empty for a scalar)
  const Strides& strides() const { return strides_; }  // per axis, in elements (0: broadcast, < 0: reversed)
  int64_t offset() const { return offset_; }  // of the first element into the storage, in elements
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }  // number of dimensions
  int64_t numel() const { return shape_numel(shape_); }  // number of elements of the view
  // Bytes of the view's elements packed (numel * element size), not of the storage behind it.
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  bool is_contiguous() const;  // row-major and packed (size-1 axes may have any stride)
  // Whether both are views of the same Storage (writes through one are seen by the other).
  bool shares_storage_with(const Array& other) const { return storage_ && storage_ == other.storage_; }
  const std::shared_ptr<Storage>& storage() const { return storage_; }  // null when undefined
  // Where the data lives. Element access (data, to_f64, item, printing, astype) needs the host; copy a
  // device array there with to(host_device()).
  Device& device() const;
  bool on_host() const { return !storage_ || storage_->device().is_host(); }  // true for an undefined array too
  // This array on `device`: itself when already there, else a packed copy.
  Array to(Device& device) const;
  // The address of the view's first element on its device (a device pointer for device arrays).
  void* device_data() const;

  // Pointer to the element at the view's offset; T must match the dtype.
  template <class T>
  T* data() const {
    TESSERA_CHECK(dtype_of<std::remove_const_t<T>>() == dtype_, "Array::data: requested {} but the array holds {}",
                  dtype_name(dtype_of<std::remove_const_t<T>>()), dtype_name(dtype_));
    return reinterpret_cast<T*>(raw_data());
  }
  // Untyped address of the view's first element; throws tessera::Error when undefined or off the host.
  void* raw_data() const;

  // Views (no copy): permute, transpose, broadcast_to, slice, squeeze, unsqueeze, and reshape when
  // the strides allow it (otherwise reshape copies).
  Array reshape(const Shape& shape) const;
  Array permute(const std::vector<int64_t>& axes) const;  // axes: a permutation of 0..rank-1 (negatives allowed)
  Array transpose(int64_t a, int64_t b) const;  // swaps two axes
  // NumPy broadcasting: leading axes are added, size-1 axes stretched (stride 0); throws otherwise.
  Array broadcast_to(const Shape& shape) const;
  // Python slice semantics on one axis: start/stop are clamped, negative values count from the end,
  // step may be negative (a reversed view) but not zero.
  Array slice(int64_t axis, int64_t start, int64_t stop, int64_t step = 1) const;
  Array squeeze(const std::vector<int64_t>& axes = {}) const;  // empty: every size-1 axis
  Array unsqueeze(int64_t axis) const;  // inserts a size-1 axis at `axis` (in -rank-1..rank)
  // Strides for a view of this array as `shape`, if one exists without copying.
  bool reshape_strides(const Shape& shape, Strides* out) const;

  Array contiguous() const;  // this array if already contiguous, else a packed copy
  Array copy() const;        // always a fresh packed copy
  // Writes src's values into this array's elements (same shape; converts dtype); allocates nothing.
  void copy_from(const Array& src);
  Array astype(DType dtype) const;  // a fresh contiguous host copy converted to `dtype` (even if it is the same)

  // Element access in logical (row-major) order, for tests and printing.
  double item() const;  // the single element of a one-element array, as double
  std::vector<double> to_f64() const;   // every element converted to double
  std::vector<int64_t> to_i64() const;  // every element converted to int64 (floats truncate toward zero, saturating)
  // Every element converted to T.
  template <class T>
  std::vector<T> to_vector() const;
  // "array(f32[2, 3], [1, 2, ...])": dtype, shape and the first `max_elements` elements.
  std::string to_string(int64_t max_elements = 64) const;

 private:
  Array(std::shared_ptr<Storage> storage, DType dtype, Shape shape, Strides strides, int64_t offset)
      : storage_(std::move(storage)), dtype_(dtype), shape_(std::move(shape)), strides_(std::move(strides)),
        offset_(offset) {}
  Array with_layout(Shape shape, Strides strides, int64_t offset) const {
    return Array(storage_, dtype_, std::move(shape), std::move(strides), offset);
  }

  std::shared_ptr<Storage> storage_;
  DType dtype_ = DType::f32;
  Shape shape_;
  Strides strides_;
  int64_t offset_ = 0;
};

template <class T>
Array Array::from_vector(const std::vector<T>& values, const Shape& shape) {
  TESSERA_CHECK(static_cast<int64_t>(values.size()) == shape_numel(shape),
                "Array::from_vector: {} values do not fill shape {} ({} elements)", values.size(), shape_str(shape),
                shape_numel(shape));
  Array a = empty(dtype_of<T>(), shape);
  T* out = a.data<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return a;
}

template <class T>
std::vector<T> Array::to_vector() const {
  Array c = astype(dtype_of<T>()).contiguous();
  const T* p = c.data<T>();
  return std::vector<T>(p, p + c.numel());
}

}  // namespace tessera
