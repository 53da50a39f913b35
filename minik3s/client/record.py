"""Fire-and-forget core/v1 Events, as client-go's tools/record EventRecorder writes them (layer
L3, minik3s.client): what controllers and the simulated kubelets report about the objects they act on.

Why here: every component that reports Events (the embedded controllers, the simulated kubelets)
sits above the client and beside the others; client-go keeps its recorder in the client library
for the same reason.

An Event is built as the legacy recorder builds it (record/event.go makeEvent): the involved
object's reference (with `fieldPath` for a container, e.g. `spec.containers{web}`), `source`
{component, host}, `reportingComponent` = the component, `reportingInstance` = the host,
first/last timestamps, `count` 1 and the name `<object name>.<hex nanoseconds>`. There is no
aggregation or spam filter. `event()` only enqueues; `run()`, started by the owner, creates
them in order; a full queue drops events, so the caller's work never waits on them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

from minik3s.api.resources import EVENTS
from minik3s.api.types import JsonDict
from minik3s.client.interface import Client
from minik3s.utils.clock import Clock, rfc3339

logger = logging.getLogger(__name__)

__all__ = ["EventRecorder"]


@dataclass(slots=True)
class _PendingEvent:
    obj_ref: JsonDict
    namespace: str
    event_type: str
    reason: str
    message: str
    host: str


class EventRecorder:
    """client-go's record.EventRecorder for one component (e.g. "deployment-controller",
    "kubelet"), without aggregation."""

    def __init__(self, client: Client, component: str, *, clock: Clock | None = None, max_pending: int = 1000) -> None:
        self._client = client
        self._component = component
        self._clock = clock or Clock()
        self._queue: asyncio.Queue[_PendingEvent] = asyncio.Queue(maxsize=max_pending)
        self._seq = 0

    def event(self, obj: JsonDict, event_type: str, reason: str, message: str, *,
              field_path: str = "", host: str = "") -> None:
        """Queue an Event about `obj`; `field_path` names a part of it (a container), `host`
        the node the reporting instance runs on (the kubelet's node name)."""
        m = obj.get("metadata") or {}
        ref = {
            "kind": obj.get("kind"),
            "namespace": m.get("namespace"),
            "name": m.get("name"),
            "uid": m.get("uid"),
            "apiVersion": obj.get("apiVersion"),
            "resourceVersion": m.get("resourceVersion"),
            "fieldPath": field_path,
        }
        ref = {k: v for k, v in ref.items() if v}
        with contextlib.suppress(asyncio.QueueFull):
            self._queue.put_nowait(_PendingEvent(ref, m.get("namespace") or "default", event_type, reason,
                                                 message, host))

    def _build(self, ev: _PendingEvent) -> JsonDict:
        now = self._clock.now()
        self._seq += 1
        stamp = int(now.timestamp() * 1e9) + self._seq
        ts = rfc3339(now)
        source = {"component": self._component}
        if ev.host:
            source["host"] = ev.host
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{ev.obj_ref.get('name')}.{stamp:x}", "namespace": ev.namespace},
            "involvedObject": ev.obj_ref,
            "reason": ev.reason,
            "message": ev.message,
            "source": source,
            "firstTimestamp": ts,
            "lastTimestamp": ts,
            "count": 1,
            "type": ev.event_type,
            "reportingComponent": self._component,
            "reportingInstance": ev.host,
        }

    async def run(self) -> None:
        while True:
            ev = await self._queue.get()
            try:
                await self._client.create(EVENTS, self._build(ev), ev.namespace, read_only=True, handover=True)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # events are best effort: no failure may stop the recorder
                logger.debug("event dropped reason=%s err=%r", ev.reason, e)

    def pending(self) -> int:
        return self._queue.qsize()
