"""API Priority and Fairness configuration objects, as kube-apiserver keeps them (layer L4):
the post-start hook `priority-and-fairness-config-producer` (the bootstrap ensurer) and the APF
config controller's FlowSchema status (`Dangling`).

Ensurer (at start, then every minute; field manager api-priority-and-fairness-config-producer-v1):
every bootstrap PriorityLevelConfiguration and FlowSchema (minik3s.api.apf_bootstrap) that is
missing is created, suggested ones first; a mandatory one (`exempt`, `catch-all`) whose spec
drifted is rewritten (an exempt level keeps its `spec.exempt`); a suggested one is rewritten only
while its `apf.kubernetes.io/autoupdate-spec` annotation parses as true (or, absent or
unparsable, while the object is at generation 1; the annotation is then written "true"/"false");
objects carrying the annotation as "true" whose names are no longer bootstrap ones are deleted.

Config consumer (field manager api-priority-and-fairness-config-consumer-v1): every FlowSchema
gets the condition `Dangling`: False/Found when its priority level exists, True/NotFound when not
(`This FlowSchema references the PriorityLevelConfiguration object named "x" and it exists` /
`... but there is no such object`), written only when status, reason or message change.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from minik3s.api import apf_bootstrap as boot
from minik3s.api.errors import AlreadyExistsError, ApiError, ConflictError, NotFoundError
from minik3s.api.resources import FLOWSCHEMAS, PRIORITYLEVELS, ResourceInfo
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory
from minik3s.client.interface import Client
from minik3s.controllers.common import meta
from minik3s.utils.clock import Clock, rfc3339

logger = logging.getLogger(__name__)

PRODUCER = "api-priority-and-fairness-config-producer-v1"
CONSUMER = "api-priority-and-fairness-config-consumer-v1"
ENSURE_PERIOD = 60.0


def _parse_bool(v: Any) -> bool | None:
    """strconv.ParseBool."""
    if not isinstance(v, str):
        return None
    if v in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if v in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


def _wanted(kind: str) -> tuple[ResourceInfo, dict[str, JsonDict], dict[str, JsonDict]]:
    if kind == "PriorityLevelConfiguration":
        return PRIORITYLEVELS, boot.MANDATORY_PRIORITY_LEVELS, boot.SUGGESTED_PRIORITY_LEVELS
    return FLOWSCHEMAS, boot.MANDATORY_FLOW_SCHEMAS, boot.SUGGESTED_FLOW_SCHEMAS


class ApfConfig:
    def __init__(self, client: Client, informers: SharedInformerFactory, *, clock: Clock | None = None) -> None:
        self.client = client
        self.clock = clock or Clock()
        self._fs = informers.informer(FLOWSCHEMAS)
        self._pl = informers.informer(PRIORITYLEVELS)
        self._changed = asyncio.Event()
        for inf in (self._fs, self._pl):
            inf.add_handler(on_add=lambda _o: self._changed.set(), on_update=lambda _o, _n: self._changed.set(),
                            on_delete=lambda _o: self._changed.set())

    # ---- the ensurer ------------------------------------------------------------------------------

    async def ensure(self) -> None:
        for kind in ("PriorityLevelConfiguration", "FlowSchema"):
            info, mandatory, suggested = _wanted(kind)
            for name, spec in suggested.items():
                await self._ensure_one(info, kind, name, spec, mandatory=False)
            for name, spec in mandatory.items():
                await self._ensure_one(info, kind, name, spec, mandatory=True)
        for kind in ("PriorityLevelConfiguration", "FlowSchema"):
            await self._remove_obsolete(kind)

    async def _ensure_one(self, info: ResourceInfo, kind: str, name: str, spec: JsonDict, *, mandatory: bool) -> None:
        try:
            cur = await self.client.get(info, name)
        except NotFoundError:
            try:
                await self.client.create(info, boot.bootstrap_object(kind, name, spec), field_manager=PRODUCER,
                                         read_only=True)
                logger.debug("Successfully created %s type=%s name=%s", kind, "mandatory" if mandatory else "suggested",
                            name)
            except AlreadyExistsError:
                pass
            return
        m = meta(cur)
        annotations = dict(m.get("annotations") or {})
        want_spec = boot.bootstrap_object(kind, name, spec)["spec"]
        if mandatory:
            auto = True
            if name == "exempt" and kind == "PriorityLevelConfiguration" and "exempt" in (cur.get("spec") or {}):
                want_spec = {**want_spec, "exempt": (cur.get("spec") or {})["exempt"]}
        else:
            parsed = _parse_bool(annotations.get(boot.AUTO_UPDATE_ANNOTATION))
            auto = parsed if parsed is not None else m.get("generation") == 1
        new_annotation = "true" if auto else "false"
        spec_drift = auto and cur.get("spec") != want_spec
        if not spec_drift and annotations.get(boot.AUTO_UPDATE_ANNOTATION) == new_annotation:
            return
        annotations[boot.AUTO_UPDATE_ANNOTATION] = new_annotation
        out = {**cur, "metadata": {**m, "annotations": annotations}}
        if spec_drift:
            out["spec"] = want_spec
        try:
            await self.client.update(info, out, field_manager=PRODUCER, read_only=True)
            logger.debug("Updated the %s type=%s name=%s", kind, "mandatory" if mandatory else "suggested", name)
        except (ConflictError, NotFoundError):
            pass  # the next round looks again

    async def _remove_obsolete(self, kind: str) -> None:
        info, mandatory, suggested = _wanted(kind)
        listed = (await self.client.list(info, read_only=True)).get("items") or []
        for obj in listed:
            m = meta(obj)
            name = str(m.get("name") or "")
            value = (m.get("annotations") or {}).get(boot.AUTO_UPDATE_ANNOTATION)
            if value is None or name in mandatory or name in suggested or _parse_bool(value) is not True:
                continue
            try:
                await self.client.delete(info, name)
                logger.info("Successfully deleted the %s name=%s", kind, name)
            except NotFoundError:
                pass

    async def run_ensurer(self) -> None:
        while True:
            try:
                await self.ensure()
            except ApiError as e:
                logger.info("APF bootstrap ensurer ran into error, will retry later error=%s", e)
            await self.clock.sleep(ENSURE_PERIOD)

    # ---- the config consumer: Dangling ------------------------------------------------------------

    async def sync_dangling(self) -> None:
        levels = {str(meta(o).get("name")) for o in self._pl.store.list()}
        for fs in self._fs.store.list():
            name = str(meta(fs).get("name"))
            pl = str(((fs.get("spec") or {}).get("priorityLevelConfiguration") or {}).get("name") or "")
            if pl in levels:
                want = ("False", "Found",
                        f'This FlowSchema references the PriorityLevelConfiguration object named "{pl}" and it exists')
            else:
                want = ("True", "NotFound", f'This FlowSchema references the PriorityLevelConfiguration object '
                                            f'named "{pl}" but there is no such object')
            cur = next((c for c in (fs.get("status") or {}).get("conditions") or ()
                        if isinstance(c, dict) and c.get("type") == "Dangling"), None)
            if cur is not None and (cur.get("status"), cur.get("reason"), cur.get("message")) == want:
                continue
            cond = {"type": "Dangling", "status": want[0], "lastTransitionTime": rfc3339(self.clock.now()),
                    "reason": want[1], "message": want[2]}
            try:
                await self.client.patch(FLOWSCHEMAS, name, {"status": {"conditions": [cond]}}, patch_type="strategic",
                                        subresource="status", field_manager=CONSUMER, read_only=True)
            except (NotFoundError, ConflictError):
                continue

    async def run_consumer(self) -> None:
        await self._fs.wait_for_sync()
        await self._pl.wait_for_sync()
        while True:
            self._changed.clear()
            try:
                await self.sync_dangling()
            except ApiError as e:
                logger.info("APF config controller: status not written error=%s", e)
            await self._changed.wait()

    async def run(self) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.run_ensurer(), name="apf-ensurer")
            tg.create_task(self.run_consumer(), name="apf-consumer")
