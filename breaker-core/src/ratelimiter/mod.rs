//! Rate limiter (in progress).
