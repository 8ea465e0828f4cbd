//! Random well-formed function generator for property tests and fuzzing.
