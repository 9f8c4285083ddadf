"""Providers: which desktop a spec names, what a container is started with, who owns it, and
the host and local desktops against real controllers."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from typing import Any

import pytest

from deskscore.collectors.live.providers import (
    LABEL,
    LABEL_OWNER,
    LABEL_RUN,
    OSWORLD_IMAGE,
    DockerProvider,
    HostProvider,
    LocalProvider,
    ProviderError,
    controller_answers,
    free_port,
    owner_alive,
    owner_label,
    provider_from_spec,
)
from deskscore.collectors.live.sandbox.build import image_name


def test_specs_name_their_providers() -> None:
    sandbox = provider_from_spec("docker")
    assert isinstance(sandbox, DockerProvider)
    assert (sandbox.image, sandbox.network) == (image_name(), "host")
    osworld = provider_from_spec(f"docker:{OSWORLD_IMAGE}")
    assert (osworld.image, osworld.network) == (OSWORLD_IMAGE, "publish")
    local = provider_from_spec("local:http://127.0.0.1:5000/")
    assert isinstance(local, LocalProvider) and local.url == "http://127.0.0.1:5000"
    assert isinstance(provider_from_spec("http://10.0.0.5:5000"), LocalProvider)
    assert isinstance(provider_from_spec("host", screen="800x600x24"), HostProvider)
    for bad in ("vmware", "local:", "local:ftp://x"):
        with pytest.raises(ValueError):
            provider_from_spec(bad)


def test_published_controller_ports_bind_loopback_only() -> None:
    provider = DockerProvider(
        OSWORLD_IMAGE,
        run_id="r1",
        run_options={"cap_add": ["NET_ADMIN"], "environment": {"RAM_SIZE": "4G"}},
    )
    args = provider.run_arguments()
    assert args["ports"] == {"5000/tcp": ("127.0.0.1",)}
    assert "network_mode" not in args
    assert args["cap_add"] == ["NET_ADMIN"]
    assert args["environment"] == {"RAM_SIZE": "4G"}
    assert args["labels"][LABEL] == "1" and args["labels"][LABEL_RUN] == "r1"
    assert owner_alive(args["labels"][LABEL_OWNER]) is True
    with pytest.raises(ValueError, match="set by the provider"):
        DockerProvider(OSWORLD_IMAGE, run_options={"ports": {"5000/tcp": 5000}}).run_arguments()


def test_sandbox_containers_share_the_host_network_with_a_port_of_their_own() -> None:
    first = DockerProvider("deskscore-sandbox:x", screen="1024x768x24")
    second = DockerProvider("deskscore-sandbox:x")
    a, b = first.run_arguments(), second.run_arguments()
    assert a["network_mode"] == "host" and "ports" not in a
    port = a["environment"]["DESKSCORE_CONTROLLER_PORT"]
    assert first.base_url == f"http://127.0.0.1:{port}"
    assert port != b["environment"]["DESKSCORE_CONTROLLER_PORT"]
    assert a["environment"]["DESKSCORE_SCREEN"] == "1024x768x24"


def test_free_ports_are_free_and_never_handed_out_twice() -> None:
    ports = [free_port() for _ in range(20)]
    assert len(set(ports)) == 20
    with socket.socket() as s:
        s.bind(("127.0.0.1", ports[-1]))  # free indeed


def test_owner_labels_tell_live_dead_and_foreign_owners_apart() -> None:
    assert owner_alive(owner_label()) is True
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    host = socket.gethostname()
    assert owner_alive(f"{host}:{gone.pid}:1") is False
    # The same PID with another start time: a new process reused the number.
    assert owner_alive(f"{host}:{os.getpid()}:1") is False
    assert owner_alive(f"another-host-{host}:{os.getpid()}:1") is None
    assert owner_alive(f"{host}:not-a-pid:1") is False
    assert owner_alive("no-owner-recorded") is None  # unknown: left alone by cleanup


def test_local_provider_reaches_a_running_controller(host_desktop: Any) -> None:
    with LocalProvider(host_desktop.base_url + "/") as local:
        assert local.base_url == host_desktop.base_url
    closed = free_port()
    with pytest.raises(ProviderError, match=f"127.0.0.1:{closed} did not answer"):
        LocalProvider(f"http://127.0.0.1:{closed}", ready_timeout_s=0.5).start()


def test_host_desktop_is_gone_after_stop(host_desktop: Any) -> None:
    url, display = host_desktop.base_url, host_desktop.display
    assert controller_answers(url)
    assert os.path.exists(f"/tmp/.X11-unix/X{display[1:]}")
    host_desktop.stop()
    assert not controller_answers(url)
    assert not os.path.exists(f"/tmp/.X11-unix/X{display[1:]}")
    host_desktop.stop()  # twice is fine
