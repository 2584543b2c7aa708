"""deploy/nginx/interviewprep.conf in front of a real web process (the Procfile's line) and a
real Flower: `nginx -t`, then pages, static files, the waits, the body limit, who the client is,
and Flower for staff only. nginx runs as this test's own, on free ports, with its own paths."""

from __future__ import annotations

import http.client
import json
import os
import pwd
import re
import shutil
import socket
import ssl
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.test import Client

from attempts.apis import MAX_WAIT_SECONDS
from interviewprep.body_limit import drain_max_bytes
from interviewprep.processes import ROOT, Process, port_in_use
from tests.factories import AttemptFactory, UserFactory
from tests.processes import free_port, process_env, wait_for
from tests.web_server import WebServer, start_web

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
CONF = ROOT / "deploy" / "nginx" / "interviewprep.conf"

pytestmark = [
    pytest.mark.skipif(not Path(NGINX).exists(), reason="nginx is not installed (scripts/setup-system.sh --deploy)"),
    pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the test's certificate"),
]


def _replace(text: str, old: str, new: str) -> str:
    assert old in text, f"deploy/nginx/interviewprep.conf no longer has {old!r}"
    return text.replace(old, new)


def outside_address() -> str | None:
    """This machine's address on its network (not the loopback), if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # nothing is sent: this only picks the route
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if address.startswith("127.") else address


@dataclass
class Proxy:
    https_port: int
    http_port: int
    outside: str | None

    def request(
        self,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        source: str = "127.0.0.1",
        timeout: float = 60,
    ) -> tuple[int, dict[str, str], bytes]:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        host = "127.0.0.1" if source == "127.0.0.1" else source
        conn = http.client.HTTPSConnection(
            host, self.https_port, timeout=timeout, context=context, source_address=(source, 0)
        )
        try:
            conn.request(method, path, body=body, headers={"Host": "localhost", **(headers or {})})
            response = conn.getresponse()
            raw = response.read()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, raw
        finally:
            conn.close()


def _render(tmp_path: Path, *, web_port: int, flower_port: int, static_root: Path) -> tuple[Path, Proxy]:
    https_port, http_port = free_port(), free_port()
    outside = outside_address()
    listens = [f"127.0.0.1:{https_port}"] + ([f"{outside}:{https_port}"] if outside else [])
    site = CONF.read_text()
    site = _replace(site, "server 127.0.0.1:8000;", f"server 127.0.0.1:{web_port};")
    site = _replace(site, "server 127.0.0.1:5555;", f"server 127.0.0.1:{flower_port};")
    site = _replace(site, "    listen 80;\n    listen [::]:80;\n", f"    listen 127.0.0.1:{http_port};\n")
    site = _replace(
        site,
        "    listen 443 ssl http2;\n    listen [::]:443 ssl http2;\n",
        "".join(f"    listen {address} ssl http2;\n" for address in listens),
    )
    site = _replace(site, "/etc/ssl/certs/interviewprep.pem", str(tmp_path / "cert.pem"))
    site = _replace(site, "/etc/ssl/private/interviewprep.key", str(tmp_path / "key.pem"))
    site = _replace(site, "alias /var/lib/interviewprep/static/;", f"alias {static_root}/;")
    (tmp_path / "site.conf").write_text(site)
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"]
        + ["-keyout", str(tmp_path / "key.pem"), "-out", str(tmp_path / "cert.pem")],
        check=True,
        capture_output=True,
        timeout=60,
    )
    user = f"user {pwd.getpwuid(os.geteuid()).pw_name};\n" if os.geteuid() == 0 else ""
    temps = "".join(
        f"    {kind}_temp_path {tmp_path / kind};\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    main = tmp_path / "nginx.conf"
    main.write_text(
        f"{user}worker_processes 1;\npid {tmp_path / 'nginx.pid'};\nerror_log {tmp_path / 'error.log'} info;\n"
        "daemon off;\nevents { worker_connections 256; }\n"
        f"http {{\n    include /etc/nginx/mime.types;\n    access_log {tmp_path / 'access.log'};\n{temps}"
        f"    include {tmp_path / 'site.conf'};\n}}\n"
    )
    return main, Proxy(https_port, http_port, outside)


@pytest.fixture
def stack(transactional_db, tmp_path) -> Iterator[tuple[Proxy, WebServer]]:
    static_root = tmp_path / "static"
    env = {"BEHIND_PROXY": "true", "TRUSTED_PROXIES": "127.0.0.1,::1", "STATIC_ROOT": str(static_root)}
    collected = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput"],
        cwd=ROOT,
        env=process_env(**env),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert collected.returncode == 0, collected.stderr[-2000:]
    flower_port = free_port()
    # As its unit runs it: Flower's own metrics stay out of the app's metrics folder.
    flower_env = {k: v for k, v in process_env(**env).items() if k != "PROMETHEUS_MULTIPROC_DIR"}
    flower = Process.start(
        "flower",
        [str(Path(sys.executable).with_name("celery")), "-A", "interviewprep", "flower"]
        + ["--conf=deploy/flowerconfig.py", f"--port={flower_port}"],
        env=flower_env,
        log=tmp_path / "flower.log",
    )
    web = start_web(tmp_path, workers=1, **env)
    nginx = None
    try:
        main, proxy = _render(tmp_path, web_port=web.port, flower_port=flower_port, static_root=static_root)
        checked = subprocess.run([NGINX, "-t", "-c", str(main), "-p", str(tmp_path)], capture_output=True, text=True)
        assert checked.returncode == 0, checked.stderr
        nginx = Process.start("nginx", [NGINX, "-c", str(main), "-p", str(tmp_path)], log=tmp_path / "nginx.out")
        wait_for(lambda: port_in_use(proxy.https_port), timeout=30, message="nginx to listen", process=nginx)
        wait_for(lambda: port_in_use(flower_port), timeout=60, message="flower to listen", process=flower)
        yield proxy, web
    finally:
        for process in (nginx, flower, web.process):
            if process is not None:
                process.stop()


def _failed_login(proxy: Proxy, *, forwarded: str, source: str = "127.0.0.1") -> None:
    status, _, _ = proxy.request(
        "POST",
        "/api/v1/auth/token/",
        body=json.dumps({"username": "nobody-here", "password": "wrong"}).encode(),
        headers={"Content-Type": "application/json", "X-Forwarded-For": forwarded},
        source=source,
    )
    assert status in {400, 401}


def _directives(policy: str) -> set[str]:
    return {directive.strip() for directive in policy.split(";") if directive.strip()}


def _session_cookie(user) -> dict[str, str]:
    client = Client()
    client.force_login(user)
    return {"Cookie": f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"}


def test_the_configuration_keeps_to_the_apps_limits():
    text = CONF.read_text()
    read_timeout = int(re.search(r"proxy_read_timeout (\d+)s;", text).group(1))
    assert read_timeout > MAX_WAIT_SECONDS
    body = re.search(r"client_max_body_size (\d+)m;", text).group(1)
    assert int(body) * 1024 * 1024 == drain_max_bytes(settings.REQUEST_BODY_MAX_BYTES)


def test_pages_static_files_waits_body_limits_and_the_client_through_nginx(stack):
    proxy, _web = stack

    status, headers, _ = proxy.request("GET", "/login/")
    assert status == 200 and "x-request-id" in headers  # the app answered
    policy = headers["content-security-policy"]

    status, headers, body = proxy.request("GET", "/static/css/site.css")
    assert status == 200 and body == (ROOT / "static" / "css" / "site.css").read_bytes()
    assert "x-request-id" not in headers  # nginx served it, from collectstatic's copy
    assert _directives(headers["content-security-policy"]) == _directives(policy)
    assert headers["x-content-type-options"] == "nosniff"

    # The app's own 413 up to what it reads; nginx's beyond.
    status, headers, body = proxy.request("POST", "/api/v1/auth/token/", body=b"x" * (300 * 1024))
    assert status == 413 and headers["content-type"].startswith("application/problem+json")
    status, headers, _ = proxy.request("POST", "/api/v1/auth/token/", body=b"x" * (2 * 1024 * 1024))
    assert status == 413 and "x-request-id" not in headers

    # A wait is passed through and answered at its deadline, not cut short by the proxy.
    user = UserFactory()
    attempt = AttemptFactory(user=user)
    status, _, body = proxy.request(
        "GET", f"/api/v1/attempts/{attempt.pk}/?min_version=99&wait=2", headers=_session_cookie(user)
    )
    assert status == 200 and json.loads(body)["id"] == attempt.pk

    # X-Forwarded-For: the app takes the address nginx saw, not the one the client wrote.
    _failed_login(proxy, forwarded="198.51.100.7")
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"127.0.0.1"}

    # /metrics: the host's scraper through the proxy is on the host.
    assert proxy.request("GET", "/metrics")[0] == 200


def test_metrics_through_nginx_refuse_a_client_from_outside_whatever_it_forwards(stack):
    proxy, _web = stack
    if proxy.outside is None:
        pytest.skip("this machine has no address but the loopback")
    assert proxy.request("GET", "/metrics", source=proxy.outside)[0] == 403
    forged = {"X-Forwarded-For": "127.0.0.1"}
    assert proxy.request("GET", "/metrics", source=proxy.outside, headers=forged)[0] == 403
    staff = _session_cookie(UserFactory(is_staff=True))
    assert proxy.request("GET", "/metrics", source=proxy.outside, headers=staff)[0] == 200
    # The login limits count the same address.
    _failed_login(proxy, forwarded="127.0.0.1, 198.51.100.7", source=proxy.outside)
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {proxy.outside}


def test_flower_through_nginx_is_for_staff_sessions_only(stack):
    proxy, _web = stack
    status, headers, _ = proxy.request("GET", "/flower/")
    assert status == 302 and headers["location"].endswith("/admin/login/?next=/flower/")
    assert proxy.request("GET", "/flower/", headers=_session_cookie(UserFactory()))[0] == 403
    status, _, body = proxy.request("GET", "/flower/", headers=_session_cookie(UserFactory(is_staff=True)))
    assert status == 200 and b"Flower" in body
    # A POST goes through the same check, asked as a GET (no CSRF token): a staff POST reaches
    # Flower, which keeps its API off without a login of its own; an anonymous one does not.
    staff = _session_cookie(UserFactory(is_staff=True))
    status, _, body = proxy.request("POST", "/flower/api/workers", headers=staff)
    assert status == 401 and b"FLOWER_UNAUTHENTICATED_API" in body
    assert proxy.request("POST", "/flower/api/workers")[0] == 302
