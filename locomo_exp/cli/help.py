"""``python -m locomo_exp --help``: the config groups and the composed config, quickly."""

from __future__ import annotations

HELP_FLAGS = ("--help", "-h")
"""The flags answered by :func:`app_help` (``--hydra-help`` stays Hydra's)."""


def app_help(argv: list[str]) -> str:
    """The text of ``python -m locomo_exp --help``, laid out as Hydra's app help.

    Hydra's own ``--help`` lists the options of every config group through one deep copy
    of the whole config store per group (about 2 s on this project); this lists the
    groups from ``locomo_exp/conf/`` and composes the config once, so ``--help`` answers
    in well under a second.

    Args:
        argv: the command-line arguments after the program name; overrides among them
            are applied to the config shown, as Hydra does.

    Returns:
        The config groups with their options, then the composed config as YAML
        (``${...}`` left unresolved).
    """
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf, open_dict

    from locomo_exp.config import register_configs

    register_configs()
    from locomo_exp.config.checks import CONF_DIR, NOT_GROUPS, config_groups

    conf_dir = CONF_DIR
    lines = [
        "locomo_exp is powered by Hydra.",
        "",
        "== Configuration groups ==",
        "Compose your configuration from those groups (group=option)",
        "",
    ]
    for group, options in config_groups().items():
        lines.append(f"{group}: {', '.join(options)}")
    for folder, key in NOT_GROUPS.items():
        shipped = sorted(path.stem for path in (conf_dir / folder).glob("*.yaml"))
        lines.append(f"({key}=<file or name>; shipped: {', '.join(shipped)})")
    overrides = [a for a in argv if a not in HELP_FLAGS and not a.startswith("-")]
    with initialize_config_dir(config_dir=str(conf_dir), version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides)
    with open_dict(cfg):
        cfg.pop("hydra", None)
    lines += [
        "",
        "",
        "== Config ==",
        "Override anything in the config (foo.bar=value)",
        "",
        OmegaConf.to_yaml(cfg, resolve=False),
        "",
        "Powered by Hydra (https://hydra.cc)",
        "Use --hydra-help to view Hydra specific help",
        "",
        "",
    ]
    return "\n".join(lines)


__all__ = ["HELP_FLAGS", "app_help"]
