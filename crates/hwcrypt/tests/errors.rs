//! Error-path tests (being written).
