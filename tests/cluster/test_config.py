"""The default cluster: --cluster, else $BENCHTUI_CLUSTER, else [cluster] address in
the config file the dashboard reads its keys from; doctor recommends the extra it needs."""
from __future__ import annotations

from benchtui.commands.doctor import recommend_extras
from benchtui.host.config import default_cluster


def test_default_cluster_from_env_then_config(tmp_path, monkeypatch):
    cfg = tmp_path / "keys.toml"
    monkeypatch.setenv("BENCHTUI_CONFIG", str(cfg))
    monkeypatch.delenv("BENCHTUI_CLUSTER", raising=False)
    assert default_cluster() is None  # no file: this machine
    cfg.write_text('[keys]\n"matrix.open" = "o"\n\n[cluster]\naddress = "10.0.0.5:6379"\n')
    assert default_cluster() == "10.0.0.5:6379"
    monkeypatch.setenv("BENCHTUI_CLUSTER", "local")
    assert default_cluster() == "local"
    monkeypatch.setenv("BENCHTUI_CLUSTER", "off")
    assert default_cluster() is None
    monkeypatch.delenv("BENCHTUI_CLUSTER")
    cfg.write_text("[cluster\n")  # unreadable: the dashboard reports it; runs stay here
    assert default_cluster() is None


def test_the_dashboard_key_config_ignores_the_cluster_table(tmp_path):
    from benchtui.tui.config import load_key_config

    cfg = tmp_path / "keys.toml"
    cfg.write_text('"matrix.open" = "o"\n\n[cluster]\naddress = "local"\n')  # keys at the top level, no [keys]
    config = load_key_config(cfg)
    assert config.keymap == {"matrix.open": "o"} and config.problems == []


def test_doctor_recommends_the_cluster_extra_only_where_a_cluster_is_configured():
    base = dict(nvidia_gpu=False, cupy=None, mlx_lm="0.30", platform_ok_for_mlx_lm=True, from_clone=True)
    assert recommend_extras(**base) == []
    assert recommend_extras(**base, cluster="local", ray="2.60.0") == []
    (rec,) = recommend_extras(**base, cluster="local", ray=None)
    assert rec["extra"] == "cluster" and rec["command"] == 'python3 -m pip install -e ".[cluster]"'
