"""Real Jupyter gateways over https with a token and a base path, for tests and bench/exec.py.

``make_certs`` makes a CA and a server certificate for 127.0.0.1/localhost with ``cryptography``;
``tls_gateway`` starts a gateway with them, the token and a base path: either a stock
`jupyter kernelgateway` (``--KernelGatewayApp.base_url=/kg/``) or a stock `jupyter enterprisegateway`
(``--EnterpriseGatewayApp.base_url=/eg/``, see ``tests/enterprise_gateway.py`` for where it comes from).
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass
class Gateway:
    url: str  # https://127.0.0.1:PORT/kg/ (or /eg/)
    token: str
    port: int
    ca: Path  # the CA bundle that signed the gateway's certificate
    log: Path
    kind: str = "kernel-gateway"  # or "enterprise-gateway"

    @property
    def base_path(self) -> str:
        return "/" + self.url.split("/", 3)[3].rstrip("/")

    def get(self, path: str) -> object:
        """GET ``path`` under the base path, with the token, verifying with the CA."""
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"token {self.token}"})
        context = ssl.create_default_context(cafile=str(self.ca))
        with urllib.request.urlopen(request, timeout=10, context=context) as resp:
            return json.load(resp)

    def kernel_ids(self) -> list[str]:
        kernels = self.get("api/kernels")
        assert isinstance(kernels, list)
        return [k["id"] for k in kernels]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def make_certs(directory: Path) -> tuple[Path, Path, Path]:
    """A CA, and a certificate for 127.0.0.1/localhost signed by it: (ca.pem, cert.pem, key.pem)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "freeact test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )  # fmt: skip
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = directory / "ca.pem", directory / "cert.pem", directory / "key.pem"
    paths[0].write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return paths


def _gateway_command(
    kind: str, directory: Path, port: int, token: str, base_path: str, kernel: str | None
) -> list[str]:
    cert, key = directory / "cert.pem", directory / "key.pem"
    if kind == "kernel-gateway":
        return [sys.executable, "-m", "kernel_gateway", "--KernelGatewayApp.ip=127.0.0.1",
                f"--KernelGatewayApp.port={port}", f"--KernelGatewayApp.auth_token={token}",
                f"--KernelGatewayApp.certfile={cert}", f"--KernelGatewayApp.keyfile={key}",
                f"--KernelGatewayApp.base_url={base_path}", "--JupyterWebsocketPersonality.list_kernels=True"]  # fmt: skip
    from tests.enterprise_gateway import LOCAL_KERNEL, REFUSED_USER, enterprise_gateway_python

    kernel = kernel or LOCAL_KERNEL
    return [str(enterprise_gateway_python()), "-m", "enterprise_gateway", "--EnterpriseGatewayApp.ip=127.0.0.1",
            f"--EnterpriseGatewayApp.port={port}", f"--EnterpriseGatewayApp.auth_token={token}",
            f"--EnterpriseGatewayApp.certfile={cert}", f"--EnterpriseGatewayApp.keyfile={key}",
            f"--EnterpriseGatewayApp.base_url={base_path}", "--EnterpriseGatewayApp.list_kernels=True",
            f"--EnterpriseGatewayApp.default_kernel_name={kernel}",
            f"--KernelSpecManager.whitelist={kernel}", "--EnterpriseGatewayApp.port_retries=0",
            # EG refuses KERNEL_USERNAME root by default (the tests may run as root); one user stays refused.
            f"--EnterpriseGatewayApp.unauthorized_users={REFUSED_USER}"]  # fmt: skip


@contextmanager
def tls_gateway(
    directory: Path,
    token: str,
    base_path: str | None = None,
    kind: str = "kernel-gateway",
    env: dict[str, str] | None = None,
    extra_args: tuple[str, ...] = (),
    kernel: str | None = None,
) -> Iterator[Gateway]:
    """A gateway on 127.0.0.1 with TLS (certificates made in ``directory``), ``token`` and a base path.

    Args:
        kind: ``kernel-gateway`` (base path ``/kg/`` by default) or ``enterprise-gateway`` (``/eg/``,
            kernels from ``tests/enterprise_gateway.py``'s kernel specs unless ``env`` names others).
        env: The gateway's environment (default: this process's).
        extra_args: More command-line options of the gateway.
        kernel: Enterprise Gateway's default (and only allowed) kernel spec.
    """
    if base_path is None:
        base_path = "/kg/" if kind == "kernel-gateway" else "/eg/"
    ca, _, _ = make_certs(directory)
    port = free_port()
    log = directory / "gateway.log"
    if env is None and kind == "enterprise-gateway":
        from tests.enterprise_gateway import local_kernel_env

        env = local_kernel_env(directory)
    command = [*_gateway_command(kind, directory, port, token, base_path, kernel), *extra_args]
    with log.open("w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    gw = Gateway(f"https://127.0.0.1:{port}{base_path}", token, port, ca, log, kind)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                gw.get("api")
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the {kind} did not start:\n{log.read_text()}") from None
                time.sleep(0.1)
        yield gw
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
