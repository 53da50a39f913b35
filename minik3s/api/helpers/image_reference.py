"""Whether a container image can be used (layer L2): the image reference grammar the kubelet
parses every image with, and what the simulated registries hold.

Why: the simulated kubelet (kubelet_sim.stages.image_pull) must refuse what a real node refuses,
with the same texts, so `kubectl get pods` shows `InvalidImageName` or `ImagePullBackOff` where
a real cluster does.

1. **The reference** (`reference_error`): kubelet's applyDefaultImageTag parses the image with
   distribution/reference's ParseNormalizedNamed. The grammar:

       reference  := name [ ":" tag ] [ "@" digest ]
       name       := [ domain "/" ] component ( "/" component )*     (at most 255 characters)
       domain     := host [ ":" port ]      host: DNS labels of [A-Za-z0-9-] joined by ".", or [IPv6]
       component  := [a-z0-9]+ ( ( "." | "_" | "__" | "-"+ ) [a-z0-9]+ )*
       tag        := [A-Za-z0-9_] [A-Za-z0-9_.-]{0,127}
       digest     := algorithm ":" hex{32,}    (sha256: 64 hex, sha384: 96, sha512: 128)

   The first component is a domain only when it has a "." or ":", is `localhost`, or has an
   upper-case letter; otherwise the name is Docker Hub's (`docker.io`, plus `library/` for a
   single component). A repository with upper-case letters is refused before the grammar is
   tried. Examples: `Nginx:1` -> `couldn't parse image name "Nginx:1": invalid reference format:
   repository name (library/Nginx) must be lowercase`; `nginx:` -> `... invalid reference format`.

2. **The registries** (`registry_error`): no registry is reached (tests and users stay on
   loopback), so only what is certain without one fails to pull:
   - a registry host under a top-level domain reserved never to resolve (RFC 2606 / RFC 6761:
     `.invalid`, `.test`, `.example`): containerd cannot resolve the host;
   - a misspelt official image: a name in Docker Hub's official namespace (`docker.io/library/
     NAME`) that is no official image but one or two edits (insertions, deletions, changes,
     swaps of neighbours; one for names of five letters or fewer, none under four) from one:
     `nginxx`, `ngnix`, `busyboxx`, `postgress`, `reddis`. Hub answers "repository does not
     exist" (the list: OFFICIAL_IMAGES, current and retired official images).
   Every other image (any tag of an official image, any other name, namespace or registry) is
   pulled: a simulated node can get the images its users name, as a node they loaded their own
   images into (`myapp:dev`, `controller:latest`) can.
   The texts are containerd's as the kubelet reports them (the gRPC "Unknown" wrapper stripped).
"""

from __future__ import annotations

import functools
import re

from minik3s.api.errors import go_quote
from minik3s.api.helpers.images import normalize_image
from minik3s.api.helpers.official_images import OFFICIAL_IMAGES

_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|[-]+)"
_COMPONENT = rf"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_HOST = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])"
_DOMAIN = rf"{_HOST}(?::[0-9]+)?"
_NAME = rf"(?:{_DOMAIN}/)?{_COMPONENT}(?:/{_COMPONENT})*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_REFERENCE = re.compile(rf"^({_NAME})(?::({_TAG}))?(?:@({_DIGEST}))?$", re.ASCII)
_HEX64 = re.compile(r"^[a-f0-9]{64}$")
_DIGEST_LENGTHS = {"sha256": 64, "sha384": 96, "sha512": 128}
NAME_MAX = 255
DEFAULT_DOMAIN = "docker.io"
# top-level domains that never resolve (RFC 2606, RFC 6761)
RESERVED_TLDS = ("invalid", "test", "example")


def _split_docker_domain(name: str) -> tuple[str, str]:
    slash = name.find("/")
    first = name[:slash]
    if slash == -1 or (not any(ch in first for ch in ".:") and first != "localhost" and first.lower() == first):
        domain, remainder = DEFAULT_DOMAIN, name
    else:
        domain, remainder = first, name[slash + 1:]
    if domain == "index.docker.io":
        domain = DEFAULT_DOMAIN
    if domain == DEFAULT_DOMAIN and "/" not in remainder:
        remainder = "library/" + remainder
    return domain, remainder


def _parse_error(ref: str) -> str | None:
    """distribution/reference's Parse: its error text, or None."""
    match = _REFERENCE.match(ref)
    if match is None:
        if not ref:
            return "repository name must have at least one component"
        if _REFERENCE.match(ref.lower()) is not None:
            return "repository name must be lowercase"
        return "invalid reference format"
    if len(match.group(1)) > NAME_MAX:
        return f"repository name must not be more than {NAME_MAX} characters"
    digest = match.group(3)
    if digest:
        algorithm, _, encoded = digest.partition(":")
        want = _DIGEST_LENGTHS.get(algorithm)
        if want is None:
            return "unsupported digest algorithm"
        if len(encoded) != want:
            return "invalid checksum digest length"
        if encoded != encoded.lower():
            return "invalid checksum digest format"
    return None


@functools.lru_cache(maxsize=1024)
def reference_error(image: str) -> str | None:
    """Why the kubelet cannot parse `image` (`couldn't parse image name "X": ...`), or None.
    Memoised: a simulated kubelet asks on every sync, and a cluster runs few distinct images."""
    if _HEX64.match(image):
        err = f"invalid repository name ({image}), cannot specify 64-byte hexadecimal strings"
    else:
        domain, remainder = _split_docker_domain(image)
        colon = remainder.find(":")
        remote = remainder[:colon] if colon > -1 else remainder
        if remote.lower() != remote:
            err = f"invalid reference format: repository name ({remote}) must be lowercase"
        else:
            err = _parse_error(f"{domain}/{remainder}") or ""
    return f"couldn't parse image name {go_quote(image)}: {err}" if err else None


@functools.lru_cache(maxsize=1024)
def registry_error(image: str) -> str | None:
    """containerd's error pulling `image` (a valid reference) from the simulated registries, or
    None when the pull succeeds (see the module docstring)."""
    ref = normalize_image(image)  # always with a tag or a digest
    repository, _, digest = ref.partition("@")
    slash, colon = repository.rfind("/"), repository.rfind(":")
    tag = repository[colon + 1:] if colon > slash else ""
    repository = repository[:colon] if colon > slash else repository
    version = digest or tag
    domain, _, path = repository.partition("/")
    host = domain if domain.startswith("[") else domain.rsplit(":", 1)[0]
    if host.lower().rsplit(".", 1)[-1] in RESERVED_TLDS:
        return (f"failed to pull and unpack image {go_quote(ref)}: failed to resolve reference {go_quote(ref)}: "
                f'failed to do request: Head "https://{domain}/v2/{path}/manifests/{version}": '
                f"dial tcp: lookup {host}: no such host")
    if domain == DEFAULT_DOMAIN and path.startswith("library/"):
        if misspelt_official(path[len("library/"):]):
            return (f"failed to pull and unpack image {go_quote(ref)}: failed to resolve reference "
                    f"{go_quote(ref)}: pull access denied, repository does not exist or may require "
                    "authorization: server message: insufficient_scope: authorization failed")
    return None


def misspelt_official(name: str) -> bool:
    """Whether `name` is no official image but within reach of a typo of one (see the module
    docstring): `nginxx` -> True, `nginx` -> False, `myapp` -> False."""
    if len(name) < 4 or name in OFFICIAL_IMAGES:
        return False
    limit = 1 if len(name) <= 5 else 2
    return any(abs(len(name) - len(official)) <= limit and _edit_distance(name, official, limit) <= limit
               for official in OFFICIAL_IMAGES)


def _edit_distance(a: str, b: str, limit: int) -> int:
    """Optimal string alignment distance (Levenshtein plus swaps of neighbours), cut off above
    `limit` (returns limit + 1 once every alignment costs more)."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]
