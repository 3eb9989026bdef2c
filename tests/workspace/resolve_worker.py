"""Run in a separate process: wait for a start file, resolve one thread's worktree, print the lease as JSON."""

from __future__ import annotations

import json
import os
import sys

from adaptor_nb import GitWorktrees, GitWorktreeWorkspace, WorkspaceError, WorkspaceRequest


def main() -> None:
    base, thread = sys.argv[1], sys.argv[2]
    print("waiting", flush=True)
    sys.stdin.readline()  # the test releases every worker at once by writing a line
    try:
        lease = GitWorktrees().resolve_sync(
            WorkspaceRequest(base_cwd=base, spec=GitWorktreeWorkspace(), run_id=f"run_{os.getpid()}", thread_key=thread)
        )
    except WorkspaceError as exc:
        print(json.dumps({"error": str(exc)}), flush=True)
        return
    print(json.dumps({"path": lease.path, "branch": lease.branch, "created": lease.created}), flush=True)


if __name__ == "__main__":
    main()
