"""Python functions as tools: ``Agent(driver, tools=[...])`` hosts them for the model on every run.

Example::

    from adaptor_nb import tool

    @tool.define
    def describe_column(name: Annotated[str, "a column of df"]) -> dict[str, float]:
        \"\"\"Summary statistics of one column.\"\"\"
        if name == "salary":
            raise tool.reject("salaries are private")
        return df[name].describe().to_dict()

The input JSON Schema comes from the type hints (descriptions from ``Annotated`` text or the docstring), the output
schema from the return annotation. A :func:`reject` is shown to the model as the call's error and the run goes
on; arguments that fail the schema return the validation message; any other failure becomes one sanitized line.
"""

from __future__ import annotations

from .tools._define import Tool, define
from .tools._errors import ToolRejection, as_rejection, reject

__all__ = ["Tool", "ToolRejection", "as_rejection", "define", "reject"]
