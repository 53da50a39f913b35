"""Server configuration (layer L5): what the CLI parses and `minik3s.server.run` consumes."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from minik3s.utils.net import is_ip_or_dns_name, is_loopback

# `local-storage`: K3s' component of that name, the `local-path` StorageClass (created at server
# start) and the local-path provisioner that serves it; `coredns` and `metrics-server`: K3s'
# packaged add-ons, Deployments in kube-system (minik3s.api.addons)
COMPONENTS = ("scheduler", "controllers", "kubelet", "descheduler", "local-storage", "coredns", "metrics-server")
# admission plugins --disable-admission-plugins may turn off (the others are always on)
OPTIONAL_ADMISSION_PLUGINS = ("PersistentVolumeClaimResize", "ResourceQuota", "ServiceAccount",
                              "StorageObjectInUseProtection")


class ServerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    bind: str = "127.0.0.1"
    port: int = Field(6443, ge=0, le=65535)
    data_dir: Path = Path(".minik3s")
    # simulated nodes: a count ("6"), a YAML file path, or None for the default fleet (6 nodes)
    nodes: str | None = None
    scheduler_config: Path | None = None
    # descheduler: the loop runs only with a DeschedulerPolicy file (docs/descheduler.md)
    descheduler_policy: Path | None = None
    descheduling_interval: float = Field(300.0, gt=0)
    descheduler_dry_run: bool = False
    descheduler_loop_avoidance: bool = True
    disable: set[str] = Field(default_factory=set)
    # K3s' packaged add-ons (minik3s.api.addons) less those in `disable`: `minik3s server`
    # deploys them, as K3s does; servers built in code (tests, benchmarks, minik3s.Cluster
    # unless asked) start without them
    addons: bool = False
    # kube-apiserver --disable-admission-plugins (only OPTIONAL_ADMISSION_PLUGINS)
    disable_admission_plugins: set[str] = Field(default_factory=set)
    node_monitor_grace_period: float = Field(50.0, gt=0)
    node_monitor_period: float = Field(5.0, gt=0)  # how often the node lifecycle controller checks Leases
    horizontal_pod_autoscaler_sync_period: float = Field(15.0, gt=0)
    history_window: int = Field(100_000, ge=100)
    compact_interval: float = Field(60.0, gt=0)
    # etcd's --unsafe-no-fsync: commits not fsynced (they survive the process, not a machine crash)
    unsafe_no_fsync: bool = False
    event_ttl: float = Field(3600.0, gt=0)  # kube-apiserver --event-ttl (1h)
    # TLS (docs/security.md): None = on unless `bind` is a loopback address; False is refused
    # beyond loopback (plain HTTP is served on loopback only)
    tls: bool | None = None
    tls_san: list[str] = Field(default_factory=list)  # extra serving-certificate names (--tls-san)
    token_auth_file: Path | None = None  # kube-apiserver --token-auth-file CSV (TLS only)
    # connection and request bounds (apiserver.serving, apiserver.keys.ServingLimits)
    min_request_timeout: float = Field(1800.0, gt=0)  # kube-apiserver --min-request-timeout
    request_timeout: float = Field(60.0, gt=0)  # kube-apiserver --request-timeout (body reads)
    read_header_timeout: float = Field(32.0, gt=0)  # kube-apiserver's http.Server ReadHeaderTimeout
    idle_timeout: float = Field(90.0, gt=0)  # kube-apiserver's http.Server IdleTimeout
    watch_send_timeout: float = Field(10.0, gt=0)  # a watch whose client reads nothing this long is closed

    @field_validator("tls_san")
    @classmethod
    def _sans_are_names_or_addresses(cls, sans: list[str]) -> list[str]:
        for san in sans:
            if not is_ip_or_dns_name(san):
                raise ValueError(f"{san!r} is neither an IP address nor a DNS name (lower-case letters, digits, "
                                 f"'-' and '.', optionally starting with '*.')")
        return sans

    @field_validator("disable_admission_plugins")
    @classmethod
    def _known_admission_plugins(cls, names: set[str]) -> set[str]:
        for name in sorted(names):
            if name not in OPTIONAL_ADMISSION_PLUGINS:
                raise ValueError(f"admission plugin {name!r} cannot be disabled (one of: "
                                 f"{', '.join(OPTIONAL_ADMISSION_PLUGINS)})")
        return names

    @model_validator(mode="after")
    def _plain_http_only_on_loopback(self) -> ServerConfig:
        if self.tls is False and not is_loopback(self.bind):
            raise ValueError(f"bind: plain HTTP is served only on a loopback address, and {self.bind} is not one: "
                             f"drop --no-tls (TLS with client authentication is always on beyond loopback)")
        if self.token_auth_file is not None and not self.tls_enabled:
            raise ValueError("token_auth_file: bearer tokens are authenticated only with TLS on (add --tls)")
        return self

    @property
    def tls_enabled(self) -> bool:
        return self.tls if self.tls is not None else not is_loopback(self.bind)

    def enabled(self, component: str) -> bool:
        return component not in self.disable

    @property
    def service_account_admission(self) -> bool:
        """The ServiceAccount admission plugin runs unless disabled, and only while the
        controllers run: without the ServiceAccount controller no namespace gets its `default`
        account and the plugin would refuse every pod (upstream's integration and scheduler_perf
        API servers disable it for the same reason)."""
        return "ServiceAccount" not in self.disable_admission_plugins and self.enabled("controllers")

    @property
    def storage_protection_admission(self) -> bool:
        """StorageObjectInUseProtection runs unless disabled, and only while the controllers run
        (the pvc-protection and pv-protection controllers remove the finalizers it adds)."""
        return "StorageObjectInUseProtection" not in self.disable_admission_plugins and self.enabled("controllers")

    @property
    def db_path(self) -> Path:
        return self.data_dir / "state.db"

    @property
    def kubeconfig_path(self) -> Path:
        return self.data_dir / "kubeconfig.yaml"
