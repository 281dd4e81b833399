//! Helm's dependency processing (`pkg/chart/v2/util/dependencies.go`): which subcharts are enabled (`condition`:
//! the first resolvable boolean path wins; `tags`), aliases (the subchart copied and renamed), disabled subcharts
//! removed, and `import-values` (`exports.X` strings and `{child, parent}` maps) merged into the parent's values.
//! Also `CheckDependencies`: a declared dependency without a chart in `charts/` stops `helm template`.

use serde_json::Value as Json;

use super::coalesce::{Warnings, coalesce_tables, coalesce_tree};
use super::tree::{Table, Tree, new_table, path_value, table_at};
use super::{Chart, ChartError};
use crate::sprig::semver::is_compatible_range;

/// Helm's `action.CheckDependencies` for the root chart: every `dependencies` entry needs a loaded subchart of
/// that name.
pub fn check_dependencies(chart: &Chart) -> Result<(), ChartError> {
    let missing: Vec<&str> = chart
        .metadata
        .deps()
        .filter(|dep| !chart.dependencies.iter().any(|sub| sub.name() == dep.name))
        .map(|dep| dep.name.as_str())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(ChartError::MissingDependencies(missing.join(", ")))
    }
}

/// Helm's `ProcessDependencies(chart, values)`: rewrites `chart` in place into its enabled tree, with aliases
/// applied and `import-values` merged into each chart's default values.
pub fn process_dependencies(
    chart: &mut Chart,
    values: &Json,
    warnings: &mut Vec<String>,
) -> Result<(), ChartError> {
    process_enabled(chart, values, "", warnings, 0)?;
    process_import_values(chart, warnings, 0)
}

/// The subchart a dependency entry names, copied and renamed to its alias (`getAliasDependency`).
fn alias_dependency(charts: &[Chart], name: &str, version: &str, alias: &str) -> Option<Chart> {
    let found = charts
        .iter()
        .find(|c| c.name() == name && is_compatible_range(version, &c.metadata.version))?;
    let mut copy = found.clone();
    if !alias.is_empty() {
        copy.metadata.name = alias.to_string();
    }
    Some(copy)
}

fn process_enabled(
    chart: &mut Chart,
    values: &Json,
    path: &str,
    warnings: &mut Warnings,
    depth: usize,
) -> Result<(), ChartError> {
    if depth > super::load::MAX_CHART_DEPTH {
        return Ok(());
    }
    let Some(reqs) = chart.metadata.dependencies.as_mut() else {
        return Ok(());
    };
    // Subcharts no entry names keep their place; every entry gets its (aliased) copy.
    let mut subcharts: Vec<Chart> = chart
        .dependencies
        .iter()
        .filter(|existing| {
            !reqs.iter().flatten().any(|req| {
                existing.name() == req.name && is_compatible_range(&req.version, &existing.metadata.version)
            })
        })
        .cloned()
        .collect();
    for req in reqs.iter_mut().flatten() {
        if let Some(copy) = alias_dependency(&chart.dependencies, &req.name, &req.version, &req.alias) {
            subcharts.push(copy);
        }
        if !req.alias.is_empty() {
            req.name = req.alias.clone();
        }
        req.enabled = true;
    }
    chart.dependencies = subcharts;

    let cvals = coalesce_tree(chart, values, false, warnings)?;
    let Some(reqs) = chart.metadata.dependencies.as_mut() else {
        return Ok(());
    };
    // Tags.
    if let Some(tags) = table_at(&cvals, "tags") {
        for req in reqs.iter_mut().flatten() {
            let (mut has_true, mut has_false) = (false, false);
            for tag in &req.tags {
                match tags.borrow().get(tag) {
                    Some(Tree::Scalar(Json::Bool(true))) => has_true = true,
                    Some(Tree::Scalar(Json::Bool(false))) => has_false = true,
                    Some(_) => {
                        warnings.push(format!("returned non-bool value: tag {tag}, chart {}", req.name))
                    }
                    None => {}
                }
            }
            if !has_true && has_false {
                req.enabled = false;
            } else if has_true || !has_false {
                req.enabled = true;
            }
        }
    }
    // Conditions: the first path that holds a bool decides.
    for req in reqs.iter_mut().flatten() {
        for condition in req.condition.trim().split(',') {
            if condition.is_empty() {
                continue;
            }
            match path_value(&cvals, &format!("{path}{condition}")) {
                Some(Tree::Scalar(Json::Bool(flag))) => {
                    req.enabled = flag;
                    break;
                }
                Some(_) => warnings.push(format!(
                    "returned non-bool value: path {condition}, chart {}",
                    req.name
                )),
                None => {}
            }
        }
    }
    let removed: Vec<String> = reqs
        .iter()
        .flatten()
        .filter(|req| !req.enabled)
        .map(|req| req.name.clone())
        .collect();
    reqs.retain(|req| req.as_ref().is_none_or(|req| !removed.contains(&req.name)));
    chart
        .dependencies
        .retain(|sub| !removed.iter().any(|name| name == sub.name()));
    // Only a subchart with dependencies of its own reads the values: the JSON is written for those alone.
    if chart
        .dependencies
        .iter()
        .all(|sub| sub.metadata.dependencies.is_none())
        || depth + 1 > super::load::MAX_CHART_DEPTH
    {
        return Ok(());
    }
    let cvals_json = Tree::Table(cvals).to_json();
    for sub in &mut chart.dependencies {
        let sub_path = format!("{path}{}.", sub.name());
        process_enabled(sub, &cvals_json, &sub_path, warnings, depth + 1)?;
    }
    Ok(())
}

/// `pathToMap(parent, data)`: `data` nested under a dotted path (`.`: as is).
fn path_to_map(path: &str, data: Table) -> Table {
    if path == "." {
        return data;
    }
    let mut current = data;
    for part in path.split('.').rev() {
        let outer = new_table();
        outer.borrow_mut().insert(part.to_string(), Tree::Table(current));
        current = outer;
    }
    current
}

fn process_import_values(chart: &mut Chart, warnings: &mut Warnings, depth: usize) -> Result<(), ChartError> {
    if depth > super::load::MAX_CHART_DEPTH {
        return Ok(());
    }
    for sub in &mut chart.dependencies {
        process_import_values(sub, warnings, depth + 1)?;
    }
    if chart.metadata.dependencies.is_none() {
        return Ok(());
    }
    let cvals = coalesce_tree(chart, &Json::Object(serde_json::Map::new()), true, warnings)?;
    let imported = new_table();
    let Some(reqs) = chart.metadata.dependencies.as_mut() else {
        return Ok(());
    };
    for req in reqs.iter_mut().flatten() {
        let mut rewritten = Vec::new();
        for import in &req.import_values {
            let (child, parent) = match import {
                Json::Object(map) => (
                    super::tree::go_sprint(map.get("child").unwrap_or(&Json::Null)),
                    super::tree::go_sprint(map.get("parent").unwrap_or(&Json::Null)),
                ),
                Json::String(name) => (format!("exports.{name}"), ".".to_string()),
                _ => continue,
            };
            rewritten.push(serde_json::json!({"child": child, "parent": parent}));
            let Some(table) = table_at(&cvals, &format!("{}.{child}", req.name)) else {
                warnings.push(format!(
                    "ImportValues missing table from chart {}: {child}",
                    req.name
                ));
                continue;
            };
            coalesce_tables(&imported, &path_to_map(&parent, table), "", true, warnings, 0);
        }
        req.import_values = rewritten;
    }
    if imported.borrow().is_empty() {
        // Nothing imported (most charts): merging nothing into a copy changes nothing; the JSON is the same.
        chart.values = std::sync::Arc::new(Tree::Table(cvals).to_json());
        return Ok(());
    }
    let merged = Tree::Table(cvals).deep_copy();
    if let Tree::Table(merged) = &merged {
        coalesce_tables(merged, &imported, "", true, warnings, 0);
    }
    chart.values = std::sync::Arc::new(merged.to_json());
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::charts::{Dependency, Metadata};

    fn chart(
        name: &str,
        version: &str,
        values: Json,
        deps: Option<Vec<Dependency>>,
        subs: Vec<Chart>,
    ) -> Chart {
        Chart {
            metadata: Metadata {
                name: name.into(),
                version: version.into(),
                api_version: "v2".into(),
                dependencies: deps.map(|deps| deps.into_iter().map(Some).collect()),
                ..Metadata::default()
            },
            values: values.into(),
            schema: None,
            templates: Vec::new(),
            files: Vec::new(),
            dependencies: subs,
        }
    }

    fn dep(name: &str, version: &str) -> Dependency {
        Dependency {
            name: name.into(),
            version: version.into(),
            ..Dependency::default()
        }
    }

    /// Probe p1 of Helm v4.2.3: conditions, tags, aliases, import-values.
    fn probe_p1() -> Chart {
        let deep = chart("deep", "0.0.1", json!({"d": 1}), None, vec![]);
        let sub1 = chart(
            "sub1",
            "1.2.3",
            json!({"enabled": true, "child": "default", "exports": {"data": {"exportedKey": "ev"}},
                   "deeper": {"x": {"xv": 1}}}),
            Some(vec![dep("deep", "0.0.1")]),
            vec![deep],
        );
        let sub2 = chart(
            "sub2",
            "0.1.0",
            json!({"enabled": false, "s2": "v"}),
            None,
            vec![],
        );
        let deps = vec![
            Dependency {
                condition: "sub1.enabled,global.sub1on".into(),
                tags: vec!["front".into()],
                import_values: vec![json!("data"), json!({"child": "deeper.x", "parent": "imported"})],
                ..dep("sub1", "*")
            },
            Dependency {
                alias: "second".into(),
                condition: "second.enabled".into(),
                ..dep("sub2", "0.1.0")
            },
            Dependency {
                alias: "third".into(),
                tags: vec!["back".into()],
                ..dep("sub2", "0.1.0")
            },
        ];
        chart(
            "p1",
            "0.1.0",
            json!({"top": 1, "tags": {"back": false}, "second": {"enabled": true}, "sub1": {"child": "override"}}),
            Some(deps),
            vec![sub1, sub2],
        )
    }

    #[test]
    fn enables_aliases_and_imports_like_helm() {
        let mut top = probe_p1();
        process_dependencies(&mut top, &json!({}), &mut Vec::new()).unwrap();
        let names: Vec<&str> = top.dependencies.iter().map(Chart::name).collect();
        assert_eq!(names, ["sub1", "second"]);
        let md: Vec<(&str, bool)> = top
            .metadata
            .deps()
            .map(|d| (d.name.as_str(), d.enabled))
            .collect();
        assert_eq!(md, [("sub1", true), ("second", true)]);
        assert_eq!(
            top.metadata.deps().next().unwrap().import_values,
            vec![
                json!({"child": "exports.data", "parent": "."}),
                json!({"child": "deeper.x", "parent": "imported"})
            ]
        );
        let values = crate::charts::coalesce_values(&top, &json!({})).unwrap();
        assert_eq!(values["exportedKey"], json!("ev"));
        assert_eq!(values["imported"], json!({"xv": 1}));
        assert_eq!(
            values["second"],
            json!({"enabled": true, "global": {}, "s2": "v"})
        );
        assert_eq!(values["sub1"]["child"], json!("override"));
    }

    #[test]
    fn user_values_can_disable_a_subchart() {
        let mut top = probe_p1();
        process_dependencies(
            &mut top,
            &json!({"second": {"enabled": false}, "tags": {"back": true}}),
            &mut Vec::new(),
        )
        .unwrap();
        let names: Vec<&str> = top.dependencies.iter().map(Chart::name).collect();
        assert_eq!(names, ["sub1", "third"]);
    }

    #[test]
    fn missing_dependencies_are_named() {
        let top = chart(
            "p",
            "0.1.0",
            json!({}),
            Some(vec![dep("absent", "1.0.0"), dep("gone", "*")]),
            vec![],
        );
        assert_eq!(
            check_dependencies(&top).unwrap_err().to_string(),
            "an error occurred while checking for chart dependencies. You may need to run 'helm dependency build' \
             to fetch missing dependencies: found in Chart.yaml, but missing in charts/ directory: absent, gone"
        );
    }
}
