"""Ruleset data files, one TOML file per ruleset id (a package so they ship with it)."""
