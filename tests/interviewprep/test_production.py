"""Production mode: HTTPS everywhere but the local health check, `check --deploy` clean of our
warnings, and a loud warning whenever the development secret key is in use."""

import json
import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.test import Client, override_settings

from tests.processes import ROOT

ONE_YEAR = 365 * 24 * 3600
STRONG_KEY = "k3y-" + "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
# Warnings of ours: Django's security checks, axes' and the project's. drf_spectacular's schema
# warnings belong to the API's owners and are not counted here.
OURS = ("(security.", "(axes.", "(interviewprep.", "(auth.", "(admin.")


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "INTERVIEWPREP_PRODUCTION"}}
    full_env.update({"DJANGO_SETTINGS_MODULE": "interviewprep.settings", **env})
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=full_env, capture_output=True, text=True, timeout=120
    )


PRODUCTION = {"INTERVIEWPREP_PRODUCTION": "true", "SECRET_KEY": STRONG_KEY, "ALLOWED_HOSTS": "prep.example"}


@pytest.mark.nodb
def test_check_deploy_in_production_has_none_of_our_warnings():
    done = manage("check", "--deploy", **PRODUCTION, BEHIND_PROXY="true")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    ours = [line for line in output.splitlines() if any(tag in line for tag in OURS)]
    assert ours == [], output


@pytest.mark.nodb
def test_production_settings_are_https_only_with_hsts_of_a_year():
    code = (
        "import json; from django.conf import settings as s; print(json.dumps({k: getattr(s, k) for k in ["
        "'SECURE_HSTS_SECONDS', 'SECURE_HSTS_INCLUDE_SUBDOMAINS', 'SECURE_HSTS_PRELOAD', 'SESSION_COOKIE_SECURE',"
        "'CSRF_COOKIE_SECURE', 'SECURE_SSL_REDIRECT', 'SECURE_PROXY_SSL_HEADER', 'SECURE_REDIRECT_EXEMPT']}))"
    )
    done = manage("shell", "-c", code, **PRODUCTION, BEHIND_PROXY="true", HSTS_PRELOAD="true")
    assert done.returncode == 0, done.stderr
    values = json.loads(done.stdout.strip().splitlines()[-1])
    assert values["SECURE_HSTS_SECONDS"] >= ONE_YEAR
    assert values["SECURE_HSTS_INCLUDE_SUBDOMAINS"] is True and values["SECURE_HSTS_PRELOAD"] is True
    assert values["SESSION_COOKIE_SECURE"] is True and values["CSRF_COOKIE_SECURE"] is True
    assert values["SECURE_SSL_REDIRECT"] is True
    assert values["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]

    # Not behind a proxy, no header is trusted: a client could claim HTTPS.
    done = manage(
        "shell", "-c", "from django.conf import settings as s; print(s.SECURE_PROXY_SSL_HEADER)", **PRODUCTION
    )
    assert done.stdout.strip().splitlines()[-1] == "None"


@pytest.mark.nodb
def test_the_development_key_is_a_loud_warning_outside_production():
    done = manage("check")
    assert done.returncode == 0
    output = done.stdout + done.stderr
    assert "(interviewprep.W001)" in output and "SECRET_KEY" in output

    done = manage("check", SECRET_KEY=STRONG_KEY)
    assert "interviewprep.W001" not in done.stdout + done.stderr


@pytest.mark.django_db
def test_ssl_redirect_spares_the_local_health_check_and_trusts_the_proxy():
    exempt = settings.SECURE_REDIRECT_EXEMPT
    with override_settings(SECURE_SSL_REDIRECT=True, SECURE_REDIRECT_EXEMPT=exempt):
        client = Client()
        assert client.get("/healthz").status_code in {200, 503}
        redirected = client.get("/login/")
        assert redirected.status_code == 301 and redirected["Location"] == "https://testserver/login/"
    with override_settings(
        SECURE_SSL_REDIRECT=True,
        SECURE_REDIRECT_EXEMPT=exempt,
        SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https"),
    ):
        assert Client().get("/login/", HTTP_X_FORWARDED_PROTO="https").status_code == 200
