//! Spring Boot configuration loading for `breaker` (see issue #3).
