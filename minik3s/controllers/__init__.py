"""Embedded controllers (layer L4): kube-controller-manager's loops for minik3s.

| I want to... | Touch | Test at |
|---|---|---|
| change a controller's reconcile | `minik3s/controllers/<name>.py` | `tests/minik3s/controllers/test_<name>.py` |
| add a controller | a module here + `all_controllers` | `tests/minik3s/controllers/` |

Data flow: SharedInformerFactory informers -> handlers enqueue keys -> WorkQueue -> `sync(key)`
-> writes through the `Client` (never direct storage access). Each controller's `run()` waits
for its informers to sync and runs until cancelled; `all_controllers` hands the composition
root named run coroutines to start in its TaskGroup.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from minik3s.api.metrics import UsageProvider
from minik3s.client.informer import SharedInformerFactory
from minik3s.client.interface import Client
from minik3s.controllers.csr_signing import Signer
from minik3s.utils.clock import Clock

ALL_CONTROLLER_NAMES = (
    "deployment", "replicaset", "garbagecollector", "nodelifecycle", "taint-eviction-controller",
    "podgc", "disruption", "namespace", "serviceaccount", "job", "endpoint", "podgroup-status",
    "statefulset", "daemonset", "replicationcontroller", "cronjob",
    "horizontalpodautoscaling", "clusterrole-aggregation", "root-ca-cert-publisher", "resourcequota",
    "pvc-protection", "pv-protection", "persistentvolume-binder", "ephemeral-volume", "csrsigning", "ttl",
    "service-cidr-controller",
)


@dataclass(slots=True)
class ControllerConfig:
    """kube-controller-manager flags that matter here (defaults as upstream v1.33)."""

    node_monitor_grace_period: float = 50.0
    node_monitor_period: float = 5.0
    node_startup_grace_period: float = 60.0
    # upstream's old --pod-eviction-timeout; NoExecute eviction follows tolerationSeconds
    # (the DefaultTolerationSeconds admission gives 300 s), so this is informational only
    pod_eviction_timeout: float = 300.0
    terminated_pod_gc_threshold: int = 12500
    pod_gc_period: float = 20.0
    pod_gc_quarantine: float = 40.0
    concurrent_deployment_syncs: int = 5
    concurrent_replicaset_syncs: int = 5
    concurrent_gc_syncs: int = 20
    concurrent_namespace_syncs: int = 10
    concurrent_job_syncs: int = 5
    concurrent_endpoint_syncs: int = 5
    concurrent_statefulset_syncs: int = 5
    concurrent_daemonset_syncs: int = 2
    concurrent_rc_syncs: int = 5
    concurrent_cron_job_syncs: int = 5
    concurrent_resource_quota_syncs: int = 5
    concurrent_ephemeral_volume_syncs: int = 5  # --concurrent-ephemeralvolume-syncs
    resource_quota_sync_period: float = 300.0  # --resource-quota-sync-period
    # --horizontal-pod-autoscaler-sync-period; the HPA controller runs when `usage` is given
    horizontal_pod_autoscaler_sync_period: float = 15.0
    usage: UsageProvider | None = None
    # the CA bundle (PEM) the root-ca-cert-publisher writes into every namespace's
    # kube-root-ca.crt (--root-ca-file; "" when the server serves without TLS)
    root_ca: str = ""
    # csrsigning's signers by signerName (the server's client CA for kube-apiserver-client; none
    # without TLS, as kube-controller-manager without --cluster-signing-* files)
    csr_signers: Mapping[str, Signer] = field(default_factory=dict)
    enabled: set[str] = field(default_factory=lambda: set(ALL_CONTROLLER_NAMES))
    clock: Clock | None = None


def all_controllers(client: Client, informers: SharedInformerFactory, *, config: ControllerConfig
                    ) -> list[tuple[str, Callable[[], Awaitable[None]]]]:
    """Build the enabled controllers (registering their informers) and return
    `(name, run)` pairs; call before `informers.run()` starts or while it runs."""
    from minik3s.api.rbac_controllers import CONTROLLER_SERVICE_ACCOUNTS
    from minik3s.controllers.clusterrole_aggregation import ClusterRoleAggregationController
    from minik3s.controllers.cronjob import CronJobController
    from minik3s.controllers.csr_signing import CSRSigningController
    from minik3s.controllers.daemonset import DaemonSetController
    from minik3s.controllers.deployment import DeploymentController
    from minik3s.controllers.disruption import DisruptionController
    from minik3s.controllers.endpoints import EndpointsController
    from minik3s.controllers.ephemeral import EphemeralVolumeController
    from minik3s.controllers.garbage_collector import GarbageCollector
    from minik3s.controllers.hpa import HorizontalPodAutoscalerController
    from minik3s.controllers.job import JobController
    from minik3s.controllers.namespace import NamespaceController
    from minik3s.controllers.node_lifecycle import NodeLifecycleController
    from minik3s.controllers.persistentvolume import PersistentVolumeController
    from minik3s.controllers.podgc import PodGCController
    from minik3s.controllers.podgroup_status import PodGroupStatusController
    from minik3s.controllers.replicaset import ReplicaSetController
    from minik3s.controllers.replication import ReplicationManager
    from minik3s.controllers.resourcequota import ResourceQuotaController
    from minik3s.controllers.root_ca_publisher import RootCACertPublisher
    from minik3s.controllers.serviceaccount import ServiceAccountsController, ensure_controller_accounts
    from minik3s.controllers.servicecidrs import ServiceCIDRController
    from minik3s.controllers.statefulset import StatefulSetController
    from minik3s.controllers.storage_protection import StorageProtectionController
    from minik3s.controllers.taint_eviction import TaintEvictionController
    from minik3s.controllers.ttl import TTLController

    c = config
    clock = c.clock
    out: list[tuple[str, Callable[[], Awaitable[None]]]] = []

    def on(name: str) -> bool:
        return name in c.enabled

    if on("service-cidr-controller"):
        scc = ServiceCIDRController(client, informers, clock=clock)
        out.append(("service-cidr-controller", lambda: scc.run()))
    if on("endpoint"):
        ep = EndpointsController(client, informers, clock=clock)
        out.append(("endpoint", lambda: ep.run(c.concurrent_endpoint_syncs)))
    if on("job"):
        jc = JobController(client, informers, clock=clock)
        out.append(("job", lambda: jc.run(c.concurrent_job_syncs)))
    if on("serviceaccount"):
        sa = ServiceAccountsController(client, informers)
        out.append(("serviceaccount", lambda: sa.run()))
    if c.enabled >= set(ALL_CONTROLLER_NAMES):
        # --use-service-account-credentials: the ServiceAccounts of kube-controller-manager's default
        # controllers in kube-system (not for a hand-picked subset, as tests start)
        out.append(("controller-service-accounts",
                    lambda: ensure_controller_accounts(client, CONTROLLER_SERVICE_ACCOUNTS)))
    if on("csrsigning") and c.csr_signers:
        csr = CSRSigningController(client, informers, signers=c.csr_signers, clock=clock)
        out.append(("csrsigning", lambda: csr.run()))
    if on("root-ca-cert-publisher"):
        rca = RootCACertPublisher(client, informers, root_ca=c.root_ca)
        out.append(("root-ca-cert-publisher", lambda: rca.run()))
    if on("replicaset"):
        rs = ReplicaSetController(client, informers, clock=clock)
        out.append(("replicaset", lambda: rs.run(c.concurrent_replicaset_syncs)))
    if on("deployment"):
        dep = DeploymentController(client, informers, clock=clock)
        out.append(("deployment", lambda: dep.run(c.concurrent_deployment_syncs)))
    if on("garbagecollector"):
        gc = GarbageCollector(client, informers, clock=clock)
        out.append(("garbagecollector", lambda: gc.run(c.concurrent_gc_syncs)))
    if on("nodelifecycle"):
        nl = NodeLifecycleController(client, informers, clock=clock, node_monitor_period=c.node_monitor_period,
                                     node_monitor_grace_period=c.node_monitor_grace_period,
                                     node_startup_grace_period=c.node_startup_grace_period)
        out.append(("nodelifecycle", lambda: nl.run()))
    if on("ttl"):
        ttl = TTLController(client, informers)
        out.append(("ttl", lambda: ttl.run()))
    if on("taint-eviction-controller"):
        te = TaintEvictionController(client, informers, clock=clock)
        out.append(("taint-eviction-controller", lambda: te.run()))
    if on("podgc"):
        pg = PodGCController(client, informers, clock=clock,
                             terminated_pod_gc_threshold=c.terminated_pod_gc_threshold,
                             gc_check_period=c.pod_gc_period, quarantine=c.pod_gc_quarantine)
        out.append(("podgc", lambda: pg.run()))
    if on("disruption"):
        dc = DisruptionController(client, informers, clock=clock)
        out.append(("disruption", lambda: dc.run()))
    if on("podgroup-status"):
        pgs = PodGroupStatusController(client, informers, clock=clock)
        out.append(("podgroup-status", lambda: pgs.run()))
    if on("statefulset"):
        sts = StatefulSetController(client, informers, clock=clock)
        out.append(("statefulset", lambda: sts.run(c.concurrent_statefulset_syncs)))
    if on("daemonset"):
        dsc = DaemonSetController(client, informers, clock=clock)
        out.append(("daemonset", lambda: dsc.run(c.concurrent_daemonset_syncs)))
    if on("cronjob"):
        cjc = CronJobController(client, informers, clock=clock)
        out.append(("cronjob", lambda: cjc.run(c.concurrent_cron_job_syncs)))
    if on("replicationcontroller"):
        rcm = ReplicationManager(client, informers, clock=clock)
        out.append(("replicationcontroller", lambda: rcm.run(c.concurrent_rc_syncs)))
    if on("horizontalpodautoscaling") and c.usage is not None:
        hpa = HorizontalPodAutoscalerController(client, informers, usage=c.usage, clock=clock,
                                                sync_period=c.horizontal_pod_autoscaler_sync_period)
        out.append(("horizontalpodautoscaling", lambda: hpa.run()))
    if on("clusterrole-aggregation"):
        cra = ClusterRoleAggregationController(client, informers)
        out.append(("clusterrole-aggregation", lambda: cra.run()))
    if on("resourcequota"):
        rq = ResourceQuotaController(client, informers, clock=clock, resync_period=c.resource_quota_sync_period)
        out.append(("resourcequota", lambda: rq.run(c.concurrent_resource_quota_syncs)))
    if on("pvc-protection") or on("pv-protection"):
        sp = StorageProtectionController(client, informers, claims=on("pvc-protection"), volumes=on("pv-protection"))
        out.append(("pvc-protection", lambda: sp.run()))
    if on("persistentvolume-binder"):
        pvc = PersistentVolumeController(client, informers, clock=clock)
        out.append(("persistentvolume-binder", lambda: pvc.run()))
    if on("ephemeral-volume"):
        evc = EphemeralVolumeController(client, informers, clock=clock)
        out.append(("ephemeral-volume", lambda: evc.run(c.concurrent_ephemeral_volume_syncs)))
    if on("namespace"):
        ns = NamespaceController(client, informers, clock=clock)
        out.append(("namespace", lambda: ns.run(c.concurrent_namespace_syncs)))
    return out


__all__ = ["ALL_CONTROLLER_NAMES", "ControllerConfig", "all_controllers"]
