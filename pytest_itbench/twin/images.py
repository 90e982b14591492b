"""The image registries the twin's nodes pull from: which references exist, for which CPU architectures,
and what each image holds.

A node pulls a reference the way containerd does: the reference is
normalized (``nginx`` is ``docker.io/library/nginx:latest``), its registry
resolves the repository and the tag, and the image index picks the node's
platform. What cannot be resolved fails with containerd's own words, as the
kubelet then reports them (``rpc error: code = NotFound desc = failed to pull
and unpack image ...``). A repository that exists holds the tags its
``tags`` pattern matches; an image index serves the architectures listed,
while a single-architecture image is pulled whatever the node's platform is,
and fails only when its entrypoint is executed (``exec format error``).

Beside the registry's view (digest, size), each repository carries the
image's configuration and what the image holds: its entrypoint and command,
the programs on its ``PATH``, the ports it exposes and a runtime profile
(what its default process does, how long it takes to start, its memory and
CPU use, its first log lines). The container behaviour model reads these to
decide what a container built from the image does.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Iterable

from .containers.programs import BUSYBOX, DEBIAN, DISTROLESS

MiB = 1024 * 1024
DEFAULT_ARCHITECTURES = ("amd64", "arm64")
NODE_RESOLVER = "172.18.0.1:53"  # the resolver of kind's docker network, which nodes use to reach registries

# ---- references ------------------------------------------------------------------------------------------

_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*(?::[0-9]+)?)"
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*"
_REFERENCE = re.compile(
    rf"^(?P<name>(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)"
    r"(?::(?P<tag>[\w][\w.-]{0,127}))?"
    r"(?:@(?P<digest>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$")
_HEX64 = re.compile(r"^[a-f0-9]{64}$")


class InvalidReference(ValueError):
    """The reference cannot be parsed (the message is the distribution/reference library's)."""


@dataclass(frozen=True)
class Reference:
    """A normalized image reference: ``docker.io/library/nginx:1.27`` or ``...@sha256:...``."""

    domain: str
    path: str
    tag: str | None
    digest: str | None

    @property
    def repository(self) -> str:
        return f"{self.domain}/{self.path}"

    def __str__(self) -> str:
        if self.digest:
            return f"{self.repository}@{self.digest}"
        return f"{self.repository}:{self.tag}"


def parse_reference(text: str) -> Reference:
    """Parse and normalize as the kubelet and containerd do, adding the default tag ``latest``."""
    if _HEX64.match(text):
        raise InvalidReference(f"invalid repository name ({text}), cannot specify 64-byte hexadecimal strings")
    domain, remainder = _split_domain(text)
    name_part = re.split(r"[:@]", remainder, maxsplit=1)[0]
    if name_part.lower() != name_part:
        raise InvalidReference(f"invalid reference format: repository name ({name_part}) must be lowercase")
    match = _REFERENCE.match(f"{domain}/{remainder}")
    if match is None:
        raise InvalidReference("invalid reference format")
    path = match.group("name")[len(domain) + 1:]
    tag, digest = match.group("tag"), match.group("digest")
    if tag is None and digest is None:
        tag = "latest"
    return Reference(domain, path, tag, digest)


def _split_domain(text: str) -> tuple[str, str]:
    first, slash, rest = text.partition("/")
    if not slash or ("." not in first and ":" not in first and first != "localhost" and first.lower() == first):
        domain, remainder = "docker.io", text
    else:
        domain, remainder = first, rest
    if domain == "index.docker.io":
        domain = "docker.io"
    if domain == "docker.io" and "/" not in remainder:
        remainder = "library/" + remainder
    return domain, remainder


# ---- what an image holds -------------------------------------------------------------------------------------

SERVER, SHELL, INTERPRETER, TOOL = "server", "shell", "interpreter", "tool"


@dataclass(frozen=True)
class Profile:
    """What the image's own process does when it runs (the behaviour model's defaults for the image).

    ``role`` says what the default command does: a ``server`` runs until stopped,
    a ``shell`` or ``interpreter`` without a terminal reads an empty standard
    input and exits 0 at once, a ``tool`` prints ``usage`` and exits with
    ``usage_exit``.
    """

    role: str = SERVER
    startup_seconds: float = 1.0
    memory: int = 20 * MiB  # working set once started
    cpu_millicores: float = 2.0  # idle use once started
    startup_millicores: float = 50.0
    log: tuple[str, ...] = ()  # first lines, with {time:FORMAT} and {version} placeholders
    access_log: str | None = None  # a line per HTTP request it serves, e.g. nginx's combined format
    stop_seconds: float = 0.2  # from SIGTERM to exit
    stop_exit_code: int = 0
    http: bool = True  # its ports answer HTTP (else plain TCP, or gRPC when ``grpc``)
    grpc: bool = False  # its ports serve the gRPC health service
    health_paths: tuple[str, ...] = ()  # HTTP paths it answers besides the common ones
    requires_env: tuple[tuple[str, ...], tuple[str, ...], int] | None = None  # (any of these vars, else print, exit)
    usage: tuple[str, ...] = ()
    usage_exit: int = 0


@dataclass(frozen=True)
class ImageConfig:
    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    workdir: str = "/"
    ports: tuple[int, ...] = ()  # EXPOSE
    flavor: str = DEBIAN  # which base tools it has (see containers/programs.py)
    programs: frozenset[str] = frozenset()  # executables beyond the base tools
    servers: frozenset[str] = frozenset()  # which of them run until stopped
    profile: Profile = field(default_factory=Profile)


@dataclass(frozen=True)
class Repository:
    name: str  # docker.io/library/nginx
    tags: re.Pattern
    size: int  # bytes, as containerd reports a pulled image
    config: ImageConfig
    architectures: tuple[str, ...] = DEFAULT_ARCHITECTURES
    single_architecture: bool = False  # a plain manifest, not an index: pulled on any platform


@dataclass(frozen=True)
class Image:
    """An image as a node holds it after a pull."""

    reference: Reference
    digest: str  # the manifest digest
    image_id: str  # the config digest
    size: int
    architecture: str
    config: ImageConfig

    @property
    def repo_digest(self) -> str:
        """``docker.io/library/nginx@sha256:...``: what the kubelet reports as the container's imageID."""
        return f"{self.reference.repository}@{self.digest}"

    @property
    def version(self) -> str:
        tag = self.reference.tag or "latest"
        return tag.split("-")[0]


class PullError(Exception):
    """A pull the registry or containerd refused; ``str()`` is the error as the kubelet receives it."""

    def __init__(self, code: str, detail: str):
        super().__init__(f"rpc error: code = {code} desc = {detail}")  # the gRPC status, as the CRI returns it


# ---- registries --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RegistryHost:
    """How one registry answers for a repository it does not have (the tag-not-found answer is common)."""

    missing_repository: str  # {ref}, {path} and {tag} placeholders


_HOSTS = {
    "docker.io": RegistryHost("pull access denied, repository does not exist or may require authorization: "
                              "server message: insufficient_scope: authorization failed"),
    "ghcr.io": RegistryHost("failed to authorize: failed to fetch anonymous token: unexpected status from GET "
                            "request to https://ghcr.io/token?scope=repository%3A{quoted_path}%3Apull"
                            "&service=ghcr.io: 401 Unauthorized"),
    "quay.io": RegistryHost("unexpected status from HEAD request to https://quay.io/v2/{path}/manifests/{tag}: "
                            "401 UNAUTHORIZED"),
    "registry.k8s.io": RegistryHost("{ref}: not found"),
    "gcr.io": RegistryHost("{ref}: not found"),
    "public.ecr.aws": RegistryHost("{ref}: not found"),
    "mcr.microsoft.com": RegistryHost("{ref}: not found"),
    "registry.gitlab.com": RegistryHost("{ref}: not found"),
}


class Registry:
    """Every repository the nodes can pull, keyed by normalized name."""

    def __init__(self, repositories: Iterable[Repository]):
        self.repositories = {repo.name: repo for repo in repositories}
        self._served_digests: dict[tuple[str, str], str] = {}  # (repository, digest) -> tag it was served for

    def pull(self, ref: Reference, architecture: str) -> Image:
        """The image ``ref`` names for a node of ``architecture``, or :class:`PullError` as containerd words it."""
        name = str(ref)
        fail = f'failed to pull and unpack image "{name}"'
        resolve = f'{fail}: failed to resolve reference "{name}"'
        repo = self.repositories.get(ref.repository)
        host = _HOSTS.get(ref.domain)
        if repo is None:
            if host is None:
                raise PullError("Unknown", f"{resolve}: {_unreachable(ref)}")
            detail = host.missing_repository.format(ref=name, path=ref.path, tag=ref.tag or ref.digest,
                                                    quoted_path=ref.path.replace("/", "%2F"))
            code = "NotFound" if detail.endswith("not found") else "Unknown"
            raise PullError(code, f"{resolve}: {detail}")
        tag = ref.tag
        if ref.digest is not None:
            tag = self._served_digests.get((repo.name, ref.digest))
            if tag is None:
                raise PullError("NotFound", f"{resolve}: {name}: not found")
        if tag is None or not repo.tags.fullmatch(tag):
            raise PullError("NotFound", f"{resolve}: {name}: not found")
        if repo.single_architecture:
            arch = repo.architectures[0]
        elif architecture in repo.architectures:
            arch = architecture
        else:
            raise PullError("NotFound", f"{fail}: no match for platform in manifest: not found")
        digest = "sha256:" + _digest(f"manifest {repo.name}:{tag}")
        self._served_digests[(repo.name, digest)] = tag
        size = repo.size + int(_digest(f"size {repo.name}:{tag}")[:6], 16) % max(repo.size // 50, 1)
        return Image(ref, digest, "sha256:" + _digest(f"config {repo.name}:{tag}:{arch}"), size, arch,
                     repo.config)


def _unreachable(ref: Reference) -> str:
    host = ref.domain.split(":")[0]
    url = f"https://{ref.domain}/v2/{ref.path}/manifests/{ref.tag or ref.digest}"
    if host in ("localhost", "127.0.0.1") or re.fullmatch(r"[0-9.]+", host):
        port = ref.domain.partition(":")[2] or "443"
        address = "127.0.0.1" if host == "localhost" else host
        return f'failed to do request: Head "{url}": dial tcp {address}:{port}: connect: connection refused'
    return f'failed to do request: Head "{url}": dial tcp: lookup {host} on {NODE_RESOLVER}: no such host'


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# ---- the data ---------------------------------------------------------------------------------------------------

_BASE_SHELL = Profile(role=SHELL, memory=1 * MiB, cpu_millicores=0, startup_seconds=0)

NGINX_LOG = (
    "/docker-entrypoint.sh: /docker-entrypoint.d/ is not empty, will attempt to perform configuration",
    "/docker-entrypoint.sh: Looking for shell scripts in /docker-entrypoint.d/",
    "/docker-entrypoint.sh: Launching /docker-entrypoint.d/10-listen-on-ipv6-by-default.sh",
    "10-listen-on-ipv6-by-default.sh: info: Getting the checksum of /etc/nginx/conf.d/default.conf",
    "10-listen-on-ipv6-by-default.sh: info: Enabled listen on IPv6 in /etc/nginx/conf.d/default.conf",
    "/docker-entrypoint.sh: Sourcing /docker-entrypoint.d/15-local-resolvers.envsh",
    "/docker-entrypoint.sh: Launching /docker-entrypoint.d/20-envsubst-on-templates.sh",
    "/docker-entrypoint.sh: Launching /docker-entrypoint.d/30-tune-worker-processes.sh",
    "/docker-entrypoint.sh: Configuration complete; ready for start up",
    "{time:%Y/%m/%d %H:%M:%S} [notice] 1#1: using the \"epoll\" event method",
    "{time:%Y/%m/%d %H:%M:%S} [notice] 1#1: nginx/{version}",
    "{time:%Y/%m/%d %H:%M:%S} [notice] 1#1: OS: Linux 6.1.0-28-cloud-amd64",
    "{time:%Y/%m/%d %H:%M:%S} [notice] 1#1: getrlimit(RLIMIT_NOFILE): 1048576:1048576",
    "{time:%Y/%m/%d %H:%M:%S} [notice] 1#1: start worker processes",
    "{time:%Y/%m/%d %H:%M:%S} [notice] 1#1: start worker process 29",
)
NGINX_ACCESS = '{client} - - [{time:%d/%b/%Y:%H:%M:%S +0000}] "GET {path} HTTP/1.1" {status} {bytes} "-" "{agent}" "-"'
NGINX = Profile(startup_seconds=0.5, memory=6 * MiB, cpu_millicores=0.5, log=NGINX_LOG, access_log=NGINX_ACCESS)


def _repo(name: str, tags: str, size_mb: float, *, architectures: tuple[str, ...] = DEFAULT_ARCHITECTURES,
          single_architecture: bool = False, **config) -> Repository:
    profile = config.pop("profile", Profile())
    programs = frozenset(config.pop("programs", ()))
    servers = frozenset(config.pop("servers", ()))
    return Repository(name, re.compile(tags), int(size_mb * 1_000_000),
                      ImageConfig(programs=programs | servers, servers=servers, profile=profile, **config),
                      architectures, single_architecture)


def _python_like(name: str, tags: str, size_mb: float, program: str, aliases: Iterable[str], memory: int,
                 **config) -> Repository:
    return _repo(name, tags, size_mb, cmd=(program,), programs=(program, *aliases),
                 profile=Profile(role=INTERPRETER, memory=memory, cpu_millicores=2.0, startup_seconds=1.5), **config)


_LONG_DEMO = ("accountingservice", "adservice", "cartservice", "checkoutservice", "currencyservice",
              "emailservice", "frauddetectionservice", "frontend", "frontendproxy", "imageprovider", "kafka",
              "loadgenerator", "paymentservice", "productcatalogservice", "quoteservice", "recommendationservice",
              "shippingservice", "flagd-ui")
_SHORT_DEMO = ("accounting", "ad", "cart", "checkout", "currency", "email", "fraud-detection", "frontend",
               "frontend-proxy", "image-provider", "kafka", "load-generator", "payment", "product-catalog", "quote",
               "recommendation", "shipping", "flagd-ui")
_DEMO_TAGS = (rf"(?:(?:1\.(?:[0-9]|1[0-2])\.[0-9]|latest)-(?:{'|'.join(map(re.escape, _LONG_DEMO))})"
              rf"|(?:(?:1\.1[12]\.[0-9]|2\.0\.[0-2]|2\.1\.[0-3]|latest)-(?:{'|'.join(map(re.escape, _SHORT_DEMO))}))"
              r"|(?:(?:2\.1\.[0-3]|latest)-postgresql))")  # the demo's own postgres build, since 2.1.0


def _postgres_profile(version: str) -> Profile:
    """The official postgres image's server (``version`` is the text its start-up line names)."""
    return Profile(memory=40 * MiB, startup_seconds=3, cpu_millicores=3, http=False, stop_seconds=1, log=(
        "The files belonging to this database system will be owned by user \"postgres\".",
        "PostgreSQL init process complete; ready for start up.",
        f"{{time:%Y-%m-%d %H:%M:%S.000 UTC}} [1] LOG:  starting PostgreSQL {version}",
        "{time:%Y-%m-%d %H:%M:%S.000 UTC} [1] LOG:  listening on IPv4 address \"0.0.0.0\", port 5432",
        "{time:%Y-%m-%d %H:%M:%S.000 UTC} [1] LOG:  database system is ready to accept connections"),
        requires_env=(("POSTGRES_PASSWORD", "POSTGRES_HOST_AUTH_METHOD"), (
            "Error: Database is uninitialized and superuser password is not specified.",
            "       You must specify POSTGRES_PASSWORD to a non-empty value for the",
            "       superuser. For example, \"-e POSTGRES_PASSWORD=password\" on \"docker run\"."), 1))


def _demo_profile(memory_mib: float, startup: float, cpu: float, *, grpc: bool = True) -> Profile:
    return Profile(memory=int(memory_mib * MiB), startup_seconds=startup, cpu_millicores=cpu, grpc=grpc,
                   http=not grpc, stop_exit_code=143, startup_millicores=200)


# Memory, start-up time and idle CPU of each OpenTelemetry Demo service, from their runtimes (JVM, .NET, Go,
# Node.js, Python, Ruby, PHP, Rust, C++) and the limits the demo sets for them.
DEMO_SERVICES: dict[str, Profile] = {
    "accounting": _demo_profile(55, 3, 2), "ad": _demo_profile(180, 12, 5), "cart": _demo_profile(60, 3, 3),
    "checkout": _demo_profile(8, 0.5, 1), "currency": _demo_profile(3, 0.5, 1), "email": _demo_profile(50, 3, 2,
                                                                                                     grpc=False),
    "fraud-detection": _demo_profile(200, 15, 5), "frontend": _demo_profile(100, 4, 5, grpc=False),
    "frontend-proxy": _demo_profile(25, 1, 3, grpc=False), "image-provider": NGINX,
    "kafka": _demo_profile(450, 15, 20, grpc=False), "load-generator": _demo_profile(180, 5, 10, grpc=False),
    "payment": _demo_profile(60, 2, 3), "product-catalog": _demo_profile(10, 0.5, 1),
    "quote": _demo_profile(20, 1, 1, grpc=False), "recommendation": _demo_profile(50, 3, 3),
    "shipping": _demo_profile(5, 0.5, 1), "flagd-ui": _demo_profile(80, 4, 3, grpc=False),
    "postgresql": _postgres_profile("17.6"),  # FROM postgres:17.6
}
_DEMO_LONG_TO_SHORT = dict(zip(_LONG_DEMO, _SHORT_DEMO))


def demo_service(tag: str) -> str | None:
    """The OpenTelemetry Demo service an image tag names (``1.12.0-adservice`` and ``2.0.2-ad`` are ``ad``)."""
    _, _, service = tag.partition("-")
    service = _DEMO_LONG_TO_SHORT.get(service, service)
    return service if service in DEMO_SERVICES else None


_HOTEL_SERVICES = ("frontend", "geo", "profile", "rate", "recommendation", "reservation", "search", "user")
_HOTEL = Profile(memory=12 * MiB, startup_seconds=1, cpu_millicores=2, grpc=True)
_JVM = Profile(role=INTERPRETER, memory=300 * MiB, startup_seconds=12, cpu_millicores=8, startup_millicores=800,
               stop_exit_code=143)

REPOSITORIES: tuple[Repository, ...] = (
    # ---- web servers and proxies
    _repo("docker.io/library/nginx",
          r"(?:1\.(?:1[5-9]|2[0-9])(?:\.[0-9]{1,2})?|stable|mainline|latest)(?:-(?:alpine|alpine-slim|alpine-perl|"
          r"perl|bookworm|bookworm-perl|bullseye|alpine3\.[0-9]{2}))?|alpine|alpine-slim|perl|bookworm",
          72, entrypoint=("/docker-entrypoint.sh",), cmd=("nginx", "-g", "daemon off;"), ports=(80,),
          servers=("nginx", "nginx-debug"), programs=("envsubst", "curl"), profile=NGINX),
    _repo("docker.io/nginxinc/nginx-unprivileged",
          r"(?:1\.(?:2[0-9])(?:\.[0-9]{1,2})?|stable|mainline|latest)(?:-(?:alpine|alpine-slim|bookworm))?",
          72, entrypoint=("/docker-entrypoint.sh",), cmd=("nginx", "-g", "daemon off;"), ports=(8080,),
          servers=("nginx",), profile=NGINX),
    _repo("docker.io/library/httpd", r"2(?:\.4(?:\.[0-9]{1,2})?)?(?:-alpine)?|latest|alpine", 58,
          cmd=("httpd-foreground",), ports=(80,), servers=("httpd-foreground", "httpd"),
          profile=Profile(memory=8 * MiB, startup_seconds=0.5, stop_exit_code=0)),
    _repo("docker.io/library/haproxy", r"(?:2\.[0-9]|3\.[0-2])(?:\.[0-9]{1,2})?(?:-alpine)?|lts|latest", 40,
          entrypoint=("docker-entrypoint.sh",), cmd=("haproxy", "-f", "/usr/local/etc/haproxy/haproxy.cfg"),
          servers=("haproxy",), profile=Profile(memory=12 * MiB)),
    _repo("docker.io/envoyproxy/envoy", r"v1\.(?:2[5-9]|3[0-4])(?:\.[0-9]{1,2})?|distroless-v1\.3[0-4]\.[0-9]", 65,
          entrypoint=("/docker-entrypoint.sh",), cmd=("envoy", "-c", "/etc/envoy/envoy.yaml"), ports=(10000,),
          servers=("envoy",), profile=Profile(memory=25 * MiB, startup_seconds=1)),
    _repo("docker.io/library/traefik", r"v?[23](?:\.[0-9]{1,2}(?:\.[0-9]{1,2})?)?|latest", 50, entrypoint=("/entrypoint.sh",),
          cmd=("traefik",), ports=(80,), servers=("traefik",), flavor=BUSYBOX, profile=Profile(memory=35 * MiB)),
    # ---- base images and language runtimes
    _repo("docker.io/library/busybox",
          r"1\.3[0-7](?:\.[0-9])?(?:-(?:glibc|musl|uclibc))?|latest|stable|musl|glibc|uclibc", 2.2,
          cmd=("sh",), flavor=BUSYBOX, programs=("wget", "nc", "nslookup", "ping", "vi", "top", "free", "df"),
          profile=_BASE_SHELL),
    _repo("docker.io/library/alpine", r"3\.(?:1[0-9]|2[0-2])(?:\.[0-9]{1,2})?|latest|edge", 3.6,
          cmd=("/bin/sh",), flavor=BUSYBOX, programs=("apk", "wget", "nc", "nslookup", "ping"), profile=_BASE_SHELL),
    _repo("docker.io/library/debian",
          r"(?:bookworm|bullseye|buster|trixie|stable|1[0-3](?:\.[0-9]{1,2})?)(?:-slim|-[0-9]{8})?|latest", 49,
          cmd=("bash",), programs=("apt-get", "apt", "dpkg"), profile=_BASE_SHELL),
    _repo("docker.io/library/ubuntu", r"(?:2[0-5]\.(?:04|10)|jammy|noble|focal|oracular|plucky|rolling|latest)", 29,
          cmd=("/bin/bash",), programs=("apt-get", "apt", "dpkg"), profile=_BASE_SHELL),
    _python_like("docker.io/library/python",
                 r"(?:3(?:\.(?:[89]|1[0-4])(?:\.[0-9]{1,2})?)?|latest)(?:-(?:slim|alpine|bookworm|bullseye|"
                 r"slim-bookworm|slim-bullseye|alpine3\.[0-9]{2}))?|slim|alpine|bookworm",
                 50, "python3", ("python", "pip", "pip3", "pydoc"), 24 * MiB),
    _repo("docker.io/library/node",
          r"(?:(?:1[4-9]|2[0-5])(?:\.[0-9]{1,2}(?:\.[0-9]{1,2})?)?|lts|current|latest)(?:-(?:alpine|slim|bookworm|"
          r"bullseye|bookworm-slim|bullseye-slim|alpine3\.[0-9]{2}))?|alpine|slim|lts-alpine|lts-slim",
          60, entrypoint=("docker-entrypoint.sh",), cmd=("node",), programs=("node", "npm", "npx", "yarn", "corepack"),
          profile=Profile(role=INTERPRETER, memory=45 * MiB, cpu_millicores=3, startup_seconds=1.5,
                          stop_exit_code=143)),
    _repo("docker.io/library/golang",
          r"(?:1\.(?:1[6-9]|2[0-5])(?:\.[0-9]{1,2})?|latest)(?:-(?:alpine|bookworm|bullseye|alpine3\.[0-9]{2}))?|alpine",
          280, cmd=("bash",), programs=("go", "gofmt", "git"),
          profile=Profile(role=SHELL, memory=15 * MiB, cpu_millicores=1, startup_seconds=0.3, stop_exit_code=2)),
    _repo("docker.io/library/eclipse-temurin",
          r"(?:8|11|17|21|23|24)(?:\.[0-9.+_]+)?(?:-(?:jdk|jre))?(?:-(?:alpine|jammy|noble|focal))?|latest", 190,
          cmd=("jshell",), programs=("java", "javac", "jshell", "jar"), profile=_JVM),
    _repo("docker.io/library/openjdk", r"(?:8|11|17|18|19|20|21|22)(?:-(?:jdk|jre|slim|alpine|jdk-slim|oracle))?",
          190, cmd=("jshell",), programs=("java", "javac", "jshell", "jar"), profile=_JVM),
    _python_like("docker.io/library/perl", r"5(?:\.[0-9]{2}(?:\.[0-9])?)?(?:-slim)?|latest|slim", 330, "perl",
                 ("cpan", "perldoc"), 8 * MiB),
    _python_like("docker.io/library/ruby", r"(?:2\.7|3\.[0-4])(?:\.[0-9])?(?:-(?:slim|alpine|bookworm))?|latest|slim",
                 320, "irb", ("ruby", "gem", "bundle", "bundler"), 30 * MiB),
    _repo("docker.io/curlimages/curl", r"[78]\.[0-9]{1,2}\.[0-9]|latest", 12, entrypoint=("/entrypoint.sh",),
          cmd=("curl",), flavor=BUSYBOX, programs=("curl",),
          profile=Profile(role=TOOL, memory=2 * MiB, startup_seconds=0,
                          usage=("curl: try 'curl --help' or 'curl --manual' for more information",), usage_exit=2)),
    _repo("docker.io/bitnami/kubectl", r"1\.(?:2[0-9]|3[0-3])(?:\.[0-9]{1,2})?|latest", 80,
          entrypoint=("kubectl",), programs=("kubectl",),
          profile=Profile(role=TOOL, memory=20 * MiB, startup_seconds=0, usage=(
              "kubectl controls the Kubernetes cluster manager.",), usage_exit=0)),
    _repo("registry.k8s.io/pause", r"3\.(?:[1-9]|10)", 0.3, entrypoint=("/pause",), flavor=DISTROLESS,
          servers=("/pause",), profile=Profile(memory=256 * 1024, cpu_millicores=0, startup_seconds=0, http=False)),
    # ---- data stores and brokers
    _repo("docker.io/library/redis", r"(?:[67](?:\.[0-9](?:\.[0-9]{1,2})?)?|latest)(?:-(?:alpine|bookworm))?|alpine",
          45, entrypoint=("docker-entrypoint.sh",), cmd=("redis-server",), ports=(6379,),
          servers=("redis-server",), programs=("redis-cli",),
          profile=Profile(memory=4 * MiB, startup_seconds=0.3, http=False, log=(
              "1:C {time:%d %b %Y %H:%M:%S.000} # oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo",
              "1:C {time:%d %b %Y %H:%M:%S.000} # Redis version={version}, bits=64, commit=00000000, modified=0, "
              "pid=1, just started",
              "1:M {time:%d %b %Y %H:%M:%S.000} * Running mode=standalone, port=6379.",
              "1:M {time:%d %b %Y %H:%M:%S.000} * Server initialized",
              "1:M {time:%d %b %Y %H:%M:%S.000} * Ready to accept connections tcp"))),
    _repo("docker.io/valkey/valkey",
          r"(?:7\.2|8(?:\.[01])?)(?:\.[0-9]{1,2})?(?:-(?:alpine|bookworm))?|latest|alpine|unstable", 45,
          entrypoint=("docker-entrypoint.sh",), cmd=("valkey-server",), ports=(6379,),
          servers=("valkey-server", "redis-server"), programs=("valkey-cli", "redis-cli"),
          profile=Profile(memory=4 * MiB, startup_seconds=0.3, http=False, log=(
              "1:C {time:%d %b %Y %H:%M:%S.000} * oO0OoO0OoO0Oo Valkey is starting oO0OoO0OoO0Oo",
              "1:M {time:%d %b %Y %H:%M:%S.000} * Server initialized",
              "1:M {time:%d %b %Y %H:%M:%S.000} * Ready to accept connections tcp"))),
    _repo("docker.io/library/postgres",
          r"(?:1[1-8](?:\.[0-9]{1,2})?|latest)(?:-(?:alpine|bookworm|bullseye|alpine3\.[0-9]{2}))?|alpine", 160,
          entrypoint=("docker-entrypoint.sh",), cmd=("postgres",), ports=(5432,), servers=("postgres",),
          programs=("psql", "pg_isready", "pg_dump", "initdb"), profile=_postgres_profile("{version}")),
    _repo("docker.io/library/mysql", r"(?:5\.7|8\.[0-4]|9\.[0-3])(?:\.[0-9]{1,2})?(?:-(?:oracle|debian))?|lts|latest",
          170, entrypoint=("docker-entrypoint.sh",), cmd=("mysqld",), ports=(3306, 33060), servers=("mysqld",),
          programs=("mysql", "mysqladmin"),
          profile=Profile(memory=360 * MiB, startup_seconds=10, cpu_millicores=5, http=False, stop_seconds=2,
                          requires_env=(("MYSQL_ROOT_PASSWORD", "MYSQL_ALLOW_EMPTY_PASSWORD",
                                         "MYSQL_RANDOM_ROOT_PASSWORD"), (
                              "{time:%Y-%m-%d %H:%M:%S+00:00} [ERROR] [Entrypoint]: Database is uninitialized and "
                              "password option is not specified",
                              "    You need to specify one of the following as an environment variable:",
                              "    - MYSQL_ROOT_PASSWORD", "    - MYSQL_ALLOW_EMPTY_PASSWORD",
                              "    - MYSQL_RANDOM_ROOT_PASSWORD"), 1))),
    _repo("docker.io/library/mongo", r"(?:[4-8](?:\.[0-9](?:\.[0-9]{1,2})?)?|latest)(?:-(?:jammy|noble|focal))?",
          250, entrypoint=("docker-entrypoint.sh",), cmd=("mongod",), ports=(27017,), servers=("mongod",),
          programs=("mongosh", "mongo"),
          profile=Profile(memory=80 * MiB, startup_seconds=2, cpu_millicores=6, http=False, stop_seconds=1)),
    _repo("docker.io/library/memcached", r"1\.6(?:\.[0-9]{1,2})?(?:-(?:alpine|bookworm))?|latest|alpine", 30,
          entrypoint=("docker-entrypoint.sh",), cmd=("memcached",), ports=(11211,), servers=("memcached",),
          profile=Profile(memory=3 * MiB, startup_seconds=0.2, http=False)),
    _repo("docker.io/library/rabbitmq",
          r"(?:3\.1[0-3]|4\.[01])(?:\.[0-9]{1,2})?(?:-management)?(?:-alpine)?|latest|management|alpine", 110,
          entrypoint=("docker-entrypoint.sh",), cmd=("rabbitmq-server",), ports=(5672, 15672),
          servers=("rabbitmq-server",), programs=("rabbitmqctl",),
          profile=Profile(memory=120 * MiB, startup_seconds=8, cpu_millicores=10, http=False)),
    _repo("docker.io/apache/kafka", r"3\.[5-9]\.[0-9]|4\.[01]\.[0-9]|latest", 400,
          entrypoint=("/__cacert_entrypoint.sh",), cmd=("/etc/kafka/docker/run",), ports=(9092,),
          servers=("/etc/kafka/docker/run",), programs=("java",),
          profile=Profile(memory=380 * MiB, startup_seconds=12, cpu_millicores=15, startup_millicores=900,
                          http=False, stop_seconds=3, stop_exit_code=143)),
    _repo("docker.io/bitnami/kafka", r"3\.[5-9](?:\.[0-9])?(?:-debian-12-r[0-9]{1,2})?|4\.0(?:\.[0-9])?|latest", 450,
          entrypoint=("/opt/bitnami/scripts/kafka/entrypoint.sh",), cmd=("/opt/bitnami/scripts/kafka/run.sh",),
          ports=(9092,), servers=("/opt/bitnami/scripts/kafka/run.sh",), programs=("java",),
          profile=Profile(memory=380 * MiB, startup_seconds=12, cpu_millicores=15, http=False, stop_exit_code=143)),
    _repo("docker.io/bitnami/postgresql", r"1[1-7](?:\.[0-9]{1,2}){0,2}(?:-debian-12-r[0-9]{1,2})?|latest", 280,
          entrypoint=("/opt/bitnami/scripts/postgresql/entrypoint.sh",),
          cmd=("/opt/bitnami/scripts/postgresql/run.sh",), ports=(5432,),
          servers=("/opt/bitnami/scripts/postgresql/run.sh", "postgres"), programs=("psql", "pg_isready"),
          profile=Profile(memory=40 * MiB, startup_seconds=4, http=False)),
    _repo("docker.io/bitnami/redis", r"[67](?:\.[0-9]{1,2}){0,2}(?:-debian-12-r[0-9]{1,2})?|latest", 110,
          entrypoint=("/opt/bitnami/scripts/redis/entrypoint.sh",), cmd=("/opt/bitnami/scripts/redis/run.sh",),
          ports=(6379,), servers=("/opt/bitnami/scripts/redis/run.sh", "redis-server"), programs=("redis-cli",),
          profile=Profile(memory=5 * MiB, startup_seconds=0.5, http=False)),
    _repo("docker.io/opensearchproject/opensearch", r"2\.(?:[0-9]|1[0-9])\.[0-9]|3\.[0-2]\.[0-9]|latest", 850,
          entrypoint=("./opensearch-docker-entrypoint.sh",), cmd=("opensearch",), ports=(9200, 9300, 9600),
          servers=("opensearch", "./opensearch-docker-entrypoint.sh"),
          profile=Profile(memory=700 * MiB, startup_seconds=25, cpu_millicores=20, startup_millicores=1500,
                          health_paths=("/_cluster/health",))),
    _repo("docker.io/hashicorp/consul", r"1\.(?:1[0-9]|2[0-1])(?:\.[0-9]{1,2})?|latest", 60,
          entrypoint=("docker-entrypoint.sh",), cmd=("agent", "-dev", "-client", "0.0.0.0"), ports=(8500, 8600),
          servers=("consul", "agent"), flavor=BUSYBOX,
          profile=Profile(memory=40 * MiB, startup_seconds=2, health_paths=("/v1/status/leader",))),
    # ---- observability
    _repo("quay.io/prometheus/prometheus", r"v2\.(?:[3-5][0-9])\.[0-9]|v3\.[0-5]\.[0-9]|latest|main", 110,
          entrypoint=("/bin/prometheus",), cmd=("--config.file=/etc/prometheus/prometheus.yml",), ports=(9090,),
          flavor=BUSYBOX, servers=("/bin/prometheus", "prometheus"), programs=("promtool",),
          profile=Profile(memory=60 * MiB, startup_seconds=2, cpu_millicores=8, health_paths=("/-/healthy",
                                                                                               "/-/ready"))),
    _repo("docker.io/prom/prometheus", r"v2\.(?:[3-5][0-9])\.[0-9]|v3\.[0-5]\.[0-9]|latest|main", 110,
          entrypoint=("/bin/prometheus",), cmd=("--config.file=/etc/prometheus/prometheus.yml",), ports=(9090,),
          flavor=BUSYBOX, servers=("/bin/prometheus", "prometheus"), programs=("promtool",),
          profile=Profile(memory=60 * MiB, startup_seconds=2, cpu_millicores=8, health_paths=("/-/healthy",
                                                                                               "/-/ready"))),
    _repo("quay.io/prometheus/node-exporter", r"v1\.[5-9]\.[0-9]|latest", 12, entrypoint=("/bin/node_exporter",),
          ports=(9100,), flavor=BUSYBOX, servers=("/bin/node_exporter", "node_exporter"),
          profile=Profile(memory=12 * MiB)),
    _repo("quay.io/prometheus/alertmanager", r"v0\.2[5-8]\.[0-9]|latest", 30, entrypoint=("/bin/alertmanager",),
          ports=(9093,), flavor=BUSYBOX, servers=("/bin/alertmanager", "alertmanager"),
          profile=Profile(memory=20 * MiB, health_paths=("/-/healthy", "/-/ready"))),
    _repo("docker.io/grafana/grafana", r"(?:9|10|11|12)\.[0-9]\.[0-9]{1,2}|latest|main", 130, entrypoint=("/run.sh",),
          ports=(3000,), flavor=BUSYBOX, servers=("/run.sh", "grafana", "grafana-server"),
          profile=Profile(memory=80 * MiB, startup_seconds=4, cpu_millicores=4, health_paths=("/api/health",))),
    _repo("docker.io/jaegertracing/all-in-one", r"1\.(?:[3-6][0-9])(?:\.[0-9])?|latest", 35,
          entrypoint=("/go/bin/all-in-one-linux",), ports=(16686, 4317, 4318, 14268, 14250, 14269, 5778),
          flavor=DISTROLESS, servers=("/go/bin/all-in-one-linux",),
          profile=Profile(memory=30 * MiB, startup_seconds=1)),
    _repo("docker.io/otel/opentelemetry-collector-contrib", r"0\.(?:[89][0-9]|1[0-3][0-9])\.[0-9]|latest", 90,
          entrypoint=("/otelcol-contrib",), cmd=("--config", "/etc/otelcol-contrib/config.yaml"),
          ports=(4317, 4318, 55679), flavor=DISTROLESS, servers=("/otelcol-contrib",),
          profile=Profile(memory=60 * MiB, startup_seconds=1, cpu_millicores=6)),
    _repo("registry.k8s.io/metrics-server/metrics-server", r"v0\.[67]\.[0-9]|v0\.8\.0", 20,
          entrypoint=("/metrics-server",), ports=(10250,), flavor=DISTROLESS, servers=("/metrics-server",),
          profile=Profile(memory=18 * MiB, startup_seconds=2, health_paths=("/readyz", "/livez"))),
    _repo("registry.k8s.io/kube-state-metrics/kube-state-metrics", r"v2\.(?:[0-9]|1[0-6])\.[0-9]", 15,
          entrypoint=("/kube-state-metrics",), ports=(8080, 8081), flavor=DISTROLESS,
          servers=("/kube-state-metrics",), profile=Profile(memory=25 * MiB, startup_seconds=1)),
    # ---- the OpenTelemetry Demo (astronomy shop) and its dependencies
    *(_repo(name, _DEMO_TAGS, 120, entrypoint=("/app/start",), servers=("/app/start",),
            profile=Profile(memory=50 * MiB, startup_seconds=2))
      for name in ("ghcr.io/open-telemetry/demo", "docker.io/otel/demo")),
    _repo("ghcr.io/open-feature/flagd", r"v0\.(?:[0-9]|1[0-2])\.[0-9]{1,2}|latest", 25, entrypoint=("/flagd-build",),
          cmd=("start",), ports=(8013, 8014, 8016), flavor=DISTROLESS, servers=("/flagd-build", "start"),
          profile=Profile(memory=20 * MiB, startup_seconds=0.5, health_paths=("/healthz", "/readyz"))),
    # ---- DeathStarBench hotel reservation (one Go image holding every service) and AIOpsLab's builds of it.
    # DeathStarBench's own image is distroless with the binaries in / (its manifests run ./frontend and so on);
    # the older builds keep the Go workspace and have the binaries on the PATH.
    _repo("docker.io/deathstarbench/hotel-reservation", r"latest|v[0-9](?:\.[0-9]){0,2}", 150, flavor=DISTROLESS,
          servers=tuple(path for service in _HOTEL_SERVICES for path in (f"/{service}", f"./{service}")),
          workdir="/", profile=_HOTEL),
    *(_repo(name, r"latest|v[0-9](?:\.[0-9]){0,2}", 320, programs=_HOTEL_SERVICES, servers=_HOTEL_SERVICES,
            workdir="/go/src/github.com/harlow/go-micro-services", cmd=("frontend",), profile=_HOTEL)
      for name in ("docker.io/yinfangchen/hotelreservation", "docker.io/igorrudyk1/hotelreservation")),
    # DeathStarBench's wrk2 load generator: Ubuntu 22.04 with wrk (and LuaSocket), pushed for amd64 only.
    _repo("docker.io/deathstarbench/wrk2-client", r"latest", 80, cmd=("/bin/bash",), programs=("wrk",),
          architectures=("amd64",), single_architecture=True, profile=_BASE_SHELL),
    # ---- single-architecture builds (Docker Hub's per-architecture repositories)
    *(_repo(f"docker.io/{namespace}/{image}", tags, size, architectures=(arch,), single_architecture=True, **config)
      for namespace, arch in (("arm64v8", "arm64"), ("arm32v7", "arm"), ("ppc64le", "ppc64le"), ("s390x", "s390x"))
      for image, tags, size, config in (
          ("nginx", r"1\.2[0-9](?:\.[0-9]{1,2})?(?:-alpine)?|latest|alpine", 68,
           dict(entrypoint=("/docker-entrypoint.sh",), cmd=("nginx", "-g", "daemon off;"), ports=(80,),
                servers=("nginx",), profile=NGINX)),
          ("busybox", r"1\.3[0-7](?:\.[0-9])?|latest", 2, dict(cmd=("sh",), flavor=BUSYBOX, profile=_BASE_SHELL)),
          ("alpine", r"3\.(?:1[0-9]|2[0-2])(?:\.[0-9]{1,2})?|latest", 3,
           dict(cmd=("/bin/sh",), flavor=BUSYBOX, profile=_BASE_SHELL)),
          ("redis", r"[67](?:\.[0-9](?:\.[0-9]{1,2})?)?(?:-alpine)?|latest", 42,
           dict(entrypoint=("docker-entrypoint.sh",), cmd=("redis-server",), ports=(6379,),
                servers=("redis-server",), profile=Profile(memory=4 * MiB, http=False))),
      )),
)


def default_registry() -> Registry:
    return Registry(REPOSITORIES)


def profile_for(image: Image) -> Profile:
    """The runtime profile of the image's process (the demo's images hold one service per tag)."""
    if image.reference.repository in ("ghcr.io/open-telemetry/demo", "docker.io/otel/demo"):
        service = demo_service(image.reference.tag or "")
        if service is not None:
            return DEMO_SERVICES[service]
    return image.config.profile
