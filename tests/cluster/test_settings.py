"""The cluster settings: a Redis URL or nothing, a lease long enough to renew, and a store."""

from __future__ import annotations

import pytest

from parlour.settings import SettingError, Settings


def test_a_cluster_needs_a_redis_url_and_a_store() -> None:
    assert Settings().cluster == "" and Settings().cluster_lease == 3.0
    assert Settings(cluster="redis://127.0.0.1:6379/0").cluster_lease == 3.0
    with pytest.raises(SettingError, match="cluster must be a redis"):
        Settings(cluster="http://127.0.0.1:6379")
    with pytest.raises(SettingError, match="needs a store"):
        Settings(cluster="redis://127.0.0.1:6379/0", store="none")
    with pytest.raises(SettingError, match="cluster_lease"):
        Settings(cluster_lease=0.1)


def test_one_node_never_imports_redis() -> None:
    import subprocess
    import sys

    code = (
        "import sys, parlour.app, parlour.transport.runtime; "
        "sys.exit(1 if any(m == 'redis' or m.startswith(('redis.', 'parlour.cluster')) for m in sys.modules) else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
