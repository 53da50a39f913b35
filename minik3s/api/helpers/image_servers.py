"""What well-known images serve on their ports (layer L2), for `pods/portforward` into simulated
containers: no program runs, so a connection to a port reaches a simulated server only where
the image's server is well known, and is refused otherwise.

Served: the nginx image (`nginx`, any tag or registry) listens on port 80 and serves its
document root, `/usr/share/nginx/html`, from the container's simulated files (its default
`index.html` and `50x.html`, what volume mounts put there, what execs wrote: `kubectl exec web
-- sh -c 'echo hi > /usr/share/nginx/html/hi.txt'` then `curl localhost:8080/hi.txt` through
`kubectl port-forward`), as nginx's default server does: GET and HEAD, `index.html` for a
directory, 404 otherwise, keep-alive unless the client asks to close.

Data flow: exec_stream.serve_portforward -> `listener(image, port)` -> the server coroutine
reads the forwarded bytes (`read()`, b"" when the client's side is gone) and writes its answer
(`write(bytes)`); it returns when the connection ends.
"""

from __future__ import annotations

import email.utils
import hashlib
import posixpath
from collections.abc import Awaitable, Callable, Mapping
from urllib.parse import unquote, urlsplit

NGINX_VERSION = "1.27.5"
NGINX_ROOT = "/usr/share/nginx/html"
# the image's own files at its document root (this project's page, in the shape of nginx's)
NGINX_FILES: dict[str, bytes] = {
    f"{NGINX_ROOT}/index.html": (
        b"<!DOCTYPE html>\n<html>\n<head>\n<title>Welcome to nginx!</title>\n</head>\n<body>\n"
        b"<h1>Welcome to nginx!</h1>\n<p>The default page of the nginx image, served by a simulated "
        b"container of minik3s.</p>\n</body>\n</html>\n"),
    f"{NGINX_ROOT}/50x.html": (
        b"<!DOCTYPE html>\n<html>\n<head>\n<title>Error</title>\n</head>\n<body>\n"
        b"<h1>An error occurred.</h1>\n</body>\n</html>\n"),
}
_TYPES = {".html": "text/html", ".htm": "text/html", ".css": "text/css", ".txt": "text/plain",
          ".js": "application/javascript", ".json": "application/json", ".png": "image/png",
          ".jpg": "image/jpeg", ".gif": "image/gif", ".svg": "image/svg+xml", ".xml": "text/xml"}
_MAX_HEADER = 64 * 1024

Read = Callable[[], Awaitable[bytes]]
Write = Callable[[bytes], Awaitable[None]]
Server = Callable[[Read, Write, Mapping[str, bytes], Callable[[], float]], Awaitable[None]]


def _http_date(t: float) -> str:
    return email.utils.formatdate(t, usegmt=True)


def _error_page(code: int, reason: str) -> bytes:
    return (f"<html>\r\n<head><title>{code} {reason}</title></head>\r\n<body>\r\n<center><h1>{code} {reason}"
            f"</h1></center>\r\n<hr><center>nginx/{NGINX_VERSION}</center>\r\n</body>\r\n</html>\r\n").encode()


def _response(code: int, reason: str, body: bytes, now: float, *, ctype: str = "text/html", keep: bool,
              head: bool, extra: list[tuple[str, str]] | None = None) -> bytes:
    headers = [("Server", f"nginx/{NGINX_VERSION}"), ("Date", _http_date(now)), ("Content-Type", ctype),
               ("Content-Length", str(len(body))), *(extra or []),
               ("Connection", "keep-alive" if keep else "close")]
    if extra and any(k == "ETag" for k, _ in extra):  # nginx lists these after Connection
        tail = [h for h in headers if h[0] in ("ETag", "Accept-Ranges")]
        headers = [h for h in headers if h[0] not in ("ETag", "Accept-Ranges")] + tail
    head_bytes = f"HTTP/1.1 {code} {reason}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n"
    return head_bytes.encode() + (b"" if head else body)


def _lookup(files: Mapping[str, bytes], target: str) -> tuple[str, bytes] | None:
    path = posixpath.normpath(NGINX_ROOT + "/" + unquote(urlsplit(target).path).lstrip("/"))
    if not (path == NGINX_ROOT or path.startswith(NGINX_ROOT + "/")):
        return None
    if path in files:
        return path, files[path]
    index = path.rstrip("/") + "/index.html"
    if index in files:
        return index, files[index]
    return None


async def nginx(read: Read, write: Write, files: Mapping[str, bytes], now: Callable[[], float]) -> None:
    """nginx's default server on port 80: static files from the document root."""
    buf = b""
    while True:
        while b"\r\n\r\n" not in buf:
            if len(buf) > _MAX_HEADER:
                await write(_response(400, "Bad Request", _error_page(400, "Bad Request"), now(), keep=False,
                                      head=False))
                return
            chunk = await read()
            if not chunk:
                return
            buf += chunk
        raw, _, buf = buf.partition(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            await write(_response(400, "Bad Request", _error_page(400, "Bad Request"), now(), keep=False,
                                  head=False))
            return
        method, target, version = parts
        length = int(headers.get("content-length", "0") or 0) if headers.get("content-length", "").isdigit() else 0
        while len(buf) < length:  # a body nginx reads and ignores
            chunk = await read()
            if not chunk:
                return
            buf += chunk
        buf = buf[length:]
        conn = headers.get("connection", "").lower()
        keep = (version == "HTTP/1.1" and conn != "close") or (version == "HTTP/1.0" and conn == "keep-alive")
        t = now()
        if method not in ("GET", "HEAD"):
            await write(_response(405, "Not Allowed", _error_page(405, "Not Allowed"), t, keep=keep, head=False))
        else:
            found = _lookup(files, target)
            if found is None:
                await write(_response(404, "Not Found", _error_page(404, "Not Found"), t, keep=keep,
                                      head=method == "HEAD"))
            else:
                path, body = found
                etag = '"' + hashlib.sha1(body).hexdigest()[:8] + "-" + format(len(body), "x") + '"'
                ctype = _TYPES.get(posixpath.splitext(path)[1].lower(), "application/octet-stream")
                await write(_response(200, "OK", body, t, ctype=ctype, keep=keep, head=method == "HEAD",
                                      extra=[("Last-Modified", _http_date(t)), ("ETag", etag),
                                             ("Accept-Ranges", "bytes")]))
        if not keep:
            return


# image repository -> {port: server}
_SERVERS: dict[str, dict[int, Server]] = {"nginx": {80: nginx}}
# image repository -> the files the image itself ships (beside the standard root)
IMAGE_FILES: dict[str, dict[str, bytes]] = {"nginx": NGINX_FILES}


# image repository -> where its server's configuration lives (a mount there may change its ports)
SERVER_CONFIG: dict[str, str] = {"nginx": "/etc/nginx"}
# image repository -> the directory its HTTP server serves
DOCUMENT_ROOTS: dict[str, str] = {"nginx": NGINX_ROOT}


def listener(repository: str, port: int) -> Server | None:
    """The simulated server the image runs on `port`, or None: nothing listens there."""
    return _SERVERS.get(repository, {}).get(port)


def known_server(container: Mapping[str, object], repository: str) -> bool:
    """Whether what `container` listens on is known: an image whose server is simulated, run
    with its own entrypoint (no command or args) and without a mount over its configuration."""
    if repository not in _SERVERS or container.get("command") or container.get("args"):
        return False
    config = SERVER_CONFIG.get(repository, "")
    mounts = container.get("volumeMounts")
    for m in mounts if isinstance(mounts, list) else ():
        if not isinstance(m, dict):
            continue
        path = "/" + str(m.get("mountPath") or "").strip("/")
        if path == "/" or path == config or config.startswith(path + "/") or path.startswith(config + "/"):
            return False
    return True
