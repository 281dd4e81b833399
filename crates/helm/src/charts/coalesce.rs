//! Helm's values coalescing (`pkg/chart/common/util/coalesce.go`): user values over chart defaults, recursively into
//! subcharts under their (alias) names, `global` copied down into every subchart (parent globals win), `null` in
//! user values deleting a default, maps merged and scalars/lists replaced, type mismatches warned about and skipped.
//! Also [`prepare`], the whole `helm template` values pipeline.
//!
//! The port keeps Go's aliasing (see [`super::tree`]) and its mutation of the source tables, because Helm's
//! results depend on both.

use serde_json::Value as Json;

use super::dependencies::process_dependencies;
use super::schema::validate_against_schema;
use super::tree::{MAX_DEPTH, Table, Tree, get, new_table, set, snapshot};
use super::{Chart, ChartError};

fn concat_prefix(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}.{b}")
    }
}

/// Where coalescing warnings go (Helm logs them; they never fail a render).
pub(crate) type Warnings = Vec<String>;

/// Go's `%t` of a value that is not a bool, for `type mismatch on NAME: %t`.
fn percent_t(value: &Tree) -> String {
    match value {
        Tree::Null => "%!t(<nil>)".into(),
        Tree::Scalar(Json::Bool(flag)) => flag.to_string(),
        Tree::Scalar(Json::String(text)) => format!("%!t(string={text})"),
        Tree::Scalar(Json::Number(number)) => {
            format!(
                "%!t(float64={})",
                super::tree::go_sprint(&Json::Number(number.clone()))
            )
        }
        Tree::Scalar(Json::Array(items)) => format!(
            "[{}]",
            items
                .iter()
                .map(|item| percent_t(&Tree::from_json(item)))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        other => format!(
            "%!t(map[string]interface {{}}={})",
            super::tree::go_sprint(&other.to_json())
        ),
    }
}

/// `CoalesceValues(chart, vals)` (`merge` false) or `MergeValues` (`merge` true): a new table.
pub(crate) fn coalesce_tree(
    chart: &Chart,
    values: &Json,
    merge: bool,
    warnings: &mut Warnings,
) -> Result<Table, ChartError> {
    let dest = match Tree::from_json(values) {
        Tree::Table(table) => table,
        _ => new_table(),
    };
    coalesce(chart, &dest, "", merge, warnings, 0)?;
    Ok(dest)
}

/// Helm's `CoalesceValues(chart, values)`: the chart's (and its subcharts') defaults under `values`.
pub fn coalesce_values(chart: &Chart, values: &Json) -> Result<Json, ChartError> {
    let mut warnings = Vec::new();
    Ok(Tree::Table(coalesce_tree(chart, values, false, &mut warnings)?).to_json())
}

fn coalesce(
    chart: &Chart,
    dest: &Table,
    prefix: &str,
    merge: bool,
    warnings: &mut Warnings,
    depth: usize,
) -> Result<(), ChartError> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    coalesce_chart_values(chart, dest, prefix, merge, warnings);
    coalesce_deps(chart, dest, prefix, merge, warnings, depth)
}

fn coalesce_deps(
    chart: &Chart,
    dest: &Table,
    prefix: &str,
    merge: bool,
    warnings: &mut Warnings,
    depth: usize,
) -> Result<(), ChartError> {
    for sub in &chart.dependencies {
        let name = sub.name();
        let sub_table = match get(dest, name) {
            None => {
                let table = new_table();
                set(dest, name, Tree::Table(table.clone()));
                table
            }
            Some(Tree::Table(table)) => table,
            Some(other) => {
                return Err(ChartError::Values(format!(
                    "type mismatch on {name}: {}",
                    percent_t(&other)
                )));
            }
        };
        let sub_prefix = concat_prefix(prefix, chart.name());
        coalesce_globals(&sub_table, dest, &sub_prefix, warnings);
        coalesce(sub, &sub_table, &sub_prefix, merge, warnings, depth + 1)?;
    }
    Ok(())
}

/// Copies the parent's `global` (`src`) into the subchart's values (`dest`); the parent's entries win.
fn coalesce_globals(dest: &Table, src: &Table, prefix: &str, warnings: &mut Warnings) {
    let dest_globals = match get(dest, "global") {
        None => new_table(),
        Some(Tree::Table(table)) => table,
        Some(_) => {
            warnings.push("warning: skipping globals because destination global is not a table.".into());
            return;
        }
    };
    let src_globals = match get(src, "global") {
        None => new_table(),
        Some(Tree::Table(table)) => table,
        Some(_) => {
            warnings.push("warning: skipping globals because source global is not a table.".into());
            return;
        }
    };
    for (key, value) in snapshot(&src_globals) {
        match &value {
            Tree::Table(table) => {
                // Go's copyMap: a shallow copy whose nested tables stay shared with the parent's.
                let copy: Table = std::rc::Rc::new(std::cell::RefCell::new(table.borrow().clone()));
                match get(&dest_globals, &key) {
                    None => set(&dest_globals, &key, Tree::Table(copy)),
                    Some(Tree::Table(dest_table)) => {
                        coalesce_tables(
                            &copy,
                            &dest_table,
                            &concat_prefix(prefix, &key),
                            true,
                            warnings,
                            0,
                        );
                        set(&dest_globals, &key, Tree::Table(copy));
                    }
                    Some(_) => warnings.push(format!(
                        "Conflict: cannot merge map onto non-map for {key:?}. Skipping."
                    )),
                }
            }
            _ => {
                if matches!(get(&dest_globals, &key), Some(Tree::Table(_))) {
                    warnings.push(format!("key {key} is table. Skipping"));
                } else {
                    set(&dest_globals, &key, value.clone());
                }
            }
        }
    }
    set(dest, "global", Tree::Table(dest_globals));
}

/// Merges a chart's default values into `values` (user values win).
fn coalesce_chart_values(chart: &Chart, values: &Table, prefix: &str, merge: bool, warnings: &mut Warnings) {
    let sub_prefix = concat_prefix(prefix, chart.name());
    let Tree::Table(defaults) = Tree::from_json(&chart.values) else {
        return;
    };
    // A fresh copy nobody else holds: its entries are moved out rather than cloned.
    let defaults = std::mem::take(&mut *defaults.borrow_mut());
    for (key, default) in defaults {
        match get(values, &key) {
            Some(Tree::Null) if !merge => {
                values.borrow_mut().remove(&key);
            }
            Some(Tree::Table(dest)) => match &default {
                Tree::Table(src) => {
                    let merge = merge || chart.dependencies.iter().any(|sub| sub.name() == key);
                    if !merge {
                        clean_nil_values(src, 0);
                    }
                    coalesce_tables(&dest, src, &concat_prefix(&sub_prefix, &key), merge, warnings, 0);
                }
                Tree::Null => {}
                _ => warnings.push(format!(
                    "warning: skipped value for {sub_prefix}.{key}: Not a table."
                )),
            },
            Some(_) => {}
            None => {
                if !merge {
                    if default.is_null() {
                        continue;
                    }
                    if let Tree::Table(sub) = &default {
                        clean_nil_values(sub, 0);
                    }
                }
                set(values, &key, default);
            }
        }
    }
}

/// Helm's `coalesceTablesFullKey(dst, src)`: `src` fills in `dst`; `dst` wins on conflicts.
pub(crate) fn coalesce_tables(
    dst: &Table,
    src: &Table,
    prefix: &str,
    merge: bool,
    warnings: &mut Warnings,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    // Keys that `dst` holds as `nil` while `src` held a value before they were nulled below (Go's `src[key] =
    // nil` for every `nil` of `dst` comes first): only these are deleted from `dst` when not merging.
    let mut nulled_over_values: Vec<String> = Vec::new();
    let dst_nulls: Vec<String> = dst
        .borrow()
        .iter()
        .filter(|(_, value)| value.is_null())
        .map(|(key, _)| key.clone())
        .collect();
    for key in dst_nulls {
        if get(src, &key).is_some_and(|held| !held.is_null()) {
            nulled_over_values.push(key.clone());
        }
        set(src, &key, Tree::Null);
    }
    for (key, value) in snapshot(src) {
        match get(dst, &key) {
            Some(Tree::Null) if !merge && nulled_over_values.contains(&key) => {
                dst.borrow_mut().remove(&key);
            }
            None => set(dst, &key, value),
            Some(dest_value) => match (&value, &dest_value) {
                (Tree::Table(src_table), Tree::Table(dst_table)) => {
                    let full_key = concat_prefix(prefix, &key);
                    coalesce_tables(dst_table, src_table, &full_key, merge, warnings, depth + 1);
                }
                (Tree::Table(_), _) => warnings.push(format!(
                    "warning: cannot overwrite table with non table for {} ({})",
                    concat_prefix(prefix, &key),
                    super::tree::go_sprint(&value.to_json())
                )),
                (other, Tree::Table(_)) if !other.is_null() => warnings.push(format!(
                    "warning: destination for {} is a table. Ignoring non-table value ({})",
                    concat_prefix(prefix, &key),
                    super::tree::go_sprint(&other.to_json())
                )),
                _ => {}
            },
        }
    }
}

fn clean_nil_values(table: &Table, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    for (key, value) in snapshot(table) {
        match value {
            Tree::Null => {
                table.borrow_mut().remove(&key);
            }
            Tree::Table(sub) => clean_nil_values(&sub, depth + 1),
            Tree::Scalar(_) => {}
        }
    }
}

/// The values pipeline of Helm's install/template action: `ProcessDependencies` (enabled subcharts, aliases,
/// `import-values`), `CoalesceValues` with `user_values`, then schema validation. Returns the enabled chart tree and
/// the top-level `.Values`.
///
/// Like Helm's SDK (`action.Install`), it does not refuse dependencies missing from `charts/`: the `helm` CLI does
/// that before calling the SDK; call [`super::check_dependencies`] first for the CLI's behaviour.
pub fn prepare(chart: &Chart, user_values: &Json) -> Result<(Chart, Json), ChartError> {
    let (chart, values, _) = prepare_with_warnings(chart, user_values)?;
    Ok((chart, values))
}

/// [`prepare`], also returning Helm's coalescing warnings (what `helm` logs, e.g. `warning: skipped value for
/// chart.key: Not a table.`).
pub fn prepare_with_warnings(
    chart: &Chart,
    user_values: &Json,
) -> Result<(Chart, Json, Vec<String>), ChartError> {
    let mut warnings = Vec::new();
    let mut chart = chart.clone();
    process_dependencies(&mut chart, user_values, &mut warnings)?;
    let values = Tree::Table(coalesce_tree(&chart, user_values, false, &mut warnings)?).to_json();
    validate_against_schema(&chart, &values)?;
    Ok((chart, values, warnings))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::charts::Metadata;

    fn chart(name: &str, values: Json, deps: Vec<Chart>) -> Chart {
        Chart {
            metadata: Metadata {
                name: name.into(),
                version: "0.1.0".into(),
                api_version: "v2".into(),
                ..Metadata::default()
            },
            values: values.into(),
            schema: None,
            templates: Vec::new(),
            files: Vec::new(),
            dependencies: deps,
        }
    }

    #[test]
    fn user_values_win_nulls_delete_and_mismatches_are_skipped() {
        // Expected values from Helm v4.2.3 (probe p2).
        let c = chart(
            "p2",
            json!({"a": 5, "b": {"c": 2, "d": 3}, "e": [1], "f": "str", "g": {"h": 1}, "second": "doc"}),
            vec![chart("packed", json!({"pv": 1}), vec![])],
        );
        let user = json!({"b": {"c": null, "x": 1}, "e": {"m": 1}, "f": {"n": 1}, "g": "scalar", "packed": {"pv": null, "z": 2}});
        assert_eq!(
            coalesce_values(&c, &user).unwrap(),
            json!({"a":5,"b":{"d":3,"x":1},"e":{"m":1},"f":{"n":1},"g":"scalar","packed":{"global":{},"z":2},"second":"doc"})
        );
    }

    #[test]
    fn globals_flow_down_and_nested_defaults_leak_up_as_in_go() {
        // Helm v4.2.3 (probe p1): the subchart's default global.nest.a.c shows up in the parent's globals.
        let deep = chart("deep", json!({"d": 1}), vec![]);
        let sub = chart(
            "sub1",
            json!({"global": {"g1": "childg", "g2": "childonly", "nest": {"a": {"b": 2, "c": 3}}}}),
            vec![deep],
        );
        let top = chart(
            "p1",
            json!({"global": {"g1": "parentg", "nest": {"a": {"b": 1}}}}),
            vec![sub],
        );
        let values = coalesce_values(&top, &json!({})).unwrap();
        assert_eq!(
            values["global"],
            json!({"g1": "parentg", "nest": {"a": {"b": 1, "c": 3}}})
        );
        assert_eq!(
            values["sub1"]["global"],
            json!({"g1": "parentg", "g2": "childonly", "nest": {"a": {"b": 1, "c": 3}}})
        );
        assert_eq!(
            values["sub1"]["deep"],
            json!({"d": 1, "global": {"g1": "parentg", "g2": "childonly", "nest": {"a": {"b": 1, "c": 3}}}})
        );
    }

    #[test]
    fn a_scalar_where_a_subchart_table_belongs_is_helms_error() {
        let top = chart("p3", json!({}), vec![chart("sc", json!({"port": 80}), vec![])]);
        let err = coalesce_values(&top, &json!({"sc": 5})).unwrap_err();
        assert_eq!(err.to_string(), "type mismatch on sc: %!t(float64=5)");
    }
}
