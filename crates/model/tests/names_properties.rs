//! Properties of the name rules over arbitrary input: the checks never panic, accept exactly EMCO's pattern
//! (`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`, at most 128 characters; 63 for label values), and a refusal's
//! message stays short however long the hostile name is.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use emco_model::{MAX_LABEL_VALUE_LEN, MAX_NAME_LEN, validate_label_value, validate_name};
use proptest::prelude::*;

/// EMCO's rule, spelled as its regular expression (an independent statement of what the checks implement).
fn matches_rule(name: &str, max: usize) -> bool {
    let pattern = regex::Regex::new("^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$").unwrap();
    pattern.is_match(name) && name.chars().count() <= max
}

/// Names near the rule: mostly allowed characters, sometimes a stray one, any length around the limits.
fn near_names() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z0-9][-A-Za-z0-9_.]{0,140}",
        "[-A-Za-z0-9_. /é]{0,70}",
        any::<String>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn names_are_accepted_exactly_by_the_rule(name in near_names()) {
        prop_assert_eq!(validate_name("project", &name).is_ok(), matches_rule(&name, MAX_NAME_LEN), "{:?}", name);
        prop_assert_eq!(
            validate_label_value("app", &name).is_ok(),
            matches_rule(&name, MAX_LABEL_VALUE_LEN),
            "{:?}", name
        );
    }

    #[test]
    fn refusals_stay_short(name in near_names(), repeat in 1usize..2000) {
        let long = name.repeat(repeat);
        if let Err(err) = validate_name("project", &long) {
            let message = err.to_string();
            prop_assert!(message.chars().count() < 400, "{} characters", message.chars().count());
        }
    }
}
