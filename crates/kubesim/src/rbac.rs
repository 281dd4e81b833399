//! Authorization by RBAC, as the Kubernetes API server does it: Roles, ClusterRoles, RoleBindings and
//! ClusterRoleBindings (`rbac.authorization.k8s.io/v1`) are ordinary stored objects, read on every request.
//!
//! A request is allowed when a ClusterRoleBinding, or a RoleBinding of the request's namespace, binds the user
//! (subjects `User`, `Group`, `ServiceAccount`) to a role with a rule matching the verb, API group, resource
//! (`pods`, `pods/log`, `pods/*`, `*/scale`, `*`) and, when the rule lists them, the object's name. Members of
//! `system:masters` bypass RBAC. Health and `/version` are open to everyone, discovery and OpenAPI to every
//! authenticated user; other paths outside the resource API need a rule with `nonResourceURLs`.
//!
//! A denial is Kubernetes' 403 `Forbidden` Status with its exact message, e.g.
//! `pods "web" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "t1"`.

use axum::http::Method;
use serde_json::{Value as Json, json};

use crate::auth::UserInfo;
use crate::catalog::TypeKey;
use crate::cluster::ClusterShared;
use crate::error::ApiError;
use crate::request::{Query, Route, Target};
use crate::store::Store;

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// What a resource request asks to do, in RBAC's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceAttributes {
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`.
    pub verb: String,
    /// API group (empty for the core group).
    pub group: String,
    /// The resource (plural).
    pub resource: String,
    /// The subresource (`status`, `log`, `scale`).
    pub subresource: Option<String>,
    /// The namespace (none: cluster scope). A Namespace's own name is its namespace, as in Kubernetes.
    pub namespace: Option<String>,
    /// The object's name (none for collections and creates).
    pub name: Option<String>,
}

impl ResourceAttributes {
    /// The attributes of a request for `target`.
    #[must_use]
    pub fn of(method: &Method, target: &Target, query: &Query) -> Self {
        let verb = match *method {
            Method::GET | Method::HEAD if query.flag("watch") => "watch",
            Method::GET | Method::HEAD if target.name.is_some() => "get",
            Method::GET | Method::HEAD => "list",
            Method::POST => "create",
            Method::PUT => "update",
            Method::PATCH => "patch",
            Method::DELETE if target.name.is_some() => "delete",
            Method::DELETE => "deletecollection",
            _ => "unknown",
        };
        let namespace = if target.group.is_empty() && target.plural == "namespaces" {
            target.name.clone()
        } else {
            target.namespace.clone()
        };
        Self {
            verb: verb.to_string(),
            group: target.group.clone(),
            resource: target.plural.clone(),
            subresource: target.subresource.clone(),
            namespace,
            name: target.name.clone(),
        }
    }

    /// `pods` or `pods/log`.
    fn resource_with_subresource(&self) -> String {
        match &self.subresource {
            Some(sub) => format!("{}/{sub}", self.resource),
            None => self.resource.clone(),
        }
    }

    /// The 403 Kubernetes answers when `user` may not do this.
    #[must_use]
    pub fn forbidden(&self, user: &UserInfo) -> ApiError {
        let qualified = if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}.{}", self.resource, self.group)
        };
        let subject = match &self.name {
            Some(name) => format!("{qualified} \"{name}\""),
            None => qualified,
        };
        let scope = match &self.namespace {
            Some(namespace) => format!("in the namespace \"{namespace}\""),
            None => "at the cluster scope".to_string(),
        };
        let mut error = ApiError::forbidden(format!(
            "{subject} is forbidden: User \"{}\" cannot {} resource \"{}\" in API group \"{}\" {scope}",
            user.name,
            self.verb,
            self.resource_with_subresource(),
            self.group
        ));
        let mut details = json!({"kind": self.resource});
        if let Some(name) = &self.name {
            details["name"] = json!(name);
        }
        if !self.group.is_empty() {
            details["group"] = json!(self.group);
        }
        error.details = Some(details);
        error
    }
}

/// Whether `user` may make a request to `route` (`path` without the query); a denial is the 403 Kubernetes
/// answers.
pub fn authorize(
    cluster: &ClusterShared,
    user: &UserInfo,
    method: &Method,
    route: &Route,
    query: &Query,
    path: &str,
) -> Result<(), ApiError> {
    if user.in_group(crate::tls::MASTERS_GROUP) {
        return Ok(());
    }
    match route {
        Route::Health | Route::Version => Ok(()),
        Route::CoreVersions
        | Route::Groups
        | Route::Group(_)
        | Route::Resources(..)
        | Route::OpenApiIndex
        | Route::OpenApiDocument(..)
            if !user.is_anonymous() =>
        {
            Ok(())
        }
        Route::Resource(target) => {
            let attributes = ResourceAttributes::of(method, target, query);
            if allows_resource(&cluster.store(), user, &attributes) {
                Ok(())
            } else {
                Err(attributes.forbidden(user))
            }
        }
        _ => {
            let verb = method.as_str().to_ascii_lowercase();
            if allows_path(&cluster.store(), user, &verb, path) {
                Ok(())
            } else {
                Err(ApiError::forbidden(format!(
                    "forbidden: User \"{}\" cannot {verb} path \"{path}\"",
                    user.name
                )))
            }
        }
    }
}

fn strings(value: &Json) -> impl Iterator<Item = &str> {
    value.as_array().into_iter().flatten().filter_map(Json::as_str)
}

fn lists(value: &Json, wanted: &str) -> bool {
    strings(value).any(|item| item == "*" || item == wanted)
}

fn rule_allows_resource(rule: &Json, attributes: &ResourceAttributes) -> bool {
    if !lists(&rule["verbs"], &attributes.verb) || !lists(&rule["apiGroups"], &attributes.group) {
        return false;
    }
    let wanted = attributes.resource_with_subresource();
    let resource_matches = strings(&rule["resources"]).any(|resource| {
        resource == "*"
            || resource == wanted
            || attributes.subresource.as_ref().is_some_and(|sub| {
                resource == format!("{}/*", attributes.resource) || resource == format!("*/{sub}")
            })
    });
    if !resource_matches {
        return false;
    }
    let names: Vec<&str> = strings(&rule["resourceNames"]).collect();
    names.is_empty()
        || attributes
            .name
            .as_deref()
            .is_some_and(|name| names.contains(&name))
}

fn rule_allows_path(rule: &Json, verb: &str, path: &str) -> bool {
    lists(&rule["verbs"], verb)
        && strings(&rule["nonResourceURLs"]).any(|url| match url.strip_suffix('*') {
            Some(prefix) => path.starts_with(prefix),
            None => url == path,
        })
}

/// Whether a binding's subjects include `user`; a ServiceAccount without a namespace is in `binding_namespace`.
#[cfg(test)]
fn binds(binding: &Json, user: &UserInfo, binding_namespace: Option<&str>) -> bool {
    matching_subject(binding, user, binding_namespace).is_some()
}

/// The first subject of a binding that is `user`.
fn matching_subject<'a>(
    binding: &'a Json,
    user: &UserInfo,
    binding_namespace: Option<&str>,
) -> Option<&'a Json> {
    binding["subjects"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|subject| {
            let name = subject["name"].as_str().unwrap_or_default();
            match subject["kind"].as_str() {
                Some("User") => !name.is_empty() && user.name == name,
                Some("Group") => !name.is_empty() && user.in_group(name),
                Some("ServiceAccount") => {
                    let namespace = subject["namespace"]
                        .as_str()
                        .filter(|ns| !ns.is_empty())
                        .or(binding_namespace)
                        .unwrap_or_default();
                    user.name == format!("system:serviceaccount:{namespace}:{name}")
                }
                _ => false,
            }
        })
}

/// The rules of the role a binding refers to (a Role only from a RoleBinding, in its namespace).
fn bound_rules(store: &Store, binding: &Json, binding_namespace: Option<&str>) -> Vec<Json> {
    let role_ref = &binding["roleRef"];
    let name = role_ref["name"].as_str().unwrap_or_default();
    let role = match (role_ref["kind"].as_str(), binding_namespace) {
        (Some("ClusterRole"), _) => store.get(&TypeKey::new(RBAC_GROUP, "clusterroles"), "", name),
        (Some("Role"), Some(namespace)) => store.get(&TypeKey::new(RBAC_GROUP, "roles"), namespace, name),
        _ => None,
    };
    role.and_then(|role| role["rules"].as_array().cloned())
        .unwrap_or_default()
}

/// A rule granted to a user, with the binding and subject that grant it.
struct Grant {
    rule: Json,
    binding: std::sync::Arc<Json>,
    /// The RoleBinding's namespace (none: a ClusterRoleBinding).
    namespace: Option<String>,
    subject: Json,
}

impl Grant {
    /// RBAC's account of an allowed request: `RBAC: allowed by RoleBinding "readers/t1" of Role "pod-reader" to
    /// User "alice"`.
    fn reason(&self) -> String {
        let subject_kind = self.subject["kind"].as_str().unwrap_or_default();
        let subject_name = self.subject["name"].as_str().unwrap_or_default();
        let subject = if subject_kind == "ServiceAccount" {
            let namespace = self.subject["namespace"]
                .as_str()
                .filter(|ns| !ns.is_empty())
                .or(self.namespace.as_deref())
                .unwrap_or_default();
            format!("{subject_kind} \"{subject_name}/{namespace}\"")
        } else {
            format!("{subject_kind} \"{subject_name}\"")
        };
        let name = crate::meta::name(&self.binding);
        let binding = match &self.namespace {
            Some(namespace) => format!("RoleBinding \"{name}/{namespace}\""),
            None => format!("ClusterRoleBinding \"{name}\""),
        };
        let role_ref = &self.binding["roleRef"];
        format!(
            "RBAC: allowed by {binding} of {} \"{}\" to {subject}",
            role_ref["kind"].as_str().unwrap_or_default(),
            role_ref["name"].as_str().unwrap_or_default()
        )
    }
}

/// Every rule bound to `user` that applies in `namespace` (none: cluster-wide rules only), cluster-wide first.
fn grants_of(store: &Store, user: &UserInfo, namespace: Option<&str>) -> Vec<Grant> {
    let mut grants = Vec::new();
    let mut add = |binding: std::sync::Arc<Json>, namespace: Option<&str>| {
        if let Some(subject) = matching_subject(&binding, user, namespace).cloned() {
            for rule in bound_rules(store, &binding, namespace) {
                grants.push(Grant {
                    rule,
                    binding: binding.clone(),
                    namespace: namespace.map(String::from),
                    subject: subject.clone(),
                });
            }
        }
    };
    for binding in store.list(&TypeKey::new(RBAC_GROUP, "clusterrolebindings"), None) {
        add(binding, None);
    }
    if let Some(namespace) = namespace {
        for binding in store.list(&TypeKey::new(RBAC_GROUP, "rolebindings"), Some(namespace)) {
            add(binding, Some(namespace));
        }
    }
    grants
}

/// Every rule bound to `user` that applies in `namespace` (none: cluster-wide rules only).
#[must_use]
pub fn rules_of(store: &Store, user: &UserInfo, namespace: Option<&str>) -> Vec<Json> {
    grants_of(store, user, namespace)
        .into_iter()
        .map(|grant| grant.rule)
        .collect()
}

/// RBAC's decision on the resource request `attributes` by `user`: the reason it is allowed, or none.
#[must_use]
pub fn resource_decision(store: &Store, user: &UserInfo, attributes: &ResourceAttributes) -> Option<String> {
    grants_of(store, user, attributes.namespace.as_deref())
        .iter()
        .find(|grant| rule_allows_resource(&grant.rule, attributes))
        .map(Grant::reason)
}

/// RBAC's decision on `verb` of the non-resource `path` by `user` (cluster-wide rules only): the reason it is
/// allowed, or none.
#[must_use]
pub fn path_decision(store: &Store, user: &UserInfo, verb: &str, path: &str) -> Option<String> {
    grants_of(store, user, None)
        .iter()
        .find(|grant| rule_allows_path(&grant.rule, verb, path))
        .map(Grant::reason)
}

/// Whether RBAC allows `user` the resource request `attributes`.
#[must_use]
pub fn allows_resource(store: &Store, user: &UserInfo, attributes: &ResourceAttributes) -> bool {
    rules_of(store, user, attributes.namespace.as_deref())
        .iter()
        .any(|rule| rule_allows_resource(rule, attributes))
}

/// Whether RBAC allows `user` to `verb` the non-resource `path` (cluster-wide rules only).
#[must_use]
pub fn allows_path(store: &Store, user: &UserInfo, verb: &str, path: &str) -> bool {
    rules_of(store, user, None)
        .iter()
        .any(|rule| rule_allows_path(rule, verb, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attributes(verb: &str, resource: &str, sub: Option<&str>, name: Option<&str>) -> ResourceAttributes {
        ResourceAttributes {
            verb: verb.into(),
            group: String::new(),
            resource: resource.into(),
            subresource: sub.map(String::from),
            namespace: Some("t1".into()),
            name: name.map(String::from),
        }
    }

    #[test]
    fn rules_match_verbs_groups_resources_subresources_and_names() {
        let pods = json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]});
        assert!(rule_allows_resource(
            &pods,
            &attributes("list", "pods", None, None)
        ));
        assert!(!rule_allows_resource(
            &pods,
            &attributes("delete", "pods", None, Some("web"))
        ));
        assert!(!rule_allows_resource(
            &pods,
            &attributes("get", "pods", Some("log"), Some("web"))
        ));
        assert!(!rule_allows_resource(
            &pods,
            &attributes("get", "configmaps", None, Some("c"))
        ));
        let logs = json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["pods/log"]});
        assert!(rule_allows_resource(
            &logs,
            &attributes("get", "pods", Some("log"), Some("web"))
        ));
        assert!(!rule_allows_resource(
            &logs,
            &attributes("get", "pods", None, Some("web"))
        ));
        let any_sub = json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/*", "*/scale"]});
        assert!(rule_allows_resource(
            &any_sub,
            &attributes("get", "pods", Some("status"), Some("w"))
        ));
        assert!(rule_allows_resource(
            &any_sub,
            &attributes("get", "deployments", Some("scale"), Some("w"))
        ));
        let named =
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["*"], "resourceNames": ["one"]});
        assert!(rule_allows_resource(
            &named,
            &attributes("get", "secrets", None, Some("one"))
        ));
        assert!(!rule_allows_resource(
            &named,
            &attributes("get", "secrets", None, Some("two"))
        ));
        assert!(!rule_allows_resource(
            &named,
            &attributes("get", "secrets", None, None)
        ));
        let apps = json!({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["*"]});
        assert!(!rule_allows_resource(
            &apps,
            &attributes("get", "pods", None, Some("w"))
        ));
    }

    #[test]
    fn subjects_bind_users_groups_and_service_accounts() {
        let alice = UserInfo::authenticated("alice", &["team".to_string()]);
        let sa = UserInfo::authenticated("system:serviceaccount:t1:builder", &[]);
        let user = json!({"subjects": [{"kind": "User", "name": "alice"}]});
        let group = json!({"subjects": [{"kind": "Group", "name": "team"}]});
        let service_account = json!({"subjects": [{"kind": "ServiceAccount", "name": "builder"}]});
        assert!(binds(&user, &alice, None));
        assert!(binds(&group, &alice, None));
        assert!(!binds(&group, &sa, None));
        assert!(binds(&service_account, &sa, Some("t1")));
        assert!(!binds(&service_account, &sa, Some("t2")));
        assert!(!binds(&json!({"subjects": "nonsense"}), &alice, None));
    }

    #[test]
    fn denials_have_kubernetes_messages() {
        let alice = UserInfo::authenticated("alice", &[]);
        let named = attributes("get", "pods", None, Some("web"));
        assert_eq!(
            named.forbidden(&alice).message,
            "pods \"web\" is forbidden: User \"alice\" cannot get resource \"pods\" in API group \"\" in the namespace \"t1\""
        );
        let mut cluster_scoped = attributes("list", "deployments", None, None);
        cluster_scoped.group = "apps".into();
        cluster_scoped.namespace = None;
        assert_eq!(
            cluster_scoped.forbidden(&alice).message,
            "deployments.apps is forbidden: User \"alice\" cannot list resource \"deployments\" in API group \"apps\" at the cluster scope"
        );
        let logs = attributes("get", "pods", Some("log"), Some("web"));
        assert!(
            logs.forbidden(&alice)
                .message
                .contains("cannot get resource \"pods/log\"")
        );
    }
}
