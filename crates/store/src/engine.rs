//! The transaction engine every backend runs its writes through, so that compares, revisions, versions and
//! events mean exactly the same thing in memory and on disk (and as in etcd).

use crate::{
    Compare, CompareOp, CompareTarget, Event, EventKind, KeyValue, Op, Result, Revision, Txn, TxnResponse,
};

/// A stored record without its key: etcd's `KeyValue` minus the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    pub(crate) create_revision: Revision,
    pub(crate) mod_revision: Revision,
    pub(crate) version: i64,
    pub(crate) value: Vec<u8>,
}

/// Bytes of the fixed header of an encoded record: three little-endian i64.
const HEADER_LEN: usize = 24;

impl Record {
    pub(crate) fn into_key_value(self, key: String) -> KeyValue {
        KeyValue {
            key,
            value: self.value,
            create_revision: self.create_revision,
            mod_revision: self.mod_revision,
            version: self.version,
        }
    }

    /// Encodes as `create | mod | version | value` (the on-disk form of the redb backend).
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(HEADER_LEN + self.value.len());
        bytes.extend_from_slice(&self.create_revision.to_le_bytes());
        bytes.extend_from_slice(&self.mod_revision.to_le_bytes());
        bytes.extend_from_slice(&self.version.to_le_bytes());
        bytes.extend_from_slice(&self.value);
        bytes
    }

    /// Decodes [`Record::encode`]'s form; `None` when the bytes are too short to be a record.
    pub(crate) fn decode(bytes: &[u8]) -> Option<Self> {
        let field = |index: usize| -> Option<i64> {
            let start = index * 8;
            Some(i64::from_le_bytes(bytes.get(start..start + 8)?.try_into().ok()?))
        };
        Some(Self {
            create_revision: field(0)?,
            mod_revision: field(1)?,
            version: field(2)?,
            value: bytes.get(HEADER_LEN..)?.to_vec(),
        })
    }
}

/// What a backend offers the engine while a write transaction is open.
pub(crate) trait KvTable {
    fn read(&self, key: &str) -> Result<Option<Record>>;
    fn write(&mut self, key: &str, record: &Record) -> Result<()>;
    fn remove(&mut self, key: &str) -> Result<()>;
    fn keys_with_prefix(&self, prefix: &str) -> Result<Vec<String>>;
}

fn compare_holds(compare: &Compare, record: Option<&Record>) -> bool {
    use std::cmp::Ordering;
    let ordering = match (&compare.target, record) {
        (CompareTarget::CreateRevision(target), _) => record.map_or(0, |r| r.create_revision).cmp(target),
        (CompareTarget::ModRevision(target), _) => record.map_or(0, |r| r.mod_revision).cmp(target),
        (CompareTarget::Version(target), _) => record.map_or(0, |r| r.version).cmp(target),
        (CompareTarget::PrefixModRevision(target), _) => record.map_or(0, |r| r.mod_revision).cmp(target),
        (CompareTarget::Value(_), None) => return false,
        (CompareTarget::Value(target), Some(record)) => record.value.as_slice().cmp(target.as_slice()),
    };
    match compare.op {
        CompareOp::Equal => ordering == Ordering::Equal,
        CompareOp::NotEqual => ordering != Ordering::Equal,
        CompareOp::Greater => ordering == Ordering::Greater,
        CompareOp::Less => ordering == Ordering::Less,
    }
}

/// Applies one transaction at `current` revision. Returns the response and the events it produced; the revision
/// rises by one only when the transaction changed something.
pub(crate) fn apply_txn(
    table: &mut impl KvTable,
    current: Revision,
    txn: &Txn,
) -> Result<(TxnResponse, Vec<Event>)> {
    let mut succeeded = true;
    for compare in &txn.compares {
        let holds = if matches!(compare.target, CompareTarget::PrefixModRevision(_)) {
            let keys = table.keys_with_prefix(&compare.key)?;
            if keys.is_empty() {
                compare_holds(compare, None)
            } else {
                let mut all = true;
                for key in keys {
                    if !compare_holds(compare, table.read(&key)?.as_ref()) {
                        all = false;
                        break;
                    }
                }
                all
            }
        } else {
            compare_holds(compare, table.read(&compare.key)?.as_ref())
        };
        if !holds {
            succeeded = false;
            break;
        }
    }
    let ops = if succeeded { &txn.success } else { &txn.failure };
    let next = current + 1;
    let mut events = Vec::new();
    for op in ops {
        match op {
            Op::Put { key, value, .. } => {
                let previous = table.read(key)?;
                let record = Record {
                    create_revision: previous.as_ref().map_or(next, |p| p.create_revision),
                    mod_revision: next,
                    version: previous.as_ref().map_or(1, |p| p.version + 1),
                    value: value.clone(),
                };
                table.write(key, &record)?;
                events.push(Event {
                    kind: EventKind::Put,
                    kv: record.into_key_value(key.clone()),
                });
            }
            Op::Delete { key } => {
                if let Some(previous) = table.read(key)? {
                    table.remove(key)?;
                    events.push(deletion(key.clone(), &previous, next));
                }
            }
            Op::DeletePrefix { prefix } => {
                for key in table.keys_with_prefix(prefix)? {
                    if let Some(previous) = table.read(&key)? {
                        table.remove(&key)?;
                        events.push(deletion(key, &previous, next));
                    }
                }
            }
        }
    }
    let revision = if events.is_empty() { current } else { next };
    Ok((TxnResponse { succeeded, revision }, events))
}

fn deletion(key: String, previous: &Record, revision: Revision) -> Event {
    Event {
        kind: EventKind::Delete,
        kv: KeyValue {
            key,
            value: Vec::new(),
            create_revision: previous.create_revision,
            mod_revision: revision,
            version: 0,
        },
    }
}

/// The exclusive upper bound of a prefix scan: every key starting with `prefix` sorts below it.
pub(crate) fn prefix_end(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        if let Some(next) = char::from_u32(last as u32 + 1) {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_short_bytes_are_refused() {
        let record = Record {
            create_revision: 3,
            mod_revision: 9,
            version: 2,
            value: b"abc".to_vec(),
        };
        assert_eq!(Record::decode(&record.encode()), Some(record));
        assert_eq!(Record::decode(&[1, 2, 3]), None);
    }

    #[test]
    fn prefix_end_bounds_every_key_with_the_prefix() {
        assert_eq!(prefix_end("/a/").as_deref(), Some("/a0"));
        assert!("/a/zzzz" < prefix_end("/a/").unwrap().as_str());
        assert_eq!(prefix_end(""), None);
    }
}
