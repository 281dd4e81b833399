//! One cluster's ResourceBundleStates as a stream: a list, then a watch from the list's revision (bookmarks keep
//! it current; a 410 Gone lists again at once, any other failure after a back-off). Each event's line is read into
//! a buffer of this stream's own: bounded ([`MAX_EVENT_BYTES`]: a cluster's answer is untrusted, and a longer line
//! fails the watch with a message) and shrunk back after a long line (kube-client's watch streams keep a buffer as
//! long as the longest line they have read, unbounded — for every cluster, the length of its largest
//! ResourceBundleState: ≈ 50 KB per cluster with 20 pods per app).
//!
//! The state lives in the stream (`futures::stream::unfold`), so a caller may drop a pending `next()` (in a
//! `select!`) without losing a request or a line half read.

use std::collections::VecDeque;
use std::pin::Pin;
use std::time::Duration;

use emco_k8s::DEPLOYMENT_ID_LABEL;
use futures::{AsyncBufRead, Stream};
use kube::Resource as _;
use kube::api::{ListParams, ObjectList, WatchEvent, WatchParams};

use crate::watch::BundleState;

/// The longest event line a cluster may send (a ResourceBundleState is at most about 1.5 MiB, the API server's
/// object limit).
pub(crate) const MAX_EVENT_BYTES: usize = 8 << 20;
/// The capacity the line buffer keeps between events; a longer line's buffer is let go once it is read.
const KEPT_LINE_CAPACITY: usize = 16 << 10;
/// How long the cluster is asked to keep one watch open (as kube-runtime's watcher asks).
const WATCH_TIMEOUT_SECONDS: u32 = 290;
/// The first pause after a failure; doubled after each failure in a row, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(800);
/// The longest pause between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Why the stream lists again.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BundleStreamError {
    /// The list or the watch request failed.
    #[error("{0}")]
    Request(#[from] kube::Error),
    /// Reading the watch failed.
    #[error("reading the watch: {0}")]
    Read(#[from] std::io::Error),
    /// An event line longer than [`MAX_EVENT_BYTES`].
    #[error("the cluster sent a watch event longer than {MAX_EVENT_BYTES} bytes")]
    TooLong,
    /// An event that is not a watch event of ResourceBundleStates.
    #[error("the cluster sent a watch event that does not decode: {0}")]
    Decode(#[from] serde_json::Error),
    /// The cluster ended the watch with an error other than 410 Gone.
    #[error("the cluster ended the watch: {code} {message}")]
    Ended {
        /// Its HTTP code.
        code: u16,
        /// Its message.
        message: String,
    },
}

type Reader = Pin<Box<dyn AsyncBufRead + Send>>;

/// What the stream waits for, instead of its back-off, after the cluster could not be reached: the cluster answering
/// again (or a long safety-net delay), as the caller knows it.
pub(crate) type Reachable = Box<dyn Fn() -> futures::future::BoxFuture<'static, ()> + Send + Sync>;

struct State {
    client: kube::Client,
    /// The ResourceBundleStates' URL, which the list and the watch requests are made for.
    bundles: kube::core::Request,
    /// Listed objects not yet yielded.
    listed: VecDeque<BundleState>,
    /// The open watch, if any.
    watch: Option<Reader>,
    /// The revision to watch from (the list's, then the latest event's or bookmark's).
    version: String,
    /// The line read so far.
    line: Vec<u8>,
    /// Failures in a row (the next attempt waits for the back-off they call for).
    failures: u32,
    /// How long the cluster is asked to keep one watch open, in seconds.
    watch_timeout: u32,
    /// Whether the last failure was that the cluster could not be reached.
    unreachable: bool,
    /// What to wait for after such a failure, when the caller knows (else the back-off).
    reachable: Option<Reachable>,
}

/// The ResourceBundleStates of the cluster `client` reaches, labelled `emco/deployment-id`: every listed one, then
/// every added or modified one; deletions are not reported. An error is reported, then the stream lists again
/// (after a back-off, or after the cluster could not be reached once `reachable` resolves); it never ends.
pub(crate) fn bundle_states(
    client: kube::Client,
    reachable: Option<Reachable>,
) -> impl Stream<Item = Result<BundleState, BundleStreamError>> + Send {
    let mut state = State::new(client, WATCH_TIMEOUT_SECONDS);
    state.reachable = reachable;
    futures::stream::unfold(state, |mut state| async move {
        let item = state.step().await;
        Some((item, state))
    })
}

impl State {
    fn new(client: kube::Client, watch_timeout: u32) -> Self {
        Self {
            client,
            bundles: kube::core::Request::new(BundleState::url_path(&(), None)),
            listed: VecDeque::new(),
            watch: None,
            version: String::new(),
            line: Vec::new(),
            failures: 0,
            watch_timeout,
            unreachable: false,
            reachable: None,
        }
    }

    /// The next object, or the failure that ended the list or the watch.
    async fn step(&mut self) -> Result<BundleState, BundleStreamError> {
        loop {
            if let Some(object) = self.listed.pop_front() {
                return Ok(object);
            }
            let result = match self.watch.as_mut() {
                Some(_) => self.next_event().await,
                None => self.list_and_watch().await.map(|()| None),
            };
            match result {
                // A list and watch that opened, or an event read: the back-off starts over.
                Ok(found) => {
                    self.failures = 0;
                    if let Some(object) = found {
                        return Ok(object);
                    }
                }
                Err(err) => {
                    self.watch = None;
                    self.line = Vec::new();
                    self.failures = self.failures.saturating_add(1);
                    self.unreachable =
                        matches!(&err, BundleStreamError::Request(err) if crate::error::is_unreachable(err));
                    return Err(err);
                }
            }
        }
    }

    /// Lists (after the back-off earlier failures call for) and opens the watch from the list's revision.
    async fn list_and_watch(&mut self) -> Result<(), BundleStreamError> {
        if self.failures > 0 {
            match &self.reachable {
                Some(reachable) if self.unreachable => reachable().await,
                _ => {
                    let doublings = (self.failures - 1).min(8);
                    tokio::time::sleep((FIRST_BACKOFF * 2_u32.pow(doublings)).min(MAX_BACKOFF)).await;
                }
            }
        }
        let request = self
            .bundles
            .list(&ListParams::default().labels(DEPLOYMENT_ID_LABEL))
            .map_err(kube::Error::BuildRequest)?;
        let list: ObjectList<BundleState> = self.client.request(request).await?;
        self.version = list.metadata.resource_version.unwrap_or_default();
        self.listed = list.items.into();
        self.open_watch().await
    }

    /// Opens the watch from `version`.
    async fn open_watch(&mut self) -> Result<(), BundleStreamError> {
        let params = WatchParams::default()
            .labels(DEPLOYMENT_ID_LABEL)
            .timeout(self.watch_timeout);
        let request = self
            .bundles
            .watch(&params, &self.version)
            .map_err(kube::Error::BuildRequest)?;
        let reader = self.client.request_stream(request).await?;
        self.watch = Some(Box::pin(reader));
        Ok(())
    }

    /// Reads the watch's next event: `Some` object added or modified; `None` when there was none (a bookmark, a
    /// deletion, or the watch ended and was opened again from the latest revision).
    async fn next_event(&mut self) -> Result<Option<BundleState>, BundleStreamError> {
        let Some(reader) = self.watch.as_mut() else {
            return Ok(None);
        };
        if !read_line(reader, &mut self.line).await? {
            // The cluster ended the watch (its timeout): go on from the latest revision, or list again if the
            // cluster no longer has it (410 Gone).
            self.line.clear();
            self.watch = None;
            return match self.open_watch().await {
                Err(BundleStreamError::Request(kube::Error::Api(status))) if status.code == 410 => Ok(None),
                other => other.map(|()| None),
            };
        }
        let event = serde_json::from_slice::<WatchEvent<BundleState>>(&self.line);
        self.line.clear();
        if self.line.capacity() > KEPT_LINE_CAPACITY {
            self.line = Vec::new();
        }
        // The object, and whether it is reported (deletions are not).
        let (object, reported) = match event? {
            WatchEvent::Added(object) | WatchEvent::Modified(object) => (object, true),
            WatchEvent::Deleted(object) => (object, false),
            WatchEvent::Bookmark(bookmark) => {
                self.version = bookmark.metadata.resource_version;
                return Ok(None);
            }
            WatchEvent::Error(status) if status.code == 410 => {
                // The revision is gone from the cluster's history: list again, at once.
                self.watch = None;
                return Ok(None);
            }
            WatchEvent::Error(status) => {
                return Err(BundleStreamError::Ended {
                    code: status.code,
                    message: status.message,
                });
            }
        };
        if let Some(version) = &object.meta().resource_version {
            self.version.clone_from(version);
        }
        Ok(reported.then_some(object))
    }
}

/// Appends the reader's next line (without its newline) to `line`; `false` when the reader ended before a line
/// began. Bytes are moved into `line` as they arrive, so a dropped call loses nothing.
async fn read_line(reader: &mut Reader, line: &mut Vec<u8>) -> Result<bool, BundleStreamError> {
    use std::task::Poll;
    loop {
        // `None`: the reader ended; `Some(true)`: a newline ended the line.
        let ended_line = std::future::poll_fn(|cx| {
            let available = match reader.as_mut().poll_fill_buf(cx) {
                Poll::Ready(Ok(bytes)) => bytes,
                Poll::Ready(Err(err)) => return Poll::Ready(Err(err)),
                Poll::Pending => return Poll::Pending,
            };
            if available.is_empty() {
                return Poll::Ready(Ok(None));
            }
            let (part, taken) = match available.iter().position(|byte| *byte == b'\n') {
                Some(end) => (&available[..end], end + 1),
                None => (available, available.len()),
            };
            let ended = taken > part.len();
            line.extend_from_slice(part);
            reader.as_mut().consume(taken);
            Poll::Ready(Ok(Some(ended)))
        })
        .await?;
        if line.len() > MAX_EVENT_BYTES {
            return Err(BundleStreamError::TooLong);
        }
        match ended_line {
            // The reader ended: a last line without its newline still counts, nothing does not.
            None => return Ok(!line.is_empty()),
            Some(true) if line.iter().all(u8::is_ascii_whitespace) => line.clear(),
            Some(true) => return Ok(true),
            Some(false) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use emco_k8s::RBS_PLURAL;
    use emco_k8s::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::api::{Api, DynamicObject, Patch, PatchParams};
    use kube::core::ApiResource;
    use kubesim::Simulator;
    use serde_json::json;

    use super::*;

    /// Lists of ResourceBundleStates the cluster served (GETs that did not watch).
    fn lists(cluster: &kubesim::SimCluster) -> usize {
        cluster
            .shared()
            .requests()
            .iter()
            .filter(|request| request.method == "GET" && !request.watch && request.path.ends_with(RBS_PLURAL))
            .count()
    }

    fn status_of(bundle: &BundleState) -> String {
        bundle
            .status
            .as_ref()
            .map(|status| status.get().to_string())
            .unwrap_or_default()
    }

    /// The stream's next object (it must come within 20 s).
    async fn next(state: &mut State) -> BundleState {
        tokio::time::timeout(Duration::from_secs(20), state.step())
            .await
            .unwrap()
            .unwrap()
    }

    /// Installs the ResourceBundleState CRD on the cluster `client` reaches and creates the bundle `1-app`;
    /// returns the bundles' API.
    async fn one_bundle(client: &kube::Client) -> Api<DynamicObject> {
        let crd = emco_k8s::rbs_crd();
        let crds: Api<DynamicObject> = Api::all_with(
            client.clone(),
            &ApiResource::erase::<CustomResourceDefinition>(&()),
        );
        let apply = PatchParams::apply("test");
        crds.patch(
            crd["metadata"]["name"].as_str().unwrap(),
            &apply,
            &Patch::Apply(&crd),
        )
        .await
        .unwrap();
        let bundles: Api<DynamicObject> =
            Api::namespaced_with(client.clone(), "default", &ApiResource::erase::<BundleState>(&()));
        bundles
            .patch(
                "1-app",
                &apply,
                &Patch::Apply(emco_k8s::rbs_object("1-app", "default")),
            )
            .await
            .unwrap();
        bundles
    }

    #[tokio::test]
    async fn an_event_longer_than_the_bound_fails_the_watch_and_the_stream_lists_again() {
        let sim = Simulator::start_named(1).await.unwrap();
        let cluster = &sim.clusters()[0];
        let client = cluster.client().unwrap();
        one_bundle(&client).await;
        let mut state = State::new(client, 1);
        // The listed bundle, then a watch whose next event is one byte over the bound.
        next(&mut state).await;
        let long: &'static [u8] = Box::leak(vec![b' '; MAX_EVENT_BYTES + 1].into_boxed_slice());
        state.watch = Some(reader_of(vec![long, b"\n"]));
        let failed = state.step().await;
        assert!(
            matches!(&failed, Err(BundleStreamError::TooLong)),
            "{:?}",
            failed.map(|bundle| status_of(&bundle))
        );
        assert!(
            state.watch.is_none() && state.line.capacity() == 0,
            "the watch and its buffer are let go"
        );
        // The stream goes on: after its back-off it lists again and yields the bundle.
        let again = next(&mut state).await;
        assert_eq!(kube::Resource::meta(&again).name.as_deref(), Some("1-app"));
        assert_eq!(lists(cluster), 2);
    }

    #[tokio::test]
    async fn the_stream_lists_then_watches_resumes_after_the_watch_ends_and_lists_again_when_its_revision_is_gone()
     {
        let sim = Simulator::start_named(1).await.unwrap();
        let cluster = &sim.clusters()[0];
        let client = cluster.client().unwrap();
        let bundles = one_bundle(&client).await;
        let report = |n: u32| {
            let bundles = bundles.clone();
            async move {
                bundles
                    .patch_status(
                        "1-app",
                        &PatchParams::default(),
                        &Patch::Merge(json!({"status": {"resourceCount": n}})),
                    )
                    .await
                    .unwrap();
            }
        };
        let mut state = State::new(client, 1);

        let listed = next(&mut state).await;
        assert_eq!(kube::Resource::meta(&listed).name.as_deref(), Some("1-app"));
        assert_eq!(lists(cluster), 1);
        report(1).await;
        assert!(
            status_of(&next(&mut state).await).contains("\"resourceCount\":1"),
            "a change comes through the watch"
        );

        // The cluster ends the watch after a second; the next change comes through a watch resumed from the
        // latest revision, without a list.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        report(2).await;
        assert!(status_of(&next(&mut state).await).contains("\"resourceCount\":2"));
        assert_eq!(lists(cluster), 1, "resumed, not listed again");

        // A change while no watch is open, and the history compacted past it: the resumed watch is refused
        // (410 Gone), and a list brings the change.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        report(3).await;
        cluster.shared().store().compact();
        assert!(status_of(&next(&mut state).await).contains("\"resourceCount\":3"));
        assert_eq!(lists(cluster), 2, "listed again once the revision was gone");
    }

    fn reader_of(chunks: Vec<&'static [u8]>) -> Reader {
        let stream = futures::stream::iter(chunks.into_iter().map(Ok::<_, std::io::Error>));
        Box::pin(futures::TryStreamExt::into_async_read(stream))
    }

    #[tokio::test]
    async fn lines_are_read_across_chunks_and_blank_lines_are_skipped() {
        let mut reader = reader_of(vec![b"{\"a\":", b"1}\n\n{\"b\"", b":2}\n", b"{\"c\":3}"]);
        let mut line = Vec::new();
        let mut lines = Vec::new();
        while read_line(&mut reader, &mut line).await.unwrap() {
            lines.push(String::from_utf8(std::mem::take(&mut line)).unwrap());
        }
        assert_eq!(lines, ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]);
    }

    #[tokio::test]
    async fn a_line_longer_than_the_bound_fails_with_a_message() {
        let long: &'static [u8] = Box::leak(vec![b'x'; MAX_EVENT_BYTES + 1].into_boxed_slice());
        let mut reader = reader_of(vec![long, b"\n"]);
        let mut line = Vec::new();
        let err = read_line(&mut reader, &mut line).await.unwrap_err();
        assert!(matches!(err, BundleStreamError::TooLong), "{err}");
        assert!(err.to_string().contains("longer than 8388608 bytes"), "{err}");
    }
}
