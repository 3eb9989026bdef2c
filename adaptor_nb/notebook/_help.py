"""Help text of the ``%%agent`` and ``%agent`` magics (kept apart so loading the extension stays cheap)."""

import importlib.util

_KNOWN = ("claude", "codex", "cursor", "codebuddy", "reference")


def installed_drivers() -> tuple[str, ...]:
    """The built-in drivers this installation has (a name whose package is absent is left out)."""
    return tuple(name for name in _KNOWN if importlib.util.find_spec(f"adaptor_nb.drivers.{name}") is not None)


DRIVER_NAMES = installed_drivers()
_LISTED = ", ".join(DRIVER_NAMES)

CELL_HELP = """\
%%agent [options]
<prompt>

Send the cell body as a prompt to a coding agent and show the run live. The cell blocks until the run ends
(Kernel > Interrupt cancels it); widget clicks (approvals, messages) keep working meanwhile.

Options:
  --thread KEY          continue (or start) the named thread KEY; without it the cell is a one-off send
  --agent NAME          use the adaptor_nb.Agent object bound to NAME in the notebook
  --driver NAME         use a built-in driver: @DRIVERS@
  --model M             model for this run
  --schema NAME         structured output: a pydantic model, a type such as list[Model], or a JSON-Schema dict
                        (a name or expression from the notebook namespace)
  --out VAR             where the outcome goes (default _agent): the Result, or with --schema the validated
                        value (a DataFrame for a list-of-model schema; the Result is then in VAR_result)
  --approvals MODE      ask (cards in the view; the default), auto (approve) or deny
  --timeout S           cancel the run after S seconds
  --spawn               force a fresh provider process for this run
  --instructions TEXT   extra instructions for this run
  --quiet               show no view (the outcome still goes to --out; failures still raise)

The body may use {name} or {name.attr} to insert values from the notebook namespace; names that are not
defined stay as written, and {{ / }} give literal braces. $name and {name} in the option line are expanded
as in any IPython magic.

Line magic: %agent use DRIVER [--force] [--model M] [--approvals MODE] [--timeout S] [--instructions TEXT]
            %agent threads | %agent status | %agent cancel | %agent help
"""

LINE_HELP = """\
%agent use DRIVER [--force] [--model M] [--approvals MODE] [--timeout S] [--instructions TEXT]
    Make DRIVER (@DRIVERS@, or default for the automatic choice) the notebook default for
    %%agent cells. A driver whose probe says it cannot run (no CLI, no credentials) is refused with what
    to fix; --force pins it anyway.
%agent threads   a table of this notebook's threads: key, driver, status, last run, usage
%agent status    each driver's probe (found, version, credentials, usable), the default and the runs
%agent cancel    cancel every run in progress
%agent store     keep [NAME]: keep threads in .adaptor_nb/NAME.sqlite between runs (headless too)
%agent record    PATH [--mode none|once|rewrite]: replay the runs from a cassette, record the missing ones
%agent help      this help and the %%agent options
"""

CELL_HELP = CELL_HELP.replace("@DRIVERS@", _LISTED)
LINE_HELP = LINE_HELP.replace("@DRIVERS@", _LISTED)
