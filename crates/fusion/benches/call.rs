//! The in-process call path (being written).
fn main() {}
