//! App dependencies as a graph: the one cycle check shared by the API (a dependency that would close a cycle is
//! refused when it is written) and instantiation (a cycle stored before that rule existed is refused there).

use std::collections::BTreeMap;

use crate::AppDependencySpec;

/// The first cycle among the apps' dependencies (`a → b → a`, the first app repeated at the end), searched in
/// the order the apps are given; `None` when there is none. Each app comes with the dependencies it waits for;
/// dependencies on apps not in `apps` are ignored (they cannot hold anything up). An app that depends on itself
/// is a cycle of one (`a → a`).
pub fn dependency_cycle<'a>(
    apps: impl IntoIterator<Item = (&'a str, &'a [AppDependencySpec])>,
) -> Option<Vec<String>> {
    let apps: Vec<(&str, &[AppDependencySpec])> = apps.into_iter().collect();
    let index: BTreeMap<&str, usize> = apps.iter().enumerate().map(|(i, (name, _))| (*name, i)).collect();
    // 0 = not visited, 1 = on the current path, 2 = done.
    let mut state = vec![0u8; apps.len()];
    for start in 0..apps.len() {
        if state[start] != 0 {
            continue;
        }
        // Iterative depth-first search (no recursion, whatever the graph): (app, next dependency to look at).
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        state[start] = 1;
        while let Some((app, next)) = path.last().copied() {
            let dependencies = apps[app].1;
            if next >= dependencies.len() {
                state[app] = 2;
                path.pop();
                continue;
            }
            if let Some(top) = path.last_mut() {
                top.1 += 1;
            }
            let Some(&target) = index.get(dependencies[next].app.as_str()) else {
                continue;
            };
            match state[target] {
                0 => {
                    state[target] = 1;
                    path.push((target, 0));
                }
                1 => {
                    let from = path.iter().position(|(node, _)| *node == target).unwrap_or(0);
                    let mut cycle: Vec<String> = path[from..]
                        .iter()
                        .map(|(node, _)| apps[*node].0.to_string())
                        .collect();
                    cycle.push(apps[target].0.to_string());
                    return Some(cycle);
                }
                _ => {}
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cycle_of(edges: &[(&str, &[&str])]) -> Option<Vec<String>> {
        let apps: Vec<(&str, Vec<AppDependencySpec>)> = edges
            .iter()
            .map(|(name, on)| {
                let dependencies = on
                    .iter()
                    .map(|app| AppDependencySpec {
                        app: (*app).to_string(),
                        op_status: "Ready".into(),
                        wait: 0,
                    })
                    .collect();
                (*name, dependencies)
            })
            .collect();
        dependency_cycle(apps.iter().map(|(name, on)| (*name, on.as_slice())))
    }

    #[test]
    fn finds_dependency_cycles_and_only_those() {
        assert_eq!(cycle_of(&[("a", &["b"]), ("b", &["c"]), ("c", &[])]), None);
        // A diamond is not a cycle; a dependency on an app outside the set is ignored.
        assert_eq!(
            cycle_of(&[
                ("a", &["b", "c"]),
                ("b", &["d"]),
                ("c", &["d"]),
                ("d", &["elsewhere"])
            ]),
            None
        );
        assert_eq!(cycle_of(&[("a", &["a"])]), Some(vec!["a".into(), "a".into()]));
        assert_eq!(
            cycle_of(&[("x", &[]), ("a", &["b"]), ("b", &["c"]), ("c", &["b"])]),
            Some(vec!["b".into(), "c".into(), "b".into()])
        );
        assert_eq!(cycle_of(&[]), None);
    }

    #[test]
    fn a_long_chain_closed_at_its_end_is_found_without_recursion() {
        let names: Vec<String> = (0..10_000).map(|i| format!("app{i}")).collect();
        let specs: Vec<Vec<AppDependencySpec>> = (0..names.len())
            .map(|i| {
                vec![AppDependencySpec {
                    app: names[(i + 1) % names.len()].clone(),
                    op_status: "Ready".into(),
                    wait: 0,
                }]
            })
            .collect();
        let cycle = dependency_cycle(
            names
                .iter()
                .map(String::as_str)
                .zip(specs.iter().map(Vec::as_slice)),
        )
        .expect("a ring is a cycle");
        assert_eq!(cycle.len(), names.len() + 1);
        assert_eq!(cycle.first(), cycle.last());
    }
}
