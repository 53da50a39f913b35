"""Host-name and address checks (layer L1, utils; stdlib only): what the server's configuration
and its certificates (minik3s.pki) accept as a bind address or a certificate name. Kept apart from
minik3s.pki so that parsing the configuration does not load cryptography.

Example: `is_loopback("[::1]")` -> True; `is_ip_or_dns_name("*.example.com")` -> True,
`is_ip_or_dns_name("Bad_Name")` -> False.
"""

from __future__ import annotations

import ipaddress
import re


def is_loopback(host: str) -> bool:
    """`127.0.0.1`, `::1`, `localhost`: addresses only this machine reaches."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def is_ip_or_dns_name(name: str) -> bool:
    """What a certificate SAN may be: an IP address, or a DNS name (RFC 1123 labels, case
    insensitive, at most 253 characters, a leading `*.` wildcard allowed)."""
    try:
        ipaddress.ip_address(name.strip("[]"))
        return True
    except ValueError:
        pass
    n = name.lower().removeprefix("*.")
    return 0 < len(n) <= 253 and all(_DNS_LABEL.fullmatch(label) for label in n.split("."))
