//! The billing demo server (being written).
fn main() {}
