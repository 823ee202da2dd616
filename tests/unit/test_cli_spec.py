"""The argument spec (sslab.cli.spec) names, for every command, a function of sslab.cli.commands."""

import argparse

from sslab.cli import commands
from sslab.cli.spec import build_parser


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found.update(action.choices)
    return found


def test_every_command_of_the_spec_has_its_function():
    cmds = subcommands(build_parser())
    assert {"startup", "run", "matrix", "oracle", "same-bytes", "vm-check", "exec"} <= set(cmds)
    for name, sub in cmds.items():
        command = sub.get_default("command")
        assert command == name.replace("-", "_"), (name, command)
        assert callable(getattr(commands, f"cmd_{command}", None)), name


def test_every_commands_help_is_printed():
    """`sslab --help` and every command's and sub-command's --help format (a bare % in a help text, or
    a %(...)s that names nothing, stops argparse with a traceback)."""
    def walk(parser: argparse.ArgumentParser, path: str) -> int:
        text = parser.format_help()
        assert text.startswith("usage:"), path
        return 1 + sum(walk(sub, f"{path} {name}") for name, sub in subcommands(parser).items())
    assert walk(build_parser(), "sslab") > 20
