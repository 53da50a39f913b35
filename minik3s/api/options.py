"""Request options shared by the apiserver and the in-process transport (layer L2).

Parsing query strings into these dataclasses happens once in the HTTP layer; the in-process
transport builds them directly. The request core (`apiserver.core.ApiCore`) only sees these.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from minik3s.api.resources import ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.api.user import UserInfo


@dataclass(slots=True)
class ListOptions:
    label_selector: str | None = None
    field_selector: str | None = None
    limit: int | None = None
    continue_: str | None = None
    resource_version: str | None = None
    resource_version_match: str | None = None


@dataclass(slots=True)
class WatchOptions:
    label_selector: str | None = None
    field_selector: str | None = None
    resource_version: str | None = None
    allow_bookmarks: bool = False
    timeout_seconds: float | None = None
    send_initial_events: bool = False
    # set by a consumer that batches its writes (the HTTP watch handler): the core calls it once
    # with a probe telling whether the next event is at hand without waiting (only for watches
    # whose every event is yielded, i.e. without selectors)
    ready_probe: Callable[[Callable[[], bool]], None] | None = None
    # set by a consumer that can take events without iterating (the HTTP watch handler): the
    # core calls it once with the store watcher when every live event would be yielded as
    # stored (no selectors, no bookmarks, no conversion), so the consumer may attach a sink
    direct_probe: Callable[[Any], None] | None = None


@dataclass(slots=True)
class WriteOptions:
    dry_run: bool = False
    field_manager: str | None = None
    field_validation: str = "Warn"  # Strict | Warn | Ignore
    force: bool = False
    warnings: list[str] = field(default_factory=list)
    # duplicate keys the request body's decoder saw: (key, message as upstream's strict decoder
    # words it: `duplicate field "x"`, YAML `line 3: key "x" already set in map`)
    duplicate_fields: list[tuple[str, str]] = field(default_factory=list)
    # the requesting user (HTTP: the authenticated or impersonated user); None: in-process caller
    user: UserInfo | None = None
    # True when the HTTP layer authorized `user` (authentication or impersonation named it): the
    # write is then subject to RBAC's escalation prevention too; in-process components are not
    authorize: bool = False
    # set by the request core for a write through a converted view (events.k8s.io/v1 Events,
    # autoscaling/v1 HPAs): the version the client addressed, in whose terms managedFields are
    # recorded (upstream's field manager works on the request version's object)
    served: ResourceInfo | None = None

    def warn(self, messages: Iterable[str]) -> None:
        """Record `Warning` header texts, each once (upstream's warning recorder drops repeats)."""
        for m in messages:
            if m not in self.warnings:
                self.warnings.append(m)


@dataclass(slots=True)
class DeleteOptions:
    grace_period_seconds: int | None = None
    propagation_policy: str | None = None
    orphan_dependents: bool | None = None
    preconditions: JsonDict | None = None
    dry_run: bool = False
    user: UserInfo | None = None

    @classmethod
    def from_dict(cls, d: JsonDict | None) -> DeleteOptions:
        d = d or {}
        gp = d.get("gracePeriodSeconds")
        return cls(
            grace_period_seconds=int(gp) if gp is not None else None,
            propagation_policy=d.get("propagationPolicy"),
            orphan_dependents=d.get("orphanDependents"),
            preconditions=d.get("preconditions"),
            dry_run=bool(d.get("dryRun")),
        )
