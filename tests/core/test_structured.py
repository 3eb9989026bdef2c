import pytest
from pydantic import BaseModel

from adaptor_nb import Agent, InvalidOutputSchemaError, PolicyViolation, run_as
from adaptor_nb.drivers import reference as ref


class Finding(BaseModel):
    file: str
    line: int
    severity: str


class Report(BaseModel):
    findings: list[Finding]


async def test_native_schema_gives_a_validated_value() -> None:
    value, result = await run_as(Agent(ref.Driver()), "review", Report)
    assert isinstance(value, Report) and len(value.findings) == 3
    assert result.decode(Report) == value


async def test_list_schema_is_wrapped_for_the_provider_and_unwrapped_for_the_caller() -> None:
    seen = {}

    class Spy(ref.Driver):
        async def run(self, invocation, ctx):  # type: ignore[no-untyped-def]
            seen["schema"] = invocation.output_schema.schema
            return await super().run(invocation, ctx)

    value, _ = await run_as(Agent(Spy()), "list them", list[Finding])
    assert seen["schema"]["type"] == "object" and "items" in seen["schema"]["properties"]
    assert isinstance(value, list) and all(isinstance(f, Finding) for f in value)


async def test_prompted_mode_appends_instructions_and_validates_locally() -> None:
    prompts: list[str] = []
    sc = ref.Scenario(ref.Turn('{"findings": [{"file": "a.py", "line": 3, "severity": "low"}]}'))

    class Spy(ref.Driver):
        async def run(self, invocation, ctx):  # type: ignore[no-untyped-def]
            prompts.append(invocation.prompt)
            assert invocation.output_schema is None
            return await super().run(invocation, ctx)

    value, _ = await run_as(Agent(Spy(scenario=sc, native_structured_output=False)), "review", Report)
    assert value.findings[0].file == "a.py"
    assert "JSON Schema" in prompts[0] and prompts[0].startswith("review")


async def test_invalid_output_fails_with_policy_violation_keeping_the_text() -> None:
    sc = ref.Scenario(ref.Turn('{"findings": [{"file": 1}]}'))
    with pytest.raises(PolicyViolation) as info:
        await Agent(ref.Driver(scenario=sc, native_structured_output=False)).send("r", schema=Report)
    assert info.value.result is not None and info.value.result.text == '{"findings": [{"file": 1}]}'
    assert info.value.details["errors"]


async def test_non_json_output_fails_with_policy_violation() -> None:
    sc = ref.Scenario(ref.Turn("I refuse to answer in JSON"))
    with pytest.raises(PolicyViolation, match="not JSON"):
        await Agent(ref.Driver(scenario=sc, native_structured_output=False)).send("r", schema=Report)


async def test_native_value_that_breaks_the_schema_is_caught_locally() -> None:
    sc = ref.Scenario(ref.Turn("text", ref.Structured({"findings": "not a list"})))
    with pytest.raises(PolicyViolation):
        await Agent(ref.Driver(scenario=sc)).send("r", schema=Report)


async def test_return_invalid_keeps_a_successful_result_whose_decode_fails() -> None:
    sc = ref.Scenario(ref.Turn('{"findings": 5}'))
    result = await Agent(ref.Driver(scenario=sc, native_structured_output=False)).send(
        "r", schema=Report, schema_return_invalid=True
    )
    assert result.metadata["structured_output.valid"] == "false"
    with pytest.raises(ValueError):
        result.decode(Report)


async def test_dict_schema_is_accepted() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    result = await Agent(ref.Driver()).send("count", schema=schema)
    assert result.decode(dict) == {"n": 1}


async def test_bad_schema_fails_before_launch_naming_the_option() -> None:
    with pytest.raises(InvalidOutputSchemaError) as info:
        await Agent(ref.Driver()).send("x", schema={"type": "no-such-type"})
    assert info.value.option == "schema"


async def test_decode_without_schema_reads_text_as_json() -> None:
    sc = ref.Scenario(ref.Turn('```json\n{"a": 1}\n```'))
    result = await Agent(ref.Driver(scenario=sc)).send("x")
    assert result.decode(dict) == {"a": 1}
