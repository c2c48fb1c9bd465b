"""ComfyUI's prompt validation (`execution.validate_prompt`) for the stand-in's `POST /api/prompt`.

The rules of the playground's `ui/src/playground/validate.ts`, in Python: a node without
`class_type`, an unknown node type, no output node, a missing required input, a bad link, a
link of the wrong type, a value not in a combo's list, a number that is not one or is out of
range. The result has ComfyUI's shape: `(ok, error, outputs, node_errors)`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

Defs = Mapping[str, Mapping[str, Any]]
Error = dict[str, Any]


def fail(kind: str, message: str, details: str = "", extra: dict[str, Any] | None = None) -> Error:
    return {"type": kind, "message": message, "details": details, "extra_info": extra or {}}


def ordered_inputs(definition: Mapping[str, Any]) -> Iterator[tuple[str, list[Any], bool]]:
    """(name, spec, required) in the definition's input order, required first."""
    sections = definition.get("input") or {}
    order = definition.get("input_order") or {}
    for section in ("required", "optional"):
        specs = sections.get(section) or {}
        if not isinstance(specs, Mapping):
            continue
        listed = [n for n in order.get(section) or [] if n in specs]
        for name in [*listed, *(n for n in specs if n not in listed)]:
            if isinstance(specs[name], list) and specs[name]:
                yield name, specs[name], section == "required"


def combo_choices(spec: list[Any]) -> list[Any] | None:
    if isinstance(spec[0], list):
        return spec[0]
    if spec[0] != "COMBO":
        return None
    options = spec[1] if len(spec) > 1 and isinstance(spec[1], Mapping) else {}
    choices = options.get("options")
    return choices if isinstance(choices, list) else []


def slot_type(kind: Any) -> str:
    if isinstance(kind, list):
        return "COMBO"
    return kind if isinstance(kind, str) and kind else "*"


def types_match(received: str, expected: str) -> bool:
    if "*" in (received, expected) or received == expected:
        return True
    return set(received.split(",")) <= set(expected.split(","))


def check_value(name: str, spec: list[Any], value: Any) -> Error | None:
    options = spec[1] if len(spec) > 1 and isinstance(spec[1], Mapping) else {}
    extra = {"input_name": name, "input_config": spec, "received_value": value}
    choices = combo_choices(spec)
    if choices is not None:
        # No model files here: an empty list (nothing installed) accepts any value.
        if not choices or value in choices:
            return None
        long = len(choices) > 20
        listed = f"(list of length {len(choices)})" if long else str([str(c) for c in choices])
        return fail(
            "value_not_in_list",
            "Value not in list",
            f"{name}: '{value}' not in {listed}",
            {**extra, "input_config": None if long else spec},
        )
    if spec[0] in ("INT", "FLOAT"):
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = float("nan")
        if number != number or isinstance(value, bool) or (spec[0] == "INT" and number % 1):
            return fail(
                "invalid_input_type",
                f"Failed to convert an input value to a {spec[0]} value",
                f"{name}, {value}",
                extra,
            )
        low, high = options.get("min"), options.get("max")
        if isinstance(low, (int, float)) and number < low:
            return fail(
                "value_smaller_than_min", f"Value {value} smaller than min of {low}", name, extra
            )
        if isinstance(high, (int, float)) and number > high:
            return fail(
                "value_bigger_than_max", f"Value {value} bigger than max of {high}", name, extra
            )
    return None


class _Validator:
    def __init__(self, prompt: Mapping[str, Any], defs: Defs) -> None:
        self.prompt, self.defs = prompt, defs
        self.verdicts: dict[str, bool] = {}
        self.node_errors: dict[str, dict[str, Any]] = {}

    def node(self, node_id: str, trail: set[str]) -> bool:
        if node_id in self.verdicts:
            return self.verdicts[node_id]
        if node_id in trail:
            return True  # a cycle is reported where it closes
        trail.add(node_id)
        node = self.prompt[node_id]
        inputs = node.get("inputs") if isinstance(node.get("inputs"), Mapping) else {}
        errors: list[Error] = []
        valid = True
        for name, spec, required in ordered_inputs(self.defs[node["class_type"]]):
            if name not in inputs:
                if required:
                    errors.append(
                        fail(
                            "required_input_missing",
                            "Required input is missing",
                            name,
                            {"input_name": name},
                        )
                    )
                continue
            value = inputs[name]
            if isinstance(value, list):
                error, source = self.link(name, spec, value)
                if error:
                    errors.append(error)
                elif source is not None and not self.node(source, trail):
                    valid = False
                continue
            error = check_value(name, spec, value)
            if error:
                errors.append(error)
        trail.discard(node_id)
        if errors:
            self.node_errors[node_id] = {
                "errors": errors,
                "dependent_outputs": [],
                "class_type": node["class_type"],
            }
            valid = False
        self.verdicts[node_id] = valid
        return valid

    def link(self, name: str, spec: list[Any], value: list[Any]) -> tuple[Error | None, str | None]:
        source_id = str(value[0]) if value and isinstance(value[0], (str, int)) else None
        source = self.prompt.get(source_id) if source_id is not None else None
        if len(value) != 2 or not isinstance(source, Mapping) or not isinstance(value[1], int):
            return fail(
                "bad_linked_input",
                "Bad linked input, must be a length-2 list of [node_id, slot_index]",
                name,
                {"input_name": name, "input_config": spec, "received_value": value},
            ), None
        outputs = self.defs[source["class_type"]].get("output") or []
        received = outputs[value[1]] if 0 <= value[1] < len(outputs) else "*"
        expected = slot_type(spec[0])
        if not types_match(slot_type(received), expected):
            return fail(
                "return_type_mismatch",
                "Return type mismatch between linked nodes",
                f"{name}, received_type({received}) mismatch input_type({expected})",
                {
                    "input_name": name,
                    "input_config": spec,
                    "received_type": received,
                    "linked_node": value,
                },
            ), None
        return None, source_id

    def depends_on(self, output: str, target: str, seen: set[str]) -> bool:
        if output == target:
            return True
        if output in seen:
            return False
        seen.add(output)
        inputs = self.prompt[output].get("inputs")
        return isinstance(inputs, Mapping) and any(
            isinstance(v, list)
            and len(v) == 2
            and str(v[0]) in self.prompt
            and self.depends_on(str(v[0]), target, seen)
            for v in inputs.values()
        )


def validate_prompt(
    prompt: Any, defs: Defs, partial: Any = None
) -> tuple[bool, Error | None, list[str], dict[str, Any]]:
    """As ComfyUI's `execution.validate_prompt`; `partial`: the output nodes to run (its
    `partial_execution_targets`, ComfyUI 0.3.48+), None for all."""
    if not isinstance(prompt, Mapping):
        return False, fail("invalid_prompt", "Prompt is not a JSON object"), [], {}
    for node_id, node in prompt.items():
        class_type = node.get("class_type") if isinstance(node, Mapping) else None
        if not isinstance(class_type, str):
            message = "Cannot execute because a node is missing the class_type property."
            return False, fail("invalid_prompt", message, f"Node ID '#{node_id}'"), [], {}
        if class_type not in defs:
            title = (node.get("_meta") or {}).get("title") or class_type
            return (
                False,
                fail(
                    "missing_node_type",
                    f"Node '{title}' not found. The custom node may not be installed.",
                    f"Node ID '#{node_id}'",
                    {"node_id": node_id, "class_type": class_type, "node_title": title},
                ),
                [],
                {},
            )
    outputs = [
        i
        for i, n in prompt.items()
        if defs[n["class_type"]].get("output_node") and (partial is None or i in partial)
    ]
    if not outputs:
        return False, fail("prompt_no_outputs", "Prompt has no outputs"), [], {}
    check = _Validator(prompt, defs)
    good = [o for o in outputs if check.node(o, set())]
    failed = [o for o in outputs if o not in good]
    for node_id, entry in check.node_errors.items():
        entry["dependent_outputs"] = [o for o in failed if check.depends_on(o, node_id, set())]
    if not good:
        details = "\n".join(
            f"{e['class_type']}:\n"
            + "\n".join(f"- {r['message']}: {r['details']}" for r in e["errors"])
            for e in check.node_errors.values()
        )
        error = fail(
            "prompt_outputs_failed_validation", "Prompt outputs failed validation", details
        )
        return False, error, [], check.node_errors
    return True, None, good, check.node_errors
