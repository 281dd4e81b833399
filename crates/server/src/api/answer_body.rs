//! Answers written as they are sent: a status answer over 300,000 resources is megabytes of JSON, and writing it
//! whole before sending would hold a second full copy of it (besides the index) per request.
//!
//! A route prepares an [`AnswerBody::Writer`]: a function that writes the answer from a snapshot it owns (the
//! status index hands out snapshots that share its entries, so taking one is cheap and holds no lock while the
//! answer is written). [`AnswerBody::into_body`] runs it on a blocking thread that fills [`CHUNK`]-sized chunks,
//! each sent to the response as soon as it is full, at most [`CHUNKS_AHEAD`] ahead of the client. The bounds: at
//! most [`Writers::new`]'s `max` answers are written at once (the others wait for a turn, holding no thread), and
//! a client that does not take a chunk within [`Writers::chunk_timeout`] loses the answer (the connection is
//! aborted), so slow or stalled readers cannot hold the writing threads.
//! [`AnswerBody::into_bytes`] writes an answer whole, for the event streams, which compare answers.

use std::io::{self, Write};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use hyper::body::Frame;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

use crate::ApiError;

/// The size of the chunks an answer is sent in.
pub(crate) const CHUNK: usize = 256 * 1024;
/// How many chunks may wait for the client.
pub(crate) const CHUNKS_AHEAD: usize = 3;
/// How many answers are written at once by default.
pub(crate) const DEFAULT_WRITERS: usize = 16;
/// How long a client may leave a chunk untaken by default.
pub(crate) const DEFAULT_CHUNK_TIMEOUT: Duration = Duration::from_secs(20);

/// What writes an answer into the response (into a concrete [`AnswerOut`], so the JSON writer's many small writes
/// are inlined appends rather than calls through a `dyn Write`).
pub(crate) type AnswerWriter = Box<dyn FnOnce(&mut AnswerOut) -> io::Result<()> + Send>;

/// An answer's JSON: written already, or written while it is sent.
pub(crate) enum AnswerBody {
    /// Written already (small answers).
    Bytes(Bytes),
    /// Written while it is sent, from what the writer owns.
    Writer(AnswerWriter),
}

impl std::fmt::Debug for AnswerBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Bytes(bytes) => f.debug_tuple("Bytes").field(&bytes.len()).finish(),
            Self::Writer(_) => f.write_str("Writer"),
        }
    }
}

/// The turns of the answers written at once, and how long a chunk may wait for its client.
pub(crate) struct Writers {
    turns: Arc<Semaphore>,
    chunk_timeout: Duration,
}

impl Writers {
    /// At most `max` answers written at once; a chunk waits at most `chunk_timeout` for its client.
    pub(crate) fn new(max: usize, chunk_timeout: Duration) -> Self {
        Self {
            turns: Arc::new(Semaphore::new(max.max(1))),
            chunk_timeout,
        }
    }

    async fn turn(&self) -> Result<OwnedSemaphorePermit, ApiError> {
        self.turns
            .clone()
            .acquire_owned()
            .await
            .map_err(ApiError::internal)
    }
}

impl AnswerBody {
    /// The whole answer, written on a blocking thread when it is not yet.
    pub(crate) async fn into_bytes(self, writers: &Writers) -> Result<Bytes, ApiError> {
        let write = match self {
            Self::Bytes(bytes) => return Ok(bytes),
            Self::Writer(write) => write,
        };
        let turn = writers.turn().await?;
        tokio::task::spawn_blocking(move || {
            let _turn = turn;
            let mut out = AnswerOut {
                buffer: Vec::with_capacity(4096),
                sink: None,
            };
            write(&mut out).map(|()| Bytes::from(out.buffer))
        })
        .await
        .map_err(ApiError::internal)?
        .map_err(ApiError::internal)
    }

    /// The response body: the answer as it is written (see the module documentation).
    pub(crate) async fn into_body(self, writers: &Writers) -> Result<Body, ApiError> {
        let write = match self {
            Self::Bytes(bytes) => return Ok(Body::from(bytes)),
            Self::Writer(write) => write,
        };
        let turn = writers.turn().await?;
        let (sender, receiver) = mpsc::channel::<Bytes>(CHUNKS_AHEAD);
        let completed = Arc::new(AtomicBool::new(false));
        let mut out = AnswerOut {
            buffer: Vec::with_capacity(CHUNK),
            sink: Some(Sink {
                sender,
                runtime: tokio::runtime::Handle::current(),
                chunk_timeout: writers.chunk_timeout,
            }),
        };
        let finished = completed.clone();
        tokio::task::spawn_blocking(move || {
            let _turn = turn;
            match write(&mut out).and_then(|()| out.send_chunk()) {
                Ok(()) => finished.store(true, Ordering::Release),
                // The client is gone or too slow.
                Err(err) if err.kind() == io::ErrorKind::BrokenPipe => {
                    tracing::debug!(error = %err, "an answer was not taken; it ended");
                }
                Err(err) => tracing::warn!(error = %err, "writing an answer failed"),
            }
        });
        Ok(Body::new(ChunkBody {
            receiver,
            completed,
            ended: false,
        }))
    }
}

/// The response body of a written answer: its chunks, then the end — or an error when the writer stopped before
/// the end, so the client cannot take a cut answer for a whole one.
struct ChunkBody {
    receiver: mpsc::Receiver<Bytes>,
    completed: Arc<AtomicBool>,
    ended: bool,
}

impl HttpBody for ChunkBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        if self.ended {
            return Poll::Ready(None);
        }
        match self.receiver.poll_recv(cx) {
            Poll::Ready(Some(chunk)) => Poll::Ready(Some(Ok(Frame::data(chunk)))),
            Poll::Ready(None) => {
                self.ended = true;
                if self.completed.load(Ordering::Acquire) {
                    Poll::Ready(None)
                } else {
                    Poll::Ready(Some(Err(io::Error::other("the answer was cut short"))))
                }
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Where an answer is written: a buffer that, when it is sent while written, goes to the response body in
/// [`CHUNK`]-sized pieces as soon as each is full.
pub(crate) struct AnswerOut {
    buffer: Vec<u8>,
    /// `None`: the answer is written whole.
    sink: Option<Sink>,
}

/// The response body a chunk goes to.
struct Sink {
    sender: mpsc::Sender<Bytes>,
    runtime: tokio::runtime::Handle,
    chunk_timeout: Duration,
}

impl AnswerOut {
    /// Sends what is buffered (nothing when empty or written whole); `BrokenPipe` when the client left or did not
    /// take it in time.
    fn send_chunk(&mut self) -> io::Result<()> {
        let Some(sink) = &self.sink else {
            return Ok(());
        };
        if self.buffer.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(&mut self.buffer, Vec::with_capacity(CHUNK)));
        let sent = sink
            .runtime
            .block_on(tokio::time::timeout(sink.chunk_timeout, sink.sender.send(chunk)));
        match sent {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(io::Error::new(io::ErrorKind::BrokenPipe, "the client went away")),
            Err(_) => Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                format!(
                    "the client took no part of the answer for {} s",
                    sink.chunk_timeout.as_secs_f64()
                ),
            )),
        }
    }
}

impl Write for AnswerOut {
    #[inline]
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= CHUNK && self.sink.is_some() {
            self.send_chunk()?;
        }
        Ok(bytes.len())
    }

    #[inline]
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.write(bytes).map(|_| ())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::*;

    /// A writer of `count` numbers as a JSON array (several chunks for large counts), and whether it finished.
    fn numbers(count: usize, finished: Arc<std::sync::atomic::AtomicBool>) -> AnswerBody {
        AnswerBody::Writer(Box::new(move |out| {
            out.write_all(b"[")?;
            for n in 0..count {
                if n > 0 {
                    out.write_all(b",")?;
                }
                write!(out, "{n}")?;
            }
            out.write_all(b"]")?;
            finished.store(true, std::sync::atomic::Ordering::SeqCst);
            Ok(())
        }))
    }

    #[tokio::test]
    async fn an_answer_is_sent_in_chunks_that_make_the_whole_answer() {
        let writers = Writers::new(2, Duration::from_secs(5));
        let finished = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut body = numbers(1_000_000, finished.clone())
            .into_body(&writers)
            .await
            .unwrap();
        let mut chunks = Vec::new();
        while let Some(frame) = body.frame().await {
            chunks.push(frame.unwrap().into_data().unwrap());
        }
        assert!(chunks.len() > 5, "{} chunks", chunks.len());
        assert!(chunks.iter().all(|chunk| chunk.len() <= CHUNK + 16));
        let whole: Vec<u8> = chunks.concat();
        let parsed: Vec<u64> = serde_json::from_slice(&whole).unwrap();
        assert_eq!(parsed.len(), 1_000_000);
        assert!(finished.load(std::sync::atomic::Ordering::SeqCst));
        let again = numbers(1_000_000, Arc::default())
            .into_bytes(&writers)
            .await
            .unwrap();
        assert_eq!(again, whole, "written whole, it is the same answer");
    }

    #[tokio::test]
    async fn a_client_that_stops_reading_loses_the_answer_and_frees_the_writer() {
        let writers = Writers::new(1, Duration::from_millis(200));
        let finished = Arc::new(std::sync::atomic::AtomicBool::new(false));
        // Never read: the writer fills what may wait and then gives up.
        let stalled = numbers(1_000_000, finished.clone())
            .into_body(&writers)
            .await
            .unwrap();
        // The only turn comes free once the stalled answer gave up: this one is written whole after it.
        let next = tokio::time::timeout(
            Duration::from_secs(10),
            numbers(10, Arc::default()).into_bytes(&writers),
        )
        .await
        .expect("the stalled answer holds its turn for good")
        .unwrap();
        assert_eq!(next, "[0,1,2,3,4,5,6,7,8,9]");
        assert!(
            !finished.load(std::sync::atomic::Ordering::SeqCst),
            "the stalled answer was not written whole"
        );
        // What the stalled client gets when it reads at last: the chunks that waited, then an error (never the
        // end of a whole answer).
        let mut stalled = stalled;
        let mut taken = 0;
        let mut failed = false;
        while let Some(frame) = stalled.frame().await {
            match frame {
                Ok(frame) => taken += frame.into_data().unwrap().len(),
                Err(err) => {
                    assert!(err.to_string().contains("cut short"), "{err}");
                    failed = true;
                }
            }
        }
        assert!(failed, "a cut answer ends with an error");
        assert!(taken <= (CHUNKS_AHEAD + 1) * CHUNK + 16, "{taken} bytes");
    }

    #[tokio::test]
    async fn a_client_that_leaves_ends_the_writing() {
        let writers = Writers::new(1, Duration::from_secs(60));
        let finished = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let body = numbers(1_000_000, finished.clone())
            .into_body(&writers)
            .await
            .unwrap();
        drop(body);
        let next = tokio::time::timeout(
            Duration::from_secs(10),
            numbers(3, Arc::default()).into_bytes(&writers),
        )
        .await
        .expect("the abandoned answer holds its turn")
        .unwrap();
        assert_eq!(next, "[0,1,2]");
        assert!(!finished.load(std::sync::atomic::Ordering::SeqCst));
    }
}
