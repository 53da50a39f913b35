"""An HTTPS admission webhook server for tests (imports L1-L2 only): a throwaway CA and serving
certificate made with `cryptography`, a threaded server on 127.0.0.1 that records every
AdmissionReview it receives and answers through a function the test gives.

Why: a webhook test must exercise the API server's real client (TLS with `caBundle`, timeouts,
the JSON it sends), so the webhook side is a real HTTPS server too, as envtest users run one.

Data flow: API server -> POST https://127.0.0.1:<port><path> -> `WebhookServer.reviews`
(path, review) -> `answer(path, request)` -> AdmissionReview response with the request's uid.

    with WebhookServer(answer=lambda path, req: {"allowed": False, "status": {"message": "no"}}) as hook:
        config = {"clientConfig": {"url": hook.url("/validate"), "caBundle": hook.ca_bundle}, ...}
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import ssl
import tempfile
import threading
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from minik3s.api.types import JsonDict

# (path, AdmissionReview.request) -> the response's fields (allowed, status, patch, ...); a
# returned dict with "kind" is sent as the whole body instead (to test malformed answers)
Answer = Callable[[str, JsonDict], JsonDict]


def allow(_path: str, _request: JsonDict) -> JsonDict:
    return {"allowed": True}


def json_patch(ops: Sequence[JsonDict]) -> JsonDict:
    """A mutating answer applying `ops` (RFC 6902)."""
    return {"allowed": True, "patchType": "JSONPatch", "patch": base64.b64encode(orjson.dumps(list(ops))).decode()}


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def make_ca_and_cert(dns_names: Sequence[str] = ()) -> tuple[bytes, bytes, bytes]:
    """(CA certificate PEM, serving certificate PEM, serving key PEM) for 127.0.0.1, localhost
    and `dns_names`, valid for a day."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(_name("webhook-test-ca")).issuer_name(_name("webhook-test-ca"))
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    sans += [x509.DNSName(d) for d in dns_names]
    cert = (x509.CertificateBuilder().subject_name(_name("webhook")).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return (ca.public_bytes(serialization.Encoding.PEM), cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


class WebhookServer:
    """A running HTTPS webhook on 127.0.0.1 (`port`, or an ephemeral one). `hold` makes every call wait
    (up to 30 s, or until `stop`) before answering, to let a webhook time out."""

    def __init__(self, answer: Answer = allow, *, dns_names: Sequence[str] = (), port: int = 0) -> None:
        self.answer = answer
        self.hold = False
        self.reviews: list[tuple[str, JsonDict]] = []
        self.user_agents: list[str] = []  # the User-Agent of each call, in order
        self._lock = threading.Lock()
        self._released = threading.Event()
        ca, cert, key = make_ca_and_cert(dns_names)
        self.ca_pem = ca
        self.ca_bundle = base64.b64encode(ca).decode()
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "tls.crt").write_bytes(cert)
            (Path(d) / "tls.key").write_bytes(key)
            ctx.load_cert_chain(Path(d) / "tls.crt", Path(d) / "tls.key")
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
                return None

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                n = int(self.headers.get("Content-Length") or 0)
                review = orjson.loads(self.rfile.read(n))
                with server._lock:
                    server.reviews.append((self.path, review))
                    server.user_agents.append(self.headers.get("User-Agent") or "")
                if server.hold:
                    server._released.wait(30)
                req = review.get("request") or {}
                out = server.answer(self.path.split("?", 1)[0], req)
                if "kind" not in out:
                    out = {"apiVersion": review.get("apiVersion", "admission.k8s.io/v1"), "kind": "AdmissionReview",
                           "response": {"uid": req.get("uid"), **out}}
                data = orjson.dumps(out)
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    return  # the API server gave up (timeout)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._httpd.socket = ctx.wrap_socket(self._httpd.socket, server_side=True)
        self.port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="webhook-server", daemon=True)

    def url(self, path: str = "/") -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    def requests(self, path: str | None = None) -> list[JsonDict]:
        """The AdmissionReview requests received (at `path`, without the query)."""
        with self._lock:
            return [r.get("request") or {} for p, r in self.reviews if path is None or p.split("?", 1)[0] == path]

    def release(self) -> None:
        """Let held calls (and every later one) answer."""
        self._released.set()

    def start(self) -> WebhookServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._released.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(10)

    def __enter__(self) -> WebhookServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
