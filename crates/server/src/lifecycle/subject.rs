//! The resources with a lifecycle ([`Subject`]): which kind holds which state, which table describes it, and which
//! resource a change to another one touches.

use emco_appcontext::{Kind, ResourcePath};
use emco_model::lifecycle::{
    CLUSTER_NETWORK_INTENTS, DEPLOYMENT_INTENT_GROUP, LOGICAL_CLOUD, LifecycleTable,
};

/// A kind of resource with a lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Subject {
    /// A deployment intent group (its state lives on the DIG).
    DeploymentIntentGroup,
    /// The network intents of one cluster (their state lives on the cluster, as ncm keeps it).
    ClusterNetworks,
    /// A logical cloud.
    LogicalCloud,
}

impl Subject {
    /// The subject whose state a resource of `kind` holds.
    #[must_use]
    pub fn of(kind: Kind) -> Option<Self> {
        match kind {
            Kind::DeploymentIntentGroup => Some(Self::DeploymentIntentGroup),
            Kind::Cluster => Some(Self::ClusterNetworks),
            Kind::LogicalCloud => Some(Self::LogicalCloud),
            _ => None,
        }
    }

    /// Its lifecycle table.
    #[must_use]
    pub fn table(self) -> &'static LifecycleTable {
        match self {
            Self::DeploymentIntentGroup => &DEPLOYMENT_INTENT_GROUP,
            Self::ClusterNetworks => &CLUSTER_NETWORK_INTENTS,
            Self::LogicalCloud => &LOGICAL_CLOUD,
        }
    }

    /// The catalog kind holding the state.
    #[must_use]
    pub fn kind(self) -> Kind {
        match self {
            Self::DeploymentIntentGroup => Kind::DeploymentIntentGroup,
            Self::ClusterNetworks => Kind::Cluster,
            Self::LogicalCloud => Kind::LogicalCloud,
        }
    }

    /// The resource whose lifecycle a change to `path` touches: a DIG for the DIG and its intents, a cluster for
    /// its networks, a logical cloud for itself and its cluster references, permissions, quotas and pairs.
    #[must_use]
    pub fn governing(path: &ResourcePath) -> Option<ResourcePath> {
        let under_dig = std::iter::successors(Some(path.kind()), |kind| kind.parent())
            .any(|kind| kind == Kind::DeploymentIntentGroup);
        let (kind, depth) = match path.kind() {
            _ if under_dig => (Kind::DeploymentIntentGroup, Kind::DeploymentIntentGroup.depth()),
            Kind::Network | Kind::ProviderNetwork => (Kind::Cluster, Kind::Cluster.depth()),
            Kind::LogicalCloud
            | Kind::ClusterReference
            | Kind::UserPermission
            | Kind::ClusterQuota
            | Kind::LogicalCloudKv => (Kind::LogicalCloud, Kind::LogicalCloud.depth()),
            _ => return None,
        };
        Some(ResourcePath::new(kind, path.names()[..depth].to_vec()))
    }

    /// Whether `kind` is a controller's part of a DIG (its intents, resources and customizations), which the
    /// DIG's approval does not cover ([`Lifecycle::controller_part_ops`]).
    #[must_use]
    pub fn is_controller_part(kind: Kind) -> bool {
        matches!(
            kind,
            Kind::GenericK8sIntent | Kind::GacResource | Kind::GacCustomization
        )
    }

    /// How messages and status answers name a resource of this subject: the DIG's or logical cloud's name, and
    /// `provider+cluster` for network intents.
    #[must_use]
    pub fn display(self, path: &ResourcePath) -> String {
        match self {
            Self::ClusterNetworks => path.names().join("+"),
            _ => path.name().to_string(),
        }
    }
}
