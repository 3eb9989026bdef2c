"""Help text of the ``%%agent`` and ``%agent`` magics (kept apart so loading the extension stays cheap)."""

import importlib.util

_KNOWN = ("claude", "codex", "cursor", "codebuddy", "reference")


def installed_drivers() -> tuple[str, ...]:
    """The built-in drivers this installation has (a name whose package is absent is left out)."""
    return tuple(name for name in _KNOWN if importlib.util.find_spec(f"adaptor_nb.drivers.{name}") is not None)


DRIVER_NAMES = installed_drivers()
# The ACP driver's presets (kept in step with adaptor_nb.drivers.acp.PRESETS; importing it here would slow loading).
ACP_PRESETS = ("qwen", "codex", "codebuddy", "gemini", "opencode", "goose", "claude", "copilot", "cursor")
ACP_NAMES = (
    tuple(f"acp:{p}" for p in ACP_PRESETS) if importlib.util.find_spec("adaptor_nb.drivers.acp") is not None else ()
)
_LISTED = ", ".join(DRIVER_NAMES) + (f", acp:AGENT ({', '.join(ACP_PRESETS)})" if ACP_NAMES else "")

CELL_HELP = """\
%%agent [options]
<prompt>

Send the cell body as a prompt to a coding agent and show the run live. The cell blocks until the run ends
(Kernel > Interrupt cancels it); widget clicks (approvals, messages) keep working meanwhile.

Options:
  --thread KEY          continue (or start) the named thread KEY; without it the cell is a one-off send
  --agent NAME          use the adaptor_nb.Agent object bound to NAME in the notebook
  --driver NAME         use a built-in driver: @DRIVERS@
                        (A,B,... runs the prompt on each at once, side by side, with a comparison table;
                        --out then maps each driver to its outcome; --agent A,B compares Agents the same way)
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
  --skill KEY_OR_PATH   a skill for this run: a skill folder, a .zip/.tar/.tgz archive, or a key (repeatable)
  --map DF              run the body once per row of the DataFrame DF ({column} inserts the row's value,
                        {index} its label); --out gets the result frame (one column per --schema field, then
                        _status, _error, _cost_usd, ...), VAR_batch the batch (retry_failed(), progress)
  --concurrency N       with --map: at most N rows run at once (default 4)
  --worktree            run in a git worktree of the notebook's repository (one per --thread KEY, on branch
                        agent/KEY, in <repo>.worktrees/ beside it); the header shows its path and branch
  --tools A,B           let the agent call the notebook's functions A and B (callables or tool.define results)
  --approval-timeout S  how long an approval card waits (seconds, or none); by default a card waits for its
                        answer while a front end shows it, and 30 s in headless runs (nbconvert, nbval, papermill)
  --no-raise            a denied, expired or failed run does not raise: --out holds its partial Result, the
                        view shows the failure and Run All goes on
  --attach NAME         send NAME with the prompt (repeatable): a matplotlib figure or Axes as a PNG image
                        (fig alone: the figure named fig, else pyplot's current one; needs matplotlib), a
                        DataFrame or Series as its first 10 rows in a text table after the prompt;
                        NAME:image sends those rows as a PNG table instead (needs matplotlib)

The body may use {name} or {name.attr} to insert values from the notebook namespace; names that are not
defined stay as written, and {{ / }} give literal braces. $name and {name} in the option line are expanded
as in any IPython magic.

Line magic: %agent use DRIVER [--force] [--model M] [--approvals MODE] [--timeout S] [--instructions TEXT]
            %agent threads | %agent worktrees [clean] | %agent status | %agent cancel | %agent tools
            %agent serve [--port N] [--thread NAME] [--cors ORIGIN] | %agent serve stop | %agent help
"""

LINE_HELP = """\
%agent use DRIVER [--force] [--model M] [--approvals MODE] [--timeout S] [--instructions TEXT]
    Make DRIVER (@DRIVERS@, or default for the automatic choice) the notebook default for
    %%agent cells. A driver whose probe says it cannot run (no CLI, no credentials) is refused with what
    to fix; --force pins it anyway.
%agent threads   a table of this notebook's threads: key, driver, status, last run, usage
%agent status    each driver's probe (found, version, credentials, usable), the default and the runs
%agent cancel    cancel every run in progress
%agent skills    the skills of this notebook's agents: requested, installed, offered, found in the profile
%agent doctor    every installed driver's Inspector report: CLI, version, auth, models, quota, profile
%agent worktrees            the worktrees %%agent --worktree cells made for this notebook's repository
%agent worktrees clean      remove those no run is using (git refuses ones with uncommitted changes;
                            --force removes them anyway); a branch with commits beyond its base is kept
%agent tools     the Python tools of the last --tools cell, with their input schemas
%agent store     keep [NAME]: keep threads in .adaptor_nb/NAME.sqlite between runs (headless too)
%agent record    PATH [--mode none|once|rewrite]: replay the runs from a cassette, record the missing ones
%agent config [--approval-timeout S|none|default] [--no-raise | --raise]
                 the defaults of every %%agent cell (a cell's own options win); without options, show them
%agent serve [--port N] [--thread NAME] [--cors ORIGIN]
                 serve the notebook's agent as an AG-UI endpoint on 127.0.0.1 (a free port unless --port),
                 with a bearer token it prints; --thread NAME drives that one notebook thread from every web
                 thread, --cors ORIGIN lets a page from ORIGIN call it (repeatable)
%agent serve stop           stop the endpoint (its runs in progress are cancelled)
%agent serve status         where the endpoint serves, or that it is not running
%agent help      this help and the %%agent options
"""

CELL_HELP = CELL_HELP.replace("@DRIVERS@", _LISTED)
LINE_HELP = LINE_HELP.replace("@DRIVERS@", _LISTED)
