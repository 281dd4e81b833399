//! The `emcoctl` binary (work in progress: the file commands arrive with the HTTP client).

fn main() {}
