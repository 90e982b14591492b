"""The twin's certificates: a cluster CA and a serving certificate for the API server.

kubectl (client-go) sends bearer tokens only over TLS, so the twin serves
HTTPS, as every real API server does, with a fresh CA per twin; kubeconfigs
carry that CA in ``certificate-authority-data`` and every namespace's
``kube-root-ca.crt`` holds it.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_SERVICE_NAMES = ("kubernetes", "kubernetes.default", "kubernetes.default.svc",
                  "kubernetes.default.svc.cluster.local", "localhost")


@dataclass(frozen=True)
class ClusterCertificates:
    ca_pem: str
    cert_pem: str
    key_pem: str

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        # load_cert_chain reads files only; they live just long enough to be read.
        with tempfile.TemporaryDirectory(prefix="twin-tls-") as tmp:
            cert, key = os.path.join(tmp, "tls.crt"), os.path.join(tmp, "tls.key")
            with open(cert, "w") as fh:
                fh.write(self.cert_pem + self.ca_pem)
            fd = os.open(key, os.O_WRONLY | os.O_CREAT, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(self.key_pem)
            ctx.load_cert_chain(cert, key)
        return ctx


def _serial(rng) -> int:
    return rng.getrandbits(159) | 1  # positive and at most 20 octets, as RFC 5280 asks


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


# Clients check validity against wall time, which a simulated clock may be far from (warped ahead, or
# started in the past); a fixed window keeps the certificates valid and the same for a given seed.
VALID_FROM = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
VALID_UNTIL = datetime.datetime(2060, 1, 1, tzinfo=datetime.timezone.utc)


def generate(rng, hosts: tuple[str, ...] = ("127.0.0.1",)) -> ClusterCertificates:
    """A CA named ``kubernetes`` (as kubeadm names it) and a ``kube-apiserver`` serving certificate.

    Keys come from the twin's seeded generator and Ed25519 signatures are
    deterministic, so the same seed gives the same certificates
    (the CA bundle is cluster state: every namespace's ``kube-root-ca.crt``).
    """
    ca_key = ed25519.Ed25519PrivateKey.from_private_bytes(rng.randbytes(32))
    ca_cert = (x509.CertificateBuilder()
               .subject_name(_name("kubernetes")).issuer_name(_name("kubernetes"))
               .public_key(ca_key.public_key()).serial_number(_serial(rng))
               .not_valid_before(VALID_FROM).not_valid_after(VALID_UNTIL)
               .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=True, key_cert_sign=True,
                                            content_commitment=False, data_encipherment=False,
                                            key_agreement=False, crl_sign=False, encipher_only=False,
                                            decipher_only=False), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
               .sign(ca_key, None))
    key = ed25519.Ed25519PrivateKey.from_private_bytes(rng.randbytes(32))
    sans: list[x509.GeneralName] = [x509.DNSName(n) for n in _SERVICE_NAMES]
    ips = {"127.0.0.1", "10.96.0.1", "172.18.0.2"}
    for host in hosts:
        try:
            ips.add(str(ipaddress.ip_address(host)))
        except ValueError:
            sans.append(x509.DNSName(host))
    sans += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in sorted(ips)]
    cert = (x509.CertificateBuilder()
            .subject_name(_name("kube-apiserver")).issuer_name(ca_cert.subject)
            .public_key(key.public_key()).serial_number(_serial(rng))
            .not_valid_before(VALID_FROM).not_valid_after(VALID_UNTIL)
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(ca_key, None))
    pem = serialization.Encoding.PEM
    return ClusterCertificates(
        ca_pem=ca_cert.public_bytes(pem).decode(),
        cert_pem=cert.public_bytes(pem).decode(),
        key_pem=key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()).decode(),
    )
