"""A kubernetes.io/tls Secret's key pair checked as kube-apiserver checks it (layer L4).

Why: upstream's Secret strategy (pkg/registry/core/secret, warningsForSecret) runs Go's
`tls.X509KeyPair(data["tls.crt"], data["tls.key"])` on every create and update of a TLS Secret and
returns its error text as a warning (the Secret is stored anyway). `x509_key_pair_error` gives the
same texts: PEM blocks found as Go's `encoding/pem` finds them, the first CERTIFICATE block parsed,
the first block whose type ends in "PRIVATE KEY" parsed as PKCS#1, PKCS#8 or SEC 1, and the two
public keys compared.

Where a message comes from Go's x509 parser its text is not reproduced in detail: a certificate
that does not parse reports "x509: malformed certificate" (the parser's most common answer).
"""

from __future__ import annotations

import base64
import binascii
import re

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa, x25519
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat, load_der_private_key

from minik3s.api.types import JsonDict

from .base import as_dict

TLS_TYPE = "kubernetes.io/tls"
TLS_CERT_KEY = "tls.crt"
TLS_PRIVATE_KEY_KEY = "tls.key"

_BEGIN = re.compile(rb"(?:\A|\n)-----BEGIN ([^\n]*?)-----[ \t\r]*\n")
_WS = re.compile(rb"[ \t\r\n]")


def pem_blocks(data: bytes) -> list[tuple[str, bytes]]:
    """(type, DER) of each PEM block `pem.Decode` would return, in order; blocks whose END line
    is missing or whose body is not base64 are skipped, as Go skips them."""
    out: list[tuple[str, bytes]] = []
    pos = 0
    while (m := _BEGIN.search(data, pos)) is not None:
        kind = m.group(1)
        end = data.find(b"-----END " + kind + b"-----", m.end() - 1)
        if end < 0 or data[end - 1:end] != b"\n":
            pos = m.end() - 1
            continue
        body = _WS.sub(b"", data[m.end():end])
        try:
            der = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            pos = m.end() - 1
            continue
        out.append((kind.decode("latin-1"), der))
        pos = end
    return out


def _certificate_der(cert_pem: bytes) -> tuple[bytes | None, str | None]:
    certs: list[bytes] = []
    skipped: list[str] = []
    for kind, der in pem_blocks(cert_pem):
        if kind == "CERTIFICATE":
            certs.append(der)
        else:
            skipped.append(kind)
    if certs:
        return certs[0], None
    if not skipped:
        return None, "tls: failed to find any PEM data in certificate input"
    if len(skipped) == 1 and skipped[0].endswith("PRIVATE KEY"):
        return None, ("tls: failed to find certificate PEM data in certificate input, but did find a private key; "
                      "PEM inputs may have been switched")
    return None, ('tls: failed to find "CERTIFICATE" PEM block in certificate input after skipping PEM blocks of '
                  f"the following types: [{' '.join(skipped)}]")


def _key_der(key_pem: bytes) -> tuple[bytes | None, str | None]:
    skipped: list[str] = []
    for kind, der in pem_blocks(key_pem):
        if kind == "PRIVATE KEY" or kind.endswith(" PRIVATE KEY"):
            return der, None
        skipped.append(kind)
    if not skipped:
        return None, "tls: failed to find any PEM data in key input"
    if skipped == ["CERTIFICATE"]:
        return None, "tls: found a certificate rather than a key in the PEM for the private key"
    return None, ('tls: failed to find PEM block with type ending in "PRIVATE KEY" in key input after skipping PEM '
                  f"blocks of the following types: [{' '.join(skipped)}]")


def _private_key(der: bytes) -> tuple[object | None, str | None]:
    """parsePrivateKey: PKCS#1, PKCS#8 or SEC 1; RSA, ECDSA or Ed25519 keys only."""
    try:
        key = load_der_private_key(der, password=None)
    except (ValueError, TypeError):
        return None, "tls: failed to parse private key"
    if isinstance(key, (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey, ed25519.Ed25519PrivateKey)):
        return key, None
    if isinstance(key, x25519.X25519PrivateKey):
        return None, "tls: found unknown private key type in PKCS#8 wrapping"
    return None, "tls: failed to parse private key"


def _keys_match(pub: object, priv: object) -> str | None:
    if isinstance(pub, rsa.RSAPublicKey):
        if not isinstance(priv, rsa.RSAPrivateKey):
            return "tls: private key type does not match public key type"
        return None if pub.public_numbers().n == priv.public_key().public_numbers().n else \
            "tls: private key does not match public key"
    if isinstance(pub, ec.EllipticCurvePublicKey):
        if not isinstance(priv, ec.EllipticCurvePrivateKey):
            return "tls: private key type does not match public key type"
        a, b = pub.public_numbers(), priv.public_key().public_numbers()
        return None if (a.x, a.y) == (b.x, b.y) else "tls: private key does not match public key"
    if isinstance(pub, ed25519.Ed25519PublicKey):
        if not isinstance(priv, ed25519.Ed25519PrivateKey):
            return "tls: private key type does not match public key type"
        raw = (Encoding.Raw, PublicFormat.Raw)
        return None if pub.public_bytes(*raw) == priv.public_key().public_bytes(*raw) else \
            "tls: private key does not match public key"
    return "tls: unknown public key algorithm"


def x509_key_pair_error(cert_pem: bytes, key_pem: bytes) -> str | None:
    """The error Go's tls.X509KeyPair returns for these inputs, or None when they pair up."""
    cert_der, err = _certificate_der(cert_pem)
    if cert_der is None:
        return err
    key_der, err = _key_der(key_pem)
    if key_der is None:
        return err
    try:
        public = x509.load_der_x509_certificate(cert_der).public_key()
    except ValueError:
        return "x509: malformed certificate"
    private, err = _private_key(key_der)
    if private is None:
        return err
    return _keys_match(public, private)


def _decoded(data: JsonDict, key: str) -> bytes:
    value = data.get(key)
    if not isinstance(value, str):
        return b""
    try:
        return base64.b64decode(value, validate=False)
    except (binascii.Error, ValueError):
        return b""


def warnings_for_secret(secret: JsonDict) -> list[str]:
    """warningsForSecret: a TLS Secret whose tls.crt and tls.key do not form a key pair."""
    if secret.get("type") != TLS_TYPE:
        return []
    data = as_dict(secret.get("data"))
    err = x509_key_pair_error(_decoded(data, TLS_CERT_KEY), _decoded(data, TLS_PRIVATE_KEY_KEY))
    return [err] if err else []
