//! Access reviews (`authorization.k8s.io/v1`), answered from the cluster's RBAC as the API server answers them
//! and never stored: SelfSubjectAccessReview (may the requester …? — what `kubectl auth can-i` asks),
//! SubjectAccessReview (may this user or these groups …?), LocalSubjectAccessReview (the same, within the
//! namespace of the URL) and SelfSubjectRulesReview (what may the requester do in a namespace — `kubectl auth
//! can-i --list`); and `authentication.k8s.io/v1` SelfSubjectReview (who am I — `kubectl auth whoami`).
//!
//! An allowed review carries RBAC's reason (`RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to
//! Group "z"`); members of `system:masters` are allowed without one; a denial is `allowed: false` without a
//! reason, as RBAC has no opinion to give.

use serde_json::{Map, Value as Json, json};

use crate::auth::UserInfo;
use crate::catalog::ResourceType;
use crate::error::ApiError;
use crate::rbac::ResourceAttributes;
use crate::store::Store;

/// The most groups a SubjectAccessReview may name (bounds the work of one review).
const MAX_GROUPS: usize = 256;

fn text<'a>(object: &'a Json, field: &str) -> Option<&'a str> {
    object[field].as_str().filter(|value| !value.is_empty())
}

/// The subject a review asks about: the requester (self reviews) or `spec.user`/`spec.groups`.
fn subject(t: &ResourceType, spec: &Json, requester: &UserInfo) -> Result<UserInfo, ApiError> {
    if t.kind.starts_with("SelfSubject") {
        return Ok(requester.clone());
    }
    let groups = match &spec["groups"] {
        Json::Null => Vec::new(),
        Json::Array(groups) if groups.len() <= MAX_GROUPS => groups
            .iter()
            .map(|group| {
                group.as_str().map(String::from).ok_or_else(|| {
                    ApiError::invalid(t, "", "spec.groups", "Invalid value: groups must be strings")
                })
            })
            .collect::<Result<_, _>>()?,
        _ => {
            return Err(ApiError::invalid(
                t,
                "",
                "spec.groups",
                &format!("Invalid value: must be a list of at most {MAX_GROUPS} group names"),
            ));
        }
    };
    let user = text(spec, "user").unwrap_or_default().to_string();
    if user.is_empty() && groups.is_empty() {
        return Err(ApiError::invalid(
            t,
            "",
            "spec.user",
            "Invalid value: \"\": at least one of user or group must be specified",
        ));
    }
    Ok(UserInfo { name: user, groups })
}

/// The decision on `spec.resourceAttributes` or `spec.nonResourceAttributes`: the reason when allowed.
fn decide(
    store: &Store,
    t: &ResourceType,
    spec: &Json,
    user: &UserInfo,
    url_namespace: Option<&str>,
) -> Result<Option<String>, ApiError> {
    let resource = &spec["resourceAttributes"];
    let non_resource = &spec["nonResourceAttributes"];
    let masters = user.in_group(crate::tls::MASTERS_GROUP);
    match (resource.is_object(), non_resource.is_object()) {
        (true, false) => {
            let mut namespace = text(resource, "namespace").map(String::from);
            if let Some(url_namespace) = url_namespace {
                match namespace.as_deref() {
                    None => namespace = Some(url_namespace.to_string()),
                    Some(given) if given != url_namespace => {
                        return Err(ApiError::invalid(
                            t,
                            "",
                            "spec.resourceAttributes.namespace",
                            &format!("Invalid value: \"{given}\": must match metadata.namespace"),
                        ));
                    }
                    Some(_) => {}
                }
            }
            let attributes = ResourceAttributes {
                verb: text(resource, "verb").unwrap_or_default().to_string(),
                group: text(resource, "group").unwrap_or_default().to_string(),
                resource: text(resource, "resource").unwrap_or_default().to_string(),
                subresource: text(resource, "subresource").map(String::from),
                namespace,
                name: text(resource, "name").map(String::from),
            };
            if masters {
                return Ok(Some(String::new()));
            }
            Ok(crate::rbac::resource_decision(store, user, &attributes))
        }
        (false, true) => {
            if masters {
                return Ok(Some(String::new()));
            }
            let verb = text(non_resource, "verb").unwrap_or_default();
            let path = text(non_resource, "path").unwrap_or_default();
            Ok(crate::rbac::path_decision(store, user, verb, path))
        }
        _ => Err(ApiError::invalid(
            t,
            "",
            "spec.resourceAttributes",
            "Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified",
        )),
    }
}

/// The rules `user` has in `spec.namespace`, as a SelfSubjectRulesReview's status lists them.
fn rules_status(store: &Store, spec: &Json, user: &UserInfo) -> Json {
    let namespace = text(spec, "namespace");
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    for rule in crate::rbac::rules_of(store, user, namespace) {
        if rule["nonResourceURLs"]
            .as_array()
            .is_some_and(|urls| !urls.is_empty())
        {
            non_resource_rules
                .push(json!({"verbs": rule["verbs"], "nonResourceURLs": rule["nonResourceURLs"]}));
        } else {
            let mut entry = json!({"verbs": rule["verbs"], "apiGroups": rule["apiGroups"], "resources": rule["resources"]});
            if rule["resourceNames"].is_array() {
                entry["resourceNames"] = rule["resourceNames"].clone();
            }
            resource_rules.push(entry);
        }
    }
    json!({"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": false})
}

/// Answers the review `body` of type `t` posted by `requester` (to the namespace `url_namespace`, for a
/// LocalSubjectAccessReview): the review with its `status` filled in.
pub fn review(
    store: &Store,
    t: &ResourceType,
    requester: &UserInfo,
    url_namespace: Option<&str>,
    body: &Json,
) -> Result<Json, ApiError> {
    let Some(object) = body.as_object() else {
        return Err(ApiError::bad_request("the body must be a JSON object"));
    };
    Store::check_type_fields(t, body)?;
    let spec = &body["spec"];
    let status = if t.kind == "SelfSubjectRulesReview" {
        rules_status(store, spec, requester)
    } else if t.kind == "SelfSubjectReview" {
        json!({"userInfo": {"username": requester.name, "groups": requester.groups}})
    } else {
        let user = subject(t, spec, requester)?;
        match decide(store, t, spec, &user, url_namespace)? {
            Some(reason) if reason.is_empty() => json!({"allowed": true}),
            Some(reason) => json!({"allowed": true, "reason": reason}),
            None => json!({"allowed": false}),
        }
    };
    let mut answer: Map<String, Json> = object.clone();
    answer.insert("apiVersion".into(), json!(t.api_version()));
    answer.insert("kind".into(), json!(t.kind));
    let mut metadata = answer
        .get("metadata")
        .and_then(Json::as_object)
        .cloned()
        .unwrap_or_default();
    metadata.insert("creationTimestamp".into(), Json::Null);
    if let Some(namespace) = url_namespace {
        metadata.insert("namespace".into(), json!(namespace));
    }
    answer.insert("metadata".into(), Json::Object(metadata));
    answer.insert("status".into(), status);
    Ok(Json::Object(answer))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    fn store_with_reader() -> Store {
        let mut store = Store::new(0);
        let catalog = Catalog::new();
        let create = |store: &mut Store, plural: &str, namespace: Option<&str>, object: Json| {
            let t = catalog
                .find(
                    if plural == "namespaces" {
                        ""
                    } else {
                        "rbac.authorization.k8s.io"
                    },
                    "v1",
                    plural,
                )
                .unwrap();
            store.create(&t, namespace, object, &Default::default()).unwrap();
        };
        create(
            &mut store,
            "namespaces",
            None,
            json!({"metadata": {"name": "t1"}}),
        );
        create(
            &mut store,
            "roles",
            Some("t1"),
            json!({"metadata": {"name": "pod-reader"}, "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]}),
        );
        create(
            &mut store,
            "rolebindings",
            Some("t1"),
            json!({"metadata": {"name": "readers"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
                "subjects": [{"kind": "Group", "name": "readers"}]}),
        );
        store
    }

    fn review_type(kind: &str) -> std::sync::Arc<ResourceType> {
        let plural = format!("{}s", kind.to_lowercase());
        Catalog::new()
            .find(crate::catalog::REVIEW_GROUP, "v1", &plural)
            .unwrap()
    }

    #[test]
    fn reviews_answer_from_rbac_with_its_reason() {
        let store = store_with_reader();
        let bob = UserInfo::authenticated("bob", &["readers".to_string()]);
        let ask = |verb: &str, namespace: &str| json!({"spec": {"resourceAttributes": {"verb": verb, "resource": "pods", "namespace": namespace}}});
        let ssar = review_type("SelfSubjectAccessReview");
        let allowed = review(&store, &ssar, &bob, None, &ask("list", "t1")).unwrap();
        assert_eq!(
            allowed["status"],
            json!({"allowed": true, "reason": "RBAC: allowed by RoleBinding \"readers/t1\" of Role \"pod-reader\" to Group \"readers\""})
        );
        assert_eq!(allowed["kind"], "SelfSubjectAccessReview");
        let denied = review(&store, &ssar, &bob, None, &ask("create", "t1")).unwrap();
        assert_eq!(denied["status"], json!({"allowed": false}));
        let elsewhere = review(&store, &ssar, &bob, None, &ask("list", "t2")).unwrap();
        assert_eq!(elsewhere["status"]["allowed"], false);

        // A SubjectAccessReview asks about someone else; a local one takes the URL's namespace.
        let sar = review_type("SubjectAccessReview");
        let admin = UserInfo::authenticated("kubesim-admin", &["system:masters".to_string()]);
        let mut about_bob = ask("get", "t1");
        about_bob["spec"]["user"] = json!("bob");
        assert_eq!(
            review(&store, &sar, &admin, None, &about_bob).unwrap()["status"]["allowed"],
            false
        );
        about_bob["spec"]["groups"] = json!(["readers"]);
        assert_eq!(
            review(&store, &sar, &admin, None, &about_bob).unwrap()["status"]["allowed"],
            true
        );
        let local = review_type("LocalSubjectAccessReview");
        let mut local_ask = ask("get", "");
        local_ask["spec"]["groups"] = json!(["readers"]);
        assert_eq!(
            review(&store, &local, &admin, Some("t1"), &local_ask).unwrap()["status"]["allowed"],
            true
        );
        assert_eq!(
            review(&store, &ssar, &admin, None, &ask("delete", "t9")).unwrap()["status"],
            json!({"allowed": true})
        );

        // Malformed reviews name what is wrong.
        let nobody = review(&store, &sar, &admin, None, &ask("get", "t1")).unwrap_err();
        assert!(
            nobody.message.contains("at least one of user or group"),
            "{}",
            nobody.message
        );
        let neither = review(&store, &ssar, &bob, None, &json!({"spec": {}})).unwrap_err();
        assert_eq!(neither.code, 422);
        assert!(
            neither
                .message
                .contains("exactly one of nonResourceAttributes or resourceAttributes")
        );
        let wrong_kind = review(&store, &ssar, &bob, None, &json!({"kind": "Pod", "spec": {}})).unwrap_err();
        assert_eq!(wrong_kind.code, 400);
    }

    #[test]
    fn rules_reviews_list_the_requesters_rules() {
        let store = store_with_reader();
        let bob = UserInfo::authenticated("bob", &["readers".to_string()]);
        let rules = review_type("SelfSubjectRulesReview");
        let answer = review(&store, &rules, &bob, None, &json!({"spec": {"namespace": "t1"}})).unwrap();
        assert_eq!(
            answer["status"]["resourceRules"],
            json!([{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}])
        );
        let elsewhere = review(&store, &rules, &bob, None, &json!({"spec": {"namespace": "t2"}})).unwrap();
        assert_eq!(elsewhere["status"]["resourceRules"], json!([]));
    }
}
