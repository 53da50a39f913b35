"""CSR signing controller (layer L4): kube-controller-manager's csrsigning for the
`kubernetes.io/kube-apiserver-client` signer (pkg/controller/certificates/signer).

Why: the usual way to give a person access to a cluster is a CertificateSigningRequest: they
POST a PKCS#10 request, an admin runs `kubectl certificate approve`, and the issued certificate
(`status.certificate`) authenticates them as the request's CN (user) and O values (groups).
This controller issues those certificates; the server's CA signs them (`minik3s.pki.CsrSigner`,
injected by the composition root: a server without TLS has no CA and runs no signer).

Rules, as upstream's signer.handle: only approved requests (condition Approved=True), never a
Failed one or one already issued, and only for the signers it holds; the requested usages must
include "client auth" and nothing else but "digital signature" / "key encipherment", else the
request gets condition Failed reason SignerValidationFailure ("missing required usage for
client certificate: client auth"); a request that does not parse is logged and left alone.
Example: CN=alice, O=devs, usages [client auth], approved -> status.certificate = PEM, valid
for min(expirationSeconds, 1 year).

Data flow: CSR informer (add / update) -> work queue of names -> `sync` -> PUT .../status.
"""

from __future__ import annotations

import base64
import binascii
import copy
import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Protocol

from minik3s.api.resources import CERTIFICATESIGNINGREQUESTS
from minik3s.api.types import JsonDict
from minik3s.client.informer import SharedInformerFactory
from minik3s.client.interface import Client
from minik3s.client.workqueue import WorkQueue
from minik3s.controllers.common import meta, run_workers
from minik3s.utils.clock import Clock, rfc3339

logger = logging.getLogger(__name__)

KUBE_APISERVER_CLIENT = "kubernetes.io/kube-apiserver-client"
OPTIONAL_CLIENT_USAGES = ("digital signature", "key encipherment")


class Signer(Protocol):
    def sign(self, request_pem: bytes, usages: list[str], expiration_seconds: int | None,
             now: datetime) -> bytes: ...


def client_usages_error(usages: list[str]) -> str | None:
    """validAPIServerClientUsages: "client auth" required, the two optional usages allowed."""
    has_client_auth = False
    for u in usages:
        if u == "client auth":
            has_client_auth = True
        elif u not in OPTIONAL_CLIENT_USAGES:
            return f"invalid usage for client certificate: {u}"
    return None if has_client_auth else "missing required usage for client certificate: client auth"


def _condition_true(csr: JsonDict, ctype: str) -> bool:
    return any(c.get("type") == ctype and c.get("status") == "True"
               for c in (csr.get("status") or {}).get("conditions") or ())


class CSRSigningController:
    NAME = "csrsigning"

    def __init__(self, client: Client, informers: SharedInformerFactory, *, signers: Mapping[str, Signer],
                 clock: Clock | None = None) -> None:
        self._client = client
        self._signers = dict(signers)
        self._clock = clock or Clock()
        self._csrs = informers.informer(CERTIFICATESIGNINGREQUESTS)
        self.queue = WorkQueue()
        self._csrs.add_handler(on_add=self._enqueue, on_update=lambda _old, new: self._enqueue(new))

    def _enqueue(self, csr: JsonDict) -> None:
        self.queue.add(meta(csr).get("name") or "")

    async def sync(self, name: str) -> None:
        csr = self._csrs.store.get(name)
        if csr is None or not _condition_true(csr, "Approved") or _condition_true(csr, "Failed"):
            return
        spec, status = csr.get("spec") or {}, csr.get("status") or {}
        signer = self._signers.get(str(spec.get("signerName") or ""))
        if signer is None or status.get("certificate"):
            return
        usages = [str(u) for u in spec.get("usages") or ()]
        body = copy.deepcopy(csr)
        body_status = body.setdefault("status", {})
        problem = client_usages_error(usages)
        if problem is not None:
            body_status.setdefault("conditions", []).append({
                "type": "Failed", "status": "True", "reason": "SignerValidationFailure", "message": problem,
                "lastUpdateTime": rfc3339(self._clock.now())})
            await self._client.update_status(CERTIFICATESIGNINGREQUESTS, body)
            return
        try:
            request = base64.b64decode(str(spec.get("request") or ""), validate=True)
            expiration = spec.get("expirationSeconds")
            cert = signer.sign(request, usages, expiration if isinstance(expiration, int) else None,
                               self._clock.now())
        except (ValueError, binascii.Error) as e:
            logger.warning("%s: unable to sign csr=%s error=%s", self.NAME, name, e)
            return
        body_status["certificate"] = base64.b64encode(cert).decode()
        await self._client.update_status(CERTIFICATESIGNINGREQUESTS, body)
        logger.info("%s: issued a certificate csr=%s signer=%s", self.NAME, name, spec.get("signerName"))

    async def run(self, workers: int = 1) -> None:
        await self._csrs.wait_for_sync()
        logger.info("%s: caches synced", self.NAME)
        await run_workers(self.queue, self.sync, workers=workers, name=self.NAME)
