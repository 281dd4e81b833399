//! Tests of the template engine as a whole: syntax, control structures, data access, errors and limits, with
//! expected values taken from what Helm v4 printed for the same templates.
