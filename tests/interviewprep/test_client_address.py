"""One rule for where a request comes from: REMOTE_ADDR, or behind a trusted proxy the right-most
address in X-Forwarded-For that no trusted proxy wrote. /metrics decides "on the host" by it."""

from __future__ import annotations

import pytest
from django.test import Client, RequestFactory, override_settings

from interviewprep.client import client_address, client_on_host
from interviewprep.config import ConfigError, load

pytestmark = pytest.mark.django_db

LOCAL_PROXY = {"BEHIND_PROXY": True, "TRUSTED_PROXIES": ("127.0.0.1/32", "::1/128")}
TWO_PROXIES = {"BEHIND_PROXY": True, "TRUSTED_PROXIES": ("127.0.0.1/32", "10.0.0.0/24")}


def _address(remote: str, forwarded: str | None = None) -> str | None:
    headers = {} if forwarded is None else {"HTTP_X_FORWARDED_FOR": forwarded}
    return client_address(RequestFactory().get("/", REMOTE_ADDR=remote, **headers))


def test_without_a_proxy_the_peer_is_the_client_and_forwarded_for_is_ignored():
    assert _address("198.51.100.9", "127.0.0.1") == "198.51.100.9"
    assert _address("127.0.0.1", "198.51.100.9") == "127.0.0.1"


@override_settings(**LOCAL_PROXY)
def test_behind_the_proxy_the_right_most_untrusted_address_is_the_client():
    assert _address("127.0.0.1", "198.51.100.9") == "198.51.100.9"
    # A client's own header comes first; the proxy appends what it saw.
    assert _address("127.0.0.1", "127.0.0.1, 198.51.100.9") == "198.51.100.9"
    assert _address("127.0.0.1", "203.0.113.1, 198.51.100.9") == "198.51.100.9"


@override_settings(**TWO_PROXIES)
def test_a_chain_of_trusted_proxies_is_walked_back_to_the_first_untrusted_hop():
    assert _address("127.0.0.1", "203.0.113.1, 198.51.100.9, 10.0.0.7") == "198.51.100.9"


@override_settings(**LOCAL_PROXY)
def test_a_peer_that_is_no_trusted_proxy_is_the_client_whatever_it_forwards():
    assert _address("198.51.100.9", "127.0.0.1") == "198.51.100.9"


@override_settings(**LOCAL_PROXY)
def test_a_trusted_proxy_without_a_usable_forwarded_for_leaves_the_client_unknown():
    assert _address("127.0.0.1") is None
    assert _address("127.0.0.1", "") is None
    assert _address("127.0.0.1", "not-an-address") is None
    assert _address("127.0.0.1", "198.51.100.9, garbage") is None


@override_settings(**LOCAL_PROXY)
def test_a_request_that_started_on_the_host_and_came_through_the_proxy_is_on_the_host():
    assert _address("127.0.0.1", "127.0.0.1") == "127.0.0.1"
    assert _address("127.0.0.1", "::ffff:127.0.0.1") == "127.0.0.1"
    assert client_on_host(RequestFactory().get("/", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="::1"))


def test_ipv4_mapped_addresses_are_the_ipv4_address():
    assert _address("::ffff:198.51.100.9") == "198.51.100.9"


def test_trusted_proxies_are_read_as_addresses_or_networks():
    assert load({}).trusted_proxies == ("127.0.0.1/32", "::1/128")
    assert load({"TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.1"}).trusted_proxies == ("10.0.0.0/8", "192.0.2.1/32")
    with pytest.raises(ConfigError, match="TRUSTED_PROXIES"):
        load({"TRUSTED_PROXIES": "10.0.0.0/8,proxy.example"})


@pytest.mark.parametrize(
    ("remote", "forwarded", "status"),
    [
        ("127.0.0.1", None, 200),
        ("10.1.2.3", None, 403),
        ("10.1.2.3", "127.0.0.1", 403),
    ],
)
def test_metrics_without_a_proxy_trust_the_peer_alone(remote, forwarded, status):
    headers = {} if forwarded is None else {"HTTP_X_FORWARDED_FOR": forwarded}
    assert Client().get("/metrics", REMOTE_ADDR=remote, **headers).status_code == status


@override_settings(**LOCAL_PROXY)
@pytest.mark.parametrize(
    ("forwarded", "status"),
    [
        ("127.0.0.1", 200),  # the host's scraper, through the proxy
        ("198.51.100.9", 403),
        ("127.0.0.1, 198.51.100.9", 403),  # an outsider claiming to be the host
        (None, 403),  # the proxy said nothing: not known to be the host
        ("junk", 403),
    ],
)
def test_metrics_behind_the_proxy_decide_on_the_forwarded_client(forwarded, status):
    headers = {} if forwarded is None else {"HTTP_X_FORWARDED_FOR": forwarded}
    assert Client().get("/metrics", REMOTE_ADDR="127.0.0.1", **headers).status_code == status
