"""One TOML config file per run, read with the standard library into frozen dataclasses.

Every role (server, workers, trainer, cluster) reads the same file through `load_config`; an
unknown key, a wrong type or an impossible value raises `ConfigError` naming the file (or
--set) and the dotted key. Modules, in dependency order: fields (setting(), parse_section,
to_dict), endpoints (bind addresses and their CURVE policy), evaluator (the evaluator's
section), loop (the cluster and recorder sections), trainer (the trainer's section), schema
(the other sections and Config),
loader (files, --set overrides, shipped configs by name). Imports no compiled kernel (a test
holds it so): the variants come from fastgo.variants, the kernel's numbers from
fastgo.constants; numpy only through the ladder's fit (rundata.ladder).
"""
from fastgo.variants import INFERENCE_BACKENDS
from rundata.config.endpoints import (
                                  check_bind,
                                  endpoint_problem,
                                  is_loopback,
                                  remote_curve_problem,
)
from rundata.config.evaluator import MATCH_VISITS, EvaluatorConfig
from rundata.config.fields import (
                                  ConfigError,
                                  mapping_setting,
                                  parse_section,
                                  setting,
                                  to_dict,
)
from rundata.config.loader import (
                                  MAX_CONFIG_BYTES,
                                  MAX_TOML_DEPTH,
                                  apply_overrides,
                                  check_setting_flag,
                                  load_config,
                                  loads_config,
                                  resolve_config,
                                  setting_bounds,
                                  shipped_configs,
)
from rundata.config.loop import ClusterConfig, RecorderConfig
from rundata.config.schema import (
                                  ENCODING_PLANES,
                                  MODEL_NAME,
                                  Config,
                                  ModelConfig,
                                  SelfplayConfig,
                                  ServerConfig,
)
from rundata.config.trainer import TrainerConfig

__all__ = [
    "INFERENCE_BACKENDS",
    "ENCODING_PLANES", "MATCH_VISITS", "MAX_CONFIG_BYTES", "MAX_TOML_DEPTH", "MODEL_NAME",
    "ClusterConfig", "EvaluatorConfig",
    "Config", "ConfigError", "ModelConfig", "RecorderConfig", "SelfplayConfig",
    "ServerConfig",
    "TrainerConfig", "apply_overrides", "check_bind", "check_setting_flag", "endpoint_problem",
    "is_loopback",
    "load_config", "loads_config", "mapping_setting", "parse_section", "remote_curve_problem",
    "resolve_config", "setting", "setting_bounds", "shipped_configs", "to_dict",
]
