//! A mirror against a real Git server (Debian's `git http-backend` behind a token): a step's files committed as one
//! commit the real `git` reads back, nothing committed when nothing changed, a folder removed, a push that lost the
//! race to another pusher fetched and tried again with nothing lost, wrong credentials and a server that is down
//! named, the token never in a request line, and reads bounded.

#![allow(clippy::unwrap_used)]

use std::cell::Cell;
use std::path::Path;

use emco_git::{Change, GitError, GitServer, Limits, Mirror, Published, Remote, Secret};

const TOKEN: &str = "s3cr3t-token";

fn remote(url: &str, token: &str) -> Remote {
    Remote {
        url: url.to_string(),
        branch: "main".into(),
        username: "emco".into(),
        token: Secret::new(token),
        ca_pem: None,
    }
}

fn write(path: &str, content: &str) -> Change {
    Change::Write {
        path: path.into(),
        content: content.as_bytes().to_vec(),
    }
}

/// `git log --format=%s` of the server's repository, newest first.
fn log(repository: &Path) -> Vec<String> {
    let output = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(repository)
        .args(["log", "--format=%s", "main"])
        .output()
        .unwrap();
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Runs blocking mirror work off the test's runtime.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(work).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_is_one_commit_that_git_reads_back_and_a_lost_race_is_retried() {
    let dir = tempfile::tempdir().unwrap();
    let Some((server, url)) = GitServer::start_if_available(&dir.path().join("served"), TOKEN, "fleet").await
    else {
        return;
    };
    let (mirror_dir, other_dir) = (dir.path().join("mirror"), dir.path().join("other"));

    let (first, second, unchanged, removed, snapshot) = blocking(move || {
        let mirror = Mirror::open(&mirror_dir, remote(&url, TOKEN), Limits::default()).unwrap();
        let first = mirror
            .publish("instantiate p/ca/v1/dig context 1", |base| {
                assert!(!base.exists(), "the branch does not exist yet");
                Ok(vec![
                    write("clusters/p+c/context/1/app/web/deploy.yaml", "kind: Deployment\n"),
                    write("clusters/p+c/context/1/app/web/svc.yaml", "kind: Service\n"),
                    write("clusters/p+c/1-kcust.yaml", "kind: Kustomization\n"),
                ])
            })
            .unwrap();
        // Another emco pushes between this one's fetch and push: the push is rejected, fetched, made again.
        let other = Mirror::open(&other_dir, remote(&url, TOKEN), Limits::default()).unwrap();
        let raced = Cell::new(false);
        let second = mirror
            .publish("update context 2", |_| {
                if !raced.replace(true) {
                    other
                        .publish("status", |_| {
                            Ok(vec![write("clusters/p+c/status/1/web.yaml", "ready\n")])
                        })
                        .unwrap();
                }
                Ok(vec![write(
                    "clusters/p+c/context/1/app/web/deploy.yaml",
                    "kind: Deployment\nreplicas: 2\n",
                )])
            })
            .unwrap();
        let unchanged = mirror
            .publish("again", |_| {
                Ok(vec![write(
                    "clusters/p+c/context/1/app/web/deploy.yaml",
                    "kind: Deployment\nreplicas: 2\n",
                )])
            })
            .unwrap();
        let removed = mirror
            .publish("terminate context 1", |_| {
                Ok(vec![
                    Change::Remove {
                        path: "clusters/p+c/context/1".into(),
                    },
                    Change::Remove {
                        path: "clusters/p+c/1-kcust.yaml".into(),
                    },
                    Change::Remove {
                        path: "clusters/p+c/never-there.yaml".into(),
                    },
                ])
            })
            .unwrap();
        let snapshot = other.read("clusters/p+c").unwrap();
        (first, second, unchanged, removed, snapshot)
    })
    .await;
    assert!(
        matches!(first, Published::Committed { attempts: 1, .. }),
        "{first:?}"
    );
    assert!(
        matches!(second, Published::Committed { attempts: 2, .. }),
        "{second:?}"
    );
    assert_eq!(unchanged, Published::Unchanged);
    assert!(matches!(removed, Published::Committed { .. }), "{removed:?}");
    assert_eq!(
        log(&server.repository_dir("fleet")),
        [
            "terminate context 1",
            "update context 2",
            "status",
            "instantiate p/ca/v1/dig context 1"
        ]
    );
    // What is left: the other emco's status file (its push was not lost).
    assert_eq!(
        snapshot.files,
        vec![("clusters/p+c/status/1/web.yaml".to_string(), b"ready\n".to_vec())]
    );
    assert!(snapshot.commit.is_some() && snapshot.committed_at.is_some());
    assert!(
        server.requests().iter().all(|line| !line.contains(TOKEN)),
        "the token travels only as a credential"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_credentials_a_server_that_is_down_and_reads_past_a_bound_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let Some((server, url)) = GitServer::start_if_available(&dir.path().join("served"), TOKEN, "fleet").await
    else {
        return;
    };
    let root = dir.path().to_path_buf();
    let down_url = url.clone();
    let refused = blocking(move || {
        let mirror = Mirror::open(
            &root.join("wrong"),
            remote(&url, "not-the-token"),
            Limits::default(),
        )
        .unwrap();
        mirror
            .publish("x", |_| Ok(vec![write("a.yaml", "a")]))
            .unwrap_err()
    })
    .await;
    assert!(
        matches!(&refused, GitError::Server(message) if message.contains("refused the credentials")),
        "{refused}"
    );

    server.set_down(true);
    let root = dir.path().to_path_buf();
    let down = blocking(move || {
        let mirror = Mirror::open(&root.join("down"), remote(&down_url, TOKEN), Limits::default()).unwrap();
        mirror.read("").unwrap_err()
    })
    .await;
    assert!(
        matches!(&down, GitError::Server(message) if message.contains("503")),
        "{down}"
    );
    server.set_down(false);

    let url = server.url("fleet");
    let root = dir.path().to_path_buf();
    let (too_many, bad_path) = blocking(move || {
        let limits = Limits {
            max_read_files: 1,
            ..Limits::default()
        };
        let mirror = Mirror::open(&root.join("bounded"), remote(&url, TOKEN), limits).unwrap();
        mirror
            .publish("two files", |_| {
                Ok(vec![write("s/a.yaml", "a"), write("s/b.yaml", "b")])
            })
            .unwrap();
        let bad_path = mirror
            .publish("escape", |_| Ok(vec![write("../outside.yaml", "x")]))
            .unwrap_err();
        (mirror.read("s").unwrap_err(), bad_path)
    })
    .await;
    assert!(matches!(too_many, GitError::TooLarge(_)), "{too_many}");
    assert!(matches!(bad_path, GitError::Path(_)), "{bad_path}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mirror_reopened_after_its_process_was_killed_mid_write_publishes_again() {
    let dir = tempfile::tempdir().unwrap();
    let Some((server, url)) = GitServer::start_if_available(&dir.path().join("served"), TOKEN, "fleet").await
    else {
        return;
    };
    let mirror_dir = dir.path().join("mirror");
    let published = blocking(move || {
        let mirror = Mirror::open(&mirror_dir, remote(&url, TOKEN), Limits::default()).unwrap();
        mirror
            .publish("first", |_| Ok(vec![write("a.yaml", "a\n")]))
            .unwrap();
        drop(mirror);
        // What a process killed while libgit2 wrote the branch's ref leaves behind: its lock files.
        let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for lock in [
            "refs/heads/main.lock",
            "refs/remotes/origin/main.lock",
            "packed-refs.lock",
        ] {
            let path = mirror_dir.join(lock);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::File::create(&path)
                .unwrap()
                .set_modified(an_hour_ago)
                .unwrap();
        }
        let reopened = Mirror::open(&mirror_dir, remote(&url, TOKEN), Limits::default()).unwrap();
        let second = reopened
            .publish("second", |_| Ok(vec![write("b.yaml", "b\n")]))
            .unwrap();
        (second, mirror_dir.join("refs/heads/main.lock").exists())
    })
    .await;
    assert!(
        matches!(published.0, Published::Committed { .. }),
        "{published:?}"
    );
    assert!(!published.1, "the stale lock is gone");
    assert_eq!(log(&server.repository_dir("fleet")), ["second", "first"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_branchs_head_comes_in_one_fetch_and_each_is_read_without_another() {
    let dir = tempfile::tempdir().unwrap();
    let Some((server, url)) = GitServer::start_if_available(&dir.path().join("served"), TOKEN, "fleet").await
    else {
        return;
    };
    let root = dir.path().to_path_buf();
    let (heads, read, requests_for_read) = blocking(move || {
        for cluster in ["p+a", "p+b"] {
            let status = Remote {
                branch: cluster.into(),
                ..remote(&url, TOKEN)
            };
            Mirror::open(&root.join(cluster), status, Limits::default())
                .unwrap()
                .publish("status", |_| {
                    Ok(vec![write(&format!("clusters/{cluster}/status/1"), cluster)])
                })
                .unwrap();
        }
        let reader = Mirror::open(&root.join("reader"), remote(&url, TOKEN), Limits::default()).unwrap();
        let heads = reader.fetch_heads().unwrap();
        let before = server.requests().len();
        let read = reader.read_commit(&heads["p+b"], "clusters/p+b/status").unwrap();
        (heads, read, server.requests().len() - before)
    })
    .await;
    assert_eq!(heads.keys().collect::<Vec<_>>(), ["p+a", "p+b"]);
    assert_eq!(read.commit.as_deref(), Some(heads["p+b"].as_str()));
    assert_eq!(
        read.files,
        vec![("clusters/p+b/status/1".to_string(), b"p+b".to_vec())]
    );
    assert_eq!(requests_for_read, 0, "a fetched commit is read locally");
}
