//! `#[circuit_breaker]` with the facade renamed in Cargo.toml (`r4 = { package =
//! "resilience4rs", .. }`): the generated code finds it as `::r4`. The pass case is built and
//! run by trybuild, in a project whose only name for the facade is `r4`.

#[test]
fn renamed_dependency() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/pass/*.rs");
}
