//! Where each cluster sits in an app's cluster list, by name, so that a record's change, a heartbeat or a new
//! meta finds its cluster in constant time rather than by scanning every cluster of the app (at 10,000 clusters a
//! scan per change compared thousands of names, and reordering for a meta was quadratic).
//!
//! The table holds only positions (4 bytes each); a name is hashed on lookup and compared with the cluster at the
//! position, so no name is stored twice.

use std::hash::BuildHasher as _;
use std::sync::Arc;

use hashbrown::HashTable;

use crate::index::ClusterEntry;

/// The positions of an app's clusters, kept in step with its list by the index (every change of the list goes
/// through [`ClusterPositions::rebuild`] or [`ClusterPositions::pushed`]).
#[derive(Clone, Default)]
pub(crate) struct ClusterPositions {
    table: HashTable<u32>,
}

fn hash(name: &str) -> u64 {
    foldhash::fast::FixedState::with_seed(0).hash_one(name)
}

impl ClusterPositions {
    /// The position of `name` in `clusters` (the list this table was kept for).
    pub(crate) fn find(&self, clusters: &[Arc<ClusterEntry>], name: &str) -> Option<usize> {
        self.table
            .find(hash(name), |&position| {
                clusters
                    .get(position as usize)
                    .is_some_and(|cluster| &*cluster.full_name == name)
            })
            .map(|&position| position as usize)
    }

    /// Notes the cluster just pushed at the end of `clusters`.
    pub(crate) fn pushed(&mut self, clusters: &[Arc<ClusterEntry>]) {
        let Some(last) = clusters.len().checked_sub(1) else {
            return;
        };
        let Ok(position) = u32::try_from(last) else {
            return;
        };
        self.table
            .insert_unique(hash(&clusters[last].full_name), position, |&at| {
                hash(&clusters[at as usize].full_name)
            });
    }

    /// Builds the table anew for `clusters` (after a removal or a reorder).
    pub(crate) fn rebuild(&mut self, clusters: &[Arc<ClusterEntry>]) {
        self.table.clear();
        self.table
            .reserve(clusters.len(), |&at| hash(&clusters[at as usize].full_name));
        for (position, cluster) in clusters.iter().enumerate() {
            let Ok(position) = u32::try_from(position) else {
                return;
            };
            self.table
                .insert_unique(hash(&cluster.full_name), position, |&at| {
                    hash(&clusters[at as usize].full_name)
                });
        }
    }
}

/// Derived from the list it indexes: two apps with equal lists have equal positions.
impl PartialEq for ClusterPositions {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for ClusterPositions {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "ClusterPositions({})", self.table.len())
    }
}
