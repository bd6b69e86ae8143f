"""A real `jupyter kernelgateway` over https with a token and a base path, for tests and bench/exec.py.

``make_certs`` makes a CA and a server certificate for 127.0.0.1/localhost with ``cryptography``;
``tls_gateway`` starts the gateway with them, the token and ``--KernelGatewayApp.base_url=/kg/``.
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
    url: str  # https://127.0.0.1:PORT/kg/
    token: str
    port: int
    ca: Path  # the CA bundle that signed the gateway's certificate
    log: Path

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


@contextmanager
def tls_gateway(directory: Path, token: str, base_path: str = "/kg/") -> Iterator[Gateway]:
    """A kernel gateway on 127.0.0.1 with TLS (certificates made in ``directory``), ``token`` and a base path."""
    ca, cert, key = make_certs(directory)
    port = free_port()
    log = directory / "gateway.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "kernel_gateway", "--KernelGatewayApp.ip=127.0.0.1",
             f"--KernelGatewayApp.port={port}", f"--KernelGatewayApp.auth_token={token}",
             f"--KernelGatewayApp.certfile={cert}", f"--KernelGatewayApp.keyfile={key}",
             f"--KernelGatewayApp.base_url={base_path}", "--JupyterWebsocketPersonality.list_kernels=True"],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    gw = Gateway(f"https://127.0.0.1:{port}{base_path}", token, port, ca, log)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                gw.get("api")
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the kernel gateway did not start:\n{log.read_text()}") from None
                time.sleep(0.1)
        yield gw
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
