//! What a mistake in an action looks like to its author: one error per mistake, saying what to
//! write (`tests/compile_fail/*.stderr` hold rustc's output). `TRYBUILD=overwrite` rewrites
//! them after a deliberate change of a message.

#[test]
fn each_mistake_is_one_error_that_says_what_to_write() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/compile_fail/*.rs");
}
