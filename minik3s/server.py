"""The composition root (layer L5): the only code that knows every component.

`run(config)` makes the data dir private (0700, store and kubeconfig 0600), with TLS on
(`config.tls_enabled`: beyond loopback always, on loopback with --tls) generates or reuses the
certificates (`minik3s.pki`) and loads the token files, opens storage, serves the API
(AppRunner/TCPSite, HTTPS with optional client certificates when TLS is on), writes the kubeconfig
(with the CA and the admin's client certificate under TLS),
builds the in-process client and the shared informer factory, then runs the components as
named tasks in one TaskGroup — controllers, scheduler, kubelet fleet, descheduler — each
behind a disable flag. Each component writes through its own in-process client carrying its
upstream identity (`kube-controller-manager`, `kube-scheduler`, `kubelet`), so managedFields
and SSA conflicts name the same managers as over HTTP; the shared informers only read. One component failing stops all; cancellation (SIGTERM/SIGINT) stops
all, closes watch streams and closes SQLite.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import yaml
from aiohttp import web
from prometheus_client import CollectorRegistry, generate_latest

from apiserver.app import READY, create_app
from apiserver.core import ApiCore
from apiserver.event_ttl import run_event_ttl
from apiserver.handlers.authn import TokenFileError, parse_token_file
from apiserver.handlers.metrics import RequestMetrics
from apiserver.keys import AuthnSettings, ServingLimits
from apiserver.rbac import uncovered_rules
from apiserver.serving import LINGERING_TIME, HeaderTimeoutSite
from apiserver.storage.sqlite_store import SqliteStore
from apiserver.strategies.admission import ServiceAccountAdmission
from apiserver.strategies.crd_lifecycle import sync_api_services
from apiserver.strategies.service_account import ServiceAccountKeys
from minik3s.api.addons import ADDONS, COREDNS, coredns_objects, metrics_server_objects
from minik3s.api.apiregistration import local_apiservice, local_available_status
from minik3s.api.errors import AlreadyExistsError, ConflictError, NotFoundError
from minik3s.api.gang import VOLCANO_QUEUES, builtin_crds, default_volcano_queue
from minik3s.api.metrics import KubeletStats, NodeUsage, NoMetricsAPI, PodUsage
from minik3s.api.rbac import bootstrap_cluster_role_bindings, bootstrap_cluster_roles
from minik3s.api.rbac_controllers import (
    controller_cluster_role_bindings,
    controller_cluster_roles,
    namespace_role_bindings,
    namespace_roles,
)
from minik3s.api.resources import (
    APISERVICES,
    CLUSTERROLEBINDINGS,
    CLUSTERROLES,
    CONFIGMAPS,
    CRDS,
    DEPLOYMENTS,
    NAMESPACES,
    PRIORITYCLASSES,
    ROLEBINDINGS,
    ROLES,
    SERVICEACCOUNTS,
    SERVICES,
    STORAGECLASSES,
    ResourceInfo,
    ResourceRegistry,
)
from minik3s.api.storage import local_path_storage_class
from minik3s.api.types import JsonDict
from minik3s.api.user import component_user
from minik3s.client.informer import SharedInformerFactory
from minik3s.client.kubeconfig import kubeconfig_document
from minik3s.client.leaderelection import LeaderElectionConfig, LeaseElector
from minik3s.client.local import LocalClient
from minik3s.client.rest import default_user_agent
from minik3s.config import ServerConfig
from minik3s.controllers.apf import ApfConfig
from minik3s.controllers.apiserver_endpoints import advertised_ip, reconcile_apiserver_endpoints
from minik3s.controllers.apiserver_identity import ApiserverIdentity
from minik3s.controllers.servicecidrs import ensure_default_service_cidr, repair_ip_addresses
from minik3s.pki import (
    PRIVATE_FILE,
    CsrSigner,
    Pki,
    ensure_pki,
    loopback_tls_context,
    private_dir,
    touch_private,
    wanted_sans,
    write_private,
)
from minik3s.utils.clock import Clock
from minik3s.utils.gc_policy import apply_server_gc_policy

logger = logging.getLogger(__name__)

KUBERNETES_SERVICE_IP = "10.43.0.1"  # first address of K3s' service CIDR 10.43.0.0/16
SERVICE_CIDR = "10.43.0.0/16"
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
SYSTEM_PRIORITY_CLASSES = (
    ("system-node-critical", 2000001000, "Used for system critical pods that must not be moved from their current node."),
    ("system-cluster-critical", 2000000000, "Used for system critical pods that must run in the cluster, but can be "
                                            "moved to another node if necessary."),
)


@dataclass
class RunningServer:
    """What `start()` returns: the live pieces, for the CLI, tests and benchmarks."""

    config: ServerConfig
    url: str
    core: ApiCore
    store: SqliteStore
    client: LocalClient
    informers: SharedInformerFactory
    runner: web.AppRunner
    components: dict[str, Any] = field(default_factory=dict)
    # the components' Prometheus metrics (served on /metrics); owned here, no global registry
    metrics: CollectorRegistry = field(default_factory=CollectorRegistry)
    # the one clock of the API and every component (a FakeClock when embedded with simulated time)
    clock: Clock = field(default_factory=Clock)
    # the certificates and keys when TLS is on (docs/security.md), else None
    pki: Pki | None = None

    def client_for(self, binary: str) -> LocalClient:
        """An in-process client with a component's identity (its user agent, hence the field
        manager of its writes), as that binary would connect over HTTP."""
        return LocalClient(self.core, user_agent=default_user_agent(binary), user=component_user(binary))


def _csr_signers(pki: Pki | None) -> dict[str, CsrSigner]:
    """csrsigning's signers: kube-apiserver-client certificates from the client CA the listener
    verifies (K3s passes it as --cluster-signing-kube-apiserver-client-cert-file); none without TLS."""
    if pki is None:
        return {}
    return {"kubernetes.io/kube-apiserver-client": CsrSigner(pki.client_ca_cert, pki.client_ca_key)}


async def _create_missing(client: LocalClient, info: ResourceInfo, obj: JsonDict) -> JsonDict | None:
    """Create a bootstrap object unless one of its name exists; the created object, or None.
    Looked up first: on a restart every bootstrap object exists, and a create (refused only by
    the store) would first run the decoding and admission steps, which load the wire models
    (`apiserver.strategies.schema`) before the server is ready."""
    md = obj["metadata"]
    try:
        await client.get(info, md["name"], md.get("namespace"))
        return None
    except NotFoundError:
        pass
    try:
        return await client.create(info, obj, md.get("namespace"))
    except AlreadyExistsError:
        return None


async def _reconcile_bootstrap_rbac(client: LocalClient, info: ResourceInfo, obj: JsonDict) -> None:
    """kube-apiserver's `rbac/bootstrap-roles` reconciliation of one bootstrap object (upstream
    reconciliation.ReconcileRoleOptions / ReconcileRoleBindingOptions with Confirm, extra
    permissions kept): created when missing; one annotated `rbac.authorization.kubernetes.io/
    autoupdate: "false"` is left alone; otherwise the bootstrap labels and annotations it lacks
    are added, a role gains the atomic rules of the bootstrap rules it does not cover (and the
    bootstrap aggregationRule if it has none), a binding gains the bootstrap subjects it lacks
    and is recreated if its roleRef differs."""
    md = obj["metadata"]
    name, namespace = md["name"], md.get("namespace")
    try:
        existing = await client.get(info, name, namespace)
    except NotFoundError:
        with contextlib.suppress(AlreadyExistsError):
            await client.create(info, obj, namespace)
        return
    emd = existing.get("metadata") or {}
    if (emd.get("annotations") or {}).get("rbac.authorization.kubernetes.io/autoupdate") == "false":
        return
    updated = copy.deepcopy(existing)
    umd = updated.setdefault("metadata", {})
    for key in ("labels", "annotations"):
        merged = {**(md.get(key) or {}), **(umd.get(key) or {})}  # the existing values win
        if merged != (umd.get(key) or {}):
            umd[key] = merged
    if obj.get("kind") in ("ClusterRole", "Role"):
        missing = uncovered_rules(list(updated.get("rules") or []), list(obj.get("rules") or []))
        if missing:
            updated["rules"] = list(updated.get("rules") or []) + missing
        if obj.get("aggregationRule") and not updated.get("aggregationRule"):
            updated["aggregationRule"] = obj["aggregationRule"]
    else:
        if updated.get("roleRef") != obj.get("roleRef"):  # roleRef is immutable: recreate
            with contextlib.suppress(NotFoundError):
                await client.delete(info, name, namespace)
            with contextlib.suppress(AlreadyExistsError):
                await client.create(info, {**obj, "subjects": _merged_subjects(existing, obj)}, namespace)
            return
        subjects = _merged_subjects(existing, obj)
        if subjects != (updated.get("subjects") or []):
            updated["subjects"] = subjects
    if updated != existing:
        with contextlib.suppress(ConflictError, NotFoundError):
            await client.update(info, updated)


def _merged_subjects(existing: JsonDict, expected: JsonDict) -> list[JsonDict]:
    def key(s: JsonDict) -> tuple[str, str, str]:
        return str(s.get("kind") or ""), str(s.get("name") or ""), str(s.get("namespace") or "")
    have = list(existing.get("subjects") or [])
    known = {key(s) for s in have}
    return have + [s for s in expected.get("subjects") or [] if key(s) not in known]


async def _bootstrap_policy(client: LocalClient, core: ApiCore, *, metrics_api: bool = True) -> None:
    """The default ClusterRoles/Bindings and the system namespaces' Roles/RoleBindings
    (kube-apiserver's RBAC bootstrap, reconciled at every start; the RBAC authorizer enforces
    them on authenticated and impersonated requests) and a local APIService per built-in
    group-version (autoregistration)."""
    for info, objs in ((CLUSTERROLES, bootstrap_cluster_roles() + controller_cluster_roles()),
                       (CLUSTERROLEBINDINGS, bootstrap_cluster_role_bindings() + controller_cluster_role_bindings()),
                       (ROLES, namespace_roles()), (ROLEBINDINGS, namespace_role_bindings())):
        for obj in objs:
            await _reconcile_bootstrap_rbac(client, info, obj)
    seen: set[tuple[str, str]] = set()
    for res in core.registry.all():
        if not res.builtin or (res.group, res.version) in seen:
            continue
        seen.add((res.group, res.version))
        await _create_local_apiservice(client, local_apiservice(res.group, res.version))
    # metrics.k8s.io, which this server answers itself (apiserver/handlers/metrics_api.py) where
    # a cluster registers metrics-server's aggregated API: same name and priorities, served Local;
    # with metrics-server disabled its APIService goes, as K3s removes a disabled add-on's objects
    metrics = local_apiservice("metrics.k8s.io", "v1beta1")
    metrics["spec"] = {"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100,
                       "versionPriority": 100}
    if metrics_api:
        await _create_local_apiservice(client, metrics)
    else:
        with contextlib.suppress(NotFoundError):
            await client.delete(APISERVICES, "v1beta1.metrics.k8s.io")
    # the CRD registration controller's APIServices (kept by the CRD hooks; re-synced here for a
    # data dir written before they were, or by a server stopped between the two writes)
    for group in sorted({str((crd.get("spec") or {}).get("group") or "")
                         for crd in (await client.list(CRDS))["items"]}):
        await sync_api_services(core, group)


async def _create_local_apiservice(client: LocalClient, obj: JsonDict) -> None:
    created = await _create_missing(client, APISERVICES, obj)
    if created is not None:
        created["status"] = local_available_status(created["metadata"]["creationTimestamp"])
        await client.update_status(APISERVICES, created)


@dataclass(slots=True)
class FleetUsage:
    """The usage provider behind metrics.k8s.io, the HPA controller and the kubelets' own
    endpoints (nodes/{name}/proxy): the simulated kubelet fleet's `UsageSource` once
    `build_components` made it (no samples and no kubelet before, or without one)."""

    components: dict[str, Any]

    def pod_usage(self, namespace: str | None = None) -> list[PodUsage]:
        usage = getattr(self.components.get("kubelet"), "usage", None)
        return usage.pod_usage(namespace) if usage is not None else []

    def node_usage(self) -> list[NodeUsage]:
        usage = getattr(self.components.get("kubelet"), "usage", None)
        return usage.node_usage() if usage is not None else []

    def kubelet_stats(self, node: str) -> KubeletStats | None:
        """`KubeletProvider`: the simulated kubelet of `node` (its nodes/{name}/proxy endpoints)."""
        usage = getattr(self.components.get("kubelet"), "usage", None)
        return usage.kubelet_stats(node) if usage is not None else None


async def _bootstrap_addons(client: LocalClient, addons: list[str]) -> None:
    """K3s' packaged add-ons (minik3s.api.addons), deployed as K3s' deploy controller applies
    its manifests at start: each object created unless one of its name exists."""
    infos = {"serviceaccounts": SERVICEACCOUNTS, "configmaps": CONFIGMAPS, "deployments.apps": DEPLOYMENTS,
             "services": SERVICES}
    for addon in addons:
        objects = coredns_objects() if addon == COREDNS else metrics_server_objects()
        for resource, obj in objects:
            await _create_missing(client, infos[resource], obj)


async def _bootstrap(client: LocalClient, core: ApiCore, port: int, *, local_storage: bool = True,
                     metrics_api: bool = True) -> None:
    for ns in SYSTEM_NAMESPACES:
        await _create_missing(client, NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    for name, value, desc in SYSTEM_PRIORITY_CLASSES:
        await _create_missing(client, PRIORITYCLASSES, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                                        "metadata": {"name": name}, "value": value,
                                                        "description": desc})
    # gang-scheduling CRDs (Volcano PodGroup + Queue, scheduler-plugins PodGroup), as a cluster
    # with those projects installed serves them
    for crd in builtin_crds():
        await _create_missing(client, CRDS, crd)
    # Volcano's installation creates the `default` queue PodGroups fall back to
    await _create_missing(client, VOLCANO_QUEUES, default_volcano_queue())
    await _bootstrap_policy(client, core, metrics_api=metrics_api)
    if local_storage:
        # K3s' local-storage manifest: the default `local-path` StorageClass (its provisioner runs
        # as the `local-storage` component, see build_components)
        await _create_missing(client, STORAGECLASSES, local_path_storage_class())
    # the default ServiceCIDR (kube-apiserver's post-start hook, before Services are allocated)
    await ensure_default_service_cidr(client, [SERVICE_CIDR])
    # the `kubernetes` Service in `default`, as kube-apiserver's bootstrap controller keeps it
    # (its Endpoints/EndpointSlice follow in `start` once the listening port is known:
    # minik3s.controllers.apiserver_endpoints)
    try:
        await client.get(SERVICES, "kubernetes", "default")
        await repair_ip_addresses(client)  # a data directory from before IPAddresses were kept
        return
    except NotFoundError:
        pass
    try:
        await client.create(SERVICES, {
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "kubernetes", "namespace": "default",
                         "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {"type": "ClusterIP", "clusterIP": KUBERNETES_SERVICE_IP,
                     "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}],
                     "sessionAffinity": "None"}})
    except AlreadyExistsError:
        pass


def write_kubeconfig(config: ServerConfig, url: str, pki: Pki | None = None) -> None:
    """The kubeconfig (0600): with TLS it carries the server CA and the admin's client
    certificate and key (K3s's k3s.yaml), so kubectl and every client work unchanged."""
    if pki is not None:
        doc = kubeconfig_document(url, ca_data=pki.server_ca_cert.read_bytes(),
                                  client_cert_data=pki.admin_cert.read_bytes(),
                                  client_key_data=pki.admin_key.read_bytes())
    else:
        doc = kubeconfig_document(url)
    private_dir(config.data_dir)
    write_private(config.kubeconfig_path, yaml.safe_dump(doc, sort_keys=False).encode())


def _private_store_files(config: ServerConfig) -> None:
    """The SQLite store and its -wal/-shm files are 0600 (SQLite creates the latter with the
    database file's own mode; older ones are chmod-ed)."""
    for suffix in ("", "-wal", "-shm"):
        path = config.db_path.with_name(config.db_path.name + suffix)
        if path.exists():
            os.chmod(path, PRIVATE_FILE)


def _authn_settings(config: ServerConfig, pki: Pki) -> AuthnSettings:
    """The generated admin token file, then --token-auth-file (a later duplicate token wins)."""
    tokens = dict(parse_token_file(pki.admin_token_file.read_text(), source=str(pki.admin_token_file)))
    if config.token_auth_file is not None:
        try:
            text = config.token_auth_file.read_text()
        except OSError as e:
            raise TokenFileError(f"token_auth_file: cannot read {config.token_auth_file}: {e.strerror}") from None
        tokens.update(parse_token_file(text, source=str(config.token_auth_file)))
    return AuthnSettings(tokens=MappingProxyType(tokens))


async def start(config: ServerConfig, *, clock: Clock | None = None) -> RunningServer:
    """Open storage and serve the API; components are started from `build_components`.
    `clock` (default: the real one) is the API's and every component's time (minik3s.embed
    passes a FakeClock for simulated time)."""
    clock = clock or Clock()
    private_dir(config.data_dir)
    touch_private(config.db_path)
    pki: Pki | None = None
    authn: AuthnSettings | None = None
    sans: list[str] | None = None
    if config.tls_enabled:
        sans = wanted_sans(config.bind, config.tls_san)
        # certificates are checked against the wall clock, whatever clock the API runs on
        pki = ensure_pki(config.data_dir, sans=sans)
        authn = _authn_settings(config, pki)
    store = SqliteStore(config.db_path, history_window=config.history_window,
                        compact_interval=config.compact_interval, fsync=not config.unsafe_no_fsync)
    if config.unsafe_no_fsync:
        logger.warning("--unsafe-no-fsync: writes are not fsynced; a machine crash can lose acknowledged writes")
    await store.start()
    _private_store_files(config)
    registry = ResourceRegistry()
    core = ApiCore(store, registry, clock=clock)
    if config.service_account_admission:
        core.service_accounts = ServiceAccountAdmission(core.rng)
    if "ResourceQuota" in config.disable_admission_plugins:
        core.resource_quota = None
    core.storage_protection = config.storage_protection_admission
    core.claim_resize = "PersistentVolumeClaimResize" not in config.disable_admission_plugins
    if pki is not None:  # tokens signed with the persisted key stay valid across restarts
        core.provide_hook_state(ServiceAccountKeys.from_pem(pki.service_key.read_bytes()))
    core.load_crds()
    # the server's own writes (bootstrap namespaces, the kubernetes Service) and the shared
    # informers' reads: kube-apiserver's identity
    client = LocalClient(core, user_agent=default_user_agent("kube-apiserver"))
    await _bootstrap(client, core, config.port or 6443, local_storage=config.enabled("local-storage"),
                     metrics_api=config.enabled("metrics-server"))
    await _bootstrap_addons(client, [a for a in ADDONS if config.addons and config.enabled(a)])
    holder: dict[str, Any] = {}

    def explain(namespace: str, name: str) -> Any:
        sched = holder.get("scheduler")
        return sched.explain(namespace, name) if sched is not None else None

    metrics = CollectorRegistry()
    limits = ServingLimits(min_request_timeout=config.min_request_timeout, request_timeout=config.request_timeout,
                           watch_send_timeout=config.watch_send_timeout)
    def component_health() -> dict[str, str | None]:
        """componentstatuses: the embedded scheduler and controllers run unless disabled (a
        component that stops ends the server); etcd-0 is the store."""
        refused = 'Get "https://127.0.0.1:{port}/healthz": dial tcp 127.0.0.1:{port}: connect: connection refused'
        return {
            "scheduler": None if config.enabled("scheduler") else refused.format(port=10259),
            "controller-manager": None if config.enabled("controllers") else refused.format(port=10257),
            "etcd-0": None if store.running else "the storage backend is not running",
        }

    app = create_app(core, explain=explain, metrics=lambda: generate_latest(metrics), usage=FleetUsage(holder),
                     metrics_api=config.enabled("metrics-server"),
                     authn=authn, serving_names=frozenset(sans) if sans is not None else None, limits=limits,
                     request_metrics=RequestMetrics(metrics), component_health=component_health)
    # keepalive_timeout: kube-apiserver's IdleTimeout; the site bounds the first request's headers;
    # lingering_time: how long an unread rest of a body is drained after the answer (apiserver.serving)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=2.0, keepalive_timeout=config.idle_timeout,
                           lingering_time=LINGERING_TIME)
    await runner.setup()
    # plain HTTP on loopback answers a TLS handshake on the same port too (K3s serves only HTTPS:
    # tools that read the API server's certificate get one)
    loopback_tls = (loopback_tls_context(config.data_dir, sans=wanted_sans(config.bind, []))
                    if pki is None else None)
    site = HeaderTimeoutSite(runner, config.bind, config.port, header_timeout=config.read_header_timeout,
                             reuse_address=True, ssl_context=pki.server_context() if pki is not None else None,
                             loopback_tls=loopback_tls)
    try:
        await site.start()
    except BaseException:
        await runner.cleanup()
        await store.close()
        raise
    port = site.port
    # the `kubernetes` Service's Endpoints/EndpointSlice: the listening address and port
    await reconcile_apiserver_endpoints(client, advertised_ip(config.bind), port)
    host = config.bind if config.bind not in ("0.0.0.0", "::") else "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    url = f"{'https' if pki is not None else 'http'}://{host}:{port}"
    write_kubeconfig(config, url, pki)
    # objects loaded at start frozen out of the cyclic GC, collections less often (gc_policy)
    apply_server_gc_policy()
    app[READY].set()
    store.decode_in_background()  # the objects loaded at start that no request has read yet
    informers = SharedInformerFactory(client)
    rs = RunningServer(config, url, core, store, client, informers, runner, metrics=metrics, clock=clock, pki=pki)
    rs.components = holder
    return rs


def _root_ca(rs: RunningServer) -> str:
    """The CA bundle kube-root-ca.crt publishes: the server CA, or on plain HTTP the CA of the
    loopback listener's TLS side (apiserver.serving), which a client can verify
    https://127.0.0.1:<port> against; "" for a server with neither (a non-loopback plain bind)."""
    ca = rs.pki.server_ca_cert if rs.pki is not None else Pki.under(rs.config.data_dir).server_ca_cert
    try:
        return ca.read_text()
    except OSError:
        return ""


def build_components(rs: RunningServer) -> list[tuple[str, Callable[[], Awaitable[None]]]]:
    """Named run coroutines of the enabled components (imports only what is enabled)."""
    cfg = rs.config
    identity = ApiserverIdentity(rs.client, clock=rs.clock)
    apf = ApfConfig(rs.client, rs.informers, clock=rs.clock)
    out: list[tuple[str, Callable[[], Awaitable[None]]]] = [
        ("informers", rs.informers.run),
        ("event-ttl", lambda: run_event_ttl(rs.store, ttl=cfg.event_ttl, clock=rs.clock)),
        ("apiserver-identity", identity.run),
        ("priority-and-fairness-config", apf.run),
    ]
    if cfg.enabled("controllers"):
        from minik3s.controllers import ControllerConfig, all_controllers

        ccfg = ControllerConfig(node_monitor_grace_period=cfg.node_monitor_grace_period,
                                node_monitor_period=cfg.node_monitor_period,
                                horizontal_pod_autoscaler_sync_period=cfg.horizontal_pod_autoscaler_sync_period,
                                usage=FleetUsage(rs.components) if cfg.enabled("metrics-server") else NoMetricsAPI(),
                                clock=rs.clock, root_ca=_root_ca(rs),
                                csr_signers=_csr_signers(rs.pki))
        kcm = rs.client_for("kube-controller-manager")
        out.extend(all_controllers(kcm, rs.informers, config=ccfg))
        out.append(_leader_election(rs, kcm, LeaderElectionConfig(resource_name="kube-controller-manager")))
    if cfg.enabled("local-storage"):
        from minik3s.controllers.local_path import LocalPathProvisioner

        # K3s runs it as a Deployment of its own, independent of kube-controller-manager
        lpp = LocalPathProvisioner(rs.client_for("local-path-provisioner"), rs.informers, clock=rs.clock)
        rs.components["local-storage"] = lpp
        out.append(("local-storage", lpp.run))
    if cfg.enabled("scheduler"):
        from scheduler.config import LeaderElection, load_config
        from scheduler.metrics import SchedulerMetrics
        from scheduler.scheduler import Scheduler

        scfg = load_config(cfg.scheduler_config) if cfg.scheduler_config else None
        sched_client = rs.client_for("kube-scheduler")
        sched = Scheduler(scfg, client=sched_client, informers=rs.informers, clock=rs.clock,
                          metrics=SchedulerMetrics(rs.metrics))
        rs.components["scheduler"] = sched
        out.append(("scheduler", sched.run))
        election = (scfg.leader_election if scfg is not None else LeaderElection()).election()
        if election.leader_elect:
            out.append(_leader_election(rs, sched_client, election))
    if cfg.enabled("kubelet"):
        from kubelet_sim.config import parse_fleet
        from kubelet_sim.controller import FleetOptions, KubeletFleet

        nodes = parse_fleet(cfg.nodes)
        if nodes:
            # renew leases well inside the node monitor grace period (10 s upstream)
            opts = FleetOptions(renew_interval=min(10.0, cfg.node_monitor_grace_period / 5))
            fleet = KubeletFleet(nodes, client=rs.client_for("kubelet"), informers=rs.informers, options=opts,
                                 clock=rs.clock)
            rs.components["kubelet"] = fleet
            out.append(("kubelet", fleet.run))
    if cfg.enabled("descheduler") and cfg.descheduler_policy is not None:
        from descheduler.descheduler import Descheduler, DeschedulerOptions
        from descheduler.metrics import DeschedulerMetrics
        from descheduler.plugins.registry import in_tree_registry
        from descheduler.policy import load_policy, unused_plugin_configs

        dreg = in_tree_registry()
        policy, profiles = load_policy(cfg.descheduler_policy, dreg)
        for prof, plugin in unused_plugin_configs(policy, profiles):
            logger.warning("descheduler plugin has args in pluginConfig but is enabled at no extension point, "
                           "it will not run profile=%s plugin=%s", prof, plugin)
        placement = None
        if cfg.descheduler_loop_avoidance and "scheduler" in rs.components:
            from scheduler.whatif import WhatIf

            placement = WhatIf(rs.components["scheduler"])
        elif cfg.descheduler_loop_avoidance:
            logger.warning("descheduler loop avoidance needs the embedded scheduler; it is off")
        desched = Descheduler(policy, profiles, client=rs.client_for("descheduler"), informers=rs.informers, registry=dreg,
                              metrics=DeschedulerMetrics(rs.metrics), placement=placement,
                              usage=FleetUsage(rs.components), clock=rs.clock,
                              options=DeschedulerOptions(interval=cfg.descheduling_interval,
                                                         dry_run=cfg.descheduler_dry_run,
                                                         loop_avoidance=placement is not None))
        rs.components["descheduler"] = desched
        out.append(("descheduler", desched.run))
    return out


def _leader_election(rs: RunningServer, client: LocalClient,
                     config: LeaderElectionConfig) -> tuple[str, Callable[[], Awaitable[None]]]:
    """An embedded component's Lease in kube-system, taken at start (the server owns its data
    directory: a Lease found then is an earlier run's), renewed every retry period, released on
    shutdown; leadership lost to another holder is logged and retaken once that Lease expires."""
    elector = LeaseElector(client, config, clock=rs.clock, force=True)

    def lost() -> None:
        logger.error("embedded component lost its lease; it keeps running and retakes the lease once free "
                     "lease=%s/%s", config.resource_namespace, config.resource_name)

    return (f"leader-election/{config.resource_name}", lambda: elector.hold(lost))


async def stop(rs: RunningServer) -> None:
    await rs.runner.cleanup()
    await rs.store.close()


async def run(config: ServerConfig, *, on_ready: Callable[[RunningServer], None] | None = None) -> None:
    if config.enabled("scheduler") and config.scheduler_config is not None:
        # invalid scheduler configuration fails before anything starts, naming the field
        from scheduler.config import load_config

        load_config(config.scheduler_config)
    if config.enabled("descheduler") and config.descheduler_policy is not None:
        # an invalid DeschedulerPolicy fails before anything starts, naming the field
        from descheduler.plugins.registry import in_tree_registry
        from descheduler.policy import load_policy

        load_policy(config.descheduler_policy, in_tree_registry())
    rs = await start(config)
    try:
        components = build_components(rs)
        logger.info("minik3s server ready url=%s kubeconfig=%s components=%s", rs.url, config.kubeconfig_path,
                    ",".join(n for n, _ in components))
        if on_ready is not None:
            on_ready(rs)
        async with asyncio.TaskGroup() as tg:
            for name, fn in components:
                tg.create_task(_supervised(name, fn), name=name)
    finally:
        await stop(rs)


async def _supervised(name: str, fn: Callable[[], Awaitable[None]]) -> None:
    try:
        await fn()
    except asyncio.CancelledError:
        raise
    except Exception:
        logger.exception("component failed component=%s", name)
        raise
