"""Typed application keys and per-stream state of the HTTP layer (layer L4, apiserver leaf).

Why a leaf module: `apiserver.app` (the factory) fills these keys and `apiserver.handlers` read
them; keeping them here lets the factory import the handlers at module level while nothing
imports the factory back (the dependency rule: app -> handlers -> keys -> core).

Data flow: `create_app` stores the core, the explain provider, readiness, the OpenAPI document
cache and the shared watch-event encoding cache; every open watch registers a `WatchStream`
in `WATCHES`, which `on_shutdown` ends.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from aiohttp import web

from apiserver.apf import Classifier
from apiserver.core import ApiCore
from apiserver.rbac import Authorizer
from apiserver.strategies.service_account import DEFAULT_AUDIENCES
from minik3s.api.metrics import UsageProvider
from minik3s.api.types import JsonDict
from minik3s.api.user import UserInfo

# (namespace, pod name) -> the scheduler's per-node, per-plugin verdicts, or None when unknown
ExplainProvider = Callable[[str, str], JsonDict | None]
# the Prometheus text exposition of the components' metrics (the composition root's registry)
MetricsProvider = Callable[[], bytes]
# (event type, resourceVersion, apiVersion served): a resourceVersion names one object state
# cluster-wide; a converted view (autoscaling/v1 HPAs of stored v2 objects) encodes it differently
WatchEncodeKey = tuple[str, str | None, str]


@dataclass(slots=True, eq=False)
class WatchStream:
    """One open watch response and the deadline its handler runs under. Server shutdown moves
    the deadline to now: the handler's `asyncio.timeout` fires, and it ends the stream the way
    an expired `timeoutSeconds` does (a complete chunked response), with nothing cancelled
    from outside."""

    response: web.StreamResponse
    deadline: asyncio.Timeout

    def end_now(self) -> None:
        self.deadline.reschedule(asyncio.get_running_loop().time())


@dataclass(frozen=True, slots=True)
class AuthnSettings:
    """What the TLS listener authenticates with (`handlers.authn`): the static token files'
    tokens (token -> user) and the API's audiences (kube-apiserver --api-audiences)."""

    tokens: Mapping[str, UserInfo] = field(default_factory=lambda: MappingProxyType({}))
    audiences: tuple[str, ...] = DEFAULT_AUDIENCES


@dataclass(frozen=True, slots=True)
class ServingLimits:
    """How long requests and connections may take, as kube-apiserver's HTTP server bounds them.

    - `min_request_timeout`: a watch without `timeoutSeconds` ends after a random time in
      [t, 2t) (kube-apiserver `--min-request-timeout`, 1800 s), so watchers spread their re-lists.
    - `request_timeout`: reading a request body may take at most this long (the 504 of
      kube-apiserver's `--request-timeout`, 60 s, for requests that are not long-running).
    - `watch_send_buffer`: bytes a watch may have queued in its connection's user-space send
      buffer before its next write waits for the client (a commit batch handed to an idle
      watch goes out whole, so at most one batch more is queued); the kernel's send buffer of
      a watch socket is capped at the same size.
    - `watch_send_timeout`: a watch whose client accepts none of those bytes for this long,
      while an event waits to be sent, cannot keep up and is closed (upstream's cacher
      terminates a watcher whose buffer stays full); the client re-lists and re-watches.
    """

    min_request_timeout: float = 1800.0
    request_timeout: float = 60.0
    watch_send_buffer: int = 256 * 1024
    watch_send_timeout: float = 10.0


CORE = web.AppKey("core", ApiCore)
SERVING = web.AppKey("serving", ServingLimits)
WATCHES = web.AppKey("watches", set[WatchStream])
# the bound token each pod's projected volume holds, by (pod uid, ServiceAccount): (token, when
# the kubelet's token manager would refresh it, on the API's clock)
EXEC_TOKENS = web.AppKey("exec_tokens", OrderedDict[tuple[str, str], tuple[str | None, float]])
# pods/attach: each container run's simulated main process (handlers.exec_stream._MainProcess)
EXEC_PROCESSES = web.AppKey("exec_processes", OrderedDict[tuple[str, str, int], object])
EXPLAIN: web.AppKey[ExplainProvider | None] = web.AppKey("explain")
READY = web.AppKey("ready", asyncio.Event)
# documents derived from the resource registry, encoded once and cleared when CRDs change:
# OpenAPI ("v2", "v3", "v3/<group>/<version>") and aggregated discovery ("discovery/api",
# "discovery/apis")
REGISTRY_DOCS = web.AppKey("registry_docs", dict[str, bytes])
# one JSON encoding per watch event, shared by every watcher that receives it
WATCH_ENCODE_CACHE = web.AppKey("watch_encode_cache", dict[WatchEncodeKey, bytes])
# None when the composition root registered no metrics: /metrics then serves an empty exposition
METRICS: web.AppKey[MetricsProvider | None] = web.AppKey("metrics")
# the simulated kubelets' usage behind metrics.k8s.io; None: the group is not served (no
# metrics-server), so discovery omits it and its paths answer 503
USAGE: web.AppKey[UsageProvider | None] = web.AppKey("usage")
# whether metrics.k8s.io is served from USAGE (False: metrics-server disabled, as K3s'
# `--disable metrics-server`; the kubelets' own endpoints still answer from USAGE)
METRICS_API: web.AppKey[bool] = web.AppKey("metrics_api")
# the embedded components' health behind componentstatuses (name -> None when healthy, else the
# probe's error); None: no component is known (every list is empty)
ComponentHealth = Callable[[], dict[str, str | None]]
COMPONENT_HEALTH: web.AppKey[ComponentHealth | None] = web.AppKey("component_health")

# per-request key (request[REQUEST_USER]): the `minik3s.api.user.UserInfo` authentication
# produced (impersonation may replace it). Unset means plain HTTP on loopback, where every
# request is `minik3s.api.user.ADMIN` (docs/security.md).
REQUEST_USER = web.RequestKey("minik3s.user", UserInfo)
# per-request key: the warnings a write collects (WriteOptions.warnings: field validation,
# admission webhooks and policies), sent as Warning headers on its answer, an error included
REQUEST_WARNINGS = web.RequestKey("minik3s.warnings", list)
# None: plain HTTP on loopback (no authentication, every request is the admin's); else every
# request is authenticated (apiserver.handlers.authn)
AUTHN: web.AppKey[AuthnSettings | None] = web.AppKey("authn")
# the names a TLS listener serves (its certificate's SANs), for the browser guard's Host check;
# None on the plain-HTTP loopback listener
SERVING_NAMES: web.AppKey[frozenset[str] | None] = web.AppKey("serving_names")
# the RBAC authorizer over the core's store (apiserver.rbac): dispatch, impersonation and the
# access reviews ask it
AUTHORIZER = web.AppKey("authorizer", Authorizer)
# API Priority and Fairness classification over the core's store (apiserver.apf): the UIDs of a
# response's FlowSchema and PriorityLevelConfiguration
APF = web.AppKey("apf", Classifier)
