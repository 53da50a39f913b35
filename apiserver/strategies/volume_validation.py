"""Volume source validation and defaulting for pods, pod templates and PersistentVolumes (layer L4).

Why: kube-apiserver validates every field of a volume's source (pkg/apis/core/validation
ValidateVolumes / validateVolumeSource and the validateXxxVolumeSource functions it calls; the
PersistentVolume variants ValidatePersistentVolumeSpec calls) and defaults some of them
(pkg/apis/core/v1 SetDefaults_Volume and friends). A Volume keeps each source as a plain dict
(minik3s.api.core.Volume), so the rules run on the dicts; messages, field paths and error order
are upstream's, quirks included (`persistentDisk` for gcePersistentDisk, `downwarAPI` and
`cephFS` in the "more than 1 volume type" errors, a downward API item's errors at the source's
path without the item index, a projected token's path errors at `projected.path`).

Gates as v1.33 serves by default: VolumeAttributesClass is off (an ephemeral volume's
volumeAttributesClassName is not validated); the image source and the clusterTrustBundle
projection are validated when present (their gates decide elsewhere whether they are kept).

Data flow: podspec.default_pod_spec -> `default_volumes`; podspec._validate_volumes ->
`validate_volumes` -> `validate_volume_source` -> one validator per source. PersistentVolumes:
`default_persistent_volume_source` and `validate_persistent_volume_source` (for the storage
strategy). The downward API selectors here also serve env vars (`object_field_selector`,
`resource_field_selector`).

Example: `validate_volumes([{"name": "v", "nfs": {}}], "spec.volumes")[0]` ->
`[required("spec.volumes[0].nfs.server"), required("spec.volumes[0].nfs.path"),
invalid("spec.volumes[0].nfs.path", "", "must be an absolute path")]`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from minik3s.api.errors import cause
from minik3s.api.helpers.pods import default_pull_policy
from minik3s.api.quantity import QuantityError, canonical_or_text, parse_quantity
from minik3s.api.types import JsonDict
from minik3s.api.validation import (
    duplicate,
    forbidden,
    go_value,
    invalid,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    not_supported,
    required,
    too_long,
    type_invalid,
    validate_annotations,
    validate_label_selector,
    validate_labels,
)

__all__ = [
    "VOLUME_SOURCES",
    "default_persistent_volume_source",
    "default_volumes",
    "has_non_local_projected_token_path",
    "object_field_selector",
    "resource_field_selector",
    "validate_csi_driver_name",
    "validate_csi_persistent_volume_source",
    "validate_csi_volume_source",
    "validate_glusterfs_persistent_volume_source",
    "validate_glusterfs_volume_source",
    "validate_key_to_path",
    "validate_local_descending_path",
    "validate_local_non_reserved_path",
    "validate_nfs_volume_source",
    "validate_path_no_backsteps",
    "validate_persistent_volume_claim_spec",
    "validate_persistent_volume_claim_template",
    "validate_persistent_volume_source",
    "validate_signer_name",
    "validate_volume_source",
    "validate_volumes",
]

# in validateVolumeSource's order: the first one present is the volume's source, every later one
# is "may not specify more than 1 volume type" at its path (upstream spells two of them its own way)
VOLUME_SOURCES = (
    "emptyDir", "hostPath", "gitRepo", "gcePersistentDisk", "awsElasticBlockStore", "secret", "nfs", "iscsi",
    "glusterfs", "flocker", "persistentVolumeClaim", "rbd", "cinder", "cephfs", "quobyte", "downwardAPI", "fc",
    "flexVolume", "configMap", "azureFile", "vsphereVolume", "photonPersistentDisk", "portworxVolume", "azureDisk",
    "storageos", "projected", "scaleIO", "csi", "ephemeral", "image",
)
_FORBIDDEN_PATH = {"cephfs": "cephFS", "downwardAPI": "downwarAPI"}
# the path a source's own errors are reported under, where it is not the source's JSON name
_SOURCE_PATH = {"gcePersistentDisk": "persistentDisk"}

_MORE_THAN_ONE = "may not specify more than 1 volume type"
FILE_MODE_MSG = "must be a number between 0 and 0777 (octal), both inclusive"
PD_PARTITION_MSG = "must be between 1 and 255, inclusive"
LUN_MSG = "must be between 0 and 255, inclusive"
_ISCSI_TOO_LONG = ("Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if "
                   "iscsi.initiatorName is specified.")
_QUANTITY_MSG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_QUOBYTE_REGISTRY_MSG = "must be a host:port pair or multiple pairs separated by commas"
_CONFLICTING_PATHS = "conflicting duplicate paths"

# iscsiInitiatorIqnRegex / EuiRegex / NaaRegex (RE2 syntax: \d and [[:alnum:]] are ASCII, \s is
# [\t\n\f\r ], `.` is any character but a newline, `$` is the end of the text)
_IQN_RE = re.compile(r"iqn\.[0-9]{4}-[0-9]{2}\.([0-9A-Za-z.\-]+)(:[^,;*&$|\t\n\f\r ]+)\Z")
_EUI_RE = re.compile(r"eui.[0-9A-Za-z]{16}\Z")
_NAA_RE = re.compile(r"naa.[0-9A-Za-z]{32}\Z")

HOST_PATH_TYPES = ("", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
AZURE_CACHING_MODES = ("None", "ReadOnly", "ReadWrite")
AZURE_DISK_KINDS = ("Dedicated", "Managed", "Shared")
_AZURE_MANAGED_URI = ("/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}",)
_AZURE_BLOB_URI = ("https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd",)
ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
VOLUME_MODES = ("Block", "Filesystem")

# the downward API: validVolumeDownwardAPIFieldPathExpressions, validEnvDownwardAPIFieldPathExpressions
# (sorted, as sets.List gives them), the labels ConvertDownwardAPIFieldLabel accepts
VOLUME_FIELD_PATHS = ("metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace",
                      "metadata.uid")
ENV_FIELD_PATHS = ("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
                   "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")
_DOWNWARD_LABELS = frozenset({
    "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid",
    "spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName", "spec.schedulerName", "status.phase",
    "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs",
})
RESOURCE_FIELD_PATHS = ("limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu",
                        "requests.ephemeral-storage", "requests.memory")
_HUGEPAGES_PREFIXES = ("requests.hugepages-", "limits.hugepages-")
_DIVISORS_CPU = frozenset({"1m", "1"})
_DIVISORS_BYTES = frozenset({"1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"})
_BYTES_DIVISOR_LIST = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei"

# ObjectMeta's fields in declaration order, as validateFieldAllowList names them (the Go field
# name with its first letter lower-cased: UID becomes "uID")
_TEMPLATE_META_FORBIDDEN = (
    ("name", "name"), ("generateName", "generateName"), ("namespace", "namespace"), ("selfLink", "selfLink"),
    ("uid", "uID"), ("resourceVersion", "resourceVersion"), ("generation", "generation"),
    ("creationTimestamp", "creationTimestamp"), ("deletionTimestamp", "deletionTimestamp"),
    ("deletionGracePeriodSeconds", "deletionGracePeriodSeconds"), ("ownerReferences", "ownerReferences"),
    ("finalizers", "finalizers"), ("managedFields", "managedFields"),
)
# a Go pointer as %#v prints it (upstream's value is an address that differs on every run)
_GO_POINTER = "0xc000010000"

Validator = Callable[[JsonDict, str], list[JsonDict]]


# ---- Go zero values of a dict's fields ------------------------------------------------------------

def _s(d: JsonDict, key: str) -> str:
    """A string field as Go reads it: missing or not a string is ""."""
    v = d.get(key)
    return v if isinstance(v, str) else ""


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _int(d: JsonDict, key: str) -> int:
    v = d.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _byte_len(s: str) -> int:
    return len(s) if s.isascii() else len(s.encode())


def _obj(d: JsonDict, key: str) -> JsonDict | None:
    """A pointer-to-struct field: None when unset (or null), {} when not an object."""
    v = d.get(key)
    if v is None:
        return None
    return v if isinstance(v, dict) else {}


def _items(d: JsonDict, key: str) -> list[Any]:
    v = d.get(key)
    return v if isinstance(v, list) else []


def _as_dict(v: Any) -> JsonDict:
    return v if isinstance(v, dict) else {}


# ---- paths ------------------------------------------------------------------------------------------

def validate_path_no_backsteps(target: str, field: str) -> list[JsonDict]:
    """validatePathNoBacksteps: no `..` element (one error however many; the apiserver runs on
    Linux, where filepath.ToSlash leaves backslashes alone)."""
    if ".." in target and ".." in target.split("/"):
        return [invalid(field, target, "must not contain '..'")]
    return []


def validate_local_descending_path(target: str, field: str) -> list[JsonDict]:
    """validateLocalDescendingPath: relative, without a `..` element."""
    errs = [invalid(field, target, "must be a relative path")] if target.startswith("/") else []
    errs.extend(validate_path_no_backsteps(target, field))
    return errs


def validate_local_non_reserved_path(target: str, field: str) -> list[JsonDict]:
    """ValidateLocalNonReservedPath: a local descending path that does not start with `..`
    (unless the backstep check already caught it)."""
    errs = validate_local_descending_path(target, field)
    if target.startswith("..") and not target.startswith("../"):
        errs.append(invalid(field, target, "must not start with '..'"))
    return errs


def _mode_errors(d: JsonDict, key: str, parent: str) -> list[JsonDict]:
    """A file mode (`key`: defaultMode, mode) in 0..0777 when set, reported at `parent.key`."""
    mode = d.get(key)
    if mode is None or (type(mode) is int and 0 <= mode <= 0o777):
        return []
    if not _is_int(mode):
        return [type_invalid(f"{parent}.{key}", mode, "must be an integer")]
    return [invalid(f"{parent}.{key}", mode, FILE_MODE_MSG)]


def _plain_relative(path: str) -> bool:
    """A path every local-path rule accepts (the common case, decided without building a field path)."""
    return bool(path) and path[0] != "/" and ".." not in path


def validate_key_to_path(kp: Any, field: str) -> list[JsonDict]:
    """validateKeyToPath: a key, a local non-reserved path, a file mode."""
    kp = _as_dict(kp)
    key, path = _s(kp, "key"), _s(kp, "path")
    if key and _plain_relative(path):
        return _mode_errors(kp, "mode", field)
    errs: list[JsonDict] = []
    if not key:
        errs.append(required(f"{field}.key"))
    if not path:
        errs.append(required(f"{field}.path"))
    errs.extend(validate_local_non_reserved_path(path, f"{field}.path"))
    errs.extend(_mode_errors(kp, "mode", field))
    return errs


# ---- names --------------------------------------------------------------------------------------------

def _dns_label(value: str, field: str) -> list[JsonDict]:
    return [invalid(field, value, m) for m in is_dns1123_label(value)]


def _dns_subdomain(value: str, field: str) -> list[JsonDict]:
    return [invalid(field, value, m) for m in is_dns1123_subdomain(value)]


def _qualified(value: str, field: str) -> list[JsonDict]:
    return [invalid(field, value, m) for m in is_qualified_name(value)]


def _label_selector(sel: Any, field: str) -> list[JsonDict]:
    """metav1 ValidateLabelSelector with AllowInvalidLabelValueInSelector false."""
    errs = validate_label_selector(sel, field)
    if not isinstance(sel, dict):
        return errs
    for i, req in enumerate(_items(sel, "matchExpressions")):
        for j, value in enumerate(_items(_as_dict(req), "values")):
            if isinstance(value, str):
                errs.extend(invalid(f"{field}.matchExpressions[{i}].values[{j}]", value, m)
                            for m in is_valid_label_value(value))
    return errs


# ---- the downward API (volume files and env vars) ----------------------------------------------------

def _split_subscript(path: str) -> tuple[str, str] | None:
    """fieldpath.SplitMaybeSubscriptedPath: `metadata.labels['key']` -> ("metadata.labels", "key")."""
    if not path.endswith("']"):
        return None
    head, sep, sub = path[:-2].partition("['")
    if not sep or not head:
        return None
    return head, sub


def _convert_field_label(api_version: str, path: str) -> tuple[str, str]:
    """podshelper.ConvertDownwardAPIFieldLabel: the internal field path, or "" and the error."""
    if api_version != "v1":
        return "", f"unsupported pod version: {api_version}"
    sub = _split_subscript(path)
    if sub is not None:
        if sub[0] in ("metadata.annotations", "metadata.labels"):
            return path, ""
        return "", f"field label does not support subscript: {path}"
    if path in _DOWNWARD_LABELS:
        return path, ""
    if path == "spec.host":
        return "spec.nodeName", ""
    return "", f"field label not supported: {path}"


def object_field_selector(ref: JsonDict, field: str, expressions: tuple[str, ...] = ENV_FIELD_PATHS) -> list[JsonDict]:
    """validateObjectFieldSelector: an apiVersion and a fieldPath the pod conversion accepts; a
    subscript of labels/annotations is a qualified name (annotations lower-cased), anything else
    one of `expressions`."""
    api_version, path = _s(ref, "apiVersion"), _s(ref, "fieldPath")
    if not api_version:
        return [required(f"{field}.apiVersion")]
    if not path:
        return [required(f"{field}.fieldPath")]
    internal, problem = _convert_field_label(api_version, path)
    if problem:
        return [invalid(f"{field}.fieldPath", path, f"error converting fieldPath: {problem}")]
    sub = _split_subscript(internal)
    if sub is not None:
        if sub[0] == "metadata.annotations":
            return _qualified(sub[1].lower(), field)
        if sub[0] == "metadata.labels":
            return _qualified(sub[1], field)
        return [invalid(field, sub[0], "does not support subscript")]
    if internal not in expressions:
        return [not_supported(f"{field}.fieldPath", internal, expressions)]
    return []


def resource_field_selector(ref: JsonDict, field: str, *, volume: bool = False) -> list[JsonDict]:
    """validateContainerResourceFieldSelector (a volume file also names its container) and
    validateContainerResourceDivisor."""
    resource = _s(ref, "resource")
    errs: list[JsonDict] = []
    if volume and not _s(ref, "containerName"):
        errs.append(required(f"{field}.containerName"))
    elif not resource:
        errs.append(required(f"{field}.resource"))
    elif resource not in RESOURCE_FIELD_PATHS and not resource.startswith(_HUGEPAGES_PREFIXES):
        errs.append(not_supported(f"{field}.resource", resource, RESOURCE_FIELD_PATHS))
    errs.extend(_divisor_errors(resource, ref.get("divisor"), field))
    return errs


def _divisor_errors(resource: str, divisor: Any, field: str) -> list[JsonDict]:
    if divisor is None:
        return []
    try:
        if parse_quantity(divisor) == 0:
            return []
    except (QuantityError, TypeError):
        pass
    text = canonical_or_text(divisor)
    fp = f"{field}.divisor"
    errs: list[JsonDict] = []
    if resource in ("limits.cpu", "requests.cpu") and text not in _DIVISORS_CPU:
        errs.append(invalid(fp, resource, "only divisor's values 1m and 1 are supported with the cpu resource"))
    elif resource in ("limits.memory", "requests.memory") and text not in _DIVISORS_BYTES:
        errs.append(invalid(fp, resource, f"only divisor's values {_BYTES_DIVISOR_LIST} are supported with the "
                            "memory resource"))
    elif resource in ("limits.ephemeral-storage", "requests.ephemeral-storage") and text not in _DIVISORS_BYTES:
        errs.append(invalid(fp, resource, f"only divisor's values {_BYTES_DIVISOR_LIST} are supported with the "
                            "local ephemeral storage resource"))
    if resource.startswith(_HUGEPAGES_PREFIXES) and text not in _DIVISORS_BYTES:
        errs.append(invalid(fp, resource, f"only divisor's values {_BYTES_DIVISOR_LIST} are supported with the "
                            "hugepages resource"))
    return errs


def _downward_api_file(item: Any, field: str) -> list[JsonDict]:
    """validateDownwardAPIVolumeFile (its errors at the source's path: upstream indexes no item)."""
    item = _as_dict(item)
    path = _s(item, "path")
    errs: list[JsonDict] = []
    if not _plain_relative(path):
        if not path:
            errs.append(required(f"{field}.path"))
        errs.extend(validate_local_non_reserved_path(path, f"{field}.path"))
    field_ref, resource_ref = _obj(item, "fieldRef"), _obj(item, "resourceFieldRef")
    if field_ref is not None:
        errs.extend(object_field_selector(field_ref, f"{field}.fieldRef", VOLUME_FIELD_PATHS))
        if resource_ref is not None:
            errs.append(invalid(field, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
    elif resource_ref is not None:
        errs.extend(resource_field_selector(resource_ref, f"{field}.resourceFieldRef", volume=True))
    else:
        errs.append(required(field, "one of fieldRef and resourceFieldRef is required"))
    errs.extend(_mode_errors(item, "mode", field))
    return errs


# ---- the pod volume sources ----------------------------------------------------------------------------

def _empty_dir(src: JsonDict, field: str) -> list[JsonDict]:
    limit = src.get("sizeLimit")
    if limit is None:
        return []
    try:
        negative = parse_quantity(limit) < 0
    except (QuantityError, TypeError):
        return [invalid(f"{field}.sizeLimit", limit, _QUANTITY_MSG)]
    return [forbidden(f"{field}.sizeLimit", "SizeLimit field must be a valid resource quantity")] if negative else []


def _host_path(src: JsonDict, field: str) -> list[JsonDict]:
    """validateHostPathVolumeSource: a path without backsteps, a known type."""
    path = _s(src, "path")
    if not path:
        return [required(f"{field}.path")]
    errs = validate_path_no_backsteps(path, f"{field}.path")
    kind = src.get("type")
    if kind is not None and kind not in HOST_PATH_TYPES:
        errs.append(not_supported(f"{field}.type", kind, HOST_PATH_TYPES))
    return errs


def _git_repo(src: JsonDict, field: str) -> list[JsonDict]:
    errs = [required(f"{field}.repository")] if not _s(src, "repository") else []
    errs.extend(validate_local_descending_path(_s(src, "directory"), f"{field}.directory"))
    return errs


def _partition_errors(src: JsonDict, field: str) -> list[JsonDict]:
    partition = _int(src, "partition")
    return [invalid(f"{field}.partition", partition, PD_PARTITION_MSG)] if not 0 <= partition <= 255 else []


def _gce_pd(src: JsonDict, field: str) -> list[JsonDict]:
    errs = [required(f"{field}.pdName")] if not _s(src, "pdName") else []
    return errs + _partition_errors(src, field)


def _aws_ebs(src: JsonDict, field: str) -> list[JsonDict]:
    errs = [required(f"{field}.volumeID")] if not _s(src, "volumeID") else []
    return errs + _partition_errors(src, field)


def _key_to_paths(src: JsonDict, field: str) -> list[JsonDict]:
    errs: list[JsonDict] = []
    for i, kp in enumerate(_items(src, "items")):
        errs.extend(validate_key_to_path(kp, f"{field}.items[{i}]"))
    return errs


def _secret(src: JsonDict, field: str) -> list[JsonDict]:
    """validateSecretVolumeSource: a secret name, the default mode, the items."""
    errs = [required(f"{field}.secretName")] if not _s(src, "secretName") else []
    errs.extend(_mode_errors(src, "defaultMode", field))
    return errs + _key_to_paths(src, field)


def _config_map(src: JsonDict, field: str) -> list[JsonDict]:
    """validateConfigMapVolumeSource: a name, the default mode, the items."""
    errs = [required(f"{field}.name")] if not _s(src, "name") else []
    errs.extend(_mode_errors(src, "defaultMode", field))
    return errs + _key_to_paths(src, field)


def validate_nfs_volume_source(src: JsonDict, field: str) -> list[JsonDict]:
    """validateNFSVolumeSource (pods and PersistentVolumes): a server and an absolute path."""
    errs: list[JsonDict] = []
    path = _s(src, "path")
    if not _s(src, "server"):
        errs.append(required(f"{field}.server"))
    if not path:
        errs.append(required(f"{field}.path"))
    if not path.startswith("/"):
        errs.append(invalid(f"{field}.path", path, "must be an absolute path"))
    return errs


def _iscsi_name_errors(value: str, field: str, starting_msg: str) -> list[JsonDict]:
    """An IQN, EUI or NAA name: the iqn/eui/naa prefix, then that format."""
    if not value.startswith(("iqn", "eui", "naa")):
        return [invalid(field, value, starting_msg)]
    regex = _IQN_RE if value.startswith("iqn") else _EUI_RE if value.startswith("eui") else _NAA_RE
    matched = regex.search(value) if regex is _IQN_RE else regex.match(value)
    return [] if matched else [invalid(field, value, "must be valid format")]


def _iscsi_common(src: JsonDict, field: str, starting_msg: str) -> tuple[list[JsonDict], list[JsonDict]]:
    """The iqn, lun and CHAP errors, and the initiator name's, of both iSCSI sources."""
    errs: list[JsonDict] = []
    iqn = _s(src, "iqn")
    if not iqn:
        errs.append(required(f"{field}.iqn"))
    else:
        errs.extend(_iscsi_name_errors(iqn, f"{field}.iqn", starting_msg))
    lun = _int(src, "lun")
    if not 0 <= lun <= 255:
        errs.append(invalid(f"{field}.lun", lun, LUN_MSG))
    if (src.get("chapAuthDiscovery") is True or src.get("chapAuthSession") is True) and src.get("secretRef") is None:
        errs.append(required(f"{field}.secretRef"))
    initiator = src.get("initiatorName")
    init_errs = [] if initiator is None else _iscsi_name_errors(_s(src, "initiatorName"), f"{field}.initiatorname",
                                                                 starting_msg)
    return errs, init_errs


def _iscsi(src: JsonDict, field: str) -> list[JsonDict]:
    """validateISCSIVolumeSource."""
    errs = [required(f"{field}.targetPortal")] if not _s(src, "targetPortal") else []
    common, initiator = _iscsi_common(src, field, "must be valid format starting with iqn, eui, or naa")
    return errs + common + initiator


def validate_glusterfs_volume_source(src: JsonDict, field: str) -> list[JsonDict]:
    """validateGlusterfsVolumeSource: endpoints and a path."""
    errs = [required(f"{field}.endpoints")] if not _s(src, "endpoints") else []
    if not _s(src, "path"):
        errs.append(required(f"{field}.path"))
    return errs


def _flocker(src: JsonDict, field: str) -> list[JsonDict]:
    name, uuid = _s(src, "datasetName"), _s(src, "datasetUUID")
    errs: list[JsonDict] = []
    if not name and not uuid:
        errs.append(required(field, "one of datasetName and datasetUUID is required"))
    if name and uuid:
        errs.append(invalid(field, "resource", "datasetName and datasetUUID can not be specified simultaneously"))
    if "/" in name:
        errs.append(invalid(f"{field}.datasetName", name, "must not contain '/'"))
    return errs


def _pvc(src: JsonDict, field: str) -> list[JsonDict]:
    return [required(f"{field}.claimName")] if not _s(src, "claimName") else []


def _rbd(src: JsonDict, field: str) -> list[JsonDict]:
    errs = [required(f"{field}.monitors")] if not _items(src, "monitors") else []
    if not _s(src, "image"):
        errs.append(required(f"{field}.image"))
    return errs


def _cinder(src: JsonDict, field: str) -> list[JsonDict]:
    errs = [required(f"{field}.volumeID")] if not _s(src, "volumeID") else []
    ref = _obj(src, "secretRef")
    if ref is not None and not _s(ref, "name"):
        errs.append(required(f"{field}.secretRef.name"))
    return errs


def _cephfs(src: JsonDict, field: str) -> list[JsonDict]:
    return [required(f"{field}.monitors")] if not _items(src, "monitors") else []


def _split_host_port(hostport: str) -> bool:
    """Whether net.SplitHostPort accepts `hostport` (host:port, [v6]:port)."""
    i = hostport.rfind(":")
    if i < 0:
        return False
    j = k = 0
    if hostport.startswith("["):
        end = hostport.find("]")
        if end < 0 or end + 1 != i:
            return False
        j, k = 1, end + 1
    elif ":" in hostport[:i]:
        return False
    return "[" not in hostport[j:] and "]" not in hostport[k:]


def _quobyte(src: JsonDict, field: str) -> list[JsonDict]:
    """validateQuobyteVolumeSource: host:port registries, a tenant of at most 64 characters, a volume."""
    registry, tenant = _s(src, "registry"), _s(src, "tenant")
    errs: list[JsonDict] = []
    if not registry:
        errs.append(required(f"{field}.registry", _QUOBYTE_REGISTRY_MSG))
    elif _byte_len(tenant) >= 65:
        errs.append(required(f"{field}.tenant", "must be a UUID and may not exceed a length of 64 characters"))
    else:
        errs.extend(invalid(f"{field}.registry", registry, _QUOBYTE_REGISTRY_MSG)
                    for pair in registry.split(",") if not _split_host_port(pair))
    if not _s(src, "volume"):
        errs.append(required(f"{field}.volume"))
    return errs


def _downward_api(src: JsonDict, field: str) -> list[JsonDict]:
    """validateDownwardAPIVolumeSource: the default mode, then each item."""
    errs = _mode_errors(src, "defaultMode", field)
    for item in _items(src, "items"):
        errs.extend(_downward_api_file(item, field))
    return errs


def _fc(src: JsonDict, field: str) -> list[JsonDict]:
    """validateFCVolumeSource: targetWWNs with a lun, or wwids."""
    wwns, wwids = _items(src, "targetWWNs"), _items(src, "wwids")
    errs: list[JsonDict] = []
    if not wwns and not wwids:
        errs.append(required(f"{field}.targetWWNs", "must specify either targetWWNs or wwids, but not both"))
    if wwns and wwids:
        errs.append(invalid(f"{field}.targetWWNs", wwns, "targetWWNs and wwids can not be specified simultaneously"))
    if wwns:
        lun = src.get("lun")
        if lun is None:
            errs.append(required(f"{field}.lun", "lun is required if targetWWNs is specified"))
        elif not _is_int(lun) or not 0 <= lun <= 255:
            errs.append(invalid(f"{field}.lun", lun, LUN_MSG))
    return errs


def _flex_volume(src: JsonDict, field: str) -> list[JsonDict]:
    """validateFlexVolumeSource (and the PersistentVolume one): a driver; no option in the
    kubernetes.io or k8s.io namespaces."""
    errs = [required(f"{field}.driver")] if not _s(src, "driver") else []
    for key in _as_dict(src.get("options")):
        namespace = key.split("/", 1)[0] if "/" in key else key
        normalized = "." + namespace.lower()
        if normalized.endswith((".kubernetes.io", ".k8s.io")):
            errs.append(invalid(f"{field}.options[{key}]", key, "kubernetes.io and k8s.io namespaces are reserved"))
    return errs


def _azure_file(src: JsonDict, field: str) -> list[JsonDict]:
    errs = [required(f"{field}.secretName")] if not _s(src, "secretName") else []
    if not _s(src, "shareName"):
        errs.append(required(f"{field}.shareName"))
    return errs


def _required_field(key: str) -> Validator:
    """A source whose only rule is a required string field."""
    def check(src: JsonDict, field: str) -> list[JsonDict]:
        return [required(f"{field}.{key}")] if not _s(src, key) else []
    return check


def _azure_disk(src: JsonDict, field: str) -> list[JsonDict]:
    """validateAzureDisk: a disk name and URI, a known caching mode and kind, a URI of the kind's form."""
    uri = _s(src, "diskURI")
    errs = [required(f"{field}.diskName")] if not _s(src, "diskName") else []
    if not uri:
        errs.append(required(f"{field}.diskURI"))
    caching, kind = src.get("cachingMode"), src.get("kind")
    if caching is not None and caching not in AZURE_CACHING_MODES:
        errs.append(not_supported(f"{field}.cachingMode", caching, AZURE_CACHING_MODES))
    if kind is not None and kind not in AZURE_DISK_KINDS:
        errs.append(not_supported(f"{field}.kind", kind, AZURE_DISK_KINDS))
    if kind == "Managed" and not uri.startswith("/subscriptions/"):
        errs.append(not_supported(f"{field}.diskURI", uri, _AZURE_MANAGED_URI))
    if kind is not None and kind != "Managed" and not uri.startswith("https://"):
        errs.append(not_supported(f"{field}.diskURI", uri, _AZURE_BLOB_URI))
    return errs


def _storageos_common(src: JsonDict, field: str) -> list[JsonDict]:
    name, namespace = _s(src, "volumeName"), _s(src, "volumeNamespace")
    errs = [required(f"{field}.volumeName")] if not name else _dns_label(name, f"{field}.volumeName")
    if namespace:
        errs.extend(_dns_label(namespace, f"{field}.volumeNamespace"))
    return errs


def _storageos(src: JsonDict, field: str) -> list[JsonDict]:
    errs = _storageos_common(src, field)
    ref = _obj(src, "secretRef")
    if ref is not None and not _s(ref, "name"):
        errs.append(required(f"{field}.secretRef.name"))
    return errs


def _scale_io(src: JsonDict, field: str) -> list[JsonDict]:
    return [required(f"{field}.{key}") for key in ("gateway", "system", "volumeName") if not _s(src, key)]


def validate_csi_driver_name(driver: str, field: str) -> list[JsonDict]:
    """ValidateCSIDriverName: required, at most 63 characters, a DNS subdomain once lower-cased."""
    errs: list[JsonDict] = []
    if not driver:
        errs.append(required(field))
    if len(driver) > 63:
        errs.append(too_long(field, 63))
    errs.extend(invalid(field, driver, m) for m in is_dns1123_subdomain(driver.lower()))
    return errs


def validate_csi_volume_source(src: JsonDict, field: str) -> list[JsonDict]:
    """validateCSIVolumeSource: the driver name, the node publish secret's name (its format
    errors at `csi.name`, as upstream reports them)."""
    errs = validate_csi_driver_name(_s(src, "driver"), f"{field}.driver")
    ref = _obj(src, "nodePublishSecretRef")
    if ref is not None:
        name = _s(ref, "name")
        if not name:
            errs.append(required(f"{field}.nodePublishSecretRef.name"))
        else:
            errs.extend(_dns_subdomain(name, f"{field}.name"))
    return errs


def validate_persistent_volume_claim_spec(spec: Any, field: str) -> list[JsonDict]:
    """ValidatePersistentVolumeClaimSpec (VolumeAttributesClass off, as v1.33 ships it): access
    modes, the selector, a positive storage request, the class name, the volume mode, the data
    source and data source reference."""
    spec = _as_dict(spec)
    errs: list[JsonDict] = []
    modes = _items(spec, "accessModes")
    if not modes:
        errs.append(required(f"{field}.accessModes", "at least 1 access mode is required"))
    if spec.get("selector") is not None:
        errs.extend(_label_selector(spec.get("selector"), f"{field}.selector"))
    rwop = other = False
    for mode in modes:
        if mode not in ACCESS_MODES:
            errs.append(not_supported(f"{field}.accessModes", mode, ACCESS_MODES))
        if mode == "ReadWriteOncePod":
            rwop = True
        elif mode in ACCESS_MODES:
            other = True
    if rwop and other:
        errs.append(forbidden(f"{field}.accessModes", "may not use ReadWriteOncePod with other access modes"))
    errs.extend(_storage_request_errors(spec, f"{field}.resources[storage]"))
    cls = spec.get("storageClassName")
    if isinstance(cls, str) and cls:
        errs.extend(_dns_subdomain(cls, f"{field}.storageClassName"))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in VOLUME_MODES:
        errs.append(not_supported(f"{field}.volumeMode", mode, VOLUME_MODES))
    errs.extend(_data_sources(spec, field))
    return errs


def _storage_request_errors(spec: JsonDict, field: str) -> list[JsonDict]:
    requests = _as_dict(_as_dict(spec.get("resources")).get("requests"))
    if "storage" not in requests:
        return [required(field)]
    raw = requests["storage"]
    try:
        value = parse_quantity(raw)
    except (QuantityError, TypeError):
        return [invalid(field, raw, _QUANTITY_MSG)]
    return [invalid(field, canonical_or_text(raw), "must be greater than zero")] if value <= 0 else []


def _data_source(ref: JsonDict, field: str, *, namespaced: bool) -> list[JsonDict]:
    """validateDataSource / validateDataSourceRef."""
    errs: list[JsonDict] = []
    kind, group = _s(ref, "kind"), _s(ref, "apiGroup")
    if not _s(ref, "name"):
        errs.append(required(f"{field}.name"))
    if not kind:
        errs.append(required(f"{field}.kind"))
    if not group and kind != "PersistentVolumeClaim":
        errs.append(invalid(field, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"))
    if group:
        errs.extend(_dns_subdomain(group, f"{field}.apiGroup"))
    namespace = _s(ref, "namespace")
    if namespaced and namespace:
        errs.extend(_dns_label(namespace, f"{field}.namespace"))
    return errs


def _go_path(name: str) -> str:
    """%#v of a field.Path (upstream puts the Path itself in two errors)."""
    return f'field.Path{{name:"{name}", index:"", parent:(*field.Path)({_GO_POINTER})}}'


def _data_sources(spec: JsonDict, field: str) -> list[JsonDict]:
    ds, ref = _obj(spec, "dataSource"), _obj(spec, "dataSourceRef")
    errs: list[JsonDict] = []
    if ds is not None:
        errs.extend(_data_source(ds, f"{field}.dataSource", namespaced=False))
    if ref is not None:
        errs.extend(_data_source(ref, f"{field}.dataSourceRef", namespaced=True))
    if ref is not None and _s(ref, "namespace"):
        if ds is not None:
            errs.append(cause(field, f"Invalid value: {_go_path('dataSource')}: may not be specified when "
                              "dataSourceRef.namespace is specified"))
    elif ds is not None and ref is not None:
        same = (ds.get("apiGroup") == ref.get("apiGroup") and _s(ds, "kind") == _s(ref, "kind")
                and _s(ds, "name") == _s(ref, "name"))
        if not same:
            errs.append(cause(field, f"Invalid value: {_go_path('dataSource')}: must match dataSourceRef"))
    return errs


def _template_object_meta(meta: Any, field: str) -> list[JsonDict]:
    """ValidateTemplateObjectMeta: annotations and labels; no other ObjectMeta field may be set."""
    meta = _as_dict(meta)
    errs = validate_annotations(meta.get("annotations"), f"{field}.annotations")
    errs.extend(validate_labels(meta.get("labels"), f"{field}.labels"))
    for key, go_name in _TEMPLATE_META_FORBIDDEN:
        value = meta.get(key)
        if value is not None and value != "" and value != 0:
            errs.append(forbidden(f"{field}.{go_name}", "cannot be set"))
    return errs


def validate_persistent_volume_claim_template(template: Any, field: str) -> list[JsonDict]:
    """ValidatePersistentVolumeClaimTemplate: the template's metadata and claim spec."""
    template = _as_dict(template)
    errs = _template_object_meta(template.get("metadata"), f"{field}.metadata")
    errs.extend(validate_persistent_volume_claim_spec(template.get("spec"), f"{field}.spec"))
    return errs


def _ephemeral(src: JsonDict, field: str) -> list[JsonDict]:
    template = src.get("volumeClaimTemplate")
    if template is None:
        return [required(f"{field}.volumeClaimTemplate")]
    return validate_persistent_volume_claim_template(template, f"{field}.volumeClaimTemplate")


def _image(src: JsonDict, field: str, *, resource_is_pod: bool) -> list[JsonDict]:
    """validateImageVolumeSource: a reference (pods only: a template's may be filled in later), a pull policy."""
    errs = [required(f"{field}.reference")] if resource_is_pod and not _s(src, "reference") else []
    policy = src.get("pullPolicy")
    if not policy:
        errs.append(required(f"{field}.pullPolicy"))
    elif policy not in PULL_POLICIES:
        errs.append(not_supported(f"{field}.pullPolicy", policy, PULL_POLICIES))
    return errs


# ---- projected volumes -----------------------------------------------------------------------------------

def _go_struct_ctb(ctb: JsonDict) -> str:
    """%#v of the core.ClusterTrustBundleProjection upstream puts in its "only one of" error."""
    def ptr(key: str, go_type: str) -> str:
        return f"(*{go_type})({_GO_POINTER if ctb.get(key) is not None else 'nil'})"
    return (f"core.ClusterTrustBundleProjection{{Name:{ptr('name', 'string')}, SignerName:{ptr('signerName', 'string')}, "
            f"LabelSelector:{ptr('labelSelector', 'v1.LabelSelector')}, Optional:{ptr('optional', 'bool')}, "
            f"Path:{go_value(_s(ctb, 'path'))}}}")


def _go_label_selector(sel: JsonDict) -> str:
    """%#v of a metav1.LabelSelector (the value of the "labelSelector must be unset" error)."""
    labels = _as_dict(sel.get("matchLabels"))
    if sel.get("matchLabels") is None:
        match_labels = "map[string]string(nil)"
    else:
        match_labels = "map[string]string{" + ", ".join(
            f"{go_value(k)}:{go_value(v)}" for k, v in sorted(labels.items())) + "}"
    reqs = sel.get("matchExpressions")
    if reqs is None:
        exprs = "[]v1.LabelSelectorRequirement(nil)"
    else:
        parts = []
        for r in _items(sel, "matchExpressions"):
            r = _as_dict(r)
            values = r.get("values")
            vals = "[]string(nil)" if values is None else "[]string{" + ", ".join(
                go_value(v) for v in _items(r, "values")) + "}"
            parts.append(f"v1.LabelSelectorRequirement{{Key:{go_value(_s(r, 'key'))}, "
                         f"Operator:{go_value(_s(r, 'operator'))}, Values:{vals}}}")
        exprs = "[]v1.LabelSelectorRequirement{" + ", ".join(parts) + "}"
    return f"v1.LabelSelector{{MatchLabels:{match_labels}, MatchExpressions:{exprs}}}"


def validate_signer_name(signer: str, field: str) -> list[JsonDict]:
    """ValidateSignerName: `<domain>/<path>`, the domain of at least two DNS labels, the path of
    DNS subdomains separated by dots, within the length limits."""
    if not signer:
        return [required(field)]
    segments = signer.split("/")
    if len(segments) != 2:
        return [invalid(field, signer, "must be a fully qualified domain and path of the form 'example.com/signer-name'")]
    domain, path = segments
    errs: list[JsonDict] = []
    if len(domain) > 253:
        errs.append(too_long(field, 253))
    labels = domain.split(".")
    for label in labels:
        msgs = is_dns1123_label(label)
        if msgs:
            errs.extend(invalid(field, domain, f"validating label {go_value(label)}: {m}") for m in msgs)
            break
    if len(labels) < 2:
        errs.append(invalid(field, domain, "should be a domain with at least two segments separated by dots"))
    for label in path.split("."):
        msgs = is_dns1123_subdomain(label)
        if msgs:
            errs.extend(invalid(field, path, f"validating label {go_value(label)}: {m}") for m in msgs)
            break
    max_signer = 253 + (253 + 63 + 1) + 1
    if len(signer) > max_signer:
        errs.append(too_long(field, max_signer))
    return errs


def _cluster_trust_bundle_name_errors(name: str) -> list[str]:
    """ValidateClusterTrustBundleName for the signer the name implies (extractSignerNameFromClusterTrustBundleName)."""
    split = name.rfind(":")
    if split < 0:
        return is_dns1123_subdomain(name)
    signer = name[:split].replace(":", "/")
    prefix = signer.replace("/", ":") + ":"
    if not name.startswith(prefix):
        return [f"ClusterTrustBundle for signerName {signer} must be named with prefix {prefix}"]
    return is_dns1123_subdomain(name[len(prefix):])


def _cluster_trust_bundle(ctb: JsonDict, field: str) -> list[JsonDict]:
    """A clusterTrustBundle projection: by name or by signer name and label selector, and a path."""
    errs: list[JsonDict] = []
    using_name, using_signer = ctb.get("name") is not None, ctb.get("signerName") is not None
    selector = ctb.get("labelSelector")
    if using_name and using_signer:
        errs.append(cause(field, f"Invalid value: {_go_struct_ctb(ctb)}: only one of name and signerName may be used"))
    elif using_name:
        name = _s(ctb, "name")
        if not name:
            errs.append(required(f"{field}.name", "must be a valid object name"))
        errs.extend(invalid(f"{field}.name", name, f"not a valid clustertrustbundlename: {m}")
                    for m in _cluster_trust_bundle_name_errors(name))
        if selector is not None:
            errs.append(cause(f"{field}.labelSelector", f"Invalid value: {_go_label_selector(_as_dict(selector))}: "
                              "labelSelector must be unset if name is specified"))
    elif using_signer:
        signer = _s(ctb, "signerName")
        if not signer:
            errs.append(required(f"{field}.signerName", "must be a valid signer name"))
        errs.extend(validate_signer_name(signer, f"{field}.signerName"))
        errs.extend(_label_selector(selector, f"{field}.labelSelector"))
    else:
        errs.append(required(field, "either name or signerName must be specified"))
    path = _s(ctb, "path")
    if not path:
        errs.append(required(f"{field}.path"))
    errs.extend(validate_local_non_reserved_path(path, f"{field}.path"))
    return errs


def _projection_key_paths(proj: JsonDict, field: str, root: str, seen: set[str]) -> list[JsonDict]:
    """A secret or configMap projection: a name, its items, no path another source writes."""
    name = _s(proj, "name")
    errs = [required(f"{field}.name")] if not name else []
    for i, kp in enumerate(_items(proj, "items")):
        errs.extend(validate_key_to_path(kp, f"{field}.items[{i}]"))
        path = _s(_as_dict(kp), "path")
        if path:
            if path in seen:
                errs.append(invalid(root, name, _CONFLICTING_PATHS))
            seen.add(path)
    return errs


_PROJECTION_ORDER = {"secret": 0, "configMap": 1, "downwardAPI": 2, "serviceAccountToken": 3, "clusterTrustBundle": 4}


def _projected(src: JsonDict, field: str, *, allow_non_local_token_path: bool) -> list[JsonDict]:
    """validateProjectedVolumeSource / validateProjectionSources: each source one projection
    (secret, configMap, downwardAPI, serviceAccountToken, clusterTrustBundle, checked in that
    order), no path written twice."""
    errs = _mode_errors(src, "defaultMode", field)
    seen: set[str] = set()
    for i, source in enumerate(_items(src, "sources")):
        source = _as_dict(source)
        kinds = [key for key in source if key in _PROJECTION_ORDER and source[key] is not None]
        if len(kinds) > 1:
            kinds.sort(key=_PROJECTION_ORDER.__getitem__)
        sp = f"{field}.sources[{i}]"
        for kind in kinds:
            proj = _as_dict(source[kind])
            if kind == "secret" or kind == "configMap":
                errs.extend(_projection_key_paths(proj, f"{sp}.{kind}", field, seen))
            elif kind == "downwardAPI":
                errs.extend(_projected_downward_api(proj, f"{sp}.downwardAPI", field, seen))
            elif kind == "serviceAccountToken":
                errs.extend(_token_projection(proj, f"{sp}.serviceAccountToken", field, allow_non_local_token_path))
            else:
                errs.extend(_cluster_trust_bundle(proj, f"{sp}.clusterTrustBundle"))
                path = _s(proj, "path")
                if path in seen:
                    errs.append(invalid(field, path, _CONFLICTING_PATHS))
                seen.add(path)
        if len(kinds) > 1:
            errs.append(forbidden(sp, "may not specify more than 1 volume type per source"))
    return errs


def _projected_downward_api(proj: JsonDict, field: str, root: str, seen: set[str]) -> list[JsonDict]:
    errs: list[JsonDict] = []
    for item in _items(proj, "items"):
        errs.extend(_downward_api_file(item, field))
        path = _s(_as_dict(item), "path")
        if path:
            if path in seen:
                errs.append(invalid(root, path, _CONFLICTING_PATHS))
            seen.add(path)
    return errs


def _token_projection(token: JsonDict, field: str, root: str, allow_non_local: bool) -> list[JsonDict]:
    """A serviceAccountToken projection: 10 minutes to 2^32 seconds, a local path (its errors at
    the projected source's `path`, as upstream reports them)."""
    errs: list[JsonDict] = []
    expiration = token.get("expirationSeconds")
    seconds = _int(token, "expirationSeconds")
    if expiration is not None and not _is_int(expiration):
        errs.append(type_invalid(f"{field}.expirationSeconds", expiration, "must be an integer"))
    elif seconds < 600:
        errs.append(invalid(f"{field}.expirationSeconds", seconds, "may not specify a duration less than 10 minutes"))
    if seconds > 1 << 32:
        errs.append(invalid(f"{field}.expirationSeconds", seconds, "may not specify a duration larger than 2^32 seconds"))
    path = _s(token, "path")
    if not path:
        errs.append(required(f"{root}.path"))
    elif not allow_non_local and not _plain_relative(path):
        errs.extend(validate_local_non_reserved_path(path, f"{root}.path"))
    return errs


def has_non_local_projected_token_path(spec: Any) -> bool:
    """hasNonLocalProjectedTokenPath: a projected token path that is not a local non-reserved
    path (an update keeps allowing it: PodValidationOptions.AllowNonLocalProjectedTokenPath)."""
    for v in _items(_as_dict(spec), "volumes"):
        projected = _obj(_as_dict(v), "projected")
        for source in _items(projected or {}, "sources"):
            token = _obj(_as_dict(source), "serviceAccountToken")
            if token is not None and validate_local_non_reserved_path(_s(token, "path"), ""):
                return True
    return False


# ---- one volume, the list ----------------------------------------------------------------------------

_POD_VALIDATORS: dict[str, Validator] = {
    "emptyDir": _empty_dir, "hostPath": _host_path, "gitRepo": _git_repo, "gcePersistentDisk": _gce_pd,
    "awsElasticBlockStore": _aws_ebs, "secret": _secret, "nfs": validate_nfs_volume_source, "iscsi": _iscsi,
    "glusterfs": validate_glusterfs_volume_source, "flocker": _flocker, "persistentVolumeClaim": _pvc, "rbd": _rbd,
    "cinder": _cinder, "cephfs": _cephfs, "quobyte": _quobyte, "downwardAPI": _downward_api, "fc": _fc,
    "flexVolume": _flex_volume, "configMap": _config_map, "azureFile": _azure_file,
    "vsphereVolume": _required_field("volumePath"), "photonPersistentDisk": _required_field("pdID"),
    "portworxVolume": _required_field("volumeID"), "azureDisk": _azure_disk, "storageos": _storageos,
    "scaleIO": _scale_io, "csi": validate_csi_volume_source, "ephemeral": _ephemeral,
}


_SOURCE_ORDER = {key: i for i, key in enumerate(VOLUME_SOURCES)}


def validate_volume_source(volume: JsonDict, field: str, *, pod_name: str = "", resource_is_pod: bool = False,
                           allow_non_local_token_path: bool = False) -> list[JsonDict]:
    """validateVolumeSource: exactly one source, validated at its path; with the pod's name, an
    ephemeral volume's claim name (`<pod>-<volume>`) must be a valid object name."""
    # the sources present, in upstream's order (a volume is a name and, nearly always, one source)
    present = [key for key in volume if key in _SOURCE_ORDER and volume[key] is not None]
    if not present:
        return [required(field, "must specify a volume type")]
    if len(present) > 1:
        present.sort(key=_SOURCE_ORDER.__getitem__)
    name = volume.get("name")
    vol_name = name if isinstance(name, str) else ""
    errs: list[JsonDict] = []
    for i, key in enumerate(present):
        src = volume[key]
        if i:
            errs.append(forbidden(f"{field}.{_FORBIDDEN_PATH.get(key, key)}", _MORE_THAN_ONE))
        else:
            errs.extend(_one_source(key, src, field, vol_name, pod_name, resource_is_pod, allow_non_local_token_path))
        if key == "iscsi" and isinstance(src, dict) and src.get("initiatorName") is not None:
            if _byte_len(vol_name + ":" + _s(src, "targetPortal")) > 64:
                errs.append(invalid(f"{field}.name", vol_name, _ISCSI_TOO_LONG))
    return errs


def _one_source(key: str, src: Any, field: str, vol_name: str, pod_name: str, resource_is_pod: bool,
                allow_non_local_token_path: bool) -> list[JsonDict]:
    sp = f"{field}.{_SOURCE_PATH.get(key, key)}"
    if not isinstance(src, dict):
        return [type_invalid(f"{field}.{key}", src, "must be an object")]
    if key == "projected":
        return _projected(src, sp, allow_non_local_token_path=allow_non_local_token_path)
    if key == "image":
        return _image(src, sp, resource_is_pod=resource_is_pod)
    errs = _POD_VALIDATORS[key](src, sp)
    if key == "ephemeral" and pod_name and vol_name:
        claim = f"{pod_name}-{vol_name}"
        errs.extend(invalid(f"{field}.name", vol_name, f"PVC name {go_value(claim)}: {m}")
                    for m in is_dns1123_subdomain(claim))
    return errs


def validate_volumes(volumes: Any, field: str, *, pod_name: str = "", resource_is_pod: bool = False,
                     allow_non_local_token_path: bool = False) -> tuple[list[JsonDict], dict[str, JsonDict]]:
    """ValidateVolumes: each volume's source and name (a unique DNS label); a persistentVolumeClaim
    may not name the claim an ephemeral volume of the same pod creates. Returns the errors and the
    valid volumes by name."""
    errs: list[JsonDict] = []
    valid: dict[str, JsonDict] = {}
    if not isinstance(volumes, list):
        return errs, valid
    created = _created_claims(volumes, pod_name)
    names: set[str] = set()
    for i, v in enumerate(volumes):
        vp = f"{field}[{i}]"
        if not isinstance(v, dict):
            errs.append(type_invalid(vp, v, "must be an object"))
            continue
        el = validate_volume_source(v, vp, pod_name=pod_name, resource_is_pod=resource_is_pod,
                                    allow_non_local_token_path=allow_non_local_token_path)
        name = v.get("name")
        if not name:
            el.append(required(f"{vp}.name"))
        elif not isinstance(name, str):
            el.append(type_invalid(f"{vp}.name", name, "must be a string"))
        else:
            el.extend(_dns_label(name, f"{vp}.name"))
        if isinstance(name, str) and name in names:
            el.append(duplicate(f"{vp}.name", name))
        if el:
            errs.extend(el)
        elif isinstance(name, str):
            names.add(name)
            valid[name] = v
        claim = v.get("persistentVolumeClaim")
        if created and isinstance(claim, dict) and _s(claim, "claimName") in created:
            errs.append(invalid(f"{vp}.persistentVolumeClaim.claimName", _s(claim, "claimName"),
                                "must not reference a PVC that gets created for an ephemeral volume"))
    return errs, valid


def _created_claims(volumes: list[Any], pod_name: str) -> frozenset[str]:
    if not pod_name:
        return frozenset()
    return frozenset(f"{pod_name}-{_s(v, 'name')}" for v in volumes
                     if isinstance(v, dict) and v.get("ephemeral") is not None)


# ---- PersistentVolume sources (ValidatePersistentVolumeSpec's part) --------------------------------------

def validate_glusterfs_persistent_volume_source(src: JsonDict, field: str) -> list[JsonDict]:
    """validateGlusterfsPersistentVolumeSource: endpoints, a path, a valid endpointsNamespace when set."""
    errs = validate_glusterfs_volume_source(src, field)
    if src.get("endpointsNamespace") is not None:
        namespace = _s(src, "endpointsNamespace")
        fp = f"{field}.endpointsNamespace"
        if not namespace:
            errs.append(invalid(fp, namespace, "if the endpointnamespace is set, it must be a valid namespace name"))
        else:
            errs.extend(_dns_label(namespace, fp))
    return errs


def _iscsi_pv(src: JsonDict, field: str, pv_name: str) -> list[JsonDict]:
    """validateISCSIPersistentVolumeSource."""
    portal = _s(src, "targetPortal")
    errs = [required(f"{field}.targetPortal")] if not portal else []
    if src.get("initiatorName") is not None and _byte_len(pv_name + ":" + portal) > 64:
        errs.append(invalid(f"{field}.targetportal", portal, _ISCSI_TOO_LONG))
    common, initiator = _iscsi_common(src, field, "must be valid format")
    errs.extend(common)
    ref = _obj(src, "secretRef")
    if ref is not None and not _s(ref, "name"):
        errs.append(required(f"{field}.secretRef.name"))
    return errs + initiator


def _namespaced_secret_ref(src: JsonDict, field: str) -> list[JsonDict]:
    """A PersistentVolume source's secretRef: a name and a namespace when set."""
    ref = _obj(src, "secretRef")
    if ref is None:
        return []
    return [required(f"{field}.secretRef.{key}") for key in ("name", "namespace") if not _s(ref, key)]


def _cinder_pv(src: JsonDict, field: str) -> list[JsonDict]:
    errs = [required(f"{field}.volumeID")] if not _s(src, "volumeID") else []
    return errs + _namespaced_secret_ref(src, field)


def _azure_file_pv(src: JsonDict, field: str) -> list[JsonDict]:
    errs = _azure_file(src, field)
    if src.get("secretNamespace") is not None and not _s(src, "secretNamespace"):
        errs.append(required(f"{field}.secretNamespace"))
    return errs


def _storageos_pv(src: JsonDict, field: str) -> list[JsonDict]:
    return _storageos_common(src, field) + _namespaced_secret_ref(src, field)


def _local(src: JsonDict, field: str) -> list[JsonDict]:
    path = _s(src, "path")
    if not path:
        return [required(f"{field}.path")]
    return validate_path_no_backsteps(path, f"{field}.path")


def _pv_secret_reference(ref: JsonDict, field: str) -> list[JsonDict]:
    """validatePVSecretReference: a DNS subdomain name and a DNS label namespace."""
    name, namespace = _s(ref, "name"), _s(ref, "namespace")
    errs = [required(f"{field}.name")] if not name else _dns_subdomain(name, f"{field}.name")
    errs.extend([required(f"{field}.namespace")] if not namespace else _dns_label(namespace, f"{field}.namespace"))
    return errs


def validate_csi_persistent_volume_source(src: JsonDict, field: str) -> list[JsonDict]:
    """validateCSIPersistentVolumeSource: the driver, a volume handle, the four secret references."""
    errs = validate_csi_driver_name(_s(src, "driver"), f"{field}.driver")
    if not _s(src, "volumeHandle"):
        errs.append(required(f"{field}.volumeHandle"))
    for key in ("controllerPublishSecretRef", "controllerExpandSecretRef", "nodePublishSecretRef",
                "nodeExpandSecretRef"):
        ref = _obj(src, key)
        if ref is not None:
            errs.extend(_pv_secret_reference(ref, f"{field}.{key}"))
    return errs


# ValidatePersistentVolumeSpec's order of sources (flexVolume is counted but never "more than 1")
_PV_SOURCES = ("hostPath", "gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "flocker", "nfs", "rbd",
               "quobyte", "cephfs", "iscsi", "cinder", "fc", "flexVolume", "azureFile", "vsphereVolume",
               "photonPersistentDisk", "portworxVolume", "azureDisk", "scaleIO", "local", "storageos", "csi")
_PV_VALIDATORS: dict[str, Validator] = {
    **{k: _POD_VALIDATORS[k] for k in ("hostPath", "gcePersistentDisk", "awsElasticBlockStore", "flocker", "nfs",
                                       "rbd", "quobyte", "cephfs", "fc", "flexVolume", "vsphereVolume",
                                       "photonPersistentDisk", "portworxVolume", "azureDisk", "scaleIO")},
    "glusterfs": validate_glusterfs_persistent_volume_source, "cinder": _cinder_pv, "azureFile": _azure_file_pv,
    "local": _local, "storageos": _storageos_pv, "csi": validate_csi_persistent_volume_source,
}


def validate_persistent_volume_source(spec: JsonDict, field: str = "spec", *, pv_name: str = "",
                                      node_affinity_specified: bool = False) -> list[JsonDict]:
    """ValidatePersistentVolumeSpec's source checks: exactly one source, validated at its path;
    a local volume needs node affinity (`node_affinity_specified`: validateVolumeNodeAffinity's
    first result); `pv_name` is the PersistentVolume's name (the iSCSI initiator length rule)."""
    errs: list[JsonDict] = []
    count = 0
    for key in _PV_SOURCES:
        src = spec.get(key)
        if src is None:
            continue
        if count and key != "flexVolume":
            errs.append(forbidden(f"{field}.{_FORBIDDEN_PATH.get(key, key)}", _MORE_THAN_ONE))
            continue
        count += 1
        sp = f"{field}.{_SOURCE_PATH.get(key, key)}"
        if not isinstance(src, dict):
            errs.append(type_invalid(f"{field}.{key}", src, "must be an object"))
            continue
        errs.extend(_iscsi_pv(src, sp, pv_name) if key == "iscsi" else _PV_VALIDATORS[key](src, sp))
        if key == "local" and not node_affinity_specified:
            errs.append(required(f"{field}.nodeAffinity", "Local volume requires node affinity"))
    if not count:
        errs.append(required(field, "must specify a volume type"))
    return errs


# ---- defaulting (SetDefaults_Volume and the source defaults) ----------------------------------------------

def _default_field_refs(items: Iterable[Any]) -> None:
    for item in items:
        ref = item.get("fieldRef") if isinstance(item, dict) else None
        if isinstance(ref, dict) and not ref.get("apiVersion"):
            ref["apiVersion"] = "v1"  # SetDefaults_ObjectFieldSelector


def _set_defaults(src: Any, defaults: tuple[tuple[str, Any], ...], *, pointers: bool = False) -> None:
    """Fields unset take their default: missing or null, or "" for a string field (`pointers`:
    the fields are Go pointers, an explicit "" stays)."""
    if isinstance(src, dict):
        for key, value in defaults:
            current = src.get(key)
            if current is None or (current == "" and not pointers):
                src[key] = value


_ISCSI_DEFAULTS: tuple[tuple[str, Any], ...] = (("iscsiInterface", "default"),)
_RBD_DEFAULTS: tuple[tuple[str, Any], ...] = (("pool", "rbd"), ("user", "admin"), ("keyring", "/etc/ceph/keyring"))
_AZURE_DISK_DEFAULTS: tuple[tuple[str, Any], ...] = (("cachingMode", "ReadWrite"), ("fsType", "ext4"),
                                                      ("readOnly", False), ("kind", "Shared"))
_SCALE_IO_DEFAULTS: tuple[tuple[str, Any], ...] = (("storageMode", "ThinProvisioned"), ("fsType", "xfs"))


def default_volumes(volumes: Any) -> None:
    """SetDefaults_Volume and the volume source defaults of SetObjectDefaults_Pod: a volume
    without a source is an emptyDir; modes 0644 for secret, configMap, downwardAPI and projected
    volumes; hostPath type ""; an hour for projected tokens; apiVersion v1 for downward API field
    references; the iSCSI, RBD, Azure disk and ScaleIO field defaults; Filesystem for an
    ephemeral volume's claim; an image volume's pull policy from its reference's tag."""
    if not isinstance(volumes, list):
        return
    for v in volumes:
        if not isinstance(v, dict):
            continue
        if all(v.get(key) is None for key in VOLUME_SOURCES):
            v["emptyDir"] = {}
            continue
        _default_source(v)


def _default_source(v: JsonDict) -> None:
    for key in ("secret", "configMap", "downwardAPI", "projected"):
        src = v.get(key)
        if isinstance(src, dict) and src.get("defaultMode") is None:
            src["defaultMode"] = 0o644
    host_path = v.get("hostPath")
    if isinstance(host_path, dict) and host_path.get("type") is None:
        host_path["type"] = ""
    downward = v.get("downwardAPI")
    if isinstance(downward, dict):
        _default_field_refs(_items(downward, "items"))
    projected = v.get("projected")
    if isinstance(projected, dict):
        for source in _items(projected, "sources"):
            if not isinstance(source, dict):
                continue
            if isinstance(source.get("downwardAPI"), dict):
                _default_field_refs(_items(source["downwardAPI"], "items"))
            token = source.get("serviceAccountToken")
            if isinstance(token, dict) and token.get("expirationSeconds") is None:
                token["expirationSeconds"] = 3600
    _set_defaults(v.get("iscsi"), _ISCSI_DEFAULTS)
    _set_defaults(v.get("rbd"), _RBD_DEFAULTS)
    _set_defaults(v.get("azureDisk"), _AZURE_DISK_DEFAULTS, pointers=True)
    _set_defaults(v.get("scaleIO"), _SCALE_IO_DEFAULTS)
    ephemeral = v.get("ephemeral")
    template = ephemeral.get("volumeClaimTemplate") if isinstance(ephemeral, dict) else None
    spec = template.get("spec") if isinstance(template, dict) else None
    if isinstance(spec, dict) and spec.get("volumeMode") is None:
        spec["volumeMode"] = "Filesystem"
    image = v.get("image")
    if isinstance(image, dict) and not image.get("pullPolicy"):
        image["pullPolicy"] = default_pull_policy(image.get("reference"))


def default_persistent_volume_source(spec: Any) -> None:
    """SetObjectDefaults_PersistentVolume's source defaults: hostPath type "", the iSCSI, RBD,
    Azure disk and ScaleIO field defaults."""
    if not isinstance(spec, dict):
        return
    host_path = spec.get("hostPath")
    if isinstance(host_path, dict) and host_path.get("type") is None:
        host_path["type"] = ""
    _set_defaults(spec.get("iscsi"), _ISCSI_DEFAULTS)
    _set_defaults(spec.get("rbd"), _RBD_DEFAULTS)
    _set_defaults(spec.get("azureDisk"), _AZURE_DISK_DEFAULTS, pointers=True)
    _set_defaults(spec.get("scaleIO"), _SCALE_IO_DEFAULTS)
