"""A tiny admission webhook for a minik3s (or any Kubernetes) API server on this machine.

    python examples/webhooks/webhook.py --port 9443 --config-out /tmp/webhooks.yaml
    kubectl apply -f /tmp/webhooks.yaml
    kubectl create namespace demo && kubectl label namespace demo webhook-example=enabled
    kubectl run web -n demo --image nginx          # denied: no pinned tag
    kubectl run web -n demo --image nginx:1.27     # admitted, labelled by the mutating webhook

It serves HTTPS on 127.0.0.1 with a throwaway CA made at start (minik3s.testing.webhook_server)
and writes webhooks.yaml with that CA as `caBundle` and its port in the URLs:
- POST /validate (ValidatingWebhookConfiguration): refuses pods whose containers use an image
  without a tag or with `:latest`, with a 403 Status the API server passes on.
- POST /mutate (MutatingWebhookConfiguration): adds the label `example.com/admitted-by: webhook`
  with a JSON patch.
"""

from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path
from typing import Any

from minik3s.testing.webhook_server import WebhookServer, json_patch

HERE = Path(__file__).resolve().parent
LABEL = "example.com/admitted-by"


def _unpinned(image: str) -> bool:
    name = image.rsplit("/", 1)[-1]
    if "@" in name:
        return False
    return ":" not in name or name.endswith(":latest")


def answer(path: str, request: dict[str, Any]) -> dict[str, Any]:
    """The AdmissionResponse fields for one AdmissionReview request."""
    pod = request.get("object") or {}
    if path == "/validate":
        spec = pod.get("spec") or {}
        for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
            if _unpinned(str(c.get("image") or "")):
                return {"allowed": False, "status": {
                    "code": 403, "reason": "Forbidden",
                    "message": f'container "{c.get("name")}" uses image "{c.get("image")}" without a pinned tag'}}
        return {"allowed": True}
    if path == "/mutate":
        if (pod.get("metadata") or {}).get("labels") is None:
            return json_patch([{"op": "add", "path": "/metadata/labels", "value": {LABEL: "webhook"}}])
        return json_patch([{"op": "add", "path": "/metadata/labels/" + LABEL.replace("/", "~1"), "value": "webhook"}])
    return {"allowed": False, "status": {"code": 404, "message": f"no webhook at {path}"}}


def manifest(server: WebhookServer) -> str:
    """webhooks.yaml with this server's CA bundle and port."""
    text = (HERE / "webhooks.yaml").read_text()
    return text.replace("${CA_BUNDLE}", server.ca_bundle).replace("127.0.0.1:9443", f"127.0.0.1:{server.port}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=9443)
    ap.add_argument("--config-out", type=Path, default=Path("webhooks.yaml"))
    args = ap.parse_args()
    server = WebhookServer(answer, port=args.port)
    args.config_out.write_text(manifest(server))
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with server:
        print(f"serving https://127.0.0.1:{server.port}; configuration written to {args.config_out}", flush=True)
        stop.wait()


if __name__ == "__main__":
    main()
