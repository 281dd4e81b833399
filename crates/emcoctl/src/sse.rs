//! Reads server-sent events (the `text/event-stream` format of the WHATWG HTML standard) from a response body as
//! they arrive: `event:`, `id:` and `data:` fields (several `data:` lines joined by line breaks), an event ending at
//! a blank line, comments (`: keep-alive`) skipped. Lines and events are bounded ([`MAX_EVENT_BYTES`]): a server
//! that sends more without ending an event is an error, never a growing buffer.

use bytes::{Buf as _, BytesMut};
use http_body_util::BodyExt as _;

/// The largest event read, in bytes (a status answer of thousands of clusters fits easily).
pub const MAX_EVENT_BYTES: usize = 256 * 1024 * 1024;

/// The most read of an answer that is not a stream (an error's JSON).
pub const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// Why events cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SseError {
    /// The connection failed while reading.
    #[error("the event stream broke: {0}")]
    Broken(String),
    /// An event is larger than [`MAX_EVENT_BYTES`].
    #[error("an event of the stream is larger than {MAX_EVENT_BYTES} bytes")]
    TooLarge,
    /// An event is not UTF-8.
    #[error("an event of the stream is not UTF-8 text")]
    NotText,
}

/// One event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Event {
    /// Its `event:` (`message` when it has none).
    pub name: String,
    /// Its `id:`, if it has one.
    pub id: Option<String>,
    /// Its `data:` lines, joined by `\n`.
    pub data: String,
}

/// Where events come from.
pub trait Source {
    /// The next bytes; `None` at the end.
    fn next_chunk(&mut self) -> impl Future<Output = Option<Result<bytes::Bytes, SseError>>> + Send;
}

impl Source for hyper::body::Incoming {
    async fn next_chunk(&mut self) -> Option<Result<bytes::Bytes, SseError>> {
        loop {
            match self.frame().await? {
                Ok(frame) => {
                    if let Ok(data) = frame.into_data() {
                        return Some(Ok(data));
                    }
                }
                Err(err) => return Some(Err(SseError::Broken(err.to_string()))),
            }
        }
    }
}

/// The events of a response body ([`crate::client::EmcoClient::stream`]).
pub type BodyEvents = EventReader<hyper::body::Incoming>;

/// The events of a body.
pub struct EventReader<S> {
    source: S,
    buffer: BytesMut,
    ended: bool,
}

impl<S: Source> EventReader<S> {
    /// Reads events from `source`.
    pub fn new(source: S) -> Self {
        Self {
            source,
            buffer: BytesMut::new(),
            ended: false,
        }
    }

    /// The next event; `None` when the stream ended (a partial event at the end is dropped, as browsers do).
    pub async fn next_event(&mut self) -> Result<Option<Event>, SseError> {
        let mut event = Event::default();
        let mut has_field = false;
        let mut data_lines = 0usize;
        let mut size = 0usize;
        loop {
            let Some(line) = self.next_line().await? else {
                return Ok(None);
            };
            size += line.len();
            if size > MAX_EVENT_BYTES {
                return Err(SseError::TooLarge);
            }
            if line.is_empty() {
                if has_field {
                    if event.name.is_empty() {
                        event.name = "message".into();
                    }
                    return Ok(Some(event));
                }
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (line.as_str(), ""),
            };
            match field {
                "event" => event.name = value.to_string(),
                "id" => event.id = Some(value.to_string()),
                "data" => {
                    if data_lines > 0 {
                        event.data.push('\n');
                    }
                    event.data.push_str(value);
                    data_lines += 1;
                }
                _ => continue,
            }
            has_field = true;
        }
    }

    /// The rest of the body as text, at most [`MAX_ANSWER_BYTES`] of it (an error answer that came instead of a
    /// stream); `None` when it is empty.
    pub async fn remaining_text(&mut self) -> Result<Option<String>, SseError> {
        while self.buffer.len() <= MAX_ANSWER_BYTES && !self.ended && self.fill().await? {}
        if self.buffer.is_empty() {
            return Ok(None);
        }
        let end = self.buffer.len().min(MAX_ANSWER_BYTES);
        Ok(Some(String::from_utf8_lossy(&self.buffer[..end]).into_owned()))
    }

    /// The next line without its end (`\n`, `\r\n` or `\r`); `None` at the end of the stream.
    async fn next_line(&mut self) -> Result<Option<String>, SseError> {
        loop {
            if let Some(end) = self
                .buffer
                .iter()
                .position(|byte| *byte == b'\n' || *byte == b'\r')
            {
                // A `\r` at the end of the buffer may be the first half of `\r\n`: wait for the next byte.
                if self.buffer[end] == b'\r' && end + 1 == self.buffer.len() && !self.ended {
                    self.fill().await?;
                    continue;
                }
                let line = self.buffer.split_to(end);
                let skip = if self.buffer.starts_with(b"\r\n") { 2 } else { 1 };
                self.buffer.advance(skip);
                return String::from_utf8(line.to_vec())
                    .map(Some)
                    .map_err(|_| SseError::NotText);
            }
            if self.buffer.len() > MAX_EVENT_BYTES {
                return Err(SseError::TooLarge);
            }
            if self.ended || !self.fill().await? {
                return Ok(None);
            }
        }
    }

    /// Reads more; `false` at the end of the stream.
    async fn fill(&mut self) -> Result<bool, SseError> {
        match self.source.next_chunk().await {
            Some(Ok(chunk)) => {
                self.buffer.extend_from_slice(&chunk);
                Ok(true)
            }
            Some(Err(err)) => Err(err),
            None => {
                self.ended = true;
                Ok(false)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks given in advance.
    struct Chunks(std::collections::VecDeque<&'static [u8]>);

    impl Source for Chunks {
        async fn next_chunk(&mut self) -> Option<Result<bytes::Bytes, SseError>> {
            self.0
                .pop_front()
                .map(|chunk| Ok(bytes::Bytes::from_static(chunk)))
        }
    }

    fn reader(chunks: &[&'static [u8]]) -> EventReader<Chunks> {
        EventReader::new(Chunks(chunks.iter().copied().collect()))
    }

    #[tokio::test]
    async fn events_are_read_across_chunks_and_comments_skipped() {
        let mut events = reader(&[
            b"event: hello\nid: 3\ndata: {\"revision\":3}\n\n: keep-alive\n\nevent: sta",
            b"tus\r\nid: 4\r\ndata: {\"a\":1}\r",
            b"\n\r\ndata: one\ndata: two\n\ndata: partial",
        ]);
        let hello = events.next_event().await.unwrap().unwrap();
        assert_eq!(
            hello,
            Event {
                name: "hello".into(),
                id: Some("3".into()),
                data: "{\"revision\":3}".into()
            }
        );
        let status = events.next_event().await.unwrap().unwrap();
        assert_eq!(
            (status.name.as_str(), status.id.as_deref()),
            ("status", Some("4"))
        );
        assert_eq!(status.data, "{\"a\":1}");
        let message = events.next_event().await.unwrap().unwrap();
        assert_eq!(
            (message.name.as_str(), message.data.as_str()),
            ("message", "one\ntwo")
        );
        assert_eq!(
            events.next_event().await.unwrap(),
            None,
            "a partial event at the end is dropped"
        );
    }
}
