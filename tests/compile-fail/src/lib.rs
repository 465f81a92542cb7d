//! What a mistake in an action tells its author: `tests/compile_fail/` holds an action written
//! wrong in each file, and beside it the one error rustc prints for it. A crate of its own so
//! that trybuild, which builds each case against the dependencies of the crate holding the test,
//! builds mcp-fusion and what the cases name, not mcp-fusion's dev-dependencies.
