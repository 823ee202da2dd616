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
