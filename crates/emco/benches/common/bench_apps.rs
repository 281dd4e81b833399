//! What the benchmarks at scale onboard: a composite app `ca` of three apps of 10 objects each (a Deployment,
//! 2 Services, 7 ConfigMaps) in project `bench`, on clusters of provider `edge-provider`, with approved DIGs
//! placing every app on the clusters of one label.

use serde_json::json;

use crate::support::Http;

pub(crate) const APPS: [&str; 3] = ["alpha", "beta", "gamma"];
pub(crate) const PROVIDER: &str = "/v2/cluster-providers/edge-provider";
pub(crate) const CA: &str = "/v2/projects/bench/composite-apps/ca/v1";

/// A chart of 10 objects: a Deployment, 2 Services and 7 ConfigMaps.
pub(crate) fn chart(app: &str) -> Vec<u8> {
    let mut files: Vec<(String, Vec<u8>)> = vec![
        (format!("{app}/Chart.yaml"), format!("apiVersion: v2\nname: {app}\nversion: 0.1.0\n").into_bytes()),
        (
            format!("{app}/templates/deployment.yaml"),
            format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {app}\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {{app: {app}}}\n  template:\n    metadata:\n      labels: {{app: {app}}}\n    spec:\n      containers:\n      - name: main\n        image: registry.local/{app}:1\n").into_bytes(),
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
/// DIG per `(name, label)` placing every app on the clusters with that label.
pub(crate) async fn onboard(
    http: &Http,
    kubeconfigs: &[(String, String)],
    label_of: impl Fn(usize) -> String,
    digs: &[(&str, &str)],
) {
    http.post(
        "/v2/cluster-providers",
        json!({"metadata": {"name": "edge-provider"}}),
    )
    .await
    .expect(201);
    for (index, (name, kubeconfig)) in kubeconfigs.iter().enumerate() {
        http.post_form(
            &format!("{PROVIDER}/clusters"),
            json!({"metadata": {"name": name}}),
            kubeconfig.as_bytes(),
        )
        .await
        .expect(201);
        http.post(
            &format!("{PROVIDER}/clusters/{name}/labels"),
            json!({"clusterLabel": label_of(index)}),
        )
        .await
        .expect(201);
    }
    http.post("/v2/projects", json!({"metadata": {"name": "bench"}}))
        .await
        .expect(201);
    http.post(
        "/v2/projects/bench/composite-apps",
        json!({"metadata": {"name": "ca"}, "spec": {"compositeAppVersion": "v1"}}),
    )
    .await
    .expect(201);
    for app in APPS {
        http.post_form(
            &format!("{CA}/apps"),
            json!({"metadata": {"name": app}}),
            &chart(app),
        )
        .await
        .expect(201);
    }
    http.post(
        &format!("{CA}/composite-profiles"),
        json!({"metadata": {"name": "cp"}}),
    )
    .await
    .expect(201);
    for (name, label) in digs {
        http.post(
            &format!("{CA}/deployment-intent-groups"),
            json!({"metadata": {"name": name}, "spec": {"compositeProfile": "cp", "version": name}}),
        )
        .await
        .expect(201);
        let dig = format!("{CA}/deployment-intent-groups/{name}");
        http.post(
            &format!("{dig}/intents"),
            json!({"metadata": {"name": "i"}, "spec": {"intent": {"genericPlacementIntent": "pi"}}}),
        )
        .await
        .expect(201);
        http.post(
            &format!("{dig}/generic-placement-intents"),
            json!({"metadata": {"name": "pi"}}),
        )
        .await
        .expect(201);
        for app in APPS {
            http.post(
                &format!("{dig}/generic-placement-intents/pi/app-intents"),
                json!({"metadata": {"name": format!("{app}-pi")}, "spec": {"app": app, "intent": {"allOf": [{"clusterProvider": "edge-provider", "clusterLabel": label}]}}}),
            )
            .await
            .expect(201);
        }
        http.post_empty(&format!("{dig}/approve")).await.expect(202);
    }
}

/// The URL of DIG `name` of the composite app.
pub(crate) fn dig(name: &str) -> String {
    format!("{CA}/deployment-intent-groups/{name}")
}
