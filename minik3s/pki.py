"""The cluster's certificates and keys (layer L5, beside the composition root), as K3s keeps
them under `<data-dir>/server/tls/`.

On first start `ensure_pki` generates, and on later starts reuses:

    server/tls/server-ca.crt, server-ca.key         CA that signs the serving certificate
    server/tls/client-ca.crt, client-ca.key         CA that signs client certificates (verified
                                                    on every TLS connection that offers one)
    server/tls/serving-kube-apiserver.crt, .key     the API's serving certificate: SANs are the
                                                    bind address, localhost, 127.0.0.1, ::1,
                                                    the host name, kubernetes.default.svc...
                                                    and every --tls-san
    server/tls/client-admin.crt, .key               CN=system:admin, O=system:masters (K3s's
                                                    admin, written into the kubeconfig)
    server/tls/service.key                          RSA key that signs service-account tokens
    server/cred/admin-token.csv                     a static bearer token of system:admin, in
                                                    kube-apiserver's --token-auth-file format

K3s generates ECDSA P-256 certificates (CA ten years, leaves one year, renewed when fewer than 90
days are left) and an RSA 2048 service-account key; so does this module. The serving certificate
is regenerated whenever its SAN set differs from the wanted one (a new --tls-san), without
touching the CAs, so kubeconfigs written before keep working. Every file is written 0600 under
directories made 0700.

Data flow: `minik3s.server.start` -> `ensure_pki(config.data_dir, sans, clock)` -> `Pki` (paths +
PEM bytes) -> the ssl context of the listener, the kubeconfig's credentials and the apiserver's
authenticators.
"""

from __future__ import annotations

import csv
import io
import ipaddress
import logging
import os
import secrets
import socket
import ssl
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from minik3s.utils.clock import Clock
from minik3s.utils.net import is_ip_or_dns_name, is_loopback  # noqa: F401 - is_loopback: re-exported

logger = logging.getLogger(__name__)

CA_VALIDITY = timedelta(days=3650)
LEAF_VALIDITY = timedelta(days=365)
RENEW_BEFORE = timedelta(days=90)  # K3s rotates leaf certificates with fewer than 90 days left
ADMIN_USER = "system:admin"
ADMIN_GROUP = "system:masters"
# the in-cluster names of the API (kube-apiserver's and K3s's default SANs)
SERVICE_NAMES = ("kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local")
LOOPBACK_SANS = ("localhost", "127.0.0.1", "::1")

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def private_dir(path: Path) -> Path:
    """`path` (and missing parents) made with mode 0700; an existing directory is chmod-ed."""
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    os.chmod(path, PRIVATE_DIR)
    return path


def write_private(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically with mode 0600 from the first byte (never readable by
    others, whatever the umask)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
    try:
        os.fchmod(fd, PRIVATE_FILE)
        os.write(fd, data)
    finally:
        os.close(fd)
    tmp.replace(path)


def touch_private(path: Path) -> None:
    """Create `path` empty with mode 0600 if missing, else chmod it 0600 (SQLite then creates its
    -wal/-shm files with the database's own mode)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, PRIVATE_FILE)
    try:
        os.fchmod(fd, PRIVATE_FILE)
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class Pki:
    """Paths of the generated files (PEM), under `<data-dir>/server/`."""

    dir: Path
    server_ca_cert: Path
    server_ca_key: Path
    client_ca_cert: Path
    client_ca_key: Path
    serving_cert: Path
    serving_key: Path
    admin_cert: Path
    admin_key: Path
    service_key: Path
    admin_token_file: Path

    @classmethod
    def under(cls, data_dir: Path) -> Pki:
        tls = data_dir / "server" / "tls"
        return cls(dir=tls, server_ca_cert=tls / "server-ca.crt", server_ca_key=tls / "server-ca.key",
                   client_ca_cert=tls / "client-ca.crt", client_ca_key=tls / "client-ca.key",
                   serving_cert=tls / "serving-kube-apiserver.crt", serving_key=tls / "serving-kube-apiserver.key",
                   admin_cert=tls / "client-admin.crt", admin_key=tls / "client-admin.key",
                   service_key=tls / "service.key", admin_token_file=data_dir / "server" / "cred" / "admin-token.csv")

    def server_context(self) -> ssl.SSLContext:
        """The listener's context: the serving certificate; client certificates are optional and,
        when offered, must chain to the client CA (kube-apiserver's --client-ca-file)."""
        # a bare server context: only the client CA is trusted (create_default_context would add
        # the system's CAs, and any certificate they issued would name its own user)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(self.serving_cert, self.serving_key)
        ctx.load_verify_locations(cafile=str(self.client_ca_cert))
        ctx.verify_mode = ssl.CERT_OPTIONAL
        return ctx

    def admin_token(self) -> str:
        """The token of the generated admin token file."""
        row = next(csv.reader(io.StringIO(self.admin_token_file.read_text())))
        return row[0]


def wanted_sans(bind: str, extra: list[str] | tuple[str, ...] = (), *, hostname: str | None = None) -> list[str]:
    """The serving certificate's names, in order, without duplicates: the bind address (unless
    it is the wildcard), loopback, the host name, the in-cluster service names, then --tls-san."""
    names: list[str] = []
    host = hostname if hostname is not None else socket.gethostname()
    for n in (bind, *LOOPBACK_SANS, host, *SERVICE_NAMES, *extra):
        n = n.strip().strip("[]").lower()
        # a host name a certificate cannot carry (e.g. with '_') is left out, not fatal
        if not n or n in ("0.0.0.0", "::") or n in names or not is_ip_or_dns_name(n):
            continue
        names.append(n)
    return names


def _san_entries(names: list[str]) -> list[x509.GeneralName]:
    out: list[x509.GeneralName] = []
    for n in names:
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(n)))
        except ValueError:
            out.append(x509.DNSName(n))
    return out


def cert_sans(cert: x509.Certificate) -> set[str]:
    try:
        ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return set()
    return {str(v).lower() for v in ext.get_values_for_type(x509.DNSName)} | \
        {str(v) for v in ext.get_values_for_type(x509.IPAddress)}


def _name(cn: str, org: str | None = None) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    if org:
        attrs.insert(0, x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
    return x509.Name(attrs)


def _key_pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _load_pair(cert_path: Path, key_path: Path) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None:
    if not cert_path.is_file() or not key_path.is_file():
        return None
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise ValueError(f"{key_path}: not an ECDSA private key")
    return cert, key


def _make_ca(cn: str, now: datetime) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = _name(cn)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5)).not_valid_after(now + CA_VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    return cert, key


def issue(ca: tuple[x509.Certificate, ec.EllipticCurvePrivateKey], *, cn: str, orgs: tuple[str, ...] = (),
          sans: list[str] | None = None, now: datetime, client: bool) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A leaf certificate signed by `ca`: a client certificate (CN = user, one O per group, as
    kube-apiserver's x509 authenticator reads them) or a serving one with `sans`."""
    ca_cert, ca_key = ca
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([*(x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs),
                         x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    usage = ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH
    b = (x509.CertificateBuilder().subject_name(subject).issuer_name(ca_cert.subject).public_key(key.public_key())
         .serial_number(x509.random_serial_number())
         .not_valid_before(now - timedelta(minutes=5)).not_valid_after(now + LEAF_VALIDITY)
         .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
         .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=True,
                                      data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                      crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
         .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
         .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False))
    if sans:
        b = b.add_extension(x509.SubjectAlternativeName(_san_entries(sans)), critical=False)
    return b.sign(ca_key, hashes.SHA256()), key


def _write_pair(cert_path: Path, key_path: Path, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> None:
    write_private(key_path, _key_pem(key))
    write_private(cert_path, cert.public_bytes(serialization.Encoding.PEM))


def _fresh(cert: x509.Certificate, ca_cert: x509.Certificate, now: datetime) -> bool:
    return cert.issuer == ca_cert.subject and cert.not_valid_after_utc - RENEW_BEFORE > now


def _ensure_ca(cert_path: Path, key_path: Path, cn: str, now: datetime) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    pair = _load_pair(cert_path, key_path)
    if pair is not None:
        return pair
    logger.info("generating certificate authority cn=%s path=%s", cn, cert_path)
    pair = _make_ca(cn, now)
    _write_pair(cert_path, key_path, *pair)
    return pair


def loopback_tls_context(data_dir: Path, *, sans: list[str], clock: Clock | None = None) -> ssl.SSLContext:
    """The context of the plain-HTTP loopback listener's TLS side (apiserver.serving): the server
    CA and a serving certificate, made once per data dir as `ensure_pki` makes them (K3s' CA
    name), nothing else; no client certificates are asked for (the listener authenticates no
    one). A TLS client (a tool that reads the API server's certificate, such as kopf's webhook
    server guessing the cluster's flavour, or `curl -k https://...`) gets an answer instead of a
    handshake error."""
    now = (clock or Clock()).now()
    pki = Pki.under(data_dir)
    private_dir(data_dir)
    private_dir(pki.dir.parent)
    private_dir(pki.dir)
    server_ca = _ensure_ca(pki.server_ca_cert, pki.server_ca_key, f"k3s-server-ca@{int(now.timestamp())}", now)
    serving = _load_pair(pki.serving_cert, pki.serving_key)
    if serving is None or not {_canonical(n) for n in sans} <= cert_sans(serving[0]) or \
            not _fresh(serving[0], server_ca[0], now):
        _write_pair(pki.serving_cert, pki.serving_key,
                    *issue(server_ca, cn="kube-apiserver", sans=sans, now=now, client=False))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(pki.serving_cert, pki.serving_key)
    return ctx


def ensure_pki(data_dir: Path, *, sans: list[str], clock: Clock | None = None) -> Pki:
    """Generate what is missing (or stale) under `data_dir/server`, reuse the rest; returns the
    paths. The serving certificate is reissued when its SANs differ from `sans` or it expires
    within 90 days; the admin certificate when it expires within 90 days. Names like K3s's."""
    now = (clock or Clock()).now()
    pki = Pki.under(data_dir)
    private_dir(data_dir)
    private_dir(pki.dir.parent)
    private_dir(pki.dir)
    private_dir(pki.admin_token_file.parent)
    stamp = int(now.timestamp())
    server_ca = _ensure_ca(pki.server_ca_cert, pki.server_ca_key, f"k3s-server-ca@{stamp}", now)
    client_ca = _ensure_ca(pki.client_ca_cert, pki.client_ca_key, f"k3s-client-ca@{stamp}", now)
    serving = _load_pair(pki.serving_cert, pki.serving_key)
    if serving is None or cert_sans(serving[0]) != {_canonical(n) for n in sans} or \
            not _fresh(serving[0], server_ca[0], now):
        logger.info("issuing serving certificate sans=%s", ",".join(sans))
        _write_pair(pki.serving_cert, pki.serving_key,
                    *issue(server_ca, cn="kube-apiserver", sans=sans, now=now, client=False))
    admin = _load_pair(pki.admin_cert, pki.admin_key)
    if admin is None or not _fresh(admin[0], client_ca[0], now):
        _write_pair(pki.admin_cert, pki.admin_key,
                    *issue(client_ca, cn=ADMIN_USER, orgs=(ADMIN_GROUP,), now=now, client=True))
    if not pki.service_key.is_file():
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        write_private(pki.service_key, key.private_bytes(serialization.Encoding.PEM,
                                                         serialization.PrivateFormat.TraditionalOpenSSL,
                                                         serialization.NoEncryption()))
    if not pki.admin_token_file.is_file():
        # token,user,uid,"group1,group2" (kube-apiserver --token-auth-file)
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow([secrets.token_hex(32), ADMIN_USER, ADMIN_USER, ADMIN_GROUP])
        write_private(pki.admin_token_file, buf.getvalue().encode())
    for p in (pki.server_ca_cert, pki.server_ca_key, pki.client_ca_cert, pki.client_ca_key, pki.serving_cert,
              pki.serving_key, pki.admin_cert, pki.admin_key, pki.service_key, pki.admin_token_file):
        os.chmod(p, PRIVATE_FILE)  # files from an older run (or copied in) are made private too
    return pki


def _canonical(name: str) -> str:
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        return name.lower()


# -- kube-controller-manager's csrsigning: certificates for approved CSRs ----------------------

CLUSTER_SIGNING_DURATION = timedelta(days=365)  # --cluster-signing-duration's default (8760h)
SIGNING_BACKDATE = timedelta(minutes=5)  # authority.go's Backdate
# certificates.k8s.io/v1 KeyUsage -> (x509 KeyUsage attribute, or an ExtendedKeyUsage OID)
_KEY_USAGES = {
    "digital signature": "digital_signature", "content commitment": "content_commitment",
    "key encipherment": "key_encipherment", "key agreement": "key_agreement",
    "data encipherment": "data_encipherment", "cert sign": "key_cert_sign", "crl sign": "crl_sign",
}
_EXT_KEY_USAGES = {
    "server auth": ExtendedKeyUsageOID.SERVER_AUTH, "client auth": ExtendedKeyUsageOID.CLIENT_AUTH,
    "code signing": ExtendedKeyUsageOID.CODE_SIGNING, "email protection": ExtendedKeyUsageOID.EMAIL_PROTECTION,
    "timestamping": ExtendedKeyUsageOID.TIME_STAMPING, "ocsp signing": ExtendedKeyUsageOID.OCSP_SIGNING,
}


class CsrSigner:
    """A CA that signs certificate requests as kube-controller-manager's csrsigning controller
    does (signer/authority.go): the request's subject, SANs and public key, the key usages the
    CSR asked for, valid from 5 minutes ago for min(expirationSeconds, 1 year), never past the
    CA's own expiry. Used for kubernetes.io/kube-apiserver-client with the client CA, so the
    issued certificate authenticates to this server as CN / O (user / groups)."""

    def __init__(self, cert_path: Path, key_path: Path, *, duration: timedelta = CLUSTER_SIGNING_DURATION) -> None:
        pair = _load_pair(cert_path, key_path)
        if pair is None:
            raise FileNotFoundError(f"{cert_path}: no CA to sign with")
        self._ca, self._key = pair
        self._duration = duration

    def sign(self, request_pem: bytes, usages: list[str], expiration_seconds: int | None, now: datetime) -> bytes:
        """The PEM certificate for a CSR; ValueError when the request is not a valid,
        self-signed PKCS#10 request."""
        try:
            csr = x509.load_pem_x509_csr(request_pem)
        except ValueError as e:
            raise ValueError(f"unable to parse csr: {e}") from None
        if not csr.is_signature_valid:
            raise ValueError("the certificate request's signature is invalid")
        duration = self._duration
        if expiration_seconds is not None:
            duration = min(duration, timedelta(seconds=max(expiration_seconds, 600)))
        not_before = now - SIGNING_BACKDATE
        not_after = min(now + duration, self._ca.not_valid_after_utc)
        flags = {attr: False for attr in _KEY_USAGES.values()}
        for u in usages:
            if u in _KEY_USAGES:
                flags[_KEY_USAGES[u]] = True
        ext = [_EXT_KEY_USAGES[u] for u in usages if u in _EXT_KEY_USAGES]
        b = (x509.CertificateBuilder().subject_name(csr.subject).issuer_name(self._ca.subject)
             .public_key(csr.public_key()).serial_number(x509.random_serial_number())
             .not_valid_before(not_before).not_valid_after(not_after)
             .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
             .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()),
                            critical=False))
        if any(flags.values()):
            b = b.add_extension(x509.KeyUsage(encipher_only=False, decipher_only=False, **flags), critical=True)
        if ext:
            b = b.add_extension(x509.ExtendedKeyUsage(ext), critical=False)
        try:
            sans = csr.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
            b = b.add_extension(sans, critical=False)
        except x509.ExtensionNotFound:
            pass
        return b.sign(self._key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)
