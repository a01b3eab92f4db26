"""The top-level settings, the export format and the default mixing are written once, in Python
(auralgen.config.RunSettings / ExportConfig, auralgen.mixing.MixSpec); conf/config.yaml holds only
its defaults list and Hydra block, and cli/_hydra.py stores the nodes."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import yaml
from hydra import compose as hydra_compose
from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import OmegaConf

from auralgen.cli._hydra import compose, register_configs
from auralgen.config import RUNTIME_KEYS, TOP_KEYS, ExportConfig, RunSettings, config_record, validate
from auralgen.core.mapping import plain
from auralgen.core.resources import conf_dir
from auralgen.mixing import DEFAULT_MIXING

SETTINGS = plain(dataclasses.asdict(RunSettings()))


def test_config_yaml_holds_no_value_and_no_yaml_repeats_a_dataclass():
    top = yaml.safe_load((conf_dir() / "config.yaml").read_text())
    assert set(top) == {"defaults", "hydra"} and top["defaults"][0] == "settings"
    assert not (conf_dir() / "export").exists() and not (conf_dir() / "mixing" / "default.yaml").exists()


def test_the_composed_settings_are_the_dataclass_defaults():
    cfg = OmegaConf.to_container(compose(["suite=tones"]), resolve=True)
    assert {k: v for k, v in cfg.items() if k in SETTINGS} == {**SETTINGS, "suite_name": "tones"}  # the suite's name
    assert set(cfg) == TOP_KEYS - {"task"} and cfg["export"] == dataclasses.asdict(ExportConfig())
    mixing = OmegaConf.to_container(compose(["task=mixture"]).task.mixing)
    assert mixing == plain(DEFAULT_MIXING) and mixing["max_peak"] == 0.8913


def test_validate_falls_back_to_the_same_defaults():
    """A mapping that leaves every setting out validates to the run the composed defaults give."""
    task = OmegaConf.to_container(compose(["task=pitch_relative"]).task)
    assert validate({"task": task}) == validate(compose(["task=pitch_relative"]))
    assert validate({"task": task, "seed": 5}).seed == 5


def test_runtime_keys_are_the_flagged_settings_and_left_out_of_job_folders_and_the_fingerprint():
    assert RUNTIME_KEYS == ("out", "workers", "progress", "overwrite", "executor")
    register_configs()
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
            hc = hydra_compose("config", overrides=["seed=3", "workers=2"], return_hydra_config=True).hydra
    finally:
        GlobalHydra.instance().clear()
    assert list(hc.job.config.override_dirname.exclude_keys) == list(RUNTIME_KEYS)
    assert hc.job.override_dirname == "seed=3"  # workers=2 names no folder
    base = validate(compose(["suite=tones"]))
    changed = validate(compose(["suite=tones", "workers=2", "out=elsewhere", "progress=false", "overwrite=true"]))
    assert changed != base and config_record(changed) == config_record(base)


def _generate(*argv: str, cwd) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "auralgen.cli", "generate", *argv]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_cfg_job_prints_every_setting_and_unknown_keys_are_refused(tmp_path):
    proc = _generate("seed=4", "--cfg", "job", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    cfg = yaml.safe_load(proc.stdout)
    assert {k: cfg[k] for k in SETTINGS} == {**SETTINGS, "seed": 4} and cfg["export"] == dataclasses.asdict(
        ExportConfig()
    )
    bad = _generate("sead=4", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") and "sead" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
