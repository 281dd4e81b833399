//! What the benchmarks at scale onboard: a composite app `ca` of three apps of 10 objects each (a Deployment,
//! 2 Services, 7 ConfigMaps) in project `bench`, on clusters of provider `edge-provider`, with approved DIGs
//! placing every app on the clusters of one label.

use crate::support::{Http, OnboardedDig, Onboarding};

pub(crate) const APPS: [&str; 3] = ["alpha", "beta", "gamma"];
/// The names the benchmarks onboard.
pub(crate) const BENCH: Onboarding<'static> = Onboarding {
    provider: "edge-provider",
    project: "bench",
    composite_app: "ca",
    profile: "cp",
};

/// A chart of 10 objects: a Deployment (`replicas` from the values, 1 by default), 2 Services and 7 ConfigMaps.
pub(crate) fn chart(app: &str) -> Vec<u8> {
    chart_with_replicas(app, 1)
}

/// [`chart`] whose Deployment has `replicas` pods unless the values say otherwise.
pub(crate) fn chart_with_replicas(app: &str, replicas: usize) -> Vec<u8> {
    let mut files: Vec<(String, Vec<u8>)> = vec![
        (format!("{app}/Chart.yaml"), format!("apiVersion: v2\nname: {app}\nversion: 0.1.0\n").into_bytes()),
        (
            format!("{app}/templates/deployment.yaml"),
            format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {app}\nspec:\n  replicas: {{{{ .Values.replicas | default {replicas} }}}}\n  selector:\n    matchLabels: {{app: {app}}}\n  template:\n    metadata:\n      labels: {{app: {app}}}\n    spec:\n      containers:\n      - name: main\n        image: registry.local/{app}:1\n").into_bytes(),
        ),
    ];
    for i in 0..2 {
        files.push((
            format!("{app}/templates/service-{i}.yaml"),
            format!("apiVersion: v1\nkind: Service\nmetadata:\n  name: {app}-svc-{i}\nspec:\n  selector: {{app: {app}}}\n  ports:\n  - port: {}\n", 8000 + i).into_bytes(),
        ));
    }
    for i in 0..7 {
        files.push((
            format!("{app}/templates/config-{i}.yaml"),
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {app}-config-{i}\ndata:\n  key: \"{i}\"\n").into_bytes(),
        ));
    }
    let borrowed: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(path, bytes)| (path.as_str(), bytes.as_slice()))
        .collect();
    emco_helm::archive::write_tgz(&borrowed)
}

/// Onboards the clusters (labelled by `label_of` their index) and the composite app of [`APPS`], and one approved
/// DIG per `(name, label)` placing every app on the clusters with that label (its version is its name).
pub(crate) async fn onboard(
    http: &Http,
    kubeconfigs: &[(String, String)],
    label_of: impl Fn(usize) -> String,
    digs: &[(&str, &str)],
) {
    onboard_apps(http, &APPS, 1, kubeconfigs, label_of, digs).await;
}

/// [`onboard`] with a composite app of `apps` (a prefix of [`APPS`]) only, each Deployment with `replicas` pods.
pub(crate) async fn onboard_apps(
    http: &Http,
    apps: &[&str],
    replicas: usize,
    kubeconfigs: &[(String, String)],
    label_of: impl Fn(usize) -> String,
    digs: &[(&str, &str)],
) {
    let (charts, digs) = composite_app(apps, replicas, digs);
    BENCH.onboard(http, kubeconfigs, &label_of, &charts, &digs).await;
}

/// [`onboard_apps`] on pull clusters named `names`: the agent token of each, in `names`' order.
pub(crate) async fn onboard_apps_on_pull_clusters(
    http: &Http,
    apps: &[&str],
    replicas: usize,
    names: &[String],
    label_of: impl Fn(usize) -> String,
    digs: &[(&str, &str)],
) -> Vec<String> {
    let (charts, digs) = composite_app(apps, replicas, digs);
    BENCH.onboard_pull(http, names, &label_of, &charts, &digs).await
}

/// The charts of `apps` (each Deployment with `replicas` pods) and a DIG per `(name, label)`.
fn composite_app<'a>(
    apps: &[&'a str],
    replicas: usize,
    digs: &[(&'a str, &'a str)],
) -> (Vec<(&'a str, Vec<u8>)>, Vec<OnboardedDig<'a>>) {
    let charts = apps
        .iter()
        .map(|app| (*app, chart_with_replicas(app, replicas)))
        .collect();
    let digs = digs
        .iter()
        .map(|(name, label)| OnboardedDig {
            name,
            version: name,
            label,
            logical_cloud: "",
        })
        .collect();
    (charts, digs)
}

/// The URL of DIG `name` of the composite app.
pub(crate) fn dig(name: &str) -> String {
    format!("{}/deployment-intent-groups/{name}", BENCH.composite_app_url())
}
