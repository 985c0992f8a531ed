#pragma once
// Ops registered only by the IR tests, so that the IR machinery can be exercised independently of
// the op families: one op taking an optional attribute of every kind, a two-output op, and an
// identity whose reference kernel counts its invocations (to observe evaluation memoisation).
#include <atomic>

namespace tessera::test {

// "test.attrs": x -> x, optional attributes i:int, f:float, b:bool, s:string, is:ints, fs:floats,
//               dt:dtype, t:tensor.
// "test.split2": x -> (x, i64 of x's shape), differentiable through output 0.
// "test.count": x -> x, incrementing test_count_calls each time its reference kernel runs.
void register_ir_test_ops();  // idempotent
extern std::atomic<int> test_count_calls;

}  // namespace tessera::test
