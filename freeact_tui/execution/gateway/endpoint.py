"""Where a remote Jupyter gateway is and how to talk to it: URL, base path, TLS, token.

Follows the conventions of Jupyter's own gateway client (``jupyter_server/gateway/gateway_client.py``):
``JUPYTER_GATEWAY_URL`` (used when ``remote_url`` is not set), ``JUPYTER_GATEWAY_AUTH_TOKEN`` and
``JUPYTER_GATEWAY_AUTH_SCHEME`` (header ``Authorization: <scheme> <token>``, scheme ``token`` by
default), ``JUPYTER_GATEWAY_CA_CERTS`` (a CA bundle to verify the gateway's certificate with) and
``JUPYTER_GATEWAY_VALIDATE_CERT`` (``false`` turns verification off, like ``remote_insecure``), and
the reconnect schedule ``JUPYTER_GATEWAY_RETRY_INTERVAL`` / ``_RETRY_INTERVAL_MAX`` / ``_RETRY_MAX``.
Like that client, a new kernel gets the ``KERNEL_*`` variables of this environment (Enterprise
Gateway reads ``KERNEL_USERNAME``, ``KERNEL_NAMESPACE``, ``KERNEL_IMAGE``, …), and ``KERNEL_USERNAME``
is this machine's user name unless set.

The token is read from the environment only, kept out of ``repr`` and every message, and never
passed to the kernel: it exists in this process's memory and in the request headers, nowhere else.
"""

from __future__ import annotations

import getpass
import ipaddress
import json
import logging
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import aiohttp

from freeact_tui.execution.base import ExecutorError

logger = logging.getLogger(__name__)

URL_ENV = "JUPYTER_GATEWAY_URL"
TOKEN_ENV = "JUPYTER_GATEWAY_AUTH_TOKEN"  # noqa: S105 - the name of a variable, not a secret
SCHEME_ENV = "JUPYTER_GATEWAY_AUTH_SCHEME"
CA_CERTS_ENV = "JUPYTER_GATEWAY_CA_CERTS"
VALIDATE_CERT_ENV = "JUPYTER_GATEWAY_VALIDATE_CERT"
RETRY_INTERVAL_ENV = "JUPYTER_GATEWAY_RETRY_INTERVAL"
RETRY_INTERVAL_MAX_ENV = "JUPYTER_GATEWAY_RETRY_INTERVAL_MAX"
RETRY_MAX_ENV = "JUPYTER_GATEWAY_RETRY_MAX"
REQUEST_TIMEOUT_ENV = "JUPYTER_GATEWAY_REQUEST_TIMEOUT"
# Kernel start on a gateway: Enterprise Gateway on Kubernetes schedules a pod and may pull its image
# first (Jupyter's own client waits 42 s; EG's Helm chart gives a launch 60 s by default).
DEFAULT_REQUEST_TIMEOUT = 120.0

INSECURE_HINT = "remote_insecure = true in the config or --remote-insecure"


@dataclass(frozen=True)
class GatewayEndpoint:
    """A gateway's address and credentials.

    Attributes:
        url: The URL as given, without a trailing slash (safe to show: it holds no token).
        scheme: ``http`` or ``https``.
        host: Host name or address.
        port: TCP port.
        base_path: ``""`` or a path prefix such as ``/gateway`` (the API is under ``<prefix>/api``).
        ca_certs: A CA bundle file that verifies the gateway's certificate (None: the system's).
        insecure: Certificates are not verified (``remote_insecure`` or ``JUPYTER_GATEWAY_VALIDATE_CERT=false``).
        retry_interval: First wait before reconnecting a dropped websocket (doubles each attempt).
        retry_interval_max: Longest wait between reconnect attempts.
        retry_max: Reconnect attempts before the kernel counts as lost.
        request_timeout: Seconds a new kernel may take to start (``JUPYTER_GATEWAY_REQUEST_TIMEOUT``),
            also sent as ``KERNEL_LAUNCH_TIMEOUT`` so that Enterprise Gateway gives up at the same time.
    """

    url: str
    scheme: str
    host: str
    port: int
    base_path: str = ""
    ca_certs: str | None = None
    insecure: bool = False
    retry_interval: float = 1.0
    retry_interval_max: float = 30.0
    retry_max: int = 5
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    token: str | None = field(default=None, repr=False)
    auth_scheme: str = field(default="token", repr=False)

    @property
    def http_base(self) -> str:
        """``scheme://host:port/prefix`` (append ``/api/...``)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}{self.base_path}"

    @property
    def ws_base(self) -> str:
        """As ``http_base`` with ``ws``/``wss``."""
        return "ws" + self.http_base[len("http") :]

    @property
    def tls(self) -> bool:
        return self.scheme == "https"

    def headers(self) -> dict[str, str]:
        """The request headers (the ``Authorization`` header when a token is set)."""
        if not self.token:
            return {}
        return {"Authorization": f"{self.auth_scheme} {self.token}".strip()}

    def ssl_context(self) -> ssl.SSLContext | bool:
        """What aiohttp's ``ssl`` argument gets: a verifying context, or False when insecure.

        Raises:
            ExecutorError: The CA bundle cannot be read.
        """
        if not self.tls:
            return True
        if self.insecure:
            return False
        try:
            return ssl.create_default_context(cafile=self.ca_certs)
        except (OSError, ssl.SSLError) as e:
            raise ExecutorError(
                f"Cannot read the CA bundle {self.ca_certs} given in {CA_CERTS_ENV} ({e}): "
                "point it at a PEM file with the certificate that signed the gateway's."
            ) from e

    def session(self, timeout: aiohttp.ClientTimeout) -> aiohttp.ClientSession:
        """An HTTP session whose requests (and websockets) carry the token and verify TLS as set."""
        connector = aiohttp.TCPConnector(ssl=self.ssl_context())
        return aiohttp.ClientSession(timeout=timeout, headers=self.headers(), connector=connector)

    def retry_delay(self, attempt: int) -> float:
        """Seconds to wait before reconnect attempt ``attempt`` (0-based), as Jupyter's client does."""
        return float(min(self.retry_interval * 2**attempt, self.retry_interval_max))

    def explain(self, error: BaseException, doing: str) -> str:
        """A message for a failed request that says what to fix (never contains the token).

        Args:
            error: What aiohttp raised.
            doing: What was being done, e.g. ``"reach"``.
        """
        if isinstance(error, aiohttp.ClientConnectorCertificateError):
            cert = error.certificate_error
            why = getattr(cert, "verify_message", "") or str(cert)
            return (
                f"The TLS certificate of the gateway at {self.url} is not trusted ({why}). "
                f"Set {CA_CERTS_ENV} to the CA bundle (PEM) that signed it"
                + (" (the current bundle does not)" if self.ca_certs else "")
                + f", or, on a network you trust, turn verification off with {INSECURE_HINT}."
            )
        if isinstance(error, aiohttp.ClientSSLError):
            return (
                f"TLS with the gateway at {self.url} failed ({error}). Does it speak https on that port? "
                f"Check the scheme of remote_url / {URL_ENV}."
            )
        dropped = isinstance(
            error, aiohttp.ServerDisconnectedError | aiohttp.ClientOSError
        ) and not isinstance(error, aiohttp.ClientConnectorError)
        if dropped and self.tls:
            return (
                f"The gateway at {self.url} dropped the TLS connection ({error or type(error).__name__}); "
                f"it may speak plain http: check the scheme of remote_url / {URL_ENV}."
            )
        return (
            f"Cannot {doing} the Jupyter gateway at {self.url} ({error or type(error).__name__}): start one "
            "there (`jupyter kernelgateway --KernelGatewayApp.ip=HOST --KernelGatewayApp.port=PORT`) "
            f"or fix remote_url / {URL_ENV}."
        )

    def explain_status(self, status: int, body: str, doing: str) -> str:
        """A message for an HTTP error answer (401/403: the token or the user; 404: the base path)."""
        detail = gateway_message(body)
        if status == 403 and "KERNEL_USERNAME" in detail:
            # Enterprise Gateway's authorized_users/unauthorized_users (root is refused by default).
            return (
                f"The Jupyter gateway at {self.url} does not let this user {doing}: {detail.rstrip('.')} "
                f"(the user name is sent as KERNEL_USERNAME; set it in the environment to send another)."
            )
        if status in (401, 403):
            if self.token:
                what = f"refused the token in {TOKEN_ENV}: set it to the gateway's auth token"
            else:
                what = f"needs a token: set {TOKEN_ENV} to the gateway's auth token"
            return f"The Jupyter gateway at {self.url} {what} ({status} while trying to {doing})."
        if status == 404:
            return (
                f"The Jupyter gateway at {self.url} has no such API ({status} while trying to {doing}): "
                "check the base path in remote_url (e.g. https://host/prefix/ when the gateway runs "
                "with --KernelGatewayApp.base_url=/prefix/)."
            )
        message = f"The Jupyter gateway at {self.url} answered {status} while trying to {doing}" + (
            f": {detail[:1000]}" if detail else "."
        )
        if status >= 500 and doing == "start a kernel":
            message += (
                " On Enterprise Gateway, check the kernel spec, its image and EG_KERNEL_LAUNCH_TIMEOUT."
            )
        return message


def gateway_message(body: str) -> str:
    """The ``message`` (or ``reason``) of a gateway's JSON error answer, else the body itself."""
    body = body.strip()
    try:
        data = json.loads(body)
    except ValueError:
        return body
    if isinstance(data, dict):
        for key in ("message", "reason"):
            if isinstance(data.get(key), str) and data[key].strip():
                return str(data[key]).strip()
    return body


def kernel_request_env(
    environ: Mapping[str, str] | None = None, launch_timeout: float | None = None
) -> dict[str, str]:
    """The ``KERNEL_*`` variables a new kernel is requested with, as Jupyter's gateway client sends them.

    ``KERNEL_USERNAME`` defaults to this machine's user name (Enterprise Gateway names kernel pods
    after it and checks it against its authorized/unauthorized users); ``KERNEL_LAUNCH_TIMEOUT``
    to ``launch_timeout`` (EG stops launching a kernel the client no longer waits for).
    """
    environ = os.environ if environ is None else environ
    env = {k: v for k, v in environ.items() if k.startswith("KERNEL_")}
    if launch_timeout and not env.get("KERNEL_LAUNCH_TIMEOUT"):
        env["KERNEL_LAUNCH_TIMEOUT"] = str(max(1, int(launch_timeout)))
    if not env.get("KERNEL_USERNAME"):
        try:
            env["KERNEL_USERNAME"] = getpass.getuser()
        except (KeyError, OSError):  # no name for this uid (a container without /etc/passwd entry)
            pass
    return env


def _env_bool(value: str | None, default: bool) -> bool:
    if value is None or not value.strip():
        return default
    return value.strip().lower() not in ("0", "false", "no", "off")


def _env_number(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ExecutorError(f"{name} must be a number, not {raw!r}.") from None
    if value < 0:
        raise ExecutorError(f"{name} must not be negative, not {raw!r}.")
    return value


def parse_gateway_url(url: str) -> tuple[str, str, int, str]:
    """``http(s)://host[:port][/prefix/]`` -> (scheme, host, port, base path without trailing slash).

    Raises:
        ExecutorError: Another scheme, no host, a bad port, or a query/fragment.
    """
    parts = urlsplit(url.strip())
    try:
        port = parts.port
    except ValueError:
        port = -1
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or port == -1
        or parts.query
        or parts.fragment
        or parts.username
        or parts.password
    ):
        raise ExecutorError(
            f"remote_url must look like http(s)://HOST[:PORT][/BASE/PATH] (a Jupyter gateway), not {url!r}."
        )
    default_port = 443 if parts.scheme == "https" else 80
    return parts.scheme, parts.hostname, port or default_port, parts.path.rstrip("/")


def resolve_endpoint(
    remote_url: str | None, *, insecure: bool = False, environ: Mapping[str, str] | None = None
) -> GatewayEndpoint:
    """The gateway to use: ``remote_url`` or ``JUPYTER_GATEWAY_URL``, with the other settings from the environment.

    Args:
        remote_url: From the config (wins over ``JUPYTER_GATEWAY_URL``).
        insecure: Do not verify the gateway's certificate (logs a warning).
        environ: The environment (default: ``os.environ``).

    Raises:
        ExecutorError: No URL, a malformed URL, a missing CA bundle or a malformed retry setting.
    """
    env = os.environ if environ is None else environ
    url = (remote_url or env.get(URL_ENV) or "").strip()
    if not url:
        raise ExecutorError(
            f"The remote execution mode needs a gateway: set remote_url in the config or {URL_ENV} "
            "(e.g. https://gateway.example.com:8888)."
        )
    scheme, host, port, base_path = parse_gateway_url(url)
    ca_certs = env.get(CA_CERTS_ENV) or None
    if ca_certs is not None and not os.path.isfile(ca_certs):
        raise ExecutorError(
            f"{CA_CERTS_ENV} names {ca_certs}, which is not a file: point it at a PEM CA bundle."
        )
    if not _env_bool(env.get(VALIDATE_CERT_ENV), True):
        insecure = True
    if insecure and scheme == "https":
        logger.warning(
            "TLS certificate verification is OFF for the gateway at %s (%s / %s=false): "
            "anyone on the network path can impersonate it.",
            url,
            INSECURE_HINT,
            VALIDATE_CERT_ENV,
        )
    token = env.get(TOKEN_ENV) or None
    if token and scheme == "http" and not _loopback(host):
        logger.warning("the gateway token is sent unencrypted to %s: use https://", url)
    return GatewayEndpoint(
        url=url.rstrip("/"),
        scheme=scheme,
        host=host,
        port=port,
        base_path=base_path,
        ca_certs=ca_certs,
        insecure=insecure,
        retry_interval=_env_number(env, RETRY_INTERVAL_ENV, 1.0),
        retry_interval_max=_env_number(env, RETRY_INTERVAL_MAX_ENV, 30.0),
        retry_max=int(_env_number(env, RETRY_MAX_ENV, 5)),
        request_timeout=_env_number(env, REQUEST_TIMEOUT_ENV, DEFAULT_REQUEST_TIMEOUT)
        or DEFAULT_REQUEST_TIMEOUT,
        token=token,
        auth_scheme=env.get(SCHEME_ENV, "token"),
    )


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def insecure_warning(endpoint: GatewayEndpoint) -> str | None:
    """The warning to show the user when certificates are not verified, or the token would travel
    unencrypted to another machine (None when neither).
    """
    if endpoint.insecure and endpoint.tls:
        return (
            f"Warning: TLS certificates of the gateway at {endpoint.url} are NOT verified "
            f"({INSECURE_HINT} / {VALIDATE_CERT_ENV}=false)."
        )
    if endpoint.token and not endpoint.tls and not _loopback(endpoint.host):
        return (
            f"Warning: the token in {TOKEN_ENV} is sent UNENCRYPTED to {endpoint.url}: "
            "use https:// (the gateway's certfile/keyfile, or TLS at a proxy in front of it)."
        )
    return None


def config_warning(execution: str, remote_url: str | None, insecure: bool) -> str | None:
    """The warning for settings that turn certificate checks off (None: nothing to warn about).

    Args:
        execution: The execution mode (only ``remote`` can warn).
        remote_url: The configured gateway URL (None: ``JUPYTER_GATEWAY_URL``).
        insecure: ``remote_insecure``.
    """
    if execution != "remote":
        return None
    try:
        endpoint = resolve_endpoint(remote_url, insecure=insecure)
    except ExecutorError:
        return None  # reported when the kernel starts
    return insecure_warning(endpoint)
