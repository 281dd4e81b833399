//! The parameters of a status query, checked before anything is read: `type`/`status`, `output`, `instance`,
//! repeatable `app`, `cluster` and `resource`, the list flags `apps`, `clusters`, `resources`, and `conditions`
//! (`notready`, the default, or `all`: which resources of a `status=ready` answer show their `Ready` condition)
//! and `readiness` (the answer ends with the state object).
//! Single-valued parameters use their first value and unknown parameters are ignored, as in EMCO.
//! What applies depends on the subject (EMCO §1.2): a deployment intent group takes everything; cluster network
//! intents have only the full query (list flags ignored, `app` checked but ignored); a logical cloud ignores `app` and
//! `apps`, and defaults to `status=ready`.

use emco_model::{ContextId, shown, validate_label_value};

/// A parameter that cannot be used, with what would be allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid query parameter '{parameter}': {message}")]
pub struct QueryError {
    /// The parameter.
    pub parameter: &'static str,
    /// What is wrong and what is allowed.
    pub message: String,
}

fn invalid(parameter: &'static str, message: impl Into<String>) -> QueryError {
    QueryError {
        parameter,
        message: message.into(),
    }
}

/// What kind of resource a status query is about: each takes its own subset of the parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubjectKind {
    /// A deployment intent group (orchestrator): every parameter.
    Dig,
    /// The network intents of one cluster (ncm): only the full query.
    ClusterNetworks,
    /// A logical cloud (dcm): `status=ready` by default, no `app`/`apps`.
    LogicalCloud,
}

/// Which JSON shape the answer has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// The seeds' shape (`type=` or no parameter): hyphenated keys, `state.Actions`.
    Seed,
    /// EMCO 22.x (`status=`): camelCase keys, `states`, `connectivity`.
    Emco22,
}

/// What the counts measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// What rsync did (`type=rsync`, `status=deployed`).
    Deployed,
    /// What the cluster reports (`type=cluster`, `status=ready`).
    Cluster,
}

/// How much of the answer to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Counts only.
    Summary,
    /// Counts and every resource.
    All,
    /// Counts and every resource with its object.
    Detail,
}

/// The list queries of EMCO 22.x (by precedence: apps, then clusters, then resources).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListQuery {
    /// `?apps`: the app names.
    Apps,
    /// `?clusters`: the clusters of each app.
    Clusters,
    /// `?resources`: the resources of each app on each cluster.
    Resources,
}

/// A checked status query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusQuery {
    /// The JSON shape.
    pub shape: Shape,
    /// What is counted.
    pub measure: Measure,
    /// How much is written.
    pub output: Output,
    /// Only these apps (empty: all).
    pub apps: Vec<String>,
    /// Only these clusters, `provider+cluster` (empty: all).
    pub clusters: Vec<String>,
    /// Only resources with these names (empty: all).
    pub resources: Vec<String>,
    /// An older context of the DIG instead of the latest.
    pub instance: Option<ContextId>,
    /// A list query instead of the full status.
    pub list: Option<ListQuery>,
    /// Which resources of a `status=ready` answer carry their `conditions`.
    pub conditions: ConditionsShown,
    /// Whether the answer ends with the state object (`readiness`, `readiness=true`; `readiness=false`: not); by
    /// default in EMCO 22.x answers only.
    pub readiness: bool,
}

/// Which resources show their `Ready` condition in a `status=ready` answer (`conditions=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConditionsShown {
    /// Only resources that are not ready (the default, `conditions=notready`).
    #[default]
    NotReady,
    /// Every resource with a verdict (`conditions=all`).
    All,
    /// None (`conditions=none`): the leanest answer, for scripts that read `readyStatus` only.
    None,
}

impl Default for StatusQuery {
    fn default() -> Self {
        Self {
            shape: Shape::Seed,
            measure: Measure::Deployed,
            output: Output::All,
            apps: Vec::new(),
            clusters: Vec::new(),
            resources: Vec::new(),
            instance: None,
            list: None,
            conditions: ConditionsShown::NotReady,
            readiness: false,
        }
    }
}

/// The longest resource name (a Kubernetes DNS subdomain).
pub const MAX_RESOURCE_NAME: usize = 253;

/// The `app` filter as the API document states it (`validate_label_value`): a label value, at most 63 characters.
pub const APP_FILTER_PATTERN: &str = emco_model::names::NAME_PATTERN;
/// The `cluster` filter as the API document states it: `provider+cluster`, each part an EMCO name.
pub const CLUSTER_FILTER_PATTERN: &str =
    "^([A-Za-z0-9][-A-Za-z0-9_.]{0,126})?[A-Za-z0-9]\\+([A-Za-z0-9][-A-Za-z0-9_.]{0,126})?[A-Za-z0-9]$";
/// The `resource` filter as the API document states it (`check_resource_name`), at most [`MAX_RESOURCE_NAME`].
pub const RESOURCE_FILTER_PATTERN: &str = "^[A-Za-z0-9]([-A-Za-z0-9._:]*[A-Za-z0-9])?$";

fn check_resource_name(name: &str) -> Result<(), QueryError> {
    let valid = !name.is_empty()
        && name.len() <= MAX_RESOURCE_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b':'))
        && name.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && name.bytes().last().is_some_and(|b| b.is_ascii_alphanumeric());
    if valid {
        Ok(())
    } else {
        Err(invalid(
            "resource",
            format!("'{}' is not a Kubernetes object name", shown(name)),
        ))
    }
}

/// The words `type` takes (the API document lists them; a test holds them to the parser).
pub const TYPE_VALUES: &[&str] = &["rsync", "cluster"];
/// The words `status` takes.
pub const STATUS_VALUES: &[&str] = &["deployed", "ready"];
/// The words `output` takes.
pub const OUTPUT_VALUES: &[&str] = &["summary", "all", "detail"];
/// The words `conditions` takes.
pub const CONDITIONS_VALUES: &[&str] = &["notready", "all", "none"];
/// The values `readiness` takes (none: true).
pub const READINESS_VALUES: &[&str] = &["", "true", "false"];

/// Parses decoded query pairs (repeated keys kept, in order) of a deployment intent group's status query.
pub fn parse_query(pairs: &[(String, String)]) -> Result<StatusQuery, QueryError> {
    parse_query_for(pairs, SubjectKind::Dig)
}

/// Parses decoded query pairs (repeated keys kept, in order) of the status query of a `kind` of subject, keeping
/// only the parameters that subject takes.
pub fn parse_query_for(pairs: &[(String, String)], kind: SubjectKind) -> Result<StatusQuery, QueryError> {
    let first = |key: &str| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
    fn all<'a>(pairs: &'a [(String, String)], key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        pairs
            .iter()
            .filter(move |(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
    let mut query = StatusQuery::default();

    // dcm answers `status=ready` unless asked otherwise.
    if kind == SubjectKind::LogicalCloud && first("status").is_none() && first("type").is_none() {
        query.shape = Shape::Emco22;
        query.measure = Measure::Cluster;
    }
    if let Some(value) = first("type") {
        query.measure = match value {
            "rsync" => Measure::Deployed,
            "cluster" => Measure::Cluster,
            other => {
                return Err(invalid(
                    "type",
                    format!("'{}' is not allowed; use rsync or cluster", shown(other)),
                ));
            }
        };
    }
    if let Some(value) = first("status") {
        query.shape = Shape::Emco22;
        query.measure = match value {
            "deployed" => Measure::Deployed,
            "ready" => Measure::Cluster,
            other => {
                return Err(invalid(
                    "status",
                    format!("'{}' is not allowed; use deployed or ready", shown(other)),
                ));
            }
        };
    }
    if let Some(value) = first("output") {
        query.output = match value {
            "summary" => Output::Summary,
            "all" => Output::All,
            "detail" => Output::Detail,
            other => {
                return Err(invalid(
                    "output",
                    format!("'{}' is not allowed; use summary, all or detail", shown(other)),
                ));
            }
        };
    }
    if let Some(value) = first("instance") {
        let id = value
            .parse()
            .map_err(|err: emco_model::context::ParseContextIdError| invalid("instance", err.to_string()))?;
        query.instance = Some(id);
    }
    // ncm checks `app` like the orchestrator but has one app only; dcm does not look at it.
    if let Some(value) = first("conditions") {
        query.conditions = match value {
            "notready" => ConditionsShown::NotReady,
            "all" => ConditionsShown::All,
            "none" => ConditionsShown::None,
            other => {
                return Err(invalid(
                    "conditions",
                    format!("'{}' is not allowed; use notready, all or none", shown(other)),
                ));
            }
        };
    }
    // EMCO 22.x answers (`status=`, a logical cloud's default) end with the state object unless `readiness=false`;
    // the seeds' shape keeps seed 000's exact keys unless `readiness` asks for it.
    query.readiness = query.shape == Shape::Emco22;
    if let Some(value) = first("readiness") {
        query.readiness = match value {
            "" | "true" => true,
            "false" => false,
            other => {
                return Err(invalid(
                    "readiness",
                    format!(
                        "'{}' is not allowed; use true or false (or no value)",
                        shown(other)
                    ),
                ));
            }
        };
    }
    if kind != SubjectKind::LogicalCloud {
        for app in all(pairs, "app") {
            validate_label_value("app", app).map_err(|err| invalid("app", err.to_string()))?;
            if kind == SubjectKind::Dig {
                query.apps.push(app.to_string());
            }
        }
    }
    for cluster in all(pairs, "cluster") {
        let hint = "give provider+cluster, with '+' sent as %2B";
        let (provider, name) = cluster
            .split_once('+')
            .ok_or_else(|| invalid("cluster", format!("'{}' has no '+': {hint}", shown(cluster))))?;
        for part in [provider, name] {
            emco_model::validate_name("cluster", part)
                .map_err(|err| invalid("cluster", format!("'{}': {err}; {hint}", shown(cluster))))?;
        }
        query.clusters.push(cluster.to_string());
    }
    for resource in all(pairs, "resource") {
        check_resource_name(resource)?;
        query.resources.push(resource.to_string());
    }
    query.list = if kind == SubjectKind::ClusterNetworks {
        None
    } else if kind == SubjectKind::Dig && first("apps").is_some() {
        Some(ListQuery::Apps)
    } else if first("clusters").is_some() {
        Some(ListQuery::Clusters)
    } else if first("resources").is_some() {
        Some(ListQuery::Resources)
    } else {
        None
    };
    Ok(query)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_documented_words_are_the_parsers() {
        for (name, words) in [
            ("type", super::TYPE_VALUES),
            ("status", super::STATUS_VALUES),
            ("output", super::OUTPUT_VALUES),
            ("conditions", super::CONDITIONS_VALUES),
            ("readiness", super::READINESS_VALUES),
        ] {
            for word in words {
                let pairs = vec![(name.to_string(), (*word).to_string())];
                assert!(super::parse_query(&pairs).is_ok(), "{name}={word} is refused");
            }
            let pairs = vec![(name.to_string(), "other".to_string())];
            assert!(super::parse_query(&pairs).is_err(), "{name}=other is accepted");
        }
    }
    use super::*;

    fn parse(query: &[(&str, &str)]) -> Result<StatusQuery, QueryError> {
        let pairs: Vec<(String, String)> = query
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect();
        parse_query(&pairs)
    }

    #[test]
    fn defaults_are_type_rsync_output_all() {
        assert_eq!(parse(&[]).unwrap(), StatusQuery::default());
        let query = parse(&[
            ("output", "summary"),
            ("output", "detail"),
            ("type", "cluster"),
            ("unknown", "x"),
        ])
        .unwrap();
        assert_eq!(
            (query.output, query.measure, query.shape),
            (Output::Summary, Measure::Cluster, Shape::Seed)
        );
        let emco22 = parse(&[("type", "rsync"), ("status", "ready")]).unwrap();
        assert_eq!(
            (emco22.shape, emco22.measure),
            (Shape::Emco22, Measure::Cluster),
            "status wins over type"
        );
    }

    #[test]
    fn filters_repeat_and_lists_have_a_precedence() {
        let query = parse(&[
            ("app", "sink"),
            ("app", "firewall"),
            ("cluster", "p+edge02"),
            ("resource", "fw0-sink"),
            ("resources", ""),
            ("clusters", ""),
        ])
        .unwrap();
        assert_eq!(query.apps, ["sink", "firewall"]);
        assert_eq!(query.clusters, ["p+edge02"]);
        assert_eq!(query.resources, ["fw0-sink"]);
        assert_eq!(query.list, Some(ListQuery::Clusters));
        assert_eq!(
            parse(&[("conditions", "all")]).unwrap().conditions,
            ConditionsShown::All
        );
        assert_eq!(
            parse(&[("conditions", "none")]).unwrap().conditions,
            ConditionsShown::None
        );
        // The state object ends EMCO 22.x answers unless turned off; the seeds' shape asks for it.
        assert!(parse(&[("status", "ready")]).unwrap().readiness);
        assert!(
            !parse(&[("status", "ready"), ("readiness", "false")])
                .unwrap()
                .readiness
        );
        assert!(!parse(&[("type", "cluster")]).unwrap().readiness);
        assert!(
            parse(&[("type", "cluster"), ("readiness", "")])
                .unwrap()
                .readiness
        );
        assert_eq!(
            parse(&[("instance", "2621114006130701074")]).unwrap().instance,
            ContextId::new(2621114006130701074)
        );
    }

    #[test]
    fn bad_values_name_the_parameter_and_the_allowed_values() {
        let cases = [
            (vec![("output", "foo")], "output", "summary, all or detail"),
            (vec![("type", "bar")], "type", "rsync or cluster"),
            (vec![("status", "x")], "status", "deployed or ready"),
            (vec![("cluster", "edge02")], "cluster", "%2B"),
            (vec![("cluster", "p edge02")], "cluster", "%2B"),
            (vec![("app", "")], "app", "empty"),
            (vec![("instance", "")], "instance", "context id"),
            (vec![("instance", "abc")], "instance", "context id"),
            (vec![("resource", "a/b")], "resource", "a/b"),
            (
                vec![("conditions", "some")],
                "conditions",
                "notready, all or none",
            ),
            (vec![("readiness", "yes")], "readiness", "true or false"),
        ];
        for (query, parameter, hint) in cases {
            let err = parse(&query).unwrap_err();
            assert_eq!(err.parameter, parameter, "{query:?}");
            assert!(err.to_string().contains(hint), "{query:?}: {err}");
        }
    }

    fn parse_for(query: &[(&str, &str)], kind: SubjectKind) -> Result<StatusQuery, QueryError> {
        let pairs: Vec<(String, String)> = query
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect();
        parse_query_for(&pairs, kind)
    }

    #[test]
    fn logical_clouds_default_to_status_ready_and_ignore_apps() {
        let lc = SubjectKind::LogicalCloud;
        let default = parse_for(&[], lc).unwrap();
        assert_eq!(
            (default.shape, default.measure),
            (Shape::Emco22, Measure::Cluster)
        );
        let deployed = parse_for(&[("status", "deployed")], lc).unwrap();
        assert_eq!(
            (deployed.shape, deployed.measure),
            (Shape::Emco22, Measure::Deployed)
        );
        let legacy = parse_for(&[("type", "rsync")], lc).unwrap();
        assert_eq!((legacy.shape, legacy.measure), (Shape::Seed, Measure::Deployed));
        // `app` is not even checked, `apps` does not select a list; `clusters` and `resources` do.
        let query = parse_for(&[("app", ""), ("apps", ""), ("cluster", "p+c1")], lc).unwrap();
        assert!(query.apps.is_empty());
        assert_eq!(query.clusters, ["p+c1"]);
        assert_eq!(query.list, None);
        let query = parse_for(&[("apps", ""), ("resources", ""), ("clusters", "")], lc).unwrap();
        assert_eq!(query.list, Some(ListQuery::Clusters));
        let query = parse_for(&[("apps", ""), ("resources", "")], lc).unwrap();
        assert_eq!(query.list, Some(ListQuery::Resources));
    }

    #[test]
    fn cluster_network_intents_have_only_the_full_query() {
        let ncm = SubjectKind::ClusterNetworks;
        let query = parse_for(
            &[
                ("apps", ""),
                ("clusters", ""),
                ("resources", ""),
                ("app", "network-intents"),
            ],
            ncm,
        )
        .unwrap();
        assert_eq!(query.list, None);
        assert!(query.apps.is_empty(), "the app filter is ignored");
        assert_eq!(query, StatusQuery::default());
        // ... but checked, as ncm does.
        assert_eq!(parse_for(&[("app", "")], ncm).unwrap_err().parameter, "app");
        let ready = parse_for(&[("status", "ready"), ("resource", "emco-private-net")], ncm).unwrap();
        assert_eq!((ready.shape, ready.measure), (Shape::Emco22, Measure::Cluster));
        assert_eq!(ready.resources, ["emco-private-net"]);
        assert_eq!(
            parse_for(&[], ncm).unwrap(),
            parse(&[]).unwrap(),
            "no default status"
        );
    }
}
