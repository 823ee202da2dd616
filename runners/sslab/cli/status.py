"""Exit statuses and the refusal every command may raise (the README lists them)."""

#: Exit statuses (the README lists them).
EXIT_OK = 0
#: A run, build or check failed after it started.
EXIT_FAILED = 1
#: Refused before anything started: a request, file or value that cannot run, or a host that
#: cannot run it; the message names what.
EXIT_REFUSED = 2
#: Stopped by a signal: 128 + its number (130 Ctrl-C, 143 SIGTERM), the shell's convention.
EXIT_SIGNAL_BASE = 128
#: `sslab exec`: the command in the testbed timed out (timeout(1)'s status); otherwise the command's own.
EXIT_TIMED_OUT = 124


class Refused(Exception):
    """A request refused before anything starts (EXIT_REFUSED); the message names what is wrong."""
